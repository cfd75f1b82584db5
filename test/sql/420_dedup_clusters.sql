--
-- dedup_clusters(pairs_query): connected components of the pairs a query
-- returns, each named by its smallest id.  Checked against components
-- computed in plain SQL (a recursive CTE) on a random graph with planted
-- chains and cliques, on the GIN self-join over fingerprints, and on MinHash
-- band candidates; then the rules for odd pairs and the errors.
--

-- The basics: two components, a self-pair, NULL ends, a duplicate pair in
-- both orders.  5 and 7 are in no pair of two rows: not returned.
SELECT * FROM dedup_clusters($$
    VALUES (2, 1), (2, 3), (11, 10), (5, 5), (NULL, 7), (7, NULL), (3, 1), (1, 2)
$$) ORDER BY cluster_id, id;

-- Any integer types, and extreme ids.
SELECT * FROM dedup_clusters($$
    SELECT 1::int2, 2::int8
    UNION ALL SELECT 2::int2, 9223372036854775807
    UNION ALL SELECT (-32768)::int2, (-9223372036854775807 - 1)
$$) ORDER BY cluster_id, id;

-- No pairs, no rows.
SELECT count(*) FROM dedup_clusters('SELECT 1, 2 WHERE false');
-- A NULL query is an error (22004); 0.2's STRICT function gave no rows.
SELECT count(*) FROM dedup_clusters(NULL);

-- A random graph: 1500 vertices, 900 edges from md5, plus planted
-- components: a chain of 60 given backwards, a clique of 15, a star, and a
-- "ladder" of two chains joined at their far ends only.
CREATE TABLE edge (a bigint, b bigint);
INSERT INTO edge
SELECT ('x' || substr(md5('a' || i), 1, 8))::bit(32)::bigint % 1500,
       ('x' || substr(md5('b' || i), 1, 8))::bit(32)::bigint % 1500
FROM generate_series(1, 900) i;
INSERT INTO edge SELECT 100000 + i + 1, 100000 + i FROM generate_series(58, 0, -1) i;
INSERT INTO edge SELECT 200000 + i, 200000 + j
FROM generate_series(1, 15) i, generate_series(1, 15) j WHERE i < j;
INSERT INTO edge SELECT 300000, 300000 + i FROM generate_series(1, 30) i;
INSERT INTO edge SELECT 400000 + i, 400000 + i + 1 FROM generate_series(1, 20) i;
INSERT INTO edge SELECT 500000 + i, 500000 + i + 1 FROM generate_series(1, 20) i;
INSERT INTO edge VALUES (400021, 500021);

-- The truth: every vertex reaches its component; the smallest reached id
-- names it (self-loops are not edges).
CREATE TABLE truth AS
WITH RECURSIVE e AS (
    SELECT a, b FROM edge WHERE a <> b UNION SELECT b, a FROM edge WHERE a <> b
), reach (id, r) AS (
    SELECT a, a FROM e
    UNION
    SELECT e.b, reach.r FROM reach JOIN e ON e.a = reach.id
)
SELECT id, min(r) AS cluster_id FROM reach GROUP BY id;

CREATE TABLE got AS SELECT * FROM dedup_clusters('SELECT a, b FROM edge');
-- Same rows: no difference either way, and no id twice.
SELECT (SELECT count(*) FROM (TABLE got EXCEPT TABLE truth) x) AS missing_from_truth,
       (SELECT count(*) FROM (TABLE truth EXCEPT TABLE got) x) AS missing_from_got,
       (SELECT count(*) - count(DISTINCT id) FROM got) AS repeated_ids,
       (SELECT count(*) FROM got) AS ids,
       (SELECT count(DISTINCT cluster_id) FROM got) AS clusters;
-- The planted components, whole.
SELECT cluster_id, count(*) AS size, min(id), max(id)
FROM got WHERE id >= 100000 GROUP BY cluster_id ORDER BY cluster_id;
-- Every cluster has at least two ids, and its name is one of them.
SELECT count(*) FILTER (WHERE size < 2) AS singletons,
       count(*) FILTER (WHERE NOT named_by_member) AS foreign_names
FROM (SELECT cluster_id, count(*) AS size, bool_or(id = cluster_id) AS named_by_member
      FROM got GROUP BY cluster_id) c;
-- Deterministic: the pairs in another order (and duplicated) give the
-- same clusters.
SELECT count(*) AS differences FROM (
    (SELECT * FROM dedup_clusters('SELECT * FROM (SELECT b, a FROM edge UNION ALL SELECT a, b FROM edge) x ORDER BY md5(a::text || b::text)')
     EXCEPT TABLE got)
    UNION ALL
    (TABLE got EXCEPT SELECT * FROM dedup_clusters('SELECT b, a FROM edge ORDER BY b DESC'))
) x;

-- One integer array per row instead of two ids: each array's ids are one
-- group (a star around its first non-NULL id).  The edges as arrays give
-- the same clusters.
SELECT count(*) AS differences FROM (
    (SELECT * FROM dedup_clusters('SELECT ARRAY[a, b] FROM edge') EXCEPT TABLE got)
    UNION ALL
    (TABLE got EXCEPT SELECT * FROM dedup_clusters('SELECT ARRAY[a, b] FROM edge'))) x;
-- Groups of the random graph's vertices (by another hash, with NULLs
-- mixed in, in random order), against the same groups as pairs: each
-- non-NULL id linked to the next one, a chain rather than a star.
CREATE TABLE grp AS
SELECT g, array_agg(CASE WHEN v % 37 = 0 THEN NULL ELSE v END ORDER BY md5(v::text)) AS ids
FROM (SELECT DISTINCT a AS v FROM edge) e,
     LATERAL (SELECT ('x' || substr(md5('g' || v), 1, 8))::bit(32)::int % 400 AS g) h
GROUP BY g;
SELECT count(*) AS groups, max(cardinality(ids)) AS largest,
       count(*) FILTER (WHERE array_position(ids, NULL) IS NOT NULL) AS with_nulls
FROM grp;
CREATE TABLE grp_chain AS
SELECT x.id AS a, lead(x.id) OVER (PARTITION BY g ORDER BY x.ord) AS b
FROM grp, unnest(ids) WITH ORDINALITY x(id, ord) WHERE x.id IS NOT NULL;
SELECT count(*) AS differences, (SELECT count(*) FROM dedup_clusters('SELECT ids FROM grp')) AS ids
FROM (
    (SELECT * FROM dedup_clusters('SELECT ids FROM grp')
     EXCEPT SELECT * FROM dedup_clusters('SELECT a, b FROM grp_chain'))
    UNION ALL
    (SELECT * FROM dedup_clusters('SELECT a, b FROM grp_chain')
     EXCEPT SELECT * FROM dedup_clusters('SELECT ids FROM grp'))) x;
-- Groups and pairs together (exact copies by a GROUP BY, near ones as
-- pairs): one array column, so the pairs become arrays of two.
SELECT count(*) AS differences FROM (
    (SELECT * FROM dedup_clusters('SELECT ids FROM grp UNION ALL SELECT ARRAY[a, b] FROM edge')
     EXCEPT SELECT * FROM dedup_clusters('SELECT a, b FROM grp_chain UNION ALL SELECT a, b FROM edge'))
    UNION ALL
    (SELECT * FROM dedup_clusters('SELECT a, b FROM grp_chain UNION ALL SELECT a, b FROM edge')
     EXCEPT SELECT * FROM dedup_clusters('SELECT ids FROM grp UNION ALL SELECT ARRAY[a, b] FROM edge'))) x;
-- The odd arrays: NULL elements are skipped, the first non-NULL id is the
-- centre; an array of one distinct id (or none, or NULL) adds no id; any
-- integer element type; a multi-dimensional array is read element by
-- element; a domain over an integer array too.
CREATE DOMAIN ids_dom AS int4[];
SELECT * FROM dedup_clusters($$
    VALUES (ARRAY[NULL, 7, NULL, 8]::int8[]), (ARRAY[5]::int8[]), (ARRAY[6, 6]::int8[]),
           (ARRAY[]::int8[]), (NULL), (ARRAY[NULL, NULL]::int8[]), (ARRAY[9, 9, 10]::int8[]),
           (ARRAY[[20, 21], [22, 23]]::int8[]), (ARRAY[-9223372036854775808, 9223372036854775807]::int8[])
$$) ORDER BY cluster_id, id;
SELECT * FROM dedup_clusters($$SELECT ARRAY[3, 2, 1]::int2[] UNION ALL SELECT ARRAY[40000, 3]$$)
ORDER BY cluster_id, id;
SELECT * FROM dedup_clusters($$SELECT ARRAY[31, 30]::ids_dom$$) ORDER BY cluster_id, id;
-- One group of 100,000 ids read from a table, where it is stored toasted
-- (compressed and out of line): one cluster named by its smallest id.
CREATE TABLE big_group (ids int8[]);
INSERT INTO big_group SELECT array_agg(1000000 + (i * 7919) % 100000 ORDER BY i) FROM generate_series(1, 100000) i;
SELECT pg_column_size(ids) < 800000 AS compressed FROM big_group;
SELECT count(*) AS ids, count(DISTINCT cluster_id) AS clusters, min(cluster_id) AS cluster_id
FROM dedup_clusters('SELECT ids FROM big_group UNION ALL SELECT ids FROM big_group');
DROP TABLE grp, grp_chain, big_group;
DROP DOMAIN ids_dom;

-- Pairs from fingerprints: the GIN-indexed self-join (one index probe per
-- row), on codes with planted near-duplicates.
CREATE TABLE fp (id int PRIMARY KEY, sh simhash64);
INSERT INTO fp SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64
FROM generate_series(1, 2000) i;
-- Chains: a copy of every 50th code, then a copy of the copy, each two
-- bits further (so the ends of a chain are 6 bits apart, beyond radius 3).
INSERT INTO fp SELECT 10000 + id, (sh::bigint # 3)::simhash64 FROM fp WHERE id % 50 = 0;
INSERT INTO fp SELECT 20000 + id, (sh::bigint # 15)::simhash64 FROM fp WHERE id BETWEEN 1 AND 2000 AND id % 50 = 0;
INSERT INTO fp SELECT 30000 + id, (sh::bigint # 63)::simhash64 FROM fp WHERE id BETWEEN 1 AND 2000 AND id % 50 = 0;
INSERT INTO fp VALUES (40000, NULL);
CREATE INDEX ON fp USING gin (sh);
ANALYZE fp;
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM fp a JOIN fp b ON a.sh <~> b.sh <= 3 AND a.id < b.id;
CREATE TABLE fp_clusters AS SELECT * FROM dedup_clusters(
    'SELECT a.id, b.id FROM fp a JOIN fp b ON a.sh <~> b.sh <= 3 AND a.id < b.id');
-- 40 chains of four: the chain's links are within 3 bits, its ends not.
SELECT count(*) AS ids, count(DISTINCT cluster_id) AS clusters FROM fp_clusters;
SELECT count(*) AS chains_not_whole FROM (
    SELECT id FROM fp WHERE id <= 2000 AND id % 50 = 0
    EXCEPT
    SELECT cluster_id FROM fp_clusters GROUP BY cluster_id
    HAVING count(*) = 4 AND array_agg(id ORDER BY id) = ARRAY[cluster_id, cluster_id + 10000, cluster_id + 20000, cluster_id + 30000]
) x;
-- The same clusters from the sort-based all-pairs search.
SELECT count(*) AS differences FROM (
    (TABLE fp_clusters EXCEPT SELECT * FROM dedup_clusters($$SELECT id_a, id_b FROM simhash_pairs('fp', 'id', 'sh', 3)$$))
    UNION ALL
    (SELECT * FROM dedup_clusters($$SELECT id_a, id_b FROM simhash_pairs('fp', 'id', 'sh', 3)$$) EXCEPT TABLE fp_clusters)) x;
-- The same components as the recursive CTE over the same pairs.
CREATE TABLE fp_pairs AS
SELECT a.id AS a, b.id AS b FROM fp a JOIN fp b ON a.sh <~> b.sh <= 3 AND a.id < b.id;
-- 3 links per chain, and no pair of random codes.
SELECT count(*) AS pairs, count(*) FILTER (WHERE b - a <> 10000) AS unplanned FROM fp_pairs;
WITH RECURSIVE e AS (SELECT a, b FROM fp_pairs UNION SELECT b, a FROM fp_pairs),
reach (id, r) AS (SELECT a, a FROM e UNION SELECT e.b, reach.r FROM reach JOIN e ON e.a = reach.id),
t AS (SELECT id, min(r) AS cluster_id FROM reach GROUP BY id)
SELECT (SELECT count(*) FROM (TABLE fp_clusters EXCEPT SELECT id::bigint, cluster_id::bigint FROM t) x)
     + (SELECT count(*) FROM (SELECT id::bigint, cluster_id::bigint FROM t EXCEPT TABLE fp_clusters) x) AS differences;

-- Pairs from MinHash: band candidates through a GIN index on the band
-- keys, verified by the signature estimate.  Planted: 30 base texts, each
-- with four edits (one word changed near the end), which are near
-- duplicates of it (Jaccard of 3-shingles well above 0.7).
CREATE TABLE txt (id int, body text, sig int4[]);
INSERT INTO txt (id, body)
SELECT b * 10, string_agg(md5(b || '/' || w), ' ' ORDER BY w)
FROM generate_series(1, 30) b, generate_series(1, 60) w GROUP BY b;
INSERT INTO txt (id, body)
SELECT t.id + e, regexp_replace(t.body, '\S+$', 'edit' || e) || ' tail' || e
FROM txt t, generate_series(1, 4) e;
-- Distractors: the first 40 words of a base text and 20 others (Jaccard
-- with the base about 0.5: below the threshold).
INSERT INTO txt (id, body)
SELECT 1000 + b, string_agg(CASE WHEN w <= 40 THEN md5(b || '/' || w) ELSE md5('other' || b || '/' || w) END,
                            ' ' ORDER BY w)
FROM generate_series(1, 30) b, generate_series(1, 60) w GROUP BY b;
UPDATE txt SET sig = minhash(body);
CREATE INDEX txt_bands ON txt USING gin (minhash_bands(sig, 16, 8));
ANALYZE txt;
-- Plans without what only some majors print: the nodes the enable_*
-- settings disable and an index's searches (18), buffers (shown under
-- ANALYZE by default from 18), row counts as averages ("rows=1.00", 18).
CREATE FUNCTION pg_temp.explain(q text, with_analyze bool DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF, BUFFERS OFF'
        || CASE WHEN with_analyze THEN ', ANALYZE, TIMING OFF, SUMMARY OFF' ELSE '' END || ') ' || q LOOP
        CONTINUE WHEN line ~ '^\s*(Disabled: true|Index Searches: \d+)$';
        RETURN NEXT regexp_replace(line, 'rows=(\d+)\.00 ', 'rows=\1 ', 'g');
    END LOOP;
END
$$;
-- (150 rows: a scan is cheaper; without one, the join probes the index.)
SET enable_seqscan = off;
SELECT * FROM pg_temp.explain($$
SELECT a.id, b.id FROM txt a JOIN txt b
  ON minhash_bands(b.sig, 16, 8) && minhash_bands(a.sig, 16, 8) AND a.id < b.id
WHERE minhash_jaccard(a.sig, b.sig) >= 0.7$$);
RESET enable_seqscan;
CREATE TABLE txt_clusters AS SELECT * FROM dedup_clusters($$
    SELECT a.id, b.id FROM txt a JOIN txt b
      ON minhash_bands(b.sig, 16, 8) && minhash_bands(a.sig, 16, 8) AND a.id < b.id
    WHERE minhash_jaccard(a.sig, b.sig) >= 0.7 AND jaccard(a.body, b.body) >= 0.7
$$);
-- Each base text with its four edits, nothing else.
SELECT count(*) AS ids, count(DISTINCT cluster_id) AS clusters,
       bool_and(id / 10 * 10 = cluster_id) AS each_base_with_its_edits
FROM txt_clusters;
-- The same pairs in one expression, verified by the exact similarity:
-- minhash_similar_exact() (an inlined SQL function, doc/minhash.md).
SELECT count(*) AS differences FROM (
    (TABLE txt_clusters EXCEPT SELECT * FROM dedup_clusters($$
        SELECT a.id, b.id FROM txt a JOIN txt b
          ON minhash_similar_exact(b.sig, a.sig, b.body, a.body, 0.7, 16, 8) AND a.id < b.id $$))
    UNION ALL
    (SELECT * FROM dedup_clusters($$
        SELECT a.id, b.id FROM txt a JOIN txt b
          ON minhash_similar_exact(b.sig, a.sig, b.body, a.body, 0.7, 16, 8) AND a.id < b.id $$)
     EXCEPT TABLE txt_clusters)) x;
-- The band join misses no pair that the exact similarity finds over all
-- pairs (a scan), and the distractors are what they should be.
SELECT count(*) AS exact_pairs,
       count(*) FILTER (WHERE minhash_bands(a.sig, 16, 8) && minhash_bands(b.sig, 16, 8)
                          AND minhash_jaccard(a.sig, b.sig) >= 0.7) AS found_by_bands
FROM txt a JOIN txt b ON a.id < b.id WHERE jaccard(a.body, b.body) >= 0.7;
SELECT round(min(jaccard(d.body, t.body))::numeric, 2) AS min_j, round(max(jaccard(d.body, t.body))::numeric, 2) AS max_j
FROM txt d JOIN txt t ON t.id = (d.id - 1000) * 10 WHERE d.id > 1000;

-- Runs as the caller: the query cannot read what the caller cannot.
CREATE ROLE nd_clusters_reader;
GRANT SELECT ON edge TO nd_clusters_reader;
SET ROLE nd_clusters_reader;
SELECT count(*) FROM dedup_clusters('SELECT a, b FROM edge');
SELECT count(*) FROM dedup_clusters('SELECT a.id, b.id FROM fp a, fp b');
RESET ROLE;
DROP OWNED BY nd_clusters_reader;
DROP ROLE nd_clusters_reader;

-- Errors, with their SQLSTATEs.
\set VERBOSITY sqlstate
SELECT * FROM dedup_clusters('SELECT 1, 2, 3');
SELECT * FROM dedup_clusters('SELECT 1');
SELECT * FROM dedup_clusters('SELECT ARRAY[''1'']');
SELECT * FROM dedup_clusters('SELECT ARRAY[1.5]');
SELECT * FROM dedup_clusters('SELECT 1, ''2''');
SELECT * FROM dedup_clusters('SELECT 1.5, 2');
SELECT * FROM dedup_clusters('SELECT id, sh FROM fp');
SELECT * FROM dedup_clusters('SELEC 1, 2');
SELECT * FROM dedup_clusters('SELECT a, b FROM no_such_table');
SELECT * FROM dedup_clusters('CREATE TABLE nope (a int)');
SELECT * FROM dedup_clusters('SELECT 1, 2; SELECT 3, 4');
SELECT * FROM dedup_clusters('');
SELECT * FROM dedup_clusters('SELECT 1, 1 / 0');
\set VERBOSITY default
SELECT * FROM dedup_clusters('SELECT 1, 2, 3');
SELECT * FROM dedup_clusters('SELECT ARRAY[1.5]');
SELECT * FROM dedup_clusters('SELECT id, sh FROM fp');
SELECT * FROM dedup_clusters('CREATE TABLE nope (a int)');
-- Nothing was created by the rejected statement.
SELECT to_regclass('nope');

DROP TABLE edge, truth, got, fp, fp_clusters, fp_pairs, txt, txt_clusters;
