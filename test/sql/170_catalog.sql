--
-- Every function of the extension, with its volatility, strictness and
-- parallel safety: a change in these markings must be deliberate.
-- Unaligned output, so that a new function adds one line to the diff.
--
\pset format unaligned
SELECT p.oid::regprocedure AS function,
       p.provolatile AS volatile, p.proisstrict AS strict, p.proparallel AS parallel,
       p.prokind AS kind
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
ORDER BY p.proname, p.oid::regprocedure::text;

-- STABLE: the selectivity estimators, which read statistics (as
-- PostgreSQL's own eqsel is), and the dedup functions, which read tables
-- through SPI in the caller's snapshot (PARALLEL RESTRICTED: their query may
-- read the leader's temporary tables).  Only dedup_keep_one, which deletes
-- or flags rows, simhash_clusters_update (with its writer), which writes a
-- state table, and the block layout's functions that create, write or move
-- its tables are VOLATILE; those and the layout's queries, which read
-- foreign tables, are parallel unsafe.
SELECT p.oid::regprocedure AS not_immutable_or_unsafe, p.provolatile, p.proparallel
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
WHERE p.provolatile <> 'i' OR p.proparallel <> 's'
ORDER BY p.oid::regprocedure::text;

-- Every operator, with the properties the planner relies on.
SELECT o.oid::regoperator AS operator, o.oprcom::regoperator AS commutator,
       o.oprnegate::regoperator AS negator, o.oprcanmerge AS merges, o.oprcanhash AS hashes
FROM pg_operator o
JOIN pg_depend d ON d.classid = 'pg_operator'::regclass AND d.objid = o.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
ORDER BY o.oprname, o.oid::regoperator::text;

-- psql help (\df+, \dx+, \do+, \dC+): every member of the extension has a
-- one-line description.  Lists the members without one (none).  The
-- implicit array types of its types (members too from PostgreSQL 18,
-- never described) are left out.
CREATE TEMP VIEW nd_member AS
SELECT d.* FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
WHERE d.deptype = 'e'
  AND NOT (d.classid = 'pg_type'::regclass
           AND EXISTS (SELECT 1 FROM pg_type t WHERE t.typarray = d.objid));
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS member_without_comment
FROM nd_member d
WHERE obj_description(d.objid, (SELECT c.relname FROM pg_class c WHERE c.oid = d.classid)) IS NULL
ORDER BY 1;
-- and each kind of member counted, so that a kind the query above would
-- miss shows here
SELECT (SELECT c.relname FROM pg_class c WHERE c.oid = d.classid) AS catalog, count(*) AS members,
       count(obj_description(d.objid, (SELECT c.relname FROM pg_class c WHERE c.oid = d.classid))) AS commented
FROM nd_member d
GROUP BY 1 ORDER BY 1;

--
-- Where the functions live (doc/reference.md, "Support functions"): the
-- extension's schema holds what a user calls, which is what \df lists;
-- the schema neardup_internal holds what PostgreSQL calls (type I/O, the
-- functions behind operators, casts and aggregates, operator class,
-- access method and planner support) and the helpers the PL/pgSQL
-- functions call.
--
-- Each function of the extension with the role in which PostgreSQL or
-- another of its functions calls it (none: a user calls it).
CREATE TEMP VIEW nd_function_role AS
WITH fn AS (
    SELECT p.oid, p.proname, p.pronamespace, p.prosrc, p.prolang
    FROM pg_proc p
    JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
), role AS (
    SELECT t.typinput AS fn, 'type I/O' AS role FROM pg_type t
    UNION ALL SELECT t.typoutput, 'type I/O' FROM pg_type t
    UNION ALL SELECT t.typreceive, 'type I/O' FROM pg_type t
    UNION ALL SELECT t.typsend, 'type I/O' FROM pg_type t
    UNION ALL SELECT t.typmodin, 'type I/O' FROM pg_type t
    UNION ALL SELECT t.typmodout, 'type I/O' FROM pg_type t
    UNION ALL SELECT t.typanalyze, 'type I/O' FROM pg_type t
    UNION ALL SELECT o.oprcode, 'operator' FROM pg_operator o
    UNION ALL SELECT o.oprrest, 'selectivity' FROM pg_operator o
    UNION ALL SELECT o.oprjoin, 'selectivity' FROM pg_operator o
    UNION ALL SELECT c.castfunc, 'cast' FROM pg_cast c
    UNION ALL SELECT a.amproc, 'operator class' FROM pg_amproc a
    UNION ALL SELECT a.amhandler, 'access method' FROM pg_am a
    UNION ALL SELECT p.prosupport, 'planner support' FROM pg_proc p
    UNION ALL SELECT g.aggtransfn, 'aggregate' FROM pg_aggregate g
    UNION ALL SELECT g.aggfinalfn, 'aggregate' FROM pg_aggregate g
    UNION ALL SELECT g.aggcombinefn, 'aggregate' FROM pg_aggregate g
    UNION ALL SELECT g.aggserialfn, 'aggregate' FROM pg_aggregate g
    UNION ALL SELECT g.aggdeserialfn, 'aggregate' FROM pg_aggregate g
    -- called by name, schema-qualified, from the body of another of them
    UNION ALL
    SELECT h.oid, 'helper of ' || c.proname
    FROM fn c
    CROSS JOIN LATERAL regexp_matches(c.prosrc, '([a-z_]+)\.([a-z_0-9]+)\s*\(', 'g') m
    JOIN fn h ON h.proname = m[2] AND h.pronamespace::regnamespace::text = m[1] AND h.oid <> c.oid
)
SELECT fn.oid, fn.proname, fn.pronamespace::regnamespace::text AS schema,
       string_agg(DISTINCT r.role, ', ' ORDER BY r.role) AS roles,
       bool_or(r.role NOT LIKE 'helper of %') AS support
FROM fn LEFT JOIN role r ON r.fn = fn.oid
GROUP BY fn.oid, fn.proname, fn.pronamespace;

-- The schemas: the extension's and neardup_internal, a member of the
-- extension that every role may use (the type I/O, operators and
-- indexes call its functions for every role).
SELECT s.nspname AS schema, count(f.oid) AS functions,
       count(f.oid) FILTER (WHERE f.support) AS support,
       count(f.oid) FILTER (WHERE obj_description(f.oid, 'pg_proc') IS NOT NULL) AS commented,
       s.oid = (SELECT e.extnamespace FROM pg_extension e WHERE e.extname = 'neardup') AS extension_schema,
       EXISTS (SELECT FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
               WHERE d.classid = 'pg_namespace'::regclass AND d.objid = s.oid AND d.deptype = 'e') AS member,
       has_schema_privilege('public', s.oid, 'USAGE') AS public_usage,
       has_schema_privilege('public', s.oid, 'CREATE') AS public_create
FROM pg_namespace s JOIN nd_function_role f ON f.schema = s.nspname
GROUP BY s.oid, s.nspname ORDER BY 1;

-- No support function in the extension's schema (\df shows none of them).
SELECT oid::regprocedure AS support_function_in_extension_schema, roles
FROM nd_function_role
WHERE support AND schema = (SELECT e.extnamespace::regnamespace::text FROM pg_extension e WHERE e.extname = 'neardup')
ORDER BY 1::text;

-- Every function in neardup_internal, with why it is there: a support
-- role, or a helper of a PL/pgSQL or SQL function (gist_simhash64_fetch
-- is in no operator class since 0.3 and has neither).
SELECT proname, roles FROM nd_function_role WHERE schema = 'neardup_internal'
ORDER BY 1, 2;

-- Every schema-qualified call in a PL/pgSQL or SQL body of the extension
-- to its own schema or to neardup_internal names a function there: a
-- function made after the move must call the helpers in neardup_internal.
SELECT p.oid::regprocedure AS caller, m[1] || '.' || m[2] AS missing_callee
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
CROSS JOIN LATERAL regexp_matches(p.prosrc, '([a-z_]+)\.([a-z_0-9]+)\s*\(', 'g') m
WHERE m[1] IN (e.extnamespace::regnamespace::text, 'neardup_internal')
  AND NOT EXISTS (SELECT FROM pg_proc q WHERE q.proname = m[2] AND q.pronamespace::regnamespace::text = m[1])
ORDER BY 1, 2;

--
-- DROP EXTENSION ... CASCADE drops the indexes on the extension's types
-- before the support functions they call (it visits the extension's
-- members newest first; neardup_internal.simhash64_send and
-- hamming_ball_send, newer than the schema, lead it to the types first).
-- Dropped the other way round, a session that had read a GIN index may
-- fail the DROP ("cache lookup failed for function": its options
-- function), and a session that rolls the DROP back keeps operator
-- classes without their support functions ("missing GIN support
-- function").  Both sessions are checked: after the rolled-back DROP,
-- each index kind, one table each, answers as the sequential scan.
--
CREATE TABLE cat_gin (id int, sh simhash64);
INSERT INTO cat_gin SELECT i, (hashint8extended(i / 3, 0))::simhash64 FROM generate_series(1, 300) i;
CREATE TABLE cat_gist AS SELECT * FROM cat_gin;
CREATE TABLE cat_ham AS SELECT * FROM cat_gin;
CREATE TABLE cat_btree AS SELECT * FROM cat_gin;
CREATE TABLE cat_hash AS SELECT * FROM cat_gin;
CREATE TABLE cat_ball AS SELECT id, hamming_ball(sh, 2) AS b FROM cat_gin;
CREATE INDEX ON cat_gin USING gin (sh);
CREATE INDEX ON cat_gist USING gist (sh);
CREATE INDEX ON cat_ham USING hamming (sh);
CREATE INDEX ON cat_btree (sh);
CREATE INDEX ON cat_hash USING hash (sh);
CREATE INDEX ON cat_ball USING gist (b);
ANALYZE cat_gin, cat_gist, cat_ham, cat_btree, cat_hash, cat_ball;
SELECT (hashint8extended(7 / 3, 0))::simhash64 AS q \gset
-- the sequential scan's answers
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS near FROM cat_gin WHERE sh <~> :'q' <= 3 \gset
SELECT count(*) AS same FROM cat_gin WHERE sh = :'q' \gset
SELECT count(*) AS balls FROM cat_ball WHERE b && hamming_ball(:'q', 2) \gset
RESET enable_indexscan;
RESET enable_bitmapscan;
\set answers 'SELECT (SELECT count(*) FROM cat_gin WHERE sh <~> :\'q\' <= 3) = :near AS gin, (SELECT count(*) FROM cat_gist WHERE sh <~> :\'q\' <= 3) = :near AS gist, (SELECT count(*) FROM cat_ham WHERE sh <~> :\'q\' <= 3) = :near AS hamming, (SELECT count(*) FROM cat_btree WHERE sh = :\'q\') = :same AS btree, (SELECT count(*) FROM cat_hash WHERE sh = :\'q\') = :same AS hash, (SELECT count(*) FROM cat_ball WHERE b && hamming_ball(:\'q\', 2)) = :balls AS ball_gist'
-- the plans read the indexes
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM cat_gin WHERE sh <~> :'q' <= 3;
EXPLAIN (COSTS OFF) SELECT count(*) FROM cat_hash WHERE sh = :'q';
:answers;
-- a new session that reads the GIN index before the DROP
\c
SET enable_seqscan = off;
SELECT count(*) = :near AS gin FROM cat_gin WHERE sh <~> :'q' <= 3;
BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION neardup CASCADE;
ROLLBACK;
:answers;
-- a new session whose first use of the indexes follows the DROP
\c
BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION neardup CASCADE;
ROLLBACK;
SET enable_seqscan = off;
:answers;
RESET enable_seqscan;
DROP TABLE cat_gin, cat_gist, cat_ham, cat_btree, cat_hash, cat_ball;
