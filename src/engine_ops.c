/*-------------------------------------------------------------------------
 *
 * engine_ops.c
 *	  The engine operations of plan nodes, run by the GPU service or by the
 *	  backend's own engine (engine_ops.h).
 *
 * In the service, a request's arrays travel in a DSM segment the client
 * makes and fills (service_shared.h, GhsData); groups come back in a
 * segment the service makes, which the node keeps mapped until it frees
 * them; a join's segment also holds the areas the service writes pairs
 * and match flags into.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/memutils.h"

#include "engine_ops.h"
#include "gpuhash.h"
#include "service.h"

/* groups that live in a reply segment */
typedef struct GhOpReply
{
	gh_groups  *groups;
	dsm_segment *seg;
} GhOpReply;

/* a pool append queued in the service, its rows in seg */
typedef struct GhOpAppend
{
	GhsSlot    *slot;
	dsm_segment *seg;
} GhOpAppend;

void
gpuhash_ops_init(GhOps *ops, MemoryContext cxt)
{
	memset(ops, 0, sizeof(*ops));
	ops->cxt = cxt;
	ops->service = gpuhash_service_ready();
}

gh_engine *
gpuhash_ops_engine(GhOps *ops)
{
	if (ops->engine == NULL)
		ops->engine = gpuhash_get_engine();
	ops->used_backend = true;
	return ops->engine;
}

static void
check(GhOps *ops, gh_status st)
{
	if (st != GH_OK)
		gpuhash_engine_error(ops->engine, st);
}

size_t
gpuhash_ops_peak_device(GhOps *ops)
{
	size_t		peak = ops->service_peak;

	if (ops->engine)
		peak = Max(peak, gh_engine_peak_device_bytes(ops->engine));
	return peak;
}

/* for EXPLAIN ANALYZE: where the node's operations ran */
const char *
gpuhash_ops_where(const GhOps *ops)
{
	if (ops->used_service && ops->used_backend)
		return "GPU service and backend";
	if (!ops->used_service && !ops->used_backend)
		return "none";
	return ops->used_service ? "GPU service" : "backend";
}

/* ---- request segments ---- */

static GhsData *init_data(dsm_segment *seg, const GhsDataCol *dcols, int ncols);

/*
 * A data segment of size bytes (header included), mapped until detached,
 * with the column layout dcols (ncols entries) in its header.
 */
static GhsData *
new_data(dsm_segment **seg, Size size, const GhsDataCol *dcols, int ncols)
{
	*seg = dsm_create(size, 0);
	return init_data(*seg, dcols, ncols);
}

/* seg's data header afresh, with the column layout dcols */
static GhsData *
init_data(dsm_segment *seg, const GhsDataCol *dcols, int ncols)
{
	GhsData    *d = dsm_segment_address(seg);

	memset(d, 0, offsetof(GhsData, cols));
	d->ncols = ncols;
	if (ncols > 0)
		memcpy(d->cols, dcols, sizeof(GhsDataCol) * ncols);
	return d;
}

static Size
header_size(int ncols)
{
	return GHS_ALIGN(offsetof(GhsData, cols) + sizeof(GhsDataCol) * ncols);
}

static void
put(GhsData *d, Size off, const void *src, Size bytes)
{
	if (off && src && bytes)
		memcpy((char *) d + off, src, bytes);
}

/*
 * Lay out columns: n rows each, inner ones (col_inner) inner_rows.  side 0
 * or 1: only that side's columns get arrays (a pool append); -1: all.
 */
static GhsDataCol *
reserve_cols(Size *size, const gh_aggcol *cols, const uint8 *col_inner, int ncols,
			 size_t n, size_t inner_rows, int side)
{
	GhsDataCol *out = palloc(sizeof(GhsDataCol) * Max(ncols, 1));

	for (int c = 0; c < ncols; c++)
	{
		bool		inner = col_inner && col_inner[c];
		bool		present = side < 0 || inner == (side == 1);
		size_t		rows = inner ? inner_rows : n;

		out[c].type = cols[c].type;
		out[c].ops = cols[c].ops;
		out[c].inner = inner;
		out[c].values = ghs_reserve(size, 8 * rows, present);
		out[c].nulls = ghs_reserve(size, rows, present && cols[c].nulls != NULL);
	}
	return out;
}

static void
put_cols(GhsData *d, const gh_aggcol *cols, size_t n, size_t inner_rows)
{
	for (int c = 0; c < d->ncols; c++)
	{
		size_t		rows = d->cols[c].inner ? inner_rows : n;

		put(d, d->cols[c].values, cols[c].values, 8 * rows);
		put(d, d->cols[c].nulls, cols[c].nulls, rows);
	}
}

/* Turn a reply segment of groups into gh_groups pointing into it. */
gh_groups *
gpuhash_ops_groups_from_reply(GhOps *ops, dsm_segment *seg)
{
	char	   *base = dsm_segment_address(seg);
	GhsGroupsReply *r = (GhsGroupsReply *) base;
	gh_groups  *g = MemoryContextAllocZero(ops->cxt, sizeof(gh_groups));
	GhOpReply  *keep = MemoryContextAlloc(ops->cxt, sizeof(GhOpReply));
	MemoryContext old;

	g->ngroups = r->ngroups;
	g->keys = ghs_at(base, r->keys);
	g->rows = ghs_at(base, r->rows);
	g->ncols = r->ncols;
	g->cols = MemoryContextAllocZero(ops->cxt, sizeof(gh_aggresult) * Max(r->ncols, 1));
	for (int c = 0; c < r->ncols; c++)
	{
		g->cols[c].nonnull = ghs_at(base, r->cols[c].nonnull);
		g->cols[c].sum_lo = ghs_at(base, r->cols[c].sum_lo);
		g->cols[c].sum_hi = ghs_at(base, r->cols[c].sum_hi);
		g->cols[c].fsum = ghs_at(base, r->cols[c].fsum);
		g->cols[c].imin = ghs_at(base, r->cols[c].imin);
		g->cols[c].imax = ghs_at(base, r->cols[c].imax);
		g->cols[c].fmin = ghs_at(base, r->cols[c].fmin);
		g->cols[c].fmax = ghs_at(base, r->cols[c].fmax);
	}
	g->partitions = r->partitions;
	g->input_rows = r->input_rows;
	g->ndevices = r->ndevices;
	memcpy(g->devices, r->devices, sizeof(g->devices));
	keep->groups = g;
	keep->seg = seg;
	old = MemoryContextSwitchTo(ops->cxt);
	ops->replies = lappend(ops->replies, keep);
	MemoryContextSwitchTo(old);
	return g;
}

/* run call in the service for ops; note the engine's peak device memory */
void
gpuhash_ops_service_call(GhOps *ops, GhsCall *call)
{
	gpuhash_service_call(call);
	ops->used_service = true;
	ops->service_peak = Max(ops->service_peak, (size_t) call->result[3]);
}

void
gpuhash_ops_init_call(GhsCall *call, int op, int worker, int32 object)
{
	memset(call, 0, sizeof(*call));
	call->op = op;
	call->worker = worker;
	call->object = object;
}

/* ---- tables and joins ---- */

GhOpTable *
gpuhash_op_build(GhOps *ops, gh_kind kind, const uint64 *keys, const uint64 *rows, size_t n)
{
	GhOpTable  *t = MemoryContextAllocZero(ops->cxt, sizeof(GhOpTable));
	Size		size = header_size(0);
	Size		koff = ghs_reserve(&size, 8 * n, true);
	Size		roff = ghs_reserve(&size, 8 * n, rows != NULL);

	t->ops = ops;
	if (ops->service && gpuhash_service_has_room(size))
	{
		dsm_segment *seg;
		GhsData    *d;
		GhsCall		call;

		d = new_data(&seg, size, NULL, 0);
		d->n = n;
		d->keys = koff;
		d->rows = roff;
		put(d, d->keys, keys, 8 * n);
		put(d, d->rows, rows, 8 * n);
		gpuhash_ops_init_call(&call, GHS_OP_BUILD, -1, 0);
		call.kind = kind;
		call.data = dsm_segment_handle(seg);
		gpuhash_ops_service_call(ops, &call);
		dsm_detach(seg);
		t->worker = call.ran_by;
		t->id = call.result_object;
		t->partitions = (int) call.result[0];
		t->devices = call.result_devices;
	}
	else
	{
		gh_engine  *e = gpuhash_ops_engine(ops);
		int			ids[GH_MAX_DEVICES];
		int			nd;

		check(ops, gh_build(e, kind, keys, rows, n, &t->local));
		t->partitions = gh_table_partitions(t->local);
		nd = gh_table_devices(t->local, ids, GH_MAX_DEVICES);
		t->devices = gpuhash_device_mask(ids, nd);
	}
	return t;
}

/* ask the service to free object of worker; if no slot is free it goes at transaction end */
void
gpuhash_ops_post_free(int worker, int32 object)
{
	GhsCall		call;

	gpuhash_ops_init_call(&call, GHS_OP_FREE, worker, object);
	(void) gpuhash_service_post(&call);
}

void
gpuhash_op_table_free(GhOpTable *t)
{
	if (t == NULL)
		return;
	if (t->local)
		gh_table_free(t->local);
	else if (t->id != 0)
		gpuhash_ops_post_free(t->worker, t->id);
	t->local = NULL;
	t->id = 0;
}

GhOpJoin *
gpuhash_op_join_begin(GhOpTable *t, const uint64 *keys, size_t n, gh_join_method method,
					  size_t cap)
{
	GhOps	   *ops = t->ops;
	GhOpJoin   *j = MemoryContextAllocZero(ops->cxt, sizeof(GhOpJoin));

	j->table = t;
	j->n = n;
	j->cap = cap;
	if (t->local)
	{
		check(ops, gh_join_begin(t->local, keys, n, method, &j->local));
		j->total = gh_join_total(j->local);
	}
	else
	{
		Size		size = header_size(0);
		Size		koff = ghs_reserve(&size, 8 * n, true);
		Size		foff = ghs_reserve(&size, n, true);
		Size		poff = ghs_reserve(&size, sizeof(gh_pair) * cap, true);
		GhsData    *d = new_data(&j->data, size, NULL, 0);
		GhsCall		call;

		dsm_pin_mapping(j->data);
		d->n = n;
		d->cap = cap;
		d->keys = koff;
		d->flags = foff;
		d->pairs = poff;
		put(d, koff, keys, 8 * n);
		gpuhash_ops_init_call(&call, GHS_OP_JOIN_BEGIN, t->worker, t->id);
		call.method = method;
		call.data = dsm_segment_handle(j->data);
		PG_TRY();
		{
			gpuhash_ops_service_call(ops, &call);
		}
		PG_CATCH();
		{
			/* the mapping is pinned: the abort would not detach it */
			dsm_detach(j->data);
			j->data = NULL;
			PG_RE_THROW();
		}
		PG_END_TRY();
		j->id = call.result_object;
		j->total = call.result[0];
	}
	return j;
}

size_t
gpuhash_op_join_next(GhOpJoin *j, gh_pair *out, size_t cap)
{
	GhOps	   *ops = j->table->ops;
	size_t		nout = 0;
	GhsCall		call;
	GhsData    *d;

	if (j->local)
	{
		check(ops, gh_join_next(j->local, out, cap, &nout));
		return nout;
	}
	gpuhash_ops_init_call(&call, GHS_OP_JOIN_NEXT, j->table->worker, j->id);
	call.arg[0] = Min(cap, j->cap);
	gpuhash_ops_service_call(ops, &call);
	nout = (size_t) call.result[0];
	d = dsm_segment_address(j->data);
	memcpy(out, (char *) d + d->pairs, sizeof(gh_pair) * nout);
	return nout;
}

void
gpuhash_op_join_outer_matched(GhOpJoin *j, uint8 *flags)
{
	GhOps	   *ops = j->table->ops;
	GhsCall		call;
	GhsData    *d;

	if (j->local)
	{
		check(ops, gh_join_outer_matched(j->local, flags));
		return;
	}
	gpuhash_ops_init_call(&call, GHS_OP_OUTER_MATCHED, j->table->worker, j->id);
	gpuhash_ops_service_call(ops, &call);
	d = dsm_segment_address(j->data);
	memcpy(flags, (char *) d + d->flags, j->n);
}

void
gpuhash_op_join_free(GhOpJoin *j)
{
	if (j == NULL)
		return;
	if (j->local)
		gh_join_free(j->local);
	else if (j->id != 0)
		gpuhash_ops_post_free(j->table->worker, j->id);
	if (j->data)
		dsm_detach(j->data);
	j->local = NULL;
	j->id = 0;
	j->data = NULL;
}

/* ---- aggregation ---- */

gh_groups *
gpuhash_op_aggregate(GhOps *ops, const uint64 *keys, size_t n, const gh_aggcol *cols, int ncols)
{
	Size		size = header_size(ncols);
	Size		koff = ghs_reserve(&size, 8 * n, true);
	GhsDataCol *dcols = reserve_cols(&size, cols, NULL, ncols, n, 0, -1);
	gh_groups  *g = NULL;

	if (ops->service && gpuhash_service_has_room(size))
	{
		dsm_segment *seg;
		GhsData    *d;
		GhsCall		call;

		d = new_data(&seg, size, dcols, ncols);
		d->n = n;
		d->keys = koff;
		put(d, koff, keys, 8 * n);
		put_cols(d, cols, n, 0);
		gpuhash_ops_init_call(&call, GHS_OP_AGGREGATE, -1, 0);
		call.data = dsm_segment_handle(seg);
		gpuhash_ops_service_call(ops, &call);
		dsm_detach(seg);
		return gpuhash_ops_groups_from_reply(ops, call.reply);
	}
	check(ops, gh_aggregate(gpuhash_ops_engine(ops), keys, n, cols, ncols, &g));
	return g;
}

gh_groups *
gpuhash_op_join_aggregate(GhOpTable *t, const uint64 *keys, size_t n, gh_join_method method,
						  const gh_joinagg *spec)
{
	GhOps	   *ops = t->ops;
	int			ncols = spec->ncols;
	gh_groups  *g = NULL;
	dsm_segment *seg;
	GhsData    *d;
	GhsDataCol *dcols;
	Size		size,
				koff,
				ookeys,
				iokeys;
	GhsCall		call;

	if (t->local)
	{
		check(ops, gh_join_aggregate(t->local, keys, n, method, spec, &g));
		return g;
	}
	size = header_size(ncols);
	koff = ghs_reserve(&size, 8 * n, true);
	ookeys = ghs_reserve(&size, 8 * n, spec->outer_keys != NULL);
	iokeys = ghs_reserve(&size, 8 * spec->inner_rows, spec->inner_keys != NULL);
	dcols = reserve_cols(&size, spec->cols, spec->col_inner, ncols, n, spec->inner_rows, -1);
	d = new_data(&seg, size, dcols, ncols);
	d->n = n;
	d->inner_rows = spec->inner_rows;
	d->keys = koff;
	d->outer_keys = ookeys;
	d->inner_keys = iokeys;
	put(d, koff, keys, 8 * n);
	put(d, ookeys, spec->outer_keys, 8 * n);
	put(d, iokeys, spec->inner_keys, 8 * spec->inner_rows);
	put_cols(d, spec->cols, n, spec->inner_rows);
	gpuhash_ops_init_call(&call, GHS_OP_JOIN_AGGREGATE, t->worker, t->id);
	call.method = method;
	call.data = dsm_segment_handle(seg);
	gpuhash_ops_service_call(ops, &call);
	dsm_detach(seg);
	return gpuhash_ops_groups_from_reply(ops, call.reply);
}

void
gpuhash_op_groups_free(GhOps *ops, gh_groups *g)
{
	ListCell   *lc;

	if (g == NULL)
		return;
	foreach(lc, ops->replies)
	{
		GhOpReply  *r = lfirst(lc);

		if (r->groups == g)
		{
			dsm_detach(r->seg);
			ops->replies = foreach_delete_current(ops->replies, lc);
			return;
		}
	}
	gh_groups_free(g);
}

/* ---- pools (service_pool.c) ---- */

void
gpuhash_op_pool_create(GhOps *ops, int kind, GhOpPool *pool)
{
	GhsCall		call;

	gpuhash_ops_init_call(&call, GHS_OP_POOL_CREATE, -1, 0);
	call.kind = kind;
	gpuhash_ops_service_call(ops, &call);
	pool->worker = call.ran_by;
	pool->id = call.result_object;
}

/*
 * Appends still in flight when the node's memory goes (an error, or a node
 * ended before it had waited): nobody will wait for them.
 */
static void
abandon_appends(void *arg)
{
	/* aborting, the resource owner has let go of the segments already */
	gpuhash_op_pool_abandon((GhOps *) arg, IsTransactionState());
}

/* let go of the segments kept for more appends */
static void
drop_spares(GhOps *ops)
{
	for (int i = 0; i < ops->nspares; i++)
		dsm_detach(ops->spares[i]);
	ops->nspares = 0;
}

void
gpuhash_op_pool_abandon(GhOps *ops, bool detach)
{
	for (int i = 0; i < ops->nappends; i++)
	{
		gpuhash_service_abandon(ops->appends[i].slot);
		if (detach)
			dsm_detach(ops->appends[i].seg);
	}
	ops->nappends = 0;
	if (detach)
		drop_spares(ops);
	ops->nspares = 0;
}

/* wait for the oldest append in flight */
static void
wait_append(GhOps *ops)
{
	GhOpAppend	a = ops->appends[0];
	GhsCall		call;

	/* off the list first: a failed wait abandons its slot itself */
	ops->nappends--;
	memmove(&ops->appends[0], &ops->appends[1], sizeof(GhOpAppend) * ops->nappends);
	memset(&call, 0, sizeof(call));
	gpuhash_service_wait(&call, a.slot);
	ops->service_peak = Max(ops->service_peak, (size_t) call.result[3]);
	if (ops->nspares >= GH_OPS_MAX_APPENDS)
		elog(ERROR, "gpuhash: more append segments kept than appends in flight");
	ops->spares[ops->nspares++] = a.seg;
}

void
gpuhash_op_pool_sync(GhOps *ops)
{
	while (ops->nappends > 0)
		wait_append(ops);
	drop_spares(ops);
}

/*
 * A segment of at least size bytes for an append: a spare one if one is
 * that large, else a new one, the spares let go (too small for appends of
 * this size; so at most one spare is kept between appends, and two while
 * the last appends are waited for).
 */
static GhsData *
append_data(GhOps *ops, dsm_segment **seg, Size size, const GhsDataCol *dcols, int ncols)
{
	for (int i = 0; i < ops->nspares; i++)
		if (dsm_segment_map_length(ops->spares[i]) >= size)
		{
			*seg = ops->spares[i];
			ops->spares[i] = ops->spares[--ops->nspares];
			return init_data(*seg, dcols, ncols);
		}
	drop_spares(ops);
	return new_data(seg, size, dcols, ncols);
}

/* does any of the n bytes at p differ from 0? */
static bool
any_set(const uint8 *p, size_t n)
{
	size_t		i = 0;
	uint64		w = 0;

	for (; i + 8 <= n; i += 8)
	{
		uint64		x;

		memcpy(&x, p + i, 8);
		w |= x;
	}
	for (; i < n; i++)
		w |= p[i];
	return w != 0;
}

void
gpuhash_op_pool_append(GhOps *ops, const GhOpPool *pool, int side, int pattern,
					   const uint64 *keys, const uint64 *jkeys, size_t n,
					   const gh_aggcol *given, const uint8 *col_inner, int ncols)
{
	gh_aggcol  *cols = palloc(sizeof(gh_aggcol) * Max(ncols, 1));
	Size		size = header_size(ncols);
	Size		koff = ghs_reserve(&size, 8 * n, keys != NULL);
	Size		joff = ghs_reserve(&size, 8 * n, jkeys != NULL);
	GhsDataCol *dcols;
	dsm_segment *seg;
	GhsData    *d;
	GhsCall		call;

	/* NULL flags that are all 0 are not sent: the pool makes none until a NULL comes */
	for (int c = 0; c < ncols; c++)
	{
		cols[c] = given[c];
		if (cols[c].nulls && !any_set(cols[c].nulls, n))
			cols[c].nulls = NULL;
	}
	dcols = reserve_cols(&size, cols, col_inner, ncols, n, n, side);

	if (ops->appends == NULL)
	{
		MemoryContextCallback *cb = MemoryContextAlloc(ops->cxt, sizeof(MemoryContextCallback));

		ops->appends = MemoryContextAlloc(ops->cxt, sizeof(GhOpAppend) * GH_OPS_MAX_APPENDS);
		ops->spares = MemoryContextAlloc(ops->cxt, sizeof(dsm_segment *) * GH_OPS_MAX_APPENDS);
		cb->func = abandon_appends;
		cb->arg = ops;
		MemoryContextRegisterResetCallback(ops->cxt, cb);
	}
	/* at most GH_OPS_MAX_APPENDS segments of rows at a time */
	if (ops->nappends == GH_OPS_MAX_APPENDS)
		wait_append(ops);
	d = append_data(ops, &seg, size, dcols, ncols);
	d->n = n;
	d->keys = koff;
	d->jkeys = joff;
	put(d, koff, keys, 8 * n);
	put(d, joff, jkeys, 8 * n);
	put_cols(d, cols, n, n);
	pfree(dcols);
	pfree(cols);
	gpuhash_ops_init_call(&call, GHS_OP_POOL_APPEND, pool->worker, pool->id);
	call.arg[0] = side;
	call.arg[1] = pattern;
	call.data = dsm_segment_handle(seg);
	ops->appends[ops->nappends].seg = seg;
	ops->appends[ops->nappends].slot = gpuhash_service_start(&call);
	ops->nappends++;
	ops->used_service = true;
}

/* the NULL patterns appended to the pool: a bit each in mask[4] */
void
gpuhash_op_pool_patterns(GhOps *ops, const GhOpPool *pool, uint64 *mask)
{
	GhsCall		call;

	gpuhash_ops_init_call(&call, GHS_OP_POOL_PATTERNS, pool->worker, pool->id);
	gpuhash_ops_service_call(ops, &call);
	memcpy(mask, call.result, 4 * sizeof(uint64));
}

gh_groups *
gpuhash_op_pool_finish(GhOps *ops, const GhOpPool *pool, int pattern)
{
	GhsCall		call;

	gpuhash_ops_init_call(&call, GHS_OP_POOL_FINISH, pool->worker, pool->id);
	call.arg[1] = pattern;
	gpuhash_ops_service_call(ops, &call);
	return gpuhash_ops_groups_from_reply(ops, call.reply);
}

void
gpuhash_op_pool_free(const GhOpPool *pool)
{
	if (pool->id != 0)
		gpuhash_ops_post_free(pool->worker, pool->id);
}
