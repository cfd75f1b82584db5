#!/usr/bin/env bash
# End-to-end: moving a partition of the block-sharded layout to another
# shard when a commit fails (doc/scale-out.md, "Adding a shard: moving a
# partition").  postgres_fdw commits the shards one after another, without
# two-phase commit; a move must leave a correct layout whichever commit
# fails, and a rerun must finish it.
#
# A coordinator and four shard clusters on this machine: layout `mv` (4
# blocks, 4 partitions per copy) on s1 and s2, s3 and s4 the new shards,
# `mv_one` a local table holding the same rows (the single-node
# reference).  A failed commit is provoked as the audit did: a deferred
# constraint trigger on the target shard's table that raises at commit (a
# stand-in for a lost connection, a full disk or a failed deferred check).
# Checked:
#   - simhash_layout_move (one transaction) refuses, and no row is lost
#     (0.3's function copied and emptied in one transaction: the target
#     refusing its commit after the source's TRUNCATE had committed left
#     the rows on neither shard);
#   - simhash_layout_move_partition with the target failing at commit:
#     the coordinator still reads the old shard, every row there;
#   - the same with the old shard failing to empty (a TRUNCATE trigger):
#     the coordinator reads the new shard, every row there, writes to the
#     copy refused until a rerun, which finishes the move;
#   - a rerun after the target committed but the coordinator's switch did
#     not (the target already holds exactly these rows) finishes the move;
#     a target holding other rows is refused (55000);
#   - after every step, every copy holds every row of the single node,
#     simhash_layout_check calls every copy consistent, and radius
#     searches equal the single node's.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
LIB=$ROOT/test/e2e/lib
# shellcheck source=lib/common.sh
. "$LIB/common.sh"
# shellcheck source=lib/multinode.sh
. "$LIB/multinode.sh"

ROWS=${ROWS:-4000}
SHARDS=(s1 s2 s3 s4)

nd_mn_init
nd_node_create coord
for s in "${SHARDS[@]}"; do
	nd_node_create "$s"
	nd_psql "$s" -c "SET client_min_messages = warning" -c "CREATE EXTENSION neardup" \
		-c "SELECT simhash_shard_create('mv', 4, 4)" >/dev/null
	# a refusal at commit, armed per table by the test
	nd_psql "$s" -c "CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS
	                 \$\$BEGIN RAISE EXCEPTION 'refused at commit on %', TG_TABLE_NAME; END\$\$" \
		-c "CREATE FUNCTION refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS
		    \$\$BEGIN RAISE EXCEPTION 'truncate refused on %', TG_TABLE_NAME; END\$\$"
done
c() { nd_psql coord "$@"; }
c -c "SET client_min_messages = warning" -c "CREATE EXTENSION neardup" -c "CREATE EXTENSION postgres_fdw"
for s in "${SHARDS[@]}"; do nd_fdw_server coord "$s"; done
c -f "$LIB/index_check.sql"
c -c "CREATE TABLE mv_one (id bigint PRIMARY KEY, sh simhash64 NOT NULL)" \
	-c "INSERT INTO mv_one SELECT i, nd_row_code(i) FROM generate_series(1, $ROWS) i WHERE nd_row_code(i) IS NOT NULL"
c -c "SELECT count(*) FROM simhash_layout_create('mv', ARRAY['s1','s2'], 4, 4)" >/dev/null
c -c "SELECT simhash_layout_insert('mv', 'SELECT id, sh FROM mv_one')" >/dev/null
want=$(c -c "SELECT count(*) FROM mv_one")

# The layout against the single node: "rows=<copy 1 .. copy 4> lost=<rows
# of mv_one missing from some copy, or with another code> extra=<rows of
# some copy not in mv_one> check=<simhash_layout_check's consistent, per
# copy> radius=<radius 0..2 searches around 60 codes that differ from a
# scan of mv_one>".
c <<'SQL'
CREATE FUNCTION mv_state() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    counts text;
    lost bigint := 0;
    extra bigint := 0;
    n bigint;
    chk text;
    bad int := 0;
BEGIN
    SELECT string_agg(x::text, ' ' ORDER BY b) INTO counts
    FROM generate_series(1, 4) b,
         LATERAL (SELECT (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM mv_b%s', b),
                                                             false, true, '')))[1]::text::bigint) v(x);
    FOR b IN 1 .. 4 LOOP
        EXECUTE format('SELECT count(*) FROM mv_one o WHERE NOT EXISTS
                            (SELECT FROM mv_b%s c WHERE c.id = o.id AND c.sh = o.sh)', b) INTO n;
        lost := lost + n;
        EXECUTE format('SELECT count(*) FROM mv_b%s c WHERE NOT EXISTS
                            (SELECT FROM mv_one o WHERE c.id = o.id AND c.sh = o.sh)', b) INTO n;
        extra := extra + n;
    END LOOP;
    SELECT string_agg(consistent::text, ' ' ORDER BY block) INTO chk FROM simhash_layout_check('mv');
    SELECT count(*) INTO bad
    FROM (SELECT sh AS q FROM mv_one ORDER BY id LIMIT 60) c, generate_series(0, 2) r
    WHERE (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM simhash_layout_within('mv', c.q, r))
          <> (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM mv_one o
              WHERE bit_count((o.sh::bigint # c.q::bigint)::bit(64)) <= r);
    RETURN format('rows=%s lost=%s extra=%s check=%s radius=%s', counts, lost, extra, chk, bad);
END
$$;
CREATE FUNCTION mv_server(part text) RETURNS text LANGUAGE sql AS $$
    SELECT s.srvname::text FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver
    WHERE f.ftrelid = part::regclass
$$;
SQL
good="rows=$want $want $want $want lost=0 extra=0 check=true true true true radius=0"
shard_count() { nd_psql "$1" -c "SELECT count(*) FROM $2"; }

state=$(c -c "SELECT mv_state()")
echo "# the layout on s1 and s2: $state"
ok $([ "$want" -gt 0 ] && [ "$state" = "$good" ] && echo 0 || echo 1) "the layout holds every row in each copy, equal to the single node"

# --- the function of one transaction, with the target refusing its commit ------------------
# Copy 1's partitions: 0 and 2 on s1, 1 and 3 on s2; each moved to s3 or
# s4, whose tables refuse at commit.
for s in s3 s4; do
	for p in 0 1 2 3; do
		nd_psql "$s" -c "CREATE CONSTRAINT TRIGGER refuse AFTER INSERT ON mv_b1_p$p DEFERRABLE INITIALLY DEFERRED
		                 FOR EACH ROW EXECUTE FUNCTION refuse_commit()"
	done
done
before=$(c -c "SELECT string_agg(mv_server('mv_b1_p' || p), ' ' ORDER BY p) FROM generate_series(0, 3) p")
outcomes=""
for mv in "0 s3" "1 s3" "2 s4" "3 s4"; do
	err=$(c -v VERBOSITY=verbose -c "SELECT simhash_layout_move('mv', 1, ${mv% *}, '${mv#* }')" 2>&1 | head -1 || true)
	outcomes+="$(grep -oE 'ERROR: +[0-9A-Z]{5}' <<<"$err" | grep -oE '[0-9A-Z]{5}$' || echo none) "
done
after=$(c -c "SELECT string_agg(mv_server('mv_b1_p' || p), ' ' ORDER BY p) FROM generate_series(0, 3) p")
state=$(c -c "SELECT mv_state()")
echo "# simhash_layout_move of copy 1's four partitions onto s3 and s4: ${outcomes% }; placement $before -> $after; $state"
ok $([ "$state" = "$good" ] && [ "$after" = "$before" ] && echo 0 || echo 1) \
	"simhash_layout_move with the target failing at commit: no row lost, the coordinator's placement unchanged"
ok $([ "$outcomes" = "0A000 0A000 0A000 0A000 " ] && echo 0 || echo 1) \
	"simhash_layout_move refuses to move in one transaction (0A000)"

# --- the procedure, the target refusing its commit ------------------------------------------
old=$(c -c "SELECT mv_server('mv_b1_p0')")
err=$(c -c "CALL simhash_layout_move_partition('mv', 1, 0, 's3')" 2>&1 | head -1 || true)
state=$(c -c "SELECT mv_state()")
echo "# CALL simhash_layout_move_partition('mv', 1, 0, 's3'), s3 refusing at commit: $err; $state"
ok $([[ $err =~ refused\ at\ commit ]] && [ "$state" = "$good" ] && [ "$(c -c "SELECT mv_server('mv_b1_p0')")" = "$old" ] &&
	[ "$(shard_count "$old" mv_b1_p0)" -gt 0 ] && [ "$(shard_count s3 mv_b1_p0)" = 0 ] &&
	[ "$(c -c "SELECT count(*) FROM pg_class WHERE relname LIKE 'mv_b1_p0_mov%'")" = 0 ] && echo 0 || echo 1) \
	"the target failing at commit: nothing moved, the coordinator reads the old shard, which holds every row"
for s in s3 s4; do
	for p in 0 1 2 3; do nd_psql "$s" -c "DROP TRIGGER refuse ON mv_b1_p$p"; done
done

# --- the procedure, the old shard failing to empty its table -------------------------------
rows=$(shard_count "$old" mv_b1_p0)
nd_psql "$old" -c "CREATE TRIGGER refuse BEFORE TRUNCATE ON mv_b1_p0 FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate()"
err=$(c -c "CALL simhash_layout_move_partition('mv', 1, 0, 's3')" 2>&1 | head -1 || true)
state=$(c -c "SELECT mv_state()")
half="$(c -c "SELECT mv_server('mv_b1_p0') || ' ' || mv_server('mv_b1_p0_moved_from')") $(shard_count s3 mv_b1_p0) $(shard_count "$old" mv_b1_p0)"
echo "# the same, $old refusing the TRUNCATE: $err; now on, moved from, rows there, rows left: $half; $state"
ok $([[ $err =~ truncate\ refused ]] && [ "$state" = "$good" ] && [ "$half" = "s3 $old $rows $rows" ] && echo 0 || echo 1) \
	"the old shard failing to empty: the coordinator reads the new shard, every row there, the old table kept and marked"
# half-done: writes to copy 1 are refused (they would make the tables differ)
code=$(c -c "SELECT sh FROM mv_b1_p0 ORDER BY id LIMIT 1")
ins=$(c -c "SELECT simhash_layout_insert('mv', 'SELECT 900001::bigint, ''$code''::simhash64')" 2>&1 | head -1 || true)
del=$(c -c "SELECT simhash_layout_delete('mv', ARRAY[1]::bigint[])" 2>&1 | head -1 || true)
state=$(c -c "SELECT mv_state()")
echo "# half-done, an insert into the partition: $ins; a delete: $del; $state"
ok $([[ $ins =~ does\ not\ allow\ inserts ]] && [[ $del =~ does\ not\ allow\ deletes ]] && [ "$state" = "$good" ] &&
	echo 0 || echo 1) "half-done: writes to the copy are refused, nothing changes"
nd_psql "$old" -c "DROP TRIGGER refuse ON mv_b1_p0"
moved=$(c -c "CALL simhash_layout_move_partition('mv', 1, 0, 's3')")
state=$(c -c "SELECT mv_state()")
done_=$(c -c "SELECT mv_server('mv_b1_p0') || ' ' || count(*) FROM pg_class WHERE relname = 'mv_b1_p0_moved_from'")
echo "# the rerun: moved $moved; now on, marks left: $done_; rows there $(shard_count s3 mv_b1_p0), left on $old $(shard_count "$old" mv_b1_p0); $state"
ok $([ "$moved" = "$rows" ] && [ "$done_" = "s3 0" ] && [ "$(shard_count "$old" mv_b1_p0)" = 0 ] &&
	[ "$(shard_count s3 mv_b1_p0)" = "$rows" ] && [ "$state" = "$good" ] && echo 0 || echo 1) \
	"a rerun finishes the move: the old table emptied after the check, the mark dropped"
c -c "SELECT simhash_layout_insert('mv', 'SELECT 900001::bigint, ''$code''::simhash64')" \
	-c "INSERT INTO mv_one VALUES (900001, '$code')" >/dev/null
want=$((want + 1))
good="rows=$want $want $want $want lost=0 extra=0 check=true true true true radius=0"
state=$(c -c "SELECT mv_state()")
again=$(c -c "CALL simhash_layout_move_partition('mv', 1, 0, 's3')")
echo "# after the move, an insert into that partition: $state; the move again: $again"
ok $([ "$state" = "$good" ] && [ "$(shard_count s3 mv_b1_p0)" = $((rows + 1)) ] && [ "$again" = 0 ] && echo 0 || echo 1) \
	"after the move the copy takes writes on the new shard; moving it again to the same server does nothing"

# --- a rerun after the target committed but the switch did not -------------------------------
# The target already holds exactly the partition's rows (as when the
# coordinator's own commit failed after the shards'): the rerun keeps them.
old=$(c -c "SELECT mv_server('mv_b2_p1')")
rows=$(shard_count "$old" mv_b2_p1)
c -c "CREATE FOREIGN TABLE mv_pre (id bigint, sh simhash64) SERVER s4 OPTIONS (table_name 'mv_b2_p1')" \
	-c "INSERT INTO mv_pre SELECT id, sh FROM mv_b2_p1" -c "DROP FOREIGN TABLE mv_pre"
moved=$(c -c "CALL simhash_layout_move_partition('mv', 2, 1, 's4')")
state=$(c -c "SELECT mv_state()")
echo "# block 2's partition 1, already on s4: moved $moved of $rows; on s4 $(shard_count s4 mv_b2_p1), left on $old $(shard_count "$old" mv_b2_p1); $state"
ok $([ "$moved" = "$rows" ] && [ "$(shard_count s4 mv_b2_p1)" = "$rows" ] && [ "$(shard_count "$old" mv_b2_p1)" = 0 ] &&
	[ "$(c -c "SELECT mv_server('mv_b2_p1')")" = s4 ] && [ "$state" = "$good" ] && echo 0 || echo 1) \
	"a rerun after the target committed the rows but the switch did not: the rows kept, the move finished"
# a target holding other rows: refused, nothing changed
nd_psql s3 -c "INSERT INTO mv_b3_p0 VALUES (-1, '0000000000000000')"
old=$(c -c "SELECT mv_server('mv_b3_p0')")
err=$(c -v VERBOSITY=verbose -c "CALL simhash_layout_move_partition('mv', 3, 0, 's3')" 2>&1 | head -1 || true)
nd_psql s3 -c "DELETE FROM mv_b3_p0 WHERE id = -1"
state=$(c -c "SELECT mv_state()")
echo "# block 3's partition 0 onto s3, whose table has another row: $err; $state"
ok $([[ $err =~ ERROR:\ +55000:\ table\ public.mv_b3_p0\ on\ server\ \"s3\"\ is\ not\ empty ]] &&
	[ "$(c -c "SELECT mv_server('mv_b3_p0')")" = "$old" ] && [ "$state" = "$good" ] && echo 0 || echo 1) \
	"a target holding other rows is refused (55000) and nothing changes"
