#!/usr/bin/env bash
# bench.sh: gpuhash's benchmarks as markdown tables (`make bench`).
#
# 1. Kernels: gpuhash_bench() for every structure and operation at 2^20,
#    2^24 and 2^27 keys on the GPU, and at 2^20 keys on the CPU backend for
#    comparison (CPU only, where there is no GPU).  Keys are random 64-bit
#    values generated on the device; the time is the median of REPS runs
#    after a warm-up, without host transfers.
# 2. Queries (GH_BENCH_QUERIES=1): test/bench_queries.sh, a join and GROUP BY
#    on generated tables, gpuhash against PostgreSQL's own plans (its own
#    environment: FACT_ROWS, REPS, WORKERS, ...).
# 2b. Heap pages (GH_BENCH_PAGES=1): test/bench_queries.sh with BENCH_PAGES=1:
#    the same tables, PostgreSQL vs gpuhash reading rows through the Seq Scan,
#    reading pages in the backend, and shipping pages to the GPU.
# 2c. Host memory (GH_BENCH_MEMORY=1): test/bench_memory.sh: the peak host
#    memory of the join and both GROUP BYs, gpuhash and PostgreSQL, against
#    twice the key columns plus the output.
# 3. Star Schema Benchmark (GH_BENCH_SSB=1): test/bench_ssb.sh, its 13
#    queries on generated data, gpuhash against PostgreSQL's own plans (its
#    own environment: SF, REPS, WORKERS, BREAKDOWN, ...; on the CPU backend
#    where there is no GPU).
# 4. TPC-H-shaped queries (GH_BENCH_TPCH=1): test/bench_workload.sh with
#    WORKLOAD=tpch, the 22 query shapes on generated data, the same way.
#
# Environment: REPS (5), GPU_SIZES ("1048576 16777216 134217728"),
# CPU_SIZES ("1048576"), and as for run-tests.sh: GH_USE_RUNNING_SERVER=1 uses
# the server PGHOST/PGPORT name instead of a throwaway one.
set -euo pipefail
cd "$(dirname "$0")/.."
. test/common.sh

reps=${REPS:-5}
gpu_sizes=${GPU_SIZES:-"1048576 16777216 134217728"}
cpu_sizes=${CPU_SIZES:-"1048576"}
work=$(mktemp -d /tmp/gpuhash-bench.XXXXXX)
trap 'gh_server_down; rm -rf "$work"' EXIT

make -s >/dev/null
gh_install
gh_server_up "$work" >&2
db=gpuhash_bench
psql -X -q -d postgres -c "SET client_min_messages = warning" \
	-c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
export PGDATABASE=$db
psql="psql -X -q -v ON_ERROR_STOP=1"
$psql -c "CREATE EXTENSION gpuhash"

# rows SIZES DEVICE: one markdown row per measurement
rows() {
	local sizes=$1 device=$2
	$psql -At -c "
		SELECT format('| %s | %s | %s | %s | %s | %s | %s |',
		              b.structure, b.operation,
		              CASE WHEN b.keys & (b.keys - 1) = 0
		                   THEN '2^' || (round(log(2, b.keys)))::int ELSE b.keys::text END,
		              b.device,
		              to_char(b.milliseconds, 'FM999999990.000'),
		              to_char(b.mkeys_per_s, 'FM999999990.0'),
		              to_char(b.gb_per_s, 'FM999999990.00'))
		FROM unnest(string_to_array('$sizes', ' ')::bigint[]) AS n(keys),
		     gpuhash_bench(keys => n.keys, device => '$device', repetitions => $reps) AS b
		WHERE b.device_id IS NULL OR b.devices = b.device_id::text"
}

gpu=$($psql -At -c "SELECT name FROM gpuhash_devices() ORDER BY id LIMIT 1")
echo "### Kernels (gpuhash_bench, median of $reps runs)"
echo
[ -n "$gpu" ] && echo "GPU: $gpu ($($psql -At -c "SELECT count(*) FROM gpuhash_devices()") visible)."
echo "CPU backend: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'), one thread."
echo
echo "| structure | operation | keys | device | ms | Mkeys/s | GB/s |"
echo "|---|---|---|---|---:|---:|---:|"
if [ -n "$gpu" ]; then
	rows "$gpu_sizes" gpu
else
	echo "bench: no GPU visible; the CPU backend alone" >&2
fi
rows "$cpu_sizes" cpu

if [ "${GH_BENCH_QUERIES:-0}" = 1 ]; then
	echo
	echo "### Queries (test/bench_queries.sh)"
	echo
	bash test/bench_queries.sh
fi

if [ "${GH_BENCH_PAGES:-0}" = 1 ]; then
	echo
	echo "### Heap pages (test/bench_queries.sh, BENCH_PAGES=1)"
	echo
	BENCH_PAGES=1 bash test/bench_queries.sh
fi

if [ "${GH_BENCH_MEMORY:-0}" = 1 ]; then
	echo
	echo "### Host memory (test/bench_memory.sh)"
	echo
	bash test/bench_memory.sh
fi

if [ "${GH_BENCH_SSB:-0}" = 1 ]; then
	echo
	echo "### Star Schema Benchmark (test/bench_ssb.sh)"
	echo
	GPUHASH_DEVICE=${GPUHASH_DEVICE:-$([ -n "$gpu" ] && echo gpu || echo cpu)} bash test/bench_ssb.sh
fi

if [ "${GH_BENCH_TPCH:-0}" = 1 ]; then
	echo
	echo "### TPC-H-shaped queries (test/bench_workload.sh, WORKLOAD=tpch)"
	echo
	GPUHASH_DEVICE=${GPUHASH_DEVICE:-$([ -n "$gpu" ] && echo gpu || echo cpu)} \
		WORKLOAD=tpch bash test/bench_workload.sh
fi
