--
-- Nightly runs on any index that serves radius search on the fingerprint
-- (simhash_radius_indexes): the hamming index the README recommends, GIN,
-- GiST, or the near-duplicate constraint's.  simhash_pairs_since and
-- simhash_clusters_update probe it; when a night falls back to a full run
-- it says so, and why, at NOTICE.
--
CREATE FUNCTION ix_code(i int) RETURNS bigint LANGUAGE sql IMMUTABLE
AS $$ SELECT ('x' || md5('ix_n' || i))::bit(64)::bigint $$;

-- 3,000 random codes, copies of 1..40 one bit off, two NULL codes.
CREATE TABLE ix_n (id bigint PRIMARY KEY, sh simhash64);
INSERT INTO ix_n SELECT i, ix_code(i)::simhash64 FROM generate_series(1, 3000) i;
INSERT INTO ix_n SELECT 3000 + i, (ix_code(i) # (1::bigint << 9))::simhash64 FROM generate_series(1, 40) i;
INSERT INTO ix_n VALUES (3041, NULL), (3042, NULL);

-- Which indexes serve radius search: led by the column with a radius
-- operator class; not a partial one, a btree, one led by another column.
CREATE INDEX ix_n_hamming ON ix_n USING hamming (sh);
CREATE INDEX ix_n_gin ON ix_n USING gin (sh);
CREATE INDEX ix_n_gist ON ix_n USING gist (sh);
CREATE INDEX ix_n_partial ON ix_n USING hamming (sh) WHERE id > 10;
CREATE INDEX ix_n_btree ON ix_n (sh);
CREATE INDEX ix_n_id_sh ON ix_n (id, sh);
SELECT simhash_radius_indexes('ix_n', 'sh') AS serves_sh ORDER BY 1::text;
SELECT count(*) AS serves_id FROM simhash_radius_indexes('ix_n', 'id');
SELECT simhash_radius_indexes('ix_n', 'nope');
SELECT count(*) FROM simhash_radius_indexes(NULL, 'sh');
DROP INDEX ix_n_gin, ix_n_gist, ix_n_partial, ix_n_btree, ix_n_id_sh;
-- The constraint's index, on a hamming index; a GiST one does not serve
-- radius search (its operator class has && only).
CREATE TABLE ix_nc (id bigint PRIMARY KEY, sh simhash64,
    CONSTRAINT ix_nc_near EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&));
CREATE TABLE ix_ng (id bigint PRIMARY KEY, sh simhash64,
    CONSTRAINT ix_ng_near EXCLUDE USING gist (hamming_ball(sh, 3) WITH &&));
SELECT (SELECT array_agg(x) FROM simhash_radius_indexes('ix_nc', 'sh') x) AS nc,
       (SELECT array_agg(x) FROM simhash_radius_indexes('ix_ng', 'sh') x) AS ng;
ANALYZE ix_n;

-- simhash_pairs_since on the hamming index alone: probes (the index is
-- scanned), the pairs of a join.  ix_scans(index): its scans so far.
CREATE FUNCTION ix_scans(ix regclass) RETURNS bigint LANGUAGE sql
AS $$ SELECT pg_stat_get_xact_numscans(ix) $$;
INSERT INTO ix_n SELECT 4000 + i, (ix_code(100 + i) # (3::bigint << 20))::simhash64 FROM generate_series(1, 20) i;
BEGIN;
SELECT ix_scans('ix_n_hamming') AS scans_before \gset
CREATE TEMP TABLE since_pairs AS SELECT * FROM simhash_pairs_since('ix_n', 'id', 'sh', 3042);
SELECT ix_scans('ix_n_hamming') > :scans_before AS probed,
       (SELECT count(*) FROM since_pairs) AS pairs,
       (SELECT count(*) FROM (
           (TABLE since_pairs
            EXCEPT SELECT a.id, b.id, a.sh <~> b.sh FROM ix_n a JOIN ix_n b ON a.sh <~> b.sh <= 3 AND a.id < b.id WHERE b.id > 3042)
           UNION ALL
           (SELECT a.id, b.id, a.sh <~> b.sh FROM ix_n a JOIN ix_n b ON a.sh <~> b.sh <= 3 AND a.id < b.id WHERE b.id > 3042
            EXCEPT TABLE since_pairs)) x) AS off;
ROLLBACK;

-- Falling back to a full run says why: too many new rows, or no index.
SELECT count(*) AS pairs FROM simhash_pairs_since('ix_n', 'id', 'sh', 1000);
DROP INDEX ix_n_hamming;
SELECT count(*) AS pairs FROM simhash_pairs_since('ix_n', 'id', 'sh', 3042);
-- Asking for every pair (since NULL) is no fallback.
SELECT count(*) AS pairs FROM simhash_pairs_since('ix_n', 'id', 'sh', NULL);
CREATE INDEX ix_n_hamming ON ix_n USING hamming (sh);

-- simhash_clusters_update on the hamming index alone, then on the
-- constraint's: probes, and the state equals a full simhash_clusters().
CREATE TABLE ix_st (id bigint PRIMARY KEY, cluster_id bigint NOT NULL);
CREATE FUNCTION ix_off(source regclass, state regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ('
                   '(SELECT id, cluster_id FROM %2$s EXCEPT SELECT id, cluster_id FROM simhash_clusters(%1$L, ''id'', ''sh'')) '
                   'UNION ALL '
                   '(SELECT id, cluster_id FROM simhash_clusters(%1$L, ''id'', ''sh'') EXCEPT SELECT id, cluster_id FROM %2$s)) x',
                   source, state) INTO n;
    RETURN n;
END $$;
SELECT count(*) AS first_run FROM simhash_clusters_update('ix_st', 'ix_n', 'id', 'sh', NULL);
INSERT INTO ix_n VALUES (5001, (ix_code(7) # 1)::simhash64), (5002, (ix_code(4001) # 6)::simhash64),
                     (5003, ix_code(-5)::simhash64), (5004, NULL);
BEGIN;
SELECT ix_scans('ix_n_hamming') AS scans_before \gset
SELECT count(*) AS changed FROM simhash_clusters_update('ix_st', 'ix_n', 'id', 'sh', 5000);
SELECT ix_scans('ix_n_hamming') > :scans_before AS probed, ix_off('ix_n', 'ix_st') AS off;
COMMIT;
-- No index: a full run, and a NOTICE.
DROP INDEX ix_n_hamming;
INSERT INTO ix_n VALUES (5005, (ix_code(8) # 1)::simhash64);
SELECT count(*) AS changed FROM simhash_clusters_update('ix_st', 'ix_n', 'id', 'sh', 5004);
SELECT ix_off('ix_n', 'ix_st') AS off;

-- The constraint's table: the nights probe its index.
INSERT INTO ix_nc SELECT id, sh FROM ix_n WHERE id <= 3000 ORDER BY id ON CONFLICT DO NOTHING;
ANALYZE ix_nc;
CREATE TABLE ix_nst (id bigint PRIMARY KEY, cluster_id bigint NOT NULL);
SELECT count(*) AS first_run FROM simhash_clusters_update('ix_nst', 'ix_nc', 'id', 'sh', NULL, 5);
INSERT INTO ix_nc VALUES (6001, (ix_code(9) # 15)::simhash64), (6002, (ix_code(9) # 255)::simhash64),
                      (6003, (ix_code(10) # 31)::simhash64), (6004, NULL);
BEGIN;
SELECT ix_scans('ix_nc_near') AS scans_before \gset
SELECT count(*) AS changed FROM simhash_clusters_update('ix_nst', 'ix_nc', 'id', 'sh', 6000, 5);
CREATE TEMP TABLE pairs AS SELECT * FROM simhash_pairs_since('ix_nc', 'id', 'sh', 6000, 5);
SELECT ix_scans('ix_nc_near') > :scans_before AS probed,
       (SELECT count(*) FROM (
           (SELECT id, cluster_id FROM ix_nst EXCEPT SELECT id, cluster_id FROM simhash_clusters('ix_nc', 'id', 'sh', 5))
           UNION ALL
           (SELECT id, cluster_id FROM simhash_clusters('ix_nc', 'id', 'sh', 5) EXCEPT SELECT id, cluster_id FROM ix_nst)) x) AS off,
       (SELECT array_agg(p ORDER BY p) FROM pairs p) AS pairs,
       (SELECT array_agg((a.id, b.id, a.sh <~> b.sh) ORDER BY a.id, b.id) FROM ix_nc a JOIN ix_nc b ON a.sh <~> b.sh <= 5 AND a.id < b.id
        WHERE b.id > 6000) AS join_pairs;
COMMIT;

DROP TABLE ix_n, ix_nc, ix_ng, ix_st, ix_nst;
DROP FUNCTION ix_code(int), ix_scans(regclass), ix_off(regclass, regclass);
