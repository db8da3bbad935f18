/*-------------------------------------------------------------------------
 *
 * engine_joinagg.c
 *	  A join's pairs grouped and aggregated where they are made: the common
 *	  layer of gh_join_aggregate.
 *
 * INTERFACE ROUTINES
 *		gh_join_aggregate		join, then group the pairs, on every device
 *
 * The join is gh_join_begin's; then every device hands the backend its units'
 * pairs in chunks that fit its memory limit (probe_aggregate), and only
 * groups come back, merged group by group on the host.  The outer arrays are
 * permuted once into each partition's probe order before the devices start.
 * See cuda/README, "Aggregation over a join".
 *
 *-------------------------------------------------------------------------
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/* One gh_join_aggregate in progress. */
typedef struct joinagg_state
{
	gh_join    *j;
	const gh_joinagg *spec;		/* the caller's */
	gh_joinagg *part_spec;		/* per partition, the outer arrays in the
								 * partition's order (several partitions) */
	size_t	   *chunk;			/* per unit: pairs per backend call */
	size_t	   *first_piece;	/* per unit: its first piece's index */
	gh_groups **pieces;			/* one per chunk */
	size_t		npieces;
} joinagg_state;

static bool
col_is_inner(const gh_joinagg *spec, int c)
{
	return spec->col_inner != NULL && spec->col_inner[c] != 0;
}

/* GH_OK, or GH_ERR_INVALID recorded for what is wrong with the arguments. */
static gh_status
check_arguments(gh_table *t, const uint64_t *keys, size_t n,
				gh_join_method method, const gh_joinagg *spec)
{
	gh_engine  *e = t->e;
	bool		inner_used;

	if (spec == NULL || (keys == NULL && n > 0) ||
		(method != GH_JOIN_AUTO && method != GH_JOIN_PROBE && method != GH_JOIN_INTERSECT) ||
		spec->ncols < 0 || (spec->ncols > 0 && spec->cols == NULL))
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_join_aggregate");
	inner_used = spec->inner_keys != NULL;
	for (int c = 0; c < spec->ncols; c++)
	{
		const gh_aggcol *col = &spec->cols[c];
		bool		inner = col_is_inner(spec, c);

		if ((col->type != GH_INT64 && col->type != GH_FLOAT64) ||
			(spec->col_inner != NULL && spec->col_inner[c] > 1) ||
			(col->values == NULL && (inner ? spec->inner_rows : n) > 0))
			return gh_fail(e, GH_ERR_INVALID, "invalid aggregate column %d", c);
		inner_used |= inner;
	}
	/* inner arrays are read at every row number of the table */
	if (inner_used && t->n > 0 && t->max_row >= spec->inner_rows)
		return gh_fail(e, GH_ERR_INVALID,
					   "the table has row number %llu, the inner arrays %zu entries",
					   (unsigned long long) t->max_row, spec->inner_rows);
	return GH_OK;
}

/* dst[i] = src[idx[i]] for m elements of width 8 or 1; NULL on failure. */
static void *
permuted_copy(gh_engine *e, const void *src, size_t width, const uint64_t *idx,
			  size_t m)
{
	void	   *dst = gh_malloc(e, m * width);

	if (dst == NULL)
		return NULL;
	if (width == 8)
		for (size_t i = 0; i < m; i++)
			((uint64_t *) dst)[i] = ((const uint64_t *) src)[idx[i]];
	else
		for (size_t i = 0; i < m; i++)
			((uint8_t *) dst)[i] = ((const uint8_t *) src)[idx[i]];
	return dst;
}

/*
 * The spec of partition p: the caller's, with copies of the outer arrays
 * in the partition's probe-key order.  Outer columns of ps->cols hold only
 * copies (or NULL), so that joinagg_free frees exactly those.
 */
static gh_status
make_partition_spec(joinagg_state *s, uint32_t p, gh_joinagg *ps)
{
	gh_engine  *e = s->j->t->e;
	const gh_joinagg *spec = s->spec;
	const uint64_t *idx = s->j->part_idx[p];
	size_t		m = s->j->part_n[p];
	gh_aggcol  *pc;

	*ps = *spec;
	ps->outer_keys = NULL;
	ps->cols = pc = gh_calloc(e, spec->ncols > 0 ? spec->ncols : 1, sizeof(gh_aggcol));
	if (pc == NULL)
		return e->status;
	if (spec->outer_keys != NULL &&
		(ps->outer_keys = permuted_copy(e, spec->outer_keys, 8, idx, m)) == NULL)
		return e->status;
	for (int c = 0; c < spec->ncols; c++)
	{
		const gh_aggcol *col = &spec->cols[c];

		pc[c].type = col->type;
		pc[c].ops = col->ops;
		if (col_is_inner(spec, c))
		{
			pc[c].values = col->values;
			pc[c].nulls = col->nulls;
			continue;
		}
		if ((pc[c].values = permuted_copy(e, col->values, 8, idx, m)) == NULL)
			return e->status;
		if (col->nulls != NULL &&
			(pc[c].nulls = permuted_copy(e, col->nulls, 1, idx, m)) == NULL)
			return e->status;
	}
	return GH_OK;
}

/* Partition specs for the partitions that have pairs (several partitions). */
static gh_status
make_partition_specs(joinagg_state *s)
{
	gh_table   *t = s->j->t;
	gh_engine  *e = t->e;
	bool	   *has_pairs;
	gh_status	st = GH_OK;

	if (s->j->part_idx == NULL)
		return GH_OK;
	s->part_spec = gh_calloc(e, t->nparts, sizeof(gh_joinagg));
	has_pairs = gh_calloc(e, t->nparts, sizeof(bool));
	if (s->part_spec == NULL || has_pairs == NULL)
	{
		free(has_pairs);
		return e->status;
	}
	for (int u = 0; u < t->nunits; u++)
		if (s->j->unit_total[u] > 0)
			has_pairs[t->units[u].partition] = true;
	for (uint32_t p = 0; st == GH_OK && p < t->nparts; p++)
		if (has_pairs[p])
			st = make_partition_spec(s, p, &s->part_spec[p]);
	free(has_pairs);
	return st;
}

/* Pairs per backend call for unit u: the limit less what u holds anyway. */
static size_t
unit_chunk_pairs(joinagg_state *s, int u)
{
	gh_table   *t = s->j->t;
	gh_engine  *e = t->e;
	const gh_unit *unit = &t->units[u];
	size_t		limit = e->opt.memory_limit;
	size_t		fixed = 0;
	size_t		bpp = e->ops->joinagg_bytes_per_pair(s->spec, s->j->part_n[unit->partition],
													 &fixed);
	size_t		held = e->ops->build_bytes_per_row(t->kind) * unit->n + fixed;
	size_t		room = held < limit - limit / 4 ? limit - held : limit / 4;
	size_t		m = room / (bpp ? bpp : 1);

	return m > 0 ? m : 1;
}

/* Pairs per backend call for every unit, and where each unit's pieces go. */
static gh_status
plan_chunks(joinagg_state *s)
{
	gh_join    *j = s->j;
	gh_table   *t = j->t;
	gh_engine  *e = t->e;

	s->chunk = gh_calloc(e, t->nunits, sizeof(size_t));
	s->first_piece = gh_calloc(e, t->nunits, sizeof(size_t));
	if (s->chunk == NULL || s->first_piece == NULL)
		return e->status;
	s->npieces = 0;
	for (int u = 0; u < t->nunits; u++)
	{
		s->chunk[u] = unit_chunk_pairs(s, u);
		s->first_piece[u] = s->npieces;
		s->npieces += (size_t) ((j->unit_total[u] + s->chunk[u] - 1) / s->chunk[u]);
	}
	if (s->npieces > INT_MAX)
		return gh_fail(e, GH_ERR_HOST_NOMEM,
					   "%llu pairs need %zu pieces at a memory limit of %zu bytes",
					   (unsigned long long) j->total, s->npieces, e->opt.memory_limit);
	s->pieces = gh_calloc(e, s->npieces, sizeof(gh_groups *));
	return s->pieces ? GH_OK : e->status;
}

/* Device thread: aggregate the pairs of the device's units, chunk by chunk. */
static gh_status
aggregate_device_units(gh_engine *e, int dev, void *arg)
{
	joinagg_state *s = arg;
	gh_join    *j = s->j;
	gh_table   *t = j->t;

	for (int u = gh_next_unit_of(t, dev, -1); u < t->nunits; u = gh_next_unit_of(t, dev, u))
	{
		const gh_joinagg *spec = s->part_spec ? &s->part_spec[t->units[u].partition] : s->spec;
		uint64_t	total = j->unit_total[u];
		size_t		k = s->first_piece[u];

		if (total == 0)
			continue;
		GH_TRY_STATUS(gh_probe_open(j, u, NULL));
		for (uint64_t first = 0; first < total; first += s->chunk[u], k++)
		{
			size_t		m = total - first < s->chunk[u] ? (size_t) (total - first) : s->chunk[u];

			CHECK_INTERRUPT(e);
			if (gh_injected_failure(e, dev))
				return e->inject_status;
			GH_TRY_STATUS(e->ops->probe_aggregate(e, j->probes[u], first, m, spec,
												  &s->pieces[k]));
		}
		gh_probe_close(j, u);
	}
	return GH_OK;
}

/* The pieces as one result (the one piece itself, when there is one). */
static gh_status
merge_pieces(joinagg_state *s, gh_groups **out)
{
	gh_engine  *e = s->j->t->e;
	const gh_joinagg *spec = s->spec;

	if (s->npieces == 1)
	{
		*out = s->pieces[0];
		s->pieces[0] = NULL;
		return GH_OK;
	}
	if (s->npieces == 0)
		*out = gh_groups_alloc(0, spec->cols, spec->ncols);
	else
		*out = gh_groups_merge(e, s->pieces, (int) s->npieces, spec->cols, spec->ncols,
							   false);
	if (*out == NULL)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for the groups of a join");
	return GH_OK;
}

static void
joinagg_free(joinagg_state *s)
{
	if (s->part_spec)
		for (uint32_t p = 0; p < s->j->t->nparts; p++)
		{
			gh_joinagg *ps = &s->part_spec[p];

			if (ps->cols == NULL)
				continue;
			for (int c = 0; c < ps->ncols; c++)
				if (!col_is_inner(ps, c))
				{
					free((void *) ps->cols[c].values);
					free((void *) ps->cols[c].nulls);
				}
			free((void *) ps->cols);
			free((void *) ps->outer_keys);
		}
	if (s->pieces)
		for (size_t k = 0; k < s->npieces; k++)
			gh_groups_free(s->pieces[k]);
	free(s->pieces);
	free(s->part_spec);
	free(s->chunk);
	free(s->first_piece);
	gh_join_free(s->j);
}

gh_status
gh_join_aggregate(gh_table *t, const uint64_t *keys, size_t n,
				  gh_join_method method, const gh_joinagg *spec, gh_groups **out)
{
	gh_engine  *e;
	joinagg_state s;
	gh_status	st;

	if (t == NULL)
		return GH_ERR_INVALID;
	e = t->e;
	if (out == NULL)
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_join_aggregate");
	*out = NULL;
	GH_TRY_STATUS(check_arguments(t, keys, n, method, spec));

	memset(&s, 0, sizeof(s));
	s.spec = spec;
	st = gh_join_begin(t, keys, n, method, &s.j);
	if (st != GH_OK)
		return st;
	st = plan_chunks(&s);
	if (st == GH_OK)
		st = make_partition_specs(&s);
	if (st == GH_OK && gh_interrupted(e))
		st = GH_ERR_CANCELLED;
	if (st == GH_OK)
	{
		uint64_t	rows = s.j->total > n ? s.j->total : n;

		st = gh_for_devices(e, t->devmask, (size_t) (rows > t->n ? rows : t->n),
							aggregate_device_units, &s);
	}
	if (st == GH_OK)
		st = merge_pieces(&s, out);
	if (st == GH_OK)
	{
		(*out)->partitions = gh_table_partitions(t);
		(*out)->input_rows = s.j->total;
		(*out)->ndevices = gh_table_devices(t, (*out)->devices, GH_MAX_DEVICES);
	}
	joinagg_free(&s);
	return st;
}
