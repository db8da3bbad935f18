/*-------------------------------------------------------------------------
 *
 * join_estimates.c
 *	  Join sizes over unique keys of several columns, estimated as
 *	  PostgreSQL estimates them over a foreign key of those columns.
 *
 * PostgreSQL multiplies the selectivities of a join's equality clauses as
 * if they were independent.  Where they equate every column of a unique
 * key of several columns of one table (TPC-H's partsupp, joined on
 * (ps_partkey, ps_suppkey)), that product is far too small: each row of
 * the other side meets at most one row, and the estimate can be a
 * millionth of that (386 rows for 30 million).  A plan made on such an
 * estimate -- nested loops over rows thought to be few -- can run a
 * hundred times longer than a hash join, and hides what gpuhash's nodes
 * would win.  With a foreign key of those columns, PostgreSQL uses the
 * key instead (each referencing row meets one referenced row: costsize.c,
 * get_foreign_key_join_selectivity), so:
 *
 * Before the join search of every query level (join_search_hook), for each
 * unique index of two or more plain columns of a base table Y (not partial,
 * not deferrable), and each other base relation X whose columns the query
 * equates to all of the index's (in equivalence classes), this adds what a
 * foreign key from X's columns to Y's would add: PostgreSQL's own
 * match_foreign_keys_to_quals then keeps those whose equalities the query
 * has, and PostgreSQL's estimate uses them.  The assumption is the one
 * PostgreSQL makes for a join on one column unique on one side (the
 * smaller set of keys is contained in the larger): every row of X finds its
 * row of Y, before Y's own quals.  Where X holds many keys that Y does not,
 * the estimate is high, as PostgreSQL's single-column estimate is then.
 * gpuhash.unique_key_estimates = off turns it off; so does gpuhash.enabled.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "nodes/makefuncs.h"
#include "optimizer/geqo.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "utils/lsyscache.h"

#include "gpuhash.h"

static join_search_hook_type prev_join_search_hook = NULL;

/*
 * The column of relation x that the query equates to column attno of
 * relation y (an equivalence class holding a Var of each), with the
 * equality operator of y's type and x's in that class's operator family;
 * InvalidAttrNumber if none.
 */
static AttrNumber
equated_column(PlannerInfo *root, RelOptInfo *yrel, AttrNumber attno, Index x, Oid *op)
{
	int			i = -1;

	while ((i = bms_next_member(yrel->eclass_indexes, i)) >= 0)
	{
		EquivalenceClass *ec = list_nth(root->eq_classes, i);
		Var		   *yvar = NULL,
				   *xvar = NULL;
		ListCell   *lc;

		if (ec->ec_has_volatile || ec->ec_opfamilies == NIL)
			continue;
		foreach(lc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(lc);
			Expr	   *e = em->em_expr;

			if (em->em_is_child)
				continue;
			while (e && IsA(e, RelabelType))
				e = ((RelabelType *) e)->arg;
			if (e == NULL || !IsA(e, Var) || ((Var *) e)->varlevelsup != 0)
				continue;
			if (((Var *) e)->varno == yrel->relid && ((Var *) e)->varattno == attno)
				yvar = (Var *) e;
			else if (((Var *) e)->varno == x && ((Var *) e)->varattno > 0 && xvar == NULL)
				xvar = (Var *) e;
		}
		if (yvar == NULL || xvar == NULL)
			continue;
		*op = get_opfamily_member(linitial_oid(ec->ec_opfamilies), yvar->vartype,
								  xvar->vartype, BTEqualStrategyNumber);
		if (OidIsValid(*op))
			return xvar->varattno;
	}
	return InvalidAttrNumber;
}

/* whether list holds a key from fk's columns of its relation to the same of its referenced one */
static bool
known(List *list, ForeignKeyOptInfo *fk)
{
	ListCell   *lc;

	foreach(lc, list)
	{
		ForeignKeyOptInfo *o = lfirst(lc);

		if (o->con_relid == fk->con_relid && o->ref_relid == fk->ref_relid &&
			o->nkeys == fk->nkeys &&
			memcmp(o->conkey, fk->conkey, sizeof(AttrNumber) * fk->nkeys) == 0 &&
			memcmp(o->confkey, fk->confkey, sizeof(AttrNumber) * fk->nkeys) == 0)
			return true;
	}
	return false;
}

/* the keys unique indexes of base relation y give, from each other base relation */
static List *
unique_key_references(PlannerInfo *root, RelOptInfo *yrel, List *found)
{
	ListCell   *lc;

	foreach(lc, yrel->indexlist)
	{
		IndexOptInfo *ind = lfirst(lc);

		if (!ind->unique || !ind->immediate || ind->indpred != NIL ||
			ind->nkeycolumns < 2 || ind->nkeycolumns > INDEX_MAX_KEYS)
			continue;
		for (Index x = 1; x < (Index) root->simple_rel_array_size; x++)
		{
			RelOptInfo *xrel = root->simple_rel_array[x];
			ForeignKeyOptInfo *fk;
			int			c;

			if (x == yrel->relid || xrel == NULL || xrel->reloptkind != RELOPT_BASEREL)
				continue;
			fk = makeNode(ForeignKeyOptInfo);
			fk->con_relid = x;
			fk->ref_relid = yrel->relid;
			fk->nkeys = ind->nkeycolumns;
			for (c = 0; c < ind->nkeycolumns; c++)
			{
				fk->confkey[c] = (AttrNumber) ind->indexkeys[c];
				if (fk->confkey[c] <= 0)
					break;		/* an expression */
				fk->conkey[c] = equated_column(root, yrel, fk->confkey[c], x,
											   &fk->conpfeqop[c]);
				if (fk->conkey[c] == InvalidAttrNumber)
					break;
			}
			if (c == ind->nkeycolumns && !known(found, fk) && !known(root->fkey_list, fk))
				found = lappend(found, fk);
			else
				pfree(fk);
		}
	}
	return found;
}

/* The query level's unique keys as foreign keys, matched by PostgreSQL to its equalities. */
static void
add_unique_key_references(PlannerInfo *root)
{
	List	   *kept = root->fkey_list;
	List	   *found = NIL;

	for (Index y = 1; y < (Index) root->simple_rel_array_size; y++)
	{
		RelOptInfo *yrel = root->simple_rel_array[y];

		if (yrel != NULL && yrel->reloptkind == RELOPT_BASEREL &&
			yrel->rtekind == RTE_RELATION && yrel->indexlist != NIL)
			found = unique_key_references(root, yrel, found);
	}
	if (found == NIL)
		return;
	root->fkey_list = found;
	match_foreign_keys_to_quals(root);	/* keeps those the query's equalities match */
	root->fkey_list = list_concat(list_copy(kept), root->fkey_list);
}

static RelOptInfo *
gpuhash_join_search(PlannerInfo *root, int levels_needed, List *initial_rels)
{
	if (gpuhash_enabled && gpuhash_unique_key_estimates)
		add_unique_key_references(root);
	if (prev_join_search_hook)
		return prev_join_search_hook(root, levels_needed, initial_rels);
	if (enable_geqo && levels_needed >= geqo_threshold)
		return geqo(root, levels_needed, initial_rels);
	return standard_join_search(root, levels_needed, initial_rels);
}

void
gpuhash_join_estimates_init(void)
{
	prev_join_search_hook = join_search_hook;
	join_search_hook = gpuhash_join_search;
}
