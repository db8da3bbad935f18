/*-------------------------------------------------------------------------
 *
 * cuda_hashgraph.cu
 *	  HashGraph on the GPU: building the CSR table and counting the matches
 *	  of probe keys in it.
 *
 * INTERFACE ROUTINES
 *		gh_hg_bits_for		bucket-count exponent for n keys
 *		gh_hg_build			device keys/rows -> CSR table
 *		gh_hg_count			per probe element: match count, first position
 *
 * The count-and-scatter of Green's build is done as a least-significant-digit
 * radix sort of (hash, row) pairs on the bucket bits (coalesced passes
 * instead of random atomics and writes); bucket offsets are read off the
 * sorted hashes.  Buckets of more than GH_HG_LIGHT entries are sorted by hash
 * (cuda_segsort.cu) so that a probe finds a key's entries by binary search.
 * See cuda/README, "HashGraph".
 *
 *-------------------------------------------------------------------------
 */
#include <cub/cub.cuh>

#include "cuda_tables.cuh"

/* scratch words used here */
#define SCRATCH_NHEAVY 0

struct max_u32
{
	__device__ __forceinline__ uint32_t
	operator() (uint32_t a, uint32_t b) const
	{
		return a > b ? a : b;
	}
};

int
gh_hg_bits_for(size_t n)
{
	int			bits = 1;

	while (bits < 32 && ((uint64_t) 1 << bits) * GH_HG_KEYS_PER_BUCKET < n)
		bits++;
	return bits;
}

/* keys[i] <- gh_hash64(keys[i], GH_SEED_BUCKET), two keys per 16-byte load. */
__global__ void
hash_keys_in_place(uint64_t *keys, size_t n)
{
	ulonglong2 *pairs = reinterpret_cast<ulonglong2 *>(keys);
	size_t		npairs = n / 2;

	GH_GRID_STRIDE(i, npairs)
	{
		ulonglong2	v = pairs[i];

		v.x = gh_hash64(v.x, GH_SEED_BUCKET);
		v.y = gh_hash64(v.y, GH_SEED_BUCKET);
		pairs[i] = v;
	}
	if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0)
		keys[n - 1] = gh_hash64(keys[n - 1], GH_SEED_BUCKET);
}

/*
 * On bucket-sorted hashes: ends[b] = one past the last entry of bucket b
 * (left 0 for empty buckets), and every heavy bucket listed once.  One
 * entry per thread, every thread of the grid reaching gh_block_append.
 */
__global__ void
mark_bucket_ends(const uint64_t *__restrict__ h, size_t n, uint64_t nbuckets,
				 uint32_t *__restrict__ ends, uint32_t *__restrict__ heavy,
				 unsigned long long *nheavy, size_t heavy_cap)
{
	size_t		i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
	bool		starts_heavy = false;
	uint64_t	b = 0;
	unsigned long long k;

	if (i < n)
	{
		b = gh_range(h[i], nbuckets);
		if (i + 1 == n || gh_range(h[i + 1], nbuckets) != b)
			ends[b] = (uint32_t) (i + 1);
		starts_heavy = (i == 0 || gh_range(h[i - 1], nbuckets) != b) &&
			i + GH_HG_LIGHT < n && gh_range(h[i + GH_HG_LIGHT], nbuckets) == b;
	}
	k = gh_block_append(nheavy, starts_heavy);
	if (starts_heavy && k < heavy_cap)
		heavy[k] = (uint32_t) b;
}

/* The CSR range of each listed heavy bucket. */
__global__ void
heavy_bucket_ranges(const uint32_t *__restrict__ heavy, size_t nheavy,
					const uint32_t *__restrict__ offsets,
					uint32_t *__restrict__ seg_begin,
					uint32_t *__restrict__ seg_end)
{
	GH_GRID_STRIDE(s, nheavy)
	{
		uint32_t	b = heavy[s];

		seg_begin[s] = offsets[b];
		seg_end[s] = offsets[(size_t) b + 1];
	}
}

/* Sort every heavy bucket by hash (see the file header). */
static gh_status
sort_heavy_buckets(const gh_cuda_ctx *ctx, gh_hg_table *t,
				   const gh_dbuf<uint32_t> &heavy, size_t nheavy,
				   gh_dbuf<uint64_t> &alt_h, gh_dbuf<uint64_t> &alt_r)
{
	gh_dbuf<uint32_t> seg_begin,
				seg_end;

	GH_TRY(seg_begin.alloc(ctx, nheavy, "heavy bucket segments"));
	GH_TRY(seg_end.alloc(ctx, nheavy, "heavy bucket segments"));
	heavy_bucket_ranges<<<gh_cuda_grid(nheavy, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
		heavy.p, nheavy, t->offsets.p, seg_begin.p, seg_end.p);
	GH_CUDA_LAUNCHED(ctx->e, "heavy_bucket_ranges");
	/* a bucket's entries agree on the top `bits` bits: sort the rest */
	return gh_sort_segments(ctx, t->hkeys.p, t->rows.p, alt_h.p, alt_r.p, t->n,
							seg_begin.p, seg_end.p, nheavy, 64 - t->bits);
}

gh_status
gh_hg_build(const gh_cuda_ctx *ctx, gh_dbuf<uint64_t> &keys,
			gh_dbuf<uint64_t> &rows, size_t n, gh_hg_table *t)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	gh_dbuf<uint64_t> alt_h,
				alt_r;
	gh_dbuf<uint32_t> heavy;
	gh_dbuf<unsigned char> temp;
	size_t		temp_bytes = 0,
				heavy_cap;
	uint64_t	nheavy;
	unsigned long long *d_nheavy = (unsigned long long *) (ctx->d->scratch + SCRATCH_NHEAVY);

	if (n > GH_CUDA_MAX_PART_ROWS)
		return gh_fail(e, GH_ERR_INVALID,
					   "a device partition of %zu rows is too large (at most %zu)",
					   n, GH_CUDA_MAX_PART_ROWS);
	t->bits = gh_hg_bits_for(n);
	t->nbuckets = (uint64_t) 1 << t->bits;
	t->n = n;
	GH_TRY(t->offsets.alloc(ctx, t->nbuckets + 1, "HashGraph offsets"));
	GH_CUDA_TRY(e, cudaMemsetAsync(t->offsets.p, 0, t->offsets.bytes(), s));
	if (n == 0)
		return GH_OK;

	hash_keys_in_place<<<gh_cuda_grid(n / 2 + 1, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(keys.p, n);
	GH_CUDA_LAUNCHED(e, "hash_keys_in_place");

	/* sort (hash, row) on the bucket bits */
	GH_TRY(alt_h.alloc(ctx, n, "HashGraph sort buffer"));
	GH_TRY(alt_r.alloc(ctx, n, "HashGraph sort buffer"));
	{
		cub::DoubleBuffer<uint64_t> dk(keys.p, alt_h.p);
		cub::DoubleBuffer<uint64_t> dv(rows.p, alt_r.p);

		GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, dk, dv, (int64_t) n,
													   64 - t->bits, 64, s));
		GH_TRY(temp.alloc(ctx, temp_bytes, "radix sort temporary storage"));
		GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(temp.p, temp_bytes, dk, dv, (int64_t) n,
													   64 - t->bits, 64, s));
		if (dk.Current() == keys.p)
			t->hkeys.swap(keys);
		else
			t->hkeys.swap(alt_h);
		if (dv.Current() == rows.p)
			t->rows.swap(rows);
		else
			t->rows.swap(alt_r);
		/* whichever buffers are left over serve the heavy-bucket sort */
		if (alt_h.p == nullptr)
			alt_h.swap(keys);
		if (alt_r.p == nullptr)
			alt_r.swap(rows);
	}
	temp.reset();

	/* offsets: bucket ends, then an exclusive max-scan */
	heavy_cap = n / (GH_HG_LIGHT + 1) + 1;
	GH_TRY(heavy.alloc(ctx, heavy_cap, "heavy bucket list"));
	GH_CUDA_TRY(e, cudaMemsetAsync(d_nheavy, 0, sizeof(uint64_t), s));
	mark_bucket_ends<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
		t->hkeys.p, n, t->nbuckets, t->offsets.p, heavy.p, d_nheavy, heavy_cap);
	GH_CUDA_LAUNCHED(e, "mark_bucket_ends");
	temp_bytes = 0;
	GH_CUDA_TRY(e, cub::DeviceScan::ExclusiveScan(nullptr, temp_bytes, t->offsets.p, t->offsets.p,
												  max_u32(), (uint32_t) 0,
												  (int64_t) (t->nbuckets + 1), s));
	GH_TRY(temp.alloc(ctx, temp_bytes, "scan temporary storage"));
	GH_CUDA_TRY(e, cub::DeviceScan::ExclusiveScan(temp.p, temp_bytes, t->offsets.p, t->offsets.p,
												  max_u32(), (uint32_t) 0,
												  (int64_t) (t->nbuckets + 1), s));
	temp.reset();

	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_NHEAVY, 1, &nheavy));
	if (nheavy > heavy_cap)
		return gh_fail(e, GH_ERR_INTERNAL, "HashGraph build found %llu heavy buckets, at most %zu expected",
					   (unsigned long long) nheavy, heavy_cap);
	if (nheavy > 0)
		GH_TRY(sort_heavy_buckets(ctx, t, heavy, nheavy, alt_h, alt_r));
	return GH_OK;
}

/* ---- probing ---- */

typedef struct hg_match
{
	uint32_t	count;
	uint32_t	first;
} hg_match;

/*
 * The entries equal to h in its bucket: a scan of a light bucket (a few
 * independent 8-byte loads), a binary search of a heavy (sorted) one.
 */
__device__ __forceinline__ hg_match
hg_bucket_match(const gh_hg_view &t, uint64_t h)
{
	uint64_t	b = gh_range(h, t.nbuckets);
	uint32_t	lo = __ldg(&t.offsets[b]),
				hi = __ldg(&t.offsets[b + 1]);
	hg_match	m = {0, lo};

	if (hi - lo <= GH_HG_LIGHT)
	{
		uint32_t	first = hi;

#pragma unroll 4
		for (uint32_t j = lo; j < hi; j++)
			if (__ldg(&t.hkeys[j]) == h)
			{
				first = min(first, j);
				m.count++;
			}
		m.first = first;
	}
	else
	{
		uint32_t	a = lo,
					z = hi;

		while (a < z)
		{
			uint32_t	mid = a + (z - a) / 2;

			if (__ldg(&t.hkeys[mid]) < h)
				a = mid + 1;
			else
				z = mid;
		}
		m.first = a;
		z = hi;
		while (a < z)
		{
			uint32_t	mid = a + (z - a) / 2;

			if (__ldg(&t.hkeys[mid]) <= h)
				a = mid + 1;
			else
				z = mid;
		}
		m.count = a - m.first;
	}
	return m;
}

/* One thread per probe element; src and hk_out may be the same array. */
template <bool HASHED>
__global__ void
hg_count_matches(const uint64_t *src, uint64_t *hk_out, size_t n, gh_hg_view t,
				 uint64_t *__restrict__ counts64, uint32_t *__restrict__ first,
				 uint32_t *__restrict__ counts32)
{
	GH_GRID_STRIDE(i, n)
	{
		uint64_t	h = HASHED ? src[i] : gh_hash64(src[i], GH_SEED_BUCKET);
		hg_match	m;

		if (!HASHED && hk_out != nullptr)
			hk_out[i] = h;
		m = hg_bucket_match(t, h);
		if (counts64 != nullptr)
			counts64[i] = m.count;
		if (first != nullptr)
			first[i] = m.first;
		if (counts32 != nullptr)
			counts32[i] = m.count;
	}
}

gh_status
gh_hg_count(const gh_cuda_ctx *ctx, const gh_hg_table *t, const uint64_t *src,
			bool hashed, uint64_t *hk_out, size_t n, uint64_t *counts64,
			uint32_t *first, uint32_t *counts32)
{
	cudaStream_t s = ctx->d->stream;
	unsigned	grid = gh_cuda_grid(n, GH_CUDA_BLOCK);

	if (n == 0)
		return GH_OK;
	if (hashed)
		hg_count_matches<true><<<grid, GH_CUDA_BLOCK, 0, s>>>(src, nullptr, n, t->view(),
															 counts64, first, counts32);
	else
		hg_count_matches<false><<<grid, GH_CUDA_BLOCK, 0, s>>>(src, hk_out, n, t->view(),
															  counts64, first, counts32);
	GH_CUDA_LAUNCHED(ctx->e, "hg_count_matches");
	return GH_OK;
}
