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
 * of booleans, binary relabelings, comparisons (operators of a btree
 * family), LIKE against a constant pattern, integers divided by or taken
 * modulo a constant other than 0 (and -1 for a division), and leakproof
 * functions (which by their definition raise no error that depends on
 * their arguments).
 * May fail: the rest, among them arithmetic that can overflow or divide by
 * zero, casts, and most functions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "gpuhash.h"

/*
 * The LIKE family against a constant pattern that does not end with the
 * escape character (a pattern that does raises an error for every row),
 * under a deterministic collation (LIKE refuses the others).
 */
static bool
like_of_constant(Oid opno, List *args, Oid collation)
{
	char	   *name = get_opname(opno);
	Const	   *pat = list_length(args) == 2 ? lsecond(args) : NULL;
	char	   *pattern;
	bool		ok;

	if (name == NULL || (strcmp(name, "~~") != 0 && strcmp(name, "!~~") != 0 &&
						 strcmp(name, "~~*") != 0 && strcmp(name, "!~~*") != 0))
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
 * An integer divided by, or taken modulo, a constant that cannot make it
 * fail: not 0, and for a division not -1 (the smallest integer divided by
 * -1 overflows; its remainder is 0).
 */
static bool
integer_by_constant(Oid opno, List *args)
{
	char	   *name = get_opname(opno);
	Const	   *c = list_length(args) == 2 ? lsecond(args) : NULL;
	int64		v;

	if (name == NULL || (strcmp(name, "/") != 0 && strcmp(name, "%") != 0) ||
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
		default:
			return false;
	}
	switch (exprType(linitial(args)))
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			break;
		default:
			return false;
	}
	return v != 0 && (v != -1 || strcmp(name, "%") == 0);
}

/*
 * May operator opno over args raise an error?  Not a leakproof one, a
 * comparison, a LIKE of a constant pattern, an integer by a constant.
 */
static bool
operator_may_fail(Oid opno, List *args, Oid collation)
{
	return !get_func_leakproof(get_opcode(opno)) && get_op_btree_interpretation(opno) == NIL &&
		!like_of_constant(opno, args, collation) && !integer_by_constant(opno, args);
}

/* dim_expr_may_fail's walker: true where some node may raise an error */
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
			if (!get_func_leakproof(((FuncExpr *) node)->funcid))
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
