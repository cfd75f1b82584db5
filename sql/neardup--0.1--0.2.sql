/* neardup 0.1 -> 0.2 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION neardup UPDATE TO '0.2'" to load this file. \quit

--
-- Everything 0.2 adds or changes, in the order it landed.  0.1's script is
-- released and never edited; a fresh CREATE EXTENSION runs it and then this
-- file, so a new install and an updated one are the same by construction
-- (test/e2e/upgrade.sh checks the catalogs anyway).
--
-- The same conventions as the install script: every object schema-qualified
-- with @extschema@, every built-in type and operator with pg_catalog, so
-- that the script means the same whatever the search_path.
--

-- ===== section: dedup clusters in linear space (src/dedup/simhash_clusters.c) =====

/*
 * simhash_clusters (doc/dedup.md): the connected components of "within
 * max_distance bits" as (id, cluster_id) for every row that has a
 * near-duplicate, cluster_id the smallest id of the component; equal to
 * dedup_clusters over simhash_pairs, but computed inside the all-pairs scan
 * with a union-find, so that memory, time and output stay linear in the
 * rows however large the groups of identical fingerprints.  The same three
 * forms and markings as simhash_pairs.
 */
CREATE FUNCTION @extschema@.simhash_clusters(source pg_catalog.regclass, id_column pg_catalog.name,
                                             fingerprint_column pg_catalog.name,
                                             max_distance pg_catalog.int4 DEFAULT 3,
                                             blocks pg_catalog.int4 DEFAULT NULL)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
AS 'MODULE_PATHNAME', 'simhash_clusters_rel'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

CREATE FUNCTION @extschema@.simhash_clusters(query pg_catalog.text,
                                             max_distance pg_catalog.int4 DEFAULT 3,
                                             blocks pg_catalog.int4 DEFAULT NULL)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
AS 'MODULE_PATHNAME', 'simhash_clusters_query'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

CREATE FUNCTION @extschema@.simhash_clusters(source pg_catalog.text, id_column pg_catalog.text,
                                             fingerprint_column pg_catalog.text,
                                             max_distance pg_catalog.int4 DEFAULT 3,
                                             blocks pg_catalog.int4 DEFAULT NULL)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
AS 'MODULE_PATHNAME', 'simhash_clusters_relname'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

COMMENT ON FUNCTION @extschema@.simhash_clusters(pg_catalog.regclass, pg_catalog.name, pg_catalog.name,
                                                 pg_catalog.int4, pg_catalog.int4)
    IS 'clusters of rows whose fingerprints are within max_distance bits (connected components), in linear space';
COMMENT ON FUNCTION @extschema@.simhash_clusters(pg_catalog.text, pg_catalog.int4, pg_catalog.int4)
    IS 'clusters of the (id, fingerprint) rows of a query within max_distance bits, in linear space';
COMMENT ON FUNCTION @extschema@.simhash_clusters(pg_catalog.text, pg_catalog.text, pg_catalog.text,
                                                 pg_catalog.int4, pg_catalog.int4)
    IS 'clusters of rows whose fingerprints are within max_distance bits (table named by text)';

-- ===== end section: dedup clusters =====
