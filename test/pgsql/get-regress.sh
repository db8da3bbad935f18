#!/usr/bin/env bash
# get-regress.sh: put the PostgreSQL 15 regression scripts, data files and
# expected outputs that test/pg-compat.sh uses into test/pgsql/regress/ (not
# part of the repository).
#
#   bash test/pgsql/get-regress.sh            fetch them unless they are there
#   PG_SRC=DIR bash test/pgsql/get-regress.sh copy them from a PostgreSQL 15 source
#                                             tree (DIR/src/test/regress) instead
#
# Without PG_SRC the files come from Debian's source package postgresql-15,
# downloaded with apt-get through a private source list in a temporary
# directory (the system's apt configuration is left alone).  Only the files
# listed below are kept.  Exits 0 when test/pgsql/regress/ is complete.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=$here/regress

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

for tool in apt-get apt-cache tar; do
	if ! command -v $tool >/dev/null; then
		echo "get-regress: needs $tool (Debian), or PG_SRC=<PostgreSQL 15 source tree>" >&2
		exit 1
	fi
done
tmp=$(mktemp -d /tmp/gpuhash-pgsrc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"	# apt's download user must reach it
mkdir -p "$tmp/lists/partial" "$tmp/archives/partial" "$tmp/dl"
# The same mirrors as the system's binary packages, as deb-src lines.
uris=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list |
	grep -oE 'https?://[^ ]+' | sort -u || true)
if [ -z "$uris" ]; then
	echo "get-regress: found no Debian mirror in apt's sources (or set PG_SRC)" >&2
	exit 1
fi
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
for u in $uris; do
	case $u in
		*security*) echo "deb-src $u $codename-security main" ;;
		*) echo "deb-src $u $codename main"; echo "deb-src $u $codename-updates main" ;;
	esac
done >"$tmp/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/none"
	-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache::Archives=$tmp/archives"
	-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=" -o "APT::Sandbox::User=root")
echo "get-regress: fetching Debian's postgresql-15 source package" >&2
if ! apt-get "${apt_opts[@]}" -qq update >"$tmp/apt.log" 2>&1; then
	cat "$tmp/apt.log" >&2
	echo "get-regress: apt-get update failed (or set PG_SRC=<PostgreSQL 15 source tree>)" >&2
	exit 1
fi
# Newest version first; a mirror may list a version whose files it does not serve.
versions=$(apt-cache "${apt_opts[@]}" showsrc postgresql-15 2>/dev/null |
	sed -n 's/^Version: //p' | sort -u -r -V)
got=""
for v in $versions; do
	if (cd "$tmp/dl" && apt-get "${apt_opts[@]}" -qq source --download-only "postgresql-15=$v") \
		>>"$tmp/apt.log" 2>&1; then
		got=$v
		break
	fi
	rm -f "$tmp/dl"/*
done
if [ -z "$got" ]; then
	tail -20 "$tmp/apt.log" >&2
	echo "get-regress: no postgresql-15 source package could be downloaded (or set PG_SRC)" >&2
	exit 1
fi
orig=$(ls "$tmp/dl"/postgresql-15_*.orig.tar.* | head -1)
members=()
top=$(basename "$orig")
top=postgresql-${top#postgresql-15_}
top=${top%.orig.tar.*}	# postgresql-15.N, the tarball's top directory
for f in $sql_files; do members+=("$top/src/test/regress/sql/$f.sql"); done
for f in $data_files; do members+=("$top/src/test/regress/data/$f.data"); done
for f in $expected_files; do members+=("$top/src/test/regress/expected/$f.out"); done
members+=("$top/COPYRIGHT")
if ! tar -xaf "$orig" -C "$tmp" "${members[@]}"; then
	echo "get-regress: could not unpack $(basename "$orig") (is bzip2/xz installed?)" >&2
	exit 1
fi
copy_from "$tmp/$top/src/test/regress"
echo "PostgreSQL ${top#postgresql-} (Debian source package postgresql-15 $got)" >"$dest/VERSION"
echo "get-regress: $(cat "$dest/VERSION")" >&2
