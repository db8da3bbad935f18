# workload.sh: the generated analytical workloads of test/ssb and test/tpch:
# their queries, and their loading into a schema (sourced, from any
# directory, by bench_workload.sh and workloads.sh).
#
#   wl_init NAME            the workload NAME (ssb or tpch): sets WL_NAME,
#                           WL_TITLE, WL_DIR, WL_INFO and WL_GENERATOR
#   wl_queries [NAMES]      the workload's query names in order ("q1.1",
#                           "q13"), or NAMES checked against its files
#   wl_more_queries         its other queries over the same tables, not the
#                           benchmark's (test/ssb/sets1.sql: "sets1"), in order
#   wl_sql QUERY            a query's text without its comment lines and its
#                           final semicolon
#   wl_schema SF            the schema that holds scale factor SF: ssb_sf0_01
#   wl_loaded SCHEMA SF     true when SCHEMA holds a complete load of SF made
#                           by this generator
#   wl_load SCHEMA SF N     (re)generates SCHEMA with N parallel sessions
#   wl_ensure SCHEMA SF N   wl_load unless wl_loaded
#   wl_tables SCHEMA        the workload's tables in SCHEMA, largest first
#
# A workload's directory holds
#   schema.sql    its tables (logged), and the one-row table NAME_info with
#                 at least the columns sf, orders, generator and loaded_rows
#   generate.sql  the generator, in steps (psql variables):
#                   step=setup sf=SF    NAME_info and whatever else comes first
#                   step=dimensions     every table but the facts
#                   step=facts first=A last=B
#                                       the facts of orders A..B (1-based)
#                 every value a function of its row's key, so that the loaders
#                 need no coordination and a load is the same on every run
#   keys.sql      the primary keys, added after the load
#   (files that generate.sql includes with \ir count as part of the generator)
#   q*.sql        the queries, each opening with comment lines
# The loader runs setup, then dimensions beside N facts sessions over
# disjoint ranges of orders, then keys.sql, VACUUM (FREEZE, ANALYZE) of
# every table, records the generator's digest and the rows loaded, and last
# runs a CHECKPOINT (where the role may), so that the first queries timed do not
# share the machine with the checkpoint that writes the load out.
#
# Expects PSQL (a psql command line with ON_ERROR_STOP) and the connection
# in the environment.

wl_init() {
	WL_NAME=$1
	case $WL_NAME in
		ssb) WL_TITLE="SSB" ;;
		tpch) WL_TITLE="TPC-H-shaped" ;;
		*) echo "workload: unknown workload \"$WL_NAME\" (ssb, tpch)" >&2; return 2 ;;
	esac
	WL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/$WL_NAME" && pwd)
	WL_INFO=${WL_NAME}_info
	# data made by another version of the generator (its files and those
	# that generate.sql includes) are made again
	WL_GENERATOR=$(cd "$WL_DIR" &&
	               cat schema.sql generate.sql keys.sql $(sed -n 's/^\\ir //p' generate.sql) |
	               md5sum | cut -c1-32)
}

wl_more_queries() {
	local f
	for f in "$WL_DIR"/*.sql; do
		case ${f##*/} in
			q*.sql | schema.sql | generate.sql | keys.sql | words.sql) ;;
			*) basename "$f" .sql ;;
		esac
	done | sort -V
}

wl_queries() {
	local q
	if [ $# = 0 ] || [ "$*" = all ]; then
		printf '%s\n' "$WL_DIR"/q*.sql | sed 's|.*/||; s/\.sql$//' | sort -V
		return
	fi
	for q in $*; do
		[ -f "$WL_DIR/$q.sql" ] || { echo "workload: no query $WL_DIR/$q.sql" >&2; return 2; }
		echo "$q"
	done
}

wl_sql() { sed '/^--/d; s/;[[:space:]]*$//' "$WL_DIR/$1.sql"; }

wl_schema() { echo "${WL_NAME}_sf${1//./_}"; }

wl_tables() {
	$PSQL -At -c "SELECT relname FROM pg_class
	              WHERE relnamespace = '$1'::regnamespace AND relkind = 'r'
	                AND relname <> '$WL_INFO'
	              ORDER BY pg_relation_size(oid) DESC, relname"
}

# wl_rows SCHEMA: the rows of all the workload's tables
wl_rows() {
	local t sql=""
	for t in $(wl_tables "$1"); do
		sql+="${sql:+ + }(SELECT count(*) FROM $1.$t)"
	done
	$PSQL -At -c "SELECT ${sql:-0}"
}

wl_loaded() {
	local schema=$1 sf=$2
	[ "$($PSQL -At -c "SELECT to_regclass('$schema.$WL_INFO') IS NOT NULL")" = t ] &&
		[ "$($PSQL -At -c "SELECT i.sf = $sf AND i.generator = '$WL_GENERATOR'
		                          AND i.loaded_rows = $(wl_rows "$schema")
		                   FROM $schema.$WL_INFO i")" = t ]
}

wl_load() {
	local schema=$1 sf=$2 loaders=$3 start=$SECONDS orders per i lo hi t rc=0 pids=() in
	read -ra in <<<"$PSQL"
	# generating queries have large costs and gain nothing from JIT; the loads
	# commit synchronously, so that the VACUUM after them finds their commits
	# on disk and can set the rows' hint bits and the pages all-visible (after
	# an asynchronous commit it leaves most pages as they were)
	in+=(-c "SET search_path = $schema" -c "SET jit = off" -c "SET synchronous_commit = on")
	echo "$WL_NAME: loading $WL_TITLE scale factor $sf into schema $schema" \
	     "with $loaders sessions..." >&2
	$PSQL -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS $schema CASCADE" \
	      -c "CREATE SCHEMA $schema" || return 1
	"${in[@]}" -f "$WL_DIR/schema.sql" -v step=setup -v sf="$sf" -f "$WL_DIR/generate.sql" ||
		return 1
	orders=$($PSQL -At -c "SELECT orders FROM $schema.$WL_INFO") || return 1
	"${in[@]}" -v step=dimensions -f "$WL_DIR/generate.sql" &
	pids+=($!)
	per=$(((orders + loaders - 1) / loaders))
	for ((i = 0; i < loaders && i * per < orders; i++)); do
		lo=$((i * per + 1)) hi=$(((i + 1) * per))
		((hi > orders)) && hi=$orders
		"${in[@]}" -v step=facts -v first="$lo" -v last="$hi" -f "$WL_DIR/generate.sql" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	[ $rc = 0 ] && "${in[@]}" -f "$WL_DIR/keys.sql" || rc=1
	if [ $rc = 0 ]; then
		pids=()
		for t in $(wl_tables "$schema"); do
			"${in[@]}" -c "VACUUM (FREEZE, ANALYZE) $t" &
			pids+=($!)
		done
		for i in "${pids[@]}"; do wait "$i" || rc=1; done
	fi
	if [ $rc != 0 ]; then
		echo "$WL_NAME: loading scale factor $sf failed" >&2
		return 1
	fi
	$PSQL -c "UPDATE $schema.$WL_INFO SET generator = '$WL_GENERATOR',
	                 loaded_rows = $(wl_rows "$schema")" || return 1
	# the load's dirty buffers written now, not by a checkpoint during the first queries
	$PSQL -c "CHECKPOINT" 2>/dev/null || true
	echo "$WL_NAME: loaded scale factor $sf in $((SECONDS - start)) s" >&2
}

wl_ensure() { wl_loaded "$1" "$2" || wl_load "$@"; }
