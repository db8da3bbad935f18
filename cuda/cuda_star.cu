/*-------------------------------------------------------------------------
 *
 * cuda_star.cu
 *	  The CUDA backend's star pipeline (engine.h, "the star pipeline"):
 *	  dimensions built on the device, heap pages run through the program
 *	  one thread block per page, and the kept rows aggregated into a table
 *	  of groups that stays on the device as long as the star.
 *
 * INTERFACE ROUTINES (backend.h)
 *		gh_cuda_dim_create, gh_cuda_dim_free
 *		gh_cuda_star_create, gh_cuda_star_read, gh_cuda_star_keep,
 *		gh_cuda_star_add, gh_cuda_star_result, gh_cuda_star_free
 *
 * Each call runs on the device index it is given (engine_star.c spreads a
 * star over the engine's devices).
 *
 * DIMENSIONS
 *
 * star_vm.h's gh_vmdim in device memory: cap slots (a power of two, at
 * least twice the rows), each key claimed with atomicCAS from
 * gh_hash64(key, GH_SEED_AGG) & (cap - 1) on, linear probing; a thread
 * that finds its key already there has a duplicate (GH_ERR_INVALID).  The
 * row of a real GH_EMPTY_KEY key is claimed with atomicCAS in a word of
 * its own.  The keys and columns are copied to the device as they are, the
 * caller's parts one after another (stage_parts).
 *
 * READ
 *
 * One thread block per page (grid-stride over the pages): the page is
 * copied into shared memory with 16-byte loads, from registered host
 * memory over the bus in place or from a staged copy (gh_cuda_page_source,
 * as gh_extract_pages reads pages) or from the page cache's copy, and into
 * the cache's slot as well where the read fills one (gh_pagecopy, staged);
 * each thread takes line pointers:
 * gh_vm_locate, then gh_vm_run with the program and the dimensions in
 * device memory, its outputs written to slot p * max_tuples + i (output c
 * at c * stride + slot: consecutive threads, consecutive words).  The
 * page's status gathers in shared memory: a malformed flag, an escape
 * flag, and the first error as atomicMin of (line pointer << 8 | error),
 * so that the one of the lowest line pointer wins whatever the threads'
 * order.  Only the statuses come back to the host.
 *
 * KEEP, ADD AND GROWTH
 *
 * The kept slots of the pages that are OK and not dropped are aggregated
 * with cuda_agg.cuh's atomics (agg_update) into the star's agg_table.  The
 * table grows: a thread claims a new slot only after reserving it in a
 * count of claimed slots, and gives up when that count would pass 7/8 of
 * the table, leaving its row pending; the host then moves the groups into
 * a table twice as large (or more: twice the groups claimed and refused)
 * and runs the kernel again over the rows still pending.  A row is
 * aggregated once: only a thread that has its slot updates it.  After each
 * keep or add the table also grows if more than half of it is claimed, so
 * that probes stay short.  While the table holds few groups, each block
 * aggregates its rows in shared memory first (star_insert_block_kernel).  gh_star_add copies host rows to the device and
 * aggregates them with the same kernel.  The result is listed and copied
 * out as gh_aggregate's is (agg_table_list, agg_copy_out).
 *
 *-------------------------------------------------------------------------
 */
#include <memory>
#include <new>

#include "cuda_agg_block.cuh"
#include "star_vm.h"

#define STAR_THREADS	128
#define STAR_MIN_SLOTS	1024
/* The most slots, and bytes, of a block's table of groups in a keep of few groups. */
#define STAR_BLOCK_SLOTS	512
#define STAR_BLOCK_BYTES	(96 * 1024)

/* the star's counters on the device */
#define COUNT_CLAIMED	0		/* slots of the table claimed */
#define COUNT_REFUSED	1		/* rows left pending by a full table */
#define COUNT_INSERTED	2		/* rows aggregated */
#define NCOUNTS			3

/* ---- dimensions ---- */

struct cuda_dim
{
	gh_vmdim	vm;				/* device pointers */
	gh_dbuf<uint64_t> slot_keys;
	gh_dbuf<uint32_t> slot_rows;
	gh_dbuf<int64_t> lo[GH_PROG_MAX_DIMCOLS];
	gh_dbuf<int64_t> hi[GH_PROG_MAX_DIMCOLS];
	gh_dbuf<uint8_t> nulls[GH_PROG_MAX_DIMCOLS];
	gh_dbuf<uint8_t> dscale[GH_PROG_MAX_DIMCOLS];
};

/* found: [0] 1 on a duplicate, [1] a duplicate key, [2] the row of GH_EMPTY_KEY */
__global__ static void
dim_insert_kernel(const uint64_t *keys, size_t n, unsigned long long *slot_keys,
				  uint32_t *slot_rows, uint64_t cap, unsigned long long *found)
{
	GH_GRID_STRIDE(i, n)
	{
		uint64_t	key = keys[i];
		uint64_t	s = gh_hash64(key, GH_SEED_AGG) & (cap - 1);

		if (key == GH_EMPTY_KEY)
		{
			if (atomicCAS(found + 2, ~0ULL, (unsigned long long) i) != ~0ULL)
			{
				atomicExch(found + 1, key);
				atomicExch(found, 1ULL);
			}
			continue;
		}
		for (;;)
		{
			unsigned long long cur = atomicCAS(slot_keys + s, GH_EMPTY_KEY, key);

			if (cur == GH_EMPTY_KEY)
			{
				slot_rows[s] = (uint32_t) i;
				break;
			}
			if (cur == key)
			{
				atomicExch(found + 1, key);
				atomicExch(found, 1ULL);
				break;
			}
			s = (s + 1) & (cap - 1);
		}
	}
}

/*
 * The parts' arrays src (one a part, as many rows as it has) one after
 * another in buf, n rows; a part whose array is NULL gives zeros.  buf
 * stays empty where no part has one.
 */
template <typename T>
static gh_status
stage_parts(const gh_cuda_ctx *ctx, const gh_dimpart *parts, int nparts, const T *const *src,
			size_t n, gh_dbuf<T> &buf, const char *what)
{
	bool		any = false;
	size_t		at = 0;

	for (int p = 0; p < nparts; p++)
		any |= parts[p].n > 0 && src[p] != nullptr;
	if (!any)
		return GH_OK;
	GH_TRY(buf.alloc(ctx, n, what));
	for (int p = 0; p < nparts; p++)
	{
		size_t		bytes = parts[p].n * sizeof(T);

		if (parts[p].n == 0)
			continue;
		if (src[p] != nullptr)
			GH_CUDA_TRY(ctx->e, cudaMemcpyAsync(buf.p + at, src[p], bytes, cudaMemcpyDefault,
												ctx->d->stream));
		else
			GH_CUDA_TRY(ctx->e, cudaMemsetAsync(buf.p + at, 0, bytes, ctx->d->stream));
		at += parts[p].n;
	}
	return GH_OK;
}

gh_status
gh_cuda_dim_create(gh_dim *d, int dev, const gh_dimpart *parts, int nparts)
{
	gh_engine  *e = d->e;
	size_t		n = d->n;
	uint64_t	cap = 16;
	gh_cuda_ctx ctx;
	cuda_dim   *cd;
	gh_dbuf<uint64_t> dkeys;
	gh_dbuf<unsigned long long> found;
	unsigned long long got[3];

	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	cd = new (std::nothrow) cuda_dim();
	if (cd == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a dimension");
	d->bstate[dev] = cd;
	while (cap < 2 * n)
		cap <<= 1;
	GH_TRY(cd->slot_keys.alloc(&ctx, cap, "dimension slots"));
	GH_TRY(cd->slot_rows.alloc(&ctx, cap, "dimension rows"));
	GH_TRY(found.alloc(&ctx, 3, "dimension duplicates"));
	GH_CUDA_TRY(e, cudaMemsetAsync(cd->slot_keys.p, 0xff, cd->slot_keys.bytes(), ctx.d->stream));
	GH_CUDA_TRY(e, cudaMemsetAsync(found.p, 0xff, found.bytes(), ctx.d->stream));
	if (n > 0)
	{
		std::unique_ptr<const uint64_t *[]> keys(new (std::nothrow) const uint64_t *[nparts]);

		if (!keys)
			return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a dimension");
		for (int p = 0; p < nparts; p++)
			keys[p] = parts[p].keys;
		GH_TRY(stage_parts(&ctx, parts, nparts, keys.get(), n, dkeys, "dimension keys"));
		dim_insert_kernel<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx.d->stream>>>(
			dkeys.p, n, (unsigned long long *) cd->slot_keys.p, cd->slot_rows.p, cap, found.p);
		GH_CUDA_LAUNCHED(e, "dim_insert_kernel");
	}
	for (int c = 0; c < d->ncols && n > 0; c++)
	{
		std::unique_ptr<const int64_t *[]> lo(new (std::nothrow) const int64_t *[nparts]);
		std::unique_ptr<const int64_t *[]> hi(new (std::nothrow) const int64_t *[nparts]);
		std::unique_ptr<const uint8_t *[]> nulls(new (std::nothrow) const uint8_t *[nparts]);
		std::unique_ptr<const uint8_t *[]> dscale(new (std::nothrow) const uint8_t *[nparts]);

		if (!lo || !hi || !nulls || !dscale)
			return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a dimension");
		for (int p = 0; p < nparts; p++)
		{
			lo[p] = parts[p].cols[c].lo;
			hi[p] = parts[p].cols[c].hi;
			nulls[p] = parts[p].cols[c].nulls;
			dscale[p] = parts[p].cols[c].dscale;
		}
		GH_TRY(stage_parts(&ctx, parts, nparts, lo.get(), n, cd->lo[c], "dimension values"));
		GH_TRY(stage_parts(&ctx, parts, nparts, hi.get(), n, cd->hi[c], "dimension values"));
		GH_TRY(stage_parts(&ctx, parts, nparts, nulls.get(), n, cd->nulls[c], "dimension nulls"));
		GH_TRY(stage_parts(&ctx, parts, nparts, dscale.get(), n, cd->dscale[c],
						   "dimension scales"));
	}
	GH_CUDA_TRY(e, cudaMemcpyAsync(got, found.p, sizeof(got), cudaMemcpyDeviceToHost,
								   ctx.d->stream));
	GH_TRY(gh_cuda_sync(&ctx));
	if (got[0] != ~0ULL)
		return gh_fail(e, GH_ERR_DUPLICATE_KEY, "gh_dim_create: key %llu appears twice", got[1]);
	cd->vm.slot_keys = cd->slot_keys.p;
	cd->vm.slot_rows = cd->slot_rows.p;
	cd->vm.cap = cap;
	cd->vm.empty_key_row = got[2] == ~0ULL ? -1 : (int64_t) got[2];
	cd->vm.ncols = d->ncols;
	for (int c = 0; c < d->ncols; c++)
	{
		cd->vm.cols[c].lo = cd->lo[c].p;
		cd->vm.cols[c].hi = cd->hi[c].p;
		cd->vm.cols[c].nulls = cd->nulls[c].p;
		cd->vm.cols[c].dscale = cd->dscale[c].p;
	}
	return GH_OK;
}

void
gh_cuda_dim_free(gh_dim *d, int dev)
{
	gh_cuda_ctx ctx;

	(void) gh_cuda_enter(d->e, dev, &ctx);
	delete (cuda_dim *) d->bstate[dev];
	d->bstate[dev] = nullptr;
}

/* ---- stars ---- */

struct cuda_star
{
	gh_dbuf<gh_prog> prog;
	gh_dbuf<gh_vmdim> dims;
	std::unique_ptr<agg_table> t;
	size_t		claimed;		/* slots of t claimed, as last read back */
	gh_dbuf<unsigned long long> counts;	/* COUNT_* */
	/* the rows of the last read: slot i of output c at c * stride + i */
	size_t		slots;
	size_t		stride;			/* slots the buffers hold (0: none) */
	gh_dbuf<uint64_t> keys;
	gh_dbuf<uint8_t> pending;	/* 1: a row to aggregate */
	gh_dbuf<int64_t> vals;
	gh_dbuf<uint8_t> nulls;
	gh_dbuf<uint8_t> status;	/* of each page read */
	/* the last read's page numbers, copies and dropped pages, kept for the next */
	gh_dbuf<uint32_t> ids;
	gh_dbuf<gh_pagecopy> copy;
	gh_dbuf<uint8_t> drop;
};

__global__ static void
star_read_kernel(const uint8_t *base, const uint32_t *ids, const gh_pagecopy *copy,
				 size_t npages, gh_pagespec spec, const gh_prog *prog, const gh_vmdim *dims,
				 size_t stride, uint64_t *keys, uint8_t *pending, int64_t *vals, uint8_t *nulls,
				 uint8_t *status)
{
	extern __shared__ uint4 page_words[];
	__shared__ int page_bad,
				page_escape,
				page_unsure;
	__shared__ unsigned int page_error;	/* line pointer << 8 | gh_dataerr, or UINT_MAX */
	const uint8_t *page = (const uint8_t *) page_words;

	for (size_t p = blockIdx.x; p < npages; p += gridDim.x)
	{
		size_t		slot0 = p * spec.max_tuples;
		int			items;
		bool		judge;

		gh_cuda_page_load(page_words, base, ids, p, spec.page_size, copy);
		if (threadIdx.x == 0)
		{
			page_bad = 0;
			page_escape = 0;
			page_unsure = 0;
			page_error = UINT_MAX;
		}
		__syncthreads();
		items = gh_page_items(page, &spec);
		judge = spec.vis_horizon != 0 && !gh_page_all_visible(page);
		if (items < 0)
		{
			items = 0;
			page_bad = 1;
		}
		for (int i = threadIdx.x; i < (int) spec.max_tuples; i += blockDim.x)
		{
			size_t		slot = slot0 + i;
			uint8_t		kept = 0;

			if (i < items)
			{
				gh_vmcols	c;
				int			r = gh_vm_locate(page, &spec, i, &c);

				if (r > 0 && judge)
				{
					int			vis = gh_tuple_visibility(c.tup, spec.vis_horizon);

					if (vis < 0)
						page_unsure = 1;
					r = vis > 0 ? r : 0;
				}
				if (r < 0)
					page_bad = 1;
				else if (r > 0)
				{
					gh_vmout	out = {0, vals + slot, nulls + slot, stride};

					r = gh_vm_run(prog, dims, &c, &out);
					if (r == GH_VM_KEEP)
					{
						keys[slot] = out.key;
						kept = 1;
					}
					else if (r == GH_VM_ESCAPE)
						page_escape = 1;
					else if (r <= GH_VM_ERROR)
						atomicMin(&page_error, (unsigned int) i << 8 | (unsigned int) (GH_VM_ERROR - r));
				}
			}
			pending[slot] = kept;
		}
		__syncthreads();
		if (threadIdx.x == 0)
			status[p] = page_bad ? GH_STAR_PAGE_BAD : page_unsure ? GH_STAR_PAGE_UNSURE :
				page_escape ? GH_STAR_PAGE_ESCAPE :
				page_error != UINT_MAX ? GH_STAR_PAGE_ERROR + (page_error & 255) : GH_STAR_PAGE_OK;
		__syncthreads();		/* before the next page overwrites the copy */
	}
}

/*
 * Aggregate the pending rows of n: row i's key keys[i], output c at
 * vals[c * stride + i] (NULL flags alike; nulls NULL: none).  With status,
 * row i is page i / per_page's, taken only if that page is OK and not
 * dropped.  A row whose group finds no room stays pending.
 */
__global__ static void
star_insert_kernel(size_t n, uint32_t per_page, const uint8_t *status, const uint8_t *drop,
				   const uint64_t *keys, uint8_t *pending, const int64_t *vals,
				   const uint8_t *nulls, size_t stride, unsigned long long *slot_keys,
				   unsigned long long *rows, size_t cap, size_t w, unsigned long long limit,
				   const agg_col_dev *cols, int ncols, unsigned long long *counts)
{
	unsigned long long inserted = 0,
				refused = 0;

	GH_GRID_STRIDE(i, n)
	{
		size_t		s;

		if (!pending[i])
			continue;
		if (status != nullptr)
		{
			size_t		p = i / per_page;

			if (status[p] != GH_STAR_PAGE_OK || (drop != nullptr && drop[p]))
				continue;
		}
		s = agg_slot(slot_keys, cap, w, keys[i], counts + COUNT_CLAIMED, limit);
		if (s == AGG_NO_SLOT)
		{
			refused++;
			continue;
		}
		pending[i] = 0;
		s *= w;			/* the slot's word offset */
		atomicAdd(rows + s, 1ULL);
		for (int c = 0; c < ncols; c++)
		{
			const agg_col_dev col = cols[c];

			agg_update(col, s, vals[c * stride + i],
					   nulls != nullptr && nulls[c * stride + i] != 0);
		}
		inserted++;
	}
	if (inserted != 0)
		atomicAdd(counts + COUNT_INSERTED, inserted);
	if (refused != 0)
		atomicAdd(counts + COUNT_REFUSED, refused);
}

/* A group's slot in the star's table, where the group is known to be. */
struct present_slot
{
	unsigned long long *slot_keys;
	size_t		cap;
	size_t		w;

	__device__ size_t operator() (uint64_t key) const
	{
		return agg_slot(slot_keys, cap, w, key);
	}
};

/*
 * star_insert_kernel for a table of few groups: each block aggregates its
 * rows in a table of scap slots in its shared memory (cuda_agg_block.cuh)
 * and adds its groups to the star's table at the end.  A row whose key is
 * not in the block's table yet first finds or claims its slot in the
 * star's table as star_insert_kernel does (refused, it stays pending), and
 * only then takes a slot of the block's table: every key there has its slot
 * in the star's table, which the block's groups are added to without a
 * claim.  A row that finds no room in the block's table goes to the star's
 * table directly.
 */
__global__ static void
star_insert_block_kernel(size_t n, uint32_t per_page, const uint8_t *status, const uint8_t *drop,
						 const uint64_t *keys, uint8_t *pending, const int64_t *vals,
						 const uint8_t *nulls, size_t stride, unsigned long long *slot_keys,
						 unsigned long long *rows, size_t cap, size_t w,
						 unsigned long long limit, const agg_col_dev *cols, int ncols,
						 unsigned long long *counts, size_t scap)
{
	extern __shared__ __align__(16) unsigned char smem[];
	block_table bt;
	unsigned long long inserted = 0,
				refused = 0;

	block_table_open(&bt, smem, cols, ncols, scap);
	GH_GRID_STRIDE(i, n)
	{
		uint64_t	key;
		size_t		s,
					g = 0;

		if (!pending[i])
			continue;
		if (status != nullptr)
		{
			size_t		p = i / per_page;

			if (status[p] != GH_STAR_PAGE_OK || (drop != nullptr && drop[p]))
				continue;
		}
		key = keys[i];
		s = block_slot(bt, key, false);
		if (s == AGG_NO_SLOT)
		{
			g = agg_slot(slot_keys, cap, w, key, counts + COUNT_CLAIMED, limit);
			if (g == AGG_NO_SLOT)
			{
				refused++;
				continue;
			}
			s = block_slot(bt, key, true);
		}
		pending[i] = 0;
		inserted++;
		if (s != AGG_NO_SLOT)
		{
			atomicAdd(bt.rows + s, 1ULL);
			for (int c = 0; c < ncols; c++)
				agg_update(bt.cols[c], s, vals[c * stride + i],
						   nulls != nullptr && nulls[c * stride + i] != 0);
		}
		else
		{
			g *= w;				/* the slot's word offset */
			atomicAdd(rows + g, 1ULL);
			for (int c = 0; c < ncols; c++)
				agg_update(cols[c], g, vals[c * stride + i],
						   nulls != nullptr && nulls[c * stride + i] != 0);
		}
	}
	block_table_flush(bt, rows, w, cols, ncols, present_slot {slot_keys, cap, w});
	if (inserted != 0)
		atomicAdd(counts + COUNT_INSERTED, inserted);
	if (refused != 0)
		atomicAdd(counts + COUNT_REFUSED, refused);
}

/* Every group of one table (cap + 1 slots) into another of the same columns. */
__global__ static void
star_move_kernel(size_t cap, size_t w, const unsigned long long *keys,
				 const unsigned long long *rows, const agg_col_dev *cols, size_t to_cap,
				 size_t to_w, unsigned long long *to_keys, unsigned long long *to_rows,
				 const agg_col_dev *to_cols, int ncols)
{
	GH_GRID_STRIDE(s, cap + 1)
	{
		size_t		to;

		if (rows[s * w] == 0)
			continue;
		/* slot cap holds GH_EMPTY_KEY (never claimed): it goes to slot to_cap */
		to = agg_slot(to_keys, to_cap, to_w, keys[s * w]);
		to_rows[to * to_w] = rows[s * w];
		for (int c = 0; c < ncols; c++)
			agg_move(cols[c], to_cols[c], s * w, to * to_w);
	}
}

/* A new, empty table of groups of cap slots for s's outputs. */
static gh_status
new_table(const gh_cuda_ctx *ctx, const gh_star *s, size_t cap, std::unique_ptr<agg_table> &t)
{
	int			nouts = s->prog.nouts;

	GH_TRY(agg_table_new(ctx->e, nouts, t));
	for (int c = 0; c < nouts; c++)
	{
		t->cols_host[c].type = s->outs[c].type;
		t->cols_host[c].ops = s->outs[c].ops;
	}
	return agg_table_init(ctx, t.get(), cap, nouts);
}

/* Move the groups into a table of cap slots. */
static gh_status
grow(const gh_cuda_ctx *ctx, const gh_star *s, cuda_star *cs, size_t cap)
{
	std::unique_ptr<agg_table> t;
	const agg_table *old = cs->t.get();

	GH_TRY(new_table(ctx, s, cap, t));
	star_move_kernel<<<gh_cuda_grid(old->cap + 1, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0,
		ctx->d->stream>>>(old->cap, old->w, old->keys, old->rows, old->cols.p, cap, t->w,
						  t->keys, t->rows, t->cols.p, s->prog.nouts);
	GH_CUDA_LAUNCHED(ctx->e, "star_move_kernel");
	cs->t.swap(t);				/* the old table's frees follow the kernel on the stream */
	return GH_OK;
}

/*
 * The slots of a block's table of groups for t's columns in a keep
 * (STAR_BLOCK_SLOTS at most, STAR_BLOCK_BYTES of shared memory, so that two
 * blocks share an SM); 0: t's slots are too wide for one.
 */
static size_t
block_slots(const gh_cuda_ctx *ctx, const agg_table *t)
{
	size_t		fit = agg_shared_capacity(ctx, t);
	size_t		head = block_head_bytes(t->ncols);
	size_t		room = STAR_BLOCK_BYTES > head ?
		(STAR_BLOCK_BYTES - head) / (block_slot_words(t) * 8) : 0;

	if (room > 0)
		room--;					/* the slot of the key GH_EMPTY_KEY */
	if (fit > room)
		fit = room;
	if (fit > STAR_BLOCK_SLOTS)
		fit = STAR_BLOCK_SLOTS;
	return fit >= 64 ? fit : 0;
}

/*
 * Aggregate rows (star_insert_kernel's arguments) until none is left
 * pending for want of room; *inserted: how many were aggregated.
 */
static gh_status
insert_rows(const gh_cuda_ctx *ctx, const gh_star *s, cuda_star *cs, size_t n, uint32_t per_page,
			const uint8_t *status, const uint8_t *drop, const uint64_t *keys, uint8_t *pending,
			const int64_t *vals, const uint8_t *nulls, size_t stride, uint64_t *inserted)
{
	gh_engine  *e = ctx->e;
	cudaStream_t st = ctx->d->stream;
	unsigned long long counts[NCOUNTS];

	*inserted = 0;
	for (;;)
	{
		agg_table  *t = cs->t.get();
		size_t		cap = t->cap;

		size_t		scap = block_slots(ctx, t);

		GH_CUDA_TRY(e, cudaMemsetAsync(cs->counts.p + COUNT_REFUSED, 0,
									   2 * sizeof(unsigned long long), st));
		if (scap > 0 && cs->claimed <= scap / 2)
		{
			size_t		bytes = block_table_bytes(t, scap);
			int			per_sm = 0;

			GH_TRY(block_kernel_setup(ctx, star_insert_block_kernel, bytes, &per_sm));
			star_insert_block_kernel<<<gh_cuda_wide_grid(ctx, n, BLOCK_THREADS, per_sm),
				BLOCK_THREADS, bytes, st>>>(
				n, per_page, status, drop, keys, pending, vals, nulls, stride,
				t->keys, t->rows, cap, t->w, cap - cap / 8 - 1, t->cols.p,
				s->prog.nouts, cs->counts.p, scap);
			GH_CUDA_LAUNCHED(e, "star_insert_block_kernel");
		}
		else
		{
			star_insert_kernel<<<gh_cuda_wide_grid(ctx, n, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0,
				st>>>(
				n, per_page, status, drop, keys, pending, vals, nulls, stride,
				t->keys, t->rows, cap, t->w, cap - cap / 8 - 1, t->cols.p,
				s->prog.nouts, cs->counts.p);
			GH_CUDA_LAUNCHED(e, "star_insert_kernel");
		}
		GH_CUDA_TRY(e, cudaMemcpyAsync(counts, cs->counts.p, sizeof(counts),
									   cudaMemcpyDeviceToHost, st));
		GH_TRY(gh_cuda_sync(ctx));
		cs->claimed = counts[COUNT_CLAIMED];
		*inserted += counts[COUNT_INSERTED];
		if (counts[COUNT_REFUSED] == 0)
			break;
		if (gh_interrupted(e))
			return GH_ERR_CANCELLED;
		/* room for twice the groups claimed and refused */
		while (cap / 2 < cs->claimed + counts[COUNT_REFUSED])
			cap *= 2;
		GH_TRY(grow(ctx, s, cs, cap == t->cap ? 2 * cap : cap));
	}
	if (cs->claimed > cs->t->cap / 2)
		GH_TRY(grow(ctx, s, cs, 4 * cs->t->cap));
	return GH_OK;
}

gh_status
gh_cuda_star_create(gh_star *s, int dev)
{
	gh_engine  *e = s->e;
	gh_cuda_ctx ctx;
	cuda_star  *cs;
	gh_vmdim	dims[GH_PROG_MAX_DIMS];

	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	cs = new (std::nothrow) cuda_star();
	if (cs == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a star");
	s->bstate[dev] = cs;
	for (int d = 0; d < s->ndims; d++)
		dims[d] = ((const cuda_dim *) s->dims[d]->bstate[dev])->vm;
	GH_TRY(gh_cuda_stage(&ctx, &s->prog, 1, cs->prog, "star program"));
	GH_TRY(gh_cuda_stage(&ctx, dims, s->ndims, cs->dims, "star dimensions"));
	GH_TRY(cs->counts.alloc(&ctx, NCOUNTS, "star counts"));
	GH_CUDA_TRY(e, cudaMemsetAsync(cs->counts.p, 0, cs->counts.bytes(), ctx.d->stream));
	GH_TRY(new_table(&ctx, s, STAR_MIN_SLOTS, cs->t));
	cs->claimed = 0;
	/* the staged program and dimensions are copied before the host's go away */
	return gh_cuda_sync(&ctx);
}

gh_status
gh_cuda_star_read(gh_star *s, int dev, const void *base, const uint32_t *pages, size_t npages,
				  const gh_pagecopy *copy, uint8_t *status)
{
	gh_engine  *e = s->e;
	cuda_star  *cs = (cuda_star *) s->bstate[dev];
	const gh_pagespec *spec = &s->spec;
	size_t		slots = npages * spec->max_tuples;
	size_t		nouts = (size_t) s->prog.nouts;
	gh_cuda_ctx ctx;
	gh_cuda_pages src;

	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	cs->slots = 0;
	if (cs->stride < slots)
	{
		/* buffers for the largest read so far, kept for the next: all or none */
		gh_dbuf<uint64_t> keys;
		gh_dbuf<uint8_t> pending,
					nulls;
		gh_dbuf<int64_t> vals;

		cs->keys.reset();
		cs->pending.reset();
		cs->vals.reset();
		cs->nulls.reset();
		cs->stride = 0;
		GH_TRY(keys.alloc(&ctx, slots, "star row keys"));
		GH_TRY(pending.alloc(&ctx, slots, "star row flags"));
		GH_TRY(vals.alloc(&ctx, slots * nouts, "star row outputs"));
		GH_TRY(nulls.alloc(&ctx, slots * nouts, "star row output nulls"));
		cs->keys.swap(keys);
		cs->pending.swap(pending);
		cs->vals.swap(vals);
		cs->nulls.swap(nulls);
		cs->stride = slots;
	}
	if (cs->status.count < npages)
		GH_TRY(cs->status.alloc(&ctx, npages, "star page statuses"));
	GH_TRY(gh_cuda_page_source(&ctx, spec, base, pages, npages, &src, &cs->ids));
	if (copy != nullptr)
		GH_TRY(gh_cuda_stage_kept(&ctx, copy, npages, cs->copy, "page cache copies"));
	star_read_kernel<<<gh_cuda_wide_grid(&ctx, npages, 1, 16), STAR_THREADS, spec->page_size,
		ctx.d->stream>>>(src.src, src.ids, copy != nullptr ? cs->copy.p : nullptr, npages, *spec, cs->prog.p, cs->dims.p,
						 cs->stride, cs->keys.p, cs->pending.p, cs->vals.p, cs->nulls.p,
						 cs->status.p);
	GH_CUDA_LAUNCHED(e, "star_read_kernel");
	GH_CUDA_TRY(e, cudaMemcpyAsync(status, cs->status.p, npages, cudaMemcpyDeviceToHost,
								   ctx.d->stream));
	GH_TRY(gh_cuda_sync(&ctx));
	cs->slots = slots;
	return GH_OK;
}

gh_status
gh_cuda_star_keep(gh_star *s, int dev, const uint8_t *drop, uint64_t *kept)
{
	cuda_star  *cs = (cuda_star *) s->bstate[dev];
	gh_cuda_ctx ctx;

	GH_TRY(gh_cuda_enter(s->e, dev, &ctx));
	if (drop != nullptr)
		GH_TRY(gh_cuda_stage_kept(&ctx, drop, cs->slots / s->spec.max_tuples, cs->drop,
								  "dropped pages"));
	return insert_rows(&ctx, s, cs, cs->slots, s->spec.max_tuples, cs->status.p,
					   drop != nullptr ? cs->drop.p : nullptr,
					   cs->keys.p, cs->pending.p, cs->vals.p, cs->nulls.p, cs->stride, kept);
}

gh_status
gh_cuda_star_add(gh_star *s, int dev, const uint64_t *keys, size_t n, const gh_aggcol *cols)
{
	gh_engine  *e = s->e;
	cuda_star  *cs = (cuda_star *) s->bstate[dev];
	int			nouts = s->prog.nouts;
	gh_cuda_ctx ctx;
	gh_dbuf<uint64_t> dkeys;
	gh_dbuf<uint8_t> pending,
				nulls;
	gh_dbuf<int64_t> vals;
	uint64_t	inserted;
	cudaStream_t st;

	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	st = ctx.d->stream;
	GH_TRY(gh_cuda_stage(&ctx, keys, n, dkeys, "added keys"));
	GH_TRY(pending.alloc(&ctx, n, "added row flags"));
	GH_TRY(vals.alloc(&ctx, n * nouts, "added values"));
	GH_TRY(nulls.alloc(&ctx, n * nouts, "added nulls"));
	GH_CUDA_TRY(e, cudaMemsetAsync(pending.p, 1, n, st));
	if (nouts > 0)
		GH_CUDA_TRY(e, cudaMemsetAsync(nulls.p, 0, n * nouts, st));
	for (int c = 0; c < nouts; c++)
	{
		/* host arrays or device arrays (gh_darray) alike */
		GH_CUDA_TRY(e, cudaMemcpyAsync(vals.p + c * n, cols[c].values, 8 * n,
									   cudaMemcpyDefault, st));
		if (cols[c].nulls != nullptr)
			GH_CUDA_TRY(e, cudaMemcpyAsync(nulls.p + c * n, cols[c].nulls, n,
										   cudaMemcpyDefault, st));
	}
	return insert_rows(&ctx, s, cs, n, 1, nullptr, nullptr, dkeys.p, pending.p, vals.p, nulls.p,
					   n, &inserted);
}

gh_status
gh_cuda_star_result(gh_star *s, int dev, gh_groups **out)
{
	gh_engine  *e = s->e;
	cuda_star  *cs = (cuda_star *) s->bstate[dev];
	agg_table  *t = cs->t.get();
	gh_cuda_ctx ctx;
	gh_groups  *g;
	gh_status	st;

	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	GH_TRY(agg_table_list(&ctx, t, cs->claimed + 1));
	g = gh_groups_alloc(t->ngroups, s->outs, s->prog.nouts);
	if (g == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for %zu groups", t->ngroups);
	st = agg_copy_out(&ctx, t, g);
	t->groups.reset();
	if (st != GH_OK)
	{
		gh_groups_free(g);
		return st;
	}
	*out = g;
	return GH_OK;
}

void
gh_cuda_star_free(gh_star *s, int dev)
{
	gh_cuda_ctx ctx;

	(void) gh_cuda_enter(s->e, dev, &ctx);
	delete (cuda_star *) s->bstate[dev];
	s->bstate[dev] = nullptr;
}
