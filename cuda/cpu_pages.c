/*-------------------------------------------------------------------------
 *
 * cpu_pages.c
 *	  The CPU backend's gh_extract_pages and gh_pages_read: heap_page.h's
 *	  reader, page by page.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "engine_internal.h"
#include "heap_page.h"

gh_status
gh_cpu_extract_pages(gh_engine *e, const gh_pagespec *spec, const void *base,
					 const uint32_t *pages, size_t npages, gh_pagerows *out)
{
	size_t		at = 0;

	for (size_t p = 0; p < npages; p++)
	{
		const uint8_t *page = (const uint8_t *) base + (size_t) pages[p] * spec->page_size;
		long		rows;

		if ((p & 1023) == 1023 && gh_interrupted(e))
			return GH_ERR_CANCELLED;
		rows = gh_page_extract(page, spec, out, at);
		out->first[p] = (uint32_t) at;
		out->bad[p] = rows < 0;
		if (rows > 0)
			at += (size_t) rows;
	}
	out->first[npages] = (uint32_t) at;
	out->nrows = at;
	return GH_OK;
}

/* ---- rows into device arrays (gh_pages_read) ---- */

/* A batch's rows as read, in page order: what pages_keep sorts out. */
typedef struct cpu_batch
{
	size_t		nrows;
	uint64_t   *keys;
	uint64_t   *jkeys;			/* with join keys */
	uint8_t    *patterns;
	uint32_t   *page;			/* each row's page */
	uint64_t   *vals;			/* value column v at v * cap */
	uint8_t    *nulls;
	size_t		cap;
} cpu_batch;

static void
cpu_batch_free(cpu_batch *cb)
{
	if (cb == NULL)
		return;
	free(cb->keys);
	free(cb->jkeys);
	free(cb->patterns);
	free(cb->page);
	free(cb->vals);
	free(cb->nulls);
	free(cb);
}

gh_status
gh_cpu_pages_read(gh_engine *e, const void *base, const uint32_t *pages, gh_pagebatch *b)
{
	const gh_pagespec *spec = &b->spec;
	const gh_pageenc *enc = &b->enc;
	int			nvals = enc->nvals;
	cpu_batch  *cb = gh_calloc(e, 1, sizeof(cpu_batch));
	size_t		cap = b->npages * spec->max_tuples;

	if (cb == NULL)
		return e->status;
	b->bstate = cb;
	cb->cap = cap;
	cb->keys = gh_malloc(e, 8 * cap);
	cb->jkeys = gh_malloc(e, 8 * cap);
	cb->patterns = gh_malloc(e, cap);
	cb->page = gh_malloc(e, 4 * cap);
	cb->vals = gh_malloc(e, 8 * cap * (nvals > 0 ? nvals : 1));
	cb->nulls = gh_malloc(e, cap * (nvals > 0 ? nvals : 1));
	if (cb->keys == NULL || cb->jkeys == NULL || cb->patterns == NULL || cb->page == NULL ||
		cb->vals == NULL || cb->nulls == NULL)
		return e->status;
	for (size_t p = 0; p < b->npages; p++)
	{
		const uint8_t *page = (const uint8_t *) base + (size_t) pages[p] * spec->page_size;
		int			items = gh_page_items(page, spec);
		size_t		first = cb->nrows;
		uint32_t	nullmask = 0;	/* value columns with a NULL in this page */

		if ((p & 1023) == 1023 && gh_interrupted(e))
			return GH_ERR_CANCELLED;
		b->bad[p] = items < 0;
		for (int i = 0; i < items && !b->bad[p]; i++)
		{
			uint64_t	v[GH_PAGE_MAX_OUT];
			uint8_t		nl[GH_PAGE_MAX_OUT];
			int			r = gh_page_tuple(page, spec, i, v, nl);
			size_t		at;

			b->bad[p] = r < 0;
			if (r <= 0 || !gh_page_jkey(enc, v, nl, &cb->jkeys[cb->nrows]))
				continue;		/* no row, or one that joins nothing */
			at = cb->nrows++;
			cb->keys[at] = gh_page_key(enc, v, nl, &cb->patterns[at]);
			cb->page[at] = (uint32_t) p;
			for (int c = 0; c < nvals; c++)
			{
				cb->vals[c * cap + at] = gh_page_value(&enc->val[c], v, nl,
													   &cb->nulls[c * cap + at]);
				nullmask |= (uint32_t) cb->nulls[c * cap + at] << c;
			}
		}
		if (b->bad[p])
			cb->nrows = first;	/* a malformed page has no rows */
		else
			for (int c = 0; c < nvals; c++)
				b->has_nulls[c] |= (nullmask >> c) & 1;
	}
	return GH_OK;
}

gh_status
gh_cpu_pages_keep(gh_pagebatch *b, const uint8_t *drop)
{
	gh_engine  *e = b->e;
	cpu_batch  *cb = (cpu_batch *) b->bstate;
	int			nvals = b->enc.nvals;
	size_t		at[256];
	size_t		n = 0;

	for (size_t r = 0; r < cb->nrows; r++)
		if (!b->bad[cb->page[r]] && !(drop && drop[cb->page[r]]))
			b->count[cb->patterns[r]]++;
	for (int p = 0; p < 256; p++)
	{
		at[p] = n;
		n += b->count[p];
	}
	b->nkept = n;
	if (n == 0)
		return GH_OK;
	if (e->ops->darray_alloc(e, 0, (void **) &b->keys, 8 * n) != GH_OK ||
		(b->enc.njkeys > 0 && e->ops->darray_alloc(e, 0, (void **) &b->jkeys, 8 * n) != GH_OK) ||
		(nvals > 0 && e->ops->darray_alloc(e, 0, (void **) &b->vals, 8 * n * nvals) != GH_OK) ||
		(nvals > 0 && e->ops->darray_alloc(e, 0, (void **) &b->nulls, n * nvals) != GH_OK))
		return e->status;
	for (size_t r = 0; r < cb->nrows; r++)
	{
		size_t		to;

		if (b->bad[cb->page[r]] || (drop && drop[cb->page[r]]))
			continue;
		to = at[cb->patterns[r]]++;
		b->keys[to] = cb->keys[r];
		if (b->jkeys)
			b->jkeys[to] = cb->jkeys[r];
		for (int c = 0; c < nvals; c++)
		{
			b->vals[c * n + to] = cb->vals[c * cb->cap + r];
			b->nulls[c * n + to] = cb->nulls[c * cb->cap + r];
		}
	}
	cpu_batch_free(cb);
	b->bstate = NULL;
	return GH_OK;
}

void
gh_cpu_pages_free(gh_pagebatch *b)
{
	cpu_batch_free((cpu_batch *) b->bstate);
	b->bstate = NULL;
}
