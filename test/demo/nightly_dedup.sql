-- The nightly dedup job (doc/dedup.md, "A nightly job"): fingerprints the
-- rows added since the last run, finds their near-duplicates among all rows
-- (index probes of the new rows when they are few, else the full search),
-- keeps the pairs, re-clusters all
-- kept pairs and flags every row of a cluster but the longest text.
-- Tables: doc(id, body, sh, is_dup) and the job's own (nightly_setup.sql).
-- Plain SQL in one transaction: run it with psql -f from cron, or give it
-- to pg_cron.  Running it twice in a row changes nothing.
BEGIN;
-- Writers wait while the job runs, and every insert that committed before
-- it is seen: no row can slip in under last_id unnoticed.
LOCK TABLE doc IN SHARE MODE;

UPDATE doc SET sh = simhash(body) WHERE sh IS NULL;

-- Pairs of deleted rows go: the kept pairs stay those of the rows there.
DELETE FROM dedup_pair p
WHERE NOT EXISTS (SELECT FROM doc WHERE doc.id = p.id_a)
   OR NOT EXISTS (SELECT FROM doc WHERE doc.id = p.id_b);

WITH new_pair AS (
    INSERT INTO dedup_pair
    SELECT * FROM simhash_pairs_since('doc', 'id', 'sh',
                                      (SELECT last_id FROM dedup_state WHERE job = 'doc'),
                                      max_distance => 3)
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT count(*) AS new_pairs FROM new_pair;

SELECT dedup_keep_one('doc', 'id', 'SELECT id_a, id_b FROM dedup_pair',
                      keep_order => 'octet_length(body) DESC',
                      flag_column => 'is_dup') AS flags_changed;

UPDATE dedup_state SET last_id = (SELECT max(id) FROM doc) WHERE job = 'doc';

SELECT count(*) AS rows, count(*) FILTER (WHERE is_dup) AS flagged,
       (SELECT count(*) FROM dedup_pair) AS pairs_kept,
       (SELECT last_id FROM dedup_state WHERE job = 'doc') AS last_id
FROM doc;
COMMIT;
