#!/usr/bin/env bash
# End-to-end: the near-duplicate exclusion constraint
#   EXCLUDE USING hamming|gist (hamming_ball(sh, 3) WITH &&)
# under concurrent inserters, a crash, and dump/restore.
#
# Groups of near-copies: member m (0..7) of group g is the center
# nd_center(g) with bit 7m flipped (m > 0), so members are within 2 bits of
# each other and groups ~32 bits apart.
#   1. pgbench, 8 clients, each transaction inserts a random member of one
#      of 40 groups with ON CONFLICT DO NOTHING and holds its transaction
#      open for 20 ms, so that inserts of one group overlap; into a table
#      constrained through a hamming index, one through GiST, and a control
#      table where the application "looks up, then inserts" (no
#      constraint).  Constrained tables end with exactly one row per group
#      and no pair within 3 bits; the control lets near-copies in (the race
#      the constraint closes).
#   2. 4 psql sessions with plain INSERTs of members of 30 new groups: each
#      group's first commit wins, every other insert fails with 23P01 (or,
#      when two uncommitted inserts wait for each other, 40P01 for the
#      deadlock detector's victim), and rows + those errors = attempts
#      (nothing else lost).
#   3. kill -9 of the postmaster while inserters run; after recovery the
#      table still has no pair within 3 bits, hamming_check passes, and a
#      near-copy of a stored row is still refused.
#   4. pg_dump -Fc / pg_restore into a new database: the constraint is
#      there and still refuses a near-copy.
#   5. a streaming standby (pg_basebackup), fed more constrained inserts,
#      then promoted: on the new primary, near-copies of rows from before the
#      base backup and of rows that arrived by streaming are refused, and 4
#      concurrent inserters of near-copy groups leave one row per group, no
#      pair within 3 bits and a sound index.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
nd_second_cluster nd-constraint-standby
work=$(mktemp -d /tmp/nd-constraint.XXXXXX)
chmod 755 "$work"
trap 'nd_second_cluster_gone; rm -rf "$work"' EXIT
PGBENCH=/usr/lib/postgresql/15/bin/pgbench

nd_setup_db
psql_q <<'EOF'
CREATE FUNCTION nd_member(g int, m int) RETURNS simhash64
LANGUAGE sql IMMUTABLE AS $$ SELECT nd_flip(nd_center(g), least(m, 1), m * 7) $$;
CREATE SEQUENCE ids;
CREATE TABLE xh (id bigint PRIMARY KEY, grp int, sh simhash64,
    CONSTRAINT xh_near EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&));
CREATE TABLE xg (id bigint PRIMARY KEY, grp int, sh simhash64,
    CONSTRAINT xg_near EXCLUDE USING gist (hamming_ball(sh, 3) WITH &&));
CREATE TABLE xc (id bigint PRIMARY KEY, grp int, sh simhash64);
EOF

# pairs TABLE: pairs of rows within 3 bits (bit_count: no extension code).
pairs() {
	psql_q -c "SELECT count(*) FROM $1 a JOIN $1 b ON a.id < b.id
	           AND bit_count((a.sh::bigint # b.sh::bigint)::bit(64)) <= 3"
}

# --- 1. pgbench: ON CONFLICT DO NOTHING, and the look-up-then-insert control --
for t in xh xg; do
	cat >"$work/$t.sql" <<EOF
\\set g random(0, 39)
\\set m random(0, 7)
BEGIN;
INSERT INTO $t VALUES (nextval('ids'), :g, nd_member(:g, :m)) ON CONFLICT DO NOTHING;
SELECT pg_sleep(0.02);
COMMIT;
EOF
done
cat >"$work/xc.sql" <<'EOF'
\set g random(0, 39)
\set m random(0, 7)
BEGIN;
INSERT INTO xc SELECT nextval('ids'), :g, s.c FROM (SELECT nd_member(:g, :m) AS c) s
WHERE NOT EXISTS (SELECT 1 FROM xc WHERE bit_count((xc.sh::bigint # s.c::bigint)::bit(64)) <= 3);
SELECT pg_sleep(0.02);
COMMIT;
EOF
for t in xh xg xc; do
	rc=0
	$PGBENCH -n -c 8 -j 2 -t 40 -f "$work/$t.sql" >"$work/pgbench.out" 2>&1 || rc=$?
	processed=$(grep -o 'actually processed: [0-9]*/[0-9]*' "$work/pgbench.out" || true)
	read -r rows groups <<<"$(psql_q -F' ' -c "SELECT count(*), count(DISTINCT grp) FROM $t")"
	p=$(pairs $t)
	echo "# $t: pgbench exit $rc, $processed; $rows rows for $groups groups, $p pairs within 3 bits"
	if [ $t = xc ]; then
		ok $([ "$p" -gt 0 ] && echo 0 || echo 1) "control: looking up, then inserting, lets near-copies in under concurrency ($p pairs)"
	else
		ok $([ "$rc" = 0 ] && [ "$processed" = "actually processed: 320/320" ] && [ "$rows" = "$groups" ] &&
			[ "$p" = 0 ] && echo 0 || echo 1) \
			"$t: 8 concurrent inserters with ON CONFLICT DO NOTHING leave one row per group, no pair within 3 bits"
	fi
done

# --- 2. plain INSERTs: one winner per group, 23P01 for the rest ---------------
for s in 1 2 3 4; do
	{
		echo "\\set VERBOSITY verbose"
		for ((i = 0; i < 60; i++)); do
			g=$((100 + (i * 7 + s * 13) % 30))
			echo "BEGIN;"
			echo "INSERT INTO xh VALUES (nextval('ids'), $g, nd_member($g, $(((i + s) % 8))));"
			echo "SELECT pg_sleep(0.005);"
			echo "COMMIT;"
		done
	} >"$work/plain$s.sql"
	psql -X -q -o /dev/null -f "$work/plain$s.sql" 2>"$work/plain$s.err" &
done
wait
errors=$(cat "$work"/plain*.err | grep -c 'ERROR:  23P01: conflicting key value violates exclusion constraint "xh_near"' || true)
# Two sessions whose uncommitted rows conflict wait for each other: one is
# the deadlock detector's victim (40P01), as with any exclusion constraint.
deadlocks=$(cat "$work"/plain*.err | grep -c 'ERROR:  40P01: deadlock detected' || true)
other=$(cat "$work"/plain*.err | grep 'ERROR:' | grep -v '23P01\|25P02\|40P01' | head -3 || true)
read -r rows groups <<<"$(psql_q -F' ' -c "SELECT count(*), count(DISTINCT grp) FROM xh WHERE grp >= 100")"
echo "# plain INSERTs: 240 attempts, $rows rows for $groups groups, $errors exclusion violations, $deadlocks deadlock victims${other:+; other errors: $other}"
ok $([ "$rows" = 30 ] && [ "$groups" = 30 ] && [ $((rows + errors + deadlocks)) = 240 ] && [ -z "$other" ] && echo 0 || echo 1) \
	"4 sessions of plain INSERTs: one row per group, 23P01 (or a deadlock victim's 40P01) for every other attempt, nothing else lost"
ok $([ "$(pairs xh)" = 0 ] && echo 0 || echo 1) "no pair within 3 bits in the hamming-constrained table"

# --- 3. kill -9 during inserts --------------------------------------------------
datadir=$(psql_q -c "SHOW data_directory")
cat >"$work/crash.sql" <<'EOF'
\set g random(1000, 1999)
\set m random(0, 7)
INSERT INTO xh VALUES (nextval('ids'), :g, nd_member(:g, :m)) ON CONFLICT DO NOTHING;
EOF
$PGBENCH -n -c 4 -j 2 -T 60 -f "$work/crash.sql" >"$work/crash.out" 2>&1 &
bench=$!
nd_wait_for "count(*) >= 300 FROM xh WHERE grp >= 1000" || echo "# the inserts did not progress"
nd_kill_cluster "$datadir"
wait "$bench" || true
echo "# killed $nd_killed"
pg_ctlcluster 15 regress start
nd_wait_ready
read -r rows groups <<<"$(psql_q -F' ' -c "SELECT count(*), count(DISTINCT grp) FROM xh WHERE grp >= 1000")"
check=$(nd_ham_check xh_near)
near=$(psql -X -At -v VERBOSITY=verbose -c "INSERT INTO xh SELECT nextval('ids'), grp, nd_flip(sh, 1, 3) FROM xh WHERE grp >= 1000 LIMIT 1" 2>&1 || true)
echo "# after the crash: $rows rows for $groups groups; hamming_check: $check; a near-copy: ${near%%$'\n'*}"
ok $([ "$rows" = "$groups" ] && [ "$(pairs xh)" = 0 ] && [ "$check" = passed ] && [[ $near == *23P01* ]] && echo 0 || echo 1) \
	"kill -9 during inserts: after recovery one row per group, no pair within 3 bits, the index sound, near-copies refused"

# --- 4. dump and restore --------------------------------------------------------
pg_dump -Fc -f "$work/dump" "$PGDATABASE"
createdb restored
pg_restore -d restored "$work/dump" 2>"$work/restore.err" || true
[ -s "$work/restore.err" ] && sed 's/^/# restore: /' "$work/restore.err" | head -5
cons=$(psql_q -d restored -c "SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), '; ' ORDER BY conname)
                               FROM pg_constraint WHERE contype = 'x'")
echo "# restored: $cons"
same=$(psql_q -d restored -c "SELECT (SELECT count(*) FROM xh) || ' ' || (SELECT count(*) FROM xg)")
orig=$(psql_q -c "SELECT (SELECT count(*) FROM xh) || ' ' || (SELECT count(*) FROM xg)")
near_h=$(psql -X -At -d restored -v VERBOSITY=verbose -c "INSERT INTO xh SELECT -1, grp, nd_flip(sh, 1, 5) FROM xh WHERE sh IS NOT NULL LIMIT 1" 2>&1 || true)
near_g=$(psql -X -At -d restored -v VERBOSITY=verbose -c "INSERT INTO xg SELECT -1, grp, nd_flip(sh, 1, 5) FROM xg WHERE sh IS NOT NULL LIMIT 1" 2>&1 || true)
check=$(nd_ham_check xh_near true restored)
ok $([[ $cons == *"xh_near EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&)"* ]] &&
	[[ $cons == *"xg_near EXCLUDE USING gist (hamming_ball(sh, 3) WITH &&)"* ]] && [ "$same" = "$orig" ] &&
	[[ $near_h == *23P01* ]] && [[ $near_g == *23P01* ]] && [ "$check" = passed ] && echo 0 || echo 1) \
	"pg_dump/pg_restore: both constraints restored with every row, and still refuse near-copies"

# --- 5. a standby, promoted -----------------------------------------------------
nd_start_standby
# 200 inserts into 40 groups, each group in turn (a random pick leaves one
# group out about one time in five)
psql_q -c "CREATE SEQUENCE stream_groups"
cat >"$work/stream.sql" <<'EOF'
\set m random(0, 7)
INSERT INTO xh SELECT nextval('ids'), g, nd_member(g, :m)
FROM (SELECT 3000 + (nextval('stream_groups') % 40)::int AS g) s ON CONFLICT DO NOTHING;
EOF
$PGBENCH -n -c 4 -j 2 -t 50 -f "$work/stream.sql" >"$work/stream.out" 2>&1
nd_wait_replay || echo "# the standby did not catch up"
runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$ND2_DIR/data" -w promote >/dev/null
export PGPORT_PRIMARY=$PGPORT
export PGPORT=$ND2_PORT
recovery=$(psql_q -c "SELECT pg_is_in_recovery()")
near_old=$(psql -X -At -v VERBOSITY=verbose -c "INSERT INTO xh SELECT nextval('ids'), grp, nd_flip(sh, 1, 9) FROM xh WHERE grp BETWEEN 100 AND 129 LIMIT 1" 2>&1 || true)
near_new=$(psql -X -At -v VERBOSITY=verbose -c "INSERT INTO xh SELECT nextval('ids'), grp, nd_flip(sh, 1, 9) FROM xh WHERE grp >= 3000 LIMIT 1" 2>&1 || true)
skipped=$(psql_q -c "WITH i AS (INSERT INTO xh SELECT nextval('ids'), grp, nd_flip(sh, 1, 11) FROM xh WHERE grp >= 3000
                                ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) FROM i")
cat >"$work/promoted.sql" <<'EOF'
\set g random(4000, 4039)
\set m random(0, 7)
BEGIN;
INSERT INTO xh VALUES (nextval('ids'), :g, nd_member(:g, :m)) ON CONFLICT DO NOTHING;
SELECT pg_sleep(0.01);
COMMIT;
EOF
$PGBENCH -n -c 4 -j 2 -t 100 -f "$work/promoted.sql" >"$work/promoted.out" 2>&1
read -r rows groups <<<"$(psql_q -F' ' -c "SELECT count(*), count(DISTINCT grp) FROM xh WHERE grp >= 4000")"
streamed=$(psql_q -c "SELECT count(DISTINCT grp) || '/' || count(*) FROM xh WHERE grp BETWEEN 3000 AND 3999")
check=$(nd_ham_check xh_near)
echo "# promoted (in recovery: $recovery): streamed groups/rows $streamed; near-copies: ${near_old%%$'\n'*} / ${near_new%%$'\n'*}; ON CONFLICT inserted $skipped; 400 concurrent inserts: $rows rows for $groups groups; hamming_check: $check"
ok $([ "$recovery" = f ] && [[ $near_old == *23P01* ]] && [[ $near_new == *23P01* ]] && [ "$skipped" = 0 ] &&
	[ "$streamed" = 40/40 ] && [ "$rows" = 40 ] && [ "$groups" = 40 ] && [ "$(pairs xh)" = 0 ] && [ "$check" = passed ] &&
	echo 0 || echo 1) \
	"a promoted standby enforces the constraint: near-copies of old and streamed rows refused, concurrent inserters leave one row per group"
export PGPORT=$PGPORT_PRIMARY
echo "1..$n"
SCRIPT
