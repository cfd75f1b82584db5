--
-- simhash_clusters_update(): a state table of (id, cluster_id) kept equal
-- to simhash_clusters() over nights of inserts and deletes, by index probes
-- of the new rows (few new rows, GIN or GiST index) or a full run applied
-- as a difference.  Every step is checked against a full simhash_clusters()
-- run of the table as it is, and the rows returned against the difference
-- of the state before and after.
--
SET client_min_messages = warning;
CREATE FUNCTION code(i int) RETURNS bigint LANGUAGE sql IMMUTABLE
AS $$ SELECT ('x' || md5(i::text))::bit(64)::bigint $$;

-- 3,000 random codes; 1..50 have copies one bit off (pairs); a chain
-- 5001..5010, each code one bit from the next; 40 identical codes.
CREATE TABLE t (id bigint PRIMARY KEY, sh simhash64);
INSERT INTO t SELECT i, code(i)::simhash64 FROM generate_series(1, 3000) i;
INSERT INTO t SELECT 3000 + i, (code(i) # (1::bigint << 7))::simhash64 FROM generate_series(1, 50) i;
INSERT INTO t SELECT 5000 + k, (code(-1) # ((1::bigint << k) - 1))::simhash64 FROM generate_series(1, 10) k;
INSERT INTO t SELECT 6000 + i, code(-2)::simhash64 FROM generate_series(1, 40) i;
-- 4001, 4002: a pair 6 bits from the pair (50, 3050).
INSERT INTO t VALUES (4001, (code(50) # (63::bigint << 20))::simhash64),
                     (4002, (code(50) # (63::bigint << 20) # (1::bigint << 7))::simhash64);
CREATE INDEX t_sh ON t USING gin (sh);
ANALYZE t;
CREATE TABLE st (id bigint PRIMARY KEY, cluster_id bigint NOT NULL);
CREATE INDEX ON st (cluster_id);

-- How far st is from a full run (0: equal).
CREATE FUNCTION st_off() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM (
        (SELECT id, cluster_id FROM st EXCEPT SELECT id, cluster_id FROM simhash_clusters('t', 'id', 'sh', 3))
        UNION ALL
        (SELECT id, cluster_id FROM simhash_clusters('t', 'id', 'sh', 3) EXCEPT SELECT id, cluster_id FROM st)) x
$$;
-- One update: whether it probed the index, the rows it returned,
-- and whether they are exactly the difference of st before and after.
CREATE TABLE st_before (id bigint, cluster_id bigint);
CREATE TABLE changes (id bigint, old_cluster_id bigint, cluster_id bigint);
CREATE FUNCTION night(since bigint, k int DEFAULT 3)
RETURNS TABLE (probed boolean, changed bigint, returned_is_the_difference boolean, off bigint)
LANGUAGE plpgsql AS $$
DECLARE
    scans bigint := pg_stat_get_xact_numscans('t_sh'::regclass);
BEGIN
    TRUNCATE st_before, changes;
    INSERT INTO st_before SELECT s.id, s.cluster_id FROM st s;
    INSERT INTO changes SELECT * FROM simhash_clusters_update('st', 't', 'id', 'sh', since, k);
    probed := pg_stat_get_xact_numscans('t_sh'::regclass) > scans;
    changed := (SELECT count(*) FROM changes);
    returned_is_the_difference := NOT EXISTS (
        (SELECT c.id, c.old_cluster_id, c.cluster_id FROM changes c
         EXCEPT
         SELECT coalesce(b.id, a.id), b.cluster_id, a.cluster_id
         FROM st_before b FULL JOIN st a ON a.id = b.id
         WHERE b.cluster_id IS DISTINCT FROM a.cluster_id)
        UNION ALL
        (SELECT coalesce(b.id, a.id), b.cluster_id, a.cluster_id
         FROM st_before b FULL JOIN st a ON a.id = b.id
         WHERE b.cluster_id IS DISTINCT FROM a.cluster_id
         EXCEPT
         SELECT c.id, c.old_cluster_id, c.cluster_id FROM changes c));
    off := st_off();
    RETURN NEXT;
END
$$;

-- Night 0: since NULL, the full run; st takes every clustered row.
SELECT * FROM night(NULL);
SELECT count(*) AS rows, count(DISTINCT cluster_id) AS clusters FROM st;

-- Night 1, few new rows (index probes): a copy of a singleton (a new
-- cluster), a row within 3 bits of two clusters 6 bits apart (4001's
-- joins 50's), a new member of the identical group, five
-- identical new rows, a row with no fingerprint, a random row.
INSERT INTO t VALUES
    (7001, (code(100) # 3)::simhash64),
    (7002, (code(50) # (7::bigint << 20))::simhash64),
    (7003, code(-2)::simhash64),
    (7010, code(-3)::simhash64), (7011, code(-3)::simhash64), (7012, code(-3)::simhash64),
    (7013, code(-3)::simhash64), (7014, code(-3)::simhash64),
    (7020, NULL),
    (7021, code(7021)::simhash64);
SELECT * FROM night(6040);
SELECT * FROM changes ORDER BY id;

-- Night 2, deletes only: the chain's middle link (it splits), the smallest
-- id of a pair (the survivor leaves st: a cluster of one is no cluster),
-- the smallest id of the identical group (relabelled).
DELETE FROM t WHERE id IN (5005, 1, 6001);
SELECT * FROM night(7021);
SELECT * FROM changes ORDER BY id;

-- Nothing new: nothing changes; the same since again: nothing either.
SELECT * FROM night(7021);
SELECT * FROM night(7021);

-- Deletes and inserts on the same night, one new row bridging the two
-- halves of the split chain again.
DELETE FROM t WHERE id IN (3002, 6040);
INSERT INTO t VALUES (7030, (code(-1) # ((1::bigint << 5) - 1))::simhash64);
SELECT * FROM night(7021);
SELECT * FROM changes ORDER BY id;

-- Deletes given as a list (say, logged by a trigger): only those ids are
-- looked for; an id still in the table (5) is no deletion.
DELETE FROM t WHERE id IN (3, 4002);
SELECT * FROM simhash_clusters_update('st', 't', 'id', 'sh', 7030, 3, deleted => ARRAY[3, 4002, 5]::bigint[]);
SELECT st_off() AS off;
-- A deletion left out of the list goes unseen (the state keeps the row).
DELETE FROM t WHERE id = 4;
SELECT count(*) AS changed FROM simhash_clusters_update('st', 't', 'id', 'sh', 7030, 3, deleted => '{}');
SELECT st_off() AS off;
SELECT count(*) AS changed FROM simhash_clusters_update('st', 't', 'id', 'sh', 7030, 3);
SELECT st_off() AS off;

-- Many new rows (above 1% of the table): the full run, applied as a
-- difference; the same result.
INSERT INTO t SELECT 8000 + i, (code(i) # (1::bigint << 20))::simhash64 FROM generate_series(100, 300) i;
ANALYZE t;
SELECT * FROM night(7030);

-- Randomized nights: inserts (copies of old rows 0..6 bits off, random
-- rows) and deletes (random rows, and whole runs of a
-- cluster), at radii 0, 3 and 7 in turn; st equals a full run every night.
SELECT setseed(0.49);
CREATE FUNCTION random_bits(n int) RETURNS bigint LANGUAGE sql VOLATILE AS $$
    SELECT coalesce(bit_or(1::bigint << (random() * 63)::int), 0) FROM generate_series(1, n)
$$;
CREATE TABLE nights (night int, k int, probed boolean, changed bigint, ok boolean, off bigint);
DO $$
DECLARE
    n int;
    k int;
    top bigint;
    r record;
BEGIN
    FOR n IN 1 .. 24 LOOP
        k := (ARRAY[3, 0, 7])[(n - 1) / 8 + 1];
        IF (n - 1) % 8 = 0 THEN
            -- a new radius: the state starts over from a full run
            PERFORM * FROM simhash_clusters_update('st', 't', 'id', 'sh', NULL, k);
        END IF;
        SELECT max(id) INTO top FROM t;
        INSERT INTO t
        SELECT top + g,
               CASE WHEN random() < 0.2 THEN code((top + g)::int)
                    ELSE (SELECT o.sh::bigint # random_bits((random() * 6)::int)
                          FROM t o WHERE o.sh IS NOT NULL OFFSET (random() * 2000)::int LIMIT 1)
               END::simhash64
        FROM generate_series(1, 1 + (random() * 40)::int) g;
        DELETE FROM t WHERE id IN (SELECT id FROM t ORDER BY random() LIMIT (random() * 6)::int);
        IF n % 4 = 0 THEN
            DELETE FROM t WHERE id IN (SELECT id FROM st WHERE cluster_id = (SELECT cluster_id FROM st ORDER BY random() LIMIT 1) ORDER BY random() LIMIT 2);
        END IF;
        SELECT * INTO r FROM night(top, k);
        -- st_off() compares at radius 3: recompute at k
        r.off := (SELECT count(*) FROM (
            (SELECT id, cluster_id FROM st EXCEPT SELECT id, cluster_id FROM simhash_clusters('t', 'id', 'sh', k))
            UNION ALL
            (SELECT id, cluster_id FROM simhash_clusters('t', 'id', 'sh', k) EXCEPT SELECT id, cluster_id FROM st)) x);
        INSERT INTO nights VALUES (n, k, r.probed, r.changed, r.returned_is_the_difference, r.off);
    END LOOP;
END
$$;
SELECT k, count(*) AS nights, count(*) FILTER (WHERE probed) AS by_probes,
       sum(changed) > 0 AS something_changed, bool_and(ok) AS returned_the_difference,
       sum(off) AS off
FROM nights GROUP BY k ORDER BY k;

-- A GiST index serves the probes too; no index: the full run.
SELECT count(*) > 0 AS changed FROM simhash_clusters_update('st', 't', 'id', 'sh', NULL, 3);
DROP INDEX t_sh;
CREATE INDEX t_sh ON t USING gist (sh);
INSERT INTO t VALUES (90001, (code(500) # 1)::simhash64);
SELECT * FROM night((SELECT max(id) FROM t) - 1);
DROP INDEX t_sh;
CREATE INDEX t_other ON t (id, sh);
INSERT INTO t VALUES (90002, (code(501) # 1)::simhash64);
SELECT count(*) AS changed FROM simhash_clusters_update('st', 't', 'id', 'sh', 90001);
SELECT st_off() AS off;

-- A group of identical codes, old and growing: the new copies find one old
-- copy (one lookup, however large the group) and join its cluster.
CREATE TABLE g (id int PRIMARY KEY, sh simhash64);
INSERT INTO g SELECT i, code(-9)::simhash64 FROM generate_series(1, 3000) i;
INSERT INTO g SELECT 3000 + i, code(i)::simhash64 FROM generate_series(1, 3000) i;
CREATE INDEX g_sh ON g USING gin (sh);
ANALYZE g;
CREATE TABLE gst (id int PRIMARY KEY, cluster_id int NOT NULL);
SELECT count(*) AS first_run FROM simhash_clusters_update('gst', 'g', 'id', 'sh', NULL);
INSERT INTO g SELECT 7000 + i, code(-9)::simhash64 FROM generate_series(1, 50) i;
SELECT count(*) AS changed, min(cluster_id) AS cluster, count(*) FILTER (WHERE old_cluster_id IS NULL) AS joined
FROM simhash_clusters_update('gst', 'g', 'id', 'sh', 6000);
SELECT count(*) AS off FROM (
    (TABLE gst EXCEPT SELECT id::int, cluster_id::int FROM simhash_clusters('g', 'id', 'sh'))
    UNION ALL (SELECT id::int, cluster_id::int FROM simhash_clusters('g', 'id', 'sh') EXCEPT TABLE gst)) x;
-- A near copy of the group (not identical): its probe would read the whole
-- group, so it stops after 64 rows and the night takes the full run.
INSERT INTO g VALUES (8001, (code(-9) # 6)::simhash64), (8002, code(-9)::simhash64);
SET client_min_messages = debug1;
SELECT count(*) AS changed FROM simhash_clusters_update('gst', 'g', 'id', 'sh', 7050);
SET client_min_messages = warning;
SELECT count(*) AS off FROM (
    (TABLE gst EXCEPT SELECT id::int, cluster_id::int FROM simhash_clusters('g', 'id', 'sh'))
    UNION ALL (SELECT id::int, cluster_id::int FROM simhash_clusters('g', 'id', 'sh') EXCEPT TABLE gst)) x;

-- Deleted rows found without a list: by one id lookup per state row
-- where an index of the table leads with the id column and the state is
-- small against the table, else by a join of the state with the table
-- (the DEBUG line says which).  Either way the state equals a full run.
CREATE TABLE d (id bigint, sh simhash64);
INSERT INTO d SELECT i, code(CASE WHEN i % 50 < 2 THEN -(i / 50) ELSE i END)::simhash64
FROM generate_series(1, 5000) i;
CREATE INDEX d_sh ON d USING hamming (sh);
CREATE TABLE dst (id bigint PRIMARY KEY, cluster_id bigint NOT NULL);
CREATE FUNCTION dst_off() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM (
        (SELECT id, cluster_id FROM dst EXCEPT SELECT id, cluster_id FROM simhash_clusters('d', 'id', 'sh', 3))
        UNION ALL
        (SELECT id, cluster_id FROM simhash_clusters('d', 'id', 'sh', 3) EXCEPT SELECT id, cluster_id FROM dst)) x
$$;
SELECT count(*) AS clustered FROM simhash_clusters_update('dst', 'd', 'id', 'sh', NULL);
ANALYZE d, dst;
DELETE FROM d WHERE id IN (50, 101, 777);
INSERT INTO d VALUES (5001, code(-1003)::simhash64);
SET client_min_messages = debug1;
SELECT count(*) AS changed FROM simhash_clusters_update('dst', 'd', 'id', 'sh', 5000);
RESET client_min_messages;
SET client_min_messages = warning;
SELECT dst_off() AS off;
ALTER TABLE d ADD PRIMARY KEY (id);
DELETE FROM d WHERE id IN (150, 200, 201, 1234);
INSERT INTO d VALUES (5002, code(-1005)::simhash64);
SET client_min_messages = debug1;
SELECT count(*) AS changed FROM simhash_clusters_update('dst', 'd', 'id', 'sh', 5001);
RESET client_min_messages;
SET client_min_messages = warning;
SELECT dst_off() AS off;

-- Empty table, and errors.
CREATE TABLE e (id int, sh simhash64);
CREATE TABLE est (id bigint, cluster_id bigint);
SELECT count(*) FROM simhash_clusters_update('est', 'e', 'id', 'sh', NULL);
SELECT count(*) FROM simhash_clusters_update('est', 'e', 'id', 'sh', 0);
\set VERBOSITY default
CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
SELECT try($$SELECT simhash_clusters_update(NULL, 'e', 'id', 'sh', 0)$$);
SELECT try($$SELECT simhash_clusters_update('est', 'e', 'id', 'sh', 0, NULL)$$);
SELECT try($$SELECT simhash_clusters_update('est', 'e', 'id', 'sh', 0, 16)$$);
-- with the DETAIL and HINT that simhash_clusters gives
SELECT simhash_clusters_update('est', 'e', 'id', 'sh', 0, 16);
SELECT try($$SELECT simhash_clusters_update('est', 'e', 'id', 'sh', 0, -1)$$);
SELECT try($$SELECT simhash_clusters_update('est', 'e', 'nope', 'sh', 0)$$);
SELECT try($$SELECT simhash_clusters_update('est', 'e', 'sh', 'id', 0)$$);
CREATE TABLE bad1 (id bigint, cluster bigint);
CREATE TABLE bad2 (id bigint, cluster_id text);
SELECT try($$SELECT simhash_clusters_update('bad1', 'e', 'id', 'sh', 0)$$);
SELECT try($$SELECT simhash_clusters_update('bad2', 'e', 'id', 'sh', 0)$$);
SELECT try($$SELECT simhash_clusters_update('nosuch', 'e', 'id', 'sh', 0)$$);

DROP TABLE t, st, st_before, changes, nights, g, gst, d, dst, e, est, bad1, bad2;
DROP FUNCTION night(bigint, int), st_off(), dst_off(), random_bits(int), try(text), code(int);
