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
 * hamming_stats.
 */
CREATE FUNCTION @extschema@.hamming_runs(index pg_catalog.regclass,
                                         OUT run pg_catalog.int4,
                                         OUT entries pg_catalog.int8,
                                         OUT tables pg_catalog.int4,
                                         OUT pages pg_catalog.int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'hamming_runs'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 8;

COMMENT ON FUNCTION @extschema@.hamming_runs(pg_catalog.regclass) IS 'the runs of a hamming index, oldest first: entries when written, tables, pages (data, directory and header pages of all tables)';

-- ===== end section: the log-structured hamming index =====

-- ===== section: MinHash band lookups the planner estimates (src/planner/band_support.c) =====

/*
 * The support function of minhash_bands_overlap: the GIN index condition
 * `bands && query_bands` and a selectivity from the bands' statistics.
 */
CREATE FUNCTION @extschema@.minhash_bands_support(pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'nd_minhash_bands_support'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.minhash_bands_support(pg_catalog.internal) IS 'planner support of minhash_bands_overlap: the GIN index condition and the band lookup''s selectivity';

/*
 * `a && b` on band keys, with an estimate from the bands.  The planner
 * turns `minhash_bands(..) && minhash_bands(..)` into it (the built-in
 * estimate of && charges every band key half a percent of the rows).
 */
CREATE FUNCTION @extschema@.minhash_bands_overlap(bands pg_catalog.int8[], query_bands pg_catalog.int8[])
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'nd_minhash_bands_overlap'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SUPPORT @extschema@.minhash_bands_support;

COMMENT ON FUNCTION @extschema@.minhash_bands_overlap(pg_catalog.int8[], pg_catalog.int8[]) IS 'do two band-key arrays share a key (the && of a MinHash band lookup, with a selectivity from the bands)';

/*
 * The rewrite into minhash_bands_overlap lives in the library, which a
 * session may not have loaded yet when it plans a generic band lookup (no
 * constant to fold).  A support function that answers nothing gets it
 * loaded when minhash_bands() is simplified, as hamming_support does for
 * <~>.
 */
ALTER FUNCTION @extschema@.minhash_bands(pg_catalog.int4[], pg_catalog.int4, pg_catalog.int4)
    SUPPORT @extschema@.hamming_support;

-- ===== end section: MinHash band lookups =====
