--
-- MinHash: signatures, estimates, exact Jaccard, LSH bands and parameters.
--

-- Pinned values: signatures must not change across platforms or releases.
SELECT (minhash('the quick brown fox jumps over the lazy dog'))[1:6] AS fox;
SELECT (minhash('the quick brown fox jumps over the lazy dog', seed => 1))[1:6] AS fox_seed1;
SELECT (minhash('the quick brown fox jumps over the lazy dog', num_perm => 8, shingle => 1))[1:8] AS fox_words;
SELECT (minhash('Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich', unit => 'char', shingle => 5))[1:6] AS deich_chars;
SELECT minhash(ARRAY['apple', 'banana', 'cherry'], num_perm => 6) AS fruit;
SELECT minhash(ARRAY[1, 2, 3]::bigint[], num_perm => 6) AS small_ints;
SELECT minhash(ARRAY[1, 2, 3]::bigint[], num_perm => 6, seed => 9) AS small_ints_seed9;

-- Shapes and defaults.
SELECT array_length(minhash('a b c d e'), 1) AS default_len,
       array_length(minhash('a b c d e', 1), 1) AS len_1,
       array_length(minhash('a b c d e', 8192), 1) AS len_8192,
       array_lower(minhash('a b c d e'), 1) AS lower_bound;
SELECT minhash('a b c d e') = minhash('a b c d e', 128, 3, 'word', 0) AS defaults;
-- One call site, num_perm and seed changing from row to row (the walk
-- starts are cached per call site): the same as a fresh call each time.
CREATE FUNCTION pg_temp.fresh(d text, k int, s bigint) RETURNS int4[]
LANGUAGE plpgsql AS $$
DECLARE
    r int4[];
BEGIN
    EXECUTE format('SELECT minhash(%L, %s, seed => %s)', d, k, s) INTO r;
    RETURN r;
END
$$;
SELECT bool_and(minhash(d, k, seed => s) = pg_temp.fresh(d, k, s)) AS text_same,
       bool_and(minhash(shingle_hashes(d, seed => s), k, s) = pg_temp.fresh(d, k, s)) AS bigint_same,
       count(*) AS n
FROM (VALUES ('a b c d e', 64, 0), ('a b c d e', 64, 5), ('a b c d e', 128, 5),
             ('v w x y z', 128, 5), ('a b c d e f g h', 8192, 5), ('a b c d e', 1, 0),
             ('a b c d e', 64, 0)) AS v(d, k, s);

-- The same features as simhash(text): the shingle hashes, taken as given.
SELECT minhash(d) = minhash(shingle_hashes(d)) AS word3,
       minhash(d, seed => 7) = minhash(shingle_hashes(d, seed => 7), seed => 7) AS word3_seed7,
       minhash(d, 64, 2, 'char', 3) = minhash(shingle_hashes(d, 2, 'char', 3), 64, 3) AS char2
FROM (VALUES ('It was the best of times, it was the worst of times, it was the age of wisdom')) AS v(d);
-- Folding and separators do not matter, as for simhash.
SELECT minhash('Hello, World!  Foo bar') = minhash('hello world foo bar') AS folded;

-- Sets: order and repetitions do not matter; NULL elements are skipped.
SELECT minhash(ARRAY['a', 'b', 'c']) = minhash(ARRAY['c', 'b', 'a', 'a']) AS text_set,
       minhash(ARRAY[3, 1, 2, 1]::bigint[]) = minhash(ARRAY[1, 2, 3]::bigint[]) AS int_set,
       minhash(ARRAY['a', NULL, 'b']) = minhash(ARRAY['a', 'b']) AS nulls_skipped,
       minhash('x y z x y z x y z', shingle => 1) = minhash('z y x', shingle => 1) AS text_repeats;
-- Every bin is filled, even when there are far fewer features than bins:
-- a single feature's value everywhere.
SELECT count(DISTINCT v) AS distinct_values, count(*) AS n
FROM unnest(minhash('lonely', num_perm => 512)) AS v;

-- Nothing to hash: NULL, as simhash() gives.  NULL arguments: NULL.
SELECT minhash('') IS NULL AS empty_text,
       minhash(' ,;. ') IS NULL AS only_separators,
       minhash(ARRAY[]::text[]) IS NULL AS empty_text_array,
       minhash(ARRAY[NULL, NULL]::bigint[]) IS NULL AS all_null,
       minhash(NULL::text) IS NULL AS null_doc,
       minhash('a b', num_perm => NULL) IS NULL AS null_num_perm;

-- Bad parameters.
SELECT nd_test.try($$SELECT minhash('a b c', num_perm => 0)$$);
SELECT nd_test.try($$SELECT minhash('a b c', num_perm => 8193)$$);
SELECT nd_test.try($$SELECT minhash(ARRAY['a'], num_perm => -1)$$);
SELECT nd_test.try($$SELECT minhash(ARRAY[1]::bigint[], num_perm => 100000)$$);
SELECT nd_test.try($$SELECT minhash('a b c', shingle => 0)$$);
SELECT nd_test.try($$SELECT minhash('a b c', shingle => 65)$$);
SELECT nd_test.try($$SELECT minhash('a b c', unit => 'line')$$);
SELECT nd_test.try($$SELECT minhash(ARRAY[[1, 2], [3, 4]]::bigint[])$$);
SELECT nd_test.try($$SELECT minhash(ARRAY[['a']]::text[])$$);

-- ---- minhash_jaccard ---------------------------------------------------

SELECT minhash_jaccard(minhash('a b c d e f g'), minhash('a b c d e f g')) AS same,
       minhash_jaccard(ARRAY[1, 2, 3, 4], ARRAY[1, 2, 0, 4]) AS three_of_four,
       minhash_jaccard(ARRAY[1], ARRAY[2]) AS none;
SELECT minhash_jaccard(NULL, ARRAY[1]) IS NULL AS null_arg;
SELECT nd_test.try($$SELECT minhash_jaccard(ARRAY[1, 2], ARRAY[1, 2, 3])$$);
SELECT nd_test.try($$SELECT minhash_jaccard(minhash('a b c'), minhash('a b c', 64))$$);
SELECT nd_test.try($$SELECT minhash_jaccard(ARRAY[1, NULL], ARRAY[1, 2])$$);
SELECT nd_test.try($$SELECT minhash_jaccard(ARRAY[]::int4[], ARRAY[]::int4[])$$);
SELECT nd_test.try($$SELECT minhash_jaccard(ARRAY[[1, 2]], ARRAY[[1, 2]])$$);
SELECT nd_test.try($$SELECT minhash_jaccard(array_fill(1, ARRAY[8193]), array_fill(1, ARRAY[8193]))$$);

-- ---- exact jaccard -----------------------------------------------------

-- Shingle sets, distinct: "a b c" has shingles {a b c}; "a b c a b c" has
-- {a b c, b c a, c a b}.
SELECT jaccard('a b c', 'a b c a b c') AS third,
       jaccard('a b c d', 'a b c e', shingle => 1) AS three_fifths,
       jaccard('The Cat', 'the cat!') AS folded,
       jaccard('a b', 'c d', shingle => 1) AS disjoint,
       jaccard('abcd', 'abce', 2, 'char') AS chars;
-- One empty set: 0; two: 0/0, NULL.
SELECT jaccard('', 'a b c') AS one_empty, jaccard('', '...') IS NULL AS both_empty;
SELECT jaccard(ARRAY[1, 2, 3, 3]::bigint[], ARRAY[2, 3, 4]::bigint[]) AS half,
       jaccard(ARRAY[1, NULL]::bigint[], ARRAY[1]::bigint[]) AS nulls_skipped,
       jaccard(ARRAY[]::bigint[], ARRAY[5]::bigint[]) AS one_empty,
       jaccard(ARRAY[]::bigint[], ARRAY[NULL]::bigint[]) IS NULL AS both_empty;
-- Text and feature arrays agree.
SELECT jaccard(a, b) = jaccard(shingle_hashes(a), shingle_hashes(b)) AS agree
FROM (VALUES ('one two three four five six', 'one two three four five seven')) AS v(a, b);
SELECT nd_test.try($$SELECT jaccard('a', 'b', unit => 'byte')$$);
SELECT nd_test.try($$SELECT jaccard(ARRAY[[1]]::bigint[], ARRAY[1]::bigint[])$$);

-- ---- estimates against exact Jaccard ------------------------------------

-- Pairs of 1000-element sets sharing c elements, so J = c / (2000 - c) is
-- about 0.2, 0.5, 0.8 and 0.95; 256 values; 25 seeds each.  Every estimate
-- should be within 4 standard deviations, sqrt(J (1 - J) / 256), of J.
-- The seeds are fixed, so the counts are too.
WITH pairs AS (
    SELECT target, seed,
           ARRAY(SELECT (seed * 100000 + i)::bigint FROM generate_series(1, 1000) i) AS a,
           ARRAY(SELECT (seed * 100000 + i)::bigint
                 FROM generate_series(1001 - c, 2000 - c) i) AS b
    FROM (VALUES (0.2, 333), (0.5, 667), (0.8, 889), (0.95, 974)) AS t(target, c),
         generate_series(1, 25) AS seed
), est AS (
    SELECT target, jaccard(a, b) AS exact,
           minhash_jaccard(minhash(a, 256, seed), minhash(b, 256, seed)) AS estimate
    FROM pairs
)
SELECT target, round(min(exact)::numeric, 3) AS exact,
       count(*) FILTER (WHERE abs(estimate - exact) <= 4 * sqrt(exact * (1 - exact) / 256)) AS within_4sd,
       count(*) AS n,
       abs(avg(estimate) - min(exact)) < 4 * sqrt(min(exact) * (1 - min(exact)) / 256 / 25) AS mean_within_4sd
FROM est GROUP BY target ORDER BY target;

-- Small documents (far fewer shingles than values: densification at work)
-- against the exact Jaccard of their shingle sets.
WITH docs AS (
    SELECT s, string_agg(md5((s * 7 + i)::text), ' ' ORDER BY i) AS a,
           string_agg(md5((s * 7 + CASE WHEN i % 3 = 0 THEN i + 1000 ELSE i END)::text), ' ' ORDER BY i) AS b
    FROM generate_series(1, 30) AS s, generate_series(1, 24) AS i
    GROUP BY s
), est AS (
    SELECT jaccard(a, b, shingle => 1) AS exact,
           minhash_jaccard(minhash(a, 256, 1, seed => s), minhash(b, 256, 1, seed => s)) AS estimate
    FROM docs
)
SELECT round(min(exact)::numeric, 3) AS exact, round(max(exact)::numeric, 3) AS exact_max,
       count(*) FILTER (WHERE abs(estimate - exact) <= 4 * sqrt(exact * (1 - exact) / 256)) AS within_4sd,
       count(*) AS n
FROM est;

-- ---- bands -------------------------------------------------------------

SELECT minhash_bands(ARRAY[1, 2, 3, 4, 5, 6], 3, 2) AS pinned;
SELECT array_length(minhash_bands(minhash('a b c d e'), 16, 8), 1) AS n16,
       array_length(minhash_bands(minhash('a b c d e'), 5, 20), 1) AS n5_unused_tail;
-- A key per band, band index mixed in: equal bands at different places
-- give different keys; only the band's own values matter.
SELECT k[1] <> k[2] AS index_mixed_in
FROM minhash_bands(ARRAY[7, 7, 7, 7], 2, 2) AS k;
SELECT (minhash_bands(ARRAY[1, 2, 3, 4], 2, 2))[1] = (minhash_bands(ARRAY[1, 2, 9, 9], 2, 2))[1] AS same_first,
       (minhash_bands(ARRAY[1, 2, 3, 4], 2, 2))[2] = (minhash_bands(ARRAY[1, 2, 9, 9], 2, 2))[2] AS same_second;
SELECT nd_test.try($$SELECT minhash_bands(ARRAY[1, 2, 3, 4], 3, 2)$$);
SELECT nd_test.try($$SELECT minhash_bands(ARRAY[1, 2, 3, 4], 0, 2)$$);
SELECT nd_test.try($$SELECT minhash_bands(ARRAY[1, 2, 3, 4], 2, -1)$$);
SELECT nd_test.try($$SELECT minhash_bands(ARRAY[1, 2, 3, 4], 65536, 65536)$$);
SELECT nd_test.try($$SELECT minhash_bands(ARRAY[1, NULL, 3, 4], 2, 2)$$);
SELECT nd_test.try($$SELECT minhash_bands(ARRAY[]::int4[], 1, 1)$$);

-- Banding's candidate probability against 1 - (1 - s^r)^b: pairs of known
-- Jaccard, 200 seeds each, 16 bands of 8 rows; the observed fraction of
-- pairs sharing a band should be within 4 binomial standard deviations.
WITH pairs AS (
    SELECT target, seed,
           minhash(ARRAY(SELECT (seed * 100000 + i)::bigint FROM generate_series(1, 500) i), 128, seed) AS a,
           minhash(ARRAY(SELECT (seed * 100000 + i)::bigint
                         FROM generate_series(501 - c, 1000 - c) i), 128, seed) AS b,
           c::float8 / (1000 - c) AS exact
    FROM (VALUES (0.5, 333), (0.7, 412), (0.8, 444)) AS t(target, c),
         generate_series(1, 200) AS seed
), obs AS (
    SELECT target, min(exact) AS s,
           avg((minhash_bands(a, 16, 8) && minhash_bands(b, 16, 8))::int) AS observed
    FROM pairs GROUP BY target
)
SELECT target, round(s::numeric, 3) AS s,
       round((1 - (1 - s ^ 8) ^ 16)::numeric, 2) AS expected,
       abs(observed - (1 - (1 - s ^ 8) ^ 16)) <= 4 * sqrt((1 - (1 - s ^ 8) ^ 16) * (1 - s ^ 8) ^ 16 / 200) AS within_4sd
FROM obs ORDER BY target;

-- ---- LSH parameters ----------------------------------------------------

SELECT * FROM minhash_lsh_params(0.5);
SELECT t, (minhash_lsh_params(t, 128)).* FROM unnest(ARRAY[0.3, 0.7, 0.9]) AS t;
SELECT * FROM minhash_lsh_params(0.8, 256, fp_weight => 0.9, fn_weight => 0.1);
SELECT * FROM minhash_lsh_params(0.5, 64, fp_weight => 0, fn_weight => 1);
SELECT * FROM minhash_lsh_params(0.5, 64, fp_weight => 1, fn_weight => 0);
SELECT * FROM minhash_lsh_params(0.5, 1);
SELECT * FROM minhash_lsh_params(0, 16) AS zero, minhash_lsh_params(1, 16) AS one;

-- The same choice by brute force in SQL (Simpson's rule on 128 intervals,
-- datasketch's search order): the error of the C choice is the minimum.
WITH grid AS (
    SELECT i, CASE WHEN i IN (0, 128) THEN 1 WHEN i % 2 = 1 THEN 4 ELSE 2 END AS w
    FROM generate_series(0, 128) AS i
), cand AS (
    SELECT b, r FROM generate_series(1, 32) AS b, generate_series(1, 32) AS r WHERE b * r <= 32
), err AS (
    SELECT b, r,
           sum(w * (0.6 / 128 / 3) * (1 - (1 - (0.6 * i / 128) ^ r) ^ b)) * 0.5 +
           sum(w * (0.4 / 128 / 3) * ((1 - (0.6 + 0.4 * i / 128) ^ r) ^ b)) * 0.5 AS e
    FROM cand, grid GROUP BY b, r
)
SELECT (SELECT ROW(b, r) FROM err ORDER BY round(e::numeric, 12), b, r LIMIT 1) = ROW(p.bands, p.rows) AS agrees
FROM minhash_lsh_params(0.6, 32) AS p;

SELECT nd_test.try($$SELECT minhash_lsh_params(1.5)$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(-0.1)$$);
SELECT nd_test.try($$SELECT minhash_lsh_params('NaN')$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(0.5, 0)$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(0.5, 9000)$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(0.5, 128, -1, 1)$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(0.5, 128, 0, 0)$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(0.5, 128, 'Infinity', 1)$$);

-- ---- a GIN index on the bands ------------------------------------------

-- Built-in array_ops on an expression index; && finds rows sharing a band.
CREATE TABLE mh_docs (id int PRIMARY KEY, body text NOT NULL, sig int4[]);
INSERT INTO mh_docs
SELECT i, string_agg(md5((i / 4 * 100 + j)::text), ' ' ORDER BY j)
       || CASE WHEN i % 4 = 0 THEN '' ELSE ' extra' || i END, NULL
FROM generate_series(1, 400) AS i, generate_series(1, 40) AS j
GROUP BY i;
UPDATE mh_docs SET sig = minhash(body);
CREATE INDEX mh_docs_bands ON mh_docs USING gin (minhash_bands(sig, 16, 8));
ANALYZE mh_docs;

-- Plans, without the conditions' folded array constants (band keys,
-- signatures).
CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        -- the nodes the enable_* settings disable, marked from 18
        CONTINUE WHEN line ~ '^\s*Disabled: true$';
        RETURN NEXT regexp_replace(line, '''\{[-0-9,]*\}''::(bigint|integer)\[\]', '<array>', 'g');
    END LOOP;
END
$$;

SET enable_seqscan = off;
SELECT * FROM pg_temp.plan($$
SELECT id FROM mh_docs
WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash('some query text here'), 16, 8)$$);
PREPARE similar_to(int4[]) AS
SELECT id FROM mh_docs WHERE minhash_bands(sig, 16, 8) && minhash_bands($1, 16, 8) ORDER BY id;
-- (at 400 rows a scan of the primary key in id order, the condition as
-- its filter, costs about as much, and 18 prices GIN's scan higher: it is
-- kept out)
SET enable_indexscan = off;
SELECT * FROM pg_temp.plan($$EXECUTE similar_to(minhash('some query text here'))$$);
RESET enable_indexscan;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE similar_to(minhash('some query text here'));
RESET plan_cache_mode;

-- Docs 4k .. 4k+3 share 40 md5 words and differ by one word: each finds
-- its group (and, with high probability, nothing else).
SELECT sig AS sig9 FROM mh_docs WHERE id = 9 \gset
EXECUTE similar_to(:'sig9');
SELECT id, round(minhash_jaccard(sig, (SELECT sig FROM mh_docs WHERE id = 9))::numeric, 2) AS estimate,
       round(jaccard(body, (SELECT body FROM mh_docs WHERE id = 9))::numeric, 2) AS exact
FROM mh_docs WHERE id BETWEEN 8 AND 11 ORDER BY id;
-- The one-line form: candidates from the index, then the estimate.
SELECT * FROM pg_temp.plan($$
SELECT id FROM mh_docs WHERE minhash_similar(sig, minhash('some query text here'), 0.8, 16, 8)$$);
PREPARE similar_at_least(int4[], float8) AS
SELECT id FROM mh_docs WHERE minhash_similar(sig, $1, $2, 16, 8) ORDER BY id;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE similar_at_least(minhash('some query text here'), 0.8);
RESET plan_cache_mode;
EXECUTE similar_at_least(:'sig9', 0.8);
EXECUTE similar_at_least(:'sig9', 0.99);
SELECT id FROM mh_docs WHERE minhash_similar(sig, minhash((SELECT body FROM mh_docs WHERE id = 8)), 0.9, 16, 8) ORDER BY id;
-- Bands and rows other than the index's: no index, still the right answer.
SELECT * FROM pg_temp.plan($$
SELECT id FROM mh_docs WHERE minhash_similar(sig, minhash('some query text here'), 0.8, 8, 16)$$);
SELECT id FROM mh_docs WHERE minhash_similar(sig, :'sig9', 0.8, 8, 16) ORDER BY id;
SELECT minhash_similar(NULL, ARRAY[1], 0.5, 1, 1) IS NULL AS null_sig,
       minhash_similar(ARRAY[1], ARRAY[1], 0.5, 1, 1) AS same,
       minhash_similar(ARRAY[1, 2], ARRAY[1, 3], 0.5, 1, 1) AS half,
       minhash_similar(ARRAY[1, 2], ARRAY[1, 3], 0.6, 1, 1) AS below,
       minhash_similar(ARRAY[2, 1], ARRAY[3, 1], 0.5, 1, 1) AS no_shared_band;

-- Every document as the query: the index finds the pairs a scan finds.
-- Ids 1 .. 400 in groups id / 4 make 597 similar pairs (J 0.95 or more);
-- banding at 16 x 8 misses one with probability (1 - 0.95^8)^16 < 1e-7,
-- and pairs of different groups (J = 0) never share a band.
SELECT count(*) AS pairs, count(*) FILTER (WHERE a.id / 4 = b.id / 4) AS in_group
FROM mh_docs a JOIN mh_docs b
  ON a.id < b.id AND minhash_bands(b.sig, 16, 8) && minhash_bands(a.sig, 16, 8);
SELECT * FROM pg_temp.plan($$
SELECT count(*) FROM mh_docs a JOIN mh_docs b
  ON a.id < b.id AND minhash_bands(b.sig, 16, 8) && minhash_bands(a.sig, 16, 8)$$);
RESET enable_seqscan;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
SELECT count(*) AS pairs, count(*) FILTER (WHERE a.id / 4 = b.id / 4) AS in_group
FROM mh_docs a JOIN mh_docs b
  ON a.id < b.id AND minhash_bands(b.sig, 16, 8) && minhash_bands(a.sig, 16, 8);
RESET enable_bitmapscan;
RESET enable_indexscan;
DEALLOCATE similar_to;
DEALLOCATE similar_at_least;
DROP TABLE mh_docs;
