/*-------------------------------------------------------------------------
 *
 * cuda_common.cuh
 *	  What every file of the CUDA backend shares: the per-engine device
 *	  state, the one error-check macro, accounted device buffers and launch
 *	  helpers.
 *
 * Every CUDA runtime call goes through GH_CUDA_TRY, which turns a failure
 * into gh_fail(GH_ERR_DEVICE_NOMEM or GH_ERR_DEVICE, "<call>: <reason>") and
 * returns it from the calling function.  Returning early is safe because
 * device memory is held by gh_dbuf objects, which free what they hold when
 * they go out of scope; a handle that outlives the call (a table, a probe)
 * takes its buffers over with swap() and frees them in its own free
 * callback.  Kernel launches are followed by GH_CUDA_LAUNCHED, which checks
 * cudaGetLastError.
 *
 * Device memory is allocated stream-ordered (cudaMallocAsync) on the
 * device's one stream, so that freeing a temporary never synchronises the
 * device; every allocation and free is reported to gh_account.  The default
 * memory pool keeps nothing cached between operations (release threshold
 * 0), except while a benchmark runs, so that other processes sharing the
 * GPU get the memory back.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CUDA_COMMON_CUH
#define GPUHASH_CUDA_COMMON_CUH

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

#include "backend.h"
#include "hash.h"

/* Words of device scratch (and pinned host memory) each device keeps for
 * small results read back by the host: counts, flags, bounds. */
#define GH_CUDA_SCRATCH_WORDS 64

/* Threads per block of the simple one-item-per-thread kernels. */
#define GH_CUDA_BLOCK 256

/* One device in use by an engine. */
typedef struct gh_cuda_dev
{
	int			id;				/* CUDA device number */
	cudaStream_t stream;		/* everything of this engine on the device */
	int			sm_count;
	bool		async_alloc;	/* cudaMallocAsync supported */
	bool		pair_atomics;	/* 16-byte atomics (compute capability 9.0+) */
	uint64_t   *scratch;		/* GH_CUDA_SCRATCH_WORDS device words */
	uint64_t   *pinned;			/* as many pinned host words */
	/* pinned halves for large copies to the host (gh_cuda_copy_to_host) */
	char	   *bounce;
	cudaEvent_t bounce_done[2];
	/* pinned staging for pages in unregistered host memory (cuda_pages.cu) */
	void	   *page_stage;
	size_t		page_stage_bytes;
} gh_cuda_dev;

/* The backend's private state, e->bstate. */
typedef struct gh_cuda_state
{
	int			ndev;
	gh_cuda_dev dev[GH_MAX_DEVICES];
	/* peer[d][s]: device index d can read device index s's memory directly
	 * (peer access enabled); otherwise copies between them go through
	 * pinned host memory */
	bool		peer[GH_MAX_DEVICES][GH_MAX_DEVICES];
} gh_cuda_state;

/* Pinned host words [GH_CUDA_PINNED_XCHG, +GH_MAX_DEVICES) of each device
 * are the exchange's (cuda_exchange.cu); gh_cuda_read_scratch uses the
 * words below. */
#define GH_CUDA_PINNED_XCHG (GH_CUDA_SCRATCH_WORDS - GH_MAX_DEVICES)

/* Where a call runs: the engine and one of its devices (made current). */
typedef struct gh_cuda_ctx
{
	gh_engine  *e;
	gh_cuda_dev *d;
	int			dev;			/* index into e->opt.devices */
} gh_cuda_ctx;

/* Record a CUDA error on e; cudaErrorMemoryAllocation becomes DEVICE_NOMEM. */
gh_status	gh_cuda_error(gh_engine *e, cudaError_t err, const char *what);

#define GH_CUDA_TRY(e, call) \
	do { \
		cudaError_t gh_err_ = (call); \
		if (gh_err_ != cudaSuccess) \
			return gh_cuda_error((e), gh_err_, #call); \
	} while (0)

/* After a kernel launch: a bad configuration or an earlier fault shows here. */
#define GH_CUDA_LAUNCHED(e, kernel) \
	do { \
		cudaError_t gh_err_ = cudaGetLastError(); \
		if (gh_err_ != cudaSuccess) \
			return gh_cuda_error((e), gh_err_, "launch of " kernel); \
	} while (0)

/* Propagate a gh_status from a helper. */
#define GH_TRY(expr) \
	do { \
		gh_status gh_st_ = (expr); \
		if (gh_st_ != GH_OK) \
			return gh_st_; \
	} while (0)

/* Make device index dev of e current and fill ctx. */
gh_status	gh_cuda_enter(gh_engine *e, int dev, gh_cuda_ctx *ctx);

/* Accounted stream-ordered allocation and free on ctx's device. */
gh_status	gh_cuda_alloc(const gh_cuda_ctx *ctx, void **p, size_t bytes,
						  const char *what);
void		gh_cuda_free(const gh_cuda_ctx *ctx, void *p, size_t bytes);

/* Wait for the device's stream. */
gh_status	gh_cuda_sync(const gh_cuda_ctx *ctx);

/*
 * Copy bytes of device memory (after the stream's work so far) to pageable
 * host memory, and wait for it: large copies go through a pinned buffer of
 * the device's in pieces, each piece copied on to the host memory while
 * the next crosses the bus.
 */
gh_status	gh_cuda_copy_to_host(const gh_cuda_ctx *ctx, void *host, const void *dev,
								 size_t bytes);

/*
 * Read back `words` 64-bit words of the device scratch area (after the
 * stream's work so far) into out[].
 */
gh_status	gh_cuda_read_scratch(const gh_cuda_ctx *ctx, int first, int words,
								 uint64_t *out);

/*
 * Keep freed device memory cached in the memory pool (benchmarks: so that
 * allocations inside a timed run cost nothing), and give it back again.
 */
gh_status	gh_cuda_pool_keep(const gh_cuda_ctx *ctx);
void		gh_cuda_pool_release(const gh_cuda_ctx *ctx);

/*
 * A device array of T owned by one scope or one handle.  Not copyable;
 * swap() moves ownership.  The destructor frees it (stream-ordered).
 */
template <typename T>
struct gh_dbuf
{
	gh_cuda_ctx ctx = {nullptr, nullptr, 0};
	T		   *p = nullptr;
	size_t		count = 0;

	gh_dbuf() = default;
	gh_dbuf(const gh_dbuf &) = delete;
	gh_dbuf &operator=(const gh_dbuf &) = delete;
	~gh_dbuf()
	{
		reset();
	}

	gh_status
	alloc(const gh_cuda_ctx *c, size_t n, const char *what)
	{
		void	   *q = nullptr;

		reset();
		GH_TRY(gh_cuda_alloc(c, &q, n * sizeof(T), what));
		ctx = *c;
		p = static_cast<T *>(q);
		count = n;
		return GH_OK;
	}

	void
	reset()
	{
		if (p != nullptr)
			gh_cuda_free(&ctx, p, count * sizeof(T));
		p = nullptr;
		count = 0;
	}

	void
	swap(gh_dbuf &o)
	{
		gh_cuda_ctx c = ctx;
		T		   *q = p;
		size_t		k = count;

		ctx = o.ctx;
		p = o.p;
		count = o.count;
		o.ctx = c;
		o.p = q;
		o.count = k;
	}

	size_t
	bytes() const
	{
		return count * sizeof(T);
	}
};

/*
 * Copy n host elements into a new device buffer (stream-ordered; the host
 * array may be reused once this returns: pageable copies are staged).  The
 * elements may lie in device memory instead (a device array, gh_darray):
 * the copy is then made on the device.
 */
template <typename T>
static inline gh_status
gh_cuda_stage(const gh_cuda_ctx *ctx, const T *host, size_t n, gh_dbuf<T> &buf,
			  const char *what)
{
	GH_TRY(buf.alloc(ctx, n, what));
	if (n > 0)
		GH_CUDA_TRY(ctx->e, cudaMemcpyAsync(buf.p, host, n * sizeof(T),
											cudaMemcpyDefault, ctx->d->stream));
	return GH_OK;
}

/*
 * The same into buf, a buffer kept between calls: allocated anew only to
 * grow, so that repeated small copies (a star's reads) allocate nothing.
 */
template <typename T>
static inline gh_status
gh_cuda_stage_kept(const gh_cuda_ctx *ctx, const T *host, size_t n, gh_dbuf<T> &buf,
				   const char *what)
{
	if (buf.count < n)
		GH_TRY(buf.alloc(ctx, n, what));
	if (n > 0)
		GH_CUDA_TRY(ctx->e, cudaMemcpyAsync(buf.p, host, n * sizeof(T), cudaMemcpyDefault,
											ctx->d->stream));
	return GH_OK;
}

/* Blocks for n items at `block` threads each (kernels grid-stride beyond). */
static inline unsigned
gh_cuda_grid(size_t n, unsigned block)
{
	size_t		g = (n + block - 1) / block;

	if (g == 0)
		g = 1;
	if (g > 0x7fffffffu)
		g = 0x7fffffffu;
	return (unsigned) g;
}

/* A grid that fills the device for persistent grid-stride kernels. */
static inline unsigned
gh_cuda_wide_grid(const gh_cuda_ctx *ctx, size_t n, unsigned block,
				  unsigned blocks_per_sm)
{
	unsigned	most = (unsigned) ctx->d->sm_count * blocks_per_sm;
	unsigned	g = gh_cuda_grid(n, block);

	return g < most ? g : most;
}

#define GH_GRID_STRIDE(i, n) \
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; (i) < (n); \
		 i += (size_t) gridDim.x * blockDim.x)

/*
 * Append to a device list whose length is *counter: returns the index for
 * this thread's item when want is true.  The threads of a block make one
 * atomicAdd together: threads all over the GPU appending to one counter
 * would otherwise serialise on it (a few million appends cost milliseconds).
 * Every thread of the block must call it, with blockDim.x a multiple of 32
 * and at most 1024.
 */
__device__ __forceinline__ unsigned long long
gh_block_append(unsigned long long *counter, bool want)
{
	__shared__ unsigned long long block_base;
	__shared__ unsigned warp_base[32];
	const unsigned lane = threadIdx.x & 31;
	const unsigned warp = threadIdx.x / 32;
	unsigned	mask = __ballot_sync(0xffffffffu, want);
	unsigned long long mine;

	if (lane == 0)
		warp_base[warp] = __popc(mask);
	__syncthreads();
	if (threadIdx.x == 0)
	{
		unsigned	sum = 0;

		for (unsigned w = 0; w < blockDim.x / 32; w++)
		{
			unsigned	c = warp_base[w];

			warp_base[w] = sum;
			sum += c;
		}
		block_base = sum > 0 ? atomicAdd(counter, (unsigned long long) sum) : 0;
	}
	__syncthreads();
	mine = block_base + warp_base[warp] + __popc(mask & ((1u << lane) - 1));
	__syncthreads();			/* the shared words are reused by the next call */
	return mine;
}

#endif							/* GPUHASH_CUDA_COMMON_CUH */
