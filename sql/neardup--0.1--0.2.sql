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

-- ===== section: dedup helpers, search_path-safe (replaces 0.1's bodies) =====

/*
 * 0.1's dedup_representatives and dedup_keep_one resolved three operators
 * through the caller's search_path: NULLIF(...) and a simple CASE (both an
 * implicit =), and IS DISTINCT FROM in the flag UPDATEs.  With a path that
 * puts a writable schema before pg_catalog, another role's operator would
 * run as the caller.  Every comparison is now OPERATOR(pg_catalog.x) or a
 * searched CASE over such a comparison (sql/46_dedup_search_path.sql runs
 * every helper under a path of shadowing operators).  Behaviour is
 * otherwise unchanged.
 */
CREATE OR REPLACE FUNCTION @extschema@.dedup_representatives(source pg_catalog.regclass,
                                                  id_column pg_catalog.name,
                                                  pairs_query pg_catalog.text,
                                                  keep_order pg_catalog.text DEFAULT NULL,
                                                  OUT id pg_catalog.int8,
                                                  OUT cluster_id pg_catalog.int8,
                                                  OUT representative pg_catalog.int8)
RETURNS SETOF record
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
AS $$
BEGIN
    IF source IS NULL OR id_column IS NULL OR pairs_query IS NULL THEN
        RAISE EXCEPTION 'source, id_column and pairs_query must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM @extschema@.dedup_check_column(source, id_column, 'id',
        ARRAY['pg_catalog.int2', 'pg_catalog.int4', 'pg_catalog.int8']::pg_catalog.regtype[]);
    -- keep_order must see source's columns only: the clusters' columns
    -- get names no table has, so that 'id DESC' means source's id.
    RETURN QUERY EXECUTE pg_catalog.format(
        'SELECT c."neardup: id", c."neardup: cluster_id", '
        '       pg_catalog.first_value(c."neardup: id") '
        '           OVER (PARTITION BY c."neardup: cluster_id" ORDER BY %3$s s.%1$I) '
        'FROM %2$s s '
        'JOIN (SELECT x.id AS "neardup: id", x.cluster_id AS "neardup: cluster_id" '
        '      FROM @extschema@.dedup_clusters($1) x) c '
        '  ON s.%1$I OPERATOR(pg_catalog.=) c."neardup: id"',
        id_column, source,
        CASE WHEN pg_catalog.btrim(keep_order) OPERATOR(pg_catalog.<>) ''
             THEN pg_catalog.btrim(keep_order) OPERATOR(pg_catalog.||) ', ' END)
    USING pairs_query;
END
$$;

-- Deletes every row of a cluster but its representative, or, given
-- flag_column (boolean), sets it to true on those rows and to false on the
-- representatives.  Returns the number of rows deleted or changed.  Rows in
-- no cluster are not touched.
CREATE OR REPLACE FUNCTION @extschema@.dedup_keep_one(source pg_catalog.regclass,
                                           id_column pg_catalog.name,
                                           pairs_query pg_catalog.text,
                                           keep_order pg_catalog.text DEFAULT NULL,
                                           flag_column pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    dup pg_catalog.int8[];
    keep pg_catalog.int8[];
    n pg_catalog.int8;
    m pg_catalog.int8;
    ship pg_catalog.text;
    idtype pg_catalog.oid;
    flag pg_catalog.bool;
BEGIN
    IF flag_column IS NOT NULL THEN
        PERFORM @extschema@.dedup_check_column(source, flag_column, 'flag',
            ARRAY['pg_catalog.bool']::pg_catalog.regtype[]);
    END IF;
    -- the whole decision first, then one statement per change: the pairs
    -- query never sees a half-deduplicated table
    SELECT pg_catalog.array_agg(r.id) FILTER (WHERE r.id OPERATOR(pg_catalog.<>) r.representative),
           pg_catalog.array_agg(r.id) FILTER (WHERE r.id OPERATOR(pg_catalog.=) r.representative)
      INTO dup, keep
      FROM @extschema@.dedup_representatives(source, id_column, pairs_query, keep_order) r;
    -- How the ids reach the rows.  On a foreign table, or a partitioned
    -- table with a foreign partition, the statement must ship whole:
    -- postgres_fdw cannot ship a join with unnest($1), and would instead
    -- read every row of each shard FOR UPDATE and change them one round
    -- trip each; "id = ANY ($1)" ships as one statement per shard.  The
    -- array is cast to the column's type (the ids come from the join with
    -- source in dedup_representatives, so they fit), because = ANY with a
    -- cross-type operator (int4 = int8) is not hashed: on a local partition
    -- without an index that is a linear search per row.  Local tables keep
    -- the join, which hashes whatever the types (doc/dedup.md).
    SELECT CASE WHEN t.typtype OPERATOR(pg_catalog.=) 'd' THEN t.typbasetype ELSE t.oid END
      INTO idtype
      FROM pg_catalog.pg_attribute a
      JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
     WHERE a.attrelid OPERATOR(pg_catalog.=) source
       AND a.attname OPERATOR(pg_catalog.=) id_column;
    SELECT CASE WHEN c.relkind OPERATOR(pg_catalog.=) 'f'
                  OR (c.relkind OPERATOR(pg_catalog.=) 'p' AND EXISTS (
                      SELECT FROM pg_catalog.pg_partition_tree(source) p
                      JOIN pg_catalog.pg_class pc ON pc.oid OPERATOR(pg_catalog.=) p.relid
                      WHERE pc.relkind OPERATOR(pg_catalog.=) 'f'))
                THEN pg_catalog.format('s.%I OPERATOR(pg_catalog.=) ANY ($1::%s[])',
                                       id_column, pg_catalog.format_type(idtype, NULL))
           END
      INTO ship
      FROM pg_catalog.pg_class c
     WHERE c.oid OPERATOR(pg_catalog.=) source;
    IF flag_column IS NULL THEN
        IF ship IS NOT NULL THEN
            EXECUTE pg_catalog.format('DELETE FROM %s s WHERE %s', source, ship)
            USING dup;
        ELSE
            EXECUTE pg_catalog.format(
                'DELETE FROM %s s USING pg_catalog.unnest($1) d(id) '
                'WHERE s.%I OPERATOR(pg_catalog.=) d.id', source, id_column)
            USING dup;
        END IF;
        GET DIAGNOSTICS n = ROW_COUNT;
        RETURN n;
    END IF;
    n := 0;
    FOR flag IN SELECT * FROM (VALUES (true), (false)) v LOOP
        IF ship IS NOT NULL THEN
            EXECUTE pg_catalog.format(
                'UPDATE %1$s s SET %3$I = %4$L '
                'WHERE %2$s AND (s.%3$I IS NULL OR s.%3$I OPERATOR(pg_catalog.<>) %4$L::pg_catalog.bool)',
                source, ship, flag_column, flag)
            USING CASE WHEN flag THEN dup ELSE keep END;
        ELSE
            EXECUTE pg_catalog.format(
                'UPDATE %1$s s SET %3$I = %4$L FROM pg_catalog.unnest($1) d(id) '
                'WHERE s.%2$I OPERATOR(pg_catalog.=) d.id '
                '  AND (s.%3$I IS NULL OR s.%3$I OPERATOR(pg_catalog.<>) %4$L::pg_catalog.bool)',
                source, id_column, flag_column, flag)
            USING CASE WHEN flag THEN dup ELSE keep END;
        END IF;
        GET DIAGNOSTICS m = ROW_COUNT;
        n := n OPERATOR(pg_catalog.+) m;
    END LOOP;
    RETURN n;
END
$$;

-- ===== end section: dedup helpers =====

-- ===== section: minhash clusters (src/dedup/minhash_clusters.c) =====

/*
 * minhash_clusters (doc/dedup.md): the connected components of "shares an
 * LSH band and minhash_jaccard >= threshold" as (id, cluster_id) in id
 * order, cluster_id the smallest id; equal to dedup_clusters over the
 * verified band-join pairs (minhash_similar()), computed with band buckets
 * and a union-find: identical signatures joined once, a candidate pair
 * already connected not verified.  bands and rows NULL: as
 * minhash_lsh_params(threshold, num_perm) chooses.  Markings as
 * simhash_clusters.
 */
CREATE FUNCTION @extschema@.minhash_clusters(source pg_catalog.regclass, id_column pg_catalog.name,
                                             signature_column pg_catalog.name,
                                             threshold pg_catalog.float8 DEFAULT 0.8,
                                             bands pg_catalog.int4 DEFAULT NULL,
                                             rows pg_catalog.int4 DEFAULT NULL)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
AS 'MODULE_PATHNAME', 'minhash_clusters_rel'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

CREATE FUNCTION @extschema@.minhash_clusters(query pg_catalog.text,
                                             threshold pg_catalog.float8 DEFAULT 0.8,
                                             bands pg_catalog.int4 DEFAULT NULL,
                                             rows pg_catalog.int4 DEFAULT NULL)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
AS 'MODULE_PATHNAME', 'minhash_clusters_query'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

CREATE FUNCTION @extschema@.minhash_clusters(source pg_catalog.text, id_column pg_catalog.text,
                                             signature_column pg_catalog.text,
                                             threshold pg_catalog.float8 DEFAULT 0.8,
                                             bands pg_catalog.int4 DEFAULT NULL,
                                             rows pg_catalog.int4 DEFAULT NULL)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
AS 'MODULE_PATHNAME', 'minhash_clusters_relname'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

COMMENT ON FUNCTION @extschema@.minhash_clusters(pg_catalog.regclass, pg_catalog.name, pg_catalog.name,
                                                 pg_catalog.float8, pg_catalog.int4, pg_catalog.int4)
    IS 'clusters of rows whose MinHash signatures share an LSH band and estimate at least threshold, in linear space';
COMMENT ON FUNCTION @extschema@.minhash_clusters(pg_catalog.text, pg_catalog.float8, pg_catalog.int4, pg_catalog.int4)
    IS 'clusters of the (id, signature) rows of a query by LSH bands verified at a threshold';
COMMENT ON FUNCTION @extschema@.minhash_clusters(pg_catalog.text, pg_catalog.text, pg_catalog.text,
                                                 pg_catalog.float8, pg_catalog.int4, pg_catalog.int4)
    IS 'clusters of rows by MinHash LSH bands verified at a threshold (table named by text)';

-- ===== end section: minhash clusters =====
