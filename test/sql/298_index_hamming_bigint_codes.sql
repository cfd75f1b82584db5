--
-- sh OPERATOR(neardup_internal.=) ANY (bigint[]): many codes, given as the
-- bigints of their 64 bits, found in one bitmap scan of a hamming index
-- (the executor rescans it once per element).  It must answer as the
-- sequential scan does: codes with the top bit set (negative bigints),
-- repeated and absent codes, NULL elements, an empty array; through an
-- index of every table, of one table (only_block) and the near-duplicate
-- constraint's index; with pending entries and runs.  The operator stays
-- off the search path: sh = 5 is no comparison.
--

CREATE TABLE bc (id int, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO bc SELECT i, ('x' || md5('bc ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, 20000) i;
-- groups of identical codes
INSERT INTO bc SELECT 30000 + i, ('x' || md5('bc ' || (i % 5)))::bit(64)::bigint::simhash64 FROM generate_series(1, 50) i;
INSERT INTO bc VALUES (90001, NULL);
CREATE INDEX bc_full ON bc USING hamming (sh) WITH (blocks = 4, pending_limit = 64, background_merge = off);
-- after the build: pending entries beside the run
INSERT INTO bc SELECT i, ('x' || md5('bc ' || i))::bit(64)::bigint::simhash64 FROM generate_series(20001, 20500) i;
ANALYZE bc;
SELECT count(*) AS runs FROM hamming_runs('bc_full');
SELECT pending_entries > 0 AS pending FROM hamming_stats('bc_full');

-- the codes asked for: every 97th row's, the codes of groups, an absent
-- code, a NULL, and the first code twice
CREATE TEMP TABLE bc_ask AS
SELECT array_agg(sh::bigint ORDER BY id) || ARRAY[12345::bigint, NULL, 0] || (SELECT sh::bigint FROM bc WHERE id = 1) AS codes
FROM bc WHERE id % 97 = 0 OR id IN (30001, 20400);
SELECT count(*) FILTER (WHERE c < 0) > 0 AS negative_codes, count(*) AS codes FROM bc_ask, unnest(codes) c;

CREATE FUNCTION pg_temp.bc_ids(use_index bool, tbl text, index_name text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    RETURN nd_test.answer(use_index, index_name,
        format('SELECT string_agg(id::text, '','' ORDER BY id) FROM %I '
               'WHERE sh OPERATOR(neardup_internal.=) ANY ((SELECT codes FROM bc_ask)::bigint[])', tbl));
END $$;

SET enable_seqscan = off;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM bc WHERE sh OPERATOR(neardup_internal.=) ANY ('{1,-2,3}'::bigint[]);
CREATE TEMP TABLE bc_by_index AS SELECT pg_temp.bc_ids(true, 'bc', 'bc_full') AS ids;
RESET enable_seqscan;
RESET enable_indexscan;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
CREATE TEMP TABLE bc_by_seqscan AS SELECT pg_temp.bc_ids(false, 'bc', 'bc_full') AS ids;
RESET enable_bitmapscan;
RESET enable_indexscan;
SELECT i.ids = s.ids AS same_rows, cardinality(string_to_array(i.ids, ',')) AS rows
FROM bc_by_index i, bc_by_seqscan s;

-- the index of one table, and the constraint's index (its face on sh)
DROP INDEX bc_full;
CREATE INDEX bc_one ON bc USING hamming (sh) WITH (blocks = 4, only_block = 3);
SET enable_seqscan = off;
SELECT pg_temp.bc_ids(true, 'bc', 'bc_one') = (SELECT ids FROM bc_by_seqscan) AS same_rows_one_table;
RESET enable_seqscan;
DROP INDEX bc_one;
CREATE TABLE bc_x (id int, sh simhash64, EXCLUDE USING hamming (hamming_ball(sh, 1) WITH &&));
INSERT INTO bc_x SELECT id, sh FROM bc WHERE id <= 20500;
ANALYZE bc_x;
SET enable_seqscan = off;
SELECT pg_temp.bc_ids(true, 'bc_x', 'bc_x_hamming_ball_excl')
       = (SELECT string_agg(x, ',' ORDER BY x::int) FROM bc_by_seqscan, unnest(string_to_array(ids, ',')) x
          WHERE x::int <= 20500) AS same_rows_constraint;
RESET enable_seqscan;

-- GIN and GiST indexes of neardup's operator classes answer it too
CREATE INDEX bc_gin ON bc USING gin (sh);
SET enable_seqscan = off;
SELECT pg_temp.bc_ids(true, 'bc', 'bc_gin') = (SELECT ids FROM bc_by_seqscan) AS same_rows_gin;
DROP INDEX bc_gin;
CREATE INDEX bc_gist ON bc USING gist (sh);
SELECT pg_temp.bc_ids(true, 'bc', 'bc_gist') = (SELECT ids FROM bc_by_seqscan) AS same_rows_gist;
DROP INDEX bc_gist;
RESET enable_seqscan;

-- an empty array finds nothing; a NULL array too
CREATE INDEX bc_full ON bc USING hamming (sh);
SET enable_seqscan = off;
SELECT count(*) FROM bc WHERE sh OPERATOR(neardup_internal.=) ANY ('{}'::bigint[]);
SELECT count(*) FROM bc WHERE sh OPERATOR(neardup_internal.=) ANY (NULL::bigint[]);
RESET enable_seqscan;

-- one code as a bigint: a plain index scan and an index-only scan
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT nd_test.answer(true, 'bc_full',
    format('SELECT string_agg(id::text, '','' ORDER BY id) FROM bc WHERE sh OPERATOR(neardup_internal.=) %s::bigint',
           (SELECT sh::bigint FROM bc WHERE id = 30001))) AS one_code_index_scan;
SELECT nd_test.answer(true, 'Index Only Scan using bc_full',
    format('SELECT count(*) FROM bc WHERE sh OPERATOR(neardup_internal.=) %s::bigint',
           (SELECT sh::bigint FROM bc WHERE id = 30001))) AS one_code_index_only;
RESET enable_bitmapscan;
-- a generic plan, the array a parameter
SET plan_cache_mode = force_generic_plan;
PREPARE bc_codes(bigint[]) AS
    SELECT id FROM bc WHERE sh OPERATOR(neardup_internal.=) ANY ($1);
EXPLAIN (COSTS OFF) EXECUTE bc_codes('{1}');
SELECT codes AS bc_codes FROM bc_ask \gset
CREATE TEMP TABLE bc_generic AS EXECUTE bc_codes(:'bc_codes');
SELECT (SELECT string_agg(id::text, ',' ORDER BY id) FROM bc_generic) = s.ids AS same_rows_generic
FROM bc_by_seqscan s;
DEALLOCATE bc_codes;
RESET enable_seqscan;
RESET plan_cache_mode;

-- the plan counts one search per element: the index scan of 40 codes
-- costs more than 10 times that of 2
CREATE FUNCTION pg_temp.bc_index_cost(n int) RETURNS numeric
LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE format('EXPLAIN (FORMAT JSON) SELECT id FROM bc WHERE sh OPERATOR(neardup_internal.=) ANY (%L::bigint[])',
                   (SELECT array_agg(i::bigint) FROM generate_series(1, n) i)) INTO plan;
    IF plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Node Type' <> 'Bitmap Index Scan' THEN
        RAISE EXCEPTION 'no bitmap index scan: %', plan;
    END IF;
    RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Total Cost')::numeric;
END $$;
SELECT pg_temp.bc_index_cost(40) > 10 * pg_temp.bc_index_cost(2) AS cost_per_code;
-- an array of balls: each searched to its radius, priced at the largest
CREATE FUNCTION pg_temp.bc_balls_cost(r int) RETURNS numeric
LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE format('EXPLAIN (FORMAT JSON) SELECT id FROM bc WHERE sh <@ ANY (ARRAY[hamming_ball(''%s'', 1), hamming_ball(''%s'', %s)])',
                   (SELECT sh FROM bc WHERE id = 5), (SELECT sh FROM bc WHERE id = 6), r) INTO plan;
    RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Total Cost')::numeric;
END $$;
SET enable_seqscan = off;
SELECT pg_temp.bc_balls_cost(1) < pg_temp.bc_balls_cost(3) AND pg_temp.bc_balls_cost(3) < pg_temp.bc_balls_cost(6) AS cost_by_radius;
RESET enable_seqscan;

-- off the search path: no simhash64 = bigint for a user's query
SELECT nd_test.try($$SELECT count(*) FROM bc WHERE sh = 5$$);
SELECT nd_test.try($$SELECT count(*) FROM bc WHERE sh = 5::bigint$$);

DROP TABLE bc, bc_x;
