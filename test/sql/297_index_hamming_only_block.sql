--
-- A hamming index of one table: WITH (only_block = b) keeps only the table
-- that leads with block b, a quarter of a 4-block index.  A block ball of
-- block b reads one block value of it; every other search runs the steps
-- of one table (the block values at each distance from the query's) or a
-- flat pass, and must answer exactly as a sequential scan: every query
-- form of nd_test.hamming_compare, block balls of every block, after
-- flushes, compactions, deletes and VACUUM; the integrity check; the
-- option's errors.
--

CREATE TABLE ob (id int, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO ob SELECT i, ('x' || md5('ob ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 30000) i;
CREATE TABLE ob_q (qid int, q simhash64);
INSERT INTO ob_q
SELECT q, ('x' || md5('ob q ' || q))::bit(64)::bigint::simhash64 FROM generate_series(1, 6) q;
INSERT INTO ob
SELECT 100000 + q.qid * 100 + j,
       (q.q::bigint # (SELECT bit_or(1::bigint << ((j * 13 + k * 29 + q.qid) % 64))
                       FROM generate_series(1, 1 + j % 6) k))::simhash64
FROM ob_q q, generate_series(1, 40) j WHERE q.qid <= 4;
INSERT INTO ob VALUES (900001, NULL), (900002, NULL);
CREATE INDEX ob_sh ON ob USING hamming (sh) WITH (blocks = 4, only_block = 2, pending_limit = 64, background_merge = off);
CREATE INDEX ob_full ON ob USING hamming (sh) WITH (blocks = 4);

-- a quarter of the full index's pages, one table a run
SELECT pg_relation_size('ob_sh') * 1.0 / pg_relation_size('ob_full') < 0.3 AS a_quarter,
       (SELECT array_agg(DISTINCT tables) FROM hamming_runs('ob_sh')) AS tables,
       (SELECT array_agg(DISTINCT tables) FROM hamming_runs('ob_full')) AS full_tables;
DROP INDEX ob_full;

-- runs from flushes and compactions, a pending list, deletes, VACUUM
INSERT INTO ob SELECT i, ('x' || md5('ob ' || i))::bit(64)::bigint::simhash64 FROM generate_series(30001, 45000) i;
DELETE FROM ob WHERE id % 10 = 7;
VACUUM ob;
INSERT INTO ob SELECT i, ('x' || md5('ob ' || i))::bit(64)::bigint::simhash64 FROM generate_series(45001, 46000) i;
SELECT count(*) > 1 AS runs, bool_and(tables = 1) AS one_table FROM hamming_runs('ob_sh');
SELECT pending_entries > 0 AS pending FROM hamming_stats('ob_sh');
SELECT hamming_check('ob_sh', true);

-- every query form against a sequential scan
SELECT * FROM nd_test.hamming_compare('ob', 'ob_q', 'ob_sh');

-- block balls of every block: block 2 from its one table, the others by
-- the steps of that table, filtered on the block
CREATE FUNCTION pg_temp.ob_answers(use_index bool)
RETURNS TABLE (qid int, b int, r int, rows int, answer text)
LANGUAGE plpgsql AS $$
DECLARE
    q record;
BEGIN
    PERFORM set_config('enable_seqscan', (NOT use_index)::text, true);
    PERFORM set_config('enable_indexscan', use_index::text, true);
    PERFORM set_config('enable_bitmapscan', use_index::text, true);
    FOR q IN SELECT * FROM ob_q ORDER BY qid LOOP
        qid := q.qid;
        FOR bb IN 1 .. 4 LOOP
            FOR rr IN 0 .. 6 LOOP
                b := bb;
                r := rr;
                answer := nd_test.answer(use_index, 'ob_sh', format(
                    'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM ob WHERE sh <@ hamming_block_ball(%L, %s, %s, 4)',
                    q.q, r, b));
                rows := split_part(answer, ':', 1)::int;
                RETURN NEXT;
            END LOOP;
        END LOOP;
    END LOOP;
END $$;
WITH i AS (SELECT * FROM pg_temp.ob_answers(true)),
     s AS (SELECT * FROM pg_temp.ob_answers(false))
SELECT i.b, count(*) AS queries, sum(i.rows) AS rows, count(*) FILTER (WHERE i.answer = s.answer) AS agree
FROM i JOIN s USING (qid, b, r) GROUP BY i.b ORDER BY i.b;

-- the block ball of its block reads a few pages; the ball reads more
SELECT sum(nd_test.index_pages(format('SELECT sh FROM ob WHERE sh <@ hamming_block_ball(%L, 3, 2, 4)', q)))
       < sum(nd_test.index_pages(format('SELECT sh FROM ob WHERE sh <@ hamming_ball(%L, 3)', q))) AS block_ball_reads_fewer
FROM ob_q;

-- the cost model: a block ball of its block is a probe of one block value;
-- another block's is a search of the ball, costed as the radius search
SELECT b,
       nd_test.index_cost(format('SELECT id FROM ob WHERE sh <@ hamming_block_ball(%L, 3, %s, 4)', q, b))
         > nd_test.index_cost(format('SELECT id FROM ob WHERE sh <@ hamming_block_ball(%L, 3, 2, 4)', q)) AS costs_more,
       nd_test.index_cost(format('SELECT id FROM ob WHERE sh <@ hamming_block_ball(%L, 3, %s, 4)', q, b))
         = nd_test.index_cost(format('SELECT id FROM ob WHERE sh <@ hamming_ball(%L, 3)', q)) AS as_the_ball
FROM ob_q, generate_series(1, 4) b WHERE qid = 1 ORDER BY b;

-- beside another ball, the block ball of its block drives the scan (one
-- probe, the other ball a filter): the pages of that probe alone, and the
-- rows of a sequential scan
CREATE FUNCTION pg_temp.ob_pair(q simhash64, use_index bool) RETURNS text[]
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_seqscan', (NOT use_index)::text, true);
    PERFORM set_config('enable_indexscan', use_index::text, true);
    PERFORM set_config('enable_bitmapscan', use_index::text, true);
    RETURN ARRAY[
        nd_test.answer(use_index, 'ob_sh', format('SELECT format(''%%s:%%s'', count(*), sum(id)) FROM ob WHERE sh <@ hamming_block_ball(%L, 3, 1, 4) AND sh <@ hamming_block_ball(%L, 3, 2, 4)', q, q)),
        nd_test.answer(use_index, 'ob_sh', format('SELECT format(''%%s:%%s'', count(*), sum(id)) FROM ob WHERE sh <@ hamming_ball(%L, 2) AND sh <@ hamming_block_ball(%L, 3, 2, 4)', q, q))];
END $$;
SELECT sum(nd_test.index_pages(format('SELECT sh FROM ob WHERE sh <@ hamming_block_ball(%L, 3, 1, 4) AND sh <@ hamming_block_ball(%L, 3, 2, 4)', q, q)))
         <= sum(nd_test.index_pages(format('SELECT sh FROM ob WHERE sh <@ hamming_block_ball(%L, 3, 2, 4)', q))) AS before_another_block,
       sum(nd_test.index_pages(format('SELECT sh FROM ob WHERE sh <@ hamming_ball(%L, 2) AND sh <@ hamming_block_ball(%L, 3, 2, 4)', q, q)))
         <= sum(nd_test.index_pages(format('SELECT sh FROM ob WHERE sh <@ hamming_block_ball(%L, 3, 2, 4)', q))) AS before_a_smaller_ball,
       count(*) FILTER (WHERE pg_temp.ob_pair(q, true) = pg_temp.ob_pair(q, false)) AS agree,
       count(*) AS queries
FROM ob_q;

-- the option: its bounds, and no change after the build
SELECT nd_test.try($$CREATE INDEX ON ob USING hamming (sh) WITH (blocks = 4, only_block = 5)$$);
SELECT nd_test.try($$CREATE INDEX ON ob USING hamming (sh) WITH (only_block = -1)$$);
SELECT nd_test.try($$CREATE INDEX ON ob USING hamming (sh) WITH (blocks = 3, only_block = 4)$$);
SELECT nd_test.try($$ALTER INDEX ob_sh SET (only_block = 1)$$, with_detail => true);
SELECT nd_test.try($$ALTER INDEX ob_sh RESET (only_block)$$);
ALTER INDEX ob_sh SET (only_block = 2);

-- REINDEX keeps the option; the constraint's index may have it too
REINDEX INDEX ob_sh;
SELECT count(*) AS runs, bool_and(tables = 1) AS one_table FROM hamming_runs('ob_sh');
SELECT count(*) FILTER (WHERE i.answer = s.answer) AS agree, count(*) AS queries
FROM pg_temp.ob_answers(true) i JOIN pg_temp.ob_answers(false) s USING (qid, b, r);
CREATE TABLE ob_c (id int, sh simhash64,
                   EXCLUDE USING hamming (hamming_ball(sh, 2) WITH &&) WITH (only_block = 1, pending_limit = 64));
INSERT INTO ob_c SELECT id, sh FROM ob WHERE id <= 20000;
SELECT nd_test.try(format($$INSERT INTO ob_c VALUES (0, %L)$$,
                          ((SELECT sh FROM ob WHERE id = 1234)::bigint # 5)::simhash64));
SELECT hamming_check(c.conindid::regclass, true)
FROM pg_constraint c WHERE c.conrelid = 'ob_c'::regclass;

DROP TABLE ob, ob_q, ob_c;
