/*-------------------------------------------------------------------------
 *
 * qual_order.c
 *	  Quals in the order PostgreSQL's plan would evaluate them, so that a
 *	  gpuhash node checks them as that plan does: the same rows reach a qual
 *	  that may fail (an overflow, a division by zero) as in PostgreSQL's
 *	  own plan of the same shape.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "optimizer/cost.h"

#include "gpuhash.h"

typedef struct OrderedQual
{
	RestrictInfo *ri;
	Cost		cost;
	int			pos;
} OrderedQual;

static int
qualcost_cmp(const void *a, const void *b)
{
	const OrderedQual *x = a,
			   *y = b;

	if (x->ri->security_level != y->ri->security_level)
		return x->ri->security_level < y->ri->security_level ? -1 : 1;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->pos - y->pos;
}

/*
 * RestrictInfos in the order a plan node evaluates them (createplan.c's
 * order_qual_clauses, which is not exported): by security level, then by
 * cost, keeping the given order among equals.
 */
List *
gpuhash_order_quals(PlannerInfo *root, List *quals)
{
	int			n = list_length(quals);
	OrderedQual *q = palloc(sizeof(OrderedQual) * Max(n, 1));
	List	   *result = NIL;
	ListCell   *lc;
	int			i = 0;

	foreach(lc, quals)
	{
		QualCost	qc;

		q[i].ri = lfirst_node(RestrictInfo, lc);
		cost_qual_eval_node(&qc, (Node *) q[i].ri, root);
		q[i].cost = qc.per_tuple;
		q[i].pos = i;
		i++;
	}
	qsort(q, n, sizeof(OrderedQual), qualcost_cmp);
	for (i = 0; i < n; i++)
		result = lappend(result, q[i].ri);
	pfree(q);
	return result;
}
