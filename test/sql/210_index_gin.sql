--
-- GIN radius search (simhash64_gin_ops): a bitmap scan of the index must
-- return exactly what a sequential scan returns, for every radius, every
-- `blocks` option, and through pending-list inserts, VACUUM and REINDEX.
--
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'simhash64_gin_ops';
SELECT opcname, opcdefault FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'gin')
  AND opcintype = 'simhash64'::regtype;

CREATE TABLE g (id int, sh simhash64);
-- Random codes.
INSERT INTO g SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64
FROM generate_series(1, 3000) i;
-- Near-duplicates: a copy of every 10th code with up to (id/10) % 6 bits
-- flipped at pseudo-random positions.
CREATE FUNCTION flip_mask(seed int, d int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(bit_or(1::bigint << (get_byte(decode(md5(seed || '/' || k), 'hex'), 0) & 63)), 0)
    FROM generate_series(1, d) k
$$;
INSERT INTO g SELECT 10000 + id, (sh::bigint # flip_mask(id, (id / 10) % 6))::simhash64
FROM g WHERE id % 10 = 0;
-- Every single-bit and adjacent two-bit flip of three codes: near the query,
-- in every block, and in the bits a key leaves out (the last bits of each
-- block), which only the recheck can tell apart.
INSERT INTO g SELECT 20000 + 1000 * b + k, (sh::bigint # (1::bigint << k))::simhash64
FROM g, generate_series(0, 63) k, (VALUES (1), (2), (3)) v(b) WHERE g.id = 7 * b;
INSERT INTO g SELECT 20100 + 1000 * b + k, (sh::bigint # (3::bigint << k))::simhash64
FROM g, generate_series(0, 62) k, (VALUES (1), (2), (3)) v(b) WHERE g.id = 7 * b;
-- Exact duplicates, all-zero and all-one codes, NULLs.
INSERT INTO g SELECT 30000 + i, ('x' || md5('dup'))::bit(64)::bigint::simhash64 FROM generate_series(1, 200) i;
INSERT INTO g SELECT 31000 + i, '0000000000000000' FROM generate_series(1, 5) i;
INSERT INTO g SELECT 32000 + i, 'ffffffffffffffff' FROM generate_series(1, 5) i;
INSERT INTO g SELECT 33000 + i, NULL FROM generate_series(1, 20) i;
ANALYZE g;

-- Query codes: rows with planted near-duplicates, the flipped codes' bases,
-- the duplicated code, zero, all ones, and codes not in the table.
CREATE TABLE queries AS
SELECT id AS qid, sh AS q FROM g WHERE id <= 300 AND id % 10 = 0
UNION ALL SELECT id, sh FROM g WHERE id IN (7, 14, 21)
UNION ALL SELECT -1, ('x' || md5('dup'))::bit(64)::bigint::simhash64
UNION ALL SELECT -2, '0000000000000000'
UNION ALL SELECT -3, 'ffffffffffffffff'
UNION ALL SELECT -10 - i, ('x' || md5('q' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 5) i;
-- (64 and more, the whole table, are checked apart below.)
CREATE TABLE radii AS SELECT unnest(ARRAY[-1, 0, 1, 2, 3, 4, 5, 6, 12, 20]) AS r;

-- The truth, from a sequential scan whatever indexes exist.
CREATE FUNCTION seq_result() RETURNS TABLE (qid int, r int, id int)
LANGUAGE sql STABLE
SET enable_indexscan = off SET enable_bitmapscan = off SET enable_indexonlyscan = off AS $$
    SELECT q.qid, rr.r, g.id FROM queries q CROSS JOIN radii rr JOIN g ON g.sh <~> q.q <= rr.r
$$;
-- The same through the index (within() takes radius -1, which
-- hamming_ball() refuses: the planner clamps the ball and rechecks).
CREATE FUNCTION gin_result() RETURNS TABLE (qid int, r int, id int)
LANGUAGE sql STABLE SET enable_seqscan = off AS $$
    SELECT q.qid, rr.r, x.id FROM queries q CROSS JOIN radii rr
    CROSS JOIN LATERAL (SELECT g.id FROM g WHERE within(g.sh, q.q, rr.r)) x
$$;
-- Pairs found, and pairs only one side found (both must be 0).
CREATE FUNCTION compare() RETURNS TABLE (pairs bigint, missing bigint, extra bigint)
LANGUAGE sql STABLE AS $$
    WITH s AS MATERIALIZED (SELECT * FROM seq_result()),
         i AS MATERIALIZED (SELECT * FROM gin_result())
    SELECT (SELECT count(*) FROM s),
           (SELECT count(*) FROM (TABLE s EXCEPT ALL TABLE i) m),
           (SELECT count(*) FROM (TABLE i EXCEPT ALL TABLE s) e)
$$;

-- What the data holds: rows within each radius, over all queries.
SELECT r, count(id) AS pairs FROM seq_result() GROUP BY r ORDER BY r;

-- Plans without what only some majors print: the nodes the enable_*
-- settings disable and an index's searches (18), buffers (shown under
-- ANALYZE by default from 18), row counts as averages ("rows=1.00", 18).
CREATE FUNCTION pg_temp.explain(q text, with_analyze bool DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF, BUFFERS OFF'
        || CASE WHEN with_analyze THEN ', ANALYZE, TIMING OFF, SUMMARY OFF' ELSE '' END || ') ' || q LOOP
        CONTINUE WHEN line ~ '^\s*(Disabled: true|Index Searches: \d+)$';
        RETURN NEXT regexp_replace(line, 'rows=(\d+)\.00 ', 'rows=\1 ', 'g');
    END LOOP;
END
$$;

-- The default operator class and options.
CREATE INDEX g_gin ON g USING gin (sh);
SELECT pg_get_indexdef('g_gin'::regclass);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM g WHERE sh <@ hamming_ball('0123456789abcdef', 3);
SELECT * FROM pg_temp.explain($$
SELECT q.qid, x.id FROM queries q
CROSS JOIN LATERAL (SELECT g.id FROM g WHERE g.sh <@ hamming_ball(q.q, 2)) x$$);
RESET enable_seqscan;
SELECT * FROM compare();

-- Other block counts, including 2 (32-bit blocks: from radius 6 on, one
-- whole table is read instead of more than 4096 probes; with 3 blocks that
-- happens here at radii 12 and 20, with 4 at 20) and 5 (uneven blocks of 13
-- and 12 bits).
DROP INDEX g_gin;
CREATE INDEX g_gin ON g USING gin (sh simhash64_gin_ops (blocks = 2));
SELECT pg_get_indexdef('g_gin'::regclass);
SELECT * FROM compare();
DROP INDEX g_gin;
CREATE INDEX g_gin ON g USING gin (sh simhash64_gin_ops (blocks = 3));
SELECT * FROM compare();
DROP INDEX g_gin;
CREATE INDEX g_gin ON g USING gin (sh simhash64_gin_ops (blocks = 5));
SELECT * FROM compare();
DROP INDEX g_gin;
CREATE INDEX g_gin ON g USING gin (sh simhash64_gin_ops (blocks = 8));
SELECT * FROM compare();
DROP INDEX g_gin;
CREATE INDEX g_gin ON g USING gin (sh simhash64_gin_ops (blocks = 16));
SELECT * FROM compare();
DROP INDEX g_gin;

-- Out-of-range options.
CREATE INDEX g_bad ON g USING gin (sh simhash64_gin_ops (blocks = 1));
CREATE INDEX g_bad ON g USING gin (sh simhash64_gin_ops (blocks = 17));
CREATE INDEX g_bad ON g USING gin (sh simhash64_gin_ops (width = 4));

-- Radius 0 probes one table; the neighbours that differ only in the two bits
-- its keys leave out (the last two) are candidates, removed by the recheck.
CREATE INDEX g_gin ON g USING gin (sh);
SET enable_seqscan = off;
SELECT sh AS sh7 FROM g WHERE id = 7 \gset
SELECT * FROM pg_temp.explain(format($$
SELECT id FROM g WHERE sh <@ hamming_ball(%L, 0)$$, :'sh7'), true);
SELECT id, sh FROM g WHERE sh <@ hamming_ball((SELECT sh FROM g WHERE id = 7), 0);
SELECT sh <~> (SELECT sh FROM g WHERE id = 7) AS d, count(*), min(id), max(id)
FROM g WHERE sh <@ hamming_ball((SELECT sh FROM g WHERE id = 7), 2) GROUP BY 1 ORDER BY 1;

-- Negative and oversized radii are refused (22023); radius 64 holds every
-- code; NULLs are never in a ball.
SELECT count(*) FROM g WHERE sh <@ hamming_ball('0123456789abcdef', -1);
SELECT count(*) FROM g WHERE sh <@ hamming_ball('0123456789abcdef', 64);
SELECT count(*) FROM g WHERE sh <@ hamming_ball('0123456789abcdef', 100);
SELECT count(*) FROM g WHERE sh IS NOT NULL;

-- The commuted spelling, and equality (strategy 2), use the index too.
EXPLAIN (COSTS OFF)
SELECT id FROM g WHERE hamming_ball('0123456789abcdef', 3) @> sh;
SELECT count(*) FROM g WHERE hamming_ball((SELECT sh FROM g WHERE id = 14), 2) @> sh;
EXPLAIN (COSTS OFF)
SELECT id FROM g WHERE sh = '0000000000000000';
SELECT count(*) FROM g WHERE sh = '0000000000000000';
SELECT count(*) FROM g WHERE sh = ('x' || md5('dup'))::bit(64)::bigint::simhash64;
-- 21's neighbours that differ in the last two bits share its key: the
-- recheck removes them.
SELECT sh AS sh21 FROM g WHERE id = 21 \gset
SELECT * FROM pg_temp.explain(format($$
SELECT id FROM g WHERE sh = %L$$, :'sh21'), true);
SELECT id FROM g WHERE sh = (SELECT sh FROM g WHERE id = 21);
RESET enable_seqscan;

-- A query ball as a parameter, with a generic plan.
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
PREPARE near(simhash64, int) AS SELECT id FROM g WHERE sh <@ hamming_ball($1, $2) ORDER BY id;
EXPLAIN (COSTS OFF) EXECUTE near('0123456789abcdef', 3);
SELECT sh AS q250 FROM g WHERE id = 250 \gset
EXECUTE near(:'q250', 5);
SELECT id, sh <~> :'q250' AS d FROM g WHERE sh <~> :'q250' <= 5 ORDER BY id;
EXECUTE near('0000000000000000', 2);
EXECUTE near('0000000000000000', -1);
DEALLOCATE near;
RESET enable_seqscan;
RESET plan_cache_mode;

-- Inserts after the build go to the pending list (fastupdate is on by
-- default), which scans search with the same comparePartial.
INSERT INTO g SELECT 40000 + id, (sh::bigint # flip_mask(-id, 1 + id % 4))::simhash64
FROM g WHERE id BETWEEN 1 AND 300 AND id % 10 = 0;
INSERT INTO g SELECT 41000 + i, NULL FROM generate_series(1, 3) i;
SELECT * FROM compare();
SELECT gin_clean_pending_list('g_gin') > 0 AS had_pending;
SELECT * FROM compare();

-- Without the pending list: inserts go straight into the entry tree.
ALTER INDEX g_gin SET (fastupdate = off);
INSERT INTO g SELECT 42000 + id, (sh::bigint # flip_mask(-id - 5000, 2 + id % 4))::simhash64
FROM g WHERE id BETWEEN 1 AND 300 AND id % 10 = 0;
INSERT INTO g SELECT 43000 + i, '0000000000000000' FROM generate_series(1, 3) i;
SELECT gin_clean_pending_list('g_gin') AS pending_pages;
SELECT * FROM compare();

-- Deleted rows leave with VACUUM; REINDEX rebuilds the same answers.
DELETE FROM g WHERE id % 3 = 0;
SELECT * FROM compare();
VACUUM g;
SELECT * FROM compare();
REINDEX INDEX g_gin;
SELECT * FROM compare();

-- An index built on an empty table, filled by inserts only (through the
-- pending list, then flushed by VACUUM).
CREATE TABLE g2 (LIKE g);
CREATE INDEX g2_gin ON g2 USING gin (sh simhash64_gin_ops (blocks = 6));
INSERT INTO g2 SELECT * FROM g;
SET enable_seqscan = off;
SELECT count(*) FROM g2 WHERE sh <@ hamming_ball((SELECT sh FROM g WHERE id = 14), 3);
VACUUM g2;
SELECT count(*) FROM g2 WHERE sh <@ hamming_ball((SELECT sh FROM g WHERE id = 14), 3);
RESET enable_seqscan;
SELECT count(*) FROM g2 WHERE sh <~> (SELECT sh FROM g WHERE id = 14) <= 3;

DROP TABLE g, g2, queries, radii;
DROP FUNCTION compare(), seq_result(), gin_result(), flip_mask(int, int);
