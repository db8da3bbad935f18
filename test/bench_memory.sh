#!/usr/bin/env bash
# bench_memory.sh: host memory a query takes, gpuhash against PostgreSQL's own
# plan, on the tables of bench_queries.sh (bench_tables.sh), against the
# bound gpuhash aims at: twice the bytes of the join or grouping key columns,
# plus the output.
#
# While each query runs, a sampler adds up every 20 ms the private memory
# (RssAnon) of all the server's processes (backends, parallel workers, the
# GPU service) and the dynamic shared memory in use (/dev/shm, where requests
# to the service and parallel queries' segments live); the table shows the
# largest sum less the same sum just before the query.  Shared buffers are
# not counted: they are allocated once, whatever the query.  It must run on
# the server's host, as a user that may read the data directory's
# postmaster.pid and the processes' /proc/PID/status.
#
# Environment: FACT_ROWS (100000000), WORKERS (8), GPUHASH_DEVICE (gpu),
# LOADERS (8), MEMORY_PG (1: PostgreSQL's plans too; 0: gpuhash only).
# Connection: the usual PGHOST/PGPORT/PGUSER/PGDATABASE.
set -euo pipefail
FACT_ROWS=${FACT_ROWS:-100000000}
DIM_ROWS=$((FACT_ROWS / 10))
WORKERS=${WORKERS:-8}
DEVICE=${GPUHASH_DEVICE:-gpu}
LOADERS=${LOADERS:-8}
PSQL="psql -X -v ON_ERROR_STOP=1 -q"

. "$(dirname "$0")/bench_tables.sh"
bench_tables_ensure

datadir=$($PSQL -At -c "SHOW data_directory")
postmaster=$(head -1 "$datadir/postmaster.pid")
work=$(mktemp -d /tmp/gpuhash-memory.XXXXXX)
trap 'rm -rf "$work"' EXIT

# kB of private memory of the server's processes plus /dev/shm in use
memory_now() {
	local p files=()
	for p in $(pgrep -P "$postmaster"); do files+=("/proc/$p/status"); done
	{
		cat "${files[@]}" 2>/dev/null | awk '/^RssAnon:/ {s += $2} END {print s + 0}'
		df -k --output=used /dev/shm 2>/dev/null | tail -1
	} | awk '{s += $1} END {print s + 0}'
}

# peak_kb SETTINGS SQL -> the largest memory_now while SQL runs, less the one before
peak_kb() {
	local settings=$1 sql=$2 before max=0 cur
	before=$(memory_now)
	touch "$work/running"
	(
		while [ -e "$work/running" ]; do
			cur=$(memory_now)
			((cur > max)) && max=$cur
			echo "$max" > "$work/max.tmp" && mv "$work/max.tmp" "$work/max"
			sleep 0.02
		done
	) &
	local sampler=$!
	$PSQL -c "$settings" -c "$sql" >/dev/null
	rm -f "$work/running"
	wait "$sampler"
	max=$(cat "$work/max" 2>/dev/null || echo "$before")
	echo $((max > before ? max - before : 0))
}

mb() { awk -v k="$1" 'BEGIN{printf "%.0f", k / 1024}'; }

declare -A Q KEYS OUT
Q[join]="SELECT count(*), sum(d.w) FROM fact f JOIN dim d ON f.k = d.k"
KEYS[join]=$(( (FACT_ROWS + DIM_ROWS) * 8 ))	# f.k and d.k
OUT[join]=16
Q[groupby_100k]="SELECT k % 100000, count(*), sum(v) FROM fact GROUP BY 1"
KEYS[groupby_100k]=$((FACT_ROWS * 8))
OUT[groupby_100k]=$((100000 * 24))
Q[groupby_10m]="SELECT k, count(*), sum(v) FROM fact GROUP BY k"
KEYS[groupby_10m]=$((FACT_ROWS * 8))
OUT[groupby_10m]=$((DIM_ROWS * 24))

echo "| query | key columns (MB) | output (MB) | bound: 2 x keys + output (MB) | gpuhash (MB) | gpuhash / bound | PostgreSQL (MB) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for n in join groupby_100k groupby_10m; do
	base="SET max_parallel_workers_per_gather = $WORKERS; SET gpuhash.device = '$DEVICE';"
	sql=${Q[$n]}
	# run whole at the server, the rows discarded (as bench_queries.sh)
	sql=$(bench_run "$sql")
	gh=$(peak_kb "$base SET gpuhash.enabled = on; SET gpuhash.force = on;" "$sql")
	pg="-"
	if [ "${MEMORY_PG:-1}" = 1 ]; then
		pg=$(mb "$(peak_kb "$base SET gpuhash.enabled = off;" "$sql")")
	fi
	bound=$(( (2 * KEYS[$n] + OUT[$n]) / 1024 ))
	printf '| `%s` | %s | %s | %s | %s | %s | %s |\n' "${Q[$n]}" \
		"$(mb $((KEYS[$n] / 1024)))" "$(mb $((OUT[$n] / 1024)))" "$(mb "$bound")" "$(mb "$gh")" \
		"$(awk -v a="$gh" -v b="$bound" 'BEGIN{printf "%.2fx", a / b}')" "$pg"
done
