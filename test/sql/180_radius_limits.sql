--
-- Radius limits: every function of the extension that takes a radius
-- refuses one it cannot mean with 22023, the same way (doc/reference.md):
-- 0..15 for the all-pairs jobs and their band keys, 0..64 for a Hamming
-- radius of 64-bit fingerprints, 0..blocks - 1 for exclude_within.  The
-- functions are listed from the catalog, so that a new one cannot be
-- missed: it shows below without a call, and the expected output changes.
--
SET client_min_messages = warning;
CREATE TABLE rl (id int8, sh simhash64);
INSERT INTO rl SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64 FROM generate_series(1, 50) i;
CREATE TABLE rl_state (id int8, cluster_id int8);

-- One call per function, %s the radius, and the largest radius it takes.
CREATE TEMP TABLE rl_calls (fn regprocedure, max_radius int, call text);
INSERT INTO rl_calls VALUES
    ('hamming_ball(simhash64,integer)', 64, $$SELECT hamming_ball('0000000000000000', %s)$$),
    ('hamming_block_ball(simhash64,integer,integer,integer)', 64, $$SELECT hamming_block_ball('0000000000000000', %s, 1, 4)$$),
    ('simhash_recall(double precision,integer)', 64, $$SELECT simhash_recall(0.8, %s)$$),
    ('simhash_similar_exact(simhash64,simhash64,text,text,double precision,integer,integer,text,bigint)', 64,
     $$SELECT count(*) FROM rl WHERE simhash_similar_exact(sh, '0000000000000000', 'a b c d', 'a b c d', 0.8, %s)$$),
    ('simhash_layout_within_sql(regclass,simhash64,integer)', 64,
     $$SELECT simhash_layout_within_sql('rl', '0000000000000000', %s)$$),
    ('simhash_layout_within(regclass,simhash64,integer)', 64,
     $$SELECT count(*) FROM simhash_layout_within('rl', '0000000000000000', %s)$$),
    ('neardup_internal.simhash_layout_within_rows(regclass,simhash64,integer)', 64,
     $$SELECT count(*) FROM neardup_internal.simhash_layout_within_rows('rl', '0000000000000000', %s)$$),
    ('simhash_pairs(regclass,name,name,integer,integer)', 15, $$SELECT count(*) FROM simhash_pairs('rl', 'id', 'sh', %s)$$),
    ('simhash_pairs(text,integer,integer)', 15, $$SELECT count(*) FROM simhash_pairs('SELECT id, sh FROM rl', %s)$$),
    ('simhash_pairs(text,text,text,integer,integer)', 15,
     $$SELECT count(*) FROM simhash_pairs('rl'::text, 'id'::text, 'sh'::text, %s)$$),
    ('simhash_clusters(regclass,name,name,integer,integer)', 15, $$SELECT count(*) FROM simhash_clusters('rl', 'id', 'sh', %s)$$),
    ('simhash_clusters(text,integer,integer)', 15, $$SELECT count(*) FROM simhash_clusters('SELECT id, sh FROM rl', %s)$$),
    ('simhash_clusters(text,text,text,integer,integer)', 15,
     $$SELECT count(*) FROM simhash_clusters('rl'::text, 'id'::text, 'sh'::text, %s)$$),
    ('simhash_band_keys(simhash64,integer)', 15, $$SELECT simhash_band_keys('0000000000000000', %s)$$),
    ('simhash_band_keys(simhash64,integer,integer)', 15, $$SELECT simhash_band_keys('0000000000000000', %s, 16)$$),
    ('simhash_band_first(simhash64,simhash64,integer,integer)', 15,
     $$SELECT simhash_band_first('0000000000000000', '0000000000000000', 1, %s)$$),
    ('simhash_band_first(simhash64,simhash64,integer,integer,integer)', 15,
     $$SELECT simhash_band_first('0000000000000000', '0000000000000000', 1, %s, 16)$$),
    ('simhash_pairs_since(regclass,name,name,bigint,integer)', 15,
     $$SELECT count(*) FROM simhash_pairs_since('rl', 'id', 'sh', 40, %s)$$),
    ('simhash_clusters_update(regclass,regclass,name,name,bigint,integer,bigint[])', 15,
     $$SELECT count(*) FROM simhash_clusters_update('rl_state', 'rl', 'id', 'sh', NULL, %s)$$),
    ('simhash_shard_create(text,integer,integer,integer,boolean,boolean)', 3,
     $$SELECT simhash_shard_create('rl_s' || abs(%1$s), 4, 1, exclude_within => %1$s)$$),
    -- a comparison, not a search: true or false for any radius, as the
    -- `a <~> b <= radius` that the planner rewrites into it
    ('within(simhash64,simhash64,integer)', NULL, $$SELECT within('ffffffffffffffff', '0000000000000000', %s)$$);

-- The functions with an input argument that is a radius, by its name,
-- among the extension's members.
CREATE TEMP VIEW rl_catalog AS
SELECT DISTINCT p.oid::regprocedure AS fn
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
CROSS JOIN LATERAL unnest(p.proargnames) WITH ORDINALITY a(name, n)
WHERE coalesce(p.proargmodes[a.n], 'i') IN ('i', 'b', 'v')
  AND a.name IN ('radius', 'max_distance', 'exclude_within', 'distance', 'r', 'k');
SELECT fn::text AS function, c.max_radius, c.call IS NOT NULL AS has_call
FROM rl_catalog f FULL JOIN rl_calls c USING (fn)
ORDER BY 1;

-- Each with -1, 0, its largest radius, one more and the largest int4:
-- the SQLSTATE and message, and whether a DETAIL says why.
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r text;
    st text;
    msg text;
    det text;
BEGIN
    EXECUTE q INTO r;
    RETURN 'accepted' || CASE WHEN length(r) <= 8 THEN ': ' || r ELSE '' END;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || CASE WHEN det <> '' THEN ' (DETAIL)' ELSE '' END;
END
$$;
CREATE FUNCTION pg_temp.detail(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    det text;
BEGIN
    EXECUTE q;
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS det = PG_EXCEPTION_DETAIL;
    RETURN nullif(det, '');
END
$$;
SELECT c.fn::text AS function, v.radius, pg_temp.outcome(format(c.call, v.radius)) AS outcome
FROM rl_calls c
CROSS JOIN LATERAL (VALUES (-1), (0), (c.max_radius), (coalesce(c.max_radius, 64) + 1), (2147483647)) v(radius)
WHERE v.radius IS NOT NULL
ORDER BY 1, 2;
-- The DETAILs of the refusals above the limits, once each.
SELECT DISTINCT pg_temp.detail(format(c.call, c.max_radius + 1)) AS detail
FROM rl_calls c WHERE c.max_radius IS NOT NULL
ORDER BY 1;

-- The type's input takes the radii its output writes: -1 (the empty ball)
-- to 64; 0.3 clamped any other.
SELECT '(00000000000000ff,-1)'::hamming_ball AS empty, '(00000000000000ff,64)'::hamming_ball AS full_ball;
\set VERBOSITY terse
SELECT '(00000000000000ff,65)'::hamming_ball;
SELECT '(00000000000000ff,-2)'::hamming_ball;
\set VERBOSITY default

-- within() and the distance comparisons take any radius, through an index
-- too: the planner clamps the radius it builds a ball from (a constant at
-- plan time, anything else at run time, rechecking within()), so neither
-- meets hamming_ball()'s refusal.
CREATE INDEX rl_sh ON rl USING hamming (sh);
ANALYZE rl;
SET enable_seqscan = off;
SELECT sh AS q FROM rl WHERE id = 7 \gset
EXPLAIN (COSTS OFF) SELECT count(*) FROM rl WHERE within(sh, :'q', 100);
EXPLAIN (COSTS OFF) SELECT count(*) FROM rl WHERE sh <~> :'q' < 0;
SELECT count(*) FILTER (WHERE within(sh, :'q', 100)) AS within_100,
       count(*) FILTER (WHERE sh <~> :'q' <= 2147483647) AS le_max,
       count(*) FILTER (WHERE within(sh, :'q', -1)) AS within_minus_1,
       count(*) FILTER (WHERE sh <~> :'q' < 0) AS lt_0
FROM rl;
SELECT (SELECT count(*) FROM rl WHERE within(sh, :'q', 100)) AS within_100,
       (SELECT count(*) FROM rl WHERE sh <~> :'q' <= 2147483647) AS le_max,
       (SELECT count(*) FROM rl WHERE within(sh, :'q', -1)) AS within_minus_1,
       (SELECT count(*) FROM rl WHERE sh <~> :'q' < 0) AS lt_0,
       (SELECT count(*) FROM rl WHERE within(sh, :'q', 0)) AS within_0;
-- A radius known at run time only: clamped there, within() rechecked.
PREPARE rl_near(simhash64, int) AS SELECT count(*) FROM rl WHERE sh <~> $1 <= $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE rl_near(:'q', 3);
-- (the counts a comparison the planner does not rewrite gives)
SELECT r, (SELECT count(*) FROM rl WHERE (sh <~> :'q') + 0 <= r) AS count
FROM (VALUES (-5), (0), (30), (100)) v(r) ORDER BY r;
EXECUTE rl_near(:'q', -5);
EXECUTE rl_near(:'q', 0);
EXECUTE rl_near(:'q', 30);
EXECUTE rl_near(:'q', 100);
RESET plan_cache_mode;
RESET enable_seqscan;
-- A ball the user builds is refused, from a constant at plan time as from
-- a parameter at run time.
\set VERBOSITY terse
SELECT count(*) FROM rl WHERE sh <@ hamming_ball(:'q', 65);
PREPARE rl_ball(simhash64, int) AS SELECT count(*) FROM rl WHERE sh <@ hamming_ball($1, $2);
EXECUTE rl_ball(:'q', -1);
\set VERBOSITY default
EXECUTE rl_ball(:'q', 64);

DROP TABLE rl, rl_state;
DO $$
DECLARE
    t regclass;
BEGIN
    FOR t IN SELECT oid FROM pg_class WHERE relname ~ '^rl_s[0-9]_' AND relkind = 'v' LOOP
        EXECUTE format('DROP VIEW %s', t);
    END LOOP;
    FOR t IN SELECT oid FROM pg_class WHERE relname ~ '^rl_s[0-9]_' AND relkind IN ('r', 'p') LOOP
        EXECUTE format('DROP TABLE IF EXISTS %s CASCADE', t);
    END LOOP;
END
$$;
SELECT relname, relkind FROM pg_class WHERE relname ~ '^rl_s' ORDER BY 1;

-- The update from 0.3 stops at an index that calls hamming_ball() with a
-- constant radius outside 0..64 (0.3 clamped it; from 0.3.1 every insert
-- would be refused), and says which; rebuilt as its HINT says, it goes on.
SELECT current_database() AS regress_db \gset
CREATE DATABASE rl_upgrade;
\c rl_upgrade
SET client_min_messages = warning;
CREATE EXTENSION neardup VERSION '0.3';
CREATE TABLE c70 (id int, sh simhash64, CONSTRAINT c70_near EXCLUDE USING gist (hamming_ball(sh, 70) WITH &&));
CREATE TABLE c3 (id int, sh simhash64, CONSTRAINT c3_near EXCLUDE USING gist (hamming_ball(sh, 3) WITH &&));
CREATE TABLE cneg (id int, sh simhash64);
CREATE INDEX cneg_ball ON cneg USING gist (hamming_ball(sh, -1));
INSERT INTO c70 VALUES (1, '0000000000000000');
INSERT INTO c3 VALUES (1, '0000000000000000');
-- (the context of the error raised in the update script is the major's own
-- wording: 18 adds the script's statement and line)
\set SHOW_CONTEXT never
ALTER EXTENSION neardup UPDATE;
\set SHOW_CONTEXT errors
SELECT extversion FROM pg_extension WHERE extname = 'neardup';
ALTER TABLE c70 DROP CONSTRAINT c70_near;
ALTER TABLE c70 ADD CONSTRAINT c70_near EXCLUDE USING gist (hamming_ball(sh, 64) WITH &&);
DROP INDEX cneg_ball;
ALTER EXTENSION neardup UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'neardup';
-- radius 64 holds every fingerprint, as 70 did in 0.3
INSERT INTO c70 VALUES (2, 'ffffffffffffffff');
INSERT INTO c3 VALUES (2, 'ffffffffffffffff');
INSERT INTO c3 VALUES (3, '0000000000000007');
SELECT hamming_ball('0000000000000000', 65);
\c :regress_db
DROP DATABASE rl_upgrade;
