/*-------------------------------------------------------------------------
 *
 * service_pool.c
 *	  Pools, in the GPU service: the input rows of one parallel aggregation,
 *	  appended by every process of the query, aggregated once.
 *
 * Without a pool, each process of a parallel GROUP BY aggregates its share
 * on the device and sends its partial groups through the Gather to the
 * final node, which aggregates them again: with many groups, the partial
 * groups outnumber the groups many times over and the tuple queues become
 * the bottleneck.  With one, each process appends its rows here (host
 * memory of the service worker), and the last process to finish asks for
 * the groups of all of them: one device aggregation, one row per group.  A
 * fused join's pool keeps its two sides apart, and is joined and aggregated
 * at the end (the inner side built once).
 *
 * Rows are kept per NULL pattern (agg_exec.c) and, for a fused join, per
 * side; every append must bring the same columns.  Any process of the query
 * may append to the pool and free it; the creator's transaction owns it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "storage/proc.h"
#include "utils/memutils.h"

#include "gpuhash.h"
#include "service_shared.h"

#define POOL_PATTERNS 256
#define POOL_MAX_COLS 64		/* columns whose arrays are pinned for the finish */

/* the rows of one side and pattern, in arrays that grow */
typedef struct PoolPart
{
	uint64		n;
	uint64		cap;
	uint64	   *keys;
	uint64	   *jkeys;
	uint64	  **values;			/* per column, NULL for the other side's */
	uint8	  **nulls;
} PoolPart;

typedef struct ServicePool
{
	int32		id;
	int			kind;			/* fused join: the table kind; -1: plain */
	int			ncols;			/* -1 until the first append */
	GhsDataCol *layout;
	PoolPart   *parts[2][POOL_PATTERNS];
	int			owner_procno;
	int			owner_pid;
	LocalTransactionId owner_lxid;
	struct ServicePool *next;
} ServicePool;

static ServicePool *pools = NULL;

static void *
grow(void *p, Size bytes)
{
	void	   *q = realloc(p, Max(bytes, 1));

	if (q == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("the gpuhash GPU service ran out of host memory for a pool")));
	return q;
}

/*
 * The rows' arrays are anonymous mappings, grown by mremap (the pages move,
 * nothing is copied) and, once large, backed by huge pages where the kernel
 * allows:
 * every process of a query appends to one pool, so what an append costs
 * here (touching fresh memory above all) is paid once per row of the whole
 * query, in one process.
 */
#define POOL_HUGE_PAGE ((Size) 2 * 1024 * 1024)
#define POOL_HUGE_FROM ((Size) 16 * 1024 * 1024)

/*
 * The mapping's size for rows of width bytes: whole pages, whole huge pages
 * from POOL_HUGE_FROM on (the small arrays of rare NULL patterns stay in
 * small pages, or every one would take a huge page of memory).
 */
static Size
array_bytes(uint64 rows, Size width)
{
	Size		b = (Size) rows * width;
	Size		unit = b >= POOL_HUGE_FROM ? POOL_HUGE_PAGE : (Size) 4096;

	return (b + unit - 1) / unit * unit;
}

/* grow array p of old_rows to rows of width bytes (p NULL: a new one) */
static void *
grow_array(void *p, uint64 old_rows, uint64 rows, Size width)
{
	Size		old_bytes = array_bytes(old_rows, width);
	Size		bytes = array_bytes(rows, width);
	void	   *q;

	if (p != NULL && bytes == old_bytes)
		return p;
	if (p == NULL)
		q = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
	else
		q = mremap(p, old_bytes, bytes, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("the gpuhash GPU service ran out of host memory for a pool"),
				 errdetail("Mapping %zu bytes failed: %m.", bytes)));
#ifdef MADV_HUGEPAGE
	if (bytes >= POOL_HUGE_FROM)
		(void) madvise(q, bytes, MADV_HUGEPAGE);
#endif
	return q;
}

static void
free_array(void *p, uint64 rows, Size width)
{
	if (p != NULL)
		(void) munmap(p, array_bytes(rows, width));
}

static void
free_part(PoolPart *part, int ncols)
{
	if (part == NULL)
		return;
	free_array(part->keys, part->cap, 8);
	free_array(part->jkeys, part->cap, 8);
	for (int c = 0; c < ncols; c++)
	{
		free_array(part->values[c], part->cap, 8);
		free_array(part->nulls[c], part->cap, 1);
	}
	free(part->values);
	free(part->nulls);
	free(part);
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
	ServicePool *pool = MemoryContextAllocZero(TopMemoryContext, sizeof(ServicePool));

	pool->id = gpuhash_service_new_id();
	pool->kind = slot->kind;
	pool->ncols = -1;
	pool->owner_procno = slot->client_procno;
	pool->owner_pid = slot->client_pid;
	pool->owner_lxid = slot->client_lxid;
	pool->next = pools;
	pools = pool;
	gpuhash_service_count_object(1);
	slot->result_object = pool->id;
}

/* Append the rows of a request's data segment to the pool. */
void
gpuhash_pool_append(GhsSlot *slot, char *base)
{
	ServicePool *pool = find_pool(slot->object);
	GhsData    *d = (GhsData *) base;
	int			side = slot->arg[0] ? 1 : 0;
	int			pattern = (int) slot->arg[1];
	PoolPart   *part;
	uint64		n = d->n;
	uint64		at;
	gh_copy    *copies;
	int			ncopies = 0;

	if (pattern < 0 || pattern >= POOL_PATTERNS || (side == 1 && pool->kind < 0))
		elog(ERROR, "gpuhash GPU service: bad pool append");
	if (pool->ncols < 0)
	{
		pool->ncols = d->ncols;
		pool->layout = MemoryContextAlloc(TopMemoryContext,
										  sizeof(GhsDataCol) * Max(d->ncols, 1));
		memcpy(pool->layout, d->cols, sizeof(GhsDataCol) * d->ncols);
	}
	if (d->ncols != pool->ncols)
		elog(ERROR, "gpuhash GPU service: a pool's appends differ in their columns");
	for (int c = 0; c < d->ncols; c++)
		if (d->cols[c].type != pool->layout[c].type || d->cols[c].ops != pool->layout[c].ops ||
			d->cols[c].inner != pool->layout[c].inner)
			elog(ERROR, "gpuhash GPU service: a pool's appends differ in their columns");

	part = pool->parts[side][pattern];
	if (part == NULL)
	{
		part = grow(NULL, sizeof(PoolPart));
		memset(part, 0, sizeof(PoolPart));
		part->values = grow(NULL, sizeof(uint64 *) * Max(pool->ncols, 1));
		part->nulls = grow(NULL, sizeof(uint8 *) * Max(pool->ncols, 1));
		memset(part->values, 0, sizeof(uint64 *) * Max(pool->ncols, 1));
		memset(part->nulls, 0, sizeof(uint8 *) * Max(pool->ncols, 1));
		pool->parts[side][pattern] = part;
	}
	/*
	 * A fused join's side without grouping columns sends no keys (they would
	 * all be 0): then none of that side's appends do.
	 */
	if ((d->keys == 0 && pool->kind < 0) ||
		(part->n > 0 && (part->keys == NULL) != (d->keys == 0)))
		elog(ERROR, "gpuhash GPU service: a pool's appends differ in their keys");
	if (part->n + n > part->cap)
	{
		uint64		cap = Max(part->n + n, part->cap * 2);

		if (d->keys != 0)
			part->keys = grow_array(part->keys, part->cap, cap, 8);
		if (pool->kind >= 0)
			part->jkeys = grow_array(part->jkeys, part->cap, cap, 8);
		for (int c = 0; c < pool->ncols; c++)
			if (pool->layout[c].inner == side)
			{
				part->values[c] = grow_array(part->values[c], part->cap, cap, 8);
				part->nulls[c] = grow_array(part->nulls[c], part->cap, cap, 1);
			}
		part->cap = cap;
	}
	at = part->n;
	/* one process takes every append of the query: copy on several threads */
	copies = palloc(sizeof(gh_copy) * (2 + 2 * pool->ncols));
	if (d->keys != 0)
		copies[ncopies++] = (gh_copy) {part->keys + at, ghs_at(base, d->keys), 8 * n};
	if (pool->kind >= 0)
		copies[ncopies++] = (gh_copy) {part->jkeys + at, ghs_at(base, d->jkeys), 8 * n};
	for (int c = 0; c < pool->ncols; c++)
	{
		if (pool->layout[c].inner != side)
			continue;
		copies[ncopies++] = (gh_copy) {part->values[c] + at, ghs_at(base, d->cols[c].values), 8 * n};
		if (d->cols[c].nulls)
			copies[ncopies++] = (gh_copy) {part->nulls[c] + at, ghs_at(base, d->cols[c].nulls), n};
		else
			memset(part->nulls[c] + at, 0, n);
	}
	gh_copy_host(copies, ncopies);
	pfree(copies);
	part->n += n;
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
		cols[c].values = part->values[c];
		cols[c].nulls = part->nulls[c];
		(*col_inner)[c] = pool->layout[c].inner;
	}
	return cols;
}

/*
 * Pin the arrays of the parts for the copies to the device (gh_pin_host):
 * their used pages, into pinned[] (at most 2 * (2 + 2 * ncols)).
 */
static int
pin_parts(gh_engine *e, ServicePool *pool, PoolPart **parts, int nparts, void **pinned)
{
	int			n = 0;

	for (int i = 0; i < nparts; i++)
	{
		PoolPart   *part = parts[i];
		void	   *arrays[2 + 2 * POOL_MAX_COLS];
		Size		widths[2 + 2 * POOL_MAX_COLS];
		int			k = 0;

		if (part == NULL || part->n == 0)
			continue;
		arrays[k] = part->keys;
		widths[k++] = 8;
		arrays[k] = part->jkeys;
		widths[k++] = 8;
		for (int c = 0; c < pool->ncols && c < POOL_MAX_COLS; c++)
		{
			arrays[k] = part->values[c];
			widths[k++] = 8;
			arrays[k] = part->nulls[c];
			widths[k++] = 1;
		}
		for (int a = 0; a < k; a++)
			if (arrays[a] != NULL &&
				gh_pin_host(e, arrays[a], array_bytes(part->n, widths[a])))
				pinned[n++] = arrays[a];
	}
	return n;
}

/* Aggregate (or join and aggregate) the rows of one pattern; reply the groups. */
void
gpuhash_pool_finish(GhsSlot *slot, gh_engine *e)
{
	ServicePool *pool = find_pool(slot->object);
	int			pattern = (int) slot->arg[1];
	PoolPart   *outer = (pattern >= 0 && pattern < POOL_PATTERNS) ? pool->parts[0][pattern] : NULL;
	PoolPart   *inner = pool->parts[1][0];
	gh_groups  *g = NULL;
	gh_groups	empty;
	gh_aggcol  *cols;
	uint8	   *col_inner;
	gh_status	st = GH_OK;

	if (outer == NULL || outer->n == 0 || (pool->kind >= 0 && (inner == NULL || inner->n == 0)))
	{
		/* nothing to join or aggregate: no groups */
		memset(&empty, 0, sizeof(empty));
		empty.ncols = Max(pool->ncols, 0);
		empty.cols = palloc0(sizeof(gh_aggresult) * Max(empty.ncols, 1));
		gpuhash_service_reply_groups(slot, &empty, false);
		return;
	}
	cols = part_cols(pool, outer, inner, &col_inner);
	{
		PoolPart   *parts[2] = {outer, pool->kind >= 0 ? inner : NULL};
		void	   *pinned[2 * (2 + 2 * POOL_MAX_COLS)];
		int			npinned;
		instr_time	start;
		double		pin_ms;

		INSTR_TIME_SET_CURRENT(start);
		npinned = pin_parts(e, pool, parts, 2, pinned);
		pin_ms = gpuhash_elapsed_ms(start);
		INSTR_TIME_SET_CURRENT(start);
		if (pool->kind < 0)
			st = gh_aggregate(e, outer->keys, outer->n, cols, pool->ncols, &g);
		else
		{
			gh_table   *t = NULL;
			gh_joinagg	spec;

			spec.outer_keys = outer->keys;
			spec.inner_keys = inner->keys;
			spec.inner_rows = inner->n;
			spec.cols = cols;
			spec.col_inner = col_inner;
			spec.ncols = pool->ncols;
			st = gh_build(e, (gh_kind) pool->kind, inner->jkeys, NULL, inner->n, &t);
			if (st == GH_OK)
				st = gh_join_aggregate(t, outer->jkeys, outer->n, GH_JOIN_AUTO, &spec, &g);
			gh_table_free(t);
		}
		/* unpinned before anything can unmap the arrays */
		for (int i = 0; i < npinned; i++)
			gh_unpin_host(e, pinned[i]);
		elog(DEBUG1, "gpuhash pool %d: %d arrays of " UINT64_FORMAT " rows pinned in %.1f ms, engine %.1f ms",
			 pool->id, npinned, (uint64) outer->n, pin_ms, gpuhash_elapsed_ms(start));
	}
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
