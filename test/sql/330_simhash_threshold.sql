--
-- SimHash at a Jaccard threshold: simhash_radius / simhash_recall (the
-- model), and simhash_similar_exact (candidates within the radius from an
-- index, verified by the exact Jaccard of the texts) equal to a seq scan
-- with the same predicate, on every index kind.
--

-- The radius for a similarity and a recall; larger with recall, smaller
-- with similarity; 0 for identical shingle sets.
SELECT t, simhash_radius(t, 0.5) AS r50, simhash_radius(t, 0.9) AS r90,
       simhash_radius(t, 0.95) AS r95, simhash_radius(t, 0.99) AS r99,
       simhash_radius(t, 0.999) AS r999, simhash_radius(t, 1) AS r100
FROM unnest(ARRAY[0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99, 1]::float8[]) AS t;
-- simhash_recall is its inverse: the radius is the first to reach the recall.
SELECT count(*) AS checked,
       count(*) FILTER (WHERE simhash_recall(t, r) < rc
                           OR (r > 0 AND simhash_recall(t, r - 1) >= rc)) AS wrong
FROM (SELECT t / 100.0 AS t, rc / 1000.0 AS rc, simhash_radius(t / 100.0, rc / 1000.0) AS r
      FROM generate_series(1, 100) t, generate_series(1, 999, 7) rc) AS g;
SELECT round(simhash_recall(0.8, 3)::numeric, 4) AS r3, round(simhash_recall(0.8, 12)::numeric, 4) AS r12,
       round(simhash_recall(0.8, 0)::numeric, 8) AS none_off, simhash_recall(0.8, 64) AS all_bits,
       simhash_recall(1, 0) AS identical;
-- A radius outside 0..64: 22023.
\set VERBOSITY terse
SELECT simhash_recall(0.8, -1);
SELECT simhash_recall(0.8, 1000);
\set VERBOSITY default
-- Errors: outside (0, 1]; NULLs give NULL (STRICT).
SELECT simhash_radius(0, 0.9);
SELECT simhash_radius(1.0001);
SELECT simhash_radius('NaN');
SELECT simhash_radius(0.8, 0);
SELECT simhash_radius(0.8, 1.5);
SELECT simhash_radius(0.8, '-Infinity');
SELECT simhash_recall(-0.5, 3);
SELECT simhash_radius(NULL) IS NULL AS n1, simhash_radius(0.8, NULL) IS NULL AS n2,
       simhash_recall(0.8, NULL) IS NULL AS n3;

-- Documents: 300 texts of 60 words from a 400-word vocabulary, and for
-- each of the first 100 four copies with 2%, 5%, 10% and 20% of their
-- words replaced (exact Jaccard of the word 3-shingles from about 0.9 down
-- to about 0.45).
CREATE FUNCTION pg_temp.h(x text) RETURNS int LANGUAGE sql IMMUTABLE
AS $$ SELECT ('x' || substr(md5(x), 1, 7))::bit(28)::int $$;
CREATE TABLE st_docs (id int PRIMARY KEY, body text NOT NULL, sh simhash64);
INSERT INTO st_docs
SELECT g, string_agg('w' || pg_temp.h(g || '/' || j) % 400, ' ' ORDER BY j), NULL
FROM generate_series(1, 300) g, generate_series(1, 60) j GROUP BY g;
INSERT INTO st_docs
SELECT 1000 * e + g,
       string_agg(CASE WHEN pg_temp.h(e || ':' || g || '/' || j) % 100 < rate
                       THEN 'edit' || pg_temp.h(e || ':' || g || '/' || j) % 100000
                       ELSE 'w' || pg_temp.h(g || '/' || j) % 400 END, ' ' ORDER BY j), NULL
FROM (VALUES (1, 2), (2, 5), (3, 10), (4, 20)) AS r(e, rate),
     generate_series(1, 100) g, generate_series(1, 60) j
GROUP BY e, g;
UPDATE st_docs SET sh = simhash(body);
ANALYZE st_docs;

-- Pairs by similarity: the planted copies spread over the thresholds.
SELECT width_bucket(jaccard(a.body, b.body), 0.4, 1.0, 6) AS bucket, count(*) AS pairs
FROM st_docs a JOIN st_docs b ON a.id = b.id % 1000 AND b.id > 1000
GROUP BY 1 ORDER BY 1;

-- Lookups with the predicate: every 7th document as the query, at three
-- (threshold, radius) settings; a seq scan's rows are the reference.
CREATE FUNCTION pg_temp.lookups() RETURNS TABLE (t float8, r int, q int, id int)
LANGUAGE sql AS $$
    SELECT s.t, s.r, q.id, d.id
    FROM (VALUES (0.8::float8, NULL::int), (0.6, 14), (0.5, NULL)) AS s(t, r)
    CROSS JOIN st_docs q CROSS JOIN LATERAL (
        SELECT d.id FROM st_docs d
        WHERE simhash_similar_exact(d.sh, q.sh, d.body, q.body, s.t, s.r)) d
    WHERE q.id % 7 = 0
$$;
CREATE TEMP TABLE st_seq AS SELECT * FROM pg_temp.lookups();
-- Nothing below the threshold; radius NULL is simhash_radius(threshold).
SELECT t, r, count(*) AS found,
       count(*) FILTER (WHERE jaccard(a.body, b.body) < t) AS below,
       count(*) FILTER (WHERE a.sh <~> b.sh > coalesce(r, simhash_radius(t))) AS outside
FROM st_seq JOIN st_docs a ON a.id = q JOIN st_docs b ON b.id = st_seq.id
GROUP BY t, r ORDER BY t, r;

CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        -- the nodes the enable_* settings disable, marked from 18
        CONTINUE WHEN line ~ '^\s*Disabled: true$';
        RETURN NEXT regexp_replace(line, '''[0-9a-f]{16}''::simhash64', '<code>', 'g');
    END LOOP;
END
$$;
-- The same lookups through each index kind (the plan shows the index, the
-- exact check as its filter): rows found, and rows that differ from the
-- seq scan's either way.
\set compare 'WITH i AS MATERIALIZED (SELECT * FROM pg_temp.lookups()) SELECT (SELECT count(*) FROM i) AS found, (SELECT count(*) FROM (SELECT * FROM st_seq EXCEPT ALL SELECT * FROM i) x) AS missing, (SELECT count(*) FROM (SELECT * FROM i EXCEPT ALL SELECT * FROM st_seq) x) AS extra'
SET enable_seqscan = off;
CREATE INDEX st_docs_sh ON st_docs USING hamming (sh);
SELECT * FROM pg_temp.plan($$
SELECT id FROM st_docs WHERE simhash_similar_exact(sh, simhash('some query text'), body, 'some query text', 0.8)$$);
:compare;
-- A self-join: the inner side probes the index with each outer row's code.
SELECT * FROM pg_temp.plan($$
SELECT a.id, b.id FROM st_docs a JOIN st_docs b
  ON a.id < b.id AND simhash_similar_exact(b.sh, a.sh, b.body, a.body, 0.8, simhash_radius(0.8, 0.95))$$);
CREATE TEMP TABLE st_join AS
SELECT a.id AS a, b.id AS b FROM st_docs a JOIN st_docs b
  ON a.id < b.id AND simhash_similar_exact(b.sh, a.sh, b.body, a.body, 0.8, simhash_radius(0.8, 0.95));
-- The same join without the index (a nested loop over seq scans).
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET enable_seqscan = on;
CREATE TEMP TABLE st_join_seq AS
SELECT a.id AS a, b.id AS b FROM st_docs a JOIN st_docs b
  ON a.id < b.id AND simhash_similar_exact(b.sh, a.sh, b.body, a.body, 0.8, simhash_radius(0.8, 0.95));
RESET enable_indexscan;
RESET enable_bitmapscan;
SET enable_seqscan = off;
SELECT (SELECT count(*) FROM st_join) AS pairs,
       (SELECT count(*) FROM st_join JOIN st_docs x ON x.id = a JOIN st_docs y ON y.id = b
        WHERE jaccard(x.body, y.body) < 0.8) AS below,
       (SELECT count(*) FROM (SELECT * FROM st_join EXCEPT ALL SELECT * FROM st_join_seq) d) AS missing_from_seq,
       (SELECT count(*) FROM (SELECT * FROM st_join_seq EXCEPT ALL SELECT * FROM st_join) d) AS missing_from_index;
-- A prepared statement with a generic plan: the radius is a run-time value.
PREPARE similar_to(text, float8) AS
SELECT id FROM st_docs WHERE simhash_similar_exact(sh, simhash($1), body, $1, $2) ORDER BY id;
SET plan_cache_mode = force_generic_plan;
SELECT * FROM pg_temp.plan($$EXECUTE similar_to('some query text', 0.8)$$);
SELECT body AS q7 FROM st_docs WHERE id = 7 \gset
EXECUTE similar_to(:'q7', 0.5);
RESET plan_cache_mode;
SELECT id, round(jaccard(body, :'q7')::numeric, 3) AS exact, sh <~> simhash(:'q7') AS distance
FROM st_docs WHERE id % 1000 = 7 ORDER BY id;
DROP INDEX st_docs_sh;

CREATE INDEX st_docs_sh ON st_docs USING gin (sh);
SELECT * FROM pg_temp.plan($$
SELECT id FROM st_docs WHERE simhash_similar_exact(sh, simhash('some query text'), body, 'some query text', 0.8)$$);
:compare;
DROP INDEX st_docs_sh;

CREATE INDEX st_docs_sh ON st_docs USING gist (sh);
SELECT * FROM pg_temp.plan($$
SELECT id FROM st_docs WHERE simhash_similar_exact(sh, simhash('some query text'), body, 'some query text', 0.8)$$);
:compare;
DROP INDEX st_docs_sh;
RESET enable_seqscan;

DROP TABLE st_docs;
