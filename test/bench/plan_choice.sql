-- Does the planner pick the fastest path for a radius search?  On a table
-- with both a GIN and a GiST index on the fingerprint, per radius: the
-- plan the planner picks for `sh <~> q <= r` and its time, against the
-- time of each alternative forced (only GIN: the GiST index dropped in a
-- rolled-back transaction; only GiST: likewise; sequential scan: index
-- and bitmap scans disabled), all in the same run.  Then the same with a
-- cursor (fast start, cursor_tuple_fraction = 0.1) on a GIN-only table.
--
-- psql variables (run_plan_choice.sh sets them):
--   rows      table size (10% of it planted near-duplicates)
--   queries   query codes per radius and path
--   radii     e.g. '0,1,2,3,4,5,6,8,10,12,16,20'
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE EXTENSION IF NOT EXISTS neardup;

-- The table of gin_radius.sql: 90% random codes, 10% copies of them
-- with 0..5 bits flipped.
\ir lib/near_dup_table.sql
CREATE INDEX doc_gin ON doc USING gin (sh);
CREATE INDEX doc_gist ON doc USING gist (sh);
VACUUM ANALYZE doc;

CREATE TABLE qs AS
SELECT n, d.sh AS q
FROM generate_series(1, :queries) n
JOIN doc d ON d.id = 9 * n * (:rows / :queries / 10) + n % 2;
CREATE TABLE radii AS SELECT unnest(string_to_array(:'radii', ','))::int AS r;

-- The scan the planner picks for one query: gin, gist or seq.
CREATE FUNCTION pg_temp.chosen(qq simhash64, rad int, cursor bool DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    scans text := '';
BEGIN
    FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) %s SELECT id FROM doc WHERE sh <~> %L <= %s',
                               CASE WHEN cursor THEN 'DECLARE c CURSOR FOR' ELSE '' END, qq, rad) LOOP
        scans := scans || CASE
            WHEN line ~ 'doc_gin' THEN 'gin'
            WHEN line ~ 'doc_gist' THEN 'gist'
            WHEN line ~ 'Seq Scan' THEN 'seq'
            ELSE '' END;
    END LOOP;
    RETURN scans;
END $$;

-- Milliseconds for all the queries of a radius, as planned under the
-- current settings (custom plans: the planner sees the code and radius).
-- With `first`, only the first 10 rows through a cursor.
CREATE FUNCTION pg_temp.time_all(rad int, first bool DEFAULT false) RETURNS float8
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    qq simhash64;
    t0 timestamptz := clock_timestamp();
    found bigint;
    c refcursor;
BEGIN
    FOR qq IN SELECT qs.q FROM qs ORDER BY qs.n LOOP
        IF first THEN
            OPEN c NO SCROLL FOR EXECUTE format('SELECT id FROM doc WHERE sh <~> %L <= %s', qq, rad);
            MOVE FORWARD 10 FROM c;
            CLOSE c;
        ELSE
            SELECT count(*) INTO found FROM doc WHERE sh <~> qq <= rad;
        END IF;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000 / (SELECT count(*) FROM qs);
END $$;

CREATE TABLE res (r int, path text, ms float8);
CREATE FUNCTION pg_temp.bench(rad int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    gin float8;
    gist float8;
BEGIN
    -- Dropping an index in a subtransaction that is rolled back (and with
    -- it any row inserted there: hence the variables).
    BEGIN
        DROP INDEX doc_gist;
        PERFORM set_config('enable_seqscan', 'off', true);
        gin := pg_temp.time_all(rad);
        RAISE SQLSTATE 'P0001';
    EXCEPTION WHEN raise_exception THEN NULL;
    END;
    BEGIN
        DROP INDEX doc_gin;
        PERFORM set_config('enable_seqscan', 'off', true);
        gist := pg_temp.time_all(rad);
        RAISE SQLSTATE 'P0001';
    EXCEPTION WHEN raise_exception THEN NULL;
    END;
    PERFORM set_config('enable_seqscan', 'on', true);
    INSERT INTO res VALUES (rad, 'gin', gin), (rad, 'gist', gist);
    PERFORM set_config('enable_indexscan', 'off', true), set_config('enable_bitmapscan', 'off', true);
    INSERT INTO res SELECT rad, 'seq', pg_temp.time_all(rad);
    PERFORM set_config('enable_indexscan', 'on', true), set_config('enable_bitmapscan', 'on', true);
    INSERT INTO res SELECT rad, 'chosen', pg_temp.time_all(rad);
END $$;

-- Warm the caches.
SELECT count(*) FROM doc \g /dev/null
\o /dev/null
SELECT pg_temp.bench(r) FROM radii ORDER BY r;
\o

\echo 'ms per query (mean over the query codes); picked: the plans chosen for them (how many of each):'
SELECT r.r,
       (SELECT string_agg(format('%s %s', p, c), ', ' ORDER BY c DESC, p)
        FROM (SELECT pg_temp.chosen(q, r.r) p, count(*) c FROM qs GROUP BY 1) x) AS picked,
       round(max(ms) FILTER (WHERE path = 'chosen')::numeric, 3) AS chosen_ms,
       round(max(ms) FILTER (WHERE path = 'gin')::numeric, 3) AS gin_ms,
       round(max(ms) FILTER (WHERE path = 'gist')::numeric, 3) AS gist_ms,
       round(max(ms) FILTER (WHERE path = 'seq')::numeric, 3) AS seq_ms,
       round((max(ms) FILTER (WHERE path = 'chosen') / min(ms) FILTER (WHERE path <> 'chosen'))::numeric, 2) AS chosen_vs_fastest
FROM res JOIN radii r USING (r) GROUP BY r.r ORDER BY r.r;

-- Fast start: a cursor on the table with only the GIN index (postgres_fdw
-- reads remote tables through cursors).  10 rows fetched per query.
CREATE TABLE resc (r int, path text, ms float8);
CREATE FUNCTION pg_temp.bench_cursor(rad int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    picked text;
    chosen float8;
    gin float8;
    seq float8;
BEGIN
    BEGIN
        DROP INDEX doc_gist;
        picked := pg_temp.chosen((SELECT q FROM qs WHERE n = 1), rad, true);
        PERFORM set_config('enable_seqscan', 'off', true);
        gin := pg_temp.time_all(rad, true);
        PERFORM set_config('enable_seqscan', 'on', true);
        PERFORM set_config('enable_indexscan', 'off', true), set_config('enable_bitmapscan', 'off', true);
        seq := pg_temp.time_all(rad, true);
        PERFORM set_config('enable_indexscan', 'on', true), set_config('enable_bitmapscan', 'on', true);
        chosen := pg_temp.time_all(rad, true);
        RAISE SQLSTATE 'P0001';
    EXCEPTION WHEN raise_exception THEN NULL;
    END;
    INSERT INTO resc VALUES (rad, 'picked: ' || picked, NULL), (rad, 'chosen', chosen),
                            (rad, 'gin', gin), (rad, 'seq', seq);
END $$;
\o /dev/null
SELECT pg_temp.bench_cursor(r) FROM radii ORDER BY r;
\o
\echo 'Cursor, first 10 rows, GIN index only: ms per query'
SELECT r, max(substr(path, 9)) FILTER (WHERE path LIKE 'picked:%') AS picked,
       round(max(ms) FILTER (WHERE path = 'chosen')::numeric, 3) AS chosen_ms,
       round(max(ms) FILTER (WHERE path = 'gin')::numeric, 3) AS gin_ms,
       round(max(ms) FILTER (WHERE path = 'seq')::numeric, 3) AS seq_ms,
       round((max(ms) FILTER (WHERE path = 'chosen') / min(ms) FILTER (WHERE path IN ('gin', 'seq')))::numeric, 2) AS chosen_vs_fastest
FROM resc GROUP BY r ORDER BY r;
