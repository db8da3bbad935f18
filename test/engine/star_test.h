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

#endif							/* GPUHASH_STAR_TEST_H */
