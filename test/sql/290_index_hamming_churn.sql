--
-- An index under churn keeps about its fresh size: VACUUM rewrites a run
-- whose rows were mostly deleted (its removals leave the pages), moves the
-- run at the end of the file into recycled pages, and truncates a free end
-- -- each once the pages it frees can no longer be read by a scan, which
-- takes a transaction id assigned after the merge that retired them.
-- hamming_stats shows the pages that hold no run or list.
--
CREATE TABLE hch (id int, sh simhash64) WITH (autovacuum_enabled = off);
CREATE TABLE hch_tick (n int);
INSERT INTO hch SELECT i, hashint8extended(i, 5)::simhash64 FROM generate_series(1, 60000) i;
CREATE INDEX hch_sh ON hch USING hamming (sh) WITH (background_merge = off);
SELECT pg_relation_size('hch_sh') / 8192 AS fresh_pages \gset
SELECT unused_pages, flushes, compactions FROM hamming_stats('hch_sh');

-- 80% of the rows go: the run keeps its pages until VACUUM rewrites it.
DELETE FROM hch WHERE id % 5 <> 0;
VACUUM hch;
SELECT run, entries, pages < :fresh_pages / 4 AS rewritten_small FROM hamming_runs('hch_sh');
SELECT unused_pages >= :fresh_pages * 3 / 4 AS old_pages_unused,
       pages = pg_relation_size('hch_sh') / 8192 AS pages_is_file
FROM hamming_stats('hch_sh');

-- Once a transaction id is assigned, the old run's pages are recycled and
-- the run at the end moves into them; once more, the end is cut off.
INSERT INTO hch_tick VALUES (1);
VACUUM hch;
INSERT INTO hch_tick VALUES (2);
VACUUM hch;
SELECT pg_relation_size('hch_sh') / 8192 < :fresh_pages / 3 AS truncated,
       unused_pages < :fresh_pages / 10 AS few_unused
FROM hamming_stats('hch_sh');

-- Every answer through the index still equals a sequential scan's.
CREATE FUNCTION pg_temp.hch_wrong() RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    q simhash64;
    a text;
    b text;
    wrong int := 0;
BEGIN
    FOR q IN SELECT sh FROM hch WHERE id % 997 = 0
             UNION ALL SELECT hashint8extended(i, 5)::simhash64 FROM generate_series(1, 40) i LOOP
        SET LOCAL enable_seqscan = off;
        SET LOCAL enable_bitmapscan = off;
        SELECT string_agg(id::text, ',' ORDER BY id) INTO a FROM hch WHERE sh <~> q <= 4;
        SELECT string_agg(d::text, ',') INTO b FROM (SELECT sh <~> q AS d FROM hch ORDER BY sh <~> q LIMIT 5) s;
        a := a || '|' || b;
        SET LOCAL enable_seqscan = on;
        SET LOCAL enable_indexscan = off;
        SELECT string_agg(id::text, ',' ORDER BY id) INTO b FROM hch WHERE sh <~> q <= 4;
        SELECT b || '|' || string_agg(d::text, ',') INTO b FROM (SELECT sh <~> q AS d FROM hch ORDER BY sh <~> q LIMIT 5) s;
        SET LOCAL enable_indexscan = on;
        IF a IS DISTINCT FROM b THEN
            wrong := wrong + 1;
        END IF;
    END LOOP;
    RETURN wrong;
END $$;
SELECT pg_temp.hch_wrong() AS wrong;
SELECT hamming_check('hch_sh', true);

-- Churn in rounds keeps the file near its fresh size.
DO $$
DECLARE
    next int := 100000;
BEGIN
    FOR r IN 1 .. 6 LOOP
        DELETE FROM hch WHERE id IN (SELECT id FROM hch ORDER BY hashint4(id + r) LIMIT 2000);
        INSERT INTO hch SELECT i, hashint8extended(i, 5)::simhash64 FROM generate_series(next, next + 1999) i;
        next := next + 2000;
    END LOOP;
END $$;
VACUUM hch;
INSERT INTO hch_tick VALUES (3);
VACUUM hch;
INSERT INTO hch_tick VALUES (4);
VACUUM hch;
SELECT count(*) AS rows FROM hch;
SELECT unused_pages * 10 <= (pages - unused_pages) * 3 AS within_a_third FROM hamming_stats('hch_sh');
SELECT pg_temp.hch_wrong() AS wrong;
SELECT hamming_check('hch_sh', true);

-- A parallel VACUUM (two btree indexes take workers) runs the hamming
-- index's cleanup in the leader in parallel mode, where the truncation's
-- lock cannot be logged: it leaves the end for a later VACUUM.
CREATE INDEX hch_id ON hch (id);
CREATE INDEX hch_sh_bt ON hch (sh);
SET min_parallel_index_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
DELETE FROM hch WHERE id % 3 = 0;
VACUUM (PARALLEL 2) hch;
INSERT INTO hch_tick VALUES (5);
VACUUM (PARALLEL 2) hch;
RESET min_parallel_index_scan_size;
RESET max_parallel_maintenance_workers;
SELECT pg_temp.hch_wrong() AS wrong;

DROP TABLE hch, hch_tick;
