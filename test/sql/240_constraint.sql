--
-- The near-duplicate exclusion constraint:
--   EXCLUDE USING hamming|gist (hamming_ball(sh, k) WITH &&)
-- no two rows with fingerprints within k bits.
--

-- The operator: each center within the other's radius, i.e. the centers at
-- most the smaller radius apart; commutative; equal to the distance test
-- wherever it is evaluated.
SELECT hamming_ball('0000000000000000', 3) && hamming_ball('0000000000000007', 3) AS d3_k3,
       hamming_ball('0000000000000000', 3) && hamming_ball('000000000000000f', 3) AS d4_k3,
       hamming_ball('0000000000000000', 2) && hamming_ball('0000000000000007', 5) AS d3_k2_k5,
       hamming_ball('0000000000000007', 5) && hamming_ball('0000000000000000', 2) AS d3_k5_k2,
       hamming_ball('0000000000000000', 0) && hamming_ball('0000000000000000', 0) AS equal_k0,
       hamming_ball('0000000000000000', 64) && hamming_ball('ffffffffffffffff', 64) AS d64_k64,
       '(0000000000000000,-1)'::hamming_ball && hamming_ball('0000000000000000', 3) AS empty_ball,
       hamming_ball(NULL, 3) && hamming_ball('0000000000000000', 3) AS null_center;
CREATE TEMP TABLE codes AS
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64 AS sh FROM generate_series(1, 300) i
UNION ALL
SELECT 1000 + i, ((('x' || md5((i % 7)::text))::bit(64)::bigint) # (i::bigint * 37 % 4096))::simhash64
FROM generate_series(1, 100) i;
SELECT k, count(*) FILTER (WHERE hamming_ball(a.sh, k) && hamming_ball(b.sh, k))
          = count(*) FILTER (WHERE bit_count((a.sh::bigint # b.sh::bigint)::bit(64)) <= k) AS same_as_distance,
       count(*) FILTER (WHERE (hamming_ball(a.sh, k) && hamming_ball(b.sh, least(k + 1, 64))) IS DISTINCT FROM (hamming_ball(b.sh, least(k + 1, 64)) && hamming_ball(a.sh, k))) AS not_commutative,
       count(*) FILTER (WHERE hamming_ball(a.sh, k) && hamming_ball(b.sh, k)) AS pairs
FROM codes a, codes b, (VALUES (0), (3), (10), (64)) r(k)
GROUP BY k ORDER BY k;

-- The operator classes behind it, default for hamming_ball on both access
-- methods.
SELECT c.opcname, a.amname, c.opcdefault, amvalidate(c.oid)
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE c.opcname LIKE 'hamming_ball%' ORDER BY 1;

-- k = 3 on both access methods.
CREATE TABLE nd_tickets_h (id int PRIMARY KEY, sh simhash64,
    CONSTRAINT nd_tickets_h_near EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&));
CREATE TABLE nd_tickets_g (id int PRIMARY KEY, sh simhash64,
    CONSTRAINT nd_tickets_g_near EXCLUDE USING gist (hamming_ball(sh, 3) WITH &&));
SELECT t, nd_test.try(format('INSERT INTO %I VALUES (1, %L)', t, '0000000000000000'), with_detail => true) AS first,
       nd_test.try(format('INSERT INTO %I VALUES (2, %L)', t, '0000000000000007'), with_detail => true) AS three_bits,
       nd_test.try(format('INSERT INTO %I VALUES (3, %L)', t, '000000000000000f'), with_detail => true) AS four_bits,
       nd_test.try(format('INSERT INTO %I VALUES (4, NULL), (5, NULL)', t), with_detail => true) AS nulls,
       nd_test.try(format('INSERT INTO %I VALUES (6, %L), (7, %L)', t, 'ff00000000000000', 'ff00000000000001'), with_detail => true) AS multi_row,
       nd_test.try(format('UPDATE %I SET sh = %L WHERE id = 3', t, '0000000000000003'), with_detail => true) AS update_near,
       nd_test.try(format('UPDATE %I SET sh = %L WHERE id = 3', t, '00000000000000ff'), with_detail => true) AS update_away
FROM (VALUES ('nd_tickets_h'), ('nd_tickets_g')) v(t);
SELECT * FROM nd_tickets_h ORDER BY id;
SELECT * FROM nd_tickets_g ORDER BY id;

-- ON CONFLICT DO NOTHING skips near-copies, also within one statement.
INSERT INTO nd_tickets_h VALUES (10, '0000000000000001'), (11, 'f0f0f0f0f0f0f0f0'), (12, 'f0f0f0f0f0f0f0f1')
ON CONFLICT DO NOTHING;
INSERT INTO nd_tickets_h VALUES (13, '00000000000000fe') ON CONFLICT ON CONSTRAINT nd_tickets_h_near DO NOTHING;
INSERT INTO nd_tickets_g VALUES (10, '0000000000000001'), (11, 'f0f0f0f0f0f0f0f0'), (12, 'f0f0f0f0f0f0f0f1')
ON CONFLICT DO NOTHING;
INSERT INTO nd_tickets_g VALUES (13, '00000000000000fe') ON CONFLICT ON CONSTRAINT nd_tickets_g_near DO NOTHING;
SELECT (SELECT array_agg(id ORDER BY id) FROM nd_tickets_h) AS hamming_ids,
       (SELECT array_agg(id ORDER BY id) FROM nd_tickets_g) AS gist_ids;
-- ON CONFLICT DO UPDATE needs a unique index: PostgreSQL refuses it.
INSERT INTO nd_tickets_h VALUES (14, '0000000000000001')
ON CONFLICT ON CONSTRAINT nd_tickets_h_near DO UPDATE SET sh = excluded.sh;

-- COPY: the error names the line.
COPY nd_tickets_h FROM stdin;
20	1234567890abcdef
21	1234567890abcdee
\.
SELECT count(*) FROM nd_tickets_h WHERE id >= 20;

-- Queries use the constraint's index too (rechecked: the index keeps the
-- center, not the radius).
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM nd_tickets_h WHERE hamming_ball(sh, 3) && hamming_ball('0000000000000002', 3);
SELECT id FROM nd_tickets_h WHERE hamming_ball(sh, 3) && hamming_ball('0000000000000002', 3);
SELECT id FROM nd_tickets_h WHERE hamming_ball(sh, 3) && hamming_ball('0000000000000002', 0);
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM nd_tickets_g WHERE hamming_ball(sh, 3) && hamming_ball('0000000000000002', 3);
SELECT id FROM nd_tickets_g WHERE hamming_ball(sh, 3) && hamming_ball('0000000000000002', 3);
SELECT id FROM nd_tickets_h WHERE hamming_ball(sh, 3) && hamming_ball('0000000000000002', 3);
RESET enable_bitmapscan;
RESET enable_seqscan;
SELECT hamming_check('nd_tickets_h_near', true);

-- DEFERRABLE INITIALLY DEFERRED: checked at commit, so rows may swap places
-- within a transaction; a near-copy still fails, at COMMIT.
CREATE TABLE nd_deferred (id int PRIMARY KEY, sh simhash64,
    EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&) DEFERRABLE INITIALLY DEFERRED);
INSERT INTO nd_deferred VALUES (1, '0000000000000000'), (2, 'ffffffffffffffff');
BEGIN;
UPDATE nd_deferred SET sh = 'fffffffffffffffe' WHERE id = 1;
UPDATE nd_deferred SET sh = '0000000000000001' WHERE id = 2;
UPDATE nd_deferred SET sh = 'f000000000000000' WHERE id = 1;
COMMIT;
SELECT * FROM nd_deferred ORDER BY id;
BEGIN;
INSERT INTO nd_deferred VALUES (3, '0000000000000003');
SELECT count(*) FROM nd_deferred;
COMMIT;
SELECT count(*) FROM nd_deferred;

-- k = 0 (equal codes), 10, 64 (one non-NULL row at most).
CREATE TABLE nd_k (k int, id int, sh simhash64);
CREATE TABLE nd_k0 (LIKE nd_k, EXCLUDE USING hamming (hamming_ball(sh, 0) WITH &&));
CREATE TABLE nd_k10 (LIKE nd_k, EXCLUDE USING hamming (hamming_ball(sh, 10) WITH &&));
CREATE TABLE nd_k64 (LIKE nd_k, EXCLUDE USING gist (hamming_ball(sh, 64) WITH &&));
INSERT INTO nd_k0 SELECT 0, i, sh FROM codes i ON CONFLICT DO NOTHING;
INSERT INTO nd_k0 SELECT 0, i, sh FROM codes i ON CONFLICT DO NOTHING;
INSERT INTO nd_k10 SELECT 10, i, sh FROM codes i ON CONFLICT DO NOTHING;
INSERT INTO nd_k64 SELECT 64, i, sh FROM codes i ON CONFLICT DO NOTHING;
INSERT INTO nd_k64 VALUES (64, -1, NULL), (64, -2, NULL);
SELECT 0 AS k, count(*) FROM nd_k0 UNION ALL SELECT 10, count(*) FROM nd_k10
UNION ALL SELECT 64, count(*) FROM nd_k64 ORDER BY k;
SELECT count(DISTINCT sh) AS distinct_codes FROM codes;

-- An ordered stream of near-copies, through ON CONFLICT DO NOTHING: the
-- rows kept are those a brute-force greedy pass keeps (each row kept iff no
-- kept row is within k; distances by bit_count), on both access methods,
-- with merges of the hamming index's pending list into its run along the
-- way.
CREATE TABLE nd_stream AS
SELECT i AS id, CASE WHEN i % 3 = 0 THEN ('x' || md5('s' || i))::bit(64)::bigint
                     ELSE ('x' || md5('c' || (i % 97)))::bit(64)::bigint # (1::bigint << (i % 64)) # (1::bigint << (i * 7 % 64))
                END::simhash64 AS sh
FROM generate_series(1, 6000) i;
CREATE TABLE nd_stream_h (id int, sh simhash64, EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&));
CREATE TABLE nd_stream_g (id int, sh simhash64, EXCLUDE USING gist (hamming_ball(sh, 3) WITH &&));
CREATE TABLE nd_stream_b (id int, sh simhash64);
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM nd_stream ORDER BY id LOOP
        INSERT INTO nd_stream_h VALUES (r.id, r.sh) ON CONFLICT DO NOTHING;
        IF r.id % 1500 = 0 THEN
            PERFORM hamming_merge('nd_stream_h_hamming_ball_excl');
        END IF;
        INSERT INTO nd_stream_g VALUES (r.id, r.sh) ON CONFLICT DO NOTHING;
        IF NOT EXISTS (SELECT 1 FROM nd_stream_b b
                       WHERE bit_count((b.sh::bigint # r.sh::bigint)::bit(64)) <= 3) THEN
            INSERT INTO nd_stream_b VALUES (r.id, r.sh);
        END IF;
    END LOOP;
END $$;
SELECT (SELECT count(*) FROM nd_stream_b) AS kept,
       (SELECT array_agg(id ORDER BY id) FROM nd_stream_h) = (SELECT array_agg(id ORDER BY id) FROM nd_stream_b) AS hamming_agrees,
       (SELECT array_agg(id ORDER BY id) FROM nd_stream_g) = (SELECT array_agg(id ORDER BY id) FROM nd_stream_b) AS gist_agrees,
       (SELECT count(*) FROM nd_stream_h a JOIN nd_stream_h b ON a.id < b.id
        AND bit_count((a.sh::bigint # b.sh::bigint)::bit(64)) <= 3) AS pairs_left;
SELECT hamming_check(i.indexrelid::regclass, true)
FROM pg_index i WHERE i.indrelid = 'nd_stream_h'::regclass;

-- Adding the constraint to a table that holds near-copies names a pair;
-- dedup_keep_one first, then the constraint.
CREATE TABLE nd_crawl (id int PRIMARY KEY, sh simhash64);
INSERT INTO nd_crawl SELECT id, sh FROM nd_stream WHERE id <= 500;
-- (from 17 the index is built under the maintenance search path, pg_catalog
-- and pg_temp, which then names the key's function with its schema: so on
-- every major here)
SET search_path = pg_catalog, pg_temp;
ALTER TABLE public.nd_crawl ADD CONSTRAINT nd_crawl_near
    EXCLUDE USING hamming (public.hamming_ball(sh, 3) WITH OPERATOR(public.&&));
RESET search_path;
SELECT dedup_keep_one('nd_crawl', 'id', $$SELECT id_a, id_b FROM simhash_pairs('nd_crawl', 'id', 'sh', 3)$$) > 0 AS removed;
ALTER TABLE nd_crawl ADD CONSTRAINT nd_crawl_near EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&);
SELECT count(*) > 0 AS rows_left FROM nd_crawl;

-- What is refused.
CREATE TABLE nd_parted (id int, sh simhash64) PARTITION BY RANGE (id);
-- (feature_not_supported: before 17 for any exclusion constraint on a
-- partitioned table, from 17 for one without the partition key)
\set VERBOSITY sqlstate
ALTER TABLE nd_parted ADD EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&);
\set VERBOSITY default
CREATE TABLE nd_parted_1 PARTITION OF nd_parted FOR VALUES FROM (0) TO (1000);
ALTER TABLE nd_parted_1 ADD EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&);
CREATE TABLE nd_bad (id int, sh simhash64);
ALTER TABLE nd_bad ADD EXCLUDE USING gin (hamming_ball(sh, 3) WITH &&);
ALTER TABLE nd_bad ADD EXCLUDE USING hamming (sh WITH &&);
ALTER TABLE nd_bad ADD EXCLUDE USING hamming (hamming_ball(sh, 3) WITH <@);
SELECT nd_test.try($$SELECT hamming_ball('0000000000000000', 3) && '0000000000000000'::simhash64$$, with_detail => true);

DROP TABLE nd_tickets_h, nd_tickets_g, nd_deferred, nd_k, nd_k0, nd_k10, nd_k64,
    nd_stream, nd_stream_h, nd_stream_g, nd_stream_b, nd_crawl, nd_parted, nd_bad;
