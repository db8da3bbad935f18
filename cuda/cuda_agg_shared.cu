/*-------------------------------------------------------------------------
 *
 * cuda_agg_shared.cu
 *	  GROUP BY into few groups: a table of groups in each block's shared
 *	  memory, merged into the global table once at the end.
 *
 * INTERFACE ROUTINES
 *		agg_shared_capacity		the slots a block's table can have
 *		agg_shared_run			aggregate device rows into an agg_table
 *
 * With few groups, global atomics on the same few slots queue up behind one
 * another; in shared memory they are cheap and each block has its own (on
 * one H100, 2^27 rows into 16 groups: 1.9 G rows/s with global atomics,
 * 70 with a table per block).  Gathering a warp's rows of one key first
 * (__match_any_sync, one update per key) measured slower at every group
 * count from 1 to 4096: shared-memory atomics on one address are not what
 * queues.  A block's table holds each accumulator as an array of its own
 * (agg_update takes a word offset, which for it is the slot number); a key
 * that finds no room in it within SHARED_PROBES slots goes to the global
 * table directly.  At the end each block adds its groups to the global table,
 * one update per group and accumulator.  The global table is sized by the
 * caller's estimate and bounded (agg_slot_bounded): if it turns out too
 * small, *overflow says so and the caller starts over.
 *
 *-------------------------------------------------------------------------
 */
#include <climits>

#include "cuda_agg.cuh"

#define SHARED_BLOCK 1024
/* Slots a key probes in a block's table before it goes global. */
#define SHARED_PROBES 64
/* The most shared memory a block takes (the device may allow less). */
#define SHARED_MOST (227 * 1024)

/* Accumulator words per slot of column d (as many in the global table). */
static __host__ __device__ int
col_words(const agg_col_dev &d)
{
	int			w = d.nonnull != nullptr;

	if (d.ops & GH_AGG_SUM)
		w += d.type == GH_INT64 ? 2 : 1;
	return w + ((d.ops & GH_AGG_MIN) != 0) + ((d.ops & GH_AGG_MAX) != 0);
}

/* Bytes of a block's shared memory before its table: the column views. */
static __host__ __device__ size_t
shared_head_bytes(int ncols)
{
	return ((ncols * sizeof(agg_col_dev) + 15) / 16) * 16;
}

/* Accumulator words per slot of t, row counts and keys included. */
static size_t
slot_words(const agg_table *t)
{
	size_t		words = 2;

	for (int c = 0; c < t->ncols; c++)
		words += col_words(t->cols_host[c]);
	return words;
}

size_t
agg_shared_capacity(const gh_cuda_ctx *ctx, const agg_table *t)
{
	size_t		head = shared_head_bytes(t->ncols);
	size_t		most = SHARED_MOST;
	int			optin = 0;

	if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
							   ctx->d->id) == cudaSuccess && (size_t) optin < most)
		most = (size_t) optin;
	if (head + 64 * slot_words(t) * 8 > most)
		return 0;
	return (most - head) / (slot_words(t) * 8) - 1;
}

/*
 * Point column view v at arrays of `slots` words each in the shared words w
 * from *at on, one for each accumulator column g has globally; *at moves
 * past them.
 */
__device__ static void
shared_view(const agg_col_dev &g, agg_col_dev *v, unsigned long long *w, size_t slots,
			size_t *at)
{
	*v = g;
	v->values = nullptr;
	v->nulls = nullptr;
#define TAKE(field, type) \
	do { \
		if (g.field != nullptr) \
		{ \
			v->field = (type *) (w + *at); \
			*at += slots; \
		} \
	} while (0)
	TAKE(nonnull, unsigned long long);
	TAKE(sum_lo, unsigned long long);
	TAKE(sum_hi, unsigned long long);
	TAKE(fsum, double);
	TAKE(min, long long);
	TAKE(max, long long);
#undef TAKE
}

/* The slot of key in a block's table of cap slots, or AGG_NO_SLOT. */
__device__ __forceinline__ size_t
shared_slot(unsigned long long *keys, size_t cap, uint64_t key)
{
	size_t		s;

	if (key == GH_EMPTY_KEY)
		return cap;
	s = gh_range(gh_hash64(key, GH_SEED_AGG), cap);
	for (int probe = 0; probe < SHARED_PROBES; probe++)
	{
		unsigned long long cur = ((volatile unsigned long long *) keys)[s];

		if (cur == GH_EMPTY_KEY)
			cur = atomicCAS(keys + s, GH_EMPTY_KEY, key);
		if (cur == key || cur == GH_EMPTY_KEY)
			return s;
		if (++s == cap)
			s = 0;
	}
	return AGG_NO_SLOT;
}

__global__ void
agg_shared_kernel(const uint64_t *__restrict__ keys, size_t n, size_t cap,
				  unsigned long long *gkeys, unsigned long long *grows, size_t gcap, size_t gw,
				  const agg_col_dev *__restrict__ gcols, int ncols,
				  unsigned long long *overflow)
{
	extern __shared__ __align__(16) unsigned char smem[];
	agg_col_dev *scols = (agg_col_dev *) smem;
	unsigned long long *words = (unsigned long long *) (smem + shared_head_bytes(ncols));
	unsigned long long *skeys = words,
			   *srows = words + cap + 1;
	size_t		nwords;

	/* the block's table: views, then every word empty */
	if (threadIdx.x == 0)
	{
		size_t		at = 2 * (cap + 1);

		for (int c = 0; c < ncols; c++)
			shared_view(gcols[c], &scols[c], words, cap + 1, &at);
	}
	__syncthreads();
	nwords = 2 * (cap + 1);
	for (int c = 0; c < ncols; c++)
		nwords += col_words(scols[c]) * (cap + 1);
	for (size_t w = threadIdx.x; w < nwords; w += blockDim.x)
		words[w] = w < cap + 1 ? GH_EMPTY_KEY : 0;
	__syncthreads();
	for (int c = 0; c < ncols; c++)
		for (size_t s = threadIdx.x; s <= cap; s += blockDim.x)
		{
			if (scols[c].min != nullptr)
				scols[c].min[s] = LLONG_MAX;
			if (scols[c].max != nullptr)
				scols[c].max[s] = LLONG_MIN;
		}
	__syncthreads();

	GH_GRID_STRIDE(i, n)
	{
		uint64_t	key = keys[i];
		size_t		s = shared_slot(skeys, cap, key);
		bool		global = s == AGG_NO_SLOT;

		if (global)
		{
			s = agg_slot_bounded(gkeys, gcap, gw, key);
			if (s == AGG_NO_SLOT)
			{
				atomicOr(overflow, 1ULL);
				continue;
			}
			s *= gw;			/* the slot's word offset */
		}
		atomicAdd((global ? grows : srows) + s, 1ULL);
		for (int c = 0; c < ncols; c++)
		{
			const agg_col_dev &col = gcols[c];

			agg_update(global ? col : scols[c], s, ((const long long *) col.values)[i],
					   col.nulls != nullptr && col.nulls[i] != 0);
		}
	}
	__syncthreads();

	/* the block's groups into the global table */
	for (size_t s = threadIdx.x; s <= cap; s += blockDim.x)
	{
		size_t		g;

		if (srows[s] == 0)
			continue;
		g = agg_slot_bounded(gkeys, gcap, gw, skeys[s]);
		if (g == AGG_NO_SLOT)
		{
			atomicOr(overflow, 1ULL);
			continue;
		}
		g *= gw;
		atomicAdd(grows + g, srows[s]);
		for (int c = 0; c < ncols; c++)
		{
			const agg_col_dev &v = scols[c];
			agg_val		a;

			a.nonnull = v.nonnull != nullptr ? v.nonnull[s] : srows[s];
			if (a.nonnull == 0)
				continue;
			a.lo = v.sum_lo != nullptr ? (long long) v.sum_lo[s] : 0;
			a.hi = v.sum_hi != nullptr ? (long long) v.sum_hi[s] : 0;
			a.fsum = v.fsum != nullptr ? v.fsum[s] : 0.0;
			a.min = v.min != nullptr ? v.min[s] : 0;
			a.max = v.max != nullptr ? v.max[s] : 0;
			agg_apply(gcols[c], g, a);
		}
	}
}

gh_status
agg_shared_run(const gh_cuda_ctx *ctx, agg_table *t, const uint64_t *keys, size_t n,
			   size_t cap, unsigned long long *overflow)
{
	void		(*kernel) (const uint64_t *, size_t, size_t, unsigned long long *,
						   unsigned long long *, size_t, size_t, const agg_col_dev *, int,
						   unsigned long long *) = agg_shared_kernel;
	size_t		bytes = shared_head_bytes(t->ncols) + (cap + 1) * slot_words(t) * 8;
	int			per_sm = 0;

	GH_CUDA_TRY(ctx->e, cudaFuncSetAttribute(kernel,
											 cudaFuncAttributeMaxDynamicSharedMemorySize,
											 (int) bytes));
	GH_CUDA_TRY(ctx->e, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
																	   SHARED_BLOCK, bytes));
	if (per_sm < 1)
		per_sm = 1;
	kernel<<<gh_cuda_wide_grid(ctx, n, SHARED_BLOCK, per_sm), SHARED_BLOCK, bytes,
		ctx->d->stream>>>(keys, n, cap, t->keys, t->rows, t->cap, t->w,
						  t->cols.p, t->ncols, overflow);
	GH_CUDA_LAUNCHED(ctx->e, "agg_shared_kernel");
	return GH_OK;
}
