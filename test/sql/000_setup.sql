-- The helpers that several suites call, created once in the schema nd_test
-- of the regression database.  pg_regress runs every suite in a session
-- of its own in that one database, so a pg_temp helper would have to be
-- created again by each suite; this suite runs first in every run, also
-- of a single suite (the Makefile puts it before the suites named).
CREATE SCHEMA nd_test;
-- suites call them under other roles too
GRANT USAGE ON SCHEMA nd_test TO PUBLIC;

-- Runs a statement: 'ok' (with_value: 'ok: ' and the value of a query of
-- one value, 'NULL' for none), or the error's SQLSTATE and message (and
-- with_detail its DETAIL after ' | ', when it has one).
CREATE FUNCTION nd_test.try(stmt text, with_value bool DEFAULT false, with_detail bool DEFAULT false)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r text;
    det text;
BEGIN
    IF with_value THEN
        EXECUTE stmt INTO r;
        RETURN 'ok: ' || coalesce(r, 'NULL');
    END IF;
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS det = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || SQLERRM
        || CASE WHEN with_detail AND det <> '' THEN ' | ' || det ELSE '' END;
END
$$;

-- The value of a query of one value, after checking that its plan reads
-- the index named (use_index) or does not; an error if it does otherwise.
CREATE FUNCTION nd_test.answer(use_index bool, index_name text, sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    plan text := '';
    line text;
    result text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP
        plan := plan || line || E'\n';
    END LOOP;
    IF (strpos(plan, index_name) > 0) <> use_index THEN
        RAISE EXCEPTION 'unexpected plan for %: %', sql, plan;
    END IF;
    EXECUTE sql INTO result;
    RETURN result;
END $$;

-- The top node of a query's plan as an index scan would run it (no
-- sequential or bitmap scan): executed when `execute`, for its buffers.
CREATE FUNCTION nd_test.index_plan(sql text, execute bool) RETURNS json
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE CASE WHEN execute THEN 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) '
                 ELSE 'EXPLAIN (FORMAT JSON) ' END || sql INTO plan;
    RETURN plan -> 0 -> 'Plan';
END $$;

-- The shared buffers such a scan reads, and its estimated total cost.
CREATE FUNCTION nd_test.index_pages(sql text) RETURNS int
LANGUAGE sql AS $$
    SELECT (p ->> 'Shared Hit Blocks')::int + (p ->> 'Shared Read Blocks')::int
    FROM nd_test.index_plan(sql, true) p
$$;
CREATE FUNCTION nd_test.index_cost(sql text) RETURNS numeric
LANGUAGE sql AS $$
    SELECT (nd_test.index_plan(sql, false) ->> 'Total Cost')::numeric
$$;

-- Every answer of a table tbl (id int, sh simhash64) for each code q of
-- query_table (qid int, q simhash64), through its hamming index index_name
-- (use_index: the plan must use it) or without it (the plan must not):
-- the ids within radius -1..12 (as a bitmap scan and as a plain index
-- scan), and 64 (every non-null row: count and checksums); the distances
-- of the 10 and 60 nearest, in the order returned (which rows of one
-- distance come first is not defined, so ids are not compared); the same
-- through an index-only scan, and the codes within 4 bits; the 20 nearest
-- within 6 bits; the 15 nearest among rows with id % 7 = 0 (the scan goes
-- on until it has them); equality.
CREATE FUNCTION nd_test.hamming_answers(use_index bool, tbl text, query_table text, index_name text)
RETURNS TABLE (what text, qid int, r int, rows int, answer text)
LANGUAGE plpgsql AS $$
DECLARE
    q record;
    rad int;
    kind text;
BEGIN
    PERFORM set_config('enable_seqscan', (NOT use_index)::text, true);
    FOR q IN EXECUTE format('SELECT * FROM %I ORDER BY qid', query_table) LOOP
        qid := q.qid;
        FOREACH kind IN ARRAY ARRAY['bitmap', 'plain'] LOOP
            PERFORM set_config('enable_indexscan', (use_index AND kind = 'plain')::text, true);
            PERFORM set_config('enable_bitmapscan', (use_index AND kind = 'bitmap')::text, true);
            FOREACH rad IN ARRAY ARRAY[-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 64] LOOP
                what := 'radius ' || kind;
                r := rad;
                answer := nd_test.answer(use_index, index_name, format(
                    'SELECT format(''%%s:%%s:%%s'', count(*), sum(id), bit_xor(hashint4(id))) FROM %I WHERE sh <~> %L <= %s',
                    tbl, q.q, rad));
                rows := split_part(answer, ':', 1)::int;
                RETURN NEXT;
            END LOOP;
        END LOOP;
        PERFORM set_config('enable_indexscan', use_index::text, true);
        PERFORM set_config('enable_bitmapscan', use_index::text, true);
        r := NULL;
        what := 'knn 10';
        answer := nd_test.answer(use_index, index_name, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> %L AS d FROM %I ORDER BY sh <~> %L LIMIT 10) s',
            q.q, tbl, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        -- the distances computed from the codes the index gives back
        what := 'knn 10 index-only';
        answer := nd_test.answer(use_index, index_name, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT sh <~> %L AS d FROM %I ORDER BY sh <~> %L LIMIT 10) s',
            q.q, tbl, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        what := 'radius 4 codes';
        answer := nd_test.answer(use_index, index_name, format(
            'SELECT string_agg(sh::text, '','' ORDER BY sh) FROM %I WHERE sh <~> %L <= 4',
            tbl, q.q));
        rows := coalesce(array_length(string_to_array(answer, ','), 1), 0);
        RETURN NEXT;
        what := 'knn 60';
        answer := nd_test.answer(use_index, index_name, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> %L AS d FROM %I ORDER BY sh <~> %L LIMIT 60) s',
            q.q, tbl, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        what := 'knn 20 within 6';
        answer := nd_test.answer(use_index, index_name, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> %L AS d FROM %I WHERE sh <~> %L <= 6 ORDER BY sh <~> %L LIMIT 20) s',
            q.q, tbl, q.q, q.q));
        rows := coalesce(array_length(string_to_array(answer, ','), 1), 0);
        RETURN NEXT;
        what := 'knn 15 filtered';
        answer := nd_test.answer(use_index, index_name, format(
            'SELECT string_agg(d::text, '','') FROM (SELECT id, sh <~> %L AS d FROM %I WHERE id %% 7 = 0 ORDER BY sh <~> %L LIMIT 15) s',
            q.q, tbl, q.q));
        rows := array_length(string_to_array(answer, ','), 1);
        RETURN NEXT;
        what := 'equality';
        answer := nd_test.answer(use_index, index_name, format(
            'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM %I WHERE sh = %L', tbl, q.q));
        rows := split_part(answer, ':', 1)::int;
        RETURN NEXT;
    END LOOP;
END $$;

-- hamming_answers through the index against a sequential scan: one line
-- per kind of query, with how many of the queries agree.
CREATE FUNCTION nd_test.hamming_compare(tbl text, query_table text, index_name text)
RETURNS TABLE (what text, queries bigint, rows bigint, agree bigint)
LANGUAGE sql AS $$
    WITH i AS (SELECT * FROM nd_test.hamming_answers(true, tbl, query_table, index_name)),
         s AS (SELECT * FROM nd_test.hamming_answers(false, tbl, query_table, index_name))
    SELECT i.what, count(*), sum(i.rows), count(*) FILTER (WHERE i.answer IS NOT DISTINCT FROM s.answer)
    FROM i JOIN s ON s.what = i.what AND s.qid = i.qid AND s.r IS NOT DISTINCT FROM i.r
    GROUP BY i.what ORDER BY i.what
$$;
