#!/usr/bin/env bash
# scaleout.sh: gpuhash on several PostgreSQL servers at once, through
# PostgreSQL's own distributed machinery: a coordinator whose tables are
# partitioned across data servers as postgres_fdw foreign partitions.
#
#   bash test/scaleout.sh          check: plans and results at a small size
#   bash test/scaleout.sh bench    measure: one server against the data servers
#
# Starts throwaway servers on Unix sockets (test/pgcluster.sh): a coordinator
# and GH_SCALEOUT_SERVERS data servers (default 2), each data server with
# gpuhash preloaded and its own GPU service.  On the data servers, fact_pI and
# dim_pI hold the rows whose k hashes to partition I; on the coordinator, fact
# and dim are partitioned by hash of k into foreign tables, one per data
# server (asynchronous foreign scans), with enable_partitionwise_aggregate and
# enable_partitionwise_join on.  fact_ref and dim_ref on the coordinator hold
# the same rows in one server, without gpuhash.
#
# check: for each query, EXPLAIN VERBOSE on the coordinator must show what is
# pushed down to the data servers (the remote SQL), EXPLAIN of that remote SQL
# on each data server must show GpuHashAgg or GpuHashJoin where the query
# pushes down, and the rows must equal those of fact_ref and dim_ref.  The
# data servers run the GPU backend when GPUHASH_DEVICE=gpu, else the CPU
# backend, with gpuhash.force (the size is too small for the cost model).
# Ends with "N passed, N failed"; exits non-zero on a failure.
#
# bench: GH_SCALEOUT_ROWS fact rows (default 100000000) and as many dim rows
# as keys (GH_SCALEOUT_KEYS, default 1000000); the time of each query, median
# of REPS runs (default 3), on one server (the first data server, holding all
# rows, gpuhash off and on) and on the coordinator with the data servers
# (gpuhash on, its cost model deciding).  GH_SCALEOUT_GPUS="0 1" gives data
# server I the GPU named by the I-th word (gpuhash.devices); default: all.
#
# Environment: GPUHASH_DEVICE, PG_CONFIG, GH_SCALEOUT_NO_BUILD=1 (skip make
# and make install), GH_SCALEOUT_ROWS, GH_SCALEOUT_KEYS, GH_SCALEOUT_SERVERS,
# GH_SCALEOUT_GPUS, REPS, GH_SCALEOUT_CONF (extra postgresql.conf lines for
# the data servers, e.g. "shared_buffers = '16GB'").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. test/common.sh

mode=${1:-check}
case $mode in
	check | bench) ;;
	*) echo "usage: $0 [check|bench]" >&2; exit 2 ;;
esac
device=$(gh_test_device scaleout) || exit 2
unset PGOPTIONS	# the servers' settings are their databases'; libpq would pass these on
nservers=${GH_SCALEOUT_SERVERS:-2}
if [ "$mode" = check ]; then
	rows=${GH_SCALEOUT_ROWS:-200000}
	keys=${GH_SCALEOUT_KEYS:-5000}
else
	rows=${GH_SCALEOUT_ROWS:-100000000}
	keys=${GH_SCALEOUT_KEYS:-1000000}
fi
reps=${REPS:-3}
read -r -a gpus <<<"${GH_SCALEOUT_GPUS:-}"
work=$(mktemp -d /tmp/gpuhash-scaleout.XXXXXX)
chmod 755 "$work"
pgbin=$("$GH_PG_CONFIG" --bindir)
passed=0
failed=0
clusters=()

finish() {
	local c
	for c in "${clusters[@]}"; do
		[ -f "$c/server.log" ] && cp "$c/server.log" "$work/$(basename "$c").log" 2>/dev/null
		bash test/pgcluster.sh stop "$c" >/dev/null 2>&1
	done
	if [ "$failed" != 0 ]; then
		echo "scaleout: server logs and outputs kept in $work"
	else
		rm -rf "$work"
	fi
}
trap finish EXIT

# ok NAME CONDITION-STATUS: record one check
ok() {
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
		echo "ok - $1"
	else
		failed=$((failed + 1))
		echo "not ok - $1"
	fi
}

# psql_on DIR SQL...: run statements on the server in DIR, database scaleout
psql_on() {
	local dir=$1
	shift
	local args=()
	for s in "$@"; do args+=(-c "$s"); done
	"$pgbin/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$dir" -p "$(cat "$dir/port")" -U postgres \
		-d scaleout "${args[@]}"
}

# ---- build, install, servers ----
if [ "${GH_SCALEOUT_NO_BUILD:-0}" != 1 ]; then
	make -s >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; exit 2; }
	gh_install || exit 2
fi

# start NAME PORT WORKERS [CONF]: a throwaway server in $work/NAME
start() {
	local dir=$work/$1
	clusters+=("$dir")
	GH_SERVICE_WORKERS=$3 GH_CLUSTER_CONF=${4:-} bash test/pgcluster.sh start "$dir" "$2" \
		>/dev/null 2>"$work/$1.start.log" || { cat "$work/$1.start.log"; return 1; }
	"$pgbin/psql" -X -q -h "$dir" -p "$2" -U postgres -d postgres \
		-c "CREATE DATABASE scaleout" >/dev/null
}

echo "== servers: a coordinator and $nservers data servers, $rows fact rows, $keys keys" \
	"(gpuhash.device = $device, $("$pgbin/postgres" --version))"
start coord 54340 0 || exit 2
coord=$work/coord
data=()
for i in $(seq 1 "$nservers"); do
	start "data$i" $((54340 + i)) 1 "${GH_SCALEOUT_CONF:-}" || exit 2
	data+=("$work/data$i")
done

# ---- data ----
# Rows are a function of a counter s, so every server generates the same
# table and keeps the part that hashes to its partition.
fact_rows="SELECT (s % $keys)::int AS k, (s % 97)::int AS g, (s * 7 % 1000)::bigint AS v
	FROM generate_series(1, $rows) AS s"
dim_rows="SELECT k::int AS k, (k % 13)::int AS w, 'name ' || k AS name
	FROM generate_series(0, $keys - 1) AS k"
if [ "$mode" = check ]; then
	data_settings="gpuhash.device = '$device', gpuhash.force = on, gpuhash.min_rows = 0"
else
	data_settings="gpuhash.device = '$device'"
fi
t0=$SECONDS
pids=()
for i in $(seq 1 "$nservers"); do
	d=${data[$((i - 1))]}
	r=$((i - 1))
	settings=$data_settings
	[ -n "${gpus[$r]:-}" ] && settings="$settings, gpuhash.devices = '${gpus[$r]}'"
	# postgres_fdw reads through cursors, planned for their first tenth of rows
	# unless cursor_tuple_fraction says otherwise; the whole result is read
	psql_on "$d" "CREATE EXTENSION gpuhash" \
		"ALTER DATABASE scaleout SET cursor_tuple_fraction = 1" \
		"$(echo "$settings" | tr ',' '\n' | sed 's/^ *\(.*\)/ALTER DATABASE scaleout SET \1;/')" \
		"CREATE TABLE shape (k int) PARTITION BY HASH (k)" \
		"CREATE TABLE fact_p$r (k int, g int, v bigint)" \
		"CREATE TABLE dim_p$r (k int, w int, name text)" \
		"INSERT INTO fact_p$r SELECT * FROM ($fact_rows) f
			WHERE satisfies_hash_partition('shape'::regclass, $nservers, $r, k)" \
		"INSERT INTO dim_p$r SELECT * FROM ($dim_rows) d
			WHERE satisfies_hash_partition('shape'::regclass, $nservers, $r, k)" \
		"VACUUM ANALYZE fact_p$r" "VACUUM ANALYZE dim_p$r" >"$work/load$i.log" 2>&1 &
	pids+=($!)
done
# the coordinator: foreign partitions, and the reference copy
{
	echo "CREATE EXTENSION postgres_fdw;"
	echo "ALTER DATABASE scaleout SET enable_partitionwise_aggregate = on;"
	echo "ALTER DATABASE scaleout SET enable_partitionwise_join = on;"
	echo "CREATE TABLE fact (k int, g int, v bigint) PARTITION BY HASH (k);"
	echo "CREATE TABLE dim (k int, w int, name text) PARTITION BY HASH (k);"
	for i in $(seq 1 "$nservers"); do
		d=${data[$((i - 1))]}
		r=$((i - 1))
		echo "CREATE SERVER data$i FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$d',
			port '$(cat "$d/port")', dbname 'scaleout', async_capable 'true', fetch_size '10000',
			use_remote_estimate 'true');"
		echo "CREATE USER MAPPING FOR CURRENT_USER SERVER data$i OPTIONS (user 'postgres');"
		echo "CREATE FOREIGN TABLE fact_p$r PARTITION OF fact
			FOR VALUES WITH (MODULUS $nservers, REMAINDER $r) SERVER data$i;"
		echo "CREATE FOREIGN TABLE dim_p$r PARTITION OF dim
			FOR VALUES WITH (MODULUS $nservers, REMAINDER $r) SERVER data$i;"
	done
	if [ "$mode" = check ]; then
		echo "CREATE TABLE fact_ref AS $fact_rows;"
		echo "CREATE TABLE dim_ref AS $dim_rows;"
		echo "ANALYZE fact_ref; ANALYZE dim_ref;"
	fi
} >"$work/coord.sql"
"$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -h "$coord" -p "$(cat "$coord/port")" -U postgres \
	-d scaleout -f "$work/coord.sql" >"$work/coord.log" 2>&1 || { cat "$work/coord.log"; exit 2; }
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || { cat "$work/load$((i + 1)).log"; exit 2; }
done
# statistics of every foreign partition (ANALYZE of the parent does not
# keep them), sampled from its data server
psql_on "$coord" "ANALYZE fact, dim$(for i in $(seq 0 $((nservers - 1))); do
	echo -n ", fact_p$i, dim_p$i"; done)" || exit 2
echo "   loaded in $((SECONDS - t0))s"

# ---- the queries ----
# name|what pushes down ("agg", "join", "join agg", or "scan": nothing but the
# scan)|whether the coordinator's foreign scans run asynchronously (only those
# directly under its Append do)|SQL with {fact} and {dim} for the tables
queries=(
	"group by the partition key|agg|async|SELECT k, count(*), sum(v), min(v), max(v), avg(v) FROM {fact} GROUP BY k ORDER BY k"
	"join on the partition key, grouped by it|join agg|async|SELECT f.k, count(*), sum(f.v), max(d.w) FROM {fact} f JOIN {dim} d ON d.k = f.k GROUP BY f.k ORDER BY f.k"
	"join on the partition key|join|async|SELECT f.k, f.g, f.v, d.w FROM {fact} f JOIN {dim} d ON d.k = f.k WHERE d.w < 2"
	"aggregate of a join (partial aggregates stay on the coordinator)|join|sync|SELECT count(*), sum(d.w) FROM {fact} f JOIN {dim} d ON d.k = f.k"
	"group by another column (partial aggregates stay on the coordinator)|scan|sync|SELECT g, count(*), sum(v) FROM {fact} GROUP BY g ORDER BY g"
)
sql_for() { local q=${1//\{fact\}/$2}; echo "${q//\{dim\}/$3}"; }

if [ "$mode" = check ]; then
	echo "== plans and results"
	qn=0
	for entry in "${queries[@]}"; do
		IFS='|' read -r name push mode q <<<"$entry"
		qn=$((qn + 1))
		dist=$(sql_for "$q" fact dim)
		ref=$(sql_for "$q" fact_ref dim_ref)
		psql_on "$coord" "EXPLAIN (VERBOSE, COSTS OFF) $dist" >"$work/q$qn.plan" 2>&1
		remote=$(grep -c 'Remote SQL:' "$work/q$qn.plan")
		async=$(grep -c 'Async Foreign Scan' "$work/q$qn.plan")
		want_async=0
		[ "$mode" = async ] && want_async=$nservers
		ok "$name: $nservers foreign scans on the coordinator, $want_async asynchronous" \
			"$([ "$remote" = "$nservers" ] && [ "$async" = "$want_async" ]; echo $?)"
		# what the remote SQL holds: GROUP BY where the aggregate pushes down,
		# a JOIN where the join does
		grouped=$(grep 'Remote SQL:' "$work/q$qn.plan" | grep -c 'GROUP BY')
		joined=$(grep 'Remote SQL:' "$work/q$qn.plan" | grep -c ' JOIN ')
		want_grouped=0 want_joined=0
		case " $push " in *" agg "*) want_grouped=$nservers ;; esac
		case " $push " in *" join "*) want_joined=$nservers ;; esac
		ok "$name: pushed down: ${push/scan/the scan only}" \
			"$([ "$grouped" = "$want_grouped" ] && [ "$joined" = "$want_joined" ]; echo $?)"
		# each data server's plan of the SQL it is sent
		if [ "$push" != scan ]; then
			bad=0
			for i in $(seq 1 "$nservers"); do
				r=$((i - 1))
				rsql=$(grep 'Remote SQL:' "$work/q$qn.plan" | grep "\.fact_p$r\b" | head -1 |
					sed 's/^.*Remote SQL: //')
				psql_on "${data[$((i - 1))]}" "EXPLAIN (COSTS OFF) $rsql" \
					>"$work/q$qn.data$i.plan" 2>&1
				# an aggregate of a join may be one GpuStarAgg, or fused into a GpuHashAgg
				case $push in *agg*) node="GpuHashAgg or GpuStarAgg" ;; *) node=GpuHashJoin ;; esac
				grep -qE "${node// or /|}" "$work/q$qn.data$i.plan" || bad=1
				case $push in *join*) grep -qE 'GpuHashJoin|Fused Join:|GpuStarAgg' \
					"$work/q$qn.data$i.plan" || bad=1 ;; esac
			done
			ok "$name: the data servers run $node" "$bad"
		fi
		# the same rows, in any order
		psql_on "$coord" "$dist" 2>&1 | sort >"$work/q$qn.dist"
		psql_on "$coord" "$ref" 2>&1 | sort >"$work/q$qn.ref"
		ok "$name: the same $(wc -l <"$work/q$qn.ref") rows as one server without gpuhash" \
			"$([ -s "$work/q$qn.ref" ] && cmp -s "$work/q$qn.dist" "$work/q$qn.ref"; echo $?)"
	done
	if grep -hE 'PANIC|TRAP:|terminated by signal' "$work"/*/server.log; then
		ok "no server crashed" 1
	fi
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
fi

# ---- bench ----
# One server: the first data server gets all rows in a second database.
one=${data[0]}
"$pgbin/psql" -X -q -h "$one" -p "$(cat "$one/port")" -U postgres -d postgres \
	-c "CREATE DATABASE scaleout_one" >/dev/null || exit 2
"$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -h "$one" -p "$(cat "$one/port")" -U postgres \
	-d scaleout_one -c "CREATE EXTENSION gpuhash" \
	-c "ALTER DATABASE scaleout_one SET gpuhash.device = '$device'" \
	${gpus[0]:+-c "ALTER DATABASE scaleout_one SET gpuhash.devices = '${gpus[0]}'"} \
	-c "CREATE TABLE fact_all AS $fact_rows" -c "CREATE TABLE dim_all AS $dim_rows" \
	-c "VACUUM ANALYZE fact_all" -c "VACUUM ANALYZE dim_all" >"$work/one.log" 2>&1 ||
	{ cat "$work/one.log"; exit 2; }

# ms DIR DB OPTIONS SQL: the median time of REPS runs of SQL (after one warm-up)
ms() {
	local dir=$1 db=$2 opts=$3 sql=$4 i
	for i in $(seq 0 "$reps"); do
		PGOPTIONS=$opts "$pgbin/psql" -X -q -h "$dir" -p "$(cat "$dir/port")" -U postgres -d "$db" \
			-c '\timing on' -c "$sql" -o /dev/null | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' |
			{ [ "$i" = 0 ] && cat >/dev/null || cat; }
	done | sort -n | awk '{ t[NR] = $1 } END { printf "%.0f", t[int((NR + 1) / 2)] }'
}

echo "== bench: median of $reps runs, ms"
echo
echo "| query | one server, PostgreSQL | one server, gpuhash | coordinator + $nservers data servers, gpuhash |"
echo "|---|---:|---:|---:|"
for entry in "${queries[@]}"; do
	IFS='|' read -r name push _ q <<<"$entry"
	[[ $q == *"WHERE d.w"* ]] && continue	# its rows would dominate the time
	a=$(ms "$one" scaleout_one "-c gpuhash.enabled=off" "$(sql_for "$q" fact_all dim_all)")
	b=$(ms "$one" scaleout_one "" "$(sql_for "$q" fact_all dim_all)")
	c=$(ms "$coord" scaleout "" "$(sql_for "$q" fact dim)")
	echo "| $name | $a | $b | $c |"
done
