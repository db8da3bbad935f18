/*-------------------------------------------------------------------------
 *
 * cpu_spread.c
 *	  Inputs spread over the CPU backend's simulated devices, as the CUDA
 *	  backend spreads them over GPUs (cuda_spread.cu).
 *
 * INTERFACE ROUTINES
 *		gh_cpu_build_spread			one table partition per device
 *		gh_cpu_aggregate_spread		one piece of groups per device
 *
 * The same steps and the same rows as on GPUs: the input is exchanged by
 * hash range (cpu_exchange.c: slices, then every device's range) with the
 * build's row numbers, or the aggregation's values and one column of null
 * bits, and every simulated device builds or aggregates its range on a
 * thread of its own.  So the engine's use of spread inputs (engine_table.c,
 * engine_aggregate.c) is tested where there is no GPU.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

typedef struct cpu_spread
{
	gh_cpu_range r[GH_MAX_DEVICES];
	gh_kind		kind;
	double		load_factor;
	void	  **parts;
	size_t	   *nrows;
	const gh_aggcol *cols;
	int			ncols;
	bool		nulls;
	gh_groups **pieces;
} cpu_spread;

static uint32_t
all_devices(const gh_engine *e)
{
	return (uint32_t) ((1ull << e->opt.ndevices) - 1);
}

/* Device thread: build device dev's range. */
static gh_status
build_range(gh_engine *e, int dev, void *arg)
{
	cpu_spread *w = arg;

	if (gh_injected_failure(e, dev))
		return e->inject_status;
	w->nrows[dev] = w->r[dev].n;
	return gh_cpu_build(e, dev, w->kind, w->r[dev].col[0], w->r[dev].col[1], w->r[dev].n,
						w->load_factor, &w->parts[dev]);
}

gh_status
gh_cpu_build_spread(gh_engine *e, gh_kind kind, const uint64_t *keys, const uint64_t *rows,
					size_t n, double load_factor, void **parts, size_t *nrows)
{
	cpu_spread	w;
	uint64_t   *numbers = NULL;
	const uint64_t *cols[2] = {keys, rows};
	gh_status	st;

	memset(&w, 0, sizeof(w));
	w.kind = kind;
	w.load_factor = load_factor;
	w.parts = parts;
	w.nrows = nrows;
	for (int d = 0; d < e->opt.ndevices; d++)
		parts[d] = NULL;
	if (rows == NULL)
	{
		numbers = malloc((n > 0 ? n : 1) * sizeof(uint64_t));
		if (numbers == NULL)
			return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for row numbers");
		for (size_t i = 0; i < n; i++)
			numbers[i] = i;
		cols[1] = numbers;
	}
	st = gh_cpu_exchange(e, e->opt.ndevices, cols, 2, n, w.r);
	free(numbers);
	if (st == GH_OK)
		st = gh_for_devices(e, all_devices(e), n, build_range, &w);
	gh_cpu_exchange_free(w.r, e->opt.ndevices);
	if (st != GH_OK)
		for (int d = 0; d < e->opt.ndevices; d++)
		{
			gh_cpu_part_free(e, parts[d]);
			parts[d] = NULL;
		}
	return st;
}

/* Device thread: unpack device dev's null bits, aggregate its range. */
static gh_status
aggregate_range(gh_engine *e, int dev, void *arg)
{
	cpu_spread *w = arg;
	gh_cpu_range *r = &w->r[dev];
	gh_aggcol	pc[GH_SPREAD_MAX_AGG_COLS];
	uint8_t    *flags[GH_SPREAD_MAX_AGG_COLS] = {NULL};
	gh_status	st = GH_OK;

	if (gh_injected_failure(e, dev))
		return e->inject_status;
	for (int c = 0; c < w->ncols; c++)
	{
		pc[c] = w->cols[c];
		pc[c].values = r->col[1 + c];
		pc[c].nulls = NULL;
		if (w->cols[c].nulls == NULL)
			continue;
		flags[c] = malloc(r->n > 0 ? r->n : 1);
		if (flags[c] == NULL)
		{
			st = gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for null flags");
			break;
		}
		for (size_t i = 0; i < r->n; i++)
			flags[c][i] = (uint8_t) ((r->col[1 + w->ncols][i] >> c) & 1);
		pc[c].nulls = flags[c];
	}
	if (st == GH_OK)
		st = gh_cpu_aggregate(e, dev, r->col[0], r->n, pc, w->ncols, &w->pieces[dev]);
	for (int c = 0; c < w->ncols; c++)
		free(flags[c]);
	return st;
}

gh_status
gh_cpu_aggregate_spread(gh_engine *e, const uint64_t *keys, size_t n, const gh_aggcol *cols,
						int ncols, gh_groups **pieces)
{
	cpu_spread	w;
	const uint64_t *xcols[2 + GH_SPREAD_MAX_AGG_COLS];
	uint64_t   *bits = NULL;
	int			nx = 1 + ncols;
	gh_status	st;

	if (ncols > GH_SPREAD_MAX_AGG_COLS)
		return gh_fail(e, GH_ERR_INTERNAL, "%d aggregate columns to spread", ncols);
	memset(&w, 0, sizeof(w));
	w.cols = cols;
	w.ncols = ncols;
	w.pieces = pieces;
	xcols[0] = keys;
	for (int c = 0; c < ncols; c++)
	{
		xcols[1 + c] = cols[c].values;
		w.nulls |= cols[c].nulls != NULL;
	}
	if (w.nulls)
	{
		bits = calloc(n > 0 ? n : 1, sizeof(uint64_t));
		if (bits == NULL)
			return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for null bits");
		for (int c = 0; c < ncols; c++)
			if (cols[c].nulls)
				for (size_t i = 0; i < n; i++)
					if (cols[c].nulls[i])
						bits[i] |= (uint64_t) 1 << c;
		xcols[nx++] = bits;
	}
	st = gh_cpu_exchange(e, e->opt.ndevices, xcols, nx, n, w.r);
	free(bits);
	if (st == GH_OK)
		st = gh_for_devices(e, all_devices(e), n, aggregate_range, &w);
	gh_cpu_exchange_free(w.r, e->opt.ndevices);
	return st;
}
