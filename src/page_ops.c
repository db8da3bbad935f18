/*-------------------------------------------------------------------------
 *
 * page_ops.c
 *	  Page extraction in the GPU service or the backend, and pages read
 *	  into a pool by the service (page_ops.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "gpuhash.h"
#include "page_ops.h"
#include "service.h"

/*
 * The xmin of an MVCC snapshot, against which the engine judges the tuples
 * of pages that are not all-visible by their hint bits (gh_tuple_visibility),
 * or 0: only all-visible pages are read there.  An MVCC snapshot's xmin
 * precedes every transaction it may see as in progress, so a tuple whose
 * inserter (or deleter) committed before it is visible (or not) whatever
 * else the snapshot holds.  Not in recovery, where hint bits and
 * PD_ALL_VISIBLE are not to be trusted.
 */
uint32
gpuhash_vis_horizon(Snapshot snapshot)
{
	if (snapshot == NULL || !IsMVCCSnapshot(snapshot) || snapshot->takenDuringRecovery ||
		!TransactionIdIsNormal(snapshot->xmin))
		return 0;
	return snapshot->xmin;
}

GhOpPages *
gpuhash_op_pages_begin(GhOps *ops, const gh_pagespec *spec, size_t max_pages,
					   MemoryContext cxt)
{
	GhOpPages  *pp = MemoryContextAllocZero(cxt, sizeof(GhOpPages));
	size_t		cap = max_pages * spec->max_tuples;
	Size		size = GHS_ALIGN(sizeof(GhsPages));
	Size		pages = ghs_reserve(&size, sizeof(uint32) * max_pages, true);
	Size		first = ghs_reserve(&size, sizeof(uint32) * (max_pages + 1), true);
	Size		bad = ghs_reserve(&size, max_pages, true);
	Size		values[GH_PAGE_MAX_OUT];
	Size		nulls[GH_PAGE_MAX_OUT];

	pp->ops = ops;
	pp->spec = *spec;
	pp->max_pages = max_pages;
	pp->rows.cap = cap;
	for (int o = 0; o < spec->nout; o++)
	{
		values[o] = ghs_reserve(&size, sizeof(uint64) * cap, true);
		nulls[o] = ghs_reserve(&size, cap, true);
	}
	if (ops->service && gpuhash_service_has_room(size))
	{
		char	   *base;
		GhsPages   *hdr;

		pp->seg = dsm_create(size, 0);
		base = dsm_segment_address(pp->seg);
		hdr = (GhsPages *) base;
		memset(hdr, 0, sizeof(GhsPages));
		hdr->spec = *spec;
		hdr->cap = cap;
		hdr->pages = pages;
		hdr->first = first;
		hdr->bad = bad;
		pp->pages = ghs_at(base, pages);
		pp->rows.first = ghs_at(base, first);
		pp->rows.bad = ghs_at(base, bad);
		for (int o = 0; o < spec->nout; o++)
		{
			hdr->values[o] = values[o];
			hdr->nulls[o] = nulls[o];
			pp->rows.values[o] = ghs_at(base, values[o]);
			pp->rows.nulls[o] = ghs_at(base, nulls[o]);
		}
	}
	else
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		pp->pages = palloc(sizeof(uint32) * max_pages);
		pp->rows.first = palloc(sizeof(uint32) * (max_pages + 1));
		pp->rows.bad = palloc(max_pages);
		for (int o = 0; o < spec->nout; o++)
		{
			pp->rows.values[o] = palloc_extended(sizeof(uint64) * cap, MCXT_ALLOC_HUGE);
			pp->rows.nulls[o] = palloc_extended(cap, MCXT_ALLOC_HUGE);
		}
		MemoryContextSwitchTo(old);
	}
	return pp;
}

void
gpuhash_op_pages_extract(GhOpPages *pp, size_t npages)
{
	GhOps	   *ops = pp->ops;
	gh_engine  *e;

	Assert(npages <= pp->max_pages);
	if (pp->seg && !ops->fallback)
	{
		GhsPages   *hdr = dsm_segment_address(pp->seg);
		GhsCall		call;

		hdr->npages = npages;
		gpuhash_ops_init_call(&call, GHS_OP_EXTRACT_PAGES, -1, 0);
		call.data = dsm_segment_handle(pp->seg);
		if (gpuhash_ops_service_ok(ops, &call))
		{
			pp->rows.nrows = (size_t) call.result[0];
			ops->stat_pages += npages;
			return;
		}
	}
	else if (!ops->fallback && (e = gpuhash_ops_device_engine(ops)) != NULL &&
			 gpuhash_ops_device_ok(ops, gh_extract_pages(e, &pp->spec, BufferBlocks, pp->pages,
														 npages, &pp->rows)))
	{
		ops->stat_pages += npages;
		return;
	}
	/* the pages are still pinned: the CPU backend reads them in place */
	e = gpuhash_ops_cpu_engine(ops);
	gpuhash_ops_cpu_check(ops, gh_extract_pages(e, &pp->spec, BufferBlocks, pp->pages, npages,
												&pp->rows));
}

void
gpuhash_op_pages_end(GhOpPages *pp)
{
	if (pp->seg)
		dsm_detach(pp->seg);
	pp->seg = NULL;
}

GhOpPoolPages *
gpuhash_op_pool_pages_begin(GhOps *ops, const GhOpPool *pool, const gh_pagespec *spec,
							const GhPoolFeed *feed, size_t max_pages, MemoryContext cxt)
{
	GhOpPoolPages *pp;
	Size		size = GHS_ALIGN(sizeof(GhsPoolPages));
	Size		pages = ghs_reserve(&size, sizeof(uint32) * max_pages, true);
	Size		lsns = ghs_reserve(&size, sizeof(uint64) * max_pages, true);
	Size		dropped = ghs_reserve(&size, max_pages, true);
	char	   *base;
	GhsPoolPages *hdr;

	if (!ops->service || feed->ncols > GH_PAGE_MAX_VALS || feed->enc.nvals > feed->ncols)
		return NULL;
	pp = MemoryContextAllocZero(cxt, sizeof(GhOpPoolPages));
	pp->ops = ops;
	pp->pool = *pool;
	pp->max_pages = max_pages;
	pp->seg = dsm_create(size, 0);
	base = dsm_segment_address(pp->seg);
	hdr = (GhsPoolPages *) base;
	memset(hdr, 0, sizeof(GhsPoolPages));
	hdr->spec = *spec;
	hdr->enc = feed->enc;
	hdr->side = feed->side;
	hdr->keyed = feed->keyed;
	memcpy(hdr->val_col, feed->val_col, sizeof(hdr->val_col));
	hdr->ncols = feed->ncols;
	for (int c = 0; c < feed->ncols; c++)
	{
		hdr->cols[c].type = feed->cols[c].type;
		hdr->cols[c].ops = feed->cols[c].ops;
		hdr->cols[c].inner = feed->col_inner && feed->col_inner[c];
	}
	hdr->pages = pages;
	hdr->lsns = lsns;
	hdr->dropped = dropped;
	pp->pages = ghs_at(base, pages);
	pp->lsns = ghs_at(base, lsns);
	pp->dropped = ghs_at(base, dropped);
	return pp;
}

uint64
gpuhash_op_pool_pages(GhOpPoolPages *pp, size_t npages)
{
	GhsPoolPages *hdr = dsm_segment_address(pp->seg);
	GhsCall		call;

	Assert(npages <= pp->max_pages);
	hdr->npages = npages;
	gpuhash_ops_init_call(&call, GHS_OP_POOL_PAGES, pp->pool.worker, pp->pool.id);
	call.data = dsm_segment_handle(pp->seg);
	gpuhash_ops_service_call(pp->ops, &call);
	pp->fell_back |= call.fell_back;
	if (!call.fell_back)
		pp->ops->stat_pages += npages;
	pp->ops->stat_pooled = true;
	return call.result[0];
}

void
gpuhash_op_pool_pages_end(GhOpPoolPages *pp)
{
	if (pp->seg)
		dsm_detach(pp->seg);
	pp->seg = NULL;
}

/* Start loading what gpuhash_buffer_unchanged(id, ...) reads into the CPU's caches. */
void
gpuhash_buffer_prefetch(uint32 id)
{
	if (id >= (uint32) NBuffers)
		return;
	__builtin_prefetch(GetBufferDescriptor(id));
	__builtin_prefetch(BufferGetPage((Buffer) (id + 1)));
}

/*
 * Has shared buffer id stayed as its pinner saw it (all-visible, LSN lsn)
 * since?  Checked under the buffer's content lock (gpuhash_page_unchanged);
 * the caller, or the client it serves, holds the pin.
 */
bool
gpuhash_buffer_unchanged(uint32 id, uint64 lsn)
{
	BufferDesc *desc;
	Page		page;
	bool		same;

	if (id >= (uint32) NBuffers)
		elog(ERROR, "gpuhash: no shared buffer %u", id);
	desc = GetBufferDescriptor(id);
	page = BufferGetPage((Buffer) (id + 1));
	LWLockAcquire(BufferDescriptorGetContentLock(desc), LW_SHARED);
	same = gpuhash_page_unchanged(page, lsn);
	LWLockRelease(BufferDescriptorGetContentLock(desc));
	return same;
}
