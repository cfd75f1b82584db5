--
-- simhash(text): pinned fingerprints (a change in tokenizing or hashing must
-- show up here), defaults, parameters and the near-duplicate property.
--

SELECT simhash('The quick brown fox jumps over the lazy dog');
SELECT simhash('The quick brown fox jumps over the lazy dog', shingle => 1);
SELECT simhash('The quick brown fox jumps over the lazy dog', shingle => 4, unit => 'char');
SELECT simhash('The quick brown fox jumps over the lazy dog', seed => 1);
SELECT simhash('The quick brown fox jumps over the lazy dog', seed => -1);
SELECT simhash('Ein schöner Tag in Köln, über den Rhein');
SELECT simhash('我爱北京天安门，天安门上太阳升');
SELECT simhash('word');

-- Defaults are shingle 3, unit word, seed 0.
SELECT simhash('a b c d e f') = simhash('a b c d e f', 3, 'word', 0) AS defaults;

-- Case, punctuation and spacing do not matter.
SELECT simhash('the QUICK brown fox, jumps over... the lazy dog!')
     = simhash('The quick brown fox jumps over the lazy dog') AS normalized;

-- simhash(text) is the simhash of its shingle hashes.
SELECT simhash(t) = simhash(shingle_hashes(t)) AS same_features,
       simhash(t, 2, 'char', 9) = simhash(shingle_hashes(t, 2, 'char', 9)) AS same_char_features
FROM (VALUES ('Lorem ipsum dolor sit amet, consectetur adipiscing elit')) v(t);

-- No tokens, no fingerprint.
SELECT simhash('') IS NULL AS empty, simhash('  ,.;  ') IS NULL AS separators_only;

-- Near-duplicates: a 300-word text against itself with one word changed,
-- and against an unrelated text of the same length.
CREATE TEMP TABLE words AS
SELECT i, substr(md5(i::text), 1, 3 + i % 6) AS w FROM generate_series(1, 300) i;
CREATE TEMP TABLE texts AS
SELECT (SELECT string_agg(w, ' ' ORDER BY i) FROM words) AS original,
       (SELECT string_agg(CASE WHEN i = 150 THEN 'changed' ELSE w END, ' ' ORDER BY i) FROM words) AS one_word_changed,
       (SELECT string_agg(md5(w), ' ' ORDER BY i) FROM words) AS unrelated;
SELECT simhash(original) <~> simhash(one_word_changed) AS one_word_changed,
       simhash(original) <~> simhash(unrelated) AS unrelated
FROM texts;

-- The same fingerprint in a database of another encoding: text is taken as
-- Unicode whatever the server encoding.
SELECT current_database() AS regression_db, simhash('Grüße aus Köln, ½ Maß') AS in_utf8 \gset
CREATE DATABASE neardup_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c neardup_latin1
SET client_encoding = 'UTF8';
SET client_min_messages = warning;
CREATE EXTENSION neardup;
SELECT simhash('Grüße aus Köln, ½ Maß') = :'in_utf8' AS same_in_latin1_database,
       text_tokens('Grüße aus Köln, ½ Maß');
\c :regression_db
DROP DATABASE neardup_latin1;

-- STRICT: NULL in, NULL out.
SELECT simhash(NULL::text) IS NULL, simhash('a', NULL::int) IS NULL, simhash('a', 3, NULL) IS NULL, simhash('a', 3, 'word', NULL) IS NULL;

\set VERBOSITY sqlstate
SELECT simhash('abc', 0);
SELECT simhash('abc', -3);
SELECT simhash('abc', 100000);
SELECT simhash('abc', 3, 'sentence');
\set VERBOSITY default
SELECT simhash('abc', 3, 'sentence');
