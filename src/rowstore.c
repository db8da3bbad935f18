/*-------------------------------------------------------------------------
 *
 * rowstore.c
 *	  Columnar copies of the columns a node needs from its input rows
 *	  (see rowstore.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/datum.h"
#include "utils/memutils.h"

#include "rowstore.h"

void
gpuhash_rowstore_init(GpuHashRowStore *rs, TupleDesc desc,
					  const AttrNumber *attnos, int ncols, MemoryContext cxt)
{
	rs->ncols = ncols;
	rs->attnos = palloc(sizeof(AttrNumber) * Max(ncols, 1));
	rs->typlen = palloc(sizeof(int16) * Max(ncols, 1));
	rs->typbyval = palloc(sizeof(bool) * Max(ncols, 1));
	for (int c = 0; c < ncols; c++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, attnos[c] - 1);

		rs->attnos[c] = attnos[c];
		rs->typlen[c] = att->attlen;
		rs->typbyval[c] = att->attbyval;
	}
	rs->cxt = cxt;
	gpuhash_rowstore_clear(rs);
}

void
gpuhash_rowstore_clear(GpuHashRowStore *rs)
{
	rs->values = NULL;
	rs->isnull = NULL;
	rs->nrows = 0;
	rs->cap = 0;
}

void
gpuhash_rowstore_add(GpuHashRowStore *rs, TupleTableSlot *slot)
{
	MemoryContext old = MemoryContextSwitchTo(rs->cxt);
	int64		base;

	if (rs->nrows == rs->cap)
	{
		int64		cap = rs->cap ? rs->cap * 2 : 1024;
		Size		n = (Size) cap * Max(rs->ncols, 1);

		rs->values = rs->values ? repalloc_huge(rs->values, n * sizeof(Datum))
			: MemoryContextAllocHuge(rs->cxt, n * sizeof(Datum));
		rs->isnull = rs->isnull ? repalloc_huge(rs->isnull, n * sizeof(bool))
			: MemoryContextAllocHuge(rs->cxt, n * sizeof(bool));
		rs->cap = cap;
	}
	base = rs->nrows * rs->ncols;
	slot_getallattrs(slot);
	for (int c = 0; c < rs->ncols; c++)
	{
		int			a = rs->attnos[c] - 1;
		bool		null = slot->tts_isnull[a];

		rs->isnull[base + c] = null;
		rs->values[base + c] = (null || rs->typbyval[c]) ? slot->tts_values[a]
			: datumCopy(slot->tts_values[a], false, rs->typlen[c]);
	}
	rs->nrows++;
	MemoryContextSwitchTo(old);
}
