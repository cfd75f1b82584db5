-- The index benchmarks' table `doc (id int, sh simhash64)` of :rows rows:
-- 90% random codes (md5 of the row number), 10% copies of every 9th of
-- them with 0..5 random bits flipped.  Indexes and statistics are left to
-- the caller.  Also defines pg_temp.code(i, salt) for more random codes.

-- Random 64-bit codes: md5 of the row number.
CREATE FUNCTION pg_temp.code(i bigint, salt text DEFAULT '') RETURNS simhash64
LANGUAGE sql IMMUTABLE AS $$
    SELECT ('x' || md5(salt || i::text))::bit(64)::bigint::simhash64
$$;

-- A mask of up to d random bits (fewer when two picks collide).
CREATE FUNCTION pg_temp.flips(i bigint, d int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(bit_or(1::bigint << (get_byte(decode(md5(i::text || '/' || k), 'hex'), 0) & 63)), 0)
    FROM generate_series(1, d) k
$$;

CREATE TABLE doc (id int, sh simhash64);
ALTER TABLE doc SET (autovacuum_enabled = off);
INSERT INTO doc SELECT i, pg_temp.code(i) FROM generate_series(1, :rows * 9 / 10) i;
-- Near-duplicates: every 9th original row gets a copy with 0..5 bits flipped.
INSERT INTO doc
SELECT :rows * 9 / 10 + row_number() OVER (),
       (d.sh::bigint # pg_temp.flips(d.id, get_byte(decode(md5('d' || d.id), 'hex'), 0) % 6))::simhash64
FROM doc d WHERE d.id % 9 = 0 LIMIT :rows / 10;
