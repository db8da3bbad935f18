/*-------------------------------------------------------------------------
 *
 * engine_aggregate.c
 *	  Aggregation in the common layer: gh_aggregate split into hash-range
 *	  partitions across the devices, and the merge of the pieces.
 *
 * INTERFACE ROUTINES
 *		gh_aggregate			grouping, split and merged across partitions
 *		gh_groups_alloc, gh_groups_free	result arrays
 *		gh_groups_merge			pieces into one result (engine_internal.h)
 *		gh_groups_combine		results of the same aggregation as one
 *
 * Inputs that fit one device's memory limit and an engine of one device go
 * to the backend whole.  Otherwise keys and value columns are laid out
 * partition by partition (nparts a multiple of the device count), partition
 * p goes to device p mod ndevices, and every device aggregates its
 * partitions in turn on a thread of its own (gh_for_devices), all devices at
 * once.  Groups of different partitions are disjoint, so their results are
 * concatenated in partition order (the result does not depend on which
 * device finished first); a partition larger than the limit (one very
 * frequent key) is aggregated in row-range passes whose pieces are merged
 * group by group.
 *
 * On several devices, an input of few groups (a sample of its keys says so)
 * is not split at all: every device aggregates its own range of rows and
 * the devices' groups, few, are merged group by group.  Splitting would
 * move every row once on the host to save a merge of a few groups; a wrong
 * guess only costs a larger merge.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "hash.h"

/*
 * Result arrays for ngroups groups: keys, rows, and per column the non-NULL
 * counts and only the arrays its operations fill (the others stay NULL):
 * a large result is copied and sent on whole, so unused arrays would cost.
 */
gh_groups *
gh_groups_alloc(size_t ngroups, const gh_aggcol *cols, int ncols)
{
	gh_groups  *g = calloc(1, sizeof(*g));
	size_t		m = ngroups ? ngroups : 1;

	if (g == NULL)
		return NULL;
	g->ngroups = ngroups;
	g->ncols = ncols;
	g->partitions = 1;
	g->keys = calloc(m, sizeof(uint64_t));
	g->rows = calloc(m, sizeof(int64_t));
	g->cols = calloc(ncols > 0 ? ncols : 1, sizeof(gh_aggresult));
	if (g->keys == NULL || g->rows == NULL || g->cols == NULL)
	{
		gh_groups_free(g);
		return NULL;
	}
	for (int c = 0; c < ncols; c++)
	{
		gh_aggresult *r = &g->cols[c];
		bool		is_int = cols[c].type == GH_INT64;
		int			ops = cols[c].ops;
		bool		ok = (r->nonnull = calloc(m, sizeof(int64_t))) != NULL;

		if ((ops & GH_AGG_SUM) && is_int)
			ok &= (r->sum_lo = calloc(m, sizeof(uint64_t))) != NULL &&
				(r->sum_hi = calloc(m, sizeof(int64_t))) != NULL;
		if ((ops & GH_AGG_SUM) && !is_int)
			ok &= (r->fsum = calloc(m, sizeof(double))) != NULL;
		if (ops & GH_AGG_MIN)
			ok &= is_int ? (r->imin = calloc(m, sizeof(int64_t))) != NULL :
				(r->fmin = calloc(m, sizeof(double))) != NULL;
		if (ops & GH_AGG_MAX)
			ok &= is_int ? (r->imax = calloc(m, sizeof(int64_t))) != NULL :
				(r->fmax = calloc(m, sizeof(double))) != NULL;
		if (!ok)
		{
			gh_groups_free(g);
			return NULL;
		}
	}
	return g;
}

void
gh_groups_free(gh_groups *g)
{
	if (g == NULL)
		return;
	if (g->cols)
		for (int c = 0; c < g->ncols; c++)
		{
			gh_aggresult *r = &g->cols[c];

			if (r->nonnull != g->rows)
				free(r->nonnull);
			free(r->sum_lo);
			free(r->sum_hi);
			free(r->fsum);
			free(r->imin);
			free(r->imax);
			free(r->fmin);
			free(r->fmax);
		}
	free(g->cols);
	free(g->keys);
	free(g->rows);
	free(g);
}

/*
 * Leave out of g what its readers can do without (engine.h): non-NULL
 * counts equal to the row counts become the rows array, and the high words
 * of sums that all fit in int64 go.
 */
void
gh_groups_compact(gh_groups *g)
{
	for (int c = 0; c < g->ncols; c++)
	{
		gh_aggresult *r = &g->cols[c];
		bool		differ = false;

		if (r->nonnull != NULL && r->nonnull != g->rows)
		{
			for (size_t i = 0; i < g->ngroups && !differ; i++)
				differ = r->nonnull[i] != g->rows[i];
			if (!differ)
			{
				free(r->nonnull);
				r->nonnull = g->rows;
			}
		}
		if (r->sum_hi == NULL)
			continue;
		differ = false;
		for (size_t i = 0; i < g->ngroups && !differ; i++)
			differ = r->sum_hi[i] != ((int64_t) r->sum_lo[i] >> 63);
		if (!differ)
		{
			free(r->sum_hi);
			r->sum_hi = NULL;
		}
	}
}

/* Copy group `from` of src into slot `to` of dst (same columns). */
static void
group_copy(gh_groups *dst, size_t to, const gh_groups *src, size_t from)
{
	dst->keys[to] = src->keys[from];
	dst->rows[to] = src->rows[from];
	for (int c = 0; c < src->ncols; c++)
	{
		gh_aggresult *d = &dst->cols[c];
		const gh_aggresult *s = &src->cols[c];

		d->nonnull[to] = s->nonnull[from];
		if (d->sum_lo)
		{
			d->sum_lo[to] = s->sum_lo[from];
			d->sum_hi[to] = gh_sum_hi(s, from);
		}
		if (d->fsum)
			d->fsum[to] = s->fsum[from];
		if (d->imin)
			d->imin[to] = s->imin[from];
		if (d->imax)
			d->imax[to] = s->imax[from];
		if (d->fmin)
			d->fmin[to] = s->fmin[from];
		if (d->fmax)
			d->fmax[to] = s->fmax[from];
	}
}

/*
 * The backends' total order of doubles (PostgreSQL's, NaN largest, with -0
 * below +0 so that results do not depend on row order).
 */
static int
float_order_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	if (a == b && signbit(a) != signbit(b))
		return signbit(a) ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Fold group `from` of src into group `to` of dst (same key). */
static void
group_combine(gh_groups *dst, size_t to, const gh_groups *src, size_t from)
{
	dst->rows[to] += src->rows[from];
	for (int c = 0; c < src->ncols; c++)
	{
		gh_aggresult *d = &dst->cols[c];
		const gh_aggresult *s = &src->cols[c];
		bool		had = d->nonnull[to] > 0;

		if (s->nonnull[from] == 0)
			continue;
		d->nonnull[to] += s->nonnull[from];
		if (d->sum_lo)
		{
			uint64_t	lo = d->sum_lo[to] + s->sum_lo[from];

			d->sum_hi[to] += gh_sum_hi(s, from) + (lo < d->sum_lo[to]);
			d->sum_lo[to] = lo;
		}
		if (d->imin && (!had || s->imin[from] < d->imin[to]))
			d->imin[to] = s->imin[from];
		if (d->imax && (!had || s->imax[from] > d->imax[to]))
			d->imax[to] = s->imax[from];
		if (d->fsum)
			d->fsum[to] += s->fsum[from];
		if (d->fmin && (!had || float_order_cmp(s->fmin[from], d->fmin[to]) < 0))
			d->fmin[to] = s->fmin[from];
		if (d->fmax && (!had || float_order_cmp(s->fmax[from], d->fmax[to]) > 0))
			d->fmax[to] = s->fmax[from];
	}
}

/*
 * Gather the groups of several pieces into one result.  disjoint: the pieces
 * hold different keys (hash-range partitions), so concatenate; otherwise
 * combine equal keys (row-range pieces of one partition, or the pieces of a
 * join's pairs).
 */
gh_groups *
gh_groups_merge(gh_engine *e, gh_groups **pieces, int npieces,
				const gh_aggcol *cols, int ncols, bool disjoint)
{
	size_t		total = 0,
				ng = 0,
				cap;
	gh_groups  *g;
	uint64_t   *slot_key = NULL;
	size_t	   *slot_at = NULL;
	bool	   *slot_used = NULL;

	for (int p = 0; p < npieces; p++)
		total += pieces[p]->ngroups;
	g = gh_groups_alloc(total, cols, ncols);
	if (g == NULL)
	{
		gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory merging groups");
		return NULL;
	}
	cap = 16;
	while (cap < 2 * total)
		cap <<= 1;
	if (!disjoint)
	{
		slot_key = malloc(cap * sizeof(uint64_t));
		slot_at = malloc(cap * sizeof(size_t));
		slot_used = calloc(cap, sizeof(bool));
		if (!slot_key || !slot_at || !slot_used)
		{
			free(slot_key);
			free(slot_at);
			free(slot_used);
			gh_groups_free(g);
			gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory merging groups");
			return NULL;
		}
	}
	for (int p = 0; p < npieces; p++)
		for (size_t i = 0; i < pieces[p]->ngroups; i++)
		{
			uint64_t	k = pieces[p]->keys[i];

			if (!disjoint)
			{
				size_t		s = gh_hash64(k, GH_SEED_AGG) & (cap - 1);

				while (slot_used[s] && slot_key[s] != k)
					s = (s + 1) & (cap - 1);
				if (slot_used[s])
				{
					group_combine(g, slot_at[s], pieces[p], i);
					continue;
				}
				slot_used[s] = true;
				slot_key[s] = k;
				slot_at[s] = ng;
			}
			group_copy(g, ng++, pieces[p], i);
		}
	g->ngroups = ng;
	free(slot_key);
	free(slot_at);
	free(slot_used);
	gh_groups_compact(g);
	return g;
}

/* Keys sampled by few_groups, and how many distinct ones make few groups. */
#define SAMPLE_KEYS		16384
#define FEW_IN_SAMPLE	(SAMPLE_KEYS / 8)

/*
 * Few groups: SAMPLE_KEYS keys spread evenly over the input hold at most
 * FEW_IN_SAMPLE distinct values.  False where there is no memory to tell.
 */
static bool
few_groups(const uint64_t *keys, size_t n)
{
	size_t		cap = 2 * SAMPLE_KEYS;
	uint64_t   *slot = malloc(cap * sizeof(uint64_t));
	bool	   *used = calloc(cap, sizeof(bool));
	size_t		distinct = 0;

	if (slot == NULL || used == NULL || n < SAMPLE_KEYS)
	{
		free(slot);
		free(used);
		return false;
	}
	for (size_t i = 0; i < SAMPLE_KEYS && distinct <= FEW_IN_SAMPLE; i++)
	{
		uint64_t	k = keys[i * (n / SAMPLE_KEYS)];
		size_t		h = gh_hash64(k, GH_SEED_AGG) & (cap - 1);

		while (used[h] && slot[h] != k)
			h = (h + 1) & (cap - 1);
		if (!used[h])
		{
			used[h] = true;
			slot[h] = k;
			distinct++;
		}
	}
	free(slot);
	free(used);
	return distinct <= FEW_IN_SAMPLE;
}

/* Aggregate rows [start, start+m) of a partition-ordered layout, in pieces. */
static gh_status
aggregate_partition(gh_engine *e, int dev, const uint64_t *keys, size_t m,
					const gh_aggcol *cols, int ncols, size_t max_rows,
					gh_groups **out)
{
	int			npieces = m == 0 ? 1 : (int) ((m + max_rows - 1) / max_rows);
	gh_groups **pieces;
	gh_status	st = GH_OK;
	gh_aggcol  *pc = NULL;

	if (npieces == 1)
	{
		CHECK_INTERRUPT(e);
		if (gh_injected_failure(e, dev))
			return e->inject_status;
		return e->ops->aggregate(e, dev, keys, m, cols, ncols, out);
	}
	pieces = gh_calloc(e, npieces, sizeof(gh_groups *));
	pc = gh_calloc(e, ncols > 0 ? ncols : 1, sizeof(gh_aggcol));
	if (pieces == NULL || pc == NULL)
	{
		free(pieces);
		free(pc);
		return e->status;
	}
	for (int i = 0; st == GH_OK && i < npieces; i++)
	{
		size_t		start = (size_t) i * max_rows;
		size_t		len = m - start < max_rows ? m - start : max_rows;

		for (int c = 0; c < ncols; c++)
		{
			pc[c] = cols[c];
			pc[c].values = (const char *) cols[c].values + start * 8;
			pc[c].nulls = cols[c].nulls ? cols[c].nulls + start : NULL;
		}
		if (gh_interrupted(e))
			st = GH_ERR_CANCELLED;
		else if (gh_injected_failure(e, dev))
			st = e->inject_status;
		else
			st = e->ops->aggregate(e, dev, keys + start, len, pc, ncols, &pieces[i]);
	}
	if (st == GH_OK)
	{
		*out = gh_groups_merge(e, pieces, npieces, cols, ncols, false);
		if (*out == NULL)
			st = e->status;
	}
	for (int i = 0; i < npieces; i++)
		gh_groups_free(pieces[i]);
	free(pieces);
	free(pc);
	return st;
}

/* The partitioned layout of one gh_aggregate and its pieces. */
typedef struct agg_split
{
	uint32_t	nparts;
	size_t	   *off;			/* nparts + 1 partition offsets */
	const uint64_t *keys;		/* partition-ordered */
	const gh_aggcol *cols;		/* partition-ordered columns */
	int			ncols;
	size_t		max_rows;
	gh_groups **pieces;			/* per partition */
} agg_split;

/* Device thread: aggregate partitions dev, dev + ndevices, ... */
static gh_status
aggregate_device_partitions(gh_engine *e, int dev, void *arg)
{
	agg_split  *s = arg;
	gh_aggcol  *pc = gh_calloc(e, s->ncols > 0 ? s->ncols : 1, sizeof(gh_aggcol));
	gh_status	st = GH_OK;

	if (pc == NULL)
		return e->status;
	for (uint32_t p = (uint32_t) dev; st == GH_OK && p < s->nparts; p += e->opt.ndevices)
	{
		size_t		start = s->off[p];

		for (int c = 0; c < s->ncols; c++)
		{
			pc[c] = s->cols[c];
			pc[c].values = (const char *) s->cols[c].values + start * 8;
			pc[c].nulls = s->cols[c].nulls ? s->cols[c].nulls + start : NULL;
		}
		st = aggregate_partition(e, dev, s->keys + start, s->off[p + 1] - start, pc,
								 s->ncols, s->max_rows, &s->pieces[p]);
	}
	free(pc);
	return st;
}

/* Record the devices that aggregated partitions (all of nparts' devices). */
static void
set_devices(gh_engine *e, gh_groups *g, uint32_t nparts)
{
	uint32_t	mask = 0;

	for (uint32_t p = 0; p < nparts && p < (uint32_t) e->opt.ndevices; p++)
		mask |= 1u << p;
	g->ndevices = gh_device_ids(e, mask, g->devices, GH_MAX_DEVICES);
}

/* Keys and columns into partition order (gh_split_scatter_fn). */
typedef struct agg_scatter
{
	const uint64_t *keys;
	const gh_aggcol *cols;
	int			ncols;
	uint64_t   *pk;
	void	  **pv;
	uint8_t   **pn;
} agg_scatter;

static void
scatter_agg_rows(void *arg, size_t begin, size_t end, const uint32_t *pof, size_t *cursor)
{
	agg_scatter *sc = arg;

	for (size_t i = begin; i < end; i++)
	{
		size_t		at = cursor[pof[i]]++;

		sc->pk[at] = sc->keys[i];
		for (int c = 0; c < sc->ncols; c++)
		{
			memcpy((char *) sc->pv[c] + at * 8, (const char *) sc->cols[c].values + i * 8, 8);
			if (sc->pn[c])
				sc->pn[c][at] = sc->cols[c].nulls[i];
		}
	}
}

/*
 * HyperLogLog's estimate of the distinct values behind nreg registers (each
 * the largest rank seen), at most n: the harmonic mean's, or linear
 * counting where it is small and registers are still 0.
 */
double
gh_hll_estimate(const unsigned *reg, int nreg, size_t n)
{
	double		m = nreg,
				inv = 0,
				est;
	int			zeros = 0;

	for (int j = 0; j < nreg; j++)
	{
		inv += ldexp(1.0, -(int) reg[j]);
		zeros += reg[j] == 0;
	}
	est = 0.7213 / (1 + 1.079 / m) * m * m / inv;
	if (est <= 2.5 * m && zeros > 0)
		est = m * log(m / zeros);	/* small counts: linear counting */
	return est < (double) n ? est : (double) n;
}

/* The distinct keys among n host keys: HyperLogLog, one pass (as cuda_agg_estimate.cu's). */
static double
estimate_distinct_host(const uint64_t *keys, size_t n)
{
	unsigned	reg[1 << GH_HLL_BITS] = {0};

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	h = gh_hash64(keys[i], GH_SEED_COUNT);
		unsigned	j = (unsigned) (h >> (64 - GH_HLL_BITS));
		unsigned	rank = (unsigned) __builtin_clzll((h << GH_HLL_BITS) |
													 (UINT64_C(1) << (GH_HLL_BITS - 1))) + 1;

		if (reg[j] < rank)
			reg[j] = rank;
	}
	return gh_hll_estimate(reg, 1 << GH_HLL_BITS, n);
}

/*
 * Partitions for aggregating n rows of ncols columns, and in *max_rows the
 * rows one device call may take.  Planned for a group a row (the most there
 * can be), the memory limit asks for several hash-range partitions, and
 * those go through host memory (the rows laid out partition by partition,
 * the groups merged): seconds for a hundred million rows.  Where the rows
 * alone fit, the distinct keys are estimated (HyperLogLog, on the device
 * where it reads the keys in place) and the table planned for twice as many
 * groups as estimated: should that be too few, the device's aggregation
 * finds out and makes its table again with a slot for every row.
 */
static uint32_t
agg_partitions(gh_engine *e, const uint64_t *keys, size_t n, int ncols, size_t *max_rows)
{
	size_t		bpr = e->ops->agg_bytes_per_row(ncols);
	size_t		per_group = e->ops->agg_bytes_per_group ? e->ops->agg_bytes_per_group(ncols) : 0;
	uint32_t	nparts = gh_partitions_for(e, n, bpr);
	double		groups;
	double		need;

	*max_rows = e->opt.memory_limit / (bpr ? bpr : 1);
	if (*max_rows < 1)
		*max_rows = 1;
	if (nparts <= (uint32_t) e->opt.ndevices || per_group == 0 || per_group >= bpr ||
		(double) n * (double) (bpr - per_group) > (double) e->opt.memory_limit)
		return nparts;
	if (e->ops->estimate_distinct == NULL ||
		!e->ops->estimate_distinct(e, 0, keys, n, &groups))
		groups = estimate_distinct_host(keys, n);
	need = (double) n * (double) (bpr - per_group) + 2 * groups * (double) per_group;
	if (need > (double) e->opt.memory_limit)
		return nparts;
	*max_rows = n;
	return (uint32_t) e->opt.ndevices;	/* as for an input that fits */
}

gh_status
gh_aggregate(gh_engine *e, const uint64_t *keys, size_t n,
			 const gh_aggcol *cols, int ncols, gh_groups **out)
{
	size_t		max_rows;
	uint32_t	nparts;
	gh_split	hs;
	bool		split_made = false;
	uint64_t   *pk = NULL;
	gh_aggcol  *pc = NULL;
	void	  **pv = NULL;
	uint8_t   **pn = NULL;
	gh_groups **pieces = NULL;
	gh_host_inputs hin = {0};
	bool		by_rows = false;
	bool		host_made = false;
	gh_status	st = GH_OK;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (out == NULL || (keys == NULL && n > 0) || ncols < 0 || (ncols > 0 && cols == NULL))
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_aggregate");
	for (int c = 0; c < ncols; c++)
		if ((cols[c].type != GH_INT64 && cols[c].type != GH_FLOAT64) ||
			(cols[c].values == NULL && n > 0))
			return gh_fail(e, GH_ERR_INVALID, "invalid aggregate column %d", c);
	*out = NULL;

	nparts = agg_partitions(e, keys, n, ncols, &max_rows);

	if (nparts == 1)
	{
		st = aggregate_partition(e, 0, keys, n, cols, ncols, max_rows, out);
		if (st == GH_OK)
		{
			(*out)->partitions = 1;
			(*out)->input_rows = n;
			set_devices(e, *out, 1);
		}
		return st;
	}

	/* few groups: every device its own range of rows */
	if (e->opt.ndevices > 1 && n >= GH_THREAD_MIN_ROWS)
	{
		st = gh_host_inputs_make(e, &keys, n, &cols, ncols, &hin);
		if (st != GH_OK)
		{
			gh_host_inputs_free(&hin);
			return st;
		}
		host_made = true;
		by_rows = few_groups(keys, n);
	}
	if (by_rows)
	{
		size_t		off[GH_MAX_DEVICES + 1];
		agg_split	split;

		nparts = (uint32_t) e->opt.ndevices;
		for (uint32_t d = 0; d <= nparts; d++)
			off[d] = gh_row_start(n, nparts, d);
		pieces = gh_calloc(e, nparts, sizeof(gh_groups *));
		if (pieces == NULL)
		{
			st = e->status;
			goto done;
		}
		split = (agg_split) {nparts, off, keys, cols, ncols, max_rows, pieces};
		st = gh_for_devices(e, ALL_DEVICES(e), n, aggregate_device_partitions, &split);
		goto merge;
	}

	/* input that would fit one device: spread over all, split on the devices */
	if (e->ops->aggregate_spread && ncols <= GH_SPREAD_MAX_AGG_COLS &&
		gh_spread_input(e, n, max_rows) && nparts == (uint32_t) e->opt.ndevices)
	{
		pieces = gh_calloc(e, nparts, sizeof(gh_groups *));
		if (pieces == NULL)
			return e->status;
		st = e->ops->aggregate_spread(e, keys, n, cols, ncols, pieces);
		goto merge;
	}

	/* lay keys and columns out partition by partition, on the host */
	if (!host_made)
		st = gh_host_inputs_make(e, &keys, n, &cols, ncols, &hin);
	if (st == GH_OK)
		st = gh_split_make(e, keys, n, nparts, &hs);
	if (st != GH_OK)
	{
		gh_host_inputs_free(&hin);
		return st;
	}
	split_made = true;
	pk = gh_malloc(e, n * sizeof(uint64_t));
	pc = gh_calloc(e, ncols > 0 ? ncols : 1, sizeof(gh_aggcol));
	pv = gh_calloc(e, ncols > 0 ? ncols : 1, sizeof(void *));
	pn = gh_calloc(e, ncols > 0 ? ncols : 1, sizeof(uint8_t *));
	pieces = gh_calloc(e, nparts, sizeof(gh_groups *));
	if (pk == NULL || pc == NULL || pv == NULL || pn == NULL || pieces == NULL)
	{
		st = e->status;
		goto done;
	}
	for (int c = 0; c < ncols; c++)
	{
		pv[c] = gh_malloc(e, n * 8);
		pn[c] = cols[c].nulls ? gh_malloc(e, n) : NULL;
		if (pv[c] == NULL || (cols[c].nulls && pn[c] == NULL))
		{
			st = e->status;
			goto done;
		}
	}
	{
		agg_scatter sc = {keys, cols, ncols, pk, pv, pn};

		gh_split_scatter(&hs, scatter_agg_rows, &sc);
	}
	for (int c = 0; c < ncols; c++)
	{
		pc[c] = cols[c];
		pc[c].values = pv[c];
		pc[c].nulls = pn[c];
	}
	if (gh_interrupted(e))
		st = GH_ERR_CANCELLED;
	else
	{
		agg_split	split = {nparts, hs.off, pk, pc, ncols, max_rows, pieces};
		uint32_t	busy = 0;

		for (uint32_t p = 0; p < nparts && p < (uint32_t) e->opt.ndevices; p++)
			busy |= 1u << p;
		st = gh_for_devices(e, busy, n, aggregate_device_partitions, &split);
	}
merge:
	if (st == GH_OK)
	{
		*out = gh_groups_merge(e, pieces, (int) nparts, cols, ncols, !by_rows);
		if (*out == NULL)
			st = e->status;
		else
		{
			(*out)->partitions = by_rows ? 1 : (int) nparts;
			(*out)->input_rows = n;
			set_devices(e, *out, nparts);
		}
	}

done:
	if (pieces)
		for (uint32_t p = 0; p < nparts; p++)
			gh_groups_free(pieces[p]);
	if (pv)
		for (int c = 0; c < ncols; c++)
			free(pv[c]);
	if (pn)
		for (int c = 0; c < ncols; c++)
			free(pn[c]);
	free(pieces);
	free(pv);
	free(pn);
	free(pc);
	free(pk);
	if (split_made)
		gh_split_free(&hs);
	gh_host_inputs_free(&hin);
	return st;
}

/*
 * The columns results of the aggregation have: those their arrays show (a
 * result of no groups may show none).
 */
static void
result_cols(gh_groups *const *pieces, int npieces, gh_aggcol *cols)
{
	memset(cols, 0, sizeof(gh_aggcol) * pieces[0]->ncols);
	for (int p = 0; p < npieces; p++)
		for (int c = 0; c < pieces[p]->ncols; c++)
		{
			const gh_aggresult *r = &pieces[p]->cols[c];

			if (r->fsum || r->fmin || r->fmax)
				cols[c].type = GH_FLOAT64;
			if (r->sum_lo || r->fsum)
				cols[c].ops |= GH_AGG_SUM;
			if (r->imin || r->fmin)
				cols[c].ops |= GH_AGG_MIN;
			if (r->imax || r->fmax)
				cols[c].ops |= GH_AGG_MAX;
		}
}

gh_status
gh_groups_combine(gh_engine *e, gh_groups *const *pieces, int npieces, gh_groups **out)
{
	gh_aggcol  *cols;
	gh_groups  *g;
	uint64_t	input_rows = 0;
	int			ndev = 0;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (out == NULL || npieces < 1 || pieces == NULL)
		return gh_fail(e, GH_ERR_INVALID, "gh_groups_combine: missing argument");
	*out = NULL;
	for (int p = 0; p < npieces; p++)
		if (pieces[p] == NULL || pieces[p]->ncols != pieces[0]->ncols)
			return gh_fail(e, GH_ERR_INVALID, "gh_groups_combine: pieces of different aggregations");
	cols = calloc(pieces[0]->ncols > 0 ? pieces[0]->ncols : 1, sizeof(gh_aggcol));
	if (cols == NULL)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory merging groups");
	result_cols(pieces, npieces, cols);
	g = gh_groups_merge(e, (gh_groups **) pieces, npieces, cols, pieces[0]->ncols, false);
	free(cols);
	if (g == NULL)
		return e->status;
	for (int p = 0; p < npieces; p++)
	{
		input_rows += pieces[p]->input_rows;
		for (int i = 0; i < pieces[p]->ndevices; i++)
		{
			int			d = pieces[p]->devices[i],
						j = 0;

			while (j < ndev && g->devices[j] != d)
				j++;
			if (j == ndev && ndev < GH_MAX_DEVICES)
				g->devices[ndev++] = d;
		}
	}
	g->input_rows = input_rows;
	g->ndevices = ndev;
	*out = g;
	return GH_OK;
}
