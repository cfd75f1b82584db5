-- doc/fingerprints.md: doc(id, body, sh) with a near-copy pair (1, 2).
CREATE TABLE doc (id bigserial PRIMARY KEY, body text, sh simhash64);
INSERT INTO doc (body) VALUES
  ('The quick brown fox jumps over the lazy dog near the river bank'),
  ('The quick brown fox jumps over the lazy dog near the river bank today'),
  ('An entirely different sentence about databases and indexes');
UPDATE doc SET sh = simhash(body);
