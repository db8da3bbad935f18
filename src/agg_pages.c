/*-------------------------------------------------------------------------
 *
 * agg_pages.c
 *	  A GpuHashAgg whose input is read from heap pages (page_scan.h), taking
 *	  the rows in runs straight from the page reader's columns: when every
 *	  grouping column, aggregate argument and (fused join) join key read
 *	  from that input is a column of the table, no expression is evaluated
 *	  and no slot is filled per row.  What it stores per row is what
 *	  gha_collect_row and the fused join's reading store.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/primnodes.h"

#include "agg_state.h"
#include "gpuhash.h"
#include "keys.h"
#include "page_ops.h"
#include "page_scan.h"

/*
 * The page reader's column holding scan-tuple Var expr of input side, or -1;
 * with mod NULL, only a column the scan outputs as it is.
 */
static int
page_column(GpuHashAggState *s, GhPageScan *ps, Expr *expr, int side, GhPageMod *mod)
{
	Var		   *var = (Var *) expr;
	GhPageMod	none;
	int			col;
	int			i;

	if (expr == NULL || !IsA(expr, Var) || var->varno != INDEX_VAR)
		return -1;
	i = var->varattno - 1;
	if (i < 0 || i >= s->map.ncols || s->map.sides[i] != side || s->map.attnos[i] <= 0)
		return -1;
	col = gpuhash_page_scan_column(ps, s->map.attnos[i], mod ? mod : &none);
	if (mod == NULL)
		mod = &none;
	/* the engine takes values, not pointers into pages */
	return (mod == &none && none.by != 0) || mod->varlena ? -1 : col;
}

/*
 * What the node takes from input side's page columns (0 or 1 of a fused
 * join, -1 the only input): only the grouping columns, aggregates and join
 * keys of that side, each with the page column it reads.
 */
typedef struct PagePlan
{
	int			nkeys;
	int		   *key;			/* grouping column number */
	int		   *key_col;
	GhPageMod  *key_mod;
	int			naggs;
	int		   *agg;			/* aggregate number */
	int		   *agg_col;		/* -1: count(*), no argument */
	int		   *jkey_col;		/* s->njkeys entries (fused) */
} PagePlan;

/* Plan the columns: false if something is not a plain column. */
static bool
plan_columns(GpuHashAggState *s, GhPageScan *ps, int side, PagePlan *pp)
{
	int			input = Max(side, 0);
	ListCell   *lc;
	int			i = 0;

	if (s->mode == GHA_MODE_FINAL || !gpuhash_page_scan_plain(ps) ||
		(s->dict != NULL && (side < 0 || s->dict_side == side)))
		return false;
	pp->key = palloc(sizeof(int) * Max(s->nkeys, 1));
	pp->key_col = palloc(sizeof(int) * Max(s->nkeys, 1));
	pp->key_mod = palloc0(sizeof(GhPageMod) * Max(s->nkeys, 1));
	pp->agg = palloc(sizeof(int) * Max(s->naggs, 1));
	pp->agg_col = palloc(sizeof(int) * Max(s->naggs, 1));
	pp->jkey_col = palloc(sizeof(int) * Max(s->njkeys, 1));
	pp->nkeys = pp->naggs = 0;
	foreach(lc, s->key_states)
	{
		int			k = pp->nkeys;

		if (side < 0 || s->key_side[i] == side)
		{
			if (s->key_mode[i] == GHA_KEY_DICT ||
				(pp->key_col[k] = page_column(s, ps, ((ExprState *) lfirst(lc))->expr, input,
											  &pp->key_mod[k])) < 0)
				return false;
			pp->key[pp->nkeys++] = i;
		}
		i++;
	}
	for (int a = 0; a < s->naggs; a++)
	{
		int			n = pp->naggs;

		if (side >= 0 && s->agg_side[a] != side)
			continue;
		if (s->agg_cpu[a] >= 0 || s->numcols[a] != NULL || s->filters[a] != NULL ||
			s->agg_col2[a] >= 0)
			return false;
		if (s->agg_col[a] < 0)
			continue;			/* count(*): no engine column */
		if (gha_column_shared(s, a))
			continue;			/* an earlier aggregate fills its column */
		pp->agg_col[n] = -1;
		if (s->ops[a] != GHA_COUNT_STAR &&
			(pp->agg_col[n] = page_column(s, ps, s->args[a]->expr, input, NULL)) < 0)
			return false;
		pp->agg[pp->naggs++] = a;
	}
	for (int k = 0; side >= 0 && k < s->njkeys; k++)
		if ((pp->jkey_col[k] = page_column(s, ps, s->jkey[side][k]->expr, side, NULL)) < 0)
			return false;
	return true;
}

/* Bytes of a grouping key type's packed value (gpuhash_pack_key), 0 if not an integer. */
static int
key_width(Oid type)
{
	if (type == FLOAT4OID || type == FLOAT8OID)
		return 0;
	return (gpuhash_key_bits(type) + 7) / 8;
}

/* A value's conversion to the engine's int64 (gha_store_agg_value), or -1 if not an integer. */
static int
value_conv(Oid type)
{
	if (type == FLOAT4OID || type == FLOAT8OID)
		return -1;
	return type == OIDOID ? GH_PAGEVAL_UNSIGNED32 : GH_PAGEVAL_SIGNED;
}

/*
 * The engine's encoding of the rows of input side (as gha_collect_pages)
 * from the page columns, as the loop below makes them (gha_key_bits,
 * gha_fused_null_bits, gha_store_agg_value, the join key): false if some
 * column is not an integer (floats are converted on the CPU) or a fused
 * grouping column planned as never NULL has no NULL flag in the key.
 */
static bool
plan_encoding(GpuHashAggState *s, const PagePlan *pp, int side, GhPoolFeed *feed)
{
	gh_pageenc *enc = &feed->enc;

	memset(feed, 0, sizeof(*feed));
	if (s->ncols != s->nstatic_cols || s->ncols > GH_PAGE_MAX_VALS ||
		pp->nkeys > GH_PAGE_MAX_KEYS || (side >= 0 && s->njkeys > GH_PAGE_MAX_KEYS))
		return false;
	feed->side = Max(side, 0);
	feed->keyed = side < 0 || gha_side_keyed(s, side);
	feed->ncols = s->ncols;
	feed->cols = s->cols;
	enc->nkeys = pp->nkeys;
	for (int i = 0; i < pp->nkeys; i++)
	{
		int			k = pp->key[i];
		gh_pagekey *pk = &enc->key[i];

		pk->width = (uint8) key_width(s->keytypes[k]);
		if (pk->width == 0 || k >= 8)
			return false;
		pk->col = (int8) pp->key_col[i];
		pk->bit = (uint8) k;
		pk->shift = (uint8) s->key_shift[k];
		pk->mask = s->key_mask[k];
		pk->mod = pp->key_mod[i].by;
		if (side >= 0)
		{
			/* a fused node's NULL flags travel in the key (gha_fused_null_bits) */
			if (s->key_nullbit[k] < 0 || s->pattern_shift + s->key_nullbit[k] > 63)
				return false;
			pk->null_in_key = 1;
			pk->nullbit = (uint8) (s->pattern_shift + s->key_nullbit[k]);
		}
	}
	/* the values: every engine column of the side, a count(*) column's 0 and never NULL */
	for (int c = 0; c < s->ncols; c++)
		if (side < 0 || s->col_side[c] == side)
		{
			enc->val[enc->nvals].col = -1;
			feed->val_col[enc->nvals++] = (int8) c;
		}
	for (int i = 0; i < pp->naggs; i++)
	{
		int			a = pp->agg[i];
		int			v = 0;
		int			conv = value_conv(s->intypes[a]);

		while (v < enc->nvals && feed->val_col[v] != s->agg_col[a])
			v++;
		if (v == enc->nvals || s->cols[s->agg_col[a]].type == GH_FLOAT64 || conv < 0)
			return false;
		enc->val[v].col = (int8) pp->agg_col[i];
		enc->val[v].conv = (s->ops[a] == GHA_COUNT || s->ops[a] == GHA_COUNT_STAR) ?
			GH_PAGEVAL_ZERO : (uint8) conv;
	}
	for (int k = 0; side >= 0 && k < s->njkeys; k++)
	{
		gh_pagejkey *pj = &enc->jkey[k];
		GpuHashExactFamily family = s->jfamily[side][k];
		int			conv = value_conv(s->jtype[side][k]);

		/* gpuhash_encode_exact of an integer-like type: the Datum as the page reader makes it */
		if (family == GHX_NONE || family == GHX_FLOAT || conv < 0 ||
			s->jwidth[k] < 1 || s->jwidth[k] > 64)
			return false;
		pj->col = (int8) pp->jkey_col[k];
		pj->conv = (uint8) conv;
		pj->width = (uint8) s->jwidth[k];
		pj->shift = (uint8) s->jshift[k];
		enc->njkeys++;
	}
	if (side >= 0)
	{
		uint8	   *inner = palloc(Max(s->ncols, 1));

		for (int c = 0; c < s->ncols; c++)
			inner[c] = s->col_side[c] == 1;
		feed->col_inner = inner;
	}
	return true;
}

/*
 * A node feeding a pool has the GPU service put the shipped pages' rows
 * into the pool itself (page_scan.h), where it can encode them.
 */
static void
feed_pool(GpuHashAggState *s, GhPageScan *ps, const PagePlan *pp, int side)
{
	GhPoolFeed	feed;

	if (!gpuhash_enable_pool_pages || !gha_pool_active(s) || !s->pool_used || s->pool_late ||
		!plan_encoding(s, pp, side, &feed))
		return;
	if (gpuhash_page_scan_feed_pool(ps, gha_pool_handle(s), &feed))
		s->pool_pages = true;
}

bool
gha_collect_pages(GpuHashAggState *s, GhPageScan *ps, int side, int64 *counts)
{
	PagePlan	pp;
	const gh_pagerows *rows;
	size_t		first,
				end;
	int			njkeys = side >= 0 ? s->njkeys : 0;

	if (!plan_columns(s, ps, side, &pp))
		return false;
	feed_pool(s, ps, &pp, side);
	while (gpuhash_page_scan_next_run(ps, &rows, &first, &end))
	{
		CHECK_FOR_INTERRUPTS();
		gha_reserve_rows(s, (int64) (end - first));
		for (size_t r = first; r < end; r++)
		{
			uint64		key = 0;
			uint64		jkey = 0;
			uint8		pattern = 0;
			int64		n = s->nrows;
			int			k;

			/* a fused join's row whose join key is NULL joins nothing */
			for (k = 0; k < njkeys; k++)
			{
				int			o = pp.jkey_col[k];

				if (rows->nulls[o][r])
					break;
				jkey |= gpuhash_exact_key_column(s->jfamily[side][k], s->jtype[side][k],
												 (Datum) rows->values[o][r],
												 s->jwidth[k], s->jshift[k]);
			}
			if (k < njkeys)
				continue;
			for (int i = 0; i < pp.nkeys; i++)
			{
				int			o = pp.key_col[i];

				if (rows->nulls[o][r])
					pattern |= (uint8) (1 << pp.key[i]);
				else
					key |= gha_row_key_bits(s, pp.key[i],
											gpuhash_page_mod(&pp.key_mod[i], (Datum) rows->values[o][r]),
											n);
			}
			if (side >= 0 && pattern != 0)
			{
				key |= gha_fused_null_bits(s, pattern);
				pattern = 0;
			}
			s->keys[n] = key;
			s->patterns[n] = pattern;
			for (int i = 0; i < pp.naggs; i++)
			{
				int			o = pp.agg_col[i];

				if (o < 0)
					gha_store_agg_value(s, pp.agg[i], s->agg_col[pp.agg[i]], n, (Datum) 0, false);
				else
					gha_store_agg_value(s, pp.agg[i], s->agg_col[pp.agg[i]], n,
										(Datum) rows->values[o][r], rows->nulls[o][r] != 0);
			}
			if (side >= 0)
				s->jkeys[n] = jkey;
			s->nrows++;
			if (counts)
				counts[pattern]++;
			if (gha_pool_batch_full(s))
				gha_pool_flush(s, side, counts);
		}
	}
	return true;
}
