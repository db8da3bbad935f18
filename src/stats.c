/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Statistics of gpuhash's use, per database: what the gpuhash_stats
 *	  view shows and gpuhash_stats_reset() clears.
 *
 * INTERFACE ROUTINES
 *		gpuhash_stats_add		add to a counter of this backend's database
 *		gpuhash_stats_query		count a query that used a kind of node (once a statement)
 *		gpuhash_stats_read, gpuhash_stats_reset		the SQL functions
 *
 * PostgreSQL 15 has no custom kinds of cumulative statistics, so they live
 * in a small shared hash table keyed by database OID (at most
 * GHST_MAX_DATABASES databases; others are not counted), created where
 * gpuhash is preloaded; without preloading nothing is counted and the view
 * is empty.  The table's lock is taken only to find or add a database's
 * entry, once per backend; the counters are atomics, so plan nodes add to
 * them without waiting, also while their query is being aborted.  Counts
 * are kept until the server stops or gpuhash_stats_reset() is called (not
 * across restarts), and are not transactional.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "commands/dbcommands.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "gpuhash.h"

#define GHST_MAX_DATABASES 256

typedef struct GhStatsEntry
{
	Oid			dbid;			/* the key */
	pg_atomic_uint64 counters[GHST_NCOUNTERS];
	pg_atomic_uint64 reset_at;	/* TimestampTz */
} GhStatsEntry;

typedef struct GhStatsShared
{
	LWLock	   *lock;			/* adding entries; reading them all */
} GhStatsShared;

static GhStatsShared *stats = NULL;
static HTAB *stats_hash = NULL;

/* this backend's database's entry, once found */
static GhStatsEntry *my_entry = NULL;
static Oid	my_entry_db = InvalidOid;

/* the statement each kind of node was last counted for */
static TimestampTz counted_at[GHST_NCOUNTERS];
static LocalTransactionId counted_in[GHST_NCOUNTERS];

Size
gpuhash_stats_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(GhStatsShared)),
					hash_estimate_size(GHST_MAX_DATABASES, sizeof(GhStatsEntry)));
}

void
gpuhash_stats_shmem_request(void)
{
	RequestNamedLWLockTranche("gpuhash stats", 1);
}

/* under AddinShmemInitLock (shmem.c) */
void
gpuhash_stats_shmem_init(void)
{
	bool		found;
	HASHCTL		info;

	stats = ShmemInitStruct("gpuhash stats", sizeof(GhStatsShared), &found);
	if (!found)
		stats->lock = &(GetNamedLWLockTranche("gpuhash stats"))->lock;
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(GhStatsEntry);
	stats_hash = ShmemInitHash("gpuhash stats by database", GHST_MAX_DATABASES,
							   GHST_MAX_DATABASES, &info, HASH_ELEM | HASH_BLOBS);
}

static void
init_entry(GhStatsEntry *entry)
{
	for (int c = 0; c < GHST_NCOUNTERS; c++)
		pg_atomic_init_u64(&entry->counters[c], 0);
	pg_atomic_init_u64(&entry->reset_at, (uint64) GetCurrentTimestamp());
}

/* This backend's database's entry: NULL without one (not preloaded, no database, full). */
static GhStatsEntry *
entry_of_my_database(void)
{
	GhStatsEntry *entry;
	bool		found;

	if (stats == NULL || !OidIsValid(MyDatabaseId))
		return NULL;
	if (my_entry != NULL && my_entry_db == MyDatabaseId)
		return my_entry;
	LWLockAcquire(stats->lock, LW_SHARED);
	entry = hash_search(stats_hash, &MyDatabaseId, HASH_FIND, NULL);
	LWLockRelease(stats->lock);
	if (entry == NULL)
	{
		LWLockAcquire(stats->lock, LW_EXCLUSIVE);
		entry = hash_search(stats_hash, &MyDatabaseId, HASH_ENTER_NULL, &found);
		if (entry != NULL && !found)
			init_entry(entry);
		LWLockRelease(stats->lock);
	}
	my_entry = entry;
	my_entry_db = MyDatabaseId;
	return entry;
}

void
gpuhash_stats_add(GhStat counter, uint64 value)
{
	GhStatsEntry *entry;

	if (value == 0 || (entry = entry_of_my_database()) == NULL)
		return;
	pg_atomic_fetch_add_u64(&entry->counters[counter], value);
}

void
gpuhash_stats_query(GhStat kind)
{
	TimestampTz at = GetCurrentStatementStartTimestamp();

	/* a parallel worker's node is part of its leader's query */
	if (IsParallelWorker() || MyProc == NULL)
		return;
	if (counted_at[kind] == at && counted_in[kind] == PGPROC_LXID(MyProc))
		return;
	counted_at[kind] = at;
	counted_in[kind] = PGPROC_LXID(MyProc);
	gpuhash_stats_add(kind, 1);
}

/* gpuhash_stats_read(): one row per database counted */
PG_FUNCTION_INFO_V1(gpuhash_stats_read);

Datum
gpuhash_stats_read(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	GhStatsEntry *entry;
	Oid			dbids[GHST_MAX_DATABASES];
	uint64		counts[GHST_MAX_DATABASES][GHST_NCOUNTERS + 1];
	int			n = 0;

	InitMaterializedSRF(fcinfo, 0);
	if (stats == NULL)
		return (Datum) 0;
	/* a copy first: the names are looked up in the catalog, not under the lock */
	LWLockAcquire(stats->lock, LW_SHARED);
	hash_seq_init(&seq, stats_hash);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		if (n == GHST_MAX_DATABASES)
		{
			hash_seq_term(&seq);
			break;
		}
		dbids[n] = entry->dbid;
		for (int c = 0; c < GHST_NCOUNTERS; c++)
			counts[n][c] = pg_atomic_read_u64(&entry->counters[c]);
		counts[n][GHST_NCOUNTERS] = pg_atomic_read_u64(&entry->reset_at);
		n++;
	}
	LWLockRelease(stats->lock);
	for (int e = 0; e < n; e++)
	{
		Datum		values[GHST_NCOUNTERS + 3];
		bool		nulls[GHST_NCOUNTERS + 3] = {0};
		int			i = 0;
		char	   *datname = get_database_name(dbids[e]);

		values[i++] = ObjectIdGetDatum(dbids[e]);
		/* a database dropped since: NULL, the view leaves it out */
		nulls[i] = datname == NULL;
		values[i++] = datname ? DirectFunctionCall1(namein, CStringGetDatum(datname)) : (Datum) 0;
		for (int c = 0; c < GHST_NCOUNTERS; c++)
		{
			if (c == GHST_GPU_TIME_US)
				values[i++] = Float8GetDatum((double) counts[e][c] / 1000.0);	/* ms */
			else
				values[i++] = Int64GetDatum((int64) counts[e][c]);
		}
		values[i++] = TimestampTzGetDatum((TimestampTz) counts[e][GHST_NCOUNTERS]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* gpuhash_stats_reset(): every database's counters back to 0 */
PG_FUNCTION_INFO_V1(gpuhash_stats_reset);

Datum
gpuhash_stats_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	GhStatsEntry *entry;
	TimestampTz now = GetCurrentTimestamp();

	if (stats == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(stats->lock, LW_SHARED);
	hash_seq_init(&seq, stats_hash);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		for (int c = 0; c < GHST_NCOUNTERS; c++)
			pg_atomic_write_u64(&entry->counters[c], 0);
		pg_atomic_write_u64(&entry->reset_at, (uint64) now);
	}
	LWLockRelease(stats->lock);
	PG_RETURN_VOID();
}
