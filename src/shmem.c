/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  gpuhash's shared memory, set up when it is preloaded
 *	  (shared_preload_libraries): the GPU service's request slots
 *	  (service_client.c), the device memory reservations (device_gate.c)
 *	  and the statistics (stats.c).
 *
 * Loaded into a session only (session_preload_libraries, LOAD, CREATE
 * EXTENSION), gpuhash has none of them: no service, operations do not wait
 * for room in device memory, and nothing is counted (gpuhash_stats is
 * empty).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "gpuhash.h"
#include "service.h"

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
gpuhash_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(add_size(gpuhash_service_shmem_size(),
									add_size(gpuhash_gate_shmem_size(),
											 gpuhash_stats_shmem_size())));
	gpuhash_stats_shmem_request();
}

static void
gpuhash_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	gpuhash_service_shmem_init();
	gpuhash_gate_shmem_init();
	gpuhash_stats_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

void
gpuhash_shmem_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = gpuhash_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = gpuhash_shmem_startup;
}
