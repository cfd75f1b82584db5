/* neardup 0.3 -> 0.3.1 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION neardup UPDATE TO '0.3.1'" to load this file. \quit

--
-- 0.3.1 fixes what the audit of 0.3 found (doc/upgrading.md lists them).
-- The scripts of 0.1, 0.2 and 0.3 are released and never edited; a fresh
-- CREATE EXTENSION runs 0.1's and then every update.
--
-- Indexes built by 0.3 need no REINDEX.
--
-- The same conventions as the install script: every object schema-qualified
-- with @extschema@, every built-in type and operator with pg_catalog.
--

-- ===== section: progress of long jobs (src/dedup/progress.c) =====

-- ===== end section: progress of long jobs =====



-- ===== section: arguments refused (radius limits) =====

/*
 * Every function that takes a radius refuses one it cannot mean, with
 * 22023 and a DETAIL, as simhash_clusters_update did: 0..15 for the
 * all-pairs jobs (simhash_pairs, simhash_clusters, their band keys,
 * simhash_pairs_since, simhash_clusters_update), 0..64 where the radius is
 * a Hamming radius of 64-bit fingerprints (hamming_ball, simhash_recall,
 * simhash_similar_exact, simhash_layout_within), 0..blocks - 1 for
 * simhash_shard_create's exclude_within.  within(a, b, radius) stays a
 * comparison, true or false for any radius, like the `a <~> b <= radius`
 * that the planner rewrites into it.  sql/18_radius_limits.sql lists them
 * from the catalog.
 */

/*
 * hamming_ball(q, r): 0.3 made r < 0 the empty ball and r > 64 the full
 * one.  The function is evaluated on every insert into an index on it, the
 * near-duplicate constraint's included, so an index whose expression has
 * a constant radius outside 0..64 would refuse every insert from now on:
 * the update stops first, and says how to rebuild it with the radius 0.3
 * used.
 */
DO $guard$
DECLARE
    bad pg_catalog.text;
BEGIN
    SELECT pg_catalog.string_agg(pg_catalog.format('%s (%s)', x.ix::pg_catalog.regclass, x.expr), ', '
                                 ORDER BY x.ix::pg_catalog.regclass::pg_catalog.text)
      INTO bad
      FROM (SELECT DISTINCT i.indexrelid AS ix, pg_catalog.pg_get_indexdef(i.indexrelid, k.k, true) AS expr
              FROM pg_catalog.pg_depend d
              JOIN pg_catalog.pg_index i ON i.indexrelid OPERATOR(pg_catalog.=) d.objid
             CROSS JOIN LATERAL pg_catalog.generate_series(1, i.indnatts::pg_catalog.int4) k(k)
             WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
               AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
               AND d.refobjid OPERATOR(pg_catalog.=) '@extschema@.hamming_ball(@extschema@.simhash64, pg_catalog.int4)'::pg_catalog.regprocedure) x
     WHERE (pg_catalog.regexp_match(x.expr, '^(?:\S+\.)?hamming_ball\(.*, \(?''?(-?[0-9]+)''?(?:::integer)?\)?\)$'))[1]::pg_catalog.int8
           NOT BETWEEN 0 AND 64;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot update neardup to 0.3.1: indexes call hamming_ball() with a radius outside 0..64: %', bad
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'From 0.3.1, hamming_ball() refuses such a radius, and these indexes evaluate it on every insert.',
                  HINT = 'Rebuild each with radius 64 where it is larger (0.3 used 64: the constraint is the same), drop it where the radius is negative (it held nothing), then update.';
    END IF;
END
$guard$;

CREATE OR REPLACE FUNCTION @extschema@.hamming_ball(center @extschema@.simhash64, radius pg_catalog.int4)
RETURNS @extschema@.hamming_ball
AS 'MODULE_PATHNAME', 'hamming_ball_make_checked'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

/*
 * simhash_similar_exact: the radius is checked as hamming_ball() checks
 * it, on a constant center, so that a constant radius is folded (and
 * refused) at plan time and the function is still inlined.
 */
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
SELECT @extschema@.within(sh, query,
                          @extschema@.radius(@extschema@.hamming_ball('0000000000000000'::@extschema@.simhash64,
                                                                      COALESCE(radius, @extschema@.simhash_radius(threshold, 0.95)))))
       AND @extschema@.jaccard(doc, query_doc, shingle, unit, seed) OPERATOR(pg_catalog.>=) threshold
$$;

/*
 * simhash_pairs_since: max_distance 0..15, as simhash_pairs and
 * simhash_clusters_update take it.  0.3 sent any other radius to the index
 * probes: 505000 ran a self-join of every row with every row.  The body is
 * 0.3's but for the check.
 */
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
    how pg_catalog.text;
BEGIN
    IF source IS NULL OR id_column IS NULL OR fingerprint_column IS NULL OR max_distance IS NULL THEN
        RAISE EXCEPTION 'source, id_column, fingerprint_column and max_distance must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF max_distance OPERATOR(pg_catalog.<) 0 THEN
        RAISE EXCEPTION 'max_distance must be between 0 and 15'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF max_distance OPERATOR(pg_catalog.>) 15 THEN
        -- as simhash_pairs and simhash_clusters say it (src/dedup/pairs_args.h)
        RAISE EXCEPTION 'max_distance must be between 0 and 15'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Above 15 bits, unrelated 64-bit fingerprints fall within the radius by chance (1 pair in 8,800 at 17 bits), and an exact search costs as much as comparing every pair.',
                  HINT = 'For a Jaccard threshold such as 0.8, cluster MinHash signatures with minhash_clusters(query, 0.8, recall => 0.95), or check candidates with simhash_similar_exact().';
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
    -- cheaper; when since was given, a NOTICE says so.
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

-- ===== end section: arguments refused =====



-- ===== section: MinHash band lookups (src/planner/band_support.c) =====

-- ===== end section: MinHash band lookups =====



-- ===== section: the hamming index (src/hamming) =====

-- ===== end section: the hamming index =====



-- ===== section: block-sharded layout (src/shard, doc/scale-out.md) =====

/*
 * What a copy holds, as one value to compare: its rows, a checksum of its
 * ids (a sum of hashint8) and one of its (id, fingerprint) rows (a sum of
 * hashint8extended of the fingerprint seeded by the id), aggregated on the
 * shards (one aggregate query per partition or table named, which
 * postgres_fdw ships whole).  simhash_layout_check compares the copies
 * with it, simhash_layout_move_partition a partition's old and new tables.
 */
CREATE FUNCTION @extschema@.simhash_layout_digest(relations pg_catalog.regclass[],
                                                  OUT row_count pg_catalog.int8,
                                                  OUT id_checksum pg_catalog.int8,
                                                  OUT row_checksum pg_catalog.numeric)
LANGUAGE plpgsql STABLE STRICT
AS $$
BEGIN
    IF pg_catalog.cardinality(relations) OPERATOR(pg_catalog.=) 0 THEN
        row_count := 0;
        id_checksum := 0;
        row_checksum := 0;
        RETURN;
    END IF;
    EXECUTE pg_catalog.format(
        'SELECT COALESCE(pg_catalog.sum(n), 0)::pg_catalog.int8, COALESCE(pg_catalog.sum(h), 0)::pg_catalog.int8, '
        'COALESCE(pg_catalog.sum(r), 0) FROM (%s) u',
        (SELECT pg_catalog.string_agg(pg_catalog.format(
                    'SELECT pg_catalog.count(*) AS n, pg_catalog.sum(pg_catalog.hashint8(id)) AS h, '
                    'pg_catalog.sum(pg_catalog.hashint8extended(sh::pg_catalog.int8, id)) AS r FROM %s', c),
                ' UNION ALL ')
         FROM pg_catalog.unnest(relations) c))
        INTO row_count, id_checksum, row_checksum;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_digest(pg_catalog.regclass[])
    IS 'the rows of some tables of a block-sharded layout, with checksums of their ids and of their (id, fingerprint) rows, aggregated on the shards';

/*
 * Do the copies hold the same rows?  Each copy's digest
 * (simhash_layout_digest: rows, a checksum of ids and one of (id,
 * fingerprint) rows), and whether it is the digest of more than half of
 * the copies.  Copies are compared with each other, not with one of them:
 * a copy that lost rows or holds a changed fingerprint is the one that
 * differs, and when no digest has a majority (two copies that differ, or
 * four split two and two) no copy is called consistent.  A commit that
 * failed on some shards (postgres_fdw has no two-phase commit) or a write
 * that bypassed the coordinator shows as a copy that differs.  Reads every
 * partition by name (SELECT on them).
 */
CREATE OR REPLACE FUNCTION @extschema@.simhash_layout_check(layout pg_catalog.regclass)
RETURNS TABLE(block pg_catalog.int4, row_count pg_catalog.int8, id_checksum pg_catalog.int8,
              consistent pg_catalog.bool)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    l record;
    counts pg_catalog.int8[] := '{}'::pg_catalog.int8[];
    ids pg_catalog.int8[] := '{}'::pg_catalog.int8[];
    rows_ pg_catalog.numeric[] := '{}'::pg_catalog.numeric[];
    d record;
    same pg_catalog.int4;
BEGIN
    IF layout IS NULL THEN
        RAISE EXCEPTION 'layout must not be null' USING ERRCODE = '22004';
    END IF;
    l := @extschema@.simhash_layout_parts(layout);
    FOR b IN 1 .. l.blocks LOOP
        d := @extschema@.simhash_layout_digest(ARRAY(SELECT @extschema@.simhash_layout_partitions(layout, b)));
        counts := counts OPERATOR(pg_catalog.||) d.row_count;
        ids := ids OPERATOR(pg_catalog.||) d.id_checksum;
        rows_ := rows_ OPERATOR(pg_catalog.||) d.row_checksum;
    END LOOP;
    FOR b IN 1 .. l.blocks LOOP
        same := 0;
        FOR o IN 1 .. l.blocks LOOP
            IF counts[o] OPERATOR(pg_catalog.=) counts[b] AND ids[o] OPERATOR(pg_catalog.=) ids[b]
               AND rows_[o] OPERATOR(pg_catalog.=) rows_[b] THEN
                same := same OPERATOR(pg_catalog.+) 1;
            END IF;
        END LOOP;
        block := b;
        row_count := counts[b];
        id_checksum := ids[b];
        consistent := same OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.>) l.blocks;
        RETURN NEXT;
    END LOOP;
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_check(pg_catalog.regclass)
    IS 'each copy of a block-sharded layout: its rows and a checksum of its ids, aggregated on the shards, and whether its (id, fingerprint) rows are those of more than half of the copies';

/*
 * Deletes from every copy in one statement, and returns the most rows
 * deleted from any copy: the rows of the given ids, when the copies agree.
 * When they do not (some copy lacked an id), a warning gives each copy's
 * count, and simhash_layout_check tells which copy differs.
 */
CREATE OR REPLACE FUNCTION @extschema@.simhash_layout_delete(layout pg_catalog.regclass, ids pg_catalog.int8[])
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    l record;
    ctes pg_catalog.text := '';
    counts pg_catalog.int8[];
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
    EXECUTE ctes OPERATOR(pg_catalog.||) ' SELECT ARRAY['
        OPERATOR(pg_catalog.||) (SELECT pg_catalog.string_agg(pg_catalog.format(
                                     '(SELECT pg_catalog.count(*) FROM c%s)', b), ', ' ORDER BY b)
                                 FROM pg_catalog.generate_series(1, l.blocks) b)
        OPERATOR(pg_catalog.||) ']'
        INTO counts USING ids;
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
    IS 'delete ids from every copy of a block-sharded layout, in one statement; returns the most rows deleted from any copy, and warns when the copies differ';

/*
 * The n nearest rows, exactly (ties by id), as 0.3 (the radius search at
 * blocks - 1, then two rounds over copy 1's partitions), except that the
 * rounds name copy 1 itself rather than its partitions when the caller may
 * not SELECT some partition or row security is active on copy 1 or a
 * partition (as simhash_layout_within_sql does for its arms): the answer is
 * then what the caller reads through copy 1, its partitions read one after
 * another.
 */
CREATE OR REPLACE FUNCTION @extschema@.simhash_layout_nearest(layout pg_catalog.regclass,
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
    copy1 pg_catalog.regclass;
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
    copy1 := pg_catalog.format('%I.%I', l.nsp, l.name OPERATOR(pg_catalog.||) '_b1')::pg_catalog.regclass;
    SELECT pg_catalog.array_agg(c::pg_catalog.text) INTO parts
    FROM @extschema@.simhash_layout_partitions(layout, 1) c;
    IF pg_catalog.row_security_active(copy1)
       OR EXISTS (SELECT FROM @extschema@.simhash_layout_partitions(layout, 1) c
                  WHERE NOT pg_catalog.has_table_privilege(c, 'SELECT')
                     OR pg_catalog.row_security_active(c)) THEN
        parts := ARRAY[copy1::pg_catalog.text];
    END IF;
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

/*
 * Moving a partition (adding a shard) cannot be one transaction:
 * postgres_fdw commits the shards one after another without two-phase
 * commit, so a copy to the new shard and the emptying of the old one in one
 * transaction lose the rows when the new shard's commit fails after the old
 * one's succeeded.  The function now refuses, before any change; the
 * procedure simhash_layout_move_partition commits in steps.
 */
CREATE OR REPLACE FUNCTION @extschema@.simhash_layout_move(layout pg_catalog.regclass, block pg_catalog.int4,
                                                           partition pg_catalog.int4, server pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF layout IS NULL OR block IS NULL OR partition IS NULL OR server IS NULL THEN
        RAISE EXCEPTION '% must not be null',
            CASE WHEN layout IS NULL THEN 'layout' WHEN block IS NULL THEN 'block'
                 WHEN partition IS NULL THEN 'partition' ELSE 'server' END
            USING ERRCODE = '22004';
    END IF;
    RAISE EXCEPTION 'simhash_layout_move() cannot move a partition safely in one transaction'
        USING ERRCODE = '0A000',
              DETAIL = 'postgres_fdw commits the shards one after another: the old shard''s table could be emptied while the new one''s copy fails to commit.',
              HINT = pg_catalog.format('Run CALL %s.simhash_layout_move_partition(%L, %s, %s, %L) outside a transaction block: it commits the copy before it empties the old table.',
                                       pg_catalog.quote_ident('@extschema@'), layout::pg_catalog.text,
                                       block, partition, server);
END
$$;

COMMENT ON FUNCTION @extschema@.simhash_layout_move(pg_catalog.regclass, pg_catalog.int4, pg_catalog.int4, pg_catalog.text)
    IS 'refused (0A000): a partition moves with CALL simhash_layout_move_partition, which commits in steps';

/*
 * Moves one partition of one copy to another server, in two transactions
 * of its own (CALL it outside a transaction block), each leaving a correct
 * state:
 *
 * 1. Under a lock of the copy against writes: copy the rows into the
 *    target's table of the same name (refused if it holds other rows; kept
 *    if it holds exactly these, from a run whose switch did not commit),
 *    verify the target's count and checksums against the source's, point
 *    the coordinator's partition and cluster partition at the target, keep
 *    the old table as the foreign table <partition>_moved_from, and mark
 *    the new partition updatable 'false', which refuses writes to the copy
 *    until step 2.  Commit: postgres_fdw commits the target's rows before
 *    the coordinator's switch, so a failed commit leaves either nothing
 *    (the coordinator reads the old table, which still has every row) or
 *    the rows on both servers with the coordinator still on the old one.
 * 2. Under the lock again: verify the new table against the old one
 *    (count, checksums of ids and of (id, fingerprint)), empty the old one,
 *    drop <partition>_moved_from and allow writes again.  Commit: a failure
 *    leaves the old rows, unread, or an empty old table still marked.
 *
 * A rerun finishes a move that stopped after step 1 (the mark,
 * <partition>_moved_from, says so).  Returns the rows moved.
 */
CREATE PROCEDURE @extschema@.simhash_layout_move_partition(layout pg_catalog.regclass, block pg_catalog.int4,
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
    l := @extschema@.simhash_layout_parts(layout);
    IF block OPERATOR(pg_catalog.<) 1 OR block OPERATOR(pg_catalog.>) l.blocks THEN
        RAISE EXCEPTION 'block must be between 1 and %', l.blocks USING ERRCODE = '22023';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_foreign_server s WHERE s.srvname OPERATOR(pg_catalog.=) server) THEN
        RAISE EXCEPTION 'server "%" does not exist', server USING ERRCODE = '42704';
    END IF;
    copy := pg_catalog.format('%I.%I', l.nsp, l.name OPERATOR(pg_catalog.||) '_b' OPERATOR(pg_catalog.||) block);
    part := pg_catalog.format('%s_b%s_p%s', l.name, block, partition);
    old_part := part OPERATOR(pg_catalog.||) '_moved_from';
    PERFORM @extschema@.simhash_layout_name(l.name, pg_catalog.format('_b%s_p%s_moved_from', block, partition));

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
        src := @extschema@.simhash_layout_digest(ARRAY[rel_old]);
        dst := @extschema@.simhash_layout_digest(ARRAY[rel_new]);
        IF dst.row_count OPERATOR(pg_catalog.>) 0 AND dst IS DISTINCT FROM src THEN
            RAISE EXCEPTION 'table %.% on server "%" is not empty', l.nsp, part, server
                USING ERRCODE = '55000',
                      DETAIL = 'It holds other rows than the partition on server "' OPERATOR(pg_catalog.||) cur_server OPERATOR(pg_catalog.||) '".',
                      HINT = 'Empty it on the shard first.';
        END IF;
        IF dst.row_count OPERATOR(pg_catalog.=) 0 AND src.row_count OPERATOR(pg_catalog.>) 0 THEN
            EXECUTE pg_catalog.format('INSERT INTO %s SELECT id, sh FROM %s', rel_new, rel_old);
            dst := @extschema@.simhash_layout_digest(ARRAY[rel_new]);
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
    src := @extschema@.simhash_layout_digest(ARRAY[rel_old]);
    dst := @extschema@.simhash_layout_digest(ARRAY[rel_new]);
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
        EXECUTE pg_catalog.format('TRUNCATE %s', rel_old);
    END IF;
    moved := COALESCE(moved, dst.row_count);
    EXECUTE pg_catalog.format('DROP FOREIGN TABLE %s', rel_old);
    EXECUTE pg_catalog.format('ALTER FOREIGN TABLE %s OPTIONS (DROP updatable)', rel_new);
END
$$;

COMMENT ON PROCEDURE @extschema@.simhash_layout_move_partition(pg_catalog.regclass, pg_catalog.int4, pg_catalog.int4, pg_catalog.text, pg_catalog.int8)
    IS 'move one partition of a block-sharded layout''s copy to another server in two committed steps (copy and switch, then verify and empty the old table); a rerun finishes a half-done move';


-- ===== end section: block-sharded layout =====

-- ===== section: natural spellings and empty texts (issue 41) =====

/*
 * WHERE simhash_similarity(sh, q) >= t is rewritten by the planner hook
 * into within(sh, q, r) (src/planner/radius_rewrite.c).  The support
 * function gets the library, and so the hook, loaded when the call is
 * simplified, as it does for <~> and hamming_distance(), also when nothing
 * else in the query is the extension's.  hamming_support also turns
 * hamming_distance(a, b) into a <~> b, so that ORDER BY
 * hamming_distance(sh, q) LIMIT k is a nearest-neighbour index scan.
 */
ALTER FUNCTION @extschema@.simhash_similarity(@extschema@.simhash64, @extschema@.simhash64)
    SUPPORT @extschema@.hamming_support;

COMMENT ON FUNCTION @extschema@.hamming_support(pg_catalog.internal)
    IS 'planner support of the distance functions: loads the rewrite of radius and similarity conditions into index conditions; hamming_distance(a, b) becomes a <~> b';

-- ===== end section: natural spellings and empty texts =====
