/*-------------------------------------------------------------------------
 *
 * cuda_bcht.cu
 *	  The bucketed cuckoo hash table (Awad et al.) on the GPU: the build,
 *	  from keys with duplicates to the distinct keys and their row ranges.
 *	  Filling the table is in cuda_bcht_fill.cu, lookups in
 *	  cuda_bcht_find.cu.
 *
 * INTERFACE ROUTINES
 *		gh_bcht_build		device keys/rows -> table of distinct keys
 *
 * SORTING INTO RUNS
 *
 * A cuckoo table holds each key once, so duplicates are gathered first:
 * equal keys must become runs whose rows are contiguous.  The input is
 * sorted by h0 = gh_hash64(key, GH_SEED_BCHT0), the hash behind a key's
 * first bucket, rather than by the key: equal keys still form runs (h0 is a
 * bijection; gh_unhash64 gives the key back), and the distinct keys come
 * out in the order of their first buckets, so region after region, as the
 * fill needs (cuda_bcht_fill.cu).  A full 64-bit radix sort costs eight passes, so the
 * sort runs on the top K bits only (K a multiple of 8, at least
 * log2(n) + 3: four passes for 2^27 keys), which already orders the keys
 * by first bucket.  Rows that agree on those K bits form groups, nearly all
 * of one or two rows (about n^2 / 2^(K+1) pairs collide); one pass sorts
 * each small group on all bits in place, and the rare long ones (a key
 * repeated many times) go to gh_sort_segments.  Runs are then found by
 * selecting run heads with CUB's DeviceSelect; the heads double as row
 * offsets (a run-length encoding, for which DeviceRunLengthEncode's int
 * item count would be too small).
 *
 *-------------------------------------------------------------------------
 */
#include <cmath>

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "cuda_bcht.cuh"

/* Groups of rows sharing the sorted top bits longer than this are sorted
 * by gh_sort_segments instead of by their first thread. */
#define BCHT_GROUP_SCAN 64

/* scratch words used here */
#define SCRATCH_COUNT 0			/* distinct keys, long groups */

/* h0 <- gh_hash64(key, GH_SEED_BCHT0), in place, two keys per load */
__global__ void
hash_keys_h0(uint64_t *keys, size_t n)
{
	ulonglong2 *pairs = reinterpret_cast<ulonglong2 *>(keys);
	size_t		npairs = n / 2;

	GH_GRID_STRIDE(i, npairs)
	{
		ulonglong2	v = pairs[i];

		v.x = gh_hash64(v.x, GH_SEED_BCHT0);
		v.y = gh_hash64(v.y, GH_SEED_BCHT0);
		pairs[i] = v;
	}
	if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0)
		keys[n - 1] = gh_hash64(keys[n - 1], GH_SEED_BCHT0);
}

/*
 * On h sorted by its top bits (h >> shift), with rows alongside: finish
 * sorting every group of equal top bits.  The thread at a group's start
 * insertion-sorts a group of up to BCHT_GROUP_SCAN rows itself (almost all
 * groups hold one or two); longer groups are listed for gh_sort_segments.
 * Other threads read only the top bits of their neighbours, which sorting
 * within a group does not change.  One row per thread; every thread of the
 * grid reaches gh_block_append.
 */
__global__ void
sort_small_groups(uint64_t *__restrict__ h, uint64_t *__restrict__ rows,
				  size_t n, int shift, uint32_t *__restrict__ seg_begin,
				  uint32_t *__restrict__ seg_end, unsigned long long *nseg,
				  size_t cap)
{
	size_t		i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
	size_t		j = i + 1;
	bool		is_long = false;
	unsigned long long k;

	if (i < n)
	{
		uint64_t	g = h[i] >> shift;

		/* only the start of a group of two or more does anything */
		if ((i == 0 || (h[i - 1] >> shift) != g) && j < n && (h[j] >> shift) == g)
		{
			while (j < n && j - i < BCHT_GROUP_SCAN && (h[j] >> shift) == g)
				j++;
			if (j < n && (h[j] >> shift) == g)
			{
				/* a long group: find its end */
				size_t		lo = j,
							hi = n;

				while (lo < hi)
				{
					size_t		mid = lo + (hi - lo) / 2;

					if ((h[mid] >> shift) == g)
						lo = mid + 1;
					else
						hi = mid;
				}
				j = lo;
				is_long = true;
			}
			else
			{
				for (size_t a = i + 1; a < j; a++)
				{
					uint64_t	key = h[a],
								row = rows[a];
					size_t		z = a;

					for (; z > i && h[z - 1] > key; z--)
					{
						h[z] = h[z - 1];
						rows[z] = rows[z - 1];
					}
					h[z] = key;
					rows[z] = row;
				}
			}
		}
	}
	k = gh_block_append(nseg, is_long);
	if (is_long && k < cap)
	{
		seg_begin[k] = (uint32_t) i;
		seg_end[k] = (uint32_t) j;
	}
}

/* Selects positions that start a run of equal values. */
struct run_head
{
	const uint64_t *v;

	__device__ __forceinline__ bool
	operator() (uint32_t i) const
	{
		return i == 0 || v[i] != v[i - 1];
	}
};

/* dh[t] = h[heads[t]]: the distinct hashes */
__global__ void
gather_heads(const uint64_t *__restrict__ h, const uint32_t *__restrict__ heads,
			 size_t ndistinct, uint64_t *__restrict__ dh)
{
	GH_GRID_STRIDE(t, ndistinct)
		dh[t] = h[heads[t]];
}

/* The number of top hash bits the build sorts on (see the file header). */
static int
sort_bits_for(size_t n)
{
	int			bits = 3;

	while (bits < 64 && ((uint64_t) 1 << (bits - 3)) < n)
		bits++;
	return (bits + 7) / 8 * 8;
}

/*
 * Sort (h0, rows) so that equal keys form runs: radix sort on the top bits,
 * then the groups that mix keys.
 */
static gh_status
sort_into_runs(const gh_cuda_ctx *ctx, gh_dbuf<uint64_t> &h0,
			   gh_dbuf<uint64_t> &rows, size_t n)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	gh_dbuf<uint64_t> alt_h,
				alt_r;
	int			bits = sort_bits_for(n);

	/* the sort's second buffers stay for the groups' sort */
	GH_TRY(gh_cuda_sort_top_bits<uint64_t>(ctx, h0, rows, n, bits, "BCHT sort buffer",
										   &alt_h, &alt_r));
	if (bits < 64)
	{
		unsigned long long *d_nseg = (unsigned long long *) (ctx->d->scratch + SCRATCH_COUNT);
		size_t		cap = n / (BCHT_GROUP_SCAN + 1) + 1;
		gh_dbuf<uint32_t> seg_begin,
					seg_end;
		uint64_t	nseg;

		GH_TRY(seg_begin.alloc(ctx, cap, "BCHT sort segments"));
		GH_TRY(seg_end.alloc(ctx, cap, "BCHT sort segments"));
		GH_CUDA_TRY(e, cudaMemsetAsync(d_nseg, 0, sizeof(uint64_t), s));
		sort_small_groups<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
			h0.p, rows.p, n, 64 - bits, seg_begin.p, seg_end.p, d_nseg, cap);
		GH_CUDA_LAUNCHED(e, "sort_small_groups");
		GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_COUNT, 1, &nseg));
		if (nseg > cap)
			return gh_fail(e, GH_ERR_INTERNAL, "BCHT build listed %llu long groups, at most %zu expected",
						   (unsigned long long) nseg, cap);
		GH_TRY(gh_sort_segments(ctx, h0.p, rows.p, alt_h.p, alt_r.p, n,
								seg_begin.p, seg_end.p, nseg, 64 - bits));
	}
	return GH_OK;
}

gh_status
gh_bcht_build(const gh_cuda_ctx *ctx, gh_dbuf<uint64_t> &keys,
			  gh_dbuf<uint64_t> &rows, size_t n, double load_factor,
			  gh_bcht_table *t)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	gh_dbuf<uint64_t> dh;
	gh_dbuf<uint32_t> heads;
	gh_dbuf<unsigned char> temp;
	size_t		temp_bytes = 0;
	uint64_t	ndistinct;

	if (n > GH_CUDA_MAX_PART_ROWS)
		return gh_fail(e, GH_ERR_INVALID,
					   "a device partition of %zu rows is too large (at most %zu)",
					   n, GH_CUDA_MAX_PART_ROWS);
	if (!(load_factor > 0.0))
		load_factor = GH_BCHT_DEFAULT_LOAD;
	if (load_factor > 0.99)
		load_factor = 0.99;
	t->n = n;
	t->ndistinct = 0;
	t->has_empty_key = false;
	t->empty_val = 0;
	if (n == 0)
		return gh_bcht_fill(ctx, t, nullptr, nullptr, load_factor);

	hash_keys_h0<<<gh_cuda_grid(n / 2 + 1, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(keys.p, n);
	GH_CUDA_LAUNCHED(e, "hash_keys_h0");
	GH_TRY(sort_into_runs(ctx, keys, rows, n));
	t->rows.swap(rows);

	/* run heads: distinct keys and their row offsets */
	{
		thrust::counting_iterator<uint32_t> positions(0);
		run_head	pred = {keys.p};
		unsigned long long *d_count = (unsigned long long *) (ctx->d->scratch + SCRATCH_COUNT);

		GH_TRY(heads.alloc(ctx, n, "BCHT run heads"));
		GH_CUDA_TRY(e, cub::DeviceSelect::If(nullptr, temp_bytes, positions, heads.p, d_count,
											 (int64_t) n, pred, s));
		GH_TRY(temp.alloc(ctx, temp_bytes, "select temporary storage"));
		GH_CUDA_TRY(e, cub::DeviceSelect::If(temp.p, temp_bytes, positions, heads.p, d_count,
											 (int64_t) n, pred, s));
		temp.reset();
		GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_COUNT, 1, &ndistinct));
		t->ndistinct = ndistinct;
	}
	if (ndistinct == n)
		dh.swap(keys);			/* every row a distinct key: h0 is dh */
	else
	{
		GH_TRY(dh.alloc(ctx, ndistinct, "BCHT distinct hashes"));
		gather_heads<<<gh_cuda_grid(ndistinct, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
			keys.p, heads.p, ndistinct, dh.p);
		GH_CUDA_LAUNCHED(e, "gather_heads");
		keys.reset();
	}

	return gh_bcht_fill(ctx, t, dh.p, heads.p, load_factor);
}
