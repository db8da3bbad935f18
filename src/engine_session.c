/*-------------------------------------------------------------------------
 *
 * engine_session.c
 *	  The backend's engine: opened on first use, kept for the backend's life,
 *	  reopened when the settings that shape it change; and the mapping of
 *	  engine failures to PostgreSQL errors.
 *
 * A CUDA context belongs to one process, so each backend (and parallel
 * worker) opens its own on first use: never in _PG_init, which may run in
 * the postmaster.  Whether a GPU is present is asked once per backend.
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
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"

#include "gpuhash.h"

static gh_engine *session_engine = NULL;
static bool engine_stale = false;
static int	gpu_present = -1;	/* unknown until first asked */
static bool exit_callback_registered = false;

bool
gpuhash_gpu_present(void)
{
	if (gpu_present < 0)
	{
		gh_device_info info[GH_MAX_DEVICES];

		gpu_present = gh_list_devices(info, GH_MAX_DEVICES) > 0;
	}
	return gpu_present > 0;
}

/* The backend gpuhash.device resolves to. */
static gh_backend
resolved_backend(void)
{
	if (gpuhash_device == GPUHASH_DEVICE_CPU)
		return GH_BACKEND_CPU;
	if (gpuhash_device == GPUHASH_DEVICE_GPU)
		return GH_BACKEND_CUDA;
	return gpuhash_gpu_present() ? GH_BACKEND_CUDA : GH_BACKEND_CPU;
}

/*
 * Is the extension installed in this database?  The library may be loaded
 * where it is not (session_preload_libraries outlives DROP EXTENSION); asked
 * once per transaction.
 */
static bool
extension_installed(void)
{
	static LocalTransactionId checked_in = InvalidLocalTransactionId;
	static bool installed = false;

	if (!IsTransactionState())
		return false;
	if (checked_in != MyProc->lxid)
	{
		installed = OidIsValid(get_extension_oid("gpuhash", true));
		checked_in = MyProc->lxid;
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
	if (gpuhash_table != GH_KIND_AUTO)
		return gpuhash_table;
	return gh_choose_kind(NULL, 0);
}

const char *
gpuhash_device_label(void)
{
	return resolved_backend() == GH_BACKEND_CUDA ? "gpu" : "cpu";
}

/*
 * Parse gpuhash.devices: "all" (n = 0) or a comma-separated list of GPU
 * numbers.  False on bad syntax.
 */
bool
gpuhash_parse_devices(const char *value, int *ids, int *n)
{
	const char *p = value;

	*n = 0;
	if (value == NULL || pg_strcasecmp(value, "all") == 0)
		return true;
	while (*p)
	{
		long		id;
		char	   *end;

		while (isspace((unsigned char) *p))
			p++;
		if (!isdigit((unsigned char) *p))
			return false;
		id = strtol(p, &end, 10);
		if (id < 0 || id > 1023 || *n >= GH_MAX_DEVICES)
			return false;
		for (int i = 0; i < *n; i++)
			if (ids[i] == id)
				return false;
		ids[(*n)++] = (int) id;
		p = end;
		while (isspace((unsigned char) *p))
			p++;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return false;
		else
			break;
	}
	return *n > 0;
}

void
gpuhash_settings_changed(void)
{
	engine_stale = true;
}

static bool
interrupt_pending(void *arg)
{
	return InterruptPending;
}

static void
close_session_engine(int code, Datum arg)
{
	if (session_engine)
		gh_close(session_engine);
	session_engine = NULL;
}

/* Open an engine of the given backend from the settings; errors are ERRORs. */
gh_engine *
gpuhash_open_engine(gh_backend backend)
{
	gh_options	opt;
	gh_engine  *e;
	gh_status	st;
	char		err[512];

	memset(&opt, 0, sizeof(opt));
	opt.backend = backend;
	opt.memory_limit = (size_t) gpuhash_memory_limit_mb * 1024 * 1024;
	opt.interrupt = interrupt_pending;
	if (backend == GH_BACKEND_CUDA)
	{
		if (!gpuhash_parse_devices(gpuhash_devices_setting, opt.devices, &opt.ndevices))
			opt.ndevices = 0;
		if (opt.ndevices == 0)
		{
			gh_device_info info[GH_MAX_DEVICES];
			int			nd = gh_list_devices(info, GH_MAX_DEVICES);

			for (int i = 0; i < nd; i++)
				opt.devices[i] = info[i].id;
			opt.ndevices = nd;
			if (nd == 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("gpuhash found no usable GPU"),
						 errhint("Set gpuhash.device = cpu to run gpuhash's CPU backend, or gpuhash.enabled = off.")));
		}
	}
	st = gh_open(&opt, &e, err, sizeof(err));
	if (st != GH_OK)
		ereport(ERROR,
				(errcode(st == GH_ERR_NODEVICE ? ERRCODE_FEATURE_NOT_SUPPORTED :
						 st == GH_ERR_INVALID ? ERRCODE_INVALID_PARAMETER_VALUE :
						 st == GH_ERR_HOST_NOMEM || st == GH_ERR_DEVICE_NOMEM ?
						 ERRCODE_OUT_OF_MEMORY : ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("could not start the gpuhash engine: %s", err),
				 errhint("Check gpuhash.devices, or set gpuhash.device = cpu.")));
	return e;
}

gh_engine *
gpuhash_get_engine(void)
{
	if (session_engine && engine_stale)
	{
		gh_close(session_engine);
		session_engine = NULL;
	}
	engine_stale = false;
	if (session_engine == NULL)
	{
		if (!exit_callback_registered)
		{
			before_shmem_exit(close_session_engine, (Datum) 0);
			exit_callback_registered = true;
		}
		session_engine = gpuhash_open_engine(resolved_backend());
	}
	return session_engine;
}

void
gpuhash_engine_error(gh_engine *e, gh_status st)
{
	const char *msg = gh_last_error(e);

	switch (st)
	{
		case GH_ERR_CANCELLED:
			CHECK_FOR_INTERRUPTS();
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to user request")));
			break;
		case GH_ERR_INVALID:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("gpuhash: %s", msg)));
			break;
		case GH_ERR_HOST_NOMEM:
		case GH_ERR_DEVICE_NOMEM:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("gpuhash ran out of %s memory", st == GH_ERR_HOST_NOMEM ? "host" : "device"),
					 errdetail("%s", msg),
					 errhint("Lower gpuhash.memory_limit so inputs are processed in smaller partitions, or set gpuhash.enabled = off.")));
			break;
		case GH_ERR_NODEVICE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gpuhash found no usable GPU"),
					 errdetail("%s", msg),
					 errhint("Set gpuhash.device = cpu to run gpuhash's CPU backend, or gpuhash.enabled = off.")));
			break;
		default:
			/* the device may be in a bad state: start afresh next time */
			engine_stale = true;
			ereport(ERROR,
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("gpuhash engine failed: %s", msg),
					 errhint("Set gpuhash.enabled = off to run the query without gpuhash.")));
	}
	pg_unreachable();
}
