--
-- GiST index over simhash64 (simhash64_gist_ops): radius search, nearest
-- neighbours and equality must return exactly what a sequential scan
-- returns, after the build, after inserts, VACUUM and REINDEX, and for a
-- tree built by page splits (buffering = on) instead of by sorting.
--

-- The operator class is the default one and passes the core's validator.
SELECT opc.opcname, opc.opcdefault, opc.opckeytype::regtype, amvalidate(opc.oid)
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE am.amname = 'gist' AND opc.opcintype = 'simhash64'::regtype;
SELECT amop.amopstrategy, amop.amopopr::regoperator, amop.amoppurpose,
       amop.amopsortfamily::regclass IS NULL AS no_sortfamily
FROM pg_amop amop JOIN pg_opfamily f ON f.oid = amop.amopfamily
WHERE f.opfname = 'simhash64_gist_ops'
ORDER BY amop.amopstrategy, amop.amoprighttype::regtype::text DESC;
-- The key type is internal to the index.
SELECT '(0,0)'::neardup_internal.simhash64_gist_key;

-- Deterministic data: random codes, planted neighbours at distance 0..5 of
-- codes 1..50, runs of exact duplicates, all-zero and all-one codes, a
-- dense region, NULLs.
CREATE TABLE gist_doc (id int, sh simhash64);
INSERT INTO gist_doc
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64
FROM generate_series(1, 50000) i;
INSERT INTO gist_doc
SELECT 100000 + c * 10 + d,
       (('x' || md5(c::text))::bit(64)::bigint # (((1::bigint << d) - 1) << (c % 50)))::simhash64
FROM generate_series(1, 50) c, generate_series(0, 5) d;
INSERT INTO gist_doc
SELECT 200000 + i, ('x' || md5('dup ' || (CASE WHEN i <= 300 THEN 0 ELSE i % 3 + 1 END)))::bit(64)::bigint::simhash64
FROM generate_series(1, 600) i;
INSERT INTO gist_doc
SELECT 300000 + i, CASE WHEN i % 2 = 0 THEN '0000000000000000' ELSE 'ffffffffffffffff' END::simhash64
FROM generate_series(1, 40) i;
-- A dense region: 5000 codes that only use the low 20 bits, so that the
-- nearest neighbours of codes near zero are spread over many pages.
INSERT INTO gist_doc
SELECT 250000 + i, (hashint4(i) & 1048575)::bigint::simhash64 FROM generate_series(1, 5000) i;
INSERT INTO gist_doc SELECT 400000 + i, NULL FROM generate_series(1, 50) i;

-- No operator class named: the default one.
CREATE INDEX gist_doc_sh ON gist_doc USING gist (sh);
VACUUM ANALYZE gist_doc;

-- Query codes: planted centers, a duplicated code, the extremes, a code 3
-- bits from zero, fresh random codes.
CREATE TABLE gist_q (qid int, q simhash64);
INSERT INTO gist_q
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64 FROM generate_series(1, 6) i
UNION ALL SELECT 7, ('x' || md5('dup 0'))::bit(64)::bigint::simhash64
UNION ALL SELECT 8, '0000000000000000'
UNION ALL SELECT 9, 'ffffffffffffffff'
UNION ALL SELECT 10, '0000000000000007'
UNION ALL SELECT 10 + i, ('x' || md5('query ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 4) i;

-- Plans.  Radius search, also written the other way round:
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM gist_doc WHERE sh <@ hamming_ball('0123456789abcdef', 3);
EXPLAIN (COSTS OFF)
SELECT id FROM gist_doc WHERE hamming_ball('0123456789abcdef', 3) @> sh;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM gist_doc WHERE sh <@ hamming_ball('0123456789abcdef', 3);
EXPLAIN (COSTS OFF)
SELECT id FROM gist_doc WHERE sh = '0123456789abcdef';
RESET enable_seqscan;
-- Nearest neighbours with no radius: a GiST KNN scan reads nearly every
-- page before its first row (5x slower than a seq scan and a top-N sort at
-- 1M rows), so the planner does not pick it; forced, it serves them.
-- Through plain index scans only, also when only sh is read: GiST's
-- index-only scans may return rows a concurrent VACUUM removed, so 0.3
-- gives the operator class no fetch function (doc/index-gist.md).
EXPLAIN (COSTS OFF)
SELECT id FROM gist_doc ORDER BY sh <~> '0123456789abcdef' LIMIT 10;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT sh FROM gist_doc ORDER BY sh <~> '0123456789abcdef' LIMIT 10;
RESET enable_seqscan;
-- A second sort key cannot be served by the index ordering (PostgreSQL 15
-- matches ORDER BY lists to an index only as a whole): sort outside instead.
EXPLAIN (COSTS OFF)
SELECT id FROM gist_doc ORDER BY sh <~> '0123456789abcdef', id LIMIT 10;
-- (PostgreSQL 16 and later sort only the ties there, an Incremental Sort:
-- shown as the plain sort every major can make)
SET enable_incremental_sort = off;
EXPLAIN (COSTS OFF)
SELECT * FROM (SELECT id, sh <~> '0123456789abcdef' AS d FROM gist_doc
               ORDER BY sh <~> '0123456789abcdef' LIMIT 10) s ORDER BY d, id;
RESET enable_incremental_sort;

-- A small answer in full: the planted neighbours of code 1, and its
-- nearest neighbours with distances (ties broken by id).
SELECT id, sh <~> q AS d FROM gist_doc, gist_q
WHERE qid = 1 AND sh <@ hamming_ball(q, 5) ORDER BY id;
SELECT * FROM (SELECT id, sh <~> (SELECT q FROM gist_q WHERE qid = 1) AS d FROM gist_doc
               ORDER BY sh <~> (SELECT q FROM gist_q WHERE qid = 1) LIMIT 7) s
ORDER BY d, id;

/*
 * Every answer, with the index (the plan must use it) or without it (the
 * plan must not): the ids within radius -1..6, 64 and 100 (-1 and 100 by
 * the comparison, the others by hamming_ball(); the last two
 * hold every non-null row: count and checksums of the ids); the distances
 * of the 10 nearest, in the order returned (which of several rows at the
 * same distance come first is not defined), with the rows' ids and with
 * their codes only; the codes within radius 3; the number of
 * rows equal to the query.
 */

-- The condition of radius rad: sh <@ hamming_ball(q, rad) for 0..64; the
-- comparison, which takes any radius, for others (hamming_ball() refuses
-- them, and the planner clamps the ball it builds from the comparison).
CREATE FUNCTION pg_temp.ball_or_bound(q simhash64, rad int) RETURNS text
LANGUAGE sql AS $$
    SELECT CASE WHEN rad BETWEEN 0 AND 64 THEN format('sh <@ hamming_ball(%L, %s)', q, rad)
                ELSE format('sh <~> %L <= %s', q, rad) END
$$;

CREATE FUNCTION pg_temp.answers(use_index bool)
RETURNS TABLE (what text, qid int, r int, rows int, answer text)
LANGUAGE plpgsql AS $$
DECLARE
    q record;
    rad int;
BEGIN
    PERFORM set_config('enable_seqscan', (NOT use_index)::text, true);
    PERFORM set_config('enable_indexscan', use_index::text, true);
    PERFORM set_config('enable_indexonlyscan', use_index::text, true);
    PERFORM set_config('enable_bitmapscan', use_index::text, true);
    FOR q IN SELECT * FROM gist_q ORDER BY gist_q.qid LOOP
        qid := q.qid;
        FOREACH rad IN ARRAY ARRAY[-1, 0, 1, 2, 3, 4, 5, 6, 64, 100] LOOP
            what := 'radius';
            r := rad;
            IF rad < 64 THEN
                answer := nd_test.answer(use_index, 'gist_doc_sh', format(
                    'SELECT string_agg(id::text, '','' ORDER BY id) FROM gist_doc WHERE %s',
                    pg_temp.ball_or_bound(q.q, rad)));
                rows := coalesce(array_length(string_to_array(answer, ','), 1), 0);
            ELSE
                -- every non-null row: compared by count and checksums
                answer := nd_test.answer(use_index, 'gist_doc_sh', format(
                    'SELECT format(''%%s:%%s:%%s'', count(*), sum(id), bit_xor(hashint4(id))) FROM gist_doc WHERE %s',
                    pg_temp.ball_or_bound(q.q, rad)));
                rows := split_part(answer, ':', 1)::int;
            END IF;
            RETURN NEXT;
        END LOOP;
        r := NULL;
        what := 'knn index scan';
        answer := nd_test.answer(use_index, 'gist_doc_sh', format(
            'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> %L AS d FROM gist_doc ORDER BY sh <~> %L LIMIT 10) s',
            q.q, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        -- the distances alone: what was an index-only scan before 0.3
        what := 'knn codes only';
        answer := nd_test.answer(use_index, 'gist_doc_sh', format(
            'SELECT string_agg(d::text, '','') FROM (SELECT sh <~> %L AS d FROM gist_doc ORDER BY sh <~> %L LIMIT 10) s',
            q.q, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        what := 'radius 3 codes';
        answer := nd_test.answer(use_index, 'gist_doc_sh', format(
            'SELECT string_agg(sh::text, '','' ORDER BY sh) FROM gist_doc WHERE sh <@ hamming_ball(%L, 3)',
            q.q));
        rows := coalesce(array_length(string_to_array(answer, ','), 1), 0);
        RETURN NEXT;
        what := 'equality';
        answer := nd_test.answer(use_index, 'gist_doc_sh', format(
            'SELECT count(*)::text FROM gist_doc WHERE sh = %L', q.q));
        rows := answer::int;
        RETURN NEXT;
    END LOOP;
END $$;

-- Compares the two; one line per kind of query.
CREATE FUNCTION pg_temp.compare()
RETURNS TABLE (what text, queries bigint, rows bigint, agree bigint)
LANGUAGE sql AS $$
    WITH i AS (SELECT * FROM pg_temp.answers(true)),
         s AS (SELECT * FROM pg_temp.answers(false))
    SELECT i.what, count(*), sum(i.rows), count(*) FILTER (WHERE i.answer IS NOT DISTINCT FROM s.answer)
    FROM i JOIN s ON s.what = i.what AND s.qid = i.qid AND s.r IS NOT DISTINCT FROM i.r
    GROUP BY i.what ORDER BY i.what
$$;

-- After the (sorted) build, radius by radius:
CREATE TEMP TABLE ans_idx AS SELECT * FROM pg_temp.answers(true);
CREATE TEMP TABLE ans_seq AS SELECT * FROM pg_temp.answers(false);
SELECT i.what, i.r, count(*) AS queries, sum(i.rows) AS rows,
       count(*) FILTER (WHERE i.answer IS NOT DISTINCT FROM s.answer) AS agree
FROM ans_idx i JOIN ans_seq s ON s.what = i.what AND s.qid = i.qid AND s.r IS NOT DISTINCT FROM i.r
GROUP BY i.what, i.r ORDER BY i.what, i.r;

-- Inserts after the build: more neighbours of code 1, codes with one or
-- two bits set, more duplicates, random codes (page splits all over the
-- tree).
INSERT INTO gist_doc
SELECT 500000 + i, (('x' || md5('1'))::bit(64)::bigint # (1::bigint << (i % 64)))::simhash64
FROM generate_series(1, 64) i;
INSERT INTO gist_doc
SELECT 600000 + i, ((1::bigint << (i % 64)) | (1::bigint << ((i * 7) % 64)))::simhash64
FROM generate_series(1, 200) i;
INSERT INTO gist_doc
SELECT 700000 + i, ('x' || md5('dup 0'))::bit(64)::bigint::simhash64 FROM generate_series(1, 500) i;
INSERT INTO gist_doc
SELECT 800000 + i, ('x' || md5('more ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 20000) i;
INSERT INTO gist_doc SELECT 900000 + i, NULL FROM generate_series(1, 10) i;
VACUUM ANALYZE gist_doc;
SELECT * FROM pg_temp.compare();

-- Deletes and VACUUM: the duplicates of 'dup 0', half of the random codes.
DELETE FROM gist_doc WHERE sh = ('x' || md5('dup 0'))::bit(64)::bigint::simhash64 OR id % 2 = 0;
VACUUM ANALYZE gist_doc;
SELECT * FROM pg_temp.compare();

REINDEX INDEX gist_doc_sh;
SELECT * FROM pg_temp.compare();

-- Trees built by inserting and splitting pages, not by sorting.
DROP INDEX gist_doc_sh;
CREATE INDEX gist_doc_sh ON gist_doc USING gist (sh) WITH (buffering = on);
SELECT * FROM pg_temp.compare();
-- Pages filled to 10% while building: a deeper tree, with inner pages split.
DROP INDEX gist_doc_sh;
CREATE INDEX gist_doc_sh ON gist_doc USING gist (sh) WITH (buffering = on, fillfactor = 10);
SELECT * FROM pg_temp.compare();

-- Prepared statements, with the ball / the query code as a parameter, in a
-- generic plan.
SET plan_cache_mode = force_generic_plan;
PREPARE gist_near(hamming_ball) AS
SELECT count(*) AS n, min(sh <~> center($1)) AS min_d, max(sh <~> center($1)) AS max_d
FROM gist_doc WHERE sh <@ $1;
EXPLAIN (COSTS OFF) EXECUTE gist_near(hamming_ball('0000000000000000', 2));
EXECUTE gist_near(hamming_ball('0000000000000000', 2));
EXECUTE gist_near(hamming_ball('ffffffffffffffff', 0));
EXECUTE gist_near('(ffffffffffffffff,-1)'::hamming_ball);
PREPARE gist_knn(simhash64) AS
SELECT sh <~> $1 AS d FROM gist_doc ORDER BY sh <~> $1 LIMIT 5;
EXPLAIN (COSTS OFF) EXECUTE gist_knn('0000000000000000');
EXECUTE gist_knn('0000000000000000');
EXECUTE gist_knn('8000000000000001');
-- The same without the index.
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS n, min(sh <~> '0000000000000000') AS min_d, max(sh <~> '0000000000000000') AS max_d
FROM gist_doc WHERE sh <~> '0000000000000000' <= 2;
SELECT sh <~> '8000000000000001' AS d FROM gist_doc ORDER BY 1 LIMIT 5;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
RESET plan_cache_mode;
DEALLOCATE gist_near;
DEALLOCATE gist_knn;

-- NULLs: never within a ball, last in a nearest-neighbour scan (as in a
-- sort), and a NULL query finds nothing.
CREATE TABLE gist_small (id int, sh simhash64);
INSERT INTO gist_small VALUES (1, '00000000000000ff'), (2, NULL), (3, '0000000000000000'),
                              (4, NULL), (5, 'ffffffffffffffff');
CREATE INDEX ON gist_small USING gist (sh);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM gist_small ORDER BY sh <~> '0000000000000001';
SELECT string_agg(coalesce(d::text, 'null'), ',') AS distances
FROM (SELECT sh <~> '0000000000000001' AS d FROM gist_small ORDER BY sh <~> '0000000000000001') s;
SELECT id FROM gist_small WHERE sh <@ hamming_ball('0000000000000000', 64) ORDER BY id;
SELECT id FROM gist_small WHERE sh <@ NULL::hamming_ball;
-- An empty index.
TRUNCATE gist_small;
SELECT id FROM gist_small ORDER BY sh <~> '0000000000000001' LIMIT 2;
SELECT count(*) FROM gist_small WHERE sh <@ hamming_ball('0000000000000000', 64);
RESET enable_seqscan;

DROP TABLE gist_doc, gist_q, gist_small;
