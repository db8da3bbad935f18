/*-------------------------------------------------------------------------
 *
 * cuda_agg_shared.cu
 *	  GROUP BY into few groups: a table of groups in each block's shared
 *	  memory, merged into the global table once at the end.
 *
 * INTERFACE ROUTINES
 *		agg_shared_capacity		the slots a block's table can have
 *		agg_shared_run			aggregate device rows into an agg_table
 *
 * Each block aggregates its rows in a table of its own in shared memory
 * (cuda_agg_block.cuh; on one H100, 2^27 rows into 16 groups: 1.9 G rows/s
 * with global atomics, 70 with a table per block).  Gathering a warp's rows
 * of one key first (__match_any_sync, one update per key) measured slower
 * at every group count from 1 to 4096: shared-memory atomics on one address
 * are not what queues.  A key that finds no room in the block's table goes
 * to the global table directly; at the end each block adds its groups to the
 * global table.  The global table is sized by the caller's estimate and
 * bounded (agg_slot_bounded): if it turns out too small, *overflow says so
 * and the caller starts over.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_agg_block.cuh"

size_t
agg_shared_capacity(const gh_cuda_ctx *ctx, const agg_table *t)
{
	size_t		most = BLOCK_SHARED_MOST;
	int			optin = 0;

	if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
							   ctx->d->id) == cudaSuccess && (size_t) optin < most)
		most = (size_t) optin;
	if (block_table_bytes(t, 64) > most)
		return 0;
	return (most - block_head_bytes(t->ncols)) / (block_slot_words(t) * 8) - 1;
}

/* A group's slot in the global table, claimed if new; none: *overflow set. */
struct bounded_slot
{
	unsigned long long *gkeys;
	size_t		gcap;
	size_t		gw;
	unsigned long long *overflow;

	__device__ size_t operator() (uint64_t key) const
	{
		size_t		g = agg_slot_bounded(gkeys, gcap, gw, key);

		if (g == AGG_NO_SLOT)
			atomicOr(overflow, 1ULL);
		return g;
	}
};

__global__ void
agg_shared_kernel(const uint64_t *__restrict__ keys, size_t n, size_t cap,
				  unsigned long long *gkeys, unsigned long long *grows, size_t gcap, size_t gw,
				  const agg_col_dev *__restrict__ gcols, int ncols,
				  unsigned long long *overflow)
{
	extern __shared__ __align__(16) unsigned char smem[];
	block_table bt;

	block_table_open(&bt, smem, gcols, ncols, cap);
	GH_GRID_STRIDE(i, n)
	{
		uint64_t	key = keys[i];
		size_t		s = block_slot(bt, key, true);
		bool		global = s == AGG_NO_SLOT;

		if (global)
		{
			s = agg_slot_bounded(gkeys, gcap, gw, key);
			if (s == AGG_NO_SLOT)
			{
				atomicOr(overflow, 1ULL);
				continue;
			}
			s *= gw;			/* the slot's word offset */
		}
		atomicAdd((global ? grows : bt.rows) + s, 1ULL);
		for (int c = 0; c < ncols; c++)
		{
			const agg_col_dev &col = gcols[c];

			agg_update(global ? col : bt.cols[c], s, ((const long long *) col.values)[i],
					   col.nulls != nullptr && col.nulls[i] != 0);
		}
	}
	block_table_flush(bt, grows, gw, gcols, ncols, bounded_slot {gkeys, gcap, gw, overflow});
}

gh_status
agg_shared_run(const gh_cuda_ctx *ctx, agg_table *t, const uint64_t *keys, size_t n,
			   size_t cap, unsigned long long *overflow)
{
	size_t		bytes = block_table_bytes(t, cap);
	int			per_sm = 0;

	GH_TRY(block_kernel_setup(ctx, agg_shared_kernel, bytes, &per_sm));
	agg_shared_kernel<<<gh_cuda_wide_grid(ctx, n, BLOCK_THREADS, per_sm), BLOCK_THREADS, bytes,
		ctx->d->stream>>>(keys, n, cap, t->keys, t->rows, t->cap, t->w,
						  t->cols.p, t->ncols, overflow);
	GH_CUDA_LAUNCHED(ctx->e, "agg_shared_kernel");
	return GH_OK;
}
