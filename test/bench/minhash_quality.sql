-- MinHash against SimHash on the demo corpus: which near-duplicate pairs
-- each finds, measured against exact Jaccard of the same word 3-shingles.
--
-- Truth: every pair of documents whose exact Jaccard is at least 0.5 or
-- 0.8.  Exact Jaccard is computed for the pairs whose estimate from an
-- independent 256-value signature (seed 1) is at least 0.35; a pair of
-- J >= 0.5 falls below that with probability < 1e-5 (4.5 standard
-- deviations), so the truth is complete for practical purposes.
-- Candidates: SimHash within Hamming radius 3, 6 and 10; MinHash LSH with
-- minhash_lsh_params(t, 128) bands, alone (shares a band) and with the
-- estimate >= t (what minhash_similar() returns).
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET jit = off;
CREATE EXTENSION neardup;

\ir ../demo/load_corpus.sql

CREATE TABLE d AS
SELECT id, simhash(body) AS sh, minhash(body) AS sig, minhash(body, 256, seed => 1) AS sig_truth,
       shingle_hashes(body) AS feats
FROM doc WHERE minhash(body) IS NOT NULL;

SELECT bands AS b50, rows AS r50 FROM minhash_lsh_params(0.5, 128) \gset
SELECT bands AS b80, rows AS r80 FROM minhash_lsh_params(0.8, 128) \gset

CREATE TABLE pairs AS
SELECT a.id AS a, b.id AS b,
       a.sh <~> b.sh AS hd,
       minhash_jaccard(a.sig, b.sig) AS est,
       minhash_bands(a.sig, :b50, :r50) && minhash_bands(b.sig, :b50, :r50) AS band50,
       minhash_bands(a.sig, :b80, :r80) && minhash_bands(b.sig, :b80, :r80) AS band80,
       minhash_jaccard(a.sig_truth, b.sig_truth) AS est_truth,
       NULL::float8 AS exact
FROM d a JOIN d b ON a.id < b.id;
UPDATE pairs p SET exact = jaccard(x.feats, y.feats)
FROM d x, d y WHERE x.id = p.a AND y.id = p.b AND p.est_truth >= 0.35;

\echo 'Demo corpus: documents, pairs, pairs checked exactly:'
SELECT (SELECT count(*) FROM d) AS documents, count(*) AS pairs,
       count(exact) AS exact_checked,
       count(*) FILTER (WHERE exact >= 0.5) AS j_ge_05, count(*) FILTER (WHERE exact >= 0.8) AS j_ge_08
FROM pairs;
\echo 'Bands x rows for 128 values:'
SELECT :b50 AS bands_05, :r50 AS rows_05, :b80 AS bands_08, :r80 AS rows_08;

\echo 'Recall and precision against exact Jaccard >= t:'
WITH scored AS (
    SELECT tt.t, m.o, m.method,
           count(*) FILTER (WHERE m.hit) AS returned,
           count(*) FILTER (WHERE m.hit AND coalesce(p.exact, 0) >= tt.t) AS correct,
           count(*) FILTER (WHERE coalesce(p.exact, 0) >= tt.t) AS truth
    FROM pairs p
    CROSS JOIN (VALUES (0.5), (0.8)) AS tt(t)
    CROSS JOIN LATERAL (VALUES (1, 'simhash radius 3', p.hd <= 3),
                               (2, 'simhash radius 6', p.hd <= 6),
                               (3, 'simhash radius 10', p.hd <= 10),
                               (4, 'simhash radius 16', p.hd <= 16),
                               (5, 'minhash LSH bands', CASE WHEN tt.t = 0.5 THEN p.band50 ELSE p.band80 END),
                               (6, 'minhash LSH bands + estimate >= t', CASE WHEN tt.t = 0.5 THEN p.band50 ELSE p.band80 END AND p.est >= tt.t),
                               (7, 'minhash estimate >= t, all pairs', p.est >= tt.t)) AS m(o, method, hit)
    GROUP BY tt.t, m.o, m.method
)
SELECT t, method, returned, correct, truth,
       round(correct::numeric / nullif(truth, 0), 3) AS recall,
       round(correct::numeric / nullif(returned, 0), 3) AS precision
FROM scored ORDER BY t, o;

-- Storage per row: signatures, b-bit signatures and band indexes on 20,000
-- distinct short documents (every band key distinct: GIN's worst case, no
-- key shared by several rows).
CREATE TABLE st AS
SELECT g AS id, minhash(string_agg(substr(md5((g * 31 + i)::text), 1, 2 + (g + i) % 9), ' ')) AS sig
FROM generate_series(1, 20000) g, generate_series(1, 30) i GROUP BY g;
ALTER TABLE st ADD COLUMN b1 bytea, ADD COLUMN b2 bytea, ADD COLUMN b8 bytea, ADD COLUMN sh simhash64;
UPDATE st SET b1 = minhash_bbit(sig, 1), b2 = minhash_bbit(sig, 2), b8 = minhash_bbit(sig, 8);
CREATE INDEX st_9x13 ON st USING gin (minhash_bands(sig, 9, 13));
CREATE INDEX st_16x8 ON st USING gin (minhash_bands(sig, 16, 8));
CREATE INDEX st_25x5 ON st USING gin (minhash_bands(sig, 25, 5));
VACUUM ANALYZE st;
\echo 'Bytes per row (20,000 rows, 128 values):'
SELECT round(avg(pg_column_size(sig))) AS sig_int4,
       round(avg(pg_column_size(b1))) AS bbit_1, round(avg(pg_column_size(b2))) AS bbit_2,
       round(avg(pg_column_size(b8))) AS bbit_8,
       round(pg_relation_size('st_9x13') / 20000.0) AS gin_9x13,
       round(pg_relation_size('st_16x8') / 20000.0) AS gin_16x8,
       round(pg_relation_size('st_25x5') / 20000.0) AS gin_25x5
FROM st;
