/*-------------------------------------------------------------------------
 *
 * cpu_backend.c
 *	  The CPU backend: its operations table, hash aggregation and
 *	  benchmarks.  Plain C, single-threaded, deterministic: the reference
 *	  the CUDA backend is checked against, and what runs without a GPU.
 *
 * Aggregation assigns each row a group through an open-addressing table
 * keyed by gh_hash64(key, GH_SEED_AGG) (the table holds group numbers; the
 * keys live in the result), then accumulates every column per group: the
 * non-NULL count, an exact 128-bit integer sum (int64 columns) or a float8
 * sum, and min/max.  Simulated devices are labels only: engine.c splits the
 * work, each piece runs here.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_internal.h"

static gh_status
cpu_open(gh_engine *e)
{
	e->bstate = NULL;
	return GH_OK;
}

static void
cpu_close(gh_engine *e)
{
	(void) e;
}

size_t
gh_cpu_build_bytes_per_row(gh_kind kind)
{
	/* HashGraph: CSR keys, rows, offsets, probe offsets and permutation;
	 * BCHT: sorted pairs, rows, distinct keys and ranges, slots at 0.9 */
	return kind == GH_KIND_BCHT ? 80 : 48;
}

static size_t
cpu_agg_bytes_per_row(int ncols)
{
	/* table slots (2 per row), group of row, result arrays per group */
	return 16 + 8 + 16 + (size_t) ncols * 64;
}

/* ---- aggregation ---- */

static gh_status
cpu_aggregate(gh_engine *e, int dev, const uint64_t *keys, size_t n,
			  const gh_aggcol *cols, int ncols, gh_groups **out)
{
	size_t		cap = 16;
	uint64_t   *slot_group;		/* group number + 1; 0 = empty */
	uint64_t   *group_of;
	uint64_t   *gkeys;
	size_t		ngroups = 0;
	gh_groups  *g;

	(void) dev;
	while (cap < 2 * n)
		cap <<= 1;
	slot_group = calloc(cap, sizeof(uint64_t));
	group_of = malloc((n ? n : 1) * sizeof(uint64_t));
	gkeys = malloc((n ? n : 1) * sizeof(uint64_t));
	if (!slot_group || !group_of || !gkeys)
	{
		free(slot_group);
		free(group_of);
		free(gkeys);
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory aggregating %zu rows", n);
	}
	for (size_t i = 0; i < n; i++)
	{
		size_t		s = gh_hash64(keys[i], GH_SEED_AGG) & (cap - 1);

		while (slot_group[s] != 0 && gkeys[slot_group[s] - 1] != keys[i])
			s = (s + 1) & (cap - 1);
		if (slot_group[s] == 0)
		{
			gkeys[ngroups] = keys[i];
			slot_group[s] = ++ngroups;
		}
		group_of[i] = slot_group[s] - 1;
	}
	free(slot_group);

	g = gh_groups_alloc(ngroups, cols, ncols);
	if (g == NULL)
	{
		free(group_of);
		free(gkeys);
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for %zu groups", ngroups);
	}
	memcpy(g->keys, gkeys, ngroups * sizeof(uint64_t));
	free(gkeys);
	for (size_t i = 0; i < n; i++)
		g->rows[group_of[i]]++;
	for (int c = 0; c < ncols; c++)
	{
		gh_aggresult *r = &g->cols[c];

		for (size_t i = 0; i < n; i++)
		{
			size_t		k = group_of[i];
			bool		first;

			if (cols[c].nulls && cols[c].nulls[i])
				continue;
			first = r->nonnull[k]++ == 0;
			if (cols[c].type == GH_INT64)
			{
				int64_t		v = ((const int64_t *) cols[c].values)[i];
				uint64_t	lo = r->sum_lo[k] + (uint64_t) v;

				r->sum_hi[k] += (v < 0 ? -1 : 0) + (lo < r->sum_lo[k]);
				r->sum_lo[k] = lo;
				if (first || v < r->imin[k])
					r->imin[k] = v;
				if (first || v > r->imax[k])
					r->imax[k] = v;
			}
			else
			{
				double		v = ((const double *) cols[c].values)[i];

				r->fsum[k] += v;
				if (first || v < r->fmin[k])
					r->fmin[k] = v;
				if (first || v > r->fmax[k])
					r->fmax[k] = v;
			}
		}
	}
	free(group_of);
	*out = g;
	return GH_OK;
}

/* ---- benchmarks ---- */

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* One run of op; *check receives a result count. */
static gh_status
bench_once(gh_engine *e, gh_bench_op op, gh_kind kind, const uint64_t *build,
		   const uint64_t *probe, const uint64_t *rows, size_t n, double load,
		   gh_pair *pairs, double *ms, uint64_t *check)
{
	void	   *part = NULL;
	void	   *pr = NULL;
	uint64_t	total = 0;
	gh_status	st;
	double		t0,
				t1;

	if (op == GH_BENCH_AGGREGATE)
	{
		gh_aggcol	col = {GH_INT64, GH_AGG_SUM, rows, NULL};
		gh_groups  *g = NULL;

		t0 = now_ms();
		st = cpu_aggregate(e, 0, probe, n, &col, 1, &g);
		*ms = now_ms() - t0;
		if (st == GH_OK)
			*check = g->ngroups;
		gh_groups_free(g);
		return st;
	}
	t0 = now_ms();
	st = gh_cpu_build(e, 0, kind, build, rows, n, load, &part);
	t1 = now_ms();
	if (st != GH_OK)
		return st;
	*ms = t1 - t0;
	*check = n;
	if (op != GH_BENCH_BUILD)
	{
		t0 = now_ms();
		st = gh_cpu_probe_begin(e, part, probe, n,
								op == GH_BENCH_JOIN ? GH_JOIN_INTERSECT : GH_JOIN_PROBE,
								&pr, &total);
		if (st == GH_OK && op == GH_BENCH_JOIN)
			st = gh_cpu_probe_write(e, pr, 0, (size_t) total, pairs);
		*ms = now_ms() - t0;
		*check = total;
		gh_cpu_probe_free(e, pr);
	}
	gh_cpu_part_free(e, part);
	return st;
}

static gh_status
cpu_bench(gh_engine *e, gh_bench_op op, gh_kind kind, size_t n, int reps,
		  double load, gh_bench_result *out)
{
	uint64_t   *build = malloc(n * sizeof(uint64_t));
	uint64_t   *probe = malloc(n * sizeof(uint64_t));
	uint64_t   *rows = malloc(n * sizeof(uint64_t));
	gh_pair    *pairs = op == GH_BENCH_JOIN ? malloc(n * sizeof(gh_pair)) : NULL;
	double	   *ms = malloc((reps + 1) * sizeof(double));
	gh_status	st = GH_OK;
	uint64_t	groups = n / 16 ? n / 16 : 1;

	if (!build || !probe || !rows || !ms || (op == GH_BENCH_JOIN && !pairs))
	{
		st = gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a benchmark of %zu keys", n);
		goto done;
	}
	for (size_t i = 0; i < n; i++)
	{
		build[i] = gh_hash64(i, GH_SEED_PARTITION);
		rows[i] = i;
		switch (op)
		{
			case GH_BENCH_FIND_MISS:
				probe[i] = gh_hash64(n + i, GH_SEED_PARTITION);
				break;
			case GH_BENCH_AGGREGATE:
				probe[i] = gh_hash64(i % groups, GH_SEED_PARTITION);
				break;
			default:
				probe[i] = gh_hash64(gh_range(gh_hash64(i, GH_SEED_AGG), n), GH_SEED_PARTITION);
		}
	}
	if (op == GH_BENCH_JOIN)
		memcpy(probe, build, n * sizeof(uint64_t));
	/* one warm-up run, then reps timed runs */
	for (int r = 0; r <= reps && st == GH_OK; r++)
	{
		if (gh_interrupted(e))
			st = GH_ERR_CANCELLED;
		else
			st = bench_once(e, op, kind, build, probe, rows, n, load, pairs, &ms[r], &out->check);
	}
	if (st == GH_OK)
	{
		qsort(ms + 1, reps, sizeof(double), cmp_double);
		out->ms = ms[1 + reps / 2];
		out->mkeys_per_s = out->ms > 0 ? n / out->ms / 1e3 : 0;
		/* build: read keys+rows, write CSR keys+rows; probe: read key, read match;
		 * join: as probe plus write the pairs; aggregate: read key+value */
		out->bytes_moved = (uint64_t) n * (op == GH_BENCH_BUILD ? 32 :
										   op == GH_BENCH_JOIN ? 40 :
										   op == GH_BENCH_AGGREGATE ? 16 : 24);
	}
done:
	free(build);
	free(probe);
	free(rows);
	free(pairs);
	free(ms);
	return st;
}

const gh_backend_ops gh_cpu_ops = {
	.name = "cpu",
	.open = cpu_open,
	.close = cpu_close,
	.build = gh_cpu_build,
	.part_free = gh_cpu_part_free,
	.part_distinct = gh_cpu_part_distinct,
	.probe_begin = gh_cpu_probe_begin,
	.probe_write = gh_cpu_probe_write,
	.probe_counts = gh_cpu_probe_counts,
	.probe_free = gh_cpu_probe_free,
	.aggregate = cpu_aggregate,
	.bench = cpu_bench,
	.build_bytes_per_row = gh_cpu_build_bytes_per_row,
	.agg_bytes_per_row = cpu_agg_bytes_per_row,
};
