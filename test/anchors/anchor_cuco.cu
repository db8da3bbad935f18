/*-------------------------------------------------------------------------
 *
 * anchor_cuco.cu
 *	  An outside anchor for gpuhash's kernel benchmark (test/bench_kernels.c):
 *	  cuCollections' cuco::static_map<uint64_t, uint64_t> on the same keys,
 *	  sizes and load factor, timed the same way.  Built by
 *	  test/bench_anchors.sh (make bench-anchors) against a cuCollections
 *	  checkout the user gives (CUCO_DIR); never part of the extension.
 *
 * Usage: anchor_cuco LOG2_N LOAD_FACTOR REPS
 *
 * The data are gh_bench's (cuda/cuda_bench.cu): build key i =
 * gh_hash64(i, BENCH_SEED) with value i, for i < n; present probe key j =
 * build key number gh_range(gh_hash64(j, BENCH_POS_SEED), n); absent probe
 * key j = gh_hash64(n + j, BENCH_SEED).  All are made on the device.  The
 * map's capacity is n / LOAD_FACTOR (cuco rounds it up to a size its
 * probing scheme accepts); its probing scheme, hash and window are cuco's
 * defaults.  Each operation is timed with CUDA events around the library
 * call alone (insert_async, find_async): one warm-up run, then the median of
 * REPS runs; every build starts from a cleared map (the clear untimed).
 *
 * Prints one tab-separated line per operation, as bench_kernels does:
 *
 *	library  operation  n  ms  G keys/s  check  GB/s
 *
 * operation: "build", "find, present", "find, absent".  check: build, the
 * pairs in the map afterwards (n); finds, the probes that returned their
 * key's value (n present, 0 absent).  GB/s: the pairs read (16n bytes) for
 * the build, the keys read and the values written (16n) for a find.
 *
 * Written against cuCollections dev at dc0f9fc2 (October 2024).  Its
 * headers, like those of every earlier commit with this API, use
 * thrust::identity, which CCCL 3 (CUDA 13) removed: with CCCL 3 this file
 * defines an equivalent thrust::identity before including cuco.
 *
 *-------------------------------------------------------------------------
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include <cuda/std/utility>
#include <thrust/functional.h>

#if defined(CCCL_MAJOR_VERSION) && CCCL_MAJOR_VERSION >= 3
namespace thrust
{
/* thrust::identity as CCCL 2 had it: identity<T> and identity<> */
template <class T = void>
struct identity
{
	__host__ __device__ constexpr const T &operator() (const T &x) const noexcept
	{
		return x;
	}
};
template <>
struct identity<void>
{
	template <class U>
	__host__ __device__ constexpr U &&operator() (U &&x) const noexcept
	{
		return cuda::std::forward<U>(x);
	}
};
}								/* namespace thrust */
#endif

#include <cuco/static_map.cuh>

#include "hash.h"

#define LIBRARY "cuCollections static_map"

/* gh_bench's seeds (cuda/cuda_bench.cuh) */
#define BENCH_SEED		UINT64_C(0x5851f42d4c957f2d)
#define BENCH_POS_SEED	UINT64_C(0x14057b7ef767814f)

/* cuco's reserved empty key and value.  No value equals it (values are
 * < n); a key could in principle (gh_hash64 is a bijection): it would be
 * replaced by the key of number 2^64 - 1, which no run reaches. */
#define EMPTY	UINT64_C(0xffffffffffffffff)

typedef cuco::pair<uint64_t, uint64_t> pair_t;
typedef cuco::static_map<uint64_t, uint64_t> map_t;

#define CHECK(call) \
	do { \
		cudaError_t err_ = (call); \
		if (err_ != cudaSuccess) \
		{ \
			fprintf(stderr, "anchor_cuco: %s: %s\n", #call, cudaGetErrorString(err_)); \
			exit(1); \
		} \
	} while (0)

static __device__ uint64_t
key_of(uint64_t i)
{
	uint64_t	k = gh_hash64(i, BENCH_SEED);

	return k == EMPTY ? gh_hash64(EMPTY, BENCH_SEED) : k;
}

static __device__ uint64_t
position_of(uint64_t j, uint64_t n)
{
	return gh_range(gh_hash64(j, BENCH_POS_SEED), n);
}

__global__ void
make_pairs(pair_t *pairs, size_t n)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		pairs[i] = pair_t(key_of(i), i);
}

__global__ void
make_probe_keys(uint64_t *keys, size_t n, bool present)
{
	for (size_t j = blockIdx.x * (size_t) blockDim.x + threadIdx.x; j < n;
		 j += (size_t) gridDim.x * blockDim.x)
		keys[j] = present ? key_of(position_of(j, n)) : key_of(n + j);
}

/* *hits += the probes whose result is their key's value (present) or any
 * value at all (absent) */
__global__ void
count_hits(const uint64_t *values, size_t n, bool present, unsigned long long *hits)
{
	unsigned long long mine = 0;

	for (size_t j = blockIdx.x * (size_t) blockDim.x + threadIdx.x; j < n;
		 j += (size_t) gridDim.x * blockDim.x)
		mine += present ? values[j] == position_of(j, n) : values[j] != EMPTY;
	if (mine != 0)
		atomicAdd(hits, mine);
}

static unsigned
grid_of(size_t n)
{
	return (unsigned) std::min<size_t>((n + 255) / 256, 65536);
}

/* Events around the library call alone. */
struct timer
{
	cudaEvent_t start,
				stop;
	std::vector<float> ms;

	timer()
	{
		CHECK(cudaEventCreate(&start));
		CHECK(cudaEventCreate(&stop));
	}
	~timer()
	{
		(void) cudaEventDestroy(start);
		(void) cudaEventDestroy(stop);
	}
	void begin()
	{
		CHECK(cudaEventRecord(start, 0));
	}
	/* keep the time unless the run is the warm-up (run < 0) */
	void end(int run)
	{
		float		t = 0;

		CHECK(cudaEventRecord(stop, 0));
		CHECK(cudaEventSynchronize(stop));
		CHECK(cudaGetLastError());
		CHECK(cudaEventElapsedTime(&t, start, stop));
		if (run >= 0)
			ms.push_back(t);
	}
	double median()
	{
		std::sort(ms.begin(), ms.end());
		return ms[ms.size() / 2];
	}
};

static void
report(const char *op, size_t n, double ms, unsigned long long check, double bytes)
{
	printf("%s\t%s\t%zu\t%.3f\t%.2f\t%llu\t%.1f\n", LIBRARY, op, n, ms,
		   ms > 0 ? n / ms / 1e6 : 0.0, check, ms > 0 ? bytes / ms / 1e6 : 0.0);
	fflush(stdout);
}

static int
run(int log2n, double load_factor, int reps)
{
	size_t		n = (size_t) 1 << log2n;
	pair_t	   *pairs;
	uint64_t   *keys,
			   *values;
	unsigned long long *hits;

	CHECK(cudaMalloc(&pairs, n * sizeof(pair_t)));
	CHECK(cudaMalloc(&keys, n * sizeof(uint64_t)));
	CHECK(cudaMalloc(&values, n * sizeof(uint64_t)));
	CHECK(cudaMalloc(&hits, sizeof(unsigned long long)));
	make_pairs<<<grid_of(n), 256>>>(pairs, n);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());

	{
		map_t		map{(size_t) (n / load_factor), cuco::empty_key<uint64_t>{EMPTY},
						cuco::empty_value<uint64_t>{EMPTY}};
		timer		t;

		CHECK(cudaDeviceSynchronize());
		fprintf(stderr, "anchor_cuco: 2^%d keys, capacity %zu (load factor %.3f)\n",
				log2n, (size_t) map.capacity(), (double) n / map.capacity());
		for (int r = -1; r < reps; r++)
		{
			map.clear_async();
			CHECK(cudaDeviceSynchronize());
			t.begin();
			map.insert_async(pairs, pairs + n);
			t.end(r);
		}
		report("build", n, t.median(), map.size(), 16.0 * n);

		for (int present = 1; present >= 0; present--)
		{
			timer		f;
			unsigned long long nhits = 0;

			make_probe_keys<<<grid_of(n), 256>>>(keys, n, present);
			CHECK(cudaGetLastError());
			CHECK(cudaDeviceSynchronize());
			CHECK(cudaMemset(values, 0, n * sizeof(uint64_t)));
			for (int r = -1; r < reps; r++)
			{
				f.begin();
				map.find_async(keys, keys + n, values);
				f.end(r);
			}
			CHECK(cudaMemset(hits, 0, sizeof(unsigned long long)));
			count_hits<<<grid_of(n), 256>>>(values, n, present, hits);
			CHECK(cudaGetLastError());
			CHECK(cudaMemcpy(&nhits, hits, sizeof(nhits), cudaMemcpyDeviceToHost));
			report(present ? "find, present" : "find, absent", n, f.median(), nhits, 16.0 * n);
		}
	}
	CHECK(cudaFree(pairs));
	CHECK(cudaFree(keys));
	CHECK(cudaFree(values));
	CHECK(cudaFree(hits));
	return 0;
}

int
main(int argc, char **argv)
{
	int			log2n,
				reps,
				ndev = 0;
	double		load_factor;
	cudaError_t err;

	if (argc != 4)
	{
		fprintf(stderr, "usage: anchor_cuco LOG2_N LOAD_FACTOR REPS\n");
		return 2;
	}
	log2n = atoi(argv[1]);
	load_factor = atof(argv[2]);
	reps = atoi(argv[3]);
	if (log2n < 1 || log2n > 30 || !(load_factor > 0 && load_factor < 1) || reps < 1)
	{
		fprintf(stderr, "anchor_cuco: LOG2_N in [1, 30], LOAD_FACTOR in (0, 1), REPS >= 1\n");
		return 2;
	}
	err = cudaGetDeviceCount(&ndev);
	if (err != cudaSuccess || ndev == 0)
	{
		fprintf(stderr, "anchor_cuco: no GPU is visible (%s)\n",
				err != cudaSuccess ? cudaGetErrorString(err) : "no devices");
		return 1;
	}
	try
	{
		return run(log2n, load_factor, reps);
	}
	catch (const std::exception &ex)
	{
		fprintf(stderr, "anchor_cuco: %s\n", ex.what());
		return 1;
	}
}
