-- doc/planner.md: docs(id, body, fp) with near-copies (1, 2, 42).
CREATE TABLE docs (id bigint PRIMARY KEY, body text, fp simhash64);
INSERT INTO docs (id, body) VALUES
  (1, 'The quick brown fox jumps over the lazy dog near the river bank today'),
  (2, 'The quick brown fox jumps over the lazy dog near the river bank today!'),
  (3, 'An entirely different sentence about databases and indexes'),
  (42, 'the quick brown fox jumps over the lazy dog near the river bank today');
UPDATE docs SET fp = simhash(body);
