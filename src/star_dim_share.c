/*-------------------------------------------------------------------------
 *
 * star_dim_share.c
 *	  A parallel GpuStarAgg's dimensions read by every process: each
 *	  process's share published in a segment of its own, and taken as they
 *	  lie by the one process that makes the star.
 *
 * INTERFACE ROUTINES
 *		star_dims_publish		this process's rows of dimensions, into chunks
 *		star_dim_merge			every chunk of a dimension: one dictionary, the
 *								chunks as the parts of its rows
 *		star_dim_chunks_free	what an interrupted execution left
 *		star_dim_shares_detach	the chunks this process maps, let go of
 *
 * A dimension that is one table with a partial plan (a Parallel Seq Scan of
 * part, say) is read by every process of the query, each the rows its share
 * of the blocks holds (star_read_dim), with its own dictionary of grouping
 * values.  Each process then publishes what it read as one chunk a
 * dimension, its chunks together in one DSM segment of its own (a segment
 * a process: a server's segments are limited): the keys, every payload and
 * code column as the star reads them, the values of its dictionary in code
 * order (datumSerialize), and the scales its numeric payloads were read
 * at.  The process that makes
 * the star merges the chunks' dictionaries into one for the dimension and
 * rewrites each chunk's codes as that one's, in place; the chunks' arrays
 * are not copied, but become the parts of the dimension's rows
 * (StarDimArrays.parts), which the GPU service maps and copies onto the
 * device one after another (gh_dim_create_parts).  So a dimension of ten
 * million rows is copied once on the host (into its chunks, by every
 * process at once), not three times more by one.  A semi join's keys are
 * made distinct first, so its chunks are still concatenated.
 *
 * Every process keeps the chunks it made or mapped until its execution
 * ends (star_dim_shares_detach, from the node's memory context callback):
 * a chunk lives while any process maps it, so the maker's mappings keep
 * every chunk for as long as its star may have to be made again on the CPU.
 * The leader also publishes the dimensions it read alone when a worker is to
 * make the star (parallel_leader_participation off).  The protocol (who
 * reads, who merges, when) is star_exec.c's.
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
	StarChunkRef next;			/* the chunk published before (handle 0: none) */
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

/* dimension d's chunk as this process read it: its header */
static DimChunk
chunk_head(GpuStarAggState *s, int d)
{
	StarDimState *dim = &s->dims[d];
	StarDimArrays *a = &dim->arrays;
	DimChunk	head = {0};

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
	return head;
}

/* dimension d's chunk written at base (laid out as l) */
static void
chunk_write(GpuStarAggState *s, int d, const DimChunk *head, const ChunkLayout *l, char *base)
{
	StarDimArrays *a = &s->dims[d].arrays;
	char	   *p;

	memcpy(base, head, sizeof(*head));
	if (a->n > 0)
	{
		memcpy(base + l->keys, a->keys, sizeof(int64) * a->n);
		for (int k = 0; k < a->ncols; k++)
		{
			memcpy(base + l->lo[k], a->lo[k], sizeof(int64) * a->n);
			if (head->has_hi[k])
				memcpy(base + l->hi[k], a->hi[k], sizeof(int64) * a->n);
			if (head->has_dscale[k])
				memcpy(base + l->dscale[k], a->dscale[k], a->n);
			if (head->has_nulls[k])
				memcpy(base + l->nulls[k], a->nulls[k], a->n);
		}
	}
	p = base + l->values;
	(void) star_dim_values(&s->dims[d], &p);
}

/*
 * Publish this process's rows of the dimensions marked in which (read by
 * star_read_dim): their chunks one after another in one segment, so that a
 * query takes a segment a process, not one a process and dimension (the
 * segments a server may have at once are limited).
 */
void
star_dims_publish(GpuStarAggState *s, const bool *which)
{
	StarShared *sh = s->shared;
	DimChunk   *heads = palloc0(sizeof(DimChunk) * Max(s->ndims, 1));
	ChunkLayout *layouts = palloc0(sizeof(ChunkLayout) * Max(s->ndims, 1));
	Size	   *at = palloc0(sizeof(Size) * Max(s->ndims, 1));
	Size		total = 0;
	dsm_segment *seg;
	MemoryContext old;
	char	   *base;

	for (int d = 0; d < s->ndims; d++)
		if (which[d])
		{
			heads[d] = chunk_head(s, d);
			layout(&heads[d], &layouts[d]);
			at[d] = total;
			total += MAXALIGN(layouts[d].total);
		}
	if (total == 0)
		return;
	seg = dsm_create(total, 0);
	dsm_pin_mapping(seg);
	old = MemoryContextSwitchTo(s->cxt);
	s->share_segs = lappend(s->share_segs, seg);
	MemoryContextSwitchTo(old);
	base = dsm_segment_address(seg);
	for (int d = 0; d < s->ndims; d++)
		if (which[d])
			chunk_write(s, d, &heads[d], &layouts[d], base + at[d]);

	SpinLockAcquire(&sh->mutex);
	for (int d = 0; d < s->ndims; d++)
		if (which[d])
		{
			((DimChunk *) (base + at[d]))->next = sh->dim_chunks[d];
			sh->dim_chunks[d] = (StarChunkRef) {dsm_segment_handle(seg), at[d]};
		}
	SpinLockRelease(&sh->mutex);
	pfree(heads);
	pfree(layouts);
	pfree(at);
}

/* the segment of chunk ref, mapped in this process (and kept so) */
static char *
segment_of(GpuStarAggState *s, StarChunkRef ref)
{
	dsm_segment *seg = dsm_find_mapping(ref.handle);

	if (seg == NULL)
	{
		MemoryContext old;

		seg = dsm_attach(ref.handle);
		if (seg == NULL)
			elog(ERROR, "gpuhash: a GpuStarAgg's dimension share is gone");
		dsm_pin_mapping(seg);
		old = MemoryContextSwitchTo(s->cxt);
		s->share_segs = lappend(s->share_segs, seg);
		MemoryContextSwitchTo(old);
	}
	return dsm_segment_address(seg);
}

/* the chunk ref names */
static DimChunk *
chunk_of(GpuStarAggState *s, StarChunkRef ref)
{
	return (DimChunk *) (segment_of(s, ref) + ref.offset);
}

/*
 * The codes of chunk c's rows as the merged dictionary's (map), rewritten
 * in place; each checked.
 */
static void
map_codes(StarDimState *dim, const DimChunk *c, int64 *codes, const uint32 *map)
{
	bool		same = true;

	for (int i = 0; i < c->ncodes && same; i++)
		same = map[i] == (uint32) i;
	for (uint64 i = 0; i < c->n; i++)
	{
		if (codes[i] < 0 || codes[i] >= c->ncodes)
			elog(ERROR, "gpuhash: a GpuStarAgg's dimension \"%s\" has a code out of range",
				 dim->name);
		if (!same)
			codes[i] = map[codes[i]];
	}
}

/*
 * Dimension d made of every chunk published for it: one dictionary, its
 * rows (the chunks as its parts, or for a semi join its keys concatenated),
 * its payloads' scales.
 */
void
star_dim_merge(GpuStarAggState *s, int d)
{
	StarShared *sh = s->shared;
	StarDimState *dim = &s->dims[d];
	StarDimArrays *a = &dim->arrays;
	StarChunkRef first,
				ref;
	uint64		total = 0,
				r = 0;
	int			nchunks = 0;
	int			ncols = dim->npayload + (dim->ngroups > 0 ? 1 : 0);

	SpinLockAcquire(&sh->mutex);
	first = sh->dim_chunks[d];
	sh->dim_chunks[d] = (StarChunkRef) {DSM_HANDLE_INVALID, 0};
	SpinLockRelease(&sh->mutex);

	for (ref = first; ref.handle != DSM_HANDLE_INVALID;)
	{
		DimChunk   *c = chunk_of(s, ref);

		if (c->ncols != ncols || (dim->semi && ncols != 0))
			elog(ERROR, "gpuhash: a GpuStarAgg's dimension \"%s\" was read differently by two processes",
				 dim->name);
		total += c->n;
		nchunks++;
		ref = c->next;
	}

	memset(a, 0, sizeof(*a));
	a->ncols = ncols;
	a->n = total;
	if (dim->semi)
		a->keys = palloc_extended(sizeof(int64) * Max(total, 1), MCXT_ALLOC_HUGE);
	else
	{
		a->parts = palloc0(sizeof(GhsStarPart) * Max(nchunks, 1));
		a->base = palloc0(sizeof(char *) * Max(nchunks, 1));
	}
	star_dim_groups_init(s, d);
	dim->rows = 0;
	dim->removed = 0;

	for (ref = first; ref.handle != DSM_HANDLE_INVALID;)
	{
		DimChunk   *c = chunk_of(s, ref);
		char	   *base = (char *) c;
		ChunkLayout l;
		uint32	   *map = palloc(sizeof(uint32) * Max(c->ncodes, 1));
		char	   *p;

		CHECK_FOR_INTERRUPTS();
		layout(c, &l);
		/* its codes as the merged dictionary's */
		p = base + l.values;
		star_dim_values_add(dim, &p, c->ncodes, map);
		if (dim->ngroups > 0)
			map_codes(dim, c, (int64 *) (base + l.lo[dim->npayload]), map);
		if (dim->semi)
			memcpy(a->keys + r, base + l.keys, sizeof(int64) * c->n);
		else if (c->n > 0)
		{
			GhsStarPart *part = &a->parts[a->nparts];

			/* where its arrays lie in its segment */
			part->handle = ref.handle;
			part->n = c->n;
			part->keys = ref.offset + l.keys;
			for (int k = 0; k < ncols; k++)
			{
				part->lo[k] = ref.offset + l.lo[k];
				part->hi[k] = c->has_hi[k] ? ref.offset + l.hi[k] : 0;
				part->nulls[k] = c->has_nulls[k] ? ref.offset + l.nulls[k] : 0;
				part->dscale[k] = c->has_dscale[k] ? ref.offset + l.dscale[k] : 0;
			}
			a->base[a->nparts++] = base - ref.offset;
		}
		r += c->n;
		for (int k = 0; k < dim->npayload; k++)
		{
			StarPayload *pl = payload_of(s, d, k);

			if (pl != NULL)
			{
				pl->scale = c->scale[k];
				pl->digits = c->digits[k];
			}
		}
		dim->rows += c->rows;
		dim->removed += c->removed;
		pfree(map);
		ref = c->next;
	}

	star_dim_finish(dim);
}

/* The chunks an execution that ended early left published: none now. */
void
star_dim_chunks_free(GpuStarAggState *s)
{
	StarShared *sh = s->shared;

	if (sh == NULL)
		return;
	for (int d = 0; d < s->ndims && d < GH_PROG_MAX_DIMS; d++)
		sh->dim_chunks[d] = (StarChunkRef) {DSM_HANDLE_INVALID, 0};
}

/*
 * The chunks this process published or mapped, let go of (the node's
 * execution has ended: its star, which may read them, is freed first).
 */
void
star_dim_shares_detach(GpuStarAggState *s)
{
	ListCell   *lc;

	foreach(lc, s->share_segs)
		dsm_detach(lfirst(lc));
	s->share_segs = NIL;
}
