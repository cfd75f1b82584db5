--
-- Packed copies of a block-sharded layout on one shard
-- (simhash_shard_create(..., packed => true)): copies 2 and up are views
-- over their recent rows and their packs, which must answer every read,
-- insert and delete as a table of the same rows would, before and after
-- merges.  Each answer is compared with the rows it should hold.
--
SET client_min_messages = warning;
SELECT simhash_shard_create('pk', 4, 2, packed => true);
RESET client_min_messages;

-- copy 1 keeps its tables; copies 2 to 4 are views with two tables each
SELECT c.relname, c.relkind,
       (SELECT string_agg(am.amname, ',' ORDER BY am.amname) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
        JOIN pg_am am ON am.oid = ic.relam WHERE i.indrelid = c.oid) AS indexes
FROM pg_class c WHERE c.relname ~ '^pk_b[12]_p0' AND c.relkind IN ('r', 'v') ORDER BY c.relname;
SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'pk_b2_p0'::regclass;
SELECT rulename FROM pg_rules WHERE tablename = 'pk_b2_p0';

-- rows: md5 codes; every tenth code again under another id (groups of
-- identical codes); 250 rows of one code (more than one pack of a value)
CREATE TABLE pk_src AS
SELECT g AS id, (('x' || substr(md5(g::text), 1, 16))::bit(64)::int8)::simhash64 AS sh
FROM generate_series(1, 20000) g;
INSERT INTO pk_src SELECT id + 100000, sh FROM pk_src WHERE id % 10 = 0;
INSERT INTO pk_src SELECT 200000 + g, '0123456789abcdef' FROM generate_series(1, 250) g;

-- route rows to copy 2's partitions as simhash_layout_create cuts them
CREATE FUNCTION pk_part(sh simhash64, b int) RETURNS int LANGUAGE sql IMMUTABLE AS $$
    SELECT p FROM generate_series(0, 1) p, neardup_internal.simhash_layout_range(b, 4, 2, p) r
    WHERE simhash_block(sh, b, 4) >= r.block_from AND simhash_block(sh, b, 4) < r.block_to
$$;
ALTER TABLE pk_src ADD COLUMN part int;
UPDATE pk_src SET part = pk_part(sh, 2);
-- a row one bit from another's, in block 1: the two agree first on block 2
INSERT INTO pk_src SELECT 300003, (sh::int8 # (1::int8 << 62))::simhash64, part FROM pk_src
WHERE id = (SELECT min(id) FROM pk_src WHERE part = 0 AND id > 100 AND id % 7 <> 3 AND id % 10 <> 0);
-- the rows of copy 2's partition 0 that are not the rows its source should hold, both ways
CREATE FUNCTION pk_diff(gone bigint[] DEFAULT '{}') RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM (
        (SELECT id, sh FROM pk_b2_p0 EXCEPT ALL
         SELECT id, sh FROM pk_src WHERE part = 0 AND id <> ALL (gone))
        UNION ALL
        (SELECT id, sh FROM pk_src WHERE part = 0 AND id <> ALL (gone) EXCEPT ALL
         SELECT id, sh FROM pk_b2_p0)) d
$$;

-- the first half arrives, is merged, then the second half arrives
INSERT INTO pk_b2_p0 SELECT id, sh FROM pk_src WHERE part = 0 AND id % 2 = 0;
INSERT INTO pk_b2_p1 SELECT id, sh FROM pk_src WHERE part = 1 AND id % 2 = 0;
SELECT (SELECT count(*) FROM pk_b2_p0) = (SELECT count(*) FROM pk_src WHERE part = 0 AND id % 2 = 0) AS all_read;
SELECT * FROM simhash_shard_merge('pk');
SELECT count(*) AS recent_left FROM pk_b2_p0_recent;
INSERT INTO pk_b2_p0 SELECT id, sh FROM pk_src WHERE part = 0 AND id % 2 = 1;
SELECT pk_diff() AS differing_before_merge;
SELECT neardup_internal.simhash_pack_merge('pk_b2_p0') = (SELECT count(*) FROM pk_src WHERE part = 0 AND id % 2 = 1)
    AS merged_all;
SELECT pk_diff() AS differing_after_merge;

-- every pack holds rows of its value only, at most 124 of them, and each
-- value has at most one pack with room (a merge fills the others)
SELECT bool_and(r.ok) AS rows_of_their_value, max(n) AS most_rows, max(open) AS most_open_packs
FROM (SELECT p.v, octet_length(p.pack) / 16 AS n,
             (SELECT bool_and(simhash_block(r.sh, 2, 4) = p.v) FROM neardup_internal.simhash_pack_rows(p.pack) r) AS ok,
             count(*) FILTER (WHERE octet_length(p.pack) < 124 * 16) OVER (PARTITION BY p.v) AS open
      FROM pk_b2_p0_packs p) r;
SELECT array_agg(octet_length(pack) / 16 ORDER BY octet_length(pack) DESC) AS rows_of_its_packs
FROM pk_b2_p0_packs WHERE v = simhash_block('0123456789abcdef', 2, 4);
-- 130 more of that code: the pack with room fills, and one more starts
INSERT INTO pk_src SELECT 201000 + g, '0123456789abcdef', 0 FROM generate_series(1, 130) g;
INSERT INTO pk_b2_p0 SELECT id, sh FROM pk_src WHERE id > 201000 AND id <= 201130;
SELECT neardup_internal.simhash_pack_merge('pk_b2_p0') AS merged;
SELECT array_agg(octet_length(pack) / 16 ORDER BY octet_length(pack) DESC) AS rows_of_its_packs
FROM pk_b2_p0_packs WHERE v = simhash_block('0123456789abcdef', 2, 4);
SELECT pk_diff() AS differing_after_merge;
-- a full pack stays in its heap row: nothing goes to TOAST
SELECT pg_relation_size(reltoastrelid) AS toast_bytes FROM pg_class WHERE relname = 'pk_b2_p0_packs';

-- block balls of block 2, as the coordinator sends them: the same rows as
-- a scan of the source, through the index on v and the recent rows' index
INSERT INTO pk_b2_p0 VALUES (300001, '0123456789abcdee'), (300002, (SELECT sh FROM pk_src WHERE id = 20));
INSERT INTO pk_src VALUES (300001, '0123456789abcdee', 0), (300002, (SELECT sh FROM pk_src WHERE id = 20), 0);
ANALYZE pk_b2_p0_packs;
EXPLAIN (COSTS OFF)
SELECT id, sh FROM pk_b2_p0
WHERE simhash_block(sh, 2, 4) = simhash_block('0123456789abcdef', 2, 4)
  AND sh <@ hamming_block_ball('0123456789abcdef', 3, 2, 4);
SELECT count(*) AS queries, sum(n) AS rows_found, count(*) FILTER (WHERE n <> expected) AS differing
FROM (SELECT (SELECT count(*) FROM pk_b2_p0
              WHERE simhash_block(sh, 2, 4) = simhash_block(q.sh, 2, 4)
                AND sh <@ hamming_block_ball(q.sh, 3, 2, 4)) AS n,
             (SELECT count(*) FROM pk_src s
              WHERE s.part = 0 AND simhash_block(s.sh, 2, 4) = simhash_block(q.sh, 2, 4)
                AND s.sh <~> q.sh <= 3) AS expected
      FROM pk_src q WHERE q.part = 0 AND (q.id % 97 = 0 OR q.id > 200000)) t;

-- a delete of many block values, as simhash_layout_delete sends it: the
-- packs of those values, through the index on v
EXPLAIN (COSTS OFF)
DELETE FROM pk_b2_p0
WHERE simhash_block(sh, 2, 4) = ANY ('{17767, 40}'::bigint[])
  AND sh OPERATOR(neardup_internal.=) ANY ('{81985529216486895, 5}'::bigint[])
  AND (id + 0) = ANY ('{200001, 7}'::bigint[]);

-- deletes, as simhash_layout_delete sends them (through the index on v)
-- and by id alone: a row in the packs, one of the recent
-- rows, one of 250 identical codes, both rows of a code held twice, and an
-- id that no row has; RETURNING reports the rows removed
WITH d AS (DELETE FROM pk_b2_p0
           WHERE simhash_block(sh, 2, 4) = simhash_block((SELECT sh FROM pk_src WHERE id = 20), 2, 4)
             AND sh OPERATOR(neardup_internal.=) ANY (ARRAY[(SELECT sh FROM pk_src WHERE id = 20)::int8])
             AND (id + 0) = ANY ('{20, 100020, 300002, 999999}')
           RETURNING id)
SELECT array_agg(id ORDER BY id) FROM d;
WITH d AS (DELETE FROM pk_b2_p0 WHERE id = ANY ('{300001, 200007, 200100, 999999}') RETURNING id)
SELECT array_agg(id ORDER BY id) FROM d;
SELECT pk_diff('{20, 100020, 300002, 300001, 200007, 200100}') AS differing_after_deletes;
-- a delete of many rows, then a merge: no recent rows, nothing moves (the
-- packs the deletes left with room stay so until rows of their values
-- arrive)
WITH d AS (DELETE FROM pk_b2_p0 WHERE id % 7 = 3 RETURNING id) SELECT count(*) > 1000 AS many FROM d;
SELECT pk_diff(ARRAY(SELECT id FROM pk_src WHERE id % 7 = 3) || '{20, 100020, 300002, 300001, 200007, 200100}') AS differing;
SELECT neardup_internal.simhash_pack_merge('pk_b2_p0') AS merged;
SELECT pk_diff(ARRAY(SELECT id FROM pk_src WHERE id % 7 = 3) || '{20, 100020, 300002, 300001, 200007, 200100}') AS differing;
SELECT count(*) AS empty_packs FROM pk_b2_p0_packs WHERE octet_length(pack) = 0;

-- the cluster view reads the packed rows
SELECT ids FROM pk_b2_p0_clusters;

-- far_searches => false: copy 1's index keeps the table of its own block
SET client_min_messages = warning;
SELECT simhash_shard_create('pf', 4, 1, packed => true, far_searches => false);
RESET client_min_messages;
SELECT c.relname, c.reloptions FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid IN ('pf_b1_p0'::regclass, 'pf_b2_p0_recent'::regclass) AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'hamming')
ORDER BY 1;
-- its radius searches past the blocks stay exact: rows 4 to 7 bits from
-- ten query codes (a bit flipped in each block, then more), against a
-- count of bits
CREATE TABLE pf_rows AS SELECT id, sh FROM pk_src WHERE id <= 3000;
INSERT INTO pf_rows
SELECT 900000 + q.id * 10 + d, (q.sh::bigint # m.mask)::simhash64
FROM pk_src q,
     (VALUES (4, (1::bigint << 60) | (1::bigint << 40) | (1::bigint << 20) | 1::bigint),
             (5, (1::bigint << 60) | (1::bigint << 40) | (1::bigint << 20) | 3::bigint),
             (6, (1::bigint << 61) | (1::bigint << 60) | (1::bigint << 40) | (1::bigint << 20) | 3::bigint),
             (7, (1::bigint << 61) | (1::bigint << 60) | (1::bigint << 41) | (1::bigint << 40) | (1::bigint << 20) | 3::bigint)) m(d, mask)
WHERE q.id <= 3000 AND q.id % 300 = 0;
INSERT INTO pf_b1_p0 SELECT id, sh FROM pf_rows;
SET enable_seqscan = off;
WITH found AS (SELECT q.id AS q, t.id FROM pk_src q, pf_b1_p0 t
               WHERE q.id <= 3000 AND q.id % 300 = 0 AND t.sh <~> q.sh <= 6),
     truth AS (SELECT q.id AS q, t.id FROM pk_src q, pf_rows t
               WHERE q.id <= 3000 AND q.id % 300 = 0
                 AND bit_count((t.sh::bigint # q.sh::bigint)::bit(64)) <= 6)
SELECT (SELECT count(*) FROM found) AS found,
       (SELECT count(*) FROM ((TABLE found EXCEPT ALL TABLE truth) UNION ALL (TABLE truth EXCEPT ALL TABLE found)) d) AS differing;
RESET enable_seqscan;

-- what a packed copy refuses
\set VERBOSITY terse
SELECT simhash_shard_create('pkx', 4, 2, exclude_within => 2, far_searches => false);
SELECT simhash_shard_create('pkx', 2, 2, far_searches => false);
SELECT simhash_shard_create('pkx', 4, 2, far_searches => NULL);
UPDATE pk_b2_p0 SET id = id + 1 WHERE id = 40;
SELECT simhash_shard_create('pkx', 4, 2, exclude_within => 2, packed => true);
SELECT simhash_shard_create('pkx', 4, 2, packed => NULL);
SELECT simhash_shard_merge(NULL);
SELECT neardup_internal.simhash_pack_merge('pk_b1_p0');
SELECT neardup_internal.simhash_pack_merge('pk_b2_p0_packs');
SELECT neardup_internal.simhash_in_block('0123456789abcdef', 3, 1, 4);
SELECT neardup_internal.simhash_pack_rows('\x0102');
SELECT neardup_internal.simhash_pack_holds('\x0102', 1, '0000000000000000');
SELECT neardup_internal.simhash_pack_remove(neardup_internal.simhash_pack_row(1, '0000000000000001'), 1, '0000000000000000')
    = neardup_internal.simhash_pack_row(1, '0000000000000001') AS unchanged;
CREATE TABLE pk_t (id int8, sh simhash64);
CREATE TRIGGER t AFTER INSERT ON pk_t FOR EACH ROW EXECUTE FUNCTION neardup_internal.simhash_pack_delete('a', 'b', '2', '4');
INSERT INTO pk_t VALUES (1, '0000000000000000');
-- a trigger whose tables do not exist: their names are looked up, never
-- written into its SQL as given
DROP TRIGGER t ON pk_t;
INSERT INTO pk_t VALUES (1, '0000000000000000');
CREATE VIEW pk_v AS SELECT id, sh FROM pk_t;
CREATE TRIGGER t INSTEAD OF DELETE ON pk_v FOR EACH ROW
    EXECUTE FUNCTION neardup_internal.simhash_pack_delete('pk_t; DROP TABLE pk_src', 'pk_t', '2', '4');
DELETE FROM pk_v;
CREATE OR REPLACE TRIGGER t INSTEAD OF DELETE ON pk_v FOR EACH ROW
    EXECUTE FUNCTION neardup_internal.simhash_pack_delete('no_such_table', 'pk_t', '2', '4');
DELETE FROM pk_v;
SELECT count(*) > 0 AS pk_src_kept FROM pk_src;
-- or naming another view's table
CREATE OR REPLACE TRIGGER t INSTEAD OF DELETE ON pk_v FOR EACH ROW
    EXECUTE FUNCTION neardup_internal.simhash_pack_delete('pk_b2_p0_recent', 'pk_b2_p0_packs', '2', '4');
DELETE FROM pk_v;
-- a packed view's trigger replaced after it has run in this session: the
-- new arguments are read again (here: another view's tables, refused)
DELETE FROM pk_b2_p1 WHERE id = -1;
SELECT min(id) AS p1_id FROM pk_src WHERE part = 1 AND id % 2 = 0 AND id < 100000 \gset
CREATE OR REPLACE TRIGGER simhash_pack_delete INSTEAD OF DELETE ON pk_b2_p1 FOR EACH ROW
    EXECUTE FUNCTION neardup_internal.simhash_pack_delete('public.pk_b2_p0_recent', 'public.pk_b2_p0_packs', '2', '4');
DELETE FROM pk_b2_p1 WHERE id = :p1_id;
CREATE OR REPLACE TRIGGER simhash_pack_delete INSTEAD OF DELETE ON pk_b2_p1 FOR EACH ROW
    EXECUTE FUNCTION neardup_internal.simhash_pack_delete('public.pk_b2_p1_recent', 'public.pk_b2_p1_packs', '2', '4');
WITH d AS (DELETE FROM pk_b2_p1 WHERE id = :p1_id RETURNING id) SELECT count(*) AS deleted FROM d;
-- merges are for the view's owner, and run as it: another role merges
-- nothing of this layout and may not merge a partition by name
CREATE ROLE regress_pk_other;
GRANT USAGE ON SCHEMA public TO regress_pk_other;
SET ROLE regress_pk_other;
SELECT count(*) AS merged_partitions FROM simhash_shard_merge('pk');
SELECT neardup_internal.simhash_pack_merge('pk_b2_p0');
RESET ROLE;
\set VERBOSITY default

DROP VIEW pk_v;
REVOKE USAGE ON SCHEMA public FROM regress_pk_other;
DROP ROLE regress_pk_other;
DROP TABLE pk_t, pk_src, pf_rows;
DROP FUNCTION pk_part(simhash64, int), pk_diff(bigint[]);
