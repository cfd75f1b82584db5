--
-- MinHash band lookups in the planner: `minhash_bands(sig, b, r) &&
-- minhash_bands(q, b, r)` is estimated from the bands (band_support.c), not
-- at half a percent of the rows per band key as the built-in && would, and
-- still uses the GIN index on minhash_bands(sig, b, r).
--
SET jit = off;
CREATE FUNCTION pg_temp.estimate(query text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;

-- 20,000 documents with signatures of 128 random values; 100 near copies
-- (documents 1..100 with their last 24 values changed: 8 of the 9 bands of
-- 13 values shared); a group of 3,000
-- identical signatures; NULL signatures.
CREATE TABLE mb (id int, sig int4[]);
INSERT INTO mb
SELECT i, (SELECT array_agg(hashint4(i * 1000 + k) ORDER BY k) FROM generate_series(1, 128) k)
FROM generate_series(1, 20000) i;
INSERT INTO mb
SELECT 100000 + id,
       (SELECT array_agg(CASE WHEN k > 104 THEN hashint4(-id * 1000 - k) ELSE sig[k] END ORDER BY k)
        FROM generate_series(1, 128) k)
FROM mb WHERE id <= 100;
INSERT INTO mb
SELECT 200000 + i, (SELECT array_agg(hashint4(-k) ORDER BY k) FROM generate_series(1, 128) k)
FROM generate_series(1, 3000) i;
INSERT INTO mb SELECT 300000 + i, NULL FROM generate_series(1, 20) i;
CREATE INDEX mb_bands ON mb USING gin (minhash_bands(sig, 9, 13));
VACUUM ANALYZE mb;
SELECT sig AS q FROM mb WHERE id = 7 \gset
SELECT sig AS g FROM mb WHERE id = 200001 \gset
SELECT (SELECT array_agg(hashint4(k + 777777) ORDER BY k) FROM generate_series(1, 128) k) AS miss \gset

-- The lookup as users write it: the index, and the rewritten clause in the
-- plan's filter-free bitmap scan.
EXPLAIN (COSTS OFF)
SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && minhash_bands(:'q', 9, 13);
-- The same rows as a sequential scan.
SELECT array_agg(id ORDER BY id) AS index_rows
FROM mb WHERE minhash_bands(sig, 9, 13) && minhash_bands(:'q', 9, 13);
SET enable_bitmapscan = off;
SET enable_indexscan = off;
SELECT array_agg(id ORDER BY id) AS seq_rows
FROM mb WHERE minhash_bands(sig, 9, 13) && minhash_bands(:'q', 9, 13);
SELECT count(*) AS group_seq_rows
FROM mb WHERE minhash_bands(sig, 9, 13) && minhash_bands(:'g', 9, 13);
RESET enable_bitmapscan;
RESET enable_indexscan;
SELECT count(*) AS group_index_rows
FROM mb WHERE minhash_bands(sig, 9, 13) && minhash_bands(:'g', 9, 13);

-- Estimates: a document with one near copy, a query that matches nothing,
-- and a member of the 3,000-row group (its keys are among ANALYZE's most
-- common elements).  With the built-in estimate of && (no rewrite), all
-- three are false.
SELECT pg_temp.estimate(format('SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && minhash_bands(%L, 9, 13)', :'q')) <= 20 AS near_copy_few,
       pg_temp.estimate(format('SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && minhash_bands(%L, 9, 13)', :'miss')) <= 20 AS miss_few,
       pg_temp.estimate(format('SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && minhash_bands(%L, 9, 13)', :'g')) BETWEEN 1500 AND 6000 AS group_many;
-- Through minhash_similar (an SQL function the planner inlines).
EXPLAIN (COSTS OFF)
SELECT id FROM mb WHERE minhash_similar(sig, :'q', 0.8, 9, 13);
SELECT pg_temp.estimate(format('SELECT id FROM mb WHERE minhash_similar(sig, %L, 0.8, 9, 13)', :'q')) <= 20 AS similar_few;
SELECT array_agg(id ORDER BY id) AS similar_rows FROM mb WHERE minhash_similar(sig, :'q', 0.8, 9, 13);

-- A literal of a million keys, as any role may write on its own table: the
-- estimate reads at most 10,000 of them and counts the rest as distinct,
-- so planning costs about what reading the literal does, and the lookup is
-- estimated at every row with a signature.  (Comparing every key with
-- every other took minutes at this size, beyond the reach of
-- statement_timeout; here the timeout is a net that a planner reading the
-- keys once never meets.)
SET statement_timeout = '60s';
\set VERBOSITY terse
SELECT pg_temp.estimate(format('SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && %L::int8[]',
                               (SELECT array_agg(k)::text FROM generate_series(1, 1000000) k)))
       = pg_temp.estimate('SELECT id FROM mb WHERE sig IS NOT NULL') AS million_keys_every_row;
\set VERBOSITY default
RESET statement_timeout;
-- Repeated keys count once: a document's keys 1,000 times over are
-- estimated as the keys once.
SELECT pg_temp.estimate(format('SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && %L::int8[]',
                               (SELECT array_agg(b) FROM generate_series(1, 1000), unnest(minhash_bands(:'q', 9, 13)) b)))
       = pg_temp.estimate(format('SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && %L::int8[]',
                                 minhash_bands(:'q', 9, 13))) AS repeats_once,
       pg_temp.estimate(format('SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && %L::int8[]',
                               (SELECT array_agg(b) FROM generate_series(1, 1000), unnest(minhash_bands(:'g', 9, 13)) b)))
       = pg_temp.estimate(format('SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && %L::int8[]',
                                 minhash_bands(:'g', 9, 13))) AS group_repeats_once;

-- Generic plans: the query's keys unknown, still the index and few rows,
-- also as the first statement of a new session (the library that rewrites
-- the lookup is loaded when minhash_bands() is planned).
\c
SELECT sig AS q FROM mb WHERE id = 7 \gset
PREPARE mb_lookup(int4[]) AS
SELECT id FROM mb WHERE minhash_bands(sig, 9, 13) && minhash_bands($1, 9, 13);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE mb_lookup(:'q');
EXECUTE mb_lookup(:'q');
RESET plan_cache_mode;

-- Other array overlaps are left as they are.
EXPLAIN (COSTS OFF)
SELECT id FROM mb WHERE ARRAY[1::bigint, 2] && ARRAY[id::bigint];

-- The function itself: the built-in && on int8[], strict.
SELECT minhash_bands_overlap('{1,2,3}', '{3,4}') AS shares,
       minhash_bands_overlap('{1,2,3}', '{4}') AS disjoint,
       minhash_bands_overlap('{1,NULL}', '{NULL}') AS null_elements,
       minhash_bands_overlap(NULL, '{4}') IS NULL AS strict;

DROP TABLE mb;
