/*-------------------------------------------------------------------------
 *
 * cuda_segsort.cu
 *	  Sorting chosen segments of a (hash, row) array pair in place.
 *
 * Both tables sort their input on the top bits of a hash only (a few radix
 * passes) and then need some segments sorted on all bits: HashGraph its
 * heavy buckets, the BCHT the groups in which different keys share the top
 * bits.  Most such segments are short and sorted together by CUB's
 * DeviceSegmentedSort, which sorts each small segment within a warp or a
 * block.  It gives a long segment one block, which would serialise a
 * segment of millions of rows (one key repeated that often, plus any other
 * key in the same bucket), so segments of at least GH_SEGSORT_BIG rows are
 * split off and sorted one by one with device-wide radix sorts instead.
 * There are at most n / GH_SEGSORT_BIG of those.
 *
 *-------------------------------------------------------------------------
 */
#include <vector>

#include <cub/cub.cuh>

#include "cuda_tables.cuh"

/* Segments at least this long are sorted with a device-wide sort each. */
#define GH_SEGSORT_BIG ((uint32_t) 1 << 18)

/* scratch words used here */
#define SCRATCH_NBIG 3

/* List the long segments in big[] (begin, end pairs) and empty them. */
__global__ void
split_long_segments(uint32_t *__restrict__ seg_begin, uint32_t *__restrict__ seg_end,
					size_t nseg, uint32_t *__restrict__ big,
					unsigned long long *nbig, size_t big_cap)
{
	GH_GRID_STRIDE(s, nseg)
	{
		uint32_t	lo = seg_begin[s],
					hi = seg_end[s];

		if (hi - lo >= GH_SEGSORT_BIG)
		{
			unsigned long long k = atomicAdd(nbig, 1ULL);

			if (k < big_cap)
			{
				big[2 * k] = lo;
				big[2 * k + 1] = hi;
			}
			seg_end[s] = lo;
		}
	}
}

/* Copy the segments' entries from one pair of arrays to another. */
__global__ void
copy_segments(const uint32_t *__restrict__ seg_begin,
			  const uint32_t *__restrict__ seg_end, size_t nseg,
			  const uint64_t *__restrict__ from_k,
			  const uint64_t *__restrict__ from_v, uint64_t *__restrict__ to_k,
			  uint64_t *__restrict__ to_v)
{
	for (size_t s = blockIdx.x; s < nseg; s += gridDim.x)
		for (size_t j = seg_begin[s] + threadIdx.x; j < seg_end[s]; j += blockDim.x)
		{
			to_k[j] = from_k[j];
			to_v[j] = from_v[j];
		}
}

gh_status
gh_sort_segments(const gh_cuda_ctx *ctx, uint64_t *keys, uint64_t *vals,
				 uint64_t *alt_k, uint64_t *alt_v, size_t n,
				 uint32_t *seg_begin, uint32_t *seg_end, size_t nseg,
				 int end_bit)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	size_t		big_cap = n / GH_SEGSORT_BIG + 1;
	gh_dbuf<uint32_t> big;
	gh_dbuf<unsigned char> temp;
	size_t		temp_bytes = 0;
	uint64_t	nbig;
	unsigned long long *d_nbig = (unsigned long long *) (ctx->d->scratch + SCRATCH_NBIG);

	if (nseg == 0)
		return GH_OK;
	GH_TRY(big.alloc(ctx, 2 * big_cap, "long segment list"));
	GH_CUDA_TRY(e, cudaMemsetAsync(d_nbig, 0, sizeof(uint64_t), s));
	split_long_segments<<<gh_cuda_grid(nseg, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
		seg_begin, seg_end, nseg, big.p, d_nbig, big_cap);
	GH_CUDA_LAUNCHED(e, "split_long_segments");

	{
		cub::DoubleBuffer<uint64_t> dk(keys, alt_k);
		cub::DoubleBuffer<uint64_t> dv(vals, alt_v);

		GH_CUDA_TRY(e, cub::DeviceSegmentedSort::SortPairs(nullptr, temp_bytes, dk, dv,
														   (int64_t) n, (int64_t) nseg,
														   seg_begin, seg_end, s));
		GH_TRY(temp.alloc(ctx, temp_bytes, "segmented sort temporary storage"));
		GH_CUDA_TRY(e, cub::DeviceSegmentedSort::SortPairs(temp.p, temp_bytes, dk, dv,
														   (int64_t) n, (int64_t) nseg,
														   seg_begin, seg_end, s));
		if (dk.Current() != keys || dv.Current() != vals)
		{
			copy_segments<<<gh_cuda_wide_grid(ctx, nseg, 1, 8), GH_CUDA_BLOCK, 0, s>>>(
				seg_begin, seg_end, nseg, dk.Current(), dv.Current(), keys, vals);
			GH_CUDA_LAUNCHED(e, "copy_segments");
		}
	}
	temp.reset();

	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_NBIG, 1, &nbig));
	if (nbig > big_cap)
		return gh_fail(e, GH_ERR_INTERNAL, "%llu long segments listed, at most %zu expected",
					   (unsigned long long) nbig, big_cap);
	if (nbig > 0)
	{
		std::vector<uint32_t> ranges;

		try
		{
			ranges.resize(2 * nbig);
		}
		catch (...)
		{
			return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory listing long segments");
		}
		GH_CUDA_TRY(e, cudaMemcpyAsync(ranges.data(), big.p, 2 * nbig * sizeof(uint32_t),
									   cudaMemcpyDeviceToHost, s));
		GH_CUDA_TRY(e, cudaStreamSynchronize(s));
		for (uint64_t k = 0; k < nbig; k++)
		{
			uint32_t	lo = ranges[2 * k],
						len = ranges[2 * k + 1] - lo;
			cub::DoubleBuffer<uint64_t> dk(keys + lo, alt_k + lo);
			cub::DoubleBuffer<uint64_t> dv(vals + lo, alt_v + lo);
			size_t		need = 0;

			GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(nullptr, need, dk, dv, (int64_t) len,
														   0, end_bit, s));
			if (need > temp.count)
				GH_TRY(temp.alloc(ctx, need, "radix sort temporary storage"));
			GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(temp.p, need, dk, dv, (int64_t) len,
														   0, end_bit, s));
			if (dk.Current() != keys + lo)
				GH_CUDA_TRY(e, cudaMemcpyAsync(keys + lo, dk.Current(), len * sizeof(uint64_t),
											   cudaMemcpyDeviceToDevice, s));
			if (dv.Current() != vals + lo)
				GH_CUDA_TRY(e, cudaMemcpyAsync(vals + lo, dv.Current(), len * sizeof(uint64_t),
											   cudaMemcpyDeviceToDevice, s));
		}
	}
	return GH_OK;
}
