-- MinHash LSH at a chosen recall (make bench-lsh-recall; doc/minhash.md,
-- "Recall at the threshold"): for datasketch's bands and rows and for
-- minhash_lsh_params(0.8, 128, recall => ...), the share of planted pairs
-- of each Jaccard similarity that become candidates (share a band) against
-- 1 - (1 - J^rows)^bands, the share minhash_clusters puts in one cluster
-- (band, then the estimate >= 0.8), and its time.
--
-- Rows: :n background sets of 200 random features (unrelated: Jaccard ~0)
-- and, for each J in 0.5 .. 0.95, 1,000 base sets each with a copy in
-- which x of the 200 features are replaced: J = (200 - x) / (200 + x).
-- Pairs under 0.8 that become candidates are the cost (each is checked and
-- thrown away); pairs from 0.8 up are the recall.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION neardup;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE lvl (lvl int, x int, j float8);
INSERT INTO lvl SELECT row_number() OVER (ORDER BY x DESC), x, (200 - x)::float8 / (200 + x)
FROM unnest(ARRAY[67, 50, 35, 22, 16, 11, 5]) x;

CREATE TABLE s (id bigint, sig int4[]);
-- background
INSERT INTO s
SELECT d, minhash(array_agg(hashint8extended(d * 1000 + i, 1)))
FROM generate_series(1, :n) d, generate_series(1, 200) i GROUP BY d;
-- planted: base id 10^7 * lvl + p, copy 10^7 * lvl + 5 * 10^6 + p
INSERT INTO s
SELECT 10000000 * l.lvl + p, minhash(array_agg(hashint8extended(l.lvl * 100000000 + p * 1000 + i, 2)))
FROM lvl l, generate_series(1, 1000) p, generate_series(1, 200) i GROUP BY l.lvl, p;
INSERT INTO s
SELECT 10000000 * l.lvl + 5000000 + p,
       minhash(array_agg(CASE WHEN i <= l.x THEN hashint8extended(l.lvl * 100000000 + p * 1000 + i, 3)
                              ELSE hashint8extended(l.lvl * 100000000 + p * 1000 + i, 2) END))
FROM lvl l, generate_series(1, 1000) p, generate_series(1, 200) i GROUP BY l.lvl, p;
CREATE TABLE pair AS
SELECT l.lvl, l.j, a.sig AS a, b.sig AS b, a.id AS ida, b.id AS idb
FROM lvl l JOIN s a ON a.id / 10000000 = l.lvl AND a.id % 10000000 < 5000000
JOIN s b ON b.id = a.id + 5000000;
SELECT count(*) AS rows FROM s \gset
\echo :rows rows (:n background), 7,000 planted pairs

CREATE TABLE choice (name text, bands int, rows int);
INSERT INTO choice SELECT 'default (datasketch)', bands, rows FROM minhash_lsh_params(0.8, 128);
INSERT INTO choice SELECT 'recall => ' || rc, bands, rows
FROM unnest(ARRAY[0.9, 0.95, 0.99]) rc, minhash_lsh_params(0.8, 128, recall => rc);

\echo
\echo 'Candidates (share a band) among planted pairs, measured / 1 - (1 - J^rows)^bands:'
SELECT c.name, c.bands || ' x ' || c.rows AS "b x r",
       string_agg(format('J %s: %s / %s', round(p.j::numeric, 2),
                         round(p.found::numeric / 1000, 3),
                         round(minhash_lsh_recall(p.j, c.bands, c.rows)::numeric, 3)), ', ' ORDER BY p.lvl) AS rates
FROM choice c CROSS JOIN LATERAL (
    SELECT pr.lvl, pr.j, count(*) FILTER (WHERE minhash_bands(pr.a, c.bands, c.rows) && minhash_bands(pr.b, c.bands, c.rows)) AS found
    FROM pair pr GROUP BY pr.lvl, pr.j) p
GROUP BY c.name, c.bands, c.rows ORDER BY c.bands * 1000 - c.rows;

\echo
\echo 'minhash_clusters(s, 0.8, ...): planted pairs in one cluster, by J; time:'
CREATE TABLE timing (name text, ms float8, found int[]);
DO $$
DECLARE
    c record;
    t0 timestamptz;
    ms float8;
BEGIN
    FOR c IN SELECT * FROM choice LOOP
        t0 := clock_timestamp();
        IF c.name LIKE 'default%' THEN
            CREATE TEMP TABLE cl AS SELECT * FROM minhash_clusters('s', 'id', 'sig', 0.8);
        ELSE
            CREATE TEMP TABLE cl AS SELECT * FROM minhash_clusters('s', 'id', 'sig', 0.8,
                recall => substr(c.name, 11)::float8);
        END IF;
        ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
        INSERT INTO timing
        SELECT c.name, ms, array_agg(n ORDER BY lvl)
        FROM (SELECT pr.lvl, count(*) FILTER (WHERE x.cluster_id = y.cluster_id) AS n
              FROM pair pr LEFT JOIN cl x ON x.id = pr.ida LEFT JOIN cl y ON y.id = pr.idb
              GROUP BY pr.lvl) f;
        DROP TABLE cl;
    END LOOP;
END
$$;
SELECT name, round(ms) AS ms, found FROM timing ORDER BY ms;
