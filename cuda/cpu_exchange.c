/*-------------------------------------------------------------------------
 *
 * cpu_exchange.c
 *	  The all-to-all exchange of the CUDA backend (cuda_exchange.cu),
 *	  simulated on the CPU for the CPU backend's simulated devices.
 *
 * INTERFACE ROUTINES
 *		gh_cpu_exchange			one input in slices -> each device's range
 *		gh_cpu_exchange_free	the ranges
 *
 * The same steps and the same result as on GPUs: the input is cut into
 * ndev contiguous slices, one per device; each slice is ordered by
 * destination (the hash range gh_partition_of(key, ndev)) with a stable
 * counting sort, the per-destination counts are read, and each destination
 * gathers its block from every slice in slice order.  Destination d thus
 * holds exactly the rows the common layer's host split puts in partition d
 * of ndev, in the same order, which the engine tests rely on when they
 * compare the two.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

void
gh_cpu_exchange_free(gh_cpu_range *ranges, int ndev)
{
	for (int d = 0; d < ndev; d++)
	{
		for (int c = 0; c < GH_CPU_XCHG_MAX_COLS; c++)
			free(ranges[d].col[c]);
		memset(&ranges[d], 0, sizeof(ranges[d]));
	}
}

/* Order slice [first, first + cnt) by destination into send[c]; counts[d]. */
static bool
order_slice(const uint64_t *const *cols, int ncols, size_t first, size_t cnt,
			int ndev, uint64_t **send, size_t *counts)
{
	size_t		at[GH_MAX_DEVICES];
	uint32_t   *dest = malloc((cnt > 0 ? cnt : 1) * sizeof(uint32_t));

	if (dest == NULL)
		return false;
	memset(counts, 0, ndev * sizeof(size_t));
	for (size_t i = 0; i < cnt; i++)
	{
		dest[i] = gh_partition_of(cols[0][first + i], (uint32_t) ndev);
		counts[dest[i]]++;
	}
	at[0] = 0;
	for (int d = 1; d < ndev; d++)
		at[d] = at[d - 1] + counts[d - 1];
	for (size_t i = 0; i < cnt; i++)
	{
		size_t		to = at[dest[i]]++;

		for (int c = 0; c < ncols; c++)
			send[c][to] = cols[c][first + i];
	}
	free(dest);
	return true;
}

gh_status
gh_cpu_exchange(gh_engine *e, int ndev, const uint64_t *const *cols, int ncols,
				size_t n, gh_cpu_range *ranges)
{
	uint64_t   *send[GH_MAX_DEVICES][GH_CPU_XCHG_MAX_COLS];
	size_t		counts[GH_MAX_DEVICES][GH_MAX_DEVICES];
	size_t		recv_at[GH_MAX_DEVICES];
	gh_status	st = GH_OK;

	memset(send, 0, sizeof(send));
	memset(ranges, 0, ndev * sizeof(gh_cpu_range));
	if (ncols < 1 || ncols > GH_CPU_XCHG_MAX_COLS || ndev < 1 || ndev > GH_MAX_DEVICES)
		return gh_fail(e, GH_ERR_INTERNAL, "an exchange of %d columns over %d devices",
					   ncols, ndev);
	/* order: each source's slice by destination */
	for (int s = 0; s < ndev && st == GH_OK; s++)
	{
		size_t		first = n * (size_t) s / (size_t) ndev;
		size_t		cnt = n * (size_t) (s + 1) / (size_t) ndev - first;

		for (int c = 0; c < ncols; c++)
			if ((send[s][c] = malloc((cnt > 0 ? cnt : 1) * sizeof(uint64_t))) == NULL)
				st = gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for an exchange");
		if (st == GH_OK && !order_slice(cols, ncols, first, cnt, ndev, send[s], counts[s]))
			st = gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for an exchange");
	}
	/* receive: each destination's block from every source, in source order */
	for (int d = 0; d < ndev && st == GH_OK; d++)
	{
		size_t		total = 0;

		for (int s = 0; s < ndev; s++)
			total += counts[s][d];
		ranges[d].n = total;
		for (int c = 0; c < ncols; c++)
			if ((ranges[d].col[c] = malloc((total > 0 ? total : 1) * sizeof(uint64_t))) == NULL)
				st = gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for an exchange");
		recv_at[d] = 0;
	}
	for (int s = 0; s < ndev && st == GH_OK; s++)
	{
		size_t		from = 0;

		for (int d = 0; d < ndev; d++)
		{
			for (int c = 0; c < ncols; c++)
				memcpy(ranges[d].col[c] + recv_at[d], send[s][c] + from,
					   counts[s][d] * sizeof(uint64_t));
			recv_at[d] += counts[s][d];
			from += counts[s][d];
		}
	}
	for (int s = 0; s < ndev; s++)
		for (int c = 0; c < GH_CPU_XCHG_MAX_COLS; c++)
			free(send[s][c]);
	if (st != GH_OK)
		gh_cpu_exchange_free(ranges, ndev);
	return st;
}
