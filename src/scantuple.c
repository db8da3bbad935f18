/*-------------------------------------------------------------------------
 *
 * scantuple.c
 *	  Laying out and filling the scan tuple of gpuhash's CustomScan nodes
 *	  (see scantuple.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"

#include "pg_compat.h"
#include "scantuple.h"

/* expr without the outer joins that null its Vars (see pg_compat.h) */
static Node *without_nullingrels(Node *node, void *context);

Node *
gpuhash_without_nullingrels(Node *node)
{
	return without_nullingrels(node, NULL);
}

static Node *
without_nullingrels(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *var = copyObject((Var *) node);

		VarClearNullingRels(var);
		return (Node *) var;
	}
	if (IsA(node, PlaceHolderVar))
	{
		PlaceHolderVar *phv = (PlaceHolderVar *) expression_tree_mutator(node,
																		  without_nullingrels,
																		  context);

		PlaceHolderVarClearNullingRels(phv);
		return (Node *) phv;
	}
	return expression_tree_mutator(node, without_nullingrels, context);
}

/*
 * The entry of tlist that holds expr, or NULL.  A Var above an outer join
 * names the joins that may null it, the same Var below them does not: they
 * hold the same value wherever the value is read, so they match.
 */
static TargetEntry *
tlist_find(List *tlist, Expr *expr)
{
	Node	   *bare = without_nullingrels((Node *) expr, NULL);
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (equal(bare, without_nullingrels((Node *) tle->expr, NULL)))
			return tle;
	}
	return NULL;
}

List *
gpuhash_scan_tlist_add_expr(List *scan_tlist, Expr *expr)
{
	if (tlist_find(scan_tlist, expr))
		return scan_tlist;
	return lappend(scan_tlist, makeTargetEntry((Expr *) copyObject(expr),
											   list_length(scan_tlist) + 1,
											   NULL, false));
}

AttrNumber
gpuhash_scan_tlist_find(List *scan_tlist, Expr *expr)
{
	TargetEntry *tle = tlist_find(scan_tlist, expr);

	if (tle == NULL)
		elog(ERROR, "gpuhash: a value missing from the scan tuple");
	return tle->resno;
}

/*
 * setrefs finds each Var of the node's expressions in custom_scan_tlist by
 * its relation and column alone, and requires the entry to name the same
 * nulling joins: a key read below the join and returned above it is one entry,
 * so its uses are given the entry's marks.
 */
static Node *
align_mutator(Node *node, List *scan_tlist)
{
	TargetEntry *tle;

	if (node == NULL)
		return NULL;
	if ((IsA(node, Var) || IsA(node, PlaceHolderVar)) &&
		(tle = tlist_find(scan_tlist, (Expr *) node)) != NULL)
		return (Node *) copyObject(tle->expr);
	return expression_tree_mutator(node, align_mutator, scan_tlist);
}

Node *
gpuhash_scan_tlist_align(List *scan_tlist, Node *node)
{
	return align_mutator(node, scan_tlist);
}

List *
gpuhash_scan_tlist_add_vars(List *scan_tlist, Node *node)
{
	/*
	 * PlaceHolderVars stay whole: below an outer join they are the input's
	 * outputs (NULL where the join null-extends), not their contents.
	 */
	List	   *vars = pull_var_clause(node, PVC_RECURSE_AGGREGATES |
									   PVC_INCLUDE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, vars)
		scan_tlist = gpuhash_scan_tlist_add_expr(scan_tlist, (Expr *) lfirst(lc));
	return scan_tlist;
}

/* The position of expr in a plan's target list, or 0. */
static int
plan_attno(Plan *plan, Expr *expr)
{
	TargetEntry *tle;

	if (plan == NULL)
		return 0;
	tle = tlist_find(plan->targetlist, expr);
	return tle ? tle->resno : 0;
}

void
gpuhash_scan_tlist_map(List *scan_tlist, Plan *outer, Plan *inner,
					   List **sides, List **attnos)
{
	ListCell   *lc;

	*sides = NIL;
	*attnos = NIL;
	foreach(lc, scan_tlist)
	{
		Expr	   *expr = lfirst_node(TargetEntry, lc)->expr;
		int			attno;
		int			side;

		if ((attno = plan_attno(outer, expr)) > 0)
			side = 0;
		else if ((attno = plan_attno(inner, expr)) > 0)
			side = 1;
		else
			side = GH_SIDE_NONE;
		*sides = lappend_int(*sides, side);
		*attnos = lappend_int(*attnos, attno);
	}
}

void
gpuhash_scan_map_init(GpuHashScanMap *map, List *sides, List *attnos)
{
	map->ncols = list_length(sides);
	map->sides = palloc(sizeof(int) * Max(map->ncols, 1));
	map->attnos = palloc(sizeof(AttrNumber) * Max(map->ncols, 1));
	map->maxatt[0] = map->maxatt[1] = 0;
	for (int i = 0; i < map->ncols; i++)
	{
		map->sides[i] = list_nth_int(sides, i);
		map->attnos[i] = (AttrNumber) list_nth_int(attnos, i);
		if (map->sides[i] == 0 || map->sides[i] == 1)
			map->maxatt[map->sides[i]] = Max(map->maxatt[map->sides[i]], map->attnos[i]);
	}
}

/*
 * Copy the mapped columns of outer and inner (either may be NULL: its
 * columns become NULL) into the scan tuple.  Columns the node computes
 * itself (GH_SIDE_NONE) are left as the caller set them in tts_values /
 * tts_isnull before the call (clearing a virtual slot leaves those alone).
 */
TupleTableSlot *
gpuhash_fill_scan_slot(const GpuHashScanMap *map, TupleTableSlot *scan,
					   TupleTableSlot *outer, TupleTableSlot *inner)
{
	ExecClearTuple(scan);
	/* deform only as far as the last column read */
	if (outer && map->maxatt[0] > 0)
		slot_getsomeattrs(outer, map->maxatt[0]);
	if (inner && map->maxatt[1] > 0)
		slot_getsomeattrs(inner, map->maxatt[1]);
	for (int i = 0; i < map->ncols; i++)
	{
		TupleTableSlot *from;
		int			a = map->attnos[i] - 1;

		if (map->sides[i] == GH_SIDE_NONE)
			continue;
		from = map->sides[i] == 0 ? outer : inner;
		if (from == NULL)
		{
			scan->tts_values[i] = (Datum) 0;
			scan->tts_isnull[i] = true;
		}
		else
		{
			scan->tts_values[i] = from->tts_values[a];
			scan->tts_isnull[i] = from->tts_isnull[a];
		}
	}
	return ExecStoreVirtualTuple(scan);
}


/* The columns of input side (0 outer, 1 inner) the map reads. */
Bitmapset *
gpuhash_scan_map_used(const GpuHashScanMap *map, int side)
{
	Bitmapset  *used = NULL;

	for (int i = 0; i < map->ncols; i++)
		if (map->sides[i] == side && map->attnos[i] > 0)
			used = bms_add_member(used, map->attnos[i]);
	return used;
}
