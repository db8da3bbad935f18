/*-------------------------------------------------------------------------
 *
 * star_dim_rows.c
 *	  The grouping values of a GpuStarAgg dimension with a group per row:
 *	  kept row by row, serialized, without a dictionary.
 *
 * INTERFACE ROUTINES
 *		star_dim_rows_create	an empty store for some grouping columns
 *		star_dim_rows_append	one row's values: its code is its number
 *		star_dim_rows_add		rows serialized elsewhere (another process's share)
 *		star_dim_rows_value		a grouping column's value of a code
 *
 * A dimension whose key is one of its grouping columns has a group per row
 * (star_exec.c, key_is_grouped): its rows' values all differ, so no
 * dictionary is needed to find equal ones.  Each row's values are written
 * one after another as datumSerialize writes them (the form in which a
 * process's share of a dimension travels, star_dim_share.c), with each
 * row's offset; a value is read back only when a group is returned, which
 * for most such dimensions is a small part of their rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "star_state.h"

StarDimRows *
star_dim_rows_create(List *types, MemoryContext cxt)
{
	StarDimRows *r = MemoryContextAllocZero(cxt, sizeof(StarDimRows));
	int			i = 0;
	ListCell   *lc;

	r->ncols = list_length(types);
	r->byval = MemoryContextAlloc(cxt, sizeof(bool) * Max(r->ncols, 1));
	r->len = MemoryContextAlloc(cxt, sizeof(int16) * Max(r->ncols, 1));
	foreach(lc, types)
	{
		get_typlenbyval(lfirst_oid(lc), &r->len[i], &r->byval[i]);
		i++;
	}
	r->vals = MemoryContextAlloc(cxt, sizeof(Datum) * Max(r->ncols, 1));
	r->nulls = MemoryContextAlloc(cxt, sizeof(bool) * Max(r->ncols, 1));
	r->cxt = cxt;
	r->valcxt = AllocSetContextCreate(cxt, "GpuStarAgg grouping values", ALLOCSET_SMALL_SIZES);
	r->cur = -1;
	return r;
}

/* room for n more bytes and rows more offsets */
static void
reserve(StarDimRows *r, Size n, uint64 rows)
{
	if (r->used + n > r->cap)
	{
		Size		cap = Max(r->cap * 2, Max(r->used + n, 65536));

		r->buf = r->buf ? repalloc_huge(r->buf, cap) :
			MemoryContextAllocHuge(r->cxt, cap);
		r->cap = cap;
	}
	if (r->n + rows > r->cap_rows)
	{
		uint64		cap = Max(r->cap_rows * 2, Max(r->n + rows, 4096));

		r->offsets = r->offsets ? repalloc_huge(r->offsets, sizeof(Size) * cap) :
			MemoryContextAllocHuge(r->cxt, sizeof(Size) * cap);
		r->cap_rows = cap;
	}
}

/* the next row's values; its code */
uint32
star_dim_rows_append(StarDimRows *r, const Datum *vals, const bool *nulls)
{
	Size		n = 0;
	char	   *p;

	if (r->n >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("GpuStarAgg cannot form more than %u groups of a dimension",
						PG_UINT32_MAX)));
	for (int c = 0; c < r->ncols; c++)
		n += datumEstimateSpace(vals[c], nulls[c], r->byval[c], r->len[c]);
	reserve(r, n, 1);
	p = r->buf + r->used;
	for (int c = 0; c < r->ncols; c++)
		datumSerialize(vals[c], nulls[c], r->byval[c], r->len[c], &p);
	r->offsets[r->n] = r->used;
	r->used += n;
	return (uint32) r->n++;
}

/* the bytes of one serialized value at p (datumSerialize's header, then its data) */
static Size
serialized_size(const char *p)
{
	int			header;

	memcpy(&header, p, sizeof(int));
	if (header == -2)
		return sizeof(int);		/* NULL */
	if (header == -1)
		return sizeof(int) + sizeof(Datum); /* by value */
	return sizeof(int) + header;
}

/*
 * rows rows serialized at *p (as star_dim_rows_append writes them, by this
 * or another process), appended after the rows there; *p is moved past them.
 */
void
star_dim_rows_add(StarDimRows *r, char **p, uint64 rows)
{
	Size		at = 0;
	Size		first = r->used;

	reserve(r, 0, rows);
	for (uint64 i = 0; i < rows; i++)
	{
		r->offsets[r->n + i] = first + at;
		for (int c = 0; c < r->ncols; c++)
			at += serialized_size(*p + at);
	}
	reserve(r, at, 0);
	memcpy(r->buf + r->used, *p, at);
	*p += at;
	r->used += at;
	r->n += rows;
}

/* grouping column col of code's row (valid until another code's is read) */
Datum
star_dim_rows_value(StarDimRows *r, uint32 code, int col, bool *isnull)
{
	if ((uint64) code >= r->n)
		elog(ERROR, "gpuhash: a GpuStarAgg group names row %u of a dimension of " UINT64_FORMAT,
			 code, r->n);
	if (r->cur != (int64) code)
	{
		char	   *p = r->buf + r->offsets[code];
		MemoryContext old;

		MemoryContextReset(r->valcxt);
		old = MemoryContextSwitchTo(r->valcxt);
		for (int c = 0; c < r->ncols; c++)
			r->vals[c] = datumRestore(&p, &r->nulls[c]);
		MemoryContextSwitchTo(old);
		r->cur = code;
	}
	*isnull = r->nulls[col];
	return r->vals[col];
}
