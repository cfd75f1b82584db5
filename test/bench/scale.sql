-- One hamming index at crawl scale (issue 32): CREATE INDEX at default
-- options on `rows` random codes + 20,000 planted near-copies, its size,
-- its build time against `small_builds` builds at `small` rows, and exact
-- radius / KNN latency against a parallel sequential scan of the same
-- queries, all measured in this run.  test/bench/run_scale.sh runs it in a
-- throwaway cluster.
--
-- psql variables: rows (default 200000000), small (default 20000000),
-- small_builds (default 10), nq (queries per kind, default 200), nseq
-- (seq-scan samples per kind, default 5), check (1: hamming_check(index,
-- false) on the big index; default 0), profile (1: keep the big table
-- at the end, for run_scale.sh's PROFILE phase; default 0).  small_builds
-- 0 skips the small table and its builds (no linear baseline).
--
-- Data: codes hashint8extended(i, 7)::simhash64 for i in 1..rows (as the
-- 100M measurement of 0.2 was loaded, shared notes), 4 INSERT statements;
-- then 20,000 planted near-copies, each 1..3 bits (distinct bits) from a
-- random row.  Queries: 'planted' = the code of a row that has a planted
-- copy; 'random' = hashint8extended(i, 99), a fresh code (its nearest
-- neighbours are some 12+ bits away at this size: radius 3 finds nothing,
-- which the counts below show).
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET jit = off;
CREATE EXTENSION IF NOT EXISTS neardup;
CREATE EXTENSION IF NOT EXISTS pageinspect;

\if :{?rows}
\else
\set rows 200000000
\endif
\if :{?small}
\else
\set small 20000000
\endif
\if :{?small_builds}
\else
\set small_builds 10
\endif
\if :{?nq}
\else
\set nq 200
\endif
\if :{?nseq}
\else
\set nseq 5
\endif
\if :{?check}
\else
\set check 0
\endif
\if :{?profile}
\else
\set profile 0
\endif
\set nplanted 20000
SELECT :small_builds > 0 AS do_small \gset

CREATE FUNCTION pg_temp.say(msg text) RETURNS text LANGUAGE sql AS $$
    SELECT format('[%s] %s', to_char(clock_timestamp(), 'HH24:MI:SS'), msg)
$$;
\pset tuples_only on
\pset format unaligned
\pset fieldsep '\n'

-- Figures, printed as they come (a run stopped half way still has them in
-- its log) and again in the summary.
CREATE TEMP TABLE fig (ord serial, what text, value text);
CREATE FUNCTION pg_temp.fig(what text, value text) RETURNS text LANGUAGE sql AS $$
    INSERT INTO fig (what, value) VALUES (what, value);
    SELECT format('[%s]   %s: %s', to_char(clock_timestamp(), 'HH24:MI:SS'), what, value);
$$;

\echo 'Settings:'
SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name)
FROM pg_settings
WHERE name IN ('shared_buffers', 'maintenance_work_mem', 'work_mem', 'max_parallel_workers_per_gather',
               'max_parallel_workers', 'max_worker_processes', 'max_wal_size', 'checkpoint_timeout',
               'autovacuum', 'jit', 'wal_level', 'synchronous_commit', 'effective_cache_size', 'fsync');
SELECT 'server: ' || version();
SELECT format('rows=%s small=%s small_builds=%s nq=%s nseq=%s check=%s', :'rows', :'small',
              :'small_builds', :'nq', :'nseq', :'check');

-- Flip d distinct bits of c (bits chosen from seed).
CREATE FUNCTION pg_temp.flip(c bigint, d int, seed bigint) RETURNS simhash64
LANGUAGE sql IMMUTABLE AS $$
    SELECT (c # (SELECT bit_or(1::bigint << b)
                 FROM (SELECT b FROM generate_series(0, 63) b
                       ORDER BY hashint8extended(seed * 64 + b, 3) LIMIT d) s))::simhash64
$$;

CREATE FUNCTION pg_temp.build(tbl text, idx text, OUT s float8, OUT bytes bigint)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE format('CREATE INDEX %I ON %I USING hamming (sh)', idx, tbl);
    s := extract(epoch FROM clock_timestamp() - t0);
    bytes := pg_relation_size(idx::regclass);
END $$;
CREATE TEMP TABLE small_build (n int, s float8, bytes bigint);

-- ===== the big table =====
SELECT pg_temp.say(format('loading %s rows (4 INSERT statements)', :'rows'));
SELECT clock_timestamp() AS t_load \gset
DROP TABLE IF EXISTS doc;
CREATE TABLE doc (id int, sh simhash64);
SELECT format('INSERT INTO doc SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(%s, %s) i',
              (:rows::bigint * p) / 4 + 1, (:rows::bigint * (p + 1)) / 4)
FROM generate_series(0, 3) p \gexec
-- Planted: copy k of row o(k) at 1 + k % 3 bits.
CREATE TEMP TABLE planted AS
SELECT k, 1 + ((hashint8extended(k, 11) & x'7fffffffffff'::bigint) % :rows)::int AS o
FROM generate_series(1, :nplanted) k;
INSERT INTO doc
SELECT :rows + k, pg_temp.flip(hashint8extended(o, 7), 1 + k % 3, k) FROM planted;
SELECT pg_temp.fig('load (s)', round(extract(epoch FROM clock_timestamp() - :'t_load'::timestamptz)::numeric, 1)::text);
SELECT pg_temp.say('VACUUM ANALYZE');
SELECT clock_timestamp() AS t_vac \gset
VACUUM ANALYZE doc;
SELECT count(*) AS total_rows FROM doc \gset
SELECT pg_temp.fig('rows in doc', :'total_rows'),
       pg_temp.fig('heap size', pg_size_pretty(pg_relation_size('doc'))),
       pg_temp.fig('vacuum analyze (s)', round(extract(epoch FROM clock_timestamp() - :'t_vac'::timestamptz)::numeric, 1)::text);

SELECT pg_temp.say('CREATE INDEX doc_ham ON doc USING hamming (sh) -- default options');
SELECT s AS big_s, bytes AS big_bytes FROM pg_temp.build('doc', 'doc_ham') \gset
SELECT pg_temp.fig('CREATE INDEX (s)', round(:big_s::numeric, 1)::text),
       pg_temp.fig('index size', pg_size_pretty(:big_bytes::bigint) || ' (' || :big_bytes || ' bytes)'),
       pg_temp.fig('index bytes/row', round((:big_bytes::numeric / :total_rows), 1)::text);
\pset tuples_only off
\pset format aligned
\echo 'hamming_stats(doc_ham):'
SELECT * FROM hamming_stats('doc_ham');
\pset tuples_only on
\pset format unaligned
\pset fieldsep '\n'

-- The run's directory layout, read from the pages (pageinspect): the
-- metapage's run_header (HamMetaPageData at byte 24, run_header at +16),
-- the header's dir_levels (HamRunHeader at byte 24, dir_levels at +4: 0
-- flat, 2 indexed), per table ndir (tables[] at +16, 12 bytes each, ndir
-- at +4), and the page kind (HamPageOpaqueData.kind at pd_special + 8) of
-- the first page the header lists for table 0 (dirs[] at +116, 8 bytes
-- each, blkno at +4): 7 = HAM_KIND_RUN_DIR_INDEX, 3 = a directory page.
CREATE FUNCTION pg_temp.u32(p bytea, off int) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT get_byte(p, off)::bigint | (get_byte(p, off + 1)::bigint << 8)
         | (get_byte(p, off + 2)::bigint << 16) | (get_byte(p, off + 3)::bigint << 24)
$$;
CREATE FUNCTION pg_temp.u16(p bytea, off int) RETURNS int LANGUAGE sql IMMUTABLE AS $$
    SELECT get_byte(p, off) | (get_byte(p, off + 1) << 8)
$$;
SELECT pg_temp.u32(get_raw_page('doc_ham', 0), 24 + 16) AS hdr_blk \gset
SELECT pg_temp.u32(h, 24 + 4) AS dir_levels,
       pg_temp.u32(h, 24 + 0) AS hdr_nblocks,
       (SELECT string_agg(pg_temp.u32(h, 24 + 16 + 12 * t + 4)::text, ',' ORDER BY t)
        FROM generate_series(0, pg_temp.u32(h, 24)::int - 1) t) AS hdr_ndir,
       pg_temp.u32(h, 24 + 116 + 8 * pg_temp.u32(h, 24 + 16 + 8)::int + 4) AS first_listed
FROM get_raw_page('doc_ham', :hdr_blk) h \gset
SELECT pg_temp.u16(p, pg_temp.u16(p, 16) + 8) AS first_kind FROM get_raw_page('doc_ham', :first_listed) p \gset
SELECT pg_temp.fig('run layout',
                   format('dir_levels=%s (%s), header lists per table %s pages, the first of kind %s (%s); rows x blocks = %s entries (0.2''s flat limit ~596M)',
                          :dir_levels, CASE :dir_levels WHEN 2 THEN 'two-level' WHEN 0 THEN 'flat' ELSE '?' END,
                          :'hdr_ndir', :first_kind,
                          CASE :first_kind WHEN 7 THEN 'HAM_KIND_RUN_DIR_INDEX' WHEN 3 THEN 'HAM_KIND_RUN_DIR' ELSE '?' END,
                          :total_rows::bigint * :hdr_nblocks));

\if :check
SELECT pg_temp.say('hamming_check(doc_ham, false)');
SELECT clock_timestamp() AS t_chk \gset
SELECT hamming_check('doc_ham', false);
SELECT pg_temp.fig('hamming_check(doc_ham, false)',
                   'ok in ' || round(extract(epoch FROM clock_timestamp() - :'t_chk'::timestamptz)::numeric, 1) || ' s');
\endif

-- ===== queries =====
CREATE TEMP TABLE qs AS
SELECT 'planted' AS kind, k AS qid, hashint8extended(o, 7)::simhash64 AS q FROM planted WHERE k <= :nq
UNION ALL
SELECT 'random', i, hashint8extended(i, 99)::simhash64 FROM generate_series(1, :nq) i;

-- A radius answer is its sorted id list; a KNN answer its sorted distance
-- list (ties compare equal whichever tied rows a path returns).
CREATE TEMP TABLE workload (what text, sql text);
INSERT INTO workload VALUES
  ('radius3', 'SELECT coalesce(string_agg(id::text, '','' ORDER BY id), '''') FROM doc WHERE sh <~> %L <= 3'),
  ('knn10', 'SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT sh <~> %L AS d FROM doc ORDER BY sh <~> %L LIMIT 10) s'),
  ('knn100', 'SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT sh <~> %L AS d FROM doc ORDER BY sh <~> %L LIMIT 100) s');
CREATE TEMP TABLE timing (path text, what text, kind text, qid int, ms float8, result text);

CREATE FUNCTION pg_temp.use(path text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_indexscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_indexonlyscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_bitmapscan', (path <> 'seq scan')::text, false);
    PERFORM set_config('enable_seqscan', (path = 'seq scan')::text, false);
END $$;

-- Each query once, planning included (after one warm-up of the first).
CREATE FUNCTION pg_temp.run(path text, n int, what_ text, kind_ text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    w record;
    r record;
    t0 timestamptz;
    res text;
BEGIN
    PERFORM pg_temp.use(path);
    SELECT * INTO w FROM workload WHERE what = what_;
    SELECT * INTO r FROM qs WHERE kind = kind_ AND qid = 1;
    EXECUTE format(w.sql, r.q, r.q) INTO res;
    FOR r IN SELECT * FROM qs WHERE kind = kind_ AND qid <= n ORDER BY qid LOOP
        t0 := clock_timestamp();
        EXECUTE format(w.sql, r.q, r.q) INTO res;
        INSERT INTO timing VALUES (path, what_, kind_, r.qid,
                                   extract(epoch FROM clock_timestamp() - t0) * 1000, res);
    END LOOP;
    RESET enable_indexscan; RESET enable_indexonlyscan; RESET enable_bitmapscan; RESET enable_seqscan;
END $$;

CREATE TEMP TABLE cases (ord int, what text, kind text);
INSERT INTO cases VALUES (1, 'radius3', 'planted'), (2, 'radius3', 'random'),
                         (3, 'knn10', 'random'), (4, 'knn10', 'planted'),
                         (5, 'knn100', 'random');

\echo 'Plans (the index path, and the seq scan baseline):'
SELECT pg_temp.use('hamming') \g /dev/null
SELECT format('EXPLAIN (COSTS OFF) ' || w.sql, q.q, q.q)
FROM workload w, qs q WHERE q.kind = 'random' AND q.qid = 1 ORDER BY w.what DESC \gexec
SELECT pg_temp.use('seq scan') \g /dev/null
SELECT format('EXPLAIN (COSTS OFF) ' || w.sql, q.q, q.q)
FROM workload w, qs q WHERE q.kind = 'random' AND q.qid = 1 ORDER BY w.what DESC \gexec
RESET enable_indexscan; RESET enable_indexonlyscan; RESET enable_bitmapscan; RESET enable_seqscan;

SELECT format($q$SELECT pg_temp.say('index: %s %s x %s')$q$, what, kind, :nq),
       format($q$DO $d$BEGIN PERFORM pg_temp.run('hamming', %s, %L, %L); END $d$$q$, :nq, what, kind),
       format($q$SELECT pg_temp.say(format('  p50 %%s ms, p99 %%s ms', round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3), round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3))) FROM timing WHERE path = 'hamming' AND what = %L AND kind = %L$q$, what, kind)
FROM cases ORDER BY ord \gexec
SELECT format($q$SELECT pg_temp.say('parallel seq scan: %s %s x %s')$q$, what, kind, :nseq),
       format($q$DO $d$BEGIN PERFORM pg_temp.run('seq scan', %s, %L, %L); END $d$$q$, :nseq, what, kind),
       format($q$SELECT pg_temp.say(format('  p50 %%s ms', round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1))) FROM timing WHERE path = 'seq scan' AND what = %L AND kind = %L$q$, what, kind)
FROM cases ORDER BY ord \gexec

SELECT pg_temp.fig('database size with the big table and index', pg_size_pretty(pg_database_size(current_database()))),
       pg_temp.fig('WAL directory', (SELECT pg_size_pretty(sum(size)) FROM pg_ls_waldir()));
\if :profile
\else
DROP TABLE doc;
\endif

-- ===== the small builds: the linear baseline (after the big table is
-- dropped, so that they run on the machine the big build had) =====
\if :do_small
SELECT pg_temp.say(format('small table: the first %s rows', :'small'));
DROP TABLE IF EXISTS small;
CREATE TABLE small (id int, sh simhash64);
INSERT INTO small SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(1, :small) i;
VACUUM ANALYZE small;
SELECT pg_temp.say(format('%s builds at %s rows (DROP INDEX + CREATE INDEX, each its own transaction)',
                          :'small_builds', :'small'));
SELECT 'DROP INDEX IF EXISTS small_ham',
       format($q$INSERT INTO small_build SELECT %s, s, bytes FROM pg_temp.build('small', 'small_ham')$q$, n),
       format($q$SELECT pg_temp.say(format('  small build %1$s: %%s s', round(s::numeric, 2))) FROM small_build WHERE n = %1$s$q$, n)
FROM generate_series(1, :small_builds) n \gexec
SELECT pg_temp.fig('small build mean (s)', round(avg(s)::numeric, 2) || ' (min ' || round(min(s)::numeric, 2)
                   || ', max ' || round(max(s)::numeric, 2) || ', n ' || count(*) || ')'),
       pg_temp.fig('small index bytes/row', round((avg(bytes) / :small)::numeric, 1)::text)
FROM small_build;
SELECT avg(s) AS small_mean FROM small_build \gset
DROP TABLE small;
SELECT pg_temp.fig('build / (small_builds x mean small build)',
                   round((:big_s / (:small_builds * :small_mean))::numeric, 3)::text
                   || format(' (%s s / (%s x %s s); rows ratio %s)', round(:big_s::numeric, 1), :small_builds,
                             round(:small_mean::numeric, 2), round(:total_rows::numeric / :small, 3))),
       pg_temp.fig('build time per row, big / small',
                   round(((:big_s / :total_rows) / (:small_mean / :small))::numeric, 3)::text
                   || ' (1.0 = linear; equals the line above when rows = small_builds x small)');
\else
SELECT 'NULL' AS small_mean \gset
\endif

\echo
\echo '==================== summary ===================='
SELECT format('%s rows (%s random + %s planted near-copies), one hamming index at default options',
              :'total_rows', :'rows', :'nplanted');
SELECT rpad(what, 44) || value FROM fig ORDER BY ord;
\pset tuples_only off
\pset format aligned
\echo
\echo 'Latency in ms, planning included (index: nq queries; parallel seq scan: nseq of the same queries);'
\echo 'x_seq = seq scan p50 / index p50; exact = sampled queries whose index answer equals the seq scan''s;'
\echo 'mismatch must be 0; rows = mean result rows (radius) of the index answers:'
WITH s AS (SELECT what, kind, count(*) AS n_seq,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50
           FROM timing WHERE path = 'seq scan' GROUP BY what, kind),
     i AS (SELECT what, kind, count(*) AS n,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
                  percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99,
                  avg(CASE WHEN what = 'radius3' THEN coalesce(cardinality(string_to_array(nullif(result, ''), ',')), 0) END) AS rows_
           FROM timing WHERE path = 'hamming' GROUP BY what, kind),
     e AS (SELECT t.what, t.kind, count(*) FILTER (WHERE t.result IS NOT DISTINCT FROM b.result) AS exact,
                  count(*) FILTER (WHERE t.result IS DISTINCT FROM b.result) AS mismatch
           FROM timing t JOIN timing b ON b.path = 'seq scan' AND b.what = t.what AND b.kind = t.kind AND b.qid = t.qid
           WHERE t.path = 'hamming' GROUP BY t.what, t.kind)
SELECT c.what, c.kind, i.n, round(i.p50::numeric, 3) AS p50_ms, round(i.p99::numeric, 3) AS p99_ms,
       s.n_seq, round(s.p50::numeric, 1) AS seq_p50_ms, round((s.p50 / i.p50)::numeric, 0) AS x_seq,
       e.exact, e.mismatch, round(i.rows_::numeric, 2) AS rows
FROM cases c JOIN i USING (what, kind) LEFT JOIN s USING (what, kind) LEFT JOIN e USING (what, kind)
ORDER BY c.ord;

\echo 'Mismatched queries (index answer / seq scan answer), if any:'
SELECT t.what, t.kind, t.qid, left(t.result, 80) AS index_answer, left(b.result, 80) AS seq_answer
FROM timing t JOIN timing b ON b.path = 'seq scan' AND b.what = t.what AND b.kind = t.kind AND b.qid = t.qid
WHERE t.path = 'hamming' AND t.result IS DISTINCT FROM b.result;

\echo 'Targets (issue 32):'
WITH i AS (SELECT what, kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50
           FROM timing WHERE path = 'hamming' GROUP BY what, kind),
     s AS (SELECT what, kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50
           FROM timing WHERE path = 'seq scan' GROUP BY what, kind)
SELECT * FROM (VALUES
  ('CREATE INDEX at default options completes', 'yes', 'yes'),
  ('index bytes/row <= 64', round(:big_bytes::numeric / :total_rows, 1)::text,
   CASE WHEN :big_bytes::numeric / :total_rows <= 64 THEN 'met' ELSE 'NOT met' END),
  ('build <= 1.2x of small_builds x small build', round((:big_s / (:small_builds * :small_mean))::numeric, 3)::text,
   CASE WHEN :small_builds = 0 THEN 'not measured' WHEN :big_s / (:small_builds * :small_mean) <= 1.2 THEN 'met' ELSE 'NOT met' END),
  ('radius 3 planted p50 <= 0.2 ms',
   (SELECT round(p50::numeric, 3)::text FROM i WHERE what = 'radius3' AND kind = 'planted'),
   (SELECT CASE WHEN p50 <= 0.2 THEN 'met' ELSE 'NOT met' END FROM i WHERE what = 'radius3' AND kind = 'planted')),
  ('KNN 10 random p50 >= 500x parallel seq scan',
   (SELECT round((s.p50 / i.p50)::numeric, 0)::text FROM i JOIN s USING (what, kind) WHERE what = 'knn10' AND kind = 'random'),
   (SELECT CASE WHEN s.p50 / i.p50 >= 500 THEN 'met' ELSE 'NOT met' END FROM i JOIN s USING (what, kind) WHERE what = 'knn10' AND kind = 'random'))
) AS t(target, measured, verdict);

