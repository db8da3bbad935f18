#!/usr/bin/env bash
# bench_ssb.sh: the Star Schema Benchmark's 13 queries (test/ssb/), gpuhash
# on vs PostgreSQL's own plans, in one run on one server.
#
# For each scale factor in SF, generates the SSB tables in SQL into the schema
# ssb_sf<SF> (test/ssb/schema.sql and generate.sql; LOADERS parallel sessions)
# unless they are there already, complete and made by the same generator;
# then runs each query in each mode, REPS times in one session, and prints a
# markdown table of median times and ratios.  Timings come from psql's
# \timing (client round trip included; SSB results are at most a few hundred
# rows).  A session's first gpuhash run also opens the engine (on a GPU, its
# CUDA context), which the median of 3 or more runs leaves out.  Every run's
# result is checked: the md5 of its sorted rows must equal that of
# PostgreSQL's plan; a difference is marked ✗, shown, and makes the script
# exit non-zero.  The "gpuhash nodes" column counts the GpuHashJoin and
# GpuHashAgg nodes in the plans of gpuhash mode.
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
# Environment: SF (1; several allowed, "1 10"; fractional ones such as 0.1
# give smaller fact and dimension tables and the full date table), REPS (3),
# WORKERS ("2 8"), GPUHASH_DEVICE (gpu), GPUHASH_FORCE (on), BREAKDOWN (0),
# LOADERS (8), SSB_QUERIES (all, or names such as "q1.1 q3.2").
# Connection: the usual PGHOST/PGPORT/PGUSER/PGDATABASE; the database needs
# CREATE EXTENSION gpuhash.
set -euo pipefail
ssb=$(cd "$(dirname "$0")/ssb" && pwd)
SF=${SF:-1}
REPS=${REPS:-3}
WORKERS=${WORKERS:-"2 8"}
DEVICE=${GPUHASH_DEVICE:-gpu}
read -ra FORCES <<<"${GPUHASH_FORCE:-on}"
for f in "${FORCES[@]}"; do
	[[ $f == on || $f == off ]] || { echo "bench_ssb: GPUHASH_FORCE must be on, off or \"on off\"" >&2; exit 2; }
done
# the gpuhash modes: gh_on (forced), gh_off (the cost model's plans)
GMODES=$(printf 'gh_%s ' "${FORCES[@]}")
BREAKDOWN=${BREAKDOWN:-0}
LOADERS=${LOADERS:-8}
PSQL="psql -X -v ON_ERROR_STOP=1 -q"
work=$(mktemp -d /tmp/gpuhash-ssb.XXXXXX)
trap 'rm -rf "$work"' EXIT

for sf in $SF; do
	if ! [[ $sf =~ ^[0-9]+(\.[0-9]+)?$ ]] || [ "$(awk -v s="$sf" 'BEGIN{print (s > 0)}')" != 1 ]; then
		echo "bench_ssb: SF must be positive numbers, not \"$sf\"" >&2
		exit 2
	fi
done
if ! [[ $REPS =~ ^[1-9][0-9]*$ ]]; then
	echo "bench_ssb: REPS must be a positive integer, not \"$REPS\"" >&2
	exit 2
fi
if [ "${SSB_QUERIES:-all}" = all ]; then
	queries=$(printf '%s\n' "$ssb"/q*.sql | sed 's|.*/||; s/\.sql$//' | sort -V)
else
	queries=$SSB_QUERIES
fi
for q in $queries; do
	[ -f "$ssb/$q.sql" ] || { echo "bench_ssb: no query $ssb/$q.sql" >&2; exit 2; }
done
# data made by another version of the generator are made again
generator=$(cat "$ssb/schema.sql" "$ssb/generate.sql" | md5sum | cut -c1-32)
failures=0

# loaded SCHEMA SF: the schema holds a complete load of SF by this generator
loaded() {
	local schema=$1 sf=$2
	[ "$($PSQL -At -c "SELECT to_regclass('$schema.ssb_info') IS NOT NULL")" = t ] &&
		[ "$($PSQL -At -c "SELECT i.sf = $sf AND i.generator = '$generator'
		                          AND i.lineorder_rows = (SELECT count(*) FROM $schema.lineorder)
		                   FROM $schema.ssb_info i")" = t ]
}

# load SCHEMA SF: generate the tables, the fact table in LOADERS sessions
load() {
	local schema=$1 sf=$2 start=$SECONDS orders per i lo hi rc=0 pids=()
	local in
	read -ra in <<<"$PSQL"
	in+=(-c "SET search_path = $schema")
	echo "bench_ssb: loading SSB scale factor $sf into schema $schema with $LOADERS sessions..." >&2
	$PSQL -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS $schema CASCADE" \
	      -c "CREATE SCHEMA $schema"
	"${in[@]}" -f "$ssb/schema.sql" -v step=setup -v sf="$sf" -f "$ssb/generate.sql"
	orders=$($PSQL -At -c "SELECT orders FROM $schema.ssb_info")
	"${in[@]}" -v step=dimensions -f "$ssb/generate.sql" &
	pids+=($!)
	per=$(((orders + LOADERS - 1) / LOADERS))
	for ((i = 0; i < LOADERS && i * per < orders; i++)); do
		lo=$((i * per + 1)) hi=$(((i + 1) * per))
		((hi > orders)) && hi=$orders
		"${in[@]}" -v step=lineorder -v first="$lo" -v last="$hi" -f "$ssb/generate.sql" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	if [ $rc != 0 ]; then
		echo "bench_ssb: loading scale factor $sf failed" >&2
		exit 1
	fi
	"${in[@]}" -c "ALTER TABLE ssb_date ADD PRIMARY KEY (d_datekey)" \
	    -c "ALTER TABLE customer ADD PRIMARY KEY (c_custkey)" \
	    -c "ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)" \
	    -c "ALTER TABLE part ADD PRIMARY KEY (p_partkey)"
	pids=()
	for i in lineorder ssb_date customer supplier part; do
		"${in[@]}" -c "VACUUM (FREEZE, ANALYZE) $i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	[ $rc = 0 ] || exit 1
	$PSQL -c "UPDATE $schema.ssb_info SET generator = '$generator',
	                 lineorder_rows = (SELECT count(*) FROM $schema.lineorder)"
	echo "bench_ssb: loaded scale factor $sf in $((SECONDS - start)) s" >&2
}

# sql_of QUERY: the query's text, without its comment and final semicolon
sql_of() { sed '/^--/d; s/;[[:space:]]*$//' "$ssb/$1.sql"; }

# settings SCHEMA MODE WORKERS: the SET commands of a mode (pg, gh_on, gh_off)
settings() {
	local s="SET search_path = $1; SET max_parallel_workers_per_gather = $3;"
	s+=" SET gpuhash.device = '$DEVICE';"
	if [ "$2" = pg ]; then
		echo "$s SET gpuhash.enabled = off;"
	else
		echo "$s SET gpuhash.enabled = on; SET gpuhash.force = ${2#gh_};"
	fi
}

# the name of a gpuhash mode in the tables
mode_name() { [ "$1" = gh_on ] && echo "gpuhash (forced)" || echo "gpuhash (cost-based)"; }

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
	MEDIAN=$(sort -g "$work/times" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	DIGESTS=""
	for ((r = 0; r < REPS; r++)); do
		touch "$work/run.$r"
		LC_ALL=C sort "$work/run.$r" >"$work/run.$r.sorted"
		DIGESTS+=" $(md5sum <"$work/run.$r.sorted" | cut -c1-32)"
	done
	ROWS=$(wc -l <"$work/run.0")
}

# nodes SETTINGS SQL: the gpuhash nodes of the plan: "3 GpuHashJoin", "none", ...
nodes() {
	local plan j a s=""
	plan=$($PSQL -At -c "$1" -c "EXPLAIN (COSTS OFF) $2")
	j=$(grep -c 'GpuHashJoin' <<<"$plan" || true)
	a=$(grep -c 'GpuHashAgg' <<<"$plan" || true)
	[ "$j" = 0 ] || s="$j GpuHashJoin"
	[ "$a" = 0 ] || s+="${s:+, }$a GpuHashAgg"
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
	     "GpuHashJoin: build + probe on device | GpuHashAgg: on device |"
	echo "|---|---:|---:|---:|---:|---:|"
	for q in $queries; do
		for mode in pg gpuhash; do
			$PSQL -c "$(settings "$schema" "$([ $mode = pg ] && echo pg || echo "gh_${FORCES[0]}")" "$w")" \
			      -c "EXPLAIN (ANALYZE, BUFFERS) $(sql_of "$q")" >"$work/plan.$q.$mode" 2>&1 ||
				{ failures=$((failures + 1)); echo "bench_ssb: EXPLAIN of $q failed" >&2; }
		done
		awk -v q="$q" -v pgfile="$work/plan.$q.pg" '
			function ms(line) { sub(/.*: /, "", line); sub(/ ms.*/, "", line); return line + 0 }
			/Execution Time:/ { exec = ms($0) }
			/Planning Time:/ { plan = ms($0) }
			/Build Time:|Probe Time:/ { join += ms($0); j = 1 }
			/Aggregation Time:/ { agg += ms($0); a = 1 }
			END {
				while ((getline line < pgfile) > 0)
					if (line ~ /Execution Time:/) pgexec = ms(line)
				printf "| %s | %.1f | %.1f | %.1f | %s | %s |\n", toupper(q), pgexec, exec, plan,
				       j ? sprintf("%.1f", join) : "-", a ? sprintf("%.1f", agg) : "-"
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
	schema=ssb_sf${sf//./_}
	loaded "$schema" "$sf" || load "$schema" "$sf"
	# warm the buffer cache
	for t in lineorder ssb_date customer supplier part; do
		$PSQL -c "SELECT count(*) FROM $schema.$t" >/dev/null
	done
	rows=$($PSQL -At -c "SELECT lineorder_rows FROM $schema.ssb_info")
	server=$($PSQL -At -c "SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name)
	                       FROM pg_settings WHERE name IN ('jit', 'shared_buffers', 'work_mem')")
	echo "SSB scale factor $sf: lineorder $rows rows; median of $REPS runs in seconds;" \
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
		sql=$(sql_of "$q")
		ref="" refrows="" line="" ok="✓" plan_nodes=()
		for w in $WORKERS; do
			nl=""
			for g in $GMODES; do
				nl+="${nl:+; }$([ "${#FORCES[@]}" -gt 1 ] && echo "${g#gh_}: ")"
				nl+="$(nodes "$(settings "$schema" "$g" "$w")" "$sql" 2>/dev/null || echo "?")"
			done
			plan_nodes+=("$nl")
			for mode in pg $GMODES; do
				if ! measure "$(settings "$schema" $mode "$w")" "$sql"; then
					echo "bench_ssb: $q, $mode $w workers, SF $sf failed:" >&2
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
						echo "bench_ssb: WRONG RESULT: $q at SF $sf, mode $mode with $w workers, run $((r + 1)):" \
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
	echo "bench_ssb: $failures FAILED CHECKS (wrong results or errors): see above" >&2
	exit 1
fi
