-- Incremental clusters benchmark (test/bench/run_clusters_update.sh), the
-- setup: a table of :rows rows and its state, up to date; then
-- lib/clusters_update_night.sql runs one kind of night on it.  The index is
-- :am; the id column is the primary key.
--
-- Table: :rows random codes, one group of :group identical codes, groups of
-- 10 near-copies covering 2% of the rows.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS neardup;
DROP TABLE IF EXISTS u, u_state;
CREATE TABLE u (id bigint PRIMARY KEY, sh simhash64);
INSERT INTO u SELECT i, hashint8extended(i, 21)::simhash64 FROM generate_series(1, :rows - :group - :rows / 50) i;
INSERT INTO u SELECT :rows - :group - :rows / 50 + i, 'deadbeefdeadbeef'::simhash64 FROM generate_series(1, :group) i;
INSERT INTO u SELECT :rows - :rows / 50 + i,
       (hashint8extended(i / 10, 22) # CASE WHEN i % 10 = 0 THEN 0 ELSE 1::bigint << (i % 64)::int END)::simhash64
FROM generate_series(1, :rows / 50) i;
CREATE INDEX u_sh ON u USING :am (sh);
CREATE TABLE u_state (id bigint PRIMARY KEY, cluster_id bigint NOT NULL);
CREATE INDEX ON u_state (cluster_id);
VACUUM ANALYZE u;
SELECT count(*) AS clustered_rows FROM simhash_clusters_update('u_state', 'u', 'id', 'sh', NULL);
VACUUM ANALYZE u_state;
SELECT max(id) AS last_id FROM u \gset

-- The night's change, made once and rolled back with each run: :new new
-- rows (a third random, a third exact copies of old random rows, a third
-- copies 1 or 2 bits off), :near_group of them near copies of the large group
-- (1 bit off), and :gone deleted rows.
CREATE OR REPLACE FUNCTION night_change(n int, near_group int, g int, total int, grp int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO u SELECT (SELECT max(id) FROM u) + i,
        CASE WHEN i <= near_group THEN 'deadbeefdeadbeef'::simhash64::bigint # (1::bigint << (i % 64)::int)
             WHEN i % 3 = 0 THEN hashint8extended(i, 23)
             ELSE (SELECT sh::bigint FROM u WHERE id = (hashint8extended(i, 24) & 1048575) % (total - grp - total / 50) + 1)
                  # CASE WHEN i % 3 = 1 THEN 0 ELSE 1::bigint << (i % 64)::int END
                  # CASE WHEN i % 6 = 2 THEN 1::bigint << ((i / 64) % 64)::int ELSE 0 END
        END::simhash64
    FROM generate_series(1, n) i;
    DELETE FROM u WHERE id IN (SELECT (hashint8extended(i, 25) & 1048575) % total + 1 FROM generate_series(1, g) i);
$$;
\ir lib/bench_run.sql
CREATE TEMP TABLE r (what text, seconds numeric, result bigint);
