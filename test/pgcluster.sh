#!/usr/bin/env bash
# pgcluster.sh: start or stop a throwaway PostgreSQL cluster for tests and demos.
#
#   bash test/pgcluster.sh start DIR [PORT]   initdb DIR/data, start it, print the environment
#   bash test/pgcluster.sh stop DIR           stop it (DIR is left for the caller to remove)
#   eval "$(bash test/pgcluster.sh env DIR)"  export PGHOST, PGPORT and PGUSER for it
#
# The server listens only on a Unix socket in DIR (no TCP), so it cannot clash
# with another server on the same port.  PostgreSQL refuses to run as root: when
# invoked as root the cluster belongs to the operating-system user postgres
# (which must be able to reach DIR: put it under /tmp); otherwise to the current
# user.  The database superuser is postgres either way.  PORT defaults to 54329.
# gpuhash is preloaded (shared_preload_libraries) with GH_SERVICE_WORKERS
# (default 1) GPU service processes; GH_SERVICE_WORKERS=0 has every session
# load it instead (session_preload_libraries: no GPU service, no shared
# memory), and GH_PRELOAD=0 leaves it unloaded (CREATE EXTENSION or LOAD loads
# it into one session).
# GH_PAGE_CACHE: each service worker's gpuhash.page_cache_size (default 4MB, small
# so that the tests' tables replace copies; -1 for the server's own default).
# GH_CLUSTER_CONF: more lines for postgresql.conf, e.g. "shared_buffers = '8GB'".
# The server binaries are pg_config's (PG_CONFIG overrides).
set -euo pipefail

usage() {
	echo "usage: $0 start DIR [PORT] | stop DIR | env DIR" >&2
	exit 2
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || usage
pgbin=$("${PG_CONFIG:-pg_config}" --bindir)

# run a server program as the cluster's owner
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

print_env() {
	local port
	port=$(cat "$dir/port")
	echo "export PGHOST=$dir PGPORT=$port PGUSER=postgres"
}

case $cmd in
	start)
		port=${3:-54329}
		if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
			echo "pgcluster: running as root needs the operating-system user postgres (apt-get install postgresql-15 creates it)" >&2
			exit 1
		fi
		mkdir -p "$dir"
		dir=$(cd "$dir" && pwd)
		[ "$(id -u)" = 0 ] && chown postgres "$dir"
		if ! as_owner test -w "$dir"; then
			echo "pgcluster: the cluster's owner cannot write to $dir (choose a directory under /tmp)" >&2
			exit 1
		fi
		if [ -e "$dir/data" ]; then
			echo "pgcluster: $dir/data exists already" >&2
			exit 1
		fi
		as_owner "$pgbin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C \
			--no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
		cat >>"$dir/data/postgresql.conf" <<-EOF
			listen_addresses = ''
			unix_socket_directories = '$dir'
			port = $port
			fsync = off
			synchronous_commit = off
			full_page_writes = off
			max_wal_size = 4GB
		EOF
		if [ "${GH_PRELOAD:-1}" = 0 ]; then
			:
		elif [ "${GH_SERVICE_WORKERS:-1}" != 0 ]; then
			# gpuhash preloaded: its GPU service processes start with the server
			cat >>"$dir/data/postgresql.conf" <<-EOF
				shared_preload_libraries = 'gpuhash'
				gpuhash.service_workers = ${GH_SERVICE_WORKERS:-1}
				gpuhash.page_cache_size = '${GH_PAGE_CACHE:-4MB}'
			EOF
		else
			echo "session_preload_libraries = 'gpuhash'" >>"$dir/data/postgresql.conf"
		fi
		[ -n "${GH_CLUSTER_CONF:-}" ] && printf '%s\n' "$GH_CLUSTER_CONF" >>"$dir/data/postgresql.conf"
		echo "$port" >"$dir/port"
		if ! as_owner "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null; then
			echo "pgcluster: the server did not start; its log:" >&2
			tail -30 "$dir/server.log" >&2 || true
			exit 1
		fi
		echo "pgcluster: started a server in $dir on port $port" >&2
		print_env
		;;
	stop)
		if [ -f "$dir/data/postmaster.pid" ]; then
			as_owner "$pgbin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
		fi
		;;
	env)
		print_env
		;;
	*)
		usage
		;;
esac
