#!/usr/bin/env bash
# End-to-end: the Debian package, installed and run as an operator does.
#
#   - dpkg-buildpackage -us -uc -b builds postgresql-15-neardup_<version>_<arch>.deb
#     from a copy of the working tree (what git tracks or would track), so
#     the checkout stays as it was; lintian finds no error and no warning
#     that debian/lintian-overrides does not justify;
#   - apt-get installs the .deb into the system's PostgreSQL 15;
#     pg_createcluster makes a cluster of the postgres user, pg_ctlcluster
#     starts it; CREATE EXTENSION neardup loads the package's library;
#   - pg_regress suites (test/sql/, test/expected/) pass against that cluster, run
#     by `pgxn check` on the tree (which is `make installcheck` with the
#     system's pg_regress): a subset (PACKAGE_SUITES below) that calls into
#     every part of the package's library, or every suite with
#     ND_PACKAGE_SUITES=all;
#   - a hamming index built and inserted into before a restart answers as
#     sequential scans do after it (debian/tests/hamming-setup.sql,
#     hamming-verify.sql); so does one built under 0.2's SQL (CREATE
#     EXTENSION neardup VERSION '0.2' in another database) after ALTER
#     EXTENSION neardup UPDATE;
#   - the autopkgtest debian/tests/hamming-restart passes against the
#     installed package;
#   - the cluster is dropped and the package purged: dpkg -L knows nothing
#     of it, no neardup file is left in the system's PostgreSQL directories,
#     dpkg's package list is what it was before.
# The cluster and the package are removed on any exit (trap).
#
# Needs root and Debian with apt; otherwise prints "ok 1 # SKIP". Skips too
# if postgresql-15-neardup or any neardup file is in the system's
# PostgreSQL directories already (the test would replace and then remove
# what an operator installed).
#
# While this runs, neardup is installed in the system's directories. The
# other tests load the staged build (extension_destdir, test/lib/pgenv.sh),
# which Debian's server looks up before the system's directories, and they
# run one after the other (test/run_all.sh), so the two do not mix.
# Prints TAP.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/ports.sh
. "$ROOT/test/lib/ports.sh"

PGV=15
PKG=postgresql-$PGV-neardup
LIBDIR=/usr/lib/postgresql/$PGV/lib
EXTDIR=/usr/share/postgresql/$PGV/extension

n=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
skip_all() {
	echo "ok 1 # SKIP $1"
	exit 0
}
# log FILE: the last lines of a log, as TAP comments
log() { tail -n "${2:-40}" "$1" | sed 's/^/# /'; }
# neardup's files in the system's PostgreSQL directories
system_files() { find "$LIBDIR" "$EXTDIR" -name 'neardup*' 2>/dev/null; }

[ "$(id -u)" -eq 0 ] || skip_all "not root: installing a package needs root"
{ [ -f /etc/debian_version ] && command -v apt-get >/dev/null; } || skip_all "not Debian with apt"
bash "$ROOT/test/lib/deps.sh" || skip_all "the build dependencies could not be installed"
if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q 'ok installed'; then
	skip_all "$PKG is installed already; this test would replace and purge it"
fi
[ -z "$(system_files)" ] || skip_all "neardup files are in $LIBDIR or $EXTDIR already (make uninstall?)"

version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$ROOT/neardup.control")
work=$(mktemp -d /tmp/nd-package.XXXXXX)
chmod 755 "$work"
src=$work/neardup-$version
cluster=nd_package_$$
installed=
created=

cleanup() {
	if [ -n "$created" ]; then
		pg_dropcluster --stop "$PGV" "$cluster" >/dev/null 2>&1 || echo "# could not drop cluster $PGV/$cluster"
	fi
	if [ -n "$installed" ] && dpkg-query -W "$PKG" >/dev/null 2>&1; then
		apt-get purge -y -qq "$PKG" >/dev/null 2>&1 || echo "# could not purge $PKG"
	fi
	rm -rf "$work"
	[ "$(type -t nd_cleanup)" = function ] && nd_cleanup
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- build, in a copy of the working tree ----------------------------------
mkdir -p "$src"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	# tracked and untracked files, not ignored ones (build products), that exist
	(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf -) | tar -xf - -C "$src"
	# Tracked and untracked files, and what is ignored under debian/ (where
	# a build in the checkout would leave debhelper's files): not the other
	# ignored paths, which the test runner's jobs beside this one write
	# (build/, results/).
	checkout_state() {
		git -C "$ROOT" status --porcelain
		git -C "$ROOT" status --porcelain --ignored -- debian
	}
	status_before=$(checkout_state)
else
	tar -C "$ROOT" --exclude=./.git --exclude=./build -cf - . | tar -xf - -C "$src"
fi
debver=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
deb=$work/${PKG}_${debver}_${arch}.deb

# nocheck: the build's own installcheck (dh_pgxs_test, pg_buildext in a
# pg_virtualenv cluster) would run the same suites a second time; they run
# below against the installed package instead.
start=$SECONDS
(cd "$src" && DEB_BUILD_OPTIONS=nocheck DEB_BUILD_PROFILES=nocheck dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1
rc=$?
[ $rc -ne 0 ] && log "$work/build.log"
[ $rc -eq 0 ] && [ -f "$deb" ]
ok $? "dpkg-buildpackage -us -uc -b builds $(basename "$deb") ($((SECONDS - start)) s)"
if [ -n "${status_before+x}" ]; then
	[ "$(checkout_state)" = "$status_before" ]
	ok $? "the build leaves the checkout as it was"
fi
[ -f "$deb" ] || exit 1

lintian --fail-on error,warning "$work/neardup_${debver}_${arch}.changes" >"$work/lintian.log" 2>&1
rc=$?
grep -v '^running with root privileges' "$work/lintian.log" | sed 's/^/# lintian: /'
ok $rc "lintian: no error, no unjustified warning"

# --- install, and a cluster of the system's tools ---------------------------
dpkg-query -W -f='${Package} ${Version}\n' | sort >"$work/packages.before"
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >"$work/apt.log" 2>&1
rc=$?
[ $rc -ne 0 ] && log "$work/apt.log"
[ $rc -eq 0 ] && dpkg-query -W -f='${Status}' "$PKG" | grep -q 'ok installed' && [ -f "$LIBDIR/neardup.so" ]
ok $? "apt-get install $(basename "$deb") puts neardup.so into $LIBDIR"

port=$(nd_free_port)
created=1
if pg_createcluster "$PGV" "$cluster" -p "$port" --locale=C.UTF-8 -e UTF8 >"$work/cluster.log" 2>&1 &&
	pg_ctlcluster "$PGV" "$cluster" start >>"$work/cluster.log" 2>&1; then
	ok 0 "pg_createcluster $PGV $cluster -p $port; pg_ctlcluster $PGV $cluster start"
else
	log "$work/cluster.log"
	ok 1 "pg_createcluster $PGV $cluster -p $port; pg_ctlcluster $PGV $cluster start"
	exit 1
fi

# psql as the cluster's owner, through its socket; from / so that a clone
# postgres may not enter (root's home, mktemp -d) draws no warning from
# psql ("could not change directory") into the output a check reads
psql_q() {
	(cd / && runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -h /var/run/postgresql -p "$port" "$@")
}
extversion() { psql_q -d "$1" -c "SELECT extversion FROM pg_extension WHERE extname = 'neardup'"; }

# MAPPED_SO: after a call into the library, the neardup.so files the
# backend has mapped (a superuser reads its /proc/self/maps).
MAPPED_SO="SELECT hamming_distance('ffffffffffffffff', '0000000000000000') = 64 AS works,
	string_agg(DISTINCT substring(l from '(/[^ ]*neardup[.]so)'), ' ') AS so
	FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\n') l WHERE l LIKE '%neardup.so%'"

psql_q -c "CREATE DATABASE nd_package" -c "CREATE DATABASE nd_update"
mapped=$(psql_q -d nd_package -F ' ' -c "CREATE EXTENSION neardup" -c "$MAPPED_SO")
[ "$(extversion nd_package)" = "$version" ] && [ "$mapped" = "t $LIBDIR/neardup.so" ] &&
	[ "$(dpkg -S "$LIBDIR/neardup.so" 2>/dev/null | cut -d: -f1)" = "$PKG" ]
ok $? "CREATE EXTENSION neardup installs $version; the server runs the package's $LIBDIR/neardup.so (mapped: ${mapped#t })"

# While the package is installed, a throwaway cluster of the other tests
# (test/lib/pgenv.sh: extension_destdir = the staged build) still loads
# the staged library, not the package's.
. "$ROOT/test/lib/pgenv.sh"
if [ -z "${ND_STAGE:-}" ]; then
	nd_build && nd_stage
	trap cleanup EXIT # nd_stage's own trap replaced ours
fi
mapped=$(nd_in_cluster psql -X -q -At -F ' ' -c "CREATE EXTENSION neardup" -c "$MAPPED_SO" | grep -E '^[tf] ')
[ "$mapped" = "t $ND_STAGE$LIBDIR/neardup.so" ]
ok $? "the other tests' clusters (extension_destdir) load the staged neardup.so, not the package's (mapped: ${mapped#t })"

# --- the regress suites, through pgxn check ---------------------------------
# The regress job of the test runner runs every suite against the staged
# build of the same sources; what the package adds is its own build (the
# Debian build flags), its install paths and its SQL scripts as installed.
# So this runs a subset, in about a fifth of the time: the catalog of every
# installed object with its markings (170), the type, the Hamming operators
# and hamming_ball (010-030), features and pinned fingerprints, whose values
# a build flag could change (100-140), the GIN opclass (210), the hamming
# access method with its background merge worker, which the server loads by
# the path "$libdir/neardup" (230), its planner support, constraint queries,
# security, resources and introspection (221_planner_hamming,
# 241_constraint_queries, 270, 280, 292_index_hamming_introspect), MinHash
# and the radius model (300-320, 341_radii_recall), progress (350), the
# cheaper dedup suites (420, 430, 441_dedup_incremental_indexes, 460, 470,
# 490, 510) and the hostile inputs across the SQL surface (500); 000_setup,
# the helpers they share, runs first (the Makefile puts it there).  Left to
# the regress job: the GiST suite, the planner's cost choices, the
# large-input, cache, parallel and multi-level-run suites of the access
# method, the constraint's 6,000-row stream, MinHash band plans and the big
# dedup suites (400, 410, 440_dedup_incremental, 450, 480), over code that
# this subset already runs from the package's library.
PACKAGE_SUITES=(010_simhash64_type 020_hamming 030_hamming_ball 100_text_features 111_simhash_text
	120_simhash_arrays 130_simhash_agg 140_simhash_tsvector 170_catalog 210_index_gin 221_planner_hamming
	230_index_hamming 241_constraint_queries 270_index_hamming_security 280_index_hamming_resources
	292_index_hamming_introspect 300_minhash 310_minhash_bbit 320_minhash_verify 341_radii_recall
	350_progress 420_dedup_clusters 430_dedup_keep_one 441_dedup_incremental_indexes
	460_dedup_search_path 470_hardening 490_dedup_clusters_update 500_hostile 510_dedup_arguments)
suites_desc="every pg_regress suite passes"
make_args=()
if [ "${ND_PACKAGE_SUITES:-}" != all ]; then
	suites_desc="${#PACKAGE_SUITES[@]} pg_regress suites pass"
	for t in "${PACKAGE_SUITES[@]}"; do
		[ -f "$src/test/sql/$t.sql" ] || { echo "# no suite $t: PACKAGE_SUITES needs updating"; ok 1 "the suites package.sh names exist"; }
	done
	# pgxn check runs `make installcheck`; the make it calls is this
	# wrapper, which names the suites on make's command line (in the
	# environment, the Makefile's own list would replace them).
	printf '#!/bin/sh
exec make "$@" REGRESS="%s"
' "${PACKAGE_SUITES[*]}" >"$work/make-suites"
	chmod 755 "$work/make-suites"
	make_args=(--make "$work/make-suites")
fi
chown -R postgres: "$src"
start=$SECONDS
(cd "$src" && runuser -u postgres -- env PGHOST=/var/run/postgresql PGPORT="$port" \
	pgxn check --pg_config "/usr/lib/postgresql/$PGV/bin/pg_config" "${make_args[@]}" "$src") >"$work/regress.log" 2>&1
rc=$?
secs=$((SECONDS - start))
while read -r name result; do
	[ "$result" = ok ]
	ok $? "installcheck $name"
done < <(sed -nE 's/^(test| ) *([0-9A-Za-z_]+) +\.\.\. +(ok|FAILED).*/\2 \3/p' "$work/regress.log")
if [ $rc -ne 0 ]; then
	log "$work/regress.log"
	[ -f "$src/regression.diffs" ] && head -100 "$src/regression.diffs" | sed 's/^/# /'
fi
grep -q '^test ' "$work/regress.log" && [ $rc -eq 0 ]
ok $? "pgxn check: $suites_desc against the installed package (${secs} s)"

# --- a hamming index across a restart ---------------------------------------
# verify DATABASE WHAT: one TAP line per check of hamming-verify.sql
verify() {
	local out name result count=0
	out=$(psql_q -d "$1" -F ' ' -f "$src/debian/tests/hamming-verify.sql" 2>&1)
	while read -r name result; do
		count=$((count + 1))
		[ "$result" = t ]
		ok $? "$2: $name"
	done <<<"$out"
	[ "$count" -eq "$(grep -c "^SELECT '" "$src/debian/tests/hamming-verify.sql")" ]
	ok $? "$2: every check ran ($count)${out:+ }$(echo "$out" | grep -v ' t$' | head -3 | paste -sd ';')"
}
psql_q -d nd_package -f "$src/debian/tests/hamming-setup.sql"
ok $? "a hamming index built and inserted into (hamming-setup.sql)"
pg_ctlcluster "$PGV" "$cluster" restart >>"$work/cluster.log" 2>&1
ok $? "pg_ctlcluster $PGV $cluster restart"
verify nd_package "after the restart"

# --- the update from 0.2 ----------------------------------------------------
psql_q -d nd_update -c "CREATE EXTENSION neardup VERSION '0.2'" -f "$src/debian/tests/hamming-setup.sql"
[ "$(extversion nd_update)" = 0.2 ]
ok $? "CREATE EXTENSION neardup VERSION '0.2' and a hamming index under 0.2's SQL"
psql_q -d nd_update -c "ALTER EXTENSION neardup UPDATE"
[ "$(extversion nd_update)" = "$version" ]
ok $? "ALTER EXTENSION neardup UPDATE reaches $version"
verify nd_update "the 0.2 index after the update"

# --- the autopkgtest ---------------------------------------------------------
(cd "$src" && debian/tests/hamming-restart) >"$work/autopkgtest.log" 2>&1
rc=$?
[ $rc -ne 0 ] && log "$work/autopkgtest.log"
ok $rc "autopkgtest debian/tests/hamming-restart against the installed package"

# --- removal -----------------------------------------------------------------
pg_dropcluster --stop "$PGV" "$cluster" >>"$work/cluster.log" 2>&1 && created=
[ -z "$created" ] && [ ! -e "/etc/postgresql/$PGV/$cluster" ] && [ ! -e "/var/lib/postgresql/$PGV/$cluster" ]
ok $? "pg_dropcluster --stop $PGV $cluster leaves no configuration or data directory"

DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$PKG" >>"$work/apt.log" 2>&1
ok $? "apt-get purge $PKG"
[ -z "$(dpkg -L "$PKG" 2>/dev/null)" ] && ! dpkg-query -W "$PKG" >/dev/null 2>&1 && installed=
ok $? "dpkg -L $PKG lists nothing, dpkg knows no such package"
left=$(system_files)
[ -z "$left" ]
ok $? "no neardup file left in $LIBDIR or $EXTDIR${left:+: $left}"
dpkg-query -W -f='${Package} ${Version}\n' | sort >"$work/packages.after"
diff "$work/packages.before" "$work/packages.after" | sed 's/^/# /'
cmp -s "$work/packages.before" "$work/packages.after"
ok $? "dpkg's package list is what it was before the install"
