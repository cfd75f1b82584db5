-- doc/index-gist.md: docs(id, body, fp) with near-copies (1, 2, 42), and a
-- fingerprint 1 bit from the page's literal 0123456789abcdef (7).
CREATE TABLE docs (id bigint PRIMARY KEY, body text, fp simhash64);
INSERT INTO docs (id, body) VALUES
  (1, 'The quick brown fox jumps over the lazy dog near the river bank today'),
  (2, 'The quick brown fox jumps over the lazy dog near the river bank today!'),
  (3, 'An entirely different sentence about databases and indexes'),
  (42, 'the quick brown fox jumps over the lazy dog near the river bank today');
UPDATE docs SET fp = simhash(body);
INSERT INTO docs (id, fp) VALUES (7, '0123456789abcdee');
