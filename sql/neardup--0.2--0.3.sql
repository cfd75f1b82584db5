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

-- ===== section: block-sharded layout (issue 31; src/dedup/band_keys.c, src/dedup/simhash_clusters.c, doc/scale-out.md) =====

/*
 * Manku's permuted tables across machines (doc/scale-out.md, "The block
 * layout").  The fingerprints are kept in `blocks` copies; copy b is
 * range-partitioned by block b's value over foreign partitions on the
 * shards.  Two fingerprints within blocks - 1 bits agree on some block, so
 * a radius search below `blocks` reads one partition of each of at most
 * radius + 1 copies, and the pairs of a nightly run meet in the partition
 * of their first agreeing block, where each shard finds them on its own.
 * Functions named simhash_layout_* run on the coordinator, simhash_shard_*
 * on a shard.  The functions a user calls follow the dedup family's NULL
 * rule (22004 naming the first NULL argument, checked before any catalog
 * lookup; a NULL inside servers or ids too); the support functions
 * (simhash_layout_name, _check_args, _range, _blocks, _partitions, _parts)
 * are STRICT: NULL in, NULL or no rows out.
 */
CREATE FUNCTION @extschema@.simhash_block(fingerprint @extschema@.simhash64,
                                          block pg_catalog.int4, blocks pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'simhash_block'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.simhash_block(@extschema@.simhash64, pg_catalog.int4, pg_catalog.int4)
    IS 'block number block (from 1, most significant first) of a fingerprint cut into blocks blocks, as an integer: the partition key of a block-sharded copy';

CREATE FUNCTION @extschema@.simhash_shard_clusters(query pg_catalog.text, block pg_catalog.int4,
                                                   blocks pg_catalog.int4)
RETURNS TABLE(cluster_id pg_catalog.int8, ids pg_catalog.int8[])
AS 'MODULE_PATHNAME', 'simhash_shard_clusters'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;

COMMENT ON FUNCTION @extschema@.simhash_shard_clusters(pg_catalog.text, pg_catalog.int4, pg_catalog.int4)
    IS 'clusters of the pairs within blocks - 1 bits whose first agreeing block is block, among the (id, fingerprint) rows of a query, one row per cluster with its ids in order: one shard''s share of a block-sharded nightly run';

/* The names a layout's objects take; 42622 when one would be truncated. */
CREATE FUNCTION @extschema@.simhash_layout_name(layout pg_catalog.text, suffix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    n pg_catalog.text := layout OPERATOR(pg_catalog.||) suffix;
BEGIN
    IF pg_catalog.octet_length(n) OPERATOR(pg_catalog.>) 63 THEN
        RAISE EXCEPTION 'layout name "%" is too long', layout
            USING ERRCODE = '42622',
                  DETAIL = pg_catalog.format('Its table %s would exceed 63 bytes.', n);
    END IF;
    RETURN n;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_name(pg_catalog.text, pg_catalog.text)
    IS 'the name of one object of a block-sharded layout (layout name and a suffix such as _b1_p0), checked against the 63-byte limit';

/*
 * On each shard: the tables of every (copy, partition) of a layout, with a
 * hamming index on the fingerprints and a view of the partition's clusters
 * (part, ids: one row per cluster, its ids in order), whether or not the coordinator places the partition here (an unused
 * table stays empty; moving a partition fills one).  With exclude_within,
 * each table gets the near-duplicate constraint at that radius instead of
 * the plain index: two rows within blocks - 1 bits agree on some block and
 * meet in one partition of that block's copy, so the partitions'
 * constraints together hold for the whole layout.
 */
CREATE FUNCTION @extschema@.simhash_shard_create(layout pg_catalog.text,
                                                 blocks pg_catalog.int4 DEFAULT 4,
                                                 partitions pg_catalog.int4 DEFAULT 16,
                                                 exclude_within pg_catalog.int4 DEFAULT NULL)
RETURNS pg_catalog.int4
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    nsp pg_catalog.text := pg_catalog.current_schema()::pg_catalog.text;
    t pg_catalog.text;
    made pg_catalog.int4 := 0;
BEGIN
    IF layout IS NULL OR blocks IS NULL OR partitions IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' WHEN blocks IS NULL THEN 'blocks' ELSE 'partitions' END
            USING ERRCODE = '22004';
    END IF;
    PERFORM @extschema@.simhash_layout_check_args(blocks, partitions);
    IF exclude_within OPERATOR(pg_catalog.<) 0 OR exclude_within OPERATOR(pg_catalog.>=) blocks THEN
        RAISE EXCEPTION 'exclude_within must be between 0 and blocks - 1 (%)', blocks OPERATOR(pg_catalog.-) 1
            USING ERRCODE = '22023',
                  DETAIL = 'Two rows within blocks - 1 bits share a partition of some copy, where its constraint sees both; farther apart they may share none.';
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
            EXECUTE pg_catalog.format(
                'CREATE TABLE %1$I.%2$I (id pg_catalog.int8 PRIMARY KEY, sh @extschema@.simhash64 NOT NULL)',
                nsp, t);
            IF exclude_within IS NULL THEN
                EXECUTE pg_catalog.format('CREATE INDEX ON %1$I.%2$I USING hamming (sh)', nsp, t);
            ELSE
                -- its index serves the radius searches too (radius_index.c)
                EXECUTE pg_catalog.format(
                    'ALTER TABLE %1$I.%2$I ADD EXCLUDE USING hamming '
                    '(@extschema@.hamming_ball(sh, %3$s) WITH OPERATOR(@extschema@.&&))',
                    nsp, t, exclude_within);
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

COMMENT ON FUNCTION @extschema@.simhash_shard_create(pg_catalog.text, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4)
    IS 'on a shard: the tables (with a hamming index, or the near-duplicate constraint at exclude_within bits) and cluster views of every partition of a block-sharded layout';

CREATE FUNCTION @extschema@.simhash_layout_check_args(blocks pg_catalog.int4, partitions pg_catalog.int4)
RETURNS void
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
BEGIN
    IF blocks OPERATOR(pg_catalog.<) 2 OR blocks OPERATOR(pg_catalog.>) 16 THEN
        RAISE EXCEPTION 'blocks must be between 2 and 16' USING ERRCODE = '22023',
            HINT = 'Radius searches below blocks bits reach at most blocks shards; 4 blocks serve radii up to 3.';
    END IF;
    -- the narrowest block has 64 / blocks bits: at least that many values
    IF partitions OPERATOR(pg_catalog.<) 1
       OR partitions OPERATOR(pg_catalog.>) (1::pg_catalog.int8 OPERATOR(pg_catalog.<<) (64 OPERATOR(pg_catalog./) blocks))
       OR partitions OPERATOR(pg_catalog.>) 4096 THEN
        RAISE EXCEPTION 'partitions must be between 1 and %',
            LEAST(4096, 1::pg_catalog.int8 OPERATOR(pg_catalog.<<) (64 OPERATOR(pg_catalog./) blocks))
            USING ERRCODE = '22023';
    END IF;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_check_args(pg_catalog.int4, pg_catalog.int4)
    IS 'the checks of a block-sharded layout''s blocks and partitions (22023)';

/*
 * The block values [block_from, block_to) of partition `partition` of copy
 * `block`: the equal ranges simhash_layout_create makes.  Block b is 64 / blocks bits
 * wide, one more for the first 64 % blocks (nd_permute.h).
 */
CREATE FUNCTION @extschema@.simhash_layout_range(block pg_catalog.int4, blocks pg_catalog.int4,
                                                 partitions pg_catalog.int4, partition pg_catalog.int4,
                                                 OUT block_from pg_catalog.int8, OUT block_to pg_catalog.int8)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT ($4::pg_catalog.int8 OPERATOR(pg_catalog.<<) w) OPERATOR(pg_catalog./) $3,
           (($4 OPERATOR(pg_catalog.+) 1)::pg_catalog.int8 OPERATOR(pg_catalog.<<) w) OPERATOR(pg_catalog./) $3
    FROM (SELECT (64 OPERATOR(pg_catalog./) $2)
                 OPERATOR(pg_catalog.+) CASE WHEN $1 OPERATOR(pg_catalog.<=) (64 OPERATOR(pg_catalog.%) $2)
                                             THEN 1 ELSE 0 END AS w) x
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_range(pg_catalog.int4, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4)
    IS 'the block values [block_from, block_to) of one partition of one copy of a block-sharded layout';

/*
 * On the coordinator: for each block b, the copy <layout>_b<b>, range-
 * partitioned by simhash_block(sh, b, blocks) into `partitions` equal
 * ranges, each a foreign table over the shard table of the same name
 * (simhash_shard_create, in a schema of the same name), partition p of copy
 * b on servers[(b - 1 + p) % n + 1]; <layout>_clusters, list-partitioned
 * over the shards' cluster views; and the view <layout> of the fingerprints
 * (copy 1), by which the other functions name the layout.  Returns the
 * placement.
 */
CREATE FUNCTION @extschema@.simhash_layout_create(layout pg_catalog.text, servers pg_catalog.text[],
                                                  blocks pg_catalog.int4 DEFAULT 4,
                                                  partitions pg_catalog.int4 DEFAULT 16)
RETURNS TABLE(copy pg_catalog.regclass, block pg_catalog.int4, partition pg_catalog.int4,
              server pg_catalog.text, block_from pg_catalog.int8, block_to pg_catalog.int8)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    nsp pg_catalog.text := pg_catalog.current_schema()::pg_catalog.text;
    nservers pg_catalog.int4 := pg_catalog.cardinality(servers);
    t pg_catalog.text;
    ct pg_catalog.text;
    lo pg_catalog.int8;
    hi pg_catalog.int8;
    srv pg_catalog.text;
BEGIN
    IF layout IS NULL OR servers IS NULL OR blocks IS NULL OR partitions IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' WHEN servers IS NULL THEN 'servers'
                 WHEN blocks IS NULL THEN 'blocks' ELSE 'partitions' END
            USING ERRCODE = '22004';
    END IF;
    IF pg_catalog.array_position(servers, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'servers must not contain nulls' USING ERRCODE = '22004';
    END IF;
    PERFORM @extschema@.simhash_layout_check_args(blocks, partitions);
    IF nsp IS NULL THEN
        RAISE EXCEPTION 'no schema has been selected to create in' USING ERRCODE = '3F000';
    END IF;
    IF nservers OPERATOR(pg_catalog.=) 0 THEN
        RAISE EXCEPTION 'servers must name at least one foreign server'
            USING ERRCODE = '22023';
    END IF;
    PERFORM @extschema@.simhash_layout_name(layout,
        pg_catalog.format('_b%s_p%s_clusters', blocks, partitions OPERATOR(pg_catalog.-) 1));
    FOR i IN 1 .. nservers LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_server s
                       WHERE s.srvname OPERATOR(pg_catalog.=) servers[i]) THEN
            RAISE EXCEPTION 'server "%" does not exist', servers[i] USING ERRCODE = '42704',
                HINT = 'Create one per shard with CREATE SERVER ... FOREIGN DATA WRAPPER postgres_fdw.';
        END IF;
    END LOOP;

    EXECUTE pg_catalog.format(
        'CREATE TABLE %I.%I (part pg_catalog.int4 NOT NULL, ids pg_catalog.int8[]) '
        'PARTITION BY LIST (part)', nsp, layout OPERATOR(pg_catalog.||) '_clusters');
    FOR b IN 1 .. blocks LOOP
        t := layout OPERATOR(pg_catalog.||) '_b' OPERATOR(pg_catalog.||) b;
        EXECUTE pg_catalog.format(
            'CREATE TABLE %I.%I (id pg_catalog.int8 NOT NULL, sh @extschema@.simhash64 NOT NULL) '
            'PARTITION BY RANGE (@extschema@.simhash_block(sh, %s, %s))', nsp, t, b, blocks);
        FOR p IN 0 .. partitions OPERATOR(pg_catalog.-) 1 LOOP
            SELECT r.block_from, r.block_to INTO lo, hi
            FROM @extschema@.simhash_layout_range(b, blocks, partitions, p) r;
            srv := servers[((b OPERATOR(pg_catalog.-) 1 OPERATOR(pg_catalog.+) p)
                            OPERATOR(pg_catalog.%) nservers) OPERATOR(pg_catalog.+) 1];
            ct := pg_catalog.format('%s_b%s_p%s', layout, b, p);
            EXECUTE pg_catalog.format(
                'CREATE FOREIGN TABLE %1$I.%2$I PARTITION OF %1$I.%3$I FOR VALUES FROM (%4$s) TO (%5$s) '
                'SERVER %6$I OPTIONS (schema_name %7$L, table_name %8$L)',
                nsp, ct, t, lo, hi, srv, nsp, ct);
            EXECUTE pg_catalog.format(
                'CREATE FOREIGN TABLE %1$I.%2$I PARTITION OF %1$I.%3$I FOR VALUES IN (%4$s) '
                'SERVER %5$I OPTIONS (schema_name %6$L, table_name %7$L)',
                nsp, ct OPERATOR(pg_catalog.||) '_clusters', layout OPERATOR(pg_catalog.||) '_clusters',
                (b OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.*) partitions OPERATOR(pg_catalog.+) p,
                srv, nsp, ct OPERATOR(pg_catalog.||) '_clusters');
            copy := pg_catalog.format('%I.%I', nsp, t)::pg_catalog.regclass;
            block := b;
            partition := p;
            server := srv;
            block_from := lo;
            block_to := hi;
            RETURN NEXT;
        END LOOP;
    END LOOP;
    EXECUTE pg_catalog.format('CREATE VIEW %1$I.%2$I AS SELECT id, sh FROM %1$I.%3$I',
                              nsp, layout, layout OPERATOR(pg_catalog.||) '_b1');
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_create(pg_catalog.text, pg_catalog.text[], pg_catalog.int4, pg_catalog.int4)
    IS 'on the coordinator: a block-sharded layout of (id, fingerprint) rows over postgres_fdw servers, one copy per block partitioned by that block''s value';

/*
 * A layout's blocks, from the partition key of its first copy, <name>_b1:
 * simhash_block(sh, 1, blocks); 42809 for anything that is not a layout's
 * view.  Read from the catalogs without a lock or a privilege on the
 * copies (src/shard/layout_catalog.c, which simhash_layout_within_sql
 * shares).
 */
CREATE FUNCTION @extschema@.simhash_layout_blocks(layout pg_catalog.regclass)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'simhash_layout_blocks'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.simhash_layout_blocks(pg_catalog.regclass)
    IS 'the blocks (copies) of a block-sharded layout, named by its view';

/* The partitions of copy `block` of a layout, named by its view. */
CREATE FUNCTION @extschema@.simhash_layout_partitions(layout pg_catalog.regclass, block pg_catalog.int4)
RETURNS SETOF pg_catalog.regclass
LANGUAGE sql STABLE STRICT PARALLEL SAFE
AS $$
    SELECT i.inhrelid::pg_catalog.regclass
    FROM pg_catalog.pg_class v
    JOIN pg_catalog.pg_class c ON c.relnamespace OPERATOR(pg_catalog.=) v.relnamespace
         AND c.relname OPERATOR(pg_catalog.=) (v.relname OPERATOR(pg_catalog.||) '_b' OPERATOR(pg_catalog.||) $2)
    JOIN pg_catalog.pg_inherits i ON i.inhparent OPERATOR(pg_catalog.=) c.oid
    WHERE v.oid OPERATOR(pg_catalog.=) $1
    ORDER BY i.inhrelid
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_partitions(pg_catalog.regclass, pg_catalog.int4)
    IS 'the partitions of one copy of a block-sharded layout, named by its view';

/*
 * The schema and name of a layout's view, for the names of its parts, its
 * blocks and the partitions of each copy.
 */
CREATE FUNCTION @extschema@.simhash_layout_parts(layout pg_catalog.regclass,
                                                 OUT nsp pg_catalog.text, OUT name pg_catalog.text,
                                                 OUT blocks pg_catalog.int4, OUT partitions pg_catalog.int4)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
AS $$
    SELECT n.nspname::pg_catalog.text, c.relname::pg_catalog.text, @extschema@.simhash_layout_blocks(layout),
           (SELECT pg_catalog.count(*)::pg_catalog.int4 FROM @extschema@.simhash_layout_partitions(layout, 1))
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
    WHERE c.oid OPERATOR(pg_catalog.=) layout
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_parts(pg_catalog.regclass)
    IS 'the schema, name, blocks and partitions per copy of a block-sharded layout, named by its view';

/*
 * The query for the rows within max_distance bits of a fingerprint, each
 * once, for EXPLAIN or a caller's own SQL.  Below the layout's blocks, one
 * partition in each of the first max_distance + 1 copies (the sharpened
 * pigeonhole of nd_permute.h): copy b answers for the rows whose first
 * block equal to the fingerprint's is b, so no row comes twice.  From
 * `blocks` bits up, every partition of the first copy.  In C
 * (src/shard/layout_within.c): each copy's partition is found from its
 * bounds in the relcache, where PL/pgSQL's catalog queries took a third of
 * a search.
 */
CREATE FUNCTION @extschema@.simhash_layout_within_sql(layout pg_catalog.regclass,
                                                      fingerprint @extschema@.simhash64,
                                                      max_distance pg_catalog.int4)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'simhash_layout_within_sql'
LANGUAGE C STABLE;

COMMENT ON FUNCTION @extschema@.simhash_layout_within_sql(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4)
    IS 'the query simhash_layout_within runs: below the layout''s blocks, one partition in each of max_distance + 1 copies';

CREATE FUNCTION @extschema@.simhash_layout_within(layout pg_catalog.regclass,
                                                  fingerprint @extschema@.simhash64,
                                                  max_distance pg_catalog.int4)
RETURNS TABLE(id pg_catalog.int8, sh @extschema@.simhash64, distance pg_catalog.int4)
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF layout IS NULL OR fingerprint IS NULL OR max_distance IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' WHEN fingerprint IS NULL THEN 'fingerprint' ELSE 'max_distance' END
            USING ERRCODE = '22004';
    END IF;
    RETURN QUERY EXECUTE @extschema@.simhash_layout_within_sql(layout, fingerprint, max_distance);
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_within(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4)
    IS 'rows of a block-sharded layout within max_distance bits of a fingerprint, each once: below the layout''s blocks, one partition in each of max_distance + 1 copies';

/*
 * The n nearest rows, exactly (ties by id).  The radius search at blocks - 1
 * finds every row that near; if n of them are, they are the answer.
 * Otherwise, two rounds over every partition of the first copy, each
 * partition's query shipped whole and all of them read together (a
 * materialized UNION ALL: a sorted one would be a Merge Append, which reads
 * the shards one after another): each partition's n nearest by distance
 * alone (an ordered scan of its hamming index; ordering by id too would
 * sort the partition) give D, the n-th smallest distance among them, which
 * is the layout's n-th smallest distance; then every row within D (a radius
 * search), of which the coordinator keeps the first by (distance, id).
 */
CREATE FUNCTION @extschema@.simhash_layout_nearest(layout pg_catalog.regclass,
                                                   fingerprint @extschema@.simhash64,
                                                   n pg_catalog.int4)
RETURNS TABLE(id pg_catalog.int8, sh @extschema@.simhash64, distance pg_catalog.int4)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    l record;
    q pg_catalog.text := pg_catalog.quote_literal(fingerprint::pg_catalog.text)
                         OPERATOR(pg_catalog.||) '::@extschema@.simhash64';
    found pg_catalog.int8;
    parts pg_catalog.text[];
    radius pg_catalog.int4;
BEGIN
    IF layout IS NULL OR fingerprint IS NULL OR n IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' WHEN fingerprint IS NULL THEN 'fingerprint' ELSE 'n' END
            USING ERRCODE = '22004';
    END IF;
    l := @extschema@.simhash_layout_parts(layout);
    IF n OPERATOR(pg_catalog.<) 0 THEN
        RAISE EXCEPTION 'n must not be negative' USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
        SELECT w.id, w.sh, w.distance
        FROM @extschema@.simhash_layout_within(layout, fingerprint, l.blocks OPERATOR(pg_catalog.-) 1) w
        ORDER BY w.distance, w.id LIMIT n;
    GET DIAGNOSTICS found = ROW_COUNT;
    IF found OPERATOR(pg_catalog.=) n THEN
        RETURN;
    END IF;
    -- fewer than n within blocks - 1 bits: every partition of copy 1
    SELECT pg_catalog.array_agg(c::pg_catalog.text) INTO parts
    FROM @extschema@.simhash_layout_partitions(layout, 1) c;
    EXECUTE pg_catalog.format(
        'WITH u AS MATERIALIZED (%s) SELECT pg_catalog.max(d) FROM (SELECT d FROM u ORDER BY d LIMIT %s) x',
        (SELECT pg_catalog.string_agg(pg_catalog.format(
                    'SELECT d FROM (SELECT sh OPERATOR(@extschema@.<~>) %2$s AS d FROM %1$s '
                    'ORDER BY sh OPERATOR(@extschema@.<~>) %2$s LIMIT %3$s) s', p, q, n),
                ' UNION ALL ')
         FROM pg_catalog.unnest(parts) p),
        n)
        INTO radius;
    IF radius IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pg_catalog.format(
        'WITH u AS MATERIALIZED (%s) SELECT u.id, u.sh, u.distance FROM u '
        'WHERE u.distance OPERATOR(pg_catalog.>=) %s ORDER BY u.distance, u.id LIMIT %s',
        (SELECT pg_catalog.string_agg(pg_catalog.format(
                    'SELECT id, sh, sh OPERATOR(@extschema@.<~>) %2$s AS distance FROM %1$s '
                    'WHERE sh OPERATOR(@extschema@.<~>) %2$s OPERATOR(pg_catalog.<=) %3$s', p, q, radius),
                ' UNION ALL ')
         FROM pg_catalog.unnest(parts) p),
        l.blocks, n OPERATOR(pg_catalog.-) found);
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_nearest(pg_catalog.regclass, @extschema@.simhash64, pg_catalog.int4)
    IS 'the n nearest rows of a block-sharded layout to a fingerprint, exactly (ties by id): a radius search when blocks - 1 bits hold n rows, else two rounds over every partition of one copy';

/*
 * Writes reach every copy in one statement: the query's rows go into each
 * copy (postgres_fdw sends them to the shards in batches of the server's
 * batch_size), and the deletes remove the ids from each.  The query runs
 * once, as written, with the caller's rights and search_path.
 */
CREATE FUNCTION @extschema@.simhash_layout_insert(layout pg_catalog.regclass, query pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    l record;
    ctes pg_catalog.text := '';
    n pg_catalog.int8;
BEGIN
    IF layout IS NULL OR query IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' ELSE 'query' END
            USING ERRCODE = '22004';
    END IF;
    l := @extschema@.simhash_layout_parts(layout);
    FOR b IN 1 .. l.blocks LOOP
        ctes := ctes OPERATOR(pg_catalog.||) pg_catalog.format(
            ', c%1$s AS (INSERT INTO %2$I.%3$I (id, sh) SELECT id, sh FROM src)',
            b, l.nsp, l.name OPERATOR(pg_catalog.||) '_b' OPERATOR(pg_catalog.||) b);
    END LOOP;
    EXECUTE pg_catalog.format(
        'WITH src(id, sh) AS MATERIALIZED (%s)%s SELECT pg_catalog.count(*) FROM src', query, ctes)
        INTO n;
    RETURN n;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_insert(pg_catalog.regclass, pg_catalog.text)
    IS 'insert the (id, fingerprint) rows of a query into every copy of a block-sharded layout, in one statement';

CREATE FUNCTION @extschema@.simhash_layout_delete(layout pg_catalog.regclass, ids pg_catalog.int8[])
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    l record;
    ctes pg_catalog.text := '';
    n pg_catalog.int8;
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
    FOR b IN 1 .. l.blocks LOOP
        ctes := ctes OPERATOR(pg_catalog.||) pg_catalog.format(
            '%1$s c%2$s AS (DELETE FROM %3$I.%4$I WHERE id OPERATOR(pg_catalog.=) ANY ($1) RETURNING 1)',
            CASE WHEN b OPERATOR(pg_catalog.=) 1 THEN 'WITH' ELSE ',' END,
            b, l.nsp, l.name OPERATOR(pg_catalog.||) '_b' OPERATOR(pg_catalog.||) b);
    END LOOP;
    EXECUTE ctes OPERATOR(pg_catalog.||) ' SELECT pg_catalog.count(*) FROM c1' INTO n USING ids;
    RETURN n;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_delete(pg_catalog.regclass, pg_catalog.int8[])
    IS 'delete ids from every copy of a block-sharded layout, in one statement; returns the rows deleted from one copy';

/*
 * Do the copies hold the same rows?  Each copy's row count and a checksum
 * of its ids (a sum of hashint8), aggregated on the shards (one aggregate
 * query per partition, which postgres_fdw ships whole: one row per
 * partition crosses the network), and whether both equal copy 1's.  A
 * commit that failed on some shards (postgres_fdw has no two-phase commit)
 * or a write that bypassed the coordinator shows as a copy that differs.
 */
CREATE FUNCTION @extschema@.simhash_layout_check(layout pg_catalog.regclass)
RETURNS TABLE(block pg_catalog.int4, row_count pg_catalog.int8, id_checksum pg_catalog.int8,
              consistent pg_catalog.bool)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    l record := @extschema@.simhash_layout_parts(layout);
    first_count pg_catalog.int8;
    first_sum pg_catalog.int8;
    sql pg_catalog.text;
BEGIN
    IF layout IS NULL THEN
        RAISE EXCEPTION 'layout must not be null' USING ERRCODE = '22004';
    END IF;
    FOR b IN 1 .. l.blocks LOOP
        SELECT pg_catalog.string_agg(pg_catalog.format(
                   'SELECT pg_catalog.count(*) AS n, pg_catalog.sum(pg_catalog.hashint8(id)) AS h FROM %s', c),
                   ' UNION ALL ')
        INTO sql
        FROM @extschema@.simhash_layout_partitions(layout, b) c;
        EXECUTE pg_catalog.format(
            'SELECT COALESCE(pg_catalog.sum(n), 0)::pg_catalog.int8, COALESCE(pg_catalog.sum(h), 0)::pg_catalog.int8 '
            'FROM (%s) u', sql)
            INTO row_count, id_checksum;
        IF b OPERATOR(pg_catalog.=) 1 THEN
            first_count := row_count;
            first_sum := id_checksum;
        END IF;
        block := b;
        consistent := row_count OPERATOR(pg_catalog.=) first_count
                      AND id_checksum OPERATOR(pg_catalog.=) first_sum;
        RETURN NEXT;
    END LOOP;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_check(pg_catalog.regclass)
    IS 'each copy of a block-sharded layout: its rows and a checksum of its ids, aggregated on the shards, and whether they equal copy 1''s';

/*
 * The nightly clusters, from edges: every shard clusters, on its own, the
 * partitions it holds (simhash_shard_clusters, through the cluster views);
 * only the rows with a near copy in their partition cross the network, one
 * row per partition cluster holding its ids (the first is the smallest):
 * about half the text of its edges (id, cluster_id).  dedup_clusters joins
 * each such array as one group; the components equal
 * simhash_clusters(max_distance => blocks - 1) over the rows.
 */
CREATE FUNCTION @extschema@.simhash_layout_clusters_sql(layout pg_catalog.regclass)
RETURNS pg_catalog.text
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    l record;
BEGIN
    IF layout IS NULL THEN
        RAISE EXCEPTION 'layout must not be null' USING ERRCODE = '22004';
    END IF;
    l := @extschema@.simhash_layout_parts(layout);
    RETURN pg_catalog.format('SELECT ids FROM %I.%I',
                             l.nsp, l.name OPERATOR(pg_catalog.||) '_clusters');
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_clusters_sql(pg_catalog.regclass)
    IS 'the query of the partition clusters of a block-sharded layout (one array of ids per row), which simhash_layout_clusters gives dedup_clusters';

/*
 * A SQL function, inlined into the caller's query (STABLE, not STRICT, one
 * SELECT): the caller reads dedup_clusters' result directly, where a
 * PL/pgSQL RETURN QUERY would copy its millions of rows once more.
 */
CREATE FUNCTION @extschema@.simhash_layout_clusters(layout pg_catalog.regclass)
RETURNS TABLE(id pg_catalog.int8, cluster_id pg_catalog.int8)
LANGUAGE sql STABLE
AS $$
    SELECT c.id, c.cluster_id
    FROM @extschema@.dedup_clusters(@extschema@.simhash_layout_clusters_sql(layout)) c
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_clusters(pg_catalog.regclass)
    IS 'clusters of a block-sharded layout within blocks - 1 bits, from the clusters each shard finds on its own';

/*
 * Moves one partition of one copy to another server (adding a shard):
 * copies its rows into the target's empty table of the same name, points
 * the coordinator's partition and cluster partition there and empties the
 * source's table, in the caller's transaction.  Writes to that copy wait
 * for the move; reads do not.
 */
CREATE FUNCTION @extschema@.simhash_layout_move(layout pg_catalog.regclass, block pg_catalog.int4,
                                                partition pg_catalog.int4, server pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    l record;
    copy pg_catalog.text;
    part pg_catalog.text;
    bound pg_catalog.text;
    old_server pg_catalog.text;
    nonempty pg_catalog.bool;
    n pg_catalog.int8;
BEGIN
    IF layout IS NULL OR block IS NULL OR partition IS NULL OR server IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' WHEN block IS NULL THEN 'block'
                 WHEN partition IS NULL THEN 'partition' ELSE 'server' END
            USING ERRCODE = '22004';
    END IF;
    l := @extschema@.simhash_layout_parts(layout);
    IF block OPERATOR(pg_catalog.<) 1 OR block OPERATOR(pg_catalog.>) l.blocks THEN
        RAISE EXCEPTION 'block must be between 1 and %', l.blocks USING ERRCODE = '22023';
    END IF;
    copy := pg_catalog.format('%I.%I', l.nsp, l.name OPERATOR(pg_catalog.||) '_b' OPERATOR(pg_catalog.||) block);
    part := pg_catalog.format('%s_b%s_p%s', l.name, block, partition);
    SELECT pg_catalog.pg_get_expr(c.relpartbound, c.oid), s.srvname::pg_catalog.text
    INTO bound, old_server
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_foreign_table f ON f.ftrelid OPERATOR(pg_catalog.=) c.oid
    JOIN pg_catalog.pg_foreign_server s ON s.oid OPERATOR(pg_catalog.=) f.ftserver
    JOIN pg_catalog.pg_namespace ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
    WHERE ns.nspname OPERATOR(pg_catalog.=) l.nsp AND c.relname OPERATOR(pg_catalog.=) part;
    IF bound IS NULL THEN
        RAISE EXCEPTION 'layout "%" has no partition % of block %', layout, partition, block
            USING ERRCODE = '22023';
    END IF;
    IF old_server OPERATOR(pg_catalog.=) server THEN
        RETURN 0::pg_catalog.int8;
    END IF;
    EXECUTE pg_catalog.format('LOCK TABLE %s IN EXCLUSIVE MODE', copy);
    EXECUTE pg_catalog.format(
        'CREATE FOREIGN TABLE %1$I.%2$I (id pg_catalog.int8 NOT NULL, sh @extschema@.simhash64 NOT NULL) '
        'SERVER %3$I OPTIONS (schema_name %4$L, table_name %5$L)',
        l.nsp, part OPERATOR(pg_catalog.||) '_moving', server, l.nsp, part);
    EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM %I.%I)', l.nsp, part OPERATOR(pg_catalog.||) '_moving')
        INTO STRICT nonempty;
    IF nonempty THEN
        RAISE EXCEPTION 'table %.% on server "%" is not empty', l.nsp, part, server
            USING ERRCODE = '55000', HINT = 'Empty it on the shard first.';
    END IF;
    EXECUTE pg_catalog.format('INSERT INTO %1$I.%2$I SELECT id, sh FROM %1$I.%3$I',
                              l.nsp, part OPERATOR(pg_catalog.||) '_moving', part);
    GET DIAGNOSTICS n = ROW_COUNT;
    EXECUTE pg_catalog.format('TRUNCATE %I.%I', l.nsp, part);
    EXECUTE pg_catalog.format('DROP FOREIGN TABLE %I.%I', l.nsp, part);
    EXECUTE pg_catalog.format('ALTER FOREIGN TABLE %1$I.%2$I RENAME TO %3$I',
                              l.nsp, part OPERATOR(pg_catalog.||) '_moving', part);
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
    RETURN n;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_move(pg_catalog.regclass, pg_catalog.int4, pg_catalog.int4, pg_catalog.text)
    IS 'move one partition of a block-sharded layout''s copy to another server (its rows and its cluster view)';

-- ===== end section: block-sharded layout =====

-- ===== section: GiST without index-only scans (doc/index-gist.md) =====

/*
 * PostgreSQL's GiST index-only scans are not interlocked with VACUUM: a
 * scan copies a leaf page's entries and drops its pin, VACUUM may then
 * remove entries and rows the scan still holds and mark their heap page
 * all-visible, and the scan returns them -- rows its snapshot does not see
 * (a known PostgreSQL bug, present in 15; test/e2e/index_races.sh part 4
 * reproduces it).  Without a fetch function the planner offers plain index
 * scans only, which check each row against the snapshot.  Indexes need no
 * REINDEX.  The function stays: a session that opened a GiST index before
 * the update keeps its cached support functions, and plans index-only
 * scans, until it reconnects (doc/upgrading.md); dropped, they would fail
 * with "cache lookup failed".
 */
ALTER OPERATOR FAMILY @extschema@.simhash64_gist_ops USING gist
    DROP FUNCTION 9 (@extschema@.simhash64, @extschema@.simhash64);
COMMENT ON FUNCTION @extschema@.gist_simhash64_fetch(pg_catalog.internal) IS 'GiST support of 0.1 and 0.2 (index-only scans), unused since 0.3: no operator class names it';

-- ===== end section: GiST without index-only scans =====
