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

-- ===== section: large radii and LSH recall (issue 29 part 4; src/core/nd_minhash.c, src/minhash/minhash_lsh.c, src/dedup/minhash_clusters.c, doc/minhash.md, doc/dedup.md) =====

/*
 * One default recall for SimHash radii: 0.95, where 0.2 had 0.99.  At
 * threshold 0.8 that is radius 15 (0.99 gave 17): what the README and the
 * docs' examples use, the widest radius simhash_pairs and simhash_clusters
 * accept, 2.5x faster lookups, and on edited real texts a measured recall
 * of 0.994 against 1.000 (doc/fingerprints.md).  CREATE OR REPLACE keeps
 * the functions' OIDs, so nothing that depends on them breaks.
 */
CREATE OR REPLACE FUNCTION @extschema@.simhash_radius(threshold pg_catalog.float8,
                                                      recall pg_catalog.float8 DEFAULT 0.95)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'nd_simhash_radius_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION @extschema@.simhash_similar_exact(sh @extschema@.simhash64, query @extschema@.simhash64,
                                                             doc pg_catalog.text, query_doc pg_catalog.text,
                                                             threshold pg_catalog.float8,
                                                             radius pg_catalog.int4 DEFAULT NULL,
                                                             shingle pg_catalog.int4 DEFAULT 3,
                                                             unit pg_catalog.text DEFAULT 'word',
                                                             seed pg_catalog.int8 DEFAULT 0)
RETURNS pg_catalog.bool
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT @extschema@.within(sh, query, COALESCE(radius, @extschema@.simhash_radius(threshold, 0.95)))
       AND @extschema@.jaccard(doc, query_doc, shingle, unit, seed) OPERATOR(pg_catalog.>=) threshold
$$;

/*
 * MinHash LSH at a chosen recall: minhash_lsh_params(threshold, num_perm,
 * recall => 0.95) gives the (bands, rows) with the fewest candidates below
 * the threshold among those that make a pair of similarity threshold a
 * candidate with that probability (nd_lsh_params_recall).  Without recall
 * it is datasketch's choice as before (9 x 13 at 0.8: recall 0.40 there),
 * so that band indexes built from it keep matching.  A new trailing
 * argument with a default cannot be an overload (calls without it would be
 * ambiguous), hence DROP and CREATE; the C function serves both forms.
 * Not STRICT any more (recall defaults to NULL): the C function returns
 * NULL for a NULL in the first four arguments, as STRICT did.
 */
DROP FUNCTION @extschema@.minhash_lsh_params(pg_catalog.float8, pg_catalog.int4,
                                             pg_catalog.float8, pg_catalog.float8);
CREATE FUNCTION @extschema@.minhash_lsh_params(threshold pg_catalog.float8,
                                               num_perm pg_catalog.int4 DEFAULT 128,
                                               fp_weight pg_catalog.float8 DEFAULT 0.5,
                                               fn_weight pg_catalog.float8 DEFAULT 0.5,
                                               recall pg_catalog.float8 DEFAULT NULL,
                                               OUT bands pg_catalog.int4,
                                               OUT rows pg_catalog.int4)
AS 'MODULE_PATHNAME', 'nd_minhash_lsh_params'
LANGUAGE C IMMUTABLE PARALLEL SAFE COST 10000;

-- The recall of a choice: 1 - (1 - similarity^rows)^bands.
CREATE FUNCTION @extschema@.minhash_lsh_recall(similarity pg_catalog.float8,
                                               bands pg_catalog.int4, rows pg_catalog.int4)
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'nd_minhash_lsh_recall'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- minhash_clusters: recall as minhash_lsh_params takes it (bands and rows
-- NULL); same C functions, which read it when the form has it.
DROP FUNCTION @extschema@.minhash_clusters(pg_catalog.regclass, pg_catalog.name, pg_catalog.name,
                                           pg_catalog.float8, pg_catalog.int4, pg_catalog.int4);
DROP FUNCTION @extschema@.minhash_clusters(pg_catalog.text, pg_catalog.float8,
                                           pg_catalog.int4, pg_catalog.int4);
DROP FUNCTION @extschema@.minhash_clusters(pg_catalog.text, pg_catalog.text, pg_catalog.text,
                                           pg_catalog.float8, pg_catalog.int4, pg_catalog.int4);

CREATE FUNCTION @extschema@.minhash_clusters(source pg_catalog.regclass, id_column pg_catalog.name,
                                             signature_column pg_catalog.name,
                                             threshold pg_catalog.float8 DEFAULT 0.8,
                                             bands pg_catalog.int4 DEFAULT NULL,
                                             rows pg_catalog.int4 DEFAULT NULL,
                                             recall pg_catalog.float8 DEFAULT NULL)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
AS 'MODULE_PATHNAME', 'minhash_clusters_rel'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

CREATE FUNCTION @extschema@.minhash_clusters(query pg_catalog.text,
                                             threshold pg_catalog.float8 DEFAULT 0.8,
                                             bands pg_catalog.int4 DEFAULT NULL,
                                             rows pg_catalog.int4 DEFAULT NULL,
                                             recall pg_catalog.float8 DEFAULT NULL)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
AS 'MODULE_PATHNAME', 'minhash_clusters_query'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

CREATE FUNCTION @extschema@.minhash_clusters(source pg_catalog.text, id_column pg_catalog.text,
                                             signature_column pg_catalog.text,
                                             threshold pg_catalog.float8 DEFAULT 0.8,
                                             bands pg_catalog.int4 DEFAULT NULL,
                                             rows pg_catalog.int4 DEFAULT NULL,
                                             recall pg_catalog.float8 DEFAULT NULL)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
AS 'MODULE_PATHNAME', 'minhash_clusters_relname'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

COMMENT ON FUNCTION @extschema@.minhash_lsh_params(pg_catalog.float8, pg_catalog.int4, pg_catalog.float8,
                                                   pg_catalog.float8, pg_catalog.float8)
    IS 'LSH bands and rows that minimise weighted false positives and negatives at a threshold, or the cheapest that reach a recall there';
COMMENT ON FUNCTION @extschema@.minhash_lsh_recall(pg_catalog.float8, pg_catalog.int4, pg_catalog.int4)
    IS 'probability that a pair of this Jaccard similarity shares an LSH band of bands x rows';
COMMENT ON FUNCTION @extschema@.minhash_clusters(pg_catalog.regclass, pg_catalog.name, pg_catalog.name,
                                                 pg_catalog.float8, pg_catalog.int4, pg_catalog.int4, pg_catalog.float8)
    IS 'clusters of rows whose MinHash signatures share an LSH band and estimate at least threshold, in linear space';
COMMENT ON FUNCTION @extschema@.minhash_clusters(pg_catalog.text, pg_catalog.float8, pg_catalog.int4, pg_catalog.int4,
                                                 pg_catalog.float8)
    IS 'clusters of the (id, signature) rows of a query by LSH bands verified at a threshold';
COMMENT ON FUNCTION @extschema@.minhash_clusters(pg_catalog.text, pg_catalog.text, pg_catalog.text,
                                                 pg_catalog.float8, pg_catalog.int4, pg_catalog.int4, pg_catalog.float8)
    IS 'clusters of rows by MinHash LSH bands verified at a threshold (table named by text)';

-- ===== end section: large radii and LSH recall =====

-- ===== section: progress of long jobs (issue 29 part 5; src/dedup/progress.c, doc/dedup.md) =====

/*
 * The dedup jobs running now, for another session to watch: job, phase,
 * a count and the phase's total (NULL when not known), and when the job
 * and the phase started (doc/dedup.md, "Watching a long job").  Other
 * roles' jobs show only pid and database unless the caller has their
 * privileges or pg_read_all_stats.
 */
CREATE FUNCTION @extschema@.neardup_progress(OUT pid pg_catalog.int4,
                                             OUT datid pg_catalog.oid,
                                             OUT job pg_catalog.text,
                                             OUT phase pg_catalog.text,
                                             OUT done pg_catalog.int8,
                                             OUT total pg_catalog.int8,
                                             OUT started pg_catalog.timestamptz,
                                             OUT phase_started pg_catalog.timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'nd_progress_sql'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE ROWS 4;

COMMENT ON FUNCTION @extschema@.neardup_progress()
    IS 'the dedup jobs running now (simhash_pairs, simhash_clusters, minhash_clusters): phase, count and total, for watching from another session';

-- ===== end section: progress of long jobs =====
