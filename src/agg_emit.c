/*-------------------------------------------------------------------------
 *
 * agg_emit.c
 *	  A GpuHashAgg's groups into its scan tuple, one group a call: the
 *	  columns of each result compiled once into steps that read the
 *	  result's arrays directly.
 *
 * INTERFACE ROUTINES
 *		gha_emit_prepare	the steps for one result, or false: general path
 *		gha_emit_group		one group of that result into the scan tuple
 *
 * A query of millions of groups spends most of its time here, in the one
 * process that returns them: the general path (agg_exec.c's own_group and
 * pool_direct_group) decides afresh for every group and every column how
 * the column's value is made.  Here that is decided once per result: a
 * grouping column unpacked from the key, a count read from its array, an
 * exact sum made int8 or numeric, a minimum or maximum from its int64
 * image; every other value (averages, float sums, numeric sums, dictionary
 * columns) is one step that calls the general path (gha_output_value), so
 * the values are the same either way.  Results whose NULL pattern varies from group to group (a fused
 * join's NULL keys) or that need the dictionary or -0 keys take the
 * general path.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/memutils.h"

#include "agg_state.h"
#include "keys.h"

typedef enum GhaEmitKind
{
	EMIT_NULL,					/* always NULL */
	EMIT_KEY64,					/* a packed 64-bit grouping column (int8, timestamps) */
	EMIT_KEY,					/* another packed grouping column */
	EMIT_INT64,					/* an int8 array (counts) */
	EMIT_SUM64,					/* an exact sum as int8; NULL where it had no value
								 * (nullable) */
	EMIT_NUMERIC,				/* sum(int8): numeric of the exact sum; NULL where it had
								 * no value */
	EMIT_EXTREME,				/* min/max: the value of its int64 image (agg_final.c);
								 * NULL where it had no value */
	EMIT_GENERAL				/* gha_output_value */
} GhaEmitKind;

struct GhaEmitStep
{
	GhaEmitKind kind;
	int			at;				/* scan tuple column */
	int			o;				/* EMIT_GENERAL: the output */
	bool		nullable;		/* EMIT_SUM64: NULL where nonnull is 0 */
	Oid			type;			/* EMIT_KEY, EMIT_EXTREME */
	int			shift;			/* EMIT_KEY*: the column's bits in the key */
	uint64		mask;
	const int64 *ints;			/* EMIT_INT64, EMIT_EXTREME */
	const gh_aggresult *r;		/* EMIT_SUM64, EMIT_NUMERIC, EMIT_EXTREME: the column */
	char	   *numeric;		/* EMIT_NUMERIC: room for the value */
};

/* the step of an aggregate finished as gpuhash_agg_final(op, type, g, col) finishes it */
static void
final_step(GhaEmitStep *st, GhaOp op, Oid type, const gh_groups *g, int col)
{
	const gh_aggresult *r = col >= 0 ? &g->cols[col] : NULL;

	st->kind = EMIT_GENERAL;
	if (op == GHA_COUNT_STAR || op == GHA_COUNT)
	{
		st->kind = EMIT_INT64;
		st->ints = r ? r->nonnull : g->rows;
	}
	else if (op == GHA_SUM && r != NULL && r->sum_lo != NULL &&
			 (type == INT2OID || type == INT4OID || type == INT8OID))
	{
		st->kind = type == INT8OID ? EMIT_NUMERIC : EMIT_SUM64;
		st->nullable = true;
		st->r = r;
	}
	else if ((op == GHA_MIN || op == GHA_MAX) && r != NULL &&
			 (op == GHA_MIN ? r->imin : r->imax) != NULL)
	{
		st->kind = EMIT_EXTREME;
		st->type = type;
		st->r = r;
		st->ints = op == GHA_MIN ? r->imin : r->imax;
	}
}

/* the step of output o of s (not a pool's groups) */
static void
output_step(GpuHashAggState *s, GhaEmitStep *st, const gh_groups *g, int o)
{
	int			a = s->out_agg[o];
	GhaOp		op = s->ops[a];
	Oid			t = s->argtypes[a];
	int			c = s->agg_col[a];
	bool		is_float = (t == FLOAT4OID || t == FLOAT8OID);

	st->kind = EMIT_GENERAL;
	if (s->agg_cpu[a] >= 0)
		return;
	if (s->mode == GHA_MODE_PARTIAL)
	{
		if (s->out_part[o] == 1)
		{
			st->kind = EMIT_INT64;	/* avg's count */
			st->ints = g->cols[c].nonnull;
			return;
		}
		if (op == GHA_AVG || (op == GHA_SUM && is_float))
			return;
	}
	else if (s->mode == GHA_MODE_FINAL)
	{
		if (op == GHA_COUNT_STAR || op == GHA_COUNT)
		{
			st->kind = EMIT_SUM64;	/* the sum of the counts */
			st->nullable = false;
			st->r = &g->cols[c];
			return;
		}
		if (op == GHA_SUM && !s->numcols[a] && !is_float)
		{
			final_step(st, GHA_SUM, INT4OID, g, c);
			return;
		}
		if (op == GHA_AVG)
			return;
	}
	if (s->numcols[a])
		return;
	final_step(st, op, t, g, c);
}

/*
 * Compile the steps that make result g's groups, whose NULL pattern is
 * pattern, into s's scan tuple.  False where the general path must make
 * them.
 */
bool
gha_emit_prepare(GpuHashAggState *s, const gh_groups *g, uint8 pattern)
{
	GpuHashAggState *layout = s->pool_direct ? s->pool_child : s;
	TupleTableSlot *scan = s->css.ss.ss_ScanTupleSlot;
	int			natts = scan->tts_tupleDescriptor->natts;
	bool	   *covered;
	int			n = 0;

	if (s->dict != NULL || s->nshow > 0)
		return false;
	if (layout->fused_kind >= 0)
		for (int i = 0; i < layout->nkeys; i++)
			if (layout->key_nullbit[i] >= 0)
				return false;	/* the pattern varies by group */
	if (s->emit_steps == NULL)
		s->emit_steps = MemoryContextAllocZero(s->node_cxt, sizeof(GhaEmitStep) * Max(natts, 1));
	covered = palloc0(sizeof(bool) * Max(natts, 1));
	for (int i = 0; i < s->nkeys; i++)
	{
		GhaEmitStep *st = &s->emit_steps[n++];
		Oid			t = layout->keytypes[i];

		memset(st, 0, sizeof(*st));
		st->at = s->key_attno[i] - 1;
		covered[st->at] = true;
		if (pattern & (1 << i))
		{
			st->kind = EMIT_NULL;
			continue;
		}
		st->kind = (t == INT8OID || t == TIMESTAMPOID || t == TIMESTAMPTZOID || t == TIMEOID) ?
			EMIT_KEY64 : EMIT_KEY;
		st->type = t;
		st->shift = layout->key_shift[i];
		st->mask = layout->key_mask[i];
	}
	for (int o = 0; o < s->nout; o++)
	{
		GhaEmitStep *st = &s->emit_steps[n++];

		memset(st, 0, sizeof(*st));
		st->at = s->out_attno[o] - 1;
		st->o = o;
		st->numeric = s->out_numeric[o];
		covered[st->at] = true;
		if (s->pool_direct)
		{
			int			a = s->out_agg[o];

			st->kind = EMIT_GENERAL;
			if (!layout->numcols[a])
				final_step(st, layout->ops[a], layout->argtypes[a], g, layout->agg_col[a]);
		}
		else
			output_step(s, st, g, o);
	}
	for (int at = 0; at < natts && n < natts; at++)
		if (!covered[at])
		{
			GhaEmitStep *st = &s->emit_steps[n++];

			memset(st, 0, sizeof(*st));
			st->kind = EMIT_NULL;
			st->at = at;
		}
	pfree(covered);
	s->emit_nsteps = n;
	return true;
}

/* Group gi of result g (the steps' result) into s's scan tuple. */
void
gha_emit_group(GpuHashAggState *s, const gh_groups *g, size_t gi, TupleTableSlot *scan)
{
	Datum	   *values = scan->tts_values;
	bool	   *isnull = scan->tts_isnull;
	uint64		key = g->keys[gi];

	for (int k = 0; k < s->emit_nsteps; k++)
	{
		const GhaEmitStep *st = &s->emit_steps[k];
		int			at = st->at;

		isnull[at] = false;
		switch (st->kind)
		{
			case EMIT_NULL:
				isnull[at] = true;
				break;
			case EMIT_KEY64:
				values[at] = Int64GetDatum((int64) ((key >> st->shift) & st->mask));
				break;
			case EMIT_KEY:
				values[at] = gpuhash_unpack_key(st->type, (key >> st->shift) & st->mask);
				break;
			case EMIT_INT64:
				values[at] = Int64GetDatum(st->ints[gi]);
				break;
			case EMIT_SUM64:
				if (st->nullable && st->r->nonnull[gi] == 0)
					isnull[at] = true;
				else
					values[at] = Int64GetDatum(gpuhash_agg_int8_sum(st->r, gi));
				break;
			case EMIT_NUMERIC:
				if (st->r->nonnull[gi] == 0)
					isnull[at] = true;
				else
					values[at] = gha_numeric_of_int128(st->r->sum_lo[gi], gh_sum_hi(st->r, gi),
													   st->numeric);
				break;
			case EMIT_EXTREME:
				if (st->r->nonnull[gi] == 0)
					isnull[at] = true;
				else if (st->type == INT8OID)
					values[at] = Int64GetDatum(st->ints[gi]);
				else
					values[at] = gha_ordered_datum(st->type, st->ints[gi]);
				break;
			case EMIT_GENERAL:
				values[at] = gha_output_value(s, g, gi, st->o, &isnull[at]);
				break;
		}
	}
}
