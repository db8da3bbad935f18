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
 * A memo of recent lookups (direct mapped, by the values' bits or bytes)
 * answers first: values of the same bytes are equal under any collation
 * (equality is reflexive), so a hit is the group's id; a miss asks the
 * table.  It keeps values of up to DICT_MEMO_MAX_BYTES bytes (a varlena
 * neither compressed nor external); where it answers too few lookups (a
 * group a value or so) it is turned off.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "agg.h"

/* the slots of a dictionary's memo (a power of two), the columns and bytes of a value it keeps */
#define DICT_MEMO_SLOTS 4096
#define DICT_MEMO_MAX_COLS 4
#define DICT_MEMO_MAX_BYTES 48
/* every so many lookups, a memo that answered fewer than an eighth of them is turned off */
#define DICT_MEMO_CHECK 65536

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
		bool		ok = true;
		bool		byref = false;

		d->memo_typlen = palloc0(sizeof(int16) * d->ncols);
		for (i = 0; i < d->ncols; i++)
		{
			Form_pg_attribute att = TupleDescAttr(d->desc, i);

			if (!att->attbyval)
			{
				d->memo_typlen[i] = att->attlen;
				ok &= att->attlen == -1 || (att->attlen > 0 && att->attlen <= DICT_MEMO_MAX_BYTES);
				byref = true;
			}
		}
		if (ok)
		{
			Size		n = (Size) d->ncols * DICT_MEMO_SLOTS;

			d->memo_values = palloc0(sizeof(Datum) * n);
			if (byref)
			{
				d->memo_bytes = palloc_extended(n * DICT_MEMO_MAX_BYTES, MCXT_ALLOC_HUGE);
				d->memo_lens = palloc0(n);
			}
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

/* the bytes of column c's value v (passed by reference) the memo compares; false: it keeps none */
static inline bool
memo_value_bytes(const GhaDict *d, int c, Datum v, const char **bytes, int *len)
{
	struct varlena *p = (struct varlena *) DatumGetPointer(v);

	if (d->memo_typlen[c] > 0)
	{
		*bytes = (const char *) p;
		*len = d->memo_typlen[c];
		return true;
	}
	if (VARATT_IS_EXTERNAL(p) || VARATT_IS_COMPRESSED(p))
		return false;
	*bytes = VARDATA_ANY(p);
	*len = (int) VARSIZE_ANY_EXHDR(p);
	return *len <= DICT_MEMO_MAX_BYTES;
}

/*
 * The memo's slot of values, and the bytes of those passed by reference;
 * -1 where it keeps none of them (a NULL, a value too long).
 */
static int
memo_slot(const GhaDict *d, const Datum *values, const bool *isnull, const char **bytes, int *lens)
{
	uint64		h = 0;

	for (int c = 0; c < d->ncols; c++)
	{
		uint64		w = (uint64) values[c];

		if (isnull[c])
			return -1;
		if (d->memo_typlen[c] != 0)
		{
			if (!memo_value_bytes(d, c, values[c], &bytes[c], &lens[c]))
				return -1;
			w = hash_bytes((const unsigned char *) bytes[c], lens[c]);
		}
		h = (h ^ w) * UINT64CONST(0x9E3779B97F4A7C15);
		h ^= h >> 29;
	}
	return (int) (h >> 40) & (DICT_MEMO_SLOTS - 1);
}

/* does slot m hold values (bytes, lens: those passed by reference)? */
static bool
memo_holds(const GhaDict *d, int m, const Datum *values, const char **bytes, const int *lens)
{
	Size		at = (Size) m * d->ncols;

	if (d->memo_ids[m] < 0)
		return false;
	for (int c = 0; c < d->ncols; c++)
	{
		if (d->memo_typlen[c] == 0)
		{
			if (d->memo_values[at + c] != values[c])
				return false;
		}
		else if (d->memo_lens[at + c] != lens[c] ||
				 memcmp(d->memo_bytes + (at + c) * DICT_MEMO_MAX_BYTES, bytes[c], lens[c]) != 0)
			return false;
	}
	return true;
}

/* slot m holds values now, of group id */
static void
memo_keep(GhaDict *d, int m, const Datum *values, const char **bytes, const int *lens, uint32 id)
{
	Size		at = (Size) m * d->ncols;

	for (int c = 0; c < d->ncols; c++)
	{
		if (d->memo_typlen[c] == 0)
			d->memo_values[at + c] = values[c];
		else
		{
			d->memo_lens[at + c] = (uint8) lens[c];
			memcpy(d->memo_bytes + (at + c) * DICT_MEMO_MAX_BYTES, bytes[c], lens[c]);
		}
	}
	d->memo_ids[m] = id;
}

static uint32 dict_add(GhaDict *d, const Datum *values, const bool *isnull);

uint32
gha_dict_lookup(GhaDict *d, const Datum *values, const bool *isnull)
{
	const char *bytes[DICT_MEMO_MAX_COLS];
	int			lens[DICT_MEMO_MAX_COLS];
	int			m;
	uint32		id;

	if (d->memo_ids == NULL)
		return dict_add(d, values, isnull);
	if (++d->memo_tries == DICT_MEMO_CHECK)
	{
		if (d->memo_hits < DICT_MEMO_CHECK / 8)
		{
			d->memo_ids = NULL; /* a group a value or so: it only costs */
			return dict_add(d, values, isnull);
		}
		d->memo_tries = d->memo_hits = 0;
	}
	m = memo_slot(d, values, isnull, bytes, lens);
	if (m < 0)
		return dict_add(d, values, isnull);
	if (memo_holds(d, m, values, bytes, lens))
	{
		d->memo_hits++;
		return (uint32) d->memo_ids[m];
	}
	id = dict_add(d, values, isnull);
	memo_keep(d, m, values, bytes, lens, id);
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
