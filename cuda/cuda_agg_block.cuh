/*-------------------------------------------------------------------------
 *
 * cuda_agg_block.cuh
 *	  A table of groups in one thread block's shared memory, in front of a
 *	  global table of groups (cuda_agg.cuh): used where rows go into few
 *	  groups, by GROUP BY (cuda_agg_shared.cu) and by the star pipeline's
 *	  keep (cuda_star.cu).
 *
 * With few groups, global atomics on the same few slots queue up behind one
 * another in L2; in shared memory they are cheap and each block has its
 * own.  A block's table of cap slots (plus slot cap for the key
 * GH_EMPTY_KEY) holds the keys, the row counts and each accumulator of the
 * global table as an array of its own (agg_update takes a word offset,
 * which for it is the slot number).  block_table_open lays it out and
 * empties it, block_slot finds (or claims) a key's slot within
 * BLOCK_PROBES slots, and block_table_flush adds each group to the global
 * table, one update per group and accumulator, at the slot a callback
 * gives.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CUDA_AGG_BLOCK_CUH
#define GPUHASH_CUDA_AGG_BLOCK_CUH

#include <climits>

#include "cuda_agg.cuh"

/* Threads of a block that keeps a table in shared memory. */
#define BLOCK_THREADS 1024
/* Slots a key probes in a block's table before it goes to the global one. */
#define BLOCK_PROBES 64
/* The most shared memory a block takes (the device may allow less). */
#define BLOCK_SHARED_MOST (227 * 1024)

/* Accumulator words per slot of column d (as many in the global table). */
static __host__ __device__ __forceinline__ int
block_col_words(const agg_col_dev &d)
{
	int			w = d.nonnull != nullptr;

	if (d.ops & GH_AGG_SUM)
		w += d.type == GH_INT64 ? 2 : 1;
	return w + ((d.ops & GH_AGG_MIN) != 0) + ((d.ops & GH_AGG_MAX) != 0);
}

/* Bytes of a block's shared memory before its table: the column views. */
static __host__ __device__ __forceinline__ size_t
block_head_bytes(int ncols)
{
	return ((ncols * sizeof(agg_col_dev) + 15) / 16) * 16;
}

/* Words per slot of a block's table for t's columns, key and row count included. */
static inline size_t
block_slot_words(const agg_table *t)
{
	size_t		words = 2;

	for (int c = 0; c < t->ncols; c++)
		words += block_col_words(t->cols_host[c]);
	return words;
}

/* Shared memory bytes of a block's table of cap slots for t's columns. */
static inline size_t
block_table_bytes(const agg_table *t, size_t cap)
{
	return block_head_bytes(t->ncols) + (cap + 1) * block_slot_words(t) * 8;
}

/*
 * Let kernel take bytes of dynamic shared memory with BLOCK_THREADS threads
 * a block; *per_sm: how many such blocks an SM runs at once (at least 1).
 */
template <typename K>
static gh_status
block_kernel_setup(const gh_cuda_ctx *ctx, K kernel, size_t bytes, int *per_sm)
{
	GH_CUDA_TRY(ctx->e, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
											 (int) bytes));
	GH_CUDA_TRY(ctx->e, cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel,
																	   BLOCK_THREADS, bytes));
	if (*per_sm < 1)
		*per_sm = 1;
	return GH_OK;
}

/* A block's table: its column views and arrays, in shared memory. */
struct block_table
{
	agg_col_dev *cols;
	unsigned long long *keys;
	unsigned long long *rows;
	size_t		cap;
};

/*
 * Lay out a table of cap slots in the block's shared memory smem, with
 * the columns of the global table gcols, and empty it.  Every thread of
 * the block calls it; it ends with __syncthreads.
 */
__device__ static void
block_table_open(block_table *bt, unsigned char *smem, const agg_col_dev *gcols, int ncols,
				 size_t cap)
{
	unsigned long long *words = (unsigned long long *) (smem + block_head_bytes(ncols));
	size_t		nwords;

	bt->cols = (agg_col_dev *) smem;
	bt->keys = words;
	bt->rows = words + cap + 1;
	bt->cap = cap;
	if (threadIdx.x == 0)
	{
		size_t		at = 2 * (cap + 1);

		for (int c = 0; c < ncols; c++)
		{
			const agg_col_dev &g = gcols[c];
			agg_col_dev *v = &bt->cols[c];

			*v = g;
			v->values = nullptr;
			v->nulls = nullptr;
#define TAKE(field, type) \
			do { \
				if (g.field != nullptr) \
				{ \
					v->field = (type *) (words + at); \
					at += cap + 1; \
				} \
			} while (0)
			TAKE(nonnull, unsigned long long);
			TAKE(sum_lo, unsigned long long);
			TAKE(sum_hi, unsigned long long);
			TAKE(fsum, double);
			TAKE(min, long long);
			TAKE(max, long long);
#undef TAKE
		}
	}
	__syncthreads();
	nwords = 2 * (cap + 1);
	for (int c = 0; c < ncols; c++)
		nwords += block_col_words(bt->cols[c]) * (cap + 1);
	for (size_t w = threadIdx.x; w < nwords; w += blockDim.x)
		words[w] = w < cap + 1 ? GH_EMPTY_KEY : 0;
	__syncthreads();
	for (int c = 0; c < ncols; c++)
		for (size_t s = threadIdx.x; s <= cap; s += blockDim.x)
		{
			if (bt->cols[c].min != nullptr)
				bt->cols[c].min[s] = LLONG_MAX;
			if (bt->cols[c].max != nullptr)
				bt->cols[c].max[s] = LLONG_MIN;
		}
	__syncthreads();
}

/*
 * The slot of key in a block's table, claiming a free one where claim is
 * true; AGG_NO_SLOT where the key is not there (or finds no room) within
 * BLOCK_PROBES slots.
 */
__device__ __forceinline__ size_t
block_slot(const block_table &bt, uint64_t key, bool claim)
{
	size_t		s;

	if (key == GH_EMPTY_KEY)
		return bt.cap;
	s = gh_range(gh_hash64(key, GH_SEED_AGG), bt.cap);
	for (int probe = 0; probe < BLOCK_PROBES; probe++)
	{
		unsigned long long cur = ((volatile unsigned long long *) bt.keys)[s];

		if (cur == GH_EMPTY_KEY)
		{
			if (!claim)
				return AGG_NO_SLOT;
			cur = atomicCAS(bt.keys + s, GH_EMPTY_KEY, key);
		}
		if (cur == key || cur == GH_EMPTY_KEY)
			return s;
		if (++s == bt.cap)
			s = 0;
	}
	return AGG_NO_SLOT;
}

/*
 * Add every group of the block's table to the global table: where(key)
 * gives the group's slot there (AGG_NO_SLOT: none, and the group is left
 * out; the caller has said so).  Every thread of the block calls it.
 */
template <typename W>
__device__ static void
block_table_flush(const block_table &bt, unsigned long long *grows, size_t gw,
				  const agg_col_dev *gcols, int ncols, W where)
{
	__syncthreads();
	for (size_t s = threadIdx.x; s <= bt.cap; s += blockDim.x)
	{
		size_t		g;

		if (bt.rows[s] == 0)
			continue;
		g = where(bt.keys[s]);
		if (g == AGG_NO_SLOT)
			continue;
		g *= gw;
		atomicAdd(grows + g, bt.rows[s]);
		for (int c = 0; c < ncols; c++)
		{
			const agg_col_dev &v = bt.cols[c];
			agg_val		a;

			a.nonnull = v.nonnull != nullptr ? v.nonnull[s] : bt.rows[s];
			if (a.nonnull == 0)
				continue;
			a.lo = v.sum_lo != nullptr ? (long long) v.sum_lo[s] : 0;
			a.hi = v.sum_hi != nullptr ? (long long) v.sum_hi[s] : 0;
			a.fsum = v.fsum != nullptr ? v.fsum[s] : 0.0;
			a.min = v.min != nullptr ? v.min[s] : 0;
			a.max = v.max != nullptr ? v.max[s] : 0;
			agg_apply(gcols[c], g, a);
		}
	}
}

#endif							/* GPUHASH_CUDA_AGG_BLOCK_CUH */
