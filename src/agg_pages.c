/*-------------------------------------------------------------------------
 *
 * agg_pages.c
 *	  A GpuHashAgg whose input is read from heap pages (page_scan.h), taking
 *	  the rows in runs straight from the page reader's columns: when every
 *	  grouping column and every aggregate's argument is a column of the
 *	  table, no expression is evaluated and no slot is filled per row.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/primnodes.h"

#include "agg_state.h"
#include "page_scan.h"

/* The page reader's column holding scan-tuple Var expr of the input, or -1. */
static int
page_column(GpuHashAggState *s, GhPageScan *ps, Expr *expr)
{
	Var		   *var = (Var *) expr;
	int			i;

	if (expr == NULL || !IsA(expr, Var) || var->varno != INDEX_VAR)
		return -1;
	i = var->varattno - 1;
	if (i < 0 || i >= s->map.ncols || s->map.sides[i] != 0 || s->map.attnos[i] <= 0)
		return -1;
	return gpuhash_page_scan_column(ps, s->map.attnos[i]);
}

bool
gha_collect_pages(GpuHashAggState *s, GhPageScan *ps, int64 *counts)
{
	int		   *key_col = palloc(sizeof(int) * Max(s->nkeys, 1));
	int		   *arg_col = palloc(sizeof(int) * Max(s->naggs, 1));
	const gh_pagerows *rows;
	size_t		first,
				end;
	ListCell   *lc;
	int			i = 0;

	if (s->fused_kind >= 0 || s->dict != NULL || s->mode == GHA_MODE_FINAL ||
		!gpuhash_page_scan_plain(ps))
		return false;
	foreach(lc, s->key_states)
	{
		if (s->key_mode[i] == GHA_KEY_DICT ||
			(key_col[i] = page_column(s, ps, ((ExprState *) lfirst(lc))->expr)) < 0)
			return false;
		i++;
	}
	for (int a = 0; a < s->naggs; a++)
	{
		arg_col[a] = -1;
		if (s->agg_cpu[a] >= 0 || s->numcols[a] != NULL || s->filters[a] != NULL ||
			s->agg_col2[a] >= 0)
			return false;
		if (s->agg_col[a] < 0 || s->ops[a] == GHA_COUNT_STAR)
			continue;
		if ((arg_col[a] = page_column(s, ps, s->args[a]->expr)) < 0)
			return false;
	}

	while (gpuhash_page_scan_next_run(ps, &rows, &first, &end))
	{
		CHECK_FOR_INTERRUPTS();
		for (size_t r = first; r < end; r++)
		{
			uint64		key = 0;
			uint8		pattern = 0;
			int64		n;

			gha_reserve_row(s);
			n = s->nrows;
			for (int k = 0; k < s->nkeys; k++)
			{
				int			o = key_col[k];

				if (rows->nulls[o][r])
					pattern |= (uint8) (1 << k);
				else
					key |= (gpuhash_pack_key(s->keytypes[k], (Datum) rows->values[o][r]) &
							s->key_mask[k]) << s->key_shift[k];
			}
			s->keys[n] = key;
			s->patterns[n] = pattern;
			for (int a = 0; a < s->naggs; a++)
			{
				int			c = s->agg_col[a];
				int			o = arg_col[a];

				if (c < 0)
					continue;
				if (o < 0)
					gha_store_agg_value(s, a, c, n, (Datum) 0, false);
				else
					gha_store_agg_value(s, a, c, n, (Datum) rows->values[o][r],
										rows->nulls[o][r] != 0);
			}
			s->nrows++;
			counts[pattern]++;
		}
	}
	return true;
}
