/*-------------------------------------------------------------------------
 *
 * cuda_bcht_fill.cu
 *	  Filling the BCHT with distinct keys sorted by h0: each region's keys
 *	  placed in one block's shared memory, cuckoo insertion of the few that
 *	  find no room there, and the keys' row ranges.
 *
 * INTERFACE ROUTINES
 *		gh_bcht_fill		distinct hashes and run heads -> filled table
 *
 * A key's first and second buckets lie in its region of GH_BCHT_REGION
 * buckets (hash.h), and keys sorted by h0 come region after region, so a
 * block fills a region alone: it reads the region's keys into shared
 * memory, puts each in its first bucket where there is room, cuckoo-inserts
 * the rest between their first and second buckets with shared-memory
 * atomics, and writes the region's slots (key and row range) and reach
 * bits out whole, coalesced.  A key that finds no room within
 * REGION_EVICTIONS evictions (a crowded region, a high load factor) is
 * listed, and the list is inserted afterwards by Awad et al.'s cuckoo
 * procedure in device memory, a thread per key, over all three buckets.
 * There, where the device has 16-byte atomics (compute capability 9.0), a
 * key and its row range move together, claimed by one compare-and-swap or
 * swapped by one exchange; elsewhere only keys move, and a last pass writes
 * every key's row range, found as a lookup finds it.  An insertion out of
 * evictions rebuilds with new seeds.  See cuda/README, "BCHT".
 *
 *-------------------------------------------------------------------------
 */
#include <cmath>

#include "cuda_bcht.cuh"

#define BCHT_GROWTHS 4

/* scratch words used here */
#define SCRATCH_FAILED 1
#define SCRATCH_EMPTY_AT 2
#define SCRATCH_LEFTOVER 4

/* The row range of distinct key t as a slot value. */
__device__ __forceinline__ uint64_t
range_of(const uint32_t *heads, size_t ndistinct, size_t n, size_t t)
{
	uint64_t	start = heads[t];
	uint64_t	end = t + 1 < ndistinct ? heads[t + 1] : n;

	return (start << 32) | (end - start);
}

/*
 * Threads of a region's block, and keys each holds (4 * GH_BCHT_REGION in
 * all), read REGION_BATCH at a time.  Three blocks share a multiprocessor
 * (74 kB of shared memory and 40 registers a thread each).
 */
#define REGION_THREADS 512
#define REGION_KEYS_PER_THREAD 16
#define REGION_BATCH 8
/* Evictions in shared memory before a key is left to the device-wide pass. */
#define REGION_EVICTIONS 128
/* Keys of a region listed for cuckoo insertion at most (more are left over). */
#define REGION_LIST 2048
/* A free slot of a region in shared memory (slots hold key indices). */
#define SLOT_FREE 0xffffffffu

/*
 * starts[r] = the first distinct key of region r (dh sorted by h0, so by
 * first bucket), r in [0, nregions]: a binary search per region.
 */
__global__ void
region_starts(const uint64_t *__restrict__ dh, size_t ndistinct,
			  uint64_t nbuckets, uint64_t region, uint64_t nregions,
			  uint32_t *__restrict__ starts)
{
	GH_GRID_STRIDE(r, nregions + 1)
	{
		uint64_t	b = r * region;
		size_t		lo = 0,
					hi = ndistinct;

		while (lo < hi)
		{
			size_t		mid = lo + (hi - lo) / 2;

			if (gh_range(dh[mid], nbuckets) < b)
				lo = mid + 1;
			else
				hi = mid;
		}
		starts[r] = (uint32_t) lo;
	}
}

/*
 * A key's first and second buckets within the region starting at bucket
 * b_lo, packed as first | second << 16 (a region has at most 2^16 buckets).
 */
__device__ __forceinline__ uint32_t
region_buckets(uint64_t key, uint32_t rebuild, uint64_t nbuckets, uint64_t b_lo)
{
	uint32_t	b0 = (uint32_t) (gh_bcht_bucket(key, 0, rebuild, nbuckets) - b_lo);
	uint32_t	b1 = (uint32_t) (gh_bcht_bucket(key, 1, rebuild, nbuckets) - b_lo);

	return b0 | b1 << 16;
}

/* Set bucket b0's REACH_SECOND bit among a region's reach words. */
__device__ __forceinline__ void
region_reach_second(uint32_t *rbits, uint32_t b0)
{
	atomicOr(rbits + b0 / 16, REACH_SECOND << (2 * (b0 % 16)));
}

/* List distinct key t for the device-wide insertion. */
__device__ __forceinline__ void
leave_over(uint32_t *leftover, unsigned long long *nleftover, size_t t)
{
	leftover[atomicAdd(nleftover, 1ULL)] = (uint32_t) t;
}

/*
 * Cuckoo-insert the region's keys list[0..count) into their first or
 * second buckets, in shared memory: slot holds key indices, bk each key's
 * buckets (region_buckets), rbits the region's reach bits.  A thread takes
 * the next key from the list (*next) whenever the one in hand has a slot,
 * so that a long eviction chain holds one thread and not its warp.  A key
 * that is still without a slot after REGION_EVICTIONS evictions is listed
 * in leftover.  As in the device-wide insertion below, slots are never
 * emptied and a key goes to its first bucket with room (a listed key's
 * first bucket is full).
 */
__device__ void
region_cuckoo(uint32_t *slot, uint32_t *rbits, const uint32_t *bk,
			  const uint32_t *list, uint32_t count, uint32_t *next, uint32_t rng,
			  size_t lo, uint32_t *leftover, unsigned long long *nleftover)
{
	volatile uint32_t *vslot = slot;
	uint32_t	cur = SLOT_FREE;	/* the key in hand */
	uint32_t	from = SLOT_FREE;	/* the bucket it was evicted from */
	int			first_f = 1;
	int			steps = 0;

	for (;;)
	{
		uint32_t	b[2];
		uint32_t	old;
		bool		placed = false;
		int			i;

		if (cur == SLOT_FREE)
		{
			uint32_t	at = atomicAdd(next, 1u);

			if (at >= count)
				return;
			cur = list[at];
			from = SLOT_FREE;
			first_f = 1;
			steps = 0;
		}
		b[0] = bk[cur] & 0xffffu;
		b[1] = bk[cur] >> 16;
		rng ^= rng << 13;
		rng ^= rng >> 17;
		rng ^= rng << 5;
		for (int f = first_f; f < 2 && !placed; f++)
		{
			if (b[f] == from)
				continue;		/* full: cur was just taken out of it */
			for (unsigned s = 0; s < BCHT_SLOTS && !placed; s++)
			{
				unsigned	at = b[f] * BCHT_SLOTS + (s + rng) % BCHT_SLOTS;

				placed = vslot[at] == SLOT_FREE &&
					atomicCAS(slot + at, SLOT_FREE, cur) == SLOT_FREE;
				if (placed && f == 1)
					region_reach_second(rbits, b[0]);
			}
		}
		if (placed)
		{
			cur = SLOT_FREE;
			continue;
		}
		if (steps++ == REGION_EVICTIONS)
		{
			leave_over(leftover, nleftover, lo + cur);
			cur = SLOT_FREE;
			continue;
		}
		/* both buckets full: swap cur for a random occupant */
		i = (int) (rng >> 8) & 1;
		if (b[i] == from)
			i ^= 1;
		old = atomicExch(slot + b[i] * BCHT_SLOTS + (rng >> 16) % BCHT_SLOTS, cur);
		if (i == 1)
			region_reach_second(rbits, b[0]);
		from = b[i];
		cur = old;
		first_f = 0;
	}
}

/*
 * Fill region blockIdx.x (buckets [r * region, (r + 1) * region)) with its
 * distinct keys starts[r] .. starts[r + 1] (see the file header): first
 * buckets, then shared-memory cuckoo insertion, then the region's slots and
 * reach words written whole.  Keys past the 4 * region the block holds, and
 * keys left without a slot, are listed in leftover.  Dynamic shared memory:
 * region_smem_bytes().  Every step issues a thread's global reads before
 * it uses any: a block's time is the latency of its steps.
 */
__global__ void __launch_bounds__(REGION_THREADS, 3)
fill_regions(const uint64_t *__restrict__ dh, const uint32_t *__restrict__ heads,
			 const uint32_t *__restrict__ starts, size_t ndistinct, size_t n,
			 uint64_t nbuckets, uint32_t rebuild, uint64_t h_empty,
			 ulonglong2 *__restrict__ slots, uint32_t *__restrict__ reach,
			 uint32_t *__restrict__ leftover, unsigned long long *nleftover,
			 unsigned long long *empty_at)
{
	extern __shared__ uint32_t bk[];	/* the held keys' buckets */
	const uint32_t region = (uint32_t) gh_bcht_region_buckets(nbuckets);
	const uint32_t cap = BCHT_SLOTS * region;
	const uint32_t nwords = (region + 15) / 16;
	uint32_t   *slot = bk + cap;
	uint32_t   *rbits = slot + cap;
	const uint64_t b_lo = (uint64_t) blockIdx.x * region;
	const size_t lo = starts[blockIdx.x];
	const size_t m = starts[blockIdx.x + 1] - lo;
	const uint32_t held = m < cap ? (uint32_t) m : cap;
	__shared__ uint32_t list[REGION_LIST];	/* keys not in their first bucket */
	__shared__ uint32_t nlist,
				next;
	uint32_t	rng = ((blockIdx.x * REGION_THREADS + threadIdx.x) * 2654435761u + rebuild) | 1;

	for (uint32_t i = threadIdx.x; i < cap; i += REGION_THREADS)
		slot[i] = SLOT_FREE;
	for (uint32_t i = threadIdx.x; i < nwords; i += REGION_THREADS)
		rbits[i] = 0;
	if (threadIdx.x == 0)
		nlist = next = 0;

	/*
	 * Every held key's buckets, and its first bucket where it has room; the
	 * keys read REGION_BATCH at a time, all reads of a batch issued first.
	 */
	for (int k0 = 0; k0 < REGION_KEYS_PER_THREAD; k0 += REGION_BATCH)
	{
		uint64_t	h[REGION_BATCH];

#pragma unroll
		for (int k = 0; k < REGION_BATCH; k++)
		{
			uint32_t	j = threadIdx.x + (k0 + k) * REGION_THREADS;

			h[k] = j < held ? dh[lo + j] : h_empty;
		}
		if (k0 == 0)
			__syncthreads();	/* the slots are free */
#pragma unroll
		for (int k = 0; k < REGION_BATCH; k++)
		{
			uint32_t	j = threadIdx.x + (k0 + k) * REGION_THREADS;
			uint32_t	b,
						s;

			if (j >= held)
				continue;
			if (h[k] == h_empty)
			{
				*empty_at = lo + j;
				continue;
			}
			b = region_buckets(gh_unhash64(h[k], GH_SEED_BCHT0), rebuild, nbuckets, b_lo);
			bk[j] = b;
			b = (b & 0xffffu) * BCHT_SLOTS;
			for (s = 0; s < BCHT_SLOTS; s++)
				if (atomicCAS(slot + b + s, SLOT_FREE, j) == SLOT_FREE)
					break;
			if (s == BCHT_SLOTS)
			{
				uint32_t	at = atomicAdd(&nlist, 1u);

				if (at < REGION_LIST)
					list[at] = j;
				else
					leave_over(leftover, nleftover, lo + j);
			}
		}
	}
	for (size_t t = lo + cap + threadIdx.x; t < lo + m; t += REGION_THREADS)
	{
		if (dh[t] == h_empty)
			*empty_at = t;
		else
			leave_over(leftover, nleftover, t);
	}
	__syncthreads();

	/* the rest, between their first and second buckets */
	region_cuckoo(slot, rbits, bk, list, min(nlist, (uint32_t) REGION_LIST), &next, rng,
				  lo, leftover, nleftover);
	__syncthreads();

	/* the region's slots and reach words, whole */
#pragma unroll 4
	for (int k = 0; k < REGION_KEYS_PER_THREAD; k++)
	{
		uint32_t	i = threadIdx.x + k * REGION_THREADS;
		uint32_t	j = i < cap ? slot[i] : SLOT_FREE;
		ulonglong2	v = make_ulonglong2(GH_EMPTY_KEY, GH_EMPTY_KEY);

		if (j != SLOT_FREE)
			v = make_ulonglong2(gh_unhash64(dh[lo + j], GH_SEED_BCHT0),
								range_of(heads, ndistinct, n, lo + j));
		if (i < cap)
			slots[b_lo * BCHT_SLOTS + i] = v;
	}
	for (uint32_t i = threadIdx.x; i < nwords; i += REGION_THREADS)
		reach[b_lo / 16 + i] = rbits[i];
}

/* Dynamic shared memory of fill_regions for a table of nbuckets. */
static size_t
region_smem_bytes(uint64_t nbuckets)
{
	size_t		region = gh_bcht_region_buckets(nbuckets);

	return 2 * BCHT_SLOTS * region * sizeof(uint32_t) + (region + 15) / 16 * sizeof(uint32_t);
}

/*
 * Put cur (a key, and with PAIRS its value) into slot `at`: claim it if
 * free (claim), else exchange it; the slot's previous key, and with PAIRS
 * its value, come back.  With PAIRS the slot's 16 bytes move in one atomic
 * operation (compute capability 9.0 and newer; the host launches the PAIRS
 * kernels only there); without, only key words move (values are written
 * afterwards).
 */
template <bool PAIRS>
__device__ __forceinline__ ulonglong2
slot_put(ulonglong2 *slots, uint64_t at, ulonglong2 cur, bool claim)
{
	if (PAIRS)
	{
#if __CUDA_ARCH__ >= 900
		return claim ? atomicCAS(slots + at, make_ulonglong2(GH_EMPTY_KEY, GH_EMPTY_KEY), cur)
			: atomicExch(slots + at, cur);
#else
		__trap();
		return cur;
#endif
	}
	else
	{
		unsigned long long *k = (unsigned long long *) (slots + at);
		unsigned long long old = claim ? atomicCAS(k, GH_EMPTY_KEY, cur.x) : atomicExch(k, cur.x);

		return make_ulonglong2(old, 0);
	}
}

/*
 * Insert cur, one thread alone (see the file header), trying its buckets
 * in order; false when the eviction chain ran out, in which case the key in
 * hand was lost.  Bucket
 * after bucket, the keys of one are read and a free slot claimed, at a slot
 * that depends on the key so that threads filling one bucket try different
 * slots (reading the next bucket only when this one is full costs fewer
 * reads than reading all at once: 21.0 against 22.7 ms for 2^27 keys).  A
 * key put in its second or third bucket sets its first bucket's reach bit; a
 * key moved on leaves it set (a lookup then reads one bucket more than it
 * needs, never fewer).
 */
template <bool PAIRS>
__device__ bool
bcht_insert(ulonglong2 *slots, uint32_t *reach, uint64_t nbuckets,
			uint32_t rebuild, ulonglong2 cur)
{
	uint64_t	from = UINT64_MAX;	/* the bucket cur was evicted from */

	for (int step = 0;; step++)
	{
		uint64_t	b[GH_BCHT_NHASH];
		uint64_t	rnd = gh_hash64(cur.x + (uint64_t) step, UINT64_C(0x94d049bb133111eb));
		unsigned	start = (unsigned) (rnd >> 56) % BCHT_SLOTS;
		int			i;
		ulonglong2	old;

#pragma unroll
		for (int f = 0; f < GH_BCHT_NHASH; f++)
			b[f] = gh_bcht_bucket(cur.x, f, rebuild, nbuckets);
		for (int f = 0; f < GH_BCHT_NHASH; f++)
		{
			uint64_t	k[BCHT_SLOTS];

			if (b[f] == from)
				continue;		/* full: cur was just taken out of it */
			/* L2 reads: slots filled by other threads must be seen */
#pragma unroll
			for (int j = 0; j < BCHT_SLOTS; j++)
				k[j] = __ldcg(&slots[b[f] * BCHT_SLOTS + j].x);
#pragma unroll
			for (int jj = 0; jj < BCHT_SLOTS; jj++)
			{
				unsigned	j = (jj + start) % BCHT_SLOTS;
				uint64_t	kj = k[0];

#pragma unroll
				for (int z = 1; z < BCHT_SLOTS; z++)
					if ((unsigned) z == j)
						kj = k[z];
				if (kj != GH_EMPTY_KEY)
					continue;
				old = slot_put<PAIRS>(slots, b[f] * BCHT_SLOTS + j, cur, true);
				if (old.x == GH_EMPTY_KEY)
				{
					if (f > 0)
						set_reach(reach, b[0], f);
					return true;
				}
				/* taken meanwhile; try the next */
			}
		}
		if (step == GH_BCHT_MAX_EVICTIONS)
			return false;

		/* all of cur's buckets are full: swap it for a random occupant */
		i = (int) (rnd % GH_BCHT_NHASH);
		if (b[i] == from)
			i = (i + 1) % GH_BCHT_NHASH;
		old = slot_put<PAIRS>(slots, b[i] * BCHT_SLOTS + (unsigned) (rnd >> 32) % BCHT_SLOTS,
							  cur, false);
		if (i > 0)
			set_reach(reach, b[0], i);
		if (old.x == GH_EMPTY_KEY)
			return true;
		from = b[i];
		cur = old;
	}
}

/*
 * Cuckoo-insert the distinct keys list[0..count), a thread a key; flag
 * failure.  With PAIRS each key goes in with its row range, and moves with
 * it.
 */
template <bool PAIRS>
__global__ void
cuckoo_insert_keys(const uint64_t *__restrict__ dh,
				   const uint32_t *__restrict__ heads, size_t ndistinct, size_t n,
				   const uint32_t *__restrict__ list, size_t count,
				   ulonglong2 *slots, uint32_t *reach, uint64_t nbuckets,
				   uint32_t rebuild, unsigned long long *failed)
{
	GH_GRID_STRIDE(i, count)
	{
		size_t		t = list[i];
		ulonglong2	cur;

		if (*(volatile unsigned long long *) failed)
			return;
		cur = make_ulonglong2(gh_unhash64(dh[t], GH_SEED_BCHT0),
							  PAIRS ? range_of(heads, ndistinct, n, t) : 0);
		if (!bcht_insert<PAIRS>(slots, reach, nbuckets, rebuild, cur))
		{
			atomicExch(failed, 1ULL);
			return;
		}
	}
}

/*
 * Where only keys moved in the device-wide insertion: the row range of
 * every distinct key written into its slot, the key found as a lookup
 * finds it (by whole buckets and reach bits).
 */
__global__ void
store_ranges(const uint64_t *__restrict__ dh,
			 const uint32_t *__restrict__ heads, size_t ndistinct,
			 size_t n, uint64_t h_empty, gh_bcht_view tv,
			 uint64_t *__restrict__ slots)
{
	GH_GRID_STRIDE(t, ndistinct)
	{
		uint64_t	h = dh[t];
		int64_t		slot;

		if (h == h_empty)
			continue;
		slot = bcht_slot_of(tv, gh_unhash64(h, GH_SEED_BCHT0));
		if (slot >= 0)
			slots[BCHT_VAL(slot)] = range_of(heads, ndistinct, n, t);
	}
}

/* Read the kept-aside key's row range (distinct index at) back. */
static gh_status
read_empty_key_range(const gh_cuda_ctx *ctx, gh_bcht_table *t,
					 const uint32_t *heads, uint64_t at)
{
	uint32_t	se[2] = {0, (uint32_t) t->n};
	size_t		m = at + 1 < t->ndistinct ? 2 : 1;

	GH_CUDA_TRY(ctx->e, cudaMemcpyAsync(se, heads + at, m * sizeof(uint32_t),
										cudaMemcpyDeviceToHost, ctx->d->stream));
	GH_CUDA_TRY(ctx->e, cudaStreamSynchronize(ctx->d->stream));
	if (m == 1)
		se[1] = (uint32_t) t->n;
	t->has_empty_key = true;
	t->empty_val = ((uint64_t) se[0] << 32) | (uint64_t) (se[1] - se[0]);
	return GH_OK;
}

/*
 * Allocate the table's slots for t->nbuckets buckets (all free when clear;
 * fill_regions writes every slot) and its reach bits, all clear.
 */
static gh_status
alloc_slots(const gh_cuda_ctx *ctx, gh_bcht_table *t, bool clear)
{
	GH_TRY(t->slots.alloc(ctx, 2 * t->nbuckets * BCHT_SLOTS, "BCHT slots"));
	if (clear)
		GH_CUDA_TRY(ctx->e, cudaMemsetAsync(t->slots.p, 0xff, t->slots.bytes(),
											ctx->d->stream));
	return gh_bcht_clear_reach(ctx, t);
}

/* Whether insertions move keys with their values (see the file header). */
static bool
moves_pairs(const gh_cuda_ctx *ctx)
{
	return ctx->d->pair_atomics && !ctx->e->bcht_key_moves;
}

/* Launch the device-wide cuckoo insertion of the count listed keys, from
 * their first bucket on; *ok false if one failed. */
static gh_status
cuckoo_insert(const gh_cuda_ctx *ctx, gh_bcht_table *t, const uint64_t *dh,
			  const uint32_t *heads, const uint32_t *list, size_t count,
			  uint64_t h_empty, bool *ok)
{
	unsigned long long *sc = (unsigned long long *) ctx->d->scratch;
	cudaStream_t s = ctx->d->stream;
	unsigned	grid = gh_cuda_grid(count, GH_CUDA_BLOCK);
	ulonglong2 *slots = (ulonglong2 *) t->slots.p;
	uint64_t	failed;

	GH_CUDA_TRY(ctx->e, cudaMemsetAsync(sc + SCRATCH_FAILED, 0, sizeof(uint64_t), s));
	if (moves_pairs(ctx))
		cuckoo_insert_keys<true><<<grid, GH_CUDA_BLOCK, 0, s>>>(
			dh, heads, t->ndistinct, t->n, list, count, slots, t->reach.p, t->nbuckets,
			t->rebuild, sc + SCRATCH_FAILED);
	else
		cuckoo_insert_keys<false><<<grid, GH_CUDA_BLOCK, 0, s>>>(
			dh, heads, t->ndistinct, t->n, list, count, slots, t->reach.p, t->nbuckets,
			t->rebuild, sc + SCRATCH_FAILED);
	GH_CUDA_LAUNCHED(ctx->e, "cuckoo_insert_keys");
	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_FAILED, 1, &failed));
	*ok = failed == 0;
	if (*ok && !moves_pairs(ctx))
	{
		store_ranges<<<gh_cuda_grid(t->ndistinct, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
			dh, heads, t->ndistinct, t->n, h_empty, t->view(), t->slots.p);
		GH_CUDA_LAUNCHED(ctx->e, "store_ranges");
	}
	return GH_OK;
}

/*
 * Fill the table (its slots allocated) with t->rebuild's seeds: regions in
 * shared memory, then the keys they left over; false in *ok if an
 * insertion failed.
 */
static gh_status
fill_once(const gh_cuda_ctx *ctx, gh_bcht_table *t, const uint64_t *dh,
		  const uint32_t *heads, uint64_t h_empty, bool *ok)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	unsigned long long *sc = (unsigned long long *) ctx->d->scratch;
	uint64_t	region = gh_bcht_region_buckets(t->nbuckets);
	uint64_t	nregions = t->nbuckets / region;
	size_t		smem = region_smem_bytes(t->nbuckets);
	gh_dbuf<uint32_t> starts,
				leftover;
	uint64_t	words[4];

	GH_TRY(starts.alloc(ctx, nregions + 1, "BCHT region starts"));
	GH_TRY(leftover.alloc(ctx, t->ndistinct, "BCHT leftover keys"));
	GH_CUDA_TRY(e, cudaMemsetAsync(sc + SCRATCH_EMPTY_AT, 0xff, sizeof(uint64_t), s));
	GH_CUDA_TRY(e, cudaMemsetAsync(sc + SCRATCH_LEFTOVER, 0, sizeof(uint64_t), s));
	region_starts<<<gh_cuda_grid(nregions + 1, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
		dh, t->ndistinct, t->nbuckets, region, nregions, starts.p);
	GH_CUDA_LAUNCHED(e, "region_starts");
	/* the largest region's: device threads of one GPU must not set it lower */
	GH_CUDA_TRY(e, cudaFuncSetAttribute(fill_regions, cudaFuncAttributeMaxDynamicSharedMemorySize,
										(int) region_smem_bytes(GH_BCHT_REGION)));
	fill_regions<<<(unsigned) nregions, REGION_THREADS, smem, s>>>(
		dh, heads, starts.p, t->ndistinct, t->n, t->nbuckets, t->rebuild, h_empty,
		(ulonglong2 *) t->slots.p, t->reach.p, leftover.p, sc + SCRATCH_LEFTOVER,
		sc + SCRATCH_EMPTY_AT);
	GH_CUDA_LAUNCHED(e, "fill_regions");
	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_FAILED, 4, words));
	if (words[1] != UINT64_MAX)
		GH_TRY(read_empty_key_range(ctx, t, heads, words[1]));
	*ok = true;
	if (words[3] > 0)
		GH_TRY(cuckoo_insert(ctx, t, dh, heads, leftover.p, words[3], h_empty, ok));
	return GH_OK;
}

gh_status
gh_bcht_fill(const gh_cuda_ctx *ctx, gh_bcht_table *t, const uint64_t *dh,
			 const uint32_t *heads, double load_factor)
{
	size_t		d = t->ndistinct;
	uint64_t	h_empty = gh_hash64(GH_EMPTY_KEY, GH_SEED_BCHT0);
	bool		ok = false;

	t->nbuckets = gh_bcht_round_buckets((uint64_t) ceil((double) d / (BCHT_SLOTS * load_factor)));
	t->rebuild = 0;
	GH_TRY(alloc_slots(ctx, t, d == 0));
	if (d == 0)
		return GH_OK;
	GH_TRY(fill_once(ctx, t, dh, heads, h_empty, &ok));
	for (int growth = 0; !ok && growth <= BCHT_GROWTHS; growth++)
	{
		if (growth > 0)
		{
			t->nbuckets = gh_bcht_round_buckets(t->nbuckets + t->nbuckets / 8 + 1);
			GH_TRY(alloc_slots(ctx, t, false));
		}
		for (int attempt = 0; !ok && attempt < GH_BCHT_MAX_REBUILDS; attempt++)
		{
			t->rebuild++;
			GH_TRY(fill_once(ctx, t, dh, heads, h_empty, &ok));
		}
	}
	if (!ok)
		return gh_fail(ctx->e, GH_ERR_INTERNAL,
					   "BCHT insertion of %zu keys failed after %u rebuilds",
					   d, (unsigned) t->rebuild);
	return GH_OK;
}
