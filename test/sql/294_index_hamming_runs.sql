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

-- Every answer with the index (the plan must use it) and without (it must
-- not), query by query: nd_test.hamming_answers and hamming_compare, in
-- 000_setup.

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
SELECT * FROM nd_test.hamming_compare('lsm', 'lsm_q', 'lsm_sh');
SELECT hamming_check('lsm_sh', true);

-- Deletes and VACUUM between merges: entries leave every run in place.
DELETE FROM lsm WHERE id % 3 = 0;
VACUUM lsm;
SELECT * FROM nd_test.hamming_compare('lsm', 'lsm_q', 'lsm_sh');
SELECT hamming_check('lsm_sh', true);

-- Twelve more batches: compactions take the vacuumed runs (the merged run
-- holds fewer entries than its inputs were written with); two runs of
-- tier 1 (4 to 16 flushes' worth) and one of tier 0 are left.
SELECT pg_temp.batch(b, 3000) FROM generate_series(9, 20) b;
SELECT run, entries, tables FROM hamming_runs('lsm_sh');
VACUUM lsm;
SELECT * FROM nd_test.hamming_compare('lsm', 'lsm_q', 'lsm_sh');
SELECT hamming_check('lsm_sh', true);

-- VACUUM flushed the list (it held more than a sixteenth of the runs);
-- hamming_merge flushes a shorter one.  The runs then hold every entry.
SELECT pg_temp.batch(21, 100);
SELECT hamming_merge('lsm_sh') AS flushed;
SELECT pending_entries, sealed_entries FROM hamming_stats('lsm_sh');
SELECT (SELECT sum(entries) FROM hamming_runs('lsm_sh')) >= (SELECT count(sh) FROM lsm) AS all_in_runs;
SELECT * FROM nd_test.hamming_compare('lsm', 'lsm_q', 'lsm_sh');

-- REINDEX writes one run again.
REINDEX INDEX lsm_sh;
SELECT run, entries, tables FROM hamming_runs('lsm_sh');
SELECT * FROM nd_test.hamming_compare('lsm', 'lsm_q', 'lsm_sh');

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
