/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  The gpuhash engine: the one C header between PostgreSQL-facing code
 *	  (src/) and the hash tables, joins and aggregation (cuda/).
 *
 * The engine works on arrays of 64-bit keys and 64-bit row numbers and
 * returns arrays; it includes no PostgreSQL header.  Two backends sit behind
 * the same calls:
 *
 *	GH_BACKEND_CUDA  one or more NVIDIA GPUs (cuda/cuda_*.cu)
 *	GH_BACKEND_CPU   plain C, the same algorithms, deterministic (cuda/cpu_*.c);
 *	                 the reference the GPU is checked against and what CI runs
 *
 * Every call can fail: it returns a gh_status other than GH_OK and leaves a
 * message in gh_last_error(); nothing in the engine exits or aborts.  Memory
 * belongs to the handle that allocated it and is released by that handle's
 * free call; gh_close() releases everything still open.  Inputs beyond the
 * memory limit are split by hash range into partitions processed in turn,
 * across all the engine's devices at once.  An engine handle serves one
 * thread; the engine's own threads never call back into the caller.  The
 * whole contract: cuda/README, "The API contract".
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_ENGINE_H
#define GPUHASH_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GH_MAX_DEVICES 16

typedef enum gh_status
{
	GH_OK = 0,
	GH_ERR_INVALID,				/* bad argument */
	GH_ERR_HOST_NOMEM,			/* host allocation failed */
	GH_ERR_DEVICE_NOMEM,		/* device allocation failed */
	GH_ERR_DEVICE,				/* any other device (CUDA) error */
	GH_ERR_NODEVICE,			/* CUDA backend asked for, no usable GPU */
	GH_ERR_CANCELLED,			/* the interrupt callback asked to stop */
	GH_ERR_INTERNAL,			/* an engine invariant failed */
	GH_ERR_DUPLICATE_KEY		/* gh_dim_create: a key given twice */
} gh_status;

typedef enum gh_backend
{
	GH_BACKEND_CPU = 0,
	GH_BACKEND_CUDA = 1
} gh_backend;

typedef enum gh_kind
{
	GH_KIND_AUTO = 0,			/* the engine chooses (see gh_choose_kind) */
	GH_KIND_HASHGRAPH = 1,		/* CSR table: count, prefix sum, scatter */
	GH_KIND_BCHT = 2			/* bucketed cuckoo table of distinct keys */
} gh_kind;

typedef enum gh_join_method
{
	GH_JOIN_AUTO = 0,
	GH_JOIN_PROBE = 1,			/* look every probe key up in the table */
	GH_JOIN_INTERSECT = 2		/* HashGraph of the probe keys with the same
								 * hash and bucket count, then per-bucket
								 * list intersection (HashGraph tables only) */
} gh_join_method;

typedef struct gh_options
{
	gh_backend	backend;
	/*
	 * CUDA: the devices to use (ids as CUDA numbers them); ndevices = 0 means
	 * device 0 alone.  CPU: ndevices > 1 simulates that many devices (the
	 * hash-range split and exchange run, each part on the CPU).
	 */
	int			ndevices;
	int			devices[GH_MAX_DEVICES];
	/*
	 * Bytes of (device) memory one device may hold for one operation.  0:
	 * CUDA uses 90% of the device's free memory, the CPU backend 4 GiB.
	 * Inputs whose working set exceeds it are processed in hash-range
	 * partitions.
	 */
	size_t		memory_limit;
	/*
	 * Upper bound on memory_limit, given or resolved from 0 (0: none): a
	 * server's cap on what any session may ask for.
	 */
	size_t		memory_cap;
	/* BCHT load factor in (0, 0.99]; 0 means GH_BCHT_DEFAULT_LOAD (0.9). */
	double		bcht_load_factor;
	/* Polled between chunks and partitions; true cancels (GH_ERR_CANCELLED). */
	bool		(*interrupt) (void *arg);
	void	   *interrupt_arg;
} gh_options;

typedef struct gh_engine gh_engine;
typedef struct gh_table gh_table;
typedef struct gh_join gh_join;

/* One joined pair: the probe key's index and the matching build row. */
typedef struct gh_pair
{
	uint64_t	outer;			/* index into the keys given to gh_join_begin */
	uint64_t	inner;			/* row number given to gh_build for that key */
} gh_pair;

/* ---- engine ---- */

/*
 * Open an engine.  On failure *out is NULL and, if errbuf is given, the
 * reason is copied there.
 */
extern gh_status gh_open(const gh_options *opt, gh_engine **out,
						 char *errbuf, size_t errlen);
extern void gh_close(gh_engine *e);
extern const char *gh_last_error(const gh_engine *e);
extern const char *gh_status_name(gh_status s);
extern gh_backend gh_engine_backend(const gh_engine *e);
/* Number of devices in use (simulated ones for the CPU backend). */
extern int	gh_engine_ndevices(const gh_engine *e);
/* Their ids, as gh_table_devices gives them (at most max written); how many. */
extern int	gh_engine_devices(const gh_engine *e, int *ids, int max);
/* The memory limit the engine works with, per device (resolved and capped). */
extern size_t gh_engine_memory_limit(const gh_engine *e);
/* Bytes of device memory the engine holds now (all devices), and at most. */
extern size_t gh_engine_device_bytes(const gh_engine *e);
extern size_t gh_engine_peak_device_bytes(const gh_engine *e);
/*
 * Give the device memory the engine keeps cached for reuse back to the
 * driver.  After a failed or cancelled operation the memory it had freed
 * may be held until the next one; a long-lived process calls this then.
 */
extern void gh_release_cached_memory(gh_engine *e);

/* ---- build and lookup ---- */

/*
 * Build a table over n keys.  rows gives each key's row number; NULL means
 * 0..n-1.  Duplicate keys are kept: a lookup returns every row of an equal
 * key.  keys and rows are read during the call only.
 *
 * On several devices a table that fits one device's memory limit and has at
 * most GH_BROADCAST_MAX_ROWS rows is broadcast: built whole on every device,
 * each probe giving every device its own range of the probe keys, so that
 * the probe side, the large one of most joins, never moves between devices.
 * Larger tables are split by hash range, probes with them.
 */
#define GH_BROADCAST_MAX_ROWS ((size_t) 1 << 26)

extern gh_status gh_build(gh_engine *e, gh_kind kind, const uint64_t *keys,
						  const uint64_t *rows, size_t n, gh_table **out);
extern void gh_table_free(gh_table *t);
extern gh_kind gh_table_kind(const gh_table *t);
extern size_t gh_table_rows(const gh_table *t);
extern size_t gh_table_distinct_keys(const gh_table *t);	/* BCHT only; else 0 */
extern int	gh_table_partitions(const gh_table *t);	/* 1 for a broadcast table */
extern bool gh_table_broadcast(const gh_table *t);
/*
 * The devices a table's partitions were placed on: writes up to max device
 * ids (CUDA numbers; for the CPU backend the simulated indices 0..n-1) in
 * ascending order and returns how many there are.  A join uses the devices
 * of its table.
 */
extern int	gh_table_devices(const gh_table *t, int *ids, int max);
/* The kind AUTO resolves to for a build of n keys on this engine. */
extern gh_kind gh_choose_kind(const gh_engine *e, size_t n);

/*
 * For each of n keys, the number of build rows with an equal key (0: absent),
 * written to counts[i].
 */
extern gh_status gh_find(gh_table *t, const uint64_t *keys, size_t n,
						 uint32_t *counts);

/*
 * Join n probe keys against the table.  gh_join_begin counts the matches
 * (the total is then known: gh_join_total); gh_join_next writes the pairs in
 * chunks of at most cap and returns 0 pairs once all are written.  No pair
 * is written twice; the order of pairs is unspecified.  The keys array must
 * stay valid until gh_join_free.
 *
 * gh_join_outer_matched gives, for each probe key, whether it matched at
 * least one row (semi, anti and outer joins need nothing more, so callers
 * that need only the flags never call gh_join_next).
 */
extern gh_status gh_join_begin(gh_table *t, const uint64_t *keys, size_t n,
							   gh_join_method method, gh_join **out);
extern uint64_t gh_join_total(const gh_join *j);
extern gh_status gh_join_next(gh_join *j, gh_pair *out, size_t cap,
							  size_t *nout);
extern gh_status gh_join_outer_matched(gh_join *j, uint8_t *flags);
extern void gh_join_free(gh_join *j);

/* ---- aggregation ---- */

typedef enum gh_valtype
{
	GH_INT64 = 0,
	GH_FLOAT64 = 1
} gh_valtype;

#define GH_AGG_SUM 0x1
#define GH_AGG_MIN 0x2
#define GH_AGG_MAX 0x4

/* One value column to aggregate per group. */
typedef struct gh_aggcol
{
	gh_valtype	type;
	int			ops;			/* GH_AGG_* bits; the non-null count is always
								 * computed */
	const void *values;			/* n int64_t or double */
	const uint8_t *nulls;		/* NULL, or n bytes: nonzero = SQL NULL,
								 * skipped */
} gh_aggcol;

/*
 * Results for one column, one entry per group (arrays owned by gh_groups).
 * Only the arrays the column's operations fill are there; the others are
 * NULL (a count alone has only nonnull).  A result brought out of a device
 * leaves out what it can (tens of millions of groups cross the bus and the
 * GPU service's reply): nonnull may be the gh_groups' own rows array (a
 * column that had no NULL), and sum_hi may be NULL where every sum fits in
 * int64 (read it with gh_sum_hi).
 */
typedef struct gh_aggresult
{
	int64_t    *nonnull;		/* values that were not NULL; may be rows */
	/*
	 * Sums.  GH_INT64 columns: the exact 128-bit sum as sum_hi:sum_lo (two's
	 * complement; sum_hi NULL: every sum fits in int64, so the high words
	 * are the signs of the low ones); gh_sum_fits_int64 says whether it
	 * fits in int64.  GH_FLOAT64 columns: fsum.
	 */
	uint64_t   *sum_lo;
	int64_t    *sum_hi;
	double	   *fsum;
	/* min/max: imin/imax for GH_INT64, fmin/fmax for GH_FLOAT64; unset where
	 * nonnull is 0. */
	int64_t    *imin;
	int64_t    *imax;
	double	   *fmin;
	double	   *fmax;
} gh_aggresult;

typedef struct gh_groups
{
	size_t		ngroups;
	uint64_t   *keys;			/* the group keys, in unspecified order */
	int64_t    *rows;			/* count(*) per group */
	int			ncols;
	gh_aggresult *cols;
	int			partitions;		/* hash-range passes it took */
	uint64_t	input_rows;		/* rows grouped (gh_join_aggregate: the join's pairs) */
	int			ndevices;		/* devices that aggregated a partition */
	int			devices[GH_MAX_DEVICES];	/* their ids, as gh_table_devices */
} gh_groups;

/*
 * Group n keys and aggregate ncols value columns per group.  NULL values are
 * skipped per column, as SQL does.  Float sums are added in an unspecified
 * order (so may differ in the last bits from a sequential sum).
 */
extern gh_status gh_aggregate(gh_engine *e, const uint64_t *keys, size_t n,
							  const gh_aggcol *cols, int ncols,
							  gh_groups **out);
extern void gh_groups_free(gh_groups *g);

/*
 * Several results of the same aggregation over different rows (each made by
 * gh_aggregate, gh_star_result, ...: the same columns and operations) as
 * one: equal keys combined, rows and input_rows added, the devices of all
 * named.  The pieces stay the caller's.
 */
extern gh_status gh_groups_combine(gh_engine *e, gh_groups *const *pieces, int npieces,
								   gh_groups **out);

/* ---- join and aggregation in one ---- */

/*
 * Group the pairs of a join and aggregate columns of either side per group,
 * the pairs never leaving the device.  The join is that of gh_join_begin
 * (t, keys, n, method).  A pair (o, r) -- probe key index o, build row
 * number r -- belongs to the group whose key is outer_keys[o] | inner_keys[r]
 * (an absent array counts as 0): the caller packs each side's grouping
 * columns into bits of its own.  Column c reads cols[c].values[o] and
 * nulls[o] (n entries) when col_inner[c] is 0, values[r] and nulls[r]
 * (inner_rows entries) when it is 1; every row number given to gh_build must
 * then be below inner_rows.  The result is what gh_aggregate returns for the
 * keys and values of all pairs; input_rows is the number of pairs.
 */
typedef struct gh_joinagg
{
	const uint64_t *outer_keys;	/* n entries, or NULL */
	const uint64_t *inner_keys;	/* inner_rows entries, or NULL */
	size_t		inner_rows;
	const gh_aggcol *cols;
	const uint8_t *col_inner;	/* ncols entries; NULL: every column outer */
	int			ncols;
} gh_joinagg;

extern gh_status gh_join_aggregate(gh_table *t, const uint64_t *keys, size_t n,
								   gh_join_method method, const gh_joinagg *spec,
								   gh_groups **out);

static inline bool
gh_sum_fits_int64(uint64_t lo, int64_t hi)
{
	return (hi == 0 && (int64_t) lo >= 0) || (hi == -1 && (int64_t) lo < 0);
}

/* The high word of group i's sum in r (sum_lo present) */
static inline int64_t
gh_sum_hi(const gh_aggresult *r, size_t i)
{
	return r->sum_hi != NULL ? r->sum_hi[i] : (int64_t) r->sum_lo[i] >> 63;
}

/* ---- devices and benchmarks ---- */

typedef struct gh_device_info
{
	int			id;
	char		name[256];
	int			cc_major;
	int			cc_minor;
	int			sm_count;
	size_t		mem_total;
	size_t		mem_free;
	int			driver_version;	/* as CUDA encodes it: 1000*major + 10*minor */
	int			runtime_version;
} gh_device_info;

/*
 * The GPUs this process can see, without creating an engine.  Returns the
 * number written (at most max); 0 where there is no GPU or no driver, which
 * is not an error.
 */
extern int	gh_list_devices(gh_device_info *out, int max);

typedef enum gh_bench_op
{
	GH_BENCH_BUILD = 0,			/* build a table of n keys */
	GH_BENCH_PROBE,				/* HashGraph: n lookups, all present */
	GH_BENCH_FIND_HIT,			/* BCHT: n lookups, all present */
	GH_BENCH_FIND_MISS,			/* BCHT: n lookups, all absent */
	GH_BENCH_JOIN,				/* list-intersection join, n x n keys */
	GH_BENCH_AGGREGATE,			/* group n keys (n/16 groups): count, sum, min, max */
	GH_BENCH_AGGREGATE_FEW		/* the same into GH_BENCH_FEW_GROUPS groups */
} gh_bench_op;

/* Groups of the few-groups aggregation benchmark (n of them if n is fewer). */
#define GH_BENCH_FEW_GROUPS 4096

/* The distinct keys of an aggregation benchmark of n rows. */
static inline size_t
gh_bench_groups(gh_bench_op op, size_t n)
{
	if (op == GH_BENCH_AGGREGATE_FEW)
		return n < GH_BENCH_FEW_GROUPS ? n : GH_BENCH_FEW_GROUPS;
	return n / 16 > 0 ? n / 16 : 1;
}

/* Whether a benchmark aggregates (no table, no probe). */
#define GH_BENCH_AGGREGATES(op) ((op) == GH_BENCH_AGGREGATE || (op) == GH_BENCH_AGGREGATE_FEW)

/* One device's share of a benchmark run on several devices. */
typedef struct gh_bench_device
{
	int			id;				/* as gh_table_devices reports it */
	uint64_t	keys;			/* keys it held after the exchange */
	double		ms;				/* its operation, after the exchange (median) */
	double		mkeys_per_s;	/* keys / ms, in millions per second */
} gh_bench_device;

typedef struct gh_bench_result
{
	double		ms;				/* median of the timed runs */
	double		mkeys_per_s;	/* n / ms, in millions per second */
	uint64_t	bytes_moved;	/* least bytes the operation must move */
	uint64_t	check;			/* a result count, to prove work was done */
	/*
	 * Several devices: ms is the whole operation (exchange included, from
	 * the first device's start to the last one's end); exchange_ms the
	 * all-to-all exchange of the timed input, median over runs; dev[] each
	 * device's share.  One device: exchange_ms = 0, ndevices = 1.
	 */
	double		exchange_ms;
	double		exchange_gb_per_s;	/* bytes crossing devices / exchange_ms */
	int			ndevices;
	gh_bench_device dev[GH_MAX_DEVICES];
} gh_bench_result;

/*
 * Time one operation of one table kind on n random 64-bit keys generated on
 * the device, with 64-bit row numbers; warm-up first, then the median of
 * reps runs (device events on CUDA).  Only the operation is timed, not the
 * data generation or host transfers.  load_factor applies to BCHT
 * (0 = the engine's default).
 *
 * On an engine of several devices the keys are generated in equal slices,
 * one per device, and a timed run is the multi-device operation: the timed
 * input is exchanged all-to-all by hash range (peer-to-peer copies where
 * the devices can reach each other, through pinned host memory where not),
 * then every device runs the operation on its range, all at once.  For
 * probe, find and join the table is built (exchanged the same way) before
 * the timed runs.
 */
extern gh_status gh_bench(gh_engine *e, gh_bench_op op, gh_kind kind,
						  size_t n, int reps, double load_factor,
						  gh_bench_result *out);

/* ---- rows of heap pages ---- */

/*
 * Reading PostgreSQL heap pages (heap_page.h spells out the layout): the
 * columns of every LP_NORMAL tuple of a list of pages.  Attributes
 * 1..natts are walked, all of fixed width; out_of[a] names the output
 * column of attribute a+1 (-1: not wanted).  An output column holds 1-, 2-,
 * 4- or 8-byte values, as PostgreSQL's fetch_att makes Datums of them.
 */
#define GH_PAGE_MAX_ATTS 64
#define GH_PAGE_MAX_OUT 16

typedef struct gh_pagespec
{
	uint32_t	page_size;		/* bytes per page, a multiple of 16 */
	uint32_t	max_tuples;		/* line pointers a page can hold */
	int			natts;
	int			nout;
	int16_t		attlen[GH_PAGE_MAX_ATTS];
	uint8_t		attalign[GH_PAGE_MAX_ATTS]; /* 1, 2, 4 or 8 */
	int8_t		out_of[GH_PAGE_MAX_ATTS];
	/*
	 * 0: every tuple is visible (the pages are all-visible); else the xmin
	 * of the reader's MVCC snapshot, against which the tuples of a page
	 * without PD_ALL_VISIBLE are judged by their hint bits
	 * (gh_tuple_visibility): the invisible ones skipped, and a page with one
	 * they cannot judge GH_STAR_PAGE_UNSURE (gh_star_read) or bad
	 * (gh_extract_pages, gh_pages_read).
	 */
	uint32_t	vis_horizon;
} gh_pagespec;

/*
 * Where the rows go (the caller's arrays).  Page p's rows are
 * [first[p], first[p + 1]), in line pointer order; a malformed page
 * (bad[p] = 1) has none and must be read some other way.
 */
typedef struct gh_pagerows
{
	size_t		cap;			/* rows the arrays hold: npages * max_tuples */
	uint64_t   *values[GH_PAGE_MAX_OUT];
	uint8_t    *nulls[GH_PAGE_MAX_OUT];	/* nonzero: SQL NULL */
	uint32_t   *first;			/* npages + 1 entries */
	uint8_t    *bad;			/* npages entries */
	size_t		nrows;			/* out: rows written */
} gh_pagerows;

/*
 * The rows of npages pages, page p starting at base + pages[p] * page_size
 * in host memory.  The CUDA backend reads the pages over the bus straight
 * from host memory registered with gh_register_host, and through a staging
 * copy otherwise.  The caller keeps the pages from changing, or checks
 * afterwards that they did not.
 */
extern gh_status gh_extract_pages(gh_engine *e, const gh_pagespec *spec,
								  const void *base, const uint32_t *pages,
								  size_t npages, gh_pagerows *out);

/*
 * Heap page rows straight into device arrays, as a parallel aggregation's
 * pool keeps its rows (gh_darray below): each row's packed grouping key,
 * its NULL pattern and its aggregate columns' values and NULL flags are
 * made on the device from the columns gh_extract_pages would give, and
 * only the rows of the pages the caller still trusts after the read are
 * appended, grouped by NULL pattern.
 *
 *	gh_pages_read		read and encode the pages' rows (-> a batch)
 *	gh_pagebatch_bad	which pages were malformed
 *	gh_pagebatch_keep	keep the rows of the pages not dropped; rows per pattern
 *	gh_pagebatch_append	append one pattern's rows to the caller's arrays
 *	gh_pagebatch_free
 *
 * A grouping column whose value is NULL sets bit `bit` of the row's
 * pattern and adds nothing to the key; otherwise its value (modulo mod when
 * mod is not 0, as PostgreSQL's int2mod, int4mod and int8mod compute it in
 * width bytes; x % -1 is 0) is cut to width bytes (1, 2, 4 or 8), masked
 * and shifted into the key.  An aggregate column (gh_pageval) holds 0 for a
 * NULL; col -1 names no column: 0, never NULL.
 *
 * A key with null_in_key set marks a NULL by key bit nullbit instead of a
 * pattern bit (a fused join's keys, whose NULL flags travel in the key).
 * With njkeys > 0 each row also gets a join key: each column's value
 * (conv as for values), cut to width bits and shifted; a row with a NULL
 * join key column joins nothing and is not kept.
 *
 * GH_ERR_INVALID for: a bad page description (as gh_extract_pages), more
 * than GH_PAGE_MAX_KEYS keys or GH_PAGE_MAX_VALS values, a key or value
 * naming no output column, a width not 1, 2, 4 or 8, a shift over 63, a bit
 * over 7, an unknown conv; keeping twice, appending before keeping, a
 * pattern outside 0..255, keys NULL, values NULL (or one of its nvals
 * entries NULL), or nulls[v] NULL for a column with NULLs among rows kept
 * of that pattern.
 */
#define GH_PAGE_MAX_KEYS 8
#define GH_PAGE_MAX_VALS 32

typedef struct gh_pagekey
{
	int8_t		col;			/* output column of the page description */
	uint8_t		bit;			/* its bit in the NULL pattern */
	uint8_t		width;			/* bytes: 1, 2, 4 or 8 */
	uint8_t		shift;			/* where it sits in the key */
	uint64_t	mask;			/* applied before the shift */
	int64_t		mod;			/* 0: the value itself */
	uint8_t		null_in_key;	/* a NULL sets key bit nullbit, not pattern bit bit */
	uint8_t		nullbit;
} gh_pagekey;

typedef enum gh_pageconv
{
	GH_PAGEVAL_ZERO = 0,		/* 0 (counts need only the NULL flag) */
	GH_PAGEVAL_SIGNED,			/* the value as read: 1-, 2-, 4-byte ones sign-extended */
	GH_PAGEVAL_UNSIGNED32		/* the low 32 bits, zero-extended (oid) */
} gh_pageconv;

typedef struct gh_pageval
{
	int8_t		col;			/* output column, or -1 */
	uint8_t		conv;			/* gh_pageconv */
} gh_pageval;

typedef struct gh_pagejkey
{
	int8_t		col;			/* output column */
	uint8_t		conv;			/* GH_PAGEVAL_SIGNED or GH_PAGEVAL_UNSIGNED32 */
	uint8_t		width;			/* bits, 1..64 */
	uint8_t		shift;
} gh_pagejkey;

typedef struct gh_pageenc
{
	int			nkeys;
	gh_pagekey	key[GH_PAGE_MAX_KEYS];
	int			nvals;
	gh_pageval	val[GH_PAGE_MAX_VALS];
	int			njkeys;			/* 0: no join keys */
	gh_pagejkey jkey[GH_PAGE_MAX_KEYS];
} gh_pageenc;

typedef struct gh_pagebatch gh_pagebatch;
struct gh_darray;				/* below */

/*
 * Read and encode the rows of npages pages (as gh_extract_pages reads
 * them) into a new batch, held in the engine's memory until freed.
 */
extern gh_status gh_pages_read(gh_engine *e, const gh_pagespec *spec, const gh_pageenc *enc,
							   const void *base, const uint32_t *pages, size_t npages,
							   gh_pagebatch **out);
/* npages flags: 1 for a malformed page, whose rows gh_pagebatch_keep drops */
extern const uint8_t *gh_pagebatch_bad(const gh_pagebatch *b);
/* Does aggregate column val have a NULL in some row read (a row with no join key aside)? */
extern bool gh_pagebatch_has_nulls(const gh_pagebatch *b, int val);
/*
 * Keep the rows of the pages whose drop flag is 0 (drop NULL: all) and not
 * malformed, grouped by NULL pattern: counts[p] rows of pattern p (256
 * entries).  Once per batch.
 */
extern gh_status gh_pagebatch_keep(gh_pagebatch *b, const uint8_t *drop, uint64_t counts[256]);
/*
 * Append the kept rows of pattern to keys (8 bytes a row) and to each
 * aggregate column's values[v] (8 bytes a row) and nulls[v] (1 byte a row;
 * NULL: not kept, allowed only where the batch has no NULL there).
 */
extern gh_status gh_pagebatch_append(gh_pagebatch *b, int pattern, struct gh_darray *keys,
									 struct gh_darray *const *values,
									 struct gh_darray *const *nulls);
/*
 * Append the kept rows of pattern's join keys (8 bytes a row) to jkeys;
 * with join keys, gh_pagebatch_append takes keys NULL (grouping keys not
 * kept).  GH_ERR_INVALID without join keys or before keeping.
 */
extern gh_status gh_pagebatch_append_jkeys(gh_pagebatch *b, int pattern,
										   struct gh_darray *jkeys);
extern void gh_pagebatch_free(gh_pagebatch *b);

/*
 * Register host memory (a long-lived mapping, such as PostgreSQL's shared
 * buffers) for direct reads by the devices: once per process; the
 * registration lasts until the process exits.  A no-op for the CPU backend.
 */
extern gh_status gh_register_host(gh_engine *e, void *base, size_t bytes);
/*
 * Register the range in a background thread instead (CUDA only: pinning a
 * large mapping takes seconds, longer where its pages were never touched),
 * so that the caller goes on serving requests meanwhile;
 * gh_host_registered turns true when it is done.  GH_ERR_INVALID if a range
 * is registered or being registered already.  The thread blocks every
 * signal and calls nothing but the CUDA driver.
 */
#define GH_REGISTER_NONE 0
#define GH_REGISTER_RUNNING 1
#define GH_REGISTER_DONE 2
#define GH_REGISTER_FAILED 3
extern gh_status gh_register_host_start(void *base, size_t bytes);
/* GH_REGISTER_*; once done or failed, how long it took and the error */
extern int	gh_register_host_status(double *seconds, const char **error);
/* Is [base, base + bytes) inside memory registered by gh_register_host? */
extern bool gh_host_registered(const void *base, size_t bytes);

/*
 * Pin [base, base + bytes) (page-aligned, already mapped) for fast copies to
 * the devices until gh_unpin_host(base), for an array that is about to be
 * copied whole: pinning takes about half as long as the copy from pinned
 * memory, which is several times faster than from pageable memory.  Best
 * effort: false (and the engine's state untouched) if the backend has
 * nothing to pin or the driver refuses; the memory is then copied as it is.
 * Unpin before unmapping or moving the range.
 */
extern bool gh_pin_host(gh_engine *e, void *base, size_t bytes);
extern void gh_unpin_host(gh_engine *e, void *base);

/*
 * memcpy of each of ncopies arrays (non-overlapping), cut into 4 MB pieces
 * copied on up to 4 threads: one thread copying into fresh memory moves
 * about 4 GB/s.  The threads block every signal and call nothing but
 * memcpy, so this is safe inside a PostgreSQL process.
 */
typedef struct gh_copy
{
	void	   *dst;
	const void *src;
	size_t		bytes;
} gh_copy;
extern void gh_copy_host(const gh_copy *copies, int ncopies);

/* ---- arrays kept on the device ---- */

/*
 * gh_darray: an array the engine keeps while the caller appends to it in
 * pieces -- the rows a parallel query's processes send as they read them --
 * in device memory where it can, so that the rows cross the bus as they
 * arrive rather than all at once when the operation starts, and take no
 * host memory.  gh_darray_data() may then be given to gh_aggregate as its
 * keys, a column's values or its nulls; other operations take host arrays
 * only.
 *
 * Placement is the engine's: device index 0 of a CUDA engine of one device,
 * while its device arrays stay within an eighth of the memory limit (the
 * operation that reads them needs the rest) and the device has room; host
 * memory otherwise (the CPU backend, several devices, on_device false, or
 * an append that would pass the limit, which moves the array to host
 * memory first), grown by remapping, without copies.  The data pointer is
 * valid until the next append or free.  gh_close frees what is left.
 */
typedef struct gh_darray gh_darray;

extern gh_status gh_darray_create(gh_engine *e, bool on_device, gh_darray **out);
/* Append bytes from host memory at src; src NULL appends zero bytes. */
extern gh_status gh_darray_append(gh_darray *a, const void *src, size_t bytes);
extern const void *gh_darray_data(const gh_darray *a);
extern size_t gh_darray_bytes(const gh_darray *a);
extern bool gh_darray_on_device(const gh_darray *a);
/*
 * A host array about to be copied to the devices whole: pin it (as
 * gh_pin_host; false if it is on the device or the pin is refused) until
 * gh_darray_unpin, or an append or free.
 */
extern bool gh_darray_pin(gh_darray *a);
extern void gh_darray_unpin(gh_darray *a);
extern void gh_darray_free(gh_darray *a);
/*
 * For a caller that goes on without the device (its CPU fallback): move an
 * array to host memory, its bytes copied back (it stays there: later
 * appends go to host memory too); fails where the device cannot give the
 * bytes back (a device fault that lost them).  And forget the bytes past
 * bytes (an append that failed part way), which never touches the device.
 */
extern gh_status gh_darray_to_host(gh_darray *a);
extern void gh_darray_truncate(gh_darray *a, size_t bytes);

/* ---- the star pipeline: heap pages through a program, joined, aggregated ---- */

/*
 * An analytical query over one large relation (the fact table) joined with
 * any number of small ones (dimensions) runs as one pipeline on the device:
 * the fact table's heap pages are read (gh_pagespec, varlena columns
 * included), and every tuple is run through a small program (gh_prog) that
 * evaluates the scan's quals, looks the row up in each dimension (gh_dim),
 * computes the group key and the aggregates' arguments; the rows the
 * program keeps are aggregated into a table of groups that lives in the
 * star (gh_star) across all the batches of pages of a query.  Only the
 * groups come back.  star_vm.h has the interpreter, shared by both
 * backends; the caller (src/star_compile.c) makes the programs.
 *
 * THE PROGRAM
 *
 * Registers hold a value and a NULL flag: integers (every integer type,
 * bool as 0/1, date, time, timestamp, oid zero-extended) sign-extended in
 * lo; float4 and float8 values as the double in lo's bits; numerics as a
 * 128-bit integer (hi:lo) scaled by a static scale the program knows, with
 * their display scale (dscale) alongside; text as the address of its bytes
 * (lo) and their length (hi).  Instructions (gh_instr: op, dst, a, b, imm)
 * follow PostgreSQL's semantics: a NULL operand gives NULL without raising
 * anything; integer overflow and division by zero are data errors
 * (GH_DATAERR_*), as PostgreSQL raises them; a value the device cannot
 * represent (a compressed or external varlena, a numeric NaN or one that
 * does not fit 128 bits, a string too long to pack) makes the row escape:
 * its page is handed back to the caller, which reads it on the CPU.
 *
 * A row ends kept (GH_OP_END), or dropped (a qual not true, a dimension
 * without its key).  A kept row has a 64-bit group key (GH_OP_KEYPACK,
 * GH_OP_KEYMIX) and its output columns (GH_OP_OUT_*), which the star
 * aggregates as gh_aggregate would (prog.outs: type and operations each).
 */
#define GH_PROG_MAX_CODE	512
#define GH_PROG_MAX_CONSTS	128
#define GH_PROG_MAX_BYTES	2048
#define GH_PROG_MAX_REGS	32
#define GH_PROG_MAX_OUTS	64
#define GH_PROG_MAX_DIMS	16
#define GH_PROG_MAX_DIMCOLS 32

typedef enum gh_opcode
{
	/* control */
	GH_OP_END = 0,				/* the row is kept */
	GH_OP_DROP,					/* the row is dropped */
	GH_OP_QUAL,					/* drop the row unless a is true */
	GH_OP_JMP,					/* pc = imm */
	GH_OP_JFALSE,				/* pc = imm if a is NULL or false */
	GH_OP_JNULL,				/* pc = imm if a is NULL */
	GH_OP_JNOTNULL,				/* pc = imm if a is not NULL */
	/*
	 * dst AND= a, three-valued: a false (not NULL) sets dst false and jumps
	 * to imm (the rest is not evaluated, as PostgreSQL's AND stops); a NULL
	 * marks dst NULL and goes on.  Start dst with GH_OP_BOOL 1.  OR alike.
	 */
	GH_OP_AND,
	GH_OP_OR,
	GH_OP_BOOL,					/* dst = imm (0 or 1), not NULL */
	GH_OP_NOT,					/* dst = NOT a */
	GH_OP_ISNULL,				/* dst = a IS NULL */
	GH_OP_ISNOTNULL,
	GH_OP_MOVE,					/* dst = a */
	GH_OP_SETNULL,				/* dst = NULL */
	/* loads */
	GH_OP_LDCONST,				/* dst = consts[imm]; b = 1: a text constant */
	GH_OP_LDCOL_INT,			/* dst = column imm, b bytes (1, 2, 4, 8), sign-extended */
	GH_OP_LDCOL_UINT,			/* dst = column imm, b bytes, zero-extended (oid) */
	GH_OP_LDCOL_F4,				/* dst = float4 column imm, as a double */
	GH_OP_LDCOL_F8,
	GH_OP_LDCOL_NUM,			/* dst = numeric column imm at static scale b */
	GH_OP_LDCOL_TEXT,			/* dst = varlena column imm (text, varchar, bpchar) */
	GH_OP_PROBE,				/* look key a up in dimension imm, as b says
								 * (GH_PROBE_*) */
	GH_OP_LDDIM,				/* dst = dimension imm >> 8's column imm & 255, of its row
								 * (NULL where a LEFT probe found none) */
	/* integers: b's PostgreSQL width in imm (16, 32, 64) for the range checks */
	GH_OP_IADD,					/* dst = a + b */
	GH_OP_ISUB,
	GH_OP_IMUL,
	GH_OP_IDIV,					/* truncating; b = 0: division by zero */
	GH_OP_IMOD,					/* b = -1 gives 0 */
	GH_OP_INEG,					/* dst = -a */
	GH_OP_ICAST,				/* dst = a, checked to fit imm bits */
	GH_OP_I2F,					/* dst = (double) a */
	GH_OP_I2N,					/* dst = a as a numeric of scale 0 */
	/* comparisons: imm is a GH_CMP_*, dst a bool */
	GH_OP_ICMP,					/* integers (dates, timestamps, bools) */
	GH_OP_FCMP,					/* doubles: NaN equals NaN and is above all */
	GH_OP_NCMP,					/* numerics of one static scale */
	GH_OP_DTCMP,				/* date a against timestamp b (date_cmp_timestamp) */
	GH_OP_TCMP,					/* text a against b: EQ or NE; imm | GH_CMP_BPCHAR
								 * ignores trailing spaces (bpchar) */
	GH_OP_LIKE,					/* dst = text a LIKE pattern b (like_match.c's
								 * MatchText, no escapes: % and _ wild, the rest
								 * bytes); imm 1: _ is one UTF-8 character, 0: one
								 * byte (a single-byte encoding) */
	GH_OP_TLEN,					/* dst = the length of text a (int4): imm & 1: in
								 * UTF-8 characters, else in bytes; imm & 2: its
								 * trailing spaces not counted (bpcharlen) */
	GH_OP_SUBSTR,				/* dst = text a's characters from the b-th (int4;
								 * 1 the first, as substring(a from b for n):
								 * text_substring), n = imm >> 2 of them, or
								 * every one left where imm >> 2 is -1; imm & 1:
								 * characters of UTF-8, else bytes; imm & 2:
								 * a's trailing spaces dropped first (bpchar's
								 * cast to text) */
	/* doubles: PostgreSQL's overflow, underflow and division checks */
	GH_OP_FADD,
	GH_OP_FSUB,
	GH_OP_FMUL,
	GH_OP_FDIV,
	GH_OP_FNEG,
	GH_OP_F4ADD,				/* float4: computed, rounded and checked as float */
	GH_OP_F4SUB,
	GH_OP_F4MUL,
	GH_OP_F4DIV,
	GH_OP_F2ORD,				/* dst = an int64 ordered as the doubles (NaN last;
								 * imm 1: -0 is 0, else just below it) */
	GH_OP_FROUND,				/* dst = a rounded as imm (GH_ROUND_*) says: dround
								 * (rint), dfloor, dceil, dtrunc */
	GH_OP_F2I,					/* dst = double a as an integer of imm bits (dtoi2,
								 * dtoi4, dtoi8: rint, then NaN or out of range
								 * raises the range error) */
	/* numerics: int128 at static scales, display scales as PostgreSQL's */
	GH_OP_NADD,					/* a and b of one static scale */
	GH_OP_NSUB,
	GH_OP_NMUL,					/* scale: the sum of a's and b's */
	GH_OP_NNEG,
	GH_OP_NSCALE,				/* dst = a x 10^imm: a's static scale raised by imm */
	GH_OP_N2F,					/* dst = numeric a of static scale imm as the double
								 * nearest it (numeric_float8's); a numeric beyond
								 * 2^53 or of a scale above 19 escapes */
	GH_OP_NROUND,				/* dst = numeric a with its b lowest digits dropped
								 * (its static scale lowered by b), rounded as imm &
								 * 255 says (GH_ROUND_*: NEAREST rounds half away
								 * from zero, as round_var), display scale imm >> 8 */
	GH_OP_N2I,					/* dst = numeric a of static scale 0 as an integer of
								 * imm bits; out of range raises the range error */
	/* text */
	/* dates: dst = field imm & 255 (GH_DATEPART_*) of date a (b = 0: days)
	 * or timestamp a (b = 1: microseconds), as EXTRACT gives it (an integer:
	 * the compiler makes it a numeric of scale 0 or a double), or as
	 * date_trunc (a timestamp); imm >> 8: a time zone's fixed offset in
	 * seconds east of UTC, for a timestamptz (its local time's fields) or a
	 * date or truncation made a timestamptz; what PostgreSQL would not answer
	 * with one escapes */
	GH_OP_DATEPART,
	GH_OP_TPACK,				/* dst = a's bytes 7c .. 7c + 6 (c = imm >> 8) packed in
								 * 64 bits, their count in the top byte; imm & 1:
								 * trailing spaces dropped first (bpchar); imm & 2: a
								 * later chunk follows, else a longer text escapes */
	/* the row's outputs */
	GH_OP_KEYPACK,				/* key |= (a & (2^w - 1)) << s, imm = s | w << 8 |
								 * (n + 1) << 16: a NULL sets key bit n instead (n
								 * -1: a is never NULL) */
	GH_OP_KEYMIX,				/* key = mix(key, a) with its imm highest bits
								 * cleared (0 .. 63): for keys wider than 64 bits;
								 * a narrower key makes groups collide for tests */
	GH_OP_OUT_INT,				/* output column dst = a (int64) */
	GH_OP_OUT_F8,				/* output column dst = a (double) */
	GH_OP_OUT_NUM,				/* numeric a of static scale b: its limbs (base 10^16,
								 * limb j holding the value's digits 10^16j ..
								 * 10^(16j+15), signed) in columns dst .. dst + n - 1
								 * for j = j0 .. j0 + n - 1, imm = (j0 & 255) | n << 8,
								 * and its display scale in column dst + n */
	GH_OP_OUT_NULL,				/* output columns dst .. dst + imm - 1 are NULL */
	GH_OP_COUNT_
} gh_opcode;

/*
 * GH_OP_PROBE's joins: INNER drops a row whose key is NULL or absent; LEFT
 * keeps it, and the dimension's values load as NULL (a LEFT JOIN of the
 * fact table); ANTI drops a row whose key is present, keeping a NULL or
 * absent one (NOT EXISTS), and loads nothing of the dimension.
 */
#define GH_PROBE_INNER	0
#define GH_PROBE_LEFT	1
#define GH_PROBE_ANTI	2

/*
 * The fields of GH_OP_DATEPART: EXTRACT's (integers; HOUR and MINUTE of
 * timestamps only), a date's days (DAYS: escapes an infinite one), a
 * timestamp's date (DATE: escapes an infinite one), and date_trunc's (TRUNC: the timestamp that starts the unit holding a; an
 * infinite value stays infinite).
 */
#define GH_DATEPART_YEAR 0
#define GH_DATEPART_QUARTER 1
#define GH_DATEPART_MONTH 2
#define GH_DATEPART_DAY 3
#define GH_DATEPART_DOW 4		/* 0 (Sunday) .. 6 */
#define GH_DATEPART_ISODOW 5	/* 1 (Monday) .. 7 */
#define GH_DATEPART_DOY 6		/* 1 .. 366 */
#define GH_DATEPART_WEEK 7		/* ISO 8601 week, 1 .. 53 */
#define GH_DATEPART_ISOYEAR 8	/* ISO 8601 year, no year 0 */
#define GH_DATEPART_HOUR 9
#define GH_DATEPART_MINUTE 10
#define GH_DATEPART_DAYS 11
#define GH_DATEPART_DATE 12		/* a timestamp's date (timestamp_date): days */
#define GH_DATETRUNC_YEAR 16
#define GH_DATETRUNC_QUARTER 17
#define GH_DATETRUNC_MONTH 18
#define GH_DATETRUNC_WEEK 19
#define GH_DATETRUNC_DAY 20
#define GH_DATETRUNC_HOUR 21
#define GH_DATETRUNC_MINUTE 22
#define GH_DATETRUNC_SECOND 23

/* GH_OP_FROUND's and GH_OP_NROUND's ways of rounding */
#define GH_ROUND_NEAREST 0		/* floats: rint, ties to even; numerics: ties away */
#define GH_ROUND_FLOOR 1
#define GH_ROUND_CEIL 2
#define GH_ROUND_TRUNC 3		/* toward zero */

/* comparisons (GH_OP_*CMP imm) */
#define GH_CMP_EQ 0
#define GH_CMP_NE 1
#define GH_CMP_LT 2
#define GH_CMP_LE 3
#define GH_CMP_GT 4
#define GH_CMP_GE 5
#define GH_CMP_BPCHAR 8

/* The data errors a program raises, as PostgreSQL raises them (SQLSTATE). */
typedef enum gh_dataerr
{
	GH_DATAERR_NONE = 0,
	GH_DATAERR_INT2_RANGE,		/* 22003 smallint out of range */
	GH_DATAERR_INT4_RANGE,		/* 22003 integer out of range */
	GH_DATAERR_INT8_RANGE,		/* 22003 bigint out of range */
	GH_DATAERR_DIV_ZERO,		/* 22012 division by zero */
	GH_DATAERR_FLOAT_OVERFLOW,	/* 22003 value out of range: overflow */
	GH_DATAERR_FLOAT_UNDERFLOW, /* 22003 value out of range: underflow */
	GH_DATAERR_COUNT_
} gh_dataerr;

typedef struct gh_instr
{
	uint8_t		op;				/* gh_opcode */
	uint8_t		dst;
	uint8_t		a;
	uint8_t		b;
	int32_t		imm;
} gh_instr;

/* A constant: a register's value (text: lo is an offset into bytes). */
typedef struct gh_pconst
{
	int64_t		lo;
	int64_t		hi;
	uint8_t		null;
	uint8_t		dscale;
} gh_pconst;

/* An output column: what the star aggregates of it per group. */
typedef struct gh_pout
{
	uint8_t		type;			/* gh_valtype */
	uint8_t		ops;			/* GH_AGG_* */
} gh_pout;

typedef struct gh_prog
{
	int			ncode;
	gh_instr	code[GH_PROG_MAX_CODE];
	int			nconsts;
	gh_pconst	consts[GH_PROG_MAX_CONSTS];
	int			nbytes;
	uint8_t		bytes[GH_PROG_MAX_BYTES];
	int			nregs;			/* registers used: 0 .. nregs - 1 */
	int			ndims;			/* dimensions probed: 0 .. ndims - 1 */
	int			nouts;
	gh_pout		outs[GH_PROG_MAX_OUTS];
} gh_prog;

/*
 * Check a program against a page description and dimensions: every opcode
 * known, registers, constants, columns, dimensions and jumps in range (jumps
 * forward only, so every program ends, and the last instruction END or
 * DROP); column loads of the column's width (LDCOL_INT and _UINT of attlen
 * bytes, _F4 of 4, _F8 of 8, _NUM and _TEXT of a varlena); OUT_INT and
 * OUT_NUM into GH_INT64 outputs, OUT_F8 into GH_FLOAT64 ones (ndims: as
 * many as prog->ndims).  Along every path: each register written before it
 * is read, TCMP and TPACK only on registers that hold text or NULL (text
 * loads and constants, SETNULL, MOVEs of them), LDDIM only after its
 * dimension's PROBE, every output written before END.  NULL if it is
 * sound, or what is wrong; gh_star_create checks with it.
 */
extern const char *gh_prog_check(const gh_prog *p, const gh_pagespec *spec,
								 const int *dim_ncols, int ndims);

/*
 * A dimension: n rows with distinct 64-bit keys (the join key's exact
 * encoding), each carrying ncols payload values that GH_OP_LDDIM loads.
 * A key given twice is GH_ERR_DUPLICATE_KEY (nothing made), so that the
 * caller may give keys it only believes distinct.  The arrays are read
 * during the call.
 */
typedef struct gh_dimcol
{
	const int64_t *lo;			/* n values */
	const int64_t *hi;			/* NULL, or n high words (numerics) */
	const uint8_t *nulls;		/* NULL: never NULL */
	const uint8_t *dscale;		/* NULL: 0 (a numeric's display scale) */
} gh_dimcol;

typedef struct gh_dim gh_dim;

extern gh_status gh_dim_create(gh_engine *e, const uint64_t *keys, size_t n,
							   const gh_dimcol *cols, int ncols, gh_dim **out);

/*
 * The same of rows given in parts, one after another (each process's share
 * of a dimension, where it lies): row i of part p is row i of the parts
 * before it together, plus i.  A column's hi, nulls or dscale NULL in one
 * part and set in another reads as 0 in the first; lo is set in every part
 * that has rows.  The parts are read during the call.
 */
typedef struct gh_dimpart
{
	const uint64_t *keys;		/* n keys */
	size_t		n;
	gh_dimcol	cols[GH_PROG_MAX_DIMCOLS];
} gh_dimpart;

extern gh_status gh_dim_create_parts(gh_engine *e, const gh_dimpart *parts, int nparts,
									 int ncols, gh_dim **out);
extern size_t gh_dim_rows(const gh_dim *d);
extern void gh_dim_free(gh_dim *d);

/*
 * A star: a program over the pages of spec, its dimensions (which must
 * outlive it), and the groups of the rows kept so far.
 *
 *	gh_star_read	run the program over npages pages (as gh_extract_pages
 *					reads them); status[p] says what became of page p:
 *					GH_STAR_PAGE_OK, _BAD (malformed), _ESCAPE (a row the
 *					device cannot evaluate), _UNSURE (a tuple whose
 *					visibility its hint bits do not tell: spec.vis_horizon),
 *					_MISSED (a page only the page
 *					cache could give, GH_PAGE_CACHED_ONLY, that it holds no
 *					copy of: not read), or GH_STAR_PAGE_ERROR + a
 *					gh_dataerr (a row raised it; the first in page and line
 *					pointer order).  The rows wait for gh_star_keep.
 *	gh_star_keep	aggregate the rows read of the pages whose drop[p] is 0
 *					(drop NULL: all) that are OK: the caller drops the pages
 *					it no longer trusts and reads the others itself, and
 *					raises a kept page's error.  Once per read.
 *	gh_star_add		aggregate n rows made elsewhere (read on the CPU): their
 *					group keys and one column per program output, as
 *					gh_aggregate takes them
 *	gh_star_result	the groups of everything kept and added (caller frees)
 *
 * The star works on every device of the engine: each holds the
 * dimensions and a table of groups of its own and reads its share of each
 * read's pages (cuda/README, "The star pipeline on several devices"); the
 * result merges them and names every device.  Each read is followed by
 * its keep before the next read (a keep without a read, or a read before
 * the last is kept, is GH_ERR_INVALID).  A read that fails keeps nothing;
 * a keep or add that fails may have aggregated part of its rows, and the
 * star then refuses every call but gh_star_rows and gh_star_free.
 * gh_star_result may be called at any time, again; later keeps and adds
 * go on adding to the groups.
 */
#define GH_STAR_PAGE_OK		0
#define GH_STAR_PAGE_BAD	1
#define GH_STAR_PAGE_ESCAPE 2
#define GH_STAR_PAGE_MISSED 3
#define GH_STAR_PAGE_UNSURE 4
#define GH_STAR_PAGE_ERROR	16	/* + gh_dataerr */

typedef struct gh_star gh_star;

/*
 * The page description of a star may have varlena attributes (attlen -1,
 * attalign as the type's), to be walked over or read by GH_OP_LDCOL_NUM and
 * GH_OP_LDCOL_TEXT; the output columns of fixed width are 1, 2, 4 or 8 bytes.
 */
extern gh_status gh_star_create(gh_engine *e, const gh_prog *prog, const gh_pagespec *spec,
								gh_dim *const *dims, int ndims, gh_star **out);
extern gh_status gh_star_read(gh_star *s, const void *base, const uint32_t *pages,
							  size_t npages, uint8_t *status);
/*
 * gh_star_read of pages the caller names (names[p]: page p's name, below):
 * through the engine's page cache.
 */
struct gh_pagename;
extern gh_status gh_star_read_named(gh_star *s, const void *base, const uint32_t *pages,
									const struct gh_pagename *names, size_t npages,
									uint8_t *status);
extern gh_status gh_star_keep(gh_star *s, const uint8_t *drop);
extern gh_status gh_star_add(gh_star *s, const uint64_t *keys, size_t n,
							 const gh_aggcol *cols);
extern gh_status gh_star_result(gh_star *s, gh_groups **out);
/* rows the program kept (and rows added) so far; groups so far */
extern uint64_t gh_star_rows(const gh_star *s);
extern void gh_star_free(gh_star *s);

/* ---- the page cache ---- */

/*
 * Copies of heap pages kept on the engine's first device between reads (a
 * page the cache reads or fills is read by that device), so
 * that a page read again (by a later query over the same table) does not
 * cross the bus.  The caller names each page it reads (gh_star_read_named):
 * rel and block say which page, lsn which version of it.  A page read under
 * a name with a nonzero lsn is copied into the cache as it is read, and the
 * copy is kept once its read is kept (gh_star_keep: the page OK and not
 * dropped); a later read of the same name and lsn reads the copy instead of
 * host memory.  So the caller gives a nonzero lsn only where everything a
 * read takes from a page is determined by its name and lsn, and checks the
 * pages it reads as it would without the cache (a copy is of the version it
 * names, which the page may no longer be).
 *
 * A page the caller does not have in host memory is given as
 * GH_PAGE_CACHED_ONLY in pages[]: it is read from the copy of its name and
 * lsn where the cache holds one; else it is not read at all, and its status
 * is GH_STAR_PAGE_MISSED (nothing of it is kept; the caller reads it some
 * other way).  A read never replaces a copy it reads itself, so a cache
 * smaller than a read still gives every copy the read found.
 *
 * gh_page_cache_size: the cache may take up to bytes of device memory on
 * each of the engine's devices (0, the default: no cache; a size other than
 * the last empties it); a page's copy is kept on the device that reads it,
 * the same device for every read of its name.  It takes them in chunks as
 * it fills, never during an injected failure (gh_debug_inject_failure), and
 * counts them in gh_engine_device_bytes; a chunk the device has no room for
 * is not taken.  Full, a device's cache replaces the copy least recently
 * read (a clock).  Engines without device arrays have no cache.
 * gh_page_cache_info: its state and counts, summed over the devices (size:
 * bytes per device times the devices).
 */
/*
 * gh_star_read_copies: which pages of the last read (npages entries, as it
 * was given) were read from the cache's copies rather than from host memory
 * (copied[p] = 1).  A copy is the version its name says, so a page whose
 * name the caller took from it as it was then (its LSN, under its lock) and
 * that was read from a copy need not be checked for a change made while the
 * read ran: the read did not look at it.
 */
extern void gh_star_read_copies(const gh_star *s, uint8_t *copied, size_t npages);

typedef struct gh_pagename
{
	uint64_t	rel;			/* which relation */
	uint64_t	block;			/* which page of it */
	uint64_t	lsn;			/* which version of it; 0: not to be cached */
} gh_pagename;

/* pages[p] of a read for a page only the page cache may give (above) */
#define GH_PAGE_CACHED_ONLY UINT32_MAX

typedef struct gh_page_cache_info
{
	size_t		size;			/* bytes it may take */
	size_t		bytes;			/* device memory it holds */
	uint64_t	pages;			/* copies kept */
	uint64_t	hits;			/* named pages read from a copy */
	uint64_t	misses;			/* named pages the cache had no copy of */
} gh_page_cache_info;

extern void gh_page_cache_size(gh_engine *e, size_t bytes);
extern void gh_page_cache_info_get(const gh_engine *e, gh_page_cache_info *out);

/* ---- testing ---- */

/*
 * Make the engine fail, once, the after-th (0: the next) device operation or
 * device allocation on device index dev (0..ndevices-1) with status (a
 * GH_ERR_DEVICE_NOMEM or GH_ERR_DEVICE), as a real device failure would;
 * dev < 0 disarms.  For tests of the clean-up of failed multi-device
 * operations.
 */
extern void gh_debug_inject_failure(gh_engine *e, int dev, long after,
									gh_status status);

/*
 * Make the CUDA backend's all-to-all exchange go through pinned host memory
 * between every pair of devices, as between GPUs without peer access, even
 * where peer access is enabled (on: true).  For tests of that path.
 */
extern void gh_debug_stage_exchange(gh_engine *e, bool on);

/*
 * Split host inputs by hash range in chunks of rows rows (0: the default,
 * an equal share per host thread of at least 2^20 rows), so that tests with
 * small inputs split them on several threads; nonzero also spreads inputs
 * of any size over several GPUs (else only those of 2^15 rows or more).
 */
extern void gh_debug_split_chunk(gh_engine *e, size_t rows);

/*
 * Broadcast tables of at most rows rows (0: none; negative: the default,
 * GH_BROADCAST_MAX_ROWS), so that tests reach both ways of building on
 * several devices with small inputs.
 */
extern void gh_debug_broadcast_rows(gh_engine *e, long long rows);

/*
 * Scale the GPU's estimate of an aggregation's groups by scale (0: none),
 * so that tests reach a table of groups that turns out too small (and the
 * aggregation done again with room for every row).  No effect on the CPU
 * backend.
 */
extern void gh_debug_group_estimate(gh_engine *e, double scale);

/*
 * Cluster the rows of every aggregation into a global table of groups on
 * the GPU (cuda/README, "Clustered batches"), whatever their number (always:
 * true; false: the default, 2^20 rows or more into a table of 64 MB or
 * more), so that tests reach that path with small inputs.  No effect on the
 * CPU backend.
 */
extern void gh_debug_cluster(gh_engine *e, bool always);

/*
 * Build BCHT tables on the GPU as on devices before compute capability 9.0
 * (on: keys alone move while inserting and their row ranges are written
 * afterwards; off: the default, a key and its range move together in one
 * 16-byte atomic where the device has them), so that tests reach both paths
 * on any GPU.  No effect on the CPU backend.
 */
extern void gh_debug_bcht_key_moves(gh_engine *e, bool on);

/*
 * Keep device arrays on the device up to bytes of them (0: the default, an
 * eighth of the memory limit), so that tests can make an operation split
 * inputs that lie in device memory.
 */
extern void gh_debug_darray_budget(gh_engine *e, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif							/* GPUHASH_ENGINE_H */
