-- Data of test/bench/run_clusters_spill.sh (dedup_clusters past work_mem):
--   cs_pairs: :pairs random pairs among 2 * :pairs ids;
--   cs_groups: the shape a block-sharded layout's shards send each night:
--     :groups groups of 5 ids as arrays, chained three by three through a
--     shared id, and one group of :giant ids.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS neardup;
DROP TABLE IF EXISTS cs_pairs, cs_groups;
CREATE TABLE cs_pairs AS
SELECT abs(hashint8extended(i, 1)) % (2 * :pairs) AS a, abs(hashint8extended(i, 2)) % (2 * :pairs) AS b
FROM generate_series(1, :pairs) i;
CREATE TABLE cs_groups AS
SELECT ARRAY(SELECT 5 * n + k FROM generate_series(0, 4) k)
       || CASE WHEN n % 3 <> 0 THEN ARRAY[5 * (n + 1)::int8] ELSE '{}'::int8[] END AS ids
FROM generate_series(0, :groups - 1) n;
INSERT INTO cs_groups SELECT array_agg(10 * :groups + i ORDER BY i DESC) FROM generate_series(1, :giant) i;
VACUUM ANALYZE cs_pairs;
VACUUM ANALYZE cs_groups;
SELECT (SELECT count(*) FROM cs_pairs) AS pairs, (SELECT sum(cardinality(ids)) FROM cs_groups) AS group_ids;

\ir lib/measure_setup.sql

-- warm the cache
SELECT count(*) FROM cs_pairs;
SELECT count(*) FROM cs_groups;
