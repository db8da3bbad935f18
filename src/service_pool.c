/*-------------------------------------------------------------------------
 *
 * service_pool.c
 *	  Pools, in the GPU service: the input rows of one parallel aggregation,
 *	  appended by every process of the query, aggregated once.
 *
 * Rows are kept per NULL pattern and, for a fused join, per side, in the
 * engine's device arrays: a plain aggregation's on the device where the
 * engine puts them, a fused join's in host memory.  Rows also come as heap
 * pages the client has pinned, read, checked and appended on the GPU
 * (gpuhash_pool_pages).  See src/README, "Pools" and "Reading heap pages".
 *
 * CPU FALLBACK
 *
 * Only the service holds a pool's rows, so a pool falls back here when the
 * device fails one of its operations and the client allows it
 * (gpuhash.cpu_fallback): what the failed operation had appended is cut
 * off again, every array moves to host memory (gh_darray_to_host: possible
 * after running out of device memory, not after a fault that lost the
 * device's memory, which fails the query), and the pool goes on with a CPU
 * engine: appends go to host memory, heap pages are all handed back for the
 * client to read itself, and the pool is aggregated on the CPU.  The reply
 * says so (fell_back), for the client's EXPLAIN and statistics.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/proc.h"
#include "utils/memutils.h"

#include "gpuhash.h"
#include "page_ops.h"
#include "service_shared.h"

#define POOL_PATTERNS 256

/* the rows of one side and pattern */
typedef struct PoolPart
{
	uint64		n;
	gh_darray  *keys;
	gh_darray  *jkeys;
	gh_darray **values;			/* per column, NULL for the other side's */
	gh_darray **nulls;			/* per column, NULL until a NULL comes */
} PoolPart;

typedef struct ServicePool
{
	int32		id;
	int			kind;			/* fused join: the table kind; -1: plain */
	int			ncols;			/* -1 until the first append */
	GhsDataCol *layout;
	gh_engine  *engine;			/* holds the arrays */
	GhsShape	shape;			/* engine's */
	gh_engine  *cpu;			/* fallen back: the CPU engine it goes on with */
	PoolPart   *parts[2][POOL_PATTERNS];
	int			owner_procno;
	int			owner_pid;
	LocalTransactionId owner_lxid;
	struct ServicePool *next;
} ServicePool;

static ServicePool *pools = NULL;

static void
free_part(PoolPart *part, int ncols)
{
	if (part == NULL)
		return;
	gh_darray_free(part->keys);
	gh_darray_free(part->jkeys);
	for (int c = 0; c < ncols; c++)
	{
		gh_darray_free(part->values[c]);
		gh_darray_free(part->nulls[c]);
	}
	pfree(part->values);
	pfree(part->nulls);
	pfree(part);
}

static void
free_pool(ServicePool *pool)
{
	ServicePool **p;

	for (p = &pools; *p; p = &(*p)->next)
		if (*p == pool)
		{
			*p = pool->next;
			break;
		}
	for (int side = 0; side < 2; side++)
		for (int i = 0; i < POOL_PATTERNS; i++)
			free_part(pool->parts[side][i], Max(pool->ncols, 0));
	if (pool->layout)
		pfree(pool->layout);
	gpuhash_service_release_engine(pool->engine);
	if (pool->cpu)
		gpuhash_service_release_engine(pool->cpu);
	pfree(pool);
	gpuhash_service_count_object(-1);
}

static ServicePool *
find_pool(int32 id)
{
	for (ServicePool *p = pools; p; p = p->next)
		if (p->id == id)
			return p;
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("gpuhash GPU service: no pool %d", id)));
}

void
gpuhash_pool_create(GhsSlot *slot)
{
	gh_engine  *e = gpuhash_service_hold_engine(&slot->shape);
	ServicePool *pool = MemoryContextAllocZero(TopMemoryContext, sizeof(ServicePool));

	pool->id = gpuhash_service_new_id();
	pool->kind = slot->kind;
	pool->ncols = -1;
	pool->engine = e;
	pool->shape = slot->shape;
	pool->owner_procno = slot->client_procno;
	pool->owner_pid = slot->client_pid;
	pool->owner_lxid = slot->client_lxid;
	pool->next = pools;
	pools = pool;
	gpuhash_service_count_object(1);
	slot->result_object = pool->id;
}

/* a new array of pool's in *a, placed as the pool's kind wants (header comment) */
static gh_status
new_array(ServicePool *pool, gh_darray **a)
{
	return gh_darray_create(pool->engine, pool->kind < 0 && pool->cpu == NULL, a);
}

/* append bytes from src (NULL: zeros) to *a, made first if need be */
static gh_status
append(ServicePool *pool, gh_darray **a, const void *src, Size bytes)
{
	if (*a == NULL)
	{
		gh_status	st = new_array(pool, a);

		if (st != GH_OK)
			return st;
	}
	return gh_darray_append(*a, src, bytes);
}

/* ---- CPU fallback ---- */

/* A part as it was before an operation that may fail part way (PartMark). */
typedef struct PartMark
{
	PoolPart   *part;
	uint64		n;
	int			narrays;
	Size	   *bytes;			/* per array of the part (part_array), -1: none */
} PartMark;

/* array a of part (-2 keys, -1 join keys, 2c values of column c, 2c + 1 its nulls) */
static gh_darray **
part_array(ServicePool *pool, PoolPart *part, int a)
{
	if (a == -2)
		return &part->keys;
	if (a == -1)
		return &part->jkeys;
	return a % 2 ? &part->nulls[a / 2] : &part->values[a / 2];
}

static void
mark_part(ServicePool *pool, PoolPart *part, PartMark *m)
{
	m->part = part;
	m->n = part->n;
	m->narrays = 2 + 2 * Max(pool->ncols, 0);
	m->bytes = palloc(sizeof(Size) * m->narrays);
	for (int a = -2; a < m->narrays - 2; a++)
	{
		gh_darray  *arr = *part_array(pool, part, a);

		m->bytes[a + 2] = arr ? gh_darray_bytes(arr) : (Size) -1;
	}
}

/* Put a part back as it was marked: the rows appended since cut off again. */
static void
restore_part(ServicePool *pool, const PartMark *m)
{
	for (int a = -2; a < m->narrays - 2; a++)
	{
		gh_darray **arr = part_array(pool, m->part, a);

		if (*arr == NULL)
			continue;
		if (m->bytes[a + 2] == (Size) -1)
		{
			gh_darray_free(*arr);
			*arr = NULL;
		}
		else
			gh_darray_truncate(*arr, m->bytes[a + 2]);
	}
	m->part->n = m->n;
}

/*
 * The device failed an operation of pool with st (its parts put back as
 * they were before it; msg: why, NULL for the engine's last error): may the
 * pool go on with the CPU backend?  If so,
 * its arrays are in host memory and its CPU engine held, and the reply says
 * why.  False if the client does not allow it, or the device cannot give
 * the arrays back.
 */
static bool
pool_fall_back(ServicePool *pool, GhsSlot *slot, gh_status st, const char *msg)
{
	char		why[256];

	if (!slot->cpu_fallback ||
		(st != GH_ERR_DEVICE_NOMEM && st != GH_ERR_DEVICE && st != GH_ERR_NODEVICE))
		return false;
	snprintf(why, sizeof(why), "%s: %s", gh_status_name(st), msg ? msg : gh_last_error(pool->engine));
	if (pool->cpu == NULL)
	{
		GhsShape	shape = pool->shape;

		for (int side = 0; side < 2; side++)
			for (int i = 0; i < POOL_PATTERNS; i++)
			{
				PoolPart   *part = pool->parts[side][i];

				for (int a = -2; part != NULL && a < 2 * Max(pool->ncols, 0); a++)
				{
					gh_darray  *arr = *part_array(pool, part, a);

					if (arr != NULL && gh_darray_to_host(arr) != GH_OK)
					{
						ereport(LOG,
								(errmsg("gpuhash GPU service: pool %d cannot fall back on the CPU", pool->id),
								 errdetail("%s; its rows could not be read back: %s", why,
										   gh_last_error(pool->engine))));
						return false;
					}
				}
			}
		shape.backend = GH_BACKEND_CPU;
		strlcpy(shape.devices, "all", sizeof(shape.devices));
		shape.fallback = true;
		pool->cpu = gpuhash_service_hold_engine(&shape);
		ereport(LOG,
				(errmsg("gpuhash GPU service: pool %d goes on with the CPU backend", pool->id),
				 errdetail("%s", why)));
	}
	slot->fell_back = true;
	strlcpy(slot->message, why, sizeof(slot->message));
	return true;
}

/* The pool's columns: the first append's; every later one must bring the same. */
static void
set_layout(ServicePool *pool, const GhsDataCol *cols, int ncols)
{
	if (pool->ncols < 0)
	{
		pool->ncols = ncols;
		pool->layout = MemoryContextAlloc(TopMemoryContext, sizeof(GhsDataCol) * Max(ncols, 1));
		memcpy(pool->layout, cols, sizeof(GhsDataCol) * ncols);
	}
	if (ncols != pool->ncols)
		elog(ERROR, "gpuhash GPU service: a pool's appends differ in their columns");
	for (int c = 0; c < ncols; c++)
		if (cols[c].type != pool->layout[c].type || cols[c].ops != pool->layout[c].ops ||
			cols[c].inner != pool->layout[c].inner)
			elog(ERROR, "gpuhash GPU service: a pool's appends differ in their columns");
}

/* The rows of side and pattern, made empty if there are none yet. */
static PoolPart *
get_part(ServicePool *pool, int side, int pattern)
{
	PoolPart   *part = pool->parts[side][pattern];

	if (part == NULL)
	{
		part = MemoryContextAllocZero(TopMemoryContext, sizeof(PoolPart));
		part->values = MemoryContextAllocZero(TopMemoryContext,
											  sizeof(gh_darray *) * Max(pool->ncols, 1));
		part->nulls = MemoryContextAllocZero(TopMemoryContext,
											 sizeof(gh_darray *) * Max(pool->ncols, 1));
		pool->parts[side][pattern] = part;
	}
	return part;
}

/*
 * Room on the device for an operation of pool (device_gate.c); false, and
 * why, if none came in time.  A pool fallen back on the CPU needs none.
 */
static bool
pool_room(ServicePool *pool, char *why, size_t len)
{
	return pool->cpu != NULL || gpuhash_service_room(pool->engine, why, len);
}

/* raise the failure st of pool's engine (why: the wait for room's, if that failed) */
static void
pool_failed(ServicePool *pool, gh_status st, const char *why)
{
	if (why[0])
		gpuhash_gate_raise(why);
	gpuhash_service_engine_failed(pool->engine, st);
}

/* Append the rows of data segment d (at base) to part: GH_OK or the first failure. */
static gh_status
append_rows(ServicePool *pool, PoolPart *part, int side, GhsData *d, char *base)
{
	uint64		n = d->n;
	gh_status	st = GH_OK;

	if (d->keys != 0)
		st = append(pool, &part->keys, ghs_at(base, d->keys), 8 * n);
	if (st == GH_OK && pool->kind >= 0)
		st = append(pool, &part->jkeys, ghs_at(base, d->jkeys), 8 * n);
	for (int c = 0; st == GH_OK && c < pool->ncols; c++)
	{
		if (pool->layout[c].inner != side)
			continue;
		st = append(pool, &part->values[c], ghs_at(base, d->cols[c].values), 8 * n);
		if (st == GH_OK && d->cols[c].nulls != 0 && part->nulls[c] == NULL)
			st = append(pool, &part->nulls[c], NULL, part->n);	/* none until now */
		if (st == GH_OK && part->nulls[c] != NULL)
			st = append(pool, &part->nulls[c], ghs_at(base, d->cols[c].nulls), n);
	}
	if (st == GH_OK)
		part->n += n;
	return st;
}

/*
 * Append the rows of a request's data segment (length bytes mapped at base)
 * to the pool; true if they went to the device.
 */
bool
gpuhash_pool_append(GhsSlot *slot, char *base, Size length)
{
	ServicePool *pool = find_pool(slot->object);
	GhsData    *d = (GhsData *) base;
	int			side = slot->arg[0] ? 1 : 0;
	int			pattern = (int) slot->arg[1];
	PoolPart   *part;
	PartMark	mark;
	bool		pinned;
	gh_status	st;
	char		why[256];

	if (pattern < 0 || pattern >= POOL_PATTERNS || (side == 1 && pool->kind < 0))
		elog(ERROR, "gpuhash GPU service: bad pool append");
	set_layout(pool, d->cols, d->ncols);
	part = get_part(pool, side, pattern);
	/*
	 * A fused join's side without grouping columns sends no keys (they would
	 * all be 0): then none of that side's appends do.
	 */
	if ((d->keys == 0 && pool->kind < 0) ||
		(part->n > 0 && (part->keys == NULL) != (d->keys == 0)))
		elog(ERROR, "gpuhash GPU service: a pool's appends differ in their keys");

	mark_part(pool, part, &mark);
	if (!pool_room(pool, why, sizeof(why)))
		st = GH_ERR_DEVICE_NOMEM;
	else
	{
		/* the segment pinned, rows for the device cross the bus at full speed (best effort) */
		pinned = pool->kind < 0 && pool->cpu == NULL &&
			(part->keys ? gh_darray_on_device(part->keys) : gh_engine_ndevices(pool->engine) == 1) &&
			gh_pin_host(pool->engine, base, TYPEALIGN(4096, length));
		PG_TRY();
		{
			st = append_rows(pool, part, side, d, base);
		}
		PG_FINALLY();
		{
			if (pinned)
				gh_unpin_host(pool->engine, base);
		}
		PG_END_TRY();
		why[0] = '\0';
	}
	if (st != GH_OK)
	{
		restore_part(pool, &mark);
		if (!pool_fall_back(pool, slot, st, why[0] ? why : NULL))
			pool_failed(pool, st, why);
		st = append_rows(pool, part, side, d, base);
		if (st != GH_OK)
			gpuhash_service_engine_failed(pool->engine, st);
	}
	return gh_darray_on_device(part->jkeys ? part->jkeys : part->keys);
}

/* a new array of pool's for *a, which must not hold rows yet (the part has none) */
static gh_status
first_array(ServicePool *pool, PoolPart *part, gh_darray **a)
{
	if (*a != NULL)
		return GH_OK;
	if (part->n > 0)
		elog(ERROR, "gpuhash GPU service: a pool's appends differ in their columns");
	return new_array(pool, a);
}

/*
 * Append the rows of a batch's pattern to the part of pp's side (arrays
 * made as needed): its grouping keys where pp says they are kept, a fused
 * join's join keys, and its values to their pool columns.
 */
static gh_status
append_batch_part(ServicePool *pool, GhsPoolPages *pp, gh_pagebatch *b, int pattern, uint64 n)
{
	PoolPart   *part = get_part(pool, pp->side, pattern);
	gh_darray  *values[GH_PAGE_MAX_VALS];
	gh_darray  *nulls[GH_PAGE_MAX_VALS];
	gh_status	st = GH_OK;

	if (part->n > 0 && (part->keys != NULL) != pp->keyed)
		elog(ERROR, "gpuhash GPU service: a pool's appends differ in their keys");
	if (pp->keyed)
		st = first_array(pool, part, &part->keys);
	if (st == GH_OK && pool->kind >= 0)
		st = first_array(pool, part, &part->jkeys);
	for (int v = 0; st == GH_OK && v < pp->enc.nvals; v++)
	{
		int			c = pp->val_col[v];

		st = first_array(pool, part, &part->values[c]);
		if (st == GH_OK && part->nulls[c] == NULL && gh_pagebatch_has_nulls(b, v))
			st = append(pool, &part->nulls[c], NULL, part->n);	/* none until now */
		values[v] = part->values[c];
		nulls[v] = part->nulls[c];
	}
	if (st == GH_OK)
		st = gh_pagebatch_append(b, pattern, pp->keyed ? part->keys : NULL, values, nulls);
	if (st == GH_OK && pool->kind >= 0)
		st = gh_pagebatch_append_jkeys(b, pattern, part->jkeys);
	if (st == GH_OK)
		part->n += n;
	return st;
}

/* Does pp describe rows for pool: its side, its keys, values of its side's columns? */
static bool
pool_pages_fit(ServicePool *pool, const GhsPoolPages *pp)
{
	bool		fused = pool->kind >= 0;

	if (pp->side < 0 || pp->side > (fused ? 1 : 0) || (!fused && !pp->keyed) ||
		fused != (pp->enc.njkeys > 0) || pp->enc.nvals > pool->ncols)
		return false;
	for (int v = 0; v < pp->enc.nvals; v++)
		if (pp->val_col[v] < 0 || pp->val_col[v] >= pool->ncols ||
			pool->layout[pp->val_col[v]].inner != (pp->side == 1))
			return false;
	for (int k = 0; fused && k < pp->enc.nkeys; k++)
		if (!pp->enc.key[k].null_in_key)
			return false;		/* a fused join's rows all have pattern 0 */
	return true;
}

/*
 * Read pp's pages on the GPU, check them and append the rows of those that
 * held: GH_OK and the rows appended, or the first failure (the parts then
 * put back as they were).
 */
static gh_status
read_pool_pages(ServicePool *pool, GhsPoolPages *pp, char *base, uint64 *total)
{
	uint32	   *ids = ghs_at(base, pp->pages);
	uint64	   *lsns = ghs_at(base, pp->lsns);
	uint8	   *dropped = ghs_at(base, pp->dropped);
	gh_pagebatch *b = NULL;
	uint64		counts[POOL_PATTERNS];
	PartMark	marks[POOL_PATTERNS];
	int			nmarks = 0;
	gh_status	st;

	*total = 0;
	st = gh_pages_read(pool->engine, &pp->spec, &pp->enc, BufferBlocks, ids, pp->npages, &b);
	if (st != GH_OK)
		return st;
	PG_TRY();
	{
		const uint8_t *bad = gh_pagebatch_bad(b);

		for (uint64 p = 0; p < pp->npages; p++)
			gpuhash_buffer_prefetch(ids[p]);
		for (uint64 p = 0; p < pp->npages; p++)
			dropped[p] = dropped[p] || bad[p] || !gpuhash_buffer_unchanged(ids[p], lsns[p]);
		st = gh_pagebatch_keep(b, dropped, counts);
		for (int pattern = 0; st == GH_OK && pattern < POOL_PATTERNS; pattern++)
			if (counts[pattern] > 0)
			{
				mark_part(pool, get_part(pool, pp->side, pattern), &marks[nmarks++]);
				st = append_batch_part(pool, pp, b, pattern, counts[pattern]);
				*total += counts[pattern];
			}
		if (st != GH_OK)
			for (int m = 0; m < nmarks; m++)
				restore_part(pool, &marks[m]);
	}
	PG_FINALLY();
	{
		gh_pagebatch_free(b);
	}
	PG_END_TRY();
	return st;
}

uint64
gpuhash_pool_pages(GhsSlot *slot, char *base)
{
	ServicePool *pool = find_pool(slot->object);
	GhsPoolPages *pp = (GhsPoolPages *) base;
	uint8	   *dropped = ghs_at(base, pp->dropped);
	uint64		total = 0;
	gh_status	st = GH_OK;
	char		why[256];

	if (pp->ncols < 0 || pp->ncols > GH_PAGE_MAX_VALS)
		elog(ERROR, "gpuhash GPU service: bad pool pages");
	set_layout(pool, pp->cols, pp->ncols);
	if (!pool_pages_fit(pool, pp))
		elog(ERROR, "gpuhash GPU service: bad pool pages");
	why[0] = '\0';
	if (pool->cpu == NULL)
		st = pool_room(pool, why, sizeof(why)) ? read_pool_pages(pool, pp, base, &total) :
			GH_ERR_DEVICE_NOMEM;
	if (pool->cpu != NULL || st != GH_OK)
	{
		/* fallen back on the CPU: the client reads every page itself */
		if (st != GH_OK && !pool_fall_back(pool, slot, st, why[0] ? why : NULL))
			pool_failed(pool, st, why);
		slot->fell_back = true;
		if (st == GH_OK)
			strlcpy(slot->message, "the pool went on with the CPU backend", sizeof(slot->message));
		for (uint64 p = 0; p < pp->npages; p++)
			dropped[p] = 1;
		total = 0;
	}
	return total;
}

void
gpuhash_pool_patterns(GhsSlot *slot)
{
	ServicePool *pool = find_pool(slot->object);

	for (int i = 0; i < POOL_PATTERNS; i++)
		if (pool->parts[0][i] && pool->parts[0][i]->n > 0)
			slot->result[i / 64] |= UINT64CONST(1) << (i % 64);
}

/* the engine columns of a side's part (both parts for a fused join) */
static gh_aggcol *
part_cols(ServicePool *pool, PoolPart *outer, PoolPart *inner, uint8 **col_inner)
{
	gh_aggcol  *cols = palloc0(sizeof(gh_aggcol) * Max(pool->ncols, 1));

	*col_inner = palloc0(Max(pool->ncols, 1));
	for (int c = 0; c < pool->ncols; c++)
	{
		PoolPart   *part = pool->layout[c].inner ? inner : outer;

		cols[c].type = (gh_valtype) pool->layout[c].type;
		cols[c].ops = pool->layout[c].ops;
		cols[c].values = gh_darray_data(part->values[c]);
		cols[c].nulls = gh_darray_data(part->nulls[c]);
		(*col_inner)[c] = pool->layout[c].inner;
	}
	return cols;
}

/* pin (pin true) or unpin the host arrays of the parts, for the copies to the device */
static int
pin_parts(ServicePool *pool, PoolPart **parts, int nparts, bool pin)
{
	int			npinned = 0;

	for (int i = 0; i < nparts; i++)
	{
		PoolPart   *part = parts[i];

		for (int a = -2; part != NULL && a < 2 * pool->ncols; a++)
		{
			gh_darray  *arr = a == -2 ? part->keys : a == -1 ? part->jkeys :
				a % 2 ? part->nulls[a / 2] : part->values[a / 2];

			if (!pin)
				gh_darray_unpin(arr);
			else if (gh_darray_pin(arr))
				npinned++;
		}
	}
	return npinned;
}

/* the engine that holds slot's pool */
gh_engine *
gpuhash_pool_engine(GhsSlot *slot)
{
	return find_pool(slot->object)->engine;
}

/* Aggregate (or join and aggregate) the pool's parts with engine e into *g. */
static gh_status
aggregate_parts(ServicePool *pool, gh_engine *e, PoolPart *outer, PoolPart *inner,
				gh_groups **g)
{
	uint8	   *col_inner;
	gh_aggcol  *cols = part_cols(pool, outer, inner, &col_inner);
	gh_table   *t = NULL;
	gh_joinagg	spec;
	gh_status	st;

	if (pool->kind < 0)
		return gh_aggregate(e, gh_darray_data(outer->keys), outer->n, cols, pool->ncols, g);
	spec.outer_keys = gh_darray_data(outer->keys);
	spec.inner_keys = gh_darray_data(inner->keys);
	spec.inner_rows = inner->n;
	spec.cols = cols;
	spec.col_inner = col_inner;
	spec.ncols = pool->ncols;
	st = gh_build(e, (gh_kind) pool->kind, gh_darray_data(inner->jkeys), NULL, inner->n, &t);
	if (st == GH_OK)
		st = gh_join_aggregate(t, gh_darray_data(outer->jkeys), outer->n, GH_JOIN_AUTO, &spec, g);
	gh_table_free(t);
	return st;
}

/* Aggregate (or join and aggregate) the rows of one pattern; reply the groups. */
void
gpuhash_pool_finish(GhsSlot *slot)
{
	ServicePool *pool = find_pool(slot->object);
	gh_engine  *e = pool->cpu ? pool->cpu : pool->engine;
	int			pattern = (int) slot->arg[1];
	PoolPart   *outer = (pattern >= 0 && pattern < POOL_PATTERNS) ? pool->parts[0][pattern] : NULL;
	PoolPart   *inner = pool->parts[1][0];
	PoolPart   *parts[2];
	gh_groups  *g = NULL;
	gh_groups	empty;
	gh_status	st = GH_OK;
	int			npinned = 0;
	instr_time	start;
	double		pin_ms;
	char		why[256];

	if (outer == NULL || outer->n == 0 || (pool->kind >= 0 && (inner == NULL || inner->n == 0)))
	{
		/* nothing to join or aggregate: no groups */
		memset(&empty, 0, sizeof(empty));
		empty.ncols = Max(pool->ncols, 0);
		empty.cols = palloc0(sizeof(gh_aggresult) * Max(empty.ncols, 1));
		gpuhash_service_reply_groups(slot, &empty, false);
		return;
	}
	parts[0] = outer;
	parts[1] = pool->kind >= 0 ? inner : NULL;
	INSTR_TIME_SET_CURRENT(start);
	if (pool->cpu == NULL)
		npinned = pin_parts(pool, parts, 2, true);
	pin_ms = gpuhash_elapsed_ms(start);
	INSTR_TIME_SET_CURRENT(start);
	why[0] = '\0';
	st = pool_room(pool, why, sizeof(why)) ? aggregate_parts(pool, e, outer, inner, &g) :
		GH_ERR_DEVICE_NOMEM;
	if (pool->cpu == NULL)
		(void) pin_parts(pool, parts, 2, false);
	if (st != GH_OK && pool->cpu == NULL && pool_fall_back(pool, slot, st, why[0] ? why : NULL))
	{
		e = pool->cpu;
		why[0] = '\0';
		st = aggregate_parts(pool, e, outer, inner, &g);
	}
	elog(DEBUG1, "gpuhash pool %d: " UINT64_FORMAT " rows %s, %d arrays pinned in %.1f ms, engine %.1f ms",
		 pool->id, (uint64) outer->n,
		 gh_darray_on_device(outer->keys) ? "on the device" : "in host memory",
		 npinned, pin_ms, gpuhash_elapsed_ms(start));
	if (st != GH_OK && why[0])
		gpuhash_gate_raise(why);
	if (st != GH_OK)
		gpuhash_service_engine_failed(e, st);
	gpuhash_service_reply_groups(slot, g, true);
}

/* Free pool id (any process of its query may); false if there is none. */
bool
gpuhash_pool_free(int32 id)
{
	for (ServicePool *p = pools; p; p = p->next)
		if (p->id == id)
		{
			free_pool(p);
			return true;
		}
	return false;
}

/* Free the pools whose creator's transaction has ended. */
void
gpuhash_pool_reap(void)
{
	for (ServicePool *p = pools; p;)
	{
		ServicePool *next = p->next;

		if (gpuhash_service_owner_gone(p->owner_procno, p->owner_pid, p->owner_lxid))
			free_pool(p);
		p = next;
	}
}
