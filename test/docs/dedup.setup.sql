-- doc/dedup.md and its parts (dedup-pairs.md, dedup-keep-one.md,
-- dedup-incremental.md, nightly-job.md: their fixtures are links to this
-- file): the pages' tables.  docs(id, body, sh, ...) holds near-copies
-- (rows 1-3, 4-5); doc(id, body, sh) is the table of the incremental
-- clusters and of the nightly job; dedup_pair and minhash_pair are the
-- pairs tables of the incremental runs.
CREATE TABLE docs (
    id         bigint PRIMARY KEY,
    body       text,
    sh         simhash64,
    lang       text DEFAULT 'en',
    created_at timestamptz DEFAULT now(),
    is_dup     boolean NOT NULL DEFAULT false
);
INSERT INTO docs (id, body) VALUES
  (1, 'The quick brown fox jumps over the lazy dog near the river bank today'),
  (2, 'The quick brown fox jumps over the lazy dog near the river bank today!'),
  (3, 'the quick brown fox jumps over the lazy dog near the river bank today'),
  (4, 'Near-duplicate detection inside PostgreSQL finds copies of documents in tables'),
  (5, 'Near-duplicate detection inside PostgreSQL finds copies of documents in tables.'),
  (6, 'An entirely different sentence about databases and indexes');
UPDATE docs SET sh = simhash(body);
CREATE TABLE doc (id bigserial PRIMARY KEY, body text, sh simhash64);
INSERT INTO doc (body) SELECT body FROM docs ORDER BY id;
UPDATE doc SET sh = simhash(body);
CREATE TABLE dedup_pair (id_a bigint, id_b bigint, distance int4, PRIMARY KEY (id_a, id_b));
CREATE TABLE minhash_pair (id_a bigint, id_b bigint, PRIMARY KEY (id_a, id_b));
-- the largest id the previous nightly run saw
\set last_id 3
