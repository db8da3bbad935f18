/*-------------------------------------------------------------------------
 *
 * cuda_bcht.cuh
 *	  What the BCHT's build (cuda_bcht.cu, cuda_bcht_fill.cu) and lookups
 *	  (cuda_bcht_find.cu) share: the slots' layout, a bucket read whole by
 *	  one thread, the reach bits, a slot found as a lookup finds it, and the
 *	  build's internal steps.
 *
 * A slot is a key and its value side by side (16 bytes) and a bucket of
 * GH_BCHT_BUCKET_SLOTS = 4 slots is 64 bytes, so that a lookup reads a
 * bucket's keys and values in one random access of 64 bytes (on an H100,
 * random 64-byte reads of a 2 GiB array run at 80% of the rate of 32-byte
 * ones).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CUDA_BCHT_CUH
#define GPUHASH_CUDA_BCHT_CUH

#include "cuda_tables.cuh"

#define BCHT_SLOTS GH_BCHT_BUCKET_SLOTS

/* Slot s of a table's slots array: its key at word 2s, its value at 2s + 1. */
#define BCHT_KEY(s) (2 * (s))
#define BCHT_VAL(s) (2 * (s) + 1)

/*
 * Reach bits, two per bucket: a key whose first bucket this is lives in its
 * second bucket (REACH_SECOND), in its third (REACH_THIRD).  A lookup goes
 * on to a later bucket only where they say so (cuda_bcht_find.cu).
 */
#define REACH_SECOND 1u
#define REACH_THIRD 2u

/* The reach bits of bucket b. */
__device__ __forceinline__ uint32_t
bcht_reach(const gh_bcht_view &t, uint64_t b)
{
	return (__ldg(t.reach + b / 16) >> (2 * (b % 16))) & (REACH_SECOND | REACH_THIRD);
}

/* Note that a key of first bucket b0 lives in its bucket f (1 or 2): the build's. */
__device__ __forceinline__ void
set_reach(uint32_t *reach, uint64_t b0, int f)
{
	atomicOr(reach + b0 / 16, (f == 1 ? REACH_SECOND : REACH_THIRD) << (2 * (b0 % 16)));
}

/* Whether the reach bits let a lookup go on to bucket f (1 or 2). */
__device__ __forceinline__ bool
bcht_reaches(uint32_t reach, int f)
{
	return (reach & (f == 1 ? REACH_SECOND : REACH_THIRD)) != 0;
}

/* Read bucket b whole: its GH_BCHT_BUCKET_SLOTS slots. */
__device__ __forceinline__ void
bcht_load_bucket(const gh_bcht_view &t, uint64_t b, ulonglong2 *slot)
{
#pragma unroll
	for (int j = 0; j < BCHT_SLOTS; j++)
		slot[j] = __ldg(t.slots + b * BCHT_SLOTS + j);
}

/* The slot j of a bucket read whole that holds key, or -1. */
__device__ __forceinline__ int
bcht_match(const ulonglong2 *slot, uint64_t key)
{
	int			hit = -1;

#pragma unroll
	for (int j = BCHT_SLOTS - 1; j >= 0; j--)
		if (slot[j].x == key)
			hit = j;
	return hit;
}

/*
 * The slot of t holding key (< 0: absent), one thread alone: its first
 * bucket, then the second and third where the first's reach bits say.  For
 * the build (cuda_bcht_fill.cu) once the reach bits are written.
 */
__device__ __forceinline__ int64_t
bcht_slot_of(const gh_bcht_view &t, uint64_t key)
{
	uint64_t	b0 = gh_bcht_bucket(key, 0, t.rebuild, t.nbuckets);
	uint32_t	reach = bcht_reach(t, b0);

	for (int f = 0; f < GH_BCHT_NHASH; f++)
	{
		uint64_t	b = f == 0 ? b0 : gh_bcht_bucket(key, f, t.rebuild, t.nbuckets);
		ulonglong2	slot[BCHT_SLOTS];
		int			j;

		if (f > 0 && !bcht_reaches(reach, f))
			continue;
		bcht_load_bucket(t, b, slot);
		j = bcht_match(slot, key);
		if (j >= 0)
			return (int64_t) (b * BCHT_SLOTS + j);
	}
	return -1;
}

/*
 * Fill t (t->n, t->ndistinct set) with the distinct keys, given as their
 * h0 hashes dh[0..ndistinct) sorted ascending, whose rows start at heads[]
 * in t->rows.
 */
gh_status	gh_bcht_fill(const gh_cuda_ctx *ctx, gh_bcht_table *t,
						 const uint64_t *dh, const uint32_t *heads,
						 double load_factor);

/*
 * Allocate t's reach bits for t->nbuckets, all clear; the insertions set
 * them (cuda_bcht_find.cu says what they are for).
 */
gh_status	gh_bcht_clear_reach(const gh_cuda_ctx *ctx, gh_bcht_table *t);

#endif							/* GPUHASH_CUDA_BCHT_CUH */
