--
-- The block-sharded layout's single-node parts (doc/scale-out.md, "The
-- block layout"): simhash_block, the partition key; simhash_shard_clusters,
-- one shard's share of the nightly clusters; simhash_shard_create; the
-- argument checks of the coordinator's functions.  The layout over
-- postgres_fdw shards is test/tap/t/021_shard_blocks.pl.
--
SET client_min_messages = warning;

-- Blocks as the permuted tables cut them: the first 64 % blocks one bit
-- wider, the most significant first.
SELECT b, simhash_block('ffff00000000000f', b, 4) AS of_4,
       simhash_block('8000000000000001', b, 4) AS ends_4
FROM generate_series(1, 4) b;
SELECT b, CASE WHEN b <= 3 THEN simhash_block('ffffffffffffffff', b, 3) END AS all_ones_3,
       simhash_block('ffffffffffffffff', b, 5) AS all_ones_5
FROM generate_series(1, 5) b;
SELECT simhash_block('ffffffffffffffff', 1, 2) AS widest, simhash_block('0123456789abcdef', 16, 16) AS narrowest;

-- Errors: 22023 for blocks or block out of range.
\set VERBOSITY terse
SELECT simhash_block('0000000000000000', 1, 1);
SELECT simhash_block('0000000000000000', 1, 17);
SELECT simhash_block('0000000000000000', 0, 4);
SELECT simhash_block('0000000000000000', 5, 4);
\set VERBOSITY default

-- Pigeonhole: two codes within blocks - 1 bits agree on some block.
CREATE TABLE bl_codes AS
SELECT i AS id, ('x' || md5(i::text))::bit(64)::bigint::simhash64 AS sh FROM generate_series(1, 300) i;
SELECT m, count(*) FILTER (WHERE NOT EXISTS (
           SELECT FROM generate_series(1, m) b
           WHERE simhash_block(x.sh, b, m) = simhash_block(y.sh, b, m))) AS pairs_agreeing_on_no_block,
       count(*) AS pairs_within
FROM generate_series(2, 6) m,
     (SELECT a.sh, f.sh2 FROM bl_codes a,
             LATERAL (SELECT ((a.sh::bigint # (1::bigint << ((a.id * 7 + j * 13) % 64)))
                              # CASE WHEN j > 1 THEN (1::bigint << ((a.id * 3 + j * 29 + 5) % 64)) ELSE 0 END)::simhash64 AS sh2
                      FROM generate_series(1, 5) j) f) p(sh, sh2),
     LATERAL (SELECT p.sh, p.sh2) x(sh, sh2),
     LATERAL (SELECT p.sh2 AS sh) y
WHERE x.sh <~> y.sh <= m - 1
GROUP BY m ORDER BY m;

-- simhash_shard_clusters: rows grouped by one block's value range (the
-- partitions of a copy), each group clustered on its own for that block;
-- the union of every group's edges has simhash_clusters' components.
CREATE TABLE bl_docs (id bigint, sh simhash64);
INSERT INTO bl_docs SELECT id, sh FROM bl_codes;
-- near copies at 1..3 bits, and a group of 50 identical codes
INSERT INTO bl_docs
SELECT 1000 + id, (sh::bigint # (7::bigint << (id % 60)) # CASE WHEN id % 3 = 0 THEN 1::bigint << 63 ELSE 0 END)::simhash64
FROM bl_codes WHERE id % 4 = 0 AND id < 200;
INSERT INTO bl_docs SELECT 2000 + i, '0123456789abcdef' FROM generate_series(1, 50) i;
INSERT INTO bl_docs SELECT 3000 + i, ('0123456789abcdef'::simhash64::bigint # (1::bigint << i))::simhash64 FROM generate_series(0, 9) i;

CREATE FUNCTION bl_shard_edges(blocks int, ranges int) RETURNS TABLE(id bigint, cluster_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    width int;
BEGIN
    FOR b IN 1 .. blocks LOOP
        width := 64 / blocks + CASE WHEN b <= 64 % blocks THEN 1 ELSE 0 END;
        FOR r IN 0 .. ranges - 1 LOOP
            RETURN QUERY SELECT m.id, c.cluster_id FROM simhash_shard_clusters(format(
                'SELECT id, sh FROM bl_docs WHERE simhash_block(sh, %s, %s) * %s >> %s = %s',
                b, blocks, ranges, width, r), b, blocks) c, unnest(c.ids) m(id);
        END LOOP;
    END LOOP;
END $$;

SELECT blocks, ranges,
       (SELECT count(*) FROM (SELECT * FROM simhash_clusters('bl_docs', 'id', 'sh', blocks - 1)
                              EXCEPT SELECT * FROM dedup_clusters(format(
                                  'SELECT id, cluster_id FROM bl_shard_edges(%s, %s)', blocks, ranges))) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM dedup_clusters(format(
                                  'SELECT id, cluster_id FROM bl_shard_edges(%s, %s)', blocks, ranges))
                              EXCEPT SELECT * FROM simhash_clusters('bl_docs', 'id', 'sh', blocks - 1)) x) AS extra,
       (SELECT count(*) FROM simhash_clusters('bl_docs', 'id', 'sh', blocks - 1)) AS clustered
FROM (VALUES (4, 1), (4, 8), (3, 4), (5, 16)) v(blocks, ranges)
ORDER BY 1, 2;

-- One table per block: the identical codes' pairs are found for block 1
-- only (they agree on every block, and block 1 comes first).
SELECT b, (SELECT count(*) FROM simhash_shard_clusters('SELECT id, sh FROM bl_docs', b, 4) c, unnest(c.ids) m(id)
           WHERE m.id BETWEEN 2001 AND 2050) AS identical_group_rows,
       (SELECT coalesce(sum(cardinality(ids)), 0) FROM simhash_shard_clusters('SELECT id, sh FROM bl_docs', b, 4)) AS clustered
FROM generate_series(1, 4) b ORDER BY b;

-- One row per cluster: its ids in order, cluster_id the first, no id in two
-- clusters, clusters in the order of their first ids.  With copies that
-- first agree on block 3 (a bit flipped in blocks 1 and 2) and on block 4
-- (in blocks 1, 2 and 3).
CREATE TABLE bl_docs2 AS SELECT * FROM bl_docs;
INSERT INTO bl_docs2
SELECT 4000 + id, (sh::bigint # (1::bigint << (48 + id % 16)) # (1::bigint << (32 + id % 16)))::simhash64
FROM bl_codes WHERE id <= 30;
INSERT INTO bl_docs2
SELECT 5000 + id, (sh::bigint # (1::bigint << (48 + id % 16)) # (1::bigint << (32 + id % 16))
                   # (1::bigint << (16 + id % 16)))::simhash64
FROM bl_codes WHERE id BETWEEN 31 AND 60;
CREATE TABLE bl_groups AS
SELECT b, g.n, g.cluster_id, g.ids
FROM generate_series(1, 4) b,
     LATERAL (SELECT row_number() OVER () AS n, c.* FROM simhash_shard_clusters(
         'SELECT id, sh FROM bl_docs2', b, 4) c) g;
SELECT count(*) AS clusters,
       count(*) FILTER (WHERE ids[1] <> cluster_id) AS not_first,
       count(*) FILTER (WHERE ids <> (SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(ids) x)) AS not_in_order_or_repeated,
       count(*) FILTER (WHERE cardinality(ids) < 2) AS singletons,
       (SELECT count(*) FROM (SELECT b, m.id FROM bl_groups, unnest(ids) m(id) GROUP BY 1, 2 HAVING count(*) > 1) x) AS ids_in_two,
       (SELECT count(*) FROM (SELECT b, n, cluster_id < lag(cluster_id) OVER (PARTITION BY b ORDER BY n) AS back
                              FROM bl_groups) x WHERE back) AS out_of_order
FROM bl_groups;
-- Each block's clusters are the components of the pairs within 3 bits
-- whose first agreeing block is that block (simhash_pairs, the blocks
-- compared in SQL).
SELECT b,
       (SELECT count(*) FROM (
           (SELECT m.id, g.cluster_id FROM bl_groups g, unnest(g.ids) m(id) WHERE g.b = bb.b
            EXCEPT SELECT * FROM dedup_clusters(format($q$
                SELECT p.id_a, p.id_b FROM simhash_pairs('bl_docs2', 'id', 'sh', 3) p
                JOIN bl_docs2 x ON x.id = p.id_a JOIN bl_docs2 y ON y.id = p.id_b
                WHERE simhash_block(x.sh, %1$s, 4) = simhash_block(y.sh, %1$s, 4)
                  AND NOT EXISTS (SELECT FROM generate_series(1, %1$s - 1) e
                                  WHERE simhash_block(x.sh, e, 4) = simhash_block(y.sh, e, 4))$q$, b)))
           UNION ALL
           (SELECT * FROM dedup_clusters(format($q$
                SELECT p.id_a, p.id_b FROM simhash_pairs('bl_docs2', 'id', 'sh', 3) p
                JOIN bl_docs2 x ON x.id = p.id_a JOIN bl_docs2 y ON y.id = p.id_b
                WHERE simhash_block(x.sh, %1$s, 4) = simhash_block(y.sh, %1$s, 4)
                  AND NOT EXISTS (SELECT FROM generate_series(1, %1$s - 1) e
                                  WHERE simhash_block(x.sh, e, 4) = simhash_block(y.sh, e, 4))$q$, b))
            EXCEPT SELECT m.id, g.cluster_id FROM bl_groups g, unnest(g.ids) m(id) WHERE g.b = bb.b)) d) AS differing,
       (SELECT sum(cardinality(ids)) FROM bl_groups g WHERE g.b = bb.b) AS ids
FROM generate_series(1, 4) bb(b) ORDER BY b;
-- Rows that share an id are one node, as in dedup_clusters: the even rows
-- twice give the same clusters.
SELECT count(*) AS differing FROM (
    (SELECT b, cluster_id, ids FROM bl_groups
     EXCEPT SELECT b, c.cluster_id, c.ids FROM generate_series(1, 4) b, simhash_shard_clusters(
         'SELECT id, sh FROM bl_docs2 UNION ALL SELECT id, sh FROM bl_docs2 WHERE id % 2 = 0', b, 4) c)
    UNION ALL
    (SELECT b, c.cluster_id, c.ids FROM generate_series(1, 4) b, simhash_shard_clusters(
         'SELECT id, sh FROM bl_docs2 UNION ALL SELECT id, sh FROM bl_docs2 WHERE id % 2 = 0', b, 4) c
     EXCEPT SELECT b, cluster_id, ids FROM bl_groups)) d;
DROP TABLE bl_groups, bl_docs2;
-- A cluster of 250,001 ids (identical codes) comes in rows of at most
-- 100,000 ids, each starting with its cluster_id, so that no array nears
-- the 1 GB limit; dedup_clusters joins the rows into one cluster.
CREATE TABLE bl_same AS SELECT i::bigint AS id, '0123456789abcdef'::simhash64 AS sh
FROM generate_series(1, 250001) i;
SELECT cluster_id, cardinality(ids) AS ids, ids[1] AS first, ids[2] AS second,
       ids[cardinality(ids)] AS last
FROM simhash_shard_clusters('SELECT id, sh FROM bl_same', 1, 4) ORDER BY ids[2];
SELECT count(*) AS elements, count(DISTINCT x) AS distinct_ids
FROM simhash_shard_clusters('SELECT id, sh FROM bl_same', 1, 4) c, unnest(c.ids) x;
SELECT count(*) AS ids, count(DISTINCT cluster_id) AS clusters, min(cluster_id)
FROM dedup_clusters('SELECT ids FROM simhash_shard_clusters(''SELECT id, sh FROM bl_same'', 1, 4)');
DROP TABLE bl_same;

-- Errors: a NULL argument names it (22004); block or blocks out of range.
\set VERBOSITY terse
SELECT * FROM simhash_shard_clusters(NULL, 1, 4);
SELECT * FROM simhash_shard_clusters('SELECT id, sh FROM bl_docs', NULL, 4);
SELECT * FROM simhash_shard_clusters('SELECT id, sh FROM bl_docs', 0, 4);
SELECT * FROM simhash_shard_clusters('SELECT id, sh FROM bl_docs', 1, 17);
\set VERBOSITY default
-- A declaration of another row type (a script that does not match the
-- library) fails instead of writing an array where a bigint is declared.
CREATE FUNCTION bl_old_shard_clusters(text, int4, int4) RETURNS TABLE(id bigint, cluster_id bigint)
AS '$libdir/neardup', 'simhash_shard_clusters' LANGUAGE C STABLE;
SELECT * FROM bl_old_shard_clusters('SELECT id, sh FROM bl_docs', 1, 4);
DROP FUNCTION bl_old_shard_clusters(text, int4, int4);

-- simhash_shard_create: every (copy, partition) table with its hamming
-- index, and a cluster view that reports the part number and each
-- cluster's ids, in order (the first is its cluster_id).
SELECT simhash_shard_create('bl', 2, 3);
SELECT c.relname, c.relkind, (SELECT string_agg(am.amname, ',' ORDER BY am.amname) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                                JOIN pg_am am ON am.oid = ic.relam WHERE i.indrelid = c.oid) AS indexes
FROM pg_class c WHERE c.relname ~ '^bl_b[0-9]_p[0-9]' ORDER BY c.relname;
INSERT INTO bl_b1_p0 SELECT id, sh FROM bl_docs WHERE id > 2000;
SELECT part, sum(cardinality(ids)) AS ids, count(*) AS clusters FROM bl_b1_p0_clusters GROUP BY part;
-- the same clusters as simhash_shard_clusters' rows
SELECT count(*) AS differing FROM (
    (SELECT ids FROM simhash_shard_clusters('SELECT id, sh FROM bl_b1_p0', 1, 2)
     EXCEPT ALL SELECT ids FROM bl_b1_p0_clusters)
    UNION ALL
    (SELECT ids FROM bl_b1_p0_clusters
     EXCEPT ALL SELECT ids FROM simhash_shard_clusters('SELECT id, sh FROM bl_b1_p0', 1, 2))) d;
SELECT bool_and(ids = (SELECT array_agg(x ORDER BY x) FROM unnest(ids) x)) AS ids_in_order FROM bl_b1_p0_clusters;
SELECT part, count(*) FROM bl_b2_p2_clusters GROUP BY part;

-- simhash_layout_range: a copy's partitions tile its block's values, in
-- equal ranges (to within one value), with no gap and no overlap.
SELECT blocks, b, parts,
       min(r.block_from) AS first_from, max(r.block_to) AS last_to,
       bool_and(r.block_to = lead_from OR lead_from IS NULL) AS contiguous,
       max(r.block_to - r.block_from) - min(r.block_to - r.block_from) AS spread
FROM (VALUES (4, 1, 16), (4, 4, 7), (3, 1, 5), (3, 3, 5), (2, 2, 4096), (16, 16, 16)) v(blocks, b, parts),
     LATERAL (SELECT r.*, lead(r.block_from) OVER (ORDER BY p) AS lead_from
              FROM generate_series(0, parts - 1) p, neardup_internal.simhash_layout_range(b, blocks, parts, p) r) r
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;

-- exclude_within: the near-duplicate constraint instead of the index; its
-- radius must leave the pigeonhole (below blocks).
SELECT simhash_shard_create('blx', 2, 1, exclude_within => 1);
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'blx_b1_p0'::regclass AND contype = 'x';
INSERT INTO blx_b1_p0 VALUES (1, '0123456789abcdef');
INSERT INTO blx_b1_p0 VALUES (2, '0123456789abcdee');  -- 1 bit away: refused
SELECT count(*) FROM blx_b1_p0 WHERE sh <~> '0123456789abcdef' <= 1;
\set VERBOSITY terse
SELECT simhash_shard_create('bly', 4, 4, exclude_within => 4);
SELECT simhash_shard_create('bly', 4, 4, exclude_within => -1);
SELECT simhash_shard_create(NULL, 4, 4);
SELECT simhash_shard_create('bly', NULL, 4);
\set VERBOSITY default

-- The coordinator's checks, before anything is created.
\set VERBOSITY terse
SELECT simhash_shard_create('bl2', 1, 4);
SELECT simhash_shard_create('bl2', 4, 0);
SELECT simhash_shard_create('bl2', 16, 32);
SELECT * FROM simhash_layout_create('bl3', ARRAY['no_such_server'], 4, 4);
SELECT * FROM simhash_layout_create('bl3', '{}', 4, 4);
SELECT * FROM simhash_layout_create(repeat('x', 55), ARRAY['no_such_server'], 4, 16);
SELECT simhash_shard_create(repeat('x', 50), 4, 16);
SELECT simhash_layout_blocks('bl_docs');
SELECT * FROM simhash_layout_within('bl_docs', '0000000000000000', 3);
\set VERBOSITY default
SELECT count(*) AS bl3_objects FROM pg_class WHERE relname LIKE 'bl3%' OR relname LIKE 'xxxxx%';

-- NULL arguments of the coordinator's functions: the dedup family's rule
-- (doc/dedup.md, "NULL arguments"), 22004 naming the first NULL argument,
-- and a NULL inside servers or ids; checked before any catalog lookup, so
-- bl_docs (no layout) gives 22004 here and no shard is needed.

SELECT q AS call, nd_test.try(q, with_value => true) AS outcome FROM (VALUES
    ($$SELECT count(*) FROM simhash_layout_create(NULL, ARRAY['no_such_server'], 4, 4)$$),
    ($$SELECT count(*) FROM simhash_layout_create('bl4', NULL, 4, 4)$$),
    ($$SELECT count(*) FROM simhash_layout_create('bl4', ARRAY['no_such_server'], NULL, 4)$$),
    ($$SELECT count(*) FROM simhash_layout_create('bl4', ARRAY['no_such_server'], 4, NULL)$$),
    ($$SELECT count(*) FROM simhash_layout_create('bl4', ARRAY['no_such_server', NULL], 4, 4)$$),
    ($$SELECT count(*) FROM simhash_layout_create('bl4', '{}', 4, 4)$$),
    ($$SELECT simhash_layout_within_sql(NULL, '0000000000000000', 3)$$),
    ($$SELECT simhash_layout_within_sql('bl_docs', NULL, 3)$$),
    ($$SELECT simhash_layout_within_sql('bl_docs', '0000000000000000', NULL)$$),
    ($$SELECT count(*) FROM simhash_layout_within(NULL, '0000000000000000', 3)$$),
    ($$SELECT count(*) FROM simhash_layout_within('bl_docs', NULL, 3)$$),
    ($$SELECT count(*) FROM simhash_layout_within('bl_docs', '0000000000000000', NULL)$$),
    ($$SELECT count(*) FROM simhash_layout_nearest(NULL, '0000000000000000', 3)$$),
    ($$SELECT count(*) FROM simhash_layout_nearest('bl_docs', NULL, 3)$$),
    ($$SELECT count(*) FROM simhash_layout_nearest('bl_docs', '0000000000000000', NULL)$$),
    ($$SELECT simhash_layout_insert(NULL, 'SELECT id, sh FROM bl_docs')$$),
    ($$SELECT simhash_layout_insert('bl_docs', NULL)$$),
    ($$SELECT simhash_layout_delete(NULL, ARRAY[1]::bigint[])$$),
    ($$SELECT simhash_layout_delete('bl_docs', NULL)$$),
    ($$SELECT simhash_layout_delete('bl_docs', ARRAY[1, NULL]::bigint[])$$),
    ($$SELECT count(*) FROM simhash_layout_check(NULL)$$),
    ($$SELECT count(*) FROM simhash_layout_clusters(NULL)$$),
    ($$SELECT simhash_layout_clusters_sql(NULL)$$),
    ($$SELECT simhash_layout_move(NULL, 1, 0, 'no_such_server')$$),
    ($$SELECT simhash_layout_move('bl_docs', NULL, 0, 'no_such_server')$$),
    ($$SELECT simhash_layout_move('bl_docs', 1, NULL, 'no_such_server')$$),
    ($$SELECT simhash_layout_move('bl_docs', 1, 0, NULL)$$),
    -- past the NULL checks: the layout lookup
    ($$SELECT simhash_layout_delete('bl_docs', ARRAY[1]::bigint[])$$)
) v(q);

-- The support functions stay STRICT: NULL in, NULL (or no rows) out.
SELECT simhash_layout_blocks(NULL) AS blocks, neardup_internal.simhash_layout_name(NULL, '_b1') AS name,
       (SELECT count(*) FROM neardup_internal.simhash_layout_partitions(NULL, 1)) AS partitions,
       (neardup_internal.simhash_layout_parts(NULL)).name AS parts_name;

-- A layout whose partitions are local tables (as simhash_layout_create
-- makes them, without the shards): an empty ids array deletes nothing, a
-- NULL id in it is refused before anything is deleted.
CREATE TABLE bll_b1 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 1, 2));
CREATE TABLE bll_b1_p0 PARTITION OF bll_b1 FOR VALUES FROM (0) TO (4294967296);
CREATE TABLE bll_b2 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 2, 2));
CREATE TABLE bll_b2_p0 PARTITION OF bll_b2 FOR VALUES FROM (0) TO (4294967296);
CREATE VIEW bll AS SELECT id, sh FROM bll_b1;
SELECT simhash_layout_insert('bll', 'SELECT id, sh FROM bl_codes WHERE id <= 10') AS inserted;
SELECT simhash_layout_delete('bll', '{}') AS deleted_none;
SELECT nd_test.try($$SELECT simhash_layout_delete('bll', ARRAY[1, NULL, 2]::bigint[])$$, with_value => true) AS null_id;
SELECT simhash_layout_delete('bll', ARRAY[1, 2]::bigint[]) AS deleted;
SELECT block, row_count, consistent FROM simhash_layout_check('bll') ORDER BY block;
SELECT count(*) AS within_0 FROM simhash_layout_within('bll', (SELECT sh FROM bl_codes WHERE id = 3), 0);

-- simhash_layout_check compares the copies with each other: a copy is
-- consistent when its rows (count, and checksums of its ids and of its
-- (id, fingerprint) rows) are those of more than half of the copies.  A
-- layout of three copies, each one local partition.
CREATE TABLE blc_b1 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 1, 3));
CREATE TABLE blc_b1_p0 PARTITION OF blc_b1 FOR VALUES FROM (0) TO (4194304);
CREATE TABLE blc_b2 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 2, 3));
CREATE TABLE blc_b2_p0 PARTITION OF blc_b2 FOR VALUES FROM (0) TO (2097152);
CREATE TABLE blc_b3 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 3, 3));
CREATE TABLE blc_b3_p0 PARTITION OF blc_b3 FOR VALUES FROM (0) TO (2097152);
CREATE VIEW blc AS SELECT id, sh FROM blc_b1;
SELECT simhash_layout_insert('blc', 'SELECT id, sh FROM bl_codes WHERE id <= 20') AS inserted;
SELECT block, row_count, consistent FROM simhash_layout_check('blc') ORDER BY block;
-- copy 1 lost its rows (as a move whose new shard failed to commit left
-- it): copy 1 differs, the two intact copies do not
BEGIN;
DELETE FROM blc_b1_p0;
SELECT block, row_count, consistent FROM simhash_layout_check('blc') ORDER BY block;
ROLLBACK;
-- a fingerprint changed in copy 2 only: the same ids, copy 2 differs
BEGIN;
UPDATE blc_b2_p0 SET sh = (sh::bigint # 1)::simhash64 WHERE id = 7;
SELECT block, row_count, consistent FROM simhash_layout_check('blc') ORDER BY block;
ROLLBACK;
-- two copies that differ: no majority, neither is called consistent
BEGIN;
UPDATE bll_b2_p0 SET sh = (sh::bigint # 1)::simhash64 WHERE id = 7;
SELECT block, row_count, consistent FROM simhash_layout_check('bll') ORDER BY block;
ROLLBACK;
-- simhash_layout_delete returns the most rows deleted from any copy, and
-- warns with each copy's count when they differ (id 5 missing from copy 1)
DELETE FROM blc_b1_p0 WHERE id = 5;
SELECT simhash_layout_delete('blc', ARRAY[5, 6]::bigint[]) AS deleted;
SELECT simhash_layout_delete('blc', ARRAY[8, 9, 10]::bigint[]) AS deleted;
SELECT block, row_count, consistent FROM simhash_layout_check('blc') ORDER BY block;

-- simhash_layout_delete on the tables simhash_shard_create makes (copies 2
-- and 3 without a primary key): copy 1 is read by id in every partition,
-- copies 2 and 3 by code in the one partition of the row's block value,
-- through their hamming indexes (this transaction's own statistics; the
-- sequential scan disabled, so that a copy whose index could not find its
-- rows scans it anyway and shows here).
SELECT simhash_shard_create('bld', 3, 4);
DO $$
BEGIN
    FOR b IN 1 .. 3 LOOP
        EXECUTE format('CREATE TABLE bld_b%1$s (id bigint NOT NULL, sh simhash64 NOT NULL) '
                       'PARTITION BY RANGE (simhash_block(sh, %1$s, 3))', b);
        FOR p IN 0 .. 3 LOOP
            EXECUTE (SELECT format('ALTER TABLE bld_b%s ATTACH PARTITION bld_b%s_p%s FOR VALUES FROM (%s) TO (%s)',
                                   b, b, p, r.block_from, r.block_to)
                     FROM neardup_internal.simhash_layout_range(b, 3, 4, p) r);
        END LOOP;
    END LOOP;
END
$$;
CREATE VIEW bld AS SELECT id, sh FROM bld_b1;
SELECT substring(c.relname from '_b([0-9])_') AS copy, count(*) AS tables,
       count(*) FILTER (WHERE EXISTS (SELECT FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)) AS with_primary_key
FROM pg_class c WHERE c.relname ~ '^bld_b[0-9]_p[0-9]$' GROUP BY 1 ORDER BY 1;
SELECT simhash_layout_insert('bld', 'SELECT id, sh FROM bl_codes WHERE id <= 400') AS inserted;
ANALYZE bld_b1, bld_b2, bld_b3;
-- the partitions of each copy this transaction has read, and how
CREATE TEMP VIEW bld_scans AS
SELECT substring(relname from '_b([0-9])_') AS copy, count(*) AS partitions_read,
       sum(seq_scan) AS sequential_scans, sum(n_tup_del) AS rows_deleted
FROM pg_stat_xact_user_tables
WHERE relname ~ '^bld_b[0-9]_p[0-9]$' AND seq_scan + idx_scan > 0
GROUP BY 1 ORDER BY 1;
SELECT pg_stat_force_next_flush() AS "counts of the transactions before sent";
BEGIN;
SET LOCAL enable_seqscan = off;
SELECT simhash_layout_delete('bld', ARRAY[7]::bigint[]) AS deleted;
SELECT * FROM bld_scans;
COMMIT;
-- a delete of many ids removes the same rows from every copy
SELECT simhash_layout_delete('bld', ARRAY(SELECT id FROM bl_codes WHERE id <= 400 AND id % 5 = 0)) AS deleted;
SELECT block, row_count, consistent FROM simhash_layout_check('bld') ORDER BY block;
SELECT count(*) AS left_of_those FROM bld_b3 WHERE id % 5 = 0 OR id = 7;
-- ids that copy 1 no longer holds are still deleted from the other copies
-- (from every partition, through their BRIN indexes on id), with the
-- warning that the copies differed; an id in no copy deletes nothing,
-- without a warning
DELETE FROM bld_b1 WHERE id = 9;
SELECT pg_stat_force_next_flush() AS "counts of the transactions before sent";
BEGIN;
SET LOCAL enable_seqscan = off;
SELECT simhash_layout_delete('bld', ARRAY[9, 11, 100000]::bigint[]) AS deleted;
SELECT * FROM bld_scans;
COMMIT;
SELECT simhash_layout_delete('bld', ARRAY[100000]::bigint[]) AS deleted;
SELECT block, row_count, consistent FROM simhash_layout_check('bld') ORDER BY block;
-- a delete of more rows of one partition than one statement takes
-- (1,000): codes whose blocks 2 and 3 (of 3: bits 41-21 and 20-0) are
-- below 256, all in partition 0 of copies 2 and 3; every statement's rows
-- go, and only those
SELECT simhash_layout_insert('bld', $$SELECT 1000000 + i,
                                             ((('x' || md5('bld ' || i))::bit(64)::bigint & -4398046511104)
                                              | ((i & 255) << 21) | ((i >> 8) & 255))::simhash64
                                      FROM generate_series(1, 2500) i$$) AS inserted;
SELECT count(*) AS in_partition_0_of_copy_2 FROM bld_b2_p0 WHERE id > 1000000;
SELECT simhash_layout_delete('bld', ARRAY(SELECT 1000000 + i FROM generate_series(1, 2500) i WHERE i % 5 <> 0)) AS deleted;
SELECT block, row_count, consistent FROM simhash_layout_check('bld') ORDER BY block;
SELECT (SELECT count(*) FROM bld_b2 WHERE id > 1000000) AS left_in_copy_2,
       (SELECT count(*) FROM bld_b3 WHERE id > 1000000 AND (id - 1000000) % 5 <> 0) AS deleted_left_in_copy_3;
-- a row that copy 2 holds under another code than copy 1's (a change of
-- fingerprint that committed on some shards only): deleted by id there
UPDATE bld_b2 SET sh = (sh::bigint # 4611686018427387904)::simhash64 WHERE id = 1000005;
SELECT simhash_layout_delete('bld', ARRAY[1000005]::bigint[]) AS deleted;
SELECT (SELECT count(*) FROM bld_b1 WHERE id = 1000005) AS copy_1,
       (SELECT count(*) FROM bld_b2 WHERE id = 1000005) AS copy_2,
       (SELECT count(*) FROM bld_b3 WHERE id = 1000005) AS copy_3;

-- simhash_layout_move cannot move a partition in one transaction: refused
-- (0A000) before anything is looked up or changed, naming the procedure
-- that moves in committed steps; the procedure refuses to run inside a
-- transaction block (2D000) and checks its arguments.
SELECT simhash_layout_move('bll', 1, 0, 'no_such_server');
\echo :LAST_ERROR_SQLSTATE
BEGIN;
CALL simhash_layout_move_partition('bll', 1, 0, 'no_such_server');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
\set VERBOSITY terse
CALL simhash_layout_move_partition('bll', NULL, 0, 'no_such_server');
CALL simhash_layout_move_partition('bll', 3, 0, 'no_such_server');
CALL simhash_layout_move_partition('bll', 1, 0, 'no_such_server');
\set VERBOSITY default

-- simhash_layout_within_sql names, in each of the first max_distance + 1
-- copies, the partition whose bounds hold the fingerprint's block value,
-- whatever its name; from `blocks` bits up, copy 1 whole.
CREATE TABLE blw_b1 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 1, 2));
CREATE TABLE blw_b1_low PARTITION OF blw_b1 FOR VALUES FROM (0) TO (2147483648);
CREATE TABLE blw_b1_high PARTITION OF blw_b1 FOR VALUES FROM (2147483648) TO (4294967296);
CREATE TABLE blw_b2 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 2, 2));
CREATE TABLE blw_b2_p0 PARTITION OF blw_b2 FOR VALUES FROM (0) TO (1000);
CREATE TABLE "blw second" PARTITION OF blw_b2 FOR VALUES FROM (1000) TO (4294967296);
CREATE VIEW blw AS SELECT id, sh FROM blw_b1;
SELECT simhash_layout_insert('blw', 'SELECT id, sh FROM bl_docs') AS inserted;
SELECT simhash_layout_within_sql('blw', '80000000000003e7', 0);
SELECT simhash_layout_within_sql('blw', '00000001000003e8', 1);
SELECT simhash_layout_within_sql('blw', '00000001000003e8', 2);
-- every row once, as a scan finds them, at radius 0 to 3 around codes of
-- the table and near them
SELECT r, count(*) AS codes,
       count(*) FILTER (WHERE got IS DISTINCT FROM want) AS differing,
       count(*) FILTER (WHERE got <> distinct_ids) AS repeated,
       sum(want) AS rows
FROM generate_series(0, 3) r,
     (SELECT DISTINCT (sh::bigint # (id % 3))::simhash64 AS q FROM bl_docs WHERE id % 7 = 0) c,
     LATERAL (SELECT count(*) AS got, count(DISTINCT id) AS distinct_ids
              FROM simhash_layout_within('blw', c.q, r)) g,
     LATERAL (SELECT count(*) AS want FROM bl_docs d WHERE bit_count(d.sh::bigint::bit(64) # c.q::bigint::bit(64)) <= r) w
GROUP BY r ORDER BY r;
-- no partition holds the block value: the arm names the copy, which the
-- planner prunes; not a layout: 42809
CREATE TABLE blg_b1 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 1, 2));
CREATE TABLE blg_b1_low PARTITION OF blg_b1 FOR VALUES FROM (0) TO (2147483648);
CREATE TABLE blg_b2 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 2, 2));
CREATE TABLE blg_b2_all PARTITION OF blg_b2 FOR VALUES FROM (0) TO (4294967296);
CREATE VIEW blg AS SELECT id, sh FROM blg_b1;
SELECT simhash_layout_within_sql('blg', 'ffffffff00000000', 1);
SELECT count(*) FROM simhash_layout_within('blg', 'ffffffff00000000', 1);
\set VERBOSITY terse
SELECT simhash_layout_within_sql('bl_docs', '0000000000000000', 1);
SELECT simhash_layout_within_sql('blw_b1', '0000000000000000', 1);
\set VERBOSITY default
-- What is a layout: one lookup (src/shard/layout_catalog.c) for
-- simhash_layout_blocks, which the PL/pgSQL functions call, and for
-- simhash_layout_within_sql.  Copy 1 must be partitioned by exactly
-- simhash_block(<column>, 1, m), m a constant from 2 to 16.
CREATE FUNCTION pg_temp.layout_shape(copy1 text) RETURNS TABLE (blocks text, within_sql text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'CREATE TABLE blx_b1 ' || copy1;
    CREATE VIEW blx AS SELECT id, sh FROM blx_b1;
    blocks := nd_test.try($q$SELECT simhash_layout_blocks('blx')$q$, with_value => true);
    within_sql := left(nd_test.try($q$SELECT simhash_layout_within_sql('blx', '0000000000000000', 1)$q$, with_value => true), 60);
    DROP VIEW blx;
    DROP TABLE blx_b1;
    RETURN NEXT;
END
$$;
SELECT shape, s.* FROM (VALUES
    ('(id bigint, sh simhash64) PARTITION BY RANGE (simhash_block(sh, 1, 2))'),
    ('(id bigint, sh simhash64) PARTITION BY LIST (simhash_block(sh, 1, 16))'),
    ('(id bigint, sh simhash64) PARTITION BY RANGE (simhash_block(sh, 2, 2))'),
    ('(id bigint, sh simhash64) PARTITION BY RANGE ((simhash_block(sh, 1, 2) + 0))'),
    ('(id bigint, sh simhash64) PARTITION BY RANGE (id, simhash_block(sh, 1, 2))'),
    ('(id bigint, sh simhash64) PARTITION BY RANGE (simhash_block(sh, 1, 17))'),
    ('(id bigint, sh simhash64) PARTITION BY RANGE (simhash_block(sh, 1, 1))'),
    ('(id bigint, sh simhash64) PARTITION BY RANGE (id)'),
    ('(id bigint, sh simhash64)')
) v(shape), LATERAL pg_temp.layout_shape(shape) s;
-- Every copy's key is checked, not only copy 1's: the extension's
-- simhash_block (by its OID, not its name), on the column sh, with the
-- copy's block and the layout's m.  A copy partitioned otherwise holds its
-- rows in partitions the searches do not read for them; such a layout is
-- refused (42809) by every function.  Copy 2 partitioned by block 1:
CREATE TABLE blk_b1 (id bigint NOT NULL, sh simhash64 NOT NULL, sh2 simhash64) PARTITION BY RANGE (simhash_block(sh, 1, 2));
CREATE TABLE blk_b1_low PARTITION OF blk_b1 FOR VALUES FROM (0) TO (2147483648);
CREATE TABLE blk_b1_high PARTITION OF blk_b1 FOR VALUES FROM (2147483648) TO (4294967296);
CREATE TABLE blk_b2 (id bigint NOT NULL, sh simhash64 NOT NULL, sh2 simhash64) PARTITION BY RANGE (simhash_block(sh, 1, 2));
CREATE TABLE blk_b2_low PARTITION OF blk_b2 FOR VALUES FROM (0) TO (2147483648);
CREATE TABLE blk_b2_high PARTITION OF blk_b2 FOR VALUES FROM (2147483648) TO (4294967296);
CREATE VIEW blk AS SELECT id, sh FROM blk_b1;
INSERT INTO blk_b1 (id, sh) SELECT id, sh FROM bl_docs;
INSERT INTO blk_b2 (id, sh) SELECT id, sh FROM bl_docs;
-- radius-1 searches around a code near each row, against a scan
SELECT CASE WHEN got = want THEN 'as a scan' WHEN got LIKE 'ok: %' THEN 'other rows' ELSE got END AS outcome,
       count(*) AS codes
FROM (SELECT DISTINCT (sh::bigint # (1::bigint << (id % 64)::int))::simhash64 AS q FROM bl_docs) c,
     LATERAL (SELECT nd_test.try(format('SELECT count(*) FROM simhash_layout_within(%L, %L, 1)', 'blk', c.q), with_value => true)) g(got),
     LATERAL (SELECT 'ok: ' || count(*) FROM bl_docs d WHERE d.sh <~> c.q <= 1) w(want)
GROUP BY 1 ORDER BY 1;
SELECT simhash_layout_blocks('blk');
\echo :LAST_ERROR_SQLSTATE
-- copy 2's key in other shapes; the layout's functions all refuse it
CREATE SCHEMA bl_other;
CREATE FUNCTION bl_other.simhash_block(simhash64, int4, int4) RETURNS int8
AS '$libdir/neardup', 'simhash_block' LANGUAGE C IMMUTABLE STRICT;
CREATE FUNCTION pg_temp.copy2_key(key text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    d text;
BEGIN
    DROP TABLE blk_b2;
    EXECUTE 'CREATE TABLE blk_b2 (id bigint NOT NULL, sh simhash64 NOT NULL, sh2 simhash64) PARTITION BY RANGE ('
            || key || ')';
    PERFORM simhash_layout_blocks('blk');
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || d;
END
$$;
SELECT key, pg_temp.copy2_key(key) AS outcome FROM (VALUES
    ('simhash_block(sh, 2, 2)'),
    ('simhash_block(sh, 1, 2)'),
    ('simhash_block(sh, 2, 3)'),
    ('simhash_block(sh2, 2, 2)'),
    ('bl_other.simhash_block(sh, 2, 2)'),
    ('(simhash_block(sh, 2, 2) + 0)'),
    ('id')
) v(key);
SELECT pg_temp.copy2_key('simhash_block(sh, 2, 2)') AS outcome;
SELECT q AS call, nd_test.try(q, with_value => true) AS outcome FROM (VALUES
    ($$SELECT simhash_layout_blocks('blk')$$),
    ($$SELECT count(*) FROM simhash_layout_within('blk', '0000000000000000', 1)$$)
) v(q);
-- copy 1 partitioned by another schema's simhash_block: not a layout
DROP VIEW blk;
DROP TABLE blk_b1;
CREATE TABLE blk_b1 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (bl_other.simhash_block(sh, 1, 2));
CREATE VIEW blk AS SELECT id, sh FROM blk_b1;
SELECT q AS call, nd_test.try(q, with_value => true) AS outcome FROM (VALUES
    ($$SELECT simhash_layout_blocks('blk')$$),
    ($$SELECT count(*) FROM simhash_layout_within('blk', '0000000000000000', 1)$$),
    ($$SELECT simhash_layout_insert('blk', 'SELECT 1::bigint, ''0000000000000000''::simhash64')$$)
) v(q);
DROP VIEW blk;
DROP TABLE blk_b1, blk_b2;
DROP SCHEMA bl_other CASCADE;
\set VERBOSITY terse
SELECT simhash_layout_within_sql('blw', '0000000000000000', 65);
-- a role that may not read the copies cannot have them locked either
CREATE ROLE nd_blw_reader;
GRANT SELECT ON blw TO nd_blw_reader;
SET ROLE nd_blw_reader;
SELECT simhash_layout_within_sql('blw', '0000000000000000', 1);
RESET ROLE;
DROP OWNED BY nd_blw_reader;
DROP ROLE nd_blw_reader;
\set VERBOSITY default
-- The SQL of a search names partitions, which PostgreSQL checks on their
-- own: a role with SELECT on the copies but not on their partitions gets
-- the copies named instead, pruned to the same partitions, and the rows a
-- scan of the copies finds.
CREATE ROLE nd_blw_reader;
GRANT SELECT ON blw, blw_b1, blw_b2, bl_docs TO nd_blw_reader;
CREATE FUNCTION pg_temp.blw_searches() RETURNS TABLE (r int, codes bigint, differing bigint, rows numeric)
LANGUAGE sql AS $$
    SELECT r, count(*), count(*) FILTER (WHERE got IS DISTINCT FROM 'ok: ' || want), sum(want)
    FROM generate_series(0, 3) r,
         (SELECT DISTINCT (sh::bigint # (id % 3))::simhash64 AS q FROM bl_docs WHERE id % 7 = 0) c,
         LATERAL (SELECT nd_test.try(format('SELECT count(*) FROM simhash_layout_within(%L, %L, %s)', 'blw', c.q, r), with_value => true)) g(got),
         LATERAL (SELECT count(*) AS want FROM blw_b1 d WHERE d.sh <~> c.q <= r) w
    GROUP BY r ORDER BY r
$$;
SET ROLE nd_blw_reader;
SELECT * FROM pg_temp.blw_searches();
SELECT string_agg(m[1], ', ') AS named FROM regexp_matches(simhash_layout_within_sql('blw', '00000001000003e8', 1), 'FROM (public\.(?:"[^"]*"|\w+))', 'g') m;
RESET ROLE;
-- Row security on the copies applies to the search as to a query of them:
-- with the partitions granted and a policy on the copies (id <= 1000), the
-- search names the copies again and returns no row the policy hides.
GRANT SELECT ON blw_b1_low, blw_b1_high, blw_b2_p0, "blw second" TO nd_blw_reader;
ALTER TABLE blw_b1 ENABLE ROW LEVEL SECURITY;
ALTER TABLE blw_b2 ENABLE ROW LEVEL SECURITY;
CREATE POLICY blw_low_ids ON blw_b1 TO nd_blw_reader USING (id <= 1000);
CREATE POLICY blw_low_ids ON blw_b2 TO nd_blw_reader USING (id <= 1000);
SET ROLE nd_blw_reader;
SELECT * FROM pg_temp.blw_searches();
SELECT count(*) AS rows, count(*) FILTER (WHERE id > 1000) AS hidden_rows
FROM simhash_layout_within('blw', '0123456789abcdef', 1);
-- simhash_layout_nearest's rounds over copy 1 too: the 100 nearest rows
-- the role may read, as its own ordered query of copy 1 gives them
SELECT count(*) AS rows, count(*) FILTER (WHERE id > 1000) AS hidden_rows,
       count(*) FILTER (WHERE (id, distance) NOT IN (
           SELECT id, sh <~> '0123456789abcdef' FROM blw_b1
           ORDER BY sh <~> '0123456789abcdef', id LIMIT 100)) AS differing
FROM simhash_layout_nearest('blw', '0123456789abcdef', 100);
SELECT string_agg(m[1], ', ') AS named FROM regexp_matches(simhash_layout_within_sql('blw', '00000001000003e8', 1), 'FROM (public\.(?:"[^"]*"|\w+))', 'g') m;
RESET ROLE;
-- a role that row security does not restrict (the owner) still gets the
-- partitions named, read together
SELECT string_agg(m[1], ', ') AS named FROM regexp_matches(simhash_layout_within_sql('blw', '00000001000003e8', 1), 'FROM (public\.(?:"[^"]*"|\w+))', 'g') m;
ALTER TABLE blw_b1 DISABLE ROW LEVEL SECURITY;
ALTER TABLE blw_b2 DISABLE ROW LEVEL SECURITY;
SET ROLE nd_blw_reader;
SELECT string_agg(m[1], ', ') AS named FROM regexp_matches(simhash_layout_within_sql('blw', '00000001000003e8', 1), 'FROM (public\.(?:"[^"]*"|\w+))', 'g') m;
RESET ROLE;
DROP OWNED BY nd_blw_reader;
DROP ROLE nd_blw_reader;
DROP VIEW blw, blg;
DROP TABLE blw_b1, blw_b2, blg_b1, blg_b2;
