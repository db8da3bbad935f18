/*-------------------------------------------------------------------------
 *
 * agg_exec.c
 *	  Executor half of GpuHashAgg: read the input, hand keys and argument
 *	  columns to the engine's hash aggregation, return one row per group.
 *
 * INTERFACE ROUTINES
 *		gpuhash_agg_create_state	CreateCustomScanState callback
 *		(BeginGpuHashAgg, ExecGpuHashAgg, EndGpuHashAgg, ReScanGpuHashAgg,
 *		 ExplainGpuHashAgg: CustomExecMethods)
 *
 * The same code serves the plain node, both halves of a parallel plan
 * (GHA_MODE_PARTIAL, GHA_MODE_FINAL) and a fused node (whose inputs
 * agg_fused_exec.c reads).  Each NULL pattern of the grouping columns is
 * aggregated by its own engine call.  The engine's results are freed by a
 * reset callback on the node's memory context.  See src/README, "Executor:
 * GpuHashAgg".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/ruleutils.h"

#include "agg_state.h"
#include "page_scan.h"
#include "gpuhash.h"
#include "keys.h"


static int	add_column(GpuHashAggState *s, gh_valtype type, int ops, bool with_nulls);
static void BeginGpuHashAgg(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *ExecGpuHashAgg(CustomScanState *node);
static void EndGpuHashAgg(CustomScanState *node);
static void ReScanGpuHashAgg(CustomScanState *node);
static void ExplainGpuHashAgg(CustomScanState *node, List *ancestors,
							  ExplainState *es);

static CustomExecMethods gpuhash_agg_exec_methods = {
	.CustomName = GPUHASH_AGG_NAME,
	.BeginCustomScan = BeginGpuHashAgg,
	.ExecCustomScan = ExecGpuHashAgg,
	.EndCustomScan = EndGpuHashAgg,
	.ReScanCustomScan = ReScanGpuHashAgg,
	.EstimateDSMCustomScan = gha_estimate_dsm,
	.InitializeDSMCustomScan = gha_initialize_dsm,
	.ReInitializeDSMCustomScan = gha_reinitialize_dsm,
	.InitializeWorkerCustomScan = gha_initialize_worker,
	.ExplainCustomScan = ExplainGpuHashAgg,
};

Node *
gpuhash_agg_create_state(CustomScan *cscan)
{
	GpuHashAggState *s = palloc0(sizeof(GpuHashAggState));

	s->pool_flush_at = PG_INT64_MAX;	/* until it feeds a pool */

	NodeSetTag(s, T_CustomScanState);
	s->css.flags = cscan->flags;
	s->css.methods = &gpuhash_agg_exec_methods;
	return (Node *) s;
}

static void
release_results(void *arg)
{
	GpuHashAggState *s = (GpuHashAggState *) arg;

	for (int i = 0; i < s->nresults; i++)
		if (!s->input_pooled || s->pool_direct) /* pooled groups point into the input */
			gpuhash_op_groups_free(&s->eng, s->results[i]);
	s->nresults = 0;
	s->emit_groups = NULL;
	s->empty_row = false;
	gpuhash_op_table_free(s->table);
	s->table = NULL;
}

/*
 * An earlier aggregate whose engine column aggregate a (a sum, average,
 * minimum or maximum, not of a numeric) can share, or -1: the same
 * argument and FILTER, the same side of a fused join and the same column
 * type, so that both store the same value and NULL flag in every row
 * (sum, min and max of v read one column of v, which its first aggregate
 * fills; agg_exec.c's readers take the arrays of their own operation).
 */
static int
shared_column(GpuHashAggState *s, int a, List *args, List *filters, gh_valtype type)
{
	if (s->mode == GHA_MODE_FINAL || s->ops[a] == GHA_COUNT || s->ops[a] == GHA_COUNT_STAR)
		return -1;
	for (int b = 0; b < a; b++)
	{
		int			c = s->agg_col[b];

		if (c < 0 || s->col_owner[c] != b || s->numcols[b] != NULL ||
			s->ops[b] == GHA_COUNT || s->ops[b] == GHA_COUNT_STAR ||
			s->cols[c].type != type || s->intypes[b] != s->intypes[a] ||
			(s->fused_kind >= 0 && s->agg_side[b] != s->agg_side[a]))
			continue;
		if (equal(list_nth(args, a), list_nth(args, b)) &&
			equal(list_nth(filters, a), list_nth(filters, b)))
			return b;
	}
	return -1;
}

/*
 * A final node right above a Gather of a partial GpuHashAgg made from the
 * same grouping columns and aggregates (agg_path.c makes both from one
 * list): the child whose pool this node may finish itself (gha_pool_take),
 * returning its groups without their passing through the Gather.  NULL if
 * the two differ in any way that matters to reading the child's groups.
 */
static GpuHashAggState *
pool_child_of(GpuHashAggState *s)
{
	PlanState  *child;
	GpuHashAggState *c;

	if (s->mode != GHA_MODE_FINAL || !IsA(s->input_ps, GatherState))
		return NULL;
	child = outerPlanState(s->input_ps);
	if (child == NULL || !IsA(child, CustomScanState) ||
		((CustomScanState *) child)->methods != &gpuhash_agg_exec_methods)
		return NULL;
	c = (GpuHashAggState *) child;
	if (c->mode != GHA_MODE_PARTIAL || c->nkeys != s->nkeys || c->naggs != s->naggs ||
		c->dict != NULL || s->dict != NULL)
		return NULL;
	for (int i = 0; i < s->nkeys; i++)
		if (c->keytypes[i] != s->keytypes[i] || s->key_mode[i] == GHA_KEY_DICT ||
			c->key_mode[i] == GHA_KEY_DICT)
			return NULL;
	for (int a = 0; a < s->naggs; a++)
		if (c->ops[a] != s->ops[a] || c->agg_cpu[a] >= 0 ||
			(c->numcols[a] != NULL && !c->numcols[a]->fixed))
			return NULL;
	for (int o = 0; o < s->nout; o++)
		if (s->out_part[o] != 0)
			return NULL;
	return c;
}

static void
BeginGpuHashAgg(CustomScanState *node, EState *estate, int eflags)
{
	GpuHashAggState *s = (GpuHashAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	List	   *group_exprs = list_nth(cscan->custom_exprs, GHA_EXPR_GROUP);
	List	   *args = list_nth(cscan->custom_exprs, GHA_EXPR_ARGS);
	List	   *filters = list_nth(cscan->custom_exprs, GHA_EXPR_FILTER);
	List	   *args2 = list_nth(cscan->custom_exprs, GHA_EXPR_ARGS2);
	MemoryContextCallback *cb;
	ListCell   *lc;
	int			i,
				shift = 0,
				a,
				ncpu = 0;
	List	   *dict_types = NIL,
			   *dict_eqops = NIL,
			   *dict_colls = NIL;
	Oid		   *cpu_transfns,
			   *cpu_types,
			   *cpu_colls;

	s->input_ps = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(s->input_ps);
	s->fused_kind = intVal(list_nth(priv, GHA_PRIV_FUSED));
	if (s->fused_kind >= 0)
	{
		s->inner_ps = ExecInitNode(lsecond(cscan->custom_plans), estate, eflags);
		node->custom_ps = lappend(node->custom_ps, s->inner_ps);
	}
	gpuhash_scan_map_init(&s->map, list_nth(priv, GHA_PRIV_SIDES),
						  list_nth(priv, GHA_PRIV_ATTNOS));

	s->nkeys = list_length(group_exprs);
	s->key_states = ExecInitExprList(group_exprs, &node->ss.ps);
	s->keytypes = palloc(sizeof(Oid) * s->nkeys);
	s->key_mode = palloc(sizeof(int) * s->nkeys);
	s->key_dictcol = palloc(sizeof(int) * s->nkeys);
	s->key_attno = palloc(sizeof(int) * s->nkeys);
	s->key_shift = palloc(sizeof(int) * s->nkeys);
	s->key_mask = palloc(sizeof(uint64) * s->nkeys);
	s->key_float = palloc0(sizeof(bool) * Max(s->nkeys, 1));
	i = 0;
	foreach(lc, group_exprs)
	{
		int			bits;

		s->keytypes[i] = list_nth_oid(list_nth(priv, GHA_PRIV_KEYTYPES), i);
		s->key_attno[i] = list_nth_int(list_nth(priv, GHA_PRIV_KEYPOS), i);
		s->key_mode[i] = list_nth_int(list_nth(priv, GHA_PRIV_KEYMODES), i);
		s->key_dictcol[i] = -1;
		if (s->key_mode[i] == GHA_KEY_DICT)
		{
			s->key_dictcol[i] = list_length(dict_types);
			dict_types = lappend_oid(dict_types, s->keytypes[i]);
			dict_eqops = lappend_oid(dict_eqops,
									 list_nth_oid(list_nth(priv, GHA_PRIV_EQOPS), i));
			dict_colls = lappend_oid(dict_colls,
									 list_nth_oid(list_nth(priv, GHA_PRIV_KEYCOLLS), i));
			i++;
			continue;
		}
		bits = gpuhash_key_bits(s->keytypes[i]);
		s->key_float[i] = (s->keytypes[i] == FLOAT4OID || s->keytypes[i] == FLOAT8OID) &&
			s->fused_kind < 0;
		s->key_shift[i] = shift;
		s->key_mask[i] = bits >= 64 ? ~UINT64CONST(0) : (UINT64CONST(1) << bits) - 1;
		shift += bits;
		i++;
	}
	s->dict_shift = shift;
	s->pattern_shift = shift + (dict_types != NIL ? 32 : 0);
	s->key_side = palloc0(sizeof(int) * Max(s->nkeys, 1));
	s->key_nullbit = palloc0(sizeof(int) * Max(s->nkeys, 1));
	for (i = 0, a = 0; i < s->nkeys; i++)
	{
		List	   *keynull = list_nth(priv, GHA_PRIV_KEYNULL);

		/* -1: no NULL flag (not packed, or never NULL) */
		s->key_nullbit[i] = -1;
		if (s->key_mode[i] == GHA_KEY_PACKED &&
			(keynull == NIL || list_nth_int(keynull, i)))
			s->key_nullbit[i] = a++;
	}
	if (s->fused_kind >= 0)
	{
		for (i = 0; i < s->nkeys; i++)
		{
			s->key_side[i] = s->map.sides[s->key_attno[i] - 1];
			if (s->key_mode[i] == GHA_KEY_DICT)
				s->dict_side = s->key_side[i];
		}
		s->njkeys = list_length(list_nth(cscan->custom_exprs, GHA_EXPR_JOIN_OUTER));
		for (int side = 0; side < 2; side++)
		{
			List	   *jks = list_nth(cscan->custom_exprs, GHA_EXPR_JOIN_OUTER + side);

			s->jkey[side] = palloc(sizeof(ExprState *) * s->njkeys);
			s->jtype[side] = palloc(sizeof(Oid) * s->njkeys);
			s->jfamily[side] = palloc(sizeof(GpuHashExactFamily) * s->njkeys);
			for (int k = 0; k < s->njkeys; k++)
			{
				Expr	   *jk = list_nth(jks, k);

				s->jkey[side][k] = ExecInitExpr(jk, &node->ss.ps);
				s->jtype[side][k] = exprType((Node *) jk);
				s->jfamily[side][k] = gpuhash_exact_family(s->jtype[side][k]);
			}
		}
		s->jwidth = palloc(sizeof(int) * s->njkeys);
		s->jshift = palloc(sizeof(int) * s->njkeys);
		if (!gpuhash_exact_key_layout(s->njkeys, s->jtype[0], s->jtype[1], s->jwidth, s->jshift))
			elog(ERROR, "gpuhash: a fused join's keys are not exact");
	}
	s->expr_params = pull_paramids((Expr *) cscan->custom_exprs);

	s->node_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashAgg",
										ALLOCSET_DEFAULT_SIZES);
	s->data_cxt = AllocSetContextCreate(s->node_cxt, "GpuHashAgg input",
										ALLOCSET_DEFAULT_SIZES);
	/* engine columns, grown by add_column */
	s->cols_cap = 8;
	s->cols = MemoryContextAlloc(s->node_cxt, sizeof(gh_aggcol) * s->cols_cap);
	s->values = MemoryContextAlloc(s->node_cxt, sizeof(void *) * s->cols_cap);
	s->nulls = MemoryContextAlloc(s->node_cxt, sizeof(uint8 *) * s->cols_cap);
	s->col_nulls = MemoryContextAlloc(s->node_cxt, sizeof(bool) * s->cols_cap);
	s->col_side = MemoryContextAlloc(s->node_cxt, sizeof(int) * s->cols_cap);
	s->col_owner = MemoryContextAlloc(s->node_cxt, sizeof(int) * s->cols_cap);
	s->agg_side = palloc0(sizeof(int) * Max(list_length(args), 1));
	s->naggs = list_length(args);
	s->ops = palloc(sizeof(GhaOp) * Max(s->naggs, 1));
	s->argtypes = palloc(sizeof(Oid) * Max(s->naggs, 1));
	s->mode = intVal(list_nth(priv, GHA_PRIV_MODE));
	s->intypes = palloc(sizeof(Oid) * Max(s->naggs, 1));
	s->agg_col = palloc(sizeof(int) * Max(s->naggs, 1));
	s->agg_col2 = palloc(sizeof(int) * Max(s->naggs, 1));
	s->agg_cpu = palloc(sizeof(int) * Max(s->naggs, 1));
	s->numcols = palloc0(sizeof(GhaNumCols *) * Max(s->naggs, 1));
	s->args = palloc(sizeof(ExprState *) * Max(s->naggs, 1));
	s->args2 = palloc0(sizeof(ExprState *) * Max(s->naggs, 1));
	s->filters = palloc(sizeof(ExprState *) * Max(s->naggs, 1));
	cpu_transfns = palloc(sizeof(Oid) * Max(s->naggs, 1));
	cpu_types = palloc(sizeof(Oid) * Max(s->naggs, 1));
	cpu_colls = palloc(sizeof(Oid) * Max(s->naggs, 1));
	s->nout = list_length(list_nth(priv, GHA_PRIV_OUTAGG));
	s->out_attno = palloc(sizeof(int) * Max(s->nout, 1));
	s->out_agg = palloc(sizeof(int) * Max(s->nout, 1));
	s->out_part = palloc(sizeof(int) * Max(s->nout, 1));
	s->out_numeric = palloc(sizeof(char *) * Max(s->nout, 1));
	for (a = 0; a < s->nout; a++)
		s->out_numeric[a] = palloc(GHA_NUMERIC_BYTES);
	a = 0;
	i = 0;
	foreach(lc, cscan->custom_scan_tlist)
	{
		if (gpuhash_agg_computed(lfirst_node(TargetEntry, lc)->expr, s->mode))
		{
			s->out_attno[a] = i + 1;
			s->out_agg[a] = list_nth_int(list_nth(priv, GHA_PRIV_OUTAGG), a);
			s->out_part[a] = list_nth_int(list_nth(priv, GHA_PRIV_OUTPART), a);
			a++;
		}
		i++;
	}
	if (a != s->nout)
		elog(ERROR, "gpuhash: GpuHashAgg computes %d columns, expected %d", a, s->nout);
	s->ncols = 0;
	for (a = 0; a < s->naggs; a++)
	{
		Expr	   *filter = list_nth(filters, a);
		bool		no_filter = IsA(filter, Const) && !((Const *) filter)->constisnull &&
			DatumGetBool(((Const *) filter)->constvalue);
		GhaOp		op = (GhaOp) list_nth_int(list_nth(priv, GHA_PRIV_OPS), a);
		Oid			t = list_nth_oid(list_nth(priv, GHA_PRIV_ARGTYPES), a);

		s->ops[a] = op;
		s->argtypes[a] = t;
		s->intypes[a] = s->mode == GHA_MODE_FINAL ? gpuhash_agg_partial_type(op, t, 0) : t;
		s->args[a] = ExecInitExpr(list_nth(args, a), &node->ss.ps);
		s->filters[a] = no_filter ? NULL : ExecInitExpr(filter, &node->ss.ps);
		s->agg_col[a] = -1;
		s->agg_col2[a] = -1;
		s->agg_cpu[a] = -1;
		if (s->fused_kind >= 0)
			s->agg_side[a] = gha_scan_expr_side(&s->map, (Node *) list_make2(list_nth(args, a), filter));
		s->cur_side = s->agg_side[a];
		if (s->mode == GHA_MODE_FINAL && op == GHA_AVG)
		{
			/* the partial counts, summed */
			s->args2[a] = ExecInitExpr(list_nth(args2, a), &node->ss.ps);
			s->agg_col2[a] = add_column(s, GH_INT64, GH_AGG_SUM, true);
		}
		if (s->mode == GHA_MODE_FINAL && (op == GHA_COUNT_STAR || op == GHA_COUNT))
		{
			/* the partial counts, summed */
			s->agg_col[a] = add_column(s, GH_INT64, GH_AGG_SUM, true);
			continue;
		}
		if (op == GHA_COUNT_STAR && no_filter)
			continue;
		if (op == GHA_CPU)
		{
			s->agg_cpu[a] = ncpu;
			cpu_transfns[ncpu] = list_nth_oid(list_nth(priv, GHA_PRIV_TRANSFNS), a);
			cpu_types[ncpu] = t;
			cpu_colls[ncpu] = list_nth_oid(list_nth(priv, GHA_PRIV_AGGCOLLS), a);
			ncpu++;
			continue;
		}
		if ((op == GHA_SUM || op == GHA_AVG) && s->intypes[a] == NUMERICOID)
		{
			GhaNumCols *nc = palloc0(sizeof(GhaNumCols));
			int			first,
						count;

			nc->dscale_col = s->agg_col[a] = add_column(s, GH_INT64, GH_AGG_MAX, true);
			gha_numcols_reset(nc);
			/*
			 * a partial node's argument of a declared precision: the limbs
			 * it can fill are known, so every column is made now (a pool
			 * needs its layout before any row: agg_pool.c)
			 */
			if (s->mode == GHA_MODE_PARTIAL &&
				gha_numeric_limb_range(exprTypmod((Node *) list_nth(args, a)), &first, &count))
			{
				for (int l = 0; l < count; l++)
				{
					nc->limb_j[l] = first + l;
					nc->limb_col[l] = add_column(s, GH_INT64, GH_AGG_SUM, false);
				}
				nc->nlimbs = count;
				for (int k = 0; k < 3; k++)
					nc->special_col[k] = add_column(s, GH_INT64, GH_AGG_SUM, false);
				nc->fixed = true;
			}
			s->numcols[a] = nc;
			continue;
		}
		{
			gh_valtype	type = ((op == GHA_SUM || op == GHA_AVG) &&
								(t == FLOAT4OID || t == FLOAT8OID)) ? GH_FLOAT64 : GH_INT64;
			int			ops = op == GHA_SUM || op == GHA_AVG ?
				(type == GH_FLOAT64 ? GHA_FLOAT_SUM_OPS : GH_AGG_SUM) :
				op == GHA_MIN ? GH_AGG_MIN : op == GHA_MAX ? GH_AGG_MAX : 0;
			int			b = shared_column(s, a, args, filters, type);

			if (b >= 0)
			{
				/* the column of an earlier aggregate of the same value */
				s->agg_col[a] = s->agg_col[b];
				s->cols[s->agg_col[a]].ops |= ops;
				continue;
			}
			s->agg_col[a] = add_column(s, type, ops, true);
			s->col_owner[s->agg_col[a]] = a;
		}
	}
	s->nstatic_cols = s->ncols;

	cb = MemoryContextAlloc(s->node_cxt, sizeof(MemoryContextCallback));
	cb->func = release_results;
	cb->arg = s;
	MemoryContextRegisterResetCallback(s->node_cxt, cb);
	if (dict_types != NIL)
	{
		s->dict = gha_dict_create(&node->ss.ps, dict_types, dict_eqops, dict_colls,
								  ncpu, cpu_transfns, cpu_types, cpu_colls, s->node_cxt);
		s->dict_values = palloc(sizeof(Datum) * list_length(dict_types));
		s->dict_isnull = palloc(sizeof(bool) * list_length(dict_types));
	}
	else if (ncpu > 0)
		elog(ERROR, "gpuhash: CPU aggregates without a dictionary");
	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		gpuhash_ops_init(&s->eng, s->node_cxt,
						 s->fused_kind >= 0 ? GHST_FUSED_QUERIES : GHST_GROUPBY_QUERIES);
	s->pool_child = gpuhash_debug_pool_relay ? NULL : pool_child_of(s);
	if (s->pool_child)
		s->pool_child->final_takes_pool = true;
}

/*
 * A new engine column.  Columns made after rows were collected (a numeric
 * sum's limbs and special values) read 0 in those rows and have no NULL
 * flags: their aggregate's first column holds the NULLs.
 */
static int
add_column(GpuHashAggState *s, gh_valtype type, int ops, bool with_nulls)
{
	int			c = s->ncols;

	if (c == s->cols_cap)
	{
		s->cols_cap *= 2;
		s->cols = repalloc(s->cols, sizeof(gh_aggcol) * s->cols_cap);
		s->values = repalloc(s->values, sizeof(void *) * s->cols_cap);
		s->nulls = repalloc(s->nulls, sizeof(uint8 *) * s->cols_cap);
		s->col_nulls = repalloc(s->col_nulls, sizeof(bool) * s->cols_cap);
		s->col_side = repalloc(s->col_side, sizeof(int) * s->cols_cap);
		s->col_owner = repalloc(s->col_owner, sizeof(int) * s->cols_cap);
	}
	memset(&s->cols[c], 0, sizeof(gh_aggcol));
	s->cols[c].type = type;
	s->cols[c].ops = ops;
	s->col_nulls[c] = with_nulls;
	s->col_side[c] = s->cur_side;
	s->col_owner[c] = -1;
	s->values[c] = NULL;
	s->nulls[c] = NULL;
	s->ncols++;
	if (s->cap > 0)
	{
		s->values[c] = MemoryContextAllocHuge(s->data_cxt, 8 * s->cap);
		memset(s->values[c], 0, 8 * s->nrows);
		if (with_nulls)
			s->nulls[c] = MemoryContextAllocHuge(s->data_cxt, s->cap);
	}
	return c;
}

/* Grow the input arrays to hold n more rows. */
void
gha_reserve_rows(GpuHashAggState *s, int64 n)
{
	MemoryContext old;

	if (s->nrows + n <= s->cap)
		return;
	old = MemoryContextSwitchTo(s->data_cxt);
	if (s->cap == 0)
	{
		/*
		 * Sized by the planner's estimate of the input (at most 16M rows at
		 * first): growing by doubling copies the arrays and touches fresh
		 * memory again, which costs more than collecting the rows.
		 */
		s->cap = Max(Max(4096, n), Min(s->cap_hint + s->cap_hint / 16, INT64CONST(1) << 24));
		s->keys = palloc_extended(sizeof(uint64) * s->cap, MCXT_ALLOC_HUGE);
		s->patterns = palloc_extended(s->cap, MCXT_ALLOC_HUGE);
		if (s->fused_kind >= 0)
			s->jkeys = palloc_extended(sizeof(uint64) * s->cap, MCXT_ALLOC_HUGE);
		for (int c = 0; c < s->ncols; c++)
		{
			s->values[c] = palloc_extended(8 * s->cap, MCXT_ALLOC_HUGE);
			s->nulls[c] = s->col_nulls[c] ? palloc_extended(s->cap, MCXT_ALLOC_HUGE) : NULL;
		}
	}
	else
	{
		while (s->cap < s->nrows + n)
			s->cap *= 2;
		s->keys = repalloc_huge(s->keys, sizeof(uint64) * s->cap);
		s->patterns = repalloc_huge(s->patterns, s->cap);
		if (s->jkeys)
			s->jkeys = repalloc_huge(s->jkeys, sizeof(uint64) * s->cap);
		for (int c = 0; c < s->ncols; c++)
		{
			s->values[c] = repalloc_huge(s->values[c], 8 * s->cap);
			if (s->nulls[c])
				s->nulls[c] = repalloc_huge(s->nulls[c], s->cap);
		}
	}
	MemoryContextSwitchTo(old);
}

/* One numeric sum/avg input into its columns (agg_numeric.c). */
static void
collect_numeric(GpuHashAggState *s, GhaNumCols *nc, int64 r, Datum d, bool isnull)
{
	int64		limbs[GHA_NUM_MAX_LIMBS];
	int			dscale,
				first,
				nlimbs;
	GhaNumClass cls;

	for (int l = 0; l < nc->nlimbs; l++)
		((int64 *) s->values[nc->limb_col[l]])[r] = 0;
	for (int k = 0; k < 3; k++)
		if (nc->special_col[k] >= 0)
			((int64 *) s->values[nc->special_col[k]])[r] = 0;
	((int64 *) s->values[nc->dscale_col])[r] = 0;
	s->nulls[nc->dscale_col][r] = isnull;
	if (isnull)
		return;

	cls = gha_numeric_split(d, &dscale, &first, &nlimbs, limbs, GHA_NUM_MAX_LIMBS);
	if (cls != GHA_NUM_FINITE)
	{
		int			k = (int) cls - 1;

		if (nc->special_col[k] < 0)
			nc->special_col[k] = add_column(s, GH_INT64, GH_AGG_SUM, false);
		((int64 *) s->values[nc->special_col[k]])[r] = 1;
		return;
	}
	((int64 *) s->values[nc->dscale_col])[r] = dscale;
	for (int j = 0; j < nlimbs; j++)
	{
		int			l;

		if (limbs[j] == 0)
			continue;
		for (l = 0; l < nc->nlimbs; l++)
			if (nc->limb_j[l] == first + j)
				break;
		if (l == nc->nlimbs)
		{
			if (nc->nlimbs == GHA_NUM_MAX_LIMBS)
				gha_numeric_too_wide();
			nc->limb_j[l] = first + j;
			nc->limb_col[l] = add_column(s, GH_INT64, GH_AGG_SUM, false);
			nc->nlimbs++;
		}
		((int64 *) s->values[nc->limb_col[l]])[r] = limbs[j];
	}
}

/*
 * Evaluate one input row (in the scan tuple) into the arrays: all of it, or
 * for a fused join (side 0 or 1) the grouping columns and aggregates that
 * read that side.
 */
void
gha_collect_row(GpuHashAggState *s, ExprContext *econtext, int side)
{
	uint64		key = 0;
	uint8		pattern = 0;
	ListCell   *lc;
	int			i = 0;
	int64		r;
	uint32		id = 0;

	gha_reserve_rows(s, 1);
	r = s->nrows;
	foreach(lc, s->key_states)
	{
		bool		isnull;
		Datum		d;

		if (side >= 0 && s->key_side[i] != side)
		{
			i++;
			continue;
		}
		d = ExecEvalExpr((ExprState *) lfirst(lc), econtext, &isnull);

		if (s->key_mode[i] == GHA_KEY_DICT)
		{
			s->dict_values[s->key_dictcol[i]] = d;
			s->dict_isnull[s->key_dictcol[i]] = isnull;
		}
		else if (isnull)
			pattern |= (uint8) (1 << i);
		else
			key |= gha_row_key_bits(s, i, d, r);
		i++;
	}
	if (s->dict && (side < 0 || s->dict_side == side))
	{
		id = gha_dict_lookup(s->dict, s->dict_values, s->dict_isnull);
		key |= (uint64) id << s->dict_shift;
	}
	if (s->fused_kind >= 0 && pattern != 0)
	{
		key |= gha_fused_null_bits(s, pattern);
		pattern = 0;
	}
	s->keys[r] = key;
	s->patterns[r] = pattern;

	for (int a = 0; a < s->naggs; a++)
	{
		int			c = s->agg_col[a];
		bool		isnull = false;
		Datum		d = (Datum) 0;
		bool		final = (s->mode == GHA_MODE_FINAL);

		if ((c < 0 && s->agg_cpu[a] < 0) || (side >= 0 && s->agg_side[a] != side))
			continue;
		if (gha_column_shared(s, a))
			continue;
		if (s->agg_col2[a] >= 0)
		{
			/* a final avg's partial count */
			bool		n2;
			Datum		d2 = ExecEvalExpr(s->args2[a], econtext, &n2);

			((int64 *) s->values[s->agg_col2[a]])[r] = n2 ? 0 : DatumGetInt64(d2);
			s->nulls[s->agg_col2[a]][r] = n2;
		}
		if (s->filters[a])
		{
			bool		fnull;
			Datum		f = ExecEvalExpr(s->filters[a], econtext, &fnull);

			isnull = fnull || !DatumGetBool(f);
		}
		if (!isnull && (s->ops[a] != GHA_COUNT_STAR || final))
			d = ExecEvalExpr(s->args[a], econtext, &isnull);
		if (s->agg_cpu[a] >= 0)
		{
			gha_dict_advance(s->dict, id, s->agg_cpu[a], d, isnull);
			continue;
		}
		if (s->numcols[a])
		{
			collect_numeric(s, s->numcols[a], r, d, isnull);
			continue;
		}
		gha_store_agg_value(s, a, c, r, d, isnull);
	}
	s->nrows++;
}

/* ---- float grouping columns' -0 ---- */

/* gha_row_key_bits: row's column k packed as 0; note it if it is -0 */
void
gha_note_negzero(GpuHashAggState *s, int k, Datum d, int64 row)
{
	bool		neg = s->keytypes[k] == FLOAT4OID ? signbit(DatumGetFloat4(d)) :
		signbit(DatumGetFloat8(d));
	MemoryContext old;

	if (!neg)
		return;
	if (s->nnegzero > 0 && s->negzero_row[s->nnegzero - 1] == row)
	{
		s->negzero_cols[s->nnegzero - 1] |= (uint8) (1 << k);
		return;
	}
	if (s->nnegzero == s->negzero_cap)
	{
		old = MemoryContextSwitchTo(s->data_cxt);
		s->negzero_cap = s->negzero_cap ? 2 * s->negzero_cap : 64;
		s->negzero_row = s->negzero_row ?
			repalloc_huge(s->negzero_row, sizeof(int64) * s->negzero_cap) :
			palloc(sizeof(int64) * s->negzero_cap);
		s->negzero_cols = s->negzero_cols ?
			repalloc_huge(s->negzero_cols, s->negzero_cap) : palloc(s->negzero_cap);
		MemoryContextSwitchTo(old);
	}
	s->negzero_row[s->nnegzero] = row;
	s->negzero_cols[s->nnegzero] = (uint8) (1 << k);
	s->nnegzero++;
}

/* a group: its packed key and NULL pattern */
typedef struct NegZeroGroup
{
	uint64		key;
	uint8		pattern;
} NegZeroGroup;

typedef struct NegZeroEntry
{
	NegZeroGroup group;			/* the hash key */
	int64		first_negzero;	/* its first row with a -0 */
	uint8		cols;			/* that row's -0 columns; 0 once an earlier row is found */
} NegZeroEntry;

static int
cmp_shown(const void *a, const void *b)
{
	const NegZeroEntry *x = *(NegZeroEntry *const *) a;
	const NegZeroEntry *y = *(NegZeroEntry *const *) b;

	if (x->group.key != y->group.key)
		return x->group.key < y->group.key ? -1 : 1;
	return (int) x->group.pattern - (int) y->group.pattern;
}

/*
 * With every row collected (none sent to a pool): the groups whose first
 * row has a -0, from the rows noted.  A group's first row is its first -0
 * row unless an earlier row of the group (with +0) comes before it.
 */
static void
find_negzero_groups(GpuHashAggState *s)
{
	HASHCTL		info;
	HTAB	   *h;
	int64		last;
	NegZeroEntry *e;
	NegZeroEntry **shown;
	HASH_SEQ_STATUS seq;
	bool		found;

	s->nshow = 0;
	if (s->nnegzero == 0 || s->pool_used || s->input_pooled)
		return;
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(NegZeroGroup);
	info.entrysize = sizeof(NegZeroEntry);
	info.hcxt = CurrentMemoryContext;
	h = hash_create("gpuhash -0 groups", 64, &info, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int64 i = 0; i < s->nnegzero; i++)
	{
		NegZeroGroup g;

		memset(&g, 0, sizeof(g));
		g.key = s->keys[s->negzero_row[i]];
		g.pattern = s->patterns[s->negzero_row[i]];
		e = hash_search(h, &g, HASH_ENTER, &found);
		if (!found)
		{
			e->first_negzero = s->negzero_row[i];
			e->cols = s->negzero_cols[i];
		}
	}
	last = s->negzero_row[s->nnegzero - 1];
	for (int64 r = 0; r < last; r++)
	{
		NegZeroGroup g;

		memset(&g, 0, sizeof(g));
		g.key = s->keys[r];
		g.pattern = s->patterns[r];
		e = hash_search(h, &g, HASH_FIND, NULL);
		if (e != NULL && r < e->first_negzero)
			e->cols = 0;
		if ((r & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	shown = palloc(sizeof(NegZeroEntry *) * hash_get_num_entries(h));
	hash_seq_init(&seq, h);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->cols != 0)
			shown[s->nshow++] = e;
	qsort(shown, s->nshow, sizeof(NegZeroEntry *), cmp_shown);
	s->show_key = MemoryContextAlloc(s->node_cxt, sizeof(uint64) * Max(s->nshow, 1));
	s->show_pattern = MemoryContextAlloc(s->node_cxt, Max(s->nshow, 1));
	s->show_cols = MemoryContextAlloc(s->node_cxt, Max(s->nshow, 1));
	for (int i = 0; i < s->nshow; i++)
	{
		s->show_key[i] = shown[i]->group.key;
		s->show_pattern[i] = shown[i]->group.pattern;
		s->show_cols[i] = shown[i]->cols;
	}
	hash_destroy(h);
}

/* the columns of group (key, pattern) that show -0: 0 for most */
static uint8
negzero_cols_of(const GpuHashAggState *s, uint64 key, uint8 pattern)
{
	int			lo = 0,
				hi = s->nshow - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (s->show_key[mid] == key && s->show_pattern[mid] == pattern)
			return s->show_cols[mid];
		if (s->show_key[mid] < key || (s->show_key[mid] == key && s->show_pattern[mid] < pattern))
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

/* Keep the engine's result just made (in results[nresults]) and its statistics. */
void
gha_add_result(GpuHashAggState *s, uint8 pattern, instr_time start)
{
	gh_groups  *g = s->results[s->nresults];

	s->stat_engine_ms += gpuhash_elapsed_ms(start);
	s->result_pattern[s->nresults] = pattern;
	s->stat_groups += g->ngroups;
	s->stat_devices |= gpuhash_device_mask(g->devices, g->ndevices);
	s->stat_partitions = Max(s->stat_partitions, g->partitions);
	s->stat_peak_device = Max(s->stat_peak_device, gpuhash_ops_peak_device(&s->eng));
	s->nresults++;
}

/*
 * The rows of one NULL pattern: the keys (returned) and cols, count rows
 * (all rows when only one pattern is present, without copying).
 */
static uint64 *
pattern_rows(GpuHashAggState *s, uint8 pattern, int64 count, gh_aggcol *cols)
{
	uint64	   *keys = s->keys;

	for (int c = 0; c < s->ncols; c++)
	{
		cols[c] = s->cols[c];
		cols[c].values = s->values[c];
		cols[c].nulls = s->nulls[c];
	}
	if (count != s->nrows)
	{
		int64		n = 0;

		keys = MemoryContextAllocHuge(s->data_cxt, sizeof(uint64) * Max(count, 1));
		for (int c = 0; c < s->ncols; c++)
		{
			cols[c].values = MemoryContextAllocHuge(s->data_cxt, 8 * Max(count, 1));
			cols[c].nulls = s->nulls[c] ? MemoryContextAllocHuge(s->data_cxt, Max(count, 1)) : NULL;
		}
		for (int64 r = 0; r < s->nrows; r++)
		{
			if (s->patterns[r] != pattern)
				continue;
			keys[n] = s->keys[r];
			for (int c = 0; c < s->ncols; c++)
			{
				((int64 *) cols[c].values)[n] = ((int64 *) s->values[c])[r];
				if (s->nulls[c])
					((uint8 *) cols[c].nulls)[n] = s->nulls[c][r];
			}
			n++;
		}
	}
	return keys;
}

/*
 * Is this final node's input the groups of a pool (agg_pool.c)?  Then each
 * group comes once, from the one process that aggregated the pool.  Asked
 * once the Gather has started (its DSM exists until the plan ends).
 */
static bool
input_pooled(GpuHashAggState *s)
{
	PlanState  *child;

	if (s->mode != GHA_MODE_FINAL || !IsA(s->input_ps, GatherState))
		return false;
	child = outerPlanState(s->input_ps);
	return child != NULL && IsA(child, CustomScanState) &&
		((CustomScanState *) child)->methods == &gpuhash_agg_exec_methods &&
		gha_pool_active((GpuHashAggState *) child);
}

/*
 * The groups of n input rows whose keys are all different: each row is its
 * own group, as the engine would return it (a count of 1, sums, minima and
 * maxima of the row's value).  The arrays point into the collected input,
 * which is then kept until the results are released.
 */
static gh_groups *
identity_groups(GpuHashAggState *s, uint64 *keys, int64 n, const gh_aggcol *cols)
{
	MemoryContext old = MemoryContextSwitchTo(s->data_cxt);
	gh_groups  *g = palloc0(sizeof(gh_groups));
	int64	   *ones = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);

	for (int64 i = 0; i < n; i++)
		ones[i] = 1;
	g->ngroups = (size_t) n;
	g->keys = keys;
	g->rows = ones;
	g->input_rows = (uint64) n;
	g->ncols = s->ncols;
	g->cols = palloc0(sizeof(gh_aggresult) * Max(s->ncols, 1));
	for (int c = 0; c < s->ncols; c++)
	{
		gh_aggresult *r = &g->cols[c];
		int64	   *v = (int64 *) cols[c].values;
		const uint8 *nulls = cols[c].nulls;

		r->nonnull = ones;
		if (nulls)
		{
			r->nonnull = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
			for (int64 i = 0; i < n; i++)
				r->nonnull[i] = !nulls[i];
		}
		if (cols[c].type == GH_FLOAT64)
		{
			r->fsum = r->fmin = r->fmax = (double *) v;
			continue;
		}
		r->sum_lo = (uint64_t *) v;
		r->imin = r->imax = v;
		if (cols[c].ops & GH_AGG_SUM)
		{
			r->sum_hi = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
			for (int64 i = 0; i < n; i++)
				r->sum_hi[i] = v[i] < 0 ? -1 : 0;
		}
	}
	MemoryContextSwitchTo(old);
	return g;
}

/* Aggregate the rows of one NULL pattern, or send them to the pool. */
static void
aggregate_pattern(GpuHashAggState *s, uint8 pattern, int64 count)
{
	gh_aggcol  *cols = palloc(sizeof(gh_aggcol) * Max(s->ncols, 1));
	uint64	   *keys = pattern_rows(s, pattern, count, cols);
	instr_time	start;

	if (gha_pool_active(s))
	{
		gha_pool_append(s, 0, pattern, keys, NULL, count, cols, NULL);
		if (keys != s->keys)
		{
			/* pattern_rows' copies: the node may go on reading */
			pfree(keys);
			for (int c = 0; c < s->ncols; c++)
			{
				pfree(unconstify(void *, cols[c].values));
				if (cols[c].nulls)
					pfree(unconstify(uint8 *, cols[c].nulls));
			}
		}
		pfree(cols);
		return;
	}
	INSTR_TIME_SET_CURRENT(start);
	if (s->input_pooled)
	{
		/* one row a group already: nothing to aggregate again */
		s->results[s->nresults] = identity_groups(s, keys, count, cols);
		gha_add_result(s, pattern, start);
		return;
	}
	s->results[s->nresults] = gpuhash_op_aggregate(&s->eng, keys, (size_t) count, cols, s->ncols);
	gha_add_result(s, pattern, start);
}

/*
 * Send the rows read so far to the pool and start collecting afresh (a
 * pooled node, as it reads: gha_pool_batch_full).  side: -1 a plain
 * aggregation, whose rows go by NULL pattern (counts, reset here); 0 or 1
 * the side of a fused join being read.
 */
void
gha_pool_flush(GpuHashAggState *s, int side, int64 *counts)
{
	if (s->nrows == 0)
		return;
	if (side < 0)
	{
		for (int p = 0; p < GHA_MAX_PATTERNS; p++)
			if (counts[p] > 0)
			{
				aggregate_pattern(s, (uint8) p, counts[p]);
				counts[p] = 0;
			}
	}
	else
	{
		gh_aggcol  *cols = palloc(sizeof(gh_aggcol) * Max(s->ncols, 1));
		uint8	   *col_inner = palloc(Max(s->ncols, 1));
		/* a side without grouping columns has keys of 0: none are sent */
		bool		keyed = gha_side_keyed(s, side);

		for (int c = 0; c < s->ncols; c++)
		{
			cols[c] = s->cols[c];
			cols[c].values = s->values[c];
			cols[c].nulls = s->nulls[c];
			col_inner[c] = s->col_side[c] == 1;
		}
		gha_pool_append(s, side, 0, keyed ? s->keys : NULL, s->jkeys, s->nrows, cols,
						col_inner);
		pfree(cols);
		pfree(col_inner);
	}
	s->pool_flushed += s->nrows;
	s->nrows = 0;
}

static void
aggregate_input(GpuHashAggState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	TupleTableSlot *scan = s->css.ss.ss_ScanTupleSlot;
	int64		counts[GHA_MAX_PATTERNS] = {0};
	bool		first = true;
	GhPageScan *pages = NULL;

	s->pool_direct = false;
	if (s->fused_kind >= 0)
		gha_aggregate_fused(s);
	else
	{
		if (gha_pool_active(s))
			gha_pool_attach(s);
		pages = gpuhash_page_scan_begin(s->input_ps, gpuhash_scan_map_used(&s->map, 0), &s->eng);
		s->cap_hint = (int64) s->input_ps->plan->plan_rows;
		if (s->pool_used)
			s->cap_hint = Min(s->cap_hint, 2 * s->pool_flush_at);
		/* the columns straight from the pages where they are the input as it is */
		for (bool direct = pages && gha_collect_pages(s, pages, -1, counts); !direct;)
		{
			TupleTableSlot *slot = pages ? gpuhash_page_scan_next(pages) :
				ExecProcNode(s->input_ps);

			if (first)
				s->input_pooled = input_pooled(s);
			first = false;
			if (TupIsNull(slot))
				break;
			CHECK_FOR_INTERRUPTS();
			ResetExprContext(econtext);
			gpuhash_fill_scan_slot(&s->map, scan, slot, NULL);
			econtext->ecxt_scantuple = scan;
			gha_collect_row(s, econtext, -1);
			counts[s->patterns[s->nrows - 1]]++;
			if (gha_pool_batch_full(s))
				gha_pool_flush(s, -1, counts);
		}
		if (pages)
			gpuhash_page_scan_end(pages, &s->page_stats);
		find_negzero_groups(s);
		for (int p = 0; p < GHA_MAX_PATTERNS; p++)
			if (counts[p] > 0)
				aggregate_pattern(s, (uint8) p, counts[p]);
		if (gha_pool_active(s))
			gha_pool_done(s);
		/* the partial processes left their pool to this node: its groups */
		if (s->pool_child && s->nresults == 0)
			(void) gha_pool_take(s, s->pool_child);
	}
	/* without GROUP BY, an aggregate over no rows is still one row */
	s->empty_row = s->nkeys == 0 && s->mode != GHA_MODE_PARTIAL && s->stat_groups == 0;
	/* the input is no longer needed once the engine has the groups */
	if (!s->input_pooled)
		MemoryContextReset(s->data_cxt);
	s->keys = NULL;
	s->jkeys = NULL;
	s->cap = s->nrows = 0;
	s->negzero_row = NULL;
	s->negzero_cols = NULL;
	s->nnegzero = s->negzero_cap = 0;
	s->aggregated = true;
}

/*
 * What the node returns for aggregate a of a group: the aggregate itself,
 * or (GHA_MODE_PARTIAL) its partial value part, as agg_final.c's
 * gpuhash_agg_partial_type says; a final node combines partial values.
 */
static Datum
agg_value(GpuHashAggState *s, const gh_groups *g, size_t gi, uint32 id, int a, int part,
		  bool *isnull, char *numeric)
{
	GhaOp		op = s->ops[a];
	Oid			t = s->argtypes[a];
	int			c = s->agg_col[a];
	bool		is_float = (t == FLOAT4OID || t == FLOAT8OID);

	*isnull = false;
	if (s->agg_cpu[a] >= 0)
		return gha_dict_agg(s->dict, id, s->agg_cpu[a], isnull);

	if (s->mode == GHA_MODE_PARTIAL)
	{
		if (part == 1)			/* avg's count */
			return Int64GetDatum(g->cols[c].nonnull[gi]);
		if ((op == GHA_SUM || op == GHA_AVG) && is_float)
		{
			*isnull = g->cols[c].nonnull[gi] == 0;
			return *isnull ? (Datum) 0 :
				Float8GetDatum(op == GHA_AVG ? gpuhash_agg_float_avg_sum(&g->cols[c], gi) :
							   gpuhash_agg_float_sum(&g->cols[c], gi, false));
		}
		if (op == GHA_AVG && !s->numcols[a])
		{
			*isnull = g->cols[c].nonnull[gi] == 0;
			return *isnull ? (Datum) 0 :
				gha_numeric_from_int128(g->cols[c].sum_lo[gi], gh_sum_hi(&g->cols[c], gi), 0);
		}
		if (op == GHA_AVG)
			return gha_numeric_final(false, g, s->numcols[a], gi, isnull);
	}
	else if (s->mode == GHA_MODE_FINAL)
	{
		int64		n;
		Datum		sum;

		if (op == GHA_COUNT_STAR || op == GHA_COUNT)
			return Int64GetDatum(gpuhash_agg_int8_sum(&g->cols[c], gi));
		if (op == GHA_SUM && !s->numcols[a] && !is_float)
			return gpuhash_agg_final(GHA_SUM, INT4OID, g, c, gi, isnull, NULL); /* int8 */
		if (op == GHA_AVG)
		{
			n = gpuhash_agg_int8_sum(&g->cols[s->agg_col2[a]], gi);
			if (n == 0)
			{
				*isnull = true;
				return (Datum) 0;
			}
			if (is_float)
				return Float8GetDatum(gpuhash_agg_float_avg_sum(&g->cols[c], gi) / (double) n);
			sum = gha_numeric_final(false, g, s->numcols[a], gi, isnull);
			if (*isnull || numeric_is_nan(DatumGetNumeric(sum)) ||
				numeric_is_inf(DatumGetNumeric(sum)))
				return sum;
			return DirectFunctionCall2(numeric_div, sum,
									   NumericGetDatum(int64_to_numeric(n)));
		}
	}
	if (s->numcols[a])
		return gha_numeric_final(op == GHA_AVG, g, s->numcols[a], gi, isnull);
	return gpuhash_agg_final(op, t, g, c, gi, isnull, numeric);
}

/*
 * The one group of a plain aggregate over no rows: no rows, no values, so
 * count gives 0 and every other aggregate NULL.
 */
static gh_groups *
empty_group(GpuHashAggState *s)
{
	gh_groups  *g = s->empty_group;

	if (g != NULL && g->ncols >= s->ncols)
		return g;
	g = MemoryContextAllocZero(s->node_cxt, sizeof(gh_groups));
	g->ngroups = 1;
	g->keys = MemoryContextAllocZero(s->node_cxt, sizeof(uint64));
	g->rows = MemoryContextAllocZero(s->node_cxt, sizeof(int64));
	g->ncols = s->ncols;
	g->cols = MemoryContextAllocZero(s->node_cxt, sizeof(gh_aggresult) * Max(s->ncols, 1));
	for (int c = 0; c < s->ncols; c++)
	{
		gh_aggresult *r = &g->cols[c];

		r->nonnull = MemoryContextAllocZero(s->node_cxt, sizeof(int64));
		r->sum_lo = MemoryContextAllocZero(s->node_cxt, sizeof(uint64));
		r->sum_hi = MemoryContextAllocZero(s->node_cxt, sizeof(int64));
		r->fsum = MemoryContextAllocZero(s->node_cxt, sizeof(double));
		r->imin = MemoryContextAllocZero(s->node_cxt, sizeof(int64));
		r->imax = MemoryContextAllocZero(s->node_cxt, sizeof(int64));
		r->fmin = MemoryContextAllocZero(s->node_cxt, sizeof(double));
		r->fmax = MemoryContextAllocZero(s->node_cxt, sizeof(double));
	}
	s->empty_group = g;
	return g;
}

/*
 * The NULL pattern of group gi of layout's groups: its result's, with a
 * fused key's NULL flags added.
 */
static uint8
group_pattern(const GpuHashAggState *layout, const gh_groups *g, size_t gi, uint8 pattern)
{
	if (layout->fused_kind >= 0)
		for (int i = 0; i < layout->nkeys; i++)
			if (layout->key_nullbit[i] >= 0 &&
				((g->keys[gi] >> (layout->pattern_shift + layout->key_nullbit[i])) & 1))
				pattern |= (uint8) (1 << i);
	return pattern;
}

/* Packed grouping column i of group gi of layout's groups (not NULL) */
static Datum
group_key(const GpuHashAggState *layout, const gh_groups *g, size_t gi, int i)
{
	return gpuhash_unpack_key(layout->keytypes[i],
							  (g->keys[gi] >> layout->key_shift[i]) & layout->key_mask[i]);
}

/*
 * Output o (an aggregate's value) of group gi of result g: for a pool's
 * groups (gha_pool_take), finished as the partial child, whose layout the
 * groups have, would finish it aggregating alone (each group comes once, so
 * the partial values need no combining); else as agg_value makes it.
 */
Datum
gha_output_value(GpuHashAggState *s, const gh_groups *g, size_t gi, int o, bool *isnull)
{
	int			a = s->out_agg[o];

	if (s->pool_direct && s->cur < s->nresults)
	{
		GpuHashAggState *c = s->pool_child;

		if (c->numcols[a])
			return gha_numeric_final(c->ops[a] == GHA_AVG, g, c->numcols[a], gi, isnull);
		return gpuhash_agg_final(c->ops[a], c->argtypes[a], g, c->agg_col[a], gi, isnull,
								 s->out_numeric[o]);
	}
	return agg_value(s, g, gi, s->dict ? (uint32) (g->keys[gi] >> s->dict_shift) : 0, a,
					 s->out_part[o], isnull, s->out_numeric[o]);
}

/*
 * Group gi of a pool's groups (gha_pool_take) into the scan tuple of the
 * final node s: its grouping columns unpacked as the partial child, whose
 * layout the groups have, packed them; its aggregates by gha_output_value.
 */
static void
pool_direct_group(GpuHashAggState *s, const gh_groups *g, size_t gi, uint8 pattern,
				  TupleTableSlot *scan)
{
	GpuHashAggState *c = s->pool_child;

	pattern = group_pattern(c, g, gi, pattern);
	for (int i = 0; i < s->nkeys; i++)
	{
		int			at = s->key_attno[i] - 1;

		if (pattern & (1 << i))
			continue;
		scan->tts_values[at] = group_key(c, g, gi, i);
		scan->tts_isnull[at] = false;
	}
	for (int o = 0; o < s->nout; o++)
	{
		int			at = s->out_attno[o] - 1;

		scan->tts_values[at] = gha_output_value(s, g, gi, o, &scan->tts_isnull[at]);
	}
}

/* Group gi of the node's own results into its scan tuple. */
static void
own_group(GpuHashAggState *s, const gh_groups *g, size_t gi, uint8 pattern,
		  TupleTableSlot *scan)
{
	uint32		id = s->dict ? (uint32) (g->keys[gi] >> s->dict_shift) : 0;

	pattern = group_pattern(s, g, gi, pattern);
	for (int i = 0; i < s->nkeys; i++)
	{
		int			at = s->key_attno[i] - 1;

		if (s->key_mode[i] == GHA_KEY_DICT)
		{
			scan->tts_values[at] = gha_dict_key(s->dict, id, s->key_dictcol[i],
												&scan->tts_isnull[at]);
			continue;
		}
		if (pattern & (1 << i))
			continue;
		scan->tts_values[at] = group_key(s, g, gi, i);
		scan->tts_isnull[at] = false;
	}
	if (s->nshow > 0)
	{
		uint8		neg = negzero_cols_of(s, g->keys[gi], pattern);

		for (int i = 0; neg != 0 && i < s->nkeys; i++)
			if (neg & (1 << i))
				scan->tts_values[s->key_attno[i] - 1] = s->keytypes[i] == FLOAT4OID ?
					Float4GetDatum(-0.0f) : Float8GetDatum(-0.0);
	}
	for (int o = 0; o < s->nout; o++)
	{
		int			at = s->out_attno[o] - 1;

		scan->tts_values[at] = gha_output_value(s, g, gi, o, &scan->tts_isnull[at]);
	}
}

/*
 * Ask for group gi's result values ahead of their use: a group reads one
 * entry of several arrays (keys, counts, each column's sums ...), streams
 * that are each touched too rarely for the hardware to fetch them ahead.
 */
static inline void
prefetch_group(const gh_groups *g, size_t gi)
{
	if (gi >= g->ngroups)
		return;
	__builtin_prefetch(&g->keys[gi]);
	__builtin_prefetch(&g->rows[gi]);
	for (int c = 0; c < g->ncols; c++)
	{
		const gh_aggresult *r = &g->cols[c];

		__builtin_prefetch(&r->nonnull[gi]);
		if (r->sum_lo)
			__builtin_prefetch(&r->sum_lo[gi]);
		if (r->sum_hi)
			__builtin_prefetch(&r->sum_hi[gi]);
		if (r->fsum)
			__builtin_prefetch(&r->fsum[gi]);
		if (r->imin)
			__builtin_prefetch(&r->imin[gi]);
		if (r->imax)
			__builtin_prefetch(&r->imax[gi]);
	}
}

static TupleTableSlot *
ExecGpuHashAgg(CustomScanState *node)
{
	GpuHashAggState *s = (GpuHashAggState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *scan = node->ss.ss_ScanTupleSlot;
	MemoryContext old;

	if (!s->aggregated)
	{
		aggregate_input(s);
		INSTR_TIME_SET_CURRENT(s->return_start);
		s->returning = true;
	}

	while (s->cur < s->nresults + (s->empty_row ? 1 : 0))
	{
		gh_groups  *g = s->cur < s->nresults ? s->results[s->cur] : empty_group(s);
		uint8		pattern = s->cur < s->nresults ? s->result_pattern[s->cur] : 0;
		size_t		gi;

		if (s->cur_group >= g->ngroups)
		{
			s->cur++;
			s->cur_group = 0;
			continue;
		}
		gi = s->cur_group++;
		if (gi % 8 == 0)
			prefetch_group(g, gi + 64);
		if (s->emit_groups != g)
		{
			s->emit_fast = s->cur < s->nresults && gha_emit_prepare(s, g, pattern);
			s->emit_groups = g;
		}
		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		ExecClearTuple(scan);
		/* a group's values (numerics, ...) live until the next group */
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		if (s->emit_fast)
			gha_emit_group(s, g, gi, scan);
		else
		{
			for (int i = 0; i < scan->tts_tupleDescriptor->natts; i++)
				scan->tts_isnull[i] = true;
			if (s->pool_direct && s->cur < s->nresults)
				pool_direct_group(s, g, gi, pattern, scan);
			else
				own_group(s, g, gi, pattern, scan);
		}
		MemoryContextSwitchTo(old);
		ExecStoreVirtualTuple(scan);
		econtext->ecxt_scantuple = scan;
		if (node->ss.ps.qual && !ExecQual(node->ss.ps.qual, econtext))
		{
			InstrCountFiltered1(node, 1);
			continue;
		}
		if (node->ss.ps.ps_ProjInfo)
			return ExecProject(node->ss.ps.ps_ProjInfo);
		return scan;
	}
	if (s->returning)
	{
		s->returning = false;
		if (s->stat_groups > 0)
			elog(DEBUG1, "gpuhash GpuHashAgg: " INT64_FORMAT " groups returned in %.1f ms",
				 s->stat_groups, gpuhash_elapsed_ms(s->return_start));
	}
	return ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
}

static void
EndGpuHashAgg(CustomScanState *node)
{
	GpuHashAggState *s = (GpuHashAggState *) node;

	release_results(s);
	ExecEndNode(s->input_ps);
	if (s->inner_ps)
		ExecEndNode(s->inner_ps);
}

static void
ReScanGpuHashAgg(CustomScanState *node)
{
	GpuHashAggState *s = (GpuHashAggState *) node;

	s->cur = 0;
	s->cur_group = 0;
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(s->input_ps, node->ss.ps.chgParam);
	if (node->ss.ps.chgParam != NULL && s->inner_ps)
		UpdateChangedParamSet(s->inner_ps, node->ss.ps.chgParam);
	/* unchanged input and expressions: the groups already computed stand */
	if (s->aggregated && s->input_ps->chgParam == NULL &&
		(s->inner_ps == NULL || s->inner_ps->chgParam == NULL) &&
		!bms_overlap(node->ss.ps.chgParam, s->expr_params))
		return;
	/* appends of a read cut short go to a pool nobody will finish */
	gpuhash_op_pool_abandon(&s->eng, true);
	release_results(s);
	MemoryContextReset(s->data_cxt);
	s->keys = NULL;
	s->cap = s->nrows = 0;
	s->negzero_row = NULL;
	s->negzero_cols = NULL;
	s->nnegzero = s->negzero_cap = 0;
	s->nshow = 0;
	s->aggregated = false;
	s->stat_groups = 0;
	s->stat_pairs = 0;
	s->stat_inner_rows = s->stat_outer_rows = 0;
	s->stat_inner_ms = s->stat_share_ms = s->stat_outer_ms = 0;
	/* the lazily made columns start again */
	s->ncols = s->nstatic_cols;
	for (int a = 0; a < s->naggs; a++)
		if (s->numcols[a])
			gha_numcols_reset(s->numcols[a]);
	if (s->dict)
		gha_dict_reset(s->dict);
	if (s->input_ps->chgParam == NULL)
		ExecReScan(s->input_ps);
	if (s->inner_ps && s->inner_ps->chgParam == NULL)
		ExecReScan(s->inner_ps);
}

static void
ExplainGpuHashAgg(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuHashAggState *s = (GpuHashAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *group_exprs = list_nth(cscan->custom_exprs, GHA_EXPR_GROUP);
	List	   *context;
	List	   *keys = NIL;
	ListCell   *lc;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	foreach(lc, group_exprs)
		keys = lappend(keys, deparse_expression(lfirst(lc), context,
												ExplainRtableSize(es) > 1 || es->verbose,
												false));
	if (s->mode != GHA_MODE_FULL)
		ExplainPropertyText("Mode", s->mode == GHA_MODE_PARTIAL ? "partial" : "finalize", es);
	if (s->fused_kind >= 0)
	{
		bool		prefix = ExplainRtableSize(es) > 1 || es->verbose;
		List	   *oks = list_nth(cscan->custom_exprs, GHA_EXPR_JOIN_OUTER);
		List	   *iks = list_nth(cscan->custom_exprs, GHA_EXPR_JOIN_INNER);
		StringInfoData cond;
		ListCell   *lo,
				   *li;

		initStringInfo(&cond);
		forboth(lo, oks, li, iks)
			appendStringInfo(&cond, "%s%s = %s", cond.len > 0 ? " AND " : "",
							 deparse_expression(lfirst(lo), context, prefix, false),
							 deparse_expression(lfirst(li), context, prefix, false));
		ExplainPropertyText("Fused Join", psprintf("(%s)", cond.data), es);
	}
	if (keys != NIL)
		ExplainPropertyList("Group Key", keys, es);
	if (node->ss.ps.plan->parallel_aware && s->fused_kind >= 0)
		ExplainPropertyBool("Shared Inner Side", true, es);
	ExplainPropertyInteger("Aggregates", NULL,
						   list_length(list_nth(cscan->custom_exprs, GHA_EXPR_ARGS)), es);
	if (s->dict)
	{
		int			ncpu = 0;

		ExplainPropertyInteger("Dictionary Keys", NULL, s->dict->ncols, es);
		for (int a = 0; a < s->naggs; a++)
			ncpu += s->agg_cpu[a] >= 0;
		if (ncpu > 0)
			ExplainPropertyInteger("CPU Aggregates", NULL, ncpu, es);
	}
	if (es->costs)
		ExplainPropertyText("Device", gpuhash_device_label(), es);
	if (es->analyze && s->aggregated)
	{
		if (s->fused_kind >= 0)
		{
			ExplainPropertyInteger("Inner Rows", NULL, s->stat_inner_rows, es);
			ExplainPropertyInteger("Outer Rows", NULL, s->stat_outer_rows, es);
			ExplainPropertyInteger("Join Pairs", NULL, s->stat_pairs, es);
			if (es->timing)
			{
				/* reading each side, its input plan included */
				ExplainPropertyFloat("Inner Read Time", "ms", s->stat_inner_ms, 3, es);
				if (node->ss.ps.plan->parallel_aware && !s->pool_used)
					ExplainPropertyFloat("Inner Share Time", "ms", s->stat_share_ms, 3, es);
				ExplainPropertyFloat("Outer Read Time", "ms", s->stat_outer_ms, 3, es);
			}
		}
		ExplainPropertyInteger("Groups", NULL, s->stat_groups, es);
		ExplainPropertyInteger("Partitions", NULL, s->stat_partitions, es);
		if (es->timing)
			ExplainPropertyFloat("Aggregation Time", "ms", s->stat_engine_ms, 3, es);
		if (es->costs)
		{
			ExplainPropertyInteger("Peak Device Memory", "kB",
								   (int64) (s->stat_peak_device / 1024), es);
			ExplainPropertyText("Engine", gpuhash_ops_where(&s->eng), es);
			if (s->pool_used)
			{
				ExplainPropertyText("Pool", s->pool_finisher ? "aggregated by this process" :
									"rows appended", es);
				ExplainPropertyInteger("Pool Appends", NULL, s->stat_pool_appends, es);
				if (es->timing)
					ExplainPropertyFloat("Pool Append Time", "ms", s->stat_pool_ms, 3, es);
			}
			if (s->pool_direct)
				ExplainPropertyText("Pool", "its groups taken from the GPU service", es);
			else if (s->input_pooled)
				ExplainPropertyText("Pool", "its groups taken as they are", es);
			if (s->stat_devices)
				ExplainPropertyText("Devices Used", gpuhash_devices_text(s->stat_devices), es);
			gpuhash_page_stats_explain(&s->page_stats, "Heap", es);
		}
		gpuhash_ops_explain(&s->eng, es);
	}
}

