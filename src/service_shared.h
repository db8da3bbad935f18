/*-------------------------------------------------------------------------
 *
 * service_shared.h
 *	  What the GPU service processes and their clients share: the request
 *	  slots in shared memory and the layout of the segments that carry a
 *	  request's arrays and a reply's groups.
 *
 * A slot goes
 *
 *	FREE -> CLAIMED -> QUEUED -> RUNNING -> DONE -> ACKED -> FREE
 *
 * as a client fills it in and queues it, a service worker runs it and
 * replies, and the client takes the reply.  Tables, joins and pools stay in
 * the worker that made them ("objects").  The protocol, cancellation and
 * lifetimes: src/README, "The GPU service".
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_SERVICE_SHARED_H
#define GPUHASH_SERVICE_SHARED_H

#include "postgres.h"

#include "pg_compat.h"

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/spin.h"

#include "engine.h"

#define GHS_MAX_WORKERS 16
#define GHS_SLOTS 256

typedef enum GhsState
{
	GHS_FREE = 0,
	GHS_CLAIMED,				/* a client is filling it in */
	GHS_QUEUED,
	GHS_RUNNING,
	GHS_DONE,
	GHS_ACKED					/* the client has the reply */
} GhsState;

typedef enum GhsOp
{
	GHS_OP_AGGREGATE = 1,		/* data: GhsData (keys, columns) -> groups */
	GHS_OP_BUILD,				/* data: GhsData (keys, rows) -> object,
								 * result[0]: partitions, [1]: broadcast */
	GHS_OP_JOIN_BEGIN,			/* object: table; data: GhsData (keys, pairs
								 * and flags areas), kept -> object, total */
	GHS_OP_JOIN_NEXT,			/* object: join; arg[0]: cap -> pairs written */
	GHS_OP_OUTER_MATCHED,		/* object: join -> flags written */
	GHS_OP_JOIN_AGGREGATE,		/* object: table; data: GhsData -> groups */
	GHS_OP_FREE,				/* object: table, join or pool; nobody waits */
	/*
	 * A pool: the rows of one parallel aggregation, appended by every
	 * process of the query, aggregated once by the last (agg_pool.c).
	 */
	GHS_OP_POOL_CREATE,			/* kind: a fused join's table kind, or -1 */
	GHS_OP_POOL_APPEND,			/* object: pool; arg[0]: side (1: a fused
								 * join's inner), arg[1]: NULL pattern; data:
								 * GhsData (keys, jkeys, columns) */
	GHS_OP_POOL_PATTERNS,		/* object: pool -> result[0..3]: a bit per
								 * NULL pattern appended */
	GHS_OP_POOL_FINISH,			/* object: pool; arg[1]: pattern -> groups */
	GHS_OP_EXTRACT_PAGES,		/* data: GhsPages, rows written into it ->
								 * result[0]: rows */
	GHS_OP_POOL_PAGES,			/* object: pool (not a fused join's); data:
								 * GhsPoolPages, its dropped pages marked ->
								 * result[0]: rows appended */
	/* A star (star_ops.c): its program, dimensions and groups. */
	GHS_OP_STAR_CREATE,			/* data: GhsStarCreate -> object */
	GHS_OP_STAR_PAGES,			/* object: star; data: GhsStarPages, each page's
								 * status written -> result[0]: rows kept so far */
	GHS_OP_STAR_RESULT			/* object: star -> groups */
} GhsOp;

/* What shapes an engine: the client's settings, sent with every request. */
typedef struct GhsShape
{
	int			backend;		/* gh_backend */
	int			memory_limit_mb;
	int			memory_cap_mb;	/* gpuhash.max_memory */
	char		devices[64];
	bool		fallback;		/* a pool's CPU engine to fall back on (service_pool.c) */
} GhsShape;

typedef struct GhsSlot
{
	slock_t		mutex;
	GhsState	state;
	bool		cancel;			/* the client stopped waiting */
	bool		nowait;			/* nobody waits: free it when done */
	int			worker;			/* service worker that must run it; -1: any */
	int			ran_by;			/* the worker that took it */
	uint64		seq;			/* queue order */
	int			client_procno;
	int			client_pid;
	LocalTransactionId client_lxid;

	/* the request */
	GhsOp		op;
	GhsShape	shape;
	int			debug_fail_after;
	bool		cpu_fallback;	/* the client's gpuhash.cpu_fallback */
	int			kind;			/* gh_kind */
	int			method;			/* gh_join_method */
	int32		object;
	uint64		arg[2];
	dsm_handle	data;			/* the client's segment, or 0 */

	/* the reply */
	dsm_handle	reply;			/* the worker's segment, or 0 */
	int32		result_object;
	uint64		result[4];
	uint32		result_devices;	/* device mask */
	int			sqlerrcode;		/* 0: success */
	int			status;			/* the engine failure's gh_status, or GH_OK */
	bool		fell_back;		/* success, on the CPU backend: message says why */
	char		message[256];
	char		detail[256];
	char		hint[256];
} GhsSlot;

typedef struct GhsWorkerInfo
{
	int			pid;			/* 0: not running */
	int			procno;
	pg_atomic_uint64 requests;	/* operations served */
	pg_atomic_uint32 objects;	/* tables and joins held */
	pg_atomic_uint32 running;	/* the operation running now (GhsOp), 0: idle */
	pg_atomic_uint32 engines;	/* engines open */
	pg_atomic_uint64 device_bytes;	/* device memory they hold */
	/* their page caches (gh_page_cache_info, summed) */
	pg_atomic_uint64 cache_bytes;
	pg_atomic_uint64 cache_pages;
	pg_atomic_uint64 cache_hits;
	pg_atomic_uint64 cache_misses;
} GhsWorkerInfo;

typedef struct GhsShared
{
	int			nworkers;		/* gpuhash.service_workers at start */
	int			ngpus;			/* GPUs a service worker saw at its start; -1: not yet */
	pg_atomic_uint64 next_seq;
	ConditionVariable slot_freed;
	GhsWorkerInfo worker[GHS_MAX_WORKERS];
	GhsSlot		slots[GHS_SLOTS];
} GhsShared;

extern GhsShared *gpuhash_service;	/* NULL unless preloaded */

/*
 * A request's data segment: this header, then the arrays at the offsets it
 * gives (0: absent), each 16-byte aligned.
 */
typedef struct GhsDataCol
{
	int			type;			/* gh_valtype */
	int			ops;			/* GH_AGG_* */
	bool		inner;			/* a join aggregate's inner-side column */
	Size		values;
	Size		nulls;
} GhsDataCol;

typedef struct GhsData
{
	uint64		n;				/* keys */
	uint64		inner_rows;		/* join aggregate: inner side's rows */
	uint64		cap;			/* join: pairs area entries */
	Size		keys;
	Size		rows;
	Size		jkeys;			/* pool append: a fused join's join keys */
	Size		outer_keys;		/* join aggregate: group keys */
	Size		inner_keys;
	Size		pairs;			/* join: pairs area */
	Size		flags;			/* join: outer matched flags, n bytes */
	int			ncols;
	GhsDataCol	cols[FLEXIBLE_ARRAY_MEMBER];
} GhsData;

/*
 * A page extraction's segment (page_ops.c): the pages are shared buffers
 * (buffer numbers less one) the client keeps pinned; the service writes the
 * rows into the arrays at the offsets given.
 */
typedef struct GhsPages
{
	gh_pagespec spec;
	uint64		npages;
	uint64		cap;			/* rows each column array holds */
	Size		pages;			/* uint32 buffer ids */
	Size		first;			/* uint32, npages + 1 */
	Size		bad;
	Size		values[GH_PAGE_MAX_OUT];
	Size		nulls[GH_PAGE_MAX_OUT];
} GhsPages;

/*
 * Heap pages read into a pool (service_pool.c): shared buffers the client
 * keeps pinned, each with its LSN when the client saw it all-visible.  The
 * service reads and encodes their rows on the GPU (gh_pages_read), checks
 * every page under its content lock as the client would (still
 * all-visible, same LSN), appends the rows of the pages that pass, and
 * marks the others in dropped for the client to read itself.
 */
typedef struct GhsPoolPages
{
	gh_pagespec spec;
	gh_pageenc	enc;			/* a fused join's: with its join keys */
	int			side;			/* 0, or 1: a fused join's inner side */
	bool		keyed;			/* grouping keys kept (a fused side may have none) */
	int8		val_col[GH_PAGE_MAX_VALS];	/* the pool column of each value */
	int			ncols;
	GhsDataCol	cols[GH_PAGE_MAX_VALS]; /* the pool's columns (no arrays) */
	uint64		npages;
	Size		pages;			/* uint32 buffer ids */
	Size		lsns;			/* uint64 */
	Size		dropped;		/* uint8: in, 1 to drop the page anyway; out, 1 if dropped */
} GhsPoolPages;

/*
 * A share of a dimension's rows that one process of a parallel query read
 * and published in a segment of its own (star_dim_share.c): the segment,
 * and the share's arrays at the offsets given there (0: none).
 */
typedef struct GhsStarPart
{
	dsm_handle	handle;
	uint64		n;
	Size		keys;
	Size		lo[GH_PROG_MAX_DIMCOLS];
	Size		hi[GH_PROG_MAX_DIMCOLS];
	Size		nulls[GH_PROG_MAX_DIMCOLS];
	Size		dscale[GH_PROG_MAX_DIMCOLS];
} GhsStarPart;

/*
 * A star's creation (star_ops.c): its program and page description, and
 * each dimension's keys and columns at the offsets given, or (nparts > 0)
 * the shares of them that the processes published, one after another.
 */
typedef struct GhsStarDim
{
	uint64		n;
	int			ncols;
	int			nparts;
	Size		parts;			/* GhsStarPart[nparts] */
	Size		keys;
	Size		lo[GH_PROG_MAX_DIMCOLS];
	Size		hi[GH_PROG_MAX_DIMCOLS];
	Size		nulls[GH_PROG_MAX_DIMCOLS];
	Size		dscale[GH_PROG_MAX_DIMCOLS];
} GhsStarDim;

typedef struct GhsStarCreate
{
	gh_prog		prog;
	gh_pagespec spec;
	int			ndims;
	GhsStarDim	dims[GH_PROG_MAX_DIMS];
} GhsStarCreate;

/*
 * Pages through a star: shared buffers the client keeps pinned, each with
 * the LSN it saw it all-visible with (checked by the service as a pool's
 * pages are), pages it gives only by name (GH_PAGE_CACHED_ONLY: from the
 * page cache or not at all), or pages the client made itself of the rows it
 * read (synthetic, in the segment after the header, taken whole).
 * status[p] comes back a STAR_PAGE_* (star_ops.h).
 */
typedef struct GhsStarPages
{
	uint64		npages;
	bool		synthetic;
	Size		pages;			/* uint32 buffer ids, or the pages themselves */
	Size		lsns;			/* uint64 */
	Size		status;			/* uint8 */
	/* the pages' names for the page cache (star_ops.h): 0, none */
	Size		blocks;			/* uint32 block numbers */
	Size		versions;		/* uint64: the versions they are named by */
	uint64		name_rel;
	uint64		name_spc;
} GhsStarPages;

/* A reply of groups: this header, then the arrays (0: absent). */
typedef struct GhsGroupsCol
{
	Size		nonnull;
	Size		sum_lo;
	Size		sum_hi;
	Size		fsum;
	Size		imin;
	Size		imax;
	Size		fmin;
	Size		fmax;
} GhsGroupsCol;

typedef struct GhsGroupsReply
{
	uint64		ngroups;
	uint64		input_rows;
	int			partitions;
	int			ndevices;
	int			devices[GH_MAX_DEVICES];
	Size		keys;
	Size		rows;
	int			ncols;
	GhsGroupsCol cols[FLEXIBLE_ARRAY_MEMBER];
} GhsGroupsReply;

#define GHS_ALIGN(x) TYPEALIGN(16, (x))

/* Room for an array of bytes at the end of a segment of *size bytes: its offset (0: absent). */
static inline Size
ghs_reserve(Size *size, Size bytes, bool present)
{
	Size		off;

	if (!present)
		return 0;
	off = GHS_ALIGN(*size);
	*size = off + Max(bytes, 1);
	return off;
}

/* the address of the array at offset off of a mapped segment; NULL for 0 */
static inline void *
ghs_at(void *base, Size off)
{
	return off ? (char *) base + off : NULL;
}

/* service_worker.c */
extern void gpuhash_service_register(void);
extern PGDLLEXPORT void gpuhash_service_main(Datum arg);
/* inside a service worker */
extern int32 gpuhash_service_new_id(void);
extern void gpuhash_service_count_object(int delta);
extern bool gpuhash_service_owner_gone(int procno, int pid, LocalTransactionId lxid);
extern void gpuhash_service_reply_groups(GhsSlot *slot, gh_groups *g, bool engine_made);
extern pg_noreturn void gpuhash_service_engine_failed(gh_engine *e, gh_status st);
extern gh_engine *gpuhash_service_hold_engine(const GhsShape *shape);
extern bool gpuhash_service_room(gh_engine *e, char *err, size_t errlen);
/* gpuhash.debug_fail_after of the request, armed on e */
extern void gpuhash_service_arm_failure(gh_engine *e, GhsSlot *slot);
extern void gpuhash_service_release_engine(gh_engine *e);

/* service_pool.c, inside a service worker */
extern void gpuhash_pool_create(GhsSlot *slot);
/* true if the rows went to the device */
extern bool gpuhash_pool_append(GhsSlot *slot, char *base, Size length);
/* the rows of heap pages (GhsPoolPages at base): rows appended */
extern uint64 gpuhash_pool_pages(GhsSlot *slot, char *base);
extern void gpuhash_pool_patterns(GhsSlot *slot);
extern gh_engine *gpuhash_pool_engine(GhsSlot *slot);
extern void gpuhash_pool_finish(GhsSlot *slot);
extern bool gpuhash_pool_free(int32 id);
extern void gpuhash_pool_reap(void);

#endif							/* GPUHASH_SERVICE_SHARED_H */
