#!/usr/bin/env bash
# bench_anchors.sh: gpuhash's kernels beside two public GPU hash tables, on the
# same GPU in the same run, as one markdown table (`make bench-anchors`).
#
# gpuhash: test/bench_kernels (gh_bench on device 0): the HashGraph build,
# probe and join, the BCHT build and finds of present and absent keys, the
# aggregation.  Beside it, built here from the checkouts the user gives (never
# committed, never linked into the extension):
#   cuCollections (CUCO_DIR): cuco::static_map<uint64_t, uint64_t>
#     (test/anchors/anchor_cuco.cu), written against dev at dc0f9fc2
#   BGHT (BGHT_DIR): bght::bcht, 32-bit and 64-bit keys and values
#     (test/anchors/anchor_bght.cu), written against main at 7584547
# each timing its insert of n pairs ("build") and its find of n present and
# of n absent keys.  All use gh_bench's keys (cuda/README, "Benchmarks";
# BGHT's 32-bit keys a 32-bit bijection of the same key numbers), made on the
# device, and time the operation alone with CUDA events: one warm-up run,
# then the median of REPS runs.  gpuhash's BCHT and the libraries run at each
# load factor of LOAD_FACTORS (the libraries' capacity n / load factor);
# HashGraph and the aggregation have none ("-").
#
# check: gpuhash's gh_bench check (rows or distinct keys built, probes that
# found a match, pairs joined, groups made); the libraries', the pairs in the
# table after the build and the probes that returned their key's value.  A
# check other than n (build, present finds, join), 0 (absent finds), n/16
# (aggregation) or 4096 (into few groups) is marked.  GB/s: for gpuhash, gh_bench's bytes_moved over the
# time, the least device-memory traffic of the operation (build 16n plus the
# table, lookups 8n keys plus 4n counts, join 8n plus 24 per pair,
# aggregation 16n plus 48 per group); for the libraries, the pairs read by the
# build and the keys read plus the values written by a find (16n bytes at 64
# bits, 8n at 32), so their build GB/s leaves the table's writes out.
#
# cuco rounds the capacity up to a size of its own (prime): the load factor it
# reaches is on anchor_cuco's stderr line (about the one asked at 2^27 keys,
# 0.667 for both 0.8 and 0.9 at 2^20).  BGHT's 64-bit pairs are too wide for
# lock-free atomics: its table then holds a lock word beside every pair and
# takes it on each access (test/anchors/anchor_bght.cu).
#
# Environment:
#   CUCO_DIR, BGHT_DIR  the libraries' checkouts (their include/ is used);
#                       either may be left unset: that library is skipped
#   LOG2_N (27), LOAD_FACTORS ("0.8 0.9"), REPS (5)
#   ANCHOR_BIN          where the anchor programs are built (default: a
#                       temporary folder).  A program there built from the
#                       same sources (test/anchors/*.cu, anchor_common.cuh
#                       and cuda/hash.h, checksummed in a .stamp beside it)
#                       and, where its *_DIR is given, the same library
#                       commit is reused, so a folder of prebuilt programs
#                       can be taken to a GPU machine (and run there without
#                       the libraries).
#   BUILD_ONLY=1 (or --build-only)  build into ANCHOR_BIN and stop: the anchor
#                       programs, a copy of test/bench_kernels and of the
#                       libraries' include/ trees (src/cuco, src/bght, each
#                       with its COMMIT and LICENSE, usable as CUCO_DIR and
#                       BGHT_DIR elsewhere)
#   BENCH_KERNELS       a prebuilt bench_kernels to run (default: make
#                       test/bench_kernels, which needs pg_config)
#   ANCHOR_ARCH         nvcc's -arch (default: native where a GPU is visible,
#                       else sm_90); CUDA_HOME as for the Makefile
set -euo pipefail

# paths given relative to where the script was started from
absolute() { case $1 in '' | /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
CUCO_DIR=$(absolute "${CUCO_DIR:-}")
BGHT_DIR=$(absolute "${BGHT_DIR:-}")
ANCHOR_BIN=$(absolute "${ANCHOR_BIN:-}")
BENCH_KERNELS=$(absolute "${BENCH_KERNELS:-}")
cd "$(dirname "$0")/.."

LOG2_N=${LOG2_N:-27}
LOAD_FACTORS=${LOAD_FACTORS:-"0.8 0.9"}
REPS=${REPS:-5}
BUILD_ONLY=${BUILD_ONLY:-0}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc
if [ "${1:-}" = --build-only ]; then
	BUILD_ONLY=1
fi

die() { echo "bench_anchors: $*" >&2; exit 1; }

case $LOG2_N in '' | *[!0-9]*) die "LOG2_N must be a number, not '$LOG2_N'" ;; esac
[ -n "$LOAD_FACTORS" ] || die "LOAD_FACTORS is empty"

lines=$(mktemp)
cleanup="$lines"
trap 'rm -rf $cleanup' EXIT
if [ -n "$ANCHOR_BIN" ]; then
	mkdir -p "$ANCHOR_BIN"
	ANCHOR_BIN=$(cd "$ANCHOR_BIN" && pwd)
else
	if [ "$BUILD_ONLY" = 1 ]; then
		die "BUILD_ONLY needs ANCHOR_BIN, the folder to keep the programs in"
	fi
	ANCHOR_BIN=$(mktemp -d)
	cleanup="$cleanup $ANCHOR_BIN"
fi

gpu_name=
if command -v nvidia-smi >/dev/null 2>&1; then
	gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1) || gpu_name=
fi
ARCH=${ANCHOR_ARCH:-$([ -n "$gpu_name" ] && echo native || echo sm_90)}

# The commit of a library checkout: git's where DIR is a work tree's top (not
# a folder inside another one), else the COMMIT file of a copy made by
# BUILD_ONLY, else "unknown".
commit_of() {
	local top
	top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null) || top=''
	if [ -n "$top" ] && [ "$top" = "$(cd "$1" && pwd -P)" ]; then
		git -C "$1" rev-parse --short HEAD
	elif [ -f "$1/COMMIT" ]; then
		cat "$1/COMMIT"
	else
		echo unknown
	fi
}

# build_anchor NAME DIR VAR: anchor_NAME built against DIR/include into
# ANCHOR_BIN, or reused; sets built_commit to the library's commit.  Returns 1
# (with a note) when there is neither a reusable program nor a DIR; exits on
# a failed build.
build_anchor() {
	local name=$1 dir=$2 var=$3
	local src=test/anchors/anchor_$name.cu bin=$ANCHOR_BIN/anchor_$name
	local sum stamp_sum='' stamp_commit='' commit=''
	sum=$(cat "$src" test/anchors/anchor_common.cuh cuda/hash.h | sha256sum | cut -c1-16)
	if [ -f "$bin.stamp" ]; then
		read -r stamp_sum stamp_commit <"$bin.stamp" || true
	fi
	if [ -n "$dir" ]; then
		[ -d "$dir/include" ] || die "$var=$dir has no include/ folder"
		commit=$(commit_of "$dir")
	fi
	if [ -x "$bin" ] && [ "$stamp_sum" = "$sum" ] && { [ -z "$dir" ] || [ "$stamp_commit" = "$commit" ]; }; then
		echo "bench_anchors: reusing $bin (library at $stamp_commit)" >&2
		built_commit=$stamp_commit
		return 0
	fi
	if [ -z "$dir" ]; then
		echo "bench_anchors: $var is not set and ANCHOR_BIN holds no anchor_$name built from these sources: anchor_$name skipped" >&2
		return 1
	fi
	[ -x "$NVCC" ] || die "no nvcc at $NVCC (set CUDA_HOME)"
	echo "bench_anchors: building $bin against $dir ($commit), -arch=$ARCH" >&2
	"$NVCC" -O3 -std=c++17 -arch="$ARCH" --expt-extended-lambda --expt-relaxed-constexpr \
		-Icuda -I"$dir/include" "$src" -o "$bin.tmp" || die "building anchor_$name failed"
	mv "$bin.tmp" "$bin" || die "cannot write $bin"
	echo "$sum $commit" >"$bin.stamp" || die "cannot write $bin.stamp"
	built_commit=$commit
}

# copy_library DIR NAME: DIR's include/, LICENSE and commit into ANCHOR_BIN/src/NAME
copy_library() {
	local dir=$1 to=$ANCHOR_BIN/src/$2 commit
	[ -n "$dir" ] || return 0
	commit=$(commit_of "$dir")
	if [ "$(cd "$dir" && pwd)" = "$to" ]; then
		return 0
	fi
	rm -rf "$to"
	mkdir -p "$to"
	cp -R "$dir/include" "$to/include"
	if [ -f "$dir/LICENSE" ]; then
		cp "$dir/LICENSE" "$to/"
	fi
	echo "$commit" >"$to/COMMIT"
}

built_commit='' cuco_commit='' bght_commit=''
have_cuco=0 have_bght=0
if build_anchor cuco "$CUCO_DIR" CUCO_DIR; then
	have_cuco=1 cuco_commit=$built_commit
fi
if build_anchor bght "$BGHT_DIR" BGHT_DIR; then
	have_bght=1 bght_commit=$built_commit
fi

if [ -n "$BENCH_KERNELS" ]; then
	[ -x "$BENCH_KERNELS" ] || die "BENCH_KERNELS=$BENCH_KERNELS is not a program"
else
	make -s -j"$(nproc)" test/bench_kernels >&2 ||
		die "make test/bench_kernels failed (with no PostgreSQL here, BENCH_KERNELS names a prebuilt one)"
	BENCH_KERNELS=test/bench_kernels
fi

if [ "$BUILD_ONLY" = 1 ]; then
	if ! [ "$BENCH_KERNELS" -ef "$ANCHOR_BIN/bench_kernels" ]; then
		cp "$BENCH_KERNELS" "$ANCHOR_BIN/bench_kernels"
	fi
	copy_library "$CUCO_DIR" cuco
	copy_library "$BGHT_DIR" bght
	echo "bench_anchors: built in $ANCHOR_BIN:" >&2
	ls -l "$ANCHOR_BIN" >&2
	exit 0
fi

# A GPU: one nvidia-smi names, or a device file where there is no nvidia-smi.
if [ -z "$gpu_name" ] && { command -v nvidia-smi >/dev/null 2>&1 || ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; }; then
	die "no GPU is visible here, nothing was run (BUILD_ONLY=1 ANCHOR_BIN=DIR builds the programs to take to a GPU machine)"
fi

# Every program's lines, each prefixed with its load factor ("-" for what has none).
failed=0
run_program() {
	local lf=$1
	shift
	local out
	if out=$("$@"); then :; else
		echo "bench_anchors: $* failed (exit $?)" >&2
		failed=1
	fi
	if [ -n "$out" ]; then
		printf '%s\n' "$out" | awk -F'\t' -v lf="$lf" 'BEGIN { OFS = "\t" }
			{ print ($1 ~ /HashGraph|aggregate/ ? "-" : lf), $0 }' >>"$lines"
	fi
}
first=1
for lf in $LOAD_FACTORS; do
	if [ $first = 1 ]; then
		run_program "$lf" "$BENCH_KERNELS" "$LOG2_N" "$lf" "$REPS"
		first=0
	else
		run_program "$lf" "$BENCH_KERNELS" "$LOG2_N" "$lf" "$REPS" bcht
	fi
	if [ $have_cuco = 1 ]; then
		run_program "$lf" "$ANCHOR_BIN/anchor_cuco" "$LOG2_N" "$lf" "$REPS"
	fi
	if [ $have_bght = 1 ]; then
		run_program "$lf" "$ANCHOR_BIN/anchor_bght" "$LOG2_N" "$lf" "$REPS"
	fi
done

echo "### gpuhash's kernels beside cuCollections and BGHT"
echo
echo "GPU: ${gpu_name:-unknown}; 2^$LOG2_N keys, 64-bit keys and values unless said; median of $REPS runs after a warm-up"
echo "cuCollections: $([ $have_cuco = 1 ] && echo "$cuco_commit" || echo "not run (CUCO_DIR)");" \
	"BGHT: $([ $have_bght = 1 ] && echo "$bght_commit" || echo "not run (BGHT_DIR)")"
echo
echo "| structure | operation | load factor | ms | G keys/s | GB/s | check |"
echo "|---|---|---:|---:|---:|---:|---:|"
awk -F'\t' 'BEGIN {
		OFS = "\t"
		op["build"] = 1; op["find, present"] = 2; op["find, absent"] = 3
		op["join"] = 4; op["aggregate N/16 groups"] = 5; op["aggregate 4096 groups"] = 6
		st["gpuhash HashGraph"] = 1; st["gpuhash BCHT"] = 2; st["gpuhash aggregate"] = 3
		st["cuCollections static_map"] = 4; st["BGHT bcht 32-bit"] = 5; st["BGHT bcht 64-bit"] = 6
	}
	{
		lf = $1; lib = $2; o = $3; n = $4
		want = n
		if (o == "find, absent")
			want = 0
		else if (o ~ /^aggregate N/)
			want = n >= 16 ? int(n / 16) : 1
		else if (o ~ /^aggregate 4096/)
			want = n < 4096 ? n : 4096
		check = $7 == want ? $7 : $7 " (not " want ")"
		print (o in op ? op[o] : 9), (lf == "-" ? "0" : lf), (lib in st ? st[lib] : 9),
			"| " lib " | " o " | " lf " | " $5 " | " $6 " | " $8 " | " check " |"
	}' "$lines" | sort -t "$(printf '\t')" -k1,1n -k2,2 -k3,3n | cut -f4-
if [ $failed != 0 ]; then
	die "a program failed: its rows are missing above"
fi
