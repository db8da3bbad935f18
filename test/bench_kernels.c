/*-------------------------------------------------------------------------
 *
 * bench_kernels.c
 *	  gpuhash's kernel benchmark (gh_bench) on one GPU, without PostgreSQL,
 *	  in the line format of the outside anchors (test/anchors), which
 *	  test/bench_anchors.sh (make bench-anchors) sets beside it: the
 *	  HashGraph build, probe and join, the BCHT build and its finds of
 *	  present and absent keys at a given load factor, and the aggregation
 *	  into n/16 groups and into 4096.
 *
 * Usage: bench_kernels LOG2_N LOAD_FACTOR REPS [bcht]
 *
 * n = 2^LOG2_N keys generated on device 0 (cuda/README, "Benchmarks");
 * LOAD_FACTOR is BCHT's; REPS timed runs after a warm-up, median reported.
 * "bcht" leaves out the structures the load factor does not change
 * (HashGraph, aggregation).  Prints one tab-separated line per operation:
 *
 *	library  operation  n  ms  G keys/s  check  GB/s
 *
 * library: "gpuhash HashGraph", "gpuhash BCHT", "gpuhash aggregate";
 * operation: "build", "find, present", "find, absent", "join",
 * "aggregate N/16 groups", "aggregate 4096 groups".  check is gh_bench's (rows or distinct keys
 * built, probes that found a match, pairs joined, groups made); GB/s its
 * bytes_moved, the least device-memory traffic of the operation, over the
 * time.  Exits 1 if an operation failed (its line left out, the reason on
 * stderr).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

int
main(int argc, char **argv)
{
	static const struct
	{
		const char *library;
		const char *operation;
		gh_bench_op op;
		gh_kind		kind;
		bool		load_factor;	/* the load factor applies */
	}			ops[] = {
		{"gpuhash HashGraph", "build", GH_BENCH_BUILD, GH_KIND_HASHGRAPH, false},
		{"gpuhash HashGraph", "find, present", GH_BENCH_PROBE, GH_KIND_HASHGRAPH, false},
		{"gpuhash HashGraph", "join", GH_BENCH_JOIN, GH_KIND_HASHGRAPH, false},
		{"gpuhash BCHT", "build", GH_BENCH_BUILD, GH_KIND_BCHT, true},
		{"gpuhash BCHT", "find, present", GH_BENCH_FIND_HIT, GH_KIND_BCHT, true},
		{"gpuhash BCHT", "find, absent", GH_BENCH_FIND_MISS, GH_KIND_BCHT, true},
		{"gpuhash aggregate", "aggregate N/16 groups", GH_BENCH_AGGREGATE, GH_KIND_AUTO, false},
		{"gpuhash aggregate", "aggregate 4096 groups", GH_BENCH_AGGREGATE_FEW, GH_KIND_AUTO, false},
	};
	gh_device_info info;
	gh_options	opt;
	gh_engine  *e = NULL;
	char		err[256] = "";
	int			log2n,
				reps,
				failed = 0;
	double		load_factor;
	bool		bcht_only;
	size_t		n;

	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "bcht") != 0))
	{
		fprintf(stderr, "usage: bench_kernels LOG2_N LOAD_FACTOR REPS [bcht]\n");
		return 2;
	}
	log2n = atoi(argv[1]);
	load_factor = atof(argv[2]);
	reps = atoi(argv[3]);
	bcht_only = argc == 5;
	if (log2n < 1 || log2n > 32 || !(load_factor > 0 && load_factor <= 0.99) || reps < 1)
	{
		fprintf(stderr, "bench_kernels: LOG2_N in [1, 32], LOAD_FACTOR in (0, 0.99], REPS >= 1\n");
		return 2;
	}
	n = (size_t) 1 << log2n;
	if (gh_list_devices(&info, 1) == 0)
	{
		fprintf(stderr, "bench_kernels: no GPU is visible\n");
		return 1;
	}

	memset(&opt, 0, sizeof(opt));
	opt.backend = GH_BACKEND_CUDA;
	opt.bcht_load_factor = load_factor;
	if (gh_open(&opt, &e, err, sizeof(err)) != GH_OK)
	{
		fprintf(stderr, "bench_kernels: gh_open: %s\n", err);
		return 1;
	}
	fprintf(stderr, "bench_kernels: GPU %d, %s, 2^%d keys, BCHT load factor %.2f, %d runs\n",
			info.id, info.name, log2n, load_factor, reps);
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
	{
		gh_bench_result r;

		if (bcht_only && !ops[o].load_factor)
			continue;
		memset(&r, 0, sizeof(r));
		if (gh_bench(e, ops[o].op, ops[o].kind, n, reps, load_factor, &r) != GH_OK)
		{
			fprintf(stderr, "bench_kernels: %s %s: %s\n", ops[o].library, ops[o].operation,
					gh_last_error(e));
			failed++;
			continue;
		}
		printf("%s\t%s\t%zu\t%.3f\t%.2f\t%llu\t%.1f\n", ops[o].library, ops[o].operation, n,
			   r.ms, r.mkeys_per_s / 1000, (unsigned long long) r.check,
			   r.ms > 0 ? r.bytes_moved / r.ms / 1e6 : 0.0);
		fflush(stdout);
	}
	gh_close(e);
	return failed ? 1 : 0;
}
