/*-------------------------------------------------------------------------
 *
 * cpu_internal.h
 *	  Declarations shared by the CPU backend's files.
 *
 * Both table kinds answer a lookup with one contiguous range of a rows
 * array: a HashGraph keeps each bucket sorted by key, so the entries of one
 * key are adjacent; a BCHT stores each distinct key once with the range of
 * its rows.  A probe therefore records, per probe element, where its matches
 * start and how many there are, and writing any range of pairs is a copy.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CPU_INTERNAL_H
#define GPUHASH_CPU_INTERNAL_H

#include "backend.h"
#include "hash.h"

/*
 * A HashGraph: CSR arrays by bucket.  Entries of bucket b are
 * [offsets[b], offsets[b + 1]), sorted by (key, row) within the bucket.
 */
typedef struct gh_cpu_hashgraph
{
	uint64_t	nbuckets;
	size_t		n;
	size_t	   *offsets;		/* nbuckets + 1 */
	uint64_t   *keys;			/* n */
	uint64_t   *rows;			/* n */
} gh_cpu_hashgraph;

/*
 * A BCHT of distinct keys.  Slot s of bucket b is slot_keys[b * 16 + s];
 * slots of a bucket fill in order, GH_EMPTY_KEY marks the free ones.  The
 * rows of the key in a slot are rows[starts[d], starts[d + 1]) for
 * d = slot_vals[...].  The key GH_EMPTY_KEY itself is kept aside.
 */
typedef struct gh_cpu_bcht
{
	uint64_t	nbuckets;
	uint32_t	rebuild;		/* seeds the table was built with */
	uint64_t   *slot_keys;
	uint64_t   *slot_vals;		/* distinct-key index */
	size_t		ndistinct;		/* including GH_EMPTY_KEY if present */
	size_t	   *starts;			/* ndistinct + 1 */
	uint64_t   *rows;			/* n, grouped by distinct key */
	bool		has_empty_key;
	size_t		empty_key_at;	/* distinct index of GH_EMPTY_KEY */
} gh_cpu_bcht;

/* One partition's table on one simulated device. */
typedef struct gh_cpu_part
{
	gh_kind		kind;
	size_t		n;
	size_t		bytes;			/* accounted through gh_account */
	gh_cpu_hashgraph hg;
	gh_cpu_bcht bc;
} gh_cpu_part;

/* One open probe of a part (see cpu_probe.c). */
typedef struct gh_cpu_probe
{
	const gh_cpu_part *t;
	size_t		n;
	size_t		bytes;			/* accounted */
	uint64_t   *outer;			/* element -> probe key index; NULL: identity */
	uint64_t   *first;			/* element -> position of its first match */
	uint64_t   *offsets;		/* n + 1: exclusive prefix sum of matches */
} gh_cpu_probe;

/* Probes of at least this many keys use list intersection under GH_JOIN_AUTO. */
#define GH_CPU_INTERSECT_MIN ((size_t) 1 << 20)

/* cpu_hashgraph.c */
extern uint64_t gh_cpu_hg_nbuckets(size_t n);
extern gh_status gh_cpu_hg_build(gh_engine *e, const uint64_t *keys,
								 const uint64_t *rows, size_t n,
								 uint64_t nbuckets, gh_cpu_hashgraph *hg);
extern void gh_cpu_hg_free(gh_cpu_hashgraph *hg);
extern size_t gh_cpu_hg_bytes(const gh_cpu_hashgraph *hg);
extern size_t gh_cpu_hg_lookup(const gh_cpu_hashgraph *hg, uint64_t key,
							   size_t *first);
extern gh_status gh_cpu_hg_intersect(gh_engine *e, const gh_cpu_hashgraph *hg,
									 const uint64_t *keys, size_t n,
									 gh_cpu_probe *p);

/* cpu_bcht.c */
extern gh_status gh_cpu_bcht_build(gh_engine *e, const uint64_t *keys,
								   const uint64_t *rows, size_t n,
								   double load_factor, gh_cpu_bcht *bc);
extern void gh_cpu_bcht_free(gh_cpu_bcht *bc);
extern size_t gh_cpu_bcht_bytes(const gh_cpu_bcht *bc, size_t n);
extern size_t gh_cpu_bcht_lookup(const gh_cpu_bcht *bc, uint64_t key,
								 size_t *first);

/* cpu_probe.c: the backend callbacks for tables and probes */
extern gh_status gh_cpu_build(gh_engine *e, int dev, gh_kind kind,
							  const uint64_t *keys, const uint64_t *rows,
							  size_t n, double load_factor, void **part);
extern void gh_cpu_part_free(gh_engine *e, void *part);
extern size_t gh_cpu_part_distinct(const void *part);
extern gh_status gh_cpu_probe_begin(gh_engine *e, void *part,
									const uint64_t *keys, size_t n,
									gh_join_method method, void **probe,
									uint64_t *total);
extern gh_status gh_cpu_probe_write(gh_engine *e, void *probe, uint64_t first,
									size_t count, gh_pair *out);
extern gh_status gh_cpu_probe_counts(gh_engine *e, void *probe,
									 uint32_t *counts);
extern void gh_cpu_probe_free(gh_engine *e, void *probe);

/* cpu_exchange.c: the all-to-all exchange between simulated devices */
#define GH_CPU_XCHG_MAX_COLS 8

/* One device's hash range after an exchange: ncols columns of n words. */
typedef struct gh_cpu_range
{
	size_t		n;
	uint64_t   *col[GH_CPU_XCHG_MAX_COLS];
} gh_cpu_range;

extern gh_status gh_cpu_exchange(gh_engine *e, int ndev,
								 const uint64_t *const *cols, int ncols,
								 size_t n, gh_cpu_range *ranges);
extern void gh_cpu_exchange_free(gh_cpu_range *ranges, int ndev);

/* cpu_spread.c: inputs spread over the simulated devices (backend.h) */
extern gh_status gh_cpu_build_spread(gh_engine *e, gh_kind kind, const uint64_t *keys,
									 const uint64_t *rows, size_t n, double load_factor,
									 void **parts, size_t *nrows);
extern gh_status gh_cpu_aggregate_spread(gh_engine *e, const uint64_t *keys, size_t n,
										 const gh_aggcol *cols, int ncols,
										 gh_groups **pieces);

/* cpu_aggregate.c */
extern gh_status gh_cpu_aggregate(gh_engine *e, int dev, const uint64_t *keys,
								  size_t n, const gh_aggcol *cols, int ncols,
								  gh_groups **out);
extern size_t gh_cpu_agg_bytes_per_row(int ncols);
extern size_t gh_cpu_agg_bytes_per_group(int ncols);
/* Accumulate col's n rows into r, row i into group group_of[i]. */
extern void gh_cpu_accumulate(gh_aggresult *r, const gh_aggcol *col, const size_t *group_of,
							  size_t n);
extern gh_status gh_cpu_extract_pages(gh_engine *e, const gh_pagespec *spec,
									   const void *base, const uint32_t *pages,
									   size_t npages, gh_pagerows *out);
extern gh_status gh_cpu_pages_read(gh_engine *e, const void *base, const uint32_t *pages,
								   struct gh_pagebatch *b);
extern gh_status gh_cpu_pages_keep(struct gh_pagebatch *b, const uint8_t *drop);
extern void gh_cpu_pages_free(struct gh_pagebatch *b);
extern gh_status gh_cpu_probe_aggregate(gh_engine *e, void *probe,
										uint64_t first, size_t count,
										const gh_joinagg *spec,
										gh_groups **out);
extern size_t gh_cpu_joinagg_bytes_per_pair(const gh_joinagg *spec,
											size_t outer_rows, size_t *fixed);

/* cpu_star.c: the star pipeline (backend.h) */
extern gh_status gh_cpu_dim_create(struct gh_dim *d, int dev, const gh_dimpart *parts,
								   int nparts);
extern void gh_cpu_dim_free(struct gh_dim *d, int dev);
extern gh_status gh_cpu_star_create(struct gh_star *s, int dev);
extern gh_status gh_cpu_star_read(struct gh_star *s, int dev, const void *base,
								  const uint32_t *pages, size_t npages, const gh_pagecopy *copy,
								  uint8_t *status);
extern gh_status gh_cpu_star_keep(struct gh_star *s, int dev, const uint8_t *drop,
								  uint64_t *kept);
extern gh_status gh_cpu_star_add(struct gh_star *s, int dev, const uint64_t *keys, size_t n,
								 const gh_aggcol *cols);
extern gh_status gh_cpu_star_result(struct gh_star *s, int dev, gh_groups **out);
extern void gh_cpu_star_free(struct gh_star *s, int dev);

#endif							/* GPUHASH_CPU_INTERNAL_H */
