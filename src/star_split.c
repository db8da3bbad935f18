/*-------------------------------------------------------------------------
 *
 * star_split.c
 *	  A GpuStarAgg's star split across GPUs: a part of it on each GPU, each
 *	  part in a GPU service worker of its own, so that the GPUs read their
 *	  shares of every batch at once.
 *
 * INTERFACE ROUTINES
 *		star_split_create	the parts, where the GPUs and service workers allow
 *		star_split_batches	each part's batch segment
 *		star_split_shipped	a batch of shipped pages, each to its part
 *		star_split_result	every part's groups, combined
 *
 * A service worker runs one request at a time, and a star of one engine on
 * several GPUs takes a batch through host work of its own (the page cache's
 * plan, the buffers' checks, the keep) that the GPUs wait for: a second GPU
 * barely paid off so.  Split, each part is an ordinary star of one GPU
 * (the engine of the part's worker opened on that GPU alone); a process
 * sends each part its pages of a batch, all parts at once, and waits for
 * all.  A page goes to the part its block number hashes to, in every
 * process and every query, so that each part's page cache holds its own
 * pages.  Every part builds the dimensions from the one GhsStarCreate
 * segment.  The process that returns the groups asks every part for its
 * groups and combines them on the CPU (gh_groups_combine): a part's groups
 * are those of its pages' rows.  Synthetic batches (pages the process
 * made) go to the parts in turn (star_ops.c).
 *
 * A failure is handled as for one star (star_ops.c) once every part has
 * answered: a call never waited for is abandoned, and a star not made
 * whole is not kept.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "portability/instr_time.h"

#include "gpuhash.h"
#include "service.h"
#include "star_ops.h"

/*
 * The parts a star whose first part is in base_worker should have: one per
 * GPU of gpuhash.devices, at most one per service worker (a part with the
 * GPUs left over where there are more GPUs than workers); each part's
 * worker in place, its GPUs in devices.  Fewer than 2: not split.
 */
static int
split_place(int base_worker, StarPlace *place, char devices[][32])
{
	int			ids[GH_MAX_DEVICES];
	int			nd = 0;
	int			nworkers = gpuhash_service != NULL ? gpuhash_service->nworkers : 0;
	int			nparts;

	if (!gpuhash_parse_devices(gpuhash_devices_setting, ids, &nd, NULL))
		return 0;
	if (nd == 0 && gpuhash_resolved_backend() == GH_BACKEND_CUDA)
	{
		/* "all": the GPUs the service sees */
		nd = Min(Max(gpuhash_service_gpus(), 0), GH_MAX_DEVICES);
		for (int i = 0; i < nd; i++)
			ids[i] = i;
	}
	nparts = Min(Min(nd, nworkers), STAR_MAX_PARTS);
	if (nparts < 2)
		return 0;
	for (int i = 0; i < nparts; i++)
	{
		int			w = (base_worker + i) % nworkers;

		if (gpuhash_service->worker[w].pid == 0)
			return 0;			/* one is not running: no split */
		place->worker[i] = w;
		devices[i][0] = '\0';
	}
	for (int d = 0; d < nd; d++)
	{
		char	   *to = devices[d % nparts];

		snprintf(to + strlen(to), 32 - strlen(to), "%s%d", to[0] ? "," : "", ids[d]);
	}
	place->nparts = nparts;
	return nparts;
}

/* Finish the calls started in slots[0 .. n); failed: the first that failed so far, or -1 */
static int
finish_started(GhOps *ops, GhsCall *calls, GhsSlot **slots, int n, int failed)
{
	for (int i = 0; i < n; i++)
	{
		GhsSlot    *slot = slots[i];

		if (slot == NULL)
			continue;
		slots[i] = NULL;		/* the wait frees it, or abandons it raising */
		if (!gpuhash_ops_service_finish(ops, &calls[i], slot) && failed < 0)
			failed = i;
	}
	return failed;
}

/*
 * Run the calls of calls[0 .. n) that want marks (NULL: all), all at once: the first
 * that failed (ops falls back), or -1.  A process holding a slot never
 * waits for another (every process of every query may be doing the same):
 * where none is free, the calls started so far are finished first.  Where
 * one raises an error, those still started are abandoned.
 */
static int
run_calls(GhOps *ops, GhsCall *calls, const bool *want, int n, bool fallback_ok)
{
	GhsSlot    *slots[STAR_MAX_PARTS];
	int			failed = -1;

	memset(slots, 0, sizeof(slots));
	PG_TRY();
	{
		for (int i = 0; i < n; i++)
		{
			if (want != NULL && !want[i])
				continue;
			slots[i] = gpuhash_ops_service_start(ops, &calls[i], fallback_ok, false);
			if (slots[i] == NULL)
			{
				failed = finish_started(ops, calls, slots, i, failed);
				slots[i] = gpuhash_ops_service_start(ops, &calls[i], fallback_ok, true);
			}
		}
		failed = finish_started(ops, calls, slots, n, failed);
	}
	PG_CATCH();
	{
		for (int i = 0; i < n; i++)
			if (slots[i] != NULL)
				gpuhash_service_abandon(slots[i]);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return failed;
}

int
star_split_create(GhOpStar *s, dsm_handle data, int base_worker)
{
	StarPlace	place;
	char		devices[STAR_MAX_PARTS][32];
	GhsCall		calls[STAR_MAX_PARTS];
	int			n,
				failed;
	bool		duplicate = false;

	memset(&place, 0, sizeof(place));
	n = split_place(base_worker, &place, devices);
	if (n < 2)
		return 0;
	for (int i = 0; i < n; i++)
	{
		gpuhash_ops_init_call(&calls[i], GHS_OP_STAR_CREATE, place.worker[i], 0);
		calls[i].data = data;
		strlcpy(calls[i].devices, devices[i], sizeof(calls[i].devices));
	}
	/* (an error raised here leaves the parts made to their creator's transaction's end) */
	failed = run_calls(s->ops, calls, NULL, n, true);
	for (int i = 0; i < n; i++)
	{
		bool		made = calls[i].failed == GH_OK && calls[i].result[0] == 0;

		place.id[i] = made ? calls[i].result_object : 0;
		if (calls[i].failed == GH_OK && calls[i].result[0] != 0)
		{
			/* a dimension holds a key twice: every part found it */
			duplicate = true;
			s->duplicate_dim = (int) calls[i].result[1];
		}
	}
	if (failed >= 0 || duplicate)
	{
		star_place_free(&place);
		s->duplicate = duplicate && failed < 0;
		return failed >= 0 ? -1 : 1;
	}
	s->place = place;
	return 1;
}

void
star_split_batches(GhOpStar *s, size_t max_named)
{
	for (int i = 0; i < s->place.nparts; i++)
		s->part_seg[i] = star_pages_segment(max_named);
	s->part_index = MemoryContextAlloc(s->ops->cxt, sizeof(uint32) * Max(max_named, 1));
}

/* the part of a split star that block goes to */
static inline int
block_part(uint32 block, int nparts)
{
	return (int) ((((uint64) block * UINT64CONST(0x9E3779B97F4A7C15)) >> 32) % (uint64) nparts);
}

void
star_split_shipped(GhOpStar *s, size_t npages)
{
	int			nparts = s->place.nparts;
	GhsCall		calls[STAR_MAX_PARTS];
	bool		want[STAR_MAX_PARTS];
	GhsStarPages *hdr[STAR_MAX_PARTS];
	size_t		count[STAR_MAX_PARTS],
				start[STAR_MAX_PARTS];
	size_t		at = 0;
	int			failed;
	instr_time	t0;

	INSTR_TIME_SET_CURRENT(t0);
	for (int i = 0; i < nparts; i++)
	{
		count[i] = 0;
		hdr[i] = dsm_segment_address(s->part_seg[i]);
	}
	for (size_t p = 0; p < npages; p++)
		count[block_part(s->blocks[p], nparts)]++;
	for (int i = 0; i < nparts; i++)
	{
		start[i] = at;
		at += count[i];
		count[i] = 0;
	}
	/* each part's share, in the batch's order; part_index says where each came from */
	for (size_t p = 0; p < npages; p++)
	{
		int			i = block_part(s->blocks[p], nparts);
		char	   *base = (char *) hdr[i];
		size_t		k = count[i]++;

		((uint32 *) ghs_at(base, hdr[i]->pages))[k] = s->pages[p];
		((uint64 *) ghs_at(base, hdr[i]->lsns))[k] = s->lsns[p];
		((uint32 *) ghs_at(base, hdr[i]->blocks))[k] = s->blocks[p];
		((uint64 *) ghs_at(base, hdr[i]->versions))[k] = s->versions[p];
		s->part_index[start[i] + k] = (uint32) p;
	}
	for (int i = 0; i < nparts; i++)
	{
		star_pages_call(s, &calls[i], s->part_seg[i], i, count[i]);
		want[i] = count[i] > 0;
	}
	failed = run_calls(s->ops, calls, want, nparts, star_falls_back(s));
	s->ops->stat_device_ms += gpuhash_elapsed_ms(t0);
	if (failed >= 0)
	{
		star_call_failed(s, &calls[failed]);
		return;
	}
	for (int i = 0; i < nparts; i++)
	{
		const uint8 *status = ghs_at((char *) hdr[i], hdr[i]->status);

		for (size_t k = 0; k < count[i]; k++)
			s->status[s->part_index[start[i] + k]] = status[k];
		if (count[i] > 0)
			star_note_kept(s, i, calls[i].result[0]);
	}
}

/*
 * The CPU backend numbers the devices it simulates from 0 in each engine:
 * a part's groups name its devices by the GPU numbers its engine was given
 * instead (split_place gives them again: the settings are the query's).
 */
static void
name_simulated_devices(gh_groups **pieces, int nparts)
{
	StarPlace	place;
	char		devices[STAR_MAX_PARTS][32];

	if (split_place(0, &place, devices) != nparts)
		return;
	for (int i = 0; i < nparts; i++)
	{
		int			ids[GH_MAX_DEVICES];
		int			n = 0;

		if (pieces[i] == NULL || !gpuhash_parse_devices(devices[i], ids, &n, NULL))
			continue;
		for (int k = 0; k < pieces[i]->ndevices; k++)
			if (pieces[i]->devices[k] >= 0 && pieces[i]->devices[k] < n)
				pieces[i]->devices[k] = ids[pieces[i]->devices[k]];
	}
}

gh_groups *
star_split_result(GhOpStar *s)
{
	int			nparts = s->place.nparts;
	GhsCall		calls[STAR_MAX_PARTS];
	gh_groups  *pieces[STAR_MAX_PARTS];
	gh_groups  *g = NULL;
	int			failed;
	gh_status	st;

	for (int i = 0; i < nparts; i++)
		gpuhash_ops_init_call(&calls[i], GHS_OP_STAR_RESULT, s->place.worker[i], s->place.id[i]);
	failed = run_calls(s->ops, calls, NULL, nparts, star_falls_back(s));
	for (int i = 0; i < nparts; i++)
	{
		pieces[i] = calls[i].failed == GH_OK && calls[i].reply != NULL ?
			gpuhash_ops_groups_from_reply(s->ops, calls[i].reply) : NULL;
		if (pieces[i] != NULL)
			star_note_kept(s, i, calls[i].result[0]);
	}
	if (failed < 0 && gpuhash_resolved_backend() == GH_BACKEND_CPU)
		name_simulated_devices(pieces, nparts);
	if (failed < 0)
	{
		st = gh_groups_combine(gpuhash_ops_cpu_engine(s->ops), pieces, nparts, &g);
		for (int i = 0; i < nparts; i++)
			gpuhash_op_groups_free(s->ops, pieces[i]);
		gpuhash_ops_cpu_check(s->ops, st);
		return g;
	}
	for (int i = 0; i < nparts; i++)
		gpuhash_op_groups_free(s->ops, pieces[i]);
	star_call_failed(s, &calls[failed]);
	return NULL;
}
