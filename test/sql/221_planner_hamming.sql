--
-- Plan shapes on the hamming index that depend on its cost estimate
-- (src/hamming/ham_cost.c).  No enable_* settings: the planner chooses.
--
SET jit = off;
-- 42,000 random codes (issue 29's table size), one index, statistics.
CREATE TABLE hp_doc (id int, sh simhash64);
INSERT INTO hp_doc
SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash64
FROM generate_series(1, 42000) i;
-- near copies of row 777 at distances 1..12, two of each
INSERT INTO hp_doc
SELECT 100000 + d * 10 + k,
       (('x' || md5('777'))::bit(64)::bigint # (((1::bigint << d) - 1) << (k * 20)))::simhash64
FROM generate_series(1, 12) d, generate_series(0, 1) k;
CREATE INDEX hp_doc_sh ON hp_doc USING hamming (sh);
VACUUM ANALYZE hp_doc;
SELECT sh AS q FROM hp_doc WHERE id = 777 \gset

-- A radius condition bounds a nearest-neighbour scan: the index path costs
-- no more than the radius search, so it wins over a sequential scan and a
-- sort.  0.2 charged it the start-up of an unbounded nearest-neighbour
-- search and chose the sequential scan.
EXPLAIN (COSTS OFF)
SELECT id FROM hp_doc WHERE sh <~> :'q' <= 8 ORDER BY sh <~> :'q' LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM hp_doc WHERE sh <~> :'q' <= 12 ORDER BY sh <~> :'q' LIMIT 10;
-- the same answers as a sequential scan
SELECT id, sh <~> :'q' AS d FROM hp_doc WHERE sh <~> :'q' <= 12 ORDER BY sh <~> :'q', id LIMIT 10;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT id, sh <~> :'q' AS d FROM hp_doc WHERE sh <~> :'q' <= 12 ORDER BY sh <~> :'q', id LIMIT 10;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- Unbounded nearest neighbours and a plain radius search, as before.
EXPLAIN (COSTS OFF)
SELECT id FROM hp_doc ORDER BY sh <~> :'q' LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM hp_doc WHERE sh <~> :'q' <= 3;

-- A radius that takes most of the table, with a LIMIT: the
-- nearest-neighbour scan stops early.
EXPLAIN (COSTS OFF)
SELECT id FROM hp_doc WHERE sh <~> :'q' <= 40 ORDER BY sh <~> :'q' LIMIT 10;

DROP TABLE hp_doc;
