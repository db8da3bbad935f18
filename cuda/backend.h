/*-------------------------------------------------------------------------
 *
 * backend.h
 *	  What a backend (CPU or CUDA) provides to the engine's common layer.
 *
 * engine.c and its siblings own what is the same for both backends: argument
 * checks, the hash-range split of inputs (across partitions and devices),
 * chunked pair output, interrupts and error text.  A backend implements the
 * operations on ONE unit resident on ONE device (gh_backend_ops below), and
 * reports errors through gh_fail() and device memory through gh_account().
 *
 * With several devices a callback for device dev runs on that device's
 * thread (engine_devices.c), never on two threads for one device at once;
 * callbacks for different devices run concurrently.  On a device thread
 * gh_interrupted() reports a stop request or the caller's cancel instead of
 * calling the interrupt callback.  See cuda/README, "Layers".
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_BACKEND_H
#define GPUHASH_BACKEND_H

#include <pthread.h>

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a page is read from and copied to (engine_pagecache.c; NULL: neither) */
typedef struct gh_pagecopy
{
	const void *from;			/* a copy to read instead of the host page */
	void	   *to;				/* where to copy the page as it is read */
} gh_pagecopy;

typedef struct gh_backend_ops
{
	const char *name;

	/* Set up the devices listed in e->opt; store private state in e->bstate. */
	gh_status	(*open) (gh_engine *e);
	void		(*close) (gh_engine *e);

	/*
	 * Build one partition's table on device index dev (0..ndevices-1 into
	 * e->opt.devices).  rows is never NULL here.  load_factor is for BCHT.
	 */
	gh_status	(*build) (gh_engine *e, int dev, gh_kind kind,
						  const uint64_t *keys, const uint64_t *rows,
						  size_t n, double load_factor, void **part);
	void		(*part_free) (gh_engine *e, void *part);
	size_t		(*part_distinct) (const void *part);

	/*
	 * Count the matches of n probe keys (host array) against part, keeping
	 * what probe_write needs; *total receives the number of pairs.  Pair
	 * "outer" values are indices 0..n-1 into this key array.
	 */
	gh_status	(*probe_begin) (gh_engine *e, void *part, const uint64_t *keys,
								size_t n, gh_join_method method,
								void **probe, uint64_t *total);
	/* Write pairs [first, first + count) of the probe's fixed order. */
	gh_status	(*probe_write) (gh_engine *e, void *probe, uint64_t first,
								size_t count, gh_pair *out);
	/* Per probe key, its number of matches (saturating at UINT32_MAX). */
	gh_status	(*probe_counts) (gh_engine *e, void *probe, uint32_t *counts);
	void		(*probe_free) (gh_engine *e, void *probe);

	/* Aggregate one partition; out was made by gh_groups_alloc(ngroups=0). */
	gh_status	(*aggregate) (gh_engine *e, int dev, const uint64_t *keys,
							  size_t n, const gh_aggcol *cols, int ncols,
							  gh_groups **out);

	/*
	 * Group pairs [first, first + count) of the probe's fixed order (those
	 * probe_write would write) and aggregate spec's columns over them, the
	 * pairs never leaving the device.  Pair (o, r) has the group key
	 * outer_keys[o] | inner_keys[r] (a NULL array counts as 0) and, in
	 * column c, the value at o (col_inner NULL or col_inner[c] == 0) or at r
	 * (col_inner[c] == 1), as gh_join_aggregate defines them -- except that
	 * here the outer arrays have the probe's n entries in the order of the
	 * keys given to probe_begin; every r is below inner_rows (engine.c has
	 * checked).  *piece is a new gh_groups (gh_groups_alloc) of count rows.
	 */
	gh_status	(*probe_aggregate) (gh_engine *e, void *probe, uint64_t first,
									size_t count, const gh_joinagg *spec,
									gh_groups **piece);

	gh_status	(*bench) (gh_engine *e, gh_bench_op op, gh_kind kind,
						  size_t n, int reps, double load_factor,
						  gh_bench_result *out);

	/*
	 * Bytes of device memory per build row and per probe/aggregate row,
	 * for planning partitions (an upper estimate).
	 */
	size_t		(*build_bytes_per_row) (gh_kind kind);
	size_t		(*agg_bytes_per_row) (int ncols);
	/*
	 * Bytes of device memory probe_aggregate holds per pair of a call (an
	 * upper estimate), and in *fixed what is held whatever the number of
	 * pairs: the open probe of outer_rows keys and the spec's arrays that
	 * probe_aggregate stages.
	 */
	size_t		(*joinagg_bytes_per_pair) (const gh_joinagg *spec,
										   size_t outer_rows, size_t *fixed);

	/*
	 * Give the device memory the allocator keeps for reuse back to the
	 * driver (NULL: nothing is kept).
	 */
	void		(*trim) (gh_engine *e);
	/*
	 * The rows of heap pages (gh_extract_pages; engine_pages.c has checked
	 * the arguments), on device index 0.
	 */
	gh_status	(*extract_pages) (gh_engine *e, const gh_pagespec *spec,
								  const void *base, const uint32_t *pages,
								  size_t npages, gh_pagerows *out);
	/*
	 * gh_pages_read and gh_pagebatch_keep (engine_pagebatch.c has checked the
	 * arguments), on device index 0.  pages_read fills b->bad and
	 * b->has_nulls and keeps what keep needs in b->bstate; pages_keep
	 * leaves the kept rows, grouped by pattern in slot order, in b->keys,
	 * b->vals and b->nulls (darray_alloc'd, b->nkept rows) and their counts
	 * in b->count; pages_free frees b->bstate.
	 */
	gh_status	(*pages_read) (gh_engine *e, const void *base, const uint32_t *pages,
							   struct gh_pagebatch *b);
	gh_status	(*pages_keep) (struct gh_pagebatch *b, const uint8_t *drop);
	void		(*pages_free) (struct gh_pagebatch *b);
	/* Register host memory for direct device reads (NULL: nothing to do). */
	gh_status	(*register_host) (gh_engine *e, void *base, size_t bytes);
	/* gh_pin_host, gh_unpin_host (NULL: nothing to pin) */
	bool		(*pin_host) (gh_engine *e, void *base, size_t bytes);
	void		(*unpin_host) (gh_engine *e, void *base);

	/*
	 * Input spread over every device (NULL: the engine splits on the host).
	 * build_spread builds hash range d of ndevices (gh_partition_of) on
	 * device index d from host arrays (rows NULL: row numbers are indices):
	 * parts[d] and its row count nrows[d].  aggregate_spread aggregates
	 * range d on device d into pieces[d] (gh_groups_alloc'd), for at most
	 * GH_SPREAD_MAX_AGG_COLS columns.  The engine uses them when the input
	 * would fit one device.
	 */
	gh_status	(*build_spread) (gh_engine *e, gh_kind kind, const uint64_t *keys,
								 const uint64_t *rows, size_t n, double load_factor,
								 void **parts, size_t *nrows);
	gh_status	(*aggregate_spread) (gh_engine *e, const uint64_t *keys, size_t n,
									 const gh_aggcol *cols, int ncols,
									 gh_groups **pieces);

	/*
	 * Device arrays (engine_darray.c; NULL: host memory only): memory on
	 * device index dev that outlives operations (the page cache's chunks
	 * are on every device, device arrays on index 0), and a copy of bytes
	 * between any two of host memory and device 0's (src NULL: zeros),
	 * waited for.
	 * Inputs in device memory reach the operations that accept them
	 * (gh_aggregate) as host pointers would: the backend's copy of its
	 * inputs to the device must take either.
	 */
	gh_status	(*darray_alloc) (gh_engine *e, int dev, void **p, size_t bytes);
	void		(*darray_free) (gh_engine *e, int dev, void *p, size_t bytes);
	gh_status	(*darray_copy) (gh_engine *e, void *dst, const void *src, size_t bytes);

	/*
	 * The star pipeline (engine_star.c has checked the arguments), on
	 * device index dev: engine_star.c builds every dimension and sets up
	 * every star on each of the engine's devices and gives each device its
	 * share of a read's pages.  dim_create builds d->bstate[dev] (d->n and
	 * d->ncols set) from the caller's parts (gh_dim_create_parts: each
	 * part's rows after the ones before it), GH_ERR_INVALID for a
	 * duplicate key; dim_free frees it.  star_create sets up
	 * s->bstate[dev], an empty table of groups for s->prog over s->dims.
	 * star_read runs the program over the pages (with copy, page p from
	 * copy[p].from where that is set, and copied to copy[p].to where that
	 * is: device array memory, engine_pagecache.c) and writes their
	 * statuses, keeping the rows for star_keep, which aggregates those of
	 * the pages that are OK and not dropped (drop: as many entries as the
	 * read's pages, or NULL) and sets *kept to their number; a failed read
	 * keeps nothing.  star_add aggregates n host rows (cols as the
	 * program's outputs); star_result copies the groups into a new
	 * gh_groups (gh_groups_alloc); star_free frees s->bstate[dev].
	 */
	gh_status	(*dim_create) (struct gh_dim *d, int dev, const gh_dimpart *parts,
							   int nparts);
	void		(*dim_free) (struct gh_dim *d, int dev);
	gh_status	(*star_create) (struct gh_star *s, int dev);
	gh_status	(*star_read) (struct gh_star *s, int dev, const void *base, const uint32_t *pages,
							  size_t npages, const gh_pagecopy *copy, uint8_t *status);
	gh_status	(*star_keep) (struct gh_star *s, int dev, const uint8_t *drop, uint64_t *kept);
	gh_status	(*star_add) (struct gh_star *s, int dev, const uint64_t *keys, size_t n,
							 const gh_aggcol *cols);
	gh_status	(*star_result) (struct gh_star *s, int dev, gh_groups **out);
	void		(*star_free) (struct gh_star *s, int dev);

	/*
	 * Of agg_bytes_per_row, the bytes that are per group (the table and the
	 * result), which an aggregation of few groups does not need for every
	 * row; and an estimate of the distinct keys among n keys on device dev,
	 * false where the backend makes none (NULL: never): the keys are not
	 * where it can read them in place.
	 */
	size_t		(*agg_bytes_per_group) (int ncols);
	bool		(*estimate_distinct) (gh_engine *e, int dev, const uint64_t *keys, size_t n,
									  double *estimate);
} gh_backend_ops;

#define GH_SPREAD_MAX_AGG_COLS 6

typedef gh_status (*gh_device_fn) (gh_engine *e, int dev, void *arg);

/* a device's thread (engine_devices.c) */
typedef struct gh_devthread
{
	gh_engine  *e;
	int			dev;
	pthread_t	thread;
	bool		started;
	gh_device_fn fn;			/* its task, NULL: none (under the engine's lock) */
	void	   *arg;
} gh_devthread;

struct gh_engine
{
	gh_options	opt;			/* ndevices >= 1 after gh_open */
	const gh_backend_ops *ops;
	void	   *bstate;			/* the backend's own */
	size_t		device_bytes;
	size_t		peak_device_bytes;
	gh_status	status;
	char		errmsg[512];

	/* device threads (engine_devices.c); lock guards the fields above */
	pthread_mutex_t lock;
	pthread_cond_t done;		/* a device thread finished */
	pthread_cond_t work;		/* a device thread has a task, or the engine closes */
	bool		closing;		/* device threads should end */
	gh_devthread devthreads[GH_MAX_DEVICES];
	bool		in_section;		/* device threads are running */
	bool		section_failed; /* ... and one has failed: keep its error */
	int			stop;			/* atomic: device threads should stop */
	int			running;		/* device threads not yet finished */

	/* gh_debug_inject_failure */
	int			inject_dev;		/* -1: none */
	long		inject_after;	/* atomic countdown */
	gh_status	inject_status;
	bool		stage_exchange; /* gh_debug_stage_exchange */
	size_t		split_chunk;	/* gh_debug_split_chunk; 0: by input size */
	long long	broadcast_rows; /* gh_debug_broadcast_rows; < 0: the default */
	double		group_estimate_scale;	/* gh_debug_group_estimate; 0: none */
	bool		cluster_always; /* gh_debug_cluster */
	bool		bcht_key_moves; /* gh_debug_bcht_key_moves */

	struct gh_darray *darrays;	/* every device array still open */
	size_t		darray_device_bytes;	/* the device memory they hold */
	size_t		darray_budget;	/* gh_debug_darray_budget; 0: the default */

	struct gh_pagecache *pagecache; /* engine_pagecache.c; NULL: none yet */
};

/* A batch of page rows (gh_pages_read) */
struct gh_pagebatch
{
	gh_engine  *e;
	gh_pagespec spec;
	gh_pageenc	enc;
	size_t		npages;
	uint8_t    *bad;			/* host, npages */
	bool		has_nulls[GH_PAGE_MAX_VALS];
	void	   *bstate;			/* the backend's, between read and keep */
	bool		kept;
	/* the kept rows, in the engine's device array memory */
	size_t		nkept;
	uint64_t   *keys;			/* nkept */
	uint64_t   *jkeys;			/* nkept, with join keys */
	uint64_t   *vals;			/* value column v at v * nkept */
	uint8_t    *nulls;			/* likewise */
	uint64_t	count[256];		/* rows per pattern, in pattern order */
};

/* A dimension (gh_dim_create) */
struct gh_dim
{
	gh_engine  *e;
	size_t		n;
	int			ncols;
	void	   *bstate[GH_MAX_DEVICES];	/* each device's: its gh_vmdim and arrays */
};

/* A host array a star keeps between reads (engine_star.c, gh_star_buffer) */
typedef struct gh_hostbuf
{
	void	   *p;
	size_t		bytes;
	bool		pinned;			/* registered with the devices (gh_pin_host) */
} gh_hostbuf;

/* One device's share of a star's pending read (engine_star.c) */
typedef struct gh_star_share
{
	size_t		first,			/* where dev_of is NULL: the read's pages [first, last) */
				last;
	size_t		n;				/* pages the device reads */
	bool		gathered;		/* they are in the arrays below, not [first, last) as it lies */
	gh_hostbuf	buf;			/* the arrays' memory */
	gh_pagecopy *copy;			/* each page read: its copies, */
	uint32_t   *idx;			/* its index in the read, */
	uint32_t   *pages;			/* its number, */
	uint8_t    *status;			/* its status, */
	uint8_t    *drop;			/* whether the keep drops it */
} gh_star_share;

/* A star (gh_star_create) */
struct gh_star
{
	gh_engine  *e;
	gh_prog		prog;
	gh_pagespec spec;
	int			ndims;
	struct gh_dim *dims[GH_PROG_MAX_DIMS];
	gh_aggcol	outs[GH_PROG_MAX_OUTS];	/* each output's type and operations */
	uint64_t	rows;			/* rows kept and added so far */
	size_t		npages;			/* pages of the read waiting for gh_star_keep */
	size_t		nread;			/* of them, those read (not GH_STAR_PAGE_MISSED) */
	bool		pending;		/* a read waits for gh_star_keep */
	bool		broken;			/* a keep or add failed part way */
	/* the page cache's slots the pending read fills (engine_pagecache.c), in plan_buf */
	int32_t    *cache_slot;		/* npages: a slot, or -1; NULL: no plan */
	uint8_t    *cache_ok;		/* npages: the page's status was OK */
	uint8_t    *cache_dev;		/* npages: the device whose cache */
	uint8_t    *copied;			/* the last read's pages read from a copy (NULL: none) */
	size_t		ncopied;		/* its entries */
	size_t		cache_npages;	/* entries of the two */
	size_t		cache_fills;	/* slots the read fills (cache_slot >= 0) */
	uint64_t	cache_epoch;	/* the cache's epoch at the read */
	/* each of the engine's devices' part of the pending read */
	const uint8_t *dev_of;		/* each page's device; NULL: shares are ranges */
	gh_star_share share[GH_MAX_DEVICES];
	uint64_t	dev_kept[GH_MAX_DEVICES];	/* rows each device's keep aggregated */
	/* host arrays kept between reads, so that a read faults in no fresh memory */
	gh_hostbuf	plan_buf,		/* cache_slot, cache_ok, cache_dev */
				copy_buf,		/* the read's copies (gh_pagecopy) */
				copied_buf,		/* copied */
				devof_buf;		/* dev_of, where the page cache's plan gives none */
	void	   *bstate[GH_MAX_DEVICES];	/* each device's, the backend's */
};

/*
 * b's array of at least bytes (s's, kept between reads; NULL and an error
 * recorded if there is no memory); pin: registered with the devices where
 * it can be, for copies to them.  Calling thread only.
 */
extern void *gh_star_buffer(struct gh_star *s, gh_hostbuf *b, size_t bytes, bool pin);

extern const gh_backend_ops gh_cpu_ops;
extern const gh_backend_ops gh_cuda_ops;
extern int	gh_cuda_list_devices(gh_device_info *out, int max);
/* Register host memory with every device (cuda_pages.cu): NULL, or the error. */
extern const char *gh_cuda_register_range(void *base, size_t bytes);
/* Undo gh_cuda_register_range(base, ...). */
extern void gh_cuda_unregister_range(void *base);

/* Record an error on e (printf-style message) and return status. */
extern gh_status gh_fail(gh_engine *e, gh_status status, const char *fmt,...)
#ifdef __GNUC__
			__attribute__((format(printf, 3, 4)))
#endif
			;

/* Device memory accounting: delta may be negative. */
extern void gh_account(gh_engine *e, long long delta);

/*
 * True (and an error recorded) when the caller's interrupt callback fires,
 * or, on a device thread, when the section must stop.
 */
extern bool gh_interrupted(gh_engine *e);

/*
 * Run fn(e, dev, arg) for every device index dev whose bit is set in
 * devmask, each on its device's thread (started when first needed, kept
 * until the engine closes), and wait for all of them, polling the interrupt
 * callback meanwhile.  Returns GH_OK or the first failure (every thread has
 * finished its task either way).  One device, and work of fewer than
 * GH_THREAD_MIN_ROWS rows (rows: the operation's input or output rows,
 * whichever is larger), run on the calling thread, device after device:
 * handing them over would cost more than it saves.
 */
#define GH_THREAD_MIN_ROWS ((size_t) 1 << 15)
extern gh_status gh_for_devices(gh_engine *e, uint32_t devmask, size_t rows,
								gh_device_fn fn, void *arg);
/* The device threads ended (engine.c, closing the engine). */
extern void gh_stop_device_threads(gh_engine *e);

/* True on a thread started by gh_for_devices. */
extern bool gh_on_device_thread(void);

/*
 * Backends call this before each device allocation or operation on device
 * index dev: true (and the injected error recorded) when a failure injected
 * by gh_debug_inject_failure fires there.
 */
extern bool gh_injected_failure(gh_engine *e, int dev);

/* A zeroed gh_groups with arrays for ngroups groups and ncols columns. */
extern gh_groups *gh_groups_alloc(size_t ngroups, const gh_aggcol *cols,
								  int ncols);

/* HyperLogLog: the bits of a key's hash that pick its register, and the estimate of its registers. */
#define GH_HLL_BITS 12
extern double gh_hll_estimate(const unsigned *reg, int nreg, size_t n);

/* Leave out of g the arrays its readers can do without (engine.h). */
extern void gh_groups_compact(gh_groups *g);

#ifdef __cplusplus
}
#endif

#endif							/* GPUHASH_BACKEND_H */
