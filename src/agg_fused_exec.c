/*-------------------------------------------------------------------------
 *
 * agg_fused_exec.c
 *	  Executor half of a fused GpuHashAgg's input (agg.h, "FUSED JOIN"):
 *	  read both sides of the join into arrays and let the engine join and
 *	  aggregate them; in a parallel plan, share the inner side (agg_shared.c)
 *	  or feed the GPU service's pool (agg_pool.c).
 *
 * INTERFACE ROUTINES
 *		gha_aggregate_fused		both inputs read, gh_join_aggregate run
 *		gha_scan_expr_side		which input an expression reads
 *
 * The inner input is read first, evaluating its join key and only the
 * grouping columns and aggregates that read the inner side (gha_collect_row
 * with side 1); its arrays are set aside, and the outer input is read the
 * same way.  Rows whose join key is NULL join nothing and are skipped.  A
 * parallel-aware node trades its share of the inner side for the whole of
 * it before it reads the outer side.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"

#include "agg_state.h"
#include "gpuhash.h"
#include "keys.h"

/*
 * The input a fused node's expression reads: 0 the outer, 1 the inner (the
 * planner made sure it is one of them; constants count as outer).
 */
int
gha_scan_expr_side(const GpuHashScanMap *map, Node *expr)
{
	List	   *vars = pull_var_clause(expr, PVC_RECURSE_AGGREGATES | PVC_RECURSE_PLACEHOLDERS);
	ListCell   *lc;
	int			side = -1;

	foreach(lc, vars)
	{
		int			sv = map->sides[lfirst_node(Var, lc)->varattno - 1];

		if (side >= 0 && sv != side)
			elog(ERROR, "gpuhash: a fused aggregate reads both sides of its join");
		side = sv;
	}
	return Max(side, 0);
}

/* The join key of the row in the scan tuple, its columns side by side; false if one is NULL. */
static bool
join_key(GpuHashAggState *s, ExprContext *econtext, int side, uint64 *key)
{
	uint64		acc = 0;

	for (int k = 0; k < s->njkeys; k++)
	{
		bool		isnull;
		Datum		d = ExecEvalExpr(s->jkey[side][k], econtext, &isnull);

		if (isnull)
			return false;
		acc |= gpuhash_exact_key_column(s->jfamily[side][k], s->jtype[side][k], d,
										s->jwidth[k], s->jshift[k]);
	}
	*key = acc;
	return true;
}

/*
 * Read one side of a fused join into the arrays (pooled: into the pool,
 * every row of it); rows whose join key is NULL join nothing.  Adds the time
 * it took, less appending to the pool (Pool Append Time), to *ms.
 */
static void
read_side(GpuHashAggState *s, PlanState *ps, int side, double *ms)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	TupleTableSlot *scan = s->css.ss.ss_ScanTupleSlot;
	instr_time	start;
	double		pool_ms = s->stat_pool_ms;
	GhPageScan *pages;

	INSTR_TIME_SET_CURRENT(start);
	pages = gpuhash_page_scan_begin(ps, gpuhash_scan_map_used(&s->map, side), &s->eng);

	s->cur_side = side;
	s->cap_hint = (int64) ps->plan->plan_rows;
	if (s->pool_used)
		s->cap_hint = Min(s->cap_hint, 2 * s->pool_flush_at);
	/* the columns straight from the pages where they are the input as it is */
	for (bool direct = pages && gha_collect_pages(s, pages, side, NULL); !direct;)
	{
		TupleTableSlot *slot = pages ? gpuhash_page_scan_next(pages) : ExecProcNode(ps);
		uint64		jkey;

		if (TupIsNull(slot))
			break;
		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		gpuhash_fill_scan_slot(&s->map, scan, side == 0 ? slot : NULL, side == 1 ? slot : NULL);
		econtext->ecxt_scantuple = scan;
		if (!join_key(s, econtext, side, &jkey))
			continue;
		gha_collect_row(s, econtext, side);
		s->jkeys[s->nrows - 1] = jkey;
		if (gha_pool_batch_full(s))
			gha_pool_flush(s, side, NULL);
	}
	if (pages)
		gpuhash_page_scan_end(pages, &s->page_stats);
	if (gha_pool_active(s))
		gha_pool_flush(s, side, NULL);
	*ms += gpuhash_elapsed_ms(start) - (s->stat_pool_ms - pool_ms);
}

/*
 * Move the arrays collected so far out of the node into *side; the node
 * starts collecting afresh.
 */
static void
take_side(GpuHashAggState *s, GhaSideArrays *side)
{
	side->n = s->nrows;
	side->jkeys = s->jkeys;
	side->keys = s->keys;
	side->ncols = s->ncols;
	side->values = palloc(sizeof(void *) * Max(s->ncols, 1));
	side->nulls = palloc(sizeof(uint8 *) * Max(s->ncols, 1));
	for (int c = 0; c < s->ncols; c++)
	{
		side->values[c] = s->values[c];
		side->nulls[c] = s->nulls[c];
		s->values[c] = NULL;
		s->nulls[c] = NULL;
	}
	s->keys = NULL;
	s->jkeys = NULL;
	s->cap = s->nrows = 0;
}

/*
 * A parallel-aware node: trade this process's share of the inner side for
 * the whole of it (agg_shared.c).  Only columns made at start exist yet,
 * the same in every process.
 */
static void
share_inner(GpuHashAggState *s, bool attached_early, GhaSideArrays *inner)
{
	GhaSideArrays mine = *inner;
	bool	   *share = palloc(sizeof(bool) * Max(s->ncols, 1));

	if (s->ncols != s->nstatic_cols)
		elog(ERROR, "gpuhash: a shared inner side made columns while it was read");
	for (int c = 0; c < s->ncols; c++)
		share[c] = s->col_side[c] == 1;
	gha_shared_exchange(s->shared, s->css.ss.ps.state->es_query_dsa, attached_early, &mine,
						share, s->col_nulls, s->data_cxt, inner);
}

/*
 * A fused join: read the inner side, set its arrays aside, read the outer
 * side, and let the engine join and aggregate (agg.h, "FUSED JOIN").
 */
void
gha_aggregate_fused(GpuHashAggState *s)
{
	GhaSideArrays inner;
	bool		keyed[2] = {gha_side_keyed(s, 0), gha_side_keyed(s, 1)};
	gh_aggcol  *cols;
	uint8	   *col_inner;
	gh_joinagg	spec;
	bool		early = false;
	bool		pooled = gha_pool_active(s);
	instr_time	start;

	if (pooled)
		gha_pool_attach(s);
	else if (s->shared)
		early = gha_shared_attach(s->shared);
	read_side(s, s->inner_ps, 1, &s->stat_inner_ms);
	s->stat_inner_rows += s->pool_flushed;
	s->pool_flushed = 0;
	take_side(s, &inner);
	if (s->shared && !pooled)
	{
		INSTR_TIME_SET_CURRENT(start);
		share_inner(s, early, &inner);
		s->stat_share_ms += gpuhash_elapsed_ms(start);
	}
	s->stat_inner_rows += inner.n;
	/* pooled, other processes' inner rows may join this one's outer rows */
	if (inner.n > 0 || pooled)
	{
		read_side(s, s->input_ps, 0, &s->stat_outer_ms);
		s->stat_outer_rows += s->nrows + s->pool_flushed;
		s->pool_flushed = 0;
	}
	if (pooled)
	{
		/* both sides went to the pool as they were read */
		gha_pool_done(s);
		return;
	}
	if (inner.n == 0 || s->nrows == 0)
		return;					/* no pairs, no groups */

	cols = palloc(sizeof(gh_aggcol) * Max(s->ncols, 1));
	col_inner = palloc(Max(s->ncols, 1));
	for (int c = 0; c < s->ncols; c++)
	{
		col_inner[c] = s->col_side[c] == 1;
		if (col_inner[c] && c >= inner.ncols)
			elog(ERROR, "gpuhash: inner aggregate column %d made after the inner side was read", c);
		cols[c] = s->cols[c];
		cols[c].values = col_inner[c] ? inner.values[c] : s->values[c];
		cols[c].nulls = col_inner[c] ? inner.nulls[c] : s->nulls[c];
	}
	spec.outer_keys = keyed[0] ? s->keys : NULL;
	spec.inner_keys = keyed[1] ? inner.keys : NULL;
	spec.inner_rows = (size_t) inner.n;
	spec.cols = cols;
	spec.col_inner = col_inner;
	spec.ncols = s->ncols;

	INSTR_TIME_SET_CURRENT(start);
	s->table = gpuhash_op_build(&s->eng, (gh_kind) s->fused_kind, inner.jkeys, NULL,
								(size_t) inner.n);
	s->results[s->nresults] = gpuhash_op_join_aggregate(s->table, s->jkeys, (size_t) s->nrows,
														GH_JOIN_AUTO, &spec);
	gpuhash_op_table_free(s->table);
	s->table = NULL;
	s->stat_pairs += (int64) s->results[s->nresults]->input_rows;
	gha_add_result(s, 0, start);
}

