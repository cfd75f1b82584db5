--
-- Checks of the block-sharded layout test (test/tap/t/021_shard_blocks.pl), run
-- on the coordinator: `fp` is a layout made by simhash_layout_create,
-- `fp_one` a local table holding the same rows (the single-node
-- reference).  Needs index_check.sql (nd_query_codes()).
--

-- Query codes: those of index_check.sql and the codes of some rows.
CREATE FUNCTION nd_blocks_codes() RETURNS simhash64[]
LANGUAGE sql STABLE
AS $$
SELECT nd_query_codes() || array_agg(sh ORDER BY id)
FROM fp_one WHERE id IN (11, 12, 13, 10011, 777, 4242, 3, 4)
$$;

/*
 * For every query code and radius 0..5 (5 is past the layout's 4 blocks),
 * simhash_layout_within returns each row once, and its ids and distances
 * equal those whose distance, by bit_count() on fp_one, is within the
 * radius.  'checks=N mismatches=N rows=N' (rows: the expected results'
 * total, so that an empty data set cannot pass), then the first problems.
 */
CREATE FUNCTION nd_blocks_radius_check(max_r int DEFAULT 5) RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    q simhash64;
    want text[];
    got text[];
    n int := 0;
    bad int := 0;
    total bigint := 0;
    problems text[] := '{}';
BEGIN
    FOREACH q IN ARRAY nd_blocks_codes() LOOP
        FOR r IN 0..max_r LOOP
            SELECT coalesce(array_agg(id || ':' || d ORDER BY id), '{}') INTO want
            FROM (SELECT id, bit_count((sh::bigint # q::bigint)::bit(64)) AS d FROM fp_one) x
            WHERE d <= r;
            SELECT coalesce(array_agg(id || ':' || distance ORDER BY id), '{}') INTO got
            FROM simhash_layout_within('fp', q, r);
            total := total + cardinality(want);
            n := n + 1;
            IF got IS DISTINCT FROM want THEN
                bad := bad + 1;
                IF cardinality(problems) < 3 THEN
                    problems := problems || format('%s r=%s: %s rows, want %s', q, r,
                                                   cardinality(got), cardinality(want));
                END IF;
            END IF;
        END LOOP;
    END LOOP;
    RETURN format('checks=%s mismatches=%s rows=%s', n, bad, total)
        || CASE WHEN bad > 0 THEN ' | ' || array_to_string(problems, '; ') ELSE '' END;
END
$$;

/*
 * For every query code and n in (1, 10, 60): simhash_layout_nearest
 * returns the n rows nearest by bit_count() on fp_one, ties by id, in
 * order.  Same output as above; 'far' counts the answers that needed rows
 * past the layout's radius (the second phase).
 */
CREATE FUNCTION nd_blocks_knn_check() RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    q simhash64;
    k int;
    want text[];
    got text[];
    n int := 0;
    bad int := 0;
    far int := 0;
    problems text[] := '{}';
BEGIN
    FOREACH q IN ARRAY nd_blocks_codes() LOOP
        FOREACH k IN ARRAY '{1,10,60}'::int[] LOOP
            SELECT array_agg(id || ':' || d ORDER BY d, id) INTO want
            FROM (SELECT id, bit_count((sh::bigint # q::bigint)::bit(64)) AS d
                  FROM fp_one ORDER BY 2, 1 LIMIT k) x;
            SELECT array_agg(id || ':' || distance ORDER BY ord) INTO got
            FROM simhash_layout_nearest('fp', q, k) WITH ORDINALITY AS t(id, sh, distance, ord);
            n := n + 1;
            IF split_part(want[k], ':', 2)::int >= 4 THEN
                far := far + 1;
            END IF;
            IF got IS DISTINCT FROM want THEN
                bad := bad + 1;
                IF cardinality(problems) < 3 THEN
                    problems := problems || format('%s n=%s: got %s want %s', q, k,
                                                   got[1:3], want[1:3]);
                END IF;
            END IF;
        END LOOP;
    END LOOP;
    RETURN format('checks=%s mismatches=%s far=%s', n, bad, far)
        || CASE WHEN bad > 0 THEN ' | ' || array_to_string(problems, '; ') ELSE '' END;
END
$$;

-- The clusters of the layout against simhash_clusters on fp_one: rows in
-- one and not the other, both ways, and the single node's row count.
CREATE FUNCTION nd_blocks_clusters_check() RETURNS text
LANGUAGE sql
AS $$
WITH one AS (SELECT id, cluster_id FROM simhash_clusters('fp_one', 'id', 'sh', 3)),
     sharded AS (SELECT id, cluster_id FROM simhash_layout_clusters('fp'))
SELECT format('missing=%s extra=%s rows=%s',
              (SELECT count(*) FROM (SELECT * FROM one EXCEPT SELECT * FROM sharded) x),
              (SELECT count(*) FROM (SELECT * FROM sharded EXCEPT SELECT * FROM one) x),
              (SELECT count(*) FROM one))
$$;
