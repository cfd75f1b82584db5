-- Once, before the first nightly run (doc/dedup.md, "A nightly job"):
-- where the job keeps its pairs and how far it got, the flag it sets, and
-- the GIN index its probes use.  Idempotent.
CREATE TABLE IF NOT EXISTS dedup_pair (
    id_a     bigint NOT NULL,
    id_b     bigint NOT NULL,
    distance int    NOT NULL,
    PRIMARY KEY (id_a, id_b)
);
CREATE TABLE IF NOT EXISTS dedup_state (
    job     text PRIMARY KEY,
    last_id bigint              -- the largest id the last run saw
);
INSERT INTO dedup_state VALUES ('doc', NULL) ON CONFLICT DO NOTHING;
ALTER TABLE doc ADD COLUMN IF NOT EXISTS is_dup boolean NOT NULL DEFAULT false;
CREATE INDEX IF NOT EXISTS doc_sh_gin ON doc USING gin (sh);
