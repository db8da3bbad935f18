/*-------------------------------------------------------------------------
 *
 * cases_pagebatch.c
 *	  Engine unit tests of gh_pages_read and the batches it makes
 *	  (gh_pagebatch_bad, gh_pagebatch_has_nulls, gh_pagebatch_keep,
 *	  gh_pagebatch_append, gh_pagebatch_append_jkeys, gh_pagebatch_free):
 *	  rows of synthetic PostgreSQL heap pages encoded into packed keys, NULL
 *	  patterns, join keys and aggregate values, kept by page and appended
 *	  by pattern to device arrays.
 *
 * The pages are written with cases_pages.c's tuple writer, and the rows
 * they hold recorded as they are written; what each row must become is
 * worked out here in plain C from engine.h's rules, without heap_page.h,
 * and every array appended to is compared byte by byte:
 *
 *	- random schemas; 1 to 4 grouping keys (8 at most; none to 4 with join
 *	  keys) of 1, 2, 4 and 8 bytes, narrower and wider than their columns,
 *	  in fields at random shifts under random masks (with holes, with bits
 *	  the width cuts off, running past bit 63) that do not overlap; mods
 *	  positive, negative, 1, -1 and the width's extremes on 2-, 4- and
 *	  8-byte columns, over values of 0, -1, the smallest and the largest
 *	- NULLs of grouping keys in key bits (null_in_key): of every key, of
 *	  some and of none, each nullbit in a hole of the key (or anywhere when
 *	  there is none), bit 63 among them; the pattern untouched; nullbit
 *	  garbage (up to 255) where null_in_key is 0, ignored
 *	- join keys (njkeys, jkey[]): 1 to 3 columns (8 at most), repeats and
 *	  grouping key columns among them, SIGNED and UNSIGNED32 on columns of
 *	  each width (sign- and zero-extended to 64 bits), widths of 1 to 64
 *	  bits cutting values, in packed or overlapping fields, bits past 63
 *	  shifted out; a row with a NULL in a join key column kept nowhere: in
 *	  no count, no array, not in gh_pagebatch_has_nulls either; the join
 *	  keys appended by gh_pagebatch_append_jkeys before or after
 *	  gh_pagebatch_append, given keys NULL at times (values still appended)
 *	- aggregate values of each conv on columns of each width, col -1,
 *	  columns with and without NULLs: gh_pagebatch_has_nulls exact (where
 *	  a malformed page was read, true is also taken for a column whose
 *	  NULLs could be in that page's rows read before the fault)
 *	- drop flags: none (NULL), all 0, all 1, random; malformed pages (bad
 *	  pd_lower, a line pointer past the page, a short t_hoff, data short
 *	  of the columns) and all-zero pages reported by gh_pagebatch_bad and
 *	  never kept; page lists shuffled, with repeats
 *	- counts[p] of all 256 patterns; each pattern's rows exactly, in page
 *	  list then line pointer order; patterns without rows appending nothing;
 *	  two batches appended to the same arrays; arrays on the device, in host
 *	  memory and mixed, nulls[v] left out where no row has a NULL there;
 *	  arrays holding 1 MiB on the device moved to host memory by the append
 *	  itself (a budget of 1 byte); an engine of two devices; many patterns
 *	  (8 keys on 8 columns), at most 64 of them (quick: 24) appended where
 *	  arrays are on the device
 *	- 0 pages (also with NULL base and pages), 1 page, pages of 291 rows,
 *	  3000 pages (100 pages in the quick mode)
 *	- GH_ERR_INVALID for each bad argument engine.h lists, with a message
 *	  of its own; nulls[v] NULL accepted where the pattern's kept rows have
 *	  no NULL there; gh_pagebatch_free(NULL); device memory back to a fresh
 *	  engine's
 *	- for join keys and null_in_key: GH_ERR_INVALID for njkeys -1 and 9 (the
 *	  entries past 8 valid), a join key of no output column, of width 0 or
 *	  65, a shift of 64, conv ZERO or unknown, null_in_key with nullbit 64
 *	  or 255; gh_pagebatch_append_jkeys of a batch without join keys, not
 *	  kept, of pattern 256 or -1, jkeys NULL, each appending nothing; the
 *	  limits accepted (8 join keys, widths 1 and 64 at shifts 0 and 63,
 *	  nullbit 63)
 *
 * Arrays on the device cannot be read here: each one is moved to host
 * memory first by an append of zeros past a device budget of 1 byte
 * (gh_debug_darray_budget), then compared, zeros included.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"

#define PAGE_BYTES		8192	/* BLCKSZ */
#define PAGE_ROWS		291		/* MaxHeapTuplesPerPage */
#define PAGE_LP_START	24		/* line pointers follow the page header */
#define TUPLE_BUF		512		/* what build_tuple may write */
#define ALIGN8(x)		(((size_t) (x) + 7) & ~(size_t) 7)
#define LP(off, flags, len) ((uint32_t) (off) | ((uint32_t) (flags) << 15) | ((uint32_t) (len) << 17))

#define MIB				((size_t) 1 << 20)
#define NPATTERNS		256

/* ---- pages and the rows they hold ---- */

/*
 * npages pages; output o of row r of page p is at SLOT(p, r) + o of vals
 * and nulls.
 */
typedef struct heap
{
	size_t		npages;
	uint8_t    *base;			/* 16-byte aligned */
	uint32_t   *nrows;
	uint8_t    *bad;			/* 1: malformed; 2: all zeros (malformed or empty) */
	uint64_t   *vals;
	uint8_t    *nulls;
} heap;

#define SLOT(p, r) (((size_t) (p) * PAGE_ROWS + (size_t) (r)) * GH_PAGE_MAX_OUT)

static void
heap_init(heap *h, size_t npages)
{
	h->npages = npages;
	h->base = aligned_alloc(16, (npages > 0 ? npages : 1) * PAGE_BYTES);
	if (h->base == NULL)
	{
		printf("engine_test: out of memory for %zu pages\n", npages);
		exit(2);
	}
	h->nrows = xcalloc(npages, sizeof(uint32_t));
	h->bad = xcalloc(npages, 1);
	h->vals = xmalloc(SLOT(npages, 0) * sizeof(uint64_t));
	h->nulls = xmalloc(SLOT(npages, 0));
}

static void
heap_free(heap *h)
{
	free(h->base);
	free(h->nrows);
	free(h->bad);
	free(h->vals);
	free(h->nulls);
}

typedef enum fill
{
	FILL_SOME,					/* 1..50 line pointers, most LP_NORMAL */
	FILL_FULL,					/* tuples until the next does not fit */
	FILL_MAX,					/* 291 tuples of no data (every column NULL) */
	FILL_EMPTY,					/* no line pointer */
	FILL_ZERO					/* all zeros, as a page just added */
} fill;

/*
 * Write page p of h as PostgreSQL lays it out, tuples of schema s; no row
 * has a NULL in the output columns of notnull (a bit per column; FILL_MAX
 * only with none).
 */
static void
write_page(heap *h, size_t p, fill f, const gh_pagespec *s, uint32_t notnull, rng *r)
{
	static const int null_pcts[] = {0, 5, 30, 80};
	uint8_t    *page = h->base + p * PAGE_BYTES;
	uint32_t	lower = PAGE_LP_START,
				upper = PAGE_BYTES,
				rows = 0;
	int			nlp = f == FILL_SOME ? 1 + (int) rng_below(r, 50) : f == FILL_EMPTY ? 0 : PAGE_ROWS;
	int			null_pct = null_pcts[rng_below(r, 4)];
	uint8_t		tup[TUPLE_BUF];

	h->nrows[p] = 0;
	h->bad[p] = 0;
	if (f == FILL_ZERO)
	{
		memset(page, 0, PAGE_BYTES);
		h->bad[p] = 2;
		return;
	}
	fill_random(page, PAGE_BYTES, r);
	for (int i = 0; i < nlp && lower + 4 <= upper; i++)
	{
		uint64_t	u = rng_below(r, 20);
		uint32_t	lp = LP(0, 0, 0);	/* LP_UNUSED */

		if (f != FILL_SOME || u < 16)
		{
			uint64_t   *vals = &h->vals[SLOT(p, rows)];
			uint8_t    *nulls = &h->nulls[SLOT(p, rows)];
			size_t		len;
			int			tries = 0;
			bool		clean;

			do
			{
				len = build_tuple(s, r, null_pct, f == FILL_MAX, tup, vals, nulls);
				clean = true;
				for (int o = 0; o < s->nout; o++)
					clean &= !((notnull >> o) & 1) || !nulls[o];
				if (++tries > 10000)
				{
					printf("engine_test: no tuple without NULLs in columns 0x%x\n", notnull);
					exit(2);
				}
			} while (!clean);
			if (lower + 4 + ALIGN8(len) > upper)
				break;
			upper -= (uint32_t) ALIGN8(len);
			memcpy(page + upper, tup, len);
			lp = LP(upper, 1, len);
			rows++;
		}
		else if (u < 18)
			lp = LP(rng_below(r, 2) ? 8 * (3 + rng_below(r, 900)) : 0, 3, rng_below(r, 2) ? 40 : 0);
		else
			lp = LP(1 + rng_below(r, (uint64_t) nlp), 2, 0);	/* LP_REDIRECT */
		put32(page + lower, lp);
		lower += 4;
	}
	h->nrows[p] = rows;
	/* pd_lower, pd_upper, pd_special (none), pd_pagesize_version; pd_flags */
	put32(page + 12, lower | upper << 16);
	put32(page + 16, PAGE_BYTES | (PAGE_BYTES | 4) << 16);
	put16(page + 10, (uint32_t) rng_below(r, 8));
}

typedef enum spoil
{
	SPOIL_LOWER,				/* pd_lower not at a line pointer boundary */
	SPOIL_EXTENT,				/* a tuple running past the page */
	SPOIL_HOFF,					/* a t_hoff inside the tuple header */
	SPOIL_SHORT,				/* lp_len one byte short of the columns */
	NSPOIL
} spoil;

static const char *const spoil_names[NSPOIL] = {
	"pd_lower between line pointers",
	"a tuple running past the page",
	"a t_hoff of 16",
	"lp_len a byte short of the columns",
};

/* Make written page p of h malformed in way w: false if it has no tuple for it. */
static bool
spoil_page(heap *h, size_t p, spoil w, rng *r)
{
	uint8_t    *page = h->base + p * PAGE_BYTES;
	uint32_t	nlp = (get16(page + 12) - PAGE_LP_START) / 4;
	int			cand[PAGE_ROWS];
	int			n = 0;
	uint8_t    *at;
	uint32_t	lp;

	if (w == SPOIL_LOWER)
		put16(page + 12, get16(page + 12) + 2);
	else
	{
		for (uint32_t i = 0; i < nlp; i++)
		{
			lp = get32(page + PAGE_LP_START + 4 * i);
			if ((lp >> 15 & 3) == 1 &&
				(w != SPOIL_SHORT || (lp >> 17) > page[(lp & 0x7FFF) + 22]))
				cand[n++] = (int) i;
		}
		if (n == 0)
			return false;
		at = page + PAGE_LP_START + 4 * cand[rng_below(r, (uint64_t) n)];
		lp = get32(at);
		if (w == SPOIL_EXTENT)
			put32(at, LP(lp & 0x7FFF, 1, PAGE_BYTES - (lp & 0x7FFF) + 8));
		else if (w == SPOIL_HOFF)
			page[(lp & 0x7FFF) + 22] = 16;
		else
			put32(at, LP(lp & 0x7FFF, 1, (lp >> 17) - 1));
	}
	h->bad[p] = 1;
	h->nrows[p] = 0;
	return true;
}

/* A kind of page for page p of a set: each kind first (FILL_MAX only without notnull), then at random. */
static fill
pick_fill(size_t p, uint32_t notnull, rng *r)
{
	uint64_t	u = rng_below(r, 16);
	fill		f;

	if (p < 3)
		f = p == 0 ? FILL_FULL : p == 1 ? FILL_MAX : FILL_EMPTY;
	else
		f = u < 8 ? FILL_SOME : u < 12 ? FILL_FULL : u < 14 ? FILL_MAX : u < 15 ? FILL_EMPTY : FILL_ZERO;
	return f == FILL_MAX && notnull != 0 ? FILL_SOME : f;
}

/*
 * Write every page of h: malformed (way p / every % NSPOIL) where p % every
 * is every - 1 (every 0: none).
 */
static void
write_heap(heap *h, const gh_pagespec *s, uint32_t notnull, size_t every, rng *r)
{
	for (size_t p = 0; p < h->npages; p++)
	{
		if (every > 0 && p % every == every - 1)
		{
			do
				write_page(h, p, rng_below(r, 2) ? FILL_SOME : FILL_FULL, s, notnull, r);
			while (!spoil_page(h, p, (spoil) (p / every % NSPOIL), r));
		}
		else
			write_page(h, p, pick_fill(p, notnull, r), s, notnull, r);
	}
}

/* Output columns that never hold a NULL: each at random (or none, or all). */
static uint32_t
random_notnull(const gh_pagespec *s, rng *r)
{
	switch (rng_below(r, 4))
	{
		case 0:
			return 0;
		case 1:
			return (UINT32_C(1) << s->nout) - 1;
		default:
			return (uint32_t) rng_next(r) & ((UINT32_C(1) << s->nout) - 1);
	}
}

/* ---- encodings ---- */

/* The width in bytes of output column o. */
static int
out_width(const gh_pagespec *s, int o)
{
	for (int a = 0; a < s->natts; a++)
		if (s->out_of[a] == o)
			return s->attlen[a];
	return 0;
}

/* v's low w bytes, sign-extended */
static int64_t
signed_of(uint64_t v, int w)
{
	switch (w)
	{
		case 1:
			return (int8_t) v;
		case 2:
			return (int16_t) v;
		case 4:
			return (int32_t) v;
		default:
			return (int64_t) v;
	}
}

/* A mod for a key of w bytes (2, 4 or 8), never 0. */
static int64_t
random_mod(int w, rng *r)
{
	int64_t		smallest = w == 2 ? INT16_MIN : w == 4 ? INT32_MIN : INT64_MIN;
	int64_t		m;

	switch (rng_below(r, 9))
	{
		case 0:
			return -1;
		case 1:
			return 1;
		case 2:
			return smallest;
		case 3:
			return -(smallest + 1);
		case 4:
			return 2 + (int64_t) rng_below(r, 1000);
		case 5:
			return -2 - (int64_t) rng_below(r, 1000);
		default:
			m = signed_of(rng_next(r), w);
			return m != 0 ? m : 7;
	}
}

/*
 * nkeys random keys: columns (all different if distinct: nkeys <= nout)
 * and widths at random (a mod on some whose width is their column's), each
 * in its own field of the key at a random shift, the last one perhaps
 * running past bit 63; pattern bits all different.
 */
static void
random_keys(gh_pageenc *enc, const gh_pagespec *s, int nkeys, bool distinct, rng *r)
{
	static const uint8_t widths[] = {1, 2, 4, 8};
	uint64_t   *order = gen_permutation((size_t) nkeys, r);
	uint64_t   *bits = gen_permutation(8, r);
	uint64_t   *cols = gen_permutation((size_t) s->nout, r);
	int			at = (int) rng_below(r, 8);

	distinct &= nkeys <= s->nout;
	enc->nkeys = nkeys;
	for (int i = 0; i < nkeys; i++)
	{
		gh_pagekey *k = &enc->key[order[i]];
		int			left = nkeys - 1 - i;
		int			room = 64 - at - left;
		int			cw,
					most,
					nbits;

		k->col = (int8_t) (distinct ? cols[i] : rng_below(r, (uint64_t) s->nout));
		cw = out_width(s, k->col);
		k->bit = (uint8_t) bits[i];
		k->width = rng_below(r, 2) ? (uint8_t) cw : widths[rng_below(r, 4)];
		k->mod = k->width == cw && cw >= 2 && rng_below(r, 2) ? random_mod(cw, r) : 0;
		most = 8 * k->width < room ? 8 * k->width : room;
		nbits = 1 + (int) rng_below(r, (uint64_t) most);
		if (left == 0 && rng_below(r, 4) == 0)
			nbits = 8 * k->width;	/* bits past 63 are shifted out */
		k->shift = (uint8_t) at;
		k->mask = nbits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << nbits) - 1;
		if (rng_below(r, 4) == 0)
			k->mask &= rng_next(r);
		if (nbits == 8 * k->width && k->width < 8 && rng_below(r, 2) == 0)
			k->mask |= rng_next(r) << (8 * k->width);	/* cut off by the width first */
		if (left > 0)
			at += nbits + (int) rng_below(r, (uint64_t) (room - nbits) / 2 + 1);
	}
	free(order);
	free(bits);
	free(cols);
}

/* nvals aggregate columns: any column (-1 at times), any conv. */
static void
random_vals(gh_pageenc *enc, const gh_pagespec *s, int nvals, rng *r)
{
	enc->nvals = nvals;
	for (int v = 0; v < nvals; v++)
	{
		enc->val[v].col = rng_below(r, 6) == 0 ? -1 : (int8_t) rng_below(r, (uint64_t) s->nout);
		enc->val[v].conv = (uint8_t) rng_below(r, 3);
	}
}

/* A random encoding of nkeys keys (see random_keys) and nvals values. */
static void
random_enc(gh_pageenc *enc, const gh_pagespec *s, int nkeys, bool distinct, int nvals, rng *r)
{
	memset(enc, 0, sizeof(*enc));
	random_keys(enc, s, nkeys, distinct, r);
	random_vals(enc, s, nvals, r);
}

/*
 * NULLs of the keys in key bits (null_in_key) instead of pattern bits: none
 * (mode 0; nullbit then left as garbage at times, 0..255), every key (1) or
 * each at random (2).  Each nullbit is a bit no key's field and no other
 * nullbit uses, where there is one, else any bit.
 */
static void
random_null_in_key(gh_pageenc *enc, int mode, rng *r)
{
	uint64_t	used = 0;

	for (int k = 0; k < enc->nkeys; k++)
	{
		const gh_pagekey *pk = &enc->key[k];
		uint64_t	m = pk->mask;

		if (pk->width < 8)
			m &= (UINT64_C(1) << (8 * pk->width)) - 1;
		used |= m << pk->shift;
	}
	for (int k = 0; k < enc->nkeys; k++)
	{
		gh_pagekey *pk = &enc->key[k];
		int			nfree = 0,
					pick;

		pk->null_in_key = mode == 1 || (mode == 2 && rng_below(r, 2));
		if (!pk->null_in_key)
		{
			pk->nullbit = rng_below(r, 2) ? (uint8_t) rng_below(r, 256) : 0;
			continue;
		}
		for (int b = 0; b < 64; b++)
			nfree += !((used >> b) & 1);
		if (nfree == 0)
		{
			pk->nullbit = (uint8_t) rng_below(r, 64);
			continue;
		}
		pick = (int) rng_below(r, (uint64_t) nfree);
		for (int b = 0; b < 64; b++)
			if (!((used >> b) & 1) && pick-- == 0)
			{
				pk->nullbit = (uint8_t) b;
				used |= UINT64_C(1) << b;
				break;
			}
	}
}

/*
 * njkeys join key columns (any, repeats allowed), of either conv, widths of
 * 1 to 64 bits (often their column's, or 32 or 64); packed: in fields one
 * after another from a random bit (the last ones perhaps running past bit
 * 63, or starting anywhere when past it), else at random shifts,
 * overlapping.
 */
static void
random_jkeys(gh_pageenc *enc, const gh_pagespec *s, int njkeys, bool packed, rng *r)
{
	int			at = (int) rng_below(r, 12);

	enc->njkeys = njkeys;
	for (int j = 0; j < njkeys; j++)
	{
		gh_pagejkey *pj = &enc->jkey[j];
		int			cw;

		pj->col = (int8_t) rng_below(r, (uint64_t) s->nout);
		cw = 8 * out_width(s, pj->col);
		pj->conv = rng_below(r, 2) ? GH_PAGEVAL_SIGNED : GH_PAGEVAL_UNSIGNED32;
		switch (rng_below(r, 6))
		{
			case 0:
			case 1:
				pj->width = (uint8_t) cw;
				break;
			case 2:
				pj->width = 64;
				break;
			case 3:
				pj->width = (uint8_t) (31 + rng_below(r, 3));
				break;
			case 4:
				pj->width = (uint8_t) (1 + rng_below(r, (uint64_t) cw));
				break;
			default:
				pj->width = (uint8_t) (1 + rng_below(r, 64));
				break;
		}
		if (packed)
		{
			pj->shift = (uint8_t) (at < 64 ? at : (int) rng_below(r, 64));
			at += pj->width + (int) rng_below(r, 3);
		}
		else
			pj->shift = (uint8_t) rng_below(r, 64);
	}
}

/*
 * "2 keys: c3 w2 <<17 &ff %-7 b2, c0 w1 <<40 &1 b5 n33; 2 values: c1 s, c-1 z;
 * 1 join key: c2 u w33 <<0" (n33: NULL in key bit 33)
 */
static const char *
enc_desc(const gh_pageenc *enc, char *buf, size_t len)
{
	static const char convs[] = "zsu";
	size_t		at = (size_t) snprintf(buf, len, "%d key%s", enc->nkeys, enc->nkeys == 1 ? "" : "s");

	for (int k = 0; k < enc->nkeys && at < len; k++)
	{
		const gh_pagekey *pk = &enc->key[k];

		at += (size_t) snprintf(buf + at, len - at, "%s c%d w%d <<%d &%llx b%d", k ? "," : ":",
								pk->col, pk->width, pk->shift, (unsigned long long) pk->mask,
								pk->bit);
		if (pk->mod != 0 && at < len)
			at += (size_t) snprintf(buf + at, len - at, " %%%lld", (long long) pk->mod);
		if (pk->null_in_key && at < len)
			at += (size_t) snprintf(buf + at, len - at, " n%d", pk->nullbit);
	}
	if (at < len)
		at += (size_t) snprintf(buf + at, len - at, "; %d value%s", enc->nvals,
								enc->nvals == 1 ? "" : "s");
	for (int v = 0; v < enc->nvals && at < len; v++)
		at += (size_t) snprintf(buf + at, len - at, "%s c%d %c", v ? "," : ":",
								enc->val[v].col, convs[enc->val[v].conv % 3]);
	if (enc->njkeys > 0 && at < len)
		at += (size_t) snprintf(buf + at, len - at, "; %d join key%s", enc->njkeys,
								enc->njkeys == 1 ? "" : "s");
	for (int j = 0; j < enc->njkeys && at < len; j++)
		at += (size_t) snprintf(buf + at, len - at, "%s c%d %c w%d <<%d", j ? "," : ":",
								enc->jkey[j].col, convs[enc->jkey[j].conv % 3],
								enc->jkey[j].width, enc->jkey[j].shift);
	return buf;
}

/* ---- the oracle ---- */

/* Key k's bits of a row whose column value is v (not NULL). */
static uint64_t
key_bits(const gh_pagekey *k, uint64_t v)
{
	if (k->mod == -1)
		v = 0;					/* x % -1, without MIN % -1's overflow */
	else if (k->mod != 0)
		v = (uint64_t) (signed_of(v, k->width) % signed_of((uint64_t) k->mod, k->width));
	if (k->width < 8)
		v &= (UINT64_C(1) << (8 * k->width)) - 1;
	return (v & k->mask) << k->shift;
}

/* Join key column j's bits of a row whose column value is v (not NULL). */
static uint64_t
jkey_bits(const gh_pagejkey *j, uint64_t v)
{
	if (j->conv == GH_PAGEVAL_UNSIGNED32)
		v = (uint32_t) v;
	/* the low width bits: width 64 keeps them all */
	v = v << (64 - j->width) >> (64 - j->width);
	return v << j->shift;
}

/*
 * The rows gh_pages_read and gh_pagebatch_keep must make of a list of
 * pages: the kept ones in order, each with its pattern, key, join key and
 * values.  A row with a NULL in a join key column is not kept and counts
 * nowhere, not even in has_nulls.
 */
typedef struct want_batch
{
	int			nvals;
	size_t		nkept;
	uint8_t    *pattern;
	uint64_t   *keys;
	uint64_t   *jkeys;
	uint64_t   *vals;			/* kept row i, value v: i * nvals + v */
	uint8_t    *nulls;
	uint32_t   *entry;			/* the list entry and line pointer row each came from */
	uint16_t   *row;
	uint64_t	count[NPATTERNS];
	bool		has_nulls[GH_PAGE_MAX_VALS];	/* in a row read of a page not malformed */
	bool		some_bad;		/* malformed pages too */
	size_t		unjoined;		/* rows of pages not dropped with a NULL join key */
} want_batch;

/* A list of pages of a heap: entry i is page ids[i], dropped if drop[i]. */
typedef struct plist
{
	const uint32_t *ids;
	size_t		n;
	const uint8_t *drop;		/* NULL: none */
} plist;

static void
want_make(want_batch *w, const heap *h, const gh_pageenc *enc, const plist *l)
{
	size_t		most = 0;
	int			nv = enc->nvals;

	memset(w, 0, sizeof(*w));
	w->nvals = nv;
	for (size_t i = 0; i < l->n; i++)
		most += h->nrows[l->ids[i]];
	w->pattern = xmalloc(most);
	w->keys = xmalloc(most * sizeof(uint64_t));
	w->jkeys = xmalloc(most * sizeof(uint64_t));
	w->vals = xmalloc(most * (size_t) (nv > 0 ? nv : 1) * sizeof(uint64_t));
	w->nulls = xmalloc(most * (size_t) (nv > 0 ? nv : 1));
	w->entry = xmalloc(most * sizeof(uint32_t));
	w->row = xmalloc(most * sizeof(uint16_t));
	for (size_t i = 0; i < l->n; i++)
	{
		uint32_t	p = l->ids[i];

		w->some_bad |= h->bad[p] == 1;
		for (uint32_t r = 0; r < h->nrows[p]; r++)
		{
			const uint64_t *vals = &h->vals[SLOT(p, r)];
			const uint8_t *nulls = &h->nulls[SLOT(p, r)];
			size_t		at = w->nkept;
			uint64_t	key = 0,
						jkey = 0;
			int			pattern = 0;
			bool		joins = true;

			for (int j = 0; j < enc->njkeys; j++)
			{
				const gh_pagejkey *pj = &enc->jkey[j];

				joins &= !nulls[pj->col];
				jkey |= jkey_bits(pj, vals[pj->col]);
			}
			if (!joins)
			{
				w->unjoined += l->drop == NULL || !l->drop[i];
				continue;
			}
			for (int v = 0; v < nv; v++)
				w->has_nulls[v] |= enc->val[v].col >= 0 && nulls[enc->val[v].col];
			if (l->drop != NULL && l->drop[i])
				continue;
			for (int k = 0; k < enc->nkeys; k++)
			{
				const gh_pagekey *pk = &enc->key[k];

				if (nulls[pk->col] && pk->null_in_key)
					key |= UINT64_C(1) << pk->nullbit;
				else if (nulls[pk->col])
					pattern |= 1 << pk->bit;
				else
					key |= key_bits(pk, vals[pk->col]);
			}
			for (int v = 0; v < nv; v++)
			{
				const gh_pageval *pv = &enc->val[v];
				bool		null = pv->col >= 0 && nulls[pv->col];
				uint64_t	x = 0;

				if (!null && pv->col >= 0 && pv->conv == GH_PAGEVAL_SIGNED)
					x = vals[pv->col];
				else if (!null && pv->col >= 0 && pv->conv == GH_PAGEVAL_UNSIGNED32)
					x = vals[pv->col] & UINT32_MAX;
				w->vals[at * nv + v] = x;
				w->nulls[at * nv + v] = null;
			}
			w->pattern[at] = (uint8_t) pattern;
			w->keys[at] = key;
			w->jkeys[at] = jkey;
			w->entry[at] = (uint32_t) i;
			w->row[at] = (uint16_t) r;
			w->count[pattern]++;
			w->nkept++;
		}
	}
}

static void
want_free(want_batch *w)
{
	void	   *arrays[] = {w->pattern, w->keys, w->jkeys, w->vals, w->nulls, w->entry, w->row};

	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		free(arrays[i]);
}

/* Does a kept row of pattern have a NULL in value v? */
static bool
want_null_in(const want_batch *w, int pattern, int v)
{
	for (size_t i = 0; i < w->nkept; i++)
		if (w->pattern[i] == pattern && w->nulls[i * w->nvals + v])
			return true;
	return false;
}

/* ---- device arrays and what they must hold ---- */

/*
 * Arrays of a sink: keys, values[v] at VALUES + v, nulls[v] at NULLS + v,
 * join keys at JKEYS.
 */
#define VALUES			1
#define NULLS			(1 + GH_PAGE_MAX_VALS)
#define JKEYS			(1 + 2 * GH_PAGE_MAX_VALS)
#define NARRAYS			(2 + 2 * GH_PAGE_MAX_VALS)

typedef enum placement
{
	PLACE_DEVICE,
	PLACE_HOST,
	PLACE_MIXED					/* each array at random */
} placement;

static const char *const placement_names[] = {
	"on the device", "in host memory", "on the device and in host memory"
};

/*
 * One pattern's arrays for gh_pagebatch_append and gh_pagebatch_append_jkeys
 * (NULL where not given), with the bytes each must hold and, for the rows
 * appended, where each came from: batch << 40 | list entry << 16 | line
 * pointer row.
 */
typedef struct sink
{
	int			pattern;
	int			nvals;
	bool		jkeys_first;	/* gh_pagebatch_append_jkeys before gh_pagebatch_append */
	gh_darray  *a[NARRAYS];
	uint8_t    *want[NARRAYS];
	size_t		len[NARRAYS];
	size_t		cap[NARRAYS];
	size_t		pre[NARRAYS];	/* bytes appended before any row */
	size_t		nrows;
	uint64_t   *from;
	size_t		from_cap;
} sink;

/* p reallocated to bytes; the run stops if there is no memory for it. */
static void *
grow(void *p, size_t bytes)
{
	p = realloc(p, bytes);
	if (p == NULL)
	{
		printf("engine_test: out of memory\n");
		exit(2);
	}
	return p;
}

static void
want_add(sink *k, int i, const void *src, size_t bytes)
{
	if (k->len[i] + bytes > k->cap[i])
	{
		k->cap[i] = 2 * (k->len[i] + bytes);
		k->want[i] = grow(k->want[i], k->cap[i]);
	}
	memcpy(k->want[i] + k->len[i], src, bytes);
	k->len[i] += bytes;
}

/*
 * Arrays for pattern's rows of nvals values, placed as asked: keys unless
 * no_keys, join keys if jkeys, nulls[v] unless bit v of no_nulls is set;
 * prefill bytes of src appended to each first.  False (the case failed) on
 * an error.
 */
static bool
sink_open_join(gh_engine *e, sink *k, int pattern, int nvals, bool no_keys, bool jkeys,
			   placement place, uint64_t no_nulls, const uint8_t *src, size_t prefill, rng *r)
{
	memset(k, 0, sizeof(*k));
	k->pattern = pattern;
	k->nvals = nvals;
	k->jkeys_first = jkeys && rng_below(r, 2);
	/* JKEYS, the last, only with join keys */
	for (int i = 0; i < (jkeys ? NARRAYS : JKEYS); i++)
	{
		bool		used = (i == 0 && !no_keys) || (i >= VALUES && i < VALUES + nvals) ||
			(i >= NULLS && i < NULLS + nvals && !((no_nulls >> (i - NULLS)) & 1)) ||
			i == JKEYS;
		bool		dev = place == PLACE_DEVICE || (place == PLACE_MIXED && rng_below(r, 2));

		if (!used)
			continue;
		if (!check_ok(gh_darray_create(e, dev, &k->a[i]), e, "gh_darray_create"))
			return false;
		if (prefill > 0)
		{
			if (!check_ok(gh_darray_append(k->a[i], src, prefill), e, "gh_darray_append"))
				return false;
			want_add(k, i, src, prefill);
			k->pre[i] = prefill;
		}
	}
	return true;
}

/* sink_open_join with keys, without join keys. */
static bool
sink_open(gh_engine *e, sink *k, int pattern, int nvals, placement place, uint64_t no_nulls,
		  const uint8_t *src, size_t prefill, rng *r)
{
	return sink_open_join(e, k, pattern, nvals, false, false, place, no_nulls, src, prefill, r);
}

static void
sink_free(sink *k)
{
	for (int i = 0; i < NARRAYS; i++)
	{
		gh_darray_free(k->a[i]);
		free(k->want[i]);
	}
	free(k->from);
	memset(k, 0, sizeof(*k));
}

/*
 * gh_pagebatch_append of k's pattern to k's arrays, and
 * gh_pagebatch_append_jkeys (before or after) where k has join keys; on
 * GH_OK what they must now hold.
 */
static gh_status
sink_append(sink *k, gh_pagebatch *b, const want_batch *w, int batch)
{
	gh_status	st = GH_OK;

	if (k->a[JKEYS] != NULL && k->jkeys_first)
		st = gh_pagebatch_append_jkeys(b, k->pattern, k->a[JKEYS]);
	if (st == GH_OK)
		st = gh_pagebatch_append(b, k->pattern, k->a[0], &k->a[VALUES], &k->a[NULLS]);
	if (st == GH_OK && k->a[JKEYS] != NULL && !k->jkeys_first)
		st = gh_pagebatch_append_jkeys(b, k->pattern, k->a[JKEYS]);
	if (st != GH_OK)
		return st;
	for (size_t i = 0; i < w->nkept; i++)
	{
		if (w->pattern[i] != k->pattern)
			continue;
		if (k->a[0] != NULL)
			want_add(k, 0, &w->keys[i], 8);
		if (k->a[JKEYS] != NULL)
			want_add(k, JKEYS, &w->jkeys[i], 8);
		for (int v = 0; v < k->nvals; v++)
		{
			want_add(k, VALUES + v, &w->vals[i * w->nvals + v], 8);
			if (k->a[NULLS + v] != NULL)
				want_add(k, NULLS + v, &w->nulls[i * w->nvals + v], 1);
		}
		if (k->nrows == k->from_cap)
		{
			k->from_cap = 2 * k->from_cap + 64;
			k->from = grow(k->from, k->from_cap * sizeof(uint64_t));
		}
		k->from[k->nrows++] = (uint64_t) batch << 40 | (uint64_t) w->entry[i] << 16 | w->row[i];
	}
	return GH_OK;
}

/*
 * a's bytes in host memory (*got): an array on the device is moved there
 * first by an append of *pad zero bytes past a device budget of 1 byte.
 * False (the case failed) on an error.
 */
static bool
host_bytes(gh_engine *e, gh_darray *a, const uint8_t **got, size_t *pad)
{
	gh_status	st;

	*pad = 0;
	if (gh_darray_on_device(a))
	{
		*pad = (gh_darray_bytes(a) > MIB ? gh_darray_bytes(a) : MIB) + 8;
		gh_debug_darray_budget(e, 1);
		st = gh_darray_append(a, NULL, *pad);
		gh_debug_darray_budget(e, 0);	/* the default again */
		if (!check_ok(st, e, "gh_darray_append (zeros, to move an array to host memory)"))
			return false;
		if (gh_darray_on_device(a))
		{
			case_fail("an array is still on the device after an append past a budget of 1 byte");
			return false;
		}
	}
	*got = gh_darray_data(a);
	return true;
}

/* Compare every array of k with what it must hold; false (the case failed) if one differs. */
static bool
sink_check(gh_engine *e, sink *k)
{
	for (int i = 0; i < NARRAYS; i++)
	{
		char		name[32];
		size_t		width = i >= NULLS && i < JKEYS ? 1 : 8;
		size_t		pad;
		const uint8_t *got;

		if (k->a[i] == NULL)
			continue;
		if (i == 0 || i == JKEYS)
			snprintf(name, sizeof(name), i == 0 ? "keys" : "join keys");
		else
			snprintf(name, sizeof(name), "%s[%d]", i >= NULLS ? "nulls" : "values",
					 i >= NULLS ? i - NULLS : i - VALUES);
		if (!host_bytes(e, k->a[i], &got, &pad))
			return false;
		if (gh_darray_bytes(k->a[i]) != k->len[i] + pad)
		{
			case_fail("pattern %d, %s: %zu bytes, want %zu (%zu rows of %zu bytes after %zu)",
					  k->pattern, name, gh_darray_bytes(k->a[i]) - pad, k->len[i], k->nrows,
					  width, k->pre[i]);
			return false;
		}
		for (size_t at = 0; at < k->len[i]; at += width)
		{
			uint64_t	g = 0,
						w = 0;
			size_t		row;
			uint64_t	from;

			memcpy(&g, got + at, width);
			memcpy(&w, k->want[i] + at, width);
			if (g == w)
				continue;
			if (at < k->pre[i])
			{
				case_fail("pattern %d, %s: byte %zu of the %zu appended before the rows is 0x%llx, want 0x%llx",
						  k->pattern, name, at, k->pre[i], (unsigned long long) g,
						  (unsigned long long) w);
				return false;
			}
			row = (at - k->pre[i]) / width;
			from = k->from[row];
			case_fail("pattern %d, %s, row %zu of %zu (batch %d, list entry %llu, row %llu of its page): 0x%llx, want 0x%llx",
					  k->pattern, name, row, k->nrows, (int) (from >> 40),
					  (unsigned long long) (from >> 16 & 0xFFFFFF),
					  (unsigned long long) (from & 0xFFFF), (unsigned long long) g,
					  (unsigned long long) w);
			return false;
		}
		for (size_t at = 0; at < pad; at++)
			if (got[k->len[i] + at] != 0)
			{
				case_fail("pattern %d, %s: byte %zu of the zeros appended is 0x%x", k->pattern,
						  name, at, got[k->len[i] + at]);
				return false;
			}
	}
	return true;
}

/*
 * Arrays for pattern's rows of w->nvals values (sink_open_join's no_keys,
 * jkeys, place and no_nulls, nothing before the rows), the pattern of batch
 * b appended to them (what names the call in a failure), and every array
 * compared with what w says it must hold.
 */
static void
append_check(gh_engine *e, gh_pagebatch *b, const want_batch *w, int pattern, bool no_keys,
			 bool jkeys, placement place, uint64_t no_nulls, const char *what, rng *r)
{
	sink		k;

	if (sink_open_join(e, &k, pattern, w->nvals, no_keys, jkeys, place, no_nulls, NULL, 0, r) &&
		check_ok(sink_append(&k, b, w, 0), e, what))
		sink_check(e, &k);
	sink_free(&k);
}

/* ---- reading and keeping ---- */

/*
 * gh_pages_read of list l of h, checked (bad flags, has_nulls), then
 * gh_pagebatch_keep(l->drop), checked (counts): the batch, or NULL (the
 * case failed) on an error.
 */
static gh_pagebatch *
read_keep(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc, const heap *h,
		  const plist *l, const want_batch *w, int batch)
{
	gh_pagebatch *b = NULL;
	const uint8_t *bad;
	uint64_t	counts[NPATTERNS];

	if (!check_ok(gh_pages_read(e, s, enc, h->base, l->ids, l->n, &b), e, "gh_pages_read"))
		return NULL;
	if (b == NULL)
	{
		case_fail("gh_pages_read returned GH_OK and no batch");
		return NULL;
	}
	bad = gh_pagebatch_bad(b);
	if (l->n > 0 && bad == NULL)
		case_fail("batch %d: gh_pagebatch_bad is NULL", batch);
	for (size_t i = 0; i < l->n && bad != NULL; i++)
	{
		int			want = h->bad[l->ids[i]];

		if (want == 2 ? bad[i] > 1 : bad[i] != want)
		{
			case_fail("batch %d, list entry %zu (page %u): bad %u, want %d", batch, i, l->ids[i],
					  bad[i], want);
			break;
		}
	}
	for (int v = 0; v < enc->nvals; v++)
	{
		bool		got = gh_pagebatch_has_nulls(b, v);

		/* a malformed page's rows read before the fault may count or not */
		if (got != w->has_nulls[v] && !(got && w->some_bad))
		{
			case_fail("batch %d: gh_pagebatch_has_nulls(%d) (column %d) is %s", batch, v,
					  enc->val[v].col, got ? "true" : "false");
			break;
		}
	}
	memset(counts, 0xA5, sizeof(counts));
	if (!check_ok(gh_pagebatch_keep(b, l->drop, counts), e, "gh_pagebatch_keep"))
	{
		gh_pagebatch_free(b);
		return NULL;
	}
	for (int p = 0; p < NPATTERNS; p++)
		if (counts[p] != w->count[p])
		{
			case_fail("batch %d: counts[%d] is %llu, want %llu (%zu rows kept in all)", batch, p,
					  (unsigned long long) counts[p], (unsigned long long) w->count[p], w->nkept);
			break;
		}
	return b;
}

typedef struct batch_opts
{
	placement	place;
	bool		omit_nulls;		/* nulls[v] NULL where no row read has a NULL in v */
	bool		move_midway;	/* 1 MiB in the arrays of three patterns first, then
								 * the first append past a 1-byte budget */
	bool		no_keys;		/* keys NULL where there are join keys */
} batch_opts;

/*
 * Read and keep each list of h (all batches held at once), then append
 * every pattern with rows (and two without) of every batch in turn to the
 * same arrays (join keys too where enc has them), and compare them.
 */
static void
check_batches(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc, const heap *h,
			  const plist *lists, int nlists, const batch_opts *o, rng *r)
{
	want_batch	w[2];
	gh_pagebatch *b[2] = {NULL, NULL};
	int			pats[NPATTERNS];
	int			npats = 0;
	uint8_t    *prefill = NULL;
	uint64_t	no_nulls = 0;
	int			moved = 0;
	bool		ok = true;

	for (int k = 0; k < nlists; k++)
	{
		want_make(&w[k], h, enc, &lists[k]);
		b[k] = read_keep(e, s, enc, h, &lists[k], &w[k], k);
		ok &= b[k] != NULL;
	}
	if (o->omit_nulls)
		for (int v = 0; v < enc->nvals; v++)
		{
			bool		any = false;

			for (int k = 0; k < nlists; k++)
				any |= w[k].has_nulls[v];
			if (!any && rng_below(r, 4) != 0)
				no_nulls |= UINT64_C(1) << v;
		}
	/* the patterns with rows, and two without (if there are) */
	for (int p = 0, without = 0; p < NPATTERNS; p++)
	{
		uint64_t	rows = 0;

		for (int k = 0; k < nlists; k++)
			rows += w[k].count[p];
		if (rows == 0 && (without == 2 || rng_below(r, NPATTERNS / 4) != 0))
			continue;
		without += rows == 0;
		pats[npats++] = p;
	}
	/* arrays on the device cost 1 MiB each to read: 64 patterns at most (quick: 24) */
	if (o->place != PLACE_HOST && npats > (run.quick ? 24 : 64))
	{
		int			most = run.quick ? 24 : 64;
		int			kept = 0;

		for (int i = 0; i < npats; i++)
			if (rng_below(r, (uint64_t) (npats - i)) < (uint64_t) (most - kept))
				pats[kept++] = pats[i];
		npats = kept;
	}
	if (o->move_midway)
	{
		prefill = xmalloc(MIB);
		fill_random(prefill, MIB, r);
	}
	for (int i = 0; i < npats && ok; i++)
	{
		sink		k;
		bool		before[NARRAYS];

		/* 1 MiB first for the first three patterns with rows */
		bool		move = o->move_midway && moved < 3 && w[0].count[pats[i]] > 0;

		moved += move;
		ok = sink_open_join(e, &k, pats[i], enc->nvals, o->no_keys && enc->njkeys > 0,
							enc->njkeys > 0, o->place, no_nulls, prefill, move ? MIB : 0, r);
		for (int j = 0; j < nlists && ok; j++)
		{
			gh_status	st;

			for (int a = 0; a < NARRAYS; a++)
				before[a] = gh_darray_on_device(k.a[a]);
			if (move && j == 0)
				gh_debug_darray_budget(e, 1);
			st = sink_append(&k, b[j], &w[j], j);
			gh_debug_darray_budget(e, 0);	/* the default again */
			ok = check_ok(st, e, "gh_pagebatch_append");
			for (int a = 0; a < NARRAYS && ok && move && j == 0; a++)
				if (before[a] && gh_darray_on_device(k.a[a]))
				{
					case_fail("pattern %d: an array holding 1 MiB on the device is still there after an append of %llu rows past a budget of 1 byte",
							  pats[i], (unsigned long long) w[j].count[pats[i]]);
					ok = false;
				}
		}
		if (ok)
			ok = sink_check(e, &k);
		sink_free(&k);
	}
	for (int k = 0; k < nlists; k++)
	{
		gh_pagebatch_free(b[k]);
		want_free(&w[k]);
	}
	free(prefill);
}

/* Drop flags for n entries: NULL (mode 0), all 0, all 1, or random. */
static uint8_t *
make_drop(size_t n, int mode, rng *r)
{
	uint8_t    *d;

	if (mode == 0)
		return NULL;
	d = xmalloc(n > 0 ? n : 1);
	for (size_t i = 0; i < n; i++)
		d[i] = mode == 1 ? 0 : mode == 2 ? 1 : rng_below(r, 3) == 0;
	return d;
}

static const char *const drop_names[] = {
	"no drop flags", "drop flags all 0", "every page dropped", "a third of the pages dropped"
};

/* Up to two lists of pages of a heap, with the arrays they own. */
typedef struct page_lists
{
	int			n;
	plist		l[2];
	uint32_t   *ids[2];
	uint8_t    *drop[2];
} page_lists;

/*
 * nlists lists of n entries, pages of a heap of nbase shuffled with repeats
 * (page_list): the first dropped in mode dmode, the second a third.
 */
static void
lists_make(page_lists *pl, int nlists, size_t n, size_t nbase, int dmode, rng *r)
{
	pl->n = nlists;
	for (int k = 0; k < nlists; k++)
	{
		pl->ids[k] = page_list(n, nbase, r);
		pl->drop[k] = make_drop(n, k == 0 ? dmode : 3, r);
		pl->l[k].ids = pl->ids[k];
		pl->l[k].n = n;
		pl->l[k].drop = pl->drop[k];
	}
}

static void
lists_free(page_lists *pl)
{
	for (int k = 0; k < pl->n; k++)
	{
		free(pl->ids[k]);
		free(pl->drop[k]);
	}
}

/* case_begin of the name that fmt and ap make. */
static void
case_beginv(const char *fmt, va_list ap)
{
	char		name[512];

	vsnprintf(name, sizeof(name), fmt, ap);
	case_begin("%s", name);
}

static void lists_case(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc, const heap *h,
					   int nlists, size_t n, int dmode, const batch_opts *o, rng *r,
					   const char *fmt,...) __attribute__((format(printf, 10, 11)));

/*
 * A case named by fmt: nlists lists of n entries over the pages of h
 * (lists_make), read, kept and appended together (check_batches).
 */
static void
lists_case(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc, const heap *h,
		   int nlists, size_t n, int dmode, const batch_opts *o, rng *r, const char *fmt,...)
{
	page_lists	pl;
	va_list		ap;

	lists_make(&pl, nlists, n, h->npages, dmode, r);
	va_start(ap, fmt);
	case_beginv(fmt, ap);
	va_end(ap);
	check_batches(e, s, enc, h, pl.l, nlists, o, r);
	case_end();
	lists_free(&pl);
}

/*
 * A case of a random heap for nlists lists of n entries (about 3/4 n pages,
 * every seventh malformed if n >= 37), with s, enc, notnull and o; its
 * name says all of them (prefix first, nulls before enc: how the NULLs of
 * keys are set, or "").
 */
static void
random_heap_case(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc, uint32_t notnull,
				 size_t n, int nlists, int dmode, const batch_opts *o, const char *prefix,
				 const char *nulls, rng *r)
{
	size_t		nbase = n == 0 ? 1 : (n * 3 + 3) / 4;
	heap		h;
	char		sdesc[256],
				edesc[512];

	heap_init(&h, nbase);
	write_heap(&h, s, notnull, n >= 37 ? 7 : 0, r);
	lists_case(e, s, enc, &h, nlists, n, dmode, o, r,
			   "%s%zu heap pages%s (%zu distinct, %s) of %d attributes (%s), not NULL 0x%x, %s%s; %s, arrays %s%s%s",
			   prefix, n, nlists > 1 ? " twice" : "", nbase,
			   n >= 37 ? "every seventh malformed" : "none malformed", s->natts,
			   schema_desc(s, sdesc, sizeof(sdesc)), notnull, nulls,
			   enc_desc(enc, edesc, sizeof(edesc)), drop_names[dmode], placement_names[o->place],
			   o->omit_nulls ? ", nulls[v] left out where there is no NULL" : "",
			   o->no_keys ? ", keys NULL" : "");
	heap_free(&h);
}

/* ---- the cases ---- */

/*
 * Case 1: random schemas, encodings, page lists, drop flags and array
 * placements.
 */
static void
random_batch_cases(gh_engine *e, rng *r)
{
	static const size_t list_sizes[] = {0, 1, 37, 300};
	int			nsizes = run.quick ? 3 : 4;

	for (int si = 0; si < (run.quick ? 4 : 8); si++)
	{
		gh_pagespec s;
		gh_pageenc	enc;
		uint32_t	notnull;
		int			nkeys = 1 + (int) rng_below(r, 4);
		int			nvals = (int) rng_below(r, 7);

		random_schema(&s, si == 0 ? 12 : 0, r);
		notnull = si % 2 ? random_notnull(&s, r) : 0;
		random_enc(&enc, &s, nkeys, si % 4 < 2, nvals, r);
		for (int ci = 0; ci < nsizes; ci++)
		{
			batch_opts	o = {(placement) ((si + ci) % 3), si % 2 == 1, false};

			random_heap_case(e, &s, &enc, notnull, list_sizes[ci], ci == 2 ? 2 : 1, (si + ci) % 4,
							 &o, "", "", r);
		}
	}
}

/* A schema of 8 kB pages: natts attributes of lens[a] bytes, aligned to aligns[a], output outs[a]. */
static void
schema_of(gh_pagespec *s, int natts, const int16_t *lens, const uint8_t *aligns,
		  const int8_t *outs)
{
	memset(s, 0, sizeof(*s));
	s->page_size = PAGE_BYTES;
	s->max_tuples = PAGE_ROWS;
	s->natts = natts;
	for (int a = 0; a < natts; a++)
	{
		s->attlen[a] = lens[a];
		s->attalign[a] = aligns[a];
		s->out_of[a] = outs[a];
		s->nout += outs[a] >= 0;
	}
}

/*
 * A schema of outputs 0..4 of 1, 2, 4, 8 and 8 bytes (the last int-aligned,
 * as macaddr8), with a 16-byte and a 3-byte attribute walked among them.
 */
static void
all_widths_schema(gh_pagespec *s)
{
	static const int16_t lens[] = {2, 16, 1, 4, 3, 8, 8};
	static const uint8_t aligns[] = {2, 8, 1, 4, 1, 8, 4};
	static const int8_t outs[] = {1, -1, 0, 2, -1, 3, 4};

	schema_of(s, 7, lens, aligns, outs);
}

static gh_pagekey
make_key(int col, int bit, int width, int shift, uint64_t mask, int64_t mod)
{
	gh_pagekey	k;

	memset(&k, 0, sizeof(k));
	k.col = (int8_t) col;
	k.bit = (uint8_t) bit;
	k.width = (uint8_t) width;
	k.shift = (uint8_t) shift;
	k.mask = mask;
	k.mod = mod;
	return k;
}

/* k with its NULLs in key bit nullbit (null_in_key) instead of its pattern bit. */
static gh_pagekey
null_in(gh_pagekey k, int nullbit)
{
	k.null_in_key = 1;
	k.nullbit = (uint8_t) nullbit;
	return k;
}

static gh_pageval
make_val(int col, int conv)
{
	gh_pageval	v = {(int8_t) col, (uint8_t) conv};

	return v;
}

static gh_pagejkey
make_jkey(int col, int conv, int width, int shift)
{
	gh_pagejkey j = {(int8_t) col, (uint8_t) conv, (uint8_t) width, (uint8_t) shift};

	return j;
}

/* One list of every page of h once, in order, dropped in mode dmode; checked. */
static void
check_all_pages(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc, const heap *h,
				int dmode, const batch_opts *o, rng *r)
{
	uint32_t   *ids = xmalloc(h->npages * sizeof(uint32_t));
	uint8_t    *drop = make_drop(h->npages, dmode, r);
	plist		l = {ids, h->npages, drop};

	for (size_t i = 0; i < h->npages; i++)
		ids[i] = (uint32_t) i;
	check_batches(e, s, enc, h, &l, 1, o, r);
	free(ids);
	free(drop);
}

static void all_pages_case(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc,
						   const heap *h, int dmode, const batch_opts *o, rng *r,
						   const char *fmt,...) __attribute__((format(printf, 8, 9)));

/* A case named by fmt: check_all_pages. */
static void
all_pages_case(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc, const heap *h,
			   int dmode, const batch_opts *o, rng *r, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	case_beginv(fmt, ap);
	va_end(ap);
	check_all_pages(e, s, enc, h, dmode, o, r);
	case_end();
}

/* all_widths_schema's outputs 0 (1 byte) and 2 (4 bytes): never NULL in all_widths_heap */
#define ALL_WIDTHS_NOTNULL	0x5

/* all_widths_schema and a heap of 40 pages of it (quick: 12) */
static void
all_widths_heap(gh_pagespec *s, heap *h, rng *r)
{
	all_widths_schema(s);
	heap_init(h, run.quick ? 12 : 40);
	write_heap(h, s, ALL_WIDTHS_NOTNULL, 0, r);
}

/*
 * Case 2: values of every conv on every width and col -1, has_nulls of
 * columns with and without NULLs; keys narrower and wider than their
 * columns; mods.
 */
static void
value_cases(gh_engine *e, rng *r)
{
	gh_pagespec s;
	gh_pageenc	enc;
	heap		h;
	batch_opts	o = {PLACE_MIXED, false, false};
	static const int64_t mods[][3] = {
		{7, -7, 1000003},
		{-1, -1, -1},
		{1, 1, 1},
		{INT16_MIN, INT32_MIN, INT64_MIN},
		{INT16_MAX, INT32_MAX, INT64_MAX},
		{-2, 3, -1000000007},
		{0, 0, 0},
	};
	char		edesc[512];

	all_widths_heap(&s, &h, r);

	memset(&enc, 0, sizeof(enc));
	enc.nkeys = 1;
	enc.key[0] = make_key(1, 3, 2, 5, 0xFFFF, 0);
	enc.nvals = 0;
	for (int c = -1; c < s.nout; c++)
		for (int conv = 0; conv < 3; conv++)
			enc.val[enc.nvals++] = make_val(c, conv);
	all_pages_case(e, &s, &enc, &h, 0, &o, r,
				   "values of each conv on columns of 1, 2, 4, 8 bytes and col -1, two without NULLs (has_nulls false) (%s)",
				   enc_desc(&enc, edesc, sizeof(edesc)));

	o.omit_nulls = true;
	all_pages_case(e, &s, &enc, &h, 3, &o, r,
				   "nulls[v] left out for the columns without NULLs and col -1: GH_OK, the rest exact");
	o.omit_nulls = false;

	/* every key over an 8-byte column, cut to 1, 2 and 4 bytes; a 1-byte one widened */
	memset(&enc, 0, sizeof(enc));
	enc.nkeys = 5;
	enc.key[0] = make_key(3, 0, 1, 0, ~UINT64_C(0), 0);
	enc.key[1] = make_key(3, 1, 2, 8, 0xFFFF, 0);
	enc.key[2] = make_key(4, 2, 4, 24, UINT64_C(0xFFFF0000FFFF), 0);
	enc.key[3] = make_key(0, 3, 8, 56, ~UINT64_C(0), 0);
	enc.key[4] = make_key(2, 4, 2, 40, 0xFFFF, 0);
	enc.nvals = 1;
	enc.val[0] = make_val(3, GH_PAGEVAL_UNSIGNED32);
	all_pages_case(e, &s, &enc, &h, 0, &o, r,
				   "keys cut to fewer bytes than their columns (masks of more), a 1-byte column widened to 8 bytes running past bit 63 (%s)",
				   enc_desc(&enc, edesc, sizeof(edesc)));

	for (size_t m = 0; m < sizeof(mods) / sizeof(mods[0]); m++)
	{
		memset(&enc, 0, sizeof(enc));
		enc.nkeys = 3;
		enc.key[0] = make_key(1, 0, 2, 0, 0xFFFF, mods[m][0]);
		enc.key[1] = make_key(2, 1, 4, 16, 0xFFFFFFFF, mods[m][1]);
		enc.key[2] = make_key(3, 2, 8, 48, 0xFFFF, mods[m][2]);
		enc.nvals = 2;
		enc.val[0] = make_val(3, GH_PAGEVAL_SIGNED);
		enc.val[1] = make_val(4, GH_PAGEVAL_SIGNED);
		all_pages_case(e, &s, &enc, &h, 0, &o, r,
					   "int2, int4 and int8 keys modulo %lld, %lld and %lld, over 0, -1, the smallest, the largest and random values",
					   (long long) mods[m][0], (long long) mods[m][1], (long long) mods[m][2]);

		/* the int8 and int4 results whole */
		enc.nkeys = 2;
		enc.key[0] = make_key(3, 5, 8, 0, ~UINT64_C(0), mods[m][2]);
		enc.key[1] = make_key(4, 6, 8, 0, 0, mods[m][0]);	/* only its NULLs count */
		all_pages_case(e, &s, &enc, &h, 1, &o, r, "an int8 key modulo %lld, all 64 bits",
					   (long long) mods[m][2]);
		enc.nkeys = 1;
		enc.key[0] = make_key(2, 7, 4, 40, ~UINT64_C(0), mods[m][1]);
		all_pages_case(e, &s, &enc, &h, 0, &o, r,
					   "an int4 key modulo %lld at bit 40, its top 8 bits shifted out",
					   (long long) mods[m][1]);
	}
	heap_free(&h);
}

/*
 * Case 3: many patterns (8 keys, NULLs everywhere) and 32 values; two
 * batches onto the same arrays; arrays moved to host memory by the append.
 */
static void
pattern_cases(gh_engine *e, rng *r)
{
	gh_pagespec s;
	gh_pageenc	enc;
	heap		h;
	size_t		nbase = run.quick ? 24 : 80;
	size_t		n = nbase + nbase / 2;
	page_lists	pl;
	char		sdesc[256],
				edesc[1024];

	/* 8 keys on 8 columns: up to 256 patterns */
	do
		random_schema(&s, 12, r);
	while (s.nout < GH_PAGE_MAX_KEYS);
	random_enc(&enc, &s, GH_PAGE_MAX_KEYS, true, GH_PAGE_MAX_VALS, r);
	heap_init(&h, nbase);
	write_heap(&h, &s, 0, 11, r);
	lists_make(&pl, 2, n, nbase, 0, r);
	schema_desc(&s, sdesc, sizeof(sdesc));
	enc_desc(&enc, edesc, sizeof(edesc));
	/* every array of 32 values in host memory, then 4 values (fewer arrays to move) */
	for (int c = 0; c < 4; c++)
	{
		batch_opts	o = {(placement) ((c + 1) % 3), c == 2, c == 3};

		if (c == 3)
			o.place = PLACE_DEVICE;
		enc.nvals = c == 0 ? GH_PAGE_MAX_VALS : 4;
		case_begin("%d keys, %d values, many patterns: two batches of %zu pages appended to the same arrays %s%s (%s; %s)",
				   GH_PAGE_MAX_KEYS, enc.nvals, n, placement_names[o.place],
				   o.move_midway ? ", three patterns' arrays holding 1 MiB first, the first append past a budget of 1 byte" : "",
				   sdesc, c == 0 ? edesc : "the first 4 values");
		check_batches(e, &s, &enc, &h, pl.l, 2, &o, r);
		case_end();
	}
	lists_free(&pl);
	heap_free(&h);
}

/* Case 4: batch sizes: no pages, one, pages of 291 rows, many pages. */
static void
size_cases(gh_engine *e, rng *r)
{
	static const int16_t one_len = 1;
	static const uint8_t one_align = 1;
	static const int8_t one_out = 0;
	gh_pagespec s;
	gh_pageenc	enc;
	heap		h;
	batch_opts	o = {PLACE_MIXED, false, false};
	gh_pagebatch *b = NULL;
	uint64_t	counts[NPATTERNS];
	char		sdesc[256],
				edesc[512];

	random_schema(&s, 0, r);
	random_enc(&enc, &s, 2, false, 3, r);

	case_begin("no pages, NULL base and pages: a batch of no rows, every count 0, appends append nothing");
	if (check_ok(gh_pages_read(e, &s, &enc, NULL, NULL, 0, &b), e, "gh_pages_read(0 pages)"))
	{
		memset(counts, 0xA5, sizeof(counts));
		if (check_ok(gh_pagebatch_keep(b, NULL, counts), e, "gh_pagebatch_keep"))
		{
			want_batch	none;

			for (int p = 0; p < NPATTERNS; p++)
				if (counts[p] != 0)
				{
					case_fail("counts[%d] is %llu", p, (unsigned long long) counts[p]);
					break;
				}
			/* what a batch of no rows must append: nothing (w's arrays are never read) */
			memset(&none, 0, sizeof(none));
			none.nvals = enc.nvals;
			append_check(e, b, &none, 0, false, false, PLACE_DEVICE, 0, "gh_pagebatch_append", r);
		}
	}
	gh_pagebatch_free(b);
	case_end();

	/* 291 rows a page: tuples of no data, every column NULL */
	heap_init(&h, run.quick ? 8 : 40);
	for (size_t p = 0; p < h.npages; p++)
		write_page(&h, p, FILL_MAX, &s, 0, r);
	case_begin("%zu pages of 291 rows each (%s; %s)", h.npages, schema_desc(&s, sdesc, sizeof(sdesc)),
			   enc_desc(&enc, edesc, sizeof(edesc)));
	for (size_t p = 0; p < h.npages; p++)
		if (h.nrows[p] != PAGE_ROWS)
			case_fail("page %zu was written with %u rows", p, h.nrows[p]);
	check_all_pages(e, &s, &enc, &h, 3, &o, r);
	case_end();
	heap_free(&h);

	/* a full page of one 1-byte attribute: about 240 rows with data */
	schema_of(&s, 1, &one_len, &one_align, &one_out);
	memset(&enc, 0, sizeof(enc));
	enc.nkeys = 1;
	enc.key[0] = make_key(0, 0, 1, 3, 0xFF, 0);
	enc.nvals = 2;
	enc.val[0] = make_val(0, GH_PAGEVAL_SIGNED);
	enc.val[1] = make_val(0, GH_PAGEVAL_ZERO);
	heap_init(&h, 1);
	write_page(&h, 0, FILL_FULL, &s, 0, r);
	all_pages_case(e, &s, &enc, &h, 0, &o, r, "one page full of 1-byte rows (%u rows)", h.nrows[0]);
	heap_free(&h);

	{
		size_t		nbase = run.quick ? 40 : 300;
		size_t		n = run.quick ? 100 : 3000;
		int			nkeys = 1 + (int) rng_below(r, 4);
		int			nvals = 1 + (int) rng_below(r, 4);

		random_schema(&s, 0, r);
		random_enc(&enc, &s, nkeys, false, nvals, r);
		heap_init(&h, nbase);
		write_heap(&h, &s, 0, 13, r);
		o.place = PLACE_DEVICE;
		lists_case(e, &s, &enc, &h, 1, n, 3, &o, r,
				   "%zu pages (%zu distinct, shuffled, repeats, every 13th malformed), a third dropped (%s; %s)",
				   n, nbase, schema_desc(&s, sdesc, sizeof(sdesc)),
				   enc_desc(&enc, edesc, sizeof(edesc)));
		heap_free(&h);
	}
}

/* Case 5: each way of spoiling a page, among good ones. */
static void
malformed_cases(gh_engine *e, rng *r)
{
	gh_pagespec s;
	gh_pageenc	enc;
	batch_opts	o = {PLACE_MIXED, false, false};
	char		sdesc[256];

	random_schema(&s, 12, r);
	schema_desc(&s, sdesc, sizeof(sdesc));
	random_enc(&enc, &s, 3, true, 4, r);
	for (int c = 0; c <= NSPOIL; c++)
	{
		heap		h;

		heap_init(&h, 12);
		for (size_t p = 0; p < h.npages; p++)
		{
			if (p % 3 != 1)
				write_page(&h, p, p % 3 ? FILL_SOME : FILL_FULL, &s, 0, r);
			else if (c == NSPOIL)
				write_page(&h, p, FILL_ZERO, &s, 0, r);
			else
				do
					write_page(&h, p, FILL_FULL, &s, 0, r);
				while (!spoil_page(&h, p, (spoil) c, r));
		}
		lists_case(e, &s, &enc, &h, 1, 20, c % 2 ? 3 : 1, &o, r,
				   "pages with %s are bad and never kept, their neighbours exact (%s)",
				   c == NSPOIL ? "all zeros (new)" : spoil_names[c], sdesc);
		heap_free(&h);
	}
}

/*
 * Case 6: join keys of 1 to 3 columns, rows with a NULL in one of them
 * dropped; grouping keys (none to 4) whose NULLs set key bits, pattern bits
 * or both; keys NULL at times; drop flags, malformed pages, arrays placed
 * every way.
 */
static void
join_random_cases(gh_engine *e, rng *r)
{
	static const size_t list_sizes[] = {37, 1, 60, 0, 37, 120, 37, 300};
	static const char *const nik_names[] = {
		"NULLs of keys in pattern bits, ", "NULLs of keys in key bits, ",
		"NULLs of keys in key and pattern bits, "
	};

	for (int si = 0; si < (run.quick ? 6 : 16); si++)
	{
		gh_pagespec s;
		gh_pageenc	enc;
		uint32_t	notnull;
		int			nkeys = (int) rng_below(r, 5);
		int			nvals = (int) rng_below(r, 5);
		int			njkeys = 1 + (int) rng_below(r, 3);
		int			nik = si % 3;
		size_t		n = list_sizes[si % 8];
		batch_opts	o = {(placement) ((si + si / 3) % 3), si % 2 == 1, false, si % 4 >= 2};

		random_schema(&s, si == 0 ? 12 : 0, r);
		notnull = si % 5 == 4 ? random_notnull(&s, r) : 0;
		random_enc(&enc, &s, nkeys, si % 2 == 0, nvals, r);
		random_null_in_key(&enc, nik, r);
		random_jkeys(&enc, &s, njkeys, si % 4 != 3, r);
		random_heap_case(e, &s, &enc, notnull, n, n >= 37 && si % 2 == 0 ? 2 : 1, si % 4, &o,
						 "join keys: ", nik_names[nik], r);
	}
}

/* Rows of h with a NULL in output o (null), or with a value of bit 63 set (!null). */
static size_t
rows_with(const heap *h, int o, bool null)
{
	size_t		n = 0;

	for (size_t p = 0; p < h->npages; p++)
		for (uint32_t i = 0; i < h->nrows[p]; i++)
			n += null ? h->nulls[SLOT(p, i) + o] != 0 :
				!h->nulls[SLOT(p, i) + o] && (h->vals[SLOT(p, i) + o] >> 63) != 0;
	return n;
}

/*
 * Case 7: join keys of each conv on columns of each width, all 64 bits of
 * them and cut to fewer, shifted, bits past 63 shifted out; the NULLs of
 * grouping keys in key bits.  The pages of value_cases (all_widths_heap):
 * outputs 0 (1 byte) and 2 (4 bytes) without NULLs, 1 (2 bytes), 3 and 4
 * (8 bytes) with them.
 */
static void
join_value_cases(gh_engine *e, rng *r)
{
	static const uint8_t widths[] = {1, 7, 8, 16, 31, 32, 33, 48, 63, 64};
	static const char *const conv_names[] = {"ZERO", "SIGNED", "UNSIGNED32"};
	gh_pagespec s;
	gh_pageenc	enc;
	heap		h;
	batch_opts	o = {PLACE_MIXED, false, false, false};
	uint32_t	notnull = ALL_WIDTHS_NOTNULL;
	char		edesc[512];

	all_widths_heap(&s, &h, r);

	case_begin("the pages for join keys have NULLs in outputs 1, 3 and 4 and negative values in each output");
	for (int c = 0; c < s.nout; c++)
	{
		if (((notnull >> c) & 1) == 0 && rows_with(&h, c, true) == 0)
			case_fail("no NULL in output %d", c);
		if (rows_with(&h, c, false) == 0)
			case_fail("no negative value in output %d", c);
	}
	case_end();

	/* each column alone, all 64 bits: sign- or zero-extended */
	for (int c = 0; c < s.nout; c++)
		for (int conv = GH_PAGEVAL_SIGNED; conv <= GH_PAGEVAL_UNSIGNED32; conv++)
		{
			memset(&enc, 0, sizeof(enc));
			enc.nkeys = 1;
			enc.key[0] = make_key(1, 3, 2, 5, 0xFFFF, 0);
			enc.nvals = 1;
			enc.val[0] = make_val(c, conv);
			enc.njkeys = 1;
			enc.jkey[0] = make_jkey(c, conv, 64, 0);
			o.no_keys = c == 3;
			all_pages_case(e, &s, &enc, &h, c % 2 ? 3 : 0, &o, r,
						   "a join key of output %d alone (%d-byte, %s), %s, all 64 bits%s",
						   c, out_width(&s, c),
						   (notnull >> c) & 1 ? "never NULL" : "rows with a NULL dropped",
						   conv_names[conv], o.no_keys ? ", keys NULL" : "");
		}
	o.no_keys = false;

	/* an int8 and an int2 column cut to w bits, the second at the top */
	for (size_t i = 0; i < sizeof(widths); i++)
	{
		int			w = widths[i];

		if (run.quick && i % 2 == 1 && w != 33 && w != 64)
			continue;
		memset(&enc, 0, sizeof(enc));
		enc.nkeys = 1;
		enc.key[0] = null_in(make_key(4, 0, 8, 0, ~UINT64_C(0), 0), 63);
		enc.njkeys = 2;
		enc.jkey[0] = make_jkey(3, GH_PAGEVAL_SIGNED, w, 0);
		enc.jkey[1] = make_jkey(1, GH_PAGEVAL_UNSIGNED32, w, w < 64 ? 64 - w : 32);
		all_pages_case(e, &s, &enc, &h, 0, &o, r,
					   "join keys cut to %d bits: output 3 (int8, SIGNED) at bit 0, output 1 (int2, UNSIGNED32) at bit %d%s (%s)",
					   w, enc.jkey[1].shift, w == 64 ? ", its top half shifted out" : "",
					   enc_desc(&enc, edesc, sizeof(edesc)));
	}

	/* three columns packed, under grouping keys with their NULLs in key bits */
	memset(&enc, 0, sizeof(enc));
	enc.nkeys = 3;
	enc.key[0] = null_in(make_key(1, 0, 2, 0, 0xFFFF, 0), 16);
	enc.key[1] = null_in(make_key(3, 1, 4, 17, 0xFFFFFFFF, 0), 63);
	enc.key[2] = make_key(4, 2, 1, 49, 0xFF, 0);
	enc.key[2].nullbit = 77;	/* not null_in_key: ignored */
	enc.nvals = 2;
	enc.val[0] = make_val(3, GH_PAGEVAL_SIGNED);
	enc.val[1] = make_val(1, GH_PAGEVAL_UNSIGNED32);
	all_pages_case(e, &s, &enc, &h, 3, &o, r,
				   "NULLs of two keys in key bits 16 and 63, of the third in pattern bit 2 (nullbit 77 ignored), no join keys (%s)",
				   enc_desc(&enc, edesc, sizeof(edesc)));

	enc.njkeys = 3;
	enc.jkey[0] = make_jkey(0, GH_PAGEVAL_SIGNED, 8, 0);
	enc.jkey[1] = make_jkey(2, GH_PAGEVAL_UNSIGNED32, 32, 8);
	enc.jkey[2] = make_jkey(4, GH_PAGEVAL_SIGNED, 24, 40);
	all_pages_case(e, &s, &enc, &h, 1, &o, r,
				   "the same keys and a join key of three columns packed: int1 in 8 bits, int4 UNSIGNED32 in 32, int8 cut to 24 (%s)",
				   enc_desc(&enc, edesc, sizeof(edesc)));

	enc.key[2] = null_in(enc.key[2], 57);
	o.place = PLACE_DEVICE;
	all_pages_case(e, &s, &enc, &h, 3, &o, r,
				   "every key's NULLs in key bits (16, 63, 57): pattern 0 only; arrays on the device (%s)",
				   enc_desc(&enc, edesc, sizeof(edesc)));

	o.no_keys = true;
	o.place = PLACE_HOST;
	all_pages_case(e, &s, &enc, &h, 0, &o, r,
				   "the same with keys NULL: values and join keys appended without the keys");
	heap_free(&h);
}

/* Leave another function's message, so that a stale one cannot pass. */
static bool
stale_message(gh_engine *e)
{
	if (gh_register_host(e, NULL, 0) == GH_ERR_INVALID &&
		strncmp(gh_last_error(e), "gh_register_host", 16) == 0)
		return true;
	case_fail("gh_register_host(NULL, 0) did not fail with its message (\"%s\")", gh_last_error(e));
	return false;
}

/* st, of fn with what wrong, must be GH_ERR_INVALID with a new message. */
static void
want_invalid(gh_engine *e, gh_status st, const char *fn, const char *what)
{
	if (st != GH_ERR_INVALID)
		case_fail("%s with %s returned %s, want GH_ERR_INVALID", fn, what, gh_status_name(st));
	else if (gh_last_error(e)[0] == '\0' || strncmp(gh_last_error(e), "gh_register_host", 16) == 0)
		case_fail("%s with %s left the message \"%s\"", fn, what, gh_last_error(e));
}

/* gh_pages_read of page 0 with one thing wrong. */
static void
read_invalid(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc, const heap *h,
			 const char *what)
{
	static const uint32_t first[1] = {0};
	gh_pagebatch *b = NULL;
	gh_status	st;

	if (!stale_message(e))
		return;
	st = gh_pages_read(e, s, enc, h->base, first, 1, &b);
	want_invalid(e, st, "gh_pages_read", what);
	if (st == GH_OK)
		gh_pagebatch_free(b);
}

/* The batch of pages ids[0..2) of h, read and kept (drop), or NULL (the case failed). */
static gh_pagebatch *
two_pages_kept(gh_engine *e, const gh_pagespec *s, const gh_pageenc *enc, const heap *h,
			   const uint32_t *ids, const uint8_t *drop, uint64_t *counts)
{
	gh_pagebatch *b = NULL;

	if (!check_ok(gh_pages_read(e, s, enc, h->base, ids, 2, &b), e, "gh_pages_read"))
		return NULL;
	if (!check_ok(gh_pagebatch_keep(b, drop, counts), e, "gh_pagebatch_keep"))
	{
		gh_pagebatch_free(b);
		return NULL;
	}
	return b;
}

/* gh_pagebatch_append of b's pattern with what wrong: GH_ERR_INVALID with a new message. */
static void
append_invalid(gh_engine *e, gh_pagebatch *b, int pattern, gh_darray *keys, gh_darray **values,
			   gh_darray **nulls, const char *what)
{
	if (stale_message(e))
		want_invalid(e, gh_pagebatch_append(b, pattern, keys, values, nulls),
					 "gh_pagebatch_append", what);
}

/* gh_pagebatch_append_jkeys likewise. */
static void
append_jkeys_invalid(gh_engine *e, gh_pagebatch *b, int pattern, gh_darray *jkeys,
					 const char *what)
{
	if (stale_message(e))
		want_invalid(e, gh_pagebatch_append_jkeys(b, pattern, jkeys), "gh_pagebatch_append_jkeys",
					 what);
}

/*
 * One thing wrong with a page description or an encoding: one or two of
 * its fields (by offset and size: 1, 2 or 4 bytes; size 0: none) set to a
 * bad value, and what that is, a format of the first value.
 */
typedef struct bad_field
{
	const char *what;
	struct
	{
		size_t		off;
		size_t		size;
		int64_t		value;
	}			set[2];
} bad_field;

/* where a member of type is, and its size, for a bad_field */
#define FIELD(type, member)	offsetof(type, member), sizeof(((type *) 0)->member)

/*
 * Set f's fields in obj (a copy of a good one), each to the value's low
 * bytes (as a signed or unsigned field of that size holds it); what: f's
 * description.
 */
static void
set_bad(void *obj, const bad_field *f, char *what, size_t len)
{
	for (int i = 0; i < 2 && f->set[i].size > 0; i++)
	{
		uint8_t		v1 = (uint8_t) f->set[i].value;
		uint16_t	v2 = (uint16_t) f->set[i].value;
		uint32_t	v4 = (uint32_t) f->set[i].value;
		const void *of_size[] = {NULL, &v1, &v2, NULL, &v4};

		memcpy((uint8_t *) obj + f->set[i].off, of_size[f->set[i].size], f->set[i].size);
	}
	snprintf(what, len, f->what, (long long) f->set[0].value);
}

/*
 * Case 9, run by invalid_cases (case 8): invalid join keys and nullbits, their limits
 * accepted, gh_pagebatch_append_jkeys's bad arguments.  genc: invalid_cases'
 * encoding (2 keys on outputs 0 and 2, 3 values); h: its 4 pages.
 */
static void
join_invalid_cases(gh_engine *e, const gh_pagespec *good, const gh_pageenc *genc, const heap *h,
				   rng *r)
{
	static const uint32_t ids[2] = {0, 1};
	/* each made in jenc below */
	static const bad_field bad_jencs[] = {
		{"%lld join keys", {{FIELD(gh_pageenc, njkeys), -1}}},
		{"%lld join keys", {{FIELD(gh_pageenc, njkeys), GH_PAGE_MAX_KEYS + 1}}},
		{"a join key of column %lld of 3", {{FIELD(gh_pageenc, jkey[1].col), 3}}},
		{"a join key of column %lld", {{FIELD(gh_pageenc, jkey[0].col), -1}}},
		{"a join key of width %lld", {{FIELD(gh_pageenc, jkey[0].width), 0}}},
		{"a join key of width %lld", {{FIELD(gh_pageenc, jkey[1].width), 65}}},
		{"a join key shift of %lld", {{FIELD(gh_pageenc, jkey[1].shift), 64}}},
		{"a join key of conv ZERO", {{FIELD(gh_pageenc, jkey[0].conv), GH_PAGEVAL_ZERO}}},
		{"a join key of conv %lld", {{FIELD(gh_pageenc, jkey[1].conv), 3}}},
		{"null_in_key with nullbit %lld",
			{{FIELD(gh_pageenc, key[0].nullbit), 64}, {FIELD(gh_pageenc, key[0].null_in_key), 1}}},
		{"null_in_key with nullbit %lld",
			{{FIELD(gh_pageenc, key[1].nullbit), 255}, {FIELD(gh_pageenc, key[1].null_in_key), 1}}},
	};
	gh_pageenc	jenc,
				enc;

	/* an encoding with valid join keys past its array, for a count over the maximum */
	union
	{
		gh_pageenc	enc;
		uint8_t		bytes[sizeof(gh_pageenc) + 2 * sizeof(gh_pagejkey)];
	}			past;
	batch_opts	o = {PLACE_MIXED, false, false, false};
	gh_pagebatch *b = NULL;
	uint64_t	counts[NPATTERNS];
	gh_darray  *a = NULL;
	want_batch	w;
	plist		l = {ids, 2, NULL};
	char		what[160];

	/* rows with a NULL in output 1 dropped */
	jenc = *genc;
	jenc.njkeys = 2;
	jenc.jkey[0] = make_jkey(0, GH_PAGEVAL_SIGNED, 40, 0);
	jenc.jkey[1] = make_jkey(1, GH_PAGEVAL_UNSIGNED32, 24, 40);

	case_begin("gh_pages_read rejects -1 or %d join keys, a join key of no output column, of width 0 or 65, a shift over 63, conv ZERO or unknown; null_in_key with a nullbit over 63",
			   GH_PAGE_MAX_KEYS + 1);
	for (size_t c = 0; c < sizeof(bad_jencs) / sizeof(bad_jencs[0]); c++)
	{
		enc = jenc;
		set_bad(&enc, &bad_jencs[c], what, sizeof(what));
		/* the entries past the count valid, so that only the count is wrong */
		for (int i = jenc.njkeys; i < GH_PAGE_MAX_KEYS; i++)
			enc.jkey[i] = make_jkey(2, GH_PAGEVAL_SIGNED, 8, 0);
		memset(&past, 0, sizeof(past));
		past.enc = enc;
		for (int i = GH_PAGE_MAX_KEYS; i < GH_PAGE_MAX_KEYS + 2; i++)
		{
			gh_pagejkey j = make_jkey(2, GH_PAGEVAL_SIGNED, 8, 0);

			memcpy(past.bytes + offsetof(gh_pageenc, jkey) + i * sizeof(gh_pagejkey), &j,
				   sizeof(j));
		}
		read_invalid(e, good, &past.enc, h, what);
	}
	case_end();

	/* the limits: 8 join keys of widths 1 and 64, shifts 0 and 63; nullbits 63 and 255 */
	enc = *genc;
	enc.nkeys = 3;
	enc.key[0].nullbit = 255;	/* not null_in_key: ignored */
	enc.key[2] = null_in(make_key(1, 2, 4, 40, 0xFF, 0), 63);
	enc.njkeys = GH_PAGE_MAX_KEYS;
	enc.jkey[0] = make_jkey(0, GH_PAGEVAL_SIGNED, 1, 63);
	enc.jkey[1] = make_jkey(0, GH_PAGEVAL_SIGNED, 64, 63);
	enc.jkey[2] = make_jkey(2, GH_PAGEVAL_UNSIGNED32, 64, 0);
	enc.jkey[3] = make_jkey(2, GH_PAGEVAL_SIGNED, 16, 16);
	enc.jkey[4] = make_jkey(0, GH_PAGEVAL_UNSIGNED32, 64, 32);
	enc.jkey[5] = make_jkey(2, GH_PAGEVAL_SIGNED, 1, 0);
	enc.jkey[6] = make_jkey(0, GH_PAGEVAL_SIGNED, 64, 0);
	enc.jkey[7] = make_jkey(2, GH_PAGEVAL_UNSIGNED32, 7, 50);
	all_pages_case(e, good, &enc, h, 0, &o, r,
				   "gh_pages_read takes %d join keys of widths 1 and 64 at shifts 0 and 63, nullbit 63 with null_in_key, 255 without; the rows exact",
				   GH_PAGE_MAX_KEYS);

	case_begin("gh_pagebatch_append_jkeys rejects a batch without join keys, one not kept, patterns 256 and -1, jkeys NULL, a NULL batch, appending nothing; then keys NULL and nulls[0] NULL (NULLs of value 0 only in rows without a join key) append exactly");
	if (check_ok(gh_darray_create(e, false, &a), e, "gh_darray_create"))
	{
		if ((b = two_pages_kept(e, good, genc, h, ids, NULL, counts)) != NULL)
			append_jkeys_invalid(e, b, 0, a, "a batch without join keys");
		gh_pagebatch_free(b);
		b = NULL;
		if (check_ok(gh_pages_read(e, good, &jenc, h->base, ids, 2, &b), e, "gh_pages_read"))
		{
			append_jkeys_invalid(e, b, 0, a, "no keep before");
			if (check_ok(gh_pagebatch_keep(b, NULL, counts), e, "gh_pagebatch_keep"))
			{
				append_jkeys_invalid(e, b, 256, a, "pattern 256");
				append_jkeys_invalid(e, b, -1, a, "pattern -1");
				append_jkeys_invalid(e, b, 0, NULL, "jkeys NULL");
			}
		}
		if (gh_pagebatch_append_jkeys(NULL, 0, a) != GH_ERR_INVALID)
			case_fail("gh_pagebatch_append_jkeys of a NULL batch is not GH_ERR_INVALID");
		if (gh_darray_bytes(a) != 0)
			case_fail("the rejected calls appended %zu bytes", gh_darray_bytes(a));
		gh_darray_free(a);
	}
	if (b != NULL)
	{
		want_make(&w, h, &jenc, &l);
		if (w.unjoined == 0 || w.count[0] == 0)
			case_fail("the pages have %zu rows without a join key and %llu with one: nothing to test with",
					  w.unjoined, (unsigned long long) w.count[0]);
		append_check(e, b, &w, 0, true, true, PLACE_MIXED, 0x1,
					 "gh_pagebatch_append (keys NULL, nulls[0] NULL)", r);
		want_free(&w);
	}
	gh_pagebatch_free(b);
	case_end();
}

/*
 * Case 8: invalid arguments.  The schema: int8 (output 0, never NULL), int4
 * (output 1, with NULLs), int2 (output 2, never NULL), 16 bytes not output.
 */
static void
invalid_cases(gh_engine *e, rng *r)
{
	static const int16_t lens[] = {8, 4, 2, 16};
	static const uint8_t aligns[] = {8, 4, 2, 8};
	static const int8_t outs[] = {0, 1, 2, -1};
	/* each made in good */
	static const bad_field bad_specs[] = {
		{"page_size %lld", {{FIELD(gh_pagespec, page_size), PAGE_BYTES + 8}}},
		{"attlen %lld", {{FIELD(gh_pagespec, attlen[3]), 0}}},
		{"nout %lld, 3 outputs named", {{FIELD(gh_pagespec, nout), 4}}},
		{"output %lld named twice", {{FIELD(gh_pagespec, out_of[3]), 1}}},
		{"max_tuples %lld", {{FIELD(gh_pagespec, max_tuples), 0}}},
		{"a varlena output column (attlen %lld)", {{FIELD(gh_pagespec, attlen[1]), -1}}},
	};
	/* each made in genc below */
	static const bad_field bad_encs[] = {
		{"%lld keys", {{FIELD(gh_pageenc, nkeys), GH_PAGE_MAX_KEYS + 1}}},
		{"%lld values", {{FIELD(gh_pageenc, nvals), GH_PAGE_MAX_VALS + 1}}},
		{"a key of column %lld of 3", {{FIELD(gh_pageenc, key[1].col), 3}}},
		{"a key of column %lld", {{FIELD(gh_pageenc, key[0].col), -1}}},
		{"a value of column %lld of 3", {{FIELD(gh_pageenc, val[1].col), 3}}},
		{"a value of column %lld", {{FIELD(gh_pageenc, val[2].col), -2}}},
		{"a key of width %lld", {{FIELD(gh_pageenc, key[0].width), 0}}},
		{"a key of width %lld", {{FIELD(gh_pageenc, key[1].width), 3}}},
		{"a key of width %lld", {{FIELD(gh_pageenc, key[0].width), 16}}},
		{"a shift of %lld", {{FIELD(gh_pageenc, key[1].shift), 64}}},
		{"pattern bit %lld", {{FIELD(gh_pageenc, key[0].bit), 8}}},
		{"conv %lld", {{FIELD(gh_pageenc, val[0].conv), 3}}},
		{"a key of width %lld", {{FIELD(gh_pageenc, key[1].width), 7}}},
		{"conv %lld", {{FIELD(gh_pageenc, val[1].conv), 255}}},
	};
	gh_pagespec good,
				s;
	gh_pageenc	genc,
				enc;
	heap		h;
	uint32_t	ids[2] = {0, 1};
	plist		l = {ids, 2, NULL};
	want_batch	w;
	gh_pagebatch *b = NULL;
	uint64_t	counts[NPATTERNS];
	sink		k;
	bool		nulls_there;
	char		what[160];

	schema_of(&good, 4, lens, aligns, outs);
	heap_init(&h, 4);
	/* pages 0, 1 and 3 with NULLs in output 1, page 2 without */
	for (size_t p = 0; p < 4; p++)
	{
		bool		some;

		do
		{
			write_page(&h, p, FILL_FULL, &good, p == 2 ? 0x7 : 0x5, r);
			some = false;
			for (uint32_t i = 0; i < h.nrows[p]; i++)
				some |= h.nulls[SLOT(p, i) + 1] != 0;
		} while (some != (p != 2));
	}
	memset(&genc, 0, sizeof(genc));
	genc.nkeys = 2;
	genc.key[0] = make_key(0, 0, 8, 0, 0xFFFFFF, 0);
	genc.key[1] = make_key(2, 1, 2, 24, 0xFFFF, 5);
	genc.nvals = 3;
	genc.val[0] = make_val(1, GH_PAGEVAL_SIGNED);
	genc.val[1] = make_val(0, GH_PAGEVAL_UNSIGNED32);
	genc.val[2] = make_val(-1, GH_PAGEVAL_ZERO);

	case_begin("gh_pages_read rejects a bad page description, as gh_extract_pages does, and a varlena output column, which gh_extract_pages takes");
	for (size_t c = 0; c < sizeof(bad_specs) / sizeof(bad_specs[0]); c++)
	{
		s = good;
		set_bad(&s, &bad_specs[c], what, sizeof(what));
		read_invalid(e, &s, &genc, &h, what);
	}
	case_end();

	case_begin("gh_pages_read rejects more than %d keys or %d values, a key or value of no output column, a width not 1, 2, 4 or 8, a shift over 63, a bit over 7, an unknown conv",
			   GH_PAGE_MAX_KEYS, GH_PAGE_MAX_VALS);
	for (size_t c = 0; c < sizeof(bad_encs) / sizeof(bad_encs[0]); c++)
	{
		enc = genc;
		set_bad(&enc, &bad_encs[c], what, sizeof(what));
		/* the entries past the counts valid, so that only the count is wrong */
		for (int i = genc.nkeys; i < GH_PAGE_MAX_KEYS; i++)
			enc.key[i] = make_key(0, i, 8, 0, 0, 0);
		for (int i = genc.nvals; i < GH_PAGE_MAX_VALS; i++)
			enc.val[i] = genc.val[2];
		read_invalid(e, &good, &enc, &h, what);
	}
	case_end();

	want_make(&w, &h, &genc, &l);
	nulls_there = want_null_in(&w, 0, 0);

	case_begin("gh_pagebatch_append before gh_pagebatch_keep is GH_ERR_INVALID; keeping twice is too, the first keep's rows still exact");
	if (check_ok(gh_pages_read(e, &good, &genc, h.base, ids, 2, &b), e, "gh_pages_read") &&
		sink_open(e, &k, 0, genc.nvals, PLACE_MIXED, 0, NULL, 0, r))
	{
		append_invalid(e, b, 0, k.a[0], &k.a[VALUES], &k.a[NULLS], "no keep before");
		sink_free(&k);
		memset(counts, 0xA5, sizeof(counts));
		if (check_ok(gh_pagebatch_keep(b, NULL, counts), e, "gh_pagebatch_keep"))
		{
			uint8_t		drop[2] = {1, 1};

			if (counts[0] != w.count[0])
				case_fail("counts[0] is %llu, want %llu", (unsigned long long) counts[0],
						  (unsigned long long) w.count[0]);
			if (stale_message(e))
				want_invalid(e, gh_pagebatch_keep(b, drop, counts), "gh_pagebatch_keep",
							 "a batch kept already");
			append_check(e, b, &w, 0, false, false, PLACE_MIXED, 0, "gh_pagebatch_append", r);
		}
	}
	gh_pagebatch_free(b);
	b = NULL;
	case_end();

	case_begin("gh_pagebatch_append rejects patterns 256 and -1, NULL keys, NULL values or values[1], NULL nulls[0] where pattern 0's rows have NULLs there; then appends exactly, nulls[1] and nulls[2] NULL (no NULL there)");
	if (!nulls_there)
		case_fail("the pages have no NULL in output 1 to test with");
	if ((b = two_pages_kept(e, &good, &genc, &h, ids, NULL, counts)) != NULL &&
		sink_open(e, &k, 0, genc.nvals, PLACE_MIXED, 0, NULL, 0, r))
	{
		gh_darray  *some[GH_PAGE_MAX_VALS];
		gh_darray  *gap[GH_PAGE_MAX_VALS];

		memcpy(some, &k.a[VALUES], sizeof(some));
		memcpy(gap, &k.a[NULLS], sizeof(gap));
		some[1] = NULL;
		gap[0] = NULL;
		append_invalid(e, b, 256, k.a[0], &k.a[VALUES], &k.a[NULLS], "pattern 256");
		append_invalid(e, b, -1, k.a[0], &k.a[VALUES], &k.a[NULLS], "pattern -1");
		append_invalid(e, b, 0, NULL, &k.a[VALUES], &k.a[NULLS], "keys NULL");
		append_invalid(e, b, 0, k.a[0], NULL, &k.a[NULLS], "values NULL (3 values)");
		append_invalid(e, b, 0, k.a[0], some, &k.a[NULLS], "values[1] NULL");
		append_invalid(e, b, 0, k.a[0], &k.a[VALUES], gap, "nulls[0] NULL, NULLs in value 0");
		sink_free(&k);
		append_check(e, b, &w, 0, false, false, PLACE_MIXED, 0x6,
					 "gh_pagebatch_append (nulls[1], nulls[2] NULL)", r);
	}
	gh_pagebatch_free(b);
	case_end();
	want_free(&w);

	/* output 1 a key too: its NULLs all in pattern 4's rows, none in pattern 0's */
	enc = genc;
	enc.nkeys = 3;
	enc.key[2] = make_key(1, 2, 4, 40, 0xFF, 0);
	want_make(&w, &h, &enc, &l);
	case_begin("nulls[0] NULL for a column whose NULLs are all in another pattern's rows: GH_OK for that pattern, GH_ERR_INVALID for the other");
	if (w.count[0] == 0 || w.count[4] == 0)
		case_fail("patterns 0 and 4 have %llu and %llu rows: nothing to test with",
				  (unsigned long long) w.count[0], (unsigned long long) w.count[4]);
	if ((b = two_pages_kept(e, &good, &enc, &h, ids, NULL, counts)) != NULL)
	{
		if (!gh_pagebatch_has_nulls(b, 0))
			case_fail("gh_pagebatch_has_nulls(0) is false");
		if (sink_open(e, &k, 4, enc.nvals, PLACE_MIXED, 0x1, NULL, 0, r))
			append_invalid(e, b, 4, k.a[0], &k.a[VALUES], &k.a[NULLS],
						   "nulls[0] NULL, NULLs in value 0 of pattern 4");
		sink_free(&k);
		append_check(e, b, &w, 0, false, false, PLACE_MIXED, 0x1,
					 "gh_pagebatch_append (pattern 0, nulls[0] NULL)", r);
	}
	gh_pagebatch_free(b);
	case_end();
	want_free(&w);

	/* pages 2 (no NULL in output 1) and 3 (NULLs), page 3 dropped */
	{
		uint32_t	ids23[2] = {2, 3};
		uint8_t		drop[2] = {0, 1};
		plist		l23 = {ids23, 2, drop};

		want_make(&w, &h, &genc, &l23);
		case_begin("nulls[0] NULL for a column whose NULLs are all in dropped pages: GH_OK, the rows exact");
		if ((b = two_pages_kept(e, &good, &genc, &h, ids23, drop, counts)) != NULL)
		{
			if (!gh_pagebatch_has_nulls(b, 0))
				case_fail("gh_pagebatch_has_nulls(0) is false, page 3 has NULLs there");
			if (counts[0] != w.count[0] || w.count[0] == 0)
				case_fail("counts[0] is %llu, want %llu", (unsigned long long) counts[0],
						  (unsigned long long) w.count[0]);
			append_check(e, b, &w, 0, false, false, PLACE_MIXED, 0x1,
						 "gh_pagebatch_append (nulls[0] NULL)", r);
		}
		gh_pagebatch_free(b);
		b = NULL;
		case_end();
		want_free(&w);
	}

	case_begin("gh_pagebatch_free(NULL) is harmless; a batch freed unkept, another freed kept and never appended");
	gh_pagebatch_free(NULL);
	if (check_ok(gh_pages_read(e, &good, &genc, h.base, ids, 2, &b), e, "gh_pages_read"))
		gh_pagebatch_free(b);
	b = NULL;
	gh_pagebatch_free(two_pages_kept(e, &good, &genc, &h, ids, NULL, counts));
	case_end();

	join_invalid_cases(e, &good, &genc, &h, r);
	heap_free(&h);
}

/*
 * Open an engine of cfg for page batches, in a case of its own (naming
 * cname unless NULL); fresh: the device bytes it holds then.  NULL (the
 * case failed) on an error.
 */
static gh_engine *
open_batch_engine(const test_config *cfg, const char *cname, size_t *fresh)
{
	gh_engine  *e;

	if (cname != NULL)
		case_begin("open an engine of %s for page batches", cname);
	else
		case_begin("open an engine for page batches");
	e = open_engine(cfg);
	case_end();
	if (e != NULL)
		*fresh = gh_engine_device_bytes(e);
	return e;
}

/* Case 10: an engine of two devices (host arrays on the CPU backend). */
static void
several_devices_case(rng *r)
{
	test_config cfg = {usable_devices(2), 0, 0};
	gh_engine  *e;
	gh_pagespec s;
	gh_pageenc	enc;
	heap		h;
	batch_opts	o = {PLACE_DEVICE, true, false};
	size_t		fresh;
	char		cname[128],
				edesc[512];

	config_name(&cfg, cname, sizeof(cname));
	e = open_batch_engine(&cfg, cname, &fresh);
	if (e == NULL)
		return;
	random_schema(&s, 0, r);
	random_enc(&enc, &s, 2, false, 3, r);
	heap_init(&h, 30);
	write_heap(&h, &s, 0, 9, r);
	case_begin("page batches on an engine of %s, arrays asked for on the device", cname);
	check_all_pages(e, &s, &enc, &h, 3, &o, r);
	check_device_bytes(e, fresh, "after the batches and arrays are freed");
	case_end();
	random_null_in_key(&enc, 2, r);
	random_jkeys(&enc, &s, 2, true, r);
	o.no_keys = true;
	case_begin("page batches with join keys on an engine of %s, keys NULL, arrays asked for on the device (%s)",
			   cname, enc_desc(&enc, edesc, sizeof(edesc)));
	check_all_pages(e, &s, &enc, &h, 3, &o, r);
	check_device_bytes(e, fresh, "after the batches and arrays are freed");
	case_end();
	heap_free(&h);
	gh_close(e);
}

void
run_pagebatch_cases(void)
{
	test_config cfg = {1, 0, 0};
	gh_engine  *e;
	size_t		fresh;
	rng			r = {run.seed ^ UINT64_C(0x7061676562617463)};

	e = open_batch_engine(&cfg, NULL, &fresh);
	if (e == NULL)
		return;

	random_batch_cases(e, &r);
	value_cases(e, &r);
	pattern_cases(e, &r);
	size_cases(e, &r);
	malformed_cases(e, &r);
	join_random_cases(e, &r);
	join_value_cases(e, &r);
	invalid_cases(e, &r);

	case_begin("device memory is back to a fresh engine's once the batches and arrays are freed");
	check_device_bytes(e, fresh, "after page batches");
	case_end();
	gh_close(e);

	several_devices_case(&r);
}
