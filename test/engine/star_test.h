/*-------------------------------------------------------------------------
 *
 * star_test.h
 *	  What the star pipeline's tests share (cases_star.c, cases_star_prog.c,
 *	  star_oracle.c): rows of typed values as the tests know them, their
 *	  stored images, dimensions, and the oracle that runs a program over a
 *	  row without the engine's interpreter.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_STAR_TEST_H
#define GPUHASH_STAR_TEST_H

#include "engine_test.h"

/* The types of the tests' attributes (PostgreSQL's, as stored). */
typedef enum stype
{
	ST_BOOL,					/* 1 byte */
	ST_CHAR,					/* "char", 1 byte */
	ST_INT2,
	ST_INT4,
	ST_INT8,
	ST_OID,						/* 4 bytes, unsigned */
	ST_FLOAT4,
	ST_FLOAT8,
	ST_DATE,					/* int4 days since 2000-01-01 */
	ST_TIMESTAMP,				/* int8 microseconds */
	ST_UUID,					/* 16 bytes, char-aligned: walked, never read */
	ST_NUMERIC,					/* varlena */
	ST_TEXT,					/* varlena */
	ST_BPCHAR					/* varlena, trailing spaces insignificant */
} stype;

/* How a varlena is stored. */
typedef enum svar
{
	SV_SHORT,					/* 1-byte header */
	SV_LONG,					/* 4-byte header, uncompressed */
	SV_COMPRESSED,				/* 4-byte header, compressed inline */
	SV_EXTERNAL					/* a TOAST pointer */
} svar;

/* A numeric: sign and magnitude * 10^dscale, or a special value. */
#define SNUM_NAN	1
#define SNUM_PINF	2
#define SNUM_NINF	3

typedef struct snum
{
	uint8_t		special;		/* 0 or SNUM_* */
	bool		neg;
	bool		long_format;	/* the format before PostgreSQL 9.1 (still read) */
	int			dscale;
	unsigned __int128 mag;		/* |value| * 10^dscale */
} snum;

#define STEXT_MAX 160

/* One stored value. */
typedef struct scell
{
	bool		null;
	uint64_t	raw;			/* fixed-width: its bytes, little-endian */
	svar		var;			/* varlenas: how stored */
	snum		num;
	uint16_t	tlen;
	uint8_t		text[STEXT_MAX];
} scell;

#define STAR_MAX_ATTS 24

/* A table: its page description (varlenas allowed) and each attribute's type. */
typedef struct stable
{
	gh_pagespec spec;
	stype		types[STAR_MAX_ATTS];
	int			att_of[GH_PAGE_MAX_OUT];	/* the attribute of each output column */
} stable;

/* One row: its cells, the first tnatts of them stored (the others NULL). */
typedef struct srow
{
	int			tnatts;
	scell		cells[STAR_MAX_ATTS];
} srow;

/* A dimension as the tests hold it (and hand to gh_dim_create). */
typedef struct sdim
{
	size_t		n;
	uint64_t   *keys;
	int			ncols;
	int64_t    *lo[GH_PROG_MAX_DIMCOLS];
	int64_t    *hi[GH_PROG_MAX_DIMCOLS];	/* NULL: none */
	uint8_t    *nulls[GH_PROG_MAX_DIMCOLS];	/* NULL: none */
	uint8_t    *dscale[GH_PROG_MAX_DIMCOLS];	/* NULL: none */
} sdim;

/* What the oracle says of a row. */
typedef enum okind
{
	O_KEEP,
	O_DROP,
	O_ESCAPE,
	O_ERROR
} okind;

typedef struct oresult
{
	okind		kind;
	int			err;			/* O_ERROR: the gh_dataerr */
	uint64_t	key;
	int64_t		vals[GH_PROG_MAX_OUTS];
	uint8_t		nulls[GH_PROG_MAX_OUTS];
} oresult;

/* ---- the fact table of the tests (cases_star.c) ---- */

/* its attributes, in order, and their output columns */
enum
{
	A_SKIP_TEXT, A_ID, A_N1, A_I2, A_T, A_FLAG, A_I4, A_SKIP_UUID, A_I8, A_F4, A_F8, A_BP,
	A_DATE, A_TS, A_OID, A_N2, A_CHAR, A_K, A_SKIP_NUM, NATTS
};
enum
{
	C_ID, C_N1, C_I2, C_T, C_FLAG, C_I4, C_I8, C_F4, C_F8, C_BP, C_DATE, C_TS, C_OID, C_N2,
	C_CHAR, C_K
};

extern const stype FACT_TYPES[NATTS];
extern const int8_t FACT_OUT[NATTS];
extern stable fact;

/*
 * nrows rows of the fact table in pages (nothing that escapes or errors
 * in the id, no malformed page): 16-byte aligned, the caller frees them;
 * *npages pages.
 */
extern uint8_t *fact_pages(size_t nrows, rng *r, size_t *npages);

/* ---- writing programs (star_prog.c) ---- */

#define ALL_OPS (GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX)
#define KEYPACK_IMM(shift, width, nullbit) ((shift) | (width) << 8 | ((nullbit) + 1) << 16)

/* append an instruction; its index */
extern int	emit(gh_prog *p, int op, int dst, int a, int b, int imm);
/* point the jump at pc to the next instruction to be emitted */
extern void land(gh_prog *p, int pc);
extern int	konst(gh_prog *p, int64_t lo, int64_t hi, bool null, int dscale);
/* dst = an integer, a double, a text constant */
extern void ld_int(gh_prog *p, int dst, int64_t v);
extern void ld_f8(gh_prog *p, int dst, double d);
extern void ld_text(gh_prog *p, int dst, const char *s);
/* register a as a new output column (sum, min and max) */
extern void out_int(gh_prog *p, int a);
extern void out_f8(gh_prog *p, int a);
/* numeric a of static scale: limbs j0 .. j0 + n - 1 (ops) and its display scale (max) */
extern void out_num(gh_prog *p, int a, int scale, int j0, int n, int ops);
extern void out_every_datepart(gh_prog *p, int d, int ts, int r);
extern void cmp(gh_prog *p, int op, int dst, int a, int b, int how);
/* a program of 32 registers; register 0 the row's id, by which the row is keyed */
extern void begin_keyed_by_id(gh_prog *p);

/* star_oracle.c */
extern int	stype_attlen(stype t);
extern int	stype_attalign(stype t);
/* A table of the given attribute types; out_of[a] as gh_pagespec's. */
extern void stable_init(stable *t, int natts, const stype *types, const int8_t *out_of);
/* The stored bytes of a cell of type t (buf: room for STEXT_MAX + 64). */
extern size_t scell_image(stype t, const scell *c, uint8_t *buf);
/* n as its decimal digits (value * 10^dscale, no sign); returns their count */
extern int	u128_digits(unsigned __int128 n, char *buf);
/* Run program p over row of table t with dimensions dims (p->ndims of them). */
extern void oracle_row(const gh_prog *p, const stable *t, const srow *row, const sdim *dims,
					   oresult *out);
/* 10^k for k <= 38 */
extern unsigned __int128 pow10_u128(int k);

/* cases_star_api.c: gh_prog_check, invalid arguments, the star's life (e: a fresh engine) */
extern void run_star_api_cases(gh_engine *e, const sdim *dims, rng *r);

/* The pages the life cases read, two batches of them. */
typedef struct batches
{
	uint8_t    *base;
	size_t		npages;
	uint32_t   *ids;
	size_t		n1;				/* the first batch: ids[0 .. n1) */
} batches;

/* b: pages 0 .. npages of base, in two batches; cols: sd's columns as gh_dim_create takes them */
extern void batches_of(batches *b, uint8_t *base, size_t npages, const sdim *sd, gh_dimcol *cols);
/* A program of int64 outputs only: rows grouped by id % 7, id and dimension 1's column summed */
extern void sum_prog(gh_prog *p);
/* Two equal groupings of int64 columns (the case fails if not) */
extern bool same_groups(const gh_groups *a, const gh_groups *b);
/* The groups of one star of p over dim reading all of b at once: NULL (case failed) on an error */
extern gh_groups *reference(gh_engine *e, const gh_prog *p, gh_dim *dim, const batches *b);

/* cases_pagecache.c: the page cache through stars of the CPU or CUDA backend */
extern void run_pagecache_cases(const sdim *dims, int ndevices, rng *r);

#endif							/* GPUHASH_STAR_TEST_H */
