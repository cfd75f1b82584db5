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

-- ===== end section: block-sharded layout =====
