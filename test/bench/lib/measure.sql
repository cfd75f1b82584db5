-- One measurement of test/bench/clusters.sql in a fresh backend: :what,
-- :q (a query returning one number), :round, at work_mem :wm.
\c
\o /dev/null
SET client_min_messages = warning;
SET work_mem = :'wm';
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT bench_temp() AS temp0, bench_status('VmHWM') AS hwm0 \gset
SELECT * FROM bench_run(:'q') \gset
SELECT bench_status('VmHWM') - bench_status('RssShmem') AS peak \gset
SELECT pg_stat_force_next_flush();
SELECT pg_sleep(0.2);
SELECT pg_stat_clear_snapshot();
INSERT INTO bench_result VALUES (:'what' || ' (work_mem ' || :'wm' || ')', :round, :seconds, :result,
                                 round(bench_temp() - :temp0, 1), round(:peak, 1));
\o
