#!/usr/bin/env bash
# pg-compat.sh: run PostgreSQL's own regression scripts for joins and
# aggregates (join.sql, aggregates.sql, of the release pg_config names) with
# gpuhash off and with gpuhash forced on, and check that every statement
# returns the same rows (plans aside).
#
#   bash test/pg-compat.sh [join] [aggregates]     (default: both)
#
# Gets the scripts of that release (test/pgsql/get-regress.sh), builds and installs gpuhash,
# starts a throwaway cluster (test/pgcluster.sh), prepares a template database
# as pg_regress would (test_setup.sql without its regress.so functions, then
# create_misc.sql, create_index.sql and create_aggregate.sql, which the two
# scripts depend on) with CREATE EXTENSION gpuhash, and runs each script three
# times through psql -X -a -q, as pg_regress does, each in a fresh copy of the
# template:
#   off      gpuhash.enabled = off
#   forced   gpuhash.enabled, force on, min_rows 0, device cpu (GPUHASH_DEVICE)
#   count    as forced, with auto_explain logging every executed plan, to count
#            the statements that ran GpuHashJoin or GpuHashAgg
# The settings come through PGOPTIONS, so they are session defaults that the
# scripts' own SET and RESET ALL return to.  test/pgsql/compare.pl compares
# the outputs.  Exits 1 when rows differ, 2 when the server crashed, a run was
# cut short, or the harness could not run.  The outputs are kept in
# GH_COMPAT_OUT (default /tmp/gpuhash-compat).
#
# Environment:
#   GPUHASH_DEVICE=cpu|gpu   backend of the forced runs (default cpu)
#   GH_COMPAT_OPTIONS        more settings for the forced runs, as in PGOPTIONS:
#                            "-c gpuhash.hash_table=bcht -c gpuhash.chunk_rows=1"
#   GH_USE_RUNNING_SERVER=1  use the server PGHOST/PGPORT/PGUSER point at (a
#                            superuser; it must read files under /tmp for COPY)
#   GH_COMPAT_TIMEOUT        seconds one psql run may take (default 900)
#   GH_COMPAT_NO_BUILD=1     skip make and make install
#   PG_SRC                   a PostgreSQL source tree (of the same release) to take
#                            the scripts from
#   PG_CONFIG                the PostgreSQL installation to test
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. test/common.sh

device=$(gh_test_device pg-compat) || exit 2
scripts=${*:-join aggregates}
for s in $scripts; do
	case $s in
		join | aggregates) ;;
		*) echo "pg-compat: unknown script \"$s\" (join, aggregates)" >&2; exit 2 ;;
	esac
done
limit=${GH_COMPAT_TIMEOUT:-900}
out=${GH_COMPAT_OUT:-/tmp/gpuhash-compat}
work=$(mktemp -d /tmp/gpuhash-compat-run.XXXXXX)
chmod 755 "$work"
base=gpuhash_compat_base
status=0

server_up=0
unset PGOPTIONS	# each run sets its own

finish() {
	if [ "$server_up" = 1 ] && [ -z "$GH_CLUSTER" ]; then	# a server we did not start
		for db in gpuhash_compat_off gpuhash_compat_forced gpuhash_compat_count $base; do
			psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
		done
	fi
	[ -n "$GH_CLUSTER" ] && [ -f "$GH_CLUSTER/server.log" ] && cp "$GH_CLUSTER/server.log" "$out/"
	gh_server_down
	rm -rf "$work"
}
trap 'finish' EXIT

mkdir -p "$out" || exit 2
rm -f "$out"/*.out "$out"/*.report "$out"/*.diff "$out"/server.log

# ---- scripts ----
pg_major=$(gh_pg_major) || exit 2
bash test/pgsql/get-regress.sh "$pg_major" || exit 2
echo "== scripts: $(cat "test/pgsql/regress/$pg_major/VERSION")"
echo "   forced runs: gpuhash.device=$device${GH_COMPAT_OPTIONS:+ $GH_COMPAT_OPTIONS}"
# The server reads the data files (COPY FROM a file): give it its own copy.
cp -r "test/pgsql/regress/$pg_major" "$work/regress"
chmod -R a+rX "$work/regress"
regress=$work/regress
# test_setup.sql without the functions that need regress.so
awk '
	buf != "" || /^CREATE FUNCTION/ {
		buf = buf $0 "\n"
		if ($0 ~ /;[ \t]*$/) {
			if (buf !~ /regresslib/) printf "%s", buf
			buf = ""
		}
		next
	}
	{ print }
' "$regress/sql/test_setup.sql" >"$work/test_setup.sql"

# ---- build, install, server ----
if [ "${GH_COMPAT_NO_BUILD:-0}" != 1 ]; then
	echo "== build and install"
	if ! make -s >"$work/build.log" 2>&1; then
		tail -40 "$work/build.log"
		exit 2
	fi
	if ! gh_install && [ "${GH_USE_RUNNING_SERVER:-0}" != 1 ]; then
		exit 2
	fi
fi
gh_server_up "$work" || exit 2
server_up=1

# Like pg_regress: its time zone and date style, and its database settings.
export PGTZ=PST8PDT PGDATESTYLE="Postgres, MDY" PG_ABS_SRCDIR=$regress
db_settings="lc_messages = 'C', lc_monetary = 'C', lc_numeric = 'C', lc_time = 'C',
	bytea_output = 'hex', timezone_abbreviations = 'Default'"

# ---- template database ----
# The scripts that join.sql and aggregates.sql depend on, in pg_regress's order.
setup_scripts="test_setup create_misc create_index create_aggregate"
echo "== setup: ${setup_scripts// /, }, CREATE EXTENSION gpuhash"
psql -X -q -v ON_ERROR_STOP=1 -d postgres \
	-c "DROP DATABASE IF EXISTS $base" -c "CREATE DATABASE $base TEMPLATE template0" \
	>"$out/setup.out" 2>&1 || { cat "$out/setup.out"; exit 2; }
for setting in $(echo "$db_settings" | tr -d ' \t\n' | tr ',' ' '); do
	psql -X -q -d postgres -c "ALTER DATABASE $base SET ${setting%%=*} = ${setting#*=}" \
		>>"$out/setup.out" 2>&1
done
errors=""
for s in $setup_scripts; do
	f=$regress/sql/$s.sql
	[ "$s" = test_setup ] && f=$work/test_setup.sql
	PGOPTIONS="" PGAPPNAME=pg_regress/$s psql -X -a -q -d $base <"$f" >"$out/setup.$s.out" 2>&1
	errors="$errors, $s $(grep -c '^ERROR:' "$out/setup.$s.out")"
done
psql -X -q -v ON_ERROR_STOP=1 -d $base -c "CREATE EXTENSION gpuhash" >>"$out/setup.out" 2>&1 ||
	{ tail -20 "$out/setup.out"; exit 2; }
check=$(psql -X -A -t -d $base -c "SELECT (SELECT count(*) FROM tenk1) || ' ' ||
	(SELECT count(*) FROM onek) || ' ' || (SELECT count(*) FROM int8_tbl) || ' ' ||
	(SELECT count(*) FROM pg_indexes WHERE indexname = 'tenk1_unique1') || ' ' ||
	(SELECT count(*) FROM b_star) || ' ' || (SELECT count(*) FROM pg_proc WHERE proname = 'newavg')" 2>&1)
if [ "$check" != "10000 1000 5 1 20 1" ]; then
	echo "pg-compat: the setup did not create the regression tables (got \"$check\"); see $out/setup.*.out"
	exit 2
fi
echo "   errors in the setup scripts: ${errors#, } (some are tested on purpose: PostgreSQL 15 has 0, 0, 49, 16)"

# Does the server log (when it is ours) show a crash?
crash_check() {
	local log=${GH_CLUSTER:+$GH_CLUSTER/server.log}
	[ -n "$log" ] && [ -f "$log" ] || return 1
	grep -E 'PANIC|TRAP:|terminated by signal|was terminated by|server process .* exited with exit code [^0]|segfault|Segmentation fault' "$log"
}

common="-c session_preload_libraries=gpuhash"
forced="-c gpuhash.enabled=on -c gpuhash.force=on -c gpuhash.min_rows=0 -c gpuhash.device=$device
	${GH_COMPAT_OPTIONS:-}"
count="-c session_preload_libraries=gpuhash,auto_explain -c auto_explain.log_min_duration=0
	-c auto_explain.log_nested_statements=on -c auto_explain.log_format=json
	-c auto_explain.log_level=warning -c log_min_messages=error"

# run SCRIPT RUN PGOPTIONS: run one script in a fresh copy of the template
run() {
	local s=$1 r=$2 opts=$3 db=gpuhash_compat_$2 rc
	psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $db" \
		-c "CREATE DATABASE $db TEMPLATE $base" >"$work/createdb.log" 2>&1 ||
		{ cat "$work/createdb.log"; return 2; }
	for setting in $(echo "$db_settings" | tr -d ' \t\n' | tr ',' ' '); do
		psql -X -q -d postgres -c "ALTER DATABASE $db SET ${setting%%=*} = ${setting#*=}" >/dev/null 2>&1
	done
	local t0=$SECONDS
	PGOPTIONS=$(echo $opts) PGAPPNAME=pg_regress/$s timeout "$limit" \
		psql -X -a -q -d "$db" <"$regress/sql/$s.sql" >"$out/$s.$r.out" 2>&1
	rc=$?
	printf '   %-7s %3ds  exit %d\n' "$r" $((SECONDS - t0)) "$rc"
	[ "$rc" = 124 ] && echo "   pg-compat: the $r run of $s.sql timed out after ${limit}s"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
	return 0
}

for s in $scripts; do
	echo "== $s.sql"
	run "$s" off "$common -c gpuhash.enabled=off" || { status=2; continue; }
	run "$s" forced "$common $forced" || { status=2; continue; }
	run "$s" count "$forced $count" || { status=2; continue; }
	if grep -nE 'server closed the connection|terminating connection|connection to server was lost|no connection to the server' \
		"$out/$s.off.out" "$out/$s.forced.out" "$out/$s.count.out"; then
		echo "   pg-compat: a connection was lost while running $s.sql"
		status=2
	fi
	# The off run should read as PostgreSQL's own expected output: a check
	# that the setup is the one the script expects (informational).
	if diff "$regress/expected/$s.out" "$out/$s.off.out" >"$out/$s.expected.diff"; then
		echo "   the off run matches PostgreSQL's expected/$s.out"
	else
		echo "   note: the off run differs from PostgreSQL's expected/$s.out" \
			"($(grep -c '^[<>]' "$out/$s.expected.diff") lines, $out/$s.expected.diff)"
	fi
	perl test/pgsql/compare.pl "$regress/sql/$s.sql" "$out/$s.off.out" "$out/$s.forced.out" \
		"$out/$s.count.out" | tee "$out/$s.report"
	rc=${PIPESTATUS[0]}
	[ "$rc" -gt "$status" ] && status=$rc
done

if crash_check >"$work/crash.log"; then
	echo "== the server log shows a crash:"
	head -20 "$work/crash.log"
	status=2
fi
case $status in
	0) echo "== pg-compat: all rows match" ;;
	1) echo "== pg-compat: rows differ (outputs in $out)" ;;
	*) echo "== pg-compat: failed (outputs in $out)" ;;
esac
exit $status
