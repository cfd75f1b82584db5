#!/usr/bin/env bash
# test/tap/run.sh TEST.pl...: runs neardup's TAP tests (test/tap/t/) with
# PostgreSQL's own framework, PostgreSQL::Test::Cluster, against the major
# ND_PG_MAJOR names (default 15; test/lib/pgenv.sh).  Prints prove's verbose
# TAP.  The test runner calls it once per test file (jobs tap:NAME).
#
# The framework runs initdb and the servers as the user that runs it, and
# PostgreSQL refuses root: as root, the tests run as 'postgres', from a
# copy of test/tap and the SQL helpers in a directory of their own (the
# clone may be where postgres cannot enter).  Nodes are removed when a
# test passes; a failing test's logs are printed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
[ $# -gt 0 ] || set -- "$ROOT"/test/tap/t/*.pl

if [ -n "$ND_PG_PREFIX" ]; then
	bindir=$ND_STAGE/pg/bin destdir=
else
	bindir=$("$ND_PG_CONFIG" --bindir) destdir=$ND_STAGE
fi
pgxs=$(cd "$(dirname "$("$bindir/pg_config" --pgxs)")/../.." && pwd)
perl -MIPC::Run -e 1 2>/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libipc-run-perl >/dev/null

work=$(mktemp -d /tmp/nd-tap.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/t" "$work/lib" "$work/ports"
cp "$ROOT"/test/tap/*.pm "$work/"
cp "$ROOT"/test/e2e/lib/*.sql "$work/lib/"
tests=()
for t in "$@"; do
	cp "$t" "$work/t/"
	tests+=("t/$(basename "$t")")
done
as=()
if [ "$(id -u)" -eq 0 ]; then
	chown -R postgres: "$work"
	as=(runuser -u postgres --)
fi

cd "$work"
rc=0
"${as[@]}" env PATH="$bindir:$PATH" PERL5LIB="$work:$pgxs/src/test/perl" \
	PG_REGRESS="$pgxs/src/test/regress/pg_regress" TESTDIR="$work" TESTDATADIR="$work/tmp_check" \
	TESTLOGDIR="$work/tmp_check/log" PG_TEST_PORT_DIR=/tmp/nd-tap-ports \
	ND_EXTENSION_DESTDIR="$destdir" ND_TEST_LIB="$work/lib" ND_PG_MAJOR="$ND_PG_MAJOR" \
	ND_DEFAULT_VERSION="$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ROOT/neardup.control")" \
	prove -v "${tests[@]}" || rc=$?
if [ $rc -ne 0 ]; then
	for f in "$work"/tmp_check/log/*; do
		[ -f "$f" ] || continue
		echo "== $(basename "$f") (last 40 lines)"
		tail -40 "$f"
	done
fi
exit $rc
