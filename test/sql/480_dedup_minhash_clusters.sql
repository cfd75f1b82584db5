--
-- minhash_clusters(): components of "shares an LSH band and the estimate is
-- at least threshold", against dedup_clusters over the verified band-join
-- pairs (minhash_similar() through a GIN index on minhash_bands), on random
-- documents, edited copies at several distances, a large group of
-- identical documents, repeated ids and NULL signatures; several
-- thresholds and explicit bands/rows; errors.
--
CREATE TABLE mc (id bigint, body text, sig int4[]);
-- 1,500 documents of 40 words from a 4,000-word vocabulary
INSERT INTO mc (id, body)
SELECT d, string_agg('w' || (hashint8extended(d * 100 + i, 1) & 4095) % 4000, ' ' ORDER BY i)
FROM generate_series(1, 1500) d, generate_series(1, 40) i GROUP BY d;
-- copies of every 5th with 0..9 of 40 words replaced (Jaccard ~1 .. 0.5)
INSERT INTO mc (id, body)
SELECT 100000 + id, (SELECT string_agg(CASE WHEN i <= id % 10 THEN 'new' || id || '_' || i ELSE w END, ' ' ORDER BY i)
                     FROM unnest(string_to_array(body, ' ')) WITH ORDINALITY u(w, i))
FROM mc WHERE id % 5 = 0 AND id <= 1500;
-- an edited chain: each copy one word from the previous
INSERT INTO mc (id, body)
SELECT 200000 + k, (SELECT string_agg(CASE WHEN i <= k THEN 'chain' || i ELSE w END, ' ' ORDER BY i)
                    FROM unnest(string_to_array(body, ' ')) WITH ORDINALITY u(w, i))
FROM mc, generate_series(1, 12) k WHERE mc.id = 7;
-- 400 identical documents (an error page), ids repeated, NULL signatures
INSERT INTO mc (id, body) SELECT 300000 + i, 'page not found please try again later or contact the site owner' FROM generate_series(1, 400) i;
INSERT INTO mc (id, body) SELECT id, body || ' extra words here now' FROM mc WHERE id IN (3, 4);
INSERT INTO mc (id, body) VALUES (400000, NULL), (400001, '');
UPDATE mc SET sig = minhash(body);
SELECT count(*) AS rows, count(sig) AS signatures FROM mc;
CREATE INDEX mc_bands ON mc USING gin (minhash_bands(sig, 9, 13));

-- reference: components of the verified band-join pairs
CREATE FUNCTION mc_reference(t float8, b int, r int) RETURNS TABLE (id bigint, cluster_id bigint)
LANGUAGE sql AS $$
    SELECT * FROM dedup_clusters(format(
        'SELECT a.id, x.id FROM mc a JOIN mc x ON minhash_similar(x.sig, a.sig, %s, %s, %s) AND a.id < x.id',
        t, b, r))
$$;
SELECT * FROM minhash_lsh_params(0.8);
SELECT t, b, r,
       (SELECT count(*) FROM minhash_clusters('mc', 'id', 'sig', t, b, r)) AS clustered,
       (SELECT count(DISTINCT cluster_id) FROM minhash_clusters('mc', 'id', 'sig', t, b, r)) AS clusters,
       (SELECT count(*) FROM (SELECT * FROM minhash_clusters('mc', 'id', 'sig', t, b, r)
                              EXCEPT ALL SELECT * FROM mc_reference(t, b, r)) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM mc_reference(t, b, r)
                              EXCEPT ALL SELECT * FROM minhash_clusters('mc', 'id', 'sig', t, b, r)) x) AS missing
FROM (VALUES (0.8, 9, 13), (0.5, 9, 13), (0.95, 9, 13), (0.6, 25, 5), (1.0, 9, 13), (0.0, 2, 2)) v(t, b, r)
ORDER BY t, b;
-- defaults: threshold 0.8 and minhash_lsh_params' bands and rows
SELECT (SELECT count(*) FROM (SELECT * FROM minhash_clusters('mc', 'id', 'sig')
                              EXCEPT ALL SELECT * FROM mc_reference(0.8, 9, 13)) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM mc_reference(0.8, 9, 13)
                              EXCEPT ALL SELECT * FROM minhash_clusters('mc', 'id', 'sig')) x) AS missing;
-- the identical group is one cluster, the chain links its far ends
SELECT cluster_id, count(*), min(id), max(id)
FROM minhash_clusters('mc', 'id', 'sig', 0.8) WHERE id >= 200000
GROUP BY cluster_id ORDER BY cluster_id;
-- the three forms; output in id order
SELECT (SELECT count(*) FROM minhash_clusters('mc'::regclass, 'id', 'sig')) AS regclass_form,
       (SELECT count(*) FROM minhash_clusters('SELECT id, sig FROM mc')) AS query_form,
       (SELECT bool_and(id > prev) FROM (SELECT id, lag(id) OVER () AS prev FROM minhash_clusters('mc', 'id', 'sig')) s
        WHERE prev IS NOT NULL) AS ascending;
-- keep-one from MinHash clusters
CREATE TABLE mc_keep AS SELECT id, body, sig FROM mc WHERE id NOT IN (3, 4);
SELECT count(*) AS clustered_before, count(*) - count(DISTINCT cluster_id) AS to_delete
FROM minhash_clusters('mc_keep', 'id', 'sig');
SELECT dedup_keep_one('mc_keep', 'id', $$SELECT id, cluster_id FROM minhash_clusters('mc_keep', 'id', 'sig')$$) AS deleted;
SELECT count(*) AS clustered_after FROM minhash_clusters('mc_keep', 'id', 'sig');
DROP TABLE mc_keep;

-- a large identical group costs one verification per bucket, not its pairs
SELECT count(*), count(DISTINCT cluster_id)
FROM minhash_clusters('SELECT i, minhash(''the same error page'') FROM generate_series(1, 50000) i');

-- edge cases
SELECT count(*) FROM minhash_clusters('SELECT 1, NULL::int4[] WHERE false');
SELECT * FROM minhash_clusters('SELECT 1, minhash(''a b c'')');
SELECT * FROM minhash_clusters(NULL::text);
SELECT * FROM minhash_clusters('mc', NULL, 'sig');

-- errors
CREATE FUNCTION mc_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT q, mc_try(q) FROM (VALUES
    ($$SELECT * FROM minhash_clusters('mc', 'id', 'sig', 1.5)$$),
    ($$SELECT * FROM minhash_clusters('mc', 'id', 'sig', 'NaN')$$),
    ($$SELECT * FROM minhash_clusters('mc', 'id', 'sig', NULL)$$),
    ($$SELECT * FROM minhash_clusters('mc', 'id', 'sig', 0.8, 9)$$),
    ($$SELECT * FROM minhash_clusters('mc', 'id', 'sig', 0.8, 0, 5)$$),
    ($$SELECT * FROM minhash_clusters('mc', 'id', 'sig', 0.8, 20, 10)$$),
    ($$SELECT * FROM minhash_clusters('mc', 'body', 'sig')$$),
    ($$SELECT * FROM minhash_clusters('mc', 'id', 'body')$$),
    ($$SELECT * FROM minhash_clusters('mc', 'id', 'nope')$$),
    ($$SELECT * FROM minhash_clusters('SELECT 1, ARRAY[1,2]::int4[] UNION ALL SELECT 2, ARRAY[1,2,3]::int4[]')$$),
    ($$SELECT * FROM minhash_clusters('SELECT 1, ARRAY[1,NULL]::int4[]')$$),
    ($$SELECT * FROM minhash_clusters('SELECT 1, ''{}''::int4[]')$$),
    ($$SELECT * FROM minhash_clusters('SELECT NULL::int, ARRAY[1]::int4[]')$$),
    ($$SELECT * FROM minhash_clusters('SELECT 1')$$)
) v(q);

DROP FUNCTION mc_try(text);
DROP FUNCTION mc_reference(float8, int, int);
DROP TABLE mc;
