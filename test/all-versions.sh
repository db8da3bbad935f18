#!/usr/bin/env bash
# all-versions.sh: `make test` against every supported PostgreSQL release.
#
#   bash test/all-versions.sh [VERSION...]      (default: 15 17 18)
#
# 15 is Debian 12's (pg_config on the PATH, or GH_PG15_CONFIG); 17 and 18 are
# built from Debian's source packages by test/pgsql/build-pg.sh into
# GH_PG_PREFIX/VERSION (default /opt/gpuhash-pg/VERSION), or taken from there
# when built already.  Prints how long each build and each test run took, and
# ends with the line "N passed, N failed" over all releases.  A release whose
# sources cannot be downloaded here is reported as not tested (and does not
# fail the run); any other failure does.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
versions=${*:-15 17 18}
prefix_root=${GH_PG_PREFIX:-/opt/gpuhash-pg}
passed=0
failed=0
summary=()
t_all=$SECONDS

for v in $versions; do
	echo "======== PostgreSQL $v"
	build=""
	if [ "$v" = 15 ]; then
		pg_config=${GH_PG15_CONFIG:-$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)}
	else
		pg_config=$prefix_root/$v/bin/pg_config
		t0=$SECONDS
		bash test/pgsql/build-pg.sh "$v" "$prefix_root/$v"
		rc=$?
		build=", built in $((SECONDS - t0))s"
		if [ "$rc" = 3 ]; then
			summary+=("PostgreSQL $v: NOT TESTED: its sources could not be downloaded here")
			continue
		elif [ "$rc" != 0 ]; then
			summary+=("PostgreSQL $v: the build failed$build")
			failed=$((failed + 1))
			continue
		fi
	fi
	t0=$SECONDS
	make test PG_CONFIG="$pg_config" </dev/null 2>&1 | tee /tmp/gpuhash-all-versions.$$.log
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' /tmp/gpuhash-all-versions.$$.log | tail -1)
	rm -f /tmp/gpuhash-all-versions.$$.log
	if [ -n "$line" ]; then
		read -r p _ f _ <<<"$line"
	else
		p=0 f=0
	fi
	[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
	passed=$((passed + p))
	failed=$((failed + f))
	summary+=("PostgreSQL $v ($("$pg_config" --version)): $p passed, $f failed; tests ran $((SECONDS - t0))s$build")
done

echo
echo "======== all releases ($((SECONDS - t_all))s)"
for line in "${summary[@]}"; do echo "  $line"; done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
