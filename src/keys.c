/*-------------------------------------------------------------------------
 *
 * keys.c
 *	  Datum -> 64-bit key: the exact and the hashed encodings.
 *
 * The engine compares 64-bit words.  For the fixed-width types whose
 * equality is bit equality after a normalisation (integers of any width,
 * oid, bool, date, time, timestamp, timestamptz; float4/float8 once -0 is
 * folded onto 0 and every NaN onto one NaN, which is PostgreSQL's float
 * equality), the word IS the value, so no recheck is needed.
 *
 * Every other type with a hash operator class is encoded by its extended
 * hash function (support function 2 of the hash opfamily that holds the join
 * or grouping operator).  Opfamily members are hash-compatible across types,
 * so text = varchar hashes both sides alike.  Such keys are candidates only:
 * the executor rechecks every match with the equality operator itself,
 * under the clause's collation.  Non-deterministic collations are refused
 * (their equality is not bytewise, and callers simply do not offer a path).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/hash.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "utils/catcache.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "keys.h"

GpuHashExactFamily
gpuhash_exact_family(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return GHX_INTEGER;
		case FLOAT4OID:
		case FLOAT8OID:
			return GHX_FLOAT;
		case OIDOID:
			return GHX_OID;
		case BOOLOID:
			return GHX_BOOL;
		case DATEOID:
			return GHX_DATE;
		case TIMEOID:
			return GHX_TIME;
		case TIMESTAMPOID:
			return GHX_TIMESTAMP;
		case TIMESTAMPTZOID:
			return GHX_TIMESTAMPTZ;
		default:
			return GHX_NONE;
	}
}

static uint64
encode_double(double d)
{
	uint64		bits;

	if (isnan(d))
		return UINT64CONST(0x7ff8000000000000);
	if (d == 0.0)
		d = 0.0;				/* -0 and 0 are equal in SQL */
	memcpy(&bits, &d, sizeof(bits));
	return bits;
}

uint64
gpuhash_encode_exact(GpuHashExactFamily family, Oid type, Datum value)
{
	switch (type)
	{
		case INT2OID:
			return (uint64) (int64) DatumGetInt16(value);
		case INT4OID:
			return (uint64) (int64) DatumGetInt32(value);
		case INT8OID:
			return (uint64) DatumGetInt64(value);
		case FLOAT4OID:
			return encode_double((double) DatumGetFloat4(value));
		case FLOAT8OID:
			return encode_double(DatumGetFloat8(value));
		case OIDOID:
			return (uint64) DatumGetObjectId(value);
		case BOOLOID:
			return DatumGetBool(value) ? 1 : 0;
		case DATEOID:
			return (uint64) (int64) DatumGetInt32(value);
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return (uint64) DatumGetInt64(value);
	}
	elog(ERROR, "gpuhash: type %u has no exact key encoding", type);
	return 0;					/* keep compiler quiet */
}

/*
 * The extended hash function for `type` in a hash opfamily that contains the
 * equality operator eqop; InvalidOid if there is none.
 */
Oid
gpuhash_extended_hash_proc(Oid eqop, Oid type)
{
	CatCList   *catlist;
	Oid			result = InvalidOid;

	catlist = SearchSysCacheList1(AMOPOPID, ObjectIdGetDatum(eqop));
	for (int i = 0; i < catlist->n_members && !OidIsValid(result); i++)
	{
		HeapTuple	tuple = &catlist->members[i]->tuple;
		Form_pg_amop aform = (Form_pg_amop) GETSTRUCT(tuple);

		if (aform->amopmethod != HASH_AM_OID || aform->amopstrategy != HTEqualStrategyNumber)
			continue;
		result = get_opfamily_proc(aform->amopfamily, type, type, HASHEXTENDED_PROC);
		if (!OidIsValid(result))
		{
			/* a domain or binary-compatible type: try its base type */
			Oid			base = getBaseType(type);

			if (base != type)
				result = get_opfamily_proc(aform->amopfamily, base, base, HASHEXTENDED_PROC);
		}
	}
	ReleaseSysCacheList(catlist);
	return result;
}

bool
gpuhash_collation_ok(Oid collation)
{
	return !OidIsValid(collation) || get_collation_isdeterministic(collation);
}

/* Fold column `column`'s hash into the running key hash. */
uint64
gpuhash_combine_hash(uint64 acc, uint64 h, int column)
{
	if (column == 0)
		return h;
	return hash_combine64(acc, h);
}

int
gpuhash_key_bits(Oid type)
{
	switch (type)
	{
		case BOOLOID:
			return 1;
		case INT2OID:
			return 16;
		case INT4OID:
		case OIDOID:
		case DATEOID:
		case FLOAT4OID:
			return 32;
		case INT8OID:
		case FLOAT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return 64;
		default:
			return 0;			/* not packable */
	}
}

/* float4 bits with -0 folded onto 0 and every NaN onto one NaN */
static uint32
float4_bits(float4 f)
{
	uint32		bits;

	if (isnan(f))
		return 0x7fc00000;
	if (f == 0.0f)
		f = 0.0f;
	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

uint64
gpuhash_pack_key(Oid type, Datum value)
{
	switch (type)
	{
		case BOOLOID:
			return DatumGetBool(value) ? 1 : 0;
		case INT2OID:
			return (uint16) DatumGetInt16(value);
		case INT4OID:
		case DATEOID:
			return (uint32) DatumGetInt32(value);
		case OIDOID:
			return DatumGetObjectId(value);
		case FLOAT4OID:
			return float4_bits(DatumGetFloat4(value));
		case FLOAT8OID:
			return encode_double(DatumGetFloat8(value));
		case INT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return (uint64) DatumGetInt64(value);
	}
	elog(ERROR, "gpuhash: type %u cannot be a packed grouping key", type);
	return 0;
}

Datum
gpuhash_unpack_key(Oid type, uint64 bits)
{
	switch (type)
	{
		case BOOLOID:
			return BoolGetDatum(bits != 0);
		case INT2OID:
			return Int16GetDatum((int16) (uint16) bits);
		case INT4OID:
			return Int32GetDatum((int32) (uint32) bits);
		case DATEOID:
			return DateADTGetDatum((DateADT) (int32) (uint32) bits);
		case OIDOID:
			return ObjectIdGetDatum((Oid) bits);
		case FLOAT4OID:
			{
				uint32		b = (uint32) bits;
				float4		f;

				memcpy(&f, &b, sizeof(f));
				return Float4GetDatum(f);
			}
		case FLOAT8OID:
			{
				double		d;

				memcpy(&d, &bits, sizeof(d));
				return Float8GetDatum(d);
			}
		case INT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return Int64GetDatum((int64) bits);
	}
	elog(ERROR, "gpuhash: type %u cannot be a packed grouping key", type);
	return (Datum) 0;
}

int64
gpuhash_float_order(double d)
{
	uint64		u;

	/* NaNs are one, but -0 stays just below 0: a min or max of -0s is -0 */
	if (isnan(d))
		u = UINT64CONST(0x7ff8000000000000);
	else
		memcpy(&u, &d, sizeof(u));

	u = (u >> 63) ? ~u : (u | (UINT64CONST(1) << 63));
	return (int64) (u ^ (UINT64CONST(1) << 63));
}

double
gpuhash_float_unorder(int64 o)
{
	uint64		u = (uint64) o ^ (UINT64CONST(1) << 63);
	double		d;

	u = (u >> 63) ? (u & ~(UINT64CONST(1) << 63)) : ~u;
	memcpy(&d, &u, sizeof(d));
	return d;
}

/*
 * Exact join keys of several columns.  Each key column whose two sides'
 * types belong to one integer-like family (integers, oid, bool, date) takes
 * the wider of their packed widths, into which both sides' values fit; if
 * the columns fit 64 bits together, the join key is their exact encodings,
 * each cut to its width, side by side (gpuhash_exact_key_column), and equal
 * keys mean equal columns.  If widths and shifts are given, they receive
 * each column's width and position.  A single column of any exact family
 * is exact whole (width 64).
 */
bool
gpuhash_exact_key_layout(int nkeys, const Oid *otypes, const Oid *itypes, int *widths,
						 int *shifts)
{
	int			total = 0;

	for (int i = 0; i < nkeys; i++)
	{
		GpuHashExactFamily of = gpuhash_exact_family(otypes[i]);

		if (of == GHX_NONE || of != gpuhash_exact_family(itypes[i]))
			return false;
		if (nkeys == 1)
		{
			if (widths)
			{
				widths[0] = 64;
				shifts[0] = 0;
			}
			return true;
		}
		if (of != GHX_INTEGER && of != GHX_OID && of != GHX_BOOL && of != GHX_DATE)
			return false;
		if (widths)
		{
			widths[i] = Max(gpuhash_key_bits(otypes[i]), gpuhash_key_bits(itypes[i]));
			shifts[i] = total;
		}
		total += Max(gpuhash_key_bits(otypes[i]), gpuhash_key_bits(itypes[i]));
	}
	return total <= 64;
}

/* One column of an exact join key, cut to its width and in its position. */
uint64
gpuhash_exact_key_column(GpuHashExactFamily family, Oid type, Datum value, int width,
						 int shift)
{
	uint64		bits = gpuhash_encode_exact(family, type, value);

	if (width < 64)
		bits &= (UINT64CONST(1) << width) - 1;
	return bits << shift;
}
