/*-------------------------------------------------------------------------
 *
 * cpu_pages.c
 *	  The CPU backend's gh_extract_pages: heap_page.h's reader, page by page.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_internal.h"
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
