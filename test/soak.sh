#!/usr/bin/env bash
# soak.sh: gpuhash under load, and through crashes.
#
# Part 1, load: for SOAK_SECONDS, SOAK_CLIENTS pgbench clients run a mix of
# GpuHashJoins, GROUP BYs, fused joins and pooled parallel GROUP BYs, each
# through the GPU service or in the backend's own engine at random; two
# more clients run a join too long for their statement_timeout, and one
# cancels random queries of the others (pg_cancel_backend).  Every query runs
# in soak_run(), which counts a cancel or timeout (the intended failures) and
# lets nothing else through; a cancel that lands just outside it (as the
# query ends) aborts its pgbench client, which is counted as intended too.  Then: no failed transaction or aborted client
# other than by an intended cancel, no engine error counted in gpuhash_stats,
# a fixed query's rows equal to PostgreSQL's (through the service and in the
# backend), nothing held in the GPU service (gpuhash_service(): objects 0,
# device memory back to where it started) and, on a GPU, its free memory back.
#
# Part 2, crashes: a backend in the middle of a gpuhash query, then a GPU
# service worker while it serves one, are killed with SIGKILL.  Each time the
# server must go through crash recovery and take connections again, the GPU
# service must come back, a logged table must be intact and the next queries
# right.
#
# Ends with "soak: N passed, N failed" and the figures (clients, duration,
# transactions, failures); exits non-zero on a failure.
#
# Installs the extension first (make install), unless GH_SOAK_NO_INSTALL=1.
#
# Environment:
#   SOAK_SECONDS (default 60), SOAK_CLIENTS (8), SOAK_ROWS (rows of the fact
#   table, 400000), GH_SERVICE_WORKERS (2), GPUHASH_DEVICE (cpu or gpu,
#   default cpu), PG_CONFIG, SOAK_PORT (54349).  The server is a throwaway
#   one of its own (test/pgcluster.sh): it is crashed on purpose.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. test/common.sh

device=$(gh_test_device soak) || exit 2
seconds=${SOAK_SECONDS:-60}
clients=${SOAK_CLIENTS:-8}
rows=${SOAK_ROWS:-400000}
pgbin=$("${PG_CONFIG:-pg_config}" --bindir)
work=$(mktemp -d /tmp/gpuhash-soak.XXXXXX)

cleanup() {
	jobs -p | xargs -r kill 2>/dev/null
	bash test/pgcluster.sh stop "$work/pg" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

if [ "${GH_SOAK_NO_INSTALL:-0}" != 1 ]; then
	gh_install || exit 1
fi
chmod 755 "$work"
GH_SERVICE_WORKERS=${GH_SERVICE_WORKERS:-2} bash test/pgcluster.sh start "$work/pg" "${SOAK_PORT:-54349}" \
	>"$work/env" 2>"$work/start.log" || { cat "$work/start.log" >&2; exit 1; }
. "$work/env"
export PGHOST PGPORT PGUSER PGDATABASE=soak
export PGOPTIONS="-c gpuhash.device=$device"
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

# wait (up to $1 s) until the server takes connections and every GPU service worker runs
wait_for_server() {
	for _ in $(seq 1 $(($1 * 5))); do
		if [ "$(sql -c "SELECT count(*) FILTER (WHERE pid IS NULL) FROM gpuhash_service()" 2>/dev/null)" = 0 ]; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

# ---- setup ----
sql -d postgres -c "CREATE DATABASE soak"
sql -c "CREATE EXTENSION gpuhash"
sql <<EOF
CREATE TABLE sk_fact AS
  SELECT g AS id, CASE WHEN g % 50 = 0 THEN 7 ELSE (g::int8 * 7919) % ($rows / 10) END AS k,
         (g % 1000)::int8 AS v
  FROM generate_series(1, $rows) g;
CREATE TABLE sk_dim AS SELECT g::int8 AS k, (g % 50)::int4 AS w FROM generate_series(1, $rows / 10) g;
-- a hot key: the long join of the clients with a statement_timeout
INSERT INTO sk_dim SELECT 7, g % 9 FROM generate_series(1, 200) g;
-- 20000 rows of one key joined with themselves: 400 million rows, the victim of the crashes
CREATE TABLE sk_hot AS SELECT g AS id, 1 AS k FROM generate_series(1, 20000) g;
-- a logged table the crashes must leave intact
CREATE TABLE sk_check AS SELECT g AS id, md5(g::text) AS t FROM generate_series(1, 10000) g;
VACUUM (FREEZE, ANALYZE) sk_fact, sk_dim, sk_hot, sk_check;
VACUUM sk_fact, sk_dim, sk_hot;
CREATE SEQUENCE sk_cancelled;
-- q (with gpuhash forced on, through the GPU service or not, in parallel or
-- not): its rows counted; a cancel or statement_timeout counted apart
CREATE FUNCTION soak_run(q text, service boolean, parallel boolean) RETURNS bigint
LANGUAGE plpgsql AS \$\$
DECLARE
  n bigint;
BEGIN
  PERFORM set_config('gpuhash.force', 'on', true);
  PERFORM set_config('gpuhash.service', service::text, true);
  PERFORM set_config('max_parallel_workers_per_gather', CASE WHEN parallel THEN '2' ELSE '0' END, true);
  PERFORM set_config('parallel_setup_cost', '0', true);
  PERFORM set_config('parallel_tuple_cost', '0', true);
  PERFORM set_config('min_parallel_table_scan_size', '0', true);
  -- (OFFSET 0: the rows are formed, not counted by a fused join)
  EXECUTE 'SELECT count(*) FROM (' || q || ' OFFSET 0) x' INTO n;
  RETURN n;
EXCEPTION WHEN query_canceled THEN
  PERFORM nextval('sk_cancelled');
  RETURN -1;
END \$\$;
EOF

# ---- part 1: load ----
mkdir -p "$work/scripts"
cat >"$work/scripts/join.sql" <<'EOF'
\set s random(0, 1)
SELECT soak_run('SELECT f.id, d.w FROM sk_fact f JOIN sk_dim d ON f.k = d.k WHERE f.id % 7 = 3', :s = 1, false);
EOF
cat >"$work/scripts/groupby.sql" <<'EOF'
\set s random(0, 1)
\set m random(10, 5000)
SELECT soak_run('SELECT k % :m, count(*), sum(v), max(v) FROM sk_fact GROUP BY 1', :s = 1, false);
EOF
cat >"$work/scripts/fused.sql" <<'EOF'
\set s random(0, 1)
SELECT soak_run('SELECT d.w, count(*), sum(f.v) FROM sk_fact f JOIN sk_dim d ON f.k = d.k GROUP BY 1', :s = 1, false);
EOF
cat >"$work/scripts/pooled.sql" <<'EOF'
SELECT soak_run('SELECT k % 1000, count(*), sum(v) FROM sk_fact GROUP BY 1', true, true);
EOF
cat >"$work/scripts/timeout.sql" <<'EOF'
\set s random(0, 1)
SELECT soak_run('SELECT f.id, d.w FROM sk_fact f JOIN sk_dim d ON f.k = d.k', :s = 1, false);
EOF
cat >"$work/scripts/cancel.sql" <<'EOF'
SELECT pg_cancel_backend(pid) FROM pg_stat_activity
 WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
   AND state = 'active' AND query LIKE 'SELECT soak_run(%' AND now() - query_start > interval '20 ms'
 ORDER BY random() LIMIT 1;
\sleep 300 ms
EOF

# what the service holds on the GPU beyond the 512-byte scratch area each open
# engine keeps on each of its GPUs (an engine may open during the run: a
# service worker first used) and its page caches
start_state() {
	sql -c "SELECT greatest(coalesce(sum(device_bytes - page_cache_bytes), 0)
	                        - coalesce(sum(engines), 0) * 512 * greatest((SELECT count(*) FROM gpuhash_devices()), 1), 0)
	        FROM gpuhash_service()"
}
# warm up (the service's engines opened), then the starting level of what the service holds
sql -c "SELECT soak_run('SELECT k % 10, count(*) FROM sk_fact GROUP BY 1', true, false)" >/dev/null
sql -c "SELECT soak_run('SELECT k % 10, count(*) FROM sk_fact GROUP BY 1', true, true)" >/dev/null
sleep 1
held_before=$(start_state)
gpu_free_before=$(sql -c "SELECT coalesce(sum(memory_free_mb), 0) FROM gpuhash_devices()")
sql -c "SELECT gpuhash_stats_reset()" >/dev/null

echo "== soak: $clients clients and 3 more for $seconds s, $rows rows, gpuhash.device = $device"
bench() {
	local name=$1
	shift
	PGAPPNAME=soak-$name "$pgbin/pgbench" -n -T "$seconds" "$@" >"$work/$name.out" 2>"$work/$name.err"
}
bench mix -c "$clients" -j "$clients" -f "$work/scripts/join.sql@3" -f "$work/scripts/groupby.sql@3" \
	-f "$work/scripts/fused.sql@2" -f "$work/scripts/pooled.sql@2" &
PGOPTIONS="$PGOPTIONS -c statement_timeout=300" bench timeout -c 2 -j 2 -f "$work/scripts/timeout.sql" &
bench cancel -c 1 -j 1 -f "$work/scripts/cancel.sql" &
wait

# pgbench's count of transactions, and its failures: failed transactions
# and clients aborted by an error other than an intended cancel
transactions() { sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/$1.out"; }
failures() {
	local f
	f=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/$1.out")
	echo $((${f:-0} + $(grep -c 'client .* aborted' "$work/$1.err") - \
		$(grep 'client .* aborted' "$work/$1.err" | grep -c -E 'canceling statement due to (user request|statement timeout)')))
}
for b in mix timeout cancel; do
	grep -E 'aborted|ERROR' "$work/$b.err" | sort | uniq -c | head -5 | sed 's/^/# /'
done
mix_tx=$(transactions mix)
cancelled=$(sql -c "SELECT last_value FROM sk_cancelled")
gh_check "the clients ran transactions ($mix_tx in the mix, $(transactions timeout) with timeouts)" \
	test "${mix_tx:-0}" -gt 0
gh_check "no transaction failed but by the intended cancels and timeouts" \
	gh_same "$(($(failures mix) + $(failures timeout) + $(failures cancel)))" 0
gh_check "cancels and statement timeouts happened ($cancelled)" test "$cancelled" -gt 1

# the service gives back what the queries held (frees are served after the queries end)
for _ in $(seq 1 150); do
	[ "$(sql -c "SELECT coalesce(sum(objects), 0) + count(operation) FROM gpuhash_service()")" = 0 ] && break
	sleep 0.2
done
sleep 1
gh_check "nothing left in the GPU service (gpuhash_service(): objects)" \
	gh_same "$(sql -c "SELECT coalesce(sum(objects), 0) FROM gpuhash_service()")" 0
gh_check "the service's device memory back to its starting level" gh_same "$(start_state)" "$held_before"
if [ "$device" = gpu ]; then
	gh_check "the GPUs' free memory back (within 64 MB of the start)" \
		test "$(sql -c "SELECT coalesce(sum(memory_free_mb), 0) FROM gpuhash_devices()")" -ge $((gpu_free_before - 64))
fi
echo "# gpuhash_stats: $(sql -F ' ' -c "SELECT 'joins=' || join_queries, 'group_bys=' || groupby_queries,
  'fused=' || fused_queries, 'pooled=' || pooled_queries, 'fallbacks=' || cpu_fallbacks,
  'errors=' || errors FROM gpuhash_stats WHERE datname = current_database()")"
gh_check "no engine error counted (gpuhash_stats)" \
	gh_same "$(sql -c "SELECT errors FROM gpuhash_stats WHERE datname = current_database()")" 0

# a fixed query: PostgreSQL's rows, through the service and in the backend
fixed="SELECT d.w, count(*), sum(f.v), min(f.id) FROM sk_fact f JOIN sk_dim d ON f.k = d.k GROUP BY 1"
digest() {
	sql -c "SET gpuhash.enabled = $1" -c "SET gpuhash.force = on" -c "SET gpuhash.service = $2" \
		-c "SELECT count(*) || ' ' || md5(string_agg(x::text, ',' ORDER BY x::text)) FROM ($fixed) x"
}
right() {
	local pg
	pg=$(digest off on)
	gh_same "$(digest on on)" "$pg" && gh_same "$(digest on off)" "$pg"
}
gh_check "after the load a fixed query gives PostgreSQL's rows, through the service and in the backend" right

# ---- part 2: crashes ----
checksum() { sql -c "SELECT count(*) || ' ' || md5(string_agg(t, '' ORDER BY id)) FROM sk_check"; }
before=$(checksum)
victim="SET gpuhash.force = on; SET gpuhash.service = on; SET max_parallel_workers_per_gather = 0;
        SELECT count(a.id + b.id) FROM sk_hot a JOIN sk_hot b ON a.k = b.k"
# crash KIND: start the victim query, kill a backend or a service worker with SIGKILL
crash() {
	local kind=$1 pid="" victim_pid t0
	PGAPPNAME=soak-victim psql -X -q -c "$victim" >/dev/null 2>&1 &
	victim_pid=$!
	for _ in $(seq 1 100); do
		pid=$(sql -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'soak-victim'
		              AND state = 'active' AND query LIKE '%sk_hot%'")
		[ -n "$pid" ] && break
		sleep 0.1
	done
	sleep 1
	[ "$kind" = "service worker" ] && pid=$(sql -c "SELECT pid FROM gpuhash_service() ORDER BY objects DESC LIMIT 1")
	if [ -z "$pid" ]; then
		echo "# no $kind to kill"
		return 1
	fi
	t0=$(date +%s%N)
	kill -9 "$pid"
	# the victim's connection ends with the crash; then the server restarts
	wait "$victim_pid"
	wait_for_server 120 || return 1
	echo "# $kind $pid killed: the server and the GPU service took connections again after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	grep -q "terminated by signal 9" "$PGHOST/server.log" || { echo "# no crash in the server log"; return 1; }
	return 0
}
for kind in backend "service worker"; do
	gh_check "a $kind killed with SIGKILL mid-query: the server recovers, the GPU service comes back" crash "$kind"
	gh_check "... the logged table is intact" gh_same "$(checksum)" "$before"
	gh_check "... and the next queries are right" right
done

echo "soak: clients=$clients (+3) seconds=$seconds transactions=$mix_tx+$(transactions timeout) cancelled=$cancelled device=$device"
echo "soak: $((GH_CHECKS - GH_CHECKS_FAILED)) passed, $GH_CHECKS_FAILED failed"
[ "$GH_CHECKS_FAILED" = 0 ]
