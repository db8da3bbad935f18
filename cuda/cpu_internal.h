/*-------------------------------------------------------------------------
 *
 * cpu_internal.h
 *	  Declarations shared by the CPU backend's files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CPU_INTERNAL_H
#define GPUHASH_CPU_INTERNAL_H

#include "backend.h"
#include "hash.h"

/* One partition's table. */
typedef struct gh_cpu_part
{
	gh_kind		kind;
	size_t		n;
	size_t		bytes;			/* accounted */
	uint64_t	nbuckets;
	/* HashGraph: CSR arrays */
	size_t	   *offsets;
	uint64_t   *keys;
	uint64_t   *rows;			/* also BCHT: rows grouped by distinct key */
	/* BCHT */
	uint64_t   *distinct;
	size_t	   *dstart;			/* rows of distinct key d: [dstart[d], dstart[d+1]) */
	size_t		ndistinct;
	long		max_key_at;		/* distinct index of key 2^64-1, or -1 */
	uint32_t	rebuild;
	uint64_t   *slot_key;
	uint32_t   *slot_val;
} gh_cpu_part;

/* One probe of a part. */
typedef struct gh_cpu_probe
{
	const gh_cpu_part *t;
	const uint64_t *keys;
	size_t		n;
	uint64_t   *perm;			/* probe order (list intersection), or NULL */
	uint64_t   *offsets;		/* n + 1 exclusive prefix sum of matches */
} gh_cpu_probe;

extern gh_status gh_cpu_build(gh_engine *e, int dev, gh_kind kind,
							  const uint64_t *keys, const uint64_t *rows,
							  size_t n, double load_factor, void **part);
extern void gh_cpu_part_free(gh_engine *e, void *part);
extern size_t gh_cpu_part_distinct(const void *part);
extern gh_status gh_cpu_probe_begin(gh_engine *e, void *part, const uint64_t *keys,
									size_t n, gh_join_method method,
									void **probe, uint64_t *total);
extern gh_status gh_cpu_probe_write(gh_engine *e, void *probe, uint64_t first,
									size_t count, gh_pair *out);
extern gh_status gh_cpu_probe_counts(gh_engine *e, void *probe, uint32_t *counts);
extern void gh_cpu_probe_free(gh_engine *e, void *probe);
extern size_t gh_cpu_build_bytes_per_row(gh_kind kind);

#endif							/* GPUHASH_CPU_INTERNAL_H */
