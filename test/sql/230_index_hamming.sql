--
-- The hamming index access method: radius search in every spelling,
-- equality and exact nearest neighbours must return exactly what a
-- sequential scan returns -- after the build, with entries in the pending
-- list, after merges (explicit and by inserts), deletes and VACUUM,
-- REINDEX, with each block count, and through both the multi-index hashing
-- steps and the flat passes (small work_mem).
--

-- The access method, its default operator class, the core's validator.
SELECT amname, amtype FROM pg_am WHERE amname = 'hamming';
SELECT opc.opcname, opc.opcdefault, amvalidate(opc.oid)
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE am.amname = 'hamming';
SELECT amop.amopstrategy, amop.amopopr::regoperator, amop.amoppurpose,
       amop.amopsortfamily <> 0 AS sorts
FROM pg_amop amop JOIN pg_opfamily f ON f.oid = amop.amopfamily
WHERE f.opfname = 'simhash64_hamming_ops'
ORDER BY amop.amopstrategy, amop.amoprighttype::regtype::text DESC;
SELECT prop, pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'hamming'), prop)
FROM unnest(ARRAY['can_order', 'can_unique', 'can_multi_col', 'can_exclude', 'can_include']) prop;

-- Deterministic data: random codes; planted neighbours at distance 0..12 of
-- codes 1..40; a group of 300 identical codes and three smaller ones;
-- all-zero and all-one codes; a dense region of codes using the low 20
-- bits only; NULLs.
CREATE TABLE ham_doc (id int, sh simhash64);
INSERT INTO ham_doc
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64
FROM generate_series(1, 40000) i;
INSERT INTO ham_doc
SELECT 100000 + c * 100 + d,
       (('x' || md5(c::text))::bit(64)::bigint # (((1::bigint << d) - 1) << (c % 50)))::simhash64
FROM generate_series(1, 40) c, generate_series(0, 12) d;
INSERT INTO ham_doc
SELECT 200000 + i, ('x' || md5('dup ' || (CASE WHEN i <= 300 THEN 0 ELSE i % 3 + 1 END)))::bit(64)::bigint::simhash64
FROM generate_series(1, 600) i;
INSERT INTO ham_doc
SELECT 300000 + i, CASE WHEN i % 2 = 0 THEN '0000000000000000' ELSE 'ffffffffffffffff' END::simhash64
FROM generate_series(1, 40) i;
INSERT INTO ham_doc
SELECT 250000 + i, (hashint4(i) & 1048575)::bigint::simhash64 FROM generate_series(1, 4000) i;
INSERT INTO ham_doc SELECT 400000 + i, NULL FROM generate_series(1, 30) i;

CREATE INDEX ham_doc_sh ON ham_doc USING hamming (sh);
VACUUM ANALYZE ham_doc;

CREATE TABLE ham_q (qid int, q simhash64);
INSERT INTO ham_q
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64 FROM generate_series(1, 5) i
UNION ALL SELECT 6, ('x' || md5('dup 0'))::bit(64)::bigint::simhash64
UNION ALL SELECT 7, '0000000000000000'
UNION ALL SELECT 8, 'ffffffffffffffff'
UNION ALL SELECT 9, '0000000000000007'
UNION ALL SELECT 9 + i, ('x' || md5('query ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 3) i;

-- Plans: every spelling of a radius search, equality, nearest neighbours
-- (with no other condition, a radius, a filter), a LATERAL join.
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM ham_doc WHERE sh <@ hamming_ball('0123456789abcdef', 3);
EXPLAIN (COSTS OFF) SELECT id FROM ham_doc WHERE hamming_ball('0123456789abcdef', 3) @> sh;
EXPLAIN (COSTS OFF) SELECT id FROM ham_doc WHERE sh <~> '0123456789abcdef' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM ham_doc WHERE '0123456789abcdef' <~> sh < 4;
EXPLAIN (COSTS OFF) SELECT id FROM ham_doc WHERE hamming_distance(sh, '0123456789abcdef') <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM ham_doc WHERE within(sh, '0123456789abcdef', 3);
EXPLAIN (COSTS OFF) SELECT id FROM ham_doc WHERE sh = '0123456789abcdef';
RESET enable_seqscan;
EXPLAIN (COSTS OFF) SELECT id FROM ham_doc ORDER BY sh <~> '0123456789abcdef' LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM ham_doc WHERE sh <~> '0123456789abcdef' <= 8 ORDER BY sh <~> '0123456789abcdef' LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM ham_doc WHERE id % 7 = 0 ORDER BY sh <~> '0123456789abcdef' LIMIT 10;
-- Index-only when only the code is read (the table is all-visible).
EXPLAIN (COSTS OFF) SELECT sh FROM ham_doc ORDER BY sh <~> '0123456789abcdef' LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT q.qid, n.id FROM ham_q q
CROSS JOIN LATERAL (SELECT id FROM ham_doc ORDER BY ham_doc.sh <~> q.q LIMIT 3) n;

-- A small answer in full: the planted neighbours of code 1 within 5 bits,
-- and its 7 nearest with distances (ties broken by id outside).
SELECT id, sh <~> q AS d FROM ham_doc, ham_q WHERE qid = 1 AND sh <~> q <= 5 ORDER BY id;
SELECT * FROM (SELECT id, sh <~> (SELECT q FROM ham_q WHERE qid = 1) AS d FROM ham_doc
               ORDER BY sh <~> (SELECT q FROM ham_q WHERE qid = 1) LIMIT 7) s
ORDER BY d, id;

-- Every answer with the index (the plan must use it) and without (it must
-- not), query by query: nd_test.hamming_answers and hamming_compare, in
-- 000_setup.
-- After the build, radius by radius:
CREATE TEMP TABLE ans_idx AS SELECT * FROM nd_test.hamming_answers(true, 'ham_doc', 'ham_q', 'ham_doc_sh');
CREATE TEMP TABLE ans_seq AS SELECT * FROM nd_test.hamming_answers(false, 'ham_doc', 'ham_q', 'ham_doc_sh');
SELECT i.what, i.r, count(*) AS queries, sum(i.rows) AS rows,
       count(*) FILTER (WHERE i.answer IS NOT DISTINCT FROM s.answer) AS agree
FROM ans_idx i JOIN ans_seq s ON s.what = i.what AND s.qid = i.qid AND s.r IS NOT DISTINCT FROM i.r
GROUP BY i.what, i.r ORDER BY i.what, i.r;

-- Small work_mem: nearest-neighbour scans that need several flat passes.
SET work_mem = '64kB';
SELECT * FROM nd_test.hamming_compare('ham_doc', 'ham_q', 'ham_doc_sh');
RESET work_mem;

-- Inserts after the build land in the pending list: more neighbours of
-- code 1, codes with one or two bits set, more duplicates, random codes.
INSERT INTO ham_doc
SELECT 500000 + i, (('x' || md5('1'))::bit(64)::bigint # (1::bigint << (i % 64)))::simhash64
FROM generate_series(1, 64) i;
INSERT INTO ham_doc
SELECT 600000 + i, ((1::bigint << (i % 64)) | (1::bigint << ((i * 7) % 64)))::simhash64
FROM generate_series(1, 200) i;
INSERT INTO ham_doc
SELECT 700000 + i, ('x' || md5('dup 0'))::bit(64)::bigint::simhash64 FROM generate_series(1, 500) i;
INSERT INTO ham_doc
SELECT 800000 + i, ('x' || md5('more ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 2000) i;
INSERT INTO ham_doc SELECT 900000 + i, NULL FROM generate_series(1, 10) i;
SELECT * FROM nd_test.hamming_compare('ham_doc', 'ham_q', 'ham_doc_sh');
SELECT hamming_check('ham_doc_sh', true);

-- Merged into the run: every pending entry moves.
SELECT hamming_merge('ham_doc_sh') AS merged;
SELECT hamming_merge('ham_doc_sh') AS merged_again;
SELECT * FROM nd_test.hamming_compare('ham_doc', 'ham_q', 'ham_doc_sh');
SELECT hamming_check('ham_doc_sh', true);

-- Rebuilt in less memory than its entries need (1MB keeps 32,768 of these
-- 46,000 in memory): the build hands them to tuplesorts.
SET maintenance_work_mem = '1MB';
REINDEX INDEX ham_doc_sh;
RESET maintenance_work_mem;
SELECT * FROM nd_test.hamming_compare('ham_doc', 'ham_q', 'ham_doc_sh');
SELECT hamming_check('ham_doc_sh', true);

-- Deletes and VACUUM: the duplicates of 'dup 0', half of the random codes.
DELETE FROM ham_doc WHERE sh = ('x' || md5('dup 0'))::bit(64)::bigint::simhash64 OR id % 2 = 0;
VACUUM ANALYZE ham_doc;
SELECT * FROM nd_test.hamming_compare('ham_doc', 'ham_q', 'ham_doc_sh');
SELECT hamming_check('ham_doc_sh', true);

REINDEX INDEX ham_doc_sh;
SELECT * FROM nd_test.hamming_compare('ham_doc', 'ham_q', 'ham_doc_sh');

-- Other block counts.
DROP INDEX ham_doc_sh;
CREATE INDEX ham_doc_sh ON ham_doc USING hamming (sh) WITH (blocks = 3);
SELECT * FROM nd_test.hamming_compare('ham_doc', 'ham_q', 'ham_doc_sh');
SELECT hamming_check('ham_doc_sh', true);
DROP INDEX ham_doc_sh;
CREATE INDEX ham_doc_sh ON ham_doc USING hamming (sh) WITH (blocks = 8);
SELECT * FROM nd_test.hamming_compare('ham_doc', 'ham_q', 'ham_doc_sh');
SELECT hamming_check('ham_doc_sh', true);

-- Inserts that merge by themselves: a pending limit of 64kB (4,681
-- entries), reached several times by 20,000 inserts.
DROP INDEX ham_doc_sh;
CREATE INDEX ham_doc_sh ON ham_doc USING hamming (sh) WITH (pending_limit = 64);
INSERT INTO ham_doc
SELECT 1000000 + i, ('x' || md5('late ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 20000) i;
SELECT * FROM nd_test.hamming_compare('ham_doc', 'ham_q', 'ham_doc_sh');
SELECT hamming_check('ham_doc_sh', true);

-- Who merges.  By default (background_merge on) the insert that finds the
-- list due starts a background worker ("neardup merge") and goes on; with
-- the option off, the inserting session merges before its INSERT returns.
-- 10,000 rows, a pending limit of 4,681 entries, 7,000 inserts: one merge,
-- done by a worker (insert_merges stays 0); then, option off, 7,000 more
-- inserts: one merge, by the session.
CREATE TABLE ham_bg (id int, sh simhash64) WITH (autovacuum_enabled = off);  -- VACUUM merges too
INSERT INTO ham_bg
SELECT i, ('x' || md5('bg ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 10000) i;
CREATE INDEX ham_bg_sh ON ham_bg USING hamming (sh) WITH (pending_limit = 64);
SELECT * FROM hamming_stats('ham_bg_sh');
-- Past the flush threshold (4,681 entries), short of the brake (6,241): a
-- worker flushes, the inserting session does not.
INSERT INTO ham_bg
SELECT 10000 + i, ('x' || md5('bg late ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 5500) i;
-- Wait (at most a minute) for the worker to be done: the lists hold less
-- than a merge's worth and no worker runs.
DO $$
BEGIN
  FOR i IN 1 .. 600 LOOP
    EXIT WHEN (SELECT sealed_entries = 0 AND pending_entries < 4681 FROM hamming_stats('ham_bg_sh'))
          AND NOT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'neardup merge');
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT blocks, run_entries > 10000 AS merged, sealed_entries, merges, insert_merges
FROM hamming_stats('ham_bg_sh');
SELECT hamming_check('ham_bg_sh', true);
ALTER INDEX ham_bg_sh SET (background_merge = off);
INSERT INTO ham_bg
SELECT 20000 + i, ('x' || md5('bg later ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 7000) i;
SELECT sealed_entries, merges, insert_merges FROM hamming_stats('ham_bg_sh');
SELECT hamming_check('ham_bg_sh', true);
SELECT (SELECT count(*) FROM ham_bg WHERE sh <~> '0123456789abcdef' <= 20) AS index_count,
       (SELECT count(*) FROM ham_bg WHERE bit_count(('x' || sh::text)::bit(64) # x'0123456789abcdef') <= 20) AS seq_count;
DROP TABLE ham_bg;

-- Prepared statements in generic plans.
SET plan_cache_mode = force_generic_plan;
PREPARE ham_near(simhash64, int) AS
SELECT count(*) AS n, min(sh <~> $1) AS min_d, max(sh <~> $1) AS max_d
FROM ham_doc WHERE sh <~> $1 <= $2;
EXPLAIN (COSTS OFF) EXECUTE ham_near('0000000000000000', 2);
EXECUTE ham_near('0000000000000000', 2);
EXECUTE ham_near('ffffffffffffffff', 0);
EXECUTE ham_near('ffffffffffffffff', -1);
PREPARE ham_knn(simhash64) AS
SELECT sh <~> $1 AS d FROM ham_doc ORDER BY sh <~> $1 LIMIT 5;
EXPLAIN (COSTS OFF) EXECUTE ham_knn('0000000000000000');
EXECUTE ham_knn('0000000000000000');
EXECUTE ham_knn('8000000000000001');
RESET plan_cache_mode;
DEALLOCATE ham_near;
DEALLOCATE ham_knn;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS n, min(sh <~> '0000000000000000') AS min_d, max(sh <~> '0000000000000000') AS max_d
FROM ham_doc WHERE sh <~> '0000000000000000' <= 2;
SELECT sh <~> '8000000000000001' AS d FROM ham_doc ORDER BY 1 LIMIT 5;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- A LATERAL join: the 3 nearest of each query code, equal to a seq scan's
-- distances.
CREATE TEMP TABLE lat_idx AS
SELECT q.qid, n.d FROM ham_q q
CROSS JOIN LATERAL (SELECT ham_doc.sh <~> q.q AS d FROM ham_doc ORDER BY ham_doc.sh <~> q.q LIMIT 3) n;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE lat_seq AS
SELECT q.qid, n.d FROM ham_q q
CROSS JOIN LATERAL (SELECT ham_doc.sh <~> q.q AS d FROM ham_doc ORDER BY ham_doc.sh <~> q.q LIMIT 3) n;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT (SELECT array_agg(d ORDER BY qid, d) FROM lat_idx) = (SELECT array_agg(d ORDER BY qid, d) FROM lat_seq)
       AS lateral_agrees, (SELECT count(*) FROM lat_idx) AS rows;

-- NULLs: never within a ball, last in a nearest-neighbour scan (as in a
-- sort); a NULL query finds nothing; ORDER BY <~> NULL returns every row.
CREATE TABLE ham_small (id int, sh simhash64);
INSERT INTO ham_small VALUES (1, '00000000000000ff'), (2, NULL), (3, '0000000000000000'),
                             (4, NULL), (5, 'ffffffffffffffff');
CREATE INDEX ham_small_sh ON ham_small USING hamming (sh);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM ham_small ORDER BY sh <~> '0000000000000001';
SELECT string_agg(coalesce(d::text, 'null'), ',') AS distances
FROM (SELECT sh <~> '0000000000000001' AS d FROM ham_small ORDER BY sh <~> '0000000000000001') s;
SELECT id FROM ham_small WHERE sh <~> '0000000000000000' <= 64 ORDER BY id;
SELECT id FROM ham_small WHERE sh <@ NULL::hamming_ball;
SELECT id FROM ham_small WHERE sh = NULL;
SELECT count(*) FROM (SELECT id FROM ham_small ORDER BY sh <~> NULL) s;
-- Two conditions with different centers: both hold.
SELECT id FROM ham_small WHERE sh <~> '0000000000000000' <= 8 AND sh <~> '00000000000000ff' <= 0;
-- The same after the rows moved to the run.
SELECT hamming_merge('ham_small_sh') AS merged;
SELECT string_agg(coalesce(d::text, 'null'), ',') AS distances
FROM (SELECT sh <~> '0000000000000001' AS d FROM ham_small ORDER BY sh <~> '0000000000000001') s;
SELECT id FROM ham_small WHERE sh <~> '0000000000000000' <= 8 AND sh <~> '00000000000000ff' <= 0;
SELECT hamming_check('ham_small_sh', true);
-- One row, all-equal codes, an empty index.
TRUNCATE ham_small;
INSERT INTO ham_small VALUES (1, '8000000000000001');
SELECT id, sh <~> '0000000000000000' AS d FROM ham_small ORDER BY sh <~> '0000000000000000' LIMIT 3;
INSERT INTO ham_small SELECT i, '8000000000000001' FROM generate_series(2, 3000) i;
SELECT hamming_merge('ham_small_sh') > 0 AS merged;
SELECT count(*), min(sh <~> '8000000000000001'), max(sh <~> '8000000000000001')
FROM ham_small WHERE sh <~> '8000000000000000' <= 1;
SELECT count(*) FROM (SELECT id FROM ham_small ORDER BY sh <~> '7ffffffffffffffe' LIMIT 2500) s;
-- A group of 20,000 identical codes (35 pages of each table), ten codes at
-- distance 1 and ten at 2: a nearest-neighbour scan hands out the group's
-- first rows after one page of it rather than after all 35 (few buffers for
-- LIMIT 1), then the rest of the group, each row once, and goes on into
-- the next distances, also when a filter drops most rows.
INSERT INTO ham_small SELECT i, '8000000000000001' FROM generate_series(3001, 20000) i;
INSERT INTO ham_small
SELECT 30000 + i, ('8000000000000001'::simhash64::bigint # (1::bigint << i))::simhash64
FROM generate_series(0, 9) i;
INSERT INTO ham_small
SELECT 30100 + i, ('8000000000000001'::simhash64::bigint # (3::bigint << (2 * i + 2)))::simhash64
FROM generate_series(0, 9) i;
SELECT hamming_merge('ham_small_sh') > 0 AS merged;
CREATE FUNCTION pg_temp.scan_buffers(query text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || query INTO plan;
    RETURN (plan->0->'Plan'->'Plans'->0->>'Shared Hit Blocks')::int
         + (plan->0->'Plan'->'Plans'->0->>'Shared Read Blocks')::int;
END $$;
SELECT pg_temp.scan_buffers('SELECT id FROM ham_small ORDER BY sh <~> ''8000000000000001'' LIMIT 1') < 10
    AS one_page_of_the_group;
SELECT d, count(*), count(DISTINCT id)
FROM (SELECT id, sh <~> '8000000000000001' AS d FROM ham_small
      ORDER BY sh <~> '8000000000000001' LIMIT 20015) s
GROUP BY d ORDER BY d;
SELECT array_agg(id ORDER BY id) AS filtered
FROM (SELECT id FROM ham_small WHERE id % 2000 = 7 ORDER BY sh <~> '8000000000000001' LIMIT 12) s;
TRUNCATE ham_small;
SELECT hamming_check('ham_small_sh', true);
SELECT id FROM ham_small ORDER BY sh <~> '0000000000000001' LIMIT 2;
SELECT count(*) FROM ham_small WHERE sh <~> '0000000000000000' <= 64;
RESET enable_seqscan;

-- Bad options and types.
CREATE INDEX ON ham_small USING hamming (sh) WITH (blocks = 2);
CREATE INDEX ON ham_small USING hamming (sh) WITH (blocks = 9);
CREATE INDEX ON ham_small USING hamming (sh) WITH (pending_limit = -2);
CREATE INDEX ON ham_small USING hamming (sh) WITH (background_merge = maybe);
CREATE INDEX ON ham_small USING hamming (sh) WITH (fillfactor = 50);
CREATE INDEX ON ham_small USING hamming (id);
CREATE INDEX ON ham_small USING hamming (sh, id);
CREATE UNIQUE INDEX ON ham_small USING hamming (sh);
SELECT hamming_merge('ham_small');
SELECT hamming_merge('ham_doc_sh'::regclass::oid::regclass) >= 0 AS ok;
CREATE INDEX ham_small_btree ON ham_small (sh);
SELECT hamming_merge('ham_small_btree');
-- The integrity check: only hamming indexes, only valid ones.
SELECT hamming_check('ham_small');
SELECT hamming_check('ham_small_btree');
SELECT hamming_check(0);
SELECT * FROM hamming_stats('ham_small_btree');
SELECT * FROM hamming_stats(0);
SELECT hamming_check('ham_doc_sh', NULL) IS NULL AS strict;

DROP TABLE ham_doc, ham_q, ham_small;
