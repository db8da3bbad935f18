/*-------------------------------------------------------------------------
 *
 * cases_star.c
 *	  Engine unit tests of the star pipeline (gh_star_*, gh_dim_*): hand-
 *	  built programs run over heap pages of a fact table with varlenas,
 *	  against star_oracle.c.
 *
 * Each scenario is a program over one fact table, rows of values drawn for
 * what the program exercises, and a way to lay them out in pages.  The
 * rows are written into heap pages as PostgreSQL writes them (with
 * cases_pages.c's tuple writer: varlenas of 1- and 4-byte headers,
 * compressed and external ones, numerics in the short and the long
 * format, NULLs, tuples with fewer attributes than the table, line
 * pointers of every kind); some pages are made malformed (pd_lower, a line
 * pointer past the page, t_hoff, lp_len short of the data, varlena headers
 * claiming more than the tuple, a bad TOAST tag, all zeros).  The page
 * list is read in batches (shuffled, with repeats), each batch kept with a
 * drop mask (none, all kept, random, all dropped), rows added with
 * gh_star_add between them; then:
 *
 *	- every page's status must be the oracle's: BAD for the malformed,
 *	  ESCAPE where a row escapes, the data error of the first row in line
 *	  pointer order that raises one, OK
 *	- gh_star_result must give the oracle's groups, compared group by group
 *	  (oracle.c's compare_groups) over the rows the oracle keeps of the OK
 *	  pages not dropped and the rows added; gh_star_rows their number
 *	- most programs key each row by its id, so that every output of every
 *	  kept row is checked exactly (its sum, min and max over one row)
 *
 * The scenarios: loads of every column type; integer operations of each
 * width against extremes (overflow, MIN / -1, division and modulo by
 * zero); NULLs, IS [NOT] NULL, NOT, AND and OR (three-valued, short-
 * circuited over a division by zero), QUAL, JNULL / JNOTNULL, CASE-shaped
 * jumps; floats (overflow, underflow, division by zero, NaN in
 * comparisons, float4 rounding); numerics (loads at several static
 * scales, escapes of NaN, infinities and values too wide, add, subtract,
 * multiply, negate, scale, compare, their limbs); text (equality, bpchar,
 * packing, escapes); dates against timestamps; packed and mixed group
 * keys (one narrowed until groups collide); probes of three dimensions
 * (absent keys, EMPTY_KEY, NULL keys, NULL payloads, high words); a page
 * mix of rare errors and escapes; tens of thousands of groups (a table of
 * groups that grows within a keep); and the limbs of numeric sums rebuilt
 * into the exact sum.
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "star_test.h"

#define PAGE		8192
#define LP(off, flags, len) ((uint32_t) (off) | ((uint32_t) (flags) << 15) | ((uint32_t) (len) << 17))
#define ALIGN8(x)	(((size_t) (x) + 7) & ~(size_t) 7)
#define TUP_ROOM	1024
#define MAX_TUPLES	291			/* MaxHeapTuplesPerPage of 8 kB pages */
#define EMPTY_KEY	(~UINT64_C(0))	/* the key that marks a free slot in the engine's tables */

/* ---- the fact table ---- */

const stype FACT_TYPES[NATTS] = {
	ST_TEXT, ST_INT4, ST_NUMERIC, ST_INT2, ST_TEXT, ST_BOOL, ST_INT4, ST_UUID, ST_INT8,
	ST_FLOAT4, ST_FLOAT8, ST_BPCHAR, ST_DATE, ST_TIMESTAMP, ST_OID, ST_NUMERIC, ST_CHAR,
	ST_INT8, ST_NUMERIC
};
const int8_t FACT_OUT[NATTS] = {
	-1, C_ID, C_N1, C_I2, C_T, C_FLAG, C_I4, -1, C_I8, C_F4, C_F8, C_BP, C_DATE, C_TS, C_OID,
	C_N2, C_CHAR, C_K, -1
};

/* What the rows of a scenario look like. */
typedef struct profile
{
	int			null_pct;		/* NULLs in every column but the id */
	int			extreme_pct;	/* integers, floats and dates at their extremes */
	int			long_text_pct;	/* text of 8 to 150 bytes (TPACK escapes) */
	int			toast_pct;		/* varlenas compressed or external (their loads escape) */
	int			wide_num_pct;	/* numerics NaN, infinite, or too wide or fine for scale 4 */
	int			short_tuple_pct;	/* tuples with fewer attributes than the table */
	int			rows_min;		/* rows per page */
	int			rows_max;
	int			bad_pct;		/* pages made malformed */
	int			junk_pct;		/* line pointers not LP_NORMAL */
	uint32_t	vis_horizon;	/* 0, or tuples' hint bits judged against this snapshot xmin */
} profile;

static int64_t
pick_int(rng *r, int bits, int extreme_pct)
{
	int64_t		lo = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
	int64_t		hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;

	if ((int) rng_below(r, 100) < extreme_pct)
	{
		const int64_t pool[] = {lo, hi, lo + 1, hi - 1, -1, 0, 1, 2, lo / 2, hi / 2 + 1};

		return pool[rng_below(r, sizeof(pool) / sizeof(pool[0]))];
	}
	if (rng_below(r, 2))
		return (int64_t) rng_below(r, 201) - 100;
	return bits == 64 ? (int64_t) rng_next(r) : lo + (int64_t) rng_below(r, (uint64_t) (hi - lo) + 1);
}

static double
pick_double(rng *r, int extreme_pct)
{
	if ((int) rng_below(r, 100) < extreme_pct)
	{
		const double pool[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, DBL_MAX, -DBL_MAX, DBL_MIN,
			1e-300, -1e-300, 1e300, 4.9e-324, 1.0, -1.0, 0.5, 2.5, -2.5, -0.5, 32767.5, -32768.5,
			2147483647.5, -2147483648.5, 9223372036854775808.0, -9223372036854775808.0};

		return pool[rng_below(r, sizeof(pool) / sizeof(pool[0]))];
	}
	return (rng_unit(r) - 0.5) * pow(10.0, (double) rng_below(r, 12) - 4.0);
}

static float
pick_float(rng *r, int extreme_pct)
{
	if ((int) rng_below(r, 100) < extreme_pct)
	{
		const float pool[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN,
			1e-30f, -1e-30f, 1e30f, 1.4e-45f, 1.0f, 3.0f, 0.1f, 2.5f, -0.5f, 32768.0f, -32768.0f,
			2147483648.0f};

		return pool[rng_below(r, sizeof(pool) / sizeof(pool[0]))];
	}
	return (float) ((rng_unit(r) - 0.5) * pow(10.0, (double) rng_below(r, 8) - 3.0));
}

static void
pick_text(rng *r, const profile *pf, bool bpchar, scell *c)
{
	static const char alphabet[] = "ab c";
	int			len = (int) rng_below(r, 6);

	if ((int) rng_below(r, 100) < pf->long_text_pct)
		len = rng_below(r, 2) ? 8 + (int) rng_below(r, 8) : 127 + (int) rng_below(r, 24);
	for (int i = 0; i < len; i++)
		c->text[i] = (uint8_t) alphabet[rng_below(r, 4)];
	if (bpchar)
		while (len < 6)
			c->text[len++] = ' ';	/* bpchar(6): stored padded */
	c->tlen = (uint16_t) len;
}

static void
pick_numeric(rng *r, const profile *pf, snum *n)
{
	int			digits = 1 + (int) rng_below(r, 14);

	memset(n, 0, sizeof(*n));
	n->dscale = (int) rng_below(r, 4);
	n->long_format = rng_below(r, 4) == 0;
	if ((int) rng_below(r, 100) < pf->wide_num_pct)
	{
		switch (rng_below(r, 5))
		{
			case 0:
				n->special = (uint8_t) (1 + rng_below(r, 3));	/* NaN, +-Infinity */
				return;
			case 1:
				digits = 35 + (int) rng_below(r, 4);	/* too wide at scale 4 */
				break;
			case 2:
				n->dscale = 5 + (int) rng_below(r, 60);	/* finer than scale 4 */
				break;
			default:
				digits = 20 + (int) rng_below(r, 14);	/* wide: products overflow */
				break;
		}
	}
	n->mag = 0;
	for (int i = 0; i < digits; i++)
		n->mag = n->mag * 10 + rng_below(r, 10);
	if (rng_below(r, 8) == 0)
		n->mag = 0;
	n->neg = n->mag != 0 && rng_below(r, 2);
}

/* One row of the fact table: id, the others drawn as pf says. */
static void
make_row(srow *row, int id, const profile *pf, rng *r)
{
	memset(row, 0, sizeof(*row));
	row->tnatts = NATTS;
	if ((int) rng_below(r, 100) < pf->short_tuple_pct)
		row->tnatts = A_ID + 1 + (int) rng_below(r, NATTS - A_ID - 1);
	for (int a = 0; a < NATTS; a++)
	{
		scell	   *c = &row->cells[a];
		stype		t = FACT_TYPES[a];

		c->null = a != A_ID && (int) rng_below(r, 100) < pf->null_pct;
		if (t == ST_TEXT || t == ST_BPCHAR || t == ST_NUMERIC)
		{
			c->var = rng_below(r, 3) ? SV_SHORT : SV_LONG;
			if ((int) rng_below(r, 100) < pf->toast_pct)
				c->var = rng_below(r, 2) ? SV_COMPRESSED : SV_EXTERNAL;
		}
		switch (t)
		{
			case ST_BOOL:
				c->raw = rng_below(r, 2);
				break;
			case ST_CHAR:
			case ST_UUID:
				c->raw = rng_next(r);
				break;
			case ST_INT2:
				c->raw = (uint64_t) pick_int(r, 16, pf->extreme_pct);
				break;
			case ST_INT4:
				c->raw = (uint64_t) pick_int(r, 32, pf->extreme_pct);
				break;
			case ST_INT8:
				c->raw = (uint64_t) pick_int(r, 64, pf->extreme_pct);
				break;
			case ST_OID:
				c->raw = (uint32_t) rng_next(r);
				break;
			case ST_FLOAT4:
				{
					float		f = pick_float(r, pf->extreme_pct);
					uint32_t	bits;

					memcpy(&bits, &f, 4);
					c->raw = bits;
					break;
				}
			case ST_FLOAT8:
				{
					double		d = pick_double(r, pf->extreme_pct);

					memcpy(&c->raw, &d, 8);
					break;
				}
			case ST_DATE:
				{
					const int64_t pool[] = {INT32_MIN, INT32_MAX, 106751982, 106751983,
						106751984, -730119, 0, 1};

					c->raw = (uint64_t) ((int) rng_below(r, 100) < pf->extreme_pct ?
										 pool[rng_below(r, 8)] :
										 (int64_t) rng_below(r, 20000) - 10000);
					break;
				}
			case ST_TIMESTAMP:
				{
					const int64_t pool[] = {INT64_MIN, INT64_MAX, INT64_C(9223371331200000000) - 1,
						0, INT64_C(86400000000), -INT64_C(86400000000) * 3};

					if ((int) rng_below(r, 100) < pf->extreme_pct)
						c->raw = (uint64_t) pool[rng_below(r, 6)];
					else
						c->raw = (uint64_t) (((int64_t) rng_below(r, 20000) - 10000) *
											 INT64_C(86400000000) +
											 (rng_below(r, 2) ? (int64_t) rng_below(r, 1000) - 500 : 0));
					break;
				}
			case ST_NUMERIC:
				pick_numeric(r, pf, &c->num);
				break;
			case ST_TEXT:
			case ST_BPCHAR:
				pick_text(r, pf, t == ST_BPCHAR, c);
				break;
		}
	}
	row->cells[A_ID].raw = (uint64_t) (uint32_t) id;
	/* dimension keys: mostly small, some -1 (EMPTY_KEY as a key) */
	if (rng_below(r, 8) == 0)
		row->cells[A_K].raw = EMPTY_KEY;
	else if (rng_below(r, 8) != 0)
		row->cells[A_K].raw = rng_below(r, 60);
}

/* ---- pages ---- */

typedef enum spoil
{
	SPOIL_LOWER,				/* pd_lower between line pointers */
	SPOIL_EXTENT,				/* a tuple running past the page */
	SPOIL_HOFF,					/* a t_hoff inside the tuple header */
	SPOIL_SHORT,				/* lp_len short of a column */
	SPOIL_VARLENA,				/* a varlena header claiming more than the tuple */
	SPOIL_TOAST_TAG,			/* a TOAST pointer of a tag never on disk */
	SPOIL_VARLENA_TINY,			/* a 4-byte header of a size below 4 */
	SPOIL_ZERO,					/* all zeros, as a page just added */
	NSPOIL
} spoil;

/* Pages of rows: page p holds rows first[p] .. first[p] + nrows[p] - 1. */
typedef struct spages
{
	size_t		npages;
	uint8_t    *base;
	size_t	   *first;
	int		   *nrows;
	uint8_t    *bad;			/* made malformed */
	int8_t	   *vis;			/* of each row: visible 1, invisible 0, undecided -1 */
} spages;


/* The fact table (set up by run_star_cases). */
stable		fact;

/* A tuple placed on a page: where its attributes are, for spoiling the page. */
typedef struct placed
{
	uint32_t	lpat;			/* its line pointer's offset in the page */
	uint32_t	off;
	uint32_t	len;
	size_t		pos[NATTS];		/* each stored attribute's offset in the tuple */
	size_t		alen[NATTS];	/* and its stored length (0: NULL or absent) */
} placed;


/*
 * Write rows[first ..] into page p of ps, as many of want as fit, among
 * line pointers that are not LP_NORMAL; returns how many rows it holds.
 */
static int
write_page(spages *ps, size_t p, const srow *rows, size_t first, int want, const profile *pf,
		   rng *r, placed *pl)
{
	uint8_t    *page = ps->base + p * PAGE;
	uint32_t	lower = 24,
				upper = PAGE;
	int			n = 0;
	uint8_t		tup[TUP_ROOM];
	uint8_t		images[NATTS][STEXT_MAX + 64];

	fill_random(page, PAGE, r);
	while (n < want && lower + 4 <= upper)
	{
		uint32_t	lp;

		if ((int) rng_below(r, 100) < pf->junk_pct)
		{
			uint64_t	u = rng_below(r, 3);

			lp = u == 0 ? LP(0, 0, 0) : u == 1 ? LP(8 * (3 + rng_below(r, 900)), 3, 40) :
				LP(1 + rng_below(r, 50), 2, 0);
		}
		else
		{
			const srow *row = &rows[first + n];
			tuple_att	atts[NATTS];
			size_t		len;

			memset(pl[n].alen, 0, sizeof(pl[n].alen));
			for (int a = 0; a < row->tnatts; a++)
			{
				atts[a].null = row->cells[a].null;
				if (atts[a].null)
					continue;
				atts[a].len = scell_image(FACT_TYPES[a], &row->cells[a], images[a]);
				atts[a].bytes = images[a];
				pl[n].alen[a] = atts[a].len;
			}
			len = write_tuple(&fact.spec, row->tnatts, atts, tup, TUP_ROOM, r, pl[n].pos);
			if (lower + 4 + ALIGN8(len) > upper)
				break;
			upper -= (uint32_t) ALIGN8(len);
			ps->vis[first + n] = pf->vis_horizon ? (int8_t) gen_vis_header(tup, pf->vis_horizon, r) : 1;
			memcpy(page + upper, tup, len);
			lp = LP(upper, 1, len);
			pl[n].lpat = lower;
			pl[n].off = upper;
			pl[n].len = (uint32_t) len;
			n++;
		}
		put32(page + lower, lp);
		lower += 4;
	}
	/* pd_lower, pd_upper, pd_special (none), pd_pagesize_version; pd_flags */
	put32(page + 12, lower | upper << 16);
	put32(page + 16, PAGE | (PAGE | 4) << 16);
	put16(page + 10, (uint32_t) rng_below(r, 8));
	return n;
}

/* A placed tuple with a stored varlena attribute (*att) of room >= min_room; -1 if none. */
static int
pick_varlena(const placed *pl, int n, size_t min_room, rng *r, int *att)
{
	int			start = n > 0 ? (int) rng_below(r, (uint64_t) n) : 0;

	for (int k = 0; k < n; k++)
	{
		int			i = (start + k) % n;

		for (int a = 0; a < NATTS; a++)
			if (pl[i].alen[a] > 0 && fact.spec.attlen[a] == -1 &&
				pl[i].len - pl[i].pos[a] >= min_room)
			{
				*att = a;
				return i;
			}
	}
	return -1;
}

/* Make a written page malformed in way w: false if it has no tuple for it. */
static bool
spoil_page(uint8_t *page, spoil w, const placed *pl, int n, rng *r)
{
	int			i = n > 0 ? (int) rng_below(r, (uint64_t) n) : -1;
	int			a = 0;
	uint8_t    *at;

	switch (w)
	{
		case SPOIL_LOWER:
			put16(page + 12, get16(page + 12) + 2);
			return true;
		case SPOIL_ZERO:
			memset(page, 0, PAGE);
			return true;
		case SPOIL_EXTENT:
			if (i < 0)
				return false;
			put32(page + pl[i].lpat, LP(pl[i].off, 1, PAGE - pl[i].off + 8));
			return true;
		case SPOIL_HOFF:
			if (i < 0)
				return false;
			page[pl[i].off + 22] = 16;
			return true;
		case SPOIL_SHORT:
			/* cut the tuple inside an attribute of at least 2 bytes */
			for (int k = 0; k < n; k++, i = (i + 1) % n)
				for (a = NATTS - 1; a >= 0; a--)
					if (pl[i].alen[a] >= 2)
					{
						put32(page + pl[i].lpat, LP(pl[i].off, 1, pl[i].pos[a] + 1));
						return true;
					}
			return false;
		case SPOIL_VARLENA:
			if ((i = pick_varlena(pl, n, 1, r, &a)) < 0)
				return false;
			at = page + pl[i].off + pl[i].pos[a];
			if (pl[i].len - pl[i].pos[a] < 127)
				at[0] = 0xFF;	/* a 1-byte header of 127 bytes */
			else
				put32(at, 0xFFFFFFFC);	/* a 4-byte header of 2^30 - 1 bytes */
			return true;
		case SPOIL_TOAST_TAG:
			if ((i = pick_varlena(pl, n, 2, r, &a)) < 0)
				return false;
			at = page + pl[i].off + pl[i].pos[a];
			at[0] = 0x01;
			at[1] = 7;			/* not VARTAG_ONDISK */
			return true;
		case SPOIL_VARLENA_TINY:
			if ((i = pick_varlena(pl, n, 4, r, &a)) < 0)
				return false;
			put32(page + pl[i].off + pl[i].pos[a], 2 << 2);
			return true;
		default:
			return false;
	}
}

/* Lay rows out in pages as pf says; some malformed. */
static void
spages_build(spages *ps, const srow *rows, size_t nrows, const profile *pf, rng *r)
{
	size_t		most = 2 * nrows + 16;
	size_t		next = 0;
	placed	   *pl = xmalloc(MAX_TUPLES * sizeof(placed));

	ps->base = aligned_alloc(16, most * PAGE);
	ps->first = xcalloc(most, sizeof(size_t));
	ps->nrows = xcalloc(most, sizeof(int));
	ps->bad = xcalloc(most, 1);
	ps->vis = xcalloc(nrows + 1, 1);
	ps->npages = 0;
	if (ps->base == NULL)
	{
		printf("engine_test: out of memory for %zu pages\n", most);
		exit(2);
	}
	while (next < nrows || ps->npages < 2)
	{
		size_t		p = ps->npages++;
		int			want = pf->rows_min + (int) rng_below(r, (uint64_t) (pf->rows_max - pf->rows_min + 1));

		if (want == 0 && p >= nrows + 8)
			want = 1;			/* enough empty pages: the rest hold rows */
		if ((size_t) want > nrows - next)
			want = (int) (nrows - next);
		ps->first[p] = next;
		ps->nrows[p] = write_page(ps, p, rows, next, want, pf, r, pl);
		next += (size_t) ps->nrows[p];
		if ((int) rng_below(r, 100) < pf->bad_pct)
		{
			spoil		w = (spoil) rng_below(r, NSPOIL);

			if (!spoil_page(ps->base + p * PAGE, w, pl, ps->nrows[p], r))
				spoil_page(ps->base + p * PAGE, SPOIL_LOWER, pl, ps->nrows[p], r);
			ps->bad[p] = 1;
		}
	}
	free(pl);
}

uint8_t *
fact_pages(size_t nrows, rng *r, size_t *npages)
{
	profile		pf = {.null_pct = 5, .rows_min = 1, .rows_max = 40, .junk_pct = 10};
	srow	   *rows = xmalloc(nrows * sizeof(srow));
	spages		ps;

	for (size_t i = 0; i < nrows; i++)
		make_row(&rows[i], (int) i, &pf, r);
	spages_build(&ps, rows, nrows, &pf, r);
	free(rows);
	free(ps.first);
	free(ps.nrows);
	free(ps.bad);
	free(ps.vis);
	*npages = ps.npages;
	return ps.base;
}

static void
spages_free(spages *ps)
{
	free(ps->base);
	free(ps->first);
	free(ps->nrows);
	free(ps->bad);
	free(ps->vis);
}

/* ---- the scenarios' programs ---- */

/* Every column loaded as each load reads it, and output. */
static void
prog_loads(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	out_int(p, 0);
	emit(p, GH_OP_LDCOL_NUM, 1, 0, 4, C_N1);
	out_num(p, 1, 4, -1, 3, ALL_OPS);
	emit(p, GH_OP_LDCOL_INT, 2, 0, 2, C_I2);
	out_int(p, 2);
	emit(p, GH_OP_LDCOL_UINT, 2, 0, 2, C_I2);
	out_int(p, 2);
	emit(p, GH_OP_LDCOL_TEXT, 3, 0, 0, C_T);
	emit(p, GH_OP_TPACK, 4, 3, 0, 0);
	out_int(p, 4);
	emit(p, GH_OP_LDCOL_INT, 5, 0, 1, C_FLAG);
	out_int(p, 5);
	emit(p, GH_OP_LDCOL_INT, 6, 0, 4, C_I4);
	out_int(p, 6);
	emit(p, GH_OP_LDCOL_UINT, 6, 0, 4, C_I4);
	out_int(p, 6);
	emit(p, GH_OP_LDCOL_INT, 7, 0, 8, C_I8);
	out_int(p, 7);
	emit(p, GH_OP_LDCOL_F4, 8, 0, 0, C_F4);
	out_f8(p, 8);
	emit(p, GH_OP_LDCOL_F8, 9, 0, 0, C_F8);
	out_f8(p, 9);
	/* ordered images (rows of -0 and 0 reach these; prog_floats' error) */
	emit(p, GH_OP_F2ORD, 18, 9, 0, 0);
	out_int(p, 18);
	emit(p, GH_OP_F2ORD, 18, 9, 0, 1);	/* -0 folded onto 0, as for a key */
	out_int(p, 18);
	emit(p, GH_OP_F2ORD, 18, 8, 0, 0);
	out_int(p, 18);
	emit(p, GH_OP_LDCOL_TEXT, 10, 0, 0, C_BP);
	emit(p, GH_OP_TPACK, 11, 10, 0, 1);
	out_int(p, 11);
	emit(p, GH_OP_LDCOL_INT, 12, 0, 4, C_DATE);
	out_int(p, 12);
	emit(p, GH_OP_LDCOL_INT, 13, 0, 8, C_TS);
	out_int(p, 13);
	emit(p, GH_OP_LDCOL_UINT, 14, 0, 4, C_OID);
	out_int(p, 14);
	emit(p, GH_OP_LDCOL_NUM, 15, 0, 3, C_N2);
	out_num(p, 15, 3, 0, 2, ALL_OPS);
	emit(p, GH_OP_LDCOL_INT, 16, 0, 1, C_CHAR);
	out_int(p, 16);
	emit(p, GH_OP_LDCOL_UINT, 16, 0, 1, C_CHAR);
	out_int(p, 16);
	emit(p, GH_OP_LDCOL_INT, 17, 0, 8, C_K);
	out_int(p, 17);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Integer operations of random widths on columns, constants and earlier results. */
static void
prog_integers(gh_prog *p, rng *r)
{
	static const int ops[] = {GH_OP_IADD, GH_OP_ISUB, GH_OP_IMUL, GH_OP_IDIV, GH_OP_IMOD,
	GH_OP_INEG, GH_OP_ICAST};
	int			width[GH_PROG_MAX_REGS] = {0};
	int			nregs = 4;

	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_INT, 1, 0, 2, C_I2);
	emit(p, GH_OP_LDCOL_INT, 2, 0, 4, C_I4);
	emit(p, GH_OP_LDCOL_INT, 3, 0, 8, C_I8);
	width[1] = 16;
	width[2] = 32;
	width[3] = 64;
	for (int k = 0; k < 4; k++)
	{
		int			op = ops[rng_below(r, 7)];
		int			w = 16 << rng_below(r, 3);
		int			src[2];

		if (w == 48)
			w = 64;
		for (int s = 0; s < 2; s++)
		{
			int			cand[GH_PROG_MAX_REGS],
						nc = 0;

			for (int g = 1; g < nregs; g++)
				if (width[g] != 0 && (op == GH_OP_ICAST || width[g] <= w))
					cand[nc++] = g;
			if (nc > 0 && rng_below(r, 3) != 0)
				src[s] = cand[rng_below(r, (uint64_t) nc)];
			else
			{
				src[s] = 20 + s;
				ld_int(p, src[s], pick_int(r, w, 15));
			}
		}
		emit(p, op, nregs, src[0], src[1], w);
		width[nregs] = w;
		out_int(p, nregs++);
	}
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* NULLs, IS [NOT] NULL, NOT, three-valued AND / OR short-circuiting a division, QUAL. */
static void
prog_logic(gh_prog *p, rng *r)
{
	int			j1,
				j2,
				j3,
				j4,
				jn;

	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_INT, 1, 0, 4, C_I4);
	emit(p, GH_OP_LDCOL_INT, 2, 0, 2, C_I2);
	emit(p, GH_OP_LDCOL_INT, 3, 0, 1, C_FLAG);
	emit(p, GH_OP_LDCOL_INT, 4, 0, 8, C_I8);
	ld_int(p, 20, 0);
	ld_int(p, 21, 1);
	ld_int(p, 22, 5);
	emit(p, GH_OP_ISNULL, 5, 1, 0, 0);
	out_int(p, 5);
	emit(p, GH_OP_ISNOTNULL, 5, 4, 0, 0);
	out_int(p, 5);
	emit(p, GH_OP_NOT, 6, 3, 0, 0);
	out_int(p, 6);
	/* i4 > 0 AND flag AND i8 / i4 > 1: the division only where i4 > 0 or NULL */
	cmp(p, GH_OP_ICMP, 7, 1, 20, GH_CMP_GT);
	emit(p, GH_OP_BOOL, 8, 0, 0, 1);
	j1 = emit(p, GH_OP_AND, 8, 7, 0, 0);
	j2 = emit(p, GH_OP_AND, 8, 3, 0, 0);
	emit(p, GH_OP_IDIV, 9, 4, 1, 64);
	cmp(p, GH_OP_ICMP, 10, 9, 21, GH_CMP_GT);
	j3 = emit(p, GH_OP_AND, 8, 10, 0, 0);
	land(p, j1);
	land(p, j2);
	land(p, j3);
	out_int(p, 8);
	/* i2 = 0 OR i4 % i2 > 5 */
	cmp(p, GH_OP_ICMP, 11, 2, 20, GH_CMP_EQ);
	emit(p, GH_OP_BOOL, 12, 0, 0, 0);
	j1 = emit(p, GH_OP_OR, 12, 11, 0, 0);
	emit(p, GH_OP_IMOD, 13, 1, 2, 32);
	cmp(p, GH_OP_ICMP, 14, 13, 22, GH_CMP_GT);
	j2 = emit(p, GH_OP_OR, 12, 14, 0, 0);
	land(p, j1);
	land(p, j2);
	out_int(p, 12);
	/* CASE WHEN i8 IS NULL THEN -1 ELSE i8 + 1 END */
	jn = emit(p, GH_OP_JNULL, 0, 4, 0, 0);
	emit(p, GH_OP_IADD, 15, 4, 21, 64);
	j4 = emit(p, GH_OP_JMP, 0, 0, 0, 0);
	land(p, jn);
	ld_int(p, 15, -1);
	land(p, j4);
	out_int(p, 15);
	/* CASE WHEN i2 IS NOT NULL THEN -i2 END */
	emit(p, GH_OP_SETNULL, 16, 0, 0, 0);
	jn = emit(p, GH_OP_JNOTNULL, 0, 2, 0, 0);
	j4 = emit(p, GH_OP_JMP, 0, 0, 0, 0);
	land(p, jn);
	emit(p, GH_OP_INEG, 16, 2, 0, 16);
	land(p, j4);
	out_int(p, 16);
	/* NULL + i4, and two NULL columns */
	emit(p, GH_OP_SETNULL, 17, 0, 0, 0);
	emit(p, GH_OP_IADD, 18, 17, 1, 32);
	out_int(p, 18);
	emit(p, GH_OP_MOVE, 19, 18, 0, 0);
	emit(p, GH_OP_ISNULL, 19, 19, 0, 0);
	out_int(p, 19);
	p->outs[p->nouts] = (gh_pout) {GH_INT64, ALL_OPS};
	p->outs[p->nouts + 1] = (gh_pout) {GH_FLOAT64, ALL_OPS};
	emit(p, GH_OP_OUT_NULL, p->nouts, 0, 0, 2);
	p->nouts += 2;
	/* WHERE id % 5 <> 0 AND NOT (flag IS FALSE) */
	emit(p, GH_OP_IMOD, 23, 0, 22, 32);
	cmp(p, GH_OP_ICMP, 24, 23, 20, GH_CMP_NE);
	emit(p, GH_OP_QUAL, 0, 24, 0, 0);
	jn = emit(p, GH_OP_JNULL, 0, 3, 0, 0);
	emit(p, GH_OP_QUAL, 0, 3, 0, 0);
	land(p, jn);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* CASE WHEN i4 < 0 THEN i8 - 1 WHEN flag THEN i2 * 2 ELSE NULL END; a row of id % 7 = 3 dropped */
static void
prog_case(gh_prog *p, rng *r)
{
	int			j1,
				j2,
				e1,
				e2;

	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_INT, 1, 0, 4, C_I4);
	emit(p, GH_OP_LDCOL_INT, 2, 0, 1, C_FLAG);
	emit(p, GH_OP_LDCOL_INT, 3, 0, 8, C_I8);
	emit(p, GH_OP_LDCOL_INT, 4, 0, 2, C_I2);
	ld_int(p, 20, 0);
	ld_int(p, 21, 1);
	ld_int(p, 22, 2);
	ld_int(p, 23, 7);
	ld_int(p, 24, 3);
	emit(p, GH_OP_IMOD, 10, 0, 23, 32);
	cmp(p, GH_OP_ICMP, 10, 10, 24, GH_CMP_EQ);
	j1 = emit(p, GH_OP_JFALSE, 0, 10, 0, 0);
	emit(p, GH_OP_DROP, 0, 0, 0, 0);
	land(p, j1);
	cmp(p, GH_OP_ICMP, 5, 1, 20, GH_CMP_LT);
	j1 = emit(p, GH_OP_JFALSE, 0, 5, 0, 0);
	emit(p, GH_OP_ISUB, 6, 3, 21, 64);
	e1 = emit(p, GH_OP_JMP, 0, 0, 0, 0);
	land(p, j1);
	j2 = emit(p, GH_OP_JFALSE, 0, 2, 0, 0);
	emit(p, GH_OP_IMUL, 6, 4, 22, 32);
	e2 = emit(p, GH_OP_JMP, 0, 0, 0, 0);
	land(p, j2);
	emit(p, GH_OP_SETNULL, 6, 0, 0, 0);
	land(p, e1);
	land(p, e2);
	out_int(p, 6);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Float8 and float4 arithmetic against extremes; comparisons with NaN. */
static void
prog_floats(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_F8, 1, 0, 0, C_F8);
	emit(p, GH_OP_LDCOL_F4, 2, 0, 0, C_F4);
	emit(p, GH_OP_LDCOL_INT, 3, 0, 8, C_I8);
	ld_f8(p, 20, 2.0);
	ld_f8(p, 21, 1e300);
	ld_f8(p, 22, NAN);
	ld_f8(p, 23, (double) 3.0f);
	ld_f8(p, 24, (double) 1e-30f);
	ld_f8(p, 25, (double) 0.1f);
	emit(p, GH_OP_FADD, 4, 1, 1, 0);
	out_f8(p, 4);
	emit(p, GH_OP_FSUB, 4, 1, 21, 0);
	out_f8(p, 4);
	emit(p, GH_OP_FMUL, 4, 1, 21, 0);
	out_f8(p, 4);
	emit(p, GH_OP_FDIV, 4, 20, 1, 0);
	out_f8(p, 4);
	emit(p, GH_OP_FNEG, 4, 1, 0, 0);
	out_f8(p, 4);
	for (int how = GH_CMP_EQ; how <= GH_CMP_GE; how++)
	{
		cmp(p, GH_OP_FCMP, 5, 1, 22, how);
		out_int(p, 5);
		cmp(p, GH_OP_FCMP, 5, 2, 1, how);
		out_int(p, 5);
	}
	emit(p, GH_OP_I2F, 6, 3, 0, 0);
	out_f8(p, 6);
	emit(p, GH_OP_F4ADD, 7, 2, 2, 0);
	out_f8(p, 7);
	emit(p, GH_OP_F4SUB, 7, 2, 25, 0);
	out_f8(p, 7);
	emit(p, GH_OP_F4MUL, 7, 2, 24, 0);
	out_f8(p, 7);
	emit(p, GH_OP_F4DIV, 7, 23, 2, 0);
	out_f8(p, 7);
	emit(p, GH_OP_F2ORD, 8, 1, 0, 0);
	out_int(p, 8);
	emit(p, GH_OP_F2ORD, 8, 2, 0, 0);
	out_int(p, 8);
	emit(p, GH_OP_FMUL, 4, 1, 1, 0);
	out_f8(p, 4);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Numerics: loads at two scales, add, subtract, multiply, negate, scale, compare, limbs. */
static void
prog_numerics(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_NUM, 1, 0, 4, C_N1);
	emit(p, GH_OP_LDCOL_NUM, 2, 0, 3, C_N2);
	emit(p, GH_OP_LDCOL_INT, 3, 0, 8, C_I8);
	emit(p, GH_OP_NSCALE, 4, 2, 0, 1);
	emit(p, GH_OP_NADD, 5, 1, 4, 0);
	out_num(p, 5, 4, -1, 3, ALL_OPS);
	emit(p, GH_OP_NSUB, 5, 1, 4, 0);
	out_num(p, 5, 4, -1, 3, ALL_OPS);
	emit(p, GH_OP_NMUL, 6, 1, 2, 0);
	out_num(p, 6, 7, -1, 4, ALL_OPS);
	emit(p, GH_OP_NNEG, 7, 1, 0, 0);
	out_num(p, 7, 4, 0, 2, ALL_OPS);
	cmp(p, GH_OP_NCMP, 8, 1, 4, GH_CMP_LT);
	out_int(p, 8);
	cmp(p, GH_OP_NCMP, 8, 1, 4, GH_CMP_EQ);
	out_int(p, 8);
	emit(p, GH_OP_I2N, 9, 3, 0, 0);
	emit(p, GH_OP_NSCALE, 9, 9, 0, 4);
	emit(p, GH_OP_NADD, 9, 9, 1, 0);
	out_num(p, 9, 4, 0, 3, ALL_OPS);
	/* 1.2345 (dscale 4) + n1, and n1 at scale 24 (escapes where it overflows) */
	emit(p, GH_OP_LDCONST, 10, 0, 0, konst(p, 12345, 0, false, 4));
	emit(p, GH_OP_NADD, 10, 10, 1, 0);
	out_num(p, 10, 4, -1, 2, ALL_OPS);
	emit(p, GH_OP_N2F, 12, 1, 0, 4);
	out_f8(p, 12);
	emit(p, GH_OP_N2F, 12, 6, 0, 7);
	out_f8(p, 12);
	emit(p, GH_OP_N2F, 12, 9, 0, 4);
	out_f8(p, 12);
	emit(p, GH_OP_NSCALE, 11, 1, 0, 20);
	out_num(p, 11, 24, 0, 3, ALL_OPS);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/*
 * Floats rounded by every GH_ROUND_* and made integers of every width (NaN,
 * the infinities and values past each type raise the range error, so those
 * come last); timestamps' dates in zones east and west.
 */
static void
prog_round_floats(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_F8, 1, 0, 0, C_F8);
	emit(p, GH_OP_LDCOL_F4, 2, 0, 0, C_F4);
	emit(p, GH_OP_LDCOL_INT, 5, 0, 8, C_TS);
	for (int how = GH_ROUND_NEAREST; how <= GH_ROUND_TRUNC; how++)
	{
		emit(p, GH_OP_FROUND, 6, 1, 0, how);
		out_f8(p, 6);
		emit(p, GH_OP_FROUND, 6, 2, 0, how);
		out_f8(p, 6);
	}
	emit(p, GH_OP_DATEPART, 8, 5, 1, GH_DATEPART_DATE | -36000 * 256);
	out_int(p, 8);
	emit(p, GH_OP_DATEPART, 8, 5, 1, GH_DATEPART_DATE | 19800 * 256);
	out_int(p, 8);
	emit(p, GH_OP_DATEPART, 8, 5, 1, GH_DATEPART_DATE);
	out_int(p, 8);
	emit(p, GH_OP_F2I, 10, 2, 0, 64);
	out_int(p, 10);
	emit(p, GH_OP_F2I, 10, 1, 0, 64);
	out_int(p, 10);
	emit(p, GH_OP_F2I, 10, 2, 0, 32);
	out_int(p, 10);
	emit(p, GH_OP_F2I, 10, 1, 0, 32);
	out_int(p, 10);
	emit(p, GH_OP_F2I, 10, 2, 0, 16);
	out_int(p, 10);
	emit(p, GH_OP_F2I, 10, 1, 0, 16);
	out_int(p, 10);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/*
 * Numerics with digits dropped by every GH_ROUND_* (none, some, all of the
 * fraction, more than they have), display scales set, and made integers of
 * every width (past each type: the range error, last).
 */
static void
prog_round_numerics(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_NUM, 3, 0, 4, C_N1);
	emit(p, GH_OP_LDCOL_NUM, 4, 0, 3, C_N2);
	for (int how = GH_ROUND_NEAREST; how <= GH_ROUND_TRUNC; how++)
	{
		emit(p, GH_OP_NROUND, 7, 3, 0, how | (6 + how) << 8);
		out_num(p, 7, 4, -1, 3, ALL_OPS);
		emit(p, GH_OP_NROUND, 7, 3, 3, how | 1 << 8);
		out_num(p, 7, 1, -1, 2, ALL_OPS);
		emit(p, GH_OP_NROUND, 7, 3, 4, how);
		out_num(p, 7, 0, 0, 2, ALL_OPS);
		emit(p, GH_OP_NROUND, 7, 4, 3, how);
		out_num(p, 7, 0, 0, 2, ALL_OPS);
	}
	emit(p, GH_OP_NROUND, 7, 3, 38, GH_ROUND_CEIL);
	out_num(p, 7, 0, 0, 1, ALL_OPS);
	emit(p, GH_OP_NROUND, 7, 3, 30, GH_ROUND_NEAREST);
	out_num(p, 7, 0, 0, 1, ALL_OPS);
	emit(p, GH_OP_NROUND, 9, 3, 4, GH_ROUND_NEAREST);
	emit(p, GH_OP_N2I, 10, 9, 0, 64);
	out_int(p, 10);
	emit(p, GH_OP_N2I, 10, 9, 0, 32);
	out_int(p, 10);
	emit(p, GH_OP_N2I, 10, 9, 0, 16);
	out_int(p, 10);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/*
 * LIKE: patterns of every shape (%, _, runs of both, literals before,
 * between and after) against text and bpchar (its padding part of the
 * value), _ as one UTF-8 character and as one byte, a NULL pattern.
 */
static void
prog_like(gh_prog *p, rng *r)
{
	static const char *const patterns[] = {
		"%", "", "_", "ab", "a%", "%b", "%b%", "a_c", "%_", "_%_", "%a%b%", "a%%c",
		"%\xc3\xa9%", "_b%", "%\xc3\xa9", "\xc3\xa9_", "%__", "ab%  ", "%c_"
	};
	int			reg = 20;

	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_TEXT, 1, 0, 0, C_T);
	emit(p, GH_OP_LDCOL_TEXT, 2, 0, 0, C_BP);
	emit(p, GH_OP_LDCONST, 19, 0, 1, konst(p, 0, 0, true, 0));
	for (size_t k = 0; k < sizeof(patterns) / sizeof(patterns[0]); k++)
	{
		ld_text(p, reg, patterns[k]);
		cmp(p, GH_OP_LIKE, 3, 1, reg, k % 3 != 2);
		out_int(p, 3);
		if (k % 4 == 1)
		{
			cmp(p, GH_OP_LIKE, 3, 2, reg, 1);
			out_int(p, 3);
		}
	}
	cmp(p, GH_OP_LIKE, 3, 1, 19, 1);
	out_int(p, 3);
	/* lengths: in characters and bytes, of text and of bpchar without its padding */
	for (int imm = 0; imm < 4; imm++)
	{
		emit(p, GH_OP_TLEN, 3, imm & 2 ? 2 : 1, 0, imm);
		out_int(p, 3);
		emit(p, GH_OP_TLEN, 3, imm & 2 ? 1 : 2, 0, imm);
		out_int(p, 3);
	}
	emit(p, GH_OP_TLEN, 3, 19, 0, 1);
	out_int(p, 3);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/*
 * substring(t from s for n) of text and of bpchar without its padding
 * (bpchar's cast to text), in characters of UTF-8 and in bytes: starts
 * before the first character, at it, inside and past the end, counts of
 * none, some, more than the text has and the rest (-1); a NULL start.  Each
 * substring is checked by its length in bytes and its first 14 bytes.
 */
static void
prog_substr(gh_prog *p, rng *r)
{
	static const int32_t starts[] = {-3, 0, 1, 2, 5, INT32_MAX - 1};
	static const int32_t counts[] = {-1, 0, 1, 3, 9, 1 << 28};

	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_TEXT, 1, 0, 0, C_T);
	emit(p, GH_OP_LDCOL_TEXT, 2, 0, 0, C_BP);
	for (int i = 0; i < 6; i++)
	{
		ld_int(p, 4, starts[i]);
		for (int j = 0; j < 3; j++)
		{
			int			k = (i + 2 * j) % 6;
			int			imm = (int) ((unsigned) counts[k] << 2) | (i + j) % 4;

			emit(p, GH_OP_SUBSTR, 5, imm & 2 ? 2 : 1, 4, imm);
			emit(p, GH_OP_TLEN, 3, 5, 0, 0);
			out_int(p, 3);
			emit(p, GH_OP_TPACK, 3, 5, 0, 2);
			out_int(p, 3);
			emit(p, GH_OP_TPACK, 3, 5, 0, 2 | 1 << 8);
			out_int(p, 3);
		}
	}
	emit(p, GH_OP_LDCONST, 4, 0, 0, konst(p, 0, 0, true, 0));
	emit(p, GH_OP_SUBSTR, 5, 1, 4, 1);
	emit(p, GH_OP_TLEN, 3, 5, 0, 1);
	out_int(p, 3);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/*
 * Text in 7-byte chunks (a wide grouping column): of 8 to 150 bytes a text
 * escapes only at a last chunk it goes on past; bpchar's spaces dropped
 * first; a chunk past the end is empty.
 */
static void
prog_text_chunks(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_TEXT, 1, 0, 0, C_T);
	emit(p, GH_OP_LDCOL_TEXT, 2, 0, 0, C_BP);
	for (int c = 0; c < 3; c++)
	{
		emit(p, GH_OP_TPACK, 3, 2, 0, 1 | 2 | c << 8);
		out_int(p, 3);
	}
	emit(p, GH_OP_TPACK, 3, 1, 0, 2 | 30 << 8);
	out_int(p, 3);
	for (int c = 0; c < 4; c++)
	{
		emit(p, GH_OP_TPACK, 3, 1, 0, (c < 3 ? 2 : 0) | c << 8);
		out_int(p, 3);
	}
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Text: equality, bpchar, NULL constants, packing. */
static void
prog_text(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_TEXT, 1, 0, 0, C_T);
	emit(p, GH_OP_LDCOL_TEXT, 2, 0, 0, C_BP);
	ld_text(p, 20, "ab");
	ld_text(p, 21, "ab  ");
	ld_text(p, 22, "");
	emit(p, GH_OP_LDCONST, 23, 0, 1, konst(p, 0, 0, true, 0));
	cmp(p, GH_OP_TCMP, 3, 1, 20, GH_CMP_EQ);
	out_int(p, 3);
	cmp(p, GH_OP_TCMP, 3, 1, 20, GH_CMP_NE);
	out_int(p, 3);
	cmp(p, GH_OP_TCMP, 3, 2, 20, GH_CMP_EQ | GH_CMP_BPCHAR);
	out_int(p, 3);
	cmp(p, GH_OP_TCMP, 3, 2, 21, GH_CMP_NE | GH_CMP_BPCHAR);
	out_int(p, 3);
	cmp(p, GH_OP_TCMP, 3, 1, 21, GH_CMP_EQ);
	out_int(p, 3);
	cmp(p, GH_OP_TCMP, 3, 1, 2, GH_CMP_EQ | GH_CMP_BPCHAR);
	out_int(p, 3);
	cmp(p, GH_OP_TCMP, 3, 1, 22, GH_CMP_EQ);
	out_int(p, 3);
	cmp(p, GH_OP_TCMP, 3, 23, 1, GH_CMP_EQ);
	out_int(p, 3);
	emit(p, GH_OP_MOVE, 4, 1, 0, 0);
	emit(p, GH_OP_TPACK, 5, 4, 0, 0);
	out_int(p, 5);
	emit(p, GH_OP_TPACK, 5, 2, 0, 1);
	out_int(p, 5);
	emit(p, GH_OP_TPACK, 5, 2, 0, 0);
	out_int(p, 5);
	emit(p, GH_OP_TPACK, 5, 21, 0, 1);
	out_int(p, 5);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Dates against timestamps (the infinities, the end of timestamps), and as integers. */
static void
prog_dates(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_INT, 1, 0, 4, C_DATE);
	emit(p, GH_OP_LDCOL_INT, 2, 0, 8, C_TS);
	ld_int(p, 20, INT64_MAX);
	ld_int(p, 21, INT64_MIN);
	ld_int(p, 22, INT64_C(9223371331200000000) - 1);
	ld_int(p, 23, 0);
	ld_int(p, 24, INT64_C(9223371331200000000));	/* END_TIMESTAMP, the first past every one */
	for (int how = GH_CMP_EQ; how <= GH_CMP_GE; how++)
	{
		cmp(p, GH_OP_DTCMP, 3, 1, 2, how);
		out_int(p, 3);
	}
	for (int k = 20; k <= 24; k++)
	{
		cmp(p, GH_OP_DTCMP, 3, 1, k, GH_CMP_LT);
		out_int(p, 3);
		cmp(p, GH_OP_DTCMP, 3, 1, k, GH_CMP_EQ);
		out_int(p, 3);
	}
	cmp(p, GH_OP_ICMP, 3, 1, 23, GH_CMP_LE);
	out_int(p, 3);
	out_every_datepart(p, 1, 2, 3);
	/* timestamptz in zones of fixed offsets east and west; dates made timestamptz */
	for (int f = GH_DATEPART_YEAR; f <= GH_DATETRUNC_SECOND; f += 3)
	{
		int			offset = f % 2 ? 19800 : -36000;

		if ((f > GH_DATEPART_DAYS && f < GH_DATETRUNC_YEAR) || f == GH_DATEPART_DAYS)
			continue;
		emit(p, GH_OP_DATEPART, 3, 2, 1, f | offset * 256);
		out_int(p, 3);
		if (f >= GH_DATETRUNC_YEAR)
		{
			emit(p, GH_OP_DATEPART, 3, 1, 0, f | -offset * 256);
			out_int(p, 3);
		}
	}
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/*
 * Group keys packed from several columns (NULL bits among them) and mixed,
 * once into 6 bits (KEYMIX's high bits cleared), so that groups collide.
 */
static void
prog_keys(gh_prog *p, rng *r)
{
	(void) r;
	memset(p, 0, sizeof(*p));
	p->nregs = GH_PROG_MAX_REGS;
	emit(p, GH_OP_LDCOL_INT, 1, 0, 1, C_FLAG);
	emit(p, GH_OP_KEYPACK, 0, 1, 0, KEYPACK_IMM(1, 1, 0));
	emit(p, GH_OP_LDCOL_INT, 2, 0, 2, C_I2);
	emit(p, GH_OP_KEYPACK, 0, 2, 0, KEYPACK_IMM(8, 16, 2));
	emit(p, GH_OP_LDCOL_INT, 3, 0, 1, C_CHAR);
	emit(p, GH_OP_KEYPACK, 0, 3, 0, KEYPACK_IMM(24, 3, -1));
	emit(p, GH_OP_LDCOL_TEXT, 4, 0, 0, C_BP);
	emit(p, GH_OP_TPACK, 5, 4, 0, 1);
	emit(p, GH_OP_KEYMIX, 0, 5, 0, 0);
	emit(p, GH_OP_KEYMIX, 0, 2, 0, 58);
	emit(p, GH_OP_LDCOL_INT, 6, 0, 4, C_DATE);
	emit(p, GH_OP_KEYPACK, 0, 6, 0, KEYPACK_IMM(63, 64, 4));
	emit(p, GH_OP_LDCOL_INT, 7, 0, 8, C_I8);
	out_int(p, 7);
	emit(p, GH_OP_LDCOL_F4, 8, 0, 0, C_F4);
	p->outs[p->nouts] = (gh_pout) {GH_FLOAT64, GH_AGG_MIN | GH_AGG_MAX};
	emit(p, GH_OP_OUT_F8, p->nouts++, 8, 0, 0);
	emit(p, GH_OP_LDCOL_NUM, 9, 0, 4, C_N1);
	out_num(p, 9, 4, -1, 3, GH_AGG_SUM);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Probes of three dimensions and loads of their columns. */
static void
prog_dims(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	p->ndims = 3;
	emit(p, GH_OP_LDCOL_INT, 1, 0, 8, C_K);
	emit(p, GH_OP_PROBE, 0, 1, 0, 0);
	emit(p, GH_OP_LDDIM, 2, 0, 0, 0 << 8 | 0);
	out_int(p, 2);
	emit(p, GH_OP_LDDIM, 3, 0, 0, 0 << 8 | 1);
	out_num(p, 3, 2, 0, 3, ALL_OPS);
	emit(p, GH_OP_LDCOL_INT, 4, 0, 4, C_I4);
	emit(p, GH_OP_PROBE, 0, 4, 0, 1);
	emit(p, GH_OP_LDDIM, 5, 0, 0, 1 << 8 | 0);
	out_int(p, 5);
	emit(p, GH_OP_LDDIM, 5, 0, 0, 0 << 8 | 2);
	out_int(p, 5);
	emit(p, GH_OP_LDCOL_TEXT, 6, 0, 0, C_T);
	emit(p, GH_OP_TPACK, 7, 6, 0, 0);
	emit(p, GH_OP_PROBE, 0, 7, 0, 2);
	emit(p, GH_OP_LDDIM, 8, 0, 0, 2 << 8 | 0);
	out_int(p, 8);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/*
 * prog_dims's dimensions joined otherwise: 0 and 2 LEFT (a missing or NULL
 * key keeps the row, the dimension's columns NULL: counted, summed and
 * ordered as such), 1 ANTI (a present key drops the row, a missing or
 * NULL one keeps it).
 */
static void
prog_dims_joined(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	p->ndims = 3;
	emit(p, GH_OP_LDCOL_INT, 1, 0, 8, C_K);
	emit(p, GH_OP_PROBE, 0, 1, GH_PROBE_LEFT, 0);
	emit(p, GH_OP_LDDIM, 2, 0, 0, 0 << 8 | 0);
	out_int(p, 2);
	emit(p, GH_OP_LDDIM, 3, 0, 0, 0 << 8 | 1);
	out_num(p, 3, 2, 0, 3, ALL_OPS);
	emit(p, GH_OP_LDCOL_INT, 4, 0, 4, C_I4);
	emit(p, GH_OP_PROBE, 0, 4, GH_PROBE_ANTI, 1);
	emit(p, GH_OP_LDDIM, 5, 0, 0, 0 << 8 | 2);
	out_int(p, 5);
	emit(p, GH_OP_LDCOL_TEXT, 6, 0, 0, C_T);
	emit(p, GH_OP_TPACK, 7, 6, 0, 0);
	emit(p, GH_OP_PROBE, 0, 7, GH_PROBE_LEFT, 2);
	emit(p, GH_OP_LDDIM, 8, 0, 0, 2 << 8 | 0);
	out_int(p, 8);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Rare errors of several kinds and rare escapes among many rows a page. */
static void
prog_mix(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_INT, 1, 0, 2, C_I2);
	emit(p, GH_OP_LDCOL_INT, 2, 0, 4, C_I4);
	emit(p, GH_OP_LDCOL_INT, 3, 0, 8, C_I8);
	emit(p, GH_OP_IDIV, 4, 3, 1, 64);
	out_int(p, 4);
	emit(p, GH_OP_IMOD, 4, 2, 1, 32);
	out_int(p, 4);
	emit(p, GH_OP_INEG, 4, 1, 0, 16);
	out_int(p, 4);
	emit(p, GH_OP_INEG, 4, 2, 0, 32);
	out_int(p, 4);
	emit(p, GH_OP_INEG, 4, 3, 0, 64);
	out_int(p, 4);
	emit(p, GH_OP_LDCOL_TEXT, 5, 0, 0, C_T);
	emit(p, GH_OP_TPACK, 6, 5, 0, 0);
	out_int(p, 6);
	emit(p, GH_OP_LDCOL_NUM, 7, 0, 4, C_N1);
	out_num(p, 7, 4, 0, 2, ALL_OPS);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Each row a group of its own: tables of groups that must grow within one keep. */
static void
prog_groups(gh_prog *p, rng *r)
{
	(void) r;
	begin_keyed_by_id(p);
	emit(p, GH_OP_LDCOL_INT, 1, 0, 8, C_I8);
	out_int(p, 1);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/*
 * Many rows into a dozen groups (flag and NULL flag, a date's low bits):
 * the keep aggregates them in each block's shared memory first, every
 * operation on integers, floats with NULLs and extremes, and numeric limbs.
 */
static void
prog_few(gh_prog *p, rng *r)
{
	(void) r;
	memset(p, 0, sizeof(*p));
	p->nregs = 8;
	emit(p, GH_OP_LDCOL_INT, 1, 0, 1, C_FLAG);
	emit(p, GH_OP_KEYPACK, 0, 1, 0, KEYPACK_IMM(0, 1, 1));
	emit(p, GH_OP_LDCOL_INT, 2, 0, 2, C_I2);
	emit(p, GH_OP_KEYPACK, 0, 2, 0, KEYPACK_IMM(2, 2, -1));
	emit(p, GH_OP_LDCOL_INT, 3, 0, 8, C_I8);
	out_int(p, 3);
	emit(p, GH_OP_LDCOL_F8, 4, 0, 0, C_F8);
	out_f8(p, 4);
	emit(p, GH_OP_F2ORD, 7, 4, 0, 0);	/* min and max: -0 below 0 */
	out_int(p, 7);
	emit(p, GH_OP_LDCOL_NUM, 5, 0, 4, C_N1);
	out_num(p, 5, 4, -1, 3, ALL_OPS);
	emit(p, GH_OP_LDCOL_INT, 6, 0, 4, C_I4);
	out_int(p, 6);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* A numeric's limbs summed per group (by flag): rebuilt afterwards into the exact sums. */
static void
prog_limbs(gh_prog *p, rng *r)
{
	(void) r;
	memset(p, 0, sizeof(*p));
	p->nregs = 4;
	emit(p, GH_OP_LDCOL_INT, 1, 0, 1, C_FLAG);
	emit(p, GH_OP_KEYPACK, 0, 1, 0, KEYPACK_IMM(0, 1, 1));
	emit(p, GH_OP_LDCOL_NUM, 2, 0, 4, C_N1);
	out_num(p, 2, 4, -1, 3, GH_AGG_SUM);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* ---- dimensions ---- */

static void
sdim_alloc(sdim *d, size_t n, int ncols)
{
	memset(d, 0, sizeof(*d));
	d->n = n;
	d->ncols = ncols;
	d->keys = xmalloc(n * sizeof(uint64_t));
	for (int c = 0; c < ncols; c++)
		d->lo[c] = xmalloc(n * sizeof(int64_t));
}

static void
sdim_free(sdim *d)
{
	free(d->keys);
	for (int c = 0; c < d->ncols; c++)
	{
		free(d->lo[c]);
		free(d->hi[c]);
		free(d->nulls[c]);
		free(d->dscale[c]);
	}
}

/* the packed word of a short text (TPACK's) */
static uint64_t
packed(const char *s)
{
	uint64_t	w = (uint64_t) strlen(s) << 56;

	for (size_t i = 0; s[i]; i++)
		w |= (uint64_t) (uint8_t) s[i] << (8 * i);
	return w;
}

/*
 * The dimensions prog_dims probes, in random row order: 0, on the int8
 * column k: keys 0..59 but multiples of 7, EMPTY_KEY and random ones;
 * columns an int8 with NULLs, a numeric with high words and display
 * scales, a plain int8; 1, on int4 i4: -30..30 but multiples of 4; 2, on
 * the packed text t: a few short strings.
 */
static void
make_dims(sdim *dims, rng *r)
{
	static const char *const words[] = {"", "a", "b", "ab", "ba", "abc", "a b", "  ", "c"};
	uint64_t	k0[80],
				k1[80],
				k2[16];
	size_t		n0 = 0,
				n1 = 0,
				n2 = 0;
	uint64_t   *perm;

	for (uint64_t k = 0; k < 60; k++)
		if (k % 7 != 0)
			k0[n0++] = k;
	k0[n0++] = EMPTY_KEY;
	k0[n0++] = rng_next(r) | 1;
	for (int64_t k = -30; k <= 30; k++)
		if (k % 4 != 0)
			k1[n1++] = (uint64_t) k;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		k2[n2++] = packed(words[i]);

	sdim_alloc(&dims[0], n0, 3);
	dims[0].nulls[0] = xcalloc(n0, 1);
	dims[0].hi[1] = xmalloc(n0 * sizeof(int64_t));
	dims[0].dscale[1] = xmalloc(n0);
	perm = gen_permutation(n0, r);
	for (size_t i = 0; i < n0; i++)
	{
		dims[0].keys[i] = k0[perm[i]];
		dims[0].lo[0][i] = (int64_t) rng_next(r);
		dims[0].nulls[0][i] = rng_below(r, 4) == 0;
		/* numerics up to about 2^100 at scale 2 */
		dims[0].lo[1][i] = (int64_t) rng_next(r);
		dims[0].hi[1][i] = (int64_t) (rng_next(r) >> 28) - (int64_t) (UINT64_C(1) << 35);
		dims[0].dscale[1][i] = (uint8_t) rng_below(r, 3);
		dims[0].lo[2][i] = (int64_t) i * 1000 - 7;
	}
	free(perm);
	sdim_alloc(&dims[1], n1, 1);
	for (size_t i = 0; i < n1; i++)
	{
		dims[1].keys[i] = k1[i];
		dims[1].lo[0][i] = (int64_t) k1[i] * 3;
	}
	sdim_alloc(&dims[2], n2, 1);
	for (size_t i = 0; i < n2; i++)
	{
		dims[2].keys[i] = k2[i];
		dims[2].lo[0][i] = (int64_t) i + 100;
	}
}

/* whether n bytes at p are all 0 */
static bool
all_zero(const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (((const uint8_t *) p)[i] != 0)
			return false;
	return true;
}

/* a slice of an array, or NULL where it is all 0 (as gh_dimpart allows) */
static const void *
slice(const void *a, size_t from, size_t n, size_t width)
{
	const char *p = a != NULL ? (const char *) a + from * width : NULL;

	return p != NULL && !all_zero(p, n * width) ? p : NULL;
}

/*
 * Dimension sd made by gh_dim_create_parts of four parts, the second empty,
 * each column's hi, nulls and dscale NULL in a part where they are all 0.
 */
static gh_status
create_in_parts(gh_engine *e, const sdim *sd, gh_dim **out)
{
	size_t		cut[5] = {0, sd->n / 3, sd->n / 3, 2 * sd->n / 3, sd->n};
	gh_dimpart	parts[4];

	for (int p = 0; p < 4; p++)
	{
		size_t		from = cut[p],
					n = cut[p + 1] - cut[p];

		memset(&parts[p], 0, sizeof(parts[p]));
		parts[p].n = n;
		parts[p].keys = sd->keys + from;
		for (int c = 0; c < sd->ncols; c++)
		{
			parts[p].cols[c].lo = sd->lo[c] + from;
			parts[p].cols[c].hi = slice(sd->hi[c], from, n, sizeof(int64_t));
			parts[p].cols[c].nulls = slice(sd->nulls[c], from, n, 1);
			parts[p].cols[c].dscale = slice(sd->dscale[c], from, n, 1);
		}
	}
	return gh_dim_create_parts(e, parts, 4, sd->ncols, out);
}

/*
 * gh_dim_create of each, or every other call gh_dim_create_parts; false
 * (case failed) on an error
 */
static bool
create_dims(gh_engine *e, const sdim *sd, int ndims, gh_dim **dims)
{
	static unsigned calls;
	bool		in_parts = (calls++ & 1) != 0;

	for (int d = 0; d < ndims; d++)
	{
		gh_dimcol	cols[GH_PROG_MAX_DIMCOLS];
		gh_status	st;

		for (int c = 0; c < sd[d].ncols; c++)
			cols[c] = (gh_dimcol) {sd[d].lo[c], sd[d].hi[c], sd[d].nulls[c], sd[d].dscale[c]};
		dims[d] = NULL;
		st = in_parts ? create_in_parts(e, &sd[d], &dims[d]) :
			gh_dim_create(e, sd[d].keys, sd[d].n, cols, sd[d].ncols, &dims[d]);
		if (!check_ok(st, e, in_parts ? "gh_dim_create_parts" : "gh_dim_create"))
			return false;
		if (gh_dim_rows(dims[d]) != sd[d].n)
		{
			case_fail("gh_dim_rows is %zu, want %zu", gh_dim_rows(dims[d]), sd[d].n);
			return false;
		}
	}
	return true;
}

/* ---- the expected results ---- */

/* Rows the oracle says are aggregated: group keys and outputs. */
typedef struct expect
{
	size_t		n;
	size_t		cap;
	int			nouts;
	uint64_t   *keys;
	int64_t    *vals[GH_PROG_MAX_OUTS];
	uint8_t    *nulls[GH_PROG_MAX_OUTS];
	long	   *row_of;			/* the fact row of each (-1: added) */
} expect;

static void
expect_init(expect *x, int nouts)
{
	memset(x, 0, sizeof(*x));
	x->nouts = nouts;
}

static void
expect_add(expect *x, uint64_t key, const int64_t *vals, const uint8_t *nulls, long row)
{
	if (x->n == x->cap)
	{
		x->cap = x->cap ? 2 * x->cap : 1024;
		x->keys = realloc(x->keys, x->cap * sizeof(uint64_t));
		x->row_of = realloc(x->row_of, x->cap * sizeof(long));
		for (int c = 0; c < x->nouts; c++)
		{
			x->vals[c] = realloc(x->vals[c], x->cap * sizeof(int64_t));
			x->nulls[c] = realloc(x->nulls[c], x->cap);
		}
		if (x->keys == NULL || x->row_of == NULL)
		{
			printf("engine_test: out of memory\n");
			exit(2);
		}
	}
	x->keys[x->n] = key;
	x->row_of[x->n] = row;
	for (int c = 0; c < x->nouts; c++)
	{
		x->vals[c][x->n] = vals[c];
		x->nulls[c][x->n] = nulls[c];
	}
	x->n++;
}

static void
expect_free(expect *x)
{
	free(x->keys);
	free(x->row_of);
	for (int c = 0; c < x->nouts; c++)
	{
		free(x->vals[c]);
		free(x->nulls[c]);
	}
}

/* What the oracle says of a page: its status and the rows kept. */
typedef struct opage
{
	uint8_t		status;
	int			nkept;
	oresult    *kept;
	long	   *row;			/* the fact row of each kept one */
} opage;

static void
oracle_page(const gh_prog *prog, const spages *ps, size_t p, const srow *rows, const sdim *dims,
			uint32_t horizon, opage *op)
{
	bool		escaped = false,
				unsure = false;
	bool		judge = horizon != 0 && !(get16(ps->base + p * PAGE + 10) & 0x0004);
	int			err = 0;

	op->nkept = 0;
	op->kept = xmalloc((size_t) (ps->nrows[p] > 0 ? ps->nrows[p] : 1) * sizeof(oresult));
	op->row = xmalloc((size_t) (ps->nrows[p] > 0 ? ps->nrows[p] : 1) * sizeof(long));
	if (ps->bad[p])
	{
		op->status = GH_STAR_PAGE_BAD;
		return;
	}
	for (int i = 0; i < ps->nrows[p]; i++)
	{
		oresult    *o = &op->kept[op->nkept];

		if (judge && ps->vis[ps->first[p] + i] <= 0)
		{
			unsure = unsure || ps->vis[ps->first[p] + i] < 0;
			continue;
		}
		oracle_row(prog, &fact, &rows[ps->first[p] + i], dims, o);
		if (o->kind == O_KEEP)
			op->row[op->nkept++] = (long) (ps->first[p] + i);
		else if (o->kind == O_ESCAPE)
			escaped = true;
		else if (o->kind == O_ERROR && err == 0)
			err = o->err;
	}
	op->status = unsure ? GH_STAR_PAGE_UNSURE : escaped ? GH_STAR_PAGE_ESCAPE :
		err ? GH_STAR_PAGE_ERROR + err : GH_STAR_PAGE_OK;
	if (op->status != GH_STAR_PAGE_OK)
		op->nkept = 0;
}

/* ---- scenarios ---- */

typedef struct scenario
{
	const char *name;
	void		(*program) (gh_prog *p, rng *r);
	profile		pf;
	size_t		nrows;
	/* rows changed after they are made (NULL: none) */
	void		(*fix) (srow *row, rng *r);
	/* a check of the result beyond the oracle's groups (NULL: none); no rows added then */
	void		(*check) (const gh_groups *g, const expect *x, const srow *rows);
} scenario;

/* Rows added with gh_star_add: keys old and new, values, NULLs. */
static void
add_rows(gh_star *s, gh_engine *e, const gh_prog *prog, expect *x, rng *r)
{
	size_t		m = 1 + rng_below(r, 200);
	uint64_t   *keys = xmalloc(m * sizeof(uint64_t));
	int64_t    *vals[GH_PROG_MAX_OUTS];
	uint8_t    *nulls[GH_PROG_MAX_OUTS];
	gh_aggcol	cols[GH_PROG_MAX_OUTS];
	int64_t		row_vals[GH_PROG_MAX_OUTS];
	uint8_t		row_nulls[GH_PROG_MAX_OUTS];

	for (size_t i = 0; i < m; i++)
		keys[i] = x->n > 0 && rng_below(r, 2) ? x->keys[rng_below(r, x->n)] : rng_next(r);
	for (int c = 0; c < prog->nouts; c++)
	{
		bool		with_nulls = rng_below(r, 2);

		vals[c] = xmalloc(m * sizeof(int64_t));
		nulls[c] = xcalloc(m, 1);
		for (size_t i = 0; i < m; i++)
		{
			if (prog->outs[c].type == GH_INT64)
				vals[c][i] = rng_below(r, 4) ? (int64_t) rng_below(r, 2001) - 1000 :
					(int64_t) rng_next(r);
			else
			{
				double		d = (rng_unit(r) - 0.5) * 1000;

				memcpy(&vals[c][i], &d, 8);
			}
			nulls[c][i] = with_nulls && rng_below(r, 5) == 0;
		}
		cols[c] = (gh_aggcol) {(gh_valtype) prog->outs[c].type, prog->outs[c].ops, vals[c],
			with_nulls ? nulls[c] : NULL};
	}
	if (check_ok(gh_star_add(s, keys, m, cols), e, "gh_star_add"))
		for (size_t i = 0; i < m; i++)
		{
			for (int c = 0; c < prog->nouts; c++)
			{
				row_vals[c] = vals[c][i];
				row_nulls[c] = nulls[c][i];
			}
			expect_add(x, keys[i], row_vals, row_nulls, -1);
		}
	for (int c = 0; c < prog->nouts; c++)
	{
		free(vals[c]);
		free(nulls[c]);
	}
	free(keys);
}

/* Compare the star's groups with the oracle's over the rows expected. */
static void
compare_result(gh_star *s, gh_engine *e, const gh_prog *prog, const expect *x,
			   const scenario *sc, const srow *rows)
{
	gh_aggcol	cols[GH_PROG_MAX_OUTS];
	agg_oracle	want;
	gh_groups  *g = NULL;

	if (gh_star_rows(s) != x->n)
		case_fail("gh_star_rows is %llu, want %zu", (unsigned long long) gh_star_rows(s), x->n);
	if (!check_ok(gh_star_result(s, &g), e, "gh_star_result"))
		return;
	for (int c = 0; c < prog->nouts; c++)
		cols[c] = (gh_aggcol) {(gh_valtype) prog->outs[c].type, prog->outs[c].ops, x->vals[c],
			x->nulls[c]};
	oracle_aggregate(&want, x->keys, x->n, cols, prog->nouts);
	compare_groups(g, &want, cols, prog->nouts);
	if (g->input_rows != x->n || g->ndevices != gh_engine_ndevices(e) || g->partitions != 1)
		case_fail("input_rows %llu (want %zu), %d devices, %d partitions",
				  (unsigned long long) g->input_rows, x->n, g->ndevices, g->partitions);
	if (sc->check != NULL)
		sc->check(g, x, rows);
	agg_oracle_free(&want);
	gh_groups_free(g);
}

/* The statuses of the pages of every scenario so far. */
static int	statuses_seen[GH_STAR_PAGE_ERROR + GH_DATAERR_COUNT_];

/* Read the pages in batches, keep them with drop masks, add rows; compare. */
static void
run_scenario(gh_engine *e, const scenario *sc, const sdim *sdims, uint8_t *registered, rng *r)
{
	gh_prog    *prog = xmalloc(sizeof(gh_prog));
	srow	   *rows = xmalloc(sc->nrows * sizeof(srow));
	spages		ps;
	opage	   *op;
	gh_dim	   *dims[GH_PROG_MAX_DIMS] = {NULL};
	gh_star    *s = NULL;
	expect		x;
	size_t		nlist;
	uint32_t   *list;
	const uint8_t *base;
	size_t		done = 0;
	const char *why;
	char		what[64];
	gh_pagespec spec = fact.spec;

	spec.vis_horizon = sc->pf.vis_horizon;
	sc->program(prog, r);
	for (size_t i = 0; i < sc->nrows; i++)
	{
		make_row(&rows[i], (int) i, &sc->pf, r);
		if (sc->fix)
			sc->fix(&rows[i], r);
	}
	spages_build(&ps, rows, sc->nrows, &sc->pf, r);
	base = ps.base;
	if (registered != NULL && ps.npages <= REGISTERED_PAGE_COUNT)
	{
		/* read in place from the registered range (its first pages) */
		memcpy(registered, ps.base, ps.npages * PAGE);
		base = registered;
	}
	op = xcalloc(ps.npages, sizeof(opage));
	for (size_t p = 0; p < ps.npages; p++)
	{
		oracle_page(prog, &ps, p, rows, sdims, spec.vis_horizon, &op[p]);
		statuses_seen[op[p].status]++;
	}
	expect_init(&x, prog->nouts);
	nlist = ps.npages + ps.npages / 8;
	list = page_list(nlist, ps.npages, r);

	case_begin("star scenario %s%s: %zu rows in %zu pages, read in batches, kept with drop masks: "
			   "each page the oracle's status, the oracle's groups", sc->name,
			   base != ps.base ? " (pages in registered memory)" : "", sc->nrows, ps.npages);
	if ((why = gh_prog_check(prog, &spec, (int[]) {3, 1, 1}, prog->ndims)) != NULL)
	{
		case_fail("gh_prog_check: %s", why);
		goto out;
	}
	if (!create_dims(e, sdims, prog->ndims, dims) ||
		!check_ok(gh_star_create(e, prog, &spec, dims, prog->ndims, &s), e,
				  "gh_star_create"))
		goto out;
	for (int batch = 0; done < nlist || batch == 0; batch++)
	{
		size_t		n = done == nlist ? 0 : 1 + rng_below(r, nlist - done);
		uint8_t    *status = xmalloc(n > 0 ? n : 1);
		uint8_t    *drop = NULL;
		/* no mask, all 0, random, all 1 (not the first batch, often the largest) */
		int			mode = (int) rng_below(r, batch == 0 ? 3 : 4);

		if (n > 0 && rng_below(r, 4) == 0)
			n = 1 + rng_below(r, n);
		gh_pagename *names = NULL;

		memset(status, 0xEE, n > 0 ? n : 1);
		/*
		 * Every other batch named (no page cache here): on several devices
		 * each page then goes to the device its name chooses, not to a range
		 */
		if (n > 0 && rng_below(r, 2) == 0)
		{
			names = xmalloc(n * sizeof(gh_pagename));
			for (size_t i = 0; i < n; i++)
				names[i] = (gh_pagename) {UINT64_C(16384) << 32 | 78,
				UINT64_C(1663) << 32 | list[done + i], 0};
		}
		snprintf(what, sizeof(what), "gh_star_read%s (batch %d)", names ? "_named" : "", batch);
		if (!check_ok(gh_star_read_named(s, n > 0 ? base : NULL, n > 0 ? list + done : NULL,
										 names, n, status), e, what))
		{
			free(names);
			free(status);
			break;
		}
		free(names);
		for (size_t i = 0; i < n; i++)
			if (status[i] != op[list[done + i]].status)
			{
				case_fail("batch %d: page %u (list entry %zu) has status %u, the oracle's is %u",
						  batch, list[done + i], done + i, status[i], op[list[done + i]].status);
				break;
			}
		if (mode > 0)
		{
			drop = xcalloc(n > 0 ? n : 1, 1);
			for (size_t i = 0; i < n; i++)
				drop[i] = mode == 3 || (mode == 2 && rng_below(r, 3) == 0);
		}
		snprintf(what, sizeof(what), "gh_star_keep (batch %d)", batch);
		if (check_ok(gh_star_keep(s, drop), e, what))
			for (size_t i = 0; i < n; i++)
			{
				const opage *o = &op[list[done + i]];

				if (drop != NULL && drop[i])
					continue;
				for (int k = 0; k < o->nkept; k++)
					expect_add(&x, o->kept[k].key, o->kept[k].vals, o->kept[k].nulls, o->row[k]);
			}
		free(status);
		free(drop);
		done += n;
		if (sc->check == NULL && rng_below(r, 3) == 0)
			add_rows(s, e, prog, &x, r);
	}
	compare_result(s, e, prog, &x, sc, rows);
	if (getenv("GH_TEST_VERBOSE") != NULL)
	{
		int			count[GH_STAR_PAGE_UNSURE + 1] = {0};

		for (size_t p = 0; p < ps.npages; p++)
			count[op[p].status >= GH_STAR_PAGE_ERROR ? GH_STAR_PAGE_MISSED : op[p].status]++;
		printf("           %d OK, %d BAD, %d ESCAPE, %d ERROR, %d UNSURE pages; %zu rows aggregated\n",
			   count[0], count[1], count[2], count[GH_STAR_PAGE_MISSED],
			   count[GH_STAR_PAGE_UNSURE], x.n);
	}
out:
	case_end();
	gh_star_free(s);
	for (int d = 0; d < GH_PROG_MAX_DIMS; d++)
		gh_dim_free(dims[d]);
	for (size_t p = 0; p < ps.npages; p++)
	{
		free(op[p].kept);
		free(op[p].row);
	}
	free(op);
	free(list);
	expect_free(&x);
	spages_free(&ps);
	free(rows);
	free(prog);
}

/* text and bpchar equal to the constants (or to each other) often */
static void
fix_text(srow *row, rng *r)
{
	static const char *const words[] = {"ab", "ab  ", "", "ab c", " ab"};
	scell	   *t = &row->cells[A_T];
	scell	   *bp = &row->cells[A_BP];
	const char *w = words[rng_below(r, 5)];

	if (rng_below(r, 3) == 0)
	{
		t->tlen = (uint16_t) strlen(w);
		memcpy(t->text, w, t->tlen);
	}
	if (rng_below(r, 3) == 0)
	{
		memcpy(bp->text, "ab    ", 6);
		bp->tlen = 6;
	}
}

/* text of UTF-8 characters of two bytes (é) often, for LIKE's _ */
static void
fix_like(srow *row, rng *r)
{
	static const char *const words[] = {"\xc3\xa9", "a\xc3\xa9", "\xc3\xa9" "b c", "ab\xc3\xa9" "c",
	"a\xc3\xa9\xc3\xa9" "b", "abc", "a c", ""};
	scell	   *t = &row->cells[A_T];
	const char *w = words[rng_below(r, 8)];

	fix_text(row, r);
	if (rng_below(r, 2) == 0)
	{
		t->tlen = (uint16_t) strlen(w);
		memcpy(t->text, w, t->tlen);
	}
}

/* timestamps at the midnight of the row's date often */
static void
fix_dates(srow *row, rng *r)
{
	int64_t		d = (int32_t) row->cells[A_DATE].raw;
	int64_t		ts = (int64_t) row->cells[A_TS].raw;

	/*
	 * only what PostgreSQL stores: 4713 BC to 5874897 AD (dates), to 294276
	 * AD (timestamps), and infinities; BC often
	 */
	if (d != INT32_MIN && d != INT32_MAX && (d < -2451545 || d >= 2145031949 || rng_below(r, 4) == 0))
		d = rng_below(r, 2) ? -2451545 + (int64_t) rng_below(r, 2451545 + 1000) :
			(int64_t) rng_below(r, 2145031949);
	if (ts != INT64_MIN && ts != INT64_MAX &&
		(ts < INT64_C(-211813488000000000) || ts >= INT64_C(9223371331200000000) ||
		 rng_below(r, 4) == 0))
		ts = INT64_C(-211813488000000000) +
			(int64_t) (rng_next(r) % UINT64_C(9435184819200000000));
	row->cells[A_DATE].raw = (uint64_t) (uint32_t) d;
	row->cells[A_TS].raw = (uint64_t) ts;
	if (rng_below(r, 3) == 0 && d > -100000 && d < 100000)
		row->cells[A_TS].raw = (uint64_t) (d * INT64_C(86400000000));
}

/* int4 and text values that are keys of dimensions 1 and 2 often */
static void
fix_dims(srow *row, rng *r)
{
	static const char *const words[] = {"", "a", "ab", "ba", "abc", "a b", "  ", "c", "cc"};
	scell	   *t = &row->cells[A_T];
	const char *w = words[rng_below(r, 9)];

	if (rng_below(r, 5) != 0)
		row->cells[A_I4].raw = (uint64_t) ((int64_t) rng_below(r, 81) - 40);
	if (rng_below(r, 5) != 0)
	{
		t->tlen = (uint16_t) strlen(w);
		memcpy(t->text, w, t->tlen);
	}
}

/* the exact sum of each group's n1 at scale 4, rebuilt from its limb sums */
static void
check_limbs(const gh_groups *g, const expect *x, const srow *rows)
{
	for (size_t gi = 0; gi < g->ngroups; gi++)
	{
		__int128	want = 0,
					got = 0,
					s[3];
		__int128	below = 1000000000000;	/* 10^12: limb -1's digits below 10^-4 are 0 */

		for (size_t i = 0; i < x->n; i++)
		{
			const srow *row = &rows[x->row_of[i]];
			__int128	v;

			if (x->keys[i] != g->keys[gi] || A_N1 >= row->tnatts || row->cells[A_N1].null)
				continue;
			v = (__int128) row->cells[A_N1].num.mag * (__int128) pow10_u128(4 - row->cells[A_N1].num.dscale);
			want += row->cells[A_N1].num.neg ? -v : v;
		}
		for (int j = 0; j < 3; j++)
			s[j] = (__int128) (((unsigned __int128) (uint64_t) gh_sum_hi(&g->cols[j], gi) << 64) |
							   g->cols[j].sum_lo[gi]);
		if (s[0] % below != 0)
			case_fail("group %llu: the limb of 10^-16 .. 10^-1 sums to a value with digits below 10^-4",
					  (unsigned long long) g->keys[gi]);
		got = s[0] / below + s[1] * 10000 + s[2] * 100000000 * 1000000000000;
		if (got != want)
		{
			char		a[48],
						b[48];

			u128_digits(got < 0 ? -got : got, a);
			u128_digits(want < 0 ? -want : want, b);
			case_fail("group %llu: the limbs rebuild %s%s (x 10^-4), the rows sum to %s%s",
					  (unsigned long long) g->keys[gi], got < 0 ? "-" : "", a,
					  want < 0 ? "-" : "", b);
			return;
		}
	}
}

#define PF(null, extreme, longtext, toast, wide, shorttup, rmin, rmax, bad, junk) \
	{.null_pct = null, .extreme_pct = extreme, .long_text_pct = longtext, .toast_pct = toast, \
	 .wide_num_pct = wide, .short_tuple_pct = shorttup, .rows_min = rmin, .rows_max = rmax, \
	 .bad_pct = bad, .junk_pct = junk}
/* the same, the tuples' visibility told by their hint bits against horizon */
#define PFV(null, extreme, longtext, toast, wide, shorttup, rmin, rmax, bad, junk, horizon) \
	{.null_pct = null, .extreme_pct = extreme, .long_text_pct = longtext, .toast_pct = toast, \
	 .wide_num_pct = wide, .short_tuple_pct = shorttup, .rows_min = rmin, .rows_max = rmax, \
	 .bad_pct = bad, .junk_pct = junk, .vis_horizon = horizon}

static const scenario scenarios[] = {
	{"loads", prog_loads, PF(15, 20, 1, 1, 2, 10, 0, 12, 10, 10), 1500, NULL, NULL},
	{"integers 1", prog_integers, PF(10, 25, 0, 0, 0, 5, 1, 3, 5, 10), 1000, NULL, NULL},
	{"integers 2", prog_integers, PF(5, 25, 0, 0, 0, 0, 1, 2, 0, 0), 1000, NULL, NULL},
	{"integers 3", prog_integers, PF(5, 25, 0, 0, 0, 0, 1, 2, 3, 5), 1000, NULL, NULL},
	{"integers 4", prog_integers, PF(5, 25, 0, 0, 0, 0, 1, 2, 3, 5), 1000, NULL, NULL},
	{"logic", prog_logic, PF(25, 15, 0, 0, 0, 5, 1, 10, 5, 10), 1200, NULL, NULL},
	{"case", prog_case, PF(20, 20, 0, 0, 0, 5, 1, 5, 5, 10), 800, NULL, NULL},
	{"floats", prog_floats, PF(10, 25, 0, 0, 0, 5, 1, 3, 5, 10), 1500, NULL, NULL},
	{"numerics", prog_numerics, PF(10, 10, 0, 2, 8, 5, 1, 4, 5, 10), 1500, NULL, NULL},
	{"round floats", prog_round_floats, PF(10, 30, 0, 0, 0, 5, 1, 4, 5, 10), 1500, fix_dates, NULL},
	{"round numerics", prog_round_numerics, PF(10, 10, 0, 2, 8, 5, 1, 4, 5, 10), 1500, NULL, NULL},
	{"text", prog_text, PF(10, 0, 10, 5, 0, 5, 1, 6, 5, 10), 1000, fix_text, NULL},
	{"like", prog_like, PF(10, 0, 10, 5, 0, 5, 1, 6, 5, 10), 1500, fix_like, NULL},
	{"substr", prog_substr, PF(10, 0, 10, 5, 0, 5, 1, 6, 5, 10), 1500, fix_like, NULL},
	{"text chunks", prog_text_chunks, PF(10, 0, 40, 5, 0, 5, 1, 6, 5, 10), 1000, fix_text, NULL},
	{"dates", prog_dates, PF(10, 30, 0, 0, 0, 5, 1, 20, 5, 10), 800, fix_dates, NULL},
	{"keys", prog_keys, PF(15, 0, 2, 0, 0, 5, 10, 100, 5, 5), 3000, NULL, NULL},
	{"dims", prog_dims, PF(10, 5, 1, 1, 0, 5, 1, 30, 5, 10), 1500, fix_dims, NULL},
	{"dims joined", prog_dims_joined, PF(10, 5, 1, 1, 0, 5, 1, 30, 5, 10), 1500, fix_dims, NULL},
	{"mix", prog_mix, PF(5, 3, 1, 0, 1, 0, 20, 80, 5, 5), 5000, NULL, NULL},
	{"groups", prog_groups, PF(5, 5, 0, 0, 0, 5, 150, 291, 2, 2), 40000, NULL, NULL},
	{"few groups", prog_few, PF(10, 10, 0, 0, 2, 0, 100, 291, 1, 2), 300000, NULL, NULL},
	{"limbs", prog_limbs, PF(10, 0, 0, 0, 0, 0, 50, 291, 0, 5), 4000, NULL, check_limbs},
	{"visibility 1", prog_mix, PFV(5, 3, 1, 0, 1, 0, 1, 12, 3, 5, UINT32_C(3000000000)), 3000, NULL, NULL},
	{"visibility 2", prog_integers, PFV(5, 25, 0, 0, 0, 0, 1, 8, 3, 5, 100), 2000, NULL, NULL},
};

/* The scenarios on e, one engine's run. */
static void
run_scenarios(gh_engine *e, const sdim *sdims, rng *r)
{
	for (size_t k = 0; k < sizeof(scenarios) / sizeof(scenarios[0]); k++)
	{
		scenario	sc = scenarios[k];

		if (run.quick)
			sc.nrows /= 5;
		run_scenario(e, &sc, sdims, NULL, r);
	}
}

void
run_star_cases(void)
{
	test_config cfg = {1, 0, 0};
	rng			r = {run.seed ^ UINT64_C(0x73746172)};
	gh_engine  *e;
	size_t		fresh;
	sdim		sdims[3];
	size_t		nregistered = 0;
	uint8_t    *registered = registered_pages(&nregistered);

	stable_init(&fact, NATTS, FACT_TYPES, FACT_OUT);
	case_begin("open an engine for the star pipeline");
	e = open_engine(&cfg);
	case_end();
	if (e == NULL)
		return;
	fresh = gh_engine_device_bytes(e);
	make_dims(sdims, &r);
	run_scenarios(e, sdims, &r);
	case_begin("the scenarios' pages have every status: OK, BAD, ESCAPE, UNSURE, and ERROR of each data error");
	for (int st = 0; st < GH_STAR_PAGE_ERROR + GH_DATAERR_COUNT_; st++)
		if ((st <= GH_STAR_PAGE_ESCAPE || st == GH_STAR_PAGE_UNSURE || st > GH_STAR_PAGE_ERROR) &&
			statuses_seen[st] == 0)
			case_fail("no page of status %d", st);
	case_end();
	if (registered != NULL)
	{
		scenario	sc = scenarios[0];

		sc.nrows = 40 * nregistered / 16;	/* pages of 20 rows on average */
		sc.pf.rows_max = 40;
		run_scenario(e, &sc, sdims, registered, &r);
	}
	run_star_api_cases(e, sdims, &r);
	run_pagecache_cases(sdims, 1, &r);

	case_begin("device memory is back to a fresh engine's after the stars and dimensions are freed");
	check_device_bytes(e, fresh, "after the star cases");
	case_end();
	gh_close(e);

	/* every device its share of the pages, the groups merged */
	cfg.ndevices = usable_devices(3);
	if (cfg.ndevices > 1)
	{
		case_begin("open an engine of %d devices for the star pipeline", cfg.ndevices);
		e = open_engine(&cfg);
		case_end();
		if (e != NULL)
		{
			fresh = gh_engine_device_bytes(e);
			run_scenarios(e, sdims, &r);
			if (registered != NULL)
			{
				scenario	sc = scenarios[0];

				sc.nrows = 40 * nregistered / 16;
				sc.pf.rows_max = 40;
				run_scenario(e, &sc, sdims, registered, &r);
			}
			run_star_api_cases(e, sdims, &r);
			case_begin("device memory is back to a fresh engine's after the stars on %d devices",
					   cfg.ndevices);
			check_device_bytes(e, fresh, "after the star cases");
			case_end();
			gh_close(e);
		}
		run_pagecache_cases(sdims, cfg.ndevices, &r);
	}
	for (int d = 0; d < 3; d++)
		sdim_free(&sdims[d]);
}
