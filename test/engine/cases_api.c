/*-------------------------------------------------------------------------
 *
 * cases_api.c
 *	  Engine unit tests of the API's edges: invalid arguments, empty
 *	  inputs, cancellation through the interrupt callback, benchmarks, and
 *	  the threaded host copy (gh_copy_host).
 *
 * Invalid arguments must come back as GH_ERR_INVALID with a message, never
 * a crash; the free functions accept NULL.  An interrupt callback that
 * returns true must stop builds, joins, aggregations and benchmarks with
 * GH_ERR_CANCELLED, leaving handles that can still be freed.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"

static void
expect_status(gh_status got, gh_status want, const char *what)
{
	if (got != want)
		case_fail("%s returned %s, want %s", what, gh_status_name(got), gh_status_name(want));
}

static void
invalid_argument_cases(void)
{
	test_config cfg = {1, 0, 0};
	gh_options	opt;
	gh_engine  *e = NULL,
			   *none = NULL;
	gh_table   *t = NULL,
			   *t2 = NULL;
	gh_join    *j = NULL,
			   *j2 = NULL;
	gh_groups  *g = NULL;
	gh_bench_result br;
	uint64_t	keys[5] = {1, 2, 3, 2, UINT64_MAX};
	uint32_t	counts[5];
	uint8_t		flags[5];
	gh_pair		pairs[8];
	size_t		nout;
	int64_t		vals[5] = {1, 2, 3, 4, 5};
	gh_aggcol	col = {GH_INT64, GH_AGG_SUM, vals, NULL};
	char		err[128];

	case_begin("gh_open rejects missing or bad options with GH_ERR_INVALID");
	memset(&opt, 0, sizeof(opt));
	opt.backend = run.backend;
	opt.ndevices = 1;
	expect_status(gh_open(NULL, &none, err, sizeof(err)), GH_ERR_INVALID, "gh_open(NULL options)");
	expect_status(gh_open(&opt, NULL, err, sizeof(err)), GH_ERR_INVALID, "gh_open(NULL out)");
	opt.backend = (gh_backend) 7;
	expect_status(gh_open(&opt, &none, err, sizeof(err)), GH_ERR_INVALID, "gh_open(backend 7)");
	if (none != NULL)
		case_fail("a failed gh_open left an engine");
	opt.backend = run.backend;
	opt.ndevices = GH_MAX_DEVICES + 1;
	expect_status(gh_open(&opt, &none, err, sizeof(err)), GH_ERR_INVALID, "gh_open(17 devices)");
	opt.ndevices = -1;
	expect_status(gh_open(&opt, &none, err, sizeof(err)), GH_ERR_INVALID, "gh_open(-1 devices)");
	opt.ndevices = 1;
	opt.bcht_load_factor = 1.5;
	expect_status(gh_open(&opt, &none, err, sizeof(err)), GH_ERR_INVALID, "gh_open(load factor 1.5)");
	opt.bcht_load_factor = -0.5;
	expect_status(gh_open(&opt, &none, err, sizeof(err)), GH_ERR_INVALID, "gh_open(load factor -0.5)");
	case_end();

	case_begin("gh_open with 0 devices uses one");
	opt.bcht_load_factor = 0;
	opt.ndevices = 0;
	if (check_ok(gh_open(&opt, &none, err, sizeof(err)), NULL, "gh_open"))
	{
		if (gh_engine_ndevices(none) != 1)
			case_fail("%d devices in use", gh_engine_ndevices(none));
		if (gh_engine_backend(none) != run.backend)
			case_fail("backend %d", (int) gh_engine_backend(none));
		gh_close(none);
	}
	case_end();

	case_begin("gh_open caps the memory limit, given or resolved, at memory_cap; "
			   "gh_engine_devices lists the devices in use");
	opt.memory_limit = 0;
	opt.memory_cap = (size_t) 3 << 20;
	if (check_ok(gh_open(&opt, &none, err, sizeof(err)), NULL, "gh_open"))
	{
		int			ids[GH_MAX_DEVICES];

		if (gh_engine_memory_limit(none) != opt.memory_cap)
			case_fail("limit 0, cap 3 MiB: the engine's limit is %zu", gh_engine_memory_limit(none));
		if (gh_engine_devices(none, ids, GH_MAX_DEVICES) != 1 ||
			(run.backend == GH_BACKEND_CPU && ids[0] != 0))
			case_fail("the devices in use are not the one asked for");
		gh_close(none);
	}
	opt.memory_limit = (size_t) 2 << 20;
	if (check_ok(gh_open(&opt, &none, err, sizeof(err)), NULL, "gh_open"))
	{
		if (gh_engine_memory_limit(none) != opt.memory_limit)
			case_fail("limit 2 MiB, cap 3 MiB: the engine's limit is %zu", gh_engine_memory_limit(none));
		gh_close(none);
	}
	opt.memory_limit = (size_t) 5 << 20;
	if (check_ok(gh_open(&opt, &none, err, sizeof(err)), NULL, "gh_open"))
	{
		if (gh_engine_memory_limit(none) != opt.memory_cap)
			case_fail("limit 5 MiB, cap 3 MiB: the engine's limit is %zu", gh_engine_memory_limit(none));
		gh_close(none);
	}
	opt.memory_limit = 0;
	opt.memory_cap = 0;
	case_end();

	case_begin("open an engine for the argument checks");
	e = open_engine(&cfg);
	case_end();
	if (e == NULL)
		return;

	case_begin("gh_build rejects a NULL engine, NULL keys, a NULL out and kind 9");
	expect_status(gh_build(NULL, GH_KIND_HASHGRAPH, keys, NULL, 5, &t), GH_ERR_INVALID,
				  "gh_build(NULL engine)");
	expect_status(gh_build(e, GH_KIND_HASHGRAPH, NULL, NULL, 5, &t), GH_ERR_INVALID,
				  "gh_build(NULL keys, n 5)");
	expect_status(gh_build(e, GH_KIND_BCHT, keys, NULL, 5, NULL), GH_ERR_INVALID,
				  "gh_build(NULL out)");
	expect_status(gh_build(e, (gh_kind) 9, keys, NULL, 5, &t), GH_ERR_INVALID,
				  "gh_build(kind 9)");
	if (t != NULL)
		case_fail("a failed gh_build left a table");
	if (strlen(gh_last_error(e)) == 0)
		case_fail("no error message after a failed call");
	case_end();

	case_begin("an empty build (NULL keys, n 0) is a table that matches nothing");
	if (check_ok(gh_build(e, GH_KIND_AUTO, NULL, NULL, 0, &t2), e, "gh_build(n 0)"))
	{
		if (check_ok(gh_find(t2, keys, 5, counts), e, "gh_find"))
			for (int i = 0; i < 5; i++)
				if (counts[i] != 0)
					case_fail("key %d has %u matches in an empty table", i, counts[i]);
		if (check_ok(gh_join_begin(t2, keys, 5, GH_JOIN_AUTO, &j2), e, "gh_join_begin") &&
			gh_join_total(j2) != 0)
			case_fail("%llu pairs from an empty table", (unsigned long long) gh_join_total(j2));
		gh_join_free(j2);
		j2 = NULL;
		if (gh_table_rows(t2) != 0)
			case_fail("%zu rows", gh_table_rows(t2));
	}
	gh_table_free(t2);
	case_end();

	if (!check_ok(gh_build(e, GH_KIND_HASHGRAPH, keys, NULL, 5, &t), e, "gh_build"))
	{
		gh_close(e);
		return;
	}

	case_begin("gh_find rejects a NULL table, NULL keys and NULL counts; n 0 is fine");
	expect_status(gh_find(NULL, keys, 5, counts), GH_ERR_INVALID, "gh_find(NULL table)");
	expect_status(gh_find(t, NULL, 5, counts), GH_ERR_INVALID, "gh_find(NULL keys)");
	expect_status(gh_find(t, keys, 5, NULL), GH_ERR_INVALID, "gh_find(NULL counts)");
	expect_status(gh_find(t, NULL, 0, NULL), GH_OK, "gh_find(n 0)");
	case_end();

	case_begin("gh_join_begin rejects a NULL table, NULL keys, a NULL out and method 7");
	expect_status(gh_join_begin(NULL, keys, 5, GH_JOIN_AUTO, &j), GH_ERR_INVALID,
				  "gh_join_begin(NULL table)");
	expect_status(gh_join_begin(t, NULL, 5, GH_JOIN_AUTO, &j), GH_ERR_INVALID,
				  "gh_join_begin(NULL keys)");
	expect_status(gh_join_begin(t, keys, 5, GH_JOIN_AUTO, NULL), GH_ERR_INVALID,
				  "gh_join_begin(NULL out)");
	expect_status(gh_join_begin(t, keys, 5, (gh_join_method) 7, &j), GH_ERR_INVALID,
				  "gh_join_begin(method 7)");
	if (j != NULL)
		case_fail("a failed gh_join_begin left a join");
	case_end();

	case_begin("an empty probe (NULL keys, n 0) joins to nothing");
	if (check_ok(gh_join_begin(t, NULL, 0, GH_JOIN_INTERSECT, &j2), e, "gh_join_begin(n 0)"))
	{
		if (gh_join_total(j2) != 0)
			case_fail("%llu pairs", (unsigned long long) gh_join_total(j2));
		nout = 99;
		if (check_ok(gh_join_next(j2, pairs, 8, &nout), e, "gh_join_next") && nout != 0)
			case_fail("%zu pairs written", nout);
		expect_status(gh_join_outer_matched(j2, NULL), GH_OK, "gh_join_outer_matched(n 0)");
	}
	gh_join_free(j2);
	case_end();

	case_begin("gh_join_next and gh_join_outer_matched reject NULL arguments");
	if (check_ok(gh_join_begin(t, keys, 5, GH_JOIN_PROBE, &j), e, "gh_join_begin"))
	{
		expect_status(gh_join_next(NULL, pairs, 8, &nout), GH_ERR_INVALID,
					  "gh_join_next(NULL join)");
		expect_status(gh_join_next(j, NULL, 8, &nout), GH_ERR_INVALID,
					  "gh_join_next(NULL out, cap 8)");
		expect_status(gh_join_next(j, pairs, 8, NULL), GH_ERR_INVALID,
					  "gh_join_next(NULL nout)");
		expect_status(gh_join_outer_matched(NULL, flags), GH_ERR_INVALID,
					  "gh_join_outer_matched(NULL join)");
		expect_status(gh_join_outer_matched(j, NULL), GH_ERR_INVALID,
					  "gh_join_outer_matched(NULL flags)");
		if (gh_join_total(NULL) != 0)
			case_fail("gh_join_total(NULL) is not 0");
		/* the join still works after the rejected calls: 1, 2, 3, 2, 2^64-1 */
		if (check_ok(gh_join_next(j, pairs, 8, &nout), e, "gh_join_next") && nout != 7)
			case_fail("%zu pairs after rejected calls, want 7", nout);
	}
	gh_join_free(j);
	case_end();

	case_begin("table accessors of a NULL table are 0");
	if (gh_table_rows(NULL) != 0 || gh_table_partitions(NULL) != 0 ||
		gh_table_distinct_keys(NULL) != 0)
		case_fail("table accessors of NULL are not 0");
	case_end();

	case_begin("gh_aggregate rejects NULL keys, columns, values, out and type 9");
	expect_status(gh_aggregate(NULL, keys, 5, &col, 1, &g), GH_ERR_INVALID,
				  "gh_aggregate(NULL engine)");
	expect_status(gh_aggregate(e, NULL, 5, &col, 1, &g), GH_ERR_INVALID,
				  "gh_aggregate(NULL keys)");
	expect_status(gh_aggregate(e, keys, 5, NULL, 1, &g), GH_ERR_INVALID,
				  "gh_aggregate(NULL columns)");
	expect_status(gh_aggregate(e, keys, 5, &col, -1, &g), GH_ERR_INVALID,
				  "gh_aggregate(-1 columns)");
	expect_status(gh_aggregate(e, keys, 5, &col, 1, NULL), GH_ERR_INVALID,
				  "gh_aggregate(NULL out)");
	col.values = NULL;
	expect_status(gh_aggregate(e, keys, 5, &col, 1, &g), GH_ERR_INVALID,
				  "gh_aggregate(NULL values)");
	col.values = vals;
	col.type = (gh_valtype) 9;
	expect_status(gh_aggregate(e, keys, 5, &col, 1, &g), GH_ERR_INVALID,
				  "gh_aggregate(type 9)");
	col.type = GH_INT64;
	if (g != NULL)
		case_fail("a failed gh_aggregate left groups");
	case_end();

	case_begin("an empty aggregation (NULL keys, n 0) has no groups");
	if (check_ok(gh_aggregate(e, NULL, 0, &col, 1, &g), e, "gh_aggregate(n 0)") &&
		g->ngroups != 0)
		case_fail("%zu groups", g->ngroups);
	gh_groups_free(g);
	g = NULL;
	case_end();

	case_begin("gh_bench rejects n 0, reps 0, op 99, kind 9, load 1.5 and NULL out");
	expect_status(gh_bench(NULL, GH_BENCH_BUILD, GH_KIND_HASHGRAPH, 100, 1, 0, &br),
				  GH_ERR_INVALID, "gh_bench(NULL engine)");
	expect_status(gh_bench(e, GH_BENCH_BUILD, GH_KIND_HASHGRAPH, 0, 1, 0, &br),
				  GH_ERR_INVALID, "gh_bench(n 0)");
	expect_status(gh_bench(e, GH_BENCH_BUILD, GH_KIND_HASHGRAPH, 100, 0, 0, &br),
				  GH_ERR_INVALID, "gh_bench(reps 0)");
	expect_status(gh_bench(e, (gh_bench_op) 99, GH_KIND_HASHGRAPH, 100, 1, 0, &br),
				  GH_ERR_INVALID, "gh_bench(op 99)");
	expect_status(gh_bench(e, GH_BENCH_BUILD, (gh_kind) 9, 100, 1, 0, &br),
				  GH_ERR_INVALID, "gh_bench(kind 9)");
	expect_status(gh_bench(e, GH_BENCH_BUILD, GH_KIND_BCHT, 100, 1, 1.5, &br),
				  GH_ERR_INVALID, "gh_bench(load 1.5)");
	expect_status(gh_bench(e, GH_BENCH_BUILD, GH_KIND_BCHT, 100, 1, 0, NULL),
				  GH_ERR_INVALID, "gh_bench(NULL out)");
	case_end();

	case_begin("the free functions and accessors accept NULL");
	gh_table_free(NULL);
	gh_join_free(NULL);
	gh_groups_free(NULL);
	gh_close(NULL);
	if (gh_last_error(NULL) == NULL)
		case_fail("gh_last_error(NULL) is NULL");
	for (int s = GH_OK; s <= GH_ERR_INTERNAL; s++)
		if (gh_status_name((gh_status) s) == NULL || gh_status_name((gh_status) s)[0] == '\0')
			case_fail("status %d has no name", s);
	case_end();

	gh_table_free(t);
	gh_close(e);
}

/* ---- cancellation ---- */

static void
cancel_cases(void)
{
	interrupter in = {false, 0, 0};
	size_t		n = run.quick ? 2000 : 100000;
	uint64_t   *keys = xmalloc(n * sizeof(uint64_t));
	int64_t    *vals = xmalloc(n * sizeof(int64_t));
	gh_pair    *pairs = xmalloc(1000 * sizeof(gh_pair));
	gh_aggcol	col = {GH_INT64, GH_AGG_SUM, vals, NULL};
	rng			r = {run.seed ^ UINT64_C(0x63616e63)};
	gh_engine  *e;
	gh_table   *t = NULL;
	gh_join    *j = NULL;
	gh_groups  *g = NULL;
	gh_bench_result br;
	gh_status	st = GH_OK;
	size_t		nout = 0;

	for (size_t i = 0; i < n; i++)
	{
		keys[i] = rng_below(&r, n / 4 + 1);
		vals[i] = (int64_t) i;
	}

	/* an interrupt that fires at once: nothing starts */
	case_begin("an interrupt at once cancels gh_build, gh_aggregate and gh_bench with GH_ERR_CANCELLED");
	e = open_interruptible(&in, 0, 1);
	if (e != NULL)
	{
		in.armed = true;
		in.polls_left = 0;
		expect_status(gh_build(e, GH_KIND_HASHGRAPH, keys, NULL, n, &t), GH_ERR_CANCELLED,
					  "gh_build");
		if (t != NULL)
			case_fail("a cancelled gh_build left a table");
		expect_status(gh_build(e, GH_KIND_BCHT, keys, NULL, n, &t), GH_ERR_CANCELLED,
					  "gh_build(bcht)");
		gh_table_free(t);
		t = NULL;
		expect_status(gh_aggregate(e, keys, n, &col, 1, &g), GH_ERR_CANCELLED, "gh_aggregate");
		gh_groups_free(g);
		g = NULL;
		expect_status(gh_bench(e, GH_BENCH_BUILD, GH_KIND_HASHGRAPH, 1000, 3, 0, &br),
					  GH_ERR_CANCELLED, "gh_bench");
		if (strlen(gh_last_error(e)) == 0)
			case_fail("no message after cancelling");
		/* disarmed, the same engine works again */
		in.armed = false;
		if (check_ok(gh_build(e, GH_KIND_HASHGRAPH, keys, NULL, n, &t), e,
					 "gh_build after a cancellation"))
		{
			/* armed between chunks: the join stops */
			if (check_ok(gh_join_begin(t, keys, n, GH_JOIN_PROBE, &j), e, "gh_join_begin"))
			{
				in.armed = true;
				in.polls_left = 2;
				for (int k = 0; k < 1000000 && st == GH_OK; k++)
				{
					st = gh_join_next(j, pairs, 1000, &nout);
					if (st == GH_OK && nout == 0)
						break;
				}
				expect_status(st, GH_ERR_CANCELLED, "gh_join_next with an interrupt");
			}
			gh_join_free(j);
			j = NULL;
		}
		gh_table_free(t);
		t = NULL;
		gh_close(e);
	}
	case_end();

	/*
	 * Inputs split into many partitions (built one at a time): the
	 * interrupt fires part way through each operation.
	 */
	case_begin("an interrupt part way through a split join or aggregation gives GH_ERR_CANCELLED");
	in.armed = false;
	in.polls = 0;
	e = open_interruptible(&in, (size_t) 64 << 10, 2);
	if (e != NULL)
	{
		size_t		fresh_bytes = gh_engine_device_bytes(e);

		if (check_ok(gh_build(e, GH_KIND_BCHT, keys, NULL, n, &t), e, "gh_build"))
		{
			in.armed = true;
			in.polls_left = 1;
			st = gh_join_begin(t, keys, n, GH_JOIN_AUTO, &j);
			while (st == GH_OK)
			{
				st = gh_join_next(j, pairs, 1000, &nout);
				if (st == GH_OK && nout == 0)
					break;
			}
			expect_status(st, GH_ERR_CANCELLED, "a join of many partitions");
			gh_join_free(j);
			j = NULL;
			in.armed = true;
			in.polls_left = 1;
			expect_status(gh_aggregate(e, keys, n, &col, 1, &g), GH_ERR_CANCELLED,
						  "an aggregation of many partitions");
			if (g != NULL)
				case_fail("a cancelled gh_aggregate left groups");
			gh_groups_free(g);
			g = NULL;
		}
		gh_table_free(t);
		t = NULL;
		in.armed = false;
		check_device_bytes(e, fresh_bytes, "after cancelled operations were freed");
		gh_close(e);
	}
	case_end();

	free(keys);
	free(vals);
	free(pairs);
}

const bench_case bench_cases_all[] = {
	{GH_BENCH_BUILD, GH_KIND_HASHGRAPH, "build"},
	{GH_BENCH_BUILD, GH_KIND_BCHT, "build"},
	{GH_BENCH_PROBE, GH_KIND_HASHGRAPH, "probe"},
	{GH_BENCH_FIND_HIT, GH_KIND_BCHT, "find (hits)"},
	{GH_BENCH_FIND_MISS, GH_KIND_BCHT, "find (misses)"},
	{GH_BENCH_FIND_MISS, GH_KIND_HASHGRAPH, "find (misses)"},
	{GH_BENCH_JOIN, GH_KIND_HASHGRAPH, "join"},
	{GH_BENCH_JOIN, GH_KIND_BCHT, "join"},
	{GH_BENCH_AGGREGATE, GH_KIND_AUTO, "aggregate"},
	{GH_BENCH_AGGREGATE_FEW, GH_KIND_AUTO, "aggregate (few groups)"},
};
const size_t n_bench_cases_all = sizeof(bench_cases_all) / sizeof(bench_cases_all[0]);

/* ---- benchmarks ---- */

static void
bench_cases(void)
{
	const bench_case *benches = bench_cases_all;
	test_config cfg = {1, 0, 0};
	size_t		n = run.backend == GH_BACKEND_CUDA ? ((size_t) 1 << 20) + 7 :
		run.quick ? 1003 : 20011;
	gh_engine  *e;
	size_t		fresh_bytes;

	case_begin("open an engine for benchmarks");
	e = open_engine(&cfg);
	case_end();
	if (e == NULL)
		return;
	fresh_bytes = gh_engine_device_bytes(e);
	for (size_t i = 0; i < n_bench_cases_all; i++)
	{
		gh_bench_result br;
		uint64_t	want;

		switch (benches[i].op)
		{
			case GH_BENCH_FIND_MISS:
				want = 0;		/* keys absent by construction */
				break;
			case GH_BENCH_AGGREGATE:
			case GH_BENCH_AGGREGATE_FEW:
				want = gh_bench_groups(bench_cases_all[i].op, n);	/* groups */
				break;
			default:
				want = n;		/* distinct keys, hits or pairs */
				break;
		}
		case_begin("bench %s of %zu keys (%s) finds %llu", benches[i].name, n,
				   kind_name(benches[i].kind), (unsigned long long) want);
		memset(&br, 0xff, sizeof(br));
		if (check_ok(gh_bench(e, benches[i].op, benches[i].kind, n, 3, 0, &br), e, "gh_bench"))
		{
			if (br.check != want)
				case_fail("check %llu, want %llu", (unsigned long long) br.check,
						  (unsigned long long) want);
			if (!(br.ms >= 0) || !(br.mkeys_per_s >= 0) || br.bytes_moved == 0 ||
				br.bytes_moved < 8 * (uint64_t) n)
				case_fail("%.3f ms, %.1f Mkeys/s, %llu bytes moved", br.ms, br.mkeys_per_s,
						  (unsigned long long) br.bytes_moved);
		}
		case_end();
	}
	case_begin("bench of a bcht at load factor 0.99 builds every key");
	{
		gh_bench_result br;

		if (check_ok(gh_bench(e, GH_BENCH_BUILD, GH_KIND_BCHT, n, 1, 0.99, &br), e, "gh_bench") &&
			br.check != n)
			case_fail("check %llu, want %zu", (unsigned long long) br.check, n);
	}
	case_end();
	case_begin("device memory is back to a fresh engine's after benchmarks");
	check_device_bytes(e, fresh_bytes, "after benchmarks");
	case_end();
	gh_close(e);
}

/*
 * gh_copy_host: arrays of every size around its 4 MB pieces, at odd
 * offsets, copied exactly, nothing written past them; no copies at all.
 */
static void
copy_cases(void)
{
	static const size_t sizes[] = {0, 1, 7, ((size_t) 4 << 20) - 1, (size_t) 4 << 20,
	((size_t) 4 << 20) + 1, ((size_t) 9 << 20) + 3, 12345};
	enum
	{
		NCOPY = sizeof(sizes) / sizeof(sizes[0])
	};
	gh_copy		copies[NCOPY];
	uint8_t    *src[NCOPY],
			   *dst[NCOPY];
	uint64_t	x = run.seed | 1;

	case_begin("gh_copy_host copies %d arrays of 0 bytes to 9 MB at odd offsets exactly, nothing past their ends",
			   NCOPY);
	for (int i = 0; i < NCOPY; i++)
	{
		src[i] = xmalloc(sizes[i] + 16);
		dst[i] = xmalloc(sizes[i] + 16);
		for (size_t b = 0; b < sizes[i] + 16; b++)
		{
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			src[i][b] = (uint8_t) x;
		}
		memset(dst[i], 0xA5, sizes[i] + 16);
		copies[i] = (gh_copy) {dst[i] + 3, src[i] + 5, sizes[i]};
	}
	gh_copy_host(copies, 0);
	for (int i = 0; i < NCOPY; i++)
		if (dst[i][3] != 0xA5 && sizes[i] > 0)
			case_fail("no copies wrote something");
	gh_copy_host(copies, NCOPY);
	for (int i = 0; i < NCOPY; i++)
	{
		if (memcmp(dst[i] + 3, src[i] + 5, sizes[i]) != 0)
			case_fail("array %d (%zu bytes) differs from its source", i, sizes[i]);
		for (size_t b = 0; b < 3; b++)
			if (dst[i][b] != 0xA5 || dst[i][3 + sizes[i] + b] != 0xA5)
				case_fail("array %d (%zu bytes): a byte around it was written", i, sizes[i]);
		free(src[i]);
		free(dst[i]);
	}
	case_end();
}

void
run_api_cases(void)
{
	invalid_argument_cases();
	cancel_cases();
	bench_cases();
	copy_cases();
}
