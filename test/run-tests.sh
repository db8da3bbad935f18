#!/usr/bin/env bash
# run-tests.sh: every test of gpuhash, in these layers:
#   1. engine unit tests against a brute-force oracle (test/engine, no PostgreSQL)
#   2. pg_regress: sql/*.sql against expected/*.out (make installcheck)
#   3. pgTAP suites test/tap/*.sql, through pg_prove
#   4. PostgreSQL's own join and aggregate regression scripts, gpuhash off vs
#      forced on, same rows (test/pg-compat.sh; skipped, and said so, when the
#      scripts cannot be fetched)
#   5. the SSB and TPC-H-shaped queries at scale factor 0.01, gpuhash off vs
#      forced on, serially and in parallel, same rows (test/workloads.sh)
#   6. scale-out: a coordinator and two data servers through postgres_fdw, at
#      a small size (test/scaleout.sh; its own servers)
#   7. the extension's lifecycle on a cluster of its own (test/lifecycle.sh:
#      nothing outlives DROP EXTENSION; connections work without the library;
#      skipped with a running server, whose library it would move aside)
#   8. a short soak on a cluster of its own (test/soak.sh: clients mixing
#      every kind of node, cancels and timeouts; then a backend and a GPU
#      service worker killed mid-query), after the other server has stopped
#   9. star.sql again on a cluster with two GPU service workers, where a star
#      splits across devices (star_split.c; simulated ones on the CPU)
#  10. differential fuzzing: 150 random star and GROUP BY queries of a fixed
#      seed, gpuhash off vs forced on, same rows or the same error
#      (test/fuzz/run.sh)
# Builds, installs (root, or a writable PostgreSQL installation), starts a
# throwaway cluster, runs the layers, stops the cluster, and ends with the
# line "N passed, N failed" (engine checks + regression tests + pgTAP tests +
# PostgreSQL's scripts + workload queries + fuzzed queries + scale-out,
# lifecycle and soak checks).  Exits non-zero on any failure.  SOAK_SECONDS (default 20 here),
# SOAK_CLIENTS (4) and SOAK_ROWS (50000) size the soak.
#
# Environment:
#   GPUHASH_DEVICE=cpu|gpu   backend the SQL layers run on (default cpu); the
#                            expected files are the same for both.  gpu also
#                            runs the engine tests on the CUDA backend.
#   GH_USE_RUNNING_SERVER=1  use the server that PGHOST/PGPORT/PGUSER point
#                            at instead of starting one (also chosen when both
#                            PGHOST and PGPORT are set and a server answers)
#   PG_CONFIG                the PostgreSQL installation to build against
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. test/common.sh

device=$(gh_test_device run-tests) || exit 2
export PGOPTIONS="${PGOPTIONS:-} -c gpuhash.device=$device"
pg_config=${PG_CONFIG:-pg_config}
work=$(mktemp -d /tmp/gpuhash-tests.XXXXXX)
passed=0
failed=0
summary=()

finish() {
	gh_server_down
	rm -rf "$work"
	echo
	for line in "${summary[@]}"; do echo "  $line"; done
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
trap 'finish; exit $?' EXIT

# record LAYER PASSED FAILED
record() {
	passed=$((passed + $2))
	failed=$((failed + $3))
	summary+=("$1: $2 passed, $3 failed")
}

# record_tap LAYER LOG STATUS: record a layer from the TAP lines of its log,
# which are shown but for the passed tests; a failed run without a failed
# test counts as one
record_tap() {
	local p f
	grep -vE '^ok [0-9]+|^[0-9]+ passed, [0-9]+ failed$' "$2"
	p=$(grep -cE '^ok [0-9]+' "$2")
	f=$(grep -cE '^not ok [0-9]+' "$2")
	[ "$3" != 0 ] && [ "$f" = 0 ] && f=1
	record "$1" "$p" "$f"
}

# record_closing LAYER LOG STATUS: record a layer by its log's closing line
# "N passed, N failed" (a failure where there is none, or the status says so)
record_closing() {
	local line p f
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$2" | tail -1)
	if [ -n "$line" ]; then
		read -r p _ f _ <<<"$line"
		[ "$3" != 0 ] && [ "$f" = 0 ] && f=1
		record "$1" "$p" "$f"
	else
		echo "run-tests: the $1 tests did not finish (exit status $3)"
		record "$1" 0 1
	fi
}

# ---- build ----
echo "== build"
if ! make -s >"$work/build.log" 2>&1; then
	tail -40 "$work/build.log"
	record build 0 1
	exit 1
fi

# ---- 1. engine ----
backends=${GH_TEST_BACKENDS:-}
[ "$device" = gpu ] && [ -z "$backends" ] && backends="cpu cuda"
echo "== engine tests${backends:+ ($backends)}"
make -s engine-test GH_TEST_BACKENDS="$backends" >"$work/engine.log" 2>&1
engine_rc=$?
grep -v '^ok ' "$work/engine.log"
record_closing engine "$work/engine.log" "$engine_rc"

# ---- install and server ----
echo "== install"
if ! gh_install; then
	if [ "${GH_USE_RUNNING_SERVER:-0}" = 1 ]; then
		echo "run-tests: testing the gpuhash already installed in $("$pg_config" --pkglibdir)"
	else
		record install 0 1
		exit 1
	fi
fi

# ---- 7. lifecycle (before the main server starts: it moves the library aside) ----
if [ "${GH_USE_RUNNING_SERVER:-0}" = 1 ] || { [ -n "${PGHOST:-}" ] && [ -n "${PGPORT:-}" ]; }; then
	summary+=("lifecycle: skipped (a running server uses the installed library)")
else
	echo "== extension lifecycle"
	bash test/lifecycle.sh >"$work/lifecycle.log" 2>&1
	record_tap "lifecycle" "$work/lifecycle.log" $?
fi

if ! gh_server_up "$work"; then
	record server 0 1
	exit 1
fi

# ---- 2. pg_regress ----
echo "== pg_regress (gpuhash.device = $device)"
rm -f regression.diffs regression.out
make -s installcheck >"$work/regress.log" 2>&1
regress_rc=$?
cat "$work/regress.log"
p=$(grep -cE '\.\.\. ok|^ok [0-9]+' "$work/regress.log")
f=$(grep -cE '\.\.\. (FAILED|failed)|^not ok [0-9]+' "$work/regress.log")
[ "$regress_rc" != 0 ] && [ "$f" = 0 ] && f=1
record "pg_regress" "$p" "$f"
if [ "$regress_rc" != 0 ] && [ -f regression.diffs ]; then
	echo "---- regression.diffs ----"
	cat regression.diffs
fi

# ---- 3. pgTAP ----
echo "== pgTAP (gpuhash.device = $device)"
db=gpuhash_tap
if psql -X -q -v ON_ERROR_STOP=1 -d postgres \
		-c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >"$work/tapdb.log" 2>&1 &&
	psql -X -q -v ON_ERROR_STOP=1 -d $db \
		-c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION gpuhash" \
		-f test/tap/lib/pgtap_bookkeeping.sql >>"$work/tapdb.log" 2>&1; then
	pg_prove -v -d $db test/tap/*.sql >"$work/tap.log" 2>&1
	record_tap "pgTAP" "$work/tap.log" $?
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
else
	cat "$work/tapdb.log"
	record "pgTAP" 0 1
fi

# ---- 4. PostgreSQL's regression scripts ----
echo "== PostgreSQL join and aggregate scripts, gpuhash off vs forced on (gpuhash.device = $device)"
if bash test/pgsql/get-regress.sh "$(gh_pg_major)" >"$work/compat-get.log" 2>&1; then
	GH_USE_RUNNING_SERVER=1 GH_COMPAT_NO_BUILD=1 GH_COMPAT_OUT="$work/compat" \
		bash test/pg-compat.sh >"$work/compat.log" 2>&1
	compat_rc=$?
	grep -E '^(==|  statements)' "$work/compat.log"
	if [ "$compat_rc" = 0 ]; then
		record "pg-compat" 2 0
	else
		tail -60 "$work/compat.log"
		record "pg-compat" 0 1
	fi
else
	tail -5 "$work/compat-get.log"
	echo "run-tests: PostgreSQL's regression scripts are not available here: pg-compat skipped"
	summary+=("pg-compat: skipped (no PostgreSQL regression scripts)")
fi

# ---- 5. analytical workloads ----
echo "== SSB and TPC-H-shaped queries, gpuhash off vs forced on, serial and parallel" \
     "(gpuhash.device = $device)"
GH_USE_RUNNING_SERVER=1 bash test/workloads.sh >"$work/workloads.log" 2>&1
record_tap "workloads" "$work/workloads.log" $?

# ---- 10. differential fuzzing ----
echo "== differential fuzzing: random queries, gpuhash off vs forced on (gpuhash.device = $device)"
GPUHASH_DEVICE=$device bash test/fuzz/run.sh >"$work/fuzz.log" 2>&1
record_tap "fuzz" "$work/fuzz.log" $?

# ---- 6. scale-out through postgres_fdw ----
echo "== scale-out: a coordinator and two data servers (gpuhash.device = $device)"
GH_SCALEOUT_NO_BUILD=1 bash test/scaleout.sh >"$work/scaleout.log" 2>&1
scaleout_rc=$?
grep -vE '^ok - |^[0-9]+ passed, [0-9]+ failed$' "$work/scaleout.log"
record_closing scale-out "$work/scaleout.log" "$scaleout_rc"

# ---- 8. soak ----
gh_server_down
echo "== soak (gpuhash.device = $device)"
SOAK_SECONDS=${SOAK_SECONDS:-20} SOAK_CLIENTS=${SOAK_CLIENTS:-4} SOAK_ROWS=${SOAK_ROWS:-50000} \
	GH_SOAK_NO_INSTALL=1 bash test/soak.sh >"$work/soak.log" 2>&1
record_tap "soak" "$work/soak.log" $?

# ---- 9. stars split across GPU service workers (star_split.c) ----
# The main server has one service worker; a star splits across GPUs only
# where there is one for each: star.sql and star_functions.sql again on a
# server with two.
echo "== stars split across two GPU service workers (gpuhash.device = $device)"
if (GH_SERVICE_WORKERS=2 bash test/pgcluster.sh start "$work/pg2" "${SPLIT_PORT:-54351}" >"$work/pg2.env" &&
	eval "$(cat "$work/pg2.env")" &&
	psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db" &&
	psql -X -q -v ON_ERROR_STOP=1 -d $db -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION gpuhash" \
		-f test/tap/lib/pgtap_bookkeeping.sql) >"$work/split.log" 2>&1; then
	(eval "$(cat "$work/pg2.env")" && pg_prove -v -d $db test/tap/star.sql test/tap/star_functions.sql) >>"$work/split.log" 2>&1
	record_tap "split stars" "$work/split.log" $?
else
	tail -20 "$work/split.log"
	record "split stars" 0 1
fi
bash test/pgcluster.sh stop "$work/pg2" >/dev/null 2>&1
