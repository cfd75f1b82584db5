--
-- Index-only scans of a hamming index over rows updated in place (HOT):
-- the index holds the TID of each chain's root, and a scan that checks a
-- row's visibility must not write the TID of the chain member it found
-- back into the index (its pages, or the pending-list cache).  The rows
-- are in a run (after hamming_merge) and in the pending list; each scan is
-- compared with a sequential scan, then a plain scan in a new session and
-- hamming_check show the index unchanged.
--
CREATE TABLE hot (id int, sh simhash64, pad int) WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO hot SELECT i, CASE WHEN i <= 40 THEN '0123456789abcdef'::simhash64
                              ELSE hashint8extended(i, 7)::simhash64 END, 0
FROM generate_series(1, 2000) i;
CREATE INDEX hot_ham ON hot USING hamming (sh) WITH (background_merge = off);
SELECT hamming_merge('hot_ham') IS NOT NULL AS merged;
-- and 40 more of the code in the pending list
INSERT INTO hot SELECT i, '0123456789abcdee'::simhash64, 0 FROM generate_series(2001, 2040) i;
VACUUM (FREEZE, ANALYZE) hot;
-- HOT updates: the new versions stay on their pages, the index unchanged
UPDATE hot SET pad = 1 WHERE id <= 40 OR id > 2000;
SELECT count(*) AS updated FROM hot WHERE pad = 1;

-- the rows within r bits of q, by a sequential scan
CREATE FUNCTION hot_seq(q simhash64, r int) RETURNS bigint LANGUAGE sql
SET enable_seqscan = on SET enable_indexscan = off SET enable_indexonlyscan = off SET enable_bitmapscan = off AS
$$ SELECT count(*) FROM hot WHERE bit_count((sh::bigint # q::bigint)::bit(64)) <= r $$;

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
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
-- index-only: nearest neighbours, and a radius count
SELECT * FROM pg_temp.explain($$SELECT sh FROM hot ORDER BY sh <~> '0123456789abcdef' LIMIT 100$$);
SELECT count(*) FILTER (WHERE d <= 1) AS knn_within_1, hot_seq('0123456789abcdef', 1) AS seq
FROM (SELECT sh <~> '0123456789abcdef' AS d FROM (SELECT sh FROM hot ORDER BY sh <~> '0123456789abcdef' LIMIT 100) s) s2;
SELECT * FROM pg_temp.explain($$SELECT count(*) FROM hot WHERE sh <~> '0123456789abcdef' <= 3$$);
SELECT count(*) AS radius_3, hot_seq('0123456789abcdef', 3) AS seq FROM hot WHERE sh <~> '0123456789abcdef' <= 3;
-- twice, in the same session (the pending-list cache)
SELECT count(*) AS radius_3_again FROM hot WHERE sh <~> '0123456789abcdef' <= 3;
RESET ALL;

-- a plain index scan in a new session, and the index's own check
\c
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM hot WHERE sh <~> '0123456789abcdef' <= 3;
SELECT count(*) AS plain_radius_3, hot_seq('0123456789abcdef', 3) AS seq
FROM (SELECT id FROM hot WHERE sh <~> '0123456789abcdef' <= 3) s;
RESET ALL;
SELECT 'index intact' FROM hamming_check('hot_ham', true);
DROP FUNCTION hot_seq(simhash64, int);
DROP TABLE hot;
