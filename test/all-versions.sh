#!/usr/bin/env bash
# all-versions.sh: `make test` against every supported PostgreSQL release.
#
#   bash test/all-versions.sh [VERSION...]      (default: 15 17 18)
#
# 15 is Debian 12's (pg_config on the PATH, or GH_PG15_CONFIG).  17 and 18 are
# built from the upstream sources in Debian's source packages by
# test/pgsql/build-pg.sh into GH_PG_PREFIX/VERSION (default
# /opt/gpuhash-pg/VERSION; kept, and reused when complete).  Where a release's
# sources cannot be downloaded, its tests run in a root file system of the
# Debian release that packages it, against Debian's own packages
# (test/pgsql/debian-root.sh, kept in GH_PG_PREFIX/debian-VERSION); PostgreSQL's
# regression scripts come from the same sources, so that layer is then
# skipped.  Prints how long each build and each test run took, and ends with
# the line "N passed, N failed" over all releases.  A release that can be
# neither built nor installed here is reported as NOT TESTED and does not
# fail the run; any other failure does.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
versions=${*:-15 17 18}
prefix_root=${GH_PG_PREFIX:-/opt/gpuhash-pg}
passed=0
failed=0
summary=()
log=$(mktemp /tmp/gpuhash-all-versions.XXXXXX)
trap 'rm -f "$log"' EXIT
t_all=$SECONDS

# run_tests LABEL COMMAND...: run a `make test`, add up its closing line
run_tests() {
	local label=$1 t0=$SECONDS rc line p f
	shift
	"$@" </dev/null 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	p=0 f=0
	[ -n "$line" ] && read -r p _ f _ <<<"$line"
	[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
	passed=$((passed + p))
	failed=$((failed + f))
	summary+=("$label: $p passed, $f failed; tests ran $((SECONDS - t0))s")
}

for v in $versions; do
	echo "======== PostgreSQL $v"
	if [ "$v" = 15 ]; then
		pg_config=${GH_PG15_CONFIG:-$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)}
		run_tests "PostgreSQL 15 ($("$pg_config" --version), Debian 12's)" make test PG_CONFIG="$pg_config"
		continue
	fi
	t0=$SECONDS
	bash test/pgsql/build-pg.sh "$v" "$prefix_root/$v"
	rc=$?
	if [ "$rc" = 0 ]; then
		pg_config=$prefix_root/$v/bin/pg_config
		run_tests "PostgreSQL $v ($("$pg_config" --version), built in $((SECONDS - t0))s)" \
			make test PG_CONFIG="$pg_config"
	elif [ "$rc" = 3 ]; then
		echo "all-versions: PostgreSQL $v's sources cannot be downloaded here: testing Debian's" \
			"packages of it in a root of the Debian release that has them"
		t0=$SECONDS
		bash test/pgsql/debian-root.sh "$v" "$prefix_root/debian-$v" true 2> >(tee "$log" >&2)
		rc=$?
		wait
		if [ "$rc" = 3 ]; then
			summary+=("PostgreSQL $v: NOT TESTED: it could be neither built nor installed here ($(grep -v '^ *$' "$log" | tail -1))")
			continue
		fi
		run_tests "PostgreSQL $v ($(cut -d, -f1 "$prefix_root/debian-$v/BUILD"), ready in $((SECONDS - t0))s)" \
			bash test/pgsql/debian-root.sh "$v" "$prefix_root/debian-$v"
	else
		summary+=("PostgreSQL $v: the build failed after $((SECONDS - t0))s")
		failed=$((failed + 1))
	fi
done

echo
echo "======== all releases ($((SECONDS - t_all))s)"
for line in "${summary[@]}"; do echo "  $line"; done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
