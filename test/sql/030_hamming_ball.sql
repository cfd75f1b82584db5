--
-- hamming_ball: the query value of radius search, and within().
--
SELECT hamming_ball('00000000000000ff', 3);
SELECT '(00000000000000FF, 3)'::hamming_ball, ' ( 00000000000000ff ,-1 ) '::hamming_ball,
       '(00000000000000ff,64)'::hamming_ball;
-- Radii outside -1 (the empty ball) .. 64 are refused, as is a radius
-- outside 0..64 by hamming_ball() (test/sql/180_radius_limits.sql lists every
-- function that takes a radius).
\set VERBOSITY terse
SELECT ' ( 00000000000000ff ,-7 ) '::hamming_ball;
SELECT '(00000000000000ff,1000)'::hamming_ball;
SELECT center(hamming_ball('0123456789abcdef', 2)), radius(hamming_ball('0123456789abcdef', 2));
SELECT hamming_ball('0123456789abcdef', -5);
SELECT hamming_ball('0123456789abcdef', 65);
SELECT hamming_ball('0123456789abcdef', 2147483647);
\set VERBOSITY default

-- Membership at the boundary: 3 bits differ.
SELECT '0000000000000007'::simhash64 <@ hamming_ball('0000000000000000', 3) AS at_3,
       '0000000000000007'::simhash64 <@ hamming_ball('0000000000000000', 2) AS at_2,
       hamming_ball('0000000000000000', 3) @> '0000000000000007'::simhash64 AS contains,
       within('0000000000000007', '0000000000000000', 3) AS within_3,
       within('0000000000000007', '0000000000000000', 2) AS within_2;
-- Empty and full balls.
SELECT '0000000000000000'::simhash64 <@ '(0000000000000000,-1)'::hamming_ball AS empty_ball,
       'ffffffffffffffff'::simhash64 <@ hamming_ball('0000000000000000', 64) AS full_ball,
       within('ffffffffffffffff', '0000000000000000', 2147483647) AS huge_radius,
       within('0000000000000000', '0000000000000000', -2147483648) AS negative_radius;

-- The three spellings agree on random pairs.
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (a <~> b <= r) = (a <@ hamming_ball(b, r))
                          AND (a <~> b <= r) = within(a, b, r)
                          AND (a <~> b <= r) = (hamming_ball(b, r) @> a)) AS agree
FROM (SELECT ('x' || md5(i::text))::bit(64)::bigint::simhash64 AS a,
             ('x' || md5((i * 7)::text))::bit(64)::bigint::simhash64 AS b,
             i % 40 AS r
      FROM generate_series(1, 2000) i) s;

-- Binary round trip (COPY BINARY through a file in the data directory).
CREATE TEMP TABLE balls (b hamming_ball);
INSERT INTO balls VALUES (hamming_ball('fedcba9876543210', 5)), ('(0000000000000000,-1)'::hamming_ball);
SELECT current_setting('data_directory') || '/neardup_03_hamming_ball.bin' AS binfile \gset
COPY balls TO :'binfile' WITH (FORMAT binary);
CREATE TEMP TABLE balls2 (b hamming_ball);
COPY balls2 FROM :'binfile' WITH (FORMAT binary);
SELECT b FROM balls2;

\set VERBOSITY sqlstate
SELECT '(00000000000000ff)'::hamming_ball;
SELECT '(00000000000000f,3)'::hamming_ball;
SELECT '(00000000000000fff,3)'::hamming_ball;
SELECT '(00000000000000ff,)'::hamming_ball;
SELECT '(00000000000000ff,3'::hamming_ball;
SELECT '(00000000000000ff,3) x'::hamming_ball;
SELECT '(00000000000000ff,99999999999)'::hamming_ball;
SELECT ''::hamming_ball;
\set VERBOSITY default
SELECT '00000000000000ff,3'::hamming_ball;
