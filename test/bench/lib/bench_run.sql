-- bench_run(query): the wall time of one query returning one number, and
-- that number (test/bench/pairs.sql, clusters.sql).
CREATE OR REPLACE FUNCTION bench_run(q text, OUT seconds numeric, OUT result bigint) AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE q INTO result;
    seconds := round(extract(epoch FROM clock_timestamp() - t0)::numeric, 3);
END $$ LANGUAGE plpgsql;
