-- The report of one kind of night (test/bench/clusters_update.sql): the
-- best of the rounds, and each way against the full run of the same night.
\echo == :rows rows (one group of :group identical), :new new (:near_group near the group), :gone deleted, index :am
SELECT what, min(seconds) AS best_seconds, min(result) AS rows_changed,
       round(min(seconds) / (SELECT min(seconds) FROM r WHERE what LIKE 'full%'), 3) AS x_full_run
FROM r GROUP BY what ORDER BY x_full_run;
TRUNCATE r;
