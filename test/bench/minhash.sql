-- MinHash signature speed, inside PostgreSQL: minhash(text) (one
-- permutation, 128 values) against simhash(text), md5(text) and the classic
-- k-permutation loop, over the same rows in the same run.  Each round times
-- every expression once, in turn; the best of :rounds rounds counts.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE EXTENSION neardup;

-- The baseline: k keyed hashes per feature (test/bench/classic_minhash.c).
CREATE FUNCTION classic_minhash(bigint[], int) RETURNS int4[]
AS :'classic_lib', 'classic_minhash' LANGUAGE c IMMUTABLE STRICT;

\ir ../demo/load_corpus.sql

-- Short documents: 20,000 rows of 30 words (~200 bytes, 28 shingles).
CREATE TABLE short AS
SELECT g AS id, string_agg(substr(md5((g * 31 + i)::text), 1, 2 + (g + i) % 9), ' ') AS body
FROM generate_series(1, 20000) g, generate_series(1, 30) i GROUP BY g;
-- Medium documents: 2,000 rows of 500 words (~3.3 kB).
CREATE TABLE medium AS
SELECT g AS id, string_agg(substr(md5((g * 31 + i)::text), 1, 2 + (g + i) % 9), ' ') AS body
FROM generate_series(1, 2000) g, generate_series(1, 500) i GROUP BY g;
CREATE TABLE corpus_doc AS SELECT id, body FROM doc;
-- The shingles as stored arrays too, to time the signature alone.
ALTER TABLE short ADD COLUMN feats bigint[];
ALTER TABLE medium ADD COLUMN feats bigint[];
ALTER TABLE corpus_doc ADD COLUMN feats bigint[];
UPDATE short SET feats = shingle_hashes(body);
UPDATE medium SET feats = shingle_hashes(body);
UPDATE corpus_doc SET feats = shingle_hashes(body);
VACUUM ANALYZE short, medium, corpus_doc;

CREATE TEMP TABLE result (dataset text, fn text, ms float8);
CREATE FUNCTION pg_temp.measure(tbl text, fns text[], exprs text[], rounds int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    best float8[] := array_fill('Infinity'::float8, ARRAY[cardinality(fns)]);
    t0 timestamptz;
BEGIN
    FOR round IN 1..rounds LOOP
        FOR f IN 1..cardinality(fns) LOOP
            t0 := clock_timestamp();
            EXECUTE format('SELECT count(%s) FROM %I', exprs[f], tbl);
            best[f] := least(best[f], extract(epoch FROM clock_timestamp() - t0) * 1000);
        END LOOP;
    END LOOP;
    INSERT INTO result SELECT tbl, fns[f], best[f] FROM generate_subscripts(fns, 1) f;
END $$;

\o /dev/null
SELECT pg_temp.measure(t,
         ARRAY['md5(text)', 'simhash(text)', 'minhash(text)', 'minhash(text, 256)',
               'shingle_hashes(text)', 'minhash(shingle_hashes(text))', 'classic(shingle_hashes(text))',
               'minhash(bigint[])', 'classic(bigint[])'],
         ARRAY['md5(body)', 'simhash(body)', 'minhash(body)', 'minhash(body, 256)',
               'shingle_hashes(body)', 'minhash(shingle_hashes(body))', 'classic_minhash(shingle_hashes(body), 128)',
               'minhash(feats)', 'classic_minhash(feats, 128)'],
         :rounds)
FROM (VALUES ('short'), ('medium'), ('corpus_doc')) d(t);
\o

\echo 'Datasets:'
SELECT 'short' AS dataset, count(*) AS rows, round(avg(octet_length(body))) AS avg_bytes,
       round(avg(cardinality(feats))) AS avg_shingles FROM short
UNION ALL
SELECT 'medium', count(*), round(avg(octet_length(body))), round(avg(cardinality(feats))) FROM medium
UNION ALL
SELECT 'corpus_doc', count(*), round(avg(octet_length(body))), round(avg(cardinality(feats))) FROM corpus_doc;

\echo 'Signature speed, 128 values unless stated (best of :rounds interleaved rounds; speed = simhash(text) time / time, on the same rows):'
SELECT r.dataset, r.fn AS expression, round(r.ms::numeric, 1) AS ms,
       round((s.ms / r.ms)::numeric, 2) AS speed_vs_simhash
FROM result r JOIN result s ON s.dataset = r.dataset AND s.fn = 'simhash(text)'
ORDER BY r.dataset, r.ms;

\echo 'One permutation against the classic k-permutation loop on the same feature arrays (times classic / one permutation):'
SELECT m.dataset,
       round((c.ms / m.ms)::numeric, 1) AS on_bigint_arrays,
       round((ct.ms / mt.ms)::numeric, 1) AS via_shingle_hashes
FROM result m
JOIN result c ON c.dataset = m.dataset AND c.fn = 'classic(bigint[])'
JOIN result mt ON mt.dataset = m.dataset AND mt.fn = 'minhash(shingle_hashes(text))'
JOIN result ct ON ct.dataset = m.dataset AND ct.fn = 'classic(shingle_hashes(text))'
WHERE m.fn = 'minhash(bigint[])'
ORDER BY m.dataset;
