/*-------------------------------------------------------------------------
 *
 * cuda_bcht_find.cu
 *	  Lookups in the bucketed cuckoo hash table (built in cuda_bcht.cu), and
 *	  the tags and reach bits that make them cheap.
 *
 * INTERFACE ROUTINES
 *		gh_bcht_index		tags and reach bits of a filled table
 *		gh_bcht_count		per probe key: match count, first row position
 *
 * A random lookup costs what it reads from memory, and memory is read in
 * 32-byte sectors: a bucket of 16 keys and values is eight of them.  So
 * beside the slots (a key and its value side by side, one sector) the table
 * keeps, per bucket, 16 one-byte tags (a byte of each key's first hash, 0
 * for a free slot: one 16-byte load), and per bucket two reach bits:
 * whether any key whose first bucket this is lives in its second bucket,
 * or in its third (2 bits a bucket, 2.3 MB for 2^27 keys, so they stay in
 * L2).  A lookup reads the tags of its first bucket and the
 * reach bits together; a tag that matches names the one slot whose key and
 * value it then reads (one 16-byte load); it goes on to the second or third
 * bucket only where the reach bits say a key of its first bucket went
 * there.  A present key costs about two sectors, an absent one about one (a
 * tag matches by chance in 16/255 of buckets), where reading whole buckets
 * of keys costs five and up to twelve.
 *
 * One thread looks up BCHT_FIND_KEYS keys, issuing the tag reads of all of
 * them, then their slot reads, before it waits on any: the lookups are
 * chains of dependent reads, and more of them in flight per thread hide
 * their latency.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_bcht.cuh"

/* Keys one thread looks up at once. */
#define BCHT_FIND_KEYS 4

/* Reach bits: a key of this first bucket lives in its second, its third. */
#define REACH_SECOND 1u
#define REACH_THIRD 2u

/* Set tags[s] for every slot and the reach bits of the keys not in their
 * first bucket (reach zeroed before). */
__global__ void
bcht_index_slots(const uint64_t *__restrict__ slots, size_t nslots,
				 uint64_t nbuckets, uint32_t rebuild, uint8_t *__restrict__ tags,
				 uint32_t *__restrict__ reach)
{
	GH_GRID_STRIDE(s, nslots)
	{
		uint64_t	key = slots[BCHT_KEY(s)];
		uint64_t	b = s / BCHT_TILE;
		uint64_t	h0,
					b0;

		if (key == GH_EMPTY_KEY)
		{
			tags[s] = 0;
			continue;
		}
		h0 = gh_bcht_hash(key, 0, rebuild);
		b0 = gh_range(h0, nbuckets);
		tags[s] = (uint8_t) bcht_tag(h0);
		if (b != b0)
		{
			uint32_t	bit = gh_bcht_bucket(key, 1, rebuild, nbuckets) == b ?
				REACH_SECOND : REACH_THIRD;

			atomicOr(reach + b0 / 16, bit << (2 * (b0 % 16)));
		}
	}
}

gh_status
gh_bcht_index(const gh_cuda_ctx *ctx, gh_bcht_table *t)
{
	cudaStream_t s = ctx->d->stream;
	size_t		nslots = t->nbuckets * BCHT_TILE;
	size_t		nwords = (t->nbuckets + 15) / 16;

	GH_TRY(t->tags.alloc(ctx, nslots, "BCHT tags"));
	GH_TRY(t->reach.alloc(ctx, nwords, "BCHT reach bits"));
	GH_CUDA_TRY(ctx->e, cudaMemsetAsync(t->reach.p, 0, t->reach.bytes(), s));
	bcht_index_slots<<<gh_cuda_grid(nslots, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
		t->slots.p, nslots, t->nbuckets, t->rebuild, t->tags.p, t->reach.p);
	GH_CUDA_LAUNCHED(ctx->e, "bcht_index_slots");
	return GH_OK;
}

/* The slot of bucket b among candidates m that holds key, or -1. */
__device__ __forceinline__ int64_t
search_bucket(const gh_bcht_view &t, uint64_t b, uint32_t m, uint64_t key)
{
	while (m != 0)
	{
		uint64_t	s = b * BCHT_TILE + __ffs(m) - 1;

		if (__ldg(&t.slots[s].x) == key)
			return (int64_t) s;
		m &= m - 1;
	}
	return -1;
}

/*
 * The value of key past its first candidate: the first bucket's other
 * candidates m, then the second and third buckets where the reach bits of
 * its first bucket send it.  0 if the key is absent.
 */
__device__ __noinline__ uint64_t
find_rest(const gh_bcht_view &t, uint64_t key, uint32_t tag, uint64_t b0,
		  uint32_t m, uint32_t reach)
{
	int64_t		s = search_bucket(t, b0, m, key);

	for (int f = 1; s < 0 && f < GH_BCHT_NHASH; f++)
	{
		uint64_t	b;

		if (!(reach & (f == 1 ? REACH_SECOND : REACH_THIRD)))
			continue;
		b = gh_bcht_bucket(key, f, t.rebuild, t.nbuckets);
		s = search_bucket(t, b, tag_matches(__ldg(t.tags + b), tag), key);
	}
	return s >= 0 ? __ldg(&t.slots[s].y) : 0;
}

/*
 * BCHT_FIND_KEYS keys per thread, at base + k * blockDim.x (coalesced):
 * tags and reach bits of all, then the first candidate slot of each, then
 * each resolved (the rest only for the few that need it).
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
					b0[K],
					skey[K],
					sval[K];
		uint32_t	tag[K],
					m[K],
					reach[K];
		uint4		w[K];

#pragma unroll
		for (int k = 0; k < K; k++)
		{
			size_t		i = base + k * (size_t) blockDim.x;
			uint64_t	h0;

			key[k] = i < n ? keys[i] : GH_EMPTY_KEY;
			h0 = gh_bcht_hash(key[k], 0, t.rebuild);
			b0[k] = gh_range(h0, t.nbuckets);
			tag[k] = bcht_tag(h0);
			w[k] = make_uint4(0, 0, 0, 0);
			reach[k] = 0;
			if (key[k] != GH_EMPTY_KEY)
			{
				w[k] = __ldg(t.tags + b0[k]);
				reach[k] = __ldg(t.reach + b0[k] / 16) >> (2 * (b0[k] % 16));
			}
		}
#pragma unroll
		for (int k = 0; k < K; k++)
		{
			m[k] = tag_matches(w[k], tag[k]);
			skey[k] = ~key[k];
			sval[k] = 0;
			if (m[k] != 0)
			{
				ulonglong2	slot = __ldg(t.slots + b0[k] * BCHT_TILE + __ffs(m[k]) - 1);

				skey[k] = slot.x;
				sval[k] = slot.y;
				m[k] &= m[k] - 1;
			}
		}
#pragma unroll
		for (int k = 0; k < K; k++)
		{
			size_t		i = base + k * (size_t) blockDim.x;
			uint64_t	val;
			uint32_t	count;

			if (i >= n)
				break;
			if (key[k] == GH_EMPTY_KEY)
				val = t.has_empty_key ? t.empty_val : 0;
			else if (skey[k] == key[k])
				val = sval[k];
			else if (m[k] == 0 && (reach[k] & (REACH_SECOND | REACH_THIRD)) == 0)
				val = 0;
			else
				val = find_rest(t, key[k], tag[k], b0[k], m[k], reach[k]);
			count = (uint32_t) val;
			if (counts64 != nullptr)
				counts64[i] = count;
			if (first != nullptr)
				first[i] = (uint32_t) (val >> 32);
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
