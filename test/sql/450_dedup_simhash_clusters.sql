--
-- simhash_clusters(): connected components of "within max_distance bits",
-- computed inside the all-pairs scan.  The reference is independent of the
-- extension's C code: a spanning set of edges built in plain SQL (each row
-- to the smallest id of its identical-code group, and brute-force pairs of
-- distinct codes by bit_count), fed to dedup_clusters (itself checked
-- against a recursive CTE in 420_dedup_clusters).  Data: random codes,
-- planted near-copies, a chain whose ends are far apart, a giant group of
-- identical codes, repeated ids, NULLs; every k, several block counts, the
-- batched path; the three argument forms; edge cases and errors.
--
CREATE TABLE dc (id bigint, sh simhash64);
INSERT INTO dc SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64
FROM generate_series(1, 4000) i;
-- Near-copies of every 10th code, id % 6 bits flipped (some flips coincide).
CREATE FUNCTION dc_flips(seed bigint, d int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(bit_or(1::bigint << (get_byte(decode(md5(seed || '/' || k), 'hex'), 0) & 63)), 0)
    FROM generate_series(1, d) k
$$;
INSERT INTO dc SELECT 100000 + id, (sh::bigint # dc_flips(id, (id % 6)::int))::simhash64
FROM dc WHERE id % 10 = 0;
-- A chain: code k differs from code k-1 in one bit, from code 0 in k bits.
INSERT INTO dc SELECT 200000 + k, (('x' || md5('chain'))::bit(64)::bigint # ((1::bigint << k) - 1))::simhash64
FROM generate_series(0, 62) k;
-- A giant group of identical codes (its pairs: 2,998,500), and a copy of
-- that code with one bit flipped; small groups of copies.
INSERT INTO dc SELECT 300000 + i, ('x' || md5('empty page'))::bit(64)::bigint::simhash64
FROM generate_series(1, 2450) i;
INSERT INTO dc VALUES (299999, (('x' || md5('empty page'))::bit(64)::bigint # 1024)::simhash64);
INSERT INTO dc SELECT 400000 + i, ('x' || md5('copy' || (i % 40)))::bit(64)::bigint::simhash64
FROM generate_series(1, 200) i;
-- Repeated ids: 500000 twice with codes 1 bit apart (one node: no cluster
-- by itself); 500001 twice, once near 500002.
INSERT INTO dc VALUES (500000, '0123456789abcdef'), (500000, '0123456789abcdee'),
                      (500001, 'fedcba9876543210'), (500001, '00000000ffffffff'),
                      (500002, 'fedcba9876543211');
-- NULL fingerprints are skipped.
INSERT INTO dc SELECT 600000 + i, NULL FROM generate_series(1, 20) i;
SELECT count(*) AS rows, count(sh) AS fingerprints, count(DISTINCT sh) AS codes FROM dc;

-- The reference edges, up to distance 4: brute force over distinct codes.
CREATE TABLE dc_code AS
SELECT sh, min(id) AS rep FROM dc WHERE sh IS NOT NULL GROUP BY sh;
CREATE TABLE dc_code_pairs AS
SELECT a.rep AS a, b.rep AS b, bit_count((a.sh::bigint # b.sh::bigint)::bit(64))::int AS d
FROM dc_code a JOIN dc_code b ON a.sh < b.sh
WHERE bit_count((a.sh::bigint # b.sh::bigint)::bit(64)) <= 4;
CREATE FUNCTION dc_reference(k int) RETURNS TABLE (id bigint, cluster_id bigint)
LANGUAGE sql AS $$
    SELECT * FROM dedup_clusters(format(
        'SELECT d.id, c.rep FROM dc d JOIN dc_code c USING (sh)
         UNION ALL SELECT a, b FROM dc_code_pairs WHERE d <= %s', k))
$$;

-- Every k, default blocks: the same (id, cluster_id) rows, each id once.
SELECT k,
       (SELECT count(*) FROM simhash_clusters('dc', 'id', 'sh', k)) AS clustered,
       (SELECT count(DISTINCT cluster_id) FROM simhash_clusters('dc', 'id', 'sh', k)) AS clusters,
       (SELECT count(*) FROM dc_reference(k)) AS reference,
       (SELECT count(*) FROM (SELECT * FROM simhash_clusters('dc', 'id', 'sh', k)
                              EXCEPT ALL SELECT * FROM dc_reference(k)) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM dc_reference(k)
                              EXCEPT ALL SELECT * FROM simhash_clusters('dc', 'id', 'sh', k)) x) AS missing
FROM generate_series(0, 4) k ORDER BY k;

-- Explicit block counts, the fewest and the most.
SELECT k, blocks,
       (SELECT count(*) FROM (SELECT * FROM simhash_clusters('dc', 'id', 'sh', k, blocks)
                              EXCEPT ALL SELECT * FROM dc_reference(k)) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM dc_reference(k)
                              EXCEPT ALL SELECT * FROM simhash_clusters('dc', 'id', 'sh', k, blocks)) x) AS missing
FROM (VALUES (0, 2), (1, 2), (2, 3), (3, 4), (3, 8), (4, 5), (4, 16)) v(k, blocks)
ORDER BY k, blocks;

-- The batched path (rows spilled to temporary files, one key batch of one
-- table at a time): the same clusters.
SET work_mem = '64kB';
SELECT k,
       (SELECT count(*) FROM (SELECT * FROM simhash_clusters('dc', 'id', 'sh', k)
                              EXCEPT ALL SELECT * FROM dc_reference(k)) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM dc_reference(k)
                              EXCEPT ALL SELECT * FROM simhash_clusters('dc', 'id', 'sh', k)) x) AS missing
FROM generate_series(0, 4) k ORDER BY k;
RESET work_mem;

-- Equal to dedup_clusters over simhash_pairs, as documented (k = 1: the
-- giant group's 3 million pairs would dominate the suite at any k).
SELECT (SELECT count(*) FROM (SELECT * FROM simhash_clusters('SELECT id, sh FROM dc WHERE id < 300000 OR id > 302000', 3)
                              EXCEPT ALL
                              SELECT * FROM dedup_clusters('SELECT id_a, id_b FROM simhash_pairs(''SELECT id, sh FROM dc WHERE id < 300000 OR id > 302000'', 3)')) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM dedup_clusters('SELECT id_a, id_b FROM simhash_pairs(''SELECT id, sh FROM dc WHERE id < 300000 OR id > 302000'', 3)')
                              EXCEPT ALL
                              SELECT * FROM simhash_clusters('SELECT id, sh FROM dc WHERE id < 300000 OR id > 302000', 3)) x) AS missing;

-- What the clusters hold: the chain is one cluster at k = 1 though its ends
-- are 62 bits apart; the giant group and its one-bit neighbour are one
-- cluster; the twice-listed id 500000 is no cluster, 500001 is one with
-- 500002.
SELECT cluster_id, count(*), min(id), max(id)
FROM simhash_clusters('dc', 'id', 'sh', 1)
WHERE id >= 200000 GROUP BY cluster_id HAVING count(*) > 5 OR min(id) >= 500000 ORDER BY cluster_id;

-- Output is in id order.
SELECT bool_and(id > prev) AS ascending
FROM (SELECT id, lag(id) OVER () AS prev FROM simhash_clusters('dc', 'id', 'sh', 2)) s
WHERE prev IS NOT NULL;

-- The three forms agree; domains over integer ids are accepted.
CREATE DOMAIN dc_id AS int;
SELECT (SELECT count(*) FROM simhash_clusters('dc'::regclass, 'id', 'sh', 2)) AS regclass_form,
       (SELECT count(*) FROM simhash_clusters('dc', 'id', 'sh', 2)) AS text_form,
       (SELECT count(*) FROM simhash_clusters('SELECT id::int::dc_id, sh FROM dc', 2)) AS query_form;
DROP DOMAIN dc_id;

-- Edge cases: empty, one row, only NULLs, NULL arguments (22004).
SELECT count(*) FROM simhash_clusters('SELECT 1::int, NULL::simhash64 WHERE false');
SELECT * FROM simhash_clusters('SELECT 1::int, ''0000000000000000''::simhash64');
SELECT * FROM simhash_clusters('SELECT 1::int, NULL::simhash64');
SELECT * FROM simhash_clusters('VALUES (7, ''00000000000000ff''::simhash64), (3, ''00000000000000ff''), (5, ''00000000000000fe'')', 0);
SELECT * FROM simhash_clusters(NULL::text);
SELECT * FROM simhash_clusters('dc', NULL, 'sh');

-- A huge group of identical codes: linear (100,000 copies would be 5e9
-- pairs), and cancellable.
SELECT count(*), count(DISTINCT cluster_id), min(cluster_id)
FROM simhash_clusters('SELECT i, ''0123456789abcdef''::simhash64 FROM generate_series(1, 100000) i', 3);
SET statement_timeout = '100ms';
SELECT count(*) FROM simhash_clusters('SELECT i, (i % 50000)::bigint::simhash64 FROM generate_series(1, 2000000) i', 8);
RESET statement_timeout;

-- Keep-one from clusters: a clusters query (id, cluster_id) is a pairs
-- query (every member to its cluster's smallest id), so dedup_keep_one and
-- dedup_representatives take it as they are: the same rows survive as
-- with the pairs, on two copies of a table with near-copies and a group of
-- 300 identical codes.
CREATE TABLE dc_keep_a AS
SELECT id, sh, md5(id::text) AS body FROM dc WHERE id < 2000 OR id BETWEEN 100000 AND 102000 OR id BETWEEN 300000 AND 300300;
CREATE TABLE dc_keep_b AS SELECT * FROM dc_keep_a;
SELECT (SELECT count(*) FROM dedup_representatives('dc_keep_a', 'id',
            $$SELECT id_a, id_b FROM simhash_pairs('dc_keep_a', 'id', 'sh', 3)$$, 'body')) AS by_pairs,
       (SELECT count(*) FROM (
            SELECT * FROM dedup_representatives('dc_keep_a', 'id',
                $$SELECT id_a, id_b FROM simhash_pairs('dc_keep_a', 'id', 'sh', 3)$$, 'body')
            EXCEPT ALL
            SELECT * FROM dedup_representatives('dc_keep_b', 'id',
                $$SELECT id, cluster_id FROM simhash_clusters('dc_keep_b', 'id', 'sh', 3)$$, 'body')) x) AS differ;
SELECT dedup_keep_one('dc_keep_a', 'id', $$SELECT id_a, id_b FROM simhash_pairs('dc_keep_a', 'id', 'sh', 3)$$, 'body') AS deleted_by_pairs,
       dedup_keep_one('dc_keep_b', 'id', $$SELECT id, cluster_id FROM simhash_clusters('dc_keep_b', 'id', 'sh', 3)$$, 'body') AS deleted_by_clusters;
SELECT (SELECT count(*) FROM dc_keep_a) AS left_a,
       (SELECT count(*) FROM (SELECT id FROM dc_keep_a EXCEPT SELECT id FROM dc_keep_b) x) AS only_a,
       (SELECT count(*) FROM (SELECT id FROM dc_keep_b EXCEPT SELECT id FROM dc_keep_a) x) AS only_b,
       (SELECT count(*) FROM simhash_clusters('dc_keep_b', 'id', 'sh', 3)) AS clustered_after;
DROP TABLE dc_keep_a, dc_keep_b;

-- Errors, with their SQLSTATEs.
CREATE FUNCTION dc_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
CREATE TABLE dc_bad (tid text, code bigint, sh simhash64);
SELECT q, dc_try(q) FROM (VALUES
    ($$SELECT * FROM simhash_clusters('dc', 'id', 'sh', -1)$$),
    ($$SELECT * FROM simhash_clusters('dc', 'id', 'sh', 16)$$),
    ($$SELECT * FROM simhash_clusters('dc', 'id', 'sh', NULL)$$),
    ($$SELECT * FROM simhash_clusters('dc', 'id', 'sh', 3, 3)$$),
    ($$SELECT * FROM simhash_clusters('dc_bad', 'tid', 'sh')$$),
    ($$SELECT * FROM simhash_clusters('dc_bad', 'code', 'code')$$),
    ($$SELECT * FROM simhash_clusters('dc', 'nope', 'sh')$$),
    ($$SELECT * FROM simhash_clusters('no_such_table', 'id', 'sh')$$),
    ($$SELECT * FROM simhash_clusters('SELECT id FROM dc')$$),
    ($$SELECT * FROM simhash_clusters('SELECT NULL::int, ''0000000000000000''::simhash64')$$),
    ($$SELECT * FROM simhash_clusters('SELECT 1; SELECT 2')$$),
    ($$SELECT * FROM simhash_clusters('DELETE FROM dc RETURNING id, sh')$$)
) v(q);
SELECT count(*) AS still_there FROM dc;

DROP TABLE dc_bad;
DROP FUNCTION dc_try(text);
DROP FUNCTION dc_reference(int);
DROP TABLE dc, dc_code, dc_code_pairs;
DROP FUNCTION dc_flips(bigint, int);
