-- Hostile inputs across the SQL surface: NULLs, odd arrays, limits, queries
-- that are not what the query-text functions expect, domains, privileges,
-- errors inside exception blocks, and a SQL_ASCII database.  Each error is
-- shown as SQLSTATE and message, so that a changed error code shows up.
\set VERBOSITY terse

CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

CREATE TABLE hd (id int, sh simhash64);
INSERT INTO hd SELECT g, (g % 3)::bigint::simhash64 FROM generate_series(1, 9) g;
INSERT INTO hd VALUES (10, NULL);

-- simhash_pairs: the query must be one row-returning, read-only query of
-- (integer, simhash64); the limits of max_distance and blocks
SELECT q, pg_temp.err(q) FROM (VALUES
    ('SELECT * FROM simhash_pairs(''SELECT 1'', 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT 1, 2, 3'', 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT 1::numeric, ''''0000000000000000''''::simhash64'', 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT ''''a''''::text, ''''0000000000000000''''::simhash64'', 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT 1, 1::bigint'', 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT NULL::int, ''''0000000000000000''''::simhash64'', 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT 1, NULL::simhash64; SELECT 2, NULL::simhash64'', 3)'),
    ('SELECT * FROM simhash_pairs('''', 3)'),
    ('SELECT * FROM simhash_pairs(''INSERT INTO hd VALUES (11, NULL) RETURNING id, sh'', 3)'),
    ('SELECT * FROM simhash_pairs(''WITH d AS (DELETE FROM hd RETURNING *) SELECT id, sh FROM d'', 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT id, sh FROM hd FOR UPDATE'', 3)'),
    ('SELECT * FROM simhash_pairs(''EXPLAIN SELECT 1'', 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT $1::int, NULL::simhash64'', 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT id, sh FROM hd'', NULL)'),
    ('SELECT * FROM simhash_pairs(''SELECT id, sh FROM hd'', -1)'),
    ('SELECT * FROM simhash_pairs(''SELECT id, sh FROM hd'', 16)'),
    ('SELECT * FROM simhash_pairs(''SELECT id, sh FROM hd'', 2147483647)'),
    ('SELECT * FROM simhash_pairs(''SELECT id, sh FROM hd'', 3, 3)'),
    ('SELECT * FROM simhash_pairs(''SELECT id, sh FROM hd'', 3, 17)'),
    ('SELECT * FROM simhash_pairs(''SELECT id, sh FROM hd'', 3, -2147483648)'),
    ('SELECT * FROM simhash_pairs(''hd'', ''nope'', ''sh'')'),
    ('SELECT * FROM simhash_pairs(''hd'', ''ctid'', ''sh'')'),
    ('SELECT * FROM simhash_pairs(''hd; DROP TABLE hd'', ''id'', ''sh'')'),
    ('SELECT * FROM simhash_pairs(0::regclass, ''id'', ''sh'')')
) v(q);
-- NULL query, relation or column: an error naming it (22004)
SELECT count(*) FROM simhash_pairs(NULL::text, 3);
SELECT count(*) FROM simhash_pairs(NULL::regclass, 'id', 'sh');
SELECT count(*) FROM simhash_pairs('hd', NULL, 'sh');
-- still there, and NULL fingerprints skipped
SELECT count(*) FROM hd;
SELECT * FROM simhash_pairs('hd', 'id', 'sh', 0) ORDER BY 1, 2;

-- quoted, mixed-case names with spaces; domains (also over a domain) as ids
CREATE DOMAIN hpos AS int CHECK (VALUE > 0);
CREATE DOMAIN hpos2 AS hpos;
CREATE TABLE "Hostile Docs" ("My Id" hpos2, "s""h" simhash64);
INSERT INTO "Hostile Docs" VALUES (1, '00000000000000ff'), (2, '00000000000000fe'), (3, 'ff00000000000000');
SELECT * FROM simhash_pairs('"Hostile Docs"', 'My Id', 's"h', 1);
SELECT * FROM simhash_pairs('"Hostile Docs"'::regclass, 'My Id', 's"h', 1);
-- dedup_clusters reads domain-typed columns as their integer base type
SELECT * FROM dedup_clusters('SELECT "My Id", "My Id" + 1 FROM "Hostile Docs" WHERE "My Id" = 1') ORDER BY 1;
SELECT * FROM dedup_clusters('SELECT 1::hpos2, 2::hpos') ORDER BY 1;
-- the dedup helpers' column check follows the domain chain too
SELECT * FROM dedup_representatives('"Hostile Docs"', 'My Id', 'SELECT 1, 2') ORDER BY 1;
SELECT * FROM simhash_pairs_since('"Hostile Docs"', 'My Id', 's"h', 1, 1);
SELECT * FROM simhash_pairs_since('"Hostile Docs"', 'My Id', 's"h', NULL, 1);
SELECT pg_temp.err('SELECT neardup_internal.dedup_check_column(''"Hostile Docs"'', ''My Id'', ''id'', ''{text}'')');

-- dedup_clusters: what the pairs query may not be
SELECT q, pg_temp.err(q) FROM (VALUES
    ('SELECT * FROM dedup_clusters(''SELECT 1'')'),
    ('SELECT * FROM dedup_clusters(''SELECT 1::numeric, 2'')'),
    ('SELECT * FROM dedup_clusters(''SELECT 1, 2; SELECT 3, 4'')'),
    ('SELECT * FROM dedup_clusters(''DELETE FROM hd'')'),
    ('SELECT * FROM dedup_clusters(''DELETE FROM hd RETURNING id, id'')'),
    ('SELECT * FROM dedup_clusters(''SELECT 1 / 0, 1'')')
) v(q);
SELECT count(*) FROM hd;
-- NULL ends and self-pairs are no edges; extreme ids
SELECT * FROM dedup_clusters($$VALUES (NULL::int8, 1::int8), (2, NULL), (3, 3),
    (-9223372036854775808, 9223372036854775807)$$) ORDER BY 1;
-- a pairs query that itself calls simhash_pairs and dedup_clusters
SELECT * FROM dedup_clusters($$SELECT c.id, c.cluster_id FROM dedup_clusters(
    'SELECT id_a, id_b FROM simhash_pairs(''hd'', ''id'', ''sh'', 0)') c$$) ORDER BY 1;

-- keep_order is SQL of the caller's: a broken one is its syntax error, named as keep_order's
SELECT pg_temp.err($$SELECT * FROM dedup_representatives('hd', 'id', 'SELECT 1, 2', 'id; DROP TABLE hd')$$);
SELECT count(*) FROM hd;
-- an empty keep_order means none (smallest id), as NULL does
SELECT (SELECT array_agg(representative ORDER BY id) FROM dedup_representatives('hd', 'id', 'SELECT 1, 2', '  '))
     = (SELECT array_agg(representative ORDER BY id) FROM dedup_representatives('hd', 'id', 'SELECT 1, 2')) AS empty_is_none;

-- errors inside exception blocks leave no SPI state behind
DO $$
BEGIN
    BEGIN
        PERFORM * FROM simhash_pairs('SELECT g, (1 / (g - 5000))::bigint::simhash64 FROM generate_series(1, 10000) g', 0);
    EXCEPTION WHEN division_by_zero THEN
        RAISE NOTICE 'simhash_pairs: %', SQLERRM;
    END;
    BEGIN
        PERFORM * FROM dedup_clusters('SELECT g, 1 / (g - 15000) FROM generate_series(1, 20000) g');
    EXCEPTION WHEN division_by_zero THEN
        RAISE NOTICE 'dedup_clusters: %', SQLERRM;
    END;
    RAISE NOTICE 'then: % pairs', (SELECT count(*) FROM simhash_pairs('hd', 'id', 'sh', 0));
END
$$;

-- privileges: the query runs as the caller
CREATE ROLE regress_neardup_hostile;
GRANT USAGE ON SCHEMA public TO regress_neardup_hostile;
SET ROLE regress_neardup_hostile;
SELECT q, pg_temp.err(q) FROM (VALUES
    ('SELECT * FROM simhash_pairs(''hd'', ''id'', ''sh'', 0)'),
    ('SELECT * FROM simhash_pairs(''SELECT id, sh FROM hd'', 0)'),
    ('SELECT * FROM dedup_clusters(''SELECT id, id FROM hd'')'),
    ('SELECT * FROM simhash_pairs_since(''hd'', ''id'', ''sh'', 5, 0)'),
    ('SELECT dedup_keep_one(''hd'', ''id'', ''SELECT 1, 2'')')
) v(q);
RESET ROLE;
SELECT count(*) FROM hd;
DROP OWNED BY regress_neardup_hostile;
DROP ROLE regress_neardup_hostile;

-- band keys: limits, and key_index outside 1 .. number of keys
SELECT pg_temp.err('SELECT simhash_band_keys(''0000000000000000'', -1)');
SELECT pg_temp.err('SELECT simhash_band_keys(''0000000000000000'', 16)');
SELECT pg_temp.err('SELECT simhash_band_keys(''0000000000000000'', 3, 3)');
SELECT array_length(simhash_band_keys('0000000000000000', 15), 1),
       array_length(simhash_band_keys('0000000000000000', 8, 16), 1);
-- far apart: no shared key, whatever key_index says
SELECT i, simhash_band_first('0000000000000000', 'ffffffffffffffff', i)
FROM unnest(ARRAY[-2147483648, -1, 0, 1, 2147483647]) i;
-- equal: key 1 only
SELECT i, simhash_band_first('0000000000000000', '0000000000000000', i)
FROM unnest(ARRAY[-2147483648, 0, 1, 2, 2147483647]) i;

-- MinHash: NULL elements, empty and 2-D arrays, lower bounds, limits
SELECT minhash(ARRAY[]::text[], 4), minhash(ARRAY[NULL]::text[], 4), minhash('{}'::int8[], 4), minhash('', 4);
SELECT minhash('[5:7]={a,b,c}'::text[], 16) = minhash('{a,b,c}'::text[], 16);
SELECT minhash_jaccard('[5:7]={1,2,3}'::int4[], '{1,2,3}');
SELECT minhash_bands('[3:6]={1,2,3,4}'::int4[], 4, 1) = minhash_bands('{1,2,3,4}'::int4[], 4, 1);
SELECT q, pg_temp.err(q) FROM (VALUES
    ('SELECT minhash(''a b c'', 2147483647)'),
    ('SELECT minhash(''a b c'', 0)'),
    ('SELECT minhash(''{{1,2},{3,4}}''::int8[], 4)'),
    ('SELECT minhash_jaccard(''{1,NULL}''::int4[], ''{1,2}'')'),
    ('SELECT minhash_jaccard(''{}''::int4[], ''{}'')'),
    ('SELECT minhash_jaccard(''{{1,2}}''::int4[], ''{1,2}'')'),
    ('SELECT minhash_jaccard(''{1,2}''::int4[], ''{1,2,3}'')'),
    ('SELECT minhash_bands(''{1,2,3,4}''::int4[], 2147483647, 2147483647)'),
    ('SELECT minhash_bands(''{1,2,3,4}''::int4[], 0, 1)'),
    ('SELECT minhash_bands(array_fill(1, ARRAY[8193]), 1, 1)'),
    ('SELECT minhash_lsh_params(''NaN'', 128)'),
    ('SELECT minhash_lsh_params(0.5, 128, ''Infinity'', 1)'),
    ('SELECT minhash_lsh_params(0.5, 128, 0, 0)'),
    ('SELECT minhash_lsh_params(0.5, 8193)'),
    ('SELECT minhash_bbit(''{1,2,3,4}''::int4[], 0)'),
    ('SELECT minhash_bbit(''{1,2,3,4}''::int4[], 33)'),
    ('SELECT minhash_bbit_jaccard(''\x''::bytea, ''\x''::bytea)'),
    ('SELECT minhash_bbit_jaccard(''\xffffffffffffffff''::bytea, ''\xffffffffffffffff''::bytea)'),
    ('SELECT minhash_bbit_jaccard(minhash_bbit(''{1,2,3,4}'', 1), minhash_bbit(''{1,2,3,4}'', 2))'),
    ('SELECT minhash_bbit_jaccard(minhash_bbit(''{1,2,3,4}'', 1), minhash_bbit(''{1,2,3,4,5}'', 1))'),
    ('SELECT jaccard(''{{1,2}}''::int8[], ''{1}'')'),
    ('SELECT jaccard(''a b'', ''a c'', 65)')
) v(q);
SELECT jaccard('{}'::int8[], '{}'::int8[]), jaccard('{NULL,NULL}'::int8[], '{1}'::int8[]),
       jaccard('[5:6]={1,2}'::int8[], '{1}'::int8[]), jaccard('', '');

-- simhash: weights, NULLs, lower bounds, dimensions
SELECT simhash('[0:1]={a,b}'::text[], '[7:8]={1,2}'::real[]) = simhash('{a,b}'::text[], '{1,2}'::real[]);
SELECT simhash('{a,b}'::text[], '{0,0}'::real[]), simhash('{a,b}'::text[], '{NULL,NULL}'::real[]),
       simhash('{NULL,NULL}'::text[], '{1,1}'::real[]), simhash('{}'::int8[], '{}'::real[]);
SELECT q, pg_temp.err(q) FROM (VALUES
    ('SELECT simhash(''{a,b}''::text[], ''{1}''::real[])'),
    ('SELECT simhash(''{a,b}''::text[], ''{1,NaN}''::real[])'),
    ('SELECT simhash(''{a,b}''::text[], ''{1,-Infinity}''::real[])'),
    ('SELECT simhash(''{a,b}''::text[], ''{{1,2}}''::real[])'),
    ('SELECT simhash(''{{a,b}}''::text[])'),
    ('SELECT simhash(''a:1 b:2''::tsvector, 0)'),
    ('SELECT simhash(''a b'', 1, '' char'')'),
    ('SELECT text_shingles(''a b'', 0)'),
    ('SELECT simhash_agg(x, w) FROM (VALUES (''a''::text, ''NaN''::real)) v(x, w)')
) v(q);
SELECT text_tokens(''), text_shingles('', 2), shingle_hashes(''), simhash(''), simhash(to_tsvector('simple', ''));

-- the types' text input
SELECT q, pg_temp.err(q) FROM (VALUES
    ('SELECT ''''::simhash64'),
    ('SELECT '' 00000000000000001''::simhash64'),
    ('SELECT ''0x00000000000000''::simhash64'),
    ('SELECT ''(0000000000000000,-99999999999)''::hamming_ball'),
    ('SELECT ''(0000000000000000,)''::hamming_ball'),
    ('SELECT ''(000000000000000g,1)''::hamming_ball'),
    ('SELECT ''\x0102''::bytea::simhash64'),
    ('SELECT B''101''::simhash64')
) v(q);
SELECT hamming_ball('0000000000000000', -2147483648);
SELECT hamming_ball('0000000000000000', 2147483647);
SELECT ' ( 0000000000000000 , +3 ) '::hamming_ball;

-- The fingerprints of feature strings and lexemes do not depend on the
-- database encoding: computed here (UTF8), then in a LATIN1 database
SELECT simhash(convert_from('\x6ac2b56d20c2bc20c3a9'::bytea, 'UTF8')) AS fold \gset
SELECT convert_from('\xc3a974c3a9'::bytea, 'UTF8') AS ete \gset
SELECT simhash(ARRAY[:'ete', 'x']) AS arr, simhash(ARRAY[:'ete'], '{2}'::real[]) AS warr,
       minhash(ARRAY[:'ete', 'x'], 4) AS mh,
       (SELECT simhash_agg(f) FROM unnest(ARRAY[:'ete', 'x']) f) AS agg,
       simhash(('''' || :'ete' || ''':1 caf:2 x:3')::tsvector) AS tsv,
       simhash(:'ete' || ' caf x') AS doc \gset
\set regressdb :DBNAME
CREATE DATABASE regression_neardup_latin1 ENCODING 'LATIN1' TEMPLATE template0 LOCALE 'C';
\c regression_neardup_latin1
CREATE EXTENSION neardup;
SELECT convert_from('\xc3a974c3a9'::bytea, 'UTF8') AS ete \gset
SELECT simhash(ARRAY[:'ete', 'x'])::text = :'arr' AS arr,
       simhash(ARRAY[:'ete'], '{2}'::real[])::text = :'warr' AS warr,
       minhash(ARRAY[:'ete', 'x'], 4)::text = :'mh' AS mh,
       (SELECT simhash_agg(f) FROM unnest(ARRAY[:'ete', 'x']) f)::text = :'agg' AS agg,
       simhash(('''' || :'ete' || ''':1 caf:2 x:3')::tsvector)::text = :'tsv' AS tsv,
       simhash(:'ete' || ' caf x')::text = :'doc' AS doc,
       jaccard(ARRAY[:'ete'], ARRAY[convert_from('\xc3a974c3a9'::bytea, 'UTF8')]) AS same;
-- tokens and shingles come back in the database's encoding (LATIN1 bytes
-- fe e6 for thorn and ae), not as UTF-8 bytes read as LATIN1
SELECT t::bytea, octet_length(t), length(t)
FROM unnest(text_tokens(convert_from('\xc3bec3a620c3a92061'::bytea, 'UTF8'))) t;
SELECT t::bytea FROM unnest(text_shingles(convert_from('\xc3bec3a620c3a92061'::bytea, 'UTF8'), 2)) t;
-- folded tokens the encoding cannot hold (the micro sign folds to Greek
-- mu, NFKC makes U+2044 of the one-quarter sign): such a character is
-- written as a \u escape, not an error, and the fingerprint is the UTF8
-- database's
SELECT text_tokens(convert_from('\xc2b5'::bytea, 'UTF8'));
SELECT text_tokens(convert_from('\x6ac2b56d20c2bc20c3a9'::bytea, 'UTF8'));
SELECT text_shingles(convert_from('\x6ac2b56d20c2bc20c3a9'::bytea, 'UTF8'), 2);
SELECT simhash(convert_from('\x6ac2b56d20c2bc20c3a9'::bytea, 'UTF8'))::text = :'fold' AS same_fold_simhash;
\c :regressdb
DROP DATABASE regression_neardup_latin1;

-- SQL_ASCII: bytes above 127 are taken as they are (invalid UTF-8
-- separates tokens), not rejected by a conversion to UTF-8
CREATE DATABASE regression_neardup_ascii ENCODING 'SQL_ASCII' TEMPLATE template0 LOCALE 'C';
\c regression_neardup_ascii
CREATE EXTENSION neardup;
SELECT text_tokens(E'\xe9t\xe9 caf\xe9 ok');
SELECT simhash(E'\xe9t\xe9 caf\xe9 ok') = simhash('t caf ok');
SELECT minhash(E'\xe9t\xe9 caf\xe9', 4) = minhash('t caf', 4), jaccard(E'caf\xe9 x', 'caf x');
-- valid UTF-8 is read as UTF-8, as in a UTF8 database
SELECT text_tokens(E'Caf\xc3\xa9');
\c :regressdb
DROP DATABASE regression_neardup_ascii;
