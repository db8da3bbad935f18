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
#include "commands/explain.h"
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

/*
 * The node's figures into the statistics (stats.c), when its memory goes:
 * at the end of the plan, or of a query that failed.
 */
static void
report_stats(void *arg)
{
	GhOps	   *ops = (GhOps *) arg;

	if (!ops->used_service && !ops->used_backend && ops->fallback_reason == NULL)
		return;
	if (ops->stat_kind >= 0)
		gpuhash_stats_query((GhStat) ops->stat_kind);
	if (ops->stat_pooled)
		gpuhash_stats_query(GHST_POOLED_QUERIES);
	gpuhash_stats_add(GHST_ROWS, ops->stat_rows);
	gpuhash_stats_add(GHST_PAGES, ops->stat_pages);
	gpuhash_stats_add(GHST_GPU_TIME_US, (uint64) (ops->stat_device_ms * 1000.0));
}

void
gpuhash_ops_init(GhOps *ops, MemoryContext cxt, int kind)
{
	MemoryContextCallback *cb = MemoryContextAlloc(cxt, sizeof(MemoryContextCallback));

	memset(ops, 0, sizeof(*ops));
	ops->cxt = cxt;
	ops->service = gpuhash_service_ready();
	ops->stat_kind = kind;
	cb->func = report_stats;
	cb->arg = ops;
	MemoryContextRegisterResetCallback(cxt, cb);
}

/*
 * The backend's device engine, with room on its devices for an operation
 * (device_gate.c); NULL if ops falls back instead (it cannot be opened, or
 * no room came in time).
 */
gh_engine *
gpuhash_ops_device_engine(GhOps *ops)
{
	char		err[512];

	if (ops->engine == NULL)
	{
		gh_status	st;

		ops->engine = gpuhash_try_get_engine(&st, err, sizeof(err));
		if (ops->engine == NULL)
		{
			if (!gpuhash_ops_fall_back(ops, st, err))
				(void) gpuhash_get_engine();	/* raises the error */
			return NULL;
		}
	}
	ops->used_backend = true;
	if (!gpuhash_gate_enter(ops->engine, NULL, err, sizeof(err)))
	{
		if (!gpuhash_ops_fall_back(ops, GH_ERR_DEVICE_NOMEM, err))
			gpuhash_gate_raise(err);
		return NULL;
	}
	INSTR_TIME_SET_CURRENT(ops->op_start);
	return ops->engine;
}

/* Note that an operation of ops went on with the CPU backend, and why. */
static void
note_fallback(GhOps *ops, const char *reason)
{
	ops->nfallbacks++;
	if (ops->fallback_reason == NULL)
	{
		gpuhash_stats_add(GHST_FALLBACKS, 1);
		ops->fallback_reason = MemoryContextStrdup(ops->cxt, reason);
		ereport(LOG,
				(errmsg("gpuhash: a device operation failed, the plan node goes on with the CPU backend"),
				 errdetail("%s", reason)));
	}
}

bool
gpuhash_ops_fall_back(GhOps *ops, gh_status st, const char *msg)
{
	if (!gpuhash_falls_back(st))
		return false;
	ops->fallback = true;
	note_fallback(ops, psprintf("%s: %s", gh_status_name(st), msg));
	return true;
}

gh_engine *
gpuhash_ops_cpu_engine(GhOps *ops)
{
	if (ops->cpu == NULL)
		ops->cpu = gpuhash_get_fallback_engine();
	ops->used_backend = true;
	return ops->cpu;
}

void
gpuhash_ops_cpu_check(GhOps *ops, gh_status st)
{
	if (st != GH_OK)
		gpuhash_engine_error(ops->cpu, st);
}

/*
 * A device engine call's status: true if it succeeded, false if ops falls
 * back on the CPU; any other failure is raised.
 */
bool
gpuhash_ops_device_ok(GhOps *ops, gh_status st)
{
	ops->stat_device_ms += gpuhash_elapsed_ms(ops->op_start);
	gpuhash_gate_settle();
	if (st == GH_OK)
		return true;
	gpuhash_engine_failed(ops->engine, st);
	if (!gpuhash_ops_fall_back(ops, st, gh_last_error(ops->engine)))
		gpuhash_engine_error(ops->engine, st);
	return false;
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

void
gpuhash_ops_explain(const GhOps *ops, ExplainState *es)
{
	if (ops->fallback_reason)
		ExplainPropertyText("CPU Fallback", ops->fallback_reason, es);
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

/* what a call's reply tells ops: the engine's peak device memory, a fallback */
static void
note_reply(GhOps *ops, const GhsCall *call)
{
	ops->service_peak = Max(ops->service_peak, (size_t) call->result[3]);
	if (call->fell_back)
		note_fallback(ops, call->failure);
}

/* run call in the service for ops */
void
gpuhash_ops_service_call(GhOps *ops, GhsCall *call)
{
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	ops->used_service = true;
	gpuhash_service_call(call);
	ops->stat_device_ms += gpuhash_elapsed_ms(start);
	note_reply(ops, call);
}

/* call's failure, if any, noted for ops: false if there was one (ops falls back) */
static bool
service_call_ok(GhOps *ops, GhsCall *call)
{
	if (call->failed == GH_OK)
		return true;
	if (!gpuhash_ops_fall_back(ops, (gh_status) call->failed, call->failure))
		elog(ERROR, "gpuhash: a failure of the GPU service came back unraised");
	return false;
}

/*
 * Run call in the service, letting ops fall back from the failures it may:
 * false (the failure noted) if it did.
 */
bool
gpuhash_ops_service_ok(GhOps *ops, GhsCall *call)
{
	call->fallback_ok = gpuhash_cpu_fallback;
	gpuhash_ops_service_call(ops, call);
	return service_call_ok(ops, call);
}

GhsSlot *
gpuhash_ops_service_start(GhOps *ops, GhsCall *call, bool fallback_ok, bool wait)
{
	ops->used_service = true;
	call->fallback_ok = fallback_ok && gpuhash_cpu_fallback;
	return wait ? gpuhash_service_start(call) : gpuhash_service_try_start(call);
}

bool
gpuhash_ops_service_finish(GhOps *ops, GhsCall *call, GhsSlot *slot)
{
	gpuhash_service_wait(call, slot);
	note_reply(ops, call);
	return service_call_ok(ops, call);
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

/* Build t on the device: false if ops falls back instead. */
static bool
build_on_device(GhOpTable *t, const uint64 *keys, const uint64 *rows, size_t n)
{
	GhOps	   *ops = t->ops;
	Size		size = header_size(0);
	Size		koff = ghs_reserve(&size, 8 * n, true);
	Size		roff = ghs_reserve(&size, 8 * n, rows != NULL);

	if (ops->service && gpuhash_service_has_room(size))
	{
		dsm_segment *seg;
		GhsData    *d;
		GhsCall		call;
		bool		ok;

		d = new_data(&seg, size, NULL, 0);
		d->n = n;
		d->keys = koff;
		d->rows = roff;
		put(d, d->keys, keys, 8 * n);
		put(d, d->rows, rows, 8 * n);
		gpuhash_ops_init_call(&call, GHS_OP_BUILD, -1, 0);
		call.kind = t->kind;
		call.data = dsm_segment_handle(seg);
		ok = gpuhash_ops_service_ok(ops, &call);
		dsm_detach(seg);
		if (!ok)
			return false;
		t->worker = call.ran_by;
		t->id = call.result_object;
		t->partitions = (int) call.result[0];
		t->broadcast = call.result[1] != 0;
		t->devices = call.result_devices;
	}
	else
	{
		gh_engine  *e = gpuhash_ops_device_engine(ops);
		int			ids[GH_MAX_DEVICES];
		int			nd;

		if (e == NULL || !gpuhash_ops_device_ok(ops, gh_build(e, t->kind, keys, rows, n, &t->local)))
			return false;
		t->partitions = gh_table_partitions(t->local);
		t->broadcast = gh_table_broadcast(t->local);
		nd = gh_table_devices(t->local, ids, GH_MAX_DEVICES);
		t->devices = gpuhash_device_mask(ids, nd);
	}
	ops->stat_rows += n;
	return true;
}

static void
build_on_cpu(GhOpTable *t, const uint64 *keys, const uint64 *rows, size_t n)
{
	GhOps	   *ops = t->ops;
	gh_engine  *e = gpuhash_ops_cpu_engine(ops);

	gpuhash_ops_cpu_check(ops, gh_build(e, t->kind, keys, rows, n, &t->local));
	t->on_cpu = true;
	t->partitions = gh_table_partitions(t->local);
}

GhOpTable *
gpuhash_op_build(GhOps *ops, gh_kind kind, const uint64 *keys, const uint64 *rows, size_t n)
{
	GhOpTable  *t = MemoryContextAllocZero(ops->cxt, sizeof(GhOpTable));

	t->ops = ops;
	t->kind = kind;
	t->keys = keys;
	t->rows = rows;
	t->n = n;
	if (!ops->fallback && build_on_device(t, keys, rows, n))
		return t;
	build_on_cpu(t, keys, rows, n);
	return t;
}

void
gpuhash_op_table_remake(GhOpTable *t, GhOpRemakeKeys fn, void *arg)
{
	t->keys = t->rows = NULL;
	t->remake = fn;
	t->remake_arg = arg;
}

/* ask the service to free object of worker; if no slot is free it goes at transaction end */
void
gpuhash_ops_post_free(int worker, int32 object)
{
	GhsCall		call;

	gpuhash_ops_init_call(&call, GHS_OP_FREE, worker, object);
	(void) gpuhash_service_post(&call);
}

/* let go of what t holds on the device or the CPU (its build input stays) */
static void
free_table_objects(GhOpTable *t)
{
	if (t->local)
		gh_table_free(t->local);
	else if (t->id != 0)
		gpuhash_ops_post_free(t->worker, t->id);
	t->local = NULL;
	t->on_cpu = false;
	t->id = 0;
	gpuhash_gate_settle();
}

void
gpuhash_op_table_free(GhOpTable *t)
{
	if (t == NULL)
		return;
	free_table_objects(t);
}

/* t built on the CPU engine, from its build input, if it is not there yet */
static void
table_to_cpu(GhOpTable *t)
{
	MemoryContext cxt;
	MemoryContext old;
	uint64	   *keys;
	uint64	   *rows;
	size_t		n;

	if (t->on_cpu)
		return;
	free_table_objects(t);
	if (t->remake == NULL)
	{
		build_on_cpu(t, t->keys, t->rows, t->n);
		return;
	}
	cxt = AllocSetContextCreate(CurrentMemoryContext, "gpuhash table input",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	t->remake(t->remake_arg, &keys, &rows, &n);
	MemoryContextSwitchTo(old);
	build_on_cpu(t, keys, rows, n);
	MemoryContextDelete(cxt);
}

/* let go of j's join, wherever it is (its table stays) */
static void
free_join_objects(GhOpJoin *j)
{
	if (j->local)
		gh_join_free(j->local);
	else if (j->id != 0)
		gpuhash_ops_post_free(j->table->worker, j->id);
	if (j->data)
		dsm_detach(j->data);
	j->local = NULL;
	j->on_cpu = false;
	j->id = 0;
	j->data = NULL;
	gpuhash_gate_settle();
}

/* Begin j on the device: false if ops falls back instead. */
static bool
join_begin_on_device(GhOpJoin *j)
{
	GhOpTable  *t = j->table;
	GhOps	   *ops = t->ops;
	Size		size = header_size(0);
	Size		koff = ghs_reserve(&size, 8 * j->n, true);
	Size		foff = ghs_reserve(&size, j->n, true);
	Size		poff = ghs_reserve(&size, sizeof(gh_pair) * j->cap, true);
	GhsData    *d;
	GhsCall		call;
	bool		ok;

	if (t->local)
	{
		if (gpuhash_ops_device_engine(ops) == NULL ||
			!gpuhash_ops_device_ok(ops, gh_join_begin(t->local, j->keys, j->n, j->method, &j->local)))
			return false;
		j->total = gh_join_total(j->local);
		ops->stat_rows += j->n;
		return true;
	}
	d = new_data(&j->data, size, NULL, 0);
	dsm_pin_mapping(j->data);
	d->n = j->n;
	d->cap = j->cap;
	d->keys = koff;
	d->flags = foff;
	d->pairs = poff;
	put(d, koff, j->keys, 8 * j->n);
	gpuhash_ops_init_call(&call, GHS_OP_JOIN_BEGIN, t->worker, t->id);
	call.method = j->method;
	call.data = dsm_segment_handle(j->data);
	PG_TRY();
	{
		ok = gpuhash_ops_service_ok(ops, &call);
	}
	PG_CATCH();
	{
		/* the mapping is pinned: the abort would not detach it */
		dsm_detach(j->data);
		j->data = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!ok)
	{
		dsm_detach(j->data);
		j->data = NULL;
		return false;
	}
	j->id = call.result_object;
	j->total = call.result[0];
	ops->stat_rows += j->n;
	return true;
}

/* Begin j on the CPU engine, its table moved there first. */
static void
join_begin_on_cpu(GhOpJoin *j)
{
	GhOps	   *ops = j->table->ops;

	free_join_objects(j);
	table_to_cpu(j->table);
	gpuhash_ops_cpu_check(ops, gh_join_begin(j->table->local, j->keys, j->n, j->method,
											 &j->local));
	j->on_cpu = true;
	j->total = gh_join_total(j->local);
}

GhOpJoin *
gpuhash_op_join_begin(GhOpTable *t, const uint64 *keys, size_t n, gh_join_method method,
					  size_t cap)
{
	GhOps	   *ops = t->ops;
	GhOpJoin   *j = MemoryContextAllocZero(ops->cxt, sizeof(GhOpJoin));

	j->table = t;
	j->keys = keys;
	j->n = n;
	j->method = method;
	j->cap = cap;
	if (ops->fallback || t->on_cpu || !join_begin_on_device(j))
		join_begin_on_cpu(j);
	return j;
}

/*
 * The device failed j after it had handed out pairs: they came in an order
 * the CPU engine does not reproduce, so the rest cannot be told apart.
 */
static pg_noreturn void
cannot_move_join(GhOpJoin *j)
{
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("gpuhash could not finish a join on the CPU"),
			 errdetail("The device failed after " UINT64_FORMAT " of its " UINT64_FORMAT " pairs were returned: %s.",
					   j->delivered, j->total, j->table->ops->fallback_reason),
			 errhint("Lower gpuhash.chunk_rows, or set gpuhash.enabled = off.")));
}

size_t
gpuhash_op_join_next(GhOpJoin *j, gh_pair *out, size_t cap)
{
	GhOps	   *ops = j->table->ops;
	size_t		nout = 0;

	if (j->delivered >= j->total)
		return 0;
	if (j->local && !j->on_cpu)
	{
		if (gpuhash_ops_device_engine(ops) != NULL &&
			gpuhash_ops_device_ok(ops, gh_join_next(j->local, out, cap, &nout)))
		{
			j->delivered += nout;
			return nout;
		}
	}
	else if (!j->on_cpu)
	{
		GhsCall		call;
		GhsData    *d;

		gpuhash_ops_init_call(&call, GHS_OP_JOIN_NEXT, j->table->worker, j->id);
		call.arg[0] = Min(cap, j->cap);
		if (gpuhash_ops_service_ok(ops, &call))
		{
			nout = (size_t) call.result[0];
			d = dsm_segment_address(j->data);
			memcpy(out, (char *) d + d->pairs, sizeof(gh_pair) * nout);
			j->delivered += nout;
			return nout;
		}
	}
	if (!j->on_cpu)
	{
		if (j->delivered > 0)
			cannot_move_join(j);
		join_begin_on_cpu(j);
	}
	gpuhash_ops_cpu_check(ops, gh_join_next(j->local, out, cap, &nout));
	j->delivered += nout;
	return nout;
}

void
gpuhash_op_join_outer_matched(GhOpJoin *j, uint8 *flags)
{
	GhOps	   *ops = j->table->ops;

	if (j->local && !j->on_cpu)
	{
		if (gpuhash_ops_device_engine(ops) != NULL &&
			gpuhash_ops_device_ok(ops, gh_join_outer_matched(j->local, flags)))
			return;
	}
	else if (!j->on_cpu)
	{
		GhsCall		call;
		GhsData    *d;

		gpuhash_ops_init_call(&call, GHS_OP_OUTER_MATCHED, j->table->worker, j->id);
		if (gpuhash_ops_service_ok(ops, &call))
		{
			d = dsm_segment_address(j->data);
			memcpy(flags, (char *) d + d->flags, j->n);
			return;
		}
	}
	if (!j->on_cpu)
		join_begin_on_cpu(j);
	gpuhash_ops_cpu_check(ops, gh_join_outer_matched(j->local, flags));
}

void
gpuhash_op_join_free(GhOpJoin *j)
{
	if (j == NULL)
		return;
	free_join_objects(j);
}

/* ---- aggregation ---- */

gh_groups *
gpuhash_op_aggregate(GhOps *ops, const uint64 *keys, size_t n, const gh_aggcol *cols, int ncols)
{
	Size		size = header_size(ncols);
	Size		koff = ghs_reserve(&size, 8 * n, true);
	GhsDataCol *dcols = reserve_cols(&size, cols, NULL, ncols, n, 0, -1);
	gh_groups  *g = NULL;
	gh_engine  *e;

	if (!ops->fallback && ops->service && gpuhash_service_has_room(size))
	{
		dsm_segment *seg;
		GhsData    *d;
		GhsCall		call;
		bool		ok;

		d = new_data(&seg, size, dcols, ncols);
		d->n = n;
		d->keys = koff;
		put(d, koff, keys, 8 * n);
		put_cols(d, cols, n, 0);
		gpuhash_ops_init_call(&call, GHS_OP_AGGREGATE, -1, 0);
		call.data = dsm_segment_handle(seg);
		ok = gpuhash_ops_service_ok(ops, &call);
		dsm_detach(seg);
		if (ok)
		{
			ops->stat_rows += n;
			return gpuhash_ops_groups_from_reply(ops, call.reply);
		}
	}
	else if (!ops->fallback && (e = gpuhash_ops_device_engine(ops)) != NULL &&
			 gpuhash_ops_device_ok(ops, gh_aggregate(e, keys, n, cols, ncols, &g)))
	{
		ops->stat_rows += n;
		return g;
	}
	gpuhash_ops_cpu_check(ops, gh_aggregate(gpuhash_ops_cpu_engine(ops), keys, n, cols, ncols,
											&g));
	return g;
}

/* The join aggregation of t on the device: NULL if ops falls back instead. */
static gh_groups *
join_aggregate_on_device(GhOpTable *t, const uint64 *keys, size_t n, gh_join_method method,
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
	bool		ok;

	if (t->local)
		return gpuhash_ops_device_engine(ops) != NULL &&
			gpuhash_ops_device_ok(ops, gh_join_aggregate(t->local, keys, n, method, spec, &g)) ? g : NULL;
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
	ok = gpuhash_ops_service_ok(ops, &call);
	dsm_detach(seg);
	return ok ? gpuhash_ops_groups_from_reply(ops, call.reply) : NULL;
}

gh_groups *
gpuhash_op_join_aggregate(GhOpTable *t, const uint64 *keys, size_t n, gh_join_method method,
						  const gh_joinagg *spec)
{
	GhOps	   *ops = t->ops;
	gh_groups  *g = NULL;

	if (!ops->fallback && !t->on_cpu &&
		(g = join_aggregate_on_device(t, keys, n, method, spec)) != NULL)
	{
		ops->stat_rows += n;
		return g;
	}
	table_to_cpu(t);
	gpuhash_ops_cpu_check(ops, gh_join_aggregate(t->local, keys, n, method, spec, &g));
	return g;
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

bool
gpuhash_op_pool_create(GhOps *ops, int kind, GhOpPool *pool)
{
	GhsCall		call;

	gpuhash_ops_init_call(&call, GHS_OP_POOL_CREATE, -1, 0);
	call.kind = kind;
	if (!gpuhash_ops_service_ok(ops, &call))
		return false;
	pool->worker = call.ran_by;
	pool->id = call.result_object;
	return true;
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
	if (call.fell_back)
		note_fallback(ops, call.failure);
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
	ops->stat_pooled = true;
	ops->stat_rows += n;
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
	ops->stat_pooled = true;
	return gpuhash_ops_groups_from_reply(ops, call.reply);
}

void
gpuhash_op_pool_free(const GhOpPool *pool)
{
	if (pool->id != 0)
		gpuhash_ops_post_free(pool->worker, pool->id);
}
