-- doc/index-hamming.md: docs(id, body, fp, sh), hash-partitioned in two, so
-- that the page's per-partition example has a partitioned hamming index
-- docs_sh_idx to look at.
CREATE TABLE docs (id bigint PRIMARY KEY, body text, fp simhash64, sh simhash64)
    PARTITION BY HASH (id);
CREATE TABLE docs_p0 PARTITION OF docs FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE docs_p1 PARTITION OF docs FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO docs (id, body) VALUES
  (1, 'The quick brown fox jumps over the lazy dog near the river bank today'),
  (2, 'The quick brown fox jumps over the lazy dog near the river bank today!'),
  (3, 'An entirely different sentence about databases and indexes'),
  (42, 'the quick brown fox jumps over the lazy dog near the river bank today');
UPDATE docs SET fp = simhash(body), sh = simhash(body);
CREATE INDEX docs_sh_idx ON docs USING hamming (sh);
