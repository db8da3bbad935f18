/*-------------------------------------------------------------------------
 *
 * star_dim_filter.c
 *	  A GpuStarAgg's dimension filtered, as it is read, by the keys of a
 *	  smaller dimension joined on the same fact key (star_path.c,
 *	  dim_filters, says which and why).
 *
 * INTERFACE ROUTINES
 *		star_dim_next_to_read	the order of reading: a filter's source first
 *		star_dim_filter_begin	the filter of dimension d's rows, where its
 *								source is known to this process
 *		star_dim_filter_share	a source's filter in shared memory, for the
 *								processes reading shares of what it filters
 *		star_dim_filters_free	... freed before the next execution
 *
 * The filter is join_filter.c's Bloom filter of the source's keys, the
 * engine's exact encodings that the device compares with the fact table's:
 * no row that can join is left out, and a row let through falsely (about
 * one in 70 of those that cannot join) only goes on to the device, whose
 * probe of the source then drops every fact row that meets it.  It is used
 * only where the source as read holds at most half the rows the planner
 * estimated for what it filters; else checking every row costs more than
 * the rows it would leave out.
 *
 * In a parallel star the sources are dimensions the leader reads before any
 * worker starts (star_exec.c, init_shared); a dimension read in shares by
 * every process gets its source's filter from the leader through the DSA
 * area.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "star_state.h"

/*
 * The next dimension to read among those not yet marked in read (which it
 * marks), a filter's source before what it filters; -1 once all are.
 * Sources are strictly smaller than what they filter, so no two wait for
 * each other.
 */
int
star_dim_next_to_read(GpuStarAggState *s, bool *read)
{
	for (int d = 0; d < s->ndims; d++)
	{
		int			source = s->dims[d].filter_source;

		if (read[d] || (source >= 0 && !read[source]))
			continue;
		read[d] = true;
		return d;
	}
	for (int d = 0; d < s->ndims; d++)
		if (!read[d])
		{
			read[d] = true;		/* not reached: no cycle */
			return d;
		}
	return -1;
}

/* Whether the source's rows as read are few enough to be worth filtering d by. */
static bool
worth_it(const StarDimState *dim, uint64 source_rows)
{
	return (double) source_rows <= dim->est_rows / 2;
}

/*
 * The filter of dimension d's rows for this execution: from its source's
 * keys where this process read the source whole, else from the leader's
 * filter in shared memory, else none.
 */
void
star_dim_filter_begin(GpuStarAggState *s, int d)
{
	StarDimState *dim = &s->dims[d];
	int			source = dim->filter_source;
	StarShared *sh = s->shared;

	dim->filtering = false;
	dim->removed = 0;
	if (source < 0)
		return;
	if (s->dims[source].complete)
	{
		StarDimArrays *a = &s->dims[source].arrays;

		if (!worth_it(dim, a->n))
			return;
		gpuhash_filter_build(&dim->filter, a->keys, (int64) a->n);
		dim->filtering = true;
	}
	else if (sh != NULL && s->area != NULL && DsaPointerIsValid(sh->filter_bits[source]))
	{
		dim->filter.bits = dsa_get_address(s->area, sh->filter_bits[source]);
		dim->filter.mask = sh->filter_mask[source];
		dim->filtering = true;
	}
}

/*
 * The leader has read dimension source whole: where a dimension that every
 * process reads a share of is filtered by it, its filter goes into the DSA
 * area for them.
 */
void
star_dim_filter_share(GpuStarAggState *s, int source)
{
	StarShared *sh = s->shared;
	StarDimArrays *a = &s->dims[source].arrays;
	bool		wanted = false;
	GhjFilter	f;
	Size		bytes;

	if (sh == NULL || s->area == NULL)
		return;
	for (int d = 0; d < s->ndims; d++)
		wanted |= s->dims[d].partial && s->dims[d].filter_source == source &&
			worth_it(&s->dims[d], a->n);
	if (!wanted)
		return;
	gpuhash_filter_build(&f, a->keys, (int64) a->n);
	bytes = (Size) ((f.mask + 1) / 8);
	sh->filter_bits[source] = dsa_allocate_extended(s->area, bytes, DSA_ALLOC_HUGE);
	memcpy(dsa_get_address(s->area, sh->filter_bits[source]), f.bits, bytes);
	sh->filter_mask[source] = f.mask;
	pfree(f.bits);
}

/* The shared filters freed (the leader, before the next execution). */
void
star_dim_filters_free(GpuStarAggState *s)
{
	StarShared *sh = s->shared;

	if (sh == NULL || s->area == NULL)
		return;
	for (int d = 0; d < s->ndims; d++)
		if (DsaPointerIsValid(sh->filter_bits[d]))
		{
			dsa_free(s->area, sh->filter_bits[d]);
			sh->filter_bits[d] = InvalidDsaPointer;
		}
}
