/*-------------------------------------------------------------------------
 *
 * service.h
 *	  Talking to the GPU service (service_worker.c) from a backend or a
 *	  parallel worker: one call, one request slot, a wait for the reply.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_SERVICE_H
#define GPUHASH_SERVICE_H

#include "service_shared.h"

typedef struct GhsCall
{
	/* the request */
	GhsOp		op;
	int			worker;			/* -1: any service worker */
	int32		object;
	int			kind;
	int			method;
	uint64		arg[2];
	dsm_handle	data;			/* 0: none */
	/* the GPUs the call's engine uses ("" : gpuhash.devices) */
	char		devices[32];
	/*
	 * A failure the caller falls back from (gpuhash_falls_back) is not raised
	 * but returned in failed (a gh_status) and failure.
	 */
	bool		fallback_ok;
	/* the reply */
	int			ran_by;
	dsm_segment *reply;			/* attached, mapping pinned; or NULL */
	int32		result_object;
	uint64		result[4];
	uint32		result_devices;
	int			failed;			/* gh_status; GH_OK: none */
	bool		fell_back;		/* the service went on with the CPU backend (pools) */
	char		failure[256];	/* what failed, or why the service fell back */
} GhsCall;

/* _PG_init, when preloaded: the workers; their shared memory (shmem.c) */
extern void gpuhash_service_init(void);
extern Size gpuhash_service_shmem_size(void);
extern void gpuhash_service_shmem_init(void);
/* whether this backend's gpuhash work should go to the service */
extern bool gpuhash_service_ready(void);
/* whether a DSM segment of this many bytes can be made without exhausting its space */
extern bool gpuhash_service_has_room(Size bytes);
/*
 * run call in the service and wait; the service's errors are raised here,
 * except those the caller falls back from (fallback_ok)
 */
extern void gpuhash_service_call(GhsCall *call);
/*
 * The same in two steps, so that the client works on meanwhile: start
 * queues the call, wait waits for it as gpuhash_service_call does; a call
 * started and never waited for must be abandoned.
 */
extern GhsSlot *gpuhash_service_start(GhsCall *call);
/* start, or NULL at once where every request slot is taken */
extern GhsSlot *gpuhash_service_try_start(GhsCall *call);
extern void gpuhash_service_wait(GhsCall *call, GhsSlot *slot);
extern void gpuhash_service_abandon(GhsSlot *slot);
/* the GPUs the service sees; -1: unknown */
extern int	gpuhash_service_gpus(void);
/* queue call without waiting for it (frees); false if no slot is free now */
extern bool gpuhash_service_post(GhsCall *call);

#endif							/* GPUHASH_SERVICE_H */
