--
-- Large radii and LSH recall (issue 29, part 4).
--
-- SimHash: one default recall, 0.95 (radius 15 at 0.8), in simhash_radius
-- and simhash_similar_exact; radii above 15 refused by the all-pairs jobs
-- with a detail and a hint.  MinHash: minhash_lsh_params(..., recall =>)
-- and minhash_clusters(..., recall =>) choose bands and rows that reach
-- the recall at the threshold; minhash_lsh_recall gives a choice's recall.
--

-- The default recall is 0.95: radius 15 at 0.8, as the docs' examples.
SELECT simhash_radius(0.8) AS default_radius, simhash_radius(0.8, 0.95) AS r95,
       simhash_radius(0.8, 0.99) AS r99;
CREATE TABLE rr (id int, sh simhash64, body text);
INSERT INTO rr SELECT i, simhash('w' || i), 'w' || i FROM generate_series(1, 50) i;
CREATE INDEX rr_sh ON rr USING hamming (sh);
ANALYZE rr;
SET enable_seqscan = off;
-- radius NULL: the index condition's radius is simhash_radius(0.8) = 15
EXPLAIN (COSTS OFF)
SELECT id FROM rr WHERE simhash_similar_exact(sh, simhash('w1'), body, 'w1', 0.8);
RESET enable_seqscan;

-- The all-pairs jobs stop at 15, saying why and what to use instead.
\set VERBOSITY default
SELECT * FROM simhash_pairs('SELECT id, sh FROM rr', 16);
SELECT * FROM simhash_clusters('rr', 'id', 'sh', simhash_radius(0.8, 0.99));
SELECT * FROM simhash_pairs('SELECT id, sh FROM rr', -1);
\set VERBOSITY terse
SELECT count(*) AS pairs_at_15 FROM simhash_pairs('SELECT id, sh FROM rr', simhash_radius(0.8));

-- minhash_lsh_recall: 1 - (1 - s^rows)^bands
SELECT round(minhash_lsh_recall(0.8, 9, 13)::numeric, 4) AS at_08,
       round(minhash_lsh_recall(0.9, 9, 13)::numeric, 4) AS at_09,
       minhash_lsh_recall(1, 9, 13) AS at_1, minhash_lsh_recall(0, 9, 13) AS at_0,
       minhash_lsh_recall(NULL, 9, 13) IS NULL AS null_gives_null;
SELECT nd_test.try($$SELECT minhash_lsh_recall(1.1, 9, 13)$$);
SELECT nd_test.try($$SELECT minhash_lsh_recall('NaN', 9, 13)$$);
SELECT nd_test.try($$SELECT minhash_lsh_recall(0.5, 0, 13)$$);

-- minhash_lsh_params: without recall, datasketch's choice as in 0.2; with
-- it, bands and rows that reach it at the threshold, each within num_perm,
-- fewer candidates (rows more selective) for a lower recall.
SELECT * FROM minhash_lsh_params(0.8, 128) AS p, minhash_lsh_params(0.8, 128, recall => NULL) AS q;
SELECT t, rc, p.bands, p.rows, p.bands * p.rows <= 128 AS fits,
       minhash_lsh_recall(t, p.bands, p.rows) >= rc AS reaches,
       round(minhash_lsh_recall(t, p.bands, p.rows)::numeric, 3) AS recall_at_t,
       round(minhash_lsh_recall(0.5, p.bands, p.rows)::numeric, 4) AS at_05
FROM unnest(ARRAY[0.5, 0.8, 0.9]::float8[]) t, unnest(ARRAY[0.5, 0.9, 0.95, 0.99]::float8[]) rc,
     minhash_lsh_params(t, 128, recall => rc) p
ORDER BY t, rc;
-- the recall bounds what the weights would give: at 0.8 datasketch's 9 x 13
-- reaches 0.40, 0.95 asks for more bands of fewer rows
SELECT (SELECT minhash_lsh_recall(0.8, bands, rows) FROM minhash_lsh_params(0.8)) <
       (SELECT minhash_lsh_recall(0.8, bands, rows) FROM minhash_lsh_params(0.8, recall => 0.95)) AS higher;
-- the weights are not used with recall; NULL arguments give NULL, as before
SELECT (minhash_lsh_params(0.8, 128, 0.9, 0.1, 0.95)).* ;
SELECT minhash_lsh_params(NULL, 128, recall => 0.9) IS NULL AS t_null,
       minhash_lsh_params(0.8, NULL) IS NULL AS k_null,
       minhash_lsh_params(0.8, 128, NULL, 0.5) IS NULL AS w_null;
-- the reachable limit: num_perm bands of one row; t = 1 needs one band
SELECT * FROM minhash_lsh_params(0.3, 8, recall => minhash_lsh_recall(0.3, 8, 1));
SELECT * FROM minhash_lsh_params(1, 64, recall => 1);
\set VERBOSITY default
SELECT * FROM minhash_lsh_params(0.3, 8, recall => 0.95);
\set VERBOSITY terse
SELECT nd_test.try($$SELECT minhash_lsh_params(0.8, 128, recall => 0)$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(0.8, 128, recall => 1.5)$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(0.8, 128, recall => 'NaN')$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(0, 128, recall => 0.5)$$);
SELECT nd_test.try($$SELECT minhash_lsh_params(1.5, 128, recall => 0.5)$$);

-- minhash_clusters(..., recall =>): 1,200 documents of 40 words, and a copy
-- of each of the first 300 with 2 words replaced (Jaccard 38/42 = 0.90).
CREATE TABLE lr (id bigint, body text, sig int4[]);
INSERT INTO lr (id, body)
SELECT d, string_agg('w' || (hashint8extended(d * 100 + i, 7) & 4095) % 4000, ' ' ORDER BY i)
FROM generate_series(1, 1200) d, generate_series(1, 40) i GROUP BY d;
INSERT INTO lr (id, body)
SELECT 10000 + id, (SELECT string_agg(CASE WHEN i <= 2 THEN 'x' || id || '_' || i ELSE w END, ' ' ORDER BY i)
                    FROM unnest(string_to_array(body, ' ')) WITH ORDINALITY u(w, i))
FROM lr WHERE id <= 300;
UPDATE lr SET sig = minhash(body);
SELECT bands, rows FROM minhash_lsh_params(0.8, 128, recall => 0.95) \gset
CREATE INDEX lr_bands ON lr USING gin (minhash_bands(sig, :bands, :rows));
-- planted pairs found in one cluster: datasketch's choice against recall
-- 0.95 at 0.8 (which makes a pair of 0.9 a candidate with probability 0.999)
CREATE TEMP TABLE found AS
SELECT 'default' AS choice, c.* FROM minhash_clusters('lr', 'id', 'sig', 0.8) c
UNION ALL
SELECT 'recall 0.95', c.* FROM minhash_clusters('lr', 'id', 'sig', 0.8, recall => 0.95) c;
SELECT f.choice, count(*) AS planted_pairs_found,
       count(*) FILTER (WHERE minhash_jaccard(a.sig, b.sig) >= 0.8) AS of_estimate_at_least_08
FROM lr a JOIN lr b ON b.id = a.id + 10000
JOIN found f ON f.id = a.id JOIN found g ON g.id = b.id AND g.choice = f.choice
WHERE a.id <= 300 AND f.cluster_id = g.cluster_id
GROUP BY f.choice ORDER BY f.choice;
-- what recall => 0.95 clusters is exactly dedup_clusters over the verified
-- band join at its bands and rows (through the index)
SELECT (SELECT count(*) FROM (SELECT id, cluster_id FROM found WHERE choice = 'recall 0.95'
                              EXCEPT ALL SELECT * FROM dedup_clusters(format(
            'SELECT a.id, x.id FROM lr a JOIN lr x ON minhash_similar(x.sig, a.sig, 0.8, %s, %s) AND a.id < x.id',
            :bands, :rows))) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM dedup_clusters(format(
            'SELECT a.id, x.id FROM lr a JOIN lr x ON minhash_similar(x.sig, a.sig, 0.8, %s, %s) AND a.id < x.id',
            :bands, :rows))
                              EXCEPT ALL SELECT id, cluster_id FROM found WHERE choice = 'recall 0.95') x) AS missing;
-- the three forms take it; NULL recall is the default choice
SELECT (SELECT count(*) FROM minhash_clusters('SELECT id, sig FROM lr', 0.8, recall => 0.95)) AS query_form,
       (SELECT count(*) FROM minhash_clusters('lr'::text, 'id', 'sig', 0.8, recall => 0.95)) AS text_form,
       (SELECT count(*) FROM found WHERE choice = 'recall 0.95') AS regclass_form,
       (SELECT count(*) FROM minhash_clusters('lr', 'id', 'sig', 0.8, recall => NULL)) =
       (SELECT count(*) FROM found WHERE choice = 'default') AS null_is_default;
-- errors
SELECT nd_test.try($$SELECT * FROM minhash_clusters('lr', 'id', 'sig', 0.8, 9, 13, recall => 0.9)$$);
SELECT nd_test.try($$SELECT * FROM minhash_clusters('lr', 'id', 'sig', 0.8, recall => 0)$$);
SELECT nd_test.try($$SELECT * FROM minhash_clusters('SELECT id, sig FROM lr', 0.8, recall => 'NaN')$$);
SELECT nd_test.try($$SELECT * FROM minhash_clusters('SELECT id, sig[1:16] FROM lr', 0.3, recall => 0.999)$$);
-- a NULL query is error 22004, as everywhere in the dedup family (510_dedup_arguments), with a recall too
SELECT count(*) FROM minhash_clusters(NULL::text, 0.8, recall => 0.9);
