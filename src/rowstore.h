/*-------------------------------------------------------------------------
 *
 * rowstore.h
 *	  Columnar copies of the columns a node needs from its input rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_ROWSTORE_H
#define GPUHASH_ROWSTORE_H

#include "postgres.h"
#include "access/tupdesc.h"
#include "executor/tuptable.h"

/*
 * Rows kept for later (the inner side of a join, an outer chunk): only the
 * needed columns, as Datums row after row, by-reference values copied into
 * cxt.  Cheaper to fill and to read back than whole tuples, which would be
 * formed once and deformed again for every joined pair.
 */
typedef struct GpuHashRowStore
{
	int			ncols;
	AttrNumber *attnos;			/* input column of each stored column */
	int16	   *typlen;
	bool	   *typbyval;
	MemoryContext cxt;			/* holds the arrays and copied values */
	Datum	   *values;			/* nrows x ncols */
	bool	   *isnull;
	int64		nrows;
	int64		cap;
} GpuHashRowStore;

extern void gpuhash_rowstore_init(GpuHashRowStore *rs, TupleDesc desc,
								  const AttrNumber *attnos, int ncols,
								  MemoryContext cxt);
/* forget the rows; call after resetting rs->cxt, or before */
extern void gpuhash_rowstore_clear(GpuHashRowStore *rs);
extern void gpuhash_rowstore_add(GpuHashRowStore *rs, TupleTableSlot *slot);

#endif							/* GPUHASH_ROWSTORE_H */
