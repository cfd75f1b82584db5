--
-- Incremental runs: the pairs of the rows added since the last run, found
-- by index probes of the new rows only, together with the pairs kept from
-- earlier runs, are all the pairs of the table; re-clustering them merges
-- old clusters that a new row bridges.
--
CREATE FUNCTION code(i int) RETURNS bigint LANGUAGE sql IMMUTABLE
AS $$ SELECT ('x' || md5(i::text))::bit(64)::bigint $$;

-- Yesterday's table: ids 1 .. 1500.
--   1 .. 1400     random codes
--   1401 .. 1450  1400+k is base 20k with one bit flipped (old pairs)
--   1451 .. 1460  base 20k with 6 bits flipped: no pair with the base
--   1471 .. 1480  1450+k with one more bit flipped (old pairs)
CREATE TABLE t (id bigint PRIMARY KEY, sh simhash64);
INSERT INTO t SELECT i, code(i)::simhash64 FROM generate_series(1, 1400) i;
INSERT INTO t SELECT 1400 + k, (code(20 * k) # (1::bigint << 40))::simhash64 FROM generate_series(1, 50) k;
INSERT INTO t SELECT 1450 + k, (code(20 * k) # 63)::simhash64 FROM generate_series(1, 10) k;
INSERT INTO t SELECT 1470 + k, (code(20 * k) # 63 # (1::bigint << 50))::simhash64 FROM generate_series(1, 10) k;
CREATE INDEX t_sh ON t USING gin (sh);
ANALYZE t;

-- Yesterday's run: all pairs, kept in a table.
CREATE TABLE dup_pair (id_a bigint, id_b bigint, distance int, PRIMARY KEY (id_a, id_b));
INSERT INTO dup_pair
SELECT a.id, b.id, a.sh <~> b.sh FROM t a JOIN t b ON a.sh <~> b.sh <= 3 AND a.id < b.id;
SELECT count(*) AS old_pairs FROM dup_pair;
CREATE TABLE old_clusters AS SELECT * FROM dedup_clusters('SELECT id_a, id_b FROM dup_pair');
SELECT count(*) AS ids, count(DISTINCT cluster_id) AS clusters FROM old_clusters;

-- Today's rows: 1501 .. 2000.
--   1500+k (k <= 50)  base 20k with two bits flipped: pairs with the base
--                     and with the old copy 1400+k
--   1550+k (k <= 10)  base 20k with three bits flipped: within 3 of the
--                     base and of 1450+k, a bridge between two old clusters
--   1561 .. 1580      random; 1581 .. 1600 their copies, two bits off
--   1601 .. 2000      random
INSERT INTO t SELECT 1500 + k, (code(20 * k) # 3)::simhash64 FROM generate_series(1, 50) k;
INSERT INTO t SELECT 1550 + k, (code(20 * k) # 7)::simhash64 FROM generate_series(1, 10) k;
INSERT INTO t SELECT i, code(i)::simhash64 FROM generate_series(1561, 1580) i;
INSERT INTO t SELECT i + 20, (code(i) # (5::bigint << 20))::simhash64 FROM generate_series(1561, 1580) i;
INSERT INTO t SELECT i, code(i)::simhash64 FROM generate_series(1601, 2000) i;
ANALYZE t;

-- The incremental query: one index probe per new row, against every row.
-- A pair of two new rows is found from both ends; the primary key keeps it
-- once.
EXPLAIN (COSTS OFF)
SELECT least(n.id, o.id), greatest(n.id, o.id), n.sh <~> o.sh
FROM t n JOIN t o ON o.sh <~> n.sh <= 3 AND o.id <> n.id
WHERE n.id > 1500;
INSERT INTO dup_pair
SELECT least(n.id, o.id), greatest(n.id, o.id), n.sh <~> o.sh
FROM t n JOIN t o ON o.sh <~> n.sh <= 3 AND o.id <> n.id
WHERE n.id > 1500
ON CONFLICT DO NOTHING;

-- The full run, from scratch, for comparison.
CREATE TABLE full_pair AS
SELECT a.id AS id_a, b.id AS id_b, a.sh <~> b.sh AS distance
FROM t a JOIN t b ON a.sh <~> b.sh <= 3 AND a.id < b.id;
-- Incremental pairs plus old pairs are the full run's pairs.
SELECT (SELECT count(*) FROM full_pair) AS full_pairs,
       (SELECT count(*) FROM dup_pair) AS kept_pairs,
       (SELECT count(*) FROM (TABLE full_pair EXCEPT TABLE dup_pair) x) AS missing,
       (SELECT count(*) FROM (TABLE dup_pair EXCEPT TABLE full_pair) x) AS extra;

-- The same through simhash_pairs_since(): only the new pairs, each once.
CREATE TABLE since_pair AS SELECT * FROM simhash_pairs_since('t', 'id', 'sh', 1500);
SELECT count(*) AS new_pairs, count(DISTINCT (id_a, id_b)) AS distinct_pairs,
       bool_and(id_a < id_b) AS ordered, bool_and(id_b > 1500) AS all_new
FROM since_pair;
SELECT (SELECT count(*) FROM (SELECT * FROM full_pair WHERE id_b > 1500 EXCEPT TABLE since_pair) x) AS missing,
       (SELECT count(*) FROM (TABLE since_pair EXCEPT SELECT * FROM full_pair WHERE id_b > 1500) x) AS extra;
-- since NULL: every pair, the full run (by simhash_pairs).
SELECT (SELECT count(*) FROM simhash_pairs_since('t', 'id', 'sh', NULL)) AS pairs,
       (SELECT count(*) FROM (TABLE full_pair EXCEPT SELECT * FROM simhash_pairs_since('t', 'id', 'sh', NULL)) x) AS missing;
-- max_distance outside 0..15: 22023, as simhash_pairs() says it.
\set VERBOSITY terse
SELECT count(*) FROM simhash_pairs_since('t', 'id', 'sh', NULL, -1);
SELECT count(*) FROM simhash_pairs_since('t', 'id', 'sh', 1500, 16);
\set VERBOSITY default
-- Other radii agree with the self-join too.
SELECT r,
       (SELECT count(*) FROM simhash_pairs_since('t', 'id', 'sh', 1500, r)) AS since_pairs,
       (SELECT count(*) FROM t a JOIN t b ON a.sh <~> b.sh <= r AND a.id < b.id WHERE b.id > 1500) AS join_pairs
FROM unnest(ARRAY[0, 1, 2, 5, 15]) r ORDER BY r;
-- Which search it runs: index probes for few new rows (below 2% of the
-- table), simhash_pairs() for many, for all, or without an index; the same
-- pairs either way.  The index's scan count in this transaction tells.
BEGIN;
INSERT INTO t SELECT 3000 + i, (code(i) # (1::bigint << 33))::simhash64 FROM generate_series(1, 20) i;
CREATE TEMP TABLE probes (since bigint, pairs bigint, index_scans bigint);
CREATE FUNCTION gin_scans() RETURNS bigint LANGUAGE sql
AS $f$ SELECT pg_stat_get_xact_numscans('t_sh'::regclass) $f$;
DO $d$
DECLARE
    s bigint;
    before bigint;
    n bigint;
BEGIN
    FOREACH s IN ARRAY ARRAY[1500, 2990, 3000, 3010] LOOP
        before := gin_scans();
        SELECT count(*) INTO n FROM simhash_pairs_since('t', 'id', 'sh', s);
        INSERT INTO probes VALUES (s, n, gin_scans() - before);
    END LOOP;
END
$d$;
SELECT p.since, p.pairs,
       (SELECT count(*) FROM t a JOIN t b ON a.sh <~> b.sh <= 3 AND a.id < b.id WHERE b.id > p.since) AS join_pairs,
       p.index_scans > 0 AS probed_the_index
FROM probes p ORDER BY p.since;
DROP INDEX t_sh;
SELECT count(*) AS pairs_without_index FROM simhash_pairs_since('t', 'id', 'sh', 3000);
ROLLBACK;

-- A later run with nothing new finds nothing.
SELECT count(*) FROM simhash_pairs_since('t', 'id', 'sh', 2000);

-- Re-clustering all kept pairs: today's rows join yesterday's clusters,
-- and each bridge merges two of them.
CREATE TABLE new_clusters AS SELECT * FROM dedup_clusters('SELECT id_a, id_b FROM dup_pair');
SELECT count(*) AS ids, count(DISTINCT cluster_id) AS clusters FROM new_clusters;
SELECT cluster_id, array_agg(id ORDER BY id) AS ids
FROM new_clusters WHERE cluster_id IN (20, 40, 200, 220, 1000, 1561)
GROUP BY cluster_id ORDER BY cluster_id;
-- Old clusters merged: yesterday's cluster ids now in another's cluster.
SELECT o.cluster_id AS old_cluster, n.cluster_id AS now_in
FROM (SELECT DISTINCT cluster_id FROM old_clusters) o
JOIN new_clusters n ON n.id = o.cluster_id
WHERE n.cluster_id <> o.cluster_id ORDER BY 1;
-- Same as clustering the full run's pairs.
SELECT count(*) AS differences FROM (
    (TABLE new_clusters EXCEPT SELECT * FROM dedup_clusters('SELECT id_a, id_b FROM full_pair'))
    UNION ALL
    (SELECT * FROM dedup_clusters('SELECT id_a, id_b FROM full_pair') EXCEPT TABLE new_clusters)) x;

-- The same with MinHash band keys: the band join restricted to the new
-- rows, with the kept pairs, gives the full run's pairs.  Texts: 40 bases
-- of 50 words; ids 1 .. 400 old, 401 .. 600 new; the edits of a base
-- (last word changed) are spread over both.
CREATE TABLE txt (id int PRIMARY KEY, body text, sig int4[]);
INSERT INTO txt
SELECT i, (SELECT string_agg(CASE WHEN w = 50 AND i > 40 THEN 'edit' || i ELSE md5((i % 40) || '/' || w) END, ' ' ORDER BY w)
           FROM generate_series(1, 50) w), NULL
FROM generate_series(1, 600) i WHERE i <= 40 OR i % 7 = 0 OR i % 11 = 0;
UPDATE txt SET sig = minhash(body);
CREATE INDEX ON txt USING gin (minhash_bands(sig, 16, 8));
ANALYZE txt;
CREATE TABLE txt_pair (id_a int, id_b int, PRIMARY KEY (id_a, id_b));
INSERT INTO txt_pair
SELECT a.id, b.id FROM txt a JOIN txt b
  ON minhash_bands(b.sig, 16, 8) && minhash_bands(a.sig, 16, 8) AND a.id < b.id
WHERE a.id <= 400 AND b.id <= 400 AND minhash_jaccard(a.sig, b.sig) >= 0.8;
SELECT count(*) AS old_pairs FROM txt_pair;
INSERT INTO txt_pair
SELECT least(n.id, o.id), greatest(n.id, o.id) FROM txt n JOIN txt o
  ON minhash_bands(o.sig, 16, 8) && minhash_bands(n.sig, 16, 8) AND o.id <> n.id
WHERE n.id > 400 AND minhash_jaccard(n.sig, o.sig) >= 0.8
ON CONFLICT DO NOTHING;
CREATE TABLE txt_full AS
SELECT a.id AS id_a, b.id AS id_b FROM txt a JOIN txt b
  ON minhash_bands(b.sig, 16, 8) && minhash_bands(a.sig, 16, 8) AND a.id < b.id
WHERE minhash_jaccard(a.sig, b.sig) >= 0.8;
SELECT (SELECT count(*) FROM txt_full) AS full_pairs,
       (SELECT count(*) FROM (TABLE txt_full EXCEPT TABLE txt_pair) x) AS missing,
       (SELECT count(*) FROM (TABLE txt_pair EXCEPT TABLE txt_full) x) AS extra;
-- Clusters: one per base text (i % 40), each with all of its edits.
SELECT count(DISTINCT cluster_id) AS clusters,
       count(*) AS ids,
       count(DISTINCT (cluster_id, id % 40)) AS base_cluster_combinations
FROM dedup_clusters('SELECT id_a, id_b FROM txt_pair');
DROP TABLE txt, txt_pair, txt_full;

-- Errors.
\set VERBOSITY sqlstate
SELECT * FROM simhash_pairs_since('t', 'id', NULL, 1500);
SELECT * FROM simhash_pairs_since('t', 'id', 'sh', 1500, NULL);
SELECT * FROM simhash_pairs_since('t', 'nope', 'sh', 1500);
SELECT * FROM simhash_pairs_since('t', 'id', 'id', 1500);
SELECT * FROM simhash_pairs_since('t', 'sh', 'sh', 1500);
SELECT * FROM simhash_pairs_since('t', 'id', 'nope', 1500);
\set VERBOSITY default
SELECT * FROM simhash_pairs_since('t', 'id', 'id', 1500);

DROP TABLE t, dup_pair, full_pair, since_pair, old_clusters, new_clusters;
DROP FUNCTION code(int);
