-- minhash_clusters benchmark (test/bench/run_minhash_clusters.sh): :n rows
-- of 128-value signatures: 60% random, one group of 20% identical
-- signatures (an error page), 20% near-copies in groups of 10 (0..20 of 128
-- values changed); minhash_clusters at threshold 0.8 against a sequential
-- scan of the same rows, the baseline of the same run (best of 3 each).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS neardup;
DROP TABLE IF EXISTS s;
CREATE TABLE s AS
SELECT i AS id,
       CASE WHEN i <= :n * 0.6 THEN (SELECT array_agg((hashint8extended(i * 128 + v, 1) >> 32)::int4) FROM generate_series(1, 128) v)
            WHEN i <= :n * 0.8 THEN (SELECT array_agg((hashint8extended(v, 2) >> 32)::int4) FROM generate_series(1, 128) v)
            ELSE (SELECT array_agg(CASE WHEN v <= (i % 21) THEN (hashint8extended(i * 128 + v, 3) >> 32)::int4
                                        ELSE (hashint8extended((i / 10) * 128 + v, 4) >> 32)::int4 END) FROM generate_series(1, 128) v)
       END AS sig
FROM generate_series(1, :n) i;
VACUUM ANALYZE s;
SET work_mem = '1GB';
\ir lib/bench_run.sql
CREATE TEMP TABLE r (what text, seconds numeric, result bigint);
INSERT INTO r SELECT 'seq scan of (id, sig)', seconds, result FROM bench_run('SELECT count(*) FROM (SELECT id, sig FROM s OFFSET 0) x');
INSERT INTO r SELECT 'minhash_clusters 0.8', seconds, result FROM bench_run('SELECT count(*) FROM minhash_clusters(''s'', ''id'', ''sig'', 0.8)');
INSERT INTO r SELECT 'seq scan of (id, sig)', seconds, result FROM bench_run('SELECT count(*) FROM (SELECT id, sig FROM s OFFSET 0) x');
INSERT INTO r SELECT 'minhash_clusters 0.8', seconds, result FROM bench_run('SELECT count(*) FROM minhash_clusters(''s'', ''id'', ''sig'', 0.8)');
INSERT INTO r SELECT 'seq scan of (id, sig)', seconds, result FROM bench_run('SELECT count(*) FROM (SELECT id, sig FROM s OFFSET 0) x');
INSERT INTO r SELECT 'minhash_clusters 0.8', seconds, result FROM bench_run('SELECT count(*) FROM minhash_clusters(''s'', ''id'', ''sig'', 0.8)');
\echo == :n rows
SELECT what, min(seconds) AS best_seconds, max(result) AS rows_out,
       round(min(seconds) / (SELECT min(seconds) FROM r WHERE what LIKE 'seq%'), 1) AS x_seq_scan
FROM r GROUP BY what ORDER BY what;
