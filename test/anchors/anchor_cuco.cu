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

#define ANCHOR_NAME "anchor_cuco"
#include "anchor_common.cuh"

#define LIBRARY "cuCollections static_map"

/* cuco's reserved empty key and value: the all-ones word, which no value (< n)
 * and no key equals (anchor_common.cuh) */
#define EMPTY	keys<uint64_t>::empty

typedef cuco::pair<uint64_t, uint64_t> pair_t;
typedef cuco::static_map<uint64_t, uint64_t> map_t;

static int
run(int log2n, double load_factor, int reps)
{
	size_t		n = (size_t) 1 << log2n;
	device_arrays<uint64_t, pair_t> a;

	a.make(n);

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
			map.insert_async(a.pairs, a.pairs + n);
			t.end(r);
		}
		report(LIBRARY, "build", n, t.median(), map.size(), 16.0 * n);
		report_finds(LIBRARY, a, reps, 16.0 * n, [&] (uint64_t *probe, uint64_t *values)
		{
			map.find_async(probe, probe + n, values);
		});
	}
	a.release();
	return 0;
}

int
main(int argc, char **argv)
{
	return anchor_main(argc, argv, run);
}
