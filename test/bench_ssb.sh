#!/usr/bin/env bash
# bench_ssb.sh: the Star Schema Benchmark's 13 queries (test/ssb/), gpuhash
# on vs PostgreSQL's own plans: test/bench_workload.sh with WORKLOAD=ssb.
#
# Environment: as bench_workload.sh's (SF, REPS, WORKERS, GPUHASH_DEVICE,
# GPUHASH_FORCE, BREAKDOWN, LOADERS), and SSB_QUERIES (all, or names such as
# "q1.1 q3.2").
exec env WORKLOAD=ssb QUERIES="${SSB_QUERIES:-${QUERIES:-all}}" \
	bash "$(dirname "$0")/bench_workload.sh" "$@"
