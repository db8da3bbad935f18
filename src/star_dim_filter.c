/*-------------------------------------------------------------------------
 *
 * star_dim_filter.c
 *	  A GpuStarAgg's dimension filtered, as it is read, by the keys of a
 *	  smaller dimension joined on the same fact key, or of its child in a
 *	  split snowflake on the column the child is looked up by (star_path.c,
 *	  dim_filters, says which and why).
 *
 * INTERFACE ROUTINES
 *		star_dim_next_to_read	the order of reading: a filter's source first
 *		star_dim_filter_begin	the filter of dimension d's rows, where its
 *								source is known to this process
 *		star_dim_filter_share	a source's filter in shared memory, for the
 *								processes reading shares of what it filters
 *		star_dim_filters_free	... freed before the next execution
 *		star_dim_filter_push	the filter moved down to the scan that reads the key
 *		star_dim_filter_end		... and taken off once the dimension is read
 *
 * The filter is join_filter.c's Bloom filter of the source's keys,
 * the engine's exact encodings that the device compares with the fact
 * table's: no row that can join is left out, and a row let through
 * falsely (one in 70 of those that cannot join at 16 bits a key; the
 * filter takes four bits a row it will check, up to 1 MB, so few keys
 * let almost none through) only goes on to the device, whose probe of
 * the source then drops every fact row that meets it.  It is used only
 * where the source as read holds at most half the rows the planner
 * estimated for what it filters; else checking every row costs more
 * than the rows it would leave out.
 *
 * In a parallel star the sources are dimensions the leader reads before any
 * worker starts (star_exec.c, init_shared); a dimension read in shares by
 * every process gets its source's filter from the leader through the DSA
 * area.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "keys.h"
#include "star_state.h"

/*
 * The next dimension to read among those not yet marked in read (which it
 * marks), a filter's source before what it filters; -1 once all are.
 * Sources are strictly smaller than what they filter, so no two wait for
 * each other.
 */
int
star_dim_next_to_read(GpuStarAggState *s, bool *read)
{
	for (int d = 0; d < s->ndims; d++)
	{
		int			source = s->dims[d].filter_source;

		if (read[d] || (source >= 0 && !read[source]))
			continue;
		read[d] = true;
		return d;
	}
	for (int d = 0; d < s->ndims; d++)
		if (!read[d])
		{
			read[d] = true;		/* not reached: no cycle */
			return d;
		}
	return -1;
}

/* Whether the source's rows as read are few enough to be worth filtering d by. */
static bool
worth_it(const StarDimState *dim, uint64 source_rows)
{
	return (double) source_rows <= dim->est_rows / 2;
}

/*
 * The filter's least size for checking dimension d's rows: four bits a row
 * it is estimated to check, up to 1 MB, so that a few keys let through
 * falsely about a row in a million, not one in 70 (16 bits a key)
 */
static uint64
filter_min_bits(const StarDimState *dim)
{
	return (uint64) Min(4.0 * Max(dim->est_rows, 0.0), (double) (UINT64CONST(1) << 23));
}

/*
 * The filter of dimension d's rows for this execution: from its source's
 * keys where this process read the source whole, else from the leader's
 * filter in shared memory, else none.
 */
void
star_dim_filter_begin(GpuStarAggState *s, int d)
{
	StarDimState *dim = &s->dims[d];
	int			source = dim->filter_source;
	StarShared *sh = s->shared;

	dim->filtering = false;
	dim->removed = 0;
	dim->pushed_removed = 0;
	if (source < 0)
		return;
	if (s->dims[source].complete)
	{
		StarDimArrays *a = &s->dims[source].arrays;

		if (!worth_it(dim, a->n))
			return;
		gpuhash_filter_build_sized(&dim->filter, a->keys, (int64) a->n, filter_min_bits(dim));
		dim->filtering = true;
	}
	else if (sh != NULL && s->area != NULL && DsaPointerIsValid(sh->filter_bits[source]))
	{
		dim->filter.bits = dsa_get_address(s->area, sh->filter_bits[source]);
		dim->filter.mask = sh->filter_mask[source];
		dim->filtering = true;
	}
}

/*
 * The leader has read dimension source whole: where a dimension that every
 * process reads a share of is filtered by it, its filter goes into the DSA
 * area for them.
 */
void
star_dim_filter_share(GpuStarAggState *s, int source)
{
	StarShared *sh = s->shared;
	StarDimArrays *a = &s->dims[source].arrays;
	bool		wanted = false;
	uint64		min_bits = 0;
	GhjFilter	f;
	Size		bytes;

	if (sh == NULL || s->area == NULL)
		return;
	for (int d = 0; d < s->ndims; d++)
		if (s->dims[d].partial && s->dims[d].filter_source == source &&
			worth_it(&s->dims[d], a->n))
		{
			wanted = true;
			min_bits = Max(min_bits, filter_min_bits(&s->dims[d]));
		}
	if (!wanted)
		return;
	gpuhash_filter_build_sized(&f, a->keys, (int64) a->n, min_bits);
	bytes = (Size) ((f.mask + 1) / 8);
	sh->filter_bits[source] = dsa_allocate_extended(s->area, bytes, DSA_ALLOC_HUGE);
	memcpy(dsa_get_address(s->area, sh->filter_bits[source]), f.bits, bytes);
	sh->filter_mask[source] = f.mask;
	pfree(f.bits);
}

/* The shared filters freed (the leader, before the next execution). */
void
star_dim_filters_free(GpuStarAggState *s)
{
	StarShared *sh = s->shared;

	if (sh == NULL || s->area == NULL)
		return;
	for (int d = 0; d < s->ndims; d++)
		if (DsaPointerIsValid(sh->filter_bits[d]))
		{
			dsa_free(s->area, sh->filter_bits[d]);
			sh->filter_bits[d] = InvalidDsaPointer;
		}
}

/*
 * ---- the filter pushed down to the scan that reads the key ----
 *
 * A dimension joined of several tables (orders and customer) makes its
 * joined rows before the star sees them; filtered only there, every row of
 * the key's table is still joined.  Where the dimension's key is a column
 * that a scan in its plan returns unchanged through joins and hashes above
 * it (key_source), that scan's node is wrapped (its ExecProcNode) so that
 * its rows are checked against the filter as they come out of it, and the
 * joins above see only those that can join.  A row of that table whose key
 * is not in the filter would reach the star only to be dropped, and one
 * with a NULL key joins nothing, so whatever the joins above (outer joins
 * included), no row the star keeps is lost.  The wrapper stays on the node
 * for its life and lets every row through when no filter is set.
 */
#define MAX_PUSHED	16

typedef struct PushedFilter
{
	PlanState  *ps;				/* the scan wrapped */
	ExecProcNodeMtd next;		/* what ran it before */
	AttrNumber	attno;			/* its output column holding the key */
	Oid			keytype;
	const GhjFilter *filter;	/* NULL: every row passes */
	int64		removed;		/* rows it left out since last taken */
} PushedFilter;

/* this process's wrapped scans, each until its query's memory goes */
static PushedFilter *pushed[MAX_PUSHED];

static TupleTableSlot *
filtered_scan(PlanState *ps)
{
	PushedFilter *pf = NULL;

	for (int i = 0; i < MAX_PUSHED && pf == NULL; i++)
		if (pushed[i] != NULL && pushed[i]->ps == ps)
			pf = pushed[i];
	Assert(pf != NULL);
	for (;;)
	{
		TupleTableSlot *slot = pf->next(ps);
		bool		isnull;
		Datum		d;

		/* the executor's first call sets the node's own method: keep ours in front */
		if (ps->ExecProcNode != filtered_scan)
		{
			pf->next = ps->ExecProcNode;
			ps->ExecProcNode = filtered_scan;
		}
		if (TupIsNull(slot) || pf->filter == NULL)
			return slot;
		d = slot_getattr(slot, pf->attno, &isnull);
		if (isnull ||
			gpuhash_filter_may_contain(pf->filter,
									   gpuhash_encode_exact(gpuhash_exact_family(pf->keytype),
															pf->keytype, d)))
			return slot;
		pf->removed++;
	}
}

static void
forget_pushed(void *arg)
{
	for (int i = 0; i < MAX_PUSHED; i++)
		if (pushed[i] == arg)
			pushed[i] = NULL;
}

/*
 * The scan below ps that returns ps's output column attno unchanged, and
 * that column's number in its own output (at); NULL where there is none.
 */
static PlanState *
key_source(PlanState *ps, AttrNumber attno, AttrNumber *at)
{
	for (;;)
	{
		Plan	   *plan = ps->plan;
		Var		   *v;

		if (attno < 1 || attno > list_length(plan->targetlist) ||
			!IsA(list_nth_node(TargetEntry, plan->targetlist, attno - 1)->expr, Var))
			return NULL;
		v = (Var *) list_nth_node(TargetEntry, plan->targetlist, attno - 1)->expr;
		switch (nodeTag(ps))
		{
			case T_SeqScanState:
			case T_IndexScanState:
			case T_IndexOnlyScanState:
			case T_BitmapHeapScanState:
				if (v->varno != ((Scan *) plan)->scanrelid)
					return NULL;
				*at = attno;
				return ps;
			case T_HashJoinState:
			case T_NestLoopState:
			case T_MergeJoinState:
				if (v->varno == OUTER_VAR)
					ps = outerPlanState(ps);
				else if (v->varno == INNER_VAR)
					ps = innerPlanState(ps);
				else
					return NULL;
				break;
			case T_HashState:
			case T_MaterialState:
			case T_SortState:
				if (v->varno != OUTER_VAR)
					return NULL;
				ps = outerPlanState(ps);
				break;
			default:
				return NULL;
		}
		attno = v->varattno;
	}
}

/*
 * Dimension d's filter pushed down to the scan that reads its key, where
 * its plan has one: wrapped on its first execution, given this
 * execution's filter (or none, dim->filtering off).
 */
void
star_dim_filter_push(GpuStarAggState *s, int d)
{
	StarDimState *dim = &s->dims[d];
	PushedFilter *pf = dim->pushed;

	if (pf == NULL && dim->filtering && !dim->push_tried)
	{
		AttrNumber	at;
		AttrNumber	checked = dim->filter_col < 0 ? 1 : 2 + dim->ngroups + dim->filter_col;
		PlanState  *scan = key_source(dim->ps, checked, &at);
		MemoryContext cxt = s->css.ss.ps.state->es_query_cxt;
		int			slot = 0;

		dim->push_tried = true;
		while (slot < MAX_PUSHED && pushed[slot] != NULL)
			slot++;
		if (scan == NULL || slot == MAX_PUSHED)
			return;
		pf = MemoryContextAllocZero(cxt, sizeof(PushedFilter));
		pf->ps = scan;
		pf->attno = at;
		pf->keytype = TupleDescAttr(dim->ps->ps_ResultTupleDesc, checked - 1)->atttypid;
		pf->next = scan->ExecProcNode;
		{
			MemoryContextCallback *cb = MemoryContextAlloc(cxt, sizeof(MemoryContextCallback));

			cb->func = forget_pushed;
			cb->arg = pf;
			MemoryContextRegisterResetCallback(cxt, cb);
		}
		pushed[slot] = pf;
		scan->ExecProcNode = filtered_scan;
		dim->pushed = pf;
	}
	if (pf != NULL)
	{
		pf->filter = dim->filtering ? &dim->filter : NULL;
		pf->removed = 0;
	}
}

/* The dimension read: the rows its scan left out counted as read and removed, the filter taken off. */
void
star_dim_filter_end(GpuStarAggState *s, int d)
{
	StarDimState *dim = &s->dims[d];
	PushedFilter *pf = dim->pushed;

	if (pf == NULL)
		return;
	dim->rows += pf->removed;
	dim->removed += pf->removed;
	dim->pushed_removed += pf->removed;
	pf->removed = 0;
	pf->filter = NULL;
}
