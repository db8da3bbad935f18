/*-------------------------------------------------------------------------
 *
 * cuda_agg_estimate.cu
 *	  An estimate of the number of distinct keys in a device array, which
 *	  sizes the GPU's table of groups and chooses how to fill it.
 *
 * INTERFACE ROUTINES
 *		gh_cuda_estimate_distinct	HyperLogLog estimate of distinct keys
 *
 * HyperLogLog (Flajolet et al., 2007) with 2^12 registers: the top 12 bits
 * of a key's hash pick a register, which keeps the largest count of leading
 * zeros (plus one) of the remaining bits it has seen.  Its standard error
 * is 1.04 / 64, about 1.6%; equal keys set the same register to the same
 * value, so the estimate does not depend on how often a key repeats or on
 * where in the array its rows are (a sample would miss groups that only a
 * few rows have).  One pass reads the keys once, 8 bytes a row, with the
 * registers of each block in shared memory.
 *
 *-------------------------------------------------------------------------
 */
#include <cmath>

#include "cuda_agg.cuh"

#define HLL_BITS GH_HLL_BITS
#define HLL_REGS (1 << HLL_BITS)

/* Below this many keys no estimate is made: every size is cheap. */
#define ESTIMATE_MIN_KEYS 65536

__global__ void
hll_registers(const uint64_t *__restrict__ keys, size_t n, unsigned *__restrict__ regs)
{
	__shared__ unsigned r[HLL_REGS];

	for (int j = threadIdx.x; j < HLL_REGS; j += blockDim.x)
		r[j] = 0;
	__syncthreads();
	GH_GRID_STRIDE(i, n)
	{
		uint64_t	h = gh_hash64(keys[i], GH_SEED_COUNT);
		unsigned	j = (unsigned) (h >> (64 - HLL_BITS));
		unsigned	rank = __clzll((h << HLL_BITS) | (1ULL << (HLL_BITS - 1))) + 1;

		/* most rows find their register already as high: no atomic */
		if (r[j] < rank)
			atomicMax(&r[j], rank);
	}
	__syncthreads();
	for (int j = threadIdx.x; j < HLL_REGS; j += blockDim.x)
		if (r[j] != 0)
			atomicMax(&regs[j], r[j]);
}

gh_status
gh_cuda_estimate_distinct(const gh_cuda_ctx *ctx, const uint64_t *keys, size_t n,
						  double *estimate)
{
	cudaStream_t s = ctx->d->stream;
	gh_dbuf<unsigned> regs;
	unsigned	host[HLL_REGS];

	*estimate = (double) n;
	if (n < ESTIMATE_MIN_KEYS)
		return GH_OK;
	GH_TRY(regs.alloc(ctx, HLL_REGS, "distinct-key estimate"));
	GH_CUDA_TRY(ctx->e, cudaMemsetAsync(regs.p, 0, regs.bytes(), s));
	hll_registers<<<gh_cuda_wide_grid(ctx, n, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0, s>>>(
		keys, n, regs.p);
	GH_CUDA_LAUNCHED(ctx->e, "hll_registers");
	GH_TRY(gh_cuda_copy_to_host(ctx, host, regs.p, sizeof(host)));
	*estimate = gh_hll_estimate(host, HLL_REGS, n);
	return GH_OK;
}

/*
 * The estimate for keys device dev reads in place (its own memory, or host
 * memory registered with CUDA); false for keys it would have to copy first.
 */
bool
gh_cuda_estimate_keys(gh_engine *e, int dev, const uint64_t *keys, size_t n, double *estimate)
{
	cudaPointerAttributes attr;
	const uint64_t *at = nullptr;
	gh_cuda_ctx ctx;

	if (gh_cuda_enter(e, dev, &ctx) != GH_OK)
		return false;
	if (cudaPointerGetAttributes(&attr, keys) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;
	}
	if ((attr.type == cudaMemoryTypeDevice && attr.device == ctx.d->id) ||
		attr.type == cudaMemoryTypeHost || attr.type == cudaMemoryTypeManaged)
		at = (const uint64_t *) attr.devicePointer;
	return at != nullptr &&
		gh_cuda_estimate_distinct(&ctx, at, n, estimate) == GH_OK &&
		gh_cuda_sync(&ctx) == GH_OK;
}
