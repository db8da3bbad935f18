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
	return (mod == NULL && none.by != 0) ? -1 : col;
}

/*
 * The page columns the node reads from input side (0 or 1 of a fused
 * join, -1 the only input): false if something is not a plain column.
 */
static bool
plan_columns(GpuHashAggState *s, GhPageScan *ps, int side, int *key_col, GhPageMod *key_mod,
			 int *arg_col, int *jkey_col)
{
	int			input = Max(side, 0);
	ListCell   *lc;
	int			i = 0;

	if (s->mode == GHA_MODE_FINAL || !gpuhash_page_scan_plain(ps) ||
		(s->dict != NULL && (side < 0 || s->dict_side == side)))
		return false;
	foreach(lc, s->key_states)
	{
		key_col[i] = -1;
		if (side < 0 || s->key_side[i] == side)
		{
			if (s->key_mode[i] == GHA_KEY_DICT ||
				(key_col[i] = page_column(s, ps, ((ExprState *) lfirst(lc))->expr, input,
										   &key_mod[i])) < 0)
				return false;
		}
		i++;
	}
	for (int a = 0; a < s->naggs; a++)
	{
		arg_col[a] = -1;
		if (side >= 0 && s->agg_side[a] != side)
			continue;
		if (s->agg_cpu[a] >= 0 || s->numcols[a] != NULL || s->filters[a] != NULL ||
			s->agg_col2[a] >= 0)
			return false;
		if (s->agg_col[a] < 0 || s->ops[a] == GHA_COUNT_STAR)
			continue;
		if ((arg_col[a] = page_column(s, ps, s->args[a]->expr, input, NULL)) < 0)
			return false;
	}
	for (int k = 0; side >= 0 && k < s->njkeys; k++)
		if ((jkey_col[k] = page_column(s, ps, s->jkey[side][k]->expr, side, NULL)) < 0)
			return false;
	return true;
}

bool
gha_collect_pages(GpuHashAggState *s, GhPageScan *ps, int side, int64 *counts)
{
	int		   *key_col = palloc(sizeof(int) * Max(s->nkeys, 1));
	GhPageMod  *key_mod = palloc0(sizeof(GhPageMod) * Max(s->nkeys, 1));
	int		   *arg_col = palloc(sizeof(int) * Max(s->naggs, 1));
	int		   *jkey_col = palloc(sizeof(int) * Max(s->njkeys, 1));
	const gh_pagerows *rows;
	size_t		first,
				end;

	if (!plan_columns(s, ps, side, key_col, key_mod, arg_col, jkey_col))
		return false;
	while (gpuhash_page_scan_next_run(ps, &rows, &first, &end))
	{
		CHECK_FOR_INTERRUPTS();
		for (size_t r = first; r < end; r++)
		{
			uint64		key = 0;
			uint64		jkey = 0;
			uint8		pattern = 0;
			int64		n;
			bool		skip = false;

			/* a fused join's row whose join key is NULL joins nothing */
			for (int k = 0; side >= 0 && k < s->njkeys; k++)
			{
				int			o = jkey_col[k];

				if (rows->nulls[o][r])
				{
					skip = true;
					break;
				}
				jkey |= gpuhash_exact_key_column(s->jfamily[side][k], s->jtype[side][k],
												 (Datum) rows->values[o][r],
												 s->jwidth[k], s->jshift[k]);
			}
			if (skip)
				continue;
			gha_reserve_row(s);
			n = s->nrows;
			for (int k = 0; k < s->nkeys; k++)
			{
				int			o = key_col[k];

				if (o < 0)
					continue;
				if (rows->nulls[o][r])
					pattern |= (uint8) (1 << k);
				else
					key |= (gpuhash_pack_key(s->keytypes[k],
											 gpuhash_page_mod(&key_mod[k], (Datum) rows->values[o][r])) &
							s->key_mask[k]) << s->key_shift[k];
			}
			if (side >= 0 && pattern != 0)
			{
				key |= gha_fused_null_bits(s, pattern);
				pattern = 0;
			}
			s->keys[n] = key;
			s->patterns[n] = pattern;
			for (int a = 0; a < s->naggs; a++)
			{
				int			c = s->agg_col[a];
				int			o = arg_col[a];

				if (c < 0 || (side >= 0 && s->agg_side[a] != side))
					continue;
				if (o < 0)
					gha_store_agg_value(s, a, c, n, (Datum) 0, false);
				else
					gha_store_agg_value(s, a, c, n, (Datum) rows->values[o][r],
										rows->nulls[o][r] != 0);
			}
			if (side >= 0)
				s->jkeys[n] = jkey;
			s->nrows++;
			if (counts)
				counts[pattern]++;
		}
	}
	return true;
}
