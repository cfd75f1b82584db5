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

-- ===== section: the hamming index everywhere (issue 29, part 1: src/planner/radius_index.c) =====

/*
 * The near-duplicate constraint's index answers queries on the fingerprint.
 * A hamming index of hamming_ball(sh, k) stores each ball as its center,
 * which is sh: with the simhash64 operators in its family it answers
 * `sh <@ hamming_ball(q, r)` (any r), `sh = q` and ORDER BY sh <~> q
 * exactly, as an index on sh would.  The planner sees it as one on sh too
 * (radius_index.c), so `EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&)`
 * is the only index such a table needs.
 */
ALTER OPERATOR FAMILY @extschema@.hamming_ball_hamming_ops USING hamming ADD
    OPERATOR 1 @extschema@.<@ (@extschema@.simhash64, @extschema@.hamming_ball),
    OPERATOR 2 @extschema@.= (@extschema@.simhash64, @extschema@.simhash64),
    OPERATOR 3 @extschema@.<~> (@extschema@.simhash64, @extschema@.simhash64)
        FOR ORDER BY pg_catalog.integer_ops;

/*
 * The indexes of a table on which a radius search of a simhash64 column
 * can run: led by the column with an operator class that has
 * `<@ hamming_ball` (hamming, GIN, GiST), or the near-duplicate
 * constraint's hamming index of hamming_ball(column, k).  Valid indexes
 * without a predicate only.  What simhash_pairs_since and
 * simhash_clusters_update probe.
 */
CREATE FUNCTION @extschema@.simhash_radius_indexes(source pg_catalog.regclass,
                                                   fingerprint_column pg_catalog.name)
RETURNS SETOF pg_catalog.regclass
AS 'MODULE_PATHNAME', 'simhash_radius_indexes'
LANGUAGE C STRICT STABLE PARALLEL RESTRICTED ROWS 2;

COMMENT ON FUNCTION @extschema@.simhash_radius_indexes(pg_catalog.regclass, pg_catalog.name) IS 'the indexes of a table that serve radius search (<~> <= r) on a simhash64 column: hamming, GIN, GiST, or the near-duplicate constraint''s';

-- Nightly runs probe any of those indexes, and say at NOTICE when they
-- fall back to a full run, and why (0.2 looked for GIN and GiST only, and
-- said so at DEBUG1).  The bodies are 0.2's but for that.
CREATE OR REPLACE FUNCTION @extschema@.simhash_pairs_since(source pg_catalog.regclass,
                                                id_column pg_catalog.name,
                                                fingerprint_column pg_catalog.name,
                                                since pg_catalog.int8,
                                                max_distance pg_catalog.int4 DEFAULT 3,
                                                OUT id_a pg_catalog.int8,
                                                OUT id_b pg_catalog.int8,
                                                OUT distance pg_catalog.int4)
RETURNS SETOF record
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
AS $$
DECLARE
    new_rows pg_catalog.float8;
    total pg_catalog.float8;
    probe pg_catalog.bool := true;
    how pg_catalog.text := 'index probes: the radius is beyond simhash_pairs()';
BEGIN
    IF source IS NULL OR id_column IS NULL OR fingerprint_column IS NULL OR max_distance IS NULL THEN
        RAISE EXCEPTION 'source, id_column, fingerprint_column and max_distance must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- The same errors whichever search runs below.
    PERFORM @extschema@.dedup_check_column(source, id_column, 'id',
        ARRAY['pg_catalog.int2', 'pg_catalog.int4', 'pg_catalog.int8']::pg_catalog.regtype[]);
    PERFORM @extschema@.dedup_check_column(source, fingerprint_column, 'fingerprint',
        ARRAY['@extschema@.simhash64']::pg_catalog.regtype[]);
    -- Probing the index costs about 50 times more per new row than the
    -- sort-based all-pairs search costs per row of the table (measured,
    -- doc/dedup.md): past 2% of new rows, or without an index that serves
    -- radius search on the fingerprint, simhash_pairs() and a filter are
    -- cheaper; when since was given, a NOTICE says so.  Its radius is
    -- 0 .. 15; the probes take any.
    IF max_distance OPERATOR(pg_catalog.>=) 0 AND max_distance OPERATOR(pg_catalog.<=) 15 THEN
        IF since IS NULL THEN
            probe := false;
            how := 'simhash_pairs(): all pairs';
        ELSIF NOT EXISTS (SELECT FROM @extschema@.simhash_radius_indexes(source, fingerprint_column)) THEN
            probe := false;
            how := 'simhash_pairs(): no index serves radius search on the fingerprint';
            RAISE NOTICE 'simhash_pairs_since: a full run: no index of % serves radius search on column %',
                    source, pg_catalog.quote_ident(fingerprint_column)
                USING HINT = pg_catalog.format('Index probes need a hamming, GIN or GiST index on the column (CREATE INDEX ON %s USING hamming (%I)) or the near-duplicate constraint.',
                                               source, fingerprint_column);
        ELSE
            EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s WHERE %I OPERATOR(pg_catalog.>) %L::pg_catalog.int8',
                                      source, id_column, since) INTO new_rows;
            SELECT c.reltuples INTO total FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) source;
            IF total OPERATOR(pg_catalog.<=) 0 THEN
                EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s', source) INTO total;
            END IF;
            probe := new_rows OPERATOR(pg_catalog.*) 50 OPERATOR(pg_catalog.<=) total;
            how := pg_catalog.format('%s: %s new rows of %s',
                                     CASE WHEN probe THEN 'index probes' ELSE 'simhash_pairs()' END,
                                     new_rows, total);
            IF NOT probe THEN
                RAISE NOTICE 'simhash_pairs_since: a full run: % new rows of %, more than the 2%% index probes pay off for',
                    new_rows, total;
            END IF;
        END IF;
    END IF;
    RAISE DEBUG 'simhash_pairs_since: %', how;
    IF NOT probe THEN
        RETURN QUERY SELECT p.id_a, p.id_b, p.distance
                     FROM @extschema@.simhash_pairs(source, id_column, fingerprint_column,
                                                    max_distance) p
                     WHERE since IS NULL OR p.id_b OPERATOR(pg_catalog.>) since;
        RETURN;
    END IF;
    -- since and the radius go in as literals, so that the planner sees the
    -- radius condition and the new rows' share as constants.  A pair of two
    -- new rows is found from both ends: kept from the smaller id's end.
    RETURN QUERY EXECUTE pg_catalog.format(
        'SELECT LEAST(n.%1$I, o.%1$I)::pg_catalog.int8, GREATEST(n.%1$I, o.%1$I)::pg_catalog.int8, '
        '       n.%2$I OPERATOR(@extschema@.<~>) o.%2$I '
        'FROM %3$s n JOIN %3$s o '
        '  ON o.%2$I OPERATOR(@extschema@.<~>) n.%2$I OPERATOR(pg_catalog.<=) %5$s '
        ' AND o.%1$I OPERATOR(pg_catalog.<>) n.%1$I '
        'WHERE n.%1$I OPERATOR(pg_catalog.>) %4$L::pg_catalog.int8 '
        '  AND (o.%1$I OPERATOR(pg_catalog.<=) %4$L::pg_catalog.int8 '
        '       OR o.%1$I OPERATOR(pg_catalog.>) n.%1$I)',
        id_column, fingerprint_column, source,
        COALESCE(since::pg_catalog.text, '-9223372036854775808'), max_distance);
END
$$;

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
    probe bool := false;
    estimated bool;
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
        IF NOT probe THEN
            RAISE NOTICE 'simhash_clusters_update: a full run: % new rows of %, more than the 1%% index probes pay off for',
                new_rows, total;
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

-- ===== end section: the hamming index everywhere =====

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
    IS 'the dedup jobs running now (simhash_pairs, simhash_clusters, minhash_clusters, dedup_clusters, dedup_keep_one) and the statements fingerprinting texts: phase, count and total, for watching from another session';

/*
 * The same report for a job written in SQL or PL/pgSQL, as dedup_keep_one
 * is: begin names the job (a job begun inside another keeps the outer's
 * name and shows its own phases until it ends), phase names what it does
 * now and its total (NULL: not known), end ends it.  Commit, and the abort
 * of the (sub)transaction the job began in, end it too.
 */
CREATE FUNCTION @extschema@.neardup_progress_begin(job pg_catalog.text)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'nd_progress_begin_sql'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION @extschema@.neardup_progress_phase(phase pg_catalog.text,
                                                   total pg_catalog.int8 DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'nd_progress_phase_sql'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION @extschema@.neardup_progress_end()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'nd_progress_end_sql'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.neardup_progress_begin(pg_catalog.text)
    IS 'begins a job of this session that neardup_progress() shows, for jobs written in SQL or PL/pgSQL';
COMMENT ON FUNCTION @extschema@.neardup_progress_phase(pg_catalog.text, pg_catalog.int8)
    IS 'names the phase of this session''s job and its total (NULL: not known) for neardup_progress()';
COMMENT ON FUNCTION @extschema@.neardup_progress_end()
    IS 'ends this session''s job begun by neardup_progress_begin';

-- ===== end section: progress of long jobs =====

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
    -- for neardup_progress(); the pairs query's own jobs show their phases
    -- while they run
    PERFORM @extschema@.neardup_progress_begin('dedup_keep_one');
    PERFORM @extschema@.neardup_progress_phase('finding clusters');
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
        PERFORM @extschema@.neardup_progress_phase('deleting duplicates',
                                                   COALESCE(pg_catalog.cardinality(dup), 0));
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
        PERFORM @extschema@.neardup_progress_end();
        RETURN n;
    END IF;
    n := 0;
    FOR flag IN SELECT * FROM (VALUES (true), (false)) v LOOP
        PERFORM @extschema@.neardup_progress_phase(
            CASE WHEN flag THEN 'flagging duplicates' ELSE 'unflagging kept rows' END,
            COALESCE(pg_catalog.cardinality(CASE WHEN flag THEN dup ELSE keep END), 0));
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
    PERFORM @extschema@.neardup_progress_end();
    RETURN n;
END
$$;

-- ===== end section: dedup arguments =====
