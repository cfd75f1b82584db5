-- Clusters benchmark (test/bench/run_clusters.sh): simhash_clusters on a
-- table with huge groups of identical codes against simhash_pairs on its
-- random rows alone, the baseline measured in the same run.  Each
-- measurement runs in a fresh backend and reports wall time, temporary
-- bytes written (pg_stat_database) and the backend's peak memory (VmHWM
-- less the shared memory it mapped, from /proc/self/status).
--
-- bc_random: :rows random codes (hashint8extended).  bc_dup: the first
-- :dup_random of them, plus one group of :group identical codes and
-- :ngroups groups of :gsize near-copies (0..3 bits from their group's
-- code, which a quarter of each group has exactly).
\set ON_ERROR_STOP 1
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS neardup;

\echo == data: :rows random rows; the table with groups: :dup_random of them + one group of :group identical codes + :ngroups groups of :gsize near-copies
DROP TABLE IF EXISTS bc_random, bc_dup;
CREATE TABLE bc_random AS
SELECT i::bigint AS id, hashint8extended(i, 11)::simhash64 AS sh FROM generate_series(1, :rows) i;
CREATE TABLE bc_dup AS SELECT * FROM bc_random WHERE id <= :dup_random;
INSERT INTO bc_dup SELECT 10000000000 + i, 'deadbeefdeadbeef'::simhash64 FROM generate_series(1, :group) i;
INSERT INTO bc_dup
SELECT 20000000000 + i,
       (hashint8extended(i % :ngroups, 12)
        # CASE WHEN i / :ngroups % 4 >= 1 THEN 1::bigint << (hashint8extended(i, 13) & 63)::int ELSE 0 END
        # CASE WHEN i / :ngroups % 4 >= 2 THEN 1::bigint << (hashint8extended(i, 14) & 63)::int ELSE 0 END
        # CASE WHEN i / :ngroups % 4 >= 3 THEN 1::bigint << (hashint8extended(i, 15) & 63)::int ELSE 0 END)::simhash64
FROM generate_series(1, :ngroups * :gsize) i;
VACUUM ANALYZE bc_random;
VACUUM ANALYZE bc_dup;
SELECT (SELECT count(*) FROM bc_random) AS random_rows, (SELECT count(*) FROM bc_dup) AS dup_rows;

\ir lib/measure_setup.sql

-- warm the cache
SELECT count(*) FROM bc_random;
SELECT count(*) FROM bc_dup;
