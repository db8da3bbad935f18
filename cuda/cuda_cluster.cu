/*-------------------------------------------------------------------------
 *
 * cuda_cluster.cu
 *	  A batch of keys put in the order of a table's hash of them, so that
 *	  the batch's accesses to a table far larger than the L2 cache sweep it
 *	  instead of landing at random.
 *
 * INTERFACE ROUTINES
 *		gh_cuda_cluster			hashes and original positions, clustered
 *		gh_cuda_sort_top_bits	(hash, value) pairs sorted on top bits
 *		gh_cuda_cluster_bits	how many top hash bits to cluster on
 *		gh_cuda_cluster_pays	whether a batch is worth clustering
 *
 * A table's slot or bucket for a key is a monotone function of the top
 * bits of one hash of it (gh_range), so keys sorted on those bits meet the
 * table in the order of its memory.  Sorting on all of them (as Green's
 * list intersection does) is not needed: at any moment the GPU works on a
 * few hundred thousand consecutive keys, and once they fall in a window of
 * the table that the L2 cache holds, each sector of the table is read from
 * memory about once instead of once per key.  A 1 GB table sorted on 8
 * bits has windows of 4 MB: one pass of CUB's radix sort (8 bits a pass)
 * over 12-byte pairs.  The consumers take h (the hash, from which
 * gh_unhash64 gives the key back) and reach the key's row by the position
 * carried along: the intersection join (cuda_join.cu, its elements in
 * this order) and the aggregation into many groups (cuda_aggregate.cu).
 * Lookups that answer in the caller's order are not clustered: their
 * scattered 4-byte results cost more than the sweep saves (cuda/README,
 * "Clustered batches").
 *
 *-------------------------------------------------------------------------
 */
#include <cub/cub.cuh>

#include "cuda_tables.cuh"

/*
 * Batches smaller than this meet their table at random: their sort costs a
 * few launches, and a table they touch once per key gains nothing.
 */
#ifndef GH_CUDA_CLUSTER_MIN_KEYS
#define GH_CUDA_CLUSTER_MIN_KEYS ((size_t) 1 << 20)
#endif

/* Tables smaller than this sit mostly in the L2 cache (50 MB on an H100). */
#ifndef GH_CUDA_CLUSTER_MIN_TABLE
#define GH_CUDA_CLUSTER_MIN_TABLE ((size_t) 64 << 20)
#endif

/* Top hash bits clustered on (8: one pass of the radix sort) up to 8 GB of table. */
#ifndef GH_CUDA_CLUSTER_BITS
#define GH_CUDA_CLUSTER_BITS 8
#endif

/*
 * Device bytes a clustered key takes: its hash and its position or a
 * carried value, twice (the sort's buffers).
 */
#define CLUSTER_BYTES_PER_KEY 32

/*
 * h[i] = gh_hash64(keys[i], seed), idx[i] = payload[i], or i without one
 * (keys and h may alias)
 */
template <typename IdxT>
__global__ void
hash_with_index(const uint64_t *keys, uint64_t *h, IdxT *__restrict__ idx,
				size_t n, uint64_t seed, const uint64_t *__restrict__ payload)
{
	GH_GRID_STRIDE(i, n)
	{
		h[i] = gh_hash64(keys[i], seed);
		idx[i] = payload != nullptr ? (IdxT) payload[i] : (IdxT) i;
	}
}

int
gh_cuda_cluster_bits(size_t table_bytes)
{
	/* windows of table_bytes / 256 while that stays well within L2 */
	return table_bytes <= ((size_t) 8 << 30) ? GH_CUDA_CLUSTER_BITS : 16;
}

bool
gh_cuda_cluster_pays(const gh_cuda_ctx *ctx, size_t n, size_t table_bytes)
{
	size_t		limit = gh_engine_memory_limit(ctx->e);

	if (n == 0 || n > UINT32_MAX)
		return false;
	if (!ctx->e->cluster_always &&
		(n < GH_CUDA_CLUSTER_MIN_KEYS || table_bytes < GH_CUDA_CLUSTER_MIN_TABLE))
		return false;
	/* the sort's arrays and its temporary storage (about n bytes) must fit */
	return limit == 0 ||
		gh_engine_device_bytes(ctx->e) + (CLUSTER_BYTES_PER_KEY + 2) * n <= limit;
}

template <typename V>
gh_status
gh_cuda_sort_top_bits(const gh_cuda_ctx *ctx, gh_dbuf<uint64_t> &h, gh_dbuf<V> &v,
					  size_t n, int bits, const char *what, gh_dbuf<uint64_t> *keep_h,
					  gh_dbuf<V> *keep_v)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	gh_dbuf<uint64_t> own_h;
	gh_dbuf<V>	own_v;
	gh_dbuf<uint64_t> &alt_h = keep_h != nullptr ? *keep_h : own_h;
	gh_dbuf<V> &alt_v = keep_v != nullptr ? *keep_v : own_v;
	gh_dbuf<unsigned char> temp;
	size_t		temp_bytes = 0;

	if (n == 0)
		return GH_OK;
	if (alt_h.count < n)
		GH_TRY(alt_h.alloc(ctx, n, what));
	if (alt_v.count < n)
		GH_TRY(alt_v.alloc(ctx, n, what));

	cub::DoubleBuffer<uint64_t> dk(h.p, alt_h.p);
	cub::DoubleBuffer<V> dv(v.p, alt_v.p);

	GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, dk, dv, (int64_t) n,
												   64 - bits, 64, s));
	GH_TRY(temp.alloc(ctx, temp_bytes, "radix sort temporary storage"));
	GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(temp.p, temp_bytes, dk, dv, (int64_t) n,
												   64 - bits, 64, s));
	if (dk.Current() != h.p)
		h.swap(alt_h);
	if (dv.Current() != v.p)
		v.swap(alt_v);
	return GH_OK;
}

template <typename IdxT>
gh_status
gh_cuda_cluster(const gh_cuda_ctx *ctx, const uint64_t *keys, size_t n,
				uint64_t seed, int bits, gh_dbuf<uint64_t> &h,
				gh_dbuf<IdxT> &idx, const uint64_t *payload)
{
	if (h.p == nullptr || h.count < n)
		GH_TRY(h.alloc(ctx, n, "clustered hashes"));
	GH_TRY(idx.alloc(ctx, n, "clustered positions"));
	if (n == 0)
		return GH_OK;
	hash_with_index<IdxT><<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
		keys, h.p, idx.p, n, seed, payload);
	GH_CUDA_LAUNCHED(ctx->e, "hash_with_index");
	return gh_cuda_sort_top_bits<IdxT>(ctx, h, idx, n, bits, "clustering sort buffer",
									   nullptr, nullptr);
}

template gh_status gh_cuda_cluster<uint32_t>(const gh_cuda_ctx *, const uint64_t *, size_t,
											 uint64_t, int, gh_dbuf<uint64_t> &,
											 gh_dbuf<uint32_t> &, const uint64_t *);
template gh_status gh_cuda_cluster<uint64_t>(const gh_cuda_ctx *, const uint64_t *, size_t,
											 uint64_t, int, gh_dbuf<uint64_t> &,
											 gh_dbuf<uint64_t> &, const uint64_t *);
template gh_status gh_cuda_sort_top_bits<uint64_t>(const gh_cuda_ctx *, gh_dbuf<uint64_t> &,
												   gh_dbuf<uint64_t> &, size_t, int,
												   const char *, gh_dbuf<uint64_t> *,
												   gh_dbuf<uint64_t> *);
