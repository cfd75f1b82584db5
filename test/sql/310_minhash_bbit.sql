--
-- b-bit MinHash: packing, the corrected estimate, errors, and estimates
-- against exact Jaccard.
--

-- Layout: bits, num_perm (little-endian 16 bits), then the low bits of each
-- value, the first value in the lowest bits.  1 = 01, 2 = 10, 3 = 11, 4 =
-- 00 at 2 bits: 01 10 11 00 read from the low end is 0b00111001 = 0x39.
SELECT minhash_bbit(ARRAY[1, 2, 3, 4], 2) AS two_bits,
       minhash_bbit(ARRAY[1, 2, 3, 4], 1) AS one_bit,
       minhash_bbit(ARRAY[-1, 0, 1], 8) AS eight_bits,
       minhash_bbit(ARRAY[-2, 7], 32) AS all_bits;
-- Sizes: 3 + ceil(num_perm * bits / 8) bytes of data; stored in a table,
-- a short bytea has a 1-byte header, the int4[] signature 24 bytes.
CREATE TEMP TABLE sizes AS
SELECT b, minhash_bbit(s, b) AS packed, s AS sig
FROM (SELECT minhash('a b c d e f g') AS s) AS v, unnest(ARRAY[1, 2, 4, 8, 32]) AS b;
SELECT b, octet_length(packed) AS bytes, pg_column_size(packed) AS stored,
       pg_column_size(sig) AS int4_array_stored
FROM sizes ORDER BY b;
DROP TABLE sizes;

-- Estimates: identical signatures 1; chance agreement removed.
SELECT minhash_bbit_jaccard(minhash_bbit(s, 1), minhash_bbit(s, 1)) AS same_1,
       minhash_bbit_jaccard(minhash_bbit(s, 8), minhash_bbit(s, 8)) AS same_8
FROM (SELECT minhash('the quick brown fox jumps over the lazy dog') AS s) AS v;
-- 1 bit: 3 of 4 positions agree, 1/2 agree by chance: (3/4 - 1/2) / (1/2) = 0.5.
SELECT minhash_bbit_jaccard(minhash_bbit(ARRAY[0, 0, 0, 0], 1), minhash_bbit(ARRAY[0, 0, 0, 1], 1)) AS half,
       minhash_bbit_jaccard(minhash_bbit(ARRAY[0, 0, 0, 0], 1), minhash_bbit(ARRAY[0, 0, 1, 1], 1)) AS chance,
       minhash_bbit_jaccard(minhash_bbit(ARRAY[0, 0, 0, 0], 1), minhash_bbit(ARRAY[1, 1, 1, 1], 1)) AS below_chance;
-- Only the low bits count: 4 and 0 agree on 2 bits.
SELECT minhash_bbit_jaccard(minhash_bbit(ARRAY[4], 2), minhash_bbit(ARRAY[0], 2)) AS low_bits_only;
SELECT minhash_bbit(NULL, 1) IS NULL AS null_sig, minhash_bbit_jaccard(NULL, '\x010100') IS NULL AS null_arg;

-- Errors.
SELECT nd_test.try($$SELECT minhash_bbit(ARRAY[1, 2], 0)$$);
SELECT nd_test.try($$SELECT minhash_bbit(ARRAY[1, 2], 33)$$);
SELECT nd_test.try($$SELECT minhash_bbit(ARRAY[1, NULL], 1)$$);
SELECT nd_test.try($$SELECT minhash_bbit(ARRAY[]::int4[], 1)$$);
SELECT nd_test.try($$SELECT minhash_bbit_jaccard(minhash_bbit(ARRAY[1, 2], 1), minhash_bbit(ARRAY[1, 2], 2))$$);
SELECT nd_test.try($$SELECT minhash_bbit_jaccard(minhash_bbit(ARRAY[1, 2], 1), minhash_bbit(ARRAY[1, 2, 3], 1))$$);
SELECT nd_test.try($$SELECT minhash_bbit_jaccard('\x01', '\x01')$$);
SELECT nd_test.try($$SELECT minhash_bbit_jaccard('\x0102000000', '\x0102000000')$$);
SELECT nd_test.try($$SELECT minhash_bbit_jaccard('\x000100', '\x000100')$$);
SELECT nd_test.try($$SELECT minhash_bbit_jaccard('\x01000000', '\x01000000')$$);

-- Against exact Jaccard: pairs of 1000-element sets with J about 0.2, 0.5,
-- 0.8 and 0.95, 256 values, 25 seeds each, at 1, 2, 4 and 8 bits.  Each
-- estimate should be within 4 standard deviations of J, the deviation
-- being the b-bit one: sqrt(P (1 - P) / 256) / (1 - 2^-b) with
-- P = 2^-b + (1 - 2^-b) J; and the mean of the 25 within 4 of its own.
-- Fixed seeds: the counts are fixed too.
WITH pairs AS (
    SELECT target, seed,
           minhash(ARRAY(SELECT (seed * 100000 + i)::bigint FROM generate_series(1, 1000) i), 256, seed) AS a,
           minhash(ARRAY(SELECT (seed * 100000 + i)::bigint
                         FROM generate_series(1001 - c, 2000 - c) i), 256, seed) AS b,
           c::float8 / (2000 - c) AS exact
    FROM (VALUES (0.2, 333), (0.5, 667), (0.8, 889), (0.95, 974)) AS t(target, c),
         generate_series(101, 125) AS seed
), est AS (
    SELECT target, bits, exact,
           minhash_bbit_jaccard(minhash_bbit(a, bits), minhash_bbit(b, bits)) AS estimate,
           2 ^ -bits AS chance
    FROM pairs, unnest(ARRAY[1, 2, 4, 8]) AS bits
), sd AS (
    SELECT *, sqrt((chance + (1 - chance) * exact) * (1 - chance) * (1 - exact) / 256) / (1 - chance) AS sd
    FROM est
)
SELECT target, bits, round(min(exact)::numeric, 3) AS exact,
       count(*) FILTER (WHERE abs(estimate - exact) <= 4 * sd) AS within_4sd,
       count(*) AS n,
       abs(avg(estimate) - min(exact)) <= 4 * min(sd) / 5 AS mean_within_4sd
FROM sd GROUP BY target, bits ORDER BY target, bits;

-- On documents: 8 bits give the 32-bit estimate, 1 bit a noisier one (its
-- standard deviation is about 0.06 here, against 0.03), near-duplicates
-- of one text with 0 to 5 tenths of its words replaced.
WITH docs AS (
    SELECT i, string_agg(md5((j + CASE WHEN j % 10 < i THEN 1000 ELSE 0 END)::text), ' ' ORDER BY j) AS body
    FROM generate_series(0, 5) AS i, generate_series(1, 300) AS j GROUP BY i
), sigs AS (
    SELECT i, body, minhash(body, 256) AS sig FROM docs
)
SELECT b.i AS edited_tenths, round(jaccard(a.body, b.body)::numeric, 2) AS exact,
       round(minhash_jaccard(a.sig, b.sig)::numeric, 2) AS full_32,
       round(minhash_bbit_jaccard(minhash_bbit(a.sig, 8), minhash_bbit(b.sig, 8))::numeric, 2) AS bits_8,
       round(minhash_bbit_jaccard(minhash_bbit(a.sig, 1), minhash_bbit(b.sig, 1))::numeric, 2) AS bits_1
FROM sigs a, sigs b WHERE a.i = 0 ORDER BY b.i;
