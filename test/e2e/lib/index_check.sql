--
-- Shared by the index tests (test/e2e/index_*.sh, test/tap/t/*.pl): deterministic
-- test data, and nd_check(), which compares what an index path returns with
-- a sequential scan over the same rows.
--
-- Tables under test have the columns (id bigint, sh simhash64).
--
-- Everything here only reads (nd_check runs on a hot standby too).
--

-- Centers of the planted clusters.
CREATE FUNCTION nd_center(c int) RETURNS simhash64
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('x' || md5('center' || c))::bit(64)::bigint::simhash64 $$;

-- code with k (0..6) distinct bits flipped: positions (salt + 13 j) mod 64
-- for j < k are distinct because 13 is prime to 64; so the result is at
-- Hamming distance exactly k from code.  Not STRICT, so that it is inlined.
CREATE FUNCTION nd_flip(code simhash64, k int, salt int) RETURNS simhash64
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT (code::bigint
        # CASE WHEN k > 0 THEN 1::bigint << (salt % 64) ELSE 0 END
        # CASE WHEN k > 1 THEN 1::bigint << ((salt + 13) % 64) ELSE 0 END
        # CASE WHEN k > 2 THEN 1::bigint << ((salt + 26) % 64) ELSE 0 END
        # CASE WHEN k > 3 THEN 1::bigint << ((salt + 39) % 64) ELSE 0 END
        # CASE WHEN k > 4 THEN 1::bigint << ((salt + 52) % 64) ELSE 0 END
        # CASE WHEN k > 5 THEN 1::bigint << ((salt + 65) % 64) ELSE 0 END)::simhash64
$$;

/*
 * The fingerprint of row number i (the same for every table and every
 * script, so a batch of rows can be regenerated from its id range).  Of
 * each 50 consecutive rows: one NULL, one all-zero and one all-one code, one
 * each at distance 1..3 from those, twelve planted near-duplicates at
 * distance 0..5 of one of 200 cluster centers (distance 0: exact
 * duplicates), and 34 random codes (md5).
 */
CREATE FUNCTION nd_row_code(i bigint) RETURNS simhash64
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE
    WHEN i % 50 = 0 THEN NULL
    WHEN i % 50 = 1 THEN 0::bigint::simhash64
    WHEN i % 50 = 2 THEN (-1)::bigint::simhash64
    WHEN i % 50 = 3 THEN nd_flip(0::bigint::simhash64, (1 + i / 50 % 3)::int, (i / 50 % 64)::int)
    WHEN i % 50 = 4 THEN nd_flip((-1)::bigint::simhash64, (1 + i / 50 % 3)::int, (i / 50 % 64)::int)
    WHEN i % 50 BETWEEN 10 AND 21 THEN
        nd_flip(nd_center((i / 50 % 200)::int), ((i % 50 - 10) % 6)::int, (i / 10000 % 64)::int)
    ELSE ('x' || md5(i::text))::bit(64)::bigint::simhash64
END
$$;

/*
 * Query codes: cluster centers, a code 3 bits off a center, the all-zero and
 * all-one codes and codes near them, codes of some random rows (present once
 * row i exists) and codes that are in no row.
 */
CREATE FUNCTION nd_query_codes() RETURNS simhash64[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT ARRAY[nd_center(0), nd_center(1), nd_center(2), nd_center(3),
             nd_flip(nd_center(4), 3, 40),
             0::bigint::simhash64, (-1)::bigint::simhash64,
             nd_flip(0::bigint::simhash64, 2, 5), nd_flip((-1)::bigint::simhash64, 1, 9),
             nd_row_code(7), nd_row_code(12345), nd_row_code(54321), nd_row_code(99991),
             ('x' || md5('absent1'))::bit(64)::bigint::simhash64,
             ('x' || md5('absent2'))::bit(64)::bigint::simhash64]
$$;

-- Plans: 'seq' (no index path at all), 'index' (plain or index-only scans
-- only), 'bitmap' (bitmap scans only).  Local to the transaction.
CREATE FUNCTION nd_force(what text) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM set_config('enable_seqscan', (what = 'seq')::text, true),
            set_config('enable_indexscan', (what = 'index')::text, true),
            set_config('enable_indexonlyscan', (what = 'index')::text, true),
            set_config('enable_bitmapscan', (what = 'bitmap')::text, true);
END
$$;

/*
 * nd_check(table, index): for every query code and radius, the rows an index
 * path on `index` returns equal the rows a sequential scan finds, where the
 * sequential scan computes distances with bit_count() rather than with any
 * function of the extension.  Spellings: sh <~> q <= r (planner rewrite),
 * sh <@ hamming_ball(q, r), sh = q (r = 0), block balls from 0.4 on
 * (sh <@ hamming_block_ball(q, r, b, m): m the index's blocks, b the block
 * of a hamming index's one table, else 2; the oracle keeps the seq scan's rows whose
 * simhash_block equals the query's), and for GiST and hamming an index-only shape
 * (SELECT sh) and KNN (ORDER BY sh <~> q LIMIT k: the distances must be the
 * k smallest, in order).  GiST and hamming are checked through plain and bitmap
 * index scans, GIN through bitmap scans.  Every query's plan must use the
 * index; a plan that does not counts as wrong_plans.
 *
 * Returns 'checks=N mismatches=N wrong_plans=N' and, after ' | ', the first
 * problems.
 */
CREATE FUNCTION nd_check(tbl regclass, idx regclass,
                         codes simhash64[] DEFAULT nd_query_codes(),
                         radii int[] DEFAULT '{0,1,2,3,4,5,8,13}')
RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    am text;
    idxname text;
    modes text[];
    mode text;
    q simhash64;
    ql text;
    r int;
    k int;
    sp text;
    exp_ids bigint[];
    exp_d int[];
    exp_sh bigint[];
    want bigint[];
    got bigint[];
    want_d int[];
    got_d int[];
    query text;
    pattern text;
    line text;
    plan text;
    blk int;
    blks int;
    n int := 0;
    bad int := 0;
    badplan int := 0;
    problems text[] := '{}';
BEGIN
    SELECT a.amname, c.relname INTO am, idxname
    FROM pg_class c JOIN pg_am a ON a.oid = c.relam
    WHERE c.oid = idx;
    modes := CASE am WHEN 'gist' THEN '{index,bitmap}'::text[]
                     WHEN 'hamming' THEN '{index,bitmap}'::text[]
                     WHEN 'gin' THEN '{bitmap}'::text[] END;
    IF modes IS NULL THEN
        RAISE EXCEPTION 'nd_check: % is not a GiST, GIN or hamming index', idx;
    END IF;
    -- block balls (none before 0.4: blk NULL) of the index's cut (a hamming
    -- index's `blocks`, else 4): of the block of its one table if it has
    -- one (WITH (only_block = b), answered from one block value), else of
    -- block 2 (a hamming index probes its table; GiST and GIN search the
    -- ball and recheck)
    IF to_regprocedure('hamming_block_ball(simhash64, int4, int4, int4)') IS NOT NULL THEN
        SELECT coalesce(max(nullif(o.option_value::int, 0)) FILTER (WHERE o.option_name = 'blocks'), 4),
               coalesce(max(nullif(o.option_value::int, 0)) FILTER (WHERE o.option_name = 'only_block'), 2)
        INTO blks, blk
        FROM pg_class c LEFT JOIN LATERAL pg_options_to_table(c.reloptions) o ON true
        WHERE c.oid = idx;
        blk := least(blk, blks);
    END IF;

    FOREACH q IN ARRAY codes LOOP
        CONTINUE WHEN q IS NULL;
        ql := format('%L::simhash64', q::text);

        -- The oracle: a sequential scan, distances by bit_count().
        PERFORM nd_force('seq');
        EXECUTE format($q$
            SELECT array_agg(id ORDER BY id), array_agg(d ORDER BY id), array_agg(sh::bigint ORDER BY id)
            FROM (SELECT id, sh, bit_count((sh::bigint # %s)::bit(64))::int AS d FROM %s) s
            WHERE d <= %s$q$, q::bigint, tbl, (SELECT max(x) FROM unnest(radii) x))
        INTO exp_ids, exp_d, exp_sh;
        exp_ids := coalesce(exp_ids, '{}');
        exp_d := coalesce(exp_d, '{}');
        exp_sh := coalesce(exp_sh, '{}');

        FOREACH mode IN ARRAY modes LOOP
            FOREACH r IN ARRAY radii LOOP
                FOREACH sp IN ARRAY CASE WHEN am IN ('gist', 'hamming') AND mode = 'index'
                                         THEN '{dist,ball,eq,codes,block}'::text[]
                                         ELSE '{dist,ball,eq,block}'::text[] END LOOP
                    CONTINUE WHEN sp = 'eq' AND r <> 0;
                    -- hamming_ball refuses a radius outside 0..64 (22023);
                    -- the comparison takes any
                    CONTINUE WHEN sp IN ('ball', 'block') AND (r < 0 OR r > 64);
                    CONTINUE WHEN sp = 'block' AND blk IS NULL;
                    query := format('SELECT coalesce(array_agg(%s ORDER BY %1$s), ''{}'') FROM %s WHERE %s',
                                    CASE sp WHEN 'codes' THEN 'sh::bigint' ELSE 'id' END,
                                    tbl,
                                    CASE sp
                                        WHEN 'dist' THEN format('sh <~> %s <= %s', ql, r)
                                        WHEN 'codes' THEN format('sh <~> %s <= %s', ql, r)
                                        WHEN 'ball' THEN format('sh <@ hamming_ball(%s, %s)', ql, r)
                                        WHEN 'eq' THEN format('sh = %s', ql)
                                        WHEN 'block' THEN format('sh <@ hamming_block_ball(%s, %s, %s, %s)', ql, r, blk, blks)
                                    END);
                    IF sp = 'codes' THEN
                        SELECT coalesce(array_agg(exp_sh[i] ORDER BY exp_sh[i]), '{}') INTO want
                        FROM generate_subscripts(exp_sh, 1) i WHERE exp_d[i] <= r;
                    ELSIF sp = 'block' THEN
                        SELECT coalesce(array_agg(exp_ids[i] ORDER BY exp_ids[i]), '{}') INTO want
                        FROM generate_subscripts(exp_ids, 1) i
                        WHERE exp_d[i] <= r
                          AND simhash_block(exp_sh[i]::simhash64, blk, blks) = simhash_block(q, blk, blks);
                    ELSE
                        SELECT coalesce(array_agg(exp_ids[i] ORDER BY exp_ids[i]), '{}') INTO want
                        FROM generate_subscripts(exp_ids, 1) i WHERE exp_d[i] <= r;
                    END IF;

                    PERFORM nd_force(mode);
                    pattern := CASE mode WHEN 'index' THEN '(Index Scan|Index Only Scan) using '
                                         ELSE 'Bitmap Index Scan on ' END || idxname || '( |$)';
                    plan := '';
                    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
                        plan := plan || line || ' / ';
                    END LOOP;
                    EXECUTE query INTO got;
                    n := n + 1;
                    IF plan !~ pattern OR plan ~ 'Seq Scan' THEN
                        badplan := badplan + 1;
                        IF cardinality(problems) < 3 THEN
                            problems := problems || format('plan of [%s]: %s', query, plan);
                        END IF;
                    END IF;
                    IF got IS DISTINCT FROM want THEN
                        bad := bad + 1;
                        IF cardinality(problems) < 3 THEN
                            problems := problems ||
                                format('[%s] (%s scan) returned %s rows, seq scan %s; missing %s, extra %s',
                                       query, mode, cardinality(got), cardinality(want),
                                       (SELECT array_agg(x) FROM (SELECT unnest(want) EXCEPT ALL SELECT unnest(got)) s(x)),
                                       (SELECT array_agg(x) FROM (SELECT unnest(got) EXCEPT ALL SELECT unnest(want)) s(x)));
                        END IF;
                    END IF;
                END LOOP;
            END LOOP;
        END LOOP;

        -- KNN (GiST, hamming): the k smallest distances, in order.
        IF am IN ('gist', 'hamming') THEN
            FOREACH k IN ARRAY '{10,150}'::int[] LOOP
                PERFORM nd_force('seq');
                EXECUTE format($q$
                    SELECT coalesce(array_agg(d ORDER BY d), '{}') FROM (
                        SELECT bit_count((sh::bigint # %s)::bit(64))::int AS d
                        FROM %s WHERE sh IS NOT NULL ORDER BY 1 LIMIT %s) s$q$, q::bigint, tbl, k)
                INTO want_d;
                query := format('SELECT coalesce(array_agg(d), ''{}'') FROM '
                                '(SELECT sh <~> %1$s AS d FROM %2$s ORDER BY sh <~> %1$s LIMIT %3$s) s',
                                ql, tbl, k);
                PERFORM nd_force('index');
                plan := '';
                FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
                    plan := plan || line || ' / ';
                END LOOP;
                EXECUTE query INTO got_d;
                n := n + 1;
                IF plan !~ ('(Index Scan|Index Only Scan) using ' || idxname || '( |$)') OR plan ~ 'Sort' THEN
                    badplan := badplan + 1;
                    IF cardinality(problems) < 3 THEN
                        problems := problems || format('plan of [%s]: %s', query, plan);
                    END IF;
                END IF;
                IF got_d IS DISTINCT FROM want_d THEN
                    bad := bad + 1;
                    IF cardinality(problems) < 3 THEN
                        problems := problems || format('[%s] distances %s, brute force %s', query, got_d, want_d);
                    END IF;
                END IF;
            END LOOP;
        END IF;
    END LOOP;

    PERFORM set_config('enable_seqscan', 'on', true),
            set_config('enable_indexscan', 'on', true),
            set_config('enable_indexonlyscan', 'on', true),
            set_config('enable_bitmapscan', 'on', true);
    RETURN format('checks=%s mismatches=%s wrong_plans=%s', n, bad, badplan) ||
           CASE WHEN cardinality(problems) > 0 THEN ' | ' || array_to_string(problems, ' || ') ELSE '' END;
END
$$;
