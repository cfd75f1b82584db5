-- The nightly dedup job (doc/nightly-job.md): fingerprints the
-- rows added since the last run, brings the cluster of every row up to
-- date (index probes of the new rows when they are few, else a full run;
-- deleted rows leave their clusters), and in each cluster that changed
-- flags every row but the longest text.  Its state is a cluster id per
-- row, never the pairs: linear in the rows however large the groups.
-- Tables: doc(id, body, sh, is_dup) and the job's own (nightly_setup.sql).
-- Plain SQL in one transaction: run it with psql -f from cron, or give it
-- to pg_cron.  Running it twice in a row changes nothing.
BEGIN;
-- Writers wait while the job runs, and every insert that committed before
-- it is seen: no row can slip in under last_id unnoticed.
LOCK TABLE doc IN SHARE MODE;

UPDATE doc SET sh = simhash(body) WHERE sh IS NULL;

TRUNCATE dedup_change;
INSERT INTO dedup_change
SELECT * FROM simhash_clusters_update('dedup_cluster', 'doc', 'id', 'sh',
                                      (SELECT last_id FROM dedup_state WHERE job = 'doc'),
                                      max_distance => 3,
                                      deleted => ARRAY(SELECT id FROM dedup_deleted));
DELETE FROM dedup_deleted;

-- A row that left every cluster is nobody's duplicate.
UPDATE doc SET is_dup = false
FROM dedup_change c
WHERE doc.id = c.id AND c.cluster_id IS NULL AND doc.is_dup;

-- One row kept in each cluster that gained, lost or merged rows.
SELECT dedup_keep_one('doc', 'id',
                      'SELECT id, cluster_id FROM dedup_cluster
                       WHERE cluster_id IN (SELECT cluster_id FROM dedup_change
                                            UNION SELECT old_cluster_id FROM dedup_change)',
                      keep_order => 'octet_length(body) DESC',
                      flag_column => 'is_dup') AS flags_changed;

UPDATE dedup_state SET last_id = (SELECT max(id) FROM doc) WHERE job = 'doc';

SELECT count(*) AS rows, count(*) FILTER (WHERE is_dup) AS flagged,
       (SELECT count(*) FROM dedup_cluster) AS clustered,
       (SELECT count(*) FROM dedup_change) AS changed,
       (SELECT last_id FROM dedup_state WHERE job = 'doc') AS last_id
FROM doc;
COMMIT;
