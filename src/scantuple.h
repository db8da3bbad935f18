/*-------------------------------------------------------------------------
 *
 * scantuple.h
 *	  The scan tuple of gpuhash's CustomScan nodes: which input column fills
 *	  which of its columns.
 *
 * GpuHashJoin and GpuHashAgg are CustomScans with scanrelid 0.  Their
 * custom_scan_tlist lists every value the node's expressions use; setrefs
 * rewrites the node's target list, quals and custom_exprs to refer to those
 * entries (INDEX_VAR).  The planner records, per entry, the input plan
 * ("side": 0 outer, 1 inner, -1 none, the node computes it) and the column of
 * that input's output that holds the value; the executor copies values
 * across with gpuhash_fill_scan_slot and evaluates everything over the scan
 * tuple.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_SCANTUPLE_H
#define GPUHASH_SCANTUPLE_H

#include "postgres.h"
#include "executor/tuptable.h"
#include "nodes/pg_list.h"
#include "nodes/plannodes.h"

#define GH_SIDE_NONE (-1)

/* planner: append the Vars under node (outside aggregates) to scan_tlist */
extern List *gpuhash_scan_tlist_add_vars(List *scan_tlist, Node *node);
/* planner: append expr itself unless already there */
extern List *gpuhash_scan_tlist_add_expr(List *scan_tlist, Expr *expr);
/* planner: the entry that holds expr (an error where none does) */
extern AttrNumber gpuhash_scan_tlist_find(List *scan_tlist, Expr *expr);
/* planner: a copy of node whose Vars no outer join nulls (a LEFT JOIN's inner side's) */
extern Node *gpuhash_without_nullingrels(Node *node);
/* planner: node's Vars with the nulling joins of their entries (scantuple.c) */
extern Node *gpuhash_scan_tlist_align(List *scan_tlist, Node *node);
/* planner: find each entry in the inputs' target lists */
extern void gpuhash_scan_tlist_map(List *scan_tlist, Plan *outer, Plan *inner,
								   List **sides, List **attnos);

typedef struct GpuHashScanMap
{
	int			ncols;
	int		   *sides;
	AttrNumber *attnos;
	AttrNumber	maxatt[2];		/* the last column read of each input */
} GpuHashScanMap;

/* executor */
extern void gpuhash_scan_map_init(GpuHashScanMap *map, List *sides, List *attnos);
extern Bitmapset *gpuhash_scan_map_used(const GpuHashScanMap *map, int side);
extern TupleTableSlot *gpuhash_fill_scan_slot(const GpuHashScanMap *map,
											  TupleTableSlot *scan,
											  TupleTableSlot *outer,
											  TupleTableSlot *inner);

#endif							/* GPUHASH_SCANTUPLE_H */
