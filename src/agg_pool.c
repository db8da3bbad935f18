/*-------------------------------------------------------------------------
 *
 * agg_pool.c
 *	  A parallel GpuHashAgg's shared state: the inner side of a fused join
 *	  read in shares (agg_shared.c), and the pool in the GPU service that
 *	  collects every process's rows for one aggregation.
 *
 * INTERFACE ROUTINES
 *		gha_estimate_dsm, gha_initialize_dsm, gha_reinitialize_dsm,
 *		gha_initialize_worker	the parallel-aware node's CustomExecMethods
 *		gha_pool_active			does this node feed a pool?
 *		gha_pool_attach			join before reading any row
 *		gha_pool_append			send a share of rows to the pool
 *		gha_pool_done			detach; the last process out aggregates
 *		gha_pool_take			or the final node above the Gather does
 *
 * The leader creates the pool as it sets up the parallel query; every process
 * appends its rows as it reads (queued, at most two appends in flight) and
 * returns nothing; the final GpuHashAgg above the Gather has the pool
 * aggregated once.  Where the final node cannot read the partial node's
 * groups, the last process to detach from a barrier does that and returns
 * the groups through the Gather.  See src/README, "Pools".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/barrier.h"
#include "utils/wait_event.h"

#include "agg_state.h"
#include "gpuhash.h"
#include "service.h"

struct GhaPoolShared
{
	bool		pooled;			/* the processes feed a pool */
	bool		final_takes;	/* the leader's final node finishes it */
	GhOpPool	pool;
	Barrier		barrier;		/* phase 0: appending; 1: aggregated */
};

/*
 * The leader's hold on the pools it creates: when its node's memory goes (at
 * the end of the plan, or of a query that failed) with the last pool
 * neither finished nor freed, the pool is freed at once rather than when
 * the transaction ends (a failed query in a long transaction would keep
 * its rows in the service's device memory meanwhile).
 */
typedef struct GhaPoolOwner
{
	GhOpPool	pool;			/* the last one created */
	bool		freed;
	MemoryContextCallback cb;
} GhaPoolOwner;

static void
pool_owner_release(void *arg)
{
	GhaPoolOwner *o = (GhaPoolOwner *) arg;

	if (!o->freed)
		gpuhash_op_pool_free(&o->pool);
	o->freed = true;
}

/* remember p's pool as the leader's last, freeing the one before if need be */
static void
pool_owner_set(GpuHashAggState *s, const GhOpPool *p)
{
	if (s->pool_owner == NULL)
	{
		s->pool_owner = MemoryContextAllocZero(s->node_cxt, sizeof(GhaPoolOwner));
		s->pool_owner->freed = true;
		s->pool_owner->cb.func = pool_owner_release;
		s->pool_owner->cb.arg = s->pool_owner;
		MemoryContextRegisterResetCallback(s->node_cxt, &s->pool_owner->cb);
	}
	pool_owner_release(s->pool_owner);
	s->pool_owner->pool = *p;
	s->pool_owner->freed = false;
}

static Size
pool_offset(void)
{
	return MAXALIGN(gha_shared_size());
}

Size
gha_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return pool_offset() + sizeof(GhaPoolShared);
}

/* May this node's processes feed a pool?  (Decided by the leader.) */
static bool
poolable(GpuHashAggState *s)
{
	if (!gpuhash_enable_pool || s->mode != GHA_MODE_PARTIAL || s->dict != NULL ||
		s->ncols != s->nstatic_cols || !gpuhash_service_ready())
		return false;
	for (int a = 0; a < s->naggs; a++)
		if ((s->numcols[a] && !s->numcols[a]->fixed) || s->agg_cpu[a] >= 0)
			return false;
	return true;
}

static void
pool_init(GpuHashAggState *s, GhaPoolShared *p)
{
	p->pool.worker = -1;
	p->pool.id = 0;
	/* where the service cannot make one, the processes aggregate apart */
	p->pooled = poolable(s) && gpuhash_op_pool_create(&s->eng, s->fused_kind, &p->pool);
	p->final_takes = p->pooled && s->final_takes_pool;
	if (p->pooled)
		pool_owner_set(s, &p->pool);
	BarrierInit(&p->barrier, 0);
}

void
gha_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuHashAggState *s = (GpuHashAggState *) node;

	if (s->fused_kind >= 0)
	{
		s->shared = coordinate;
		gha_shared_init(s->shared, node->ss.ps.state->es_query_dsa, true);
	}
	s->pool = (GhaPoolShared *) ((char *) coordinate + pool_offset());
	pool_init(s, s->pool);
}

void
gha_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuHashAggState *s = (GpuHashAggState *) node;
	GhaPoolShared *p = (GhaPoolShared *) ((char *) coordinate + pool_offset());

	if (s->fused_kind >= 0)
		gha_shared_init(coordinate, node->ss.ps.state->es_query_dsa, false);
	/* the last scan's pool was freed by its last process, or goes at transaction end */
	pool_init(s, p);
}

void
gha_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuHashAggState *s = (GpuHashAggState *) node;

	if (s->fused_kind >= 0)
		s->shared = coordinate;
	s->pool = (GhaPoolShared *) ((char *) coordinate + pool_offset());
}

const GhOpPool *
gha_pool_handle(GpuHashAggState *s)
{
	return &s->pool->pool;
}

bool
gha_pool_active(GpuHashAggState *s)
{
	return s->pool != NULL && s->pool->pooled;
}

void
gha_pool_attach(GpuHashAggState *s)
{
	s->pool_used = true;
	s->pool_late = BarrierAttach(&s->pool->barrier) > 0;
	s->pool_flush_at = gpuhash_debug_pool_batch > 0 ? gpuhash_debug_pool_batch : GHA_POOL_BATCH;
}

/*
 * Append rows to the pool: n rows of one NULL pattern (a fused join: of
 * one side, 1 the inner), with their packed grouping keys, join keys (a
 * fused join) and engine columns (col_inner: a fused join's inner ones).
 */
void
gha_pool_append(GpuHashAggState *s, int side, int pattern, const uint64 *keys,
				const uint64 *jkeys, int64 n, const gh_aggcol *cols, const uint8 *col_inner)
{
	instr_time	start;

	if (n == 0)
		return;
	if (s->pool_late)
		elog(ERROR, "gpuhash: rows for a pool that was already aggregated");
	if (s->ncols != s->nstatic_cols)
		elog(ERROR, "gpuhash: a pooled aggregation made columns while it read");
	INSTR_TIME_SET_CURRENT(start);
	gpuhash_op_pool_append(&s->eng, &s->pool->pool, side, pattern, keys, jkeys, (size_t) n,
						   cols, col_inner, s->ncols);
	s->stat_pool_ms += gpuhash_elapsed_ms(start);
	s->stat_pool_appends++;
}

/*
 * Have the service aggregate (or join and aggregate) pool, every NULL
 * pattern of it, into s's results; then free it.
 */
static void
finish_pool(GpuHashAggState *s, const GhOpPool *pool)
{
	uint64		mask[4];
	instr_time	start;

	gpuhash_op_pool_patterns(&s->eng, pool, mask);
	for (int p = 0; p < GHA_MAX_PATTERNS; p++)
	{
		if (!(mask[p / 64] & (UINT64CONST(1) << (p % 64))))
			continue;
		INSTR_TIME_SET_CURRENT(start);
		s->results[s->nresults] = gpuhash_op_pool_finish(&s->eng, pool, p);
		if (s->fused_kind >= 0)
			s->stat_pairs += (int64) s->results[s->nresults]->input_rows;
		gha_add_result(s, (uint8) p, start);
	}
	gpuhash_op_pool_free(pool);
}

/* the leader's node s need not free its pool: it has been (pool_owner_set) */
static void
pool_owner_done(GpuHashAggState *s)
{
	if (s->pool_owner != NULL)
		s->pool_owner->freed = true;
}

/*
 * This process has appended all its rows.  The last one out aggregates the
 * pool (or leaves it to the final node): its node returns every group, the
 * others none.
 */
void
gha_pool_done(GpuHashAggState *s)
{
	instr_time	start;

	/* every append of this process is in the pool before it leaves */
	INSTR_TIME_SET_CURRENT(start);
	gpuhash_op_pool_sync(&s->eng);
	s->stat_pool_ms += gpuhash_elapsed_ms(start);
	if (s->pool_late)
	{
		BarrierDetach(&s->pool->barrier);
		return;
	}
	if (!BarrierArriveAndDetach(&s->pool->barrier) || s->pool->final_takes)
		return;
	s->pool_finisher = true;
	finish_pool(s, &s->pool->pool);
	pool_owner_done(s);
}

/*
 * The final node above the Gather (in the leader) finishes the pool of its
 * partial child once the Gather has returned everything, so that no process
 * sends the groups through the Gather's tuple queue and the final node
 * returns them as they come from the service (one row a group): false if
 * that child's processes did not leave the pool to it.  The groups are in
 * the child's layout (agg_exec.c reads them so: pool_direct_group).
 */
bool
gha_pool_take(GpuHashAggState *final, GpuHashAggState *child)
{
	if (!gha_pool_active(child) || !child->pool->final_takes)
		return false;
	final->pool_direct = true;
	finish_pool(final, &child->pool->pool);
	pool_owner_done(child);
	return true;
}
