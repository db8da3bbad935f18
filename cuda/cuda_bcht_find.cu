/*-------------------------------------------------------------------------
 *
 * cuda_bcht_find.cu
 *	  Lookups in the bucketed cuckoo hash table (built in cuda_bcht.cu), and
 *	  the reach bits that make them cheap.
 *
 * INTERFACE ROUTINES
 *		gh_bcht_clear_reach	the reach bits, all clear, before a fill
 *		gh_bcht_count		per probe key: match count, first row position
 *
 * A random lookup costs what it reads from memory.  A bucket is 64 bytes,
 * four keys each with its value beside it (cuda_bcht.cuh), so one read of
 * a bucket answers for all its keys.  Beside the slots the table keeps two
 * reach bits per bucket: whether any key whose first bucket this is lives
 * in its second bucket, or in its third (2 bits a bucket, 9.3 MB for 2^27
 * keys at load factor 0.9, so they stay in L2).  A lookup reads its first
 * bucket and its reach bits; it goes on to the second or third bucket only
 * where the reach bits say a key of its first bucket went there.  At load
 * factor 0.9 a present key costs about 1.3 bucket reads, an absent one
 * about 1.5 (cuda/README, "BCHT").
 *
 * One thread looks up BCHT_FIND_KEYS keys, issuing the first-bucket reads
 * of all of them before it compares any, then the second buckets of those
 * that need one, then the third: the lookups are chains of dependent reads,
 * and more of them in flight per thread hide their latency.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_bcht.cuh"

/* Keys one thread looks up at once. */
#define BCHT_FIND_KEYS 4

gh_status
gh_bcht_clear_reach(const gh_cuda_ctx *ctx, gh_bcht_table *t)
{
	size_t		nwords = (t->nbuckets + 15) / 16;

	if (t->reach.count != nwords)
		GH_TRY(t->reach.alloc(ctx, nwords, "BCHT reach bits"));
	GH_CUDA_TRY(ctx->e, cudaMemsetAsync(t->reach.p, 0, t->reach.bytes(), ctx->d->stream));
	return GH_OK;
}

/*
 * BCHT_FIND_KEYS keys per thread, at base + k * blockDim.x (coalesced):
 * the first bucket and reach bits of each, then the second buckets of the
 * keys not found whose reach bits send them there, then the third.
 */
__global__ void
bcht_find_keys(const uint64_t *__restrict__ keys, size_t n, gh_bcht_view t,
			   uint64_t *__restrict__ counts64, uint32_t *__restrict__ first,
			   uint32_t *__restrict__ counts32)
{
	const int	K = BCHT_FIND_KEYS;
	const size_t stride = (size_t) gridDim.x * blockDim.x * K;

	for (size_t base = blockIdx.x * (size_t) blockDim.x * K + threadIdx.x; base < n;
		 base += stride)
	{
		uint64_t	key[K],
					val[K];
		uint32_t	reach[K];
		bool		open[K],	/* still looking */
					read[K];	/* slot[k] holds the bucket of this round */
		ulonglong2	slot[K][BCHT_SLOTS];

#pragma unroll
		for (int k = 0; k < K; k++)
		{
			size_t		i = base + k * (size_t) blockDim.x;

			key[k] = i < n ? keys[i] : GH_EMPTY_KEY;
			val[k] = key[k] == GH_EMPTY_KEY && t.has_empty_key ? t.empty_val : 0;
			open[k] = key[k] != GH_EMPTY_KEY;
			read[k] = open[k];
			reach[k] = 0;
			if (open[k])
			{
				uint64_t	b0 = gh_bcht_bucket(key[k], 0, t.rebuild, t.nbuckets);

				reach[k] = bcht_reach(t, b0);
				bcht_load_bucket(t, b0, slot[k]);
			}
		}
#pragma unroll
		for (int f = 0; f < GH_BCHT_NHASH; f++)
		{
			if (f > 0)
			{
#pragma unroll
				for (int k = 0; k < K; k++)
				{
					read[k] = open[k] && bcht_reaches(reach[k], f);
					if (read[k])
						bcht_load_bucket(t, gh_bcht_bucket(key[k], f, t.rebuild, t.nbuckets),
										 slot[k]);
				}
			}
#pragma unroll
			for (int k = 0; k < K; k++)
			{
				int			j = read[k] ? bcht_match(slot[k], key[k]) : -1;

				if (j >= 0)
				{
					/* the slot's value, read with its key */
#pragma unroll
					for (int s = 0; s < BCHT_SLOTS; s++)
						if (s == j)
							val[k] = slot[k][s].y;
					open[k] = false;
				}
			}
		}
#pragma unroll
		for (int k = 0; k < K; k++)
		{
			size_t		i = base + k * (size_t) blockDim.x;
			uint32_t	count = (uint32_t) val[k];

			if (i >= n)
				break;
			if (counts64 != nullptr)
				counts64[i] = count;
			if (first != nullptr)
				first[i] = (uint32_t) (val[k] >> 32);
			if (counts32 != nullptr)
				counts32[i] = count;
		}
	}
}

gh_status
gh_bcht_count(const gh_cuda_ctx *ctx, const gh_bcht_table *t,
			  const uint64_t *keys, size_t n, uint64_t *counts64,
			  uint32_t *first, uint32_t *counts32)
{
	cudaStream_t s = ctx->d->stream;
	size_t		threads = (n + BCHT_FIND_KEYS - 1) / BCHT_FIND_KEYS;

	if (n == 0)
		return GH_OK;
	bcht_find_keys<<<gh_cuda_grid(threads, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
		keys, n, t->view(), counts64, first, counts32);
	GH_CUDA_LAUNCHED(ctx->e, "bcht_find_keys");
	return GH_OK;
}
