/*-------------------------------------------------------------------------
 *
 * engine_pagebatch.c
 *	  The common layer of heap page rows taken straight into device arrays
 *	  (gh_pages_read, gh_pagebatch_*; engine.h): argument checks, the
 *	  batch's life, and the appends of the kept rows.
 *
 * The backend reads and encodes the rows (pages_read) and, once the caller
 * has said which pages still hold, keeps those rows grouped by NULL pattern
 * in its device array memory (pages_keep); the appends here copy one
 * pattern's range of them to the caller's arrays, device to device where
 * those arrays are on the device.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

static gh_status
check_enc(gh_engine *e, const gh_pagespec *spec, const gh_pageenc *enc)
{
	if (enc->nkeys < 0 || enc->nkeys > GH_PAGE_MAX_KEYS ||
		enc->nvals < 0 || enc->nvals > GH_PAGE_MAX_VALS)
		return gh_fail(e, GH_ERR_INVALID, "gh_pages_read: %d keys and %d values",
					   enc->nkeys, enc->nvals);
	for (int k = 0; k < enc->nkeys; k++)
	{
		const gh_pagekey *pk = &enc->key[k];

		if (pk->col < 0 || pk->col >= spec->nout ||
			(pk->width != 1 && pk->width != 2 && pk->width != 4 && pk->width != 8) ||
			pk->shift > 63 || pk->bit > 7 || (pk->null_in_key && pk->nullbit > 63))
			return gh_fail(e, GH_ERR_INVALID, "gh_pages_read: bad key %d", k);
	}
	if (enc->njkeys < 0 || enc->njkeys > GH_PAGE_MAX_KEYS)
		return gh_fail(e, GH_ERR_INVALID, "gh_pages_read: %d join keys", enc->njkeys);
	for (int k = 0; k < enc->njkeys; k++)
	{
		const gh_pagejkey *pj = &enc->jkey[k];

		if (pj->col < 0 || pj->col >= spec->nout || pj->width < 1 || pj->width > 64 ||
			pj->shift > 63 || (pj->conv != GH_PAGEVAL_SIGNED && pj->conv != GH_PAGEVAL_UNSIGNED32))
			return gh_fail(e, GH_ERR_INVALID, "gh_pages_read: bad join key %d", k);
	}
	for (int v = 0; v < enc->nvals; v++)
	{
		const gh_pageval *pv = &enc->val[v];

		if (pv->col < -1 || pv->col >= spec->nout || pv->conv > GH_PAGEVAL_UNSIGNED32)
			return gh_fail(e, GH_ERR_INVALID, "gh_pages_read: bad value %d", v);
	}
	return GH_OK;
}

gh_status
gh_pages_read(gh_engine *e, const gh_pagespec *spec, const gh_pageenc *enc,
			  const void *base, const uint32_t *pages, size_t npages, gh_pagebatch **out)
{
	gh_pagebatch *b;
	gh_status	st;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (out != NULL)
		*out = NULL;
	if (spec == NULL || enc == NULL || out == NULL ||
		(npages > 0 && (base == NULL || pages == NULL)) || ((uintptr_t) base) % 16 != 0)
		return gh_fail(e, GH_ERR_INVALID, "gh_pages_read: missing argument");
	GH_TRY_STATUS(gh_page_spec_check(e, spec, false, "gh_pages_read"));
	if (npages > INT32_MAX / spec->max_tuples)
		return gh_fail(e, GH_ERR_INVALID, "gh_pages_read: %zu pages are too many", npages);
	GH_TRY_STATUS(check_enc(e, spec, enc));
	if (e->ops->pages_read == NULL)
		return gh_fail(e, GH_ERR_INVALID, "gh_pages_read: the %s backend cannot", e->ops->name);
	CHECK_INTERRUPT(e);
	b = gh_calloc(e, 1, sizeof(gh_pagebatch));
	if (b == NULL)
		return e->status;
	b->e = e;
	b->spec = *spec;
	b->enc = *enc;
	b->npages = npages;
	b->bad = gh_calloc(e, npages > 0 ? npages : 1, 1);
	if (b->bad == NULL)
	{
		free(b);
		return e->status;
	}
	st = GH_OK;
	if (npages > 0 && gh_injected_failure(e, 0))
		st = e->inject_status;
	else if (npages > 0)
		st = e->ops->pages_read(e, base, pages, b);
	if (st != GH_OK)
	{
		gh_pagebatch_free(b);
		return st;
	}
	*out = b;
	return GH_OK;
}

const uint8_t *
gh_pagebatch_bad(const gh_pagebatch *b)
{
	return b ? b->bad : NULL;
}

bool
gh_pagebatch_has_nulls(const gh_pagebatch *b, int val)
{
	return b != NULL && val >= 0 && val < b->enc.nvals && b->has_nulls[val];
}

gh_status
gh_pagebatch_keep(gh_pagebatch *b, const uint8_t *drop, uint64_t counts[256])
{
	gh_engine  *e;

	if (b == NULL)
		return GH_ERR_INVALID;
	e = b->e;
	if (counts == NULL || b->kept)
		return gh_fail(e, GH_ERR_INVALID, "gh_pagebatch_keep: %s",
					   b->kept ? "kept already" : "missing argument");
	b->kept = true;
	memset(b->count, 0, sizeof(b->count));
	if (b->npages > 0 && gh_injected_failure(e, 0))
		return e->inject_status;
	if (b->npages > 0)
		GH_TRY_STATUS(e->ops->pages_keep(b, drop));
	memcpy(counts, b->count, sizeof(b->count));
	return GH_OK;
}

/* the first kept row of pattern: the kept rows are grouped by pattern, in pattern order */
static size_t
pattern_start(const gh_pagebatch *b, int pattern)
{
	size_t		start = 0;

	for (int p = 0; p < pattern; p++)
		start += b->count[p];
	return start;
}

gh_status
gh_pagebatch_append(gh_pagebatch *b, int pattern, gh_darray *keys, gh_darray *const *values,
					gh_darray *const *nulls)
{
	gh_engine  *e;
	size_t		start,
				n;
	int			nvals;

	if (b == NULL)
		return GH_ERR_INVALID;
	e = b->e;
	nvals = b->enc.nvals;
	if (!b->kept || pattern < 0 || pattern > 255 || (keys == NULL && b->enc.njkeys == 0) ||
		(nvals > 0 && values == NULL))
		return gh_fail(e, GH_ERR_INVALID, "gh_pagebatch_append: %s",
					   b->kept ? "missing argument" : "not kept yet");
	for (int v = 0; v < nvals; v++)
		if (values[v] == NULL)
			return gh_fail(e, GH_ERR_INVALID, "gh_pagebatch_append: no array for value %d", v);
	start = pattern_start(b, pattern);
	n = b->count[pattern];
	if (n == 0)
		return GH_OK;
	if (gh_injected_failure(e, 0))
		return e->inject_status;
	/* a column with NULLs must keep them: look at this pattern's rows */
	for (int v = 0; v < nvals; v++)
		if ((nulls == NULL || nulls[v] == NULL) && b->has_nulls[v])
		{
			uint8_t    *flags = gh_malloc(e, n);
			bool		any = false;
			gh_status	st;

			if (flags == NULL)
				return e->status;
			st = e->ops->darray_copy(e, flags, b->nulls + v * b->nkept + start, n);
			for (size_t i = 0; st == GH_OK && i < n && !any; i++)
				any = flags[i] != 0;
			free(flags);
			if (st != GH_OK)
				return st;
			if (any)
				return gh_fail(e, GH_ERR_INVALID,
							   "gh_pagebatch_append: value %d has NULLs and no array for them", v);
		}
	if (keys != NULL)
		GH_TRY_STATUS(gh_darray_append_engine(keys, b->keys + start, 8 * n));
	for (int v = 0; v < nvals; v++)
	{
		GH_TRY_STATUS(gh_darray_append_engine(values[v], b->vals + v * b->nkept + start, 8 * n));
		if (nulls != NULL && nulls[v] != NULL)
			GH_TRY_STATUS(gh_darray_append_engine(nulls[v], b->nulls + v * b->nkept + start, n));
	}
	return GH_OK;
}

gh_status
gh_pagebatch_append_jkeys(gh_pagebatch *b, int pattern, gh_darray *jkeys)
{
	if (b == NULL)
		return GH_ERR_INVALID;
	if (!b->kept || b->enc.njkeys == 0 || pattern < 0 || pattern > 255 || jkeys == NULL)
		return gh_fail(b->e, GH_ERR_INVALID, "gh_pagebatch_append_jkeys: %s",
					   !b->kept ? "not kept yet" : b->enc.njkeys == 0 ? "no join keys" :
					   "missing argument");
	if (b->count[pattern] == 0)
		return GH_OK;
	return gh_darray_append_engine(jkeys, b->jkeys + pattern_start(b, pattern),
								   8 * b->count[pattern]);
}

void
gh_pagebatch_free(gh_pagebatch *b)
{
	gh_engine  *e;
	int			nvals;

	if (b == NULL)
		return;
	e = b->e;
	nvals = b->enc.nvals;
	if (b->bstate != NULL && e->ops->pages_free != NULL)
		e->ops->pages_free(b);
	if (b->keys)
		e->ops->darray_free(e, 0, b->keys, 8 * b->nkept);
	if (b->jkeys)
		e->ops->darray_free(e, 0, b->jkeys, 8 * b->nkept);
	if (b->vals)
		e->ops->darray_free(e, 0, b->vals, 8 * b->nkept * nvals);
	if (b->nulls)
		e->ops->darray_free(e, 0, b->nulls, b->nkept * nvals);
	free(b->bad);
	free(b);
}
