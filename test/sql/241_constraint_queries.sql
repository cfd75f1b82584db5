--
-- The near-duplicate constraint's index serves queries on the fingerprint:
-- EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&) answers
-- `sh <~> q <= r` at any radius, `sh = q` and ORDER BY sh <~> q, so one
-- index does both (src/planner/radius_index.c).  Every answer is compared
-- with a sequential scan's.
--

-- A table the constraint keeps 4 bits apart or more: random codes, and
-- near copies of some of them at 4 to 10 bits, with NULL codes; the
-- copies within 3 bits are skipped by ON CONFLICT DO NOTHING.
CREATE TABLE cq (id int PRIMARY KEY, sh simhash64,
    CONSTRAINT cq_near EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&));
INSERT INTO cq
SELECT i, ('x' || md5('b' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 4000) i
UNION ALL
SELECT 10000 + i, (('x' || md5('b' || (i % 300 + 1)))::bit(64)::bigint
                   # (('x' || md5('m' || i))::bit(64)::bigint & ('x' || md5('n' || i))::bit(64)::bigint
                      & ('x' || md5('o' || i))::bit(64)::bigint & ('x' || md5('p' || i))::bit(64)::bigint))::simhash64
FROM generate_series(1, 1500) i
UNION ALL
SELECT 20000 + i, NULL FROM generate_series(1, 5) i
ON CONFLICT DO NOTHING;
ANALYZE cq;
-- The only index on sh is the constraint's.
SELECT count(*) AS rows, count(sh) AS codes, count(*) FILTER (WHERE id > 10000 AND id < 20000) AS near_copies,
       (SELECT array_agg(indexrelid::regclass ORDER BY indexrelid::regclass::text) FROM pg_index WHERE indrelid = 'cq'::regclass) AS indexes
FROM cq;

-- The planner picks it by itself, for radius search below, at and above
-- the constraint's k, for nearest neighbours and for equality.
EXPLAIN (COSTS OFF) SELECT id FROM cq WHERE sh <~> '00ff00ff00ff00ff' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM cq WHERE sh <~> '00ff00ff00ff00ff' <= 8;
EXPLAIN (COSTS OFF) SELECT id FROM cq WHERE sh <~> '00ff00ff00ff00ff' < 2;
EXPLAIN (COSTS OFF) SELECT id FROM cq ORDER BY sh <~> '00ff00ff00ff00ff' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM cq WHERE sh = '00ff00ff00ff00ff';
-- ... and still for the constraint's own operator on the ball expression.
EXPLAIN (COSTS OFF) SELECT id FROM cq WHERE hamming_ball(sh, 3) && hamming_ball('00ff00ff00ff00ff', 3);

-- both_ways(q): the rows of q (one column) through the constraint's index
-- and through a sequential scan, and whether the first plan used the
-- index (the second must not).  sorted: compare as sorted arrays, else in
-- the order the query returns them.
CREATE FUNCTION pg_temp.both_ways(q text, sorted bool, OUT via_index text[], OUT via_seq text[], OUT used_index bool)
LANGUAGE plpgsql AS $$
DECLARE
    agg text := CASE WHEN sorted THEN 'array_agg(x::text ORDER BY x::text)' ELSE 'array_agg(x::text)' END;
    line text;
    plan text := '';
BEGIN
    SET LOCAL enable_seqscan = off;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        plan := plan || line || E'\n';
    END LOOP;
    used_index := plan LIKE '%Index Scan using cq_near on cq%' OR plan LIKE '%Bitmap Index Scan on cq_near%';
    EXECUTE format('SELECT %s FROM (%s) x(x)', agg, q) INTO via_index;
    SET LOCAL enable_seqscan = on;
    SET LOCAL enable_indexscan = off;
    SET LOCAL enable_bitmapscan = off;
    plan := '';
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        plan := plan || line || E'\n';
    END LOOP;
    IF plan LIKE '%cq_near%' THEN
        RAISE EXCEPTION 'the sequential plan uses the index: %', plan;
    END IF;
    EXECUTE format('SELECT %s FROM (%s) x(x)', agg, q) INTO via_seq;
    SET LOCAL enable_indexscan = on;
    SET LOCAL enable_bitmapscan = on;
END $$;

-- The centers: codes of the table, codes 1, 2 and 5 bits from one (so
-- near a group of copies), and codes of no row.
CREATE TEMP TABLE centers AS
SELECT 'row ' || id AS what, sh AS q FROM cq WHERE id IN (1, 2, 77, 10001)
UNION ALL SELECT 'row 1 # ' || b, (sh::bigint # b)::simhash64 FROM cq, (VALUES (1::bigint), (3), (31)) v(b) WHERE id = 1
UNION ALL SELECT 'random ' || i, ('x' || md5('q' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 3) i;

-- Radius search at radii below, at and above k = 3, as <=, < and
-- hamming_distance(): the same rows as a sequential scan.
SELECT r, count(*) AS queries,
       count(*) FILTER (WHERE b.via_index IS NOT DISTINCT FROM b.via_seq) AS same_rows,
       count(*) FILTER (WHERE b.used_index) AS used_index,
       sum(coalesce(array_length(b.via_seq, 1), 0)) AS rows_found
FROM centers c, (VALUES (0), (1), (2), (3), (4), (6), (10), (16)) v(r),
     LATERAL (SELECT * FROM pg_temp.both_ways(format('SELECT id FROM cq WHERE sh <~> %L <= %s', c.q, v.r), true)) b
GROUP BY r ORDER BY r;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE b.via_index IS NOT DISTINCT FROM b.via_seq AND b.used_index) AS same_rows_on_the_index
FROM centers c, (VALUES (1), (4), (7)) v(r),
     LATERAL (SELECT * FROM pg_temp.both_ways(format('SELECT id FROM cq WHERE hamming_distance(sh, %L) < %s', c.q, v.r), true)) b;

-- Nearest neighbours: the distances in the order returned are the
-- sequential scan's, ties and NULL codes included (NULLs last); with a
-- LIMIT the rows strictly nearer than the last distance are the same.
SELECT n, count(*) AS queries,
       count(*) FILTER (WHERE d.via_index = d.via_seq) AS same_distances,
       count(*) FILTER (WHERE i.via_index IS NOT DISTINCT FROM i.via_seq) AS same_nearer_rows,
       count(*) FILTER (WHERE d.used_index AND i.used_index) AS used_index
FROM centers c, (VALUES (1), (10), (50), (6000)) v(n),
     LATERAL (SELECT * FROM pg_temp.both_ways(format('SELECT sh <~> %1$L FROM cq ORDER BY sh <~> %1$L LIMIT %2$s', c.q, v.n), false)) d,
     LATERAL (SELECT * FROM pg_temp.both_ways(format(
         'SELECT id FROM (SELECT id, sh <~> %1$L AS d FROM cq ORDER BY sh <~> %1$L LIMIT %2$s) x '
         'WHERE d < (SELECT max(d) FROM (SELECT sh <~> %1$L AS d FROM cq ORDER BY 1 LIMIT %2$s) y) OR %2$s > 5500',
         c.q, v.n), true)) i
GROUP BY n ORDER BY n;
-- All of them: NULL codes come last, as from the sort.
SELECT (b.via_index)[array_length(b.via_index, 1) - 4:] AS last_five, array_length(b.via_index, 1) AS rows,
       b.via_index = b.via_seq AS same, b.used_index
FROM pg_temp.both_ways($$SELECT sh <~> '00ff00ff00ff00ff' FROM cq ORDER BY sh <~> '00ff00ff00ff00ff'$$, false) b;
-- Radius and order together (the planner prefers a sort at large radii
-- today; both_ways turns sequential scans off for the first plan).
SELECT count(*) AS queries,
       count(*) FILTER (WHERE b.via_index IS NOT DISTINCT FROM b.via_seq AND b.used_index) AS same_on_the_index
FROM centers c, (VALUES (2), (5), (12)) v(r),
     LATERAL (SELECT * FROM pg_temp.both_ways(format('SELECT sh <~> %1$L FROM cq WHERE sh <~> %1$L <= %2$s ORDER BY sh <~> %1$L LIMIT 20', c.q, v.r), false)) b;
-- Equality, and a join whose inner side probes the index per outer row.
SELECT count(*) AS queries,
       count(*) FILTER (WHERE b.via_index IS NOT DISTINCT FROM b.via_seq AND b.used_index) AS same_on_the_index
FROM centers c, LATERAL (SELECT * FROM pg_temp.both_ways(format('SELECT id FROM cq WHERE sh = %L', c.q), true)) b;
SELECT b.via_index = b.via_seq AS same, b.used_index, array_length(b.via_seq, 1) AS pairs
FROM pg_temp.both_ways($$SELECT a.id || '-' || o.id FROM cq a JOIN cq o ON o.sh <~> a.sh <= 5 AND o.id <> a.id WHERE a.id BETWEEN 1 AND 40 OR a.id > 10000$$, true) b;

-- Prepared statements with generic plans: the radius and the center are
-- parameters.
SET plan_cache_mode = force_generic_plan;
PREPARE cq_radius(simhash64, int) AS SELECT id FROM cq WHERE sh <~> $1 <= $2;
PREPARE cq_knn(simhash64, int) AS SELECT sh <~> $1 AS d FROM cq ORDER BY sh <~> $1 LIMIT $2;
EXPLAIN (COSTS OFF) EXECUTE cq_radius('00ff00ff00ff00ff', 3);
EXPLAIN (COSTS OFF) EXECUTE cq_knn('00ff00ff00ff00ff', 10);
-- Each center at three radii and limits, through the generic plans, against
-- the distances computed by bit_count.
CREATE TEMP TABLE prepared_runs (what text, r int, n int, same_radius bool, same_knn bool);
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT what, q, r, n FROM centers, (VALUES (0, 1), (3, 10), (7, 40)) v(r, n) LOOP
        EXECUTE format('CREATE TEMP TABLE pr_radius AS EXECUTE cq_radius(%L, %s)', c.q, c.r);
        EXECUTE format('CREATE TEMP TABLE pr_knn AS EXECUTE cq_knn(%L, %s)', c.q, c.n);
        INSERT INTO prepared_runs
        SELECT c.what, c.r, c.n,
               (SELECT array_agg(id ORDER BY id) FROM pr_radius) IS NOT DISTINCT FROM
               (SELECT array_agg(id ORDER BY id) FROM cq WHERE bit_count((sh::bigint # c.q::bigint)::bit(64)) <= c.r),
               (SELECT array_agg(d) FROM pr_knn) =
               (SELECT array_agg(d) FROM (SELECT bit_count((sh::bigint # c.q::bigint)::bit(64))::int AS d
                                          FROM cq ORDER BY 1 LIMIT c.n) s);
        DROP TABLE pr_radius, pr_knn;
    END LOOP;
END $$;
SELECT r, n, count(*) AS queries, count(*) FILTER (WHERE same_radius) AS same_radius,
       count(*) FILTER (WHERE same_knn) AS same_knn
FROM prepared_runs GROUP BY r, n ORDER BY r;
RESET plan_cache_mode;
DEALLOCATE cq_radius;
DEALLOCATE cq_knn;
DROP TABLE cq;
