/*-------------------------------------------------------------------------
 *
 * cuda_pagebatch.cu
 *	  The CUDA backend's gh_pages_read and gh_pagebatch_keep: heap page rows
 *	  encoded as a pool keeps them, on the device, and the rows of the pages
 *	  the caller still trusts grouped by NULL pattern.
 *
 * The pages are read as gh_extract_pages reads them, into the sparse
 * layout of cuda_pages.cu (a slot per page and line pointer).  An encoding
 * kernel gives every slot its key, its aggregate values and NULL flags,
 * and a sort key: its NULL pattern, or 256 for a slot that holds no row.
 * Keeping sets the sort key of the dropped pages' slots to 256 too, sorts
 * the slot numbers by sort key (a stable CUB radix sort of 9 bits: page
 * and line pointer order within a pattern), counts the patterns (CUB
 * histogram), and gathers the kept rows into arrays of their own, which
 * gh_pagebatch_append copies from.
 *
 *-------------------------------------------------------------------------
 */
#include <new>

#include <cub/cub.cuh>

#include "cuda_tables.cuh"
#include "heap_page.h"

#define NOT_KEPT 256

/* What gh_pages_read leaves for gh_pagebatch_keep. */
struct cuda_batch
{
	size_t		slots;
	gh_dbuf<uint16_t> skey;		/* NULL pattern, or NOT_KEPT */
	gh_dbuf<uint64_t> key;
	gh_dbuf<uint64_t> jkey;		/* with join keys */
	gh_dbuf<uint64_t> vals;		/* value column v at v * slots */
	gh_dbuf<uint8_t> nulls;
};

__global__ static void
page_encode_kernel(size_t slots, gh_pageenc enc, int nout, const uint32_t *flags,
				   const uint64_t *raw, const uint8_t *rawnulls, uint16_t *skey, uint64_t *key,
				   uint64_t *jkey, uint64_t *vals, uint8_t *nulls, unsigned int *nullmask)
{
	unsigned int mask = 0;

	GH_GRID_STRIDE(i, slots)
	{
		uint64_t	v[GH_PAGE_MAX_OUT];
		uint8_t		nl[GH_PAGE_MAX_OUT];
		uint8_t		pattern;

		if (flags[i] == 0)
		{
			skey[i] = NOT_KEPT;
			continue;
		}
		for (int o = 0; o < nout; o++)
		{
			v[o] = raw[o * slots + i];
			nl[o] = rawnulls[o * slots + i];
		}
		if (jkey != nullptr && !gh_page_jkey(&enc, v, nl, &jkey[i]))
		{
			skey[i] = NOT_KEPT;	/* joins nothing */
			continue;
		}
		key[i] = gh_page_key(&enc, v, nl, &pattern);
		skey[i] = pattern;
		for (int c = 0; c < enc.nvals; c++)
		{
			uint8_t		isnull;

			vals[c * slots + i] = gh_page_value(&enc.val[c], v, nl, &isnull);
			nulls[c * slots + i] = isnull;
			if (isnull)
				mask |= 1u << c;
		}
	}
	if (mask != 0)
		atomicOr(nullmask, mask);
}

gh_status
gh_cuda_pages_read(gh_engine *e, const void *base, const uint32_t *pages, gh_pagebatch *b)
{
	gh_cuda_ctx ctx;
	const gh_pagespec *spec = &b->spec;
	size_t		slots = b->npages * spec->max_tuples;
	int			nvals = b->enc.nvals;
	gh_dbuf<uint64_t> raw;
	gh_dbuf<uint8_t> rawnulls,
				bad;
	gh_dbuf<uint32_t> flags;
	gh_dbuf<unsigned int> nullmask;
	unsigned int mask = 0;
	cuda_batch *cb;

	GH_TRY(gh_cuda_enter(e, 0, &ctx));
	cb = new (std::nothrow) cuda_batch;
	if (cb == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a page batch");
	b->bstate = cb;
	cb->slots = slots;
	GH_TRY(gh_cuda_page_slots(&ctx, spec, base, pages, b->npages, raw, rawnulls, flags, bad));
	GH_TRY(cb->skey.alloc(&ctx, slots, "page row patterns"));
	GH_TRY(cb->key.alloc(&ctx, slots, "page row keys"));
	if (b->enc.njkeys > 0)
		GH_TRY(cb->jkey.alloc(&ctx, slots, "page row join keys"));
	GH_TRY(cb->vals.alloc(&ctx, slots * (nvals > 0 ? nvals : 1), "page row aggregate values"));
	GH_TRY(cb->nulls.alloc(&ctx, slots * (nvals > 0 ? nvals : 1), "page row aggregate nulls"));
	GH_TRY(nullmask.alloc(&ctx, 1, "page row null mask"));
	GH_CUDA_TRY(e, cudaMemsetAsync(nullmask.p, 0, sizeof(unsigned int), ctx.d->stream));
	page_encode_kernel<<<gh_cuda_wide_grid(&ctx, slots, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0,
		ctx.d->stream>>>(slots, b->enc, spec->nout, flags.p, raw.p, rawnulls.p, cb->skey.p,
						 cb->key.p, cb->jkey.p, cb->vals.p, cb->nulls.p, nullmask.p);
	GH_CUDA_LAUNCHED(e, "page_encode_kernel");
	GH_CUDA_TRY(e, cudaMemcpyAsync(b->bad, bad.p, b->npages, cudaMemcpyDeviceToHost,
								   ctx.d->stream));
	GH_CUDA_TRY(e, cudaMemcpyAsync(&mask, nullmask.p, sizeof(mask), cudaMemcpyDeviceToHost,
								   ctx.d->stream));
	GH_TRY(gh_cuda_sync(&ctx));
	for (int c = 0; c < nvals; c++)
		b->has_nulls[c] = (mask >> c) & 1;
	return GH_OK;
}

/* the slots of dropped pages hold no row to keep */
__global__ static void
page_drop_kernel(size_t slots, uint32_t max_tuples, const uint8_t *drop, uint16_t *skey)
{
	GH_GRID_STRIDE(i, slots)
		if (drop[i / max_tuples])
			skey[i] = NOT_KEPT;
}

__global__ static void
slot_numbers_kernel(size_t slots, uint32_t *idx)
{
	GH_GRID_STRIDE(i, slots)
		idx[i] = (uint32_t) i;
}

__global__ static void
page_gather_kernel(size_t n, size_t slots, int nvals, const uint32_t *idx, const uint64_t *key,
				   const uint64_t *jkey, const uint64_t *vals, const uint8_t *nulls,
				   uint64_t *okey, uint64_t *ojkey, uint64_t *ovals, uint8_t *onulls)
{
	GH_GRID_STRIDE(i, n)
	{
		uint32_t	s = idx[i];

		okey[i] = key[s];
		if (ojkey != nullptr)
			ojkey[i] = jkey[s];
		for (int c = 0; c < nvals; c++)
		{
			ovals[c * n + i] = vals[c * slots + s];
			onulls[c * n + i] = nulls[c * slots + s];
		}
	}
}

gh_status
gh_cuda_pages_keep(gh_pagebatch *b, const uint8_t *drop)
{
	gh_engine  *e = b->e;
	cuda_batch *cb = (cuda_batch *) b->bstate;
	size_t		slots = cb->slots;
	int			nvals = b->enc.nvals;
	gh_cuda_ctx ctx;
	gh_dbuf<uint8_t> ddrop,
				temp;
	gh_dbuf<uint16_t> sorted;
	gh_dbuf<uint32_t> idx,
				idx_sorted;
	gh_dbuf<int> hist;
	size_t		sort_bytes = 0,
				hist_bytes = 0;
	int			counts[NOT_KEPT + 1];
	size_t		n = 0;
	unsigned	grid;

	GH_TRY(gh_cuda_enter(e, 0, &ctx));
	grid = gh_cuda_wide_grid(&ctx, slots, GH_CUDA_BLOCK, 8);
	if (drop != nullptr)
	{
		GH_TRY(gh_cuda_stage(&ctx, drop, b->npages, ddrop, "dropped pages"));
		page_drop_kernel<<<grid, GH_CUDA_BLOCK, 0, ctx.d->stream>>>(slots, b->spec.max_tuples,
																	ddrop.p, cb->skey.p);
		GH_CUDA_LAUNCHED(e, "page_drop_kernel");
	}
	GH_TRY(idx.alloc(&ctx, slots, "page row numbers"));
	GH_TRY(idx_sorted.alloc(&ctx, slots, "page row numbers sorted"));
	GH_TRY(sorted.alloc(&ctx, slots, "page row patterns sorted"));
	GH_TRY(hist.alloc(&ctx, NOT_KEPT + 1, "page row pattern counts"));
	slot_numbers_kernel<<<grid, GH_CUDA_BLOCK, 0, ctx.d->stream>>>(slots, idx.p);
	GH_CUDA_LAUNCHED(e, "slot_numbers_kernel");
	GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, cb->skey.p, sorted.p,
												   idx.p, idx_sorted.p, slots, 0, 9,
												   ctx.d->stream));
	GH_CUDA_TRY(e, cub::DeviceHistogram::HistogramEven(nullptr, hist_bytes, sorted.p, hist.p,
													   NOT_KEPT + 2, 0, NOT_KEPT + 1,
													   (int) slots, ctx.d->stream));
	GH_TRY(temp.alloc(&ctx, sort_bytes > hist_bytes ? sort_bytes : hist_bytes,
					  "page row sort"));
	GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(temp.p, sort_bytes, cb->skey.p, sorted.p,
												   idx.p, idx_sorted.p, slots, 0, 9,
												   ctx.d->stream));
	GH_CUDA_TRY(e, cub::DeviceHistogram::HistogramEven(temp.p, hist_bytes, sorted.p, hist.p,
													   NOT_KEPT + 2, 0, NOT_KEPT + 1,
													   (int) slots, ctx.d->stream));
	GH_CUDA_TRY(e, cudaMemcpyAsync(counts, hist.p, sizeof(counts), cudaMemcpyDeviceToHost,
								   ctx.d->stream));
	GH_TRY(gh_cuda_sync(&ctx));
	for (int p = 0; p < NOT_KEPT; p++)
	{
		b->count[p] = (uint64_t) counts[p];
		n += (size_t) counts[p];
	}
	b->nkept = n;
	if (n > 0)
	{
		GH_TRY(gh_cuda_darray_alloc(e, 0, (void **) &b->keys, 8 * n));
		if (b->enc.njkeys > 0)
			GH_TRY(gh_cuda_darray_alloc(e, 0, (void **) &b->jkeys, 8 * n));
		if (nvals > 0)
		{
			GH_TRY(gh_cuda_darray_alloc(e, 0, (void **) &b->vals, 8 * n * nvals));
			GH_TRY(gh_cuda_darray_alloc(e, 0, (void **) &b->nulls, n * nvals));
		}
		page_gather_kernel<<<gh_cuda_wide_grid(&ctx, n, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0,
			ctx.d->stream>>>(n, slots, nvals, idx_sorted.p, cb->key.p, cb->jkey.p, cb->vals.p,
							 cb->nulls.p, b->keys, b->jkeys, b->vals, b->nulls);
		GH_CUDA_LAUNCHED(e, "page_gather_kernel");
		GH_TRY(gh_cuda_sync(&ctx));
	}
	gh_cuda_pages_free(b);
	return GH_OK;
}

void
gh_cuda_pages_free(gh_pagebatch *b)
{
	delete (cuda_batch *) b->bstate;
	b->bstate = nullptr;
}
