#!/usr/bin/env bash
# debian-root.sh: test against a PostgreSQL release that Debian packages in a
# later Debian release, inside a root file system of that release, where the
# release's source cannot be had to build it here (test/pgsql/build-pg.sh).
#
#   bash test/pgsql/debian-root.sh VERSION ROOT [COMMAND...]
#
# Makes ROOT a minimal Debian root (debootstrap) of the suite that packages
# postgresql-VERSION (trixie for 17, sid for 18) with Debian's packages of
# that PostgreSQL (server, headers and PGXS, pgTAP) and a C toolchain, unless
# ROOT is complete already (ROOT/BUILD names what is there).  Then runs COMMAND
# (default: make test PG_CONFIG=/usr/lib/postgresql/VERSION/bin/pg_config) in
# ROOT from this project's directory, which is mounted at /src/gpuhash, with
# /proc, /dev and the CUDA toolkit (CUDA_HOME, default /usr/local/cuda,
# read-only) mounted in; unmounts them afterwards.  Needs root.  Exits with
# COMMAND's status, or 3 when the root could not be made.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
. "$here/debsrc.sh"

version=${1:-}
root=${2:-}
if [ -z "$version" ] || [ -z "$root" ]; then
	echo "usage: $0 VERSION ROOT [COMMAND...]" >&2
	exit 2
fi
shift 2
[ "$#" = 0 ] && set -- make test PG_CONFIG="/usr/lib/postgresql/$version/bin/pg_config"
case $root in
	/*) ;;
	*) root=$PWD/$root ;;
esac
if [ "$(id -u)" != 0 ]; then
	echo "debian-root: needs root (debootstrap, chroot, mount)" >&2
	exit 3
fi
suite=$(debsrc_suites "$version" | cut -d' ' -f1) || exit 3
cuda=${CUDA_HOME:-/usr/local/cuda}
pkgs="postgresql-$version postgresql-server-dev-$version postgresql-$version-pgtap
      libtap-parser-sourcehandler-pgtap-perl make gcc libc6-dev perl bzip2 xz-utils"

# unmount_under DIR: unmount whatever an interrupted run left mounted in DIR,
# deepest first; false if something stays mounted
unmount_under() {
	local m
	for m in $(awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -R "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	! awk -v d="$1" '$2 == d || index($2, d "/") == 1 { found = 1 } END { exit !found }' /proc/mounts
}

# ---- the root ----
if ! unmount_under "$root"; then
	echo "debian-root: $root still has file systems mounted in it" >&2
	exit 3
fi
if [ ! -f "$root/BUILD" ]; then
	t0=$SECONDS
	mirror=$(debsrc_mirrors | grep -v security | head -1)
	if ! command -v debootstrap >/dev/null; then
		echo "debian-root: no debootstrap: run test/install-deps.sh --releases" >&2
		exit 3
	fi
	echo "debian-root: making a Debian $suite root in $root (PostgreSQL $version)" >&2
	rm -rf "$root"
	if ! nice debootstrap --variant=minbase "$suite" "$root" "${mirror:-http://deb.debian.org/debian}" \
		>"/tmp/gpuhash-debootstrap.$$.log" 2>&1; then
		tail -20 "/tmp/gpuhash-debootstrap.$$.log" >&2
		rm -f "/tmp/gpuhash-debootstrap.$$.log"
		exit 3
	fi
	rm -f "/tmp/gpuhash-debootstrap.$$.log"
	# no cluster made on installation, no service started in the root
	mkdir -p "$root/etc/postgresql-common"
	echo "create_main_cluster = false" >"$root/etc/postgresql-common/createcluster.conf"
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod +x "$root/usr/sbin/policy-rc.d"
	mount -t proc proc "$root/proc" || exit 3
	trap 'umount "$root/proc" 2>/dev/null' EXIT
	chroot "$root" apt-get update -qq >"$root/install.log" 2>&1 &&
		DEBIAN_FRONTEND=noninteractive chroot "$root" nice apt-get install -y -qq \
			--no-install-recommends $pkgs >>"$root/install.log" 2>&1
	rc=$?
	umount "$root/proc"
	trap - EXIT
	if [ "$rc" != 0 ]; then
		tail -20 "$root/install.log" >&2
		exit 3
	fi
	echo "Debian $suite root with $(chroot "$root" dpkg-query -W -f='${Package} ${Version}' \
		"postgresql-$version"), made in $((SECONDS - t0))s" >"$root/BUILD"
fi
echo "debian-root: $(cat "$root/BUILD")" >&2

# ---- the command, in the root ----
mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}"
	done
}
trap cleanup EXIT
mnt() {	# mnt TARGET MOUNT-ARGS...
	local target=$1
	shift
	mkdir -p "$target" && mount "$@" "$target" && mounted+=("$target")
}
mnt "$root/proc" -t proc proc || exit 3
mnt "$root/dev" --rbind /dev || exit 3
mnt "$root/src/gpuhash" --bind "$project" || exit 3
if [ -d "$cuda" ]; then
	mnt "$root$cuda" --bind "$cuda" || exit 3
	mount -o remount,bind,ro "$root$cuda"
fi
CUDA_HOME=$cuda chroot "$root" sh -c 'cd /src/gpuhash && exec "$@"' sh "$@"
