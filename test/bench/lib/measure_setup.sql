-- What lib/measure.sql needs: the results table, the backend's memory
-- from /proc/self/status (MB) and the database's temporary bytes written
-- (MB).  Run once, before the measurements.
DROP TABLE IF EXISTS bench_result;
CREATE TABLE bench_result (what text, round int, seconds numeric, result bigint, temp_mb numeric, peak_mb numeric);

-- bench_measure: run in a fresh backend; the stats of the previous
-- statement are flushed before temp_bytes is read again.
CREATE OR REPLACE FUNCTION bench_status(field text) RETURNS numeric LANGUAGE sql AS $$
    SELECT (regexp_match(pg_read_file('/proc/self/status'), field || ':\s+(\d+) kB'))[1]::numeric / 1024
$$;
CREATE OR REPLACE FUNCTION bench_temp() RETURNS numeric LANGUAGE sql AS $$
    SELECT temp_bytes / 1048576.0 FROM pg_stat_database WHERE datname = current_database()
$$;
\ir bench_run.sql
