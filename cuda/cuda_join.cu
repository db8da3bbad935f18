/*-------------------------------------------------------------------------
 *
 * cuda_join.cu
 *	  Joins on the GPU: counting a probe's matches, and writing any range of
 *	  its pairs, for both table kinds and both join methods.
 *
 * INTERFACE ROUTINES
 *		gh_cuda_probe_start		count matches per probe element, scan them
 *		gh_cuda_probe_pairs		write pairs [first, first + count)
 *		gh_cuda_probe_key_counts	per probe key match counts
 *
 * A probe's elements are its keys, in the caller's order (PROBE) or sorted by
 * bucket for Green's list intersection (INTERSECT, HashGraph only).  Each
 * element records its match count and first match, and an exclusive scan
 * fixes the pair order.  A range of pairs is written one thread per element,
 * long runs of a hot key cut into items that whole blocks copy.  See
 * cuda/README, "HashGraph".
 *
 *-------------------------------------------------------------------------
 */
#include <cub/cub.cuh>

#include "cuda_tables.cuh"

/* Pairs one thread writes itself at most; more go to the item list. */
#define DEFER_PAIRS 32
/* Pairs of one item, copied by one block. */
#define ITEM_PAIRS 4096

/*
 * Probes of at least this many keys use intersection under GH_JOIN_AUTO:
 * its probe-side sort costs a few launches and passes, which pay off once
 * the table's random reads dominate (at 2^27 keys a join by intersection
 * took 12 ms against 12 ms for the lookups alone by probing, on one H100).
 */
#ifndef GH_CUDA_INTERSECT_MIN
#define GH_CUDA_INTERSECT_MIN ((size_t) 1 << 20)
#endif

/*
 * The intersection sorts its probe keys on this many top bits of their
 * bucket hash at most (two passes of the radix sort), as far as it makes
 * the table's reads a sweep (cuda_cluster.cu): at 2^27 keys on one H100 a
 * join took 11.95 ms sorted on all 25 bits of the bucket, 9.97 on 16 and
 * 10.33 on 8.
 */
#define GH_CUDA_INTERSECT_BITS 16

/* scratch words used here */
#define SCRATCH_KEY_RANGE 8		/* two words: first and end element */
#define SCRATCH_NITEMS 10

typedef struct pair_item
{
	uint64_t	outer;
	uint64_t	dst;			/* index into the output */
	uint32_t	src;			/* table position of the first row */
	uint32_t	len;
} pair_item;

/* The original probe key index of element p. */
struct outer_identity
{
	__device__ __forceinline__ uint64_t
	operator() (size_t p) const
	{
		return p;
	}
};

template <typename T>
struct outer_array
{
	const T    *a;

	__device__ __forceinline__ uint64_t
	operator() (size_t p) const
	{
		return a[p];
	}
};

__device__ __forceinline__ void
store_pair(gh_pair *at, uint64_t outer, uint64_t inner)
{
	*reinterpret_cast<ulonglong2 *>(at) = make_ulonglong2(outer, inner);
}

/* ---- starting a probe ---- */

gh_status
gh_cuda_probe_start(const gh_cuda_ctx *ctx, gh_cuda_part *part,
					const uint64_t *keys, gh_dbuf<uint64_t> *keybuf, size_t n,
					gh_join_method method, gh_cuda_probe *pr)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	bool		hashgraph = part->kind == GH_KIND_HASHGRAPH;
	gh_dbuf<unsigned char> temp;
	size_t		temp_bytes = 0;

	pr->part = part;
	pr->dev = ctx->dev;
	pr->n = n;
	pr->total = 0;
	pr->intersect = hashgraph &&
		(method == GH_JOIN_INTERSECT ||
		 (method == GH_JOIN_AUTO && n >= GH_CUDA_INTERSECT_MIN));
	GH_TRY(pr->po.alloc(ctx, n + 1, "pair offsets"));
	GH_CUDA_TRY(e, cudaMemsetAsync(pr->po.p + n, 0, sizeof(uint64_t), s));
	if (n == 0)
		return GH_OK;
	GH_TRY(pr->first.alloc(ctx, n, "first match positions"));

	if (hashgraph)
	{
		/* the element hashes go where the keys are, if the caller allows */
		if (keybuf != nullptr && keybuf->p == keys)
			pr->hk.swap(*keybuf);
		else
			GH_TRY(pr->hk.alloc(ctx, n, "probe hashes"));
		if (pr->intersect)
		{
			int			bits = part->hg.bits < GH_CUDA_INTERSECT_BITS ?
				part->hg.bits : GH_CUDA_INTERSECT_BITS;

			if (n <= UINT32_MAX)
				GH_TRY(gh_cuda_cluster<uint32_t>(ctx, keys, n, GH_SEED_BUCKET, bits,
												 pr->hk, pr->outer32));
			else
				GH_TRY(gh_cuda_cluster<uint64_t>(ctx, keys, n, GH_SEED_BUCKET, bits,
												 pr->hk, pr->outer64));
			GH_TRY(gh_hg_count(ctx, &part->hg, pr->hk.p, true, nullptr, n,
							   pr->po.p, pr->first.p, nullptr));
		}
		else
			GH_TRY(gh_hg_count(ctx, &part->hg, keys, false, pr->hk.p, n,
							   pr->po.p, pr->first.p, nullptr));
	}
	else
		GH_TRY(gh_bcht_count(ctx, &part->bc, keys, n, pr->po.p, pr->first.p, nullptr));

	GH_CUDA_TRY(e, cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, pr->po.p, pr->po.p,
												 (int64_t) (n + 1), s));
	GH_TRY(temp.alloc(ctx, temp_bytes, "scan temporary storage"));
	GH_CUDA_TRY(e, cub::DeviceScan::ExclusiveSum(temp.p, temp_bytes, pr->po.p, pr->po.p,
												 (int64_t) (n + 1), s));
	GH_CUDA_TRY(e, cudaMemcpyAsync(ctx->d->pinned, pr->po.p + n, sizeof(uint64_t),
								   cudaMemcpyDeviceToHost, s));
	GH_CUDA_TRY(e, cudaStreamSynchronize(s));
	pr->total = ctx->d->pinned[0];
	return GH_OK;
}

/* ---- writing pairs ---- */

/*
 * First index in a[0..len) whose value exceeds x (len if none), searched by
 * one warp 32 ways at a time.
 */
__device__ size_t
warp_upper_bound(const uint64_t *a, size_t len, uint64_t x)
{
	const unsigned lane = threadIdx.x & 31;
	size_t		lo = 0,
				hi = len;		/* the answer is in [lo, hi] */

	while (hi - lo > 32)
	{
		size_t		step = (hi - lo + 31) / 32;
		size_t		at = lo + (lane + 1) * step - 1;
		unsigned	above = __ballot_sync(0xffffffffu, at >= hi || a[at] > x);
		unsigned	f;

		if (above == 0)
			return hi;			/* lane 31 tested hi - 1 or beyond */
		f = __ffs(above) - 1;
		if (lo + (f + 1) * step - 1 < hi)
			hi = lo + (f + 1) * step - 1;
		lo = f == 0 ? lo : lo + f * step;
	}
	{
		size_t		at = lo + lane;
		unsigned	above = __ballot_sync(0xffffffffu, at < hi && a[at] > x);

		return above ? lo + __ffs(above) - 1 : hi;
	}
}

/* The elements whose pairs meet [first, last): range[0] .. range[1]. */
__global__ void
find_element_range(const uint64_t *po, size_t n, uint64_t first, uint64_t last,
				   unsigned long long *range)
{
	/* po[0..n] is non-decreasing; the element holding pair x is ub(x) - 1 */
	size_t		begin = warp_upper_bound(po, n + 1, first);
	size_t		end = warp_upper_bound(po, n + 1, last - 1);

	if (threadIdx.x == 0)
	{
		range[0] = begin > 0 ? begin - 1 : 0;
		range[1] = end < n ? end : n;
	}
}

/*
 * One thread per element in range: write its pairs that fall in
 * [first, last) to out[pair - first], or list them as items.
 */
template <typename Outer, bool HASHGRAPH>
__global__ void
write_element_pairs(const unsigned long long *range, const uint64_t *__restrict__ po,
					const uint32_t *__restrict__ firstpos, Outer outer,
					const uint64_t *__restrict__ hk, gh_hg_view hg,
					const uint64_t *__restrict__ rows, uint64_t first,
					uint64_t last, gh_pair *__restrict__ out,
					pair_item *__restrict__ items, unsigned long long *nitems,
					size_t items_cap)
{
	size_t		begin = range[0],
				end = range[1];

	for (size_t p = begin + blockIdx.x * (size_t) blockDim.x + threadIdx.x; p < end;
		 p += (size_t) gridDim.x * blockDim.x)
	{
		uint64_t	lo = po[p],
					hi = po[p + 1];
		uint64_t	a = lo > first ? lo : first;
		uint64_t	z = hi < last ? hi : last;
		uint64_t	o,
					j0,
					len;
		uint32_t	f;
		gh_pair    *dst;

		if (a >= z)
			continue;
		o = outer(p);
		f = firstpos[p];
		j0 = a - lo;
		len = z - a;
		dst = out + (a - first);
		if (HASHGRAPH && hi - lo > 1)
		{
			uint64_t	h = hk[p];
			uint64_t	b = gh_range(h, hg.nbuckets);
			uint32_t	bend = hg.offsets[b + 1];

			if (bend - hg.offsets[b] <= GH_HG_LIGHT)
			{
				/* light bucket: matches may be interleaved with others */
				uint64_t	m = 0;

				for (uint32_t j = f; j < bend && m < j0 + len; j++)
					if (hg.hkeys[j] == h)
					{
						if (m >= j0)
							store_pair(dst + (m - j0), o, rows[j]);
						m++;
					}
				continue;
			}
		}
		/* contiguous matches: rows[f + j0 .. f + j0 + len) */
		if (len <= DEFER_PAIRS)
		{
			for (uint32_t t = 0; t < (uint32_t) len; t++)
				store_pair(dst + t, o, rows[f + j0 + t]);
		}
		else
		{
			uint64_t	pieces = (len + ITEM_PAIRS - 1) / ITEM_PAIRS;
			unsigned long long k = atomicAdd(nitems, (unsigned long long) pieces);

			for (uint64_t q = 0; q < pieces && k + q < items_cap; q++)
			{
				pair_item	it;
				uint64_t	off = q * ITEM_PAIRS;

				it.outer = o;
				it.dst = (a - first) + off;
				it.src = (uint32_t) (f + j0 + off);
				it.len = (uint32_t) (len - off < ITEM_PAIRS ? len - off : ITEM_PAIRS);
				items[k + q] = it;
			}
		}
	}
}

/* One block per item: copy a contiguous run of rows as pairs. */
__global__ void
expand_pair_items(const pair_item *__restrict__ items,
				  const unsigned long long *nitems, size_t items_cap,
				  const uint64_t *__restrict__ rows, gh_pair *__restrict__ out)
{
	size_t		ni = *nitems < items_cap ? *nitems : items_cap;

	for (size_t k = blockIdx.x; k < ni; k += gridDim.x)
	{
		pair_item	it = items[k];

		for (uint32_t t = threadIdx.x; t < it.len; t += blockDim.x)
			store_pair(out + it.dst + t, it.outer, rows[it.src + t]);
	}
}

template <typename Outer>
static gh_status
launch_write_pairs(const gh_cuda_ctx *ctx, gh_cuda_probe *pr, Outer outer,
				   uint64_t first, uint64_t last, gh_pair *out,
				   pair_item *items, size_t items_cap)
{
	cudaStream_t s = ctx->d->stream;
	unsigned long long *range = (unsigned long long *) (ctx->d->scratch + SCRATCH_KEY_RANGE);
	unsigned long long *nitems = (unsigned long long *) (ctx->d->scratch + SCRATCH_NITEMS);
	unsigned	grid = gh_cuda_wide_grid(ctx, pr->n, GH_CUDA_BLOCK, 8);
	gh_cuda_part *part = pr->part;

	if (part->kind == GH_KIND_HASHGRAPH)
		write_element_pairs<Outer, true><<<grid, GH_CUDA_BLOCK, 0, s>>>(
			range, pr->po.p, pr->first.p, outer, pr->hk.p, part->hg.view(),
			part->hg.rows.p, first, last, out, items, nitems, items_cap);
	else
	{
		gh_hg_view	none = {nullptr, nullptr, nullptr, 1};

		write_element_pairs<Outer, false><<<grid, GH_CUDA_BLOCK, 0, s>>>(
			range, pr->po.p, pr->first.p, outer, nullptr, none,
			part->bc.rows.p, first, last, out, items, nitems, items_cap);
	}
	GH_CUDA_LAUNCHED(ctx->e, "write_element_pairs");
	return GH_OK;
}

gh_status
gh_cuda_probe_pairs(const gh_cuda_ctx *ctx, gh_cuda_probe *pr, uint64_t first,
					size_t count, gh_pair *out)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	unsigned long long *range = (unsigned long long *) (ctx->d->scratch + SCRATCH_KEY_RANGE);
	unsigned long long *nitems = (unsigned long long *) (ctx->d->scratch + SCRATCH_NITEMS);
	size_t		items_cap = count / DEFER_PAIRS + count / ITEM_PAIRS + 1;
	gh_dbuf<pair_item> items;
	const uint64_t *rows;

	if (count == 0)
		return GH_OK;
	if (first > pr->total || count > pr->total - first)
		return gh_fail(e, GH_ERR_INTERNAL, "pair range [%llu, +%zu) beyond the probe's %llu pairs",
					   (unsigned long long) first, count, (unsigned long long) pr->total);
	GH_TRY(items.alloc(ctx, items_cap, "pair item list"));
	GH_CUDA_TRY(e, cudaMemsetAsync(nitems, 0, sizeof(uint64_t), s));
	find_element_range<<<1, 32, 0, s>>>(pr->po.p, pr->n, first, first + count, range);
	GH_CUDA_LAUNCHED(e, "find_element_range");

	if (pr->intersect && pr->outer64.p != nullptr)
		GH_TRY(launch_write_pairs(ctx, pr, outer_array<uint64_t> {pr->outer64.p},
								  first, first + count, out, items.p, items_cap));
	else if (pr->intersect)
		GH_TRY(launch_write_pairs(ctx, pr, outer_array<uint32_t> {pr->outer32.p},
								  first, first + count, out, items.p, items_cap));
	else
		GH_TRY(launch_write_pairs(ctx, pr, outer_identity(),
								  first, first + count, out, items.p, items_cap));

	rows = pr->part->kind == GH_KIND_HASHGRAPH ? pr->part->hg.rows.p : pr->part->bc.rows.p;
	expand_pair_items<<<gh_cuda_wide_grid(ctx, items_cap, 1, 16), GH_CUDA_BLOCK, 0, s>>>(
		items.p, nitems, items_cap, rows, out);
	GH_CUDA_LAUNCHED(e, "expand_pair_items");
	return GH_OK;
}

/* ---- per-key counts ---- */

template <typename Outer>
__global__ void
scatter_key_counts(const uint64_t *__restrict__ po, size_t n, Outer outer,
				   uint32_t *__restrict__ counts)
{
	GH_GRID_STRIDE(p, n)
	{
		uint64_t	c = po[p + 1] - po[p];

		counts[outer(p)] = c > UINT32_MAX ? UINT32_MAX : (uint32_t) c;
	}
}

gh_status
gh_cuda_probe_key_counts(const gh_cuda_ctx *ctx, gh_cuda_probe *pr, uint32_t *out)
{
	cudaStream_t s = ctx->d->stream;
	unsigned	grid = gh_cuda_grid(pr->n, GH_CUDA_BLOCK);

	if (pr->n == 0)
		return GH_OK;
	if (pr->intersect && pr->outer64.p != nullptr)
		scatter_key_counts<<<grid, GH_CUDA_BLOCK, 0, s>>>(pr->po.p, pr->n,
														  outer_array<uint64_t> {pr->outer64.p}, out);
	else if (pr->intersect)
		scatter_key_counts<<<grid, GH_CUDA_BLOCK, 0, s>>>(pr->po.p, pr->n,
														  outer_array<uint32_t> {pr->outer32.p}, out);
	else
		scatter_key_counts<<<grid, GH_CUDA_BLOCK, 0, s>>>(pr->po.p, pr->n, outer_identity(), out);
	GH_CUDA_LAUNCHED(ctx->e, "scatter_key_counts");
	return GH_OK;
}
