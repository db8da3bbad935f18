/*-------------------------------------------------------------------------
 *
 * service_client.c
 *	  The client's half of the GPU service: its shared memory, set up when
 *	  gpuhash is preloaded, and one request's trip through a slot
 *	  (service_shared.h has the protocol).
 *
 * A client waits on its latch for the reply, serving interrupts: a cancel
 * raises its error at once and leaves the slot to the service worker, which
 * stops the engine at its next poll and frees the slot.  A worker that stops
 * (or restarts) while a client waits fails the client's request.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>
#include <sys/statvfs.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/dsm_impl.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "gpuhash.h"
#include "service.h"

GhsShared  *gpuhash_service = NULL;

Size
gpuhash_service_shmem_size(void)
{
	return gpuhash_service_workers > 0 ? sizeof(GhsShared) : 0;
}

/* under AddinShmemInitLock (shmem.c) */
void
gpuhash_service_shmem_init(void)
{
	bool		found;
	GhsShared  *shared;

	if (gpuhash_service_workers <= 0)
		return;
	shared = ShmemInitStruct("gpuhash GPU service", sizeof(GhsShared), &found);
	if (!found)
	{
		memset(shared, 0, sizeof(GhsShared));
		shared->nworkers = gpuhash_service_workers;
		shared->ngpus = -1;
		pg_atomic_init_u64(&shared->next_seq, 1);
		ConditionVariableInit(&shared->slot_freed);
		for (int i = 0; i < GHS_MAX_WORKERS; i++)
		{
			pg_atomic_init_u64(&shared->worker[i].requests, 0);
			pg_atomic_init_u32(&shared->worker[i].objects, 0);
			pg_atomic_init_u32(&shared->worker[i].running, 0);
			pg_atomic_init_u32(&shared->worker[i].engines, 0);
			pg_atomic_init_u64(&shared->worker[i].device_bytes, 0);
		}
		for (int i = 0; i < GHS_SLOTS; i++)
		{
			SpinLockInit(&shared->slots[i].mutex);
			shared->slots[i].state = GHS_FREE;
			shared->slots[i].ran_by = -1;
		}
	}
	gpuhash_service = shared;
}

void
gpuhash_service_init(void)
{
	if (!process_shared_preload_libraries_in_progress || gpuhash_service_workers <= 0)
		return;
	gpuhash_service_register();
}

static bool
worker_running(int w)
{
	return w >= 0 && w < gpuhash_service->nworkers && gpuhash_service->worker[w].pid != 0;
}

static bool
any_worker_running(void)
{
	for (int w = 0; gpuhash_service != NULL && w < gpuhash_service->nworkers; w++)
		if (worker_running(w))
			return true;
	return false;
}

bool
gpuhash_service_ready(void)
{
	return gpuhash_use_service && any_worker_running();
}

/*
 * POSIX shared memory lives in a file system of its own size (/dev/shm),
 * often small in containers: a request that would fill half of it runs in
 * the backend instead.
 */
bool
gpuhash_service_has_room(Size bytes)
{
	struct statvfs fs;

	if (dynamic_shared_memory_type != DSM_IMPL_POSIX)
		return true;
	if (statvfs("/dev/shm", &fs) != 0)
		return true;
	return bytes <= (Size) fs.f_bavail * fs.f_frsize / 2;
}

static void
wake_workers(int worker)
{
	for (int w = 0; w < gpuhash_service->nworkers; w++)
		if ((worker < 0 || w == worker) && worker_running(w))
			SetLatch(&GetPGProcByNumber(gpuhash_service->worker[w].procno)->procLatch);
}

/* a free slot, now claimed; NULL if none is free and wait is false */
static GhsSlot *
claim_slot(bool wait)
{
	static int	start = 0;
	GhsSlot    *got = NULL;
	bool		sleeping = false;

	for (;;)
	{
		for (int i = 0; i < GHS_SLOTS && got == NULL; i++)
		{
			GhsSlot    *slot = &gpuhash_service->slots[(start + i) % GHS_SLOTS];

			SpinLockAcquire(&slot->mutex);
			if (slot->state == GHS_FREE)
			{
				slot->state = GHS_CLAIMED;
				got = slot;
			}
			SpinLockRelease(&slot->mutex);
		}
		if (got || !wait)
			break;
		if (!sleeping)
			ConditionVariablePrepareToSleep(&gpuhash_service->slot_freed);
		sleeping = true;
		(void) ConditionVariableTimedSleep(&gpuhash_service->slot_freed, 100,
										   PG_WAIT_EXTENSION);
	}
	if (sleeping)
		ConditionVariableCancelSleep();
	if (got)
		start = (got - gpuhash_service->slots + 1) % GHS_SLOTS;
	return got;
}

static void
fill_request(GhsSlot *slot, const GhsCall *call, bool nowait)
{
	slot->cancel = false;
	slot->nowait = nowait;
	slot->worker = call->worker;
	slot->ran_by = -1;
	slot->client_procno = MyProcNumber;
	slot->client_pid = MyProcPid;
	slot->client_lxid = PGPROC_LXID(MyProc);
	slot->op = call->op;
	memset(&slot->shape, 0, sizeof(slot->shape));
	slot->shape.backend = gpuhash_resolved_backend();
	slot->shape.memory_limit_mb = gpuhash_memory_limit_mb;
	slot->shape.memory_cap_mb = gpuhash_max_memory_mb;
	strlcpy(slot->shape.devices, call->devices[0] ? call->devices :
			gpuhash_devices_setting ? gpuhash_devices_setting : "all",
			sizeof(slot->shape.devices));
	slot->debug_fail_after = gpuhash_debug_fail_after;
	slot->cpu_fallback = gpuhash_cpu_fallback;
	slot->kind = call->kind;
	slot->method = call->method;
	slot->object = call->object;
	slot->arg[0] = call->arg[0];
	slot->arg[1] = call->arg[1];
	slot->data = call->data;
	slot->reply = 0;
	slot->seq = pg_atomic_fetch_add_u64(&gpuhash_service->next_seq, 1);
	pg_write_barrier();
	SpinLockAcquire(&slot->mutex);
	slot->state = GHS_QUEUED;
	SpinLockRelease(&slot->mutex);
	wake_workers(call->worker);
}

/*
 * The client stops waiting: whoever holds the slot next frees it.  A table,
 * join or pool the service has already made for the call is freed too (the
 * service frees one made after this).
 */
static void
abandon(GhsSlot *slot)
{
	bool		freed = false;
	int			ran_by;
	int32		made = 0;

	SpinLockAcquire(&slot->mutex);
	slot->cancel = true;
	ran_by = slot->ran_by;
	if (slot->state == GHS_CLAIMED || slot->state == GHS_QUEUED)
	{
		slot->state = GHS_FREE;
		freed = true;
	}
	else if (slot->state == GHS_DONE)
	{
		if (slot->sqlerrcode == 0)
			made = slot->result_object;
		slot->state = slot->reply ? GHS_ACKED : GHS_FREE;
		freed = slot->state == GHS_FREE;
	}
	SpinLockRelease(&slot->mutex);
	if (freed)
		ConditionVariableBroadcast(&gpuhash_service->slot_freed);
	else
		wake_workers(ran_by);
	if (made != 0)
	{
		GhsCall		call;

		memset(&call, 0, sizeof(call));
		call.op = GHS_OP_FREE;
		call.worker = ran_by;
		call.object = made;
		/* if no slot is free, it goes when the transaction ends */
		(void) gpuhash_service_post(&call);
	}
}

/* Wait until slot is done: false if the service worker stopped meanwhile. */
static bool
wait_done(GhsSlot *slot)
{
	for (;;)
	{
		GhsState	state;
		int			w;

		SpinLockAcquire(&slot->mutex);
		state = slot->state;
		w = state == GHS_RUNNING ? slot->ran_by : slot->worker;
		SpinLockRelease(&slot->mutex);
		if (state == GHS_DONE)
			return true;
		if (w >= 0 ? !worker_running(w) : !any_worker_running())
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100L,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Queue call and return its slot without waiting: gpuhash_service_wait
 * ends it (or gpuhash_service_abandon, when nobody will).
 */
GhsSlot *
gpuhash_service_start(GhsCall *call)
{
	GhsSlot    *slot = claim_slot(true);

	fill_request(slot, call, false);
	return slot;
}

GhsSlot *
gpuhash_service_try_start(GhsCall *call)
{
	GhsSlot    *slot = claim_slot(false);

	if (slot != NULL)
		fill_request(slot, call, false);
	return slot;
}

/* nobody will wait for slot's call: whoever holds it next frees it */
void
gpuhash_service_abandon(GhsSlot *slot)
{
	abandon(slot);
}

void
gpuhash_service_call(GhsCall *call)
{
	gpuhash_service_wait(call, gpuhash_service_start(call));
}

/*
 * Wait for the call started in slot and take its results; the service's
 * error is raised here.  The slot is free (or left to the worker) after.
 */
void
gpuhash_service_wait(GhsCall *call, GhsSlot *slot)
{
	bool		freed;
	bool		done;
	int			sqlerrcode;
	int			status;
	dsm_handle	reply;

	call->failed = GH_OK;
	call->fell_back = false;
	call->failure[0] = '\0';
	PG_TRY();
	{
		done = wait_done(slot);
	}
	PG_CATCH();
	{
		abandon(slot);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!done)
	{
		/* the worker is gone, and the objects it held for this query */
		abandon(slot);
		if (call->fallback_ok && gpuhash_falls_back(GH_ERR_NODEVICE))
		{
			call->failed = GH_ERR_NODEVICE;
			strlcpy(call->failure, "the GPU service stopped during the query",
					sizeof(call->failure));
			return;
		}
		ereport(ERROR,
				(errcode(ERRCODE_ADMIN_SHUTDOWN),
				 errmsg("the gpuhash GPU service stopped during the query"),
				 errhint("The server log says why; set gpuhash.service = off to run gpuhash in each backend.")));
	}

	pg_read_barrier();
	call->ran_by = slot->ran_by;
	call->result_object = slot->result_object;
	memcpy(call->result, slot->result, sizeof(call->result));
	call->result_devices = slot->result_devices;
	call->reply = NULL;
	sqlerrcode = slot->sqlerrcode;
	status = slot->status;
	reply = slot->reply;
	if (sqlerrcode == 0 && slot->fell_back)
	{
		call->fell_back = true;
		strlcpy(call->failure, slot->message, sizeof(call->failure));
	}
	if (sqlerrcode == 0 && reply != 0)
	{
		call->reply = dsm_attach(reply);
		if (call->reply)
		{
			dsm_pin_mapping(call->reply);
#ifdef MADV_POPULATE_READ
			/* a large reply's pages mapped at once, not one fault a page as it is read */
			if (dsm_segment_map_length(call->reply) >= ((Size) 1 << 20))
				(void) madvise(dsm_segment_address(call->reply),
							   dsm_segment_map_length(call->reply), MADV_POPULATE_READ);
#endif
		}
	}
	if (sqlerrcode != 0)
	{
		char		message[sizeof(slot->message)];
		char		detail[sizeof(slot->detail)];
		char		hint[sizeof(slot->hint)];

		strlcpy(message, slot->message, sizeof(message));
		strlcpy(detail, slot->detail, sizeof(detail));
		strlcpy(hint, slot->hint, sizeof(hint));
		abandon(slot);
		if (sqlerrcode == ERRCODE_QUERY_CANCELED)
			CHECK_FOR_INTERRUPTS();
		if (call->fallback_ok && gpuhash_falls_back((gh_status) status))
		{
			call->failed = status;
			snprintf(call->failure, sizeof(call->failure), "%s%s%s", message,
					 detail[0] ? ": " : "", detail);
			return;
		}
		if (status != GH_OK && status != GH_ERR_CANCELLED)
			gpuhash_stats_add(GHST_ERRORS, 1);
		ereport(ERROR,
				(errcode(sqlerrcode),
				 errmsg("%s", message),
				 detail[0] ? errdetail("%s", detail) : 0,
				 hint[0] ? errhint("%s", hint) : 0));
	}
	SpinLockAcquire(&slot->mutex);
	slot->state = reply ? GHS_ACKED : GHS_FREE;
	freed = !reply;
	SpinLockRelease(&slot->mutex);
	if (freed)
		ConditionVariableBroadcast(&gpuhash_service->slot_freed);
	else
		wake_workers(call->ran_by);
	if (reply != 0 && call->reply == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("gpuhash GPU service: the reply is gone")));
}

bool
gpuhash_service_post(GhsCall *call)
{
	GhsSlot    *slot;

	if (gpuhash_service == NULL)
		return false;
	slot = claim_slot(false);
	if (slot == NULL)
		return false;
	fill_request(slot, call, true);
	return true;
}

/* what gpuhash_service() shows a worker running */
static const char *
op_name(uint32 op)
{
	switch ((GhsOp) op)
	{
		case GHS_OP_AGGREGATE:
			return "aggregate";
		case GHS_OP_BUILD:
			return "build";
		case GHS_OP_JOIN_BEGIN:
		case GHS_OP_JOIN_NEXT:
		case GHS_OP_OUTER_MATCHED:
			return "join";
		case GHS_OP_JOIN_AGGREGATE:
			return "join and aggregate";
		case GHS_OP_FREE:
			return "free";
		case GHS_OP_POOL_CREATE:
		case GHS_OP_POOL_APPEND:
		case GHS_OP_POOL_PATTERNS:
			return "pool";
		case GHS_OP_POOL_FINISH:
			return "aggregate a pool";
		case GHS_OP_EXTRACT_PAGES:
			return "read pages";
		case GHS_OP_POOL_PAGES:
			return "read pages into a pool";
		case GHS_OP_STAR_CREATE:
			return "make a star";
		case GHS_OP_STAR_PAGES:
			return "read pages through a star";
		case GHS_OP_STAR_RESULT:
			return "take a star's groups";
	}
	return "unknown";
}

/* gpuhash_service(): the service workers, one row each (none without preload) */
PG_FUNCTION_INFO_V1(gpuhash_service_status);

Datum
gpuhash_service_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (gpuhash_service == NULL)
		return (Datum) 0;
	for (int w = 0; w < gpuhash_service->nworkers; w++)
	{
		GhsWorkerInfo *info = &gpuhash_service->worker[w];
		Datum		values[11];
		bool		nulls[11] = {0};
		int			pid = info->pid;
		uint32		op = pg_atomic_read_u32(&info->running);

		values[0] = Int32GetDatum(w);
		values[1] = Int32GetDatum(pid);
		nulls[1] = pid == 0;
		values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&info->requests));
		values[3] = Int32GetDatum((int32) pg_atomic_read_u32(&info->objects));
		values[4] = Int32GetDatum((int32) pg_atomic_read_u32(&info->engines));
		values[5] = CStringGetTextDatum(op_name(op));
		nulls[5] = op == 0 || pid == 0;
		values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&info->device_bytes));
		values[7] = Int64GetDatum((int64) pg_atomic_read_u64(&info->cache_bytes));
		values[8] = Int64GetDatum((int64) pg_atomic_read_u64(&info->cache_pages));
		values[9] = Int64GetDatum((int64) pg_atomic_read_u64(&info->cache_hits));
		values[10] = Int64GetDatum((int64) pg_atomic_read_u64(&info->cache_misses));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * The GPUs the service sees, or -1 when it cannot say (not preloaded, not
 * started yet).  Asking CUDA in the backend would create a CUDA context
 * there, which the service exists to spare it.
 */
int
gpuhash_service_gpus(void)
{
	int			n;

	if (gpuhash_service == NULL)
		return -1;
	n = gpuhash_service->ngpus;
	pg_read_barrier();
	return n;
}
