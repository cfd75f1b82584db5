--
-- Planner support: the natural spellings of a radius search use indexes,
-- return what a sequential scan returns, and are estimated sensibly.
--
-- Data: 2000 random centers, each with 9 variants that flip two bits (or
-- none, when both picks hit the same bit), plus a few NULLs.  Tables are
-- small enough (< 30000 rows) for ANALYZE to read every row, so statistics,
-- estimates and plans are deterministic.
--
SET jit = off;

CREATE TABLE nd_gist (id int PRIMARY KEY, sh simhash64);
INSERT INTO nd_gist
SELECT g * 10 + v,
       (c # CASE WHEN v = 0 THEN 0
                 ELSE (1::bigint << ((g * 7 + v * 13) % 64)) # (1::bigint << ((g * 11 + v * 5) % 64))
            END)::simhash64
FROM (SELECT g, ('x' || md5(g::text))::bit(64)::bigint AS c FROM generate_series(0, 1999) g) s,
     generate_series(0, 9) v;
INSERT INTO nd_gist SELECT 20000 + i, NULL FROM generate_series(0, 19) i;
CREATE TABLE nd_gin (LIKE nd_gist INCLUDING ALL);
INSERT INTO nd_gin SELECT * FROM nd_gist;
CREATE INDEX nd_gist_sh ON nd_gist USING gist (sh);
CREATE INDEX nd_gin_sh ON nd_gin USING gin (sh);
ANALYZE nd_gist, nd_gin;

-- Query codes: a cluster center (id 420) and one of its variants (id 1233).
SELECT sh AS q FROM nd_gist WHERE id = 420 \gset
SELECT sh AS q2 FROM nd_gist WHERE id = 1233 \gset

/*
 * nd_check(table, condition): the scans chosen for
 * SELECT id FROM table WHERE condition, how many rows match, and whether
 * they are the rows a plan without index scans returns.  (OFFSET 0: the
 * scan is chosen for the condition alone; from 16 the planner may pick one
 * that returns the rows in the order array_agg asks for.)
 */
CREATE FUNCTION nd_check(tbl regclass, cond text,
                         OUT scans text, OUT matches int, OUT same_as_seqscan bool)
LANGUAGE plpgsql AS $$
DECLARE
    query text := format('SELECT coalesce(array_agg(id ORDER BY id), ''{}'') FROM (SELECT id FROM %s WHERE %s OFFSET 0) s',
                         tbl, cond);
    line text;
    indexed int[];
    plain int[];
BEGIN
    scans := '';
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line ~ '(Seq Scan|Index Scan|Index Only Scan|Bitmap Index Scan)' THEN
            scans := scans || CASE WHEN scans = '' THEN '' ELSE ', ' END ||
                     (regexp_match(line, '((Seq Scan|Index Scan|Index Only Scan|Bitmap Index Scan) (using|on) \S+)'))[1];
        END IF;
    END LOOP;
    EXECUTE query INTO indexed;
    PERFORM set_config('enable_indexscan', 'off', true),
            set_config('enable_bitmapscan', 'off', true),
            set_config('enable_indexonlyscan', 'off', true);
    EXECUTE query INTO plain;
    PERFORM set_config('enable_indexscan', 'on', true),
            set_config('enable_bitmapscan', 'on', true),
            set_config('enable_indexonlyscan', 'on', true);
    matches := cardinality(indexed);
    same_as_seqscan := indexed = plain;
END $$;

/* Estimated rows of the top plan node: deterministic here (see above). */
CREATE FUNCTION nd_estimate(query text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;

--
-- 1. The spellings.  The rewritten clause is within(); the index condition
-- is sh <@ hamming_ball(q, r).  No enable_* settings: the planner picks the
-- index by cost.
--
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' < 4;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE 3 >= sh <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE 4 > sh <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE hamming_distance(sh, :'q') <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE :'q' <~> sh <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE hamming_distance(:'q', sh) < 4;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' <= 3::bigint;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE 4::bigint > sh <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE NOT (sh <~> :'q' > 3);
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' BETWEEN 1 AND 3;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' <= 3 AND id % 2 = 0;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' <= 2 OR sh <~> :'q2' <= 1;
-- The same through the GIN index (bitmap scans only).
EXPLAIN (COSTS OFF) SELECT id FROM nd_gin WHERE sh <~> :'q' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gin WHERE hamming_distance(sh, :'q') < 4 AND id % 2 = 0;
-- The function form and the operator form need no rewriting.
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE within(sh, :'q', 3);
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <@ hamming_ball(:'q', 3);

-- Results equal those of a plan without index scans, for every spelling,
-- edge radii and NULLs included.
SELECT c.cond, r.*
FROM (VALUES ('sh <~> ' || quote_literal(:'q') || ' <= 3'),
             ('sh <~> ' || quote_literal(:'q') || ' < 4'),
             ('3 >= sh <~> ' || quote_literal(:'q')),
             ('4 > sh <~> ' || quote_literal(:'q')),
             ('hamming_distance(sh, ' || quote_literal(:'q') || ') <= 3'),
             (quote_literal(:'q') || ' <~> sh <= 3'),
             ('sh <~> ' || quote_literal(:'q') || ' <= 3::bigint'),
             ('4::bigint > sh <~> ' || quote_literal(:'q')),
             ('NOT (sh <~> ' || quote_literal(:'q') || ' > 3)'),
             ('sh <~> ' || quote_literal(:'q') || ' BETWEEN 1 AND 3'),
             ('sh <~> ' || quote_literal(:'q') || ' <= 3 AND id % 2 = 0'),
             ('sh <~> ' || quote_literal(:'q') || ' <= 2 OR sh <~> ' || quote_literal(:'q2') || ' <= 1'),
             ('sh <~> ' || quote_literal(:'q2') || ' <= 0'),
             ('sh <~> ' || quote_literal(:'q2') || ' <= 3'),
             ('sh <~> ' || quote_literal(:'q') || ' < 0'),
             ('sh <~> ' || quote_literal(:'q') || ' <= -2147483648'),
             ('sh <~> ' || quote_literal(:'q') || ' < -2147483648'),
             ('sh <~> ' || quote_literal(:'q') || ' < (-2147483648)::int4'),
             ('sh <~> ' || quote_literal(:'q') || ' <= 9999999999'),
             ('sh <~> ' || quote_literal(:'q') || ' < -9999999999'),
             ('sh <~> ' || quote_literal(:'q') || ' <= 64'),
             ('sh <~> NULL <= 3'),
             ('sh <~> ' || quote_literal(:'q') || ' <= NULL')) AS c(cond),
     LATERAL (SELECT * FROM nd_check('nd_gist', c.cond)
              UNION ALL SELECT * FROM nd_check('nd_gin', c.cond)) r;

-- An equality with 0 is within(.., 0) (222_planner_spellings has the rest).
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' = 0;
-- Left alone: a lower bound on the distance.
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' >= 3;
-- Not indexable: the other side depends on the row, or is volatile.
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> (sh::bigint # 1)::simhash64 <= 3;
SELECT count(*) FROM nd_gist WHERE sh <~> (sh::bigint # 1)::simhash64 <= 3;
EXPLAIN (COSTS OFF)
SELECT id FROM nd_gist WHERE sh <~> :'q' <= (random() * 0)::int + 3;

-- An index on the distance itself still serves range conditions on it.
CREATE TABLE nd_anchor (id int, sh simhash64);
INSERT INTO nd_anchor SELECT id, sh FROM nd_gist;
CREATE INDEX nd_anchor_d ON nd_anchor ((sh <~> 'a1d0c6e83f027327'));
CREATE INDEX nd_anchor_sh ON nd_anchor USING gist (sh);
ANALYZE nd_anchor;
EXPLAIN (COSTS OFF) SELECT id FROM nd_anchor WHERE sh <~> 'a1d0c6e83f027327' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM nd_anchor WHERE sh <~> '202cb962ad59074b' <= 3;
SELECT * FROM nd_check('nd_anchor', 'sh <~> ' || quote_literal('a1d0c6e83f027327') || ' <= 3');
DROP TABLE nd_anchor;

--
-- 2. Prepared statements: custom and generic plans.
--
PREPARE nd_by_code(simhash64) AS SELECT id FROM nd_gist WHERE sh <~> $1 <= 3 ORDER BY id;
PREPARE nd_by_code_radius(simhash64, int) AS
    SELECT id FROM nd_gin WHERE hamming_distance(sh, $1) < $2 ORDER BY id;
SET plan_cache_mode = force_custom_plan;
EXPLAIN (COSTS OFF) EXECUTE nd_by_code(:'q');
EXPLAIN (COSTS OFF) EXECUTE nd_by_code_radius(:'q', 4);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE nd_by_code(:'q');
EXPLAIN (COSTS OFF) EXECUTE nd_by_code_radius(:'q', 4);
EXECUTE nd_by_code(:'q');
EXECUTE nd_by_code_radius(:'q', 4);
-- Bigint radii (as drivers send them) clamp into int4 at run time.
PREPARE nd_le8(simhash64, bigint) AS SELECT count(*) FROM nd_gist WHERE sh <~> $1 <= $2;
PREPARE nd_lt8(simhash64, bigint) AS SELECT count(*) FROM nd_gist WHERE $2 > sh <~> $1;
PREPARE nd_lt4(simhash64, int) AS SELECT count(*) FROM nd_gin WHERE sh <~> $1 < $2;
EXPLAIN (COSTS OFF) EXECUTE nd_le8(:'q', 3);
EXPLAIN (COSTS OFF) EXECUTE nd_lt8(:'q', 4);
-- Generic plans against counts of a spelling that is not rewritten.
CREATE FUNCTION nd_exec(stmt text, q simhash64, r text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('EXECUTE %I(%L, %L)', stmt, q, r) INTO n;
    RETURN n;
END $$;
SELECT r, nd_exec('nd_le8', :'q', r::text) AS le8, nd_exec('nd_lt8', :'q', r::text) AS lt8,
       CASE WHEN r IS NULL OR r BETWEEN -2147483648 AND 2147483647
            THEN nd_exec('nd_lt4', :'q', r::text) END AS lt4,
       (SELECT count(*) FROM nd_gist WHERE (sh <~> :'q')::bigint <= r) AS le_truth,
       (SELECT count(*) FROM nd_gist WHERE (sh <~> :'q')::bigint < r) AS lt_truth
FROM unnest(ARRAY[NULL, -9223372036854775808, -2147483648, -1, 0, 1, 3, 4, 63, 64, 65,
                  2147483647, 9223372036854775807]::bigint[]) r;
RESET plan_cache_mode;
DEALLOCATE ALL;
DROP FUNCTION nd_exec(text, simhash64, text);

--
-- 3. Joins: a nested loop whose inner side is an index scan parameterized
-- by the outer row.
--
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM nd_gist a JOIN nd_gist b ON a.sh <~> b.sh <= 3 AND a.id < b.id;
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM nd_gin a JOIN nd_gin b ON hamming_distance(a.sh, b.sh) < 4 AND a.id < b.id;
-- The same on a slice of the outer table, compared with a plan without
-- index scans.
SELECT * FROM nd_check('nd_gist', 'id < 300 AND EXISTS (SELECT FROM nd_gist b
                                   WHERE b.sh <~> nd_gist.sh <= 3 AND b.id <> nd_gist.id)');
SELECT * FROM nd_check('nd_gin', 'id < 300 AND EXISTS (SELECT FROM nd_gin b
                                   WHERE b.sh <~> nd_gin.sh <= 3 AND b.id <> nd_gin.id)');
CREATE TEMP TABLE nd_pairs_idx AS
SELECT a.id AS a, b.id AS b FROM nd_gist a JOIN nd_gist b ON a.sh <~> b.sh <= 3 AND a.id < b.id
WHERE a.id < 300;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
-- Only the primary key would serve a.id < 300: plain scans on both sides.
CREATE TEMP TABLE nd_pairs_seq AS
SELECT a.id AS a, b.id AS b FROM nd_gist a JOIN nd_gist b ON a.sh <~> b.sh <= 3 AND a.id < b.id
WHERE a.id < 300;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT (SELECT count(*) FROM nd_pairs_idx) AS pairs,
       (SELECT count(*) FROM (TABLE nd_pairs_idx EXCEPT TABLE nd_pairs_seq) d) AS only_idx,
       (SELECT count(*) FROM (TABLE nd_pairs_seq EXCEPT TABLE nd_pairs_idx) d) AS only_seq;
-- Outer joins and semi-joins through EXISTS.
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM nd_gist a LEFT JOIN nd_gist b ON a.sh <~> b.sh <= 3 AND a.id <> b.id
WHERE a.id < 100;
EXPLAIN (COSTS OFF)
SELECT a.id FROM nd_gist a
WHERE EXISTS (SELECT FROM nd_gist b WHERE b.sh <~> a.sh <= 3 AND b.id <> a.id);

--
-- 4. Costs: a sequential scan when it is cheaper.
--
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' <= 30;
CREATE TABLE nd_tiny (id int, sh simhash64);
INSERT INTO nd_tiny SELECT id, sh FROM nd_gist WHERE id < 50;
CREATE INDEX ON nd_tiny USING gist (sh);
ANALYZE nd_tiny;
EXPLAIN (COSTS OFF) SELECT id FROM nd_tiny WHERE sh <~> :'q' <= 30;
EXPLAIN (COSTS OFF) SELECT id FROM nd_tiny WHERE sh <~> :'q' <= 3;

-- Estimated rows grow with the radius (20020 rows, 20 NULL).  Small radii:
-- about one distinct value's worth; large radii: the binomial model.
SELECT r, nd_estimate(format('SELECT id FROM nd_gist WHERE sh <~> %L <= %s', :'q', r)) AS rows,
       (SELECT count(*) FROM nd_gist WHERE sh <~> :'q' <= r) AS actual
FROM unnest(ARRAY[-1, 0, 3, 10, 16, 20, 24, 28, 32, 64]) r;
-- The same through within() and <@, and for an unknown query code.
SELECT nd_estimate(format('SELECT id FROM nd_gist WHERE within(sh, %L, 24)', :'q')) AS within_24,
       nd_estimate(format('SELECT id FROM nd_gist WHERE sh <@ hamming_ball(%L, 24)', :'q')) AS ball_24,
       nd_estimate(format('SELECT id FROM nd_gist WHERE hamming_ball(%L, 24) @> sh', :'q')) AS contains_24,
       nd_estimate('SELECT id FROM nd_gist WHERE sh <~> (SELECT sh FROM nd_tiny LIMIT 1) <= 3') AS unknown_code;
-- Join estimates: one partner per row at small radii.
SELECT nd_estimate('SELECT * FROM nd_gist a JOIN nd_gist b ON a.sh <~> b.sh <= 3') AS join_3,
       nd_estimate('SELECT * FROM nd_gist a JOIN nd_gist b ON a.sh <@ hamming_ball(b.sh, 3)') AS join_ball_3,
       nd_estimate('SELECT * FROM nd_gist a JOIN nd_gist b ON a.sh <~> b.sh <= 32') AS join_32;
-- A table of duplicates: the most common values and their frequencies.
CREATE TABLE nd_dups (id int, sh simhash64);
INSERT INTO nd_dups SELECT id, CASE WHEN id % 2 = 0 THEN :'q'::simhash64 ELSE sh END
FROM nd_gist WHERE id < 2000;
ANALYZE nd_dups;
SELECT nd_estimate(format('SELECT * FROM nd_dups WHERE sh <~> %L <= 3', :'q')) AS dup_q,
       nd_estimate(format('SELECT * FROM nd_dups WHERE sh <~> %L <= 3', :'q2')) AS dup_q2,
       (SELECT count(*) FROM nd_dups WHERE sh <~> :'q' <= 3) AS actual_q,
       (SELECT count(*) FROM nd_dups WHERE sh <~> :'q2' <= 3) AS actual_q2;

--
-- 5. Nearest neighbours: with no radius a GiST KNN scan reads the whole
-- index, so a seq scan and a top-N sort win; with a radius, the GiST index
-- orders by <~>.
--
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist ORDER BY sh <~> :'q' LIMIT 5;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> :'q' <= 3 ORDER BY sh <~> :'q' LIMIT 5;
SELECT id, sh <~> :'q' AS d FROM nd_gist WHERE sh <~> :'q' <= 3 ORDER BY sh <~> :'q', id LIMIT 5;

--
-- 6. Partitioned tables, inheritance and UNION ALL: the members' scans.
--
CREATE TABLE nd_part (id int, sh simhash64) PARTITION BY RANGE (id);
CREATE TABLE nd_part_1 PARTITION OF nd_part FOR VALUES FROM (0) TO (10000);
CREATE TABLE nd_part_2 PARTITION OF nd_part FOR VALUES FROM (10000) TO (30000);
INSERT INTO nd_part SELECT * FROM nd_gist;
CREATE INDEX ON nd_part USING gist (sh);
ANALYZE nd_part;
EXPLAIN (COSTS OFF) SELECT id FROM nd_part WHERE sh <~> :'q' <= 3;
SELECT * FROM nd_check('nd_part', 'sh <~> ' || quote_literal(:'q') || ' <= 3');
EXPLAIN (COSTS OFF)
SELECT id FROM (SELECT id, sh FROM nd_gist UNION ALL SELECT id, sh FROM nd_gin) u
WHERE sh <~> :'q' <= 3;
SELECT count(*) FROM (SELECT id, sh FROM nd_gist UNION ALL SELECT id, sh FROM nd_gin) u
WHERE sh <~> :'q' <= 3;

--
-- 7. A view and a SQL function body are inlined, then rewritten.
--
CREATE VIEW nd_near AS SELECT id, sh FROM nd_gist WHERE sh <~> 'a1d0c6e83f027327' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM nd_near;
CREATE FUNCTION nd_near_ids(simhash64, int) RETURNS SETOF int
LANGUAGE sql STABLE AS 'SELECT id FROM nd_gist WHERE sh <~> $1 <= $2';
EXPLAIN (COSTS OFF) SELECT * FROM nd_near_ids(:'q', 3);

--
-- 8. The first query of a session: the library is not loaded yet, and the
-- support function of <~> must load it (and its planner hook) while the
-- query is preprocessed.  The parameter is a bigint cast to simhash64
-- (binary-coercible: no function of the library runs before planning).
--
\c
SET plan_cache_mode = force_generic_plan;
PREPARE nd_first(simhash64) AS SELECT id FROM nd_gist WHERE sh <~> $1 <= 3;
EXPLAIN (COSTS OFF) EXECUTE nd_first(42::bigint::simhash64);
\c
SET plan_cache_mode = force_generic_plan;
PREPARE nd_first(simhash64) AS SELECT id FROM nd_gin WHERE hamming_distance(sh, $1) <= 3;
EXPLAIN (COSTS OFF) EXECUTE nd_first(42::bigint::simhash64);
\c
SET jit = off;

--
-- 9. The extension dropped and created again in the same session: the
-- planner code finds the new objects, and the old ones after ROLLBACK.
--
BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION neardup CASCADE;
CREATE EXTENSION neardup;
CREATE TABLE nd_again (id int, sh simhash64);
INSERT INTO nd_again
SELECT g, ('x' || md5(g::text))::bit(64)::bigint::simhash64 FROM generate_series(0, 1999) g;
CREATE INDEX ON nd_again USING gist (sh);
ANALYZE nd_again;
EXPLAIN (COSTS OFF) SELECT id FROM nd_again WHERE sh <~> 'a1d0c6e83f027327' <= 3;
ROLLBACK;
EXPLAIN (COSTS OFF) SELECT id FROM nd_gist WHERE sh <~> 'a1d0c6e83f027327' <= 3;

--
-- 10. Costs (radius_cost.c).  With both a GIN and a GiST index: GIN for a
-- small radius (a GiST search reads a share of the leaf pages that grows
-- with the radius, a large one on a table this small), also as the inner
-- side of a nested loop; GiST for nearest neighbours, which GIN cannot
-- do; a sequential scan at radius 30 (40% of the rows).
--
CREATE TABLE nd_both (LIKE nd_gist INCLUDING ALL);
INSERT INTO nd_both SELECT * FROM nd_gist;
CREATE INDEX nd_both_gin ON nd_both USING gin (sh);
CREATE INDEX nd_both_gist ON nd_both USING gist (sh);
ANALYZE nd_both;
EXPLAIN (COSTS OFF) SELECT id FROM nd_both WHERE sh <~> :'q' <= 3;
SELECT * FROM nd_check('nd_both', 'sh <~> ' || quote_literal(:'q') || ' <= 3');
EXPLAIN (COSTS OFF) SELECT id FROM nd_both ORDER BY sh <~> :'q' LIMIT 5;
EXPLAIN (COSTS OFF) SELECT id FROM nd_both WHERE sh <~> :'q' <= 30;
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM nd_both a JOIN nd_both b ON a.sh <~> b.sh <= 3 AND a.id < b.id;
-- The same pairs as the self-join of the GiST-only table (whose plan is
-- in section 3).
SELECT count(*), sum(a.id::bigint * b.id) FROM nd_both a JOIN nd_both b ON a.sh <~> b.sh <= 3 AND a.id < b.id;
SELECT count(*), sum(a.id::bigint * b.id) FROM nd_gist a JOIN nd_gist b ON a.sh <~> b.sh <= 3 AND a.id < b.id;

-- 100000 random codes, GIN only.  GIN at radius 6 and 10 (the sequential
-- scan is some 25 and 5 times slower: doc/planner.md), and for a cursor,
-- planned for a fast start (cursor_tuple_fraction) as postgres_fdw reads
-- its shards: the core's estimate made that a sequential scan at radius 4.
CREATE TABLE nd_shard (id int, sh simhash64);
INSERT INTO nd_shard
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64 FROM generate_series(1, 100000) i;
CREATE INDEX nd_shard_sh ON nd_shard USING gin (sh);
ANALYZE nd_shard;
SELECT sh AS q3 FROM nd_shard WHERE id = 4242 \gset
EXPLAIN (COSTS OFF) SELECT id FROM nd_shard WHERE sh <~> :'q3' <= 6;
EXPLAIN (COSTS OFF) SELECT id FROM nd_shard WHERE sh <~> :'q3' <= 10;
BEGIN;
EXPLAIN (COSTS OFF) DECLARE nd_c CURSOR FOR SELECT id FROM nd_shard WHERE sh <~> :'q3' <= 4;
DECLARE nd_c CURSOR FOR SELECT id FROM nd_shard WHERE sh <~> :'q3' <= 4;
FETCH ALL FROM nd_c;
COMMIT;

DROP VIEW nd_near;
DROP FUNCTION nd_near_ids(simhash64, int);
DROP TABLE nd_gist, nd_gin, nd_tiny, nd_dups, nd_part, nd_both, nd_shard;
DROP FUNCTION nd_check(regclass, text);
DROP FUNCTION nd_estimate(text);
