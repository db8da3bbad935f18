/*-------------------------------------------------------------------------
 *
 * cuda_bench.cuh
 *	  What the CUDA benchmarks of one GPU (cuda_bench.cu) and of several
 *	  (cuda_bench_multi.cu) share: the data they generate.
 *
 * Every generator takes the global number of its first row, so that a
 * slice of the data generated on one device of several is the same as the
 * same rows generated on one device.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_CUDA_BENCH_CUH
#define GPUHASH_CUDA_BENCH_CUH

#include "cuda_tables.cuh"

#define BENCH_SEED		UINT64_C(0x5851f42d4c957f2d)
#define BENCH_POS_SEED	UINT64_C(0x14057b7ef767814f)
#define BENCH_VAL_SEED	UINT64_C(0x2545f4914f6cdd1d)

/* scratch words the benchmarks use */
#define SCRATCH_HITS 16

/* keys[i] = gh_hash64(first + i, BENCH_SEED); rows[i] = first + i (if rows) */
__global__ void make_distinct_keys(uint64_t *__restrict__ keys,
								   uint64_t *__restrict__ rows, size_t n,
								   uint64_t first);

/* present probe keys number first + i of a build of nbuild keys */
__global__ void make_present_keys(uint64_t *__restrict__ keys, size_t n,
								  size_t nbuild, uint64_t first);

/* rows first + i of the aggregation input: ndistinct keys, int64 values */
__global__ void make_group_keys(uint64_t *__restrict__ keys,
								int64_t *__restrict__ values, size_t n,
								size_t ndistinct, uint64_t first);

/* *hits += the number of non-zero counts */
__global__ void count_nonzero(const uint32_t *__restrict__ counts, size_t n,
							  unsigned long long *hits);

/* The bytes of a table that a build writes (bytes_moved). */
size_t		gh_cuda_bench_table_bytes(const gh_cuda_part *p);

/* gh_cuda_bench on an engine of several devices. */
gh_status	gh_cuda_bench_multi(gh_engine *e, gh_bench_op op, gh_kind kind,
								size_t n, int reps, double load_factor,
								gh_bench_result *out);

#endif							/* GPUHASH_CUDA_BENCH_CUH */
