--
-- simhash(tsvector): PostgreSQL's text search as the tokenizer.
--

SELECT simhash(to_tsvector('english', 'The quick brown foxes jumped over the lazy dogs'));
-- Stemming and stop words: different wording, same lexeme sequence.
SELECT simhash(to_tsvector('english', 'The quick brown foxes jumped over the lazy dogs'))
     = simhash(to_tsvector('english', 'A quick brown fox jumps over a lazy dog')) AS same_after_stemming;
-- With the 'simple' configuration the lexemes are the folded words: the
-- same fingerprint as simhash(text).
SELECT simhash(to_tsvector('simple', 'alpha beta gamma delta epsilon'))
     = simhash('Alpha beta gamma delta epsilon') AS simple_matches_text,
       simhash(to_tsvector('simple', 'alpha beta gamma delta'), 2, 5)
     = simhash('alpha beta gamma delta', 2, 'word', 5) AS with_parameters;
-- Lexeme positions give the order: a reordered text differs.
SELECT simhash(to_tsvector('simple', 'alpha beta gamma delta'))
     = simhash(to_tsvector('simple', 'delta gamma beta alpha')) AS order_matters;
-- A stripped tsvector has no positions: its lexemes count as single features.
SELECT simhash(strip(to_tsvector('simple', 'alpha beta gamma delta')))
     = simhash(to_tsvector('simple', 'delta gamma beta alpha'), shingle => 1) AS stripped_is_bag;
SELECT simhash(to_tsvector('german', 'Die Häuser sind schön und die Straßen sind breit'));
SELECT simhash(''::tsvector) IS NULL AS empty,
       simhash(to_tsvector('english', 'the and of')) IS NULL AS only_stop_words;
SELECT simhash(NULL::tsvector) IS NULL AS strict;

\set VERBOSITY sqlstate
SELECT simhash(to_tsvector('simple', 'a b'), 0);
SELECT simhash(to_tsvector('simple', 'a b'), 65);
\set VERBOSITY default
SELECT simhash(to_tsvector('simple', 'a b'), 0);
