/*-------------------------------------------------------------------------
 *
 * agg_path.c
 *	  Planner half of GpuHashAgg: offer CustomPaths for GROUP BY (plain,
 *	  parallel, and fused with the join below) and turn the chosen one into a
 *	  CustomScan plan.
 *
 * INTERFACE ROUTINES
 *		gpuhash_agg_init		install the hook, register the scan methods
 *
 * What is offered, the three shapes and the cost model are described in
 * src/README ("Planner: GpuHashAgg", "The cost model").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_am.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
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
#include "service.h"

#define GHA_DEVICE_STARTUP_COST		100.0
/* device work per joined pair of a fused join, in cpu_operator_cost */
#define GHA_DEVICE_PAIR_FACTOR		0.05
/* keeping a fused join's inner row (arrays, shared copy, device build) */
#define GHA_INNER_KEEP_COST			cpu_operator_cost

/* The inputs of a fused path: the join (agg_fuse.c), its inner path, the pairs. */
typedef struct GhaFuseInputs
{
	GhaFuseJoin *fj;
	Path	   *inner;
	double		pairs;
	bool		shared;			/* inner is partial: its processes share it */
	double		inner_rows;		/* the whole inner side's rows */
	List	   *nullable;		/* per grouping column: needs a NULL flag (1) or not */
} GhaFuseInputs;

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

/*
 * The name of agg's function where it is one of PostgreSQL's own, an
 * ordinary aggregate of this query level without ORDER BY, direct or
 * variadic arguments; else NULL.
 */
char *
gpuhash_agg_catalog_name(Aggref *agg)
{
	if (agg->aggorder != NIL || agg->aggkind != AGGKIND_NORMAL || agg->agglevelsup != 0 ||
		agg->aggdirectargs != NIL || agg->aggvariadic ||
		get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE)
		return NULL;
	return get_func_name(agg->aggfnoid);
}

/* Classify a supported aggregate; false when the engine cannot compute it. */
bool
gpuhash_agg_classify(Aggref *agg, GhaOp *op, Oid *argtype, Oid *transfn)
{
	char	   *name;

	if (agg->aggdistinct != NIL || (name = gpuhash_agg_catalog_name(agg)) == NULL)
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

static bool check_output_walker(Node *node, OutputCheck *ctx);

/*
 * The aggregates an output expression (a target list, HAVING) needs, added
 * to *aggrefs; false if it reads a column outside the grouping expressions
 * or an aggregate gpuhash does not compute.  *cpu_aggs: one of them runs on
 * the CPU (GHA_CPU).
 */
bool
gpuhash_agg_output_aggrefs(Node *node, List *group_exprs, List **aggrefs, bool *cpu_aggs)
{
	OutputCheck ctx;

	ctx.group_exprs = group_exprs;
	ctx.aggrefs = *aggrefs;
	ctx.ok = true;
	ctx.cpu_aggs = *cpu_aggs;
	check_output_walker(node, &ctx);
	*aggrefs = ctx.aggrefs;
	*cpu_aggs = ctx.cpu_aggs;
	return ctx.ok;
}

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
		if (!gpuhash_agg_classify((Aggref *) node, &op, &argtype, &transfn))
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
 * May expr be a dictionary grouping column?  The dictionary gives every
 * group of equal values one code and returns the first value it saw for
 * the code, so equal values must look alike: 1 and 1.00 (numeric), '1 day'
 * and '24 hours' (interval), 0 and -0 (float8) are equal, and each SQL
 * group must return its own.  The type's B-tree operator class says so as
 * it does for index deduplication (BTEQUALIMAGE_PROC, _bt_allequalimage);
 * a numeric of a declared scale looks alike when equal.  (Where every
 * grouping column is in the dictionary, a code is a group, and its first
 * value the group's first row's, as PostgreSQL shows it.)
 */
static bool
dict_key_ok(Node *expr)
{
	Oid			type = exprType(expr);
	Oid			opclass,
				opfamily,
				opcintype,
				proc;

	if (type == NUMERICOID && exprTypmod(expr) >= 0)
		return true;
	opclass = GetDefaultOpClass(type, BTREE_AM_OID);
	if (!OidIsValid(opclass))
		return false;
	opfamily = get_opclass_family(opclass);
	opcintype = get_opclass_input_type(opclass);
	proc = get_opfamily_proc(opfamily, opcintype, opcintype, BTEQUALIMAGE_PROC);
	return OidIsValid(proc) &&
		DatumGetBool(OidFunctionCall1Coll(proc, exprCollation(expr),
										  ObjectIdGetDatum(opcintype)));
}

/*
 * How each grouping column reaches the device's 64-bit key.  Exact columns
 * are packed when all of them fit in 64 bits; otherwise those that fit in
 * 32 are packed and the rest go through the dictionary, whose 32-bit id
 * takes the upper half.  With CPU aggregates (all_dict) every column goes
 * through the dictionary (its id is then the group), and so it does where a
 * dictionary column's equal values may look different (dict_key_ok): the
 * dictionary returns a code's first value, which is then its group's.
 * Dictionary columns need the GROUP BY clause's hash support.  False when
 * some column cannot be grouped.
 */
static bool
choose_key_modes(List *groupClause, List *targetList, bool all_dict, List **keymodes,
				 List **eqops, List **keycolls)
{
	ListCell   *lc;
	int			total = 0,
				packed = 0,
				i = 0;
	bool		all_exact = true;
	int		   *bits = palloc(sizeof(int) * Max(list_length(groupClause), 1));

	*keymodes = *eqops = *keycolls = NIL;
	foreach(lc, groupClause)
	{
		Node	   *expr = get_sortgroupclause_expr(lfirst(lc), targetList);

		bits[i] = exprCollation(expr) == InvalidOid ? gpuhash_key_bits(exprType(expr)) : 0;
		all_exact &= (bits[i] > 0);
		total += bits[i++];
	}
	i = 0;
	foreach(lc, groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Node	   *expr = get_sortgroupclause_expr(sgc, targetList);
		int			b = bits[i++];
		int			mode = GHA_KEY_DICT;

		if (!all_dict && b > 0 && ((all_exact && total <= 64) || packed + b <= 32))
		{
			mode = GHA_KEY_PACKED;
			packed += b;
		}
		else if (!sgc->hashable || !OidIsValid(sgc->eqop))
			return false;
		else if (!all_dict && !dict_key_ok(expr))
		{
			/* every column through the dictionary: its id is then the group */
			list_free(*keymodes);
			list_free(*eqops);
			list_free(*keycolls);
			pfree(bits);
			return choose_key_modes(groupClause, targetList, true, keymodes, eqops, keycolls);
		}
		*keymodes = lappend_int(*keymodes, mode);
		*eqops = lappend_oid(*eqops, sgc->eqop);
		*keycolls = lappend_oid(*keycolls, exprCollation(expr));
	}
	return true;
}

/*
 * Will the processes of a partial path feed a pool in the GPU service,
 * as agg_pool.c decides at run time (the service is running, pools are
 * on, no dictionary column, no CPU aggregate, no numeric sum or average
 * of an argument without a declared precision)?  Then no partial group
 * crosses the Gather: the final node takes the groups from the service.
 */
static bool
pool_planned(List *common, int ndict, bool cpu_aggs)
{
	ListCell   *lc;

	if (!gpuhash_enable_pool || ndict > 0 || cpu_aggs || !gpuhash_service_ready())
		return false;
	foreach(lc, lsecond(common))
	{
		GhaOp		op;
		Oid			argtype,
					transfn;
		Aggref	   *agg = lfirst_node(Aggref, lc);
		int			first,
					count;

		if (!gpuhash_agg_classify(agg, &op, &argtype, &transfn))
			return false;
		/* a numeric sum pools where its argument's declared precision fixes its columns */
		if ((op == GHA_SUM || op == GHA_AVG) && argtype == NUMERICOID &&
			(list_length(agg->args) != 1 ||
			 !gha_numeric_limb_range(exprTypmod((Node *) linitial_node(TargetEntry, agg->args)->expr),
									 &first, &count)))
			return false;
	}
	return true;
}

/*
 * The dictionary (agg_dict.c) is PostgreSQL's own grouping hash table of
 * the columns without a packed encoding, on the CPU: charged as PostgreSQL
 * charges a HashAggregate of rows rows by ndict columns into groups groups,
 * but for returning the groups (a hash and comparisons a row, and where the
 * table outgrows hash_mem, what spilling it would cost: a table of millions
 * of groups is as slow in memory, every lookup a cache miss).  Measured on
 * one H100: 10^7 rows into 9.5 million groups of two int8 columns, 23.4 s
 * through the dictionary against PostgreSQL's 8.4.
 */
static Cost
dictionary_cost(PlannerInfo *root, double rows, int width, int ndict, double groups)
{
	Path		hashed;

	cost_agg_compat(&hashed, root, AGG_HASHED, NULL, ndict, groups, NIL, 0, 0, rows, width);
	return Max(hashed.total_cost - groups * cpu_tuple_cost, 0);
}

/*
 * A GpuHashAgg path in one of the modes over input, producing target.
 * common holds what every mode shares (see gpuhash_upper_paths), parts the
 * partial values of each aggregate for the parallel modes.
 */
static Path *
make_agg_path(PlannerInfo *root, RelOptInfo *output_rel, Path *input, PathTarget *target,
			  List *common, int mode, List *parts, double groups, int ndict,
			  bool cpu_aggs, bool forced, const GhaFuseInputs *fused)
{
	CustomPath *cpath = makeNode(CustomPath);
	double		rows = input->rows;
	int			ncols = list_length(linitial(common)) + list_length(lsecond(common));
	Cost		startup = 0;

	if (fused)
	{
		/*
		 * Both sides are read, with a join key each (the inner side whole, or
		 * a share of it when shared); every process keeps the whole inner
		 * side and builds its table, so the smaller side is built; the pairs
		 * stay on the device.
		 */
		rows += fused->inner->rows;
		startup = fused->inner->total_cost + rows * cpu_operator_cost +
			fused->inner_rows * GHA_INNER_KEEP_COST +
			fused->pairs * GHA_DEVICE_PAIR_FACTOR * cpu_operator_cost;
	}
	startup += input->total_cost +
		rows * 0.5 * cpu_operator_cost * ncols +
		GHA_DEVICE_STARTUP_COST * cpu_operator_cost +
		gpuhash_engine_open_cost(mode == GHA_MODE_PARTIAL);
	if (ndict > 0)
		startup += dictionary_cost(root, rows, input->pathtarget->width, ndict, groups) +
			(cpu_aggs ? rows * cpu_operator_cost : 0);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	cpath->path.pathtarget = target;
	cpath->path.param_info = NULL;
	/*
	 * parallel-aware: a fused join reading its inner side in shares, and any
	 * partial node whose engine columns are the same in every process (no
	 * dictionary, no CPU aggregate), which may feed a pool (agg_pool.c)
	 */
	cpath->path.parallel_aware = (fused != NULL && fused->shared) ||
		(mode == GHA_MODE_PARTIAL && fused == NULL && ndict == 0 && !cpu_aggs);
	cpath->path.parallel_safe = mode == GHA_MODE_PARTIAL ||
		(mode == GHA_MODE_FULL && output_rel->consider_parallel && input->parallel_safe);
	cpath->path.parallel_workers = mode == GHA_MODE_PARTIAL ? input->parallel_workers : 0;
	/* pooled, the partial nodes return nothing (agg_pool.c) */
	if (mode == GHA_MODE_PARTIAL && cpath->path.parallel_aware &&
		pool_planned(common, ndict, cpu_aggs))
		groups = 1;
	cpath->path.rows = groups;
	cpath->path.startup_cost = startup;
	cpath->path.total_cost = startup + groups * cpu_tuple_cost;
	SetPathDisabledNodes(&cpath->path, PathDisabledNodes(input) +
						 (fused ? PathDisabledNodes(fused->inner) : 0));
	if (forced)
		gpuhash_scale_forced_cost(&cpath->path);
	/* forced, a fused join beats our join and aggregation stacked, each forced */
	if (forced && fused)
		gpuhash_scale_forced_cost(&cpath->path);
	cpath->path.pathkeys = NIL;
	cpath->flags = mode == GHA_MODE_PARTIAL ? 0 : CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = fused ? list_make2(input, fused->inner) : list_make1(input);
	cpath->custom_private = lappend(lappend(list_copy(common), makeInteger(mode)), parts);
	cpath->custom_private = lappend(cpath->custom_private,
									fused ? list_make2(fused->fj->outer_keys,
													   fused->fj->inner_keys) : NIL);
	cpath->custom_private = lappend(cpath->custom_private, fused ? fused->nullable : NIL);
	cpath->methods = &gpuhash_agg_path_methods;
	return &cpath->path;
}

/*
 * The target of a partial GpuHashAgg: the grouping expressions, then each
 * aggregate's partial values (new Aggrefs, returned per aggregate in *parts).
 */
static PathTarget *
partial_target(PlannerInfo *root, List *common, OutputCheck *ctx, List **parts)
{
	PathTarget *ptarget = create_empty_pathtarget();
	ListCell   *lc;
	int			id = 0;

	*parts = NIL;
	foreach(lc, linitial(common))
		add_column_to_pathtarget(ptarget, lfirst(lc), 0);
	foreach(lc, ctx->aggrefs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);
		GhaOp		op;
		Oid			argtype,
					transfn;
		List	   *mine = NIL;

		(void) gpuhash_agg_classify(agg, &op, &argtype, &transfn);
		for (int part = 0; part < 2; part++)
		{
			Oid			t = gpuhash_agg_partial_type(op, argtype, part);
			Aggref	   *pa;

			if (!OidIsValid(t))
				break;
			pa = copyObject(agg);
			pa->aggtype = t;
			pa->aggsplit = AGGSPLIT_INITIAL_SERIAL;
			pa->aggno = pa->aggtransno = id++;	/* each partial value distinct */
			mine = lappend(mine, pa);
			add_column_to_pathtarget(ptarget, (Expr *) pa, 0);
		}
		*parts = lappend(*parts, mine);
	}
	set_pathtarget_cost_width(root, ptarget);
	return ptarget;
}

/*
 * In parallel: every worker aggregates its share of a partial input into
 * partial values per group (the partial path), a Gather collects them, and
 * a final GpuHashAgg combines them (always possible for our aggregates).
 * fused: the partial nodes do their join (forced, that plan is preferred to
 * our partial join and aggregation stacked, as make_agg_path does).
 */
static void
add_final_path(PlannerInfo *root, RelOptInfo *output_rel, PathTarget *target, Path *partial,
			   PathTarget *ptarget, List *parts, List *common, OutputCheck *ctx,
			   double groups, int ndict, bool fused)
{
	double		pgroups = partial->rows;
	Path	   *gather,
			   *final;

	gather = (Path *) create_gather_path(root, output_rel, partial, ptarget, NULL, &pgroups);
	gather->rows = pgroups * (partial->parallel_workers + 1);
	final = make_agg_path(root, output_rel, gather, target, common,
						  GHA_MODE_FINAL, parts, groups, ndict, ctx->cpu_aggs,
						  gpuhash_force, NULL);
	if (gpuhash_force && fused)
		gpuhash_scale_forced_cost(final);
	add_path(output_rel, final);
}

/*
 * The GpuHashAgg paths over one input: the whole aggregation, and where
 * partial_input is given, the parallel form.
 */
static void
add_agg_paths(PlannerInfo *root, RelOptInfo *output_rel, PathTarget *target, Path *input,
			  Path *partial_input, List *common, OutputCheck *ctx, double groups, int ndict)
{
	/* as for joins: forced, a parallel plan's alternative keeps its cost */
	add_path(output_rel,
			 make_agg_path(root, output_rel, input, target, common,
						   GHA_MODE_FULL, NIL, groups, ndict, ctx->cpu_aggs,
						   gpuhash_force && partial_input == NULL, NULL));
	if (partial_input != NULL)
	{
		List	   *parts;
		PathTarget *ptarget = partial_target(root, common, ctx, &parts);

		add_final_path(root, output_rel, target,
					   make_agg_path(root, output_rel, partial_input, ptarget, common,
									 GHA_MODE_PARTIAL, parts,
									 Min(groups, partial_input->rows), ndict,
									 ctx->cpu_aggs, gpuhash_force, NULL),
					   ptarget, parts, common, ctx, groups, ndict, false);
	}
}

/*
 * Bits a fused node's key takes: each packed column's, a NULL flag per packed
 * column that may be NULL (nullable), and the dictionary id's 32 if there is
 * a dictionary.
 */
static int
fused_key_bits(List *group_exprs, List *keymodes, List *nullable)
{
	ListCell   *lc,
			   *lc2,
			   *lc3;
	int			bits = 0;
	bool		dict = false;

	forthree(lc, group_exprs, lc2, keymodes, lc3, nullable)
	{
		if (lfirst_int(lc2) == GHA_KEY_DICT)
			dict = true;
		else
			bits += gpuhash_key_bits(exprType(lfirst(lc))) + lfirst_int(lc3);
	}
	return bits + (dict ? 32 : 0);
}

/*
 * The key modes of a fused node: those of the single-input node (keymodes)
 * if they fit its key (fused_key_bits at most 64) with every dictionary
 * column on one side; otherwise packed columns of one side (the
 * dictionary's, or the inner side, then the outer) moved to the dictionary,
 * widest first, until they fit.  NIL where nothing fits, or some grouping
 * expression reads both sides.  hashable: per column, can it go to the
 * dictionary?  *nullable: per column, 1 if it may be NULL (it then needs a
 * NULL flag when packed), 0 if it never is (gpuhash_fuse_never_null).
 */
static List *
fused_key_modes(GhaFuseJoin *fj, List *group_exprs, List *keymodes, List *hashable,
				List **nullable)
{
	int			n = list_length(group_exprs);
	int		   *side = palloc(sizeof(int) * Max(n, 1));
	int			dict_side = GH_SIDE_NONE;

	*nullable = NIL;
	for (int i = 0; i < n; i++)
		*nullable = lappend_int(*nullable,
								!gpuhash_fuse_never_null(fj->root, list_nth(group_exprs, i)));
	for (int i = 0; i < n; i++)
	{
		side[i] = gpuhash_fuse_side(fj, list_nth(group_exprs, i));
		/* a fused node evaluates it for every row of its side, PostgreSQL for joined rows */
		if (side[i] == GHA_SIDE_BOTH || gpuhash_expr_may_fail(list_nth(group_exprs, i)))
			return NIL;
		side[i] = Max(side[i], 0);	/* constants: the outer side */
		if (list_nth_int(keymodes, i) != GHA_KEY_DICT)
			continue;
		if (dict_side != GH_SIDE_NONE && dict_side != side[i])
			return NIL;
		dict_side = side[i];
	}
	if (fused_key_bits(group_exprs, keymodes, *nullable) <= 64)
		return keymodes;

	for (int s = 1; s >= 0; s--)
	{
		List	   *modes = list_copy(keymodes);

		if (dict_side != GH_SIDE_NONE && s != dict_side)
			continue;
		while (fused_key_bits(group_exprs, modes, *nullable) > 64)
		{
			int			widest = -1,
						wbits = 0;

			for (int i = 0; i < n; i++)
			{
				int			b = gpuhash_key_bits(exprType(list_nth(group_exprs, i)));

				if (side[i] == s && list_nth_int(modes, i) == GHA_KEY_PACKED &&
					list_nth_int(hashable, i) && b > wbits)
				{
					widest = i;
					wbits = b;
				}
			}
			if (widest < 0)
				break;
			list_nth_cell(modes, widest)->int_value = GHA_KEY_DICT;
		}
		if (fused_key_bits(group_exprs, modes, *nullable) <= 64)
			return modes;
	}
	return NIL;
}

/*
 * Does every aggregate (argument and FILTER) read one side of the join, and
 * none that may fail (a fused node evaluates them for every row of their
 * side, PostgreSQL for the joined rows alone)?
 */
static bool
aggregates_one_sided(GhaFuseJoin *fj, OutputCheck *ctx)
{
	ListCell   *lc;

	foreach(lc, ctx->aggrefs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);
		int			arg = gpuhash_fuse_side(fj, (Node *) agg->args);
		int			filter = gpuhash_fuse_side(fj, (Node *) agg->aggfilter);

		if (arg == GHA_SIDE_BOTH || filter == GHA_SIDE_BOTH ||
			(arg != GH_SIDE_NONE && filter != GH_SIDE_NONE && arg != filter) ||
			gpuhash_expr_may_fail((Node *) agg->args) ||
			gpuhash_expr_may_fail((Node *) agg->aggfilter))
			return false;
	}
	return true;
}

/*
 * May a parallel fused node share its inner side (agg_shared.c)?  What each
 * process publishes must have the same layout in all: no dictionary column
 * (its ids are each process's own) and no numeric sum or average (their
 * columns appear as the values need them) on the inner side.
 */
static bool
shared_inner_ok(GhaFuseJoin *fj, List *group_exprs, List *modes, OutputCheck *ctx)
{
	ListCell   *lc,
			   *lc2;

	forboth(lc, group_exprs, lc2, modes)
		if (lfirst_int(lc2) == GHA_KEY_DICT && gpuhash_fuse_side(fj, lfirst(lc)) == 1)
			return false;
	foreach(lc, ctx->aggrefs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);
		GhaOp		op;
		Oid			argtype,
					transfn;

		(void) gpuhash_agg_classify(agg, &op, &argtype, &transfn);
		if ((op == GHA_SUM || op == GHA_AVG) && argtype == NUMERICOID &&
			gpuhash_fuse_side(fj, (Node *) agg->args) == 1)
			return false;
	}
	return true;
}

/* A partial fused path over these inputs, kept if the cheapest so far. */
static void
consider_partial(PlannerInfo *root, RelOptInfo *output_rel, Path *partial_outer,
				 PathTarget *ptarget, List *fcommon, List *parts, double groups, int fdict,
				 const GhaFuseInputs *fused, Path **best)
{
	Path	   *partial = make_agg_path(root, output_rel, partial_outer, ptarget, fcommon,
										GHA_MODE_PARTIAL, parts,
										Min(groups, partial_outer->rows), fdict, false,
										gpuhash_force, fused);

	if (*best == NULL || partial->total_cost < (*best)->total_cost)
		*best = partial;
}

/*
 * Fused paths for each join the input relation could be made by.  Their
 * parallel forms compete here, before the Gather: above it, the Gather's
 * start-up cost would drown the difference between them (forced plans cost
 * almost nothing below it).
 */
static void
add_fused_paths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
				PathTarget *target, GroupPathExtraData *gextra, List *common,
				OutputCheck *ctx, List *hashable, double groups, int ndict)
{
	ListCell   *lc;
	List	   *parts = NIL;
	PathTarget *ptarget = NULL;
	Path	   *best_partial = NULL;
	List	   *wholes = NIL;

	if (ctx->cpu_aggs)
		return;
	foreach(lc, gpuhash_fuse_joins(root, input_rel))
	{
		GhaFuseJoin *fj = lfirst(lc);
		GhaFuseInputs *whole,
					part;
		Path	   *outer = fj->outerrel->cheapest_total_path;
		Path	   *inner = fj->innerrel->cheapest_total_path;
		List	   *modes;
		List	   *fcommon;
		List	   *nullable;
		int			fdict = 0;
		ListCell   *lc2;

		if (outer == NULL || inner == NULL || outer->param_info != NULL ||
			inner->param_info != NULL || !aggregates_one_sided(fj, ctx))
			continue;
		if (!gpuhash_force && outer->rows + inner->rows < (double) gpuhash_min_rows)
			continue;
		modes = fused_key_modes(fj, linitial(common), lfourth(common), hashable, &nullable);
		if (modes == NIL && linitial(common) != NIL)
			continue;
		foreach(lc2, modes)
			fdict += lfirst_int(lc2) == GHA_KEY_DICT;
		fcommon = list_copy(common);
		lfourth(fcommon) = modes;

		whole = palloc(sizeof(GhaFuseInputs));
		whole->fj = part.fj = fj;
		whole->inner = inner;
		whole->pairs = input_rel->rows;
		whole->shared = false;
		whole->inner_rows = fj->innerrel->rows;
		whole->nullable = part.nullable = nullable;
		wholes = lappend(wholes, list_make3(whole, fcommon, makeInteger(fdict)));

		if (output_rel->consider_parallel && gextra->target_parallel_safe &&
			input_rel->consider_parallel && fj->outerrel->partial_pathlist != NIL &&
			fj->outerrel->rows > 0 &&
			((Path *) linitial(fj->outerrel->partial_pathlist))->param_info == NULL)
		{
			Path	   *partial_outer = linitial(fj->outerrel->partial_pathlist);
			Path	   *partial_inner = NULL;

			if (ptarget == NULL)
				ptarget = partial_target(root, common, ctx, &parts);
			part.pairs = input_rel->rows * Min(1.0, partial_outer->rows / fj->outerrel->rows);
			part.inner_rows = fj->innerrel->rows;

			/* every process reads the whole inner side */
			part.inner = get_cheapest_parallel_safe_total_inner(fj->innerrel->pathlist);
			part.shared = false;
			if (part.inner != NULL)
				consider_partial(root, output_rel, partial_outer, ptarget, fcommon, parts,
								 groups, fdict, &part, &best_partial);

			/* or each reads a share of it, and they share what they read */
			if (fj->innerrel->partial_pathlist != NIL)
				partial_inner = linitial(fj->innerrel->partial_pathlist);
			if (partial_inner != NULL && partial_inner->param_info == NULL &&
				shared_inner_ok(fj, linitial(fcommon), modes, ctx))
			{
				part.inner = partial_inner;
				part.shared = true;
				consider_partial(root, output_rel, partial_outer, ptarget, fcommon, parts,
								 groups, fdict, &part, &best_partial);
			}
		}
	}
	if (best_partial != NULL)
		add_final_path(root, output_rel, target, best_partial, ptarget, parts, common, ctx,
					   groups, ndict, true);

	/* as for joins: forced, a parallel plan's alternative keeps its cost */
	foreach(lc, wholes)
	{
		List	   *w = lfirst(lc);
		GhaFuseInputs *whole = linitial(w);

		add_path(output_rel,
				 make_agg_path(root, output_rel, whole->fj->outerrel->cheapest_total_path,
							   target, lsecond(w), GHA_MODE_FULL, NIL, groups,
							   intVal(lthird(w)), false, gpuhash_force && best_partial == NULL,
							   whole));
	}
}

static void
gpuhash_upper_paths(PlannerInfo *root, UpperRelationKind stage,
					RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	GroupPathExtraData *gextra = (GroupPathExtraData *) extra;
	GroupPathExtraData distinct_extra;
	PathTarget *target = output_rel->reltarget;
	Path	   *input;
	List	   *groupClause,
			   *group_exprs;
	OutputCheck ctx;
	ListCell   *lc;
	List	   *keymodes,
			   *eqops,
			   *keycolls;
	int			ndict = 0;
	double		groups;
	List	   *common;
	Path	   *partial_input;

	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_GROUP_AGG && stage != UPPERREL_DISTINCT)
		return;
	if (!gpuhash_enabled || !gpuhash_enable_groupby || !gpuhash_planning_allowed())
		return;
	if (stage == UPPERREL_DISTINCT)
	{
		/*
		 * A SELECT DISTINCT without aggregates or a GROUP BY (DISTINCT ON
		 * keeps an order): a GROUP BY of its columns with no aggregate.
		 */
		if (parse->distinctClause == NIL || parse->hasDistinctOn || parse->hasAggs ||
			parse->groupClause != NIL || parse->groupingSets != NIL ||
			parse->hasWindowFuncs || parse->hasTargetSRFs)
			return;
		if (input_rel->cheapest_total_path == NULL)
			return;
		/* PostgreSQL's distinct paths return their input's columns */
		target = input_rel->cheapest_total_path->pathtarget;
		memset(&distinct_extra, 0, sizeof(distinct_extra));
		distinct_extra.target_parallel_safe = is_parallel_safe(root, (Node *) target->exprs);
		distinct_extra.patype = PARTITIONWISE_AGGREGATE_NONE;
		gextra = &distinct_extra;
		groupClause = parse->distinctClause;
	}
	else
	{
		if ((parse->groupClause == NIL && !parse->hasAggs) || parse->groupingSets != NIL ||
			parse->constraintDeps != NIL || parse->hasTargetSRFs ||
			gextra == NULL || gextra->patype != PARTITIONWISE_AGGREGATE_NONE)
			return;

		/*
		 * The grouping the planner plans (pg_compat.h).  A GROUP BY of
		 * constants alone has no grouping column left and no group where
		 * there is no row: PostgreSQL's.
		 */
		groupClause = PlannerGroupClause(root);
		if (parse->groupClause != NIL && groupClause == NIL)
			return;
	}
	input = input_rel->cheapest_total_path;
	if (input == NULL || input->param_info != NULL)
		return;

	group_exprs = get_sortgrouplist_exprs(groupClause, parse->targetList);
	if (list_length(group_exprs) > 8)
		return;

	ctx.group_exprs = group_exprs;
	ctx.aggrefs = NIL;
	ctx.ok = true;
	ctx.cpu_aggs = false;
	check_output_walker((Node *) target->exprs, &ctx);
	check_output_walker(gextra->havingQual, &ctx);
	if (!ctx.ok)
		return;
	if (!choose_key_modes(groupClause, parse->targetList, ctx.cpu_aggs, &keymodes, &eqops,
						  &keycolls))
		return;
	foreach(lc, keymodes)
		ndict += lfirst_int(lc) == GHA_KEY_DICT;

	groups = group_exprs == NIL ? 1 :
		estimate_num_groups(root, group_exprs, input->rows, NULL, NULL);
	common = list_make5(group_exprs, ctx.aggrefs, (List *) gextra->havingQual,
						keymodes, list_make2(eqops, keycolls));

	/* an aggregation over a join can do the join itself */
	if (input_rel->reloptkind == RELOPT_JOINREL && gpuhash_enable_join && gpuhash_enable_fusion)
	{
		List	   *hashable = NIL;

		foreach(lc, groupClause)
		{
			SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);

			hashable = lappend_int(hashable, sgc->hashable && OidIsValid(sgc->eqop) &&
								   dict_key_ok(get_sortgroupclause_expr(sgc, parse->targetList)));
		}
		add_fused_paths(root, input_rel, output_rel, target, gextra, common, &ctx, hashable,
						groups, ndict);
	}

	/* a plain aggregate's single group is PostgreSQL's Agg node's job */
	if (group_exprs == NIL)
		return;
	if (!gpuhash_force && input->rows < (double) gpuhash_min_rows)
		return;
	partial_input = NULL;
	if (output_rel->consider_parallel && gextra->target_parallel_safe &&
		input_rel->partial_pathlist != NIL &&
		((Path *) linitial(input_rel->partial_pathlist))->param_info == NULL)
		partial_input = linitial(input_rel->partial_pathlist);
	add_agg_paths(root, output_rel, target, input, partial_input, common, &ctx, groups, ndict);
}

/*
 * A fused node's inputs, each made to compute the grouping expressions that
 * read its side (constants: the outer side's), so that the node reads
 * grouping columns from its inputs as it does from a single input.
 */
static List *
fused_inputs(PlannerInfo *root, CustomPath *best_path, List *group_exprs,
			 List *custom_plans)
{
	Plan	   *plans[2] = {linitial(custom_plans), lsecond(custom_plans)};
	List	   *tlists[2] = {list_copy(plans[0]->targetlist),
	list_copy(plans[1]->targetlist)};
	Relids		inner_relids = ((Path *) lsecond(best_path->custom_paths))->parent->relids;
	ListCell   *lc;

	foreach(lc, group_exprs)
	{
		Expr	   *expr = lfirst(lc);
		Relids		varnos = pull_varnos(root, (Node *) expr);
		int			side = !bms_is_empty(varnos) && bms_is_subset(varnos, inner_relids);

		if (tlist_member(expr, tlists[side]))
			continue;
		tlists[side] = lappend(tlists[side],
							   makeTargetEntry((Expr *) copyObject(expr),
											   list_length(tlists[side]) + 1, NULL, false));
	}
	for (int s = 0; s < 2; s++)
		if (list_length(tlists[s]) != list_length(plans[s]->targetlist))
			plans[s] = change_plan_targetlist(plans[s], tlists[s],
											  plans[s]->parallel_safe &&
											  is_parallel_safe(root, (Node *) group_exprs));
	return list_make2(plans[0], plans[1]);
}

static Plan *
plan_gpuhash_agg(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				 List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *input = linitial(custom_plans);
	List	   *priv = best_path->custom_private;
	List	   *group_exprs = linitial(priv);
	List	   *aggrefs = lsecond(priv);
	List	   *having = lthird(priv);
	List	   *keymodes = lfourth(priv);
	List	   *eqops = linitial(list_nth(priv, 4));
	List	   *keycolls = lsecond(list_nth(priv, 4));
	int			mode = intVal(list_nth(priv, 5));
	List	   *parts = list_nth(priv, 6);
	List	   *fuse = list_nth(priv, 7);
	List	   *keynull = list_nth(priv, 8);
	Plan	   *inner = NULL;
	List	   *transfns = NIL,
			   *aggcolls = NIL;
	List	   *scan_tlist = NIL;
	List	   *ops = NIL,
			   *argtypes = NIL,
			   *keytypes = NIL,
			   *keypos = NIL,
			   *args = NIL,
			   *args2 = NIL,
			   *filters = NIL,
			   *outagg = NIL,
			   *outpart = NIL,
			   *sides,
			   *attnos;
	ListCell   *lc,
			   *lc2;
	int			i,
				a;

	if (fuse != NIL)
		custom_plans = fused_inputs(root, best_path, group_exprs, custom_plans);
	input = linitial(custom_plans);
	inner = fuse != NIL ? lsecond(custom_plans) : NULL;

	foreach(lc, group_exprs)
	{
		scan_tlist = gpuhash_scan_tlist_add_expr(scan_tlist, lfirst(lc));
		keytypes = lappend_oid(keytypes, exprType(lfirst(lc)));
		keypos = lappend_int(keypos, gpuhash_scan_tlist_find(scan_tlist, lfirst(lc)));
	}
	a = 0;
	foreach(lc, aggrefs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);
		List	   *mine = parts ? list_nth(parts, a) : NIL;
		GhaOp		op;
		Oid			argtype,
					transfn;

		if (!gpuhash_agg_classify(agg, &op, &argtype, &transfn))
			elog(ERROR, "gpuhash: unsupported aggregate in a GpuHashAgg plan");
		transfns = lappend_oid(transfns, transfn);
		aggcolls = lappend_oid(aggcolls, agg->inputcollid);
		ops = lappend_int(ops, op);
		argtypes = lappend_oid(argtypes, argtype);
		if (mode == GHA_MODE_PARTIAL)
		{
			/* computed: the partial values */
			for (int part = 0; part < list_length(mine); part++)
			{
				scan_tlist = gpuhash_scan_tlist_add_expr(scan_tlist, list_nth(mine, part));
				outagg = lappend_int(outagg, a);
				outpart = lappend_int(outpart, part);
			}
		}
		else
		{
			/* computed: the aggregate */
			scan_tlist = gpuhash_scan_tlist_add_expr(scan_tlist, (Expr *) agg);
			outagg = lappend_int(outagg, a);
			outpart = lappend_int(outpart, 0);
		}
		if (mode == GHA_MODE_FINAL)
		{
			/* read: the partial values the workers computed */
			args = lappend(args, linitial(mine));
			args2 = lappend(args2, list_length(mine) > 1 ? lsecond(mine)
							: (Expr *) makeNullConst(INT8OID, -1, InvalidOid));
			filters = lappend(filters, makeBoolConst(true, false));
		}
		else
		{
			args = lappend(args, agg->aggstar ? (Expr *) makeConst(INT8OID, -1, InvalidOid, 8,
																  Int64GetDatum(0), false, true)
						   : linitial_node(TargetEntry, agg->args)->expr);
			args2 = lappend(args2, makeNullConst(INT8OID, -1, InvalidOid));
			filters = lappend(filters, agg->aggfilter ? agg->aggfilter
							  : (Expr *) makeBoolConst(true, false));
		}
		a++;
	}
	if (mode == GHA_MODE_FINAL)
	{
		/* whole partial values, not the Vars inside them */
		foreach(lc, args)
			scan_tlist = gpuhash_scan_tlist_add_expr(scan_tlist, lfirst(lc));
		foreach(lc, args2)
			if (IsA(lfirst(lc), Aggref))
				scan_tlist = gpuhash_scan_tlist_add_expr(scan_tlist, lfirst(lc));
	}
	else
	{
		scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) args);
		scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) filters);
		scan_tlist = gpuhash_scan_tlist_add_vars(scan_tlist, (Node *) fuse);
	}
	gpuhash_scan_tlist_map(scan_tlist, input, inner, &sides, &attnos);

	/*
	 * Grouping columns and argument Vars (or partial values) come from the
	 * input; the aggregates or partial values the node computes don't.
	 */
	i = 0;
	forboth(lc, sides, lc2, scan_tlist)
	{
		if (gpuhash_agg_computed(lfirst_node(TargetEntry, lc2)->expr, mode))
			lfirst_int(lc) = GH_SIDE_NONE;
		else if (lfirst_int(lc) == GH_SIDE_NONE)
			elog(ERROR, "gpuhash: grouping input column %d not produced by the input plan", i + 1);
		i++;
	}

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = mode == GHA_MODE_PARTIAL ? NIL : having;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = list_make4(group_exprs, args, filters, args2);
	cscan->custom_exprs = lappend(cscan->custom_exprs, fuse != NIL ? linitial(fuse) : NIL);
	cscan->custom_exprs = lappend(cscan->custom_exprs, fuse != NIL ? lsecond(fuse) : NIL);
	cscan->custom_private = list_make5(ops, argtypes, keytypes, sides, attnos);
	cscan->custom_private = lappend(cscan->custom_private, keypos);
	cscan->custom_private = lappend(cscan->custom_private, keymodes);
	cscan->custom_private = lappend(cscan->custom_private, eqops);
	cscan->custom_private = lappend(cscan->custom_private, keycolls);
	cscan->custom_private = lappend(cscan->custom_private, transfns);
	cscan->custom_private = lappend(cscan->custom_private, aggcolls);
	cscan->custom_private = lappend(cscan->custom_private, makeInteger(mode));
	cscan->custom_private = lappend(cscan->custom_private, outagg);
	cscan->custom_private = lappend(cscan->custom_private, outpart);
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger(fuse != NIL ? gpuhash_resolved_table_kind() : -1));
	cscan->custom_private = lappend(cscan->custom_private, keynull);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = NULL;
	cscan->methods = &gpuhash_agg_scan_methods;
	(void) root;
	(void) rel;
	(void) clauses;
	return &cscan->scan.plan;
}

/*
 * Is this scan tuple entry one the node computes?  The aggregates, or in a
 * partial node the partial values; in a final node the partial values are
 * the input's.
 */
bool
gpuhash_agg_computed(Expr *expr, int mode)
{
	if (!IsA(expr, Aggref))
		return false;
	if (mode == GHA_MODE_PARTIAL)
		return ((Aggref *) expr)->aggsplit == AGGSPLIT_INITIAL_SERIAL;
	return ((Aggref *) expr)->aggsplit == AGGSPLIT_SIMPLE;
}

void
gpuhash_agg_init(void)
{
	RegisterCustomScanMethods(&gpuhash_agg_scan_methods);
	prev_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = gpuhash_upper_paths;
}
