/*-------------------------------------------------------------------------
 *
 * cuda_tables.cuh
 *	  The CUDA backend's tables and probes as device-resident structures,
 *	  and the device-level operations on them that both the engine's
 *	  callbacks (host arrays) and the benchmarks (device arrays) use.
 *
 * HashGraph (cuda_hashgraph.cu).  nbuckets = 2^bits, chosen so that a bucket
 * holds GH_HG_KEYS_PER_BUCKET keys or fewer on average; a key's bucket is
 * gh_bucket_of(key, nbuckets), i.e. the top `bits` bits of its hash h =
 * gh_hash64(key, GH_SEED_BUCKET).  The CSR arrays hold h (not the key: h is
 * a bijection of the key, so equal h means equal key, and the probe needs h
 * anyway) and the row, bucket after bucket.  A bucket of more than
 * GH_HG_LIGHT entries is "heavy" and kept sorted by h, so the entries of
 * one key are contiguous and found by binary search; lighter buckets are
 * scanned.
 *
 * BCHT (cuda_bcht.cu, cuda_bcht_fill.cu, cuda_bcht_find.cu).  The distinct
 * keys sit in buckets of GH_BCHT_BUCKET_SLOTS (4) slots, a slot a key
 * (GH_EMPTY_KEY = free) and its value beside it: its rows as
 * (start << 32) | count into `rows`, where equal keys' rows are contiguous;
 * a bucket is 64 bytes, read whole, and reach bits (cuda_bcht_find.cu) say
 * when a lookup must go on to a key's second or third bucket.  A real key
 * equal to GH_EMPTY_KEY is kept aside (has_empty_key).
 *
 * Sizes: one partition holds fewer than 2^32 rows, so CSR positions, row
 * ranges and distinct-key indices are 32-bit (engine.c's partitioning by
 * build_bytes_per_row keeps a partition below that on today's GPUs, 80 to
 * 141 GB; the builds check it).  Probe-side counts and pair offsets are
 * 64-bit.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CUDA_TABLES_CUH
#define GPUHASH_CUDA_TABLES_CUH

#include <memory>
#include <new>

#include "cuda_common.cuh"

/*
 * Average keys per HashGraph bucket, at most (between half and all of it).
 * Fewer keys per bucket make probes scan less but cost offsets memory and,
 * per doubling of the bucket count, a radix-sort bit (a pass every 8 bits).
 * On one H200, 2^27 random keys: counting the matches of as many present
 * keys took 7.35, 7.55 and 8.40 ms at 1, 2 and 4 keys per bucket, the build
 * 8.14, 7.85 and 7.67 ms, the join by list intersection 8.05, 8.10 and
 * 8.28.  2 keeps probes within 3% of the best with half the offsets (2 to 4
 * bytes a row, against 16 for the keys and rows).
 */
#ifndef GH_HG_KEYS_PER_BUCKET
#define GH_HG_KEYS_PER_BUCKET 2
#endif

/* Buckets longer than this are sorted by hash and binary-searched. */
#define GH_HG_LIGHT 32

/* The most rows one device partition may hold (32-bit positions). */
#define GH_CUDA_MAX_PART_ROWS ((size_t) UINT32_MAX - 1)

/* ---- clustered batches (cuda_cluster.cu) ---- */

/*
 * Whether n keys are worth clustering before they meet a table of
 * table_bytes (a large batch, a table well beyond the L2 cache, and device
 * memory within the limit for the sort).
 */
bool		gh_cuda_cluster_pays(const gh_cuda_ctx *ctx, size_t n, size_t table_bytes);

/* The top hash bits to cluster on for a table of table_bytes. */
int			gh_cuda_cluster_bits(size_t table_bytes);

/*
 * Sort the pairs (h[i], v[i]) on the top `bits` bits of h, stably (the
 * buffers may be swapped for others of the same size).  The sort's second
 * buffers are keep_h and keep_v where given (allocated here if they hold
 * fewer than n), which keep n words each afterwards for the caller's use.
 */
template <typename V>
gh_status	gh_cuda_sort_top_bits(const gh_cuda_ctx *ctx, gh_dbuf<uint64_t> &h,
								  gh_dbuf<V> &v, size_t n, int bits, const char *what,
								  gh_dbuf<uint64_t> *keep_h, gh_dbuf<V> *keep_v);

/*
 * h[i] = gh_hash64(keys[j], seed) and idx[i] = j, ordered (stably) by the
 * top `bits` bits of h.  h is allocated here unless it holds n words
 * already; it may be keys itself.  With a payload (IdxT uint64_t), idx[i]
 * = payload[j] instead: a column carried along rather than gathered.
 */
template <typename IdxT>
gh_status	gh_cuda_cluster(const gh_cuda_ctx *ctx, const uint64_t *keys, size_t n,
							uint64_t seed, int bits, gh_dbuf<uint64_t> &h,
							gh_dbuf<IdxT> &idx, const uint64_t *payload = nullptr);

/* ---- HashGraph ---- */

typedef struct gh_hg_view
{
	const uint32_t *offsets;	/* nbuckets + 1 */
	const uint64_t *hkeys;		/* n hashed keys, bucket after bucket */
	const uint64_t *rows;		/* n */
	uint64_t	nbuckets;
} gh_hg_view;

struct gh_hg_table
{
	int			bits;
	uint64_t	nbuckets;
	size_t		n;
	gh_dbuf<uint32_t> offsets;
	gh_dbuf<uint64_t> hkeys;
	gh_dbuf<uint64_t> rows;

	gh_hg_view
	view() const
	{
		gh_hg_view	v = {offsets.p, hkeys.p, rows.p, nbuckets};

		return v;
	}

	/* the bytes a lookup may read */
	size_t
	bytes() const
	{
		return 16 * n + offsets.bytes();
	}
};

/* The bucket-count exponent for n keys. */
int			gh_hg_bits_for(size_t n);

/*
 * Build from n keys and rows in device buffers; both are consumed (they
 * become the table's arrays or are freed).
 */
gh_status	gh_hg_build(const gh_cuda_ctx *ctx, gh_dbuf<uint64_t> &keys,
						gh_dbuf<uint64_t> &rows, size_t n, gh_hg_table *t);

/*
 * Count the matches of n probe elements.  src holds keys (hashed = false;
 * their hashes are then written to hk_out when it is not NULL, which may be
 * src itself) or hashes with the table's seed (hashed = true).  Outputs,
 * each optional: counts64[i] (64-bit, for a later in-place scan), first[i]
 * (CSR position of the first match), counts32[i] (saturating).
 */
gh_status	gh_hg_count(const gh_cuda_ctx *ctx, const gh_hg_table *t,
						const uint64_t *src, bool hashed, uint64_t *hk_out,
						size_t n, uint64_t *counts64, uint32_t *first,
						uint32_t *counts32);

/* ---- BCHT ---- */

typedef struct gh_bcht_view
{
	const ulonglong2 *slots;	/* nbuckets * 4: key, (start << 32) | count */
	const uint32_t *reach;		/* 2 bits per bucket, 16 buckets a word */
	uint64_t	nbuckets;
	uint32_t	rebuild;
	bool		has_empty_key;
	uint64_t	empty_val;		/* the kept-aside key's (start << 32) | count */
} gh_bcht_view;

struct gh_bcht_table
{
	uint64_t	nbuckets;
	uint32_t	rebuild;
	size_t		n;
	size_t		ndistinct;
	bool		has_empty_key;
	uint64_t	empty_val;
	gh_dbuf<uint64_t> slots;	/* nbuckets * 4 pairs of words: key, value */
	gh_dbuf<uint32_t> reach;	/* (nbuckets + 15) / 16 */
	gh_dbuf<uint64_t> rows;		/* n, equal keys' rows contiguous */

	gh_bcht_view
	view() const
	{
		gh_bcht_view v = {(const ulonglong2 *) slots.p, reach.p,
			nbuckets, rebuild, has_empty_key, empty_val};

		return v;
	}

	/* the bytes a lookup may read */
	size_t
	bytes() const
	{
		return slots.bytes() + reach.bytes();
	}
};

gh_status	gh_bcht_build(const gh_cuda_ctx *ctx, gh_dbuf<uint64_t> &keys,
						  gh_dbuf<uint64_t> &rows, size_t n,
						  double load_factor, gh_bcht_table *t);

/* As gh_hg_count; keys are never hashed in place (the BCHT needs none). */
gh_status	gh_bcht_count(const gh_cuda_ctx *ctx, const gh_bcht_table *t,
						  const uint64_t *keys, size_t n, uint64_t *counts64,
						  uint32_t *first, uint32_t *counts32);

/*
 * Sort the segments [seg_begin[s], seg_end[s]) of (keys, vals) by key, in
 * place, using the alternate arrays (same length n) as scratch.  Keys of a
 * segment must agree above end_bit.  seg_begin/seg_end are modified.
 */
gh_status	gh_sort_segments(const gh_cuda_ctx *ctx, uint64_t *keys,
							 uint64_t *vals, uint64_t *alt_k, uint64_t *alt_v,
							 size_t n, uint32_t *seg_begin, uint32_t *seg_end,
							 size_t nseg, int end_bit);

/* ---- tables and probes as the engine sees them ---- */

struct gh_cuda_part
{
	gh_kind		kind;
	int			dev;
	gh_hg_table hg;
	gh_bcht_table bc;
};

/* Build a part from device buffers (consumed). */
gh_status	gh_cuda_part_build(const gh_cuda_ctx *ctx, gh_kind kind,
							   gh_dbuf<uint64_t> &keys, gh_dbuf<uint64_t> &rows,
							   size_t n, double load_factor,
							   gh_cuda_part **out);

/*
 * A probe of one part: per probe element (the probe keys themselves, or for
 * an intersection join the probe keys sorted by bucket) the first matching
 * table position and the offset of its pairs.
 */
struct gh_cuda_probe
{
	gh_cuda_part *part;
	int			dev;
	size_t		n;
	bool		intersect;
	gh_dbuf<uint64_t> hk;		/* HashGraph: element hashes */
	gh_dbuf<uint32_t> outer32;	/* intersect: element -> probe key index */
	gh_dbuf<uint64_t> outer64;	/* the same when n >= 2^32 */
	gh_dbuf<uint64_t> po;		/* n + 1 pair offsets */
	gh_dbuf<uint32_t> first;	/* n: position of the first match */
	uint64_t	total;
};

/*
 * Count the matches of n probe keys (device array) and scan them.  When
 * keybuf is given and holds the keys, the probe takes it over as its own
 * buffer instead of allocating another.
 */
gh_status	gh_cuda_probe_start(const gh_cuda_ctx *ctx, gh_cuda_part *part,
								const uint64_t *keys, gh_dbuf<uint64_t> *keybuf,
								size_t n, gh_join_method method,
								gh_cuda_probe *pr);

/* Write pairs [first, first + count) of the probe into out (device). */
gh_status	gh_cuda_probe_pairs(const gh_cuda_ctx *ctx, gh_cuda_probe *pr,
								uint64_t first, size_t count, gh_pair *out);

/* Per probe key (original order), the saturated match count (device). */
gh_status	gh_cuda_probe_key_counts(const gh_cuda_ctx *ctx, gh_cuda_probe *pr,
									 uint32_t *out);

/* ---- aggregation and benchmarks ---- */

/* Device bytes per aggregated row, for ncols value columns; the per-group part. */
size_t		gh_cuda_agg_bytes_per_row(int ncols);
size_t		gh_cuda_agg_bytes_per_group(int ncols);

/* The distinct keys among n keys the device reads in place (backend.h). */
bool		gh_cuda_estimate_keys(gh_engine *e, int dev, const uint64_t *keys, size_t n,
								  double *estimate);

gh_status	gh_cuda_aggregate(gh_engine *e, int dev, const uint64_t *keys,
							  size_t n, const gh_aggcol *cols, int ncols,
							  gh_groups **out);

/*
 * The rows of one aggregation on a device: keys and, per value column, the
 * values and null flags (a null-flag buffer left empty: no NULLs).
 */
struct gh_cuda_agg_rows
{
	gh_dbuf<uint64_t> keys;
	std::unique_ptr<gh_dbuf<uint64_t>[]> values;
	std::unique_ptr<gh_dbuf<uint8_t>[]> nulls;

	/* Empty buffers for ncols columns (host memory only). */
	gh_status
	init(gh_engine *e, int ncols)
	{
		int			m = ncols > 0 ? ncols : 1;

		values.reset(new (std::nothrow) gh_dbuf<uint64_t>[m]);
		nulls.reset(new (std::nothrow) gh_dbuf<uint8_t>[m]);
		if (values == nullptr || nulls == nullptr)
			return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for aggregation");
		return GH_OK;
	}
};

/*
 * Group n rows on ctx's device and aggregate cols' operations over them
 * (cols gives types and operations; the values are in rows) into a new
 * gh_groups.  The rows are consumed: freed once grouped, before the
 * results are copied out.
 */
gh_status	gh_cuda_aggregate_device(const gh_cuda_ctx *ctx, gh_cuda_agg_rows &rows,
									 size_t n, const gh_aggcol *cols, int ncols,
									 gh_groups **out);

/*
 * Group pairs [first, first + count) of an open probe as probe_aggregate
 * (backend.h) does, on the probe's device (cuda_joinagg.cu).
 */
gh_status	gh_cuda_probe_aggregate(gh_engine *e, void *probe, uint64_t first,
									size_t count, const gh_joinagg *spec,
									gh_groups **out);
size_t		gh_cuda_joinagg_bytes_per_pair(const gh_joinagg *spec,
										   size_t outer_rows, size_t *fixed);

/* Input spread over every device (backend.h, cuda_spread.cu). */
gh_status	gh_cuda_build_spread(gh_engine *e, gh_kind kind, const uint64_t *keys,
								 const uint64_t *rows, size_t n, double load_factor,
								 void **parts, size_t *nrows);
gh_status	gh_cuda_aggregate_spread(gh_engine *e, const uint64_t *keys, size_t n,
									 const gh_aggcol *cols, int ncols, gh_groups **pieces);

/* Where kernels read pages from (gh_cuda_page_source, cuda_pages.cu). */
struct gh_cuda_pages
{
	const uint8_t *src = nullptr;	/* page p at src + (ids ? ids[p] : p) * page_size */
	const uint32_t *ids = nullptr;
	gh_dbuf<uint8_t> staged;
	gh_dbuf<uint32_t> idbuf;
};

gh_status	gh_cuda_page_source(const gh_cuda_ctx *ctx, const gh_pagespec *spec,
								const void *base, const uint32_t *pages, size_t npages,
								gh_cuda_pages *src, gh_dbuf<uint32_t> *kept_ids = nullptr);

/*
 * Page p of a page source into shared memory, 16 bytes a load, by the
 * block's threads; with copy (device memory), from copy[p].from instead
 * where that is set, and copied to copy[p].to as well where that is.
 */
__device__ __forceinline__ void
gh_cuda_page_load(uint4 *words, const uint8_t *base, const uint32_t *ids, size_t p,
				  uint32_t page_size, const gh_pagecopy *copy = nullptr)
{
	const uint4 *src = (const uint4 *) (base + (size_t) (ids ? ids[p] : p) * page_size);
	uint4	   *to = nullptr;

	if (copy != nullptr)
	{
		if (copy[p].from != nullptr)
			src = (const uint4 *) copy[p].from;
		to = (uint4 *) copy[p].to;
	}
	for (uint32_t w = threadIdx.x; w < page_size / 16; w += blockDim.x)
	{
		uint4		v = src[w];

		words[w] = v;
		if (to != nullptr)
			to[w] = v;
	}
}

/* gh_extract_pages and gh_register_host on device index 0 (cuda_pages.cu). */
gh_status	gh_cuda_extract_pages(gh_engine *e, const gh_pagespec *spec, const void *base,
								  const uint32_t *pages, size_t npages, gh_pagerows *out);
gh_status	gh_cuda_page_slots(const gh_cuda_ctx *ctx, const gh_pagespec *spec, const void *base,
							   const uint32_t *pages, size_t npages, gh_dbuf<uint64_t> &vals,
							   gh_dbuf<uint8_t> &nulls, gh_dbuf<uint32_t> &flags,
							   gh_dbuf<uint8_t> &bad);
/* gh_pages_read and gh_pagebatch_keep (cuda_pagebatch.cu). */
gh_status	gh_cuda_pages_read(gh_engine *e, const void *base, const uint32_t *pages,
							   struct gh_pagebatch *b);
gh_status	gh_cuda_pages_keep(struct gh_pagebatch *b, const uint8_t *drop);
void		gh_cuda_pages_free(struct gh_pagebatch *b);
gh_status	gh_cuda_register_host(gh_engine *e, void *base, size_t bytes);

/* The star pipeline (backend.h, cuda_star.cu). */
gh_status	gh_cuda_dim_create(struct gh_dim *d, int dev, const gh_dimpart *parts,
							   int nparts);
void		gh_cuda_dim_free(struct gh_dim *d, int dev);
gh_status	gh_cuda_star_create(struct gh_star *s, int dev);
gh_status	gh_cuda_star_read(struct gh_star *s, int dev, const void *base, const uint32_t *pages,
							  size_t npages, const gh_pagecopy *copy, uint8_t *status);
gh_status	gh_cuda_star_keep(struct gh_star *s, int dev, const uint8_t *drop, uint64_t *kept);
gh_status	gh_cuda_star_add(struct gh_star *s, int dev, const uint64_t *keys, size_t n,
							 const gh_aggcol *cols);
gh_status	gh_cuda_star_result(struct gh_star *s, int dev, gh_groups **out);
void		gh_cuda_star_free(struct gh_star *s, int dev);
bool		gh_cuda_pin_host(gh_engine *e, void *base, size_t bytes);
void		gh_cuda_unpin_host(gh_engine *e, void *base);

/* Device arrays on device index 0 (backend.h, cuda_darray.cu). */
gh_status	gh_cuda_darray_alloc(gh_engine *e, int dev, void **p, size_t bytes);
void		gh_cuda_darray_free(gh_engine *e, int dev, void *p, size_t bytes);
gh_status	gh_cuda_darray_copy(gh_engine *e, void *dst, const void *src, size_t bytes);

gh_status	gh_cuda_bench(gh_engine *e, gh_bench_op op, gh_kind kind,
						  size_t n, int reps, double load_factor,
						  gh_bench_result *out);

/*
 * Device aggregation of n device-resident keys with one optional int64
 * column (count, sum, min, max), groups left on the device; for the
 * benchmark.
 * Returns the number of groups in *ngroups.
 */
gh_status	gh_cuda_aggregate_device_bench(const gh_cuda_ctx *ctx,
										   const uint64_t *keys,
										   const int64_t *values, size_t n,
										   uint64_t *ngroups);

#endif							/* GPUHASH_CUDA_TABLES_CUH */
