/*-------------------------------------------------------------------------
 *
 * agg.h
 *	  GpuHashAgg: what the planner half (agg_path.c) hands the executor half
 *	  (agg_exec.c).
 *
 * The plan node is a CustomScan with scanrelid 0 over one input plan.  Its
 * scan tuple (custom_scan_tlist) holds the grouping expressions first, then
 * one entry per aggregate (an Aggref, computed by the node), then the Vars
 * the aggregates' arguments and filters read.  custom_exprs holds three
 * lists over the scan tuple:
 *
 *	GHA_EXPR_GROUP	 the grouping expressions
 *	GHA_EXPR_ARGS	 per aggregate, its argument (a constant for count(*))
 *	GHA_EXPR_FILTER	 per aggregate, its FILTER clause (constant true if none)
 *
 * plan.qual is the HAVING clause; the target list projects the output.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_AGG_H
#define GPUHASH_AGG_H

#include "postgres.h"
#include "nodes/extensible.h"

#define GPUHASH_AGG_NAME "GpuHashAgg"

/* The aggregates the engine computes. */
typedef enum GhaOp
{
	GHA_COUNT_STAR = 0,
	GHA_COUNT,
	GHA_SUM,
	GHA_AVG,
	GHA_MIN,
	GHA_MAX
} GhaOp;

/* custom_private positions */
#define GHA_PRIV_OPS		0	/* IntList: GhaOp per aggregate */
#define GHA_PRIV_ARGTYPES	1	/* OidList: argument type per aggregate */
#define GHA_PRIV_KEYTYPES	2	/* OidList: type per grouping column */
#define GHA_PRIV_SIDES		3	/* IntList: scan tuple map (scantuple.h) */
#define GHA_PRIV_ATTNOS		4	/* IntList */
#define GHA_PRIV_KEYPOS		5	/* IntList: scan tuple column of each grouping column */

#define GHA_EXPR_GROUP		0
#define GHA_EXPR_ARGS		1
#define GHA_EXPR_FILTER		2

extern CustomScanMethods gpuhash_agg_scan_methods;

extern void gpuhash_agg_init(void);
extern Node *gpuhash_agg_create_state(CustomScan *cscan);
/* the result of one aggregate for one group (agg_final.c) */
struct gh_groups;
extern Datum gpuhash_agg_final(GhaOp op, Oid argtype, const struct gh_groups *g,
							   int col, size_t group, bool *isnull);

#endif							/* GPUHASH_AGG_H */
