/*-------------------------------------------------------------------------
 *
 * cases_joinagg.c
 *	  Engine unit tests of gh_join_aggregate against a brute-force oracle.
 *
 * The oracle joins by sorting (join_input_prepare in oracle.c: no hashing,
 * nothing of the engine's), turns every expected pair (o, r) into a row --
 * its group key outer_keys[o] | inner_keys[r], each column's value and NULL
 * flag at o or at r -- and groups those rows by sorting (oracle_aggregate).
 * The engine must give the same groups: keys, counts, exact 128-bit sums,
 * min/max to the bit (NaN, -0), float sums within a tolerance; and
 * input_rows the number of pairs, the table's partitions and devices.
 *
 * Inputs: heavy duplicates on both sides (row numbers 0..n-1, then a
 * permutation), Zipf keys with sparse row numbers (3r + 1, the inner arrays
 * exactly one entry longer than the largest), a hot key with more build
 * rows than a unit holds at the small limits (its partition is cut into
 * row ranges), and an input large enough that the devices run on threads.
 * Each runs under every configuration of test_configs() (1 to 8 simulated
 * devices, limits that split the table into partitions and the pairs into
 * many chunks), on both table kinds with both join methods (BCHT tables
 * accept INTERSECT and probe), grouped four ways: by outer key bits, inner
 * key bits, both (disjoint bits that together reach the key 2^64-1), and
 * nothing (one group); and once with no column (count(*) only).
 *
 * Columns (c: side):
 *	c0 outer	int64 sum/min/max, NULLs, all-NULL outer groups
 *	c1 inner	float8 sum/min/max, NULLs, all-NULL inner groups, -0 and +0
 *	c2 inner	int64 sum/min/max near +-2^63 (sums overflow int64), no NULLs
 *	c3 outer	float8 min/max with NaN, infinities, -0 and +0, NULLs
 *	c4 inner	int64 with no operation (the non-NULL count only), NULLs
 *
 * Then the corners: an empty probe, an empty table, no matches; invalid
 * arguments; a cancel part way through; a failure injected on one of
 * several devices, which must fail cleanly and give all device memory back.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"

#define NCOLS 5

/* Which side each column is read from (1: inner, by build row number). */
static const uint8_t col_inner[NCOLS] = {0, 1, 1, 0, 1};

/* Which side's key bits make a pair's group key. */
typedef enum grouping
{
	GROUP_OUTER,
	GROUP_INNER,
	GROUP_BOTH,
	GROUP_NONE
} grouping;

#define NGROUPINGS 4

static const char *const grouping_names[NGROUPINGS] = {
	"outer key bits", "inner key bits", "both sides' bits", "nothing (one group)"
};

/* Build row numbers: 0..n-1, a permutation of them, or 3 * permutation + 1. */
typedef enum row_numbers
{
	ROWS_DENSE,
	ROWS_PERMUTED,
	ROWS_SPARSE
} row_numbers;

/* One input, its spec arrays and what the oracle expects. */
typedef struct ja_input
{
	char		label[160];
	uint64_t   *keys;			/* n build keys */
	uint64_t   *rows;			/* NULL: 0..n-1 */
	uint64_t   *probe;			/* m probe keys */
	join_input	join;			/* the expected pairs */
	size_t		inner_rows;
	uint64_t   *okeys;			/* m outer group keys (bits 0..31) */
	uint64_t   *ikeys;			/* inner_rows inner group keys (bits 32..63) */
	gh_aggcol	cols[NCOLS];
	agg_oracle	want[NGROUPINGS];
	agg_oracle	want_count;		/* no columns, grouped by both sides */
} ja_input;

/* ---- inputs ---- */

/* A side's group key part: one of a few dozen values, sometimes all ones. */
static uint64_t
group_part(rng *r, unsigned shift)
{
	uint64_t	v = rng_below(r, 16) == 0 ? UINT64_C(0xffffffff) : rng_below(r, 40);

	return v << shift;
}

/*
 * Column c's values for len rows of its side.  gk: the side's group key
 * parts, which make some groups all NULL (c0, c1).
 */
static void
fill_column(int c, size_t len, const uint64_t *gk, rng *r, gh_aggcol *col)
{
	void	   *v = xmalloc((len + 1) * sizeof(uint64_t));
	int64_t    *iv = v;
	double	   *dv = v;
	uint8_t    *nl = c == 2 ? NULL : xmalloc(len + 1);

	for (size_t i = 0; i < len; i++)
	{
		uint64_t	x = rng_next(r);
		uint64_t	part = gk[i] >> 32 ? gk[i] >> 32 : gk[i];

		switch (c)
		{
			case 0:
				iv[i] = (int64_t) rng_below(r, 2000001) - 1000000;
				break;
			case 1:
				dv[i] = x % 16 == 0 ? -0.0 : x % 16 == 1 ? 0.0 : (rng_unit(r) - 0.5) * 2000.0;
				break;
			case 2:
				/* mostly near +2^63: any group of a few pairs overflows */
				if ((x >> 16) % 8 == 0)
					iv[i] = (int64_t) rng_below(r, 2001) - 1000;
				else if ((x >> 20) % 5 != 0)
					iv[i] = INT64_MAX - (int64_t) rng_below(r, 1000);
				else
					iv[i] = INT64_MIN + (int64_t) rng_below(r, 1000);
				break;
			case 3:
				dv[i] = gen_float_with_specials(r, x >> 32, 24, 1e6);
				break;
			default:
				iv[i] = (int64_t) x;
				break;
		}
		if (nl)
			nl[i] = (x >> 40) % 6 == 0 || (c <= 1 && part % 7 == 3);
	}
	col->type = (c == 1 || c == 3) ? GH_FLOAT64 : GH_INT64;
	col->ops = c == 4 ? 0 : c == 3 ? GH_AGG_MIN | GH_AGG_MAX : GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX;
	col->values = v;
	col->nulls = nl;
}

static bool
uses_outer(grouping g)
{
	return g == GROUP_OUTER || g == GROUP_BOTH;
}

static bool
uses_inner(grouping g)
{
	return g == GROUP_INNER || g == GROUP_BOTH;
}

/* Every expected pair as a row of the oracle's aggregation, per grouping. */
static void
ja_oracle(ja_input *in)
{
	size_t		total = (size_t) in->join.total;
	const gh_pair *want = in->join.want;
	uint64_t   *pk = xmalloc((total + 1) * sizeof(uint64_t));
	gh_aggcol	pc[NCOLS];

	for (int c = 0; c < NCOLS; c++)
	{
		const uint64_t *src = in->cols[c].values;
		uint64_t   *dst = xmalloc((total + 1) * sizeof(uint64_t));
		uint8_t    *dst_nulls = in->cols[c].nulls ? xmalloc(total + 1) : NULL;

		for (size_t k = 0; k < total; k++)
		{
			uint64_t	at = col_inner[c] ? want[k].inner : want[k].outer;

			dst[k] = src[at];
			if (dst_nulls)
				dst_nulls[k] = in->cols[c].nulls[at];
		}
		pc[c] = in->cols[c];
		pc[c].values = dst;
		pc[c].nulls = dst_nulls;
	}
	for (int g = 0; g < NGROUPINGS; g++)
	{
		for (size_t k = 0; k < total; k++)
			pk[k] = (uses_outer(g) ? in->okeys[want[k].outer] : 0) |
				(uses_inner(g) ? in->ikeys[want[k].inner] : 0);
		oracle_aggregate(&in->want[g], pk, total, pc, NCOLS);
		if (g == GROUP_BOTH)
			oracle_aggregate(&in->want_count, pk, total, NULL, 0);
	}
	for (int c = 0; c < NCOLS; c++)
	{
		free((void *) pc[c].values);
		free((void *) pc[c].nulls);
	}
	free(pk);
}

/*
 * An input of n build keys and m probe keys (both taken over), with row
 * numbers of the given kind, random spec arrays and the oracle's results.
 */
static void
ja_make(ja_input *in, uint64_t *keys, size_t n, uint64_t *probe, size_t m,
		row_numbers rn, const char *what, rng *r)
{
	static const char *const rn_names[] = {"", ", permuted row numbers", ", sparse row numbers"};

	memset(in, 0, sizeof(*in));
	in->keys = keys;
	in->probe = probe;
	in->inner_rows = n;
	if (rn != ROWS_DENSE)
	{
		in->rows = gen_permutation(n, r);
		if (rn == ROWS_SPARSE)
		{
			for (size_t i = 0; i < n; i++)
				in->rows[i] = 3 * in->rows[i] + 1;
			/* exactly one more than the largest row number */
			in->inner_rows = n > 0 ? 3 * n - 1 : 0;
		}
	}
	join_input_prepare(&in->join, keys, in->rows, n, probe, m);
	in->okeys = xmalloc((m + 1) * sizeof(uint64_t));
	in->ikeys = xmalloc((in->inner_rows + 1) * sizeof(uint64_t));
	for (size_t i = 0; i < m; i++)
		in->okeys[i] = group_part(r, 0);
	for (size_t i = 0; i < in->inner_rows; i++)
		in->ikeys[i] = group_part(r, 32);
	for (int c = 0; c < NCOLS; c++)
	{
		if (col_inner[c])
			fill_column(c, in->inner_rows, in->ikeys, r, &in->cols[c]);
		else
			fill_column(c, m, in->okeys, r, &in->cols[c]);
	}
	ja_oracle(in);
	snprintf(in->label, sizeof(in->label), "%s, n=%zu, %zu probe keys%s, %llu pairs", what, n, m,
			 rn_names[rn], (unsigned long long) in->join.total);
}

static void
ja_free(ja_input *in)
{
	for (int g = 0; g < NGROUPINGS; g++)
		agg_oracle_free(&in->want[g]);
	agg_oracle_free(&in->want_count);
	for (int c = 0; c < NCOLS; c++)
	{
		free((void *) in->cols[c].values);
		free((void *) in->cols[c].nulls);
	}
	join_input_release(&in->join);
	free(in->keys);
	free(in->rows);
	free(in->probe);
	free(in->okeys);
	free(in->ikeys);
}

/* Keys drawn from a distribution of kind, n build and m probe keys. */
static void
ja_make_dist(ja_input *in, dist_kind kind, size_t n, size_t m, row_numbers rn, rng *r)
{
	dist		d;
	uint64_t   *keys,
			   *probe;

	dist_init(&d, kind, n, r);
	keys = gen_build_keys(&d, n, r);
	probe = gen_probe_keys(&d, n, m, 8 * (uint64_t) n, r);
	ja_make(in, keys, n, probe, m, rn, dist_name(kind), r);
	dist_free(&d);
}

/* A key with `copies` build rows among heavy duplicates, probed 3 times. */
static void
ja_make_hot(ja_input *in, size_t copies, size_t others, size_t m, rng *r)
{
	dist		d;
	uint64_t   *keys = xmalloc((copies + others + 1) * sizeof(uint64_t));
	uint64_t   *dups,
			   *probe;
	uint64_t   *perm = gen_permutation(copies + others, r);
	uint64_t	hot;
	char		what[64];

	dist_init(&d, DIST_DUPS, others, r);
	dups = gen_build_keys(&d, others, r);
	probe = gen_probe_keys(&d, others, m, 8 * (uint64_t) others, r);
	hot = dist_key(&d, d.domain + 1000);	/* outside the others' ranks */
	for (size_t i = 0; i < copies + others; i++)
		keys[perm[i]] = i < copies ? hot : dups[i - copies];
	for (int k = 0; k < 3; k++)
		probe[rng_below(r, m)] = hot;
	snprintf(what, sizeof(what), "one key with %zu build rows among heavy duplicates", copies);
	ja_make(in, keys, copies + others, probe, m, ROWS_DENSE, what, r);
	dist_free(&d);
	free(dups);
	free(perm);
}

/* ---- checks ---- */

static gh_joinagg
ja_spec(const ja_input *in, grouping g, int ncols)
{
	gh_joinagg	spec;

	memset(&spec, 0, sizeof(spec));
	spec.outer_keys = uses_outer(g) ? in->okeys : NULL;
	spec.inner_keys = uses_inner(g) ? in->ikeys : NULL;
	spec.inner_rows = in->inner_rows;
	spec.cols = in->cols;
	spec.col_inner = col_inner;
	spec.ncols = ncols;
	return spec;
}

/* The result's bookkeeping: pairs, the table's partitions and devices. */
static void
check_bookkeeping(const gh_groups *g, gh_table *t, uint64_t pairs)
{
	int			ids[GH_MAX_DEVICES];
	int			nids = gh_table_devices(t, ids, GH_MAX_DEVICES);

	if (g->input_rows != pairs)
		case_fail("input_rows %llu, want %llu pairs", (unsigned long long) g->input_rows,
				  (unsigned long long) pairs);
	else if (g->partitions != gh_table_partitions(t))
		case_fail("%d partitions reported, the table has %d", g->partitions,
				  gh_table_partitions(t));
	else if (g->ndevices != nids || memcmp(g->devices, ids, nids * sizeof(int)) != 0)
		case_fail("%d devices reported, the table is on %d (or other ones)", g->ndevices, nids);
}

/* One gh_join_aggregate of in's probe keys against t, checked. */
static void
check_join_aggregate(gh_engine *e, gh_table *t, const ja_input *in,
					 gh_join_method method, const gh_joinagg *spec,
					 const agg_oracle *want)
{
	gh_groups  *g = NULL;

	if (!check_ok(gh_join_aggregate(t, in->probe, in->join.m, method, spec, &g), e,
				  "gh_join_aggregate"))
		return;
	if (g == NULL)
	{
		case_fail("gh_join_aggregate returned GH_OK and no groups");
		return;
	}
	compare_groups(g, want, spec->cols, spec->ncols);
	check_bookkeeping(g, t, in->join.total);
	gh_groups_free(g);
}

/* Both table kinds, both methods, every grouping, and count(*) alone. */
static void
run_ja_input(gh_engine *e, const test_config *cfg, const ja_input *in)
{
	static const gh_kind kinds[] = {GH_KIND_HASHGRAPH, GH_KIND_BCHT};
	static const gh_join_method methods[] = {GH_JOIN_PROBE, GH_JOIN_INTERSECT};
	char		cname[128];

	config_name(cfg, cname, sizeof(cname));
	for (int k = 0; k < 2; k++)
	{
		gh_table   *t = NULL;
		gh_joinagg	spec;
		bool		built;

		/* several devices: the hashgraph's table broadcast if it fits, the bcht's split */
		if (cfg->ndevices > 1)
			gh_debug_broadcast_rows(e, k == 0 ? -1 : 0);
		case_begin("%s build for join-aggregates, %s, %s%s", kind_name(kinds[k]), in->label, cname,
				   cfg->ndevices < 2 ? "" : k == 0 ? ", broadcast if it fits" : ", hash ranges");
		built = check_ok(gh_build(e, kinds[k], in->keys, in->rows, in->join.n, &t), e, "gh_build");
		case_end();
		if (!built)
		{
			gh_table_free(t);
			continue;
		}
		for (int mt = 0; mt < 2; mt++)
			for (int g = 0; g < NGROUPINGS; g++)
			{
				spec = ja_spec(in, (grouping) g, NCOLS);
				case_begin("join-aggregate (%s, %s) grouped by %s, %s, %s",
						   kind_name(kinds[k]), method_name(methods[mt]), grouping_names[g],
						   in->label, cname);
				check_join_aggregate(e, t, in, methods[mt], &spec, &in->want[g]);
				case_end();
			}
		spec = ja_spec(in, GROUP_BOTH, 0);
		case_begin("join-aggregate (%s) of count(*) alone, %s, %s", kind_name(kinds[k]),
				   in->label, cname);
		check_join_aggregate(e, t, in, GH_JOIN_AUTO, &spec, &in->want_count);
		case_end();
		gh_table_free(t);
	}
}

/* One call that must succeed with no groups and no pairs. */
static void
expect_no_groups(gh_engine *e, gh_table *t, const uint64_t *probe, size_t m,
				 gh_join_method method, const gh_joinagg *spec)
{
	gh_groups  *g = NULL;

	if (!check_ok(gh_join_aggregate(t, probe, m, method, spec, &g), e, "gh_join_aggregate"))
		return;
	if (g == NULL || g->ngroups != 0 || g->ncols != spec->ncols)
		case_fail("%zu groups of %d columns, want none of %d", g ? g->ngroups : 0,
				  g ? g->ncols : -1, spec->ncols);
	else
		check_bookkeeping(g, t, 0);
	gh_groups_free(g);
}

/*
 * An empty probe (NULL keys and outer arrays), an empty table (NULL inner
 * arrays, inner_rows 0) and a probe that matches nothing: no groups.
 */
static void
run_empty_cases(gh_engine *e, const test_config *cfg, const ja_input *in)
{
	static const gh_kind kinds[] = {GH_KIND_HASHGRAPH, GH_KIND_BCHT};
	char		cname[128];
	size_t		m = 500;
	uint64_t   *absent = xmalloc(m * sizeof(uint64_t));
	gh_aggcol	cols[NCOLS];
	gh_joinagg	spec;

	config_name(cfg, cname, sizeof(cname));
	/* the input's keys shifted off every key of the table */
	for (size_t i = 0; i < m; i++)
	{
		absent[i] = in->keys[i % in->join.n] ^ UINT64_C(0x5555555555555555);
		for (size_t k = 0; k < in->join.n; k++)
			if (in->keys[k] == absent[i])
				absent[i] = 2 * i + 1;
	}
	for (int k = 0; k < 2; k++)
	{
		gh_table   *t = NULL,
				   *empty = NULL;

		case_begin("join-aggregates (%s) of an empty probe, of an empty table and with no match have no groups, %s",
				   kind_name(kinds[k]), cname);
		if (check_ok(gh_build(e, kinds[k], in->keys, in->rows, in->join.n, &t), e, "gh_build") &&
			check_ok(gh_build(e, kinds[k], NULL, NULL, 0, &empty), e, "gh_build(n 0)"))
		{
			/* empty probe: no outer arrays at all */
			memcpy(cols, in->cols, sizeof(cols));
			for (int c = 0; c < NCOLS; c++)
				if (!col_inner[c])
					cols[c].values = cols[c].nulls = NULL;
			spec = ja_spec(in, GROUP_INNER, NCOLS);
			spec.cols = cols;
			expect_no_groups(e, t, NULL, 0, GH_JOIN_PROBE, &spec);

			/* empty table: no inner arrays at all */
			memcpy(cols, in->cols, sizeof(cols));
			for (int c = 0; c < NCOLS; c++)
				if (col_inner[c])
					cols[c].values = cols[c].nulls = NULL;
			spec = ja_spec(in, GROUP_OUTER, NCOLS);
			spec.cols = cols;
			spec.inner_rows = 0;
			expect_no_groups(e, empty, in->probe, in->join.m, GH_JOIN_INTERSECT, &spec);

			/* no match */
			spec = ja_spec(in, GROUP_BOTH, NCOLS);
			expect_no_groups(e, t, absent, m, GH_JOIN_AUTO, &spec);
		}
		case_end();
		gh_table_free(t);
		gh_table_free(empty);
	}
	free(absent);
}

/* ---- invalid arguments ---- */

static void
expect_invalid(gh_table *t, const uint64_t *keys, size_t n, gh_join_method method,
			   const gh_joinagg *spec, bool with_out, const char *what)
{
	gh_groups  *g = NULL;
	gh_status	st = gh_join_aggregate(t, keys, n, method, spec, with_out ? &g : NULL);

	if (st != GH_ERR_INVALID)
		case_fail("%s returned %s, want %s", what, gh_status_name(st),
				  gh_status_name(GH_ERR_INVALID));
	if (g != NULL)
	{
		case_fail("%s left groups", what);
		gh_groups_free(g);
	}
}

static void
invalid_argument_cases(void)
{
	test_config cfg = {1, 0, 0};
	uint64_t	keys[5] = {1, 2, 3, 2, UINT64_MAX};
	uint64_t	sparse_rows[5] = {10, 20, 30, 40, 50};
	uint64_t	okeys[5] = {0, 1, 0, 1, 0};
	int64_t		vals[51] = {0};
	uint64_t	ikeys51[51] = {0};
	uint8_t		sides[2] = {0, 1};
	uint8_t		bad_side[1] = {2};
	gh_aggcol	cols[2] = {{GH_INT64, GH_AGG_SUM, vals, NULL}, {GH_INT64, GH_AGG_MAX, vals, NULL}};
	gh_joinagg	spec = {okeys, keys, 5, cols, sides, 2};
	gh_joinagg	bad;
	gh_engine  *e;
	gh_table   *t = NULL,
			   *ts = NULL;
	gh_groups  *g = NULL;

	case_begin("open an engine for the join-aggregate argument checks");
	e = open_engine(&cfg);
	case_end();
	if (e == NULL)
		return;
	case_begin("gh_join_aggregate rejects NULL and inconsistent arguments with GH_ERR_INVALID");
	if (check_ok(gh_build(e, GH_KIND_HASHGRAPH, keys, NULL, 5, &t), e, "gh_build") &&
		check_ok(gh_build(e, GH_KIND_BCHT, keys, sparse_rows, 5, &ts), e, "gh_build(rows)"))
	{
		expect_invalid(NULL, keys, 5, GH_JOIN_PROBE, &spec, true, "a NULL table");
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &spec, false, "a NULL out");
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, NULL, true, "a NULL spec");
		expect_invalid(t, NULL, 5, GH_JOIN_PROBE, &spec, true, "NULL keys, n 5");
		expect_invalid(t, keys, 5, (gh_join_method) 7, &spec, true, "method 7");
		bad = spec;
		bad.ncols = -1;
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &bad, true, "-1 columns");
		bad = spec;
		bad.cols = NULL;
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &bad, true, "NULL columns");
		cols[1].type = (gh_valtype) 9;
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &spec, true, "column type 9");
		cols[1].type = GH_INT64;
		bad = spec;
		bad.ncols = 1;
		bad.col_inner = bad_side;
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &bad, true, "col_inner 2");
		cols[0].values = NULL;
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &spec, true, "NULL outer values, n 5");
		cols[0].values = vals;
		cols[1].values = NULL;
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &spec, true, "NULL inner values");
		cols[1].values = vals;
		bad = spec;
		bad.inner_rows = 0;
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &bad, true,
					   "inner arrays with inner_rows 0 on a table of rows");
		bad.ncols = 0;
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &bad, true,
					   "inner keys with inner_rows 0 on a table of rows");
		bad = spec;
		bad.inner_rows = 4;
		expect_invalid(t, keys, 5, GH_JOIN_PROBE, &bad, true, "inner_rows 4 for rows 0..4");
		bad.inner_keys = ikeys51;
		bad.inner_rows = 50;
		expect_invalid(ts, keys, 5, GH_JOIN_PROBE, &bad, true, "inner_rows 50 for row number 50");
		if (strstr(gh_last_error(e), "row number") == NULL)
			case_fail("message \"%s\" does not name the row number", gh_last_error(e));

		/* the boundaries that are fine */
		bad.inner_rows = 51;
		if (check_ok(gh_join_aggregate(ts, keys, 5, GH_JOIN_PROBE, &bad, &g), e,
					 "gh_join_aggregate(inner_rows 51 for row number 50)") &&
			g->input_rows != 7)
			case_fail("%llu pairs, want 7", (unsigned long long) g->input_rows);
		gh_groups_free(g);
		g = NULL;
		bad = spec;
		bad.inner_keys = NULL;
		bad.inner_rows = 0;
		bad.col_inner = NULL;
		if (check_ok(gh_join_aggregate(t, keys, 5, GH_JOIN_PROBE, &bad, &g), e,
					 "gh_join_aggregate(outer arrays only, inner_rows 0)") &&
			g->ngroups != 2)
			case_fail("%zu groups, want 2", g->ngroups);
		gh_groups_free(g);
	}
	case_end();
	gh_table_free(t);
	gh_table_free(ts);
	gh_close(e);
}

/* ---- cancellation and failures ---- */

/*
 * Interrupts that fire a third and two thirds of the way through the polls
 * of one join-aggregate (counted unarmed first: in has too few pairs for
 * device threads, so no poll depends on timing).
 */
static void
cancel_cases(const ja_input *in)
{
	interrupter irq = {false, 0, 0};
	gh_engine  *e;
	gh_table   *t = NULL;
	gh_joinagg	spec = ja_spec(in, GROUP_BOTH, NCOLS);
	size_t		fresh;

	case_begin("an interrupt part way through a join-aggregate of many chunks gives GH_ERR_CANCELLED and frees everything");
	e = open_interruptible(&irq, run.backend == GH_BACKEND_CUDA ? (size_t) 1 << 20 :
						   (size_t) 64 << 10, 2);
	if (e == NULL)
	{
		case_end();
		return;
	}
	fresh = gh_engine_device_bytes(e);
	if (check_ok(gh_build(e, GH_KIND_HASHGRAPH, in->keys, in->rows, in->join.n, &t), e, "gh_build"))
	{
		gh_groups  *g = NULL;
		long		polls;

		/* unarmed, to count the polls; then fire half way and near the end */
		irq.polls = 0;
		if (check_ok(gh_join_aggregate(t, in->probe, in->join.m, GH_JOIN_PROBE, &spec, &g), e,
					 "gh_join_aggregate"))
			compare_groups(g, &in->want[GROUP_BOTH], spec.cols, spec.ncols);
		gh_groups_free(g);
		polls = irq.polls;
		for (int k = 1; k <= 2; k++)
		{
			g = NULL;
			irq.armed = true;
			irq.polls_left = polls * k / 3;
			if (gh_join_aggregate(t, in->probe, in->join.m, GH_JOIN_PROBE, &spec, &g) !=
				GH_ERR_CANCELLED)
				case_fail("an interrupt after %ld of %ld polls did not cancel",
						  polls * k / 3, polls);
			if (g != NULL)
				case_fail("a cancelled gh_join_aggregate left groups");
			gh_groups_free(g);
			irq.armed = false;
		}
	}
	gh_table_free(t);
	check_device_bytes(e, fresh, "after the cancelled join-aggregates");
	gh_close(e);
	case_end();
}

/*
 * A failure injected on the last of several devices, after 0 to a dozen
 * device steps: the first always fails, the later ones fail or succeed,
 * and either way the device memory is what it was.
 */
static void
failure_cases(const ja_input *in)
{
	static const long afters[] = {0, 1, 2, 3, 5, 8, 13};
	int			nd = usable_devices(3);
	gh_joinagg	spec = ja_spec(in, GROUP_BOTH, NCOLS);

	for (int small = 0; small < 2; small++)
	{
		test_config cfg = {nd, 0, 0};
		gh_engine  *e;
		gh_table   *t = NULL;
		gh_groups  *g = NULL;
		size_t		fresh;
		char		cname[128];

		if (small)
			cfg.memory_limit = run.backend == GH_BACKEND_CUDA ? (size_t) 1 << 20 :
				(size_t) 256 << 10;
		config_name(&cfg, cname, sizeof(cname));
		case_begin("a failure on device %d of %d during a join-aggregate fails it, frees every device's memory, and the engine works afterwards, %s",
				   nd - 1, nd, cname);
		e = open_engine(&cfg);
		if (e == NULL)
		{
			case_end();
			continue;
		}
		fresh = gh_engine_device_bytes(e);
		if (check_ok(gh_build(e, GH_KIND_HASHGRAPH, in->keys, in->rows, in->join.n, &t), e,
					 "gh_build"))
		{
			size_t		held = gh_engine_device_bytes(e);

			for (size_t a = 0; a < sizeof(afters) / sizeof(afters[0]); a++)
			{
				gh_status	st;

				g = NULL;
				gh_debug_inject_failure(e, nd - 1, afters[a], GH_ERR_DEVICE_NOMEM);
				st = gh_join_aggregate(t, in->probe, in->join.m, GH_JOIN_PROBE, &spec, &g);
				gh_debug_inject_failure(e, -1, 0, GH_OK);
				if (afters[a] == 0 && st != GH_ERR_DEVICE_NOMEM)
					case_fail("status %s (%s), want %s at once", gh_status_name(st),
							  gh_last_error(e), gh_status_name(GH_ERR_DEVICE_NOMEM));
				else if (st != GH_OK && st != GH_ERR_DEVICE_NOMEM)
					case_fail("status %s (%s) after %ld steps", gh_status_name(st),
							  gh_last_error(e), afters[a]);
				if (st == GH_ERR_DEVICE_NOMEM && strstr(gh_last_error(e), "injected") == NULL)
					case_fail("message \"%s\" is not the injected failure's", gh_last_error(e));
				if (st != GH_OK && g != NULL)
					case_fail("a failed gh_join_aggregate left groups");
				if (st == GH_OK && g->input_rows != in->join.total)
					case_fail("%llu pairs after %ld steps, want %llu",
							  (unsigned long long) g->input_rows, afters[a],
							  (unsigned long long) in->join.total);
				gh_groups_free(g);
				if (gh_engine_device_bytes(e) != held)
				{
					case_fail("%zu bytes accounted after a failure (%ld steps), %zu before",
							  gh_engine_device_bytes(e), afters[a], held);
					break;
				}
			}
			/* the engine still works */
			g = NULL;
			if (check_ok(gh_join_aggregate(t, in->probe, in->join.m, GH_JOIN_PROBE, &spec, &g),
						 e, "gh_join_aggregate after the failures"))
				compare_groups(g, &in->want[GROUP_BOTH], spec.cols, spec.ncols);
			gh_groups_free(g);
		}
		gh_table_free(t);
		check_device_bytes(e, fresh, "at the end");
		gh_close(e);
		case_end();
	}
}

/* ---- the matrix ---- */

void
run_joinagg_cases(void)
{
	test_config cfgs[8];
	gh_engine  *engines[8];
	size_t		fresh_bytes[8];
	int			ncfg = test_configs(cfgs, 8);
	rng			r = {run.seed ^ UINT64_C(0x6a6f696e616767)};
	/* sizes per unit: quick runs a quarter, a GPU four times (its limits are larger) */
	size_t		u = run.quick ? 250 : run.backend == GH_BACKEND_CUDA ? 4000 : 1000;
	ja_input	inputs[5],
				small;
	int			ninputs = 5;

	ja_make_dist(&inputs[0], DIST_DUPS, 2 * u, 3 * u / 2, ROWS_DENSE, &r);
	ja_make_dist(&inputs[1], DIST_DUPS, 2 * u, 3 * u / 2, ROWS_PERMUTED, &r);
	ja_make_dist(&inputs[2], DIST_ZIPF, 2 * u, 2 * u, ROWS_SPARSE, &r);
	/* more build rows for one key than a unit holds at the CPU's 64 KiB (1365) */
	ja_make_hot(&inputs[3], run.quick ? 600 : 2500, 3 * u / 2, u, &r);
	/* pairs enough for device threads (GH_THREAD_MIN_ROWS) */
	ja_make_dist(&inputs[4], DIST_DUPS, 12 * u, 9 * u, ROWS_PERMUTED, &r);
	/* too few pairs for device threads: the interrupt's polls are the same every run */
	ja_make_dist(&small, DIST_DUPS, 2000, 1500, ROWS_DENSE, &r);

	invalid_argument_cases();
	open_engines(cfgs, ncfg, engines, fresh_bytes);
	for (int c = 0; c < ncfg; c++)
	{
		if (engines[c] == NULL)
			continue;
		for (int i = 0; i < ninputs; i++)
			run_ja_input(engines[c], &cfgs[c], &inputs[i]);
		run_empty_cases(engines[c], &cfgs[c], &inputs[0]);
	}
	close_engines(cfgs, ncfg, engines, fresh_bytes, "after join-aggregates", true);
	cancel_cases(&small);
	failure_cases(&inputs[4]);
	for (int i = 0; i < ninputs; i++)
		ja_free(&inputs[i]);
	ja_free(&small);
}
