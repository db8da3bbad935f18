/*-------------------------------------------------------------------------
 *
 * star_ops.c
 *	  A GpuStarAgg's star, in the GPU service or the backend (star_ops.h).
 *
 * INTERFACE ROUTINES
 *		star_core_*				the star where it is held
 *		gpuhash_op_star_*		the node's handle on it
 *
 * A batch of pages is read by the engine first and checked afterwards:
 * the rows of a shared buffer whose all-visible flag or LSN changed while
 * the device read it are not kept, and the caller reads that page itself
 * (page_ops.h explains why the check after the read suffices).  A data
 * error is raised only for a page that is kept: a row of a page that
 * changed may have been read torn.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gpuhash.h"
#include "page_ops.h"
#include "pg_compat.h"
#include "service.h"
#include "star_ops.h"

/* ---- the star where it is held ---- */

/* dims' rows as the engine takes them: one part, or the shares' (nparts) */
static gh_dimpart *
dim_parts(const StarDimArrays *dims, int *nparts)
{
	gh_dimpart *parts;

	if (dims->nparts == 0)
	{
		parts = palloc0(sizeof(gh_dimpart));
		parts->keys = dims->keys;
		parts->n = dims->n;
		for (int k = 0; k < dims->ncols; k++)
			parts->cols[k] = (gh_dimcol) {dims->lo[k], dims->hi[k], dims->nulls[k], dims->dscale[k]};
		*nparts = 1;
		return parts;
	}
	parts = palloc0(sizeof(gh_dimpart) * dims->nparts);
	for (int p = 0; p < dims->nparts; p++)
	{
		const GhsStarPart *sp = &dims->parts[p];
		char	   *base = dims->base[p];

		parts[p].keys = ghs_at(base, sp->keys);
		parts[p].n = sp->n;
		for (int k = 0; k < dims->ncols; k++)
			parts[p].cols[k] = (gh_dimcol) {ghs_at(base, sp->lo[k]), ghs_at(base, sp->hi[k]),
											ghs_at(base, sp->nulls[k]), ghs_at(base, sp->dscale[k])};
	}
	*nparts = dims->nparts;
	return parts;
}

gh_status
star_core_create(StarCore *c, gh_engine *e, const gh_prog *prog, const gh_pagespec *spec,
				 int ndims, const StarDimArrays *dims)
{
	gh_status	st;

	memset(c, 0, sizeof(*c));
	c->e = e;
	for (int d = 0; d < ndims; d++)
	{
		int			nparts;
		gh_dimpart *parts = dim_parts(&dims[d], &nparts);

		st = gh_dim_create_parts(e, parts, nparts, dims[d].ncols, &c->dims[d]);
		pfree(parts);
		if (st != GH_OK)
		{
			c->failed_dim = d;
			star_core_free(c);
			return st;
		}
		c->ndims = d + 1;
	}
	st = gh_star_create(e, prog, spec, c->dims, ndims, &c->star);
	if (st != GH_OK)
		star_core_free(c);
	return st;
}

/* PostgreSQL's error for a data error of the program */
static void
raise_data_error(int err)
{
	int			code = ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
	const char *msg;

	switch (err)
	{
		case GH_DATAERR_INT2_RANGE:
			msg = "smallint out of range";
			break;
		case GH_DATAERR_INT4_RANGE:
			msg = "integer out of range";
			break;
		case GH_DATAERR_INT8_RANGE:
			msg = "bigint out of range";
			break;
		case GH_DATAERR_DIV_ZERO:
			code = ERRCODE_DIVISION_BY_ZERO;
			msg = "division by zero";
			break;
		case GH_DATAERR_FLOAT_OVERFLOW:
			msg = "value out of range: overflow";
			break;
		case GH_DATAERR_FLOAT_UNDERFLOW:
			msg = "value out of range: underflow";
			break;
		default:
			elog(ERROR, "gpuhash: unknown data error %d of a star's program", err);
			return;
	}
	ereport(ERROR, (errcode(code), errmsg("%s", msg)));
}

/*
 * Names for the engine's page cache (NULL where the relation is not named or
 * the pages are not shared buffers).  A name is the relation's file
 * (database, file number), the page's tablespace and block, and the version
 * of the page its shipper saw: the LSN of the visibility map page that held
 * its all-visible bit, set (0: not named).  src/README, "The page cache", has
 * why that names one content for a relation that needs WAL
 * (gpuhash_op_star_name).
 */
static gh_pagename *
star_page_names(const StarPageNames *n, size_t npages, gh_pagename *names)
{
	if (n == NULL || n->rel == 0 || n->blocks == NULL || n->versions == NULL)
		return NULL;
	for (size_t p = 0; p < npages; p++)
	{
		names[p].rel = n->rel;
		names[p].block = n->spc << 32 | n->blocks[p];
		names[p].lsn = n->versions[p];
	}
	return names;
}

/*
 * Room in c for a batch of npages pages' names and statuses: kept from batch
 * to batch, so that a batch of tens of thousands of pages faults in no fresh
 * memory (freed by star_core_free).
 */
static void
batch_room(StarCore *c, size_t npages)
{
	npages = Max(npages, 1);
	if (c->room >= npages)
		return;
	free(c->names);
	free(c->res);
	c->room = 0;
	c->names = malloc(sizeof(gh_pagename) * npages);
	c->res = malloc(2 * npages);
	if (c->names == NULL || c->res == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Failed on a request for the names of %zu pages.", npages)));
	c->room = npages;
}

gh_status
star_core_pages(StarCore *c, const void *base, const uint32 *pages, const uint64 *lsns,
				const StarPageNames *names, uint8 *status, size_t npages)
{
	uint8	   *res;
	uint8	   *copied;
	gh_pagename *named;
	size_t		first_bad = npages;
	uint64		kept = 0;
	gh_status	st;
	instr_time	t0,
				t1,
				t2;

	INSTR_TIME_SET_CURRENT(t0);
	batch_room(c, npages);
	res = c->res;
	copied = c->res + c->room;
	named = star_page_names(names, npages, c->names);
	st = gh_star_read_named(c->star, base, pages, named, npages, res);
	if (st != GH_OK)
		return st;
	INSTR_TIME_SET_CURRENT(t1);
	/*
	 * A pinned page read from the page cache's copy of the version it had
	 * when it was pinned is not checked: the read did not look at it.  The
	 * checks touch each page's header and buffer descriptor, cold in the
	 * CPU's caches: ask for them all first, so the misses overlap.
	 */
	gh_star_read_copies(c->star, copied, npages);
	for (size_t p = 0; lsns != NULL && p < npages; p++)
		if (!copied[p])
			gpuhash_buffer_prefetch(pages[p]);
	for (size_t p = 0; p < npages; p++)
	{
		if (res[p] == GH_STAR_PAGE_MISSED)
			status[p] = STAR_PAGE_NOT_CACHED;
		else if (res[p] == GH_STAR_PAGE_BAD)
			status[p] = STAR_PAGE_READ_AGAIN;
		else if (lsns != NULL && pages[p] != GH_PAGE_CACHED_ONLY && !copied[p] &&
				 !gpuhash_buffer_unchanged(pages[p], lsns[p]))
			status[p] = STAR_PAGE_READ_AGAIN;
		else if (res[p] == GH_STAR_PAGE_UNSURE)
			status[p] = STAR_PAGE_UNDECIDED;
		else
		{
			status[p] = STAR_PAGE_KEPT;
			kept++;
			/* a kept page the device could not evaluate (an error, an escape) */
			if (res[p] != GH_STAR_PAGE_OK && first_bad == npages)
				first_bad = p;
		}
	}
	INSTR_TIME_SET_CURRENT(t2);
	if (first_bad < npages)
	{
		size_t		p = first_bad;

		/* the star stays usable for the query's other processes: keep nothing of this read */
		memset(status, STAR_PAGE_READ_AGAIN, npages);
		st = gh_star_keep(c->star, status);
		if (st != GH_OK)
			return st;
		if (res[p] == GH_STAR_PAGE_ESCAPE)
		{
			status[p] = STAR_PAGE_ESCAPED;
			return GH_OK;
		}
		raise_data_error(res[p] - GH_STAR_PAGE_ERROR);
	}
	st = gh_star_keep(c->star, status);
	if (st != GH_OK)
		return st;
	c->pages += kept;
	INSTR_TIME_SUBTRACT(t2, t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	elog(DEBUG1, "gpuhash star: %zu pages read in %.3f ms, checked in %.3f ms, kept in %.3f ms",
		 npages, INSTR_TIME_GET_MILLISEC(t1), INSTR_TIME_GET_MILLISEC(t2),
		 gpuhash_elapsed_ms(t0) - INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t2));
	return GH_OK;
}

gh_status
star_core_result(StarCore *c, gh_groups **g)
{
	*g = NULL;
	return gh_star_result(c->star, g);
}

void
star_core_free(StarCore *c)
{
	gh_star_free(c->star);
	c->star = NULL;
	free(c->names);
	free(c->res);
	c->names = NULL;
	c->res = NULL;
	c->room = 0;
	for (int d = 0; d < c->ndims; d++)
		gh_dim_free(c->dims[d]);
	c->ndims = 0;
}

/* ---- the node's handle ---- */

void
star_place_free(const StarPlace *place)
{
	for (int i = 0; i < place->nparts; i++)
		if (place->id[i] != 0)
			gpuhash_ops_post_free(place->worker[i], place->id[i]);
}

/* let go of s's star in the service (the owner frees it), every part of it */
static void
leave_service(GhOpStar *s)
{
	if (s->owner)
		star_place_free(&s->place);
	memset(&s->place, 0, sizeof(s->place));
}

/* s's star made on the CPU engine: the device's part, if any, let go of */
static void
remake_on_cpu(GhOpStar *s)
{
	if (s->in_service)
	{
		leave_service(s);
		s->in_service = false;
	}
	else
		star_core_free(&s->local);
	gpuhash_ops_cpu_check(s->ops, star_core_create(&s->local, gpuhash_ops_cpu_engine(s->ops),
												   s->prog, s->spec, s->ndims, s->dims));
	s->kept = 0;
	s->restart = true;
}

/*
 * The backend's star failed with st: a star on the CPU already, or one
 * other processes feed too, raises the error; otherwise, where ops falls
 * back, the star is made again on the CPU (restart).
 */
static void
local_failed(GhOpStar *s, gh_status st)
{
	if (s->local.e == s->ops->cpu || !s->restartable)
		gpuhash_engine_error(s->local.e, st);
	if (!gpuhash_ops_device_ok(s->ops, st))
		remake_on_cpu(s);
}

/*
 * call for s failed and ops falls back: s made again on the CPU
 * (restartable) or given up (fed_by_many)
 */
void
star_call_failed(GhOpStar *s, GhsCall *call)
{
	if (s->restartable)
		remake_on_cpu(s);
	else
	{
		s->given_up = true;
		s->restart = true;
		s->failure = (gh_status) call->failed;
		s->failure_msg = MemoryContextStrdup(s->ops->cxt, call->failure);
	}
}

/* Whether ops may fall back from a failure of a call for s (else it is raised). */
bool
star_falls_back(const GhOpStar *s)
{
	return s->restartable || s->fed_by_many;
}

/*
 * The service ran call for s: false if it failed and ops falls back, s
 * then made again on the CPU (restartable) or given up (fed_by_many).
 */
static bool
service_run(GhOpStar *s, GhsCall *call)
{
	if (!star_falls_back(s))
	{
		gpuhash_ops_service_call(s->ops, call);
		return true;
	}
	if (gpuhash_ops_service_ok(s->ops, call))
		return true;
	star_call_failed(s, call);
	return false;
}

void
gpuhash_op_star_on_cpu(GhOpStar *s)
{
	Assert(s->owner && s->prog != NULL);
	remake_on_cpu(s);
	s->restart = false;
	s->given_up = false;
}

/* the bytes of a GhsStarCreate and its dimensions' arrays */
static Size
create_size(int ndims, const StarDimArrays *dims, GhsStarCreate *hdr)
{
	Size		size = GHS_ALIGN(sizeof(GhsStarCreate));

	for (int d = 0; d < ndims; d++)
	{
		GhsStarDim *sd = hdr ? &hdr->dims[d] : NULL;
		Size		n = dims[d].n;
		Size		off;

		if (dims[d].nparts > 0)
		{
			/* the shares stay where they are: only where each lies */
			off = ghs_reserve(&size, sizeof(GhsStarPart) * dims[d].nparts, true);
			if (sd)
				sd->parts = off;
			continue;
		}
		off = ghs_reserve(&size, 8 * n, true);
		if (sd)
			sd->keys = off;
		for (int k = 0; k < dims[d].ncols; k++)
		{
			Size		lo = ghs_reserve(&size, 8 * n, true),
						hi = ghs_reserve(&size, 8 * n, dims[d].hi[k] != NULL),
						nulls = ghs_reserve(&size, n, dims[d].nulls[k] != NULL),
						dscale = ghs_reserve(&size, n, dims[d].dscale[k] != NULL);

			if (sd)
			{
				sd->lo[k] = lo;
				sd->hi[k] = hi;
				sd->nulls[k] = nulls;
				sd->dscale[k] = dscale;
			}
		}
	}
	return size;
}

static void
put(char *base, Size off, const void *src, Size bytes)
{
	if (off != 0 && src != NULL && bytes > 0)
		memcpy(base + off, src, bytes);
}

/*
 * A segment for batches of up to max_named shipped pages to the service,
 * mapped until it is detached (the node's context owns it: it outlives
 * resource owners of subtransactions)
 */
dsm_segment *
star_pages_segment(size_t max_named)
{
	Size		size = GHS_ALIGN(sizeof(GhsStarPages));
	Size		pages = ghs_reserve(&size, sizeof(uint32) * max_named, true);
	Size		lsns = ghs_reserve(&size, sizeof(uint64) * max_named, true);
	Size		status = ghs_reserve(&size, max_named, true);
	Size		blocks = ghs_reserve(&size, sizeof(uint32) * max_named, true);
	Size		versions = ghs_reserve(&size, sizeof(uint64) * max_named, true);
	dsm_segment *seg = dsm_create(size, 0);
	GhsStarPages *hdr = dsm_segment_address(seg);

	dsm_pin_mapping(seg);
	memset(hdr, 0, sizeof(*hdr));
	hdr->pages = pages;
	hdr->lsns = lsns;
	hdr->status = status;
	hdr->blocks = blocks;
	hdr->versions = versions;
	return seg;
}

/* the batch areas: in a segment for the service, else in the node's memory */
static void
make_batch(GhOpStar *s, size_t max_pages)
{
	size_t		max_named = max_pages * STAR_NAMED_PER_PINNED;

	s->max_pages = max_pages;
	s->max_named = max_named;
	/*
	 * the synthetic pages' numbers in the backend, always 0, 1, ... (a star
	 * made again on the CPU after it was in the service reads them there too)
	 */
	s->synth_ids = MemoryContextAlloc(s->ops->cxt, sizeof(uint32) * max_pages);
	for (size_t p = 0; p < max_pages; p++)
		s->synth_ids[p] = (uint32) p;
	if (s->in_service)
	{
		GhsStarPages *hdr;
		char	   *base;
		Size		size,
					pages,
					status;

		s->seg = star_pages_segment(max_named);
		base = dsm_segment_address(s->seg);
		hdr = (GhsStarPages *) base;
		s->pages = ghs_at(base, hdr->pages);
		s->lsns = ghs_at(base, hdr->lsns);
		s->status = ghs_at(base, hdr->status);
		s->blocks = ghs_at(base, hdr->blocks);
		s->versions = ghs_at(base, hdr->versions);
		if (s->place.nparts > 1)
			star_split_batches(s, max_named);

		size = GHS_ALIGN(sizeof(GhsStarPages));
		pages = ghs_reserve(&size, (Size) BLCKSZ * max_pages, true);
		status = ghs_reserve(&size, max_pages, true);
		s->synth_seg = dsm_create(size, 0);
		dsm_pin_mapping(s->synth_seg);
		base = dsm_segment_address(s->synth_seg);
		hdr = (GhsStarPages *) base;
		memset(hdr, 0, sizeof(*hdr));
		hdr->synthetic = true;
		hdr->pages = pages;
		hdr->status = status;
		s->synth = ghs_at(base, pages);
		s->synth_status = ghs_at(base, status);
	}
	else
	{
		MemoryContext old = MemoryContextSwitchTo(s->ops->cxt);

		s->pages = palloc(sizeof(uint32) * max_named);
		s->lsns = palloc(sizeof(uint64) * max_named);
		s->status = palloc(max_named);
		s->blocks = palloc(sizeof(uint32) * max_named);
		s->versions = palloc(sizeof(uint64) * max_named);
		/* the engine reads pages from 16-byte aligned memory */
		s->synth = (char *) TYPEALIGN(16, palloc((Size) BLCKSZ * max_pages + 16));
		s->synth_status = palloc(max_pages);
		MemoryContextSwitchTo(old);
	}
}

/*
 * The service worker to make a star over fact_relid in: with page caches,
 * the same one for every star over that table (while it runs), so that one
 * cache holds its pages; else whichever is free first (-1).
 */
static int
star_worker(Oid fact_relid)
{
	int			n = gpuhash_service->nworkers;
	int			w = (int) (fact_relid % (Oid) Max(n, 1));

	if (gpuhash_page_cache_mb == 0 || n <= 1 || gpuhash_service->worker[w].pid == 0)
		return -1;
	return w;
}

/* The service worker of the first part of a star over fact_relid split across GPUs. */
static int
split_worker(Oid fact_relid)
{
	return (int) (fact_relid % (Oid) Max(gpuhash_service->nworkers, 1));
}

GhOpStar *
gpuhash_op_star_create(GhOps *ops, const gh_prog *prog, const gh_pagespec *spec, int ndims,
					   const StarDimArrays *dims, size_t max_pages, Oid fact_relid)
{
	GhOpStar   *s = MemoryContextAllocZero(ops->cxt, sizeof(GhOpStar));
	Size		size = create_size(ndims, dims, NULL);
	int			split = 0;

	s->ops = ops;
	s->owner = true;
	s->prog = prog;
	s->spec = spec;
	s->ndims = ndims;
	s->dims = dims;
	s->in_service = ops->service && !ops->fallback && gpuhash_service_has_room(size);
	if (s->in_service)
	{
		dsm_segment *seg = dsm_create(size, 0);
		char	   *base = dsm_segment_address(seg);
		GhsStarCreate *hdr = (GhsStarCreate *) base;
		GhsCall		call;

		memset(hdr, 0, sizeof(*hdr));
		hdr->prog = *prog;
		hdr->spec = *spec;
		hdr->ndims = ndims;
		(void) create_size(ndims, dims, hdr);
		for (int d = 0; d < ndims; d++)
		{
			GhsStarDim *sd = &hdr->dims[d];
			Size		n = dims[d].n;

			sd->n = n;
			sd->ncols = dims[d].ncols;
			sd->nparts = dims[d].nparts;
			put(base, sd->parts, dims[d].parts, sizeof(GhsStarPart) * dims[d].nparts);
			put(base, sd->keys, dims[d].keys, 8 * n);
			for (int k = 0; k < dims[d].ncols; k++)
			{
				put(base, sd->lo[k], dims[d].lo[k], 8 * n);
				put(base, sd->hi[k], dims[d].hi[k], 8 * n);
				put(base, sd->nulls[k], dims[d].nulls[k], n);
				put(base, sd->dscale[k], dims[d].dscale[k], n);
			}
		}
		gpuhash_ops_init_call(&call, GHS_OP_STAR_CREATE, star_worker(fact_relid), 0);
		call.data = dsm_segment_handle(seg);
		PG_TRY();
		{
			/*
			 * split across the GPUs where it may be; else one star (where the
			 * service cannot make it, ops falls back: the star is the backend's)
			 */
			split = star_split_create(s, call.data, split_worker(fact_relid));
			if (split == 0)
				s->in_service = gpuhash_ops_service_ok(ops, &call);
			else
				s->in_service = split > 0 && !s->duplicate;
		}
		PG_FINALLY();
		{
			dsm_detach(seg);
		}
		PG_END_TRY();
		if (split == 0 && s->in_service && call.result[0] != 0)
		{
			s->in_service = false;
			s->duplicate = true;
			s->duplicate_dim = (int) call.result[1];
		}
		else if (split == 0 && s->in_service)
		{
			s->place.nparts = 1;
			s->place.worker[0] = call.ran_by;
			s->place.id[0] = call.result_object;
		}
		if (s->duplicate)
			return s;
	}
	if (!s->in_service)
	{
		/* the device's engine, or the CPU's where ops falls back */
		gh_engine  *e = ops->fallback ? NULL : gpuhash_ops_device_engine(ops);
		gh_status	st = GH_ERR_NODEVICE;

		if (e != NULL)
		{
			st = star_core_create(&s->local, e, prog, spec, ndims, dims);
			if (!gpuhash_ops_device_ok(ops, st == GH_ERR_DUPLICATE_KEY ? GH_OK : st))
				e = NULL;
		}
		if (e == NULL)
		{
			st = star_core_create(&s->local, gpuhash_ops_cpu_engine(ops), prog, spec, ndims,
								  dims);
			gpuhash_ops_cpu_check(ops, st == GH_ERR_DUPLICATE_KEY ? GH_OK : st);
		}
		if (st == GH_ERR_DUPLICATE_KEY)
		{
			s->duplicate = true;
			s->duplicate_dim = s->local.failed_dim;
			return s;
		}
	}
	make_batch(s, max_pages);
	return s;
}

GhOpStar *
gpuhash_op_star_attach(GhOps *ops, const StarPlace *place, size_t max_pages)
{
	GhOpStar   *s = MemoryContextAllocZero(ops->cxt, sizeof(GhOpStar));

	s->ops = ops;
	s->in_service = true;
	s->place = *place;
	make_batch(s, max_pages);
	return s;
}

/* the rows s's star has kept, now that part's star has kept kept */
void
star_note_kept(GhOpStar *s, int part, uint64 kept)
{
	s->part_kept[part] = kept;
	s->kept = 0;
	for (int i = 0; i < s->place.nparts; i++)
		s->kept += s->part_kept[i];
}

/* the call that runs npages pages of seg through part of s's star */
void
star_pages_call(GhOpStar *s, GhsCall *call, dsm_segment *seg, int part, size_t npages)
{
	GhsStarPages *hdr = dsm_segment_address(seg);

	hdr->npages = npages;
	hdr->name_rel = s->name_rel;
	hdr->name_spc = s->name_spc;
	gpuhash_ops_init_call(call, GHS_OP_STAR_PAGES, s->place.worker[part], s->place.id[part]);
	call->data = dsm_segment_handle(seg);
}

static void
service_pages(GhOpStar *s, dsm_segment *seg, int part, size_t npages)
{
	GhsCall		call;

	star_pages_call(s, &call, seg, part, npages);
	if (service_run(s, &call))
		star_note_kept(s, part, call.result[0]);
}

/*
 * Only a relation whose changes are WAL-logged (RelationNeedsWAL: permanent,
 * and not a file made without WAL in this transaction under wal_level
 * minimal) has visibility map pages whose LSN names the content of the heap
 * pages they map (src/README, "The page cache"); an unlogged relation's keep
 * their LSN through changes.
 */
void
gpuhash_op_star_name(GhOpStar *s, Relation rel)
{
	s->name_rel = 0;
	s->name_spc = 0;
	if (!RelationNeedsWAL(rel))
		return;
	s->name_rel = (uint64) RelationFileDb(rel) << 32 | RelationFileNumber(rel);
	s->name_spc = RelationFileSpc(rel);
}

/* a batch's page marked STAR_PAGE_ESCAPED: s escaped (star_ops.h), the pass stops */
static void
note_escape(GhOpStar *s, const uint8 *status, size_t npages)
{
	for (size_t p = 0; p < npages; p++)
		if (status[p] == STAR_PAGE_ESCAPED)
		{
			s->escaped = true;
			s->restart = true;
			return;
		}
}

void
gpuhash_op_star_shipped(GhOpStar *s, size_t npages)
{
	Assert(npages <= s->max_named);
	s->ops->stat_pages += npages;
	if (s->in_service && s->place.nparts > 1)
		star_split_shipped(s, npages);
	else if (s->in_service)
		service_pages(s, s->seg, 0, npages);
	else
	{
		StarPageNames names = {s->name_rel, s->name_spc, s->blocks, s->versions};
		gh_status	st = star_core_pages(&s->local, BufferBlocks, s->pages, s->lsns, &names,
										 s->status, npages);

		if (st != GH_OK)
			local_failed(s, st);
		else
			s->kept = gh_star_rows(s->local.star);
	}
	if (!s->restart)
		note_escape(s, s->status, npages);
}

void
gpuhash_op_star_synthetic(GhOpStar *s, size_t npages)
{
	Assert(npages <= s->max_pages);
	s->ops->stat_pages += npages;
	if (s->in_service)
	{
		/* a split star's parts take whole synthetic batches in turn */
		int			part = s->synth_turn++ % s->place.nparts;

		service_pages(s, s->synth_seg, part, npages);
	}
	else
	{
		gh_status	st;

		st = star_core_pages(&s->local, s->synth, s->synth_ids, NULL, NULL, s->synth_status,
							 npages);
		if (st != GH_OK)
			local_failed(s, st);
		else
			s->kept = gh_star_rows(s->local.star);
	}
	if (!s->restart)
		note_escape(s, s->synth_status, npages);
}

gh_groups *
gpuhash_op_star_result(GhOpStar *s)
{
	if (s->in_service && s->place.nparts > 1)
		return star_split_result(s);
	if (s->in_service)
	{
		GhsCall		call;

		gpuhash_ops_init_call(&call, GHS_OP_STAR_RESULT, s->place.worker[0], s->place.id[0]);
		if (!service_run(s, &call))
			return NULL;
		star_note_kept(s, 0, call.result[0]);
		return gpuhash_ops_groups_from_reply(s->ops, call.reply);
	}
	else
	{
		gh_groups  *g;
		gh_status	st = star_core_result(&s->local, &g);

		if (st == GH_OK)
		{
			s->kept = gh_star_rows(s->local.star);
			return g;
		}
		local_failed(s, st);
		return NULL;
	}
}

void
gpuhash_op_star_free(GhOpStar *s)
{
	if (s == NULL)
		return;
	if (s->seg)
		dsm_detach(s->seg);
	if (s->synth_seg)
		dsm_detach(s->synth_seg);
	s->seg = s->synth_seg = NULL;
	for (int i = 0; i < STAR_MAX_PARTS; i++)
	{
		if (s->part_seg[i])
			dsm_detach(s->part_seg[i]);
		s->part_seg[i] = NULL;
	}
	if (!s->in_service)
		star_core_free(&s->local);
	else
		leave_service(s);
}
