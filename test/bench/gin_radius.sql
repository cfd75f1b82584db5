-- GIN radius search (simhash64_gin_ops): latency of `sh <@ hamming_ball(q, r)`
-- through the index against a sequential scan of `sh <~> q <= r` in the same
-- run, index build time and size next to a btree, and insert throughput.
--
-- psql variables (run_gin.sh sets them):
--   rows      table size (10% of it planted near-duplicates)
--   queries   number of query codes per radius for the index
--   seqq      number of query codes per radius for the sequential scan
--   radii     e.g. '0,1,2,3,4'
--   blocks    the values of the `blocks` option to compare, e.g. '4,5,6'
--   opclasses GIN operator classes to compare (default simhash64_gin_ops)
--   inserts   rows per insert-throughput run (0 skips it)
\set QUIET on
\pset footer off
SET client_min_messages = warning;
-- One backend, no parallel workers: ratios per CPU, on a shared machine.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE EXTENSION IF NOT EXISTS neardup;

\ir lib/near_dup_table.sql
VACUUM ANALYZE doc;

-- Query codes: rows of the table spread over it, half of them rows that
-- have a planted near-duplicate.
CREATE TABLE qs AS
SELECT n, d.sh AS q
FROM generate_series(1, :queries) n
JOIN doc d ON d.id = 9 * n * (:rows / :queries / 10) + n % 2;

CREATE TABLE radii AS SELECT unnest(string_to_array(:'radii', ','))::int AS r;
CREATE TABLE configs AS
SELECT o, b::int FROM unnest(string_to_array(:'opclasses', ',')) o, unnest(string_to_array(:'blocks', ',')) b;

CREATE FUNCTION pg_temp.ms(t0 timestamptz) RETURNS float8
LANGUAGE sql AS $$ SELECT extract(epoch FROM clock_timestamp() - t0) * 1000 $$;

-- Per query: milliseconds and the number of rows found.
CREATE FUNCTION pg_temp.time_index(rad int, nq int) RETURNS TABLE (ms float8, hits bigint)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    qq simhash64;
    t0 timestamptz;
BEGIN
    FOR qq IN SELECT q FROM qs WHERE n <= nq ORDER BY n LOOP
        t0 := clock_timestamp();
        SELECT count(*) INTO hits FROM doc WHERE sh <@ hamming_ball(qq, rad);
        ms := pg_temp.ms(t0);
        RETURN NEXT;
    END LOOP;
END $$;

CREATE FUNCTION pg_temp.time_seq(rad int, nq int) RETURNS TABLE (ms float8, hits bigint)
LANGUAGE plpgsql SET enable_bitmapscan = off SET enable_indexscan = off AS $$
DECLARE
    qq simhash64;
    t0 timestamptz;
BEGIN
    FOR qq IN SELECT q FROM qs WHERE n <= nq ORDER BY n LOOP
        t0 := clock_timestamp();
        SELECT count(*) INTO hits FROM doc WHERE sh <~> qq <= rad;
        ms := pg_temp.ms(t0);
        RETURN NEXT;
    END LOOP;
END $$;

-- Candidates the recheck removed (rows the index returned that are not in
-- the ball), over the first nq queries.
CREATE FUNCTION pg_temp.rechecked(rad int, nq int) RETURNS bigint
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    qq simhash64;
    j json;
    total bigint := 0;
BEGIN
    FOR qq IN SELECT q FROM qs WHERE n <= nq ORDER BY n LOOP
        EXECUTE format('EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) '
                       'SELECT count(*) FROM doc WHERE sh <@ hamming_ball(%L, %s)', qq, rad) INTO j;
        total := total + coalesce((j -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Rows Removed by Index Recheck')::bigint, 0);
    END LOOP;
    RETURN total;
END $$;

CREATE FUNCTION pg_temp.run_ms(sql text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE sql;
    RETURN pg_temp.ms(t0);
END $$;

CREATE TABLE lat (config text, r int, method text, n int, ms float8, hits bigint);
CREATE TABLE build (what text, ms float8, bytes bigint, nrows bigint);
CREATE TABLE rech (config text, r int, removed bigint);

-- Baseline: sequential scan, once per radius.
INSERT INTO lat SELECT '', r, 'seq', n, t.ms, t.hits
FROM radii, LATERAL (SELECT row_number() OVER () AS n, * FROM pg_temp.time_seq(r, :seqq)) t;

-- btree on the same column, for size and build time.
CHECKPOINT;
INSERT INTO build SELECT 'btree', pg_temp.run_ms('CREATE INDEX doc_bt ON doc USING btree (sh)');
UPDATE build SET bytes = pg_relation_size('doc_bt'), nrows = (SELECT count(*) FROM doc) WHERE what = 'btree';
DROP INDEX doc_bt;

-- Each `blocks` value: build, size, latencies; the results must equal the
-- sequential scan's.
CREATE FUNCTION pg_temp.bench_config(o text, b int, nq int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    rr int;
BEGIN
    INSERT INTO build SELECT format('gin %s blocks=%s', o, b),
           pg_temp.run_ms(format('CREATE INDEX doc_gin ON doc USING gin (sh %s (blocks = %s))', o, b));
    UPDATE build SET bytes = pg_relation_size('doc_gin'), nrows = (SELECT count(*) FROM doc)
    WHERE what = format('gin %s blocks=%s', o, b);
    FOR rr IN SELECT r FROM radii ORDER BY r LOOP
        INSERT INTO lat SELECT format('%s blocks=%s', o, b), rr, 'gin', n, t.ms, t.hits
        FROM (SELECT row_number() OVER () AS n, * FROM pg_temp.time_index(rr, nq)) t;
        INSERT INTO rech SELECT format('%s blocks=%s', o, b), rr, pg_temp.rechecked(rr, nq);
    END LOOP;
    DROP INDEX doc_gin;
END $$;

\o /dev/null
SELECT pg_temp.bench_config(o, b, :queries) FROM configs ORDER BY o, b;
\o

\echo
SELECT current_setting('maintenance_work_mem') AS mwm, current_setting('shared_buffers') AS sb \gset
\echo 'Index build (maintenance_work_mem =' :mwm ', shared_buffers =' :sb '):'
SELECT what, nrows AS rows, round(ms::numeric / 1000, 1) AS build_s,
       pg_size_pretty(bytes) AS size, round(bytes::numeric / nrows, 1) AS bytes_per_row,
       round(bytes::numeric / (SELECT bytes FROM build WHERE what = 'btree'), 2) AS size_vs_btree
FROM build ORDER BY what = 'btree' DESC, what;

\echo 'Radius query latency, median over the queries (seq scan: median over its queries);'
\echo 'rechecked_out: rows the index returned that the recheck removed, over all queries:'
SELECT g.config, g.r,
       count(*) AS queries,
       round(avg(g.hits)::numeric, 1) AS avg_found,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY g.ms))::numeric, 3) AS gin_median_ms,
       round((percentile_cont(0.9) WITHIN GROUP (ORDER BY g.ms))::numeric, 3) AS gin_p90_ms,
       round(min(s.med)::numeric, 1) AS seq_median_ms,
       round((min(s.med) / percentile_cont(0.5) WITHIN GROUP (ORDER BY g.ms))::numeric, 0) AS speedup,
       min(x.removed) AS rechecked_out
FROM lat g
JOIN rech x ON x.config = g.config AND x.r = g.r
JOIN (SELECT r, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med FROM lat WHERE method = 'seq' GROUP BY r) s
  ON s.r = g.r
WHERE g.method = 'gin'
GROUP BY g.config, g.r ORDER BY g.config, g.r;

\echo 'Index and sequential scan disagree on (must be empty):'
SELECT g.config, g.r, g.n, g.hits AS gin, s.hits AS seq
FROM lat g JOIN lat s ON s.method = 'seq' AND s.r = g.r AND s.n = g.n
WHERE g.method = 'gin' AND g.hits <> s.hits;

-- Insert throughput: rows/s of bulk INSERT ... SELECT and of single-row
-- INSERTs into the full table, with the default GIN index (fastupdate on,
-- then off) and with only a btree.
SELECT :inserts > 0 AS do_inserts \gset
\if :do_inserts
CREATE FUNCTION pg_temp.insert_rows(n int, salt text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    INSERT INTO doc SELECT -i, pg_temp.code(i, salt) FROM generate_series(1, n) i;
    RETURN pg_temp.ms(t0);
END $$;

CREATE FUNCTION pg_temp.insert_single(n int, salt text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    FOR i IN 1..n LOOP
        INSERT INTO doc VALUES (-i, pg_temp.code(i, salt));
    END LOOP;
    RETURN pg_temp.ms(t0);
END $$;

CREATE TABLE ins (idx text, how text, nrows int, ms float8);
-- Codes are computed in the same way in every run: generating them costs
-- the same everywhere, and is part of every figure.
CREATE INDEX doc_gin ON doc USING gin (sh);
INSERT INTO ins SELECT 'gin fastupdate=on', 'bulk', :inserts, pg_temp.insert_rows(:inserts, 'a');
INSERT INTO ins SELECT 'gin fastupdate=on', 'flush pending', :inserts,
       pg_temp.run_ms('SELECT gin_clean_pending_list(''doc_gin'')');
INSERT INTO ins SELECT 'gin fastupdate=on', 'single', :inserts / 10, pg_temp.insert_single(:inserts / 10, 'b');
INSERT INTO ins SELECT 'gin fastupdate=on', 'flush pending', :inserts / 10,
       pg_temp.run_ms('SELECT gin_clean_pending_list(''doc_gin'')');
ALTER INDEX doc_gin SET (fastupdate = off);
INSERT INTO ins SELECT 'gin fastupdate=off', 'bulk', :inserts, pg_temp.insert_rows(:inserts, 'c');
INSERT INTO ins SELECT 'gin fastupdate=off', 'single', :inserts / 10, pg_temp.insert_single(:inserts / 10, 'd');
DROP INDEX doc_gin;
CREATE INDEX doc_bt ON doc USING btree (sh);
INSERT INTO ins SELECT 'btree', 'bulk', :inserts, pg_temp.insert_rows(:inserts, 'e');
INSERT INTO ins SELECT 'btree', 'single', :inserts / 10, pg_temp.insert_single(:inserts / 10, 'f');
DROP INDEX doc_bt;
INSERT INTO ins SELECT 'no index', 'bulk', :inserts, pg_temp.insert_rows(:inserts, 'g');
INSERT INTO ins SELECT 'no index', 'single', :inserts / 10, pg_temp.insert_single(:inserts / 10, 'h');

-- fastupdate=on defers the work to the pending-list flush: count both.
INSERT INTO ins
SELECT 'gin fastupdate=on, with flush', i.how, i.nrows, i.ms + f.ms
FROM ins i JOIN ins f ON f.idx = i.idx AND f.how = 'flush pending' AND f.nrows = i.nrows
WHERE i.idx = 'gin fastupdate=on' AND i.how <> 'flush pending';
DELETE FROM ins WHERE how = 'flush pending';

\echo 'Insert throughput into the full table:'
SELECT i.idx, i.how, i.nrows AS rows, round(i.ms::numeric, 0) AS ms,
       round((i.nrows / (i.ms / 1000))::numeric, 0) AS rows_per_s,
       round((b.ms / i.ms * i.nrows / b.nrows)::numeric, 2) AS vs_btree
FROM ins i LEFT JOIN ins b ON b.idx = 'btree' AND b.how = i.how
ORDER BY i.how, i.idx;
\endif
