--
-- simhash_agg(feature [, weight]): equal to simhash() of the aggregated
-- arrays, NULL-skipping, parallel.
--

CREATE TABLE feat AS
SELECT g AS doc, 'f' || (g * 7 + i * i) % 50 AS feature, (i % 5 + 1)::real AS weight
FROM generate_series(1, 40) g, generate_series(1, 30) i;

SELECT doc, simhash_agg(feature, weight), simhash_agg(feature)
FROM feat WHERE doc <= 3 GROUP BY doc ORDER BY doc;

SELECT bool_and(w = simhash(fs, ws)) AS weighted_equals_array,
       bool_and(u = simhash(fs)) AS unweighted_equals_array
FROM (SELECT simhash_agg(feature, weight) AS w, simhash_agg(feature) AS u,
             array_agg(feature) AS fs, array_agg(weight) AS ws
      FROM feat GROUP BY doc) s;

-- NULL features or weights skip the row; no rows (or only NULLs): NULL.
SELECT simhash_agg(f, w) = simhash(ARRAY['a', 'c']) AS nulls_skipped
FROM (VALUES ('a', 1::real), (NULL, 1), ('b', NULL), ('c', 1)) v(f, w);
SELECT simhash_agg(f) IS NULL AS no_rows FROM (SELECT 'a'::text AS f WHERE false) s;
SELECT simhash_agg(f) IS NULL AS only_nulls FROM (VALUES (NULL::text), (NULL)) v(f);
SELECT simhash_agg(f, 0) IS NULL AS zero_weights FROM (VALUES ('a'), ('b')) v(f);

\set VERBOSITY sqlstate
SELECT simhash_agg(f, 'NaN') FROM (VALUES ('a')) v(f);
SELECT simhash_agg(f, 'Infinity') FROM (VALUES ('a')) v(f);
\set VERBOSITY default

-- Parallel aggregation: partial states are combined across workers.
CREATE TABLE bigfeat AS
SELECT 'f' || (i * 7919) % 100003 AS feature, (i % 3 + 1)::real AS weight
FROM generate_series(1, 200000) i;
ANALYZE bigfeat;
SELECT simhash_agg(feature, weight) AS serial FROM bigfeat \gset
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT simhash_agg(feature, weight) FROM bigfeat;
SELECT simhash_agg(feature, weight) = :'serial' AS parallel_equals_serial FROM bigfeat;
RESET ALL;
DROP TABLE feat, bigfeat;
