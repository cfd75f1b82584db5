--
-- Hamming distance: hamming_distance(), the <~> operator, simhash_similarity()
--

-- Deterministic, random-looking values.
CREATE TABLE hs (id int PRIMARY KEY, h simhash64 NOT NULL);
INSERT INTO hs
SELECT i, left(md5(i::text), 16)::simhash64 FROM generate_series(1, 100) AS i;

-- The catalog: all IMMUTABLE STRICT PARALLEL SAFE, and <~> has its own
-- function (simhash64_hamming), distinct from hamming_distance().
SELECT p.oid::regprocedure AS function, prorettype::regtype AS returns,
       provolatile, proisstrict, proparallel, proleakproof, prosupport
FROM pg_proc AS p
WHERE p.oid IN ('hamming_distance(simhash64, simhash64)'::regprocedure,
                'neardup_internal.simhash64_hamming(simhash64, simhash64)'::regprocedure,
                'simhash_similarity(simhash64, simhash64)'::regprocedure)
ORDER BY 1::text;

SELECT oprname, oprleft::regtype, oprright::regtype, oprresult::regtype,
       oprcode, oprcom::regoperator
FROM pg_operator WHERE oprname = '<~>' AND oprleft = 'simhash64'::regtype;

--
-- Known pairs
--

SELECT hamming_distance('0000000000000000', 'ffffffffffffffff') AS all_bits,
       hamming_distance('0123456789abcdef', '0123456789abcdef') AS same,
       hamming_distance('0000000000000000', '0000000000000000') AS zeros,
       hamming_distance('5555555555555555', 'aaaaaaaaaaaaaaaa') AS complement,
       hamming_distance('00000000ffffffff', 'ffffffff00000000') AS halves,
       hamming_distance('0000000000000000', '0123456789abcdef') AS popcount,
       hamming_distance('7fffffffffffffff', '8000000000000000') AS sign_boundary;

SELECT a, b, a <~> b AS distance, hamming_distance(a, b), simhash_similarity(a, b)
FROM (VALUES ('0000000000000000'::simhash64, '0000000000000000'::simhash64),
             ('0000000000000000', '0000000000000001'),
             ('0000000000000000', '8000000000000000'),
             ('0000000000000000', '0000000100000000'),
             ('0000000000000000', '00000000ffffffff'),
             ('0000000000000000', 'ffffffffffffffff'),
             ('0123456789abcdef', 'fedcba9876543210'),
             ('0123456789abcdef', '0123456789abcdee')) AS t(a, b);

-- Flipping any single bit, of zero or of any sample value, gives distance 1.
SELECT i, (1::bigint << i)::simhash64 AS bit,
       hamming_distance('0000000000000000', (1::bigint << i)::simhash64) AS distance
FROM generate_series(0, 63, 7) AS i;

SELECT count(*) AS flips,
       count(*) FILTER (WHERE hamming_distance(h, f) = 1 AND h <~> f = 1) AS distance_1,
       count(*) FILTER (WHERE simhash_similarity(h, f) = 0.984375) AS similarity_ok
FROM (SELECT h, (h::bigint # (1::bigint << i))::simhash64 AS f
      FROM hs, generate_series(0, 63) AS i) AS s;

-- Flipping k distinct bits gives distance k.
SELECT k, hamming_distance(h, (h::bigint # m)::simhash64) AS distance
FROM hs,
     LATERAL (SELECT k, (SELECT coalesce(bit_or(1::bigint << (j * 5)), 0)
                        FROM generate_series(0, k - 1) AS j) AS m
              FROM generate_series(0, 12, 3) AS k) AS f
WHERE id = 1
ORDER BY k;

--
-- All pairs of the sample
--

-- Agrees with the bit-string popcount; symmetric; operator = function;
-- zero exactly for equal values; similarity = 1 - distance/64.
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE hamming_distance(a.h, b.h)
                              = bit_count(a.h::bit(64) # b.h::bit(64))) AS popcount_ok,
       count(*) FILTER (WHERE hamming_distance(a.h, b.h) = hamming_distance(b.h, a.h)) AS symmetric,
       count(*) FILTER (WHERE a.h <~> b.h = b.h <~> a.h) AS op_symmetric,
       count(*) FILTER (WHERE a.h <~> b.h = hamming_distance(a.h, b.h)) AS op_eq_fn,
       count(*) FILTER (WHERE (hamming_distance(a.h, b.h) = 0) = (a.h = b.h)) AS zero_iff_equal,
       count(*) FILTER (WHERE simhash_similarity(a.h, b.h)
                              = 1 - hamming_distance(a.h, b.h) / 64.0) AS similarity_ok,
       count(*) FILTER (WHERE simhash_similarity(a.h, b.h) = simhash_similarity(b.h, a.h)) AS sim_symmetric,
       min(hamming_distance(a.h, b.h)) FILTER (WHERE a.id <> b.id) AS min_distance,
       max(hamming_distance(a.h, b.h)) AS max_distance
FROM hs AS a, hs AS b;

-- d(x, ~x) = 64 and d(x, y) + d(y, ~x) = 64.
SELECT count(*) FILTER (WHERE a.h <~> (~a.h::bigint)::simhash64 = 64) AS complement_64,
       count(*) FILTER (WHERE (a.h <~> b.h) + (b.h <~> (~a.h::bigint)::simhash64) = 64) AS sum_64
FROM hs AS a, hs AS b;

-- Triangle inequality on triples.
SELECT count(*) AS triples,
       count(*) FILTER (WHERE (a.h <~> c.h) <= (a.h <~> b.h) + (b.h <~> c.h)) AS triangle_ok
FROM hs AS a, hs AS b, hs AS c
WHERE a.id <= 30 AND b.id <= 30 AND c.id <= 30;

-- A sample, checked against the bit strings.
SELECT a.h AS a, b.h AS b, a.h <~> b.h AS distance,
       (a.h::bigint # b.h::bigint)::simhash64 AS xor,
       bit_count(a.h::bit(64) # b.h::bit(64)) AS bits_set,
       simhash_similarity(a.h, b.h)
FROM hs AS a JOIN hs AS b ON b.id = a.id + 1
WHERE a.id <= 5
ORDER BY a.id;

-- Nearest neighbours by distance (ties broken by value).
SELECT h, h <~> '0123456789abcdef' AS distance
FROM hs ORDER BY h <~> '0123456789abcdef', h LIMIT 5;

--
-- NULLs and type checks
--

SELECT hamming_distance(NULL, '0000000000000000') AS fn_null,
       NULL::simhash64 <~> '0000000000000000' AS op_null,
       '0000000000000000' <~> NULL::simhash64 AS op_null_right,
       simhash_similarity('0000000000000000', NULL) AS similarity_null;

-- No implicit casts to simhash64.
SELECT hamming_distance(0::bigint, 1::bigint);
SELECT 1::bigint <~> 2::bigint;

DROP TABLE hs;
