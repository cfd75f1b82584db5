#!/usr/bin/env bash
# Packed copies against the block layout as made unpacked, in one
# throwaway cluster: a coordinator database and two shard databases reached
# through postgres_fdw over TCP on this machine (async, batches of 1,000),
# the same ROWS (default 1M) random codes in layout fp (simhash_shard_create
# as made) on shard_rows and layout fr (packed => true) on shard_packs, 4
# blocks and PARTS (default 16) partitions per copy.  Reported, every time
# the two layouts' ratio in the same run:
#   - the load through the coordinator (simhash_layout_insert), and then
#     simhash_shard_merge on the packed shard;
#   - bytes per row of each copy on the shards (tables and their indexes),
#     after the merges and a VACUUM;
#   - radius 3 (simhash_layout_within) for NQ (default 300) codes of rows
#     in the layout and NQ random codes, and KNN 10 (simhash_layout_nearest)
#     for NQ / 10 of each, the layouts interleaved code by code, answers
#     compared;
#   - deletes (simhash_layout_delete) of 1 id (ND, default 200), 100 ids
#     (ND / 20), 10,000 ids (2) and an id in no copy (20), interleaved,
#     and the copies consistent after them.
#
#   ROWS=1000000 PARTS=16 NQ=300 ND=200 bash test/bench/run_layout_packed.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ROWS=${ROWS:-1000000} PARTS=${PARTS:-16} NQ=${NQ:-300} ND=${ND:-200}

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
secs() { echo "$(date +%s.%N) - $1" | bc; }
q -c "CREATE DATABASE shard_rows" -c "CREATE DATABASE shard_packs"
q -d shard_rows -c "CREATE EXTENSION neardup" -c "SET client_min_messages = warning" \
  -c "SELECT simhash_shard_create('fp', 4, $PARTS)" >/dev/null
q -d shard_packs -c "CREATE EXTENSION neardup" -c "SET client_min_messages = warning" \
  -c "SELECT simhash_shard_create('fr', 4, $PARTS, packed => true)" >/dev/null
q -c "CREATE EXTENSION neardup" -c "CREATE EXTENSION postgres_fdw"
for db in shard_rows shard_packs; do
	q -c "CREATE SERVER $db FOREIGN DATA WRAPPER postgres_fdw
	      OPTIONS (dbname '$db', host '$PGHOST', port '$PGPORT', extensions 'neardup',
	               async_capable 'true', batch_size '1000')" \
	  -c "CREATE USER MAPPING FOR CURRENT_USER SERVER $db OPTIONS (user '$PGUSER', password '${PGPASSWORD:-}')"
done
q -c "SELECT count(*) FROM simhash_layout_create('fp', ARRAY['shard_rows'], 4, $PARTS)" >/dev/null
q -c "SELECT count(*) FROM simhash_layout_create('fr', ARRAY['shard_packs'], 4, $PARTS)" >/dev/null
q -c "CREATE TABLE src AS SELECT i AS id, ('x' || md5('r ' || i))::bit(64)::bigint::simhash64 AS sh
      FROM generate_series(1, $ROWS) i"
echo "# $ROWS random codes, 4 blocks, $PARTS partitions per copy; $(nproc) cores; $(date -u +%F)"
echo
echo "| step | as made (fp) s | packed (fr) s | packed / as made |"
echo "|---|---|---|---|"
s=$(date +%s.%N); q -c "SELECT simhash_layout_insert('fp', 'SELECT id, sh FROM src')" >/dev/null; tp=$(secs "$s")
s=$(date +%s.%N); q -c "SELECT simhash_layout_insert('fr', 'SELECT id, sh FROM src')" >/dev/null; tr=$(secs "$s")
echo "| load $ROWS rows through the coordinator | $tp | $tr | $(echo "scale=2; $tr / $tp" | bc) |"
s=$(date +%s.%N); q -d shard_packs -c "SELECT sum(moved) FROM simhash_shard_merge('fr')" >/dev/null; tm=$(secs "$s")
echo "| simhash_shard_merge on the packed shard | | $tm | $(echo "scale=2; $tm / $tp" | bc) of the load |"
# the hamming indexes' lists merged into runs, then VACUUM rounds, each
# after a write transaction: the pages the merges retired (and, on the
# packed shard, the recent tables' pages, empty after simhash_shard_merge)
# are recycled and the files' ends cut off
for db in shard_rows shard_packs; do
	q -d $db -c "SELECT hamming_merge(indexrelid) FROM pg_index WHERE indexrelid::regclass::text LIKE 'f%_sh_idx'" \
	  -c "VACUUM ANALYZE" >/dev/null
	for round in 1 2 3; do
		q -d $db -c "SELECT txid_current()" -c "VACUUM (PARALLEL 0)" >/dev/null
	done
done
echo
echo "| layout | copy | tables | indexes | bytes per row |"
echo "|---|---|---|---|---|"
for db in shard_rows shard_packs; do
	q -d $db -F ' | ' -c "
	WITH t AS (
	    SELECT substring(c.relname from '_b([0-9]+)_') AS copy, pg_table_size(c.oid) AS heap,
	           pg_indexes_size(c.oid) AS idx
	    FROM pg_class c WHERE c.relname ~ '^f[pr]_b[0-9]+_p[0-9]+(_recent|_packs)?\$' AND c.relkind = 'r')
	SELECT '| ' || CASE '$db' WHEN 'shard_rows' THEN 'as made' ELSE 'packed' END,
	       coalesce(copy, 'all'),
	       round(sum(heap)::numeric / $ROWS, 1), round(sum(idx)::numeric / $ROWS, 1),
	       round(sum(heap + idx)::numeric / $ROWS, 1) || ' |'
	FROM t GROUP BY ROLLUP (copy) ORDER BY copy NULLS LAST"
done
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
    PERFORM count(*) FROM simhash_layout_within('fp', '0000000000000000', 3);
    PERFORM count(*) FROM simhash_layout_within('fr', '0000000000000000', 3);
    FOR r IN SELECT * FROM qcodes ORDER BY k LOOP
        FOREACH l IN ARRAY CASE WHEN r.k % 2 = 0 THEN ARRAY['fp', 'fr'] ELSE ARRAY['fr', 'fp'] END LOOP
            s := clock_timestamp();
            SELECT count(*), md5(string_agg(id::text, ',' ORDER BY id)) INTO n, dg
            FROM simhash_layout_within(l::regclass, r.sh, 3);
            INSERT INTO q_res VALUES (l, r.k, 'radius 3', r.kind, extract(epoch FROM clock_timestamp() - s) * 1000, n, dg);
            IF r.k % 10 = 0 THEN
                s := clock_timestamp();
                SELECT count(*), md5(string_agg(id::text || ':' || distance, ',' ORDER BY distance, id)) INTO n, dg
                FROM simhash_layout_nearest(l::regclass, r.sh, 10);
                INSERT INTO q_res VALUES (l, r.k, 'KNN 10', r.kind, extract(epoch FROM clock_timestamp() - s) * 1000, n, dg);
            END IF;
        END LOOP;
    END LOOP;
END $$;
SQL
echo "| query | codes | as made p50 ms | packed p50 ms | packed / as made | as made p90 | packed p90 | rows found (each) |"
echo "|---|---|---|---|---|---|---|---|"
q -F ' | ' -c "
SELECT '| ' || what, kind,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fp')::numeric, 3),
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fr')::numeric, 3),
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fr') /
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fp'))::numeric, 2),
       round(percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fp')::numeric, 3),
       round(percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fr')::numeric, 3),
       sum(found) FILTER (WHERE layout = 'fp') || ' / ' || sum(found) FILTER (WHERE layout = 'fr') || ' |'
FROM q_res GROUP BY what, kind ORDER BY what DESC, kind"
echo "# answers that differ between the layouts (same code, same query): $(q -c "
SELECT count(*) FROM q_res a JOIN q_res b ON a.k = b.k AND a.what = b.what AND a.layout = 'fp' AND b.layout = 'fr'
WHERE a.digest IS DISTINCT FROM b.digest")"
echo
q -c "CREATE TABLE del_ids AS SELECT k, array_agg(id ORDER BY id) AS ids, count(*) AS n
      FROM (SELECT id, CASE WHEN rn <= $ND THEN rn
                            WHEN rn <= $ND + $ND / 20 * 100 THEN $ND + 1 + (rn - $ND - 1) / 100
                            ELSE $ND * 2 + (rn - $ND - $ND / 20 * 100 - 1) / 10000 END AS k
            FROM (SELECT id, row_number() OVER (ORDER BY hashint8(id)) AS rn FROM src) s
            WHERE rn <= $ND + $ND / 20 * 100 + 20000) x GROUP BY k" \
  -c "INSERT INTO del_ids SELECT (SELECT max(k) FROM del_ids) + j, ARRAY[-j]::bigint[], 0
      FROM generate_series(1, 20) j" \
  -c "CREATE TABLE del_res (layout text, n int, ms float8, deleted bigint)"
q <<'SQL'
DO $$
DECLARE
    s timestamptz;
    d bigint;
    r record;
    l text;
BEGIN
    FOR r IN SELECT * FROM del_ids ORDER BY k LOOP
        FOREACH l IN ARRAY CASE WHEN r.k % 2 = 0 THEN ARRAY['fp', 'fr'] ELSE ARRAY['fr', 'fp'] END LOOP
            s := clock_timestamp();
            d := simhash_layout_delete(l::regclass, r.ids);
            INSERT INTO del_res VALUES (l, r.n, extract(epoch FROM clock_timestamp() - s) * 1000, d);
        END LOOP;
    END LOOP;
END $$;
SQL
echo "| delete of | as made p50 ms | packed p50 ms | packed / as made | as made p90 | packed p90 | deletes | rows deleted (each) |"
echo "|---|---|---|---|---|---|---|---|"
q -F ' | ' -c "
SELECT '| ' || CASE WHEN n = 0 THEN '1 id in no copy' ELSE n || ' id' || CASE WHEN n > 1 THEN 's' ELSE '' END END,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fp')::numeric, 2),
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fr')::numeric, 2),
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fr') /
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fp'))::numeric, 2),
       round(percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fp')::numeric, 2),
       round(percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) FILTER (WHERE layout = 'fr')::numeric, 2),
       count(*) / 2, sum(deleted) FILTER (WHERE layout = 'fp') || ' / ' || sum(deleted) FILTER (WHERE layout = 'fr') || ' |'
FROM del_res GROUP BY n ORDER BY n = 0, n"
echo
echo "# after the deletes, copies consistent (fp, fr): $(q -c "SELECT bool_and(consistent) FROM simhash_layout_check('fp')"), $(q -c "SELECT bool_and(consistent) FROM simhash_layout_check('fr')"); ids in one and not the other: $(q -c "SELECT count(*) FROM ((SELECT id FROM fp_b3 EXCEPT SELECT id FROM fr_b3) UNION ALL (SELECT id FROM fr_b3 EXCEPT SELECT id FROM fp_b3)) d")"
SCRIPT
