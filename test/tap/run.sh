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
#
# A test of an upgrade across majors (one that reads ND_OLD_INSTALL) gets
# the older major's server: ND_UPGRADE_FROM names that major (default 17
# when the major under test is 18).  Its cached source build
# (test/pg/server.sh's, in ND_PG_CACHE; never built here, as that takes
# some 12 minutes) is copied, and this tree's neardup, built for it in a
# copy of the source of its own (the main build's objects are the major
# under test's), is installed into the copy, whose prefix goes to the test
# as ND_OLD_INSTALL.  Without that server, or when no older major is
# named, the test gets ND_UPGRADE_SKIP, the reason, instead.
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

# nd_old_install MAJOR DIR: copies the cached server of MAJOR to DIR/pg and
# installs this tree's neardup into it, built in DIR/src; prints the
# reason and returns 1 when there is no such server, prints the build's
# output and returns 2 when the build fails.
nd_old_install() {
	local major=$1 dir=$2 prefix=${ND_PG_CACHE:-/var/tmp/neardup-pg}/$1
	if [ ! -f "$prefix/.complete" ] || [ ! -x "$prefix/bin/pg_config" ]; then
		echo "no source-built PostgreSQL $major in $prefix (test/pg/server.sh builds 17, 18 and 19 there)"
		return 1
	fi
	mkdir -p "$dir/src"
	tar -C "$ROOT" --exclude='*.o' --exclude='*.so' --exclude='*.bc' -c Makefile neardup.control src sql |
		tar -x -C "$dir/src"
	cp -a "$prefix" "$dir/pg"
	if ! make -C "$dir/src" -s -j"${ND_TEST_JOBS:-2}" PG_CONFIG="$dir/pg/bin/pg_config" \
		WERROR="${ND_WERROR:-}" install >"$dir/build.log" 2>&1; then
		cat "$dir/build.log"
		return 2
	fi
	chmod -R a+rX "$dir"
}

old=()
if grep -qs ND_OLD_INSTALL "${tests[@]/#/$work/}"; then
	from=${ND_UPGRADE_FROM:-}
	[ -n "$from" ] || [ "$ND_PG_MAJOR" != 18 ] || from=17
	if [ -z "$from" ]; then
		old=(ND_UPGRADE_SKIP="no older major to upgrade $ND_PG_MAJOR from (ND_UPGRADE_FROM names one)")
	elif [ "$from" -gt "$ND_PG_MAJOR" ]; then
		old=(ND_UPGRADE_SKIP="ND_UPGRADE_FROM=$from is newer than the major under test, $ND_PG_MAJOR")
	else
		st=0
		why=$(nd_old_install "$from" "$work/old") || st=$?
		case $st in
			0) old=(ND_OLD_INSTALL="$work/old/pg" ND_UPGRADE_FROM="$from") ;;
			1) old=(ND_UPGRADE_SKIP="$why") ;;
			# a build that fails is a failure, not a skip
			*) printf '%s\nrun.sh: building neardup for PostgreSQL %s failed\n' "$why" "$from" >&2; exit 1 ;;
		esac
	fi
fi

cd "$work"
rc=0
"${as[@]}" env PATH="$bindir:$PATH" PERL5LIB="$work:$pgxs/src/test/perl" \
	PG_REGRESS="$pgxs/src/test/regress/pg_regress" TESTDIR="$work" TESTDATADIR="$work/tmp_check" \
	TESTLOGDIR="$work/tmp_check/log" PG_TEST_PORT_DIR=/tmp/nd-tap-ports \
	ND_EXTENSION_DESTDIR="$destdir" ND_TEST_LIB="$work/lib" ND_PG_MAJOR="$ND_PG_MAJOR" \
	ND_DEFAULT_VERSION="$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ROOT/neardup.control")" \
	"${old[@]}" prove -v "${tests[@]}" || rc=$?
if [ $rc -ne 0 ]; then
	for f in "$work"/tmp_check/log/*; do
		[ -f "$f" ] || continue
		echo "== $(basename "$f") (last 40 lines)"
		tail -40 "$f" | sed 's/^/# /' # commented: the runner counts "ok N" lines
	done
fi
exit $rc
