#!/usr/bin/env bash
# demo.sh: gpuhash in a few minutes, on a throwaway cluster (`make demo`).
#
# Installs the extension, starts a server, and shows: the GPUs gpuhash sees,
# the engine's kernel benchmark (on the GPU at several sizes where there is
# one, else on the CPU backend at a small size), and a join and a GROUP BY
# with EXPLAIN ANALYZE, with gpuhash on and off, and a check that both give
# the same answer.  Without a GPU, gpuhash.device = cpu (and gpuhash.force,
# as the CPU backend is no faster than PostgreSQL) shows the plan nodes
# running on the CPU backend.
#
# Environment: DEMO_ROWS (fact table rows, default 2000000), and as for
# run-tests.sh: GH_USE_RUNNING_SERVER=1 uses the server PGHOST/PGPORT name.
set -euo pipefail
cd "$(dirname "$0")/.."
. test/common.sh

rows=${DEMO_ROWS:-2000000}
work=$(mktemp -d /tmp/gpuhash-demo.XXXXXX)
trap 'gh_server_down; rm -rf "$work"' EXIT

make -s >/dev/null
gh_install
gh_server_up "$work"
db=gpuhash_demo
psql -X -q -d postgres -c "SET client_min_messages = warning" \
	-c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"

psql="psql -X -v ON_ERROR_STOP=1 -d $db"
$psql -q -c "CREATE EXTENSION gpuhash"
ngpu=$($psql -At -c "SELECT count(*) FROM gpuhash_devices()")

echo
echo "==== the GPUs gpuhash sees: SELECT * FROM gpuhash_devices()"
$psql -x -c "SELECT * FROM gpuhash_devices()"
[ "$ngpu" = 0 ] && echo "(no GPU here: gpuhash plans nothing unless gpuhash.device = cpu is set)"

echo
if [ "$ngpu" != 0 ]; then
	echo "==== kernel benchmark on the GPU: gpuhash_bench(keys => 2^20, 2^24, 2^26, device => 'gpu')"
	$psql -c "SELECT b.structure, b.operation, b.keys, round(b.milliseconds::numeric, 3) AS ms,
	                 round(b.mkeys_per_s::numeric) AS mkeys_per_s, round(b.gb_per_s::numeric, 1) AS gb_per_s
	          FROM unnest(ARRAY[1048576, 16777216, 67108864]) AS n(keys),
	               gpuhash_bench(keys => n.keys, device => 'gpu', repetitions => 5) AS b
	          WHERE b.device_id IS NULL OR b.devices = b.device_id::text"
	mode="SET gpuhash.device = gpu;"
else
	echo "==== kernel benchmark on the CPU backend: gpuhash_bench(keys => 2^18, device => 'cpu')"
	$psql -c "SELECT structure, operation, keys, round(milliseconds::numeric, 3) AS ms,
	                 round(mkeys_per_s::numeric, 1) AS mkeys_per_s, round(gb_per_s::numeric, 2) AS gb_per_s
	          FROM gpuhash_bench(keys => 262144, device => 'cpu', repetitions => 3)"
	mode="SET gpuhash.device = cpu; SET gpuhash.force = on;"
fi

echo
echo "==== tables: fact ($rows rows), dim ($((rows / 10)) rows)"
$psql -q <<-SQL
	CREATE TABLE dim AS SELECT g AS k, g % 1000 AS w FROM generate_series(1, $((rows / 10))) g;
	CREATE TABLE fact AS
	  SELECT (1 + random() * ($((rows / 10)) - 1))::int AS k, (random() * 1000)::int AS v
	  FROM generate_series(1, $rows);
	VACUUM ANALYZE dim;
	VACUUM ANALYZE fact;
	-- a second VACUUM sets the pages all-visible (shipped to the GPU: "Heap Pages")
	VACUUM dim;
	VACUUM fact;
SQL

join="SELECT count(*), sum(f.v::bigint * d.w) FROM fact f JOIN dim d ON f.k = d.k"
groupby="SELECT k % 1000 AS g, count(*), sum(v), min(v), max(v) FROM fact GROUP BY 1"
# one digest of a GROUP BY result, whatever the order of its groups
digest="SELECT count(*) AS groups, md5(string_agg(q::text, ',' ORDER BY q::text)) FROM ($groupby) q"

for q in "$join" "$groupby"; do
	echo
	echo "==== gpuhash on: $q"
	$psql -q -c "SET max_parallel_workers_per_gather = 0; $mode" -c "EXPLAIN (ANALYZE) $q"
	echo "==== gpuhash off (PostgreSQL's own plan)"
	$psql -q -c "SET max_parallel_workers_per_gather = 0; SET gpuhash.enabled = off" \
	      -c "EXPLAIN (ANALYZE) $q"
done

echo
echo "==== the same answers, gpuhash on and off"
on_join=$($psql -qAt -c "$mode" -c "$join" | tail -1)
off_join=$($psql -qAt -c "SET gpuhash.enabled = off" -c "$join" | tail -1)
on_agg=$($psql -qAt -c "$mode" -c "$digest" | tail -1)
off_agg=$($psql -qAt -c "SET gpuhash.enabled = off" -c "$digest" | tail -1)
echo "join:     on $on_join | off $off_join"
echo "group by: on $on_agg | off $off_agg"
if [ "$on_join" = "$off_join" ] && [ "$on_agg" = "$off_agg" ]; then
	echo "demo: results agree"
else
	echo "demo: RESULTS DIFFER" >&2
	exit 1
fi
