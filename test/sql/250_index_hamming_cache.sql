--
-- The hamming index's backend-local caches (ham_cache.c): a session that
-- scans one index again and again keeps the run's directory and the pending
-- list in memory, and must still see every change since its last scan --
-- its own appends and other sessions', merges, VACUUM's removals followed
-- by the reuse of the freed heap slots, REINDEX, TRUNCATE, a scan that ended
-- in an error -- and answer exactly as a sequential scan does.
--
CREATE TABLE hc (id int, sh simhash64) WITH (autovacuum_enabled = off);
CREATE INDEX hc_sh ON hc USING hamming (sh);

-- Rows: near copies of 40 centres (so that radius searches find rows).
CREATE FUNCTION pg_temp.hc_code(i int) RETURNS simhash64
LANGUAGE sql IMMUTABLE AS $$
    SELECT (('x' || md5('centre ' || (i % 40)))::bit(64)::bigint
            # (1::bigint << (i % 61)) # (1::bigint << ((i * 7) % 59)))::simhash64
$$;

-- Queries: codes of every row ever inserted (deleted ones too) and the
-- centres, at radius 0, 3 and 10: the number whose answer through the index
-- differs from a sequential scan's.
CREATE TABLE hc_q AS SELECT DISTINCT pg_temp.hc_code(i) AS q FROM generate_series(1, 600) i;
CREATE FUNCTION pg_temp.hc_wrong() RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    q simhash64;
    r int;
    via_index text;
    via_seq text;
    wrong int := 0;
BEGIN
    FOR q IN SELECT hc_q.q FROM hc_q LOOP
        FOREACH r IN ARRAY ARRAY[0, 3, 10] LOOP
            PERFORM set_config('enable_seqscan', 'off', true);
            PERFORM set_config('enable_bitmapscan', 'off', true);
            SELECT string_agg(id::text, ',' ORDER BY id) INTO via_index FROM hc WHERE sh <~> q <= r;
            PERFORM set_config('enable_seqscan', 'on', true);
            PERFORM set_config('enable_indexscan', 'off', true);
            SELECT string_agg(id::text, ',' ORDER BY id) INTO via_seq FROM hc WHERE sh <~> q <= r;
            PERFORM set_config('enable_indexscan', 'on', true);
            PERFORM set_config('enable_bitmapscan', 'on', true);
            IF via_index IS DISTINCT FROM via_seq THEN
                wrong := wrong + 1;
            END IF;
        END LOOP;
    END LOOP;
    RETURN wrong;
END $$;

-- the plan the checks rely on
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM hc WHERE sh <~> '0000000000000000' <= 3;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- an empty list, then appends seen scan by scan
SELECT pg_temp.hc_wrong() AS wrong_empty;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(1, 1000) i;
SELECT pg_temp.hc_wrong() AS wrong_after_1000;
INSERT INTO hc VALUES (1001, pg_temp.hc_code(1001));
SELECT count(*) AS found_1001 FROM hc WHERE sh <~> pg_temp.hc_code(1001) <= 0 AND id = 1001;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(1002, 1600) i;
SELECT pg_temp.hc_wrong() AS wrong_after_1600;

-- VACUUM removes the entries of deleted rows from the list, and new rows
-- take their heap slots: a cached entry still naming one of those slots
-- would return a row whose code is far from the query
DELETE FROM hc WHERE id <= 800;
VACUUM hc;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(2001, 2800) i;
SELECT count(*) > 0 AS slots_reused FROM hc
WHERE id > 2000 AND ctid < (SELECT max(ctid) FROM hc WHERE id <= 1600);
SELECT pg_temp.hc_wrong() AS wrong_after_vacuum;

-- a merge: a new run (its directory is read again) and a new list
SELECT hamming_merge('hc_sh') > 0 AS merged;
SELECT pg_temp.hc_wrong() AS wrong_after_merge;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(3001, 3200) i;
SELECT pg_temp.hc_wrong() AS wrong_after_merge_and_appends;

-- the same while a run exists, so that VACUUM compacts the list in place
-- rather than merging it (a list under a sixteenth of the run): the rows
-- of the list's first page are deleted, their slots taken by new rows
TRUNCATE hc;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(1, 12000) i;
SELECT hamming_merge('hc_sh') AS merged_12000;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(12001, 12700) i;
SELECT pg_temp.hc_wrong() AS wrong_with_list;
DELETE FROM hc WHERE id BETWEEN 12001 AND 12500;
VACUUM hc;
INSERT INTO hc SELECT i, pg_temp.hc_code(i + 7) FROM generate_series(13001, 13500) i;
SELECT count(*) > 0 AS slots_reused FROM hc
WHERE id > 13000 AND ctid < (SELECT max(ctid) FROM hc WHERE id <= 12700);
SELECT pg_temp.hc_wrong() AS wrong_after_list_vacuum;

-- a cursor holds the run's directory while a merge in its own transaction
-- replaces the run
BEGIN;
DECLARE hc_cur CURSOR FOR SELECT id FROM hc ORDER BY sh <~> pg_temp.hc_code(5), id;
FETCH 3 FROM hc_cur;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(3201, 3300) i;
SELECT hamming_merge('hc_sh') > 0 AS merged_under_cursor;
SELECT count(*) AS in_new_run FROM hc WHERE sh <~> pg_temp.hc_code(3250) <= 0;
FETCH 3 FROM hc_cur;
CLOSE hc_cur;
COMMIT;
SELECT pg_temp.hc_wrong() AS wrong_after_cursor;

-- a scan that ends in an error leaves nothing behind that later scans use
SELECT id / (id - 3005) FROM hc WHERE sh <~> pg_temp.hc_code(3005) <= 3;
SELECT pg_temp.hc_wrong() AS wrong_after_error;

-- deletions VACUUM removes from the run, then a merge and more appends
DELETE FROM hc WHERE id BETWEEN 2001 AND 2400;
VACUUM hc;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(4001, 4400) i;
SELECT pg_temp.hc_wrong() AS wrong_after_run_vacuum;

-- a list too large for work_mem is read page by page, as before
SET work_mem = '64kB';
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(5001, 9000) i;
SELECT pg_temp.hc_wrong() AS wrong_uncached;
RESET work_mem;
SELECT pg_temp.hc_wrong() AS wrong_cached_again;

-- a flush cancelled after it sealed the list leaves the list sealed:
-- searches read it through the cache built for it as the pending list,
-- beside the new pending list's, until a flush writes it as a run
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(9001, 9600) i;
SELECT pg_temp.hc_wrong() AS wrong_before_seal;
SET neardup.debug_run_page_delay = 1000;
SET statement_timeout = '500ms';
SELECT hamming_merge('hc_sh');
RESET statement_timeout;
RESET neardup.debug_run_page_delay;
SELECT sealed_entries, pending_entries FROM hamming_stats('hc_sh');
SELECT pg_temp.hc_wrong() AS wrong_sealed;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(9601, 9800) i;
SELECT sealed_entries, pending_entries FROM hamming_stats('hc_sh');
SELECT pg_temp.hc_wrong() AS wrong_sealed_and_pending;
SELECT hamming_merge('hc_sh') > 0 AS flushed;
SELECT sealed_entries, pending_entries FROM hamming_stats('hc_sh');
SELECT pg_temp.hc_wrong() AS wrong_after_flush;

-- REINDEX and TRUNCATE give the index a new file
REINDEX INDEX hc_sh;
SELECT pg_temp.hc_wrong() AS wrong_after_reindex;
TRUNCATE hc;
SELECT pg_temp.hc_wrong() AS wrong_after_truncate;
INSERT INTO hc SELECT i, pg_temp.hc_code(i) FROM generate_series(1, 500) i;
SELECT pg_temp.hc_wrong() AS wrong_after_refill;
SELECT hamming_check('hc_sh', true);

DROP TABLE hc, hc_q;
