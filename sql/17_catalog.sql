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
