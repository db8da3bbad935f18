#!/usr/bin/env bash
# bench_partitioned.sh: the Star Schema Benchmark over a partitioned fact
# table, as a DBA keeps a large one: lineorder range-partitioned by
# lo_orderdate, a partition a year (1992 to 1998, and a default one);
# gpuhash on vs PostgreSQL's own plans, through bench_workload.sh.
#
#   SF=10 REPS=3 WORKERS=8 GPUHASH_FORCE="off on" bash test/bench_partitioned.sh
#
# Loads SSB at scale factor SF into ssb_sf<SF> as bench_workload.sh does
# (unless it is there), copies its lineorder into the schema ssbp_sf<SF>,
# partitioned, one session a partition (again only where the copy's rows are
# not lineorder's), freezes and analyzes it, then runs bench_workload.sh with
# that schema searched first: the queries read the partitioned lineorder and
# the workload's dimensions, and each result is checked against
# PostgreSQL's.  Environment: bench_workload.sh's (one SF), and VACUUMED=0:
# the partitions freshly loaded, analyzed but never vacuumed (autovacuum off
# for them), so that no page is all-visible (into ssbpn_sf<SF>).
set -euo pipefail
. "$(dirname "$0")/workload.sh"
SF=${SF:-1}
LOADERS=${LOADERS:-8}
PSQL="psql -X -v ON_ERROR_STOP=1 -q"
wl_init ssb
schema=$(wl_schema "$SF")
VACUUMED=${VACUUMED:-1}
part=ssbp$([ "$VACUUMED" = 1 ] || echo n)_sf${SF//./_}
wl_ensure "$schema" "$SF" "$LOADERS"
rows=$($PSQL -At -c "SELECT count(*) FROM $schema.lineorder")
copied=-1
if [ "$($PSQL -At -c "SELECT to_regclass('$part.lineorder') IS NOT NULL")" = t ]; then
	copied=$($PSQL -At -c "SELECT count(*) FROM $part.lineorder")
fi
if [ "$copied" != "$rows" ]; then
	start=$SECONDS
	echo "bench_partitioned: copying $schema.lineorder into $part.lineorder, a partition a year..." >&2
	$PSQL -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS $part CASCADE" \
	      -c "CREATE SCHEMA $part" \
	      -c "CREATE TABLE $part.lineorder (LIKE $schema.lineorder) PARTITION BY RANGE (lo_orderdate)" \
	      -c "CREATE TABLE $part.lineorder_other PARTITION OF $part.lineorder DEFAULT"
	pids=()
	for y in 1992 1993 1994 1995 1996 1997 1998; do
		$PSQL -c "CREATE TABLE $part.lineorder_$y PARTITION OF $part.lineorder
		          FOR VALUES FROM (${y}0101) TO ($((y + 1))0101)
		          WITH (autovacuum_enabled = $([ "$VACUUMED" = 1 ] && echo true || echo false))" \
		      -c "INSERT INTO $part.lineorder_$y SELECT * FROM $schema.lineorder
		          WHERE lo_orderdate >= ${y}0101 AND lo_orderdate < $((y + 1))0101" &
		pids+=($!)
	done
	$PSQL -c "INSERT INTO $part.lineorder_other SELECT * FROM $schema.lineorder
	          WHERE lo_orderdate < 19920101 OR lo_orderdate >= 19990101"
	for p in "${pids[@]}"; do wait "$p"; done
	# once every copy has committed, so that VACUUM finds the rows visible
	# to all and marks the pages all-visible
	pids=()
	for t in 1992 1993 1994 1995 1996 1997 1998 other; do
		if [ "$VACUUMED" = 1 ]; then
			$PSQL -c "VACUUM (FREEZE, ANALYZE) $part.lineorder_$t" &
		else
			$PSQL -c "ALTER TABLE $part.lineorder_$t SET (autovacuum_enabled = false)" \
			      -c "ANALYZE $part.lineorder_$t" &
		fi
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	$PSQL -c "ANALYZE $part.lineorder"
	$PSQL -c "CHECKPOINT" 2>/dev/null || true
	echo "bench_partitioned: copied in $((SECONDS - start)) s" >&2
fi
WORKLOAD=ssb SCHEMA_FIRST=$part exec bash "$(dirname "$0")/bench_workload.sh"
