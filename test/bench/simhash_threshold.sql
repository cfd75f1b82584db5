-- "At least t similar" at scale: SimHash verified lookups
-- (simhash_similar_exact at simhash_radius(t, recall)) on the hamming
-- index, on GIN and over a sequential scan, and MinHash's
-- minhash_similar_exact on its LSH band index, on the same texts:
-- latency p50/p99 (planning included), recall, storage per row, builds.
--
-- psql variables: rows (default 1000000), nq (queries of each kind,
-- default 200), nslow (queries per kind for the sequential scan, default
-- 10), threshold (0.8), recall (0.95), minhash (on), radii (further
-- SimHash radii to time on the indexes, default '10,12,17').
--
-- Texts: 60 words drawn log-uniformly from 20,000 (a few words are very
-- common, as in real text, so unrelated texts share some shingles).  For
-- each of the first nq texts, four copies with 2%, 5%, 10% and 20% of the
-- words replaced.  Queries: 'planted' = one of those texts (its copies
-- above the threshold are the answer: every other text is unrelated),
-- 'random' = a fresh text (no answer: the common case).
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET jit = off;
CREATE EXTENSION IF NOT EXISTS neardup;

\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?nq}
\else
\set nq 200
\endif
\if :{?nslow}
\else
\set nslow 10
\endif
\if :{?threshold}
\else
\set threshold 0.8
\endif
\if :{?recall}
\else
\set recall 0.95
\endif
\if :{?minhash}
\else
\set minhash on
\endif
\if :{?radii}
\else
\set radii '10,12,17'
\endif

SELECT simhash_radius(:threshold, :recall) AS radius \gset
SELECT bands, rows AS band_rows FROM minhash_lsh_params(:threshold, 128) \gset

CREATE FUNCTION pg_temp.random_text() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg('w' || floor(exp(random() * ln(20000)))::int, ' ') FROM generate_series(1, 60)
$$;
CREATE FUNCTION pg_temp.edit(body text, rate float8) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(CASE WHEN random() < rate THEN 'edit' || floor(random() * 1e9)::bigint ELSE w END, ' ' ORDER BY n)
    FROM regexp_split_to_table(body, ' ') WITH ORDINALITY AS t(w, n)
$$;

SELECT setseed(0.25);
DROP TABLE IF EXISTS doc;
CREATE TABLE doc (id int, body text, sh simhash64, sig int4[]);
INSERT INTO doc (id, body) SELECT g, pg_temp.random_text() FROM generate_series(1, :rows) g;
INSERT INTO doc (id, body)
SELECT :rows + c * 10 + e, pg_temp.edit(d.body, r)
FROM doc d, generate_series(1, :nq) c, (VALUES (1, 0.02), (2, 0.05), (3, 0.10), (4, 0.20)) AS v(e, r)
WHERE d.id = c;
SELECT count(*) AS total_rows FROM doc \gset

CREATE TEMP TABLE timing (path text, method text, kind text, qid int, ms float8, found int);
CREATE TEMP TABLE builds (what text, seconds float8, bytes_per_row float8);
CREATE FUNCTION pg_temp.timed(what text, ddl text, rel text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE ddl;
    INSERT INTO builds VALUES (what, extract(epoch FROM clock_timestamp() - t0),
                               CASE WHEN rel IS NULL THEN NULL
                                    ELSE pg_relation_size(rel::regclass)::float8 / (SELECT count(*) FROM doc) END);
END $$;
SELECT pg_temp.timed('simhash(body), all rows', 'UPDATE doc SET sh = simhash(body)', NULL) \g /dev/null
\if :minhash
SELECT pg_temp.timed('minhash(body), all rows', 'UPDATE doc SET sig = minhash(body)', NULL) \g /dev/null
\endif
VACUUM ANALYZE doc;

CREATE TEMP TABLE qs AS
SELECT 'planted' AS kind, id AS qid, body FROM doc WHERE id <= :nq
UNION ALL
SELECT 'random', g, pg_temp.random_text() FROM generate_series(1, :nq) g;
-- The answer of a planted query: itself and its copies at J >= threshold
-- (every other text shares at most a few common shingles with it).
CREATE TEMP TABLE truth AS
SELECT q.kind, q.qid, count(d.id) FILTER (WHERE jaccard(d.body, q.body) >= :threshold) AS n
FROM qs q LEFT JOIN doc d ON q.kind = 'planted' AND (d.id = q.qid OR d.id BETWEEN :rows + q.qid * 10 + 1 AND :rows + q.qid * 10 + 4)
GROUP BY q.kind, q.qid;

CREATE TEMP TABLE workload (method text, sql text);
INSERT INTO workload
SELECT 'simhash r=' || k,
       format('SELECT count(*) FROM doc WHERE simhash_similar_exact(sh, simhash(%%1$L), body, %%1$L, %s, %s)', :'threshold', k)
FROM (SELECT :radius AS k UNION SELECT unnest(string_to_array(:'radii', ','))::int) r;
INSERT INTO workload VALUES
  ('minhash', format('SELECT count(*) FROM doc WHERE minhash_similar_exact(sig, minhash(%%1$L), body, %%1$L, %s, %s, %s)',
                     :'threshold', :bands, :band_rows));

-- Index paths without parallel workers: with its default selectivity for
-- && on the band arrays the planner estimates thousands of rows for a
-- MinHash lookup and starts two workers, some 15 ms, for an answer of a
-- row or two (doc/minhash.md).  The seq scan keeps its parallel plan.
CREATE FUNCTION pg_temp.use(seq boolean) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('max_parallel_workers_per_gather', CASE WHEN seq THEN '2' ELSE '0' END, false);
    PERFORM set_config('enable_indexscan', (NOT seq)::text, false);
    PERFORM set_config('enable_bitmapscan', (NOT seq)::text, false);
    PERFORM set_config('enable_seqscan', seq::text, false);
END $$;
-- Each query of each method named like `pattern` once (after one warm-up),
-- planning included.
CREATE FUNCTION pg_temp.run(path text, pattern text, n int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    w record;
    r record;
    t0 timestamptz;
    found int;
BEGIN
    PERFORM pg_temp.use(path = 'seq scan');
    FOR w IN SELECT * FROM workload WHERE method LIKE pattern LOOP
        EXECUTE format(w.sql, 'warm up') INTO found;
        FOR r IN SELECT * FROM qs WHERE qid <= n ORDER BY kind, qid LOOP
            t0 := clock_timestamp();
            EXECUTE format(w.sql, r.body) INTO found;
            INSERT INTO timing VALUES (path, w.method, r.kind, r.qid,
                                       extract(epoch FROM clock_timestamp() - t0) * 1000, found);
        END LOOP;
    END LOOP;
    RESET enable_indexscan; RESET enable_bitmapscan; RESET enable_seqscan; RESET max_parallel_workers_per_gather;
END $$;

SELECT pg_temp.run('seq scan', 'simhash r=' || :radius, :nslow) \g /dev/null
SELECT pg_temp.timed('hamming index on sh', 'CREATE INDEX doc_ham ON doc USING hamming (sh)', 'doc_ham') \g /dev/null
SELECT pg_temp.run('hamming', 'simhash%', :nq) \g /dev/null
DROP INDEX doc_ham;
SELECT pg_temp.timed('GIN index on sh', 'CREATE INDEX doc_gin ON doc USING gin (sh)', 'doc_gin') \g /dev/null
SELECT pg_temp.run('gin', 'simhash%', :nq) \g /dev/null
DROP INDEX doc_gin;
\if :minhash
SELECT pg_temp.run('seq scan', 'minhash', :nslow) \g /dev/null
SELECT pg_temp.timed(format('GIN index on minhash_bands(sig, %s, %s)', :bands, :band_rows),
                     format('CREATE INDEX doc_bands ON doc USING gin (minhash_bands(sig, %s, %s))', :bands, :band_rows),
                     'doc_bands') \g /dev/null
SELECT pg_temp.run('gin bands', 'minhash', :nq) \g /dev/null
DROP INDEX doc_bands;
\endif

\echo
\echo 'rows:' :total_rows ' threshold:' :threshold ' recall asked:' :recall ' simhash radius:' :radius ' minhash bands x rows:' :bands x :band_rows
\echo 'Column bytes per row (average pg_column_size):'
SELECT round(avg(pg_column_size(sh)), 1) AS simhash64, round(avg(pg_column_size(sig)), 1) AS minhash_128,
       round(avg(pg_column_size(body)), 1) AS body
FROM doc;
\echo 'Fingerprints and index builds (seconds, index bytes per row):'
SELECT what, round(seconds::numeric, 2) AS seconds, round(bytes_per_row::numeric, 1) AS bytes_per_row FROM builds;
\echo 'Candidates within the radius per query (before the exact check), on the planted and random queries:'
SELECT q.kind, round(avg(c.n), 1) AS mean, max(c.n) AS max
FROM qs q CROSS JOIN LATERAL (SELECT count(*) AS n FROM doc WHERE sh <~> simhash(q.body) <= :radius) c
WHERE q.qid <= :nslow GROUP BY q.kind ORDER BY q.kind;
\echo 'Latency in ms (p50, p99; planning included), speed-up over the sequential scan of the same'
\echo 'predicate (p50, where measured), and recall: rows found / rows of J >= threshold (planted queries):'
WITH s AS (SELECT method, kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50
           FROM timing WHERE path = 'seq scan' GROUP BY method, kind)
SELECT t.method, t.path, t.kind, count(*) AS n,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms)::numeric, 3) AS p50_ms,
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY t.ms)::numeric, 3) AS p99_ms,
       round((s.p50 / percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms))::numeric, 1) AS x_seq,
       sum(t.found) AS found, sum(u.n) AS truth,
       round(sum(t.found)::numeric / nullif(sum(u.n), 0), 3) AS recall
FROM timing t JOIN truth u USING (kind, qid)
LEFT JOIN s ON s.method = t.method AND s.kind = t.kind
GROUP BY t.method, t.path, t.kind, s.p50
ORDER BY t.method LIKE 'minhash%', nullif(split_part(t.method, '=', 2), '')::int, t.kind, t.path;
DROP TABLE doc;
