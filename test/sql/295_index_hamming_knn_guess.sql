--
-- Nearest neighbours when the scan's first guess of their distance is
-- wrong.  A nearest-neighbour scan bounds the distances its steps keep
-- from the start, by the rows random codes would put near the query and
-- the rows it already holds (the pending list's); past the bound, flat
-- passes take over.  Dead near copies in the pending list make that guess
-- far too low (their rows do not come out), and a cluster of live codes at
-- 8-12 bits makes the first steps meet many entries beyond it: the answers
-- must still be a sequential scan's, through plain and index-only scans.
-- 700,000 rows: enough that the third query (no near copy, dead or live)
-- runs MIH steps past block distance 1 rather than a flat pass; the first
-- two take a flat pass after their first steps, which must find the rows
-- 8-12 bits away that those steps dropped (a mutation that lets the steps
-- run past the bound fails 10 of these answers).
--

CREATE TABLE knn_g (id int, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO knn_g
SELECT i, ('x' || md5('g ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 700000) i;
-- live codes 8 to 12 bits from the first query, the flipped bits spread
-- over every block
INSERT INTO knn_g
SELECT 100000 + k * 100 + j,
       (('x' || md5('q1'))::bit(64)::bigint
        # (SELECT bit_or(1::bigint << ((j * 7 + b * 13 + k) % 64))
           FROM generate_series(1, 8 + k) b))::simhash64
FROM generate_series(0, 4) k, generate_series(1, 30) j;
CREATE INDEX knn_g_sh ON knn_g USING hamming (sh) WITH (pending_limit = 64, background_merge = off);
VACUUM knn_g;

-- near copies of both queries, 1 and 2 bits away, into the pending list,
-- then deleted: dead, not vacuumed
INSERT INTO knn_g
SELECT 200000 + q * 100 + j,
       (('x' || md5('q' || q))::bit(64)::bigint # (1::bigint << (j % 64)) # (1::bigint << ((j * 5) % 64)))::simhash64
FROM generate_series(1, 2) q, generate_series(1, 40) j;
DELETE FROM knn_g WHERE id >= 200000;
SELECT pending_entries > 0 AS near_copies_pending, run_entries > 0 AS runs
FROM hamming_stats('knn_g_sh');

CREATE TABLE knn_g_q (qid int, q simhash64);
INSERT INTO knn_g_q
SELECT q, ('x' || md5('q' || q))::bit(64)::bigint::simhash64 FROM generate_series(1, 2) q
UNION ALL SELECT 3, ('x' || md5('elsewhere'))::bit(64)::bigint::simhash64;

-- the distances of the n nearest, through the index (plain or index-only)
-- or a sequential scan
CREATE FUNCTION pg_temp.nearest(q simhash64, n int, path text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    answer text;
    sql text := CASE path
        WHEN 'index-only' THEN 'SELECT string_agg(d::text, '','') FROM (SELECT sh <~> $1 AS d FROM knn_g ORDER BY sh <~> $1 LIMIT $2) s'
        ELSE 'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> $1 AS d FROM knn_g ORDER BY sh <~> $1 LIMIT $2) s' END;
BEGIN
    PERFORM set_config('enable_seqscan', (path = 'seq')::text, true);
    PERFORM set_config('enable_indexscan', (path <> 'seq')::text, true);
    PERFORM set_config('enable_indexonlyscan', (path = 'index-only')::text, true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE sql INTO answer USING q, n;
    RETURN answer;
END $$;

EXPLAIN (COSTS OFF) SELECT sh <~> '0000000000000000' AS d FROM knn_g ORDER BY sh <~> '0000000000000000' LIMIT 10;

SELECT qid, n, path, pg_temp.nearest(q, n, path) = pg_temp.nearest(q, n, 'seq') AS equal
FROM knn_g_q, unnest(ARRAY[1, 10, 40, 150, 400]) n, unnest(ARRAY['plain', 'index-only']) path
ORDER BY qid, n, path;
-- what the first query's ten nearest are: the live cluster, not the dead copies
SELECT pg_temp.nearest(q, 10, 'plain') FROM knn_g_q WHERE qid = 1;
