/*-------------------------------------------------------------------------
 *
 * expr_errors.c
 *	  Which expressions may raise an error for some row.
 *
 * PostgreSQL evaluates an expression above a join only for the rows the
 * join returns.  Where gpuhash evaluates one for the rows of one input
 * before the join -- a fused GpuHashAgg's arguments and grouping values of
 * each side, a GpuStarAgg dimension's payload and grouping values -- a row
 * that joins nothing must not raise an error PostgreSQL would not: such
 * an expression must be one that cannot fail.  Cannot fail: columns,
 * constants, parameters, AND, OR, NOT, CASE, COALESCE, IS [NOT] NULL, tests
 * of booleans, binary relabelings, comparisons (operators of an ordering
 * index family), LIKE against a constant pattern, integers and numerics
 * divided by or taken modulo a constant other than 0 (and -1 for an
 * integer division), widening casts of numbers, EXTRACT of a date field,
 * and leakproof functions (which by their definition raise no error that
 * depends on their arguments).  May fail: the rest, among them arithmetic
 * that can overflow or divide by zero, casts, and most functions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"

#include "gpuhash.h"
#include "pg_compat.h"

/*
 * The LIKE family against a constant pattern that does not end with the
 * escape character (a pattern that does raises an error for every row),
 * under a deterministic collation (LIKE refuses the others).
 */
static bool
like_of_constant(const char *name, List *args, Oid collation)
{
	Const	   *pat = list_length(args) == 2 ? lsecond(args) : NULL;
	char	   *pattern;
	bool		ok;

	if (strcmp(name, "~~") != 0 && strcmp(name, "!~~") != 0 &&
		strcmp(name, "~~*") != 0 && strcmp(name, "!~~*") != 0)
		return false;
	if (OidIsValid(collation) && !get_collation_isdeterministic(collation))
		return false;
	if (pat == NULL || !IsA(pat, Const) || pat->constisnull ||
		(pat->consttype != TEXTOID && pat->consttype != BPCHAROID &&
		 pat->consttype != VARCHAROID && pat->consttype != NAMEOID))
		return false;
	pattern = pat->consttype == NAMEOID ? pstrdup(NameStr(*DatumGetName(pat->constvalue))) :
		TextDatumGetCString(pat->constvalue);
	ok = pattern[0] == '\0' || pattern[strlen(pattern) - 1] != '\\';
	pfree(pattern);
	return ok;
}

/*
 * An integer or numeric divided by, or taken modulo, a constant that cannot
 * make it fail: not 0, and for an integer division not -1 (the smallest
 * integer divided by -1 overflows; its remainder is 0).  A numeric quotient
 * of a nonzero constant stays within numeric's range.
 */
static bool
by_constant(const char *name, List *args)
{
	Const	   *c = list_length(args) == 2 ? lsecond(args) : NULL;
	Oid			left = list_length(args) == 2 ? exprType(linitial(args)) : InvalidOid;
	bool		integer = left == INT2OID || left == INT4OID || left == INT8OID;
	int64		v;

	if ((strcmp(name, "/") != 0 && strcmp(name, "%") != 0) ||
		c == NULL || !IsA(c, Const) || c->constisnull)
		return false;
	switch (c->consttype)
	{
		case INT2OID:
			v = DatumGetInt16(c->constvalue);
			break;
		case INT4OID:
			v = DatumGetInt32(c->constvalue);
			break;
		case INT8OID:
			v = DatumGetInt64(c->constvalue);
			break;
		case NUMERICOID:
			if (left != NUMERICOID)
				return false;
			return !DatumGetBool(DirectFunctionCall2(numeric_eq, c->constvalue,
													 DirectFunctionCall1(int4_numeric,
																		 Int32GetDatum(0))));
		default:
			return false;
	}
	if (!integer && left != NUMERICOID)
		return false;
	return v != 0 && (v != -1 || !integer || strcmp(name, "%") == 0);
}

/*
 * A cast that cannot fail: from a narrower integer to a wider one, numeric
 * or float8, or from float4 to float8.
 */
static bool
widening_cast(FuncExpr *f)
{
	Oid			from;

	if ((f->funcformat != COERCE_EXPLICIT_CAST && f->funcformat != COERCE_IMPLICIT_CAST) ||
		list_length(f->args) != 1)
		return false;
	from = exprType(linitial(f->args));
	switch (f->funcresulttype)
	{
		case INT4OID:
			return from == INT2OID;
		case INT8OID:
			return from == INT2OID || from == INT4OID;
		case NUMERICOID:
		case FLOAT8OID:
			return from == INT2OID || from == INT4OID || from == INT8OID ||
				(f->funcresulttype == FLOAT8OID && from == FLOAT4OID);
		default:
			return false;
	}
}

/*
 * EXTRACT or date_part of a constant field that the value's type has: the
 * field alone decides whether it fails, and EXTRACT(year, month, day,
 * quarter, ...) of a date or timestamp does not.
 */
static bool
field_of_date(FuncExpr *f)
{
	char	   *name = get_func_name(f->funcid);
	Const	   *field = list_length(f->args) == 2 ? linitial(f->args) : NULL;
	Oid			type = list_length(f->args) == 2 ? exprType(lsecond(f->args)) : InvalidOid;
	char	   *unit;
	bool		ok;

	if (name == NULL || (strcmp(name, "date_part") != 0 && strcmp(name, "extract") != 0) ||
		field == NULL || !IsA(field, Const) || field->constisnull ||
		field->consttype != TEXTOID ||
		(type != DATEOID && type != TIMESTAMPOID && type != TIMESTAMPTZOID))
		return false;
	unit = TextDatumGetCString(field->constvalue);
	ok = pg_strcasecmp(unit, "year") == 0 || pg_strcasecmp(unit, "month") == 0 ||
		pg_strcasecmp(unit, "day") == 0 || pg_strcasecmp(unit, "quarter") == 0 ||
		pg_strcasecmp(unit, "week") == 0 || pg_strcasecmp(unit, "dow") == 0 ||
		pg_strcasecmp(unit, "doy") == 0 || pg_strcasecmp(unit, "isoyear") == 0 ||
		pg_strcasecmp(unit, "decade") == 0 || pg_strcasecmp(unit, "century") == 0;
	pfree(unit);
	return ok;
}

/*
 * May operator opno over args raise an error?  Not a leakproof one, a
 * comparison, a LIKE of a constant pattern, a division by a constant.
 */
static bool
operator_may_fail(Oid opno, List *args, Oid collation)
{
	char	   *name;

	if (get_func_leakproof(get_opcode(opno)) || get_op_index_interpretation(opno) != NIL)
		return false;
	name = get_opname(opno);
	return name == NULL ||
		(!like_of_constant(name, args, collation) && !by_constant(name, args));
}

/* gpuhash_expr_may_fail's walker: true where some node may raise an error */
static bool
may_fail_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	switch (nodeTag(node))
	{
		case T_Var:
		case T_Const:
		case T_Param:
		case T_BoolExpr:
		case T_NullTest:
		case T_BooleanTest:
		case T_CaseExpr:
		case T_CaseWhen:
		case T_CaseTestExpr:
		case T_CoalesceExpr:
		case T_RelabelType:
		case T_List:
		case T_TargetEntry:
			break;
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			if (operator_may_fail(((OpExpr *) node)->opno, ((OpExpr *) node)->args,
								  ((OpExpr *) node)->inputcollid))
				return true;
			break;
		case T_ScalarArrayOpExpr:
			if (operator_may_fail(((ScalarArrayOpExpr *) node)->opno,
								  ((ScalarArrayOpExpr *) node)->args,
								  ((ScalarArrayOpExpr *) node)->inputcollid))
				return true;
			break;
		case T_FuncExpr:
			if (!get_func_leakproof(((FuncExpr *) node)->funcid) &&
				!widening_cast((FuncExpr *) node) && !field_of_date((FuncExpr *) node))
				return true;
			break;
		default:
			return true;
	}
	return expression_tree_walker(node, may_fail_walker, context);
}

/* May expr raise an error for some row? */
bool
gpuhash_expr_may_fail(Node *expr)
{
	return may_fail_walker(expr, NULL);
}
