#!/usr/bin/env bash
# gpu-bundle.sh: pack a PostgreSQL built by test/pgsql/build-pg.sh, with
# gpuhash built and staged against it, for a machine that has the NVIDIA
# driver and the CUDA toolkit but no PostgreSQL (and no package registry).
#
#   bash test/gpu-bundle.sh PREFIX/bin/pg_config DIR     (DIR: e.g. .gpu18, git-ignored)
#
# Writes into DIR:
#   pg.tar.xz   PREFIX (server, client, headers and PGXS, pg_regress, contrib,
#               pgTAP), every shared library its programs need beyond glibc,
#               and pg_prove with its Perl module
#   stage/      gpuhash as `make install DESTDIR=DIR/stage` put it
#   regress/    PostgreSQL's join and aggregate scripts of that release (for
#               test/pg-compat.sh), when test/pgsql/get-regress.sh can get them
#   pg-up       to source on the other machine, from the project's root:
#                 . DIR/pg-up
#               unpacks PREFIX to the same path and the libraries beside it,
#               lays the staged gpuhash over it, puts the regression scripts
#               into test/pgsql/regress/, creates the operating-system user
#               postgres (the tests' servers run as postgres when started by
#               root), exports PATH, LD_LIBRARY_PATH and PG_CONFIG, and, unless
#               PGUP_NO_CLUSTER=1, starts a throwaway cluster (socket /tmp,
#               port 5432, gpuhash preloaded) and exports PGHOST, PGPORT, PGUSER.
#               Extra server settings: PGUP_CONF="shared_buffers=8GB ...".
# Then, for example:
#   GPUHASH_DEVICE=gpu make test PG_CONFIG=$PG_CONFIG        (every layer; builds there)
#   make installcheck PG_CONFIG=$PG_CONFIG                   (the staged build, on pg-up's cluster)
set -euo pipefail
cd "$(dirname "$0")/.."
pg_config=${1:-}
dir=${2:-}
if [ -z "$pg_config" ] || [ -z "$dir" ]; then
	echo "usage: $0 PREFIX/bin/pg_config DIR" >&2
	exit 2
fi
prefix=$(cd "$(dirname "$pg_config")/.." && pwd)
if [ ! -f "$prefix/BUILD" ]; then
	echo "gpu-bundle: $prefix was not built by test/pgsql/build-pg.sh (no $prefix/BUILD)" >&2
	exit 1
fi
major=$(. test/common.sh; GH_PG_CONFIG=$pg_config gh_pg_major)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$(mktemp -d /tmp/gpuhash-bundle.XXXXXX)
trap 'rm -rf "$work"' EXIT

# ---- gpuhash, staged ----
echo "gpu-bundle: building gpuhash against $(cat "$prefix/BUILD")" >&2
nice make -s -j2 PG_CONFIG="$pg_config" >"$work/make.log" 2>&1 || { tail -30 "$work/make.log"; exit 1; }
rm -rf "$dir/stage"
make -s install PG_CONFIG="$pg_config" DESTDIR="$dir/stage" >"$work/install.log" 2>&1 ||
	{ tail -30 "$work/install.log"; exit 1; }

# ---- PostgreSQL, its libraries, pg_prove ----
libdir=/opt/gpuhash-pglib-$major
mkdir -p "$work/root$libdir"
objs=$(find "$prefix/bin" "$prefix/lib" -type f \( -perm -u+x -o -name '*.so*' \))
{ ldd $objs 2>/dev/null || true; } | awk '$3 ~ /^\// { print $3 }' | sort -u |
	grep -v -E "^$prefix/|/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so" |
	xargs -r cp -L -t "$work/root$libdir/"
paths=("${prefix#/}")
for p in usr/bin/pg_prove usr/share/perl5/TAP/Parser/SourceHandler/pgTAP.pm; do
	[ -e "/$p" ] && paths+=("$p")
done
tar -C / -cf "$work/pg.tar" "${paths[@]}"
tar -C "$work/root" -rf "$work/pg.tar" "${libdir#/}"
xz -T2 -6 -c "$work/pg.tar" >"$dir/pg.tar.xz"

# ---- PostgreSQL's regression scripts of this release ----
rm -rf "$dir/regress"
if bash test/pgsql/get-regress.sh "$major" >"$work/regress.log" 2>&1; then
	cp -r "test/pgsql/regress/$major" "$dir/regress"
else
	echo "gpu-bundle: without PostgreSQL's regression scripts (test/pg-compat.sh will be skipped):" >&2
	tail -3 "$work/regress.log" >&2
fi

# ---- pg-up ----
{
	echo "# pg-up: source it on the GPU machine from the project's root (see test/gpu-bundle.sh)."
	echo "_pgup_prefix=$prefix _pgup_libdir=$libdir _pgup_major=$major"
	cat <<'UP'
_pgup_b=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tar -C / -xJf "$_pgup_b/pg.tar.xz"
cp -a "$_pgup_b/stage/." /
if [ -d "$_pgup_b/regress" ] && [ -d test/pgsql ]; then
	rm -rf "test/pgsql/regress/$_pgup_major"
	mkdir -p test/pgsql/regress
	cp -r "$_pgup_b/regress" "test/pgsql/regress/$_pgup_major"
fi
export LD_LIBRARY_PATH=$_pgup_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$_pgup_prefix/bin:$PATH PG_CONFIG=$_pgup_prefix/bin/pg_config TZ=${TZ:-UTC}
id postgres >/dev/null 2>&1 || useradd -m postgres
if [ "${PGUP_NO_CLUSTER:-0}" != 1 ]; then
	export PGHOST=/tmp PGPORT=5432 PGUSER=postgres
	_pgup_data=/tmp/pgdata-$_pgup_major
	# a warm machine may still run the cluster of an earlier call: stop it first
	[ -f "$_pgup_data/postmaster.pid" ] &&
		runuser -u postgres -- pg_ctl -D "$_pgup_data" stop -m immediate >/dev/null 2>&1
	rm -rf "$_pgup_data" && mkdir -p "$_pgup_data" && chown postgres "$_pgup_data"
	if runuser -u postgres -- initdb -D "$_pgup_data" -A trust -U postgres >/tmp/initdb.log 2>&1; then
		{ echo "listen_addresses = ''"; echo "unix_socket_directories = '/tmp'"
		  echo "max_wal_size = 16GB"; echo "shared_preload_libraries = 'gpuhash'"
		  for kv in ${PGUP_CONF:-}; do echo "${kv%%=*} = '${kv#*=}'"; done
		} >>"$_pgup_data/postgresql.conf"
		runuser -u postgres -- pg_ctl -D "$_pgup_data" -l /tmp/pg.log start -w >/dev/null ||
			tail -20 /tmp/pg.log
	else
		cat /tmp/initdb.log
	fi
	echo "pg-up: $(psql -XAtc 'select version()' 2>&1)"
fi
UP
} >"$dir/pg-up"
echo "gpu-bundle: wrote $dir/pg.tar.xz ($(du -h "$dir/pg.tar.xz" | cut -f1)), $dir/stage," \
	"$dir/pg-up${major:+ (PostgreSQL $major)}" >&2
