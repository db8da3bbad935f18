/*-------------------------------------------------------------------------
 *
 * cuda_bench_multi.cu
 *	  Benchmarks of the CUDA backend on several GPUs: the operations of
 *	  cuda_bench.cu on hash ranges, after the all-to-all exchange of their
 *	  input.
 *
 * The data are those of the one-GPU benchmark, generated in equal slices,
 * slice s on device s (rows [s n / ndev, (s + 1) n / ndev)), as if each
 * GPU had read its share of a table.  A timed run then does what a
 * multi-GPU operation does (Tripathy and Green):
 *
 *	exchange	the rows are exchanged all-to-all so that every device holds
 *				its hash range (cuda_exchange.cu): build keys with their row
 *				numbers, probe keys with their probe index, aggregation keys
 *				with their values;
 *	operation	every device builds, looks up, joins or aggregates its range
 *				on a host thread of its own (gh_for_devices), all at once.
 *
 * For probe, find and join the table is built the same way before the
 * timed runs.  Timing: the inputs are made and every device synchronised;
 * the run's time is host wall time from there until the last device's
 * operation is done.  Events on each device's stream split its share: from
 * its start to the end of its exchange copies, then to the end of its
 * operation.  The exchange time is the longest device's; each device's
 * operation time its own.  Medians over the timed runs are reported, as
 * for one GPU.
 *
 *-------------------------------------------------------------------------
 */
#include <algorithm>
#include <ctime>
#include <memory>
#include <new>
#include <vector>

#include "cuda_bench.cuh"
#include "cuda_exchange.cuh"

/* rows[i] = first + i */
__global__ void
fill_row_numbers(uint64_t *__restrict__ rows, size_t n, uint64_t first)
{
	GH_GRID_STRIDE(i, n)
		rows[i] = first + i;
}

static double
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static double
median(std::vector<double> &v)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

/* Everything a multi-GPU benchmark holds, released however it ends. */
struct multi_bench
{
	gh_engine  *e;
	int			ndev;
	gh_cuda_ctx ctx[GH_MAX_DEVICES];
	bool		pool_kept[GH_MAX_DEVICES] = {};
	cudaEvent_t start[GH_MAX_DEVICES] = {};
	cudaEvent_t xdone[GH_MAX_DEVICES] = {};
	cudaEvent_t end[GH_MAX_DEVICES] = {};
	gh_cuda_part *parts[GH_MAX_DEVICES] = {};	/* the table probes run against */

	/* one run: the exchanged input and what each device found */
	gh_bench_op op;
	gh_kind		kind;
	double		load_factor;
	gh_xchg_side x[GH_MAX_DEVICES];
	uint64_t	check[GH_MAX_DEVICES];
	uint64_t	bytes[GH_MAX_DEVICES];

	multi_bench(gh_engine *engine) : e(engine), ndev(((gh_cuda_state *) engine->bstate)->ndev)
	{
	}
	multi_bench(const multi_bench &) = delete;
	multi_bench &operator=(const multi_bench &) = delete;

	~multi_bench()
	{
		for (int d = 0; d < ndev; d++)
		{
			gh_cuda_ctx c;

			if (gh_cuda_enter(e, d, &c) != GH_OK)
				continue;
			/* nothing may be freed under work still running */
			(void) cudaStreamSynchronize(c.d->stream);
			delete parts[d];
			parts[d] = nullptr;
			for (int k = 0; k < GH_XCHG_MAX_COLS; k++)
				x[d].col[k].reset();
			if (start[d] != nullptr)
				(void) cudaEventDestroy(start[d]);
			if (xdone[d] != nullptr)
				(void) cudaEventDestroy(xdone[d]);
			if (end[d] != nullptr)
				(void) cudaEventDestroy(end[d]);
			if (pool_kept[d])
				gh_cuda_pool_release(&c);
		}
		(void) cudaGetLastError();
	}
};

/* Rows [first, first + count) of slice s: the first row and the count. */
static void
slice_of(size_t n, int ndev, int s, size_t *first, size_t *count)
{
	size_t		a = n * (size_t) s / (size_t) ndev;
	size_t		b = n * (size_t) (s + 1) / (size_t) ndev;

	*first = a;
	*count = b - a;
}

/*
 * Make the inputs of one exchange in in[]: build keys and row numbers
 * (what = GH_BENCH_BUILD), probe keys and their indices (probe, find, join;
 * absent keys for find_miss), or aggregation keys and values.
 */
static gh_status
make_slices(multi_bench *b, gh_bench_op what, size_t n, gh_xchg_side *in, int *ncols)
{
	*ncols = 2;
	for (int s = 0; s < b->ndev; s++)
	{
		const gh_cuda_ctx *ctx = &b->ctx[s];
		cudaStream_t st;
		size_t		first,
					cnt;
		unsigned	grid;

		GH_TRY(gh_cuda_enter(b->e, s, &b->ctx[s]));
		st = ctx->d->stream;
		slice_of(n, b->ndev, s, &first, &cnt);
		grid = gh_cuda_grid(cnt, GH_CUDA_BLOCK);
		GH_TRY(in[s].col[0].alloc(ctx, cnt, "benchmark keys"));
		GH_TRY(in[s].col[1].alloc(ctx, cnt, "benchmark rows"));
		in[s].n = cnt;
		if (cnt == 0)
			continue;
		switch (what)
		{
			case GH_BENCH_BUILD:
				make_distinct_keys<<<grid, GH_CUDA_BLOCK, 0, st>>>(in[s].col[0].p, in[s].col[1].p,
																   cnt, first);
				break;
			case GH_BENCH_FIND_MISS:
				make_distinct_keys<<<grid, GH_CUDA_BLOCK, 0, st>>>(in[s].col[0].p, nullptr, cnt,
																   n + first);
				break;
			case GH_BENCH_AGGREGATE:
			case GH_BENCH_AGGREGATE_FEW:
				make_group_keys<<<grid, GH_CUDA_BLOCK, 0, st>>>(in[s].col[0].p,
																(int64_t *) in[s].col[1].p, cnt,
																gh_bench_groups(what, n), first);
				break;
			default:
				make_present_keys<<<grid, GH_CUDA_BLOCK, 0, st>>>(in[s].col[0].p, cnt, n, first);
				break;
		}
		GH_CUDA_LAUNCHED(b->e, "make benchmark slice");
		if (what != GH_BENCH_BUILD && !GH_BENCH_AGGREGATES(what))
		{
			fill_row_numbers<<<grid, GH_CUDA_BLOCK, 0, st>>>(in[s].col[1].p, cnt, first);
			GH_CUDA_LAUNCHED(b->e, "fill_row_numbers");
		}
	}
	return GH_OK;
}

/* Device thread: build the table of device dev's range (untimed set-up). */
static gh_status
build_range(gh_engine *e, int dev, void *arg)
{
	multi_bench *b = (multi_bench *) arg;
	gh_cuda_ctx ctx;

	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	GH_TRY(gh_cuda_part_build(&ctx, b->kind, b->x[dev].col[0], b->x[dev].col[1],
							  b->x[dev].n, b->load_factor, &b->parts[dev]));
	return gh_cuda_sync(&ctx);
}

/* Device thread: the timed operation on device dev's range. */
static gh_status
run_range(gh_engine *e, int dev, void *arg)
{
	multi_bench *b = (multi_bench *) arg;
	gh_xchg_side *x = &b->x[dev];
	size_t		n = x->n;
	gh_cuda_ctx ctx;
	cudaStream_t st;
	gh_cuda_part *part = b->parts[dev];

	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	st = ctx.d->stream;
	b->check[dev] = 0;
	b->bytes[dev] = 0;
	switch (b->op)
	{
		case GH_BENCH_BUILD:
			{
				gh_cuda_part *raw = nullptr;
				std::unique_ptr<gh_cuda_part> built;

				GH_TRY(gh_cuda_part_build(&ctx, b->kind, x->col[0], x->col[1], n,
										  b->load_factor, &raw));
				built.reset(raw);
				GH_CUDA_TRY(e, cudaEventRecord(b->end[dev], st));
				GH_CUDA_TRY(e, cudaEventSynchronize(b->end[dev]));
				b->check[dev] = raw->kind == GH_KIND_BCHT ? raw->bc.ndistinct : raw->hg.n;
				b->bytes[dev] = 16 * (uint64_t) n + gh_cuda_bench_table_bytes(raw);
				return GH_OK;
			}
		case GH_BENCH_JOIN:
			{
				gh_cuda_probe pr;
				gh_dbuf<gh_pair> pairs;

				GH_TRY(gh_cuda_probe_start(&ctx, part, x->col[0].p, &x->col[0], n,
										   GH_JOIN_INTERSECT, &pr));
				GH_TRY(pairs.alloc(&ctx, pr.total, "benchmark pairs"));
				if (pr.total > 0)
					GH_TRY(gh_cuda_probe_pairs(&ctx, &pr, 0, pr.total, pairs.p));
				GH_CUDA_TRY(e, cudaEventRecord(b->end[dev], st));
				GH_CUDA_TRY(e, cudaEventSynchronize(b->end[dev]));
				b->check[dev] = pr.total;
				b->bytes[dev] = 8 * (uint64_t) n + 24 * pr.total;
				return GH_OK;
			}
		case GH_BENCH_AGGREGATE:
		case GH_BENCH_AGGREGATE_FEW:
			{
				uint64_t	ngroups = 0;

				if (n > 0)
					GH_TRY(gh_cuda_aggregate_device_bench(&ctx, x->col[0].p,
														  (const int64_t *) x->col[1].p, n,
														  &ngroups));
				GH_CUDA_TRY(e, cudaEventRecord(b->end[dev], st));
				GH_CUDA_TRY(e, cudaEventSynchronize(b->end[dev]));
				b->check[dev] = ngroups;
				b->bytes[dev] = 16 * (uint64_t) n + 48 * ngroups;
				return GH_OK;
			}
		default:
			{
				gh_dbuf<uint32_t> counts;
				unsigned long long *hits = (unsigned long long *) (ctx.d->scratch + SCRATCH_HITS);
				uint64_t	nhits = 0;

				GH_TRY(counts.alloc(&ctx, n, "benchmark counts"));
				if (n > 0 && part->kind == GH_KIND_BCHT)
					GH_TRY(gh_bcht_count(&ctx, &part->bc, x->col[0].p, n, nullptr, nullptr,
										 counts.p));
				else if (n > 0)
					GH_TRY(gh_hg_count(&ctx, &part->hg, x->col[0].p, false, nullptr, n,
									   nullptr, nullptr, counts.p));
				GH_CUDA_TRY(e, cudaEventRecord(b->end[dev], st));
				/* untimed: the hits, to prove the lookups found their keys */
				GH_CUDA_TRY(e, cudaMemsetAsync(hits, 0, sizeof(uint64_t), st));
				if (n > 0)
				{
					count_nonzero<<<gh_cuda_wide_grid(&ctx, n, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0, st>>>(
						counts.p, n, hits);
					GH_CUDA_LAUNCHED(e, "count_nonzero");
				}
				GH_TRY(gh_cuda_read_scratch(&ctx, SCRATCH_HITS, 1, &nhits));
				b->check[dev] = nhits;
				b->bytes[dev] = 12 * (uint64_t) n;
				return GH_OK;
			}
	}
}

/* Wait until every device has finished what was queued. */
static gh_status
sync_all(multi_bench *b)
{
	for (int d = 0; d < b->ndev; d++)
	{
		GH_TRY(gh_cuda_enter(b->e, d, &b->ctx[d]));
		GH_TRY(gh_cuda_sync(&b->ctx[d]));
	}
	return GH_OK;
}

gh_status
gh_cuda_bench_multi(gh_engine *e, gh_bench_op op, gh_kind kind, size_t n,
					int reps, double load_factor, gh_bench_result *out)
{
	multi_bench b(e);
	int			ndev = b.ndev;
	uint32_t	all = ndev >= 32 ? UINT32_MAX : (1u << ndev) - 1;
	std::vector<double> total_ms,
				xchg_ms,
				xchg_gbs;
	std::vector<double> dev_ms[GH_MAX_DEVICES];

	b.op = op;
	b.kind = kind;
	b.load_factor = load_factor;
	try
	{
		total_ms.reserve(reps);
		xchg_ms.reserve(reps);
		xchg_gbs.reserve(reps);
		for (int d = 0; d < ndev; d++)
			dev_ms[d].reserve(reps);
	}
	catch (...)
	{
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for benchmark times");
	}
	for (int d = 0; d < ndev; d++)
	{
		GH_TRY(gh_cuda_enter(e, d, &b.ctx[d]));
		GH_CUDA_TRY(e, cudaEventCreate(&b.start[d]));
		GH_CUDA_TRY(e, cudaEventCreate(&b.xdone[d]));
		GH_CUDA_TRY(e, cudaEventCreate(&b.end[d]));
		GH_TRY(gh_cuda_pool_keep(&b.ctx[d]));
		b.pool_kept[d] = true;
	}

	/* the table that probes, finds and joins run against */
	if (op != GH_BENCH_BUILD && !GH_BENCH_AGGREGATES(op))
	{
		gh_xchg_side in[GH_MAX_DEVICES];
		gh_xchg_stats stats;
		int			ncols;

		GH_TRY(make_slices(&b, GH_BENCH_BUILD, n, in, &ncols));
		GH_TRY(gh_cuda_exchange(e, ncols, in, b.x, &stats));
		GH_TRY(gh_for_devices(e, all, n, build_range, &b));
	}

	for (int run = -1; run < reps; run++)
	{
		gh_xchg_side in[GH_MAX_DEVICES];
		gh_xchg_stats stats;
		int			ncols;
		double		t0,
					t1,
					longest = 0;

		if (gh_interrupted(e))
			return GH_ERR_CANCELLED;
		GH_TRY(make_slices(&b, op, n, in, &ncols));
		GH_TRY(sync_all(&b));
		t0 = wall_ms();
		for (int d = 0; d < ndev; d++)
		{
			GH_TRY(gh_cuda_enter(e, d, &b.ctx[d]));
			GH_CUDA_TRY(e, cudaEventRecord(b.start[d], b.ctx[d].d->stream));
		}
		GH_TRY(gh_cuda_exchange(e, ncols, in, b.x, &stats));
		for (int d = 0; d < ndev; d++)
		{
			GH_TRY(gh_cuda_enter(e, d, &b.ctx[d]));
			GH_CUDA_TRY(e, cudaEventRecord(b.xdone[d], b.ctx[d].d->stream));
		}
		GH_TRY(gh_for_devices(e, all, n, run_range, &b));
		t1 = wall_ms();

		out->check = 0;
		out->bytes_moved = 0;
		for (int d = 0; d < ndev; d++)
		{
			float		xms = 0,
						oms = 0;

			GH_TRY(gh_cuda_enter(e, d, &b.ctx[d]));
			GH_CUDA_TRY(e, cudaEventElapsedTime(&xms, b.start[d], b.xdone[d]));
			GH_CUDA_TRY(e, cudaEventElapsedTime(&oms, b.xdone[d], b.end[d]));
			longest = std::max(longest, (double) xms);
			if (run >= 0)
				dev_ms[d].push_back(oms);
			out->check += b.check[d];
			out->bytes_moved += b.bytes[d];
			out->dev[d].id = b.ctx[d].d->id;
			out->dev[d].keys = b.x[d].n;
			/* the build and probe inputs are consumed; the rest go now */
			for (int k = 0; k < GH_XCHG_MAX_COLS; k++)
				b.x[d].col[k].reset();
		}
		if (run >= 0)
		{
			total_ms.push_back(t1 - t0);
			xchg_ms.push_back(longest);
			xchg_gbs.push_back(longest > 0 ? (double) (stats.peer + stats.staged) / (longest * 1e6)
							   : 0);
		}
	}

	out->ms = median(total_ms);
	out->mkeys_per_s = out->ms > 0 ? (double) n / out->ms / 1000.0 : 0;
	out->exchange_ms = median(xchg_ms);
	out->exchange_gb_per_s = median(xchg_gbs);
	out->ndevices = ndev;
	for (int d = 0; d < ndev; d++)
	{
		out->dev[d].ms = median(dev_ms[d]);
		out->dev[d].mkeys_per_s = out->dev[d].ms > 0 ?
			(double) out->dev[d].keys / out->dev[d].ms / 1000.0 : 0;
	}
	return GH_OK;
}
