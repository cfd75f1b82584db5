#!/usr/bin/env bash
# Packed copies against the block layout as made, in one throwaway
# cluster: a coordinator database and a shard database per layout, reached
# through postgres_fdw over TCP on this machine (async, batches of 1,000),
# the same ROWS (default 1M) random codes in each, 4 blocks and PARTS
# (default 16) partitions per copy:
#   fp  simhash_shard_create as made (unpacked);
#   fr  packed => true;
#   fs  packed => true, far_searches => false (copy 1's index of one table).
# Reported, every figure beside fp's from the same run:
#   - the load through the coordinator (simhash_layout_insert), and
#     simhash_shard_merge on the packed shards;
#   - bytes per row of each copy on the shards (tables and their indexes),
#     after the merges and VACUUM rounds, and with the indexes rebuilt;
#   - radius 3 (simhash_layout_within) for NQ (default 300) codes of rows
#     in the layout and NQ random codes, radius 4 and KNN 10
#     (simhash_layout_nearest) for NQ / 10 of each, the layouts in turn
#     code by code, answers compared;
#   - deletes (simhash_layout_delete) of 1 id (ND, default 200), 100 ids
#     (ND / 20), 10,000 ids (2) and an id in no copy (20), in turn, and the
#     copies consistent after them.
#
#   ROWS=1000000 PARTS=16 NQ=300 ND=200 bash test/bench/run_layout_packed.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ROOT ROWS=${ROWS:-1000000} PARTS=${PARTS:-16} NQ=${NQ:-300} ND=${ND:-200}

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
secs() { echo "$(date +%s.%N) - $1" | bc; }
declare -A opts=([fp]="" [fr]=", packed => true" [fs]=", packed => true, far_searches => false")
layouts="fp fr fs"
q -c "CREATE EXTENSION neardup" -c "CREATE EXTENSION postgres_fdw" \
  -c "CREATE TABLE layouts (l text PRIMARY KEY, what text)" \
  -c "INSERT INTO layouts VALUES ('fp', 'as made'), ('fr', 'packed'), ('fs', 'packed, copy 1 one table')"
for l in $layouts; do
	q -c "CREATE DATABASE shard_$l"
	q -d shard_$l -c "CREATE EXTENSION neardup" -c "SET client_min_messages = warning" \
	  -c "SELECT simhash_shard_create('$l', 4, $PARTS${opts[$l]})" >/dev/null
	q -c "CREATE SERVER shard_$l FOREIGN DATA WRAPPER postgres_fdw
	      OPTIONS (dbname 'shard_$l', host '$PGHOST', port '$PGPORT', extensions 'neardup',
	               async_capable 'true', batch_size '1000')" \
	  -c "CREATE USER MAPPING FOR CURRENT_USER SERVER shard_$l OPTIONS (user '$PGUSER', password '${PGPASSWORD:-}')" \
	  -c "SELECT count(*) FROM simhash_layout_create('$l', ARRAY['shard_$l'], 4, $PARTS)" >/dev/null
done
q -c "CREATE TABLE src AS SELECT i AS id, ('x' || md5('r ' || i))::bit(64)::bigint::simhash64 AS sh
      FROM generate_series(1, $ROWS) i"
echo "# $ROWS random codes, 4 blocks, $PARTS partitions per copy; $(nproc) cores; $(date -u +%F)"
echo
echo "| layout | load through the coordinator, s | / as made | simhash_shard_merge, s |"
echo "|---|---|---|---|"
for l in $layouts; do
	s=$(date +%s.%N); q -c "SELECT simhash_layout_insert('$l', 'SELECT id, sh FROM src')" >/dev/null; t=$(secs "$s")
	[ "$l" = fp ] && t0=$t
	m=""
	if [ "$l" != fp ]; then
		s=$(date +%s.%N); q -d shard_$l -c "SELECT sum(moved) FROM simhash_shard_merge('$l')" >/dev/null; m=$(secs "$s")
	fi
	echo "| $(q -c "SELECT what FROM layouts WHERE l = '$l'") | $t | $(echo "scale=2; $t / $t0" | bc) | $m |"
done
# bytes per row of each copy on the shards; $1 says when
report_bytes() {
	echo
	echo "| layout ($1) | copy 1 | copy 2 | copy 3 | copy 4 | all |"
	echo "|---|---|---|---|---|---|"
	for l in $layouts; do
		q -d shard_$l -F ' | ' -c "
		WITH t AS (
		    SELECT substring(c.relname from '_b([0-9]+)_')::int AS copy, pg_table_size(c.oid) + pg_indexes_size(c.oid) AS bytes
		    FROM pg_class c WHERE c.relname ~ '^$l\\_b[0-9]+_p[0-9]+(_recent|_packs)?\$' AND c.relkind = 'r')
		SELECT '| $(q -c "SELECT what FROM layouts WHERE l = '$l'")',
		       round(sum(bytes) FILTER (WHERE copy = 1)::numeric / $ROWS, 1), round(sum(bytes) FILTER (WHERE copy = 2)::numeric / $ROWS, 1),
		       round(sum(bytes) FILTER (WHERE copy = 3)::numeric / $ROWS, 1), round(sum(bytes) FILTER (WHERE copy = 4)::numeric / $ROWS, 1),
		       round(sum(bytes)::numeric / $ROWS, 1) || ' |'
		FROM t"
	done
}
# the hamming indexes' lists merged into runs, then VACUUM rounds, each
# after a write transaction: the pages the merges retired (and, on the
# packed shards, the recent tables' pages, empty after simhash_shard_merge)
# are recycled and the files' ends cut off
for l in $layouts; do
	q -d shard_$l -c "SELECT hamming_merge(indexrelid) FROM pg_index WHERE indexrelid::regclass::text LIKE 'f%_sh_idx'" \
	  -c "VACUUM ANALYZE" >/dev/null
	for round in 1 2 3; do
		q -d shard_$l -c "SELECT txid_current()" -c "VACUUM (PARALLEL 0)" >/dev/null
	done
done
report_bytes "as loaded, merged, vacuumed"
for l in $layouts; do
	q -d shard_$l -c "REINDEX DATABASE shard_$l" -c "VACUUM ANALYZE" >/dev/null
done
report_bytes "indexes rebuilt"
echo
# query codes: NQ of rows in the layouts, NQ random (near nothing)
q -c "CREATE TABLE qcodes AS
      SELECT g AS k, CASE WHEN g <= $NQ THEN 'row' ELSE 'random' END AS kind,
             CASE WHEN g <= $NQ THEN (SELECT sh FROM src WHERE id = 1 + (hashint8(g) & 2147483647) % $ROWS)
                  ELSE ('x' || md5('q ' || g))::bit(64)::bigint::simhash64 END AS sh
      FROM generate_series(1, 2 * $NQ) g"
q <<'SQL'
CREATE TABLE q_res (layout text, k int, what text, kind text, ms float8, found bigint, digest text);
DO $$
DECLARE
    s timestamptz;
    r record;
    n bigint;
    dg text;
    l text;
BEGIN
    -- open the connections first
    FOR l IN SELECT layouts.l FROM layouts LOOP
        PERFORM count(*) FROM simhash_layout_within(l::regclass, '0000000000000000', 3);
    END LOOP;
    FOR r IN SELECT * FROM qcodes ORDER BY k LOOP
        -- the layouts in turn, the first one changing from code to code
        FOR l IN SELECT layouts.l FROM layouts ORDER BY (hashint8(r.k) # hashtext(layouts.l)) LOOP
            s := clock_timestamp();
            SELECT count(*), md5(string_agg(id::text, ',' ORDER BY id)) INTO n, dg
            FROM simhash_layout_within(l::regclass, r.sh, 3);
            INSERT INTO q_res VALUES (l, r.k, 'radius 3', r.kind, extract(epoch FROM clock_timestamp() - s) * 1000, n, dg);
            IF r.k % 10 = 0 THEN
                s := clock_timestamp();
                SELECT count(*), md5(string_agg(id::text, ',' ORDER BY id)) INTO n, dg
                FROM simhash_layout_within(l::regclass, r.sh, 4);
                INSERT INTO q_res VALUES (l, r.k, 'radius 4', r.kind, extract(epoch FROM clock_timestamp() - s) * 1000, n, dg);
                s := clock_timestamp();
                SELECT count(*), md5(string_agg(id::text || ':' || distance, ',' ORDER BY distance, id)) INTO n, dg
                FROM simhash_layout_nearest(l::regclass, r.sh, 10);
                INSERT INTO q_res VALUES (l, r.k, 'KNN 10', r.kind, extract(epoch FROM clock_timestamp() - s) * 1000, n, dg);
            END IF;
        END LOOP;
    END LOOP;
END $$;
SQL
echo "| query | codes | layout | p50 ms | p90 ms | p50 / as made's | rows found |"
echo "|---|---|---|---|---|---|---|"
q -F ' | ' -c "
WITH p AS (
    SELECT what, kind, layout, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
           percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS p90, sum(found) AS found
    FROM q_res GROUP BY what, kind, layout)
SELECT '| ' || p.what, p.kind, l.what, round(p.p50::numeric, 3), round(p.p90::numeric, 3),
       round((p.p50 / b.p50)::numeric, 2), p.found || ' |'
FROM p JOIN layouts l ON l.l = p.layout JOIN p b ON b.what = p.what AND b.kind = p.kind AND b.layout = 'fp'
ORDER BY p.what DESC, p.kind, l.l"
echo "# answers that differ from as made's (same code, same query): $(q -c "
SELECT count(*) FROM q_res a JOIN q_res b ON a.k = b.k AND a.what = b.what AND a.layout = 'fp' AND b.layout <> 'fp'
WHERE a.digest IS DISTINCT FROM b.digest")"
echo
q -v nd="$ND" -f "$ROOT/test/bench/layout_delete_ids.sql"
q <<'SQL'
DO $$
DECLARE
    s timestamptz;
    d bigint;
    r record;
    l text;
BEGIN
    FOR r IN SELECT * FROM del_ids ORDER BY k LOOP
        FOR l IN SELECT layouts.l FROM layouts ORDER BY (hashint8(r.k) # hashtext(layouts.l)) LOOP
            s := clock_timestamp();
            d := simhash_layout_delete(l::regclass, r.ids);
            INSERT INTO del_res VALUES (l, r.n, extract(epoch FROM clock_timestamp() - s) * 1000, d);
        END LOOP;
    END LOOP;
END $$;
SQL
echo "| delete of | layout | p50 ms | p90 ms | p50 / as made's | deletes | rows deleted |"
echo "|---|---|---|---|---|---|---|"
q -F ' | ' -c "
WITH p AS (
    SELECT n, layout, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
           percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS p90, count(*) AS deletes, sum(deleted) AS deleted
    FROM del_res GROUP BY n, layout)
SELECT '| ' || CASE WHEN p.n = 0 THEN '1 id in no copy' ELSE p.n || ' id' || CASE WHEN p.n > 1 THEN 's' ELSE '' END END,
       l.what, round(p.p50::numeric, 2), round(p.p90::numeric, 2), round((p.p50 / b.p50)::numeric, 2),
       p.deletes, p.deleted || ' |'
FROM p JOIN layouts l ON l.l = p.layout JOIN p b ON b.n = p.n AND b.layout = 'fp'
ORDER BY p.n = 0, p.n, l.l"
echo
for l in $layouts; do
	echo "# $l after the deletes: copies consistent $(q -c "SELECT bool_and(consistent) FROM simhash_layout_check('$l')"), rows $(q -c "SELECT count(*) FROM ${l}_b3"), ids not in fp's copy 3 or missing from it: $(q -c "SELECT count(*) FROM ((SELECT id FROM fp_b3 EXCEPT SELECT id FROM ${l}_b3) UNION ALL (SELECT id FROM ${l}_b3 EXCEPT SELECT id FROM fp_b3)) d")"
done
SCRIPT
