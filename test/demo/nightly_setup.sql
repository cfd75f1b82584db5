-- Once, before the first nightly run (doc/nightly-job.md):
-- the job's state (a cluster id per row in a cluster, the changes of its
-- last run, the rows deleted since, how far it got), the flag it sets, and the hamming index its
-- probes use (any index simhash_radius_indexes() lists will do: the README's, GIN, GiST, the
-- near-duplicate constraint's).  Idempotent.
CREATE TABLE IF NOT EXISTS dedup_cluster (
    id         bigint PRIMARY KEY,
    cluster_id bigint NOT NULL      -- the smallest id of the cluster
);
CREATE INDEX IF NOT EXISTS dedup_cluster_cluster_id ON dedup_cluster (cluster_id);
CREATE TABLE IF NOT EXISTS dedup_change (
    id             bigint,
    old_cluster_id bigint,
    cluster_id     bigint
);
-- The ids deleted since the last run, logged as they go: the job looks
-- for those only, not for every clustered row.
CREATE TABLE IF NOT EXISTS dedup_deleted (id bigint);
CREATE OR REPLACE FUNCTION dedup_log_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO dedup_deleted SELECT gone.id FROM gone;
    RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER doc_dedup_deleted AFTER DELETE ON doc
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION dedup_log_deleted();
CREATE TABLE IF NOT EXISTS dedup_state (
    job     text PRIMARY KEY,
    last_id bigint              -- the largest id the last run saw
);
INSERT INTO dedup_state VALUES ('doc', NULL) ON CONFLICT DO NOTHING;
ALTER TABLE doc ADD COLUMN IF NOT EXISTS is_dup boolean NOT NULL DEFAULT false;
CREATE INDEX IF NOT EXISTS doc_sh ON doc USING hamming (sh);
