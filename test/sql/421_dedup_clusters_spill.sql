--
-- dedup_clusters past its memory: when its disjoint sets would pass
-- work_mem times hash_mem_multiplier, they are written out, and their
-- components and the later edges' are found in rounds of large-star and
-- small-star contraction over external sorts.  Each graph is clustered
-- twice, with work_mem at 1GB (in memory) and at a small work_mem; the two
-- answers must be the same.  The DEBUG1 lines show that the second run
-- spilled, and which way it joined: every edge in the rounds when the sets
-- spilled early (64kB), only the later edges relabelled by the sets when
-- they spilled late (a few MB, most ids already in the sets).
--
SET hash_mem_multiplier = 1;

CREATE FUNCTION public.spill_compare(q text, small_work_mem text DEFAULT '64kB')
RETURNS TABLE (ids bigint, clusters bigint, mismatches bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('work_mem', '1GB', true);
    CREATE TEMP TABLE in_memory AS SELECT * FROM dedup_clusters(q);
    PERFORM set_config('work_mem', small_work_mem, true);
    PERFORM set_config('client_min_messages', 'debug1', true);
    CREATE TEMP TABLE sorted AS SELECT * FROM dedup_clusters(q);
    PERFORM set_config('client_min_messages', 'notice', true);
    RETURN QUERY
        SELECT count(*), count(DISTINCT m.cluster_id),
               count(*) FILTER (WHERE m.id IS NULL OR s.id IS NULL OR m.cluster_id <> s.cluster_id)
        FROM in_memory m FULL JOIN sorted s USING (id);
    DROP TABLE in_memory, sorted;
END
$$;
\set VERBOSITY terse

-- A random graph at the giant component's threshold (30,000 edges over
-- 40,000 ids): many rounds.
CREATE TABLE rnd AS
SELECT abs(hashint8(i)) % 40000 AS a, abs(hashint8(-i)) % 40000 AS b
FROM generate_series(1, 30000) i;
SELECT * FROM spill_compare('SELECT a, b FROM rnd');

-- A chain of 20,000 ids given in increasing order, and the same chain
-- backwards with the ids negated: label propagation would need 20,000
-- rounds; one component each, named by its smallest id.
SELECT * FROM spill_compare('SELECT i, i + 1 FROM generate_series(1, 19999) i
                             UNION ALL SELECT -i, -i - 1 FROM generate_series(19999, 1, -1) i');
SET work_mem = '64kB';
SELECT cluster_id, count(*) FROM dedup_clusters('SELECT i, i + 1 FROM generate_series(1, 19999) i
                             UNION ALL SELECT -i, -i - 1 FROM generate_series(19999, 1, -1) i')
GROUP BY cluster_id ORDER BY cluster_id;
RESET work_mem;

-- Groups as arrays, as a block-sharded layout's shards send them: groups of
-- 5 chained three by three through a shared id, a giant group of 30,000
-- around its largest id first, NULL elements, NULL arrays, arrays of one id.
CREATE TABLE grp AS
SELECT ARRAY(SELECT 5 * g + k FROM generate_series(0, 4) k)
       || CASE WHEN g % 3 <> 0 THEN ARRAY[5 * (g + 1)::int8] ELSE '{}'::int8[] END AS ids
FROM generate_series(0, 5999) g;
INSERT INTO grp SELECT ARRAY[1000000::int8] || array_agg(900000 + i ORDER BY i DESC)
FROM generate_series(1, 30000) i;
INSERT INTO grp VALUES ('{7, NULL, 40000}'), (NULL), ('{77777}'), ('{NULL, 88888, 88888}');
SELECT * FROM spill_compare('SELECT ids FROM grp');
SET work_mem = '64kB';
SELECT count(*) AS giant, min(cluster_id), max(id) FROM dedup_clusters('SELECT ids FROM grp')
WHERE cluster_id = 900001;
SELECT * FROM dedup_clusters('SELECT ids FROM grp') WHERE id IN (7, 40000, 77777, 88888);
RESET work_mem;

-- Spilling late: the sets hold most ids when the next batch would pass
-- the budget, and only the later edges go through the rounds.  The random
-- graph with a quarter of its edges again on other ids; the two chains;
-- the groups with the giant one cut to its first 10,000 ids; a chain of
-- 35,000 ids whose halves, written out as two sets, meet through a later
-- pair, with later ids outside the sets (the chain's end, the groups'
-- first pairs).
SELECT * FROM spill_compare('SELECT a, b FROM rnd UNION ALL SELECT a + 40000, b FROM rnd WHERE a % 4 = 0', '2MB');
SELECT * FROM spill_compare('SELECT i, i + 1 FROM generate_series(1, 19999) i
                             UNION ALL SELECT -i, -i - 1 FROM generate_series(19999, 1, -1) i', '2MB');
SELECT * FROM spill_compare('SELECT ids FROM grp WHERE cardinality(ids) < 100
                             UNION ALL SELECT ids[1:10000] FROM grp WHERE cardinality(ids) > 100', '2MB');
SELECT * FROM spill_compare('SELECT i, i + 1 FROM generate_series(1, 34999) i WHERE i <> 15000
                             UNION ALL SELECT ids[1], ids[2] FROM grp
                             UNION ALL SELECT 15000, 15001', '2MB');

-- Small integer types and the extreme ids, among enough pairs to spill.
SELECT * FROM spill_compare($$
    SELECT (i % 30000)::int2, (i + 7)::int4 FROM generate_series(1, 20000) i
    UNION ALL SELECT 1::int2, 9223372036854775807
    UNION ALL SELECT (-32768)::int2, (-9223372036854775807 - 1)
$$);

-- An error in the query after the spill: the statement fails, and the
-- next one runs normally (its temporary files were released).
SET work_mem = '64kB';
SELECT count(*) FROM dedup_clusters('SELECT a, b FROM rnd
                                     UNION ALL SELECT 1, 1 / (g - 1) FROM generate_series(1, 1) g');
SELECT count(*) AS temporary_files_left FROM pg_ls_tmpdir();
SELECT count(*) FROM dedup_clusters('SELECT a, b FROM rnd');
RESET work_mem;

\set VERBOSITY default
DROP FUNCTION public.spill_compare(text, text);
DROP TABLE rnd, grp;
RESET hash_mem_multiplier;
