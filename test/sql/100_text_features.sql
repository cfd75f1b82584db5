--
-- Text → features: what the fingerprints see.
--

-- Words: case folded, split on anything that is not a letter, digit or mark.
SELECT text_tokens('Hello, World! Don''t panic: 42 is the_answer.');
-- Unicode: diacritics folded for Latin/Greek/Cyrillic, full case folding,
-- compatibility forms (fullwidth letters, ligatures) normalized.
SELECT text_tokens('Café STRASSE naïve Ｐｙｔｈｏｎ ﬁnance ΣΊΣΥΦΟΣ Москва');
-- NFC and NFD spellings give the same tokens.
SELECT text_tokens(U&'cafe\0301') = text_tokens(U&'caf\00e9') AS nfd_equals_nfc;
-- Scripts written without spaces: every character is a token.
SELECT text_tokens('我爱北京天安门 and Tokyo 東京タワー');
SELECT text_tokens('ภาษาไทย');
-- Korean is written with spaces: syllables stay words.
SELECT text_tokens('한국어 텍스트');
-- Soft hyphen and zero-width joiner do not split a word.
SELECT text_tokens(U&'co\00adoperate zero\200dwidth');
-- Character unit: one token per character, one space per separator run.
SELECT text_tokens('  Ab, cd. ', 'char');
SELECT text_tokens('Ab', unit => 'CHAR');
-- Nothing to tokenize.
SELECT text_tokens(''), text_tokens(' ,.;!? '), text_tokens(E'\t\n');
SELECT text_tokens('') = '{}' AS canonical_empty, text_shingles('...') = '{}' AS no_shingles,
       array_ndims(text_tokens('')) IS NULL AS no_dimensions;

-- Shingles: runs of `shingle` consecutive tokens (3 by default).
SELECT text_shingles('The quick brown fox jumps');
SELECT text_shingles('The quick brown fox jumps', 2);
SELECT text_shingles('The quick brown fox jumps', shingle => 1);
-- Fewer tokens than a shingle: one shingle of all of them.
SELECT text_shingles('two words');
SELECT text_shingles('abc de', 3, 'char');
SELECT text_shingles('');

-- The feature hashes simhash(text) votes with, one per shingle.
SELECT shingle_hashes('The quick brown fox');
SELECT shingle_hashes('The quick brown fox', seed => 42);
SELECT shingle_hashes('the QUICK brown, fox!') = shingle_hashes('The quick brown fox') AS folded;
SELECT cardinality(shingle_hashes(repeat('word ', 1000))) AS shingles_of_1000_words;
SELECT cardinality(shingle_hashes(repeat('word ', 1000), 5, 'char')) AS char_5grams;
-- A long token is hashed in full: two tokens sharing a long prefix differ.
SELECT shingle_hashes(repeat('x', 1000) || 'a', 1) = shingle_hashes(repeat('x', 1000) || 'b', 1) AS long_tokens_collide;

-- Bad parameters: clear errors.
\set VERBOSITY sqlstate
SELECT text_tokens('abc', 'words');
SELECT text_tokens('abc', '');
SELECT text_shingles('abc', 0);
SELECT text_shingles('abc', -1);
SELECT text_shingles('abc', 65);
SELECT shingle_hashes('abc', 2147483647);
\set VERBOSITY default
SELECT text_shingles('abc', 0);
SELECT text_tokens('abc', 'words');
-- STRICT: NULL in, NULL out.
SELECT text_tokens(NULL) IS NULL, text_shingles('a', NULL) IS NULL, shingle_hashes('a', seed => NULL) IS NULL;
