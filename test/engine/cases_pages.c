/*-------------------------------------------------------------------------
 *
 * cases_pages.c
 *	  Engine unit tests of gh_extract_pages, gh_register_host and
 *	  gh_host_registered on synthetic PostgreSQL heap pages.
 *
 * The pages are written here byte by byte as PostgreSQL lays them out
 * (bufpage.h, itemid.h, htup_details.h; 8 kB pages, MaxHeapTuplesPerPage
 * 291), and the rows the engine must read from them are recorded while
 * they are written, without heap_page.h:
 *
 *	- random schemas of 1..12 fixed-width attributes (1, 2, 4 and 8 bytes,
 *	  and 3, 6 and 16 bytes that are walked but never output), a random
 *	  subset of them output, in a random column order; also with only the
 *	  attributes up to the last output walked
 *	- random values (1-, 2- and 4-byte ones sign-extended, as fetch_att
 *	  makes Datums), random NULLs, tuples without a NULL bitmap, tuples
 *	  with fewer attributes than the schema, LP_UNUSED, LP_DEAD and
 *	  LP_REDIRECT line pointers, empty, full and 291-row pages, garbage in
 *	  every byte the reader has no business with; page lists shuffled, with
 *	  repeats
 *	- malformed pages (pd_lower, a line pointer's extent, t_hoff, the NULL
 *	  bitmap, data too short for the columns) reported bad with no rows,
 *	  their neighbours exact
 *	- pages not all-visible read with a snapshot's horizon: each tuple judged
 *	  by its hint bits (visible, invisible, or undecided: the page bad)
 *	- invalid arguments: GH_ERR_INVALID with the function's message
 *	- gh_register_host: a no-op on the CPU backend; on CUDA one range per
 *	  process, whose pages read in place give the oracle's rows
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"

#define PG_PAGE			8192	/* BLCKSZ */
#define PG_MAX_TUPLES	291		/* MaxHeapTuplesPerPage for 8 kB pages */
#define PG_PAGE_HEADER	24		/* SizeOfPageHeaderData */
#define PG_TUPLE_HEADER	23		/* SizeofHeapTupleHeader */
#define PG_MAXALIGN(x)	(((size_t) (x) + 7) & ~(size_t) 7)

#define PG_LP_UNUSED	0
#define PG_LP_NORMAL	1
#define PG_LP_REDIRECT	2
#define PG_LP_DEAD		3

#define PG_HEAP_HASNULL	0x0001
#define PG_NATTS_MASK	0x07FF

/* Tuples are built in a buffer this large (the widest is about 310 bytes). */
#define TUPLE_ROOM		512

/* ---- writing pages ---- */

void
put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

void
put32(uint8_t *p, uint32_t v)
{
	for (int b = 0; b < 4; b++)
		p[b] = (uint8_t) (v >> (8 * b));
}

uint32_t
get16(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8);
}

uint32_t
get32(const uint8_t *p)
{
	return get16(p) | (get16(p + 2) << 16);
}

void
fill_random(uint8_t *p, size_t n, rng *r)
{
	for (size_t i = 0; i < n; i += 8)
	{
		uint64_t	x = rng_next(r);

		for (size_t b = 0; b < 8 && i + b < n; b++)
			p[i + b] = (uint8_t) (x >> (8 * b));
	}
}

/*
 * Give the tuple header at tup hint bits, xmin and xmax that tell its
 * visibility to a snapshot whose xmin is horizon as HeapTupleSatisfiesMVCC
 * tells it, chosen at random: visible (1), invisible (0), or not to be
 * told from the header alone (-1, one tuple in twenty).
 */
int
gen_vis_header(uint8_t *tup, uint32_t horizon, rng *r)
{
	/* keep HEAP_HASNULL .. HEAP_HASOID_OLD and the bits above the xmax's */
	uint32_t	m = get16(tup + 20) & ~UINT32_C(0x1FF0);
	/* normal xids that precede the horizon: within 2^31 below it, and at least 3 */
	uint32_t	span = horizon - 3 < (1u << 31) - 2 ? horizon - 3 : (1u << 31) - 2;
	uint32_t	before = horizon - 1 - (uint32_t) rng_below(r, span);
	uint32_t	after = horizon + (uint32_t) rng_below(r, 1u << 30);
	uint32_t	xmin = before,
				xmax = (uint32_t) rng_next(r);
	uint64_t	u = rng_below(r, 100);
	int			want = 1;

	/* the inserter: frozen (any xmin), or committed before the horizon (FrozenTransactionId too) */
	if (rng_below(r, 4) == 0)
	{
		m |= 0x0300;
		xmin = rng_below(r, 2) ? after : (uint32_t) rng_next(r);
	}
	else
	{
		m |= 0x0100;
		if (rng_below(r, 8) == 0)
			xmin = 2;
	}
	if (u < 40)
		m |= 0x0800 | (uint32_t) (rng_next(r) & 0x04D0);	/* never deleted */
	else if (u < 50)
		m |= 0x0080 | (uint32_t) (rng_next(r) & 0x1450);	/* locked only */
	else if (u < 55)
		m |= 0x0040 | (uint32_t) (rng_next(r) & 0x0400);	/* an exclusive lock, not a multi */
	else if (u < 75)
	{
		m |= 0x0400 | (uint32_t) (rng_next(r) & 0x0010);	/* deleted before the horizon */
		xmax = rng_below(r, 8) == 0 ? 2 : before - (uint32_t) rng_below(r, 1000);
		xmax = xmax < 3 ? 2 : xmax;
		want = 0;
	}
	else if (u < 95)
	{
		m = (m & ~UINT32_C(0x0300)) | 0x0200 | (uint32_t) (rng_next(r) & 0x1CD0);	/* aborted */
		xmin = (uint32_t) rng_next(r);
		want = 0;
	}
	else
	{
		want = -1;
		switch (rng_below(r, 5))
		{
			case 0:				/* the inserter not hinted */
				m = (m & ~UINT32_C(0x0300)) | (uint32_t) (rng_next(r) & 0x1CD0);
				break;
			case 1:				/* committed, but perhaps in the snapshot */
				m = (m & ~UINT32_C(0x0300)) | 0x0100 | 0x0800;
				xmin = rng_below(r, 4) == 0 ? horizon : after;
				break;
			case 2:				/* a deleter not hinted */
				m |= (uint32_t) (rng_next(r) & 0x0010);
				break;
			case 3:				/* deleted, but perhaps in the snapshot */
				m |= 0x0400;
				xmax = rng_below(r, 4) == 0 ? horizon : after;
				break;
			default:			/* a multixact that updated */
				m |= 0x1000 | (uint32_t) (rng_next(r) & 0x0410);
				break;
		}
	}
	put16(tup + 20, m);
	put32(tup + 0, xmin);
	put32(tup + 4, xmax);
	return want;
}

/* A value of an attribute: random, or 0, -1, the smallest or the largest. */
static uint64_t
random_raw(rng *r, int len)
{
	int			bits = len >= 8 ? 64 : 8 * len;
	uint64_t	top = UINT64_C(1) << (bits - 1);

	switch (rng_below(r, 8))
	{
		case 0:
			return 0;
		case 1:
			return ~UINT64_C(0);
		case 2:
			return top;
		case 3:
			return top - 1;
		default:
			return rng_next(r);
	}
}

/* The Datum fetch_att makes of the low len bytes of raw (len 1, 2, 4, 8). */
static uint64_t
datum_of(uint64_t raw, int len)
{
	int			shift = 64 - 8 * len;

	if (len >= 8)
		return raw;
	return (uint64_t) (((int64_t) (raw << shift)) >> shift);
}

/*
 * One heap tuple of schema s at tup (room bytes) as heap_form_tuple lays
 * it out, with garbage in every byte the reader must not look at (the rest
 * of the header, the NULL bitmap's bits past the tuple's attributes, the
 * padding before fixed-width columns); returns its length (lp_len).  The
 * tuple has tnatts attributes (fewer than the schema's: a row from before
 * ALTER TABLE ADD COLUMN); atts[a] gives attribute a's NULL flag and
 * stored bytes: a fixed-width value's attlen bytes, or a varlena's header
 * and data, placed as heap_fill_tuple places them (a 1-byte header or a
 * TOAST pointer unaligned, a 4-byte header aligned after zero padding, as
 * the reader looks for it).  att_pos (NULL: not wanted) receives each
 * stored attribute's offset in the tuple.
 */
size_t
write_tuple(const gh_pagespec *s, int tnatts, const tuple_att *atts, uint8_t *tup, size_t room,
			rng *r, size_t *att_pos)
{
	bool		hasnull = false;
	size_t		hoff,
				pos;

	fill_random(tup, room, r);
	for (int a = 0; a < tnatts; a++)
		hasnull |= atts[a].null;
	hoff = PG_MAXALIGN(PG_TUPLE_HEADER + (hasnull ? (tnatts + 7) / 8 : 0));
	/* natts, with HEAP_KEYS_UPDATED / HOT_UPDATED / ONLY_TUPLE at random */
	put16(tup + 18, (uint32_t) tnatts | (uint32_t) (rng_next(r) & 0xE000));
	/* HEAP_HASNULL, with random hint and xmax bits */
	put16(tup + 20, (uint32_t) (rng_next(r) & 0xFFF0) | (hasnull ? PG_HEAP_HASNULL : 0));
	tup[22] = (uint8_t) hoff;
	if (hasnull)
		for (int a = 0; a < tnatts; a++)
		{
			if (atts[a].null)
				tup[PG_TUPLE_HEADER + a / 8] &= (uint8_t) ~(1 << (a % 8));
			else
				tup[PG_TUPLE_HEADER + a / 8] |= (uint8_t) (1 << (a % 8));
		}
	pos = hoff;
	for (int a = 0; a < s->natts && a < tnatts; a++)
	{
		size_t		al = s->attalign[a];

		if (atts[a].null)
			continue;
		/* a 1-byte header or a TOAST pointer goes unaligned */
		if (!(s->attlen[a] == -1 && (atts[a].bytes[0] & 1)))
		{
			size_t		aligned = (pos + al - 1) & ~(al - 1);

			if (s->attlen[a] == -1)
				memset(tup + pos, 0, aligned - pos);
			pos = aligned;
		}
		if (pos + atts[a].len > room)
		{
			printf("engine_test: a tuple of more than %zu bytes\n", room);
			exit(2);
		}
		if (att_pos != NULL)
			att_pos[a] = pos;
		memcpy(tup + pos, atts[a].bytes, atts[a].len);
		pos += atts[a].len;
	}
	return pos;
}

/*
 * A varlena's stored bytes at img (room for 64): a 1-byte header, a 4-byte
 * one (plain or compressed) or a TOAST pointer, with random data; returns
 * its size.
 */
static size_t
random_varlena(uint8_t *img, rng *r)
{
	size_t		n;

	fill_random(img, 64, r);
	switch (rng_below(r, 4))
	{
		case 0:					/* short: 1 + up to 39 bytes */
			n = 1 + rng_below(r, 40);
			img[0] = (uint8_t) ((n << 1) | 1);
			break;
		case 1:					/* 4-byte header, plain */
		case 2:					/* ... compressed (0x02) */
			n = 4 + rng_below(r, 40);
			put32(img, (uint32_t) (n << 2) | (rng_below(r, 2) ? 0x02 : 0));
			break;
		default:				/* external TOAST pointer: 0x01, tag 18, 16 bytes */
			n = 18;
			img[0] = 0x01;
			img[1] = 18;
			break;
	}
	return n;
}

/*
 * One tuple of schema s with random values at tup (TUPLE_ROOM bytes), as
 * write_tuple writes it; returns its length.  The row it must read as goes
 * to vals[]/nulls[] (by output column); a varlena column's value is its
 * offset in the tuple, to which the caller adds the tuple's in the page.
 * no_data: a tuple of no data (24 bytes), all its attributes NULL or
 * missing.
 */
size_t
build_tuple(const gh_pagespec *s, rng *r, int null_pct, bool no_data,
			uint8_t *tup, uint64_t *vals, uint8_t *nulls)
{
	tuple_att	atts[GH_PAGE_MAX_ATTS] = {{0}};
	uint8_t		images[GH_PAGE_MAX_ATTS][64];
	size_t		att_pos[GH_PAGE_MAX_ATTS];
	int			tnatts = s->natts;
	size_t		len;

	if (no_data)
	{
		tnatts = (int) rng_below(r, (s->natts < 8 ? s->natts : 8) + 1);
		for (int a = 0; a < tnatts; a++)
			atts[a].null = true;
	}
	else
	{
		bool		none = rng_below(r, 3) == 0;

		/* a row from before ALTER TABLE ADD COLUMN: fewer attributes */
		if (rng_below(r, 6) == 0)
			tnatts = (int) rng_below(r, s->natts);
		for (int a = 0; a < tnatts; a++)
			atts[a].null = !none && (int) rng_below(r, 100) < null_pct;
	}
	for (int a = 0; a < s->natts; a++)
	{
		int			o = s->out_of[a];
		int			alen = s->attlen[a];
		bool		null = a >= tnatts || atts[a].null;
		uint64_t	raw;

		if (o >= 0)
		{
			nulls[o] = null;
			vals[o] = 0;
		}
		if (null)
			continue;
		atts[a].bytes = images[a];
		if (alen == -1)
		{
			atts[a].len = random_varlena(images[a], r);
			continue;
		}
		raw = random_raw(r, alen);
		fill_random(images[a], sizeof(images[a]), r);
		for (int b = 0; b < alen && b < 8; b++)
			images[a][b] = (uint8_t) (raw >> (8 * b));
		atts[a].len = (size_t) alen;
		if (o >= 0)
			vals[o] = datum_of(raw, alen);
	}
	len = write_tuple(s, tnatts, atts, tup, TUPLE_ROOM, r, att_pos);
	for (int a = 0; a < s->natts && a < tnatts; a++)
		if (s->attlen[a] == -1 && s->out_of[a] >= 0 && !atts[a].null)
			vals[s->out_of[a]] = att_pos[a];
	return len;
}

typedef enum page_kind
{
	PAGE_SOME,					/* up to 60 line pointers, most LP_NORMAL */
	PAGE_FULL,					/* tuples until the next one does not fit */
	PAGE_MAX_ROWS,				/* 291 tuples of no data, 24 bytes each */
	PAGE_SPARSE,				/* many line pointers, few LP_NORMAL */
	PAGE_EMPTY,					/* no line pointer: pd_lower 24 */
	PAGE_NEW					/* all zeros, as a newly added page */
} page_kind;

/*
 * Pages with the rows they must give: row r of page p, output o, is at
 * ROW(p, r) * GH_PAGE_MAX_OUT + o of vals and nulls.
 */
typedef struct pageset
{
	size_t		npages;
	uint8_t    *base;			/* npages pages, 16-byte aligned */
	void	   *alloc;			/* to free (NULL: the caller's memory) */
	uint32_t   *nrows;
	uint8_t    *bad;			/* 1: must be reported malformed; 2: may be */
	uint64_t   *vals;
	uint8_t    *nulls;
} pageset;

#define ROW(p, r) ((size_t) (p) * PG_MAX_TUPLES + (size_t) (r))

/* Room for npages pages, in base (16-byte aligned) or allocated. */
static void
pageset_init(pageset *ps, size_t npages, uint8_t *base)
{
	size_t		rows = npages * PG_MAX_TUPLES * GH_PAGE_MAX_OUT;

	ps->npages = npages;
	ps->alloc = NULL;
	if (base == NULL)
	{
		ps->alloc = aligned_alloc(16, npages > 0 ? npages * PG_PAGE : 16);
		if (ps->alloc == NULL)
		{
			printf("engine_test: out of memory allocating %zu pages\n", npages);
			exit(2);
		}
		base = ps->alloc;
	}
	ps->base = base;
	ps->nrows = xcalloc(npages, sizeof(uint32_t));
	ps->bad = xcalloc(npages, 1);
	ps->vals = xmalloc(rows * sizeof(uint64_t));
	ps->nulls = xmalloc(rows);
}

static void
pageset_free(pageset *ps)
{
	free(ps->alloc);
	free(ps->nrows);
	free(ps->bad);
	free(ps->vals);
	free(ps->nulls);
}

/* Write page p of ps as PostgreSQL would, tuples of schema s. */
static void
build_page(pageset *ps, size_t p, page_kind kind, const gh_pagespec *s, rng *r)
{
	static const int null_pcts[] = {0, 10, 50, 90};
	uint8_t    *page = ps->base + p * PG_PAGE;
	uint32_t	lower = PG_PAGE_HEADER,
				upper = PG_PAGE;
	int			null_pct = null_pcts[rng_below(r, 4)];
	int			nlp = 0,
				rows = 0;
	uint8_t		tup[TUPLE_ROOM];

	ps->nrows[p] = 0;
	ps->bad[p] = 0;
	if (kind == PAGE_NEW)
	{
		memset(page, 0, PG_PAGE);
		ps->bad[p] = 2;
		return;
	}
	fill_random(page, PG_PAGE, r);
	switch (kind)
	{
		case PAGE_SOME:
			nlp = 1 + (int) rng_below(r, 60);
			break;
		case PAGE_FULL:
		case PAGE_MAX_ROWS:
			nlp = PG_MAX_TUPLES;
			break;
		case PAGE_SPARSE:
			nlp = 100 + (int) rng_below(r, PG_MAX_TUPLES - 99);
			break;
		default:
			break;
	}
	for (int i = 0; i < nlp && lower + 4 <= upper; i++)
	{
		int			u = (int) rng_below(r, 100);
		uint32_t	flags,
					off = 0,
					len = 0;

		if (kind == PAGE_MAX_ROWS)
			flags = PG_LP_NORMAL;
		else if (kind == PAGE_SPARSE)
			flags = u < 15 ? PG_LP_NORMAL : u < 45 ? PG_LP_UNUSED : u < 75 ? PG_LP_DEAD : PG_LP_REDIRECT;
		else
			flags = u < 85 ? PG_LP_NORMAL : u < 90 ? PG_LP_UNUSED : u < 95 ? PG_LP_DEAD : PG_LP_REDIRECT;
		if (flags == PG_LP_NORMAL)
		{
			size_t		at = ROW(p, rows) * GH_PAGE_MAX_OUT;
			size_t		tlen = build_tuple(s, r, null_pct, kind == PAGE_MAX_ROWS, tup,
										   &ps->vals[at], &ps->nulls[at]);
			size_t		space = PG_MAXALIGN(tlen);

			if (lower + 4 + space > upper)
				break;			/* the page is full */
			upper -= (uint32_t) space;
			memcpy(page + upper, tup, tlen);
			off = upper;
			/* a varlena column reads as its offset in the page */
			for (int a = 0; a < s->natts; a++)
				if (s->attlen[a] == -1 && s->out_of[a] >= 0 && !ps->nulls[at + s->out_of[a]])
					ps->vals[at + s->out_of[a]] += off;
			len = (uint32_t) tlen;
			rows++;
		}
		else if (flags == PG_LP_REDIRECT)
			off = 1 + (uint32_t) rng_below(r, (uint64_t) nlp);	/* an offset number */
		else if (flags == PG_LP_DEAD && rng_below(r, 2) == 0)
		{
			/* dead with storage: where some tuple was */
			off = 8 * (3 + (uint32_t) rng_below(r, 1000));
			len = 24 + (uint32_t) rng_below(r, 100);
		}
		put32(page + lower, off | (flags << 15) | (len << 17));
		lower += 4;
	}
	ps->nrows[p] = (uint32_t) rows;
	/* pd_lsn and pd_checksum stay random; pd_prune_xid too */
	put16(page + 10, (uint32_t) rng_below(r, 8));	/* pd_flags */
	put16(page + 12, lower);
	put16(page + 14, upper);
	put16(page + 16, PG_PAGE);	/* pd_special: no special space */
	put16(page + 18, PG_PAGE | 4);	/* pd_pagesize_version */
}

/* Page kinds for page p of a set: each kind first, then at random. */
static page_kind
kind_of(size_t p, rng *r)
{
	uint64_t	u = rng_below(r, 20);

	if (p <= PAGE_EMPTY)
		return (page_kind) p;
	return u < 2 ? PAGE_EMPTY : u < 9 ? PAGE_SOME : u < 15 ? PAGE_FULL :
		u < 17 ? PAGE_MAX_ROWS : PAGE_SPARSE;
}

typedef enum corruption
{
	BAD_LOWER_ODD,
	BAD_LOWER_BEYOND,
	BAD_LOWER_TOO_MANY,
	BAD_LP_EXTENT,
	BAD_HOFF_SMALL,
	BAD_HOFF_BEYOND,
	BAD_BITMAP,
	BAD_DATA_SHORT,
	NBAD
} corruption;

static const char *const corruption_names[NBAD] = {
	"pd_lower not a multiple of 4 past the header",
	"pd_lower beyond the page",
	"more line pointers than max_tuples",
	"an LP_NORMAL line pointer's lp_off + lp_len beyond the page",
	"a t_hoff below 23",
	"a t_hoff beyond lp_len",
	"a NULL bitmap longer than t_hoff leaves room for",
	"a tuple's data shorter than its columns",
};

/*
 * A random LP_NORMAL line pointer of page (its index) whose tuple is at
 * most max_len bytes and has min_data to max_data bytes past t_hoff; -1
 * if none.
 */
static int
pick_tuple(const uint8_t *page, rng *r, uint32_t max_len, uint32_t min_data,
		   uint32_t max_data)
{
	int			items = (int) (get16(page + 12) - PG_PAGE_HEADER) / 4;
	int			cand[PG_MAX_TUPLES];
	int			n = 0;

	for (int i = 0; i < items; i++)
	{
		uint32_t	lp = get32(page + PG_PAGE_HEADER + 4 * i);
		uint32_t	len = lp >> 17;

		if (((lp >> 15) & 3) == PG_LP_NORMAL && len <= max_len &&
			len >= page[(lp & 0x7FFF) + 22] + min_data &&
			len <= page[(lp & 0x7FFF) + 22] + max_data)
			cand[n++] = i;
	}
	return n == 0 ? -1 : cand[rng_below(r, (uint64_t) n)];
}

/* Make a built page malformed in way c: false if it has no tuple to spoil. */
static bool
corrupt_page(uint8_t *page, corruption c, rng *r)
{
	uint32_t	lower = get16(page + 12);
	int			i = -1;
	uint8_t    *lpp,
			   *tup;
	uint32_t	lp,
				off,
				len;

	switch (c)
	{
		case BAD_LOWER_ODD:
			put16(page + 12, lower + 1 + (uint32_t) rng_below(r, 3));
			return true;
		case BAD_LOWER_BEYOND:
			put16(page + 12, PG_PAGE + 4 * (1 + (uint32_t) rng_below(r, 8)));
			return true;
		case BAD_LOWER_TOO_MANY:
			{
				/* the extra line pointers LP_UNUSED: only their number is wrong */
				uint32_t	too_many = PG_PAGE_HEADER +
					4 * (PG_MAX_TUPLES + 1 + (uint32_t) rng_below(r, 20));

				if (too_many > get16(page + 14))
					return false;
				memset(page + lower, 0, too_many - lower);
				put16(page + 12, too_many);
				return true;
			}
		case BAD_HOFF_BEYOND:
			/* half the time a tuple of no data, where no column runs past lp_len */
			i = pick_tuple(page, r, 240, 0, rng_below(r, 2) ? 0 : PG_PAGE);
			break;
		case BAD_DATA_SHORT:
			i = pick_tuple(page, r, PG_PAGE, 1, PG_PAGE);
			break;
		default:
			i = pick_tuple(page, r, PG_PAGE, 0, PG_PAGE);
			break;
	}
	if (i < 0)
		return false;
	lpp = page + PG_PAGE_HEADER + 4 * i;
	lp = get32(lpp);
	off = lp & 0x7FFF;
	len = lp >> 17;
	tup = page + off;
	switch (c)
	{
		case BAD_LP_EXTENT:
			if (rng_below(r, 2) == 0)
				len = PG_PAGE - off + 1 + (uint32_t) rng_below(r, 64);
			else
				off = PG_PAGE - 8 * (1 + (uint32_t) rng_below(r, 2));
			put32(lpp, off | (PG_LP_NORMAL << 15) | (len << 17));
			break;
		case BAD_HOFF_SMALL:
			tup[22] = (uint8_t) (8 * rng_below(r, 3));
			break;
		case BAD_HOFF_BEYOND:
			tup[22] = (uint8_t) PG_MAXALIGN(len + 1);
			break;
		case BAD_BITMAP:
			{
				uint32_t	natts = (tup[22] - PG_TUPLE_HEADER) * 8 + 1 + (uint32_t) rng_below(r, 8);

				put16(tup + 18, (get16(tup + 18) & ~PG_NATTS_MASK) | natts);
				put16(tup + 20, get16(tup + 20) | PG_HEAP_HASNULL);
				break;
			}
		case BAD_DATA_SHORT:
			/* half the time one byte short */
			len = rng_below(r, 2) ? len - 1 : tup[22] + (uint32_t) rng_below(r, len - tup[22]);
			put32(lpp, off | (PG_LP_NORMAL << 15) | (len << 17));
			break;
		default:
			break;
	}
	return true;
}

/* Page p of ps: a page of rows made malformed in way c. */
static void
build_bad_page(pageset *ps, size_t p, corruption c, const gh_pagespec *s, rng *r)
{
	for (;;)
	{
		build_page(ps, p, (page_kind) rng_below(r, PAGE_EMPTY), s, r);
		if (corrupt_page(ps->base + p * PG_PAGE, c, r))
			break;
	}
	ps->bad[p] = 1;
	ps->nrows[p] = 0;
}

/* A list of n page numbers of [0, nbase): every page once (if n allows), shuffled, then repeats. */
uint32_t *
page_list(size_t n, size_t nbase, rng *r)
{
	uint32_t   *ids = xmalloc((n > 0 ? n : 1) * sizeof(uint32_t));
	uint64_t   *perm = gen_permutation(nbase, r);

	for (size_t i = 0; i < n; i++)
		ids[i] = (uint32_t) (i < nbase ? perm[i] : rng_below(r, nbase));
	for (size_t i = n; i > 1; i--)
	{
		size_t		j = rng_below(r, i);
		uint32_t	t = ids[i - 1];

		ids[i - 1] = ids[j];
		ids[j] = t;
	}
	free(perm);
	return ids;
}

/* ---- schemas ---- */

/*
 * A random schema of 1..12 attributes (natts: 0 for random) whose output
 * columns are a random subset of the 1-, 2-, 4- and 8-byte attributes, in
 * a random order; the others (other widths, varlenas) are walked over.
 */
void
random_schema(gh_pagespec *s, int natts, rng *r)
{
	static const struct
	{
		int16_t		len;
		uint8_t		align;
	}			kinds[] = {
		{1, 1}, {1, 1}, {2, 2}, {2, 2}, {4, 4}, {4, 4}, {8, 8}, {8, 8},
		{8, 4},					/* macaddr8: 8 bytes, int-aligned */
		{16, 8}, {6, 2}, {3, 1},	/* walked, never output */
		{-1, 4}, {-1, 8}, {-1, 1}	/* varlenas (text, an int8 array, ...) */
	};
	int			cand[GH_PAGE_MAX_ATTS];
	int			nc = 0;

	memset(s, 0, sizeof(*s));
	s->page_size = PG_PAGE;
	s->max_tuples = PG_MAX_TUPLES;
	s->natts = natts > 0 ? natts : 1 + (int) rng_below(r, 12);
	for (int a = 0; a < s->natts; a++)
	{
		int			k = (int) rng_below(r, sizeof(kinds) / sizeof(kinds[0]));

		s->attlen[a] = kinds[k].len;
		s->attalign[a] = kinds[k].align;
		s->out_of[a] = -1;
		if (s->attlen[a] > 0 && s->attlen[a] <= 8 && s->attlen[a] != 3 && s->attlen[a] != 6 &&
			rng_below(r, 2) == 0)
			cand[nc++] = a;
	}
	if (nc == 0)
	{
		int			a = (int) rng_below(r, (uint64_t) s->natts);

		if (s->attlen[a] == 3 || s->attlen[a] == 6 || s->attlen[a] == 16 || s->attlen[a] == -1)
		{
			s->attlen[a] = 8;
			s->attalign[a] = 8;
		}
		cand[nc++] = a;
	}
	for (int i = nc; i > 1; i--)
	{
		int			j = (int) rng_below(r, (uint64_t) i);
		int			t = cand[i - 1];

		cand[i - 1] = cand[j];
		cand[j] = t;
	}
	for (int i = 0; i < nc; i++)
		s->out_of[cand[i]] = (int8_t) i;
	s->nout = nc;
}

/*
 * "4>1 8/4 16 2>0 v/4": each attribute's width (v: a varlena), "/align"
 * where the alignment is not the usual one for it (always for a varlena),
 * ">o" where it is output column o
 */
const char *
schema_desc(const gh_pagespec *s, char *buf, size_t len)
{
	size_t		at = 0;

	buf[0] = '\0';
	for (int a = 0; a < s->natts && at < len; a++)
	{
		int			w = s->attlen[a];
		int			usual = w >= 8 ? 8 : w == 6 ? 2 : w == 3 ? 1 : w;

		if (w == -1)
			at += (size_t) snprintf(buf + at, len - at, a ? " v" : "v");
		else
			at += (size_t) snprintf(buf + at, len - at, a ? " %d" : "%d", w);
		if (s->attalign[a] != usual && at < len)
			at += (size_t) snprintf(buf + at, len - at, "/%d", s->attalign[a]);
		if (s->out_of[a] >= 0 && at < len)
			at += (size_t) snprintf(buf + at, len - at, ">%d", s->out_of[a]);
	}
	return buf;
}

/* The index of the last output attribute. */
static int
last_output(const gh_pagespec *s)
{
	int			last = 0;

	for (int a = 0; a < s->natts; a++)
		if (s->out_of[a] >= 0)
			last = a;
	return last;
}

/*
 * Make some of s's varlena attributes output columns too (gh_extract_pages
 * gives their offsets in the page).
 */
static void
varlena_outputs(gh_pagespec *s, rng *r)
{
	for (int a = 0; a < s->natts && s->nout < GH_PAGE_MAX_OUT; a++)
		if (s->attlen[a] == -1 && s->out_of[a] < 0 && rng_below(r, 2) == 0)
			s->out_of[a] = (int8_t) s->nout++;
}

/* ---- checking the engine ---- */

/* Output arrays for n pages, cap rows, filled with garbage. */
static void
rows_init(gh_pagerows *out, const gh_pagespec *s, size_t n, size_t cap)
{
	memset(out, 0, sizeof(*out));
	out->cap = cap;
	for (int o = 0; o < s->nout; o++)
	{
		out->values[o] = xmalloc(cap * sizeof(uint64_t));
		out->nulls[o] = xmalloc(cap);
		for (size_t i = 0; i < cap; i++)
		{
			out->values[o][i] = UINT64_C(0xA5A5A5A5A5A5A5A5) ^ i;
			out->nulls[o][i] = i % 2 ? 0 : 0x77;
		}
	}
	out->first = xmalloc((n + 1) * sizeof(uint32_t));
	memset(out->first, 0xFF, (n + 1) * sizeof(uint32_t));
	out->bad = xmalloc(n > 0 ? n : 1);
	memset(out->bad, 0x77, n > 0 ? n : 1);
	out->nrows = 123456789;
}

static void
rows_free(gh_pagerows *out)
{
	for (int o = 0; o < GH_PAGE_MAX_OUT; o++)
	{
		free(out->values[o]);
		free(out->nulls[o]);
	}
	free(out->first);
	free(out->bad);
}

/*
 * Compare an extraction of the pages ids[0..n) with ps: list entry p is
 * page ids[p] + first_page of ps.
 */
static void
compare_rows(const gh_pagerows *out, const gh_pagespec *s, const pageset *ps,
			 size_t first_page, const uint32_t *ids, size_t n)
{
	size_t		at = 0;

	for (size_t p = 0; p < n; p++)
	{
		size_t		b = ids[p] + first_page;
		int			want_bad = ps->bad[b];
		size_t		rows = want_bad ? 0 : ps->nrows[b];

		if (out->first[p] != at)
		{
			case_fail("first[%zu] (page %zu) is %u, want %zu", p, b, out->first[p], at);
			return;
		}
		if (want_bad == 2 ? out->bad[p] > 1 : out->bad[p] != want_bad)
		{
			case_fail("bad[%zu] (page %zu) is %u, want %d", p, b, out->bad[p], want_bad);
			return;
		}
		for (size_t r = 0; r < rows; r++)
			for (int o = 0; o < s->nout; o++)
			{
				size_t		w = ROW(b, r) * GH_PAGE_MAX_OUT + (size_t) o;
				bool		got_null = out->nulls[o][at + r] != 0;

				if (got_null != (ps->nulls[w] != 0))
				{
					case_fail("list entry %zu (page %zu), row %zu, output %d: %s, want %s",
							  p, b, r, o, got_null ? "NULL" : "not NULL",
							  ps->nulls[w] ? "NULL" : "not NULL");
					return;
				}
				if (!got_null && out->values[o][at + r] != ps->vals[w])
				{
					case_fail("list entry %zu (page %zu), row %zu, output %d: 0x%llx, want 0x%llx",
							  p, b, r, o, (unsigned long long) out->values[o][at + r],
							  (unsigned long long) ps->vals[w]);
					return;
				}
			}
		at += rows;
	}
	if (out->first[n] != at)
		case_fail("first[%zu] (the end) is %u, want %zu", n, out->first[n], at);
	else if (out->nrows != at)
		case_fail("%zu rows, want %zu", out->nrows, at);
}

/*
 * gh_extract_pages of pages ids[0..n) from base (base's page i is page
 * i + first_page of ps), with room for extra_cap rows more than needed,
 * checked against ps.
 */
static void
check_extract(gh_engine *e, const gh_pagespec *s, const pageset *ps, size_t first_page,
			  const uint8_t *base, const uint32_t *ids, size_t n, size_t extra_cap)
{
	gh_pagerows out;

	rows_init(&out, s, n, n * s->max_tuples + extra_cap);
	if (check_ok(gh_extract_pages(e, s, base, ids, n, &out), e, "gh_extract_pages"))
		compare_rows(&out, s, ps, first_page, ids, n);
	rows_free(&out);
}

/* ---- the cases ---- */

/* Case 1: random schemas and page lists. */
static void
random_page_cases(gh_engine *e, rng *r)
{
	static const size_t counts[] = {0, 1, 37, 300};
	int			ncounts = run.quick ? 3 : 4;
	int			nschemas = run.quick ? 3 : 8;

	for (int si = 0; si < nschemas; si++)
	{
		gh_pagespec s,
					prefix;
		char		desc[256];

		/* the widest schema (a 2-byte NULL bitmap), one attribute, then random */
		random_schema(&s, si == 0 ? 12 : si == 1 ? 1 : 0, r);
		varlena_outputs(&s, r);
		schema_desc(&s, desc, sizeof(desc));
		prefix = s;
		prefix.natts = last_output(&s) + 1;
		prefix.natts += (int) rng_below(r, (uint64_t) (s.natts - prefix.natts + 1));
		for (int ci = 0; ci < ncounts; ci++)
		{
			size_t		n = counts[ci];
			size_t		nbase = n == 0 ? 1 : (n * 3 + 3) / 4;
			pageset		ps;
			uint32_t   *ids;

			pageset_init(&ps, nbase, NULL);
			for (size_t p = 0; p < nbase; p++)
				build_page(&ps, p, n == 1 ? PAGE_FULL : kind_of(p, r), &s, r);
			ids = page_list(n, nbase, r);

			case_begin("rows of %zu heap pages (%zu distinct, shuffled%s), %d attributes (%s)",
					   n, nbase, n > nbase ? ", repeats" : "", s.natts, desc);
			check_extract(e, &s, &ps, 0, ps.base, ids, n, 0);
			case_end();

			if (n > 0)
			{
				case_begin("rows of %zu heap pages walking %d of the %d attributes (%s), room for more rows",
						   n, prefix.natts, s.natts, desc);
				check_extract(e, &prefix, &ps, 0, ps.base, ids, n, 1 + rng_below(r, 1000));
				case_end();
			}
			free(ids);
			pageset_free(&ps);
		}
	}

	if (!run.quick)
	{
		gh_pagespec s;
		char		desc[256];
		pageset		ps;
		uint32_t   *ids;
		size_t		n = 3000,
					nbase = 300;

		random_schema(&s, 0, r);
		varlena_outputs(&s, r);
		schema_desc(&s, desc, sizeof(desc));
		pageset_init(&ps, nbase, NULL);
		for (size_t p = 0; p < nbase; p++)
			build_page(&ps, p, kind_of(p, r), &s, r);
		ids = page_list(n, nbase, r);
		case_begin("rows of %zu heap pages (%zu distinct, shuffled, repeats), %d attributes (%s)",
				   n, nbase, s.natts, desc);
		check_extract(e, &s, &ps, 0, ps.base, ids, n, 0);
		case_end();
		free(ids);
		pageset_free(&ps);
	}
}

/* Case 2: malformed pages among good ones. */
static void
malformed_page_cases(gh_engine *e, rng *r)
{
	gh_pagespec s;
	char		desc[256];

	random_schema(&s, 12, r);
	schema_desc(&s, desc, sizeof(desc));
	for (int c = 0; c < NBAD; c++)
	{
		size_t		nbase = 10;
		pageset		ps;
		uint32_t   *ids;

		pageset_init(&ps, nbase, NULL);
		for (size_t p = 0; p < nbase; p++)
		{
			if (p % 3 == 1)
				build_bad_page(&ps, p, (corruption) c, &s, r);
			else
				build_page(&ps, p, kind_of(p / 3 * 2 + p % 3 / 2, r), &s, r);
		}
		ids = page_list(20, nbase, r);
		case_begin("pages with %s are malformed, with no rows, among exact ones (%s)",
				   corruption_names[c], desc);
		check_extract(e, &s, &ps, 0, ps.base, ids, 20, 0);
		case_end();
		free(ids);
		pageset_free(&ps);
	}

	{
		size_t		nbase = run.quick ? 40 : 300;
		size_t		n = nbase + nbase / 2;
		pageset		ps;
		uint32_t   *ids;

		random_schema(&s, 0, r);
		schema_desc(&s, desc, sizeof(desc));
		pageset_init(&ps, nbase, NULL);
		for (size_t p = 0; p < nbase; p++)
		{
			if (p % 4 == 3)
				build_bad_page(&ps, p, (corruption) (p / 4 % NBAD), &s, r);
			else if (p % 16 == 6)
				build_page(&ps, p, PAGE_NEW, &s, r);
			else
				build_page(&ps, p, kind_of(p, r), &s, r);
		}
		ids = page_list(n, nbase, r);
		case_begin("%zu pages, every fourth malformed in one of %d ways, some all zeros (new): "
				   "the malformed ones bad, new ones bad or empty, the rest exact (%s)",
				   n, NBAD, desc);
		check_extract(e, &s, &ps, 0, ps.base, ids, n, 0);
		case_end();
		free(ids);
		pageset_free(&ps);
	}
}

/*
 * Make page p of ps (built by build_page) all-visible, or not all-visible
 * with its tuples' visibility to a snapshot of xmin horizon told by their
 * hint bits (gen_vis_header; every tuple decided where decided is set), and
 * record what a reader judging them must give: the visible rows, or a bad
 * page where a tuple's hint bits do not tell.
 */
static void
judge_page(pageset *ps, size_t p, uint32_t horizon, bool all_visible, bool decided, rng *r)
{
	uint8_t    *page = ps->base + p * PG_PAGE;
	int			items = (int) (get16(page + 12) - PG_PAGE_HEADER) / 4;
	uint32_t	kept = 0,
				row = 0;
	bool		undecided = false;

	if (ps->bad[p] != 0)
		return;					/* a new page: no header to set */
	put16(page + 10, all_visible ? get16(page + 10) | 4 : get16(page + 10) & ~UINT32_C(4));
	if (all_visible)
		return;
	for (int i = 0; i < items; i++)
	{
		uint32_t	lp = get32(page + PG_PAGE_HEADER + 4 * i);
		int			vis;

		if (((lp >> 15) & 3) != PG_LP_NORMAL)
			continue;
		do
			vis = gen_vis_header(page + (lp & 0x7FFF), horizon, r);
		while (decided && vis < 0);
		undecided |= vis < 0;
		if (vis > 0)
		{
			size_t		from = ROW(p, row) * GH_PAGE_MAX_OUT,
						to = ROW(p, kept) * GH_PAGE_MAX_OUT;

			memmove(&ps->vals[to], &ps->vals[from], GH_PAGE_MAX_OUT * sizeof(uint64_t));
			memmove(&ps->nulls[to], &ps->nulls[from], GH_PAGE_MAX_OUT);
			kept++;
		}
		row++;
	}
	ps->nrows[p] = undecided ? 0 : kept;
	ps->bad[p] = undecided ? 1 : 0;
}

/*
 * Case 3: pages not all-visible read with a horizon (gh_pagespec.vis_horizon):
 * each tuple judged by its hint bits, the invisible ones skipped, a page with
 * one they do not tell bad; all-visible pages read whole, whatever their
 * tuples' headers say.  Horizons near the start of the xid space and past
 * 2^31 (the comparison is modulo 2^32).
 */
static void
visibility_page_cases(gh_engine *e, rng *r)
{
	static const uint32_t horizons[] = {100, UINT32_C(3000000000)};

	for (int h = 0; h < 2; h++)
	{
		gh_pagespec s;
		char		desc[256];
		size_t		nbase = run.quick ? 30 : 120;
		size_t		n = nbase + nbase / 2;
		pageset		ps;
		uint32_t   *ids;

		random_schema(&s, 0, r);
		varlena_outputs(&s, r);
		schema_desc(&s, desc, sizeof(desc));
		s.vis_horizon = horizons[h];
		pageset_init(&ps, nbase, NULL);
		for (size_t p = 0; p < nbase; p++)
		{
			uint64_t	u = rng_below(r, 4);

			build_page(&ps, p, p % 16 == 5 ? PAGE_NEW : kind_of(p, r), &s, r);
			judge_page(&ps, p, s.vis_horizon, u == 0, u < 3, r);
		}
		ids = page_list(n, nbase, r);
		case_begin("%zu pages, a quarter all-visible, the others' tuples judged by their hint bits "
				   "against horizon %u: the visible rows, a page with a tuple they do not tell bad (%s)",
				   n, s.vis_horizon, desc);
		check_extract(e, &s, &ps, 0, ps.base, ids, n, 0);
		case_end();
		free(ids);
		pageset_free(&ps);
	}
}

/*
 * Call gh_extract_pages with one thing wrong: it must return GH_ERR_INVALID
 * with its own message (another function's message is set first, so a
 * stale one cannot pass).
 */
static void
expect_invalid(gh_engine *e, const gh_pagespec *s, const void *base, const uint32_t *ids,
			   size_t n, gh_pagerows *out, const char *what)
{
	gh_status	st;

	if (gh_register_host(e, NULL, 0) != GH_ERR_INVALID ||
		strncmp(gh_last_error(e), "gh_register_host", 16) != 0)
	{
		case_fail("gh_register_host(NULL, 0) did not fail with its message (\"%s\")",
				  gh_last_error(e));
		return;
	}
	st = gh_extract_pages(e, s, base, ids, n, out);
	if (st != GH_ERR_INVALID)
		case_fail("gh_extract_pages with %s returned %s, want GH_ERR_INVALID", what,
				  gh_status_name(st));
	else if (strncmp(gh_last_error(e), "gh_extract_pages", 16) != 0)
		case_fail("gh_extract_pages with %s left the message \"%s\"", what, gh_last_error(e));
}

/* Case 3: invalid arguments. */
static void
invalid_argument_cases(gh_engine *e, rng *r)
{
	gh_pagespec good,
				all_out,
				s;
	pageset		ps;
	uint32_t	ids[3] = {1, 0, 1};
	gh_pagerows out;
	uint64_t   *values1;
	uint8_t    *nulls0;
	uint32_t   *first;
	uint8_t    *bad;
	char		what[128];

	/* int8 (output 0), int4, int2 (output 1), a 16-byte attribute */
	memset(&good, 0, sizeof(good));
	good.page_size = PG_PAGE;
	good.max_tuples = PG_MAX_TUPLES;
	good.natts = 4;
	good.nout = 2;
	good.attlen[0] = 8, good.attalign[0] = 8, good.out_of[0] = 0;
	good.attlen[1] = 4, good.attalign[1] = 4, good.out_of[1] = -1;
	good.attlen[2] = 2, good.attalign[2] = 2, good.out_of[2] = 1;
	good.attlen[3] = 16, good.attalign[3] = 8, good.out_of[3] = -1;
	pageset_init(&ps, 2, NULL);
	build_page(&ps, 0, PAGE_FULL, &good, r);
	build_page(&ps, 1, PAGE_SOME, &good, r);
	/* arrays for every output column: nout alone must say how many there are */
	all_out = good;
	all_out.nout = GH_PAGE_MAX_OUT;
	rows_init(&out, &all_out, 3, 3 * PG_MAX_TUPLES);

	case_begin("gh_extract_pages rejects a NULL engine, spec or out, NULL base or pages, first, bad or an output array");
	if (gh_extract_pages(NULL, &good, ps.base, ids, 3, &out) != GH_ERR_INVALID)
		case_fail("gh_extract_pages(NULL engine) is not GH_ERR_INVALID");
	expect_invalid(e, NULL, ps.base, ids, 3, &out, "a NULL spec");
	expect_invalid(e, &good, ps.base, ids, 3, NULL, "a NULL out");
	expect_invalid(e, &good, NULL, ids, 3, &out, "a NULL base");
	expect_invalid(e, &good, ps.base, NULL, 3, &out, "NULL pages");
	first = out.first;
	out.first = NULL;
	expect_invalid(e, &good, ps.base, ids, 3, &out, "a NULL first");
	out.first = first;
	bad = out.bad;
	out.bad = NULL;
	expect_invalid(e, &good, ps.base, ids, 3, &out, "a NULL bad");
	out.bad = bad;
	values1 = out.values[1];
	out.values[1] = NULL;
	expect_invalid(e, &good, ps.base, ids, 3, &out, "a NULL values[1]");
	out.values[1] = values1;
	nulls0 = out.nulls[0];
	out.nulls[0] = NULL;
	expect_invalid(e, &good, ps.base, ids, 3, &out, "a NULL nulls[0]");
	out.nulls[0] = nulls0;
	case_end();

	case_begin("gh_extract_pages rejects a base not 16-byte aligned");
	expect_invalid(e, &good, ps.base + 8, ids, 3, &out, "base + 8");
	expect_invalid(e, &good, ps.base + 1, ids, 3, &out, "base + 1");
	case_end();

	case_begin("gh_extract_pages rejects out->cap below npages * max_tuples");
	out.cap = 3 * PG_MAX_TUPLES - 1;
	expect_invalid(e, &good, ps.base, ids, 3, &out, "cap 3 * 291 - 1");
	out.cap = 0;
	expect_invalid(e, &good, ps.base, ids, 1, &out, "cap 0");
	out.cap = 3 * PG_MAX_TUPLES;
	case_end();

	case_begin("gh_extract_pages rejects output columns that do not match nout");
	s = good;
	s.nout = 3;
	expect_invalid(e, &s, ps.base, ids, 3, &out, "nout 3, 2 outputs named");
	s = good;
	s.nout = 1;
	expect_invalid(e, &s, ps.base, ids, 3, &out, "nout 1, outputs 0 and 1 named");
	s = good;
	s.out_of[2] = 0;
	s.out_of[1] = 1;
	expect_invalid(e, &s, ps.base, ids, 3, &out, "attributes 1 and 3 both output 0, 3 outputs named");
	s = good;
	s.out_of[1] = 0;
	s.out_of[2] = -1;
	expect_invalid(e, &s, ps.base, ids, 3, &out,
				   "attributes 1 and 2 both output 0, output 1 never named, nout 2");
	s = good;
	s.out_of[1] = -2;
	expect_invalid(e, &s, ps.base, ids, 3, &out, "out_of -2");
	s = good;
	s.nout = 0;
	s.out_of[0] = s.out_of[2] = -1;
	expect_invalid(e, &s, ps.base, ids, 3, &out, "no output");
	s = good;
	s.nout = GH_PAGE_MAX_OUT + 1;
	expect_invalid(e, &s, ps.base, ids, 3, &out, "nout 17");
	case_end();

	case_begin("gh_extract_pages rejects attributes neither of fixed width nor varlenas, outputs not 1, 2, 4 or 8 bytes wide nor varlenas, bad alignments and attribute counts");
	for (int k = 0; k < 12; k++)
	{
		s = good;
		switch (k)
		{
			case 0:
				s.attlen[1] = 0;
				snprintf(what, sizeof(what), "attlen 0");
				break;
			case 1:
				s.attlen[1] = -3;
				snprintf(what, sizeof(what), "attlen -3");
				break;
			case 2:
				s.attlen[3] = -2;
				snprintf(what, sizeof(what), "attlen -2 (cstring)");
				break;
			case 3:
				s.attlen[0] = 3;
				s.attalign[0] = 1;
				snprintf(what, sizeof(what), "an output of attlen 3");
				break;
			case 4:
				s.attlen[2] = 6;
				snprintf(what, sizeof(what), "an output of attlen 6");
				break;
			case 5:
				s.attlen[0] = 16;
				snprintf(what, sizeof(what), "an output of attlen 16");
				break;
			case 6:
				s.attalign[1] = 3;
				snprintf(what, sizeof(what), "attalign 3");
				break;
			case 7:
				s.attalign[3] = 0;
				snprintf(what, sizeof(what), "attalign 0");
				break;
			case 8:
				s.attalign[3] = 16;
				snprintf(what, sizeof(what), "attalign 16");
				break;
			case 9:
				s.natts = 0;
				s.nout = 0;
				snprintf(what, sizeof(what), "natts 0");
				break;
			case 10:
				s.natts = GH_PAGE_MAX_ATTS + 1;
				for (int a = 4; a < GH_PAGE_MAX_ATTS; a++)
					s.attlen[a] = 4, s.attalign[a] = 4, s.out_of[a] = -1;
				snprintf(what, sizeof(what), "natts 65");
				break;
			default:
				s.natts = -1;
				snprintf(what, sizeof(what), "natts -1");
				break;
		}
		expect_invalid(e, &s, ps.base, ids, 3, &out, what);
	}
	case_end();

	case_begin("gh_extract_pages rejects page sizes not a multiple of 16 or too large, and bad max_tuples");
	/* page 0 only, or none: a page size let through must not read past the pages */
	s = good;
	s.page_size = PG_PAGE + 8;
	expect_invalid(e, &s, ps.base, ids + 1, 1, &out, "page_size 8200");
	s.page_size = PG_PAGE - 4;
	expect_invalid(e, &s, ps.base, ids + 1, 1, &out, "page_size 8188");
	s.page_size = 0;
	expect_invalid(e, &s, ps.base, ids + 1, 1, &out, "page_size 0");
	s.page_size = 65536;
	expect_invalid(e, &s, ps.base, ids, 0, &out, "page_size 65536 (no pages)");
	s = good;
	s.max_tuples = 0;
	expect_invalid(e, &s, ps.base, ids, 3, &out, "max_tuples 0");
	/* no pages, or the room check would reject it */
	s.max_tuples = PG_PAGE / 4 + 1;
	expect_invalid(e, &s, ps.base, ids, 0, &out, "max_tuples 2049 (no pages)");
	case_end();

	case_begin("gh_register_host rejects a NULL engine, a NULL base and 0 bytes");
	if (gh_register_host(NULL, ps.base, PG_PAGE) != GH_ERR_INVALID)
		case_fail("gh_register_host(NULL engine) is not GH_ERR_INVALID");
	if (gh_register_host(e, NULL, PG_PAGE) != GH_ERR_INVALID)
		case_fail("gh_register_host(NULL base) is not GH_ERR_INVALID");
	if (gh_register_host(e, ps.base, 0) != GH_ERR_INVALID)
		case_fail("gh_register_host(0 bytes) is not GH_ERR_INVALID");
	else if (strncmp(gh_last_error(e), "gh_register_host", 16) != 0)
		case_fail("message \"%s\"", gh_last_error(e));
	if (gh_host_registered(NULL, PG_PAGE))
		case_fail("a NULL range is registered");
	case_end();

	case_begin("no pages (NULL base and pages) give no rows; the engine reads pages after the rejected calls");
	out.first[0] = 77;
	out.nrows = 77;
	if (check_ok(gh_extract_pages(e, &good, NULL, NULL, 0, &out), e, "gh_extract_pages(0 pages)"))
	{
		if (out.nrows != 0 || out.first[0] != 0)
			case_fail("%zu rows, first[0] %u", out.nrows, out.first[0]);
	}
	rows_free(&out);
	check_extract(e, &good, &ps, 0, ps.base, ids, 3, 0);
	case_end();
	pageset_free(&ps);
}

/* An interrupt makes gh_extract_pages return GH_ERR_CANCELLED. */
static void
cancel_cases(rng *r)
{
	interrupter in = {false, 0, 0};
	gh_engine  *e;
	gh_pagespec s;
	pageset		ps;
	gh_pagerows out;
	uint32_t	ids[1] = {0};
	gh_status	st;

	case_begin("an interrupt stops gh_extract_pages with GH_ERR_CANCELLED; the engine works afterwards");
	e = open_interruptible(&in, 0, 1);
	if (e != NULL)
	{
		random_schema(&s, 0, r);
		pageset_init(&ps, 1, NULL);
		build_page(&ps, 0, PAGE_FULL, &s, r);
		rows_init(&out, &s, 1, PG_MAX_TUPLES);
		in.armed = true;
		in.polls_left = 0;
		st = gh_extract_pages(e, &s, ps.base, ids, 1, &out);
		if (st != GH_ERR_CANCELLED)
			case_fail("gh_extract_pages returned %s, want GH_ERR_CANCELLED", gh_status_name(st));
		in.armed = false;
		rows_free(&out);
		check_extract(e, &s, &ps, 0, ps.base, ids, 1, 0);
		pageset_free(&ps);
		gh_close(e);
	}
	case_end();
}

/* The range this process registers with the CUDA backend: kept for good. */
#define REGISTERED_PAGES REGISTERED_PAGE_COUNT
static uint8_t *registered_alloc;
static uint8_t *registered_base;

uint8_t *
registered_pages(size_t *npages)
{
	size_t		bytes = (size_t) REGISTERED_PAGES * PG_PAGE;

	if (registered_base == NULL || !gh_host_registered(registered_base, bytes))
		return NULL;
	*npages = REGISTERED_PAGES;
	return registered_base;
}

/* Case 4: gh_register_host and reading registered pages. */
static void
register_host_cases(gh_engine *e, rng *r)
{
	size_t		bytes = (size_t) REGISTERED_PAGES * PG_PAGE;
	size_t		n = 150;
	gh_pagespec s;
	char		desc[256];
	pageset		ps;
	uint8_t    *copy;
	uint32_t   *ids,
			   *inner_ids;
	gh_status	st;

	random_schema(&s, 0, r);
	schema_desc(&s, desc, sizeof(desc));

	if (run.backend != GH_BACKEND_CUDA)
	{
		uint8_t    *other = aligned_alloc(16, 4 * PG_PAGE);

		pageset_init(&ps, 16, NULL);
		case_begin("gh_register_host is a no-op on the %s backend: GH_OK, nothing registered, another range GH_OK too",
				   run.backend_name);
		if (check_ok(gh_register_host(e, ps.base, 16 * PG_PAGE), e, "gh_register_host"))
		{
			if (gh_host_registered(ps.base, 16 * PG_PAGE))
				case_fail("gh_host_registered is true after a no-op registration");
			if (gh_host_registered(ps.base + PG_PAGE, PG_PAGE))
				case_fail("gh_host_registered is true for an inner range");
		}
		if (check_ok(gh_register_host(e, other, 4 * PG_PAGE), e, "gh_register_host (a second range)") &&
			gh_host_registered(other, 4 * PG_PAGE))
			case_fail("gh_host_registered is true for the second range");
		case_end();

		case_begin("pages passed to gh_register_host read as the oracle says (%s)", desc);
		for (size_t p = 0; p < 16; p++)
			build_page(&ps, p, kind_of(p, r), &s, r);
		ids = page_list(24, 16, r);
		check_extract(e, &s, &ps, 0, ps.base, ids, 24, 0);
		case_end();
		free(ids);
		free(other);
		pageset_free(&ps);
		return;
	}

	/* CUDA: one range for the life of the process, 16-byte but not page aligned */
	if (registered_alloc == NULL)
	{
		registered_alloc = aligned_alloc(4096, bytes + 4096);
		if (registered_alloc == NULL)
		{
			printf("engine_test: out of memory allocating %zu bytes\n", bytes + 4096);
			exit(2);
		}
		registered_base = registered_alloc + 16;
	}
	pageset_init(&ps, REGISTERED_PAGES, registered_base);
	for (size_t p = 0; p < REGISTERED_PAGES; p++)
	{
		if (p % 8 == 5)
			build_bad_page(&ps, p, (corruption) (p / 8 % NBAD), &s, r);
		else
			build_page(&ps, p, kind_of(p, r), &s, r);
	}

	case_begin("gh_register_host registers a 16-byte aligned range of %d pages; gh_host_registered says which ranges are inside it",
			   REGISTERED_PAGES);
	if (check_ok(gh_register_host(e, registered_base, bytes), e, "gh_register_host"))
	{
		if (!gh_host_registered(registered_base, bytes))
			case_fail("the registered range is not registered");
		if (!gh_host_registered(registered_base + PG_PAGE, 3 * PG_PAGE))
			case_fail("an inner range is not registered");
		if (!gh_host_registered(registered_base + bytes - 1, 1))
			case_fail("the last byte is not registered");
		if (gh_host_registered(registered_base, bytes + 1))
			case_fail("a range one byte longer is registered");
		if (gh_host_registered(registered_base - 16, 32))
			case_fail("a range starting before it is registered");
		if (gh_host_registered(registered_base + bytes, PG_PAGE))
			case_fail("the range just past it is registered");
	}
	case_end();

	case_begin("gh_register_host of the same or an inner range again is GH_OK; of another range GH_ERR_INVALID");
	if (!gh_host_registered(registered_base, bytes))
		case_fail("nothing registered to register again");
	else if (check_ok(gh_register_host(e, registered_base, bytes), e, "gh_register_host (the same range)"))
		check_ok(gh_register_host(e, registered_base + 2 * PG_PAGE, 5 * PG_PAGE), e,
				 "gh_register_host (an inner range)");
	if (gh_host_registered(registered_base, bytes))
	{
		uint8_t    *other = aligned_alloc(16, 4 * PG_PAGE);

		st = gh_register_host(e, other, 4 * PG_PAGE);
		if (st != GH_ERR_INVALID)
			case_fail("gh_register_host of another range returned %s", gh_status_name(st));
		else if (strncmp(gh_last_error(e), "gh_register_host", 16) != 0)
			case_fail("message \"%s\"", gh_last_error(e));
		if (gh_host_registered(other, 4 * PG_PAGE))
			case_fail("the other range is registered");
		free(other);
		/* 16 bytes past its end (still inside the allocation) */
		st = gh_register_host(e, registered_base + 16, bytes);
		if (st != GH_ERR_INVALID)
			case_fail("gh_register_host of a range reaching past the registered one returned %s",
					  gh_status_name(st));
		if (!gh_host_registered(registered_base, bytes))
			case_fail("the first range is no longer registered");
	}
	case_end();

	ids = page_list(n, REGISTERED_PAGES, r);
	inner_ids = xmalloc(n * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		inner_ids[i] = ids[i] % (REGISTERED_PAGES - 8);
	copy = aligned_alloc(16, bytes);
	memcpy(copy, registered_base, bytes);

	case_begin("%zu pages read in place from the registered range (some malformed) give the oracle's rows (%s)",
			   n, desc);
	check_extract(e, &s, &ps, 0, registered_base, ids, n, 0);
	case_end();

	case_begin("%zu pages from inside the registered range, base 8 pages in, give the oracle's rows", n);
	check_extract(e, &s, &ps, 8, registered_base + 8 * PG_PAGE, inner_ids, n, 0);
	case_end();

	case_begin("the same %zu pages copied to unregistered memory give the same rows", n);
	if (gh_host_registered(copy, bytes))
		case_fail("the copy is registered");
	check_extract(e, &s, &ps, 0, copy, ids, n, 0);
	case_end();

	free(copy);
	free(ids);
	free(inner_ids);
	pageset_free(&ps);
}

void
run_pages_cases(void)
{
	test_config cfg = {1, 0, 0};
	gh_engine  *e;
	size_t		fresh;
	rng			r = {run.seed ^ UINT64_C(0x7061676573)};

	case_begin("open an engine for heap page extraction");
	e = open_engine(&cfg);
	case_end();
	if (e == NULL)
		return;
	fresh = gh_engine_device_bytes(e);

	random_page_cases(e, &r);
	malformed_page_cases(e, &r);
	visibility_page_cases(e, &r);
	invalid_argument_cases(e, &r);
	register_host_cases(e, &r);

	case_begin("device memory is back to a fresh engine's after extracting pages");
	check_device_bytes(e, fresh, "after extracting pages");
	case_end();
	gh_close(e);

	cancel_cases(&r);
}
