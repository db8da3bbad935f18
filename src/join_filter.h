/*-------------------------------------------------------------------------
 *
 * join_filter.h
 *	  A Bloom filter of a GpuHashJoin's inner keys (join_filter.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_JOIN_FILTER_H
#define GPUHASH_JOIN_FILTER_H

#include "postgres.h"

typedef struct GhjFilter
{
	uint64	   *bits;
	uint64		mask;			/* bit count - 1 (a power of two) */
} GhjFilter;

extern void gpuhash_filter_build(GhjFilter *f, const uint64 *keys, int64 n);
extern void gpuhash_filter_build_sized(GhjFilter *f, const uint64 *keys, int64 n, uint64 min_bits);

/* splitmix64's finaliser: the two bit positions come from one mixed word */
static inline uint64
gpuhash_filter_mix(uint64 key)
{
	key ^= key >> 30;
	key *= UINT64CONST(0xbf58476d1ce4e5b9);
	key ^= key >> 27;
	key *= UINT64CONST(0x94d049bb133111eb);
	return key ^ (key >> 31);
}

/* the key's two bits: both halves of the mixed word */
static inline void
gpuhash_filter_bits(const GhjFilter *f, uint64 key, uint64 *a, uint64 *b)
{
	uint64		h = gpuhash_filter_mix(key);

	*a = h & f->mask;
	*b = (h >> 32 | h << 32) & f->mask;
}

/* false: no inner row has this key; true: one may */
static inline bool
gpuhash_filter_may_contain(const GhjFilter *f, uint64 key)
{
	uint64		a,
				b;

	gpuhash_filter_bits(f, key, &a, &b);
	return (f->bits[a >> 6] >> (a & 63) & 1) && (f->bits[b >> 6] >> (b & 63) & 1);
}

#endif							/* GPUHASH_JOIN_FILTER_H */
