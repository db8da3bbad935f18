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
#include <random>

#include <bght/bcht.hpp>

#define ANCHOR_NAME "anchor_bght"
#include "anchor_common.cuh"

/* attempts at one build before giving up (BGHT's benchmark allows 50) */
#define MAX_ATTEMPTS 50

/* 32-bit keys: the numbering of anchor_common.cuh's keys<uint64_t> through a
 * 32-bit bijection */
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

/* Build, present and absent finds of one key width; false if a build failed. */
template <typename K>
static bool
run(const char *library, int log2n, double load_factor, int reps)
{
	typedef bght::pair<K, K> pair_t;
	typedef bght::bcht<K, K> table_t;
	size_t		n = (size_t) 1 << log2n;
	double		bytes = 2.0 * sizeof(K) * n;
	device_arrays<K, pair_t> a;
	bool		ok = true;

	a.make(n);

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
				inserted = table.insert(a.pairs, a.pairs + n);
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

		if (ok)
			report_finds(library, a, reps, bytes, [&] (K *probe, K *values)
			{
				table.find(probe, probe + n, values);
			});
	}
	a.release();
	return ok;
}

/* Both key widths; 1 if a build failed. */
static int
run_both(int log2n, double load_factor, int reps)
{
	bool		ok;

	ok = run<uint32_t>("BGHT bcht 32-bit", log2n, load_factor, reps);
	ok = run<uint64_t>("BGHT bcht 64-bit", log2n, load_factor, reps) && ok;
	return ok ? 0 : 1;
}

int
main(int argc, char **argv)
{
	return anchor_main(argc, argv, run_both);
}
