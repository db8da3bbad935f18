/*-------------------------------------------------------------------------
 *
 * engine_prog.c
 *	  gh_prog_check: is a star program (engine.h, "the star pipeline") one
 *	  that the interpreter (star_vm.h) can run on any row without reading
 *	  outside what it was given?
 *
 * The interpreter trusts its program: it indexes registers, constants,
 * columns, dimensions and output columns without checks, follows text
 * registers as addresses and reads a dimension's row of the last probe.
 * On the device a wrong index is a fault that kills the context, so
 * gh_star_create refuses any program this file does not accept.
 *
 * Each instruction's fields are checked against what its opcode makes of
 * them (OPERANDS below: which of dst, a and b are registers read or
 * written, or an output column, or a width, scale or flag; what imm is).
 * Then the paths through the program are followed.  Jumps go forward only
 * and the last instruction is END or DROP, so every path ends; in program
 * order each instruction's state is the meet (intersection) of what every
 * path into it guarantees:
 *
 *	- registers written (every register read is written first on every
 *	  path, so a row's result never depends on another row's leftovers)
 *	- registers holding text, or NULL: the only ones TCMP and TPACK may
 *	  follow as addresses (text loads and text constants make them; MOVE
 *	  and SETNULL keep them; every other write makes a register non-text)
 *	- dimensions probed (LDDIM reads the row of its dimension's probe)
 *	- output columns written (at END every output column is, so a kept
 *	  row's outputs are its own)
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine_internal.h"

/* What an opcode makes of its fields. */
#define RD_A	0x0001			/* a is a register read */
#define RD_B	0x0002			/* b is a register read */
#define WR_DST	0x0004			/* dst is a register written */
#define RD_DST	0x0008			/* ... and read first (AND, OR) */
#define OUT_DST 0x0010			/* dst is an output column */
#define JUMP	0x0020			/* imm is a jump target */
#define NO_NEXT 0x0040			/* never goes on to the next instruction */
#define TEXT_A	0x0080			/* a holds text */
#define TEXT_B	0x0100			/* b holds text */
#define MK_TEXT 0x0200			/* dst becomes text (or NULL) */
#define CP_TEXT 0x0400			/* dst is text where a is (MOVE) */
#define INT_WIDTH 0x0800		/* imm is 16, 32 or 64 */
#define CMP_IMM 0x1000			/* imm is a GH_CMP_* */

typedef struct opinfo
{
	const char *name;
	int			flags;
} opinfo;

static const opinfo OPERANDS[GH_OP_COUNT_] = {
	[GH_OP_END] = {"END", NO_NEXT},
	[GH_OP_DROP] = {"DROP", NO_NEXT},
	[GH_OP_QUAL] = {"QUAL", RD_A},
	[GH_OP_JMP] = {"JMP", JUMP | NO_NEXT},
	[GH_OP_JFALSE] = {"JFALSE", RD_A | JUMP},
	[GH_OP_JNULL] = {"JNULL", RD_A | JUMP},
	[GH_OP_JNOTNULL] = {"JNOTNULL", RD_A | JUMP},
	[GH_OP_AND] = {"AND", RD_A | RD_DST | WR_DST | JUMP},
	[GH_OP_OR] = {"OR", RD_A | RD_DST | WR_DST | JUMP},
	[GH_OP_BOOL] = {"BOOL", WR_DST},
	[GH_OP_NOT] = {"NOT", RD_A | WR_DST},
	[GH_OP_ISNULL] = {"ISNULL", RD_A | WR_DST},
	[GH_OP_ISNOTNULL] = {"ISNOTNULL", RD_A | WR_DST},
	[GH_OP_MOVE] = {"MOVE", RD_A | WR_DST | CP_TEXT},
	[GH_OP_SETNULL] = {"SETNULL", WR_DST | MK_TEXT},
	[GH_OP_LDCONST] = {"LDCONST", WR_DST},
	[GH_OP_LDCOL_INT] = {"LDCOL_INT", WR_DST},
	[GH_OP_LDCOL_UINT] = {"LDCOL_UINT", WR_DST},
	[GH_OP_LDCOL_F4] = {"LDCOL_F4", WR_DST},
	[GH_OP_LDCOL_F8] = {"LDCOL_F8", WR_DST},
	[GH_OP_LDCOL_NUM] = {"LDCOL_NUM", WR_DST},
	[GH_OP_LDCOL_TEXT] = {"LDCOL_TEXT", WR_DST | MK_TEXT},
	[GH_OP_PROBE] = {"PROBE", RD_A},
	[GH_OP_LDDIM] = {"LDDIM", WR_DST},
	[GH_OP_IADD] = {"IADD", RD_A | RD_B | WR_DST | INT_WIDTH},
	[GH_OP_ISUB] = {"ISUB", RD_A | RD_B | WR_DST | INT_WIDTH},
	[GH_OP_IMUL] = {"IMUL", RD_A | RD_B | WR_DST | INT_WIDTH},
	[GH_OP_IDIV] = {"IDIV", RD_A | RD_B | WR_DST | INT_WIDTH},
	[GH_OP_IMOD] = {"IMOD", RD_A | RD_B | WR_DST | INT_WIDTH},
	[GH_OP_INEG] = {"INEG", RD_A | WR_DST | INT_WIDTH},
	[GH_OP_ICAST] = {"ICAST", RD_A | WR_DST | INT_WIDTH},
	[GH_OP_I2F] = {"I2F", RD_A | WR_DST},
	[GH_OP_I2N] = {"I2N", RD_A | WR_DST},
	[GH_OP_ICMP] = {"ICMP", RD_A | RD_B | WR_DST | CMP_IMM},
	[GH_OP_FCMP] = {"FCMP", RD_A | RD_B | WR_DST | CMP_IMM},
	[GH_OP_NCMP] = {"NCMP", RD_A | RD_B | WR_DST | CMP_IMM},
	[GH_OP_DTCMP] = {"DTCMP", RD_A | RD_B | WR_DST | CMP_IMM},
	[GH_OP_TCMP] = {"TCMP", RD_A | RD_B | WR_DST | TEXT_A | TEXT_B},
	[GH_OP_LIKE] = {"LIKE", RD_A | RD_B | WR_DST | TEXT_A | TEXT_B},
	[GH_OP_TLEN] = {"TLEN", RD_A | WR_DST | TEXT_A},
	[GH_OP_SUBSTR] = {"SUBSTR", RD_A | RD_B | WR_DST | TEXT_A | MK_TEXT},
	[GH_OP_FADD] = {"FADD", RD_A | RD_B | WR_DST},
	[GH_OP_FSUB] = {"FSUB", RD_A | RD_B | WR_DST},
	[GH_OP_FMUL] = {"FMUL", RD_A | RD_B | WR_DST},
	[GH_OP_FDIV] = {"FDIV", RD_A | RD_B | WR_DST},
	[GH_OP_FNEG] = {"FNEG", RD_A | WR_DST},
	[GH_OP_F4ADD] = {"F4ADD", RD_A | RD_B | WR_DST},
	[GH_OP_F4SUB] = {"F4SUB", RD_A | RD_B | WR_DST},
	[GH_OP_F4MUL] = {"F4MUL", RD_A | RD_B | WR_DST},
	[GH_OP_F4DIV] = {"F4DIV", RD_A | RD_B | WR_DST},
	[GH_OP_F2ORD] = {"F2ORD", RD_A | WR_DST},
	[GH_OP_FROUND] = {"FROUND", RD_A | WR_DST},
	[GH_OP_F2I] = {"F2I", RD_A | WR_DST | INT_WIDTH},
	[GH_OP_NADD] = {"NADD", RD_A | RD_B | WR_DST},
	[GH_OP_NSUB] = {"NSUB", RD_A | RD_B | WR_DST},
	[GH_OP_NMUL] = {"NMUL", RD_A | RD_B | WR_DST},
	[GH_OP_NNEG] = {"NNEG", RD_A | WR_DST},
	[GH_OP_NSCALE] = {"NSCALE", RD_A | WR_DST},
	[GH_OP_N2F] = {"N2F", RD_A | WR_DST},
	[GH_OP_NROUND] = {"NROUND", RD_A | WR_DST},
	[GH_OP_N2I] = {"N2I", RD_A | WR_DST | INT_WIDTH},
	[GH_OP_DATEPART] = {"DATEPART", RD_A | WR_DST},
	[GH_OP_TPACK] = {"TPACK", RD_A | WR_DST | TEXT_A},
	[GH_OP_KEYPACK] = {"KEYPACK", RD_A},
	[GH_OP_KEYMIX] = {"KEYMIX", RD_A},
	[GH_OP_OUT_INT] = {"OUT_INT", RD_A | OUT_DST},
	[GH_OP_OUT_F8] = {"OUT_F8", RD_A | OUT_DST},
	[GH_OP_OUT_NUM] = {"OUT_NUM", RD_A | OUT_DST},
	[GH_OP_OUT_NULL] = {"OUT_NULL", OUT_DST},
};

/* What every path into an instruction guarantees. */
typedef struct pathstate
{
	bool		reached;
	uint32_t	written;		/* registers */
	uint32_t	text;			/* registers holding text or NULL */
	uint32_t	probed;			/* dimensions */
	uint64_t	outs;			/* output columns */
} pathstate;

static __thread char problem[200];

static const char *say(int pc, const gh_instr *in, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

static const char *
say(int pc, const gh_instr *in, const char *fmt,...)
{
	va_list		ap;
	int			at;

	if (in->op < GH_OP_COUNT_ && OPERANDS[in->op].name != NULL)
		at = snprintf(problem, sizeof(problem), "instruction %d (%s): ", pc,
					  OPERANDS[in->op].name);
	else
		at = snprintf(problem, sizeof(problem), "instruction %d: ", pc);
	va_start(ap, fmt);
	vsnprintf(problem + at, sizeof(problem) - at, fmt, ap);
	va_end(ap);
	return problem;
}

/* Output columns [first, first + n) exist and are all of type (-1: any). */
static bool
outs_ok(const gh_prog *p, int first, int n, int type)
{
	if (first < 0 || n < 1 || first + n > p->nouts)
		return false;
	for (int c = first; c < first + n; c++)
		if (type >= 0 && p->outs[c].type != type)
			return false;
	return true;
}

/* The attribute that output column o of spec comes from, or -1. */
static int
attribute_of(const gh_pagespec *spec, int o)
{
	for (int a = 0; a < spec->natts; a++)
		if (spec->out_of[a] == o)
			return a;
	return -1;
}

/* The checks of one instruction's fields that need no path: NULL or the problem. */
static const char *
check_fields(const gh_prog *p, const gh_pagespec *spec, const int *dim_ncols, int pc)
{
	const gh_instr *in = &p->code[pc];
	int			f = OPERANDS[in->op].flags;
	int			imm = in->imm;

	if ((f & RD_A) && in->a >= p->nregs)
		return say(pc, in, "register a = %d, only %d registers", in->a, p->nregs);
	if ((f & RD_B) && in->b >= p->nregs)
		return say(pc, in, "register b = %d, only %d registers", in->b, p->nregs);
	if ((f & WR_DST) && in->dst >= p->nregs)
		return say(pc, in, "register dst = %d, only %d registers", in->dst, p->nregs);
	if ((f & JUMP) && (imm <= pc || imm >= p->ncode))
		return say(pc, in, "a jump to %d, not forward within the %d instructions", imm,
				   p->ncode);
	if ((f & INT_WIDTH) && imm != 16 && imm != 32 && imm != 64)
		return say(pc, in, "integer width %d, not 16, 32 or 64", imm);
	if ((f & CMP_IMM) && (imm < GH_CMP_EQ || imm > GH_CMP_GE))
		return say(pc, in, "comparison %d", imm);
	switch (in->op)
	{
		case GH_OP_BOOL:
			if (imm != 0 && imm != 1)
				return say(pc, in, "imm %d, not 0 or 1", imm);
			break;
		case GH_OP_LDCONST:
			{
				const gh_pconst *k;

				if (imm < 0 || imm >= p->nconsts)
					return say(pc, in, "constant %d, only %d constants", imm, p->nconsts);
				if (in->b > 1)
					return say(pc, in, "b = %d, not 0 or 1 (text)", in->b);
				k = &p->consts[imm];
				if (in->b == 1 && !k->null &&
					(k->lo < 0 || k->hi < 0 || k->lo > p->nbytes || k->hi > p->nbytes - k->lo))
					return say(pc, in, "text constant %d: bytes [%lld, +%lld) outside the %d bytes",
							   imm, (long long) k->lo, (long long) k->hi, p->nbytes);
				break;
			}
		case GH_OP_LDCOL_INT:
		case GH_OP_LDCOL_UINT:
		case GH_OP_LDCOL_F4:
		case GH_OP_LDCOL_F8:
		case GH_OP_LDCOL_NUM:
		case GH_OP_LDCOL_TEXT:
			{
				int			att = imm >= 0 && imm < spec->nout ? attribute_of(spec, imm) : -1;
				int			len = att >= 0 ? spec->attlen[att] : 0;
				int			want = in->op == GH_OP_LDCOL_F4 ? 4 : in->op == GH_OP_LDCOL_F8 ? 8 :
					in->op == GH_OP_LDCOL_NUM || in->op == GH_OP_LDCOL_TEXT ? -1 : in->b;

				if (att < 0)
					return say(pc, in, "column %d, only %d columns", imm, spec->nout);
				if ((in->op == GH_OP_LDCOL_INT || in->op == GH_OP_LDCOL_UINT) &&
					in->b != 1 && in->b != 2 && in->b != 4 && in->b != 8)
					return say(pc, in, "width %d bytes, not 1, 2, 4 or 8", in->b);
				if (len != want)
					return say(pc, in, "column %d (attribute %d) has attlen %d, not %d", imm,
							   att + 1, len, want);
				break;
			}
		case GH_OP_PROBE:
			if (imm < 0 || imm >= p->ndims)
				return say(pc, in, "dimension %d, only %d dimensions", imm, p->ndims);
			if (in->b != GH_PROBE_INNER && in->b != GH_PROBE_LEFT && in->b != GH_PROBE_ANTI)
				return say(pc, in, "join %d is not a GH_PROBE_*", in->b);
			break;
		case GH_OP_LDDIM:
			if (imm < 0 || (imm >> 8) >= p->ndims)
				return say(pc, in, "dimension %d, only %d dimensions", imm >> 8, p->ndims);
			if ((imm & 255) >= dim_ncols[imm >> 8])
				return say(pc, in, "column %d of dimension %d, which has %d", imm & 255,
						   imm >> 8, dim_ncols[imm >> 8]);
			break;
		case GH_OP_TCMP:
			if ((imm & ~GH_CMP_BPCHAR) != GH_CMP_EQ && (imm & ~GH_CMP_BPCHAR) != GH_CMP_NE)
				return say(pc, in, "text comparison %d, not EQ or NE (| GH_CMP_BPCHAR)", imm);
			break;
		case GH_OP_N2F:
			if (imm < 0 || imm > 38)
				return say(pc, in, "a numeric of static scale %d", imm);
			break;
		case GH_OP_NSCALE:
			if (imm < 0)
				return say(pc, in, "a scale of 10^%d", imm);
			break;
		case GH_OP_LIKE:
			if (imm != 0 && imm != 1)
				return say(pc, in, "imm %d, not 0 or 1 (UTF-8)", imm);
			break;
		case GH_OP_TLEN:
			if (imm < 0 || imm > 3)
				return say(pc, in, "imm %d, not flags 1 (UTF-8) and 2 (bpchar)", imm);
			break;
		case GH_OP_SUBSTR:
			if (imm < -4)
				return say(pc, in, "imm %d, a count of %d characters", imm, imm >> 2);
			break;
		case GH_OP_FROUND:
			if (imm < GH_ROUND_NEAREST || imm > GH_ROUND_TRUNC)
				return say(pc, in, "rounding %d, not a GH_ROUND_*", imm);
			break;
		case GH_OP_NROUND:
			if (in->b < 0 || in->b > 38 || imm < 0 || (imm & 255) > GH_ROUND_TRUNC ||
				(imm >> 8) > 255)
				return say(pc, in, "%d digits dropped, rounding %d, display scale %d", in->b,
						   imm & 255, imm >> 8);
			break;
		case GH_OP_DATEPART:
			{
				int			field = imm & 255;
				int			offset = imm >> 8;

				if ((in->b != 0 && in->b != 1) ||
					(field > GH_DATEPART_DATE && field < GH_DATETRUNC_YEAR) ||
					(in->b == 0 && field == GH_DATEPART_DATE) ||
					field > GH_DATETRUNC_SECOND ||
					(in->b == 0 && (field == GH_DATEPART_HOUR || field == GH_DATEPART_MINUTE)) ||
					(in->b == 1 && field == GH_DATEPART_DAYS) ||
					offset <= -86400 || offset >= 86400 ||
					(offset != 0 && in->b == 0 && field < GH_DATETRUNC_YEAR))
					return say(pc, in, "field %d of b = %d, time zone offset %d s", field, in->b,
							   offset);
			}
			break;
		case GH_OP_TPACK:
			if (imm < 0 || (imm & 0xfc) != 0 || (imm >> 8) > 255)
				return say(pc, in, "imm %d: flags 1 and 2, a chunk below 256 from bit 8", imm);
			break;
		case GH_OP_KEYPACK:
			if (imm < 0 || (imm & 255) > 63 || ((imm >> 8) & 255) < 1 ||
				((imm >> 8) & 255) > 64 || (imm >> 16) > 64)
				return say(pc, in, "shift %d, width %d, NULL bit %d", imm & 255,
						   (imm >> 8) & 255, (imm >> 16) - 1);
			break;
		case GH_OP_KEYMIX:
			if (imm < 0 || imm > 63)
				return say(pc, in, "%d bits cleared, not 0 .. 63", imm);
			break;
		case GH_OP_OUT_INT:
		case GH_OP_OUT_F8:
			if (!outs_ok(p, in->dst, 1, in->op == GH_OP_OUT_INT ? GH_INT64 : GH_FLOAT64))
				return say(pc, in, "output column %d: not one of the %d, or not %s", in->dst,
						   p->nouts, in->op == GH_OP_OUT_INT ? "GH_INT64" : "GH_FLOAT64");
			break;
		case GH_OP_OUT_NUM:
			if (imm < 0 || !outs_ok(p, in->dst, (imm >> 8) + 1, GH_INT64) || (imm >> 8) < 1)
				return say(pc, in, "output columns %d .. %d (%d limbs and the display scale): "
						   "not GH_INT64 columns of the %d", in->dst, in->dst + (imm >> 8),
						   imm >> 8, p->nouts);
			break;
		case GH_OP_OUT_NULL:
			if (!outs_ok(p, in->dst, imm, -1))
				return say(pc, in, "output columns %d .. %d, only %d", in->dst,
						   in->dst + imm - 1, p->nouts);
			break;
		default:
			break;
	}
	return NULL;
}

/* Merge what one path guarantees into the state of instruction to. */
static void
meet(pathstate *to, const pathstate *from)
{
	if (!to->reached)
	{
		*to = *from;
		return;
	}
	to->written &= from->written;
	to->text &= from->text;
	to->probed &= from->probed;
	to->outs &= from->outs;
}

/* The checks along the paths: NULL or the problem (fields checked already). */
static const char *
check_paths(const gh_prog *p, pathstate *st)
{
	uint64_t	all_outs = p->nouts >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << p->nouts) - 1;

	memset(st, 0, p->ncode * sizeof(pathstate));
	st[0].reached = true;
	for (int pc = 0; pc < p->ncode; pc++)
	{
		const gh_instr *in = &p->code[pc];
		int			f = OPERANDS[in->op].flags;
		pathstate	s = st[pc];

		if (!s.reached)
			continue;
		if ((f & RD_A) && !(s.written >> in->a & 1))
			return say(pc, in, "register %d read before it is written", in->a);
		if ((f & RD_B) && !(s.written >> in->b & 1))
			return say(pc, in, "register %d read before it is written", in->b);
		if ((f & RD_DST) && !(s.written >> in->dst & 1))
			return say(pc, in, "register %d read before it is written", in->dst);
		if ((f & TEXT_A) && !(s.text >> in->a & 1))
			return say(pc, in, "register %d does not hold text on every path", in->a);
		if ((f & TEXT_B) && !(s.text >> in->b & 1))
			return say(pc, in, "register %d does not hold text on every path", in->b);
		if (in->op == GH_OP_LDDIM && !(s.probed >> (in->imm >> 8) & 1))
			return say(pc, in, "dimension %d is not probed on every path", in->imm >> 8);
		if (in->op == GH_OP_END && s.outs != all_outs)
			return say(pc, in, "a row kept without all %d output columns written", p->nouts);

		/* the state after it */
		if (f & WR_DST)
		{
			bool		text = (f & MK_TEXT) ||
				(in->op == GH_OP_LDCONST && in->b == 1) ||
				((f & CP_TEXT) && (s.text >> in->a & 1));

			s.written |= UINT32_C(1) << in->dst;
			s.text = (s.text & ~(UINT32_C(1) << in->dst)) | ((uint32_t) text << in->dst);
		}
		if (in->op == GH_OP_PROBE && in->b != GH_PROBE_ANTI)
			s.probed |= UINT32_C(1) << in->imm;	/* an anti probe loads nothing */
		if (in->op == GH_OP_OUT_INT || in->op == GH_OP_OUT_F8)
			s.outs |= UINT64_C(1) << in->dst;
		else if (in->op == GH_OP_OUT_NUM || in->op == GH_OP_OUT_NULL)
		{
			int			n = in->op == GH_OP_OUT_NUM ? (in->imm >> 8) + 1 : in->imm;

			for (int c = in->dst; c < in->dst + n; c++)
				s.outs |= UINT64_C(1) << c;
		}
		if (f & JUMP)
			meet(&st[in->imm], &s);
		if (!(f & NO_NEXT))
			meet(&st[pc + 1], &s);	/* pc + 1 < ncode: the last one is END or DROP */
	}
	return NULL;
}

const char *
gh_prog_check(const gh_prog *p, const gh_pagespec *spec, const int *dim_ncols, int ndims)
{
	pathstate	st[GH_PROG_MAX_CODE];
	const char *why;
	int			last;

	if (p == NULL || spec == NULL || (ndims > 0 && dim_ncols == NULL))
		return "no program, page description or dimension columns";
	if (p->ncode < 1 || p->ncode > GH_PROG_MAX_CODE)
		return "the program has no instructions, or too many";
	if (p->nconsts < 0 || p->nconsts > GH_PROG_MAX_CONSTS ||
		p->nbytes < 0 || p->nbytes > GH_PROG_MAX_BYTES ||
		p->nregs < 0 || p->nregs > GH_PROG_MAX_REGS ||
		p->nouts < 0 || p->nouts > GH_PROG_MAX_OUTS)
		return "more constants, bytes, registers or output columns than a program may have";
	if (p->ndims < 0 || p->ndims > GH_PROG_MAX_DIMS || p->ndims != ndims)
	{
		snprintf(problem, sizeof(problem), "the program has %d dimensions, %d given",
				 p->ndims, ndims);
		return problem;
	}
	for (int d = 0; d < ndims; d++)
		if (dim_ncols[d] < 0 || dim_ncols[d] > GH_PROG_MAX_DIMCOLS)
		{
			snprintf(problem, sizeof(problem), "dimension %d has %d columns", d, dim_ncols[d]);
			return problem;
		}
	for (int c = 0; c < p->nouts; c++)
		if ((p->outs[c].type != GH_INT64 && p->outs[c].type != GH_FLOAT64) ||
			(p->outs[c].ops & ~(GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX)) != 0)
		{
			snprintf(problem, sizeof(problem), "output column %d: type %d, operations 0x%x",
					 c, p->outs[c].type, p->outs[c].ops);
			return problem;
		}
	for (int pc = 0; pc < p->ncode; pc++)
	{
		const gh_instr *in = &p->code[pc];

		if (in->op >= GH_OP_COUNT_ || OPERANDS[in->op].name == NULL)
			return say(pc, in, "unknown opcode %d", in->op);
		if ((why = check_fields(p, spec, dim_ncols, pc)) != NULL)
			return why;
	}
	last = p->code[p->ncode - 1].op;
	if (last != GH_OP_END && last != GH_OP_DROP)
		return say(p->ncode - 1, &p->code[p->ncode - 1],
				   "the last instruction is not END or DROP");
	return check_paths(p, st);
}
