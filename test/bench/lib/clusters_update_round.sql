-- One round of a night of test/bench/clusters_update.sql: each way of running the
-- night once, on the same change, rolled back.
BEGIN; SELECT night_change(:new, :near_group, :gone, :rows, :group); SELECT seconds, result FROM bench_run(:'q_inc') \gset
ROLLBACK; INSERT INTO r VALUES ('incremental, deletes found', :seconds, :result);
BEGIN; SELECT night_change(:new, :near_group, :gone, :rows, :group); SELECT seconds, result FROM bench_run(:'q_inc_log') \gset
ROLLBACK; INSERT INTO r VALUES ('incremental, deletes given', :seconds, :result);
BEGIN; SELECT night_change(:new, :near_group, :gone, :rows, :group); SELECT seconds, result FROM bench_run(:'q_full') \gset
ROLLBACK; INSERT INTO r VALUES ('full run (since NULL)', :seconds, :result);
BEGIN; SELECT night_change(:new, :near_group, :gone, :rows, :group); SELECT seconds, result FROM bench_run(:'q_bare') \gset
ROLLBACK; INSERT INTO r VALUES ('bare simhash_clusters', :seconds, :result);
