/*-------------------------------------------------------------------------
 *
 * agg_final.c
 *	  Turning the engine's per-group results into SQL aggregate values.
 *
 * The engine gives, per group and column, the non-NULL count, an exact
 * 128-bit integer sum or a float8 sum, and min/max as int64 or float8.
 * Each aggregate's result is built here the way PostgreSQL's own final
 * functions build it, so the values are identical:
 *
 *	count		int8 non-NULL count
 *	sum(int2/4)	int8; an exact sum outside int8 raises "bigint out of range"
 *	sum(int8)	numeric of the exact 128-bit sum
 *	avg(int*)	numeric sum / numeric count (numeric_div, as int8_avg does)
 *	sum/avg(float4/8)  the float8 sum (and / count); float4 for sum(float4).
 *				Sums are added in an unspecified order on the device, so they
 *				may differ from PostgreSQL's in the last bits (README).
 *	min/max		the extreme value; floats travel as order-preserving int64
 *				(gpuhash_float_order) so NaN sorts last as in PostgreSQL
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

#include "agg.h"
#include "engine.h"
#include "keys.h"

/* numeric of a two's complement 128-bit integer hi:lo times 10^exp10 */
Datum
gha_numeric_from_int128(uint64 lo, int64 hi, int exp10)
{
	__int128	v = (__int128) (((unsigned __int128) (uint64) hi << 64) | lo);
	unsigned __int128 mag = v < 0 ? -(unsigned __int128) v : (unsigned __int128) v;
	char		buf[64];
	char	   *p = buf + 48;

	*p = '\0';
	do
	{
		*--p = (char) ('0' + (int) (mag % 10));
		mag /= 10;
	} while (mag != 0);
	if (v < 0)
		*--p = '-';
	if (exp10 != 0)
		snprintf(buf + 48, sizeof(buf) - 48, "e%d", exp10);
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* an int64 min/max back into the argument's type */
static Datum
ordered_to_datum(Oid type, int64 v)
{
	switch (type)
	{
		case INT2OID:
			return Int16GetDatum((int16) v);
		case INT4OID:
			return Int32GetDatum((int32) v);
		case DATEOID:
			return DateADTGetDatum((DateADT) v);
		case OIDOID:
			return ObjectIdGetDatum((Oid) v);
		case FLOAT4OID:
			return Float4GetDatum((float4) gpuhash_float_unorder(v));
		case FLOAT8OID:
			return Float8GetDatum(gpuhash_float_unorder(v));
		default:				/* int8, time, timestamp, timestamptz */
			return Int64GetDatum(v);
	}
}

/* an exact 128-bit sum as int8, or PostgreSQL's error where it does not fit */
int64
gpuhash_agg_int8_sum(const gh_aggresult *r, size_t group)
{
	if (!gh_sum_fits_int64(r->sum_lo[group], r->sum_hi[group]))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("bigint out of range")));
	return (int64) r->sum_lo[group];
}

Datum
gpuhash_agg_final(GhaOp op, Oid argtype, const gh_groups *g, int col,
				  size_t group, bool *isnull)
{
	const gh_aggresult *r = col >= 0 ? &g->cols[col] : NULL;
	bool		is_float = (argtype == FLOAT4OID || argtype == FLOAT8OID);

	*isnull = false;
	if (op == GHA_COUNT_STAR)
		return Int64GetDatum(r ? r->nonnull[group] : g->rows[group]);
	if (op == GHA_COUNT)
		return Int64GetDatum(r->nonnull[group]);
	if (r->nonnull[group] == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (op)
	{
		case GHA_SUM:
			if (is_float)
				return argtype == FLOAT4OID ? Float4GetDatum((float4) r->fsum[group])
					: Float8GetDatum(r->fsum[group]);
			if (argtype == INT8OID)
				return gha_numeric_from_int128(r->sum_lo[group], r->sum_hi[group], 0);
			return Int64GetDatum(gpuhash_agg_int8_sum(r, group));
		case GHA_AVG:
			if (is_float)
				return Float8GetDatum(r->fsum[group] / (double) r->nonnull[group]);
			return DirectFunctionCall2(numeric_div,
									   gha_numeric_from_int128(r->sum_lo[group], r->sum_hi[group], 0),
									   NumericGetDatum(int64_to_numeric(r->nonnull[group])));
		case GHA_MIN:
			return ordered_to_datum(argtype, r->imin[group]);
		case GHA_MAX:
			return ordered_to_datum(argtype, r->imax[group]);
		default:
			elog(ERROR, "gpuhash: unknown aggregate %d", (int) op);
	}
	return (Datum) 0;			/* keep compiler quiet */
}

/*
 * Partial values, as a parallel worker's GpuHashAgg passes them to the final
 * one: exact where the final result is (sums of integers and numerics as
 * numeric, counts as int8), float8 for float sums, the argument's own type
 * for min and max; avg passes its sum and its count.
 */
Oid
gpuhash_agg_partial_type(GhaOp op, Oid argtype, int part)
{
	if (part == 1)
		return op == GHA_AVG ? INT8OID : InvalidOid;
	switch (op)
	{
		case GHA_COUNT_STAR:
		case GHA_COUNT:
			return INT8OID;
		case GHA_SUM:
		case GHA_AVG:
			if (argtype == FLOAT4OID || argtype == FLOAT8OID)
				return FLOAT8OID;
			if (op == GHA_SUM && (argtype == INT2OID || argtype == INT4OID))
				return INT8OID;
			return NUMERICOID;
		default:
			return argtype;
	}
}
