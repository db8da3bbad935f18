#!/usr/bin/env bash
# run.sh: the differential fuzzer's fixed run (a layer of test/run-tests.sh).
# Makes database gpuhash_fuzz on the server that PGHOST, PGPORT and PGUSER
# point at, loads schema.sql and the SSB and TPC-H-shaped tables at scale
# factor FUZZ_SF (0.01; test/workload.sh), runs FUZZ_QUERIES (150) queries
# of fuzz.py from FUZZ_SEED (2026) in TAP, and drops the database.  Another
# seed, or more queries, make a longer hunt:
#     FUZZ_SEED=$RANDOM FUZZ_QUERIES=2000 bash test/fuzz/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. test/workload.sh
db=${FUZZ_DB:-gpuhash_fuzz}
sf=${FUZZ_SF:-0.01}
export PGDATABASE=$db
PSQL="psql -X -q -v ON_ERROR_STOP=1"
if ! command -v python3 >/dev/null; then
	echo "not ok 1 - python3 is not installed (test/install-deps.sh installs it)"
	exit 1
fi
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1' EXIT
log=$(mktemp /tmp/gpuhash-fuzz.XXXXXX)
if ! { $PSQL -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" &&
	   $PSQL -c "CREATE EXTENSION gpuhash" -f test/fuzz/schema.sql &&
	   wl_init ssb && wl_ensure "$(wl_schema "$sf")" "$sf" 2 && ssb=$(wl_schema "$sf") &&
	   wl_init tpch && wl_ensure "$(wl_schema "$sf")" "$sf" 2 && tpch=$(wl_schema "$sf"); } >"$log" 2>&1; then
	echo "not ok 1 - the fuzzer's tables could not be loaded:"
	sed 's/^/# /' "$log" | tail -20
	rm -f "$log"
	exit 1
fi
rm -f "$log"
python3 test/fuzz/fuzz.py --tap --seed "${FUZZ_SEED:-2026}" --count "${FUZZ_QUERIES:-150}" \
	--ssb "$ssb" --tpch "$tpch" --device "${GPUHASH_DEVICE:-cpu}"
