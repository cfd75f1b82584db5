-- All-pairs benchmark (test/bench/run_pairs.sh): simhash_pairs against the
-- band-key SQL join, a GIN nested-loop self-join (on a sample of probe rows,
-- extrapolated linearly) and a brute-force self-join (on a sample,
-- extrapolated quadratically), on :rows codes of which 10% are planted
-- near-duplicates (0..4 bits from a random earlier code).
\set ON_ERROR_STOP 1
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS neardup;
DROP TABLE IF EXISTS bp;
SELECT (:rows * 9 / 10)::bigint AS base \gset

\echo == data: :rows rows
CREATE TABLE bp AS
SELECT i AS id, hashint8extended(i, 1)::simhash64 AS sh FROM generate_series(1, :base) i;
INSERT INTO bp
SELECT :base + j, (b.sh::bigint
        # CASE WHEN j % 5 >= 1 THEN 1::bigint << (hashint8extended(j, 3) & 63)::int ELSE 0 END
        # CASE WHEN j % 5 >= 2 THEN 1::bigint << (hashint8extended(j, 4) & 63)::int ELSE 0 END
        # CASE WHEN j % 5 >= 3 THEN 1::bigint << (hashint8extended(j, 5) & 63)::int ELSE 0 END
        # CASE WHEN j % 5 >= 4 THEN 1::bigint << (hashint8extended(j, 6) & 63)::int ELSE 0 END)::simhash64
FROM generate_series(1, :rows - :base) j
JOIN bp b ON b.id = 1 + abs(hashint8extended(j, 2)) % :base;
VACUUM ANALYZE bp;

\ir lib/bench_run.sql
CREATE OR REPLACE FUNCTION bench_cmd(q text, OUT seconds numeric) AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE q;
    seconds := round(extract(epoch FROM clock_timestamp() - t0)::numeric, 3);
END $$ LANGUAGE plpgsql;
DROP TABLE IF EXISTS bench_result;
CREATE TABLE bench_result (what text, seconds numeric, pairs bigint, note text);

\echo == reading the table alone (warms the cache for what follows)
INSERT INTO bench_result SELECT 'seq scan of (id, sh), count(*)', seconds, NULL, 'baseline: read only'
FROM bench_run('SELECT count(*) FROM (SELECT id, sh FROM bp OFFSET 0) s');
INSERT INTO bench_result SELECT 'seq scan of (id, sh), count(*)', seconds, NULL, 'again, warm'
FROM bench_run('SELECT count(*) FROM (SELECT id, sh FROM bp OFFSET 0) s');

\echo == simhash_pairs k = 3, auto blocks, in memory (work_mem :big_work_mem); fresh backend for its RSS high-water mark
\c
SELECT pg_backend_pid() AS pid \gset
\setenv ND_PID :pid
\! echo "backend VmHWM before: $(grep VmHWM /proc/$ND_PID/status)"
SET work_mem = :'big_work_mem';
SET client_min_messages = debug2;
INSERT INTO bench_result SELECT 'simhash_pairs k=3 auto blocks, in memory', seconds, result, 'includes reading the table'
FROM bench_run($$SELECT count(*) FROM simhash_pairs('bp', 'id', 'sh', 3)$$);
RESET client_min_messages;
\! echo "backend VmHWM after: $(grep VmHWM /proc/$ND_PID/status)"

\echo == simhash_pairs k = 3, default work_mem (4MB): batched through temporary files; fresh backend
\c
SELECT pg_backend_pid() AS pid \gset
\setenv ND_PID :pid
SET work_mem = '4MB';
SET client_min_messages = debug2;
INSERT INTO bench_result SELECT 'simhash_pairs k=3 auto blocks, work_mem 4MB (batched)', seconds, result, 'includes reading the table'
FROM bench_run($$SELECT count(*) FROM simhash_pairs('bp', 'id', 'sh', 3)$$);
RESET client_min_messages;
\! echo "backend VmHWM after: $(grep VmHWM /proc/$ND_PID/status)"

\echo == block counts and distances, in memory
SET work_mem = :'big_work_mem';
INSERT INTO bench_result SELECT format('simhash_pairs k=3 blocks=%s', b), seconds, result, NULL
FROM generate_series(4, 6) b, LATERAL bench_run(format($$SELECT count(*) FROM simhash_pairs('bp', 'id', 'sh', 3, %s)$$, b));
INSERT INTO bench_result SELECT format('simhash_pairs k=%s auto blocks', k), seconds, result, NULL
FROM (VALUES (0), (1), (2), (4), (5)) v(k), LATERAL bench_run(format($$SELECT count(*) FROM simhash_pairs('bp', 'id', 'sh', %s)$$, k));

\if :band
\echo == band-key SQL self-join, k = 3 (hash join on (key, ordinal))
SET work_mem = '256MB';
INSERT INTO bench_result SELECT 'band-key SQL join k=3 (10 keys/row)', seconds, result, 'no index: keys computed in the query'
FROM bench_run($$
    WITH keys AS MATERIALIZED (
        SELECT id, sh, key, ord::int FROM bp, unnest(simhash_band_keys(sh, 3)) WITH ORDINALITY u(key, ord))
    SELECT count(*) FROM keys a JOIN keys b ON a.key = b.key AND a.ord = b.ord AND a.id < b.id
    WHERE a.sh <~> b.sh <= 3 AND simhash_band_first(a.sh, b.sh, a.ord, 3)$$);
\endif

\echo == GIN nested-loop self-join on :gin_sample probe rows (index build timed separately)
RESET work_mem;
SET maintenance_work_mem = '256MB';
INSERT INTO bench_result SELECT 'GIN index build (simhash64_gin_ops)', seconds, NULL, NULL
FROM bench_cmd('CREATE INDEX bp_gin ON bp USING gin (sh simhash64_gin_ops)');
INSERT INTO bench_result SELECT format('GIN nested loop, %s probe rows', :gin_sample), seconds, result,
       format('extrapolated to all rows: %s s', round(seconds * :rows / :gin_sample, 1))
FROM bench_run(format($$
    SELECT count(*) FROM (SELECT id, sh FROM bp WHERE id <= %s OR id > %s) a
    JOIN bp b ON b.sh <@ hamming_ball(a.sh, 3) AND a.id < b.id$$,
    :gin_sample / 2, :rows - :gin_sample / 2));
DROP INDEX bp_gin;

\echo == brute-force self-join on a :brute_sample-row sample
CREATE TABLE bp_sample AS SELECT * FROM bp WHERE id <= :brute_sample / 2 OR id > :rows - :brute_sample / 2;
INSERT INTO bench_result SELECT format('brute-force self-join, %s rows', :brute_sample), seconds, result,
       format('extrapolated quadratically to all rows: %s s', round(seconds * (:rows::numeric / :brute_sample) ^ 2))
FROM bench_run('SELECT count(*) FROM bp_sample a JOIN bp_sample b ON a.id < b.id AND a.sh <~> b.sh <= 3');
INSERT INTO bench_result SELECT format('simhash_pairs on the same %s rows', :brute_sample), seconds, result, NULL
FROM bench_run($$SELECT count(*) FROM simhash_pairs('bp_sample', 'id', 'sh', 3)$$);
DROP TABLE bp_sample;

\echo == results (:rows rows)
SELECT what, seconds, pairs,
       CASE WHEN pairs > 0 AND seconds > 0 THEN round(pairs / seconds) END AS pairs_per_s,
       note
FROM bench_result;
DROP TABLE bench_result;
DROP FUNCTION bench_run(text);
DROP FUNCTION bench_cmd(text);
DROP TABLE bp;
