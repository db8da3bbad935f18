/*-------------------------------------------------------------------------
 *
 * gpuhash.h
 *	  Declarations shared by gpuhash's PostgreSQL-facing files: settings,
 *	  planner costs, the backend's engine, error reporting.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_H
#define GPUHASH_H

#include "postgres.h"

#include "pg_compat.h"

#include "nodes/pathnodes.h"
#include "portability/instr_time.h"

#include "engine.h"

/* gpuhash.device */
typedef enum GpuHashDevice
{
	GPUHASH_DEVICE_AUTO,
	GPUHASH_DEVICE_GPU,
	GPUHASH_DEVICE_CPU
} GpuHashDevice;

/* settings (gpuhash.c) */
extern bool gpuhash_enabled;
extern bool gpuhash_enable_join;
extern bool gpuhash_enable_groupby;
extern bool gpuhash_enable_fusion;
extern bool gpuhash_enable_star;
extern bool gpuhash_unique_key_estimates;
extern int	gpuhash_device;
extern int	gpuhash_hash_table;
extern char *gpuhash_devices_setting;
extern int	gpuhash_min_rows;
extern int	gpuhash_memory_limit_mb;
extern int	gpuhash_chunk_rows;
extern bool gpuhash_force;
extern bool gpuhash_cpu_fallback;
extern int	gpuhash_max_memory_mb;
extern int	gpuhash_memory_wait_ms;
extern int	gpuhash_debug_device_memory_mb;
extern int	gpuhash_debug_fail_after;
extern int	gpuhash_service_workers;
extern int	gpuhash_page_cache_mb;
extern bool gpuhash_use_service;
extern bool gpuhash_enable_pool;
extern bool gpuhash_read_pages;
extern bool gpuhash_ship_pages;
extern bool gpuhash_enable_pool_pages;
extern bool gpuhash_register_buffers;
extern bool gpuhash_debug_reread_pages;
extern int	gpuhash_debug_dim_pages_min;
extern int	gpuhash_debug_snowflakes;
extern int	gpuhash_debug_pool_batch;
extern bool gpuhash_debug_pool_relay;
extern int	gpuhash_debug_star_key_bits;
extern bool gpuhash_debug_star_compile_fails;

/* gpuhash.debug_snowflakes: how a star takes its snowflakes (star_path.c) */
#define GPUHASH_SNOWFLAKES_AUTO		0
#define GPUHASH_SNOWFLAKES_WHOLE	1
#define GPUHASH_SNOWFLAKES_SPLIT	2

/*
 * gpuhash.force scales our paths' costs by this: far below any plan without
 * gpuhash, so the planner takes our nodes wherever they apply, while our own
 * alternatives (join orders, inner sides) keep their relative costs.
 */
#define GPUHASH_FORCED_COST_SCALE 1e-6

static inline void
gpuhash_scale_forced_cost(Path *path)
{
	path->startup_cost *= GPUHASH_FORCED_COST_SCALE;
	path->total_cost *= GPUHASH_FORCED_COST_SCALE;
}

/* Milliseconds since start (EXPLAIN ANALYZE's engine and read times). */
static inline double
gpuhash_elapsed_ms(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* expr_errors.c: may evaluating expr raise an error? */
extern bool gpuhash_expr_may_fail(Node *expr);
/* engine_session.c */
extern bool gpuhash_gpu_present(void);
extern bool gpuhash_planning_allowed(void);
extern gh_backend gpuhash_resolved_backend(void);
/* replaces the engine's interrupt poll (the GPU service) */
extern bool (*gpuhash_interrupt_hook) (void);
extern int	gpuhash_resolved_table_kind(void);
extern const char *gpuhash_device_label(void);
/* device ids as a bit set, and as EXPLAIN shows them ("0, 1") */
extern uint32 gpuhash_device_mask(const int *ids, int n);
extern char *gpuhash_devices_text(uint32 mask);
/*
 * the backend's engine, valid at least until the end of the transaction;
 * the try form returns NULL (with the status and reason) where it cannot be
 * opened, the other raises that
 */
extern gh_engine *gpuhash_get_engine(void);
extern gh_engine *gpuhash_try_get_engine(gh_status *st, char *err, size_t errlen);
/* the CPU backend's engine that nodes fall back on (gpuhash.cpu_fallback) */
extern gh_engine *gpuhash_get_fallback_engine(void);
/* may a failure of this status fall back on the CPU backend? */
extern bool gpuhash_falls_back(gh_status st);
/* the status of the engine failure raised last (the GPU service sends it back) */
extern gh_status gpuhash_raised_status;
/* planner cost of opening the engine (engine_session.c) */
#define GPUHASH_ENGINE_OPEN_COST 100000.0
extern double gpuhash_engine_open_cost(bool in_new_process);
/* a new engine, the caller's to gh_close */
extern gh_engine *gpuhash_open_engine(gh_backend backend, const char *devices);
extern pg_noreturn void gpuhash_engine_error(gh_engine *e, gh_status st);
/* a failure of status st, which msg describes, raised as an engine's is */
extern pg_noreturn void gpuhash_status_error(gh_status st, const char *msg);
/* note a failure of e that is not raised (a fallback): a device fault retires it */
extern void gpuhash_engine_failed(gh_engine *e, gh_status st);
extern bool gpuhash_parse_devices(const char *value, int *ids, int *n,
								  const char **problem);

/* shmem.c: shared memory, when preloaded */
extern void gpuhash_shmem_init(void);

/* device_gate.c: waiting for room in device memory */
extern Size gpuhash_gate_shmem_size(void);
extern void gpuhash_gate_shmem_init(void);
/* the process's engines, whose held device memory its reservation counts */
extern void (*gpuhash_gate_engines) (void (*visit) (gh_engine *e, void *arg), void *arg);
/*
 * Before an operation of e: wait for room on its devices; false (and why,
 * in err) if none came within gpuhash.memory_wait or stop() said to stop.
 * stop NULL: interrupts are served while waiting (a cancel raises).
 */
extern bool gpuhash_gate_enter(gh_engine *e, bool (*stop) (void), char *err, size_t errlen);
/* after an operation or a free: the reservation is what the engines hold */
extern void gpuhash_gate_settle(void);
extern pg_noreturn void gpuhash_gate_raise(const char *err);

/* stats.c: the gpuhash_stats view's counters, per database */
typedef enum GhStat
{
	GHST_JOIN_QUERIES,			/* queries that used a node of each kind */
	GHST_GROUPBY_QUERIES,
	GHST_FUSED_QUERIES,
	GHST_POOLED_QUERIES,
	GHST_STAR_QUERIES,
	GHST_ROWS,					/* rows (keys) sent to the device */
	GHST_PAGES,					/* heap pages sent to the device */
	GHST_GPU_TIME_US,			/* time in device operations */
	GHST_FALLBACKS,				/* plan nodes that went on with the CPU backend */
	GHST_ERRORS,				/* engine failures raised to queries */
	GHST_NCOUNTERS
} GhStat;
extern Size gpuhash_stats_shmem_size(void);
extern void gpuhash_stats_shmem_request(void);
extern void gpuhash_stats_shmem_init(void);
extern void gpuhash_stats_add(GhStat counter, uint64 value);
/* a query used a node of kind (a GHST_*_QUERIES): counted once a statement */
extern void gpuhash_stats_query(GhStat kind);

/* qual_order.c: RestrictInfos in the order PostgreSQL's plan evaluates them */
extern List *gpuhash_order_quals(PlannerInfo *root, List *quals);

/* join_path.c, agg_path.c, agg_fuse.c */
extern void gpuhash_join_init(void);
extern void gpuhash_agg_init(void);
extern void gpuhash_fuse_init(void);
extern void gpuhash_join_estimates_init(void);

#endif							/* GPUHASH_H */
