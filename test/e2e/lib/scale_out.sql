--
-- Checks of the sharding test (test/tap/t/020_scale_out.pl), run on the
-- coordinator: `docs` is hash-partitioned by id over foreign partitions (one
-- per shard), `docs_one` is a local table holding the same rows (the
-- single-node reference).  Needs index_check.sql (nd_query_codes()).
--

-- Query codes: those of index_check.sql and the codes of some rows.
CREATE FUNCTION nd_shard_codes() RETURNS simhash64[]
LANGUAGE sql STABLE
AS $$
SELECT nd_query_codes() || array_agg(sh ORDER BY id)
FROM docs_one WHERE id IN (11, 12, 13, 10011, 20016, 777, 4242)
$$;

/*
 * nd_shard_radius_check(): for every query code and radius 0..4, the ids
 * that each spelling of the radius search returns from the sharded table
 * equal the ids whose distance, computed by bit_count() on the single-node
 * table, is within the radius.  The queries are static SQL in PL/pgSQL, so
 * code and radius are parameters ($1, $2) of plans kept in the plan cache:
 * run it under plan_cache_mode = force_generic_plan and force_custom_plan.
 * Returns 'checks=N mismatches=N rows=N' (rows: total of the expected
 * result sizes, so that an empty data set cannot pass) and the first
 * problems after ' | '.
 */
CREATE FUNCTION nd_shard_radius_check() RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    q simhash64;
    r int;
    sp text;
    want bigint[];
    got bigint[];
    n int := 0;
    bad int := 0;
    total bigint := 0;
    problems text[] := '{}';
BEGIN
    FOREACH q IN ARRAY nd_shard_codes() LOOP
        FOR r IN 0..4 LOOP
            SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO want
            FROM docs_one WHERE bit_count((sh::bigint # q::bigint)::bit(64)) <= r;
            total := total + cardinality(want);
            FOREACH sp IN ARRAY '{op,ball,within}'::text[] LOOP
                IF sp = 'op' THEN
                    SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO got
                    FROM docs WHERE sh <~> q <= r;
                ELSIF sp = 'ball' THEN
                    SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO got
                    FROM docs WHERE sh <@ hamming_ball(q, r);
                ELSE
                    SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO got
                    FROM docs WHERE within(sh, q, r);
                END IF;
                n := n + 1;
                IF got IS DISTINCT FROM want THEN
                    bad := bad + 1;
                    IF cardinality(problems) < 3 THEN
                        problems := problems || format('%s q=%s r=%s: %s rows, expected %s',
                                                       sp, q, r, cardinality(got), cardinality(want));
                    END IF;
                END IF;
            END LOOP;
        END LOOP;
    END LOOP;
    RETURN format('checks=%s mismatches=%s rows=%s', n, bad, total)
        || CASE WHEN bad > 0 THEN ' | ' || array_to_string(problems, '; ') ELSE '' END;
END
$$;

/*
 * nd_shard_knn_check(): for every query code, the 10 nearest rows of the
 * sharded table equal those of the single-node table: with the tiebreak
 * (ORDER BY distance, id) the ids in order; without it the multiset of
 * distances (ties may be broken differently); and the per-shard form
 * (LIMIT pushed to each shard, doc/scale-out-reference.md) by ids in order too.
 */
CREATE FUNCTION nd_shard_knn_check() RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    q simhash64;
    want bigint[];
    got bigint[];
    want_d int[];
    got_d int[];
    n int := 0;
    bad int := 0;
    problems text[] := '{}';
BEGIN
    FOREACH q IN ARRAY nd_shard_codes() LOOP
        -- The reference: bit_count() distances on the single-node table.
        SELECT array_agg(id ORDER BY d, id), array_agg(d ORDER BY d, id) INTO want, want_d
        FROM (SELECT id, bit_count((sh::bigint # q::bigint)::bit(64))::int AS d
              FROM docs_one WHERE sh IS NOT NULL ORDER BY 2, 1 LIMIT 10) s;

        SELECT array_agg(id ORDER BY o) INTO got
        FROM (SELECT id, row_number() OVER () AS o
              FROM (SELECT id FROM docs ORDER BY sh <~> q, id LIMIT 10) s) s;
        n := n + 1;
        IF got IS DISTINCT FROM want THEN
            bad := bad + 1;
            problems := problems || format('tiebreak q=%s: %s, expected %s', q, got, want);
        END IF;

        SELECT array_agg(d ORDER BY d) INTO got_d
        FROM (SELECT sh <~> q AS d FROM docs ORDER BY sh <~> q LIMIT 10) s;
        n := n + 1;
        IF got_d IS DISTINCT FROM want_d THEN
            bad := bad + 1;
            problems := problems || format('distances q=%s: %s, expected %s', q, got_d, want_d);
        END IF;

        SELECT array_agg(id ORDER BY d, id) INTO got
        FROM (SELECT id, d FROM nd_knn_per_shard(q, 10)) s;
        n := n + 1;
        IF got IS DISTINCT FROM want THEN
            bad := bad + 1;
            problems := problems || format('per shard q=%s: %s, expected %s', q, got, want);
        END IF;
    END LOOP;
    RETURN format('checks=%s mismatches=%s', n, bad)
        || CASE WHEN bad > 0 THEN ' | ' || array_to_string(problems[1:3], '; ') ELSE '' END;
END
$$;

/*
 * The k nearest rows of partitioned table tbl (id bigint, sh simhash64),
 * ties broken by id, by queries per partition (the same function is shown
 * in doc/scale-out-reference.md).  postgres_fdw ships a LIMIT only for a query on one
 * foreign table, not under the Merge Append of a partitioned table, so:
 *   1. each partition's k nearest distances (ORDER BY sh <~> q LIMIT k: a
 *      GiST ordered scan on the shard), and of their union the k-th
 *      smallest, D: the k nearest rows of the whole table are within D;
 *   2. each partition's k first rows by (distance, id) within D (a radius
 *      search on the shard's index, then a sort of what it found), and of
 *      their union the k first.
 * Rows with a NULL code are never returned.
 */
CREATE FUNCTION nd_knn_per_shard(q simhash64, k int, tbl regclass DEFAULT 'docs')
RETURNS TABLE (id bigint, d int)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    parts regclass[];
    radius int;
BEGIN
    SELECT array_agg(i.inhrelid::regclass ORDER BY i.inhrelid) INTO parts
    FROM pg_inherits i WHERE i.inhparent = tbl;
    EXECUTE 'SELECT max(d) FROM (SELECT d FROM ('
        || (SELECT string_agg(format('(SELECT sh <~> $1 AS d FROM %s WHERE sh IS NOT NULL ORDER BY sh <~> $1 LIMIT $2)', p),
                              ' UNION ALL ') FROM unnest(parts) p)
        || ') u ORDER BY d LIMIT $2) s'
        INTO radius USING q, k;
    RETURN QUERY EXECUTE
        (SELECT string_agg(format('(SELECT id, sh <~> $1 AS d FROM %s WHERE sh <~> $1 <= $3 ORDER BY sh <~> $1, id LIMIT $2)', p),
                           ' UNION ALL ') FROM unnest(parts) p)
        || ' ORDER BY d, id LIMIT $2'
        USING q, k, radius;
END
$$;
