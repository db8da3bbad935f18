#!/usr/bin/env bash
# gpu-bundle.sh: pack a PostgreSQL release, with gpuhash built and staged
# against it, for a machine that has the NVIDIA driver and the CUDA toolkit
# but no PostgreSQL (and no package registry).
#
#   bash test/gpu-bundle.sh PREFIX/bin/pg_config DIR    a build of test/pgsql/build-pg.sh
#   bash test/gpu-bundle.sh ROOT VERSION DIR            Debian's packages of VERSION in a root
#                                                       made by test/pgsql/debian-root.sh
#
# DIR (e.g. .gpu18, git-ignored) must lie inside the project.  Writes into it:
#   pg.tar.xz   the release (server, client, headers and PGXS, pg_regress,
#               contrib, pgTAP), every shared library its programs need,
#               and pg_prove with its Perl module
#   stage/      gpuhash as `make install DESTDIR=DIR/stage` put it
#   regress/    PostgreSQL's join and aggregate scripts of that release (for
#               test/pg-compat.sh), when test/pgsql/get-regress.sh can get them
#   pg-up       to source on the other machine, from the project's root:
#                 . DIR/pg-up
#               unpacks the release to the same paths and its libraries into
#               /opt/gpuhash-pglib-VERSION, lays the staged gpuhash over it,
#               puts the regression scripts into test/pgsql/regress/, creates
#               the operating-system user postgres (the tests' servers run as
#               postgres when started by root), exports PATH and PG_CONFIG, and,
#               unless PGUP_NO_CLUSTER=1, starts a throwaway cluster (socket
#               /tmp, port 5432, gpuhash preloaded) and exports PGHOST, PGPORT,
#               PGUSER.  Extra server settings: PGUP_CONF="shared_buffers=8GB ...".
#
# A build of build-pg.sh runs on the other machine's C library, with the
# libraries it needs beyond it on LD_LIBRARY_PATH.  Debian's packages of a
# later Debian release need that release's C library: its programs and
# libraries are packed with that C library and its loader, and patchelf
# (Debian package patchelf) points them at both (interpreter and RPATH in
# /opt/gpuhash-pglib-VERSION), so nothing else on the machine loads them.
# Where /usr/share/zoneinfo is missing there, pg-up puts the root's in its
# place (Debian builds PostgreSQL with the system's time zone data).
#
# Then, for example:
#   GPUHASH_DEVICE=gpu make test PG_CONFIG=$PG_CONFIG        (every layer; builds there)
#   make installcheck PG_CONFIG=$PG_CONFIG                   (the staged build, on pg-up's cluster)
set -euo pipefail
cd "$(dirname "$0")/.."
project=$PWD
root="" version=""
if [ "$#" = 3 ]; then
	root=$(cd "$1" && pwd) version=$2 dir=$3
	pg_config=/usr/lib/postgresql/$version/bin/pg_config
	if [ ! -f "$root/BUILD" ] || [ ! -x "$root$pg_config" ]; then
		echo "gpu-bundle: $root is not a root of test/pgsql/debian-root.sh with PostgreSQL $version" >&2
		exit 1
	fi
	command -v patchelf >/dev/null || { echo "gpu-bundle: needs patchelf (apt-get install patchelf)" >&2; exit 1; }
	major=$version
	paths=("usr/lib/postgresql/$version" "usr/share/postgresql/$version" "usr/include/postgresql/$version")
	where=$(cat "$root/BUILD")
elif [ "$#" = 2 ]; then
	pg_config=$1 dir=$2
	prefix=$(cd "$(dirname "$pg_config")/.." && pwd)
	if [ ! -f "$prefix/BUILD" ]; then
		echo "gpu-bundle: $prefix was not built by test/pgsql/build-pg.sh (no $prefix/BUILD)" >&2
		exit 1
	fi
	major=$(. test/common.sh; GH_PG_CONFIG=$pg_config gh_pg_major)
	paths=("${prefix#/}")
	where=$(cat "$prefix/BUILD")
else
	echo "usage: $0 PREFIX/bin/pg_config DIR   or   $0 ROOT VERSION DIR" >&2
	exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
case $dir in
	"$project"/*) ;;
	*) echo "gpu-bundle: $dir is not inside the project" >&2; exit 2 ;;
esac
libdir=/opt/gpuhash-pglib-$major
work=$(mktemp -d /tmp/gpuhash-bundle.XXXXXX)
trap 'rm -rf "$work"' EXIT

# ---- gpuhash, staged ----
echo "gpu-bundle: building gpuhash against $where" >&2
rm -rf "$dir/stage"
build="nice make -s -j2 PG_CONFIG=$pg_config && make -s install PG_CONFIG=$pg_config DESTDIR=$dir/stage"
if [ -n "$root" ]; then
	build="nice make -s -j2 PG_CONFIG=$pg_config && make -s install PG_CONFIG=$pg_config DESTDIR=/src/gpuhash/${dir#"$project"/}/stage"
	build="bash test/pgsql/debian-root.sh $version $root sh -c '$build'"
fi
bash -c "$build" >"$work/make.log" 2>&1 || { tail -30 "$work/make.log"; exit 1; }

# ---- the release, its libraries, pg_prove ----
mkdir -p "$work/root$libdir"
if [ -z "$root" ]; then
	objs=$(find "$prefix/bin" "$prefix/lib" -type f \( -perm -u+x -o -name '*.so*' \))
	{ ldd $objs 2>/dev/null || true; } | awk '$3 ~ /^\// { print $3 }' | sort -u |
		grep -v -E "^$prefix/|/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so" |
		xargs -r cp -L -t "$work/root$libdir/"
	tar -C / -cf "$work/pg.tar" "${paths[@]}"
else
	tar -C "$root" --exclude='gpuhash*' --exclude='llvmjit*' --exclude=bitcode -cf - "${paths[@]}" |
		tar -C "$work/root" -xf -
	# every ELF file of the release, and the libraries they load (C library and loader included)
	find "$work/root/usr" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' sh {} \; \
		>"$work/elf"
	sed "s|^$work/root||" "$work/elf" | xargs chroot "$root" ldd 2>/dev/null |
		awk '$3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' | sort -u |
		while read -r lib; do cp -L "$root$lib" "$work/root$libdir/"; done
	cp -a "$root/usr/share/zoneinfo" "$work/root$libdir/zoneinfo"
	loader=$(cd "$work/root$libdir" && ls ld-linux*.so* | head -1)
	while read -r f; do
		patchelf --force-rpath --set-rpath "$libdir" "$f"
		patchelf --print-interpreter "$f" >/dev/null 2>&1 && patchelf --set-interpreter "$libdir/$loader" "$f"
	done <"$work/elf"
	for f in "$work/root$libdir"/*.so*; do
		case ${f##*/} in
			ld-linux* | libc.so* | libm.so* | libpthread* | libdl.so* | librt.so* | libresolv*) ;;
			*) patchelf --force-rpath --set-rpath "$libdir" "$f" ;;
		esac
	done
	tar -C "$work/root" -cf "$work/pg.tar" "${paths[@]}"
fi
for p in usr/bin/pg_prove usr/share/perl5/TAP/Parser/SourceHandler/pgTAP.pm; do
	[ -e "/$p" ] && tar -C / -rf "$work/pg.tar" "$p"
done
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
	echo "_pgup_bindir=$(dirname "$pg_config") _pgup_libdir=$libdir _pgup_major=$major"
	echo "_pgup_own_libc=$([ -n "$root" ] && echo 1 || echo 0)"
	cat <<'UP'
_pgup_b=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tar -C / -xJf "$_pgup_b/pg.tar.xz"
cp -a "$_pgup_b/stage/." /
if [ -d "$_pgup_b/regress" ] && [ -d test/pgsql ]; then
	rm -rf "test/pgsql/regress/$_pgup_major"
	mkdir -p test/pgsql/regress
	cp -r "$_pgup_b/regress" "test/pgsql/regress/$_pgup_major"
fi
if [ "$_pgup_own_libc" = 1 ]; then
	# the programs find their libraries themselves (RPATH); no LD_LIBRARY_PATH,
	# which would give this machine's programs another C library
	[ -e /usr/share/zoneinfo/UTC ] || { mkdir -p /usr/share && cp -a "$_pgup_libdir/zoneinfo" /usr/share/; }
else
	export LD_LIBRARY_PATH=$_pgup_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export PATH=$_pgup_bindir:$PATH PG_CONFIG=$_pgup_bindir/pg_config TZ=${TZ:-UTC}
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
	"$dir/pg-up (PostgreSQL $major)" >&2
