--
-- The log-structured hamming index: several runs in several tiers.  With
-- a pending_limit of 64kB (4,681 entries) and background_merge off, every
-- insert that finds the list full flushes it into a new run in its own
-- session, and compacts the runs by the tiered policy (fanout 4): the run
-- list below is the same on every machine.  Every query form must return
-- what a sequential scan returns with runs of several tiers present, ties
-- (identical codes, planted neighbours) spread over several runs, NULLs,
-- deletes and VACUUM between merges, index-only scans, and the exclusion
-- constraint must see a conflict in any run.
--

-- Random codes; planted neighbours at distance 0..8 of codes 1..12 and a
-- group of identical codes, added to every batch so that each run holds
-- some of them; NULLs.
CREATE TABLE lsm (id int, sh simhash64) WITH (autovacuum_enabled = off);
CREATE FUNCTION pg_temp.batch(b int, n int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO lsm
    SELECT b * 100000 + i, ('x' || md5(b || ' ' || i))::bit(64)::bigint::simhash64
    FROM generate_series(1, n) i;
    INSERT INTO lsm
    SELECT b * 100000 + 90000 + c * 10 + d,
           (('x' || md5(c::text))::bit(64)::bigint # (((1::bigint << ((d + b) % 9)) - 1) << (c * 3)))::simhash64
    FROM generate_series(1, 12) c, generate_series(0, 1) d;
    INSERT INTO lsm
    SELECT b * 100000 + 95000 + i, ('x' || md5('dup'))::bit(64)::bigint::simhash64
    FROM generate_series(1, 25) i;
    INSERT INTO lsm SELECT b * 100000 + 99000 + i, NULL FROM generate_series(1, 3) i;
$$;
SELECT pg_temp.batch(0, 2000);
CREATE INDEX lsm_sh ON lsm USING hamming (sh) WITH (pending_limit = 64, background_merge = off);

CREATE TABLE lsm_q (qid int, q simhash64);
INSERT INTO lsm_q
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64 FROM generate_series(1, 4) i
UNION ALL SELECT 5, ('x' || md5('dup'))::bit(64)::bigint::simhash64
UNION ALL SELECT 6, '0000000000000000'
UNION ALL SELECT 7, ('x' || md5('3 17'))::bit(64)::bigint::simhash64
UNION ALL SELECT 8, ('x' || md5('query'))::bit(64)::bigint::simhash64;

/*
 * Every answer with the index (the plan must use it) and without (it must
 * not): the ids within radius -1..12 (as a bitmap scan and as a plain
 * index scan), and 64 (every non-null row: count and checksums); the
 * distances of the 10 and 60 nearest, in the order returned (which rows
 * of one distance come first is not defined, so ids are not compared);
 * the same through an index-only scan, and the codes within 4 bits;
 * the 20 nearest within 6 bits; the 15 nearest among rows with id % 7 = 0
 * (the scan goes on until it has them); equality.
 */
CREATE FUNCTION pg_temp.answer(use_index bool, sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    plan text := '';
    line text;
    result text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP
        plan := plan || line || E'\n';
    END LOOP;
    IF (strpos(plan, 'lsm_sh') > 0) <> use_index THEN
        RAISE EXCEPTION 'unexpected plan for %: %', sql, plan;
    END IF;
    EXECUTE sql INTO result;
    RETURN result;
END $$;

CREATE FUNCTION pg_temp.answers(use_index bool)
RETURNS TABLE (what text, qid int, r int, rows int, answer text)
LANGUAGE plpgsql AS $$
DECLARE
    q record;
    rad int;
    kind text;
BEGIN
    PERFORM set_config('enable_seqscan', (NOT use_index)::text, true);
    FOR q IN SELECT * FROM lsm_q ORDER BY lsm_q.qid LOOP
        qid := q.qid;
        FOREACH kind IN ARRAY ARRAY['bitmap', 'plain'] LOOP
            PERFORM set_config('enable_indexscan', (use_index AND kind = 'plain')::text, true);
            PERFORM set_config('enable_bitmapscan', (use_index AND kind = 'bitmap')::text, true);
            FOREACH rad IN ARRAY ARRAY[-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 64] LOOP
                what := 'radius ' || kind;
                r := rad;
                answer := pg_temp.answer(use_index, format(
                    'SELECT format(''%%s:%%s:%%s'', count(*), sum(id), bit_xor(hashint4(id))) FROM lsm WHERE sh <~> %L <= %s',
                    q.q, rad));
                rows := split_part(answer, ':', 1)::int;
                RETURN NEXT;
            END LOOP;
        END LOOP;
        PERFORM set_config('enable_indexscan', use_index::text, true);
        PERFORM set_config('enable_bitmapscan', use_index::text, true);
        r := NULL;
        what := 'knn 10';
        answer := pg_temp.answer(use_index, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> %L AS d FROM lsm ORDER BY sh <~> %L LIMIT 10) s',
            q.q, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        -- the distances computed from the codes the index gives back
        what := 'knn 10 index-only';
        answer := pg_temp.answer(use_index, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT sh <~> %L AS d FROM lsm ORDER BY sh <~> %L LIMIT 10) s',
            q.q, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        what := 'radius 4 codes';
        answer := pg_temp.answer(use_index, format(
            'SELECT string_agg(sh::text, '','' ORDER BY sh) FROM lsm WHERE sh <~> %L <= 4',
            q.q));
        rows := coalesce(array_length(string_to_array(answer, ','), 1), 0);
        RETURN NEXT;
        what := 'knn 60';
        answer := pg_temp.answer(use_index, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> %L AS d FROM lsm ORDER BY sh <~> %L LIMIT 60) s',
            q.q, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        what := 'knn 20 within 6';
        answer := pg_temp.answer(use_index, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> %L AS d FROM lsm WHERE sh <~> %L <= 6 ORDER BY sh <~> %L LIMIT 20) s',
            q.q, q.q, q.q));
        rows := coalesce(array_length(string_to_array(answer, ','), 1), 0);
        RETURN NEXT;
        what := 'knn 15 filtered';
        answer := pg_temp.answer(use_index, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> %L AS d FROM lsm WHERE id %% 7 = 0 ORDER BY sh <~> %L LIMIT 15) s',
            q.q, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        what := 'equality';
        answer := pg_temp.answer(use_index, format(
            'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM lsm WHERE sh = %L', q.q));
        rows := split_part(answer, ':', 1)::int;
        RETURN NEXT;
    END LOOP;
END $$;

CREATE FUNCTION pg_temp.compare()
RETURNS TABLE (what text, queries bigint, rows bigint, agree bigint)
LANGUAGE sql AS $$
    WITH i AS (SELECT * FROM pg_temp.answers(true)),
         s AS (SELECT * FROM pg_temp.answers(false))
    SELECT i.what, count(*), sum(i.rows), count(*) FILTER (WHERE i.answer IS NOT DISTINCT FROM s.answer)
    FROM i JOIN s ON s.what = i.what AND s.qid = i.qid AND s.r IS NOT DISTINCT FROM i.r
    GROUP BY i.what ORDER BY i.what
$$;


-- One run, from the build.
SELECT run, entries, tables FROM hamming_runs('lsm_sh');

-- Eight batches of 3,000 rows: the list fills and is flushed about five
-- times; the fourth run of tier 0 merges the three before it.
SELECT pg_temp.batch(b, 3000) FROM generate_series(1, 8) b;
SELECT run, entries, tables FROM hamming_runs('lsm_sh');
SELECT count(*) > 1 AS several_runs FROM hamming_runs('lsm_sh');
SELECT run_entries + pending_entries <= (SELECT count(sh) FROM lsm) AS counted,
       merges > 0 AS flushed, insert_merges = merges AS all_inline
FROM hamming_stats('lsm_sh');
VACUUM lsm;
SELECT * FROM pg_temp.compare();
SELECT hamming_check('lsm_sh', true);

-- Deletes and VACUUM between merges: entries leave every run in place.
DELETE FROM lsm WHERE id % 3 = 0;
VACUUM lsm;
SELECT * FROM pg_temp.compare();
SELECT hamming_check('lsm_sh', true);

-- Twelve more batches: compactions take the vacuumed runs (the merged run
-- holds fewer entries than its inputs were written with); two runs of
-- tier 1 (4 to 16 flushes' worth) and one of tier 0 are left.
SELECT pg_temp.batch(b, 3000) FROM generate_series(9, 20) b;
SELECT run, entries, tables FROM hamming_runs('lsm_sh');
VACUUM lsm;
SELECT * FROM pg_temp.compare();
SELECT hamming_check('lsm_sh', true);

-- VACUUM flushed the list (it held more than a sixteenth of the runs);
-- hamming_merge flushes a shorter one.  The runs then hold every entry.
SELECT pg_temp.batch(21, 100);
SELECT hamming_merge('lsm_sh') AS flushed;
SELECT pending_entries, sealed_entries FROM hamming_stats('lsm_sh');
SELECT (SELECT sum(entries) FROM hamming_runs('lsm_sh')) >= (SELECT count(sh) FROM lsm) AS all_in_runs;
SELECT * FROM pg_temp.compare();

-- REINDEX writes one run again.
REINDEX INDEX lsm_sh;
SELECT run, entries, tables FROM hamming_runs('lsm_sh');
SELECT * FROM pg_temp.compare();

-- The exclusion constraint sees a conflict in whichever run holds the
-- other row: 20,000 random codes (none within 3 bits of another), flushed
-- into several runs, then a near copy of a row of each run's era.
CREATE TABLE lsm_x (id int, sh simhash64,
                    EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&)
                    WITH (pending_limit = 64, background_merge = off));
INSERT INTO lsm_x SELECT i, ('x' || md5('x ' || i))::bit(64)::bigint::simhash64
FROM generate_series(1, 20000) i;
SELECT count(*) > 1 AS several_runs
FROM hamming_runs((SELECT conindid::regclass FROM pg_constraint WHERE conrelid = 'lsm_x'::regclass));
DO $$
DECLARE
    conflicts int := 0;
    i int;
BEGIN
    FOREACH i IN ARRAY ARRAY[1, 4000, 9000, 14000, 19999] LOOP
        BEGIN
            INSERT INTO lsm_x VALUES (-i, (('x' || md5('x ' || i))::bit(64)::bigint # 5)::simhash64);
        EXCEPTION WHEN exclusion_violation THEN
            conflicts := conflicts + 1;
        END;
    END LOOP;
    RAISE NOTICE 'conflicts: % of 5', conflicts;
END $$;
SELECT hamming_check((SELECT conindid::regclass FROM pg_constraint WHERE conrelid = 'lsm_x'::regclass), true);

DROP TABLE lsm_x;
DROP TABLE lsm, lsm_q;
