/*-------------------------------------------------------------------------
 *
 * cuda_bcht_find.cu
 *	  Lookups in the bucketed cuckoo hash table (built in cuda_bcht.cu).
 *
 * INTERFACE ROUTINES
 *		gh_bcht_count		per probe key: match count, first row position
 *
 * A key is in one of its three buckets, and not in a later one if an
 * earlier one has a free slot (the build keeps that true), so a lookup
 * reads one to three 128-byte buckets, each with one coalesced load by a
 * tile of 16 threads, and for a hit one 8-byte slot value: the key's row
 * range.  A lookup is a chain of dependent reads, so a tile looks up
 * BCHT_LOOKUP_KEYS keys at once, issuing their first-bucket reads and their
 * value reads together: more reads in flight per thread, with the same
 * number of threads.  (Batching the second and third bucket reads the same
 * way measured slower: most keys need none.)
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_bcht.cuh"

/* Keys one tile looks up at once, to keep more bucket reads in flight. */
#define BCHT_LOOKUP_KEYS 4

/*
 * One tile per BCHT_LOOKUP_KEYS probe keys: their first buckets are read
 * together, then each key is resolved (second and third buckets only for
 * keys that need them), then the values of the hits are read together.
 */
__global__ void
bcht_count_matches(const uint64_t *__restrict__ keys, size_t n, gh_bcht_view t,
				   uint64_t *__restrict__ counts64, uint32_t *__restrict__ first,
				   uint32_t *__restrict__ counts32)
{
	bcht_tile	tile = this_tile();
	const unsigned lane = tile.thread_rank();
	const int	K = BCHT_LOOKUP_KEYS;

	for (size_t base = tile_index() * K; base < n; base += tile_count() * K)
	{
		uint64_t	key[K],
					v[K],
					val[K];
		int64_t		slot[K];

#pragma unroll
		for (int k = 0; k < K; k++)
		{
			key[k] = base + k < n ? keys[base + k] : GH_EMPTY_KEY;
			v[k] = __ldg(t.slot_keys + gh_bcht_bucket(key[k], 0, t.rebuild, t.nbuckets) * BCHT_TILE + lane);
		}
#pragma unroll
		for (int k = 0; k < K; k++)
		{
			unsigned	hit = tile.ballot(v[k] == key[k]);

			slot[k] = -1;
			if (key[k] == GH_EMPTY_KEY)
				continue;
			if (hit)
				slot[k] = (int64_t) (gh_bcht_bucket(key[k], 0, t.rebuild, t.nbuckets) * BCHT_TILE +
									 __ffs(hit) - 1);
			else if (!tile.ballot(v[k] == GH_EMPTY_KEY))
			{
				/* first bucket full without the key: try the others */
				for (int f = 1; f < GH_BCHT_NHASH; f++)
				{
					uint64_t	b = gh_bcht_bucket(key[k], f, t.rebuild, t.nbuckets);
					uint64_t	w = __ldg(t.slot_keys + b * BCHT_TILE + lane);

					hit = tile.ballot(w == key[k]);
					if (hit)
					{
						slot[k] = (int64_t) (b * BCHT_TILE + __ffs(hit) - 1);
						break;
					}
					if (tile.ballot(w == GH_EMPTY_KEY))
						break;
				}
			}
		}
#pragma unroll
		for (int k = 0; k < K; k++)
			val[k] = key[k] == GH_EMPTY_KEY ? (t.has_empty_key ? t.empty_val : 0)
				: slot[k] >= 0 ? __ldg(t.slot_vals + slot[k]) : 0;
#pragma unroll
		for (int k = 0; k < K; k++)
			if (lane == (unsigned) k && base + k < n)
			{
				uint32_t	count = (uint32_t) val[k];

				if (counts64 != nullptr)
					counts64[base + k] = count;
				if (first != nullptr)
					first[base + k] = (uint32_t) (val[k] >> 32);
				if (counts32 != nullptr)
					counts32[base + k] = count;
			}
	}
}

gh_status
gh_bcht_count(const gh_cuda_ctx *ctx, const gh_bcht_table *t,
			  const uint64_t *keys, size_t n, uint64_t *counts64,
			  uint32_t *first, uint32_t *counts32)
{
	cudaStream_t s = ctx->d->stream;
	size_t		tiles = (n + BCHT_LOOKUP_KEYS - 1) / BCHT_LOOKUP_KEYS;

	if (n == 0)
		return GH_OK;
	bcht_count_matches<<<gh_cuda_grid(tiles * BCHT_TILE, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
		keys, n, t->view(), counts64, first, counts32);
	GH_CUDA_LAUNCHED(ctx->e, "bcht_count_matches");
	return GH_OK;
}
