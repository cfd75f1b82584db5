--
-- The hamming index under a parallel query.  The access method has no
-- parallel scan of its own (no amcanparallel), but its scans must work
-- inside parallel workers: a radius join whose outer side is a parallel
-- seq scan runs one index scan per outer row in each worker, and a whole
-- query can run in a worker (force_parallel_mode).  Every answer must equal
-- the serial sequential scan's, with entries both in the run and in the
-- pending list (rows inserted after the build).
--

CREATE TABLE par_doc (id int, sh simhash64);
INSERT INTO par_doc SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64
FROM generate_series(1, 20000) i;
CREATE INDEX par_doc_sh ON par_doc USING hamming (sh);
-- after the build, so in the pending list (far below its 1MB limit):
-- planted copies 1-5 bits from codes 1..500, and NULLs
INSERT INTO par_doc
SELECT 20000 + i, (('x' || md5(i::text))::bit(64)::bigint # ((1::bigint << (i % 5 + 1)) - 1))::simhash64
FROM generate_series(1, 500) i;
INSERT INTO par_doc SELECT 30000 + i, NULL FROM generate_series(1, 5) i;

CREATE TABLE par_q AS
SELECT i AS qid, ('x' || md5((i * 3)::text))::bit(64)::bigint::simhash64 AS q
FROM generate_series(1, 3000) i;
VACUUM ANALYZE par_doc, par_q;

-- The answers of the serial plan without the index.
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE par_radius_seq AS
SELECT q.qid, d.id FROM par_q q JOIN par_doc d ON d.sh <~> q.q <= 3;
CREATE TEMP TABLE par_knn_seq AS
SELECT q.qid, string_agg(n.dist::text, ',' ORDER BY n.dist) AS dists
FROM par_q q CROSS JOIN LATERAL (
    SELECT d.sh <~> q.q AS dist FROM par_doc d ORDER BY d.sh <~> q.q LIMIT 3) n
GROUP BY q.qid;
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET max_parallel_workers_per_gather;

-- Parallel everything that can be, and only the workers do the work.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;

-- The radius join: index scans on the inner side of a parallel nested loop.
EXPLAIN (COSTS OFF)
SELECT q.qid, d.id FROM par_q q JOIN par_doc d ON d.sh <~> q.q <= 3;

-- Did the workers run, and how many index scans ran in them?
CREATE FUNCTION pg_temp.worker_scans(sql text) RETURNS TABLE (launched bool, index_scans bool)
LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || sql INTO plan;
    launched := (plan -> 0 -> 'Plan' ->> 'Workers Launched')::int > 0;
    -- the inner index scan's loops: one per outer row, all in the workers
    index_scans := (jsonb_path_query_first(plan::jsonb,
        'strict $.**?(@."Index Name" == "par_doc_sh")."Actual Loops"'))::int
        = (SELECT count(*) FROM par_q);
    RETURN NEXT;
END $$;
SELECT * FROM pg_temp.worker_scans(
    'SELECT q.qid, d.id FROM par_q q JOIN par_doc d ON d.sh <~> q.q <= 3');

CREATE TEMP TABLE par_radius AS
SELECT q.qid, d.id FROM par_q q JOIN par_doc d ON d.sh <~> q.q <= 3;
SELECT (SELECT count(*) FROM par_radius_seq) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM par_radius_seq EXCEPT ALL SELECT * FROM par_radius) a) AS missing,
       (SELECT count(*) FROM (SELECT * FROM par_radius EXCEPT ALL SELECT * FROM par_radius_seq) e) AS extra;

-- Nearest neighbours in a LATERAL join.  PostgreSQL 15 does not run a
-- subquery with LIMIT in a worker, so the index scans stay in the leader.
EXPLAIN (COSTS OFF)
SELECT q.qid, n.dist FROM par_q q CROSS JOIN LATERAL (
    SELECT d.sh <~> q.q AS dist FROM par_doc d ORDER BY d.sh <~> q.q LIMIT 3) n;

-- force_parallel_mode runs a whole query, index scans included, in one
-- worker (with the default costs, which plan no Gather for tables this
-- small), if nothing in it is parallel-restricted: so not the LATERAL
-- nearest neighbours above (LIMIT in a subquery), and the query codes are
-- constants (an initplan's result would be).  Radius (plain, index-only
-- and bitmap scans), equality and the 1st, 2nd, 5th and 50th nearest
-- distance against the serial sequential scan; shown: whether the plan ran
-- in a worker (EXPLAIN ANALYZE: a single-copy Gather that launched it) and
-- its scan of par_doc.
CREATE FUNCTION pg_temp.run(sql text, OUT answer text, OUT in_worker bool, OUT scan text)
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || sql INTO plan;
    in_worker := (plan -> 0 -> 'Plan' ->> 'Single Copy')::bool IS TRUE
                 AND (plan -> 0 -> 'Plan' ->> 'Workers Launched')::int = 1;
    scan := coalesce(jsonb_path_query_first(plan,
        'strict $.**?(@."Index Name" == "par_doc_sh")."Node Type"') #>> '{}', 'no index');
    EXECUTE sql INTO answer;
END $$;

CREATE TEMP TABLE par_queries AS
SELECT 'radius 20' AS query, format($q$
    SELECT count(*) || ' rows, ' || sum(id) FROM par_doc WHERE sh <~> %L <= 20 $q$, q) AS sql
FROM par_q WHERE qid = 1
UNION ALL
SELECT 'equal', format($q$
    SELECT string_agg(id::text, ',' ORDER BY id) FROM par_doc WHERE sh = %L $q$, sh)
FROM par_doc WHERE id = 20007
UNION ALL
SELECT format('nearest no. %s', n), format($q$
    SELECT sh <~> %1$L FROM par_doc ORDER BY sh <~> %1$L LIMIT 1 OFFSET %2$s $q$, sh, n - 1)
FROM par_doc, unnest(ARRAY[1, 2, 5, 50]) n WHERE id = 7;

RESET ALL;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE par_single_seq AS
SELECT q.query, r.* FROM par_queries q, LATERAL pg_temp.run(q.sql) r;
SELECT * FROM par_single_seq ORDER BY query;
RESET ALL;
CREATE TEMP TABLE par_single (kind text, query text, answer text, in_worker bool, scan text);
-- (force_parallel_mode is debug_parallel_query from 16)
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
INSERT INTO par_single SELECT 'plain', q.query, r.* FROM par_queries q, LATERAL pg_temp.run(q.sql) r;
RESET enable_indexonlyscan;
INSERT INTO par_single SELECT 'index only', q.query, r.* FROM par_queries q, LATERAL pg_temp.run(q.sql) r;
SET enable_indexscan = off;
RESET enable_bitmapscan;
INSERT INTO par_single SELECT 'bitmap', q.query, r.* FROM par_queries q, LATERAL pg_temp.run(q.sql) r
WHERE q.query NOT LIKE 'nearest%';
RESET ALL;
SELECT p.query, p.kind, p.in_worker, p.scan, p.answer IS NOT DISTINCT FROM s.answer AS equal
FROM par_single p JOIN par_single_seq s USING (query)
ORDER BY p.query, p.kind;

DROP TABLE par_doc, par_q;
