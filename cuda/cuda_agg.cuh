/*-------------------------------------------------------------------------
 *
 * cuda_agg.cuh
 *	  The GPU's table of groups (cuda_aggregate.cu), shared with the star
 *	  pipeline (cuda_star.cu), whose table lives across batches and grows.
 *
 * A table of cap slots plus one: keys claimed with atomicCAS from
 * gh_range(gh_hash64(key, GH_SEED_AGG), cap) on, linear probing, the key
 * GH_EMPTY_KEY in slot cap of its own; a slot is a group where its row
 * count is not 0.  Each column's accumulators are updated with atomics in
 * an order-free way (cuda_aggregate.cu's header comment): agg_update adds
 * one value to a slot.  agg_move copies a group's accumulators to a slot
 * of another table with the same columns, for a table that grows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CUDA_AGG_CUH
#define GPUHASH_CUDA_AGG_CUH

#include <climits>

#include "cuda_tables.cuh"

/* One value column as the kernels see it (device pointers). */
typedef struct agg_col_dev
{
	int			type;			/* gh_valtype */
	int			ops;			/* GH_AGG_* */
	const void *values;			/* gh_aggregate's input (not the star's) */
	const uint8_t *nulls;
	unsigned long long *nonnull;
	unsigned long long *sum_lo;
	unsigned long long *sum_hi;
	double	   *fsum;
	long long  *min;			/* int64 values, or ordered doubles */
	long long  *max;
} agg_col_dev;

/* The device buffers behind one agg_col_dev's accumulators. */
struct agg_col_bufs
{
	gh_dbuf<unsigned long long> nonnull;
	gh_dbuf<unsigned long long> sum_lo;
	gh_dbuf<unsigned long long> sum_hi;
	gh_dbuf<double> fsum;
	gh_dbuf<long long> min;
	gh_dbuf<long long> max;
};

/* The table of groups; slot cap is the GH_EMPTY_KEY group's. */
struct agg_table
{
	size_t		cap;
	int			ncols;
	gh_dbuf<uint64_t> keys;
	gh_dbuf<unsigned long long> rows;
	std::unique_ptr<agg_col_bufs[]> bufs;
	agg_col_dev *cols_host = nullptr;
	gh_dbuf<agg_col_dev> cols;	/* device copy of cols_host */
	gh_dbuf<uint64_t> groups;	/* slot of each group, after agg_table_list */
	size_t		ngroups;

	~agg_table()
	{
		delete[] cols_host;
	}
};

/* An integer image of a double with the same order; all NaNs largest. */
__device__ __forceinline__ long long
f64_order(double d)
{
	long long	b = isnan(d) ? 0x7ff8000000000000LL : __double_as_longlong(d);

	return b >= 0 ? b : b ^ LLONG_MAX;
}

#define AGG_NO_SLOT (~(size_t) 0)

/*
 * The slot of key's group, claiming one if the key is new.  With claimed
 * (a table that grows: the star's), a claim is first reserved in
 * *claimed and refused past limit (AGG_NO_SLOT): claimed slots then stay
 * below cap, so every probe meets its key or a free slot.
 */
__device__ __forceinline__ size_t
agg_slot(unsigned long long *slot_keys, size_t cap, uint64_t key,
		 unsigned long long *claimed = nullptr, unsigned long long limit = 0)
{
	size_t		s;

	if (key == GH_EMPTY_KEY)
		return cap;
	s = gh_range(gh_hash64(key, GH_SEED_AGG), cap);
	for (;;)
	{
		unsigned long long cur = __ldcg(slot_keys + s);

		if (cur == key)
			return s;
		if (cur == GH_EMPTY_KEY)
		{
			if (claimed != nullptr && atomicAdd(claimed, 1ULL) >= limit)
			{
				atomicAdd(claimed, ~0ULL);
				return AGG_NO_SLOT;
			}
			cur = atomicCAS(slot_keys + s, GH_EMPTY_KEY, key);
			if (cur == GH_EMPTY_KEY)
				return s;
			if (claimed != nullptr)
				atomicAdd(claimed, ~0ULL);	/* another thread took it */
			if (cur == key)
				return s;
		}
		if (++s == cap)
			s = 0;
	}
}

/* Add one value (an int64, or a double's bits) of column col to slot s. */
__device__ __forceinline__ void
agg_update(const agg_col_dev &col, size_t s, long long bits, bool isnull)
{
	if (isnull)
		return;
	atomicAdd(col.nonnull + s, 1ULL);
	if (col.type == GH_INT64)
	{
		long long	v = bits;

		if (col.ops & GH_AGG_SUM)
		{
			unsigned long long u = (unsigned long long) v;
			unsigned long long old = atomicAdd(col.sum_lo + s, u);
			unsigned long long dhi = (old + u < old ? 1ULL : 0ULL) + (v < 0 ? ~0ULL : 0ULL);

			if (dhi != 0)
				atomicAdd(col.sum_hi + s, dhi);
		}
		if (col.ops & GH_AGG_MIN)
			atomicMin(col.min + s, v);
		if (col.ops & GH_AGG_MAX)
			atomicMax(col.max + s, v);
	}
	else
	{
		double		v = __longlong_as_double(bits);

		if (col.ops & GH_AGG_SUM)
			atomicAdd(col.fsum + s, v);
		if (col.ops & GH_AGG_MIN)
			atomicMin(col.min + s, f64_order(v));
		if (col.ops & GH_AGG_MAX)
			atomicMax(col.max + s, f64_order(v));
	}
}

/* Copy the accumulators of slot s of a column to slot to of another table's. */
__device__ __forceinline__ void
agg_move(const agg_col_dev &from, const agg_col_dev &into, size_t s, size_t to)
{
	into.nonnull[to] = from.nonnull[s];
	if (from.sum_lo != nullptr)
	{
		into.sum_lo[to] = from.sum_lo[s];
		into.sum_hi[to] = from.sum_hi[s];
	}
	if (from.fsum != nullptr)
		into.fsum[to] = from.fsum[s];
	if (from.min != nullptr)
		into.min[to] = from.min[s];
	if (from.max != nullptr)
		into.max[to] = from.max[s];
}

/* An agg_table with its column arrays allocated for ncols columns. */
gh_status	agg_table_new(gh_engine *e, int ncols, std::unique_ptr<agg_table> &t);

/*
 * Allocate t's slots (cap of them, and the GH_EMPTY_KEY group's) and the
 * column accumulators, all empty; cols_host[c] must hold each column's
 * type and operations (and for gh_aggregate its input pointers).
 */
gh_status	agg_table_init(const gh_cuda_ctx *ctx, agg_table *t, size_t cap, int ncols);

/* List t's groups (t->groups, t->ngroups), at most `most` of them. */
gh_status	agg_table_list(const gh_cuda_ctx *ctx, agg_table *t, size_t most);

/* Copy the groups listed into g (made by gh_groups_alloc for t->ngroups). */
gh_status	agg_copy_out(const gh_cuda_ctx *ctx, const agg_table *t, gh_groups *g);

#endif							/* GPUHASH_CUDA_AGG_CUH */
