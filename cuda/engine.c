/*-------------------------------------------------------------------------
 *
 * engine.c
 *	  The engine's common layer: what is the same for the CPU and CUDA
 *	  backends.
 *
 * INTERFACE ROUTINES
 *		gh_open, gh_close		engine handles, options, error text
 *		gh_build, gh_find		tables, split into hash-range partitions
 *		gh_join_*				chunked join output across partitions
 *		gh_aggregate			grouping, split and merged across partitions
 *		gh_bench				forwards to the backend
 *
 * PARTITIONS AND UNITS
 *
 * A backend only ever sees one "unit": a piece of input small enough for the
 * memory limit of one device.  gh_build splits the build input by hash range
 * (gh_partition_of) into nparts partitions, nparts being a multiple of the
 * number of devices large enough that an average partition fits the limit.
 * A partition that is still too large (a hot key puts all its rows in one
 * partition, whatever the hash) is cut further into row ranges; every unit of
 * a partition must then be probed with all the probe keys of that partition,
 * and the matches of its units together are the partition's matches.
 *
 * When there are no more units than devices, every unit stays built on its
 * own device for the table's life ("resident") and probes are kept open
 * between counting and writing.  Otherwise the table keeps each unit's keys
 * and rows in host memory and builds units one at a time, on demand: a join
 * then counts every unit in gh_join_begin and rebuilds them in turn while
 * writing pairs.  That repeats builds, but only for inputs that do not fit
 * the devices at all.
 *
 * Aggregation splits the same way; groups of different partitions are
 * disjoint, so their results are concatenated, while the row-range pieces of
 * one oversized partition are merged group by group (gh_groups_merge).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "hash.h"

#define CPU_DEFAULT_MEMORY_LIMIT ((size_t) 4 << 30)

/* One unit: a piece of one partition, built on one device. */
typedef struct gh_unit
{
	uint32_t	partition;
	int			dev;
	uint64_t   *keys;			/* host copy while not resident; else NULL */
	uint64_t   *rows;
	size_t		n;
	void	   *part;			/* the backend's table, when built */
} gh_unit;

struct gh_table
{
	gh_engine  *e;
	gh_kind		kind;
	double		load_factor;
	size_t		n;
	uint32_t	nparts;
	int			nunits;
	gh_unit    *units;
	bool		resident;		/* all units stay built */
	/* which rows have been emitted by gh_join_next: a bitmap by row number */
	uint8_t    *inner_bits;
	uint64_t	inner_bits_rows;	/* row numbers it covers (0: none) */
};

struct gh_join
{
	gh_table   *t;
	const uint64_t *keys;
	size_t		n;
	gh_join_method method;
	/* per partition, the probe keys' original indices (NULL: identity) */
	uint64_t  **part_idx;
	uint64_t  **part_keys;
	size_t	   *part_n;
	/* per unit: open probe (resident tables keep them) and its total */
	void	  **probes;
	uint64_t   *unit_total;
	uint64_t	total;
	/* writing position */
	int			cur;
	uint64_t	pos;
};

/* ---- errors, accounting, interrupts ---- */

const char *
gh_status_name(gh_status s)
{
	switch (s)
	{
		case GH_OK:
			return "ok";
		case GH_ERR_INVALID:
			return "invalid argument";
		case GH_ERR_HOST_NOMEM:
			return "out of host memory";
		case GH_ERR_DEVICE_NOMEM:
			return "out of device memory";
		case GH_ERR_DEVICE:
			return "device error";
		case GH_ERR_NODEVICE:
			return "no usable device";
		case GH_ERR_CANCELLED:
			return "cancelled";
		case GH_ERR_INTERNAL:
			return "internal error";
	}
	return "unknown status";
}

gh_status
gh_fail(gh_engine *e, gh_status status, const char *fmt,...)
{
	va_list		ap;

	if (e == NULL)
		return status;
	e->status = status;
	va_start(ap, fmt);
	vsnprintf(e->errmsg, sizeof(e->errmsg), fmt, ap);
	va_end(ap);
	return status;
}

void
gh_account(gh_engine *e, long long delta)
{
	if (delta < 0 && (size_t) (-delta) > e->device_bytes)
		e->device_bytes = 0;
	else
		e->device_bytes += delta;
	if (e->device_bytes > e->peak_device_bytes)
		e->peak_device_bytes = e->device_bytes;
}

bool
gh_interrupted(gh_engine *e)
{
	if (e->opt.interrupt && e->opt.interrupt(e->opt.interrupt_arg))
	{
		gh_fail(e, GH_ERR_CANCELLED, "cancelled by request");
		return true;
	}
	return false;
}

#define CHECK_INTERRUPT(e) \
	do { if (gh_interrupted(e)) return GH_ERR_CANCELLED; } while (0)

static void *
gh_malloc(gh_engine *e, size_t bytes)
{
	void	   *p = malloc(bytes ? bytes : 1);

	if (p == NULL)
		gh_fail(e, GH_ERR_HOST_NOMEM, "could not allocate %zu bytes of host memory", bytes);
	return p;
}

static void *
gh_calloc(gh_engine *e, size_t count, size_t size)
{
	void	   *p = calloc(count ? count : 1, size ? size : 1);

	if (p == NULL)
		gh_fail(e, GH_ERR_HOST_NOMEM, "could not allocate %zu bytes of host memory", count * size);
	return p;
}

/* ---- engine ---- */

int
gh_list_devices(gh_device_info *out, int max)
{
	if (out == NULL || max <= 0)
		return 0;
	return gh_cuda_list_devices(out, max);
}

gh_status
gh_open(const gh_options *opt, gh_engine **out, char *errbuf, size_t errlen)
{
	gh_engine  *e;
	gh_status	st;

	if (out == NULL)
		return GH_ERR_INVALID;
	*out = NULL;
	if (opt == NULL || (opt->backend != GH_BACKEND_CPU && opt->backend != GH_BACKEND_CUDA) ||
		opt->ndevices < 0 || opt->ndevices > GH_MAX_DEVICES ||
		opt->bcht_load_factor < 0 || opt->bcht_load_factor > 0.99)
	{
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "invalid engine options");
		return GH_ERR_INVALID;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
	{
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "out of host memory");
		return GH_ERR_HOST_NOMEM;
	}
	e->opt = *opt;
	if (e->opt.ndevices == 0)
	{
		e->opt.ndevices = 1;
		e->opt.devices[0] = 0;
	}
	e->ops = (opt->backend == GH_BACKEND_CUDA) ? &gh_cuda_ops : &gh_cpu_ops;

	if (opt->backend == GH_BACKEND_CUDA && e->opt.memory_limit == 0)
	{
		gh_device_info info[GH_MAX_DEVICES];
		int			nd = gh_cuda_list_devices(info, GH_MAX_DEVICES);
		size_t		least = 0;

		if (nd == 0)
		{
			if (errbuf && errlen)
				snprintf(errbuf, errlen, "no CUDA device is available");
			free(e);
			return GH_ERR_NODEVICE;
		}
		for (int d = 0; d < e->opt.ndevices; d++)
			for (int i = 0; i < nd; i++)
				if (info[i].id == e->opt.devices[d] &&
					(least == 0 || info[i].mem_free < least))
					least = info[i].mem_free;
		e->opt.memory_limit = least / 10 * 9;
	}
	else if (e->opt.memory_limit == 0)
		e->opt.memory_limit = CPU_DEFAULT_MEMORY_LIMIT;

	st = e->ops->open(e);
	if (st != GH_OK)
	{
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s", e->errmsg[0] ? e->errmsg : gh_status_name(st));
		free(e);
		return st;
	}
	*out = e;
	return GH_OK;
}

void
gh_close(gh_engine *e)
{
	if (e == NULL)
		return;
	e->ops->close(e);
	free(e);
}

const char *
gh_last_error(const gh_engine *e)
{
	if (e == NULL)
		return "no engine";
	return e->errmsg[0] ? e->errmsg : gh_status_name(e->status);
}

gh_backend
gh_engine_backend(const gh_engine *e)
{
	return e->opt.backend;
}

int
gh_engine_ndevices(const gh_engine *e)
{
	return e->opt.ndevices;
}

size_t
gh_engine_device_bytes(const gh_engine *e)
{
	return e->device_bytes;
}

size_t
gh_engine_peak_device_bytes(const gh_engine *e)
{
	return e->peak_device_bytes;
}

gh_kind
gh_choose_kind(const gh_engine *e, size_t n)
{
	(void) e;
	(void) n;
	/*
	 * HashGraph: its build is one count/scan/scatter pass with no sort, and
	 * the executor's probes are batched lookups that it serves at least as
	 * fast as BCHT (README, "Choosing a table").
	 */
	return GH_KIND_HASHGRAPH;
}

/* ---- splitting inputs by hash range ---- */

/*
 * Count the keys of each partition and compute, for every key, its place in
 * a partition-ordered layout.  Returns per-partition offsets (nparts + 1).
 */
static size_t *
split_offsets(gh_engine *e, const uint64_t *keys, size_t n, uint32_t nparts,
			  uint32_t **part_of)
{
	size_t	   *off = gh_calloc(e, nparts + 1, sizeof(size_t));
	uint32_t   *pof;

	if (off == NULL)
		return NULL;
	pof = gh_malloc(e, n * sizeof(uint32_t));
	if (pof == NULL)
	{
		free(off);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
	{
		pof[i] = gh_partition_of(keys[i], nparts);
		off[pof[i] + 1]++;
	}
	for (uint32_t p = 0; p < nparts; p++)
		off[p + 1] += off[p];
	*part_of = pof;
	return off;
}

/* Smallest count of equal parts of `per` bytes each that keeps a part within limit. */
static size_t
parts_needed(size_t n, size_t bytes_per_row, size_t limit)
{
	double		need = (double) n * (double) bytes_per_row;
	size_t		k = (size_t) (need / (double) (limit ? limit : 1)) + 1;

	return k < 1 ? 1 : k;
}

/* ---- tables ---- */

static void
unit_release(gh_table *t, gh_unit *u)
{
	if (u->part)
		t->e->ops->part_free(t->e, u->part);
	u->part = NULL;
}

static gh_status
unit_ensure(gh_table *t, gh_unit *u)
{
	if (u->part)
		return GH_OK;
	CHECK_INTERRUPT(t->e);
	return t->e->ops->build(t->e, u->dev, t->kind, u->keys, u->rows, u->n,
							t->load_factor, &u->part);
}

void
gh_table_free(gh_table *t)
{
	if (t == NULL)
		return;
	for (int u = 0; u < t->nunits; u++)
	{
		unit_release(t, &t->units[u]);
		free(t->units[u].keys);
		free(t->units[u].rows);
	}
	free(t->units);
	free(t->inner_bits);
	free(t);
}

/*
 * Lay the build input out as units: split by partition, then cut any
 * partition above max_rows into row ranges.  Units keep host copies (they
 * are freed again for resident tables once built).
 */
static gh_status
make_units(gh_table *t, const uint64_t *keys, const uint64_t *rows, size_t n,
		   size_t max_rows)
{
	gh_engine  *e = t->e;
	uint32_t   *pof = NULL;
	size_t	   *off;
	uint64_t   *pk,
			   *pr;
	size_t	   *cursor;
	int			nunits = 0;

	off = split_offsets(e, keys, n, t->nparts, &pof);
	if (off == NULL)
		return e->status;
	pk = gh_malloc(e, n * sizeof(uint64_t));
	pr = gh_malloc(e, n * sizeof(uint64_t));
	cursor = gh_malloc(e, t->nparts * sizeof(size_t));
	if (pk == NULL || pr == NULL || cursor == NULL)
		goto fail;
	memcpy(cursor, off, t->nparts * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
	{
		size_t		at = cursor[pof[i]]++;

		pk[at] = keys[i];
		pr[at] = rows ? rows[i] : i;
	}
	for (uint32_t p = 0; p < t->nparts; p++)
	{
		size_t		np = off[p + 1] - off[p];

		nunits += np == 0 ? 1 : (int) ((np + max_rows - 1) / max_rows);
	}
	t->units = gh_calloc(e, nunits, sizeof(gh_unit));
	if (t->units == NULL)
		goto fail;
	t->nunits = nunits;
	nunits = 0;
	for (uint32_t p = 0; p < t->nparts; p++)
	{
		size_t		start = off[p],
					end = off[p + 1];

		do
		{
			gh_unit    *u = &t->units[nunits];
			size_t		m = end - start < max_rows ? end - start : max_rows;

			u->partition = p;
			u->dev = nunits % e->opt.ndevices;
			u->n = m;
			u->keys = gh_malloc(e, m * sizeof(uint64_t));
			u->rows = gh_malloc(e, m * sizeof(uint64_t));
			if (u->keys == NULL || u->rows == NULL)
				goto fail;
			memcpy(u->keys, pk + start, m * sizeof(uint64_t));
			memcpy(u->rows, pr + start, m * sizeof(uint64_t));
			start += m;
			nunits++;
		} while (start < end);
	}
	free(pof);
	free(off);
	free(pk);
	free(pr);
	free(cursor);
	return GH_OK;

fail:
	free(pof);
	free(off);
	free(pk);
	free(pr);
	free(cursor);
	return e->status;
}

gh_status
gh_build(gh_engine *e, gh_kind kind, const uint64_t *keys,
		 const uint64_t *rows, size_t n, gh_table **out)
{
	gh_table   *t;
	gh_status	st;
	size_t		bpr,
				max_rows;
	int			ndev;
	uint64_t	maxrow;

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
	ndev = e->opt.ndevices;
	bpr = e->ops->build_bytes_per_row(kind);
	{
		size_t		k = parts_needed(n, bpr, e->opt.memory_limit);

		/* a multiple of the device count, each device gets equal work */
		t->nparts = (uint32_t) (((k + ndev - 1) / ndev) * ndev);
	}
	max_rows = e->opt.memory_limit / (bpr ? bpr : 1);
	if (max_rows < 1)
		max_rows = 1;

	/* the inner-row bitmap covers dense row numbers */
	maxrow = n ? n - 1 : 0;
	if (rows)
		for (size_t i = 0; i < n; i++)
			if (rows[i] > maxrow)
				maxrow = rows[i];
	if (n > 0 && maxrow / 4 <= n)
	{
		t->inner_bits_rows = maxrow + 1;
		t->inner_bits = gh_calloc(e, (maxrow + 8) / 8, 1);
		if (t->inner_bits == NULL)
		{
			gh_table_free(t);
			return e->status;
		}
	}

	st = make_units(t, keys, rows, n, max_rows);
	if (st != GH_OK)
	{
		gh_table_free(t);
		return st;
	}

	t->resident = (t->nunits <= ndev);
	if (t->resident)
	{
		for (int u = 0; u < t->nunits; u++)
		{
			st = unit_ensure(t, &t->units[u]);
			if (st != GH_OK)
			{
				gh_table_free(t);
				return st;
			}
			free(t->units[u].keys);
			free(t->units[u].rows);
			t->units[u].keys = t->units[u].rows = NULL;
		}
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
	return t ? (int) t->nparts : 0;
}

size_t
gh_table_distinct_keys(const gh_table *t)
{
	size_t		sum = 0;

	if (t == NULL || t->kind != GH_KIND_BCHT)
		return 0;
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

/* Split probe keys by partition (only when the table has several). */
static gh_status
join_split(gh_join *j)
{
	gh_engine  *e = j->t->e;
	uint32_t	np = j->t->nparts;
	uint32_t   *pof = NULL;
	size_t	   *off;

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
	off = split_offsets(e, j->keys, j->n, np, &pof);
	if (off == NULL)
		return e->status;
	for (uint32_t p = 0; p < np; p++)
	{
		size_t		m = off[p + 1] - off[p];

		j->part_n[p] = 0;
		j->part_idx[p] = gh_malloc(e, m * sizeof(uint64_t));
		j->part_keys[p] = gh_malloc(e, m * sizeof(uint64_t));
		if (j->part_idx[p] == NULL || j->part_keys[p] == NULL)
		{
			free(off);
			free(pof);
			return e->status;
		}
	}
	for (size_t i = 0; i < j->n; i++)
	{
		uint32_t	p = pof[i];
		size_t		at = j->part_n[p]++;

		j->part_idx[p][at] = i;
		j->part_keys[p][at] = j->keys[i];
	}
	free(off);
	free(pof);
	return GH_OK;
}

static const uint64_t *
unit_probe_keys(gh_join *j, const gh_unit *u)
{
	return j->part_keys ? j->part_keys[u->partition] : j->keys;
}

/* Open the probe of unit u (building the unit if needed). */
static gh_status
probe_open(gh_join *j, int u, uint64_t *total)
{
	gh_table   *t = j->t;
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
	CHECK_INTERRUPT(t->e);
	st = t->e->ops->probe_begin(t->e, unit->part, unit_probe_keys(j, unit),
								j->part_n[unit->partition], j->method,
								&j->probes[u], &count);
	if (total)
		*total = count;
	return st;
}

/* Done with unit u's probe: non-resident tables drop it and the unit. */
static void
probe_close(gh_join *j, int u)
{
	if (j->t->resident)
		return;
	if (j->probes[u])
		j->t->e->ops->probe_free(j->t->e, j->probes[u]);
	j->probes[u] = NULL;
	unit_release(j->t, &j->t->units[u]);
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
	for (int u = 0; st == GH_OK && u < t->nunits; u++)
	{
		st = probe_open(j, u, &j->unit_total[u]);
		if (st == GH_OK)
		{
			j->total += j->unit_total[u];
			probe_close(j, u);
		}
	}
	if (st != GH_OK)
	{
		gh_join_free(j);
		return st;
	}
	*out = j;
	return GH_OK;
}

uint64_t
gh_join_total(const gh_join *j)
{
	return j ? j->total : 0;
}

gh_status
gh_join_next(gh_join *j, gh_pair *out, size_t cap, size_t *nout)
{
	gh_table   *t;
	gh_engine  *e;
	size_t		filled = 0;

	if (j == NULL)
		return GH_ERR_INVALID;
	t = j->t;
	e = t->e;
	if (nout == NULL || (out == NULL && cap > 0))
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_join_next");
	*nout = 0;
	CHECK_INTERRUPT(e);
	while (filled < cap && j->cur < t->nunits)
	{
		int			u = j->cur;
		uint64_t	left = j->unit_total[u] - j->pos;
		size_t		m = left < cap - filled ? (size_t) left : cap - filled;
		gh_status	st;

		if (m > 0)
		{
			gh_unit    *unit = &t->units[u];
			const uint64_t *idx = j->part_idx ? j->part_idx[unit->partition] : NULL;

			st = probe_open(j, u, NULL);
			if (st == GH_OK)
				st = e->ops->probe_write(e, j->probes[u], j->pos, m, out + filled);
			if (st != GH_OK)
				return st;
			for (size_t i = filled; i < filled + m; i++)
			{
				uint64_t	r = out[i].inner;

				if (idx)
					out[i].outer = idx[out[i].outer];
				if (r < t->inner_bits_rows)
					t->inner_bits[r >> 3] |= (uint8_t) (1u << (r & 7));
			}
			filled += m;
			j->pos += m;
		}
		if (j->pos == j->unit_total[u])
		{
			probe_close(j, u);
			j->cur++;
			j->pos = 0;
		}
	}
	*nout = filled;
	return GH_OK;
}

/* Per-key counts over all units, summed with saturation. */
static gh_status
probe_all_counts(gh_join *j, uint32_t *counts)
{
	gh_table   *t = j->t;
	gh_engine  *e = t->e;
	uint32_t   *tmp = NULL;
	gh_status	st = GH_OK;

	memset(counts, 0, j->n * sizeof(uint32_t));
	if (t->nunits == 1 && j->part_idx == NULL)
	{
		st = probe_open(j, 0, NULL);
		if (st == GH_OK)
			st = e->ops->probe_counts(e, j->probes[0], counts);
		if (j->cur != 0 || j->pos == 0)
			probe_close(j, 0);
		return st;
	}
	tmp = gh_malloc(e, j->n * sizeof(uint32_t));
	if (tmp == NULL)
		return e->status;
	for (int u = 0; st == GH_OK && u < t->nunits; u++)
	{
		gh_unit    *unit = &t->units[u];
		size_t		m = j->part_n[unit->partition];
		const uint64_t *idx = j->part_idx ? j->part_idx[unit->partition] : NULL;

		st = probe_open(j, u, NULL);
		if (st == GH_OK)
			st = e->ops->probe_counts(e, j->probes[u], tmp);
		for (size_t i = 0; st == GH_OK && i < m; i++)
		{
			uint64_t	at = idx ? idx[i] : i;
			uint64_t	s = (uint64_t) counts[at] + tmp[i];

			counts[at] = s > UINT32_MAX ? UINT32_MAX : (uint32_t) s;
		}
		/* keep the unit the writer is on */
		if (u != j->cur || j->pos == 0)
			probe_close(j, u);
	}
	free(tmp);
	return st;
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

gh_status
gh_table_inner_matched(gh_table *t, uint8_t *flags, size_t nflags)
{
	if (t == NULL)
		return GH_ERR_INVALID;
	if (flags == NULL && nflags > 0)
		return gh_fail(t->e, GH_ERR_INVALID, "invalid arguments to gh_table_inner_matched");
	if (t->n > 0 && t->inner_bits == NULL)
		return gh_fail(t->e, GH_ERR_INVALID,
					   "row numbers are too sparse to track matched rows");
	for (uint64_t r = 0; r < nflags && r < t->inner_bits_rows; r++)
		if (t->inner_bits[r >> 3] & (1u << (r & 7)))
			flags[r] = 1;
	return GH_OK;
}

/* ---- aggregation ---- */

gh_groups *
gh_groups_alloc(size_t ngroups, const gh_aggcol *cols, int ncols)
{
	gh_groups  *g = calloc(1, sizeof(*g));
	size_t		m = ngroups ? ngroups : 1;

	if (g == NULL)
		return NULL;
	g->ngroups = ngroups;
	g->ncols = ncols;
	g->partitions = 1;
	g->keys = calloc(m, sizeof(uint64_t));
	g->rows = calloc(m, sizeof(int64_t));
	g->cols = calloc(ncols > 0 ? ncols : 1, sizeof(gh_aggresult));
	if (g->keys == NULL || g->rows == NULL || g->cols == NULL)
	{
		gh_groups_free(g);
		return NULL;
	}
	for (int c = 0; c < ncols; c++)
	{
		gh_aggresult *r = &g->cols[c];

		r->nonnull = calloc(m, sizeof(int64_t));
		r->sum_lo = calloc(m, sizeof(uint64_t));
		r->sum_hi = calloc(m, sizeof(int64_t));
		r->fsum = calloc(m, sizeof(double));
		r->imin = calloc(m, sizeof(int64_t));
		r->imax = calloc(m, sizeof(int64_t));
		r->fmin = calloc(m, sizeof(double));
		r->fmax = calloc(m, sizeof(double));
		if (!r->nonnull || !r->sum_lo || !r->sum_hi || !r->fsum ||
			!r->imin || !r->imax || !r->fmin || !r->fmax)
		{
			gh_groups_free(g);
			return NULL;
		}
	}
	(void) cols;
	return g;
}

void
gh_groups_free(gh_groups *g)
{
	if (g == NULL)
		return;
	if (g->cols)
		for (int c = 0; c < g->ncols; c++)
		{
			gh_aggresult *r = &g->cols[c];

			free(r->nonnull);
			free(r->sum_lo);
			free(r->sum_hi);
			free(r->fsum);
			free(r->imin);
			free(r->imax);
			free(r->fmin);
			free(r->fmax);
		}
	free(g->cols);
	free(g->keys);
	free(g->rows);
	free(g);
}

/* Copy group `from` of src into slot `to` of dst (same columns). */
static void
group_copy(gh_groups *dst, size_t to, const gh_groups *src, size_t from)
{
	dst->keys[to] = src->keys[from];
	dst->rows[to] = src->rows[from];
	for (int c = 0; c < src->ncols; c++)
	{
		gh_aggresult *d = &dst->cols[c];
		const gh_aggresult *s = &src->cols[c];

		d->nonnull[to] = s->nonnull[from];
		d->sum_lo[to] = s->sum_lo[from];
		d->sum_hi[to] = s->sum_hi[from];
		d->fsum[to] = s->fsum[from];
		d->imin[to] = s->imin[from];
		d->imax[to] = s->imax[from];
		d->fmin[to] = s->fmin[from];
		d->fmax[to] = s->fmax[from];
	}
}

/*
 * The backends' total order of doubles (PostgreSQL's, NaN largest, with -0
 * below +0 so that results do not depend on row order).
 */
static int
float_order_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	if (a == b && signbit(a) != signbit(b))
		return signbit(a) ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Fold group `from` of src into group `to` of dst (same key). */
static void
group_combine(gh_groups *dst, size_t to, const gh_groups *src, size_t from,
			  const gh_aggcol *cols)
{
	dst->rows[to] += src->rows[from];
	for (int c = 0; c < src->ncols; c++)
	{
		gh_aggresult *d = &dst->cols[c];
		const gh_aggresult *s = &src->cols[c];
		bool		had = d->nonnull[to] > 0;

		if (s->nonnull[from] == 0)
			continue;
		d->nonnull[to] += s->nonnull[from];
		if (cols[c].type == GH_INT64)
		{
			uint64_t	lo = d->sum_lo[to] + s->sum_lo[from];

			d->sum_hi[to] += s->sum_hi[from] + (lo < d->sum_lo[to]);
			d->sum_lo[to] = lo;
			if (!had || s->imin[from] < d->imin[to])
				d->imin[to] = s->imin[from];
			if (!had || s->imax[from] > d->imax[to])
				d->imax[to] = s->imax[from];
		}
		else
		{
			d->fsum[to] += s->fsum[from];
			if (!had || float_order_cmp(s->fmin[from], d->fmin[to]) < 0)
				d->fmin[to] = s->fmin[from];
			if (!had || float_order_cmp(s->fmax[from], d->fmax[to]) > 0)
				d->fmax[to] = s->fmax[from];
		}
	}
}

/*
 * Gather the groups of several pieces into one result.  disjoint: the pieces
 * hold different keys (hash-range partitions), so concatenate; otherwise
 * combine equal keys (row-range pieces of one partition).
 */
static gh_groups *
gh_groups_merge(gh_engine *e, gh_groups **pieces, int npieces,
				const gh_aggcol *cols, int ncols, bool disjoint)
{
	size_t		total = 0,
				ng = 0,
				cap;
	gh_groups  *g;
	uint64_t   *slot_key = NULL;
	size_t	   *slot_at = NULL;
	bool	   *slot_used = NULL;

	for (int p = 0; p < npieces; p++)
		total += pieces[p]->ngroups;
	g = gh_groups_alloc(total, cols, ncols);
	if (g == NULL)
	{
		gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory merging groups");
		return NULL;
	}
	cap = 16;
	while (cap < 2 * total)
		cap <<= 1;
	if (!disjoint)
	{
		slot_key = malloc(cap * sizeof(uint64_t));
		slot_at = malloc(cap * sizeof(size_t));
		slot_used = calloc(cap, sizeof(bool));
		if (!slot_key || !slot_at || !slot_used)
		{
			free(slot_key);
			free(slot_at);
			free(slot_used);
			gh_groups_free(g);
			gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory merging groups");
			return NULL;
		}
	}
	for (int p = 0; p < npieces; p++)
		for (size_t i = 0; i < pieces[p]->ngroups; i++)
		{
			uint64_t	k = pieces[p]->keys[i];

			if (!disjoint)
			{
				size_t		s = gh_hash64(k, GH_SEED_AGG) & (cap - 1);

				while (slot_used[s] && slot_key[s] != k)
					s = (s + 1) & (cap - 1);
				if (slot_used[s])
				{
					group_combine(g, slot_at[s], pieces[p], i, cols);
					continue;
				}
				slot_used[s] = true;
				slot_key[s] = k;
				slot_at[s] = ng;
			}
			group_copy(g, ng++, pieces[p], i);
		}
	g->ngroups = ng;
	free(slot_key);
	free(slot_at);
	free(slot_used);
	return g;
}

/* Aggregate rows [start, start+m) of a partition-ordered layout, in pieces. */
static gh_status
aggregate_partition(gh_engine *e, int dev, const uint64_t *keys, size_t m,
					const gh_aggcol *cols, int ncols, size_t max_rows,
					gh_groups **out)
{
	int			npieces = m == 0 ? 1 : (int) ((m + max_rows - 1) / max_rows);
	gh_groups **pieces;
	gh_status	st = GH_OK;
	gh_aggcol  *pc = NULL;

	if (npieces == 1)
	{
		CHECK_INTERRUPT(e);
		return e->ops->aggregate(e, dev, keys, m, cols, ncols, out);
	}
	pieces = gh_calloc(e, npieces, sizeof(gh_groups *));
	pc = gh_calloc(e, ncols > 0 ? ncols : 1, sizeof(gh_aggcol));
	if (pieces == NULL || pc == NULL)
	{
		free(pieces);
		free(pc);
		return e->status;
	}
	for (int i = 0; st == GH_OK && i < npieces; i++)
	{
		size_t		start = (size_t) i * max_rows;
		size_t		len = m - start < max_rows ? m - start : max_rows;

		for (int c = 0; c < ncols; c++)
		{
			pc[c] = cols[c];
			pc[c].values = (const char *) cols[c].values + start * 8;
			pc[c].nulls = cols[c].nulls ? cols[c].nulls + start : NULL;
		}
		if (gh_interrupted(e))
			st = GH_ERR_CANCELLED;
		else
			st = e->ops->aggregate(e, dev, keys + start, len, pc, ncols, &pieces[i]);
	}
	if (st == GH_OK)
	{
		*out = gh_groups_merge(e, pieces, npieces, cols, ncols, false);
		if (*out == NULL)
			st = e->status;
	}
	for (int i = 0; i < npieces; i++)
		gh_groups_free(pieces[i]);
	free(pieces);
	free(pc);
	return st;
}

gh_status
gh_aggregate(gh_engine *e, const uint64_t *keys, size_t n,
			 const gh_aggcol *cols, int ncols, gh_groups **out)
{
	size_t		bpr,
				max_rows,
				k;
	uint32_t	nparts;
	int			ndev;
	uint32_t   *pof = NULL;
	size_t	   *off = NULL;
	uint64_t   *pk = NULL;
	gh_aggcol  *pc = NULL;
	void	  **pv = NULL;
	uint8_t   **pn = NULL;
	gh_groups **pieces = NULL;
	gh_status	st = GH_OK;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (out == NULL || (keys == NULL && n > 0) || ncols < 0 || (ncols > 0 && cols == NULL))
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_aggregate");
	for (int c = 0; c < ncols; c++)
		if ((cols[c].type != GH_INT64 && cols[c].type != GH_FLOAT64) ||
			(cols[c].values == NULL && n > 0))
			return gh_fail(e, GH_ERR_INVALID, "invalid aggregate column %d", c);
	*out = NULL;

	ndev = e->opt.ndevices;
	bpr = e->ops->agg_bytes_per_row(ncols);
	k = parts_needed(n, bpr, e->opt.memory_limit);
	nparts = (uint32_t) (((k + ndev - 1) / ndev) * ndev);
	max_rows = e->opt.memory_limit / (bpr ? bpr : 1);
	if (max_rows < 1)
		max_rows = 1;

	if (nparts == 1)
	{
		st = aggregate_partition(e, 0, keys, n, cols, ncols, max_rows, out);
		if (st == GH_OK)
			(*out)->partitions = 1;
		return st;
	}

	/* lay keys and columns out partition by partition */
	off = split_offsets(e, keys, n, nparts, &pof);
	pk = off ? gh_malloc(e, n * sizeof(uint64_t)) : NULL;
	pc = gh_calloc(e, ncols > 0 ? ncols : 1, sizeof(gh_aggcol));
	pv = gh_calloc(e, ncols > 0 ? ncols : 1, sizeof(void *));
	pn = gh_calloc(e, ncols > 0 ? ncols : 1, sizeof(uint8_t *));
	pieces = gh_calloc(e, nparts, sizeof(gh_groups *));
	if (off == NULL || pk == NULL || pc == NULL || pv == NULL || pn == NULL || pieces == NULL)
	{
		st = e->status;
		goto done;
	}
	for (int c = 0; c < ncols; c++)
	{
		pv[c] = gh_malloc(e, n * 8);
		pn[c] = cols[c].nulls ? gh_malloc(e, n) : NULL;
		if (pv[c] == NULL || (cols[c].nulls && pn[c] == NULL))
		{
			st = e->status;
			goto done;
		}
	}
	{
		size_t	   *cursor = gh_malloc(e, nparts * sizeof(size_t));

		if (cursor == NULL)
		{
			st = e->status;
			goto done;
		}
		memcpy(cursor, off, nparts * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
		{
			size_t		at = cursor[pof[i]]++;

			pk[at] = keys[i];
			for (int c = 0; c < ncols; c++)
			{
				memcpy((char *) pv[c] + at * 8, (const char *) cols[c].values + i * 8, 8);
				if (pn[c])
					pn[c][at] = cols[c].nulls[i];
			}
		}
		free(cursor);
	}
	for (uint32_t p = 0; st == GH_OK && p < nparts; p++)
	{
		for (int c = 0; c < ncols; c++)
		{
			pc[c] = cols[c];
			pc[c].values = (char *) pv[c] + off[p] * 8;
			pc[c].nulls = pn[c] ? pn[c] + off[p] : NULL;
		}
		st = aggregate_partition(e, (int) (p % ndev), pk + off[p], off[p + 1] - off[p],
								 pc, ncols, max_rows, &pieces[p]);
	}
	if (st == GH_OK)
	{
		*out = gh_groups_merge(e, pieces, (int) nparts, cols, ncols, true);
		if (*out == NULL)
			st = e->status;
		else
			(*out)->partitions = (int) nparts;
	}

done:
	if (pieces)
		for (uint32_t p = 0; p < nparts; p++)
			gh_groups_free(pieces[p]);
	if (pv)
		for (int c = 0; c < ncols; c++)
			free(pv[c]);
	if (pn)
		for (int c = 0; c < ncols; c++)
			free(pn[c]);
	free(pieces);
	free(pv);
	free(pn);
	free(pc);
	free(pk);
	free(off);
	free(pof);
	return st;
}

/* ---- benchmarks ---- */

gh_status
gh_bench(gh_engine *e, gh_bench_op op, gh_kind kind, size_t n, int reps,
		 double load_factor, gh_bench_result *out)
{
	if (e == NULL)
		return GH_ERR_INVALID;
	if (out == NULL || n == 0 || reps < 1 || op < GH_BENCH_BUILD || op > GH_BENCH_AGGREGATE ||
		load_factor < 0 || load_factor > 0.99 ||
		(kind != GH_KIND_AUTO && kind != GH_KIND_HASHGRAPH && kind != GH_KIND_BCHT))
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_bench");
	if (kind == GH_KIND_AUTO)
		kind = gh_choose_kind(e, n);
	memset(out, 0, sizeof(*out));
	return e->ops->bench(e, op, kind, n, reps, load_factor, out);
}
