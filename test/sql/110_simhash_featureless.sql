--
-- Texts with no features (issue 41): empty, blank, punctuation-, symbol-
-- and emoji-only texts have no fingerprint and no signature (NULL), in
-- both units, and what doc/fingerprints.md says about them holds: they are
-- never paired or clustered, `WHERE sh IS NULL` finds them as one group,
-- and the recipe there keeps one of them.
--
CREATE TABLE fl_text (k int, t text);
INSERT INTO fl_text VALUES
    (1, ''), (2, '   '), (3, E'\n\t \r\n'), (4, '!!! ... ,,,'), (5, '—–-_/\\|'),
    (6, '😀😀 🎉'), (7, '★☆♥ ©®™'), (8, U&'\00A0\2003\3000'),
    -- with a word or a number: a fingerprint
    (9, '404'), (10, '-- 404 --'), (11, 'a'), (12, '😀 ok 🎉');

SELECT k, t,
       simhash(t) IS NULL AS word_null,
       simhash(t, 4, 'char') IS NULL AS char_null,
       simhash(t, 1) IS NULL AS set_null,
       minhash(t, 16) IS NULL AS minhash_null,
       text_tokens(t) AS tokens
FROM fl_text ORDER BY k;

-- the same text with symbols around a word: the same fingerprint
SELECT simhash('404') = simhash('-- 404 --') AS same_404;

-- arrays with nothing to vote
SELECT simhash(ARRAY[]::text[]) IS NULL AS empty_array,
       simhash(ARRAY[NULL, NULL]::text[]) IS NULL AS null_elements,
       minhash(ARRAY[]::text[]) IS NULL AS minhash_empty_array;

-- jaccard: 0/0 between two featureless texts, 0 against a text with words
SELECT a.k, b.k, jaccard(a.t, b.t) AS j, minhash_jaccard(minhash(a.t), minhash(b.t)) AS mj
FROM fl_text a, fl_text b
WHERE a.k IN (1, 6) AND b.k IN (1, 4, 11)
ORDER BY 1, 2;

-- The recipe of doc/fingerprints.md on a crawl-like table: near copies,
-- two copies of an error page, featureless pages, a row with no body.
CREATE TABLE fl_page (id bigint PRIMARY KEY, body text,
                      sh simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
CREATE INDEX ON fl_page USING hamming (sh);
INSERT INTO fl_page (id, body)
SELECT 100 + k, t FROM fl_text WHERE k <= 8;
INSERT INTO fl_page (id, body) VALUES
    (1, 'Welcome to the home page of our small bakery in the old town'),
    (2, 'Welcome to the home page of our small bakery in the old town!'),
    (3, 'An entirely different page about bicycles and their repair'),
    (7, '404 Not Found'), (8, '404 Not Found'), (9, NULL);

-- featureless rows are in no pair and no cluster, at any radius
SELECT count(*) AS pairs_with_featureless
FROM simhash_pairs('fl_page', 'id', 'sh', 15) p
WHERE p.id_a > 100 OR p.id_b > 100;
SELECT * FROM simhash_clusters('fl_page', 'id', 'sh', 3) ORDER BY id;

-- one group of their own
SELECT array_agg(id ORDER BY id) AS featureless FROM fl_page WHERE sh IS NULL AND body IS NOT NULL;

-- keep one per cluster and one featureless page
BEGIN;
SELECT dedup_keep_one('fl_page', 'id',
  $$SELECT id, cluster_id FROM simhash_clusters('fl_page', 'id', 'sh', 3)
    UNION ALL
    SELECT id, min(id) OVER () FROM fl_page WHERE sh IS NULL AND body IS NOT NULL$$) AS deleted;
SELECT array_agg(id ORDER BY id) AS kept FROM fl_page;
ROLLBACK;

-- The fixed-code variant: the featureless pages form one cluster of their
-- own, in the same job as the others.
CREATE TABLE fl_page_coded (id bigint PRIMARY KEY, body text,
    sh simhash64 GENERATED ALWAYS AS (coalesce(simhash(body), '0000000000000000')) STORED);
INSERT INTO fl_page_coded (id, body) SELECT id, body FROM fl_page WHERE body IS NOT NULL;
SELECT cluster_id, array_agg(id ORDER BY id) AS ids
FROM simhash_clusters('fl_page_coded', 'id', 'sh', 3)
GROUP BY cluster_id ORDER BY cluster_id;

DROP TABLE fl_text, fl_page, fl_page_coded;
