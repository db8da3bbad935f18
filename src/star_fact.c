/*-------------------------------------------------------------------------
 *
 * star_fact.c
 *	  The fact table of a GpuStarAgg: one heap table, or the partitions of a
 *	  partitioned table (or the tables of an inheritance tree) laid out as
 *	  the table is, read one after another.
 *
 * INTERFACE ROUTINES
 *		star_fact_leaves	the tables a partitioned fact table is read from
 *		star_rel_pages		a base relation's pages, its partitions' summed
 *		star_fact_path		the path reading the fact table, serial or partial
 *		star_fact_plan		its scans' target lists and CPU quals
 *		star_fact_scans		at execution: the scans of the fact table
 *
 * The device reads a fact row by the attribute numbers, types and widths
 * of the fact table's descriptor, so that one program reads every page.
 * A partitioned fact table is read from its leaf partitions that planning
 * left (partition pruning), each with a Seq Scan of its own under an
 * Append that is not parallel-aware: every process reads every partition,
 * each a parallel Seq Scan under a Gather, so that the processes share the
 * blocks of one partition after another.  The star reads the partitions'
 * pages itself (star_scan.c); the Append only holds the scans and prunes
 * them with the query's parameters when the executor starts.  A partition
 * is taken only where it is laid out as the partitioned table is: the same
 * attributes in the same order (names, types, type modifiers, NOT NULL,
 * dropped ones), none with a default added later (atthasmissing), so that
 * the table's descriptor reads its pages and its column numbers are the
 * partition's; PARTITION OF makes such partitions, a table attached after
 * a column of the parent was dropped is not one.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/pathnode.h"
#include "optimizer/plancat.h"
#include "optimizer/restrictinfo.h"
#include "rewrite/rewriteManip.h"
#include "utils/rel.h"

#include "star.h"

/* Is leaf laid out as desc: the same attributes, in the same order? */
static bool
laid_out_alike(TupleDesc desc, TupleDesc leaf)
{
	if (leaf->natts != desc->natts)
		return false;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);
		Form_pg_attribute b = TupleDescAttr(leaf, i);

		if (a->attisdropped != b->attisdropped || b->atthasmissing || a->atthasmissing ||
			a->attlen != b->attlen || a->attalign != b->attalign || a->attbyval != b->attbyval)
			return false;
		if (!a->attisdropped &&
			(a->atttypid != b->atttypid || a->atttypmod != b->atttypmod ||
			 a->attnotnull != b->attnotnull || a->attcollation != b->attcollation ||
			 strcmp(NameStr(a->attname), NameStr(b->attname)) != 0))
			return false;
	}
	return true;
}

/*
 * The range table indexes of appendrel parent's members that planning kept
 * (a pruned one has no RelOptInfo, or a dummy one).
 */
static List *
live_members(PlannerInfo *root, Index parent)
{
	List	   *members = NIL;
	ListCell   *lc;

	foreach(lc, root->append_rel_list)
	{
		AppendRelInfo *ai = lfirst_node(AppendRelInfo, lc);
		RelOptInfo *rel = root->simple_rel_array[ai->child_relid];

		if (ai->parent_relid == parent && rel != NULL && !IS_DUMMY_REL(rel))
			members = lappend_int(members, (int) ai->child_relid);
	}
	return members;
}

/*
 * Add the leaf tables under appendrel parent (the planner's RelOptInfos of
 * the partitions it kept) to *leaves; false where one cannot be read as a
 * fact table laid out as desc.
 */
static bool
add_leaves(PlannerInfo *root, Index parent, TupleDesc desc, List **leaves)
{
	ListCell   *lc;

	foreach(lc, live_members(root, parent))
	{
		Index		child = (Index) lfirst_int(lc);
		RelOptInfo *rel = root->simple_rel_array[child];
		RangeTblEntry *rte = root->simple_rte_array[child];

		if (rte->rtekind != RTE_RELATION || rel->rtekind != RTE_RELATION)
			return false;
		if (rte->inh)
		{
			if (!add_leaves(root, child, desc, leaves))
				return false;
			continue;
		}
		if (rte->relkind != RELKIND_RELATION)
			return false;
		{
			Relation	r = table_open(rte->relid, NoLock);
			bool		alike = laid_out_alike(desc, RelationGetDescr(r));

			table_close(r, NoLock);
			if (!alike)
				return false;
		}
		*leaves = lappend(*leaves, rel);
	}
	return true;
}

/*
 * The leaf tables the fact table fact (an appendrel: its range table entry
 * inh) is read from, each laid out as desc, the fact table's descriptor;
 * false where one is not, or none is left.  A fact table that is not an
 * appendrel has none (NIL, true).
 */
bool
star_fact_leaves(PlannerInfo *root, Index fact, TupleDesc desc, List **leaves)
{
	*leaves = NIL;
	if (!root->simple_rte_array[fact]->inh)
		return true;
	return add_leaves(root, fact, desc, leaves) && *leaves != NIL;
}

/* The pages of base relation x: an appendrel's are its leaf tables'. */
double
star_rel_pages(PlannerInfo *root, Index x)
{
	double		pages = 0;
	ListCell   *lc;

	if (!root->simple_rte_array[x]->inh)
		return (double) root->simple_rel_array[x]->pages;
	foreach(lc, live_members(root, x))
		pages += star_rel_pages(root, (Index) lfirst_int(lc));
	return pages;
}

/*
 * The path reading the fact table factrel: its Seq Scan, or an Append of
 * its leaves' (leaves not NIL); partial with workers > 0.  NULL where a
 * leaf cannot be read in parallel.
 */
Path *
star_fact_path(PlannerInfo *root, RelOptInfo *factrel, List *leaves, int workers)
{
	List	   *paths = NIL;
	ListCell   *lc;

	if (leaves == NIL)
		return create_seqscan_path(root, factrel, NULL, workers);
	foreach(lc, leaves)
	{
		RelOptInfo *leaf = lfirst(lc);

		if (workers > 0 && !leaf->consider_parallel)
			return NULL;
		paths = lappend(paths, create_seqscan_path(root, leaf, NULL, workers));
	}
	if (workers > 0)
		return (Path *) create_append_path(root, factrel, NIL, paths, NIL, NULL, workers,
										   false, -1);
	return (Path *) create_append_path(root, factrel, paths, NIL, NIL, NULL, 0, false, -1);
}

/*
 * The fact table's scans in factplan (a Seq Scan, or an Append of them)
 * read the tables' columns as they are, and the quals the device cannot
 * evaluate, cpu_quals (clauses over the fact table, range table index
 * fact), each a partition's own.
 */
void
star_fact_plan(PlannerInfo *root, Plan *factplan, Index fact, List *cpu_quals)
{
	List	   *scans;
	ListCell   *lc;

	if (IsA(factplan, SeqScan))
		scans = list_make1(factplan);
	else if (IsA(factplan, Append))
		scans = ((Append *) factplan)->appendplans;
	else
		elog(ERROR, "gpuhash: the fact table of a star is not read by a Seq Scan");
	foreach(lc, scans)
	{
		Scan	   *scan = lfirst(lc);
		List	   *quals = copyObject(cpu_quals);

		if (!IsA(scan, SeqScan))
			elog(ERROR, "gpuhash: a partition of a star's fact table is not read by a Seq Scan");
		/* laid out alike (star_fact_leaves), a partition's columns are the table's */
		if (scan->scanrelid != fact)
			ChangeVarNodes((Node *) quals, (int) fact, (int) scan->scanrelid, 0);
		scan->plan.targetlist = build_physical_tlist(root, root->simple_rel_array[scan->scanrelid]);
		scan->plan.qual = quals;
	}
}

/*
 * The scans reading the fact table at execution, whose node fact is (a
 * Seq Scan, or an Append of them, less the partitions its pruning left
 * out): their number, the scans into *scans (palloc'd).
 */
int
star_fact_scans(PlanState *fact, ScanState ***scans)
{
	if (IsA(fact, AppendState))
	{
		AppendState *as = (AppendState *) fact;

		*scans = palloc(sizeof(ScanState *) * Max(as->as_nplans, 1));
		for (int i = 0; i < as->as_nplans; i++)
			(*scans)[i] = (ScanState *) as->appendplans[i];
		return as->as_nplans;
	}
	*scans = palloc(sizeof(ScanState *));
	(*scans)[0] = (ScanState *) fact;
	return 1;
}
