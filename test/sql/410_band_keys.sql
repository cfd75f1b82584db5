--
-- simhash_band_keys() and simhash_band_first(): a plain SQL self-join on
-- the band keys finds exactly the pairs of simhash_pairs() (itself checked
-- against brute force in 400_dedup_pairs), each once, without DISTINCT.
--
CREATE TABLE bk (id int, sh simhash64);
INSERT INTO bk SELECT i, ('x' || md5('bk' || i))::bit(64)::bigint::simhash64
FROM generate_series(1, 18000) i;
CREATE FUNCTION bk_flips(seed int, d int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(bit_or(1::bigint << (get_byte(decode(md5(seed || '/' || k), 'hex'), 0) & 63)), 0)
    FROM generate_series(1, d) k
$$;
INSERT INTO bk SELECT 100000 + id, (sh::bigint # bk_flips(id, id % 7))::simhash64
FROM bk WHERE id % 10 = 0;
INSERT INTO bk SELECT 200000 + k, (('x' || md5('chain'))::bit(64)::bigint # ((1::bigint << k) - 1))::simhash64
FROM generate_series(0, 62) k;
INSERT INTO bk SELECT 300000 + i, ('x' || md5('dup'))::bit(64)::bigint::simhash64 FROM generate_series(1, 100) i;
INSERT INTO bk SELECT 340000 + i, NULL FROM generate_series(1, 10) i;

-- Keys per fingerprint for the default block counts, and for explicit ones.
SELECT k, pg_catalog.array_length(simhash_band_keys('0123456789abcdef', k), 1) AS keys
FROM generate_series(0, 6) k ORDER BY k;
SELECT pg_catalog.array_length(simhash_band_keys('0123456789abcdef', 3, 4), 1) AS keys_3_4,
       pg_catalog.array_length(simhash_band_keys('0123456789abcdef', 3, 6), 1) AS keys_3_6;
-- The keys are stable (they may be stored): pinned values.
SELECT simhash_band_keys('0123456789abcdef', 1);
SELECT simhash_band_keys('0123456789abcdef', 3, 4);
-- One bit apart: keys 1 and 2 differ (the bit is in block 0), key 3 is shared.
SELECT a = b AS same
FROM unnest(simhash_band_keys('0123456789abcdef', 1, 3), simhash_band_keys('8123456789abcdef', 1, 3)) u(a, b);
SELECT i, simhash_band_first('0123456789abcdef', '8123456789abcdef', i, 1, 3) FROM generate_series(1, 3) i;
-- Equal codes: the first key is the first shared one.
SELECT i, simhash_band_first('0123456789abcdef', '0123456789abcdef', i) FROM generate_series(1, 11) i;
-- Too far apart: no shared key is first.
SELECT count(*) FROM generate_series(1, 10) i WHERE simhash_band_first('0000000000000000', 'ffffffffffffffff', i);
SELECT simhash_band_keys(NULL, 3) IS NULL AS strict_keys, simhash_band_first(NULL, '0000000000000000', 1) IS NULL AS strict_first;

-- The self-join: keys with their ordinal, joined on both; the first shared
-- key keeps a pair.
CREATE FUNCTION bk_join(k int, blocks int) RETURNS TABLE(id_a bigint, id_b bigint, distance int)
LANGUAGE sql STABLE AS $$
    WITH keys AS (
        SELECT id, sh, key, ord::int
        FROM bk, unnest(CASE WHEN blocks IS NULL THEN simhash_band_keys(sh, k)
                             ELSE simhash_band_keys(sh, k, blocks) END) WITH ORDINALITY u(key, ord)
    )
    SELECT a.id, b.id, a.sh <~> b.sh
    FROM keys a JOIN keys b ON a.key = b.key AND a.ord = b.ord AND a.id < b.id
    WHERE a.sh <~> b.sh <= k
      AND CASE WHEN blocks IS NULL THEN simhash_band_first(a.sh, b.sh, a.ord, k)
               ELSE simhash_band_first(a.sh, b.sh, a.ord, k, blocks) END
$$;
CREATE TEMP TABLE bk_pairs AS
SELECT k, p.* FROM generate_series(0, 4) k, simhash_pairs('bk', 'id', 'sh', k) p;
CREATE TEMP TABLE bk_joined AS
SELECT k, NULL::int AS blocks, j.* FROM generate_series(0, 4) k, bk_join(k, NULL) j
UNION ALL
SELECT k, blocks, j.* FROM (VALUES (1, 2), (3, 4), (3, 7), (4, 5)) v(k, blocks), bk_join(k, blocks) j;
SELECT k, blocks, count(*) AS join_pairs,
       (SELECT count(*) FROM bk_pairs p WHERE p.k = j.k) AS pairs,
       (SELECT count(*) FROM (SELECT id_a, id_b, distance FROM bk_joined j2
                              WHERE j2.k = j.k AND j2.blocks IS NOT DISTINCT FROM j.blocks
                              EXCEPT ALL SELECT id_a, id_b, distance FROM bk_pairs p WHERE p.k = j.k) x) AS extra,
       (SELECT count(*) FROM (SELECT id_a, id_b, distance FROM bk_pairs p WHERE p.k = j.k
                              EXCEPT ALL SELECT id_a, id_b, distance FROM bk_joined j2
                              WHERE j2.k = j.k AND j2.blocks IS NOT DISTINCT FROM j.blocks) x) AS missing
FROM bk_joined j GROUP BY k, blocks ORDER BY k, blocks NULLS FIRST;
-- Without simhash_band_first, pairs sharing several keys come back several
-- times (equal codes share every key).
SELECT count(*) AS with_repeats, count(DISTINCT (a.id, b.id)) AS distinct_pairs
FROM (SELECT id, sh, key, ord FROM bk, unnest(simhash_band_keys(sh, 3)) WITH ORDINALITY u(key, ord)) a
JOIN (SELECT id, sh, key, ord FROM bk, unnest(simhash_band_keys(sh, 3)) WITH ORDINALITY u(key, ord)) b
  ON a.key = b.key AND a.ord = b.ord AND a.id < b.id
WHERE a.sh <~> b.sh <= 3;

-- Errors, with their SQLSTATEs.
CREATE FUNCTION bk_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT q, bk_try(q) FROM (VALUES
    ($$SELECT simhash_band_keys('0000000000000000', -1)$$),
    ($$SELECT simhash_band_keys('0000000000000000', 16)$$),
    ($$SELECT simhash_band_keys('0000000000000000', 3, 3)$$),
    ($$SELECT simhash_band_keys('0000000000000000', 3, 17)$$),
    ($$SELECT simhash_band_keys('0000000000000000', 15, 16)$$),
    ($$SELECT simhash_band_first('0000000000000000', '0000000000000000', 1, 2, 2)$$),
    ($$SELECT simhash_band_first('0000000000000000', '0000000000000000', 1, -1)$$)
) v(q);

DROP FUNCTION bk_try(text);
DROP FUNCTION bk_join(int, int);
DROP FUNCTION bk_flips(int, int);
