/*-------------------------------------------------------------------------
 *
 * star_path.c
 *	  Planner half of GpuStarAgg: recognise an aggregation over a star of
 *	  inner joins, offer the pipeline for it, and turn the chosen path into
 *	  a CustomScan plan (star.h).
 *
 * INTERFACE ROUTINES
 *		gpuhash_star_init		install the hook, register the scan methods
 *
 * WHAT IS OFFERED
 *
 * create_upper_paths_hook at UPPERREL_GROUP_AGG, for a GROUP BY or a plain
 * aggregate over base relations joined by inner joins (and semi joins of
 * the fact table with a dimension), when one of
 * them (the fact table: the largest, an ordinary heap table, or a
 * partitioned table of them: star_fact.c) is joined to
 * every other relation, and those join among themselves into components
 * (the dimensions) such that:
 *	- each dimension is joined to the fact table by one equality of a fact
 *	  column of an integer type (or date, timestamp, oid) with an expression
 *	  of the dimension, or by two of int2 or int4 columns (made one 64-bit
 *	  key on either side), and is provably unique on
 *	  that key (innerrel_is_unique: a primary key, a unique index), so a
 *	  fact row meets at most one row of each; fact columns equal to several
 *	  relations' (lo_suppkey = s_suppkey = ps_suppkey) join each of them.
 *	  A table without a key on that column whose statistics find no value
 *	  twice is taken too, its keys checked as they are read: where two rows
 *	  share one, the node runs the alternative it carries instead (an Agg
 *	  over PostgreSQL's own cheapest plan of the joins: alternative_path),
 *	  as it does where a row holds a value the device cannot evaluate, or
 *	  two groups collide under a hashed group key (star_may_escape);
 *	  the right side of a semi join of the fact table (IN, EXISTS) is a
 *	  dimension that need not be unique at all (semi_joins);
 *	- every grouping expression reads one dimension only (it is then
 *	  evaluated on the CPU while the dimension is read, and becomes a small
 *	  code), or is one the device evaluates over the fact row and dimension
 *	  values and can pack exactly (integers, dates, short text, floats:
 *	  a group of both 0 and -0 runs the alternative, star_exec.c);
 *	- every aggregate is count, sum, avg, min or max (star_compile.c says
 *	  which) of an expression the device evaluates, with FILTER allowed;
 *	- every other join clause (across dimensions, or over the fact table
 *	  and a dimension) is one the device evaluates after the probes, and
 *	  all but one of them can raise no error (join_clauses);
 *	- nothing is volatile, nothing needs a PlaceHolderVar or a sub-plan.
 * In the fact side's expressions, each largest part that reads one
 * dimension only (p_type LIKE 'PROMO%', ps_supplycost) becomes a payload
 * value, computed on the CPU per dimension row and looked up with the row.
 * The fact table's quals the device cannot evaluate stay in its Seq Scan,
 * on the CPU, whose rows then go to the device instead of its pages.
 *
 * Both a serial path and, with the GPU service running, a parallel one
 * (a Gather over a parallel-aware GpuStarAgg whose processes share the
 * fact table's blocks and whose last process returns the groups) are
 * offered; the cost model below decides against PostgreSQL's own plans.
 *
 * COST MODEL
 *
 * The fact table is read as a Seq Scan reads it (seq_page_cost per page:
 * the I/O is the same), but no tuple passes through the executor: a page
 * costs STAR_PAGE_COST for pinning and shipping it, and only the rows of
 * pages the device does not read whole (those not all-visible of a table
 * that is not WAL-logged: shipped_fraction) cost a tuple's CPU (their
 * visibility is checked and they are copied on the CPU).  Quals left on the
 * CPU make every row go through the Seq Scan, as PostgreSQL's would.  The
 * dimensions are read whole (by one process, or in parallel each process its
 * share of one with a partial plan, at that plan's cost, which charges its
 * rows' cpu_tuple_cost), each row converted (its key, a dictionary lookup,
 * its payload values: two cpu_operator_cost, 30 to 56 ns measured where a
 * tuple's cpu_tuple_cost is about 100), a cost per grouping column and per
 * payload value, and each row costs STAR_DIM_ROW_COST on its way to the device.  The device's own
 * work is STAR_ROW_COST a row.  In parallel the page and row terms are
 * divided among the processes as cost_seqscan divides its CPU.  The groups cross
 * no tuple queue where the leader takes part (it returns them), so the
 * Gather above a parallel star charges nothing per group then.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/plancat.h"
#include "optimizer/planmain.h"
#include "optimizer/planner.h"
#include "optimizer/prep.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parse_clause.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "gpuhash.h"
#include "keys.h"
#include "scantuple.h"
#include "service.h"
#include "star.h"

#define STAR_PAGE_COST		0.1		/* pinning and shipping a page, per page */
#define STAR_ROW_COST		0.0002	/* the device's work per fact row */
#define STAR_STARTUP_COST	200.0	/* the star's setup, in cpu_operator_cost */
/*
 * a dimension row's way to the device once its plan has made it: converted,
 * published by the process that read it, merged, copied to the GPU service
 * and into the device's table.  Measured on an H200 with 8 workers: 45 to
 * 67 ns a row (TPC-H's orders, 7.5 million rows, 0.5 s after their scan),
 * against the 100 ns or so of a tuple's cpu_tuple_cost in the same plans.
 * A star over a dimension of ten million rows measured as fast as the
 * fused GpuHashAgg that joins the same rows (100M fact rows: 0.65 s both),
 * or far faster with groups from the dimension (0.8 s against 3.8).
 */
#define STAR_DIM_ROW_COST	0.005

/* what the analysis of a query found: the path's custom_private, by position */
#define SP_FACT_RTI		0
#define SP_DEV_QUALS	1		/* rewritten */
#define SP_CPU_QUALS	2		/* RestrictInfos */
#define SP_DIMS			3		/* per dimension: StarDimPlan list below */
#define SP_GROUPS		4
#define SP_GROUPTYPES	5
#define SP_AGGS			6
#define SP_PAYLOADS		7
#define SP_GROUP_EXPRS	8
#define SP_AGGREFS		9
#define SP_HAVING		10
#define SP_QUALS_SHOWN	11		/* the device quals as written, for EXPLAIN */
#define SP_GROUP_EQ		12		/* per grouping column: (eqop, collation) */
#define SP_PARALLEL		13
#define SP_ALT			14		/* Integer: 1 if the path's last input is the alternative */
#define SP_JOIN_QUALS	15		/* rewritten */
#define SP_JOIN_SHOWN	16		/* as written, for EXPLAIN */
#define SP_FILTERS		17		/* per dimension: (the one whose keys filter its rows, or -1;
								 * the column they check: dim_filters) */
#define SP_COUNT		18

/* a dimension at plan time: (factkey rewritten, key expr, group exprs, payload exprs, name, clause) */
#define SD_FACTKEY		0
#define SD_KEYEXPR		1
#define SD_GROUPS		2
#define SD_PAYLOAD		3
#define SD_NAME			4
#define SD_CLAUSE		5
#define SD_KEYTYPE		6
#define SD_UNIQUENESS	7		/* Integer: STAR_DIM_UNIQUE, _CHECK or _SEMI (star.h) */
#define SD_JOIN			8		/* Integer: GH_PROBE_INNER, _LEFT or _ANTI (engine.h) */
#define SD_NULL_ROW		9		/* List: a LEFT JOIN's, each grouping column's Const where it
								 * finds no row (STAR_DIM_NULL_ROW) */

static create_upper_paths_hook_type prev_upper_paths_hook = NULL;

static Plan *plan_star(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					   List *tlist, List *clauses, List *custom_plans);

static CustomPathMethods star_path_methods = {
	.CustomName = GPUHASH_STAR_NAME,
	.PlanCustomPath = plan_star,
};

CustomScanMethods gpuhash_star_scan_methods = {
	.CustomName = GPUHASH_STAR_NAME,
	.CreateCustomScanState = gpuhash_star_create_state,
};

/* the analysis in progress */
typedef struct StarPlan
{
	PlannerInfo *root;
	Index		fact;			/* the fact table's range table index */
	RelOptInfo *factrel;
	TupleDesc	factdesc;
	List	   *leaves;			/* a partitioned fact table's partitions (star_fact.c) */
	double		fact_pages;		/* the table's, or its partitions' summed */
	double		fact_tuples;
	double		fact_shipped;	/* the fraction of its pages read whole (shipped_fraction) */
	int			ndims;
	Relids	   *comp;			/* each dimension's relations */
	RelOptInfo **comprel;
	List	  **payload;		/* each dimension's payload expressions */
	List	   *payload_info;	/* per payload value: (dim, col, type, typmod) */
	bool	   *semi;			/* each dimension: the right side of a semi join */
	bool	   *left;			/* ... or of a LEFT JOIN of the fact table */
	bool	   *anti;			/* ... or of an anti join (also semi: no columns) */
	bool		split;			/* a snowflake's relations each a dimension (find_components) */
	int		   *parent;			/* each dimension: the one whose row gives its key, or -1
								 * (the fact table's) */
	List	  **key_ecs;		/* ... the equivalence classes of its key, where not -1 */
	bool		ok;
	const char *why;
} StarPlan;

/* ---- the shape of the query ---- */

/*
 * Is a column of anti join sj's right side read above sj?  An anti join made
 * of a LEFT JOIN whose right side the WHERE clause wants NULL
 * (reduce_outer_joins) may still show that side's columns, all NULL; the
 * star's anti joins carry none.  (A semi join's right side is never read
 * above it, though the planner may need its columns to make it unique.)
 */
static bool
right_side_read_above(PlannerInfo *root, SpecialJoinInfo *sj)
{
	Relids		join = bms_union(sj->min_lefthand, sj->syn_righthand);
	int			x = -1;

	while ((x = bms_next_member(sj->syn_righthand, x)) >= 0)
	{
		RelOptInfo *rel = root->simple_rel_array[x];

		if (rel == NULL || rel->reloptkind != RELOPT_BASEREL)
			continue;
		for (int a = rel->min_attr; a <= rel->max_attr; a++)
			if (!bms_is_subset(rel->attr_needed[a - rel->min_attr], join))
				return true;
	}
	return false;
}

/*
 * The query's special joins, all semi joins (IN and EXISTS), anti joins
 * (NOT EXISTS) or LEFT JOINs of the fact table alone with one dimension (a
 * component of relations the query's other relations do not join).  A semi
 * or anti join's dimension need not be unique (star_exec.c keeps one row of
 * each key; nothing of it is read above the join; the anti join keeps the
 * fact rows it does not find, GH_PROBE_ANTI); a LEFT JOIN's keeps the fact
 * rows it does not join, its values NULL (GH_PROBE_LEFT).  False for any
 * other outer, semi or anti join.
 */
static bool
special_joins(StarPlan *sp)
{
	ListCell   *lc;

	sp->semi = palloc0(sizeof(bool) * Max(sp->ndims, 1));
	sp->left = palloc0(sizeof(bool) * Max(sp->ndims, 1));
	sp->anti = palloc0(sizeof(bool) * Max(sp->ndims, 1));
	foreach(lc, sp->root->join_info_list)
	{
		SpecialJoinInfo *sj = lfirst_node(SpecialJoinInfo, lc);
		int			d;

		if ((sj->jointype != JOIN_SEMI && sj->jointype != JOIN_LEFT &&
			 sj->jointype != JOIN_ANTI) ||
			!bms_equal(sj->min_lefthand, bms_make_singleton(sp->fact)))
			return false;
		for (d = 0; d < sp->ndims; d++)
			if (bms_equal(sp->comp[d], sj->syn_righthand))
				break;
		if (d == sp->ndims)
			return false;
		if (sj->jointype == JOIN_ANTI && right_side_read_above(sp->root, sj))
			return false;
		sp->semi[d] = sj->jointype == JOIN_SEMI || sj->jointype == JOIN_ANTI;
		sp->left[d] = sj->jointype == JOIN_LEFT;
		sp->anti[d] = sj->jointype == JOIN_ANTI;
	}
	return true;
}

/* the fact table: the largest base relation, if it is one the pipeline can read */
static Index
choose_fact(PlannerInfo *root, Relids relids)
{
	int			x = -1;
	Index		best = 0;
	double		best_pages = -1;

	while ((x = bms_next_member(relids, x)) >= 0)
	{
		RelOptInfo *rel = root->simple_rel_array[x];
		double		pages;

		if (rel == NULL || rel->reloptkind != RELOPT_BASEREL)
			return 0;
		pages = star_rel_pages(root, x);
		if (pages > best_pages)
		{
			best_pages = pages;
			best = x;
		}
	}
	return best;
}

static bool
fact_readable(PlannerInfo *root, Index fact)
{
	RangeTblEntry *rte = root->simple_rte_array[fact];
	RelOptInfo *rel = root->simple_rel_array[fact];
	ListCell   *lc;

	if (rte->rtekind != RTE_RELATION || rte->tablesample != NULL ||
		rel->rtekind != RTE_RELATION)
		return false;
	/* a table, or a partitioned table or inheritance tree (star_fact.c) */
	if (rte->inh ? (rte->relkind != RELKIND_RELATION &&
					rte->relkind != RELKIND_PARTITIONED_TABLE) :
		((rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW) ||
		 rel->part_scheme != NULL))
		return false;
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		/* row security's quals must run first; constant quals need a gating node */
		if (ri->security_level > 0 || ri->pseudoconstant)
			return false;
	}
	return true;
}

/*
 * The dimensions: the relations other than the fact table in components.
 * The right side of a semi join of the fact table is one, whole.  Every
 * other relation the fact table joins by equalities (orders, supplier)
 * starts one, and the rest join them one at a time, each a component on
 * the equalities between them if it is unique on those (a snowflake:
 * orders, then its customer, then the customer's nation and its region),
 * so that each component has at most one row per key of its first
 * relation.  A relation that joins no component so is not in a star.  The
 * other join clauses between components, or between one and the fact table
 * (the customer's nation equal to the supplier's; an OR of conditions on
 * lineitem and part), are the device's once every dimension is looked up
 * (join_quals).
 *
 * Split (sp->split), each relation of a snowflake is a dimension of its
 * own, looked up by a column of the one it joins (its parent, an earlier
 * dimension, sp->parent): the device looks up the orders of a fact row,
 * then the customer of the order.  No join of the snowflake is made on the
 * CPU, and a large relation of it (orders) is read from its pages as any
 * dimension is.
 */
static bool
find_components(StarPlan *sp, Relids all)
{
	PlannerInfo *root = sp->root;
	Relids		others = bms_del_member(bms_copy(all), sp->fact);
	Relids		fact = bms_make_singleton(sp->fact);
	Relids		placed = NULL;
	ListCell   *lc;
	int			nsemi;
	int			x = -1;
	bool		progress = true;

	foreach(lc, root->eq_classes)
		if (((EquivalenceClass *) lfirst(lc))->ec_has_volatile)
			return false;
	sp->ndims = 0;
	sp->comp = palloc0(sizeof(Relids) * Max(bms_num_members(others), 1));
	sp->parent = palloc(sizeof(int) * Max(bms_num_members(others), 1));
	sp->key_ecs = palloc0(sizeof(List *) * Max(bms_num_members(others), 1));
	for (int d = 0; d < Max(bms_num_members(others), 1); d++)
		sp->parent[d] = -1;
	foreach(lc, root->join_info_list)
	{
		SpecialJoinInfo *sj = lfirst_node(SpecialJoinInfo, lc);

		if ((sj->jointype != JOIN_SEMI && sj->jointype != JOIN_LEFT &&
			 sj->jointype != JOIN_ANTI) ||
			!bms_is_subset(sj->syn_righthand, others) ||
			bms_overlap(sj->syn_righthand, placed))
			return false;
		sp->comp[sp->ndims++] = bms_copy(sj->syn_righthand);
		placed = bms_add_members(placed, sj->syn_righthand);
	}
	nsemi = sp->ndims;
	while ((x = bms_next_member(others, x)) >= 0)
	{
		if (!bms_is_member(x, placed) &&
			InnerJoinImpliedEqualities(root, bms_add_member(bms_copy(fact), x), fact,
									   root->simple_rel_array[x]) != NIL)
		{
			sp->comp[sp->ndims++] = bms_make_singleton(x);
			placed = bms_add_member(placed, x);
		}
	}
	while (progress && !bms_is_subset(others, placed))
	{
		progress = false;
		x = -1;
		while ((x = bms_next_member(others, x)) >= 0)
		{
			RelOptInfo *rel = root->simple_rel_array[x];

			if (bms_is_member(x, placed))
				continue;
			for (int d = nsemi; d < sp->ndims; d++)
			{
				Relids		both = bms_add_member(bms_copy(sp->comp[d]), x);
				List	   *joins = InnerJoinImpliedEqualities(root, both, sp->comp[d], rel);

				if (joins != NIL &&
					innerrel_is_unique(root, both, sp->comp[d], rel, JOIN_INNER, joins, false))
				{
					if (sp->split)
					{
						sp->parent[sp->ndims] = d;
						sp->comp[sp->ndims++] = bms_make_singleton(x);
					}
					else
						sp->comp[d] = both;
					placed = bms_add_member(placed, x);
					progress = true;
					break;
				}
			}
		}
	}
	return bms_is_subset(others, placed) && sp->ndims <= GH_PROG_MAX_DIMS;
}

/*
 * What dimension d is joined to: the fact table, or its parent dimension's
 * relation (find_components, split)
 */
static Relids
outer_of(StarPlan *sp, int d)
{
	return sp->parent[d] < 0 ? bms_make_singleton(sp->fact) : sp->comp[sp->parent[d]];
}

/*
 * Is ri a clause of the ON condition of dimension d's LEFT or anti join
 * (one that is not pushed down, over the fact table and d)?  Those with d
 * alone its plan applies; the others decide which rows join, and must be
 * its key.
 */
static bool
on_clause(StarPlan *sp, int d, RestrictInfo *ri)
{
	return (sp->left[d] || sp->anti[d]) && !ri->is_pushed_down &&
		bms_overlap(ri->required_relids, sp->comp[d]) &&
		bms_is_member(sp->fact, ri->required_relids);
}

/*
 * Has ec a member over the fact table alone?  A dimension with a member in
 * such a class is joined to the fact table by it (its key: a dimension has
 * no other equality with the fact table: dimension_join), so the keys hold every
 * equality of the class between a dimension and what is joined before it.
 */
static bool
class_of_a_key(StarPlan *sp, EquivalenceClass *ec)
{
	ListCell   *lc;

	foreach(lc, ec->ec_members)
	{
		EquivalenceMember *em = lfirst(lc);
		Relids		relids = RelidsWithoutOuterJoins(sp->root, em->em_relids);

		if (!em->em_is_child && !em->em_is_const && bms_is_member(sp->fact, relids) &&
			bms_membership(relids) == BMS_SINGLETON)
			return true;
	}
	return false;
}

/*
 * The join clauses no dimension's plan applies, as RestrictInfos: the
 * equalities of equivalence classes PostgreSQL checks as it joins the
 * dimensions to the fact table one after another, but those of a class with
 * a member over the fact table alone (the dimensions' keys hold those
 * already: class_of_a_key).  An equality of a class whose member over the
 * fact table reads a dimension too (abs(x.b) + f.i = y.v) is kept; one with
 * a member over more than one part of the star (lo_orderdate = d.x + e.y)
 * is of no class (parent_ec NULL: made for the join that first has all its
 * relations) and is kept.  Then the other join clauses not within one
 * dimension.  False where one touches a semi join's dimension: the semi join
 * keeps a fact row if any of that dimension's rows passes it, the star looks
 * one row up.
 */
static bool
join_clauses(StarPlan *sp, Relids all, List **clauses)
{
	PlannerInfo *root = sp->root;
	Relids		before = bms_make_singleton(sp->fact);
	List	   *result = NIL;
	ListCell   *lc;
	int			x = -1;

	for (int d = 0; d < sp->ndims; d++)
	{
		foreach(lc, InnerJoinImpliedEqualities(root, bms_union(before, sp->comp[d]), before,
											   sp->comprel[d]))
		{
			RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

			/*
			 * a split dimension's key holds the equalities of its classes
			 * between it and what is joined before it, as a fact key does
			 */
			if (ri->parent_ec == NULL ||
				(!class_of_a_key(sp, ri->parent_ec) &&
				 !list_member_ptr(sp->key_ecs[d], ri->parent_ec)))
				result = lappend(result, ri);
		}
		before = bms_add_members(before, sp->comp[d]);
	}
	while ((x = bms_next_member(all, x)) >= 0)
		foreach(lc, root->simple_rel_array[x]->joininfo)
		{
			RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
			int			d;

			for (d = 0; d < sp->ndims; d++)
				if (bms_is_subset(ri->required_relids, sp->comp[d]) ||
					on_clause(sp, d, ri))
					break;
			if (d == sp->ndims)
				result = list_append_unique_ptr(result, ri);
		}
	foreach(lc, result)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		for (int d = 0; d < sp->ndims; d++)
			if (sp->semi[d] && bms_overlap(ri->required_relids, sp->comp[d]))
				return false;
	}
	*clauses = result;
	return true;
}

/* the dimension whose relations hold all of relids (outer joins aside), or -1 */
static int
dim_of(StarPlan *sp, Relids relids)
{
	relids = RelidsWithoutOuterJoins(sp->root, relids);
	if (bms_is_empty(relids) || bms_is_member(sp->fact, relids))
		return -1;
	for (int d = 0; d < sp->ndims; d++)
		if (bms_is_subset(relids, sp->comp[d]))
			return d;
	return -1;
}

/*
 * The columns a query reads ungrouped, outside aggregates, because a primary
 * key it groups by determines them (the parser checked each and recorded the
 * key in constraintDeps): its target list and HAVING walked as the parser's
 * check_ungrouped_columns walks them, stopping at grouped expressions and
 * aggregates.
 */
typedef struct DepsWalk
{
	List	   *grouped;		/* the GROUP BY's expressions, as written */
	List	   *vars;			/* the columns found */
} DepsWalk;

static bool
dependent_walker(Node *node, DepsWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref) || IsA(node, GroupingFunc) || list_member(w->grouped, node))
		return false;
	if (IsA(node, Var))
	{
		if (((Var *) node)->varlevelsup == 0)
			w->vars = list_append_unique(w->vars, node);
		return false;
	}
	return expression_tree_walker(node, dependent_walker, w);
}

static List *
dependent_columns(Query *parse)
{
	DepsWalk	w = {get_sortgrouplist_exprs(parse->groupClause, parse->targetList), NIL};
	ListCell   *lc;

	foreach(lc, parse->targetList)
		(void) dependent_walker((Node *) lfirst_node(TargetEntry, lc)->expr, &w);
	(void) dependent_walker(parse->havingQual, &w);
	return w.vars;
}

/*
 * Whether expr, a column grouped by again because a primary key in the
 * GROUP BY determines it, may be carried in dimension d's dictionary rather
 * than compared (agg_dict.c): a column of a table whose every primary key
 * column is among the GROUP BY's first ngrouped expressions, read from the
 * same dimension (so compared in the same dictionary).  Rows equal in the
 * key are one row of that table, so equal in the column too; comparing
 * the key alone spares the dictionary the hashing and comparing of what
 * is often most of a group's bytes (a customer's name, address, comment).
 */
static bool
carried_column(StarPlan *sp, Node *expr, List *group_exprs, int ngrouped, int d)
{
	Var		   *var = (Var *) expr;
	RangeTblEntry *rte;
	Bitmapset  *pk;
	Oid			constraint;

	if (!IsA(expr, Var) || var->varlevelsup != 0 || var->varattno <= 0 || sp->left[d])
		return false;
	rte = planner_rt_fetch(var->varno, sp->root);
	if (rte->rtekind != RTE_RELATION)
		return false;
	pk = get_primary_key_attnos(rte->relid, false, &constraint);
	if (pk == NULL)
		return false;
	for (int g = 0; g < ngrouped; g++)
	{
		Var		   *k = (Var *) list_nth(group_exprs, g);

		if (IsA(k, Var) && k->varno == var->varno && k->varlevelsup == 0 &&
			dim_of(sp, pull_varnos(sp->root, (Node *) k)) == d)
			pk = bms_del_member(pk, k->varattno - FirstLowInvalidHeapAttributeNumber);
	}
	return bms_is_empty(pk);
}

/*
 * A LEFT JOIN's dimension's grouping expression where the join finds no
 * row: its Vars NULL, and its placeholders too (they are computed below the
 * join, so they go NULL with the row, whatever they hold).
 */
static Node *
null_row_mutator(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) || IsA(node, PlaceHolderVar))
		return (Node *) makeNullConst(exprType(node), exprTypmod(node), exprCollation(node));
	return expression_tree_mutator(node, null_row_mutator, context);
}

/* Its value there, folded to a constant; NULL where it does not fold. */
static Const *
null_row_value(PlannerInfo *root, Node *expr)
{
	Node	   *folded = eval_const_expressions(root, null_row_mutator(copyObject(expr), NULL));

	return IsA(folded, Const) ? (Const *) folded : NULL;
}

/* ---- rewriting the fact side's expressions (star.h) ---- */

static bool device_ok(StarPlan *sp, Node *rewritten);
static Node *left_part(StarPlan *sp, int d, Node *node);

/* node, an expression of dimension d alone, as a payload value (INNER_VAR) */
static Node *
payload_var(StarPlan *sp, int d, Node *node)
{
	ListCell   *lc;
	int			col = 0;

	foreach(lc, sp->payload[d])
	{
		if (equal(lfirst(lc), node))
			break;
		col++;
	}
	if (lc == NULL)
	{
		sp->payload[d] = lappend(sp->payload[d], node);
		sp->payload_info = lappend(sp->payload_info,
								   list_make4_int(d, col, exprType(node), exprTypmod(node)));
	}
	for (int p = 0; p < list_length(sp->payload_info); p++)
	{
		List	   *pi = list_nth(sp->payload_info, p);

		if (linitial_int(pi) == d && lsecond_int(pi) == col)
			return (Node *) makeVar(INNER_VAR, p + 1, exprType(node), exprTypmod(node),
									exprCollation(node), 0);
	}
	elog(ERROR, "gpuhash: a GpuStarAgg payload was not listed");
	return NULL;
}

static Node *
rewrite_mutator(Node *node, StarPlan *sp)
{
	Relids		varnos;
	int			d;

	if (node == NULL || !sp->ok)
		return node;
	if (IsA(node, CaseWhen) || IsA(node, List))
		return expression_tree_mutator(node, rewrite_mutator, sp);	/* not expressions themselves */
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		if (var->varlevelsup == 0 && var->varno == sp->fact)
			return (Node *) makeVar(OUTER_VAR, var->varattno, var->vartype, var->vartypmod,
									var->varcollid, 0);
	}
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, Aggref) ||
		IsA(node, SubLink) || IsA(node, SubPlan) || IsA(node, WindowFunc) ||
		IsA(node, GroupingFunc))
	{
		varnos = pull_varnos(sp->root, node);
		if (!IsA(node, Var) || (d = dim_of(sp, varnos)) < 0)
		{
			sp->ok = false;
			sp->why = "an expression the star pipeline cannot take";
			return node;
		}
	}
	varnos = pull_varnos(sp->root, node);
	if ((d = dim_of(sp, varnos)) >= 0 && !gpuhash_expr_may_fail(node))
	{
		/*
		 * The largest part that reads dimension d alone and cannot fail: a
		 * payload value, which d's plan computes for every row it returns,
		 * joined or not, where PostgreSQL computes it for the joined rows
		 * alone.  A part that may fail is evaluated on the device, its
		 * parts payloads, or keeps the query off the pipeline.  Of a LEFT
		 * JOIN's dimension, a strict part, NULL as the device loads it where
		 * the join finds no row (GH_PROBE_LEFT); other parts: left_part.
		 */
		if (!sp->left[d] || !contain_nonstrict_functions(node))
			return payload_var(sp, d, node);
		return left_part(sp, d, node);
	}
	return expression_tree_mutator(node, rewrite_mutator, sp);
}

/*
 * A part of a LEFT JOIN's dimension d alone, not strict, that cannot fail:
 * evaluated on the device over its strict parts (payloads) where the device
 * can (IS NULL, COALESCE, CASE); else, where its value over NULLs folds to
 * a constant c (null_row_value), a payload that d's plan computes, and c
 * where the join finds no row: CASE WHEN <present> IS NULL THEN c ELSE
 * <payload> END, present a payload of d that is true in every row it has
 * (`d.name IS NULL OR d.name LIKE 'a%'`, of text the device does not read).
 */
static Node *
left_part(StarPlan *sp, int d, Node *node)
{
	int			npayload = list_length(sp->payload[d]);
	int			ninfo = list_length(sp->payload_info);
	const char *why = sp->why;
	Node	   *parts = expression_tree_mutator(node, rewrite_mutator, sp);
	Const	   *c;
	CaseExpr   *ce;
	CaseWhen   *cw;
	NullTest   *nt;

	if ((sp->ok && device_ok(sp, parts)) || (c = null_row_value(sp->root, node)) == NULL)
		return parts;
	/* the parts made payloads above go unused */
	sp->payload[d] = list_truncate(sp->payload[d], npayload);
	sp->payload_info = list_truncate(sp->payload_info, ninfo);
	sp->ok = true;
	sp->why = why;
	if (c->constisnull)
		return payload_var(sp, d, node);	/* NULL as loaded where it finds no row */

	nt = makeNode(NullTest);
	nt->arg = (Expr *) payload_var(sp, d, (Node *) makeBoolConst(true, false));
	nt->nulltesttype = IS_NULL;
	nt->location = -1;
	cw = makeNode(CaseWhen);
	cw->expr = (Expr *) nt;
	cw->result = (Expr *) c;
	cw->location = -1;
	ce = makeNode(CaseExpr);
	ce->casetype = exprType(node);
	ce->casecollid = exprCollation(node);
	ce->args = list_make1(cw);
	ce->defresult = (Expr *) payload_var(sp, d, node);
	ce->location = -1;
	return (Node *) ce;
}

static Node *
rewrite(StarPlan *sp, Node *node)
{
	return rewrite_mutator(node, sp);
}

/* a compile input describing the plan-time state, to ask star_expr_ok */
static StarCompileInput *
plan_input(StarPlan *sp)
{
	StarCompileInput *in = palloc0(sizeof(StarCompileInput));

	in->fact.desc = sp->factdesc;
	for (int d = 0; d < sp->ndims; d++)
	{
		if (sp->left[d])
			in->left_dims |= UINT64_C(1) << d;
		if (sp->anti[d])
			in->anti_dims |= UINT64_C(1) << d;
	}
	in->npayloads = list_length(sp->payload_info);
	in->payloads = palloc0(sizeof(StarPayload) * Max(in->npayloads, 1));
	for (int p = 0; p < in->npayloads; p++)
	{
		List	   *pi = list_nth(sp->payload_info, p);

		in->payloads[p].dim = linitial_int(pi);
		in->payloads[p].col = lsecond_int(pi);
		in->payloads[p].type = (Oid) lthird_int(pi);
		in->payloads[p].typmod = lfourth_int(pi);
		star_payload_numeric(&in->payloads[p], in->payloads[p].type, in->payloads[p].typmod);
	}
	return in;
}

static bool
device_ok(StarPlan *sp, Node *rewritten)
{
	const char *why = NULL;

	if (!sp->ok)
		return false;
	if (!star_expr_ok(rewritten, plan_input(sp), &why))
	{
		sp->why = why;
		return false;
	}
	return true;
}

/* ---- the dimensions' joins ---- */

static bool
exact_key_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == DATEOID || t == OIDOID ||
		t == TIMESTAMPOID || t == TIMESTAMPTZOID || t == TIMEOID;
}

/*
 * Is dimension d unique on r, the expression the fact table joins it by
 * (clauses)?  A single relation unique on it (a primary key, a unique index:
 * innerrel_is_unique); or a snowflake: the relation r reads unique on it
 * (its other relations each joined the dimension on a key it is unique on
 * as find_components built it: customer to its nation, the nation to its
 * region), so the join of them all has at most one row per value of r.
 */
static bool
dimension_unique(StarPlan *sp, int d, Node *r, List *clauses)
{
	PlannerInfo *root = sp->root;
	Relids		fact = outer_of(sp, d);
	Relids		rrels = pull_varnos(root, r);

	if (bms_membership(sp->comp[d]) == BMS_SINGLETON)
		return innerrel_is_unique(root, bms_union(fact, sp->comp[d]), fact, sp->comprel[d],
								  JOIN_INNER, clauses, false);
	return bms_membership(rrels) == BMS_SINGLETON &&
		innerrel_is_unique(root, bms_union(fact, rrels), fact,
						   root->simple_rel_array[bms_singleton_member(rrels)], JOIN_INNER,
						   clauses, false);
}

/*
 * Is dimension d, not provably unique on r, unique by its statistics: one
 * table whose column r has as many distinct values as the table has rows
 * (ANALYZE found no value twice), or that has no statistics yet (a table
 * just loaded) and a tenth of the fact table's rows at most?  The executor
 * then checks the rows it reads (star_exec.c) and runs the alternative
 * plan where two share a key; statistics that show a value twice keep the
 * star off a join it would always give up.
 */
static bool
unique_by_statistics(StarPlan *sp, int d, Node *r)
{
	RelOptInfo *rel = sp->comprel[d];
	VariableStatData vardata;
	bool		isdefault,
				stats;
	double		nd,
				nullfrac = 0.0;

	if (bms_membership(sp->comp[d]) != BMS_SINGLETON || rel->rtekind != RTE_RELATION ||
		!IsA(r, Var) || rel->tuples <= 0)
		return false;
	examine_variable(sp->root, r, 0, &vardata);
	nd = get_variable_numdistinct(&vardata, &isdefault);
	stats = HeapTupleIsValid(vardata.statsTuple);
	if (stats)
		nullfrac = ((Form_pg_statistic) GETSTRUCT(vardata.statsTuple))->stanullfrac;
	ReleaseVariableStats(vardata);
	/*
	 * Without statistics, only a table much smaller than the fact table (as
	 * dimensions are): the check of a large one that holds a key twice after
	 * all would cost a read of it on top of the alternative's.  (NULL keys
	 * join nothing.)
	 */
	if (!stats)
		return rel->tuples * 10 <= sp->fact_tuples;
	return !isdefault && nd >= rel->tuples * (1.0 - nullfrac) * 0.999;
}

/* int2 or int4: two of them make one 64-bit key */
static bool
narrow_key_type(Oid t)
{
	return t == INT2OID || t == INT4OID;
}

/* expr as an int8 */
static Node *
as_int8(Node *expr)
{
	Oid			t = exprType(expr);

	if (t == INT8OID)
		return expr;
	return (Node *) makeFuncExpr(t == INT2OID ? F_INT8_INT2 : F_INT8_INT4, INT8OID,
								 list_make1(expr), InvalidOid, InvalidOid,
								 COERCE_IMPLICIT_CAST);
}

/* a op b of int8s, op a built-in operator ("*", "+") */
static Node *
int8_op(const char *op, Node *a, Node *b)
{
	Oid			opno = OpernameGetOprid(list_make2(makeString("pg_catalog"), makeString((char *) op)),
										INT8OID, INT8OID);
	OpExpr	   *e;

	if (!OidIsValid(opno))
		elog(ERROR, "gpuhash: no operator int8 %s int8", op);
	e = (OpExpr *) make_opclause(opno, INT8OID, false, (Expr *) a, (Expr *) b,
								 InvalidOid, InvalidOid);
	set_opfuncid(e);
	return (Node *) e;
}

/*
 * Two columns of at most 32 bits as one 64-bit key, the same on either side
 * of the join: hi * 2^32 + (lo + 2^31), exact and never overflowing, NULL if
 * either is NULL; equal keys are equal pairs.
 */
static Node *
pair_key(Node *hi, Node *lo)
{
	return int8_op("+",
				   int8_op("*", as_int8(hi),
						   (Node *) makeConst(INT8OID, -1, InvalidOid, 8,
											  Int64GetDatum(INT64CONST(4294967296)), false,
											  FLOAT8PASSBYVAL)),
				   int8_op("+", as_int8(lo),
						   (Node *) makeConst(INT8OID, -1, InvalidOid, 8,
											  Int64GetDatum(INT64CONST(2147483648)), false,
											  FLOAT8PASSBYVAL)));
}

/*
 * One join clause of dimension d, f = r: its fact column (of a split
 * dimension: its parent's column) and its dimension side (reading the
 * dimension: a LEFT JOIN's ON clause need be no equivalence class's), which
 * must be of exact key types of one family, compared by a hashable
 * equality; false if not.
 */
static bool
key_clause(StarPlan *sp, int d, RestrictInfo *ri, Var **factvar, Node **dimexpr)
{
	PlannerInfo *root = sp->root;
	OpExpr	   *op = (OpExpr *) ri->clause;
	Relids		outer = outer_of(sp, d);
	Node	   *l,
			   *r;

	if (!IsA(op, OpExpr) || list_length(op->args) != 2)
		return false;
	l = linitial(op->args);
	r = lsecond(op->args);
	if (bms_overlap(outer, pull_varnos(root, r)))
	{
		Node	   *t = l;

		l = r;
		r = t;
	}
	if (!IsA(l, Var) || !bms_is_member(((Var *) l)->varno, outer) ||
		((Var *) l)->varlevelsup != 0 || bms_overlap(outer, pull_varnos(root, r)) ||
		bms_is_empty(pull_varnos(root, r)) || !op_hashjoinable(op->opno, exprType(l)) ||
		!exact_key_type(exprType(l)) || !exact_key_type(exprType(r)) ||
		(exprType(l) != exprType(r) &&
		 !(gpuhash_exact_family(exprType(l)) == GHX_INTEGER &&
		   gpuhash_exact_family(exprType(r)) == GHX_INTEGER)))
		return false;
	*factvar = (Var *) l;
	*dimexpr = r;
	return true;
}

/*
 * The clause of ri as EXPLAIN shows it: the fact table's column (a split
 * dimension's parent's) first, as the planner of every release would write
 * it (the side an equivalence class puts first differs between releases).
 */
static Expr *
fact_side_first(StarPlan *sp, int d, RestrictInfo *ri)
{
	OpExpr	   *op = (OpExpr *) ri->clause;

	if (bms_overlap(outer_of(sp, d), pull_varnos(sp->root, linitial(op->args))) ||
		!OidIsValid(get_commutator(op->opno)))
		return ri->clause;
	op = copyObject(op);
	CommuteOpExpr(op);
	return (Expr *) op;
}

/*
 * Dimension d's join: one equality of a fact column with an expression of
 * the dimension, or two of int2 or int4 columns (partsupp's (partkey,
 * suppkey)), on which the dimension is unique.  The clause (an AND of two),
 * the fact side and the dimension side (for two, each side's columns as one
 * int8: pair_key) and the fact side's type; false if it is not that.  A
 * dimension of one column that is unique by its statistics only is checked
 * (unique_by_statistics).  A split dimension is joined so to its parent
 * (find_components), whose columns then make the key.
 */
static bool
dimension_join(StarPlan *sp, int d, Expr **clause, Node **factkey, Node **dimexpr, Oid *keytype,
			   bool *checked)
{
	PlannerInfo *root = sp->root;
	Relids		outer = outer_of(sp, d);
	Relids		joinrelids = bms_union(sp->comp[d], outer);
	RelOptInfo *rel = bms_membership(sp->comp[d]) == BMS_SINGLETON ?
		root->simple_rel_array[bms_singleton_member(sp->comp[d])] :
		find_join_rel(root, sp->comp[d]);
	List	   *clauses;
	Var		   *f1,
			   *f2;
	Node	   *r1,
			   *r2;

	*checked = false;
	if (rel == NULL || rel->cheapest_total_path == NULL)
		return false;
	sp->comprel[d] = rel;
	if (sp->left[d] || sp->anti[d])
	{
		ListCell   *lc;

		/* a LEFT or anti join's ON clauses are no equivalence class's */
		clauses = NIL;
		foreach(lc, sp->factrel->joininfo)
			if (on_clause(sp, d, lfirst(lc)))
				clauses = lappend(clauses, lfirst(lc));
	}
	else
	{
		ListCell   *lc;

		/*
		 * an equality with a member over both ((f.a + d.b) = f.c), of no
		 * class, is a join clause (join_clauses), not a key
		 */
		clauses = NIL;
		foreach(lc, InnerJoinImpliedEqualities(root, joinrelids, outer, rel))
			if (lfirst_node(RestrictInfo, lc)->parent_ec != NULL)
				clauses = lappend(clauses, lfirst(lc));
		if (sp->parent[d] >= 0)
			foreach(lc, clauses)
				sp->key_ecs[d] = lappend(sp->key_ecs[d], lfirst_node(RestrictInfo, lc)->parent_ec);
	}
	if (list_length(clauses) == 1)
	{
		if (!key_clause(sp, d, linitial(clauses), &f1, &r1))
			return false;
		if (!sp->semi[d] && !dimension_unique(sp, d, r1, clauses))
		{
			if (!unique_by_statistics(sp, d, r1))
				return false;
			*checked = true;
		}
		*clause = fact_side_first(sp, d, linitial(clauses));
		*factkey = (Node *) f1;
		*dimexpr = r1;
		*keytype = exprType((Node *) f1);
		return true;
	}
	if (list_length(clauses) != 2 ||
		!key_clause(sp, d, linitial(clauses), &f1, &r1) ||
		!key_clause(sp, d, lsecond(clauses), &f2, &r2) ||
		!narrow_key_type(exprType((Node *) f1)) || !narrow_key_type(exprType(r1)) ||
		!narrow_key_type(exprType((Node *) f2)) || !narrow_key_type(exprType(r2)))
		return false;
	/* a fact row meets at most one row of the dimension */
	*dimexpr = pair_key(r1, r2);
	if (!sp->semi[d] && !dimension_unique(sp, d, *dimexpr, clauses))
		return false;
	*clause = make_andclause(list_make2(fact_side_first(sp, d, linitial(clauses)),
										fact_side_first(sp, d, lsecond(clauses))));
	*factkey = pair_key((Node *) f1, (Node *) f2);
	*keytype = INT8OID;
	return true;
}

/*
 * What GpuHashAgg reads from pages (agg_pages.c): a plain column, or a plain
 * column modulo a constant, of a type it takes as the engine's integers.
 * Floats are converted and numerics split into limbs on the CPU, and text
 * goes through the dictionary, so GpuHashAgg reads those through
 * PostgreSQL's scan, row by row, where the pipeline reads pages.
 */
static bool
plain_input(Node *node)
{
	OpExpr	   *op = (OpExpr *) node;
	Oid			type;

	if (node == NULL)
		return true;
	if (IsA(node, OpExpr) && list_length(op->args) == 2 &&
		IsA(linitial(op->args), Var) && IsA(lsecond(op->args), Const))
		node = linitial(op->args);
	if (!IsA(node, Var))
		return false;
	type = exprType(node);
	return gpuhash_key_bits(type) > 0 && type != FLOAT4OID && type != FLOAT8OID;
}

/* Are every grouping expression and aggregate argument plain (no FILTER)? */
static bool
plain_inputs(List *group_exprs, List *aggrefs)
{
	ListCell   *lc;

	foreach(lc, group_exprs)
		if (!plain_input(lfirst(lc)))
			return false;
	foreach(lc, aggrefs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);

		if (agg->aggfilter != NULL ||
			(!agg->aggstar && !plain_input((Node *) linitial_node(TargetEntry, agg->args)->expr)))
			return false;
	}
	return true;
}

/*
 * The most bytes a text grouping expression of the fact table is kept in on
 * the device (star_key_bits): substring()'s and left()'s of a constant count
 * of characters their most bytes; its declared length where that is at most
 * STAR_TEXT_CHUNKS chunks of 7 bytes; else (text, varchar without a length,
 * or a longer one) the longest value its statistics show (most common
 * values and histogram bounds), with a chunk to spare where the histogram
 * says values went unseen, or every chunk where it has none.  A longer
 * value escapes (GH_OP_TPACK), and the node runs its alternative.  0: its
 * statistics show longer values, which stay off the device.
 */
static int
text_key_bytes(PlannerInfo *root, Node *expr)
{
	Oid			type = exprType(expr);
	int32		typmod = exprTypmod(expr);
	int			most = 7 * STAR_TEXT_CHUNKS;
	VariableStatData vardata;
	int			longest = -1;
	bool		unseen = false;

	if (type != TEXTOID && type != VARCHAROID && type != BPCHAROID)
		return 0;

	/*
	 * a bpchar of no declared length keeps its trailing spaces, which its
	 * equality ignores: a group would show its first row's, which the
	 * device's trimmed chunks cannot tell
	 */
	if (type == BPCHAROID && typmod < (int32) VARHDRSZ)
		return 0;
	if (IsA(expr, FuncExpr))
	{
		/* substring() and left() of a constant count: that many characters at most */
		int			n = star_substr_count((FuncExpr *) expr);

		if (n >= 0 && n <= most / pg_database_encoding_max_length())
			return Max(n * pg_database_encoding_max_length(), 1);
	}
	if (typmod > (int32) VARHDRSZ &&
		(typmod - VARHDRSZ) * pg_database_encoding_max_length() <= most)
		return (typmod - VARHDRSZ) * pg_database_encoding_max_length();
	examine_variable(root, expr, 0, &vardata);
	if (HeapTupleIsValid(vardata.statsTuple))
	{
		static const int kinds[] = {STATISTIC_KIND_MCV, STATISTIC_KIND_HISTOGRAM};

		for (int k = 0; k < lengthof(kinds); k++)
		{
			AttStatsSlot sslot;

			if (!get_attstatsslot(&sslot, vardata.statsTuple, kinds[k], InvalidOid,
								  ATTSTATSSLOT_VALUES))
				continue;
			longest = Max(longest, 0);
			unseen |= kinds[k] == STATISTIC_KIND_HISTOGRAM;
			for (int i = 0; i < sslot.nvalues; i++)
			{
				char	   *v = DatumGetPointer(sslot.values[i]);
				int			len = VARATT_IS_EXTENDED(v) && !VARATT_IS_SHORT(v) ? most + 1 :
				VARSIZE_ANY_EXHDR(v);

				longest = Max(longest, len);
			}
			free_attstatsslot(&sslot);
		}
		/* values wider than analyze keeps (WIDTH_THRESHOLD) are in no slot */
		if (((Form_pg_statistic) GETSTRUCT(vardata.statsTuple))->stawidth > most)
			longest = most + 1;
	}
	ReleaseVariableStats(vardata);
	if (longest < 0)
		return most;
	if (longest > most)
		return 0;
	return Min(most, Max(longest, 1) + (unseen ? 7 : 0));
}

/*
 * min or max of a numeric of a declared scale and at most 18 digits (a
 * numeric(p, s) column, p <= 18): every value shows s digits, so the device
 * orders them as scaled 64-bit integers and the extreme comes back exactly
 * as PostgreSQL's numeric_smaller or numeric_larger gives it.  op: GHA_MIN
 * or GHA_MAX.
 */
static bool
numeric_minmax(Aggref *agg, GhaOp *op)
{
	char	   *name = gpuhash_agg_catalog_name(agg);
	Node	   *arg;

	if (name == NULL || agg->aggstar || list_length(agg->args) != 1)
		return false;
	arg = (Node *) linitial_node(TargetEntry, agg->args)->expr;
	if (exprType(arg) != NUMERICOID || star_numeric_minmax_scale(exprTypmod(arg)) < 0)
		return false;
	if (strcmp(name, "min") == 0)
		*op = GHA_MIN;
	else if (strcmp(name, "max") == 0)
		*op = GHA_MAX;
	else
		return false;
	return true;
}

/*
 * Is a star here forced (gpuhash.force)?  Not in a subquery that reads the
 * outer query's values (a correlated SubPlan, a LATERAL subquery): that one
 * runs again for every outer row, each time reading the whole fact table,
 * where PostgreSQL's plan may look up a few rows by an index (TPC-H's Q2:
 * 1,201 runs over partsupp); its cost decides.
 */
static bool
forced(PlannerInfo *root)
{
	return gpuhash_force && (root->parent_root == NULL || root->parent_root->plan_params == NIL);
}

/* ---- costs ---- */

/*
 * Which dimension's keys filter each dimension's rows as they are read, by
 * position, and which column of its rows they check: (source, -1: the key;
 * or a payload column), or (-1, -1): none.  Every fact row a star keeps
 * joins a row of every inner dimension, so a row of dimension d whose key
 * no row of a dimension e on the same fact key holds can meet no fact row
 * (unless e is LEFT- or anti-joined: not a source); nor can a row of a split
 * dimension d whose column that is the key of its child e (sp->parent) no
 * row of e holds (an order of a customer the query's customers leave out).
 * Where such an e is estimated smaller than d and is read before it -- by
 * the process that reads d, or in a parallel star by the leader before any
 * process reads its share of d -- d's rows are checked against a Bloom
 * filter of e's keys (star_dim_filter.c) and those that cannot join are left
 * out before they take their way to the device; at run time, only where e
 * as read holds at most half the rows estimated for d.  A child is a source
 * only where its plan is estimated to keep at most half its table's rows
 * (else the filter would leave out few).  The smallest such e is chosen, so
 * a source is always strictly smaller than what it filters.  The common
 * case: an IN (subquery) on a dimension's key, as in TPC-H's Q18, whose rows
 * the planner cannot estimate below its groups (a third of them with a
 * HAVING); and a split snowflake's filtered table (Q3's customers of one
 * segment, whose orders alone go on).
 */
static List *
dim_filters(StarPlan *sp, List *dims, List *dimpaths)
{
	List	   *filters = NIL;

	for (int d = 0; d < sp->ndims; d++)
	{
		Node	   *factkey = list_nth(list_nth(dims, d), SD_FACTKEY);
		double		best = sp->comprel[d]->rows;
		int			source = -1;
		int			col = -1;

		for (int e = 0; e < sp->ndims; e++)
		{
			RelOptInfo *erel = sp->comprel[e];
			Node	   *efk = list_nth(list_nth(dims, e), SD_FACTKEY);
			int			ecol = -1;

			if (e == d || sp->left[e] || sp->anti[e] || erel->rows >= best ||
				list_member_ptr(erel->partial_pathlist, list_nth(dimpaths, e)))
				continue;
			if (sp->parent[e] == d && IsA(efk, Var) && ((Var *) efk)->varno == INNER_VAR &&
				erel->tuples > 0 && erel->rows <= erel->tuples / 2)
			{
				/* its child's key: a payload column of d (payload_var) */
				List	   *pi = list_nth(sp->payload_info, ((Var *) efk)->varattno - 1);

				if (linitial_int(pi) != d)
					continue;
				ecol = lsecond_int(pi);
			}
			else if (!equal(factkey, efk))
				continue;
			best = erel->rows;
			source = e;
			col = ecol;
		}
		filters = lappend(filters, list_make2_int(source, col));
	}
	return filters;
}

/* cost_seqscan's divisor of the CPU work among the processes */
static double
parallel_divisor(int workers)
{
	double		d = workers;

	if (parallel_leader_participation && workers > 0)
	{
		double		leader = 1.0 - (0.3 * workers);

		if (leader > 0)
			d += leader;
	}
	return Max(d, 1.0);
}

static double shipped_fraction(PlannerInfo *root, RelOptInfo *rel);

/*
 * Dimension path dp's cost as the star reads it.  The Seq Scan of a table
 * of at least star_dim_min_pages() pages is read from its pages (star_dims.c),
 * no tuple through the executor: costed as the fact table is (star_costs),
 * seq_page_cost and STAR_PAGE_COST a page, its quals and, for rows of pages
 * the device does not read whole, a tuple's CPU a row, in a partial path
 * divided among the processes.  Any other plan as planned.
 */
static Cost
dim_cost(StarPlan *sp, Path *dp)
{
	RelOptInfo *rel = dp->parent;
	RangeTblEntry *rte;
	QualCost	qc;
	double		pages;
	double		divisor;

	if (dp->pathtype != T_SeqScan || !gpuhash_read_pages || rel->reloptkind != RELOPT_BASEREL ||
		rel->rtekind != RTE_RELATION || rel->pages < star_dim_min_pages())
		return dp->total_cost;
	rte = planner_rt_fetch(rel->relid, sp->root);
	if ((rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW) ||
		get_rel_persistence(rte->relid) == RELPERSISTENCE_TEMP)
		return dp->total_cost;
	pages = rel->pages;
	divisor = dp->parallel_aware ? parallel_divisor(dp->parallel_workers) : 1.0;
	cost_qual_eval(&qc, rel->baserestrictinfo, sp->root);
	return qc.startup + seq_page_cost * pages +
		(STAR_PAGE_COST * pages +
		 rel->tuples * (qc.per_tuple + (1.0 - shipped_fraction(sp->root, rel)) * cpu_tuple_cost)) /
		divisor;
}

static void
star_costs(StarPlan *sp, Path *path, int workers, int ncpu_quals, double groups,
		   List *dims, List *filters, int ngroups_dim, int npayloads)
{
	double		divisor = parallel_divisor(workers);
	double		pages = sp->fact_pages;
	double		tuples = Max(sp->fact_tuples, 1.0);
	double		cpu_rows = ncpu_quals > 0 ? tuples : tuples * (1.0 - sp->fact_shipped);
	Cost		startup = STAR_STARTUP_COST * cpu_operator_cost +
		gpuhash_engine_open_cost(workers > 0);
	Cost		run;
	ListCell   *lc;
	int			d = 0;

	foreach(lc, dims)
	{
		Path	   *dp = lfirst(lc);
		List	   *filter = list_nth(filters, d++);
		int			source = linitial_int(filter);
		double		kept = dp->parent->rows;

		/* a dimension read in shares (a partial path): each process its share of the rows */
		double		share = dp->parallel_aware ? parallel_divisor(dp->parallel_workers) : 1.0;

		/* a filtered dimension: a probe of the filter a row, the rows kept on to the device */
		if (source >= 0)
		{
			RelOptInfo *srel = sp->comprel[source];

			/* by its keys: at most as many; by a child's keys: as many as that keeps */
			kept = lsecond_int(filter) < 0 ? Min(kept, srel->rows) :
				kept * Min(1.0, srel->rows / Max(srel->tuples, 1.0));
			startup += dp->parent->rows * cpu_operator_cost / share;
		}
		startup += dim_cost(sp, dp) + dp->rows * 2 * cpu_operator_cost +
			kept * STAR_DIM_ROW_COST / share;
	}
	startup += ngroups_dim * cpu_operator_cost * 100.0 +
		npayloads * cpu_operator_cost * 100.0;
	run = seq_page_cost * pages +
		(STAR_PAGE_COST * pages + cpu_rows * (cpu_tuple_cost + cpu_operator_cost) +
		 ncpu_quals * tuples * cpu_operator_cost + tuples * STAR_ROW_COST) / divisor;
	path->startup_cost = startup + run;
	path->total_cost = path->startup_cost + groups * cpu_tuple_cost;
	path->rows = groups;
}

/*
 * The fraction of rel's pages the device reads whole: the all-visible ones,
 * and in a WAL-logged table the others too, whose tuples it judges by their
 * hint bits (star_scan.c; rows not read since their transaction committed
 * lack them and are read on the CPU once).
 */
static double
shipped_fraction(PlannerInfo *root, RelOptInfo *rel)
{
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);

	if (rte->rtekind == RTE_RELATION &&
		get_rel_persistence(rte->relid) == RELPERSISTENCE_PERMANENT)
		return 1.0;
	return rel->allvisfrac;
}

/*
 * The fact table's pages, rows and the fraction of its pages the device
 * reads whole: the table's, or its partitions' (an appendrel's own are its
 * rows after its quals).
 */
static void
fact_size(StarPlan *sp)
{
	ListCell   *lc;

	if (sp->leaves == NIL)
	{
		sp->fact_pages = (double) sp->factrel->pages;
		sp->fact_tuples = sp->factrel->tuples;
		sp->fact_shipped = shipped_fraction(sp->root, sp->factrel);
		return;
	}
	sp->fact_pages = sp->fact_tuples = sp->fact_shipped = 0;
	foreach(lc, sp->leaves)
	{
		RelOptInfo *leaf = lfirst(lc);

		sp->fact_pages += (double) leaf->pages;
		sp->fact_tuples += leaf->tuples;
		sp->fact_shipped += shipped_fraction(sp->root, leaf) * (double) leaf->pages;
	}
	if (sp->fact_pages > 0)
		sp->fact_shipped /= sp->fact_pages;
}

/*
 * The fact table's columns its quals read (pull_varattnos: offset by
 * FirstLowInvalidHeapAttributeNumber).
 */
static Bitmapset *
qual_columns(StarPlan *sp)
{
	Bitmapset  *cols = NULL;
	ListCell   *lc;

	foreach(lc, sp->factrel->baserestrictinfo)
		pull_varattnos((Node *) lfirst_node(RestrictInfo, lc)->clause, sp->fact, &cols);
	return cols;
}

/* ---- paths ---- */

/*
 * What EXPLAIN calls a dimension (by its first relation): a table's name,
 * or the alias of a subquery, a function or VALUES.
 */
static char *
dim_name(RangeTblEntry *rte)
{
	char	   *name = rte->rtekind == RTE_RELATION ? get_rel_name(rte->relid) : NULL;

	return name != NULL ? name : pstrdup(rte->eref->aliasname);
}

/*
 * The plan a star with a checked dimension runs instead where two rows of
 * that dimension share a key (star_exec.c): PostgreSQL's join of the input
 * (input), and above it an Agg of the star's own scan tuple, its grouping
 * columns then its aggregates, without HAVING (the node applies it).  NULL
 * where the grouping can be neither hashed nor sorted.
 */
static Path *
alternative_path(PlannerInfo *root, RelOptInfo *output_rel, Path *input, List *group_exprs,
				 List *aggrefs, double groups)
{
	List	   *gc = PlannerGroupClause(root);
	PathTarget *target = create_empty_pathtarget();
	AggClauseCosts costs;
	ListCell   *lc;

	if (input == NULL)
		return NULL;
	/* the grouping columns dropped from gc come after it (star_upper_paths) */
	foreach(lc, group_exprs)
	{
		int			g = foreach_current_index(lc);

		add_column_to_pathtarget(target, lfirst(lc), g < list_length(gc) ?
								 lfirst_node(SortGroupClause, list_nth_cell(gc, g))->tleSortGroupRef : 0);
	}
	foreach(lc, aggrefs)
		add_column_to_pathtarget(target, lfirst(lc), 0);
	target = set_pathtarget_cost_width(root, target);
	memset(&costs, 0, sizeof(costs));
	get_agg_clause_costs(root, AGGSPLIT_SIMPLE, &costs);
	if (gc == NIL)
		return (Path *) create_agg_path(root, output_rel, input, target, AGG_PLAIN,
										AGGSPLIT_SIMPLE, NIL, NIL, &costs, 1);
	if (grouping_is_hashable(gc))
		return (Path *) create_agg_path(root, output_rel, input, target, AGG_HASHED,
										AGGSPLIT_SIMPLE, gc, NIL, &costs, groups);
	if (!grouping_is_sortable(gc))
		return NULL;
	if (!pathkeys_contained_in(root->group_pathkeys, input->pathkeys))
		input = (Path *) create_sort_path(root, input->parent, input, root->group_pathkeys, -1.0);
	return (Path *) create_agg_path(root, output_rel, input, target, AGG_SORTED, AGGSPLIT_SIMPLE,
									gc, NIL, &costs, groups);
}

/*
 * Whether the group key may be a hash of its fields (star_key_hashed): the
 * widths the executor compiles with, a dimension's codes counted by its
 * rows, before its quals (a table's size at its current pages) or after
 * them where that is more.  A dimension has at most one code per row it
 * returns; selectivity estimates can be far too low, a table's size rarely
 * is.
 */
static bool
key_may_be_hashed(StarPlan *sp, List *groups, List *grouptypes)
{
	StarCompileInput *in = plan_input(sp);

	in->groups = groups;
	in->grouptypes = grouptypes;
	in->dim_codes = palloc0(sizeof(int) * Max(sp->ndims, 1));
	for (int d = 0; d < sp->ndims; d++)
	{
		RelOptInfo *rel = sp->comprel[d];

		in->dim_codes[d] = (int) Min(Max(rel->tuples, rel->rows), (double) INT_MAX);
	}
	return star_key_hashed(in);
}

/*
 * Whether the star may have to run the alternative instead: a row may hold
 * a value the device cannot evaluate -- the query reads a variable-length
 * column of the fact table (numeric, text), which may be stored compressed
 * or out of line, be a numeric NaN, or make a product beyond 128 bits
 * (GH_STAR_PAGE_ESCAPE), or a numeric column of a dimension, which may be
 * a NaN (star_dims.c) -- or two groups may collide under a hashed key
 * (star_exec.c, check_mixed_key).  Such a star carries the alternative,
 * which the node runs where that happens (star_exec.c).
 */
static bool
star_may_escape(StarPlan *sp, List *groups, List *grouptypes)
{
	Bitmapset  *cols = NULL;
	ListCell   *lc;
	int			k = -1;

	if (key_may_be_hashed(sp, groups, grouptypes))
		return true;
	foreach(lc, sp->payload_info)
		if ((Oid) lthird_int(lfirst(lc)) == NUMERICOID)
			return true;

	cols = qual_columns(sp);
	pull_varattnos((Node *) sp->factrel->reltarget->exprs, sp->fact, &cols);
	while ((k = bms_next_member(cols, k)) >= 0)
	{
		AttrNumber	attno = k + FirstLowInvalidHeapAttributeNumber;

		if (attno == 0 ||
			(attno > 0 && attno <= sp->factdesc->natts &&
			 TupleDescAttr(sp->factdesc, attno - 1)->attlen == -1))
			return true;
	}
	return false;
}

/*
 * The partial path dimension d is read by in a parallel star, or NULL: its
 * relation's cheapest partial path, a table scanned in parallel or a join
 * over one (a partial plan returns each row to one process, and to none once
 * one has found its end, as under a Gather), whose numeric payloads have a
 * declared scale, so that every process's share holds them alike.
 */
static Path *
partial_dimension(StarPlan *sp, int d)
{
	RelOptInfo *rel = sp->comprel[d];
	Path	   *path;
	ListCell   *lc;

	if (rel->partial_pathlist == NIL ||
		(rel->reloptkind != RELOPT_JOINREL &&
		 (rel->reloptkind != RELOPT_BASEREL || rel->rtekind != RTE_RELATION)))
		return NULL;
	path = linitial(rel->partial_pathlist);
	if (path->param_info != NULL || !path->parallel_safe)
		return NULL;
	if (rel->reloptkind == RELOPT_BASEREL &&
		(!path->parallel_aware ||
		 (path->pathtype != T_SeqScan && path->pathtype != T_IndexScan &&
		  path->pathtype != T_IndexOnlyScan && path->pathtype != T_BitmapHeapScan)))
		return NULL;
	foreach(lc, sp->payload_info)
	{
		List	   *pi = lfirst(lc);

		if (linitial_int(pi) == d && (Oid) lthird_int(pi) == NUMERICOID &&
			lfourth_int(pi) < 0)
			return NULL;
	}
	return path;
}

static CustomPath *
make_star_path(StarPlan *sp, RelOptInfo *output_rel, List *priv, Path *factpath,
			   List *dimpaths, Path *alt, double groups, int ncpu_quals, int ngroups_dim,
			   int npayloads, bool parallel)
{
	CustomPath *cpath = makeNode(CustomPath);
	List	   *filters = dim_filters(sp, list_nth(priv, SP_DIMS), dimpaths);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	cpath->path.pathtarget = output_rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = parallel;
	cpath->path.parallel_safe = parallel;
	cpath->path.parallel_workers = parallel ? factpath->parallel_workers : 0;
	cpath->path.pathkeys = NIL;
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	star_costs(sp, &cpath->path, parallel ? factpath->parallel_workers : 0, ncpu_quals, groups,
			   dimpaths, filters, ngroups_dim, npayloads);
	if (forced(sp->root))
	{
		/*
		 * forced, the pipeline beats gpuhash's other nodes, forced too: a
		 * fused GpuHashAgg over forced GpuHashJoins is scaled twice over
		 */
		for (int i = 0; i < 3; i++)
			gpuhash_scale_forced_cost(&cpath->path);
	}
	cpath->custom_paths = lcons(factpath, list_copy(dimpaths));
	if (alt != NULL)
		cpath->custom_paths = lappend(cpath->custom_paths, alt);
	cpath->custom_private = list_copy(priv);
	lfirst(list_nth_cell(cpath->custom_private, SP_PARALLEL)) = makeInteger(parallel ? 1 : 0);
	lfirst(list_nth_cell(cpath->custom_private, SP_ALT)) = makeInteger(alt != NULL ? 1 : 0);
	lfirst(list_nth_cell(cpath->custom_private, SP_FILTERS)) = filters;
	cpath->methods = &star_path_methods;
	return cpath;
}

/*
 * Why no star is offered, for DEBUG1: the first reason met (the compiler's
 * own where it gave one)
 */
static void
no_star(StarPlan *sp, const char *why)
{
	ereport(DEBUG1,
			(errmsg_internal("gpuhash: no GpuStarAgg: %s", sp->why ? sp->why : why)));
}

#define GIVE_UP(why) do { no_star(&sp, (why)); return; } while (0)

static void
star_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
		   RelOptInfo *output_rel, void *extra, bool split)
{
	Query	   *parse = root->parse;
	GroupPathExtraData *gextra = (GroupPathExtraData *) extra;
	StarPlan	sp = {0};
	List	   *group_exprs;
	List	   *aggrefs = NIL;
	bool		cpu_aggs = false;
	List	   *dev_quals = NIL,
			   *cpu_quals = NIL,
			   *fact_quals,
			   *shown = NIL;
	List	   *dims = NIL,
			   *dimpaths = NIL,
			   *groups = NIL,
			   *grouptypes = NIL,
			   *groupeq = NIL,
			   *aggs = NIL;
	List	   *joinris = NIL,
			   *join_quals = NIL,
			   *join_shown = NIL;
	Node	   *last_join = NULL;
	Expr	   *last_shown = NULL;
	List	   *group_ops = NIL;
	int			ngrouped;
	List	   *regrouped = NIL;	/* columns grouped by again (below) */
	List	   *priv;
	ListCell   *lc;
	Relation	rel;
	double		groups_est;
	int			ngroups_dim = 0;
	Path	   *factpath;
	CustomPath *serial;
	int			g;
	bool		any_checked = false;
	bool		may_escape;
	StarCompiled *trial = NULL;
	Path	   *alt = NULL;

	if (stage != UPPERREL_GROUP_AGG || !gpuhash_enabled || !gpuhash_enable_groupby ||
		!gpuhash_enable_star || !gpuhash_planning_allowed())
		return;
	/*
	 * A GROUP BY of constants the planner dropped (16+) is PostgreSQL's: no
	 * row over no rows.  (Columns dropped because a primary key in the GROUP
	 * BY determines them are grouped by again below.)
	 */
	foreach(lc, parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		ListCell   *lc2;

		foreach(lc2, PlannerGroupClause(root))
			if (lfirst_node(SortGroupClause, lc2)->tleSortGroupRef == sgc->tleSortGroupRef)
				break;
		if (lc2 == NULL && !IsA(get_sortgroupclause_expr(sgc, parse->targetList), Var))
			return;
	}
	if ((parse->groupClause == NIL && !parse->hasAggs) || parse->groupingSets != NIL ||
		parse->hasTargetSRFs || gextra == NULL ||
		gextra->patype != PARTITIONWISE_AGGREGATE_NONE ||
		root->placeholder_list != NIL || root->hasLateralRTEs)
		return;
	if (input_rel->reloptkind != RELOPT_JOINREL && input_rel->reloptkind != RELOPT_BASEREL)
		return;

	/* the fact table and the dimensions */
	sp.root = root;
	sp.ok = true;
	sp.split = split;
	sp.fact = choose_fact(root, RelidsWithoutOuterJoins(root, input_rel->relids));
	if (sp.fact == 0 || !fact_readable(root, sp.fact))
		GIVE_UP("the largest relation is not a table the pipeline reads");
	sp.factrel = root->simple_rel_array[sp.fact];
	rel = table_open(root->simple_rte_array[sp.fact]->relid, NoLock);
	sp.factdesc = CreateTupleDescCopyConstr(RelationGetDescr(rel));
	table_close(rel, NoLock);
	if (!star_fact_leaves(root, sp.fact, sp.factdesc, &sp.leaves))
		GIVE_UP("a partition of the fact table is not a table laid out as it is");
	/* a partition's whole row is of another type: such a qual is not the partitions' */
	if (sp.leaves != NIL &&
		bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, qual_columns(&sp)))
		GIVE_UP("a qual reads the partitioned fact table's whole row");
	fact_size(&sp);
	if (!gpuhash_force && sp.fact_tuples < (double) gpuhash_min_rows)
		GIVE_UP("the fact table has fewer rows than gpuhash.min_rows");
	if (!find_components(&sp, RelidsWithoutOuterJoins(root, input_rel->relids)) ||
		!special_joins(&sp))
		GIVE_UP("the relations are not a star of the fact table's inner, semi, anti and LEFT joins");
	if (split && gpuhash_debug_snowflakes == GPUHASH_SNOWFLAKES_AUTO)
	{
		int			d = 0;

		while (d < sp.ndims && sp.parent[d] < 0)
			d++;
		if (d == sp.ndims)
			return;				/* no snowflake to split: the same as whole */
	}
	sp.comprel = palloc0(sizeof(RelOptInfo *) * Max(sp.ndims, 1));
	sp.payload = palloc0(sizeof(List *) * Max(sp.ndims, 1));

	for (int d = 0; d < sp.ndims; d++)
	{
		Expr	   *clause;
		Node	   *factkey;
		Node	   *dimexpr;
		Oid			keytype;
		Path	   *dp;
		int			x = bms_next_member(sp.comp[d], -1);
		bool		checked;

		if (!dimension_join(&sp, d, &clause, &factkey, &dimexpr, &keytype, &checked))
			GIVE_UP("a dimension is not joined by one equality on a key it is unique on");
		/* a snowflake is named by the relation its key reads (orders, not its customer) */
		if (bms_get_singleton_member(pull_varnos(root, dimexpr), &x) &&
			!bms_is_member(x, sp.comp[d]))
			x = bms_next_member(sp.comp[d], -1);
		any_checked |= checked;
		dp = sp.comprel[d]->cheapest_total_path;
		if (dp == NULL || dp->param_info != NULL || contain_volatile_functions(dimexpr))
			GIVE_UP("a dimension's plan is parameterized or its key volatile");
		dimpaths = lappend(dimpaths, dp);
		dims = lappend(dims,
					   list_concat(list_make5(rewrite(&sp, factkey), dimexpr, NIL, NIL,
											  makeString(dim_name(root->simple_rte_array[x]))),
								   list_make4(clause, makeInteger((int) keytype),
											  makeInteger(sp.semi[d] ? STAR_DIM_SEMI :
														  checked ? STAR_DIM_CHECK : STAR_DIM_UNIQUE),
											  makeInteger(sp.left[d] ? GH_PROBE_LEFT :
														  sp.anti[d] ? GH_PROBE_ANTI :
														  GH_PROBE_INNER))));
		llast(dims) = lappend(llast(dims), NIL);	/* SD_NULL_ROW */
	}

	/*
	 * The join clauses no dimension applies, which the device evaluates
	 * after the probes: first those that can raise no error (its order is not
	 * PostgreSQL's), then at most one other, which so sees only rows that
	 * every other clause of the query passed (expr_errors.c says which can
	 * fail).  Their values of one dimension become payloads, which cannot
	 * fail (rewrite_mutator).
	 */
	if (!join_clauses(&sp, RelidsWithoutOuterJoins(root, input_rel->relids), &joinris))
		GIVE_UP("a join clause of a semi join's dimension");
	foreach(lc, joinris)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		Node	   *rw;

		if (contain_volatile_functions((Node *) ri->clause))
			GIVE_UP("a volatile join clause");
		rw = rewrite(&sp, (Node *) ri->clause);
		if (!sp.ok || !device_ok(&sp, rw))
			GIVE_UP("a join clause the device cannot evaluate");
		if (!gpuhash_expr_may_fail(rw))
		{
			join_quals = lappend(join_quals, rw);
			join_shown = lappend(join_shown, ri->clause);
		}
		else if (last_join == NULL)
		{
			last_join = rw;
			last_shown = ri->clause;
		}
		else
			GIVE_UP("two join clauses that may raise errors");
	}
	if (last_join != NULL)
	{
		join_quals = lappend(join_quals, last_join);
		join_shown = lappend(join_shown, last_shown);
	}

	/*
	 * The fact table's quals, in the order PostgreSQL evaluates them: all on
	 * the device, or all on the CPU (in the Seq Scan), so that no qual is
	 * evaluated for a row that an earlier one would have rejected: the device
	 * cannot raise an error PostgreSQL would not.
	 */
	fact_quals = gpuhash_order_quals(root, sp.factrel->baserestrictinfo);
	foreach(lc, fact_quals)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		Node	   *rw;

		if (contain_volatile_functions((Node *) ri->clause))
			GIVE_UP("a volatile qual");
		rw = rewrite(&sp, (Node *) ri->clause);
		if (!sp.ok)
			GIVE_UP("a qual the pipeline cannot take");
		if (cpu_quals == NIL && device_ok(&sp, rw))
		{
			dev_quals = lappend(dev_quals, rw);
			shown = lappend(shown, ri->clause);
		}
		else
			cpu_quals = lappend(cpu_quals, ri);
	}
	if (cpu_quals != NIL)
	{
		/* one qual stays on the CPU: they all do */
		cpu_quals = fact_quals;
		dev_quals = shown = NIL;
	}

	/* the grouping columns */
	group_exprs = get_sortgrouplist_exprs(PlannerGroupClause(root), parse->targetList);
	ngrouped = list_length(group_exprs);
	foreach(lc, PlannerGroupClause(root))
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);

		group_ops = lappend(group_ops, list_make2_oid(sgc->eqop, sgc->hashable));
	}

	/*
	 * Columns the planner took out of the GROUP BY because a primary key in
	 * it determines them (remove_useless_groupby_columns), which the output
	 * shows: grouped by again (they change no group), so that the node
	 * computes them.  A plain column of the target list with a sort-group
	 * reference outside the grouping is one: the parser allows no other
	 * but the columns a query reads ungrouped because a primary key it
	 * groups by determines them (constraintDeps), grouped by again too.
	 */
	foreach(lc, parse->targetList)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (parse->groupClause != NIL && tle->ressortgroupref != 0 && IsA(tle->expr, Var))
			regrouped = lappend(regrouped, tle->expr);
	}
	if (parse->constraintDeps != NIL)
		regrouped = list_concat(regrouped, dependent_columns(parse));
	foreach(lc, regrouped)
	{
		Oid			eqop;
		bool		hashable;

		if (list_member(group_exprs, lfirst(lc)))
			continue;
		get_sort_group_operators(exprType(lfirst(lc)), false, true, false, NULL, &eqop,
								 NULL, &hashable);
		group_exprs = lappend(group_exprs, lfirst(lc));
		group_ops = lappend(group_ops, list_make2_oid(eqop, hashable));
	}
	g = 0;
	foreach(lc, group_ops)
	{
		Oid			eqop = linitial_oid(lfirst(lc));
		bool		hashable = lsecond_oid(lfirst(lc)) != 0;
		Node	   *expr = list_nth(group_exprs, g++);
		int			d = dim_of(&sp, pull_varnos(root, expr));
		Oid			coll = exprCollation(expr);
		int			textbytes = 0;
		bool		carried = false;

		if (contain_volatile_functions(expr))
			GIVE_UP("a volatile grouping expression");
		if (d >= 0 && !gpuhash_expr_may_fail(expr))
		{
			/* read from the dimension, through its dictionary */
			List	   *dim = list_nth(dims, d);

			/*
			 * a LEFT JOIN's: where the join finds no row, its value over NULLs,
			 * which must be a constant (the row then takes that group's code:
			 * star_compile_node)
			 */
			if (sp.left[d])
			{
				Const	   *c = null_row_value(root, expr);

				if (c == NULL)
					GIVE_UP("a grouping column of a LEFT JOIN's dimension not constant where it finds no row");
				lfirst(list_nth_cell(dim, SD_NULL_ROW)) = lappend(list_nth(dim, SD_NULL_ROW), c);
			}

			if (!hashable || !OidIsValid(eqop) ||
				(OidIsValid(coll) && !gpuhash_collation_ok(coll)))
				GIVE_UP("a grouping column of a dimension that cannot be hashed");
			lfirst(list_nth_cell(dim, SD_GROUPS)) = lappend(list_nth(dim, SD_GROUPS), expr);
			groups = lappend(groups, list_make2(makeInteger(d), NULL));
			ngroups_dim++;
			carried = g > ngrouped && carried_column(&sp, expr, group_exprs, ngrouped, d);
		}
		else
		{
			Node	   *rw = rewrite(&sp, expr);

			textbytes = text_key_bytes(root, expr);
			if (!sp.ok || star_key_bits(exprType(expr), exprTypmod(expr), textbytes) == 0 ||
				!device_ok(&sp, rw) ||
				(OidIsValid(coll) && !gpuhash_collation_ok(coll)))
				GIVE_UP("a grouping expression the device cannot evaluate or pack");
			groups = lappend(groups, list_make2(makeInteger(-1), rw));
		}
		grouptypes = lappend(grouptypes, list_make4_int(exprType(expr), exprTypmod(expr), coll,
														textbytes));
		/* a carried column's dictionary has no equality for it (star_dims.c) */
		groupeq = lappend(groupeq, list_make2_oid(carried ? InvalidOid : eqop, coll));
	}

	/* the aggregates */
	if (!gpuhash_agg_output_aggrefs((Node *) output_rel->reltarget->exprs, group_exprs,
									&aggrefs, &cpu_aggs) ||
		!gpuhash_agg_output_aggrefs(gextra->havingQual, group_exprs, &aggrefs, &cpu_aggs))
		GIVE_UP("an aggregate the device does not compute");
	foreach(lc, aggrefs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);
		GhaOp		op;
		Oid			argtype,
					transfn;
		Node	   *arg = NULL,
				   *filter = NULL;

		if (!gpuhash_agg_classify(agg, &op, &argtype, &transfn) ||
			(op == GHA_CPU && !numeric_minmax(agg, &op)))
			GIVE_UP("an aggregate the device does not compute");
		if (!agg->aggstar)
		{
			Node	   *a = (Node *) linitial_node(TargetEntry, agg->args)->expr;

			if (contain_volatile_functions(a))
				GIVE_UP("a volatile aggregate argument");
			arg = rewrite(&sp, a);
			if (!device_ok(&sp, arg))
				GIVE_UP("an aggregate argument the device cannot evaluate");
		}
		if (agg->aggfilter)
		{
			if (contain_volatile_functions((Node *) agg->aggfilter))
				GIVE_UP("a volatile FILTER");
			filter = rewrite(&sp, (Node *) agg->aggfilter);
			if (!device_ok(&sp, filter))
				GIVE_UP("a FILTER the device cannot evaluate");
		}
		aggs = lappend(aggs, list_make4(makeInteger(op), makeInteger((int) argtype), arg, filter));
	}

	/*
	 * The fact table alone: GpuHashAgg reads plain columns (and columns
	 * modulo a constant) from pages as fast, so the pipeline is offered only
	 * for what it adds: quals, expressions to evaluate on the device, plain
	 * aggregates (GpuHashAgg leaves a single group to PostgreSQL), and the
	 * pages of partitions (GpuHashAgg reads an Append's rows).
	 */
	if (sp.ndims == 0 && dev_quals == NIL && cpu_quals == NIL && group_exprs != NIL &&
		sp.leaves == NIL && plain_inputs(group_exprs, aggrefs))
		GIVE_UP("nothing to add to GpuHashAgg");

	/* the payloads each dimension computes */
	for (int d = 0; d < sp.ndims; d++)
		lfirst(list_nth_cell(list_nth(dims, d), SD_PAYLOAD)) = sp.payload[d];

	/* a trial compilation of the whole program: every part fits together */
	{
		StarCompileInput *in = plan_input(&sp);
		List	   *pdims = NIL;
		const char *why;
		int			d = 0;

		foreach(lc, dims)
		{
			List	   *dim = lfirst(lc);

			pdims = lappend(pdims, list_make5(makeInteger(1), NIL,
											  list_make1(linitial(dim)),
											  makeInteger(list_length(list_nth(dim, SD_GROUPS))),
											  makeInteger(list_length(sp.payload[d++]))));
		}
		in->quals = dev_quals;
		in->joinquals = join_quals;
		in->dims = pdims;
		in->groups = groups;
		in->grouptypes = grouptypes;
		in->aggs = aggs;
		if ((trial = star_compile(in, &why)) == NULL)
		{
			sp.why = why;
			GIVE_UP("the program does not compile");
		}
	}

	groups_est = group_exprs == NIL ? 1 :
		estimate_num_groups(root, list_truncate(list_copy(group_exprs), ngrouped), input_rel->rows, NULL, NULL);
	priv = NIL;
	priv = lappend(priv, makeInteger((int) sp.fact));
	priv = lappend(priv, dev_quals);
	priv = lappend(priv, cpu_quals);
	priv = lappend(priv, dims);
	priv = lappend(priv, groups);
	priv = lappend(priv, grouptypes);
	priv = lappend(priv, aggs);
	priv = lappend(priv, sp.payload_info);
	priv = lappend(priv, group_exprs);
	priv = lappend(priv, aggrefs);
	priv = lappend(priv, gextra->havingQual);
	priv = lappend(priv, shown);
	priv = lappend(priv, groupeq);
	priv = lappend(priv, makeInteger(0));
	priv = lappend(priv, makeInteger(0));
	priv = lappend(priv, join_quals);
	priv = lappend(priv, join_shown);
	priv = lappend(priv, NIL);
	Assert(list_length(priv) == SP_COUNT);

	/*
	 * serial; with a checked dimension, PostgreSQL's join of the input below
	 * an Agg beside it, and so where a fact row may escape the device or
	 * groups collide under a hashed key (there the query fails without it)
	 */
	may_escape = star_may_escape(&sp, groups, grouptypes) || star_prog_may_escape(trial->prog) ||
		trial->zero_cols;
	if ((any_checked || may_escape) &&
		(alt = alternative_path(root, output_rel, input_rel->cheapest_total_path, group_exprs,
								aggrefs, groups_est)) == NULL && any_checked)
		GIVE_UP("no alternative plan for a checked dimension");
	factpath = star_fact_path(root, sp.factrel, sp.leaves, 0);
	serial = make_star_path(&sp, output_rel, priv, factpath, dimpaths, alt, groups_est,
							list_length(cpu_quals), ngroups_dim, list_length(sp.payload_info), false);
	elog(DEBUG1, "gpuhash: GpuStarAgg offered, serial, at cost %.2f..%.2f",
		 serial->path.startup_cost, serial->path.total_cost);
	add_path(output_rel, (Path *) serial);

	/* parallel: the processes share the fact table's blocks through the GPU service */
	if (output_rel->consider_parallel && gextra->target_parallel_safe &&
		input_rel->consider_parallel && sp.factrel->consider_parallel &&
		max_parallel_workers_per_gather > 0 && gpuhash_service_ready() &&
		is_parallel_safe(root, gextra->havingQual))
	{
		int			workers = compute_parallel_worker(sp.factrel, sp.fact_pages, -1,
													  max_parallel_workers_per_gather);
		Path	   *partial = workers > 0 ?
			star_fact_path(root, sp.factrel, sp.leaves, workers) : NULL;
		bool		dims_safe = true;
		List	   *safe_paths = NIL;

		/*
		 * A dimension that is one table with a partial path is read by every
		 * process, each its share (star_dim_share.c); the others by the
		 * leader alone, below the Gather all the same
		 */
		for (int d = 0; d < sp.ndims; d++)
		{
			Path	   *dp = partial_dimension(&sp, d);

			if (dp == NULL)
				dp = get_cheapest_parallel_safe_total_inner(sp.comprel[d]->pathlist);
			dims_safe &= dp != NULL;
			safe_paths = lappend(safe_paths, dp);
		}
		foreach(lc, dims)
		{
			List	   *dim = lfirst(lc);

			dims_safe &= is_parallel_safe(root, list_nth(dim, SD_KEYEXPR)) &&
				is_parallel_safe(root, list_nth(dim, SD_GROUPS)) &&
				is_parallel_safe(root, list_nth(dim, SD_PAYLOAD));
		}
		/*
		 * The alternative, run by one process: a plan without a Gather of its
		 * own, or a partial one (its parallel scans hand that process, the
		 * only one to run it, every block)
		 */
		alt = NULL;
		if (any_checked || may_escape)
		{
			Path	   *in = get_cheapest_parallel_safe_total_inner(input_rel->pathlist);

			if (in == NULL && input_rel->partial_pathlist != NIL)
				in = linitial(input_rel->partial_pathlist);
			alt = in == NULL ? NULL :
				alternative_path(root, output_rel, in, group_exprs, aggrefs, groups_est);
			if (alt != NULL && !alt->parallel_safe)
				alt = NULL;
			dims_safe &= alt != NULL || !any_checked;
		}
		if (partial != NULL && dims_safe)
		{
			CustomPath *cpath = make_star_path(&sp, output_rel, priv, partial, safe_paths, alt,
											   groups_est, list_length(cpu_quals),
											   ngroups_dim, list_length(sp.payload_info),
											   true);
			double		rows = groups_est;
			Path	   *gather = (Path *) create_gather_path(root, output_rel, &cpath->path,
															 output_rel->reltarget, NULL,
															 &rows);

			/*
			 * the leader, where it takes part, returns the groups itself
			 * (star_exec.c): none crosses a tuple queue
			 */
			if (parallel_leader_participation)
				gather->total_cost -= parallel_tuple_cost * gather->rows;

			/*
			 * forced, the Gather is scaled as its star is: else its own
			 * setup cost would always lose to the serial star's
			 */
			if (forced(root))
				for (int i = 0; i < 3; i++)
					gpuhash_scale_forced_cost(gather);
			elog(DEBUG1, "gpuhash: GpuStarAgg offered, in parallel, at cost %.2f..%.2f",
				 gather->startup_cost, gather->total_cost);
			add_path(output_rel, gather);
		}
	}
}

/* ---- the plan ---- */

static bool
param_walker(Node *node, List **params)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
	{
		*params = lappend(*params, copyObject(node));
		return false;
	}
	return expression_tree_walker(node, param_walker, params);
}

/* the Params under node */
static List *
pull_param_list(List *node)
{
	List	   *params = NIL;

	(void) param_walker((Node *) node, &params);
	return params;
}

static Plan *
plan_star(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
		  List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *priv = best_path->custom_private;
	Index		fact = (Index) intVal(list_nth(priv, SP_FACT_RTI));
	Plan	   *factplan = linitial(custom_plans);
	Scan	   *first;
	List	   *cpu_quals = list_nth(priv, SP_CPU_QUALS);
	List	   *dims = list_nth(priv, SP_DIMS);
	List	   *filters = list_nth(priv, SP_FILTERS);
	List	   *plans = list_make1(factplan);
	List	   *pdims = NIL;
	List	   *scan_tlist = NIL;
	List	   *params = NIL;
	ListCell   *lc,
			   *lc2;
	int			d = 0;

	/* the fact table's scans: the table's columns as they are, the CPU quals */
	star_fact_plan(root, factplan, fact,
				   extract_actual_clauses(gpuhash_order_quals(root, cpu_quals), false));
	first = (Scan *) (IsA(factplan, Append) ? linitial(((Append *) factplan)->appendplans) :
					  factplan);

	/* each dimension computes its key, its grouping columns, its payload */
	forboth(lc, dims, lc2, list_copy_tail(custom_plans, 1))
	{
		List	   *dim = lfirst(lc);
		Plan	   *dplan = lfirst(lc2);
		Path	   *dpath = list_nth(best_path->custom_paths, d + 1);
		List	   *exprs = list_concat(list_make1(list_nth(dim, SD_KEYEXPR)),
										list_concat(list_copy(list_nth(dim, SD_GROUPS)),
													list_nth(dim, SD_PAYLOAD)));
		List	   *dtlist = NIL;
		List	   *pdim;
		ListCell   *lc3;

		foreach(lc3, exprs)
			dtlist = lappend(dtlist,
							 makeTargetEntry((Expr *) gpuhash_without_nullingrels(lfirst(lc3)),
											 list_length(dtlist) + 1, NULL, false));
		dplan = change_plan_targetlist(dplan, dtlist, dplan->parallel_safe);
		plans = lappend(plans, dplan);
		pdim = list_concat(list_make5(makeInteger(1),
									  list_make1_oid((Oid) intVal(list_nth(dim, SD_KEYTYPE))),
									  list_make1(list_nth(dim, SD_FACTKEY)),
									  makeInteger(list_length(list_nth(dim, SD_GROUPS))),
									  makeInteger(list_length(list_nth(dim, SD_PAYLOAD)))),
						   list_make5(list_nth(dim, SD_NAME), list_nth(dim, SD_CLAUSE),
									  list_nth(dim, SD_UNIQUENESS),
									  makeInteger(linitial_int(list_nth(filters, d))),
									  makeFloat(psprintf("%.1f", dpath->parent->rows))));
		pdims = lappend(pdims, lappend(lappend(lappend(pdim, list_nth(dim, SD_JOIN)),
											   list_nth(dim, SD_NULL_ROW)),
									   makeInteger(lsecond_int(list_nth(filters, d)))));
		d++;
	}
	/* the alternative, as planned: it computes the scan tuple itself */
	if (intVal(list_nth(priv, SP_ALT)))
		plans = lappend(plans, llast(custom_plans));

	/* the node computes the grouping columns and the aggregates */
	foreach(lc, (List *) list_nth(priv, SP_GROUP_EXPRS))
		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) copyObject(lfirst(lc)),
														 list_length(scan_tlist) + 1, NULL,
														 false));
	foreach(lc, (List *) list_nth(priv, SP_AGGREFS))
		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) copyObject(lfirst(lc)),
														 list_length(scan_tlist) + 1, NULL,
														 false));

	/* the Params the device's expressions read, for the executor's bookkeeping */
	params = pull_param_list(list_nth(priv, SP_DEV_QUALS));
	params = list_concat(params, pull_param_list(list_nth(priv, SP_JOIN_QUALS)));
	foreach(lc, pdims)
		params = list_concat(params, pull_param_list(list_nth(lfirst(lc), STAR_DIM_FACTKEYS)));
	foreach(lc, (List *) list_nth(priv, SP_GROUPS))
		params = list_concat(params, pull_param_list(list_make1(lsecond(lfirst(lc)))));
	foreach(lc, (List *) list_nth(priv, SP_AGGS))
		params = list_concat(params, pull_param_list(list_make2(lthird(lfirst(lc)),
																	  lfourth(lfirst(lc)))));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = (List *) list_nth(priv, SP_HAVING);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = plans;
	cscan->custom_exprs = list_make1(params);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = NULL;
	cscan->methods = &gpuhash_star_scan_methods;
	cscan->custom_private = NIL;
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger((int) root->simple_rte_array[fact]->relid));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_DEV_QUALS));
	cscan->custom_private = lappend(cscan->custom_private, pdims);
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_GROUPS));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_GROUPTYPES));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_AGGS));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_PAYLOADS));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_PARALLEL));
	cscan->custom_private = lappend(cscan->custom_private, makeInteger((int) first->scanrelid));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_QUALS_SHOWN));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_GROUP_EQ));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_ALT));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_JOIN_QUALS));
	cscan->custom_private = lappend(cscan->custom_private, list_nth(priv, SP_JOIN_SHOWN));
	(void) rel;
	(void) clauses;
	return &cscan->scan.plan;
}

/*
 * The pipeline over the query's relations: each relation of a snowflake a
 * dimension of its own (split), then each snowflake one dimension (its join
 * PostgreSQL's plan); the cheaper wins, and where their costs are within
 * add_path's fuzz the split one, offered first (it has measured as fast or
 * faster on every TPC-H-shaped query where both apply).
 */
static void
star_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, void *extra)
{
	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (gpuhash_debug_snowflakes != GPUHASH_SNOWFLAKES_WHOLE)
		star_paths(root, stage, input_rel, output_rel, extra, true);
	if (gpuhash_debug_snowflakes != GPUHASH_SNOWFLAKES_SPLIT)
		star_paths(root, stage, input_rel, output_rel, extra, false);
}

void
gpuhash_star_init(void)
{
	RegisterCustomScanMethods(&gpuhash_star_scan_methods);
	prev_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = star_upper_paths;
}
