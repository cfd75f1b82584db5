-- The hamming access method against GIN, GiST and a sequential scan:
-- latency p50/p99 (planning included) of exact nearest neighbours and
-- radius search, build time and size at two maintenance_work_mem.
--
-- psql variables: rows (default 1000000), giant (rows in one group of
-- identical codes, default rows/5; 0 for none), nq (queries of each kind,
-- default 200), nslow (queries per kind for the slow paths -- seq scan,
-- GiST KNN -- default 20), paths (default 'hamming,gin,gist'; add
-- 'pgvector' for the peer's HNSW and IVFFlat on the same bits as bit(64),
-- when run_am.sh has built and staged it).
--
-- Data (the recipe of issue 11): `rows` random codes, rows/50 planted
-- near-copies (1..5 bits from one of rows/500 originals), rows/1000 exact
-- copies, and `giant` rows of one code (the error page or empty body that
-- real crawls hold by the hundred thousand).  Queries: 'planted' = an
-- original (it has near copies), 'random' = a fresh random code (the
-- nearest neighbours at 13-16 bits: the worst case), 'giant' = the code of
-- the giant group.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET jit = off;
CREATE EXTENSION IF NOT EXISTS neardup;

\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?giant}
\else
SELECT :rows / 5 AS giant \gset
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
INSERT INTO doc
SELECT 3 * :rows + i, ('x' || md5('giant'))::bit(64)::bigint::simhash64
FROM generate_series(1, :giant) i;
VACUUM ANALYZE doc;
SELECT count(*) AS total_rows FROM doc \gset

CREATE TEMP TABLE qs AS
SELECT 'planted' AS kind, i AS qid, ('x' || md5(i::text))::bit(64)::bigint::simhash64 AS q
FROM generate_series(1, :nq) i
UNION ALL
SELECT 'random', i, ('x' || md5('query ' || i))::bit(64)::bigint::simhash64
FROM generate_series(1, :nq) i
UNION ALL
SELECT 'giant', i, ('x' || md5('giant'))::bit(64)::bigint::simhash64
FROM generate_series(1, :nq) i WHERE :giant > 0;

CREATE TEMP TABLE timing (path text, what text, kind text, qid int, ms float8, result text);
CREATE TEMP TABLE builds (path text, mwm text, build_s float8, bytes_per_row float8);

-- A KNN result is its sorted distance list, so that ties compare equal
-- whichever of the tied rows a path returns.  target 'bit' runs on docv,
-- the same codes as bit(64) for pgvector (its <~> is Hamming on bit).
CREATE TEMP TABLE workload (what text, target text, sql text);
INSERT INTO workload VALUES
  ('knn10', 'simhash64', 'SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT id, sh <~> %L AS d FROM doc ORDER BY sh <~> %L LIMIT 10) s'),
  ('k=3', 'simhash64', 'SELECT count(id)::text FROM doc WHERE sh <~> %L <= 3'),
  ('k=10', 'simhash64', 'SELECT count(id)::text FROM doc WHERE sh <~> %L <= 10'),
  ('knn10', 'bit', 'SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT id, bv <~> %L::bit(64) AS d FROM docv ORDER BY bv <~> %L::bit(64) LIMIT 10) s');

-- recall@n of a KNN answer: the share of the exact distance list that it
-- matches (multiset intersection, so ties are not penalised).
CREATE FUNCTION pg_temp.recall(got text, exact text) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(sum(least(g.n, e.n)), 0)::float8 / cardinality(string_to_array(exact, ','))
    FROM (SELECT v, count(*) AS n FROM unnest(string_to_array(got, ',')) v GROUP BY v) g
    JOIN (SELECT v, count(*) AS n FROM unnest(string_to_array(exact, ',')) v GROUP BY v) e USING (v)
$$;

CREATE FUNCTION pg_temp.use(path text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_indexscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_indexonlyscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_bitmapscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_seqscan', (path = 'seq scan')::text, false);
END $$;

-- Each query once (after one warm-up run of the first), planning included;
-- settings: 'name=value' GUCs for the run (pgvector's search knobs).
CREATE FUNCTION pg_temp.run(path text, n int, whats text[], target text DEFAULT 'simhash64',
                            settings text[] DEFAULT '{}') RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    w record;
    r record;
    t0 timestamptz;
    res text;
    q text;
    setting text;
BEGIN
    PERFORM pg_temp.use(path);
    FOREACH setting IN ARRAY settings LOOP
        PERFORM set_config(split_part(setting, '=', 1), split_part(setting, '=', 2), false);
    END LOOP;
    FOR w IN SELECT * FROM workload WHERE what = ANY (whats) AND workload.target = run.target LOOP
        q := CASE target WHEN 'bit' THEN (-1)::bigint::bit(64)::text ELSE 'ffffffffffffffff' END;
        EXECUTE format(w.sql, q, q) INTO res;
        FOR r IN SELECT * FROM qs WHERE qid <= n ORDER BY kind, qid LOOP
            q := CASE target WHEN 'bit' THEN r.q::bigint::bit(64)::text ELSE r.q::text END;
            t0 := clock_timestamp();
            EXECUTE format(w.sql, q, q) INTO res;
            INSERT INTO timing VALUES (path, w.what, r.kind, r.qid,
                                       extract(epoch FROM clock_timestamp() - t0) * 1000, res);
        END LOOP;
    END LOOP;
    FOREACH setting IN ARRAY settings LOOP
        PERFORM set_config(split_part(setting, '=', 1), NULL, false);
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

SELECT position('hamming' IN :'paths') > 0 AS p_hamming,
       position('gin' IN :'paths') > 0 AS p_gin,
       position('gist' IN :'paths') > 0 AS p_gist,
       position('pgvector' IN :'paths') > 0 AS p_pgvector \gset

SELECT count(*) FROM doc \g /dev/null
-- The baseline: a sequential scan (parallel, as PostgreSQL plans it).  It
-- is also the exact answer of every query that another path's exact and
-- recall columns are counted on; pgvector's recall is measured on every
-- KNN query.
SELECT pg_temp.run('seq scan', :nslow, '{k=3,k=10}') \g /dev/null
SELECT pg_temp.run('seq scan', CASE WHEN :'p_pgvector' THEN :nq ELSE :nslow END, '{knn10}') \g /dev/null

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
\if :p_pgvector
-- The peer a user would pick (issue 11): pgvector on the same 64 bits as
-- bit(64), its Hamming opclass, default build parameters.  HNSW is built
-- at 4GB only: at 64MB its graph does not fit and the build is many
-- times slower (pgvector's own advice is to raise the setting).
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE docv AS SELECT id, sh::bigint::bit(64) AS bv FROM doc;
VACUUM ANALYZE docv;
SELECT pg_temp.build('pgvector hnsw', '4GB', 'CREATE INDEX docv_hnsw ON docv USING hnsw (bv bit_hamming_ops)', 'docv_hnsw') \g /dev/null
SELECT pg_temp.run('pgvector hnsw ef=' || ef, :nq, '{knn10}', 'bit', ARRAY['hnsw.ef_search=' || ef])
FROM unnest('{40,100,200}'::int[]) ef \g /dev/null
DROP INDEX docv_hnsw;
-- IVFFlat on bit(64) with lists = rows/1000 needs about 200MB to build
-- (pgvector refuses at 64MB).
SELECT pg_temp.build('pgvector ivfflat', '4GB', format('CREATE INDEX docv_ivf ON docv USING ivfflat (bv bit_hamming_ops) WITH (lists = %s)', greatest(:total_rows / 1000, 10)), 'docv_ivf') \g /dev/null
SELECT pg_temp.run('pgvector ivfflat probes=' || p, :nq, '{knn10}', 'bit', ARRAY['ivfflat.probes=' || p])
FROM unnest('{10,32}'::int[]) p \g /dev/null
DROP TABLE docv;
\endif

\echo
\echo 'rows:' :total_rows
\echo 'Builds (seconds, index bytes per row):'
SELECT path, mwm, round(build_s::numeric, 2) AS build_s, round(bytes_per_row::numeric, 1) AS bytes_per_row
FROM builds ORDER BY path, mwm DESC;

\echo 'Latency in ms (p50, p99; planning included), speed-up over the sequential scan p50,'
\echo 'exact: the queries whose answer equals the sequential scan''s (all of its queries), and'
\echo 'recall: of KNN 10, the mean share of the exact distance list returned:'
WITH s AS (SELECT what, kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50
           FROM timing WHERE path = 'seq scan' GROUP BY what, kind)
SELECT t.path, t.what, t.kind, count(*) AS n,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms)::numeric, 3) AS p50_ms,
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY t.ms)::numeric, 3) AS p99_ms,
       round((s.p50 / percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms))::numeric, 1) AS x_seq,
       count(*) FILTER (WHERE t.result = b.result) AS exact,
       CASE WHEN t.what = 'knn10' THEN round(avg(pg_temp.recall(t.result, b.result))::numeric, 3) END AS recall
FROM timing t JOIN s USING (what, kind)
LEFT JOIN timing b ON b.path = 'seq scan' AND b.what = t.what AND b.kind = t.kind AND b.qid = t.qid
GROUP BY t.path, t.what, t.kind, s.p50 ORDER BY t.what, t.kind, t.path;
DROP TABLE doc;
