/*-------------------------------------------------------------------------
 *
 * agg_fuse.c
 *	  The joins an aggregation can be fused with: inner equi-joins noted
 *	  while the planner builds join paths, and which side of such a join an
 *	  expression reads (agg.h, "FUSED JOIN").
 *
 * INTERFACE ROUTINES
 *		gpuhash_fuse_init			install the planner hook
 *		gpuhash_fuse_note_join		remember a join that could be fused
 *		gpuhash_fuse_joins			the remembered joins of a join relation
 *		gpuhash_fuse_side			which input of a join an expression reads
 *		gpuhash_fuse_never_null	a grouping column that needs no NULL flag
 *
 * WHY NOTE JOINS
 *
 * By the time the GROUP BY is planned, the join relation below it only has
 * paths: which pair of relations it was built from, and by which clause, is
 * known only while its join paths are made (set_join_pathlist_hook), and
 * our own join path may have lost to PostgreSQL's there.  So the join hook
 * notes every pair that a fused node could join -- an inner join on a
 * key that is exact (keys.c) with no other join clause -- and the GROUP BY
 * hook looks them up.  The notes live in the planner's memory and belong to
 * one planner call: the planner hook starts each call, nested ones too,
 * with an empty list and restores the caller's afterwards.  None are taken
 * during a genetic (GEQO) join search, whose join relations are discarded.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_attribute.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "utils/syscache.h"

#include "agg.h"
#include "gpuhash.h"
#include "scantuple.h"

static planner_hook_type prev_planner_hook = NULL;
static List *noted_joins = NIL;

/* the next planner's plan of parse, with no joins noted yet */
static PlannedStmt *
plan_one(Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams)
{
	noted_joins = NIL;
	if (prev_planner_hook)
		return prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

/*
 * The planner hook: each call (nested ones too) notes joins of its own; a
 * query with count(DISTINCT x), grouping sets or a variance is planned as
 * written and rewritten in two levels (agg_twolevel.c), and the plan to run
 * chosen.
 */
static PlannedStmt *
gpuhash_planner(Query *parse, const char *query_string, int cursorOptions,
				ParamListInfo boundParams)
{
	List	   *saved = noted_joins;
	PlannedStmt *result;

	PG_TRY();
	{
		Query	   *rewritten = gpuhash_twolevel_rewrite(parse);

		if (rewritten == NULL)
			result = plan_one(parse, query_string, cursorOptions, boundParams);
		else
		{
			result = plan_one(rewritten, query_string, cursorOptions, boundParams);
			if (!gpuhash_force)
				result = gpuhash_twolevel_choose(plan_one(parse, query_string, cursorOptions,
														  boundParams), result);
		}
	}
	PG_FINALLY();
	{
		noted_joins = saved;
	}
	PG_END_TRY();
	return result;
}

void
gpuhash_fuse_note_join(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					   RelOptInfo *innerrel, List *outer_keys, List *inner_keys)
{
	GhaFuseJoin *fj;

	if (root->join_search_private != NULL)
		return;					/* GEQO: transient join relations */
	fj = palloc(sizeof(GhaFuseJoin));
	fj->root = root;
	fj->joinrel = joinrel;
	fj->outerrel = outerrel;
	fj->innerrel = innerrel;
	fj->outer_keys = outer_keys;
	fj->inner_keys = inner_keys;
	noted_joins = lappend(noted_joins, fj);
}

List *
gpuhash_fuse_joins(PlannerInfo *root, RelOptInfo *joinrel)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, noted_joins)
	{
		GhaFuseJoin *fj = lfirst(lc);

		if (fj->root == root && fj->joinrel == joinrel)
			result = lappend(result, fj);
	}
	return result;
}

/*
 * Which input of the join expr reads: 0 the outer, 1 the inner,
 * GH_SIDE_NONE neither (a constant), GHA_SIDE_BOTH both (or something we
 * cannot place, such as a PlaceHolderVar).
 */
int
gpuhash_fuse_side(GhaFuseJoin *fj, Node *expr)
{
	List	   *vars = pull_var_clause(expr, PVC_INCLUDE_PLACEHOLDERS |
									   PVC_RECURSE_AGGREGATES);
	Relids		relids;
	ListCell   *lc;

	if (vars == NIL)
		return GH_SIDE_NONE;
	foreach(lc, vars)
		if (!IsA(lfirst(lc), Var))
			return GHA_SIDE_BOTH;	/* PlaceHolderVars */
	relids = pull_varnos(fj->root, (Node *) vars);
	if (bms_is_subset(relids, fj->outerrel->relids))
		return 0;
	if (bms_is_subset(relids, fj->innerrel->relids))
		return 1;
	return GHA_SIDE_BOTH;
}

void
gpuhash_fuse_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = gpuhash_planner;
}

/*
 * Can expr never be NULL in an input of a join of this query: a column of a
 * table declared NOT NULL, whose relation is on the nullable side of no
 * outer join?  A fused node then needs no NULL flag for it.
 */
bool
gpuhash_fuse_never_null(PlannerInfo *root, Expr *expr)
{
	Var		   *var = (Var *) expr;
	RangeTblEntry *rte;
	HeapTuple	tup;
	bool		notnull;
	ListCell   *lc;

	if (!IsA(expr, Var) || var->varlevelsup != 0 || var->varattno <= 0 ||
		var->varno <= 0 || var->varno >= root->simple_rel_array_size)
		return false;
	rte = root->simple_rte_array[var->varno];
	if (rte == NULL || rte->rtekind != RTE_RELATION)
		return false;
	foreach(lc, root->join_info_list)
	{
		SpecialJoinInfo *sj = lfirst_node(SpecialJoinInfo, lc);

		if (sj->jointype == JOIN_INNER || sj->jointype == JOIN_SEMI)
			continue;
		if (bms_is_member(var->varno, sj->syn_righthand) ||
			(sj->jointype == JOIN_FULL && bms_is_member(var->varno, sj->syn_lefthand)))
			return false;
	}
	tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(rte->relid), Int16GetDatum(var->varattno));
	if (!HeapTupleIsValid(tup))
		return false;
	notnull = ((Form_pg_attribute) GETSTRUCT(tup))->attnotnull;
	ReleaseSysCache(tup);
	return notnull;
}
