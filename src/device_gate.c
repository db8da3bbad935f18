/*-------------------------------------------------------------------------
 *
 * device_gate.c
 *	  Waiting for room in device memory: the engine operations of every
 *	  process (backends running the engine themselves, the GPU service's
 *	  workers) take turns so that together they do not ask the devices for
 *	  more memory than they have, instead of failing for want of it.
 *
 * INTERFACE ROUTINES
 *		gpuhash_gate_enter		before a device operation: wait for room
 *		gpuhash_gate_settle		after it, or a free: what the process holds now
 *		gpuhash_gate_raise		the error of an operation that found no room
 *
 * Each process has a reservation on every device, in shared memory: while
 * one of its engines runs an operation, the engine's memory limit (the most
 * one operation may take on a device) plus what its engines hold; between
 * operations what they hold (tables kept for a join, a GPU service's pools).
 * An operation waits until the other processes' reservations and its own
 * fit the device (90% of its memory), at most gpuhash.memory_wait; a process
 * alone on a device never waits.  Finding no room in time fails the
 * operation as running out of device memory does, so that the node falls
 * back on the CPU (gpuhash.cpu_fallback) or, with that off, raises the
 * error.  Waiting is cancellable.
 *
 * What other programs hold on the GPU, and the CUDA contexts themselves,
 * are outside the reservations; so is memory an engine takes beyond its
 * accounting.  The reservations live in shared memory: where gpuhash is
 * not preloaded, operations do not wait.  The CPU backend has no device
 * memory to share, except in tests (gpuhash.debug_device_memory gives its
 * simulated devices a size).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "gpuhash.h"

/* devices with ids below this are reserved for; others never wait */
#define GATE_DEVICES 64

/* reservations by backend (gh_backend: CPU, CUDA) and device id */
typedef struct GateShared
{
	slock_t		mutex;
	ConditionVariable room;		/* a reservation shrank */
	uint64		capacity[GATE_DEVICES];	/* CUDA devices: 0 until known */
	uint64		reserved[2][GATE_DEVICES];
} GateShared;

static GateShared *gate = NULL;

/* this process's part of gate->reserved */
static uint64 mine[2][GATE_DEVICES];
static bool reserving = false;	/* mine may be nonzero */
static bool capacity_known = false;

void		(*gpuhash_gate_engines) (void (*visit) (gh_engine *e, void *arg), void *arg) = NULL;

Size
gpuhash_gate_shmem_size(void)
{
	return sizeof(GateShared);
}

/* under AddinShmemInitLock (shmem.c) */
void
gpuhash_gate_shmem_init(void)
{
	bool		found;

	gate = ShmemInitStruct("gpuhash device memory reservations", sizeof(GateShared), &found);
	if (!found)
	{
		memset(gate, 0, sizeof(GateShared));
		SpinLockInit(&gate->mutex);
		ConditionVariableInit(&gate->room);
	}
}

/* Make this process's reservation want (under the mutex). */
static void
set_mine(uint64 want[2][GATE_DEVICES])
{
	for (int k = 0; k < 2; k++)
		for (int d = 0; d < GATE_DEVICES; d++)
		{
			gate->reserved[k][d] += want[k][d] - mine[k][d];
			mine[k][d] = want[k][d];
		}
}

static void
release_at_exit(int code, Datum arg)
{
	uint64		none[2][GATE_DEVICES] = {{0}};

	SpinLockAcquire(&gate->mutex);
	set_mine(none);
	SpinLockRelease(&gate->mutex);
	ConditionVariableBroadcast(&gate->room);
}

static void
settle_at_xact_end(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
		gpuhash_gate_settle();
}

/* add what engine e holds on its devices to held (arg) */
static void
add_held(gh_engine *e, void *arg)
{
	uint64		(*held)[GATE_DEVICES] = arg;
	int			ids[GH_MAX_DEVICES];
	int			n = gh_engine_devices(e, ids, GH_MAX_DEVICES);
	int			k = gh_engine_backend(e) == GH_BACKEND_CUDA ? 1 : 0;
	uint64		per = (uint64) gh_engine_device_bytes(e) / (uint64) Max(n, 1);

	for (int i = 0; i < n; i++)
		if (ids[i] >= 0 && ids[i] < GATE_DEVICES)
			held[k][ids[i]] += per;
}

static void
held_now(uint64 held[2][GATE_DEVICES])
{
	memset(held, 0, sizeof(uint64) * 2 * GATE_DEVICES);
	if (gpuhash_gate_engines)
		gpuhash_gate_engines(add_held, held);
}

/* device id's room for backend k: 0 for no limit */
static uint64
capacity_of(int k, int id)
{
	if (k == 0)
		return (uint64) gpuhash_debug_device_memory_mb << 20;
	return gate->capacity[id];
}

/* learn the GPUs' sizes (once per process: the engine has CUDA running) */
static void
learn_capacity(void)
{
	gh_device_info info[GH_MAX_DEVICES];
	int			n;

	if (capacity_known)
		return;
	n = gh_list_devices(info, GH_MAX_DEVICES);
	SpinLockAcquire(&gate->mutex);
	for (int i = 0; i < n; i++)
		if (info[i].id >= 0 && info[i].id < GATE_DEVICES && gate->capacity[info[i].id] == 0)
			gate->capacity[info[i].id] = (uint64) info[i].mem_total / 10 * 9;
	SpinLockRelease(&gate->mutex);
	capacity_known = true;
}

bool
gpuhash_gate_enter(gh_engine *e, bool (*stop) (void), char *err, size_t errlen)
{
	int			k = gh_engine_backend(e) == GH_BACKEND_CUDA ? 1 : 0;
	int			ids[GH_MAX_DEVICES];
	int			n = gh_engine_devices(e, ids, GH_MAX_DEVICES);
	uint64		limit = (uint64) gh_engine_memory_limit(e);
	uint64		want[2][GATE_DEVICES];
	instr_time	start;
	bool		sleeping = false;

	if (gate == NULL || (k == 0 && gpuhash_debug_device_memory_mb == 0))
		return true;
	if (!reserving)
	{
		static bool callbacks = false;

		if (!callbacks)
		{
			on_shmem_exit(release_at_exit, (Datum) 0);
			RegisterXactCallback(settle_at_xact_end, NULL);
			callbacks = true;
		}
		reserving = true;
	}
	if (k == 1)
		learn_capacity();
	held_now(want);
	for (int i = 0; i < n; i++)
		if (ids[i] >= 0 && ids[i] < GATE_DEVICES)
			want[k][ids[i]] += limit;
	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		bool		fits = true;
		uint64		others = 0;
		uint64		cap = 0;

		SpinLockAcquire(&gate->mutex);
		for (int i = 0; i < n && fits; i++)
		{
			int			id = ids[i];

			if (id < 0 || id >= GATE_DEVICES || (cap = capacity_of(k, id)) == 0)
				continue;
			others = gate->reserved[k][id] - mine[k][id];
			fits = others == 0 || others + want[k][id] <= cap;
		}
		if (fits)
			set_mine(want);
		SpinLockRelease(&gate->mutex);
		if (fits)
			break;
		if (gpuhash_elapsed_ms(start) >= (double) gpuhash_memory_wait_ms)
		{
			if (sleeping)
				ConditionVariableCancelSleep();
			snprintf(err, errlen,
					 "no room on the device within gpuhash.memory_wait (%d ms): an operation of up to "
					 UINT64_FORMAT " MB, " UINT64_FORMAT " MB of " UINT64_FORMAT " MB reserved by other operations",
					 gpuhash_memory_wait_ms, limit >> 20, others >> 20, cap >> 20);
			return false;
		}
		if (!sleeping)
			ConditionVariablePrepareToSleep(&gate->room);
		sleeping = true;
		(void) ConditionVariableTimedSleep(&gate->room, 100, PG_WAIT_EXTENSION);
		if (stop && stop())
		{
			ConditionVariableCancelSleep();
			snprintf(err, errlen, "the wait for room on the device was cancelled");
			return false;
		}
	}
	if (sleeping)
		ConditionVariableCancelSleep();
	return true;
}

void
gpuhash_gate_settle(void)
{
	uint64		want[2][GATE_DEVICES];
	bool		shrank = false;

	if (gate == NULL || !reserving)
		return;
	held_now(want);
	SpinLockAcquire(&gate->mutex);
	for (int k = 0; k < 2 && !shrank; k++)
		for (int d = 0; d < GATE_DEVICES && !shrank; d++)
			shrank = want[k][d] < mine[k][d];
	set_mine(want);
	SpinLockRelease(&gate->mutex);
	if (shrank)
		ConditionVariableBroadcast(&gate->room);
}

void
gpuhash_gate_raise(const char *err)
{
	gpuhash_raised_status = GH_ERR_DEVICE_NOMEM;
	gpuhash_stats_add(GHST_ERRORS, 1);
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("gpuhash ran out of device memory"),
			 errdetail("%s.", err),
			 errhint("Raise gpuhash.memory_wait, lower gpuhash.memory_limit, or set gpuhash.cpu_fallback = on.")));
}
