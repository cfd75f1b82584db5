/* neardup 0.2 -> 0.3 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION neardup UPDATE TO '0.3'" to load this file. \quit

--
-- Everything 0.3 adds or changes, in the order it landed.  The scripts of
-- 0.1 and 0.2 are released and never edited; a fresh CREATE EXTENSION runs
-- 0.1's and then every update, so a new install and an updated one are the
-- same by construction (test/e2e/upgrade.sh checks the catalogs anyway).
--
-- Indexes built by 0.2 need no REINDEX: a 0.2 hamming index is a 0.3 index
-- with one run (doc/upgrading.md).
--
-- The same conventions as the install script: every object schema-qualified
-- with @extschema@, every built-in type and operator with pg_catalog.
--

-- ===== section: the log-structured hamming index (src/hamming) =====

/*
 * hamming_runs: the runs of a hamming index, oldest first, as its metapage
 * and the runs' headers give them (doc/index-hamming.md).  Owner only, as
 * hamming_stats.  Given a partitioned index, the runs of each partition's
 * index, which partition_index names.
 */
CREATE FUNCTION @extschema@.hamming_runs(index pg_catalog.regclass,
                                         OUT run pg_catalog.int4,
                                         OUT entries pg_catalog.int8,
                                         OUT tables pg_catalog.int4,
                                         OUT pages pg_catalog.int8,
                                         OUT partition_index pg_catalog.regclass)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'hamming_runs'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 8;

COMMENT ON FUNCTION @extschema@.hamming_runs(pg_catalog.regclass) IS 'the runs of a hamming index, oldest first: live entries, tables, pages (data, directory and header pages of all tables), and the index they belong to (of each partition, given a partitioned index)';

-- ===== end section: the log-structured hamming index =====

