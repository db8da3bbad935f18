/*-------------------------------------------------------------------------
 *
 * cuda_joinagg.cu
 *	  A range of a join's pairs grouped on the GPU, the pairs never leaving
 *	  it: the CUDA backend's probe_aggregate.
 *
 * INTERFACE ROUTINES
 *		gh_cuda_probe_aggregate			pairs of an open probe -> gh_groups
 *		gh_cuda_joinagg_bytes_per_pair	planning estimate
 *
 * On the probe's device: the spec's arrays are staged (outer ones with the
 * probe's n entries, inner ones with inner_rows), the range of pairs is
 * written into a device buffer exactly as probe_write would write it
 * (gh_cuda_probe_pairs), and one kernel turns every pair (o, r) into a row:
 * its group key outer_keys[o] | inner_keys[r] and, per column, the value
 * and null flag at o or at r.  The pairs and the staged arrays are then
 * freed and the rows grouped by the device aggregation of cuda_aggregate.cu
 * (gh_cuda_aggregate_device); only the groups are copied to the host.
 *
 *-------------------------------------------------------------------------
 */
#include <memory>
#include <new>

#include "cuda_tables.cuh"

/* One value column as the gather kernel sees it (device pointers). */
typedef struct gather_col
{
	const uint64_t *src;		/* by probe key index, or by row number */
	const uint8_t *src_nulls;	/* NULL: no NULLs */
	uint64_t   *dst;			/* one per pair */
	uint8_t    *dst_nulls;		/* NULL exactly when src_nulls is */
	int			inner;			/* src is indexed by row number */
} gather_col;

/* Row i of the aggregation from pair i: its group key and column values. */
__global__ void
gather_pair_rows(const gh_pair *__restrict__ pairs, size_t count,
				 const uint64_t *__restrict__ okeys,
				 const uint64_t *__restrict__ ikeys, uint64_t *__restrict__ keys,
				 const gather_col *__restrict__ cols, int ncols)
{
	GH_GRID_STRIDE(i, count)
	{
		/* gh_pair is (outer, inner); the buffer is 16-byte aligned */
		const ulonglong2 p = reinterpret_cast<const ulonglong2 *>(pairs)[i];

		keys[i] = (okeys != nullptr ? okeys[p.x] : 0) | (ikeys != nullptr ? ikeys[p.y] : 0);
		for (int c = 0; c < ncols; c++)
		{
			const gather_col col = cols[c];
			const uint64_t at = col.inner ? p.y : p.x;

			col.dst[i] = col.src[at];
			if (col.dst_nulls != nullptr)
				col.dst_nulls[i] = col.src_nulls[at];
		}
	}
}

static bool
col_is_inner(const gh_joinagg *spec, int c)
{
	return spec->col_inner != nullptr && spec->col_inner[c] != 0;
}

size_t
gh_cuda_joinagg_bytes_per_pair(const gh_joinagg *spec, size_t outer_rows,
							   size_t *fixed)
{
	int			ncols = spec->ncols > 0 ? spec->ncols : 0;
	size_t		staged = 0;

	/*
	 * The open probe (40 bytes a key at most, for an intersection), the
	 * spec's arrays, staged whole, and the column descriptors.
	 */
	staged += 40 * outer_rows;
	if (spec->outer_keys != nullptr)
		staged += outer_rows * sizeof(uint64_t);
	if (spec->inner_keys != nullptr)
		staged += spec->inner_rows * sizeof(uint64_t);
	for (int c = 0; c < ncols; c++)
	{
		size_t		len = col_is_inner(spec, c) ? spec->inner_rows : outer_rows;

		staged += len * (sizeof(uint64_t) + (spec->cols[c].nulls != nullptr ? 1 : 0));
	}
	*fixed = staged + (size_t) (ncols > 0 ? ncols : 1) * sizeof(gather_col);

	/*
	 * Per pair: the pair (16) and gh_cuda_probe_pairs' item list (under 1
	 * byte a pair), beside the rows gathered from them; then the
	 * aggregation of one row per pair, whose estimate counts those rows
	 * (key, values and null flags).
	 */
	return sizeof(gh_pair) + 1 + gh_cuda_agg_bytes_per_row(ncols);
}

gh_status
gh_cuda_probe_aggregate(gh_engine *e, void *probe, uint64_t first, size_t count,
						const gh_joinagg *spec, gh_groups **out)
{
	gh_cuda_probe *pr = (gh_cuda_probe *) probe;
	int			ncols = spec->ncols;
	int			m = ncols > 0 ? ncols : 1;
	gh_cuda_ctx ctx;
	gh_cuda_agg_rows rows;
	gh_dbuf<uint64_t> okeys,
				ikeys;
	std::unique_ptr<gh_dbuf<uint64_t>[]> src(new (std::nothrow) gh_dbuf<uint64_t>[m]);
	std::unique_ptr<gh_dbuf<uint8_t>[]> src_nulls(new (std::nothrow) gh_dbuf<uint8_t>[m]);
	std::unique_ptr<gather_col[]> gcols(new (std::nothrow) gather_col[m]);
	gh_dbuf<gather_col> dcols;
	gh_dbuf<gh_pair> pairs;

	*out = nullptr;
	if (src == nullptr || src_nulls == nullptr || gcols == nullptr)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory grouping %zu pairs", count);
	GH_TRY(rows.init(e, ncols));
	GH_TRY(gh_cuda_enter(e, pr->dev, &ctx));

	/* the spec's arrays: outer ones by probe key index, inner by row number */
	if (spec->outer_keys != nullptr)
		GH_TRY(gh_cuda_stage(&ctx, spec->outer_keys, pr->n, okeys, "outer group keys"));
	if (spec->inner_keys != nullptr)
		GH_TRY(gh_cuda_stage(&ctx, spec->inner_keys, spec->inner_rows, ikeys,
							 "inner group keys"));
	for (int c = 0; c < ncols; c++)
	{
		size_t		len = col_is_inner(spec, c) ? spec->inner_rows : pr->n;

		GH_TRY(gh_cuda_stage(&ctx, (const uint64_t *) spec->cols[c].values, len, src[c],
							 "join aggregate values"));
		if (spec->cols[c].nulls != nullptr)
			GH_TRY(gh_cuda_stage(&ctx, spec->cols[c].nulls, len, src_nulls[c],
								 "join aggregate null flags"));
	}

	/* the pairs, and a row made of each */
	GH_TRY(pairs.alloc(&ctx, count, "pairs to group"));
	GH_TRY(gh_cuda_probe_pairs(&ctx, pr, first, count, pairs.p));
	GH_TRY(rows.keys.alloc(&ctx, count, "pair group keys"));
	for (int c = 0; c < ncols; c++)
	{
		GH_TRY(rows.values[c].alloc(&ctx, count, "pair values"));
		if (spec->cols[c].nulls != nullptr)
			GH_TRY(rows.nulls[c].alloc(&ctx, count, "pair null flags"));
		gcols[c].src = src[c].p;
		gcols[c].src_nulls = src_nulls[c].p;
		gcols[c].dst = rows.values[c].p;
		gcols[c].dst_nulls = rows.nulls[c].p;
		gcols[c].inner = col_is_inner(spec, c);
	}
	GH_TRY(gh_cuda_stage(&ctx, gcols.get(), (size_t) ncols, dcols, "gather columns"));
	if (count > 0)
	{
		gather_pair_rows<<<gh_cuda_grid(count, GH_CUDA_BLOCK), GH_CUDA_BLOCK, 0, ctx.d->stream>>>(
			pairs.p, count, okeys.p, ikeys.p, rows.keys.p, dcols.p, ncols);
		GH_CUDA_LAUNCHED(e, "gather_pair_rows");
	}

	/* only the rows are needed from here on (frees are stream-ordered) */
	pairs.reset();
	dcols.reset();
	okeys.reset();
	ikeys.reset();
	for (int c = 0; c < ncols; c++)
	{
		src[c].reset();
		src_nulls[c].reset();
	}
	return gh_cuda_aggregate_device(&ctx, rows, count, spec->cols, ncols, out);
}
