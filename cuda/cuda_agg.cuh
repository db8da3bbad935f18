/*-------------------------------------------------------------------------
 *
 * cuda_agg.cuh
 *	  The GPU's table of groups (cuda_aggregate.cu), shared with the star
 *	  pipeline (cuda_star.cu), whose table lives across batches and grows.
 *
 * A table of cap slots plus one: keys claimed with atomicCAS from
 * gh_range(gh_hash64(key, GH_SEED_AGG), cap) on, linear probing, the key
 * GH_EMPTY_KEY in slot cap of its own; a slot is a group where its row
 * count is not 0.  A slot's words lie together (w of them: key, row count,
 * then each column's accumulators), so that a row's key, count and sums
 * are one 32-byte sector of memory where arrays of each would be one
 * sector each: slot s's key is keys[s * w], its count rows[s * w], and a
 * column's accumulator X of it col.X[s * w].  The accumulators are
 * updated with atomics in an order-free way (cuda_aggregate.cu's header
 * comment): agg_update adds one value to a slot, agg_apply several rows'
 * values gathered first.  agg_move copies a group's accumulators to a
 * slot of another table with the same columns, for a table that grows.
 * These take the slot's word offset (s * w), so that they serve tables in
 * shared memory laid out otherwise (cuda_agg_shared.cu) as well.
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
	/* accumulators, NULL where the operations need none */
	unsigned long long *nonnull;	/* NULL also for no NULLs: the row count */
	unsigned long long *sum_lo;
	unsigned long long *sum_hi;
	double	   *fsum;
	long long  *min;			/* int64 values, or ordered doubles */
	long long  *max;
} agg_col_dev;

/* The table of groups; slot cap is the GH_EMPTY_KEY group's. */
struct agg_table
{
	size_t		cap;
	int			ncols;
	size_t		w;				/* words per slot */
	gh_dbuf<unsigned long long> slots;	/* (cap + 1) * w words */
	unsigned long long *keys = nullptr; /* slots.p: slot s's key at [s * w] */
	unsigned long long *rows = nullptr; /* slots.p + 1: its row count */
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
 * The slot of key's group among cap (keys w words apart), claiming one if
 * the key is new.  With claimed (a table that grows: the star's), a claim
 * is first reserved in *claimed and refused past limit (AGG_NO_SLOT):
 * claimed slots then stay below cap, so every probe meets its key or a free
 * slot.  AGG_NO_SLOT too after `probes` slots without either.
 */
__device__ __forceinline__ size_t
agg_slot(unsigned long long *slot_keys, size_t cap, size_t w, uint64_t key,
		 unsigned long long *claimed = nullptr, unsigned long long limit = 0,
		 size_t probes = SIZE_MAX)
{
	size_t		s;

	if (key == GH_EMPTY_KEY)
		return cap;
	s = gh_range(gh_hash64(key, GH_SEED_AGG), cap);
	for (size_t probe = 0; probe < probes; probe++)
	{
		unsigned long long cur = __ldcg(slot_keys + s * w);

		if (cur == key)
			return s;
		if (cur == GH_EMPTY_KEY)
		{
			if (claimed != nullptr && atomicAdd(claimed, 1ULL) >= limit)
			{
				atomicAdd(claimed, ~0ULL);
				return AGG_NO_SLOT;
			}
			cur = atomicCAS(slot_keys + s * w, GH_EMPTY_KEY, key);
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
	return AGG_NO_SLOT;
}

/*
 * One column's contribution of several rows to a group, gathered before it
 * is added with atomics: non-null count, the int64 sum as hi * 2^64 + lo
 * (lo signed; see agg_sum_carry), the double sum, and min/max as int64s or
 * ordered doubles.
 */
typedef struct agg_val
{
	unsigned long long nonnull;
	long long	lo;
	long long	hi;
	double		fsum;
	long long	min;
	long long	max;
} agg_val;

/*
 * An int64 sum is kept as hi * 2^64 + lo with lo a signed 64-bit word: an
 * addition to lo that overflows moves 1 into or out of hi.  Most sums never
 * overflow, so hi is rarely touched (a carry word per negative value would
 * be touched for half of them); agg_copy_out turns hi and lo into the two's
 * complement pair of the engine's results.  This is the carry of adding v
 * to a lo that was old.
 */
__device__ __forceinline__ long long
agg_sum_carry(long long old, long long v)
{
	long long	sum = (long long) ((unsigned long long) old + (unsigned long long) v);

	if (old >= 0 && v >= 0 && sum < 0)
		return 1;
	if (old < 0 && v < 0 && sum >= 0)
		return -1;
	return 0;
}

/* The value of one row (not NULL), as a contribution. */
__device__ __forceinline__ agg_val
agg_val_of(const agg_col_dev &col, long long bits)
{
	agg_val		a;

	a.nonnull = 1;
	a.lo = bits;
	a.hi = 0;
	a.fsum = col.type == GH_INT64 ? 0.0 : __longlong_as_double(bits);
	a.min = a.max = col.type == GH_INT64 ? bits : f64_order(__longlong_as_double(bits));
	return a;
}

/*
 * Add a contribution (nonnull > 0) to the slot at word offset o of a
 * column's accumulators, global or shared.  A column without a nonnull
 * array counts no NULLs: its non-null count is the group's row count.
 */
__device__ __forceinline__ void
agg_apply(const agg_col_dev &col, size_t o, const agg_val &a)
{
	if (col.nonnull != nullptr)
		atomicAdd(col.nonnull + o, a.nonnull);
	if (col.type == GH_INT64)
	{
		if (col.ops & GH_AGG_SUM)
		{
			long long	old = (long long) atomicAdd(col.sum_lo + o, (unsigned long long) a.lo);
			long long	dhi = a.hi + agg_sum_carry(old, a.lo);

			if (dhi != 0)
				atomicAdd(col.sum_hi + o, (unsigned long long) dhi);
		}
	}
	else if (col.ops & GH_AGG_SUM)
		atomicAdd(col.fsum + o, a.fsum);
	/*
	 * A minimum only falls, so a value not below one read of it (however
	 * stale) cannot lower it: most rows of a group skip the atomic.
	 */
	if ((col.ops & GH_AGG_MIN) && a.min < *(volatile long long *) (col.min + o))
		atomicMin(col.min + o, a.min);
	if ((col.ops & GH_AGG_MAX) && a.max > *(volatile long long *) (col.max + o))
		atomicMax(col.max + o, a.max);
}

/*
 * agg_slot for a table sized by an estimate of its groups: AGG_NO_SLOT when
 * the key finds neither itself nor a free slot within AGG_PROBE_BOUND slots
 * (the table is fuller than planned: the caller starts over, larger).
 */
#define AGG_PROBE_BOUND 256

__device__ __forceinline__ size_t
agg_slot_bounded(unsigned long long *slot_keys, size_t cap, size_t w, uint64_t key)
{
	return agg_slot(slot_keys, cap, w, key, nullptr, 0, AGG_PROBE_BOUND);
}

/* Add one value (an int64, or a double's bits) of column col at offset o. */
__device__ __forceinline__ void
agg_update(const agg_col_dev &col, size_t o, long long bits, bool isnull)
{
	if (!isnull)
		agg_apply(col, o, agg_val_of(col, bits));
}

/* Copy a column's accumulators at offset s to offset to of another table's. */
__device__ __forceinline__ void
agg_move(const agg_col_dev &from, const agg_col_dev &into, size_t s, size_t to)
{
	if (from.nonnull != nullptr)
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

/*
 * An estimate of the distinct keys among n device keys (n itself when n is
 * small: cuda_agg_estimate.cu).
 */
gh_status	gh_cuda_estimate_distinct(const gh_cuda_ctx *ctx, const uint64_t *keys,
									  size_t n, double *estimate);

/* The most slots a block's table of groups can have for t's columns (0: none). */
size_t		agg_shared_capacity(const gh_cuda_ctx *ctx, const agg_table *t);

/*
 * Aggregate n device keys (and t's columns' values) into t through tables
 * of cap slots in each block's shared memory; *overflow (device) becomes
 * non-zero if t turned out too small (cuda_agg_shared.cu).
 */
gh_status	agg_shared_run(const gh_cuda_ctx *ctx, agg_table *t, const uint64_t *keys,
						   size_t n, size_t cap, unsigned long long *overflow);

#endif							/* GPUHASH_CUDA_AGG_CUH */
