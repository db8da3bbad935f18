/*-------------------------------------------------------------------------
 *
 * cpu_aggregate.c
 *	  Hash aggregation of one partition on the CPU.
 *
 * INTERFACE ROUTINES
 *		gh_cpu_aggregate		keys + value columns -> gh_groups
 *		gh_cpu_accumulate		one column's rows into groups already assigned
 *								(the star's groups too: cpu_star.c)
 *		gh_cpu_probe_aggregate	a range of a probe's pairs -> gh_groups
 *		gh_cpu_agg_bytes_per_row, gh_cpu_joinagg_bytes_per_pair	planning
 *
 * Two passes: the first gives every row its group number through an
 * open-addressing table, the second accumulates each column in row order
 * (non-NULL counts, exact 128-bit sums, double sums, min/max in the CUDA
 * backend's total order of doubles, so that both backends agree).  A join's
 * pairs are written out and gathered into rows, then grouped the same way.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

#define AGG_MIN_SLOTS 16

/* An integer image of a double with the same order; all NaNs one, largest. */
static inline int64_t
f64_order(double d)
{
	int64_t		b;

	if (d != d)
		b = INT64_C(0x7ff8000000000000);
	else
		memcpy(&b, &d, sizeof(b));
	return b >= 0 ? b : b ^ INT64_MAX;
}

static inline double
f64_unorder(int64_t o)
{
	int64_t		b = o >= 0 ? o : o ^ INT64_MAX;
	double		d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

size_t
gh_cpu_agg_bytes_per_row(int ncols)
{
	/*
	 * Slots (fewer than 4 per row, 8 bytes each), the row's group number,
	 * the group keys while grouping, and a result group per row at worst:
	 * key, count and eight 8-byte arrays per column.
	 */
	return 4 * 8 + 8 + 8 + 16 + 64 * (size_t) (ncols > 0 ? ncols : 0);
}

/* Of gh_cpu_agg_bytes_per_row, the result group's part. */
size_t
gh_cpu_agg_bytes_per_group(int ncols)
{
	return 16 + 64 * (size_t) (ncols > 0 ? ncols : 0);
}

/*
 * Assign every row a group; gkeys receives the group keys in first-seen order.
 * Linear probing from gh_hash64(key, GH_SEED_AGG), the table at most half
 * full; a slot holds a group number + 1, so 0 marks a free slot and every key,
 * GH_EMPTY_KEY included, can be a group.
 */
static gh_status
assign_groups(gh_engine *e, const uint64_t *keys, size_t n, size_t *group_of,
			  uint64_t *gkeys, size_t *ngroups)
{
	size_t		cap = AGG_MIN_SLOTS;
	size_t	   *slots;
	size_t		ng = 0;

	while (cap < 2 * n)
		cap <<= 1;
	slots = calloc(cap, sizeof(size_t));
	if (slots == NULL)
		return gh_fail(e, GH_ERR_HOST_NOMEM,
					   "out of host memory for a group table of %zu slots", cap);
	gh_account(e, (long long) (cap * sizeof(size_t)));
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	key = keys[i];
		size_t		s = gh_hash64(key, GH_SEED_AGG) & (cap - 1);

		while (slots[s] != 0 && gkeys[slots[s] - 1] != key)
			s = (s + 1) & (cap - 1);
		if (slots[s] == 0)
		{
			gkeys[ng] = key;
			slots[s] = ++ng;
		}
		group_of[i] = slots[s] - 1;
	}
	gh_account(e, -(long long) (cap * sizeof(size_t)));
	free(slots);
	*ngroups = ng;
	return GH_OK;
}

static void
accumulate_int64(gh_aggresult *r, const gh_aggcol *col, const size_t *group_of,
				 size_t n)
{
	const int64_t *v = col->values;

	for (size_t i = 0; i < n; i++)
	{
		size_t		g = group_of[i];
		bool		first;

		if (col->nulls && col->nulls[i])
			continue;
		first = r->nonnull[g]++ == 0;
		if (col->ops & GH_AGG_SUM)
		{
			uint64_t	lo = r->sum_lo[g] + (uint64_t) v[i];

			r->sum_hi[g] += (v[i] < 0 ? -1 : 0) + (lo < r->sum_lo[g] ? 1 : 0);
			r->sum_lo[g] = lo;
		}
		if ((col->ops & GH_AGG_MIN) && (first || v[i] < r->imin[g]))
			r->imin[g] = v[i];
		if ((col->ops & GH_AGG_MAX) && (first || v[i] > r->imax[g]))
			r->imax[g] = v[i];
	}
}

static void
accumulate_float64(gh_aggresult *r, const gh_aggcol *col,
				   const size_t *group_of, size_t n)
{
	const double *v = col->values;

	for (size_t i = 0; i < n; i++)
	{
		size_t		g = group_of[i];
		bool		first;
		int64_t		o;

		if (col->nulls && col->nulls[i])
			continue;
		first = r->nonnull[g]++ == 0;
		if (col->ops & GH_AGG_SUM)
			r->fsum[g] += v[i];
		o = f64_order(v[i]);
		if ((col->ops & GH_AGG_MIN) && (first || o < f64_order(r->fmin[g])))
			r->fmin[g] = f64_unorder(o);
		if ((col->ops & GH_AGG_MAX) && (first || o > f64_order(r->fmax[g])))
			r->fmax[g] = f64_unorder(o);
	}
}

void
gh_cpu_accumulate(gh_aggresult *r, const gh_aggcol *col, const size_t *group_of, size_t n)
{
	if (col->type == GH_INT64)
		accumulate_int64(r, col, group_of, n);
	else
		accumulate_float64(r, col, group_of, n);
}

gh_status
gh_cpu_aggregate(gh_engine *e, int dev, const uint64_t *keys, size_t n,
				 const gh_aggcol *cols, int ncols, gh_groups **out)
{
	size_t	   *group_of;
	uint64_t   *gkeys;
	size_t		ngroups = 0;
	size_t		tmp_bytes = 2 * n * sizeof(uint64_t);
	gh_groups  *g;
	gh_status	st;

	(void) dev;
	*out = NULL;
	group_of = malloc((n > 0 ? n : 1) * sizeof(size_t));
	gkeys = malloc((n > 0 ? n : 1) * sizeof(uint64_t));
	if (group_of == NULL || gkeys == NULL)
	{
		free(group_of);
		free(gkeys);
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory aggregating %zu rows", n);
	}
	gh_account(e, (long long) tmp_bytes);
	st = assign_groups(e, keys, n, group_of, gkeys, &ngroups);
	g = st == GH_OK ? gh_groups_alloc(ngroups, cols, ncols) : NULL;
	if (st == GH_OK && g == NULL)
		st = gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for %zu groups", ngroups);
	if (st == GH_OK)
	{
		memcpy(g->keys, gkeys, ngroups * sizeof(uint64_t));
		for (size_t i = 0; i < n; i++)
			g->rows[group_of[i]]++;
		for (int c = 0; c < ncols; c++)
			gh_cpu_accumulate(&g->cols[c], &cols[c], group_of, n);
		gh_groups_compact(g);
		*out = g;
	}
	gh_account(e, -(long long) tmp_bytes);
	free(group_of);
	free(gkeys);
	return st;
}

size_t
gh_cpu_joinagg_bytes_per_pair(const gh_joinagg *spec, size_t outer_rows,
							  size_t *fixed)
{
	int			ncols = spec->ncols > 0 ? spec->ncols : 0;

	/* the probe (cpu_probe.c: 24 bytes a key at most); nothing is staged */
	*fixed = 24 * outer_rows;
	/* the pair, its key and values, then the grouping */
	return sizeof(gh_pair) + 8 + 9 * (size_t) ncols + gh_cpu_agg_bytes_per_row(ncols);
}

/* Each pair's group key and column values, gathered from either side. */
static void
gather_pair_rows(const gh_joinagg *spec, const gh_pair *pairs, size_t count,
				 uint64_t *keys, gh_aggcol *cols)
{
	const uint64_t *ok = spec->outer_keys;
	const uint64_t *ik = spec->inner_keys;

	for (size_t i = 0; i < count; i++)
		keys[i] = (ok ? ok[pairs[i].outer] : 0) | (ik ? ik[pairs[i].inner] : 0);
	for (int c = 0; c < spec->ncols; c++)
	{
		bool		inner = spec->col_inner != NULL && spec->col_inner[c] != 0;
		const uint64_t *src = spec->cols[c].values;
		const uint8_t *src_nulls = spec->cols[c].nulls;
		uint64_t   *dst = (uint64_t *) cols[c].values;
		uint8_t    *dst_nulls = (uint8_t *) cols[c].nulls;

		for (size_t i = 0; i < count; i++)
		{
			uint64_t	at = inner ? pairs[i].inner : pairs[i].outer;

			dst[i] = src[at];
			if (dst_nulls)
				dst_nulls[i] = src_nulls[at];
		}
	}
}

gh_status
gh_cpu_probe_aggregate(gh_engine *e, void *probe, uint64_t first, size_t count,
					   const gh_joinagg *spec, gh_groups **out)
{
	int			ncols = spec->ncols;
	size_t		m = count > 0 ? count : 1;
	gh_pair    *pairs = malloc(m * sizeof(gh_pair));
	uint64_t   *keys = malloc(m * sizeof(uint64_t));
	gh_aggcol  *cols = calloc(ncols > 0 ? ncols : 1, sizeof(gh_aggcol));
	size_t		bytes = count * (sizeof(gh_pair) + sizeof(uint64_t));
	bool		allocated = pairs != NULL && keys != NULL && cols != NULL;
	gh_status	st;

	*out = NULL;
	for (int c = 0; allocated && c < ncols; c++)
	{
		const gh_aggcol *src = &spec->cols[c];

		cols[c].type = src->type;
		cols[c].ops = src->ops;
		cols[c].values = malloc(m * sizeof(uint64_t));
		cols[c].nulls = src->nulls ? malloc(m) : NULL;
		allocated = cols[c].values != NULL && (src->nulls == NULL || cols[c].nulls != NULL);
		bytes += count * (src->nulls ? 9 : 8);
	}
	if (!allocated)
		st = gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory grouping %zu pairs", count);
	else
	{
		gh_account(e, (long long) bytes);
		st = gh_cpu_probe_write(e, probe, first, count, pairs);
		if (st == GH_OK)
		{
			gather_pair_rows(spec, pairs, count, keys, cols);
			st = gh_cpu_aggregate(e, 0, keys, count, cols, ncols, out);
		}
		gh_account(e, -(long long) bytes);
	}
	for (int c = 0; cols != NULL && c < ncols; c++)
	{
		free((void *) cols[c].values);
		free((void *) cols[c].nulls);
	}
	free(cols);
	free(keys);
	free(pairs);
	return st;
}
