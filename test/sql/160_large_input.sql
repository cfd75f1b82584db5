--
-- Large inputs: a 100 MB text is fingerprinted in bounded memory (the
-- shingler's state is fixed-size) and can be cancelled.
--

-- 27 bytes x 4,000,000 = 108 MB of text.  Its shingles are the five cyclic
-- 3-shingles of the sentence, each some 4 million times: the same votes'
-- signs as one cycle of them.
SELECT octet_length(repeat('lorem ipsum dolor sit amet ', 4000000)) AS bytes,
       simhash(repeat('lorem ipsum dolor sit amet ', 4000000)) AS fingerprint,
       simhash(repeat('lorem ipsum dolor sit amet ', 4000000))
     = simhash('lorem ipsum dolor sit amet lorem ipsum') AS same_as_one_cycle;

-- A single 20 MB token (no separators): hashed block by block.
SELECT simhash(repeat('x', 20000000)) = simhash(repeat('x', 20000000)) AS deterministic,
       simhash(repeat('x', 20000000)) <> simhash(repeat('x', 20000001)) AS length_matters;

-- 10 MB of characters in the char unit.
SELECT simhash(repeat('abc ', 2500000), 5, 'char') IS NOT NULL AS char_unit;

-- A million features in an array.
SELECT simhash(array_agg(i)) IS NOT NULL AS million_bigints FROM generate_series(1, 1000000) i;
SELECT simhash(array_agg(i::text)) IS NOT NULL AS million_texts FROM generate_series(1, 1000000) i;

-- Cancellation: a statement timeout interrupts the fingerprinting.
CREATE TEMP TABLE big AS SELECT repeat('lorem ipsum dolor sit amet ', 4000000) AS t;
SET statement_timeout = '20ms';
SELECT simhash(t) FROM big;
SELECT shingle_hashes(t) IS NOT NULL FROM big;
RESET statement_timeout;
-- Fine again afterwards.
SELECT simhash(t) = simhash('lorem ipsum dolor sit amet lorem ipsum') AS after_cancel FROM big;
