/* neardup 0.3.1 -> 0.4 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION neardup UPDATE TO '0.4'" to load this file. \quit

--
-- 0.4 runs on PostgreSQL 15 to 18 from one source, and makes the nightly
-- jobs cost what changed (doc/upgrading.md lists what is new).  The
-- scripts of 0.1 to 0.3.1 are released and never edited; a fresh CREATE
-- EXTENSION runs 0.1's and then every update.
--
-- Indexes built by 0.3 or 0.3.1 need no REINDEX.
--
-- The same conventions as the install script: every object schema-qualified
-- with @extschema@, every built-in type and operator with pg_catalog.
--

-- ===== section: nightly jobs that cost what changed =====

/*
 * simhash_clusters_update: a night reads the new rows and the state, not
 * the table.  The table's size is the planner's estimate (0.3 counted the
 * whole table when the statistics were missing or its partitions unsized);
 * the new rows are counted up to the 1% bound only; deleted rows are found
 * by one id lookup per state row where an index of source leads with the
 * id column (0.3 joined the state with every row of source).  The rest of
 * the body is 0.3's.
 */
CREATE OR REPLACE FUNCTION @extschema@.simhash_clusters_update(state pg_catalog.regclass,
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
    state_rows float8;
    plan json;
    id_indexed bool;
    probe bool := false;
    how text;
    -- the indexes of source that serve radius search on the fingerprint
    -- (simhash_radius_indexes): what probes use
    fp_index oid[];
    fp_am name[];
    fp_mine bool[];
BEGIN
    IF state IS NULL OR source IS NULL OR id_column IS NULL OR fingerprint_column IS NULL
       OR max_distance IS NULL THEN
        RAISE EXCEPTION 'state, source, id_column, fingerprint_column and max_distance must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF max_distance < 0 THEN
        RAISE EXCEPTION 'max_distance must be between 0 and 15'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF max_distance > 15 THEN
        -- as simhash_pairs and simhash_clusters say it (src/dedup/pairs_args.h)
        RAISE EXCEPTION 'max_distance must be between 0 and 15'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Above 15 bits, unrelated 64-bit fingerprints fall within the radius by chance (1 pair in 8,800 at 17 bits), and an exact search costs as much as comparing every pair.',
                  HINT = 'For a Jaccard threshold such as 0.8, cluster MinHash signatures with minhash_clusters(query, 0.8, recall => 0.95), or check candidates with simhash_similar_exact().';
    END IF;
    PERFORM @extschema@.dedup_check_column(source, id_column, 'id', ints);
    PERFORM @extschema@.dedup_check_column(source, fingerprint_column, 'fingerprint',
        ARRAY['@extschema@.simhash64']::regtype[]);
    PERFORM @extschema@.dedup_check_column(state, 'id', 'id', ints);
    PERFORM @extschema@.dedup_check_column(state, 'cluster_id', 'cluster id', ints);
    EXECUTE format('LOCK TABLE %s IN SHARE MODE', source);
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', state);

    SELECT array_agg(x.ix::oid), array_agg(am.amname), array_agg(pg_has_role(ic.relowner, 'USAGE'))
      INTO fp_index, fp_am, fp_mine
      FROM @extschema@.simhash_radius_indexes(source, fingerprint_column) x(ix)
      JOIN pg_class ic ON ic.oid = x.ix
      JOIN pg_am am ON am.oid = ic.relam;
    IF since IS NOT NULL AND fp_index IS NOT NULL THEN
        -- The table's rows as the planner estimates them (no count: a
        -- night must not read the whole table to learn its size).
        EXECUTE format('EXPLAIN (FORMAT JSON) SELECT FROM %s', source) INTO plan;
        total := GREATEST((plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8, 1);
        -- A probe costs about 100 times what the full run costs per row of
        -- the table (measured, doc/dedup.md): probes up to 1% of new rows.
        -- The new rows are counted up to that bound only: with an index on
        -- the id column, the count reads at most that many entries.
        EXECUTE format('SELECT count(*) FROM (SELECT FROM %s WHERE %I > %L::int8 LIMIT $1) n',
                       source, id_column, since)
            INTO new_rows
            USING floor(total / 100)::int8 + 1;
        probe := new_rows * 100 <= total;
        how := CASE WHEN probe THEN format('index probes: %s new rows of about %s', new_rows, round(total))
                    ELSE format('simhash_clusters(): more than %s new rows of about %s',
                                floor(total / 100), round(total)) END;
        IF NOT probe THEN
            RAISE NOTICE 'simhash_clusters_update: a full run: more than % new rows of about %, past the 1%% that index probes pay off for',
                floor(total / 100), round(total);
        END IF;
    ELSIF since IS NULL THEN
        how := 'simhash_clusters(): a full run';
    ELSE
        how := 'simhash_clusters(): no index serves radius search on the fingerprint';
        RAISE NOTICE 'simhash_clusters_update: a full run: no index of % serves radius search on column %',
                source, quote_ident(fingerprint_column)
            USING HINT = format('Index probes need a hamming, GIN or GiST index on the column (CREATE INDEX ON %s USING hamming (%I)) or the near-duplicate constraint.',
                                source, fingerprint_column);
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
        -- for in source; with it, those ids only.  Where an index of source
        -- leads with the id column and the state is a small part of the
        -- table, each state row is one lookup (OFFSET 0 keeps the lookup a
        -- per-row subplan: the planner would rather read all of source for
        -- a hash anti-join, which costs a night as much as the table).
        SELECT EXISTS (
                 SELECT FROM pg_index i
                   JOIN pg_class ic ON ic.oid = i.indexrelid
                   JOIN pg_am am ON am.oid = ic.relam
                   JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                  WHERE i.indrelid = source AND a.attname = id_column
                    AND i.indisvalid AND i.indpred IS NULL
                    AND am.amname IN ('btree', 'hash'))
          INTO id_indexed;
        IF deleted IS NULL AND id_indexed THEN
            EXECUTE format('EXPLAIN (FORMAT JSON) SELECT FROM %s', state) INTO plan;
            state_rows := (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
            id_indexed := state_rows * 4 <= total;
        END IF;
        EXECUTE format(
            'WITH g AS (DELETE FROM %1$s s WHERE %4$s NOT EXISTS '
            '    (SELECT FROM %2$s d WHERE d.%3$I = s.id %5$s) RETURNING s.id, s.cluster_id) '
            'SELECT array_agg(g.id::int8), array_agg(g.cluster_id::int8), '
            '       array_agg(DISTINCT g.cluster_id::int8) FROM g',
            state, source, id_column,
            CASE WHEN deleted IS NOT NULL THEN 's.id = ANY ($1) AND' ELSE '' END,
            CASE WHEN id_indexed THEN 'OFFSET 0' ELSE '' END)
            INTO part_id, part_old, dirty
            USING deleted;
        RAISE DEBUG 'simhash_clusters_update: deleted rows %',
            CASE WHEN deleted IS NOT NULL THEN 'from the list given'
                 WHEN id_indexed THEN 'by an id lookup per state row'
                 ELSE 'by a join of the state with the table' END;
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
            RAISE NOTICE 'simhash_clusters_update: a full run: a probe found more than % rows (a new row near a large group)', probe_cap;
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

-- ===== end section: nightly jobs that cost what changed =====

-- ===== section: layout errors with a short context =====

/*
 * A layout search that fails on a shard (down, refusing, timing out) kept
 * the whole generated query in the error's CONTEXT: 1.5 to 3 kB, one
 * subquery per partition, burying the message.  The searches now catch
 * an error of a shard (postgres_fdw's: a remote command in its context, or
 * a server in its message) and raise it again with the same SQLSTATE,
 * message and hint, and a DETAIL that names the layout, the server and the
 * partition when the error says which; the CONTEXT is then a few lines.
 * Other errors are raised as they were.  The searches'
 * bodies are 0.3.1's, renamed; the names users call wrap them.
 */
CREATE FUNCTION @extschema@.simhash_layout_error(layout pg_catalog.regclass, state pg_catalog.text,
                                                 message pg_catalog.text, detail pg_catalog.text,
                                                 hint pg_catalog.text, context pg_catalog.text)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    server text := substring(message FROM 'server "([^"]+)"');
    remote text := substring(context FROM 'remote SQL command: .*? FROM ([A-Za-z0-9_."]+)');
    part text;
    part_server text;
    place text;
BEGIN
    IF detail LIKE '%Layout %: %' THEN
        -- raised again already, by a search that this search called
        place := NULL;
    ELSE
        -- the partition: the foreign table of the layout whose remote name
        -- the remote command names (a connection error names the server only)
        SELECT c.oid::regclass::text, s.srvname::text INTO part, part_server
          FROM pg_foreign_table f
          JOIN pg_class c ON c.oid = f.ftrelid
          JOIN pg_foreign_server s ON s.oid = f.ftserver
         WHERE c.relname LIKE replace(replace((SELECT relname FROM pg_class WHERE oid = layout), '_', '\_'), '%', '\%') || '\_b%'
           AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = layout)
           AND replace(remote, '"', '') IN (
                    coalesce((SELECT option_value FROM pg_options_to_table(f.ftoptions) WHERE option_name = 'schema_name'),
                             (SELECT nspname FROM pg_namespace WHERE oid = c.relnamespace))
                    || '.' ||
                    coalesce((SELECT option_value FROM pg_options_to_table(f.ftoptions) WHERE option_name = 'table_name'),
                             c.relname),
                    coalesce((SELECT option_value FROM pg_options_to_table(f.ftoptions) WHERE option_name = 'table_name'),
                             c.relname))
         ORDER BY c.relname
         LIMIT 1;
        server := coalesce(part_server, server);
        place := format('Layout %s: %s.', layout,
                    concat_ws(', ', CASE WHEN server IS NOT NULL THEN format('server %s', server) END,
                                    CASE WHEN part IS NOT NULL THEN format('partition %s', part) END,
                                    CASE WHEN server IS NULL AND part IS NULL THEN 'on the coordinator or a shard' END));
    END IF;
    detail := concat_ws(E'\n', nullif(detail, ''), place);
    IF coalesce(hint, '') = '' THEN
        RAISE EXCEPTION USING ERRCODE = state, MESSAGE = message, DETAIL = detail;
    END IF;
    RAISE EXCEPTION USING ERRCODE = state, MESSAGE = message, DETAIL = detail, HINT = hint;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_error(pg_catalog.regclass, pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.text)
    IS 'raises again an error of a layout search with its SQLSTATE, message and hint, a DETAIL naming the layout, server and partition, and a short context';

ALTER FUNCTION @extschema@.simhash_layout_within(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4)
    RENAME TO simhash_layout_within_rows;
COMMENT ON FUNCTION @extschema@.simhash_layout_within_rows(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4)
    IS 'the search simhash_layout_within runs, without its error handling';
ALTER FUNCTION @extschema@.simhash_layout_nearest(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4)
    RENAME TO simhash_layout_nearest_rows;
COMMENT ON FUNCTION @extschema@.simhash_layout_nearest_rows(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4)
    IS 'the search simhash_layout_nearest runs, without its error handling';

CREATE FUNCTION @extschema@.simhash_layout_within(layout pg_catalog.regclass,
                                                  fingerprint @extschema@.simhash64,
                                                  max_distance pg_catalog.int4)
RETURNS TABLE(id pg_catalog.int8, sh @extschema@.simhash64, distance pg_catalog.int4)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    st pg_catalog.text;
    msg pg_catalog.text;
    det pg_catalog.text;
    hnt pg_catalog.text;
    ctx pg_catalog.text;
BEGIN
    RETURN QUERY SELECT * FROM @extschema@.simhash_layout_within_rows(layout, fingerprint, max_distance);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                            hnt = PG_EXCEPTION_HINT, ctx = PG_EXCEPTION_CONTEXT;
    -- errors of the search's own (arguments, privileges) as they were
    IF ctx NOT LIKE '%remote SQL command:%' AND msg NOT LIKE '%server "%' THEN
        RAISE;
    END IF;
    PERFORM @extschema@.simhash_layout_error(layout, st, msg, det, hnt, ctx);
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_within(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4)
    IS 'rows of a block-sharded layout within max_distance bits of a fingerprint, each once: below the layout''s blocks, one partition in each of max_distance + 1 copies';

CREATE FUNCTION @extschema@.simhash_layout_nearest(layout pg_catalog.regclass,
                                                   fingerprint @extschema@.simhash64,
                                                   n pg_catalog.int4)
RETURNS TABLE(id pg_catalog.int8, sh @extschema@.simhash64, distance pg_catalog.int4)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    st pg_catalog.text;
    msg pg_catalog.text;
    det pg_catalog.text;
    hnt pg_catalog.text;
    ctx pg_catalog.text;
BEGIN
    RETURN QUERY SELECT * FROM @extschema@.simhash_layout_nearest_rows(layout, fingerprint, n);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                            hnt = PG_EXCEPTION_HINT, ctx = PG_EXCEPTION_CONTEXT;
    -- errors of the search's own (arguments, privileges) as they were
    IF ctx NOT LIKE '%remote SQL command:%' AND msg NOT LIKE '%server "%' THEN
        RAISE;
    END IF;
    PERFORM @extschema@.simhash_layout_error(layout, st, msg, det, hnt, ctx);
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_nearest(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4)
    IS 'the n nearest rows of a block-sharded layout to a fingerprint, exactly (ties by id): a radius search when blocks - 1 bits hold n rows, else two rounds over every partition of one copy';

-- ===== end section: layout errors with a short context =====

-- ===== section: hamming_stats counts flushes, compactions and unused pages =====

/*
 * An index under churn is watched by its unused pages: pages of the file
 * that hold no run or list (recycled, or retired by a merge and waiting to
 * be).  VACUUM rewrites runs its removals left sparse, moves the run at the
 * end of the file into recycled pages, and truncates a free end.  `merges`
 * stays, as an alias of `flushes` (a pending list turned into a run);
 * `compactions` counts runs merged into one.  New OUT columns need the
 * function dropped and made again; its C symbol serves both shapes.
 */
DROP FUNCTION @extschema@.hamming_stats(pg_catalog.regclass);
CREATE FUNCTION @extschema@.hamming_stats(index pg_catalog.regclass,
                                          OUT blocks pg_catalog.int4,
                                          OUT run_entries pg_catalog.int8,
                                          OUT pending_entries pg_catalog.int8,
                                          OUT sealed_entries pg_catalog.int8,
                                          OUT null_entries pg_catalog.int8,
                                          OUT merges pg_catalog.int8,
                                          OUT insert_merges pg_catalog.int8,
                                          OUT pages pg_catalog.int8,
                                          OUT flushes pg_catalog.int8,
                                          OUT compactions pg_catalog.int8,
                                          OUT unused_pages pg_catalog.int8)
AS 'MODULE_PATHNAME', 'hamming_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.hamming_stats(pg_catalog.regclass) IS 'a hamming index''s runs and lists as its metapage gives them: tables, entries of the runs, of the pending list, of the list being flushed, NULL entries, flushes since the build (merges: the same count) and those an inserting session did itself, pages, flushes, compactions, and the pages that hold no run or list';

COMMENT ON FUNCTION @extschema@.hamming_merge(pg_catalog.regclass) IS 'flush the pending entries of a hamming index into a new run now, and compact its runs, as VACUUM would; returns the entries flushed';

-- ===== end section: hamming_stats counts flushes, compactions and unused pages =====

-- ===== section: the nightly union bounded by work_mem =====

/*
 * dedup_clusters keeps its disjoint sets within work_mem times
 * hash_mem_multiplier and, past it, sorts the edges externally (the
 * library's change: the signature and markings stay); a shard's cluster of
 * more than 100,000 ids comes in several rows, each starting with its id.
 */
COMMENT ON FUNCTION @extschema@.dedup_clusters(pg_catalog.text)
    IS 'connected components of the pairs (or arrays of ids) a query returns: (id, smallest id of its cluster); past work_mem times hash_mem_multiplier, found from externally sorted edges';

COMMENT ON FUNCTION @extschema@.simhash_shard_clusters(pg_catalog.text, pg_catalog.int4, pg_catalog.int4)
    IS 'clusters of the pairs within blocks - 1 bits whose first agreeing block is block, among the (id, fingerprint) rows of a query, one row per cluster with its ids in order (a cluster of more than 100,000 ids in rows of at most that many, each starting with the cluster''s id): one shard''s share of a block-sharded nightly run';

-- ===== end section: the nightly union bounded by work_mem =====

-- ===== section: block balls: one copy's search from one table =====

/*
 * hamming_block_ball(q, r, b, m): the codes within r bits of q that also
 * agree with q on block b of m (simhash_block's blocks).  It is the search
 * of copy b of a block-sharded layout, which answers for the rows whose
 * block b equals the query's: a hamming index whose runs have m tables
 * answers `sh <@ hamming_block_ball(q, r, b, m)` from table b alone, one
 * block value, where `simhash_block(sh, b, m) = v AND sh <~> q <= r`
 * probed r + 1 tables.  Its send function is made in neardup_internal by
 * the next section, as the other types' are.
 */
CREATE TYPE @extschema@.hamming_block_ball;

CREATE FUNCTION @extschema@.hamming_block_ball_in(pg_catalog.cstring)
RETURNS @extschema@.hamming_block_ball
AS 'MODULE_PATHNAME', 'hamming_block_ball_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.hamming_block_ball_out(@extschema@.hamming_block_ball)
RETURNS pg_catalog.cstring
AS 'MODULE_PATHNAME', 'hamming_block_ball_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.hamming_block_ball_recv(pg_catalog.internal)
RETURNS @extschema@.hamming_block_ball
AS 'MODULE_PATHNAME', 'hamming_block_ball_recv'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE @extschema@.hamming_block_ball (
    INPUT = @extschema@.hamming_block_ball_in,
    OUTPUT = @extschema@.hamming_block_ball_out,
    RECEIVE = @extschema@.hamming_block_ball_recv,
    INTERNALLENGTH = 16,
    ALIGNMENT = double,
    STORAGE = plain
);

COMMENT ON TYPE @extschema@.hamming_block_ball
    IS 'the simhash64 values within a Hamming radius of a center that agree with it on one block: one copy''s search in a block-sharded layout';
COMMENT ON FUNCTION @extschema@.hamming_block_ball_in(pg_catalog.cstring) IS 'I/O: a block ball from text';
COMMENT ON FUNCTION @extschema@.hamming_block_ball_out(@extschema@.hamming_block_ball) IS 'I/O: a block ball to text';
COMMENT ON FUNCTION @extschema@.hamming_block_ball_recv(pg_catalog.internal) IS 'I/O: a block ball from binary';

CREATE FUNCTION @extschema@.hamming_block_ball(center @extschema@.simhash64, radius pg_catalog.int4,
                                               block pg_catalog.int4, blocks pg_catalog.int4)
RETURNS @extschema@.hamming_block_ball
AS 'MODULE_PATHNAME', 'hamming_block_ball_make'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.hamming_block_ball(@extschema@.simhash64, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4)
    IS 'the fingerprints within radius bits of center (0 to 64) whose block `block` of `blocks` (as simhash_block cuts them) equals center''s: sh <@ hamming_block_ball(q, r, b, m)';

-- the containment operators never fail (a block ball's block is checked when it is made)
CREATE FUNCTION @extschema@.simhash64_within_block_ball(@extschema@.simhash64, @extschema@.hamming_block_ball)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_within_block_ball'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.hamming_block_ball_contains(@extschema@.hamming_block_ball, @extschema@.simhash64)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'hamming_block_ball_contains_simhash64'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

COMMENT ON FUNCTION @extschema@.simhash64_within_block_ball(@extschema@.simhash64, @extschema@.hamming_block_ball)
    IS 'implementation of the <@ operator (fingerprint in block ball)';
COMMENT ON FUNCTION @extschema@.hamming_block_ball_contains(@extschema@.hamming_block_ball, @extschema@.simhash64)
    IS 'implementation of the @> operator (block ball holds fingerprint)';

CREATE OPERATOR @extschema@.<@ (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = @extschema@.hamming_block_ball,
    FUNCTION = @extschema@.simhash64_within_block_ball,
    COMMUTATOR = OPERATOR(@extschema@.@>),
    RESTRICT = @extschema@.hamming_ball_restrict_sel,
    JOIN = @extschema@.hamming_ball_join_sel
);

CREATE OPERATOR @extschema@.@> (
    LEFTARG = @extschema@.hamming_block_ball,
    RIGHTARG = @extschema@.simhash64,
    FUNCTION = @extschema@.hamming_block_ball_contains,
    COMMUTATOR = OPERATOR(@extschema@.<@),
    RESTRICT = @extschema@.hamming_ball_restrict_sel,
    JOIN = @extschema@.hamming_ball_join_sel
);

COMMENT ON OPERATOR @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_block_ball)
    IS 'is within the block ball (within its radius, and equal on its block)';
COMMENT ON OPERATOR @extschema@.@> (@extschema@.hamming_block_ball, @extschema@.simhash64)
    IS 'block ball holds the fingerprint';

-- both hamming operator families: the near-duplicate constraint's index answers it too
ALTER OPERATOR FAMILY @extschema@.simhash64_hamming_ops USING hamming ADD
    OPERATOR 5 @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_block_ball);
ALTER OPERATOR FAMILY @extschema@.hamming_ball_hamming_ops USING hamming ADD
    OPERATOR 5 @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_block_ball);

-- GiST searches the block ball (31: past the core's GiST strategy
-- numbers); GIN searches its ball and rechecks the block
ALTER OPERATOR FAMILY @extschema@.simhash64_gist_ops USING gist ADD
    OPERATOR 31 @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_block_ball);
ALTER OPERATOR FAMILY @extschema@.simhash64_gin_ops USING gin ADD
    OPERATOR 3 @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_block_ball);

-- ===== end section: block balls: one copy's search from one table =====

-- ===== section: a layout's copies keep the tables they search =====

/*
 * simhash_shard_create gives copy b > 1 of a layout a hamming index of the
 * one table that leads with block b (WITH (blocks = m, only_block = b)):
 * copy b is only asked for block balls of block b, and such an index is a
 * quarter of a 4-block one.  Copy 1 keeps a table per block (with the
 * layout's blocks), for the searches from `blocks` bits up and nearest
 * neighbours.  Layouts of 2 or more than 8 blocks, and the tables of the
 * near-duplicate constraint, keep their indexes as before.  Tables made
 * before this version keep theirs (doc/scale-out.md says how to rebuild
 * them).
 *
 * Copies b > 1 with a hamming index have no primary key either (a third of
 * a copy's bytes): simhash_layout_delete below finds their rows by code,
 * which their index probes, and the ids copy 1 lacks through a BRIN index
 * on id.  Copy 1 keeps its key: deletes start there.
 *
 * packed => true keeps copies b > 1 as packs (section "packed copies",
 * below): one row of up to 124 rows of one block value, in place of a heap
 * row each.  far_searches => false gives copy 1 too the one table of its
 * block (only_block = 1): a quarter of its index, for radius searches from
 * `blocks` bits up and nearest neighbours beyond blocks - 1 bits that stay
 * exact and get slower (doc/index-hamming.md, only_block).
 */
DROP FUNCTION @extschema@.simhash_shard_create(pg_catalog.text, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4);
CREATE FUNCTION @extschema@.simhash_shard_create(layout pg_catalog.text,
                                                 blocks pg_catalog.int4 DEFAULT 4,
                                                 partitions pg_catalog.int4 DEFAULT 16,
                                                 exclude_within pg_catalog.int4 DEFAULT NULL,
                                                 packed pg_catalog.bool DEFAULT false,
                                                 far_searches pg_catalog.bool DEFAULT true)
RETURNS pg_catalog.int4
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    nsp pg_catalog.text := pg_catalog.current_schema()::pg_catalog.text;
    t pg_catalog.text;
    rows_table pg_catalog.text;
    made pg_catalog.int4 := 0;
BEGIN
    IF layout IS NULL OR blocks IS NULL OR partitions IS NULL OR packed IS NULL OR far_searches IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' WHEN blocks IS NULL THEN 'blocks'
                 WHEN partitions IS NULL THEN 'partitions' WHEN packed IS NULL THEN 'packed'
                 ELSE 'far_searches' END
            USING ERRCODE = '22004';
    END IF;
    PERFORM @extschema@.simhash_layout_check_args(blocks, partitions);
    IF exclude_within OPERATOR(pg_catalog.<) 0 OR exclude_within OPERATOR(pg_catalog.>=) blocks THEN
        RAISE EXCEPTION 'exclude_within must be between 0 and blocks - 1 (%)', blocks OPERATOR(pg_catalog.-) 1
            USING ERRCODE = '22023',
                  DETAIL = 'Two rows within blocks - 1 bits share a partition of some copy, where its constraint sees both; farther apart they may share none.';
    END IF;
    IF packed AND exclude_within IS NOT NULL THEN
        RAISE EXCEPTION 'a packed layout cannot keep the near-duplicate constraint'
            USING ERRCODE = '22023',
                  DETAIL = 'The constraint needs each copy''s rows in a table of their own.';
    END IF;
    IF NOT far_searches AND (exclude_within IS NOT NULL OR blocks OPERATOR(pg_catalog.<) 3
                             OR blocks OPERATOR(pg_catalog.>) 8) THEN
        RAISE EXCEPTION 'far_searches => false needs a hamming index of 3 to 8 blocks on copy 1'
            USING ERRCODE = '22023',
                  DETAIL = CASE WHEN exclude_within IS NOT NULL
                                THEN 'With exclude_within, each copy keeps the index of its constraint.'
                                ELSE pg_catalog.format('A hamming index keeps one table of its blocks for 3 to 8 blocks, not %s.', blocks) END;
    END IF;
    IF nsp IS NULL THEN
        RAISE EXCEPTION 'no schema has been selected to create in' USING ERRCODE = '3F000';
    END IF;
    -- the longest name first
    PERFORM @extschema@.simhash_layout_name(layout,
        pg_catalog.format('_b%s_p%s_clusters', blocks, partitions OPERATOR(pg_catalog.-) 1));
    FOR b IN 1 .. blocks LOOP
        FOR p IN 0 .. partitions OPERATOR(pg_catalog.-) 1 LOOP
            t := pg_catalog.format('%s_b%s_p%s', layout, b, p);
            -- a packed copy's rows arrive in <t>_recent, which is made and
            -- indexed as an unpacked copy's table
            rows_table := t OPERATOR(pg_catalog.||) CASE WHEN packed AND b OPERATOR(pg_catalog.>) 1
                                                   THEN '_recent' ELSE '' END;
            EXECUTE pg_catalog.format(
                'CREATE TABLE %1$I.%2$I (id pg_catalog.int8 %3$s, sh @extschema@.simhash64 NOT NULL)',
                nsp, rows_table,
                CASE WHEN b OPERATOR(pg_catalog.>) 1 AND exclude_within IS NULL THEN 'NOT NULL' ELSE 'PRIMARY KEY' END);
            IF exclude_within IS NULL AND (blocks OPERATOR(pg_catalog.<) 3 OR blocks OPERATOR(pg_catalog.>) 8) THEN
                -- a cut no hamming index has: its own 4 blocks
                EXECUTE pg_catalog.format('CREATE INDEX ON %1$I.%2$I USING hamming (sh)', nsp, rows_table);
            ELSIF exclude_within IS NULL THEN
                -- copy 1 serves every search (radius from blocks up,
                -- nearest neighbours), unless far_searches is off; copy b
                -- only block balls of block b
                EXECUTE pg_catalog.format('CREATE INDEX ON %1$I.%2$I USING hamming (sh) WITH (blocks = %3$s%4$s)',
                    nsp, rows_table, blocks,
                    CASE WHEN b OPERATOR(pg_catalog.>) 1 OR NOT far_searches
                         THEN ', only_block = ' OPERATOR(pg_catalog.||) b ELSE '' END);
            ELSE
                -- its index serves the radius searches too (radius_index.c)
                EXECUTE pg_catalog.format(
                    'ALTER TABLE %1$I.%2$I ADD EXCLUDE USING hamming '
                    '(@extschema@.hamming_ball(sh, %3$s) WITH OPERATOR(@extschema@.&&))',
                    nsp, rows_table, exclude_within);
            END IF;
            IF b OPERATOR(pg_catalog.>) 1 AND exclude_within IS NULL AND NOT packed THEN
                -- no key on id: a summary of its block ranges, for the
                -- deletes by id (of ids copy 1 does not hold), which then
                -- read only the ranges that may hold them where ids grow
                -- in the order the rows arrive; a few pages a table
                EXECUTE pg_catalog.format('CREATE INDEX ON %1$I.%2$I USING brin (id)', nsp, rows_table);
            END IF;
            IF packed AND b OPERATOR(pg_catalog.>) 1 THEN
                -- the packs of up to 124 rows of one block value v, and the
                -- view the coordinator's foreign table reads: its packed
                -- codes come through simhash_in_block, whose block the
                -- planner reads as the pack's v, so that the block values
                -- the coordinator sends (simhash_block(sh, b, m) = v, or =
                -- ANY) select packs through the index on v
                EXECUTE pg_catalog.format(
                    'CREATE TABLE %1$I.%2$I (v pg_catalog.int8 NOT NULL, pack pg_catalog.bytea NOT NULL)',
                    nsp, t OPERATOR(pg_catalog.||) '_packs');
                EXECUTE pg_catalog.format('CREATE INDEX ON %1$I.%2$I (v)', nsp, t OPERATOR(pg_catalog.||) '_packs');
                EXECUTE pg_catalog.format(
                    'CREATE VIEW %1$I.%2$I AS SELECT id, sh FROM %1$I.%3$I UNION ALL '
                    'SELECT r.id, neardup_internal.simhash_in_block(r.sh, p.v, %5$s, %6$s) FROM %1$I.%4$I p '
                    'CROSS JOIN LATERAL neardup_internal.simhash_pack_rows(p.pack) r',
                    nsp, t, rows_table, t OPERATOR(pg_catalog.||) '_packs', b, blocks);
                EXECUTE pg_catalog.format(
                    'CREATE RULE simhash_pack_insert AS ON INSERT TO %1$I.%2$I DO INSTEAD '
                    'INSERT INTO %1$I.%3$I (id, sh) VALUES (NEW.id, NEW.sh) RETURNING %1$I.%3$I.id, %1$I.%3$I.sh',
                    nsp, t, rows_table);
                EXECUTE pg_catalog.format(
                    'CREATE TRIGGER simhash_pack_delete INSTEAD OF DELETE ON %1$I.%2$I FOR EACH ROW '
                    'EXECUTE FUNCTION neardup_internal.simhash_pack_delete(%3$L, %4$L, %5$s, %6$s)',
                    nsp, t, pg_catalog.format('%I.%I', nsp, rows_table),
                    pg_catalog.format('%I.%I', nsp, t OPERATOR(pg_catalog.||) '_packs'), b, blocks);
            END IF;
            -- one row per cluster, its ids in order (the first is its
            -- cluster_id): half the text of its edges to the coordinator
            EXECUTE pg_catalog.format(
                'CREATE VIEW %1$I.%3$I AS SELECT %4$s::pg_catalog.int4 AS part, c.ids '
                'FROM @extschema@.simhash_shard_clusters(%5$L, %6$s, %7$s) c',
                nsp, t, t OPERATOR(pg_catalog.||) '_clusters',
                (b OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.*) partitions OPERATOR(pg_catalog.+) p,
                pg_catalog.format('SELECT id, sh FROM %I.%I', nsp, t), b, blocks);
            made := made OPERATOR(pg_catalog.+) 1;
        END LOOP;
    END LOOP;
    RETURN made;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_shard_create(pg_catalog.text, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4, pg_catalog.bool, pg_catalog.bool)
    IS 'on a shard: the tables (with a hamming index, or the near-duplicate constraint at exclude_within bits; copies 2 and up as packs when packed; copy 1''s index of its own block''s table only without far_searches) and cluster views of every partition of a block-sharded layout';

/*
 * Deletes start at copy 1, by its primary key, and take the codes of the
 * rows they delete there to the other copies: copy b's rows are deleted
 * from the partitions that hold those codes' block b (partition pruning on
 * constants), where its hamming index finds them by code.  So the copies
 * b > 1 need no key on id, and a delete of a few ids reads one partition
 * of each of them rather than every one (19 remote deletes for one id in a
 * layout of 4 copies of 16 partitions, not 64).  An id that copy b did
 * not give up as often as copy 1 did (copy 1 does not hold it, or copy b
 * holds it under another code: a change of fingerprint that committed on
 * some shards only) is deleted by id from every partition of copy b
 * (where it has no key, through its BRIN index on id: the block ranges
 * that may hold the ids, all of them when ids do not follow the order rows
 * arrive in).  A row that copy b holds
 * beside the one copy 1 held, under another code, stays:
 * simhash_layout_check reports that copy.
 */
CREATE OR REPLACE FUNCTION @extschema@.simhash_layout_delete(layout pg_catalog.regclass, ids pg_catalog.int8[])
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    l record;
    n pg_catalog.int8;
    first_ids pg_catalog.int8[];
    first_codes @extschema@.simhash64[];
    missing pg_catalog.int8[];
    got pg_catalog.int8[];
    more pg_catalog.int8[];
    bounds pg_catalog.int8[];
    chunk record;
    counts pg_catalog.int8[];
    copy_b pg_catalog.text;
BEGIN
    IF layout IS NULL OR ids IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' ELSE 'ids' END
            USING ERRCODE = '22004';
    END IF;
    -- as a NULL id in the dedup family: a NULL can name no row, and is
    -- more likely a caller's bug (an outer join, a failed lookup) than a
    -- request to delete nothing.  An empty array deletes nothing.
    IF pg_catalog.array_position(ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'ids must not contain nulls' USING ERRCODE = '22004';
    END IF;
    l := @extschema@.simhash_layout_parts(layout);
    EXECUTE pg_catalog.format(
        'WITH d AS (DELETE FROM %1$I.%2$I WHERE id OPERATOR(pg_catalog.=) ANY ($1) RETURNING id, sh) '
        'SELECT pg_catalog.count(*), pg_catalog.array_agg(id), pg_catalog.array_agg(sh) FROM d',
        l.nsp, l.name OPERATOR(pg_catalog.||) '_b1')
        INTO n, first_ids, first_codes USING ids;
    counts := ARRAY[n];
    missing := ARRAY(SELECT pg_catalog.unnest(ids) EXCEPT SELECT pg_catalog.unnest(first_ids));
    FOR b IN 2 .. l.blocks LOOP
        copy_b := l.name OPERATOR(pg_catalog.||) '_b' OPERATOR(pg_catalog.||) b;
        got := '{}';
        -- the first block value of each partition but the first, as
        -- simhash_layout_create cuts them
        bounds := ARRAY(SELECT r.block_from
                        FROM pg_catalog.generate_series(1, l.partitions OPERATOR(pg_catalog.-) 1) q,
                             @extschema@.simhash_layout_range(b, l.blocks, l.partitions, q) r
                        ORDER BY q);
        -- One statement per partition the rows fall in (as the layout's
        -- equal ranges of block values cut them), of up to 1,000 rows:
        -- each partition is sent its own rows' codes and ids, not all of
        -- them.  (Partitions cut otherwise only get more of the codes.)
        -- The values, codes and ids are constants, not parameters, so
        -- that the plan holds only the partitions of those values.  The
        -- codes go as bigints (sh = ANY (bigint[]) with the operator of
        -- the section below, one index scan for them all): postgres_fdw
        -- ships no array of an extension's type that is not recorded as a
        -- member of it (which depends on the release that made it), and
        -- would then fetch the rows and delete them one by one rather
        -- than send the DELETE.  The ids only filter (id + 0): a BRIN
        -- index on id would add the block ranges of every id to the
        -- codes' few rows, all of them when the ids are spread, and make
        -- the bitmap lossy.
        FOR chunk IN
            SELECT pg_catalog.array_agg(DISTINCT u.v) AS vals,
                   pg_catalog.array_agg(DISTINCT u.c::pg_catalog.int8) AS codes,
                   pg_catalog.array_agg(u.i) AS chunk_ids
            FROM (SELECT x.v, x.c, x.i, x.p,
                         (pg_catalog.row_number() OVER (PARTITION BY x.p) OPERATOR(pg_catalog.-) 1)
                             OPERATOR(pg_catalog./) 1000 AS g
                  FROM (SELECT y.v, y.c, y.i, pg_catalog.width_bucket(y.v, bounds) AS p
                        FROM (SELECT @extschema@.simhash_block(c, b, l.blocks) AS v, c, i
                              FROM ROWS FROM (pg_catalog.unnest(first_codes), pg_catalog.unnest(first_ids)) z(c, i)) y) x) u
            GROUP BY u.p, u.g
        LOOP
            EXECUTE pg_catalog.format(
                'WITH d AS (DELETE FROM %1$I.%2$I WHERE @extschema@.simhash_block(sh, %3$s, %4$s) '
                'OPERATOR(pg_catalog.=) ANY (%5$L::pg_catalog.int8[]) '
                'AND sh OPERATOR(neardup_internal.=) ANY (%6$L::pg_catalog.int8[]) '
                'AND (id OPERATOR(pg_catalog.+) 0) OPERATOR(pg_catalog.=) ANY (%7$L::pg_catalog.int8[]) RETURNING id) '
                'SELECT $1 OPERATOR(pg_catalog.||) pg_catalog.array_agg(id) FROM d',
                l.nsp, copy_b, b, l.blocks, chunk.vals, chunk.codes, chunk.chunk_ids)
                INTO got USING got;
        END LOOP;
        -- the ids copy b gave up fewer times than copy 1, and those copy 1
        -- does not hold: by id, from every partition
        more := ARRAY(SELECT pg_catalog.unnest(missing)
                      UNION SELECT x FROM (SELECT pg_catalog.unnest(first_ids)
                                           EXCEPT ALL SELECT pg_catalog.unnest(got)) s(x));
        n := pg_catalog.cardinality(got)::pg_catalog.int8;
        IF pg_catalog.cardinality(more) OPERATOR(pg_catalog.>) 0 THEN
            EXECUTE pg_catalog.format(
                'WITH d AS (DELETE FROM %1$I.%2$I WHERE id OPERATOR(pg_catalog.=) ANY ($1) RETURNING 1) '
                'SELECT $2 OPERATOR(pg_catalog.+) pg_catalog.count(*) FROM d',
                l.nsp, copy_b)
                INTO n USING more, n;
        END IF;
        counts := counts OPERATOR(pg_catalog.||) n;
    END LOOP;
    IF (SELECT pg_catalog.min(c) OPERATOR(pg_catalog.<>) pg_catalog.max(c) FROM pg_catalog.unnest(counts) c) THEN
        RAISE WARNING 'the copies of layout "%" held different rows of these ids', layout
            USING DETAIL = pg_catalog.format('Rows deleted from copies 1 to %s: %s.', l.blocks,
                                             pg_catalog.array_to_string(counts, ', ')),
                  HINT = 'simhash_layout_check() compares the copies.';
    END IF;
    RETURN (SELECT pg_catalog.max(c) FROM pg_catalog.unnest(counts) c);
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_delete(pg_catalog.regclass, pg_catalog.int8[])
    IS 'delete ids from every copy of a block-sharded layout, in one transaction: from copy 1 by id, from the others by the codes copy 1 held; returns the most rows deleted from any copy, and warns when the copies differ';

-- ===== end section: a layout's copies keep the tables they search =====

-- ===== section: support functions in a schema of their own =====

/*
 * The functions PostgreSQL calls and users do not (type input and output,
 * the functions behind operators, casts and aggregates, operator class
 * and access method support, planner support and selectivity estimators)
 * and the internal helpers of the PL/pgSQL functions move to the schema
 * neardup_internal, so that \df in the extension's schema lists what a
 * user calls.  Moving keeps every OID: operators, operator classes, casts,
 * aggregates, indexes, constraints and views that use them are unchanged.
 * The schema belongs to the extension (DROP EXTENSION drops it) and to
 * the role that runs the script (the bootstrap superuser for a trusted
 * install); PUBLIC may use it, as every role calls these functions through
 * the types, operators and indexes.  The name is fixed: a database has one
 * neardup, and a schema of that name that is not the extension's is an
 * error here rather than a place to mix objects into.
 */
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname OPERATOR(pg_catalog.=) 'neardup_internal') THEN
        RAISE EXCEPTION 'schema "neardup_internal" already exists'
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = 'neardup 0.4 keeps its support functions in a schema of that name, which it creates.',
                  HINT = 'Rename or drop that schema, then create or update the extension.';
    END IF;
END
$$;

CREATE SCHEMA neardup_internal;
GRANT USAGE ON SCHEMA neardup_internal TO PUBLIC;
COMMENT ON SCHEMA neardup_internal
    IS 'neardup''s support functions: type I/O, operator, cast and aggregate implementations, index and planner support, internal helpers (not called by name)';

-- type input and output
ALTER FUNCTION @extschema@.simhash64_in(pg_catalog.cstring) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_out(@extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_recv(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_ball_in(pg_catalog.cstring) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_ball_out(@extschema@.hamming_ball) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_ball_recv(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_block_ball_in(pg_catalog.cstring) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_block_ball_out(@extschema@.hamming_block_ball) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_block_ball_recv(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_gist_key_in(pg_catalog.cstring) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_gist_key_out(@extschema@.simhash64_gist_key) SET SCHEMA neardup_internal;

-- casts
ALTER FUNCTION @extschema@.simhash64_from_bit(pg_catalog.varbit) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_from_bytea(pg_catalog.bytea) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_to_bit(@extschema@.simhash64, pg_catalog.int4) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_to_varbit(@extschema@.simhash64, pg_catalog.int4) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_to_bytea(@extschema@.simhash64) SET SCHEMA neardup_internal;

-- operators: comparison, <~>, <@, @>, && and the estimators of <@ and @>
ALTER FUNCTION @extschema@.simhash64_eq(@extschema@.simhash64, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_ne(@extschema@.simhash64, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_lt(@extschema@.simhash64, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_le(@extschema@.simhash64, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_gt(@extschema@.simhash64, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_ge(@extschema@.simhash64, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_hamming(@extschema@.simhash64, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_within_ball(@extschema@.simhash64, @extschema@.hamming_ball) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_ball_contains(@extschema@.hamming_ball, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_ball_collides(@extschema@.hamming_ball, @extschema@.hamming_ball) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_within_block_ball(@extschema@.simhash64, @extschema@.hamming_block_ball) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_block_ball_contains(@extschema@.hamming_block_ball, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_ball_restrict_sel(pg_catalog.internal, pg_catalog.oid, pg_catalog.internal, pg_catalog.int4) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_ball_join_sel(pg_catalog.internal, pg_catalog.oid, pg_catalog.internal, pg_catalog.int2, pg_catalog.internal) SET SCHEMA neardup_internal;

-- operator classes: btree and hash, GIN, GiST; the hamming access method
ALTER FUNCTION @extschema@.simhash64_cmp(@extschema@.simhash64, @extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_sortsupport(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_hash(@extschema@.simhash64) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_hash_extended(@extschema@.simhash64, pg_catalog.int8) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_gin_extract_value(@extschema@.simhash64, pg_catalog.internal, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_gin_extract_query(@extschema@.simhash64, pg_catalog.internal, pg_catalog.int2, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_gin_consistent(pg_catalog.internal, pg_catalog.int2, @extschema@.simhash64, pg_catalog.int4, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_gin_compare_partial(@extschema@.simhash64, @extschema@.simhash64, pg_catalog.int2, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_gin_triconsistent(pg_catalog.internal, pg_catalog.int2, @extschema@.simhash64, pg_catalog.int4, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash64_gin_options(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_simhash64_consistent(pg_catalog.internal, @extschema@.simhash64, pg_catalog.int2, pg_catalog.oid, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_simhash64_union(pg_catalog.internal, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_simhash64_compress(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_simhash64_penalty(pg_catalog.internal, pg_catalog.internal, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_simhash64_picksplit(pg_catalog.internal, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_simhash64_same(@extschema@.simhash64_gist_key, @extschema@.simhash64_gist_key, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_simhash64_distance(pg_catalog.internal, @extschema@.simhash64, pg_catalog.int2, pg_catalog.oid, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_simhash64_sortsupport(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_simhash64_fetch(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_hamming_ball_compress(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.gist_hamming_ball_consistent(pg_catalog.internal, @extschema@.hamming_ball, pg_catalog.int2, pg_catalog.oid, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.hamming_handler(pg_catalog.internal) SET SCHEMA neardup_internal;

-- planner support
ALTER FUNCTION @extschema@.hamming_support(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.within_support(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.minhash_bands_support(pg_catalog.internal) SET SCHEMA neardup_internal;

-- simhash_agg's state
ALTER FUNCTION @extschema@.simhash_agg_trans(pg_catalog.internal, pg_catalog.text, pg_catalog.float4) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_agg_trans(pg_catalog.internal, pg_catalog.text) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_agg_final(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_agg_combine(pg_catalog.internal, pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_agg_serialize(pg_catalog.internal) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_agg_deserialize(pg_catalog.bytea, pg_catalog.internal) SET SCHEMA neardup_internal;

-- helpers of the dedup and layout functions
ALTER FUNCTION @extschema@.dedup_check_column(pg_catalog.regclass, pg_catalog.name, pg_catalog.text, pg_catalog.regtype[]) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.dedup_keep_order_problem(pg_catalog.regclass, pg_catalog.name, pg_catalog.text) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_clusters_apply(pg_catalog.regclass, pg_catalog.int8[], pg_catalog.int8[]) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_layout_check_args(pg_catalog.int4, pg_catalog.int4) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_layout_name(pg_catalog.text, pg_catalog.text) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_layout_range(pg_catalog.int4, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_layout_partitions(pg_catalog.regclass, pg_catalog.int4) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_layout_parts(pg_catalog.regclass) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_layout_digest(pg_catalog.regclass[]) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_layout_error(pg_catalog.regclass, pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.text) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_layout_within_rows(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4) SET SCHEMA neardup_internal;
ALTER FUNCTION @extschema@.simhash_layout_nearest_rows(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4) SET SCHEMA neardup_internal;

-- the GiST key storage type (after its functions, named by it above)
ALTER TYPE @extschema@.simhash64_gist_key SET SCHEMA neardup_internal;

/*
 * The binary output functions of simhash64 and hamming_ball are made anew
 * in neardup_internal, and the old ones dropped, rather than moved (and
 * hamming_block_ball's is made there): the order of DROP EXTENSION ...
 * CASCADE depends on it.  It visits the
 * extension's members newest first, each after what depends on it.  The
 * schema, newer than every function it holds, would lead it to the
 * operator class support functions before the types, and so before the
 * indexes on columns of those types: an index dropped after its GIN
 * options function fails ("cache lookup failed for function"), and an
 * index dropped after its operator class's support rows leaves the
 * session's operator class cache without them when the DROP is rolled
 * back.  A member newer than the schema on which each type depends makes
 * it drop the columns and indexes first, as before the schema.
 */
CREATE FUNCTION neardup_internal.simhash64_send(@extschema@.simhash64)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'simhash64_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER TYPE @extschema@.simhash64 SET (SEND = neardup_internal.simhash64_send);
DROP FUNCTION @extschema@.simhash64_send(@extschema@.simhash64);
COMMENT ON FUNCTION neardup_internal.simhash64_send(@extschema@.simhash64) IS 'I/O: a fingerprint to binary';

CREATE FUNCTION neardup_internal.hamming_ball_send(@extschema@.hamming_ball)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'hamming_ball_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER TYPE @extschema@.hamming_ball SET (SEND = neardup_internal.hamming_ball_send);
DROP FUNCTION @extschema@.hamming_ball_send(@extschema@.hamming_ball);
COMMENT ON FUNCTION neardup_internal.hamming_ball_send(@extschema@.hamming_ball) IS 'I/O: a Hamming ball to binary';

CREATE FUNCTION neardup_internal.hamming_block_ball_send(@extschema@.hamming_block_ball)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'hamming_block_ball_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER TYPE @extschema@.hamming_block_ball SET (SEND = neardup_internal.hamming_block_ball_send);
COMMENT ON FUNCTION neardup_internal.hamming_block_ball_send(@extschema@.hamming_block_ball) IS 'I/O: a block ball to binary';

/*
 * The PL/pgSQL and SQL functions call their helpers as
 * @extschema@.name(...): each one whose body does is made again with
 * neardup_internal.name(...), from its own definition (same arguments,
 * settings, owner, privileges and comment).  Functions made after this
 * section must name the helpers in neardup_internal themselves
 * (sql/17_catalog.sql checks every schema-qualified call in a body).
 */
DO $$
DECLARE
    f pg_catalog.oid;
    def pg_catalog.text;
    moved pg_catalog.text;
    old pg_catalog.text;
BEGIN
    FOR f IN
        SELECT p.oid FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_depend d ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
             AND d.objid OPERATOR(pg_catalog.=) p.oid AND d.deptype OPERATOR(pg_catalog.=) 'e'
        JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
             AND e.extname OPERATOR(pg_catalog.=) 'neardup'
        JOIN pg_catalog.pg_language l ON l.oid OPERATOR(pg_catalog.=) p.prolang
        WHERE l.lanname OPERATOR(pg_catalog.=) ANY (ARRAY['plpgsql', 'sql'])
        ORDER BY p.oid
    LOOP
        def := pg_catalog.pg_get_functiondef(f);
        old := def;
        FOR moved IN
            SELECT DISTINCT p.proname FROM pg_catalog.pg_proc p
            WHERE p.pronamespace OPERATOR(pg_catalog.=) 'neardup_internal'::pg_catalog.regnamespace
        LOOP
            def := pg_catalog.replace(def, '@extschema@.' OPERATOR(pg_catalog.||) moved OPERATOR(pg_catalog.||) '(',
                                      'neardup_internal.' OPERATOR(pg_catalog.||) moved OPERATOR(pg_catalog.||) '(');
        END LOOP;
        IF def OPERATOR(pg_catalog.<>) old THEN
            EXECUTE def;
        END IF;
    END LOOP;
END
$$;

-- ===== end section: support functions in a schema of their own =====

-- ===== section: many codes in one hamming index scan =====

/*
 * simhash64 = bigint, the bigint read as the code's 64 bits (as the cast
 * from bigint reads it), in the hamming operator family as its equality:
 * sh = ANY ('{...}'::bigint[]) finds many codes in one bitmap index scan
 * (the executor rescans the index once per element), where a list of
 * equalities plans and runs one index scan per code.
 * simhash_layout_delete sends it to a layout's shards: postgres_fdw ships
 * an array of a built-in type everywhere, and an array of simhash64 only
 * where that array type was recorded as a member of the extension, which
 * depends on the PostgreSQL release that created it.  The operator
 * lives in neardup_internal, off a user's search_path, so that sh = 5
 * stays an error rather than a comparison with a number.
 */
CREATE FUNCTION neardup_internal.simhash64_eq_int8(@extschema@.simhash64, pg_catalog.int8)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash64_eq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

COMMENT ON FUNCTION neardup_internal.simhash64_eq_int8(@extschema@.simhash64, pg_catalog.int8)
    IS 'operator: a fingerprint equals the 64 bits of a bigint';

CREATE OPERATOR neardup_internal.= (
    LEFTARG = @extschema@.simhash64,
    RIGHTARG = pg_catalog.int8,
    FUNCTION = neardup_internal.simhash64_eq_int8,
    RESTRICT = pg_catalog.eqsel,
    JOIN = pg_catalog.eqjoinsel
);

COMMENT ON OPERATOR neardup_internal.=(@extschema@.simhash64, pg_catalog.int8)
    IS 'equal to the 64 bits of a bigint (sh OPERATOR(neardup_internal.=) ANY (bigint[]): many codes in one hamming index scan)';

-- every family that holds simhash64 = simhash64 but the btree and hash
-- ones (whose order and hash are the code's, not a bigint's): hamming,
-- the near-duplicate constraint's index (which answers it on its column's
-- codes: radius_index.c), GiST (18, equality) and GIN.  Each reads the
-- argument as the code's 64 bits, which the bigint's Datum is.
ALTER OPERATOR FAMILY @extschema@.simhash64_hamming_ops USING hamming ADD
    OPERATOR 2 neardup_internal.= (@extschema@.simhash64, pg_catalog.int8);
ALTER OPERATOR FAMILY @extschema@.hamming_ball_hamming_ops USING hamming ADD
    OPERATOR 2 neardup_internal.= (@extschema@.simhash64, pg_catalog.int8);
ALTER OPERATOR FAMILY @extschema@.simhash64_gist_ops USING gist ADD
    OPERATOR 18 neardup_internal.= (@extschema@.simhash64, pg_catalog.int8);
ALTER OPERATOR FAMILY @extschema@.simhash64_gin_ops USING gin ADD
    OPERATOR 2 neardup_internal.= (@extschema@.simhash64, pg_catalog.int8);

-- ===== end section: many codes in one hamming index scan =====

-- ===== section: packed copies =====

/*
 * simhash_shard_create(..., packed => true) keeps each partition of copies
 * b > 1 as the view <t> (what the coordinator's foreign table names) over
 * <t>_recent, the rows as they arrive (a table with its hamming index),
 * and <t>_packs, one row (v, pack) per pack of up to 124 rows whose block
 * b is v: 16 bytes a row and a few for the pack, where a heap row costs 44
 * and its index entry 14.  Rows arrive through the view's rule into
 * <t>_recent; simhash_shard_merge packs them; the view's trigger deletes
 * a row wherever it is.  A pack is a bytea of (id, code) pairs in the
 * server's byte order (src/shard/pack.c), which never leaves the shard.
 */
CREATE FUNCTION neardup_internal.simhash_pack_row(id pg_catalog.int8, sh @extschema@.simhash64)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'simhash_pack_row'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION neardup_internal.simhash_pack_row(pg_catalog.int8, @extschema@.simhash64)
    IS 'a pack of one (id, fingerprint) row, for string_agg into a packed copy''s pack';

CREATE FUNCTION neardup_internal.simhash_pack_rows(pack pg_catalog.bytea,
                                                   OUT id pg_catalog.int8, OUT sh @extschema@.simhash64)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'simhash_pack_rows'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 50;

COMMENT ON FUNCTION neardup_internal.simhash_pack_rows(pg_catalog.bytea)
    IS 'the (id, fingerprint) rows of a packed copy''s pack';

CREATE FUNCTION neardup_internal.simhash_pack_holds(pack pg_catalog.bytea, id pg_catalog.int8,
                                                    sh @extschema@.simhash64)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'simhash_pack_holds'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION neardup_internal.simhash_pack_holds(pg_catalog.bytea, pg_catalog.int8, @extschema@.simhash64)
    IS 'whether a packed copy''s pack holds the row (id, fingerprint)';

CREATE FUNCTION neardup_internal.simhash_pack_remove(pack pg_catalog.bytea, id pg_catalog.int8,
                                                     sh @extschema@.simhash64)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'simhash_pack_remove'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION neardup_internal.simhash_pack_remove(pg_catalog.bytea, pg_catalog.int8, @extschema@.simhash64)
    IS 'a packed copy''s pack without one row (id, fingerprint), or the pack itself if it holds none';

CREATE FUNCTION neardup_internal.simhash_in_block(sh @extschema@.simhash64, v pg_catalog.int8,
                                                  block pg_catalog.int4, blocks pg_catalog.int4)
RETURNS @extschema@.simhash64
AS 'MODULE_PATHNAME', 'simhash_in_block'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION neardup_internal.simhash_in_block(@extschema@.simhash64, pg_catalog.int8, pg_catalog.int4, pg_catalog.int4)
    IS 'a packed row''s fingerprint, whose block is its pack''s value v (an error if it is not); simhash_block of it plans as v';

-- simhash_block(simhash_in_block(sh, v, b, m), b, m) is planned as v
-- (src/planner/block_support.c)
CREATE FUNCTION neardup_internal.simhash_block_support(pg_catalog.internal)
RETURNS pg_catalog.internal
AS 'MODULE_PATHNAME', 'simhash_block_support'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION neardup_internal.simhash_block_support(pg_catalog.internal)
    IS 'planner support: the block of a packed row is its pack''s value';

ALTER FUNCTION @extschema@.simhash_block(@extschema@.simhash64, pg_catalog.int4, pg_catalog.int4)
    SUPPORT neardup_internal.simhash_block_support;

-- the INSTEAD OF DELETE trigger of a packed copy's view
CREATE FUNCTION neardup_internal.simhash_pack_delete()
RETURNS trigger
AS 'MODULE_PATHNAME', 'simhash_pack_delete'
LANGUAGE C;

COMMENT ON FUNCTION neardup_internal.simhash_pack_delete()
    IS 'trigger: deletes a row of a packed copy from its recent rows or its pack';

CREATE FUNCTION neardup_internal.simhash_pack_merge(copy pg_catalog.regclass)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'simhash_pack_merge'
LANGUAGE C VOLATILE STRICT;

COMMENT ON FUNCTION neardup_internal.simhash_pack_merge(pg_catalog.regclass)
    IS 'moves the recent rows of one packed copy''s partition into its packs; returns how many';

/*
 * On a shard: merges every packed partition of the layout in the current
 * schema that the caller may act as the owner of (others are skipped),
 * one row per partition with the rows it moved; each as its view's owner
 * (simhash_pack_merge).  Run it after a load and from a scheduler (the
 * recent rows cost as an unpacked copy's until then), on its own: it
 * locks each partition's packs against deletes until its transaction
 * ends.
 */
CREATE FUNCTION @extschema@.simhash_shard_merge(layout pg_catalog.text)
RETURNS TABLE(copy pg_catalog.regclass, moved pg_catalog.int8)
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF layout IS NULL THEN
        RAISE EXCEPTION 'layout must not be null' USING ERRCODE = '22004';
    END IF;
    FOR copy IN
        SELECT c.oid::pg_catalog.regclass
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_trigger g ON g.tgrelid OPERATOR(pg_catalog.=) c.oid
             AND g.tgfoid OPERATOR(pg_catalog.=) 'neardup_internal.simhash_pack_delete()'::pg_catalog.regprocedure
        WHERE c.relnamespace OPERATOR(pg_catalog.=) pg_catalog.current_schema()::pg_catalog.regnamespace
          AND pg_catalog.pg_has_role(c.relowner, 'USAGE')
          AND pg_catalog.left(c.relname, pg_catalog.length(layout) OPERATOR(pg_catalog.+) 2)
              OPERATOR(pg_catalog.=) (layout OPERATOR(pg_catalog.||) '_b')
          AND pg_catalog.substr(c.relname, pg_catalog.length(layout) OPERATOR(pg_catalog.+) 3)
              OPERATOR(pg_catalog.~) '^[0-9]+_p[0-9]+$'
        ORDER BY c.relname
    LOOP
        moved := neardup_internal.simhash_pack_merge(copy);
        RETURN NEXT;
    END LOOP;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_shard_merge(pg_catalog.text)
    IS 'on a shard: moves the recent rows of every packed partition of a block-sharded layout into packs';

/*
 * simhash_layout_move_partition as 0.3.1 made it, but for step 2's
 * emptying of the old table: a packed copy's partition is a view on its
 * shard, which TRUNCATE refuses (42809), and is emptied by a DELETE, row by
 * row through its trigger.
 */
CREATE OR REPLACE PROCEDURE @extschema@.simhash_layout_move_partition(layout pg_catalog.regclass, block pg_catalog.int4,
                                                           partition pg_catalog.int4, server pg_catalog.text,
                                                           INOUT moved pg_catalog.int8 DEFAULT NULL)
LANGUAGE plpgsql
AS $$
DECLARE
    l record;
    copy pg_catalog.text;
    part pg_catalog.text;
    old_part pg_catalog.text;
    bound pg_catalog.text;
    cur_server pg_catalog.text;
    pending_server pg_catalog.text;
    src record;
    dst record;
    rel_old pg_catalog.regclass;
    rel_new pg_catalog.regclass;
BEGIN
    IF layout IS NULL OR block IS NULL OR partition IS NULL OR server IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' WHEN block IS NULL THEN 'block'
                 WHEN partition IS NULL THEN 'partition' ELSE 'server' END
            USING ERRCODE = '22004';
    END IF;
    -- each step commits on its own: refused at once (2D000) inside a
    -- transaction block, before anything is done
    COMMIT;
    l := neardup_internal.simhash_layout_parts(layout);
    IF block OPERATOR(pg_catalog.<) 1 OR block OPERATOR(pg_catalog.>) l.blocks THEN
        RAISE EXCEPTION 'block must be between 1 and %', l.blocks USING ERRCODE = '22023';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_server s WHERE s.srvname OPERATOR(pg_catalog.=) server) THEN
        RAISE EXCEPTION 'server "%" does not exist', server USING ERRCODE = '42704';
    END IF;
    copy := pg_catalog.format('%I.%I', l.nsp, l.name OPERATOR(pg_catalog.||) '_b' OPERATOR(pg_catalog.||) block);
    part := pg_catalog.format('%s_b%s_p%s', l.name, block, partition);
    old_part := part OPERATOR(pg_catalog.||) '_moved_from';
    PERFORM neardup_internal.simhash_layout_name(l.name, pg_catalog.format('_b%s_p%s_moved_from', block, partition));

    -- step 1: copy and switch
    EXECUTE pg_catalog.format('LOCK TABLE %s IN EXCLUSIVE MODE', copy);
    -- read after the lock: a concurrent move of this partition has committed
    SELECT pg_catalog.pg_get_expr(c.relpartbound, c.oid), s.srvname::pg_catalog.text
    INTO bound, cur_server
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_foreign_table f ON f.ftrelid OPERATOR(pg_catalog.=) c.oid
    JOIN pg_catalog.pg_foreign_server s ON s.oid OPERATOR(pg_catalog.=) f.ftserver
    JOIN pg_catalog.pg_namespace ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
    WHERE ns.nspname OPERATOR(pg_catalog.=) l.nsp AND c.relname OPERATOR(pg_catalog.=) part
      AND c.relispartition;
    IF bound IS NULL THEN
        RAISE EXCEPTION 'layout "%" has no partition % of block %', layout, partition, block
            USING ERRCODE = '22023';
    END IF;
    SELECT s.srvname::pg_catalog.text INTO pending_server
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_foreign_table f ON f.ftrelid OPERATOR(pg_catalog.=) c.oid
    JOIN pg_catalog.pg_foreign_server s ON s.oid OPERATOR(pg_catalog.=) f.ftserver
    JOIN pg_catalog.pg_namespace ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
    WHERE ns.nspname OPERATOR(pg_catalog.=) l.nsp AND c.relname OPERATOR(pg_catalog.=) old_part;
    IF pending_server IS NOT NULL AND cur_server OPERATOR(pg_catalog.<>) server THEN
        RAISE EXCEPTION 'partition % of block % of layout "%" is being moved to server "%"',
            partition, block, layout, cur_server
            USING ERRCODE = '55000',
                  HINT = pg_catalog.format('Finish that move first: CALL simhash_layout_move_partition(%L, %s, %s, %L).',
                                           layout::pg_catalog.text, block, partition, cur_server);
    END IF;
    IF pending_server IS NULL THEN
        IF cur_server OPERATOR(pg_catalog.=) server THEN
            moved := 0;
            RETURN;
        END IF;
        EXECUTE pg_catalog.format(
            'CREATE FOREIGN TABLE %1$I.%2$I (id pg_catalog.int8 NOT NULL, sh @extschema@.simhash64 NOT NULL) '
            'SERVER %3$I OPTIONS (schema_name %4$L, table_name %5$L)',
            l.nsp, part OPERATOR(pg_catalog.||) '_moving', server, l.nsp, part);
        rel_old := pg_catalog.format('%I.%I', l.nsp, part)::pg_catalog.regclass;
        rel_new := pg_catalog.format('%I.%I', l.nsp, part OPERATOR(pg_catalog.||) '_moving')::pg_catalog.regclass;
        src := neardup_internal.simhash_layout_digest(ARRAY[rel_old]);
        dst := neardup_internal.simhash_layout_digest(ARRAY[rel_new]);
        IF dst.row_count OPERATOR(pg_catalog.>) 0 AND dst IS DISTINCT FROM src THEN
            RAISE EXCEPTION 'table %.% on server "%" is not empty', l.nsp, part, server
                USING ERRCODE = '55000',
                      DETAIL = 'It holds other rows than the partition on server "' OPERATOR(pg_catalog.||) cur_server OPERATOR(pg_catalog.||) '".',
                      HINT = 'Empty it on the shard first.';
        END IF;
        IF dst.row_count OPERATOR(pg_catalog.=) 0 AND src.row_count OPERATOR(pg_catalog.>) 0 THEN
            EXECUTE pg_catalog.format('INSERT INTO %s SELECT id, sh FROM %s', rel_new, rel_old);
            dst := neardup_internal.simhash_layout_digest(ARRAY[rel_new]);
            IF dst IS DISTINCT FROM src THEN
                RAISE EXCEPTION 'the copy of %.% on server "%" differs from its rows on server "%"',
                    l.nsp, part, server, cur_server
                    USING ERRCODE = '55000',
                          DETAIL = pg_catalog.format('%s rows copied of %s.', dst.row_count, src.row_count),
                          HINT = 'A trigger or rule on the shard''s table may have changed them; nothing was moved.';
            END IF;
        END IF;
        moved := src.row_count;
        EXECUTE pg_catalog.format('ALTER TABLE %s DETACH PARTITION %s', copy, rel_old);
        EXECUTE pg_catalog.format('ALTER FOREIGN TABLE %s RENAME TO %I', rel_old, old_part);
        EXECUTE pg_catalog.format('ALTER FOREIGN TABLE %s RENAME TO %I', rel_new, part);
        -- no writes to the copy between the steps: step 2 compares the tables
        EXECUTE pg_catalog.format('ALTER FOREIGN TABLE %I.%I OPTIONS (ADD updatable %L)', l.nsp, part, 'false');
        EXECUTE pg_catalog.format('ALTER TABLE %s ATTACH PARTITION %I.%I %s', copy, l.nsp, part, bound);
        -- the cluster view's partition follows
        SELECT pg_catalog.pg_get_expr(c.relpartbound, c.oid) INTO bound
        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
        WHERE ns.nspname OPERATOR(pg_catalog.=) l.nsp
          AND c.relname OPERATOR(pg_catalog.=) (part OPERATOR(pg_catalog.||) '_clusters');
        EXECUTE pg_catalog.format('DROP FOREIGN TABLE %I.%I', l.nsp, part OPERATOR(pg_catalog.||) '_clusters');
        EXECUTE pg_catalog.format(
            'CREATE FOREIGN TABLE %1$I.%2$I PARTITION OF %1$I.%3$I %4$s SERVER %5$I '
            'OPTIONS (schema_name %6$L, table_name %7$L)',
            l.nsp, part OPERATOR(pg_catalog.||) '_clusters', l.name OPERATOR(pg_catalog.||) '_clusters',
            bound, server, l.nsp, part OPERATOR(pg_catalog.||) '_clusters');
        -- the target's rows commit (postgres_fdw, before the coordinator)
        -- with the switch, or neither does
        COMMIT;
        EXECUTE pg_catalog.format('LOCK TABLE %s IN EXCLUSIVE MODE', copy);
    END IF;

    -- step 2: verify, then empty the old table
    rel_old := pg_catalog.format('%I.%I', l.nsp, old_part)::pg_catalog.regclass;
    rel_new := pg_catalog.format('%I.%I', l.nsp, part)::pg_catalog.regclass;
    src := neardup_internal.simhash_layout_digest(ARRAY[rel_old]);
    dst := neardup_internal.simhash_layout_digest(ARRAY[rel_new]);
    IF src.row_count OPERATOR(pg_catalog.>) 0 THEN
        IF dst IS DISTINCT FROM src THEN
            RAISE EXCEPTION 'partition %.% on server "%" differs from its old table on server "%"',
                l.nsp, part, server, (SELECT s.srvname FROM pg_catalog.pg_foreign_table f
                                     JOIN pg_catalog.pg_foreign_server s ON s.oid OPERATOR(pg_catalog.=) f.ftserver
                                     WHERE f.ftrelid OPERATOR(pg_catalog.=) rel_old)
                USING ERRCODE = '55000',
                      DETAIL = pg_catalog.format('%s rows there, %s in the old table, which is left as it is; the copy refuses writes.',
                                                 dst.row_count, src.row_count),
                      HINT = pg_catalog.format('Compare them (the old table is the foreign table %s); when the new one is right, empty the old one on its shard and CALL this again.',
                                               rel_old);
        END IF;
        BEGIN
            EXECUTE pg_catalog.format('TRUNCATE %s', rel_old);
        EXCEPTION WHEN wrong_object_type THEN
            -- a packed copy's partition is a view on its shard, which
            -- TRUNCATE refuses: its rows go one by one, by its trigger
            EXECUTE pg_catalog.format('DELETE FROM %s', rel_old);
        END;
    END IF;
    moved := COALESCE(moved, dst.row_count);
    EXECUTE pg_catalog.format('DROP FOREIGN TABLE %s', rel_old);
    EXECUTE pg_catalog.format('ALTER FOREIGN TABLE %s OPTIONS (DROP updatable)', rel_new);
END
$$;

-- ===== end section: packed copies =====
