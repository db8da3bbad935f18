#!/usr/bin/env bash
# get-regress.sh: put the PostgreSQL regression scripts, data files and
# expected outputs that test/pg-compat.sh uses into test/pgsql/regress/VERSION/
# (not part of the repository).
#
#   bash test/pgsql/get-regress.sh [VERSION]            fetch them unless they are there
#   PG_SRC=DIR bash test/pgsql/get-regress.sh [VERSION] copy them from a PostgreSQL
#                                                       source tree (DIR/src/test/regress)
#
# VERSION is the PostgreSQL major release (15, 17, 18; default 15).  Without
# PG_SRC the files come from the upstream tarball in Debian's source package
# postgresql-VERSION, downloaded through a private source list
# (test/pgsql/debsrc.sh; the system's apt configuration is left alone).  Only
# the files listed below are kept.  Exits 0 when the directory is complete.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-15}
dest=$here/regress/$version

sql_files="test_setup create_index create_misc create_aggregate join aggregates"
data_files="onek tenk person emp student stud_emp streets rect array agg"
expected_files="join aggregates"	# PostgreSQL's own expected outputs, to check the setup

complete() {
	local d=$1 f
	for f in $sql_files; do [ -s "$d/sql/$f.sql" ] || return 1; done
	for f in $data_files; do [ -s "$d/data/$f.data" ] || return 1; done
	for f in $expected_files; do [ -s "$d/expected/$f.out" ] || return 1; done
}

# copy_from REGRESSDIR: copy the needed files from a src/test/regress directory
copy_from() {
	local src=$1 f
	rm -rf "$dest.new"
	mkdir -p "$dest.new/sql" "$dest.new/data" "$dest.new/expected"
	for f in $sql_files; do cp "$src/sql/$f.sql" "$dest.new/sql/"; done
	for f in $data_files; do cp "$src/data/$f.data" "$dest.new/data/"; done
	for f in $expected_files; do cp "$src/expected/$f.out" "$dest.new/expected/"; done
	[ -f "$src/../../../COPYRIGHT" ] && cp "$src/../../../COPYRIGHT" "$dest.new/"
	rm -rf "$dest"
	mkdir -p "$(dirname "$dest")"
	mv "$dest.new" "$dest"
}

if [ -n "${PG_SRC:-}" ]; then
	src=$PG_SRC
	[ -d "$src/src/test/regress" ] && src=$src/src/test/regress
	if ! complete "$src"; then
		echo "get-regress: $PG_SRC is not a PostgreSQL source tree with src/test/regress" >&2
		exit 1
	fi
	copy_from "$src"
	echo "from $PG_SRC" >"$dest/VERSION"
	echo "get-regress: copied PostgreSQL's regression files from $PG_SRC" >&2
	exit 0
fi

if complete "$dest"; then
	exit 0
fi

. "$here/debsrc.sh"
command -v tar >/dev/null || { echo "get-regress: needs tar" >&2; exit 1; }
suites=$(debsrc_suites "$version") || exit 1
tmp=$(mktemp -d /tmp/gpuhash-pgsrc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "get-regress: fetching Debian's postgresql-$version source package" >&2
if ! got=$(debsrc_fetch "postgresql-$version" "$suites" "$tmp/dl"); then
	echo "get-regress: (or set PG_SRC=<a PostgreSQL $version source tree>)" >&2
	exit 1
fi
read -r debver orig <<<"$got"
top=$(basename "$orig")
top=postgresql-${top#postgresql-"$version"_}
top=${top%.orig.tar.*}	# postgresql-X.Y, the tarball's top directory
members=()
for f in $sql_files; do members+=("$top/src/test/regress/sql/$f.sql"); done
for f in $data_files; do members+=("$top/src/test/regress/data/$f.data"); done
for f in $expected_files; do members+=("$top/src/test/regress/expected/$f.out"); done
members+=("$top/COPYRIGHT")
if ! tar -xaf "$orig" -C "$tmp" "${members[@]}"; then
	echo "get-regress: could not unpack $(basename "$orig") (is bzip2/xz installed?)" >&2
	exit 1
fi
copy_from "$tmp/$top/src/test/regress"
echo "PostgreSQL ${top#postgresql-} (Debian source package postgresql-$version $debver)" >"$dest/VERSION"
echo "get-regress: $(cat "$dest/VERSION")" >&2
