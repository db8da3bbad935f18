/*-------------------------------------------------------------------------
 *
 * anchor_bght.cu
 *	  An outside anchor for gpuhash's kernel benchmark (test/bench_kernels.c):
 *	  BGHT's bucketed cuckoo hash table, bght::bcht (its defaults: buckets
 *	  of 16 slots, three MurmurHash3_32 functions), with 32-bit keys and
 *	  values and with 64-bit ones, on the same sizes and load factor as
 *	  gpuhash's BCHT, timed the same way.  Built by test/bench_anchors.sh
 *	  (make bench-anchors) against a BGHT checkout the user gives (BGHT_DIR);
 *	  never part of the extension.
 *
 * Usage: anchor_bght LOG2_N LOAD_FACTOR REPS
 *
 * 64-bit keys are gh_bench's (cuda/cuda_bench.cu): build key i =
 * gh_hash64(i, BENCH_SEED) with value i, for i < n; present probe key j =
 * build key number gh_range(gh_hash64(j, BENCH_POS_SEED), n); absent probe
 * key j = gh_hash64(n + j, BENCH_SEED).  32-bit keys follow the same
 * numbering through a 32-bit bijection instead of gh_hash64 (the low 32
 * bits of the 64-bit keys would repeat: some 2^21 equal pairs among 2^27
 * keys, which bcht's insert does not allow, and 1 absent key in 32 would be
 * found), so that here too the build keys are distinct and no absent key is
 * present.  All are made on the device.  The table holds n / LOAD_FACTOR
 * slots (rounded up to whole buckets).
 *
 * Each operation is timed with CUDA events around the library call alone
 * (insert, which reads back its success flag, and find): one warm-up run,
 * then the median of REPS runs; every build starts from a cleared table
 * (the clear untimed).  An insert that fails (a cuckoo chain too long) is
 * retried as BGHT's own benchmark does: cleared, new hash functions, again;
 * failed attempts are not timed and are counted on stderr.
 *
 * Prints one tab-separated line per operation, as bench_kernels does:
 *
 *	library  operation  n  ms  G keys/s  check  GB/s
 *
 * library: "BGHT bcht 32-bit", "BGHT bcht 64-bit"; operation: "build",
 * "find, present", "find, absent".  check: build, the pairs in the table
 * afterwards (n); finds, the probes that returned their key's value (n
 * present, 0 absent).  GB/s: the pairs read for the build, the keys read and
 * the values written for a find (16n bytes at 64 bits, 8n at 32).
 *
 * A 64-bit pair (16 bytes) is wider than libcu++'s lock-free atomics:
 * bcht's cuda::atomic<pair> then keeps a lock word beside every pair (32
 * bytes a slot) and takes it for each load and exchange, so the 64-bit row
 * measures that path; BGHT's own benchmarks use 32-bit keys and values.
 *
 * Written against BGHT main at 7584547 (April 2025), which compiles
 * unchanged with CUDA 13's CCCL 3.
 *
 *-------------------------------------------------------------------------
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <vector>

#include <bght/bcht.hpp>

#include "hash.h"

/* gh_bench's seeds (cuda/cuda_bench.cuh) */
#define BENCH_SEED		UINT64_C(0x5851f42d4c957f2d)
#define BENCH_POS_SEED	UINT64_C(0x14057b7ef767814f)

/* attempts at one build before giving up (BGHT's benchmark allows 50) */
#define MAX_ATTEMPTS 50

#define CHECK(call) \
	do { \
		cudaError_t err_ = (call); \
		if (err_ != cudaSuccess) \
		{ \
			fprintf(stderr, "anchor_bght: %s: %s\n", #call, cudaGetErrorString(err_)); \
			exit(1); \
		} \
	} while (0)

/*
 * The key of number i.  The all-ones key is bcht's empty-slot sentinel (and
 * the all-ones value its not-found value, which no value i < n equals); a
 * key equal to it is replaced by the key of the largest number, which no
 * run reaches (i < 2n <= 2^31), so the keys stay distinct.  Neither
 * replacement happens for i < 2^31 with these seeds.
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

template <>
struct keys<uint32_t>
{
	static constexpr uint32_t empty = 0xffffffffu;

	/* a bijection of 32-bit words (xor-shifts and odd multipliers) */
	static __host__ __device__ uint32_t mix(uint32_t x)
	{
		x ^= (uint32_t) BENCH_SEED;
		x ^= x >> 16;
		x *= 0x7feb352du;
		x ^= x >> 15;
		x *= 0x846ca68bu;
		x ^= x >> 16;
		return x;
	}
	static __host__ __device__ uint32_t of(uint64_t i)
	{
		uint32_t	k = mix((uint32_t) i);

		return k == empty ? mix(empty) : k;
	}
};

static __device__ uint64_t
position_of(uint64_t j, uint64_t n)
{
	return gh_range(gh_hash64(j, BENCH_POS_SEED), n);
}

template <typename K>
__global__ void
make_pairs(bght::pair<K, K> *pairs, size_t n)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		pairs[i] = bght::pair<K, K>(keys<K>::of(i), (K) i);
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

static void
report(const char *library, const char *op, size_t n, double ms,
	   unsigned long long check, double bytes)
{
	printf("%s\t%s\t%zu\t%.3f\t%.2f\t%llu\t%.1f\n", library, op, n, ms,
		   ms > 0 ? n / ms / 1e6 : 0.0, check, ms > 0 ? bytes / ms / 1e6 : 0.0);
	fflush(stdout);
}

/* Build, present and absent finds of one key width; false if a build failed. */
template <typename K>
static bool
run(const char *library, int log2n, double load_factor, int reps)
{
	typedef bght::pair<K, K> pair_t;
	typedef bght::bcht<K, K> table_t;
	size_t		n = (size_t) 1 << log2n;
	double		bytes = 2.0 * sizeof(K) * n;
	pair_t	   *pairs;
	K		   *probe,
			   *values;
	unsigned long long *hits;
	bool		ok = true;

	CHECK(cudaMalloc(&pairs, n * sizeof(pair_t)));
	CHECK(cudaMalloc(&probe, n * sizeof(K)));
	CHECK(cudaMalloc(&values, n * sizeof(K)));
	CHECK(cudaMalloc(&hits, sizeof(unsigned long long)));
	make_pairs<K><<<grid_of(n), 256>>>(pairs, n);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());

	{
		table_t		table((size_t) (n / load_factor), keys<K>::empty, keys<K>::empty);
		std::mt19937 rng(2);	/* BGHT's benchmark's seed */
		timer		t;
		int			failed = 0;

		CHECK(cudaDeviceSynchronize());
		fprintf(stderr, "anchor_bght: %s, 2^%d keys, capacity %zu slots (rounded up to buckets of %d)\n",
				library, log2n, (size_t) (n / load_factor), (int) table_t::bucket_size);
		for (int r = -1; r < reps && ok; r++)
		{
			for (;;)
			{
				bool		inserted;
				float		ms;

				table.clear();
				CHECK(cudaDeviceSynchronize());
				t.begin();
				inserted = table.insert(pairs, pairs + n);
				ms = t.lap();
				if (inserted)
				{
					/* the time of the attempt that succeeded */
					if (r >= 0)
						t.ms.push_back(ms);
					break;
				}
				if (++failed == MAX_ATTEMPTS)
				{
					ok = false;
					break;
				}
				table.randomize_hash_functions(rng);
			}
		}
		if (failed)
			fprintf(stderr, "anchor_bght: %s: %d failed build attempts%s\n", library, failed,
					ok ? " (retried with new hash functions, untimed)" : ", gave up");
		report(library, "build", n, ok ? t.median() : 0, table.size(), bytes);

		for (int present = 1; ok && present >= 0; present--)
		{
			timer		f;
			unsigned long long nhits = 0;

			make_probe_keys<K><<<grid_of(n), 256>>>(probe, n, present);
			CHECK(cudaGetLastError());
			CHECK(cudaMemset(values, 0, n * sizeof(K)));
			CHECK(cudaDeviceSynchronize());
			for (int r = -1; r < reps; r++)
			{
				f.begin();
				table.find(probe, probe + n, values);
				f.end(r);
			}
			CHECK(cudaMemset(hits, 0, sizeof(unsigned long long)));
			count_hits<K><<<grid_of(n), 256>>>(values, n, present, hits);
			CHECK(cudaGetLastError());
			CHECK(cudaMemcpy(&nhits, hits, sizeof(nhits), cudaMemcpyDeviceToHost));
			report(library, present ? "find, present" : "find, absent", n, f.median(), nhits,
				   bytes);
		}
	}
	CHECK(cudaFree(pairs));
	CHECK(cudaFree(probe));
	CHECK(cudaFree(values));
	CHECK(cudaFree(hits));
	return ok;
}

int
main(int argc, char **argv)
{
	int			log2n,
				reps,
				ndev = 0;
	double		load_factor;
	cudaError_t err;
	bool		ok;

	if (argc != 4)
	{
		fprintf(stderr, "usage: anchor_bght LOG2_N LOAD_FACTOR REPS\n");
		return 2;
	}
	log2n = atoi(argv[1]);
	load_factor = atof(argv[2]);
	reps = atoi(argv[3]);
	if (log2n < 1 || log2n > 30 || !(load_factor > 0 && load_factor < 1) || reps < 1)
	{
		fprintf(stderr, "anchor_bght: LOG2_N in [1, 30], LOAD_FACTOR in (0, 1), REPS >= 1\n");
		return 2;
	}
	err = cudaGetDeviceCount(&ndev);
	if (err != cudaSuccess || ndev == 0)
	{
		fprintf(stderr, "anchor_bght: no GPU is visible (%s)\n",
				err != cudaSuccess ? cudaGetErrorString(err) : "no devices");
		return 1;
	}
	try
	{
		ok = run<uint32_t>("BGHT bcht 32-bit", log2n, load_factor, reps);
		ok = run<uint64_t>("BGHT bcht 64-bit", log2n, load_factor, reps) && ok;
	}
	catch (const std::exception &ex)
	{
		fprintf(stderr, "anchor_bght: %s\n", ex.what());
		return 1;
	}
	return ok ? 0 : 1;
}
