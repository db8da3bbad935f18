# common.sh: shell functions shared by run-tests.sh, pg-compat.sh, demo.sh and bench.sh
# (sourced, from the project's root).
#
#   gh_install              make install; explains and fails where that needs root
#   gh_server_up WORKDIR    use the server PGHOST/PGPORT point at, or start a
#                           throwaway one in WORKDIR/pg; exports PGHOST, PGPORT, PGUSER
#   gh_server_down          stop the throwaway server, if one was started
#   gh_test_device SCRIPT   GPUHASH_DEVICE checked (cpu or gpu, default cpu)
#   gh_pg_major             the major release of pg_config's PostgreSQL (15, 17, 18)
#   gh_check NAME CMD...    one TAP line, "ok N - NAME", for whether CMD succeeds;
#                           GH_CHECKS and GH_CHECKS_FAILED count them
#   gh_same HAVE WANT       succeeds if they are equal, else says what differs
#
# A running server is used when GH_USE_RUNNING_SERVER=1, or when PGHOST and
# PGPORT are both set and a server answers there.  pg_config's bindir comes
# first on the PATH, so psql is the release's own.

GH_PG_CONFIG=${PG_CONFIG:-pg_config}
GH_CLUSTER=""
# psql, pg_prove's psql and the other clients of the release under test
PATH=$("$GH_PG_CONFIG" --bindir 2>/dev/null || echo /usr/bin):$PATH
export PATH

gh_install() {
	local pkglibdir sharedir
	pkglibdir=$("$GH_PG_CONFIG" --pkglibdir)
	sharedir=$("$GH_PG_CONFIG" --sharedir)
	if [ "$(id -u)" != 0 ] && ! { [ -w "$pkglibdir" ] && [ -w "$sharedir/extension" ]; }; then
		echo "make install needs root (or write access to $pkglibdir and $sharedir/extension)" >&2
		return 1
	fi
	make -s install >/dev/null
}

gh_server_up() {
	local workdir=$1
	if [ "${GH_USE_RUNNING_SERVER:-0}" != 1 ] && [ -n "${PGHOST:-}" ] && [ -n "${PGPORT:-}" ] &&
		"$("$GH_PG_CONFIG" --bindir)/pg_isready" -q 2>/dev/null; then
		GH_USE_RUNNING_SERVER=1
	fi
	if [ "${GH_USE_RUNNING_SERVER:-0}" = 1 ]; then
		echo "using the server at ${PGHOST:-(default)}, port ${PGPORT:-(default)}"
		return 0
	fi
	chmod 755 "$workdir"	# the server's owner must reach it
	bash test/pgcluster.sh start "$workdir/pg" >"$workdir/pg.env" || return 1
	GH_CLUSTER=$workdir/pg
	. "$workdir/pg.env"
	export PGHOST PGPORT PGUSER
}

gh_server_down() {
	if [ -n "$GH_CLUSTER" ]; then
		bash test/pgcluster.sh stop "$GH_CLUSTER" || true
		GH_CLUSTER=""
	fi
}

# gh_test_device SCRIPT: the backend the SQL tests run on, GPUHASH_DEVICE
# (cpu or gpu, default cpu); anything else is refused with SCRIPT's name
gh_test_device() {
	local d=${GPUHASH_DEVICE:-cpu}
	case $d in
		cpu | gpu) echo "$d" ;;
		*) echo "$1: GPUHASH_DEVICE must be cpu or gpu, not \"$d\"" >&2; return 2 ;;
	esac
}

# gh_pg_major: the major release of the PostgreSQL that PG_CONFIG names
gh_pg_major() {
	local v
	v=$("$GH_PG_CONFIG" --version) || return 2
	v=${v#PostgreSQL }
	echo "${v%%[!0-9]*}"
}

GH_CHECKS=0
GH_CHECKS_FAILED=0

gh_check() {
	local name=$1
	shift
	GH_CHECKS=$((GH_CHECKS + 1))
	if "$@"; then
		echo "ok $GH_CHECKS - $name"
	else
		echo "not ok $GH_CHECKS - $name"
		GH_CHECKS_FAILED=$((GH_CHECKS_FAILED + 1))
	fi
}

gh_same() {
	[ "$1" = "$2" ] || { echo "# expected '$2', got '$1'"; return 1; }
}
