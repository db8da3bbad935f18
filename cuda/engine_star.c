/*-------------------------------------------------------------------------
 *
 * engine_star.c
 *	  The common layer of the star pipeline (engine.h, "the star
 *	  pipeline"): dimensions and stars, argument checks, their life,
 *	  interrupts and injected failures, dispatch to the backend.
 *
 * INTERFACE ROUTINES
 *		gh_dim_create, gh_dim_rows, gh_dim_free
 *		gh_star_create, gh_star_read, gh_star_read_named, gh_star_keep, gh_star_add,
 *		gh_star_result, gh_star_rows, gh_star_free
 *
 * gh_prog_check is engine_prog.c's; gh_star_create runs it.  The backends
 * (cpu_star.c, cuda_star.cu) hold the dimensions' tables, the rows of the
 * read waiting to be kept and the star's table of groups, on the engine's
 * first device.
 *
 * A star goes through batches: each gh_star_read is followed by its
 * gh_star_keep before the next read (a second read, or a keep without a
 * read, is GH_ERR_INVALID).  A read that fails keeps nothing and the star
 * goes on; a keep or add that fails may have aggregated part of its rows,
 * so the star is then broken: every later call but gh_star_free and
 * gh_star_rows fails.  A call cancelled by the interrupt before it starts
 * changes nothing (CHECK_INTERRUPT).
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/*
 * A backend call, or a failure injected in place of its first device
 * operation (which a failed keep or add is then taken to have done).
 */
#define BACKEND(e, call) \
	(gh_injected_failure((e), 0) ? (e)->inject_status : (call))

/* ---- dimensions ---- */

gh_status
gh_dim_create(gh_engine *e, const uint64_t *keys, size_t n, const gh_dimcol *cols, int ncols,
			  gh_dim **out)
{
	gh_dim	   *d;
	gh_status	st;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (out == NULL)
		return gh_fail(e, GH_ERR_INVALID, "gh_dim_create: missing argument");
	*out = NULL;
	if (ncols < 0 || ncols > GH_PROG_MAX_DIMCOLS)
		return gh_fail(e, GH_ERR_INVALID, "gh_dim_create: %d columns, at most %d", ncols,
					   GH_PROG_MAX_DIMCOLS);
	if ((n > 0 && keys == NULL) || (ncols > 0 && cols == NULL))
		return gh_fail(e, GH_ERR_INVALID, "gh_dim_create: missing argument");
	for (int c = 0; c < ncols && n > 0; c++)
		if (cols[c].lo == NULL)
			return gh_fail(e, GH_ERR_INVALID, "gh_dim_create: column %d has no values", c);
	if (n > UINT32_MAX)
		return gh_fail(e, GH_ERR_INVALID, "gh_dim_create: %zu rows, at most 2^32 - 1", n);
	CHECK_INTERRUPT(e);
	d = gh_calloc(e, 1, sizeof(gh_dim));
	if (d == NULL)
		return e->status;
	d->e = e;
	d->n = n;
	d->ncols = ncols;
	st = BACKEND(e, e->ops->dim_create(d, keys, cols));
	if (st != GH_OK)
	{
		gh_dim_free(d);
		return st;
	}
	*out = d;
	return GH_OK;
}

size_t
gh_dim_rows(const gh_dim *d)
{
	return d != NULL ? d->n : 0;
}

void
gh_dim_free(gh_dim *d)
{
	if (d == NULL)
		return;
	if (d->bstate != NULL)
		d->e->ops->dim_free(d);
	free(d);
}

/* ---- stars ---- */

gh_status
gh_star_create(gh_engine *e, const gh_prog *prog, const gh_pagespec *spec, gh_dim *const *dims,
			   int ndims, gh_star **out)
{
	int			dim_ncols[GH_PROG_MAX_DIMS];
	const char *why;
	gh_star    *s;
	gh_status	st;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (out != NULL)
		*out = NULL;
	if (out == NULL || prog == NULL || spec == NULL || (ndims > 0 && dims == NULL))
		return gh_fail(e, GH_ERR_INVALID, "gh_star_create: missing argument");
	if (ndims < 0 || ndims > GH_PROG_MAX_DIMS)
		return gh_fail(e, GH_ERR_INVALID, "gh_star_create: %d dimensions, at most %d", ndims,
					   GH_PROG_MAX_DIMS);
	for (int d = 0; d < ndims; d++)
	{
		if (dims[d] == NULL || dims[d]->e != e)
			return gh_fail(e, GH_ERR_INVALID, "gh_star_create: dimension %d is %s", d,
						   dims[d] == NULL ? "missing" : "another engine's");
		dim_ncols[d] = dims[d]->ncols;
	}
	GH_TRY_STATUS(gh_page_spec_check(e, spec, true, "gh_star_create"));
	if ((why = gh_prog_check(prog, spec, dim_ncols, ndims)) != NULL)
		return gh_fail(e, GH_ERR_INVALID, "gh_star_create: %s", why);
	CHECK_INTERRUPT(e);
	s = gh_calloc(e, 1, sizeof(gh_star));
	if (s == NULL)
		return e->status;
	s->e = e;
	s->prog = *prog;
	s->spec = *spec;
	s->ndims = ndims;
	for (int d = 0; d < ndims; d++)
		s->dims[d] = dims[d];
	for (int c = 0; c < prog->nouts; c++)
	{
		s->outs[c].type = (gh_valtype) prog->outs[c].type;
		s->outs[c].ops = prog->outs[c].ops;
	}
	st = BACKEND(e, e->ops->star_create(s));
	if (st != GH_OK)
	{
		gh_star_free(s);
		return st;
	}
	*out = s;
	return GH_OK;
}

/* GH_OK if s may take another call of fn */
static gh_status
star_usable(gh_star *s, const char *fn)
{
	if (s->broken)
		return gh_fail(s->e, GH_ERR_INVALID, "%s: an earlier keep or add of this star failed", fn);
	return GH_OK;
}

gh_status
gh_star_read(gh_star *s, const void *base, const uint32_t *pages, size_t npages, uint8_t *status)
{
	return gh_star_read_named(s, base, pages, NULL, npages, status);
}

/* The backend's read, through the page cache where the pages are named. */
static gh_status
read_pages(gh_star *s, const void *base, const uint32_t *pages, const gh_pagename *names,
		   size_t npages, uint8_t *status)
{
	gh_engine  *e = s->e;
	gh_pagecopy *copy = NULL;
	bool		planned = false;
	gh_status	st;

	if (names != NULL && e->pagecache != NULL)
	{
		copy = gh_malloc(e, npages * sizeof(gh_pagecopy));
		if (copy == NULL)
			return e->status;
		st = gh_page_cache_plan(s, names, npages, copy, &planned);
		if (st != GH_OK)
		{
			free(copy);
			return st;
		}
	}
	st = BACKEND(e, e->ops->star_read(s, base, pages, npages, planned ? copy : NULL, status));
	free(copy);
	if (st != GH_OK)
		gh_page_cache_settle(s, NULL, false);
	else
		for (size_t p = 0; planned && p < npages; p++)
			s->cache_ok[p] = status[p] == GH_STAR_PAGE_OK;
	return st;
}

gh_status
gh_star_read_named(gh_star *s, const void *base, const uint32_t *pages, const gh_pagename *names,
				   size_t npages, uint8_t *status)
{
	gh_engine  *e;

	if (s == NULL)
		return GH_ERR_INVALID;
	e = s->e;
	GH_TRY_STATUS(star_usable(s, "gh_star_read"));
	if (s->pending)
		return gh_fail(e, GH_ERR_INVALID, "gh_star_read: the previous read is not kept yet");
	if (npages > 0 && (base == NULL || pages == NULL || status == NULL))
		return gh_fail(e, GH_ERR_INVALID, "gh_star_read: missing argument");
	if (((uintptr_t) base) % 16 != 0)
		return gh_fail(e, GH_ERR_INVALID, "gh_star_read: pages not 16-byte aligned");
	if (npages > INT32_MAX / s->spec.max_tuples)
		return gh_fail(e, GH_ERR_INVALID, "gh_star_read: %zu pages are too many", npages);
	CHECK_INTERRUPT(e);
	if (npages > 0)
		GH_TRY_STATUS(read_pages(s, base, pages, names, npages, status));
	s->npages = npages;
	s->pending = true;
	return GH_OK;
}

gh_status
gh_star_keep(gh_star *s, const uint8_t *drop)
{
	gh_engine  *e;
	gh_status	st = GH_OK;

	if (s == NULL)
		return GH_ERR_INVALID;
	e = s->e;
	GH_TRY_STATUS(star_usable(s, "gh_star_keep"));
	if (!s->pending)
		return gh_fail(e, GH_ERR_INVALID, "gh_star_keep: no read to keep");
	CHECK_INTERRUPT(e);
	if (s->npages > 0)
		st = BACKEND(e, e->ops->star_keep(s, drop));
	gh_page_cache_settle(s, drop, st == GH_OK);
	s->pending = false;
	s->broken = st != GH_OK;
	return st;
}

gh_status
gh_star_add(gh_star *s, const uint64_t *keys, size_t n, const gh_aggcol *cols)
{
	gh_engine  *e;
	int			nouts;
	gh_status	st;

	if (s == NULL)
		return GH_ERR_INVALID;
	e = s->e;
	nouts = s->prog.nouts;
	GH_TRY_STATUS(star_usable(s, "gh_star_add"));
	if (n > 0 && (keys == NULL || (nouts > 0 && cols == NULL)))
		return gh_fail(e, GH_ERR_INVALID, "gh_star_add: missing argument");
	for (int c = 0; c < nouts && n > 0; c++)
	{
		if (cols[c].type != s->outs[c].type || cols[c].ops != s->outs[c].ops)
			return gh_fail(e, GH_ERR_INVALID,
						   "gh_star_add: column %d is not of the type and operations of output %d",
						   c, c);
		if (cols[c].values == NULL)
			return gh_fail(e, GH_ERR_INVALID, "gh_star_add: column %d has no values", c);
	}
	if (n == 0)
		return GH_OK;
	CHECK_INTERRUPT(e);
	st = BACKEND(e, e->ops->star_add(s, keys, n, cols));
	if (st != GH_OK)
	{
		s->broken = true;
		return st;
	}
	s->rows += n;
	return GH_OK;
}

gh_status
gh_star_result(gh_star *s, gh_groups **out)
{
	gh_engine  *e;
	gh_groups  *g = NULL;

	if (s == NULL)
		return GH_ERR_INVALID;
	e = s->e;
	if (out == NULL)
		return gh_fail(e, GH_ERR_INVALID, "gh_star_result: missing argument");
	*out = NULL;
	GH_TRY_STATUS(star_usable(s, "gh_star_result"));
	CHECK_INTERRUPT(e);
	GH_TRY_STATUS(BACKEND(e, e->ops->star_result(s, &g)));
	g->partitions = 1;
	g->input_rows = s->rows;
	g->ndevices = 1;
	g->devices[0] = gh_device_id(e, 0);
	*out = g;
	return GH_OK;
}

uint64_t
gh_star_rows(const gh_star *s)
{
	return s != NULL ? s->rows : 0;
}

void
gh_star_free(gh_star *s)
{
	if (s == NULL)
		return;
	gh_page_cache_settle(s, NULL, false);
	if (s->bstate != NULL)
		s->e->ops->star_free(s);
	free(s);
}
