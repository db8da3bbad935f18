/*-------------------------------------------------------------------------
 *
 * agg_path.c
 *	  Planner half of GpuHashAgg: offer a CustomPath for GROUP BY and turn
 *	  the chosen one into a CustomScan plan.
 *
 * INTERFACE ROUTINES
 *		gpuhash_agg_init		install the hook, register the scan methods
 *
 * WHAT IS OFFERED
 *
 * create_upper_paths_hook at UPPERREL_GROUP_AGG, for a query with a GROUP BY
 * (no grouping sets), when:
 *	- every grouping expression has an exact encoding (keys.c) and together
 *	  they pack into 64 bits, so a group on the device is a group in SQL;
 *	- every aggregate is count(*), count(x), or sum/avg/min/max of int2,
 *	  int4, int8, float4 or float8 (min/max also of date, time, timestamp,
 *	  timestamptz and oid), with no DISTINCT or ORDER BY inside, FILTER
 *	  allowed;
 *	- the output needs no column that is merely functionally dependent on
 *	  the grouping key (PostgreSQL passes those through; we would not).
 * Anything else is simply not offered, and PostgreSQL plans it as before.
 *
 * COST MODEL
 *
 * Reading the input stays on the CPU (the input path's cost, which already
 * charges cpu_tuple_cost per row), and so does evaluating keys, arguments
 * and filters; the hash table work moves to the device.  Per input row we
 * charge half a cpu_operator_cost per key column and per aggregate (the
 * evaluation of plain columns is a copy), where PostgreSQL's HashAgg
 * charges a full one per column plus its transition functions.  Measured on
 * an H100 (README, "Benchmarks"), a GpuHashAgg over 10M rows took 1.0 to
 * 1.7 s against 4.1 to 4.5 s for PostgreSQL's plan with 8 workers, and the
 * earlier charge of cpu_tuple_cost per row more made the planner choose
 * PostgreSQL's serial HashAggregate over it.  Inputs smaller than
 * gpuhash.min_rows are not offered; gpuhash.force scales every applicable
 * GROUP BY's cost down to almost nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planner.h"
#include "optimizer/tlist.h"
#include "parser/parse_clause.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/selfuncs.h"

#include "agg.h"
#include "gpuhash.h"
#include "keys.h"
#include "scantuple.h"

#define GHA_DEVICE_STARTUP_COST		100.0

static create_upper_paths_hook_type prev_upper_paths_hook = NULL;

static Plan *plan_gpuhash_agg(PlannerInfo *root, RelOptInfo *rel,
							  CustomPath *best_path, List *tlist,
							  List *clauses, List *custom_plans);

static CustomPathMethods gpuhash_agg_path_methods = {
	.CustomName = GPUHASH_AGG_NAME,
	.PlanCustomPath = plan_gpuhash_agg,
};

CustomScanMethods gpuhash_agg_scan_methods = {
	.CustomName = GPUHASH_AGG_NAME,
	.CreateCustomScanState = gpuhash_agg_create_state,
};

/* Is the type a valid sum/avg argument, a device min/max argument? */
static bool
numeric_arg(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID ||
		type == FLOAT4OID || type == FLOAT8OID || type == NUMERICOID;
}

static bool
ordered_arg(Oid type)
{
	return (numeric_arg(type) && type != NUMERICOID) || type == DATEOID ||
		type == TIMEOID || type == TIMESTAMPOID || type == TIMESTAMPTZOID ||
		type == OIDOID;
}

/*
 * The transition function of an aggregate the CPU can run per group as
 * agg_dict.c does: strict, its state the argument's type, no initial value,
 * no final, combine-free semantics (min and max of any type).
 */
static Oid
cpu_transfn(Oid aggfnoid, Oid argtype)
{
	HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Form_pg_aggregate agg;
	Oid			result = InvalidOid;
	bool		initnull;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	agg = (Form_pg_aggregate) GETSTRUCT(tup);
	(void) SysCacheGetAttr(AGGFNOID, tup, Anum_pg_aggregate_agginitval, &initnull);
	if (agg->aggtranstype == argtype && !OidIsValid(agg->aggfinalfn) && initnull &&
		func_strict(agg->aggtransfn) && argtype != INTERNALOID)
		result = agg->aggtransfn;
	ReleaseSysCache(tup);
	return result;
}

/* Classify a supported aggregate; false when the engine cannot compute it. */
static bool
classify_aggref(Aggref *agg, GhaOp *op, Oid *argtype, Oid *transfn)
{
	char	   *name;

	if (agg->aggdistinct != NIL || agg->aggorder != NIL ||
		agg->aggkind != AGGKIND_NORMAL || agg->agglevelsup != 0 ||
		agg->aggdirectargs != NIL || agg->aggvariadic ||
		get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE)
		return false;
	name = get_func_name(agg->aggfnoid);
	if (name == NULL)
		return false;
	*transfn = InvalidOid;
	if (agg->aggstar)
	{
		*op = GHA_COUNT_STAR;
		*argtype = InvalidOid;
		return strcmp(name, "count") == 0;
	}
	if (list_length(agg->args) != 1)
		return false;
	*argtype = exprType((Node *) linitial_node(TargetEntry, agg->args)->expr);
	if (strcmp(name, "count") == 0)
		*op = GHA_COUNT;
	else if (strcmp(name, "sum") == 0 && numeric_arg(*argtype))
		*op = GHA_SUM;
	else if (strcmp(name, "avg") == 0 && numeric_arg(*argtype))
		*op = GHA_AVG;
	else if (strcmp(name, "min") == 0 && ordered_arg(*argtype))
		*op = GHA_MIN;
	else if (strcmp(name, "max") == 0 && ordered_arg(*argtype))
		*op = GHA_MAX;
	else if ((strcmp(name, "min") == 0 || strcmp(name, "max") == 0) &&
			 OidIsValid(*transfn = cpu_transfn(agg->aggfnoid, *argtype)))
		*op = GHA_CPU;
	else
		return false;
	return true;
}

/*
 * Walk an output expression: every Var outside aggregates must lie inside a
 * grouping expression, which the node reproduces; aggregates must be ours.
 */
typedef struct OutputCheck
{
	List	   *group_exprs;
	List	   *aggrefs;
	bool		ok;
	bool		cpu_aggs;		/* some aggregate runs on the CPU */
} OutputCheck;

static bool
check_output_walker(Node *node, OutputCheck *ctx)
{
	GhaOp		op;
	Oid			argtype,
				transfn;

	if (node == NULL || !ctx->ok)
		return false;
	if (list_member(ctx->group_exprs, node))
		return false;
	if (IsA(node, Aggref))
	{
		if (!classify_aggref((Aggref *) node, &op, &argtype, &transfn))
			ctx->ok = false;
		else if (!list_member(ctx->aggrefs, node))
		{
			ctx->aggrefs = lappend(ctx->aggrefs, node);
			ctx->cpu_aggs |= (op == GHA_CPU);
		}
		return false;
	}
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, GroupingFunc) ||
		IsA(node, WindowFunc) || IsA(node, SubPlan))
	{
		ctx->ok = false;
		return false;
	}
	return expression_tree_walker(node, check_output_walker, ctx);
}

/*
 * How each grouping column reaches the device's 64-bit key.  Exact columns
 * are packed when all of them fit in 64 bits; otherwise those that fit in
 * 32 are packed and the rest go through the dictionary, whose 32-bit id
 * takes the upper half.  With CPU aggregates every column goes through the
 * dictionary (its id is then the group).  Dictionary columns need the GROUP
 * BY clause's hash support.  False when some column cannot be grouped.
 */
static bool
choose_key_modes(Query *parse, bool cpu_aggs, List **keymodes, List **eqops,
				 List **keycolls)
{
	ListCell   *lc;
	int			total = 0,
				packed = 0;
	bool		all_exact = true;

	*keymodes = *eqops = *keycolls = NIL;
	foreach(lc, parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Node	   *expr = get_sortgroupclause_expr(sgc, parse->targetList);
		int			b = exprCollation(expr) == InvalidOid ? gpuhash_key_bits(exprType(expr)) : 0;

		all_exact &= (b > 0);
		total += b;
	}
	foreach(lc, parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Node	   *expr = get_sortgroupclause_expr(sgc, parse->targetList);
		int			b = exprCollation(expr) == InvalidOid ? gpuhash_key_bits(exprType(expr)) : 0;
		int			mode = GHA_KEY_DICT;

		if (!cpu_aggs && b > 0 && ((all_exact && total <= 64) || packed + b <= 32))
		{
			mode = GHA_KEY_PACKED;
			packed += b;
		}
		else if (!sgc->hashable || !OidIsValid(sgc->eqop))
			return false;
		*keymodes = lappend_int(*keymodes, mode);
		*eqops = lappend_oid(*eqops, sgc->eqop);
		*keycolls = lappend_oid(*keycolls, exprCollation(expr));
	}
	return true;
}

static void
gpuhash_upper_paths(PlannerInfo *root, UpperRelationKind stage,
					RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	GroupPathExtraData *gextra = (GroupPathExtraData *) extra;
	Path	   *input;
	List	   *group_exprs;
	OutputCheck ctx;
	ListCell   *lc;
	List	   *keymodes,
			   *eqops,
			   *keycolls;
	int			ndict = 0;
	CustomPath *cpath;
	double		groups,
				rows;
	Cost		startup;

	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_GROUP_AGG)
		return;
	if (!gpuhash_enabled || !gpuhash_enable_groupby || !gpuhash_planning_allowed())
		return;
	if (parse->groupClause == NIL || parse->groupingSets != NIL ||
		parse->constraintDeps != NIL || parse->hasTargetSRFs ||
		gextra == NULL || gextra->patype != PARTITIONWISE_AGGREGATE_NONE)
		return;
	input = input_rel->cheapest_total_path;
	if (input == NULL || input->param_info != NULL)
		return;

	group_exprs = get_sortgrouplist_exprs(parse->groupClause, parse->targetList);
	if (list_length(group_exprs) > 8)
		return;

	ctx.group_exprs = group_exprs;
	ctx.aggrefs = NIL;
	ctx.ok = true;
	ctx.cpu_aggs = false;
	check_output_walker((Node *) output_rel->reltarget->exprs, &ctx);
	check_output_walker(gextra->havingQual, &ctx);
	if (!ctx.ok)
		return;
	if (!choose_key_modes(parse, ctx.cpu_aggs, &keymodes, &eqops, &keycolls))
		return;
	foreach(lc, keymodes)
		ndict += lfirst_int(lc) == GHA_KEY_DICT;

	rows = input->rows;
	if (!gpuhash_force && rows < (double) gpuhash_min_rows)
		return;
	groups = estimate_num_groups(root, group_exprs, rows, NULL, NULL);

	startup = input->total_cost +
		rows * 0.5 * cpu_operator_cost *
		(list_length(group_exprs) + list_length(ctx.aggrefs)) +
		GHA_DEVICE_STARTUP_COST * cpu_operator_cost +
		gpuhash_engine_open_cost(false);
	/* dictionary columns are hashed and compared on the CPU, as HashAgg does */
	if (ndict > 0)
		startup += rows * cpu_operator_cost * (ndict + (ctx.cpu_aggs ? 1 : 0));

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	cpath->path.pathtarget = output_rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = output_rel->consider_parallel && input->parallel_safe &&
		gextra->target_parallel_safe;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = groups;
	cpath->path.startup_cost = startup;
	cpath->path.total_cost = startup + groups * cpu_tuple_cost;
	if (gpuhash_force)
	{
		cpath->path.startup_cost *= GPUHASH_FORCED_COST_SCALE;
		cpath->path.total_cost *= GPUHASH_FORCED_COST_SCALE;
	}
	cpath->path.pathkeys = NIL;
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = list_make1(input);
	/* havingQual is already an implicit-AND list here */
	cpath->custom_private = list_make5(group_exprs, ctx.aggrefs,
									   (List *) gextra->havingQual, keymodes,
									   list_make2(eqops, keycolls));
	cpath->methods = &gpuhash_agg_path_methods;
	add_path(output_rel, &cpath->path);
}

static Plan *
plan_gpuhash_agg(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				 List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *input = linitial(custom_plans);
	List	   *group_exprs = linitial(best_path->custom_private);
	List	   *aggrefs = lsecond(best_path->custom_private);
	List	   *having = lthird(best_path->custom_private);
	List	   *keymodes = lfourth(best_path->custom_private);
	List	   *eqops = linitial(list_nth(best_path->custom_private, 4));
	List	   *keycolls = lsecond(list_nth(best_path->custom_private, 4));
	List	   *transfns = NIL,
			   *aggcolls = NIL;
	List	   *scan_tlist = NIL;
	List	   *ops = NIL,
			   *argtypes = NIL,
			   *keytypes = NIL,
			   *keypos = NIL,
			   *args = NIL,
			   *filters = NIL,
			   *sides,
			   *attnos;
	ListCell   *lc,
			   *lc2;
	int			i;

	foreach(lc, group_exprs)
	{
		scan_tlist = gpuhash_scan_tlist_add_expr(scan_tlist, lfirst(lc));
		keytypes = lappend_oid(keytypes, exprType(lfirst(lc)));
		keypos = lappend_int(keypos, tlist_member(lfirst(lc), scan_tlist)->resno);
	}
	foreach(lc, aggrefs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);
		GhaOp		op;
		Oid			argtype,
					transfn;

		if (!classify_aggref(agg, &op, &argtype, &transfn))
			elog(ERROR, "gpuhash: unsupported aggregate in a GpuHashAgg plan");
		transfns = lappend_oid(transfns, transfn);
		aggcolls = lappend_oid(aggcolls, agg->inputcollid);
		scan_tlist = gpuhash_scan_tlist_add_expr(scan_tlist, (Expr *) agg);
		ops = lappend_int(ops, op);
		argtypes = lappend_oid(argtypes, argtype);
		args = lappend(args, agg->aggstar ? (Expr *) makeConst(INT8OID, -1, InvalidOid, 8,
															  Int64GetDatum(0), false, true)
					   : linitial_node(TargetEntry, agg->args)->expr);
		filters = lappend(filters, agg->aggfilter ? agg->aggfilter
						  : (Expr *) makeBoolConst(true, false));
	}
	scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) args);
	scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) filters);
	gpuhash_scan_tlist_map(scan_tlist, input, NULL, &sides, &attnos);

	/* grouping columns and argument Vars come from the input; aggregates don't */
	i = 0;
	forboth(lc, sides, lc2, scan_tlist)
	{
		bool		is_agg = IsA(lfirst_node(TargetEntry, lc2)->expr, Aggref);

		if (is_agg)
			lfirst_int(lc) = GH_SIDE_NONE;
		else if (lfirst_int(lc) == GH_SIDE_NONE)
			elog(ERROR, "gpuhash: grouping input column %d not produced by the input plan", i + 1);
		i++;
	}

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = having;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = list_make3(group_exprs, args, filters);
	cscan->custom_private = list_make5(ops, argtypes, keytypes, sides, attnos);
	cscan->custom_private = lappend(cscan->custom_private, keypos);
	cscan->custom_private = lappend(cscan->custom_private, keymodes);
	cscan->custom_private = lappend(cscan->custom_private, eqops);
	cscan->custom_private = lappend(cscan->custom_private, keycolls);
	cscan->custom_private = lappend(cscan->custom_private, transfns);
	cscan->custom_private = lappend(cscan->custom_private, aggcolls);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = NULL;
	cscan->methods = &gpuhash_agg_scan_methods;
	(void) root;
	(void) rel;
	(void) clauses;
	return &cscan->scan.plan;
}

void
gpuhash_agg_init(void)
{
	RegisterCustomScanMethods(&gpuhash_agg_scan_methods);
	prev_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = gpuhash_upper_paths;
}
