--
-- The hamming index's introspection and options (issue 29, part 3):
-- the entry counts after VACUUM, partitioned indexes in hamming_stats,
-- hamming_runs, hamming_check and hamming_merge, the `blocks` option's
-- errors, and ALTER INDEX ... SET (blocks = n).
--

-- One run from the build; later inserts go to the pending list, which
-- nothing merges behind our back (background_merge off, list far below
-- pending_limit); NULLs in the nulls list.
CREATE TABLE hi (id int, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO hi SELECT i, hashint8extended(i, 29)::simhash64 FROM generate_series(1, 60000) i;
INSERT INTO hi SELECT 100000 + i, NULL FROM generate_series(1, 1500) i;
CREATE INDEX hi_sh ON hi USING hamming (sh) WITH (background_merge = off);
INSERT INTO hi SELECT i, hashint8extended(i, 29)::simhash64 FROM generate_series(60001, 61300) i;
INSERT INTO hi SELECT 100000 + i, NULL FROM generate_series(1501, 1700) i;

-- VACUUM removes what no snapshot can see: wait (at most a minute) until
-- no other session holds back the horizon (an autovacuum's ANALYZE of an
-- earlier suite's table, a merge worker), or the counts below would keep
-- rows that VACUUM had to leave.
CREATE PROCEDURE pg_temp.wait_for_horizon() LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 600 LOOP
    EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity
                          WHERE pid <> pg_backend_pid() AND backend_xmin IS NOT NULL);
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;

-- Every list's count is exact, the tail page included.
CREATE FUNCTION pg_temp.counts_match(idx regclass) RETURNS TABLE (runs bool, pending bool, nulls bool)
LANGUAGE sql AS $$
    SELECT s.run_entries = (SELECT count(sh) FROM hi WHERE id <= 60000),
           s.run_entries + s.pending_entries + s.sealed_entries = (SELECT count(sh) FROM hi),
           s.null_entries = (SELECT count(*) - count(sh) FROM hi)
    FROM hamming_stats(idx) s
$$;
SELECT run_entries, pending_entries, sealed_entries, null_entries FROM hamming_stats('hi_sh');
SELECT * FROM pg_temp.counts_match('hi_sh');

-- Deletes from the run, from every page of the pending list and of the
-- nulls list; VACUUM sets the counts to the live entries (it flushes no
-- list this short into a run that long, so the run and the list are
-- still apart).
DELETE FROM hi WHERE id % 4 = 0 OR id BETWEEN 5000 AND 8000 OR id BETWEEN 60100 AND 60300
    OR id BETWEEN 100100 AND 100200;
CALL pg_temp.wait_for_horizon();
VACUUM hi;
SELECT run_entries, pending_entries, sealed_entries, null_entries FROM hamming_stats('hi_sh');
SELECT * FROM pg_temp.counts_match('hi_sh');
SELECT sum(entries) = (SELECT count(sh) FROM hi WHERE id <= 60000) AS runs_match
FROM hamming_runs('hi_sh');
SELECT hamming_check('hi_sh', true);

-- Appends after the VACUUM: to the tail it shrank, then to new pages.
INSERT INTO hi SELECT i, hashint8extended(i, 29)::simhash64 FROM generate_series(61301, 62400) i;
INSERT INTO hi SELECT 100000 + i, NULL FROM generate_series(1701, 2900) i;
SELECT * FROM pg_temp.counts_match('hi_sh');
-- a second VACUUM of the same pages
DELETE FROM hi WHERE id % 5 = 0;
CALL pg_temp.wait_for_horizon();
VACUUM hi;
SELECT * FROM pg_temp.counts_match('hi_sh');
SELECT hamming_check('hi_sh', true);
-- The flush takes the list as counted; the run's count is exact.
SELECT hamming_merge('hi_sh') = (SELECT count(sh) FROM hi WHERE id BETWEEN 60001 AND 100000) AS merged_all;
SELECT run, entries, tables, partition_index FROM hamming_runs('hi_sh');
SELECT run_entries = (SELECT count(sh) FROM hi) AS runs_exact, pending_entries
FROM hamming_stats('hi_sh');
-- and once more, over the runs whose counts VACUUM lowered
DELETE FROM hi WHERE id % 7 = 0;
CALL pg_temp.wait_for_horizon();
VACUUM hi;
SELECT run_entries = (SELECT count(sh) FROM hi) AS runs_exact FROM hamming_stats('hi_sh');
SELECT hamming_check('hi_sh', true);

--
-- A partitioned hamming index: the functions cover every partition.
-- hamming_stats adds them up (`blocks` is NULL when the partitions
-- differ), hamming_runs names the partition's index of each run.
--
CREATE TABLE hp (id int, sh simhash64) PARTITION BY RANGE (id);
CREATE TABLE hp_a PARTITION OF hp FOR VALUES FROM (0) TO (10000) WITH (autovacuum_enabled = off);
CREATE TABLE hp_b PARTITION OF hp FOR VALUES FROM (10000) TO (20000);
CREATE TABLE hp_c PARTITION OF hp FOR VALUES FROM (20000) TO (30000) PARTITION BY RANGE (id);
CREATE TABLE hp_c1 PARTITION OF hp_c FOR VALUES FROM (20000) TO (30000);
INSERT INTO hp SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(1, 3000) i;
CREATE INDEX hp_sh ON hp USING hamming (sh) WITH (background_merge = off);
INSERT INTO hp SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(3001, 3100) i;
INSERT INTO hp SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(20001, 20040) i;
INSERT INTO hp VALUES (20041, NULL);

SELECT * FROM hamming_stats('hp_sh');
-- the same as the sum over the partitions, each given alone
SELECT sum(s.run_entries) AS run_entries, sum(s.pending_entries) AS pending_entries,
       sum(s.null_entries) AS null_entries, sum(s.pages) AS pages
FROM pg_partition_tree('hp_sh') t, hamming_stats(t.relid) s
WHERE t.isleaf;
SELECT run, entries, tables, partition_index FROM hamming_runs('hp_sh') ORDER BY partition_index::text, run;
SELECT hamming_check('hp_sh', true);
SELECT hamming_merge('hp_sh');
SELECT run, entries, partition_index FROM hamming_runs('hp_sh') ORDER BY partition_index::text, run;
SELECT run_entries, pending_entries, null_entries FROM hamming_stats('hp_sh');
SELECT hamming_merge('hp_sh');
-- A sub-partitioned level: its own partitioned index covers its leaves.
SELECT run_entries FROM hamming_stats('hp_c_sh_idx');
-- partitions built with another number of tables
CREATE TABLE hp_d (id int, sh simhash64);
CREATE INDEX hp_d_sh ON hp_d USING hamming (sh) WITH (blocks = 3);
ALTER TABLE hp ATTACH PARTITION hp_d FOR VALUES FROM (30000) TO (40000);
SELECT blocks, run_entries FROM hamming_stats('hp_sh');
-- no partitions at all
CREATE TABLE hp_empty (id int, sh simhash64) PARTITION BY RANGE (id);
CREATE INDEX hp_empty_sh ON hp_empty USING hamming (sh);
SELECT * FROM hamming_stats('hp_empty_sh');
SELECT count(*) FROM hamming_runs('hp_empty_sh');
SELECT hamming_check('hp_empty_sh');
SELECT hamming_merge('hp_empty_sh');
-- a partitioned index of another access method
CREATE INDEX hp_btree ON hp (id);
SELECT * FROM hamming_stats('hp_btree');

-- Owners: the partitioned index's, then every partition's, before any
-- lock on it and before any work (a merge is not rolled back: one done
-- before the refusal would stay).
CREATE ROLE regress_nd_part_owner;
CREATE ROLE regress_nd_part_other;
ALTER TABLE hp OWNER TO regress_nd_part_owner;
ALTER TABLE hp_a OWNER TO regress_nd_part_owner;
ALTER TABLE hp_b OWNER TO regress_nd_part_owner;
ALTER TABLE hp_c OWNER TO regress_nd_part_owner;
ALTER TABLE hp_c1 OWNER TO regress_nd_part_owner;
ALTER TABLE hp_d OWNER TO regress_nd_part_other;
SET ROLE regress_nd_part_other;
SELECT * FROM hamming_stats('hp_sh');
SELECT hamming_merge('hp_sh');
RESET ROLE;
INSERT INTO hp SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(3101, 3150) i;
SET ROLE regress_nd_part_owner;
SELECT hamming_check('hp_sh');
SELECT count(*) FROM hamming_runs('hp_sh');
SELECT hamming_merge('hp_sh');
SELECT pending_entries FROM hamming_stats('hp_a_sh_idx');
ALTER TABLE hp DETACH PARTITION hp_d;
SELECT hamming_check('hp_sh');
SELECT blocks FROM hamming_stats('hp_sh');
RESET ROLE;
DROP TABLE hp, hp_d, hp_empty;
DROP ROLE regress_nd_part_owner;
DROP ROLE regress_nd_part_other;

--
-- The `blocks` option: one message for every bad value.
--
CREATE INDEX ON hi USING hamming (sh) WITH (blocks = -1);
CREATE INDEX ON hi USING hamming (sh) WITH (blocks = 1);
CREATE INDEX ON hi USING hamming (sh) WITH (blocks = 2);
CREATE INDEX ON hi USING hamming (sh) WITH (blocks = 9);
CREATE INDEX ON hi USING hamming (sh) WITH (blocks = 64);
CREATE INDEX ON hi USING hamming (sh) WITH (blocks = x);
ALTER INDEX hi_sh SET (blocks = 2);
ALTER INDEX hi_sh SET (blocks = 9);

-- ALTER INDEX ... SET (blocks = n) cannot change the runs' tables: refused,
-- unless it names the count the index has.
ALTER INDEX hi_sh SET (blocks = 8);
ALTER TABLE hi_sh SET (blocks = 3);
ALTER INDEX hi_sh SET (blocks = 4);
SELECT reloptions FROM pg_class WHERE oid = 'hi_sh'::regclass;
ALTER INDEX hi_sh RESET (blocks);
ALTER INDEX hi_sh SET (blocks = 0, pending_limit = 128);
SELECT reloptions FROM pg_class WHERE oid = 'hi_sh'::regclass;
CREATE INDEX hi_sh8 ON hi USING hamming (sh) WITH (blocks = 8);
ALTER INDEX hi_sh8 RESET (blocks);
ALTER INDEX hi_sh8 SET (blocks = 0);
ALTER INDEX hi_sh8 SET (blocks = 8, pending_limit = 256);
ALTER INDEX hi_sh8 RENAME TO hi_sh_eight;
SELECT blocks FROM hamming_stats('hi_sh_eight');
-- the other options still apply at once
ALTER INDEX hi_sh_eight SET (background_merge = on);
SELECT reloptions FROM pg_class WHERE oid = 'hi_sh_eight'::regclass;
-- REINDEX builds with the option as it is
REINDEX INDEX hi_sh_eight;
SELECT blocks, run_entries = (SELECT count(sh) FROM hi) AS all_rows FROM hamming_stats('hi_sh_eight');
DROP TABLE hi;
