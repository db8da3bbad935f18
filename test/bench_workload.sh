#!/usr/bin/env bash
# bench_workload.sh: an analytical workload's queries, gpuhash on vs
# PostgreSQL's own plans, in one run on one server.
#
#   WORKLOAD=ssb  bash test/bench_workload.sh   the Star Schema Benchmark's 13
#                                               queries (test/ssb/)
#   WORKLOAD=tpch bash test/bench_workload.sh   the 22 TPC-H query shapes
#                                               (test/tpch/)
#
# For each scale factor in SF, generates the workload's tables in SQL into the
# schema <workload>_sf<SF> (test/workload.sh: the workload's schema.sql,
# generate.sql and keys.sql; LOADERS parallel sessions) unless they are there
# already, complete and made by the same generator; then runs each query
# REPS times in each mode, in one session, the modes' runs interleaved
# (PostgreSQL, gpuhash, then gpuhash, PostgreSQL, ...: a machine whose speed
# drifts during the runs slows both alike), and prints a markdown table of
# median times and ratios.  Timings come from psql's \timing (client round trip
# included; the results are at most a few hundred rows, TPC-H's Q16 and Q11
# some thousands).  A session's first gpuhash run also opens the engine (on a
# GPU, its CUDA context), which the median of 3 or more runs leaves out.
# Every run's result is checked: the md5 of its sorted rows, as psql prints
# them (numerics as text, exactly), must equal that of PostgreSQL's plan; a
# difference is marked ✗, shown, and makes the script exit non-zero.  The
# queries return no floating-point values, whose last digits could differ by
# the order of summation.  The "gpuhash nodes" column counts the gpuhash nodes
# of each kind (GpuHashJoin, GpuHashAgg, GpuStarAgg, ...) in the plans of
# gpuhash mode.
#
# Modes: "pg N"      gpuhash.enabled = off, max_parallel_workers_per_gather = N
#        "gpuhash N" gpuhash.enabled = on and gpuhash.force = on (gpuhash's
#                    nodes wherever they apply, whatever the cost model says),
#                    device as set, max_parallel_workers_per_gather = N
# gpuhash.force makes every gpuhash path cost nothing, so among the forced
# plans the join order is not chosen by cost (a fact table can end up as the
# build side); GPUHASH_FORCE=off times gpuhash's cost-based plans instead,
# and GPUHASH_FORCE="on off" both, against the same PostgreSQL times (what
# the cost model chose, and what it passed over).
#
# With BREAKDOWN=1, each table is followed by where the time goes: for every
# query, EXPLAIN (ANALYZE, BUFFERS) with gpuhash off and on (the first worker
# count of WORKERS), a summary of execution and device times, and the plans.
#
# Environment: WORKLOAD (ssb or tpch), SF (1; several allowed, "1 10";
# fractional ones such as 0.1 give smaller tables), REPS (3), WORKERS ("2 8"),
# GPUHASH_DEVICE (gpu), GPUHASH_FORCE (on), BREAKDOWN (0), LOADERS (8),
# QUERIES (all, or names such as "q1.1 q3.2" or "q1 q18"), GPUHASH_DEVICES
# (unset: gpuhash.devices as the server has it; else the settings to time
# each gpuhash mode with, such as "0 all": one GPU, then every GPU),
# SCHEMA_FIRST (a schema searched before the workload's, whose tables stand
# in for the workload's of the same names: bench_partitioned.sh's partitioned
# fact table).
# Connection: the usual PGHOST/PGPORT/PGUSER/PGDATABASE; the database needs
# CREATE EXTENSION gpuhash.
set -euo pipefail
. "$(dirname "$0")/workload.sh"
WORKLOAD=${WORKLOAD:-}
me=bench_${WORKLOAD:-workload}
if [ -z "$WORKLOAD" ]; then
	echo "$me: set WORKLOAD to ssb or tpch" >&2
	exit 2
fi
wl_init "$WORKLOAD" || exit 2
SF=${SF:-1}
REPS=${REPS:-3}
WORKERS=${WORKERS:-"2 8"}
DEVICE=${GPUHASH_DEVICE:-gpu}
read -ra FORCES <<<"${GPUHASH_FORCE:-on}"
for f in "${FORCES[@]}"; do
	[[ $f == on || $f == off ]] || { echo "$me: GPUHASH_FORCE must be on, off or \"on off\"" >&2; exit 2; }
done
# the gpuhash modes: gh_on (forced), gh_off (the cost model's plans), each
# as gh_on:DEVICES where GPUHASH_DEVICES names gpuhash.devices settings
read -ra DEVSETS <<<"${GPUHASH_DEVICES:-}"
GMODES=""
for f in "${FORCES[@]}"; do
	if [ "${#DEVSETS[@]}" -eq 0 ]; then
		GMODES+="gh_$f "
	else
		for d in "${DEVSETS[@]}"; do GMODES+="gh_$f:$d "; done
	fi
done
BREAKDOWN=${BREAKDOWN:-0}
LOADERS=${LOADERS:-8}
PSQL="psql -X -v ON_ERROR_STOP=1 -q"
work=$(mktemp -d /tmp/gpuhash-$WORKLOAD.XXXXXX)
trap 'rm -rf "$work"' EXIT

for sf in $SF; do
	if ! [[ $sf =~ ^[0-9]+(\.[0-9]+)?$ ]] || [ "$(awk -v s="$sf" 'BEGIN{print (s > 0)}')" != 1 ]; then
		echo "$me: SF must be positive numbers, not \"$sf\"" >&2
		exit 2
	fi
done
if ! [[ $REPS =~ ^[1-9][0-9]*$ ]]; then
	echo "$me: REPS must be a positive integer, not \"$REPS\"" >&2
	exit 2
fi
queries=$(wl_queries ${QUERIES:-all}) || exit 2
failures=0

# settings SCHEMA MODE WORKERS: the SET commands of a mode (pg, gh_on, gh_off)
settings() {
	local s="SET search_path = ${SCHEMA_FIRST:+$SCHEMA_FIRST, }$1; SET max_parallel_workers_per_gather = $3;" m=${2%%:*}
	s+=" SET gpuhash.device = '$DEVICE';"
	[[ $2 == *:* ]] && s+=" SET gpuhash.devices = '${2#*:}';"
	if [ "$m" = pg ]; then
		echo "$s SET gpuhash.enabled = off;"
	else
		echo "$s SET gpuhash.enabled = on; SET gpuhash.force = ${m#gh_};"
	fi
}

# the name of a gpuhash mode in the tables
mode_name() {
	local n
	[ "${1%%:*}" = gh_on ] && n="gpuhash (forced)" || n="gpuhash (cost-based)"
	[[ $1 == *:* ]] && n+=" on GPUs ${1#*:}"
	echo "$n"
}

# measure SETTINGS SQL: runs SQL REPS times in one session; sets MEDIAN (ms),
# ROWS and DIGESTS (one md5 of the sorted rows per run, which are left in
# run.N.sorted); fails with psql
measure() {
	local r args=()
	for ((r = 0; r < REPS; r++)); do args+=(-c "$2"); done
	rm -f "$work"/run.* "$work/times"
	$PSQL -At -c "$1" -c '\timing on' "${args[@]}" >"$work/out" 2>"$work/err" || return 1
	awk -v dir="$work" 'BEGIN { n = 0 } /^Time: / { print $2 > (dir "/times"); n++; next }
	                    { print > (dir "/run." n) }' "$work/out"
	summarize "$work"
}

# summarize DIR: MEDIAN, DIGESTS and ROWS of the runs DIR/run.N and the times
# DIR/times (one a line), leaving the sorted rows in run.N.sorted of $work
summarize() {
	local r
	MEDIAN=$(sort -g "$1/times" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	DIGESTS=""
	for ((r = 0; r < REPS; r++)); do
		touch "$1/run.$r"
		LC_ALL=C sort "$1/run.$r" >"$work/run.$r.sorted"
		DIGESTS+=" $(md5sum <"$work/run.$r.sorted" | cut -c1-32)"
	done
	ROWS=$(wc -l <"$1/run.0")
}

# measure_modes SQL SETTINGS...: the runs of every mode interleaved in one
# session, the modes' order reversed from one round to the next (A B, B A,
# A B, ...), so that a drift of the machine's speed during the runs (clock
# boost, the OS, background writes) weighs on each mode alike; the runs of
# mode i are left in $work/m.i (run.N and times, as measure leaves them);
# fails with psql
measure_modes() {
	local sql=$1 r i k args=()
	shift
	local modes=("$@") n=$#
	rm -rf "$work"/m.*
	for ((r = 0; r < REPS; r++)); do
		for ((k = 0; k < n; k++)); do
			i=$(( r % 2 == 0 ? k : n - 1 - k ))
			args+=(-c "\\echo @@run $i $r" -c "${modes[$i]}" -c "$sql")
		done
	done
	$PSQL -At -c '\timing on' "${args[@]}" >"$work/out" 2>"$work/err" || return 1
	for ((i = 0; i < n; i++)); do mkdir -p "$work/m.$i"; done
	# in each block: the settings' Time, then the query's rows and its Time
	awk -v dir="$work" '
		/^@@run / { d = dir "/m." $2; r = $3; t = 0; next }
		/^Time: / { if (t++ == 1) print $2 >> (d "/times"); next }
		d != "" && t == 1 { print >> (d "/run." r) }' "$work/out"
}

# nodes SETTINGS SQL: the gpuhash nodes of the plan, by kind in name order:
# "1 GpuHashAgg, 3 GpuHashJoin", "none", ...
nodes() {
	local plan s
	plan=$($PSQL -At -c "$1" -c "EXPLAIN (COSTS OFF) $2")
	s=$(grep -o 'Custom Scan (Gpu[A-Za-z]*)' <<<"$plan" | sed 's/.*(//; s/)//' | LC_ALL=C sort |
	    uniq -c | awk '{ printf "%s%d %s", (NR > 1 ? ", " : ""), $1, $2 }')
	echo "${s:-none}"
}

# secs MS: milliseconds as seconds; ratio A B: A / B; both pass "error" on
secs() { awk -v a="$1" 'BEGIN { if (a == "error") print a; else printf "%.3f", a / 1000 }'; }
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "error" || b == "error" || b <= 0) print "-"; else printf "%.2fx", a / b }'
}

# breakdown SCHEMA: EXPLAIN (ANALYZE, BUFFERS) of every query, off and on
breakdown() {
	local schema=$1 w=${WORKERS%% *} q mode
	echo
	echo "Where the time goes: EXPLAIN (ANALYZE, BUFFERS), $w workers (times in ms, with the"
	echo "overhead of per-node timing; device times are the engine's, summed over the plan's nodes)."
	echo
	echo "| query | PostgreSQL: execution | gpuhash: execution | gpuhash: planning |" \
	     "GpuHashJoin: build + probe on device | GpuHashAgg: on device |" \
	     "GpuStarAgg: dimensions + fact + result |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for q in $queries; do
		for mode in pg gpuhash; do
			$PSQL -c "$(settings "$schema" "$([ $mode = pg ] && echo pg || echo "gh_${FORCES[0]}")" "$w")" \
			      -c "EXPLAIN (ANALYZE, BUFFERS) $(wl_sql "$q")" >"$work/plan.$q.$mode" 2>&1 ||
				{ failures=$((failures + 1)); echo "$me: EXPLAIN of $q failed" >&2; }
		done
		awk -v q="$q" -v pgfile="$work/plan.$q.pg" '
			function ms(line) { sub(/.*: /, "", line); sub(/ ms.*/, "", line); return line + 0 }
			function cell(set, v) { return set ? sprintf("%.1f", v) : "-" }
			/Execution Time:/ { exec = ms($0) }
			/Planning Time:/ { plan = ms($0) }
			/Build Time:|Probe Time:/ { join += ms($0); j = 1 }
			/Aggregation Time:/ { agg += ms($0); a = 1 }
			/Dimension Time:|Fact Time:|Result Time:/ { star += ms($0); s = 1 }
			END {
				while ((getline line < pgfile) > 0)
					if (line ~ /Execution Time:/) pgexec = ms(line)
				printf "| %s | %.1f | %.1f | %.1f | %s | %s | %s |\n", toupper(q), pgexec, exec,
				       plan, cell(j, join), cell(a, agg), cell(s, star)
			}' "$work/plan.$q.gpuhash"
	done
	for q in $queries; do
		for mode in pg gpuhash; do
			echo
			if [ $mode = pg ]; then
				echo "${q^^}, gpuhash off (PostgreSQL):"
			else
				echo "${q^^}, gpuhash on, gpuhash.force = ${FORCES[0]}:"
			fi
			echo
			echo '```'
			cat "$work/plan.$q.$mode"
			echo '```'
		done
	done
}

for sf in $SF; do
	schema=$(wl_schema "$sf")
	wl_ensure "$schema" "$sf" "$LOADERS" || exit 1
	# warm the buffer cache
	tables=$(wl_tables "$schema")
	for t in $tables; do
		$PSQL -c "SELECT count(*) FROM $schema.$t" >/dev/null
	done
	if [ -n "${SCHEMA_FIRST:-}" ]; then
		for t in $($PSQL -At -c "SELECT relname FROM pg_class
		                         WHERE relnamespace = '$SCHEMA_FIRST'::regnamespace
		                           AND relkind IN ('r', 'p')"); do
			$PSQL -c "SELECT count(*) FROM $SCHEMA_FIRST.$t" >/dev/null
		done
	fi
	fact=${tables%%$'\n'*}
	rows=$($PSQL -At -c "SELECT count(*) FROM $schema.$fact")
	server=$($PSQL -At -c "SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name)
	                       FROM pg_settings WHERE name IN ('jit', 'shared_buffers', 'work_mem')")
	echo "$WL_TITLE scale factor $sf${SCHEMA_FIRST:+ (schema $SCHEMA_FIRST first)}: $fact $rows rows; median of $REPS runs in seconds;" \
	     "gpuhash.device = $DEVICE, gpuhash.force = ${FORCES[*]}; $server."
	echo
	header="| query | rows |"
	sep="|---|---:|"
	for w in $WORKERS; do
		header+=" PostgreSQL, $w workers |"
		sep+="---:|"
		for g in $GMODES; do
			header+=" $(mode_name "$g"), $w workers | speed-up |"
			sep+="---:|---:|"
		done
	done
	echo "$header gpuhash nodes | same result |"
	echo "$sep---|:---:|"
	declare -A total=() t=()
	for q in $queries; do
		sql=$(wl_sql "$q")
		ref="" refrows="" line="" ok="✓" plan_nodes=()
		for w in $WORKERS; do
			nl=""
			for g in $GMODES; do
				nl+="${nl:+; }"
				[ "${#FORCES[@]}" -gt 1 ] && nl+="${g#gh_}: "
				nl+="$(nodes "$(settings "$schema" "$g" "$w")" "$sql" 2>/dev/null || echo "?")"
			done
			plan_nodes+=("$nl")
			modes=(pg $GMODES)
			msets=()
			for mode in "${modes[@]}"; do msets+=("$(settings "$schema" "$mode" "$w")"); done
			# interleaved; where that session fails, each mode alone, to tell which failed
			interleaved=0
			measure_modes "$sql" "${msets[@]}" && interleaved=1
			for mi in "${!modes[@]}"; do
				mode=${modes[$mi]}
				if [ "$interleaved" = 1 ]; then
					summarize "$work/m.$mi"
				elif ! measure "${msets[$mi]}" "$sql"; then
					echo "$me: $q, $mode $w workers, SF $sf failed:" >&2
					cat "$work/err" >&2
					ok="✗"
					failures=$((failures + 1))
					t[$mode]=error
					total[$mode.$w]=error
					continue
				fi
				t[$mode]=$MEDIAN
				[ "${total[$mode.$w]:-}" = error ] ||
					total[$mode.$w]=$(awk -v a="${total[$mode.$w]:-0}" -v b="$MEDIAN" 'BEGIN { print a + b }')
				if [ -z "$ref" ]; then
					ref=${DIGESTS# }
					ref=${ref%% *}
					refrows=$ROWS
					cp "$work/run.0.sorted" "$work/ref.sorted"
				fi
				r=0
				for d in $DIGESTS; do
					if [ "$d" != "$ref" ]; then
						ok="✗"
						failures=$((failures + 1))
						echo "$me: WRONG RESULT: $q at SF $sf, mode $mode with $w workers, run $((r + 1)):" \
						     "$(wc -l <"$work/run.$r.sorted") rows (md5 $d) where the first run of" \
						     "PostgreSQL's plan gave $refrows rows (md5 $ref); first differences:" >&2
						diff "$work/ref.sorted" "$work/run.$r.sorted" | head -20 >&2 || true
						break
					fi
					r=$((r + 1))
				done
			done
			line+=" $(secs "${t[pg]}") |"
			for g in $GMODES; do
				line+=" $(secs "${t[$g]}") | $(ratio "${t[pg]}" "${t[$g]}") |"
			done
		done
		# one entry, or one per worker count where the plans differ
		n=$(printf '%s\n' "${plan_nodes[@]}" | sort -u | wc -l)
		if [ "$n" = 1 ]; then
			n=${plan_nodes[0]}
		else
			n=$(printf '%s / ' "${plan_nodes[@]}")
			n=${n% / }
		fi
		echo "| ${q^^} | ${refrows:-?} |$line $n | $ok |"
	done
	line="| total | |"
	for w in $WORKERS; do
		a=${total[pg.$w]:-0}
		line+=" $(secs "$a") |"
		for g in $GMODES; do
			b=${total[$g.$w]:-0}
			line+=" $(secs "$b") | $(ratio "$a" "$b") |"
		done
	done
	echo "$line | |"
	unset total
	[ "$BREAKDOWN" = 1 ] && breakdown "$schema"
	echo
done

if [ "$failures" != 0 ]; then
	echo "$me: $failures FAILED CHECKS (wrong results or errors): see above" >&2
	exit 1
fi
