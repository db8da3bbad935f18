/*-------------------------------------------------------------------------
 *
 * join_filter.c
 *	  A Bloom filter of a GpuHashJoin's inner keys, so that the outer side
 *	  drops the rows that cannot match as it reads them.
 *
 * A GpuHashJoin keeps every outer row of a chunk until the engine has
 * probed it.  For an inner, semi or right join, an outer row whose key no
 * inner row has produces nothing; with a selective inner side (a filtered
 * dimension table) that is most rows, and keeping them costs more than
 * joining.  The filter answers "absent" for such a key without a false
 * negative: 16 bits and two probes per inner key, about one false
 * "present" in 70, which the engine's probe then settles.  The keys are the
 * engine's (exact encodings or hashes), so equal values always agree.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "join_filter.h"

/* at most 2^31 bits (256 MB); fewer bits per key past that */
#define FILTER_MAX_BITS (UINT64CONST(1) << 31)

void
gpuhash_filter_build(GhjFilter *f, const uint64 *keys, int64 n)
{
	gpuhash_filter_build_sized(f, keys, n, 0);
}

/*
 * The same with at least min_bits bits (a power of two is taken): where the
 * keys are few and the rows checked many, a larger filter lets fewer
 * through falsely.
 */
void
gpuhash_filter_build_sized(GhjFilter *f, const uint64 *keys, int64 n, uint64 min_bits)
{
	uint64		nbits = 64;

	while ((nbits < (uint64) n * 16 || nbits < min_bits) && nbits < FILTER_MAX_BITS)
		nbits <<= 1;
	f->mask = nbits - 1;
	f->bits = palloc_extended(nbits / 8, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (int64 i = 0; i < n; i++)
	{
		uint64		a,
					b;

		gpuhash_filter_bits(f, keys[i], &a, &b);

		f->bits[a >> 6] |= UINT64CONST(1) << (a & 63);
		f->bits[b >> 6] |= UINT64CONST(1) << (b & 63);
	}
}
