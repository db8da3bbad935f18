#!/usr/bin/env bash
# run-tests.sh: every test of gpuhash, in three layers:
#   1. engine unit tests against a brute-force oracle (test/engine, no PostgreSQL)
#   2. pg_regress: sql/*.sql against expected/*.out (make installcheck)
#   3. pgTAP suites test/tap/*.sql, through pg_prove
#   4. PostgreSQL's own join and aggregate regression scripts, gpuhash off vs
#      forced on, same rows (test/pg-compat.sh; skipped, and said so, when the
#      scripts cannot be fetched)
#   5. the extension's lifecycle on a cluster of its own (test/lifecycle.sh:
#      nothing outlives DROP EXTENSION; connections work without the library;
#      skipped with a running server, whose library it would move aside)
#   6. a short soak on a cluster of its own (test/soak.sh: clients mixing
#      every kind of node, cancels and timeouts; then a backend and a GPU
#      service worker killed mid-query), after the other server has stopped
# Builds, installs (root, or a writable PostgreSQL installation), starts a
# throwaway cluster, runs the layers, stops the cluster, and ends with the
# line "N passed, N failed" (engine checks + regression tests + pgTAP tests).
# Exits non-zero on any failure.  SOAK_SECONDS (default 20 here), SOAK_CLIENTS
# (4) and SOAK_ROWS (50000) size the soak.
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

# record_tap LAYER LOG RC: a layer's TAP lines (ok N / not ok N) in LOG, shown
# but for the passes; a non-zero RC with no failed line is one failure
record_tap() {
	local p f
	grep -v '^ok [0-9]' "$2"
	p=$(grep -cE '^ok [0-9]+' "$2")
	f=$(grep -cE '^not ok [0-9]+' "$2")
	[ "$3" != 0 ] && [ "$f" = 0 ] && f=1
	record "$1" "$p" "$f"
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
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/engine.log" | tail -1)
if [ -n "$line" ]; then
	read -r p _ f _ <<<"$line"
	[ "$engine_rc" != 0 ] && [ "$f" = 0 ] && f=1
	record "engine" "$p" "$f"
else
	echo "run-tests: the engine tests did not finish (exit status $engine_rc)"
	record "engine" 0 1
fi

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

# ---- 5. lifecycle (before the main server starts: it moves the library aside) ----
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
		-c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION gpuhash" >>"$work/tapdb.log" 2>&1; then
	pg_prove -v -d $db test/tap/*.sql >"$work/tap.log" 2>&1
	record_tap "pgTAP" "$work/tap.log" $?
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
else
	cat "$work/tapdb.log"
	record "pgTAP" 0 1
fi

# ---- 4. PostgreSQL's regression scripts ----
echo "== PostgreSQL join and aggregate scripts, gpuhash off vs forced on (gpuhash.device = $device)"
if bash test/pgsql/get-regress.sh >"$work/compat-get.log" 2>&1; then
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

# ---- 6. soak ----
gh_server_down
echo "== soak (gpuhash.device = $device)"
SOAK_SECONDS=${SOAK_SECONDS:-20} SOAK_CLIENTS=${SOAK_CLIENTS:-4} SOAK_ROWS=${SOAK_ROWS:-50000} \
	GH_SOAK_NO_INSTALL=1 bash test/soak.sh >"$work/soak.log" 2>&1
record_tap "soak" "$work/soak.log" $?
