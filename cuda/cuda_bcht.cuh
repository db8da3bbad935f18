/*-------------------------------------------------------------------------
 *
 * cuda_bcht.cuh
 *	  What the BCHT's build (cuda_bcht.cu, cuda_bcht_fill.cu) and lookups
 *	  (cuda_bcht_find.cu) share: the slots' layout, the tags' matching and a
 *	  slot found by tags, the 16-thread tile that reads one bucket while
 *	  building, grid-stride helpers over tiles, and the build's internal step.
 *
 * A slot is a key and its value side by side (16 bytes), so that a lookup
 * reads both in one sector.  While building, a tile of GH_BCHT_BUCKET_SLOTS
 * threads reads a bucket's keys, each lane one slot, and a ballot over the
 * tile says which slot holds a key or is free.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CUDA_BCHT_CUH
#define GPUHASH_CUDA_BCHT_CUH

#include <cooperative_groups.h>

#include "cuda_tables.cuh"

#define BCHT_TILE GH_BCHT_BUCKET_SLOTS

typedef cooperative_groups::thread_block_tile<BCHT_TILE> bcht_tile;

/* Slot s of a table's slots array: its key at word 2s, its value at 2s + 1. */
#define BCHT_KEY(s) (2 * (s))
#define BCHT_VAL(s) (2 * (s) + 1)

/*
 * A key's tag: a byte of its first hash h0 = gh_bcht_hash(key, 0, rebuild)
 * that the bucket number (the top bits of h0) does not use, never 0 (the
 * tag of a free slot).
 */
__device__ __forceinline__ uint32_t
bcht_tag(uint64_t h0)
{
	uint32_t	tag = (uint32_t) h0 & 0xff;

	return tag != 0 ? tag : 1;
}

/* The bits of the bytes of e that are 0xff (from __vcmpeq4), one per byte. */
__device__ __forceinline__ uint32_t
byte_bits(uint32_t e)
{
	return ((e & 0x01010101u) * 0x01020408u) >> 24;
}

/* Bit j set where the tag of slot j of a bucket's tags w equals tag. */
__device__ __forceinline__ uint32_t
tag_matches(uint4 w, uint32_t tag)
{
	uint32_t	rep = tag * 0x01010101u;

	return byte_bits(__vcmpeq4(w.x, rep)) |
		byte_bits(__vcmpeq4(w.y, rep)) << 4 |
		byte_bits(__vcmpeq4(w.z, rep)) << 8 |
		byte_bits(__vcmpeq4(w.w, rep)) << 12;
}

/*
 * The slot of t holding key (< 0: absent) by the tags of its buckets, one
 * thread alone: each bucket's 16 tags, then only the slots whose tag
 * matches, bucket after bucket until the key is found.  For the build
 * (cuda_bcht_fill.cu) once the tags are written; lookups
 * (cuda_bcht_find.cu) also use the reach bits to skip buckets.
 */
__device__ __forceinline__ int64_t
bcht_slot_by_tags(const gh_bcht_view &t, uint64_t key)
{
	uint32_t	tag = bcht_tag(gh_bcht_hash(key, 0, t.rebuild));

	for (int f = 0; f < GH_BCHT_NHASH; f++)
	{
		uint64_t	b = gh_bcht_bucket(key, f, t.rebuild, t.nbuckets);

		for (uint32_t m = tag_matches(__ldg(t.tags + b), tag); m != 0; m &= m - 1)
		{
			uint64_t	s = b * BCHT_TILE + __ffs(m) - 1;

			if (t.slots[s].x == key)
				return (int64_t) s;
		}
	}
	return -1;
}

/* Tile index and count of a grid of 16-thread tiles. */
__device__ __forceinline__ size_t
tile_index(void)
{
	return (blockIdx.x * (size_t) blockDim.x + threadIdx.x) / BCHT_TILE;
}

__device__ __forceinline__ size_t
tile_count(void)
{
	return (size_t) gridDim.x * blockDim.x / BCHT_TILE;
}

static __device__ __forceinline__ bcht_tile
this_tile(void)
{
	return cooperative_groups::tiled_partition<BCHT_TILE>(cooperative_groups::this_thread_block());
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
 * Write t's tags and reach bits from its filled slots (cuda_bcht_find.cu
 * says what they are for).
 */
gh_status	gh_bcht_index(const gh_cuda_ctx *ctx, gh_bcht_table *t);

#endif							/* GPUHASH_CUDA_BCHT_CUH */
