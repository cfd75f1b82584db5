--
-- Hardening from the 0.2 audit: jaccard() in memory bounded by work_mem
-- (its shingle sets spill to a tuplesort), with the same values as an
-- independent SQL computation at any work_mem; minhash_lsh_params at its
-- largest num_perm; weighted SimHash independent of the features' order.
--

-- Two long texts with ~120,000 distinct shingles each, two thirds shared,
-- and a long text with few distinct shingles (deduplicated in memory).
CREATE TABLE hj AS
SELECT (SELECT string_agg('w' || (i % 90000) || ' x' || (i * 7 % 1013), ' ') FROM generate_series(1, 60000) i) AS a,
       (SELECT string_agg('w' || ((i + 30000) % 90000) || ' x' || ((i + 30000) * 7 % 1013), ' ') FROM generate_series(1, 60000) i) AS b,
       (SELECT string_agg('the same sentence again and again', ' ') FROM generate_series(1, 30000) i) AS c;
SELECT length(a) AS a_chars, length(b) AS b_chars, length(c) AS c_chars FROM hj;

-- The reference: set sizes of shingle_hashes() in SQL.
CREATE TABLE hj_ref AS
WITH sa AS (SELECT DISTINCT unnest(shingle_hashes(a)) AS h FROM hj),
     sb AS (SELECT DISTINCT unnest(shingle_hashes(b)) AS h FROM hj)
SELECT (SELECT count(*) FROM sa JOIN sb USING (h))::float8
       / (SELECT count(*) FROM (SELECT h FROM sa UNION SELECT h FROM sb) u) AS j_ab,
       (SELECT count(*) FROM sa) AS distinct_a;
SELECT distinct_a, round(j_ab::numeric, 6) AS j_ab FROM hj_ref;

-- The same value in memory and spilled: at work_mem 64kB a set keeps at
-- most 4,096 features in memory, and these have 120,000 distinct ones.
SET work_mem = '64MB';
SELECT jaccard(a, b) = (SELECT j_ab FROM hj_ref) AS in_memory_exact FROM hj;
SET work_mem = '64kB';
SELECT jaccard(a, b) = (SELECT j_ab FROM hj_ref) AS spilled_exact FROM hj;
SELECT jaccard(a, a) AS self, jaccard(c, c) AS repeated_self, jaccard(a, c) AS disjoint FROM hj;
-- arrays: duplicates, NULLs, both orders; text[] too
SELECT jaccard(array_cat(shingle_hashes(a), shingle_hashes(a)), shingle_hashes(b)) = (SELECT j_ab FROM hj_ref) AS array_exact,
       jaccard(ARRAY[3, 1, NULL, 2, 2]::bigint[], ARRAY[2, 3, 4, NULL]::bigint[]) AS small,
       jaccard(ARRAY[NULL]::bigint[], ARRAY[]::bigint[]) AS both_empty,
       jaccard(ARRAY['a', 'b', 'a'], ARRAY['b', 'c']) AS texts
FROM hj;
RESET work_mem;
SELECT jaccard(ARRAY[1, 2]::bigint[], ARRAY[[1, 2]]::bigint[]);

-- minhash_lsh_params at the largest num_perm (the search checks for
-- interrupts), the same answer as before.
SELECT * FROM minhash_lsh_params(0.5, 8192);

DROP TABLE hj, hj_ref;

-- Weighted SimHash is exact, so the order of the features does not matter:
-- 1e20 and -1e20 on the same feature cancel whatever comes between them
-- (0.1 summed in floating point and lost the 1 in some orders).
SELECT simhash(ARRAY['x', 'y', 'x'], ARRAY[1e20, 1, -1e20]::real[]) AS xyx,
       simhash(ARRAY['x', 'x', 'y'], ARRAY[1e20, -1e20, 1]::real[]) AS xxy,
       simhash(ARRAY['y', 'x', 'x'], ARRAY[1, -1e20, 1e20]::real[]) AS yxx,
       simhash(ARRAY['y']) AS y_alone;
SELECT simhash(ARRAY[7, 9, 7]::bigint[], ARRAY[3e38, 1e-45, -3e38]::real[])
       = simhash(ARRAY[9]::bigint[]) AS extremes_cancel;
-- simhash_agg in any row order, and in parallel, is simhash() of the arrays.
CREATE TABLE hw (doc int, f text, w real);
INSERT INTO hw
SELECT d, 'f' || (i % 50), CASE i % 7 WHEN 0 THEN 1e30 WHEN 1 THEN -1e30 ELSE (i % 13) / 4.0 - 1 END
FROM generate_series(1, 40) d, generate_series(1, 200 + d) i;
SELECT count(DISTINCT fp) AS docs_distinct,
       bool_and(fp = fp_rev AND fp = fp_arr) AS order_independent
FROM (SELECT doc,
             simhash_agg(f, w ORDER BY f, w) AS fp,
             simhash_agg(f, w ORDER BY f DESC, w DESC) AS fp_rev,
             simhash(array_agg(f ORDER BY w), array_agg(w ORDER BY w)) AS fp_arr
      FROM hw GROUP BY doc) s;
CREATE TABLE hw_serial AS SELECT doc, simhash_agg(f, w) AS fp FROM hw GROUP BY doc;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER TABLE hw SET (parallel_workers = 2);
SELECT count(*) AS docs, count(*) FILTER (WHERE p.fp = s.fp) AS same_as_serial
FROM (SELECT doc, simhash_agg(f, w) AS fp FROM hw GROUP BY doc) p JOIN hw_serial s USING (doc);
EXPLAIN (COSTS OFF) SELECT doc, simhash_agg(f, w) FROM hw GROUP BY doc;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE hw, hw_serial;
