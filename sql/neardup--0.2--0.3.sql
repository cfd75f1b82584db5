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

-- ===== section: dedup arguments: NULLs and keep_order (issue 29) =====

/*
 * One rule for NULL arguments across the dedup family (doc/dedup.md): a
 * NULL required argument -- a table, a column, a query, a radius, a
 * threshold -- is an error, 22004 naming it; an argument whose NULL means
 * something (blocks, bands and rows: choose; keep_order: the smallest id;
 * flag_column: delete; since: every row; deleted: find them) keeps that
 * meaning.  The C functions check their arguments (0.2's simhash_pairs,
 * simhash_clusters and minhash_clusters returned no rows for a NULL table,
 * column or query, as the STRICT dedup_clusters did); dedup_clusters is no
 * longer STRICT so that it can say so.
 */
ALTER FUNCTION @extschema@.dedup_clusters(pg_catalog.text) CALLED ON NULL INPUT;

/*
 * dedup_keep_order_problem: what is wrong with a keep_order, in the terms
 * of the user who wrote it -- NULLs when nothing is.  The keep_order is
 * planned as dedup_representatives uses it (a window's ORDER BY over the
 * table, the id last), on no rows, and the error it raises is returned:
 * its SQLSTATE, message, detail and hint (a hint of our own when it has
 * none).  dedup_representatives and dedup_keep_one raise it as "invalid
 * keep_order" before any generated query runs, so that a typo does not
 * come back as an error in a query the user never wrote.
 */
CREATE FUNCTION @extschema@.dedup_keep_order_problem(source pg_catalog.regclass,
                                                     id_column pg_catalog.name,
                                                     keep_order pg_catalog.text,
                                                     OUT err_code pg_catalog.text,
                                                     OUT err_message pg_catalog.text,
                                                     OUT err_detail pg_catalog.text,
                                                     OUT err_hint pg_catalog.text)
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
AS $$
BEGIN
    IF source IS NULL OR id_column IS NULL
       OR pg_catalog.btrim(keep_order) OPERATOR(pg_catalog.=) '' IS NOT FALSE THEN
        RETURN;
    END IF;
    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.first_value(1) OVER (ORDER BY %3$s, s.%1$I) FROM %2$s s LIMIT 0',
        id_column, source, pg_catalog.btrim(keep_order));
EXCEPTION
    -- not the keep_order's fault: raised as it is
    WHEN insufficient_privilege THEN
        RAISE;
    WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS err_code = RETURNED_SQLSTATE, err_message = MESSAGE_TEXT,
                                err_detail = PG_EXCEPTION_DETAIL, err_hint = PG_EXCEPTION_HINT;
        IF err_detail OPERATOR(pg_catalog.=) '' THEN
            err_detail := NULL;
        END IF;
        IF err_hint OPERATOR(pg_catalog.=) '' OR err_hint IS NULL THEN
            err_hint := pg_catalog.format(
            'keep_order is an ORDER BY list over the columns of %s, such as ''created_at DESC''; '
            'the first row of each cluster in that order is kept.', source);
        END IF;
END
$$;

COMMENT ON FUNCTION @extschema@.dedup_keep_order_problem(pg_catalog.regclass, pg_catalog.name, pg_catalog.text) IS 'support: the error a keep_order would raise in dedup_representatives (SQLSTATE, message, detail, hint), or NULLs';

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
DECLARE
    bad record;
BEGIN
    IF source IS NULL OR id_column IS NULL OR pairs_query IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN source IS NULL THEN 'source'
                 WHEN id_column IS NULL THEN 'id_column' ELSE 'pairs_query' END
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM @extschema@.dedup_check_column(source, id_column, 'id',
        ARRAY['pg_catalog.int2', 'pg_catalog.int4', 'pg_catalog.int8']::pg_catalog.regtype[]);
    SELECT * INTO bad FROM @extschema@.dedup_keep_order_problem(source, id_column, keep_order);
    -- (a RAISE option cannot be NULL: most errors have no detail)
    IF bad.err_detail IS NOT NULL THEN
        RAISE EXCEPTION 'invalid keep_order "%": %', keep_order, bad.err_message
            USING ERRCODE = bad.err_code, DETAIL = bad.err_detail, HINT = bad.err_hint;
    ELSIF bad.err_code IS NOT NULL THEN
        RAISE EXCEPTION 'invalid keep_order "%": %', keep_order, bad.err_message
            USING ERRCODE = bad.err_code, HINT = bad.err_hint;
    END IF;
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
-- no cluster are not touched.  (0.2's body, with the argument checks first.)
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
    bad record;
BEGIN
    -- The user's mistakes first, in the user's terms: one CONTEXT line,
    -- not the generated queries of dedup_representatives.
    IF source IS NULL OR id_column IS NULL OR pairs_query IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN source IS NULL THEN 'source'
                 WHEN id_column IS NULL THEN 'id_column' ELSE 'pairs_query' END
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO bad FROM @extschema@.dedup_keep_order_problem(source, id_column, keep_order);
    -- (a RAISE option cannot be NULL: most errors have no detail)
    IF bad.err_detail IS NOT NULL THEN
        RAISE EXCEPTION 'invalid keep_order "%": %', keep_order, bad.err_message
            USING ERRCODE = bad.err_code, DETAIL = bad.err_detail, HINT = bad.err_hint;
    ELSIF bad.err_code IS NOT NULL THEN
        RAISE EXCEPTION 'invalid keep_order "%": %', keep_order, bad.err_message
            USING ERRCODE = bad.err_code, HINT = bad.err_hint;
    END IF;
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

-- ===== end section: dedup arguments =====
