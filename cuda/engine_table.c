/*-------------------------------------------------------------------------
 *
 * engine_table.c
 *	  Tables and joins of the common layer: inputs split into hash-range
 *	  partitions and units, placed on the devices, worked on by all devices
 *	  at once.
 *
 * INTERFACE ROUTINES
 *		gh_build, gh_table_*	tables
 *		gh_find					per-key match counts
 *		gh_join_*				chunked join output across units and devices
 *
 * A backend only ever sees a unit, a piece of input small enough for one
 * device's memory limit: a partition, or a row range of a partition too
 * large for it (a hot key).  Units are dealt to the devices in turn; they
 * stay built while there are no more units than devices, and are rebuilt on
 * demand otherwise.  Every step that touches units runs as a gh_for_devices
 * section, each device working through its own units on its own thread.
 * See cuda/README, "Partitions and units".
 *
 * A broadcast table (engine.h, gh_build) has one unit per device, each
 * holding every row, and as many "partitions" as devices: a probe's
 * partition d is its d-th range of rows rather than a hash range, so that
 * everything downstream of the probe split works on it unchanged.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "hash.h"

int
gh_next_unit_of(const gh_table *t, int dev, int after)
{
	for (int u = after + 1; u < t->nunits; u++)
		if (t->units[u].dev == dev)
			return u;
	return t->nunits;
}

/* ---- backend calls, with the failure injection point ---- */

static gh_status
unit_release(gh_table *t, gh_unit *u)
{
	if (u->part)
		t->e->ops->part_free(t->e, u->part);
	u->part = NULL;
	return GH_OK;
}

static gh_status
unit_ensure(gh_table *t, gh_unit *u)
{
	gh_engine  *e = t->e;

	if (u->part)
		return GH_OK;
	CHECK_INTERRUPT(e);
	if (gh_injected_failure(e, u->dev))
		return e->inject_status;
	return e->ops->build(e, u->dev, t->kind, u->keys, u->rows, u->n,
						 t->load_factor, &u->part);
}

/* ---- tables ---- */

/* Let go of a unit's host input (freed unless it is the caller's). */
static void
unit_forget_input(gh_unit *u)
{
	if (!u->keys_borrowed)
		free(u->keys);
	if (!u->rows_borrowed)
		free(u->rows);
	u->keys = u->rows = NULL;
	u->keys_borrowed = u->rows_borrowed = false;
}

void
gh_table_free(gh_table *t)
{
	if (t == NULL)
		return;
	for (int u = 0; u < t->nunits; u++)
	{
		unit_release(t, &t->units[u]);
		unit_forget_input(&t->units[u]);
	}
	free(t->units);
	free(t);
}

/* The units' share of make_units' scatter (gh_split_scatter_fn). */
typedef struct unit_scatter
{
	gh_table   *t;
	const gh_split *split;
	const int  *first;			/* nparts + 1: each partition's first unit */
	const uint64_t *keys;
	const uint64_t *rows;
	size_t		max_rows;
} unit_scatter;

/* rows [begin, end) into their units: a partition's k-th row is in unit k / max_rows */
static void
scatter_units(void *arg, size_t begin, size_t end, const uint32_t *pof, size_t *cursor)
{
	unit_scatter *sc = arg;

	for (size_t i = begin; i < end; i++)
	{
		uint32_t	p = pof[i];
		size_t		k = cursor[p]++ - sc->split->off[p];
		gh_unit    *u = &sc->t->units[sc->first[p]];

		/* a partition is mostly one unit: no division per row then */
		if (k >= sc->max_rows)
		{
			u += k / sc->max_rows;
			k %= sc->max_rows;
		}
		u->keys[k] = sc->keys[i];
		u->rows[k] = sc->rows ? sc->rows[i] : i;
	}
}

/*
 * Lay the build input out as units: split by partition, then cut any
 * partition above max_rows into row ranges.  Units keep host copies (they
 * are freed again for resident tables once built), except that an input of
 * one unit is used where it lies: no hashing, no copy of the keys.
 */
static gh_status
make_units(gh_table *t, const uint64_t *keys, const uint64_t *rows, size_t n,
		   size_t max_rows)
{
	gh_engine  *e = t->e;
	gh_split	split;
	gh_status	st;
	int		   *first = NULL;
	int			nunits = 0;

	if (t->nparts == 1 && n <= max_rows)
	{
		gh_unit    *u = t->units = gh_calloc(e, 1, sizeof(gh_unit));

		if (u == NULL)
			return e->status;
		t->nunits = 1;
		t->devmask = 1;
		u->n = n;
		u->keys = (uint64_t *) keys;
		u->keys_borrowed = true;
		if (rows)
		{
			u->rows = (uint64_t *) rows;
			u->rows_borrowed = true;
		}
		else if (n > 0)
		{
			u->rows = gh_malloc(e, n * sizeof(uint64_t));
			if (u->rows == NULL)
				return e->status;
			for (size_t i = 0; i < n; i++)
				u->rows[i] = i;
		}
		return GH_OK;
	}

	st = gh_split_make(e, keys, n, t->nparts, &split);
	if (st != GH_OK)
		return st;
	first = gh_malloc(e, (t->nparts + 1) * sizeof(int));
	if (first == NULL)
		goto fail;
	for (uint32_t p = 0; p < t->nparts; p++)
	{
		size_t		np = split.off[p + 1] - split.off[p];

		first[p] = nunits;
		nunits += np == 0 ? 1 : (int) ((np + max_rows - 1) / max_rows);
	}
	first[t->nparts] = nunits;
	t->units = gh_calloc(e, nunits, sizeof(gh_unit));
	if (t->units == NULL)
		goto fail;
	t->nunits = nunits;
	for (uint32_t p = 0; p < t->nparts; p++)
	{
		size_t		left = split.off[p + 1] - split.off[p];

		for (int k = first[p]; k < first[p + 1]; k++)
		{
			gh_unit    *u = &t->units[k];
			size_t		m = left < max_rows ? left : max_rows;

			u->partition = p;
			u->dev = k % e->opt.ndevices;
			t->devmask |= 1u << u->dev;
			u->n = m;
			u->keys = gh_malloc(e, (m ? m : 1) * sizeof(uint64_t));
			u->rows = gh_malloc(e, (m ? m : 1) * sizeof(uint64_t));
			if (u->keys == NULL || u->rows == NULL)
				goto fail;
			left -= m;
		}
	}
	{
		unit_scatter sc = {t, &split, first, keys, rows, max_rows};

		gh_split_scatter(&split, scatter_units, &sc);
	}
	gh_split_free(&split);
	free(first);
	return GH_OK;

fail:
	gh_split_free(&split);
	free(first);
	return e->status;
}

/*
 * The units of an input spread over every device (backend.h, build_spread):
 * hash range d built on device d at once, one unit each.
 */
static gh_status
spread_units(gh_table *t, const uint64_t *keys, const uint64_t *rows, size_t n)
{
	gh_engine  *e = t->e;
	int			nd = e->opt.ndevices;
	void	   *parts[GH_MAX_DEVICES];
	size_t		nrows[GH_MAX_DEVICES];

	t->units = gh_calloc(e, nd, sizeof(gh_unit));
	if (t->units == NULL)
		return e->status;
	t->nunits = nd;
	for (int d = 0; d < nd; d++)
	{
		t->units[d].partition = (uint32_t) d;
		t->units[d].dev = d;
		t->devmask |= 1u << d;
	}
	CHECK_INTERRUPT(e);
	GH_TRY_STATUS(e->ops->build_spread(e, t->kind, keys, rows, n, t->load_factor, parts, nrows));
	for (int d = 0; d < nd; d++)
	{
		t->units[d].part = parts[d];
		t->units[d].n = nrows[d];
	}
	return GH_OK;
}

/* Should a table of n rows, max_rows of which fit a device, be broadcast? */
static bool
broadcast_table(const gh_engine *e, size_t n, size_t max_rows)
{
	size_t		most = e->broadcast_rows < 0 ? GH_BROADCAST_MAX_ROWS :
		(size_t) e->broadcast_rows;

	return e->opt.ndevices > 1 && n > 0 && n <= max_rows && n <= most;
}

/*
 * The units of a broadcast table: unit d on device d, every row, the
 * caller's arrays read in place (resident: built at once, then let go).
 */
static gh_status
broadcast_units(gh_table *t, const uint64_t *keys, const uint64_t *rows, size_t n)
{
	gh_engine  *e = t->e;
	int			nd = e->opt.ndevices;
	uint64_t   *own = NULL;

	t->units = gh_calloc(e, nd, sizeof(gh_unit));
	if (t->units == NULL)
		return e->status;
	if (rows == NULL)
	{
		rows = own = gh_malloc(e, n * sizeof(uint64_t));
		if (own == NULL)
			return e->status;
		for (size_t i = 0; i < n; i++)
			own[i] = i;
	}
	t->nunits = nd;
	t->nparts = (uint32_t) nd;
	t->broadcast = true;
	for (int d = 0; d < nd; d++)
	{
		gh_unit    *u = &t->units[d];

		u->partition = (uint32_t) d;
		u->dev = d;
		u->n = n;
		u->keys = (uint64_t *) keys;
		u->rows = (uint64_t *) rows;
		u->keys_borrowed = true;
		u->rows_borrowed = d > 0 || own == NULL;	/* unit 0 frees its own */
		t->devmask |= 1u << d;
	}
	return GH_OK;
}

/* Device thread: build the device's units (resident tables). */
static gh_status
build_device_units(gh_engine *e, int dev, void *arg)
{
	gh_table   *t = arg;

	(void) e;
	for (int u = gh_next_unit_of(t, dev, -1); u < t->nunits; u = gh_next_unit_of(t, dev, u))
		GH_TRY_STATUS(unit_ensure(t, &t->units[u]));
	return GH_OK;
}

gh_status
gh_build(gh_engine *e, gh_kind kind, const uint64_t *keys,
		 const uint64_t *rows, size_t n, gh_table **out)
{
	gh_table   *t;
	gh_status	st;
	size_t		bpr,
				max_rows;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (out == NULL || (keys == NULL && n > 0) ||
		(kind != GH_KIND_AUTO && kind != GH_KIND_HASHGRAPH && kind != GH_KIND_BCHT))
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_build");
	*out = NULL;
	if (kind == GH_KIND_AUTO)
		kind = gh_choose_kind(e, n);

	t = gh_calloc(e, 1, sizeof(*t));
	if (t == NULL)
		return e->status;
	t->e = e;
	t->kind = kind;
	t->n = n;
	t->load_factor = e->opt.bcht_load_factor > 0 ? e->opt.bcht_load_factor : GH_BCHT_DEFAULT_LOAD;
	bpr = e->ops->build_bytes_per_row(kind);
	t->nparts = gh_partitions_for(e, n, bpr);
	max_rows = e->opt.memory_limit / (bpr ? bpr : 1);
	if (max_rows < 1)
		max_rows = 1;

	/* The largest row number (gh_join_aggregate checks inner arrays against it) */
	t->max_row = n && rows == NULL ? n - 1 : 0;
	if (rows)
		for (size_t i = 0; i < n; i++)
			if (rows[i] > t->max_row)
				t->max_row = rows[i];

	if (broadcast_table(e, n, max_rows))
		st = broadcast_units(t, keys, rows, n);
	else if (e->ops->build_spread && gh_spread_input(e, n, max_rows) &&
			 t->nparts == (uint32_t) e->opt.ndevices)
		st = spread_units(t, keys, rows, n);
	else
		st = make_units(t, keys, rows, n, max_rows);
	if (st != GH_OK)
	{
		gh_table_free(t);
		return st;
	}

	t->resident = (t->nunits <= e->opt.ndevices);
	if (t->resident)
	{
		CHECK_INTERRUPT_FREE(e, gh_table_free(t));
		st = gh_for_devices(e, t->devmask, n, build_device_units, t);
		if (st != GH_OK)
		{
			/* every device's units, built or not */
			gh_table_free(t);
			return st;
		}
		for (int u = 0; u < t->nunits; u++)
			unit_forget_input(&t->units[u]);
	}
	*out = t;
	return GH_OK;
}

gh_kind
gh_table_kind(const gh_table *t)
{
	return t ? t->kind : GH_KIND_AUTO;
}

size_t
gh_table_rows(const gh_table *t)
{
	return t ? t->n : 0;
}

int
gh_table_partitions(const gh_table *t)
{
	if (t == NULL)
		return 0;
	return t->broadcast ? 1 : (int) t->nparts;
}

bool
gh_table_broadcast(const gh_table *t)
{
	return t != NULL && t->broadcast;
}

int
gh_table_devices(const gh_table *t, int *ids, int max)
{
	if (t == NULL)
		return 0;
	return gh_device_ids(t->e, t->devmask, ids, max);
}

size_t
gh_table_distinct_keys(const gh_table *t)
{
	size_t		sum = 0;

	if (t == NULL || t->kind != GH_KIND_BCHT)
		return 0;
	if (t->broadcast)
		return t->units[0].part ? t->e->ops->part_distinct(t->units[0].part) : 0;
	/* Only resident units can say; distinct keys of a partition are in one
	 * unit unless a partition was cut into row ranges. */
	for (int u = 0; u < t->nunits; u++)
		if (t->units[u].part)
			sum += t->e->ops->part_distinct(t->units[u].part);
	return sum;
}

/* ---- probing ---- */

static void
join_free_parts(gh_join *j)
{
	if (j->part_idx)
		for (uint32_t p = 0; p < j->t->nparts; p++)
		{
			free(j->part_idx[p]);
			free(j->part_keys[p]);
		}
	free(j->part_idx);
	free(j->part_keys);
	free(j->part_n);
}

void
gh_join_free(gh_join *j)
{
	if (j == NULL)
		return;
	if (j->probes)
		for (int u = 0; u < j->t->nunits; u++)
			if (j->probes[u])
				j->t->e->ops->probe_free(j->t->e, j->probes[u]);
	if (!j->t->resident)
		for (int u = 0; u < j->t->nunits; u++)
			unit_release(j->t, &j->t->units[u]);
	join_free_parts(j);
	free(j->probes);
	free(j->unit_total);
	free(j);
}

/* The probe keys' share of join_split's scatter (gh_split_scatter_fn). */
typedef struct probe_scatter
{
	gh_join    *j;
	const gh_split *split;
} probe_scatter;

static void
scatter_probe_keys(void *arg, size_t begin, size_t end, const uint32_t *pof, size_t *cursor)
{
	probe_scatter *sc = arg;
	gh_join    *j = sc->j;

	for (size_t i = begin; i < end; i++)
	{
		uint32_t	p = pof[i];
		size_t		at = cursor[p]++ - sc->split->off[p];

		j->part_idx[p][at] = i;
		j->part_keys[p][at] = j->keys[i];
	}
}

/* A broadcast table's probe split: partition p, the p-th range of rows. */
static gh_status
split_rows(gh_join *j)
{
	gh_engine  *e = j->t->e;
	uint32_t	np = j->t->nparts;
	gh_copy		copies[GH_MAX_DEVICES];

	for (uint32_t p = 0; p < np; p++)
	{
		size_t		lo = gh_row_start(j->n, np, p);
		size_t		m = gh_row_start(j->n, np, p + 1) - lo;

		j->part_n[p] = m;
		j->part_idx[p] = gh_malloc(e, (m ? m : 1) * sizeof(uint64_t));
		j->part_keys[p] = gh_malloc(e, (m ? m : 1) * sizeof(uint64_t));
		if (j->part_idx[p] == NULL || j->part_keys[p] == NULL)
			return e->status;
		for (size_t i = 0; i < m; i++)
			j->part_idx[p][i] = lo + i;
		copies[p] = (gh_copy) {j->part_keys[p], j->keys + lo, m * sizeof(uint64_t)};
	}
	gh_copy_host(copies, (int) np);
	return GH_OK;
}

/* Split probe keys by partition (only when the table has several). */
static gh_status
join_split(gh_join *j)
{
	gh_engine  *e = j->t->e;
	uint32_t	np = j->t->nparts;
	gh_split	split;
	gh_status	st;

	j->part_n = gh_calloc(e, np, sizeof(size_t));
	if (j->part_n == NULL)
		return e->status;
	if (np == 1)
	{
		j->part_n[0] = j->n;
		return GH_OK;
	}
	j->part_idx = gh_calloc(e, np, sizeof(uint64_t *));
	j->part_keys = gh_calloc(e, np, sizeof(uint64_t *));
	if (j->part_idx == NULL || j->part_keys == NULL)
		return e->status;
	if (j->t->broadcast)
		return split_rows(j);
	st = gh_split_make(e, j->keys, j->n, np, &split);
	if (st != GH_OK)
		return st;
	for (uint32_t p = 0; p < np; p++)
	{
		size_t		m = split.off[p + 1] - split.off[p];

		j->part_n[p] = m;
		j->part_idx[p] = gh_malloc(e, (m ? m : 1) * sizeof(uint64_t));
		j->part_keys[p] = gh_malloc(e, (m ? m : 1) * sizeof(uint64_t));
		if (j->part_idx[p] == NULL || j->part_keys[p] == NULL)
		{
			gh_split_free(&split);
			return e->status;
		}
	}
	{
		probe_scatter sc = {j, &split};

		gh_split_scatter(&split, scatter_probe_keys, &sc);
	}
	gh_split_free(&split);
	return GH_OK;
}

static const uint64_t *
unit_probe_keys(gh_join *j, const gh_unit *u)
{
	return j->part_keys ? j->part_keys[u->partition] : j->keys;
}

gh_status
gh_probe_open(gh_join *j, int u, uint64_t *total)
{
	gh_table   *t = j->t;
	gh_engine  *e = t->e;
	gh_unit    *unit = &t->units[u];
	gh_status	st;
	uint64_t	count;

	if (j->probes[u])
	{
		if (total)
			*total = j->unit_total[u];
		return GH_OK;
	}
	st = unit_ensure(t, unit);
	if (st != GH_OK)
		return st;
	CHECK_INTERRUPT(e);
	if (gh_injected_failure(e, unit->dev))
		return e->inject_status;
	st = e->ops->probe_begin(e, unit->part, unit_probe_keys(j, unit),
							 j->part_n[unit->partition], j->method,
							 &j->probes[u], &count);
	if (total)
		*total = count;
	return st;
}

void
gh_probe_close(gh_join *j, int u)
{
	if (j->t->resident)
		return;
	if (j->probes[u])
		j->t->e->ops->probe_free(j->t->e, j->probes[u]);
	j->probes[u] = NULL;
	unit_release(j->t, &j->t->units[u]);
}

/* Is unit u the one device dev's writer has started and not finished? */
static bool
writer_is_on(const gh_join *j, int u)
{
	int			dev = j->t->units[u].dev;

	return j->cur[dev] == u && j->pos[dev] > 0;
}

/* Device thread: count the matches of each of the device's units. */
static gh_status
count_device_units(gh_engine *e, int dev, void *arg)
{
	gh_join    *j = arg;
	gh_table   *t = j->t;

	(void) e;
	for (int u = gh_next_unit_of(t, dev, -1); u < t->nunits; u = gh_next_unit_of(t, dev, u))
	{
		GH_TRY_STATUS(gh_probe_open(j, u, &j->unit_total[u]));
		gh_probe_close(j, u);
	}
	return GH_OK;
}

gh_status
gh_join_begin(gh_table *t, const uint64_t *keys, size_t n,
			  gh_join_method method, gh_join **out)
{
	gh_engine  *e;
	gh_join    *j;
	gh_status	st;

	if (t == NULL)
		return GH_ERR_INVALID;
	e = t->e;
	if (out == NULL || (keys == NULL && n > 0) ||
		(method != GH_JOIN_AUTO && method != GH_JOIN_PROBE && method != GH_JOIN_INTERSECT))
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_join_begin");
	*out = NULL;
	j = gh_calloc(e, 1, sizeof(*j));
	if (j == NULL)
		return e->status;
	j->t = t;
	j->keys = keys;
	j->n = n;
	j->method = method;
	j->probes = gh_calloc(e, t->nunits, sizeof(void *));
	j->unit_total = gh_calloc(e, t->nunits, sizeof(uint64_t));
	if (j->probes == NULL || j->unit_total == NULL)
	{
		gh_join_free(j);
		return e->status;
	}
	st = join_split(j);
	if (st == GH_OK && gh_interrupted(e))
		st = GH_ERR_CANCELLED;
	if (st == GH_OK)
		st = gh_for_devices(e, t->devmask, n > t->n ? n : t->n, count_device_units, j);
	if (st != GH_OK)
	{
		gh_join_free(j);
		return st;
	}
	for (int d = 0; d < e->opt.ndevices; d++)
	{
		j->cur[d] = gh_next_unit_of(t, d, -1);
		j->pos[d] = 0;
		j->left[d] = 0;
	}
	for (int u = 0; u < t->nunits; u++)
	{
		j->total += j->unit_total[u];
		j->left[t->units[u].dev] += j->unit_total[u];
	}
	*out = j;
	return GH_OK;
}

uint64_t
gh_join_total(const gh_join *j)
{
	return j ? j->total : 0;
}

/*
 * Device thread: write the device's share of this call's pairs, from its
 * current unit on, mapping probe indices back to the caller's.
 */
static gh_status
write_device_pairs(gh_engine *e, int dev, void *arg)
{
	gh_join    *j = arg;
	gh_table   *t = j->t;
	gh_pair    *out = j->dest[dev];
	uint64_t	want = j->quota[dev];

	while (want > 0 && j->cur[dev] < t->nunits)
	{
		int			u = j->cur[dev];
		uint64_t	left = j->unit_total[u] - j->pos[dev];
		size_t		m = left < want ? (size_t) left : (size_t) want;

		if (m > 0)
		{
			gh_unit    *unit = &t->units[u];
			const uint64_t *idx = j->part_idx ? j->part_idx[unit->partition] : NULL;

			GH_TRY_STATUS(gh_probe_open(j, u, NULL));
			if (gh_injected_failure(e, dev))
				return e->inject_status;
			GH_TRY_STATUS(e->ops->probe_write(e, j->probes[u], j->pos[dev], m, out));
			if (idx)
				for (size_t i = 0; i < m; i++)
					out[i].outer = idx[out[i].outer];
			out += m;
			want -= m;
			j->pos[dev] += m;
		}
		if (j->pos[dev] == j->unit_total[u])
		{
			gh_probe_close(j, u);
			j->cur[dev] = gh_next_unit_of(t, dev, u);
			j->pos[dev] = 0;
		}
	}
	return GH_OK;
}

gh_status
gh_join_next(gh_join *j, gh_pair *out, size_t cap, size_t *nout)
{
	gh_table   *t;
	gh_engine  *e;
	uint32_t	busy = 0;
	size_t		remaining;
	int			nact = 0;
	gh_status	st;

	if (j == NULL)
		return GH_ERR_INVALID;
	t = j->t;
	e = t->e;
	if (nout == NULL || (out == NULL && cap > 0))
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_join_next");
	*nout = 0;
	CHECK_INTERRUPT(e);

	/* equal shares of cap for the devices with pairs left */
	remaining = cap;
	for (int d = 0; d < e->opt.ndevices; d++)
	{
		j->quota[d] = 0;
		if (j->left[d] > 0)
			nact++;
	}
	while (remaining > 0 && nact > 0)
	{
		size_t		fair = remaining / (size_t) nact;
		int			still = 0;

		if (fair == 0)
			fair = 1;
		for (int d = 0; d < e->opt.ndevices && remaining > 0; d++)
		{
			uint64_t	room = j->left[d] - j->quota[d];
			uint64_t	give = room < fair ? room : fair;

			if (room == 0)
				continue;
			j->quota[d] += give;
			remaining -= give;
			if (room > give)
				still++;
		}
		nact = still;
	}
	{
		gh_pair    *at = out;

		for (int d = 0; d < e->opt.ndevices; d++)
		{
			j->dest[d] = at;
			at += j->quota[d];
			if (j->quota[d] > 0)
				busy |= 1u << d;
		}
	}
	st = gh_for_devices(e, busy, cap - remaining, write_device_pairs, j);
	if (st != GH_OK)
		return st;
	for (int d = 0; d < e->opt.ndevices; d++)
		j->left[d] -= j->quota[d];
	*nout = cap - remaining;
	return GH_OK;
}

/* counts[at] += v, saturating, safe against other device threads */
static void
add_count(uint32_t *at, uint32_t v)
{
	uint32_t	old = __atomic_load_n(at, __ATOMIC_RELAXED);

	for (;;)
	{
		uint64_t	s = (uint64_t) old + v;
		uint32_t	want = s > UINT32_MAX ? UINT32_MAX : (uint32_t) s;

		if (__atomic_compare_exchange_n(at, &old, want, true, __ATOMIC_RELAXED,
										__ATOMIC_RELAXED))
			return;
	}
}

/* Device thread: per-key counts of the device's units, added to j->counts. */
static gh_status
count_device_keys(gh_engine *e, int dev, void *arg)
{
	gh_join    *j = arg;
	gh_table   *t = j->t;
	size_t		most = 0;
	uint32_t   *tmp;
	gh_status	st = GH_OK;

	for (int u = gh_next_unit_of(t, dev, -1); u < t->nunits; u = gh_next_unit_of(t, dev, u))
		if (j->part_n[t->units[u].partition] > most)
			most = j->part_n[t->units[u].partition];
	tmp = gh_malloc(e, most * sizeof(uint32_t));
	if (tmp == NULL)
		return e->status;
	for (int u = gh_next_unit_of(t, dev, -1); st == GH_OK && u < t->nunits;
		 u = gh_next_unit_of(t, dev, u))
	{
		gh_unit    *unit = &t->units[u];
		size_t		m = j->part_n[unit->partition];
		const uint64_t *idx = j->part_idx ? j->part_idx[unit->partition] : NULL;

		st = gh_probe_open(j, u, NULL);
		if (st == GH_OK && gh_injected_failure(e, dev))
			st = e->inject_status;
		if (st == GH_OK)
			st = e->ops->probe_counts(e, j->probes[u], tmp);
		for (size_t i = 0; st == GH_OK && i < m; i++)
			if (tmp[i] != 0)
				add_count(&j->counts[idx ? idx[i] : i], tmp[i]);
		/* keep the unit the writer is on */
		if (!writer_is_on(j, u))
			gh_probe_close(j, u);
	}
	free(tmp);
	return st;
}

/* Per-key counts over all units, summed with saturation. */
static gh_status
probe_all_counts(gh_join *j, uint32_t *counts)
{
	gh_table   *t = j->t;
	gh_engine  *e = t->e;

	memset(counts, 0, j->n * sizeof(uint32_t));
	if (t->nunits == 1 && j->part_idx == NULL)
	{
		/* one unit: its counts are the answer, no copy */
		gh_status	st = gh_probe_open(j, 0, NULL);

		if (st == GH_OK && gh_injected_failure(e, t->units[0].dev))
			st = e->inject_status;
		if (st == GH_OK)
			st = e->ops->probe_counts(e, j->probes[0], counts);
		if (!writer_is_on(j, 0))
			gh_probe_close(j, 0);
		return st;
	}
	CHECK_INTERRUPT(e);
	j->counts = counts;
	return gh_for_devices(e, t->devmask, j->n > t->n ? j->n : t->n, count_device_keys, j);
}

gh_status
gh_join_outer_matched(gh_join *j, uint8_t *flags)
{
	uint32_t   *counts;
	gh_status	st;

	if (j == NULL)
		return GH_ERR_INVALID;
	if (flags == NULL && j->n > 0)
		return gh_fail(j->t->e, GH_ERR_INVALID, "invalid arguments to gh_join_outer_matched");
	counts = gh_malloc(j->t->e, j->n * sizeof(uint32_t));
	if (counts == NULL)
		return j->t->e->status;
	st = probe_all_counts(j, counts);
	if (st == GH_OK)
		for (size_t i = 0; i < j->n; i++)
			flags[i] = counts[i] > 0;
	free(counts);
	return st;
}

gh_status
gh_find(gh_table *t, const uint64_t *keys, size_t n, uint32_t *counts)
{
	gh_join    *j;
	gh_status	st;

	if (t == NULL)
		return GH_ERR_INVALID;
	if ((keys == NULL || counts == NULL) && n > 0)
		return gh_fail(t->e, GH_ERR_INVALID, "invalid arguments to gh_find");
	st = gh_join_begin(t, keys, n, GH_JOIN_PROBE, &j);
	if (st != GH_OK)
		return st;
	st = probe_all_counts(j, counts);
	gh_join_free(j);
	return st;
}
