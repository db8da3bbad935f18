/*-------------------------------------------------------------------------
 *
 * cpu_star.c
 *	  The CPU backend's star pipeline (engine.h, "the star pipeline"):
 *	  dimensions laid out as the interpreter probes them, heap pages run
 *	  through the program tuple by tuple, and the kept rows aggregated into
 *	  a table of groups that lives as long as the star.
 *
 * A dimension is star_vm.h's gh_vmdim: its keys in an open-addressing
 * table of cap slots (a power of two, at least twice the rows), a key's
 * home slot gh_hash64(key, GH_SEED_AGG) & (cap - 1), linear probing,
 * GH_EMPTY_KEY marking a free slot, and the row of a real GH_EMPTY_KEY key
 * kept aside; its columns are copies of the caller's.
 *
 * A read runs gh_vm_locate and gh_vm_run over every line pointer of every
 * page, in order, and keeps the rows the program keeps: their group keys
 * and outputs (column c of row r at c * cap + r) and their page.  A page's
 * status is BAD if it is malformed, else ESCAPE if a row escaped, else
 * the data error of its first row that raised one, else OK; the rows of a
 * page that is not OK are taken back at once.  Keep drops the rows of the
 * pages the caller drops and aggregates the others.
 *
 * The star's groups are cpu_aggregate.c's, kept between calls: a key gets
 * its group number through an open-addressing table whose slots hold a
 * group number + 1 (so every key is a group, GH_EMPTY_KEY too), doubled
 * whenever it would be more than half full; the accumulators are a
 * gh_groups with room to spare, doubled when full, and each column is
 * accumulated by gh_cpu_accumulate, as gh_aggregate's are.  Rows are
 * added in order, so results are deterministic.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "engine_internal.h"
#include "star_vm.h"

#define STAR_MIN_GROUPS 16

/* ---- dimensions ---- */

typedef struct cpu_dim
{
	gh_vmdim	vm;
	size_t		bytes;			/* accounted */
} cpu_dim;

/* where a part's array of column c is (which: 0 lo, 1 hi, 2 nulls, 3 dscale) */
static const void *
part_array(const gh_dimpart *p, int c, int which)
{
	const gh_dimcol *col = &p->cols[c];

	return which == 0 ? (const void *) col->lo : which == 1 ? (const void *) col->hi :
		which == 2 ? (const void *) col->nulls : (const void *) col->dscale;
}

/*
 * Column c's array `which` of the parts one after another (width bytes a
 * row), in memory accounted to cd; a part without one gives zeros.  NULL
 * with *failed false where no part has one.
 */
static void *
dim_concat(gh_engine *e, cpu_dim *cd, const gh_dimpart *parts, int nparts, size_t n, int c,
		   int which, size_t width, bool *failed)
{
	bool		any = false;
	char	   *p;
	size_t		at = 0;

	*failed = false;
	for (int i = 0; i < nparts; i++)
		any |= parts[i].n > 0 && part_array(&parts[i], c, which) != NULL;
	if (!any)
		return NULL;
	p = gh_malloc(e, n * width);
	if (p == NULL)
	{
		*failed = true;
		return NULL;
	}
	for (int i = 0; i < nparts; i++)
	{
		const void *src = part_array(&parts[i], c, which);

		if (parts[i].n == 0)
			continue;
		if (src != NULL)
			memcpy(p + at, src, parts[i].n * width);
		else
			memset(p + at, 0, parts[i].n * width);
		at += parts[i].n * width;
	}
	cd->bytes += n * width;
	gh_account(e, (long long) (n * width));
	return p;
}

gh_status
gh_cpu_dim_create(gh_dim *d, int dev, const gh_dimpart *parts, int nparts)
{
	gh_engine  *e = d->e;
	size_t		n = d->n;
	size_t		cap = 16;
	cpu_dim    *cd = gh_calloc(e, 1, sizeof(cpu_dim));
	gh_vmdim   *vm;
	uint64_t   *slot_keys;
	uint32_t   *slot_rows;
	size_t		row = 0;

	if (cd == NULL)
		return e->status;
	d->bstate[dev] = cd;
	vm = &cd->vm;
	while (cap < 2 * n)
		cap <<= 1;
	slot_keys = gh_malloc(e, cap * sizeof(uint64_t));
	slot_rows = gh_malloc(e, cap * sizeof(uint32_t));
	vm->slot_keys = slot_keys;
	vm->slot_rows = slot_rows;
	if (slot_keys == NULL || slot_rows == NULL)
		return e->status;
	cd->bytes = cap * (sizeof(uint64_t) + sizeof(uint32_t));
	gh_account(e, (long long) cd->bytes);
	memset(slot_keys, 0xff, cap * sizeof(uint64_t));
	vm->cap = cap;
	vm->empty_key_row = -1;
	vm->ncols = d->ncols;
	for (int p = 0; p < nparts; p++)
		for (size_t i = 0; i < parts[p].n; i++, row++)
		{
			uint64_t	key = parts[p].keys[i];
			uint64_t	s = gh_hash64(key, GH_SEED_AGG) & (cap - 1);

			if (key == GH_EMPTY_KEY)
			{
				if (vm->empty_key_row >= 0)
					return gh_fail(e, GH_ERR_DUPLICATE_KEY, "gh_dim_create: key %llu appears twice",
								   (unsigned long long) key);
				vm->empty_key_row = (int64_t) row;
				continue;
			}
			while (slot_keys[s] != GH_EMPTY_KEY && slot_keys[s] != key)
				s = (s + 1) & (cap - 1);
			if (slot_keys[s] == key)
				return gh_fail(e, GH_ERR_DUPLICATE_KEY, "gh_dim_create: key %llu appears twice",
							   (unsigned long long) key);
			slot_keys[s] = key;
			slot_rows[s] = (uint32_t) row;
		}
	for (int c = 0; c < d->ncols && n > 0; c++)
	{
		/* nothing to read where n is 0: the columns stay NULL */
		gh_dimcol  *to = &vm->cols[c];
		bool		failed[4];

		to->lo = dim_concat(e, cd, parts, nparts, n, c, 0, sizeof(int64_t), &failed[0]);
		to->hi = dim_concat(e, cd, parts, nparts, n, c, 1, sizeof(int64_t), &failed[1]);
		to->nulls = dim_concat(e, cd, parts, nparts, n, c, 2, 1, &failed[2]);
		to->dscale = dim_concat(e, cd, parts, nparts, n, c, 3, 1, &failed[3]);
		if (failed[0] || failed[1] || failed[2] || failed[3])
			return e->status;
	}
	return GH_OK;
}

void
gh_cpu_dim_free(gh_dim *d, int dev)
{
	cpu_dim    *cd = (cpu_dim *) d->bstate[dev];

	free((void *) cd->vm.slot_keys);
	free((void *) cd->vm.slot_rows);
	for (int c = 0; c < d->ncols; c++)
	{
		free((void *) cd->vm.cols[c].lo);
		free((void *) cd->vm.cols[c].hi);
		free((void *) cd->vm.cols[c].nulls);
		free((void *) cd->vm.cols[c].dscale);
	}
	gh_account(d->e, -(long long) cd->bytes);
	free(cd);
	d->bstate[dev] = NULL;
}

/* ---- stars ---- */

typedef struct cpu_star
{
	gh_vmdim	dims[GH_PROG_MAX_DIMS];
	/* the groups */
	size_t		ngroups;
	size_t		gcap;			/* groups acc has room for */
	gh_groups  *acc;
	size_t	   *slots;			/* group + 1 in each slot; 0: free */
	size_t		scap;			/* a power of two */
	size_t		group_bytes;	/* accounted */
	/* the rows of the read waiting for keep */
	size_t		cap;
	size_t		nrows;
	uint64_t   *keys;
	uint32_t   *page;			/* index into the read's page list */
	int64_t    *vals;			/* output c of row r at c * cap + r */
	uint8_t    *nulls;
	size_t	   *group_of;
	size_t		read_bytes;		/* accounted */
} cpu_star;

/* Bytes of accumulators for ngroups groups of the star's outputs. */
static size_t
acc_bytes(const gh_star *s, size_t ngroups)
{
	size_t		per = 16;		/* key, count */

	for (int c = 0; c < s->prog.nouts; c++)
		per += 8 + ((s->outs[c].ops & GH_AGG_SUM) && s->outs[c].type == GH_INT64 ? 16 : 0) +
			((s->outs[c].ops & GH_AGG_SUM) && s->outs[c].type == GH_FLOAT64 ? 8 : 0) +
			(s->outs[c].ops & GH_AGG_MIN ? 8 : 0) + (s->outs[c].ops & GH_AGG_MAX ? 8 : 0);
	return per * ngroups;
}

/* Copy the first n groups of src into dst (the same columns). */
static void
groups_copy_prefix(gh_groups *dst, const gh_groups *src, size_t n)
{
#define COPY(field) \
	do { if (src->field) memcpy(dst->field, src->field, n * sizeof(*src->field)); } while (0)
	COPY(keys);
	COPY(rows);
	for (int c = 0; c < src->ncols; c++)
	{
		COPY(cols[c].nonnull);
		COPY(cols[c].sum_lo);
		COPY(cols[c].sum_hi);
		COPY(cols[c].fsum);
		COPY(cols[c].imin);
		COPY(cols[c].imax);
		COPY(cols[c].fmin);
		COPY(cols[c].fmax);
	}
#undef COPY
}

/* Make the accumulators and slots hold gcap groups in scap slots. */
static gh_status
groups_resize(gh_star *s, cpu_star *cs, size_t gcap, size_t scap)
{
	gh_engine  *e = s->e;
	gh_groups  *acc = cs->acc;
	size_t	   *slots = cs->slots;
	size_t		bytes = acc_bytes(s, gcap) + scap * sizeof(size_t);

	if (gcap != cs->gcap)
	{
		acc = gh_groups_alloc(gcap, s->outs, s->prog.nouts);
		if (acc == NULL)
			return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for %zu groups", gcap);
		if (cs->acc != NULL)
			groups_copy_prefix(acc, cs->acc, cs->ngroups);
	}
	if (scap != cs->scap)
	{
		slots = calloc(scap, sizeof(size_t));
		if (slots == NULL)
		{
			if (acc != cs->acc)
				gh_groups_free(acc);
			return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for %zu group slots", scap);
		}
		for (size_t g = 0; g < cs->ngroups; g++)
		{
			size_t		at = gh_hash64(acc->keys[g], GH_SEED_AGG) & (scap - 1);

			while (slots[at] != 0)
				at = (at + 1) & (scap - 1);
			slots[at] = g + 1;
		}
	}
	if (acc != cs->acc)
	{
		gh_groups_free(cs->acc);
		cs->acc = acc;
		cs->gcap = gcap;
	}
	if (slots != cs->slots)
	{
		free(cs->slots);
		cs->slots = slots;
		cs->scap = scap;
	}
	gh_account(e, (long long) bytes - (long long) cs->group_bytes);
	cs->group_bytes = bytes;
	return GH_OK;
}

/* The group numbers of n keys, new groups made for new keys. */
static gh_status
assign_groups(gh_star *s, cpu_star *cs, const uint64_t *keys, size_t n, size_t *group_of)
{
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	key = keys[i];
		size_t		at = gh_hash64(key, GH_SEED_AGG) & (cs->scap - 1);

		while (cs->slots[at] != 0 && cs->acc->keys[cs->slots[at] - 1] != key)
			at = (at + 1) & (cs->scap - 1);
		if (cs->slots[at] == 0)
		{
			if (cs->ngroups == cs->gcap || 2 * (cs->ngroups + 1) > cs->scap)
			{
				size_t		gcap = cs->ngroups == cs->gcap ? 2 * cs->gcap : cs->gcap;
				size_t		scap = 2 * (cs->ngroups + 1) > cs->scap ? 2 * cs->scap : cs->scap;

				GH_TRY_STATUS(groups_resize(s, cs, gcap, scap));
				at = gh_hash64(key, GH_SEED_AGG) & (cs->scap - 1);
				while (cs->slots[at] != 0)
					at = (at + 1) & (cs->scap - 1);
			}
			cs->acc->keys[cs->ngroups] = key;
			cs->slots[at] = ++cs->ngroups;
		}
		group_of[i] = cs->slots[at] - 1;
	}
	return GH_OK;
}

/* Aggregate n rows: keys, output c's values and NULL flags in cols[c]. */
static gh_status
aggregate_rows(gh_star *s, cpu_star *cs, const uint64_t *keys, size_t n, const gh_aggcol *cols,
			   size_t *group_of)
{
	GH_TRY_STATUS(assign_groups(s, cs, keys, n, group_of));
	for (size_t i = 0; i < n; i++)
		cs->acc->rows[group_of[i]]++;
	for (int c = 0; c < s->prog.nouts; c++)
		gh_cpu_accumulate(&cs->acc->cols[c], &cols[c], group_of, n);
	return GH_OK;
}

gh_status
gh_cpu_star_create(gh_star *s, int dev)
{
	gh_engine  *e = s->e;
	cpu_star   *cs = gh_calloc(e, 1, sizeof(cpu_star));

	if (cs == NULL)
		return e->status;
	s->bstate[dev] = cs;
	for (int d = 0; d < s->ndims; d++)
		cs->dims[d] = ((const cpu_dim *) s->dims[d]->bstate[dev])->vm;
	return groups_resize(s, cs, STAR_MIN_GROUPS, 2 * STAR_MIN_GROUPS);
}

static void
read_free(gh_engine *e, cpu_star *cs)
{
	free(cs->keys);
	free(cs->page);
	free(cs->vals);
	free(cs->nulls);
	free(cs->group_of);
	cs->keys = NULL;
	cs->page = NULL;
	cs->vals = NULL;
	cs->nulls = NULL;
	cs->group_of = NULL;
	cs->nrows = 0;
	gh_account(e, -(long long) cs->read_bytes);
	cs->read_bytes = 0;
}

/* One page: its status, its kept rows appended to cs's (taken back unless OK). */
static uint8_t
read_page(const gh_star *s, cpu_star *cs, const uint8_t *page, uint32_t p)
{
	const gh_pagespec *spec = &s->spec;
	int			items = gh_page_items(page, spec);
	size_t		first = cs->nrows;
	bool		escaped = false,
				unsure = false;
	bool		judge = spec->vis_horizon != 0 && !gh_page_all_visible(page);
	int			err = GH_DATAERR_NONE;

	if (items < 0)
		return GH_STAR_PAGE_BAD;
	for (int i = 0; i < items; i++)
	{
		gh_vmcols	c;
		gh_vmout	out;
		int			r = gh_vm_locate(page, spec, i, &c);

		if (r < 0)
		{
			cs->nrows = first;
			return GH_STAR_PAGE_BAD;
		}
		if (r > 0 && judge)
		{
			int			vis = gh_tuple_visibility(c.tup, spec->vis_horizon);

			unsure = unsure || vis < 0;
			r = vis > 0 ? r : 0;
		}
		if (r == 0 || escaped || unsure)
			continue;			/* a later tuple may still be malformed */
		out.key = 0;
		out.vals = cs->vals + cs->nrows;
		out.nulls = cs->nulls + cs->nrows;
		out.stride = cs->cap;
		r = gh_vm_run(&s->prog, cs->dims, &c, &out);
		if (r == GH_VM_KEEP)
		{
			cs->keys[cs->nrows] = out.key;
			cs->page[cs->nrows++] = p;
		}
		else if (r == GH_VM_ESCAPE)
			escaped = true;
		else if (r <= GH_VM_ERROR && err == GH_DATAERR_NONE)
			err = GH_VM_ERROR - r;
	}
	if (!escaped && !unsure && err == GH_DATAERR_NONE)
		return GH_STAR_PAGE_OK;
	cs->nrows = first;
	return unsure ? GH_STAR_PAGE_UNSURE : escaped ? GH_STAR_PAGE_ESCAPE :
		GH_STAR_PAGE_ERROR + err;
}

gh_status
gh_cpu_star_read(gh_star *s, int dev, const void *base, const uint32_t *pages, size_t npages,
				 const gh_pagecopy *copy, uint8_t *status)
{
	gh_engine  *e = s->e;
	cpu_star   *cs = (cpu_star *) s->bstate[dev];
	size_t		cap = npages * s->spec.max_tuples;
	size_t		nouts = (size_t) s->prog.nouts;

	read_free(e, cs);
	cs->cap = cap;
	cs->keys = gh_malloc(e, cap * sizeof(uint64_t));
	cs->page = gh_malloc(e, cap * sizeof(uint32_t));
	cs->vals = gh_malloc(e, nouts * cap * sizeof(int64_t));
	cs->nulls = gh_malloc(e, nouts * cap);
	cs->group_of = gh_malloc(e, cap * sizeof(size_t));
	cs->read_bytes = cap * (sizeof(uint64_t) + sizeof(uint32_t) + sizeof(size_t) +
							nouts * (sizeof(int64_t) + 1));
	gh_account(e, (long long) cs->read_bytes);
	if (cs->keys == NULL || cs->page == NULL || cs->vals == NULL || cs->nulls == NULL ||
		cs->group_of == NULL)
	{
		read_free(e, cs);
		return e->status;
	}
	for (size_t p = 0; p < npages; p++)
	{
		const uint8_t *page = (const uint8_t *) base + (size_t) pages[p] * s->spec.page_size;

		if ((p & 1023) == 1023 && gh_interrupted(e))
		{
			read_free(e, cs);
			return GH_ERR_CANCELLED;
		}
		if (copy != NULL && copy[p].from != NULL)
			page = copy[p].from;
		if (copy != NULL && copy[p].to != NULL)
			memcpy(copy[p].to, page, s->spec.page_size);
		status[p] = read_page(s, cs, page, (uint32_t) p);
	}
	return GH_OK;
}

gh_status
gh_cpu_star_keep(gh_star *s, int dev, const uint8_t *drop, uint64_t *kept)
{
	cpu_star   *cs = (cpu_star *) s->bstate[dev];
	gh_aggcol	cols[GH_PROG_MAX_OUTS];
	size_t		n = 0;
	gh_status	st;

	/* the rows of the pages kept, moved down over those of the pages dropped */
	for (size_t r = 0; r < cs->nrows; r++)
	{
		if (drop != NULL && drop[cs->page[r]])
			continue;
		if (n != r)
		{
			cs->keys[n] = cs->keys[r];
			for (int c = 0; c < s->prog.nouts; c++)
			{
				cs->vals[c * cs->cap + n] = cs->vals[c * cs->cap + r];
				cs->nulls[c * cs->cap + n] = cs->nulls[c * cs->cap + r];
			}
		}
		n++;
	}
	for (int c = 0; c < s->prog.nouts; c++)
	{
		cols[c] = s->outs[c];
		cols[c].values = cs->vals + c * cs->cap;
		cols[c].nulls = cs->nulls + c * cs->cap;
	}
	st = aggregate_rows(s, cs, cs->keys, n, cols, cs->group_of);
	if (st == GH_OK)
		*kept = n;
	read_free(s->e, cs);
	return st;
}

gh_status
gh_cpu_star_add(gh_star *s, int dev, const uint64_t *keys, size_t n, const gh_aggcol *cols)
{
	gh_engine  *e = s->e;
	cpu_star   *cs = (cpu_star *) s->bstate[dev];
	size_t	   *group_of = gh_malloc(e, n * sizeof(size_t));
	gh_status	st;

	if (group_of == NULL)
		return e->status;
	gh_account(e, (long long) (n * sizeof(size_t)));
	st = aggregate_rows(s, cs, keys, n, cols, group_of);
	gh_account(e, -(long long) (n * sizeof(size_t)));
	free(group_of);
	return st;
}

gh_status
gh_cpu_star_result(gh_star *s, int dev, gh_groups **out)
{
	cpu_star   *cs = (cpu_star *) s->bstate[dev];
	gh_groups  *g = gh_groups_alloc(cs->ngroups, s->outs, s->prog.nouts);

	if (g == NULL)
		return gh_fail(s->e, GH_ERR_HOST_NOMEM, "out of host memory for %zu groups",
					   cs->ngroups);
	groups_copy_prefix(g, cs->acc, cs->ngroups);
	*out = g;
	return GH_OK;
}

void
gh_cpu_star_free(gh_star *s, int dev)
{
	cpu_star   *cs = (cpu_star *) s->bstate[dev];

	read_free(s->e, cs);
	gh_groups_free(cs->acc);
	free(cs->slots);
	gh_account(s->e, -(long long) cs->group_bytes);
	free(cs);
	s->bstate[dev] = NULL;
}
