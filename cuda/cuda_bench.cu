/*-------------------------------------------------------------------------
 *
 * cuda_bench.cu
 *	  Kernel-level benchmarks of the CUDA backend (gh_bench) on one GPU;
 *	  on several GPUs see cuda_bench_multi.cu.
 *
 * Keys are made on the device and the operations run on device arrays
 * through the engine's device-level functions, timed with CUDA events around
 * the operation alone: one warm-up run, then the median of `reps` runs, with
 * a memory pool kept warm meanwhile.  The data (the same as the CPU
 * backend's) and the bytes each operation must move: cuda/README,
 * "Benchmarks".
 *
 *-------------------------------------------------------------------------
 */
#include <algorithm>
#include <memory>
#include <vector>

#include "cuda_bench.cuh"

/* keys[i] = gh_hash64(first + i, BENCH_SEED); rows[i] = first + i (if rows) */
__global__ void
make_distinct_keys(uint64_t *__restrict__ keys, uint64_t *__restrict__ rows,
				   size_t n, uint64_t first)
{
	GH_GRID_STRIDE(i, n)
	{
		keys[i] = gh_hash64(first + i, BENCH_SEED);
		if (rows != nullptr)
			rows[i] = first + i;
	}
}

/* keys[i] = the build key at a random position in [0, nbuild), for probe
 * key number first + i */
__global__ void
make_present_keys(uint64_t *__restrict__ keys, size_t n, size_t nbuild,
				  uint64_t first)
{
	GH_GRID_STRIDE(i, n)
		keys[i] = gh_hash64(gh_range(gh_hash64(first + i, BENCH_POS_SEED), nbuild), BENCH_SEED);
}

/* rows first + i, ndistinct key values, random int64 values */
__global__ void
make_group_keys(uint64_t *__restrict__ keys, int64_t *__restrict__ values,
				size_t n, size_t ndistinct, uint64_t first)
{
	GH_GRID_STRIDE(i, n)
	{
		keys[i] = gh_hash64((first + i) % ndistinct, BENCH_SEED);
		values[i] = (int64_t) gh_hash64(first + i, BENCH_VAL_SEED);
	}
}

__global__ void
count_nonzero(const uint32_t *__restrict__ counts, size_t n, unsigned long long *hits)
{
	unsigned long long mine = 0;

	GH_GRID_STRIDE(i, n)
		mine += counts[i] != 0;
	mine = __reduce_add_sync(0xffffffffu, (unsigned) mine);
	if ((threadIdx.x & 31) == 0 && mine != 0)
		atomicAdd(hits, mine);
}

/* Events around one timed run, and the collected times. */
struct bench_timer
{
	cudaEvent_t start = nullptr;
	cudaEvent_t stop = nullptr;
	std::vector<float> ms;

	~bench_timer()
	{
		if (start != nullptr)
			(void) cudaEventDestroy(start);
		if (stop != nullptr)
			(void) cudaEventDestroy(stop);
	}
};

/* The warm pool, given back however the benchmark ends. */
struct pool_guard
{
	const gh_cuda_ctx *ctx;

	~pool_guard()
	{
		gh_cuda_pool_release(ctx);
	}
};

static gh_status
timer_begin(const gh_cuda_ctx *ctx, bench_timer *t)
{
	GH_CUDA_TRY(ctx->e, cudaEventRecord(t->start, ctx->d->stream));
	return GH_OK;
}

/* Record the run's time unless it was the warm-up (run < 0). */
static gh_status
timer_end(const gh_cuda_ctx *ctx, bench_timer *t, int run)
{
	float		ms = 0;

	GH_CUDA_TRY(ctx->e, cudaEventRecord(t->stop, ctx->d->stream));
	GH_CUDA_TRY(ctx->e, cudaEventSynchronize(t->stop));
	GH_CUDA_TRY(ctx->e, cudaEventElapsedTime(&ms, t->start, t->stop));
	if (run >= 0)
		t->ms.push_back(ms);
	return GH_OK;
}

static gh_status
make_build_input(const gh_cuda_ctx *ctx, size_t n, gh_dbuf<uint64_t> &keys,
				 gh_dbuf<uint64_t> &rows)
{
	GH_TRY(keys.alloc(ctx, n, "benchmark keys"));
	GH_TRY(rows.alloc(ctx, n, "benchmark rows"));
	make_distinct_keys<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
		keys.p, rows.p, n, 0);
	GH_CUDA_LAUNCHED(ctx->e, "make_distinct_keys");
	return GH_OK;
}

/* A table of the n benchmark keys. */
static gh_status
bench_table(const gh_cuda_ctx *ctx, gh_kind kind, size_t n, double load_factor,
			gh_cuda_part **part)
{
	gh_dbuf<uint64_t> keys,
				rows;

	GH_TRY(make_build_input(ctx, n, keys, rows));
	return gh_cuda_part_build(ctx, kind, keys, rows, n, load_factor, part);
}

size_t
gh_cuda_bench_table_bytes(const gh_cuda_part *p)
{
	if (p->kind == GH_KIND_BCHT)
		return 8 * p->bc.n + p->bc.slots.bytes() + p->bc.reach.bytes();
	return 16 * p->hg.n + p->hg.offsets.bytes();
}

static gh_status
bench_build(const gh_cuda_ctx *ctx, gh_kind kind, size_t n, int reps,
			double load_factor, bench_timer *timer, gh_bench_result *out)
{
	for (int run = -1; run < reps; run++)
	{
		gh_dbuf<uint64_t> keys,
					rows;
		gh_cuda_part *part = nullptr;
		gh_status	st;

		if (gh_interrupted(ctx->e))
			return GH_ERR_CANCELLED;
		GH_TRY(make_build_input(ctx, n, keys, rows));
		GH_TRY(timer_begin(ctx, timer));
		GH_TRY(gh_cuda_part_build(ctx, kind, keys, rows, n, load_factor, &part));
		st = timer_end(ctx, timer, run);
		if (st == GH_OK)
		{
			out->check = part->kind == GH_KIND_BCHT ? part->bc.ndistinct : part->hg.n;
			out->bytes_moved = 16 * (uint64_t) n + gh_cuda_bench_table_bytes(part);
		}
		delete part;
		GH_TRY(st);
	}
	return GH_OK;
}

/*
 * A join of n present probe keys, counting and writing all pairs: list
 * intersection for HashGraph, lookups for BCHT.
 */
static gh_status
bench_join(const gh_cuda_ctx *ctx, gh_kind kind, size_t n, int reps,
		   double load_factor, bench_timer *timer, gh_bench_result *out)
{
	gh_join_method method = GH_JOIN_INTERSECT;
	gh_dbuf<uint64_t> probe_keys;
	gh_dbuf<gh_pair> pairs;
	gh_cuda_part *raw = nullptr;
	std::unique_ptr<gh_cuda_part> part;

	GH_TRY(bench_table(ctx, kind, n, load_factor, &raw));
	part.reset(raw);
	GH_TRY(probe_keys.alloc(ctx, n, "benchmark probe keys"));
	make_present_keys<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
		probe_keys.p, n, n, 0);
	GH_CUDA_LAUNCHED(ctx->e, "make_present_keys");
	/* every probe key matches exactly one distinct build key */
	GH_TRY(pairs.alloc(ctx, n, "benchmark pairs"));
	for (int run = -1; run < reps; run++)
	{
		gh_cuda_probe pr;

		if (gh_interrupted(ctx->e))
			return GH_ERR_CANCELLED;
		GH_TRY(timer_begin(ctx, timer));
		GH_TRY(gh_cuda_probe_start(ctx, part.get(), probe_keys.p, nullptr, n, method, &pr));
		if (pr.total > pairs.count)
			return gh_fail(ctx->e, GH_ERR_INTERNAL, "benchmark join found %llu pairs for %zu keys",
						   (unsigned long long) pr.total, n);
		GH_TRY(gh_cuda_probe_pairs(ctx, &pr, 0, pr.total, pairs.p));
		GH_TRY(timer_end(ctx, timer, run));
		out->check = pr.total;
		out->bytes_moved = 8 * (uint64_t) n + 24 * pr.total;
	}
	return GH_OK;
}

/* n lookups (match counts per key) of present or absent keys */
static gh_status
bench_find(const gh_cuda_ctx *ctx, gh_bench_op op, gh_kind kind, size_t n,
		   int reps, double load_factor, bench_timer *timer,
		   gh_bench_result *out)
{
	gh_dbuf<uint64_t> probe_keys;
	gh_dbuf<uint32_t> counts;
	gh_cuda_part *raw = nullptr;
	std::unique_ptr<gh_cuda_part> part;
	unsigned long long *hits = (unsigned long long *) (ctx->d->scratch + SCRATCH_HITS);
	uint64_t	nhits = 0;

	GH_TRY(bench_table(ctx, kind, n, load_factor, &raw));
	part.reset(raw);
	GH_TRY(probe_keys.alloc(ctx, n, "benchmark probe keys"));
	GH_TRY(counts.alloc(ctx, n, "benchmark counts"));
	if (op == GH_BENCH_FIND_MISS)
		make_distinct_keys<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
			probe_keys.p, nullptr, n, n);
	else
		make_present_keys<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
			probe_keys.p, n, n, 0);
	GH_CUDA_LAUNCHED(ctx->e, "make benchmark probe keys");
	for (int run = -1; run < reps; run++)
	{
		if (gh_interrupted(ctx->e))
			return GH_ERR_CANCELLED;
		GH_TRY(timer_begin(ctx, timer));
		if (part->kind == GH_KIND_BCHT)
			GH_TRY(gh_bcht_count(ctx, &part->bc, probe_keys.p, n, nullptr, nullptr, counts.p));
		else
			GH_TRY(gh_hg_count(ctx, &part->hg, probe_keys.p, false, nullptr, n,
							   nullptr, nullptr, counts.p));
		GH_TRY(timer_end(ctx, timer, run));
	}
	GH_CUDA_TRY(ctx->e, cudaMemsetAsync(hits, 0, sizeof(uint64_t), ctx->d->stream));
	count_nonzero<<<gh_cuda_wide_grid(ctx, n, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
		counts.p, n, hits);
	GH_CUDA_LAUNCHED(ctx->e, "count_nonzero");
	GH_TRY(gh_cuda_read_scratch(ctx, SCRATCH_HITS, 1, &nhits));
	out->check = nhits;
	out->bytes_moved = 12 * (uint64_t) n;
	return GH_OK;
}

static gh_status
bench_aggregate(const gh_cuda_ctx *ctx, gh_bench_op op, size_t n, int reps,
				bench_timer *timer, gh_bench_result *out)
{
	gh_dbuf<uint64_t> keys;
	gh_dbuf<int64_t> values;
	size_t		ndistinct = gh_bench_groups(op, n);

	GH_TRY(keys.alloc(ctx, n, "benchmark keys"));
	GH_TRY(values.alloc(ctx, n, "benchmark values"));
	make_group_keys<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx->d->stream>>>(
		keys.p, values.p, n, ndistinct, 0);
	GH_CUDA_LAUNCHED(ctx->e, "make_group_keys");
	for (int run = -1; run < reps; run++)
	{
		uint64_t	ngroups = 0;

		if (gh_interrupted(ctx->e))
			return GH_ERR_CANCELLED;
		GH_TRY(timer_begin(ctx, timer));
		GH_TRY(gh_cuda_aggregate_device_bench(ctx, keys.p, values.p, n, &ngroups));
		GH_TRY(timer_end(ctx, timer, run));
		out->check = ngroups;
		out->bytes_moved = 16 * (uint64_t) n + 48 * ngroups;
	}
	return GH_OK;
}

gh_status
gh_cuda_bench(gh_engine *e, gh_bench_op op, gh_kind kind, size_t n, int reps,
			  double load_factor, gh_bench_result *out)
{
	gh_cuda_ctx ctx;
	bench_timer timer;
	gh_status	st;

	if (kind != GH_KIND_BCHT)
		kind = GH_KIND_HASHGRAPH;
	if (!(load_factor > 0.0))
		load_factor = e->opt.bcht_load_factor > 0 ? e->opt.bcht_load_factor : GH_BCHT_DEFAULT_LOAD;
	if (e->opt.ndevices > 1)
		return gh_cuda_bench_multi(e, op, kind, n, reps, load_factor, out);
	GH_TRY(gh_cuda_enter(e, 0, &ctx));
	GH_CUDA_TRY(e, cudaEventCreate(&timer.start));
	GH_CUDA_TRY(e, cudaEventCreate(&timer.stop));
	try
	{
		timer.ms.reserve(reps);
	}
	catch (...)
	{
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for benchmark times");
	}
	GH_TRY(gh_cuda_pool_keep(&ctx));
	{
		pool_guard	guard = {&ctx};

		switch (op)
		{
			case GH_BENCH_BUILD:
				st = bench_build(&ctx, kind, n, reps, load_factor, &timer, out);
				break;
			case GH_BENCH_JOIN:
				st = bench_join(&ctx, kind, n, reps, load_factor, &timer, out);
				break;
			case GH_BENCH_PROBE:
			case GH_BENCH_FIND_HIT:
			case GH_BENCH_FIND_MISS:
				st = bench_find(&ctx, op, kind, n, reps, load_factor, &timer, out);
				break;
			case GH_BENCH_AGGREGATE:
			case GH_BENCH_AGGREGATE_FEW:
				st = bench_aggregate(&ctx, op, n, reps, &timer, out);
				break;
			default:
				st = gh_fail(e, GH_ERR_INVALID, "unknown benchmark %d", (int) op);
				break;
		}
	}
	if (st != GH_OK)
		return st;
	if (timer.ms.empty())
		return gh_fail(e, GH_ERR_INTERNAL, "benchmark recorded no runs");
	std::sort(timer.ms.begin(), timer.ms.end());
	out->ms = timer.ms[timer.ms.size() / 2];
	out->mkeys_per_s = out->ms > 0 ? (double) n / out->ms / 1000.0 : 0;
	out->ndevices = 1;
	out->dev[0].id = ctx.d->id;
	out->dev[0].keys = n;
	out->dev[0].ms = out->ms;
	out->dev[0].mkeys_per_s = out->mkeys_per_s;
	return GH_OK;
}
