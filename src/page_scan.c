/*-------------------------------------------------------------------------
 *
 * page_scan.c
 *	  Reading a Seq Scan's heap pages directly, shipping them to the
 *	  engine (see page_scan.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/predicate.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gpuhash.h"
#include "heap_page.h"
#include "page_ops.h"
#include "page_scan.h"

/* heap_page.h spells out PostgreSQL's layout: hold it to it */
StaticAssertDecl(SizeOfPageHeaderData == GH_PAGE_HEADER_SIZE, "page header size");
StaticAssertDecl(offsetof(PageHeaderData, pd_lower) == GH_PAGE_LOWER_OFF, "pd_lower");
StaticAssertDecl(sizeof(ItemIdData) == GH_ITEMID_SIZE, "line pointer size");
StaticAssertDecl(LP_NORMAL == GH_LP_NORMAL, "LP_NORMAL");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_infomask2) == GH_TUP_INFOMASK2_OFF, "t_infomask2");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_infomask) == GH_TUP_INFOMASK_OFF, "t_infomask");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_hoff) == GH_TUP_HOFF_OFF, "t_hoff");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_bits) == GH_TUP_BITS_OFF, "t_bits");
StaticAssertDecl(HEAP_HASNULL == GH_TUP_HASNULL, "HEAP_HASNULL");
StaticAssertDecl(HEAP_NATTS_MASK == GH_TUP_NATTS_MASK, "HEAP_NATTS_MASK");
StaticAssertDecl(BLCKSZ % 16 == 0, "BLCKSZ");
/* and what gh_tuple_visibility reads of it */
StaticAssertDecl(offsetof(PageHeaderData, pd_flags) == GH_PAGE_FLAGS_OFF, "pd_flags");
StaticAssertDecl(PD_ALL_VISIBLE == GH_PD_ALL_VISIBLE, "PD_ALL_VISIBLE");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_choice.t_heap.t_xmin) == GH_TUP_XMIN_OFF, "t_xmin");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_choice.t_heap.t_xmax) == GH_TUP_XMAX_OFF, "t_xmax");
StaticAssertDecl(HEAP_XMAX_KEYSHR_LOCK == GH_TUP_XMAX_KEYSHR_LOCK, "HEAP_XMAX_KEYSHR_LOCK");
StaticAssertDecl(HEAP_XMAX_EXCL_LOCK == GH_TUP_XMAX_EXCL_LOCK, "HEAP_XMAX_EXCL_LOCK");
StaticAssertDecl(HEAP_XMAX_LOCK_ONLY == GH_TUP_XMAX_LOCK_ONLY, "HEAP_XMAX_LOCK_ONLY");
StaticAssertDecl(HEAP_LOCK_MASK == GH_TUP_LOCK_MASK, "HEAP_LOCK_MASK");
StaticAssertDecl(HEAP_XMIN_COMMITTED == GH_TUP_XMIN_COMMITTED, "HEAP_XMIN_COMMITTED");
StaticAssertDecl(HEAP_XMIN_INVALID == GH_TUP_XMIN_INVALID, "HEAP_XMIN_INVALID");
StaticAssertDecl(HEAP_XMIN_FROZEN == GH_TUP_XMIN_FROZEN, "HEAP_XMIN_FROZEN");
StaticAssertDecl(HEAP_XMAX_COMMITTED == GH_TUP_XMAX_COMMITTED, "HEAP_XMAX_COMMITTED");
StaticAssertDecl(HEAP_XMAX_INVALID == GH_TUP_XMAX_INVALID, "HEAP_XMAX_INVALID");
StaticAssertDecl(HEAP_XMAX_IS_MULTI == GH_TUP_XMAX_IS_MULTI, "HEAP_XMAX_IS_MULTI");
StaticAssertDecl(FirstNormalTransactionId == 3, "FirstNormalTransactionId");

struct GhPageScan
{
	SeqScanState *ss;
	Relation	rel;
	TupleDesc	desc;
	Snapshot	snapshot;
	MemoryContext cxt;
	bool		ship;
	bool		ship_judged;	/* pages not all-visible are shipped too (WAL-logged) */
	bool		plain_tlist;	/* the scan outputs columns: no projection, or Vars only */
	gh_pagespec spec;
	AttrNumber	out_att[GH_PAGE_MAX_OUT];	/* heap attribute of each column */
	bool		varlena_out[GH_PAGE_MAX_OUT];	/* a varlena: its value points into the page */
	bool		hold;			/* some are: a batch's pages stay pinned while it is used */

	/* blocks: the parallel scan's shared allocator, or 0..nblocks-1 */
	ParallelBlockTableScanDesc pbscan;
	ParallelBlockTableScanWorkerData pbwork;
	bool		pstarted;
	BlockNumber next_block;
	BlockNumber nblocks;
	bool		done;
	BufferAccessStrategy strategy;

	/* the batch: shipped pages (pinned) and rows read on the CPU */
	GhOps	   *ops;
	GhOpPages  *shipping;		/* made at the first extraction */
	GhOpPoolPages *feed;		/* or: shipped pages go straight into a pool */
	uint32	   *ids;			/* the shipped pages' buffer numbers less one */
	int			max_pages;
	int			nship;
	Buffer	   *bufs;
	XLogRecPtr *lsns;
	bool	   *dropped;
	Buffer	   *held;			/* with hold: the pages the batch's rows point into */
	int			nheld;
	gh_pagerows cpu;
	int			cpu_pages;		/* read on the CPU in this batch */
	Datum	   *values;			/* one tuple deformed by PostgreSQL */
	bool	   *isnull;

	/* delivering the batch: CPU rows, then each kept shipped page's rows */
	size_t		cpu_cur;
	int			cur_page;
	const gh_pagerows *run_rows;	/* next_row's run: rows [run_cur, run_end) */
	size_t		run_cur;
	size_t		run_end;

	TupleTableSlot *row;		/* the heap row, virtual */
	double		returned;
	GhPageStats stats;
};

static AttrNumber plain_output(Index scanrelid, Expr *expr, GhPageMod *mod);

/* The heap attributes of the Vars of scanrelid in node: false if any is not a column. */
static bool
add_columns(Node *node, Index scanrelid, Bitmapset **atts)
{
	Bitmapset  *found = NULL;
	int			x = -1;

	pull_varattnos(node, scanrelid, &found);
	while ((x = bms_next_member(found, x)) >= 0)
	{
		AttrNumber	a = x + FirstLowInvalidHeapAttributeNumber;

		if (a <= 0)
			return false;		/* a system column or the whole row */
		*atts = bms_add_member(*atts, a);
	}
	return true;
}

/* Does line pointer packing match heap_page.h's reading of it? */
static bool
line_pointer_layout_ok(void)
{
	ItemIdData	id;
	uint32		w;

	ItemIdSetNormal(&id, 4096, 1234);
	memcpy(&w, &id, sizeof(w));
	return w == (4096u | (GH_LP_NORMAL << 15) | (1234u << 17));
}

/*
 * Can the pages of input, a Seq Scan, be read directly?  An ordinary heap
 * table in shared buffers, an MVCC snapshot (not SERIALIZABLE: its
 * predicate locks are the scan's per-tuple business), no EvalPlanQual.
 */
bool
gpuhash_heap_pages_readable(PlanState *input)
{
	Relation	rel;
	EState	   *estate = input->state;

	if (!IsA(input, SeqScanState))
		return false;
	rel = ((SeqScanState *) input)->ss.ss_currentRelation;
	return rel != NULL && rel->rd_tableam == GetHeapamTableAmRoutine() &&
		(rel->rd_rel->relkind == RELKIND_RELATION || rel->rd_rel->relkind == RELKIND_MATVIEW) &&
		!RelationUsesLocalBuffers(rel) && estate->es_epq_active == NULL &&
		IsMVCCSnapshot(estate->es_snapshot) && !IsolationIsSerializable() &&
		line_pointer_layout_ok();
}

/* The page description of the columns needed, or false if they cannot be read so. */
static bool
make_spec(GhPageScan *ps, const Bitmapset *needed)
{
	int			maxatt = 0;
	int			x = -1;

	if (bms_is_empty(needed) || bms_num_members(needed) > GH_PAGE_MAX_OUT)
		return false;
	while ((x = bms_next_member(needed, x)) >= 0)
		maxatt = x;
	if (maxatt > GH_PAGE_MAX_ATTS || maxatt > ps->desc->natts)
		return false;
	memset(&ps->spec, 0, sizeof(ps->spec));
	ps->spec.page_size = BLCKSZ;
	ps->spec.max_tuples = MaxHeapTuplesPerPage;
	ps->spec.natts = maxatt;
	for (int a = 1; a <= maxatt; a++)
	{
		Form_pg_attribute att = TupleDescAttr(ps->desc, a - 1);

		if (att->attlen <= 0 && att->attlen != -1)
			return false;		/* a cstring */
		ps->spec.attlen[a - 1] = att->attlen;
		ps->spec.attalign[a - 1] = att_align_nominal(1, att->attalign) == 1 ? 1 :
			(uint8) att_align_nominal(1, att->attalign);
		ps->spec.out_of[a - 1] = -1;
		if (!bms_is_member(a, needed))
			continue;
		if (att->atthasmissing || att->attisdropped ||
			!(att->attlen == -1 || (att->attbyval && (att->attlen == 1 || att->attlen == 2 ||
													  att->attlen == 4 || att->attlen == 8))))
			return false;
		ps->varlena_out[ps->spec.nout] = att->attlen == -1;
		ps->hold |= att->attlen == -1;
		ps->spec.out_of[a - 1] = (int8) ps->spec.nout;
		ps->out_att[ps->spec.nout++] = a;
	}
	return true;
}

GhPageScan *
gpuhash_page_scan_begin(PlanState *input, const Bitmapset *used, GhOps *ops)
{
	SeqScanState *ss;
	Relation	rel;
	EState	   *estate = input->state;
	Bitmapset  *needed = NULL;
	Scan	   *plan;
	GhPageScan *ps;
	MemoryContext cxt,
				old;
	TableScanDesc sd;

	if (!gpuhash_read_pages || !gpuhash_heap_pages_readable(input))
		return NULL;
	ss = (SeqScanState *) input;
	plan = (Scan *) input->plan;
	rel = ss->ss.ss_currentRelation;
	/* the columns the scan reads: its quals', and its output's */
	if (!add_columns((Node *) plan->plan.qual, plan->scanrelid, &needed))
		return NULL;
	if (input->ps_ProjInfo != NULL)
	{
		if (!add_columns((Node *) plan->plan.targetlist, plan->scanrelid, &needed))
			return NULL;
	}
	else
		needed = bms_union(needed, used);

	cxt = AllocSetContextCreate(estate->es_query_cxt, "gpuhash page scan",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	ps = palloc0(sizeof(GhPageScan));
	ps->cxt = cxt;
	ps->ss = ss;
	ps->rel = rel;
	ps->desc = RelationGetDescr(rel);
	ps->plain_tlist = true;
	if (input->ps_ProjInfo != NULL)
	{
		ListCell   *lc;

		foreach(lc, plan->plan.targetlist)
		{
			GhPageMod	mod;

			if (plain_output(plan->scanrelid, lfirst_node(TargetEntry, lc)->expr, &mod) == 0)
				ps->plain_tlist = false;
		}
	}
	ps->snapshot = estate->es_snapshot;
	if (!make_spec(ps, needed))
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return NULL;
	}
	sd = ss->ss.ss_currentScanDesc;
	if (plan->plan.parallel_aware && sd != NULL && sd->rs_parallel != NULL)
		ps->pbscan = (ParallelBlockTableScanDesc) sd->rs_parallel;
	else
		ps->nblocks = RelationGetNumberOfBlocks(rel);
	/* like a Seq Scan: a table larger than a quarter of the buffers uses a ring */
	if (RelationGetNumberOfBlocks(rel) > (BlockNumber) (NBuffers / 4))
		ps->strategy = GetAccessStrategy(BAS_BULKREAD);

	/* pins held per batch stay a small share of the buffers */
	ps->max_pages = Min(2048, Max(8, NBuffers / 128));
	ps->ship = gpuhash_ship_pages;

	/*
	 * Pages that are not all-visible are read the same way, their tuples
	 * judged by their hint bits against the snapshot's xmin (heap_page.h,
	 * gh_page_tuple), a page with one they cannot judge read again below.
	 * A shipped page is checked by its LSN after the engine read it
	 * (page_ops.h: GPUHASH_LSN_NOT_ALL_VISIBLE), which only WAL-logged
	 * tables keep moving: an unlogged table's pages that are not all-visible
	 * are taken out here instead, share-locked throughout, while its
	 * all-visible pages are shipped (checked by their PD_ALL_VISIBLE, which
	 * any change clears).
	 */
	ps->spec.vis_horizon = gpuhash_vis_horizon(ps->snapshot);
	ps->ship_judged = RelationNeedsWAL(rel);
	ps->bufs = palloc(sizeof(Buffer) * ps->max_pages);
	ps->ids = palloc(sizeof(uint32) * ps->max_pages);
	ps->lsns = palloc(sizeof(XLogRecPtr) * ps->max_pages);
	ps->dropped = palloc0(sizeof(bool) * ps->max_pages);
	if (ps->hold)
		ps->held = palloc(sizeof(Buffer) * 2 * ps->max_pages);
	ps->cpu.cap = (size_t) 2 * ps->max_pages * MaxHeapTuplesPerPage;
	ps->cpu.first = palloc(sizeof(uint32) * (2 * ps->max_pages + 1));
	ps->cpu.bad = palloc(2 * ps->max_pages);
	for (int o = 0; o < ps->spec.nout; o++)
	{
		ps->cpu.values[o] = palloc_extended(sizeof(uint64) * ps->cpu.cap, MCXT_ALLOC_HUGE);
		ps->cpu.nulls[o] = palloc_extended(ps->cpu.cap, MCXT_ALLOC_HUGE);
	}
	ps->values = palloc(sizeof(Datum) * ps->desc->natts);
	ps->isnull = palloc(sizeof(bool) * ps->desc->natts);
	ps->row = MakeSingleTupleTableSlot(ps->desc, &TTSOpsVirtual);
	for (int a = 0; a < ps->desc->natts; a++)
	{
		ps->row->tts_values[a] = (Datum) 0;
		ps->row->tts_isnull[a] = true;
	}
	MemoryContextSwitchTo(old);
	ps->ops = ops;
	if (input->instrument)
		InstrStartNode(input->instrument);
	return ps;
}

static BlockNumber
next_block(GhPageScan *ps)
{
	if (ps->pbscan)
	{
		if (!ps->pstarted)
		{
			table_block_parallelscan_startblock_init(ps->rel, &ps->pbwork, ps->pbscan);
			ps->pstarted = true;
		}
		return table_block_parallelscan_nextpage(ps->rel, &ps->pbwork, ps->pbscan);
	}
	if (ps->next_block >= ps->nblocks)
		return InvalidBlockNumber;
	return ps->next_block++;
}

/*
 * Done with a share-locked page of the batch: unlocked, and unpinned unless
 * the batch's rows point into it (hold).
 */
static void
page_done(GhPageScan *ps, Buffer buf)
{
	if (!ps->hold)
	{
		UnlockReleaseBuffer(buf);
		return;
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	ps->held[ps->nheld++] = buf;
}

/* Unpin the pages the last batch's rows pointed into. */
static void
release_held(GhPageScan *ps)
{
	for (int i = 0; i < ps->nheld; i++)
		ReleaseBuffer(ps->held[i]);
	ps->nheld = 0;
}

/*
 * Rows [first, end) of rows were read from page: their varlena columns,
 * offsets in it, made pointers into it (the page stays pinned: hold).
 */
static void
point_into(GhPageScan *ps, gh_pagerows *rows, size_t first, size_t end, Page page)
{
	for (int o = 0; o < ps->spec.nout; o++)
		if (ps->varlena_out[o])
			for (size_t r = first; r < end; r++)
				if (!rows->nulls[o][r])
					rows->values[o][r] = (uint64) PointerGetDatum((char *) page +
																   rows->values[o][r]);
}

/*
 * Read a share-locked page as a Seq Scan does: each tuple checked against
 * the snapshot and deformed by PostgreSQL, into the CPU rows.
 */
static void
read_checked(GhPageScan *ps, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blk = BufferGetBlockNumber(buf);
	OffsetNumber lines = PageGetMaxOffsetNumber(page);
	bool		all_visible = PageIsAllVisible(page) && !ps->snapshot->takenDuringRecovery;
	size_t		r = ps->cpu.nrows;

	for (OffsetNumber off = FirstOffsetNumber; off <= lines; off++)
	{
		ItemId		lpp = PageGetItemId(page, off);
		HeapTupleData tup;
		bool		valid;

		if (!ItemIdIsNormal(lpp))
			continue;
		tup.t_tableOid = RelationGetRelid(ps->rel);
		tup.t_data = (HeapTupleHeader) PageGetItem(page, lpp);
		tup.t_len = ItemIdGetLength(lpp);
		ItemPointerSet(&tup.t_self, blk, off);
		valid = all_visible || HeapTupleSatisfiesVisibility(&tup, ps->snapshot, buf);
		if (!valid)
			continue;
		heap_deform_tuple(&tup, ps->desc, ps->values, ps->isnull);
		for (int o = 0; o < ps->spec.nout; o++)
		{
			int			a = ps->out_att[o] - 1;

			ps->cpu.values[o][r] = (uint64) ps->values[a];
			ps->cpu.nulls[o][r] = ps->isnull[a];
		}
		r++;
	}
	ps->cpu.nrows = r;
	ps->cpu_pages++;
	ps->stats.checked++;
}

/*
 * After the engine has read the shipped pages: with check, check each under
 * a share lock (gpuhash_page_unchanged; dropped[p] already set for a page
 * that must be read again anyway); read again on the CPU, under a share
 * lock, those dropped; unpin them all.
 */
static void
settle_shipped(GhPageScan *ps, bool check)
{
	for (int p = 0; p < ps->nship; p++)
	{
		Buffer		buf = ps->bufs[p];

		if (check)
		{
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			ps->dropped[p] = ps->dropped[p] ||
				!gpuhash_page_unchanged(BufferGetPage(buf), ps->lsns[p]) ||
				(gpuhash_debug_reread_pages && p % 2 == 0);
		}
		if (!ps->dropped[p])
		{
			ps->stats.shipped++;
			if (ps->hold)
			{
				gh_pagerows *rows = &ps->shipping->rows;

				Assert(check);
				point_into(ps, rows, rows->first[p], rows->first[p + 1], BufferGetPage(buf));
				page_done(ps, buf);
			}
			else if (check)
				UnlockReleaseBuffer(buf);
			else
				ReleaseBuffer(buf);
			continue;
		}
		if (!check)
			LockBuffer(buf, BUFFER_LOCK_SHARE);
		/* a page not all-visible that did not change: the engine could not judge a tuple */
		if ((ps->lsns[p] & GPUHASH_LSN_NOT_ALL_VISIBLE) &&
			gpuhash_page_unchanged(BufferGetPage(buf), ps->lsns[p]))
			ps->stats.undecided++;
		else
			ps->stats.reread++;
		read_checked(ps, buf);
		page_done(ps, buf);
	}
}

/*
 * Shipped pages straight into the pool: the service reads them, checks
 * each under its content lock, and appends the rows of those that held;
 * the others are read here (under a share lock, as any page) into the
 * CPU rows.  The shipped pages then have no rows left in the batch.
 */
static void
feed_batch(GhPageScan *ps)
{
	uint64		rows;

	memcpy(ps->feed->pages, ps->ids, sizeof(uint32) * ps->nship);
	for (int p = 0; p < ps->nship; p++)
	{
		/*
		 * gpuhash.debug_reread_pages: every other page is sent with an LSN it
		 * does not have, so that the service's own check drops it
		 */
		ps->feed->lsns[p] = ps->lsns[p] ^ (gpuhash_debug_reread_pages && p % 2 == 0 ? 1 : 0);
		ps->feed->dropped[p] = 0;
	}
	rows = gpuhash_op_pool_pages(ps->feed, ps->nship);
	for (int p = 0; p < ps->nship; p++)
		ps->dropped[p] = ps->feed->dropped[p] != 0;
	settle_shipped(ps, false);
	ps->returned += (double) rows;
	ps->stats.rows_direct += (int64) rows;
	ps->stats.rows_pooled += (int64) rows;
	ps->nship = 0;
	/* a pool fallen back on the CPU takes no more pages: they are extracted */
	if (ps->feed->fell_back)
	{
		gpuhash_op_pool_pages_end(ps->feed);
		ps->feed = NULL;
	}
}

/* Take the next batch of pages: false when there are no more rows at all. */
static bool
next_batch(GhPageScan *ps)
{
	release_held(ps);
	ps->cpu.nrows = 0;
	ps->cpu_pages = 0;
	ps->nship = 0;
	ps->cpu_cur = 0;
	ps->cur_page = -1;
	while (!ps->done && ps->nship < ps->max_pages && ps->cpu_pages < ps->max_pages)
	{
		BlockNumber blk = next_block(ps);
		Buffer		buf;
		Page		page;
		bool		all_visible;

		if (blk == InvalidBlockNumber)
		{
			ps->done = true;
			break;
		}
		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferExtended(ps->rel, MAIN_FORKNUM, blk, RBM_NORMAL, ps->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		all_visible = PageIsAllVisible(page) && !ps->snapshot->takenDuringRecovery;
		if (all_visible || (ps->spec.vis_horizon != 0 && !PageIsNew(page)))
		{
			if (!all_visible)
				ps->stats.not_all_visible++;
			if (ps->ship && (all_visible || ps->ship_judged))
			{
				/* keep the pin: the page stays in its buffer while the engine reads it */
				ps->lsns[ps->nship] = PageGetLSN(page) |
					(all_visible ? 0 : GPUHASH_LSN_NOT_ALL_VISIBLE);
				LockBuffer(buf, BUFFER_LOCK_UNLOCK);
				ps->ids[ps->nship] = (uint32) (buf - 1);
				ps->bufs[ps->nship++] = buf;
				continue;
			}
			else
			{
				long		rows = gh_page_extract((const uint8_t *) page, &ps->spec,
												   &ps->cpu, ps->cpu.nrows);

				if (rows >= 0)
				{
					point_into(ps, &ps->cpu, ps->cpu.nrows, ps->cpu.nrows + rows, page);
					ps->cpu.nrows += rows;
					ps->cpu_pages++;
					ps->stats.direct++;
					page_done(ps, buf);
					continue;
				}
				if (!all_visible)
					ps->stats.undecided++;
			}
		}
		read_checked(ps, buf);
		page_done(ps, buf);
	}
	if (ps->nship > 0 && ps->feed != NULL)
		feed_batch(ps);
	else if (ps->nship > 0)
	{
		if (ps->shipping == NULL)
			ps->shipping = gpuhash_op_pages_begin(ps->ops, &ps->spec, ps->max_pages, ps->cxt);
		memcpy(ps->shipping->pages, ps->ids, sizeof(uint32) * ps->nship);
		gpuhash_op_pages_extract(ps->shipping, ps->nship);
		for (int p = 0; p < ps->nship; p++)
			ps->dropped[p] = ps->shipping->rows.bad[p];
		settle_shipped(ps, true);
	}
	return !(ps->done && ps->cpu.nrows == 0 && ps->nship == 0);
}

/*
 * The next run of rows of the batch (the CPU rows, then each kept shipped
 * page's), taking the next batch when this one is used up: false at the end.
 */
static bool
next_run(GhPageScan *ps, const gh_pagerows **rows, size_t *first, size_t *end)
{
	for (;;)
	{
		if (ps->cpu_cur < ps->cpu.nrows)
		{
			*rows = &ps->cpu;
			*first = ps->cpu_cur;
			*end = ps->cpu.nrows;
			ps->cpu_cur = ps->cpu.nrows;
			return true;
		}
		if (ps->shipping != NULL && ps->cur_page + 1 < ps->nship)
		{
			const gh_pagerows *sh = &ps->shipping->rows;
			int			p = ++ps->cur_page;

			if (ps->dropped[p] || sh->first[p] == sh->first[p + 1])
				continue;
			*rows = sh;
			*first = sh->first[p];
			*end = sh->first[p + 1];
			return true;
		}
		if (!next_batch(ps))
			return false;
	}
}

/* The next row into the heap row: false at the end. */
static bool
next_row(GhPageScan *ps)
{
	TupleTableSlot *row = ps->row;
	size_t		r;

	if (ps->run_cur >= ps->run_end &&
		!next_run(ps, &ps->run_rows, &ps->run_cur, &ps->run_end))
		return false;
	r = ps->run_cur++;
	ExecClearTuple(row);
	for (int o = 0; o < ps->spec.nout; o++)
	{
		int			a = ps->out_att[o] - 1;

		row->tts_values[a] = (Datum) ps->run_rows->values[o][r];
		row->tts_isnull[a] = ps->run_rows->nulls[o][r] != 0;
	}
	ExecStoreVirtualTuple(row);
	return true;
}

TupleTableSlot *
gpuhash_page_scan_next(GhPageScan *ps)
{
	ScanState  *scan = &ps->ss->ss;
	ExprContext *econtext = scan->ps.ps_ExprContext;
	ExprState  *qual = scan->ps.qual;
	ProjectionInfo *proj = scan->ps.ps_ProjInfo;

	for (;;)
	{
		if (!next_row(ps))
			return NULL;
		if (qual == NULL && proj == NULL)
		{
			ps->returned++;
			return ps->row;
		}
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = ps->row;
		if (qual != NULL && !ExecQual(qual, econtext))
		{
			InstrCountFiltered1(scan, 1);
			continue;
		}
		ps->returned++;
		return proj ? ExecProject(proj) : ps->row;
	}
}

void
gpuhash_page_scan_end(GhPageScan *ps, GhPageStats *stats)
{
	PlanState  *input = &ps->ss->ss.ps;

	if (input->instrument)
		InstrStopNode(input->instrument, ps->returned);
	release_held(ps);
	if (ps->shipping)
		gpuhash_op_pages_end(ps->shipping);
	if (ps->feed)
		gpuhash_op_pool_pages_end(ps->feed);
	if (ps->strategy)
		FreeAccessStrategy(ps->strategy);
	ExecDropSingleTupleTableSlot(ps->row);
	stats->shipped += ps->stats.shipped;
	stats->direct += ps->stats.direct;
	stats->checked += ps->stats.checked;
	stats->reread += ps->stats.reread;
	stats->not_all_visible += ps->stats.not_all_visible;
	stats->undecided += ps->stats.undecided;
	stats->rows_direct += ps->stats.rows_direct;
	stats->rows_pooled += ps->stats.rows_pooled;
	MemoryContextDelete(ps->cxt);
}

void
gpuhash_page_stats_explain(const GhPageStats *stats, const char *what, ExplainState *es)
{
	if (stats->shipped + stats->direct + stats->checked == 0)
		return;
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		char	   *s = psprintf("shipped=" INT64_FORMAT " read in backend=" INT64_FORMAT
								 " with visibility checks=" INT64_FORMAT
								 " reread after a change=" INT64_FORMAT,
								 stats->shipped, stats->direct, stats->checked, stats->reread);

		if (stats->not_all_visible > 0)
			s = psprintf("%s not all-visible=" INT64_FORMAT " visibility undecided=" INT64_FORMAT,
						 s, stats->not_all_visible, stats->undecided);
		ExplainPropertyText(psprintf("%s Pages", what), s, es);
		if (stats->rows_direct > 0)
			ExplainPropertyInteger(psprintf("%s Rows Taken Directly", what), NULL,
								   stats->rows_direct, es);
		if (stats->rows_pooled > 0)
			ExplainPropertyInteger(psprintf("%s Rows Pooled by the GPU Service", what), NULL,
								   stats->rows_pooled, es);
	}
	else
	{
		static const char *const names[] = {"Pages Shipped", "Pages Read in Backend",
			"Pages Checked", "Pages Reread", "Pages Not All-Visible",
		"Pages Visibility Undecided", "Rows Taken Directly", "Rows Pooled by the GPU Service"};
		const int64 values[] = {stats->shipped, stats->direct, stats->checked, stats->reread,
			stats->not_all_visible, stats->undecided, stats->rows_direct, stats->rows_pooled};

		for (int i = 0; i < lengthof(names); i++)
			ExplainPropertyInteger(psprintf("%s %s", what, names[i]), NULL, values[i], es);
	}
}

/* ---- runs of rows, for nodes that take the columns as they are ---- */

bool
gpuhash_page_scan_plain(const GhPageScan *ps)
{
	return ps->ss->ss.ps.qual == NULL && ps->plain_tlist;
}

/*
 * A projected output column the runs can give: a column of the table, or
 * an integer column modulo a non-zero constant (int2mod, int4mod, int8mod);
 * its heap attribute, or 0.
 */
static AttrNumber
plain_output(Index scanrelid, Expr *expr, GhPageMod *mod)
{
	OpExpr	   *op = (OpExpr *) expr;
	Const	   *c;
	Var		   *var;

	mod->by = 0;
	mod->type = InvalidOid;
	if (IsA(expr, OpExpr) && list_length(op->args) == 2)
	{
		set_opfuncid(op);
		c = (Const *) lsecond(op->args);
		if (!IsA(c, Const) || c->constisnull)
			return 0;
		mod->type = op->opfuncid == F_INT8MOD ? INT8OID :
			op->opfuncid == F_INT4MOD ? INT4OID :
			op->opfuncid == F_INT2MOD ? INT2OID : InvalidOid;
		if (mod->type == InvalidOid)
			return 0;
		mod->by = mod->type == INT8OID ? DatumGetInt64(c->constvalue) :
			mod->type == INT4OID ? DatumGetInt32(c->constvalue) : DatumGetInt16(c->constvalue);
		if (mod->by == 0)
			return 0;			/* division by zero: the projection raises it */
		expr = linitial(op->args);
	}
	var = (Var *) expr;
	if (!IsA(var, Var) || var->varno != scanrelid || var->varattno <= 0)
		return 0;
	return var->varattno;
}

int
gpuhash_page_scan_column(const GhPageScan *ps, AttrNumber attno, GhPageMod *mod)
{
	mod->by = 0;
	mod->type = InvalidOid;
	mod->varlena = false;
	/* the scan's output column: a heap column, through a projection */
	if (ps->ss->ss.ps.ps_ProjInfo != NULL)
	{
		List	   *tlist = ps->ss->ss.ps.plan->targetlist;

		if (attno < 1 || attno > list_length(tlist))
			return -1;
		attno = plain_output(((Scan *) ps->ss->ss.ps.plan)->scanrelid,
							 list_nth_node(TargetEntry, tlist, attno - 1)->expr, mod);
	}
	for (int o = 0; o < ps->spec.nout; o++)
		if (ps->out_att[o] == attno)
		{
			mod->varlena = ps->varlena_out[o];
			return o;
		}
	return -1;
}

bool
gpuhash_page_scan_next_run(GhPageScan *ps, const gh_pagerows **rows, size_t *first,
						   size_t *end)
{
	Assert(gpuhash_page_scan_plain(ps));
	if (!next_run(ps, rows, first, end))
		return false;
	ps->returned += (double) (*end - *first);
	ps->stats.rows_direct += (int64) (*end - *first);
	return true;
}

bool
gpuhash_page_scan_feed_pool(GhPageScan *ps, const GhOpPool *pool, const GhPoolFeed *feed)
{
	Assert(gpuhash_page_scan_plain(ps));
	if (!ps->ship || ps->feed != NULL || ps->hold)
		return false;			/* the service takes values, never pointers */
	ps->feed = gpuhash_op_pool_pages_begin(ps->ops, pool, &ps->spec, feed, ps->max_pages,
										   ps->cxt);
	return ps->feed != NULL;
}
