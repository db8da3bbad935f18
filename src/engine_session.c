/*-------------------------------------------------------------------------
 *
 * engine_session.c
 *	  The backend's engine: opened on first use, kept for the backend's life,
 *	  replaced when the settings that shape it change; and the mapping of
 *	  engine failures to PostgreSQL errors.
 *
 * A CUDA context belongs to one process, so each backend (and parallel
 * worker) opens its own on first use: never in _PG_init, which may run in
 * the postmaster.  Whether a GPU is present is asked once per backend.
 *
 * Replacing the engine is the delicate part.  Plan nodes keep a pointer to
 * the engine they started with, and their tables are freed by memory-context
 * callbacks, possibly long after a setting changed: a cursor still open, a
 * query running below a function that ran SET, an outer query whose
 * subtransaction failed.  So a replaced engine is not closed at once but
 * retired, and closed only when a later transaction asks for the engine; by
 * then every plan of the transaction that retired it has been torn down
 * (holdable cursors are materialised at commit).  At backend exit the
 * engines are closed in an on_proc_exit callback, which runs after the
 * transaction has been aborted and its plans' memory released.
 *
 * The engine polls an interrupt callback between chunks and partitions; it
 * reports a pending cancel or termination as GH_ERR_CANCELLED, and the caller
 * then lets CHECK_FOR_INTERRUPTS raise the proper error.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/xact.h"
#include "commands/extension.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/memutils.h"

#include "gpuhash.h"
#include "service.h"

/* What an engine was opened with; a change of any of it needs a new one. */
typedef struct EngineShape
{
	gh_backend	backend;
	int			memory_limit_mb;
	int			memory_cap_mb;	/* gpuhash.max_memory */
	char		devices[256];
} EngineShape;

/*
 * An engine the backend keeps: the session's (gpuhash.device), and the CPU
 * backend's that nodes fall back on (gpuhash.cpu_fallback).
 */
typedef struct SessionEngine
{
	gh_engine  *engine;
	EngineShape shape;
	bool		failed;			/* the device failed: start afresh */
} SessionEngine;

/* A replaced engine and the transaction that replaced it. */
typedef struct RetiredEngine
{
	gh_engine  *engine;
	LocalTransactionId retired_in;
} RetiredEngine;

static SessionEngine session_engine;
static SessionEngine fallback_engine;
static RetiredEngine *retired = NULL;	/* in TopMemoryContext */
static int	nretired = 0;
static int	maxretired = 0;
static int	gpu_present = -1;	/* unknown until first asked */
static bool exit_callback_registered = false;

gh_status	gpuhash_raised_status = GH_OK;

static pg_noreturn void report_status(gh_status st, const char *msg, const char *doing);

bool
gpuhash_gpu_present(void)
{
	if (gpu_present < 0)
	{
		gh_device_info info[GH_MAX_DEVICES];
		int			n = gpuhash_service_gpus();

		/* the GPU service knows; asking CUDA here would open a context */
		if (n < 0)
			n = gh_list_devices(info, GH_MAX_DEVICES);
		gpu_present = n > 0;
	}
	return gpu_present > 0;
}

/* The backend gpuhash.device resolves to. */
gh_backend
gpuhash_resolved_backend(void)
{
	if (gpuhash_device == GPUHASH_DEVICE_CPU)
		return GH_BACKEND_CPU;
	if (gpuhash_device == GPUHASH_DEVICE_GPU)
		return GH_BACKEND_CUDA;
	return gpuhash_gpu_present() ? GH_BACKEND_CUDA : GH_BACKEND_CPU;
}

/*
 * Is the extension installed in this database?  The library may be loaded
 * where it is not (shared_preload_libraries loads it in every database);
 * asked once per transaction.
 */
static bool
extension_installed(void)
{
	static LocalTransactionId checked_in = InvalidLocalTransactionId;
	static bool installed = false;

	if (!IsTransactionState())
		return false;
	if (checked_in != PGPROC_LXID(MyProc))
	{
		installed = OidIsValid(get_extension_oid("gpuhash", true));
		checked_in = PGPROC_LXID(MyProc);
	}
	return installed;
}

/* auto with no GPU present plans nothing; gpu and cpu are explicit requests */
bool
gpuhash_planning_allowed(void)
{
	if (!extension_installed())
		return false;
	if (gpuhash_device == GPUHASH_DEVICE_AUTO)
		return gpuhash_gpu_present();
	return true;
}

int
gpuhash_resolved_table_kind(void)
{
	if (gpuhash_hash_table != GH_KIND_AUTO)
		return gpuhash_hash_table;
	return gh_choose_kind(NULL, 0);
}

const char *
gpuhash_device_label(void)
{
	return gpuhash_resolved_backend() == GH_BACKEND_CUDA ? "gpu" : "cpu";
}

uint32
gpuhash_device_mask(const int *ids, int n)
{
	uint32		mask = 0;

	for (int i = 0; i < n; i++)
		if (ids[i] >= 0 && ids[i] < 32)
			mask |= UINT32_C(1) << ids[i];
	return mask;
}

char *
gpuhash_devices_text(uint32 mask)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int id = 0; id < 32; id++)
		if (mask & (UINT32_C(1) << id))
			appendStringInfo(&buf, "%s%d", buf.len ? ", " : "", id);
	return buf.data;
}

/*
 * Parse gpuhash.devices: "all" (n = 0) or a comma-separated list of distinct
 * GPU numbers, spaces allowed around them.  On bad syntax returns false and,
 * if problem is given, points it at a sentence saying what is wrong.
 */
bool
gpuhash_parse_devices(const char *value, int *ids, int *n, const char **problem)
{
	const char *p = value;
	const char *dummy;

	if (problem == NULL)
		problem = &dummy;
	*n = 0;
	if (value == NULL)
		return true;
	while (isspace((unsigned char) *p))
		p++;
	if (pg_strncasecmp(p, "all", 3) == 0)
	{
		p += 3;
		while (isspace((unsigned char) *p))
			p++;
		if (*p == '\0')
			return true;
	}
	for (;;)
	{
		long		id;
		char	   *end;

		while (isspace((unsigned char) *p))
			p++;
		if (!isdigit((unsigned char) *p))
		{
			*problem = "Each entry must be a GPU number (0, 1, ...).";
			return false;
		}
		errno = 0;
		id = strtol(p, &end, 10);
		if (errno != 0 || id > 1023)
		{
			*problem = "GPU numbers must be between 0 and 1023.";
			return false;
		}
		for (int i = 0; i < *n; i++)
			if (ids[i] == id)
			{
				*problem = "A GPU may be listed only once.";
				return false;
			}
		if (*n >= GH_MAX_DEVICES)
		{
			static char too_many[64];

			snprintf(too_many, sizeof(too_many), "At most %d GPUs may be listed.", GH_MAX_DEVICES);
			*problem = too_many;
			return false;
		}
		ids[(*n)++] = (int) id;
		p = end;
		while (isspace((unsigned char) *p))
			p++;
		if (*p == '\0')
			return true;
		if (*p != ',')
		{
			*problem = "GPU numbers must be separated by commas.";
			return false;
		}
		p++;
	}
}

/*
 * The engine's interrupt callback.  Only a cancel (including statement and
 * lock timeouts) or a termination stops the engine: other interrupts, such
 * as a barrier or a memory-context dump request, would be served by
 * CHECK_FOR_INTERRUPTS without an error, and stopping for them would fail
 * the query for nothing.  Interrupts that are held off cannot be served, so
 * they do not stop it either.
 */
bool		(*gpuhash_interrupt_hook) (void) = NULL;

static bool
interrupt_pending(void *arg)
{
	if (gpuhash_interrupt_hook)
		return gpuhash_interrupt_hook();
	if (!InterruptPending || InterruptHoldoffCount != 0 || CritSectionCount != 0)
		return false;
	return ProcDiePending || (QueryCancelPending && QueryCancelHoldoffCount == 0);
}

static void
close_engines_at_exit(int code, Datum arg)
{
	for (int i = 0; i < nretired; i++)
		gh_close(retired[i].engine);
	nretired = 0;
	if (session_engine.engine)
		gh_close(session_engine.engine);
	session_engine.engine = NULL;
	if (fallback_engine.engine)
		gh_close(fallback_engine.engine);
	fallback_engine.engine = NULL;
}

/* Close the engines retired by earlier transactions. */
static void
close_retired_engines(void)
{
	int			kept = 0;

	for (int i = 0; i < nretired; i++)
	{
		if (retired[i].retired_in == PGPROC_LXID(MyProc))
			retired[kept++] = retired[i];
		else
			gh_close(retired[i].engine);
	}
	nretired = kept;
}

static void
retire_engine(SessionEngine *se)
{
	if (nretired == maxretired)
	{
		int			newmax = maxretired ? maxretired * 2 : 4;

		if (retired == NULL)
			retired = MemoryContextAlloc(TopMemoryContext, newmax * sizeof(RetiredEngine));
		else
			retired = repalloc(retired, newmax * sizeof(RetiredEngine));
		maxretired = newmax;
	}
	retired[nretired].engine = se->engine;
	retired[nretired].retired_in = PGPROC_LXID(MyProc);
	nretired++;
	se->engine = NULL;
}

static void
current_shape(EngineShape *shape)
{
	memset(shape, 0, sizeof(*shape));
	shape->backend = gpuhash_resolved_backend();
	shape->memory_limit_mb = gpuhash_memory_limit_mb;
	shape->memory_cap_mb = gpuhash_max_memory_mb;
	strlcpy(shape->devices, gpuhash_devices_setting ? gpuhash_devices_setting : "all",
			sizeof(shape->devices));
}

/*
 * Open an engine of the given backend on the devices named by devices ("all"
 * or a list of GPU numbers, as gpuhash.devices) with gpuhash.memory_limit.
 * CUDA: every listed GPU must exist, and "all" is every GPU present.  CPU:
 * as many simulated devices as the list names, numbered from 0 ("all":
 * one).  A bad list is an ERROR; a device that cannot be opened is returned
 * as a status, with the reason in err.
 */
static gh_status
try_open_engine(gh_backend backend, const char *devices, gh_engine **e, char *err, size_t errlen)
{
	gh_options	opt;
	const char *problem = NULL;

	*e = NULL;
	err[0] = '\0';
	memset(&opt, 0, sizeof(opt));
	opt.backend = backend;
	opt.memory_limit = (size_t) gpuhash_memory_limit_mb * 1024 * 1024;
	opt.memory_cap = (size_t) gpuhash_max_memory_mb * 1024 * 1024;
	opt.interrupt = interrupt_pending;
	if (!gpuhash_parse_devices(devices, opt.devices, &opt.ndevices, &problem))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid devices \"%s\"", devices),
				 errdetail("%s", problem),
				 errhint("Use 'all' or a comma-separated list of GPU numbers such as '0,1'.")));
	if (backend == GH_BACKEND_CUDA)
	{
		gh_device_info info[GH_MAX_DEVICES];
		int			nd = gh_list_devices(info, GH_MAX_DEVICES);

		if (nd == 0)
		{
			snprintf(err, errlen, "no CUDA device is available");
			return GH_ERR_NODEVICE;
		}
		for (int i = 0; i < opt.ndevices; i++)
		{
			bool		found = false;

			for (int k = 0; k < nd; k++)
				found |= info[k].id == opt.devices[i];
			if (!found)
			{
				snprintf(err, errlen, "GPU %d does not exist", opt.devices[i]);
				return GH_ERR_NODEVICE;
			}
		}
		if (opt.ndevices == 0)
		{
			for (int k = 0; k < nd; k++)
				opt.devices[k] = info[k].id;
			opt.ndevices = nd;
		}
	}
	else
	{
		/* simulated devices are numbered 0..n-1 */
		opt.ndevices = Max(opt.ndevices, 1);
		for (int i = 0; i < opt.ndevices; i++)
			opt.devices[i] = i;
	}
	return gh_open(&opt, e, err, errlen);
}

/* As try_open_engine, its failures raised. */
gh_engine *
gpuhash_open_engine(gh_backend backend, const char *devices)
{
	gh_engine  *e;
	char		err[512];
	gh_status	st = try_open_engine(backend, devices, &e, err, sizeof(err));

	if (st == GH_ERR_NODEVICE && strncmp(err, "GPU ", 4) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s", err),
				 errhint("gpuhash_devices() lists the GPUs.")));
	if (st != GH_OK)
		report_status(st, err[0] ? err : gh_status_name(st),
					  "could not start the gpuhash engine");
	return e;
}

/*
 * What opening the engine costs a plan, in planner cost units.  Opening it on
 * a GPU creates a CUDA context and sets up the device's memory pool and
 * buffers: about half a second on an H100 (first gpuhash query of a session
 * against the next ones), where PostgreSQL's cost unit is roughly 5
 * microseconds of a sequential scan.  A backend whose engine is open and
 * unchanged pays nothing more; a parallel worker is a new process and always
 * opens its own.  The CPU backend opens in microseconds.
 */
double
gpuhash_engine_open_cost(bool in_new_process)
{
	EngineShape shape;

	if (gpuhash_resolved_backend() != GH_BACKEND_CUDA)
		return 0.0;
	if (gpuhash_service_ready())
		return 0.0;			/* the GPU service holds the context */
	if (!in_new_process && session_engine.engine != NULL && !session_engine.failed)
	{
		current_shape(&shape);
		if (memcmp(&shape, &session_engine.shape, sizeof(shape)) == 0)
			return 0.0;
	}
	return GPUHASH_ENGINE_OPEN_COST;
}

/*
 * se's engine, opened (or replaced) with shape; on a failure to open it,
 * NULL with the status and the reason in err.
 */
static gh_engine *
hold_engine(SessionEngine *se, const EngineShape *shape, gh_status *st, char *err,
			size_t errlen)
{
	if (nretired > 0)
		close_retired_engines();
	if (se->engine && (se->failed || memcmp(shape, &se->shape, sizeof(*shape)) != 0))
		retire_engine(se);
	se->failed = false;
	*st = GH_OK;
	if (se->engine == NULL)
	{
		if (!exit_callback_registered)
		{
			on_proc_exit(close_engines_at_exit, (Datum) 0);
			exit_callback_registered = true;
		}
		se->shape = *shape;
		*st = try_open_engine(shape->backend, shape->devices, &se->engine, err, errlen);
		if (*st != GH_OK)
			return NULL;
	}
	return se->engine;
}

/*
 * The engines whose device memory the backend's reservation counts
 * (device_gate.c): the session's, and those retired but not closed.
 */
static void
visit_device_engines(void (*visit) (gh_engine *e, void *arg), void *arg)
{
	if (session_engine.engine)
		visit(session_engine.engine, arg);
	for (int i = 0; i < nretired; i++)
		visit(retired[i].engine, arg);
}

/*
 * The backend's engine, opened (or replaced) as the settings now say.  The
 * pointer stays valid at least until the end of the current transaction.
 * NULL if it cannot be opened (*st and err say why).
 */
gh_engine *
gpuhash_try_get_engine(gh_status *st, char *err, size_t errlen)
{
	EngineShape shape;
	gh_engine  *e;

	if (gpuhash_gate_engines == NULL)
		gpuhash_gate_engines = visit_device_engines;
	current_shape(&shape);
	e = hold_engine(&session_engine, &shape, st, err, errlen);
	/* gpuhash.debug_fail_after: armed afresh for every node that asks */
	if (e)
		gh_debug_inject_failure(e, gpuhash_debug_fail_after >= 0 ? 0 : -1,
								gpuhash_debug_fail_after, GH_ERR_DEVICE_NOMEM);
	return e;
}

gh_engine *
gpuhash_get_engine(void)
{
	gh_status	st;
	char		err[512];
	gh_engine  *e = gpuhash_try_get_engine(&st, err, sizeof(err));

	if (e == NULL)
		report_status(st, err[0] ? err : gh_status_name(st), "could not start the gpuhash engine");
	return e;
}

/*
 * The CPU backend's engine nodes fall back on when the device cannot run an
 * operation (gpuhash.cpu_fallback): one simulated device, the session's
 * memory limit.  Valid at least until the end of the transaction.
 */
gh_engine *
gpuhash_get_fallback_engine(void)
{
	EngineShape shape;
	gh_status	st;
	char		err[512];
	gh_engine  *e;

	memset(&shape, 0, sizeof(shape));
	shape.backend = GH_BACKEND_CPU;
	shape.memory_limit_mb = gpuhash_memory_limit_mb;
	shape.memory_cap_mb = gpuhash_max_memory_mb;
	strlcpy(shape.devices, "all", sizeof(shape.devices));
	e = hold_engine(&fallback_engine, &shape, &st, err, sizeof(err));
	if (e == NULL)
		report_status(st, err[0] ? err : gh_status_name(st),
					  "could not start the gpuhash engine to fall back on");
	return e;
}

/*
 * Does a failure of status st let a node go on with the CPU backend?  The
 * device's failures do: out of device memory (after partitioning), a device
 * error, no usable device (none, or the GPU service gone).  Host memory,
 * bad input, cancels and internal errors are the query's errors.
 */
bool
gpuhash_falls_back(gh_status st)
{
	return gpuhash_cpu_fallback &&
		(st == GH_ERR_DEVICE_NOMEM || st == GH_ERR_DEVICE || st == GH_ERR_NODEVICE);
}

/*
 * Raise the PostgreSQL error for an engine failure: st and its message, and
 * what was being done (for the message's start).
 */
static void
report_status(gh_status st, const char *msg, const char *doing)
{
	/* for the GPU service, which sends it back with the error */
	gpuhash_raised_status = st;
	/* (in the service, with no database, the client counts it) */
	if (st != GH_ERR_CANCELLED)
		gpuhash_stats_add(GHST_ERRORS, 1);
	switch (st)
	{
		case GH_ERR_CANCELLED:
			/* the interrupt callback saw a cancel or termination: raise it */
			CHECK_FOR_INTERRUPTS();
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to user request")));
			break;
		case GH_ERR_INVALID:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: %s", doing, msg)));
			break;
		case GH_ERR_HOST_NOMEM:
		case GH_ERR_DEVICE_NOMEM:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("gpuhash ran out of %s memory",
							st == GH_ERR_HOST_NOMEM ? "host" : "device"),
					 errdetail("%s: %s", doing, msg),
					 errhint("Lower gpuhash.memory_limit so that inputs are processed in smaller partitions, or set gpuhash.enabled = off.")));
			break;
		case GH_ERR_NODEVICE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gpuhash found no usable GPU"),
					 errdetail("%s: %s", doing, msg),
					 errhint("Set gpuhash.device = cpu to run gpuhash's CPU backend, or gpuhash.enabled = off.")));
			break;
		case GH_ERR_DEVICE:
			ereport(ERROR,
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("%s: GPU error: %s", doing, msg),
					 errhint("Check gpuhash.devices, or set gpuhash.enabled = off to run the query without gpuhash.")));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("%s: internal error: %s", doing, msg)));
	}
	pg_unreachable();
}

/* After a device fault the session engine may be unusable: replace it. */
void
gpuhash_engine_failed(gh_engine *e, gh_status st)
{
	if (e != NULL && e == session_engine.engine && (st == GH_ERR_DEVICE || st == GH_ERR_INTERNAL))
		session_engine.failed = true;
}

void
gpuhash_engine_error(gh_engine *e, gh_status st)
{
	gpuhash_engine_failed(e, st);
	report_status(st, gh_last_error(e), "gpuhash engine failed");
}

void
gpuhash_status_error(gh_status st, const char *msg)
{
	report_status(st, msg, "gpuhash engine failed");
}
