/*-------------------------------------------------------------------------
 *
 * page_scan.h
 *	  Reading the heap pages of a plain Seq Scan below a gpuhash node
 *	  directly: only the columns the query uses, the pages shipped to the
 *	  engine (the GPU) by buffer number.
 *
 * The rows come back in a slot shaped as the scan's output, after its quals
 * and projection.  A varlena column's value points into its page, which
 * stays pinned until the next batch of pages (as a Seq Scan's slot points
 * into its current page).  All-visible pages are shipped and checked unchanged
 * afterwards (still all-visible, same LSN) under a share lock; the tuples of
 * the others are judged by their hint bits, on pages of a WAL-logged table
 * shipped and checked by their LSN, else taken out in the backend under the
 * share lock; a page whose tuples cannot all be judged, and a page never
 * initialized, is read with PostgreSQL's visibility checks.  Which scans qualify and why
 * the checks are enough: src/README, "Reading heap pages".
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_PAGE_SCAN_H
#define GPUHASH_PAGE_SCAN_H

#include "postgres.h"

#include "pg_compat.h"

#include "catalog/pg_type.h"
#include "nodes/bitmapset.h"
#include "nodes/execnodes.h"

#include "engine_ops.h"

typedef struct GhPageScan GhPageScan;

/* What EXPLAIN ANALYZE shows: pages by how they were read. */
typedef struct GhPageStats
{
	int64		shipped;		/* taken out by the engine */
	int64		direct;			/* taken out by the backend, no visibility checks */
	int64		checked;		/* tuple by tuple with visibility checks */
	int64		reread;			/* shipped, changed meanwhile, read again */
	int64		not_all_visible;	/* of all these, read without PD_ALL_VISIBLE */
	int64		undecided;		/* ... of which a tuple's hint bits could not
								 * tell: read again with visibility checks */
	int64		rows_direct;	/* rows taken in runs (gpuhash_page_scan_next_run) */
	int64		rows_pooled;	/* ... of which the service put in a pool itself */
} GhPageStats;

/* Can the pages of input, a Seq Scan, be read directly (page_scan.c)? */
extern bool gpuhash_heap_pages_readable(PlanState *input);

/*
 * Start reading input's pages for a node that reads the output columns
 * used (1-based) of input; NULL if the input is not such a scan (then pull
 * tuples from it as usual).
 */
extern GhPageScan *gpuhash_page_scan_begin(PlanState *input, const Bitmapset *used,
										   GhOps *ops);
/* The next row, as the scan would return it; NULL at the end. */
extern TupleTableSlot *gpuhash_page_scan_next(GhPageScan *ps);
/*
 * Rows in runs, the columns as the page reader took them (only where the
 * scan has no filter and outputs plain columns: gpuhash_page_scan_plain):
 * rows [*first, *end) of *rows; its column gpuhash_page_scan_column(attno)
 * holds the scan's output column attno.  Instead of gpuhash_page_scan_next.
 */
extern bool gpuhash_page_scan_plain(const GhPageScan *ps);
/*
 * An output column the runs give as a column modulo a constant (a grouping
 * expression the scan computes): by 0 for the column itself.  A varlena
 * column's values are Datums pointing into its page, valid until the next
 * run is taken from another batch: only for nodes that take Datums.
 */
typedef struct GhPageMod
{
	int64		by;
	Oid			type;			/* INT2OID, INT4OID or INT8OID */
	bool		varlena;		/* the column is a varlena's */
} GhPageMod;
extern int	gpuhash_page_scan_column(const GhPageScan *ps, AttrNumber attno, GhPageMod *mod);

/* The output value from the column's value v (not NULL), as int2mod etc. compute it */
static inline Datum
gpuhash_page_mod(const GhPageMod *mod, Datum v)
{
	if (mod->by == 0)
		return v;
	if (mod->by == -1)
		return (Datum) 0;		/* x % -1 is 0, without the overflow of INT_MIN % -1 */
	if (mod->type == INT8OID)
		return Int64GetDatum(DatumGetInt64(v) % mod->by);
	if (mod->type == INT4OID)
		return Int32GetDatum(DatumGetInt32(v) % (int32) mod->by);
	return Int16GetDatum(DatumGetInt16(v) % (int16) mod->by);
}

extern bool gpuhash_page_scan_next_run(GhPageScan *ps, const gh_pagerows **rows,
									   size_t *first, size_t *end);
/*
 * From now on (plain scans only), shipped pages go straight into pool
 * (page_ops.h): the GPU service reads, checks and appends their rows, each
 * row encoded as feed says, and the runs give only the rows read here.
 * False (and nothing changed) if pages are not shipped to the service.
 */
struct GhPoolFeed;
extern bool gpuhash_page_scan_feed_pool(GhPageScan *ps, const GhOpPool *pool,
										const struct GhPoolFeed *feed);
/* Release everything; add the scan's counts to *stats. */
extern void gpuhash_page_scan_end(GhPageScan *ps, GhPageStats *stats);
/* EXPLAIN ANALYZE's lines, if any pages were read: "<what> Pages" ... (what: "Heap") */
extern void gpuhash_page_stats_explain(const GhPageStats *stats, const char *what,
									   ExplainState *es);

#endif							/* GPUHASH_PAGE_SCAN_H */
