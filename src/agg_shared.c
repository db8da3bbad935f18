/*-------------------------------------------------------------------------
 *
 * agg_shared.c
 *	  The inner side of a parallel fused join read once, by all the
 *	  processes of a parallel query together, and shared.
 *
 * INTERFACE ROUTINES
 *		gha_shared_size, gha_shared_init	the DSM state (leader; and on rescan)
 *		gha_shared_attach		join the read of the inner side
 *		gha_shared_exchange		publish one's share, wait, gather everyone's
 *
 * A parallel-aware fused GpuHashAgg (agg.h, "FUSED JOIN") reads its inner
 * input through a partial path, so each process reads a share of it.  Each
 * process publishes its share's arrays -- join keys, packed grouping keys
 * and the inner columns' values and NULL flags -- as one chunk in the
 * query's DSA area, waits on a barrier until every attached process has
 * done so, and copies all the chunks into arrays of its own: every process
 * then holds the whole inner side, as if it had read it alone, and builds
 * its own engine table from it, while the outer side stays split.
 *
 * The barrier works as PostgreSQL's parallel hash join's does: a process
 * attaches before it starts reading, so the phase cannot advance while any
 * process may still be handed inner rows.  A process that attaches after
 * the phase has advanced finds the inner input exhausted and only gathers.
 * Chunks of one process use the same column layout as every other's, so
 * only columns fixed at plan time may be shared (agg_path.c allows no
 * dictionary column and no numeric sum on the inner side).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/barrier.h"
#include "storage/spin.h"
#include "utils/dsa.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "agg.h"

struct GhaSharedInner
{
	slock_t		mutex;
	dsa_pointer head;			/* published chunks, a list */
	Barrier		barrier;		/* phase 0: reading; 1: every share published */
};

/* A published share: this header, then jkeys[n], keys[n], then per shared
 * column values[n] and, if it has NULL flags, nulls[n]. */
typedef struct GhaChunk
{
	dsa_pointer next;
	int64		n;
} GhaChunk;

Size
gha_shared_size(void)
{
	return sizeof(GhaSharedInner);
}

/* Initialize the state, releasing the chunks of an earlier execution. */
void
gha_shared_init(GhaSharedInner *sh, dsa_area *area, bool first)
{
	if (!first && area != NULL)
	{
		dsa_pointer p = sh->head;

		while (DsaPointerIsValid(p))
		{
			dsa_pointer next = ((GhaChunk *) dsa_get_address(area, p))->next;

			dsa_free(area, p);
			p = next;
		}
	}
	SpinLockInit(&sh->mutex);
	sh->head = InvalidDsaPointer;
	BarrierInit(&sh->barrier, 0);
}

/* Attach before reading the inner side; false: it has been read already. */
bool
gha_shared_attach(GhaSharedInner *sh)
{
	return BarrierAttach(&sh->barrier) == 0;
}

static Size
chunk_bytes(int64 n, int ncols, const bool *share, const bool *has_nulls)
{
	Size		bytes = MAXALIGN(sizeof(GhaChunk)) + 16 * (Size) n;

	for (int c = 0; c < ncols; c++)
		if (share[c])
			bytes += (8 + (has_nulls[c] ? 1 : 0)) * (Size) n;
	return bytes;
}

/*
 * Publish mine (unless this process attached late: it must then have read
 * nothing), wait until every attached process has, and return the whole
 * inner side in *all, its arrays allocated in cxt.  share[c]: column c is an
 * inner column (the others are left NULL in *all); has_nulls[c]: it has NULL
 * flags.
 */
void
gha_shared_exchange(GhaSharedInner *sh, dsa_area *area, bool attached_early,
					const GhaSideArrays *mine, const bool *share, const bool *has_nulls,
					MemoryContext cxt, GhaSideArrays *all)
{
	int			ncols = mine->ncols;
	dsa_pointer p;
	int64		total = 0,
				at = 0;

	if (area == NULL)
		elog(ERROR, "gpuhash: a parallel GpuHashAgg without a shared memory area");
	if (!attached_early && mine->n > 0)
		elog(ERROR, "gpuhash: inner rows read after the inner side was shared");

	if (mine->n > 0)
	{
		dsa_pointer dp = dsa_allocate_extended(area, chunk_bytes(mine->n, ncols, share, has_nulls),
											   DSA_ALLOC_HUGE);
		GhaChunk   *ch = dsa_get_address(area, dp);
		char	   *data = (char *) ch + MAXALIGN(sizeof(GhaChunk));
		Size		n8 = 8 * (Size) mine->n;

		ch->n = mine->n;
		memcpy(data, mine->jkeys, n8);
		data += n8;
		memcpy(data, mine->keys, n8);
		data += n8;
		for (int c = 0; c < ncols; c++)
		{
			if (!share[c])
				continue;
			memcpy(data, mine->values[c], n8);
			data += n8;
			if (has_nulls[c])
			{
				memcpy(data, mine->nulls[c], mine->n);
				data += mine->n;
			}
		}
		SpinLockAcquire(&sh->mutex);
		ch->next = sh->head;
		sh->head = dp;
		SpinLockRelease(&sh->mutex);
	}
	if (attached_early)
		BarrierArriveAndWait(&sh->barrier, PG_WAIT_EXTENSION);

	/* every share is published: gather them */
	for (p = sh->head; DsaPointerIsValid(p); p = ((GhaChunk *) dsa_get_address(area, p))->next)
		total += ((GhaChunk *) dsa_get_address(area, p))->n;
	all->n = total;
	all->ncols = ncols;
	all->jkeys = MemoryContextAllocHuge(cxt, 8 * Max(total, 1));
	all->keys = MemoryContextAllocHuge(cxt, 8 * Max(total, 1));
	all->values = MemoryContextAllocZero(cxt, sizeof(void *) * Max(ncols, 1));
	all->nulls = MemoryContextAllocZero(cxt, sizeof(uint8 *) * Max(ncols, 1));
	for (int c = 0; c < ncols; c++)
		if (share[c])
		{
			all->values[c] = MemoryContextAllocHuge(cxt, 8 * Max(total, 1));
			if (has_nulls[c])
				all->nulls[c] = MemoryContextAllocHuge(cxt, Max(total, 1));
		}
	for (p = sh->head; DsaPointerIsValid(p);)
	{
		GhaChunk   *ch = dsa_get_address(area, p);
		char	   *data = (char *) ch + MAXALIGN(sizeof(GhaChunk));
		Size		n8 = 8 * (Size) ch->n;

		memcpy(all->jkeys + at, data, n8);
		data += n8;
		memcpy(all->keys + at, data, n8);
		data += n8;
		for (int c = 0; c < ncols; c++)
		{
			if (!share[c])
				continue;
			memcpy((char *) all->values[c] + 8 * at, data, n8);
			data += n8;
			if (has_nulls[c])
			{
				memcpy(all->nulls[c] + at, data, ch->n);
				data += ch->n;
			}
		}
		at += ch->n;
		p = ch->next;
	}
	BarrierDetach(&sh->barrier);
}
