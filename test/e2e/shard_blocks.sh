#!/usr/bin/env bash
# End-to-end: the block-sharded layout (doc/scale-out.md, "The block
# layout"): Manku's permuted tables spread over shards with postgres_fdw.
#
# One coordinator and four shard clusters on this machine (loopback, ports
# of their own; test/e2e/lib/multinode.sh), a streaming standby of one
# shard, and a fifth shard added later.  On the coordinator, layout `fp`
# (4 blocks, 8 partitions per copy) made by simhash_layout_create, and
# `fp_one`, a local table with the same rows (the single-node reference).
# Checked:
#   - the placement: 32 partitions, 8 per server; the rows of each copy
#     spread over every shard, each copy holding every row;
#   - radius search (simhash_layout_within) at radius 0..5 for random,
#     planted and all-zero/all-one codes: each row once, ids and distances
#     equal to the single node's;
#   - at most radius + 1 shards touched (4 at radius 3): the plan of the
#     query (simhash_layout_within_sql) has one Foreign Scan per copy, and
#     the shards' own statistics show scans on at most that many shards;
#   - KNN (simhash_layout_nearest) equal to the single node's, ties by id,
#     near codes and codes with nothing within the layout's radius;
#   - inserts and deletes through the coordinator reach every copy, and
#     simhash_layout_check says so (and catches a stray row);
#   - the nightly clusters (simhash_layout_clusters: each shard clusters
#     its partitions, edges cross) equal simhash_clusters on the single node;
#   - moving a partition to a new shard keeps every answer (what a failed
#     commit leaves at each step of a move: test/e2e/shard_move.sh);
#   - the near-duplicate constraint on every partition (layout `fx`,
#     simhash_shard_create(..., exclude_within => 3)) holds for the whole
#     layout: near copies in any block are refused through the coordinator,
#     in one statement and between two concurrent transactions;
#   - a stopped shard: an error that names it, while a query whose
#     partitions are elsewhere still answers; its promoted standby, the
#     server repointed: the answers equal the single node's again.
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

ROWS=${ROWS:-20000}
SHARDS=(s1 s2 s3 s4)
PARTS=8

nd_mn_init
nd_node_create coord
for s in "${SHARDS[@]}" s5; do
	nd_node_create "$s"
	nd_psql "$s" -c "SET client_min_messages = warning" -c "CREATE EXTENSION neardup" \
		-c "SELECT simhash_shard_create('fp', 4, $PARTS)" \
		-c "SELECT simhash_shard_create('fx', 4, 4, exclude_within => 3)" >/dev/null
done
nd_node_standby s2r s2
c() { nd_psql coord "$@"; }
c -c "SET client_min_messages = warning" -c "CREATE EXTENSION neardup" -c "CREATE EXTENSION postgres_fdw"
for s in "${SHARDS[@]}" s5; do nd_fdw_server coord "$s"; done
c -f "$LIB/index_check.sql"
c -c "CREATE TABLE fp_one (id bigint PRIMARY KEY, sh simhash64 NOT NULL)" \
	-c "INSERT INTO fp_one SELECT i, nd_row_code(i) FROM generate_series(1, $ROWS) i WHERE nd_row_code(i) IS NOT NULL"

# --- the layout --------------------------------------------------------------------------
placement=$(c -c "SELECT server, count(*) FROM simhash_layout_create('fp', ARRAY['s1','s2','s3','s4'], 4, $PARTS)
                  GROUP BY 1 ORDER BY 1" | tr '\n' ' ')
echo "# partitions per server: $placement"
c -f "$LIB/shard_blocks.sql"
ok $([ "$placement" = "s1|8 s2|8 s3|8 s4|8 " ] && echo 0 || echo 1) "32 partitions, 8 on each of the four servers"
inserted=$(c -c "SELECT simhash_layout_insert('fp', 'SELECT id, sh FROM fp_one')")
want=$(c -c "SELECT count(*) FROM fp_one")
copies=$(c -c "SELECT string_agg(n::text, ' ') FROM (SELECT (SELECT count(*) FROM fp_b1) n UNION ALL
               SELECT count(*) FROM fp_b2 UNION ALL SELECT count(*) FROM fp_b3 UNION ALL SELECT count(*) FROM fp_b4) x")
shard_rows() {
	local s out=""
	for s in "$@"; do
		out+="$s=$(nd_psql "$s" -c "SELECT sum((xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I', c.relname), false, true, '')))[1]::text::bigint)
		                            FROM pg_class c WHERE c.relname ~ '^fp_b[0-9]+_p[0-9]+\$' AND c.relkind = 'r'") "
	done
	echo "${out% }"
}
per_shard=$(shard_rows "${SHARDS[@]}")
echo "# inserted $inserted, copies $copies, rows per shard (all copies) $per_shard"
ok $([ "$inserted" = "$want" ] && [ "$copies" = "$want $want $want $want" ] &&
	[[ ! " $per_shard" =~ =0( |$) ]] && echo 0 || echo 1) \
	"simhash_layout_insert puts every row in each of the 4 copies, spread over every shard"
for s in "${SHARDS[@]}"; do nd_psql "$s" -c "ANALYZE"; done

# --- radius search -----------------------------------------------------------------------
out=$(c -c "SELECT nd_blocks_radius_check()")
echo "# $out"
ok $([[ $out =~ ^checks=[1-9][0-9]*\ mismatches=0\ rows=[1-9] ]] && echo 0 || echo 1) \
	"radius 0..5, every query code: each row once, equal to the single node"

# --- shards touched ----------------------------------------------------------------------
Q=$(c -c "SELECT nd_center(1)")
sql=$(c -c "SELECT simhash_layout_within_sql('fp', '$Q', 3)")
plan=$(c -c "EXPLAIN VERBOSE $sql")
echo "$plan" | grep -E 'Foreign Scan|Remote SQL' | sed 's/^/# /'
parts=$(grep -oE 'Foreign Scan on public\.fp_b[0-9]+_p[0-9]+' <<<"$plan" | sed 's/.*public\.//' | sort -u | tr '\n' ' ')
servers=$(c -c "SELECT count(DISTINCT s.srvname) FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver
                WHERE f.ftrelid::regclass::text = ANY (string_to_array(trim('$parts'), ' '))")
ok $([ "$(grep -c 'Async Foreign Scan' <<<"$plan")" = 4 ] && [ "$(wc -w <<<"$parts")" = 4 ] &&
	[ "$(grep -E 'Remote SQL: .*WHERE .*public\.within\(sh, ' <<<"$plan" | grep -cE 'simhash_block\(sh, [1-4], 4\) = [0-9]+')" = 4 ] &&
	[ "$servers" -le 4 ] && echo 0 || echo 1) \
	"radius 3: the plan reads one partition of each of the 4 copies ($parts on $servers servers), the block and the radius shipped"
remote=$(grep -m1 -oE 'Remote SQL: .*' <<<"$plan" | sed 's/^Remote SQL: //')
part1=$(grep -m1 -oE 'FROM public\.fp_b1_p[0-9]+' <<<"$remote" | sed 's/FROM public\.//')
for s in "${SHARDS[@]}"; do
	splan=$(nd_psql "$s" -c "SET enable_seqscan = off" -c "EXPLAIN $remote")
	if grep -q "Index" <<<"$splan"; then
		echo "$splan" | sed "s/^/# $s: /"
		break
	fi
done
ok $(grep -qE "Index Scan using ${part1}_sh_idx" <<<"$splan" && echo 0 || echo 1) "the shard answers with its hamming index"

# touched R CODE: how many shards ran a scan for simhash_layout_within at
# radius R (their statistics, reset before; the coordinator's connections
# closed after, so that the shards' backends exit and report them).
touched() {
	local s t=0 scans
	for s in "${SHARDS[@]}"; do nd_psql "$s" -c "SELECT pg_stat_reset()" >/dev/null; done
	c -c "SELECT count(*) FROM simhash_layout_within('fp', '$2', $1)" -c "SELECT postgres_fdw_disconnect_all()" >/dev/null
	sleep 0.5
	for s in "${SHARDS[@]}"; do
		scans=$(nd_psql "$s" -c "SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0)
		                         FROM pg_stat_user_tables WHERE relname ~ '^fp_b'")
		[ "$scans" -gt 0 ] && t=$((t + 1))
	done
	echo "$t"
}
worst=""
absent=$(c -c "SELECT ('x' || md5('absent1'))::bit(64)::bigint::simhash64")
for rc in "1 $Q" "3 $Q" "3 $absent" "3 0000000000000000"; do
	worst+="r${rc%% *}:$(touched $rc) "
done
all=$(touched 5 "$Q")
echo "# shards touched per query (radius:shards): $worst; radius 5: $all"
bad=0
for kv in $worst; do r=${kv%%:*}; r=${r#r}; [ "${kv#*:}" -le $((r + 1)) ] || bad=1; done
ok $([ "$bad" = 0 ] && [ "$all" = 4 ] && echo 0 || echo 1) \
	"the shards' statistics: radius r touches at most r + 1 shards; radius 5 (past the blocks) all four"

# --- KNN -----------------------------------------------------------------------------------
out=$(c -c "SELECT nd_blocks_knn_check()")
echo "# $out"
ok $([[ $out =~ ^checks=[1-9][0-9]*\ mismatches=0\ far=[1-9] ]] && echo 0 || echo 1) \
	"KNN 1, 10, 60 for every query code equals the single node (ties by id), answers past the radius included"

# Partitions under other names (renamed here): the search finds each by its
# bounds and still names it, read together with the others, same answers.
c -c "ALTER TABLE fp_b1_p5 RENAME TO fp_b1_p5x" -c "ALTER TABLE fp_b3_p6 RENAME TO fp_b3_p6x"
plan=$(c -c "EXPLAIN VERBOSE $(c -c "SELECT simhash_layout_within_sql('fp', '$Q', 3)")")
out=$(c -c "SELECT nd_blocks_radius_check(3)")
c -c "ALTER TABLE fp_b1_p5x RENAME TO fp_b1_p5" -c "ALTER TABLE fp_b3_p6x RENAME TO fp_b3_p6"
echo "# two partitions renamed: $out"
ok $([[ $out =~ mismatches=0\ rows=[1-9] ]] && grep -q 'Async Foreign Scan on public.fp_b1_p5x' <<<"$plan" &&
	grep -q 'Async Foreign Scan on public.fp_b3_p6x' <<<"$plan" &&
	[ "$(grep -c 'Async Foreign Scan' <<<"$plan")" = 4 ] && echo 0 || echo 1) \
	"partitions renamed: the search finds them by their bounds (4 async scans), same answers"

# --- the nightly clusters --------------------------------------------------------------------
out=$(c -c "SELECT nd_blocks_clusters_check()")
echo "# $out"
ok $([[ $out =~ ^missing=0\ extra=0\ rows=[1-9] ]] && echo 0 || echo 1) \
	"simhash_layout_clusters (each shard clusters its partitions, edges cross) equals simhash_clusters on the single node"

# --- writes through the coordinator --------------------------------------------------------
copy_counts() {
	c -c "SELECT (SELECT count(*) FROM fp_b1) || ' ' || (SELECT count(*) FROM fp_b2) || ' ' ||
	             (SELECT count(*) FROM fp_b3) || ' ' || (SELECT count(*) FROM fp_b4)"
}
deleted=$(c -c "SELECT simhash_layout_delete('fp', (SELECT array_agg(id) FROM fp_one WHERE id % 97 = 5))")
c -c "DELETE FROM fp_one WHERE id % 97 = 5"
# near copies of existing rows (2 bits flipped), new ids
c -c "CREATE TABLE fp_new AS SELECT id + $ROWS AS id, nd_flip(sh, 2, (id % 64)::int) AS sh FROM fp_one WHERE id % 41 = 7" \
	-c "INSERT INTO fp_one SELECT * FROM fp_new"
added=$(c -c "SELECT simhash_layout_insert('fp', 'SELECT id, sh FROM fp_new')")
want=$(c -c "SELECT count(*) FROM fp_one")
got=$(copy_counts)
echo "# deleted $deleted, inserted $added; copies $got, single node $want"
ok $([ "$deleted" -gt 0 ] && [ "$added" -gt 0 ] && [ "$got" = "$want $want $want $want" ] && echo 0 || echo 1) \
	"deletes and inserts through the coordinator reach every copy"
checked=$(c -c "SELECT string_agg(block || ':' || row_count || ':' || consistent, ' ' ORDER BY block) FROM simhash_layout_check('fp')")
plan=$(c -c "EXPLAIN VERBOSE SELECT count(*), sum(hashint8(id)) FROM fp_b2_p0 UNION ALL SELECT count(*), sum(hashint8(id)) FROM fp_b2_p1")
# a row written on a shard behind the coordinator's back: copy 2 differs
stray=$(c -c "SELECT s.srvname FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver
              WHERE f.ftrelid = 'fp_b2_p0'::regclass")
nd_psql "$stray" -c "INSERT INTO fp_b2_p0 VALUES (-7, '0000000000000001')"
broken=$(c -c "SELECT string_agg(block || ':' || consistent, ' ' ORDER BY block) FROM simhash_layout_check('fp')")
nd_psql "$stray" -c "DELETE FROM fp_b2_p0 WHERE id = -7"
echo "# simhash_layout_check: $checked; with a stray row in copy 2: $broken"
grep -m1 'Remote SQL' <<<"$plan" | sed 's/^ */# /'
ok $([ "$checked" = "1:$want:true 2:$want:true 3:$want:true 4:$want:true" ] &&
	[ "$broken" = "1:true 2:false 3:true 4:true" ] &&
	[ "$(grep -c 'Remote SQL: SELECT count(\*), sum(hashint8(id)) FROM public.fp_b2_p' <<<"$plan")" = 2 ] && echo 0 || echo 1) \
	"simhash_layout_check: every copy consistent, aggregated on the shards; a stray row makes its copy differ"
out=$(c -c "SELECT nd_blocks_radius_check(3)")
echo "# $out"
ok $([[ $out =~ mismatches=0\ rows=[1-9] ]] && echo 0 || echo 1) "after the writes: radius 0..3 equal to the single node"
out=$(c -c "SELECT nd_blocks_clusters_check()")
echo "# $out"
ok $([[ $out =~ ^missing=0\ extra=0\ rows=[1-9] ]] && echo 0 || echo 1) "after the writes: clusters equal to the single node"

# --- adding a shard: moving a partition ---------------------------------------------------------
before=$(c -c "SELECT count(*) FROM fp_b1_p0")
from=$(c -c "SELECT s.srvname FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver
             WHERE f.ftrelid = 'fp_b1_p0'::regclass")
moved=$(c -c "CALL simhash_layout_move_partition('fp', 1, 0, 's5')")
on_new=$(nd_psql s5 -c "SELECT count(*) FROM fp_b1_p0")
on_old=$(nd_psql "$from" -c "SELECT count(*) FROM fp_b1_p0")
now=$(c -c "SELECT s.srvname FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver
            WHERE f.ftrelid = 'fp_b1_p0'::regclass")
echo "# partition 0 of block 1: $before rows on $from; moved $moved; now on $now: $on_new rows there, $on_old left on $from"
ok $([ "$before" -gt 0 ] && [ "$moved" = "$before" ] && [ "$on_new" = "$before" ] && [ "$on_old" = 0 ] &&
	[ "$now" = s5 ] && [ "$(copy_counts)" = "$want $want $want $want" ] && echo 0 || echo 1) \
	"simhash_layout_move_partition: the rows go to the new shard, the coordinator reads them there, the old table is emptied"
# a move onto a shard whose table is not empty is refused (a stray row there)
to=$(c -c "SELECT s.srvname FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver
           WHERE f.ftrelid = 'fp_b3_p0'::regclass")
other=s1
[ "$to" = s1 ] && other=s2
nd_psql "$other" -c "INSERT INTO fp_b3_p0 VALUES (-1, '0000000000000000')"
refused=$(c -v VERBOSITY=verbose -c "CALL simhash_layout_move_partition('fp', 3, 0, '$other')" 2>&1 | head -1 || true)
nd_psql "$other" -c "DELETE FROM fp_b3_p0 WHERE id = -1"
echo "# moving block 3's partition 0 from $to onto $other, whose table has a row: $refused"
ok $([[ $refused =~ ERROR:\ +55000:\ table\ public.fp_b3_p0\ on\ server\ \"$other\"\ is\ not\ empty ]] &&
	[ "$(c -c "SELECT s.srvname FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver
	           WHERE f.ftrelid = 'fp_b3_p0'::regclass")" = "$to" ] && echo 0 || echo 1) \
	"a move onto a table that is not empty is refused (55000) and changes nothing"
out=$(c -c "SELECT nd_blocks_radius_check(3)")
knn=$(c -c "SELECT nd_blocks_knn_check()")
clu=$(c -c "SELECT nd_blocks_clusters_check()")
echo "# after the move: $out; $knn; $clu"
ok $([[ $out =~ mismatches=0\ rows=[1-9] ]] && [[ $knn =~ mismatches=0 ]] && [[ $clu =~ ^missing=0\ extra=0 ]] &&
	echo 0 || echo 1) "after the move: radius, KNN and clusters equal to the single node"

# --- the constraint across shards --------------------------------------------------------------
c -c "SELECT count(*) FROM simhash_layout_create('fx', ARRAY['s1','s2','s3','s4'], 4, 4)" >/dev/null
c -c "SELECT simhash_layout_insert('fx', 'SELECT i, (''x'' || md5(''fx'' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 2000) i')" >/dev/null
fx_counts() {
	c -c "SELECT (SELECT count(*) FROM fx_b1) || ' ' || (SELECT count(*) FROM fx_b2) || ' ' ||
	             (SELECT count(*) FROM fx_b3) || ' ' || (SELECT count(*) FROM fx_b4)"
}
before=$(fx_counts)
# 64 near copies of existing rows, one at a time: 1 to 3 bits flipped, in
# every block; each must be refused (23P01), whatever block they share.
refusals=$(c -c "DO \$\$
DECLARE
    refused int := 0;
    near simhash64;
BEGIN
    FOR j IN 0 .. 63 LOOP
        SELECT (sh::bigint # (1::bigint << j)
                # CASE WHEN j % 3 > 0 THEN 1::bigint << ((j + 17) % 64) ELSE 0 END
                # CASE WHEN j % 3 > 1 THEN 1::bigint << ((j + 40) % 64) ELSE 0 END)::simhash64
        INTO near FROM fx WHERE id = 1 + j * 31;
        BEGIN
            PERFORM simhash_layout_insert('fx', format('SELECT %s::bigint, %L::simhash64', 100000 + j, near));
        EXCEPTION WHEN exclusion_violation THEN
            refused := refused + 1;
        END;
    END LOOP;
    RAISE NOTICE 'refused=%', refused;
END
\$\$" 2>&1 | grep -oE 'refused=[0-9]+')
pair=$(c -c "SELECT simhash_layout_insert('fx', 'SELECT 200001::bigint, ''0123456789abcdef''::simhash64 UNION ALL SELECT 200002, ''0123456789abcdee''')" 2>&1 | head -1 || true)
far=$(c -c "SELECT simhash_layout_insert('fx', 'SELECT 300001::bigint, ''fedcba9876543210''::simhash64')")
after=$(fx_counts)
echo "# near copies refused: $refusals of 64; two new rows 1 bit apart: $pair; a far row: $far; copies $before -> $after"
ok $([ "$refusals" = "refused=64" ] && [[ $pair =~ conflicting\ key\ value\ violates\ exclusion\ constraint ]] &&
	[ "$far" = 1 ] && [ "$after" = "2001 2001 2001 2001" ] && [ "$before" = "2000 2000 2000 2000" ] && echo 0 || echo 1) \
	"the partitions' constraints hold for the whole layout: every near copy refused, in any block, and nothing left in any copy"
# Two transactions insert near copies at once: the second meets the first's
# uncommitted row on the shard where the copies meet, and is refused when
# the first commits.
c -c "BEGIN" -c "SELECT simhash_layout_insert('fx', 'SELECT 400001::bigint, ''a5a5a5a5a5a5a5a5''::simhash64')" \
	-c "SELECT pg_sleep(3)" -c "COMMIT" >/dev/null &
first=$!
sleep 1
second=$(c -c "SET lock_timeout = '20s'" -c "SELECT simhash_layout_insert('fx', 'SELECT 400002::bigint, ''a5a5a5a5a5a5a5a4''::simhash64')" 2>&1 | head -1 || true)
wait "$first"
kept=$(c -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM fx_b4 WHERE id IN (400001, 400002)")
echo "# concurrent near copies: the second insert got: $second; rows kept: $kept"
ok $([[ $second =~ exclusion\ constraint ]] && [ "$kept" = 400001 ] && echo 0 || echo 1) \
	"two concurrent transactions inserting near copies: the second is refused once the first commits"

# --- failures ------------------------------------------------------------------------------------
nd_node_stop s3 immediate
err=$(c -c "SELECT count(*) FROM simhash_layout_nearest('fp', ('x' || md5('absent1'))::bit(64)::bigint::simhash64, 10)" 2>&1 || true)
echo "# s3 stopped: $(head -1 <<<"$err")"
ok $(grep -q 'ERROR: .*"s3"' <<<"$err" && echo 0 || echo 1) "a stopped shard: the query fails with an error that names its server"
# a radius-0 query reads one partition of copy 1: one whose server is not s3
code=$(c -c "SELECT q FROM (SELECT sh AS q FROM fp_one ORDER BY id LIMIT 200) c
             JOIN pg_foreign_table f ON f.ftrelid::regclass::text =
                  substring(simhash_layout_within_sql('fp', q, 0) FROM 'FROM public\.(fp_b1_p[0-9]+)')
             JOIN pg_foreign_server s ON s.oid = f.ftserver
             WHERE s.srvname <> 's3' LIMIT 1")
got=$(c -c "SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM simhash_layout_within('fp', '$code', 0)" 2>&1 || true)
want=$(c -c "SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM fp_one WHERE sh = '$code'")
echo "# with s3 stopped, radius 0 around $code (a partition elsewhere): ${got:0:60} (single node: ${want:0:60})"
ok $([ -n "$code" ] && [ -n "$want" ] && [ "$got" = "$want" ] && echo 0 || echo 1) \
	"with a shard stopped, a query whose partitions are elsewhere still answers"
nd_node_start s3

# s2 fails over to its standby: promote it, point the server there.
lsn=$(nd_psql s2 -c "SELECT pg_current_wal_lsn()")
for ((i = 0; i < 600; i++)); do
	[ "$(nd_psql s2r -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && break
	sleep 0.1
done
nd_node_stop s2 immediate
nd_node_promote s2r
c -c "ALTER SERVER s2 OPTIONS (SET port '$(nd_port s2r)')" -c "SELECT postgres_fdw_disconnect_all()" >/dev/null
out=$(c -c "SELECT nd_blocks_radius_check(3)")
knn=$(c -c "SELECT nd_blocks_knn_check()")
echo "# s2 promoted: $out; $knn"
ok $([[ $out =~ mismatches=0\ rows=[1-9] ]] && [[ $knn =~ mismatches=0 ]] && echo 0 || echo 1) \
	"s2's standby promoted and the server repointed: radius and KNN equal to the single node"
added=$(c -c "SELECT simhash_layout_insert('fp', 'SELECT id + 1000000, sh FROM fp_new')")
c -c "INSERT INTO fp_one SELECT id + 1000000, sh FROM fp_new"
want=$(c -c "SELECT count(*) FROM fp_one")
clu=$(c -c "SELECT nd_blocks_clusters_check()")
echo "# inserted $added after the failover; copies $(copy_counts); $clu"
ok $([ "$(copy_counts)" = "$want $want $want $want" ] && [[ $clu =~ ^missing=0\ extra=0 ]] && echo 0 || echo 1) \
	"the promoted shard takes writes: every copy complete, clusters equal to the single node"
