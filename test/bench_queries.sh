#!/usr/bin/env bash
# bench_queries.sh: end-to-end query benchmark, gpuhash on vs PostgreSQL's own
# plans, in one run on one server.
#
# Creates fact (FACT_ROWS rows: int8 k random in 1..FACT_ROWS/10, int8 v) and
# dim (FACT_ROWS/10 rows: int8 k unique, int8 w) unless they exist with the
# right sizes, then times each query REPS times in each mode and prints a
# markdown table of medians and ratios.  Each time is the server's execution
# time of the whole query, every output column of every row computed and the
# rows discarded (bench_tables.sh: bench_run).
#
# Modes: "pg N"   gpuhash.enabled = off, max_parallel_workers_per_gather = N
#        "gpuhash N" gpuhash.enabled = on and gpuhash.force = on (the GPU path
#                 wherever it applies, whatever the cost model says; GPUHASH_FORCE=off:
#                 as the cost model chooses), device as set,
#                 max_parallel_workers_per_gather = N
#
# Environment: FACT_ROWS (100000000), REPS (3), PG_REPS (REPS: runs of
# PostgreSQL's plans; 0: not timed), WORKERS ("2 8"),
# GPUHASH_DEVICE (gpu), GPUHASH_FORCE (on; off times the plans the cost model
# chooses with gpuhash enabled), BENCH_QUERIES (all|join|groupby|distinct: the
# count(DISTINCT) queries, not in all|functions: rounding, casts to
# integers and float group keys on the device, not in all), LOADERS (8),
# GPUHASH_DEVICES (unset; else gpuhash.devices settings to time gpuhash on
# each, such as "0 all": one GPU, then every GPU), GPUHASH_VARIANTS (unset;
# else settings to time gpuhash under, one variant after another separated
# by '|', each SET commands or nothing for the defaults, such as
# "|SET gpuhash.cpu_fallback = off; SET gpuhash.memory_wait = 0").
# BENCH_PAGES=1: the heap-page table instead: scan, join and both GROUP BYs,
# PostgreSQL vs gpuhash with rows through the Seq Scan (gpuhash.read_pages =
# off), with pages read in the backend (gpuhash.ship_pages = off), with
# all-visible pages shipped to the GPU and their rows sent back to the
# backend (gpuhash.pool_pages = off), and shipped with the GPU service
# putting their rows in a GROUP BY's pool itself (the defaults).
# Connection: the usual PGHOST/PGPORT/PGUSER/PGDATABASE.
set -euo pipefail
FACT_ROWS=${FACT_ROWS:-100000000}
DIM_ROWS=$((FACT_ROWS / 10))
REPS=${REPS:-3}
PG_REPS=${PG_REPS:-$REPS}
WORKERS=${WORKERS:-"2 8"}
DEVICE=${GPUHASH_DEVICE:-gpu}
FORCE=${GPUHASH_FORCE:-on}
LOADERS=${LOADERS:-8}
PSQL="psql -X -v ON_ERROR_STOP=1 -q"

. "$(dirname "$0")/bench_tables.sh"
bench_tables_ensure

declare -A Q
Q[scan]="SELECT count(*) FROM fact"
Q[join]="SELECT count(*), sum(d.w) FROM fact f JOIN dim d ON f.k = d.k"
Q[join_groupby]="SELECT d.w, count(*), sum(f.v) FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.w"
Q[join_rows]="SELECT count(*), sum(d.w + f.v) FROM fact f JOIN dim d ON f.k = d.k"
Q[groupby_100k]="SELECT k % 100000, count(*), sum(v) FROM fact GROUP BY 1"
Q[groupby_10m]="SELECT k, count(*), sum(v) FROM fact GROUP BY k"
Q[distinct_1k]="SELECT k % 1000, count(DISTINCT v % 100000), count(*), sum(v) FROM fact GROUP BY 1"
Q[distinct_all]="SELECT count(DISTINCT k), count(*) FROM fact"
Q[fn_floor]="SELECT floor(v::float8 / 1000)::int4, count(*), sum(k) FROM fact GROUP BY 1"
Q[fn_round]="SELECT k % 100, sum(round(v * 0.37, 1)), avg(trunc(v * 0.01)), max(ceil(v::float8 / 7)) FROM fact GROUP BY 1"
Q[fn_cast]="SELECT (v * 0.0125)::int, count(*) FROM fact WHERE round(v::float8 / 3) > 1000 GROUP BY 1"
Q[fn_fkey]="SELECT (v % 1000) / 8.0::float8, count(*), sum(k) FROM fact GROUP BY 1"
Q[fn_fround]="SELECT round(v / 3.0::float8), count(*), max(k) FROM fact WHERE v < 300000 GROUP BY 1"
Q[fn_fzero]="SELECT k % 10 * -0.5::float8, count(*), sum(v) FROM fact GROUP BY 1"
case ${BENCH_QUERIES:-all} in
	join) names="scan join join_groupby join_rows" ;;
	groupby) names="scan groupby_100k groupby_10m" ;;
	distinct) names="scan distinct_1k distinct_all" ;;
	functions) names="scan fn_floor fn_round fn_cast fn_fkey fn_fround fn_fzero" ;;
	*) names="scan join join_groupby join_rows groupby_100k groupby_10m" ;;
esac

# time_query SETTINGS SQL [N] -> median milliseconds of N (REPS) runs
time_query() {
	local settings=$1 sql=$2 n=${3:-$REPS} r ms=()
	for ((r = 0; r < n; r++)); do
		ms+=("$($PSQL -c "$settings" -c "$(bench_run "$sql")" | bench_ms)")
	done
	median "${ms[@]}"
}

# median N... -> the median of the numbers
median() {
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

# secs MS -> seconds, 2 decimals; ratio A B -> "A/Bx"
secs() { [ "$1" = - ] && echo - || awk -v a="$1" 'BEGIN{printf "%.2f", a/1000}'; }
ratio() { [ "$1" = - ] && echo - || awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2fx", a/b}'; }

if [ "${BENCH_PAGES:-0}" = 1 ]; then
	# heap pages: read through the Seq Scan, read in the backend, shipped to the GPU
	names="scan join groupby_100k groupby_10m"
	# warm-up: every GPU service worker registers the shared buffers at its first GPU engine
	for r in 1 2 3; do
		$PSQL -c "SET max_parallel_workers_per_gather = ${WORKERS##* }; SET gpuhash.device = '$DEVICE'; SET gpuhash.force = on" \
		      -c "$(bench_run "${Q[groupby_100k]}")" >/dev/null
	done
	header="| query |"
	sep="|---|"
	for w in $WORKERS; do
		header+=" PostgreSQL, $w w (s) | rows through the scan (s) | pages read in backend (s) | shipped, rows back (s) | shipped, pooled by the service (s) | shipped vs PostgreSQL |"
		sep+="---|---|---|---|---|---|"
	done
	echo "$header"
	echo "$sep"
	for n in $names; do
		line="| \`${Q[$n]}\` |"
		for w in $WORKERS; do
			base="SET max_parallel_workers_per_gather = $w; SET gpuhash.device = '$DEVICE';"
			on="$base SET gpuhash.enabled = on; SET gpuhash.force = $FORCE;"
			pg=$(time_query "$base SET gpuhash.enabled = off;" "${Q[$n]}")
			scan=$(time_query "$on SET gpuhash.read_pages = off;" "${Q[$n]}")
			backend=$(time_query "$on SET gpuhash.ship_pages = off;" "${Q[$n]}")
			back=$(time_query "$on SET gpuhash.pool_pages = off;" "${Q[$n]}")
			shipped=$(time_query "$on" "${Q[$n]}")
			for t in "$pg" "$scan" "$backend" "$back" "$shipped"; do
				line+=" $(secs "$t") |"
			done
			line+=" $(ratio "$pg" "$shipped") |"
		done
		echo "$line"
	done
	echo
	echo "plans with pages shipped (${WORKERS##* } workers):"
	for n in $names; do
		$PSQL -c "SET max_parallel_workers_per_gather = ${WORKERS##* }; SET gpuhash.device = '$DEVICE'; SET gpuhash.force = $FORCE" \
		      -c "EXPLAIN (ANALYZE) ${Q[$n]}"
	done
	exit 0
fi
# the variants gpuhash is timed under: GPUHASH_VARIANTS, else one per
# GPUHASH_DEVICES setting ("0 all": one GPU, then every GPU), else the defaults
VARIANTS=()
LABELS=()
if [ -n "${GPUHASH_VARIANTS+x}" ]; then
	IFS='|' read -ra VARIANTS <<<"$GPUHASH_VARIANTS|"
	for v in "${VARIANTS[@]}"; do LABELS+=("${v:+ with $v}"); done
else
	for d in ${GPUHASH_DEVICES:-}; do
		VARIANTS+=("SET gpuhash.devices = '$d';")
		LABELS+=(" on GPUs $d")
	done
	[ "${#VARIANTS[@]}" -gt 0 ] || { VARIANTS=(""); LABELS=(""); }
fi
header="| query |"
sep="|---|"
for w in $WORKERS; do
	header+=" PostgreSQL, $w workers (s) |"
	sep+="---|"
	for l in "${LABELS[@]}"; do
		header+=" gpuhash$l, $w workers (s) | speed-up |"
		sep+="---|---|"
	done
done
echo "$header"
echo "$sep"
for n in $names; do
	line="| \`${Q[$n]}\` |"
	for w in $WORKERS; do
		base="SET max_parallel_workers_per_gather = $w; SET gpuhash.device = '$DEVICE';"
		pg=-
		[ "$PG_REPS" = 0 ] || pg=$(time_query "$base SET gpuhash.enabled = off;" "${Q[$n]}" "$PG_REPS")
		line+=" $(secs "$pg") |"
		# the variants' runs interleaved, so that none is always the first after PostgreSQL's
		runs=()
		for ((r = 0; r < REPS; r++)); do
			for i in "${!VARIANTS[@]}"; do
				runs[i]+=" $(time_query "$base SET gpuhash.enabled = on; SET gpuhash.force = $FORCE; ${VARIANTS[i]}" "${Q[$n]}" 1)"
			done
		done
		for i in "${!VARIANTS[@]}"; do
			gh=$(median ${runs[i]})
			line+=" $(secs "$gh") | $(ratio "$pg" "$gh") |"
		done
	done
	echo "$line"
done
echo
echo "plans with gpuhash on (${WORKERS%% *} workers):"
for n in $names; do
	$PSQL -c "SET max_parallel_workers_per_gather = ${WORKERS%% *}; SET gpuhash.device = '$DEVICE'; SET gpuhash.force = $FORCE" \
	      -c "EXPLAIN (ANALYZE) ${Q[$n]}"
done
