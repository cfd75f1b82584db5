--
-- Exact Jaccard of token arrays, and the LSH one-liner verified with exact
-- Jaccard on the texts (minhash_similar_exact): band index used, no false
-- positives.
--

-- text[] as sets: order, repetitions and NULLs do not matter.
SELECT jaccard(ARRAY['a', 'b', 'c'], ARRAY['b', 'c', 'd']) AS half,
       jaccard(ARRAY['a', 'b', 'b', NULL], ARRAY['b', 'a']) AS same,
       jaccard(ARRAY['x'], ARRAY['y']) AS disjoint,
       jaccard(ARRAY[]::text[], ARRAY['y']) AS one_empty,
       jaccard(ARRAY[]::text[], ARRAY[NULL]::text[]) IS NULL AS both_empty,
       jaccard(ARRAY['Ab'], ARRAY['ab']) AS case_matters;
-- Token sets of two texts, and the estimate from minhash(text[]).
SELECT round(jaccard(a, b)::numeric, 3) AS exact,
       round(minhash_jaccard(minhash(a, 256), minhash(b, 256))::numeric, 3) AS estimate
FROM (SELECT ARRAY(SELECT 'w' || i FROM generate_series(1, 300) i) AS a,
             ARRAY(SELECT 'w' || i FROM generate_series(101, 400) i) AS b) AS v;
SELECT jaccard(ARRAY[['a']], ARRAY['a']);

CREATE TABLE mv_docs (id int PRIMARY KEY, body text NOT NULL, sig int4[]);
-- Groups of 5: one text and four copies with 1 to 4 of its 40 words
-- replaced (exact Jaccard of the word 3-shingles with the original 0.85,
-- 0.73, 0.62 and 0.58).
INSERT INTO mv_docs
SELECT g * 5 + e, string_agg(CASE WHEN j <= e * 10 AND j % 10 = 0 THEN 'x' || j ELSE md5((g * 100 + j)::text) END, ' ' ORDER BY j), NULL
FROM generate_series(0, 59) AS g, generate_series(0, 4) AS e, generate_series(1, 40) AS j
GROUP BY g, e;
UPDATE mv_docs SET sig = minhash(body);
CREATE INDEX mv_docs_bands ON mv_docs USING gin (minhash_bands(sig, 32, 4));
ANALYZE mv_docs;

CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        RETURN NEXT regexp_replace(line, '''\{[-0-9,]*\}''::(bigint|integer)\[\]', '<array>', 'g');
    END LOOP;
END
$$;

SET enable_seqscan = off;
-- Inlined: a Bitmap Index Scan on the band index, exact Jaccard as the filter.
SELECT * FROM pg_temp.plan($$
SELECT id FROM mv_docs
WHERE minhash_similar_exact(sig, minhash('some query text'), body, 'some query text', 0.6, 32, 4)$$);
PREPARE similar_exact(text, float8) AS
SELECT id, round(jaccard(body, $1)::numeric, 2) AS exact FROM mv_docs
WHERE minhash_similar_exact(sig, minhash($1), body, $1, $2, 32, 4) ORDER BY id;
SET plan_cache_mode = force_generic_plan;
SELECT * FROM pg_temp.plan($$EXECUTE similar_exact('some query text', 0.6)$$);
RESET plan_cache_mode;
RESET enable_seqscan;

-- Group 7's original as the query: its copies at exact Jaccard >= 0.6 and
-- nothing below (the estimate-based one-liner may differ on both sides).
SELECT body AS q7 FROM mv_docs WHERE id = 35 \gset
EXECUTE similar_exact(:'q7', 0.6);
SELECT id, round(jaccard(body, :'q7')::numeric, 2) AS exact,
       round(minhash_jaccard(sig, minhash(:'q7'))::numeric, 2) AS estimate
FROM mv_docs WHERE id BETWEEN 35 AND 39 ORDER BY id;

-- Every document as the query at 0.6: no pair below the threshold is
-- returned (exact verification), and every pair at or above it that
-- shares a band is; 32 x 4 bands miss a pair of J 0.6 with probability
-- (1 - 0.6^4)^32 < 0.002.
WITH found AS (
    SELECT a.id AS a, b.id AS b, jaccard(a.body, b.body) AS j
    FROM mv_docs a JOIN mv_docs b
      ON a.id < b.id AND minhash_similar_exact(b.sig, a.sig, b.body, a.body, 0.6, 32, 4)
), truth AS (
    SELECT a.id AS a, b.id AS b FROM mv_docs a JOIN mv_docs b
      ON a.id < b.id AND a.id / 5 = b.id / 5 AND jaccard(a.body, b.body) >= 0.6
)
SELECT (SELECT count(*) FROM found) AS found,
       (SELECT count(*) FROM found WHERE j < 0.6) AS below_threshold,
       (SELECT count(*) FROM truth) AS true_pairs,
       (SELECT count(*) FROM truth t WHERE NOT EXISTS (SELECT 1 FROM found f WHERE f.a = t.a AND f.b = t.b)) AS missed;

DEALLOCATE similar_exact;
DROP TABLE mv_docs;
