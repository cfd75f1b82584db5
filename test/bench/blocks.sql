-- Blocks per run (issue 43 item 1): hamming indexes of `blocks` 3, 4, 5
-- (or the list given) on the same rows, side by side in one run: build
-- time, bytes per row, radius 3 and KNN 10 latency (p50, p99, planning
-- included), shared buffers per query, and every answer against a
-- sequential scan's.  test/bench/run_blocks.sh runs it in a throwaway
-- cluster.
--
-- psql variables: rows (default 1000000), blocks (default '3 4 5'), nq
-- (timed queries per kind, default 300), nseq (of them, the ones checked
-- against a sequential scan, default 40), nbuf (of them, the ones run under
-- EXPLAIN (ANALYZE, BUFFERS), default 50), builds (builds of each index,
-- interleaved, default 2; the last one is kept).
--
-- Data: `rows` random codes ('x' || md5('row ' || i))::bit(64)::bigint
-- and rows/100 planted near copies, each 1..3 distinct bits from a random
-- row.  The table holds the code once per index, in columns sh_3, sh_4,
-- ... (the same value in each): every index is on its own column, so all
-- of them exist at once (their query rounds interleave) while sharing one
-- heap -- the same pages, tuples and visibility -- so that only the index
-- differs between them.  Queries: 'planted' = the code of a row that has a
-- planted copy; 'random' = ('x' || md5('query ' || i)), a fresh code with
-- nothing within 3 bits (its nearest neighbours are 10+ bits away).
--
-- Rounds: query i of a kind runs on every index in turn, the order rotated
-- from one query to the next, so that drift in the machine's load (2
-- shared cores) reaches every index alike.  Ratios are against 4 blocks (or
-- the first of `blocks` if 4 is not in it); x_paired is the median over
-- queries of that query's time on the index over its time on the base.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET jit = off;
CREATE EXTENSION IF NOT EXISTS neardup;

\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?blocks}
\else
\set blocks '3 4 5'
\endif
\if :{?nq}
\else
\set nq 300
\endif
\if :{?nseq}
\else
\set nseq 40
\endif
\if :{?nbuf}
\else
\set nbuf 50
\endif
\if :{?builds}
\else
\set builds 2
\endif

CREATE FUNCTION pg_temp.say(msg text) RETURNS text LANGUAGE sql AS $$
    SELECT format('[%s] %s', to_char(clock_timestamp(), 'HH24:MI:SS'), msg)
$$;
\pset tuples_only on
\pset format unaligned

CREATE TEMP TABLE bl AS
SELECT b::int AS b, ord::int AS ord FROM unnest(string_to_array(trim(:'blocks'), ' ')) WITH ORDINALITY u(b, ord)
WHERE b <> '';
SELECT CASE WHEN EXISTS (SELECT FROM bl WHERE b = 4) THEN 4 ELSE (SELECT b FROM bl ORDER BY ord LIMIT 1) END AS base \gset
SELECT count(*) AS nbl FROM bl \gset

\echo 'Settings:'
SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name)
FROM pg_settings
WHERE name IN ('shared_buffers', 'maintenance_work_mem', 'work_mem', 'max_parallel_workers_per_gather',
               'max_wal_size', 'autovacuum', 'jit', 'fsync', 'effective_cache_size');
SELECT 'server: ' || version();
SELECT format('rows=%s blocks=%s (base %s) nq=%s nseq=%s nbuf=%s builds=%s', :'rows', :'blocks', :'base',
              :'nq', :'nseq', :'nbuf', :'builds');

-- Flip d distinct bits of c (bits chosen from seed).
CREATE FUNCTION pg_temp.flip(c bigint, d int, seed bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT c # (SELECT bit_or(1::bigint << b)
                FROM (SELECT b FROM generate_series(0, 63) b
                      ORDER BY hashint8extended(seed * 64 + b, 3) LIMIT d) s)
$$;

-- ===== the table =====
SELECT pg_temp.say(format('loading %s rows + %s planted near copies', :'rows', :rows / 100));
SELECT format('CREATE TABLE doc (id int, %s)', string_agg(format('sh_%s simhash64', b), ', ' ORDER BY ord))
FROM bl \gexec
CREATE TEMP TABLE planted AS
SELECT k, 1 + ((hashint8extended(k, 11) & x'7fffffffffff'::bigint) % :rows)::int AS o
FROM generate_series(1, :rows / 100) k;
SELECT format('INSERT INTO doc SELECT i, %s FROM (SELECT i, (''x'' || md5(''row '' || i))::bit(64)::bigint::simhash64 AS c FROM generate_series(1, %s) i) s',
              string_agg('c', ', ' ORDER BY ord), :rows)
FROM bl \gexec
SELECT format('INSERT INTO doc SELECT %s + k, %s FROM (SELECT k, pg_temp.flip((''x'' || md5(''row '' || o))::bit(64)::bigint, 1 + k %% 3, k)::simhash64 AS c FROM planted) s',
              :rows, string_agg('c', ', ' ORDER BY ord))
FROM bl \gexec
VACUUM ANALYZE doc;
SELECT count(*) AS total_rows FROM doc \gset
SELECT pg_temp.say(format('%s rows, heap %s', :total_rows, pg_size_pretty(pg_relation_size('doc'))));

-- ===== builds: round r builds every index in turn (dropping the one of
-- the round before); the last round's stay =====
CREATE TEMP TABLE builds (b int, round int, s float8, bytes bigint);
CREATE FUNCTION pg_temp.build(b int, round int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    s float8;
BEGIN
    EXECUTE format('DROP INDEX IF EXISTS doc_b%s', b);
    t0 := clock_timestamp();
    EXECUTE format('CREATE INDEX doc_b%1$s ON doc USING hamming (sh_%1$s) WITH (blocks = %1$s)', b);
    s := extract(epoch FROM clock_timestamp() - t0);
    INSERT INTO builds VALUES (b, round, s, pg_relation_size(format('doc_b%s', b)::regclass));
    RETURN pg_temp.say(format('  build %s, %s blocks: %s s', round, b, round(s::numeric, 2)));
END $$;
SELECT format('SELECT pg_temp.build(%s, %s)', b, r)
FROM generate_series(1, :builds) r, bl
ORDER BY r, (ord + r) % :nbl \gexec
SELECT pg_temp.say('CHECKPOINT; VACUUM ANALYZE') \g
CHECKPOINT;
VACUUM ANALYZE doc;
\pset tuples_only off
\pset format aligned
\echo 'Runs (hamming_runs: a fresh build has one):'
SELECT b, r.* FROM bl, hamming_runs(format('doc_b%s', b)::regclass) r ORDER BY b;
\pset tuples_only on
\pset format unaligned

-- ===== queries =====
CREATE TEMP TABLE qs AS
SELECT 'planted' AS kind, k AS qid, ('x' || md5('row ' || o))::bit(64)::bigint::simhash64 AS q
FROM planted WHERE k <= :nq
UNION ALL
SELECT 'random', i, ('x' || md5('query ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, :nq) i;

-- A radius answer is its sorted id list; a KNN answer its sorted distance
-- list (ties compare equal whichever tied rows a path returns).  %1$s is
-- the column, %2$L the query code.
CREATE TEMP TABLE cases (ord int, what text, kind text, sql text);
INSERT INTO cases VALUES
  (1, 'radius3', 'planted', 'SELECT coalesce(string_agg(id::text, '','' ORDER BY id), '''') FROM doc WHERE %1$s <~> %2$L <= 3'),
  (2, 'radius3', 'random', 'SELECT coalesce(string_agg(id::text, '','' ORDER BY id), '''') FROM doc WHERE %1$s <~> %2$L <= 3'),
  (3, 'knn10', 'random', 'SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT %1$s <~> %2$L AS d FROM doc ORDER BY %1$s <~> %2$L LIMIT 10) s'),
  (4, 'knn10', 'planted', 'SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT %1$s <~> %2$L AS d FROM doc ORDER BY %1$s <~> %2$L LIMIT 10) s');

CREATE FUNCTION pg_temp.use(path text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_indexscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_indexonlyscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_bitmapscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_seqscan', (path = 'seq scan')::text, false);
END $$;

\echo 'Plans (first random query):'
SELECT pg_temp.use('index') \g /dev/null
SELECT format('EXPLAIN (COSTS OFF) ' || c.sql, 'sh_' || bl.b, q.q)
FROM cases c, bl, qs q WHERE c.kind = 'random' AND q.kind = 'random' AND q.qid = 1 ORDER BY c.ord, bl.ord \gexec

CREATE TEMP TABLE timing (b int, what text, kind text, qid int, ms float8, result text);
CREATE TEMP TABLE exact (what text, kind text, qid int, result text);
CREATE TEMP TABLE bufs (b int, what text, kind text, qid int, total bigint);

-- One warm-up query of each case on every index, then query i of each
-- case on every index in turn, the order rotated by i.
CREATE FUNCTION pg_temp.rounds(nq int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    c record;
    r record;
    x record;
    t0 timestamptz;
    res text;
BEGIN
    PERFORM pg_temp.use('index');
    FOR c IN SELECT * FROM cases ORDER BY ord LOOP
        FOR x IN SELECT b FROM bl ORDER BY ord LOOP
            EXECUTE format(c.sql, 'sh_' || x.b, (SELECT q FROM qs WHERE kind = c.kind AND qid = 1)) INTO res;
        END LOOP;
    END LOOP;
    FOR r IN SELECT * FROM qs WHERE qid <= nq ORDER BY qid, kind LOOP
        FOR c IN SELECT * FROM cases WHERE kind = r.kind ORDER BY ord LOOP
            FOR x IN SELECT b FROM bl ORDER BY (ord + r.qid) % (SELECT count(*) FROM bl) LOOP
                t0 := clock_timestamp();
                EXECUTE format(c.sql, 'sh_' || x.b, r.q) INTO res;
                INSERT INTO timing VALUES (x.b, c.what, c.kind, r.qid,
                                           extract(epoch FROM clock_timestamp() - t0) * 1000, res);
            END LOOP;
        END LOOP;
    END LOOP;
END $$;

-- The same for EXPLAIN (ANALYZE, BUFFERS): shared buffers (hit + read) of
-- the whole query.  Radius 3 is an Index Scan, whose buffers include the
-- heap pages of its answer rows (the same rows whichever index finds
-- them); KNN is an Index Only Scan of an all-visible table (VACUUMed after
-- the builds): its buffers are the index's.
CREATE FUNCTION pg_temp.buffers(nq int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    c record;
    r record;
    x record;
    p jsonb;
BEGIN
    PERFORM pg_temp.use('index');
    FOR r IN SELECT * FROM qs WHERE qid <= nq ORDER BY qid, kind LOOP
        FOR c IN SELECT * FROM cases WHERE kind = r.kind ORDER BY ord LOOP
            FOR x IN SELECT b FROM bl ORDER BY (ord + r.qid) % (SELECT count(*) FROM bl) LOOP
                EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ' || format(c.sql, 'sh_' || x.b, r.q) INTO p;
                INSERT INTO bufs VALUES (x.b, c.what, c.kind, r.qid,
                    (p -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint + (p -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint);
            END LOOP;
        END LOOP;
    END LOOP;
END $$;

-- The exact answers: a sequential scan (parallel, as planned) of the
-- first column.
CREATE FUNCTION pg_temp.exact(nq int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    c record;
    r record;
    res text;
BEGIN
    PERFORM pg_temp.use('seq scan');
    FOR r IN SELECT * FROM qs WHERE qid <= nq ORDER BY qid, kind LOOP
        FOR c IN SELECT * FROM cases WHERE kind = r.kind ORDER BY ord LOOP
            EXECUTE format(c.sql, 'sh_' || (SELECT b FROM bl ORDER BY ord LIMIT 1), r.q) INTO res;
            INSERT INTO exact VALUES (c.what, c.kind, r.qid, res);
        END LOOP;
    END LOOP;
END $$;

SELECT pg_temp.say(format('timed rounds: %s queries x 4 cases x %s indexes', :nq, :nbl));
SELECT pg_temp.rounds(:nq) \g /dev/null
SELECT pg_temp.say(format('EXPLAIN (ANALYZE, BUFFERS) rounds: %s queries x 4 cases x %s indexes', :nbuf, :nbl));
SELECT pg_temp.buffers(:nbuf) \g /dev/null
SELECT pg_temp.say(format('sequential scan: %s queries x 4 cases', :nseq));
SELECT pg_temp.exact(:nseq) \g /dev/null
RESET enable_indexscan; RESET enable_indexonlyscan; RESET enable_bitmapscan; RESET enable_seqscan;
SELECT pg_temp.say('done');

\echo
\echo '==================== summary ===================='
SELECT format('%s rows (%s random + %s planted near copies); hamming indexes with blocks %s; ratios against %s blocks',
              :total_rows, :rows, :rows / 100, :'blocks', :base);
\pset tuples_only off
\pset format aligned
\echo 'Builds (mean of the rounds; maintenance_work_mem as in Settings) and size:'
WITH s AS (SELECT b, avg(s) AS s, min(s) AS smin, max(s) AS smax,
                  (array_agg(bytes ORDER BY round DESC))[1] AS bytes FROM builds GROUP BY b)
SELECT s.b AS blocks, round(s.s::numeric, 2) AS build_s,
       round(s.smin::numeric, 2) || '..' || round(s.smax::numeric, 2) AS build_range,
       round((s.s / base.s)::numeric, 2) AS x_build,
       pg_size_pretty(s.bytes) AS size, round(s.bytes::numeric / :total_rows, 1) AS bytes_per_row,
       round((s.bytes::numeric / base.bytes), 2) AS x_size
FROM s, s base WHERE base.b = :base ORDER BY s.b;

\echo 'Latency in ms (planning included); x_p50, x_p99: against the base index''s;'
\echo 'x_paired: median over queries of (this index / the base index), same query;'
\echo 'bufs: shared buffers per query (mean; hit + read; radius: with the heap pages of the answer rows);'
\echo 'rows: mean answer rows (radius):'
WITH t AS (SELECT b, what, kind, count(*) AS n,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
                  percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99,
                  avg(CASE WHEN what = 'radius3' THEN coalesce(cardinality(string_to_array(nullif(result, ''), ',')), 0) END) AS rows_
           FROM timing GROUP BY b, what, kind),
     p AS (SELECT t.b, t.what, t.kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms / nullif(z.ms, 0)) AS paired
           FROM timing t JOIN timing z ON z.b = :base AND (z.what, z.kind, z.qid) = (t.what, t.kind, t.qid)
           GROUP BY t.b, t.what, t.kind),
     u AS (SELECT b, what, kind, avg(total) AS total FROM bufs GROUP BY b, what, kind)
SELECT c.what, c.kind, t.b AS blocks, t.n, round(t.p50::numeric, 3) AS p50_ms, round(t.p99::numeric, 3) AS p99_ms,
       round((t.p50 / z.p50)::numeric, 2) AS x_p50, round((t.p99 / z.p99)::numeric, 2) AS x_p99,
       round(p.paired::numeric, 2) AS x_paired,
       round(u.total::numeric, 1) AS bufs, round((u.total / nullif(uz.total, 0))::numeric, 2) AS x_bufs,
       round(t.rows_::numeric, 2) AS rows
FROM cases c JOIN t USING (what, kind)
JOIN t z ON z.b = :base AND (z.what, z.kind) = (t.what, t.kind)
JOIN p ON (p.b, p.what, p.kind) = (t.b, t.what, t.kind)
LEFT JOIN u ON (u.b, u.what, u.kind) = (t.b, t.what, t.kind)
LEFT JOIN u uz ON uz.b = :base AND (uz.what, uz.kind) = (t.what, t.kind)
ORDER BY c.ord, t.b;

\echo 'Exactness: checked = queries whose index answer was compared with the sequential scan''s;'
\echo 'mismatch must be 0; disagree = queries (of all timed ones) whose answer differs from the base index''s:'
SELECT c.what, c.kind, t.b AS blocks,
       count(e.result) AS checked,
       count(*) FILTER (WHERE e.qid IS NOT NULL AND t.result IS DISTINCT FROM e.result) AS mismatch,
       count(*) FILTER (WHERE t.result IS DISTINCT FROM z.result) AS disagree
FROM cases c JOIN timing t USING (what, kind)
JOIN timing z ON z.b = :base AND (z.what, z.kind, z.qid) = (t.what, t.kind, t.qid)
LEFT JOIN exact e ON (e.what, e.kind, e.qid) = (t.what, t.kind, t.qid)
GROUP BY c.ord, c.what, c.kind, t.b ORDER BY c.ord, t.b;

\echo 'Mismatched queries (index answer / sequential scan answer), if any:'
SELECT t.b AS blocks, t.what, t.kind, t.qid, left(t.result, 60) AS index_answer, left(e.result, 60) AS seq_answer
FROM timing t JOIN exact e USING (what, kind, qid)
WHERE t.result IS DISTINCT FROM e.result ORDER BY 1, 2, 3, 4;
DROP TABLE doc;
