--
-- Block balls: `sh <@ hamming_block_ball(q, r, b, m)`, the codes within r
-- bits of q that agree with q on block b of m (simhash_block's blocks) --
-- the search of copy b of a block-sharded layout.  The type's text form
-- and errors; the operator against its definition for every cut of 2 to
-- 16 blocks; and a hamming index answering it (from one table when its
-- runs have m tables, through its other searches when not), against a
-- sequential scan: plain, bitmap and index-only scans, runs and a pending
-- list, other conditions beside it, and the near-duplicate constraint's
-- index.
--

-- text form, and the errors of bad values
SELECT hamming_block_ball('0123456789abcdef', 3, 2, 4);
SELECT ' ( 0123456789abcdef , 0 , 16 , 16 ) '::hamming_block_ball;
SELECT nd_test.try($$SELECT '(0123456789abcdef,3,2)'::hamming_block_ball$$);
SELECT nd_test.try($$SELECT '(0123456789abcdef,3,2,4,1)'::hamming_block_ball$$);
SELECT nd_test.try($$SELECT '(0123456789abcdef,65,2,4)'::hamming_block_ball$$);
SELECT nd_test.try($$SELECT '(0123456789abcdef,-1,2,4)'::hamming_block_ball$$);
SELECT nd_test.try($$SELECT '(0123456789abcdef,3,5,4)'::hamming_block_ball$$);
SELECT nd_test.try($$SELECT '(0123456789abcdef,3,0,4)'::hamming_block_ball$$);
SELECT nd_test.try($$SELECT '(0123456789abcdef,3,1,17)'::hamming_block_ball$$);
SELECT nd_test.try($$SELECT '(0123456789abcdef,3,1,99999999999)'::hamming_block_ball$$);
SELECT nd_test.try($$SELECT hamming_block_ball('0123456789abcdef', 2147483647, 1, 4)$$);
SELECT nd_test.try($$SELECT hamming_block_ball('0123456789abcdef', 3, -2147483648, 4)$$);
SELECT nd_test.try($$SELECT hamming_block_ball('0123456789abcdef', 3, 1, 1)$$);

-- the operator against its definition: within r, and block b of m equal,
-- for every cut; codes 0 to 6 bits from the centers, so that each of
-- 2,000 pairs per cut falls on either side of both conditions
CREATE TEMP TABLE bb_pairs AS
SELECT c, (c::bigint # (SELECT coalesce(bit_or(1::bigint << ((i * 37 + k * 11) % 64)), 0)
                        FROM generate_series(1, i % 7) k))::simhash64 AS sh, i % 7 AS r
FROM (SELECT i, ('x' || md5('bb pair ' || i))::bit(64)::bigint::simhash64 AS c
      FROM generate_series(1, 2000) i) s;
SELECT count(*) AS checks,
       count(*) FILTER (WHERE sh <@ hamming_block_ball(c, r, b, m)) AS inside,
       count(*) FILTER (WHERE (sh <@ hamming_block_ball(c, r, b, m)) IS DISTINCT FROM
                              (sh <~> c <= r AND simhash_block(sh, b, m) = simhash_block(c, b, m))) AS wrong,
       count(*) FILTER (WHERE (hamming_block_ball(c, r, b, m) @> sh) IS DISTINCT FROM
                              (sh <@ hamming_block_ball(c, r, b, m))) AS commutator_wrong,
       count(*) FILTER (WHERE hamming_block_ball(c, r, b, m)::text::hamming_block_ball::text
                              <> hamming_block_ball(c, r, b, m)::text) AS text_round_trip_wrong
FROM bb_pairs, generate_series(2, 16) m, generate_series(1, m) b;
-- inside and outside on the block, for one cut
SELECT count(*) FILTER (WHERE sh <~> c <= r AND simhash_block(sh, 2, 4) = simhash_block(c, 2, 4)) AS agree,
       count(*) FILTER (WHERE sh <~> c <= r AND simhash_block(sh, 2, 4) <> simhash_block(c, 2, 4)) AS differ
FROM bb_pairs;

-- a table of random codes with near copies of the query centers, 1 to 6
-- bits away in any block; a hamming index of 4 tables, with several runs
-- and a pending list
CREATE TABLE bb (id int, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO bb SELECT i, ('x' || md5('bb ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 40000) i;
CREATE TABLE bb_q (qid int, q simhash64);
INSERT INTO bb_q
SELECT q, ('x' || md5('bb q ' || q))::bit(64)::bigint::simhash64 FROM generate_series(1, 12) q;
INSERT INTO bb
SELECT 100000 + q.qid * 100 + j,
       (q.q::bigint # (SELECT bit_or(1::bigint << ((j * 13 + k * 29 + q.qid) % 64))
                       FROM generate_series(1, 1 + j % 6) k))::simhash64
FROM bb_q q, generate_series(1, 40) j WHERE q.qid <= 8;
CREATE INDEX bb_sh ON bb USING hamming (sh) WITH (blocks = 4, pending_limit = 64, background_merge = off);
INSERT INTO bb SELECT i, ('x' || md5('bb ' || i))::bit(64)::bigint::simhash64 FROM generate_series(40001, 60000) i;
INSERT INTO bb
SELECT 200000 + q.qid * 100 + j,
       (q.q::bigint # (1::bigint << ((j * 7 + q.qid) % 64)) # (1::bigint << ((j * 3) % 64)))::simhash64
FROM bb_q q, generate_series(1, 30) j;
DELETE FROM bb WHERE id % 10 = 3;
SELECT count(*) > 1 AS runs, sum(entries) > 0 AS entries FROM hamming_runs('bb_sh');
SELECT pending_entries > 0 AS pending FROM hamming_stats('bb_sh');
VACUUM bb;

-- the plan: the block ball is the index condition
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM bb WHERE sh <@ hamming_block_ball('0123456789abcdef', 3, 2, 4);
RESET enable_bitmapscan;
RESET enable_seqscan;

-- every answer through the index (plain, bitmap, index-only) against a
-- sequential scan: radius 0 to 6, every block of 4 (the index's cut), of
-- 3 and 5 (not its cut: searched as the ball, filtered on the block)
CREATE FUNCTION pg_temp.bb_answers(use_index bool, tbl text DEFAULT 'bb', idx text DEFAULT 'bb_sh',
                                    kinds text[] DEFAULT ARRAY['plain', 'bitmap', 'index-only'],
                                    radius_step int DEFAULT 1)
RETURNS TABLE (kind text, qid int, r int, m int, b int, rows int, answer text)
LANGUAGE plpgsql AS $$
DECLARE
    q record;
BEGIN
    PERFORM set_config('enable_seqscan', (NOT use_index)::text, true);
    FOR q IN SELECT * FROM bb_q ORDER BY qid LOOP
        qid := q.qid;
        FOREACH kind IN ARRAY kinds LOOP
            PERFORM set_config('enable_indexscan', (use_index AND kind <> 'bitmap')::text, true);
            PERFORM set_config('enable_indexonlyscan', (use_index AND kind = 'index-only')::text, true);
            PERFORM set_config('enable_bitmapscan', (use_index AND kind = 'bitmap')::text, true);
            FOR mm IN 3 .. 5 LOOP
                FOR bb IN 1 .. mm LOOP
                    FOR rr IN 0 .. 6 BY radius_step LOOP
                        m := mm;
                        b := bb;
                        r := rr;
                        answer := nd_test.answer(use_index, idx, CASE kind
                            WHEN 'index-only' THEN format(
                                'SELECT format(''%%s:%%s'', count(*), sum(hashint8(sh::bigint))) FROM %s WHERE sh <@ hamming_block_ball(%L, %s, %s, %s)',
                                tbl, q.q, r, b, m)
                            ELSE format(
                                'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM %s WHERE sh <@ hamming_block_ball(%L, %s, %s, %s)',
                                tbl, q.q, r, b, m) END);
                        rows := split_part(answer, ':', 1)::int;
                        RETURN NEXT;
                    END LOOP;
                END LOOP;
            END LOOP;
        END LOOP;
    END LOOP;
END $$;
WITH i AS (SELECT * FROM pg_temp.bb_answers(true)),
     s AS (SELECT * FROM pg_temp.bb_answers(false))
SELECT i.kind, i.m, count(*) AS queries, sum(i.rows) AS rows,
       count(*) FILTER (WHERE i.rows > 0 AND i.rows < (SELECT count(*) FROM bb WHERE sh <~> q.q <= i.r)) AS fewer_than_the_ball,
       count(*) FILTER (WHERE i.answer = s.answer) AS agree
FROM i JOIN s USING (kind, qid, r, m, b) JOIN bb_q q USING (qid)
GROUP BY i.kind, i.m ORDER BY i.kind, i.m;

-- beside other conditions on the column: a ball of another center, a
-- second block ball, the order of nearest neighbours
CREATE FUNCTION pg_temp.bb_mixed(use_index bool) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    q record;
BEGIN
    PERFORM set_config('enable_seqscan', (NOT use_index)::text, true);
    PERFORM set_config('enable_indexscan', use_index::text, true);
    PERFORM set_config('enable_indexonlyscan', use_index::text, true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    FOR q IN SELECT a.q AS q1, (a.q::bigint # 7)::simhash64 AS q2 FROM bb_q a ORDER BY qid LOOP
        RETURN NEXT nd_test.answer(use_index, 'bb_sh', format(
            'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM bb WHERE sh <@ hamming_block_ball(%L, 5, 3, 4) AND sh <@ hamming_ball(%L, 4)',
            q.q1, q.q2));
        RETURN NEXT nd_test.answer(use_index, 'bb_sh', format(
            'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM bb WHERE sh <@ hamming_block_ball(%L, 6, 1, 4) AND sh <@ hamming_block_ball(%L, 6, 4, 4)',
            q.q1, q.q1));
        RETURN NEXT nd_test.answer(use_index, 'bb_sh', format(
            'SELECT string_agg(d::text, '','') FROM (SELECT sh <~> %L AS d FROM bb WHERE sh <@ hamming_block_ball(%L, 12, 2, 4) ORDER BY sh <~> %L LIMIT 5) s',
            q.q1, q.q1, q.q1));
    END LOOP;
END $$;
SELECT count(*) AS queries, count(*) FILTER (WHERE i = s) AS agree,
       count(*) FILTER (WHERE i NOT IN ('0:', '')) AS answered
FROM unnest(ARRAY(SELECT pg_temp.bb_mixed(true)), ARRAY(SELECT pg_temp.bb_mixed(false))) x(i, s);

-- one table of four: a block ball reads fewer pages than its ball (an
-- index-only scan of one run, radius 3: the ball probes each table once)
REINDEX INDEX bb_sh;
SELECT count(*) = 1 AS one_run FROM hamming_runs('bb_sh');
SELECT sum(nd_test.index_pages(format('SELECT sh FROM bb WHERE sh <@ hamming_block_ball(%L, 3, 2, 4)', q)))
       < sum(nd_test.index_pages(format('SELECT sh FROM bb WHERE sh <@ hamming_ball(%L, 3)', q))) AS block_ball_reads_fewer
FROM bb_q;

-- the near-duplicate constraint's index answers block balls as an index
-- on the column would
CREATE TABLE bb_c (id int, sh simhash64, CONSTRAINT bb_c_near EXCLUDE USING hamming (hamming_ball(sh, 1) WITH &&));
INSERT INTO bb_c SELECT id, sh FROM bb WHERE id <= 60000;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM bb_c WHERE sh <@ hamming_block_ball('0123456789abcdef', 3, 2, 4);
SELECT count(*) AS queries, count(*) FILTER (WHERE i = s) AS agree, sum(split_part(i, ':', 1)::int) AS rows
FROM (SELECT nd_test.answer(true, 'bb_c_near', format(
             'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM bb_c WHERE sh <@ hamming_block_ball(%L, 6, %s, 4)', q, b)) AS i,
             (SELECT format('%s:%s', count(*), sum(id)) FROM bb_c WHERE sh <~> q <= 6
                AND simhash_block(sh, b, 4) = simhash_block(q, b, 4)) AS s
      FROM (SELECT q FROM bb_q UNION ALL SELECT sh FROM bb WHERE id BETWEEN 100 AND 120) qs, generate_series(1, 4) b) x;
RESET enable_bitmapscan;
RESET enable_seqscan;

-- GiST answers block balls exactly (it skips subtrees that differ on the
-- block), GIN searches the ball and rechecks the block: the plans, and
-- every answer (GiST plain, index-only and bitmap; GIN bitmap) against a
-- sequential scan, for blocks of cuts 3 to 5 and radius 0 to 6
CREATE TABLE bb_g (id int, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO bb_g SELECT id, sh FROM bb;
CREATE INDEX bb_g_gist ON bb_g USING gist (sh);
CREATE TABLE bb_n (id int, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO bb_n SELECT id, sh FROM bb;
CREATE INDEX bb_n_gin ON bb_n USING gin (sh);
VACUUM ANALYZE bb_g, bb_n;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM bb_g WHERE sh <@ hamming_block_ball('0123456789abcdef', 3, 2, 4);
EXPLAIN (COSTS OFF)
SELECT id FROM bb_n WHERE sh <@ hamming_block_ball('0123456789abcdef', 3, 2, 4);
RESET enable_seqscan;
CREATE FUNCTION pg_temp.gg_answers(use_index bool)
RETURNS TABLE (kind text, qid int, r int, m int, b int, rows int, answer text)
LANGUAGE sql AS $$
    SELECT 'gist ' || kind, qid, r, m, b, rows, answer
    FROM pg_temp.bb_answers(use_index, 'bb_g', 'bb_g_gist', ARRAY['plain', 'index-only', 'bitmap'], 2)
    UNION ALL
    SELECT 'gin ' || kind, qid, r, m, b, rows, answer
    FROM pg_temp.bb_answers(use_index, 'bb_n', 'bb_n_gin', ARRAY['bitmap'], 2)
$$;
WITH i AS (SELECT * FROM pg_temp.gg_answers(true)),
     s AS (SELECT * FROM pg_temp.gg_answers(false))
SELECT i.kind, count(*) AS queries, sum(i.rows) AS rows,
       count(*) FILTER (WHERE i.rows > 0 AND i.rows < (SELECT count(*) FROM bb WHERE sh <~> q.q <= i.r)) AS fewer_than_the_ball,
       count(*) FILTER (WHERE i.answer = s.answer) AS agree
FROM i JOIN s USING (kind, qid, r, m, b) JOIN bb_q q USING (qid)
GROUP BY i.kind ORDER BY i.kind;

DROP TABLE bb, bb_q, bb_c, bb_pairs, bb_g, bb_n;
