/*-------------------------------------------------------------------------
 *
 * cuda_bcht_fill.cu
 *	  Filling the BCHT with distinct keys sorted by first bucket: placement,
 *	  cuckoo insertion of the rest, and the keys' row ranges.
 *
 * INTERFACE ROUTINES
 *		gh_bcht_fill		distinct hashes and run heads -> filled table
 *
 * Sorted by first bucket, the i-th key of a bucket's run is written to slot i
 * for i < 4, with its row range: one coalesced pass without atomics.  The
 * rest are inserted by Awad et al.'s cuckoo procedure, a thread per key.  Where the device has 16-byte
 * atomics (compute capability 9.0), a key and its row range move together,
 * claimed by one compare-and-swap or swapped by one exchange, and the table
 * is done when the last key is in; elsewhere only keys move, and a last pass
 * writes the row ranges of the keys placement did not put, found as a lookup
 * finds them.  Insertions set the reach bits the lookups use.  An insertion
 * out of evictions rebuilds with new seeds.  See cuda/README, "BCHT".
 *
 *-------------------------------------------------------------------------
 */
#include <cmath>

#include "cuda_bcht.cuh"

#define BCHT_GROWTHS 4

/* scratch words used here */
#define SCRATCH_FAILED 1
#define SCRATCH_EMPTY_AT 2
#define SCRATCH_OVERFLOW 4

/* The row range of distinct key t as a slot value. */
__device__ __forceinline__ uint64_t
range_of(const uint32_t *heads, size_t ndistinct, size_t n, size_t t)
{
	uint64_t	start = heads[t];
	uint64_t	end = t + 1 < ndistinct ? heads[t + 1] : n;

	return (start << 32) | (end - start);
}

/*
 * For 32 consecutive distinct keys, one per lane of a warp (valid lanes
 * hold h, a key's h0): the key's first bucket (rebuild 0) in *bucket, and
 * its rank among the keys of that bucket, counting at most 32 before the
 * warp.  Keys are sorted by first bucket, so a bucket's keys are a run:
 * within the warp the rank is the distance to the run's first lane, and
 * the run's part before the warp is read by looking back 32 keys.  The
 * kept-aside key (h_empty) takes no slot and is not counted.
 */
__device__ __forceinline__ unsigned
warp_first_bucket_rank(const uint64_t *__restrict__ dh, size_t base,
					   uint64_t h, bool valid, uint64_t nbuckets,
					   uint64_t h_empty, uint64_t *bucket)
{
	const unsigned lane = threadIdx.x & 31;
	const unsigned below = (1u << lane) - 1;
	uint64_t	b = valid ? gh_range(h, nbuckets) : UINT64_MAX;
	uint64_t	b_prev = __shfl_up_sync(0xffffffffu, b, 1);
	unsigned	starts = __ballot_sync(0xffffffffu, lane == 0 || b != b_prev);
	unsigned	start = 31 - __clz(starts & (below | (1u << lane)));
	unsigned	reals = __ballot_sync(0xffffffffu, valid && h != h_empty);
	unsigned	rank = __popc(reals & below & ~((1u << start) - 1));

	if (base > 0)
	{
		uint64_t	b_first = __shfl_sync(0xffffffffu, b, 0);
		bool		back = lane < base;
		uint64_t	hp = back ? dh[base - 1 - lane] : h_empty;
		unsigned	in_run = __ballot_sync(0xffffffffu, back && gh_range(hp, nbuckets) == b_first);
		unsigned	run = in_run == 0xffffffffu ? 32 : __ffs(~in_run) - 1;
		unsigned	run_mask = run == 32 ? 0xffffffffu : (1u << run) - 1;
		unsigned	run_reals = __ballot_sync(0xffffffffu, hp != h_empty) & run_mask;

		if (start == 0)
			rank += __popc(run_reals);
	}
	*bucket = b;
	return rank;
}

/* Warp-uniform grid-stride over groups of 32 consecutive items. */
#define WARP_STRIDE(base, count) \
	for (size_t base = (blockIdx.x * (size_t) blockDim.x + threadIdx.x) / 32 * 32; \
		 (base) < (count); base += (size_t) gridDim.x * blockDim.x)

/*
 * Place each distinct key in slot `rank` of its first bucket when its rank
 * there is below GH_BCHT_BUCKET_SLOTS; list the others.  One key per
 * thread; every thread of the grid reaches gh_block_append.
 */
__global__ void
place_in_first_bucket(const uint64_t *__restrict__ dh,
					  const uint32_t *__restrict__ heads, size_t ndistinct,
					  size_t n, uint64_t nbuckets, uint64_t h_empty,
					  uint64_t *__restrict__ slots,
					  uint32_t *__restrict__ overflow,
					  unsigned long long *noverflow,
					  unsigned long long *empty_at)
{
	size_t		t = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
	size_t		base = t - (threadIdx.x & 31);
	bool		valid = t < ndistinct;
	uint64_t	h = valid ? dh[t] : h_empty;
	bool		real = valid && h != h_empty;
	uint64_t	b;
	unsigned	rank;
	unsigned long long k;

	/* whole warps past the end take part in the block's append only */
	rank = base < ndistinct ?
		warp_first_bucket_rank(dh, base, h, valid, nbuckets, h_empty, &b) : 0;
	if (valid && !real)
		*empty_at = t;
	if (real && rank < BCHT_SLOTS)
	{
		slots[BCHT_KEY(b * BCHT_SLOTS + rank)] = gh_unhash64(h, GH_SEED_BCHT0);
		slots[BCHT_VAL(b * BCHT_SLOTS + rank)] = range_of(heads, ndistinct, n, t);
	}
	k = gh_block_append(noverflow, real && rank >= BCHT_SLOTS);
	if (real && rank >= BCHT_SLOTS)
		overflow[k] = (uint32_t) t;
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
 * from first_f on (placement has filled the earlier ones); false when the
 * eviction chain ran out, in which case the key in hand was lost.  Bucket
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
			uint32_t rebuild, ulonglong2 cur, int first_f)
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
		for (int f = first_f; f < GH_BCHT_NHASH; f++)
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
		first_f = 0;
	}
}

/*
 * Cuckoo-insert distinct keys from bucket first_f on, a thread a key:
 * list[0..count) when list is given, else all of 0..count; flag failure.
 * With PAIRS each key goes in with its row range, and moves with it.
 */
template <bool PAIRS>
__global__ void
cuckoo_insert_keys(const uint64_t *__restrict__ dh,
				   const uint32_t *__restrict__ heads, size_t ndistinct, size_t n,
				   const uint32_t *__restrict__ list, size_t count, int first_f,
				   uint64_t h_empty, ulonglong2 *slots, uint32_t *reach,
				   uint64_t nbuckets, uint32_t rebuild,
				   unsigned long long *failed, unsigned long long *empty_at)
{
	GH_GRID_STRIDE(i, count)
	{
		size_t		t = list != nullptr ? list[i] : i;
		uint64_t	h = dh[t];
		ulonglong2	cur;

		if (*(volatile unsigned long long *) failed)
			return;
		if (h == h_empty)
		{
			*empty_at = t;
			continue;
		}
		cur = make_ulonglong2(gh_unhash64(h, GH_SEED_BCHT0),
							  PAIRS ? range_of(heads, ndistinct, n, t) : 0);
		if (!bcht_insert<PAIRS>(slots, reach, nbuckets, rebuild, cur, first_f))
		{
			atomicExch(failed, 1ULL);
			return;
		}
	}
}

/*
 * Where only keys moved while inserting: the row range of every distinct
 * key (all), or of every key that is not in the slot placement gave it (the
 * overflow and the keys it evicted), written into its slot.  A warp takes 32
 * consecutive keys (their placed slots are consecutive too); a key is found
 * as a lookup finds it, by whole buckets and reach bits.
 */
__global__ void
store_ranges(const uint64_t *__restrict__ dh,
			 const uint32_t *__restrict__ heads, size_t ndistinct,
			 size_t n, uint64_t h_empty, gh_bcht_view tv, bool all,
			 uint64_t *__restrict__ slots)
{
	const unsigned lane = threadIdx.x & 31;

	WARP_STRIDE(base, ndistinct)
	{
		size_t		t = base + lane;
		bool		valid = t < ndistinct;
		uint64_t	h = valid ? dh[t] : h_empty;
		uint64_t	key = gh_unhash64(h, GH_SEED_BCHT0);
		bool		moved = valid && h != h_empty;

		if (!all)
		{
			uint64_t	b;
			unsigned	rank = warp_first_bucket_rank(dh, base, h, valid, tv.nbuckets,
													  h_empty, &b);

			moved = moved &&
				(rank >= BCHT_SLOTS || slots[BCHT_KEY(b * BCHT_SLOTS + rank)] != key);
		}
		if (moved)
		{
			int64_t		slot = bcht_slot_of(tv, key);

			if (slot >= 0)
				slots[BCHT_VAL(slot)] = range_of(heads, ndistinct, n, t);
		}
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

/* Allocate the table's slots for t->nbuckets buckets, all free, and its
 * reach bits, all clear. */
static gh_status
alloc_slots(const gh_cuda_ctx *ctx, gh_bcht_table *t)
{
	GH_TRY(t->slots.alloc(ctx, 2 * t->nbuckets * BCHT_SLOTS, "BCHT slots"));
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

/* Launch the cuckoo insertion of count keys (list, or all) from bucket
 * first_f on; *ok false if one failed. */
static gh_status
cuckoo_insert(const gh_cuda_ctx *ctx, gh_bcht_table *t, const uint64_t *dh,
			  const uint32_t *heads, const uint32_t *list, size_t count,
			  int first_f, uint64_t h_empty, bool *ok)
{
	unsigned long long *sc = (unsigned long long *) ctx->d->scratch;
	cudaStream_t s = ctx->d->stream;
	unsigned	grid = gh_cuda_grid(count, GH_CUDA_BLOCK);
	ulonglong2 *slots = (ulonglong2 *) t->slots.p;
	uint64_t	failed;

	GH_CUDA_TRY(ctx->e, cudaMemsetAsync(sc + SCRATCH_FAILED, 0, sizeof(uint64_t), s));
	if (moves_pairs(ctx))
		cuckoo_insert_keys<true><<<grid, GH_CUDA_BLOCK, 0, s>>>(
			dh, heads, t->ndistinct, t->n, list, count, first_f, h_empty, slots,
			t->reach.p, t->nbuckets, t->rebuild, sc + SCRATCH_FAILED, sc + SCRATCH_EMPTY_AT);
	else
		cuckoo_insert_keys<false><<<grid, GH_CUDA_BLOCK, 0, s>>>(
			dh, heads, t->ndistinct, t->n, list, count, first_f, h_empty, slots,
			t->reach.p, t->nbuckets, t->rebuild, sc + SCRATCH_FAILED, sc + SCRATCH_EMPTY_AT);
	GH_CUDA_LAUNCHED(ctx->e, "cuckoo_insert_keys");
	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_FAILED, 1, &failed));
	*ok = failed == 0;
	return GH_OK;
}

/* Where only keys moved: write the row ranges (of all keys, or of those
 * not where placement put them). */
static gh_status
store_row_ranges(const gh_cuda_ctx *ctx, gh_bcht_table *t, const uint64_t *dh,
				 const uint32_t *heads, uint64_t h_empty, bool all)
{
	size_t		d = t->ndistinct;

	if (moves_pairs(ctx))
		return GH_OK;
	store_ranges<<<gh_cuda_grid(d, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
		dh, heads, d, t->n, h_empty, t->view(), all, t->slots.p);
	GH_CUDA_LAUNCHED(ctx->e, "store_ranges");
	return GH_OK;
}

/*
 * Placement in first buckets, cuckoo insertion of the overflow, and the row
 * ranges of the keys that moved; false in *ok if an insertion failed.
 */
static gh_status
place_and_insert(const gh_cuda_ctx *ctx, gh_bcht_table *t, const uint64_t *dh,
				 const uint32_t *heads, uint64_t h_empty, bool *ok)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	unsigned long long *sc = (unsigned long long *) ctx->d->scratch;
	size_t		d = t->ndistinct;
	gh_dbuf<uint32_t> overflow;
	uint64_t	words[4];

	GH_TRY(overflow.alloc(ctx, d, "BCHT overflow list"));
	GH_CUDA_TRY(e, cudaMemsetAsync(sc + SCRATCH_EMPTY_AT, 0xff, sizeof(uint64_t), s));
	GH_CUDA_TRY(e, cudaMemsetAsync(sc + SCRATCH_OVERFLOW, 0, sizeof(uint64_t), s));
	place_in_first_bucket<<<gh_cuda_grid(d, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
		dh, heads, d, t->n, t->nbuckets, h_empty, t->slots.p,
		overflow.p, sc + SCRATCH_OVERFLOW, sc + SCRATCH_EMPTY_AT);
	GH_CUDA_LAUNCHED(e, "place_in_first_bucket");
	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_FAILED, 4, words));
	if (words[1] != UINT64_MAX)
		GH_TRY(read_empty_key_range(ctx, t, heads, words[1]));
	*ok = true;
	if (words[3] == 0)
		return GH_OK;
	/* an overflowing key's first bucket is full: placement filled it */
	GH_TRY(cuckoo_insert(ctx, t, dh, heads, overflow.p, words[3], 1, h_empty, ok));
	if (*ok)
		GH_TRY(store_row_ranges(ctx, t, dh, heads, h_empty, false));
	return GH_OK;
}

/*
 * Cuckoo-insert every distinct key with t->rebuild, then write all row
 * ranges; false in *ok on failure.
 */
static gh_status
insert_all(const gh_cuda_ctx *ctx, gh_bcht_table *t, const uint64_t *dh,
		   const uint32_t *heads, uint64_t h_empty, bool *ok)
{
	cudaStream_t s = ctx->d->stream;

	GH_CUDA_TRY(ctx->e, cudaMemsetAsync(t->slots.p, 0xff, t->slots.bytes(), s));
	GH_TRY(gh_bcht_clear_reach(ctx, t));
	GH_TRY(cuckoo_insert(ctx, t, dh, heads, nullptr, t->ndistinct, 0, h_empty, ok));
	if (*ok)
		GH_TRY(store_row_ranges(ctx, t, dh, heads, h_empty, true));
	return GH_OK;
}

gh_status
gh_bcht_fill(const gh_cuda_ctx *ctx, gh_bcht_table *t, const uint64_t *dh,
			 const uint32_t *heads, double load_factor)
{
	size_t		d = t->ndistinct;
	uint64_t	h_empty = gh_hash64(GH_EMPTY_KEY, GH_SEED_BCHT0);
	bool		ok = false;

	t->nbuckets = (uint64_t) ceil((double) d / (BCHT_SLOTS * load_factor));
	if (t->nbuckets == 0)
		t->nbuckets = 1;
	t->rebuild = 0;
	GH_TRY(alloc_slots(ctx, t));
	if (d == 0)
		return GH_OK;
	GH_TRY(place_and_insert(ctx, t, dh, heads, h_empty, &ok));
	for (int growth = 0; !ok && growth <= BCHT_GROWTHS; growth++)
	{
		if (growth > 0)
		{
			t->nbuckets += t->nbuckets / 8 + 1;
			GH_TRY(alloc_slots(ctx, t));
		}
		for (int attempt = 0; !ok && attempt < GH_BCHT_MAX_REBUILDS; attempt++)
		{
			t->rebuild++;
			GH_TRY(insert_all(ctx, t, dh, heads, h_empty, &ok));
		}
	}
	if (!ok)
		return gh_fail(ctx->e, GH_ERR_INTERNAL,
					   "BCHT insertion of %zu keys failed after %u rebuilds",
					   d, (unsigned) t->rebuild);
	return GH_OK;
}
