/*-------------------------------------------------------------------------
 *
 * star_scan.c
 *	  The fact table of a GpuStarAgg, fed to its star a batch of pages at a
 *	  time: this process's share of it under a Gather, all of it otherwise;
 *	  a partitioned one's partitions one after another (star_fact.c).
 *
 * INTERFACE ROUTINES
 *		star_scan_fact		read the blocks, ship them, until there are none
 *
 * Every row reaches the device as part of a heap page:
 *
 *	all-visible pages (every tuple visible to every snapshot) go by buffer
 *		number, pinned, with the LSN they had; the star reads them over the
 *		bus from the shared buffers and checks each afterwards, and the rows
 *		of a page that changed meanwhile are not kept: the page is read
 *		again as below (page_ops.h has the argument).
 *	pages the visibility map shows all-visible, where the star may hold
 *		copies in a page cache: by name alone, not pinned, named by the LSN
 *		of the map page (src/README, "The page cache", has why that names
 *		one content); a page the cache has no copy of comes back and goes
 *		pinned, as above, in a later batch, which fills the cache.
 *	other pages: the tuples the snapshot sees are copied, as they are on
 *		disk, into pages this process makes (synthetic pages), which the
 *		star reads in turn.  Their visibility is checked here, under the
 *		buffer's share lock, as a Seq Scan checks it.
 *
 * Where the pages cannot be read directly (quals left on the CPU, a
 * temporary table, SERIALIZABLE: gpuhash_heap_pages_readable), the rows
 * come through the Seq Scan itself, its quals applied, and go to the device
 * in synthetic pages too.  The scan's blocks come from its parallel block
 * allocator under a Gather, so the processes share the table.
 *
 * Where the device fails a star only this node feeds and the node falls
 * back (star_ops.h, restart), the star is made again on the CPU: the pass
 * stops, the pages of the batch are let go of, and the whole table is read
 * again into the new star.  Under a Gather that pass is this process's own
 * (whole_pass): every block in order rather than those the Gather's
 * allocator hands out, and rows that must come through the Seq Scan come
 * from a scan of this process's with the Seq Scan's quals (pull_private).
 * A star the processes feed together and the device failed is given up
 * (star_ops.h, fed_by_many), and a row the device cannot evaluate stops
 * every star (star_ops.h, escaped): the pass stops and star_exec.c goes on.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "commands/explain.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gpuhash.h"
#include "page_ops.h"
#include "page_scan.h"
#include "star_state.h"

/* synthetic pages per batch */
#define STAR_SYNTH_PAGES 128

/* the visibility map's layout (visibilitymap.c): two bits a heap block */
#define VM_MAP_BYTES (BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define VM_BLOCKS_PER_PAGE (VM_MAP_BYTES * 4)

/* one page of the visibility map, as it was under its share lock */
typedef struct VmCopy
{
	BlockNumber page;			/* which map page; InvalidBlockNumber: none yet */
	XLogRecPtr	lsn;			/* its LSN; 0: no such page, or not to name by */
	Buffer		buf;			/* pinned by visibilitymap_get_status */
	uint8		map[VM_MAP_BYTES];
} VmCopy;

typedef struct StarScan
{
	GpuStarAggState *s;
	GhOpStar   *star;
	ScanState  *cur;			/* the scan of the table being read */
	Relation	rel;			/* its table */
	Snapshot	snapshot;
	BufferAccessStrategy strategy;
	/* blocks */
	ParallelBlockTableScanDesc pbscan;
	ParallelBlockTableScanWorkerData pbwork;
	bool		pstarted;
	bool		whole;			/* every block, a Gather or not */
	BlockNumber next;
	BlockNumber nblocks;
	/* the batch of shipped pages */
	int			nship;
	Buffer	   *bufs;			/* InvalidBuffer: given by name alone */
	int			npinned;		/* of them pinned */
	bool		try_cache;		/* give all-visible pages by name alone */
	bool		judged;			/* ship pages not all-visible, for the device to judge */
	VmCopy	   *vm;
	/* blocks the page cache had no copy of, to be shipped pinned */
	BlockNumber *queued;
	int			nqueued;
	bool		exhausted;		/* next_block found none */
	/* synthetic pages: the one being filled is nsynth */
	int			nsynth;
	int			max_synth;
	bool		synth_open;
	double		cpu_rows;
	bool		abort;			/* the star was made again: stop this pass */
	double		wait_ms;		/* waiting for the star to take a batch (DEBUG1) */
	int64		npages;
} StarScan;

static BlockNumber
next_block(StarScan *sc)
{
	if (sc->pbscan)
	{
		if (!sc->pstarted)
		{
			table_block_parallelscan_startblock_init(sc->rel, &sc->pbwork, sc->pbscan);
			sc->pstarted = true;
		}
		return table_block_parallelscan_nextpage(sc->rel, &sc->pbwork, sc->pbscan);
	}
	return sc->next < sc->nblocks ? sc->next++ : InvalidBlockNumber;
}

static Page
synth_page(StarScan *sc, int i)
{
	return (Page) (sc->star->synth + (Size) i * BLCKSZ);
}

static void
flush_synth(StarScan *sc)
{
	int			n = sc->nsynth + (sc->synth_open ? 1 : 0);

	if (n == 0)
		return;
	gpuhash_op_star_synthetic(sc->star, n);
	sc->nsynth = 0;
	sc->synth_open = false;
	if (sc->star->restart)
	{
		sc->abort = true;
		return;
	}
	for (int p = 0; p < n; p++)
		if (sc->star->synth_status[p])
			elog(ERROR, "gpuhash: the device found a page of rows made on the CPU malformed");
	sc->s->pages_synthetic += n;
}

/* one tuple, as it is on disk, into the synthetic pages */
static void
add_tuple(StarScan *sc, HeapTupleHeader data, uint32 len)
{
	for (;;)
	{
		if (!sc->synth_open)
		{
			/* every row on it is visible: the device must not judge them */
			PageInit(synth_page(sc, sc->nsynth), BLCKSZ, 0);
			PageSetAllVisible(synth_page(sc, sc->nsynth));
			sc->synth_open = true;
		}
		if (PageAddItemExtended(synth_page(sc, sc->nsynth), (Item) data, len,
								InvalidOffsetNumber, PAI_IS_HEAP) != InvalidOffsetNumber)
			break;
		/* that page is full: the next, or send the batch */
		sc->synth_open = false;
		if (++sc->nsynth == sc->max_synth)
			flush_synth(sc);
		if (sc->abort)
			return;
	}
	sc->cpu_rows++;
}

/* The tuples of a share-locked page that the snapshot sees, into synthetic pages. */
static void
add_visible(StarScan *sc, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blk = BufferGetBlockNumber(buf);
	OffsetNumber lines = PageGetMaxOffsetNumber(page);
	bool		all_visible = PageIsAllVisible(page) && !sc->snapshot->takenDuringRecovery;

	for (OffsetNumber off = FirstOffsetNumber; off <= lines; off++)
	{
		ItemId		lpp = PageGetItemId(page, off);
		HeapTupleData tup;

		if (!ItemIdIsNormal(lpp))
			continue;
		tup.t_tableOid = RelationGetRelid(sc->rel);
		tup.t_data = (HeapTupleHeader) PageGetItem(page, lpp);
		tup.t_len = ItemIdGetLength(lpp);
		ItemPointerSet(&tup.t_self, blk, off);
		if (all_visible || HeapTupleSatisfiesVisibility(&tup, sc->snapshot, buf))
			add_tuple(sc, tup.t_data, tup.t_len);
	}
}

/* the batch's pages unpinned, unsent */
static void
drop_batch(StarScan *sc)
{
	for (int p = 0; p < sc->nship; p++)
		if (BufferIsValid(sc->bufs[p]))
			ReleaseBuffer(sc->bufs[p]);
	sc->nship = 0;
	sc->npinned = 0;
}

/*
 * The version of block blk for the page cache: the LSN of the visibility
 * map page holding its bits where its all-visible bit is set, else 0.  The
 * map page is copied under its share lock the first time one of its blocks
 * is asked for, and that copy answers for the rest of the scan: a bit seen
 * set at any time after the query's snapshot was taken will do (src/README,
 * "The page cache").
 */
static uint64
vm_version(StarScan *sc, BlockNumber blk)
{
	VmCopy	   *vm = sc->vm;
	BlockNumber page = blk / VM_BLOCKS_PER_PAGE;
	uint32		i = blk % VM_BLOCKS_PER_PAGE;

	if (vm->page != page)
	{
		(void) visibilitymap_get_status(sc->rel, blk, &vm->buf);
		vm->page = page;
		vm->lsn = InvalidXLogRecPtr;
		if (BufferIsValid(vm->buf) && BufferGetBlockNumber(vm->buf) == page)
		{
			Page		map = BufferGetPage(vm->buf);

			LockBuffer(vm->buf, BUFFER_LOCK_SHARE);
			memcpy(vm->map, PageGetContents(map), VM_MAP_BYTES);
			vm->lsn = PageGetLSN(map);
			LockBuffer(vm->buf, BUFFER_LOCK_UNLOCK);
		}
	}
	if (vm->lsn == InvalidXLogRecPtr ||
		!((vm->map[i / 4] >> ((i % 4) * 2)) & VISIBILITYMAP_ALL_VISIBLE))
		return 0;
	return vm->lsn;
}

/* blk into the batch: given by name alone (buf invalid), or pinned with its LSN */
static void
add_page(StarScan *sc, BlockNumber blk, Buffer buf, XLogRecPtr lsn, uint64 version)
{
	GhOpStar   *star = sc->star;
	int			n = sc->nship++;

	star->pages[n] = BufferIsValid(buf) ? (uint32) (buf - 1) : GH_PAGE_CACHED_ONLY;
	star->lsns[n] = lsn;
	star->blocks[n] = blk;
	star->versions[n] = version;
	sc->bufs[n] = buf;
	sc->npinned += BufferIsValid(buf);
}

/*
 * Send the batch; read again the pinned pages the star did not keep, queue
 * the named ones it had no copy of; unpin.
 */
static void
ship(StarScan *sc)
{
	GhOpStar   *star = sc->star;
	int			named = 0,
				hits = 0;

	if (sc->nship == 0)
		return;
	{
		instr_time	start;

		INSTR_TIME_SET_CURRENT(start);
		gpuhash_op_star_shipped(star, sc->nship);
		sc->wait_ms += gpuhash_elapsed_ms(start);
		sc->npages += sc->nship;
	}
	if (star->restart)
	{
		drop_batch(sc);
		sc->abort = true;
		return;
	}
	for (int p = 0; p < sc->nship; p++)
	{
		Buffer		buf = sc->bufs[p];

		named += !BufferIsValid(buf);
		if (star->status[p] == STAR_PAGE_KEPT)
		{
			if (BufferIsValid(buf))
				ReleaseBuffer(buf);
			else
			{
				hits++;
				sc->s->pages_cached++;
			}
			sc->s->pages_shipped++;
			if (star->lsns[p] & GPUHASH_LSN_NOT_ALL_VISIBLE)
				sc->s->pages_judged++;
		}
		else if (star->status[p] == STAR_PAGE_NOT_CACHED && !BufferIsValid(buf))
			sc->queued[sc->nqueued++] = star->blocks[p];
		else
		{
			if (!BufferIsValid(buf))
				buf = ReadBufferExtended(sc->rel, MAIN_FORKNUM, star->blocks[p], RBM_NORMAL,
										 sc->strategy);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			add_visible(sc, buf);
			UnlockReleaseBuffer(buf);
			if (star->status[p] == STAR_PAGE_UNDECIDED)
				sc->s->pages_undecided++;
			else
				sc->s->pages_reread++;
		}
	}
	sc->nship = 0;
	sc->npinned = 0;
	/* none of them there: the cache does not hold this table (yet); pin the rest */
	if (named > 0 && hits == 0)
		sc->try_cache = false;
}

/* The next block to read: one the cache had no copy of, or the scan's next. */
static BlockNumber
next_page(StarScan *sc, bool *queued)
{
	BlockNumber blk;

	*queued = sc->nqueued > 0;
	if (*queued)
		return sc->queued[--sc->nqueued];
	if (!sc->exhausted)
	{
		blk = next_block(sc);
		if (blk != InvalidBlockNumber)
			return blk;
		sc->exhausted = true;
	}
	/* the last batch, which may queue blocks again */
	ship(sc);
	*queued = sc->nqueued > 0;
	return *queued && !sc->abort ? sc->queued[--sc->nqueued] : InvalidBlockNumber;
}

/* The batch's pins are released on error by the resource owner; clear ours. */
static void
read_pages(StarScan *sc)
{
	SeqScanState *ss = (SeqScanState *) sc->cur;
	TableScanDesc sd = ss->ss.ss_currentScanDesc;
	bool		visible_all = !sc->snapshot->takenDuringRecovery && gpuhash_ship_pages;
	bool		named;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);

	if (!sc->whole && ((Scan *) ss->ss.ps.plan)->plan.parallel_aware && sd != NULL &&
		sd->rs_parallel != NULL)
		sc->pbscan = (ParallelBlockTableScanDesc) sd->rs_parallel;
	else
		sc->nblocks = RelationGetNumberOfBlocks(sc->rel);
	if (RelationGetNumberOfBlocks(sc->rel) > (BlockNumber) (NBuffers / 4))
		sc->strategy = GetAccessStrategy(BAS_BULKREAD);
	gpuhash_op_star_name(sc->star, sc->rel);
	named = sc->star->name_rel != 0 && visible_all;
	/*
	 * Pages that are not all-visible go to the device too, which judges
	 * their tuples by their hint bits against the snapshot's xmin and hands
	 * back a page it cannot judge (STAR_PAGE_UNDECIDED), where the table's
	 * changes all set the page LSN that tells a page changed meanwhile
	 * (page_ops.h: GPUHASH_LSN_NOT_ALL_VISIBLE).  Every process of a query
	 * has its snapshot, and so the horizon the star was compiled with.
	 */
	sc->judged = visible_all && gpuhash_vis_horizon(sc->snapshot) != 0 && RelationNeedsWAL(sc->rel);
	sc->try_cache = named && sc->star->in_service && gpuhash_page_cache_mb != 0;
	sc->vm->page = InvalidBlockNumber;
	sc->exhausted = false;
	sc->nqueued = 0;
	for (;;)
	{
		bool		queued;
		BlockNumber blk = next_page(sc, &queued);
		uint64		version;
		Buffer		buf;
		Page		page;

		if (blk == InvalidBlockNumber || sc->abort)
			break;
		CHECK_FOR_INTERRUPTS();
		version = named ? vm_version(sc, blk) : 0;
		if (version != 0 && sc->try_cache && !queued)
			add_page(sc, blk, InvalidBuffer, InvalidXLogRecPtr, version);
		else
		{
			XLogRecPtr	lsn;
			bool		page_all_visible;

			buf = ReadBufferExtended(sc->rel, MAIN_FORKNUM, blk, RBM_NORMAL, sc->strategy);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			page_all_visible = PageIsAllVisible(page);
			if (!visible_all || (!page_all_visible && !sc->judged))
			{
				add_visible(sc, buf);
				UnlockReleaseBuffer(buf);
				continue;
			}
			/*
			 * keep the pin: the page stays in its buffer while the device reads
			 * it (gpuhash.debug_reread_pages: every other page as if it changed
			 * meanwhile, with an LSN it does not have)
			 */
			lsn = PageGetLSN(page) ^ (gpuhash_debug_reread_pages && blk % 2 == 0 ? 1 : 0);
			if (!page_all_visible)
			{
				/*
				 * For the page cache, such a page is named by its own LSN
				 * (with the bit, apart from the map's LSNs that name
				 * all-visible pages): a change moves it, and a copy differs
				 * from the page of the same LSN in hint bits alone.  The
				 * device caches the copy only of a page it could judge.
				 */
				lsn |= GPUHASH_LSN_NOT_ALL_VISIBLE;
				version = named ? (PageGetLSN(page) | GPUHASH_LSN_NOT_ALL_VISIBLE) : 0;
			}
			add_page(sc, blk, buf, lsn, version);
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		if ((size_t) sc->nship == sc->star->max_named ||
			(size_t) sc->npinned == sc->star->max_pages)
			ship(sc);
	}
	if (sc->abort)
		drop_batch(sc);
	else
		ship(sc);
	if (BufferIsValid(sc->vm->buf))
		ReleaseBuffer(sc->vm->buf);
	sc->vm->buf = InvalidBuffer;
	if (sc->strategy)
		FreeAccessStrategy(sc->strategy);
	sc->strategy = NULL;
	elog(DEBUG1, "gpuhash star scan: %lld pages shipped in %.3f ms, %.3f ms of it waiting for the star",
		 (long long) sc->npages, gpuhash_elapsed_ms(start), sc->wait_ms);
}

/* the table's row in slot, as it is on disk, into the synthetic pages */
static void
add_slot(StarScan *sc, TupleTableSlot *slot)
{
	bool		should_free;
	HeapTuple	tuple = ExecFetchSlotHeapTuple(slot, false, &should_free);

	add_tuple(sc, tuple->t_data, tuple->t_len);
	if (should_free)
		heap_freetuple(tuple);
}

/* The Seq Scan's own rows (its quals applied), as they are on disk. */
static void
pull_rows(StarScan *sc)
{
	ScanState  *ss = sc->cur;

	for (;;)
	{
		TupleTableSlot *slot = star_input_next(sc->s, &ss->ps, NULL);

		if (TupIsNull(slot) || sc->abort)
			break;
		/* the scan tuple: the table's row, whatever the scan projected */
		add_slot(sc, ss->ss_ScanTupleSlot);
	}
}

/*
 * The rows the Seq Scan would return, its quals applied, from a scan of the
 * whole table by this process alone (a parallel Seq Scan hands this
 * process only some blocks).
 */
static void
pull_private(StarScan *sc)
{
	ScanState  *ss = sc->cur;
	ExprContext *econtext = ss->ps.ps_ExprContext;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	MemoryContext old = MemoryContextSwitchTo(ss->ps.state->es_query_cxt);
	TableScanDesc scan = table_beginscan(sc->rel, sc->snapshot, 0, NULL);

	MemoryContextSwitchTo(old);
	while (!sc->abort && table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (ss->ps.qual == NULL || ExecQual(ss->ps.qual, econtext))
			add_slot(sc, slot);
	}
	table_endscan(scan);
	ExecClearTuple(slot);
}

/* Can the pages of the table scan reads go to the device as they are? */
static bool
reads_directly(PlanState *scan)
{
	return scan->qual == NULL && gpuhash_read_pages && gpuhash_heap_pages_readable(scan);
}

/* One table of the fact table (the table, or a partition), into the star. */
static void
scan_table(StarScan *sc, ScanState *scan)
{
	PlanState  *ps = &scan->ps;
	double		rows = sc->cpu_rows;

	sc->cur = scan;
	sc->rel = scan->ss_currentRelation;
	sc->pbscan = NULL;
	sc->pstarted = false;
	sc->next = 0;
	sc->nblocks = 0;
	if (reads_directly(ps))
	{
		if (ps->instrument)
			InstrStartNode(ps->instrument);
		read_pages(sc);
		if (ps->instrument)
			InstrStopNode(ps->instrument, sc->cpu_rows - rows);
	}
	else if (sc->whole && ps->plan->parallel_aware)
		pull_private(sc);
	else
		pull_rows(sc);
}

void
star_scan_fact(GpuStarAggState *s)
{
	StarScan	sc = {0};
	PlanState  *fact = s->fact_ps;
	bool		append = s->nfact_scans != 1 || fact != &s->fact_scans[0]->ps;

	sc.s = s;
	sc.whole = s->whole_pass;
	sc.star = s->star;
	sc.snapshot = fact->state->es_snapshot;
	sc.max_synth = Min(STAR_SYNTH_PAGES, (int) s->star->max_pages);
	sc.bufs = palloc(sizeof(Buffer) * s->star->max_named);
	sc.queued = palloc(sizeof(BlockNumber) * s->star->max_named);
	sc.vm = palloc0(sizeof(VmCopy));
	/* the Append over a partitioned table's scans: its rows are theirs */
	if (append && fact->instrument)
		InstrStartNode(fact->instrument);
	for (;;)
	{
		for (int i = 0; i < s->nfact_scans && !sc.abort; i++)
			scan_table(&sc, s->fact_scans[i]);
		if (!sc.abort)
			flush_synth(&sc);
		if (!sc.abort || sc.star->given_up || sc.star->escaped)
			break;
		/* made again on the CPU: every page once more, by this process alone */
		sc.star->restart = false;
		sc.abort = false;
		sc.whole = s->whole_pass = true;
		sc.nsynth = 0;
		sc.synth_open = false;
		s->pages_shipped = s->pages_cached = s->pages_synthetic = s->pages_reread = 0;
		s->pages_judged = s->pages_undecided = 0;
		sc.cpu_rows = 0;
		for (int i = 0; i < s->nfact_scans; i++)
		{
			PlanState  *ps = &s->fact_scans[i]->ps;

			if (!reads_directly(ps) && !ps->plan->parallel_aware)
				ExecReScan(ps);
		}
	}
	if (append && fact->instrument)
		InstrStopNode(fact->instrument, sc.cpu_rows);
	s->rows_cpu += (int64) sc.cpu_rows;
	s->rows_kept = (int64) s->star->kept;
	pfree(sc.bufs);
	pfree(sc.queued);
	pfree(sc.vm);
}
