--
-- simhash64: text and binary I/O, casts, comparison, btree and hash support
--

-- Deterministic, random-looking values.
CREATE TABLE sh (id int PRIMARY KEY, h simhash64 NOT NULL);
INSERT INTO sh
SELECT i, left(md5(i::text), 16)::simhash64 FROM generate_series(1, 200) AS i;

--
-- Text I/O
--

-- Upper case and mixed case accepted, output always lower case.
SELECT '0000000000000000'::simhash64 AS zero,
       '0123456789abcdef'::simhash64 AS lower,
       '0123456789ABCDEF'::simhash64 AS upper,
       'FfFfFfFfFfFfFfFf'::simhash64 AS mixed;

-- Leading and trailing whitespace accepted.
SELECT v::simhash64 AS value, v::simhash64::text = lower(btrim(v, E' \t\n\r')) AS canonical
FROM (VALUES ('  00000000000000ff'),
             ('8000000000000000   '),
             (E'\t7FFFFFFFFFFFFFFF\n'),
             (E' \r\n abcdefabcdefabcd \t')) AS t(v);

-- Text round trip.
SELECT count(*) AS rows, count(*) FILTER (WHERE h::text::simhash64 = h) AS same,
       count(*) FILTER (WHERE h::text = left(md5(id::text), 16)) AS same_text,
       count(*) FILTER (WHERE h::text ~ '^[0-9a-f]{16}$') AS well_formed
FROM sh;

-- Malformed input: SQLSTATE 22P02.
SELECT format('%L', v) AS input, nd_test.try(format('SELECT %L::simhash64', v)) AS result
FROM (VALUES ('0123456789abcde'),         -- 15 digits
             ('0123456789abcdef0'),       -- 17 digits
             ('0123456789abcdeg'),        -- not hex
             ('0x0123456789abcd'),        -- 0x prefix, 16 characters
             ('0x0123456789abcdef'),      -- 0x prefix, 16 digits
             ('x0123456789abcdef'),
             ('\x0123456789abcdef'),
             ('-1'),
             ('-123456789abcdef'),
             ('+0123456789abcdef'),
             (''),
             ('   '),
             ('01234567 89abcdef'),       -- embedded space
             ('0123456789abcdef x'),      -- trailing garbage
             ('0123456789abcdef0000000000000000'),
             ('０123456789abcdef')       -- full-width digit
     ) AS t(v);

-- The full error, with its detail.
SELECT '0123456789abcde'::simhash64;
SELECT ''::simhash64;

-- NULL in, NULL out (the I/O functions are strict).
SELECT NULL::simhash64 AS null_value, NULL::text::simhash64 IS NULL AS is_null;

--
-- Binary I/O: 8 bytes in network byte order, the same as bigint's
--

SELECT neardup_internal.simhash64_send('0123456789abcdef') AS send,
       neardup_internal.simhash64_send('ffffffffffffffff') AS send_max,
       neardup_internal.simhash64_send('0000000000000001') AS send_one;

SELECT count(*) FILTER (WHERE neardup_internal.simhash64_send(h) = int8send(h::bigint)) AS like_int8
FROM sh;

-- Round trip through COPY BINARY, which calls simhash64_recv.  The file is
-- written into the server's data directory, where the server can write.
SELECT current_setting('data_directory') || '/neardup_01_simhash64.bin' AS binfile \gset
COPY sh TO :'binfile' (FORMAT binary);
CREATE TABLE sh_copy (LIKE sh);
COPY sh_copy FROM :'binfile' (FORMAT binary);
SELECT count(*) AS rows, count(*) FILTER (WHERE a.h = b.h) AS same
FROM sh AS a JOIN sh_copy AS b USING (id);

-- bigint's binary form is read as the same 64 bits.
COPY (SELECT v FROM (VALUES (-1::bigint), (81985529216486895), (0)) AS t(v))
    TO :'binfile' (FORMAT binary);
CREATE TABLE sh_recv (h simhash64);
COPY sh_recv FROM :'binfile' (FORMAT binary);
SELECT h FROM sh_recv;

-- Wrong field lengths: 4 bytes (int4) and 16 bytes (uuid).
COPY (SELECT 1::int4) TO :'binfile' (FORMAT binary);
COPY sh_recv FROM :'binfile' (FORMAT binary);
COPY (SELECT '01234567-89ab-cdef-0123-456789abcdef'::uuid) TO :'binfile' (FORMAT binary);
COPY sh_recv FROM :'binfile' (FORMAT binary);
SELECT count(*) FROM sh_recv;
DROP TABLE sh_copy, sh_recv;

--
-- Casts
--

-- All explicit; bigint is binary-coercible, the others have functions.
SELECT castsource::regtype, casttarget::regtype, castfunc::regprocedure,
       castcontext, castmethod
FROM pg_cast
WHERE castsource = 'simhash64'::regtype OR casttarget = 'simhash64'::regtype
ORDER BY castsource::regtype::text, casttarget::regtype::text;

-- bigint: the same 64 bits, read as two's complement.
SELECT v AS simhash64, v::bigint AS bigint, v::bigint::simhash64 AS back
FROM (VALUES ('0000000000000000'::simhash64),
             ('0000000000000001'),
             ('0123456789abcdef'),
             ('7fffffffffffffff'),
             ('8000000000000000'),
             ('fffffffffffffffe'),
             ('ffffffffffffffff')) AS t(v);

SELECT (-1)::bigint::simhash64 AS minus_one,
       (-9223372036854775808)::bigint::simhash64 AS int8_min,
       9223372036854775807::bigint::simhash64 AS int8_max,
       simhash64(42::bigint) AS function_style;

SELECT count(*) FILTER (WHERE h::bigint::simhash64 = h) AS bigint_round_trip
FROM sh;

-- No implicit or assignment casts.
SELECT '0000000000000001'::simhash64 = 1::bigint;
INSERT INTO sh VALUES (0, 1::bigint);
SELECT '0000000000000001'::simhash64 + 1;

-- bit(64): most significant bit first, so the bits read like the hex.
SELECT '0123456789abcdef'::simhash64::bit(64) AS bit64,
       '8000000000000001'::simhash64::varbit AS varbit;
SELECT B'0000000100100011010001010110011110001001101010111100110111101111'::simhash64 AS from_bit,
       B'1000000000000000000000000000000000000000000000000000000000000001'::varbit::simhash64 AS from_varbit,
       X'fedcba9876543210'::simhash64 AS from_hex_bit;

SELECT count(*) FILTER (WHERE h::bit(64) = ('x' || h::text)::bit(64)) AS reads_like_hex,
       count(*) FILTER (WHERE h::bit(64)::simhash64 = h) AS bit_round_trip,
       count(*) FILTER (WHERE h::varbit::simhash64 = h) AS varbit_round_trip,
       count(*) FILTER (WHERE h::varbit(64) = h::bit(64)) AS varbit64_eq_bit64,
       count(*) FILTER (WHERE h::bit(64)::bigint = h::bigint) AS agrees_with_bigint
FROM sh;

-- Lengths that cannot hold exactly 64 bits: SQLSTATEs 22026 and 22001.
SELECT c AS cast, nd_test.try('SELECT ' || c) AS result
FROM (VALUES ($$B'0'::simhash64$$),
             ($$B''::simhash64$$),
             ($$substring('0123456789abcdef'::simhash64::bit(64) from 2)::simhash64$$),
             ($$('0123456789abcdef'::simhash64::bit(64) || B'0')::simhash64$$),
             ($$X'0123456789abcdef0'::varbit::simhash64$$),
             ($$'0123456789abcdef'::simhash64::bit$$),
             ($$'0123456789abcdef'::simhash64::bit(63)$$),
             ($$'0123456789abcdef'::simhash64::bit(65)$$),
             ($$'0123456789abcdef'::simhash64::varbit(63)$$),
             ($$'0123456789abcdef'::simhash64::varbit(64)$$),
             ($$'0123456789abcdef'::simhash64::varbit(65)$$)) AS t(c);

-- The full errors.
SELECT B'101'::simhash64;
SELECT '0123456789abcdef'::simhash64::bit;

-- bytea: 8 bytes, big-endian.
SELECT '0123456789abcdef'::simhash64::bytea AS to_bytea,
       '\xfedcba9876543210'::bytea::simhash64 AS from_bytea,
       neardup_internal.simhash64_to_bytea('8000000000000000') AS to_fn,
       neardup_internal.simhash64_from_bytea('\x0000000000000001') AS from_fn;

SELECT count(*) FILTER (WHERE h::bytea = decode(h::text, 'hex')) AS reads_like_hex,
       count(*) FILTER (WHERE h::bytea::simhash64 = h) AS bytea_round_trip
FROM sh;

SELECT format('%L', b) AS bytea, nd_test.try(format('SELECT %L::bytea::simhash64', b)) AS result
FROM (VALUES (''), ('\x00'), ('\x0123456789abcd'), ('\x0123456789abcdef01')) AS t(b);

SELECT '\x0123456789abcd'::bytea::simhash64;

-- Casts of NULL are NULL.
SELECT NULL::simhash64::bigint AS to_bigint, NULL::bigint::simhash64 AS from_bigint,
       NULL::simhash64::bit(64) AS to_bit, NULL::bit(64)::simhash64 AS from_bit,
       NULL::simhash64::bytea AS to_bytea, NULL::bytea::simhash64 AS from_bytea;

--
-- Comparison: unsigned, so the order is the hex text order
--

SELECT oprname, oprcode, oprcom::regoperator, oprnegate::regoperator,
       oprrest, oprjoin, oprcanmerge, oprcanhash
FROM pg_operator
WHERE oprleft = 'simhash64'::regtype AND oprright = 'simhash64'::regtype
  AND oprname IN ('=', '<>', '<', '<=', '>', '>=')
ORDER BY oprname;

CREATE TABLE edge (h simhash64);
INSERT INTO edge VALUES ('8000000000000000'), ('ffffffffffffffff'), ('7fffffffffffffff'),
    ('0000000000000000'), ('8000000000000001'), ('7ffffffffffffffe'), (NULL),
    ('0000000000000001'), ('fffffffffffffffe');

SELECT h, h::bigint AS as_bigint FROM edge ORDER BY h;
SELECT h FROM edge ORDER BY h DESC NULLS LAST;

SELECT a.h AS a, b.h AS b, a.h = b.h AS eq, a.h <> b.h AS ne, a.h < b.h AS lt,
       a.h <= b.h AS le, a.h > b.h AS gt, a.h >= b.h AS ge, neardup_internal.simhash64_cmp(a.h, b.h) AS cmp
FROM edge AS a, edge AS b
WHERE a.h IN ('0000000000000000', '7fffffffffffffff', '8000000000000000', 'ffffffffffffffff')
  AND b.h IN ('0000000000000000', '7fffffffffffffff', '8000000000000000', 'ffffffffffffffff')
ORDER BY a.h, b.h;

-- On all pairs of the sample, every operator agrees with the text order.
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (a.h = b.h) = (a.h::text = b.h::text)) AS eq_ok,
       count(*) FILTER (WHERE (a.h <> b.h) = (a.h::text <> b.h::text)) AS ne_ok,
       count(*) FILTER (WHERE (a.h < b.h) = (a.h::text < b.h::text COLLATE "C")) AS lt_ok,
       count(*) FILTER (WHERE (a.h <= b.h) = (a.h::text <= b.h::text COLLATE "C")) AS le_ok,
       count(*) FILTER (WHERE (a.h > b.h) = (a.h::text > b.h::text COLLATE "C")) AS gt_ok,
       count(*) FILTER (WHERE (a.h >= b.h) = (a.h::text >= b.h::text COLLATE "C")) AS ge_ok,
       count(*) FILTER (WHERE neardup_internal.simhash64_cmp(a.h, b.h)
                              = sign(bttextcmp(a.h::text COLLATE "C", b.h::text))) AS cmp_ok
FROM sh AS a, sh AS b;

-- NULL operands give NULL.
SELECT NULL::simhash64 = '0000000000000000' AS eq, NULL::simhash64 <> '0000000000000000' AS ne,
       NULL::simhash64 < '0000000000000000' AS lt, NULL::simhash64 <= NULL AS le,
       '0000000000000000' > NULL::simhash64 AS gt, '0000000000000000' >= NULL::simhash64 AS ge,
       neardup_internal.simhash64_cmp(NULL, '0000000000000000') AS cmp;

--
-- Sorting, grouping, uniqueness, indexes, joins
--

SELECT opcname, amname, opcdefault, amvalidate(c.oid) AS valid
FROM pg_opclass AS c JOIN pg_am AS a ON a.oid = c.opcmethod
WHERE opcintype = 'simhash64'::regtype
ORDER BY amname;

-- The sort (with sortsupport) agrees with the text order.
SELECT count(*) AS out_of_order
FROM (SELECT h, lag(h) OVER (ORDER BY h) AS prev,
             h::text AS t, lag(h::text) OVER (ORDER BY h) AS prev_t
      FROM sh) AS s
WHERE prev >= h OR prev_t >= t COLLATE "C";

SELECT array_agg(id ORDER BY h) = array_agg(id ORDER BY h::text COLLATE "C") AS asc_ok,
       array_agg(id ORDER BY h DESC) = array_agg(id ORDER BY h::text COLLATE "C" DESC) AS desc_ok
FROM sh;

-- Duplicates: each value of sh three times.
CREATE TABLE dup AS SELECT s.id, s.h FROM sh AS s, generate_series(1, 3);

SELECT count(*) AS rows, count(DISTINCT h) AS distinct_values FROM dup;

SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT h, count(*) FROM dup GROUP BY h;
SELECT count(*) AS groups, min(n), max(n)
FROM (SELECT h, count(*) AS n FROM dup GROUP BY h) AS g;
SELECT h FROM (SELECT DISTINCT h FROM dup) AS d ORDER BY h LIMIT 3;
RESET enable_hashagg;

SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT h, count(*) FROM dup GROUP BY h;
SELECT count(*) AS groups, min(n), max(n)
FROM (SELECT h, count(*) AS n FROM dup GROUP BY h) AS g;
RESET enable_sort;

-- UNIQUE constraint.
CREATE TABLE uniq (h simhash64 UNIQUE);
INSERT INTO uniq VALUES ('0123456789abcdef'), ('0123456789ABCDEF');
INSERT INTO uniq VALUES ('0123456789abcdef'), ('8000000000000000'), ('7fffffffffffffff');
SELECT h FROM uniq ORDER BY h;

-- A btree index serves =, ranges and ORDER BY, in unsigned order.
CREATE INDEX sh_h_idx ON sh (h);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM sh WHERE h = '0123456789abcdef';
SELECT id FROM sh WHERE h = left(md5('42'), 16)::simhash64;
EXPLAIN (COSTS OFF) SELECT h FROM sh WHERE h >= '7f00000000000000' AND h < '8100000000000000' ORDER BY h;
SELECT h FROM sh WHERE h >= '7f00000000000000' AND h < '8100000000000000' ORDER BY h;
SELECT count(*) FILTER (WHERE h > '8000000000000000') AS above,
       (SELECT count(*) FROM sh WHERE h::text > '8000000000000000' COLLATE "C") AS above_text
FROM sh;
RESET enable_bitmapscan;
RESET enable_seqscan;

-- Merge join.
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM sh AS a JOIN dup AS b ON a.h = b.h;
SELECT count(*), count(*) FILTER (WHERE a.id = b.id) AS same_id
FROM sh AS a JOIN dup AS b ON a.h = b.h;
RESET enable_nestloop;
RESET enable_hashjoin;

-- Hash join.
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM sh AS a JOIN dup AS b ON a.h = b.h;
SELECT count(*), count(*) FILTER (WHERE a.id = b.id) AS same_id
FROM sh AS a JOIN dup AS b ON a.h = b.h;
RESET enable_nestloop;
RESET enable_mergejoin;

-- Hash index.
CREATE INDEX dup_h_hash ON dup USING hash (h);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM dup WHERE h = '0123456789abcdef';
SELECT id FROM dup WHERE h = left(md5('7'), 16)::simhash64;
RESET enable_bitmapscan;
RESET enable_seqscan;

--
-- Hash functions.  The values are pinned: hash partitions depend on them.
--

SELECT h, neardup_internal.simhash64_hash(h), neardup_internal.simhash64_hash_extended(h, 0) AS extended_0,
       neardup_internal.simhash64_hash_extended(h, 1) AS extended_1
FROM edge WHERE h IS NOT NULL ORDER BY h;

-- The mixing is the core's hash_uint32 (hashint4) applied to the low half
-- xor the hashed high half; the extended hash does the same with the seed.
SELECT count(*) FILTER (WHERE neardup_internal.simhash64_hash(h) = hashint4(lo # hashint4(hi))) AS hash_ok,
       count(*) FILTER (WHERE neardup_internal.simhash64_hash_extended(h, 7)
                              = hashint4extended(lo # hashint4extended(hi, 7)::bit(32)::int4, 7)) AS extended_ok
FROM (SELECT h, h::bigint::bit(32)::int4 AS lo, (h::bigint >> 32)::bit(32)::int4 AS hi
      FROM sh) AS s;

-- With seed 0 the low 32 bits of the extended hash are the standard hash;
-- other seeds change it.
SELECT count(*) FILTER (WHERE neardup_internal.simhash64_hash_extended(h, 0) & 4294967295
                              = neardup_internal.simhash64_hash(h)::bigint & 4294967295) AS low_bits_ok,
       count(*) FILTER (WHERE neardup_internal.simhash64_hash_extended(h, 0)
                              <> neardup_internal.simhash64_hash_extended(h, 42)) AS seed_changes_hash,
       count(DISTINCT neardup_internal.simhash64_hash(h)) AS distinct_hashes
FROM sh;

-- Values differing in the same bit of both halves do not collide (a plain
-- xor fold of the halves would hash all of these like zero).
SELECT count(*) AS values, count(DISTINCT neardup_internal.simhash64_hash(v)) AS distinct_hashes
FROM (SELECT (1::bigint << i | 1::bigint << (i + 32))::simhash64 FROM generate_series(0, 31) AS i
      UNION ALL SELECT '0000000000000000') AS t(v);

-- Hash partitioning (extended hash) and partition pruning.
CREATE TABLE part (h simhash64) PARTITION BY HASH (h);
CREATE TABLE part_0 PARTITION OF part FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE part_1 PARTITION OF part FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE part_2 PARTITION OF part FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO part SELECT h FROM sh;
SELECT tableoid::regclass AS partition, count(*) FROM part GROUP BY 1 ORDER BY 1;
EXPLAIN (COSTS OFF) SELECT * FROM part WHERE h = 'c4ca4238a0b92382';
SELECT tableoid::regclass AS partition, h FROM part WHERE h = 'c4ca4238a0b92382';

DROP TABLE sh, edge, dup, uniq, part;
