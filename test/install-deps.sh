#!/usr/bin/env bash
# install-deps.sh: install what building and testing gpuhash needs on Debian 12
# (run as root): a C toolchain, PostgreSQL 15 with its server headers, pgTAP
# and pg_prove, Python 3 (the fuzzer, test/fuzz).  The CUDA compiler (nvcc 13, with CUB) is not a Debian
# package: it must already be in ${CUDA_HOME:-/usr/local/cuda}.
#
#   bash test/install-deps.sh              for PostgreSQL 15
#   bash test/install-deps.sh --releases   also what PostgreSQL 17 and 18 need
#                                          (test/all-versions.sh): the libraries
#                                          and tools to build them from source
#                                          (test/pgsql/build-pg.sh), debootstrap
#                                          (test/pgsql/debian-root.sh), the Debian
#                                          developers' keyring (test/pgsql/debsrc.sh)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs="build-essential make perl postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
      libtap-parser-sourcehandler-pgtap-perl python3"
if [ "${1:-}" = --releases ]; then
	pkgs="$pkgs pkg-config bison flex libicu-dev libreadline-dev zlib1g-dev bzip2 xz-utils
	      debootstrap debian-keyring"
fi
missing=$(for p in $pkgs; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"; done)
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: run as root to install: $missing" >&2
		exit 1
	fi
	apt-get update -qq
	apt-get install -y -qq $missing >/dev/null
fi
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ ! -x "$nvcc" ]; then
	echo "install-deps: no CUDA compiler at $nvcc (install the CUDA toolkit 13, or set CUDA_HOME)" >&2
	exit 1
fi
echo "install-deps: PostgreSQL 15, pgTAP, pg_prove, Python 3${1:+, what PostgreSQL 17 and 18 need,} and" \
	"$("$nvcc" --version | tail -1) are ready"
