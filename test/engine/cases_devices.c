/*-------------------------------------------------------------------------
 *
 * cases_devices.c
 *	  Engine unit tests of work spread over several devices: which devices
 *	  an operation used, a hot key larger than one device's memory, and a
 *	  failure on one device.
 *
 * The CPU backend simulates 1, 2, 3 and 8 devices (each on a thread of its
 * own, as GPUs run); the CUDA backend uses as many of the visible GPUs.
 *
 *	devices used	a table and an aggregation over N devices report all N
 *					(gh_table_devices, gh_groups.devices), one device one
 *	skew			one key holding more rows than a device's memory limit
 *					allows: its partition is cut into row ranges spread over
 *					the devices and processed in passes; joins, per-key
 *					counts and aggregation still match the oracle
 *	failures		a failure injected on one device (gh_debug_inject_failure)
 *					while every device works fails the operation with that
 *					device's error, leaves no handle, gives back the memory
 *					of every device, and the engine works afterwards
 *	benchmarks		gh_bench on several devices: the exchange spreads the
 *					keys over all of them, the results add up
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"

static const int device_counts[] = {1, 2, 3, 8};

static void
check_ids(const int *ids, int nids, int want, const char *what)
{
	if (nids != want)
	{
		case_fail("%s used %d devices, want %d", what, nids, want);
		return;
	}
	for (int i = 0; i < nids; i++)
		for (int k = 0; k < i; k++)
			if (ids[i] == ids[k])
			{
				case_fail("%s lists device %d twice", what, ids[i]);
				return;
			}
	if (run.backend == GH_BACKEND_CPU)
		for (int i = 0; i < nids; i++)
			if (ids[i] != i)
			{
				case_fail("%s lists simulated device %d at %d", what, ids[i], i);
				return;
			}
}

static void
devices_used_cases(void)
{
	size_t		n = 5000;
	uint64_t   *keys = xmalloc(n * sizeof(uint64_t));
	int64_t    *vals = xmalloc(n * sizeof(int64_t));
	gh_aggcol	col = {GH_INT64, GH_AGG_SUM, vals, NULL};
	rng			r = {run.seed ^ UINT64_C(0x64657673)};

	for (size_t i = 0; i < n; i++)
	{
		keys[i] = rng_below(&r, n / 3);
		vals[i] = (int64_t) i;
	}
	for (size_t c = 0; c < sizeof(device_counts) / sizeof(device_counts[0]); c++)
	{
		test_config cfg = {usable_devices(device_counts[c]), 0, 0};
		gh_engine  *e;
		gh_table   *t = NULL;
		gh_groups  *g = NULL;
		int			ids[GH_MAX_DEVICES];

		if (c > 0 && cfg.ndevices == usable_devices(device_counts[c - 1]))
			continue;
		case_begin("a table and an aggregation on %d device%s report all of them",
				   cfg.ndevices, cfg.ndevices > 1 ? "s" : "");
		e = open_engine(&cfg);
		if (e != NULL)
		{
			if (check_ok(gh_build(e, GH_KIND_AUTO, keys, NULL, n, &t), e, "gh_build"))
			{
				int			nids = gh_table_devices(t, ids, GH_MAX_DEVICES);

				check_ids(ids, nids, cfg.ndevices, "the table");
				if (gh_table_devices(t, NULL, 0) != nids)
					case_fail("gh_table_devices(NULL ids) counts %d, want %d",
							  gh_table_devices(t, NULL, 0), nids);
			}
			if (check_ok(gh_aggregate(e, keys, n, &col, 1, &g), e, "gh_aggregate"))
				check_ids(g->devices, g->ndevices, cfg.ndevices, "the aggregation");
			gh_groups_free(g);
			gh_table_free(t);
			gh_close(e);
		}
		if (gh_table_devices(NULL, ids, GH_MAX_DEVICES) != 0)
			case_fail("gh_table_devices(NULL) is not 0");
		case_end();
	}
	free(keys);
	free(vals);
}

/*
 * An aggregation on several devices: of few groups (each device its own
 * rows, partitions 1), of many (split by hash range), and of few hot keys
 * hiding many rare ones from the sample; under a memory limit too, so that
 * a device's rows go in pieces.  Every one the oracle's groups.
 */
static void
few_groups_cases(void)
{
	size_t		n = run.quick ? 60000 : 200000;
	uint64_t   *keys = xmalloc(n * sizeof(uint64_t));
	int64_t    *ivals = xmalloc(n * sizeof(int64_t));
	double	   *fvals = xmalloc(n * sizeof(double));
	uint8_t    *nulls = xmalloc(n);
	gh_aggcol	cols[2] = {{GH_INT64, GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX, ivals, nulls},
	{GH_FLOAT64, GH_AGG_SUM | GH_AGG_MAX, fvals, NULL}};
	rng			r = {run.seed ^ UINT64_C(0x66657767)};
	static const char *const shapes[] = {"few groups", "many groups", "hot keys and rare ones"};

	for (int shape = 0; shape < 3; shape++)
	{
		for (size_t i = 0; i < n; i++)
		{
			if (shape == 0)
				keys[i] = rng_below(&r, 700) * 7919;
			else if (shape == 1)
				keys[i] = rng_below(&r, n / 2);
			else
				keys[i] = rng_below(&r, 100) == 0 ? 1000 + i : rng_below(&r, 5);
			ivals[i] = (int64_t) rng_below(&r, 2000001) - 1000000;
			fvals[i] = (double) (int64_t) rng_below(&r, 1000) / 8.0;
			nulls[i] = rng_below(&r, 10) == 0;
		}
		for (int limited = 0; limited < 2; limited++)
		{
			test_config cfg = {usable_devices(3), limited ? (size_t) 2 << 20 : 0, 0};
			gh_engine  *e;
			gh_groups  *g = NULL;
			agg_oracle	want;

			if (cfg.ndevices < 2)
				return;
			case_begin("aggregate %zu rows of %s on %d devices%s: the oracle's groups, %s",
					   n, shapes[shape], cfg.ndevices, limited ? " under a 2 MB limit" : "",
					   shape == 1 ? "split by hash range" : "each device its own rows");
			e = open_engine(&cfg);
			if (e != NULL && check_ok(gh_aggregate(e, keys, n, cols, 2, &g), e, "gh_aggregate"))
			{
				oracle_aggregate(&want, keys, n, cols, 2);
				compare_groups(g, &want, cols, 2);
				agg_oracle_free(&want);
				if ((g->partitions == 1) != (shape != 1))
					case_fail("%d partitions", g->partitions);
				check_ids(g->devices, g->ndevices, cfg.ndevices, "the aggregation");
			}
			gh_groups_free(g);
			gh_close(e);
			case_end();
		}
	}
	free(keys);
	free(ivals);
	free(fvals);
	free(nulls);
}

/*
 * A hot key with more rows than one device may hold, among unique others,
 * on N devices whose limit is a small fraction of the input.
 */
static void
skew_cases(void)
{
	size_t		copies = run.quick ? 6000 : 300000,
				others = run.quick ? 2000 : 50000,
				n = copies + others,
				m = run.quick ? 2000 : 20000;
	rng			r = {run.seed ^ UINT64_C(0x736b6577)};
	uint64_t	hot = rng_next(&r);
	uint64_t   *keys = xmalloc(n * sizeof(uint64_t));
	uint64_t   *probe = xmalloc(m * sizeof(uint64_t));
	int64_t    *vals = xmalloc(n * sizeof(int64_t));
	uint64_t   *perm = gen_permutation(n, &r);
	gh_aggcol	col = {GH_INT64, GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX, vals, NULL};
	size_t		caps[2] = {997, 65536};
	join_input	in;
	agg_oracle	want;

	for (size_t i = 0; i < n; i++)
	{
		keys[perm[i]] = i < copies ? hot : hot + 1 + i;
		vals[i] = (int64_t) rng_next(&r) >> 8;
	}
	/* the hot key twice, present others, absent keys */
	for (size_t i = 0; i < m; i++)
		probe[i] = i % 2 == 0 ? hot + 1 + copies + rng_below(&r, others) : rng_next(&r);
	for (size_t i = 0; i < m; i++)
		if (probe[i] == hot)
			probe[i] = hot - 1;
	probe[0] = hot;
	probe[m / 2 + 1] = hot;
	join_input_prepare(&in, keys, NULL, n, probe, m);
	snprintf(in.label, sizeof(in.label),
			 "one key repeated %zu times among %zu others, more than a device holds",
			 copies, others);
	oracle_aggregate(&want, keys, n, &col, 1);

	for (size_t c = 1; c < sizeof(device_counts) / sizeof(device_counts[0]); c++)
	{
		/* a limit of about a tenth of the input's rows per device */
		test_config cfg = {usable_devices(device_counts[c]), n * 6, 0};
		gh_engine  *e;
		gh_groups  *g = NULL;
		size_t		fresh;
		char		cname[128];

		if (run.backend == GH_BACKEND_CUDA)
			cfg.memory_limit = (size_t) 4 << 20;
		case_begin("open an engine with %s for a hot key", config_name(&cfg, cname, sizeof(cname)));
		e = open_engine(&cfg);
		case_end();
		if (e == NULL)
			continue;
		fresh = gh_engine_device_bytes(e);
		check_table(e, &cfg, GH_KIND_HASHGRAPH, &in, caps, 2);
		check_table(e, &cfg, GH_KIND_BCHT, &in, caps, 1);
		case_begin("aggregate a hot key larger than a device holds, %s", cname);
		if (check_ok(gh_aggregate(e, keys, n, &col, 1, &g), e, "gh_aggregate"))
		{
			compare_groups(g, &want, &col, 1);
			if (g->partitions < cfg.ndevices)
				case_fail("%d partitions on %d devices", g->partitions, cfg.ndevices);
		}
		gh_groups_free(g);
		case_end();
		case_begin("device memory is back to a fresh engine's after the hot key, %s", cname);
		check_device_bytes(e, fresh, "after the hot key");
		case_end();
		gh_close(e);
		if (cfg.ndevices == 1)
			break;
	}
	agg_oracle_free(&want);
	join_input_release(&in);
	free(keys);
	free(probe);
	free(vals);
	free(perm);
}

/* ---- failures ---- */

typedef enum fail_op
{
	FAIL_BUILD,					/* a resident build */
	FAIL_BUILD_PASSES,			/* a build and join_begin of more units than devices */
	FAIL_JOIN_NEXT,				/* writing pairs */
	FAIL_FIND,					/* per-key counts */
	FAIL_AGGREGATE
} fail_op;

static const char *const fail_op_names[] = {
	"a build", "a join in passes", "writing joined pairs", "a find", "an aggregation"
};

/*
 * Run op with a failure injected on device index dev after `after` device
 * steps; returns the status the operation ended with.  Everything it made
 * is freed.
 */
static gh_status
run_failing(gh_engine *e, fail_op op, int dev, long after, const uint64_t *keys,
			size_t n, const gh_aggcol *col)
{
	gh_table   *t = NULL;
	gh_join    *j = NULL;
	gh_groups  *g = NULL;
	gh_pair    *pairs = NULL;
	uint32_t   *counts = NULL;
	gh_status	st;
	size_t		nout = 0;

	/* what must succeed before the failure point */
	if (op == FAIL_JOIN_NEXT || op == FAIL_FIND)
	{
		st = gh_build(e, GH_KIND_HASHGRAPH, keys, NULL, n, &t);
		if (st != GH_OK)
			return st;
	}
	if (op == FAIL_JOIN_NEXT)
	{
		st = gh_join_begin(t, keys, n, GH_JOIN_PROBE, &j);
		if (st != GH_OK)
		{
			gh_table_free(t);
			return st;
		}
	}
	gh_debug_inject_failure(e, dev, after, GH_ERR_DEVICE_NOMEM);
	switch (op)
	{
		case FAIL_BUILD:
			st = gh_build(e, GH_KIND_BCHT, keys, NULL, n, &t);
			if (st != GH_OK && t != NULL)
				case_fail("a failed gh_build left a table");
			break;
		case FAIL_BUILD_PASSES:
			st = gh_build(e, GH_KIND_HASHGRAPH, keys, NULL, n, &t);
			if (st == GH_OK)
			{
				st = gh_join_begin(t, keys, n, GH_JOIN_INTERSECT, &j);
				if (st != GH_OK && j != NULL)
					case_fail("a failed gh_join_begin left a join");
			}
			break;
		case FAIL_JOIN_NEXT:
			pairs = xmalloc(4096 * sizeof(gh_pair));
			do
				st = gh_join_next(j, pairs, 4096, &nout);
			while (st == GH_OK && nout > 0);
			break;
		case FAIL_FIND:
			counts = xmalloc(n * sizeof(uint32_t));
			st = gh_find(t, keys, n, counts);
			break;
		case FAIL_AGGREGATE:
			st = gh_aggregate(e, keys, n, col, 1, &g);
			if (st != GH_OK && g != NULL)
				case_fail("a failed gh_aggregate left groups");
			break;
	}
	gh_debug_inject_failure(e, -1, 0, GH_OK);
	gh_join_free(j);
	gh_table_free(t);
	gh_groups_free(g);
	free(pairs);
	free(counts);
	return st;
}

static void
failure_cases(void)
{
	size_t		n = run.quick ? 3000 : 60000;
	uint64_t   *keys = xmalloc(n * sizeof(uint64_t));
	int64_t    *vals = xmalloc(n * sizeof(int64_t));
	uint32_t   *counts = xmalloc(n * sizeof(uint32_t));
	gh_aggcol	col = {GH_INT64, GH_AGG_SUM, vals, NULL};
	rng			r = {run.seed ^ UINT64_C(0x6661696c)};

	for (size_t i = 0; i < n; i++)
	{
		keys[i] = rng_below(&r, n / 2);
		vals[i] = (int64_t) i;
	}
	for (size_t c = 0; c < sizeof(device_counts) / sizeof(device_counts[0]); c++)
	{
		int			nd = usable_devices(device_counts[c]);

		if (c > 0 && nd == usable_devices(device_counts[c - 1]))
			continue;
		for (int op = FAIL_BUILD; op <= FAIL_AGGREGATE; op++)
		{
			/* passes: a limit that makes several units per device */
			test_config cfg = {nd, op == FAIL_BUILD_PASSES ? n * 48 / (size_t) (4 * nd) : 0, 0};
			gh_engine  *e;
			size_t		fresh;
			int			dev = nd - 1;

			if (run.backend == GH_BACKEND_CUDA && op == FAIL_BUILD_PASSES)
				cfg.memory_limit = (size_t) 1 << 20;
			case_begin("a failure on device %d of %d during %s fails it, frees every device's memory, gives cached memory back, and the engine works afterwards",
					   dev, nd, fail_op_names[op]);
			e = open_engine(&cfg);
			if (e == NULL)
			{
				case_end();
				continue;
			}
			fresh = gh_engine_device_bytes(e);
			for (long after = 0; after < 3; after++)
			{
				gh_status	st = run_failing(e, (fail_op) op, dev, after, keys, n, &col);

				if (after == 0 && st != GH_ERR_DEVICE_NOMEM)
					case_fail("status %s (%s), want %s at once", gh_status_name(st),
							  gh_last_error(e), gh_status_name(GH_ERR_DEVICE_NOMEM));
				else if (st != GH_OK && st != GH_ERR_DEVICE_NOMEM)
					case_fail("status %s (%s) after %ld steps, want %s or ok", gh_status_name(st),
							  gh_last_error(e), after, gh_status_name(GH_ERR_DEVICE_NOMEM));
				if (st == GH_ERR_DEVICE_NOMEM && strstr(gh_last_error(e), "injected") == NULL)
					case_fail("message \"%s\" is not the injected failure's", gh_last_error(e));
				if (gh_engine_device_bytes(e) != fresh)
				{
					case_fail("%zu bytes accounted after the failure (%ld steps), %zu when opened",
							  gh_engine_device_bytes(e), after, fresh);
					break;
				}
			}
			/* cached memory given back (a long-lived process does so after failures) */
			gh_release_cached_memory(e);
			check_device_bytes(e, fresh, "after giving cached memory back");
			/* the engine still works */
			{
				gh_table   *t = NULL;

				if (check_ok(gh_build(e, GH_KIND_AUTO, keys, NULL, n, &t), e,
							 "gh_build after the failures") &&
					check_ok(gh_find(t, keys, n, counts), e, "gh_find after the failures"))
					for (size_t i = 0; i < n; i++)
						if (counts[i] == 0)
						{
							case_fail("key %zu not found after the failures", i);
							break;
						}
				gh_table_free(t);
			}
			check_device_bytes(e, fresh, "at the end");
			gh_close(e);
			case_end();
		}
	}
	free(keys);
	free(vals);
	free(counts);
}

/* ---- benchmarks on several devices ---- */

static void
bench_cases(void)
{
	const bench_case *benches = bench_cases_all;
	size_t		n = run.backend == GH_BACKEND_CUDA ? ((size_t) 1 << 20) + 7 :
		run.quick ? 1003 : 40009;

	for (size_t c = 1; c < sizeof(device_counts) / sizeof(device_counts[0]); c++)
	{
		test_config cfg = {usable_devices(device_counts[c]), 0, 0};
		gh_engine  *e;
		size_t		fresh;

		if (cfg.ndevices < 2 || (c > 1 && cfg.ndevices == usable_devices(device_counts[c - 1])))
			continue;
		case_begin("open an engine of %d devices for benchmarks", cfg.ndevices);
		e = open_engine(&cfg);
		case_end();
		if (e == NULL)
			continue;
		fresh = gh_engine_device_bytes(e);
		/* the CUDA backend's exchange again through pinned host memory */
		for (int pass = 0; pass < (run.backend == GH_BACKEND_CUDA ? 2 : 1); pass++)
		{
			for (size_t i = 0; i < n_bench_cases_all; i++)
			{
				gh_bench_result br;
				uint64_t	want = benches[i].op == GH_BENCH_FIND_MISS ? 0 :
					GH_BENCH_AGGREGATES(benches[i].op) ? gh_bench_groups(benches[i].op, n) : n;
				uint64_t	keys = 0;

				gh_debug_stage_exchange(e, pass == 1);
				case_begin("bench %s of %zu keys (%s) on %d devices exchanges them%s and finds %llu",
						   benches[i].name, n, kind_name(benches[i].kind), cfg.ndevices,
						   pass == 1 ? " through host memory" : "", (unsigned long long) want);
				memset(&br, 0xff, sizeof(br));
				if (check_ok(gh_bench(e, benches[i].op, benches[i].kind, n, 3, 0, &br), e, "gh_bench"))
				{
					if (br.check != want)
						case_fail("check %llu, want %llu", (unsigned long long) br.check,
								  (unsigned long long) want);
					if (br.ndevices != cfg.ndevices)
						case_fail("%d devices reported, want %d", br.ndevices, cfg.ndevices);
					for (int d = 0; d < br.ndevices && d < GH_MAX_DEVICES; d++)
					{
						keys += br.dev[d].keys;
						if (!(br.dev[d].ms >= 0) || !(br.dev[d].ms <= br.ms))
							case_fail("device %d took %.3f ms of %.3f", d, br.dev[d].ms, br.ms);
					}
					if (keys != n)
						case_fail("the devices held %llu keys, want %zu", (unsigned long long) keys, n);
					if (!(br.exchange_ms >= 0) || !(br.exchange_ms <= br.ms) ||
						!(br.exchange_gb_per_s >= 0) || br.bytes_moved < 8 * (uint64_t) n)
						case_fail("%.3f ms, exchange %.3f ms at %.1f GB/s, %llu bytes moved",
								  br.ms, br.exchange_ms, br.exchange_gb_per_s,
								  (unsigned long long) br.bytes_moved);
				}
				case_end();
			}
		}
		case_begin("device memory is back to a fresh engine's after benchmarks on %d devices",
				   cfg.ndevices);
		check_device_bytes(e, fresh, "after benchmarks");
		case_end();
		gh_close(e);
	}
}

void
run_device_cases(void)
{
	devices_used_cases();
	few_groups_cases();
	skew_cases();
	failure_cases();
	bench_cases();
}
