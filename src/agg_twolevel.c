/*-------------------------------------------------------------------------
 *
 * agg_twolevel.c
 *	  A query's aggregation split into two levels before planning, so that
 *	  the level that reads the rows is an ordinary GROUP BY gpuhash can run:
 *	  count(DISTINCT x) as a GROUP BY that adds x, grouping sets (ROLLUP,
 *	  CUBE, GROUPING SETS) over the finest groups they share, and variances
 *	  and standard deviations from partial sums.
 *
 * INTERFACE ROUTINES
 *		gpuhash_twolevel_rewrite	the query rewritten, or NULL
 *		gpuhash_twolevel_choose		the cheaper of the two plans
 *
 * PostgreSQL computes a DISTINCT aggregate by sorting each group's values,
 * in one process; no GpuHashAgg or GpuStarAgg takes it.  But
 *
 *	SELECT g, count(DISTINCT x), count(*), sum(y), min(z), avg(y)
 *	  FROM t WHERE w GROUP BY g HAVING h
 *
 * is
 *
 *	SELECT d.g, count(d.x), coalesce(sum(d.n)::int8, 0), sum(d.s1)::int8,
 *	       min(d.m), sum(d.s2)::numeric / sum(d.c)
 *	  FROM (SELECT g, x, count(*) n, sum(y) s1, min(z) m, sum(y) s2, count(y) c
 *	          FROM t WHERE w GROUP BY g, x) d
 *	 GROUP BY d.g HAVING h'
 *
 * each of whose levels is an ordinary GROUP BY: the inner one reads the
 * table (on the device, as any GROUP BY), the outer one its groups.  The
 * inner groups of one g hold each distinct x once (NULL too, which count
 * skips), so sum(DISTINCT x), avg, min and max are those aggregates over
 * them (sums and averages of integers and numerics: exact in any order);
 * count, sum, min and max are the same over the partial values;
 * avg is the sum over the count, as PostgreSQL's final functions divide
 * them (numeric_div for integers and numerics, float8 for floats); counts
 * and int2/int4 sums come back to int8 (a sum beyond it raises "bigint out
 * of range" as int4_sum does).  FILTER clauses of the other aggregates go
 * to the inner level, row by row.  The result's columns, their types and
 * names, and the ORDER BY, DISTINCT, LIMIT and HAVING over them are the
 * query's own; EXPLAIN shows the subquery's aggregation below the outer one.
 *
 * Grouping sets the same way, without x: PostgreSQL runs them in one
 * process (it has no partial aggregation of grouping sets), sorting or
 * hashing every row once for each set, but every set's groups are unions
 * of the groups by all the grouping columns together, so
 *
 *	SELECT a, b, count(*), sum(y) FROM t GROUP BY ROLLUP (a, b)
 *
 * is the ROLLUP of the partial values over (SELECT a, b, count(*) n, sum(y)
 * s FROM t GROUP BY a, b): the inner level, parallel and on the device,
 * reads the rows; the outer one, PostgreSQL's own grouping sets, its few
 * groups.  GROUPING() and GROUP BY DISTINCT stay with the outer level.
 * With count(DISTINCT x) the subquery groups by x too, and the outer level
 * counts the distinct x of each set's rows (a set's groups hold each x once
 * per finer group): PostgreSQL's DISTINCT aggregate, over the subquery's
 * rows.
 *
 * variance, var_samp, var_pop, stddev, stddev_samp and stddev_pop of int2,
 * int4, int8 and numeric, which no node computes, are a count, a sum and a
 * sum of squares at the inner level (int2 and int4 as int8, squares below
 * 2^62; int8 and numeric as numeric: all exact), summed at the outer one and
 * finished by gpuhash_variance_final, which hands them to the aggregate's
 * own final function (agg_variance.c): a query with one of them and no
 * DISTINCT aggregate or grouping sets is split too, its outer level grouped
 * by the same columns over the inner one's groups (or a plain aggregate
 * over its one row).  bool_and and every (bool_or) are the minimum
 * (maximum) of CASE WHEN x THEN 1 WHEN NOT x THEN 0 END at the inner level,
 * of those at the outer one, made bool again; split as a variance is.
 *
 * Taken: a SELECT whose aggregates (in its target list and HAVING) are
 * count, sum and avg (of integers, numerics and floats), min and max, the
 * variances above and bool_and, bool_or and every of PostgreSQL's own,
 * with count, min, max, sum or avg (DISTINCT x) of one expression x,
 * without FILTER or ORDER BY, or grouping sets, or a variance or bool_and
 * (window functions over them stay with the outer level); no set-returning
 * functions in the target list, row locks, sub-selects in the target list or
 * HAVING, columns made valid by a primary key in the GROUP BY, or references
 * to an outer query; with grouping sets or without count(DISTINCT x), no
 * volatile function in the target list or HAVING, and in no case in x.
 * The same for the sub-selects in FROM and the queries of WITH (not
 * recursive ones).  Only where gpuhash plans GROUP BYs (gpuhash.enabled,
 * enable_groupby), and by cost: the query is planned both ways, and the
 * rewritten plan runs where it has a gpuhash node and costs less than the
 * query's own (with the sorts of its DISTINCT aggregates counted, which
 * PostgreSQL's cost model leaves out); for a DISTINCT aggregate only where
 * the grouping columns and x pack into one 64-bit key (packs_exactly).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_func.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "agg.h"
#include "gpuhash.h"
#include "join.h"
#include "star.h"
#include "keys.h"
#include "pg_compat.h"

/* the rewrite of one query in progress */
typedef struct TwoLevel
{
	Query	   *q;
	bool		sets;			/* grouping sets (else count(DISTINCT x)) */
	Node	   *x;				/* the DISTINCT aggregates' argument */
	List	   *group_exprs;	/* the GROUP BY's expressions, in order */
	List	   *inner_tlist;	/* the subquery's: groups, x, then partial values */
	int			ndistinct;
	int			nvariance;		/* variances and standard deviations */
	int			nbool;			/* bool_and, bool_or, every */
	Oid			variance_fn;	/* gpuhash_variance_final, once looked up */
	bool		ok;
} TwoLevel;

/* How an aggregate is split between the two levels */
typedef enum SplitKind
{
	SK_DISTINCT,				/* count(DISTINCT x), sum, avg, min, max */
	SK_COUNT,					/* count(*), count(y) */
	SK_SUM,
	SK_AVG,
	SK_EXTREME,					/* min, max */
	SK_VARIANCE,				/* variance, stddev and their _samp and _pop */
	SK_BOOL,					/* bool_and, every (a minimum), bool_or (a maximum) */
	SK_NONE
} SplitKind;

/* a type whose sums are exact: the same in any order of the rows */
static bool
exactly_summable(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == NUMERICOID;
}

/* a numeric type sum and avg take here */
static bool
summable(Oid t)
{
	return exactly_summable(t) || t == FLOAT4OID || t == FLOAT8OID;
}

/*
 * gpuhash_variance_final(regprocedure, int8, numeric, numeric) in the
 * extension's schema (InvalidOid where there is none: an older version of
 * the extension's objects).
 */
static Oid
variance_final_fn(void)
{
	Oid			argtypes[4] = {REGPROCEDUREOID, INT8OID, NUMERICOID, NUMERICOID};
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;
	char	   *schema;

	/* the extension's schema (get_extension_schema is not exported before PostgreSQL 16) */
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("gpuhash"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (!OidIsValid(nsp) || (schema = get_namespace_name(nsp)) == NULL)
		return InvalidOid;
	return LookupFuncName(list_make2(makeString(schema), makeString("gpuhash_variance_final")),
						  4, argtypes, true);
}

/* bool_and, bool_or or every of PostgreSQL's */
static bool
bool_aggregate(Oid aggfnoid)
{
	return aggfnoid == F_BOOL_AND || aggfnoid == F_BOOL_OR || aggfnoid == F_EVERY;
}

/* What a (level 0) aggregate is to the rewrite. */
static SplitKind
kind_of(TwoLevel *rw, Aggref *a)
{
	char	   *name;
	Oid			t;

	if ((name = gpuhash_agg_catalog_name(a)) == NULL)
		return SK_NONE;
	if (a->aggdistinct != NIL)
	{
		/*
		 * the outer level's aggregate over the subquery's rows, which hold
		 * each x once per group: sums and averages of exact types only (a
		 * float's sum in another order may differ in its last digits)
		 */
		if (list_length(a->args) != 1 || a->aggfilter != NULL)
			return SK_NONE;
		t = exprType((Node *) linitial_node(TargetEntry, a->args)->expr);
		if (strcmp(name, "count") == 0 || strcmp(name, "min") == 0 || strcmp(name, "max") == 0 ||
			((strcmp(name, "sum") == 0 || strcmp(name, "avg") == 0) && exactly_summable(t)))
			return SK_DISTINCT;
		return SK_NONE;
	}
	if (strcmp(name, "count") == 0)
		return SK_COUNT;
	if (list_length(a->args) != 1)
		return SK_NONE;
	t = exprType((Node *) linitial_node(TargetEntry, a->args)->expr);
	if (strcmp(name, "sum") == 0 && summable(t))
		return SK_SUM;
	if (strcmp(name, "avg") == 0 && summable(t))
		return SK_AVG;
	if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
		return SK_EXTREME;
	if (bool_aggregate(a->aggfnoid))
		return SK_BOOL;
	if (gpuhash_variance_aggregate(a->aggfnoid))
	{
		if (!OidIsValid(rw->variance_fn))
			rw->variance_fn = variance_final_fn();
		if (OidIsValid(rw->variance_fn))
			return SK_VARIANCE;
	}
	return SK_NONE;
}

/* Check every aggregate of the query and find x; false where one is not taken. */
static bool
check_aggs(Node *node, TwoLevel *rw)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *a = (Aggref *) node;
		SplitKind k = kind_of(rw, a);

		if (k == SK_NONE)
			rw->ok = false;
		else if (k == SK_DISTINCT)
		{
			Node	   *arg = (Node *) linitial_node(TargetEntry, a->args)->expr;

			if (rw->x == NULL)
				rw->x = arg;
			else if (!equal(rw->x, arg))
				rw->ok = false;
			rw->ndistinct++;
		}
		else if (k == SK_VARIANCE)
			rw->nvariance++;
		else if (k == SK_BOOL)
			rw->nbool++;
		return false;			/* no aggregate inside one of this level */
	}
	if (IsA(node, GroupingFunc) && rw->sets)
		return false;			/* the outer level's: its arguments are grouping columns */
	if (IsA(node, GroupingFunc) || IsA(node, SubLink))
	{
		rw->ok = false;
		return false;
	}
	return expression_tree_walker(node, check_aggs, rw);
}

/* A Var of the subquery's column attno (1-based), of the inner expression expr. */
static Var *
inner_var(int attno, Node *expr)
{
	return makeVar(1, (AttrNumber) attno, exprType(expr), exprTypmod(expr),
				   exprCollation(expr), 0);
}

/* The subquery's column holding expr (added where it is not yet there). */
static Var *
inner_column(TwoLevel *rw, Expr *expr)
{
	ListCell   *lc;
	TargetEntry *te;

	foreach(lc, rw->inner_tlist)
	{
		te = lfirst(lc);
		if (equal(te->expr, expr))
			return inner_var(te->resno, (Node *) te->expr);
	}
	te = makeTargetEntry(expr, list_length(rw->inner_tlist) + 1,
						 psprintf("p%d", list_length(rw->inner_tlist) + 1), false);
	rw->inner_tlist = lappend(rw->inner_tlist, te);
	return inner_var(te->resno, (Node *) expr);
}

/* An aggregate fn of PostgreSQL's over one argument, as the parser makes it. */
static Expr *
make_agg(Oid fn, Expr *arg, Oid inputcollid, Expr *filter, bool star)
{
	Aggref	   *a = makeNode(Aggref);
	Oid			rettype = get_func_rettype(fn);

	a->aggfnoid = fn;
	a->aggtype = rettype;
	a->aggcollid = type_is_collatable(rettype) ? inputcollid : InvalidOid;
	a->inputcollid = inputcollid;
	a->aggtranstype = InvalidOid;	/* the planner's to resolve */
	a->aggargtypes = star ? NIL : list_make1_oid(exprType((Node *) arg));
	a->args = star ? NIL : list_make1(makeTargetEntry(arg, 1, NULL, false));
	a->aggfilter = filter;
	a->aggstar = star;
	a->aggkind = AGGKIND_NORMAL;
	a->agglevelsup = 0;
	a->aggsplit = AGGSPLIT_SIMPLE;
	a->aggno = -1;
	a->aggtransno = -1;
	a->location = -1;
	return (Expr *) a;
}

/* PostgreSQL's sum of argtype */
static Oid
sum_fn(Oid argtype)
{
	switch (argtype)
	{
		case INT2OID:
			return F_SUM_INT2;
		case INT4OID:
			return F_SUM_INT4;
		case INT8OID:
			return F_SUM_INT8;
		case FLOAT4OID:
			return F_SUM_FLOAT4;
		case FLOAT8OID:
			return F_SUM_FLOAT8;
		case NUMERICOID:
			return F_SUM_NUMERIC;
	}
	elog(ERROR, "gpuhash: no sum of type %u", argtype);
	return InvalidOid;			/* keep compiler quiet */
}

/* expr cast to type t, as CAST would */
static Expr *
cast_to(Expr *expr, Oid t)
{
	Node	   *n = coerce_to_target_type(NULL, (Node *) expr, exprType((Node *) expr), t, -1,
										  COERCION_EXPLICIT, COERCE_EXPLICIT_CAST, -1);

	if (n == NULL)
		elog(ERROR, "gpuhash: no cast from type %u to %u", exprType((Node *) expr), t);
	return (Expr *) n;
}

/* The outer level's sum of an inner int8 count, as int8: 0 over no rows. */
static Expr *
sum_of_counts(TwoLevel *rw, Expr *count)
{
	CoalesceExpr *c = makeNode(CoalesceExpr);
	Var		   *v = inner_column(rw, count);

	c->coalescetype = INT8OID;
	c->coalescecollid = InvalidOid;
	c->args = list_make2(cast_to(make_agg(sum_fn(INT8OID), (Expr *) v, InvalidOid, NULL,
										  false), INT8OID),
						 makeConst(INT8OID, -1, InvalidOid, 8, Int64GetDatum(0), false, true));
	c->location = -1;
	return (Expr *) c;
}

/*
 * The outer level's variance or standard deviation a of arg (of type t):
 * gpuhash_variance_final over the sums of the subquery's counts, sums and
 * sums of squares, exact: int2 and int4 summed as int8 with squares in
 * int8 (below 2^62), int8 and numeric in numeric.
 */
static Expr *
variance_of_sums(TwoLevel *rw, Aggref *a, Expr *arg, Oid t)
{
	bool		small = t == INT2OID || t == INT4OID;
	Oid			wide = small ? INT8OID : NUMERICOID;
	Expr	   *x = cast_to((Expr *) copyObject(arg), wide);
	Oid			mul = LookupOperName(NULL, list_make2(makeString("pg_catalog"), makeString("*")),
									 wide, wide, false, -1);
	OpExpr	   *square = (OpExpr *) make_opclause(mul, wide, false, copyObject(x), copyObject(x),
												  InvalidOid, InvalidOid);
	Expr	   *n = sum_of_counts(rw, make_agg(F_COUNT_ANY, (Expr *) copyObject(arg), InvalidOid,
											   copyObject(a->aggfilter), false));
	Expr	   *sums[2];

	sums[0] = make_agg(sum_fn(wide), x, InvalidOid, copyObject(a->aggfilter), false);
	square->opfuncid = get_opcode(mul);
	sums[1] = make_agg(sum_fn(wide), (Expr *) square, InvalidOid, copyObject(a->aggfilter),
					   false);
	for (int i = 0; i < 2; i++)
	{
		Var		   *v = inner_column(rw, sums[i]);

		sums[i] = make_agg(sum_fn(NUMERICOID), (Expr *) v, InvalidOid, NULL, false);
	}
	return (Expr *) makeFuncExpr(rw->variance_fn, NUMERICOID,
								 list_make4(makeConst(REGPROCEDUREOID, -1, InvalidOid, 4,
													  ObjectIdGetDatum(a->aggfnoid), false, true),
											n, sums[0], sums[1]),
								 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
}

/*
 * The outer level's bool_and or every (bool_or) a of arg: the minimum
 * (maximum) of the subquery's minima (maxima) of CASE WHEN arg THEN 1 WHEN
 * NOT arg THEN 0 END, an int4 that is NULL where arg is (so that NULLs are
 * left out, as the aggregate leaves them), made bool again.
 */
static Expr *
bool_of_extreme(TwoLevel *rw, Aggref *a, Expr *arg)
{
	Oid			fn = a->aggfnoid == F_BOOL_OR ? F_MAX_INT4 : F_MIN_INT4;
	CaseExpr   *c = makeNode(CaseExpr);
	CaseWhen   *yes = makeNode(CaseWhen),
			   *no = makeNode(CaseWhen);
	Var		   *v;

	yes->expr = (Expr *) copyObject(arg);
	yes->result = (Expr *) makeConst(INT4OID, -1, InvalidOid, 4, Int32GetDatum(1), false, true);
	yes->location = -1;
	no->expr = (Expr *) makeBoolExpr(NOT_EXPR, list_make1(copyObject(arg)), -1);
	no->result = (Expr *) makeConst(INT4OID, -1, InvalidOid, 4, Int32GetDatum(0), false, true);
	no->location = -1;
	c->casetype = INT4OID;
	c->casecollid = InvalidOid;
	c->arg = NULL;
	c->args = list_make2(yes, no);
	c->defresult = (Expr *) makeNullConst(INT4OID, -1, InvalidOid);
	c->location = -1;
	v = inner_column(rw, make_agg(fn, (Expr *) c, InvalidOid, copyObject(a->aggfilter), false));
	return cast_to(make_agg(fn, (Expr *) v, InvalidOid, NULL, false), BOOLOID);
}

/* The outer level's expression for aggregate a, its partial values added to the subquery. */
static Expr *
outer_agg(TwoLevel *rw, Aggref *a)
{
	SplitKind k = kind_of(rw, a);
	Expr	   *arg = a->args != NIL ? linitial_node(TargetEntry, a->args)->expr : NULL;
	Oid			t = arg ? exprType((Node *) arg) : InvalidOid;
	Oid			rettype = a->aggtype;

	switch (k)
	{
		case SK_DISTINCT:
			if (rw->sets)
			{
				/*
				 * a set's groups hold each x once per finer group: still
				 * the DISTINCT aggregate, over the subquery's fewer rows
				 */
				Aggref	   *d = copyObject(a);

				linitial_node(TargetEntry, d->args)->expr =
					(Expr *) inner_var(list_length(rw->group_exprs) + 1, rw->x);
				return (Expr *) d;
			}
			return make_agg(a->aggfnoid, (Expr *) inner_var(list_length(rw->group_exprs) + 1, rw->x),
							a->inputcollid, NULL, false);
		case SK_COUNT:
			return sum_of_counts(rw, (Expr *) copyObject(a));
		case SK_SUM:
			{
				/* int2/int4 sums are int8, summed as numeric and brought back */
				Var		   *v = inner_column(rw, (Expr *) copyObject(a));
				Expr	   *sum = make_agg(sum_fn(rettype), (Expr *) v, InvalidOid, NULL, false);

				return exprType((Node *) sum) == rettype ? sum : cast_to(sum, rettype);
			}
		case SK_AVG:
			{
				bool		is_float = (t == FLOAT4OID || t == FLOAT8OID);
				Expr	   *y = is_float ? cast_to((Expr *) copyObject(arg), FLOAT8OID) :
					(Expr *) copyObject(arg);
				Oid			sumfn = sum_fn(exprType((Node *) y));
				Expr	   *s = make_agg(sumfn, y, InvalidOid, copyObject(a->aggfilter), false);
				Expr	   *c = make_agg(F_COUNT_ANY, (Expr *) copyObject(arg), InvalidOid,
										 copyObject(a->aggfilter), false);
				Var		   *sv = inner_column(rw, s);
				Var		   *cv = inner_column(rw, c);
				Expr	   *osum = make_agg(sum_fn(exprType((Node *) sv)), (Expr *) sv,
											InvalidOid, NULL, false);
				Expr	   *ocount = make_agg(sum_fn(INT8OID), (Expr *) cv, InvalidOid,
											  NULL, false);

				/*
				 * NULL where no value was counted: the division is strict.
				 * A float's sum + 0: avg's sum starts at 0 (float8_accum),
				 * sum's at its first value, so that -0s alone sum to -0
				 * but average 0.
				 */
				if (is_float)
				{
					Expr	   *zero = (Expr *) makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8),
														  Float8GetDatum(0.0), false,
														  FLOAT8PASSBYVAL);

					osum = (Expr *) makeFuncExpr(F_FLOAT8PL, FLOAT8OID, list_make2(osum, zero),
												 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
					return (Expr *) makeFuncExpr(F_FLOAT8DIV, FLOAT8OID,
												 list_make2(osum, cast_to(ocount, FLOAT8OID)),
												 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
				}
				return (Expr *) makeFuncExpr(F_NUMERIC_DIV, NUMERICOID,
											 list_make2(cast_to(osum, NUMERICOID), ocount),
											 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
			}
		case SK_EXTREME:
			{
				Var		   *v = inner_column(rw, (Expr *) copyObject(a));

				return make_agg(a->aggfnoid, (Expr *) v, a->inputcollid, NULL, false);
			}
		case SK_VARIANCE:
			return variance_of_sums(rw, a, arg, t);
		case SK_BOOL:
			return bool_of_extreme(rw, a, arg);
		case SK_NONE:
			break;
	}
	rw->ok = false;
	return (Expr *) a;
}

/*
 * GROUPING() of the outer level: its arguments the subquery's columns of
 * the grouping columns its references name (PostgreSQL 18 leaves them the
 * expressions below its grouping step, not the step's columns).
 */
static Node *
grouping_func(TwoLevel *rw, GroupingFunc *g)
{
	GroupingFunc *r = (GroupingFunc *) copyObject(g);
	ListCell   *lc;

	r->args = NIL;
	foreach(lc, g->refs)
	{
		ListCell   *c;
		int			i = 0;
		bool		found = false;

		foreach(c, rw->q->groupClause)
		{
			i++;
			if (lfirst_node(SortGroupClause, c)->tleSortGroupRef == (Index) lfirst_int(lc))
			{
				r->args = lappend(r->args, inner_var(i, list_nth(rw->group_exprs, i - 1)));
				found = true;
				break;
			}
		}
		if (!found)
			rw->ok = false;
	}
	return (Node *) r;
}

/*
 * The outer level's form of an expression of the query's target list or
 * HAVING: its grouping expressions the subquery's columns, its aggregates
 * made of the subquery's partial values.
 */
static Node *
outer_mutator(Node *node, TwoLevel *rw)
{
	ListCell   *lc;
	int			i = 0;

	if (node == NULL)
		return NULL;
	foreach(lc, rw->group_exprs)
	{
		i++;
		if (equal(node, lfirst(lc)))
			return (Node *) inner_var(i, node);
	}
	if (IsA(node, Aggref))
		return (Node *) outer_agg(rw, (Aggref *) node);
	if (IsA(node, GroupingFunc))
		return grouping_func(rw, (GroupingFunc *) node);
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		/* a column outside the grouping expressions and the aggregates */
		rw->ok = false;
		return node;
	}
	return expression_tree_mutator(node, outer_mutator, rw);
}

/*
 * A name for the subquery's column of expr (EXPLAIN shows it as the outer
 * level's group key): the column's, where expr is one of q's, else dflt.
 */
static char *
column_name(Query *q, Node *expr, const char *name, const char *dflt)
{
	Var		   *v = (Var *) expr;

	if (name != NULL)
		return pstrdup(name);
	if (IsA(expr, Var) && v->varlevelsup == 0 && v->varattno > 0)
		return get_rte_attribute_name(rt_fetch(v->varno, q->rtable), v->varattno);
	return pstrdup(dflt);
}

/*
 * Do q's grouping columns and x pack exactly into a GpuHashAgg's 64-bit
 * key (keys.c)?  Wider keys, text among them, go through its dictionary on
 * the CPU, row by row, which can make the subquery slower than
 * PostgreSQL's DISTINCT aggregate: by cost the query is rewritten only
 * where they pack; forced, wherever it can be.
 */
static bool
packs_exactly(Query *q, Node *x)
{
	int			bits = gpuhash_key_bits(exprType(x));
	ListCell   *lc;

	if (gpuhash_force)
		return true;
	if (bits == 0 || exprCollation(x) != InvalidOid)
		return false;
	foreach(lc, q->groupClause)
	{
		Node	   *g = get_sortgroupclause_expr(lfirst(lc), q->targetList);
		int			b = gpuhash_key_bits(exprType(g));

		if (b == 0 || exprCollation(g) != InvalidOid)
			return false;
		bits += b;
	}
	return bits <= 64;
}

/* Can query q be rewritten at all (its shape, before its aggregates)? */
static bool
shape_ok(Query *q)
{
	return q->commandType == CMD_SELECT && q->utilityStmt == NULL &&
		(q->hasAggs || q->groupingSets != NIL) &&
		!q->hasTargetSRFs && q->setOperations == NULL && !q->hasModifyingCTE &&
		q->rowMarks == NIL && !q->hasForUpdate && q->constraintDeps == NIL &&
		!q->hasDistinctOn &&
		!contain_vars_of_level((Node *) q, 1) &&
		!checkExprHasSubLink((Node *) q->targetList) &&
		!checkExprHasSubLink(q->havingQual);
}

/*
 * q rewritten, or NULL where it is not one to rewrite: a new Query over a
 * subquery that q itself becomes (the callers' copies of theirs).
 */
static Query *
rewrite_query(Query *q)
{
	TwoLevel rw = {0};
	Query	   *inner;
	Query	   *outer;
	RangeTblEntry *rte;
	RangeTblRef *rtr;
	List	   *colnames = NIL;
	List	   *outer_tlist = NIL;
	SortGroupClause *xclause;
	List	   *inner_groups;
	Oid			ltop = InvalidOid,
				eqop = InvalidOid;
	bool		hashable = false;
	Index		maxref = 0;
	ListCell   *lc;

	if (!shape_ok(q))
		return NULL;
	rw.q = q;
	rw.ok = true;
	rw.sets = q->groupingSets != NIL;
	foreach(lc, q->targetList)
		(void) check_aggs((Node *) lfirst_node(TargetEntry, lc)->expr, &rw);
	(void) check_aggs(q->havingQual, &rw);
	if (!rw.ok)
		return NULL;
	if (rw.ndistinct == 0)
	{
		/*
		 * grouping sets (every set's groups are made of the groups by all
		 * the columns), variances or bool_and, over the groups by all the
		 * columns
		 */
		if ((rw.sets ? q->groupClause == NIL : rw.nvariance + rw.nbool == 0) ||
			contain_volatile_functions((Node *) q->targetList) ||
			contain_volatile_functions(q->havingQual))
			return NULL;
	}
	else
	{
		if ((rw.sets ? contain_volatile_functions((Node *) q->targetList) ||
			 contain_volatile_functions(q->havingQual) : q->groupDistinct) ||
			contain_volatile_functions(rw.x))
			return NULL;
		get_sort_group_operators(exprType(rw.x), false, true, false, &ltop, &eqop, NULL,
								 &hashable);
		if (!OidIsValid(eqop) || (!hashable && !OidIsValid(ltop)) || !packs_exactly(q, rw.x))
			return NULL;
	}

	/* the subquery's first columns: the grouping expressions, then x */
	foreach(lc, q->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		TargetEntry *te = get_sortgroupclause_tle(sgc, q->targetList);

		Node	   *expr = GroupingNullsRemoved(q, copyObject((Node *) te->expr));

		rw.group_exprs = lappend(rw.group_exprs, te->expr);
		rw.inner_tlist = lappend(rw.inner_tlist,
								 makeTargetEntry((Expr *) expr, list_length(rw.inner_tlist) + 1,
												 column_name(q, (Node *) te->expr, te->resname,
															 "grouped"),
												 false));
		llast_node(TargetEntry, rw.inner_tlist)->ressortgroupref = sgc->tleSortGroupRef;
		maxref = Max(maxref, sgc->tleSortGroupRef);
	}
	inner_groups = copyObject(q->groupClause);
	if (rw.ndistinct > 0)
	{
		foreach(lc, q->targetList)
			maxref = Max(maxref, lfirst_node(TargetEntry, lc)->ressortgroupref);
		rw.inner_tlist = lappend(rw.inner_tlist,
								 makeTargetEntry((Expr *) copyObject(rw.x),
												 list_length(rw.inner_tlist) + 1,
												 column_name(q, rw.x, NULL, "counted"), false));
		llast_node(TargetEntry, rw.inner_tlist)->ressortgroupref = maxref + 1;
		xclause = makeNode(SortGroupClause);
		xclause->tleSortGroupRef = maxref + 1;
		xclause->eqop = eqop;
		xclause->sortop = ltop;
		xclause->nulls_first = false;
		xclause->hashable = hashable;
		inner_groups = lappend(inner_groups, xclause);
	}

	/* the outer level's target list and HAVING, which add the partial values */
	foreach(lc, q->targetList)
	{
		TargetEntry *te = flatCopyTargetEntry(lfirst_node(TargetEntry, lc));

		te->expr = (Expr *) outer_mutator((Node *) te->expr, &rw);
		outer_tlist = lappend(outer_tlist, te);
	}
	outer = makeNode(Query);
	outer->havingQual = outer_mutator(q->havingQual, &rw);
	if (!rw.ok)
		return NULL;

	outer->commandType = CMD_SELECT;
	outer->querySource = q->querySource;
	outer->queryId = q->queryId;
	outer->canSetTag = q->canSetTag;
	outer->hasRowSecurity = q->hasRowSecurity;	/* the plan depends on the role */
	outer->targetList = outer_tlist;
	outer->groupClause = q->groupClause;
	outer->groupingSets = q->groupingSets;
	outer->groupDistinct = q->groupDistinct;
	outer->hasAggs = q->hasAggs;
	outer->hasWindowFuncs = q->hasWindowFuncs;
	outer->windowClause = q->windowClause;
	outer->sortClause = q->sortClause;
	outer->distinctClause = q->distinctClause;
	outer->limitOffset = q->limitOffset;
	outer->limitCount = q->limitCount;
	outer->limitOption = q->limitOption;
	outer->stmt_location = q->stmt_location;
	outer->stmt_len = q->stmt_len;

	/*
	 * The subquery: q itself (the caller's copy), its FROM and WHERE,
	 * grouped by its grouping columns (and x)
	 */
	inner = q;
	inner->targetList = rw.inner_tlist;
	inner->groupClause = inner_groups;
	inner->groupingSets = NIL;
	inner->groupDistinct = false;
	inner->hasWindowFuncs = false;
	inner->windowClause = NIL;
	inner->havingQual = NULL;
	inner->sortClause = NIL;
	inner->distinctClause = NIL;
	inner->limitOffset = NULL;
	inner->limitCount = NULL;
	inner->limitOption = LIMIT_OPTION_COUNT;
	inner->canSetTag = false;
	inner->querySource = QSRC_ORIGINAL;
	inner->utilityStmt = NULL;
	inner->resultRelation = 0;
	foreach(lc, rw.inner_tlist)
		colnames = lappend(colnames, makeString(lfirst_node(TargetEntry, lc)->resname));

	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = inner;
	rte->alias = makeAlias(rw.ndistinct == 0 ? "finest_groups" : "distinct_groups", NIL);
	rte->eref = makeAlias(rw.ndistinct == 0 ? "finest_groups" : "distinct_groups", colnames);
	rte->inFromCl = true;
	rtr = makeNode(RangeTblRef);
	rtr->rtindex = 1;

	outer->rtable = list_make1(rte);
	outer->jointree = makeFromExpr(list_make1(rtr), NULL);
	return outer;
}

/*
 * The query's own FROM sub-selects and WITH queries (not recursive ones)
 * rewritten in place; whether any was.  A rewritten query returns the same
 * columns, of the same types, typmods and collations.
 */
static bool
rewrite_from(Query *q)
{
	ListCell   *lc;
	bool		any = false;
	Query	   *r;

	foreach(lc, q->cteList)
	{
		CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

		if (cte->cterecursive || !IsA(cte->ctequery, Query))
			continue;
		any |= rewrite_from((Query *) cte->ctequery);
		if ((r = rewrite_query((Query *) cte->ctequery)) != NULL)
		{
			cte->ctequery = (Node *) r;
			any = true;
		}
	}
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->rtekind != RTE_SUBQUERY || rte->lateral || rte->subquery == NULL)
			continue;
		any |= rewrite_from(rte->subquery);
		if ((r = rewrite_query(rte->subquery)) != NULL)
		{
			rte->subquery = r;
			any = true;
		}
	}
	return any;
}

static bool
distinct_agg_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref) && ((Aggref *) node)->aggdistinct != NIL)
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, distinct_agg_walker, context, 0);
	return expression_tree_walker(node, distinct_agg_walker, context);
}

/* a DISTINCT aggregate, grouping sets, a variance or a bool_and anywhere in the query */
static bool
twolevel_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return ((Query *) node)->groupingSets != NIL ||
			query_tree_walker((Query *) node, twolevel_walker, context, 0);
	if (IsA(node, Aggref) && (((Aggref *) node)->aggdistinct != NIL ||
							  bool_aggregate(((Aggref *) node)->aggfnoid) ||
							  gpuhash_variance_aggregate(((Aggref *) node)->aggfnoid)))
		return true;
	return expression_tree_walker(node, twolevel_walker, context);
}

Query *
gpuhash_twolevel_rewrite(Query *parse)
{
	Query	   *copy;
	Query	   *r;
	bool		any;

	if (!gpuhash_enabled || !gpuhash_enable_groupby || parse->commandType != CMD_SELECT ||
		!twolevel_walker((Node *) parse, NULL) || !gpuhash_planning_allowed())
		return NULL;
	copy = copyObject(parse);
	any = rewrite_from(copy);
	r = rewrite_query(copy);
	return r != NULL ? r : any ? copy : NULL;
}

/*
 * What a plan's DISTINCT aggregates cost beyond the Agg's own estimate:
 * PostgreSQL sorts each group's values (its cost model leaves that out),
 * as cost_sort would count it: 2 * cpu_operator_cost per comparison,
 * n * log2(n / groups) comparisons for n input rows.
 */
static Cost
distinct_sorts(Plan *plan)
{
	Cost		cost = 0;
	ListCell   *lc;

	if (plan == NULL)
		return 0;
	if (IsA(plan, Agg) && plan->lefttree != NULL &&
		(distinct_agg_walker((Node *) plan->targetlist, NULL) ||
		 distinct_agg_walker((Node *) plan->qual, NULL)))
	{
		double		n = Max(plan->lefttree->plan_rows, 1.0);
		double		groups = Max(plan->plan_rows, 1.0);

		cost += 2.0 * cpu_operator_cost * n * log2(Max(n / groups, 2.0));
	}
	cost += distinct_sorts(plan->lefttree) + distinct_sorts(plan->righttree);
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			cost += distinct_sorts(lfirst(lc));
	if (IsA(plan, SubqueryScan))
		cost += distinct_sorts(((SubqueryScan *) plan)->subplan);
	return cost;
}

/* Does plan run a GpuHashJoin, GpuHashAgg or GpuStarAgg? */
static bool
runs_gpuhash(Plan *plan)
{
	ListCell   *lc;

	if (plan == NULL)
		return false;
	if (IsA(plan, CustomScan))
	{
		const char *name = ((CustomScan *) plan)->methods->CustomName;

		if (strcmp(name, GPUHASH_AGG_NAME) == 0 || strcmp(name, GPUHASH_JOIN_NAME) == 0 ||
			strcmp(name, GPUHASH_STAR_NAME) == 0)
			return true;
		foreach(lc, ((CustomScan *) plan)->custom_plans)
			if (runs_gpuhash(lfirst(lc)))
				return true;
	}
	if (runs_gpuhash(plan->lefttree) || runs_gpuhash(plan->righttree))
		return true;
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			if (runs_gpuhash(lfirst(lc)))
				return true;
	return IsA(plan, SubqueryScan) && runs_gpuhash(((SubqueryScan *) plan)->subplan);
}

/*
 * The plan to run: the rewritten query's where it runs one of gpuhash's
 * nodes and costs less than the query's as written, its DISTINCT
 * aggregates' sorts counted; else the query's as written: the two levels
 * are for the device, and a plan of PostgreSQL's own nodes stays as the
 * query was written (forced, the rewritten one: gpuhash's nodes wherever
 * they apply; the caller's).
 */
PlannedStmt *
gpuhash_twolevel_choose(PlannedStmt *written, PlannedStmt *rewritten)
{
	Cost		a = written->planTree->total_cost + distinct_sorts(written->planTree);
	Cost		b = rewritten->planTree->total_cost;
	bool		gpu = runs_gpuhash(rewritten->planTree);

	elog(DEBUG1, "gpuhash: aggregation as written at cost %.2f (its DISTINCT aggregates' sorts counted), in two levels at %.2f%s",
		 a, b, gpu ? "" : " without a gpuhash node");
	return gpu && b < a ? rewritten : written;
}
