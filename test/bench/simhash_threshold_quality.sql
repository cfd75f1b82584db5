-- "At least t similar" with SimHash on the demo corpus: recall and
-- precision of the radius against exact Jaccard (the same word 3-shingles
-- as simhash(text)), and the model behind simhash_radius() checked against
-- what the fingerprints do.
--
-- Natural pairs: every pair of corpus documents.  Exact Jaccard is
-- computed for the pairs within Hamming distance 20 and for those whose
-- estimate from an independent 256-value MinHash (seed 1) is at least
-- 0.35; a pair of J >= 0.5 falls below that estimate with probability
-- < 1e-5, so every other pair counts as dissimilar.
-- Planted pairs: each document of 100 words or more and six edited copies
-- of it (1%, 2%, 4%, 7% and 10% of the words replaced; the last 15% of
-- the words dropped), for Jaccard values spread over 0.5..1 -- the
-- natural pairs are mostly exact copies (J = 1).
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET jit = off;
CREATE EXTENSION neardup;

\ir ../demo/load_corpus.sql

CREATE TABLE d AS
SELECT id, body, simhash(body) AS sh, minhash(body, 256, seed => 1) AS sig_truth
FROM doc WHERE simhash(body) IS NOT NULL;

CREATE TABLE natural_pairs AS
SELECT a.id AS a, b.id AS b, a.sh <~> b.sh AS hd,
       CASE WHEN a.sh <~> b.sh <= 20 OR minhash_jaccard(a.sig_truth, b.sig_truth) >= 0.35
            THEN jaccard(a.body, b.body) ELSE 0 END AS j
FROM d a JOIN d b ON a.id < b.id;

SELECT setseed(0.5);
CREATE TABLE variants AS
SELECT d.id, v.e, CASE WHEN v.e <= 5
                       THEN (SELECT string_agg(CASE WHEN random() < v.rate THEN 'edit' || floor(random() * 1e9)::bigint ELSE w END, ' ' ORDER BY n)
                             FROM regexp_split_to_table(d.body, '\s+') WITH ORDINALITY AS t(w, n))
                       ELSE (SELECT string_agg(w, ' ' ORDER BY n)
                             FROM (SELECT w, n, count(*) OVER () AS words
                                   FROM regexp_split_to_table(d.body, '\s+') WITH ORDINALITY AS t(w, n)) t
                             WHERE n <= 0.85 * words) END AS body
FROM d, (VALUES (1, 0.01), (2, 0.02), (3, 0.04), (4, 0.07), (5, 0.10), (6, NULL)) AS v(e, rate)
WHERE array_length(regexp_split_to_array(d.body, '\s+'), 1) >= 100;
CREATE TABLE planted_pairs AS
SELECT v.id, v.e, d.sh <~> simhash(v.body) AS hd, jaccard(d.body, v.body) AS j
FROM variants v JOIN d USING (id);

\echo 'Demo corpus: documents, natural pairs (J >= 0.8, of which identical), planted pairs:'
SELECT (SELECT count(*) FROM d) AS documents, count(*) AS natural_pairs,
       count(*) FILTER (WHERE j >= 0.8) AS j_ge_08, count(*) FILTER (WHERE j = 1) AS identical,
       (SELECT count(*) FROM planted_pairs) AS planted_pairs,
       (SELECT count(*) FROM planted_pairs WHERE j >= 0.8) AS planted_j_ge_08
FROM natural_pairs;

\echo 'Recall and precision by radius: pairs within the radius (candidates), precision and recall'
\echo 'at J >= 0.8, recall at J >= 0.9; natural pairs, then planted pairs (recall only):'
SELECT k AS radius,
       count(*) FILTER (WHERE hd <= k) AS candidates,
       round(avg((j >= 0.8)::int) FILTER (WHERE hd <= k), 3) AS precision_08,
       round(avg((hd <= k)::int) FILTER (WHERE j >= 0.8), 3) AS recall_08,
       round(avg((hd <= k)::int) FILTER (WHERE j >= 0.9), 3) AS recall_09,
       (SELECT round(avg((p.hd <= k)::int) FILTER (WHERE p.j >= 0.8), 3) FROM planted_pairs p) AS planted_recall_08,
       (SELECT round(avg((p.hd <= k)::int) FILTER (WHERE p.j >= 0.9), 3) FROM planted_pairs p) AS planted_recall_09
FROM natural_pairs, unnest(ARRAY[3, 6, 8, 10, 12, 13, 15, 17]) AS k
GROUP BY k ORDER BY k;

\echo 'The model at its worst case: planted pairs with J in [t, t + 0.05), the share within'
\echo 'simhash_radius(t, recall) against the recall asked (below it: the model is optimistic there):'
SELECT t, rc AS recall_asked, simhash_radius(t, rc) AS radius, count(*) AS pairs,
       round(avg((hd <= simhash_radius(t, rc))::int), 3) AS recall_measured
FROM planted_pairs, unnest(ARRAY[0.6, 0.7, 0.8, 0.9]) AS t, unnest(ARRAY[0.9, 0.95, 0.99]) AS rc
WHERE j >= t AND j < t + 0.05
GROUP BY t, rc ORDER BY t, rc;

\echo 'Distance by similarity: mean measured against the model''s 64 * acos(2J / (1 + J)) / pi:'
SELECT width_bucket(j, 0.5, 1.0, 5) AS bucket, round(min(j)::numeric, 2) AS j_min, round(max(j)::numeric, 2) AS j_max,
       count(*) AS pairs, round(avg(hd), 2) AS mean_distance, max(hd) AS max_distance,
       round(avg(64 * acos(2 * j / (1 + j)) / pi())::numeric, 2) AS model_mean
FROM (SELECT hd, j FROM planted_pairs UNION ALL SELECT hd, j FROM natural_pairs WHERE j >= 0.5 AND j < 1) p
WHERE j >= 0.5 GROUP BY 1 ORDER BY 1;
