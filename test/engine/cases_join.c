/*-------------------------------------------------------------------------
 *
 * cases_join.c
 *	  Engine unit tests of tables: gh_build, gh_find, gh_join_* and the
 *	  outer match flags, against the sort-based oracle.
 *
 * Every input (a key distribution at a size) runs under every
 * configuration of test_configs() -- simulated devices and memory limits
 * small enough to split it into many hash-range partitions, or row-range
 * pieces when one key is too hot for a partition -- and with every table
 * kind (hashgraph, bcht, auto).  For each table: the build, a gh_find, and
 * one join per method, whose pairs are read in chunks of a small cap and
 * compared with the oracle's as a multiset; the outer match flags are read
 * after the first chunk (mid-join).
 *
 * Then the corners the matrix does not reach: BCHT at load factors 0.99,
 * 0.75 and 0.5, a key repeated a million times, and a hot key read one pair
 * at a time.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"

/*
 * Chunk caps; a cap is raised until a join takes at most this many calls
 * (a call costs a GPU a few launches and copies).
 */
#define MAX_CHUNK_CALLS (run.backend == GH_BACKEND_CUDA ? 20000 : 250000)

static const size_t default_caps[] = {1, 7, 1000, 65536};

static bool
check_build(gh_engine *e, const test_config *cfg, gh_kind kind,
			const join_input *in, gh_table *t)
{
	gh_kind		want_kind = kind == GH_KIND_AUTO ? gh_choose_kind(e, in->n) : kind;
	int			parts = gh_table_partitions(t);

	if (gh_table_kind(t) != want_kind || want_kind == GH_KIND_AUTO)
	{
		case_fail("table kind %s, want %s", kind_name(gh_table_kind(t)), kind_name(want_kind));
		return false;
	}
	if (gh_table_rows(t) != in->n)
	{
		case_fail("table has %zu rows, want %zu", gh_table_rows(t), in->n);
		return false;
	}
	if (gh_table_broadcast(t) ? (parts != 1 || cfg->ndevices < 2 || in->n == 0) :
		(parts < 1 || parts % cfg->ndevices != 0))
	{
		case_fail("%d partitions on %d devices%s", parts, cfg->ndevices,
				  gh_table_broadcast(t) ? ", broadcast" : "");
		return false;
	}
	/* distinct keys: one partition of one piece holds them all */
	if (want_kind == GH_KIND_BCHT && cfg->memory_limit == 0 && cfg->ndevices == 1 &&
		gh_table_distinct_keys(t) != in->ndistinct)
	{
		case_fail("table reports %zu distinct keys, want %zu",
				  gh_table_distinct_keys(t), in->ndistinct);
		return false;
	}
	if (want_kind == GH_KIND_HASHGRAPH && gh_table_distinct_keys(t) != 0)
	{
		case_fail("a hashgraph reports %zu distinct keys, want 0", gh_table_distinct_keys(t));
		return false;
	}
	return true;
}

static void
check_find(gh_table *t, gh_engine *e, const join_input *in)
{
	uint32_t   *counts = xmalloc((in->m + 1) * sizeof(uint32_t));

	memset(counts, 0xab, (in->m + 1) * sizeof(uint32_t));
	if (check_ok(gh_find(t, in->probe, in->m, counts), e, "gh_find"))
		for (size_t i = 0; i < in->m; i++)
		{
			uint64_t	want = in->matches[i] > UINT32_MAX ? UINT32_MAX : in->matches[i];

			if (counts[i] != want)
			{
				case_fail("probe key %zu (%llu) has %u matches, want %llu", i,
						  (unsigned long long) in->probe[i], counts[i],
						  (unsigned long long) want);
				break;
			}
		}
	free(counts);
}

static void
check_outer_flags(gh_join *j, gh_engine *e, const join_input *in)
{
	uint8_t    *flags = xmalloc(in->m + 1);

	memset(flags, 0xcd, in->m + 1);
	if (check_ok(gh_join_outer_matched(j, flags), e, "gh_join_outer_matched"))
		for (size_t i = 0; i < in->m; i++)
			if (flags[i] != (in->matches[i] > 0))
			{
				case_fail("outer match flag of probe key %zu is %d, want %d",
						  i, flags[i], in->matches[i] > 0);
				break;
			}
	free(flags);
}

/* One join: count, chunks of cap, the multiset of pairs, the outer flags. */
static void
check_join(gh_table *t, gh_engine *e, const join_input *in, gh_join_method method,
		   size_t cap)
{
	const gh_pair *want = in->want;
	uint64_t	total = in->total;
	gh_join    *j = NULL;
	gh_pair    *got = xmalloc((size_t) (total > 0 ? total : 1) * sizeof(gh_pair));
	gh_pair    *buf = xmalloc((cap + 1) * sizeof(gh_pair));
	uint64_t	ngot = 0;
	bool		flags_checked = false;

	if (!check_ok(gh_join_begin(t, in->probe, in->m, method, &j), e, "gh_join_begin"))
		goto done;
	if (gh_join_total(j) != total)
	{
		case_fail("gh_join_total %llu, want %llu",
				  (unsigned long long) gh_join_total(j), (unsigned long long) total);
		goto done;
	}
	for (;;)
	{
		size_t		nout = (size_t) -1;

		if (!check_ok(gh_join_next(j, buf, cap, &nout), e, "gh_join_next"))
			goto done;
		if (nout > cap)
		{
			case_fail("gh_join_next wrote %zu pairs with a cap of %zu", nout, cap);
			goto done;
		}
		if (nout == 0)
			break;
		if (ngot + nout > total)
		{
			case_fail("gh_join_next wrote more than the %llu pairs expected",
					  (unsigned long long) total);
			goto done;
		}
		for (size_t k = 0; k < nout; k++)
			if (buf[k].outer >= in->m)
			{
				case_fail("gh_join_next wrote outer %llu for %zu probe keys",
						  (unsigned long long) buf[k].outer, in->m);
				goto done;
			}
		memcpy(got + ngot, buf, nout * sizeof(gh_pair));
		ngot += nout;
		/* outer flags mid-join: must not disturb the writing */
		if (!flags_checked)
		{
			check_outer_flags(j, e, in);
			flags_checked = true;
		}
	}
	if (!flags_checked)
		check_outer_flags(j, e, in);
	if (ngot != total)
	{
		case_fail("the join wrote %llu pairs, want %llu",
				  (unsigned long long) ngot, (unsigned long long) total);
		goto done;
	}
	sort_pairs(got, (size_t) ngot, in->m);
	for (uint64_t k = 0; k < total; k++)
		if (got[k].outer != want[k].outer || got[k].inner != want[k].inner)
		{
			case_fail("pair %llu of the sorted output is (%llu, %llu), want (%llu, %llu)",
					  (unsigned long long) k, (unsigned long long) got[k].outer,
					  (unsigned long long) got[k].inner,
					  (unsigned long long) want[k].outer,
					  (unsigned long long) want[k].inner);
			goto done;
		}
	/* a finished join writes nothing more */
	{
		size_t		nout = (size_t) -1;

		if (check_ok(gh_join_next(j, buf, cap, &nout), e, "gh_join_next after the end") &&
			nout != 0)
			case_fail("gh_join_next wrote %zu pairs after the end", nout);
	}

done:
	gh_join_free(j);
	free(got);
	free(buf);
}

void
check_table(gh_engine *e, const test_config *cfg, gh_kind kind,
			const join_input *in, const size_t *caps, int ncaps)
{
	static const gh_join_method methods[] = {GH_JOIN_PROBE, GH_JOIN_INTERSECT, GH_JOIN_AUTO};
	static unsigned rotation = 0;
	static unsigned broadcast = 0;
	char		cname[128];
	gh_table   *t = NULL;
	uint64_t	total = in->total;
	bool		built;

	config_name(cfg, cname, sizeof(cname));
	/* several devices: tables that fit broadcast, or all split by hash range, in turn */
	if (cfg->ndevices > 1)
	{
		bool		on = broadcast++ % 2 == 0;

		gh_debug_broadcast_rows(e, on ? -1 : 0);
		strncat(cname, on ? ", broadcast if it fits" : ", hash ranges",
				sizeof(cname) - strlen(cname) - 1);
	}
	case_begin("%s build, %s, %s", kind_name(kind), in->label, cname);
	built = check_ok(gh_build(e, kind, in->keys, in->rows, in->n, &t), e, "gh_build") &&
		check_build(e, cfg, kind, in, t);
	case_end();
	if (!built)
	{
		gh_table_free(t);
		return;
	}

	case_begin("%s find, %s, %zu probe keys, %s", kind_name(kind), in->label, in->m, cname);
	check_find(t, e, in);
	case_end();

	for (int k = 0; k < 3; k++)
	{
		int			c = (int) (rotation++ % (unsigned) ncaps);
		size_t		cap = caps[c];

		while (c + 1 < ncaps && total / cap > MAX_CHUNK_CALLS)
			cap = caps[++c];
		case_begin("%s join (%s), %s, %zu probe keys, %s, cap %zu",
				   kind_name(kind), method_name(methods[k]), in->label, in->m, cname, cap);
		check_join(t, e, in, methods[k], cap);
		case_end();
	}
	gh_table_free(t);
}

/* ---- the matrix ---- */

/*
 * An input of the matrix.  Small inputs run under every configuration with
 * every table kind; large ones (wide = false) under the first
 * configuration with both kinds, and the first split configuration with
 * one kind, alternating.
 */
typedef struct dataset
{
	dist_kind	kind;
	size_t		n;
	bool		wide;
} dataset;

#define MEG (((size_t) 1 << 20) + 3)
#define QUARTER_MEG (((size_t) 1 << 18) + 3)

static const dataset cpu_datasets[] = {
	{DIST_UNIQUE, 0, true},
	{DIST_UNIQUE, 1, true},
	{DIST_UNIQUE, 15, true},
	{DIST_UNIQUE, 16, true},
	{DIST_UNIQUE, 17, true},
	{DIST_UNIQUE, 1000, true},
	{DIST_UNIQUE, 65537, true},
	{DIST_UNIQUE, MEG, false},
	{DIST_DUPS, 17, true},
	{DIST_DUPS, 1000, true},
	{DIST_DUPS, 65537, true},
	{DIST_DUPS, QUARTER_MEG, false},
	{DIST_ZIPF, 1000, true},
	{DIST_ZIPF, 65537, true},
	{DIST_ZIPF, MEG, false},
	{DIST_EQUAL, 1, true},
	{DIST_EQUAL, 16, true},
	{DIST_EQUAL, 1000, true},
	{DIST_EQUAL, 100000, false},
	{DIST_EQUAL_MAX, 17, true},
	{DIST_EQUAL_MAX, 1000, true},
};

static const dataset cuda_datasets[] = {
	{DIST_UNIQUE, 0, true},
	{DIST_UNIQUE, 1, true},
	{DIST_UNIQUE, 15, true},
	{DIST_UNIQUE, 16, true},
	{DIST_UNIQUE, 17, true},
	{DIST_UNIQUE, 1000, true},
	{DIST_UNIQUE, 65537, true},
	{DIST_UNIQUE, ((size_t) 1 << 22) + 3, true},
	{DIST_UNIQUE, (size_t) 1 << 24, false},
	{DIST_DUPS, 17, true},
	{DIST_DUPS, 65537, true},
	{DIST_DUPS, ((size_t) 1 << 22) + 3, false},
	{DIST_ZIPF, 65537, true},
	{DIST_ZIPF, ((size_t) 1 << 22) + 3, false},
	{DIST_EQUAL, 1, true},
	{DIST_EQUAL, 1000, true},
	{DIST_EQUAL, 100000, true},
	{DIST_EQUAL_MAX, 1000, true},
};

/* Quick runs (valgrind): small inputs only. */
static const dataset quick_datasets[] = {
	{DIST_UNIQUE, 0, true},
	{DIST_UNIQUE, 1, true},
	{DIST_UNIQUE, 17, true},
	{DIST_UNIQUE, 1000, true},
	{DIST_DUPS, 1000, true},
	{DIST_ZIPF, 1000, true},
	{DIST_EQUAL, 300, true},
	{DIST_EQUAL_MAX, 17, true},
};

static bool
config_splits(const test_config *cfg)
{
	return cfg->memory_limit != 0 && cfg->memory_limit < ((size_t) 1 << 20);
}

/* Probe keys for n build keys. */
static size_t
probe_count(size_t n)
{
	if (n == 0)
		return 100;
	if (n > 65537)
		return n;
	return n + n / 3 + 1;
}

static void
run_dataset(const dataset *ds, const test_config *cfgs, int ncfg, gh_engine **engines,
			rng *r, bool shuffled_rows)
{
	static const gh_kind kinds[] = {GH_KIND_HASHGRAPH, GH_KIND_BCHT, GH_KIND_AUTO};
	static unsigned alternate = 0;
	dist		d;
	uint64_t   *keys,
			   *rows = NULL,
			   *probe;
	size_t		m = probe_count(ds->n);
	join_input	in;
	bool		split_done = false;

	dist_init(&d, ds->kind, ds->n, r);
	keys = gen_build_keys(&d, ds->n, r);
	probe = gen_probe_keys(&d, ds->n, m, 2 * (uint64_t) ds->n + 200000, r);
	if (shuffled_rows)
		rows = gen_permutation(ds->n, r);
	join_input_prepare(&in, keys, rows, ds->n, probe, m);
	snprintf(in.label, sizeof(in.label), "%s, n=%zu%s", dist_name(ds->kind), ds->n,
			 shuffled_rows ? ", shuffled row numbers" : "");

	for (int c = 0; c < ncfg; c++)
	{
		bool		split = config_splits(&cfgs[c]);

		if (engines[c] == NULL)
			continue;
		if (ds->wide)
		{
			for (int k = 0; k < 3; k++)
				check_table(engines[c], &cfgs[c], kinds[k], &in, default_caps,
							(int) (sizeof(default_caps) / sizeof(default_caps[0])));
		}
		else if (c == 0)
		{
			for (int k = 0; k < 2; k++)
				check_table(engines[c], &cfgs[c], kinds[k], &in, default_caps,
							(int) (sizeof(default_caps) / sizeof(default_caps[0])));
		}
		else if (split && !split_done)
		{
			split_done = true;
			check_table(engines[c], &cfgs[c], kinds[alternate++ % 2], &in, default_caps,
						(int) (sizeof(default_caps) / sizeof(default_caps[0])));
		}
	}
	join_input_release(&in);
	dist_free(&d);
	free(keys);
	free(rows);
	free(probe);
}

/* A key repeated `copies` times among a few others, joined in chunks of cap. */
static void
run_hot_key(gh_engine *e, const test_config *cfg, size_t copies, size_t cap, rng *r)
{
	static const gh_kind kinds[] = {GH_KIND_HASHGRAPH, GH_KIND_BCHT};
	size_t		others = 999,
				n = copies + others,
				m = 1000;
	uint64_t	hot = rng_next(r);
	uint64_t   *keys = xmalloc(n * sizeof(uint64_t));
	uint64_t   *probe = xmalloc(m * sizeof(uint64_t));
	uint64_t   *perm = gen_permutation(n, r);
	join_input	in;
	size_t		caps[1];

	/* the hot key at random positions among unique others */
	for (size_t i = 0; i < n; i++)
		keys[perm[i]] = i < copies ? hot : hot + 1 + i;
	/* probe: the hot key once, present others, absent keys */
	for (size_t i = 0; i < m; i++)
		probe[i] = i % 3 == 0 ? keys[rng_below(r, n)] : rng_next(r);
	for (size_t i = 0; i < m; i++)
		if (probe[i] == hot)
			probe[i] = hot - 1;
	probe[rng_below(r, m)] = hot;
	join_input_prepare(&in, keys, NULL, n, probe, m);
	snprintf(in.label, sizeof(in.label), "one key repeated %zu times among %zu others",
			 copies, others);
	caps[0] = cap;
	for (int k = 0; k < 2; k++)
		check_table(e, cfg, kinds[k], &in, caps, 1);
	join_input_release(&in);
	free(keys);
	free(probe);
	free(perm);
}

/*
 * BCHT at load factors 0.99 (the table nearly full, cuckoo chains long;
 * lookups go on to second and third buckets), 0.75 and 0.5 (most keys in
 * their first bucket); unique, duplicated, skewed and all-equal keys (the
 * empty-slot marker among them); on the GPU both ways of moving keys while
 * inserting (with their row ranges, and alone: gh_debug_bcht_key_moves).
 */
static void
run_full_bcht(rng *r)
{
	test_config cfgs[4] = {{1, 0, 0.99}, {3, (size_t) 64 << 10, 0.99}, {1, 0, 0.75}, {1, 0, 0.5}};
	static const struct
	{
		dist_kind	kind;
		size_t		n;
		bool		unsplit_only;
	}			inputs[] = {
		{DIST_UNIQUE, 1000, false},
		{DIST_UNIQUE, 65537, false},
		{DIST_DUPS, 65537, false},
		{DIST_ZIPF, 65537, false},
		{DIST_EQUAL, 4097, false},
		{DIST_EQUAL_MAX, 1000, false},
		{DIST_UNIQUE, MEG, true},
	};
	size_t		caps[1] = {65536};

	if (run.quick)
		cfgs[1].memory_limit = (size_t) 4 << 10;
	/* on the GPU, each configuration also with keys moved alone */
	for (int cm = 0; cm < (run.backend == GH_BACKEND_CUDA ? 8 : 4); cm++)
	{
		int			c = cm % 4;
		bool		key_moves = cm >= 4;
		gh_engine  *e;
		char		cname[128];

		case_begin("open an engine with %s", config_name(&cfgs[c], cname, sizeof(cname)));
		e = open_engine(&cfgs[c]);
		case_end();
		if (e == NULL)
			continue;
		gh_debug_bcht_key_moves(e, key_moves);
		for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		{
			dist		d;
			uint64_t   *keys,
					   *probe;
			size_t		n = inputs[i].n;
			join_input	in;

			if ((inputs[i].unsplit_only && c == 1) || (run.quick && n > 1000))
				continue;
			if (run.backend == GH_BACKEND_CUDA && n == MEG)
				n = ((size_t) 1 << 22) + 3;
			dist_init(&d, inputs[i].kind, n, r);
			keys = gen_build_keys(&d, n, r);
			probe = gen_probe_keys(&d, n, n, 2 * (uint64_t) n, r);
			join_input_prepare(&in, keys, NULL, n, probe, n);
			snprintf(in.label, sizeof(in.label), "%s, n=%zu%s", dist_name(inputs[i].kind), n,
					 key_moves ? ", keys moved alone" : "");
			check_table(e, &cfgs[c], GH_KIND_BCHT, &in, caps, 1);
			join_input_release(&in);
			dist_free(&d);
			free(keys);
			free(probe);
		}
		gh_close(e);
	}
}

void
run_join_cases(void)
{
	test_config cfgs[8];
	gh_engine  *engines[8];
	size_t		fresh_bytes[8];
	int			ncfg = test_configs(cfgs, 8);
	rng			r = {run.seed ^ UINT64_C(0x6a6f696e)};
	const dataset *ds;
	size_t		nds;
	int			hot_configs = 0;

	if (run.quick)
	{
		ds = quick_datasets;
		nds = sizeof(quick_datasets) / sizeof(quick_datasets[0]);
	}
	else if (run.backend == GH_BACKEND_CUDA)
	{
		ds = cuda_datasets;
		nds = sizeof(cuda_datasets) / sizeof(cuda_datasets[0]);
	}
	else
	{
		ds = cpu_datasets;
		nds = sizeof(cpu_datasets) / sizeof(cpu_datasets[0]);
	}

	open_engines(cfgs, ncfg, engines, fresh_bytes);
	for (size_t i = 0; i < nds; i++)
		run_dataset(&ds[i], cfgs, ncfg, engines, &r, i % 2 == 1);

	/*
	 * A key repeated 10^6 times, and one repeated 10^5 times read one pair
	 * at a time: unsplit, and split (the hot key's partition is then cut
	 * into row ranges).
	 */
	for (int c = 0; c < ncfg && hot_configs < 2; c++)
	{
		if (engines[c] == NULL || (c != 0 && !config_splits(&cfgs[c])))
			continue;
		run_hot_key(engines[c], &cfgs[c], run.quick ? 20000 : 1000000, 65536, &r);
		run_hot_key(engines[c], &cfgs[c], run.quick ? 3000 : 100000, 1, &r);
		hot_configs++;
	}

	/* every table freed: the engines hold no memory */
	close_engines(cfgs, ncfg, engines, fresh_bytes, "once every table is freed", true);
	run_full_bcht(&r);
}
