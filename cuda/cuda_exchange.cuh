/*-------------------------------------------------------------------------
 *
 * cuda_exchange.cuh
 *	  The all-to-all exchange between an engine's GPUs (cuda_exchange.cu).
 *
 * Rows start spread over the devices in arbitrary slices (a slice of the
 * input per device) and end on the device that owns their key's hash range:
 * device index d of ndev owns the keys with gh_partition_of(key, ndev) == d,
 * the split the common layer and the CPU backend use.  A row is ncols
 * 64-bit words: column 0 is the key, the others ride along (row numbers,
 * probe indices, values).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CUDA_EXCHANGE_CUH
#define GPUHASH_CUDA_EXCHANGE_CUH

#include "cuda_common.cuh"

#define GH_XCHG_MAX_COLS 8
static_assert(2 + GH_SPREAD_MAX_AGG_COLS <= GH_XCHG_MAX_COLS,
			  "a spread aggregation exchanges keys, values and null bits");

/* One device's rows: ncols device columns of n words each. */
struct gh_xchg_side
{
	size_t		n = 0;
	gh_dbuf<uint64_t> col[GH_XCHG_MAX_COLS];
};

/* What one exchange moved, in bytes. */
struct gh_xchg_stats
{
	uint64_t	local;			/* rows that stayed on their device */
	uint64_t	peer;			/* copied device to device */
	uint64_t	staged;			/* copied through pinned host memory */
};

/*
 * Exchange the rows of in[0..ndev) (in[s] on device index s; consumed) so
 * that out[d] holds, on device index d, every row of hash range d: the rows
 * from device 0 first, then device 1's, ..., each in its slice's order (so
 * slices cut from one input in order give that input's stable split).
 *
 * All devices work at once: each gives its rows their destinations and
 * sends the counts to the host -- its only wait -- which allocates every
 * destination's receive buffers; then each source sorts its rows by
 * destination (a stable radix sort on the destination) and one kernel
 * stores every column of every row in its destination's buffer, in the
 * peer's memory directly where peer access is enabled, and otherwise in a
 * send buffer that the destination copies in on its stream (the driver
 * stages that copy through pinned host memory).  On return the work is
 * queued, not finished: out's buffers are ordered on their devices'
 * streams, so work queued there next sees the rows.  With send buffers,
 * the host waits for the copies before it frees them.
 */
gh_status	gh_cuda_exchange(gh_engine *e, int ncols, gh_xchg_side *in,
							 gh_xchg_side *out, gh_xchg_stats *stats);

#endif							/* GPUHASH_CUDA_EXCHANGE_CUH */
