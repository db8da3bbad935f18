/*-------------------------------------------------------------------------
 *
 * engine.c
 *	  The engine's common layer: what is the same for the CPU and CUDA
 *	  backends.  This file: engine handles, options, status names, the
 *	  number of hash ranges, and benchmarks.
 *
 * INTERFACE ROUTINES
 *		gh_open, gh_close		engine handles, options, error text
 *		gh_list_devices			the GPUs present
 *		gh_bench				forwards to the backend
 *
 * The rest of the common layer: engine_table.c (tables and joins split into
 * hash-range partitions and units across devices), engine_aggregate.c
 * (grouping split and merged the same way), engine_split.c (host inputs
 * split by hash range on several threads), engine_joinagg.c (a join's pairs
 * grouped on the devices that make them), engine_devices.c (running a
 * device's share of an operation on a thread of its own, errors and
 * cancellation shared between the threads).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "hash.h"

#define CPU_DEFAULT_MEMORY_LIMIT ((size_t) 4 << 30)

/* ---- errors and host memory ---- */

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
		case GH_ERR_DUPLICATE_KEY:
			return "duplicate key";
	}
	return "unknown status";
}

void *
gh_malloc(gh_engine *e, size_t bytes)
{
	void	   *p = malloc(bytes ? bytes : 1);

	if (p == NULL)
		gh_fail(e, GH_ERR_HOST_NOMEM, "could not allocate %zu bytes of host memory", bytes);
	return p;
}

void *
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

/* Free the engine struct itself. */
static void
engine_destroy(gh_engine *e)
{
	gh_stop_device_threads(e);
	pthread_cond_destroy(&e->work);
	pthread_cond_destroy(&e->done);
	pthread_mutex_destroy(&e->lock);
	free(e);
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
	if (pthread_mutex_init(&e->lock, NULL) != 0 || pthread_cond_init(&e->done, NULL) != 0 ||
		pthread_cond_init(&e->work, NULL) != 0)
	{
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "could not initialise the engine's lock");
		free(e);
		return GH_ERR_INTERNAL;
	}
	e->inject_dev = -1;
	e->broadcast_rows = -1;
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
			engine_destroy(e);
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
	if (e->opt.memory_cap != 0 && e->opt.memory_limit > e->opt.memory_cap)
		e->opt.memory_limit = e->opt.memory_cap;

	st = e->ops->open(e);
	if (st != GH_OK)
	{
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s", e->errmsg[0] ? e->errmsg : gh_status_name(st));
		engine_destroy(e);
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
	gh_page_cache_close(e);
	gh_darrays_close(e);
	e->ops->close(e);
	engine_destroy(e);
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

int
gh_engine_devices(const gh_engine *e, int *ids, int max)
{
	int			n = 0;

	for (int d = 0; d < e->opt.ndevices && n < max; d++)
		ids[n++] = gh_device_id(e, d);
	return n;
}

size_t
gh_engine_memory_limit(const gh_engine *e)
{
	return e->opt.memory_limit;
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

void
gh_release_cached_memory(gh_engine *e)
{
	if (e != NULL && e->ops->trim != NULL)
		e->ops->trim(e);
}

gh_kind
gh_choose_kind(const gh_engine *e, size_t n)
{
	(void) e;
	(void) n;
	/*
	 * HashGraph: it builds over twice as fast as BCHT and serves the
	 * executor's batched probes faster (cuda/README, "Why HashGraph is the
	 * default").
	 */
	return GH_KIND_HASHGRAPH;
}

/* ---- how many hash ranges ---- */

size_t
gh_parts_needed(size_t n, size_t bytes_per_row, size_t limit)
{
	double		need = (double) n * (double) bytes_per_row;
	size_t		k = (size_t) (need / (double) (limit ? limit : 1)) + 1;

	return k < 1 ? 1 : k;
}

uint32_t
gh_partitions_for(const gh_engine *e, size_t n, size_t bytes_per_row)
{
	size_t		k = gh_parts_needed(n, bytes_per_row, e->opt.memory_limit);
	size_t		ndev = (size_t) e->opt.ndevices;

	return (uint32_t) (((k + ndev - 1) / ndev) * ndev);
}

/* ---- devices ---- */

int
gh_device_id(const gh_engine *e, int dev)
{
	return e->opt.backend == GH_BACKEND_CUDA ? e->opt.devices[dev] : dev;
}

int
gh_device_ids(const gh_engine *e, uint32_t devmask, int *ids, int max)
{
	int			k = 0;

	for (int d = 0; d < e->opt.ndevices; d++)
		if (devmask & (1u << d))
		{
			if (ids != NULL && k < max)
				ids[k] = gh_device_id(e, d);
			k++;
		}
	return k;
}

/* ---- benchmarks ---- */

gh_status
gh_bench(gh_engine *e, gh_bench_op op, gh_kind kind, size_t n, int reps,
		 double load_factor, gh_bench_result *out)
{
	if (e == NULL)
		return GH_ERR_INVALID;
	if (out == NULL || n == 0 || reps < 1 || op < GH_BENCH_BUILD || op > GH_BENCH_AGGREGATE_FEW ||
		load_factor < 0 || load_factor > 0.99 ||
		(kind != GH_KIND_AUTO && kind != GH_KIND_HASHGRAPH && kind != GH_KIND_BCHT))
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_bench");
	if (kind == GH_KIND_AUTO)
		kind = gh_choose_kind(e, n);
	memset(out, 0, sizeof(*out));
	return e->ops->bench(e, op, kind, n, reps, load_factor, out);
}

