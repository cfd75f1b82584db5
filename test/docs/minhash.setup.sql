-- doc/minhash.md: docs(id, body); the page adds the signature column.
CREATE TABLE docs (id bigint PRIMARY KEY, body text);
INSERT INTO docs (id, body) VALUES
  (1, 'the query text'),
  (2, 'The quick brown fox jumps over the lazy dog near the river bank today'),
  (3, 'The quick brown fox jumps over the lazy dog near the river bank today!'),
  (4, 'An entirely different sentence about databases and indexes');
