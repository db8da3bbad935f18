/*-------------------------------------------------------------------------
 *
 * cuda_pages.cu
 *	  The CUDA backend's gh_extract_pages: heap pages read over the bus, one
 *	  thread block per page, their rows compacted on the device.
 *
 * Each block copies its page into shared memory with 16-byte loads (from
 * host memory registered with gh_register_host the loads cross the bus
 * directly; other pages are first gathered into a pinned staging buffer and
 * copied over), then its threads take one line pointer each and write the
 * columns of row slot (page, line pointer) of a sparse layout with a flag.
 * A prefix sum of the flags (CUB) gives every row its place in the dense
 * output, and the pages' first rows; a malformed page clears its flags.
 *
 *-------------------------------------------------------------------------
 */
#include <cstring>

#include <cub/cub.cuh>

#include "cuda_tables.cuh"
#include "heap_page.h"

#define GH_PAGE_THREADS 128

__global__ static void
page_rows_kernel(const uint8_t *base, const uint32_t *ids, size_t npages, gh_pagespec spec,
				 size_t slots, uint64_t *vals, uint8_t *nulls, uint32_t *flags, uint8_t *bad)
{
	extern __shared__ uint4 page_words[];
	__shared__ int page_bad;
	const uint8_t *page = (const uint8_t *) page_words;

	for (size_t p = blockIdx.x; p < npages; p += gridDim.x)
	{
		size_t		slot0 = p * spec.max_tuples;
		int			items;

		gh_cuda_page_load(page_words, base, ids, p, spec.page_size);
		if (threadIdx.x == 0)
			page_bad = 0;
		__syncthreads();
		items = gh_page_items(page, &spec);
		if (items < 0)
		{
			items = 0;
			page_bad = 1;
		}
		for (int i = threadIdx.x; i < (int) spec.max_tuples; i += blockDim.x)
		{
			uint64_t	v[GH_PAGE_MAX_OUT];
			uint8_t		nl[GH_PAGE_MAX_OUT];
			int			r = 0;

			if (i < items)
			{
				r = gh_page_tuple(page, &spec, i, v, nl);
				if (r < 0)
				{
					page_bad = 1;
					r = 0;
				}
				for (int o = 0; r > 0 && o < spec.nout; o++)
				{
					vals[o * slots + slot0 + i] = v[o];
					nulls[o * slots + slot0 + i] = nl[o];
				}
			}
			flags[slot0 + i] = (uint32_t) r;
		}
		__syncthreads();
		if (page_bad)
			for (int i = threadIdx.x; i < (int) spec.max_tuples; i += blockDim.x)
				flags[slot0 + i] = 0;
		if (threadIdx.x == 0)
			bad[p] = (uint8_t) page_bad;
		__syncthreads();		/* before the next page overwrites the copy */
	}
}

/* Rows to their dense places; each page's first row. */
__global__ static void
page_compact_kernel(size_t slots, int nout, uint32_t max_tuples, const uint32_t *flags,
					const uint32_t *pos, const uint64_t *vals, const uint8_t *nulls,
					uint64_t *dvals, uint8_t *dnulls, uint32_t *first)
{
	GH_GRID_STRIDE(i, slots)
	{
		if (i % max_tuples == 0)
			first[i / max_tuples] = pos[i];
		if (flags[i] == 0)
			continue;
		for (int o = 0; o < nout; o++)
		{
			dvals[o * slots + pos[i]] = vals[o * slots + i];
			dnulls[o * slots + pos[i]] = nulls[o * slots + i];
		}
	}
}

/* Gather unregistered pages into the device's pinned staging buffer. */
static gh_status
stage_pages(const gh_cuda_ctx *ctx, const gh_pagespec *spec, const void *base,
			const uint32_t *pages, size_t npages, const uint8_t **staged)
{
	gh_cuda_dev *state = ctx->d;
	size_t		bytes = npages * spec->page_size;

	if (state->page_stage_bytes < bytes)
	{
		if (state->page_stage != nullptr)
		{
			GH_CUDA_TRY(ctx->e, cudaStreamSynchronize(ctx->d->stream));
			GH_CUDA_TRY(ctx->e, cudaFreeHost(state->page_stage));
		}
		state->page_stage = nullptr;
		state->page_stage_bytes = 0;
		GH_CUDA_TRY(ctx->e, cudaMallocHost(&state->page_stage, bytes));
		state->page_stage_bytes = bytes;
	}
	/* the previous call's copy out of the buffer has finished: calls sync */
	for (size_t p = 0; p < npages; p++)
		memcpy((uint8_t *) state->page_stage + p * spec->page_size,
			   (const uint8_t *) base + (size_t) pages[p] * spec->page_size,
			   spec->page_size);
	*staged = (const uint8_t *) state->page_stage;
	return GH_OK;
}

/*
 * Where kernels read npages pages: straight from host memory registered
 * with gh_register_host (page p at src + ids[p] * page_size, read over the
 * bus), or gathered into the pinned staging buffer and copied to the
 * device (page p at src + p * page_size, ids NULL).  The staging buffer is
 * refilled by the next call: callers sync before they return.
 */
gh_status
gh_cuda_page_source(const gh_cuda_ctx *ctx, const gh_pagespec *spec, const void *base,
					const uint32_t *pages, size_t npages, gh_cuda_pages *src,
					gh_dbuf<uint32_t> *kept_ids)
{
	void	   *mapped = nullptr;
	uint32_t	maxid = 0;

	for (size_t p = 0; p < npages; p++)
		maxid = pages[p] > maxid ? pages[p] : maxid;
	if (gh_host_registered(base, ((size_t) maxid + 1) * spec->page_size) &&
		cudaHostGetDevicePointer(&mapped, (void *) base, 0) == cudaSuccess)
	{
		src->src = (const uint8_t *) mapped;
		if (kept_ids != nullptr)
		{
			GH_TRY(gh_cuda_stage_kept(ctx, pages, npages, *kept_ids, "page numbers"));
			src->ids = kept_ids->p;
		}
		else
		{
			GH_TRY(gh_cuda_stage(ctx, pages, npages, src->idbuf, "page numbers"));
			src->ids = src->idbuf.p;
		}
	}
	else
	{
		const uint8_t *staged;

		(void) cudaGetLastError();
		GH_TRY(stage_pages(ctx, spec, base, pages, npages, &staged));
		GH_TRY(gh_cuda_stage(ctx, staged, npages * spec->page_size, src->staged, "pages"));
		src->src = src->staged.p;
		src->ids = nullptr;
	}
	return GH_OK;
}

/*
 * The rows of npages pages in the sparse layout: row slot p * max_tuples +
 * i (line pointer i of page p) holds output column o's value and NULL flag
 * at o * slots + slot, flags[slot] 1 where it is a row; bad[p] 1 for a
 * malformed page (no rows).  For gh_extract_pages and gh_pages_read.
 */
gh_status
gh_cuda_page_slots(const gh_cuda_ctx *ctx, const gh_pagespec *spec, const void *base,
				   const uint32_t *pages, size_t npages, gh_dbuf<uint64_t> &vals,
				   gh_dbuf<uint8_t> &nulls, gh_dbuf<uint32_t> &flags, gh_dbuf<uint8_t> &bad)
{
	gh_engine  *e = ctx->e;
	size_t		slots = npages * spec->max_tuples;
	gh_cuda_pages src;

	GH_TRY(gh_cuda_page_source(ctx, spec, base, pages, npages, &src));
	GH_TRY(flags.alloc(ctx, slots, "page row flags"));
	GH_TRY(vals.alloc(ctx, slots * spec->nout, "page row values"));
	GH_TRY(nulls.alloc(ctx, slots * spec->nout, "page row nulls"));
	GH_TRY(bad.alloc(ctx, npages, "malformed pages"));
	page_rows_kernel<<<gh_cuda_wide_grid(ctx, npages, 1, 16), GH_PAGE_THREADS,
		spec->page_size, ctx->d->stream>>>(src.src, src.ids, npages, *spec, slots, vals.p,
										   nulls.p, flags.p, bad.p);
	GH_CUDA_LAUNCHED(e, "page_rows_kernel");
	/* the staging buffer is refilled by the next call: callers sync before they return */
	return GH_OK;
}

gh_status
gh_cuda_extract_pages(gh_engine *e, const gh_pagespec *spec, const void *base,
					  const uint32_t *pages, size_t npages, gh_pagerows *out)
{
	gh_cuda_ctx ctx;
	size_t		slots = npages * spec->max_tuples;
	gh_dbuf<uint32_t> flags,
				pos,
				first;
	gh_dbuf<uint64_t> vals,
				dvals;
	gh_dbuf<uint8_t> nulls,
				dnulls,
				bad;
	gh_dbuf<uint8_t> temp;
	size_t		temp_bytes = 0;
	uint32_t	last[2];
	int			nout = spec->nout;

	GH_TRY(gh_cuda_enter(e, 0, &ctx));
	GH_TRY(gh_cuda_page_slots(&ctx, spec, base, pages, npages, vals, nulls, flags, bad));
	GH_TRY(pos.alloc(&ctx, slots, "page row places"));
	GH_TRY(first.alloc(&ctx, npages + 1, "page first rows"));
	GH_TRY(dvals.alloc(&ctx, slots * nout, "page rows"));
	GH_TRY(dnulls.alloc(&ctx, slots * nout, "page row nulls"));
	GH_CUDA_TRY(e, cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, flags.p, pos.p,
												 slots, ctx.d->stream));
	GH_TRY(temp.alloc(&ctx, temp_bytes, "page row scan"));
	GH_CUDA_TRY(e, cub::DeviceScan::ExclusiveSum(temp.p, temp_bytes, flags.p, pos.p,
												 slots, ctx.d->stream));
	page_compact_kernel<<<gh_cuda_wide_grid(&ctx, slots, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0,
		ctx.d->stream>>>(slots, nout, spec->max_tuples, flags.p, pos.p, vals.p, nulls.p,
						 dvals.p, dnulls.p, first.p);
	GH_CUDA_LAUNCHED(e, "page_compact_kernel");
	GH_CUDA_TRY(e, cudaMemcpyAsync(&last[0], pos.p + slots - 1, sizeof(uint32_t),
								   cudaMemcpyDeviceToHost, ctx.d->stream));
	GH_CUDA_TRY(e, cudaMemcpyAsync(&last[1], flags.p + slots - 1, sizeof(uint32_t),
								   cudaMemcpyDeviceToHost, ctx.d->stream));
	GH_TRY(gh_cuda_sync(&ctx));
	out->nrows = (size_t) last[0] + last[1];
	for (int o = 0; o < nout; o++)
	{
		GH_CUDA_TRY(e, cudaMemcpyAsync(out->values[o], dvals.p + o * slots,
									   out->nrows * sizeof(uint64_t),
									   cudaMemcpyDeviceToHost, ctx.d->stream));
		GH_CUDA_TRY(e, cudaMemcpyAsync(out->nulls[o], dnulls.p + o * slots, out->nrows,
									   cudaMemcpyDeviceToHost, ctx.d->stream));
	}
	GH_CUDA_TRY(e, cudaMemcpyAsync(out->first, first.p, npages * sizeof(uint32_t),
								   cudaMemcpyDeviceToHost, ctx.d->stream));
	GH_CUDA_TRY(e, cudaMemcpyAsync(out->bad, bad.p, npages, cudaMemcpyDeviceToHost,
								   ctx.d->stream));
	GH_TRY(gh_cuda_sync(&ctx));
	out->first[npages] = (uint32_t) out->nrows;
	return GH_OK;
}

gh_status
gh_cuda_register_host(gh_engine *e, void *base, size_t bytes)
{
	gh_cuda_ctx ctx;
	cudaError_t err;

	GH_TRY(gh_cuda_enter(e, 0, &ctx));
	err = cudaHostRegister(base, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped);
	if (err == cudaErrorHostMemoryAlreadyRegistered)
	{
		(void) cudaGetLastError();
		return GH_OK;
	}
	GH_CUDA_TRY(e, err);
	return GH_OK;
}

/*
 * A temporary pin (gh_pin_host): best effort, so a refusal is cleared from
 * the runtime's last error and not reported to the engine.
 */
bool
gh_cuda_pin_host(gh_engine *e, void *base, size_t bytes)
{
	gh_cuda_state *state = (gh_cuda_state *) e->bstate;
	cudaError_t err;

	if (state == nullptr || state->ndev < 1 || cudaSetDevice(state->dev[0].id) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;
	}
	err = cudaHostRegister(base, bytes, cudaHostRegisterPortable);
	(void) cudaGetLastError();
	return err == cudaSuccess;
}

void
gh_cuda_unpin_host(gh_engine *e, void *base)
{
	gh_cuda_state *state = (gh_cuda_state *) e->bstate;

	if (state != nullptr && state->ndev > 0)
		(void) cudaSetDevice(state->dev[0].id);
	(void) cudaHostUnregister(base);
	(void) cudaGetLastError();
}

extern "C" const char *
gh_cuda_register_range(void *base, size_t bytes)
{
	int			n = 0;
	cudaError_t err;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
	{
		(void) cudaGetLastError();
		return "no CUDA device";
	}
	err = cudaSetDevice(0);
	if (err == cudaSuccess)
		err = cudaHostRegister(base, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped);
	if (err == cudaErrorHostMemoryAlreadyRegistered)
		err = cudaSuccess;
	(void) cudaGetLastError();
	return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

extern "C" void
gh_cuda_unregister_range(void *base)
{
	(void) cudaHostUnregister(base);
	(void) cudaGetLastError();
}
