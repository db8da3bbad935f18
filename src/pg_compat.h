/*-------------------------------------------------------------------------
 *
 * pg_compat.h
 *	  What differs between the PostgreSQL releases gpuhash builds against
 *	  (15, 17 and 18), behind macros named after the newest release's API.
 *
 * The rest of src/ is written for the newest release; each difference is
 * one macro or inline function here that maps it onto the older releases,
 * selected by PG_VERSION_NUM.  Include it after postgres.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_PG_COMPAT_H
#define GPUHASH_PG_COMPAT_H

#include "postgres.h"

/*
 * PostgreSQL 18 marks functions that do not return with the C11 specifier
 * pg_noreturn before the declaration; older releases had the attribute
 * pg_attribute_noreturn() after it.
 */
#ifndef pg_noreturn
#define pg_noreturn _Noreturn
#endif

/*
 * PostgreSQL 16 marks a Var or PlaceHolderVar above an outer join with the
 * joins that can null it (varnullingrels, phnullingrels), and gives each
 * outer join a range table index of its own among a join's relids; older
 * releases have no such marks.
 */
#if PG_VERSION_NUM >= 160000
#define RelidsWithoutOuterJoins(root, relids) bms_difference((relids), (root)->outer_join_rels)
#define VarClearNullingRels(var) ((var)->varnullingrels = NULL)
#define PlaceHolderVarClearNullingRels(phv) ((phv)->phnullingrels = NULL)
#else
#define RelidsWithoutOuterJoins(root, relids) (relids)
#define VarClearNullingRels(var) ((void) (var))
#define PlaceHolderVarClearNullingRels(phv) ((void) (phv))
#endif

/*
 * PostgreSQL 16 plans GROUP BY from root->processed_groupClause: the query's
 * clause without constants and columns that other grouping columns
 * determine.  Older releases plan the query's own.
 */
/*
 * generate_join_implied_equalities: 16 added the outer join's SpecialJoinInfo
 * (none for the inner joins gpuhash asks about).
 */
#if PG_VERSION_NUM >= 160000
#define InnerJoinImpliedEqualities(root, joinrelids, outerrelids, innerrel) \
	generate_join_implied_equalities(root, joinrelids, outerrelids, innerrel, NULL)
#else
#define InnerJoinImpliedEqualities(root, joinrelids, outerrelids, innerrel) \
	generate_join_implied_equalities(root, joinrelids, outerrelids, innerrel)
#endif

#if PG_VERSION_NUM >= 160000
#define PlannerGroupClause(root) ((root)->processed_groupClause)
#else
#define PlannerGroupClause(root) ((root)->parse->groupClause)
#endif

/*
 * PostgreSQL 17 replaced PGPROC's pgprocno and lxid by MyProcNumber (a
 * process's number) and vxid.lxid.
 */
#if PG_VERSION_NUM < 170000
#define MyProcNumber (MyProc->pgprocno)
#define PGPROC_LXID(proc) ((proc)->lxid)
#else
#define PGPROC_LXID(proc) ((proc)->vxid.lxid)
#endif

/*
 * PostgreSQL 18 moved ExplainState to commands/explain_state.h and the
 * ExplainProperty functions to commands/explain_format.h.
 */
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif

/* A relation's tablespace, database and file number (PostgreSQL 16 renamed them) */
#if PG_VERSION_NUM >= 160000
#define RelationFileSpc(rel) ((rel)->rd_locator.spcOid)
#define RelationFileDb(rel) ((rel)->rd_locator.dbOid)
#define RelationFileNumber(rel) ((rel)->rd_locator.relNumber)
#else
#define RelationFileSpc(rel) ((rel)->rd_node.spcNode)
#define RelationFileDb(rel) ((rel)->rd_node.dbNode)
#define RelationFileNumber(rel) ((rel)->rd_node.relNode)
#endif

/*
 * EXPLAIN qualifies column names where the query has more than one range
 * table entry; PostgreSQL 18 adds one for the grouping step, which does not
 * count (ExplainState.rtable_size).
 */
#if PG_VERSION_NUM >= 180000
#define ExplainRtableSize(es) ((es)->rtable_size)
#else
#define ExplainRtableSize(es) list_length((es)->rtable)
#endif

/*
 * PostgreSQL 18's BuildTupleHashTable takes the input slot type and keeps a
 * hash entry's additional data (additionalsize bytes) beside its tuple, found
 * with TupleHashEntryGetAdditional; older releases had BuildTupleHashTableExt
 * and a pointer, entry->additional, that the caller sets.  Callers keep a
 * pointer in the additional data (additionalsize sizeof(void *)), which works
 * the same on both.
 */
#if PG_VERSION_NUM >= 180000
#define BuildTupleHashTableCompat BuildTupleHashTable
#else
#define BuildTupleHashTableCompat(parent, desc, ops, ncols, colidx, eqfuncs, hashfns, \
								  colls, nbuckets, addsize, metacxt, tablecxt, tempcxt, \
								  variable_iv) \
	BuildTupleHashTableExt(parent, desc, ncols, colidx, eqfuncs, hashfns, colls, \
						   nbuckets, addsize, metacxt, tablecxt, tempcxt, variable_iv)
#define TupleHashEntryGetAdditional(table, entry) ((void *) &(entry)->additional)
#endif

/*
 * PostgreSQL 18 compares the number of disabled nodes in paths (a Seq Scan
 * under enable_seqscan = off, ...) before their costs; a path counts those of
 * its inputs.  Older releases disabled nodes by cost alone.
 */
#if PG_VERSION_NUM >= 180000
#define PathDisabledNodes(path) ((path)->disabled_nodes)
#define SetPathDisabledNodes(path, n) ((path)->disabled_nodes = (n))
#define cost_agg_compat(path, root, strategy, aggcosts, ncols, groups, quals, startup, total, \
						rows, width) \
	cost_agg(path, root, strategy, aggcosts, ncols, groups, quals, 0, startup, total, rows, width)
#else
#define PathDisabledNodes(path) 0
#define SetPathDisabledNodes(path, n) ((void) (n))
#define cost_agg_compat cost_agg
#endif

/*
 * PostgreSQL 18 finds an operator's meaning in every index family that
 * orders (get_op_index_interpretation); older releases in btree families
 * (get_op_btree_interpretation).  Either is NIL for an operator that is no
 * comparison.
 */
#if PG_VERSION_NUM < 180000
#define get_op_index_interpretation(opno) get_op_btree_interpretation(opno)
#endif

/*
 * PostgreSQL 18 gives the grouping step a range table entry of its own
 * (RTE_GROUP): the target list and HAVING refer to the grouping columns
 * through its Vars, which under grouping sets carry its index in their
 * varnullingrels.  GroupingNullsRemoved(q, node): node without those marks,
 * for a level that no longer has the grouping sets.
 */
#if PG_VERSION_NUM >= 180000
#include "rewrite/rewriteManip.h"
static inline Node *
GroupingNullsRemoved(Query *q, Node *node)
{
	ListCell   *lc;
	int			i = 0;

	if (!q->hasGroupRTE)
		return node;
	foreach(lc, q->rtable)
	{
		i++;
		if (lfirst_node(RangeTblEntry, lc)->rtekind == RTE_GROUP)
			return remove_nulling_relids(node, bms_make_singleton(i), NULL);
	}
	return node;
}
#else
#define GroupingNullsRemoved(q, node) (node)
#endif

#endif							/* GPUHASH_PG_COMPAT_H */
