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

-- ===== section: incremental clusters (doc/dedup.md, "Incremental clusters") =====

/*
 * simhash_clusters_update: brings a state table of (id, cluster_id) rows,
 * as simhash_clusters returns them, up to date with source after rows were
 * added (ids above since) and deleted, and returns every row whose cluster
 * changed as (id, old_cluster_id, cluster_id), NULL for "in no cluster".
 *
 * With few new rows and a GIN or GiST index on the fingerprint the cost
 * follows the change, not the table: deleted rows are found in the state
 * table, the clusters they left are re-clustered among their survivors (a
 * cluster can only split), and each distinct new fingerprint looks up one
 * old row with the same fingerprint or else probes the index once; the
 * edges found link new rows, old singletons and old
 * clusters (one node each, named by its cluster id), and their components
 * relabel and extend the state.  deleted, when given, lists the ids deleted
 * since the last call (say, logged by a trigger); otherwise every row of
 * the state is looked for in source.  Otherwise, with since NULL, or when a
 * probe finds more than probe_cap rows (near a large group, whose rows a
 * probe would all read), simhash_clusters over the whole table, applied as
 * a difference.  The search_path is pinned: the caller's cannot shadow an
 * operator.  source is locked in SHARE mode (writers wait, so no row with
 * a smaller id can commit unseen) and state in SHARE ROW EXCLUSIVE mode
 * (one update at a time).
 */
CREATE FUNCTION @extschema@.simhash_clusters_update(state pg_catalog.regclass,
                                                    source pg_catalog.regclass,
                                                    id_column pg_catalog.name,
                                                    fingerprint_column pg_catalog.name,
                                                    since pg_catalog.int8,
                                                    max_distance pg_catalog.int4 DEFAULT 3,
                                                    deleted pg_catalog.int8[] DEFAULT NULL,
                                                    OUT id pg_catalog.int8,
                                                    OUT old_cluster_id pg_catalog.int8,
                                                    OUT cluster_id pg_catalog.int8)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ints CONSTANT regtype[] := ARRAY['int2', 'int4', 'int8']::regtype[];
    -- Rows a probe may read before the night takes the full run instead.
    probe_cap CONSTANT int := 64;
    -- every change, in order: the row and its cluster before the change
    ch_id int8[] := '{}'::int8[];
    ch_old int8[] := '{}'::int8[];
    part_id int8[];
    part_old int8[];
    part_new int8[];
    dirty int8[];
    edge_a int8[];
    edge_b int8[];
    saturated bool;
    new_rows float8;
    total float8;
    probe bool := false;
    estimated bool;
    how text;
    -- GIN and GiST indexes of source led by the fingerprint: what probes use
    fp_index oid[];
    fp_am name[];
    fp_mine bool[];
BEGIN
    IF state IS NULL OR source IS NULL OR id_column IS NULL OR fingerprint_column IS NULL
       OR max_distance IS NULL THEN
        RAISE EXCEPTION 'state, source, id_column, fingerprint_column and max_distance must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF max_distance < 0 OR max_distance > 15 THEN
        RAISE EXCEPTION 'max_distance must be between 0 and 15'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM @extschema@.dedup_check_column(source, id_column, 'id', ints);
    PERFORM @extschema@.dedup_check_column(source, fingerprint_column, 'fingerprint',
        ARRAY['@extschema@.simhash64']::regtype[]);
    PERFORM @extschema@.dedup_check_column(state, 'id', 'id', ints);
    PERFORM @extschema@.dedup_check_column(state, 'cluster_id', 'cluster id', ints);
    EXECUTE format('LOCK TABLE %s IN SHARE MODE', source);
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', state);

    SELECT array_agg(i.indexrelid), array_agg(am.amname), array_agg(pg_has_role(ic.relowner, 'USAGE'))
      INTO fp_index, fp_am, fp_mine
      FROM pg_index i
      JOIN pg_class ic ON ic.oid = i.indexrelid
      JOIN pg_am am ON am.oid = ic.relam
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
     WHERE i.indrelid = source AND a.attname = fingerprint_column
       AND am.amname = ANY (ARRAY['gin', 'gist']::name[]);
    IF since IS NOT NULL AND fp_index IS NOT NULL THEN
        EXECUTE format('SELECT count(*) FROM %s WHERE %I > %L::int8', source, id_column, since)
            INTO new_rows;
        -- The table's rows as the planner estimates them: the density of
        -- the last VACUUM or ANALYZE times today's size, per partition.
        SELECT sum(c.reltuples / c.relpages
                   * (pg_relation_size(c.oid) / current_setting('block_size')::float8)),
               bool_and(c.relpages > 0 AND c.reltuples >= 0)
          INTO total, estimated
          FROM pg_partition_tree(source) p JOIN pg_class c ON c.oid = p.relid
         WHERE p.isleaf AND c.relpages > 0;
        IF total IS NULL OR NOT estimated THEN
            EXECUTE format('SELECT count(*) FROM %s', source) INTO total;
        END IF;
        -- A probe costs about 100 times what the full run costs per row of
        -- the table (measured, doc/dedup.md): probes up to 1% of new rows.
        probe := new_rows * 100 <= total;
        how := format('%s: %s new rows of %s',
                      CASE WHEN probe THEN 'index probes' ELSE 'simhash_clusters()' END,
                      new_rows, total);
    ELSE
        how := CASE WHEN since IS NULL THEN 'simhash_clusters(): a full run'
                    ELSE 'simhash_clusters(): no GIN or GiST index on the fingerprint' END;
    END IF;
    RAISE DEBUG 'simhash_clusters_update: %', how;

    IF probe THEN
        -- A GIN scan reads the index's whole pending list, where today's
        -- rows wait (fastupdate): thousands of probes would each read it.
        -- Merge it first, as VACUUM would, where the caller owns the index.
        PERFORM gin_clean_pending_list(x.ix::regclass)
        FROM unnest(fp_index, fp_am, fp_mine) x(ix, am, mine)
        WHERE x.am = 'gin' AND x.mine;
        -- Deleted rows leave the state; the clusters they left may split.
        -- Without the list of deleted ids, every row of the state is looked
        -- for in source; with it, those ids only.
        EXECUTE format(
            'WITH g AS (DELETE FROM %1$s s WHERE %4$s NOT EXISTS '
            '    (SELECT FROM %2$s d WHERE d.%3$I = s.id) RETURNING s.id, s.cluster_id) '
            'SELECT array_agg(g.id::int8), array_agg(g.cluster_id::int8), '
            '       array_agg(DISTINCT g.cluster_id::int8) FROM g',
            state, source, id_column,
            CASE WHEN deleted IS NOT NULL THEN 's.id = ANY ($1) AND' ELSE '' END)
            INTO part_id, part_old, dirty
            USING deleted;
        ch_id := ch_id || part_id;
        ch_old := ch_old || part_old;
        IF dirty IS NOT NULL THEN
            -- Edges leave a cluster only to its own members: its survivors'
            -- components are computed among themselves.
            EXECUTE format(
                'WITH m AS (SELECT s.id::int8 AS id, s.cluster_id::int8 AS cluster_id '
                '           FROM %1$s s WHERE s.cluster_id = ANY ($1)), '
                '     f AS (SELECT c.id, c.cluster_id FROM @extschema@.simhash_clusters($2, $3) c) '
                'SELECT array_agg(m.id), array_agg(m.cluster_id), array_agg(f.cluster_id) '
                'FROM m LEFT JOIN f ON f.id = m.id '
                'WHERE f.id IS NULL OR f.cluster_id <> m.cluster_id',
                state)
                INTO part_id, part_old, part_new
                USING dirty,
                      -- OFFSET 0: a lookup per member, not a scan of source
                      format('SELECT s.id, d.sh FROM %2$s s '
                             'CROSS JOIN LATERAL (SELECT x.%1$I AS sh FROM %3$s x '
                             '                    WHERE x.%4$I = s.id OFFSET 0) d '
                             'WHERE s.cluster_id = ANY (%5$L::int8[])',
                             fingerprint_column, state, source, id_column, dirty),
                      max_distance;
            PERFORM @extschema@.simhash_clusters_apply(state, part_id, part_new);
            ch_id := ch_id || part_id;
            ch_old := ch_old || part_old;
        END IF;
        -- New rows.  Rows of one fingerprint are joined to its first new
        -- row (rep).  A fingerprint an old row already has (its twin, one
        -- equality lookup) joins that row's cluster and nothing else: every
        -- old row within the radius of the twin is in the twin's cluster.
        -- Any other fingerprint probes the index once, for the rows of
        -- other fingerprints.  Ends of edges are rows, or their cluster
        -- when they have one: old clusters enter as one node each.  A probe
        -- that finds more than probe_cap rows (near a large group, which
        -- it would read whole) stops there, and the night takes the full
        -- run: a night costs at most probe_cap rows per new fingerprint
        -- more than the full run.
        EXECUTE format(
            'WITH nr AS (SELECT x.%1$I::int8 AS id, x.%2$I AS sh, '
            '                   min(x.%1$I::int8) OVER (PARTITION BY x.%2$I) AS rep '
            '            FROM %3$s x WHERE x.%1$I > %4$L::int8 AND x.%2$I IS NOT NULL), '
            '     n AS (SELECT nr.rep, nr.sh, t.id AS twin FROM nr '
            '           LEFT JOIN LATERAL (SELECT y.%1$I::int8 AS id FROM %3$s y '
            '                              WHERE y.%2$I OPERATOR(@extschema@.=) nr.sh '
            '                                AND y.%1$I <= %4$L::int8 LIMIT 1) t ON true '
            '           WHERE nr.id = nr.rep), '
            '     e AS (SELECT nr.id AS a, nr.rep AS b, 1::int8 AS rn FROM nr WHERE nr.id <> nr.rep '
            '           UNION ALL '
            '           SELECT n.rep, n.twin, 1 FROM n WHERE n.twin IS NOT NULL '
            '           UNION ALL '
            '           SELECT n.rep, o.id, o.rn FROM n '
            '           CROSS JOIN LATERAL (SELECT y.%1$I::int8 AS id, row_number() OVER () AS rn '
            '                               FROM %3$s y '
            '                               WHERE y.%2$I OPERATOR(@extschema@.<~>) n.sh <= %5$s '
            '                                 AND NOT y.%2$I OPERATOR(@extschema@.=) n.sh '
            '                               LIMIT %7$s + 1) o '
            '           WHERE n.twin IS NULL) '
            'SELECT array_agg(COALESCE(sa.cluster_id::int8, e.a)) FILTER (WHERE e.rn <= %7$s), '
            '       array_agg(COALESCE(sb.cluster_id::int8, e.b)) FILTER (WHERE e.rn <= %7$s), '
            '       COALESCE(max(e.rn) > %7$s, false) '
            'FROM e LEFT JOIN %6$s sa ON sa.id = e.a LEFT JOIN %6$s sb ON sb.id = e.b',
            id_column, fingerprint_column, source, since, max_distance, state, probe_cap)
            INTO edge_a, edge_b, saturated;
        IF saturated THEN
            RAISE DEBUG 'simhash_clusters_update: a probe found more than % rows: the full run', probe_cap;
            probe := false;
        ELSIF edge_a IS NOT NULL THEN
            -- A node is an old cluster (relabel its members) or a row in no
            -- cluster yet (insert it).
            EXECUTE
                'SELECT array_agg(c.id), array_agg(c.cluster_id) FROM @extschema@.dedup_clusters($1) c'
                INTO part_id, part_new
                USING format('SELECT * FROM unnest(%L::int8[], %L::int8[])', edge_a, edge_b);
            EXECUTE format(
                'WITH c AS (SELECT * FROM unnest($1, $2) c(node, cid)), '
                '     u AS (UPDATE %1$s s SET cluster_id = c.cid FROM c '
                '           WHERE s.cluster_id = c.node AND s.cluster_id <> c.cid '
                '           RETURNING s.id::int8 AS id, c.node AS old), '
                '     i AS (INSERT INTO %1$s (id, cluster_id) SELECT c.node, c.cid FROM c '
                '           WHERE NOT EXISTS (SELECT FROM %1$s s WHERE s.id = c.node) '
                '           RETURNING id::int8 AS id, NULL::int8 AS old) '
                'SELECT array_agg(x.id), array_agg(x.old) FROM (TABLE u UNION ALL TABLE i) x',
                state)
                INTO part_id, part_old
                USING part_id, part_new;
            ch_id := ch_id || part_id;
            ch_old := ch_old || part_old;
        END IF;
    END IF;

    IF NOT probe THEN
        -- The whole table, applied as a difference.
        EXECUTE format(
            'WITH f AS (SELECT c.id, c.cluster_id FROM @extschema@.simhash_clusters($1, $2, $3, $4) c) '
            'SELECT array_agg(COALESCE(s.id::int8, f.id)), array_agg(s.cluster_id::int8), array_agg(f.cluster_id) '
            'FROM %s s FULL JOIN f ON s.id = f.id '
            'WHERE s.id IS NULL OR f.id IS NULL OR s.cluster_id IS DISTINCT FROM f.cluster_id',
            state)
            INTO part_id, part_old, part_new
            USING source, id_column, fingerprint_column, max_distance;
        PERFORM @extschema@.simhash_clusters_apply(state, part_id, part_new);
        ch_id := ch_id || part_id;
        ch_old := ch_old || part_old;
    END IF;

    -- Each changed row once: its cluster before the call and now.
    RETURN QUERY EXECUTE format(
        'SELECT x.id, x.old, x.now FROM ('
        '  SELECT DISTINCT ON (c.id) c.id, c.old, s.cluster_id::int8 AS now '
        '  FROM unnest($1, $2) WITH ORDINALITY c(id, old, ord) '
        '  LEFT JOIN %s s ON s.id = c.id ORDER BY c.id, c.ord) x '
        'WHERE x.old IS DISTINCT FROM x.now ORDER BY x.id',
        state)
        USING ch_id, ch_old;
END
$$;

-- simhash_clusters_update's writer: each id takes its new cluster id, or
-- leaves state when that is NULL.
CREATE FUNCTION @extschema@.simhash_clusters_apply(state pg_catalog.regclass,
                                                   ids pg_catalog.int8[],
                                                   cluster_ids pg_catalog.int8[])
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ids IS NULL THEN
        RETURN;
    END IF;
    EXECUTE format('DELETE FROM %s s USING unnest($1, $2) d(id, cid) '
                   'WHERE s.id = d.id AND d.cid IS NULL', state)
        USING ids, cluster_ids;
    EXECUTE format('UPDATE %s s SET cluster_id = d.cid FROM unnest($1, $2) d(id, cid) '
                   'WHERE s.id = d.id AND s.cluster_id IS DISTINCT FROM d.cid', state)
        USING ids, cluster_ids;
    EXECUTE format('INSERT INTO %1$s (id, cluster_id) '
                   'SELECT d.id, d.cid FROM unnest($1, $2) d(id, cid) '
                   'WHERE d.cid IS NOT NULL AND NOT EXISTS (SELECT FROM %1$s s WHERE s.id = d.id)', state)
        USING ids, cluster_ids;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_clusters_update(pg_catalog.regclass, pg_catalog.regclass, pg_catalog.name,
                                                        pg_catalog.name, pg_catalog.int8, pg_catalog.int4,
                                                        pg_catalog.int8[])
    IS 'bring a table of simhash_clusters rows up to date after inserts (ids above since) and deletes; returns the rows whose cluster changed';
COMMENT ON FUNCTION @extschema@.simhash_clusters_apply(pg_catalog.regclass, pg_catalog.int8[], pg_catalog.int8[])
    IS 'internal to simhash_clusters_update: set, add or remove rows of a clusters state table';

-- ===== end section: incremental clusters =====

-- ===== section: hamming index access method (src/hamming/, doc/index-hamming.md) =====

CREATE FUNCTION @extschema@.hamming_handler(pg_catalog.internal)
RETURNS pg_catalog.index_am_handler
AS 'MODULE_PATHNAME', 'hamming_handler'
LANGUAGE C;

CREATE ACCESS METHOD hamming TYPE INDEX HANDLER @extschema@.hamming_handler;

CREATE OPERATOR CLASS @extschema@.simhash64_hamming_ops
DEFAULT FOR TYPE @extschema@.simhash64 USING hamming AS
    OPERATOR 1 @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_ball),
    OPERATOR 2 @extschema@.= (@extschema@.simhash64, @extschema@.simhash64),
    OPERATOR 3 @extschema@.<~> (@extschema@.simhash64, @extschema@.simhash64)
        FOR ORDER BY pg_catalog.integer_ops;

CREATE FUNCTION @extschema@.hamming_merge(index pg_catalog.regclass)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'hamming_merge'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION @extschema@.hamming_check(index pg_catalog.regclass,
                                          heapallindexed pg_catalog.bool DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'hamming_check'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION @extschema@.hamming_stats(index pg_catalog.regclass,
                                          OUT blocks pg_catalog.int4,
                                          OUT run_entries pg_catalog.int8,
                                          OUT pending_entries pg_catalog.int8,
                                          OUT sealed_entries pg_catalog.int8,
                                          OUT null_entries pg_catalog.int8,
                                          OUT merges pg_catalog.int8,
                                          OUT insert_merges pg_catalog.int8,
                                          OUT pages pg_catalog.int8)
AS 'MODULE_PATHNAME', 'hamming_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- ===== end section: hamming index access method =====

-- ===== section: near-duplicate exclusion constraint (src/type/hamming_ball.c, src/index/gist_hamming.c, src/hamming) =====

/*
 * EXCLUDE USING hamming (hamming_ball(sh, k) WITH &&): no two rows whose
 * fingerprints are within k bits (doc/constraint.md).  a && b holds when
 * each center lies within the other's ball -- the centers are at most
 * least(radius(a), radius(b)) bits apart -- so it is commutative and, with
 * one k on both sides, exactly "within k bits", wherever it is evaluated.
 * Both operator classes index a ball by its center and recheck the radius
 * on the row.
 */
CREATE FUNCTION @extschema@.hamming_ball_collides(@extschema@.hamming_ball, @extschema@.hamming_ball)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'hamming_ball_collides'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.&& (
    LEFTARG = @extschema@.hamming_ball,
    RIGHTARG = @extschema@.hamming_ball,
    FUNCTION = @extschema@.hamming_ball_collides,
    COMMUTATOR = OPERATOR(@extschema@.&&),
    RESTRICT = pg_catalog.contsel,
    JOIN = pg_catalog.contjoinsel
);

CREATE FUNCTION @extschema@.gist_hamming_ball_compress(pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'gist_hamming_ball_compress'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The simhash64 consistent function, which also knows strategy 3 (&&).
CREATE FUNCTION @extschema@.gist_hamming_ball_consistent(pg_catalog.internal, @extschema@.hamming_ball,
                                                         pg_catalog.int2, pg_catalog.oid, pg_catalog.internal)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'gist_simhash64_consistent'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR CLASS @extschema@.hamming_ball_gist_ops
    DEFAULT FOR TYPE @extschema@.hamming_ball USING gist AS
    OPERATOR 3 @extschema@.&& (@extschema@.hamming_ball, @extschema@.hamming_ball),
    FUNCTION 1 @extschema@.gist_hamming_ball_consistent(pg_catalog.internal, @extschema@.hamming_ball,
                                                        pg_catalog.int2, pg_catalog.oid, pg_catalog.internal),
    FUNCTION 2 @extschema@.gist_simhash64_union(pg_catalog.internal, pg_catalog.internal),
    FUNCTION 3 @extschema@.gist_hamming_ball_compress(pg_catalog.internal),
    FUNCTION 5 @extschema@.gist_simhash64_penalty(pg_catalog.internal, pg_catalog.internal,
                                                  pg_catalog.internal),
    FUNCTION 6 @extschema@.gist_simhash64_picksplit(pg_catalog.internal, pg_catalog.internal),
    FUNCTION 7 @extschema@.gist_simhash64_same(@extschema@.simhash64_gist_key,
                                               @extschema@.simhash64_gist_key, pg_catalog.internal),
    FUNCTION 11 @extschema@.gist_simhash64_sortsupport(pg_catalog.internal),
    STORAGE @extschema@.simhash64_gist_key;

CREATE OPERATOR CLASS @extschema@.hamming_ball_hamming_ops
    DEFAULT FOR TYPE @extschema@.hamming_ball USING hamming AS
    OPERATOR 4 @extschema@.&& (@extschema@.hamming_ball, @extschema@.hamming_ball);

-- ===== end section: near-duplicate exclusion constraint =====

-- ===== section: simhash at a Jaccard threshold (src/core/nd_simhash_radius.c, src/fingerprint/simhash_radius.c, doc/fingerprints.md) =====

-- The radius at which SimHash finds the pairs of a Jaccard similarity with
-- a chosen probability, by Charikar's model (nd_simhash_radius.h).
CREATE FUNCTION @extschema@.simhash_radius(threshold pg_catalog.float8,
                                           recall pg_catalog.float8 DEFAULT 0.99)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'nd_simhash_radius_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.simhash_recall(threshold pg_catalog.float8, radius pg_catalog.int4)
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'nd_simhash_recall_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- "doc is at least threshold similar to query_doc": candidates within the
-- radius (by default simhash_radius(threshold), recall 0.99) from an index
-- on sh, then the exact Jaccard of the texts.  A SQL function, so that the
-- planner inlines it and within() becomes an index condition; hence not
-- STRICT.  The shingle parameters must be those sh was made with.
CREATE FUNCTION @extschema@.simhash_similar_exact(sh @extschema@.simhash64, query @extschema@.simhash64,
                                                  doc pg_catalog.text, query_doc pg_catalog.text,
                                                  threshold pg_catalog.float8,
                                                  radius pg_catalog.int4 DEFAULT NULL,
                                                  shingle pg_catalog.int4 DEFAULT 3,
                                                  unit pg_catalog.text DEFAULT 'word',
                                                  seed pg_catalog.int8 DEFAULT 0)
RETURNS pg_catalog.bool
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT @extschema@.within(sh, query, COALESCE(radius, @extschema@.simhash_radius(threshold)))
       AND @extschema@.jaccard(doc, query_doc, shingle, unit, seed) OPERATOR(pg_catalog.>=) threshold
$$;

-- ===== end section: simhash at a Jaccard threshold =====

-- ===== section: comments (psql help for every member; sql/17_catalog lists any without) =====

COMMENT ON CAST (pg_catalog.int8 AS @extschema@.simhash64) IS 'a bigint as the 64 bits of a fingerprint (two''s complement, no change of bits)';
COMMENT ON CAST (@extschema@.simhash64 AS pg_catalog.int8) IS 'the 64 bits of a fingerprint as a bigint (two''s complement)';
COMMENT ON CAST (pg_catalog.bit AS @extschema@.simhash64) IS 'a bit(64) string as a fingerprint, first bit the most significant';
COMMENT ON CAST (pg_catalog.varbit AS @extschema@.simhash64) IS 'a 64-bit varbit string as a fingerprint, first bit the most significant';
COMMENT ON CAST (pg_catalog.bytea AS @extschema@.simhash64) IS '8 bytes (big-endian) as a fingerprint';
COMMENT ON CAST (@extschema@.simhash64 AS pg_catalog.bit) IS 'a fingerprint as bit(64), most significant bit first';
COMMENT ON CAST (@extschema@.simhash64 AS pg_catalog.varbit) IS 'a fingerprint as a 64-bit varbit, most significant bit first';
COMMENT ON CAST (@extschema@.simhash64 AS pg_catalog.bytea) IS 'a fingerprint as 8 bytes, big-endian';
COMMENT ON FUNCTION @extschema@.center(@extschema@.hamming_ball) IS 'the center of a Hamming ball';
COMMENT ON FUNCTION @extschema@.radius(@extschema@.hamming_ball) IS 'the radius of a Hamming ball';
COMMENT ON FUNCTION @extschema@.hamming_ball(@extschema@.simhash64, pg_catalog.int4) IS 'all fingerprints within radius bits of center (for <@ and index searches)';
COMMENT ON FUNCTION @extschema@.hamming_ball_contains(@extschema@.hamming_ball, @extschema@.simhash64) IS 'implementation of @> operator: the ball contains the fingerprint';
COMMENT ON FUNCTION @extschema@.simhash64_within_ball(@extschema@.simhash64, @extschema@.hamming_ball) IS 'implementation of <@ operator: the fingerprint lies in the ball';
COMMENT ON FUNCTION @extschema@.hamming_ball_in(pg_catalog.cstring) IS 'I/O: a Hamming ball from text';
COMMENT ON FUNCTION @extschema@.hamming_ball_out(@extschema@.hamming_ball) IS 'I/O: a Hamming ball as text';
COMMENT ON FUNCTION @extschema@.hamming_ball_recv(pg_catalog.internal) IS 'I/O: a Hamming ball from binary';
COMMENT ON FUNCTION @extschema@.hamming_ball_send(@extschema@.hamming_ball) IS 'I/O: a Hamming ball to binary';
COMMENT ON FUNCTION @extschema@.hamming_ball_restrict_sel(pg_catalog.internal, pg_catalog.oid, pg_catalog.internal, pg_catalog.int4) IS 'restriction selectivity of <@ from the column statistics';
COMMENT ON FUNCTION @extschema@.hamming_ball_join_sel(pg_catalog.internal, pg_catalog.oid, pg_catalog.internal, pg_catalog.int2, pg_catalog.internal) IS 'join selectivity of <@';
COMMENT ON FUNCTION @extschema@.hamming_support(pg_catalog.internal) IS 'planner support: turns <~> compared with a constant into an index condition';
COMMENT ON FUNCTION @extschema@.within_support(pg_catalog.internal) IS 'planner support: turns within() into an index condition';
COMMENT ON FUNCTION @extschema@.within(@extschema@.simhash64, @extschema@.simhash64, pg_catalog.int4) IS 'whether two fingerprints differ in at most radius bits (index-backed)';
COMMENT ON FUNCTION @extschema@.simhash64_hamming(@extschema@.simhash64, @extschema@.simhash64) IS 'implementation of <~> operator: Hamming distance, the number of differing bits';
COMMENT ON FUNCTION @extschema@.simhash64_in(pg_catalog.cstring) IS 'I/O: a fingerprint from 16 hex digits';
COMMENT ON FUNCTION @extschema@.simhash64_out(@extschema@.simhash64) IS 'I/O: a fingerprint as 16 hex digits';
COMMENT ON FUNCTION @extschema@.simhash64_recv(pg_catalog.internal) IS 'I/O: a fingerprint from binary';
COMMENT ON FUNCTION @extschema@.simhash64_send(@extschema@.simhash64) IS 'I/O: a fingerprint to binary';
COMMENT ON FUNCTION @extschema@.simhash64_eq(@extschema@.simhash64, @extschema@.simhash64) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.simhash64_ne(@extschema@.simhash64, @extschema@.simhash64) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.simhash64_lt(@extschema@.simhash64, @extschema@.simhash64) IS 'implementation of < operator (unsigned order of the bits)';
COMMENT ON FUNCTION @extschema@.simhash64_le(@extschema@.simhash64, @extschema@.simhash64) IS 'implementation of <= operator (unsigned order of the bits)';
COMMENT ON FUNCTION @extschema@.simhash64_gt(@extschema@.simhash64, @extschema@.simhash64) IS 'implementation of > operator (unsigned order of the bits)';
COMMENT ON FUNCTION @extschema@.simhash64_ge(@extschema@.simhash64, @extschema@.simhash64) IS 'implementation of >= operator (unsigned order of the bits)';
COMMENT ON FUNCTION @extschema@.simhash64_cmp(@extschema@.simhash64, @extschema@.simhash64) IS 'btree comparison of fingerprints (unsigned order of the bits)';
COMMENT ON FUNCTION @extschema@.simhash64_sortsupport(pg_catalog.internal) IS 'btree sort support for fingerprints';
COMMENT ON FUNCTION @extschema@.simhash64_hash(@extschema@.simhash64) IS 'hash of a fingerprint';
COMMENT ON FUNCTION @extschema@.simhash64_hash_extended(@extschema@.simhash64, pg_catalog.int8) IS 'seeded 64-bit hash of a fingerprint';
COMMENT ON FUNCTION @extschema@.simhash64_from_bit(pg_catalog.varbit) IS 'a 64-bit bit string as a fingerprint (cast)';
COMMENT ON FUNCTION @extschema@.simhash64_from_bytea(pg_catalog.bytea) IS '8 bytes as a fingerprint (cast)';
COMMENT ON FUNCTION @extschema@.simhash64_to_bit(@extschema@.simhash64, pg_catalog.int4) IS 'a fingerprint as bit(64) (cast)';
COMMENT ON FUNCTION @extschema@.simhash64_to_varbit(@extschema@.simhash64, pg_catalog.int4) IS 'a fingerprint as a 64-bit varbit (cast)';
COMMENT ON FUNCTION @extschema@.simhash64_to_bytea(@extschema@.simhash64) IS 'a fingerprint as 8 bytes (cast)';
COMMENT ON FUNCTION @extschema@.simhash64_gist_key_in(pg_catalog.cstring) IS 'I/O: a GiST key from text';
COMMENT ON FUNCTION @extschema@.simhash64_gist_key_out(@extschema@.simhash64_gist_key) IS 'I/O: a GiST key as text';
COMMENT ON FUNCTION @extschema@.gist_simhash64_consistent(pg_catalog.internal, @extschema@.simhash64, pg_catalog.int2, pg_catalog.oid, pg_catalog.internal) IS 'GiST support: may a subtree hold a match';
COMMENT ON FUNCTION @extschema@.gist_simhash64_union(pg_catalog.internal, pg_catalog.internal) IS 'GiST support: the key covering a set of keys';
COMMENT ON FUNCTION @extschema@.gist_simhash64_compress(pg_catalog.internal) IS 'GiST support: the leaf key of a fingerprint';
COMMENT ON FUNCTION @extschema@.gist_simhash64_penalty(pg_catalog.internal, pg_catalog.internal, pg_catalog.internal) IS 'GiST support: cost of adding a key to a subtree';
COMMENT ON FUNCTION @extschema@.gist_simhash64_picksplit(pg_catalog.internal, pg_catalog.internal) IS 'GiST support: split of a full page';
COMMENT ON FUNCTION @extschema@.gist_simhash64_same(@extschema@.simhash64_gist_key, @extschema@.simhash64_gist_key, pg_catalog.internal) IS 'GiST support: equality of keys';
COMMENT ON FUNCTION @extschema@.gist_simhash64_distance(pg_catalog.internal, @extschema@.simhash64, pg_catalog.int2, pg_catalog.oid, pg_catalog.internal) IS 'GiST support: least Hamming distance in a subtree (KNN)';
COMMENT ON FUNCTION @extschema@.gist_simhash64_fetch(pg_catalog.internal) IS 'GiST support: the fingerprint of a leaf key (index-only scans)';
COMMENT ON FUNCTION @extschema@.gist_simhash64_sortsupport(pg_catalog.internal) IS 'GiST support: sort order for sorted builds';
COMMENT ON FUNCTION @extschema@.simhash64_gin_extract_value(@extschema@.simhash64, pg_catalog.internal, pg_catalog.internal) IS 'GIN support: the band keys of an indexed fingerprint';
COMMENT ON FUNCTION @extschema@.simhash64_gin_extract_query(@extschema@.simhash64, pg_catalog.internal, pg_catalog.int2, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal) IS 'GIN support: the band keys a radius or equality search looks up';
COMMENT ON FUNCTION @extschema@.simhash64_gin_consistent(pg_catalog.internal, pg_catalog.int2, @extschema@.simhash64, pg_catalog.int4, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal) IS 'GIN support: whether a row may match, from the keys it has';
COMMENT ON FUNCTION @extschema@.simhash64_gin_triconsistent(pg_catalog.internal, pg_catalog.int2, @extschema@.simhash64, pg_catalog.int4, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal) IS 'GIN support: ternary form of the consistency check';
COMMENT ON FUNCTION @extschema@.simhash64_gin_compare_partial(@extschema@.simhash64, @extschema@.simhash64, pg_catalog.int2, pg_catalog.internal) IS 'GIN support: partial-match comparison of band keys';
COMMENT ON FUNCTION @extschema@.simhash64_gin_options(pg_catalog.internal) IS 'GIN support: the blocks option of simhash64_gin_ops';
COMMENT ON FUNCTION @extschema@.text_tokens(pg_catalog.text, pg_catalog.text) IS 'the tokens (lower-cased words, or characters) of a text, in order';
COMMENT ON FUNCTION @extschema@.text_shingles(pg_catalog.text, pg_catalog.int4, pg_catalog.text) IS 'the shingles (runs of consecutive tokens) of a text, in order';
COMMENT ON FUNCTION @extschema@.shingle_hashes(pg_catalog.text, pg_catalog.int4, pg_catalog.text, pg_catalog.int8) IS 'the xxHash64 hashes of the distinct shingles of a text';
COMMENT ON FUNCTION @extschema@.simhash(pg_catalog.text, pg_catalog.int4, pg_catalog.text, pg_catalog.int8) IS 'SimHash fingerprint of a text from its hashed shingles';
COMMENT ON FUNCTION @extschema@.simhash(pg_catalog.tsvector, pg_catalog.int4, pg_catalog.int8) IS 'SimHash fingerprint of a tsvector: its lexemes in document order, shingled as simhash(text) does';
COMMENT ON FUNCTION @extschema@.simhash(pg_catalog.int8[]) IS 'SimHash fingerprint of already hashed features';
COMMENT ON FUNCTION @extschema@.simhash(pg_catalog.int8[], pg_catalog.float4[]) IS 'weighted SimHash fingerprint of hashed features (exact, order-independent)';
COMMENT ON FUNCTION @extschema@.simhash(pg_catalog.text[], pg_catalog.int8) IS 'SimHash fingerprint of text features';
COMMENT ON FUNCTION @extschema@.simhash(pg_catalog.text[], pg_catalog.float4[], pg_catalog.int8) IS 'weighted SimHash fingerprint of text features (exact, order-independent)';
COMMENT ON FUNCTION @extschema@.simhash_agg_trans(pg_catalog.internal, pg_catalog.text) IS 'simhash_agg transition: one feature';
COMMENT ON FUNCTION @extschema@.simhash_agg_trans(pg_catalog.internal, pg_catalog.text, pg_catalog.float4) IS 'simhash_agg transition: one weighted feature';
COMMENT ON FUNCTION @extschema@.simhash_agg_final(pg_catalog.internal) IS 'simhash_agg final: the fingerprint of the votes';
COMMENT ON FUNCTION @extschema@.simhash_agg_combine(pg_catalog.internal, pg_catalog.internal) IS 'simhash_agg combine: two partial states (parallel aggregation)';
COMMENT ON FUNCTION @extschema@.simhash_agg_serialize(pg_catalog.internal) IS 'simhash_agg: a partial state as bytea';
COMMENT ON FUNCTION @extschema@.simhash_agg_deserialize(pg_catalog.bytea, pg_catalog.internal) IS 'simhash_agg: a partial state from bytea';
COMMENT ON FUNCTION @extschema@.minhash(pg_catalog.text, pg_catalog.int4, pg_catalog.int4, pg_catalog.text, pg_catalog.int8) IS 'MinHash signature of a text''s shingle set (num_perm values)';
COMMENT ON FUNCTION @extschema@.minhash(pg_catalog.int8[], pg_catalog.int4, pg_catalog.int8) IS 'MinHash signature of a set of hashed features';
COMMENT ON FUNCTION @extschema@.minhash(pg_catalog.text[], pg_catalog.int4, pg_catalog.int8) IS 'MinHash signature of a set of text features';
COMMENT ON FUNCTION @extschema@.minhash_jaccard(pg_catalog.int4[], pg_catalog.int4[]) IS 'Jaccard similarity estimated from two MinHash signatures';
COMMENT ON FUNCTION @extschema@.minhash_bands(pg_catalog.int4[], pg_catalog.int4, pg_catalog.int4) IS 'LSH band keys of a MinHash signature (for a GIN index)';
COMMENT ON FUNCTION @extschema@.minhash_bbit(pg_catalog.int4[], pg_catalog.int4) IS 'b-bit MinHash: the low bits of each signature value, packed';
COMMENT ON FUNCTION @extschema@.minhash_bbit_jaccard(pg_catalog.bytea, pg_catalog.bytea) IS 'Jaccard similarity estimated from two b-bit MinHash signatures';
COMMENT ON FUNCTION @extschema@.minhash_lsh_params(pg_catalog.float8, pg_catalog.int4, pg_catalog.float8, pg_catalog.float8) IS 'LSH bands and rows that minimise weighted false positives and negatives at a threshold';
COMMENT ON FUNCTION @extschema@.minhash_similar(pg_catalog.int4[], pg_catalog.int4[], pg_catalog.float8, pg_catalog.int4, pg_catalog.int4) IS 'shares an LSH band and estimates at least threshold (index-backed)';
COMMENT ON FUNCTION @extschema@.minhash_similar_exact(pg_catalog.int4[], pg_catalog.int4[], pg_catalog.text, pg_catalog.text, pg_catalog.float8, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4, pg_catalog.text, pg_catalog.int8) IS 'minhash_similar verified by the exact Jaccard similarity of the texts';
COMMENT ON FUNCTION @extschema@.jaccard(pg_catalog.text, pg_catalog.text, pg_catalog.int4, pg_catalog.text, pg_catalog.int8) IS 'exact Jaccard similarity of two texts'' shingle sets';
COMMENT ON FUNCTION @extschema@.jaccard(pg_catalog.int8[], pg_catalog.int8[]) IS 'exact Jaccard similarity of two sets of hashes';
COMMENT ON FUNCTION @extschema@.jaccard(pg_catalog.text[], pg_catalog.text[]) IS 'exact Jaccard similarity of two sets of texts';
COMMENT ON FUNCTION @extschema@.simhash_band_keys(@extschema@.simhash64, pg_catalog.int4) IS 'band keys of a fingerprint: rows within max_distance share one';
COMMENT ON FUNCTION @extschema@.simhash_band_keys(@extschema@.simhash64, pg_catalog.int4, pg_catalog.int4) IS 'band keys of a fingerprint for a block count';
COMMENT ON FUNCTION @extschema@.simhash_band_first(@extschema@.simhash64, @extschema@.simhash64, pg_catalog.int4, pg_catalog.int4) IS 'whether key key_index is the first band key two fingerprints share';
COMMENT ON FUNCTION @extschema@.simhash_band_first(@extschema@.simhash64, @extschema@.simhash64, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4) IS 'whether key key_index is the first band key two fingerprints share, for a block count';
COMMENT ON FUNCTION @extschema@.simhash_pairs(pg_catalog.regclass, pg_catalog.name, pg_catalog.name, pg_catalog.int4, pg_catalog.int4) IS 'every pair of rows whose fingerprints are within max_distance bits, exactly';
COMMENT ON FUNCTION @extschema@.simhash_pairs(pg_catalog.text, pg_catalog.int4, pg_catalog.int4) IS 'every pair of the (id, fingerprint) rows of a query within max_distance bits';
COMMENT ON FUNCTION @extschema@.simhash_pairs(pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.int4, pg_catalog.int4) IS 'every pair of rows within max_distance bits (table named by text)';
COMMENT ON FUNCTION @extschema@.simhash_pairs_since(pg_catalog.regclass, pg_catalog.name, pg_catalog.name, pg_catalog.int8, pg_catalog.int4) IS 'pairs within max_distance that involve a row with id above since';
COMMENT ON FUNCTION @extschema@.dedup_clusters(pg_catalog.text) IS 'connected components of the pairs a query returns: (id, smallest id of its cluster)';
COMMENT ON FUNCTION @extschema@.dedup_representatives(pg_catalog.regclass, pg_catalog.name, pg_catalog.text, pg_catalog.text) IS 'the rows of each cluster with the row keep_order keeps';
COMMENT ON FUNCTION @extschema@.dedup_keep_one(pg_catalog.regclass, pg_catalog.name, pg_catalog.text, pg_catalog.text, pg_catalog.name) IS 'delete (or flag) every row of each cluster but the one keep_order keeps';
COMMENT ON FUNCTION @extschema@.dedup_check_column(pg_catalog.regclass, pg_catalog.name, pg_catalog.text, pg_catalog.regtype[]) IS 'internal to the dedup helpers: a column exists and has an allowed type';
COMMENT ON AGGREGATE @extschema@.simhash_agg(pg_catalog.text) IS 'SimHash fingerprint of the features of a group of rows';
COMMENT ON AGGREGATE @extschema@.simhash_agg(pg_catalog.text, pg_catalog.float4) IS 'weighted SimHash fingerprint of the features of a group of rows';
COMMENT ON OPERATOR @extschema@.=(@extschema@.simhash64, @extschema@.simhash64) IS 'equal';
COMMENT ON OPERATOR @extschema@.<>(@extschema@.simhash64, @extschema@.simhash64) IS 'not equal';
COMMENT ON OPERATOR @extschema@.<(@extschema@.simhash64, @extschema@.simhash64) IS 'less than (unsigned order of the bits)';
COMMENT ON OPERATOR @extschema@.<=(@extschema@.simhash64, @extschema@.simhash64) IS 'less than or equal (unsigned order of the bits)';
COMMENT ON OPERATOR @extschema@.>(@extschema@.simhash64, @extschema@.simhash64) IS 'greater than (unsigned order of the bits)';
COMMENT ON OPERATOR @extschema@.>=(@extschema@.simhash64, @extschema@.simhash64) IS 'greater than or equal (unsigned order of the bits)';
COMMENT ON OPERATOR @extschema@.<@(@extschema@.simhash64, @extschema@.hamming_ball) IS 'fingerprint lies in the Hamming ball';
COMMENT ON OPERATOR @extschema@.@>(@extschema@.hamming_ball, @extschema@.simhash64) IS 'Hamming ball contains the fingerprint';
COMMENT ON OPERATOR CLASS @extschema@.simhash64_ops USING btree IS 'default btree ordering of fingerprints (unsigned)';
COMMENT ON OPERATOR CLASS @extschema@.simhash64_ops USING hash IS 'default hashing of fingerprints';
COMMENT ON OPERATOR CLASS @extschema@.simhash64_gin_ops USING gin IS 'GIN band keys for radius (<@, <~> <= k) and equality searches';
COMMENT ON OPERATOR CLASS @extschema@.simhash64_gist_ops USING gist IS 'GiST for radius, equality and KNN (ORDER BY <~>) searches';
COMMENT ON OPERATOR FAMILY @extschema@.simhash64_ops USING btree IS 'btree operators of simhash64';
COMMENT ON OPERATOR FAMILY @extschema@.simhash64_ops USING hash IS 'hash operators of simhash64';
COMMENT ON OPERATOR FAMILY @extschema@.simhash64_gin_ops USING gin IS 'GIN operators of simhash64';
COMMENT ON OPERATOR FAMILY @extschema@.simhash64_gist_ops USING gist IS 'GiST operators of simhash64';

COMMENT ON FUNCTION @extschema@.hamming_handler(pg_catalog.internal) IS 'index access method handler of hamming';
COMMENT ON ACCESS METHOD hamming IS 'exact Hamming radius and nearest-neighbour index for simhash64 (multi-index hashing)';
COMMENT ON OPERATOR CLASS @extschema@.simhash64_hamming_ops USING hamming IS 'hamming index for radius (<@, <~> <= k), equality and KNN (ORDER BY <~>) searches';
COMMENT ON OPERATOR FAMILY @extschema@.simhash64_hamming_ops USING hamming IS 'hamming operators of simhash64';
COMMENT ON FUNCTION @extschema@.hamming_merge(pg_catalog.regclass) IS 'merge the pending entries of a hamming index into its sorted run now';
COMMENT ON FUNCTION @extschema@.hamming_ball_collides(@extschema@.hamming_ball, @extschema@.hamming_ball) IS 'implementation of && for hamming_ball: the centers are within the smaller radius';
COMMENT ON OPERATOR @extschema@.&& (@extschema@.hamming_ball, @extschema@.hamming_ball) IS 'each center lies within the other''s ball (centers at most the smaller radius apart): the near-duplicate exclusion constraint''s operator';
COMMENT ON FUNCTION @extschema@.gist_hamming_ball_compress(pg_catalog.internal) IS 'GiST support: a hamming_ball as the key of its center';
COMMENT ON FUNCTION @extschema@.gist_hamming_ball_consistent(pg_catalog.internal, @extschema@.hamming_ball, pg_catalog.int2, pg_catalog.oid, pg_catalog.internal) IS 'GiST support: consistent function of hamming_ball_gist_ops';
COMMENT ON OPERATOR CLASS @extschema@.hamming_ball_gist_ops USING gist IS 'GiST index of hamming_ball values for && (the near-duplicate exclusion constraint)';
COMMENT ON OPERATOR FAMILY @extschema@.hamming_ball_gist_ops USING gist IS 'GiST operators of hamming_ball';
COMMENT ON OPERATOR CLASS @extschema@.hamming_ball_hamming_ops USING hamming IS 'hamming index of hamming_ball values for && (the near-duplicate exclusion constraint)';
COMMENT ON OPERATOR FAMILY @extschema@.hamming_ball_hamming_ops USING hamming IS 'hamming operators of hamming_ball';
COMMENT ON FUNCTION @extschema@.hamming_check(pg_catalog.regclass, pg_catalog.bool) IS 'verify a hamming index''s structure and, with heapallindexed, that it has an entry for every row of its table; raises an error at the first problem';
COMMENT ON FUNCTION @extschema@.hamming_stats(pg_catalog.regclass) IS 'a hamming index''s run and lists as its metapage gives them: tables, entries of the run, of the pending list, of the list being merged, NULL entries, merges since the build and those of them an inserting session did itself, pages';

COMMENT ON FUNCTION @extschema@.simhash_radius(pg_catalog.float8, pg_catalog.float8) IS 'smallest Hamming radius within which a pair of this Jaccard similarity falls with this probability (SimHash model)';
COMMENT ON FUNCTION @extschema@.simhash_recall(pg_catalog.float8, pg_catalog.int4) IS 'probability that a pair of this Jaccard similarity falls within this Hamming radius (SimHash model)';
COMMENT ON FUNCTION @extschema@.simhash_similar_exact(@extschema@.simhash64, @extschema@.simhash64, pg_catalog.text, pg_catalog.text, pg_catalog.float8, pg_catalog.int4, pg_catalog.int4, pg_catalog.text, pg_catalog.int8) IS 'fingerprints within the radius (index-backed) and exact Jaccard similarity of the texts at least threshold';

-- ===== end section: comments =====
