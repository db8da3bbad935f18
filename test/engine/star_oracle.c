/*-------------------------------------------------------------------------
 *
 * star_oracle.c
 *	  The star tests' oracle: values stored as PostgreSQL stores them, and
 *	  a program (engine.h's gh_prog) run over a row of typed values,
 *	  written from engine.h's definitions and PostgreSQL's functions
 *	  without the engine's interpreter (star_vm.h).
 *
 * The oracle never reads a page: it gets a row's values as the tests made
 * them (integers, floats, numerics as a sign, a magnitude and a display
 * scale, text as bytes) and works each instruction out its own way:
 * integer operations as PostgreSQL's int2pl .. int8mod spell them out,
 * with the compiler's overflow builtins; floats as float.h's float8_pl ..
 * float4_div; numerics as scaled 128-bit integers with the overflow
 * builtins, their display scales as numeric.c's; text by memcmp; limbs of
 * numeric outputs from the value's decimal digits; dimension lookups by
 * linear search.  The numeric and varlena images are written here from
 * numeric.c's and postgres.h's layouts, so the engine's decoding is
 * checked against an encoder of its own.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "star_test.h"

/* the key mixing engine.h's KEYMIX stands for (star_vm.h spells it out) */
#define KEY_SEED	UINT64_C(0x3f84d5b5b5470917)
#define NULL_WORD	UINT64_C(0x9e3779b97f4a7c15)
#define AGG_SEED	UINT64_C(0xbe5466cf34e90c6c)

/* days from 2000-01-01 to 294277-01-01, the first day past every timestamp */
#define TIMESTAMP_END_DAYS (INT64_C(109203528) - INT64_C(2451545))

typedef __int128 i128;
typedef unsigned __int128 u128;

#define I128_MAX ((i128) (((u128) 1 << 127) - 1))

/* ---- types and images ---- */

int
stype_attlen(stype t)
{
	static const int len[] = {
		[ST_BOOL] = 1, [ST_CHAR] = 1, [ST_INT2] = 2, [ST_INT4] = 4, [ST_INT8] = 8,
		[ST_OID] = 4, [ST_FLOAT4] = 4, [ST_FLOAT8] = 8, [ST_DATE] = 4, [ST_TIMESTAMP] = 8,
		[ST_UUID] = 16, [ST_NUMERIC] = -1, [ST_TEXT] = -1, [ST_BPCHAR] = -1
	};

	return len[t];
}

int
stype_attalign(stype t)
{
	static const int align[] = {
		[ST_BOOL] = 1, [ST_CHAR] = 1, [ST_INT2] = 2, [ST_INT4] = 4, [ST_INT8] = 8,
		[ST_OID] = 4, [ST_FLOAT4] = 4, [ST_FLOAT8] = 8, [ST_DATE] = 4, [ST_TIMESTAMP] = 8,
		[ST_UUID] = 1, [ST_NUMERIC] = 4, [ST_TEXT] = 4, [ST_BPCHAR] = 4
	};

	return align[t];
}

void
stable_init(stable *t, int natts, const stype *types, const int8_t *out_of)
{
	memset(t, 0, sizeof(*t));
	t->spec.page_size = 8192;
	t->spec.max_tuples = 291;
	t->spec.natts = natts;
	for (int a = 0; a < natts; a++)
	{
		t->types[a] = types[a];
		t->spec.attlen[a] = (int16_t) stype_attlen(types[a]);
		t->spec.attalign[a] = (uint8_t) stype_attalign(types[a]);
		t->spec.out_of[a] = out_of[a];
		if (out_of[a] >= 0)
		{
			t->att_of[out_of[a]] = a;
			t->spec.nout++;
		}
	}
}

int
u128_digits(u128 n, char *buf)
{
	char		tmp[48];
	int			k = 0;

	do
	{
		tmp[k++] = (char) ('0' + (int) (n % 10));
		n /= 10;
	} while (n != 0);
	for (int i = 0; i < k; i++)
		buf[i] = tmp[k - 1 - i];
	buf[k] = '\0';
	return k;
}

u128
pow10_u128(int k)
{
	u128		p = 1;

	for (int i = 0; i < k; i++)
		p *= 10;
	return p;
}

static void
le16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

/*
 * A numeric's bytes (numeric.c: NumericShort or NumericLong, then base
 * 10000 digits) into buf; returns their length.  The digits are those of
 * the decimal expansion, grouped by four about the decimal point, with the
 * leading and trailing zero groups stripped, as make_result stores them.
 */
static size_t
numeric_bytes(const snum *n, uint8_t *buf)
{
	char		dec[48];
	int			nd = u128_digits(n->mag, dec);
	int			intdigits = nd - n->dscale;	/* may be <= 0 */
	int			groups[40];
	int			ng = 0,
				first,
				last,
				weight;
	int			lead;			/* digits before the first group boundary */
	size_t		len;

	if (n->special)
	{
		le16(buf, n->special == SNUM_NAN ? 0xC000 : n->special == SNUM_PINF ? 0xD000 : 0xF000);
		return 2;
	}
	/*
	 * The groups: the integer part padded on the left to a multiple of 4
	 * digits, the fraction on the right.  Digit position i of dec has the
	 * power 10^(intdigits - 1 - i).
	 */
	lead = intdigits > 0 ? (4 - intdigits % 4) % 4 : 0;
	weight = intdigits > 0 ? (intdigits + lead) / 4 - 1 : -1 - (-intdigits) / 4;
	{
		/* the power of the first digit of the first group */
		int			top = 4 * weight + 3;
		int			bottom = -((n->dscale + 3) / 4) * 4;

		if (bottom > 0)
			bottom = 0;
		for (int p = top; p >= bottom; p -= 4)
		{
			int			g = 0;

			for (int k = 0; k < 4; k++)
			{
				int			pw = p - k;
				int			i = intdigits - 1 - pw;	/* its index in dec */

				g = 10 * g + (i >= 0 && i < nd ? dec[i] - '0' : 0);
			}
			groups[ng++] = g;
		}
	}
	first = 0;
	while (first < ng && groups[first] == 0)
		first++;
	last = ng - 1;
	while (last >= first && groups[last] == 0)
		last--;
	weight -= first;
	if (first > last)
		weight = 0;				/* zero: no digits */
	if (!n->long_format && n->dscale <= 63 && weight >= -64 && weight <= 63)
	{
		le16(buf, 0x8000 | (n->neg ? 0x2000 : 0) | (unsigned) n->dscale << 7 |
			 (weight < 0 ? 0x40 : 0) | ((unsigned) weight & 0x3F));
		len = 2;
	}
	else
	{
		le16(buf, (n->neg ? 0x4000 : 0) | (unsigned) n->dscale);
		le16(buf + 2, (unsigned) (uint16_t) (int16_t) weight);
		len = 4;
	}
	for (int g = first; g <= last; g++, len += 2)
		le16(buf + len, (unsigned) groups[g]);
	return len;
}

size_t
scell_image(stype t, const scell *c, uint8_t *buf)
{
	uint8_t		data[STEXT_MAX + 64];
	size_t		len;
	int			attlen = stype_attlen(t);

	if (attlen > 0)
	{
		for (int b = 0; b < attlen; b++)
			buf[b] = b < 8 ? (uint8_t) (c->raw >> (8 * b)) : (uint8_t) (0x5A + b);
		return (size_t) attlen;
	}
	if (c->var == SV_EXTERNAL)
	{
		/* varattrib_1b_e: 0x01, VARTAG_ONDISK (18), a varatt_external */
		buf[0] = 0x01;
		buf[1] = 18;
		for (int b = 0; b < 16; b++)
			buf[2 + b] = (uint8_t) (0x31 * b + 7);
		return 18;
	}
	if (t == ST_NUMERIC)
		len = numeric_bytes(&c->num, data);
	else
	{
		len = c->tlen;
		memcpy(data, c->text, len);
	}
	if (c->var == SV_COMPRESSED)
	{
		/* va_tcinfo (the raw size), then "compressed" bytes */
		size_t		total = 4 + 4 + len;
		uint32_t	hdr = (uint32_t) (total << 2) | 0x02;

		for (int b = 0; b < 4; b++)
			buf[b] = (uint8_t) (hdr >> (8 * b));
		buf[4] = (uint8_t) len;
		buf[5] = buf[6] = buf[7] = 0;
		memcpy(buf + 8, data, len);
		return total;
	}
	if (c->var == SV_SHORT && len + 1 <= 127)
	{
		buf[0] = (uint8_t) (((len + 1) << 1) | 0x01);
		memcpy(buf + 1, data, len);
		return len + 1;
	}
	{
		uint32_t	hdr = (uint32_t) ((len + 4) << 2);

		for (int b = 0; b < 4; b++)
			buf[b] = (uint8_t) (hdr >> (8 * b));
		memcpy(buf + 4, data, len);
		return len + 4;
	}
}

/* ---- the interpreter ---- */

/* floor division and modulo */
static int64_t
fdiv(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static int64_t
fmod64(int64_t a, int64_t b)
{
	return a - fdiv(a, b) * b;
}

/* days from 2000-01-01 of civil date y-m-d (year 0 = 1 BC), H. Hinnant's days_from_civil */
static int64_t
civil_days(int64_t y, int64_t m, int64_t d)
{
	int64_t		era,
				yoe,
				doy,
				doe;

	y -= m <= 2;
	era = fdiv(y, 400);
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468 - 10957;
}

/* ISO weeks in year y: 53 where it starts on a Thursday, or on a Wednesday in a leap year */
static int
iso_weeks(int64_t y)
{
	int64_t		p = fmod64(y + fdiv(y, 4) - fdiv(y, 100) + fdiv(y, 400), 7);
	int64_t		q = fmod64(y - 1 + fdiv(y - 1, 4) - fdiv(y - 1, 100) + fdiv(y - 1, 400), 7);

	return p == 4 || q == 3 ? 53 : 52;
}

/*
 * EXTRACT's field f of a date or timestamp, or date_trunc's timestamp, by
 * another way than the engine's (days to a civil date by eras of 400 years,
 * as in H. Hinnant's chrono algorithms; ISO weeks by the ordinal day and the
 * weekday): false where PostgreSQL gives no integer or raises an error
 */
static bool civil_local(int64_t v, bool ts, int f, int64_t *out);

/*
 * The same with a time zone's fixed offset (imm >> 8, seconds east): a
 * timestamptz's fields are its local time's, a truncation the local one's
 * instant, a date its local midnight; a result outside the timestamps fails
 */
static bool
civil_field(int64_t v, bool ts, int imm, int64_t *out)
{
	int			f = imm & 255;
	int64_t		east = (int64_t) (imm >> 8) * 1000000;
	bool		ok;

	if (ts && v != INT64_MIN && v != INT64_MAX)
		v += east;
	ok = civil_local(v, ts, f, out);
	if (ok && f >= GH_DATETRUNC_YEAR && *out != INT64_MIN && *out != INT64_MAX)
	{
		*out -= east;
		ok = *out >= INT64_C(-211813488000000000) && *out < INT64_C(9223371331200000000);
	}
	return ok;
}

static bool
civil_local(int64_t v, bool ts, int f, int64_t *out)
{
	int64_t		z,
				zc,
				tod,
				era,
				doe,
				yoe,
				doy,
				mp,
				d,
				m,
				y,
				dow,
				ordinal,
				week,
				wy,
				start;

	if (ts ? (v == INT64_MIN || v == INT64_MAX) : (v == INT32_MIN || v == INT32_MAX))
	{
		*out = ts ? v : v == INT32_MIN ? INT64_MIN : INT64_MAX;
		return f >= GH_DATETRUNC_YEAR;
	}
	if (!ts && f == GH_DATEPART_DAYS)
	{
		*out = v;
		return true;
	}
	if (ts && f == GH_DATEPART_DATE)
	{
		*out = fdiv(v, 86400000000);
		return true;
	}
	if (f == GH_DATEPART_DAYS ||
		(!ts && (f == GH_DATEPART_HOUR || f == GH_DATEPART_MINUTE)) ||
		(!ts && f >= GH_DATETRUNC_YEAR && v >= 106751983))
		return false;
	z = ts ? fdiv(v, 86400000000) : v;
	tod = ts ? fmod64(v, 86400000000) : 0;
	dow = fmod64(z + 6, 7);		/* 2000-01-01 was a Saturday */
	zc = z + 10957 + 719468;	/* days from 1970-03-01 to 2000-01-01, then to 0000-03-01 */
	era = (zc >= 0 ? zc : zc - 146096) / 146097;
	doe = zc - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	ordinal = z - civil_days(y, 1, 1) + 1;
	week = (ordinal - (dow == 0 ? 7 : dow) + 10) / 7;
	wy = y;
	if (week < 1)
		week = iso_weeks(--wy);
	else if (week > iso_weeks(y))
	{
		week = 1;
		wy++;
	}
	switch (f)
	{
		case GH_DATEPART_YEAR:
			*out = y > 0 ? y : y - 1;
			return true;
		case GH_DATEPART_QUARTER:
			*out = (m - 1) / 3 + 1;
			return true;
		case GH_DATEPART_MONTH:
			*out = m;
			return true;
		case GH_DATEPART_DAY:
			*out = d;
			return true;
		case GH_DATEPART_DOW:
			*out = dow;
			return true;
		case GH_DATEPART_ISODOW:
			*out = dow == 0 ? 7 : dow;
			return true;
		case GH_DATEPART_DOY:
			*out = ordinal;
			return true;
		case GH_DATEPART_WEEK:
			*out = week;
			return true;
		case GH_DATEPART_ISOYEAR:
			*out = wy > 0 ? wy : wy - 1;
			return true;
		case GH_DATEPART_HOUR:
			*out = tod / 3600000000;
			return true;
		case GH_DATEPART_MINUTE:
			*out = (tod / 60000000) % 60;
			return true;
		case GH_DATETRUNC_YEAR:
			start = civil_days(y, 1, 1) * 86400000000;
			break;
		case GH_DATETRUNC_QUARTER:
			start = civil_days(y, (m - 1) / 3 * 3 + 1, 1) * 86400000000;
			break;
		case GH_DATETRUNC_MONTH:
			start = civil_days(y, m, 1) * 86400000000;
			break;
		case GH_DATETRUNC_WEEK:
			start = (z - (dow == 0 ? 6 : dow - 1)) * 86400000000;
			break;
		case GH_DATETRUNC_DAY:
			start = z * 86400000000;
			break;
		case GH_DATETRUNC_HOUR:
			start = z * 86400000000 + tod / 3600000000 * 3600000000;
			break;
		case GH_DATETRUNC_MINUTE:
			start = z * 86400000000 + tod / 60000000 * 60000000;
			break;
		case GH_DATETRUNC_SECOND:
			start = z * 86400000000 + tod / 1000000 * 1000000;
			break;
		default:
			return false;
	}
	*out = start;
	return start >= INT64_C(-211813488000000000);
}

typedef struct oreg
{
	bool		null;
	int64_t		lo;
	int64_t		hi;
	int			dscale;
} oreg;

static i128
reg_num(const oreg *r)
{
	return (i128) (((u128) (uint64_t) r->hi << 64) | (uint64_t) r->lo);
}

static void
set_num(oreg *r, i128 v)
{
	r->lo = (int64_t) (uint64_t) (u128) v;
	r->hi = (int64_t) (uint64_t) ((u128) v >> 64);
}

static double
reg_f8(const oreg *r)
{
	double		d;

	memcpy(&d, &r->lo, 8);
	return d;
}

static void
set_f8(oreg *r, double d)
{
	memcpy(&r->lo, &d, 8);
	r->hi = 0;
}

static int64_t
width_min(int width)
{
	return width == 16 ? INT16_MIN : width == 32 ? INT32_MIN : INT64_MIN;
}

static bool
width_fits(i128 v, int width)
{
	return v >= width_min(width) &&
		v <= (width == 16 ? INT16_MAX : width == 32 ? INT32_MAX : INT64_MAX);
}

static int
range_error(int width)
{
	return width == 16 ? GH_DATAERR_INT2_RANGE : width == 32 ? GH_DATAERR_INT4_RANGE :
		GH_DATAERR_INT8_RANGE;
}

/* int2pl .. int8mod for the result type of width bits: 0 or the error */
static int
int_op(int op, int64_t a, int64_t b, int width, int64_t *r)
{
	int64_t		x = 0;
	bool		over = false;

	switch (op)
	{
		case GH_OP_IADD:
			over = __builtin_add_overflow(a, b, &x);
			break;
		case GH_OP_ISUB:
			over = __builtin_sub_overflow(a, b, &x);
			break;
		case GH_OP_IMUL:
			over = __builtin_mul_overflow(a, b, &x);
			break;
		case GH_OP_IDIV:
			if (b == 0)
				return GH_DATAERR_DIV_ZERO;
			if (b == -1)
			{
				/* int4div: -INT_MIN is out of range, the rest negates */
				if (a == width_min(width))
					return range_error(width);
				x = -a;
			}
			else
				x = a / b;
			break;
		case GH_OP_IMOD:
			if (b == 0)
				return GH_DATAERR_DIV_ZERO;
			x = b == -1 ? 0 : a % b;
			break;
		case GH_OP_INEG:
			if (a == width_min(width))
				return range_error(width);
			x = -a;
			break;
	}
	if (over || !width_fits(x, width))
		return range_error(width);
	*r = x;
	return 0;
}

/* float.h's float8_pl .. float8_div, float4 ones in float: 0 or the error */
static int
float_op(int op, double a, double b, double *r)
{
	bool		f4 = op >= GH_OP_F4ADD && op <= GH_OP_F4DIV;
	int			base = f4 ? op - GH_OP_F4ADD : op - GH_OP_FADD;	/* 0 + 1 - 2 * 3 / */

	if (f4)
	{
		float		x = (float) a,
					y = (float) b,
					z;

		if (base == 3 && y == 0.0f && !isnan(x))
			return GH_DATAERR_DIV_ZERO;
		z = base == 0 ? x + y : base == 1 ? x - y : base == 2 ? x * y : x / y;
		if (isinf(z) && !isinf(x) && (base == 3 || !isinf(y)))
			return GH_DATAERR_FLOAT_OVERFLOW;
		if (z == 0.0f && x != 0.0f && (base == 2 ? y != 0.0f : base == 3 ? !isinf(y) : false))
			return GH_DATAERR_FLOAT_UNDERFLOW;
		*r = z;
		return 0;
	}
	if (base == 3 && b == 0.0 && !isnan(a))
		return GH_DATAERR_DIV_ZERO;
	*r = base == 0 ? a + b : base == 1 ? a - b : base == 2 ? a * b : a / b;
	if (isinf(*r) && !isinf(a) && (base == 3 || !isinf(b)))
		return GH_DATAERR_FLOAT_OVERFLOW;
	if (*r == 0.0 && a != 0.0 && (base == 2 ? b != 0.0 : base == 3 ? !isinf(b) : false))
		return GH_DATAERR_FLOAT_UNDERFLOW;
	return 0;
}

/* like_match.c's MatchText, recursive as PostgreSQL writes it (no escapes) */
#define LIKE_TRUE 1
#define LIKE_FALSE 0
#define LIKE_ABORT (-1)

static void
like_next_char(const uint8_t **t, size_t *tlen, bool utf8)
{
	do
	{
		(*t)++;
		(*tlen)--;
	} while (utf8 && *tlen > 0 && (**t & 0xC0) == 0x80);
}

static int
like_match(const uint8_t *t, size_t tlen, const uint8_t *p, size_t plen, bool utf8)
{
	if (plen == 1 && *p == '%')
		return LIKE_TRUE;
	while (tlen > 0 && plen > 0)
	{
		if (*p == '%')
		{
			p++, plen--;
			while (plen > 0)
			{
				if (*p == '%')
					p++, plen--;
				else if (*p == '_')
				{
					if (tlen <= 0)
						return LIKE_ABORT;
					like_next_char(&t, &tlen, utf8);
					p++, plen--;
				}
				else
					break;
			}
			if (plen <= 0)
				return LIKE_TRUE;
			while (tlen > 0)
			{
				if (*t == *p)
				{
					int			matched = like_match(t, tlen, p, plen, utf8);

					if (matched != LIKE_FALSE)
						return matched;
				}
				like_next_char(&t, &tlen, utf8);
			}
			return LIKE_ABORT;
		}
		else if (*p == '_')
		{
			like_next_char(&t, &tlen, utf8);
			p++, plen--;
			continue;
		}
		else if (*p != *t)
			return LIKE_FALSE;
		t++, tlen--;
		p++, plen--;
	}
	if (tlen > 0)
		return LIKE_FALSE;
	while (plen > 0 && *p == '%')
		p++, plen--;
	return plen <= 0 ? LIKE_TRUE : LIKE_ABORT;
}

/* float.c's dround, dfloor, dceil, dtrunc as PostgreSQL spells them */
static double
float_round(double x, int how)
{
	if (how == GH_ROUND_FLOOR)
		return floor(x);
	if (how == GH_ROUND_CEIL)
		return ceil(x);
	if (how == GH_ROUND_TRUNC)
	{
		if (x >= 0)
			return floor(x);
		return -floor(-x);
	}
	return rint(x);
}

/* dtoi2 .. dtoi8: rint, then float.h's FLOAT8_FITS_IN_INT16 .. INT64 */
static int
float_to_int(double x, int width, int64_t *r)
{
	double		min = width == 16 ? (double) INT16_MIN : width == 32 ? (double) INT32_MIN :
		(double) INT64_MIN;

	x = rint(x);
	if (isnan(x) || !(x >= min && x < -min))
		return range_error(width);
	*r = (int64_t) x;
	return 0;
}

/*
 * A numeric's k lowest digits dropped as numeric.c's round_var, trunc_var,
 * floor_var and ceil_var drop them, on the decimal digits of its magnitude:
 * round_var looks at the first digit dropped (5 or more rounds the
 * magnitude up), floor and ceil move a value with any digit dropped away
 * from zero on their side.
 */
static i128
numeric_round(i128 x, int k, int how)
{
	u128		m = x < 0 ? -(u128) x : (u128) x;
	char		dec[48];
	int			n = u128_digits(m, dec);
	u128		q = 0;
	bool		dropped = false,
				up;

	for (int i = 0; i < n - k; i++)
		q = q * 10 + (u128) (dec[i] - '0');
	for (int i = n - k < 0 ? 0 : n - k; i < n; i++)
		dropped |= dec[i] != '0';
	if (how == GH_ROUND_NEAREST)
		up = k > 0 && n - k >= 0 && dec[n - k] >= '5';
	else if (how == GH_ROUND_FLOOR)
		up = dropped && x < 0;
	else if (how == GH_ROUND_CEIL)
		up = dropped && x > 0;
	else
		up = false;
	if (up)
		q++;
	return x < 0 ? -(i128) q : (i128) q;
}

/* float8 comparison: NaN equals NaN and sorts above everything */
static int
float_cmp(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b) ? 0 : isnan(a) ? 1 : -1;
	return (a > b) - (a < b);
}

static bool
cmp_holds(int c, int how)
{
	switch (how & 7)
	{
		case GH_CMP_EQ:
			return c == 0;
		case GH_CMP_NE:
			return c != 0;
		case GH_CMP_LT:
			return c < 0;
		case GH_CMP_LE:
			return c <= 0;
		case GH_CMP_GT:
			return c > 0;
		default:
			return c >= 0;
	}
}

/* date_cmp_timestamp_internal */
static int
date_ts_cmp(int64_t date, int64_t ts)
{
	i128		d;

	if (date == INT32_MIN)
		return ts == INT64_MIN ? 0 : -1;
	if (date == INT32_MAX)
		return ts == INT64_MAX ? 0 : 1;
	if (date >= TIMESTAMP_END_DAYS)
		return ts == INT64_MAX ? -1 : 1;
	d = (i128) date * 86400 * 1000000;
	return (d > ts) - (d < ts);
}

static size_t
bpchar_len(const uint8_t *p, size_t len)
{
	while (len > 0 && p[len - 1] == ' ')
		len--;
	return len;
}

/*
 * textlen's and bpcharlen's count: characters stepped over by the length
 * their first byte gives (pg_utf_mblen), or bytes
 */
static int64_t
text_length(const uint8_t *p, size_t len, bool utf8, bool bpchar)
{
	int64_t		n = 0;

	if (bpchar)
		len = bpchar_len(p, len);
	if (!utf8)
		return (int64_t) len;
	for (size_t i = 0; i < len; n++)
		i += p[i] < 0x80 ? 1 : (p[i] & 0xE0) == 0xC0 ? 2 : (p[i] & 0xF0) == 0xE0 ? 3 :
			(p[i] & 0xF8) == 0xF0 ? 4 : 1;
	return n;
}

/* the bytes of the character at p (pg_utf_mblen's lengths), or 1 */
static size_t
char_bytes(const uint8_t *p, bool utf8)
{
	if (!utf8)
		return 1;
	return *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 :
		(*p & 0xF8) == 0xF0 ? 4 : 1;
}

/*
 * text_substring's answer for substring(p from s for l) (l -1: no length
 * given; never another negative one), written as it reads: the end E
 * (none past INT32_MAX), S1, L1, then characters stepped over.  The answer
 * is p + *from, *n bytes.
 */
static void
text_substr(const uint8_t *p, size_t len, int32_t s, int32_t l, bool utf8, bool bpchar,
			size_t *from, size_t *n)
{
	int64_t		s1 = s < 1 ? 1 : s,
				l1 = -1;
	size_t		i = 0,
				c;

	if (bpchar)
		len = bpchar_len(p, len);
	*from = 0;
	*n = 0;
	if (l >= 0 && (int64_t) s + l <= INT32_MAX)
	{
		int64_t		e = (int64_t) s + l;

		if (e < 1)
			return;
		l1 = e - s1;
	}
	for (c = 1; c < s1 && i < len; c++)
		i += char_bytes(p + i, utf8);
	if (i >= len)
		return;
	*from = i;
	for (c = 0; (l1 < 0 || (int64_t) c < l1) && i < len; c++)
		i += char_bytes(p + i, utf8);
	*n = (i > len ? len : i) - *from;
}

static uint64_t
fmix(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/* limb j of x (a numeric at static scale scale): its digits 10^16j .. 10^(16j + 15) */
static int64_t
limb_of(i128 x, int scale, int j)
{
	char		dec[48];
	u128		m = x < 0 ? -(u128) x : (u128) x;
	int			nd = u128_digits(m, dec);
	int64_t		limb = 0;

	for (int t = 15; t >= 0; t--)
	{
		int			pw = 16 * j + t + scale;	/* the digit's power in m */
		int			i = nd - 1 - pw;

		limb = 10 * limb + (pw >= 0 && i >= 0 ? dec[i] - '0' : 0);
	}
	return x < 0 ? -limb : limb;
}

/* A stored numeric at static scale: false (escape) unless it fits. */
static bool
numeric_at_scale(const scell *c, int scale, oreg *d)
{
	const snum *n = &c->num;
	u128		v;

	if (n->special || n->dscale > scale ||
		__builtin_mul_overflow(n->mag, pow10_u128(scale - n->dscale), &v) || v > (u128) I128_MAX)
		return false;
	set_num(d, n->neg ? -(i128) v : (i128) v);
	d->dscale = n->dscale;
	return true;
}

/* the value a fixed-width column's first width bytes make, sign- or zero-extended */
static int64_t
fixed_value(uint64_t raw, int width, bool is_signed)
{
	uint64_t	mask = width >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * width)) - 1;
	uint64_t	v = raw & mask;

	if (is_signed && width < 8 && (v >> (8 * width - 1)) & 1)
		v |= ~mask;
	return (int64_t) v;
}

void
oracle_row(const gh_prog *p, const stable *t, const srow *row, const sdim *dims,
		   oresult *out)
{
	oreg		r[GH_PROG_MAX_REGS];
	int64_t		dimrow[GH_PROG_MAX_DIMS];
	uint64_t	key = 0;

	memset(r, 0, sizeof(r));
	memset(out, 0, sizeof(*out));
	for (int pc = 0;;)
	{
		const gh_instr *in = &p->code[pc++];
		oreg	   *d = &r[in->dst];
		oreg		a = r[in->a];
		oreg		b = r[in->b];
		int			err = 0;

		switch (in->op)
		{
			case GH_OP_END:
				out->kind = O_KEEP;
				out->key = key;
				return;
			case GH_OP_DROP:
				out->kind = O_DROP;
				return;
			case GH_OP_QUAL:
				if (a.null || !a.lo)
				{
					out->kind = O_DROP;
					return;
				}
				break;
			case GH_OP_JMP:
				pc = in->imm;
				break;
			case GH_OP_JFALSE:
				pc = a.null || !a.lo ? in->imm : pc;
				break;
			case GH_OP_JNULL:
				pc = a.null ? in->imm : pc;
				break;
			case GH_OP_JNOTNULL:
				pc = !a.null ? in->imm : pc;
				break;
			case GH_OP_AND:
				/* false decides it; NULL makes it NULL unless a false follows */
				if (!a.null && !a.lo)
				{
					d->null = false;
					d->lo = 0;
					pc = in->imm;
				}
				else if (a.null)
					d->null = true;
				break;
			case GH_OP_OR:
				if (!a.null && a.lo)
				{
					d->null = false;
					d->lo = 1;
					pc = in->imm;
				}
				else if (a.null)
					d->null = true;
				break;
			case GH_OP_BOOL:
				*d = (oreg) {false, in->imm, 0, 0};
				break;
			case GH_OP_NOT:
				*d = (oreg) {a.null, !a.lo, 0, 0};
				break;
			case GH_OP_ISNULL:
				*d = (oreg) {false, a.null, 0, 0};
				break;
			case GH_OP_ISNOTNULL:
				*d = (oreg) {false, !a.null, 0, 0};
				break;
			case GH_OP_MOVE:
				*d = a;
				break;
			case GH_OP_SETNULL:
				d->null = true;
				break;
			case GH_OP_LDCONST:
				{
					const gh_pconst *k = &p->consts[in->imm];

					*d = (oreg) {k->null, k->lo, k->hi, k->dscale};
					if (in->b)
						d->lo = (int64_t) (intptr_t) (p->bytes + k->lo);
					break;
				}
			case GH_OP_LDCOL_INT:
			case GH_OP_LDCOL_UINT:
			case GH_OP_LDCOL_F4:
			case GH_OP_LDCOL_F8:
			case GH_OP_LDCOL_NUM:
			case GH_OP_LDCOL_TEXT:
				{
					int			att = t->att_of[in->imm];
					const scell *c = &row->cells[att];

					*d = (oreg) {true, 0, 0, 0};
					if (att >= row->tnatts || c->null)
						break;
					d->null = false;
					if (in->op == GH_OP_LDCOL_INT || in->op == GH_OP_LDCOL_UINT)
						d->lo = fixed_value(c->raw, in->b, in->op == GH_OP_LDCOL_INT);
					else if (in->op == GH_OP_LDCOL_F4)
					{
						float		f;
						uint32_t	bits = (uint32_t) c->raw;

						memcpy(&f, &bits, 4);
						set_f8(d, f);
					}
					else if (in->op == GH_OP_LDCOL_F8)
						d->lo = (int64_t) c->raw;
					else if (c->var == SV_COMPRESSED || c->var == SV_EXTERNAL)
					{
						out->kind = O_ESCAPE;
						return;
					}
					else if (in->op == GH_OP_LDCOL_NUM)
					{
						if (!numeric_at_scale(c, in->b, d))
						{
							out->kind = O_ESCAPE;
							return;
						}
					}
					else
					{
						d->lo = (int64_t) (intptr_t) c->text;
						d->hi = c->tlen;
					}
					break;
				}
			case GH_OP_PROBE:
				{
					const sdim *dm = &dims[in->imm];
					size_t		i = 0;

					bool		found;

					while (!a.null && i < dm->n && dm->keys[i] != (uint64_t) a.lo)
						i++;
					found = !a.null && i < dm->n;
					if (in->b == GH_PROBE_ANTI ? found : !found && in->b != GH_PROBE_LEFT)
					{
						out->kind = O_DROP;
						return;
					}
					dimrow[in->imm] = found ? (int64_t) i : -1;
					break;
				}
			case GH_OP_LDDIM:
				{
					const sdim *dm = &dims[in->imm >> 8];
					int			c = in->imm & 255;
					int64_t		i = dimrow[in->imm >> 8];

					if (i < 0)
					{
						/* a LEFT probe found no row: NULL */
						d->null = true;
						d->lo = d->hi = 0;
						d->dscale = 0;
						break;
					}
					d->null = dm->nulls[c] != NULL && dm->nulls[c][i];
					d->lo = dm->lo[c][i];
					d->hi = dm->hi[c] != NULL ? dm->hi[c][i] : 0;
					d->dscale = dm->dscale[c] != NULL ? dm->dscale[c][i] : 0;
					break;
				}
			case GH_OP_IADD:
			case GH_OP_ISUB:
			case GH_OP_IMUL:
			case GH_OP_IDIV:
			case GH_OP_IMOD:
			case GH_OP_INEG:
				{
					int64_t		x = 0;

					if (a.null || (in->op != GH_OP_INEG && b.null))
					{
						*d = (oreg) {true, 0, 0, 0};
						break;
					}
					err = int_op(in->op, a.lo, b.lo, in->imm, &x);
					*d = (oreg) {false, x, 0, 0};
					break;
				}
			case GH_OP_ICAST:
				if (!a.null && !width_fits(a.lo, in->imm))
					err = range_error(in->imm);
				*d = a;
				break;
			case GH_OP_I2F:
				*d = (oreg) {a.null, 0, 0, 0};
				set_f8(d, (double) a.lo);
				break;
			case GH_OP_DATEPART:
				*d = (oreg) {a.null, 0, 0, 0};
				if (!a.null)
				{
					int64_t		x;

					if (!civil_field(a.lo, in->b != 0, in->imm, &x))
					{
						out->kind = O_ESCAPE;
						return;
					}
					set_num(d, x);
				}
				break;
			case GH_OP_I2N:
				*d = (oreg) {a.null, 0, 0, 0};
				set_num(d, a.lo);
				break;
			case GH_OP_ICMP:
			case GH_OP_FCMP:
			case GH_OP_NCMP:
			case GH_OP_DTCMP:
			case GH_OP_TCMP:
				{
					int			c;

					if (a.null || b.null)
					{
						*d = (oreg) {true, 0, 0, 0};
						break;
					}
					if (in->op == GH_OP_ICMP)
						c = (a.lo > b.lo) - (a.lo < b.lo);
					else if (in->op == GH_OP_FCMP)
						c = float_cmp(reg_f8(&a), reg_f8(&b));
					else if (in->op == GH_OP_NCMP)
						c = (reg_num(&a) > reg_num(&b)) - (reg_num(&a) < reg_num(&b));
					else if (in->op == GH_OP_DTCMP)
						c = date_ts_cmp(a.lo, b.lo);
					else
					{
						const uint8_t *x = (const uint8_t *) (intptr_t) a.lo;
						const uint8_t *y = (const uint8_t *) (intptr_t) b.lo;
						size_t		xl = (size_t) a.hi,
									yl = (size_t) b.hi;

						if (in->imm & GH_CMP_BPCHAR)
						{
							xl = bpchar_len(x, xl);
							yl = bpchar_len(y, yl);
						}
						c = xl == yl && memcmp(x, y, xl) == 0 ? 0 : 1;
					}
					*d = (oreg) {false, cmp_holds(c, in->imm), 0, 0};
					break;
				}
			case GH_OP_FADD:
			case GH_OP_FSUB:
			case GH_OP_FMUL:
			case GH_OP_FDIV:
			case GH_OP_F4ADD:
			case GH_OP_F4SUB:
			case GH_OP_F4MUL:
			case GH_OP_F4DIV:
				{
					double		x = 0;

					if (a.null || b.null)
					{
						*d = (oreg) {true, 0, 0, 0};
						break;
					}
					err = float_op(in->op, reg_f8(&a), reg_f8(&b), &x);
					*d = (oreg) {false, 0, 0, 0};
					set_f8(d, x);
					break;
				}
			case GH_OP_FNEG:
				*d = (oreg) {a.null, 0, 0, 0};
				set_f8(d, -reg_f8(&a));
				break;
			case GH_OP_F2ORD:
				{
					double		f = reg_f8(&a);
					int64_t		bits;

					if (isnan(f))
						bits = INT64_C(0x7ff8000000000000);
					else
					{
						f = f == 0.0 && (in->imm & 1) ? 0.0 : f;	/* imm 1: -0 is 0 */
						memcpy(&bits, &f, 8);
					}
					*d = (oreg) {a.null, bits < 0 ? bits ^ INT64_MAX : bits, 0, 0};
					break;
				}
			case GH_OP_NADD:
			case GH_OP_NSUB:
			case GH_OP_NMUL:
				{
					i128		x;
					bool		over;

					if (a.null || b.null)
					{
						*d = (oreg) {true, 0, 0, 0};
						break;
					}
					if (in->op == GH_OP_NADD)
						over = __builtin_add_overflow(reg_num(&a), reg_num(&b), &x);
					else if (in->op == GH_OP_NSUB)
						over = __builtin_sub_overflow(reg_num(&a), reg_num(&b), &x);
					else
						over = __builtin_mul_overflow(reg_num(&a), reg_num(&b), &x) ||
							a.dscale + b.dscale > 255;
					if (over)
					{
						out->kind = O_ESCAPE;
						return;
					}
					*d = (oreg) {false, 0, 0,
						in->op == GH_OP_NMUL ? a.dscale + b.dscale :
					a.dscale > b.dscale ? a.dscale : b.dscale};
					set_num(d, x);
					break;
				}
			case GH_OP_LIKE:
				*d = (oreg) {a.null || b.null, 0, 0, 0};
				if (!d->null)
					d->lo = like_match((const uint8_t *) (intptr_t) a.lo, (size_t) a.hi,
									   (const uint8_t *) (intptr_t) b.lo, (size_t) b.hi,
									   in->imm != 0) == LIKE_TRUE;
				break;
			case GH_OP_TLEN:
				*d = (oreg) {a.null, 0, 0, 0};
				if (!d->null)
					d->lo = text_length((const uint8_t *) (intptr_t) a.lo, (size_t) a.hi,
										(in->imm & 1) != 0, (in->imm & 2) != 0);
				break;
			case GH_OP_SUBSTR:
				*d = (oreg) {a.null || b.null, 0, 0, 0};
				if (!d->null)
				{
					size_t		from,
								n;

					text_substr((const uint8_t *) (intptr_t) a.lo, (size_t) a.hi, (int32_t) b.lo,
								in->imm >> 2, (in->imm & 1) != 0, (in->imm & 2) != 0, &from, &n);
					d->lo = a.lo + (int64_t) from;
					d->hi = (int64_t) n;
				}
				break;
			case GH_OP_FROUND:
				*d = (oreg) {a.null, 0, 0, 0};
				set_f8(d, float_round(reg_f8(&a), in->imm));
				break;
			case GH_OP_F2I:
				{
					int64_t		x = 0;

					if (!a.null)
						err = float_to_int(reg_f8(&a), in->imm, &x);
					*d = (oreg) {a.null, x, 0, 0};
					break;
				}
			case GH_OP_NROUND:
				*d = a;
				if (!a.null)
				{
					set_num(d, numeric_round(reg_num(&a), in->b, in->imm & 255));
					d->dscale = in->imm >> 8;
				}
				break;
			case GH_OP_N2I:
				*d = (oreg) {a.null, 0, 0, 0};
				if (!a.null)
				{
					if (!width_fits(reg_num(&a), in->imm))
						err = range_error(in->imm);
					else
						d->lo = (int64_t) reg_num(&a);
				}
				break;
			case GH_OP_NNEG:
				if (!a.null && reg_num(&a) == -I128_MAX - 1)
				{
					out->kind = O_ESCAPE;
					return;
				}
				*d = a;
				if (!a.null)
					set_num(d, -reg_num(&a));
				break;
			case GH_OP_N2F:
				{
					/* as PostgreSQL: the numeric's text, read by strtod */
					i128		x = a.null ? 0 : reg_num(&a);
					u128		m = x < 0 ? -(u128) x : (u128) x;
					char		digits[48],
								text[64];
					int			n,
								len,
								k = 0;

					*d = (oreg) {a.null, 0, 0, 0};
					if (a.null)
						break;
					if (m > ((u128) 1 << 53) || in->imm > 19)
					{
						out->kind = O_ESCAPE;
						return;
					}
					n = u128_digits(m, digits);
					if (x < 0)
						text[k++] = '-';
					/* the digits, zeros in front so that one comes before the point */
					len = n > in->imm ? n : in->imm + 1;
					for (int j = 0; j < len; j++)
					{
						if (in->imm > 0 && j == len - in->imm)
							text[k++] = '.';
						text[k++] = j < len - n ? '0' : digits[j - (len - n)];
					}
					text[k] = '\0';
					set_f8(d, strtod(text, NULL));
					break;
				}
			case GH_OP_NSCALE:
				{
					i128		x;

					*d = a;
					if (a.null)
						break;
					if (in->imm > 38 ||
						__builtin_mul_overflow(reg_num(&a), (i128) pow10_u128(in->imm), &x))
					{
						out->kind = O_ESCAPE;
						return;
					}
					set_num(d, x);
					break;
				}
			case GH_OP_TPACK:
				{
					const uint8_t *x = (const uint8_t *) (intptr_t) a.lo;
					size_t		len = (size_t) a.hi;
					uint64_t	w = 0;

					if (!a.null)
					{
						size_t		from = 7 * (size_t) (in->imm >> 8);
						size_t		n = 0;

						if (in->imm & 1)
							len = bpchar_len(x, len);
						if (!(in->imm & 2) && len > from + 7)
						{
							out->kind = O_ESCAPE;
							return;
						}
						for (size_t i = from; i < len && n < 7; i++, n++)
							w |= (uint64_t) x[i] << (8 * n);
						w |= (uint64_t) n << 56;
					}
					*d = (oreg) {a.null, (int64_t) w, 0, 0};
					break;
				}
			case GH_OP_KEYPACK:
				{
					int			shift = in->imm & 255,
								width = (in->imm >> 8) & 255,
								nullbit = (in->imm >> 16) - 1;
					uint64_t	v = (uint64_t) a.lo;

					if (width < 64)
						v &= (UINT64_C(1) << width) - 1;
					if (!a.null)
						key |= v << shift;
					else if (nullbit >= 0)
						key |= UINT64_C(1) << nullbit;
					break;
				}
			case GH_OP_KEYMIX:
				key = fmix(key ^ fmix((a.null ? NULL_WORD : (uint64_t) a.lo) ^ KEY_SEED) ^ AGG_SEED);
				if (in->imm > 0)
					key &= (UINT64_C(1) << (64 - in->imm)) - 1;
				break;
			case GH_OP_OUT_INT:
			case GH_OP_OUT_F8:
				out->vals[in->dst] = a.null ? 0 : a.lo;
				out->nulls[in->dst] = a.null;
				break;
			case GH_OP_OUT_NUM:
				{
					int			j0 = (int8_t) (in->imm & 255),
								n = in->imm >> 8;

					for (int k = 0; k < n; k++)
					{
						out->vals[in->dst + k] = a.null ? 0 : limb_of(reg_num(&a), in->b, j0 + k);
						out->nulls[in->dst + k] = a.null;
					}
					out->vals[in->dst + n] = a.null ? 0 : a.dscale;
					out->nulls[in->dst + n] = a.null;
					break;
				}
			case GH_OP_OUT_NULL:
				for (int k = 0; k < in->imm; k++)
				{
					out->vals[in->dst + k] = 0;
					out->nulls[in->dst + k] = 1;
				}
				break;
			default:
				printf("engine_test: the oracle has no opcode %d\n", in->op);
				exit(2);
		}
		if (err != 0)
		{
			out->kind = O_ERROR;
			out->err = err;
			return;
		}
	}
}
