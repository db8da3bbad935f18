/*-------------------------------------------------------------------------
 *
 * anchor_common.cuh
 *	  What the outside anchors of gpuhash's kernel benchmark (anchor_cuco.cu,
 *	  anchor_bght.cu) share: gh_bench's keys made on the device, the check
 *	  of a CUDA call, the timing with CUDA events and its median, the output
 *	  line, the device arrays of a run and its timed finds, and main's
 *	  arguments and check for a GPU.
 *
 * A program defines ANCHOR_NAME (its name, which starts its messages on
 * stderr) and includes this file after its library's headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_ANCHOR_COMMON_CUH
#define GPUHASH_ANCHOR_COMMON_CUH

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "hash.h"

#ifndef ANCHOR_NAME
#error "define ANCHOR_NAME before including anchor_common.cuh"
#endif

/* gh_bench's seeds (cuda/cuda_bench.cuh) */
#define BENCH_SEED		UINT64_C(0x5851f42d4c957f2d)
#define BENCH_POS_SEED	UINT64_C(0x14057b7ef767814f)

#define CHECK(call) \
	do { \
		cudaError_t err_ = (call); \
		if (err_ != cudaSuccess) \
		{ \
			fprintf(stderr, ANCHOR_NAME ": %s: %s\n", #call, cudaGetErrorString(err_)); \
			exit(1); \
		} \
	} while (0)

/*
 * keys<K>::of(i): the key of number i, K bits wide.  The all-ones key,
 * keys<K>::empty, is the libraries' empty-slot sentinel (and their empty or
 * not-found value, which no value i < n equals); a key equal to it is
 * replaced by the key of the largest number, which no run reaches (i < 2n <=
 * 2^31), so the keys stay distinct.  Neither replacement happens for i <
 * 2^31 with these seeds.  The 64-bit keys are gh_bench's; anchor_bght.cu
 * adds 32-bit ones.
 */
template <typename K>
struct keys;

template <>
struct keys<uint64_t>
{
	static constexpr uint64_t empty = UINT64_C(0xffffffffffffffff);

	static __host__ __device__ uint64_t mix(uint64_t i)
	{
		return gh_hash64(i, BENCH_SEED);
	}
	static __host__ __device__ uint64_t of(uint64_t i)
	{
		uint64_t	k = mix(i);

		return k == empty ? mix(empty) : k;
	}
};

/* the number of the build key that present probe key j looks for */
static __device__ uint64_t
position_of(uint64_t j, uint64_t n)
{
	return gh_range(gh_hash64(j, BENCH_POS_SEED), n);
}

/* pairs[i] = (key i, i), for i < n */
template <typename K, typename Pair>
__global__ void
make_pairs(Pair *pairs, size_t n)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		pairs[i] = Pair(keys<K>::of(i), (K) i);
}

template <typename K>
__global__ void
make_probe_keys(K *probe, size_t n, bool present)
{
	for (size_t j = blockIdx.x * (size_t) blockDim.x + threadIdx.x; j < n;
		 j += (size_t) gridDim.x * blockDim.x)
		probe[j] = present ? keys<K>::of(position_of(j, n)) : keys<K>::of(n + j);
}

/* *hits += the probes whose result is their key's value (present) or any
 * value at all (absent) */
template <typename K>
__global__ void
count_hits(const K *values, size_t n, bool present, unsigned long long *hits)
{
	unsigned long long mine = 0;

	for (size_t j = blockIdx.x * (size_t) blockDim.x + threadIdx.x; j < n;
		 j += (size_t) gridDim.x * blockDim.x)
		mine += present ? values[j] == (K) position_of(j, n) : values[j] != keys<K>::empty;
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
	/* ms since begin() */
	float lap()
	{
		float		t = 0;

		CHECK(cudaEventRecord(stop, 0));
		CHECK(cudaEventSynchronize(stop));
		CHECK(cudaGetLastError());
		CHECK(cudaEventElapsedTime(&t, start, stop));
		return t;
	}
	/* keep the time unless the run is the warm-up (run < 0) */
	void end(int run)
	{
		float		t = lap();

		if (run >= 0)
			ms.push_back(t);
	}
	double median()
	{
		std::sort(ms.begin(), ms.end());
		return ms[ms.size() / 2];
	}
};

/* One operation's line: library  operation  n  ms  G keys/s  check  GB/s */
static void
report(const char *library, const char *op, size_t n, double ms,
	   unsigned long long check, double bytes)
{
	printf("%s\t%s\t%zu\t%.3f\t%.2f\t%llu\t%.1f\n", library, op, n, ms,
		   ms > 0 ? n / ms / 1e6 : 0.0, check, ms > 0 ? bytes / ms / 1e6 : 0.0);
	fflush(stdout);
}

/*
 * The device arrays of a run: n pairs (key i, value i), n probe keys, the n
 * values a find returns and a count of hits.  make() allocates them and
 * makes the pairs; release() frees them.
 */
template <typename K, typename Pair>
struct device_arrays
{
	size_t		n;
	Pair	   *pairs;
	K		   *probe,
			   *values;
	unsigned long long *hits;

	void make(size_t count)
	{
		n = count;
		CHECK(cudaMalloc(&pairs, n * sizeof(Pair)));
		CHECK(cudaMalloc(&probe, n * sizeof(K)));
		CHECK(cudaMalloc(&values, n * sizeof(K)));
		CHECK(cudaMalloc(&hits, sizeof(unsigned long long)));
		make_pairs<K><<<grid_of(n), 256>>>(pairs, n);
		CHECK(cudaGetLastError());
		CHECK(cudaDeviceSynchronize());
	}
	void release()
	{
		CHECK(cudaFree(pairs));
		CHECK(cudaFree(probe));
		CHECK(cudaFree(values));
		CHECK(cudaFree(hits));
	}
};

/*
 * The finds of present and then of absent keys, a line each: the probe keys
 * made and the values cleared (untimed), find(probe, values), the library
 * call, timed (one warm-up run, then the median of reps runs), then the
 * probes that returned their key's value counted.
 */
template <typename K, typename Pair, typename Find>
static void
report_finds(const char *library, device_arrays<K, Pair> &a, int reps, double bytes,
			 Find find)
{
	size_t		n = a.n;

	for (int present = 1; present >= 0; present--)
	{
		timer		f;
		unsigned long long nhits = 0;

		make_probe_keys<K><<<grid_of(n), 256>>>(a.probe, n, present);
		CHECK(cudaGetLastError());
		CHECK(cudaMemset(a.values, 0, n * sizeof(K)));
		CHECK(cudaDeviceSynchronize());
		for (int r = -1; r < reps; r++)
		{
			f.begin();
			find(a.probe, a.values);
			f.end(r);
		}
		CHECK(cudaMemset(a.hits, 0, sizeof(unsigned long long)));
		count_hits<K><<<grid_of(n), 256>>>(a.values, n, present, a.hits);
		CHECK(cudaGetLastError());
		CHECK(cudaMemcpy(&nhits, a.hits, sizeof(nhits), cudaMemcpyDeviceToHost));
		report(library, present ? "find, present" : "find, absent", n, f.median(), nhits,
			   bytes);
	}
}

/*
 * main's work: reads LOG2_N LOAD_FACTOR REPS (exit status 2 if they are
 * off), checks that a GPU is visible (1 if not), then returns run's status
 * (1 if it throws, with the exception's message).
 */
static int
anchor_main(int argc, char **argv,
			int (*run) (int log2n, double load_factor, int reps))
{
	int			log2n,
				reps,
				ndev = 0;
	double		load_factor;
	cudaError_t err;

	if (argc != 4)
	{
		fprintf(stderr, "usage: " ANCHOR_NAME " LOG2_N LOAD_FACTOR REPS\n");
		return 2;
	}
	log2n = atoi(argv[1]);
	load_factor = atof(argv[2]);
	reps = atoi(argv[3]);
	if (log2n < 1 || log2n > 30 || !(load_factor > 0 && load_factor < 1) || reps < 1)
	{
		fprintf(stderr, ANCHOR_NAME ": LOG2_N in [1, 30], LOAD_FACTOR in (0, 1), REPS >= 1\n");
		return 2;
	}
	err = cudaGetDeviceCount(&ndev);
	if (err != cudaSuccess || ndev == 0)
	{
		fprintf(stderr, ANCHOR_NAME ": no GPU is visible (%s)\n",
				err != cudaSuccess ? cudaGetErrorString(err) : "no devices");
		return 1;
	}
	try
	{
		return run(log2n, load_factor, reps);
	}
	catch (const std::exception &ex)
	{
		fprintf(stderr, ANCHOR_NAME ": %s\n", ex.what());
		return 1;
	}
}

#endif							/* GPUHASH_ANCHOR_COMMON_CUH */
