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
 *				may differ from PostgreSQL's in the last bits; finite values
 *				whose sum is infinite raise "value out of range: overflow"
 *				(the column's min and max say whether one was infinite).
 *	min/max		the extreme value; floats travel as order-preserving int64
 *				(gpuhash_float_order) so NaN sorts last as in PostgreSQL;
 *				-0 is just below 0, so that -0s give -0 in any order
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

/*
 * The short format of a numeric, as numeric.c (PostgreSQL 15) lays it out
 * and keeps private: a varlena header, a 16-bit header word (sign, display
 * scale, weight), then base-10000 digits, most significant first, with no
 * leading or trailing zero digit.  Every integer of up to 128 bits takes it
 * (weight at most 9, display scale 0).
 */
#define NUM_SHORT				0x8000
#define NUM_SHORT_SIGN			0x2000
#define NUM_SHORT_WEIGHT_SIGN	0x0040
#define NUM_SHORT_WEIGHT_MASK	0x003F
#define NUM_SHORT_DSCALE_SHIFT	7
#define NUM_SHORT_DSCALE_MAX	63
#define NUM_BASE				10000
#define NUM_MAX_DIGITS			10		/* 2^128 < 10000^10 */

/*
 * numeric of the value whose base-10000 digits, least significant first,
 * are digits[0..nd), times 10000^shift, at display scale dscale: the bytes
 * numeric.c's make_result writes for it, into into (GHA_NUMERIC_BYTES) or
 * palloc'd memory.  False (nothing written) where the short format cannot
 * hold its weight or scale.
 */
static bool
numeric_of_digits(bool negative, const int16 *digits, int nd, int shift, int dscale,
				  char *into, Datum *out)
{
	int			low = 0;
	int			n;
	int			weight;
	Size		len;
	char	   *result;
	uint16		header;
	int16	   *out_digits;

	while (low < nd && digits[low] == 0)
		low++;					/* trailing zero digits are not stored */
	n = nd - low;
	weight = nd - 1 + shift;
	if (n == 0)
	{
		weight = 0;				/* zero: weight 0, positive */
		negative = false;
	}
	if (weight < -(NUM_SHORT_WEIGHT_MASK + 1) || weight > NUM_SHORT_WEIGHT_MASK ||
		dscale < 0 || dscale > NUM_SHORT_DSCALE_MAX)
		return false;
	len = VARHDRSZ + sizeof(uint16) + n * sizeof(int16);
	StaticAssertStmt(VARHDRSZ + sizeof(uint16) + NUM_MAX_DIGITS * sizeof(int16) <= GHA_NUMERIC_BYTES,
					 "GHA_NUMERIC_BYTES holds a numeric of any 128-bit integer");
	result = into ? into : palloc(len);
	SET_VARSIZE(result, len);
	header = NUM_SHORT | (negative ? NUM_SHORT_SIGN : 0) |
		(dscale << NUM_SHORT_DSCALE_SHIFT) |
		(weight < 0 ? NUM_SHORT_WEIGHT_SIGN : 0) | (weight & NUM_SHORT_WEIGHT_MASK);
	memcpy(result + VARHDRSZ, &header, sizeof(header));
	out_digits = (int16 *) (result + VARHDRSZ + sizeof(uint16));
	for (int i = 0; i < n; i++)
		out_digits[i] = digits[nd - 1 - i];
	*out = PointerGetDatum(result);
	return true;
}

/*
 * numeric of a two's complement 128-bit integer hi:lo times 10000^shift, at
 * display scale dscale, into into or palloc'd; false where the short format
 * cannot hold it
 */
static bool
int128_numeric_scaled(uint64 lo, int64 hi, int shift, int dscale, char *into, Datum *out)
{
	__int128	v = (__int128) (((unsigned __int128) (uint64) hi << 64) | lo);
	unsigned __int128 mag = v < 0 ? -(unsigned __int128) v : (unsigned __int128) v;
	int16		digits[NUM_MAX_DIGITS];
	int			nd = 0;

	while (mag > PG_UINT64_MAX)
	{
		digits[nd++] = (int16) (mag % NUM_BASE);
		mag /= NUM_BASE;
	}
	for (uint64 m = (uint64) mag; m != 0; m /= NUM_BASE)
		digits[nd++] = (int16) (m % NUM_BASE);
	return numeric_of_digits(v < 0, digits, nd, shift, dscale, into, out);
}

/*
 * numeric of a two's complement 128-bit integer hi:lo, into into
 * (GHA_NUMERIC_BYTES) or palloc'd
 */
Datum
gha_numeric_of_int128(uint64 lo, int64 hi, char *into)
{
	Datum		d = (Datum) 0;

	if (!int128_numeric_scaled(lo, hi, 0, 0, into, &d))
		elog(ERROR, "gpuhash: an integer of 128 bits does not fit numeric's short form");
	return d;
}

/*
 * numeric of the two's complement 128-bit integer hi:lo times 10^(16 limb)
 * at display scale dscale, built directly (palloc'd); false where numeric's
 * short format cannot hold it (the caller takes numeric arithmetic then)
 */
bool
gha_numeric_of_limbs(uint64 lo, int64 hi, int limb, int dscale, Datum *out)
{
	return int128_numeric_scaled(lo, hi, 4 * limb, dscale, NULL, out);
}

/*
 * numeric of a two's complement 128-bit integer hi:lo times 10^exp10.  A
 * plain integer (exp10 = 0: every sum of int8, once per group) is built
 * directly; a scaled one (the limbs of numeric sums) through numeric_in.
 */
Datum
gha_numeric_from_int128(uint64 lo, int64 hi, int exp10)
{
	__int128	v = (__int128) (((unsigned __int128) (uint64) hi << 64) | lo);
	unsigned __int128 mag = v < 0 ? -(unsigned __int128) v : (unsigned __int128) v;
	char		buf[64];
	char	   *p = buf + 48;

	if (exp10 == 0)
		return gha_numeric_of_int128(lo, hi, NULL);

	*p = '\0';
	do
	{
		*--p = (char) ('0' + (int) (mag % 10));
		mag /= 10;
	} while (mag != 0);
	if (v < 0)
		*--p = '-';
	snprintf(buf + 48, sizeof(buf) - 48, "e%d", exp10);
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* an int64 min/max back into the argument's type */
Datum
gha_ordered_datum(Oid type, int64 v)
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
	if (!gh_sum_fits_int64(r->sum_lo[group], gh_sum_hi(r, group)))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("bigint out of range")));
	return (int64) r->sum_lo[group];
}

double
gpuhash_agg_float_sum(const gh_aggresult *r, size_t group, bool as_float4)
{
	double		sum = r->fsum[group];

	if ((as_float4 ? isinf((float4) sum) : isinf(sum)) &&
		r->fmin != NULL && r->fmax != NULL &&
		!isinf(r->fmin[group]) && !isinf(r->fmax[group]))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("value out of range: overflow")));

	/*
	 * The engine's sums start at 0; PostgreSQL's sum starts at the first
	 * value (float8pl), so that of -0s alone it is -0.  A sum of 0 whose
	 * largest value is -0 (which orders just below 0) added -0s alone: no
	 * two negative values add up to 0.  (avg starts at 0, as the engine:
	 * gpuhash_agg_float_avg_sum.)
	 */
	if (sum == 0 && r->fmax != NULL && r->fmax[group] == 0 && signbit(r->fmax[group]))
		sum = -0.0;
	return sum;
}

/* the sum avg divides: PostgreSQL's float8_accum starts at 0, so -0s make 0 */
double
gpuhash_agg_float_avg_sum(const gh_aggresult *r, size_t group)
{
	return gpuhash_agg_float_sum(r, group, false) + 0.0;
}

Datum
gpuhash_agg_final(GhaOp op, Oid argtype, const gh_groups *g, int col,
				  size_t group, bool *isnull, char *numeric)
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
				return argtype == FLOAT4OID ?
					Float4GetDatum((float4) gpuhash_agg_float_sum(r, group, true)) :
					Float8GetDatum(gpuhash_agg_float_sum(r, group, false));
			if (argtype == INT8OID)
				return gha_numeric_of_int128(r->sum_lo[group], gh_sum_hi(r, group), numeric);
			return Int64GetDatum(gpuhash_agg_int8_sum(r, group));
		case GHA_AVG:
			if (is_float)
				return Float8GetDatum(gpuhash_agg_float_avg_sum(r, group) /
									   (double) r->nonnull[group]);
			return DirectFunctionCall2(numeric_div,
									   gha_numeric_from_int128(r->sum_lo[group], gh_sum_hi(r, group), 0),
									   NumericGetDatum(int64_to_numeric(r->nonnull[group])));
		case GHA_MIN:
			return gha_ordered_datum(argtype, r->imin[group]);
		case GHA_MAX:
			return gha_ordered_datum(argtype, r->imax[group]);
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
