/*-------------------------------------------------------------------------
 *
 * engine_star.c
 *	  The common layer of the star pipeline (engine.h, "the star
 *	  pipeline"): dimensions and stars, argument checks, their life,
 *	  interrupts and injected failures, dispatch to the backend.
 *
 * INTERFACE ROUTINES
 *		gh_dim_create, gh_dim_create_parts, gh_dim_rows, gh_dim_free
 *		gh_star_create, gh_star_read, gh_star_read_named, gh_star_keep, gh_star_add,
 *		gh_star_result, gh_star_rows, gh_star_free
 *
 * gh_prog_check is engine_prog.c's; gh_star_create runs it.  The backends
 * (cpu_star.c, cuda_star.cu) hold the dimensions' tables, the rows of the
 * read waiting to be kept and the star's table of groups, on each device.
 *
 * On several devices every dimension is built on every device (dimensions
 * are small: a copy on each costs less than moving the fact table's rows
 * between devices), each device keeps a table of groups of its own, and a
 * read gives each device its own share of the pages, read over its own
 * link, all devices at once (gh_for_devices).  A named page goes to the
 * device its relation and block choose, in runs of 16 blocks, so that a
 * page is read by the same device in every batch and every query, from
 * that device's page cache; an unnamed one by its place in the read.  Each
 * device gathers its share into arrays the star keeps between reads, on
 * its own thread, and puts its statuses back in the read's order.  The
 * result merges the devices' groups on the host.  Rows added with
 * gh_star_add go to device index 0.
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
#define BACKEND(e, dev, call) \
	(gh_injected_failure((e), (dev)) ? (e)->inject_status : (call))

/* The arguments of the per-device calls below. */
typedef struct star_args
{
	gh_dim	   *d;
	const gh_dimpart *parts;
	int			nparts;
	gh_star    *s;
	const void *base;
	const uint32_t *pages;		/* the read's */
	const gh_pagecopy *copy;	/* likewise, or NULL */
	uint8_t    *status;			/* likewise */
	const uint8_t *drop;		/* likewise, or NULL */
} star_args;

static gh_status
dim_on_device(gh_engine *e, int dev, void *arg)
{
	star_args  *a = arg;

	return BACKEND(e, dev, e->ops->dim_create(a->d, dev, a->parts, a->nparts));
}

static gh_status
star_on_device(gh_engine *e, int dev, void *arg)
{
	star_args  *a = arg;

	return BACKEND(e, dev, e->ops->star_create(a->s, dev));
}

/*
 * The device's share of the read, on its own thread: a range of the read's
 * pages read as it lies, or the device's pages gathered into its arrays
 * (those only the page cache may give and it has no copy of left out,
 * GH_STAR_PAGE_MISSED) and their statuses put back in the read's order.
 * Each device touches only its own pages' entries of the read's arrays.
 */
static gh_status
read_on_device(gh_engine *e, int dev, void *arg)
{
	star_args  *a = arg;
	gh_star    *s = a->s;
	gh_star_share *sh = &s->share[dev];
	size_t		lo = s->dev_of != NULL ? 0 : sh->first,
				hi = s->dev_of != NULL ? s->npages : sh->last,
				n = 0;
	gh_status	st;

	sh->n = 0;
	sh->gathered = s->dev_of != NULL;
	for (size_t p = lo; p < hi && !sh->gathered; p++)
		sh->gathered = a->pages[p] == GH_PAGE_CACHED_ONLY;
	if (!sh->gathered)
	{
		sh->n = hi - lo;
		if (sh->n == 0)
			return GH_OK;
		return BACKEND(e, dev, e->ops->star_read(s, dev, a->base, a->pages + lo, sh->n,
												 a->copy != NULL ? a->copy + lo : NULL,
												 a->status + lo));
	}
	for (size_t p = lo; p < hi; p++)
	{
		uint32_t	page = a->pages[p];

		if (s->dev_of != NULL && s->dev_of[p] != dev)
			continue;
		if (page == GH_PAGE_CACHED_ONLY)
		{
			if (a->copy == NULL || a->copy[p].from == NULL)
			{
				a->status[p] = GH_STAR_PAGE_MISSED;
				continue;
			}
			page = 0;			/* read from its copy */
		}
		sh->idx[n] = (uint32_t) p;
		sh->pages[n] = page;
		if (a->copy != NULL)
			sh->copy[n] = a->copy[p];
		n++;
	}
	sh->n = n;
	if (n == 0)
		return GH_OK;
	st = BACKEND(e, dev, e->ops->star_read(s, dev, a->base, sh->pages, n,
										   a->copy != NULL ? sh->copy : NULL, sh->status));
	for (size_t j = 0; st == GH_OK && j < n; j++)
		a->status[sh->idx[j]] = sh->status[j];
	return st;
}

static gh_status
keep_on_device(gh_engine *e, int dev, void *arg)
{
	star_args  *a = arg;
	gh_star    *s = a->s;
	gh_star_share *sh = &s->share[dev];
	const uint8_t *drop = NULL;

	if (a->drop != NULL && sh->gathered)
	{
		for (size_t j = 0; j < sh->n; j++)
			sh->drop[j] = a->drop[sh->idx[j]];
		drop = sh->drop;
	}
	else if (a->drop != NULL)
		drop = a->drop + sh->first;
	return BACKEND(e, dev, e->ops->star_keep(s, dev, drop, &s->dev_kept[dev]));
}

/* The devices that read pages of the pending read. */
static uint32_t
devices_read(const gh_star *s)
{
	uint32_t	mask = 0;

	for (int d = 0; d < s->e->opt.ndevices; d++)
		if (s->share[d].n > 0)
			mask |= 1u << d;
	return mask;
}

static void
hostbuf_free(gh_engine *e, gh_hostbuf *b)
{
	if (b->pinned)
		gh_unpin_host(e, b->p);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- dimensions ---- */

gh_status
gh_dim_create(gh_engine *e, const uint64_t *keys, size_t n, const gh_dimcol *cols, int ncols,
			  gh_dim **out)
{
	gh_dimpart	part = {.keys = keys, .n = n};

	if (e == NULL)
		return GH_ERR_INVALID;
	if (ncols > 0 && cols == NULL)
		return gh_fail(e, GH_ERR_INVALID, "gh_dim_create: missing argument");
	for (int c = 0; c < ncols && c < GH_PROG_MAX_DIMCOLS; c++)
		part.cols[c] = cols[c];
	return gh_dim_create_parts(e, &part, 1, ncols, out);
}

gh_status
gh_dim_create_parts(gh_engine *e, const gh_dimpart *parts, int nparts, int ncols, gh_dim **out)
{
	gh_dim	   *d;
	gh_status	st;
	size_t		n = 0;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (out == NULL)
		return gh_fail(e, GH_ERR_INVALID, "gh_dim_create_parts: missing argument");
	*out = NULL;
	if (ncols < 0 || ncols > GH_PROG_MAX_DIMCOLS)
		return gh_fail(e, GH_ERR_INVALID, "gh_dim_create_parts: %d columns, at most %d", ncols,
					   GH_PROG_MAX_DIMCOLS);
	if (nparts < 0 || (nparts > 0 && parts == NULL))
		return gh_fail(e, GH_ERR_INVALID, "gh_dim_create_parts: missing argument");
	for (int p = 0; p < nparts; p++)
	{
		if (parts[p].n > 0 && parts[p].keys == NULL)
			return gh_fail(e, GH_ERR_INVALID, "gh_dim_create_parts: missing argument");
		for (int c = 0; c < ncols && parts[p].n > 0; c++)
			if (parts[p].cols[c].lo == NULL)
				return gh_fail(e, GH_ERR_INVALID, "gh_dim_create_parts: column %d has no values", c);
		n += parts[p].n;
		if (parts[p].n > UINT32_MAX || n > UINT32_MAX)
			return gh_fail(e, GH_ERR_INVALID, "gh_dim_create_parts: more than 2^32 - 1 rows");
	}
	CHECK_INTERRUPT(e);
	d = gh_calloc(e, 1, sizeof(gh_dim));
	if (d == NULL)
		return e->status;
	d->e = e;
	d->n = n;
	d->ncols = ncols;
	{
		star_args	a = {.d = d, .parts = parts, .nparts = nparts};

		st = gh_for_devices(e, ALL_DEVICES(e), n, dim_on_device, &a);
	}
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
	for (int dev = 0; dev < GH_MAX_DEVICES; dev++)
		if (d->bstate[dev] != NULL)
			d->e->ops->dim_free(d, dev);
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
	{
		star_args	a = {.s = s};

		st = gh_for_devices(e, ALL_DEVICES(e), 0, star_on_device, &a);
	}
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

/*
 * The device that reads a named page: runs of blocks of a relation in turn,
 * the same device for every read of the name, whose page cache then holds
 * its copy.
 */
int
gh_page_device(const gh_engine *e, const gh_pagename *n)
{
	int			nd = e->opt.ndevices;

	if (nd == 1)
		return 0;
	return (int) ((((n->rel * UINT64_C(0x9E3779B97F4A7C15)) >> 40) +
				   (n->block >> GH_PAGE_RUN_LOG2)) % (uint64_t) nd);
}

void
gh_page_devices(const gh_engine *e, const gh_pagename *names, size_t npages, uint8_t *dev_of)
{
	for (size_t p = 0; p < npages; p++)
		if (p > 0 && names[p].rel == names[p - 1].rel &&
			(names[p].block >> GH_PAGE_RUN_LOG2) == (names[p - 1].block >> GH_PAGE_RUN_LOG2))
			dev_of[p] = dev_of[p - 1];
		else
			dev_of[p] = (uint8_t) gh_page_device(e, &names[p]);
}

void *
gh_star_buffer(gh_star *s, gh_hostbuf *b, size_t bytes, bool pin)
{
	void	   *p;

	if (b->bytes >= bytes && b->p != NULL)
		return b->p;
	hostbuf_free(s->e, b);
	/* whole pages of its own, so that pinning it pins no other array's */
	bytes = (bytes + bytes / 4 + 4095) & ~(size_t) 4095;
	if (posix_memalign(&p, 4096, bytes) != 0)
	{
		gh_fail(s->e, GH_ERR_HOST_NOMEM, "could not allocate %zu bytes of host memory", bytes);
		return NULL;
	}
	b->p = p;
	b->bytes = bytes;
	b->pinned = pin && gh_pin_host(s->e, p, bytes);
	return p;
}

/*
 * Each device's share of a read of npages pages (s->share, s->dev_of): a
 * named page goes to the device gh_page_devices gives it (the page cache's
 * plan has set s->cache_dev so), an unnamed one by its place in the read
 * (a range).  Each share gets room for its arrays, kept by the star.
 */
static gh_status
plan_shares(gh_star *s, const gh_pagename *names, size_t npages)
{
	gh_engine  *e = s->e;
	int			nd = e->opt.ndevices;

	s->dev_of = NULL;
	for (int d = 0; d < nd; d++)
	{
		gh_star_share *sh = &s->share[d];

		/* page p is device p * nd / npages's */
		sh->first = (d * npages + nd - 1) / nd;
		sh->last = ((d + 1) * npages + nd - 1) / nd;
		sh->n = 0;
	}
	if (names != NULL && nd > 1)
	{
		if (s->cache_slot != NULL)
			s->dev_of = s->cache_dev;	/* the page cache's plan set them */
		else
		{
			uint8_t    *dev_of = gh_star_buffer(s, &s->devof_buf, npages, false);

			if (dev_of == NULL)
				return e->status;
			gh_page_devices(e, names, npages, dev_of);
			s->dev_of = dev_of;
		}
	}
	for (int d = 0; d < nd; d++)
	{
		gh_star_share *sh = &s->share[d];
		size_t		n = s->dev_of != NULL ? npages : sh->last - sh->first;
		char	   *buf = gh_star_buffer(s, &sh->buf, n * (sizeof(gh_pagecopy) + 2 *
																 sizeof(uint32_t) + 2), true);

		if (buf == NULL)
			return e->status;
		/* the copies first: their alignment */
		sh->copy = (gh_pagecopy *) buf;
		sh->idx = (uint32_t *) (sh->copy + n);
		sh->pages = sh->idx + n;
		sh->status = (uint8_t *) (sh->pages + n);
		sh->drop = sh->status + n;
	}
	return GH_OK;
}

/* Which pages of a read come from the cache's copies (copy NULL: none), for gh_star_read_copies. */
static gh_status
note_copies(gh_star *s, const gh_pagecopy *copy, size_t npages)
{
	s->copied = NULL;
	s->ncopied = 0;
	if (copy == NULL)
		return GH_OK;
	s->copied = gh_star_buffer(s, &s->copied_buf, npages, false);
	if (s->copied == NULL)
		return s->e->status;
	for (size_t p = 0; p < npages; p++)
		s->copied[p] = copy[p].from != NULL;
	s->ncopied = npages;
	return GH_OK;
}

void
gh_star_read_copies(const gh_star *s, uint8_t *copied, size_t npages)
{
	for (size_t p = 0; p < npages; p++)
		copied[p] = s != NULL && s->copied != NULL && p < s->ncopied && s->copied[p];
}

/* The backends' read, through the page cache where the pages are named. */
static gh_status
read_pages(gh_star *s, const void *base, const uint32_t *pages, const gh_pagename *names,
		   size_t npages, uint8_t *status)
{
	gh_engine  *e = s->e;
	gh_pagecopy *copy = NULL;
	bool		planned = false;
	star_args	a = {.s = s, .base = base, .pages = pages, .status = status};
	gh_status	st;

	s->nread = 0;
	s->npages = npages;
	if (names != NULL && e->pagecache != NULL)
	{
		copy = gh_star_buffer(s, &s->copy_buf, npages * sizeof(gh_pagecopy), true);
		if (copy == NULL)
			return e->status;
		GH_TRY_STATUS(gh_page_cache_plan(s, pages, names, npages, copy, &planned));
	}
	a.copy = planned ? copy : NULL;
	st = note_copies(s, a.copy, npages);
	if (st == GH_OK)
		st = plan_shares(s, names, npages);
	if (st == GH_OK)
		st = gh_for_devices(e, ALL_DEVICES(e), npages * s->spec.max_tuples, read_on_device, &a);
	if (st != GH_OK)
	{
		gh_page_cache_settle(s, NULL, false);
		return st;
	}
	for (int d = 0; d < e->opt.ndevices; d++)
		s->nread += s->share[d].n;
	for (size_t p = 0; planned && s->cache_fills > 0 && p < npages; p++)
		s->cache_ok[p] = status[p] == GH_STAR_PAGE_OK;
	return GH_OK;
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
	s->nread = 0;
	if (npages > 0)
		GH_TRY_STATUS(read_pages(s, base, pages, names, npages, status));
	s->npages = npages;
	s->pending = true;
	return GH_OK;
}

/* Every device keeps its share of the pending read. */
static gh_status
keep_pages(gh_star *s, const uint8_t *drop)
{
	gh_engine  *e = s->e;
	star_args	a = {.s = s, .drop = drop};
	gh_status	st;

	memset(s->dev_kept, 0, sizeof(s->dev_kept));
	st = gh_for_devices(e, devices_read(s), s->nread * s->spec.max_tuples, keep_on_device, &a);
	/* rows a device aggregated count even where another device failed */
	for (int d = 0; d < e->opt.ndevices; d++)
		s->rows += s->dev_kept[d];
	return st;
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
	if (s->nread > 0)
		st = keep_pages(s, drop);
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
	st = BACKEND(e, 0, e->ops->star_add(s, 0, keys, n, cols));
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
	GH_TRY_STATUS(BACKEND(e, 0, e->ops->star_result(s, 0, &g)));
	if (e->opt.ndevices > 1)
	{
		int			nd = e->opt.ndevices;
		gh_groups  *pieces[GH_MAX_DEVICES] = {g};
		gh_status	st = GH_OK;

		for (int d = 1; d < nd && st == GH_OK; d++)
			st = BACKEND(e, d, e->ops->star_result(s, d, &pieces[d]));
		g = st == GH_OK ? gh_groups_merge(e, pieces, nd, s->outs, s->prog.nouts, false) : NULL;
		for (int d = 0; d < nd; d++)
			gh_groups_free(pieces[d]);
		if (g == NULL)
			return e->status;
	}
	g->partitions = 1;
	g->input_rows = s->rows;
	g->ndevices = gh_device_ids(e, ALL_DEVICES(e), g->devices, GH_MAX_DEVICES);
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
	for (int dev = 0; dev < GH_MAX_DEVICES; dev++)
		if (s->bstate[dev] != NULL)
			s->e->ops->star_free(s, dev);
	for (int d = 0; d < GH_MAX_DEVICES; d++)
		hostbuf_free(s->e, &s->share[d].buf);
	hostbuf_free(s->e, &s->plan_buf);
	hostbuf_free(s->e, &s->copy_buf);
	hostbuf_free(s->e, &s->copied_buf);
	hostbuf_free(s->e, &s->devof_buf);
	free(s);
}
