/*-------------------------------------------------------------------------
 *
 * star_prog.c
 *	  Writing star programs (engine.h's gh_prog) by hand for the tests:
 *	  instructions, constants, output columns.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "star_test.h"

int
emit(gh_prog *p, int op, int dst, int a, int b, int imm)
{
	gh_instr   *in = &p->code[p->ncode];

	in->op = (uint8_t) op;
	in->dst = (uint8_t) dst;
	in->a = (uint8_t) a;
	in->b = (uint8_t) b;
	in->imm = imm;
	return p->ncode++;
}

/* Point the jump at pc to the next instruction to be emitted. */
void
land(gh_prog *p, int pc)
{
	p->code[pc].imm = p->ncode;
}

int
konst(gh_prog *p, int64_t lo, int64_t hi, bool null, int dscale)
{
	gh_pconst  *k = &p->consts[p->nconsts];

	k->lo = lo;
	k->hi = hi;
	k->null = null;
	k->dscale = (uint8_t) dscale;
	return p->nconsts++;
}

/* dst = an integer, a double, a text constant */
void
ld_int(gh_prog *p, int dst, int64_t v)
{
	emit(p, GH_OP_LDCONST, dst, 0, 0, konst(p, v, 0, false, 0));
}

void
ld_f8(gh_prog *p, int dst, double d)
{
	int64_t		bits;

	memcpy(&bits, &d, 8);
	emit(p, GH_OP_LDCONST, dst, 0, 0, konst(p, bits, 0, false, 0));
}

void
ld_text(gh_prog *p, int dst, const char *s)
{
	size_t		len = strlen(s);

	memcpy(p->bytes + p->nbytes, s, len);
	emit(p, GH_OP_LDCONST, dst, 0, 1, konst(p, p->nbytes, (int64_t) len, false, 0));
	p->nbytes += (int) len;
}

/* a test program that would write past the program's output columns */
static void
room_for_outs(const gh_prog *p, int n)
{
	if (p->nouts + n > GH_PROG_MAX_OUTS)
	{
		fprintf(stderr, "a test program of more than %d output columns\n", GH_PROG_MAX_OUTS);
		abort();
	}
}

/* output register a as a new column */
void
out_int(gh_prog *p, int a)
{
	room_for_outs(p, 1);
	p->outs[p->nouts] = (gh_pout) {GH_INT64, ALL_OPS};
	emit(p, GH_OP_OUT_INT, p->nouts++, a, 0, 0);
}

void
out_f8(gh_prog *p, int a)
{
	room_for_outs(p, 1);
	p->outs[p->nouts] = (gh_pout) {GH_FLOAT64, ALL_OPS};
	emit(p, GH_OP_OUT_F8, p->nouts++, a, 0, 0);
}

/* numeric a of static scale: limbs j0 .. j0 + n - 1 and its display scale */
void
out_num(gh_prog *p, int a, int scale, int j0, int n, int ops)
{
	int			first = p->nouts;

	room_for_outs(p, n + 1);
	for (int k = 0; k <= n; k++)
		p->outs[p->nouts++] = (gh_pout) {GH_INT64, k < n ? ops : GH_AGG_MAX};
	emit(p, GH_OP_OUT_NUM, first, a, scale, (j0 & 255) | n << 8);
}

/* the comparison dst = a <cmp> b of an opcode */
void
cmp(gh_prog *p, int op, int dst, int a, int b, int how)
{
	emit(p, op, dst, a, b, how);
}

/* Registers 0 .. 31; register 0 the row's id, the row keyed by it. */
void
begin_keyed_by_id(gh_prog *p)
{
	memset(p, 0, sizeof(*p));
	p->nregs = GH_PROG_MAX_REGS;
	emit(p, GH_OP_LDCOL_INT, 0, 0, 4, C_ID);
	emit(p, GH_OP_KEYPACK, 0, 0, 0, KEYPACK_IMM(0, 32, -1));
}

/*
 * GH_OP_DATEPART of every field of date register d and timestamp register
 * ts (the fields each has), each into register r and output as an int64.
 */
void
out_every_datepart(gh_prog *p, int d, int ts, int r)
{
	for (int f = GH_DATEPART_YEAR; f <= GH_DATETRUNC_SECOND; f++)
	{
		if (f > GH_DATEPART_DAYS && f < GH_DATETRUNC_YEAR)
			continue;
		if (f != GH_DATEPART_HOUR && f != GH_DATEPART_MINUTE)
		{
			emit(p, GH_OP_DATEPART, r, d, 0, f);
			out_int(p, r);
		}
		if (f != GH_DATEPART_DAYS)
		{
			emit(p, GH_OP_DATEPART, r, ts, 1, f);
			out_int(p, r);
		}
	}
}
