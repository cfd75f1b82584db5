-- Fingerprinting throughput, inside PostgreSQL: MB/s of simhash() against
-- md5() over the same rows in the same run.  Each query runs several times;
-- the best time counts (the least disturbed by other load).
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE EXTENSION neardup;

\ir ../demo/load_corpus.sql
-- Stored uncompressed, so that decompression does not blur the comparison.
ALTER TABLE doc ALTER COLUMN body SET STORAGE EXTERNAL;
UPDATE doc SET body = body || '';

-- Large synthetic texts: 12 rows of ~4 MB of pseudo-random words.
CREATE TABLE synth (id int, body text);
ALTER TABLE synth ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO synth
SELECT g, string_agg(substr(md5((i * 7 + g)::text), 1 + i % 5, 2 + i % 8), ' ')
FROM generate_series(1, 12) g, generate_series(1, 700000) i
GROUP BY g;

-- Non-ASCII text: Cyrillic words with Latin diacritics and Han runs.
CREATE TABLE intl (id int, body text);
ALTER TABLE intl ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO intl
SELECT g, string_agg(
         CASE i % 3
           WHEN 0 THEN translate(substr(md5(i::text), 1, 6), '0123456789abcdef', 'абвгдежзийклмноп')
           WHEN 1 THEN translate(substr(md5(i::text), 1, 5), '0123456789abcdef', 'àáâäæãåāçćčèéêëē')
           ELSE chr(19968 + (i * 37) % 2000) || chr(19968 + (i * 91) % 2000) || chr(19968 + (i * 13) % 2000)
         END, ' ')
FROM generate_series(1, 4) g, generate_series(1, 300000) i
GROUP BY g;
ANALYZE;

-- Each round times every function once, in turn, so that the baseline and
-- the functions see the same machine; the best of 7 rounds counts.
CREATE TEMP TABLE result (dataset text, rows bigint, mb float8, fn text, ms float8);
CREATE FUNCTION pg_temp.measure(tbl text, fns text[], exprs text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
    bytes float8;
    best float8[] := array_fill('Infinity'::float8, ARRAY[cardinality(fns)]);
    t0 timestamptz;
BEGIN
    EXECUTE format('SELECT count(*), sum(octet_length(body)) FROM %I', tbl) INTO n, bytes;
    FOR round IN 1..7 LOOP
        FOR f IN 1..cardinality(fns) LOOP
            t0 := clock_timestamp();
            EXECUTE format('SELECT count(%s) FROM %I', exprs[f], tbl);
            best[f] := least(best[f], extract(epoch FROM clock_timestamp() - t0) * 1000);
        END LOOP;
    END LOOP;
    INSERT INTO result SELECT tbl, n, bytes / 1e6, fns[f], best[f] FROM generate_subscripts(fns, 1) f;
END $$;

\o /dev/null
SELECT pg_temp.measure(t,
         ARRAY['md5(text)', 'simhash(text)', 'simhash(text, 1)', 'simhash(text, 5, char)', 'shingle_hashes(text)'],
         ARRAY['md5(body)', 'simhash(body)', 'simhash(body, 1)', 'simhash(body, 5, ''char'')', 'shingle_hashes(body)'])
FROM (VALUES ('doc'), ('synth'), ('intl')) d(t);
-- tsvector: to_tsvector dominates; shown next to to_tsvector alone, on the
-- documents a tsvector can hold (< 1 MB of lexemes).
CREATE TABLE doc_ts AS SELECT * FROM doc WHERE octet_length(body) < 500000;
SELECT pg_temp.measure('doc_ts',
         ARRAY['md5(text)', 'simhash(text)', 'to_tsvector(english)', 'simhash(to_tsvector(english))'],
         ARRAY['md5(body)', 'simhash(body)', 'to_tsvector(''english'', body)', 'simhash(to_tsvector(''english'', body))']);
\o
\echo 'Fingerprinting throughput (best of 7 interleaved rounds; ratio = MB/s over md5() MB/s on the same rows):'
SELECT r.dataset, r.rows, round(r.mb::numeric, 1) AS mb, r.fn AS function,
       round(r.ms::numeric, 1) AS ms,
       round((r.mb / (r.ms / 1000))::numeric, 1) AS mb_per_s,
       round((m.ms / r.ms)::numeric, 2) AS ratio_to_md5
FROM result r JOIN result m ON m.dataset = r.dataset AND m.fn = 'md5(text)'
ORDER BY r.dataset, r.ms;
