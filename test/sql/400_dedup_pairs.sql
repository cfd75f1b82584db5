--
-- simhash_pairs(): exact all pairs within a Hamming distance, compared with
-- a brute-force self-join on 20K random codes plus planted near-duplicates,
-- exact duplicates and repeated ids; the batched path (small work_mem); the
-- query form; NULLs; privileges; bad inputs with their SQLSTATEs.
--
CREATE TABLE dp (id int, sh simhash64);
-- Random codes (md5: deterministic).
INSERT INTO dp SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64
FROM generate_series(1, 18000) i;
-- Near-duplicates: a copy of every 10th code with id % 7 bits flipped at
-- pseudo-random positions (some flips coincide: fewer bits).
CREATE FUNCTION dp_flips(seed int, d int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(bit_or(1::bigint << (get_byte(decode(md5(seed || '/' || k), 'hex'), 0) & 63)), 0)
    FROM generate_series(1, d) k
$$;
INSERT INTO dp SELECT 100000 + id, (sh::bigint # dp_flips(id, id % 7))::simhash64
FROM dp WHERE id % 10 = 0;
-- A chain: each code one bit from the previous one.
INSERT INTO dp SELECT 200000 + k, (('x' || md5('chain'))::bit(64)::bigint # ((1::bigint << k) - 1))::simhash64
FROM generate_series(0, 62) k;
-- Exact duplicates (150 copies), all zeros and all ones, a repeated id.
INSERT INTO dp SELECT 300000 + i, ('x' || md5('dup'))::bit(64)::bigint::simhash64 FROM generate_series(1, 150) i;
INSERT INTO dp SELECT 310000 + i, '0000000000000000' FROM generate_series(1, 5) i;
INSERT INTO dp SELECT 320000 + i, 'ffffffffffffffff' FROM generate_series(1, 5) i;
INSERT INTO dp VALUES (330000, '0123456789abcdef'), (330000, '0123456789abcdee'),
                      (330001, '0123456789abcdef');
-- NULL fingerprints are skipped.
INSERT INTO dp SELECT 340000 + i, NULL FROM generate_series(1, 20) i;
SELECT count(*) AS rows, count(sh) AS fingerprints FROM dp;

-- Brute force, once, up to distance 4; pairs of rows with the same id are
-- not pairs.
CREATE TABLE dp_brute AS
SELECT least(a.id, b.id)::bigint AS id_a, greatest(a.id, b.id)::bigint AS id_b, a.sh <~> b.sh AS distance
FROM dp a JOIN dp b ON a.ctid < b.ctid AND a.id <> b.id AND a.sh <~> b.sh <= 4;
SELECT distance, count(*) FROM dp_brute GROUP BY distance ORDER BY distance;

-- Every k, default blocks: the same multiset of pairs (EXCEPT ALL both
-- ways also catches a pair reported twice).
SELECT k,
       (SELECT count(*) FROM simhash_pairs('dp', 'id', 'sh', k)) AS pairs,
       (SELECT count(*) FROM dp_brute WHERE distance <= k) AS brute,
       (SELECT count(*) FROM (SELECT * FROM simhash_pairs('dp', 'id', 'sh', k)
                              EXCEPT ALL SELECT * FROM dp_brute WHERE distance <= k) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM dp_brute WHERE distance <= k
                              EXCEPT ALL SELECT * FROM simhash_pairs('dp', 'id', 'sh', k)) x) AS missing
FROM generate_series(0, 4) k ORDER BY k;

-- Explicit block counts, including the fewest and the most.
SELECT k, blocks,
       (SELECT count(*) FROM simhash_pairs('dp', 'id', 'sh', k, blocks)) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM simhash_pairs('dp', 'id', 'sh', k, blocks)
                              EXCEPT ALL SELECT * FROM dp_brute WHERE distance <= k) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM dp_brute WHERE distance <= k
                              EXCEPT ALL SELECT * FROM simhash_pairs('dp', 'id', 'sh', k, blocks)) x) AS missing
FROM (VALUES (0, 2), (0, 16), (1, 2), (2, 3), (3, 4), (3, 5), (3, 8), (4, 5), (4, 6), (4, 16)) v(k, blocks)
ORDER BY k, blocks;

-- The regclass form proper, and named arguments.
SELECT count(*) FROM simhash_pairs('dp'::regclass, 'id', 'sh', 2);
SELECT count(*) FROM simhash_pairs(source => 'dp', id_column => 'id', fingerprint_column => 'sh',
                                   max_distance => 2, blocks => 7);

-- Orientation and the skipped cases.
SELECT count(*) FILTER (WHERE id_a >= id_b) AS misoriented,
       count(*) FILTER (WHERE id_a = 330000 AND id_b = 330000) AS same_id,
       count(*) FILTER (WHERE id_a >= 340000 OR id_b >= 340000) AS null_fingerprint,
       count(*) FILTER (WHERE id_a > 300000 AND id_b <= 300150) AS duplicates
FROM simhash_pairs('dp', 'id', 'sh', 3);

-- The query form, with bigint and smallint ids and a domain over simhash64.
CREATE DOMAIN dp_fp AS simhash64;
SELECT count(*) FROM (SELECT * FROM simhash_pairs('SELECT id::bigint, sh FROM dp', 3)
                      EXCEPT ALL SELECT * FROM dp_brute WHERE distance <= 3) x;
SELECT * FROM simhash_pairs($$SELECT (id - 200000)::smallint, sh::dp_fp FROM dp WHERE id BETWEEN 200000 AND 200003
                               UNION ALL SELECT 7, '0000000000000000'$$, 2)
ORDER BY 1, 2;
-- Anything, through a query: pairs across two tables' worth of rows.
SELECT * FROM simhash_pairs($$SELECT * FROM (VALUES (1, '00000000000000ff'::simhash64),
                                                   (2, '00000000000000fe'), (3, '0000000000000000'),
                                                   (4, NULL)) v$$, 8) ORDER BY 1, 2;
-- Empty and one-row inputs; a NULL query or source is an error (22004).
SELECT count(*) FROM simhash_pairs('SELECT id, sh FROM dp WHERE false', 3);
SELECT count(*) FROM simhash_pairs('SELECT 1, ''0000000000000000''::simhash64', 3);
SELECT count(*) FROM simhash_pairs(NULL::text, 3);
SELECT count(*) FROM simhash_pairs(NULL::regclass, 'id', 'sh');

-- Past work_mem (64kB holds 1820 rows): the rows go to a temporary file and
-- each table is processed in batches; same pairs.
SET work_mem = '64kB';
SET client_min_messages = debug1;
SELECT count(*) FROM simhash_pairs('dp', 'id', 'sh', 1);
RESET client_min_messages;
SELECT k,
       (SELECT count(*) FROM simhash_pairs('dp', 'id', 'sh', k)) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM simhash_pairs('dp', 'id', 'sh', k)
                              EXCEPT ALL SELECT * FROM dp_brute WHERE distance <= k) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM dp_brute WHERE distance <= k
                              EXCEPT ALL SELECT * FROM simhash_pairs('dp', 'id', 'sh', k)) x) AS missing
FROM generate_series(0, 4) k ORDER BY k;
RESET work_mem;

-- Long runs can be cancelled: 100 000 copies of one code make 5e9 pairs.
SET statement_timeout = '200ms';
SELECT count(*) FROM simhash_pairs('SELECT i, ''0123456789abcdef''::simhash64 FROM generate_series(1, 100000) i', 0);
RESET statement_timeout;

-- Errors, with their SQLSTATEs.
CREATE FUNCTION dp_try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    hint text;
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
    RETURN SQLSTATE || ': ' || SQLERRM || CASE WHEN hint <> '' THEN ' (hint: ' || hint || ')' ELSE '' END;
END $$;
CREATE TABLE dp_bad (tid text, nid numeric, code bigint, sh simhash64);
INSERT INTO dp_bad VALUES ('a', 1, 1, '0000000000000000');
SELECT q, dp_try(q) FROM (VALUES
    ($$SELECT * FROM simhash_pairs('dp', 'id', 'sh', -1)$$),
    ($$SELECT * FROM simhash_pairs('dp', 'id', 'sh', 16)$$),
    ($$SELECT * FROM simhash_pairs('dp', 'id', 'sh', NULL)$$),
    ($$SELECT * FROM simhash_pairs('dp', 'id', 'sh', 3, 3)$$),
    ($$SELECT * FROM simhash_pairs('dp', 'id', 'sh', 3, 17)$$),
    ($$SELECT * FROM simhash_pairs('dp', 'id', 'sh', 0, 1)$$),
    ($$SELECT * FROM simhash_pairs('dp_bad', 'tid', 'sh')$$),
    ($$SELECT * FROM simhash_pairs('dp_bad', 'nid', 'sh')$$),
    ($$SELECT * FROM simhash_pairs('dp_bad', 'code', 'nid')$$),
    ($$SELECT * FROM simhash_pairs('dp_bad'::regclass, 'code', 'code')$$),
    ($$SELECT * FROM simhash_pairs('dp', 'nope', 'sh')$$),
    ($$SELECT * FROM simhash_pairs('dp', 'id', 'nope')$$),
    ($$SELECT * FROM simhash_pairs('no_such_table', 'id', 'sh')$$),
    ($$SELECT * FROM simhash_pairs('SELECT id FROM dp')$$),
    ($$SELECT * FROM simhash_pairs('SELECT id, sh, sh FROM dp')$$),
    ($$SELECT * FROM simhash_pairs('SELECT sh, id FROM dp')$$),
    ($$SELECT * FROM simhash_pairs('SELECT NULL::int, ''0000000000000000''::simhash64')$$),
    ($$SELECT * FROM simhash_pairs('VACUUM dp')$$),
    ($$SELECT * FROM simhash_pairs('SELEC 1')$$),
    ($$SELECT * FROM simhash_pairs('DELETE FROM dp RETURNING id, sh')$$)
) v(q);
SELECT count(*) AS still_there FROM dp;

-- Runs as the caller: no SELECT privilege, no pairs.
CREATE ROLE regress_dp_reader;
SET ROLE regress_dp_reader;
SELECT dp_try($$SELECT * FROM simhash_pairs('dp', 'id', 'sh')$$);
RESET ROLE;
GRANT SELECT ON dp TO regress_dp_reader;
SET ROLE regress_dp_reader;
SELECT count(*) FROM simhash_pairs('dp', 'id', 'sh', 0);
RESET ROLE;
REVOKE SELECT ON dp FROM regress_dp_reader;
DROP ROLE regress_dp_reader;

-- Quoting: odd table and column names.
CREATE TABLE "dp odd ""name""" ("the id" bigint, "Sh" simhash64);
INSERT INTO "dp odd ""name""" VALUES (1, '0000000000000000'), (2, '0000000000000001');
SELECT * FROM simhash_pairs('"dp odd ""name"""', 'the id', 'Sh');
DROP TABLE "dp odd ""name""";

DROP TABLE dp_bad;
DROP FUNCTION dp_try(text);
DROP DOMAIN dp_fp;
DROP FUNCTION dp_flips(int, int);

-- Low-entropy codes: small integers cast to simhash64 make one run of
-- every distinct code in the first table, split into sub-tables in the
-- core (doc/dedup-pairs.md, "Long runs"); in memory and batched (work_mem 64kB:
-- 1820 rows in memory, so 4 batches per table, of which the first table's
-- first holds every row: the skewed case), against a brute-force join.
CREATE TABLE dp_low AS SELECT i AS id, (i % 2500)::bigint::simhash64 AS sh FROM generate_series(1, 3000) i;
CREATE TABLE dp_low_brute AS
SELECT a.id AS id_a, b.id AS id_b, a.sh <~> b.sh AS distance
FROM dp_low a JOIN dp_low b ON a.id < b.id AND a.sh <~> b.sh <= 3;
SELECT count(*) AS brute_pairs FROM dp_low_brute;
SELECT count(*) AS missing_or_extra FROM (
    (SELECT * FROM simhash_pairs('dp_low', 'id', 'sh', 3) EXCEPT ALL SELECT * FROM dp_low_brute)
    UNION ALL
    (SELECT * FROM dp_low_brute EXCEPT ALL SELECT * FROM simhash_pairs('dp_low', 'id', 'sh', 3))) x;
SET work_mem = '64kB';
SELECT count(*) AS missing_or_extra_batched FROM (
    (SELECT * FROM simhash_pairs('dp_low', 'id', 'sh', 3) EXCEPT ALL SELECT * FROM dp_low_brute)
    UNION ALL
    (SELECT * FROM dp_low_brute EXCEPT ALL SELECT * FROM simhash_pairs('dp_low', 'id', 'sh', 3))) x;
-- The same called in the select list, where rows stream (below), batched,
-- and stopped early, mid-batch: the batch files are closed, not leaked.
SELECT count(*) AS missing_or_extra_streamed FROM (
    (SELECT (p).* FROM (SELECT simhash_pairs('dp_low', 'id', 'sh', 3) AS p) s
     EXCEPT ALL SELECT * FROM dp_low_brute)
    UNION ALL
    (SELECT * FROM dp_low_brute
     EXCEPT ALL SELECT (p).* FROM (SELECT simhash_pairs('dp_low', 'id', 'sh', 3) AS p) s)) x;
SELECT count(*) AS first_rows FROM (SELECT simhash_pairs('dp_low', 'id', 'sh', 3) LIMIT 7) s;
RESET work_mem;
DROP TABLE dp_low, dp_low_brute;

-- Streaming (doc/dedup-pairs.md): in the select list simhash_pairs hands out its
-- pairs one at a time, expanding a group of identical codes only as far as
-- rows are asked for, so LIMIT and a cursor stop the work.  20,000 copies
-- of one code are 199,990,000 pairs, gigabytes as a stored result: with
-- temp_file_limit at 1MB the FROM form, whose result PostgreSQL stores
-- whole before the first row, fails; the select-list form does not.
CREATE TABLE dp_group AS
SELECT i AS id, CASE WHEN i <= 20000 THEN '00000000000000ff'::simhash64
                     ELSE ('x' || md5(i::text))::bit(64)::bigint::simhash64 END AS sh
FROM generate_series(1, 30000) i;
SET temp_file_limit = '1MB';
-- (53400, configuration_limit_exceeded; the message quotes the setting's
-- name from 17)
\set VERBOSITY sqlstate
SELECT count(*) FROM (SELECT * FROM simhash_pairs('dp_group', 'id', 'sh') LIMIT 5) s;
\set VERBOSITY default
SELECT count(*) AS pairs, max((p).distance) AS max_distance
FROM (SELECT simhash_pairs('dp_group', 'id', 'sh') AS p LIMIT 5) s;
BEGIN;
DECLARE dp_cur CURSOR FOR SELECT (p).distance FROM (SELECT simhash_pairs('dp_group', 'id', 'sh') AS p) s;
MOVE 1000000 FROM dp_cur;
FETCH 2 FROM dp_cur;
CLOSE dp_cur;
COMMIT;
RESET temp_file_limit;
DROP TABLE dp_group;
