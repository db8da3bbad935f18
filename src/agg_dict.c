/*-------------------------------------------------------------------------
 *
 * agg_dict.c
 *	  GpuHashAgg's dictionary: grouping columns the device cannot group
 *	  exactly, and aggregates it cannot compute, handled on the CPU.
 *
 * INTERFACE ROUTINES
 *		gha_dict_create		set up the dictionary for some grouping columns
 *		gha_dict_lookup		the dense id of one row's values of those columns
 *		gha_dict_advance	feed one value to a CPU aggregate of an id's group
 *		gha_dict_key		a grouping column's value of an id
 *		gha_dict_agg		a CPU aggregate's value of an id
 *
 * Such columns are mapped to a dense 32-bit id through PostgreSQL's own
 * grouping hash table (TupleHashTable, with the GROUP BY clause's equality,
 * hash functions and collations), and the id is packed into the device's key
 * instead: equal ids mean equal values, so a device group is exactly a SQL
 * group.  When an aggregate must run on the CPU (min/max of text, numeric,
 * ...), every grouping column goes through the dictionary and that aggregate
 * is advanced here per id with its own transition function.  A column whose
 * equality operator is given as InvalidOid is carried, not compared: the
 * group keeps its first row's value (a column that the group's other
 * columns determine, as a primary key determines its table's columns).
 *
 * A lookup costs a hash and an equality function call, 100 ns or more, and
 * a dimension of millions of rows looks each row's values up (star_dims.c).
 * Where every column is passed by value, a memo of recent lookups (direct
 * mapped, by the values' bits) answers first: equal bits are equal values
 * of such a type, so a hit is the group's id; a miss asks the table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "agg.h"

/* the slots of a dictionary's memo (a power of two) */
#define DICT_MEMO_SLOTS 4096
#define DICT_MEMO_MAX_COLS 4

/* per id: the group's CPU aggregate states (Datum, then isnull) */
typedef struct DictEntryState
{
	uint32		id;
	MinimalTuple tuple;			/* the group's values (the table's first tuple) */
	/* Datum values[ncpu]; bool isnull[ncpu]; follow */
} DictEntryState;

#define STATE_VALUES(st) ((Datum *) ((char *) (st) + MAXALIGN(sizeof(DictEntryState))))
#define STATE_NULLS(st, n) ((bool *) (STATE_VALUES(st) + (n)))

GhaDict *
gha_dict_create(PlanState *parent, List *types, List *eqops, List *collations,
				int ncpu, const Oid *cpu_transfns, const Oid *cpu_types,
				const Oid *cpu_collations, MemoryContext cxt)
{
	GhaDict    *d;
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Oid		   *eqoparr;
	Oid		   *colls;
	AttrNumber *colidx;
	ListCell   *lc;
	int			i;
	int			nkeys = 0;

	d = palloc0(sizeof(GhaDict));
	d->ncols = list_length(types);
	d->cxt = cxt;
	d->desc = CreateTemplateTupleDesc(d->ncols);
	eqoparr = palloc(sizeof(Oid) * d->ncols);
	colls = palloc(sizeof(Oid) * d->ncols);
	colidx = palloc(sizeof(AttrNumber) * d->ncols);
	i = 0;
	foreach(lc, types)
	{
		TupleDescInitEntry(d->desc, (AttrNumber) (i + 1), NULL, lfirst_oid(lc), -1, 0);
		/* the compared columns first in these arrays; carried ones are stored only */
		if (OidIsValid(list_nth_oid(eqops, i)))
		{
			eqoparr[nkeys] = list_nth_oid(eqops, i);
			colls[nkeys] = list_nth_oid(collations, i);
			colidx[nkeys] = (AttrNumber) (i + 1);
			nkeys++;
		}
		i++;
	}
	if (nkeys == 0 && d->ncols > 0)
		elog(ERROR, "gpuhash: a dictionary whose every column is carried");
	d->slot = MakeSingleTupleTableSlot(d->desc, &TTSOpsVirtual);
	d->out_slot = MakeSingleTupleTableSlot(d->desc, &TTSOpsMinimalTuple);
	execTuplesHashPrepare(nkeys, eqoparr, &d->eqfuncs, &d->hashfns);
	d->tablecxt = AllocSetContextCreate(cxt, "GpuHashAgg dictionary",
										ALLOCSET_DEFAULT_SIZES);
	d->tempcxt = AllocSetContextCreate(cxt, "GpuHashAgg dictionary lookups",
									   ALLOCSET_SMALL_SIZES);
	d->ncpu = ncpu;
	d->state_size = MAXALIGN(sizeof(DictEntryState)) +
		ncpu * (sizeof(Datum) + sizeof(bool));
	/* an entry's additional data is a pointer to its state (see pg_compat.h) */
	d->table = BuildTupleHashTableCompat(parent, d->desc, &TTSOpsVirtual, nkeys,
										 colidx, d->eqfuncs, d->hashfns, colls, 1024,
										 sizeof(DictEntryState *), cxt, d->tablecxt,
										 d->tempcxt, false);
	if (ncpu > 0)
	{
		d->transfns = palloc(sizeof(FmgrInfo) * ncpu);
		d->cpu_collations = palloc(sizeof(Oid) * ncpu);
		d->cpu_typlen = palloc(sizeof(int16) * ncpu);
		d->cpu_typbyval = palloc(sizeof(bool) * ncpu);
		for (i = 0; i < ncpu; i++)
		{
			fmgr_info_cxt(cpu_transfns[i], &d->transfns[i], cxt);
			d->cpu_collations[i] = cpu_collations[i];
			get_typlenbyval(cpu_types[i], &d->cpu_typlen[i], &d->cpu_typbyval[i]);
		}
	}
	d->entries_cap = 1024;
	d->entries = palloc(sizeof(void *) * d->entries_cap);
	if (d->ncols > 0 && d->ncols <= DICT_MEMO_MAX_COLS)
	{
		bool		byval = true;

		for (i = 0; i < d->ncols; i++)
			byval &= TupleDescAttr(d->desc, i)->attbyval;
		if (byval)
		{
			d->memo_values = palloc0(sizeof(Datum) * d->ncols * DICT_MEMO_SLOTS);
			d->memo_ids = palloc(sizeof(int64) * DICT_MEMO_SLOTS);
			for (i = 0; i < DICT_MEMO_SLOTS; i++)
				d->memo_ids[i] = -1;
		}
	}
	MemoryContextSwitchTo(old);
	return d;
}

/* the entry of values, made where isnew is not NULL and there is none; or NULL */
static TupleHashEntry
dict_entry(GhaDict *d, const Datum *values, const bool *isnull, bool *isnew)
{
	TupleHashEntry entry;

	ExecClearTuple(d->slot);
	memcpy(d->slot->tts_values, values, sizeof(Datum) * d->ncols);
	memcpy(d->slot->tts_isnull, isnull, sizeof(bool) * d->ncols);
	ExecStoreVirtualTuple(d->slot);
	entry = LookupTupleHashEntry(d->table, d->slot, isnew, NULL);
	MemoryContextReset(d->tempcxt);
	return entry;
}

/* the id of values' group, or -1 where there is none (none is made) */
int64
gha_dict_find(GhaDict *d, const Datum *values, const bool *isnull)
{
	TupleHashEntry entry = dict_entry(d, values, isnull, NULL);

	return entry ? (int64) (*(DictEntryState **) TupleHashEntryGetAdditional(d->table, entry))->id : -1;
}

/* the memo's slot of values, none NULL; -1 where one is NULL (no slot) */
static int
memo_slot(const GhaDict *d, const Datum *values, const bool *isnull)
{
	uint64		h = 0;

	for (int c = 0; c < d->ncols; c++)
	{
		if (isnull[c])
			return -1;
		h = (h ^ (uint64) values[c]) * UINT64CONST(0x9E3779B97F4A7C15);
		h ^= h >> 29;
	}
	return (int) (h >> 40) & (DICT_MEMO_SLOTS - 1);
}

static uint32 dict_add(GhaDict *d, const Datum *values, const bool *isnull);

uint32
gha_dict_lookup(GhaDict *d, const Datum *values, const bool *isnull)
{
	int			m = d->memo_ids ? memo_slot(d, values, isnull) : -1;
	Datum	   *memo;
	uint32		id;

	if (m < 0)
		return dict_add(d, values, isnull);
	memo = &d->memo_values[(Size) m * d->ncols];
	if (d->memo_ids[m] >= 0 && memcmp(memo, values, sizeof(Datum) * d->ncols) == 0)
		return (uint32) d->memo_ids[m];
	id = dict_add(d, values, isnull);
	memcpy(memo, values, sizeof(Datum) * d->ncols);
	d->memo_ids[m] = id;
	return id;
}

/* gha_dict_lookup by the table: values' id, a new one where it has none */
static uint32
dict_add(GhaDict *d, const Datum *values, const bool *isnull)
{
	bool		isnew;
	TupleHashEntry entry = dict_entry(d, values, isnull, &isnew);
	DictEntryState *st;

	if (!isnew)
		return (*(DictEntryState **) TupleHashEntryGetAdditional(d->table, entry))->id;

	if (d->nentries == PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("GpuHashAgg cannot form more than %u groups", PG_UINT32_MAX)));
	st = MemoryContextAllocZero(d->tablecxt, d->state_size);
	st->id = d->nentries;
	st->tuple = entry->firstTuple;
	for (int a = 0; a < d->ncpu; a++)
		STATE_NULLS(st, d->ncpu)[a] = true;
	*(DictEntryState **) TupleHashEntryGetAdditional(d->table, entry) = st;
	if (d->nentries == d->entries_cap)
	{
		d->entries_cap *= 2;
		d->entries = repalloc_huge(d->entries, sizeof(void *) * d->entries_cap);
	}
	/* not the entry: the hash table moves its entries as it grows */
	d->entries[d->nentries] = st;
	return d->nentries++;
}

void
gha_dict_advance(GhaDict *d, uint32 id, int a, Datum value, bool isnull)
{
	DictEntryState *st = d->entries[id];
	Datum	   *state = &STATE_VALUES(st)[a];
	bool	   *statenull = &STATE_NULLS(st, d->ncpu)[a];
	Datum		result;
	MemoryContext old;

	if (isnull)
		return;					/* strict transition: NULL inputs are skipped */
	if (*statenull)
	{
		old = MemoryContextSwitchTo(d->tablecxt);
		*state = datumCopy(value, d->cpu_typbyval[a], d->cpu_typlen[a]);
		MemoryContextSwitchTo(old);
		*statenull = false;
		return;
	}
	result = FunctionCall2Coll(&d->transfns[a], d->cpu_collations[a], *state, value);
	if (d->cpu_typbyval[a])
	{
		*state = result;
		return;
	}
	if (DatumGetPointer(result) != DatumGetPointer(*state))
	{
		/* min/max return one of their inputs: keep a copy of the new one */
		old = MemoryContextSwitchTo(d->tablecxt);
		result = datumCopy(result, false, d->cpu_typlen[a]);
		MemoryContextSwitchTo(old);
		pfree(DatumGetPointer(*state));
		*state = result;
	}
}

Datum
gha_dict_key(GhaDict *d, uint32 id, int col, bool *isnull)
{
	if (d->out_id != id || TTS_EMPTY(d->out_slot))
	{
		ExecStoreMinimalTuple(((DictEntryState *) d->entries[id])->tuple, d->out_slot, false);
		d->out_id = id;
	}
	return slot_getattr(d->out_slot, col + 1, isnull);
}

Datum
gha_dict_agg(GhaDict *d, uint32 id, int a, bool *isnull)
{
	DictEntryState *st = d->entries[id];

	*isnull = STATE_NULLS(st, d->ncpu)[a];
	return STATE_VALUES(st)[a];
}

void
gha_dict_reset(GhaDict *d)
{
	ResetTupleHashTable(d->table);
	ExecClearTuple(d->out_slot);
	MemoryContextReset(d->tablecxt);
	d->nentries = 0;
	for (int i = 0; d->memo_ids && i < DICT_MEMO_SLOTS; i++)
		d->memo_ids[i] = -1;
}
