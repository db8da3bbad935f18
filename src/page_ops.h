/*-------------------------------------------------------------------------
 *
 * page_ops.h
 *	  Taking the columns out of pinned shared-buffer pages with the engine
 *	  (gh_extract_pages), in the GPU service or in the backend's own engine;
 *	  or having the service append their rows to a pool (gh_pages_read).
 *
 * The arrays live in a DSM segment when the service runs the extraction
 * (it reads the pages in place, in its own mapping of the shared buffers,
 * registered with the GPU once), in backend memory otherwise.  The caller
 * fills pages[] with buffer numbers less one and keeps those buffers pinned
 * until it has checked that the pages did not change meanwhile.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_PAGE_OPS_H
#define GPUHASH_PAGE_OPS_H

#include "postgres.h"

#include "storage/bufpage.h"
#include "storage/dsm.h"
#include "utils/snapshot.h"

#include "engine_ops.h"

/*
 * A page shipped though it was not all-visible (a star's, whose tuples the
 * device judges by their hint bits: star_scan.c) is given with its LSN and
 * this bit, which no real LSN reaches.  Only pages of WAL-logged tables go
 * so, and every change to such a page sets its LSN but hint bits (each
 * only ever set, and judged as read) and PD_ALL_VISIBLE where VACUUM's
 * first pass sets it, under a cleanup lock, which the pin blocks (as it
 * blocks pruning): so the LSN alone tells that the page did not change
 * while it was read.
 */
#define GPUHASH_LSN_NOT_ALL_VISIBLE (UINT64CONST(1) << 63)

/*
 * Is a shipped page, share-locked, still as it was when it was pinned and
 * seen all-visible with LSN lsn?  A change to an all-visible page clears
 * the flag first, under the exclusive lock, and only VACUUM sets it again,
 * which needs a cleanup lock the pin blocks: so a page that passes after
 * the engine read it did not change while it was read.  The backend checks
 * the pages whose columns come back to it; the GPU service those it puts
 * in a pool.
 */
static inline bool
gpuhash_page_unchanged(Page page, XLogRecPtr lsn)
{
	if (lsn & GPUHASH_LSN_NOT_ALL_VISIBLE)
		return PageGetLSN(page) == (lsn & ~GPUHASH_LSN_NOT_ALL_VISIBLE);
	return PageGetLSN(page) == lsn && PageIsAllVisible(page);
}

/*
 * The horizon against which the engine judges the tuples of pages that are
 * not all-visible (gh_pagespec.vis_horizon), or 0 for none (page_ops.c).
 */
extern uint32 gpuhash_vis_horizon(Snapshot snapshot);

/* the same check of shared buffer id (buffer number less one), under its content lock */
extern bool gpuhash_buffer_unchanged(uint32 id, uint64 lsn);
extern void gpuhash_buffer_prefetch(uint32 id);

typedef struct GhOpPages
{
	GhOps	   *ops;
	gh_pagespec spec;
	size_t		max_pages;
	dsm_segment *seg;			/* in the service: the arrays' segment */
	uint32	   *pages;			/* max_pages entries, for the caller to fill */
	gh_pagerows rows;			/* the rows of the last extraction */
} GhOpPages;

extern GhOpPages *gpuhash_op_pages_begin(GhOps *ops, const gh_pagespec *spec,
										 size_t max_pages, MemoryContext cxt);
extern void gpuhash_op_pages_extract(GhOpPages *pp, size_t npages);
extern void gpuhash_op_pages_end(GhOpPages *pp);

/*
 * Pages read straight into a pool (GPU service only; GhsPoolPages): the
 * service reads, encodes and appends their rows on the GPU and checks
 * each page itself; the caller fills pages[] and lsns[] (each page's LSN
 * when it saw it all-visible) and sets dropped[p] for a page to be dropped
 * anyway; after the call, dropped[p] marks the pages whose rows were not
 * appended, which the caller must read itself.
 */
typedef struct GhPoolFeed
{
	gh_pageenc	enc;			/* values: enc.nvals of the pool's columns */
	int			side;			/* 0, or 1: a fused join's inner side */
	bool		keyed;			/* grouping keys kept (a fused side may have none) */
	int8		val_col[GH_PAGE_MAX_VALS];	/* the pool column of each value */
	int			ncols;			/* the pool's columns */
	const gh_aggcol *cols;		/* their types and operations */
	const uint8 *col_inner;		/* a fused join's inner columns (NULL: none) */
} GhPoolFeed;

typedef struct GhOpPoolPages
{
	GhOps	   *ops;
	GhOpPool	pool;
	size_t		max_pages;
	dsm_segment *seg;
	uint32	   *pages;
	uint64	   *lsns;
	uint8	   *dropped;
	bool		fell_back;		/* the pool went on with the CPU: pages come back */
} GhOpPoolPages;

extern GhOpPoolPages *gpuhash_op_pool_pages_begin(GhOps *ops, const GhOpPool *pool,
												  const gh_pagespec *spec,
												  const GhPoolFeed *feed, size_t max_pages,
												  MemoryContext cxt);
/* rows appended */
extern uint64 gpuhash_op_pool_pages(GhOpPoolPages *pp, size_t npages);
extern void gpuhash_op_pool_pages_end(GhOpPoolPages *pp);

#endif							/* GPUHASH_PAGE_OPS_H */
