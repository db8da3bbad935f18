/*-------------------------------------------------------------------------
 *
 * cuda_darray.cu
 *	  Device arrays (engine_darray.c) on the CUDA backend: memory on one of
 *	  the engine's devices that outlives operations (the page cache's chunks
 *	  on every device, the arrays on the first), and copies into, out of and
 *	  within the first's.
 *
 * The memory comes from the device's stream-ordered pool like every other
 * allocation of the engine, and is accounted the same way; copies run on
 * the device's stream and are waited for, so that the caller may reuse or
 * free the host memory it appended from as soon as the append returns.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_common.cuh"
#include "cuda_tables.cuh"

gh_status
gh_cuda_darray_alloc(gh_engine *e, int dev, void **p, size_t bytes)
{
	gh_cuda_ctx ctx;

	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	return gh_cuda_alloc(&ctx, p, bytes, "a device array");
}

void
gh_cuda_darray_free(gh_engine *e, int dev, void *p, size_t bytes)
{
	gh_cuda_ctx ctx;

	if (gh_cuda_enter(e, dev, &ctx) == GH_OK)
		gh_cuda_free(&ctx, p, bytes);
	(void) cudaGetLastError();
}

gh_status
gh_cuda_darray_copy(gh_engine *e, void *dst, const void *src, size_t bytes)
{
	gh_cuda_ctx ctx;

	GH_TRY(gh_cuda_enter(e, 0, &ctx));
	if (src == nullptr)
		GH_CUDA_TRY(e, cudaMemsetAsync(dst, 0, bytes, ctx.d->stream));
	else
		GH_CUDA_TRY(e, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, ctx.d->stream));
	return gh_cuda_sync(&ctx);
}
