-- The hamming access method against GIN, GiST and a sequential scan:
-- latency p50/p99 (planning included) of exact nearest neighbours and
-- radius search, build time and size at two maintenance_work_mem.
--
-- psql variables: rows (default 1000000), nq (queries of each kind,
-- default 200), nslow (queries per kind for the slow paths -- seq scan,
-- GiST KNN -- default 20), paths (default 'hamming,gin,gist').
--
-- Data (the recipe of issue 11): `rows` random codes, rows/50 planted
-- near-copies (1..5 bits from one of rows/500 originals), rows/1000 exact
-- copies.  Queries: 'planted' = an original (it has near copies), 'random'
-- = a fresh random code (the nearest neighbours at 13-16 bits: the worst
-- case).
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET jit = off;
CREATE EXTENSION IF NOT EXISTS neardup;

\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?nq}
\else
\set nq 200
\endif
\if :{?nslow}
\else
\set nslow 20
\endif
\if :{?paths}
\else
\set paths 'hamming,gin,gist'
\endif

DROP TABLE IF EXISTS doc;
CREATE TABLE doc (id int, sh simhash64);
CREATE FUNCTION pg_temp.flip(c simhash64, d int, seed int) RETURNS simhash64
LANGUAGE sql IMMUTABLE AS $$
    SELECT (c::bigint # coalesce((SELECT bit_or(1::bigint << (hashint4(seed * 64 + j) & 63))
                                  FROM generate_series(1, d) j), 0))::simhash64
$$;
INSERT INTO doc
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64 FROM generate_series(1, :rows) i;
INSERT INTO doc
SELECT :rows + (c - 1) * 10 + j,
       pg_temp.flip(('x' || md5(c::text))::bit(64)::bigint::simhash64, 1 + j % 5, c * 10 + j)
FROM generate_series(1, :rows / 500) c, generate_series(1, 10) j;
INSERT INTO doc
SELECT 2 * :rows + i, ('x' || md5((i * 7)::text))::bit(64)::bigint::simhash64
FROM generate_series(1, :rows / 1000) i;
VACUUM ANALYZE doc;
SELECT count(*) AS total_rows FROM doc \gset

CREATE TEMP TABLE qs AS
SELECT 'planted' AS kind, i AS qid, ('x' || md5(i::text))::bit(64)::bigint::simhash64 AS q
FROM generate_series(1, :nq) i
UNION ALL
SELECT 'random', i, ('x' || md5('query ' || i))::bit(64)::bigint::simhash64
FROM generate_series(1, :nq) i;

CREATE TEMP TABLE timing (path text, what text, kind text, qid int, ms float8, result text);
CREATE TEMP TABLE builds (path text, mwm text, build_s float8, bytes_per_row float8);

CREATE TEMP TABLE workload (what text, sql text);
INSERT INTO workload VALUES
  ('knn10', 'SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT id, sh <~> %L AS d FROM doc ORDER BY sh <~> %L LIMIT 10) s'),
  ('k=3', 'SELECT count(id)::text FROM doc WHERE sh <~> %L <= 3'),
  ('k=10', 'SELECT count(id)::text FROM doc WHERE sh <~> %L <= 10');

CREATE FUNCTION pg_temp.use(path text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_indexscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_indexonlyscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_bitmapscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_seqscan', (path = 'seq scan')::text, false);
END $$;

-- Each query once (after one warm-up run of the first), planning included.
CREATE FUNCTION pg_temp.run(path text, n int, whats text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    w record;
    r record;
    t0 timestamptz;
    res text;
BEGIN
    PERFORM pg_temp.use(path);
    FOR w IN SELECT * FROM workload WHERE what = ANY (whats) LOOP
        EXECUTE format(w.sql, 'ffffffffffffffff', 'ffffffffffffffff') INTO res;
        FOR r IN SELECT * FROM qs WHERE qid <= n ORDER BY kind, qid LOOP
            t0 := clock_timestamp();
            EXECUTE format(w.sql, r.q, r.q) INTO res;
            INSERT INTO timing VALUES (path, w.what, r.kind, r.qid,
                                       extract(epoch FROM clock_timestamp() - t0) * 1000, res);
        END LOOP;
    END LOOP;
    RESET enable_indexscan; RESET enable_indexonlyscan; RESET enable_bitmapscan; RESET enable_seqscan;
END $$;

CREATE FUNCTION pg_temp.build(path text, mwm text, ddl text, idx text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
BEGIN
    PERFORM set_config('maintenance_work_mem', mwm, false);
    t0 := clock_timestamp();
    EXECUTE ddl;
    INSERT INTO builds VALUES (path, mwm, extract(epoch FROM clock_timestamp() - t0),
                               pg_relation_size(idx::regclass)::float8 / (SELECT count(*) FROM doc));
    RESET maintenance_work_mem;
END $$;

SELECT count(*) FROM doc \g /dev/null
-- The baseline: a sequential scan (parallel, as PostgreSQL plans it).
SELECT pg_temp.run('seq scan', :nslow, '{knn10,k=3,k=10}') \g /dev/null

SELECT position('hamming' IN :'paths') > 0 AS p_hamming,
       position('gin' IN :'paths') > 0 AS p_gin,
       position('gist' IN :'paths') > 0 AS p_gist \gset

\if :p_hamming
SELECT pg_temp.build('hamming', '64MB', 'CREATE INDEX doc_ham ON doc USING hamming (sh)', 'doc_ham') \g /dev/null
DROP INDEX doc_ham;
SELECT pg_temp.build('hamming', '4GB', 'CREATE INDEX doc_ham ON doc USING hamming (sh)', 'doc_ham') \g /dev/null
SELECT pg_temp.run('hamming', :nq, '{knn10,k=3,k=10}') \g /dev/null
DROP INDEX doc_ham;
\endif
\if :p_gin
SELECT pg_temp.build('gin', '64MB', 'CREATE INDEX doc_gin ON doc USING gin (sh)', 'doc_gin') \g /dev/null
DROP INDEX doc_gin;
SELECT pg_temp.build('gin', '4GB', 'CREATE INDEX doc_gin ON doc USING gin (sh)', 'doc_gin') \g /dev/null
SELECT pg_temp.run('gin', :nq, '{k=3,k=10}') \g /dev/null
DROP INDEX doc_gin;
\endif
\if :p_gist
SELECT pg_temp.build('gist', '64MB', 'CREATE INDEX doc_gist ON doc USING gist (sh)', 'doc_gist') \g /dev/null
SELECT pg_temp.run('gist', :nslow, '{knn10}') \g /dev/null
SELECT pg_temp.run('gist', :nq, '{k=3}') \g /dev/null
DROP INDEX doc_gist;
\endif

\echo
\echo 'rows:' :total_rows
\echo 'Builds (seconds, index bytes per row):'
SELECT path, mwm, round(build_s::numeric, 2) AS build_s, round(bytes_per_row::numeric, 1) AS bytes_per_row
FROM builds ORDER BY path, mwm DESC;

\echo 'Latency in ms (p50, p99; planning included), speed-up over the sequential scan p50, and'
\echo 'exact: the queries whose answer equals the sequential scan''s (all of its queries):'
WITH s AS (SELECT what, kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50
           FROM timing WHERE path = 'seq scan' GROUP BY what, kind)
SELECT t.path, t.what, t.kind, count(*) AS n,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms)::numeric, 3) AS p50_ms,
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY t.ms)::numeric, 3) AS p99_ms,
       round((s.p50 / percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms))::numeric, 1) AS x_seq,
       count(*) FILTER (WHERE t.result = b.result) AS exact
FROM timing t JOIN s USING (what, kind)
LEFT JOIN timing b ON b.path = 'seq scan' AND b.what = t.what AND b.kind = t.kind AND b.qid = t.qid
GROUP BY t.path, t.what, t.kind, s.p50 ORDER BY t.what, t.kind, t.path;
DROP TABLE doc;
