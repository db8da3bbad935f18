/*-------------------------------------------------------------------------
 *
 * engine_ops.h
 *	  The engine operations plan nodes run, wherever they run: in the GPU
 *	  service when it is up (service_worker.c), else in the backend's own
 *	  engine (engine_session.c).  Every call raises its failures as
 *	  PostgreSQL errors; the free calls never raise.
 *
 * A node keeps one GhOps.  Tables and joins stay where they were made: a
 * join runs where its table is.  A build or an aggregation too large for
 * the shared-memory file system runs in the backend.
 *
 * CPU FALLBACK
 *
 * When the device cannot run an operation (out of device memory after
 * partitioning, a device error, no usable GPU, the GPU service gone) and
 * gpuhash.cpu_fallback is on, the operation runs again on the backend's
 * CPU engine (gpuhash_get_fallback_engine), with the same inputs, and so
 * does every later operation of the node: the node finishes on the CPU.
 * A table made on the device is built again there from its keys (kept by
 * the caller, or made again by its remake function); a join is begun again;
 * only a join that has already handed out pairs cannot move (the join node
 * fetches each join's pairs at once).  A pool, whose rows only the GPU
 * service holds, falls back in the service (service_pool.c).  What failed
 * is kept for EXPLAIN ANALYZE ("CPU Fallback") and counted in the
 * statistics.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_ENGINE_OPS_H
#define GPUHASH_ENGINE_OPS_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "portability/instr_time.h"
#include "storage/dsm.h"

#include "engine.h"

typedef struct GhOps
{
	MemoryContext cxt;			/* holds tables, joins and results */
	bool		service;		/* send operations to the GPU service */
	bool		used_service;	/* some operation ran there */
	bool		used_backend;	/* some operation ran in the backend */
	gh_engine  *engine;			/* the backend's, once used */
	gh_engine  *cpu;			/* the CPU engine fallen back on, once used */
	bool		fallback;		/* the device failed: operations run on cpu */
	char	   *fallback_reason;	/* the first failure fallen back from */
	int			nfallbacks;		/* operations that fell back (here or in the service) */
	/* statistics (stats.c), reported when cxt goes */
	int			stat_kind;		/* GhStat: the node's kind of query, or -1 */
	bool		stat_pooled;	/* it fed or finished a pool */
	uint64		stat_rows;		/* rows sent to the device */
	uint64		stat_pages;		/* pages sent to the device */
	double		stat_device_ms;	/* in device operations */
	instr_time	op_start;		/* the backend's device operation running */
	size_t		service_peak;	/* the service engine's peak device bytes */
	List	   *replies;		/* GhOpReply: groups living in reply segments */
	/* pool appends started and not yet waited for, oldest first */
	struct GhOpAppend *appends;
	int			nappends;
	/* their segments once served, kept for the next appends */
	dsm_segment **spares;
	int			nspares;
} GhOps;

/* pool appends one process keeps in flight while it reads on */
#define GH_OPS_MAX_APPENDS 2

/*
 * Makes a table's build input again, for a table that must be built anew on
 * the CPU (palloc'd in the current memory context).
 */
typedef void (*GhOpRemakeKeys) (void *arg, uint64 **keys, uint64 **rows, size_t *n);

typedef struct GhOpTable
{
	GhOps	   *ops;
	gh_table   *local;			/* in the backend, or NULL */
	bool		on_cpu;			/* local is on the CPU engine fallen back on */
	int			worker;			/* in the service: its worker and number */
	int32		id;
	int			partitions;
	bool		broadcast;		/* built whole on each of several devices */
	uint32		devices;		/* mask of device ids */
	/* the build input: the caller's arrays, or a function to make them again */
	gh_kind		kind;
	const uint64 *keys;
	const uint64 *rows;
	size_t		n;
	GhOpRemakeKeys remake;
	void	   *remake_arg;
} GhOpTable;

typedef struct GhOpJoin
{
	GhOpTable  *table;
	gh_join    *local;
	bool		on_cpu;
	int32		id;
	dsm_segment *data;			/* the service's keys, pairs and flags */
	const uint64 *keys;			/* the caller's, valid until the join is freed */
	gh_join_method method;
	size_t		n;
	size_t		cap;
	uint64		total;
	uint64		delivered;		/* pairs handed out */
} GhOpJoin;

/* kind: the node's GHST_*_QUERIES for the statistics */
extern void gpuhash_ops_init(GhOps *ops, MemoryContext cxt, int kind);
struct GhsCall;

/*
 * CPU fallback: may ops go on on the CPU after a failure of status st (msg
 * says what failed)?  If so it notes it and returns true; the engine to go
 * on with is then gpuhash_ops_cpu_engine.
 */
extern bool gpuhash_ops_fall_back(GhOps *ops, gh_status st, const char *msg);
extern gh_engine *gpuhash_ops_cpu_engine(GhOps *ops);
/*
 * The device side of an operation: the backend's engine, with room on its
 * devices for the operation (NULL if it cannot be opened, or no room came
 * in time, and ops falls back); an engine call's status (true: it ran;
 * false: ops falls back; other failures raised); a call to the service
 * (the same).
 */
extern gh_engine *gpuhash_ops_device_engine(GhOps *ops);
extern bool gpuhash_ops_device_ok(GhOps *ops, gh_status st);
extern bool gpuhash_ops_service_ok(GhOps *ops, struct GhsCall *call);
/* a failure of the CPU engine: raised */
extern void gpuhash_ops_cpu_check(GhOps *ops, gh_status st);
extern void gpuhash_ops_service_call(GhOps *ops, struct GhsCall *call);
/*
 * The same in two steps, so that calls to several service workers run at
 * once: start queues call (fallback_ok: as gpuhash_ops_service_ok, else as
 * gpuhash_ops_service_call; !wait: NULL at once where no request slot is
 * free), finish waits for it and returns what gpuhash_ops_service_ok would.
 * A call started and not finished must be abandoned
 * (gpuhash_service_abandon).  A process must not wait for a slot while it
 * holds one whose call it has not finished: the slots are shared.
 */
extern struct GhsSlot *gpuhash_ops_service_start(GhOps *ops, struct GhsCall *call,
												 bool fallback_ok, bool wait);
extern bool gpuhash_ops_service_finish(GhOps *ops, struct GhsCall *call,
									   struct GhsSlot *slot);
/* a call of op (GhsOp) to worker (-1: any) on object (0: none) */
extern void gpuhash_ops_init_call(struct GhsCall *call, int op, int worker, int32 object);
extern size_t gpuhash_ops_peak_device(GhOps *ops);
/* groups in a reply segment, kept mapped until gpuhash_op_groups_free */
extern gh_groups *gpuhash_ops_groups_from_reply(GhOps *ops, dsm_segment *seg);
/* free a service object without waiting (at transaction end if no slot is free) */
extern void gpuhash_ops_post_free(int worker, int32 object);
extern const char *gpuhash_ops_where(const GhOps *ops);
/* EXPLAIN ANALYZE: "CPU Fallback: why", if the node fell back */
struct ExplainState;
extern void gpuhash_ops_explain(const GhOps *ops, struct ExplainState *es);

/*
 * keys and rows must stay valid until the table is freed, unless the caller
 * names a function that makes them again (gpuhash_op_table_remake).
 */
extern GhOpTable *gpuhash_op_build(GhOps *ops, gh_kind kind, const uint64 *keys,
								   const uint64 *rows, size_t n);
extern void gpuhash_op_table_remake(GhOpTable *t, GhOpRemakeKeys fn, void *arg);
extern void gpuhash_op_table_free(GhOpTable *t);
/* cap: the most pairs one gpuhash_op_join_next will ask for */
extern GhOpJoin *gpuhash_op_join_begin(GhOpTable *t, const uint64 *keys, size_t n,
									   gh_join_method method, size_t cap);
extern size_t gpuhash_op_join_next(GhOpJoin *j, gh_pair *out, size_t cap);
extern void gpuhash_op_join_outer_matched(GhOpJoin *j, uint8 *flags);
extern void gpuhash_op_join_free(GhOpJoin *j);

extern gh_groups *gpuhash_op_aggregate(GhOps *ops, const uint64 *keys, size_t n,
									   const gh_aggcol *cols, int ncols);
extern gh_groups *gpuhash_op_join_aggregate(GhOpTable *t, const uint64 *keys, size_t n,
											gh_join_method method, const gh_joinagg *spec);
extern void gpuhash_op_groups_free(GhOps *ops, gh_groups *g);

/*
 * Pools (GPU service only): the rows of a parallel aggregation appended by
 * every process, aggregated once (service_pool.c).  side 1 is a fused
 * join's inner side; col_inner says which columns belong to it.  An append
 * returns once its rows are in a segment of their own and the request is
 * queued: the process reads on while the service takes them in, with at
 * most GH_OPS_MAX_APPENDS appends in flight.  Their segments are reused
 * once served: an append fills memory already mapped and faulted in.
 */
typedef struct GhOpPool
{
	int			worker;
	int32		id;
} GhOpPool;

/* false if the service cannot make one (the processes then aggregate apart) */
extern bool gpuhash_op_pool_create(GhOps *ops, int kind, GhOpPool *pool);
extern void gpuhash_op_pool_append(GhOps *ops, const GhOpPool *pool, int side, int pattern,
								   const uint64 *keys, const uint64 *jkeys, size_t n,
								   const gh_aggcol *cols, const uint8 *col_inner, int ncols);
/*
 * Wait for ops's appends to be in the pool (their errors raised here), and
 * let go of the segments kept for more.
 */
extern void gpuhash_op_pool_sync(GhOps *ops);
/*
 * Appends nobody will wait for: whoever holds them next frees them.  detach:
 * let go of their segments too (not while aborting: the resource owner has).
 */
extern void gpuhash_op_pool_abandon(GhOps *ops, bool detach);
extern void gpuhash_op_pool_patterns(GhOps *ops, const GhOpPool *pool, uint64 *mask);
extern gh_groups *gpuhash_op_pool_finish(GhOps *ops, const GhOpPool *pool, int pattern);
extern void gpuhash_op_pool_free(const GhOpPool *pool);

#endif							/* GPUHASH_ENGINE_OPS_H */
