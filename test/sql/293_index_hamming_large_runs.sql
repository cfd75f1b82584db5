--
-- Runs too large for one header page to list every directory page (about
-- 600M entries at 4 blocks) list, per table, index pages of directory
-- pages.  neardup.debug_run_header_dirs lowers the header's budget so that
-- a small table takes that layout; every query form must still return what
-- a sequential scan returns, through builds, merges, VACUUM and checks.
--
CREATE TABLE ham_big (id int, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO ham_big SELECT i, hashint8extended(i, 3)::simhash64 FROM generate_series(1, 60000) i;
-- planted neighbours of the first 50 rows, 1 to 5 bits away
INSERT INTO ham_big
SELECT 100000 + c * 10 + d, (hashint8extended(c, 3) # ((1::bigint << d) - 1))::simhash64
FROM generate_series(1, 50) c, generate_series(1, 5) d;
INSERT INTO ham_big VALUES (200000, NULL);

-- Index pages cost a page per table: the same index in both layouts.
CREATE INDEX ham_big_flat ON ham_big USING hamming (sh);
SET neardup.debug_run_header_dirs = 2;
CREATE INDEX ham_big_two ON ham_big USING hamming (sh);
SELECT pg_relation_size('ham_big_two') / 8192 - pg_relation_size('ham_big_flat') / 8192 AS index_pages;
DROP INDEX ham_big_flat;

-- Index answers against the sequential scan's, for radius and KNN.
CREATE FUNCTION ham_big_agree() RETURNS TABLE (radius_checks int, radius_wrong int, knn_checks int, knn_wrong int)
LANGUAGE plpgsql AS $$
DECLARE
	q simhash64;
	r int;
	a text;
	b text;
BEGIN
	radius_checks := 0; radius_wrong := 0; knn_checks := 0; knn_wrong := 0;
	FOR q IN SELECT sh FROM ham_big WHERE id <= 40 OR id % 7919 = 0 LOOP
		FOREACH r IN ARRAY ARRAY[0, 3, 6, 10] LOOP
			SET LOCAL enable_seqscan = off;
			SET LOCAL enable_bitmapscan = off;
			SELECT string_agg(id::text, ',' ORDER BY id) INTO a FROM ham_big WHERE sh <~> q <= r;
			SET LOCAL enable_seqscan = on;
			SET LOCAL enable_indexscan = off;
			SET LOCAL enable_bitmapscan = off;
			SELECT string_agg(id::text, ',' ORDER BY id) INTO b FROM ham_big WHERE sh <~> q <= r;
			RESET enable_indexscan;
			radius_checks := radius_checks + 1;
			radius_wrong := radius_wrong + (a IS DISTINCT FROM b)::int;
		END LOOP;
		SET LOCAL enable_seqscan = off;
		SET LOCAL enable_bitmapscan = off;
		SELECT string_agg(d::text, ',') INTO a FROM (SELECT sh <~> q AS d FROM ham_big ORDER BY sh <~> q LIMIT 10) s;
		SET LOCAL enable_seqscan = on;
		SET LOCAL enable_indexscan = off;
		SELECT string_agg(d::text, ',') INTO b FROM (SELECT sh <~> q AS d FROM ham_big ORDER BY sh <~> q LIMIT 10) s;
		RESET enable_indexscan;
		knn_checks := knn_checks + 1;
		knn_wrong := knn_wrong + (a IS DISTINCT FROM b)::int;
	END LOOP;
	RESET enable_seqscan;
	RESET enable_bitmapscan;
	RETURN NEXT;
END $$;

EXPLAIN (COSTS OFF)
SELECT id FROM ham_big WHERE sh <~> '0123456789abcdef' <= 3;
SELECT * FROM ham_big_agree();
SELECT hamming_check('ham_big_two', true);

-- A merge reads the two-level run and writes another.
INSERT INTO ham_big SELECT i, hashint8extended(i, 3)::simhash64 FROM generate_series(60001, 70000) i;
SELECT hamming_merge('ham_big_two');
SELECT * FROM ham_big_agree();
SELECT hamming_check('ham_big_two', true);

-- VACUUM, and then a merge of a run VACUUM compacted.
DELETE FROM ham_big WHERE id % 3 = 0;
VACUUM ham_big;
INSERT INTO ham_big SELECT i, hashint8extended(i, 3)::simhash64 FROM generate_series(70001, 72000) i;
SELECT hamming_merge('ham_big_two');
SELECT * FROM ham_big_agree();
SELECT hamming_check('ham_big_two', true);

-- Eight blocks, a header of one page per table: as many index pages.
CREATE INDEX ham_big_eight ON ham_big USING hamming (sh) WITH (blocks = 8);
DROP INDEX ham_big_two;
SELECT * FROM ham_big_agree();
SELECT hamming_check('ham_big_eight', true);
RESET neardup.debug_run_header_dirs;

-- Only a superuser may set it.
CREATE ROLE regress_nd_large;
SET ROLE regress_nd_large;
SET neardup.debug_run_header_dirs = 1;
RESET ROLE;
DROP ROLE regress_nd_large;

DROP TABLE ham_big;
DROP FUNCTION ham_big_agree();
