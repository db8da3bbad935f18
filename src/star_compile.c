/*-------------------------------------------------------------------------
 *
 * star_compile.c
 *	  Turning a GpuStarAgg's expressions into the program the device runs
 *	  for every fact row (engine.h, "the star pipeline").
 *
 * INTERFACE ROUTINES
 *		star_expr_ok		can the device evaluate this expression? (planner)
 *		star_compile		the program of a plan node (executor)
 *		star_key_hashed		is a group key a hash of its fields? (planner)
 *
 * Both run the same code: the planner compiles into a program it throws
 * away, so what it accepts is exactly what the executor compiles.  The
 * program evaluates, in order: the scan's quals (each may drop the row),
 * one probe per dimension (a row without its key in a dimension is
 * dropped), the join clauses no dimension applies alone, the grouping
 * columns into the key, then each aggregate's FILTER
 * and argument into its output columns.  The order is PostgreSQL's: quals
 * before joins, arguments only for joined rows, so a row that would raise
 * an error in PostgreSQL raises it here, and no other.
 *
 * WHAT THE DEVICE EVALUATES
 *
 * Constants, Params (evaluated once, at executor start), fact columns,
 * payload values; the operators + - * / % and comparisons of the integer
 * types (mixed widths as PostgreSQL's cross-type operators compute them),
 * comparisons of dates, times, timestamps, bools and oids, date against
 * timestamp; + - * / and comparisons of float4 and float8; + - * and
 * comparisons of numeric; = and <> of text, varchar and bpchar under a
 * deterministic collation, and LIKE of a constant pattern (c_like); AND,
 * OR, NOT, IS [NOT] NULL, IN (a list), CASE, COALESCE; the casts between
 * integer types and from integers to numeric and float8, floats and
 * numerics to integers, timestamps to dates; round, floor, ceil and trunc
 * of floats and numerics, mod() of integers; EXTRACT, date_part and
 * date_trunc (c_datefunc); length(), char_length() and octet_length() of
 * text and bpchar (c_length); substring(), substr() and left() of text by a
 * constant count, and bpchar's cast to text (c_substr).  Anything else is
 * not offered on the device.
 *
 * NUMERIC
 *
 * A numeric value is a 128-bit integer at a static scale: a column's is its
 * declared scale, a constant's its display scale; + and - first raise the
 * operand of smaller scale, * adds the scales, as numeric.c's display
 * scales do, so the result's digits are exactly PostgreSQL's.  The compiler
 * also tracks how many digits a value can have, which fixes the limbs a
 * sum's output columns need (agg_numeric.c's layout).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "pgtime.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/numeric.h"
#include "parser/scansup.h"
#include "utils/lsyscache.h"

#include "gpuhash.h"
#include "keys.h"
#include "star.h"
#include "star_vm.h"

typedef enum SvKind
{
	SV_INT,						/* every integer type, bool, date, time, timestamp, oid */
	SV_FLOAT,
	SV_NUM,
	SV_TEXT
} SvKind;

/* a compiled value: its register and its static type */
typedef struct Sv
{
	int			reg;
	SvKind		kind;
	Oid			type;
	int			scale;			/* SV_NUM */
	int			digits;			/* SV_NUM: at most this many digits at that scale */
	bool		bpchar;			/* SV_TEXT */
	bool		integral;		/* SV_FLOAT: an integer's value (never -0 nor NaN) */
} Sv;

typedef struct Cx
{
	StarCompileInput *in;
	gh_prog    *p;
	uint32		live;			/* registers in use */
	const char *why;			/* the first reason this cannot be compiled */
	Sv			casetest;		/* the CASE operand being compared */
	bool		has_casetest;
} Cx;

#define FAILED(cx) ((cx)->why != NULL)

static Sv	c_expr(Cx *cx, Node *node);

static Sv
fail(Cx *cx, const char *why)
{
	Sv			sv = {0};

	if (cx->why == NULL)
		cx->why = why;
	return sv;
}

static int
alloc_reg(Cx *cx)
{
	for (int r = 0; r < GH_PROG_MAX_REGS; r++)
		if (!(cx->live & (UINT32_C(1) << r)))
		{
			cx->live |= UINT32_C(1) << r;
			cx->p->nregs = Max(cx->p->nregs, r + 1);
			return r;
		}
	fail(cx, "the expression needs too many registers");
	return 0;
}

static void
free_reg(Cx *cx, int r)
{
	cx->live &= ~(UINT32_C(1) << r);
}

static int
emit(Cx *cx, int op, int dst, int a, int b, int32 imm)
{
	gh_instr   *in;

	if (cx->p->ncode >= GH_PROG_MAX_CODE)
	{
		fail(cx, "the program is too long");
		return 0;
	}
	in = &cx->p->code[cx->p->ncode];
	in->op = (uint8) op;
	in->dst = (uint8) dst;
	in->a = (uint8) a;
	in->b = (uint8) b;
	in->imm = imm;
	return cx->p->ncode++;
}

/* make the jump at pc go to the next instruction */
static void
land(Cx *cx, int pc)
{
	if (!FAILED(cx))
		cx->p->code[pc].imm = cx->p->ncode;
}

static int
add_const(Cx *cx, int64 lo, int64 hi, bool isnull, int dscale)
{
	gh_pconst  *k;

	if (cx->p->nconsts >= GH_PROG_MAX_CONSTS)
	{
		fail(cx, "the program has too many constants");
		return 0;
	}
	k = &cx->p->consts[cx->p->nconsts];
	k->lo = lo;
	k->hi = hi;
	k->null = isnull;
	k->dscale = (uint8) dscale;
	return cx->p->nconsts++;
}

/* ---- types ---- */

static bool
int_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID;
}

/* the kind of a value of type t, or false if the device has none */
static bool
kind_of(Oid t, SvKind *kind)
{
	switch (t)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case BOOLOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case OIDOID:
			*kind = SV_INT;
			return true;
		case FLOAT4OID:
		case FLOAT8OID:
			*kind = SV_FLOAT;
			return true;
		case NUMERICOID:
			*kind = SV_NUM;
			return true;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			*kind = SV_TEXT;
			return true;
	}
	return false;
}

/* the width PostgreSQL checks an integer type's results against */
static int
int_width(Oid t)
{
	return t == INT2OID ? 16 : t == INT4OID ? 32 : 64;
}

/* digits of a numeric(p, s), or of an unconstrained one (38: all of 128 bits) */
void
star_payload_numeric(StarPayload *p, Oid type, int32 typmod)
{
	p->scale = 0;
	p->digits = 38;
	if (type == NUMERICOID && typmod >= (int32) VARHDRSZ)
	{
		int32		tm = typmod - VARHDRSZ;

		p->digits = (tm >> 16) & 0xFFFF;
		p->scale = (int) ((int16) (tm & 0xFFFF));
		if (p->scale < 0 || p->scale > p->digits)
		{
			p->scale = 0;
			p->digits = 38;
		}
	}
}

static int
digits_of_u128(gh_u128 m)
{
	int			d = 0;

	while (m != 0)
	{
		d++;
		m /= 10;
	}
	return Max(d, 1);
}

/* ---- leaves ---- */

/* the output column of fact attribute attno in the page description */
static int
fact_col(Cx *cx, AttrNumber attno)
{
	StarFact   *f = &cx->in->fact;

	for (int i = 0; i < f->ncols; i++)
		if (f->attno[i] == attno)
			return i;
	if (f->ncols >= GH_PAGE_MAX_OUT)
	{
		fail(cx, "the expressions read too many columns");
		return 0;
	}
	f->attno[f->ncols] = attno;
	return f->ncols++;
}

static Sv
c_fact_var(Cx *cx, Var *var)
{
	TupleDesc	desc = cx->in->fact.desc;
	Form_pg_attribute att;
	Sv			sv = {0};
	int			col;

	if (var->varattno <= 0 || var->varattno > desc->natts)
		return fail(cx, "a system column or the whole row");
	att = TupleDescAttr(desc, var->varattno - 1);
	if (att->attisdropped || att->atthasmissing || att->atttypid != var->vartype)
		return fail(cx, "a column with a default added later");
	if (!kind_of(att->atttypid, &sv.kind))
		return fail(cx, "a column of a type the device does not read");
	col = fact_col(cx, var->varattno);
	sv.type = att->atttypid;
	sv.reg = alloc_reg(cx);
	switch (sv.kind)
	{
		case SV_INT:
			if (att->attlen != 1 && att->attlen != 2 && att->attlen != 4 && att->attlen != 8)
				return fail(cx, "a column of an unusual width");
			emit(cx, att->atttypid == OIDOID ? GH_OP_LDCOL_UINT : GH_OP_LDCOL_INT, sv.reg,
				 0, att->attlen, col);
			break;
		case SV_FLOAT:
			emit(cx, att->atttypid == FLOAT4OID ? GH_OP_LDCOL_F4 : GH_OP_LDCOL_F8, sv.reg, 0, 0,
				 col);
			break;
		case SV_NUM:
			{
				StarPayload np;

				star_payload_numeric(&np, att->atttypid, att->atttypmod);
				if (att->atttypmod < 0)
					return fail(cx, "a numeric column without a declared precision");
				sv.scale = np.scale;
				sv.digits = np.digits;
				emit(cx, GH_OP_LDCOL_NUM, sv.reg, 0, sv.scale, col);
				break;
			}
		case SV_TEXT:
			sv.bpchar = att->atttypid == BPCHAROID;
			emit(cx, GH_OP_LDCOL_TEXT, sv.reg, 0, 0, col);
			break;
	}
	return sv;
}

static Sv
c_payload(Cx *cx, Var *var)
{
	StarPayload *pl;
	Sv			sv = {0};

	if (var->varattno < 1 || var->varattno > cx->in->npayloads)
		return fail(cx, "no such payload value");
	pl = &cx->in->payloads[var->varattno - 1];
	if (!kind_of(pl->type, &sv.kind) || sv.kind == SV_TEXT)
		return fail(cx, "a dimension value of a type the device does not keep");
	sv.type = pl->type;
	sv.scale = pl->scale;
	sv.digits = pl->digits;
	sv.reg = alloc_reg(cx);
	emit(cx, GH_OP_LDDIM, sv.reg, 0, 0, (pl->dim << 8) | pl->col);
	return sv;
}

/* a constant of type t (value, or NULL) */
static Sv
c_datum(Cx *cx, Oid t, Datum value, bool isnull)
{
	Sv			sv = {0};
	int64		lo = 0,
				hi = 0;
	int			dscale = 0;
	bool		text = false;

	if (!kind_of(t, &sv.kind))
		return fail(cx, "a constant of a type the device does not have");
	sv.type = t;
	/* a text register, NULL or not, is what text comparisons take */
	text = sv.kind == SV_TEXT;
	sv.bpchar = t == BPCHAROID;
	if (!isnull)
	{
		switch (sv.kind)
		{
			case SV_INT:
				lo = t == INT2OID ? DatumGetInt16(value) :
					t == INT4OID || t == DATEOID ? DatumGetInt32(value) :
					t == BOOLOID ? DatumGetBool(value) :
					t == OIDOID ? (int64) DatumGetObjectId(value) : DatumGetInt64(value);
				break;
			case SV_FLOAT:
				{
					double		d = t == FLOAT4OID ? (double) DatumGetFloat4(value) :
						DatumGetFloat8(value);

					memcpy(&lo, &d, sizeof(d));
					break;
				}
			case SV_NUM:
				{
					struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
					const uint8 *data = (const uint8 *) VARDATA_ANY(v);
					uint32		len = VARSIZE_ANY_EXHDR(v);
					uint8		ds;
					gh_i128		x;

					/* its own display scale is its static scale */
					if (len < 2)
						return fail(cx, "a malformed numeric constant");
					ds = (gh_page_u16(data) & 0x8000) ? (gh_page_u16(data) & 0x1F80) >> 7 :
						gh_page_u16(data) & 0x3FFF;
					if ((gh_page_u16(data) & 0xC000) == 0xC000 || ds > 38 ||
						!gh_numeric_load(data, len, ds, &x, &ds))
						return fail(cx, "a numeric constant the device cannot hold");
					lo = (int64) (uint64) (gh_u128) x;
					hi = (int64) (uint64) ((gh_u128) x >> 64);
					dscale = ds;
					sv.scale = ds;
					sv.digits = digits_of_u128(x < 0 ? (gh_u128) 0 - (gh_u128) x : (gh_u128) x);
					break;
				}
			case SV_TEXT:
				{
					struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
					int			len = VARSIZE_ANY_EXHDR(v);

					if (cx->p->nbytes + len > GH_PROG_MAX_BYTES)
						return fail(cx, "the program's text constants are too long");
					memcpy(cx->p->bytes + cx->p->nbytes, VARDATA_ANY(v), len);
					lo = cx->p->nbytes;
					hi = len;
					cx->p->nbytes += len;
					break;
				}
		}
	}
	else if (sv.kind == SV_NUM)
		sv.digits = 1;
	sv.reg = alloc_reg(cx);
	emit(cx, GH_OP_LDCONST, sv.reg, 0, text ? 1 : 0, add_const(cx, lo, hi, isnull, dscale));
	return sv;
}

static Sv
c_param(Cx *cx, Param *param)
{
	Datum		value;
	bool		isnull;
	ExprState  *es;
	SvKind		kind;

	if (param->paramkind != PARAM_EXTERN && param->paramkind != PARAM_EXEC)
		return fail(cx, "a parameter of an unusual kind");
	if (cx->in->econtext == NULL)
	{
		/* planning: what it will be is a constant of its type */
		if (!kind_of(param->paramtype, &kind))
			return fail(cx, "a parameter of a type the device does not have");
		return c_datum(cx, param->paramtype, (Datum) 0, true);
	}
	es = ExecInitExpr((Expr *) param, NULL);
	value = ExecEvalExprSwitchContext(es, cx->in->econtext, &isnull);
	return c_datum(cx, param->paramtype, value, isnull);
}

/* ---- operators ---- */

static int
cmp_of(const char *name)
{
	if (strcmp(name, "=") == 0)
		return GH_CMP_EQ;
	if (strcmp(name, "<>") == 0)
		return GH_CMP_NE;
	if (strcmp(name, "<") == 0)
		return GH_CMP_LT;
	if (strcmp(name, "<=") == 0)
		return GH_CMP_LE;
	if (strcmp(name, ">") == 0)
		return GH_CMP_GT;
	if (strcmp(name, ">=") == 0)
		return GH_CMP_GE;
	return -1;
}

/* the comparison a OP b as b OP' a */
static int
cmp_swapped(int cmp)
{
	switch (cmp)
	{
		case GH_CMP_LT:
			return GH_CMP_GT;
		case GH_CMP_LE:
			return GH_CMP_GE;
		case GH_CMP_GT:
			return GH_CMP_LT;
		case GH_CMP_GE:
			return GH_CMP_LE;
	}
	return cmp;
}

/* raise numeric v's static scale to scale (in place) */
static void
rescale(Cx *cx, Sv *v, int scale)
{
	if (v->scale >= scale)
		return;
	emit(cx, GH_OP_NSCALE, v->reg, v->reg, 0, scale - v->scale);
	v->digits += scale - v->scale;
	v->scale = scale;
}

static bool
same_family(Oid a, Oid b)
{
	if (int_type(a) && int_type(b))
		return true;
	return a == b;
}

/* a comparison of a and b (both compiled), into a new register */
static Sv
c_compare(Cx *cx, Sv a, Sv b, int cmp, Oid collation)
{
	Sv			r = {0};
	int			op;

	r.kind = SV_INT;
	r.type = BOOLOID;
	if (a.kind != b.kind)
		return fail(cx, "a comparison of values of different kinds");
	switch (a.kind)
	{
		case SV_INT:
			if (a.type == DATEOID && b.type == TIMESTAMPOID)
				op = GH_OP_DTCMP;
			else if (a.type == TIMESTAMPOID && b.type == DATEOID)
			{
				Sv			t = a;

				a = b;
				b = t;
				cmp = cmp_swapped(cmp);
				op = GH_OP_DTCMP;
			}
			else if (same_family(a.type, b.type))
				op = GH_OP_ICMP;
			else
				return fail(cx, "a comparison of these types");
			break;
		case SV_FLOAT:
			op = GH_OP_FCMP;
			break;
		case SV_NUM:
			rescale(cx, &a, b.scale);
			rescale(cx, &b, a.scale);
			op = GH_OP_NCMP;
			break;
		default:
			if (cmp != GH_CMP_EQ && cmp != GH_CMP_NE)
				return fail(cx, "an ordering of text");
			if (a.bpchar != b.bpchar)
				return fail(cx, "a comparison of bpchar with text");
			if (!OidIsValid(collation) || !get_collation_isdeterministic(collation))
				return fail(cx, "a comparison under a nondeterministic collation");
			op = GH_OP_TCMP;
			cmp |= a.bpchar ? GH_CMP_BPCHAR : 0;
			break;
	}
	free_reg(cx, a.reg);
	free_reg(cx, b.reg);
	r.reg = alloc_reg(cx);
	emit(cx, op, r.reg, a.reg, b.reg, cmp);
	return r;
}

static Sv
c_arith(Cx *cx, const char *name, Oid result, Sv a, Sv b)
{
	Sv			r = {0};
	int			op = -1;

	if (a.kind != b.kind)
		return fail(cx, "arithmetic on values of different kinds");
	r.kind = a.kind;
	r.type = result;
	switch (a.kind)
	{
		case SV_INT:
			if (a.type == DATEOID && b.type == DATEOID && name[0] == '-' && result == INT4OID)
			{
				/* date_mi: days apart, of finite dates (an infinite one escapes) */
				emit(cx, GH_OP_DATEPART, a.reg, a.reg, 0, GH_DATEPART_DAYS);
				emit(cx, GH_OP_DATEPART, b.reg, b.reg, 0, GH_DATEPART_DAYS);
				op = GH_OP_ISUB;
				break;
			}
			if (!int_type(a.type) || !int_type(b.type) || !int_type(result))
				return fail(cx, "arithmetic on these types");
			op = name[0] == '+' ? GH_OP_IADD : name[0] == '-' ? GH_OP_ISUB :
				name[0] == '*' ? GH_OP_IMUL : name[0] == '/' ? GH_OP_IDIV :
				name[0] == '%' ? GH_OP_IMOD : -1;
			break;
		case SV_FLOAT:
			if (name[0] == '%')
				return fail(cx, "float modulo");
			op = name[0] == '+' ? GH_OP_FADD : name[0] == '-' ? GH_OP_FSUB :
				name[0] == '*' ? GH_OP_FMUL : name[0] == '/' ? GH_OP_FDIV : -1;
			if (op >= 0 && result == FLOAT4OID)
				op += GH_OP_F4ADD - GH_OP_FADD;
			break;
		case SV_NUM:
			if (name[0] == '*')
			{
				op = GH_OP_NMUL;
				r.scale = a.scale + b.scale;
				r.digits = a.digits + b.digits;
			}
			else if (name[0] == '+' || name[0] == '-')
			{
				op = name[0] == '+' ? GH_OP_NADD : GH_OP_NSUB;
				rescale(cx, &a, b.scale);
				rescale(cx, &b, a.scale);
				r.scale = a.scale;
				r.digits = Max(a.digits, b.digits) + 1;
			}
			if (r.scale > 38)
				return fail(cx, "a numeric of too large a scale");
			r.digits = Min(r.digits, 39);
			break;
		default:
			break;
	}
	if (op < 0)
		return fail(cx, "this arithmetic");
	free_reg(cx, a.reg);
	free_reg(cx, b.reg);
	r.reg = alloc_reg(cx);
	emit(cx, op, r.reg, a.reg, b.reg, a.kind == SV_INT ? int_width(result) : 0);
	return r;
}

static bool
builtin_operator(Oid opno)
{
	return opno < FirstGenbkiObjectId;
}

/* a new register for a result of kind and type */
static Sv
new_result(Cx *cx, SvKind kind, Oid type)
{
	Sv			r = {0};

	r.kind = kind;
	r.type = type;
	r.reg = alloc_reg(cx);
	return r;
}

/* argument arg of function what, which must be text, compiled */
static Sv
c_text_arg(Cx *cx, Node *arg, const char *what)
{
	Sv			t = c_expr(cx, arg);

	if (!FAILED(cx) && t.kind != SV_TEXT)
		return fail(cx, psprintf("%s of a value that is not text", what));
	return t;
}

/*
 * text LIKE or NOT LIKE a constant pattern (textlike, bpcharlike: a bpchar's
 * padding is part of its value) under a deterministic collation: bytes,
 * with _ one character of a UTF-8 or single-byte database.  A pattern with
 * escapes stays on the CPU.
 */
static Sv
c_like(Cx *cx, OpExpr *op, bool negated)
{
	Node	   *pattern = lsecond(op->args);
	Sv			a,
				b,
				r = {0};
	bool		utf8 = GetDatabaseEncoding() == PG_UTF8;
	text	   *t;

	if (!utf8 && pg_database_encoding_max_length() != 1)
		return fail(cx, "LIKE in a multibyte encoding other than UTF-8");
	if (!OidIsValid(op->inputcollid) || !get_collation_isdeterministic(op->inputcollid))
		return fail(cx, "LIKE under a nondeterministic collation");
	if (!IsA(pattern, Const) || ((Const *) pattern)->constisnull)
		return fail(cx, "LIKE of a pattern that is not a constant");
	t = DatumGetTextPP(((Const *) pattern)->constvalue);
	if (memchr(VARDATA_ANY(t), '\\', VARSIZE_ANY_EXHDR(t)) != NULL)
		return fail(cx, "LIKE of a pattern with escapes");
	a = c_expr(cx, linitial(op->args));
	b = c_expr(cx, pattern);
	if (FAILED(cx))
		return a;
	if (a.kind != SV_TEXT || b.kind != SV_TEXT)
		return fail(cx, "LIKE of a value that is not text");
	free_reg(cx, a.reg);
	free_reg(cx, b.reg);
	r = new_result(cx, SV_INT, BOOLOID);
	emit(cx, GH_OP_LIKE, r.reg, a.reg, b.reg, utf8 ? 1 : 0);
	if (negated)
		emit(cx, GH_OP_NOT, r.reg, r.reg, 0, 0);
	return r;
}

/*
 * length() and char_length() of text (textlen) and bpchar (bpcharlen: its
 * trailing spaces not counted), octet_length() of either (its bytes, a
 * bpchar's padding too): characters of a UTF-8 database, bytes of a
 * single-byte one.
 */
static Sv
c_length(Cx *cx, FuncExpr *f, bool bytes, bool bpchar)
{
	bool		utf8 = GetDatabaseEncoding() == PG_UTF8;
	Sv			a,
				r = {0};

	if (!bytes && !utf8 && pg_database_encoding_max_length() != 1)
		return fail(cx, "length() in a multibyte encoding other than UTF-8");
	if (list_length(f->args) != 1)
		return fail(cx, "length() of several arguments");
	a = c_text_arg(cx, linitial(f->args), "length()");
	if (FAILED(cx))
		return a;
	free_reg(cx, a.reg);
	r = new_result(cx, SV_INT, INT4OID);
	emit(cx, GH_OP_TLEN, r.reg, a.reg, 0, (!bytes && utf8 ? 1 : 0) | (bpchar ? 2 : 0));
	return r;
}

/*
 * The constant count n of substring(t from s for n), substr(t, s, n) or
 * left(t, n), where it is one from 0 to 2^28 (c_substr); else -1.
 */
int
star_substr_count(const FuncExpr *f)
{
	const Const *n;

	if ((f->funcid != F_SUBSTRING_TEXT_INT4_INT4 && f->funcid != F_SUBSTR_TEXT_INT4_INT4 &&
		 f->funcid != F_LEFT) || list_length(f->args) < 2)
		return -1;
	n = (const Const *) llast(f->args);
	if (!IsA(n, Const) || n->constisnull || n->consttype != INT4OID ||
		DatumGetInt32(n->constvalue) < 0 || DatumGetInt32(n->constvalue) > (1 << 28))
		return -1;
	return DatumGetInt32(n->constvalue);
}

/*
 * substring(t from s for n) and substr(t, s, n) of text, with or without n,
 * and left(t, n) (text_substring: characters of a UTF-8 database, bytes of
 * a single-byte one) where n is a constant that is not negative -- a
 * negative one fails every row, or for left() counts from the end; and
 * bpchar's cast to text, which drops its trailing spaces (rtrim1): all
 * GH_OP_SUBSTR, a slice of the text.
 */
static Sv
c_substr(Cx *cx, FuncExpr *f, bool left, bool has_count, bool cast)
{
	bool		utf8 = GetDatabaseEncoding() == PG_UTF8;
	int			nargs = list_length(f->args);
	int32		count = -1;
	Sv			t,
				start,
				r = {0};

	if (!utf8 && pg_database_encoding_max_length() != 1)
		return fail(cx, "substring() in a multibyte encoding other than UTF-8");
	if (nargs != (cast ? 1 : left || !has_count ? 2 : 3))
		return fail(cx, "substring() of other arguments");
	if (left || has_count)
	{
		count = star_substr_count(f);
		if (count < 0)
			return fail(cx, "substring() of a count that is not a constant from 0 to 2^28");
	}
	t = c_text_arg(cx, linitial(f->args), "substring()");
	if (FAILED(cx))
		return t;
	if (cast && !t.bpchar)
		return fail(cx, "a cast to text of a value that is not bpchar");
	if (left || cast)
	{
		start = new_result(cx, SV_INT, INT4OID);
		emit(cx, GH_OP_LDCONST, start.reg, 0, 0, add_const(cx, 1, 0, false, 0));
	}
	else
	{
		start = c_expr(cx, lsecond(f->args));
		if (FAILED(cx))
			return start;
		if (start.kind != SV_INT)
			return fail(cx, "substring() from a position that is not an integer");
	}
	free_reg(cx, t.reg);
	free_reg(cx, start.reg);
	r = new_result(cx, SV_TEXT, TEXTOID);
	emit(cx, GH_OP_SUBSTR, r.reg, t.reg, start.reg,
		 (int) ((uint32) count << 2) | (utf8 ? 1 : 0) | (t.bpchar ? 2 : 0));
	return r;
}

static Sv
c_opexpr(Cx *cx, OpExpr *op)
{
	char	   *name;
	Sv			a,
				b,
				r;
	int			cmp;

	if (!builtin_operator(op->opno) || (name = get_opname(op->opno)) == NULL)
		return fail(cx, "an operator the device does not have");
	switch (get_opcode(op->opno))
	{
		case F_TEXTLIKE:
		case F_BPCHARLIKE:
			return c_like(cx, op, false);
		case F_TEXTNLIKE:
		case F_BPCHARNLIKE:
			return c_like(cx, op, true);
		default:
			break;
	}
	if (list_length(op->args) == 1)
	{
		if (strcmp(name, "-") != 0)
			return fail(cx, "a prefix operator the device does not have");
		a = c_expr(cx, linitial(op->args));
		if (FAILED(cx))
			return a;
		r = a;
		free_reg(cx, a.reg);
		r.reg = alloc_reg(cx);
		r.type = op->opresulttype;
		if (a.kind == SV_INT && int_type(a.type))
			emit(cx, GH_OP_INEG, r.reg, a.reg, 0, int_width(op->opresulttype));
		else if (a.kind == SV_FLOAT)
			emit(cx, GH_OP_FNEG, r.reg, a.reg, 0, 0);
		else if (a.kind == SV_NUM)
			emit(cx, GH_OP_NNEG, r.reg, a.reg, 0, 0);
		else
			return fail(cx, "a negation of this type");
		return r;
	}
	if (list_length(op->args) != 2)
		return fail(cx, "an operator of unusual arity");
	a = c_expr(cx, linitial(op->args));
	b = c_expr(cx, lsecond(op->args));
	if (FAILED(cx))
		return a;
	cmp = cmp_of(name);
	if (cmp >= 0 && op->opresulttype == BOOLOID)
		return c_compare(cx, a, b, cmp, op->inputcollid);
	if (strlen(name) != 1 || strchr("+-*/%", name[0]) == NULL)
		return fail(cx, "an operator the device does not have");
	return c_arith(cx, name, op->opresulttype, a, b);
}

/*
 * The session time zone's offset in seconds east of UTC, into *east, where
 * the zone has one offset only (UTC, or a fixed offset: a timestamptz's
 * local time is then the instant plus it); false where its offset changes
 * (daylight saving time), which the device does not follow.
 */
static bool
fixed_zone_offset(int *east)
{
	long		gmtoff;

	if (session_timezone == NULL || !pg_get_timezone_offset(session_timezone, &gmtoff) ||
		gmtoff <= -86400 || gmtoff >= 86400)
		return false;
	*east = (int) gmtoff;
	return true;
}

/*
 * casts between integers, integers to numeric and float8, float4 and numeric
 * to float8, floats and numerics to integers, dates to timestamps and
 * timestamps to dates
 */
static Sv
c_cast(Cx *cx, Oid result, Node *arg)
{
	Oid			from = exprType(arg);
	Sv			a = c_expr(cx, arg);
	Sv			r = a;

	if (FAILED(cx))
		return a;
	r.type = result;
	if (int_type(from) && int_type(result))
	{
		if (int_width(result) < int_width(from))
			emit(cx, GH_OP_ICAST, a.reg, a.reg, 0, int_width(result));
		return r;
	}
	if (int_type(from) && result == NUMERICOID)
	{
		emit(cx, GH_OP_I2N, a.reg, a.reg, 0, 0);
		r.kind = SV_NUM;
		r.scale = 0;
		r.digits = from == INT2OID ? 5 : from == INT4OID ? 10 : 19;
		return r;
	}
	if (int_type(from) && result == FLOAT8OID)
	{
		emit(cx, GH_OP_I2F, a.reg, a.reg, 0, 0);
		r.kind = SV_FLOAT;
		return r;
	}
	if (from == FLOAT4OID && result == FLOAT8OID)
		return r;				/* a float4 is held as its double already */
	if (from == NUMERICOID && result == FLOAT8OID)
	{
		/* numeric_float8: the double nearest the value (GH_OP_N2F) */
		emit(cx, GH_OP_N2F, a.reg, a.reg, 0, a.scale);
		r.kind = SV_FLOAT;
		return r;
	}
	if ((from == FLOAT8OID || from == FLOAT4OID) && int_type(result))
	{
		/* dtoi2 .. dtoi8, ftoi2 .. ftoi8: rounded, ties to even, range-checked */
		emit(cx, GH_OP_F2I, a.reg, a.reg, 0, int_width(result));
		r.kind = SV_INT;
		return r;
	}
	if (from == NUMERICOID && int_type(result))
	{
		/* numeric_int2 .. numeric_int8: rounded, ties away from zero, range-checked */
		emit(cx, GH_OP_NROUND, a.reg, a.reg, a.scale, GH_ROUND_NEAREST);
		emit(cx, GH_OP_N2I, a.reg, a.reg, 0, int_width(result));
		r.kind = SV_INT;
		return r;
	}
	if ((from == TIMESTAMPOID || from == TIMESTAMPTZOID) && result == DATEOID)
	{
		/*
		 * timestamp_date, timestamptz_date: the (local) day; an infinite
		 * timestamp escapes
		 */
		int			east = 0;

		if (from == TIMESTAMPTZOID && !fixed_zone_offset(&east))
			return fail(cx, "a timestamptz's date in a time zone of changing offsets");
		emit(cx, GH_OP_DATEPART, a.reg, a.reg, 1, GH_DATEPART_DATE | east * 256);
		return r;
	}
	if (from == DATEOID && (result == TIMESTAMPOID || result == TIMESTAMPTZOID))
	{
		/*
		 * date2timestamp: midnight; date2timestamptz: the local midnight's
		 * instant, in a zone of one offset; outside the timestamps it escapes
		 */
		int			east = 0;

		if (result == TIMESTAMPTZOID && !fixed_zone_offset(&east))
			return fail(cx, "a date made a timestamptz in a time zone of changing offsets");
		emit(cx, GH_OP_DATEPART, a.reg, a.reg, 0, GH_DATETRUNC_DAY | east * 256);
		r.type = result;
		return r;
	}
	return fail(cx, "a cast the device does not have");
}

/*
 * The unit a constant text names, as PostgreSQL's EXTRACT and date_part
 * (special: DecodeUnits, then DecodeSpecial: 'year', 'years', 'y', 'dow' ...)
 * or date_trunc (DecodeUnits alone) decode it: its DTK_* value, or -1.
 */
static int
unit_of(Node *field, bool special)
{
	char	   *name;
	int			type,
				val;

	if (!IsA(field, Const) || ((Const *) field)->constisnull)
		return -1;
	name = text_to_cstring(DatumGetTextPP(((Const *) field)->constvalue));
	name = downcase_truncate_identifier(name, strlen(name), false);
	type = DecodeUnits(0, name, &val);
	if (type == UNKNOWN_FIELD && special)
		type = DecodeSpecial(0, name, &val);
	return type == UNITS ? val : -1;
}

/*
 * EXTRACT(field FROM a date, timestamp or timestamptz) and date_part(field,
 * timestamp or timestamptz) of the fields year, quarter, month, day, dow,
 * isodow, doy, week and isoyear, and of a timestamp hour and minute:
 * EXTRACT's numeric of scale 0, or date_part's double, as PostgreSQL's.
 * date_trunc(field, timestamp or timestamptz) to a year, quarter, month,
 * week, day, hour, minute or second.  A timestamptz's local time is taken in
 * the session's time zone, where it has one offset (fixed_zone_offset).
 */
/* the GH_OP_DATEPART field of each unit for EXTRACT and date_trunc (-1: none) */
static const struct
{
	int			dtk;
	int			part;
	int			trunc;
}			date_units[] = {
	{DTK_YEAR, GH_DATEPART_YEAR, GH_DATETRUNC_YEAR},
	{DTK_QUARTER, GH_DATEPART_QUARTER, GH_DATETRUNC_QUARTER},
	{DTK_MONTH, GH_DATEPART_MONTH, GH_DATETRUNC_MONTH},
	{DTK_WEEK, GH_DATEPART_WEEK, GH_DATETRUNC_WEEK},
	{DTK_DAY, GH_DATEPART_DAY, GH_DATETRUNC_DAY},
	{DTK_HOUR, GH_DATEPART_HOUR, GH_DATETRUNC_HOUR},
	{DTK_MINUTE, GH_DATEPART_MINUTE, GH_DATETRUNC_MINUTE},
	{DTK_SECOND, -1, GH_DATETRUNC_SECOND},
	{DTK_DOW, GH_DATEPART_DOW, -1},
	{DTK_ISODOW, GH_DATEPART_ISODOW, -1},
	{DTK_DOY, GH_DATEPART_DOY, -1},
	{DTK_ISOYEAR, GH_DATEPART_ISOYEAR, -1},
};

static Sv
c_datefunc(Cx *cx, FuncExpr *f, bool trunc, bool as_double)
{
	int			unit = unit_of(linitial(f->args), !trunc);
	int			which = -1;
	Sv			a;

	for (int k = 0; k < lengthof(date_units); k++)
		if (date_units[k].dtk == unit)
			which = trunc ? date_units[k].trunc : date_units[k].part;
	if (which < 0)
		return fail(cx, "a date or time field the device does not compute");
	a = c_expr(cx, lsecond(f->args));
	if (FAILED(cx))
		return a;
	if (a.kind != SV_INT ||
		(a.type != DATEOID && a.type != TIMESTAMPOID && a.type != TIMESTAMPTZOID) ||
		(trunc && a.type == DATEOID))
		return fail(cx, "a date or time function of a value that is not a date or timestamp");
	if (a.type == DATEOID && (which == GH_DATEPART_HOUR || which == GH_DATEPART_MINUTE))
		return fail(cx, "a time field of a date");	/* PostgreSQL raises the error */
	if (a.type == TIMESTAMPTZOID)
	{
		int			east;

		if (!fixed_zone_offset(&east))
			return fail(cx, "a timestamptz's fields in a time zone of changing offsets");
		which |= east * 256;
	}
	emit(cx, GH_OP_DATEPART, a.reg, a.reg, a.type == DATEOID ? 0 : 1, which);
	if (trunc)
		return a;				/* a timestamp */
	if (as_double)
	{
		emit(cx, GH_OP_I2F, a.reg, a.reg, 0, 0);
		a.kind = SV_FLOAT;
		a.type = FLOAT8OID;
		a.integral = true;
		return a;
	}
	a.kind = SV_NUM;
	a.type = NUMERICOID;
	a.scale = 0;
	a.digits = 7;				/* years up to 5874897 */
	return a;
}

/*
 * abs() of an integer, float or numeric: negated where below zero (an
 * integer's smallest value raises PostgreSQL's out-of-range error, 22003);
 * a float's -0 becomes 0, as fabs makes it.
 */
static Sv
c_abs(Cx *cx, FuncExpr *f)
{
	Sv			a = c_expr(cx, linitial(f->args));
	Sv			zero;
	int			t,
				skip;

	if (FAILED(cx))
		return a;
	if (a.kind == SV_INT && int_type(a.type))
		zero = c_datum(cx, INT8OID, Int64GetDatum(0), false);
	else if (a.kind == SV_FLOAT)
		zero = c_datum(cx, FLOAT8OID, Float8GetDatum(0.0), false);
	else if (a.kind == SV_NUM)
	{
		zero = c_datum(cx, NUMERICOID, NumericGetDatum(int64_to_numeric(0)), false);
		rescale(cx, &zero, a.scale);
	}
	else
		return fail(cx, "abs() of this type");
	if (FAILED(cx))
		return zero;
	t = alloc_reg(cx);
	emit(cx, a.kind == SV_INT ? GH_OP_ICMP : a.kind == SV_FLOAT ? GH_OP_FCMP : GH_OP_NCMP,
		 t, a.reg, zero.reg, GH_CMP_LT);
	skip = emit(cx, GH_OP_JFALSE, 0, t, 0, 0);
	free_reg(cx, t);
	emit(cx, a.kind == SV_INT ? GH_OP_INEG : a.kind == SV_FLOAT ? GH_OP_FNEG : GH_OP_NNEG,
		 a.reg, a.reg, 0, a.kind == SV_INT ? int_width(f->funcresulttype) : 0);
	land(cx, skip);
	if (a.kind == SV_FLOAT)
		emit(cx, GH_OP_FADD, a.reg, a.reg, zero.reg, 0);
	free_reg(cx, zero.reg);
	return a;
}

/*
 * GREATEST and LEAST of integers, dates, timestamps, floats or numerics:
 * PostgreSQL's, NULLs left out (NULL only where every argument is); each
 * argument evaluated, in order.  Numerics are compared at one static scale,
 * each keeping its own display scale.
 */
static Sv
c_minmax(Cx *cx, MinMaxExpr *m)
{
	int			cmp = m->op == IS_GREATEST ? GH_CMP_GT : GH_CMP_LT;
	Sv			r = {0};
	bool		first = true;
	ListCell   *lc;

	foreach(lc, m->args)
	{
		Sv			x = c_expr(cx, lfirst(lc));
		int			xnull,
					rnull,
					worse,
					t;

		if (FAILED(cx))
			return x;
		if (first)
		{
			if (x.kind == SV_TEXT)
				return fail(cx, "GREATEST or LEAST of text");
			r = x;
			r.type = m->minmaxtype;
			first = false;
			continue;
		}
		if (x.kind != r.kind)
			return fail(cx, "GREATEST or LEAST of values of different kinds");
		if (x.kind == SV_NUM)
		{
			rescale(cx, &x, r.scale);
			rescale(cx, &r, x.scale);
			r.digits = Max(r.digits, x.digits);
		}
		xnull = emit(cx, GH_OP_JNULL, 0, x.reg, 0, 0);
		rnull = emit(cx, GH_OP_JNULL, 0, r.reg, 0, 0);
		t = alloc_reg(cx);
		emit(cx, x.kind == SV_INT ? GH_OP_ICMP : x.kind == SV_FLOAT ? GH_OP_FCMP : GH_OP_NCMP,
			 t, x.reg, r.reg, cmp);
		worse = emit(cx, GH_OP_JFALSE, 0, t, 0, 0);
		free_reg(cx, t);
		land(cx, rnull);
		emit(cx, GH_OP_MOVE, r.reg, x.reg, 0, 0);
		land(cx, xnull);
		land(cx, worse);
		free_reg(cx, x.reg);
	}
	return r;
}

/* NULLIF(a, b): a, or NULL where a = b (by the node's equality operator) */
static Sv
c_nullif(Cx *cx, NullIfExpr *n)
{
	char	   *name;
	Sv			a,
				b,
				r,
				t;
	int			skip;

	if (!builtin_operator(n->opno) || (name = get_opname(n->opno)) == NULL ||
		strcmp(name, "=") != 0 || list_length(n->args) != 2)
		return fail(cx, "a NULLIF of an operator the device does not have");
	a = c_expr(cx, linitial(n->args));
	if (FAILED(cx))
		return a;
	r = a;
	r.reg = alloc_reg(cx);
	emit(cx, GH_OP_MOVE, r.reg, a.reg, 0, 0);
	b = c_expr(cx, lsecond(n->args));
	if (FAILED(cx))
		return b;
	t = c_compare(cx, a, b, GH_CMP_EQ, n->inputcollid);
	if (FAILED(cx))
		return t;
	skip = emit(cx, GH_OP_JFALSE, 0, t.reg, 0, 0);
	free_reg(cx, t.reg);
	emit(cx, GH_OP_SETNULL, r.reg, 0, 0, 0);
	land(cx, skip);
	return r;
}

/*
 * round, floor, ceil (ceiling) and trunc of a float8 (dround, dfloor, dceil,
 * dtrunc: ties to even) or a numeric (numeric_round and numeric_trunc to a
 * constant scale, 0 when none is given, and numeric_floor, numeric_ceil:
 * ties away from zero), their display scale the scale rounded to (not
 * below 0), as numeric.c's.
 */
static Sv
c_round(Cx *cx, FuncExpr *f, int how)
{
	Sv			a = c_expr(cx, linitial(f->args));
	int			s = 0,
				drop;

	if (FAILED(cx))
		return a;
	if (a.kind == SV_FLOAT && list_length(f->args) == 1)
	{
		emit(cx, GH_OP_FROUND, a.reg, a.reg, 0, how);
		a.type = FLOAT8OID;
		return a;
	}
	if (a.kind != SV_NUM)
		return fail(cx, "a rounding of this type");
	if (list_length(f->args) == 2)
	{
		Node	   *scale = lsecond(f->args);

		if (!IsA(scale, Const) || ((Const *) scale)->constisnull)
			return fail(cx, "a rounding to a scale that is not a constant");
		s = DatumGetInt32(((Const *) scale)->constvalue);
	}
	if (s < -38 || s > 38)
		return fail(cx, "a rounding to a scale the device does not have");
	rescale(cx, &a, s);
	drop = a.scale - s;
	if (drop > 38)
		return fail(cx, "a rounding of too many digits");
	emit(cx, GH_OP_NROUND, a.reg, a.reg, drop, how | Max(s, 0) << 8);
	a.digits = Max(1, a.digits - drop + 1);
	a.scale = s;
	if (s < 0)
	{
		/* rounded to tens, hundreds ...: made an integer again */
		emit(cx, GH_OP_NSCALE, a.reg, a.reg, 0, -s);
		a.digits -= s;
		a.scale = 0;
	}
	a.digits = Min(a.digits, 39);
	a.type = NUMERICOID;
	return a;
}

static Sv
c_funcexpr(Cx *cx, FuncExpr *f)
{
	int			nargs = list_length(f->args);

	switch (f->funcid)
	{
		case F_ROUND_FLOAT8:
		case F_DROUND:
		case F_ROUND_NUMERIC:
		case F_ROUND_NUMERIC_INT4:
			return c_round(cx, f, GH_ROUND_NEAREST);
		case F_FLOOR_FLOAT8:
		case F_FLOOR_NUMERIC:
			return c_round(cx, f, GH_ROUND_FLOOR);
		case F_CEIL_FLOAT8:
		case F_CEILING_FLOAT8:
		case F_CEIL_NUMERIC:
		case F_CEILING_NUMERIC:
			return c_round(cx, f, GH_ROUND_CEIL);
		case F_TRUNC_FLOAT8:
		case F_DTRUNC:
		case F_TRUNC_NUMERIC:
		case F_TRUNC_NUMERIC_INT4:
			return c_round(cx, f, GH_ROUND_TRUNC);
		case F_LENGTH_TEXT:
		case F_CHAR_LENGTH_TEXT:
		case F_CHARACTER_LENGTH_TEXT:
			return c_length(cx, f, false, false);
		case F_LENGTH_BPCHAR:
		case F_CHAR_LENGTH_BPCHAR:
		case F_CHARACTER_LENGTH_BPCHAR:
			return c_length(cx, f, false, true);
		case F_OCTET_LENGTH_TEXT:
		case F_OCTET_LENGTH_BPCHAR:
			return c_length(cx, f, true, false);
		case F_SUBSTRING_TEXT_INT4_INT4:
		case F_SUBSTR_TEXT_INT4_INT4:
			return c_substr(cx, f, false, true, false);
		case F_SUBSTRING_TEXT_INT4:
		case F_SUBSTR_TEXT_INT4:
			return c_substr(cx, f, false, false, false);
		case F_LEFT:
			return c_substr(cx, f, true, true, false);
		case F_TEXT_BPCHAR:
			return c_substr(cx, f, false, false, true);
		case F_MOD_INT2_INT2:
		case F_MOD_INT4_INT4:
		case F_MOD_INT8_INT8:
			if (nargs == 2)
			{
				Sv			a = c_expr(cx, linitial(f->args));
				Sv			b = c_expr(cx, lsecond(f->args));

				if (FAILED(cx))
					return a;
				return c_arith(cx, "%", f->funcresulttype, a, b);
			}
			break;
		default:
			break;
	}

	if ((f->funcid == F_EXTRACT_TEXT_DATE || f->funcid == F_EXTRACT_TEXT_TIMESTAMP ||
		 f->funcid == F_EXTRACT_TEXT_TIMESTAMPTZ) && list_length(f->args) == 2)
		return c_datefunc(cx, f, false, false);
	if ((f->funcid == F_DATE_PART_TEXT_TIMESTAMP || f->funcid == F_DATE_PART_TEXT_TIMESTAMPTZ) &&
		list_length(f->args) == 2)
		return c_datefunc(cx, f, false, true);
	if ((f->funcid == F_DATE_TRUNC_TEXT_TIMESTAMP || f->funcid == F_DATE_TRUNC_TEXT_TIMESTAMPTZ) &&
		list_length(f->args) == 2)
		return c_datefunc(cx, f, true, false);
	if ((f->funcid == F_ABS_INT2 || f->funcid == F_ABS_INT4 || f->funcid == F_ABS_INT8 ||
		 f->funcid == F_INT2ABS || f->funcid == F_INT4ABS || f->funcid == F_INT8ABS ||
		 f->funcid == F_ABS_FLOAT4 || f->funcid == F_ABS_FLOAT8 || f->funcid == F_FLOAT4ABS ||
		 f->funcid == F_FLOAT8ABS || f->funcid == F_ABS_NUMERIC || f->funcid == F_NUMERIC_ABS) &&
		list_length(f->args) == 1)
		return c_abs(cx, f);
	if ((f->funcformat == COERCE_IMPLICIT_CAST || f->funcformat == COERCE_EXPLICIT_CAST) &&
		list_length(f->args) == 1 && f->funcid < FirstGenbkiObjectId)
		return c_cast(cx, f->funcresulttype, linitial(f->args));
	return fail(cx, "a function the device does not have");
}

static Sv
c_bool(Cx *cx, BoolExpr *b)
{
	Sv			r = {0};
	ListCell   *lc;
	int			jumps[64];
	int			njumps = 0;

	r.kind = SV_INT;
	r.type = BOOLOID;
	if (b->boolop == NOT_EXPR)
	{
		Sv			a = c_expr(cx, linitial(b->args));

		if (FAILED(cx))
			return a;
		emit(cx, GH_OP_NOT, a.reg, a.reg, 0, 0);
		return a;
	}
	r.reg = alloc_reg(cx);
	emit(cx, GH_OP_BOOL, r.reg, 0, 0, b->boolop == AND_EXPR ? 1 : 0);
	foreach(lc, b->args)
	{
		Sv			a = c_expr(cx, lfirst(lc));

		if (FAILED(cx))
			return a;
		if (njumps >= lengthof(jumps))
			return fail(cx, "too long an AND or OR");
		jumps[njumps++] = emit(cx, b->boolop == AND_EXPR ? GH_OP_AND : GH_OP_OR, r.reg, a.reg,
							   0, 0);
		free_reg(cx, a.reg);
	}
	for (int i = 0; i < njumps; i++)
		land(cx, jumps[i]);
	return r;
}

/* x op ANY/ALL (constant array): OR (ANY) or AND (ALL) of the comparisons */
static Sv
c_saop(Cx *cx, ScalarArrayOpExpr *s)
{
	Node	   *left = linitial(s->args);
	Const	   *arr = (Const *) lsecond(s->args);
	char	   *name = get_opname(s->opno);
	int			cmp = name ? cmp_of(name) : -1;
	Oid			elemtype;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	Sv			r = {0};
	int			jumps[256];
	int			njumps = 0;

	if (!IsA(arr, Const) || !builtin_operator(s->opno) || cmp < 0)
		return fail(cx, "an ANY or ALL the device does not have");
	r.kind = SV_INT;
	r.type = BOOLOID;
	if (arr->constisnull)
		return c_datum(cx, BOOLOID, (Datum) 0, true);
	elemtype = ARR_ELEMTYPE(DatumGetArrayTypeP(arr->constvalue));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(DatumGetArrayTypeP(arr->constvalue), elemtype, typlen, typbyval, typalign,
					  &elems, &nulls, &nelems);
	if (nelems > lengthof(jumps))
		return fail(cx, "too long a list");
	r.reg = alloc_reg(cx);
	emit(cx, GH_OP_BOOL, r.reg, 0, 0, s->useOr ? 0 : 1);
	for (int i = 0; i < nelems; i++)
	{
		Sv			a = c_expr(cx, left);
		Sv			b = c_datum(cx, elemtype, elems[i], nulls[i]);
		Sv			c;

		if (FAILED(cx))
			return a;
		c = c_compare(cx, a, b, cmp, s->inputcollid);
		if (FAILED(cx))
			return c;
		jumps[njumps++] = emit(cx, s->useOr ? GH_OP_OR : GH_OP_AND, r.reg, c.reg, 0, 0);
		free_reg(cx, c.reg);
	}
	for (int i = 0; i < njumps; i++)
		land(cx, jumps[i]);
	return r;
}

/*
 * CASE and COALESCE: each branch computed into the result register; a
 * numeric branch of smaller static scale is raised to the largest, which
 * the compiler does not know before it has compiled them all, so the
 * branches are compiled twice, the second time with the final scale.
 */
static Sv
c_branches(Cx *cx, Node *node, int target_scale, int *max_scale, int *max_digits);

static Sv
c_case(Cx *cx, Node *node)
{
	int			scale = 0,
				digits = 0;
	gh_prog		saved = *cx->p;
	uint32		live = cx->live;
	Sv			r;

	r = c_branches(cx, node, -1, &scale, &digits);
	if (FAILED(cx) || r.kind != SV_NUM)
		return r;
	*cx->p = saved;
	cx->live = live;
	r = c_branches(cx, node, scale, &scale, &digits);
	r.scale = scale;
	r.digits = Min(digits, 39);
	return r;
}

static Sv
c_branches(Cx *cx, Node *node, int target_scale, int *max_scale, int *max_digits)
{
	Sv			r = {0};
	int			ends[64];
	int			nends = 0;
	bool		have_kind = false;
	List	   *results = NIL;
	ListCell   *lc;
	CaseExpr   *ce = IsA(node, CaseExpr) ? (CaseExpr *) node : NULL;
	Sv			saved_test = cx->casetest;
	bool		saved_has = cx->has_casetest;

	r.reg = alloc_reg(cx);
	if (ce && ce->arg)
	{
		cx->casetest = c_expr(cx, (Node *) ce->arg);
		cx->has_casetest = true;
	}

	/* one branch: store its value (raised to the target scale) in r, jump to the end */
#define BRANCH(expr) \
	do { \
		Sv v = c_expr(cx, (Node *) (expr)); \
		if (FAILED(cx)) \
			return v; \
		if (!have_kind) { r.kind = v.kind; r.type = v.type; r.bpchar = v.bpchar; have_kind = true; } \
		else if (v.kind != r.kind) \
			return fail(cx, "branches of different kinds"); \
		if (v.kind == SV_NUM) { \
			if (target_scale >= 0) rescale(cx, &v, target_scale); \
			*max_scale = Max(*max_scale, v.scale); \
			*max_digits = Max(*max_digits, v.digits + (*max_scale - v.scale)); \
		} \
		emit(cx, GH_OP_MOVE, r.reg, v.reg, 0, 0); \
		free_reg(cx, v.reg); \
	} while (0)

	if (ce)
	{
		foreach(lc, ce->args)
		{
			CaseWhen   *w = lfirst_node(CaseWhen, lc);
			Sv			cond = c_expr(cx, (Node *) w->expr);
			int			skip;

			if (FAILED(cx))
				return cond;
			skip = emit(cx, GH_OP_JFALSE, 0, cond.reg, 0, 0);
			free_reg(cx, cond.reg);
			BRANCH(w->result);
			if (nends >= lengthof(ends))
				return fail(cx, "too many branches");
			ends[nends++] = emit(cx, GH_OP_JMP, 0, 0, 0, 0);
			land(cx, skip);
		}
		if (ce->defresult)
			BRANCH(ce->defresult);
		else
			emit(cx, GH_OP_SETNULL, r.reg, 0, 0, 0);
	}
	else
	{
		CoalesceExpr *co = (CoalesceExpr *) node;

		foreach(lc, co->args)
		{
			BRANCH(lfirst(lc));
			if (nends >= lengthof(ends))
				return fail(cx, "too many branches");
			ends[nends++] = emit(cx, GH_OP_JNOTNULL, 0, r.reg, 0, 0);
		}
	}
#undef BRANCH
	for (int i = 0; i < nends; i++)
		land(cx, ends[i]);
	if (ce && ce->arg)
		free_reg(cx, cx->casetest.reg);
	cx->casetest = saved_test;
	cx->has_casetest = saved_has;
	(void) results;
	return r;
}

static Sv
c_expr(Cx *cx, Node *node)
{
	if (FAILED(cx))
		return fail(cx, NULL);
	if (node == NULL)
		return fail(cx, "an empty expression");
	check_stack_depth();
	switch (nodeTag(node))
	{
		case T_Var:
			{
				Var		   *var = (Var *) node;

				if (var->varno == OUTER_VAR)
					return c_fact_var(cx, var);
				if (var->varno == INNER_VAR)
					return c_payload(cx, var);
				return fail(cx, "a column of another relation");
			}
		case T_Const:
			{
				Const	   *c = (Const *) node;

				return c_datum(cx, c->consttype, c->constvalue, c->constisnull);
			}
		case T_Param:
			return c_param(cx, (Param *) node);
		case T_OpExpr:
			return c_opexpr(cx, (OpExpr *) node);
		case T_FuncExpr:
			return c_funcexpr(cx, (FuncExpr *) node);
		case T_BoolExpr:
			return c_bool(cx, (BoolExpr *) node);
		case T_NullTest:
			{
				NullTest   *nt = (NullTest *) node;
				Sv			a;

				if (nt->argisrow)
					return fail(cx, "a row NULL test");
				a = c_expr(cx, (Node *) nt->arg);
				if (FAILED(cx))
					return a;
				emit(cx, nt->nulltesttype == IS_NULL ? GH_OP_ISNULL : GH_OP_ISNOTNULL, a.reg,
					 a.reg, 0, 0);
				a.kind = SV_INT;
				a.type = BOOLOID;
				return a;
			}
		case T_ScalarArrayOpExpr:
			return c_saop(cx, (ScalarArrayOpExpr *) node);
		case T_CaseExpr:
		case T_CoalesceExpr:
			return c_case(cx, node);
		case T_NullIfExpr:
			return c_nullif(cx, (NullIfExpr *) node);
		case T_MinMaxExpr:
			return c_minmax(cx, (MinMaxExpr *) node);
		case T_CaseTestExpr:
			{
				Sv			r;

				if (!cx->has_casetest)
					return fail(cx, "a CASE operand out of place");
				r = cx->casetest;
				r.reg = alloc_reg(cx);
				emit(cx, GH_OP_MOVE, r.reg, cx->casetest.reg, 0, 0);
				return r;
			}
		case T_RelabelType:
			{
				RelabelType *rt = (RelabelType *) node;
				Sv			a = c_expr(cx, (Node *) rt->arg);

				if (!FAILED(cx) && a.kind == SV_TEXT)
					a.bpchar = rt->resulttype == BPCHAROID;
				if (!FAILED(cx) && a.kind != SV_TEXT && rt->resulttype != a.type)
					return fail(cx, "a relabeling between types");
				return a;
			}
		default:
			return fail(cx, "an expression the device does not have");
	}
}

/* ---- grouping columns ---- */

/*
 * The scale of a numeric grouping column's values packed in its key: that
 * of its declared type (numeric(p, s): every value's display scale is s), or
 * 0 (EXTRACT's integers).
 */
static int
numeric_key_scale(Oid type, int32 typmod)
{
	StarPayload p;

	star_payload_numeric(&p, type, typmod);
	return p.scale;
}

/*
 * The declared scale of a numeric(p, s) of typmod, p at most 18, which the
 * device orders as scaled 64-bit integers (star_path.c, numeric_minmax);
 * -1: none declared, or wider.
 */
int
star_numeric_minmax_scale(int32 typmod)
{
	StarPayload p;

	if (typmod < (int32) VARHDRSZ)
		return -1;
	star_payload_numeric(&p, NUMERICOID, typmod);
	return p.digits <= 18 ? p.scale : -1;
}

/* a numeric of scale s as a scaled integer back as a numeric (display scale s) */
Datum
star_numeric_scaled(int64 v, int scale)
{
	return NumericGetDatum(scale > 0 ? int64_div_fast_to_numeric(v, scale) :
						   int64_to_numeric(v));
}

/*
 * bits of a packed grouping column of type (0: cannot be packed); a text
 * one is kept in at most textbytes bytes (star_path.c, text_key_bytes)
 */
int
star_key_bits(Oid type, int32 typmod, int textbytes)
{
	switch (type)
	{
		case BOOLOID:
			return 1;
		case INT2OID:
			return 16;
		case INT4OID:
		case DATEOID:
		case OIDOID:
			return 32;
		case INT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case NUMERICOID:		/* at most 18 digits at its declared scale (star_compile) */
		case FLOAT4OID:			/* integral ones (star_compile), as GH_OP_F2ORD orders them */
		case FLOAT8OID:
			return 64;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			/*
			 * at most 7 bytes packed in one word (gh_text_pack); longer, a
			 * word per 7-byte chunk, each a field of the hashed key with its
			 * own output column, whose minimum and maximum must agree in
			 * every group (so the groups are exact)
			 */
			if (textbytes <= 0 || textbytes > 7 * STAR_TEXT_CHUNKS)
				return 0;
			return textbytes <= 7 ? 64 : 64 * ((textbytes + 6) / 7);
	}
	return 0;
}

/* bytes of a text grouping column back as a Datum of its type (bpchar padded) */
Datum
star_text_datum(Oid type, int32 typmod, const char *bytes, int len)
{
	text	   *t = cstring_to_text_with_len(bytes, len);

	if (type == BPCHAROID)
		return DirectFunctionCall3(bpchar, PointerGetDatum(t), Int32GetDatum(typmod),
								   BoolGetDatum(false));
	return PointerGetDatum(t);
}

/* a packed grouping column's value back as a Datum of its type */
Datum
star_unpack_field(Oid type, int32 typmod, uint64 bits)
{
	if (type == TEXTOID || type == VARCHAROID || type == BPCHAROID)
	{
		char		buf[8];
		int			len = (int) (bits >> 56);

		for (int i = 0; i < len; i++)
			buf[i] = (char) (bits >> (8 * i));
		return star_text_datum(type, typmod, buf, len);
	}
	if (type == INT8OID || type == TIMEOID || type == TIMESTAMPOID || type == TIMESTAMPTZOID)
		return Int64GetDatum((int64) bits);
	if (type == FLOAT4OID)		/* GH_OP_F2ORD's order undone */
		return Float4GetDatum((float4) gpuhash_float_unorder((int64) bits));
	if (type == FLOAT8OID)
		return Float8GetDatum(gpuhash_float_unorder((int64) bits));
	if (type == NUMERICOID)
		return star_numeric_scaled((int64) bits, numeric_key_scale(type, typmod));
	return gpuhash_unpack_key(type, bits);
}

/* the output columns an aggregate takes */
static int
agg_columns(GhaOp op, Oid argtype, bool filtered, const Sv *arg, int *j0, int *nlimbs)
{
	*nlimbs = 0;
	switch (op)
	{
		case GHA_COUNT_STAR:
			return filtered ? 1 : 0;
		case GHA_COUNT:
		case GHA_MIN:
		case GHA_MAX:
			return 1;
		case GHA_SUM:
		case GHA_AVG:
			if (argtype != NUMERICOID)
				return 1;
			{
				int			s = arg->scale;
				int			d = Min(arg->digits, 39);
				int			jmin = s > 0 ? -((s + 15) / 16) : 0;
				int			jmax = d > s ? (d - s - 1) / 16 : 0;

				*j0 = jmin;
				*nlimbs = jmax - jmin + 1;
				return *nlimbs + 1;	/* and the display scale */
			}
		default:
			return -1;
	}
}

static void
set_out(gh_prog *p, int col, gh_valtype type, int ops)
{
	p->outs[col].type = (uint8) type;
	p->outs[col].ops = (uint8) ops;
}

/* ---- the program ---- */

bool
star_expr_ok(Node *expr, StarCompileInput *in, const char **why)
{
	Cx			cx = {0};
	gh_prog    *p = palloc0(sizeof(gh_prog));
	StarFact	saved = in->fact;
	Sv			v;

	cx.in = in;
	cx.p = p;
	v = c_expr(&cx, expr);
	(void) v;
	in->fact = saved;			/* planning leaves the column list alone */
	pfree(p);
	if (why)
		*why = cx.why;
	return cx.why == NULL;
}

/* Is a grouping expression (rewritten) never NULL?  A fact column declared NOT NULL. */
static bool
never_null(StarCompileInput *in, Node *expr)
{
	Var		   *var = (Var *) expr;

	return IsA(expr, Var) && var->varno == OUTER_VAR && var->varattno > 0 &&
		var->varattno <= in->fact.desc->natts &&
		TupleDescAttr(in->fact.desc, var->varattno - 1)->attnotnull;
}

/*
 * Grouping column g's field (its dimension, width, chunks, and whether it
 * has a NULL bit, placed later): the bits it takes in a packed key.  A
 * dimension's code takes the bits of its count of codes (2^16 where not
 * given); a width of 0 is a type that cannot be packed.
 */
static int
key_field(StarCompileInput *in, int g, StarField *f)
{
	List	   *grp = list_nth(in->groups, g);
	List	   *gt = list_nth(in->grouptypes, g);

	memset(f, 0, sizeof(StarField));
	f->dim = intVal(linitial(grp));
	f->outcol = -1;
	f->zerocol = -1;
	f->nullbit = -1;
	if (f->dim >= 0)
	{
		int			codes = in->dim_codes ? in->dim_codes[f->dim] : 1 << 16;

		f->width = 1;
		while ((1 << f->width) < codes && f->width < 32)
			f->width++;
		/* a LEFT JOIN's dimension: no code where it finds no row */
		if (in->left_dims >> f->dim & 1)
			f->nullbit = 0;
	}
	else
	{
		f->width = star_key_bits((Oid) linitial_int(gt), lsecond_int(gt), lfourth_int(gt));
		f->nchunks = f->width > 64 ? f->width / 64 : 0;
		if (!never_null(in, lsecond(grp)))
			f->nullbit = 0;
	}
	return f->width + (f->nullbit >= 0 ? 1 : 0);
}

/*
 * Is the group key of in a hash of its fields (KEYMIX), which two groups
 * may share?  Where they take more than 64 bits.
 */
bool
star_key_hashed(StarCompileInput *in)
{
	int			total_bits = 0;

	for (int g = 0; g < list_length(in->groups); g++)
	{
		StarField	f;

		total_bits += key_field(in, g, &f);
	}
	return total_bits > 64;
}

/*
 * KEYMIX's imm: the hashed key's high bits cleared, so that tests make
 * groups collide (gpuhash.debug_star_key_bits); none by default.
 */
static int
key_bits_cleared(void)
{
	return gpuhash_debug_star_key_bits > 0 ? 64 - gpuhash_debug_star_key_bits : 0;
}

/*
 * May prog escape on fixed-width values alone?  GH_OP_DATEPART does, where
 * PostgreSQL's answer is not an integer (EXTRACT's infinity) or is an
 * error (a date past the timestamps, date_mi of an infinite date), and
 * GH_OP_N2F on a numeric beyond 2^53; so the alternative gives PostgreSQL's
 * answer or error.  (Every varlena column
 * may escape too: star_path.c, star_may_escape.)
 */
bool
star_prog_may_escape(const gh_prog *prog)
{
	for (int pc = 0; pc < prog->ncode; pc++)
		if (prog->code[pc].op == GH_OP_DATEPART || prog->code[pc].op == GH_OP_N2F)
			return true;
	return false;
}

StarCompiled *
star_compile(StarCompileInput *in, const char **why)
{
	Cx			cx = {0};
	StarCompiled *sc = palloc0(sizeof(StarCompiled));
	gh_prog    *p = palloc0(sizeof(gh_prog));
	ListCell   *lc;
	int			d = 0,
				g = 0,
				a = 0;
	int			total_bits = 0;
	int			nouts = 0;
	int		   *widths;

	cx.in = in;
	cx.p = p;
	sc->prog = p;
	p->ndims = list_length(in->dims);
	in->fact.ncols = 0;

	/* the scan's quals */
	foreach(lc, in->quals)
	{
		Sv			q = c_expr(&cx, lfirst(lc));

		if (FAILED(&cx))
			break;
		emit(&cx, GH_OP_QUAL, 0, q.reg, 0, 0);
		free_reg(&cx, q.reg);
	}

	/* the dimensions */
	foreach(lc, in->dims)
	{
		List	   *dim = lfirst(lc);
		List	   *factkeys = list_nth(dim, STAR_DIM_FACTKEYS);
		Sv			k;

		if (list_length(factkeys) != 1)
		{
			fail(&cx, "a join key of several columns");
			break;
		}
		k = c_expr(&cx, linitial(factkeys));
		if (FAILED(&cx))
			break;
		if (k.kind != SV_INT || k.type == BOOLOID)
		{
			fail(&cx, "a join key the device does not compare exactly");
			break;
		}
		emit(&cx, GH_OP_PROBE, 0, k.reg,
			 (in->left_dims >> d & 1) ? GH_PROBE_LEFT :
			 (in->anti_dims >> d & 1) ? GH_PROBE_ANTI : GH_PROBE_INNER, d);
		free_reg(&cx, k.reg);
		d++;
	}

	/* the join clauses no dimension applies itself */
	foreach(lc, in->joinquals)
	{
		Sv			q;

		if (FAILED(&cx))
			break;
		q = c_expr(&cx, lfirst(lc));
		if (FAILED(&cx))
			break;
		emit(&cx, GH_OP_QUAL, 0, q.reg, 0, 0);
		free_reg(&cx, q.reg);
	}

	/* the grouping columns: their widths first, to choose the key's form */
	sc->nfields = list_length(in->groups);
	sc->fields = palloc0(sizeof(StarField) * Max(sc->nfields, 1));
	widths = palloc0(sizeof(int) * Max(sc->nfields, 1));
	for (g = 0; g < sc->nfields; g++)
	{
		widths[g] = key_field(in, g, &sc->fields[g]);
		if (sc->fields[g].width == 0)
			fail(&cx, "a grouping column of a type the device cannot pack");
		total_bits += widths[g];
	}
	sc->mixed_key = total_bits > 64;
	g = 0;
	total_bits = 0;
	foreach(lc, in->groups)
	{
		List	   *grp = lfirst(lc);
		StarField  *f = &sc->fields[g];
		Sv			v;

		if (FAILED(&cx))
			break;
		if (f->dim >= 0)
		{
			List	   *dim = list_nth(in->dims, f->dim);

			/* a dimension's group code is its last payload column */
			v.reg = alloc_reg(&cx);
			emit(&cx, GH_OP_LDDIM, v.reg, 0, 0,
				 (f->dim << 8) | intVal(list_nth(dim, STAR_DIM_NPAYLOAD)));
			v.kind = SV_INT;
			v.type = INT4OID;
			if ((in->left_dims >> f->dim & 1) && in->null_codes && in->null_codes[f->dim] >= 0)
			{
				/*
				 * a LEFT JOIN's row of no dimension row: the group of the
				 * dimension's rows NULL in every grouping column, which show
				 * the same (else a NULL code, shown so)
				 */
				int			skip = emit(&cx, GH_OP_JNOTNULL, 0, v.reg, 0, 0);

				emit(&cx, GH_OP_LDCONST, v.reg, 0, 0, add_const(&cx, in->null_codes[f->dim], 0,
																 false, 0));
				land(&cx, skip);
			}
		}
		else
		{
			v = c_expr(&cx, lsecond(grp));
			if (FAILED(&cx))
				break;
			if (v.kind == SV_TEXT && f->nchunks > 0)
			{
				/* a wide text: each 7-byte chunk a field of the hashed key */
				if (nouts + f->nchunks > GH_PROG_MAX_OUTS)
				{
					fail(&cx, "too many output columns");
					break;
				}
				f->outcol = nouts;
				for (int c = 0; c < f->nchunks; c++)
				{
					int			w = alloc_reg(&cx);

					emit(&cx, GH_OP_TPACK, w, v.reg, 0,
						 (v.bpchar ? 1 : 0) | (c + 1 < f->nchunks ? 2 : 0) | c << 8);
					emit(&cx, GH_OP_KEYMIX, 0, w, 0, key_bits_cleared());
					set_out(p, nouts, GH_INT64, GH_AGG_MIN | GH_AGG_MAX);
					emit(&cx, GH_OP_OUT_INT, nouts++, w, 0, 0);
					free_reg(&cx, w);
				}
				free_reg(&cx, v.reg);
				g++;
				continue;
			}
			if (v.kind == SV_TEXT)
				emit(&cx, GH_OP_TPACK, v.reg, v.reg, 0, v.bpchar ? 1 : 0);
			else if (v.kind == SV_FLOAT && v.integral)
			{
				/*
				 * date_part's doubles hold integers: never NaN, nor -0 (which
				 * equals 0 but shows otherwise: a group shows its first row's
				 * key, which a key of bits cannot tell); -0 is folded all the
				 * same
				 */
				emit(&cx, GH_OP_F2ORD, v.reg, v.reg, 0, 1);
			}
			else if (v.kind == SV_FLOAT)
			{
				/*
				 * Other doubles: -0 equals 0 and hashes as 0, so they group
				 * together and the key holds 0 for both; the group shows its
				 * first row's, which no key of bits can tell.  So the exact
				 * values go to an output column as well: where its minimum
				 * and maximum differ, a group held both, and the node runs
				 * its alternative (star_exec.c, take_groups); otherwise that
				 * is the value shown.  NaNs are one value (float8eq).
				 */
				int			w = alloc_reg(&cx);

				if (nouts >= GH_PROG_MAX_OUTS)
				{
					fail(&cx, "too many output columns");
					break;
				}
				emit(&cx, GH_OP_F2ORD, w, v.reg, 0, 0);
				f->zerocol = nouts;
				sc->zero_cols = true;
				set_out(p, nouts, GH_INT64, GH_AGG_MIN | GH_AGG_MAX);
				emit(&cx, GH_OP_OUT_INT, nouts++, w, 0, 0);
				free_reg(&cx, w);
				emit(&cx, GH_OP_F2ORD, v.reg, v.reg, 0, 1);
			}
			else if (v.kind != SV_INT &&
					 !(v.kind == SV_NUM && v.digits <= 18 &&
					   v.scale == numeric_key_scale(exprType(lsecond(grp)),
													exprTypmod(lsecond(grp)))))
			{
				fail(&cx, "a grouping column the device cannot pack");
				break;
			}
		}
		if (sc->mixed_key)
		{
			emit(&cx, GH_OP_KEYMIX, 0, v.reg, 0, key_bits_cleared());
			if (f->zerocol >= 0)
			{
				/*
				 * a float's exact values hold it: their minimum and maximum
				 * agree wherever the folded ones do, but in a group of 0 and
				 * -0, which check_zero_cols finds first
				 */
				f->outcol = f->zerocol;
			}
			else
			{
				f->outcol = nouts;
				set_out(p, nouts, GH_INT64, GH_AGG_MIN | GH_AGG_MAX);
				emit(&cx, GH_OP_OUT_INT, nouts++, v.reg, 0, 0);
			}
		}
		else
		{
			f->shift = total_bits;
			if (f->nullbit >= 0)
				f->nullbit = total_bits + f->width;
			emit(&cx, GH_OP_KEYPACK, 0, v.reg, 0,
				 f->shift | (f->width << 8) | ((f->nullbit + 1) << 16));
			total_bits += widths[g];
		}
		free_reg(&cx, v.reg);
		g++;
	}

	/* the aggregates */
	sc->aggs = palloc0(sizeof(StarAggCols) * Max(list_length(in->aggs), 1));
	foreach(lc, in->aggs)
	{
		List	   *agg = lfirst(lc);
		GhaOp		op = (GhaOp) intVal(linitial(agg));
		Oid			argtype = (Oid) intVal(lsecond(agg));
		Node	   *arg = lthird(agg);
		Node	   *filter = lfourth(agg);
		StarAggCols *ac = &sc->aggs[a++];
		Sv			v = {0};
		int			skip = -1,
					done = -1;
		int			ncols,
					j0 = 0,
					nlimbs = 0;

		if (FAILED(&cx))
			break;
		ac->col = -1;
		gha_numcols_reset(&ac->num);
		if (op == GHA_COUNT_STAR && filter == NULL)
			continue;
		if (filter)
		{
			Sv			fv = c_expr(&cx, filter);

			if (FAILED(&cx))
				break;
			skip = emit(&cx, GH_OP_JFALSE, 0, fv.reg, 0, 0);
			free_reg(&cx, fv.reg);
		}
		if (op == GHA_COUNT_STAR)
		{
			v.reg = alloc_reg(&cx);
			v.kind = SV_INT;
			emit(&cx, GH_OP_BOOL, v.reg, 0, 0, 1);
		}
		else
			v = c_expr(&cx, arg);
		if (FAILED(&cx))
			break;
		ncols = agg_columns(op, argtype, filter != NULL, &v, &j0, &nlimbs);
		if (ncols < 0 || nouts + ncols > GH_PROG_MAX_OUTS)
		{
			fail(&cx, ncols < 0 ? "an aggregate the device does not compute" :
				 "too many output columns");
			break;
		}
		ac->col = nouts;
		if (argtype == NUMERICOID && (op == GHA_SUM || op == GHA_AVG))
		{
			if (v.kind != SV_NUM)
			{
				fail(&cx, "a numeric aggregate of a value that is not one");
				break;
			}
			for (int l = 0; l < nlimbs; l++)
			{
				set_out(p, nouts + l, GH_INT64, GH_AGG_SUM);
				ac->num.limb_j[l] = j0 + l;
				ac->num.limb_col[l] = nouts + l;
			}
			ac->num.nlimbs = nlimbs;
			ac->num.dscale_col = nouts + nlimbs;
			set_out(p, nouts + nlimbs, GH_INT64, GH_AGG_MAX);
			emit(&cx, GH_OP_OUT_NUM, nouts, v.reg, v.scale, (j0 & 255) | (nlimbs << 8));
		}
		else if (op == GHA_COUNT || op == GHA_COUNT_STAR)
		{
			set_out(p, nouts, GH_INT64, 0);
			emit(&cx, GH_OP_OUT_INT, nouts, v.reg, 0, 0);
		}
		else if (v.kind == SV_FLOAT && (op == GHA_SUM || op == GHA_AVG))
		{
			set_out(p, nouts, GH_FLOAT64, GHA_FLOAT_SUM_OPS);
			emit(&cx, GH_OP_OUT_F8, nouts, v.reg, 0, 0);
		}
		else if (v.kind == SV_FLOAT)
		{
			emit(&cx, GH_OP_F2ORD, v.reg, v.reg, 0, 0);
			set_out(p, nouts, GH_INT64, op == GHA_MIN ? GH_AGG_MIN : GH_AGG_MAX);
			emit(&cx, GH_OP_OUT_INT, nouts, v.reg, 0, 0);
		}
		else if (v.kind == SV_NUM && (op == GHA_MIN || op == GHA_MAX))
		{
			/* numeric_minmax (star_path.c): a declared scale, 18 digits */
			if (v.digits > 18 || v.scale != star_numeric_minmax_scale(exprTypmod(arg)))
			{
				fail(&cx, "a numeric minimum or maximum of no declared scale");
				break;
			}
			ac->scale = v.scale;
			set_out(p, nouts, GH_INT64, op == GHA_MIN ? GH_AGG_MIN : GH_AGG_MAX);
			emit(&cx, GH_OP_OUT_INT, nouts, v.reg, 0, 0);
		}
		else if (v.kind == SV_INT)
		{
			set_out(p, nouts, GH_INT64, op == GHA_SUM || op == GHA_AVG ? GH_AGG_SUM :
					op == GHA_MIN ? GH_AGG_MIN : GH_AGG_MAX);
			emit(&cx, GH_OP_OUT_INT, nouts, v.reg, 0, 0);
		}
		else
		{
			fail(&cx, "an aggregate of a value the device does not sum or order");
			break;
		}
		free_reg(&cx, v.reg);
		if (filter)
		{
			done = emit(&cx, GH_OP_JMP, 0, 0, 0, 0);
			land(&cx, skip);
			emit(&cx, GH_OP_OUT_NULL, nouts, 0, 0, ncols);
			land(&cx, done);
		}
		nouts += ncols;
	}
	emit(&cx, GH_OP_END, 0, 0, 0, 0);
	p->nouts = nouts;
	if (why)
		*why = cx.why;
	if (FAILED(&cx))
		return NULL;
	return sc;
}
