/*-------------------------------------------------------------------------
 *
 * join_exec.c
 *	  Executor half of GpuHashJoin: build the inner side into the engine,
 *	  probe the outer side chunk by chunk, form the joined rows.
 *
 * INTERFACE ROUTINES
 *		gpuhash_join_create_state	CreateCustomScanState callback
 *		(BeginGpuHashJoin, ExecGpuHashJoin, EndGpuHashJoin,
 *		 ReScanGpuHashJoin, ExplainGpuHashJoin: CustomExecMethods)
 *
 * The node is a state machine (GhjPhase, below; src/README, "Executor:
 * GpuHashJoin").  Rows are kept as columnar copies of the columns the node
 * needs (rowstore.c) and joined in the scan tuple.
 * A chunk whose pairs exceed one fetch is joined in runs of its probe keys,
 * so that a device failure never comes after pairs were returned and the
 * node can go on with the CPU backend (engine_ops.h).  The engine's table and
 * join live in device memory, which palloc cannot see: a reset callback on
 * the node's memory context frees them, so an error or cancel in mid-query
 * releases them with the query.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "nodes/makefuncs.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "optimizer/clauses.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "engine.h"
#include "engine_ops.h"
#include "join_filter.h"
#include "page_scan.h"
#include "gpuhash.h"
#include "join.h"
#include "keys.h"
#include "rowstore.h"
#include "scantuple.h"

typedef enum GhjPhase
{
	GHJ_BUILD,					/* read the inner input, build the table */
	GHJ_CHUNK,					/* read a chunk of outer rows, count its matches */
	GHJ_PAIRS,					/* fetch pairs: recheck, join quals, emit */
	GHJ_OUTER_REST,				/* a chunk's unmatched outer rows (LEFT, FULL,
								 * ANTI; SEMI and ANTI from the match flags) */
	GHJ_INNER_REST,				/* the unmatched inner rows (RIGHT, FULL) */
	GHJ_DONE
} GhjPhase;

/* How one side's keys are computed. */
typedef struct GhjKeySide
{
	List	   *exprs;			/* ExprState per key column */
	GpuHashExactFamily *family; /* exact encoding per column */
	Oid		   *types;
	FmgrInfo   *hashfn;			/* extended hash per column (hashed keys) */
} GhjKeySide;

typedef struct GpuHashJoinState
{
	CustomScanState css;
	JoinType	jointype;
	bool		exact;
	gh_kind		kind;
	int			nkeys;
	Oid		   *collations;
	GhjKeySide	okeys;
	GhjKeySide	ikeys;
	int		   *key_width;		/* exact keys: each column's bits in the key (keys.c) */
	int		   *key_shift;
	ExprState  *recheck;		/* the hash clauses, when keys are hashed */
	ExprState  *joinqual;
	bool		has_joinqual;

	GpuHashScanMap map;			/* scan tuple layout */
	PlanState  *outer_ps;
	PlanState  *inner_ps;
	int		   *store_col;		/* per scan column, its column in its side's store */

	MemoryContext node_cxt;		/* owns everything below; frees the engine's */
	MemoryContext inner_cxt;	/* inner rows and keys; reset on rebuild */
	MemoryContext chunk_cxt;	/* one outer chunk; reset per chunk */
	GhOps		eng;			/* where the engine runs (engine_ops.h) */

	/* inner side */
	GpuHashRowStore inner_rows;
	int64		ninner;
	bool	   *inner_matched;	/* RIGHT/FULL only */
	GhOpTable  *table;
	uint32		stat_devices;	/* devices the table was built on */
	bool		drop_unmatched; /* inner, semi, right: unmatched outer rows give nothing */
	GhjFilter	filter;			/* the inner keys (join_filter.c), when drop_unmatched */
	bool		built;

	/* current outer chunk */
	GpuHashRowStore outer_rows;
	int64		nouter;
	uint64	   *probe_keys;
	int64	   *probe_row;		/* probe position -> chunk row */
	int64		nprobe;
	bool	   *outer_matched;
	bool		outer_done;
	GhOpJoin   *join;			/* of probe keys [sub_lo, sub_hi) */
	int64		sub_lo;
	int64		sub_hi;
	bool		fetched;		/* its pairs are in the buffer */
	gh_pair    *pairs;
	size_t		pairs_alloc;	/* pairs the buffer holds */
	size_t		npairs;
	size_t		pair_pos;
	size_t		pair_cap;		/* pairs a join may have: gpuhash.chunk_rows */
	int64		rest_pos;
	bool		flags_only;		/* SEMI/ANTI answered by match flags */

	GhjPhase	phase;

	/* EXPLAIN ANALYZE */
	int64		stat_chunks;
	int64		stat_pairs;
	int64		stat_filtered;	/* outer rows the filter dropped */
	GhPageScan *outer_pages;	/* the outer side's pages, read directly */
	bool		outer_pages_begun;
	GhPageStats page_stats;
	double		stat_build_ms;
	double		stat_probe_ms;
	size_t		stat_peak_device;
	int			stat_partitions;
	bool		stat_broadcast; /* the inner side built whole on every device */
	Bitmapset  *inner_key_params;	/* PARAM_EXEC ids the inner keys read */
} GpuHashJoinState;

static void BeginGpuHashJoin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *ExecGpuHashJoin(CustomScanState *node);
static void EndGpuHashJoin(CustomScanState *node);
static void ReScanGpuHashJoin(CustomScanState *node);
static void ExplainGpuHashJoin(CustomScanState *node, List *ancestors,
							   ExplainState *es);

static CustomExecMethods gpuhash_join_exec_methods = {
	.CustomName = GPUHASH_JOIN_NAME,
	.BeginCustomScan = BeginGpuHashJoin,
	.ExecCustomScan = ExecGpuHashJoin,
	.EndCustomScan = EndGpuHashJoin,
	.ReScanCustomScan = ReScanGpuHashJoin,
	.ExplainCustomScan = ExplainGpuHashJoin,
};

Node *
gpuhash_join_create_state(CustomScan *cscan)
{
	GpuHashJoinState *s = palloc0(sizeof(GpuHashJoinState));

	NodeSetTag(s, T_CustomScanState);
	s->css.flags = cscan->flags;
	s->css.methods = &gpuhash_join_exec_methods;
	return (Node *) s;
}

/* Stop reading the outer side's pages directly (at its end, or a rescan). */
static void
end_outer_pages(GpuHashJoinState *s)
{
	if (s->outer_pages)
		gpuhash_page_scan_end(s->outer_pages, &s->page_stats);
	s->outer_pages = NULL;
	s->outer_pages_begun = false;
}

/* ---- engine objects: freed with the node's memory, whatever happens ---- */

static void
release_join(GpuHashJoinState *s)
{
	gpuhash_op_join_free(s->join);
	s->join = NULL;
}

static void
release_table(GpuHashJoinState *s)
{
	release_join(s);
	gpuhash_op_table_free(s->table);
	s->table = NULL;
}

static void
release_engine_objects(void *arg)
{
	release_table((GpuHashJoinState *) arg);
}

/* ---- initialisation ---- */

static void
init_key_side(GhjKeySide *side, List *exprs, List *types, List *hashfns,
			  int nkeys, PlanState *parent)
{
	ListCell   *lc;
	int			i = 0;

	side->exprs = ExecInitExprList(exprs, parent);
	side->family = palloc(sizeof(GpuHashExactFamily) * nkeys);
	side->types = palloc(sizeof(Oid) * nkeys);
	side->hashfn = palloc0(sizeof(FmgrInfo) * nkeys);
	foreach(lc, types)
	{
		side->types[i] = lfirst_oid(lc);
		side->family[i] = gpuhash_exact_family(side->types[i]);
		fmgr_info(list_nth_oid(hashfns, i), &side->hashfn[i]);
		i++;
	}
}

/* Which input columns each side's row store keeps, and where each scan column is. */
static void
init_row_stores(GpuHashJoinState *s)
{
	AttrNumber *attnos[2];
	int			n[2] = {0, 0};

	s->store_col = palloc(sizeof(int) * Max(s->map.ncols, 1));
	attnos[0] = palloc(sizeof(AttrNumber) * Max(s->map.ncols, 1));
	attnos[1] = palloc(sizeof(AttrNumber) * Max(s->map.ncols, 1));
	for (int i = 0; i < s->map.ncols; i++)
	{
		int			side = s->map.sides[i];
		int			c;

		for (c = 0; c < n[side]; c++)
			if (attnos[side][c] == s->map.attnos[i])
				break;
		if (c == n[side])
			attnos[side][n[side]++] = s->map.attnos[i];
		s->store_col[i] = c;
	}
	gpuhash_rowstore_init(&s->outer_rows, ExecGetResultType(s->outer_ps),
						  attnos[0], n[0], s->chunk_cxt);
	gpuhash_rowstore_init(&s->inner_rows, ExecGetResultType(s->inner_ps),
						  attnos[1], n[1], s->inner_cxt);
}

static void
BeginGpuHashJoin(CustomScanState *node, EState *estate, int eflags)
{
	GpuHashJoinState *s = (GpuHashJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	List	   *hashclauses = list_nth(cscan->custom_exprs, GHJ_EXPR_HASHCLAUSES);
	List	   *joinquals = list_nth(cscan->custom_exprs, GHJ_EXPR_JOINQUALS);
	List	   *sides = list_nth(priv, GHJ_PRIV_SIDES);
	List	   *attnos = list_nth(priv, GHJ_PRIV_ATTNOS);
	List	   *colls = list_nth(priv, GHJ_PRIV_COLLATIONS);
	MemoryContextCallback *cb;
	int			i;

	s->jointype = (JoinType) intVal(list_nth(priv, GHJ_PRIV_JOINTYPE));
	s->exact = intVal(list_nth(priv, GHJ_PRIV_EXACT)) != 0;
	s->kind = (gh_kind) intVal(list_nth(priv, GHJ_PRIV_TABLE));
	s->nkeys = list_length(hashclauses);

	s->outer_ps = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	s->inner_ps = ExecInitNode(lsecond(cscan->custom_plans), estate,
							   eflags & ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
	node->custom_ps = list_make2(s->outer_ps, s->inner_ps);

	gpuhash_scan_map_init(&s->map, sides, attnos);

	s->collations = palloc(sizeof(Oid) * Max(s->nkeys, 1));
	for (i = 0; i < s->nkeys; i++)
		s->collations[i] = list_nth_oid(colls, i);
	init_key_side(&s->okeys, list_nth(cscan->custom_exprs, GHJ_EXPR_OUTER_KEYS),
				  list_nth(priv, GHJ_PRIV_OUTER_TYPES), list_nth(priv, GHJ_PRIV_OUTER_HASH),
				  s->nkeys, &node->ss.ps);
	s->inner_key_params = pull_paramids((Expr *) list_nth(cscan->custom_exprs,
														  GHJ_EXPR_INNER_KEYS));
	init_key_side(&s->ikeys, list_nth(cscan->custom_exprs, GHJ_EXPR_INNER_KEYS),
				  list_nth(priv, GHJ_PRIV_INNER_TYPES), list_nth(priv, GHJ_PRIV_INNER_HASH),
				  s->nkeys, &node->ss.ps);
	s->key_width = palloc(sizeof(int) * Max(s->nkeys, 1));
	s->key_shift = palloc(sizeof(int) * Max(s->nkeys, 1));
	if (s->exact)
	{
		if (!gpuhash_exact_key_layout(s->nkeys, s->okeys.types, s->ikeys.types,
									  s->key_width, s->key_shift))
			elog(ERROR, "gpuhash: join keys planned as exact are not");
	}
	s->recheck = s->exact ? NULL : ExecInitQual(hashclauses, &node->ss.ps);
	s->joinqual = ExecInitQual(joinquals, &node->ss.ps);
	s->has_joinqual = (joinquals != NIL);
	s->drop_unmatched = s->jointype == JOIN_INNER || s->jointype == JOIN_SEMI ||
		s->jointype == JOIN_RIGHT;

	s->node_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashJoin",
										ALLOCSET_DEFAULT_SIZES);
	s->inner_cxt = AllocSetContextCreate(s->node_cxt, "GpuHashJoin inner",
										 ALLOCSET_DEFAULT_SIZES);
	s->chunk_cxt = AllocSetContextCreate(s->node_cxt, "GpuHashJoin chunk",
										 ALLOCSET_DEFAULT_SIZES);
	init_row_stores(s);
	cb = MemoryContextAlloc(s->node_cxt, sizeof(MemoryContextCallback));
	cb->func = release_engine_objects;
	cb->arg = s;
	MemoryContextRegisterResetCallback(s->node_cxt, cb);

	s->pair_cap = (size_t) gpuhash_chunk_rows;
	s->phase = GHJ_BUILD;
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	gpuhash_ops_init(&s->eng, s->node_cxt, GHST_JOIN_QUERIES);
	s->pairs = MemoryContextAllocHuge(s->node_cxt, sizeof(gh_pair) * s->pair_cap);
	s->pairs_alloc = s->pair_cap;
}

/* ---- scan tuple and keys ---- */

/* Fill the scan tuple from an input row and/or an inner row (NULL: nulls). */
static inline TupleTableSlot *
fill_scan_slot(GpuHashJoinState *s, TupleTableSlot *outer, TupleTableSlot *inner)
{
	return gpuhash_fill_scan_slot(&s->map, s->css.ss.ss_ScanTupleSlot, outer, inner);
}

/* Fill the scan tuple from stored rows: outer row orow, inner row irow (-1: nulls). */
static void
fill_joined(GpuHashJoinState *s, int64 orow, int64 irow)
{
	TupleTableSlot *scan = s->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(scan);
	for (int i = 0; i < s->map.ncols; i++)
	{
		const GpuHashRowStore *rs = s->map.sides[i] == 0 ? &s->outer_rows : &s->inner_rows;
		int64		row = s->map.sides[i] == 0 ? orow : irow;

		if (row < 0)
		{
			scan->tts_values[i] = (Datum) 0;
			scan->tts_isnull[i] = true;
		}
		else
		{
			int64		at = row * rs->ncols + s->store_col[i];

			scan->tts_values[i] = rs->values[at];
			scan->tts_isnull[i] = rs->isnull[at];
		}
	}
	ExecStoreVirtualTuple(scan);
}

/* The 64-bit key of the row now in the scan tuple; false if it is NULL. */
static bool
compute_key(GpuHashJoinState *s, GhjKeySide *side, uint64 *key)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	ListCell   *lc;
	int			i = 0;
	uint64		acc = 0;

	econtext->ecxt_scantuple = s->css.ss.ss_ScanTupleSlot;
	foreach(lc, side->exprs)
	{
		bool		isnull;
		Datum		d = ExecEvalExpr((ExprState *) lfirst(lc), econtext, &isnull);

		if (isnull)
			return false;
		if (s->exact)
			acc |= gpuhash_exact_key_column(side->family[i], side->types[i], d,
											s->key_width[i], s->key_shift[i]);
		else
			acc = gpuhash_combine_hash(acc,
									   DatumGetUInt64(FunctionCall2Coll(&side->hashfn[i],
																		s->collations[i],
																		d, Int64GetDatum(0))),
									   i);
		i++;
	}
	*key = acc;
	return true;
}

/* ---- phases ---- */

/*
 * The table's build input made again from the stored inner rows, for the
 * CPU fallback (GhOpRemakeKeys): the build's arrays are not kept.
 */
static void
remake_inner_keys(void *arg, uint64 **keys_out, uint64 **rows_out, size_t *n_out)
{
	GpuHashJoinState *s = (GpuHashJoinState *) arg;
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	uint64	   *keys = palloc_extended(sizeof(uint64) * Max(s->ninner, 1), MCXT_ALLOC_HUGE);
	uint64	   *rows = palloc_extended(sizeof(uint64) * Max(s->ninner, 1), MCXT_ALLOC_HUGE);
	size_t		n = 0;

	for (int64 r = 0; r < s->ninner; r++)
	{
		uint64		key;

		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		fill_joined(s, -1, r);
		if (!compute_key(s, &s->ikeys, &key))
			continue;
		keys[n] = key;
		rows[n] = (uint64) r;
		n++;
	}
	*keys_out = keys;
	*rows_out = rows;
	*n_out = n;
}

static void
build_inner(GpuHashJoinState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	int64		kcap = 1024,
				nkeys = 0;
	uint64	   *keys;
	uint64	   *rows;
	instr_time	start;
	MemoryContext old;
	GhPageScan *inner_pages;

	MemoryContextReset(s->inner_cxt);
	gpuhash_rowstore_clear(&s->inner_rows);
	old = MemoryContextSwitchTo(s->inner_cxt);
	keys = palloc(sizeof(uint64) * kcap);
	rows = palloc(sizeof(uint64) * kcap);
	MemoryContextSwitchTo(old);
	s->ninner = 0;

	inner_pages = gpuhash_page_scan_begin(s->inner_ps, gpuhash_scan_map_used(&s->map, 1), &s->eng);
	for (;;)
	{
		TupleTableSlot *slot = inner_pages ? gpuhash_page_scan_next(inner_pages) :
			ExecProcNode(s->inner_ps);
		uint64		key;
		bool		valid;

		if (TupIsNull(slot))
			break;
		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		fill_scan_slot(s, NULL, slot);
		valid = compute_key(s, &s->ikeys, &key);

		gpuhash_rowstore_add(&s->inner_rows, slot);
		if (valid)
		{
			if (nkeys == kcap)
			{
				kcap *= 2;
				keys = repalloc_huge(keys, sizeof(uint64) * kcap);
				rows = repalloc_huge(rows, sizeof(uint64) * kcap);
			}
			keys[nkeys] = key;
			rows[nkeys] = (uint64) s->ninner;	/* NULL keys leave gaps */
			nkeys++;
		}
		s->ninner++;
	}
	if (inner_pages)
		gpuhash_page_scan_end(inner_pages, &s->page_stats);

	if (s->jointype == JOIN_RIGHT || s->jointype == JOIN_FULL)
		s->inner_matched = MemoryContextAllocExtended(s->inner_cxt, Max(s->ninner, 1),
													  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);

	if (s->drop_unmatched)
	{
		old = MemoryContextSwitchTo(s->inner_cxt);
		gpuhash_filter_build(&s->filter, keys, nkeys);
		MemoryContextSwitchTo(old);
	}
	release_table(s);
	if (nkeys > 0)
	{
		INSTR_TIME_SET_CURRENT(start);
		s->table = gpuhash_op_build(&s->eng, s->kind, keys, rows, (size_t) nkeys);
		gpuhash_op_table_remake(s->table, remake_inner_keys, s);
		s->stat_devices |= s->table->devices;
		s->stat_build_ms += gpuhash_elapsed_ms(start);
		s->stat_partitions = s->table->partitions;
		s->stat_broadcast = s->table->broadcast;
	}
	pfree(keys);
	pfree(rows);
	s->built = true;
}

/*
 * Start the engine's join of the chunk's probe keys from lo on: as many of
 * them as have all their pairs fit one fetch of gpuhash.chunk_rows pairs (a
 * key with more pairs alone, its pairs fetched at once).
 */
static void
begin_subjoin(GpuHashJoinState *s, int64 lo)
{
	int64		hi = s->nprobe;
	size_t		cap = s->pair_cap;

	for (;;)
	{
		uint64		total;

		s->join = gpuhash_op_join_begin(s->table, s->probe_keys + lo, (size_t) (hi - lo),
										 GH_JOIN_PROBE, cap);
		total = s->join->total;
		if (total <= cap)
			break;
		release_join(s);
		if (hi - lo > 1)
			hi = lo + Max(1, (int64) ((double) (hi - lo) * (double) cap / (double) total));
		else
			cap = (size_t) total;
	}
	if (cap > s->pairs_alloc)
	{
		s->pairs = repalloc_huge(s->pairs, sizeof(gh_pair) * cap);
		s->pairs_alloc = cap;
	}
	s->sub_lo = lo;
	s->sub_hi = hi;
	s->fetched = false;
}

/* Read the next outer chunk and start its join; false when none is left. */
static bool
next_chunk(GpuHashJoinState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	int64		limit = gpuhash_chunk_rows;
	MemoryContext old;
	instr_time	start;

	release_join(s);
	MemoryContextReset(s->chunk_cxt);
	gpuhash_rowstore_clear(&s->outer_rows);
	if (s->outer_done)
		return false;

	old = MemoryContextSwitchTo(s->chunk_cxt);
	s->probe_keys = palloc_extended(sizeof(uint64) * limit, MCXT_ALLOC_HUGE);
	s->probe_row = palloc_extended(sizeof(int64) * limit, MCXT_ALLOC_HUGE);
	MemoryContextSwitchTo(old);
	s->nouter = 0;
	s->nprobe = 0;

	if (!s->outer_pages_begun)
	{
		s->outer_pages = gpuhash_page_scan_begin(s->outer_ps, gpuhash_scan_map_used(&s->map, 0),
												 &s->eng);
		s->outer_pages_begun = true;
	}
	while (s->nouter < limit)
	{
		TupleTableSlot *slot = s->outer_pages ? gpuhash_page_scan_next(s->outer_pages) :
			ExecProcNode(s->outer_ps);
		uint64		key;
		bool		valid;

		if (TupIsNull(slot))
		{
			s->outer_done = true;
			end_outer_pages(s);
			break;
		}
		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		fill_scan_slot(s, slot, NULL);
		valid = compute_key(s, &s->okeys, &key);
		/* a NULL key, or one no inner row has, matches nothing */
		if (s->drop_unmatched && (!valid || !gpuhash_filter_may_contain(&s->filter, key)))
		{
			s->stat_filtered++;
			continue;
		}
		if (valid)
		{
			s->probe_keys[s->nprobe] = key;
			s->probe_row[s->nprobe] = s->nouter;
			s->nprobe++;
		}
		gpuhash_rowstore_add(&s->outer_rows, slot);
		s->nouter++;
	}
	if (s->nouter == 0)
		return false;

	s->stat_chunks++;
	s->outer_matched = MemoryContextAllocZero(s->chunk_cxt, s->nouter);
	s->npairs = s->pair_pos = 0;
	s->rest_pos = 0;
	s->flags_only = (s->jointype == JOIN_SEMI || s->jointype == JOIN_ANTI) &&
		s->exact && !s->has_joinqual;

	if (s->table != NULL && s->nprobe > 0)
	{
		INSTR_TIME_SET_CURRENT(start);
		/*
		 * Lookup order, not list intersection: pairs then come in outer row
		 * order, so forming joined rows reads the chunk sequentially (the
		 * intersection's bucket order made those reads random, and the CPU,
		 * not the device, is what bounds this loop).
		 */
		if (s->flags_only)
		{
			uint8	   *flags = MemoryContextAlloc(s->chunk_cxt, s->nprobe);

			s->join = gpuhash_op_join_begin(s->table, s->probe_keys, (size_t) s->nprobe,
											 GH_JOIN_PROBE, 0);
			gpuhash_op_join_outer_matched(s->join, flags);
			for (int64 i = 0; i < s->nprobe; i++)
				if (flags[i])
					s->outer_matched[s->probe_row[i]] = true;
			release_join(s);
		}
		else
			begin_subjoin(s, 0);
		s->stat_probe_ms += gpuhash_elapsed_ms(start);
		s->stat_peak_device = Max(s->stat_peak_device,
								  gpuhash_ops_peak_device(&s->eng));
	}
	return true;
}

/* Evaluate the node's filter over the scan tuple and project. */
static TupleTableSlot *
emit(GpuHashJoinState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	ExprState  *qual = s->css.ss.ps.qual;

	econtext->ecxt_scantuple = s->css.ss.ss_ScanTupleSlot;
	if (qual != NULL && !ExecQual(qual, econtext))
	{
		InstrCountFiltered1(s, 1);
		return NULL;
	}
	if (s->css.ss.ps.ps_ProjInfo)
		return ExecProject(s->css.ss.ps.ps_ProjInfo);
	return s->css.ss.ss_ScanTupleSlot;
}

/* The next joined row from the pair buffer, or NULL once the chunk's pairs are done. */
static TupleTableSlot *
next_pair_row(GpuHashJoinState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;

	for (;;)
	{
		gh_pair    *p;
		int64		orow;
		TupleTableSlot *out;

		if (s->pair_pos == s->npairs)
		{
			instr_time	start;

			if (s->join == NULL)
				return NULL;
			CHECK_FOR_INTERRUPTS();
			INSTR_TIME_SET_CURRENT(start);
			if (s->fetched)
			{
				/* this join's pairs are done: the chunk's next probe keys */
				release_join(s);
				if (s->sub_hi >= s->nprobe)
				{
					s->stat_probe_ms += gpuhash_elapsed_ms(start);
					return NULL;
				}
				begin_subjoin(s, s->sub_hi);
			}
			s->npairs = gpuhash_op_join_next(s->join, s->pairs, s->pairs_alloc);
			s->fetched = true;
			s->stat_probe_ms += gpuhash_elapsed_ms(start);
			s->pair_pos = 0;
			s->stat_pairs += s->npairs;
			continue;
		}
		p = &s->pairs[s->pair_pos++];
		orow = s->probe_row[s->sub_lo + p->outer];
		if (s->jointype == JOIN_SEMI && s->outer_matched[orow])
			continue;

		ResetExprContext(econtext);
		fill_joined(s, orow, (int64) p->inner);
		econtext->ecxt_scantuple = s->css.ss.ss_ScanTupleSlot;
		if (s->recheck && !ExecQual(s->recheck, econtext))
			continue;
		if (s->has_joinqual && !ExecQual(s->joinqual, econtext))
		{
			InstrCountFiltered2(s, 1);
			continue;
		}
		s->outer_matched[orow] = true;
		if (s->inner_matched)
			s->inner_matched[p->inner] = true;
		if (s->jointype == JOIN_ANTI)
			continue;
		out = emit(s);
		if (out)
			return out;
	}
}

/*
 * The phase after the inner side is built (or kept for a rescan): the outer
 * rows' chunks; or, where no inner row has a key and unmatched outer rows are
 * dropped, straight to the unmatched inner rows without reading the outer
 * input, as PostgreSQL's Hash Join does not read it.
 */
static GhjPhase
phase_after_build(GpuHashJoinState *s)
{
	s->rest_pos = 0;
	return s->table == NULL && s->drop_unmatched ? GHJ_INNER_REST : GHJ_CHUNK;
}

/* Unmatched (or, for flag-only SEMI, matched) outer rows of the chunk. */
static TupleTableSlot *
next_outer_rest(GpuHashJoinState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	bool		want_matched = (s->jointype == JOIN_SEMI);

	if (s->jointype == JOIN_INNER || s->jointype == JOIN_RIGHT ||
		(s->jointype == JOIN_SEMI && !s->flags_only))
		return NULL;
	while (s->rest_pos < s->nouter)
	{
		int64		r = s->rest_pos++;
		TupleTableSlot *out;

		if (s->outer_matched[r] != want_matched)
			continue;
		ResetExprContext(econtext);
		fill_joined(s, r, -1);
		out = emit(s);
		if (out)
			return out;
	}
	return NULL;
}

static TupleTableSlot *
next_inner_rest(GpuHashJoinState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;

	if (s->inner_matched == NULL)
		return NULL;
	while (s->rest_pos < s->ninner)
	{
		int64		r = s->rest_pos++;
		TupleTableSlot *out;

		if (s->inner_matched[r])
			continue;
		ResetExprContext(econtext);
		fill_joined(s, -1, r);
		out = emit(s);
		if (out)
			return out;
	}
	return NULL;
}

static TupleTableSlot *
ExecGpuHashJoin(CustomScanState *node)
{
	GpuHashJoinState *s = (GpuHashJoinState *) node;
	TupleTableSlot *out;

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		switch (s->phase)
		{
			case GHJ_BUILD:
				build_inner(s);
				s->phase = phase_after_build(s);
				break;
			case GHJ_CHUNK:
				if (!next_chunk(s))
				{
					s->rest_pos = 0;
					s->phase = GHJ_INNER_REST;
				}
				else
					s->phase = s->flags_only ? GHJ_OUTER_REST : GHJ_PAIRS;
				break;
			case GHJ_PAIRS:
				if ((out = next_pair_row(s)) != NULL)
					return out;
				s->phase = GHJ_OUTER_REST;
				break;
			case GHJ_OUTER_REST:
				if ((out = next_outer_rest(s)) != NULL)
					return out;
				s->phase = GHJ_CHUNK;
				break;
			case GHJ_INNER_REST:
				if ((out = next_inner_rest(s)) != NULL)
					return out;
				s->phase = GHJ_DONE;
				break;
			case GHJ_DONE:
				return ExecClearTuple(s->css.ss.ps.ps_ResultTupleSlot);
		}
	}
}

static void
EndGpuHashJoin(CustomScanState *node)
{
	GpuHashJoinState *s = (GpuHashJoinState *) node;

	release_table(s);
	end_outer_pages(s);
	ExecEndNode(s->outer_ps);
	ExecEndNode(s->inner_ps);
}

static void
ReScanGpuHashJoin(CustomScanState *node)
{
	GpuHashJoinState *s = (GpuHashJoinState *) node;
	Bitmapset  *chg = node->ss.ps.chgParam;

	/* our children are not lefttree/righttree: pass parameter changes on */
	if (chg != NULL)
	{
		UpdateChangedParamSet(s->outer_ps, chg);
		UpdateChangedParamSet(s->inner_ps, chg);
	}
	end_outer_pages(s);
	release_join(s);
	MemoryContextReset(s->chunk_cxt);
	gpuhash_rowstore_clear(&s->outer_rows);
	s->outer_done = false;
	s->nouter = 0;
	s->npairs = s->pair_pos = 0;
	if (s->outer_ps->chgParam == NULL)
		ExecReScan(s->outer_ps);

	if (s->built && s->inner_ps->chgParam == NULL &&
		!bms_overlap(chg, s->inner_key_params))
	{
		/* the inner side and its keys are unchanged: keep the table */
		if (s->inner_matched)
			memset(s->inner_matched, 0, Max(s->ninner, 1));
		s->phase = phase_after_build(s);
	}
	else
	{
		release_table(s);
		s->built = false;
		if (s->inner_ps->chgParam == NULL)
			ExecReScan(s->inner_ps);
		s->phase = GHJ_BUILD;
	}
}

/* ---- EXPLAIN ---- */

static const char *
jointype_name(JoinType jt)
{
	switch (jt)
	{
		case JOIN_INNER:
			return "Inner";
		case JOIN_LEFT:
			return "Left";
		case JOIN_RIGHT:
			return "Right";
		case JOIN_FULL:
			return "Full";
		case JOIN_SEMI:
			return "Semi";
		case JOIN_ANTI:
			return "Anti";
		default:
			return "???";
	}
}

static void
explain_quals(List *quals, const char *label, CustomScanState *node,
			  List *ancestors, ExplainState *es)
{
	List	   *context;
	char	   *str;

	if (quals == NIL)
		return;
	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	str = deparse_expression((Node *) make_ands_explicit(quals), context,
							 ExplainRtableSize(es) > 1 || es->verbose, false);
	ExplainPropertyText(label, str, es);
}

static void
ExplainGpuHashJoin(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuHashJoinState *s = (GpuHashJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	JoinType	jt = (JoinType) intVal(list_nth(priv, GHJ_PRIV_JOINTYPE));
	bool		exact = intVal(list_nth(priv, GHJ_PRIV_EXACT)) != 0;
	gh_kind		kind = (gh_kind) intVal(list_nth(priv, GHJ_PRIV_TABLE));

	ExplainPropertyText("Join Type", jointype_name(jt), es);
	explain_quals(list_nth(cscan->custom_exprs, GHJ_EXPR_HASHCLAUSES), "Hash Cond",
				  node, ancestors, es);
	explain_quals(list_nth(cscan->custom_exprs, GHJ_EXPR_JOINQUALS), "Join Filter",
				  node, ancestors, es);
	ExplainPropertyText("Table", kind == GH_KIND_BCHT ? "bcht" : "hashgraph", es);
	ExplainPropertyText("Keys", exact ? "exact" : "hashed, rechecked", es);
	/* the device differs between machines: keep it out of COSTS OFF output */
	if (es->costs)
		ExplainPropertyText("Device", gpuhash_device_label(), es);
	if (es->analyze && s->built)
	{
		ExplainPropertyInteger("Inner Rows", NULL, s->ninner, es);
		if (s->drop_unmatched)
			ExplainPropertyInteger("Outer Rows Filtered", NULL, s->stat_filtered, es);
		if (es->costs)
			gpuhash_page_stats_explain(&s->page_stats, "Heap", es);
		ExplainPropertyInteger("Chunks", NULL, s->stat_chunks, es);
		ExplainPropertyInteger("Partitions", NULL, s->stat_partitions, es);
		if (s->stat_broadcast)
			ExplainPropertyText("Inner Side", "built on every device", es);
		if (es->timing)
		{
			ExplainPropertyFloat("Build Time", "ms", s->stat_build_ms, 3, es);
			ExplainPropertyFloat("Probe Time", "ms", s->stat_probe_ms, 3, es);
		}
		if (es->costs)
		{
			ExplainPropertyInteger("Peak Device Memory", "kB",
								   (int64) (s->stat_peak_device / 1024), es);
			ExplainPropertyText("Engine", gpuhash_ops_where(&s->eng), es);
			if (s->stat_devices)
				ExplainPropertyText("Devices Used", gpuhash_devices_text(s->stat_devices), es);
		}
		gpuhash_ops_explain(&s->eng, es);
	}
}
