-- neardup demo: near-duplicate licence and copyright texts.
-- Run by test/demo/run_demo.sh with :corpus (a "name<TAB>path" list) and :k.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION neardup;

\ir load_corpus.sql

-- The fingerprint: word 3-shingles, case-folded, hashed with XXH3.
UPDATE doc SET sh = simhash(body);
ANALYZE doc;

-- Byte-identical files (the copyright file of every binary package built
-- from one source package) are one text here, listed with its copies;
-- near-duplicate detection is about the texts that differ.
CREATE TEMP TABLE text_ AS
SELECT min(id) AS id, count(*) AS copies,
       (array_agg(name ORDER BY name))[1] AS name,
       string_agg(name, ', ' ORDER BY name) AS names
FROM doc GROUP BY body;

SELECT count(*) AS documents, pg_size_pretty(sum(octet_length(body))) AS size,
       (SELECT count(*) FROM text_) AS texts, count(DISTINCT sh) AS fingerprints
FROM doc \gset
\echo :documents documents (:size), :texts distinct texts, :fingerprints distinct fingerprints

-- Every pair of distinct texts within Hamming distance :k, exactly, by
-- permuted sorted tables (simhash_pairs; k up to 15).
CREATE TEMP TABLE pair AS
SELECT id_a AS a, id_b AS b, distance
FROM simhash_pairs('SELECT t.id, d.sh FROM text_ t JOIN doc d USING (id)', :k);

-- Connected components of that graph; a group is named by its smallest id.
CREATE TEMP TABLE grp AS
SELECT id, cluster_id AS grp FROM dedup_clusters('SELECT a, b FROM pair');

SELECT count(*) AS pairs FROM pair \gset
SELECT count(DISTINCT grp) AS groups, count(*) AS grouped FROM grp \gset
\echo :pairs pairs of different texts within distance :k; :groups groups of near-duplicates cover :grouped texts
\echo

\echo 'Groups of near-duplicate texts, largest first (distance: Hamming distance'
\echo 'to the first text of the group; copies: byte-identical files of that text):'
WITH member AS (
    SELECT g.grp, t.id, t.name, t.copies, t.names, d.sh, octet_length(d.body) AS bytes,
           count(*) OVER (PARTITION BY g.grp) AS size,
           row_number() OVER (PARTITION BY g.grp ORDER BY t.id) AS nth
    FROM grp g JOIN text_ t USING (id) JOIN doc d USING (id)
)
SELECT dense_rank() OVER (ORDER BY m.size DESC, m.grp) AS "group",
       CASE WHEN m.nth <= 5 THEN m.name ELSE format('... and %s more texts', m.size - 5) END AS text,
       CASE WHEN m.nth <= 5 THEN m.sh <~> h.sh END AS distance,
       CASE WHEN m.nth <= 5 THEN m.bytes END AS bytes,
       CASE WHEN m.nth <= 5 THEN m.copies END AS copies
FROM member m JOIN member h ON h.grp = m.grp AND h.nth = 1
WHERE m.nth <= 6
ORDER BY m.size DESC, m.grp, m.nth;

\echo
\echo 'Closest pairs of different texts:'
SELECT p.distance, ta.name AS text_a, tb.name AS text_b,
       octet_length(da.body) AS bytes_a, octet_length(db.body) AS bytes_b
FROM pair p
JOIN text_ ta ON ta.id = p.a JOIN doc da ON da.id = p.a
JOIN text_ tb ON tb.id = p.b JOIN doc db ON db.id = p.b
ORDER BY p.distance, ta.name, tb.name
LIMIT 15;

\echo
\echo 'Byte-identical copies (largest sets):'
SELECT copies, left(names, 100) || CASE WHEN length(names) > 100 THEN ' ...' ELSE '' END AS documents
FROM text_ WHERE copies > 1 ORDER BY copies DESC, name LIMIT 8;

-- MinHash: groups of texts whose estimated Jaccard similarity of word
-- 3-shingles is at least 0.8 (LSH bands, then the estimate), each member
-- shown with its exact Jaccard to the group's first text.
CREATE TEMP TABLE sig AS SELECT t.id, minhash(d.body) AS sig FROM text_ t JOIN doc d USING (id);
CREATE TEMP TABLE mgrp AS
SELECT id, cluster_id AS grp FROM minhash_clusters('SELECT id, sig FROM sig WHERE sig IS NOT NULL', 0.8);
SELECT count(DISTINCT grp) AS mgroups, count(*) AS mgrouped FROM mgrp \gset
\echo
\echo 'MinHash: ':mgroups' groups of texts at estimated Jaccard >= 0.8 cover ':mgrouped' texts; the largest, each text'
\echo 'with its exact Jaccard (shared word 3-shingles / all) to the first text of its group (a group is'
\echo 'connected: a text under 0.8 to the first can be above it to another member):'
WITH member AS (
    SELECT g.grp, t.id, t.name, d.body,
           count(*) OVER (PARTITION BY g.grp) AS size,
           row_number() OVER (PARTITION BY g.grp ORDER BY t.id) AS nth
    FROM mgrp g JOIN text_ t USING (id) JOIN doc d USING (id)
)
SELECT dense_rank() OVER (ORDER BY m.size DESC, m.grp) AS "group",
       CASE WHEN m.nth <= 4 THEN m.name ELSE format('... and %s more texts', m.size - 4) END AS text,
       CASE WHEN m.nth <= 4 THEN round(jaccard(m.body, h.body)::numeric, 3) END AS exact_jaccard
FROM member m JOIN member h ON h.grp = m.grp AND h.nth = 1
WHERE m.nth <= 5
ORDER BY m.size DESC, m.grp, m.nth
LIMIT 20;

-- One indexed lookup: the texts at least 80% similar to one text, found
-- through the hamming index on a radius chosen for recall 0.95, then
-- checked with their exact Jaccard.
CREATE INDEX doc_sh_idx ON doc USING hamming (sh);
ANALYZE doc;
SELECT t.id AS qid, t.name AS qname FROM text_ t JOIN mgrp g USING (id)
ORDER BY (SELECT count(*) FROM mgrp m WHERE m.grp = g.grp) DESC, t.id LIMIT 1 \gset
\echo
\echo 'One lookup, "texts at least 80% similar to ':qname'" (the plan: the index finds'
\echo 'every fingerprint within simhash_radius(0.8, 0.95) bits, the filter keeps exact Jaccard >= 0.8):'
SET enable_seqscan = off;  -- the corpus is small: show the plan a large table gets
EXPLAIN (COSTS OFF)
SELECT d.name FROM doc q, doc d
WHERE q.id = :qid AND simhash_similar_exact(d.sh, q.sh, d.body, q.body, 0.8, simhash_radius(0.8, 0.95));
SELECT d.name, d.sh <~> q.sh AS distance, round(jaccard(d.body, q.body)::numeric, 3) AS exact_jaccard
FROM doc q, doc d
WHERE q.id = :qid AND simhash_similar_exact(d.sh, q.sh, d.body, q.body, 0.8, simhash_radius(0.8, 0.95))
ORDER BY exact_jaccard DESC, d.name LIMIT 10;
RESET enable_seqscan;
