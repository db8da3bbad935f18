/*-------------------------------------------------------------------------
 *
 * service_worker.c
 *	  The GPU service: background workers, started with the server when
 *	  gpuhash is in shared_preload_libraries, that own the CUDA contexts and
 *	  run the engine's operations for every backend and parallel worker.
 *
 * Opening an engine on a GPU creates a CUDA context, about half a second;
 * without the service every backend and every parallel worker (a new
 * process for each query) pays it.  A service worker opens its engines once
 * and keeps them, one per engine shape (backend, devices, memory limit) the
 * clients ask for.  The protocol is in service_shared.h.
 *
 * A worker serves one request at a time.  Errors raised while running one
 * (the engine's, or running out of memory) are caught and sent back to the
 * client with their SQLSTATE, message, detail and hint, so the client raises
 * what it would have raised running the engine itself; the worker goes on.
 * CUDA is never touched in the postmaster: the worker is a child process and
 * opens its engines on its first request.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "gpuhash.h"
#include "service_shared.h"
#include "star_ops.h"

/* an engine the worker keeps open, by shape */
typedef struct ServiceEngine
{
	GhsShape	shape;
	gh_engine  *engine;
	bool		failed;			/* a device fault: close once unused */
	int			users;			/* objects on it */
	size_t		cache_max;		/* the largest page cache its memory limit leaves room for */
} ServiceEngine;

#define MAX_ENGINES 8

/* a table or join held for a client */
typedef struct ServiceObject
{
	int32		id;
	ServiceEngine *engine;
	gh_table   *table;
	gh_join    *join;
	int32		table_id;		/* a join's table */
	dsm_segment *data;			/* a join's keys and areas */
	int			owner_procno;
	int			owner_pid;
	LocalTransactionId owner_lxid;
	struct ServiceObject *next;
} ServiceObject;

static int	my_index = -1;
static ServiceEngine engines[MAX_ENGINES];
static ServiceObject *objects = NULL;
static int32 next_object_id = 1;
static dsm_segment *replies[GHS_SLOTS];	/* held until acknowledged */
static GhsSlot *current_slot = NULL;

void
gpuhash_service_register(void)
{
	BackgroundWorker bgw;

	for (int i = 0; i < gpuhash_service_workers; i++)
	{
		memset(&bgw, 0, sizeof(bgw));
		bgw.bgw_flags = BGWORKER_SHMEM_ACCESS;
		bgw.bgw_start_time = BgWorkerStart_PostmasterStart;
		bgw.bgw_restart_time = 5;
		snprintf(bgw.bgw_library_name, BGW_MAXLEN, "gpuhash");
		snprintf(bgw.bgw_function_name, BGW_MAXLEN, "gpuhash_service_main");
		snprintf(bgw.bgw_name, BGW_MAXLEN, "gpuhash GPU service %d", i);
		snprintf(bgw.bgw_type, BGW_MAXLEN, "gpuhash GPU service");
		bgw.bgw_main_arg = Int32GetDatum(i);
		RegisterBackgroundWorker(&bgw);
	}
}

/* the engine's interrupt poll, in the service: the client gave up, or shutdown */
static bool
service_interrupt(void)
{
	return ShutdownRequestPending || (current_slot != NULL && current_slot->cancel);
}

/* ---- engines ---- */

/* the engines whose device memory this worker's reservation counts (device_gate.c) */
static void
visit_engines(void (*visit) (gh_engine *e, void *arg), void *arg)
{
	for (int i = 0; i < MAX_ENGINES; i++)
		if (engines[i].engine)
			visit(engines[i].engine, arg);
}

/* After requests and frees: the reservation (device_gate.c) and gpuhash_service()'s figure. */
static void
settle_device_memory(void)
{
	GhsWorkerInfo *me = &gpuhash_service->worker[my_index];
	uint64		bytes = 0;
	gh_page_cache_info sum = {0};

	for (int i = 0; i < MAX_ENGINES; i++)
		if (engines[i].engine)
		{
			gh_page_cache_info c;

			bytes += gh_engine_device_bytes(engines[i].engine);
			gh_page_cache_info_get(engines[i].engine, &c);
			sum.bytes += c.bytes;
			sum.pages += c.pages;
			sum.hits += c.hits;
			sum.misses += c.misses;
		}
	pg_atomic_write_u64(&me->device_bytes, bytes);
	pg_atomic_write_u64(&me->cache_bytes, sum.bytes);
	pg_atomic_write_u64(&me->cache_pages, sum.pages);
	pg_atomic_write_u64(&me->cache_hits, sum.hits);
	pg_atomic_write_u64(&me->cache_misses, sum.misses);
	gpuhash_gate_settle();
}

/* The smallest GPU's free memory (free_only) or memory; 0 where there is none. */
static size_t
least_device_memory(bool free_only)
{
	gh_device_info info[GH_MAX_DEVICES];
	int			nd = gh_list_devices(info, GH_MAX_DEVICES);
	size_t		least = 0;

	for (int i = 0; i < nd; i++)
	{
		size_t		m = free_only ? info[i].mem_free : info[i].mem_total;

		if (least == 0 || m < least)
			least = m;
	}
	return least;
}

/*
 * The page cache an engine of shape gets (gpuhash.page_cache_size): by
 * default on a GPU a third of the smallest GPU's memory, shared by the
 * workers; none on the CPU backend unless set.
 */
static size_t
page_cache_bytes(const GhsShape *shape)
{
	if (gpuhash_page_cache_mb >= 0)
		return (size_t) gpuhash_page_cache_mb << 20;
	if (shape->backend != GH_BACKEND_CUDA)
		return 0;
	return least_device_memory(false) / 3 / Max(gpuhash_service->nworkers, 1);
}

/*
 * Every engine's page cache sized as the settings say now, within the room
 * its memory limit left when it opened (a larger cache waits for the engine
 * to open again).
 */
static void
size_page_caches(void)
{
	for (int i = 0; i < MAX_ENGINES; i++)
		if (engines[i].engine)
			gh_page_cache_size(engines[i].engine,
							   Min(page_cache_bytes(&engines[i].shape), engines[i].cache_max));
}

/* room on e's devices for an operation (device_gate.c): false, and why, if none in time */
bool
gpuhash_service_room(gh_engine *e, char *err, size_t errlen)
{
	return gpuhash_gate_enter(e, service_interrupt, err, errlen);
}

/* the same, none in time an error */
static void
wait_for_room(gh_engine *e)
{
	char		err[512];

	if (!gpuhash_service_room(e, err, sizeof(err)))
		gpuhash_gate_raise(err);
}

static void
close_engine(ServiceEngine *se)
{
	gh_close(se->engine);
	se->engine = NULL;
	pg_atomic_fetch_sub_u32(&gpuhash_service->worker[my_index].engines, 1);
}

static void
close_unused_failed_engines(void)
{
	for (int i = 0; i < MAX_ENGINES; i++)
		if (engines[i].engine && engines[i].failed && engines[i].users == 0)
			close_engine(&engines[i]);
}

static ServiceEngine *
get_engine(const GhsShape *shape)
{
	ServiceEngine *slot = NULL;

	close_unused_failed_engines();
	for (int i = 0; i < MAX_ENGINES; i++)
	{
		if (engines[i].engine && !engines[i].failed &&
			memcmp(&engines[i].shape, shape, sizeof(GhsShape)) == 0)
			return &engines[i];
		if (engines[i].engine == NULL && slot == NULL)
			slot = &engines[i];
	}
	if (slot == NULL)
	{
		/* every entry is open: close one no object uses */
		for (int i = 0; i < MAX_ENGINES && slot == NULL; i++)
			if (engines[i].users == 0)
			{
				close_engine(&engines[i]);
				slot = &engines[i];
			}
		if (slot == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("the gpuhash GPU service has too many engine shapes in use"),
					 errhint("Use the same gpuhash.device, gpuhash.devices and gpuhash.memory_limit in every session.")));
	}
	gpuhash_memory_limit_mb = shape->memory_limit_mb;
	gpuhash_max_memory_mb = shape->memory_cap_mb;
	slot->cache_max = SIZE_MAX;
	if (shape->memory_limit_mb == 0 && shape->backend == GH_BACKEND_CUDA)
	{
		/*
		 * Every worker's engine would take 90% of the device's free memory,
		 * and workers run at once: each gets its share instead, less the
		 * page cache it may fill, so that what each worker may hold at once
		 * (an operation and its cache) stays within its share.
		 */
		size_t		least = least_device_memory(true);
		size_t		share = least / 10 * 9 / Max(gpuhash_service->nworkers, 1);

		slot->cache_max = Min(page_cache_bytes(shape), share / 2);
		if (least > 0 && (gpuhash_service->nworkers > 1 || slot->cache_max > 0))
			gpuhash_memory_limit_mb = (int) Max((share - slot->cache_max) >> 20, 1);
	}
	slot->engine = gpuhash_open_engine((gh_backend) shape->backend, shape->devices);
	pg_atomic_fetch_add_u32(&gpuhash_service->worker[my_index].engines, 1);
	{
		size_t		cache = Min(page_cache_bytes(shape), slot->cache_max);

		gh_page_cache_size(slot->engine, cache);
		if (cache > 0)
			ereport(LOG,
					(errmsg("gpuhash GPU service %d: a page cache of up to %zu MB on its engine",
							my_index, cache >> 20)));
	}
	slot->shape = *shape;
	slot->failed = false;
	slot->users = 0;
	return slot;
}

/* raise the error for an engine failure; a device fault retires the engine */
static pg_noreturn void
engine_failed(ServiceEngine *se, gh_status st)
{
	if (st == GH_ERR_DEVICE || st == GH_ERR_INTERNAL)
		se->failed = true;
	gpuhash_engine_error(se->engine, st);
}

void
gpuhash_service_engine_failed(gh_engine *e, gh_status st)
{
	for (int i = 0; i < MAX_ENGINES; i++)
		if (engines[i].engine == e)
			engine_failed(&engines[i], st);
	gpuhash_engine_error(e, st);
}

/*
 * The engine of shape, held open for an object kept outside this file (a
 * pool's arrays live in it) until released.
 */
gh_engine *
gpuhash_service_hold_engine(const GhsShape *shape)
{
	ServiceEngine *se = get_engine(shape);

	se->users++;
	return se->engine;
}

void
gpuhash_service_release_engine(gh_engine *e)
{
	for (int i = 0; i < MAX_ENGINES; i++)
		if (engines[i].engine == e && engines[i].users > 0)
		{
			engines[i].users--;
			return;
		}
}

/* ---- objects ---- */

int32
gpuhash_service_new_id(void)
{
	int32		id = next_object_id++;

	if (next_object_id <= 0)
		next_object_id = 1;
	return id;
}

void
gpuhash_service_count_object(int delta)
{
	if (delta > 0)
		pg_atomic_fetch_add_u32(&gpuhash_service->worker[my_index].objects, delta);
	else
		pg_atomic_fetch_sub_u32(&gpuhash_service->worker[my_index].objects, -delta);
}

static ServiceObject *
new_object(ServiceEngine *se, GhsSlot *slot)
{
	ServiceObject *o = MemoryContextAllocZero(TopMemoryContext, sizeof(ServiceObject));

	o->id = gpuhash_service_new_id();
	o->engine = se;
	o->owner_procno = slot->client_procno;
	o->owner_pid = slot->client_pid;
	o->owner_lxid = slot->client_lxid;
	o->next = objects;
	objects = o;
	se->users++;
	gpuhash_service_count_object(1);
	return o;
}

static ServiceObject *
find_object(GhsSlot *slot, bool join)
{
	for (ServiceObject *o = objects; o; o = o->next)
		if (o->id == slot->object)
		{
			if (o->owner_pid != slot->client_pid || (o->join != NULL) != join)
				break;
			return o;
		}
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("gpuhash GPU service: no %s %d for this process", join ? "join" : "table",
					slot->object)));
}

static void
free_object(ServiceObject *victim)
{
	ServiceObject **p;

	/* a table's joins go first */
	if (victim->join == NULL)
	{
		for (ServiceObject *o = objects; o;)
		{
			ServiceObject *next = o->next;

			if (o->join != NULL && o->table_id == victim->id)
				free_object(o);
			o = next;
		}
	}
	for (p = &objects; *p; p = &(*p)->next)
		if (*p == victim)
		{
			*p = victim->next;
			break;
		}
	if (victim->join)
		gh_join_free(victim->join);
	if (victim->table)
		gh_table_free(victim->table);
	if (victim->data)
		dsm_detach(victim->data);
	victim->engine->users--;
	gpuhash_service_count_object(-1);
	pfree(victim);
}

/* Has the client that made an object ended its transaction, or exited? */
bool
gpuhash_service_owner_gone(int procno, int pid, LocalTransactionId lxid)
{
	PGPROC	   *proc = GetPGProcByNumber(procno);

	return proc->pid != pid || PGPROC_LXID(proc) != lxid;
}

/* Free the objects of clients whose transaction has ended or who have exited. */
static void
reap_objects(void)
{
	for (ServiceObject *o = objects; o;)
	{
		ServiceObject *next = o->next;

		if (gpuhash_service_owner_gone(o->owner_procno, o->owner_pid, o->owner_lxid))
		{
			/* a join may go with its table: restart the walk */
			free_object(o);
			o = objects;
			continue;
		}
		o = next;
	}
}

/* ---- replies ---- */

static void
copy_to(gh_copy *copies, int *ncopies, char *base, Size off, const void *src, Size bytes)
{
	if (off && bytes)
		copies[(*ncopies)++] = (gh_copy) {base + off, src, bytes};
}

/*
 * Send groups back in a reply segment of their own: the arrays the engine
 * filled (those of each column's operations), copied on several threads
 * (a query's 10 million groups are hundreds of megabytes).
 */
static void
write_reply(GhsSlot *slot, gh_groups *g)
{
	Size		size = GHS_ALIGN(offsetof(GhsGroupsReply, cols) + sizeof(GhsGroupsCol) * g->ncols);
	Size		n = g->ngroups;
	GhsGroupsReply hdr;
	GhsGroupsCol *cols = palloc0(sizeof(GhsGroupsCol) * Max(g->ncols, 1));
	gh_copy    *copies = palloc(sizeof(gh_copy) * (2 + 8 * Max(g->ncols, 1)));
	int			ncopies = 0;
	dsm_segment *seg;
	char	   *base;
	instr_time	start;
	double		create_ms;

	INSTR_TIME_SET_CURRENT(start);
	memset(&hdr, 0, sizeof(hdr));
	hdr.ngroups = n;
	hdr.input_rows = g->input_rows;
	hdr.partitions = g->partitions;
	hdr.ndevices = g->ndevices;
	memcpy(hdr.devices, g->devices, sizeof(hdr.devices));
	hdr.ncols = g->ncols;
	hdr.keys = ghs_reserve(&size, 8 * n, true);
	hdr.rows = ghs_reserve(&size, 8 * n, true);
	for (int c = 0; c < g->ncols; c++)
	{
		gh_aggresult *r = &g->cols[c];

		/* a column without NULLs: its non-NULL counts are the rows' (engine.h) */
		cols[c].nonnull = r->nonnull == g->rows ? hdr.rows :
			ghs_reserve(&size, 8 * n, r->nonnull != NULL);
		cols[c].sum_lo = ghs_reserve(&size, 8 * n, r->sum_lo != NULL);
		cols[c].sum_hi = ghs_reserve(&size, 8 * n, r->sum_hi != NULL);
		cols[c].fsum = ghs_reserve(&size, 8 * n, r->fsum != NULL);
		cols[c].imin = ghs_reserve(&size, 8 * n, r->imin != NULL);
		cols[c].imax = ghs_reserve(&size, 8 * n, r->imax != NULL);
		cols[c].fmin = ghs_reserve(&size, 8 * n, r->fmin != NULL);
		cols[c].fmax = ghs_reserve(&size, 8 * n, r->fmax != NULL);
	}
	seg = dsm_create(size, 0);
	create_ms = gpuhash_elapsed_ms(start);
	base = dsm_segment_address(seg);
	memcpy(base, &hdr, offsetof(GhsGroupsReply, cols));
	memcpy(base + offsetof(GhsGroupsReply, cols), cols, sizeof(GhsGroupsCol) * g->ncols);
	copy_to(copies, &ncopies, base, hdr.keys, g->keys, 8 * n);
	copy_to(copies, &ncopies, base, hdr.rows, g->rows, 8 * n);
	for (int c = 0; c < g->ncols; c++)
	{
		gh_aggresult *r = &g->cols[c];

		if (r->nonnull != g->rows)
			copy_to(copies, &ncopies, base, cols[c].nonnull, r->nonnull, 8 * n);
		copy_to(copies, &ncopies, base, cols[c].sum_lo, r->sum_lo, 8 * n);
		copy_to(copies, &ncopies, base, cols[c].sum_hi, r->sum_hi, 8 * n);
		copy_to(copies, &ncopies, base, cols[c].fsum, r->fsum, 8 * n);
		copy_to(copies, &ncopies, base, cols[c].imin, r->imin, 8 * n);
		copy_to(copies, &ncopies, base, cols[c].imax, r->imax, 8 * n);
		copy_to(copies, &ncopies, base, cols[c].fmin, r->fmin, 8 * n);
		copy_to(copies, &ncopies, base, cols[c].fmax, r->fmax, 8 * n);
	}
	gh_copy_host(copies, ncopies);
	elog(DEBUG1, "gpuhash GPU service: reply of %zu groups, %zu MB: segment made in %.1f ms, filled in %.1f ms",
		 (size_t) n, (size_t) (size >> 20), create_ms, gpuhash_elapsed_ms(start) - create_ms);
	replies[slot - gpuhash_service->slots] = seg;
	slot->reply = dsm_segment_handle(seg);
	slot->result[0] = n;
}

/* Reply the groups; the engine's g (engine_made) is freed, whatever happens. */
void
gpuhash_service_reply_groups(GhsSlot *slot, gh_groups *g, bool engine_made)
{
	PG_TRY();
	{
		write_reply(slot, g);
	}
	PG_FINALLY();
	{
		if (engine_made)
			gh_groups_free(g);
	}
	PG_END_TRY();
}

/* ---- running a request ---- */

static dsm_segment *
attach_data(GhsSlot *slot)
{
	dsm_segment *seg = slot->data ? dsm_attach(slot->data) : NULL;

	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("gpuhash GPU service: the request's data is gone")));
	return seg;
}

/* the engine columns a data segment describes */
static gh_aggcol *
data_cols(char *base, GhsData *d, uint8 **col_inner)
{
	gh_aggcol  *cols = palloc0(sizeof(gh_aggcol) * Max(d->ncols, 1));

	*col_inner = palloc0(Max(d->ncols, 1));
	for (int c = 0; c < d->ncols; c++)
	{
		cols[c].type = (gh_valtype) d->cols[c].type;
		cols[c].ops = d->cols[c].ops;
		cols[c].values = ghs_at(base, d->cols[c].values);
		cols[c].nulls = ghs_at(base, d->cols[c].nulls);
		(*col_inner)[c] = d->cols[c].inner;
	}
	return cols;
}

void
gpuhash_service_arm_failure(gh_engine *e, GhsSlot *slot)
{
	gh_debug_inject_failure(e, slot->debug_fail_after >= 0 ? 0 : -1,
							slot->debug_fail_after, GH_ERR_DEVICE_NOMEM);
}

static void
run_aggregate(GhsSlot *slot)
{
	ServiceEngine *se = get_engine(&slot->shape);
	dsm_segment *seg = attach_data(slot);
	char	   *base = dsm_segment_address(seg);
	GhsData    *d = (GhsData *) base;
	uint8	   *col_inner;
	gh_aggcol  *cols = data_cols(base, d, &col_inner);
	gh_groups  *g = NULL;
	gh_status	st;

	gpuhash_service_arm_failure(se->engine, slot);
	wait_for_room(se->engine);
	st = gh_aggregate(se->engine, ghs_at(base, d->keys), d->n, cols, d->ncols, &g);
	dsm_detach(seg);
	if (st != GH_OK)
		engine_failed(se, st);
	gpuhash_service_reply_groups(slot, g, true);
	slot->result[3] = gh_engine_peak_device_bytes(se->engine);
}

static void
run_build(GhsSlot *slot)
{
	ServiceEngine *se = get_engine(&slot->shape);
	dsm_segment *seg = attach_data(slot);
	char	   *base = dsm_segment_address(seg);
	GhsData    *d = (GhsData *) base;
	gh_table   *t = NULL;
	gh_status	st;
	ServiceObject *o;
	int			ids[GH_MAX_DEVICES];
	int			nd;

	gpuhash_service_arm_failure(se->engine, slot);
	wait_for_room(se->engine);
	st = gh_build(se->engine, (gh_kind) slot->kind, ghs_at(base, d->keys),
				  ghs_at(base, d->rows), d->n, &t);
	dsm_detach(seg);
	if (st != GH_OK)
		engine_failed(se, st);
	o = new_object(se, slot);
	o->table = t;
	slot->result_object = o->id;
	slot->result[0] = (uint64) gh_table_partitions(t);
	slot->result[1] = gh_table_broadcast(t) ? 1 : 0;
	nd = gh_table_devices(t, ids, GH_MAX_DEVICES);
	slot->result_devices = gpuhash_device_mask(ids, nd);
	slot->result[3] = gh_engine_peak_device_bytes(se->engine);
}

static void
run_join_begin(GhsSlot *slot)
{
	ServiceObject *table = find_object(slot, false);
	dsm_segment *seg = attach_data(slot);
	char	   *base = dsm_segment_address(seg);
	GhsData    *d = (GhsData *) base;
	gh_join    *j = NULL;
	gh_status	st;
	ServiceObject *o;

	wait_for_room(table->engine->engine);
	st = gh_join_begin(table->table, ghs_at(base, d->keys), d->n,
					   (gh_join_method) slot->method, &j);
	if (st != GH_OK)
	{
		dsm_detach(seg);
		engine_failed(table->engine, st);
	}
	o = new_object(table->engine, slot);
	o->join = j;
	o->table_id = table->id;
	o->data = seg;
	slot->result_object = o->id;
	slot->result[0] = gh_join_total(j);
	slot->result[3] = gh_engine_peak_device_bytes(table->engine->engine);
}

static void
run_join_next(GhsSlot *slot)
{
	ServiceObject *o = find_object(slot, true);
	char	   *base = dsm_segment_address(o->data);
	GhsData    *d = (GhsData *) base;
	size_t		nout = 0;
	gh_status	st;

	wait_for_room(o->engine->engine);
	st = gh_join_next(o->join, ghs_at(base, d->pairs), Min(slot->arg[0], d->cap), &nout);
	if (st != GH_OK)
		engine_failed(o->engine, st);
	slot->result[0] = nout;
	slot->result[3] = gh_engine_peak_device_bytes(o->engine->engine);
}

static void
run_outer_matched(GhsSlot *slot)
{
	ServiceObject *o = find_object(slot, true);
	char	   *base = dsm_segment_address(o->data);
	GhsData    *d = (GhsData *) base;
	gh_status	st;

	wait_for_room(o->engine->engine);
	st = gh_join_outer_matched(o->join, ghs_at(base, d->flags));
	if (st != GH_OK)
		engine_failed(o->engine, st);
}

static void
run_join_aggregate(GhsSlot *slot)
{
	ServiceObject *table = find_object(slot, false);
	dsm_segment *seg = attach_data(slot);
	char	   *base = dsm_segment_address(seg);
	GhsData    *d = (GhsData *) base;
	gh_joinagg	spec;
	gh_groups  *g = NULL;
	gh_status	st;

	spec.outer_keys = ghs_at(base, d->outer_keys);
	spec.inner_keys = ghs_at(base, d->inner_keys);
	spec.inner_rows = d->inner_rows;
	spec.cols = data_cols(base, d, (uint8 **) &spec.col_inner);
	spec.ncols = d->ncols;
	wait_for_room(table->engine->engine);
	st = gh_join_aggregate(table->table, ghs_at(base, d->keys), d->n,
						   (gh_join_method) slot->method, &spec, &g);
	dsm_detach(seg);
	if (st != GH_OK)
		engine_failed(table->engine, st);
	gpuhash_service_reply_groups(slot, g, true);
	slot->result[3] = gh_engine_peak_device_bytes(table->engine->engine);
}

/* Free the table, join or pool id of the client with process id pid. */
static void
free_object_id(int32 id, int pid)
{
	for (ServiceObject *o = objects; o; o = o->next)
		if (o->id == id && o->owner_pid == pid)
		{
			free_object(o);
			return;
		}
	if (!gpuhash_pool_free(id))
		(void) gpuhash_star_service_free(id);
}

static void
run_free(GhsSlot *slot)
{
	free_object_id(slot->object, slot->client_pid);
}

static void
run_pool_append(GhsSlot *slot)
{
	dsm_segment *seg;
	instr_time	start;
	double		map_ms;
	bool		on_device;

	gpuhash_service_arm_failure(gpuhash_pool_engine(slot), slot);
	seg = attach_data(slot);
	INSTR_TIME_SET_CURRENT(start);
#ifdef MADV_POPULATE_READ
	/* map the rows' pages at once rather than page by page as they are read */
	(void) madvise(dsm_segment_address(seg), dsm_segment_map_length(seg), MADV_POPULATE_READ);
#endif
	map_ms = gpuhash_elapsed_ms(start);
	PG_TRY();
	{
		INSTR_TIME_SET_CURRENT(start);
		on_device = gpuhash_pool_append(slot, dsm_segment_address(seg),
										dsm_segment_map_length(seg));
		elog(DEBUG1, "gpuhash pool %d: appended %zu bytes, mapped in %.1f ms, copied %s in %.1f ms",
			 slot->object, dsm_segment_map_length(seg), map_ms,
			 on_device ? "to the device" : "in host memory", gpuhash_elapsed_ms(start));
	}
	PG_FINALLY();
	{
		dsm_detach(seg);
	}
	PG_END_TRY();
}

static void
run_pool_pages(GhsSlot *slot)
{
	dsm_segment *seg;
	instr_time	start;

	gpuhash_service_arm_failure(gpuhash_pool_engine(slot), slot);
	seg = attach_data(slot);
	INSTR_TIME_SET_CURRENT(start);
	PG_TRY();
	{
		slot->result[0] = gpuhash_pool_pages(slot, dsm_segment_address(seg));
		elog(DEBUG2, "gpuhash pool %d: " UINT64_FORMAT " rows of heap pages appended in %.1f ms",
			 slot->object, slot->result[0], gpuhash_elapsed_ms(start));
	}
	PG_FINALLY();
	{
		dsm_detach(seg);
	}
	PG_END_TRY();
}

static void
run_pool_finish(GhsSlot *slot)
{
	gh_engine  *e = gpuhash_pool_engine(slot);

	gpuhash_service_arm_failure(e, slot);
	gpuhash_pool_finish(slot);
	slot->result[3] = gh_engine_peak_device_bytes(e);
}

/*
 * The rows of shared-buffer pages the client has pinned: read in place, the
 * rows written into the client's segment.
 */
static void
run_extract_pages(GhsSlot *slot)
{
	ServiceEngine *se = get_engine(&slot->shape);
	dsm_segment *seg = attach_data(slot);
	char	   *base = dsm_segment_address(seg);
	GhsPages   *p = (GhsPages *) base;
	gh_pagerows rows;
	gh_status	st;

	memset(&rows, 0, sizeof(rows));
	rows.cap = p->cap;
	rows.first = ghs_at(base, p->first);
	rows.bad = ghs_at(base, p->bad);
	for (int o = 0; o < p->spec.nout && o < GH_PAGE_MAX_OUT; o++)
	{
		rows.values[o] = ghs_at(base, p->values[o]);
		rows.nulls[o] = ghs_at(base, p->nulls[o]);
	}
	gpuhash_service_arm_failure(se->engine, slot);
	wait_for_room(se->engine);
	st = gh_extract_pages(se->engine, &p->spec, BufferBlocks, ghs_at(base, p->pages),
						  p->npages, &rows);
	dsm_detach(seg);
	if (st != GH_OK)
		engine_failed(se, st);
	slot->result[0] = rows.nrows;
	slot->result[3] = gh_engine_peak_device_bytes(se->engine);
}

static void
run_request(GhsSlot *slot)
{
	switch (slot->op)
	{
		case GHS_OP_AGGREGATE:
			run_aggregate(slot);
			break;
		case GHS_OP_BUILD:
			run_build(slot);
			break;
		case GHS_OP_JOIN_BEGIN:
			run_join_begin(slot);
			break;
		case GHS_OP_JOIN_NEXT:
			run_join_next(slot);
			break;
		case GHS_OP_OUTER_MATCHED:
			run_outer_matched(slot);
			break;
		case GHS_OP_JOIN_AGGREGATE:
			run_join_aggregate(slot);
			break;
		case GHS_OP_FREE:
			run_free(slot);
			break;
		case GHS_OP_POOL_CREATE:
			gpuhash_pool_create(slot);
			break;
		case GHS_OP_POOL_APPEND:
			run_pool_append(slot);
			break;
		case GHS_OP_POOL_PATTERNS:
			gpuhash_pool_patterns(slot);
			break;
		case GHS_OP_POOL_FINISH:
			run_pool_finish(slot);
			break;
		case GHS_OP_EXTRACT_PAGES:
			run_extract_pages(slot);
			break;
		case GHS_OP_POOL_PAGES:
			run_pool_pages(slot);
			break;
		case GHS_OP_STAR_CREATE:
			gpuhash_star_service_create(slot);
			break;
		case GHS_OP_STAR_PAGES:
			gpuhash_star_service_pages(slot);
			break;
		case GHS_OP_STAR_RESULT:
			gpuhash_star_service_result(slot);
			break;
		default:
			elog(ERROR, "gpuhash GPU service: unknown operation %d", (int) slot->op);
	}
}

/* Run one request; whatever it raises goes back to the client. */
static void
serve(GhsSlot *slot, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	bool		cancelled;
	int			index = slot - gpuhash_service->slots;
	int32		made;
	int			client_pid;

	slot->sqlerrcode = 0;
	slot->status = GH_OK;
	slot->fell_back = false;
	gpuhash_raised_status = GH_OK;
	slot->reply = 0;
	slot->result_object = 0;
	memset(slot->result, 0, sizeof(slot->result));
	slot->result_devices = 0;
	pg_atomic_write_u32(&gpuhash_service->worker[my_index].running, (uint32) slot->op);
	current_slot = slot;
	PG_TRY();
	{
		run_request(slot);
	}
	PG_CATCH();
	{
		ErrorData  *ed;

		MemoryContextSwitchTo(cxt);
		ConditionVariableCancelSleep();
		ed = CopyErrorData();
		FlushErrorState();
		if (replies[index])
			dsm_detach(replies[index]);
		replies[index] = NULL;
		slot->reply = 0;
		/* what the failed operation freed goes back to the driver now */
		for (int i = 0; i < MAX_ENGINES; i++)
			if (engines[i].engine)
				gh_release_cached_memory(engines[i].engine);
		slot->sqlerrcode = ed->sqlerrcode ? ed->sqlerrcode : ERRCODE_INTERNAL_ERROR;
		slot->status = gpuhash_raised_status;
		slot->fell_back = false;
		strlcpy(slot->message, ed->message ? ed->message : "unknown error", sizeof(slot->message));
		strlcpy(slot->detail, ed->detail ? ed->detail : "", sizeof(slot->detail));
		strlcpy(slot->hint, ed->hint ? ed->hint : "", sizeof(slot->hint));
	}
	PG_END_TRY();
	current_slot = NULL;
	MemoryContextSwitchTo(old);
	settle_device_memory();
	pg_atomic_write_u32(&gpuhash_service->worker[my_index].running, 0);
	MemoryContextReset(cxt);
	pg_atomic_fetch_add_u64(&gpuhash_service->worker[my_index].requests, 1);

	/* read before the slot can be freed and claimed by another client */
	made = slot->sqlerrcode == 0 ? slot->result_object : 0;
	client_pid = slot->client_pid;
	SpinLockAcquire(&slot->mutex);
	cancelled = slot->cancel || slot->nowait;
	slot->state = cancelled ? GHS_FREE : GHS_DONE;
	SpinLockRelease(&slot->mutex);
	if (cancelled)
	{
		if (replies[index])
			dsm_detach(replies[index]);
		replies[index] = NULL;
		/* an object made for a client that stopped waiting: nobody knows it */
		if (made != 0)
			free_object_id(made, client_pid);
		ConditionVariableBroadcast(&gpuhash_service->slot_freed);
	}
	else
		SetLatch(&GetPGProcByNumber(slot->client_procno)->procLatch);
}

/* Drop the replies the clients have taken, and free their slots. */
static void
retire_acked(void)
{
	bool		freed = false;

	for (int i = 0; i < GHS_SLOTS; i++)
	{
		GhsSlot    *slot = &gpuhash_service->slots[i];
		bool		acked;

		if (replies[i] == NULL)
			continue;
		SpinLockAcquire(&slot->mutex);
		acked = slot->state == GHS_ACKED;
		if (acked)
			slot->state = GHS_FREE;
		SpinLockRelease(&slot->mutex);
		if (acked)
		{
			dsm_detach(replies[i]);
			replies[i] = NULL;
			freed = true;
		}
	}
	if (freed)
		ConditionVariableBroadcast(&gpuhash_service->slot_freed);
}

/* The oldest queued request this worker may run, now marked running; or NULL. */
static GhsSlot *
take_request(void)
{
	GhsSlot    *best = NULL;
	uint64		best_seq = PG_UINT64_MAX;
	bool		taken;

	for (int i = 0; i < GHS_SLOTS; i++)
	{
		GhsSlot    *slot = &gpuhash_service->slots[i];

		if (slot->state != GHS_QUEUED || (slot->worker != -1 && slot->worker != my_index))
			continue;			/* unlocked peek; checked again below */
		if (slot->seq < best_seq)
		{
			best = slot;
			best_seq = slot->seq;
		}
	}
	if (best == NULL)
		return NULL;
	SpinLockAcquire(&best->mutex);
	taken = best->state == GHS_QUEUED && (best->worker == -1 || best->worker == my_index);
	if (taken)
	{
		best->state = GHS_RUNNING;
		best->ran_by = my_index;
	}
	SpinLockRelease(&best->mutex);
	/* else another worker took it, or it was cancelled: look again */
	return taken ? best : take_request();
}

/* After a restart: end what the previous incarnation of this worker left. */
static void
clear_leftovers(void)
{
	for (int i = 0; i < GHS_SLOTS; i++)
	{
		GhsSlot    *slot = &gpuhash_service->slots[i];
		int			client = -1;

		SpinLockAcquire(&slot->mutex);
		if (slot->ran_by == my_index)
		{
			if (slot->state == GHS_ACKED || (slot->state == GHS_RUNNING && slot->cancel))
				slot->state = GHS_FREE;
			else if (slot->state == GHS_RUNNING)
			{
				slot->reply = 0;
				slot->sqlerrcode = ERRCODE_ADMIN_SHUTDOWN;
				slot->status = GH_ERR_NODEVICE;
				strlcpy(slot->message, "the gpuhash GPU service worker restarted", sizeof(slot->message));
				slot->detail[0] = slot->hint[0] = '\0';
				slot->state = GHS_DONE;
				client = slot->client_procno;
			}
		}
		SpinLockRelease(&slot->mutex);
		if (client >= 0)
			SetLatch(&GetPGProcByNumber(client)->procLatch);
	}
}

static void
service_exit(int code, Datum arg)
{
	GhsWorkerInfo *me = &gpuhash_service->worker[my_index];

	me->pid = 0;
	pg_atomic_write_u32(&me->objects, 0);
	pg_atomic_write_u32(&me->engines, 0);
	pg_atomic_write_u32(&me->running, 0);
	pg_atomic_write_u64(&me->device_bytes, 0);
	ConditionVariableBroadcast(&gpuhash_service->slot_freed);
}

/* Log how registering the shared buffers went, once it has: true then. */
static bool
report_registration(void)
{
	double		seconds;
	const char *error;
	int			st = gh_register_host_status(&seconds, &error);

	if (st == GH_REGISTER_DONE)
		ereport(LOG,
				(errmsg("gpuhash GPU service %d registered %zu MB of shared buffers in %.1f s",
						my_index, ((size_t) NBuffers * BLCKSZ) >> 20, seconds)));
	else if (st == GH_REGISTER_FAILED)
		ereport(LOG,
				(errmsg("gpuhash GPU service %d could not register the shared buffers: %s",
						my_index, error),
				 errdetail("Shipped pages go through a staging copy.")));
	return st == GH_REGISTER_DONE || st == GH_REGISTER_FAILED;
}

void
gpuhash_service_main(Datum arg)
{
	GhsWorkerInfo *me;
	MemoryContext request_cxt;
	bool		registering = false;
	bool		trim_pending = false;

	my_index = DatumGetInt32(arg);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	if (gpuhash_service == NULL || my_index < 0 || my_index >= GHS_MAX_WORKERS)
		elog(FATAL, "gpuhash GPU service: no shared state");

	me = &gpuhash_service->worker[my_index];
	clear_leftovers();
	me->procno = MyProcNumber;
	pg_write_barrier();
	{
		/* what backends planning with gpuhash.device = auto ask (service_client.c) */
		gh_device_info info[GH_MAX_DEVICES];
		int			n = gh_list_devices(info, GH_MAX_DEVICES);

		pg_write_barrier();
		gpuhash_service->ngpus = n;
		/*
		 * Pin the shared buffers for the GPU once, in the background (it
		 * takes seconds): shipped pages then cross the bus in place; until
		 * it is done they go through a staging copy.
		 */
		if (n > 0 && gpuhash_register_buffers)
			registering = gh_register_host_start(BufferBlocks,
												 (size_t) NBuffers * BLCKSZ) == GH_OK;
	}
	me->pid = MyProcPid;
	on_shmem_exit(service_exit, (Datum) 0);
	gpuhash_interrupt_hook = service_interrupt;
	gpuhash_gate_engines = visit_engines;
	request_cxt = AllocSetContextCreate(TopMemoryContext, "gpuhash service request",
										ALLOCSET_DEFAULT_SIZES);
	ereport(LOG, (errmsg("gpuhash GPU service %d started", my_index)));

	for (;;)
	{
		GhsSlot    *slot;

		ResetLatch(MyLatch);
		if (ShutdownRequestPending)
			break;
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			size_page_caches();
			settle_device_memory();
		}
		if (registering)
			registering = !report_registration();
		retire_acked();
		reap_objects();
		gpuhash_pool_reap();
		gpuhash_star_service_reap();
		settle_device_memory();
		slot = take_request();
		if (slot != NULL)
		{
			serve(slot, request_cxt);
			trim_pending = true;
			continue;
		}
		close_unused_failed_engines();
		if ((WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					   trim_pending ? 100L : 1000L, PG_WAIT_EXTENSION) & WL_TIMEOUT) &&
			trim_pending)
		{
			/*
			 * Idle: the device memory the last operations freed after their
			 * last synchronisation goes back to the driver (frees are
			 * stream-ordered; the allocator returns memory at a
			 * synchronisation), so that an idle service holds only its
			 * contexts and tables.
			 */
			for (int i = 0; i < MAX_ENGINES; i++)
				if (engines[i].engine)
					gh_release_cached_memory(engines[i].engine);
			trim_pending = false;
		}
	}
	proc_exit(0);
}
