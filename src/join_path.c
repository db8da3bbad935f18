/*-------------------------------------------------------------------------
 *
 * join_path.c
 *	  Planner half of GpuHashJoin: offer a CustomPath for hash-joinable
 *	  equi-joins and turn the chosen one into a CustomScan plan.
 *
 * INTERFACE ROUTINES
 *		gpuhash_join_init		install the hook, register the scan methods
 *
 * What is offered and the cost model are described in src/README
 * ("Planner: GpuHashJoin", "The cost model").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"

#include "agg.h"
#include "engine.h"
#include "gpuhash.h"
#include "join.h"
#include "keys.h"
#include "scantuple.h"

/* Device-side costs, in units of cpu_operator_cost (src/README, "The cost model") */
#define GHJ_DEVICE_STARTUP_COST		100.0
#define GHJ_DEVICE_ROW_FACTOR		0.05
/* keeping an inner row aside for the whole join (rowstore.c) */
#define GHJ_INNER_COPY_COST			cpu_operator_cost

static set_join_pathlist_hook_type prev_join_pathlist_hook = NULL;

static Plan *plan_gpuhash_join(PlannerInfo *root, RelOptInfo *rel,
							   CustomPath *best_path, List *tlist,
							   List *clauses, List *custom_plans);

static CustomPathMethods gpuhash_join_path_methods = {
	.CustomName = GPUHASH_JOIN_NAME,
	.PlanCustomPath = plan_gpuhash_join,
};

CustomScanMethods gpuhash_join_scan_methods = {
	.CustomName = GPUHASH_JOIN_NAME,
	.CreateCustomScanState = gpuhash_join_create_state,
};

/* One hash clause, sides resolved. */
typedef struct HashKey
{
	Expr	   *outer_expr;
	Expr	   *inner_expr;
	Oid			eqop;
	Oid			collation;
} HashKey;

/* Does the clause compare an outer expression with an inner one? */
static bool
clause_sides_match(RestrictInfo *rinfo, RelOptInfo *outerrel,
				   RelOptInfo *innerrel, bool *outer_is_left)
{
	if (bms_is_subset(rinfo->left_relids, outerrel->relids) &&
		bms_is_subset(rinfo->right_relids, innerrel->relids))
	{
		*outer_is_left = true;
		return true;
	}
	if (bms_is_subset(rinfo->left_relids, innerrel->relids) &&
		bms_is_subset(rinfo->right_relids, outerrel->relids))
	{
		*outer_is_left = false;
		return true;
	}
	return false;
}

/* Can these key types be encoded, and how? */
static bool
key_encodable(HashKey *k, bool *exact)
{
	Oid			otype = exprType((Node *) k->outer_expr);
	Oid			itype = exprType((Node *) k->inner_expr);
	GpuHashExactFamily of = gpuhash_exact_family(otype);

	*exact = (of != GHX_NONE && of == gpuhash_exact_family(itype));
	if (!gpuhash_collation_ok(k->collation))
		return false;
	return OidIsValid(gpuhash_extended_hash_proc(k->eqop, otype)) &&
		OidIsValid(gpuhash_extended_hash_proc(k->eqop, itype));
}

/*
 * Are these keys, each exactly encodable, exact together (keys.c:
 * gpuhash_exact_key_layout)?
 */
static bool
keys_exact_together(List *keys)
{
	int			n = list_length(keys);
	Oid		   *otypes = palloc(sizeof(Oid) * n);
	Oid		   *itypes = palloc(sizeof(Oid) * n);
	ListCell   *lc;
	int			i = 0;

	foreach(lc, keys)
	{
		otypes[i] = exprType((Node *) ((HashKey *) lfirst(lc))->outer_expr);
		itypes[i] = exprType((Node *) ((HashKey *) lfirst(lc))->inner_expr);
		i++;
	}
	return gpuhash_exact_key_layout(n, otypes, itypes, NULL, NULL);
}

static bool
contains_placeholders(Node *node)
{
	List	   *vars = pull_var_clause(node, PVC_INCLUDE_PLACEHOLDERS |
									   PVC_INCLUDE_AGGREGATES |
									   PVC_INCLUDE_WINDOWFUNCS);
	ListCell   *lc;

	foreach(lc, vars)
		if (!IsA(lfirst(lc), Var))
			return true;
	return false;
}

/*
 * A GpuHashJoin path over these inputs.  share is the fraction of the join's
 * rows this path produces: 1 for the whole join, less for a partial path
 * (partial: run in parallel workers) whose outer input is a worker's share
 * of the outer relation.
 */
static Path *
make_join_path(RelOptInfo *joinrel, Path *outer_path, Path *inner_path,
			   int nkeys, bool exact, List *custom_private, double share,
			   bool partial, bool forced)
{
	CustomPath *cpath = makeNode(CustomPath);
	double		rows = clamp_row_est(joinrel->rows * share);
	double		key_cost = cpu_operator_cost * nkeys;
	Cost		startup,
				run;

	startup = inner_path->total_cost +
		inner_path->rows * (cpu_tuple_cost + key_cost + GHJ_INNER_COPY_COST) +
		GHJ_DEVICE_STARTUP_COST * cpu_operator_cost +
		gpuhash_engine_open_cost(partial) +
		inner_path->rows * GHJ_DEVICE_ROW_FACTOR * cpu_operator_cost;
	run = outer_path->total_cost +
		outer_path->rows * (cpu_tuple_cost + key_cost +
							GHJ_DEVICE_ROW_FACTOR * cpu_operator_cost) +
		rows * cpu_tuple_cost;
	if (!exact)
		run += rows * key_cost;	/* recheck */

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = joinrel;
	cpath->path.pathtarget = joinrel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = joinrel->consider_parallel &&
		outer_path->parallel_safe && inner_path->parallel_safe;
	cpath->path.parallel_workers = outer_path->parallel_workers;
	cpath->path.rows = rows;
	cpath->path.startup_cost = startup;
	cpath->path.total_cost = startup + run;
	SetPathDisabledNodes(&cpath->path,
						 PathDisabledNodes(outer_path) + PathDisabledNodes(inner_path));
	if (forced)
		gpuhash_scale_forced_cost(&cpath->path);
	cpath->path.pathkeys = NIL;
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = list_make2(outer_path, inner_path);
	cpath->custom_private = custom_private;
	cpath->methods = &gpuhash_join_path_methods;
	return &cpath->path;
}

/*
 * Could some orientation of this join get a partial GpuHashJoin path?  Only
 * joins whose probe side has partial paths, never FULL joins.
 */
static bool
may_run_partial(RelOptInfo *joinrel, RelOptInfo *outerrel, RelOptInfo *innerrel,
				JoinType jointype)
{
	if (!joinrel->consider_parallel)
		return false;
	switch (jointype)
	{
		case JOIN_INNER:
			return outerrel->partial_pathlist != NIL || innerrel->partial_pathlist != NIL;
		case JOIN_LEFT:
		case JOIN_SEMI:
		case JOIN_ANTI:
			return outerrel->partial_pathlist != NIL;
		case JOIN_RIGHT:
			return innerrel->partial_pathlist != NIL;	/* as a LEFT join */
		default:
			return false;
	}
}

static void
gpuhash_join_pathlist(PlannerInfo *root, RelOptInfo *joinrel,
					  RelOptInfo *outerrel, RelOptInfo *innerrel,
					  JoinType jointype, JoinPathExtraData *extra)
{
	Path	   *outer_path,
			   *inner_path;
	List	   *hashclauses = NIL;
	List	   *keys = NIL;
	bool		exact = true;
	bool		isouter = IS_OUTER_JOIN(jointype);
	ListCell   *lc;
	List	   *custom_private;
	Path	   *partial_outer = NULL,
			   *safe_inner = NULL;

	if (prev_join_pathlist_hook)
		prev_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	if (!gpuhash_enabled || !gpuhash_enable_join || !gpuhash_planning_allowed())
		return;
	switch (jointype)
	{
		case JOIN_INNER:
		case JOIN_LEFT:
		case JOIN_RIGHT:
		case JOIN_FULL:
		case JOIN_SEMI:
		case JOIN_ANTI:
			break;
		default:
			return;
	}

	outer_path = outerrel->cheapest_total_path;
	inner_path = innerrel->cheapest_total_path;
	if (outer_path == NULL || inner_path == NULL ||
		outer_path->param_info != NULL || inner_path->param_info != NULL)
		return;

	/* the hash clauses, as hash_inner_and_outer picks them */
	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		bool		outer_is_left;
		OpExpr	   *op;
		HashKey    *k;
		bool		k_exact;

		if (isouter && RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
			continue;
		if (!rinfo->can_join || !OidIsValid(rinfo->hashjoinoperator))
			continue;
		if (!clause_sides_match(rinfo, outerrel, innerrel, &outer_is_left))
			continue;
		op = (OpExpr *) rinfo->clause;
		if (!IsA(op, OpExpr) || list_length(op->args) != 2)
			continue;
		k = palloc(sizeof(HashKey));
		k->outer_expr = outer_is_left ? linitial(op->args) : lsecond(op->args);
		k->inner_expr = outer_is_left ? lsecond(op->args) : linitial(op->args);
		k->eqop = op->opno;
		k->collation = op->inputcollid;
		if (!key_encodable(k, &k_exact))
			return;				/* every key must be encodable */
		exact = exact && k_exact;
		hashclauses = lappend(hashclauses, rinfo);
		keys = lappend(keys, k);
	}
	if (hashclauses == NIL)
		return;
	if (exact)
		exact = keys_exact_together(keys);

	if (contains_placeholders((Node *) joinrel->reltarget->exprs) ||
		contains_placeholders((Node *) extract_actual_clauses(extra->restrictlist, false)))
		return;

	/* an aggregation above could do this join itself (agg_fuse.c) */
	if (jointype == JOIN_INNER && exact &&
		list_length(extra->restrictlist) == list_length(hashclauses))
	{
		List	   *okeys = NIL,
				   *ikeys = NIL;

		foreach(lc, keys)
		{
			okeys = lappend(okeys, ((HashKey *) lfirst(lc))->outer_expr);
			ikeys = lappend(ikeys, ((HashKey *) lfirst(lc))->inner_expr);
		}
		gpuhash_fuse_note_join(root, joinrel, outerrel, innerrel, okeys, ikeys);
	}

	if (!gpuhash_force &&
		outer_path->rows + inner_path->rows < (double) gpuhash_min_rows)
		return;

	custom_private = list_make4(makeInteger(jointype), makeInteger(exact ? 1 : 0),
								 hashclauses, extra->restrictlist);

	/*
	 * Under Gather: each process builds the whole inner side into its own
	 * table and probes its share of a partial outer path, as PostgreSQL's
	 * hash join does without a shared table.  Not for RIGHT and FULL joins,
	 * whose unmatched inner rows depend on every process's outer rows.
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL &&
		jointype != JOIN_RIGHT && jointype != JOIN_FULL && outerrel->rows > 0 &&
		((Path *) linitial(outerrel->partial_pathlist))->param_info == NULL)
	{
		safe_inner = get_cheapest_parallel_safe_total_inner(innerrel->pathlist);
		if (safe_inner != NULL)
			partial_outer = linitial(outerrel->partial_pathlist);
	}

	/*
	 * gpuhash.force makes our paths cost almost nothing.  Where this join can also
	 * run in parallel (a partial path here or in the swapped orientation),
	 * the whole-join paths keep their cost, so that forced plans gather the
	 * free partial path where PostgreSQL would run in parallel.
	 */
	add_path(joinrel, make_join_path(joinrel, outer_path, inner_path,
									 list_length(keys), exact, custom_private, 1.0, false,
									 gpuhash_force &&
									 !may_run_partial(joinrel, outerrel, innerrel, jointype)));
	if (partial_outer != NULL)
		add_partial_path(joinrel,
						 make_join_path(joinrel, partial_outer, safe_inner,
										list_length(keys), exact, custom_private,
										Min(1.0, partial_outer->rows / outerrel->rows),
										true, gpuhash_force));
}

static Plan *
plan_gpuhash_join(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *outer_plan = linitial(custom_plans);
	Plan	   *inner_plan = lsecond(custom_plans);
	JoinType	jointype = intVal(linitial(best_path->custom_private));
	bool		exact = intVal(lsecond(best_path->custom_private)) != 0;
	List	   *hashclauses = lthird(best_path->custom_private);
	List	   *restrictlist = lfourth(best_path->custom_private);
	List	   *joinquals,
			   *otherquals;
	List	   *outer_keys = NIL,
			   *inner_keys = NIL,
			   *hash_exprs = NIL;
	List	   *outer_types = NIL,
			   *inner_types = NIL,
			   *outer_hash = NIL,
			   *inner_hash = NIL,
			   *collations = NIL,
			   *sides = NIL,
			   *attnos = NIL;
	List	   *scan_tlist = NIL;
	Relids		outer_relids = ((Path *) linitial(best_path->custom_paths))->parent->relids;
	ListCell   *lc;

	/* order and split the clauses as create_hashjoin_plan does */
	restrictlist = gpuhash_order_quals(root, list_difference_ptr(restrictlist, hashclauses));
	if (IS_OUTER_JOIN(jointype))
		extract_actual_join_clauses(restrictlist, rel->relids, &joinquals, &otherquals);
	else
	{
		joinquals = extract_actual_clauses(restrictlist, false);
		otherquals = NIL;
	}

	foreach(lc, hashclauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		OpExpr	   *op = (OpExpr *) rinfo->clause;
		Expr	   *oexpr = linitial(op->args),
				   *iexpr = lsecond(op->args);

		bool		switched = false;

		if (!bms_is_subset(pull_varnos(root, (Node *) oexpr), outer_relids))
		{
			oexpr = lsecond(op->args);
			iexpr = linitial(op->args);
			switched = true;
		}
		outer_keys = lappend(outer_keys, oexpr);
		inner_keys = lappend(inner_keys, iexpr);
		outer_types = lappend_oid(outer_types, exprType((Node *) oexpr));
		inner_types = lappend_oid(inner_types, exprType((Node *) iexpr));
		outer_hash = lappend_oid(outer_hash,
								 gpuhash_extended_hash_proc(op->opno, exprType((Node *) oexpr)));
		inner_hash = lappend_oid(inner_hash,
								 gpuhash_extended_hash_proc(op->opno, exprType((Node *) iexpr)));
		collations = lappend_oid(collations, op->inputcollid);
		/* outer = inner, as a Hash Join's clauses (get_switched_clauses) */
		if (switched)
		{
			op = copyObject(op);
			CommuteOpExpr(op);
		}
		hash_exprs = lappend(hash_exprs, op);
	}

	/* the scan tuple: every Var the output, the clauses and the keys use */
	/*
	 * The path's target, not tlist: a projection above may replace the
	 * target list later (tlist is then NULL here), with anything the path
	 * target provides.
	 */
	scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) best_path->path.pathtarget->exprs);
	scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) tlist);
	scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) hash_exprs);
	scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) joinquals);
	scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) otherquals);
	gpuhash_scan_tlist_map(scan_tlist, outer_plan, inner_plan, &sides, &attnos);
	foreach(lc, sides)
		if (lfirst_int(lc) == GH_SIDE_NONE)
			elog(ERROR, "gpuhash: join column not produced by either input");

	outer_keys = (List *) gpuhash_scan_tlist_align(scan_tlist, (Node *) outer_keys);
	inner_keys = (List *) gpuhash_scan_tlist_align(scan_tlist, (Node *) inner_keys);
	hash_exprs = (List *) gpuhash_scan_tlist_align(scan_tlist, (Node *) hash_exprs);
	joinquals = (List *) gpuhash_scan_tlist_align(scan_tlist, (Node *) joinquals);
	otherquals = (List *) gpuhash_scan_tlist_align(scan_tlist, (Node *) otherquals);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = otherquals;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = list_make4(outer_keys, inner_keys, hash_exprs, joinquals);
	cscan->custom_private = list_make5(makeInteger(jointype),
									   makeInteger(exact ? 1 : 0),
									   makeInteger(gpuhash_resolved_table_kind()),
									   sides, attnos);
	cscan->custom_private = lappend(cscan->custom_private, outer_types);
	cscan->custom_private = lappend(cscan->custom_private, inner_types);
	cscan->custom_private = lappend(cscan->custom_private, outer_hash);
	cscan->custom_private = lappend(cscan->custom_private, inner_hash);
	cscan->custom_private = lappend(cscan->custom_private, collations);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = bms_copy(rel->relids);
	cscan->methods = &gpuhash_join_scan_methods;
	(void) clauses;
	return &cscan->scan.plan;
}

void
gpuhash_join_init(void)
{
	RegisterCustomScanMethods(&gpuhash_join_scan_methods);
	prev_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = gpuhash_join_pathlist;
}
