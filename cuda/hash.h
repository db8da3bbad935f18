/*-------------------------------------------------------------------------
 *
 * hash.h
 *	  Hashing shared by both engine backends (__host__ __device__).
 *
 * One 64-bit mixer (the MurmurHash3 finaliser, a bijection on 64-bit words)
 * with different seeds gives every hash the engine needs, and a
 * multiply-high "fast range" maps a hash onto [0, n) without a division.
 * Because the CPU and CUDA backends include this same file, a key lands in
 * the same bucket and partition on both, which keeps their results
 * comparable and lets a partition built on one be probed on the other.
 *
 * Seeds are independent so that the partition a key falls in says nothing
 * about its bucket inside the partition (otherwise a partition would use
 * only a slice of its buckets).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_HASH_H
#define GPUHASH_HASH_H

#include <stdint.h>

#ifdef __CUDACC__
#define GH_HD __host__ __device__ __forceinline__
#else
#define GH_HD static inline
#endif

/* Seeds: partition split, HashGraph buckets, the three BCHT functions,
 * groups, and the distinct-key estimate. */
#define GH_SEED_PARTITION	UINT64_C(0x243f6a8885a308d3)
#define GH_SEED_BUCKET		UINT64_C(0x13198a2e03707344)
#define GH_SEED_BCHT0		UINT64_C(0xa4093822299f31d0)
#define GH_SEED_BCHT1		UINT64_C(0x082efa98ec4e6c89)
#define GH_SEED_BCHT2		UINT64_C(0x452821e638d01377)
#define GH_SEED_AGG			UINT64_C(0xbe5466cf34e90c6c)
#define GH_SEED_COUNT		UINT64_C(0x3f84d5b5b5470917)

/* MurmurHash3's fmix64 of key ^ seed: a bijection for a fixed seed. */
GH_HD uint64_t
gh_hash64(uint64_t key, uint64_t seed)
{
	uint64_t	h = key ^ seed;

	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/*
 * The key whose gh_hash64 with seed is h: fmix64's xor-shifts by 33 are
 * their own inverses on 64 bits and its multipliers are odd, so invertible
 * modulo 2^64.  Lets a table sort by a key's hash and recover the key.
 */
GH_HD uint64_t
gh_unhash64(uint64_t h, uint64_t seed)
{
	h ^= h >> 33;
	h *= UINT64_C(0x9cb4b2f8129337db);	/* inverse of 0xc4ceb9fe1a85ec53 */
	h ^= h >> 33;
	h *= UINT64_C(0x4f74430c22a54005);	/* inverse of 0xff51afd7ed558ccd */
	h ^= h >> 33;
	return h ^ seed;
}

/* floor(h * n / 2^64): maps a uniform 64-bit hash onto [0, n). */
GH_HD uint64_t
gh_range(uint64_t h, uint64_t n)
{
#ifdef __CUDA_ARCH__
	return __umul64hi(h, n);
#else
	return (uint64_t) (((unsigned __int128) h * n) >> 64);
#endif
}

/* The hash-range partition of a key among nparts (1 means everything in 0). */
GH_HD uint32_t
gh_partition_of(uint64_t key, uint32_t nparts)
{
	return (uint32_t) gh_range(gh_hash64(key, GH_SEED_PARTITION), nparts);
}

/* The HashGraph bucket of a key among nbuckets. */
GH_HD uint64_t
gh_bucket_of(uint64_t key, uint64_t nbuckets)
{
	return gh_range(gh_hash64(key, GH_SEED_BUCKET), nbuckets);
}

/* BCHT: slots per bucket, hash functions, eviction bound, default load. */
#define GH_BCHT_BUCKET_SLOTS	4
#define GH_BCHT_NHASH			3
#define GH_BCHT_MAX_EVICTIONS	4096
#define GH_BCHT_DEFAULT_LOAD	0.9
#define GH_BCHT_MAX_REBUILDS	8
/* An empty BCHT slot.  A real key equal to it is kept aside (see bcht). */
#define GH_EMPTY_KEY			UINT64_C(0xffffffffffffffff)

/* The seed of the i-th BCHT hash; rebuild r perturbs the seeds. */
GH_HD uint64_t
gh_bcht_seed(int i, uint32_t rebuild)
{
	uint64_t	seed = (i == 0) ? GH_SEED_BCHT0 : (i == 1) ? GH_SEED_BCHT1 : GH_SEED_BCHT2;

	return seed + UINT64_C(0x9e3779b97f4a7c15) * rebuild;
}

/* The i-th BCHT hash of a key. */
GH_HD uint64_t
gh_bcht_hash(uint64_t key, int i, uint32_t rebuild)
{
	return gh_hash64(key, gh_bcht_seed(i, rebuild));
}

/*
 * BCHT regions: a key's first and second buckets lie in one region of
 * GH_BCHT_REGION consecutive buckets (all of a smaller table), chosen by
 * h0 = gh_bcht_hash(key, 0, 0), and its third anywhere, so that a region's
 * keys can be placed in one block's shared memory (cuda_bcht_fill.cu).  A
 * table of more buckets than a region has a whole number of regions.  A
 * power of two.
 */
#define GH_BCHT_REGION			2048

/* The buckets of one region of a table of nbuckets. */
GH_HD uint64_t
gh_bcht_region_buckets(uint64_t nbuckets)
{
	return nbuckets < GH_BCHT_REGION ? nbuckets : GH_BCHT_REGION;
}

/* At least nbuckets (and 1), a whole number of regions. */
GH_HD uint64_t
gh_bcht_round_buckets(uint64_t nbuckets)
{
	if (nbuckets <= GH_BCHT_REGION)
		return nbuckets < 1 ? 1 : nbuckets;
	return (nbuckets + GH_BCHT_REGION - 1) / GH_BCHT_REGION * GH_BCHT_REGION;
}

/*
 * The i-th BCHT bucket of a key.  The first bucket of rebuild 0 is
 * gh_range(h0, nbuckets), so that keys sorted by h0 come in the order of
 * their first buckets (and of their regions); the first of a later rebuild
 * and every second bucket are elsewhere in that bucket's region.
 */
GH_HD uint64_t
gh_bcht_bucket(uint64_t key, int i, uint32_t rebuild, uint64_t nbuckets)
{
	uint64_t	h = gh_bcht_hash(key, i, rebuild);

	if (i == 2 || (i == 0 && rebuild == 0) || nbuckets <= GH_BCHT_REGION)
		return gh_range(h, nbuckets);
	/* GH_BCHT_REGION is a power of two: no division */
	return (gh_range(gh_bcht_hash(key, 0, 0), nbuckets) & ~(uint64_t) (GH_BCHT_REGION - 1)) +
		gh_range(h, GH_BCHT_REGION);
}

#endif							/* GPUHASH_HASH_H */
