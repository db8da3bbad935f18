#!/usr/bin/env bash
# bench_bigjoin.sh: a GpuHashJoin producing PAIRS joined rows (default 10^9)
# runs in bounded memory.  Two tables of SIDE_ROWS rows share their keys so
# that the join has PAIRS rows; EXPLAIN ANALYZE of a count over the join, with
# gpuhash forced on, prints the time and the node's statistics (chunks, device
# memory), and the backend's peak resident memory (VmHWM) is read before and
# after.  Not a test: the GPU machine runs it.
#
# Environment: PAIRS (1000000000), SIDE_ROWS (1000000), GPUHASH_DEVICE (gpu).
# Connection: the usual PGHOST/PGPORT/PGUSER/PGDATABASE; the server must run
# on this machine (the backend's /proc entry is read).
set -euo pipefail
PAIRS=${PAIRS:-1000000000}
SIDE_ROWS=${SIDE_ROWS:-1000000}
DEVICE=${GPUHASH_DEVICE:-gpu}
PSQL="psql -X -v ON_ERROR_STOP=1 -q"

# KEYS keys with PER_KEY rows each on both sides: KEYS * PER_KEY = SIDE_ROWS
# rows a side and KEYS * PER_KEY^2 = PAIRS joined rows
per_key=$((PAIRS / SIDE_ROWS))
keys=$((SIDE_ROWS / per_key))
echo "bigjoin: two sides of $SIDE_ROWS rows, $keys keys x $per_key rows each -> $((keys * per_key * per_key)) joined rows"

$PSQL -c "DROP TABLE IF EXISTS bj_a, bj_b" \
      -c "CREATE UNLOGGED TABLE bj_a AS SELECT g AS id, g % $keys AS k FROM generate_series(1, $SIDE_ROWS) g" \
      -c "CREATE UNLOGGED TABLE bj_b AS SELECT g AS id, g % $keys AS k FROM generate_series(1, $SIDE_ROWS) g" \
      -c "ANALYZE bj_a" -c "ANALYZE bj_b"

$PSQL <<SQL
SET max_parallel_workers_per_gather = 0;
SET gpuhash.device = '$DEVICE';
SET gpuhash.force = on;
SELECT pg_backend_pid() AS pid \gset
\setenv BACKEND_PID :pid
\! grep VmHWM /proc/\$BACKEND_PID/status | sed 's/^/before: /'
\timing on
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT count(*) FROM bj_a a JOIN bj_b b ON a.k = b.k;
\timing off
\! grep VmHWM /proc/\$BACKEND_PID/status | sed 's/^/after:  /'
SQL
$PSQL -c "DROP TABLE bj_a, bj_b"
