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
 * for i < 16: one coalesced pass without atomics.  The rest are inserted by
 * Awad et al.'s cuckoo procedure, a 16-thread tile per bucket; slots hold
 * only keys while inserting, so a last pass writes the row ranges of the
 * keys placement did not put, after gh_bcht_index has written the tags and
 * reach bits the lookups use: that pass finds its keys by them.  An
 * insertion out of evictions rebuilds with new seeds.  See cuda/README,
 * "BCHT".
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
	if (real && rank < BCHT_TILE)
	{
		slots[BCHT_KEY(b * BCHT_TILE + rank)] = gh_unhash64(h, GH_SEED_BCHT0);
		slots[BCHT_VAL(b * BCHT_TILE + rank)] = range_of(heads, ndistinct, n, t);
	}
	k = gh_block_append(noverflow, real && rank >= BCHT_TILE);
	if (real && rank >= BCHT_TILE)
		overflow[k] = (uint32_t) t;
}

/*
 * Insert key with the tile (see the file header); false when the eviction
 * chain ran out, in which case the key in hand was lost.
 */
__device__ bool
bcht_insert(const bcht_tile &tile, unsigned long long *slots,
			uint64_t nbuckets, uint32_t rebuild, uint64_t key)
{
	const unsigned lane = tile.thread_rank();
	unsigned long long cur = key;
	uint64_t	from = UINT64_MAX;	/* the bucket cur was evicted from */

	for (int step = 0;; step++)
	{
		uint64_t	b[GH_BCHT_NHASH];
		uint64_t	rnd = gh_hash64(cur + (uint64_t) step, UINT64_C(0x94d049bb133111eb));
		unsigned	start = (unsigned) (rnd >> 60);
		int			i;
		unsigned	victim;
		unsigned long long old = 0;

		for (int f = 0; f < GH_BCHT_NHASH; f++)
			b[f] = gh_bcht_bucket(cur, f, rebuild, nbuckets);
		for (int f = 0; f < GH_BCHT_NHASH; f++)
		{
			unsigned long long *bucket = slots + BCHT_KEY(b[f] * BCHT_TILE);
			unsigned	empty;

			if (b[f] == from)
				continue;		/* full: cur was just taken out of it */
			/* L2 reads: slots filled by other tiles must be seen */
			empty = tile.ballot(__ldcg(bucket + BCHT_KEY(lane)) == GH_EMPTY_KEY);
			/* rotate so that tiles filling one bucket try different slots */
			empty = ((empty >> start) | (empty << (BCHT_TILE - start))) & 0xffffu;
			while (empty)
			{
				unsigned	leader = (__ffs(empty) - 1 + start) % BCHT_TILE;

				if (lane == leader)
					old = atomicCAS(bucket + BCHT_KEY(leader), GH_EMPTY_KEY, cur);
				old = tile.shfl(old, leader);
				if (old == GH_EMPTY_KEY)
					return true;
				empty &= empty - 1; /* taken meanwhile; try the next */
			}
		}
		if (step == GH_BCHT_MAX_EVICTIONS)
			return false;

		/* all of cur's buckets are full: swap it for a random occupant */
		i = (int) (rnd % GH_BCHT_NHASH);
		if (b[i] == from)
			i = (i + 1) % GH_BCHT_NHASH;
		victim = (unsigned) (rnd >> 32) % BCHT_TILE;
		if (lane == victim)
			old = atomicExch(slots + BCHT_KEY(b[i] * BCHT_TILE + victim), cur);
		old = tile.shfl(old, victim);
		if (old == GH_EMPTY_KEY)
			return true;
		from = b[i];
		cur = old;
	}
}

/*
 * Cuckoo-insert distinct keys: list[0..count) when list is given, else all
 * of 0..count; flag failure.
 */
__global__ void
cuckoo_insert_keys(const uint64_t *__restrict__ dh,
				   const uint32_t *__restrict__ list, size_t count,
				   uint64_t h_empty, unsigned long long *slots,
				   uint64_t nbuckets, uint32_t rebuild,
				   unsigned long long *failed, unsigned long long *empty_at)
{
	bcht_tile	tile = this_tile();

	for (size_t i = tile_index(); i < count; i += tile_count())
	{
		size_t		t = list != nullptr ? list[i] : i;
		uint64_t	h = dh[t];
		unsigned long long stop = 0;

		if (tile.thread_rank() == 0)
			stop = *(volatile unsigned long long *) failed;
		if (tile.shfl(stop, 0))
			return;
		if (h == h_empty)
		{
			if (tile.thread_rank() == 0)
				*empty_at = t;
			continue;
		}
		if (!bcht_insert(tile, slots, nbuckets, rebuild, gh_unhash64(h, GH_SEED_BCHT0)))
		{
			if (tile.thread_rank() == 0)
				atomicExch(failed, 1ULL);
			return;
		}
	}
}

/*
 * The slot holding key (< 0: absent), as seen by a tile: up to three
 * coalesced 128-byte bucket reads, stopping at a bucket with a free slot.
 */
__device__ __forceinline__ int64_t
bcht_find_slot(const bcht_tile &tile, const uint64_t *__restrict__ slots,
			   uint64_t nbuckets, uint32_t rebuild, uint64_t key)
{
	const unsigned lane = tile.thread_rank();

	for (int f = 0; f < GH_BCHT_NHASH; f++)
	{
		uint64_t	b = gh_bcht_bucket(key, f, rebuild, nbuckets);
		uint64_t	v = __ldg(slots + BCHT_KEY(b * BCHT_TILE + lane));
		unsigned	hit = tile.ballot(v == key);

		if (hit)
			return (int64_t) (b * BCHT_TILE + __ffs(hit) - 1);
		if (tile.ballot(v == GH_EMPTY_KEY))
			return -1;
	}
	return -1;
}

/*
 * Write every distinct key's row range into its slot's value.  Each tile
 * takes 16 consecutive keys, one per lane, and looks them up in turn.
 */
__global__ void
store_all_ranges(const uint64_t *__restrict__ dh,
				 const uint32_t *__restrict__ heads, size_t ndistinct,
				 size_t n, uint64_t h_empty,
				 uint64_t *__restrict__ slots, uint64_t nbuckets, uint32_t rebuild)
{
	bcht_tile	tile = this_tile();
	const unsigned lane = tile.thread_rank();

	for (size_t base = tile_index() * BCHT_TILE; base < ndistinct;
		 base += tile_count() * BCHT_TILE)
	{
		size_t		t = base + lane;
		uint64_t	h = t < ndistinct ? dh[t] : h_empty;
		unsigned	todo = tile.ballot(h != h_empty);

		while (todo)
		{
			unsigned	src = __ffs(todo) - 1;
			uint64_t	key = gh_unhash64(tile.shfl(h, src), GH_SEED_BCHT0);
			int64_t		slot = bcht_find_slot(tile, slots, nbuckets, rebuild, key);

			if (slot >= 0 && lane == src)
				slots[BCHT_VAL(slot)] = range_of(heads, ndistinct, n, t);
			todo &= todo - 1;
		}
	}
}

/*
 * After placement and the insertion of the overflow (rebuild 0), with the
 * tags written: the row range of every key that is not in the slot
 * placement gave it (the overflow and the keys it evicted).  A warp checks
 * 32 consecutive keys (their placed slots are consecutive too); each moved
 * key is found by its tags, a sector or two, where reading its buckets
 * whole took up to three 256-byte reads.
 */
__global__ void
store_moved_ranges(const uint64_t *__restrict__ dh,
				   const uint32_t *__restrict__ heads, size_t ndistinct,
				   size_t n, uint64_t h_empty, gh_bcht_view tv,
				   uint64_t *__restrict__ slots)
{
	const unsigned lane = threadIdx.x & 31;

	WARP_STRIDE(base, ndistinct)
	{
		size_t		t = base + lane;
		bool		valid = t < ndistinct;
		uint64_t	h = valid ? dh[t] : h_empty;
		uint64_t	key = gh_unhash64(h, GH_SEED_BCHT0);
		uint64_t	b;
		unsigned	rank = warp_first_bucket_rank(dh, base, h, valid, tv.nbuckets, h_empty, &b);
		bool		moved = valid && h != h_empty &&
			(rank >= BCHT_TILE || slots[BCHT_KEY(b * BCHT_TILE + rank)] != key);

		if (moved)
		{
			int64_t		slot = bcht_slot_by_tags(tv, key);

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

/* Allocate the table's slots for t->nbuckets buckets, all free. */
static gh_status
alloc_slots(const gh_cuda_ctx *ctx, gh_bcht_table *t)
{
	GH_TRY(t->slots.alloc(ctx, 2 * t->nbuckets * BCHT_TILE, "BCHT slots"));
	GH_CUDA_TRY(ctx->e, cudaMemsetAsync(t->slots.p, 0xff, t->slots.bytes(),
										ctx->d->stream));
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
	GH_CUDA_TRY(e, cudaMemsetAsync(sc + SCRATCH_FAILED, 0, sizeof(uint64_t), s));
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
	if (words[3] > 0)
	{
		cuckoo_insert_keys<<<gh_cuda_grid(words[3] * BCHT_TILE, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
			dh, overflow.p, words[3], h_empty, (unsigned long long *) t->slots.p,
			t->nbuckets, 0, sc + SCRATCH_FAILED, sc + SCRATCH_EMPTY_AT);
		GH_CUDA_LAUNCHED(e, "cuckoo_insert_keys");
		GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_FAILED, 1, words));
		*ok = words[0] == 0;
		if (*ok)
		{
			GH_TRY(gh_bcht_index(ctx, t));
			store_moved_ranges<<<gh_cuda_grid(d, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
				dh, heads, d, t->n, h_empty, t->view(), t->slots.p);
			GH_CUDA_LAUNCHED(e, "store_moved_ranges");
			return GH_OK;
		}
	}
	if (*ok)
		GH_TRY(gh_bcht_index(ctx, t));
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
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	unsigned long long *sc = (unsigned long long *) ctx->d->scratch;
	size_t		d = t->ndistinct;
	uint64_t	failed;

	GH_CUDA_TRY(e, cudaMemsetAsync(t->slots.p, 0xff, t->slots.bytes(), s));
	GH_CUDA_TRY(e, cudaMemsetAsync(sc + SCRATCH_FAILED, 0, sizeof(uint64_t), s));
	cuckoo_insert_keys<<<gh_cuda_grid(d * BCHT_TILE, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
		dh, nullptr, d, h_empty, (unsigned long long *) t->slots.p, t->nbuckets,
		t->rebuild, sc + SCRATCH_FAILED, sc + SCRATCH_EMPTY_AT);
	GH_CUDA_LAUNCHED(e, "cuckoo_insert_keys");
	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_FAILED, 1, &failed));
	*ok = failed == 0;
	if (*ok)
	{
		store_all_ranges<<<gh_cuda_grid(d, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
			dh, heads, d, t->n, h_empty, t->slots.p, t->nbuckets,
			t->rebuild);
		GH_CUDA_LAUNCHED(e, "store_all_ranges");
	}
	return GH_OK;
}

gh_status
gh_bcht_fill(const gh_cuda_ctx *ctx, gh_bcht_table *t, const uint64_t *dh,
			 const uint32_t *heads, double load_factor)
{
	size_t		d = t->ndistinct;
	uint64_t	h_empty = gh_hash64(GH_EMPTY_KEY, GH_SEED_BCHT0);
	bool		ok = false;

	t->nbuckets = (uint64_t) ceil((double) d / (BCHT_TILE * load_factor));
	if (t->nbuckets == 0)
		t->nbuckets = 1;
	t->rebuild = 0;
	GH_TRY(alloc_slots(ctx, t));
	if (d == 0)
		return gh_bcht_index(ctx, t);
	GH_TRY(place_and_insert(ctx, t, dh, heads, h_empty, &ok));
	if (ok)
		return GH_OK;			/* indexed there */
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
	return gh_bcht_index(ctx, t);
}
