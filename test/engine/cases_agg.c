/*-------------------------------------------------------------------------
 *
 * cases_agg.c
 *	  Engine unit tests of gh_aggregate against the sort-based oracle.
 *
 * Every key distribution and size of the matrix runs under every
 * configuration of test_configs(), with five value columns that between
 * them reach every result field:
 *
 *	c0	int64 sum/min/max, small values, random NULLs and whole groups NULL
 *	c1	float8 sum/min/max, random NULLs, all-NULL groups, -0 and +0
 *	c2	int64 sum/min/max near +-2^63: group sums overflow int64 (exact
 *		128-bit sums required), no NULL array
 *	c3	int64 with no operation: the non-NULL count only
 *	c4	float8 min/max (no sum) with NaN, infinities, -0 and +0
 *
 * plus a case with no value column at all (count(*) only).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"

#define NCOLS 5

typedef struct agg_dataset
{
	dist_kind	kind;
	size_t		n;
	bool		all_configs;
	size_t		domain;			/* DIST_DUPS: this many distinct keys (0: n / 8) */
	double		estimate;		/* gh_debug_group_estimate (0: none) */
} agg_dataset;

static const agg_dataset cpu_agg_datasets[] = {
	{DIST_UNIQUE, 0, true},
	{DIST_UNIQUE, 1, true},
	{DIST_UNIQUE, 17, true},
	{DIST_UNIQUE, 1000, true},
	{DIST_UNIQUE, 65537, true},
	{DIST_UNIQUE, ((size_t) 1 << 20) + 3, false},
	{DIST_DUPS, 1000, true},
	{DIST_DUPS, 65537, true},
	{DIST_DUPS, ((size_t) 1 << 18) + 3, false},
	{DIST_ZIPF, 65537, true},
	{DIST_ZIPF, ((size_t) 1 << 20) + 3, false},
	{DIST_EQUAL, 1, true},
	{DIST_EQUAL, 1000, true},
	{DIST_EQUAL, 1000000, false},
	{DIST_EQUAL_MAX, 17, true},
	{DIST_DUPS, 65537, true, 3},
};

static const agg_dataset cuda_agg_datasets[] = {
	{DIST_UNIQUE, 0, true},
	{DIST_UNIQUE, 1, true},
	{DIST_UNIQUE, 17, true},
	{DIST_UNIQUE, 65537, true},
	{DIST_UNIQUE, ((size_t) 1 << 22) + 3, true},
	{DIST_UNIQUE, (size_t) 1 << 24, false},
	{DIST_DUPS, 65537, true},
	{DIST_DUPS, ((size_t) 1 << 22) + 3, false},
	{DIST_ZIPF, ((size_t) 1 << 22) + 3, false},
	{DIST_EQUAL, 1000, true},
	{DIST_EQUAL, 1000000, false},
	{DIST_EQUAL_MAX, 17, true},
	/* few groups: tables in shared memory; then past what they hold */
	{DIST_DUPS, ((size_t) 1 << 20) + 3, true, 3},
	{DIST_DUPS, ((size_t) 1 << 20) + 3, false, 1000},
	{DIST_DUPS, ((size_t) 1 << 22) + 3, false, 4096},
	{DIST_DUPS, ((size_t) 1 << 20) + 3, false, 60000},
	/* groups underestimated: the table of groups overflows, all done again */
	{DIST_DUPS, ((size_t) 1 << 20) + 3, true, 3000, 0.001},
	{DIST_DUPS, ((size_t) 1 << 20) + 3, false, 100000, 0.01},
	{DIST_ZIPF, ((size_t) 1 << 20) + 3, false, 0, 0.001},
};

static const agg_dataset quick_agg_datasets[] = {
	{DIST_UNIQUE, 0, true},
	{DIST_UNIQUE, 1, true},
	{DIST_UNIQUE, 17, true},
	{DIST_UNIQUE, 1000, true},
	{DIST_DUPS, 1000, true},
	{DIST_ZIPF, 1000, true},
	{DIST_EQUAL, 1000, true},
	{DIST_EQUAL_MAX, 17, true},
};

/* A property of a key shared by all rows of its group (not the engine's hash). */
static uint64_t
group_bits(uint64_t key)
{
	key ^= key >> 29;
	key *= UINT64_C(0xbf58476d1ce4e5b9);
	key ^= key >> 32;
	return key;
}

/* Value columns for keys; arrays stay owned by the caller (free_columns). */
static void
make_columns(const uint64_t *keys, size_t n, rng *r, gh_aggcol *cols)
{
	int64_t    *v0 = xmalloc((n + 1) * sizeof(int64_t));
	double	   *v1 = xmalloc((n + 1) * sizeof(double));
	int64_t    *v2 = xmalloc((n + 1) * sizeof(int64_t));
	int64_t    *v3 = xmalloc((n + 1) * sizeof(int64_t));
	double	   *v4 = xmalloc((n + 1) * sizeof(double));
	uint8_t    *n0 = xmalloc(n + 1);
	uint8_t    *n1 = xmalloc(n + 1);
	uint8_t    *n3 = xmalloc(n + 1);
	uint8_t    *n4 = xmalloc(n + 1);

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	gb = group_bits(keys[i]);
		uint64_t	x = rng_next(r);

		v0[i] = (int64_t) rng_below(r, 2000001) - 1000000;
		n0[i] = gb % 7 == 0 || x % 10 == 0;

		switch (x % 16)
		{
			case 0:
				v1[i] = -0.0;
				break;
			case 1:
				v1[i] = 0.0;
				break;
			default:
				v1[i] = (rng_unit(r) - 0.5) * 2000.0;
				break;
		}
		n1[i] = gb % 11 == 1 || (x >> 8) % 5 == 0;

		/* most of a group's values share a sign, so the sums overflow */
		if ((x >> 16) % 8 == 0)
			v2[i] = (int64_t) rng_below(r, 2001) - 1000;
		else if ((gb >> 8) & 1)
			v2[i] = INT64_MAX - (int64_t) rng_below(r, 1000);
		else
			v2[i] = INT64_MIN + (int64_t) rng_below(r, 1000);

		v3[i] = (int64_t) rng_next(r);
		n3[i] = (x >> 24) % 2;

		v4[i] = gen_float_with_specials(r, x >> 32, 32, 1e6);
		n4[i] = gb % 13 == 2 || (x >> 40) % 6 == 0;
	}
	cols[0] = (gh_aggcol) {GH_INT64, GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX, v0, n0};
	cols[1] = (gh_aggcol) {GH_FLOAT64, GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX, v1, n1};
	cols[2] = (gh_aggcol) {GH_INT64, GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX, v2, NULL};
	cols[3] = (gh_aggcol) {GH_INT64, 0, v3, n3};
	cols[4] = (gh_aggcol) {GH_FLOAT64, GH_AGG_MIN | GH_AGG_MAX, v4, n4};
}

static void
free_columns(gh_aggcol *cols)
{
	for (int c = 0; c < NCOLS; c++)
	{
		free((void *) cols[c].values);
		free((void *) cols[c].nulls);
	}
}

/* Does some int64 group sum of column c fall outside int64?  (to name the case) */
static bool
sums_overflow(const agg_oracle *a, int c)
{
	for (size_t g = 0; g < a->ngroups; g++)
	{
		__int128	s = a->cols[g * a->ncols + c].isum;

		if (s > INT64_MAX || s < INT64_MIN)
			return true;
	}
	return false;
}

static void
check_aggregate(gh_engine *e, const test_config *cfg, const char *label,
				const uint64_t *keys, size_t n, const gh_aggcol *cols, int ncols,
				const agg_oracle *want)
{
	char		cname[128];
	gh_groups  *g = NULL;

	config_name(cfg, cname, sizeof(cname));
	case_begin("aggregate %d column%s, %s, %s", ncols, ncols == 1 ? "" : "s", label, cname);
	if (check_ok(gh_aggregate(e, keys, n, cols, ncols, &g), e, "gh_aggregate"))
	{
		if (g == NULL)
			case_fail("gh_aggregate returned GH_OK and no groups");
		else
		{
			compare_groups(g, want, cols, ncols);
			if (g->partitions < 1)
				case_fail("%d partitions reported", g->partitions);
		}
	}
	case_end();
	gh_groups_free(g);
}

/*
 * gh_groups_combine: the rows aggregated in three pieces of random sizes
 * (one may be empty), the pieces' groups combined, give the whole's groups
 * (as a star split across GPUs combines its parts', star_split.c).
 */
static void
check_combine(gh_engine *e, const test_config *cfg, const char *label,
			  const uint64_t *keys, size_t n, const gh_aggcol *cols,
			  const agg_oracle *want, rng *r)
{
	char		cname[128];
	size_t		cut[4] = {0, rng_below(r, n + 1), 0, n};
	gh_groups  *pieces[3] = {NULL, NULL, NULL};
	gh_groups  *g = NULL;
	bool		ok = true;

	cut[2] = cut[1] + rng_below(r, n - cut[1] + 1);
	config_name(cfg, cname, sizeof(cname));
	case_begin("groups of three pieces of the rows combined, %s, %s", label, cname);
	for (int p = 0; p < 3 && ok; p++)
	{
		gh_aggcol	part[NCOLS];

		for (int c = 0; c < NCOLS; c++)
		{
			part[c] = cols[c];
			part[c].values = (const char *) cols[c].values + 8 * cut[p];
			if (cols[c].nulls != NULL)
				part[c].nulls = cols[c].nulls + cut[p];
		}
		ok = check_ok(gh_aggregate(e, keys + cut[p], cut[p + 1] - cut[p], part, NCOLS,
								   &pieces[p]), e, "gh_aggregate");
	}
	if (ok && check_ok(gh_groups_combine(e, pieces, 3, &g), e, "gh_groups_combine"))
	{
		compare_groups(g, want, cols, NCOLS);
		if (g->input_rows != pieces[0]->input_rows + pieces[1]->input_rows +
			pieces[2]->input_rows)
			case_fail("input_rows %llu is not the pieces' sum", (unsigned long long) g->input_rows);
	}
	case_end();
	gh_groups_free(g);
	for (int p = 0; p < 3; p++)
		gh_groups_free(pieces[p]);
}

static void
run_agg_dataset(const agg_dataset *ds, const test_config *cfgs, int ncfg,
				gh_engine **engines, rng *r)
{
	dist		d;
	uint64_t   *keys;
	gh_aggcol	cols[NCOLS];
	agg_oracle	want,
				want0;
	char		label[160];
	bool		split_done = false;

	dist_init(&d, ds->kind, ds->n, r);
	if (ds->domain != 0)
		d.domain = ds->domain;
	keys = gen_build_keys(&d, ds->n, r);
	make_columns(keys, ds->n, r, cols);
	oracle_aggregate(&want, keys, ds->n, cols, NCOLS);
	oracle_aggregate(&want0, keys, ds->n, NULL, 0);
	snprintf(label, sizeof(label), "%s, n=%zu, %zu groups%s, NULLs and all-NULL groups%s",
			 dist_name(ds->kind), ds->n, want.ngroups,
			 ds->estimate > 0 ? " (estimated too few)" : "",
			 sums_overflow(&want, 2) ? ", int64 sums overflowing" : "");
	for (int c = 0; c < ncfg; c++)
	{
		bool		split = cfgs[c].memory_limit != 0 && cfgs[c].memory_limit < ((size_t) 1 << 20);

		if (engines[c] == NULL)
			continue;
		if (!ds->all_configs && c != 0 && (!split || split_done))
			continue;
		if (split)
			split_done = true;
		gh_debug_group_estimate(engines[c], ds->estimate);
		check_aggregate(engines[c], &cfgs[c], label, keys, ds->n, cols, NCOLS, &want);
		check_aggregate(engines[c], &cfgs[c], label, keys, ds->n, NULL, 0, &want0);
		if (c == 0)
			check_combine(engines[c], &cfgs[c], label, keys, ds->n, cols, &want, r);
		if (c == 0 && ds->all_configs && run.backend == GH_BACKEND_CUDA)
		{
			char		clabel[192];
			agg_oracle	want2;

			/*
			 * The rows clustered on the table's hash first, whatever their
			 * number: their positions carried through the sort, or the one
			 * column without NULLs (int64 sums overflowing) itself.
			 */
			snprintf(clabel, sizeof(clabel), "%s, clustered", label);
			gh_debug_cluster(engines[c], true);
			check_aggregate(engines[c], &cfgs[c], clabel, keys, ds->n, cols, NCOLS, &want);
			oracle_aggregate(&want2, keys, ds->n, &cols[2], 1);
			snprintf(clabel, sizeof(clabel), "%s, clustered, one column carried", label);
			check_aggregate(engines[c], &cfgs[c], clabel, keys, ds->n, &cols[2], 1, &want2);
			agg_oracle_free(&want2);
			gh_debug_cluster(engines[c], false);
		}
		gh_debug_group_estimate(engines[c], 0);
	}
	agg_oracle_free(&want);
	agg_oracle_free(&want0);
	free_columns(cols);
	dist_free(&d);
	free(keys);
}

/*
 * gh_pin_host: arrays pinned for the copy aggregate as when they are not;
 * unpinning undoes the pin (a second pin of the same range succeeds).
 */
static void
pin_cases(gh_engine *e, const test_config *cfg, rng *r)
{
	size_t		n = 100003;
	size_t		bytes = (n * sizeof(uint64_t) + 4095) & ~(size_t) 4095;
	uint64_t   *keys = aligned_alloc(4096, bytes);
	uint64_t   *gen;
	bool		cuda = run.backend == GH_BACKEND_CUDA;
	bool		pinned;
	dist		d;
	gh_aggcol	cols[NCOLS];
	agg_oracle	want;

	if (keys == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	case_begin("gh_pin_host pins nothing for a NULL engine, a NULL base or 0 bytes (false)");
	if (gh_pin_host(NULL, keys, bytes) || gh_pin_host(e, NULL, bytes) || gh_pin_host(e, keys, 0))
		case_fail("a pin of nothing returned true");
	gh_unpin_host(NULL, keys);
	gh_unpin_host(e, NULL);
	case_end();

	dist_init(&d, DIST_DUPS, n, r);
	gen = gen_build_keys(&d, n, r);
	memcpy(keys, gen, n * sizeof(uint64_t));
	make_columns(keys, n, r, cols);
	oracle_aggregate(&want, keys, n, cols, NCOLS);

	case_begin("gh_pin_host on the %s backend: %s", run.backend_name,
			   cuda ? "page-aligned keys pinned" : "false, nothing to pin");
	pinned = gh_pin_host(e, keys, bytes);
	if (pinned != cuda)
		case_fail("gh_pin_host returned %s", pinned ? "true" : "false");
	case_end();
	check_aggregate(e, cfg, "keys pinned", keys, n, cols, NCOLS, &want);
	if (pinned)
		gh_unpin_host(e, keys);
	if (cuda)
	{
		case_begin("after gh_unpin_host the same keys can be pinned again");
		if (!gh_pin_host(e, keys, bytes))
			case_fail("the second pin failed: the first was not undone");
		else
			gh_unpin_host(e, keys);
		case_end();
	}
	check_aggregate(e, cfg, "keys unpinned again", keys, n, cols, NCOLS, &want);
	agg_oracle_free(&want);
	free_columns(cols);
	free(gen);
	free(keys);
	dist_free(&d);
}

/* ---- device arrays ---- */

/*
 * Append src's bytes (width bytes a row, n rows) to a in pieces of random
 * sizes, empty ones included; where a piece of src is all zero bytes it is
 * appended as zeros (src NULL), as a pool appends a batch without NULLs.
 */
static bool
append_in_pieces(gh_engine *e, gh_darray *a, const void *src, size_t n, size_t width, rng *r)
{
	size_t		at = 0;

	while (at < n)
	{
		size_t		len = rng_below(r, 4) == 0 ? 0 : 1 + rng_below(r, n / 5 + 1);
		const char *piece = (const char *) src + at * width;
		bool		zeros = true;

		if (len > n - at)
			len = n - at;
		for (size_t i = 0; i < len * width && zeros; i++)
			zeros = piece[i] == 0;
		if (!check_ok(gh_darray_append(a, zeros ? NULL : piece, len * width), e,
					  "gh_darray_append"))
			return false;
		at += len;
	}
	if (gh_darray_bytes(a) != n * width)
	{
		case_fail("%zu bytes appended, gh_darray_bytes says %zu", n * width, gh_darray_bytes(a));
		return false;
	}
	return true;
}

/*
 * The keys and columns in device arrays, appended in pieces; aggregated
 * from them as from host arrays.  keys_where and cols_where: where the
 * keys' array and the columns' must be at the end (1 on the device, 0 in
 * host memory, -1 either).
 */
static void
check_darray_aggregate(gh_engine *e, const test_config *cfg, const char *label,
					   const uint64_t *keys, size_t n, const gh_aggcol *cols,
					   const agg_oracle *want, int keys_where, int cols_where, bool want_split,
					   rng *r)
{
	gh_darray  *a[1 + 2 * NCOLS] = {0};
	gh_aggcol	dc[NCOLS];
	gh_groups  *g = NULL;
	bool		ok;
	char		cname[128];

	config_name(cfg, cname, sizeof(cname));
	case_begin("aggregate from device arrays appended in pieces, %s, %s", label, cname);
	ok = check_ok(gh_darray_create(e, true, &a[0]), e, "gh_darray_create") &&
		append_in_pieces(e, a[0], keys, n, 8, r);
	for (int c = 0; c < NCOLS && ok; c++)
	{
		dc[c] = cols[c];
		ok = check_ok(gh_darray_create(e, true, &a[1 + 2 * c]), e, "gh_darray_create") &&
			append_in_pieces(e, a[1 + 2 * c], cols[c].values, n, 8, r);
		if (ok && cols[c].nulls)
			ok = check_ok(gh_darray_create(e, true, &a[2 + 2 * c]), e, "gh_darray_create") &&
				append_in_pieces(e, a[2 + 2 * c], cols[c].nulls, n, 1, r);
	}
	for (int i = 0; i < 1 + 2 * NCOLS && ok; i++)
	{
		int			want_where = i == 0 ? keys_where : cols_where;

		if (a[i] && want_where >= 0 && gh_darray_on_device(a[i]) != (want_where == 1))
		{
			case_fail("array %d is %s", i, gh_darray_on_device(a[i]) ? "on the device" : "in host memory");
			ok = false;
		}
	}
	for (int c = 0; c < NCOLS && ok; c++)
	{
		dc[c].values = gh_darray_data(a[1 + 2 * c]);
		dc[c].nulls = cols[c].nulls ? gh_darray_data(a[2 + 2 * c]) : NULL;
	}
	if (ok && check_ok(gh_aggregate(e, gh_darray_data(a[0]), n, dc, NCOLS, &g), e, "gh_aggregate"))
	{
		compare_groups(g, want, cols, NCOLS);
		if (want_split && g->partitions < 2)
			case_fail("%d partition: the inputs were not split on the host", g->partitions);
	}
	case_end();
	gh_groups_free(g);
	for (int i = 0; i < 1 + 2 * NCOLS; i++)
		gh_darray_free(a[i]);
}

/*
 * gh_darray: invalid calls; placement (one device, several, host asked
 * for, an append past the budget moving to host memory); aggregation from
 * device arrays, also when it splits them on the host; pins of host arrays;
 * every byte given back.
 */
static void
darray_cases(const test_config *cfgs, int ncfg, gh_engine **engines, rng *r)
{
	/* over 1 MiB of keys: arrays grow, and move to host memory with rows in them */
	size_t		n = 150001;
	dist		d;
	uint64_t   *keys;
	gh_aggcol	cols[NCOLS];
	agg_oracle	want;
	gh_darray  *a = NULL;
	gh_engine  *e = engines[0];
	test_config small = {1, (size_t) 1 << 20, 0};
	gh_engine  *se;

	case_begin("gh_darray: a NULL engine or out is refused, so is an append to no array");
	if (gh_darray_create(NULL, true, &a) != GH_ERR_INVALID || gh_darray_create(e, true, NULL) != GH_ERR_INVALID ||
		gh_darray_append(NULL, keys = NULL, 8) != GH_ERR_INVALID)
		case_fail("an invalid call was accepted");
	if (gh_darray_data(NULL) != NULL || gh_darray_bytes(NULL) != 0 || gh_darray_on_device(NULL) ||
		gh_darray_pin(NULL))
		case_fail("no array has data");
	gh_darray_free(NULL);
	gh_darray_unpin(NULL);
	case_end();

	dist_init(&d, DIST_DUPS, n, r);
	keys = gen_build_keys(&d, n, r);
	make_columns(keys, n, r, cols);
	oracle_aggregate(&want, keys, n, cols, NCOLS);
	for (int c = 0; c < ncfg; c++)
	{
		if (engines[c] == NULL)
			continue;
		/* several devices split inputs on the host: arrays stay there */
		int			where = cfgs[c].memory_limit != 0 ? -1 : cfgs[c].ndevices == 1;

		check_darray_aggregate(engines[c], &cfgs[c], "placed by the engine", keys, n, cols, &want,
							   where, where, false, r);
	}

	case_begin("gh_darray: an array asked for in host memory is there, and pins on CUDA only");
	if (check_ok(gh_darray_create(e, false, &a), e, "gh_darray_create") &&
		check_ok(gh_darray_append(a, keys, n * 8), e, "gh_darray_append"))
	{
		bool		pinned = gh_darray_pin(a);

		if (gh_darray_on_device(a))
			case_fail("the array is on the device");
		if (pinned != (run.backend == GH_BACKEND_CUDA))
			case_fail("gh_darray_pin returned %s", pinned ? "true" : "false");
		if (memcmp(gh_darray_data(a), keys, n * 8) != 0)
			case_fail("the array's bytes differ from those appended");
		/* an append unpins first (the mapping may move) */
		if (!check_ok(gh_darray_append(a, NULL, 8), e, "gh_darray_append") ||
			((const uint64_t *) gh_darray_data(a))[n] != 0)
			case_fail("zeros appended are not zero");
	}
	gh_darray_free(a);
	a = NULL;
	case_end();

	case_begin("gh_darray_to_host and gh_darray_truncate: the rows move to host memory and stay, "
			   "an append's rows are cut off, later appends go on in host memory");
	if (check_ok(gh_darray_create(e, true, &a), e, "gh_darray_create") &&
		check_ok(gh_darray_append(a, keys, n * 8), e, "gh_darray_append"))
	{
		bool		was_on_device = gh_darray_on_device(a);

		if (!check_ok(gh_darray_to_host(a), e, "gh_darray_to_host"))
			;
		else if (gh_darray_on_device(a) || gh_darray_bytes(a) != n * 8 ||
				 memcmp(gh_darray_data(a), keys, n * 8) != 0)
			case_fail("after gh_darray_to_host the array is %s with %zu bytes%s",
					  gh_darray_on_device(a) ? "on the device" : "in host memory",
					  gh_darray_bytes(a), " (or they differ from those appended)");
		else if (!check_ok(gh_darray_append(a, keys, 8 * 100), e, "gh_darray_append"))
			;
		else
		{
			gh_darray_truncate(a, (n + 10) * 8);
			gh_darray_truncate(a, (n + 20) * 8);	/* never longer */
			if (gh_darray_bytes(a) != (n + 10) * 8 || gh_darray_on_device(a) ||
				memcmp((const uint64_t *) gh_darray_data(a) + n, keys, 10 * 8) != 0)
				case_fail("truncated to %zu bytes, not %zu, or moved", gh_darray_bytes(a),
						  (n + 10) * 8);
			if (!check_ok(gh_darray_append(a, keys + 50, 8), e, "gh_darray_append") ||
				((const uint64_t *) gh_darray_data(a))[n + 10] != keys[50])
				case_fail("an append after the truncation did not land after it");
		}
		if (!was_on_device && run.backend == GH_BACKEND_CUDA && cfgs[0].ndevices == 1 &&
			cfgs[0].memory_limit == 0)
			case_fail("the array was not on the device to begin with");
	}
	gh_darray_free(a);
	a = NULL;
	if (gh_darray_to_host(NULL) != GH_ERR_INVALID)
		case_fail("gh_darray_to_host(NULL) was accepted");
	gh_darray_truncate(NULL, 0);
	case_end();

	/*
	 * A budget of 1 MiB: arrays start on the device; the keys' (1.2 MB)
	 * moves to host memory as it grows, rows in it, and so do the values'.
	 */
	gh_debug_darray_budget(e, (size_t) 1 << 20);
	check_darray_aggregate(e, &cfgs[0], "past the device budget", keys, n, cols, &want, 0, -1,
						   false, r);
	gh_debug_darray_budget(e, 0);

	/* a 1 MiB limit splits the rows on the host, which reads the device arrays back */
	se = open_engine(&small);
	if (se != NULL)
	{
		size_t		fresh = gh_engine_device_bytes(se);

		gh_debug_darray_budget(se, (size_t) 1 << 40);
		check_darray_aggregate(se, &small, "split on the host", keys, n, cols, &want, 1, 1, true, r);
		case_begin("gh_darray: every byte of device memory back once the arrays are freed");
		check_device_bytes(se, fresh, "after freeing its device arrays");
		case_end();
		/* left open for gh_close to free */
		if (gh_darray_create(se, true, &a) == GH_OK)
			(void) gh_darray_append(a, keys, n * 8);
		gh_close(se);
	}
	agg_oracle_free(&want);
	free_columns(cols);
	dist_free(&d);
	free(keys);
}

/*
 * Rows past the memory limit planned for a group a row: where their groups,
 * estimated, fit beside them, one partition (keys in host memory, and in a
 * device array that the device estimates in place); where every row is a
 * group, hash-range partitions still.  Results as the oracle's either way.
 */
static void
estimate_cases(rng *r)
{
	size_t		n = 200000;
	test_config cfg = {1, (size_t) 24 << 20, 0};
	gh_engine  *e = open_engine(&cfg);
	uint64_t   *keys = xmalloc(n * sizeof(uint64_t));

	for (int many = 0; e != NULL && many < 2; many++)
	{
		gh_aggcol	cols[NCOLS];
		agg_oracle	want;

		for (size_t i = 0; i < n; i++)
			keys[i] = many ? i * UINT64_C(0x9e3779b97f4a7c15) : rng_below(r, 1000);
		make_columns(keys, n, r, cols);
		oracle_aggregate(&want, keys, n, cols, NCOLS);
		for (int in_array = 0; in_array <= !many; in_array++)
		{
			gh_darray  *a = NULL;
			const uint64_t *k = keys;
			gh_groups  *g = NULL;

			case_begin("aggregate of %zu rows, %zu groups, past a 24 MiB limit planned for a group a row, keys in %s: %s",
					   n, want.ngroups, in_array ? "a device array" : "host memory",
					   many ? "hash-range partitions" : "one partition");
			if (in_array)
			{
				if (check_ok(gh_darray_create(e, true, &a), e, "gh_darray_create") &&
					check_ok(gh_darray_append(a, keys, n * 8), e, "gh_darray_append"))
					k = gh_darray_data(a);
				else
					k = NULL;
			}
			if (k != NULL &&
				check_ok(gh_aggregate(e, k, n, cols, NCOLS, &g), e, "gh_aggregate"))
			{
				compare_groups(g, &want, cols, NCOLS);
				if (!many && g->partitions != 1)
					case_fail("%d partitions for %zu groups", g->partitions, want.ngroups);
				if (many && g->partitions < 2)
					case_fail("one partition for a group a row past the limit");
			}
			case_end();
			gh_groups_free(g);
			gh_darray_free(a);
		}
		agg_oracle_free(&want);
		free_columns(cols);
	}
	free(keys);
	if (e != NULL)
		gh_close(e);
}

void
run_agg_cases(void)
{
	test_config cfgs[8];
	gh_engine  *engines[8];
	size_t		fresh_bytes[8];
	int			ncfg = test_configs(cfgs, 8);
	rng			r = {run.seed ^ UINT64_C(0x616767)};
	const agg_dataset *ds;
	size_t		nds;

	if (run.quick)
	{
		ds = quick_agg_datasets;
		nds = sizeof(quick_agg_datasets) / sizeof(quick_agg_datasets[0]);
	}
	else if (run.backend == GH_BACKEND_CUDA)
	{
		ds = cuda_agg_datasets;
		nds = sizeof(cuda_agg_datasets) / sizeof(cuda_agg_datasets[0]);
	}
	else
	{
		ds = cpu_agg_datasets;
		nds = sizeof(cpu_agg_datasets) / sizeof(cpu_agg_datasets[0]);
	}
	open_engines(cfgs, ncfg, engines, fresh_bytes);
	for (size_t i = 0; i < nds; i++)
		run_agg_dataset(&ds[i], cfgs, ncfg, engines, &r);
	if (engines[0] != NULL)
	{
		pin_cases(engines[0], &cfgs[0], &r);
		darray_cases(cfgs, ncfg, engines, &r);
	}
	estimate_cases(&r);
	close_engines(cfgs, ncfg, engines, fresh_bytes, "after aggregating", false);
}
