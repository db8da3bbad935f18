/*-------------------------------------------------------------------------
 *
 * cases_star_api.c
 *	  Engine unit tests of the star pipeline's checks and of a star's life:
 *
 *	- gh_prog_check: a valid program with one thing wrong at a time (an
 *	  unknown opcode, registers, constants, text bytes, columns and their
 *	  widths, dimensions and their columns, jumps backwards, to themselves
 *	  or past the end, a last instruction that is not END or DROP, KEYPACK
 *	  and KEYMIX fields, output columns and their types, integer widths,
 *	  comparisons, registers read before they are written or not holding
 *	  text on every path, LDDIM without its probe on every path, END
 *	  without every output written on every path, the program's counts):
 *	  gh_prog_check says what is wrong and gh_star_create returns
 *	  GH_ERR_INVALID; programs it must accept (every opcode once,
 *	  unreachable code, NULL text constants outside the bytes, probes on
 *	  both branches, the limits of the fields)
 *	- GH_ERR_INVALID with the function's own message for each bad argument
 *	  of gh_dim_create, gh_star_create, gh_star_read, gh_star_keep,
 *	  gh_star_add and gh_star_result; the NULL handles of the others
 *	- dimensions: duplicate keys (GH_EMPTY_KEY among them) refused, an
 *	  empty dimension probed
 *	- the order of calls: a keep without a read, a read before the last is
 *	  kept, a second keep refused and the star unharmed; no pages read;
 *	  results taken twice, and batches kept after a result adding to it,
 *	  equal to one star reading everything at once
 *	- cancellation of each call before it starts (the star goes on), and
 *	  a device failure injected at every device operation in turn: the
 *	  call fails, a star whose keep or add failed refuses more, every byte
 *	  of device memory comes back
 *	- a star on an engine of two devices runs on both, with one device's
 *	  groups
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "star_test.h"

/* The base program's instructions, by index. */
enum
{
	PC_LDID, PC_KEYPACK, PC_LDTEXT, PC_LDCONST, PC_TCMP, PC_JFALSE, PC_LDNUM, PC_JMP,
	PC_SETNULL, PC_OUTNUM, PC_LDK, PC_PROBE, PC_LDDIM, PC_OUTINT, PC_LDF8, PC_OUTF8, PC_END,
	PC_COUNT
};

/*
 * A valid program over the fact table and dimension 0 of the scenarios:
 * the row keyed by id; n1 at scale 2 where t = 'ab', else NULL; dimension
 * 0's column 1 of the row of k; f8.  Outputs: n1's two limbs and display
 * scale (0 .. 2), the dimension's column (3), f8 (4).
 */
static void
base_prog(gh_prog *p)
{
	int			j,
				e;

	memset(p, 0, sizeof(*p));
	p->nregs = 8;
	p->ndims = 1;
	emit(p, GH_OP_LDCOL_INT, 0, 0, 4, C_ID);
	emit(p, GH_OP_KEYPACK, 0, 0, 0, KEYPACK_IMM(0, 32, -1));
	emit(p, GH_OP_LDCOL_TEXT, 1, 0, 0, C_T);
	ld_text(p, 2, "ab");
	cmp(p, GH_OP_TCMP, 3, 1, 2, GH_CMP_EQ);
	j = emit(p, GH_OP_JFALSE, 0, 3, 0, 0);
	emit(p, GH_OP_LDCOL_NUM, 4, 0, 2, C_N1);
	e = emit(p, GH_OP_JMP, 0, 0, 0, 0);
	land(p, j);
	emit(p, GH_OP_SETNULL, 4, 0, 0, 0);
	land(p, e);
	out_num(p, 4, 2, 0, 2, ALL_OPS);
	emit(p, GH_OP_LDCOL_INT, 5, 0, 8, C_K);
	emit(p, GH_OP_PROBE, 0, 5, 0, 0);
	emit(p, GH_OP_LDDIM, 6, 0, 0, 1);
	out_int(p, 6);
	emit(p, GH_OP_LDCOL_F8, 7, 0, 0, C_F8);
	out_f8(p, 7);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

static void
set_instr(gh_prog *p, int pc, int op, int dst, int a, int b, int imm)
{
	p->code[pc] = (gh_instr) {(uint8_t) op, (uint8_t) dst, (uint8_t) a, (uint8_t) b, imm};
}

/*
 * The base program with wrong thing k (ncols and ndims: what the checks
 * are given of the dimensions): what is wrong, or NULL past the last.
 * *direct: only gh_prog_check can be given it (not gh_star_create).
 */
static const char *
spoil_prog(gh_prog *p, int k, int *ncols, int *ndims, bool *direct)
{
	gh_pconst  *text;

	base_prog(p);
	text = &p->consts[p->code[PC_LDCONST].imm];
	*ndims = 1;
	*direct = false;
	switch (k)
	{
		case 0:
			p->code[PC_LDF8].op = GH_OP_COUNT_;
			return "an unknown opcode";
		case 1:
			p->code[PC_LDID].op = 255;
			return "opcode 255";
		case 2:
			p->ncode = 0;
			return "no instruction";
		case 3:
			p->ncode = GH_PROG_MAX_CODE + 1;
			return "more instructions than GH_PROG_MAX_CODE";
		case 4:
			p->nregs = GH_PROG_MAX_REGS + 1;
			return "33 registers";
		case 5:
			p->code[PC_OUTF8].a = 8;
			return "a register read past nregs";
		case 6:
			p->code[PC_LDF8].dst = 8;
			return "a register written past nregs";
		case 7:
			p->code[PC_LDCONST].imm = p->nconsts;
			return "a constant past nconsts";
		case 8:
			p->code[PC_LDCONST].b = 2;
			return "LDCONST with b = 2";
		case 9:
			text->hi = p->nbytes - text->lo + 1;
			return "a text constant reaching past the bytes";
		case 10:
			text->lo = -1;
			return "a text constant at offset -1";
		case 11:
			p->code[PC_LDF8].imm = fact.spec.nout;
			return "a column past nout";
		case 12:
			p->code[PC_LDF8].imm = -1;
			return "column -1";
		case 13:
			p->code[PC_LDID].b = 8;
			return "LDCOL_INT of 8 bytes of an int4 column";
		case 14:
			p->code[PC_LDID].b = 3;
			return "LDCOL_INT of 3 bytes";
		case 15:
			p->code[PC_LDF8].imm = C_F4;
			return "LDCOL_F8 of a float4 column";
		case 16:
			p->code[PC_LDTEXT].imm = C_I4;
			return "LDCOL_TEXT of an int4 column";
		case 17:
			p->code[PC_LDNUM].imm = C_I8;
			return "LDCOL_NUM of an int8 column";
		case 18:
			p->code[PC_LDID].op = GH_OP_LDCOL_UINT;
			p->code[PC_LDID].b = 2;
			return "LDCOL_UINT of 2 bytes of an int4 column";
		case 19:
			p->code[PC_PROBE].imm = 1;
			return "a probe of dimension 1 of 1";
		case 20:
			p->code[PC_LDDIM].imm = ncols[0];
			return "LDDIM of a column past the dimension's";
		case 21:
			p->code[PC_LDDIM].imm = 1 << 8;
			return "LDDIM of dimension 1 of 1";
		case 22:
			{
				gh_instr	t = p->code[PC_PROBE];

				p->code[PC_PROBE] = p->code[PC_LDDIM];
				p->code[PC_LDDIM] = t;
				return "LDDIM before its probe";
			}
		case 23:
			p->code[PC_JFALSE].imm = PC_LDDIM;
			return "LDDIM after its probe on one path only";
		case 24:
			p->code[PC_JMP].imm = PC_LDTEXT;
			return "a jump backwards";
		case 25:
			p->code[PC_JMP].imm = PC_JMP;
			return "a jump to itself";
		case 26:
			p->code[PC_JMP].imm = p->ncode;
			return "a jump past the end";
		case 27:
			p->ncode = PC_END;
			return "no END or DROP last";
		case 28:
			p->code[PC_KEYPACK].imm = KEYPACK_IMM(64, 32, -1);
			return "KEYPACK shift 64";
		case 29:
			p->code[PC_KEYPACK].imm = KEYPACK_IMM(0, 0, -1);
			return "KEYPACK width 0";
		case 30:
			p->code[PC_KEYPACK].imm = KEYPACK_IMM(0, 65, -1);
			return "KEYPACK width 65";
		case 31:
			p->code[PC_KEYPACK].imm = KEYPACK_IMM(0, 32, 64);
			return "KEYPACK NULL bit 64";
		case 32:
			p->code[PC_OUTINT].dst = 4;
			return "OUT_INT to a GH_FLOAT64 output";
		case 33:
			p->code[PC_OUTF8].dst = 3;
			return "OUT_F8 to a GH_INT64 output";
		case 34:
			p->code[PC_OUTINT].dst = 5;
			return "OUT_INT past nouts";
		case 35:
			p->code[PC_OUTNUM].dst = 3;
			return "OUT_NUM over a GH_FLOAT64 output and past nouts";
		case 36:
			p->code[PC_OUTNUM].imm = 0;
			return "OUT_NUM of no limb";
		case 37:
			set_instr(p, PC_OUTF8, GH_OP_OUT_NULL, 4, 0, 0, 0);
			return "OUT_NULL of no column";
		case 38:
			set_instr(p, PC_OUTF8, GH_OP_OUT_NULL, 4, 0, 0, 2);
			return "OUT_NULL past nouts";
		case 39:
			set_instr(p, PC_LDF8, GH_OP_IADD, 7, 0, 0, 8);
			return "IADD of width 8";
		case 40:
			set_instr(p, PC_LDF8, GH_OP_ICAST, 7, 0, 0, 24);
			return "ICAST to 24 bits";
		case 41:
			p->code[PC_TCMP].imm = GH_CMP_LT;
			return "TCMP LT";
		case 42:
			set_instr(p, PC_LDF8, GH_OP_ICMP, 7, 0, 0, 6);
			return "ICMP of comparison 6";
		case 43:
			set_instr(p, PC_LDF8, GH_OP_BOOL, 7, 0, 0, 2);
			return "BOOL 2";
		case 44:
			set_instr(p, PC_LDF8, GH_OP_TPACK, 7, 1, 0, 4);
			return "TPACK 4";
		case 45:
			set_instr(p, PC_LDF8, GH_OP_NSCALE, 7, 4, 0, -1);
			return "NSCALE by 10^-1";
		case 46:
			p->nregs = 9;
			p->code[PC_OUTF8].a = 8;
			return "a register read and never written";
		case 47:
			p->code[PC_SETNULL].dst = 7;
			return "a register written on one path only, then read";
		case 48:
			set_instr(p, PC_LDF8, GH_OP_AND, 7, 3, 0, PC_OUTF8);
			return "AND into a register not written";
		case 49:
			p->code[PC_TCMP].b = 0;
			return "TCMP of an integer register";
		case 50:
			set_instr(p, PC_LDF8, GH_OP_TPACK, 7, 4, 0, 0);
			return "TPACK of a register of NULL on one path, a numeric on the other";
		case 51:
			set_instr(p, PC_OUTF8, GH_OP_BOOL, 7, 0, 0, 1);
			return "END with an output never written";
		case 52:
			p->code[PC_JFALSE].imm = PC_LDK;
			return "END with outputs written on one path only";
		case 53:
			p->ndims = 2;
			return "a program of 2 dimensions, 1 given";
		case 54:
			p->outs[4].type = 2;
			return "an output of type 2";
		case 55:
			p->outs[3].ops = 8;
			return "an output of operations 8";
		case 56:
			p->nconsts = -1;
			return "nconsts -1";
		case 57:
			p->nbytes = GH_PROG_MAX_BYTES + 1;
			return "more bytes than GH_PROG_MAX_BYTES";
		case 58:
			p->nouts = GH_PROG_MAX_OUTS + 1;
			return "65 outputs";
		case 59:
			p->code[PC_JFALSE].imm = PC_JFALSE;
			return "JFALSE to itself";
		case 60:
			*direct = true;
			ncols[0] = GH_PROG_MAX_DIMCOLS + 1;
			return "a dimension of 33 columns";
		case 61:
			*direct = true;
			*ndims = 0;
			return "no dimension given to a program of one";
		case 62:
			set_instr(p, PC_KEYPACK, GH_OP_KEYMIX, 0, 0, 0, 64);
			return "KEYMIX clearing 64 bits";
		case 63:
			set_instr(p, PC_KEYPACK, GH_OP_KEYMIX, 0, 0, 0, -1);
			return "KEYMIX clearing -1 bits";
		case 64:
			set_instr(p, PC_LDF8, GH_OP_DATEPART, 7, 5, 1, GH_DATEPART_DATE + 1);
			return "DATEPART of a field between EXTRACT's and date_trunc's";
		case 65:
			set_instr(p, PC_LDF8, GH_OP_DATEPART, 7, 5, 0, GH_DATEPART_HOUR);
			return "DATEPART of a date's hour";
		case 66:
			set_instr(p, PC_LDF8, GH_OP_DATEPART, 7, 5, 1, GH_DATEPART_DAYS);
			return "DATEPART of a timestamp's days";
		case 67:
			set_instr(p, PC_LDF8, GH_OP_DATEPART, 7, 5, 1, GH_DATETRUNC_SECOND + 1);
			return "DATEPART past date_trunc's fields";
		case 68:
			set_instr(p, PC_LDF8, GH_OP_N2F, 7, 4, 0, 39);
			return "N2F of a numeric of static scale 39";
		case 69:
			set_instr(p, PC_LDF8, GH_OP_DATEPART, 7, 5, 0, GH_DATEPART_DATE);
			return "DATEPART of a date's date";
		case 70:
			set_instr(p, PC_LDF8, GH_OP_FROUND, 7, 4, 0, GH_ROUND_TRUNC + 1);
			return "FROUND of no rounding";
		case 71:
			set_instr(p, PC_LDF8, GH_OP_F2I, 7, 4, 0, 8);
			return "F2I to 8 bits";
		case 72:
			set_instr(p, PC_LDF8, GH_OP_NROUND, 7, 4, 39, GH_ROUND_NEAREST);
			return "NROUND dropping 39 digits";
		case 73:
			set_instr(p, PC_LDF8, GH_OP_NROUND, 7, 4, 2, GH_ROUND_TRUNC + 1);
			return "NROUND of no rounding";
		case 74:
			set_instr(p, PC_LDF8, GH_OP_N2I, 7, 4, 0, 24);
			return "N2I to 24 bits";
		case 75:
			p->code[PC_TCMP].op = GH_OP_LIKE;
			p->code[PC_TCMP].imm = 2;
			return "LIKE of imm 2";
		case 76:
			set_instr(p, PC_TCMP, GH_OP_TLEN, p->code[PC_TCMP].dst, p->code[PC_TCMP].a, 0, 4);
			return "TLEN of imm 4";
		case 77:
			set_instr(p, PC_TCMP, GH_OP_TLEN, p->code[PC_TCMP].dst, p->code[PC_LDID].dst, 0, 1);
			return "TLEN of a register that holds no text";
		case 78:
			set_instr(p, PC_TCMP, GH_OP_SUBSTR, p->code[PC_TCMP].dst, p->code[PC_TCMP].a,
					  p->code[PC_LDID].dst, -5);
			return "SUBSTR of a count of -2";
		case 79:
			set_instr(p, PC_TCMP, GH_OP_SUBSTR, p->code[PC_TCMP].dst, p->code[PC_LDID].dst,
					  p->code[PC_LDID].dst, 4);
			return "SUBSTR of a register that holds no text";
		default:
			return NULL;
	}
}

/* A program using every opcode, valid; nouts 6, one dimension of >= 1 column. */
static void
every_opcode(gh_prog *p)
{
	static const int ops3[] = {GH_OP_IADD, GH_OP_ISUB, GH_OP_IMUL, GH_OP_IDIV, GH_OP_IMOD};
	int			j[8],
				nj = 0;

	memset(p, 0, sizeof(*p));
	p->nregs = 24;
	p->ndims = 1;
	emit(p, GH_OP_LDCOL_INT, 0, 0, 4, C_ID);
	emit(p, GH_OP_KEYPACK, 0, 0, 0, KEYPACK_IMM(63, 64, 63));
	emit(p, GH_OP_LDCOL_INT, 2, 0, 1, C_FLAG);
	emit(p, GH_OP_BOOL, 1, 0, 0, 1);
	j[nj++] = emit(p, GH_OP_AND, 1, 2, 0, 0);
	emit(p, GH_OP_BOOL, 3, 0, 0, 0);
	j[nj++] = emit(p, GH_OP_OR, 3, 2, 0, 0);
	for (int k = 0; k < nj; k++)
		land(p, j[k]);
	nj = 0;
	emit(p, GH_OP_NOT, 4, 2, 0, 0);
	emit(p, GH_OP_ISNULL, 5, 2, 0, 0);
	emit(p, GH_OP_ISNOTNULL, 5, 2, 0, 0);
	emit(p, GH_OP_MOVE, 6, 5, 0, 0);
	emit(p, GH_OP_SETNULL, 7, 0, 0, 0);
	ld_int(p, 8, 7);
	emit(p, GH_OP_LDCOL_UINT, 9, 0, 4, C_OID);
	emit(p, GH_OP_LDCOL_F4, 10, 0, 0, C_F4);
	emit(p, GH_OP_LDCOL_F8, 11, 0, 0, C_F8);
	emit(p, GH_OP_LDCOL_NUM, 12, 0, 4, C_N1);
	emit(p, GH_OP_LDCOL_TEXT, 13, 0, 0, C_T);
	emit(p, GH_OP_LDCOL_INT, 14, 0, 8, C_K);
	emit(p, GH_OP_PROBE, 0, 14, 0, 0);
	emit(p, GH_OP_LDDIM, 15, 0, 0, 0);
	for (int k = 0; k < 5; k++)
		emit(p, ops3[k], 16, 8, 8, 32);
	emit(p, GH_OP_INEG, 16, 8, 0, 32);
	emit(p, GH_OP_ICAST, 16, 8, 0, 16);
	emit(p, GH_OP_I2F, 17, 8, 0, 0);
	emit(p, GH_OP_I2N, 18, 8, 0, 0);
	cmp(p, GH_OP_ICMP, 19, 8, 8, GH_CMP_EQ);
	cmp(p, GH_OP_FCMP, 19, 11, 11, GH_CMP_LT);
	cmp(p, GH_OP_NCMP, 19, 12, 12, GH_CMP_GE);
	cmp(p, GH_OP_DTCMP, 19, 8, 8, GH_CMP_NE);
	cmp(p, GH_OP_TCMP, 19, 13, 13, GH_CMP_NE | GH_CMP_BPCHAR);
	cmp(p, GH_OP_LIKE, 19, 13, 13, 1);
	emit(p, GH_OP_TLEN, 16, 13, 0, 3);
	emit(p, GH_OP_SUBSTR, 22, 13, 8, 3 << 2 | 1);
	cmp(p, GH_OP_TCMP, 19, 22, 13, GH_CMP_EQ);
	for (int op = GH_OP_FADD; op <= GH_OP_FDIV; op++)
		emit(p, op, 20, 11, 11, 0);
	emit(p, GH_OP_FNEG, 20, 11, 0, 0);
	for (int op = GH_OP_F4ADD; op <= GH_OP_F4DIV; op++)
		emit(p, op, 20, 10, 10, 0);
	emit(p, GH_OP_F2ORD, 21, 11, 0, 0);
	emit(p, GH_OP_FROUND, 20, 11, 0, GH_ROUND_TRUNC);
	emit(p, GH_OP_F2I, 16, 11, 0, 32);
	emit(p, GH_OP_NADD, 22, 12, 12, 0);
	emit(p, GH_OP_NSUB, 22, 12, 12, 0);
	emit(p, GH_OP_NMUL, 22, 12, 12, 0);
	emit(p, GH_OP_NNEG, 22, 22, 0, 0);
	emit(p, GH_OP_NSCALE, 22, 22, 0, 2);
	emit(p, GH_OP_N2F, 21, 22, 0, 2);
	emit(p, GH_OP_NROUND, 18, 12, 4, GH_ROUND_NEAREST);
	emit(p, GH_OP_N2I, 16, 18, 0, 64);
	emit(p, GH_OP_DATEPART, 22, 8, 0, GH_DATEPART_YEAR);
	emit(p, GH_OP_TPACK, 23, 13, 0, 1);
	emit(p, GH_OP_KEYMIX, 0, 23, 0, 0);
	emit(p, GH_OP_KEYMIX, 0, 23, 0, 63);
	emit(p, GH_OP_QUAL, 0, 2, 0, 0);
	j[nj++] = emit(p, GH_OP_JNULL, 0, 2, 0, 0);
	j[nj++] = emit(p, GH_OP_JNOTNULL, 0, 2, 0, 0);
	j[nj++] = emit(p, GH_OP_JFALSE, 0, 2, 0, 0);
	j[nj++] = emit(p, GH_OP_JMP, 0, 0, 0, 0);
	emit(p, GH_OP_DROP, 0, 0, 0, 0);
	for (int k = 0; k < nj; k++)
		land(p, j[k]);
	out_int(p, 16);
	out_f8(p, 20);
	out_num(p, 22, 10, -1, 2, ALL_OPS);
	p->outs[p->nouts] = (gh_pout) {GH_INT64, 0};
	emit(p, GH_OP_OUT_NULL, p->nouts++, 0, 0, 1);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Programs gh_prog_check must accept, beyond the base one: k-th, or NULL. */
static const char *
sound_prog(gh_prog *p, int k)
{
	int			j,
				e;

	switch (k)
	{
		case 0:
			base_prog(p);
			return "the base program";
		case 1:
			every_opcode(p);
			return "every opcode once";
		case 2:
			memset(p, 0, sizeof(*p));
			p->nregs = 8;
			j = emit(p, GH_OP_JMP, 0, 0, 0, 0);
			emit(p, GH_OP_IADD, 1, 5, 6, 32);	/* never runs: only its fields are checked */
			emit(p, GH_OP_TPACK, 2, 7, 0, 0);
			land(p, j);
			emit(p, GH_OP_DROP, 0, 0, 0, 0);
			return "an unreachable instruction reading registers never written, DROP last";
		case 3:
			memset(p, 0, sizeof(*p));
			p->nregs = 4;
			emit(p, GH_OP_LDCONST, 1, 0, 1, konst(p, -5, 1000, true, 0));
			emit(p, GH_OP_LDCOL_TEXT, 2, 0, 0, C_T);
			emit(p, GH_OP_MOVE, 3, 2, 0, 0);
			cmp(p, GH_OP_TCMP, 0, 1, 3, GH_CMP_EQ);
			emit(p, GH_OP_QUAL, 0, 0, 0, 0);
			emit(p, GH_OP_END, 0, 0, 0, 0);
			return "a NULL text constant outside the bytes, a moved text register";
		case 4:
			memset(p, 0, sizeof(*p));
			p->nregs = 4;
			p->ndims = 1;
			emit(p, GH_OP_LDCOL_INT, 0, 0, 8, C_K);
			emit(p, GH_OP_LDCOL_INT, 1, 0, 1, C_FLAG);
			j = emit(p, GH_OP_JFALSE, 0, 1, 0, 0);
			emit(p, GH_OP_PROBE, 0, 0, 0, 0);
			e = emit(p, GH_OP_JMP, 0, 0, 0, 0);
			land(p, j);
			emit(p, GH_OP_PROBE, 0, 0, 0, 0);
			land(p, e);
			emit(p, GH_OP_LDDIM, 2, 0, 0, 2);
			out_int(p, 2);
			emit(p, GH_OP_END, 0, 0, 0, 0);
			return "LDDIM after a probe on each of two paths";
		case 5:
			memset(p, 0, sizeof(*p));
			p->nregs = GH_PROG_MAX_REGS;
			emit(p, GH_OP_LDCOL_NUM, GH_PROG_MAX_REGS - 1, 0, 255, C_N1);
			emit(p, GH_OP_KEYPACK, 0, GH_PROG_MAX_REGS - 1, 0, KEYPACK_IMM(63, 1, 63));
			for (int c = 0; c < GH_PROG_MAX_OUTS - 2; c++)
				p->outs[p->nouts++] = (gh_pout) {c % 2 ? GH_FLOAT64 : GH_INT64, ALL_OPS};
			emit(p, GH_OP_OUT_NULL, 0, 0, 0, GH_PROG_MAX_OUTS - 2);
			out_num(p, GH_PROG_MAX_REGS - 1, 255, -128, 1, 0);
			emit(p, GH_OP_END, 0, 0, 0, 0);
			return "the last register, 64 outputs, KEYPACK shift 63 and NULL bit 63, scale 255, limb -128";
		case 6:
			memset(p, 0, sizeof(*p));
			p->nregs = 4;
			emit(p, GH_OP_LDCOL_INT, 1, 0, 4, C_DATE);
			emit(p, GH_OP_LDCOL_INT, 2, 0, 8, C_TS);
			out_every_datepart(p, 1, 2, 3);
			emit(p, GH_OP_END, 0, 0, 0, 0);
			return "DATEPART of every field a date and a timestamp have";
		default:
			return NULL;
	}
}

static void
prog_check_cases(gh_engine *e, gh_dim *dim0, int dim0_cols)
{
	gh_prog    *p = xmalloc(sizeof(gh_prog));
	bool		used[GH_OP_COUNT_] = {false};
	const char *what;

	for (int k = 0; (what = sound_prog(p, k)) != NULL; k++)
	{
		gh_star    *s = NULL;
		int			ncols[1] = {dim0_cols};
		const char *why;

		case_begin("gh_prog_check and gh_star_create accept %s", what);
		if ((why = gh_prog_check(p, &fact.spec, ncols, p->ndims)) != NULL)
			case_fail("gh_prog_check: %s", why);
		else
			check_ok(gh_star_create(e, p, &fact.spec, &dim0, p->ndims, &s), e, "gh_star_create");
		gh_star_free(s);
		case_end();
	}

	case_begin("the program of every opcode has every opcode of engine.h");
	every_opcode(p);
	for (int pc = 0; pc < p->ncode; pc++)
		used[p->code[pc].op] = true;
	for (int op = 0; op < GH_OP_COUNT_; op++)
		if (!used[op])
			case_fail("opcode %d is not in it", op);
	case_end();

	for (int k = 0;; k++)
	{
		int			ncols[1] = {dim0_cols};
		int			ndims;
		bool		direct;
		const char *why;
		gh_star    *s = (gh_star *) p;	/* must become NULL */
		gh_status	st;

		if ((what = spoil_prog(p, k, ncols, &ndims, &direct)) == NULL)
			break;
		case_begin("gh_prog_check says what is wrong with %s; gh_star_create returns GH_ERR_INVALID",
				   what);
		why = gh_prog_check(p, &fact.spec, ncols, ndims);
		if (why == NULL || why[0] == '\0')
			case_fail("gh_prog_check accepts it");
		else if (getenv("GH_TEST_VERBOSE") != NULL)
			printf("           %s\n", why);
		if (!direct)
		{
			st = gh_star_create(e, p, &fact.spec, &dim0, 1, &s);
			if (st != GH_ERR_INVALID || s != NULL)
				case_fail("gh_star_create returned %s", gh_status_name(st));
			if (st == GH_OK)
				gh_star_free(s);
			else if (strncmp(gh_last_error(e), "gh_star_create: ", 16) != 0)
				case_fail("message \"%s\"", gh_last_error(e));
		}
		case_end();
	}
	case_begin("gh_prog_check of no program, page description or dimension columns says so");
	base_prog(p);
	if (gh_prog_check(NULL, &fact.spec, (int[]) {3}, 1) == NULL ||
		gh_prog_check(p, NULL, (int[]) {3}, 1) == NULL || gh_prog_check(p, &fact.spec, NULL, 1) == NULL)
		case_fail("accepted");
	case_end();
	free(p);
}

/* ---- invalid arguments ---- */

/*
 * A call's status and message: GH_ERR_INVALID, starting with fn.  Another
 * function's message is set first, so a stale one cannot pass.
 */
static void
expect_status(gh_engine *e, gh_status st, gh_status want, const char *fn, const char *what)
{
	if (st != want)
		case_fail("%s with %s returned %s, want %s", fn, what, gh_status_name(st),
				  gh_status_name(want));
	else if (strncmp(gh_last_error(e), fn, strlen(fn)) != 0)
		case_fail("%s with %s left the message \"%s\"", fn, what, gh_last_error(e));
}

static void
expect_invalid(gh_engine *e, gh_status st, const char *fn, const char *what)
{
	expect_status(e, st, GH_ERR_INVALID, fn, what);
}

static void
stale_message(gh_engine *e)
{
	(void) gh_register_host(e, NULL, 0);
}

#define INVALID(e, call, fn, what) \
	do { stale_message(e); expect_invalid((e), (call), (fn), (what)); } while (0)

/* Two equal groupings, group by group (int64 columns only) */
bool
same_groups(const gh_groups *a, const gh_groups *b)
{
	if (a->ngroups != b->ngroups || a->ncols != b->ncols)
	{
		case_fail("%zu groups of %d columns, and %zu of %d", a->ngroups, a->ncols, b->ngroups,
				  b->ncols);
		return false;
	}
	for (size_t i = 0; i < a->ngroups; i++)
	{
		size_t		k = 0;

		while (k < b->ngroups && b->keys[k] != a->keys[i])
			k++;
		if (k == b->ngroups || a->rows[i] != b->rows[k])
		{
			case_fail("group %llu: %lld rows, not in the other or of other rows",
					  (unsigned long long) a->keys[i], (long long) a->rows[i]);
			return false;
		}
		for (int c = 0; c < a->ncols; c++)
		{
			const gh_aggresult *x = &a->cols[c],
					   *y = &b->cols[c];

			if (x->nonnull[i] != y->nonnull[k] ||
				(x->sum_lo && (x->sum_lo[i] != y->sum_lo[k] || gh_sum_hi(x, i) != gh_sum_hi(y, k))) ||
				(x->nonnull[i] > 0 && x->imin && x->imin[i] != y->imin[k]) ||
				(x->nonnull[i] > 0 && x->imax && x->imax[i] != y->imax[k]))
			{
				case_fail("group %llu column %d differs", (unsigned long long) a->keys[i], c);
				return false;
			}
		}
	}
	return true;
}

/* A program of int64 outputs only: rows grouped by id % 7, id and dimension 1's column summed. */
void
sum_prog(gh_prog *p)
{
	memset(p, 0, sizeof(*p));
	p->nregs = 6;
	p->ndims = 1;
	emit(p, GH_OP_LDCOL_INT, 0, 0, 4, C_ID);
	ld_int(p, 1, 7);
	emit(p, GH_OP_IMOD, 2, 0, 1, 32);
	emit(p, GH_OP_KEYPACK, 0, 2, 0, KEYPACK_IMM(0, 8, -1));
	out_int(p, 0);
	emit(p, GH_OP_LDCOL_INT, 3, 0, 8, C_K);
	emit(p, GH_OP_PROBE, 0, 3, 0, 0);
	emit(p, GH_OP_LDDIM, 4, 0, 0, 0);
	out_int(p, 4);
	emit(p, GH_OP_END, 0, 0, 0, 0);
}

/* Read and keep ids[from, to) of b; false (case failed) on an error. */
static bool
read_keep(gh_engine *e, gh_star *s, const batches *b, size_t from, size_t to)
{
	uint8_t    *status = xmalloc(to - from + 1);
	bool		ok = check_ok(gh_star_read(s, b->base, b->ids + from, to - from, status), e,
							  "gh_star_read") &&
		check_ok(gh_star_keep(s, NULL), e, "gh_star_keep");

	for (size_t i = 0; ok && i < to - from; i++)
		if (status[i] != GH_STAR_PAGE_OK)
		{
			case_fail("page %u has status %u", b->ids[from + i], status[i]);
			ok = false;
		}
	free(status);
	return ok;
}

/* The groups of one star reading all of b at once: NULL (case failed) on an error. */
gh_groups *
reference(gh_engine *e, const gh_prog *p, gh_dim *dim, const batches *b)
{
	gh_star    *s = NULL;
	gh_groups  *g = NULL;

	if (check_ok(gh_star_create(e, p, &fact.spec, &dim, 1, &s), e, "gh_star_create") &&
		read_keep(e, s, b, 0, b->npages))
		check_ok(gh_star_result(s, &g), e, "gh_star_result");
	gh_star_free(s);
	return g;
}

static void
argument_cases(gh_engine *e, gh_dim *dim0, const batches *b)
{
	gh_prog    *p = xmalloc(sizeof(gh_prog));
	gh_star    *s = NULL,
			   *out = (gh_star *) b;
	gh_dim	   *d = (gh_dim *) b,
			   *other_dim = NULL;
	gh_engine  *other = NULL;
	test_config cfg = {1, 0, 0};
	uint64_t	keys[4] = {1, 2, 3, 4};
	int64_t		lo[4] = {5, 6, 7, 8};
	gh_dimcol	col = {lo, NULL, NULL, NULL};
	gh_pagespec spec;
	uint8_t		status[4];
	int64_t		vals[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
	gh_aggcol	cols[2];
	gh_groups  *g = NULL;

	sum_prog(p);
	case_begin("gh_dim_create rejects a NULL engine, out, keys or columns, a column without values, -1 or 33 columns");
	if (gh_dim_create(NULL, keys, 4, &col, 1, &d) != GH_ERR_INVALID)
		case_fail("a NULL engine is not GH_ERR_INVALID");
	INVALID(e, gh_dim_create(e, keys, 4, &col, 1, NULL), "gh_dim_create", "out NULL");
	INVALID(e, gh_dim_create(e, NULL, 4, &col, 1, &d), "gh_dim_create", "keys NULL");
	if (d != NULL)
		case_fail("*out is not NULL after a failure");
	INVALID(e, gh_dim_create(e, keys, 4, NULL, 1, &d), "gh_dim_create", "cols NULL");
	col.lo = NULL;
	INVALID(e, gh_dim_create(e, keys, 4, &col, 1, &d), "gh_dim_create", "a column without values");
	col.lo = lo;
	INVALID(e, gh_dim_create(e, keys, 4, &col, -1, &d), "gh_dim_create", "-1 columns");
	INVALID(e, gh_dim_create(e, keys, 4, &col, GH_PROG_MAX_DIMCOLS + 1, &d), "gh_dim_create",
			"33 columns");
	if (gh_dim_rows(NULL) != 0)
		case_fail("gh_dim_rows(NULL) is not 0");
	gh_dim_free(NULL);
	case_end();

	case_begin("gh_star_create rejects a NULL engine, out, program, spec or dimensions, -1 or 17 dimensions, a missing one, another engine's, bad page descriptions");
	if (gh_star_create(NULL, p, &fact.spec, &dim0, 1, &s) != GH_ERR_INVALID)
		case_fail("a NULL engine is not GH_ERR_INVALID");
	INVALID(e, gh_star_create(e, p, &fact.spec, &dim0, 1, NULL), "gh_star_create", "out NULL");
	INVALID(e, gh_star_create(e, NULL, &fact.spec, &dim0, 1, &out), "gh_star_create", "prog NULL");
	if (out != NULL)
		case_fail("*out is not NULL after a failure");
	INVALID(e, gh_star_create(e, p, NULL, &dim0, 1, &s), "gh_star_create", "spec NULL");
	INVALID(e, gh_star_create(e, p, &fact.spec, NULL, 1, &s), "gh_star_create", "dims NULL");
	INVALID(e, gh_star_create(e, p, &fact.spec, &dim0, -1, &s), "gh_star_create", "-1 dimensions");
	INVALID(e, gh_star_create(e, p, &fact.spec, &dim0, GH_PROG_MAX_DIMS + 1, &s),
			"gh_star_create", "17 dimensions");
	INVALID(e, gh_star_create(e, p, &fact.spec, (gh_dim *[]) {NULL}, 1, &s), "gh_star_create",
			"a NULL dimension");
	other = open_engine(&cfg);
	if (other != NULL &&
		check_ok(gh_dim_create(other, keys, 4, &col, 1, &other_dim), other, "gh_dim_create"))
		INVALID(e, gh_star_create(e, p, &fact.spec, &other_dim, 1, &s), "gh_star_create",
				"another engine's dimension");
	gh_dim_free(other_dim);
	gh_close(other);
	spec = fact.spec;
	spec.attlen[A_SKIP_UUID] = -2;
	INVALID(e, gh_star_create(e, p, &spec, &dim0, 1, &s), "gh_star_create", "attlen -2 (cstring)");
	spec = fact.spec;
	spec.out_of[A_SKIP_UUID] = spec.out_of[A_CHAR];
	spec.out_of[A_CHAR] = -1;
	INVALID(e, gh_star_create(e, p, &spec, &dim0, 1, &s), "gh_star_create", "a 16-byte output");
	spec = fact.spec;
	spec.page_size = 8200;
	INVALID(e, gh_star_create(e, p, &spec, &dim0, 1, &s), "gh_star_create", "page_size 8200");
	case_end();

	case_begin("gh_star_read, gh_star_keep, gh_star_add and gh_star_result reject bad arguments and calls out of order; the star goes on");
	if (check_ok(gh_star_create(e, p, &fact.spec, &dim0, 1, &s), e, "gh_star_create"))
	{
		if (gh_star_read(NULL, b->base, b->ids, 1, status) != GH_ERR_INVALID ||
			gh_star_keep(NULL, NULL) != GH_ERR_INVALID ||
			gh_star_add(NULL, keys, 1, cols) != GH_ERR_INVALID ||
			gh_star_result(NULL, &g) != GH_ERR_INVALID)
			case_fail("a NULL star is not GH_ERR_INVALID");
		if (gh_star_rows(NULL) != 0)
			case_fail("gh_star_rows(NULL) is not 0");
		gh_star_free(NULL);
		INVALID(e, gh_star_keep(s, NULL), "gh_star_keep", "no read");
		INVALID(e, gh_star_read(s, NULL, b->ids, 1, status), "gh_star_read", "base NULL");
		INVALID(e, gh_star_read(s, b->base, NULL, 1, status), "gh_star_read", "pages NULL");
		INVALID(e, gh_star_read(s, b->base, b->ids, 1, NULL), "gh_star_read", "status NULL");
		INVALID(e, gh_star_read(s, b->base + 8, b->ids, 1, status), "gh_star_read", "base + 8");
		INVALID(e, gh_star_read(s, b->base, b->ids, (size_t) INT32_MAX / 291 + 1, status),
				"gh_star_read", "2^31 / 291 pages");
		if (check_ok(gh_star_read(s, b->base, b->ids, 1, status), e, "gh_star_read"))
		{
			INVALID(e, gh_star_read(s, b->base, b->ids, 1, status), "gh_star_read",
					"a read before the last is kept");
			check_ok(gh_star_keep(s, NULL), e, "gh_star_keep");
			INVALID(e, gh_star_keep(s, NULL), "gh_star_keep", "a second keep");
		}
		for (int c = 0; c < 2; c++)
			cols[c] = (gh_aggcol) {GH_INT64, ALL_OPS, vals[c], NULL};
		INVALID(e, gh_star_add(s, NULL, 4, cols), "gh_star_add", "keys NULL");
		INVALID(e, gh_star_add(s, keys, 4, NULL), "gh_star_add", "cols NULL");
		cols[1].type = GH_FLOAT64;
		INVALID(e, gh_star_add(s, keys, 4, cols), "gh_star_add", "a GH_FLOAT64 column for a GH_INT64 output");
		cols[1].type = GH_INT64;
		cols[0].ops = GH_AGG_SUM;
		INVALID(e, gh_star_add(s, keys, 4, cols), "gh_star_add", "a column of other operations");
		cols[0].ops = ALL_OPS;
		cols[0].values = NULL;
		INVALID(e, gh_star_add(s, keys, 4, cols), "gh_star_add", "a column without values");
		check_ok(gh_star_add(s, NULL, 0, NULL), e, "gh_star_add of no row");
		INVALID(e, gh_star_result(s, NULL), "gh_star_result", "out NULL");
		/* after all that, the star reads the rest and gives the reference's groups */
		if (read_keep(e, s, b, 1, b->npages) && check_ok(gh_star_result(s, &g), e, "gh_star_result"))
		{
			gh_groups  *want = reference(e, p, dim0, b);

			if (want != NULL)
				same_groups(g, want);
			if (gh_star_rows(s) != g->input_rows)
				case_fail("gh_star_rows %llu, input_rows %llu", (unsigned long long) gh_star_rows(s),
						  (unsigned long long) g->input_rows);
			gh_groups_free(want);
		}
		gh_groups_free(g);
	}
	gh_star_free(s);
	case_end();
	free(p);
}

/* ---- dimensions ---- */

static void
dimension_cases(gh_engine *e, const batches *b, rng *r)
{
	size_t		n = 5000;
	uint64_t   *keys = xmalloc(n * sizeof(uint64_t));
	int64_t    *lo = xcalloc(n, sizeof(int64_t));
	gh_dimcol	col = {lo, NULL, NULL, NULL};
	gh_dim	   *d = NULL;
	gh_prog    *p = xmalloc(sizeof(gh_prog));
	gh_star    *s = NULL;
	gh_groups  *g = NULL;
	size_t		fresh = gh_engine_device_bytes(e);
	static const struct
	{
		const char *what;
		size_t		at,
					again;
	}			dups[] = {
		{"two equal keys side by side", 10, 11},
		{"the first key again at the end", 0, 4999},
		{"GH_EMPTY_KEY twice", 17, 3000},
	};

	for (size_t k = 0; k < sizeof(dups) / sizeof(dups[0]); k++)
	{
		case_begin("gh_dim_create refuses %s among %zu keys (GH_ERR_DUPLICATE_KEY), and holds no memory after", dups[k].what, n);
		for (size_t i = 0; i < n; i++)
			keys[i] = rng_next(r);
		if (k == 2)
			keys[dups[k].at] = ~UINT64_C(0);
		keys[dups[k].again] = keys[dups[k].at];
		stale_message(e);
		expect_status(e, gh_dim_create(e, keys, n, &col, 1, &d), GH_ERR_DUPLICATE_KEY,
					  "gh_dim_create", dups[k].what);
		if (d != NULL)
			case_fail("a dimension was made");
		check_device_bytes(e, fresh, "after the refusal");
		case_end();
	}

	case_begin("gh_dim_create_parts refuses a key given in two parts (GH_ERR_DUPLICATE_KEY), a part with rows and no keys or values, -1 parts; makes one of no part");
	for (size_t i = 0; i < n; i++)
		keys[i] = rng_next(r);
	keys[n - 1] = keys[3];
	{
		gh_dimpart	parts[3] = {
			{.keys = keys, .n = 100, .cols = {{lo, NULL, NULL, NULL}}},
			{.keys = NULL, .n = 0},
			{.keys = keys + 100, .n = n - 100, .cols = {{lo + 100, NULL, NULL, NULL}}},
		};

		stale_message(e);
		expect_status(e, gh_dim_create_parts(e, parts, 3, 1, &d), GH_ERR_DUPLICATE_KEY,
					  "gh_dim_create", "a key in the first part and the last");
		if (d != NULL)
			case_fail("a dimension was made");
		check_device_bytes(e, fresh, "after the refusal");
		parts[2].keys = NULL;
		INVALID(e, gh_dim_create_parts(e, parts, 3, 1, &d), "gh_dim_create_parts",
				"a part of rows without keys");
		parts[2].keys = keys + 100;
		parts[2].cols[0].lo = NULL;
		INVALID(e, gh_dim_create_parts(e, parts, 3, 1, &d), "gh_dim_create_parts",
				"a part of rows without values");
		INVALID(e, gh_dim_create_parts(e, parts, -1, 1, &d), "gh_dim_create_parts", "-1 parts");
		INVALID(e, gh_dim_create_parts(e, NULL, 3, 1, &d), "gh_dim_create_parts", "parts NULL");
		if (check_ok(gh_dim_create_parts(e, NULL, 0, 1, &d), e, "gh_dim_create_parts") &&
			gh_dim_rows(d) != 0)
			case_fail("a dimension of no part has %zu rows", gh_dim_rows(d));
		gh_dim_free(d);
		d = NULL;
	}
	case_end();

	{
		test_config cfg3 = {3, 0, 0};
		gh_engine  *e3 = open_engine(&cfg3);
		size_t		big = (size_t) 1 << 16;
		uint64_t   *bkeys = xmalloc(big * sizeof(uint64_t));
		int64_t    *blo = xmalloc(big * sizeof(int64_t));
		gh_dimcol	bcol = {blo, NULL, NULL, NULL};
		gh_dim	   *d3 = NULL;

		case_begin("on three devices at once, gh_dim_create refuses a key given twice among %zu (GH_ERR_DUPLICATE_KEY)", big);
		for (size_t i = 0; i < big; i++)
		{
			bkeys[i] = rng_next(r);
			blo[i] = (int64_t) i;
		}
		bkeys[big - 1] = bkeys[big / 2];
		if (e3 != NULL)
		{
			stale_message(e3);
			expect_status(e3, gh_dim_create(e3, bkeys, big, &bcol, 1, &d3), GH_ERR_DUPLICATE_KEY,
						  "gh_dim_create", "a key given twice");
			if (d3 != NULL)
				case_fail("a dimension was made");
			gh_dim_free(d3);
			gh_close(e3);
		}
		case_end();
		free(bkeys);
		free(blo);
	}

	case_begin("a dimension of %zu distinct keys, GH_EMPTY_KEY among them, is made; one of no row too", n);
	for (size_t i = 0; i < n; i++)
		keys[i] = rng_next(r);
	keys[77] = ~UINT64_C(0);
	if (check_ok(gh_dim_create(e, keys, n, &col, 1, &d), e, "gh_dim_create") &&
		gh_dim_rows(d) != n)
		case_fail("gh_dim_rows is %zu", gh_dim_rows(d));
	gh_dim_free(d);
	d = NULL;
	col.lo = NULL;
	if (check_ok(gh_dim_create(e, NULL, 0, &col, 1, &d), e, "gh_dim_create (no row)") &&
		gh_dim_rows(d) != 0)
		case_fail("gh_dim_rows is %zu", gh_dim_rows(d));
	case_end();

	case_begin("a star probing a dimension of no row keeps no row");
	sum_prog(p);
	if (d != NULL && check_ok(gh_star_create(e, p, &fact.spec, &d, 1, &s), e, "gh_star_create") &&
		read_keep(e, s, b, 0, b->npages) && check_ok(gh_star_result(s, &g), e, "gh_star_result"))
	{
		if (g->ngroups != 0 || gh_star_rows(s) != 0)
			case_fail("%zu groups of %llu rows", g->ngroups, (unsigned long long) gh_star_rows(s));
	}
	gh_groups_free(g);
	gh_star_free(s);
	gh_dim_free(d);
	case_end();
	free(keys);
	free(lo);
	free(p);
}

/* ---- a star's life ---- */

static void
life_cases(gh_engine *e, gh_dim *dim0, const batches *b)
{
	gh_prog    *p = xmalloc(sizeof(gh_prog));
	gh_star    *s = NULL;
	gh_groups  *g1 = NULL,
			   *g2 = NULL,
			   *want = NULL;

	sum_prog(p);
	case_begin("a star that reads no page keeps nothing: no group, %d columns", 2);
	if (check_ok(gh_star_create(e, p, &fact.spec, &dim0, 1, &s), e, "gh_star_create") &&
		check_ok(gh_star_read(s, NULL, NULL, 0, NULL), e, "gh_star_read (no page)") &&
		check_ok(gh_star_keep(s, NULL), e, "gh_star_keep") &&
		check_ok(gh_star_result(s, &g1), e, "gh_star_result"))
	{
		if (g1->ngroups != 0 || g1->ncols != 2 || g1->input_rows != 0)
			case_fail("%zu groups, %d columns, %llu rows", g1->ngroups, g1->ncols,
					  (unsigned long long) g1->input_rows);
	}
	gh_groups_free(g1);
	g1 = NULL;
	gh_star_free(s);
	s = NULL;
	case_end();

	case_begin("results taken twice are the same; batches kept after a result add to it: the groups of one read of every page");
	want = reference(e, p, dim0, b);
	if (want != NULL && want->ngroups != 7)
		case_fail("%zu groups of id %% 7 in the reference", want->ngroups);
	if (want != NULL &&
		check_ok(gh_star_create(e, p, &fact.spec, &dim0, 1, &s), e, "gh_star_create") &&
		read_keep(e, s, b, 0, b->n1) &&
		check_ok(gh_star_result(s, &g1), e, "gh_star_result") &&
		check_ok(gh_star_result(s, &g2), e, "gh_star_result (again)") && same_groups(g1, g2))
	{
		gh_groups_free(g2);
		g2 = NULL;
		if (read_keep(e, s, b, b->n1, b->npages) &&
			check_ok(gh_star_result(s, &g2), e, "gh_star_result (after more)"))
			same_groups(g2, want);
	}
	gh_groups_free(g1);
	gh_groups_free(g2);
	gh_groups_free(want);
	gh_star_free(s);
	case_end();
	free(p);
}

static void
cancel_cases(const sdim *sd, const batches *b)
{
	interrupter in = {false, 0, 0};
	gh_engine  *e = open_interruptible(&in, 0, 1);
	gh_prog    *p = xmalloc(sizeof(gh_prog));
	gh_dim	   *dim = NULL;
	gh_star    *s = NULL;
	gh_groups  *g = NULL,
			   *want = NULL;
	uint8_t    *status = xmalloc(b->npages);
	gh_dimcol	cols[GH_PROG_MAX_DIMCOLS];
	size_t		fresh;

	sum_prog(p);
	for (int c = 0; c < sd->ncols; c++)
		cols[c] = (gh_dimcol) {sd->lo[c], sd->hi[c], sd->nulls[c], sd->dscale[c]};
	case_begin("an interrupt cancels gh_dim_create, gh_star_create, gh_star_read, gh_star_keep and gh_star_result before they start; called again, each goes on");
	if (e == NULL)
		goto out;
	fresh = gh_engine_device_bytes(e);
#define CANCELLED(call, what) \
	do { \
		gh_status st_; \
		in.armed = true; \
		in.polls_left = 0; \
		st_ = (call); \
		in.armed = false; \
		if (st_ != GH_ERR_CANCELLED) \
			case_fail("%s returned %s, want GH_ERR_CANCELLED", what, gh_status_name(st_)); \
	} while (0)
	CANCELLED(gh_dim_create(e, sd->keys, sd->n, cols, sd->ncols, &dim), "gh_dim_create");
	if (!check_ok(gh_dim_create(e, sd->keys, sd->n, cols, sd->ncols, &dim), e, "gh_dim_create"))
		goto out;
	CANCELLED(gh_star_create(e, p, &fact.spec, &dim, 1, &s), "gh_star_create");
	if (!check_ok(gh_star_create(e, p, &fact.spec, &dim, 1, &s), e, "gh_star_create"))
		goto out;
	CANCELLED(gh_star_read(s, b->base, b->ids, b->n1, status), "gh_star_read");
	if (!check_ok(gh_star_read(s, b->base, b->ids, b->n1, status), e, "gh_star_read"))
		goto out;
	CANCELLED(gh_star_keep(s, NULL), "gh_star_keep");
	if (!check_ok(gh_star_keep(s, NULL), e, "gh_star_keep") || !read_keep(e, s, b, b->n1, b->npages))
		goto out;
	CANCELLED(gh_star_result(s, &g), "gh_star_result");
	if (check_ok(gh_star_result(s, &g), e, "gh_star_result") &&
		(want = reference(e, p, dim, b)) != NULL)
		same_groups(g, want);
	gh_star_free(s);
	s = NULL;
	gh_dim_free(dim);
	dim = NULL;
	check_device_bytes(e, fresh, "after the cancelled calls");
out:
	case_end();
	gh_groups_free(g);
	gh_groups_free(want);
	gh_star_free(s);
	gh_dim_free(dim);
	gh_close(e);
	free(status);
	free(p);
}

/*
 * A device failure injected at the after-th device operation of a star's
 * whole life on device dev, for after = 0, 1, ... until the life runs
 * through: the failing call returns the failure; after a failed keep or add
 * the star refuses to read; every byte comes back.  On an engine of several
 * devices, for each device in turn (rows added go to the first alone).
 */
static void
device_failure_cases(gh_engine *e, int dev, const sdim *sd, const batches *b)
{
	gh_prog    *p = xmalloc(sizeof(gh_prog));
	gh_dimcol	cols[GH_PROG_MAX_DIMCOLS];
	size_t		fresh = gh_engine_device_bytes(e);
	uint8_t    *status = xmalloc(b->npages);
	uint64_t	keys[3] = {1, 2, 99};
	int64_t		v[3] = {4, 5, 6};
	gh_aggcol	acols[2] = {{GH_INT64, ALL_OPS, v, NULL}, {GH_INT64, ALL_OPS, v, NULL}};
	long		after;
	int			fired = 0;

	sum_prog(p);
	for (int c = 0; c < sd->ncols; c++)
		cols[c] = (gh_dimcol) {sd->lo[c], sd->hi[c], sd->nulls[c], sd->dscale[c]};
	case_begin("a device failure injected at each device operation of a star's life on device %d of %d in turn fails that call; a star whose keep or add failed refuses more; all memory comes back",
			   dev, gh_engine_ndevices(e));
	for (after = 0; after < 1000; after++)
	{
		gh_dim	   *dim = NULL;
		gh_star    *s = NULL;
		gh_groups  *g = NULL;
		gh_status	st;
		int			step = 0;

		gh_debug_inject_failure(e, dev, after, GH_ERR_DEVICE_NOMEM);
		st = gh_dim_create(e, sd->keys, sd->n, cols, sd->ncols, &dim);
		if (st == GH_OK && ++step)
			st = gh_star_create(e, p, &fact.spec, &dim, 1, &s);
		if (st == GH_OK && ++step)
			st = gh_star_read(s, b->base, b->ids, b->n1, status);
		if (st == GH_OK && ++step)
			st = gh_star_keep(s, NULL);
		if (st == GH_OK && ++step)
			st = gh_star_add(s, keys, 3, acols);
		if (st == GH_OK && ++step)
			st = gh_star_read(s, b->base, b->ids + b->n1, b->npages - b->n1, status);
		if (st == GH_OK && ++step)
			st = gh_star_keep(s, NULL);
		if (st == GH_OK && ++step)
			st = gh_star_result(s, &g);
		gh_debug_inject_failure(e, -1, 0, GH_ERR_DEVICE_NOMEM);
		if (st == GH_OK)
		{
			gh_groups_free(g);
			gh_star_free(s);
			gh_dim_free(dim);
			break;
		}
		fired++;
		if (st != GH_ERR_DEVICE_NOMEM)
			case_fail("injection %ld: call %d returned %s (%s)", after, step, gh_status_name(st),
					  gh_last_error(e));
		if (step == 3 || step == 4 || step == 6)
		{
			stale_message(e);
			expect_invalid(e, gh_star_read(s, b->base, b->ids, 1, status), "gh_star_read",
						   "a star whose keep or add failed");
		}
		else if (step == 2 || step == 5)
		{
			/* a failed read keeps nothing: the star reads again */
			if (check_ok(gh_star_read(s, b->base, b->ids, 1, status), e, "gh_star_read (again)"))
				check_ok(gh_star_keep(s, NULL), e, "gh_star_keep");
		}
		gh_star_free(s);
		gh_dim_free(dim);
		if (!check_device_bytes(e, fresh, "after an injected failure"))
			break;
	}
	if (after == 1000 || fired < (dev == 0 ? 8 : 6))
		case_fail("%d failures injected in %ld runs", fired, after);
	case_end();
	gh_release_cached_memory(e);
	free(status);
	free(p);
}

/* the same on every device of e */
static void
failure_cases(gh_engine *e, const sdim *sd, const batches *b)
{
	for (int dev = 0; dev < gh_engine_ndevices(e); dev++)
		device_failure_cases(e, dev, sd, b);
}

/* The groups of p over sd's dimension on an engine of config cfg: NULL (case failed) on an error. */
static gh_groups *
groups_on(const test_config *cfg, const gh_prog *p, const sdim *sd, const batches *b,
		  int *ids, int *nids)
{
	gh_engine  *e = open_engine(cfg);
	gh_dimcol	cols[GH_PROG_MAX_DIMCOLS];
	gh_dim	   *dim = NULL;
	gh_groups  *g = NULL;

	for (int c = 0; c < sd->ncols; c++)
		cols[c] = (gh_dimcol) {sd->lo[c], sd->hi[c], sd->nulls[c], sd->dscale[c]};
	if (e != NULL && check_ok(gh_dim_create(e, sd->keys, sd->n, cols, sd->ncols, &dim), e,
							  "gh_dim_create"))
		g = reference(e, p, dim, b);
	if (e != NULL)
		*nids = gh_engine_devices(e, ids, GH_MAX_DEVICES);
	gh_dim_free(dim);
	gh_close(e);
	return g;
}

/* A star on an engine of two devices: on both, the groups one device's. */
static void
two_device_case(const sdim *sd, const batches *b)
{
	test_config cfg = {usable_devices(2), 0, 0};
	test_config one = {1, 0, 0};
	gh_prog    *p = xmalloc(sizeof(gh_prog));
	gh_groups  *g,
			   *want;
	int			ids[GH_MAX_DEVICES],
				nids = 0;

	sum_prog(p);
	case_begin("a star on an engine of %d devices runs on each of them, with one device's groups",
			   cfg.ndevices);
	want = groups_on(&one, p, sd, b, ids, &nids);
	g = groups_on(&cfg, p, sd, b, ids, &nids);
	if (g != NULL && want != NULL)
	{
		if (g->ndevices != cfg.ndevices || nids != cfg.ndevices)
			case_fail("%d devices, want %d", g->ndevices, cfg.ndevices);
		for (int d = 0; d < g->ndevices && d < nids; d++)
			if (g->devices[d] != ids[d])
				case_fail("device %d is %d, want %d", d, g->devices[d], ids[d]);
		(void) same_groups(g, want);
	}
	gh_groups_free(g);
	gh_groups_free(want);
	case_end();
	free(p);
}

void
batches_of(batches *b, uint8_t *base, size_t npages, const sdim *sd, gh_dimcol *cols)
{
	b->base = base;
	b->npages = npages;
	b->ids = xmalloc((npages + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < npages; i++)
		b->ids[i] = (uint32_t) i;
	b->n1 = npages / 3;
	for (int c = 0; c < sd->ncols; c++)
		cols[c] = (gh_dimcol) {sd->lo[c], sd->hi[c], sd->nulls[c], sd->dscale[c]};
}

void
run_star_api_cases(gh_engine *e, const sdim *sd, rng *r)
{
	gh_dimcol	cols[GH_PROG_MAX_DIMCOLS];
	gh_dim	   *dim0 = NULL;
	batches		b;
	size_t		npages;
	uint8_t    *base = fact_pages(run.quick ? 300 : 1500, r, &npages);

	batches_of(&b, base, npages, &sd[0], cols);
	case_begin("a dimension for the star's checks");
	check_ok(gh_dim_create(e, sd[0].keys, sd[0].n, cols, sd[0].ncols, &dim0), e, "gh_dim_create");
	case_end();
	if (dim0 != NULL)
	{
		prog_check_cases(e, dim0, sd[0].ncols);
		argument_cases(e, dim0, &b);
		life_cases(e, dim0, &b);
	}
	gh_dim_free(dim0);
	dimension_cases(e, &b, r);
	cancel_cases(&sd[0], &b);
	failure_cases(e, &sd[0], &b);
	two_device_case(&sd[0], &b);
	free(b.ids);
	free(b.base);
}
