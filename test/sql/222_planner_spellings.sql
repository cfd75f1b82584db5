--
-- More natural spellings of a Hamming search use the index (issue 41):
--   ORDER BY hamming_distance(sh, q) LIMIT k      (nearest neighbours)
--   simhash_similarity(sh, q) >= t, > t, t <= .., t < ..
--   sh <~> q = c, c = sh <~> q, hamming_distance(sh, q) = c
-- Each is planned on the hamming index, and returns exactly what the
-- original expression, evaluated row by row, returns: for every query code,
-- every threshold at and between the similarities 1 - d/64, and thresholds
-- outside 0..1, NaN, infinities and NULL.
--
SET jit = off;

-- 3000 pseudo-random codes, and around each of 4 anchors two codes at each
-- distance 0..64 (random bits flipped).
CREATE TABLE sp_doc (id int, sh simhash64);
INSERT INTO sp_doc
SELECT i, ('x' || md5('sp' || i))::bit(64)::bigint::simhash64
FROM generate_series(1, 3000) i;
INSERT INTO sp_doc
SELECT 10000 + a * 1000 + k * 10 + j,
       (('x' || md5('anchor' || a))::bit(64)::bigint #
        (SELECT coalesce(bit_or(1::bigint << b), 0)
         FROM (SELECT b FROM generate_series(0, 63) b
               ORDER BY md5(a || ':' || k || ':' || j || ':' || b) LIMIT k) bits))::simhash64
FROM generate_series(1, 4) a, generate_series(0, 64) k, generate_series(0, 1) j;
INSERT INTO sp_doc VALUES (0, NULL);
CREATE INDEX sp_doc_sh ON sp_doc USING hamming (sh);
VACUUM ANALYZE sp_doc;

-- Query codes: the anchors (present at every distance) and two random rows.
CREATE TABLE sp_q AS
SELECT a AS qid, ('x' || md5('anchor' || a))::bit(64)::bigint::simhash64 AS q
FROM generate_series(1, 4) a;
INSERT INTO sp_q SELECT 5, sh FROM sp_doc WHERE id = 17;
INSERT INTO sp_q SELECT 6, sh FROM sp_doc WHERE id = 2024;
SELECT q FROM sp_q WHERE qid = 1 \gset

-- (1) The plans.
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc ORDER BY hamming_distance(sh, :'q') LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc ORDER BY hamming_distance(:'q', sh) LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM sp_doc WHERE hamming_distance(sh, :'q') <= 8
ORDER BY hamming_distance(sh, :'q') LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE hamming_distance(sh, :'q') <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE simhash_similarity(sh, :'q') >= 0.95;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE simhash_similarity(sh, :'q') > 0.95;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE 0.95 <= simhash_similarity(:'q', sh);
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE 0.953125 < simhash_similarity(sh, :'q');
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE simhash_similarity(sh, :'q') >= 0.95::real;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE simhash_similarity(sh, :'q') >= 0.95::numeric;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE simhash_similarity(sh, :'q') >= 'NaN';
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE sh <~> :'q' = 0;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE 0 = sh <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE hamming_distance(sh, :'q') = 0;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE sh <~> :'q' = 2;
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE sh <~> :'q' = 2::bigint;
-- a join on exact copies: a nested loop probing the index
EXPLAIN (COSTS OFF)
SELECT a.qid, b.id FROM sp_q a JOIN sp_doc b ON b.sh <~> a.q = 0;
-- custom plans of prepared statements: the parameter is a constant
PREPARE sp_sim(float8) AS SELECT id FROM sp_doc WHERE simhash_similarity(sh, :'q') >= $1;
EXPLAIN (COSTS OFF) EXECUTE sp_sim(0.9);
PREPARE sp_sim_num(numeric) AS SELECT id FROM sp_doc WHERE simhash_similarity(sh, :'q') > $1;
EXPLAIN (COSTS OFF) EXECUTE sp_sim_num(0.9);
PREPARE sp_eq(int) AS SELECT id FROM sp_doc WHERE sh <~> :'q' = $1;
EXPLAIN (COSTS OFF) EXECUTE sp_eq(1);
-- generic plans: an equality still uses the index; a similarity threshold
-- is not known, and is evaluated row by row
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE sp_eq(1);
EXPLAIN (COSTS OFF) EXECUTE sp_sim(0.9);
RESET plan_cache_mode;
-- the column keeps the function's name
SELECT hamming_distance(sh, :'q') FROM sp_doc ORDER BY hamming_distance(sh, :'q') LIMIT 3;

-- (2) The answers against the expression evaluated row by row.
--
-- sp_run(sql) runs sql with sequential scans disabled (so that every
-- threshold, whatever its radius, is answered through the rewrite and the
-- index) and returns the sorted ids and whether the plan used the index.
-- The reference evaluates the original expression in a subquery that the
-- planner cannot see into (OFFSET 0), row by row.
CREATE FUNCTION sp_run(sql text, OUT ids int[], OUT on_index bool)
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    on_index := false;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP
        IF line LIKE '%Index Cond: (sh <@ hamming_ball(%' OR line LIKE '%Order By: (sh <~>%' THEN
            on_index := true;
        END IF;
    END LOOP;
    EXECUTE 'SELECT array_agg(id ORDER BY id) FROM (' || sql || ') s' INTO ids;
    PERFORM set_config('enable_seqscan', 'on', true);
END
$$;
CREATE FUNCTION sp_ref(sql text) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
    ids int[];
BEGIN
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE 'SELECT array_agg(id ORDER BY id) FROM (' || sql || ') s' INTO ids;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    RETURN ids;
END
$$;

-- Thresholds: every similarity 1 - d/64, the midpoints between them, just
-- above and below 0 and 1, outside 0..1, the special values; as float8
-- and as float4 (whose value differs from the float8 literal).
CREATE TABLE sp_t (t text);
INSERT INTO sp_t SELECT (1 - d / 64.0::float8)::text FROM generate_series(0, 64) d;
INSERT INTO sp_t SELECT (1 - (d + 0.5) / 64.0::float8)::text FROM generate_series(0, 63) d;
INSERT INTO sp_t VALUES ('0.95'), ('0.9'), ('1e-30'), ('-1e-30'), ('0.9999999999999999'),
    ('-0.5'), ('1.5'), ('-0'), ('NaN'), ('Infinity'), ('-Infinity');
CREATE TABLE sp_sim_forms (form text);
INSERT INTO sp_sim_forms VALUES
    ('simhash_similarity(sh, %1$L) >= %2$s'),
    ('simhash_similarity(sh, %1$L) > %2$s'),
    ('%2$s <= simhash_similarity(%1$L, sh)'),
    ('%2$s < simhash_similarity(sh, %1$L)');

CREATE TABLE sp_sim_result AS
SELECT f.form, t.t, ty.ty, q.qid, r.ids, r.on_index,
       sp_ref(format('SELECT id FROM (SELECT id, sh FROM sp_doc OFFSET 0) d WHERE '
                     || f.form, q.q, quote_literal(t.t) || '::' || ty.ty)) AS ref
FROM sp_sim_forms f, sp_t t, (VALUES ('float8'), ('float4')) ty(ty), sp_q q,
     LATERAL sp_run(format('SELECT id FROM sp_doc WHERE ' || f.form,
                           q.q, quote_literal(t.t) || '::' || ty.ty)) r;
-- NULL thresholds (folded to NULL before the planner sees them: no scan)
EXPLAIN (COSTS OFF) SELECT id FROM sp_doc WHERE simhash_similarity(sh, :'q') >= NULL::float8;
INSERT INTO sp_sim_result
SELECT f.form, 'NULL', 'float8', q.qid, r.ids, r.on_index,
       sp_ref(format('SELECT id FROM (SELECT id, sh FROM sp_doc OFFSET 0) d WHERE '
                     || f.form, q.q, 'NULL::float8'))
FROM sp_sim_forms f, sp_q q,
     LATERAL sp_run(format('SELECT id FROM sp_doc WHERE ' || f.form, q.q, 'NULL::float8')) r;

SELECT count(*) AS queries,
       count(*) FILTER (WHERE ids IS DISTINCT FROM ref) AS wrong,
       count(*) FILTER (WHERE NOT on_index AND t <> 'NULL') AS not_on_index,
       sum(coalesce(cardinality(ref), 0)) AS rows_returned,
       count(DISTINCT cardinality(ref)) AS distinct_sizes
FROM sp_sim_result;
-- any that differ, to read
SELECT form, t, ty, qid, cardinality(ids) AS got, cardinality(ref) AS expected
FROM sp_sim_result WHERE ids IS DISTINCT FROM ref OR (NOT on_index AND t <> 'NULL')
ORDER BY 1, 2, 3, 4 LIMIT 10;
-- the edges: at t = 1 - d/64 the anchors' rows at distance d pass >= and
-- not >, for every d
SELECT count(*) AS edges_checked
FROM generate_series(0, 64) d, sp_q q
WHERE q.qid <= 4
  AND EXISTS (SELECT FROM sp_sim_result r
              WHERE r.form LIKE '%>= %' AND r.ty = 'float8' AND r.qid = q.qid
                AND r.t = (1 - d / 64.0::float8)::text
                AND (10000 + q.qid * 1000 + d * 10) = ANY (r.ids))
  AND NOT EXISTS (SELECT FROM sp_sim_result r
                  WHERE r.form LIKE '%) > %' AND r.ty = 'float8' AND r.qid = q.qid
                    AND r.t = (1 - d / 64.0::float8)::text
                    AND (10000 + q.qid * 1000 + d * 10) = ANY (r.ids));

-- Equalities: d = c for c from -1 to 65, int4 and int8, both sides, and
-- hamming_distance().
CREATE TABLE sp_eq_forms (form text);
INSERT INTO sp_eq_forms VALUES
    ('sh <~> %1$L = %2$s'),
    ('%2$s = %1$L <~> sh'),
    ('hamming_distance(sh, %1$L) = %2$s');
CREATE TABLE sp_eq_result AS
SELECT f.form, c, ty.ty, q.qid, r.ids, r.on_index,
       sp_ref(format('SELECT id FROM (SELECT id, sh FROM sp_doc OFFSET 0) d WHERE '
                     || f.form, q.q, c || '::' || ty.ty)) AS ref
FROM sp_eq_forms f, generate_series(-1, 65) c, (VALUES ('int4'), ('int8')) ty(ty), sp_q q,
     LATERAL sp_run(format('SELECT id FROM sp_doc WHERE ' || f.form,
                           q.q, c || '::' || ty.ty)) r;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE ids IS DISTINCT FROM ref) AS wrong,
       count(*) FILTER (WHERE NOT on_index) AS not_on_index,
       sum(coalesce(cardinality(ref), 0)) AS rows_returned,
       count(DISTINCT cardinality(ref)) AS distinct_sizes
FROM sp_eq_result;
SELECT form, c, ty, qid, cardinality(ids) AS got, cardinality(ref) AS expected
FROM sp_eq_result WHERE ids IS DISTINCT FROM ref OR NOT on_index
ORDER BY 1, 2, 3, 4 LIMIT 10;
-- generic plans of an equality, against the reference
SET plan_cache_mode = force_generic_plan;
PREPARE sp_eq_generic(simhash64, int) AS
SELECT array_agg(id ORDER BY id) FROM sp_doc WHERE sh <~> $1 = $2;
CREATE FUNCTION sp_generic(q simhash64, c int) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
    ids int[];
BEGIN
    EXECUTE format('EXECUTE sp_eq_generic(%L, %s)', q, c) INTO ids;
    RETURN ids;
END
$$;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE sp_generic(q.q, c) IS DISTINCT FROM
                        sp_ref(format('SELECT id FROM (SELECT id, sh FROM sp_doc OFFSET 0) d
                                       WHERE sh <~> %L = %s', q.q, c))) AS wrong
FROM sp_q q, generate_series(-1, 65) c;
RESET plan_cache_mode;

-- (3) Nearest neighbours by hamming_distance(): the distances of the rows
-- returned, in their order, are the reference's first 10 (ties may pick
-- other rows at the last distance).
EXPLAIN (COSTS OFF)
SELECT q.qid, k.id FROM sp_q q,
     LATERAL (SELECT id FROM sp_doc ORDER BY hamming_distance(sh, q.q) LIMIT 10) k;
SET enable_seqscan = off;
CREATE TABLE sp_knn AS
SELECT q.qid, q.q,
       (SELECT array_agg(hamming_distance(sh, q.q))
        FROM (SELECT sh FROM sp_doc ORDER BY hamming_distance(sh, q.q) LIMIT 10) k) AS d
FROM sp_q q;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE knn.d IS DISTINCT FROM
                        (SELECT array_agg(d ORDER BY d)
                         FROM (SELECT d FROM (SELECT sh <~> knn.q AS d FROM sp_doc OFFSET 0) s
                               WHERE d IS NOT NULL ORDER BY d LIMIT 10) r)) AS wrong,
       count(DISTINCT knn.d) AS distinct_answers
FROM sp_knn knn;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- (4) The first query of a session: the library is not loaded yet, and
-- nothing in this query but simhash_similarity() belongs to the extension
-- (a join on a GiST index).  Its support function loads the library, and
-- the rewrite, while the query is preprocessed.
CREATE TABLE sp_gist (id int, sh simhash64);
INSERT INTO sp_gist SELECT id, sh FROM sp_doc;
CREATE INDEX ON sp_gist USING gist (sh);
ANALYZE sp_gist;
\c
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM sp_gist a JOIN sp_gist b
  ON simhash_similarity(a.sh, b.sh) >= 0.99 AND a.id < b.id;
\c
SET jit = off;

DROP TABLE sp_doc, sp_q, sp_t, sp_sim_forms, sp_sim_result, sp_eq_forms, sp_eq_result, sp_gist, sp_knn;
DROP FUNCTION sp_run(text), sp_ref(text), sp_generic(simhash64, int);
