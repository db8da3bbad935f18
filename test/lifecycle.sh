#!/usr/bin/env bash
# lifecycle.sh: the extension leaves nothing behind that outlives it.
#
# On a throwaway cluster of its own that does not preload gpuhash, checks
# that CREATE EXTENSION changes no setting (it loads the library into its
# own session and says how to preload it), that DROP EXTENSION and a second
# CREATE and DROP leave pg_db_role_setting as it was, that preloading as the
# DBA sets it up works, and that once the library's file is gone (moved
# aside for the test, put back whatever happens) every database still takes
# connections and runs queries, DROP EXTENSION still works, and CREATE
# EXTENSION fails with an ordinary error.  Prints TAP ("ok N - ...") and
# exits non-zero if a check fails.
#
# Needs write access to PostgreSQL's library directory (as make install),
# and must not run while another server uses that installation.
#
# Environment: PG_CONFIG (the installation), GH_LIFECYCLE_PORT (default 54339).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. test/common.sh

pg_config=${PG_CONFIG:-pg_config}
pgbin=$("$pg_config" --bindir)
lib=$("$pg_config" --pkglibdir)/gpuhash.so
work=$(mktemp -d /tmp/gpuhash-lifecycle.XXXXXX)
moved=""

cleanup() {
	[ -n "$moved" ] && mv "$moved" "$lib"
	bash test/pgcluster.sh stop "$work/pg" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

if [ ! -f "$lib" ]; then
	echo "lifecycle: $lib is not installed" >&2
	exit 2
fi
chmod 755 "$work"
GH_PRELOAD=0 bash test/pgcluster.sh start "$work/pg" "${GH_LIFECYCLE_PORT:-54339}" \
	>"$work/env" 2>"$work/start.log" || { cat "$work/start.log" >&2; exit 1; }
. "$work/env"
export PGHOST PGPORT PGUSER

sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
settings() {
	sql -d postgres -c "SELECT coalesce(string_agg(setdatabase || ':' || setrole || ':' ||
	                      array_to_string(setconfig, ','), ';' ORDER BY setdatabase, setrole), '')
	                    FROM pg_db_role_setting"
}
# does a new session of database $1 plan a GpuHashAgg?  (prints yes or no)
plans_gpuhash() {
	sql -d "$1" -c "SET gpuhash.device = cpu" -c "SET gpuhash.force = on" -c "SET gpuhash.min_rows = 0" \
		-c "EXPLAIN (COSTS OFF) SELECT k, count(*) FROM t GROUP BY k" |
		grep -q GpuHashAgg && echo yes || echo no
}

sql -d postgres -c "CREATE DATABASE lc" -c "CREATE DATABASE lc2"
sql -d lc -c "CREATE TABLE t AS SELECT g % 10 AS k FROM generate_series(1, 1000) g" -c "ANALYZE t"
before=$(settings)

# CREATE EXTENSION: a notice on how to preload, the library in this session, no setting
out=$(psql -X -A -t -v ON_ERROR_STOP=1 -d lc -c "CREATE EXTENSION gpuhash" \
	-c "SET gpuhash.device = cpu" -c "SET gpuhash.force = on" -c "SET gpuhash.min_rows = 0" \
	-c "EXPLAIN (COSTS OFF) SELECT k, count(*) FROM t GROUP BY k" 2>&1)
gh_check "CREATE EXTENSION says how to preload the library" grep -q "shared_preload_libraries" <<<"$out"
gh_check "the session that created the extension plans with gpuhash" grep -q GpuHashAgg <<<"$out"
gh_check "CREATE EXTENSION changes no database or role setting" gh_same "$(settings)" "$before"
gh_check "a new session does not load the library unless it is preloaded" gh_same "$(plans_gpuhash lc)" no
gh_check "not preloaded, gpuhash_stats is empty (nothing is counted)" \
	gh_same "$(sql -d lc -c "LOAD 'gpuhash'" -c "SET gpuhash.device = cpu" -c "SET gpuhash.force = on" \
		-c "SELECT count(*) FROM (SELECT k, count(*) FROM t GROUP BY k) x" -c "SELECT count(*) FROM gpuhash_stats")" "10
0"

sql -d lc -c "DROP EXTENSION gpuhash"
gh_check "DROP EXTENSION leaves the settings as before CREATE EXTENSION" gh_same "$(settings)" "$before"
sql -d lc -c "CREATE EXTENSION gpuhash" 2>/dev/null
sql -d lc -c "DROP EXTENSION gpuhash"
sql -d lc -c "CREATE EXTENSION gpuhash" 2>/dev/null
gh_check "a second CREATE and DROP leave them as before too" gh_same "$(settings)" "$before"

# preloading, as the DBA sets it up
sql -d postgres -c "ALTER DATABASE lc SET session_preload_libraries = 'gpuhash'"
gh_check "with the library preloaded by the DBA, new sessions plan with gpuhash" gh_same "$(plans_gpuhash lc)" yes
sql -d postgres -c "ALTER DATABASE lc RESET session_preload_libraries"
gh_check "the DBA's setting reset, the settings are as before" gh_same "$(settings)" "$before"

# the library's file gone, with the extension (created afresh) installed in lc
sql -d lc -c "DROP EXTENSION gpuhash"
sql -d lc -c "CREATE EXTENSION gpuhash" 2>/dev/null
moved=$lib.lifecycle-moved
mv "$lib" "$moved"
gh_check "without the library file, a database with the extension takes connections" \
	gh_same "$(sql -d lc -c 'SELECT count(*) FROM t' 2>&1)" 1000
gh_check "... and one without it too" gh_same "$(sql -d lc2 -c 'SELECT 1' 2>&1)" 1
out=$(sql -d lc2 -c "CREATE EXTENSION gpuhash" 2>&1)
gh_check "CREATE EXTENSION without the library is an ordinary error" grep -q "^ERROR:" <<<"$out"
gh_check "DROP EXTENSION works without the library" sql -d lc -c "DROP EXTENSION gpuhash"
mv "$moved" "$lib"
moved=""

sql -d lc -c "CREATE EXTENSION gpuhash" 2>/dev/null
sql -d postgres -c "DROP DATABASE lc"
gh_check "DROP DATABASE of a database with the extension leaves no setting" \
	gh_same "$(sql -d postgres -c "SELECT count(*) FROM pg_db_role_setting WHERE setdatabase <> 0")" 0

echo "1..$GH_CHECKS"
[ "$GH_CHECKS_FAILED" = 0 ]
