/*-------------------------------------------------------------------------
 *
 * cpu_backend.c
 *	  The CPU backend: its operations table (gh_cpu_ops), memory estimates
 *	  and benchmarks.
 *
 * Plain C, single-threaded and deterministic: the same algorithms as the
 * CUDA backend (cpu_hashgraph.c, cpu_bcht.c, cpu_aggregate.c), the reference
 * that backend is checked against, and what runs where there is no GPU.  It
 * keeps no state: the devices of opt.ndevices are simulated (engine.c splits
 * the work, each piece runs here in turn) and "device memory" is host
 * memory, accounted through gh_account like the GPU's.  Its benchmarks use
 * the CUDA backend's data and byte counts (cuda/README, "Benchmarks"),
 * timed with CLOCK_MONOTONIC.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_internal.h"

#define BENCH_SEED		UINT64_C(0x5851f42d4c957f2d)
#define BENCH_POS_SEED	UINT64_C(0x14057b7ef767814f)
#define BENCH_VAL_SEED	UINT64_C(0x2545f4914f6cdd1d)

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

/*
 * Memory per build row, at most.  HashGraph: offsets, keys and rows (24),
 * scratch for sorting a bucket of duplicates out of row order (16), and
 * the offsets of a list-intersection probe HashGraph, which has the
 * table's bucket count (8).  BCHT: while grouping, the same HashGraph and
 * scratch (40); then rows, distinct keys and row ranges (24) and slots of
 * 16 bytes each, 40 per key at load factors down to 0.4.
 */
static size_t
cpu_build_bytes_per_row(gh_kind kind)
{
	return kind == GH_KIND_BCHT ? 64 : 48;
}

static size_t
cpu_agg_bytes_per_row(int ncols)
{
	return gh_cpu_agg_bytes_per_row(ncols);
}

/* ---- benchmarks ---- */

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* Inputs and scratch of one benchmark. */
typedef struct bench_data
{
	size_t		n;
	uint64_t   *keys;			/* build keys, or the keys to group */
	uint64_t   *rows;			/* rows, or the int64 values to sum */
	uint64_t   *probe;
	uint32_t   *counts;
	gh_pair    *pairs;
	void	   *part;			/* the table probes run against */
} bench_data;

static gh_status
bench_prepare(gh_engine *e, gh_bench_op op, gh_kind kind, double load,
			  bool build_table, bench_data *d)
{
	size_t		n = d->n;
	size_t		ndistinct = gh_bench_groups(op, n);

	d->keys = malloc(n * sizeof(uint64_t));
	d->rows = malloc(n * sizeof(uint64_t));
	if (op != GH_BENCH_BUILD && !GH_BENCH_AGGREGATES(op))
		d->probe = malloc(n * sizeof(uint64_t));
	if (op == GH_BENCH_PROBE || op == GH_BENCH_FIND_HIT || op == GH_BENCH_FIND_MISS)
		d->counts = malloc(n * sizeof(uint32_t));
	if (op == GH_BENCH_JOIN)
		d->pairs = malloc(n * sizeof(gh_pair));
	if (d->keys == NULL || d->rows == NULL ||
		(op != GH_BENCH_BUILD && !GH_BENCH_AGGREGATES(op) && d->probe == NULL) ||
		(op == GH_BENCH_JOIN && d->pairs == NULL) ||
		(op != GH_BENCH_BUILD && !GH_BENCH_AGGREGATES(op) && op != GH_BENCH_JOIN &&
		 d->counts == NULL))
		return gh_fail(e, GH_ERR_HOST_NOMEM,
					   "out of host memory for a benchmark of %zu keys", n);

	for (size_t i = 0; i < n; i++)
	{
		if (GH_BENCH_AGGREGATES(op))
		{
			d->keys[i] = gh_hash64(i % ndistinct, BENCH_SEED);
			d->rows[i] = gh_hash64(i, BENCH_VAL_SEED);
		}
		else
		{
			d->keys[i] = gh_hash64(i, BENCH_SEED);
			d->rows[i] = i;
		}
		if (op == GH_BENCH_FIND_MISS)
			d->probe[i] = gh_hash64(n + i, BENCH_SEED);
		else if (d->probe)
			d->probe[i] = gh_hash64(gh_range(gh_hash64(i, BENCH_POS_SEED), n), BENCH_SEED);
	}
	if (op == GH_BENCH_BUILD || GH_BENCH_AGGREGATES(op) || !build_table)
		return GH_OK;
	return gh_cpu_build(e, 0, kind, d->keys, d->rows, n, load, &d->part);
}

static void
bench_release(gh_engine *e, bench_data *d)
{
	gh_cpu_part_free(e, d->part);
	free(d->keys);
	free(d->rows);
	free(d->probe);
	free(d->counts);
	free(d->pairs);
}

/* One timed run of op: *ms its time, out's check and bytes_moved filled. */
static gh_status
bench_run(gh_engine *e, gh_bench_op op, gh_kind kind, double load,
		  bench_data *d, double *ms, gh_bench_result *out)
{
	size_t		n = d->n;
	gh_status	st;
	double		t0 = now_ms();

	if (op == GH_BENCH_BUILD)
	{
		gh_cpu_part *t = NULL;
		void	   *part = NULL;

		st = gh_cpu_build(e, 0, kind, d->keys, d->rows, n, load, &part);
		*ms = now_ms() - t0;
		if (st != GH_OK)
			return st;
		t = part;
		if (t->kind == GH_KIND_BCHT)
		{
			out->check = t->bc.ndistinct;
			out->bytes_moved = 16 * (uint64_t) n + 8 * (uint64_t) n +
				16 * (uint64_t) t->bc.nbuckets * GH_BCHT_BUCKET_SLOTS;
		}
		else
		{
			out->check = n;
			out->bytes_moved = 16 * (uint64_t) n + 16 * (uint64_t) n +
				8 * (t->hg.nbuckets + 1);
		}
		gh_cpu_part_free(e, part);
		return GH_OK;
	}
	if (GH_BENCH_AGGREGATES(op))
	{
		gh_aggcol	col = {GH_INT64, GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX, d->rows, NULL};
		gh_groups  *g = NULL;

		st = gh_cpu_aggregate(e, 0, d->keys, n, &col, 1, &g);
		*ms = now_ms() - t0;
		if (st != GH_OK)
			return st;
		out->check = g->ngroups;
		out->bytes_moved = 16 * (uint64_t) n + 48 * (uint64_t) g->ngroups;
		gh_groups_free(g);
		return GH_OK;
	}
	{
		void	   *pr = NULL;
		uint64_t	total = 0;

		st = gh_cpu_probe_begin(e, d->part, d->probe, n,
								op == GH_BENCH_JOIN ? GH_JOIN_INTERSECT : GH_JOIN_PROBE,
								&pr, &total);
		if (st == GH_OK && op == GH_BENCH_JOIN)
		{
			if (total > n)
				st = gh_fail(e, GH_ERR_INTERNAL, "benchmark join found %llu pairs for %zu keys",
							 (unsigned long long) total, n);
			else
				st = gh_cpu_probe_write(e, pr, 0, (size_t) total, d->pairs);
		}
		else if (st == GH_OK)
			st = gh_cpu_probe_counts(e, pr, d->counts);
		*ms = now_ms() - t0;
		gh_cpu_probe_free(e, pr);
		if (st != GH_OK)
			return st;
		if (op == GH_BENCH_JOIN)
		{
			out->check = total;
			out->bytes_moved = 8 * (uint64_t) n + 24 * total;
		}
		else
		{
			uint64_t	hits = 0;

			for (size_t i = 0; i < n; i++)
				hits += d->counts[i] != 0;
			out->check = hits;
			out->bytes_moved = 12 * (uint64_t) n;
		}
		return GH_OK;
	}
}

/* ---- benchmarks on several simulated devices ---- */

/* One multi-device run: each device's data, result and time. */
typedef struct multi_bench
{
	gh_bench_op op;
	gh_kind		kind;
	double		load;
	bench_data	d[GH_MAX_DEVICES];
	gh_bench_result res[GH_MAX_DEVICES];
	double		ms[GH_MAX_DEVICES];
	gh_cpu_range table[GH_MAX_DEVICES];	/* probe ops: each range's build input */
} multi_bench;

/* Device thread: the timed operation on device dev's range. */
static gh_status
bench_range(gh_engine *e, int dev, void *arg)
{
	multi_bench *m = arg;

	return bench_run(e, m->op, m->kind, m->load, &m->d[dev], &m->ms[dev], &m->res[dev]);
}

/* Device thread: build the table of device dev's range (untimed). */
static gh_status
build_range(gh_engine *e, int dev, void *arg)
{
	multi_bench *m = arg;

	return gh_cpu_build(e, dev, m->kind, m->table[dev].col[0], m->table[dev].col[1],
						m->table[dev].n, m->load, &m->d[dev].part);
}

/*
 * gh_bench on several simulated devices, as the CUDA backend runs it on
 * GPUs (cuda_bench_multi.cu): the input in slices, the exchange, then every
 * device's operation on its range on a thread of its own.
 */
static gh_status
cpu_bench_multi(gh_engine *e, gh_bench_op op, gh_kind kind, size_t n, int reps,
				double load, gh_bench_result *out)
{
	int			ndev = e->opt.ndevices;
	uint32_t	all = (1u << ndev) - 1;
	bench_data	src;
	multi_bench *m = calloc(1, sizeof(multi_bench));
	uint64_t   *idx = NULL;
	double	   *total = malloc((size_t) reps * sizeof(double));
	double	   *xchg = malloc((size_t) reps * sizeof(double));
	double	   *dev_ms = malloc((size_t) reps * GH_MAX_DEVICES * sizeof(double));
	bool		probes = op != GH_BENCH_BUILD && !GH_BENCH_AGGREGATES(op);
	gh_status	st = GH_OK;

	memset(&src, 0, sizeof(src));
	src.n = n;
	if (m == NULL || total == NULL || xchg == NULL || dev_ms == NULL ||
		(probes && (idx = malloc(n * sizeof(uint64_t))) == NULL))
		st = gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a benchmark");
	if (st == GH_OK)
	{
		m->op = op;
		m->kind = kind;
		m->load = load;
		st = bench_prepare(e, op, kind, load, false, &src);
	}
	if (st == GH_OK && probes)
	{
		const uint64_t *cols[2] = {src.keys, src.rows};

		for (size_t i = 0; i < n; i++)
			idx[i] = i;
		st = gh_cpu_exchange(e, ndev, cols, 2, n, m->table);
		if (st == GH_OK)
			st = gh_for_devices(e, all, n, build_range, m);
		gh_cpu_exchange_free(m->table, ndev);
	}
	for (int run = -1; st == GH_OK && run < reps; run++)
	{
		gh_cpu_range r[GH_MAX_DEVICES];
		const uint64_t *cols[2];
		double		t0,
					t1,
					t2;

		memset(r, 0, sizeof(r));
		cols[0] = probes ? src.probe : src.keys;
		cols[1] = probes ? idx : src.rows;
		if (gh_interrupted(e))
		{
			st = GH_ERR_CANCELLED;
			break;
		}
		t0 = now_ms();
		st = gh_cpu_exchange(e, ndev, cols, 2, n, r);
		t1 = now_ms();
		for (int d = 0; st == GH_OK && d < ndev; d++)
		{
			bench_data *dd = &m->d[d];

			dd->n = r[d].n;
			if (probes)
				dd->probe = r[d].col[0];
			else
			{
				dd->keys = r[d].col[0];
				dd->rows = r[d].col[1];
			}
			if (op == GH_BENCH_JOIN)
				dd->pairs = malloc((dd->n > 0 ? dd->n : 1) * sizeof(gh_pair));
			else if (probes)
				dd->counts = malloc((dd->n > 0 ? dd->n : 1) * sizeof(uint32_t));
			if ((op == GH_BENCH_JOIN && dd->pairs == NULL) ||
				(probes && op != GH_BENCH_JOIN && dd->counts == NULL))
				st = gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a benchmark");
		}
		if (st == GH_OK)
			st = gh_for_devices(e, all, n, bench_range, m);
		t2 = now_ms();
		out->check = 0;
		out->bytes_moved = 0;
		for (int d = 0; d < ndev; d++)
		{
			bench_data *dd = &m->d[d];

			if (st == GH_OK)
			{
				out->check += m->res[d].check;
				out->bytes_moved += m->res[d].bytes_moved;
				out->dev[d].id = d;
				out->dev[d].keys = dd->n;
				if (run >= 0)
					dev_ms[d * reps + run] = m->ms[d];
			}
			free(dd->pairs);
			free(dd->counts);
			dd->pairs = NULL;
			dd->counts = NULL;
			dd->keys = dd->rows = dd->probe = NULL;
		}
		gh_cpu_exchange_free(r, ndev);
		if (st == GH_OK && run >= 0)
		{
			total[run] = t2 - t0;
			xchg[run] = t1 - t0;
		}
	}
	if (st == GH_OK)
	{
		qsort(total, (size_t) reps, sizeof(double), cmp_double);
		qsort(xchg, (size_t) reps, sizeof(double), cmp_double);
		out->ms = total[reps / 2];
		out->mkeys_per_s = out->ms > 0 ? (double) n / out->ms / 1000.0 : 0;
		out->exchange_ms = xchg[reps / 2];
		/* simulated devices share memory: report the rate of the copies */
		out->exchange_gb_per_s = out->exchange_ms > 0 ?
			16.0 * (double) n * (ndev - 1) / ndev / (out->exchange_ms * 1e6) : 0;
		out->ndevices = ndev;
		for (int d = 0; d < ndev; d++)
		{
			qsort(dev_ms + d * reps, (size_t) reps, sizeof(double), cmp_double);
			out->dev[d].ms = dev_ms[d * reps + reps / 2];
			out->dev[d].mkeys_per_s = out->dev[d].ms > 0 ?
				(double) out->dev[d].keys / out->dev[d].ms / 1000.0 : 0;
		}
	}
	if (m != NULL)
		for (int d = 0; d < ndev; d++)
			gh_cpu_part_free(e, m->d[d].part);
	bench_release(e, &src);
	free(m);
	free(idx);
	free(total);
	free(xchg);
	free(dev_ms);
	return st;
}

static gh_status
cpu_bench(gh_engine *e, gh_bench_op op, gh_kind kind, size_t n, int reps,
		  double load, gh_bench_result *out)
{
	bench_data	d;
	double	   *ms;
	gh_status	st;

	if (kind != GH_KIND_BCHT)
		kind = GH_KIND_HASHGRAPH;
	if (!(load > 0.0))
		load = e->opt.bcht_load_factor > 0 ? e->opt.bcht_load_factor : GH_BCHT_DEFAULT_LOAD;
	if (e->opt.ndevices > 1)
		return cpu_bench_multi(e, op, kind, n, reps, load, out);
	memset(&d, 0, sizeof(d));
	d.n = n;
	ms = malloc((size_t) reps * sizeof(double));
	st = ms ? bench_prepare(e, op, kind, load, true, &d)
		: gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for benchmark times");
	/* run -1 is the warm-up */
	for (int run = -1; st == GH_OK && run < reps; run++)
	{
		double		t;

		if (gh_interrupted(e))
			st = GH_ERR_CANCELLED;
		else
			st = bench_run(e, op, kind, load, &d, &t, out);
		if (st == GH_OK && run >= 0)
			ms[run] = t;
	}
	if (st == GH_OK)
	{
		qsort(ms, (size_t) reps, sizeof(double), cmp_double);
		out->ms = ms[reps / 2];
		out->mkeys_per_s = out->ms > 0 ? (double) n / out->ms / 1000.0 : 0;
		out->ndevices = 1;
		out->dev[0].id = 0;
		out->dev[0].keys = n;
		out->dev[0].ms = out->ms;
		out->dev[0].mkeys_per_s = out->mkeys_per_s;
	}
	bench_release(e, &d);
	free(ms);
	return st;
}

/*
 * Device arrays: the CPU backend's device memory is host memory, allocated
 * and accounted as the CUDA backend's is, so that the engine's placement of
 * device arrays runs the same here.
 */
static gh_status
cpu_darray_alloc(gh_engine *e, int dev, void **p, size_t bytes)
{
	*p = NULL;
	if (gh_injected_failure(e, dev))
		return e->inject_status;
	*p = malloc(bytes);
	if (*p == NULL)
		return gh_fail(e, GH_ERR_DEVICE_NOMEM, "could not allocate %zu bytes for a device array",
					   bytes);
	gh_account(e, (long long) bytes);
	return GH_OK;
}

static void
cpu_darray_free(gh_engine *e, int dev, void *p, size_t bytes)
{
	free(p);
	gh_account(e, -(long long) bytes);
}

static gh_status
cpu_darray_copy(gh_engine *e, void *dst, const void *src, size_t bytes)
{
	if (src != NULL)
		memcpy(dst, src, bytes);
	else
		memset(dst, 0, bytes);
	return GH_OK;
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
	.aggregate = gh_cpu_aggregate,
	.probe_aggregate = gh_cpu_probe_aggregate,
	.bench = cpu_bench,
	.build_bytes_per_row = cpu_build_bytes_per_row,
	.agg_bytes_per_row = cpu_agg_bytes_per_row,
	.joinagg_bytes_per_pair = gh_cpu_joinagg_bytes_per_pair,
	.trim = NULL,
	.extract_pages = gh_cpu_extract_pages,
	.pages_read = gh_cpu_pages_read,
	.pages_keep = gh_cpu_pages_keep,
	.pages_free = gh_cpu_pages_free,
	.register_host = NULL,
	.pin_host = NULL,
	.unpin_host = NULL,
	.build_spread = gh_cpu_build_spread,
	.aggregate_spread = gh_cpu_aggregate_spread,
	.darray_alloc = cpu_darray_alloc,
	.darray_free = cpu_darray_free,
	.darray_copy = cpu_darray_copy,
	.dim_create = gh_cpu_dim_create,
	.dim_free = gh_cpu_dim_free,
	.star_create = gh_cpu_star_create,
	.star_read = gh_cpu_star_read,
	.star_keep = gh_cpu_star_keep,
	.star_add = gh_cpu_star_add,
	.star_result = gh_cpu_star_result,
	.star_free = gh_cpu_star_free,
	.agg_bytes_per_group = gh_cpu_agg_bytes_per_group,
	.estimate_distinct = NULL,
};
