/*-------------------------------------------------------------------------
 *
 * cuda_exchange.cu
 *	  The all-to-all exchange between an engine's GPUs: every device sends
 *	  every other device the rows of its hash range (Tripathy and Green's
 *	  multi-GPU HashGraph).
 *
 * INTERFACE ROUTINES
 *		gh_cuda_exchange		slices in, hash ranges out (cuda_exchange.cuh)
 *
 * Four steps, each issued to every device before the next: count (rows per
 * destination, to pinned host memory), place (the host's one wait, receive
 * buffers allocated), scatter (a radix sort on the destination bits, then
 * one kernel storing every row into its destination, in the peer's memory
 * where peer access is enabled, else into a send buffer), collect (send
 * buffers copied in with cudaMemcpyPeerAsync).  Every stream is synchronised
 * before anything is freed.  See cuda/README, "Several GPUs".
 *
 *-------------------------------------------------------------------------
 */
#include <cstring>

#include <cub/cub.cuh>

#include "cuda_exchange.cuh"

/* dest[i]: the hash range of keys[i]; idx[i] = i; counts[d] += rows of d */
__global__ void
assign_destinations(const uint64_t *__restrict__ keys, size_t n, uint32_t ndev,
					uint32_t *__restrict__ dest, uint32_t *__restrict__ idx,
					unsigned long long *__restrict__ counts)
{
	__shared__ unsigned int local[GH_MAX_DEVICES];

	if (threadIdx.x < GH_MAX_DEVICES)
		local[threadIdx.x] = 0;
	__syncthreads();
	GH_GRID_STRIDE(i, n)
	{
		uint32_t	d = gh_partition_of(keys[i], ndev);

		dest[i] = d;
		idx[i] = (uint32_t) i;
		atomicAdd(&local[d], 1u);
	}
	__syncthreads();
	if (threadIdx.x < ndev && local[threadIdx.x] != 0)
		atomicAdd(&counts[threadIdx.x], (unsigned long long) local[threadIdx.x]);
}

/*
 * Where one source's rows go: sorted positions [start[d], start[d + 1]) are
 * destination d's, written from to[c][d] on (its receive buffer or the send
 * buffer).
 */
struct scatter_plan
{
	uint32_t	ndev;
	int			ncols;
	unsigned long long start[GH_MAX_DEVICES + 1];
	const uint64_t *from[GH_XCHG_MAX_COLS];
	uint64_t   *to[GH_XCHG_MAX_COLS][GH_MAX_DEVICES];
};

/* every column of sorted row i (slice row order[i]) to its destination */
__global__ void
scatter_rows(const uint32_t *__restrict__ order, size_t n, scatter_plan plan)
{
	GH_GRID_STRIDE(i, n)
	{
		uint32_t	d = 0;
		uint32_t	r = order[i];

		while (d + 1 < plan.ndev && i >= plan.start[d + 1])
			d++;
		for (int c = 0; c < plan.ncols; c++)
			plan.to[c][d][i - plan.start[d]] = plan.from[c][r];
	}
}

/* Everything one exchange holds, released however it ends. */
struct xchg_work
{
	gh_engine  *e;
	gh_cuda_state *state;
	int			ndev;
	bool		done = false;
	bool		direct[GH_MAX_DEVICES][GH_MAX_DEVICES] = {};	/* [source][dest] */
	gh_dbuf<unsigned long long> dcounts[GH_MAX_DEVICES];
	gh_dbuf<uint32_t> dest[GH_MAX_DEVICES],
				order[GH_MAX_DEVICES];
	cudaEvent_t counted[GH_MAX_DEVICES] = {};	/* source: counts in pinned memory */
	cudaEvent_t placed[GH_MAX_DEVICES] = {};	/* destination: buffers allocated */
	cudaEvent_t scattered[GH_MAX_DEVICES] = {}; /* source: every row written */
	gh_dbuf<uint64_t> send[GH_MAX_DEVICES];	/* source: rows for unreachable dests */
	uint64_t	counts[GH_MAX_DEVICES][GH_MAX_DEVICES] = {};	/* [source][dest] */
	size_t		recv_off[GH_MAX_DEVICES][GH_MAX_DEVICES] = {};	/* [source][dest] */
	size_t		stage_off[GH_MAX_DEVICES][GH_MAX_DEVICES] = {};

	xchg_work(gh_engine *engine) :
		e(engine), state((gh_cuda_state *) engine->bstate), ndev(state->ndev)
	{
		for (int s = 0; s < ndev; s++)
			for (int d = 0; d < ndev; d++)
				direct[s][d] = s == d || (state->peer[s][d] && !engine->stage_exchange);
	}
	xchg_work(const xchg_work &) = delete;
	xchg_work &operator=(const xchg_work &) = delete;

	~xchg_work()
	{
		bool		staging = false;

		for (int d = 0; d < ndev; d++)
			staging |= send[d].p != nullptr;
		/* nothing may be freed under a store or copy still in flight */
		if (!done || staging)
			for (int d = 0; d < ndev; d++)
				if (cudaSetDevice(state->dev[d].id) == cudaSuccess)
					(void) cudaStreamSynchronize(state->dev[d].stream);
		for (int d = 0; d < ndev; d++)
		{
			if (cudaSetDevice(state->dev[d].id) != cudaSuccess)
				continue;
			if (counted[d] != nullptr)
				(void) cudaEventDestroy(counted[d]);
			if (placed[d] != nullptr)
				(void) cudaEventDestroy(placed[d]);
			if (scattered[d] != nullptr)
				(void) cudaEventDestroy(scattered[d]);
		}
		(void) cudaGetLastError();
		/* the members' device buffers are freed on their streams next */
	}
};

/* Step 1 on source s: every row's destination, and the counts to the host. */
static gh_status
count_slice(xchg_work *w, int s, gh_xchg_side *in)
{
	gh_engine  *e = w->e;
	gh_cuda_ctx ctx;
	cudaStream_t st;
	size_t		n = in->n;

	GH_TRY(gh_cuda_enter(e, s, &ctx));
	st = ctx.d->stream;
	if (n >= (size_t) UINT32_MAX)
		return gh_fail(e, GH_ERR_INTERNAL, "a slice of %zu rows is too large to exchange", n);
	GH_TRY(w->dcounts[s].alloc(&ctx, w->ndev, "exchange counts"));
	GH_CUDA_TRY(e, cudaMemsetAsync(w->dcounts[s].p, 0, w->dcounts[s].bytes(), st));
	if (n > 0)
	{
		GH_TRY(w->dest[s].alloc(&ctx, n, "exchange destinations"));
		GH_TRY(w->order[s].alloc(&ctx, n, "exchange order"));
		assign_destinations<<<gh_cuda_wide_grid(&ctx, n, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0, st>>>(
			in->col[0].p, n, (uint32_t) w->ndev, w->dest[s].p, w->order[s].p, w->dcounts[s].p);
		GH_CUDA_LAUNCHED(e, "assign_destinations");
	}
	GH_CUDA_TRY(e, cudaMemcpyAsync(ctx.d->pinned + GH_CUDA_PINNED_XCHG, w->dcounts[s].p,
								   w->ndev * sizeof(uint64_t), cudaMemcpyDeviceToHost, st));
	GH_CUDA_TRY(e, cudaEventRecord(w->counted[s], st));
	return GH_OK;
}

/* Step 2 on destination d: its receive buffers. */
static gh_status
place_range(xchg_work *w, int d, int ncols, gh_xchg_side *out)
{
	gh_cuda_ctx ctx;
	size_t		total = 0;

	GH_TRY(gh_cuda_enter(w->e, d, &ctx));
	for (int s = 0; s < w->ndev; s++)
	{
		w->recv_off[s][d] = total;
		total += w->counts[s][d];
	}
	for (int c = 0; c < ncols; c++)
		GH_TRY(out->col[c].alloc(&ctx, total, "exchange receive buffer"));
	out->n = total;
	GH_CUDA_TRY(w->e, cudaEventRecord(w->placed[d], ctx.d->stream));
	return GH_OK;
}

/* Step 2 on source s: a send buffer for the destinations it cannot reach. */
static gh_status
place_staging(xchg_work *w, int s, int ncols, gh_xchg_stats *stats)
{
	gh_cuda_ctx ctx;
	size_t		words = 0;

	for (int d = 0; d < w->ndev; d++)
		if (!w->direct[s][d])
		{
			w->stage_off[s][d] = words;
			words += w->counts[s][d] * ncols;
		}
	if (words == 0)
		return GH_OK;
	GH_TRY(gh_cuda_enter(w->e, s, &ctx));
	GH_TRY(w->send[s].alloc(&ctx, words, "exchange send buffer"));
	stats->staged += words * sizeof(uint64_t);
	return GH_OK;
}

/* Step 3 on source s: sort by destination and write every row to its place. */
static gh_status
scatter_slice(xchg_work *w, int s, int ncols, gh_xchg_side *in, gh_xchg_side *out,
			  gh_xchg_stats *stats)
{
	gh_engine  *e = w->e;
	gh_cuda_ctx ctx;
	cudaStream_t st;
	size_t		n = in->n;
	const uint32_t *order = w->order[s].p;
	int			end_bit = 0;
	scatter_plan plan;
	gh_dbuf<uint32_t> dest_alt,
				order_alt;
	gh_dbuf<uint8_t> temp;

	GH_TRY(gh_cuda_enter(e, s, &ctx));
	st = ctx.d->stream;
	memset(&plan, 0, sizeof(plan));
	plan.ndev = (uint32_t) w->ndev;
	plan.ncols = ncols;
	for (int d = 0; d < w->ndev; d++)
	{
		size_t		bytes = w->counts[s][d] * ncols * sizeof(uint64_t);

		plan.start[d + 1] = plan.start[d] + w->counts[s][d];
		for (int c = 0; c < ncols; c++)
			plan.to[c][d] = w->direct[s][d] ?
				out[d].col[c].p + w->recv_off[s][d] :
				w->send[s].p + w->stage_off[s][d] + c * w->counts[s][d];
		if (d == s)
			stats->local += bytes;
		else if (w->direct[s][d])
			stats->peer += bytes;
		/* the destination's buffers exist before anything is written there */
		if (w->direct[s][d] && d != s && w->counts[s][d] > 0)
			GH_CUDA_TRY(e, cudaStreamWaitEvent(st, w->placed[d], 0));
	}
	for (int c = 0; c < ncols; c++)
		plan.from[c] = in->col[c].p;
	if (n > 0)
	{
		while ((1 << end_bit) < w->ndev)
			end_bit++;
		if (end_bit > 0)
		{
			size_t		temp_bytes = 0;

			GH_TRY(dest_alt.alloc(&ctx, n, "exchange sort buffer"));
			GH_TRY(order_alt.alloc(&ctx, n, "exchange sort buffer"));
			{
				cub::DoubleBuffer<uint32_t> dk(w->dest[s].p, dest_alt.p);
				cub::DoubleBuffer<uint32_t> dv(w->order[s].p, order_alt.p);

				GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, dk, dv,
															   (int64_t) n, 0, end_bit, st));
				GH_TRY(temp.alloc(&ctx, temp_bytes, "radix sort temporary storage"));
				GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(temp.p, temp_bytes, dk, dv,
															   (int64_t) n, 0, end_bit, st));
				order = dv.Current();
			}
		}
		scatter_rows<<<gh_cuda_wide_grid(&ctx, n, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0, st>>>(
			order, n, plan);
		GH_CUDA_LAUNCHED(e, "scatter_rows");
	}
	GH_CUDA_TRY(e, cudaEventRecord(w->scattered[s], st));
	/* the slice and the sort buffers are freed on the stream, after the scatter */
	for (int c = 0; c < GH_XCHG_MAX_COLS; c++)
		in->col[c].reset();
	in->n = 0;
	w->dest[s].reset();
	w->order[s].reset();
	w->dcounts[s].reset();
	return GH_OK;
}

/* Step 4 on destination d: wait for every source, copy send buffers' rows in. */
static gh_status
collect_range(xchg_work *w, int d, int ncols, gh_xchg_side *out)
{
	gh_engine  *e = w->e;
	gh_cuda_ctx ctx;
	cudaStream_t st;

	GH_TRY(gh_cuda_enter(e, d, &ctx));
	st = ctx.d->stream;
	for (int s = 0; s < w->ndev; s++)
	{
		size_t		cnt = w->counts[s][d];

		if (s == d || cnt == 0)
			continue;
		GH_CUDA_TRY(e, cudaStreamWaitEvent(st, w->scattered[s], 0));
		if (w->direct[s][d])
			continue;
		for (int c = 0; c < ncols; c++)
			GH_CUDA_TRY(e, cudaMemcpyPeerAsync(out->col[c].p + w->recv_off[s][d],
											   w->state->dev[d].id,
											   w->send[s].p + w->stage_off[s][d] + c * cnt,
											   w->state->dev[s].id, cnt * sizeof(uint64_t), st));
	}
	return GH_OK;
}

gh_status
gh_cuda_exchange(gh_engine *e, int ncols, gh_xchg_side *in, gh_xchg_side *out,
				 gh_xchg_stats *stats)
{
	gh_cuda_state *state = (gh_cuda_state *) e->bstate;
	int			ndev = state->ndev;
	xchg_work	w(e);

	memset(stats, 0, sizeof(*stats));
	if (ncols < 1 || ncols > GH_XCHG_MAX_COLS)
		return gh_fail(e, GH_ERR_INTERNAL, "an exchange of %d columns", ncols);
	for (int d = 0; d < ndev; d++)
	{
		gh_cuda_ctx ctx;

		GH_TRY(gh_cuda_enter(e, d, &ctx));
		GH_CUDA_TRY(e, cudaEventCreateWithFlags(&w.counted[d], cudaEventDisableTiming));
		GH_CUDA_TRY(e, cudaEventCreateWithFlags(&w.placed[d], cudaEventDisableTiming));
		GH_CUDA_TRY(e, cudaEventCreateWithFlags(&w.scattered[d], cudaEventDisableTiming));
	}
	for (int s = 0; s < ndev; s++)
		GH_TRY(count_slice(&w, s, &in[s]));
	for (int s = 0; s < ndev; s++)
	{
		size_t		sum = 0;

		GH_CUDA_TRY(e, cudaEventSynchronize(w.counted[s]));
		memcpy(w.counts[s], state->dev[s].pinned + GH_CUDA_PINNED_XCHG, ndev * sizeof(uint64_t));
		for (int d = 0; d < ndev; d++)
			sum += w.counts[s][d];
		if (sum != in[s].n)
			return gh_fail(e, GH_ERR_INTERNAL, "exchange counted %zu of %zu rows on device %d",
						   sum, in[s].n, state->dev[s].id);
	}
	for (int d = 0; d < ndev; d++)
		GH_TRY(place_range(&w, d, ncols, &out[d]));
	for (int s = 0; s < ndev; s++)
		GH_TRY(place_staging(&w, s, ncols, stats));
	for (int s = 0; s < ndev; s++)
		GH_TRY(scatter_slice(&w, s, ncols, &in[s], out, stats));
	for (int d = 0; d < ndev; d++)
		GH_TRY(collect_range(&w, d, ncols, &out[d]));
	w.done = true;
	return GH_OK;
}
