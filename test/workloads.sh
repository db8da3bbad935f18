#!/usr/bin/env bash
# workloads.sh: the queries of the generated analytical workloads, the Star
# Schema Benchmark's 13 (test/ssb) and the 22 TPC-H shapes (test/tpch), and
# the workloads' other queries over the same tables (test/ssb/sets1.sql, ...),
# at small scale factors, with gpuhash off and forced on: the same rows.
#
#   bash test/workloads.sh [ssb] [tpch]        (default: both)
#
# Loads each workload (test/workload.sh, 2 loader sessions) into a throwaway
# database, then runs every query three ways, each in its own session:
#   off       gpuhash.enabled = off: PostgreSQL's rows, the reference
#   serial    gpuhash.force = on, max_parallel_workers_per_gather = 0
#   parallel  gpuhash.force = on, max_parallel_workers_per_gather = 2,
#             parallel_setup_cost = 0, parallel_tuple_cost = 0,
#             min_parallel_table_scan_size = 0 (parallel plans wherever
#             PostgreSQL can make them)
#   leaderless  the same with parallel_leader_participation = off (the
#             workers alone run the plan below the Gather)
# gpuhash.device as GPUHASH_DEVICE (cpu or gpu, default cpu).  Each forced
# run's rows, sorted, must equal the off run's byte for byte (psql prints
# numerics exactly; the queries return no floating-point values): one test
# per query and forced mode, its differences shown when it fails.  The TPC-H
# shapes run once more with numeric NaNs in lineitem, customer and orders
# (values the device cannot evaluate: every GpuStarAgg then runs its
# alternative plan), put back afterwards.  One more
# test per workload: its load, and one that gpuhash's nodes appear in the
# forced plans of some of its queries (so that a gpuhash that planned
# nothing cannot pass).  Prints TAP-like "ok" / "not ok" lines and ends with
# "N passed, N failed"; exits non-zero on any failure.
#
# Environment:
#   GPUHASH_DEVICE=cpu|gpu   backend of the forced runs (default cpu)
#   SSB_SF, TPCH_SF          the scale factors (default 0.01 each)
#   GH_WORKLOADS_DB          the database (default gpuhash_workloads), created
#                            and dropped; GH_WORKLOADS_KEEP=1 keeps it, and a
#                            later run reuses the loads it holds
#   GH_WORKLOADS_TIMEOUT     seconds a query may take (default 300)
#   GH_USE_RUNNING_SERVER=1  use the server PGHOST/PGPORT/PGUSER point at
#                            (gpuhash installed there) instead of building,
#                            installing and starting a throwaway one
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. test/common.sh
. test/workload.sh

device=$(gh_test_device workloads) || exit 2
names=${*:-ssb tpch}
for n in $names; do
	case $n in
		ssb | tpch) ;;
		*) echo "workloads: unknown workload \"$n\" (ssb, tpch)" >&2; exit 2 ;;
	esac
done
db=${GH_WORKLOADS_DB:-gpuhash_workloads}
limit=${GH_WORKLOADS_TIMEOUT:-300}
work=$(mktemp -d /tmp/gpuhash-workloads.XXXXXX)
passed=0
failed=0
tests=0

finish() {
	if [ "${GH_WORKLOADS_KEEP:-0}" != 1 ]; then
		psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
	fi
	gh_server_down
	rm -rf "$work"
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
trap 'finish; exit $?' EXIT

# result OK NAME [DETAIL FILE]: one test's line
result() {
	tests=$((tests + 1))
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		echo "ok $tests - $2"
	else
		failed=$((failed + 1))
		echo "not ok $tests - $2"
		[ -n "${3:-}" ] && sed 's/^/#   /' "$3" | head -40
	fi
	return 0
}

# ---- build, install, server ----
if [ "${GH_USE_RUNNING_SERVER:-0}" != 1 ]; then
	if ! make -s >"$work/build.log" 2>&1; then
		tail -40 "$work/build.log"
		result 1 "build"
		exit 1
	fi
	gh_install || { result 1 "install"; exit 1; }
fi
gh_server_up "$work" >/dev/null || { result 1 "server"; exit 1; }
if [ "${GH_WORKLOADS_KEEP:-0}" = 1 ] &&
	[ "$(psql -X -At -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$db'")" = 1 ]; then
	: # a kept database: the loads it holds are reused where complete
elif ! psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" \
		-c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >"$work/db.log" 2>&1 ||
	! psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "CREATE EXTENSION gpuhash" >>"$work/db.log" 2>&1; then
	result 1 "database $db with gpuhash" "$work/db.log"
	exit 1
fi
export PGDATABASE=$db
PSQL="psql -X -v ON_ERROR_STOP=1 -q"

# run SCHEMA MODE QUERY: the query's rows in one mode, sorted, into
# $work/MODE.out (errors into $work/MODE.err)
run() {
	local schema=$1 mode=$2 q=$3 s
	s="SET search_path = $schema; SET statement_timeout = '${limit}s';"
	s+=" SET gpuhash.device = '$device';"
	case $mode in
		off) s+=" SET gpuhash.enabled = off;" ;;
		serial) s+=" SET gpuhash.enabled = on; SET gpuhash.force = on;
		             SET max_parallel_workers_per_gather = 0;" ;;
		parallel) s+=" SET gpuhash.enabled = on; SET gpuhash.force = on;
		               SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
		               SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;" ;;
		leaderless) s+=" SET gpuhash.enabled = on; SET gpuhash.force = on;
		                 SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
		                 SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
		                 SET parallel_leader_participation = off;" ;;
	esac
	$PSQL -At -c "$s" -c "$(wl_sql "$q")" >"$work/$mode.raw" 2>"$work/$mode.err" &&
		LC_ALL=C sort "$work/$mode.raw" >"$work/$mode.out"
}

# plan_nodes SCHEMA QUERY: the gpuhash nodes of its forced parallel plan
plan_nodes() {
	$PSQL -At -c "SET search_path = $1; SET gpuhash.device = '$device';
	              SET gpuhash.enabled = on; SET gpuhash.force = on;
	              SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
	              SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0" \
	      -c "EXPLAIN (COSTS OFF) $(wl_sql "$2")" 2>/dev/null |
		grep -c 'Custom Scan (Gpu[A-Za-z]*)'
}

# compare_queries SCHEMA LABEL: every query of the workload in each forced
# mode against gpuhash off; sets with_nodes and nqueries
compare_queries() {
	local schema=$1 label=$2 q mode t0
	with_nodes=0
	nqueries=0
	for q in $(wl_queries) $(wl_more_queries); do
		nqueries=$((nqueries + 1))
		t0=$SECONDS
		if ! run "$schema" off "$q"; then
			for mode in serial parallel leaderless; do
				result 1 "$label $q $mode: the reference run (gpuhash off) failed" "$work/off.err"
			done
			continue
		fi
		for mode in serial parallel leaderless; do
			if ! run "$schema" $mode "$q"; then
				result 1 "$label $q $mode: failed" "$work/$mode.err"
			elif ! cmp -s "$work/off.out" "$work/$mode.out"; then
				{
					echo "$(wc -l <"$work/$mode.out") rows where gpuhash off gave" \
					     "$(wc -l <"$work/off.out"); sorted rows, off (<) and $mode (>):"
					diff "$work/off.out" "$work/$mode.out"
				} >"$work/diff"
				result 1 "$label $q $mode: different rows" "$work/diff"
			else
				result 0 "$label $q $mode ($(wc -l <"$work/off.out") rows)"
			fi
		done
		[ "$(plan_nodes "$schema" "$q")" -gt 0 ] 2>/dev/null && with_nodes=$((with_nodes + 1))
		[ $((SECONDS - t0)) -ge 10 ] && echo "# $label $q: $((SECONDS - t0)) s"
	done
}

for name in $names; do
	wl_init "$name" || exit 2
	sfvar=${name^^}_SF
	sf=${!sfvar:-0.01}
	schema=$(wl_schema "$sf")
	echo "== $WL_TITLE at scale factor $sf (gpuhash.device = $device)"
	t0=$SECONDS
	if wl_ensure "$schema" "$sf" 2 >"$work/load.log" 2>&1; then
		result 0 "$name: load scale factor $sf ($((SECONDS - t0)) s)"
	else
		result 1 "$name: load scale factor $sf" "$work/load.log"
		continue
	fi
	compare_queries "$schema" "$name"
	# a gpuhash that planned nothing would pass every comparison above
	result "$([ "$with_nodes" -gt 0 ] && echo 0 || echo 1)" \
	       "$name: gpuhash nodes in the forced plans of $with_nodes of $nqueries queries"
	if [ "$name" = tpch ]; then
		# values the device cannot evaluate (numeric NaNs) in the fact table and
		# in dimensions: each GpuStarAgg runs its alternative plan; saved first,
		# put back after
		if $PSQL -c "SET search_path = $schema" \
			-c "CREATE TABLE nan_saved AS
			      SELECT 'l' AS t, l_orderkey AS k, l_linenumber AS n, l_extendedprice AS v
			        FROM lineitem WHERE l_orderkey % 1009 = 7
			      UNION ALL SELECT 'c', c_custkey, 0, c_acctbal FROM customer WHERE c_custkey % 97 = 3
			      UNION ALL SELECT 'o', o_orderkey, 0, o_totalprice FROM orders WHERE o_orderkey % 1013 = 5" \
			-c "UPDATE lineitem SET l_extendedprice = 'NaN' WHERE l_orderkey % 1009 = 7" \
			-c "UPDATE customer SET c_acctbal = 'NaN' WHERE c_custkey % 97 = 3" \
			-c "UPDATE orders SET o_totalprice = 'NaN' WHERE o_orderkey % 1013 = 5" \
			>"$work/nan.log" 2>&1; then
			compare_queries "$schema" "$name with numeric NaNs"
		else
			result 1 "$name: numeric NaNs put in" "$work/nan.log"
		fi
		$PSQL -c "SET search_path = $schema" \
			-c "UPDATE lineitem SET l_extendedprice = s.v FROM nan_saved s
			     WHERE s.t = 'l' AND l_orderkey = s.k AND l_linenumber = s.n" \
			-c "UPDATE customer SET c_acctbal = s.v FROM nan_saved s WHERE s.t = 'c' AND c_custkey = s.k" \
			-c "UPDATE orders SET o_totalprice = s.v FROM nan_saved s WHERE s.t = 'o' AND o_orderkey = s.k" \
			-c "DROP TABLE nan_saved" >>"$work/nan.log" 2>&1 ||
			result 1 "$name: the values NaNs replaced put back" "$work/nan.log"
	fi
done
