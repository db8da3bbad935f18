/*-------------------------------------------------------------------------
 *
 * cases_pagecache.c
 *	  Engine unit tests of the page cache (engine.h, "the page cache"),
 *	  through stars reading named pages:
 *
 *	- a read under names fills the cache; the same names and LSN read again
 *	  over other page contents give the groups of the copies where they hit
 *	  and of the new contents where they miss, page by page (the hits told
 *	  by gh_page_cache_info), with a cache smaller than the pages so that
 *	  copies are replaced; a new LSN never hits
 *	- copies of pages dropped at the keep, of a read that failed (an
 *	  injected device failure), of a read whose star was freed before its
 *	  keep, and of pages named with LSN 0 are never read
 *	- pages only the cache may give (GH_PAGE_CACHED_ONLY) are read from their
 *	  copies, or not at all (GH_STAR_PAGE_MISSED), mixed with other pages;
 *	  a read of more pages than the cache holds keeps every copy it reads
 *	- a new size empties the cache, size 0 frees it: device memory back to
 *	  what it was; an engine without a size has no cache
 *	- on several devices each has a cache of the size (a page's copy on the
 *	  device that reads it), and they fill together
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "star_test.h"

#define CACHE_PAGES 40

/*
 * names of pages ids[from, to) of b under lsn: all 64 bits used, as the
 * extension's names use them (database and relation, tablespace and block)
 */
static gh_pagename *
names_of(const batches *b, size_t from, size_t to, uint64_t lsn)
{
	gh_pagename *n = xmalloc((to - from + 1) * sizeof(gh_pagename));

	for (size_t i = from; i < to; i++)
		n[i - from] = (gh_pagename) {UINT64_C(16384) << 32 | 77,
		UINT64_C(1663) << 32 | b->ids[i], lsn};
	return n;
}

static gh_page_cache_info
info(gh_engine *e)
{
	gh_page_cache_info i;

	gh_page_cache_info_get(e, &i);
	return i;
}

/*
 * Read pages [from, to) of base under lsn and keep them but those drop says;
 * false on error.  gh_star_read_copies must name as many pages read from
 * copies as the cache counts hits.
 */
static bool
read_named(gh_engine *e, gh_star *s, const uint8_t *base, const batches *b, size_t from,
		   size_t to, uint64_t lsn, const uint8_t *drop)
{
	gh_pagename *n = names_of(b, from, to, lsn);
	uint8_t    *status = xmalloc(to - from + 1);
	uint8_t    *copied = xmalloc(to - from + 1);
	unsigned long long hits = info(e).hits;
	bool		ok = check_ok(gh_star_read_named(s, base, b->ids + from, n, to - from, status), e,
							  "gh_star_read_named");

	if (ok)
	{
		size_t		ncopied = 0;

		gh_star_read_copies(s, copied, to - from);
		for (size_t i = 0; i < to - from; i++)
			ncopied += copied[i] != 0;
		if (ncopied != info(e).hits - hits)
			case_fail("gh_star_read_copies names %zu pages, the cache counts %llu hits", ncopied,
					  info(e).hits - hits);
	}
	ok = ok && check_ok(gh_star_keep(s, drop), e, "gh_star_keep");
	free(copied);
	free(status);
	free(n);
	return ok;
}

static gh_groups *
groups_of(gh_engine *e, gh_star *s)
{
	gh_groups  *g = NULL;

	return check_ok(gh_star_result(s, &g), e, "gh_star_result") ? g : NULL;
}

/*
 * The groups of s against a reference over page k of a where from_a[k], of
 * base2 where from_b[k], for k < n (neither: the page is not counted).
 */
static void
expect_pages(gh_engine *e, gh_star *s, const gh_prog *p, gh_dim *dim, const batches *a,
			 const uint8_t *base2, const bool *from_a, const bool *from_b, size_t n)
{
	size_t		psz = fact.spec.page_size;
	batches		mix = *a;
	gh_groups  *want,
			   *got = groups_of(e, s);

	mix.base = aligned_alloc(16, n * psz + 16);
	mix.npages = 0;
	for (size_t k = 0; k < n; k++)
		if (from_a[k] || from_b[k])
			memcpy(mix.base + mix.npages++ * psz, (from_a[k] ? a->base : base2) + k * psz, psz);
	want = reference(e, p, dim, &mix);
	if (got != NULL && want != NULL)
		(void) same_groups(got, want);
	gh_groups_free(got);
	gh_groups_free(want);
	free(mix.base);
}

/* Is s's grouping the reference's over pages that hold base's page p where from_a[p], else b2's? */
static void
expect_mixed(gh_engine *e, gh_star *s, const gh_prog *p, gh_dim *dim, const batches *a,
			 const uint8_t *base2, const bool *from_a)
{
	bool	   *from_b = xmalloc(a->npages + 1);

	for (size_t k = 0; k < a->npages; k++)
		from_b[k] = !from_a[k];
	expect_pages(e, s, p, dim, a, base2, from_a, from_b, a->npages);
	free(from_b);
}

static gh_star *
new_star(gh_engine *e, const gh_prog *p, gh_dim *dim)
{
	gh_star    *s = NULL;

	(void) check_ok(gh_star_create(e, p, &fact.spec, &dim, 1, &s), e, "gh_star_create");
	return s;
}

/*
 * One read of pages [0, n) of a, named under lsn: page k is only the
 * cache's (GH_PAGE_CACHED_ONLY) where cached_only[k], else read from base2
 * (named under lsn where named[k], else unnamed: lsn 0); kept; statuses in
 * status.  False on an error.
 */
static bool
read_cached_only(gh_engine *e, gh_star *s, const uint8_t *base2, const batches *a, size_t n,
				 uint64_t lsn, const bool *cached_only, const bool *named, uint8_t *status)
{
	gh_pagename *nm = names_of(a, 0, n, lsn);
	uint32_t   *ids = xmalloc((n + 1) * sizeof(uint32_t));
	bool		ok;

	for (size_t k = 0; k < n; k++)
	{
		ids[k] = cached_only[k] ? GH_PAGE_CACHED_ONLY : a->ids[k];
		if (!cached_only[k] && !named[k])
			nm[k].lsn = 0;
	}
	ok = check_ok(gh_star_read_named(s, base2, ids, nm, n, status), e, "gh_star_read_named") &&
		check_ok(gh_star_keep(s, NULL), e, "gh_star_keep");
	free(ids);
	free(nm);
	return ok;
}

static void
cached_only_cases(gh_engine *e, const gh_prog *p, gh_dim *dim, const batches *a,
				  const uint8_t *base2)
{
	size_t		n = 2 * CACHE_PAGES;
	bool	   *cached_only = xmalloc(n),
			   *named = xmalloc(n),
			   *from_a = xmalloc(n),
			   *from_b = xmalloc(n);
	uint8_t    *status = xmalloc(n);
	gh_star    *s;
	gh_page_cache_info i0;

	case_begin("pages only the cache may give are read from their copies, or not at all (MISSED)");
	s = new_star(e, p, dim);
	if (s != NULL)
		(void) read_named(e, s, a->base, a, 0, CACHE_PAGES / 2, 15, NULL);
	gh_star_free(s);
	s = new_star(e, p, dim);
	for (size_t k = 0; k < n; k++)
	{
		cached_only[k] = k < CACHE_PAGES / 2 || k % 3 != 2;
		named[k] = false;
		from_a[k] = k < CACHE_PAGES / 2;
		from_b[k] = !cached_only[k];
	}
	i0 = info(e);
	if (s != NULL && read_cached_only(e, s, base2, a, n, 15, cached_only, named, status))
	{
		for (size_t k = 0; k < n; k++)
		{
			int			want = cached_only[k] && !from_a[k] ? GH_STAR_PAGE_MISSED : GH_STAR_PAGE_OK;

			if (status[k] != want)
			{
				case_fail("page %zu: status %d, want %d", k, status[k], want);
				break;
			}
		}
		if (info(e).hits - i0.hits != CACHE_PAGES / 2)
			case_fail("%llu hits, want %d", (unsigned long long) (info(e).hits - i0.hits),
					  CACHE_PAGES / 2);
		expect_pages(e, s, p, dim, a, base2, from_a, from_b, n);
	}
	gh_star_free(s);
	case_end();

	case_begin("a read of more pages than the cache holds never replaces the copies it reads");
	s = new_star(e, p, dim);
	if (s != NULL)
		(void) read_named(e, s, a->base, a, 0, CACHE_PAGES, 16, NULL);
	gh_star_free(s);
	for (size_t k = 0; k < n; k++)
	{
		cached_only[k] = k < CACHE_PAGES;
		named[k] = true;
		from_a[k] = cached_only[k];
		from_b[k] = !cached_only[k];
	}
	s = new_star(e, p, dim);
	if (s != NULL && read_cached_only(e, s, base2, a, n, 16, cached_only, named, status))
		expect_pages(e, s, p, dim, a, base2, from_a, from_b, n);
	gh_star_free(s);
	s = new_star(e, p, dim);
	i0 = info(e);
	if (s != NULL && read_cached_only(e, s, base2, a, CACHE_PAGES, 16, cached_only, named, status) &&
		info(e).hits - i0.hits != CACHE_PAGES)
		case_fail("%llu of the %d copies read before were still there",
				  (unsigned long long) (info(e).hits - i0.hits), CACHE_PAGES);
	gh_star_free(s);
	case_end();

	free(cached_only);
	free(named);
	free(from_a);
	free(from_b);
	free(status);
}

static void
cache_cases(gh_engine *e, gh_dim *dim, const batches *a, const uint8_t *base2)
{
	gh_prog    *p = xmalloc(sizeof(gh_prog));
	size_t		n = a->npages;
	size_t		psz = fact.spec.page_size;
	int			nd = gh_engine_ndevices(e);
	bool	   *from_a = xmalloc(n);
	size_t		before = gh_engine_device_bytes(e);
	gh_star    *s;
	gh_page_cache_info i0,
				i1;

	sum_prog(p);
	gh_page_cache_size(e, CACHE_PAGES * psz);

	/* each device has a cache of that size, and more than that many of the pages */
	case_begin("a star reading %zu named pages fills a page cache of %d pages on each of %d devices",
			   n, CACHE_PAGES, nd);
	s = new_star(e, p, dim);
	for (size_t from = 0; s != NULL && from < n; from += 37)
		if (!read_named(e, s, a->base, a, from, from + 37 < n ? from + 37 : n, 7, NULL))
			break;
	i1 = info(e);
	if (i1.pages != (size_t) nd * CACHE_PAGES || i1.misses != n || i1.hits != 0 ||
		i1.bytes != nd * CACHE_PAGES * psz || i1.size != nd * CACHE_PAGES * psz)
		case_fail("%llu pages, %llu misses, %llu hits, %zu of %zu bytes; want %d, %zu, 0, %zu, %zu",
				  (unsigned long long) i1.pages, (unsigned long long) i1.misses,
				  (unsigned long long) i1.hits, i1.bytes, i1.size, nd * CACHE_PAGES, n,
				  nd * CACHE_PAGES * psz, nd * CACHE_PAGES * psz);
	for (size_t k = 0; k < n; k++)
		from_a[k] = true;
	if (s != NULL)
		expect_mixed(e, s, p, dim, a, base2, from_a);
	gh_star_free(s);
	case_end();

	case_begin("the same names and LSN over other contents read the copies where they hit, page by page");
	s = new_star(e, p, dim);
	/* last read first: the cache holds the last pages read */
	for (size_t k = n; s != NULL && k-- > 0;)
	{
		i0 = info(e);
		if (!read_named(e, s, base2, a, k, k + 1, 7, NULL))
			break;
		from_a[k] = info(e).hits > i0.hits;
	}
	i1 = info(e);
	if (i1.hits == 0 || i1.hits >= n)
		case_fail("%llu hits of %zu pages: want some, not all", (unsigned long long) i1.hits, n);
	if (s != NULL)
		expect_mixed(e, s, p, dim, a, base2, from_a);
	gh_star_free(s);
	case_end();

	case_begin("a new LSN never hits: the groups of the pages as they are now");
	i0 = info(e);
	s = new_star(e, p, dim);
	for (size_t from = 0; s != NULL && from < n; from += 50)
		if (!read_named(e, s, base2, a, from, from + 50 < n ? from + 50 : n, 8, NULL))
			break;
	if (info(e).hits != i0.hits)
		case_fail("%llu hits", (unsigned long long) (info(e).hits - i0.hits));
	for (size_t k = 0; k < n; k++)
		from_a[k] = false;
	if (s != NULL)
		expect_mixed(e, s, p, dim, a, base2, from_a);
	gh_star_free(s);
	case_end();

	case_begin("copies of dropped pages are not kept, of the others are");
	{
		uint8_t		drop[20];
		size_t		hits;

		for (int k = 0; k < 20; k++)
			drop[k] = k % 2;
		s = new_star(e, p, dim);
		if (s != NULL && read_named(e, s, a->base, a, 0, 20, 9, drop))
		{
			i0 = info(e);
			for (size_t k = 0; k < 20; k++)
			{
				size_t		h = info(e).hits;

				if (!read_named(e, s, base2, a, k, k + 1, 9, NULL))
					break;
				if ((info(e).hits > h) != (k % 2 == 0))
					case_fail("page %zu: %s", k, k % 2 ? "dropped, yet hit" : "kept, yet missed");
			}
			hits = info(e).hits - i0.hits;
			if (hits != 10)
				case_fail("%zu hits of 20 pages, want 10", hits);
		}
		gh_star_free(s);
	}
	case_end();

	cached_only_cases(e, p, dim, a, base2);

	case_begin("copies of a read that failed, of a read never kept, of pages of LSN 0 are never read");
	s = new_star(e, p, dim);
	if (s != NULL)
	{
		gh_pagename *nm = names_of(a, 0, 10, 10);
		uint8_t		status[10];

		bool		failed = false;

		/* on several devices, the pages' device is the one that fails */
		for (int d = 0; d < gh_engine_ndevices(e) && !failed; d++)
		{
			gh_debug_inject_failure(e, d, 0, GH_ERR_DEVICE);
			failed = gh_star_read_named(s, a->base, a->ids, nm, 10, status) != GH_OK;
			if (!failed)
				(void) gh_star_keep(s, (const uint8_t *) "\1\1\1\1\1\1\1\1\1\1");
		}
		if (!failed)
			case_fail("the read with an injected failure succeeded");
		gh_debug_inject_failure(e, -1, 0, GH_OK);
		i0 = info(e);
		if (read_named(e, s, base2, a, 0, 10, 10, NULL) && info(e).hits != i0.hits)
			case_fail("%llu hits after a failed read", (unsigned long long) (info(e).hits - i0.hits));
		free(nm);
		gh_star_free(s);
	}
	s = new_star(e, p, dim);
	if (s != NULL)
	{
		gh_pagename *nm = names_of(a, 10, 20, 11);
		uint8_t		status[10];

		(void) check_ok(gh_star_read_named(s, a->base, a->ids + 10, nm, 10, status), e,
						"gh_star_read_named");
		gh_star_free(s);		/* before its keep */
		free(nm);
	}
	s = new_star(e, p, dim);
	i0 = info(e);
	if (s != NULL && read_named(e, s, base2, a, 10, 20, 11, NULL) && info(e).hits != i0.hits)
		case_fail("%llu hits after a read never kept", (unsigned long long) (info(e).hits - i0.hits));
	i0 = info(e);
	if (s != NULL && read_named(e, s, a->base, a, 20, 30, 0, NULL) &&
		read_named(e, s, base2, a, 20, 30, 0, NULL) && (info(e).hits != i0.hits || info(e).misses != i0.misses))
		case_fail("pages of LSN 0 went through the cache");
	gh_star_free(s);
	case_end();

	/*
	 * A read's first batches take the free slots, wherever they lie from the
	 * clock's hand; copies read since the hand last passed are spared once,
	 * so a new copy must be too, or the next batches replace it first.
	 */
	if (nd == 1)
	{
		size_t		half = CACHE_PAGES / 2;
		bool		ok;

		case_begin("copies the earlier batches of a read kept outlast older copies read since");
		gh_page_cache_size(e, 0);
		gh_page_cache_size(e, CACHE_PAGES * psz);
		s = new_star(e, p, dim);
		/* half the cache: pages [0, half), their copies read */
		ok = s != NULL && read_named(e, s, a->base, a, 0, half, 13, NULL) &&
			read_named(e, s, a->base, a, 0, half, 13, NULL);
		/* a cache's worth of others in batches: the free half first, then replacing */
		for (size_t from = half; ok && from < half + CACHE_PAGES; from += 7)
			ok = read_named(e, s, a->base, a, from,
							from + 7 < half + CACHE_PAGES ? from + 7 : half + CACHE_PAGES, 13, NULL);
		i0 = info(e);
		if (ok && read_named(e, s, a->base, a, half, half + CACHE_PAGES, 13, NULL) &&
			info(e).hits - i0.hits != CACHE_PAGES)
			case_fail("%llu of the %d pages read last hit", (unsigned long long) (info(e).hits - i0.hits),
					  CACHE_PAGES);
		gh_star_free(s);
		case_end();
	}

	case_begin("a new size empties the cache; size 0 frees it and its device memory");
	gh_page_cache_size(e, 2 * CACHE_PAGES * psz);
	if (info(e).pages != 0 || info(e).bytes != 0)
		case_fail("%llu pages, %zu bytes after a new size", (unsigned long long) info(e).pages,
				  info(e).bytes);
	s = new_star(e, p, dim);
	if (s != NULL && read_named(e, s, a->base, a, 0, n, 12, NULL) &&
		info(e).pages != (size_t) nd * 2 * CACHE_PAGES)
		case_fail("%llu pages kept, want %d", (unsigned long long) info(e).pages,
				  nd * 2 * CACHE_PAGES);
	gh_star_free(s);
	gh_page_cache_size(e, 0);
	if (info(e).bytes != 0 || info(e).size != 0)
		case_fail("%zu bytes held, size %zu after size 0", info(e).bytes, info(e).size);
	check_device_bytes(e, before, "after the cache is freed");
	case_end();

	free(from_a);
	free(p);
}

void
run_pagecache_cases(const sdim *sd, int ndevices, rng *r)
{
	test_config cfg = {ndevices, 0, 0};
	gh_engine  *e = open_engine(&cfg);
	gh_dimcol	cols[GH_PROG_MAX_DIMCOLS];
	gh_dim	   *dim = NULL;
	batches		a;
	size_t		n1,
				n2;
	uint8_t    *base1,
			   *base2;

	if (e == NULL)
		return;
	base1 = fact_pages(run.quick ? 3000 : 12000, r, &n1);
	base2 = fact_pages(run.quick ? 3000 : 12000, r, &n2);
	batches_of(&a, base1, n1 < n2 ? n1 : n2, &sd[0], cols);

	case_begin("an engine without a size has no page cache");
	if (check_ok(gh_dim_create(e, sd[0].keys, sd[0].n, cols, sd[0].ncols, &dim), e, "gh_dim_create"))
	{
		gh_prog		p;
		gh_star    *s;

		sum_prog(&p);
		s = new_star(e, &p, dim);
		if (s != NULL && read_named(e, s, a.base, &a, 0, 10, 5, NULL) &&
			(info(e).misses != 0 || info(e).bytes != 0))
			case_fail("a cache on an engine without a size");
		gh_star_free(s);
	}
	case_end();
	if (dim != NULL && a.npages > 2 * CACHE_PAGES + 30)
		cache_cases(e, dim, &a, base2);
	else if (dim != NULL)
	{
		case_begin("the page cases' pages");
		case_fail("%zu pages, too few", a.npages);
		case_end();
	}
	gh_dim_free(dim);
	gh_close(e);
	free(a.ids);
	free(a.base);
	free(base2);
}
