/*-------------------------------------------------------------------------
 *
 * cuda_backend.cu
 *	  The CUDA backend's operations table: opening the devices, moving
 *	  host arrays to and from them, and dispatching to the tables.
 *
 * INTERFACE ROUTINES
 *		gh_cuda_ops				the backend (see backend.h)
 *		gh_cuda_list_devices	the GPUs this process can see
 *
 * Each engine device gets one non-blocking stream; all work of the engine on
 * that device is ordered on it, so a callback only synchronises where the
 * host needs a result (a size, a table's readiness, output arrays).  The
 * callbacks take pageable host arrays: they stage inputs into device
 * buffers, call the device-level operations of cuda_tables.cuh, and copy
 * results back.  A build synchronises before returning, so a fault in its
 * kernels is reported by the build and not by a later call.
 *
 *-------------------------------------------------------------------------
 */
#include <cstdio>
#include <cstring>
#include <new>

#include "cuda_tables.cuh"

/* probe_write stages at most this many pairs on the device at a time */
#define PROBE_WRITE_CHUNK ((size_t) 1 << 25)

/* ---- errors, devices, memory ---- */

gh_status
gh_cuda_error(gh_engine *e, cudaError_t err, const char *what)
{
	gh_status	st = err == cudaErrorMemoryAllocation ? GH_ERR_DEVICE_NOMEM : GH_ERR_DEVICE;

	/* clear a non-sticky error so that later launch checks do not see it */
	(void) cudaGetLastError();
	return gh_fail(e, st, "%s: %s", what, cudaGetErrorString(err));
}

gh_status
gh_cuda_enter(gh_engine *e, int dev, gh_cuda_ctx *ctx)
{
	gh_cuda_state *state = (gh_cuda_state *) e->bstate;

	if (state == nullptr || dev < 0 || dev >= state->ndev)
		return gh_fail(e, GH_ERR_INTERNAL, "device index %d out of range", dev);
	ctx->e = e;
	ctx->d = &state->dev[dev];
	ctx->dev = dev;
	GH_CUDA_TRY(e, cudaSetDevice(ctx->d->id));
	return GH_OK;
}

gh_status
gh_cuda_alloc(const gh_cuda_ctx *ctx, void **p, size_t bytes, const char *what)
{
	cudaError_t err;

	*p = nullptr;
	if (bytes == 0)
		return GH_OK;
	if (gh_injected_failure(ctx->e, ctx->dev))
		return ctx->e->inject_status;
	if (ctx->d->async_alloc)
		err = cudaMallocAsync(p, bytes, ctx->d->stream);
	else
		err = cudaMalloc(p, bytes);
	if (err != cudaSuccess)
	{
		gh_status	st = err == cudaErrorMemoryAllocation ? GH_ERR_DEVICE_NOMEM : GH_ERR_DEVICE;

		(void) cudaGetLastError();
		*p = nullptr;
		return gh_fail(ctx->e, st, "could not allocate %zu bytes of device memory for %s: %s",
					   bytes, what, cudaGetErrorString(err));
	}
	gh_account(ctx->e, (long long) bytes);
	return GH_OK;
}

void
gh_cuda_free(const gh_cuda_ctx *ctx, void *p, size_t bytes)
{
	if (p == nullptr)
		return;
	/* a free cannot report failure; a failing device shows at the next call */
	(void) cudaSetDevice(ctx->d->id);
	if (ctx->d->async_alloc)
		(void) cudaFreeAsync(p, ctx->d->stream);
	else
		(void) cudaFree(p);
	gh_account(ctx->e, -(long long) bytes);
}

gh_status
gh_cuda_sync(const gh_cuda_ctx *ctx)
{
	GH_CUDA_TRY(ctx->e, cudaStreamSynchronize(ctx->d->stream));
	return GH_OK;
}

gh_status
gh_cuda_read_scratch(const gh_cuda_ctx *ctx, int first, int words, uint64_t *out)
{
	GH_CUDA_TRY(ctx->e, cudaMemcpyAsync(ctx->d->pinned, ctx->d->scratch + first,
										words * sizeof(uint64_t), cudaMemcpyDeviceToHost,
										ctx->d->stream));
	GH_CUDA_TRY(ctx->e, cudaStreamSynchronize(ctx->d->stream));
	memcpy(out, ctx->d->pinned, words * sizeof(uint64_t));
	return GH_OK;
}

/*
 * A copy straight into pageable host memory is staged by the driver, and
 * runs several times slower than the bus where the memory is fresh (a
 * result's arrays always are); pieces of GH_CUDA_BOUNCE bytes go through
 * two pinned halves instead, the host copy of one (gh_copy_host, on several
 * threads) overlapping the transfer of the next.
 */
#define GH_CUDA_BOUNCE ((size_t) 32 << 20)

gh_status
gh_cuda_copy_to_host(const gh_cuda_ctx *ctx, void *host, const void *dev, size_t bytes)
{
	gh_cuda_dev *d = ctx->d;
	cudaStream_t s = d->stream;
	size_t		off = 0,
				prev_off = 0,
				prev_len = 0;
	int			half = 0;

	if (bytes < GH_CUDA_BOUNCE / 8)
	{
		if (bytes > 0)
			GH_CUDA_TRY(ctx->e, cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
		GH_CUDA_TRY(ctx->e, cudaStreamSynchronize(s));
		return GH_OK;
	}
	if (d->bounce == nullptr)
	{
		cudaError_t err = cudaMallocHost((void **) &d->bounce, 2 * GH_CUDA_BOUNCE);

		if (err == cudaSuccess)
			err = cudaEventCreateWithFlags(&d->bounce_done[0], cudaEventDisableTiming);
		if (err == cudaSuccess &&
			(err = cudaEventCreateWithFlags(&d->bounce_done[1], cudaEventDisableTiming)) != cudaSuccess)
			(void) cudaEventDestroy(d->bounce_done[0]);
		if (err != cudaSuccess)
		{
			if (d->bounce != nullptr)
				(void) cudaFreeHost(d->bounce);
			d->bounce = nullptr;
			return gh_cuda_error(ctx->e, err, "allocating the pinned buffer for copies to the host");
		}
	}
	while (off < bytes || prev_len > 0)
	{
		size_t		len = bytes - off < GH_CUDA_BOUNCE ? bytes - off : GH_CUDA_BOUNCE;
		char	   *stage = d->bounce + half * GH_CUDA_BOUNCE;

		/* this half's last piece was copied on two rounds ago */
		if (len > 0)
		{
			GH_CUDA_TRY(ctx->e, cudaMemcpyAsync(stage, (const char *) dev + off, len,
												cudaMemcpyDeviceToHost, s));
			GH_CUDA_TRY(ctx->e, cudaEventRecord(d->bounce_done[half], s));
		}
		if (prev_len > 0)
		{
			gh_copy		piece = {(char *) host + prev_off, d->bounce + (1 - half) * GH_CUDA_BOUNCE,
								 prev_len};

			GH_CUDA_TRY(ctx->e, cudaEventSynchronize(d->bounce_done[1 - half]));
			gh_copy_host(&piece, 1);
		}
		prev_off = off;
		prev_len = len;
		off += len;
		half = 1 - half;
	}
	return GH_OK;
}

gh_status
gh_cuda_pool_keep(const gh_cuda_ctx *ctx)
{
	cudaMemPool_t pool;
	uint64_t	threshold = UINT64_MAX;

	if (!ctx->d->async_alloc)
		return GH_OK;
	GH_CUDA_TRY(ctx->e, cudaDeviceGetDefaultMemPool(&pool, ctx->d->id));
	GH_CUDA_TRY(ctx->e, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
	return GH_OK;
}

void
gh_cuda_pool_release(const gh_cuda_ctx *ctx)
{
	cudaMemPool_t pool;
	uint64_t	threshold = 0;

	if (!ctx->d->async_alloc)
		return;
	/* errors here change nothing for the caller: the pool just stays larger */
	if (cudaDeviceGetDefaultMemPool(&pool, ctx->d->id) == cudaSuccess)
	{
		(void) cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
		(void) cudaStreamSynchronize(ctx->d->stream);
		(void) cudaMemPoolTrimTo(pool, 0);
	}
	(void) cudaGetLastError();
}

int
gh_cuda_list_devices(gh_device_info *out, int max)
{
	int			count = 0,
				prev = -1,
				driver = 0,
				runtime = 0,
				written = 0;

	if (out == nullptr || max <= 0)
		return 0;
	if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0)
	{
		(void) cudaGetLastError();
		return 0;
	}
	if (cudaGetDevice(&prev) != cudaSuccess)
		prev = -1;
	if (cudaDriverGetVersion(&driver) != cudaSuccess)
		driver = 0;
	if (cudaRuntimeGetVersion(&runtime) != cudaSuccess)
		runtime = 0;
	for (int i = 0; i < count && written < max; i++)
	{
		cudaDeviceProp prop;
		gh_device_info *info = &out[written];
		size_t		mfree = 0,
					mtotal = 0;

		if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
			continue;
		memset(info, 0, sizeof(*info));
		info->id = i;
		snprintf(info->name, sizeof(info->name), "%s", prop.name);
		info->cc_major = prop.major;
		info->cc_minor = prop.minor;
		info->sm_count = prop.multiProcessorCount;
		info->mem_total = prop.totalGlobalMem;
		if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&mfree, &mtotal) == cudaSuccess)
			info->mem_free = mfree;
		info->driver_version = driver;
		info->runtime_version = runtime;
		written++;
	}
	if (prev >= 0)
		(void) cudaSetDevice(prev);
	(void) cudaGetLastError();
	return written;
}

/* ---- open and close ---- */

static void
cuda_close(gh_engine *e)
{
	gh_cuda_state *state = (gh_cuda_state *) e->bstate;

	if (state == nullptr)
		return;
	for (int d = 0; d < state->ndev; d++)
	{
		gh_cuda_dev *dev = &state->dev[d];

		if (cudaSetDevice(dev->id) != cudaSuccess)
			continue;
		if (dev->stream != nullptr)
		{
			(void) cudaStreamSynchronize(dev->stream);
			(void) cudaStreamDestroy(dev->stream);
		}
		if (dev->scratch != nullptr)
		{
			(void) cudaFree(dev->scratch);
			gh_account(e, -(long long) (GH_CUDA_SCRATCH_WORDS * sizeof(uint64_t)));
		}
		if (dev->pinned != nullptr)
			(void) cudaFreeHost(dev->pinned);
		if (dev->page_stage != nullptr)
			(void) cudaFreeHost(dev->page_stage);
		if (dev->bounce != nullptr)
		{
			(void) cudaFreeHost(dev->bounce);
			(void) cudaEventDestroy(dev->bounce_done[0]);
			(void) cudaEventDestroy(dev->bounce_done[1]);
		}
		if (dev->async_alloc)
		{
			cudaMemPool_t pool;

			if (cudaDeviceGetDefaultMemPool(&pool, dev->id) == cudaSuccess)
				(void) cudaMemPoolTrimTo(pool, 0);
		}
	}
	(void) cudaGetLastError();
	delete state;
	e->bstate = nullptr;
}

/* Set up device index d of the engine; state->ndev counts it once begun. */
static gh_status
open_device(gh_engine *e, gh_cuda_state *state, int d, int count)
{
	gh_cuda_dev *dev = &state->dev[d];
	int			id = e->opt.devices[d];
	int			pools = 0;
	cudaDeviceProp prop;

	if (id < 0 || id >= count)
		return gh_fail(e, GH_ERR_NODEVICE, "CUDA device %d does not exist (%d present)", id, count);
	GH_CUDA_TRY(e, cudaGetDeviceProperties(&prop, id));
	if (prop.major < 8)
		return gh_fail(e, GH_ERR_NODEVICE,
					   "CUDA device %d (%s) has compute capability %d.%d; 8.0 or newer is needed",
					   id, prop.name, prop.major, prop.minor);
	dev->id = id;
	dev->sm_count = prop.multiProcessorCount;
	dev->pair_atomics = prop.major >= 9;
	state->ndev = d + 1;
	GH_CUDA_TRY(e, cudaSetDevice(id));
	GH_CUDA_TRY(e, cudaStreamCreateWithFlags(&dev->stream, cudaStreamNonBlocking));
	GH_CUDA_TRY(e, cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, id));
	dev->async_alloc = pools != 0;
	GH_CUDA_TRY(e, cudaMalloc(&dev->scratch, GH_CUDA_SCRATCH_WORDS * sizeof(uint64_t)));
	gh_account(e, GH_CUDA_SCRATCH_WORDS * sizeof(uint64_t));
	GH_CUDA_TRY(e, cudaMallocHost(&dev->pinned, GH_CUDA_SCRATCH_WORDS * sizeof(uint64_t)));
	return GH_OK;
}

/*
 * Device d may read and write s's stream-ordered allocations.  Peer access
 * covers cudaMalloc's memory only; without this, a peer copy from pool
 * memory is staged by the driver at a fraction of the link's rate.  The
 * default pool is the process's, like peer access, so this too is kept.
 */
static bool
grant_pool_access(gh_cuda_state *state, int d, int s)
{
	cudaMemPool_t pool;
	cudaMemAccessDesc desc;

	if (!state->dev[s].async_alloc)
		return true;
	memset(&desc, 0, sizeof(desc));
	desc.location.type = cudaMemLocationTypeDevice;
	desc.location.id = state->dev[d].id;
	desc.flags = cudaMemAccessFlagsProtReadWrite;
	return cudaDeviceGetDefaultMemPool(&pool, state->dev[s].id) == cudaSuccess &&
		cudaMemPoolSetAccess(pool, &desc, 1) == cudaSuccess;
}

/*
 * Let every pair of the engine's devices that can read each other's memory
 * do so (NVLink or PCIe peer-to-peer); the exchange copies directly between
 * them.  Peer access belongs to the process's contexts and outlives the
 * engine (another engine may use it), so it is never disabled.  A pair that
 * cannot, or whose enabling fails, exchanges through pinned host memory:
 * slower, never wrong, so a failure here is not an error.
 */
static void
enable_peers(gh_engine *e, gh_cuda_state *state)
{
	for (int d = 0; d < state->ndev; d++)
		for (int s = 0; s < state->ndev; s++)
		{
			int			can = 0;
			cudaError_t err;

			state->peer[d][s] = false;
			if (s == d || state->dev[d].id == state->dev[s].id)
			{
				state->peer[d][s] = true;	/* the same GPU */
				continue;
			}
			if (cudaDeviceCanAccessPeer(&can, state->dev[d].id, state->dev[s].id) != cudaSuccess ||
				!can || cudaSetDevice(state->dev[d].id) != cudaSuccess)
			{
				(void) cudaGetLastError();
				continue;
			}
			err = cudaDeviceEnablePeerAccess(state->dev[s].id, 0);
			if (err == cudaSuccess || err == cudaErrorPeerAccessAlreadyEnabled)
				state->peer[d][s] = grant_pool_access(state, d, s);
			(void) cudaGetLastError();
		}
	(void) e;
}

static gh_status
cuda_open(gh_engine *e)
{
	gh_cuda_state *state = new (std::nothrow) gh_cuda_state();
	int			count = 0;
	cudaError_t err;

	if (state == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory opening the CUDA backend");
	e->bstate = state;
	err = cudaGetDeviceCount(&count);
	if (err != cudaSuccess || count <= 0)
	{
		(void) cudaGetLastError();
		cuda_close(e);
		return gh_fail(e, GH_ERR_NODEVICE, "no CUDA device is available%s%s",
					   err != cudaSuccess ? ": " : "",
					   err != cudaSuccess ? cudaGetErrorString(err) : "");
	}
	for (int d = 0; d < e->opt.ndevices; d++)
	{
		gh_status	st = open_device(e, state, d, count);

		if (st != GH_OK)
		{
			cuda_close(e);
			return st;
		}
	}
	enable_peers(e, state);
	return GH_OK;
}

/* ---- tables ---- */

gh_status
gh_cuda_part_build(const gh_cuda_ctx *ctx, gh_kind kind, gh_dbuf<uint64_t> &keys,
				   gh_dbuf<uint64_t> &rows, size_t n, double load_factor,
				   gh_cuda_part **out)
{
	gh_cuda_part *part = new (std::nothrow) gh_cuda_part();
	gh_status	st;

	*out = nullptr;
	if (part == nullptr)
		return gh_fail(ctx->e, GH_ERR_HOST_NOMEM, "out of host memory for a table");
	part->kind = kind == GH_KIND_BCHT ? GH_KIND_BCHT : GH_KIND_HASHGRAPH;
	part->dev = ctx->dev;
	if (part->kind == GH_KIND_BCHT)
		st = gh_bcht_build(ctx, keys, rows, n, load_factor, &part->bc);
	else
		st = gh_hg_build(ctx, keys, rows, n, &part->hg);
	if (st != GH_OK)
	{
		delete part;
		return st;
	}
	*out = part;
	return GH_OK;
}

static gh_status
cuda_build(gh_engine *e, int dev, gh_kind kind, const uint64_t *keys,
		   const uint64_t *rows, size_t n, double load_factor, void **part)
{
	gh_cuda_ctx ctx;
	gh_dbuf<uint64_t> dkeys,
				drows;
	gh_cuda_part *p = nullptr;

	*part = nullptr;
	GH_TRY(gh_cuda_enter(e, dev, &ctx));
	GH_TRY(gh_cuda_stage(&ctx, keys, n, dkeys, "build keys"));
	GH_TRY(gh_cuda_stage(&ctx, rows, n, drows, "build rows"));
	GH_TRY(gh_cuda_part_build(&ctx, kind, dkeys, drows, n, load_factor, &p));
	{
		gh_status	st = gh_cuda_sync(&ctx);

		if (st != GH_OK)
		{
			delete p;
			return st;
		}
	}
	*part = p;
	return GH_OK;
}

static void
cuda_part_free(gh_engine *e, void *part)
{
	gh_cuda_part *p = (gh_cuda_part *) part;
	gh_cuda_ctx ctx;

	if (p == nullptr)
		return;
	(void) gh_cuda_enter(e, p->dev, &ctx);
	delete p;
}

static size_t
cuda_part_distinct(const void *part)
{
	const gh_cuda_part *p = (const gh_cuda_part *) part;

	return p != nullptr && p->kind == GH_KIND_BCHT ? p->bc.ndistinct : 0;
}

/* ---- probes ---- */

static gh_status
cuda_probe_begin(gh_engine *e, void *part, const uint64_t *keys, size_t n,
				 gh_join_method method, void **probe, uint64_t *total)
{
	gh_cuda_part *p = (gh_cuda_part *) part;
	gh_cuda_ctx ctx;
	gh_dbuf<uint64_t> dkeys;
	gh_cuda_probe *pr;
	gh_status	st;

	/* total may be NULL: the engine reopens probes it has counted before */
	*probe = nullptr;
	if (total != nullptr)
		*total = 0;
	GH_TRY(gh_cuda_enter(e, p->dev, &ctx));
	GH_TRY(gh_cuda_stage(&ctx, keys, n, dkeys, "probe keys"));
	pr = new (std::nothrow) gh_cuda_probe();
	if (pr == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a probe");
	st = gh_cuda_probe_start(&ctx, p, dkeys.p, &dkeys, n, method, pr);
	if (st == GH_OK)
		st = gh_cuda_sync(&ctx);
	if (st != GH_OK)
	{
		delete pr;
		return st;
	}
	*probe = pr;
	if (total != nullptr)
		*total = pr->total;
	return GH_OK;
}

static gh_status
cuda_probe_write(gh_engine *e, void *probe, uint64_t first, size_t count,
				 gh_pair *out)
{
	gh_cuda_probe *pr = (gh_cuda_probe *) probe;
	gh_cuda_ctx ctx;
	gh_dbuf<gh_pair> dout;
	size_t		done = 0;

	if (count == 0)
		return GH_OK;
	GH_TRY(gh_cuda_enter(e, pr->dev, &ctx));
	GH_TRY(dout.alloc(&ctx, count < PROBE_WRITE_CHUNK ? count : PROBE_WRITE_CHUNK, "pair output"));
	while (done < count)
	{
		size_t		m = count - done < dout.count ? count - done : dout.count;

		GH_TRY(gh_cuda_probe_pairs(&ctx, pr, first + done, m, dout.p));
		GH_CUDA_TRY(e, cudaMemcpyAsync(out + done, dout.p, m * sizeof(gh_pair),
									   cudaMemcpyDeviceToHost, ctx.d->stream));
		GH_TRY(gh_cuda_sync(&ctx));
		done += m;
	}
	return GH_OK;
}

static gh_status
cuda_probe_counts(gh_engine *e, void *probe, uint32_t *counts)
{
	gh_cuda_probe *pr = (gh_cuda_probe *) probe;
	gh_cuda_ctx ctx;
	gh_dbuf<uint32_t> dcounts;

	if (pr->n == 0)
		return GH_OK;
	GH_TRY(gh_cuda_enter(e, pr->dev, &ctx));
	GH_TRY(dcounts.alloc(&ctx, pr->n, "per-key counts"));
	GH_TRY(gh_cuda_probe_key_counts(&ctx, pr, dcounts.p));
	GH_CUDA_TRY(e, cudaMemcpyAsync(counts, dcounts.p, pr->n * sizeof(uint32_t),
								   cudaMemcpyDeviceToHost, ctx.d->stream));
	return gh_cuda_sync(&ctx);
}

static void
cuda_probe_free(gh_engine *e, void *probe)
{
	gh_cuda_probe *pr = (gh_cuda_probe *) probe;
	gh_cuda_ctx ctx;

	if (pr == nullptr)
		return;
	(void) gh_cuda_enter(e, pr->dev, &ctx);
	delete pr;
}

/* ---- planning ---- */

/*
 * Device bytes per build row at the peak of a build (probes are not
 * counted: each probe key needs another 24 bytes, 40 for an intersection).
 * HashGraph: keys and rows with the radix sort's alternate buffers (32),
 * offsets (at most 8 / GH_HG_KEYS_PER_BUCKET), heavy-bucket lists and sort
 * storage (~2).  BCHT: the same sort (32); then rows, hashes, run heads and
 * the overflow list (24) with a table of 16 bytes per slot (key, value; the
 * reach bits add half a bit), 16 / load factor per distinct key: 58 covers
 * load factors down to 0.5.
 */
static size_t
cuda_build_bytes_per_row(gh_kind kind)
{
	return kind == GH_KIND_BCHT ? 58 : 40;
}

static gh_status
cuda_aggregate(gh_engine *e, int dev, const uint64_t *keys, size_t n,
			   const gh_aggcol *cols, int ncols, gh_groups **out)
{
	return gh_cuda_aggregate(e, dev, keys, n, cols, ncols, out);
}

static gh_status
cuda_bench(gh_engine *e, gh_bench_op op, gh_kind kind, size_t n, int reps,
		   double load_factor, gh_bench_result *out)
{
	return gh_cuda_bench(e, op, kind, n, reps, load_factor, out);
}

/*
 * Frees are stream-ordered: after a failed or cancelled operation the
 * allocator's pool keeps what was freed until the next synchronisation.
 * Synchronise and trim every device's pool to nothing.
 */
static void
cuda_trim(gh_engine *e)
{
	gh_cuda_state *state = (gh_cuda_state *) e->bstate;

	for (int d = 0; state != nullptr && d < state->ndev; d++)
	{
		gh_cuda_ctx ctx;

		if (gh_cuda_enter(e, d, &ctx) == GH_OK)
			gh_cuda_pool_release(&ctx);
	}
	(void) cudaGetLastError();
}

extern "C" const gh_backend_ops gh_cuda_ops = {
	"cuda",
	cuda_open,
	cuda_close,
	cuda_build,
	cuda_part_free,
	cuda_part_distinct,
	cuda_probe_begin,
	cuda_probe_write,
	cuda_probe_counts,
	cuda_probe_free,
	cuda_aggregate,
	gh_cuda_probe_aggregate,
	cuda_bench,
	cuda_build_bytes_per_row,
	gh_cuda_agg_bytes_per_row,
	gh_cuda_joinagg_bytes_per_pair,
	cuda_trim,
	gh_cuda_extract_pages,
	gh_cuda_pages_read,
	gh_cuda_pages_keep,
	gh_cuda_pages_free,
	gh_cuda_register_host,
	gh_cuda_pin_host,
	gh_cuda_unpin_host,
	gh_cuda_build_spread,
	gh_cuda_aggregate_spread,
	gh_cuda_darray_alloc,
	gh_cuda_darray_free,
	gh_cuda_darray_copy,
	gh_cuda_dim_create,
	gh_cuda_dim_free,
	gh_cuda_star_create,
	gh_cuda_star_read,
	gh_cuda_star_keep,
	gh_cuda_star_add,
	gh_cuda_star_result,
	gh_cuda_star_free,
	gh_cuda_agg_bytes_per_group,
	gh_cuda_estimate_keys,
};
