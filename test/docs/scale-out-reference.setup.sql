-- doc/scale-out-reference.md: the coordinator's docs, hash-partitioned by id, with
-- local partitions standing in for the shards' foreign tables (the
-- multi-node setup itself is test/tap/t/020_scale_out.pl's), each with its
-- index; near-copies 1, 2, 3 land on different partitions.
CREATE TABLE docs (id bigint NOT NULL, sh simhash64) PARTITION BY HASH (id);
CREATE TABLE docs_s1 PARTITION OF docs FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE docs_s2 PARTITION OF docs FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE docs_s3 PARTITION OF docs FOR VALUES WITH (MODULUS 3, REMAINDER 2);
CREATE INDEX ON docs USING hamming (sh);
INSERT INTO docs VALUES
  (1, 'b72c529bcc2a2097'), (2, 'b72c529bcc2a2096'), (3, 'b72c529bcc2a2093'),
  (4, '0123456789abcdef'), (5, 'fedcba9876543210'), (6, NULL);
ANALYZE docs;
