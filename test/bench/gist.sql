-- GiST index over simhash64 (simhash64_gist_ops): query latency as a ratio
-- to a sequential scan measured in the same run, index pages a query
-- touches, build time and size next to a btree on the same column.
--
-- psql variables: rows (table size, default 1000000), nq (queries of each
-- kind, default 20), builds (which GiST builds to compare: 'sorted',
-- 'buffering', 'insert'; default 'sorted,buffering').
--
-- Data: random 64-bit codes, plus 1% planted near-duplicates: for each of
-- rows/1000 "originals" (ids 1..), 10 copies at distance 0..5 of it.
-- Queries: 'planted' = an original (its 10 copies are its nearest
-- neighbours); 'random' = a fresh random code (nearest neighbours at ~13-15
-- bits for 1M rows: the worst case for any index).
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;		-- one core for index and seq scan alike
SET max_parallel_maintenance_workers = 0;
SET maintenance_work_mem = '256MB';
SET jit = off;
CREATE EXTENSION IF NOT EXISTS neardup;

\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?nq}
\else
\set nq 20
\endif
\if :{?builds}
\else
\set builds 'sorted,buffering'
\endif

DROP TABLE IF EXISTS doc;
CREATE TABLE doc (id int, sh simhash64);
-- flip(c, d, seed): c with up to d bits flipped (positions from a hash)
CREATE FUNCTION pg_temp.flip(c simhash64, d int, seed int) RETURNS simhash64
LANGUAGE sql IMMUTABLE AS $$
    SELECT (c::bigint # coalesce((SELECT bit_or(1::bigint << (hashint4(seed * 64 + j) & 63))
                                  FROM generate_series(1, d) j), 0))::simhash64
$$;
INSERT INTO doc
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64
FROM generate_series(1, :rows - :rows / 100) i;
INSERT INTO doc
SELECT :rows - :rows / 100 + (c - 1) * 10 + j,
       pg_temp.flip(('x' || md5(c::text))::bit(64)::bigint::simhash64, j % 6, c * 10 + j)
FROM generate_series(1, :rows / 1000) c, generate_series(1, 10) j;
VACUUM ANALYZE doc;

CREATE TEMP TABLE qs AS
SELECT 'planted' AS kind, i AS qid, ('x' || md5(i::text))::bit(64)::bigint::simhash64 AS q
FROM generate_series(1, :nq) i
UNION ALL
SELECT 'random', i, ('x' || md5('query ' || i))::bit(64)::bigint::simhash64
FROM generate_series(1, :nq) i;

CREATE TEMP TABLE timing (variant text, what text, kind text, qid int, index_ms float8, seq_ms float8,
                          index_result text, seq_result text);
CREATE TEMP TABLE builds (variant text, build_ms float8, bytes bigint, pages bigint);
CREATE TEMP TABLE touched (variant text, what text, kind text, avg_pages float8, pct_of_index float8);

-- What each query does; %L is the query code.
CREATE TEMP TABLE workload (what text, sql text);
INSERT INTO workload VALUES
  ('knn10', 'SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT id, sh <~> %L AS d FROM doc ORDER BY sh <~> %L LIMIT 10) s'),
  -- the same, the codes only (an index-only scan before 0.3, which gave
  -- the operator class no fetch function: doc/index-gist.md)
  ('knn10 ios', 'SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT sh <~> %L AS d FROM doc ORDER BY sh <~> %L LIMIT 10) s'),
  ('k=0', 'SELECT count(id)::text FROM doc WHERE sh <@ hamming_ball(%L, 0)'),
  ('k=1', 'SELECT count(id)::text FROM doc WHERE sh <@ hamming_ball(%L, 1)'),
  ('k=2', 'SELECT count(id)::text FROM doc WHERE sh <@ hamming_ball(%L, 2)'),
  ('k=3', 'SELECT count(id)::text FROM doc WHERE sh <@ hamming_ball(%L, 3)'),
  -- nearest neighbours, but only within a radius: the pruning of k=3
  ('knn10 k<=3', 'SELECT coalesce(string_agg(d::text, '','' ORDER BY d), '''') FROM (SELECT id, sh <~> %L AS d FROM doc WHERE sh <@ hamming_ball(%L, 3) ORDER BY sh <~> %L LIMIT 10) s');

-- Sets the planner up for the index or for a sequential scan.
CREATE FUNCTION pg_temp.use_index(on_ bool) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_indexscan', on_::text, false);
    PERFORM set_config('enable_indexonlyscan', on_::text, false);
    PERFORM set_config('enable_bitmapscan', on_::text, false);
    PERFORM set_config('enable_seqscan', (NOT on_)::text, false);
END $$;

-- Best of `reps` runs of one query, in ms; its answer in *res.
CREATE FUNCTION pg_temp.best_ms(sql text, reps int, OUT ms float8, OUT res text)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
BEGIN
    ms := 'Infinity';
    FOR i IN 1..reps LOOP
        t0 := clock_timestamp();
        EXECUTE sql INTO res;
        ms := least(ms, extract(epoch FROM clock_timestamp() - t0) * 1000);
    END LOOP;
END $$;

/*
 * Every workload query for every query code: through the index and, right
 * after it, by a sequential scan, each the best of 3 runs, so that each
 * ratio compares runs made under the same machine load.
 */
CREATE FUNCTION pg_temp.run(variant text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    w record;
    r record;
    sql text;
    i record;
    s record;
BEGIN
    FOR w IN SELECT * FROM workload LOOP
        FOR r IN SELECT * FROM qs ORDER BY kind, qid LOOP
            sql := format(w.sql, r.q, r.q, r.q);
            PERFORM pg_temp.use_index(true);
            SELECT * INTO i FROM pg_temp.best_ms(sql, 3);
            PERFORM pg_temp.use_index(false);
            SELECT * INTO s FROM pg_temp.best_ms(sql, 3);
            INSERT INTO timing VALUES (variant, w.what, r.kind, r.qid, i.ms, s.ms, i.res, s.res);
        END LOOP;
    END LOOP;
    RESET enable_indexscan; RESET enable_indexonlyscan; RESET enable_bitmapscan; RESET enable_seqscan;
END $$;

-- Index pages read per query (EXPLAIN BUFFERS of the index node; the
-- queries are written to be index-only, so heap pages do not count).
CREATE FUNCTION pg_temp.pages(variant text, idx text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    w record;
    r record;
    plan jsonb;
    total float8 := pg_relation_size(idx::regclass) / 8192;
    p float8;
BEGIN
    FOR w IN SELECT * FROM (VALUES
        ('knn10', 'SELECT sh FROM doc ORDER BY sh <~> %L LIMIT 10'),
        ('k=3', 'SELECT count(*) FROM doc WHERE sh <@ hamming_ball(%L, 3)')) v(what, sql) LOOP
        FOR r IN SELECT * FROM qs ORDER BY kind, qid LOOP
            EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ' || format(w.sql, r.q) INTO plan;
            SELECT sum((n->>'Shared Hit Blocks')::float8 + (n->>'Shared Read Blocks')::float8) INTO p
            FROM jsonb_path_query(plan, 'strict $.**?(@."Index Name" == $i)', jsonb_build_object('i', idx)) n;
            INSERT INTO touched VALUES (variant, w.what, r.kind, p, 100 * p / total);
        END LOOP;
    END LOOP;
END $$;

-- Builds one index, timed; keeps its size.
CREATE FUNCTION pg_temp.build(variant text, ddl text, idx text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE ddl;
    INSERT INTO builds VALUES (variant, extract(epoch FROM clock_timestamp() - t0) * 1000,
                               pg_relation_size(idx::regclass), pg_relation_size(idx::regclass) / 8192);
END $$;

-- Warm the heap.
SELECT count(*) FROM doc \g /dev/null

SELECT pg_temp.build('btree', 'CREATE INDEX doc_sh_btree ON doc USING btree (sh)', 'doc_sh_btree') \g /dev/null
DROP INDEX doc_sh_btree;

SELECT position('sorted' IN :'builds') > 0 AS b_sorted,
       position('buffering' IN :'builds') > 0 AS b_buffering,
       position('insert' IN :'builds') > 0 AS b_insert \gset

\if :b_sorted
SELECT pg_temp.build('gist sorted', 'CREATE INDEX doc_sh_gist ON doc USING gist (sh)', 'doc_sh_gist') \g /dev/null
SELECT pg_temp.run('gist sorted') \g /dev/null
SELECT pg_temp.pages('gist sorted', 'doc_sh_gist') \g /dev/null
DROP INDEX doc_sh_gist;
\endif

\if :b_buffering
SELECT pg_temp.build('gist buffering', 'CREATE INDEX doc_sh_gist ON doc USING gist (sh) WITH (buffering = on)', 'doc_sh_gist') \g /dev/null
SELECT pg_temp.run('gist buffering') \g /dev/null
SELECT pg_temp.pages('gist buffering', 'doc_sh_gist') \g /dev/null
DROP INDEX doc_sh_gist;
\endif

\if :b_insert
-- Grown by inserts: empty index, then every row inserted.
CREATE TABLE doc_copy AS SELECT * FROM doc;
TRUNCATE doc;
CREATE INDEX doc_sh_gist ON doc USING gist (sh);
SELECT pg_temp.build('gist inserts', 'INSERT INTO doc SELECT * FROM doc_copy', 'doc_sh_gist') \g /dev/null
DROP TABLE doc_copy;
VACUUM ANALYZE doc;
SELECT pg_temp.run('gist inserts') \g /dev/null
SELECT pg_temp.pages('gist inserts', 'doc_sh_gist') \g /dev/null
DROP INDEX doc_sh_gist;
\endif

\echo
\echo == GiST over simhash64, :rows rows, :nq queries of each kind
\echo    medians over the queries of the best of 3 runs; speedup: median of seq/index per query
\echo
SELECT variant, round((build_ms / 1000)::numeric, 2) AS build_s, pg_size_pretty(bytes) AS size,
       round(bytes::numeric / :rows, 1) AS bytes_per_row, pages
FROM builds ORDER BY variant;

SELECT variant, what, kind,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY seq_ms)::numeric, 2) AS seq_ms,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY index_ms)::numeric, 2) AS index_ms,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY seq_ms / index_ms)::numeric, 2) AS speedup
FROM timing GROUP BY variant, what, kind ORDER BY variant, kind, what;

SELECT variant, what, kind, round(avg(avg_pages)::numeric, 1) AS index_pages,
       round(avg(pct_of_index)::numeric, 1) AS pct_of_index
FROM touched GROUP BY variant, what, kind ORDER BY variant, kind, what;

-- Every index answer must equal the sequential scan's (KNN: the distances).
SELECT variant, count(*) AS answers, count(*) FILTER (WHERE index_result IS DISTINCT FROM seq_result) AS wrong
FROM timing GROUP BY variant ORDER BY variant;

-- Sizes of the answers, for context.
SELECT what, kind,
       round(avg(CASE WHEN what LIKE 'knn%' THEN coalesce(array_length(string_to_array(seq_result, ','), 1), 0)
                      ELSE seq_result::int END), 1) AS avg_rows,
       round(avg(CASE WHEN what LIKE 'knn%' THEN nullif(split_part(seq_result, ',', 10), '')::int END), 1)
           AS avg_10th_distance
FROM timing WHERE variant = (SELECT min(variant) FROM timing)
GROUP BY what, kind ORDER BY kind, what;
