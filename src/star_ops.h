/*-------------------------------------------------------------------------
 *
 * star_ops.h
 *	  A star (engine.h, "the star pipeline") held for a GpuStarAgg: in the
 *	  GPU service when it runs, so that every process of a parallel query
 *	  feeds the same one, else in the backend's own engine.
 *
 * StarCore is the star itself with its dimensions, in whichever process
 * holds it; the same code reads, checks and keeps pages there.  GhOpStar is
 * the node's handle on it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_STAR_OPS_H
#define GPUHASH_STAR_OPS_H

#include "postgres.h"

#include "storage/dsm.h"
#include "utils/relcache.h"

#include "engine.h"
#include "engine_ops.h"
#include "service.h"

/*
 * a dimension's arrays, as the node read them; or (nparts > 0) the shares
 * of them that a parallel query's processes published, where each lies in
 * its segment (GhsStarPart) and where this process maps it (base)
 */
typedef struct StarDimArrays
{
	uint64		n;
	int			ncols;
	uint64	   *keys;
	int64	   *lo[GH_PROG_MAX_DIMCOLS];
	int64	   *hi[GH_PROG_MAX_DIMCOLS];	/* NULL: none */
	uint8	   *nulls[GH_PROG_MAX_DIMCOLS]; /* NULL: never NULL */
	uint8	   *dscale[GH_PROG_MAX_DIMCOLS];	/* NULL: none */
	int			nparts;
	GhsStarPart *parts;
	char	  **base;
} StarDimArrays;

typedef struct StarCore
{
	gh_engine  *e;
	int			ndims;
	gh_dim	   *dims[GH_PROG_MAX_DIMS];
	gh_star    *star;
	uint64		pages;			/* pages whose rows were kept */
	int			failed_dim;		/* the dimension star_core_create failed on */
	/* a batch's names and the engine's statuses, kept for the next (malloc) */
	gh_pagename *names;
	uint8	   *res;
	size_t		room;			/* pages they hold */
} StarCore;

/*
 * the star made on e; a failure's status, nothing held then
 * (GH_ERR_DUPLICATE_KEY: dimension failed_dim holds a key twice)
 */
extern gh_status star_core_create(StarCore *c, gh_engine *e, const gh_prog *prog,
								  const gh_pagespec *spec, int ndims, const StarDimArrays *dims);
/*
 * What names a batch's shipped pages for the engine's page cache: the
 * relation (gpuhash_op_star_name; rel 0: not named), each page's block and
 * the version of it the batch reads (0: none to name; src/README, "The page
 * cache", says what a version is).
 */
typedef struct StarPageNames
{
	uint64		rel;
	uint64		spc;
	const uint32 *blocks;
	const uint64 *versions;
} StarPageNames;

/*
 * What became of a shipped page (star_core_pages' status): kept; to be read
 * by the caller (it changed, or is malformed); or, for a page the batch
 * gave only by name (GH_PAGE_CACHED_ONLY), not in the page cache: to be
 * shipped again pinned.
 */
#define STAR_PAGE_KEPT			0
#define STAR_PAGE_READ_AGAIN	1
#define STAR_PAGE_NOT_CACHED	2
/*
 * A page that is not all-visible holds a tuple whose hint bits do not tell
 * its visibility to the query's snapshot (GH_STAR_PAGE_UNSURE): to be read
 * by the caller with PostgreSQL's visibility checks.
 */
#define STAR_PAGE_UNDECIDED		4
/*
 * A row of the page holds a value the device cannot evaluate
 * (GH_STAR_PAGE_ESCAPE: a variable-length value stored compressed or out of
 * line, a numeric NaN, a product beyond 128 bits); nothing of the batch is
 * kept, and the node runs its alternative plan (star_exec.c).
 */
#define STAR_PAGE_ESCAPED		3

/*
 * Run npages pages through the star: shared buffers (base BufferBlocks,
 * lsns given: each checked unchanged under its content lock, and named for
 * the engine's page cache by names; a page given only by its name,
 * GH_PAGE_CACHED_ONLY, is read from the cache or not at all, and not
 * checked) or pages the caller made (lsns and names NULL: all taken).
 * status[p] becomes a STAR_PAGE_* (above).  A kept
 * page's data error is raised as PostgreSQL raises it; an engine failure is
 * returned (nothing of the batch kept then); a row the device cannot
 * evaluate keeps nothing of the batch and marks its page STAR_PAGE_ESCAPED.
 */
extern gh_status star_core_pages(StarCore *c, const void *base, const uint32 *pages,
								 const uint64 *lsns, const StarPageNames *names, uint8 *status,
								 size_t npages);
extern gh_status star_core_result(StarCore *c, gh_groups **g);
extern void star_core_free(StarCore *c);

/*
 * Pages given by name alone (GH_PAGE_CACHED_ONLY) hold no pin and take no
 * check: a batch may carry this many times as many of them as pinned pages,
 * so that the service takes fewer, larger requests.
 */
#define STAR_NAMED_PER_PINNED 8

/*
 * Where a star lives in the GPU service: one star in one service worker,
 * or, on several GPUs with a service worker for each, a part of it on each
 * GPU in a worker of its own (star_split.c), so that the GPUs read their
 * shares of a batch at once.  nparts 0: nowhere (the backend's own).
 */
#define STAR_MAX_PARTS 8

typedef struct StarPlace
{
	int			nparts;
	int			worker[STAR_MAX_PARTS];
	int32		id[STAR_MAX_PARTS];
} StarPlace;

typedef struct GhOpStar
{
	GhOps	   *ops;
	StarCore	local;			/* without the service */
	bool		in_service;
	StarPlace	place;			/* in the service: where */
	bool		owner;			/* this handle made it (and frees it) */
	/*
	 * none made: dimension duplicate_dim holds a key twice (the engine found
	 * it building the dimension; the caller runs its alternative)
	 */
	bool		duplicate;
	int			duplicate_dim;
	/*
	 * a batch of pages, for the caller to fill: up to max_named, of which up
	 * to max_pages pinned ones (or max_pages synthetic ones)
	 */
	size_t		max_pages;
	size_t		max_named;
	uint32	   *pages;			/* shared buffer ids */
	uint64	   *lsns;			/* the LSN each had when pinned */
	uint32	   *blocks;			/* their block numbers (gpuhash_op_star_name) */
	uint64	   *versions;		/* their versions for the page cache (StarPageNames) */
	uint64		name_rel;		/* the relation they are of, for the page cache; 0: none */
	uint64		name_spc;
	uint8	   *status;
	char	   *synth;			/* or whole pages made by the caller */
	uint32	   *synth_ids;		/* in the backend: their numbers, 0, 1, ... */
	uint8	   *synth_status;	/* their statuses, apart from the shipped pages' */
	dsm_segment *seg;			/* the batch, in the service */
	dsm_segment *synth_seg;
	uint64		kept;			/* rows kept so far (all processes) */
	/* a split star's: each part's share of a batch, and its rows kept */
	dsm_segment *part_seg[STAR_MAX_PARTS];
	uint32	   *part_index;		/* the batch's page each share's page is */
	uint64		part_kept[STAR_MAX_PARTS];
	int			synth_turn;		/* the part the next synthetic batch goes to */
	/*
	 * A star only this node feeds may be made again on the CPU when the
	 * device fails it part way (gpuhash.cpu_fallback): restart is then set,
	 * and the caller runs every page through the new star again.
	 */
	bool		restartable;
	bool		restart;
	/*
	 * A star the processes of a parallel query feed together cannot be made
	 * again by one of them: where the device fails it (and ops falls back),
	 * given_up is set with the failure (restart too, so that the pass
	 * stops), and the node has one process read the whole fact table into a
	 * star of its own on the CPU (star_exec.c).
	 */
	bool		fed_by_many;
	bool		given_up;
	/*
	 * A batch held a row the device cannot evaluate (STAR_PAGE_ESCAPED):
	 * restart is set too, so that the pass stops; the star's groups would
	 * miss that row, and the node runs its alternative plan instead.
	 */
	bool		escaped;
	gh_status	failure;
	char	   *failure_msg;
	const gh_prog *prog;		/* what it was made of (the node's memory) */
	const gh_pagespec *spec;
	int			ndims;
	const StarDimArrays *dims;
} GhOpStar;

extern GhOpStar *gpuhash_op_star_create(GhOps *ops, const gh_prog *prog,
										const gh_pagespec *spec, int ndims,
										const StarDimArrays *dims, size_t max_pages,
										Oid fact_relid);
/* a star another process of the query made, in the service */
extern GhOpStar *gpuhash_op_star_attach(GhOps *ops, const StarPlace *place, size_t max_pages);
/*
 * The shipped pages are of rel: name them for the engine's page cache where
 * a visibility map page's LSN fixes the content of the pages it maps
 * (star_ops.c)
 */
extern void gpuhash_op_star_name(GhOpStar *s, Relation rel);
/* pages[0 .. npages), lsns, blocks and versions filled in: status comes back */
extern void gpuhash_op_star_shipped(GhOpStar *s, size_t npages);
/* synth[0 .. npages * BLCKSZ) filled in with pages: synth_status comes back */
extern void gpuhash_op_star_synthetic(GhOpStar *s, size_t npages);
/*
 * The star this handle made, made again on the CPU (ops falls back):
 * for a star given up, by the process that then reads the whole fact
 * table into it
 */
extern void gpuhash_op_star_on_cpu(GhOpStar *s);
/* the groups; NULL if the star was made again on the CPU or given up (restart) */
extern gh_groups *gpuhash_op_star_result(GhOpStar *s);
extern void gpuhash_op_star_free(GhOpStar *s);

/*
 * A star split across GPUs (star_split.c).  star_split_create: the parts of
 * a star over the fact table whose first part's service worker is
 * base_worker, made of the GhsStarCreate in segment data where several
 * GPUs and as many service workers are there: 1 if made (or a dimension
 * holds a key twice: duplicate set), 0 if not split, -1 if a part could not
 * be made (ops falls back; none is left).  The others do for a split star
 * what gpuhash_op_star_* do for one of one part.
 */
extern int	star_split_create(GhOpStar *s, dsm_handle data, int base_worker);
extern void star_split_batches(GhOpStar *s, size_t max_named);
extern void star_split_shipped(GhOpStar *s, size_t npages);
extern gh_groups *star_split_result(GhOpStar *s);
/* for star_split.c: star_ops.c's parts of a call for s (star_ops.c) */
extern dsm_segment *star_pages_segment(size_t max_named);
extern void star_pages_call(GhOpStar *s, GhsCall *call, dsm_segment *seg, int part,
							size_t npages);
extern void star_note_kept(GhOpStar *s, int part, uint64 kept);
extern bool star_falls_back(const GhOpStar *s);
extern void star_call_failed(GhOpStar *s, GhsCall *call);
/* the stars of place's parts that were made (id set), freed in the service */
extern void star_place_free(const StarPlace *place);

/* service_star.c, inside a service worker */
struct GhsSlot;
extern void gpuhash_star_service_create(struct GhsSlot *slot);
extern void gpuhash_star_service_pages(struct GhsSlot *slot);
extern void gpuhash_star_service_result(struct GhsSlot *slot);
extern bool gpuhash_star_service_free(int32 id);
extern void gpuhash_star_service_reap(void);

#endif							/* GPUHASH_STAR_OPS_H */
