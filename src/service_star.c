/*-------------------------------------------------------------------------
 *
 * service_star.c
 *	  Stars in the GPU service: the dimensions, program and groups of one
 *	  GpuStarAgg, fed by every process of its query (star_ops.h).
 *
 * The leader creates the star (GHS_OP_STAR_CREATE) before its workers
 * start; every process then sends its batches of pages to the service
 * worker that holds it, which runs them through the star and checks the
 * shared buffers they came from (star_core_pages); one process asks for
 * the groups at the end.  The creator's transaction owns the star: it is
 * freed by its node, or when that transaction has ended.
 *
 * A process sends its batches in one segment it keeps for its scan: the
 * star keeps each such segment mapped from its first batch until the star
 * is freed (STAR_MAPPED of them, the least recently used given up), so that
 * a batch does not map the segment again and touch its pages for the first
 * time in this process (a page's first touch after a mapping costs more
 * than reading it: a large batch's arrays span hundreds of pages).
 *
 * Once the engine has failed a batch or the groups, every later call on
 * the star fails the same way: the groups are no longer to be trusted, and
 * every process of the query learns that its star is given up
 * (star_ops.h, fed_by_many), whichever of them sent the failing batch.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "utils/memutils.h"

#include "gpuhash.h"
#include "service_shared.h"
#include "star_ops.h"

/* the batch segments a star keeps mapped: one a process of its query, or a part's */
#define STAR_MAPPED 64

typedef struct ServiceStar
{
	int32		id;
	int			nmapped;
	dsm_segment *mapped[STAR_MAPPED];	/* least recently used first */
	StarCore	core;
	int			owner_procno;
	int			owner_pid;
	LocalTransactionId owner_lxid;
	gh_status	failed;			/* the failure of a batch or of the groups, if any */
	char		failure[256];	/* and what the engine said of it */
	struct ServiceStar *next;
} ServiceStar;

static ServiceStar *stars = NULL;

static ServiceStar *
find_star(int32 id)
{
	for (ServiceStar *s = stars; s; s = s->next)
		if (s->id == id)
			return s;
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("gpuhash GPU service: no star %d", id)));
}

static void
free_star(ServiceStar *star)
{
	ServiceStar **p;

	for (p = &stars; *p; p = &(*p)->next)
		if (*p == star)
		{
			*p = star->next;
			break;
		}
	for (int i = 0; i < star->nmapped; i++)
		dsm_detach(star->mapped[i]);
	star->nmapped = 0;
	star_core_free(&star->core);
	gpuhash_service_release_engine(star->core.e);
	pfree(star);
	gpuhash_service_count_object(-1);
}

static dsm_segment *
attach(GhsSlot *slot)
{
	dsm_segment *seg = dsm_attach(slot->data);

	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpuhash GPU service: could not attach a request's data")));
	return seg;
}

/*
 * The batch segment of slot, mapped for star until it is freed: the one
 * mapped already (by star, or by another star, which keeps it), or mapped
 * now (the least recently used one given up where star keeps STAR_MAPPED).
 */
static dsm_segment *
attach_batches(ServiceStar *star, GhsSlot *slot)
{
	dsm_segment *seg = NULL;
	int			i;

	for (i = star->nmapped - 1; i >= 0; i--)
		if (dsm_segment_handle(star->mapped[i]) == slot->data)
		{
			seg = star->mapped[i];
			break;
		}
	if (seg == NULL)
	{
		/* another star keeps it mapped (a process may map a segment once): used as it is */
		seg = dsm_find_mapping(slot->data);
		if (seg != NULL)
			return seg;
		seg = attach(slot);
		/* no resource owner's: it outlives this request */
		dsm_pin_mapping(seg);
		if (star->nmapped == STAR_MAPPED)
		{
			dsm_detach(star->mapped[0]);
			i = 0;
		}
		else
			i = star->nmapped++;
	}
	/* to the end of the list: the most recently used */
	memmove(&star->mapped[i], &star->mapped[i + 1],
			sizeof(dsm_segment *) * (star->nmapped - 1 - i));
	star->mapped[star->nmapped - 1] = seg;
	return seg;
}

/* every segment of the list detached, the list freed */
static void
detach_all(List *segs)
{
	ListCell   *lc;

	foreach(lc, segs)
		dsm_detach(lfirst(lc));
	list_free(segs);
}

void
gpuhash_star_service_create(GhsSlot *slot)
{
	gh_engine  *e = gpuhash_service_hold_engine(&slot->shape);
	dsm_segment *seg = NULL;
	List	   *volatile shares = NIL;	/* the segments of dimensions' shares, attached */
	ServiceStar *star = MemoryContextAllocZero(TopMemoryContext, sizeof(ServiceStar));

	PG_TRY();
	{
		char	   *base;
		GhsStarCreate *hdr;
		StarDimArrays dims[GH_PROG_MAX_DIMS];
		gh_status	st;
		char		err[512];
		instr_time	start;

		gpuhash_service_arm_failure(e, slot);
		/* room on the devices (device_gate.c); none in time: the client falls back */
		if (!gpuhash_service_room(e, err, sizeof(err)))
			gpuhash_gate_raise(err);
		seg = attach(slot);
		base = dsm_segment_address(seg);
		hdr = (GhsStarCreate *) base;
		if (hdr->ndims < 0 || hdr->ndims > GH_PROG_MAX_DIMS)
			elog(ERROR, "gpuhash GPU service: bad star");
		for (int d = 0; d < hdr->ndims; d++)
		{
			GhsStarDim *sd = &hdr->dims[d];

			if (sd->ncols < 0 || sd->ncols > GH_PROG_MAX_DIMCOLS)
				elog(ERROR, "gpuhash GPU service: bad star");
			dims[d].n = sd->n;
			dims[d].ncols = sd->ncols;
			dims[d].nparts = sd->nparts;
			if (sd->nparts < 0 || (sd->nparts > 0 && sd->parts == 0))
				elog(ERROR, "gpuhash GPU service: bad star");
			if (sd->nparts > 0)
			{
				/* each share in its segment, attached while the star is made */
				dims[d].parts = ghs_at(base, sd->parts);
				dims[d].base = palloc(sizeof(char *) * sd->nparts);
				for (int p = 0; p < sd->nparts; p++)
				{
					/* a process's shares of several dimensions lie in one segment */
					dsm_segment *share = dsm_find_mapping(dims[d].parts[p].handle);

					if (share == NULL)
					{
						share = dsm_attach(dims[d].parts[p].handle);
						if (share == NULL)
							elog(ERROR, "gpuhash GPU service: a star's dimension share is gone");
						shares = lappend(shares, share);
					}
					dims[d].base[p] = dsm_segment_address(share);
				}
			}
			dims[d].keys = ghs_at(base, sd->keys);
			for (int k = 0; k < sd->ncols; k++)
			{
				dims[d].lo[k] = ghs_at(base, sd->lo[k]);
				dims[d].hi[k] = ghs_at(base, sd->hi[k]);
				dims[d].nulls[k] = ghs_at(base, sd->nulls[k]);
				dims[d].dscale[k] = ghs_at(base, sd->dscale[k]);
			}
		}
		INSTR_TIME_SET_CURRENT(start);
		st = star_core_create(&star->core, e, &hdr->prog, &hdr->spec, hdr->ndims, dims);
		elog(DEBUG1, "gpuhash GPU service: a star's dimensions made in %.3f ms",
			 gpuhash_elapsed_ms(start));
		if (st != GH_OK && st != GH_ERR_DUPLICATE_KEY)
			gpuhash_service_engine_failed(e, st);
	}
	PG_CATCH();
	{
		detach_all(shares);
		if (seg)
			dsm_detach(seg);
		pfree(star);
		gpuhash_service_release_engine(e);
		PG_RE_THROW();
	}
	PG_END_TRY();
	detach_all(shares);
	dsm_detach(seg);
	if (star->core.star == NULL)
	{
		/* a dimension holds a key twice: no star, and the client runs its alternative */
		slot->result[0] = 1;
		slot->result[1] = star->core.failed_dim;
		pfree(star);
		gpuhash_service_release_engine(e);
		return;
	}
	star->id = gpuhash_service_new_id();
	star->owner_procno = slot->client_procno;
	star->owner_pid = slot->client_pid;
	star->owner_lxid = slot->client_lxid;
	star->next = stars;
	stars = star;
	gpuhash_service_count_object(1);
	slot->result_object = star->id;
	slot->result[3] = gh_engine_peak_device_bytes(e);
}

/* the star of slot; one failed before fails this call the same way */
static ServiceStar *
usable_star(GhsSlot *slot)
{
	ServiceStar *star = find_star(slot->object);

	if (star->failed != GH_OK)
		gpuhash_status_error(star->failed, star->failure);
	return star;
}

/* star's engine failed it: remembered, raised */
static void
star_failed(ServiceStar *star, gh_status st)
{
	if (st != GH_ERR_CANCELLED)
	{
		star->failed = st;
		strlcpy(star->failure, gh_last_error(star->core.e), sizeof(star->failure));
	}
	gpuhash_service_engine_failed(star->core.e, st);
}

void
gpuhash_star_service_pages(GhsSlot *slot)
{
	ServiceStar *star = usable_star(slot);
	dsm_segment *seg = attach_batches(star, slot);

	{
		char	   *base = dsm_segment_address(seg);
		GhsStarPages *hdr = (GhsStarPages *) base;
		uint8	   *status = ghs_at(base, hdr->status);
		gh_status	st;

		if (hdr->synthetic)
		{
			uint32	   *ids = palloc(sizeof(uint32) * Max(hdr->npages, 1));

			for (uint64 p = 0; p < hdr->npages; p++)
				ids[p] = (uint32) p;
			st = star_core_pages(&star->core, ghs_at(base, hdr->pages), ids, NULL, NULL, status,
								 hdr->npages);
			pfree(ids);
		}
		else
		{
			StarPageNames names = {hdr->name_rel, hdr->name_spc, ghs_at(base, hdr->blocks),
				ghs_at(base, hdr->versions)};

			st = star_core_pages(&star->core, BufferBlocks, ghs_at(base, hdr->pages),
								 ghs_at(base, hdr->lsns), &names, status, hdr->npages);
		}
		if (st != GH_OK)
			star_failed(star, st);
	}
	slot->result[0] = gh_star_rows(star->core.star);
	slot->result[3] = gh_engine_peak_device_bytes(star->core.e);
}

void
gpuhash_star_service_result(GhsSlot *slot)
{
	ServiceStar *star = usable_star(slot);
	gh_groups  *g;
	gh_status	st;

	st = star_core_result(&star->core, &g);
	if (st != GH_OK)
		star_failed(star, st);
	gpuhash_service_reply_groups(slot, g, true);
	slot->result[0] = gh_star_rows(star->core.star);
	slot->result[3] = gh_engine_peak_device_bytes(star->core.e);
}

/* Free star id (any process of its query may); false if there is none. */
bool
gpuhash_star_service_free(int32 id)
{
	for (ServiceStar *s = stars; s; s = s->next)
		if (s->id == id)
		{
			free_star(s);
			return true;
		}
	return false;
}

/* Free the stars whose creator's transaction has ended. */
void
gpuhash_star_service_reap(void)
{
	for (ServiceStar *s = stars; s;)
	{
		ServiceStar *next = s->next;

		if (gpuhash_service_owner_gone(s->owner_procno, s->owner_pid, s->owner_lxid))
			free_star(s);
		s = next;
	}
}
