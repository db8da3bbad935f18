/*-------------------------------------------------------------------------
 *
 * page_ops.h
 *	  Taking the columns out of pinned shared-buffer pages with the engine
 *	  (gh_extract_pages), in the GPU service or in the backend's own engine.
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

#include "storage/dsm.h"

#include "engine_ops.h"

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

#endif							/* GPUHASH_PAGE_OPS_H */
