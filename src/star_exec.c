/*-------------------------------------------------------------------------
 *
 * star_exec.c
 *	  Executor half of GpuStarAgg: the dimensions read, the program
 *	  compiled, the fact table's pages through the star, the groups back.
 *
 * INTERFACE ROUTINES
 *		gpuhash_star_create_state	CreateCustomScanState callback
 *		(BeginGpuStarAgg, ExecGpuStarAgg, EndGpuStarAgg, ReScanGpuStarAgg,
 *		 ExplainGpuStarAgg, and the parallel-aware node's DSM callbacks)
 *
 * On its first call the node reads every dimension through its plan
 * (star_dims.c), compiles the program with what it found, makes the star
 * (star_ops.h: in the GPU service, or the backend's engine), feeds it the
 * fact table (star_scan.c), and takes the groups back.  Each group becomes
 * one scan tuple -- its grouping columns decoded from the key (a
 * dimension's code through that dimension's dictionary; a packed column
 * unpacked), its aggregates finished as GpuHashAgg finishes them
 * (agg_final.c, agg_numeric.c) -- which HAVING filters and the target
 * list projects.
 *
 * PARALLELISM
 *
 * Under a Gather the leader does all of the above but the scan while it
 * sets up the parallel query (InitializeDSM, before any worker starts), and
 * leaves the star's number in the node's shared memory.  A dimension
 * with a partial plan is read by every process instead, each its share
 * (star_dim_share.c); the star is then made once the last share is
 * published, by the leader, or with parallel_leader_participation off by
 * the worker that read last (read_shares).  Every process then feeds that
 * star its share of the fact table's blocks: it counts itself active
 * before it takes its first block, and out once its last batch is in.
 * The blocks come from one allocator, so when a process finds none left
 * every block has gone to a process counted active; once none is, every
 * row is in.  The leader then waits for that and returns
 * the groups itself, so that none passes through the Gather's queues;
 * with parallel_leader_participation off, the worker that made the star
 * returns them, or the last worker out, reading the dimensions' grouping
 * values from the DSA area where the leader left them.  The other
 * processes return nothing.
 *
 * Where the device fails the star the processes feed (a batch, or the
 * groups; gpuhash.cpu_fallback on), the star is given up: the process that
 * saw the failure marks it in the node's shared memory, every process stops
 * feeding it (the GPU service fails every later call on it the same way),
 * and the process that returns the groups reads the whole fact table alone
 * into a star of its own on the CPU (star_alone; star_scan.c, whole_pass).
 * So does the last worker out where the leader, not taking part, made a
 * star of its own engine, which no process could feed.  A star made in one
 * process's engine (the service had no room, or failed to make it) is fed
 * by that process alone, which makes it again on the CPU if the device
 * fails it later.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "rewrite/rewriteManip.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "gpuhash.h"
#include "keys.h"
#include "star_state.h"

static void BeginGpuStarAgg(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *ExecGpuStarAgg(CustomScanState *node);
static void EndGpuStarAgg(CustomScanState *node);
static void ReScanGpuStarAgg(CustomScanState *node);
static void ExplainGpuStarAgg(CustomScanState *node, List *ancestors, ExplainState *es);
static Size EstimateDSMGpuStarAgg(CustomScanState *node, ParallelContext *pcxt);
static void InitializeDSMGpuStarAgg(CustomScanState *node, ParallelContext *pcxt,
									void *coordinate);
static void ReInitializeDSMGpuStarAgg(CustomScanState *node, ParallelContext *pcxt,
									  void *coordinate);
static void InitializeWorkerGpuStarAgg(CustomScanState *node, shm_toc *toc, void *coordinate);

static CustomExecMethods star_exec_methods = {
	.CustomName = GPUHASH_STAR_NAME,
	.BeginCustomScan = BeginGpuStarAgg,
	.ExecCustomScan = ExecGpuStarAgg,
	.EndCustomScan = EndGpuStarAgg,
	.ReScanCustomScan = ReScanGpuStarAgg,
	.EstimateDSMCustomScan = EstimateDSMGpuStarAgg,
	.InitializeDSMCustomScan = InitializeDSMGpuStarAgg,
	.ReInitializeDSMCustomScan = ReInitializeDSMGpuStarAgg,
	.InitializeWorkerCustomScan = InitializeWorkerGpuStarAgg,
	.ExplainCustomScan = ExplainGpuStarAgg,
};

Node *
gpuhash_star_create_state(CustomScan *cscan)
{
	GpuStarAggState *s = palloc0(sizeof(GpuStarAggState));

	NodeSetTag(s, T_CustomScanState);
	s->css.flags = cscan->flags;
	s->css.methods = &star_exec_methods;
	return (Node *) s;
}

/*
 * Pages per batch: 32 MB of pages a request, so that the service's fixed
 * cost per request (a kernel launch, a synchronisation, the reply) stays
 * small against the bus time of the pages; the pins held per batch stay a
 * small share of the shared buffers (as page_scan.c's).
 */
static size_t
batch_pages(void)
{
	return (size_t) Min(4096, Max(8, NBuffers / 128));
}

/* what the node holds in the engine, let go of on every way out */
static void
release(void *arg)
{
	GpuStarAggState *s = (GpuStarAggState *) arg;

	if (s->groups_res)
		gpuhash_op_groups_free(&s->eng, s->groups_res);
	s->groups_res = NULL;
	gpuhash_op_star_free(s->star);
	s->star = NULL;
	star_dim_shares_detach(s);
}

/* a fresh context for one execution's dimensions, star and groups */
static void
reset_execution(GpuStarAggState *s)
{
	MemoryContextCallback *cb;

	if (s->cxt)
		MemoryContextDelete(s->cxt);
	s->cxt = AllocSetContextCreate(s->css.ss.ps.state->es_query_cxt, "GpuStarAgg",
								   ALLOCSET_DEFAULT_SIZES);
	gpuhash_ops_init(&s->eng, s->cxt, GHST_STAR_QUERIES);
	cb = MemoryContextAlloc(s->cxt, sizeof(MemoryContextCallback));
	cb->func = release;
	cb->arg = s;
	MemoryContextRegisterResetCallback(s->cxt, cb);
	s->star = NULL;
	s->groups_res = NULL;
	s->compiled = NULL;
	s->done = false;
	s->made_star = false;
	s->returns_groups = false;
	s->whole_pass = false;
	s->use_alt = false;
	s->alt_why = NULL;
	s->empty_dim = -1;
	s->empty_row = false;
	s->ngroups_out = 0;
	s->cur = 0;
	for (int d = 0; d < s->ndims; d++)
	{
		memset(&s->dims[d].arrays, 0, sizeof(StarDimArrays));
		s->dims[d].dict = NULL;
		s->dims[d].rows_by_code = NULL;
		s->dims[d].ncodes = 0;
		s->dims[d].rows = 0;
		s->dims[d].escaped = false;
		s->dims[d].complete = false;
		s->dims[d].filtering = false;
		s->dims[d].removed = 0;
		s->dims[d].pushed_removed = 0;
	}
	for (int p = 0; p < s->npayloads; p++)
		star_payload_numeric(&s->payloads[p], s->payloads[p].type, s->payloads[p].typmod);
}

/*
 * Whether a dimension's plan is partial, each process reading its share: a
 * parallel-aware node in it that no Gather of its own runs.
 */
static bool
reads_a_share(PlanState *ps, void *context)
{
	if (ps == NULL || IsA(ps, GatherState) || IsA(ps, GatherMergeState))
		return false;
	if (ps->plan->parallel_aware)
		return true;
	return planstate_tree_walker(ps, reads_a_share, context);
}

/*
 * Whether each row of a dimension is a group of its own: its key (its
 * plan's first output) is also one of its grouping columns (the next ones),
 * and no two of its rows share a key (the star escapes where a checked one
 * does).  Then a row's code is its number, and its grouping values go into
 * the dictionary without being hashed (star_dims.c).
 */
static bool
key_is_grouped(StarDimState *ds)
{
	List	   *tlist = ds->ps->plan->targetlist;

	/* a group of no row (null_row) might equal a row's */
	if (ds->semi || ds->null_row_set)
		return false;
	for (int g = 0; g < ds->ngroups; g++)
		if (equal(linitial_node(TargetEntry, tlist)->expr,
				  list_nth_node(TargetEntry, tlist, 1 + g)->expr))
			return true;
	return false;
}

/*
 * A LEFT JOIN's dimension's grouping values where the join finds no row, as
 * planned (NULL for every column where the list is shorter: STAR_DIM_NULL_ROW).
 */
static void
null_row(StarDimState *ds, List *consts)
{
	ds->null_values = palloc0(sizeof(Datum) * Max(ds->ngroups, 1));
	ds->null_isnull = palloc(sizeof(bool) * Max(ds->ngroups, 1));
	ds->null_row_set = false;
	for (int g = 0; g < ds->ngroups; g++)
	{
		Const	   *c = g < list_length(consts) ? list_nth_node(Const, consts, g) : NULL;

		ds->null_isnull[g] = c == NULL || c->constisnull;
		ds->null_values[g] = ds->null_isnull[g] ? (Datum) 0 : c->constvalue;
		ds->null_row_set |= !ds->null_isnull[g];
	}
}

static void
BeginGpuStarAgg(CustomScanState *node, EState *estate, int eflags)
{
	GpuStarAggState *s = (GpuStarAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	ListCell   *lc;
	int			d = 0,
				a = 0;

	s->fact_relid = (Oid) intVal(list_nth(priv, STAR_PRIV_FACT_RELID));
	s->quals = list_nth(priv, STAR_PRIV_QUALS);
	s->joinquals = list_nth(priv, STAR_PRIV_JOIN_QUALS);
	s->dims_plan = list_nth(priv, STAR_PRIV_DIMS);
	s->groups = list_nth(priv, STAR_PRIV_GROUPS);
	s->grouptypes = list_nth(priv, STAR_PRIV_GROUPTYPES);
	s->aggs = list_nth(priv, STAR_PRIV_AGGS);
	s->payload_plan = list_nth(priv, STAR_PRIV_PAYLOADS);
	s->parallel = intVal(list_nth(priv, STAR_PRIV_PARALLEL)) != 0;
	s->group_eq = list_nth(priv, STAR_PRIV_GROUP_EQ);
	s->ngroups = list_length(s->groups);
	s->naggs = list_length(s->aggs);

	/* the inputs: the fact table's scan, then the dimensions */
	s->fact_ps = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(s->fact_ps);
	s->nfact_scans = star_fact_scans(s->fact_ps, &s->fact_scans);
	if (s->nfact_scans > 0)
		s->fact_desc = RelationGetDescr(s->fact_scans[0]->ss_currentRelation);
	else
	{
		/* every partition pruned: the partitioned table's own layout */
		Relation	rel = table_open(s->fact_relid, NoLock);

		s->fact_desc = CreateTupleDescCopyConstr(RelationGetDescr(rel));
		table_close(rel, NoLock);
	}
	s->ndims = list_length(s->dims_plan);
	s->dims = palloc0(sizeof(StarDimState) * Max(s->ndims, 1));
	foreach(lc, s->dims_plan)
	{
		List	   *dim = lfirst(lc);
		StarDimState *ds = &s->dims[d];

		ds->ps = ExecInitNode(list_nth(cscan->custom_plans, d + 1), estate, eflags);
		node->custom_ps = lappend(node->custom_ps, ds->ps);
		ds->name = strVal(list_nth(dim, STAR_DIM_NAME));
		ds->ngroups = intVal(list_nth(dim, STAR_DIM_NGROUPS));
		ds->npayload = intVal(list_nth(dim, STAR_DIM_NPAYLOAD));
		ds->partial = reads_a_share(ds->ps, NULL);
		ds->checked = intVal(list_nth(dim, STAR_DIM_UNIQUENESS)) == STAR_DIM_CHECK;
		ds->semi = intVal(list_nth(dim, STAR_DIM_UNIQUENESS)) == STAR_DIM_SEMI;
		ds->left = intVal(list_nth(dim, STAR_DIM_JOIN)) == GH_PROBE_LEFT;
		ds->anti = intVal(list_nth(dim, STAR_DIM_JOIN)) == GH_PROBE_ANTI;
		null_row(ds, list_nth(dim, STAR_DIM_NULL_ROW));
		ds->row_codes = key_is_grouped(ds);
		ds->filter_source = intVal(list_nth(dim, STAR_DIM_FILTER));
		ds->filter_col = intVal(list_nth(dim, STAR_DIM_FILTER_COL));
		ds->est_rows = floatVal(list_nth(dim, STAR_DIM_EST_ROWS));
		s->shared_dims |= ds->partial;
		d++;
	}
	if (intVal(list_nth(priv, STAR_PRIV_ALT)))
	{
		s->alt_ps = ExecInitNode(llast(cscan->custom_plans), estate, eflags);
		node->custom_ps = lappend(node->custom_ps, s->alt_ps);
	}
	s->npayloads = list_length(s->payload_plan);
	s->payloads = palloc0(sizeof(StarPayload) * Max(s->npayloads, 1));
	for (int p = 0; p < s->npayloads; p++)
	{
		List	   *pi = list_nth(s->payload_plan, p);

		s->payloads[p].dim = linitial_int(pi);
		s->payloads[p].col = lsecond_int(pi);
		s->payloads[p].type = (Oid) lthird_int(pi);
		s->payloads[p].typmod = lfourth_int(pi);
	}

	s->ops = palloc(sizeof(GhaOp) * Max(s->naggs, 1));
	s->argtypes = palloc(sizeof(Oid) * Max(s->naggs, 1));
	s->numeric_buf = palloc(sizeof(char *) * Max(s->naggs, 1));
	foreach(lc, s->aggs)
	{
		List	   *agg = lfirst(lc);

		s->ops[a] = (GhaOp) intVal(linitial(agg));
		s->argtypes[a] = (Oid) intVal(lsecond(agg));
		s->numeric_buf[a] = palloc(MAXALIGN(GHA_NUMERIC_BYTES));
		a++;
	}
	reset_execution(s);
}

/* ---- one execution ---- */

static int
key_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/*
 * keys[0 .. n) sorted by a least significant digit radix sort, a byte a
 * pass: the eight bytes' counts taken in one read, and a pass skipped where
 * every key has the same byte (keys of narrow types leave most of them
 * alike).  Ten million keys take about a quarter of qsort's time (0.55 s
 * against 2.3 s on one core).
 */
static void
radix_sort(uint64 *keys, uint64 n)
{
	uint64	   *count = palloc0(sizeof(uint64) * 8 * 256);
	uint64	   *tmp = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	uint64	   *from = keys,
			   *to = tmp;

	for (uint64 i = 0; i < n; i++)
		for (int b = 0; b < 8; b++)
			count[b * 256 + ((keys[i] >> (8 * b)) & 255)]++;
	for (int b = 0; b < 8; b++)
	{
		uint64	   *c = count + b * 256;
		uint64		at = 0;

		if (c[(keys[0] >> (8 * b)) & 255] == n)
			continue;			/* one value of this byte: already in order */
		for (int v = 0; v < 256; v++)
		{
			uint64		k = c[v];

			c[v] = at;
			at += k;
		}
		for (uint64 i = 0; i < n; i++)
			to[c[(from[i] >> (8 * b)) & 255]++] = from[i];
		{
			uint64	   *swap = from;

			from = to;
			to = swap;
		}
	}
	if (from != keys)
		memcpy(keys, from, sizeof(uint64) * n);
	pfree(tmp);
	pfree(count);
}

/* keys[0 .. n) sorted, each one kept once in front: how many differ */
static uint64
sort_unique(uint64 *keys, uint64 n)
{
	uint64		m = Min(n, 1);

	if (n > 4096)
		radix_sort(keys, n);
	else
		qsort(keys, n, sizeof(uint64), key_cmp);
	for (uint64 r = 1; r < n; r++)
		if (keys[r] != keys[m - 1])
			keys[m++] = keys[r];
	return m;
}

/*
 * The right side of a semi join keeps one row of each key: whether a fact
 * row meets one is all the join asks (and it has no columns).
 */
static void
semi_keys_distinct(GpuStarAggState *s)
{
	for (int d = 0; d < s->ndims; d++)
	{
		StarDimArrays *a = &s->dims[d].arrays;

		if (!s->dims[d].semi)
			continue;
		if (a->ncols != 0)
			elog(ERROR, "gpuhash: a GpuStarAgg's semi join carries columns");
		a->n = sort_unique(a->keys, a->n);
	}
}

/*
 * The star cannot give the query's groups (why): the alternative the planner
 * gave it runs instead (star_path.c, star_may_escape); without one, the
 * query fails with msg and detail.
 */
static void
use_alternative(GpuStarAggState *s, const char *why, const char *msg, const char *detail)
{
	if (s->alt_ps == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s", msg),
				 errdetail("%s", detail),
				 errhint("Set gpuhash.enable_star to off for this query.")));
	s->use_alt = true;
	s->alt_why = why;
}

/*
 * The dimensions read: the program compiled, the star made.  A dimension
 * that is unique by its statistics only (checked) may hold a key twice
 * after all; then a fact row may meet two of its rows, which the star cannot
 * join.  The engine finds such a key as it builds the dimension's table
 * (GH_ERR_DUPLICATE_KEY), and the node runs the alternative plan instead
 * (use_alt; no star).
 */
static void
make_star(GpuStarAggState *s)
{
	StarDimArrays *arrays;
	instr_time	start;
	const char *why;

	INSTR_TIME_SET_CURRENT(start);
	for (int d = 0; d < s->ndims; d++)
		if (s->dims[d].escaped || (s->shared != NULL && s->shared->dim_escaped && s->dims[d].partial))
		{
			/* a numeric value the device cannot hold: no star (star_dims.c) */
			use_alternative(s, psprintf("%s holds a numeric value the device cannot hold",
										s->dims[d].name),
							psprintf("GpuStarAgg cannot hold a numeric value of \"%s\" on the device",
									 s->dims[d].name),
							"The value is NaN or infinite, or needs more than 38 digits.");
			return;
		}
	semi_keys_distinct(s);
	s->empty_dim = -1;
	for (int d = 0; d < s->ndims && s->empty_dim < 0; d++)
		if (!s->dims[d].left && !s->dims[d].anti && s->dims[d].arrays.n == 0)
			s->empty_dim = d;
	for (int d = 0; d < s->ndims; d++)
		if (s->dims[d].null_row_set && s->dims[d].dict != NULL)
		{
			/* the group of a LEFT JOIN's rows of no dimension row */
			(void) gha_dict_lookup(s->dims[d].dict, s->dims[d].null_values,
								   s->dims[d].null_isnull);
			s->dims[d].ncodes = (int) s->dims[d].dict->nentries;
		}
	arrays = palloc0(sizeof(StarDimArrays) * Max(s->ndims, 1));
	if (!star_compile_node(s, &why))
	{
		use_alternative(s, psprintf("the program does not compile for the dimensions read: %s", why),
						"GpuStarAgg could not compile its program for the dimensions read",
						psprintf("The device program fails: %s.", why));
		return;
	}
	for (int d = 0; d < s->ndims; d++)
		arrays[d] = s->dims[d].arrays;
	s->star = gpuhash_op_star_create(&s->eng, s->compiled->prog, &s->compiled->spec,
									 s->ndims, arrays, batch_pages(), s->fact_relid);
	if (s->star->duplicate)
	{
		s->alt_why = psprintf("%s holds a key twice", s->dims[s->star->duplicate_dim].name);
		gpuhash_op_star_free(s->star);
		s->star = NULL;
		s->use_alt = true;
	}
	elog(DEBUG1, "gpuhash star: compiled and made in %.3f ms", gpuhash_elapsed_ms(start));
}

/* the dimensions read, the program compiled, the star made */
static void
build_star(GpuStarAggState *s)
{
	instr_time	start;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);

	INSTR_TIME_SET_CURRENT(start);
	star_read_dims(s);
	make_star(s);
	s->dims_ms = gpuhash_elapsed_ms(start);
	MemoryContextSwitchTo(old);
}

/*
 * A key that is a hash of its columns: does every group hold one value of
 * each?  False where two groups collided under one key.
 */
static bool
check_mixed_key(GpuStarAggState *s, gh_groups *g)
{
	for (int f = 0; f < s->compiled->nfields; f++)
	for (int c = 0; c < Max(s->compiled->fields[f].nchunks, 1); c++)
	{
		const gh_aggresult *r = &g->cols[s->compiled->fields[f].outcol + c];

		for (size_t i = 0; i < g->ngroups; i++)
			if (r->nonnull[i] != 0 &&
				(r->nonnull[i] != g->rows[i] || r->imin[i] != r->imax[i]))
				return false;
	}
	return true;
}

/*
 * A float grouping column: did every group hold one exact value, not both
 * -0 and 0 (star_compile.c)?
 */
static bool
check_zero_cols(GpuStarAggState *s, gh_groups *g)
{
	for (int f = 0; f < s->compiled->nfields; f++)
	{
		const gh_aggresult *r;

		if (s->compiled->fields[f].zerocol < 0)
			continue;
		r = &g->cols[s->compiled->fields[f].zerocol];
		for (size_t i = 0; i < g->ngroups; i++)
			if (r->nonnull[i] != 0 && r->imin[i] != r->imax[i])
				return false;
	}
	return true;
}

static void scan(GpuStarAggState *s);
static void read_shares(GpuStarAggState *s);

/*
 * The whole fact table once more, into the star made again: by this process
 * alone under a Gather (star_scan.c, whole_pass).
 */
static void
scan_again(GpuStarAggState *s)
{
	s->star->restart = false;
	s->pages_shipped = s->pages_cached = s->pages_synthetic = s->pages_reread = 0;
	s->pages_judged = s->pages_undecided = 0;
	s->rows_cpu = 0;
	if (s->shared != NULL)
		s->whole_pass = true;
	else
		ExecReScan(s->fact_ps);
	scan(s);
}

/*
 * The process that returns the groups reads the whole fact table into a
 * star of its own: where the device failed the star the processes of a
 * parallel query fed (star_ops.h, fed_by_many; in this process or another,
 * failure and msg say how), or where no process could feed the leader's.
 * The star is the one it made, made again on the CPU, or one of the
 * dimensions read here (none is read in shares then: the leader made the
 * star), on the CPU where the device failed.
 */
static void
star_alone(GpuStarAggState *s, gh_status failure, const char *msg)
{
	if (failure != GH_OK && !s->eng.fallback && !gpuhash_ops_fall_back(&s->eng, failure, msg))
		elog(ERROR, "gpuhash: a GpuStarAgg's star was given up for a failure it cannot fall back from");
	if (s->made_star)
		gpuhash_op_star_on_cpu(s->star);
	else
	{
		if (s->shared_dims)
			elog(ERROR, "gpuhash: a GpuStarAgg's star was given up by a process that did not make it");
		gpuhash_op_star_free(s->star);
		s->star = NULL;
		build_star(s);
	}
	s->star->restartable = true;
	scan_again(s);
}

/*
 * A row of the fact table the device cannot evaluate was read (in this
 * process, or in another of a parallel query): the star's groups would miss
 * it, so the process that returns the groups runs the alternative plan
 * instead, which the planner gives every star whose fact table may hold such
 * a row (star_path.c, star_may_escape); without one, the query fails.
 */
static void
escape_to_alternative(GpuStarAggState *s)
{
	use_alternative(s, "a row of the fact table holds a value the device cannot evaluate",
					"GpuStarAgg cannot evaluate a row of the fact table on the device",
					"A value the query reads is stored compressed or out of line, is a numeric NaN, or needs more than 128 bits.");
	s->returns_groups = true;
}

/*
 * Two groups collided under one hashed key (check_mixed_key), or a group of
 * a float column held both -0 and 0 (check_zero_cols), which PostgreSQL's
 * plan shows as its first row shows it: the groups are let go of, and the
 * alternative runs instead, which the planner gives every star whose key
 * may be hashed (star_path.c, star_may_escape) or holds such a float
 * (StarCompiled.zero_cols); without one, the query fails.
 */
static void
key_collided(GpuStarAggState *s, bool zeros)
{
	if (zeros)
		use_alternative(s, "a group of a float grouping column held both 0 and -0",
						"GpuStarAgg found a group holding both 0 and -0",
						"A group shows its first row's value, which the device cannot tell.");
	else
		use_alternative(s, "two groups collided under one hashed key",
						"GpuStarAgg found two groups under one hashed key",
						"Group keys wider than 64 bits are hashed, and two of them collided.");
	gpuhash_op_groups_free(&s->eng, s->groups_res);
	s->groups_res = NULL;
	s->returns_groups = true;
}

static void
take_groups(GpuStarAggState *s)
{
	instr_time	start;
	MemoryContext old;
	bool		zeros;

	if (s->star->escaped)
	{
		escape_to_alternative(s);
		return;
	}
	old = MemoryContextSwitchTo(s->cxt);
	INSTR_TIME_SET_CURRENT(start);
	s->groups_res = gpuhash_op_star_result(s->star);
	if (s->groups_res == NULL && s->star->given_up)
		star_alone(s, s->star->failure, s->star->failure_msg);
	else if (s->groups_res == NULL)
		scan_again(s);			/* made again on the CPU (star_ops.h, restart) */
	if (s->groups_res == NULL && s->star->escaped)
	{
		MemoryContextSwitchTo(old);
		escape_to_alternative(s);
		return;
	}
	if (s->groups_res == NULL)
	{
		s->groups_res = gpuhash_op_star_result(s->star);
		if (s->groups_res == NULL)
			elog(ERROR, "gpuhash: a GpuStarAgg's star failed on the CPU");
	}
	/* every process has read its pages by now: the count of them all */
	s->rows_kept = (int64) s->star->kept;
	zeros = s->compiled->zero_cols && !check_zero_cols(s, s->groups_res);
	if (zeros || (s->compiled->mixed_key && !check_mixed_key(s, s->groups_res)))
	{
		MemoryContextSwitchTo(old);
		key_collided(s, zeros);
		return;
	}
	s->empty_row = s->groups_res->ngroups == 0 && s->ngroups == 0;
	s->ngroups_out = (int64) s->groups_res->ngroups;
	if (s->groups_res->ndevices > 1)
		s->stat_devices = gpuhash_device_mask(s->groups_res->devices, s->groups_res->ndevices);
	s->returns_groups = true;
	s->result_ms = gpuhash_elapsed_ms(start);
	MemoryContextSwitchTo(old);
}

/*
 * The fact table into the star, unless an inner dimension (or a semi
 * join's) has no row: then no fact row can join, and none is read, as
 * PostgreSQL's hash join reads no outer row over an empty inner side
 * (the fact table's quals are not evaluated either: they cannot fail).
 */
static void
scan(GpuStarAggState *s)
{
	instr_time	start;
	MemoryContext old;

	if (s->shared != NULL && s->empty_dim < 0)
		s->empty_dim = s->shared->empty_dim;
	if (s->empty_dim >= 0)
	{
		elog(DEBUG1, "gpuhash star: %s has no row, the fact table is not read",
			 s->dims[s->empty_dim].name);
		return;
	}
	old = MemoryContextSwitchTo(s->cxt);

	INSTR_TIME_SET_CURRENT(start);
	star_scan_fact(s);
	s->scan_ms = gpuhash_elapsed_ms(start);
	MemoryContextSwitchTo(old);
}

/* A worker that returns the groups: the program's layout and the grouping values. */
static void
prepare_decode(GpuStarAggState *s)
{
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	const char *why;

	star_dims_from_shared(s, s->shared, s->area);
	/* the process that made the star compiled the same program */
	if (!star_compile_node(s, &why))
		elog(ERROR, "gpuhash: could not compile a GpuStarAgg's program: %s", why);
	MemoryContextSwitchTo(old);
}

/*
 * Sleep on the node's condition variable until cond, tested under its
 * mutex (where it may also record what it found), holds.
 */
static void
wait_for(StarShared *sh, bool (*cond) (StarShared *sh))
{
	ConditionVariablePrepareToSleep(&sh->cv);
	for (;;)
	{
		bool		done;

		SpinLockAcquire(&sh->mutex);
		done = cond(sh);
		SpinLockRelease(&sh->mutex);
		if (done)
			break;
		ConditionVariableSleep(&sh->cv, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
}

/* no process feeds the star any more: the groups are taken now */
static bool
none_active(StarShared *sh)
{
	if (sh->active != 0)
		return false;
	sh->finished = true;
	return true;
}

/* every share of the dimensions is published: the star is made now */
static bool
no_reader(StarShared *sh)
{
	if (sh->dim_readers != 0)
		return false;
	sh->dims_closed = true;
	return true;
}

static bool
star_made(StarShared *sh)
{
	return sh->ready;
}

/*
 * The groups, by the process that returns them, once no process feeds the
 * star: where the device failed it in any of them, from a star of this
 * process alone.
 */
static void
finish_parallel(GpuStarAggState *s, bool decode)
{
	StarShared *sh = s->shared;

	if (sh->use_alt)
	{
		s->use_alt = true;
		s->returns_groups = true;
		return;
	}
	if (sh->escaped)
	{
		escape_to_alternative(s);
		return;
	}
	if (sh->failed || sh->alone)
	{
		MemoryContext old = MemoryContextSwitchTo(s->cxt);

		star_alone(s, (gh_status) sh->failure, sh->failure_msg);
		MemoryContextSwitchTo(old);
	}
	else if (decode)
		prepare_decode(s);
	take_groups(s);
}

static void
run_parallel(GpuStarAggState *s)
{
	StarShared *sh = s->shared;
	bool		leader = !IsParallelWorker();
	bool		finishes,
				last;

	if (s->shared_dims && s->star == NULL)
		read_shares(s);
	if (!sh->ready)
		elog(ERROR, "gpuhash: a GpuStarAgg's star was not made");
	finishes = (sh->leader_finishes && leader) || (sh->maker_finishes && s->made_star);

	/* counted active before attaching: the star outlives every active process's use */
	SpinLockAcquire(&sh->mutex);
	if (sh->finished || (s->star == NULL && sh->place.nparts == 0 && !sh->alone) ||
		((sh->failed || sh->escaped) && !finishes))
	{
		/* done, given up, or the maker's own star, which the maker feeds alone */
		SpinLockRelease(&sh->mutex);
		return;
	}
	sh->active++;
	SpinLockRelease(&sh->mutex);
	if (s->star == NULL && sh->place.nparts > 0)
		s->star = gpuhash_op_star_attach(&s->eng, &sh->place, batch_pages());
	if (s->star != NULL && s->star->in_service)
		s->star->fed_by_many = true;
	else if (s->star != NULL)
		s->star->restartable = true;	/* the maker's own: fed by the maker alone */

	if (!sh->failed && !sh->alone && !sh->escaped)
		scan(s);

	SpinLockAcquire(&sh->mutex);
	if (s->star != NULL && s->star->escaped)
		sh->escaped = true;		/* every process stops feeding it */
	if (s->star != NULL && s->star->given_up && !sh->failed)
	{
		/* the device failed it here first: every process stops feeding it */
		sh->failed = true;
		sh->failure = s->star->failure;
		strlcpy(sh->failure_msg, s->star->failure_msg, sizeof(sh->failure_msg));
	}
	sh->active--;
	last = sh->active == 0 && !sh->finished && !sh->leader_finishes && !sh->maker_finishes;
	if (last)
		sh->finished = true;
	SpinLockRelease(&sh->mutex);
	ConditionVariableBroadcast(&sh->cv);

	if (finishes)
	{
		/* every process that took blocks has sent its last batch */
		wait_for(sh, none_active);
		finish_parallel(s, false);
	}
	else if (last)
		finish_parallel(s, true);
}

static void
run(GpuStarAggState *s)
{
	if (s->shared != NULL)
	{
		run_parallel(s);
		return;
	}
	build_star(s);
	if (s->use_alt)
	{
		s->returns_groups = true;
		return;
	}
	/* fed by this process alone: the device failing it part way, it is made again on the CPU */
	s->star->restartable = true;
	scan(s);
	take_groups(s);
}

/* ---- the groups ---- */

/* grouping column g of group i into the scan tuple */
static void
group_value(GpuStarAggState *s, const gh_groups *g, size_t i, int col, Datum *value,
			bool *isnull)
{
	StarField  *f = &s->compiled->fields[col];
	List	   *gt = list_nth(s->grouptypes, col);
	uint64		bits;

	if (f->nchunks > 0)
	{
		/* a wide text, from its chunks */
		char		buf[7 * STAR_TEXT_CHUNKS];
		int			len = 0;

		*isnull = g->cols[f->outcol].nonnull[i] == 0;
		if (*isnull)
		{
			*value = (Datum) 0;
			return;
		}
		for (int c = 0; c < f->nchunks; c++)
		{
			uint64		w = (uint64) g->cols[f->outcol + c].imin[i];

			for (int b = 0; b < (int) (w >> 56); b++)
				buf[len++] = (char) (w >> (8 * b));
		}
		*value = star_text_datum((Oid) linitial_int(gt), lsecond_int(gt), buf, len);
		return;
	}
	if (s->compiled->mixed_key)
	{
		const gh_aggresult *r = &g->cols[f->outcol];

		*isnull = r->nonnull[i] == 0;
		bits = (uint64) r->imin[i];
	}
	else
	{
		uint64		key = g->keys[i];

		*isnull = f->nullbit >= 0 && (key >> f->nullbit) & 1;
		bits = f->width >= 64 ? key >> f->shift :
			(key >> f->shift) & ((UINT64CONST(1) << f->width) - 1);
	}
	if (*isnull)
	{
		*value = (Datum) 0;
		return;
	}
	if (f->zerocol >= 0)
		bits = (uint64) g->cols[f->zerocol].imin[i];	/* -0 as such */
	if (f->dim >= 0)
	{
		/* its place among the dimension's grouping columns */
		int			k = 0;

		for (int c = 0; c < col; c++)
			k += s->compiled->fields[c].dim == f->dim;
		*value = star_dim_group_value(&s->dims[f->dim], (uint32) bits, k, isnull);
		return;
	}
	*value = star_unpack_field((Oid) linitial_int(gt), lsecond_int(gt), bits);
}

/* the alternative's next row into slot: its columns are the scan tuple's; false: no more */
static bool
alt_row(GpuStarAggState *s, TupleTableSlot *slot)
{
	TupleTableSlot *alt = star_input_next(s, s->alt_ps, NULL);

	if (TupIsNull(alt))
		return false;
	slot_getallattrs(alt);
	memcpy(slot->tts_values, alt->tts_values, sizeof(Datum) * (s->ngroups + s->naggs));
	memcpy(slot->tts_isnull, alt->tts_isnull, sizeof(bool) * (s->ngroups + s->naggs));
	s->ngroups_out++;
	return true;
}

/* the next group's grouping columns and aggregates into slot; false: no more */
static bool
group_row(GpuStarAggState *s, TupleTableSlot *slot)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	const gh_groups *g = s->groups_res;
	size_t		i = s->cur;
	bool		empty = s->empty_row;

	if (!empty && i >= g->ngroups)
		return false;
	s->cur++;
	s->empty_row = false;
	for (int c = 0; c < s->ngroups; c++)
		group_value(s, g, i, c, &slot->tts_values[c], &slot->tts_isnull[c]);
	for (int a = 0; a < s->naggs; a++)
	{
		StarAggCols *ac = &s->compiled->aggs[a];
		Datum	   *v = &slot->tts_values[s->ngroups + a];
		bool	   *n = &slot->tts_isnull[s->ngroups + a];
		MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

		if (empty)
		{
			/* a plain aggregate over no rows: counts are 0, the rest NULL */
			*n = !(s->ops[a] == GHA_COUNT || s->ops[a] == GHA_COUNT_STAR);
			*v = Int64GetDatum(0);
		}
		else if (s->argtypes[a] == NUMERICOID && (s->ops[a] == GHA_SUM || s->ops[a] == GHA_AVG))
			*v = gha_numeric_final(s->ops[a] == GHA_AVG, g, &ac->num, i, n);
		else if (s->argtypes[a] == NUMERICOID && (s->ops[a] == GHA_MIN || s->ops[a] == GHA_MAX))
		{
			/* a scaled integer (star_compile.c) */
			const gh_aggresult *r = &g->cols[ac->col];

			*n = r->nonnull[i] == 0;
			*v = *n ? (Datum) 0 :
				star_numeric_scaled(s->ops[a] == GHA_MIN ? r->imin[i] : r->imax[i], ac->scale);
		}
		else
			*v = gpuhash_agg_final(s->ops[a], s->argtypes[a], g, ac->col, i, n,
								   s->numeric_buf[a]);
		MemoryContextSwitchTo(old);
	}
	return true;
}

/* the next scan tuple (a group, or the alternative's row) that HAVING keeps, projected */
static TupleTableSlot *
next_group(GpuStarAggState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	TupleTableSlot *slot = s->css.ss.ss_ScanTupleSlot;

	for (;;)
	{
		ResetExprContext(econtext);
		ExecClearTuple(slot);
		if (!(s->use_alt ? alt_row(s, slot) : group_row(s, slot)))
			return NULL;
		ExecStoreVirtualTuple(slot);
		econtext->ecxt_scantuple = slot;
		if (s->css.ss.ps.qual && !ExecQual(s->css.ss.ps.qual, econtext))
		{
			InstrCountFiltered1(&s->css.ss.ps, 1);
			continue;
		}
		return s->css.ss.ps.ps_ProjInfo ? ExecProject(s->css.ss.ps.ps_ProjInfo) : slot;
	}
}

static TupleTableSlot *
ExecGpuStarAgg(CustomScanState *node)
{
	GpuStarAggState *s = (GpuStarAggState *) node;

	if (!s->done)
	{
		s->prepared = false;
		run(s);
		s->done = true;
	}
	if (!s->returns_groups)
		return NULL;
	return next_group(s);
}

static void
EndGpuStarAgg(CustomScanState *node)
{
	GpuStarAggState *s = (GpuStarAggState *) node;
	ListCell   *lc;

	if (s->cxt)
		MemoryContextDelete(s->cxt);
	s->cxt = NULL;
	foreach(lc, node->custom_ps)
		ExecEndNode(lfirst(lc));
}

static void
ReScanGpuStarAgg(CustomScanState *node)
{
	GpuStarAggState *s = (GpuStarAggState *) node;
	ListCell   *lc;

	foreach(lc, node->custom_ps)
		ExecReScan(lfirst(lc));
	/*
	 * Under a Gather the rescan may come after (Re)InitializeDSM has read the
	 * dimensions and made the star for this execution (a nested loop rescans
	 * its inner side before the first run too): they are kept.
	 */
	if (!s->prepared)
		reset_execution(s);
	s->prepared = false;
}

/* ---- parallel ---- */

static Size
EstimateDSMGpuStarAgg(CustomScanState *node, ParallelContext *pcxt)
{
	return MAXALIGN(sizeof(StarShared));
}

/* The star just made, for every process: where it is, and what decoding its groups needs. */
static void
share_star(GpuStarAggState *s, StarShared *sh)
{
	memset(&sh->place, 0, sizeof(sh->place));
	if (s->star && s->star->in_service)
		sh->place = s->star->place;
	s->made_star = true;
	/* no star: the process that returns the groups runs the alternative */
	sh->use_alt = s->use_alt;
	sh->empty_dim = s->empty_dim;
	/* a worker that made it returns the groups (its star lives as long as it does) */
	sh->maker_finishes = !sh->leader_finishes && IsParallelWorker();
	sh->alone = s->use_alt;
	if (!sh->leader_finishes && !sh->maker_finishes && sh->place.nparts == 0)
	{
		/*
		 * The leader's own star, which no process feeds (the leader does not
		 * take part): the last worker out reads the whole fact table into a
		 * star of its own, on the CPU where the leader's fell back.
		 */
		sh->alone = true;
		if (s->eng.fallback && !s->use_alt)
		{
			/* (a status the worker falls back from; the reason is the leader's) */
			sh->failure = GH_ERR_DEVICE_NOMEM;
			strlcpy(sh->failure_msg, s->eng.fallback_reason, sizeof(sh->failure_msg));
		}
	}
	else if (!sh->leader_finishes && !sh->maker_finishes && s->area != NULL)
		star_dims_to_shared(s, sh, s->area);
	SpinLockAcquire(&sh->mutex);
	sh->ready = true;
	SpinLockRelease(&sh->mutex);
	ConditionVariableBroadcast(&sh->cv);
}

/*
 * The leader, before any worker starts: the dimensions, the program, the
 * star.  Where some dimension is read by every process, only the others
 * now (published for the worker that will make the star, when the leader
 * does not take part); the star is made once every share is read
 * (read_shares).  Without a DSA area there is no worker: the leader then
 * reads everything once the partial plans are set up.
 */
static void
init_shared(GpuStarAggState *s, StarShared *sh)
{
	sh->ready = false;
	sh->active = 0;
	sh->finished = false;
	sh->failed = false;
	sh->alone = false;
	sh->use_alt = false;
	sh->escaped = false;
	sh->dim_escaped = false;
	sh->empty_dim = -1;
	sh->failure = GH_OK;
	sh->failure_msg[0] = '\0';
	sh->leader_finishes = parallel_leader_participation;
	sh->maker_finishes = false;
	memset(&sh->place, 0, sizeof(sh->place));
	sh->dicts = InvalidDsaPointer;
	sh->dicts_size = 0;
	sh->dim_readers = 0;
	sh->dims_closed = false;
	for (int d = 0; d < GH_PROG_MAX_DIMS; d++)
	{
		sh->dim_chunks[d] = (StarChunkRef) {DSM_HANDLE_INVALID, 0};
		sh->filter_bits[d] = InvalidDsaPointer;
	}
	s->shared = sh;
	s->area = s->css.ss.ps.state->es_query_dsa;
	if (!s->shared_dims)
	{
		build_star(s);
		share_star(s, sh);
		return;
	}
	if (s->area != NULL)
	{
		instr_time	start;
		MemoryContext old = MemoryContextSwitchTo(s->cxt);
		bool	   *read = palloc0(sizeof(bool) * Max(s->ndims, 1));
		int			d;

		INSTR_TIME_SET_CURRENT(start);
		for (d = 0; d < s->ndims; d++)
			read[d] = s->dims[d].partial;
		while ((d = star_dim_next_to_read(s, read)) >= 0)
		{
			star_read_dim(s, d);
			star_dim_filter_share(s, d);
		}
		if (!sh->leader_finishes)
		{
			/* the dimensions the leader read, for the worker that makes the star */
			for (d = 0; d < s->ndims; d++)
				read[d] = !s->dims[d].partial;
			star_dims_publish(s, read);
		}
		s->dims_ms = gpuhash_elapsed_ms(start);
		MemoryContextSwitchTo(old);
	}
}

/*
 * Every process reads its share of the partial dimensions and publishes it
 * (star_dim_share.c); one makes the star of them: the leader where it takes
 * part, else the worker that finishes reading last.  As with the fact
 * table's blocks, a process counts itself a reader before its scans take
 * any block, so when one finds its scans' end every block has gone to a
 * counted reader, and once none is left every row is published; a process
 * that comes after the maker closed the reading reads nothing (there is
 * nothing left).  The others wait for the star.
 */
static void
read_shares(GpuStarAggState *s)
{
	StarShared *sh = s->shared;
	bool		leader = !IsParallelWorker();
	bool		reads,
				makes = false;
	instr_time	start;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);

	INSTR_TIME_SET_CURRENT(start);
	if (s->area == NULL)
	{
		/* no shared memory, so no worker: the leader reads every dimension now */
		star_read_dims(s);
		make_star(s);
		s->dims_ms += gpuhash_elapsed_ms(start);
		MemoryContextSwitchTo(old);
		share_star(s, sh);
		return;
	}

	SpinLockAcquire(&sh->mutex);
	reads = !sh->dims_closed;
	if (reads)
		sh->dim_readers++;
	SpinLockRelease(&sh->mutex);
	if (reads)
	{
		bool	   *partial = palloc0(sizeof(bool) * Max(s->ndims, 1));
		instr_time	read;

		for (int d = 0; d < s->ndims; d++)
			if (s->dims[d].partial)
			{
				INSTR_TIME_SET_CURRENT(read);
				star_read_dim(s, d);
				partial[d] = true;
				elog(DEBUG1, "gpuhash star: a share of %s read in %.3f ms, %lld rows",
					 s->dims[d].name, gpuhash_elapsed_ms(read), (long long) s->dims[d].rows);
			}
		INSTR_TIME_SET_CURRENT(read);
		star_dims_publish(s, partial);
		elog(DEBUG1, "gpuhash star: this process's shares published in %.3f ms",
			 gpuhash_elapsed_ms(read));
		SpinLockAcquire(&sh->mutex);
		for (int d = 0; d < s->ndims; d++)
			sh->dim_escaped |= s->dims[d].escaped && s->dims[d].partial;
		sh->dim_readers--;
		if (!sh->leader_finishes && sh->dim_readers == 0 && !sh->dims_closed)
			makes = sh->dims_closed = true;
		SpinLockRelease(&sh->mutex);
		ConditionVariableBroadcast(&sh->cv);
	}
	if (sh->leader_finishes && leader)
	{
		/* every other reader's share published */
		wait_for(sh, no_reader);
		makes = true;
	}

	if (makes)
	{
		instr_time	merge;

		INSTR_TIME_SET_CURRENT(merge);
		elog(DEBUG1, "gpuhash star: dimensions read in shares in %.3f ms", gpuhash_elapsed_ms(start));
		for (int d = 0; d < s->ndims; d++)
			if (s->dims[d].partial || !leader)
				star_dim_merge(s, d);
		elog(DEBUG1, "gpuhash star: dimensions merged in %.3f ms", gpuhash_elapsed_ms(merge));
		make_star(s);
		s->dims_ms += gpuhash_elapsed_ms(start);
		MemoryContextSwitchTo(old);
		share_star(s, sh);
		return;
	}
	MemoryContextSwitchTo(old);

	/* the star, made by another process */
	wait_for(sh, star_made);
}

static void
InitializeDSMGpuStarAgg(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	StarShared *sh = (StarShared *) coordinate;

	SpinLockInit(&sh->mutex);
	ConditionVariableInit(&sh->cv);
	init_shared((GpuStarAggState *) node, sh);
	((GpuStarAggState *) node)->prepared = true;
}

static void
ReInitializeDSMGpuStarAgg(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuStarAggState *s = (GpuStarAggState *) node;
	StarShared *sh = (StarShared *) coordinate;

	if (sh->dicts != InvalidDsaPointer && s->area != NULL)
		dsa_free(s->area, sh->dicts);
	star_dim_chunks_free(s);
	star_dim_filters_free(s);
	reset_execution(s);
	/*
	 * The dimensions the leader reads now start again: their own rescan may
	 * come only at the node's next call (ExecReScanGather), after this.
	 */
	for (int d = 0; d < s->ndims; d++)
		if (!s->dims[d].partial)
			ExecReScan(s->dims[d].ps);
	init_shared(s, sh);
	s->prepared = true;
}

static void
InitializeWorkerGpuStarAgg(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuStarAggState *s = (GpuStarAggState *) node;

	s->shared = (StarShared *) coordinate;
	s->area = node->ss.ps.state->es_query_dsa;
}

/* ---- EXPLAIN ---- */

/* expr as written when planned, its range table indexes as the final plan's */
static char *
shown(GpuStarAggState *s, Node *expr, List *context, bool prefix)
{
	CustomScan *cscan = (CustomScan *) s->css.ss.ps.plan;
	Plan	   *fact = linitial(cscan->custom_plans);
	Scan	   *first = (Scan *) (IsA(fact, Append) ? linitial(((Append *) fact)->appendplans) : fact);
	int			offset = (int) first->scanrelid -
		intVal(list_nth(cscan->custom_private, STAR_PRIV_FACT_RTI));
	Node	   *copy = copyObject(expr);

	if (offset != 0)
		OffsetVarNodes(copy, offset, 0);
	return deparse_expression(copy, context, prefix, false);
}

static void
ExplainGpuStarAgg(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuStarAggState *s = (GpuStarAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	bool		prefix = true;
	List	   *keys = NIL;
	List	   *dimtexts = NIL;
	List	   *quals = list_nth(cscan->custom_private, STAR_PRIV_QUALS_SHOWN);
	List	   *joins = list_nth(cscan->custom_private, STAR_PRIV_JOIN_SHOWN);
	ListCell   *lc;
	int			i = 0;

	foreach(lc, cscan->custom_scan_tlist)
	{
		if (i++ >= s->ngroups)
			break;
		keys = lappend(keys, deparse_expression((Node *) lfirst_node(TargetEntry, lc)->expr,
												context, prefix, false));
	}
	if (keys != NIL)
		ExplainPropertyList("Group Key", keys, es);
	ExplainPropertyInteger("Aggregates", NULL, s->naggs, es);
	ExplainPropertyText("Fact Table", get_rel_name(s->fact_relid), es);
	if (quals != NIL)
		ExplainPropertyText("Device Filter",
							shown(s, (Node *) make_ands_explicit(quals), context, prefix), es);
	i = 0;
	foreach(lc, s->dims_plan)
	{
		List	   *dim = lfirst(lc);
		char	   *text = psprintf("%s%s on %s", strVal(list_nth(dim, STAR_DIM_NAME)),
									s->dims[i].anti ? " (anti join)" :
									s->dims[i].semi ? " (semi join)" :
									s->dims[i].left && s->dims[i].row_codes ?
									" (left join, a group per row)" :
									s->dims[i].left ? " (left join)" :
									s->dims[i].row_codes ? " (a group per row)" : "",
									shown(s, list_nth(dim, STAR_DIM_CLAUSES), context, prefix));

		if (s->dims[i].filter_source >= 0)
			text = psprintf("%s, filtered by %s's keys", text,
							s->dims[s->dims[i].filter_source].name);
		if (es->analyze && s->done && s->dims[i].filter_source >= 0)
			text = psprintf("%s: %lld rows, %s, %d groups", text, (long long) s->dims[i].rows,
							s->dims[i].filtering || s->dims[i].removed > 0 ?
							psprintf("%lld filtered out%s", (long long) s->dims[i].removed,
									 s->dims[i].pushed != NULL ? " at the scan of its key" : "") :
							"filter not used", s->dims[i].ncodes);
		else if (es->analyze && s->done)
			text = psprintf("%s: %lld rows, %d groups", text, (long long) s->dims[i].rows,
							s->dims[i].ncodes);
		dimtexts = lappend(dimtexts, text);
		i++;
	}
	if (dimtexts != NIL)
		ExplainPropertyList("Dimensions", dimtexts, es);
	if (joins != NIL)
		ExplainPropertyText("Device Join Filter",
							shown(s, (Node *) make_ands_explicit(joins), context, prefix), es);
	if (s->alt_ps != NULL)
	{
		List	   *checked = NIL;

		for (int d = 0; d < s->ndims; d++)
			if (s->dims[d].checked)
				checked = lappend(checked, s->dims[d].name);
		if (checked != NIL)
			ExplainPropertyList("Keys Checked", checked, es);
		if (es->analyze && s->done)
			ExplainPropertyText("Alternative Plan",
								s->use_alt ? psprintf("ran: %s", s->alt_why ? s->alt_why :
													  "a dimension holds a key twice") :
								"not needed", es);
	}
	if (es->costs)
		ExplainPropertyText("Device", gpuhash_device_label(), es);
	if (es->analyze && s->done && s->compiled)
	{
		ExplainPropertyText("Group Key Form", s->compiled->mixed_key ? "hashed" : "packed", es);
		if (s->empty_dim >= 0)
			ExplainPropertyText("Fact Table Read",
								psprintf("no (%s has no row)", s->dims[s->empty_dim].name), es);
		ExplainPropertyInteger("Rows Kept", NULL, s->rows_kept, es);
		if (s->returns_groups)
			ExplainPropertyInteger("Groups", NULL, s->ngroups_out, es);
		if (s->stat_devices)
			ExplainPropertyText("Devices Used", gpuhash_devices_text(s->stat_devices), es);
		ExplainPropertyText("Heap Pages",
							psprintf("shipped=%lld not all-visible=%lld from the page cache=%lld made of rows read on the CPU=%lld reread after a change=%lld visibility undecided=%lld",
									 (long long) s->pages_shipped,
									 (long long) s->pages_judged,
									 (long long) s->pages_cached,
									 (long long) s->pages_synthetic,
									 (long long) s->pages_reread,
									 (long long) s->pages_undecided), es);
		gpuhash_page_stats_explain(&s->dim_page_stats, "Dimension", es);
		if (es->timing)
		{
			ExplainPropertyFloat("Dimension Time", "ms", s->dims_ms, 3, es);
			ExplainPropertyFloat("Fact Time", "ms", s->scan_ms, 3, es);
			ExplainPropertyFloat("Result Time", "ms", s->result_ms, 3, es);
		}
		if (es->costs)
		{
			ExplainPropertyInteger("Peak Device Memory", "kB",
								   (int64) (gpuhash_ops_peak_device(&s->eng) / 1024), es);
			ExplainPropertyText("Engine", gpuhash_ops_where(&s->eng), es);
		}
		gpuhash_ops_explain(&s->eng, es);
	}
}
