/*-------------------------------------------------------------------------
 *
 * cuda_spread.cu
 *	  A build or an aggregation of host input spread over every GPU: each
 *	  GPU is sent an equal slice of the rows as they lie, the GPUs exchange
 *	  them by hash range, and each builds or aggregates its range.
 *
 * INTERFACE ROUTINES
 *		gh_cuda_build_spread		one table partition per device
 *		gh_cuda_aggregate_spread	one piece of groups per device
 *
 * The alternative, splitting the input by hash range on the host and
 * sending every GPU its ranges, hashes and copies every row on the CPU
 * before any GPU starts; spread, the host only copies slices (the GPUs'
 * copies from host memory run at once, over their own links) and the
 * split is the all-to-all exchange on the GPUs (cuda_exchange.cu), the
 * design of Tripathy and Green's multi-GPU HashGraph.
 *
 * Rows travel as 64-bit columns: build keys and row numbers (made on the
 * device when the caller has none); aggregation keys, every value column
 * and, when any column has NULLs, one column of null bits (bit c: column c
 * is NULL), unpacked again into null flags on the destination.  The engine
 * takes this path when the input would fit one device and the columns fit
 * an exchange (GH_SPREAD_MAX_AGG_COLS).
 *
 *-------------------------------------------------------------------------
 */
#include <cstring>

#include "cuda_exchange.cuh"
#include "cuda_tables.cuh"

/* rows[i] = first + i */
__global__ void
spread_row_numbers(uint64_t *__restrict__ rows, size_t n, uint64_t first)
{
	GH_GRID_STRIDE(i, n)
		rows[i] = first + i;
}

struct null_flag_cols
{
	int			ncols;
	const uint8_t *flags[GH_SPREAD_MAX_AGG_COLS];	/* NULL: the column has none */
};

/* bits[i]: bit c set when column c of row i is NULL */
__global__ void
pack_null_bits(null_flag_cols f, size_t n, uint64_t *__restrict__ bits)
{
	GH_GRID_STRIDE(i, n)
	{
		uint64_t	b = 0;

		for (int c = 0; c < f.ncols; c++)
			if (f.flags[c] != nullptr && f.flags[c][i] != 0)
				b |= (uint64_t) 1 << c;
		bits[i] = b;
	}
}

/* flags[i] = bit c of bits[i] */
__global__ void
unpack_null_bit(const uint64_t *__restrict__ bits, size_t n, int c, uint8_t *__restrict__ flags)
{
	GH_GRID_STRIDE(i, n)
		flags[i] = (uint8_t) ((bits[i] >> c) & 1);
}

/* One spread operation's input, slices and ranges. */
struct spread_work
{
	size_t		n = 0;
	const uint64_t *keys = nullptr;
	const uint64_t *rows = nullptr; /* build; NULL: row numbers are indices */
	gh_kind		kind = GH_KIND_HASHGRAPH;
	double		load_factor = 0;
	const gh_aggcol *cols = nullptr;	/* aggregation */
	int			ncols = 0;
	bool		nulls = false;		/* some column has null flags */
	int			xcols = 0;			/* columns exchanged */
	gh_xchg_side in[GH_MAX_DEVICES];
	gh_xchg_side out[GH_MAX_DEVICES];
	void	  **parts = nullptr;
	size_t	   *nrows = nullptr;
	gh_groups **pieces = nullptr;
};

static void
slice_of(const gh_engine *e, size_t n, int dev, size_t *begin, size_t *count)
{
	size_t		nd = (size_t) e->opt.ndevices;
	size_t		b = n / nd * dev + (n % nd < (size_t) dev ? n % nd : (size_t) dev);

	*begin = b;
	*count = n / nd + ((size_t) dev < n % nd ? 1 : 0);
}

/* Device thread: send device dev its slice of the build input. */
static gh_status
stage_build_slice(gh_engine *e, int dev, void *arg)
{
	spread_work *w = (spread_work *) arg;
	gh_xchg_side *in = &w->in[dev];
	gh_cuda_ctx ctx;
	size_t		b,
				m;

	slice_of(e, w->n, dev, &b, &m);
	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	GH_TRY(gh_cuda_stage(&ctx, w->keys + b, m, in->col[0], "build keys"));
	if (w->rows)
		GH_TRY(gh_cuda_stage(&ctx, w->rows + b, m, in->col[1], "build rows"));
	else if (m > 0)
	{
		GH_TRY(in->col[1].alloc(&ctx, m, "build rows"));
		spread_row_numbers<<<gh_cuda_grid(m, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx.d->stream>>>(
			in->col[1].p, m, b);
		GH_CUDA_LAUNCHED(e, "spread_row_numbers");
	}
	in->n = m;
	return GH_OK;
}

/* Device thread: build device dev's hash range. */
static gh_status
build_range(gh_engine *e, int dev, void *arg)
{
	spread_work *w = (spread_work *) arg;
	gh_cuda_ctx ctx;
	gh_cuda_part *p = nullptr;
	gh_status	st;

	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	w->nrows[dev] = w->out[dev].n;
	GH_TRY(gh_cuda_part_build(&ctx, w->kind, w->out[dev].col[0], w->out[dev].col[1],
							  w->out[dev].n, w->load_factor, &p));
	st = gh_cuda_sync(&ctx);
	if (st != GH_OK)
	{
		delete p;
		return st;
	}
	w->parts[dev] = p;
	return GH_OK;
}

gh_status
gh_cuda_build_spread(gh_engine *e, gh_kind kind, const uint64_t *keys, const uint64_t *rows,
					 size_t n, double load_factor, void **parts, size_t *nrows)
{
	spread_work w;
	gh_xchg_stats stats;
	uint32_t	all = (uint32_t) ((1ull << e->opt.ndevices) - 1);
	gh_status	st;

	w.n = n;
	w.keys = keys;
	w.rows = rows;
	w.kind = kind;
	w.load_factor = load_factor;
	w.parts = parts;
	w.nrows = nrows;
	for (int d = 0; d < e->opt.ndevices; d++)
		parts[d] = nullptr;
	GH_TRY(gh_for_devices(e, all, n, stage_build_slice, &w));
	GH_TRY(gh_cuda_exchange(e, 2, w.in, w.out, &stats));
	st = gh_for_devices(e, all, n, build_range, &w);
	if (st != GH_OK)
		for (int d = 0; d < e->opt.ndevices; d++)
		{
			e->ops->part_free(e, parts[d]);
			parts[d] = nullptr;
		}
	return st;
}

/* Device thread: send device dev its slice of keys, values and null bits. */
static gh_status
stage_agg_slice(gh_engine *e, int dev, void *arg)
{
	spread_work *w = (spread_work *) arg;
	gh_xchg_side *in = &w->in[dev];
	gh_cuda_ctx ctx;
	size_t		b,
				m;

	slice_of(e, w->n, dev, &b, &m);
	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	GH_TRY(gh_cuda_stage(&ctx, w->keys + b, m, in->col[0], "aggregate keys"));
	for (int c = 0; c < w->ncols; c++)
		GH_TRY(gh_cuda_stage(&ctx, (const uint64_t *) w->cols[c].values + b, m, in->col[1 + c],
							 "aggregate values"));
	if (w->nulls && m > 0)
	{
		gh_dbuf<uint8_t> flags[GH_SPREAD_MAX_AGG_COLS];
		null_flag_cols f;

		memset(&f, 0, sizeof(f));
		f.ncols = w->ncols;
		for (int c = 0; c < w->ncols; c++)
			if (w->cols[c].nulls != nullptr)
			{
				GH_TRY(gh_cuda_stage(&ctx, w->cols[c].nulls + b, m, flags[c],
									 "aggregate null flags"));
				f.flags[c] = flags[c].p;
			}
		GH_TRY(in->col[1 + w->ncols].alloc(&ctx, m, "aggregate null bits"));
		pack_null_bits<<<gh_cuda_grid(m, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx.d->stream>>>(
			f, m, in->col[1 + w->ncols].p);
		GH_CUDA_LAUNCHED(e, "pack_null_bits");
		/* the flags are freed on the stream, after the kernel */
	}
	in->n = m;
	return GH_OK;
}

/* Device thread: aggregate device dev's hash range. */
static gh_status
aggregate_range(gh_engine *e, int dev, void *arg)
{
	spread_work *w = (spread_work *) arg;
	gh_xchg_side *out = &w->out[dev];
	gh_cuda_ctx ctx;
	gh_cuda_agg_rows rows;
	size_t		n = out->n;

	GH_TRY(rows.init(e, w->ncols));
	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	rows.keys.swap(out->col[0]);
	for (int c = 0; c < w->ncols; c++)
	{
		rows.values[c].swap(out->col[1 + c]);
		if (w->cols[c].nulls != nullptr && n > 0)
		{
			GH_TRY(rows.nulls[c].alloc(&ctx, n, "aggregate null flags"));
			unpack_null_bit<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx.d->stream>>>(
				out->col[1 + w->ncols].p, n, c, rows.nulls[c].p);
			GH_CUDA_LAUNCHED(e, "unpack_null_bit");
		}
	}
	if (w->nulls)
		out->col[1 + w->ncols].reset();
	return gh_cuda_aggregate_device(&ctx, rows, n, w->cols, w->ncols, &w->pieces[dev]);
}

gh_status
gh_cuda_aggregate_spread(gh_engine *e, const uint64_t *keys, size_t n, const gh_aggcol *cols,
						 int ncols, gh_groups **pieces)
{
	spread_work w;
	gh_xchg_stats stats;
	uint32_t	all = (uint32_t) ((1ull << e->opt.ndevices) - 1);

	if (ncols > GH_SPREAD_MAX_AGG_COLS)
		return gh_fail(e, GH_ERR_INTERNAL, "%d aggregate columns to spread", ncols);
	w.n = n;
	w.keys = keys;
	w.cols = cols;
	w.ncols = ncols;
	for (int c = 0; c < ncols; c++)
		w.nulls |= cols[c].nulls != nullptr;
	w.xcols = 1 + ncols + (w.nulls ? 1 : 0);
	w.pieces = pieces;
	GH_TRY(gh_for_devices(e, all, n, stage_agg_slice, &w));
	GH_TRY(gh_cuda_exchange(e, w.xcols, w.in, w.out, &stats));
	return gh_for_devices(e, all, n, aggregate_range, &w);
}
