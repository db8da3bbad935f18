/*-------------------------------------------------------------------------
 *
 * keys.h
 *	  Turning SQL join and grouping keys into the engine's 64-bit words.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_KEYS_H
#define GPUHASH_KEYS_H

#include "postgres.h"
#include "fmgr.h"

/*
 * Families of types whose values map one-to-one onto 64-bit words, so that
 * equal words mean equal SQL values: a match on the device is a match.
 * Types of one family compare with each other exactly (int4 = int8).
 */
typedef enum GpuHashExactFamily
{
	GHX_NONE = 0,				/* not exact: use the hashed encoding */
	GHX_INTEGER,				/* int2, int4, int8 */
	GHX_FLOAT,					/* float4, float8: -0 = 0, all NaNs equal */
	GHX_OID,
	GHX_BOOL,
	GHX_DATE,
	GHX_TIME,
	GHX_TIMESTAMP,
	GHX_TIMESTAMPTZ
} GpuHashExactFamily;

extern GpuHashExactFamily gpuhash_exact_family(Oid type);
extern uint64 gpuhash_encode_exact(GpuHashExactFamily family, Oid type, Datum value);
/* several exact join key columns packed side by side (keys.c) */
extern bool gpuhash_exact_key_layout(int nkeys, const Oid *otypes, const Oid *itypes,
									 int *widths, int *shifts);
extern uint64 gpuhash_exact_key_column(GpuHashExactFamily family, Oid type, Datum value,
									   int width, int shift);

/*
 * The hashed encoding: the 64-bit extended hash (hash support function 2)
 * of each key column, combined.  Equal keys give equal words; the converse
 * does not hold, so every match must be rechecked with the real equality.
 */
extern Oid	gpuhash_extended_hash_proc(Oid eqop, Oid type);
extern bool gpuhash_collation_ok(Oid collation);
extern uint64 gpuhash_combine_hash(uint64 acc, uint64 h, int column);


/*
 * Grouping keys: each exact-family column packs into a fixed number of bits
 * (bool 1, int2 16, int4/oid/date/float4 32, the rest 64), and a multi-column
 * key is exact when its columns fit in 64 bits together.  Unpacking gives
 * back a Datum equal (by the type's equality) to every value of the group.
 */
extern int	gpuhash_key_bits(Oid type);
extern uint64 gpuhash_pack_key(Oid type, Datum value);
extern Datum gpuhash_unpack_key(Oid type, uint64 bits);

/* An int64 whose order is float8 order, NaN last (min/max of floats). */
extern int64 gpuhash_float_order(double d);
extern double gpuhash_float_unorder(int64 o);

#endif							/* GPUHASH_KEYS_H */
