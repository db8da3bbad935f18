/*-------------------------------------------------------------------------
 *
 * join.h
 *	  GpuHashJoin: what the planner half (join_path.c) hands the executor
 *	  half (join_exec.c).
 *
 * The plan node is a CustomScan with scanrelid 0 whose scan tuple
 * (custom_scan_tlist) holds every column the join needs from either side.
 * custom_private describes how to fill it and how to encode keys; the
 * positions are the GHJ_PRIV_* indexes below.  custom_exprs holds four
 * expression lists, all referring to the scan tuple (INDEX_VAR):
 *
 *	GHJ_EXPR_OUTER_KEYS	 key expressions over outer-side columns
 *	GHJ_EXPR_INNER_KEYS	 key expressions over inner-side columns
 *	GHJ_EXPR_HASHCLAUSES the equality clauses themselves (recheck, EXPLAIN)
 *	GHJ_EXPR_JOINQUALS	 other join clauses (decide what matches)
 *
 * plan.qual holds the remaining "other" quals of an outer join (filters
 * applied after null-extension), as in PostgreSQL's own Join nodes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_JOIN_H
#define GPUHASH_JOIN_H

#include "postgres.h"
#include "nodes/extensible.h"

#define GPUHASH_JOIN_NAME "GpuHashJoin"

/* custom_private positions */
#define GHJ_PRIV_JOINTYPE	0	/* Integer: JoinType */
#define GHJ_PRIV_EXACT		1	/* Integer: 1 = exact keys, no recheck */
#define GHJ_PRIV_TABLE		2	/* Integer: gh_kind */
#define GHJ_PRIV_SIDES		3	/* IntList: per scan column, 0 outer 1 inner */
#define GHJ_PRIV_ATTNOS		4	/* IntList: per scan column, child attno */
#define GHJ_PRIV_OUTER_TYPES 5	/* OidList: per key, outer type */
#define GHJ_PRIV_INNER_TYPES 6	/* OidList: per key, inner type */
#define GHJ_PRIV_OUTER_HASH	7	/* OidList: per key, outer extended hash fn */
#define GHJ_PRIV_INNER_HASH	8	/* OidList: per key, inner extended hash fn */
#define GHJ_PRIV_COLLATIONS	9	/* OidList: per key, collation */

#define GHJ_EXPR_OUTER_KEYS	0
#define GHJ_EXPR_INNER_KEYS	1
#define GHJ_EXPR_HASHCLAUSES 2
#define GHJ_EXPR_JOINQUALS	3

extern CustomScanMethods gpuhash_join_scan_methods;

extern void gpuhash_join_init(void);
extern Node *gpuhash_join_create_state(CustomScan *cscan);

#endif							/* GPUHASH_JOIN_H */
