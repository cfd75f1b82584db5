#!/usr/bin/env bash
# End-to-end: hamming indexes built and filled by a released library (0.2,
# then 0.3) keep working after the library is replaced by this one and the
# extension is updated (issue 32: "the update from 0.2 with a populated 0.2
# index"; issue 39: "an index built by 0.3 keeps working").
#
# 0.2 is commit d0a389b, 0.3 commit b440719 (their install and update
# scripts are byte for byte the released ones: test/e2e/upgrade.sh).  Each
# old library is built from its commit into a staging directory of its own;
# a throwaway cluster runs it (extension_destdir), CREATE EXTENSION neardup
# makes that version, and a table gets a hamming index with runs, a pending
# list, deleted rows vacuumed, and a near-duplicate exclusion constraint.
# Then the server restarts on this library, ALTER EXTENSION neardup UPDATE,
# and: the index holds the same entries in its runs (0.2's one run is one
# run to this library), it answers what a sequential scan answers (radius,
# =, KNN: nd_check), hamming_check passes, inserts flush new runs beside
# the old ones and compact them, and the constraint still refuses a near
# copy of a row inserted under the old version.  A clone without those
# commits (shallow) skips.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
OLD_RELEASES=("0.2 d0a389b" "0.3 b440719")
for r in "${OLD_RELEASES[@]}"; do
	if ! git -C "$ROOT" cat-file -e "${r#* }^{commit}" 2>/dev/null; then
		echo "1..0 # SKIP the commit of ${r% *} (${r#* }) is not in this clone (shallow?)"
		exit 0
	fi
done
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

ND_OLD_SRC=$(mktemp -d /tmp/nd-old-src.XXXXXX)
ND_OLD_STAGE=$(mktemp -d /tmp/nd-old-stage.XXXXXX)
trap 'rm -rf "$ND_OLD_SRC" "$ND_OLD_STAGE" "${ND_TAP_COUNT:-}"; nd_cleanup' EXIT
export ND_OLD_STAGE
export ND_TAP_BASE=0
ND_TAP_COUNT=$(mktemp /tmp/nd-tap.XXXXXX)
chmod 666 "$ND_TAP_COUNT"
export ND_TAP_COUNT

for r in "${OLD_RELEASES[@]}"; do
export ND_OLD_VERSION=${r% *}
rm -rf "$ND_OLD_SRC"/* "$ND_OLD_STAGE"/*
git -C "$ROOT" archive "${r#* }" | tar -x -C "$ND_OLD_SRC"
make -C "$ND_OLD_SRC" -s PG_CONFIG="$ND_PG_CONFIG" >/dev/null 2>&1
make -C "$ND_OLD_SRC" -s PG_CONFIG="$ND_PG_CONFIG" install DESTDIR="$ND_OLD_STAGE" >/dev/null
chmod -R a+rX "$ND_OLD_STAGE"

nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
n=$ND_TAP_BASE
old=$ND_OLD_VERSION

restart() {
	pg_ctlcluster 15 regress restart
	nd_wait_ready
}

# --- under the old version -----------------------------------------------------------------
psql_q -c "ALTER SYSTEM SET extension_destdir = '$ND_OLD_STAGE'"
restart
nd_setup_db
v=$(psql_q -c "SELECT extversion FROM pg_extension WHERE extname = 'neardup'")
lib=$(psql_q -c "SELECT setting FROM pg_settings WHERE name = 'extension_destdir'")
ok $([ "$v" = "$old" ] && [ "$lib" = "$ND_OLD_STAGE" ] && echo 0 || echo 1) \
	"the $old library and scripts are in use (extension $v from $lib)"
psql_q -c "CREATE TABLE t (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off)" \
	-c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series(1, 50000) i" \
	-c "CREATE INDEX t_ham ON t USING hamming (sh) WITH (pending_limit = 64, background_merge = off)" \
	-c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series(50001, 53000) i" \
	-c "DELETE FROM t WHERE id % 13 = 0" -c "VACUUM t" \
	-c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series(53001, 54000) i" \
	-c "CREATE TABLE x (id int, sh simhash64, EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&))" \
	-c "INSERT INTO x SELECT i, ('x' || md5('x ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 5000) i"
# which library the server loaded: only this one reports 42P01 for a
# relation OID that names nothing (0.2 and 0.3: an internal error)
this_library() {
	local out
	psql_q -c "SELECT count(*) FROM t WHERE sh <~> nd_row_code(1) <= 3" -o /dev/null
	out=$(psql_q -c "SELECT simhash_radius_indexes(0::regclass, 'sh')" 2>&1 || true)
	if [[ $out == *"relation with OID 0 does not exist"* ]]; then
		echo t
	else
		echo f
	fi
}
newlib=$(this_library)
ok $([ "$newlib" = f ] && echo 0 || echo 1) "the server runs the $old library"
read -r run pending <<<"$(psql_q -F' ' -c "SELECT run_entries, pending_entries FROM hamming_stats('t_ham')")"
echo "# under $old: runs $run entries, pending $pending"
ok $(( run > 0 && pending > 0 ? 0 : 1 )) "under $old the index has runs and a pending list"
nd_check_ok "under $old: index scans = sequential scan" t t_ham

# --- this library, the extension updated ---------------------------------------
psql_q -c "ALTER SYSTEM RESET extension_destdir"
restart
psql_q -c "ALTER EXTENSION neardup UPDATE"
v=$(psql_q -c "SELECT extversion FROM pg_extension WHERE extname = 'neardup'")
default=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$ND_STAGE"/usr/share/postgresql/15/extension/neardup.control)
ok $([ "$v" = "$default" ] && [ "$v" != "$old" ] && echo 0 || echo 1) "ALTER EXTENSION neardup UPDATE from $old reaches $v"
newlib=$(this_library)
ok $([ "$newlib" = t ] && echo 0 || echo 1) "the server now runs this library"
entries=$(psql_q -c "SELECT sum(entries) FROM hamming_runs('t_ham')")
nruns=$(psql_q -c "SELECT count(*) FROM hamming_runs('t_ham')")
ok $([ "$entries" = "$run" ] && { [ "$old" != 0.2 ] || [ "$nruns" = 1 ]; } && echo 0 || echo 1) \
	"the $old index's runs hold the same $run entries to this library ($nruns runs, $entries entries)"
c=$(nd_ham_check t_ham)
ok $([ "$c" = passed ] && echo 0 || echo 1) "hamming_check passes on the $old index ($c)"
nd_check_ok "after the update: index scans = sequential scan" t t_ham
psql_q -c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series(54001, 90000) i"
runs=$(psql_q -c "SELECT count(*) FROM hamming_runs('t_ham')")
first=$(psql_q -c "SELECT entries FROM hamming_runs('t_ham') WHERE run = 0")
echo "# after 36,000 inserts: $runs runs, the first of $first entries ($(psql_q -c "SELECT string_agg(entries::text, ' ' ORDER BY run) FROM hamming_runs('t_ham')"))"
ok $(( runs > nruns ? 0 : 1 )) "inserts flush new runs beside the $old runs"
c=$(nd_ham_check t_ham)
ok $([ "$c" = passed ] && echo 0 || echo 1) "hamming_check passes with the new runs ($c)"
nd_check_ok "with the new runs: index scans = sequential scan" t t_ham
psql_q -c "VACUUM t"
nd_check_ok "after VACUUM: index scans = sequential scan" t t_ham
out=$(psql_q -c "INSERT INTO x VALUES (-1, (('x' || md5('x 77'))::bit(64)::bigint # 5)::simhash64)" 2>&1 || true)
ok $([[ $out == *"conflicting key value violates exclusion constraint"* ]] && echo 0 || echo 1) \
	"the constraint's $old index refuses a near copy of a row inserted under $old"
echo "$n" >"$ND_TAP_COUNT"
SCRIPT
ND_TAP_BASE=$(cat "$ND_TAP_COUNT")
done
echo "1..$ND_TAP_BASE"
