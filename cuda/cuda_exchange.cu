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
 * Four steps, each issued to every device before the next begins:
 *
 *	1. order	each source gives every row its destination (the hash range
 *				of its key, counted per destination in shared memory),
 *				sorts (destination, row index) pairs with CUB's radix sort on
 *				the destination's few bits (stable: rows keep their slice's
 *				order) and gathers each column into a send buffer, now
 *				destination after destination; the counts go to pinned host
 *				memory and an event marks the source ready.
 *	2. counts	the host waits for the counts (the one wait of the exchange:
 *				receive buffers are sized by them).
 *	3. stage	a source whose destination cannot read its memory copies
 *				that destination's rows into pinned host memory.
 *	4. pull		each destination allocates its receive buffers and, on its
 *				own stream, waits for each source's event and copies the
 *				source's block: cudaMemcpyPeerAsync over NVLink or PCIe where
 *				peer access is enabled, from the pinned copy where not.
 *
 * A source frees its send buffers on its own stream after waiting for the
 * events that mark every destination's copies done, so nobody waits on the
 * host for that.  Transfers between different pairs of devices run at once;
 * a destination's copies from its several sources are ordered on its stream.
 *
 * On failure every device's stream is synchronised before anything is
 * freed, so no copy in flight reads freed memory; the caller's buffers are
 * freed by their owners as usual.
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

/* dst[i] = src[idx[i]] */
__global__ void
gather_by_index(const uint64_t *__restrict__ src, const uint32_t *__restrict__ idx,
				size_t n, uint64_t *__restrict__ dst)
{
	GH_GRID_STRIDE(i, n)
		dst[i] = src[idx[i]];
}

/* Everything one exchange holds, released however it ends. */
struct xchg_work
{
	gh_engine  *e;
	gh_cuda_state *state;
	bool		done = false;
	gh_xchg_side send[GH_MAX_DEVICES];
	gh_dbuf<unsigned long long> dcounts[GH_MAX_DEVICES];
	cudaEvent_t ready[GH_MAX_DEVICES] = {};		/* source: send buffers made */
	cudaEvent_t staged[GH_MAX_DEVICES] = {};	/* source: pinned copies made */
	cudaEvent_t received[GH_MAX_DEVICES] = {};	/* destination: copies done */
	uint64_t   *pinned[GH_MAX_DEVICES] = {};	/* source: staging */
	uint64_t	counts[GH_MAX_DEVICES][GH_MAX_DEVICES] = {};	/* [source][dest] */
	size_t		send_off[GH_MAX_DEVICES][GH_MAX_DEVICES] = {};
	size_t		stage_off[GH_MAX_DEVICES][GH_MAX_DEVICES] = {};

	xchg_work(gh_engine *engine) : e(engine), state((gh_cuda_state *) engine->bstate)
	{
	}
	xchg_work(const xchg_work &) = delete;
	xchg_work &operator=(const xchg_work &) = delete;

	~xchg_work()
	{
		bool		staging = false;

		for (int d = 0; d < state->ndev; d++)
			staging |= pinned[d] != nullptr;
		/* nothing may be freed under a copy still in flight */
		if (!done || staging)
			for (int d = 0; d < state->ndev; d++)
				if (cudaSetDevice(state->dev[d].id) == cudaSuccess)
					(void) cudaStreamSynchronize(state->dev[d].stream);
		for (int d = 0; d < state->ndev; d++)
		{
			if (pinned[d] != nullptr)
				(void) cudaFreeHost(pinned[d]);
			if (cudaSetDevice(state->dev[d].id) != cudaSuccess)
				continue;
			if (ready[d] != nullptr)
				(void) cudaEventDestroy(ready[d]);
			if (staged[d] != nullptr)
				(void) cudaEventDestroy(staged[d]);
			if (received[d] != nullptr)
				(void) cudaEventDestroy(received[d]);
		}
		(void) cudaGetLastError();
		/* the members' device buffers are freed on their streams next */
	}
};

/* Step 1 on source s: order its slice by destination into send buffers. */
static gh_status
order_slice(xchg_work *w, int s, int ncols, gh_xchg_side *in)
{
	gh_engine  *e = w->e;
	gh_cuda_ctx ctx;
	cudaStream_t st;
	int			ndev = w->state->ndev;
	size_t		n = in->n;
	gh_dbuf<uint32_t> dest,
				dest_alt,
				idx,
				idx_alt;
	gh_dbuf<uint8_t> temp;

	GH_TRY(gh_cuda_enter(e, s, &ctx));
	st = ctx.d->stream;
	if (n >= (size_t) UINT32_MAX)
		return gh_fail(e, GH_ERR_INTERNAL, "a slice of %zu rows is too large to exchange", n);
	GH_TRY(w->dcounts[s].alloc(&ctx, ndev, "exchange counts"));
	GH_CUDA_TRY(e, cudaMemsetAsync(w->dcounts[s].p, 0, w->dcounts[s].bytes(), st));
	for (int c = 0; c < ncols; c++)
		GH_TRY(w->send[s].col[c].alloc(&ctx, n, "exchange send buffer"));
	w->send[s].n = n;
	if (n > 0)
	{
		const uint32_t *order = nullptr;
		int			end_bit = 0;

		GH_TRY(dest.alloc(&ctx, n, "exchange destinations"));
		GH_TRY(idx.alloc(&ctx, n, "exchange order"));
		assign_destinations<<<gh_cuda_wide_grid(&ctx, n, GH_CUDA_BLOCK, 8), GH_CUDA_BLOCK, 0, st>>>(
			in->col[0].p, n, (uint32_t) ndev, dest.p, idx.p, w->dcounts[s].p);
		GH_CUDA_LAUNCHED(e, "assign_destinations");
		order = idx.p;
		while ((1 << end_bit) < ndev)
			end_bit++;
		if (end_bit > 0)
		{
			size_t		temp_bytes = 0;

			GH_TRY(dest_alt.alloc(&ctx, n, "exchange sort buffer"));
			GH_TRY(idx_alt.alloc(&ctx, n, "exchange sort buffer"));
			{
				cub::DoubleBuffer<uint32_t> dk(dest.p, dest_alt.p);
				cub::DoubleBuffer<uint32_t> dv(idx.p, idx_alt.p);

				GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, dk, dv,
															   (int64_t) n, 0, end_bit, st));
				GH_TRY(temp.alloc(&ctx, temp_bytes, "radix sort temporary storage"));
				GH_CUDA_TRY(e, cub::DeviceRadixSort::SortPairs(temp.p, temp_bytes, dk, dv,
															   (int64_t) n, 0, end_bit, st));
				order = dv.Current();
			}
		}
		for (int c = 0; c < ncols; c++)
		{
			gather_by_index<<<gh_cuda_grid(n, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, st>>>(
				in->col[c].p, order, n, w->send[s].col[c].p);
			GH_CUDA_LAUNCHED(e, "gather_by_index");
		}
	}
	/* the slice and the sort buffers are freed on the stream, after the gathers */
	for (int c = 0; c < GH_XCHG_MAX_COLS; c++)
		in->col[c].reset();
	in->n = 0;
	GH_CUDA_TRY(e, cudaMemcpyAsync(ctx.d->pinned + GH_CUDA_PINNED_XCHG, w->dcounts[s].p,
								   ndev * sizeof(uint64_t), cudaMemcpyDeviceToHost, st));
	GH_CUDA_TRY(e, cudaEventRecord(w->ready[s], st));
	return GH_OK;
}

/* Step 3 on source s: pinned copies for the destinations that cannot read it. */
static gh_status
stage_slice(xchg_work *w, int s, int ncols, gh_xchg_stats *stats)
{
	gh_engine  *e = w->e;
	gh_cuda_ctx ctx;
	int			ndev = w->state->ndev;
	size_t		words = 0;

	for (int d = 0; d < ndev; d++)
		if (d != s && !w->state->peer[d][s])
		{
			w->stage_off[s][d] = words;
			words += w->counts[s][d] * ncols;
		}
	if (words == 0)
		return GH_OK;
	GH_TRY(gh_cuda_enter(e, s, &ctx));
	GH_CUDA_TRY(e, cudaMallocHost(&w->pinned[s], words * sizeof(uint64_t)));
	for (int d = 0; d < ndev; d++)
	{
		size_t		cnt = w->counts[s][d];

		if (d == s || w->state->peer[d][s] || cnt == 0)
			continue;
		for (int c = 0; c < ncols; c++)
			GH_CUDA_TRY(e, cudaMemcpyAsync(w->pinned[s] + w->stage_off[s][d] + c * cnt,
										   w->send[s].col[c].p + w->send_off[s][d],
										   cnt * sizeof(uint64_t), cudaMemcpyDeviceToHost,
										   ctx.d->stream));
		stats->staged += cnt * ncols * sizeof(uint64_t);
	}
	GH_CUDA_TRY(e, cudaEventRecord(w->staged[s], ctx.d->stream));
	return GH_OK;
}

/* Step 4 on destination d: receive every source's rows of range d. */
static gh_status
pull_range(xchg_work *w, int d, int ncols, gh_xchg_side *out, gh_xchg_stats *stats)
{
	gh_engine  *e = w->e;
	gh_cuda_ctx ctx;
	cudaStream_t st;
	int			ndev = w->state->ndev;
	size_t		total = 0,
				at = 0;

	GH_TRY(gh_cuda_enter(e, d, &ctx));
	st = ctx.d->stream;
	for (int s = 0; s < ndev; s++)
		total += w->counts[s][d];
	for (int c = 0; c < ncols; c++)
		GH_TRY(out->col[c].alloc(&ctx, total, "exchange receive buffer"));
	out->n = total;
	for (int s = 0; s < ndev; s++)
	{
		size_t		cnt = w->counts[s][d];
		size_t		bytes = cnt * sizeof(uint64_t);

		if (cnt == 0)
			continue;
		if (s == d)
		{
			for (int c = 0; c < ncols; c++)
				GH_CUDA_TRY(e, cudaMemcpyAsync(out->col[c].p + at,
											   w->send[s].col[c].p + w->send_off[s][d], bytes,
											   cudaMemcpyDeviceToDevice, st));
			stats->local += bytes * ncols;
		}
		else if (w->state->peer[d][s])
		{
			GH_CUDA_TRY(e, cudaStreamWaitEvent(st, w->ready[s], 0));
			for (int c = 0; c < ncols; c++)
				GH_CUDA_TRY(e, cudaMemcpyPeerAsync(out->col[c].p + at, w->state->dev[d].id,
												   w->send[s].col[c].p + w->send_off[s][d],
												   w->state->dev[s].id, bytes, st));
			stats->peer += bytes * ncols;
		}
		else
		{
			GH_CUDA_TRY(e, cudaStreamWaitEvent(st, w->staged[s], 0));
			for (int c = 0; c < ncols; c++)
				GH_CUDA_TRY(e, cudaMemcpyAsync(out->col[c].p + at,
											   w->pinned[s] + w->stage_off[s][d] + c * cnt,
											   bytes, cudaMemcpyHostToDevice, st));
		}
		at += cnt;
	}
	GH_CUDA_TRY(e, cudaEventRecord(w->received[d], st));
	return GH_OK;
}

/* Free source s's send buffers once every destination has its rows. */
static gh_status
release_slice(xchg_work *w, int s)
{
	gh_engine  *e = w->e;
	gh_cuda_ctx ctx;

	GH_TRY(gh_cuda_enter(e, s, &ctx));
	for (int d = 0; d < w->state->ndev; d++)
		if (d != s && w->counts[s][d] > 0 && w->state->peer[d][s])
			GH_CUDA_TRY(e, cudaStreamWaitEvent(ctx.d->stream, w->received[d], 0));
	for (int c = 0; c < GH_XCHG_MAX_COLS; c++)
		w->send[s].col[c].reset();
	w->dcounts[s].reset();
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
		GH_CUDA_TRY(e, cudaEventCreateWithFlags(&w.ready[d], cudaEventDisableTiming));
		GH_CUDA_TRY(e, cudaEventCreateWithFlags(&w.staged[d], cudaEventDisableTiming));
		GH_CUDA_TRY(e, cudaEventCreateWithFlags(&w.received[d], cudaEventDisableTiming));
	}
	for (int s = 0; s < ndev; s++)
		GH_TRY(order_slice(&w, s, ncols, &in[s]));
	for (int s = 0; s < ndev; s++)
	{
		size_t		off = 0;

		GH_CUDA_TRY(e, cudaEventSynchronize(w.ready[s]));
		memcpy(w.counts[s], state->dev[s].pinned + GH_CUDA_PINNED_XCHG, ndev * sizeof(uint64_t));
		for (int d = 0; d < ndev; d++)
		{
			w.send_off[s][d] = off;
			off += w.counts[s][d];
		}
		if (off != w.send[s].n)
			return gh_fail(e, GH_ERR_INTERNAL, "exchange counted %zu of %zu rows on device %d",
						   off, w.send[s].n, state->dev[s].id);
	}
	for (int s = 0; s < ndev; s++)
		GH_TRY(stage_slice(&w, s, ncols, stats));
	for (int d = 0; d < ndev; d++)
		GH_TRY(pull_range(&w, d, ncols, &out[d], stats));
	for (int s = 0; s < ndev; s++)
		GH_TRY(release_slice(&w, s));
	w.done = true;
	return GH_OK;
}
