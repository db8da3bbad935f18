/*-------------------------------------------------------------------------
 *
 * engine_internal.h
 *	  What the files of the engine's common layer (engine.c, engine_table.c,
 *	  engine_aggregate.c, engine_joinagg.c) share: host allocation with
 *	  error recording, the hash-range split of host inputs, device ids, the
 *	  table and join handles with the unit and probe helpers of
 *	  engine_table.c, and the merge of aggregation pieces.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_ENGINE_INTERNAL_H
#define GPUHASH_ENGINE_INTERNAL_H

#include "backend.h"

#define CHECK_INTERRUPT(e) \
	do { if (gh_interrupted(e)) return GH_ERR_CANCELLED; } while (0)

/* The same, running cleanup first. */
#define CHECK_INTERRUPT_FREE(e, cleanup) \
	do { if (gh_interrupted(e)) { cleanup; return GH_ERR_CANCELLED; } } while (0)

/* Every device of e, as a gh_for_devices mask */
#define ALL_DEVICES(e) \
	((e)->opt.ndevices >= 32 ? UINT32_MAX : (1u << (e)->opt.ndevices) - 1)

/* Return a failed status from a helper. */
#define GH_TRY_STATUS(expr) \
	do { \
		gh_status gh_st_ = (expr); \
		if (gh_st_ != GH_OK) \
			return gh_st_; \
	} while (0)

/* malloc/calloc that record GH_ERR_HOST_NOMEM on e when they fail. */
extern void *gh_malloc(gh_engine *e, size_t bytes);
extern void *gh_calloc(gh_engine *e, size_t count, size_t size);

/*
 * An input split into nparts hash-range partitions (engine_split.c): the
 * partition of every row, the partitions' offsets in partition order, and
 * for every chunk of consecutive rows the position its first row of each
 * partition goes to.  Rows keep their input order within a partition.
 */
typedef struct gh_split
{
	size_t		n;
	uint32_t	nparts;
	int			nthreads;
	int			nchunks;
	size_t		chunk;			/* rows per chunk (the last may be shorter) */
	uint32_t   *pof;			/* n: partition of each row */
	size_t	   *off;			/* nparts + 1 */
	size_t	   *cursor;			/* [chunk][partition] */
} gh_split;

/*
 * The caller's scatter of rows [begin, end): row i goes to position
 * cursor[pof[i]]++ of the partition-ordered layout.  Called on several
 * threads at once, for disjoint chunks.
 */
typedef void (*gh_split_scatter_fn) (void *arg, size_t begin, size_t end,
									 const uint32_t *pof, size_t *cursor);

/*
 * Should an input of n rows, max_rows of which fit a device, be spread over
 * every device and split there (backend.h, build_spread) rather than split
 * on the host?  Several devices, an input that would fit one, and enough
 * rows to be worth the exchange (any, under gh_debug_split_chunk).
 */
extern bool gh_spread_input(const gh_engine *e, size_t n, size_t max_rows);

extern gh_status gh_split_make(gh_engine *e, const uint64_t *keys, size_t n,
							   uint32_t nparts, gh_split *s);
extern void gh_split_scatter(gh_split *s, gh_split_scatter_fn fn, void *arg);
extern void gh_split_free(gh_split *s);

/*
 * The first row of range p of n rows cut in parts ranges of n / parts rows
 * (the last takes the rest); n for p = parts.
 */
static inline size_t
gh_row_start(size_t n, uint32_t parts, uint32_t p)
{
	return p == parts ? n : n / parts * p;
}

/* Smallest number of equal parts of n rows that keeps each within limit. */
extern size_t gh_parts_needed(size_t n, size_t bytes_per_row, size_t limit);

/*
 * Partitions for n rows at bytes_per_row on e: a multiple of the device
 * count, so that every device gets the same number of hash ranges.
 */
extern uint32_t gh_partitions_for(const gh_engine *e, size_t n,
								  size_t bytes_per_row);

/* The id a device index reports (CUDA number; CPU: the index itself). */
extern int	gh_device_id(const gh_engine *e, int dev);

/* Device ids of the indices set in devmask, in the engine's order. */
extern int	gh_device_ids(const gh_engine *e, uint32_t devmask, int *ids,
						  int max);

/* ---- the page cache (engine_pagecache.c) ---- */

/*
 * The device index that reads (and caches) the page of name n
 * (engine_star.c): the same for a run of 2^GH_PAGE_RUN_LOG2 consecutive
 * blocks of a relation.
 */
#define GH_PAGE_RUN_LOG2 4
extern int	gh_page_device(const gh_engine *e, const gh_pagename *n);
/* dev_of[p]: gh_page_device of each of npages names, a run's pages at once */
extern void gh_page_devices(const gh_engine *e, const gh_pagename *names, size_t npages,
							uint8_t *dev_of);

extern gh_status gh_page_cache_plan(gh_star *s, const uint32_t *pages,
									const gh_pagename *names, size_t npages,
									gh_pagecopy *copy, bool *planned);
extern void gh_page_cache_settle(gh_star *s, const uint8_t *drop, bool kept);
extern void gh_page_cache_close(gh_engine *e);

/* ---- device arrays (engine_darray.c) ---- */

/* Free every device array still open (gh_close). */
extern void gh_darrays_close(gh_engine *e);
/* append bytes at src in the engine's device array memory (engine_darray.c) */
extern gh_status gh_darray_append_engine(gh_darray *a, const void *src, size_t bytes);
/*
 * engine_pages.c: the checks of a page description, for function fn's
 * messages; varlena: output columns of attlen -1 are allowed (attributes
 * of attlen -1 are walked always).
 */
extern gh_status gh_page_spec_check(gh_engine *e, const gh_pagespec *spec, bool varlena,
									const char *fn);

/*
 * Inputs an operation is about to read on the host (a hash-range split):
 * those that lie in device arrays replaced by host copies.  *keys and *cols
 * may be changed to point at the copies; gh_host_inputs_free frees them.
 */
typedef struct gh_host_inputs
{
	gh_aggcol  *cols;
	void	  **copies;
	int			ncopies;
} gh_host_inputs;

extern gh_status gh_host_inputs_make(gh_engine *e, const uint64_t **keys, size_t n,
									 const gh_aggcol **cols, int ncols, gh_host_inputs *h);
extern void gh_host_inputs_free(gh_host_inputs *h);

/* ---- tables and joins (engine_table.c; see its header comment) ---- */

/* One unit: a piece of one partition, built on one device. */
typedef struct gh_unit
{
	uint32_t	partition;
	int			dev;
	uint64_t   *keys;			/* host copy while not resident; else NULL */
	uint64_t   *rows;
	bool		keys_borrowed;	/* keys/rows are the caller's: not freed */
	bool		rows_borrowed;
	size_t		n;
	void	   *part;			/* the backend's table, when built */
} gh_unit;

struct gh_table
{
	gh_engine  *e;
	gh_kind		kind;
	double		load_factor;
	size_t		n;
	uint64_t	max_row;		/* the largest row number (0 when empty) */
	uint32_t	nparts;
	int			nunits;
	gh_unit    *units;
	bool		resident;		/* all units stay built */
	uint32_t	devmask;		/* devices holding units */
	bool		broadcast;		/* unit d on device d holds every row; a
								 * probe's "partition" d is its row range d */
};

struct gh_join
{
	gh_table   *t;
	const uint64_t *keys;
	size_t		n;
	gh_join_method method;
	/* per partition, the probe keys' original indices (NULL: identity) */
	uint64_t  **part_idx;
	uint64_t  **part_keys;
	size_t	   *part_n;
	/* per unit: open probe (resident tables keep them) and its total */
	void	  **probes;
	uint64_t   *unit_total;
	uint64_t	total;
	/* writing position per device: its current unit, the pairs written of
	 * it, and the device's pairs not yet written */
	int			cur[GH_MAX_DEVICES];
	uint64_t	pos[GH_MAX_DEVICES];
	uint64_t	left[GH_MAX_DEVICES];
	/* the current gh_join_next call: each device's share and where it goes */
	uint64_t	quota[GH_MAX_DEVICES];
	gh_pair    *dest[GH_MAX_DEVICES];
	uint32_t   *counts;			/* probe_all_counts: the caller's array */
};

/* The next unit of device dev after unit index `after` (t->nunits: none). */
extern int	gh_next_unit_of(const gh_table *t, int dev, int after);

/*
 * Open the probe of unit u of a join (building the unit if needed), with
 * its number of pairs in *total when total is not NULL; gh_probe_close
 * is done with it (non-resident tables drop the probe and the unit).
 */
extern gh_status gh_probe_open(gh_join *j, int u, uint64_t *total);
extern void gh_probe_close(gh_join *j, int u);

/* ---- aggregation (engine_aggregate.c) ---- */

/*
 * Gather the groups of several pieces into one result.  disjoint: the
 * pieces hold different keys, so concatenate; otherwise combine equal keys.
 * NULL (an error recorded) when out of host memory.
 */
extern gh_groups *gh_groups_merge(gh_engine *e, gh_groups **pieces, int npieces,
								  const gh_aggcol *cols, int ncols,
								  bool disjoint);

#endif							/* GPUHASH_ENGINE_INTERNAL_H */
