-- Checks of hamming-setup.sql's index, run after a server restart: one
-- line "name|t" per check ("|f" when it fails).  Radius search (0 to 4
-- bits) and exact KNN (10 nearest) through the index, for 40 codes of the
-- table (20 of them planted near copies) and 20 codes that are not in it, against a sequential scan on the
-- plain bigint codes; the plans use the index; hamming_check passes.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE TEMP TABLE queries AS
	SELECT id AS qid, code AS qcode FROM ham_restart
	WHERE id % 1000 = 7 OR (id > 100000 AND id % 25 = 0)
	UNION ALL
	SELECT -i, ('x' || substr(md5('query' || i), 1, 16))::bit(64)::bigint
	FROM generate_series(1, 20) i;

-- the oracle: sequential scans, bit counts of plain bigints
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE radius_seq AS
	SELECT qid, r, id FROM queries, generate_series(0, 4) r, ham_restart
	WHERE bit_count((code # qcode)::bit(64)) <= r;
CREATE TEMP TABLE knn_seq AS
	SELECT qid, array_agg(d ORDER BY d) AS ds FROM queries, LATERAL (
		SELECT bit_count((code # qcode)::bit(64)) AS d FROM ham_restart
		ORDER BY 1 LIMIT 10) k GROUP BY qid;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- the same through the index
SET enable_seqscan = off;
CREATE FUNCTION pg_temp.plan_uses(query text, idx text) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	uses bool := false;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		uses := uses OR line LIKE '%' || idx || '%';
	END LOOP;
	RETURN uses;
END $$;
\set radius_q 'SELECT qid, r, h.id FROM queries, generate_series(0, 4) r, LATERAL (SELECT id FROM ham_restart WHERE sh <~> qcode::simhash64 <= r) h'
\set knn_q 'SELECT qid, (SELECT array_agg(d ORDER BY d) FROM (SELECT sh <~> qcode::simhash64 AS d FROM ham_restart ORDER BY sh <~> qcode::simhash64 LIMIT 10) k) AS ds FROM queries'
CREATE TEMP TABLE radius_idx AS :radius_q;
CREATE TEMP TABLE knn_idx AS :knn_q;

SELECT 'radius_plan_uses_index', pg_temp.plan_uses(:'radius_q', 'ham_restart_idx');
SELECT 'knn_plan_uses_index', pg_temp.plan_uses(:'knn_q', 'ham_restart_idx');
SELECT 'radius_equals_seqscan',
	-- every code of the table finds itself at each radius, the planted
	-- copies their originals too: the oracle is not empty
	(SELECT count(*) FROM radius_seq) > 5 * (SELECT count(*) FROM queries WHERE qid > 0)
	AND NOT EXISTS (SELECT * FROM radius_seq EXCEPT SELECT * FROM radius_idx)
	AND NOT EXISTS (SELECT * FROM radius_idx EXCEPT SELECT * FROM radius_seq)
	AND (SELECT count(*) FROM radius_idx) = (SELECT count(*) FROM radius_seq);
SELECT 'knn_equals_seqscan',
	(SELECT count(*) FROM knn_seq) = (SELECT count(*) FROM queries)
	AND NOT EXISTS (SELECT * FROM knn_seq EXCEPT SELECT * FROM knn_idx)
	AND NOT EXISTS (SELECT * FROM knn_idx EXCEPT SELECT * FROM knn_seq);
-- hamming_check raises an error on a damaged index (psql then stops)
SELECT 'hamming_check_passes', true FROM hamming_check('ham_restart_idx', true);
