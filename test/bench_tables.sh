# bench_tables.sh: the fact and dim tables of the query benchmarks (sourced by
# bench_queries.sh and bench_memory.sh).
#
#   bench_tables_ensure   create fact (FACT_ROWS rows: int8 k random in
#                         1..FACT_ROWS/10, int8 v) and dim (FACT_ROWS/10 rows:
#                         int8 k unique, int8 w), unlogged and VACUUMed, with
#                         LOADERS sessions, unless they exist with the right
#                         sizes; then read both once to warm the buffers
#   bench_run SQL         the statement that runs SQL whole at the server and
#                         discards its rows: EXPLAIN (ANALYZE, TIMING OFF),
#                         whose "Execution Time" is the query's time
#   bench_ms              reads bench_run's output: that time, in ms
#
# A query's rows are never sent to the client (10 million groups would time
# the client), nor counted by a wrapping SELECT count(*) FROM (...): PostgreSQL
# drops a subquery's unused outputs, so a GROUP BY's aggregates would not be
# computed at all.  EXPLAIN ANALYZE with TIMING OFF computes every output
# column of every row and only counts rows per node.
#
# Expects FACT_ROWS, DIM_ROWS, LOADERS and PSQL to be set.

bench_run() {
	echo "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, SUMMARY ON) $1"
}

bench_ms() {
	sed -n 's/^ *Execution Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}

bench_rows_of() {
	$PSQL -At -c "SELECT CASE WHEN to_regclass('$1') IS NULL THEN -1 ELSE (SELECT count(*) FROM $1) END"
}

bench_tables_load() {
	echo "loading fact ($FACT_ROWS rows) and dim ($DIM_ROWS rows) with $LOADERS sessions..." >&2
	$PSQL -c "DROP TABLE IF EXISTS fact, dim" \
	      -c "CREATE UNLOGGED TABLE fact (k int8, v int8)" \
	      -c "CREATE UNLOGGED TABLE dim (k int8, w int8)"
	local per=$(( (FACT_ROWS + LOADERS - 1) / LOADERS )) i
	for ((i = 0; i < LOADERS; i++)); do
		local lo=$((i * per + 1)) hi=$(((i + 1) * per))
		((hi > FACT_ROWS)) && hi=$FACT_ROWS
		$PSQL -c "INSERT INTO fact SELECT 1 + (random() * ($DIM_ROWS - 1))::int8, (random() * 1000000)::int8
		          FROM generate_series($lo, $hi)" &
	done
	wait
	$PSQL -c "INSERT INTO dim SELECT g, g % 1000 FROM generate_series(1, $DIM_ROWS) g"
	$PSQL -c "VACUUM (FREEZE, ANALYZE) fact" -c "VACUUM (FREEZE, ANALYZE) dim"
	# a second VACUUM sets the pages all-visible where the first only froze them
	$PSQL -c "VACUUM fact" -c "VACUUM dim"
}

bench_tables_ensure() {
	[ "$(bench_rows_of fact 2>/dev/null)" = "$FACT_ROWS" ] &&
		[ "$(bench_rows_of dim 2>/dev/null)" = "$DIM_ROWS" ] || bench_tables_load
	# warm the buffer cache
	$PSQL -c "SELECT count(*) FROM fact" -c "SELECT count(*) FROM dim" >/dev/null
}
