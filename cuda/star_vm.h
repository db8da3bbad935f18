/*-------------------------------------------------------------------------
 *
 * star_vm.h
 *	  The star pipeline's interpreter (engine.h, "the star pipeline"): one
 *	  heap tuple's columns located, then the program run over them, the
 *	  same code on the host (the CPU backend) and on the device.
 *
 * A program is straight-line code with forward jumps over a small register
 * file; gh_vm_run interprets it for one row and returns what became of the
 * row (kept, dropped, escaped, or the data error it raised), leaving the
 * kept row's group key and output columns where the caller said.  Every
 * arithmetic instruction reproduces PostgreSQL's function for it: the same
 * result, the same overflow and division checks (int2pl .. int8mod,
 * float8pl .. float8div, float4pl .. float4div, numeric_add, numeric_sub,
 * numeric_mul with their display scales), and NULL in, NULL out.
 *
 * Numerics are exact: a value is a 128-bit integer scaled by a static
 * scale the compiler tracks (src/star_compile.c), with the value's own
 * display scale kept beside it as PostgreSQL keeps it.  What does not fit
 * (more than 38 digits, NaN) escapes: the caller reads that page on the
 * CPU, so results never depend on what the device can represent.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_STAR_VM_H
#define GPUHASH_STAR_VM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"
#include "hash.h"
#include "heap_page.h"

typedef __int128 gh_i128;
typedef unsigned __int128 gh_u128;

/* what became of a row */
#define GH_VM_KEEP		1
#define GH_VM_DROP		0
#define GH_VM_ESCAPE	(-1)
/* a data error e: GH_VM_ERROR - e */
#define GH_VM_ERROR		(-16)

#define GH_VM_MAX_COLS GH_PAGE_MAX_OUT
#define GH_STAR_KEY_SEED	UINT64_C(0x3f84d5b5b5470917)
#define GH_STAR_NULL_WORD	UINT64_C(0x9e3779b97f4a7c15)

/* one register */
typedef struct gh_reg
{
	int64_t		lo;
	int64_t		hi;
	uint8_t		null;
	uint8_t		dscale;
} gh_reg;

/* A dimension as the interpreter reads it (the backends fill it in). */
typedef struct gh_vmdim
{
	const uint64_t *slot_keys;	/* open addressing, cap slots, GH_EMPTY_KEY empty */
	const uint32_t *slot_rows;	/* the row of each slot's key */
	uint64_t	cap;			/* a power of two */
	int64_t		empty_key_row;	/* the row whose key is GH_EMPTY_KEY, or -1 */
	int			ncols;
	gh_dimcol	cols[GH_PROG_MAX_DIMCOLS];
} gh_vmdim;

/* where a kept row's key and outputs go: output c at vals[c * stride] */
typedef struct gh_vmout
{
	uint64_t	key;
	int64_t    *vals;
	uint8_t    *nulls;
	size_t		stride;
} gh_vmout;

/* one tuple's columns as located by gh_vm_locate */
typedef struct gh_vmcols
{
	const uint8_t *tup;
	uint16_t	off[GH_VM_MAX_COLS];	/* offset of each output column in the tuple */
	uint8_t		null[GH_VM_MAX_COLS];
} gh_vmcols;

/* ---- columns ---- */

/*
 * Locate the output columns of line pointer i of page (spec as for
 * gh_page_tuple, varlena attributes allowed: attlen -1): 1 for a row, 0 for
 * a line pointer that is not LP_NORMAL, -1 for a malformed tuple.  Walks the
 * attributes as PostgreSQL's heap_deform_tuple does, aligning a varlena
 * only where its first byte is padding (att_align_pointer).
 */
GH_HOSTDEV static inline int
gh_vm_locate(const uint8_t *page, const gh_pagespec *spec, int i, gh_vmcols *c)
{
	uint32_t	lp = gh_page_u32(page + GH_PAGE_HEADER_SIZE + GH_ITEMID_SIZE * i);
	uint32_t	off = lp & 0x7FFF;
	uint32_t	flags = (lp >> 15) & 3;
	uint32_t	len = lp >> 17;
	const uint8_t *tup;
	uint32_t	natts,
				hoff,
				pos;
	int			hasnull;

	if (flags != GH_LP_NORMAL)
		return 0;
	if (off < GH_PAGE_HEADER_SIZE || len < GH_TUP_BITS_OFF || off + len > spec->page_size ||
		off % 8 != 0)
		return -1;
	tup = page + off;
	natts = gh_page_u16(tup + GH_TUP_INFOMASK2_OFF) & GH_TUP_NATTS_MASK;
	hasnull = (gh_page_u16(tup + GH_TUP_INFOMASK_OFF) & GH_TUP_HASNULL) != 0;
	hoff = tup[GH_TUP_HOFF_OFF];
	if (hoff < GH_TUP_BITS_OFF || hoff > len || hoff % 8 != 0 ||
		(hasnull && GH_TUP_BITS_OFF + (natts + 7) / 8 > hoff))
		return -1;
	c->tup = tup;
	pos = hoff;
	for (int a = 0; a < spec->natts; a++)
	{
		int			o = spec->out_of[a];
		int			alen = spec->attlen[a];
		uint32_t	al = spec->attalign[a];
		bool		isnull;

		isnull = (uint32_t) a >= natts ||
			(hasnull && !(tup[GH_TUP_BITS_OFF + a / 8] & (1 << (a % 8))));
		if (!isnull)
		{
			uint32_t	size;

			if (alen > 0 || pos >= len || tup[pos] == 0)
				pos = (pos + al - 1) & ~(al - 1);
			if (alen > 0)
				size = (uint32_t) alen;
			else if (pos >= len || (size = gh_varlena_size(tup + pos, len - pos)) == 0)
				return -1;
			if (pos + size > len)
				return -1;
			if (o >= 0)
				c->off[o] = (uint16_t) pos;
			pos += size;
		}
		if (o >= 0)
			c->null[o] = isnull;
	}
	return 1;
}

/* ---- arithmetic ---- */

GH_HOSTDEV static inline uint64_t
gh_pow10_u64(int k)
{
	uint64_t	p = 1;

	while (k-- > 0)
		p *= 10;
	return p;
}

/* 10^k for 0 <= k <= 38 */
GH_HOSTDEV static inline gh_u128
gh_pow10_u128(int k)
{
	gh_u128		p = 1;

	while (k-- > 0)
		p *= 10;
	return p;
}

#define GH_I128_MAX ((gh_i128) (((gh_u128) 1 << 127) - 1))
#define GH_I128_MIN (-GH_I128_MAX - 1)

GH_HOSTDEV static inline gh_i128
gh_reg_i128(const gh_reg *r)
{
	return (gh_i128) (((gh_u128) (uint64_t) r->hi << 64) | (uint64_t) r->lo);
}

GH_HOSTDEV static inline void
gh_reg_set_i128(gh_reg *r, gh_i128 v)
{
	r->lo = (int64_t) (uint64_t) (gh_u128) v;
	r->hi = (int64_t) (uint64_t) ((gh_u128) v >> 64);
}

GH_HOSTDEV static inline double
gh_reg_f8(const gh_reg *r)
{
	double		d;

	memcpy(&d, &r->lo, sizeof(d));
	return d;
}

GH_HOSTDEV static inline void
gh_reg_set_f8(gh_reg *r, double d)
{
	memcpy(&r->lo, &d, sizeof(d));
	r->hi = 0;
}

/* a + b, false on overflow of 128 bits */
GH_HOSTDEV static inline bool
gh_add_i128(gh_i128 a, gh_i128 b, gh_i128 *r)
{
	gh_i128		s = (gh_i128) ((gh_u128) a + (gh_u128) b);

	if ((a >= 0) == (b >= 0) && (s >= 0) != (a >= 0))
		return false;
	*r = s;
	return true;
}

/* a - b, false on overflow of 128 bits */
GH_HOSTDEV static inline bool
gh_sub_i128(gh_i128 a, gh_i128 b, gh_i128 *r)
{
	gh_i128		s = (gh_i128) ((gh_u128) a - (gh_u128) b);

	if ((a >= 0) != (b >= 0) && (s >= 0) != (a >= 0))
		return false;
	*r = s;
	return true;
}

/* a * b, false on overflow of 128 bits */
GH_HOSTDEV static inline bool
gh_mul_i128(gh_i128 a, gh_i128 b, gh_i128 *r)
{
	bool		neg = (a < 0) != (b < 0);
	gh_u128		ua = a < 0 ? (gh_u128) 0 - (gh_u128) a : (gh_u128) a;
	gh_u128		ub = b < 0 ? (gh_u128) 0 - (gh_u128) b : (gh_u128) b;
	uint64_t	ahi = (uint64_t) (ua >> 64),
				alo = (uint64_t) ua,
				bhi = (uint64_t) (ub >> 64),
				blo = (uint64_t) ub;
	gh_u128		p,
				cross;

	if (ahi != 0 && bhi != 0)
		return false;
	cross = (gh_u128) ahi * blo + (gh_u128) alo * bhi;	/* one of them is 0 */
	if (cross >> 64)
		return false;
	p = (gh_u128) alo * blo;
	if ((p >> 64) + cross > ((gh_u128) 1 << 63) - 1 + (neg ? 1 : 0))
		return false;
	p += cross << 64;
	if (p > ((gh_u128) 1 << 127) - (neg ? 0 : 1))
		return false;
	*r = neg ? (gh_i128) ((gh_u128) 0 - p) : (gh_i128) p;
	return true;
}

/* the range check of a PostgreSQL integer type of width bits */
GH_HOSTDEV static inline bool
gh_int_fits(int64_t v, int width)
{
	if (width == 16)
		return v >= -32768 && v <= 32767;
	if (width == 32)
		return v >= INT32_MIN && v <= INT32_MAX;
	return true;
}

GH_HOSTDEV static inline int
gh_int_range_error(int width)
{
	return width == 16 ? GH_DATAERR_INT2_RANGE :
		width == 32 ? GH_DATAERR_INT4_RANGE : GH_DATAERR_INT8_RANGE;
}

/*
 * An integer operation in PostgreSQL's type of width bits (operands already
 * in range): 0, or the data error it raises.
 */
GH_HOSTDEV static inline int
gh_int_op(int op, int64_t a, int64_t b, int width, int64_t *r)
{
	gh_i128		w;

	switch (op)
	{
		case GH_OP_IADD:
			w = (gh_i128) a + b;
			break;
		case GH_OP_ISUB:
			w = (gh_i128) a - b;
			break;
		case GH_OP_IMUL:
			w = (gh_i128) a * b;
			break;
		case GH_OP_IDIV:
			if (b == 0)
				return GH_DATAERR_DIV_ZERO;
			/* MIN / -1 overflows; the rest is C's truncating division */
			w = b == -1 ? -(gh_i128) a : (gh_i128) (a / b);
			break;
		case GH_OP_IMOD:
			if (b == 0)
				return GH_DATAERR_DIV_ZERO;
			w = b == -1 ? 0 : (gh_i128) (a % b);
			break;
		default:				/* GH_OP_INEG */
			w = -(gh_i128) a;
			break;
	}
	if (w < INT64_MIN || w > INT64_MAX || !gh_int_fits((int64_t) w, width))
		return gh_int_range_error(width);
	*r = (int64_t) w;
	return 0;
}

/* PostgreSQL's float8 comparison: NaN equals NaN and sorts above everything */
GH_HOSTDEV static inline int
gh_f8_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return a > b ? 1 : a < b ? -1 : 0;
}

GH_HOSTDEV static inline bool
gh_cmp_result(int cmp, int c)
{
	switch (c & 7)
	{
		case GH_CMP_EQ:
			return cmp == 0;
		case GH_CMP_NE:
			return cmp != 0;
		case GH_CMP_LT:
			return cmp < 0;
		case GH_CMP_LE:
			return cmp <= 0;
		case GH_CMP_GT:
			return cmp > 0;
		default:
			return cmp >= 0;
	}
}

/*
 * float8pl .. float8div (float.h's float8_pl etc.): 0 or the data error;
 * f4: float4pl .. float4div, the operation done in single precision (a and
 * b hold float4 values exactly, so double arithmetic rounded to float is
 * the float operation).
 */
GH_HOSTDEV static inline int
gh_float_op(int op, double a, double b, bool f4, double *r)
{
	double		x;
	bool		ainf = isinf(a),
				binf = isinf(b);

	switch (op)
	{
		case GH_OP_FADD:
			x = a + b;
			break;
		case GH_OP_FSUB:
			x = a - b;
			break;
		case GH_OP_FMUL:
			x = a * b;
			break;
		default:				/* GH_OP_FDIV */
			if (b == 0.0 && !isnan(a))
				return GH_DATAERR_DIV_ZERO;
			x = a / b;
			break;
	}
	if (f4)
		x = (double) (float) x;
	if (isinf(x) && !ainf && (op == GH_OP_FDIV || !binf))
		return GH_DATAERR_FLOAT_OVERFLOW;
	if (op == GH_OP_FMUL && x == 0.0 && a != 0.0 && b != 0.0)
		return GH_DATAERR_FLOAT_UNDERFLOW;
	if (op == GH_OP_FDIV && x == 0.0 && a != 0.0 && !binf)
		return GH_DATAERR_FLOAT_UNDERFLOW;
	*r = x;
	return 0;
}

/* dround, dfloor, dceil and dtrunc (float.c), as how (GH_ROUND_*) says */
GH_HOSTDEV static inline double
gh_f8_round(double x, int how)
{
	switch (how)
	{
		case GH_ROUND_FLOOR:
			return floor(x);
		case GH_ROUND_CEIL:
			return ceil(x);
		case GH_ROUND_TRUNC:
			return x >= 0 ? floor(x) : -floor(-x);
		default:
			return rint(x);
	}
}

/*
 * dtoi2, dtoi4, dtoi8 (and ftoi*: a float4 held as its double rounds
 * alike): rounded to the nearest integer, ties to even; NaN or outside the
 * type of width bits raises the range error.  0 or the data error.
 */
GH_HOSTDEV static inline int
gh_f8_to_int(double x, int width, int64_t *r)
{
	double		lim = width == 16 ? 32768.0 : width == 32 ? 2147483648.0 : 9223372036854775808.0;

	x = rint(x);
	if (isnan(x) || x < -lim || x >= lim)
		return gh_int_range_error(width);
	*r = (int64_t) x;
	return 0;
}

/*
 * x with its k lowest digits dropped (0 <= k <= 38), rounded as how
 * (GH_ROUND_*) says: NEAREST half away from zero (numeric.c's round_var),
 * TRUNC toward zero, FLOOR and CEIL toward either infinity.
 */
GH_HOSTDEV static inline gh_i128
gh_i128_round(gh_i128 x, int k, int how)
{
	gh_i128		p,
				q,
				rem,
				arem;

	if (k <= 0)
		return x;
	p = (gh_i128) gh_pow10_u128(k);
	q = x / p;
	rem = x % p;				/* of x's sign */
	arem = rem < 0 ? -rem : rem;
	if (how == GH_ROUND_NEAREST && arem >= p - arem)
		q += x < 0 ? -1 : 1;
	else if (how == GH_ROUND_FLOOR && rem < 0)
		q -= 1;
	else if (how == GH_ROUND_CEIL && rem > 0)
		q += 1;
	return q;
}

/*
 * The int64 image of a double whose order is PostgreSQL's (NaN last), as
 * keys.c's.  fold_zero: -0 is 0 (a group key); otherwise -0 is just below 0,
 * so that a min or max of -0s is -0 whatever the rows' order.
 */
GH_HOSTDEV static inline int64_t
gh_f8_order(double d, bool fold_zero)
{
	int64_t		b;

	if (isnan(d))
		b = INT64_C(0x7ff8000000000000);
	else
	{
		if (fold_zero && d == 0.0)
			d = 0.0;
		memcpy(&b, &d, sizeof(b));
	}
	return b >= 0 ? b : b ^ INT64_MAX;
}

/*
 * date_cmp_timestamp_internal: a date (days since 2000-01-01, DATEVAL_NOBEGIN
 * and _NOEND at the int32 extremes) against a timestamp (microseconds).
 */
#define GH_USECS_PER_DAY INT64_C(86400000000)
#define GH_TIMESTAMP_END_DAYS INT64_C(106751983)	/* TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE */
GH_HOSTDEV static inline int
gh_date_ts_cmp(int64_t date, int64_t ts)
{
	int64_t		d;

	if (date == INT32_MIN)
		d = INT64_MIN;			/* DT_NOBEGIN */
	else if (date == INT32_MAX)
		d = INT64_MAX;			/* DT_NOEND */
	else if (date >= GH_TIMESTAMP_END_DAYS)
		return ts == INT64_MAX ? -1 : 1;	/* beyond every finite timestamp */
	else
		d = date * GH_USECS_PER_DAY;
	return d > ts ? 1 : d < ts ? -1 : 0;
}

/* ---- varlenas ---- */

/* A varlena column's data: false (escape) if it is compressed or external. */
GH_HOSTDEV static inline bool
gh_varlena_data(const uint8_t *p, const uint8_t **data, uint32_t *len)
{
	if (p[0] == 0x01)
		return false;			/* a TOAST pointer */
	if (p[0] & 0x01)
	{
		*data = p + 1;
		*len = (p[0] >> 1) - 1;
		return true;
	}
	if ((p[0] & 0x03) != 0)
		return false;			/* compressed inline */
	*data = p + 4;
	*len = ((gh_page_u32(p) >> 2) & 0x3FFFFFFF) - 4;
	return true;
}

/*
 * A stored numeric (numeric.c's short and long formats) as an integer scaled
 * by 10^scale and its display scale: false (escape) for NaN, infinities,
 * more fractional digits than scale, or more than 128 bits.
 */
GH_HOSTDEV static inline bool
gh_numeric_load(const uint8_t *data, uint32_t len, int scale, gh_i128 *x, uint8_t *dscale)
{
	uint16_t	header;
	int			weight;
	bool		negative;
	const uint8_t *digits;
	int			ndigits;
	gh_i128		acc = 0;

	if (len < 2)
		return false;
	header = gh_page_u16(data);
	if ((header & 0xC000) == 0xC000)
		return false;			/* NaN, Infinity, -Infinity */
	if (header & 0x8000)
	{
		negative = (header & 0x2000) != 0;
		*dscale = (uint8_t) ((header & 0x1F80) >> 7);
		weight = (header & 0x0040) ? (int) (~0x003F | (header & 0x003F)) : (int) (header & 0x003F);
		digits = data + 2;
		ndigits = (int) (len - 2) / 2;
	}
	else
	{
		if (len < 4 || (header & 0x3FFF) > 255)
			return false;
		negative = (header & 0xC000) == 0x4000;
		*dscale = (uint8_t) (header & 0x3FFF);
		weight = (int16_t) gh_page_u16(data + 2);
		digits = data + 4;
		ndigits = (int) (len - 4) / 2;
	}
	for (int i = 0; i < ndigits; i++)
	{
		int			d = (int16_t) gh_page_u16(digits + 2 * i);
		int			e = 4 * (weight - i) + scale;	/* its power of ten in x */
		gh_i128		term;

		if (d == 0)
			continue;
		if (e < 0)
		{
			int			p;

			if (-e >= 4)
				return false;	/* a digit below the static scale */
			p = (int) gh_pow10_u64(-e);
			if (d % p != 0)
				return false;
			term = d / p;
		}
		else if (e > 38 || !gh_mul_i128(d, (gh_i128) gh_pow10_u128(e), &term))
			return false;
		if (!gh_add_i128(acc, term, &acc))
			return false;
	}
	if (*dscale > scale)
		return false;			/* the static scale would not hold its display scale */
	*x = negative ? -acc : acc;
	return true;
}

/* PostgreSQL's date2j: the Julian day of a (proleptic Gregorian) date, year 0 = 1 BC */
GH_HOSTDEV static inline int64_t
gh_date2j(int64_t y, int64_t m, int64_t d)
{
	int64_t		century,
				julian;

	if (m > 2)
	{
		m += 1;
		y += 4800;
	}
	else
	{
		m += 13;
		y += 4799;
	}
	century = y / 100;
	julian = y * 365 - 32167;
	julian += y / 4 - century + century / 4;
	julian += 7834 * m / 256 + d;
	return julian;
}

/* PostgreSQL's j2day: the day of the week of a Julian day, 0 = Sunday */
GH_HOSTDEV static inline int
gh_j2day(int64_t j)
{
	int			d = (int) ((j + 1) % 7);

	return d < 0 ? d + 7 : d;
}

/*
 * The ISO 8601 week (1 .. 53) of Julian day dayn of year y, and its ISO year
 * (year 0 = 1 BC): PostgreSQL's date2isoweek and date2isoyear.
 */
GH_HOSTDEV static inline void
gh_isoweek(int64_t y, int64_t dayn, int64_t *week, int64_t *isoyear)
{
	int64_t		day4 = gh_date2j(y, 1, 4);
	int64_t		day0 = gh_j2day(day4 - 1);

	if (dayn < day4 - day0)
	{
		y--;
		day4 = gh_date2j(y, 1, 4);
		day0 = gh_j2day(day4 - 1);
	}
	*week = (dayn - (day4 - day0)) / 7 + 1;
	if (*week >= 52)
	{
		int64_t		next4 = gh_date2j(y + 1, 1, 4);
		int64_t		next0 = gh_j2day(next4 - 1);

		if (dayn >= next4 - next0)
		{
			*week = (dayn - (next4 - next0)) / 7 + 1;
			y++;
		}
	}
	*isoyear = y;
}

#define GH_USECS_PER_DAY INT64_C(86400000000)
/* MIN_TIMESTAMP (4714-11-24 BC) and the first date past the timestamps (294277-01-01) */
#define GH_MIN_TIMESTAMP INT64_C(-211813488000000000)
#define GH_DATE_END_TIMESTAMP 106751983
#define GH_END_TIMESTAMP INT64_C(9223371331200000000)

/*
 * Field imm & 255 (GH_DATEPART_*) of a date (days from 2000-01-01) or, ts, a
 * timestamp (microseconds from then), as PostgreSQL's EXTRACT computes it
 * (j2date, and no year 0: 1 BC is -1); or the timestamp date_trunc makes of
 * it (GH_DATETRUNC_*: a date is its midnight, as a cast to timestamp makes
 * it).  imm >> 8 is a time zone's fixed offset in seconds east of UTC (0:
 * none): a timestamptz's fields are those of its local time, and a date or
 * a truncation becomes the timestamptz of its local time.  False where
 * PostgreSQL's answer is not such an integer (an infinite value, a field a
 * date does not have) or PostgreSQL raises an error (a date past the
 * timestamps, a truncation before the first one).
 */
GH_HOSTDEV static inline bool
gh_datepart(int64_t v, bool ts, int imm, int64_t *out)
{
	int			f = imm & 255;
	int64_t		offset = (int64_t) (imm >> 8) * INT64_C(1000000);
	int64_t		days = v,
				tod = 0,
				jd,
				julian,
				y,
				week,
				isoyear,
				start;
	uint32_t	quad,
				extra,
				ju;
	int			mon,
				mday;

	if (ts)
	{
		if (v == INT64_MIN || v == INT64_MAX)
		{
			/* date_trunc leaves an infinite timestamp as it is */
			*out = v;
			return f >= GH_DATETRUNC_YEAR;
		}
		v += offset;			/* local time (a valid timestamp leaves room) */
		days = v / GH_USECS_PER_DAY;
		tod = v % GH_USECS_PER_DAY;
		if (tod < 0)
		{
			days--;
			tod += GH_USECS_PER_DAY;
		}
	}
	else
	{
		if (v == INT32_MIN || v == INT32_MAX)
		{
			/* date_trunc of an infinite date: the infinite timestamp */
			*out = v == INT32_MIN ? INT64_MIN : INT64_MAX;
			return f >= GH_DATETRUNC_YEAR;
		}
		if (f == GH_DATEPART_DAYS)
		{
			*out = v;
			return true;
		}
		if (f == GH_DATEPART_HOUR || f == GH_DATEPART_MINUTE ||
			(f >= GH_DATETRUNC_YEAR && v >= GH_DATE_END_TIMESTAMP))
			return false;
	}
	if (f == GH_DATEPART_DATE)
	{
		*out = days;			/* timestamp_date: the local day */
		return true;
	}
	if (f == GH_DATEPART_DAYS)
		return false;
	jd = days + 2451545;		/* POSTGRES_EPOCH_JDATE */
	julian = jd + 32044;
	ju = (uint32_t) julian;
	quad = ju / 146097;
	extra = (ju - quad * 146097) * 4 + 3;
	ju += 60 + quad * 3 + extra / 146097;
	quad = ju / 1461;
	ju -= quad * 1461;
	y = (int64_t) (ju * 4 / 1461);
	ju = ((y != 0) ? ((ju + 305) % 365) : ((ju + 306) % 366)) + 123;
	y += (int64_t) quad * 4;
	y -= 4800;
	quad = ju * 2141 / 65536;
	mday = (int) (ju - 7834 * quad / 256);
	mon = (int) ((quad + 10) % 12 + 1);
	switch (f)
	{
		case GH_DATEPART_YEAR:
			*out = y > 0 ? y : y - 1;
			return true;
		case GH_DATEPART_QUARTER:
			*out = (mon - 1) / 3 + 1;
			return true;
		case GH_DATEPART_MONTH:
			*out = mon;
			return true;
		case GH_DATEPART_DAY:
			*out = mday;
			return true;
		case GH_DATEPART_DOW:
			*out = gh_j2day(jd);
			return true;
		case GH_DATEPART_ISODOW:
			*out = gh_j2day(jd) == 0 ? 7 : gh_j2day(jd);
			return true;
		case GH_DATEPART_DOY:
			*out = jd - gh_date2j(y, 1, 1) + 1;
			return true;
		case GH_DATEPART_WEEK:
		case GH_DATEPART_ISOYEAR:
			gh_isoweek(y, jd, &week, &isoyear);
			*out = f == GH_DATEPART_WEEK ? week : isoyear > 0 ? isoyear : isoyear - 1;
			return true;
		case GH_DATEPART_HOUR:
			*out = tod / INT64_C(3600000000);
			return true;
		case GH_DATEPART_MINUTE:
			*out = tod / INT64_C(60000000) % 60;
			return true;
		case GH_DATETRUNC_YEAR:
			start = gh_date2j(y, 1, 1) - 2451545;
			break;
		case GH_DATETRUNC_QUARTER:
			start = gh_date2j(y, (mon - 1) / 3 * 3 + 1, 1) - 2451545;
			break;
		case GH_DATETRUNC_MONTH:
			start = gh_date2j(y, mon, 1) - 2451545;
			break;
		case GH_DATETRUNC_WEEK:
			start = days - (gh_j2day(jd) + 6) % 7;
			break;
		case GH_DATETRUNC_DAY:
		case GH_DATETRUNC_HOUR:
		case GH_DATETRUNC_MINUTE:
		case GH_DATETRUNC_SECOND:
			start = days;
			break;
		default:
			return false;
	}
	*out = start * GH_USECS_PER_DAY - offset +
		(f == GH_DATETRUNC_HOUR ? tod - tod % INT64_C(3600000000) :
		 f == GH_DATETRUNC_MINUTE ? tod - tod % INT64_C(60000000) :
		 f == GH_DATETRUNC_SECOND ? tod - tod % INT64_C(1000000) : 0);
	/* IS_VALID_TIMESTAMP */
	return *out >= GH_MIN_TIMESTAMP && *out < GH_END_TIMESTAMP;
}

/* The length of text t of len bytes without its trailing spaces (bpchar's: bcTruelen) */
GH_HOSTDEV static inline uint32_t
gh_text_rtrim(const uint8_t *t, uint32_t len)
{
	while (len > 0 && t[len - 1] == ' ')
		len--;
	return len;
}

/*
 * Bytes 7 chunk .. 7 chunk + 6 of a text packed in a word, their count (at
 * most 7) in the top byte; rtrim drops trailing spaces first (bpchar).  False
 * if the text goes on past them and no later chunk follows (more).
 */
GH_HOSTDEV static inline bool
gh_text_pack(const uint8_t *p, uint32_t len, bool rtrim, int chunk, bool more, uint64_t *w)
{
	uint64_t	v = 0;
	uint32_t	from = 7 * (uint32_t) chunk;

	if (rtrim)
		len = gh_text_rtrim(p, len);
	if (!more && len > from + 7)
		return false;
	len = len <= from ? 0 : len - from > 7 ? 7 : len - from;
	for (uint32_t i = 0; i < len; i++)
		v |= (uint64_t) p[from + i] << (8 * i);
	*w = v | ((uint64_t) len << 56);
	return true;
}

GH_HOSTDEV static inline bool
gh_text_eq(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen, bool rtrim)
{
	if (rtrim)
	{
		alen = gh_text_rtrim(a, alen);
		blen = gh_text_rtrim(b, blen);
	}
	if (alen != blen)
		return false;
	for (uint32_t i = 0; i < alen; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * The length of text t (textlen, bpcharlen, octet_length): in characters of
 * UTF-8 (its bytes that do not continue a character: PostgreSQL's text is
 * valid UTF-8) or in bytes, without trailing spaces where bpchar says so.
 */
GH_HOSTDEV static inline int64_t
gh_text_len(const uint8_t *t, uint32_t len, bool utf8, bool bpchar)
{
	int64_t		n = 0;

	if (bpchar)
		len = gh_text_rtrim(t, len);
	if (!utf8)
		return len;
	for (uint32_t i = 0; i < len; i++)
		n += (t[i] & 0xC0) != 0x80;
	return n;
}

/*
 * The byte where character c of text t begins (utf8: characters of UTF-8,
 * else bytes), or len where t has at most c characters.
 */
GH_HOSTDEV static inline uint32_t
gh_text_char_at(const uint8_t *t, uint32_t len, int64_t c, bool utf8)
{
	uint32_t	i = 0;

	if (!utf8)
		return c < (int64_t) len ? (uint32_t) c : len;
	for (; i < len; i++)
		if ((t[i] & 0xC0) != 0x80 && c-- == 0)
			break;
	return i;
}

/*
 * substring(t from start for count) as text_substring gives it, where
 * count is not negative (count -1: the rest of t, as substring(t from
 * start)): characters start .. start + count - 1, counting from 1, of
 * those t has.  Its bytes at *from, *n of them.
 */
GH_HOSTDEV static inline void
gh_text_substr(const uint8_t *t, uint32_t len, int32_t start, int32_t count, bool utf8,
			   uint32_t *from, uint32_t *n)
{
	int64_t		s1 = start > 1 ? start : 1;
	int64_t		end = count < 0 ? INT64_MAX : (int64_t) start + count;
	uint32_t	to;

	/* past INT32_MAX text_substring takes the rest too */
	if (end > INT32_MAX)
		end = INT64_MAX;
	if (end <= s1)
	{
		*from = 0;
		*n = 0;
		return;
	}
	*from = gh_text_char_at(t, len, s1 - 1, utf8);
	to = end == INT64_MAX ? len :
		*from + gh_text_char_at(t + *from, len - *from, end - s1, utf8);
	*n = to - *from;
}

/*
 * Text t LIKE pattern p, as like_match.c's MatchText answers it for a
 * pattern without escapes: % matches any run of characters, _ one
 * character (utf8: a UTF-8 one, else a byte), any other byte itself.
 * Iterative: on a mismatch the last % takes one more character of the text
 * and the rest is tried again from there; as in MatchText, the text is only
 * ever resumed at a character's start.
 */
GH_HOSTDEV static inline bool
gh_like(const uint8_t *t, uint32_t tlen, const uint8_t *p, uint32_t plen, bool utf8)
{
	uint32_t	ti = 0,
				pi = 0,
				star_p = UINT32_MAX,
				star_t = 0;

	for (;;)
	{
		if (pi < plen && p[pi] == '%')
		{
			star_p = ++pi;
			star_t = ti;
			continue;
		}
		if (ti < tlen && pi < plen && (p[pi] == '_' || p[pi] == t[ti]))
		{
			bool		any = p[pi] == '_';

			pi++;
			ti++;
			if (any && utf8)
				while (ti < tlen && (t[ti] & 0xC0) == 0x80)
					ti++;
			continue;
		}
		if (ti == tlen && pi == plen)
			return true;
		if (star_p == UINT32_MAX || star_t >= tlen)
			return false;
		/* the last % takes one more character */
		star_t++;
		if (utf8)
			while (star_t < tlen && (t[star_t] & 0xC0) == 0x80)
				star_t++;
		ti = star_t;
		pi = star_p;
	}
}

/* ---- the interpreter ---- */

/* the dimension row of key, or -1 */
GH_HOSTDEV static inline int64_t
gh_vm_probe(const gh_vmdim *d, uint64_t key)
{
	uint64_t	s;

	if (key == GH_EMPTY_KEY)
		return d->empty_key_row;
	s = gh_hash64(key, GH_SEED_AGG) & (d->cap - 1);
	for (;;)
	{
		uint64_t	k = d->slot_keys[s];

		if (k == key)
			return d->slot_rows[s];
		if (k == GH_EMPTY_KEY)
			return -1;
		s = (s + 1) & (d->cap - 1);
	}
}

/*
 * Run prog over one row whose columns c located: GH_VM_KEEP (out filled),
 * GH_VM_DROP, GH_VM_ESCAPE, or GH_VM_ERROR - a gh_dataerr.
 */
GH_HOSTDEV static inline int
gh_vm_run(const gh_prog *prog, const gh_vmdim *dims, const gh_vmcols *c, gh_vmout *out)
{
	gh_reg		r[GH_PROG_MAX_REGS];
	int64_t		dimrow[GH_PROG_MAX_DIMS];
	uint64_t	key = 0;
	int			pc = 0;

	for (;;)
	{
		gh_instr	in = prog->code[pc++];
		gh_reg	   *d = &r[in.dst];
		const gh_reg *a = &r[in.a];
		const gh_reg *b = &r[in.b];
		int			err = 0;

		switch (in.op)
		{
			case GH_OP_END:
				out->key = key;
				return GH_VM_KEEP;
			case GH_OP_DROP:
				return GH_VM_DROP;
			case GH_OP_QUAL:
				if (a->null || a->lo == 0)
					return GH_VM_DROP;
				break;
			case GH_OP_JMP:
				pc = in.imm;
				break;
			case GH_OP_JFALSE:
				if (a->null || a->lo == 0)
					pc = in.imm;
				break;
			case GH_OP_JNULL:
				if (a->null)
					pc = in.imm;
				break;
			case GH_OP_JNOTNULL:
				if (!a->null)
					pc = in.imm;
				break;
			case GH_OP_AND:
			case GH_OP_OR:
				if (!a->null && (a->lo != 0) == (in.op == GH_OP_OR))
				{
					d->lo = in.op == GH_OP_OR;
					d->null = 0;
					pc = in.imm;
				}
				else if (a->null)
					d->null = 1;
				break;
			case GH_OP_BOOL:
				d->lo = in.imm != 0;
				d->hi = 0;
				d->null = 0;
				break;
			case GH_OP_NOT:
				d->null = a->null;
				d->lo = a->lo == 0;
				break;
			case GH_OP_ISNULL:
			case GH_OP_ISNOTNULL:
				d->lo = (a->null != 0) == (in.op == GH_OP_ISNULL);
				d->null = 0;
				break;
			case GH_OP_MOVE:
				*d = *a;
				break;
			case GH_OP_SETNULL:
				d->null = 1;
				break;
			case GH_OP_LDCONST:
				{
					const gh_pconst *k = &prog->consts[in.imm];

					d->lo = k->lo;
					d->hi = k->hi;
					d->null = k->null;
					d->dscale = k->dscale;
					if (in.b)	/* text: lo is an offset into the bytes */
						d->lo = (int64_t) (uintptr_t) (prog->bytes + k->lo);
					break;
				}
			case GH_OP_LDCOL_INT:
			case GH_OP_LDCOL_UINT:
			case GH_OP_LDCOL_F4:
			case GH_OP_LDCOL_F8:
				{
					const uint8_t *p = c->tup + c->off[in.imm];
					int64_t		v = 0;

					d->null = c->null[in.imm];
					d->hi = 0;
					d->dscale = 0;
					if (d->null)
						break;
					if (in.op == GH_OP_LDCOL_F4)
					{
						uint32_t	bits = gh_page_u32(p);
						float		f;

						memcpy(&f, &bits, sizeof(f));
						gh_reg_set_f8(d, (double) f);
						break;
					}
					if (in.op == GH_OP_LDCOL_F8 || in.b == 8)
						v = (int64_t) ((uint64_t) gh_page_u32(p) | ((uint64_t) gh_page_u32(p + 4) << 32));
					else if (in.b == 4)
						v = in.op == GH_OP_LDCOL_UINT ? (int64_t) gh_page_u32(p) : (int32_t) gh_page_u32(p);
					else if (in.b == 2)
						v = in.op == GH_OP_LDCOL_UINT ? (int64_t) gh_page_u16(p) : (int16_t) gh_page_u16(p);
					else
						v = in.op == GH_OP_LDCOL_UINT ? (int64_t) p[0] : (int8_t) p[0];
					d->lo = v;
					break;
				}
			case GH_OP_LDCOL_NUM:
			case GH_OP_LDCOL_TEXT:
				{
					const uint8_t *data;
					uint32_t	len;

					d->null = c->null[in.imm];
					d->dscale = 0;
					if (d->null)
						break;
					if (!gh_varlena_data(c->tup + c->off[in.imm], &data, &len))
						return GH_VM_ESCAPE;
					if (in.op == GH_OP_LDCOL_TEXT)
					{
						d->lo = (int64_t) (uintptr_t) data;
						d->hi = len;
					}
					else
					{
						gh_i128		x;

						if (!gh_numeric_load(data, len, in.b, &x, &d->dscale))
							return GH_VM_ESCAPE;
						gh_reg_set_i128(d, x);
					}
					break;
				}
			case GH_OP_PROBE:
				{
					int64_t		row = a->null ? -1 : gh_vm_probe(&dims[in.imm], (uint64_t) a->lo);

					if (in.b == GH_PROBE_ANTI ? row >= 0 : row < 0 && in.b != GH_PROBE_LEFT)
						return GH_VM_DROP;
					dimrow[in.imm] = row;
					break;
				}
			case GH_OP_LDDIM:
				{
					const gh_dimcol *col = &dims[in.imm >> 8].cols[in.imm & 255];
					int64_t		row = dimrow[in.imm >> 8];

					if (row < 0)
					{
						/* a LEFT probe's absent row */
						d->null = 1;
						d->lo = d->hi = 0;
						d->dscale = 0;
						break;
					}
					d->null = col->nulls ? col->nulls[row] : 0;
					d->lo = col->lo[row];
					d->hi = col->hi ? col->hi[row] : 0;
					d->dscale = col->dscale ? col->dscale[row] : 0;
					break;
				}
			case GH_OP_IADD:
			case GH_OP_ISUB:
			case GH_OP_IMUL:
			case GH_OP_IDIV:
			case GH_OP_IMOD:
				if (a->null || b->null)
				{
					d->null = 1;
					break;
				}
				err = gh_int_op(in.op, a->lo, b->lo, in.imm, &d->lo);
				d->null = 0;
				d->hi = 0;
				break;
			case GH_OP_INEG:
				if (!a->null)
					err = gh_int_op(in.op, a->lo, 0, in.imm, &d->lo);
				d->null = a->null;
				d->hi = 0;
				break;
			case GH_OP_ICAST:
				if (!a->null && !gh_int_fits(a->lo, in.imm))
					err = gh_int_range_error(in.imm);
				*d = *a;
				break;
			case GH_OP_I2F:
				d->null = a->null;
				gh_reg_set_f8(d, (double) a->lo);
				break;
			case GH_OP_I2N:
				d->null = a->null;
				gh_reg_set_i128(d, (gh_i128) a->lo);
				d->dscale = 0;
				break;
			case GH_OP_ICMP:
			case GH_OP_FCMP:
			case GH_OP_NCMP:
			case GH_OP_DTCMP:
			case GH_OP_TCMP:
				{
					int			cmp;

					if (a->null || b->null)
					{
						d->null = 1;
						break;
					}
					if (in.op == GH_OP_ICMP)
						cmp = a->lo > b->lo ? 1 : a->lo < b->lo ? -1 : 0;
					else if (in.op == GH_OP_FCMP)
						cmp = gh_f8_cmp(gh_reg_f8(a), gh_reg_f8(b));
					else if (in.op == GH_OP_NCMP)
					{
						gh_i128		x = gh_reg_i128(a),
									y = gh_reg_i128(b);

						cmp = x > y ? 1 : x < y ? -1 : 0;
					}
					else if (in.op == GH_OP_DTCMP)
						cmp = gh_date_ts_cmp(a->lo, b->lo);
					else
						cmp = gh_text_eq((const uint8_t *) (uintptr_t) a->lo, (uint32_t) a->hi,
										 (const uint8_t *) (uintptr_t) b->lo, (uint32_t) b->hi,
										 (in.imm & GH_CMP_BPCHAR) != 0) ? 0 : 1;
					d->lo = gh_cmp_result(cmp, in.imm);
					d->hi = 0;
					d->null = 0;
					break;
				}
			case GH_OP_LIKE:
				d->null = a->null || b->null;
				d->lo = d->null ? 0 :
					gh_like((const uint8_t *) (uintptr_t) a->lo, (uint32_t) a->hi,
							(const uint8_t *) (uintptr_t) b->lo, (uint32_t) b->hi, in.imm != 0);
				d->hi = 0;
				break;
			case GH_OP_TLEN:
				d->null = a->null;
				d->lo = a->null ? 0 :
					gh_text_len((const uint8_t *) (uintptr_t) a->lo, (uint32_t) a->hi,
								(in.imm & 1) != 0, (in.imm & 2) != 0);
				d->hi = 0;
				break;
			case GH_OP_SUBSTR:
				if (a->null || b->null)
				{
					d->null = 1;
					d->lo = 0;
					d->hi = 0;
					break;
				}
				{
					const uint8_t *t = (const uint8_t *) (uintptr_t) a->lo;
					uint32_t	len = (uint32_t) a->hi,
								from,
								n;

					if (in.imm & 2)
						len = gh_text_rtrim(t, len);
					gh_text_substr(t, len, (int32_t) b->lo, in.imm >> 2, (in.imm & 1) != 0, &from,
								   &n);
					d->lo = a->lo + from;
					d->hi = n;
					d->null = 0;
				}
				break;
			case GH_OP_FADD:
			case GH_OP_FSUB:
			case GH_OP_FMUL:
			case GH_OP_FDIV:
			case GH_OP_F4ADD:
			case GH_OP_F4SUB:
			case GH_OP_F4MUL:
			case GH_OP_F4DIV:
				{
					bool		f4 = in.op >= GH_OP_F4ADD;
					double		x = 0;

					if (a->null || b->null)
					{
						d->null = 1;
						break;
					}
					err = gh_float_op(f4 ? in.op - GH_OP_F4ADD + GH_OP_FADD : in.op,
									  gh_reg_f8(a), gh_reg_f8(b), f4, &x);
					gh_reg_set_f8(d, x);
					d->null = 0;
					break;
				}
			case GH_OP_FNEG:
				d->null = a->null;
				gh_reg_set_f8(d, -gh_reg_f8(a));
				break;
			case GH_OP_F2ORD:
				d->null = a->null;
				d->lo = a->null ? 0 : gh_f8_order(gh_reg_f8(a), in.imm & 1);
				d->hi = 0;
				break;
			case GH_OP_FROUND:
				d->null = a->null;
				gh_reg_set_f8(d, gh_f8_round(gh_reg_f8(a), in.imm));
				break;
			case GH_OP_F2I:
				if (!a->null)
					err = gh_f8_to_int(gh_reg_f8(a), in.imm, &d->lo);
				d->null = a->null;
				d->hi = 0;
				break;
			case GH_OP_NADD:
			case GH_OP_NSUB:
			case GH_OP_NMUL:
				{
					gh_i128		x = gh_reg_i128(a),
								y = gh_reg_i128(b),
								z;
					bool		ok;

					if (a->null || b->null)
					{
						d->null = 1;
						break;
					}
					/* a product's display scale is the sum (numeric_mul), within 8 bits */
					if (in.op == GH_OP_NMUL)
						ok = gh_mul_i128(x, y, &z) && a->dscale + b->dscale <= 255;
					else if (in.op == GH_OP_NSUB)
						ok = gh_sub_i128(x, y, &z);
					else
						ok = gh_add_i128(x, y, &z);
					if (!ok)
						return GH_VM_ESCAPE;
					d->dscale = in.op == GH_OP_NMUL ? (uint8_t) (a->dscale + b->dscale) :
						(a->dscale > b->dscale ? a->dscale : b->dscale);
					gh_reg_set_i128(d, z);
					d->null = 0;
					break;
				}
			case GH_OP_NNEG:
				{
					gh_i128		x = gh_reg_i128(a);

					if (!a->null && x == GH_I128_MIN)
						return GH_VM_ESCAPE;
					*d = *a;
					gh_reg_set_i128(d, -x);
					break;
				}
			case GH_OP_N2F:
				{
					/*
					 * x and 10^imm are exact doubles, so one division rounds
					 * to the double nearest x / 10^imm, as strtod of the
					 * numeric's text does
					 */
					gh_i128		x = a->null ? 0 : gh_reg_i128(a);

					if (x > ((gh_i128) 1 << 53) || x < -((gh_i128) 1 << 53) || in.imm > 19)
						return GH_VM_ESCAPE;
					d->null = a->null;
					gh_reg_set_f8(d, (double) (int64_t) x / (double) gh_pow10_u64(in.imm));
					break;
				}
			case GH_OP_NSCALE:
				{
					gh_i128		x = 0;

					if (!a->null &&
						(in.imm > 38 ||
						 !gh_mul_i128(gh_reg_i128(a), (gh_i128) gh_pow10_u128(in.imm), &x)))
						return GH_VM_ESCAPE;
					*d = *a;
					if (!a->null)
						gh_reg_set_i128(d, x);
					break;
				}
			case GH_OP_NROUND:
				*d = *a;
				if (!a->null)
				{
					gh_reg_set_i128(d, gh_i128_round(gh_reg_i128(a), in.b, in.imm & 255));
					d->dscale = (uint8_t) (in.imm >> 8);
				}
				break;
			case GH_OP_N2I:
				{
					gh_i128		x = gh_reg_i128(a);
					gh_i128		lim = (gh_i128) 1 << (in.imm - 1);

					if (!a->null && (x < -lim || x >= lim))
						err = gh_int_range_error(in.imm);
					d->null = a->null;
					d->lo = (int64_t) x;
					d->hi = 0;
					break;
				}
			case GH_OP_DATEPART:
				{
					int64_t		x = 0;

					if (!a->null && !gh_datepart(a->lo, in.b != 0, in.imm, &x))
						return GH_VM_ESCAPE;
					d->null = a->null;
					gh_reg_set_i128(d, (gh_i128) x);
					d->dscale = 0;
					break;
				}
			case GH_OP_TPACK:
				{
					uint64_t	w = 0;

					if (!a->null &&
						!gh_text_pack((const uint8_t *) (uintptr_t) a->lo, (uint32_t) a->hi,
									  in.imm & 1, in.imm >> 8, (in.imm & 2) != 0, &w))
						return GH_VM_ESCAPE;
					d->null = a->null;
					d->lo = (int64_t) w;
					d->hi = 0;
					break;
				}
			case GH_OP_KEYPACK:
				{
					int			shift = in.imm & 255;
					int			width = (in.imm >> 8) & 255;
					int			nullbit = (in.imm >> 16) - 1;

					if (a->null)
						key |= nullbit >= 0 ? UINT64_C(1) << nullbit : 0;
					else
						key |= ((uint64_t) a->lo &
								(width >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1)) << shift;
					break;
				}
			case GH_OP_KEYMIX:
				key = gh_hash64(key ^ gh_hash64(a->null ? GH_STAR_NULL_WORD : (uint64_t) a->lo,
												GH_STAR_KEY_SEED), GH_SEED_AGG) &
					(~UINT64_C(0) >> in.imm);
				break;
			case GH_OP_OUT_INT:
			case GH_OP_OUT_F8:
				out->vals[in.dst * out->stride] = a->null ? 0 : a->lo;
				out->nulls[in.dst * out->stride] = a->null;
				break;
			case GH_OP_OUT_NUM:
				{
					int			j0 = (int8_t) (in.imm & 255);
					int			n = in.imm >> 8;
					int			scale = in.b;
					gh_i128		x = a->null ? 0 : gh_reg_i128(a);	/* a NULL's value is stale */
					bool		neg = x < 0;
					gh_u128		m = neg ? (gh_u128) 0 - (gh_u128) x : (gh_u128) x;

					for (int k = 0; k < n; k++)
					{
						int			e = 16 * (j0 + k) + scale;	/* the limb's lowest digit in m */
						gh_u128		limb;

						if (a->null)
							limb = 0;
						else if (e >= 0)
							limb = e > 38 ? 0 : (m / gh_pow10_u128(e)) % gh_pow10_u128(16);
						else if (e > -16)
							limb = (m % gh_pow10_u128(e + 16)) * gh_pow10_u64(-e);
						else
							limb = 0;
						out->vals[(in.dst + k) * out->stride] = neg ? -(int64_t) limb : (int64_t) limb;
						out->nulls[(in.dst + k) * out->stride] = a->null;
					}
					out->vals[(in.dst + n) * out->stride] = a->null ? 0 : a->dscale;
					out->nulls[(in.dst + n) * out->stride] = a->null;
					break;
				}
			case GH_OP_OUT_NULL:
				for (int k = 0; k < in.imm; k++)
				{
					out->vals[(in.dst + k) * out->stride] = 0;
					out->nulls[(in.dst + k) * out->stride] = 1;
				}
				break;
			default:
				return GH_VM_ESCAPE;	/* gh_prog_check refuses unknown opcodes */
		}
		if (err != 0)
			return GH_VM_ERROR - err;
	}
}

#endif							/* GPUHASH_STAR_VM_H */
