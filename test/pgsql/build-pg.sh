#!/usr/bin/env bash
# build-pg.sh: build a PostgreSQL release that Debian 12 does not package (17,
# 18) from Debian's source package, with what gpuhash's tests need, into a
# private prefix.
#
#   bash test/pgsql/build-pg.sh VERSION PREFIX
#
# Builds the server, the client programs, pg_regress and pg_isolation_regress
# (for `make installcheck`), the contrib modules auto_explain, postgres_fdw, dblink and citext,
# and pgTAP into PREFIX; PREFIX/bin/pg_config is then what `make test
# PG_CONFIG=...` takes.  Nothing is built when PREFIX is complete already
# (PREFIX/BUILD names what is there).
#
# The sources are the upstream tarballs in Debian's source packages
# postgresql-VERSION (trixie for 17, sid for 18) and pgtap (the same suite),
# downloaded through a private apt source list (test/pgsql/debsrc.sh).  Build
# dependencies come from Debian 12's packages (test/install-deps.sh
# --releases installs them).  The build runs under nice with make -j2 (GH_BUILD_JOBS overrides).
# GH_PG_CONFIGURE_OPTS adds options to PostgreSQL's configure, e.g.
# "--enable-cassert --enable-debug".
#
# Exits 0 when PREFIX is complete, 3 when the sources could not be downloaded,
# 1 on any other failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/debsrc.sh"

version=${1:-}
prefix=${2:-}
if [ -z "$version" ] || [ -z "$prefix" ]; then
	echo "usage: $0 VERSION PREFIX   (VERSION: 17 or 18)" >&2
	exit 2
fi
case $prefix in
	/*) ;;
	*) prefix=$PWD/$prefix ;;
esac
jobs=${GH_BUILD_JOBS:-2}

# complete: is everything the tests use in PREFIX?
complete() {
	local pg_config=$prefix/bin/pg_config pkglib share pgxs
	[ -f "$prefix/BUILD" ] && [ -x "$pg_config" ] || return 1
	pkglib=$("$pg_config" --pkglibdir) share=$("$pg_config" --sharedir) pgxs=$("$pg_config" --pgxs)
	[ -x "$prefix/bin/postgres" ] && [ -x "$prefix/bin/psql" ] &&
		[ -x "$(dirname "$pgxs")/../test/regress/pg_regress" ] &&
		[ -x "$(dirname "$pgxs")/../test/isolation/pg_isolation_regress" ] &&
		[ -f "$pkglib/postgres_fdw.so" ] && [ -f "$pkglib/auto_explain.so" ] &&
		[ -f "$pkglib/dblink.so" ] && [ -f "$pkglib/citext.so" ] &&
		[ -f "$share/extension/pgtap.control" ] &&
		[ "$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')" = "$version" ]
}

if complete; then
	echo "build-pg: $(cat "$prefix/BUILD") is in $prefix" >&2
	exit 0
fi

# ---- build dependencies, from Debian 12 (test/install-deps.sh --releases) ----
for h in /usr/include/unicode/ucol.h /usr/include/readline/readline.h /usr/include/zlib.h \
	/usr/bin/pkg-config /usr/bin/bzip2; do
	if [ ! -e "$h" ]; then
		echo "build-pg: $h is missing: run test/install-deps.sh --releases (as root)" >&2
		exit 1
	fi
done

# ---- sources ----
suites=$(debsrc_suites "$version")
work=$(mktemp -d /tmp/gpuhash-pgbuild.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "build-pg: fetching Debian's postgresql-$version and pgtap sources ($suites)" >&2
got=$(debsrc_fetch "postgresql-$version" "$suites" "$work/dl") || exit 3
read -r pg_debver pg_tarball <<<"$got"
got=$(debsrc_fetch pgtap "$suites" "$work/dl") || exit 3
read -r tap_debver tap_tarball <<<"$got"
tar -xaf "$pg_tarball" -C "$work"
tar -xaf "$tap_tarball" -C "$work"
pgsrc=$(find "$work" -maxdepth 1 -type d -name "postgresql-$version*" | head -1)
tapsrc=$(find "$work" -maxdepth 1 -type d -name "pgtap-*" | head -1)
[ -n "$pgsrc" ] && [ -n "$tapsrc" ] || { echo "build-pg: the tarballs did not unpack as expected" >&2; exit 1; }

# run LOG COMMAND...: run a build step quietly, show the end of its log on failure
run() {
	local log=$work/$1
	shift
	if ! nice "$@" >"$log" 2>&1; then
		tail -40 "$log" >&2
		echo "build-pg: failed: $*" >&2
		exit 1
	fi
}

# ---- PostgreSQL, the contrib modules the tests use, pgTAP ----
t0=$SECONDS
echo "build-pg: building PostgreSQL ${pgsrc##*/postgresql-} into $prefix (make -j$jobs)" >&2
rm -f "$prefix/BUILD"
cd "$pgsrc"
# shellcheck disable=SC2086	# GH_PG_CONFIGURE_OPTS is a list of options
run configure.log ./configure --prefix="$prefix" --with-icu --with-readline --with-zlib \
	${GH_PG_CONFIGURE_OPTS:-}
run make.log make -j"$jobs"
run install.log make install
for m in auto_explain postgres_fdw dblink citext; do
	run "contrib-$m.log" make -C "contrib/$m" -j"$jobs" install
done
echo "build-pg: building pgTAP ${tapsrc##*/pgtap-}" >&2
run pgtap.log make -C "$tapsrc" PG_CONFIG="$prefix/bin/pg_config" install
echo "PostgreSQL ${pgsrc##*/postgresql-} (Debian source package postgresql-$version $pg_debver)," \
	"pgTAP ${tapsrc##*/pgtap-} (pgtap $tap_debver)${GH_PG_CONFIGURE_OPTS:+, configured with $GH_PG_CONFIGURE_OPTS}" \
	>"$prefix/BUILD"
if ! complete; then
	echo "build-pg: the build finished but $prefix lacks a part the tests need" >&2
	exit 1
fi
echo "build-pg: $(cat "$prefix/BUILD") built into $prefix in $((SECONDS - t0))s" >&2
