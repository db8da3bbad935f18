/*-------------------------------------------------------------------------
 *
 * star_dim_share.c
 *	  A parallel GpuStarAgg's dimensions read by every process: each
 *	  process's share published in the query's DSA area, and merged by the
 *	  one process that makes the star.
 *
 * INTERFACE ROUTINES
 *		star_dim_publish		this process's rows of a dimension, into a chunk
 *		star_dim_merge			every chunk of a dimension, into one set of arrays
 *		star_dim_chunks_free	what an interrupted execution left
 *
 * A dimension that is one table with a partial plan (a Parallel Seq Scan of
 * part, say) is read by every process of the query, each the rows its share
 * of the blocks holds (star_read_dim), with its own dictionary of grouping
 * values.  Each process then publishes what it read as one chunk: the keys,
 * every payload and code column as the star reads them, the values of its
 * dictionary in code order (datumSerialize), and the scales its numeric
 * payloads were read at.  The process that makes the star merges the
 * chunks: one dictionary for the dimension, each chunk's codes mapped to
 * it, the arrays concatenated.  The leader also publishes the dimensions it
 * read alone when a worker is to make the star (parallel_leader_participation
 * off).  The protocol (who reads, who merges, when) is star_exec.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpuhash.h"
#include "star_state.h"

/* one process's share of a dimension, followed by its arrays and values */
typedef struct DimChunk
{
	dsa_pointer next;
	uint64		n;				/* rows kept (a NULL key joins nothing) */
	int64		rows;			/* rows read */
	int64		removed;		/* of them, left out by a filter (star_dim_filter.c) */
	int			ncols;
	int			ncodes;			/* its dictionary's entries */
	Size		values_size;	/* their serialized values */
	bool		has_hi[GH_PROG_MAX_DIMCOLS];
	bool		has_dscale[GH_PROG_MAX_DIMCOLS];
	bool		has_nulls[GH_PROG_MAX_DIMCOLS];
	int			scale[GH_PROG_MAX_DIMCOLS]; /* each payload's static scale */
	int			digits[GH_PROG_MAX_DIMCOLS];
} DimChunk;

/* the arrays' places in a chunk: 8-byte ones first, then bytes, then values */
typedef struct ChunkLayout
{
	Size		keys;
	Size		lo[GH_PROG_MAX_DIMCOLS];
	Size		hi[GH_PROG_MAX_DIMCOLS];
	Size		dscale[GH_PROG_MAX_DIMCOLS];
	Size		nulls[GH_PROG_MAX_DIMCOLS];
	Size		values;
	Size		total;
} ChunkLayout;

static void
layout(const DimChunk *c, ChunkLayout *l)
{
	Size		off = MAXALIGN(sizeof(DimChunk));
	Size		n8 = sizeof(int64) * c->n;

	l->keys = off;
	off += n8;
	for (int k = 0; k < c->ncols; k++)
	{
		l->lo[k] = off;
		off += n8;
		l->hi[k] = off;
		off += c->has_hi[k] ? n8 : 0;
	}
	for (int k = 0; k < c->ncols; k++)
	{
		l->dscale[k] = off;
		off += c->has_dscale[k] ? c->n : 0;
		l->nulls[k] = off;
		off += c->has_nulls[k] ? c->n : 0;
	}
	l->values = off;
	l->total = off + c->values_size;
}

/* the payloads of dimension d, by their column */
static StarPayload *
payload_of(GpuStarAggState *s, int d, int col)
{
	for (int p = 0; p < s->npayloads; p++)
		if (s->payloads[p].dim == d && s->payloads[p].col == col)
			return &s->payloads[p];
	return NULL;
}

/* Publish this process's rows of dimension d (read by star_read_dim). */
void
star_dim_publish(GpuStarAggState *s, int d)
{
	StarShared *sh = s->shared;
	StarDimState *dim = &s->dims[d];
	StarDimArrays *a = &dim->arrays;
	DimChunk	head = {0};
	ChunkLayout l;
	dsa_pointer dp;
	char	   *base;
	char	   *p;

	head.n = a->n;
	head.rows = dim->rows;
	head.removed = dim->removed;
	head.ncols = a->ncols;
	head.ncodes = dim->ncodes;
	for (int k = 0; k < a->ncols; k++)
	{
		StarPayload *pl = payload_of(s, d, k);

		head.has_hi[k] = a->hi[k] != NULL;
		head.has_dscale[k] = a->dscale[k] != NULL;
		head.has_nulls[k] = a->nulls[k] != NULL;
		head.scale[k] = pl ? pl->scale : 0;
		head.digits[k] = pl ? pl->digits : 0;
	}
	head.values_size = star_dim_values(dim, NULL);
	layout(&head, &l);

	dp = dsa_allocate_extended(s->area, l.total, DSA_ALLOC_HUGE);
	base = dsa_get_address(s->area, dp);
	memcpy(base, &head, sizeof(head));
	if (a->n > 0)
	{
		memcpy(base + l.keys, a->keys, sizeof(int64) * a->n);
		for (int k = 0; k < a->ncols; k++)
		{
			memcpy(base + l.lo[k], a->lo[k], sizeof(int64) * a->n);
			if (head.has_hi[k])
				memcpy(base + l.hi[k], a->hi[k], sizeof(int64) * a->n);
			if (head.has_dscale[k])
				memcpy(base + l.dscale[k], a->dscale[k], a->n);
			if (head.has_nulls[k])
				memcpy(base + l.nulls[k], a->nulls[k], a->n);
		}
	}
	p = base + l.values;
	(void) star_dim_values(dim, &p);

	SpinLockAcquire(&sh->mutex);
	((DimChunk *) base)->next = sh->dim_chunks[d];
	sh->dim_chunks[d] = dp;
	SpinLockRelease(&sh->mutex);
}

/*
 * Dimension d made of every chunk published for it: its arrays, one
 * dictionary, its rows.  The chunks are freed.
 */
void
star_dim_merge(GpuStarAggState *s, int d)
{
	StarShared *sh = s->shared;
	StarDimState *dim = &s->dims[d];
	StarDimArrays *a = &dim->arrays;
	dsa_pointer first,
				dp;
	uint64		total = 0,
				r = 0;
	int			ncols = dim->npayload + (dim->ngroups > 0 ? 1 : 0);
	bool		hi[GH_PROG_MAX_DIMCOLS] = {0};
	bool		dscale[GH_PROG_MAX_DIMCOLS] = {0};

	SpinLockAcquire(&sh->mutex);
	first = sh->dim_chunks[d];
	sh->dim_chunks[d] = InvalidDsaPointer;
	SpinLockRelease(&sh->mutex);

	for (dp = first; DsaPointerIsValid(dp);)
	{
		DimChunk   *c = dsa_get_address(s->area, dp);

		if (c->ncols != ncols)
			elog(ERROR, "gpuhash: a GpuStarAgg's dimension \"%s\" was read differently by two processes",
				 dim->name);
		total += c->n;
		for (int k = 0; k < ncols; k++)
		{
			hi[k] |= c->has_hi[k];
			dscale[k] |= c->has_dscale[k];
		}
		dp = c->next;
	}

	memset(a, 0, sizeof(*a));
	a->ncols = ncols;
	a->keys = palloc_extended(sizeof(int64) * Max(total, 1), MCXT_ALLOC_HUGE);
	for (int k = 0; k < ncols; k++)
	{
		a->lo[k] = palloc_extended(sizeof(int64) * Max(total, 1), MCXT_ALLOC_HUGE);
		a->nulls[k] = palloc_extended(Max(total, 1), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		if (hi[k])
			a->hi[k] = palloc_extended(sizeof(int64) * Max(total, 1), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		if (dscale[k])
			a->dscale[k] = palloc_extended(Max(total, 1), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	}
	star_dim_groups_init(s, d);
	dim->rows = 0;
	dim->removed = 0;

	for (dp = first; DsaPointerIsValid(dp);)
	{
		char	   *base = dsa_get_address(s->area, dp);
		DimChunk   *c = (DimChunk *) base;
		ChunkLayout l;
		uint32	   *map = palloc(sizeof(uint32) * Max(c->ncodes, 1));
		char	   *p;
		dsa_pointer next = c->next;

		CHECK_FOR_INTERRUPTS();
		layout(c, &l);
		/* its codes as the merged dictionary's */
		p = base + l.values;
		star_dim_values_add(dim, &p, c->ncodes, map);
		if (c->n > 0)
		{
			memcpy(a->keys + r, base + l.keys, sizeof(int64) * c->n);
			for (int k = 0; k < ncols; k++)
			{
				memcpy(a->lo[k] + r, base + l.lo[k], sizeof(int64) * c->n);
				if (c->has_hi[k])
					memcpy(a->hi[k] + r, base + l.hi[k], sizeof(int64) * c->n);
				if (c->has_dscale[k])
					memcpy(a->dscale[k] + r, base + l.dscale[k], c->n);
				if (c->has_nulls[k])
					memcpy(a->nulls[k] + r, base + l.nulls[k], c->n);
			}
			if (dim->ngroups > 0)
			{
				int64	   *codes = a->lo[dim->npayload] + r;

				for (uint64 i = 0; i < c->n; i++)
				{
					if (codes[i] < 0 || codes[i] >= c->ncodes)
						elog(ERROR, "gpuhash: a GpuStarAgg's dimension \"%s\" has a code out of range",
							 dim->name);
					codes[i] = map[codes[i]];
				}
			}
		}
		for (int k = 0; k < dim->npayload; k++)
		{
			StarPayload *pl = payload_of(s, d, k);

			if (pl != NULL)
			{
				pl->scale = c->scale[k];
				pl->digits = c->digits[k];
			}
		}
		r += c->n;
		dim->rows += c->rows;
		dim->removed += c->removed;
		pfree(map);
		dsa_free(s->area, dp);
		dp = next;
	}
	a->n = total;

	star_dim_finish(dim);
}

/* The chunks an execution that ended early left in the area. */
void
star_dim_chunks_free(GpuStarAggState *s)
{
	StarShared *sh = s->shared;

	if (sh == NULL || s->area == NULL)
		return;
	for (int d = 0; d < s->ndims && d < GH_PROG_MAX_DIMS; d++)
	{
		dsa_pointer dp = sh->dim_chunks[d];

		while (DsaPointerIsValid(dp))
		{
			dsa_pointer next = ((DimChunk *) dsa_get_address(s->area, dp))->next;

			dsa_free(s->area, dp);
			dp = next;
		}
		sh->dim_chunks[d] = InvalidDsaPointer;
	}
}
