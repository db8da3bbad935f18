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
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_ENGINE_OPS_H
#define GPUHASH_ENGINE_OPS_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "storage/dsm.h"

#include "engine.h"

typedef struct GhOps
{
	MemoryContext cxt;			/* holds tables, joins and results */
	bool		service;		/* send operations to the GPU service */
	bool		used_service;	/* some operation ran there */
	bool		used_backend;	/* some operation ran in the backend */
	gh_engine  *engine;			/* the backend's, once used */
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

typedef struct GhOpTable
{
	GhOps	   *ops;
	gh_table   *local;			/* in the backend, or NULL */
	int			worker;			/* in the service: its worker and number */
	int32		id;
	int			partitions;
	uint32		devices;		/* mask of device ids */
} GhOpTable;

typedef struct GhOpJoin
{
	GhOpTable  *table;
	gh_join    *local;
	int32		id;
	dsm_segment *data;			/* the service's keys, pairs and flags */
	size_t		n;
	size_t		cap;
	uint64		total;
} GhOpJoin;

extern void gpuhash_ops_init(GhOps *ops, MemoryContext cxt);
/* the backend's own engine (opened on first use), and a call to the service */
extern gh_engine *gpuhash_ops_engine(GhOps *ops);
struct GhsCall;
extern void gpuhash_ops_service_call(GhOps *ops, struct GhsCall *call);
/* a call of op (GhsOp) to worker (-1: any) on object (0: none) */
extern void gpuhash_ops_init_call(struct GhsCall *call, int op, int worker, int32 object);
extern size_t gpuhash_ops_peak_device(GhOps *ops);
/* groups in a reply segment, kept mapped until gpuhash_op_groups_free */
extern gh_groups *gpuhash_ops_groups_from_reply(GhOps *ops, dsm_segment *seg);
/* free a service object without waiting (at transaction end if no slot is free) */
extern void gpuhash_ops_post_free(int worker, int32 object);
extern const char *gpuhash_ops_where(const GhOps *ops);

extern GhOpTable *gpuhash_op_build(GhOps *ops, gh_kind kind, const uint64 *keys,
								   const uint64 *rows, size_t n);
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

extern void gpuhash_op_pool_create(GhOps *ops, int kind, GhOpPool *pool);
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
