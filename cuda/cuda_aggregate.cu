/*-------------------------------------------------------------------------
 *
 * cuda_aggregate.cu
 *	  GROUP BY on the GPU: an open-addressing table of groups updated with
 *	  atomics, then compacted.
 *
 * INTERFACE ROUTINES
 *		gh_cuda_aggregate				host arrays in, gh_groups out
 *		gh_cuda_aggregate_device		device rows in, gh_groups out (the
 *										part of gh_cuda_aggregate after
 *										staging; joins' pairs use it too)
 *		gh_cuda_aggregate_device_bench	device keys, groups left on device
 *		gh_cuda_agg_bytes_per_row		planning estimate
 *		agg_table_new, agg_table_init,	the table of groups, which the star
 *		agg_table_list, agg_copy_out	pipeline's keeps too (cuda_agg.cuh,
 *										with the device functions)
 *
 * The table is sized by an estimate of the groups (cuda_agg_estimate.cu)
 * and done again with room for every row if that proves too small; few
 * groups go through tables in each block's shared memory first
 * (cuda_agg_shared.cu), more straight to the global table, one thread per
 * row claiming or finding its group's slot with atomicCAS (the key
 * GH_EMPTY_KEY has a slot of its own past the table).  A slot's words lie
 * together (cuda_agg.cuh).  Every update gives the same result in any
 * order: int64 sums are exact in 128 bits, double min/max use atomics on
 * order-preserving integer images with one NaN above +Infinity; only double
 * sums depend on the order.  See cuda/README, "Hash aggregation".
 *
 *-------------------------------------------------------------------------
 */
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "cuda_agg.cuh"

#define AGG_MIN_SLOTS 64

/* The most a block's table of groups in shared memory is planned to fill. */
#define AGG_SHARED_LOAD 0.9

/* scratch words used here */
#define SCRATCH_NGROUPS 0
#define SCRATCH_OVERFLOW 1
#define SCRATCH_ANY 2

size_t
gh_cuda_agg_bytes_per_row(int ncols)
{
	/*
	 * Two slots per row of 16 bytes (key, count) plus up to 48 per column
	 * (non-null count, two sum words or a double sum, min, max); the input
	 * key and each column's value and null byte; group slot list and a
	 * staging array for the copy back (8 each).
	 */
	return 2 * (16 + 48 * (size_t) ncols) + 8 + 9 * (size_t) ncols + 16;
}

size_t
gh_cuda_agg_bytes_per_group(int ncols)
{
	/* the two slots and the group's entries in the slot list and staging */
	return 2 * (16 + 48 * (size_t) ncols) + 16;
}

static double
f64_unorder(long long o)
{
	long long	b = o >= 0 ? o : o ^ LLONG_MAX;
	double		d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

/* Slots a block of fill_slots sets at a time. */
#define FILL_SLOTS_PER_BLOCK 256

/*
 * Every slot of a table (nslots of w words) set to the free slot init: a
 * block sets FILL_SLOTS_PER_BLOCK slots at a time, its threads writing
 * consecutive words (a thread per slot would write w words apart).
 */
__global__ void
fill_slots(unsigned long long *__restrict__ slots, size_t nslots, unsigned w,
		   const unsigned long long *__restrict__ init)
{
	for (size_t first = blockIdx.x * (size_t) FILL_SLOTS_PER_BLOCK; first < nslots;
		 first += (size_t) gridDim.x * FILL_SLOTS_PER_BLOCK)
	{
		size_t		count = nslots - first < FILL_SLOTS_PER_BLOCK ?
			nslots - first : FILL_SLOTS_PER_BLOCK;
		unsigned	words = (unsigned) count * w;
		unsigned long long *at = slots + first * w;

		for (unsigned u = threadIdx.x; u < words; u += blockDim.x)
			at[u] = init[u % w];
	}
}

/*
 * The rows in the order they are aggregated: with h, the j-th has the hash
 * h[j] (the rows clustered on the table's hash, cuda_cluster.cu) and is row
 * at[j], or where one value column without NULLs was carried along, has
 * the value val[j]; without h, in order.
 */
typedef struct agg_order
{
	const uint64_t *h;
	const uint32_t *at;
	const uint64_t *val;
} agg_order;

/* The buffers behind an agg_order, kept for a second run. */
struct agg_clustered
{
	gh_dbuf<uint64_t> h;
	gh_dbuf<uint32_t> at;
	gh_dbuf<uint64_t> val;
};

/*
 * One thread per row.  BOUNDED: the table is sized by an estimate, a key
 * finding no slot raises *overflow and the row is left out (agg_table_run
 * starts over).
 */
template <bool BOUNDED>
__global__ void
aggregate_rows(const uint64_t *__restrict__ keys, size_t n,
			   unsigned long long *slot_keys, unsigned long long *rows,
			   size_t cap, size_t w, const agg_col_dev *__restrict__ cols, int ncols,
			   unsigned long long *overflow, const agg_order order)
{
	GH_GRID_STRIDE(j, n)
	{
		size_t		i = order.at != nullptr ? order.at[j] : j;
		uint64_t	key = order.h != nullptr ? gh_unhash64(order.h[j], GH_SEED_AGG) : keys[i];
		size_t		s = BOUNDED ? agg_slot_bounded(slot_keys, cap, w, key) :
			agg_slot(slot_keys, cap, w, key);

		if (BOUNDED && s == AGG_NO_SLOT)
		{
			atomicOr(overflow, 1ULL);
			continue;
		}
		atomicAdd(rows + s * w, 1ULL);
		for (int c = 0; c < ncols; c++)
		{
			const agg_col_dev col = cols[c];

			agg_update(col, s * w,
					   order.val != nullptr ? (long long) order.val[j] :
					   ((const long long *) col.values)[i],
					   col.nulls != nullptr && col.nulls[i] != 0);
		}
	}
}

struct slot_used
{
	const unsigned long long *rows;
	size_t		w;

	__device__ __forceinline__ bool
	operator() (uint64_t s) const
	{
		return rows[s * w] != 0;
	}
};

/* dst[g] = src[groups[g] * w] */
template <typename T>
__global__ void
gather_groups(const T *__restrict__ src, size_t w, const uint64_t *__restrict__ groups,
			  size_t ngroups, T *__restrict__ dst)
{
	GH_GRID_STRIDE(g, ngroups)
		dst[g] = src[groups[g] * w];
}

/*
 * Give a column's accumulator `field` the next word of a slot (at *w) if
 * it needs one, with its value in a free slot (base NULL: only count it).
 */
template <typename T>
static void
take_word(T **field, bool needed, unsigned long long *base, size_t *w,
		  unsigned long long free_value, unsigned long long *init)
{
	*field = nullptr;
	if (!needed)
		return;
	if (base != nullptr)
		*field = (T *) (base + *w);
	init[*w] = free_value;
	(*w)++;
}

gh_status
agg_table_init(const gh_cuda_ctx *ctx, agg_table *t, size_t cap, int ncols)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	unsigned long long *base;
	std::unique_ptr<unsigned long long[]> init;
	gh_dbuf<unsigned long long> dinit;
	size_t		w = 2;

	t->cap = cap;
	t->ncols = ncols;
	t->ngroups = 0;
	t->slots.reset();
	init.reset(new (std::nothrow) unsigned long long[2 + 6 * (size_t) ncols]);
	if (init == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for aggregation");
	/* the words counted first, then placed in the buffer */
	for (int pass = 0; pass < 2; pass++)
	{
		base = pass == 0 ? nullptr : t->slots.p;
		w = 2;
		init[0] = GH_EMPTY_KEY;
		init[1] = 0;
		for (int c = 0; c < ncols; c++)
		{
			agg_col_dev *d = &t->cols_host[c];
			bool		isum = (d->ops & GH_AGG_SUM) && d->type == GH_INT64;

			/* a gh_aggregate column without NULLs counts none: the row count */
			take_word(&d->nonnull, d->values == nullptr || d->nulls != nullptr, base, &w, 0,
					  init.get());
			take_word(&d->sum_lo, isum, base, &w, 0, init.get());
			take_word(&d->sum_hi, isum, base, &w, 0, init.get());
			take_word(&d->fsum, (d->ops & GH_AGG_SUM) && d->type == GH_FLOAT64, base, &w, 0,
					  init.get());
			take_word(&d->min, (d->ops & GH_AGG_MIN) != 0, base, &w, (unsigned long long) LLONG_MAX,
					  init.get());
			take_word(&d->max, (d->ops & GH_AGG_MAX) != 0, base, &w, (unsigned long long) LLONG_MIN,
					  init.get());
		}
		if (pass == 0)
			GH_TRY(t->slots.alloc(ctx, (cap + 1) * w, "table of groups"));
	}
	t->w = w;
	t->keys = t->slots.p;
	t->rows = t->slots.p + 1;
	GH_TRY(dinit.alloc(ctx, w, "free group slot"));
	GH_CUDA_TRY(e, cudaMemcpyAsync(dinit.p, init.get(), w * sizeof(unsigned long long),
								   cudaMemcpyHostToDevice, s));
	fill_slots<<<gh_cuda_grid(cap + 1, FILL_SLOTS_PER_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
		t->slots.p, cap + 1, (unsigned) w, dinit.p);
	GH_CUDA_LAUNCHED(e, "fill_slots");
	GH_TRY(t->cols.alloc(ctx, ncols > 0 ? ncols : 1, "column descriptors"));
	if (ncols > 0)
		GH_CUDA_TRY(e, cudaMemcpyAsync(t->cols.p, t->cols_host, ncols * sizeof(agg_col_dev),
									   cudaMemcpyHostToDevice, s));
	return GH_OK;
}

gh_status
agg_table_list(const gh_cuda_ctx *ctx, agg_table *t, size_t most)
{
	gh_engine  *e = ctx->e;
	cudaStream_t s = ctx->d->stream;
	thrust::counting_iterator<uint64_t> slots(0);
	slot_used	pred = {t->rows, t->w};
	unsigned long long *d_count = (unsigned long long *) (ctx->d->scratch + SCRATCH_NGROUPS);
	gh_dbuf<unsigned char> temp;
	size_t		temp_bytes = 0;
	uint64_t	ngroups;

	GH_TRY(t->groups.alloc(ctx, most, "group list"));
	GH_CUDA_TRY(e, cub::DeviceSelect::If(nullptr, temp_bytes, slots, t->groups.p, d_count,
										 (int64_t) (t->cap + 1), pred, s));
	GH_TRY(temp.alloc(ctx, temp_bytes, "select temporary storage"));
	GH_CUDA_TRY(e, cub::DeviceSelect::If(temp.p, temp_bytes, slots, t->groups.p, d_count,
										 (int64_t) (t->cap + 1), pred, s));
	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_NGROUPS, 1, &ngroups));
	if (ngroups > most)
		return gh_fail(e, GH_ERR_INTERNAL, "aggregation found %llu groups, at most %zu expected",
					   (unsigned long long) ngroups, most);
	t->ngroups = ngroups;
	return GH_OK;
}

/*
 * Cluster the rows on the table's hash (cuda_cluster.cu) where the table
 * is far larger than the L2 cache, once (cl keeps the order for a second
 * run into a larger table).  A sole value column without NULLs is carried
 * through the sort; otherwise the rows' positions are, and each column's
 * values gathered.
 */
static gh_status
agg_cluster(const gh_cuda_ctx *ctx, const agg_table *t, const uint64_t *keys, size_t n,
			agg_clustered &cl, agg_order *order)
{
	size_t		bytes = t->slots.bytes();
	const agg_col_dev *c0 = &t->cols_host[0];

	if (cl.h.p == nullptr && gh_cuda_cluster_pays(ctx, n, bytes))
	{
		int			bits = gh_cuda_cluster_bits(bytes);

		if (t->ncols == 1 && c0->nulls == nullptr)
			GH_TRY(gh_cuda_cluster<uint64_t>(ctx, keys, n, GH_SEED_AGG, bits, cl.h, cl.val,
											 (const uint64_t *) c0->values));
		else
			GH_TRY(gh_cuda_cluster<uint32_t>(ctx, keys, n, GH_SEED_AGG, bits, cl.h, cl.at));
	}
	order->h = cl.h.p;
	order->at = cl.at.p;
	order->val = cl.val.p;
	return GH_OK;
}

/*
 * Aggregate n device keys into t (whose cols_host hold the columns' types,
 * operations and inputs), then list its groups (t->groups).
 *
 * The table is sized by an estimate of the groups (gh_cuda_estimate_distinct):
 * few of them go through tables in shared memory first (agg_shared_run),
 * more straight to a global table of about twice as many slots, probing a
 * bounded number of slots.  Should the estimate be too low, so that a key
 * finds no slot, the work is thrown away and done again with two slots per
 * row, where every key has one.
 */
static gh_status
agg_table_run(const gh_cuda_ctx *ctx, agg_table *t, const uint64_t *keys, size_t n)
{
	cudaStream_t s = ctx->d->stream;
	unsigned long long *overflow = (unsigned long long *) (ctx->d->scratch + SCRATCH_OVERFLOW);
	size_t		safe = 2 * n > AGG_MIN_SLOTS ? 2 * n : AGG_MIN_SLOTS;
	double		groups = (double) n;
	agg_clustered cl;
	agg_order	order = {nullptr, nullptr, nullptr};

	GH_TRY(gh_cuda_estimate_distinct(ctx, keys, n, &groups));
	if (ctx->e->group_estimate_scale > 0)
		groups *= ctx->e->group_estimate_scale;
	if (groups < 0.25 * (double) n)
	{
		size_t		want = (size_t) (2.2 * groups) + AGG_MIN_SLOTS;
		size_t		shared;
		uint64_t	failed = 0;

		GH_TRY(agg_table_init(ctx, t, want < safe ? want : safe, t->ncols));
		shared = agg_shared_capacity(ctx, t);
		GH_CUDA_TRY(ctx->e, cudaMemsetAsync(overflow, 0, sizeof(uint64_t), s));
		if (groups <= AGG_SHARED_LOAD * (double) shared)
		{
			size_t		cap = (size_t) (groups / AGG_SHARED_LOAD) + AGG_MIN_SLOTS;

			GH_TRY(agg_shared_run(ctx, t, keys, n, cap < shared ? cap : shared, overflow));
		}
		else
		{
			GH_TRY(agg_cluster(ctx, t, keys, n, cl, &order));
			aggregate_rows<true><<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
				keys, n, t->keys, t->rows, t->cap, t->w, t->cols.p, t->ncols, overflow,
				order);
			GH_CUDA_LAUNCHED(ctx->e, "aggregate_rows");
		}
		GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_OVERFLOW, 1, &failed));
		if (failed == 0)
			return agg_table_list(ctx, t, n + 1);
	}
	GH_TRY(agg_table_init(ctx, t, safe, t->ncols));
	if (n > 0)
	{
		GH_TRY(agg_cluster(ctx, t, keys, n, cl, &order));
		aggregate_rows<false><<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, s>>>(
			keys, n, t->keys, t->rows, t->cap, t->w, t->cols.p, t->ncols, nullptr, order);
		GH_CUDA_LAUNCHED(ctx->e, "aggregate_rows");
	}
	return agg_table_list(ctx, t, n + 1);
}

/* Words of each group's slot gathered in one pass: word at[f] into dst[f][g]. */
#define GATHER_MAX_WORDS 8

typedef struct gather_words
{
	int			nwords;
	size_t		at[GATHER_MAX_WORDS];
	unsigned long long *dst[GATHER_MAX_WORDS];
} gather_words;

__global__ void
gather_group_words(const unsigned long long *__restrict__ slots, size_t w,
				   const uint64_t *__restrict__ groups, size_t ngroups, gather_words gw)
{
	GH_GRID_STRIDE(g, ngroups)
	{
		const unsigned long long *slot = slots + groups[g] * w;

		for (int f = 0; f < gw.nwords; f++)
			gw.dst[f][g] = slot[gw.at[f]];
	}
}

/* dst[g] = src[slot of group g] (src a column of t's slots), on the device */
template <typename T>
static gh_status
gather_on_device(const gh_cuda_ctx *ctx, const agg_table *t, const T *src, T *dst)
{
	if (t->ngroups == 0)
		return GH_OK;
	gather_groups<T><<<gh_cuda_grid(t->ngroups, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
		src, t->w, t->groups.p, t->ngroups, dst);
	GH_CUDA_LAUNCHED(ctx->e, "gather_groups");
	return GH_OK;
}

/* Set *flag where src (a column of t's slots) is not 0 for some group. */
__global__ void
any_group_word_kernel(const unsigned long long *__restrict__ src, size_t w,
					  const uint64_t *__restrict__ groups, size_t ngroups,
					  unsigned long long *flag)
{
	bool		any = false;

	GH_GRID_STRIDE(g, ngroups)
		any |= src[groups[g] * w] != 0;
	if (__syncthreads_or(any) && threadIdx.x == 0)
		atomicOr(flag, 1ULL);
}

/* Whether src (a column of t's slots) is not 0 for some group. */
static gh_status
any_group_word(const gh_cuda_ctx *ctx, const agg_table *t, const unsigned long long *src,
			   bool *any)
{
	unsigned long long *flag = (unsigned long long *) (ctx->d->scratch + SCRATCH_ANY);
	uint64_t	found = 0;

	GH_CUDA_TRY(ctx->e, cudaMemsetAsync(flag, 0, sizeof(*flag), ctx->d->stream));
	any_group_word_kernel<<<gh_cuda_wide_grid(ctx, t->ngroups, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0,
		ctx->d->stream>>>(src, t->w, t->groups.p, t->ngroups, flag);
	GH_CUDA_LAUNCHED(ctx->e, "any_group_word");
	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_ANY, 1, &found));
	*any = found != 0;
	return GH_OK;
}

/* Gather one per-slot array of t into host[0..ngroups) through staging. */
template <typename T>
static gh_status
copy_groups_out(const gh_cuda_ctx *ctx, const agg_table *t, const T *src,
				gh_dbuf<uint64_t> &staging, void *host)
{
	static_assert(sizeof(T) == sizeof(uint64_t), "group arrays hold 8-byte values");
	GH_TRY(gather_on_device(ctx, t, src, (T *) staging.p));
	return gh_cuda_copy_to_host(ctx, host, staging.p, t->ngroups * sizeof(T));
}

gh_status
agg_copy_out(const gh_cuda_ctx *ctx, const agg_table *t, gh_groups *g)
{
	gh_dbuf<uint64_t> staging;
	size_t		ng = t->ngroups;

	if (ng == 0)
		return GH_OK;
	GH_TRY(staging.alloc(ctx, ng, "group staging"));
	GH_TRY(copy_groups_out(ctx, t, t->keys, staging, g->keys));
	GH_TRY(copy_groups_out(ctx, t, t->rows, staging, g->rows));
	for (int c = 0; c < t->ncols; c++)
	{
		const agg_col_dev *d = &t->cols_host[c];
		gh_aggresult *r = &g->cols[c];

		if (d->nonnull != nullptr)
			GH_TRY(copy_groups_out(ctx, t, d->nonnull, staging, r->nonnull));
		else
		{
			/* no NULL in the column: its non-NULL counts are the row counts */
			free(r->nonnull);
			r->nonnull = g->rows;
		}
		if (d->sum_lo != nullptr)
		{
			bool		high;

			GH_TRY(copy_groups_out(ctx, t, d->sum_lo, staging, r->sum_lo));
			GH_TRY(any_group_word(ctx, t, d->sum_hi, &high));
			if (!high)
			{
				/* every sum fits in int64: no high words */
				free(r->sum_hi);
				r->sum_hi = nullptr;
			}
			else
			{
				GH_TRY(copy_groups_out(ctx, t, d->sum_hi, staging, r->sum_hi));
				/* hi * 2^64 + (signed) lo as a two's complement hi:lo */
				for (size_t i = 0; i < ng; i++)
					r->sum_hi[i] -= (int64_t) r->sum_lo[i] < 0;
			}
		}
		if (d->fsum != nullptr)
			GH_TRY(copy_groups_out(ctx, t, d->fsum, staging, r->fsum));
		if (d->type == GH_INT64)
		{
			if (d->min != nullptr)
				GH_TRY(copy_groups_out(ctx, t, d->min, staging, r->imin));
			if (d->max != nullptr)
				GH_TRY(copy_groups_out(ctx, t, d->max, staging, r->imax));
		}
		else
		{
			/* the ordered images come back in the double arrays; decode */
			if (d->min != nullptr)
				GH_TRY(copy_groups_out(ctx, t, d->min, staging, r->fmin));
			if (d->max != nullptr)
				GH_TRY(copy_groups_out(ctx, t, d->max, staging, r->fmax));
			for (size_t i = 0; i < ng; i++)
			{
				long long	o;

				if (d->min != nullptr)
				{
					memcpy(&o, &r->fmin[i], sizeof(o));
					r->fmin[i] = f64_unorder(o);
				}
				if (d->max != nullptr)
				{
					memcpy(&o, &r->fmax[i], sizeof(o));
					r->fmax[i] = f64_unorder(o);
				}
			}
		}
	}
	return GH_OK;
}

gh_status
agg_table_new(gh_engine *e, int ncols, std::unique_ptr<agg_table> &t)
{
	int			m = ncols > 0 ? ncols : 1;

	t.reset(new (std::nothrow) agg_table());
	if (t == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for aggregation");
	t->ncols = ncols;
	t->cols_host = new (std::nothrow) agg_col_dev[m];
	if (t->cols_host == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for aggregation");
	memset(t->cols_host, 0, m * sizeof(agg_col_dev));
	return GH_OK;
}

gh_status
gh_cuda_aggregate_device(const gh_cuda_ctx *ctx, gh_cuda_agg_rows &rows, size_t n,
						 const gh_aggcol *cols, int ncols, gh_groups **out)
{
	std::unique_ptr<agg_table> t;
	gh_groups  *g;
	gh_status	st;

	*out = nullptr;
	GH_TRY(agg_table_new(ctx->e, ncols, t));
	for (int c = 0; c < ncols; c++)
	{
		agg_col_dev *d = &t->cols_host[c];

		d->type = cols[c].type;
		d->ops = cols[c].ops;
		d->values = rows.values[c].p;
		d->nulls = rows.nulls[c].p;
	}
	GH_TRY(agg_table_run(ctx, t.get(), rows.keys.p, n));
	/* grouped: the rows' memory goes back before the results come out */
	rows.keys.reset();
	for (int c = 0; c < ncols; c++)
	{
		rows.values[c].reset();
		rows.nulls[c].reset();
	}

	g = gh_groups_alloc(t->ngroups, cols, ncols);
	if (g == nullptr)
		return gh_fail(ctx->e, GH_ERR_HOST_NOMEM, "out of host memory for %zu groups",
					   t->ngroups);
	st = agg_copy_out(ctx, t.get(), g);
	if (st != GH_OK)
	{
		gh_groups_free(g);
		return st;
	}
	*out = g;
	return GH_OK;
}

gh_status
gh_cuda_aggregate(gh_engine *e, int dev, const uint64_t *keys, size_t n,
				  const gh_aggcol *cols, int ncols, gh_groups **out)
{
	gh_cuda_ctx ctx;
	gh_cuda_agg_rows rows;

	*out = nullptr;
	GH_TRY(rows.init(e, ncols));
	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	GH_TRY(gh_cuda_stage(&ctx, keys, n, rows.keys, "aggregate keys"));
	for (int c = 0; c < ncols; c++)
	{
		GH_TRY(gh_cuda_stage(&ctx, (const uint64_t *) cols[c].values, n, rows.values[c],
							 "aggregate values"));
		if (cols[c].nulls != nullptr)
			GH_TRY(gh_cuda_stage(&ctx, cols[c].nulls, n, rows.nulls[c],
								 "aggregate null flags"));
	}
	return gh_cuda_aggregate_device(&ctx, rows, n, cols, ncols, out);
}

gh_status
gh_cuda_aggregate_device_bench(const gh_cuda_ctx *ctx, const uint64_t *keys,
							   const int64_t *values, size_t n, uint64_t *ngroups)
{
	std::unique_ptr<agg_table> t;
	gh_dbuf<uint64_t> out_keys;
	gh_dbuf<unsigned long long> out_rows,
				out_lo,
				out_hi;
	gh_dbuf<long long> out_min,
				out_max;

	GH_TRY(agg_table_new(ctx->e, 1, t));
	t->cols_host[0].type = GH_INT64;
	t->cols_host[0].ops = GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX;
	t->cols_host[0].values = values;
	GH_TRY(agg_table_run(ctx, t.get(), keys, n));

	/* compact the groups into device arrays: the result stays there */
	GH_TRY(out_keys.alloc(ctx, t->ngroups, "group keys"));
	GH_TRY(out_rows.alloc(ctx, t->ngroups, "group rows"));
	GH_TRY(out_lo.alloc(ctx, t->ngroups, "group sums"));
	GH_TRY(out_hi.alloc(ctx, t->ngroups, "group sums"));
	GH_TRY(out_min.alloc(ctx, t->ngroups, "group minima"));
	GH_TRY(out_max.alloc(ctx, t->ngroups, "group maxima"));
	{
		const unsigned long long *f[6] = {t->keys, t->rows, t->cols_host[0].sum_lo,
			t->cols_host[0].sum_hi, (const unsigned long long *) t->cols_host[0].min,
		(const unsigned long long *) t->cols_host[0].max};
		unsigned long long *d[6] = {(unsigned long long *) out_keys.p, out_rows.p, out_lo.p,
			out_hi.p, (unsigned long long *) out_min.p, (unsigned long long *) out_max.p};
		gather_words gw;

		gw.nwords = 6;
		for (int i = 0; i < 6; i++)
		{
			gw.at[i] = (size_t) (f[i] - t->keys);
			gw.dst[i] = d[i];
		}
		if (t->ngroups > 0)
		{
			gather_group_words<<<gh_cuda_grid(t->ngroups, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0,
				ctx->d->stream>>>(t->keys, t->w, t->groups.p, t->ngroups, gw);
			GH_CUDA_LAUNCHED(ctx->e, "gather_group_words");
		}
	}
	*ngroups = t->ngroups;
	return GH_OK;
}
