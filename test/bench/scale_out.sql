--
-- Timing functions of the sharding benchmark (test/bench/run_scale_out.sh),
-- created on the coordinator (docs: partitioned over foreign partitions)
-- and on the single node (docs: a local table with the same rows), so that
-- the same query text runs on both.  Needs test/e2e/lib/index_check.sql
-- (nd_row_code) and, for the per-shard KNN, test/e2e/lib/scale_out.sql.
--

-- Query codes: the code of row 1 + (k * 7919) mod rows for the k-th query,
-- taken among planted rows (near-duplicates exist: i % 50 in 10..21) or
-- random rows (the nearest other code is ~15 bits away: i % 50 >= 22).
CREATE FUNCTION nd_bench_code(k int, kind text, rows bigint) RETURNS simhash64
LANGUAGE sql IMMUTABLE
AS $$
SELECT nd_row_code(i - i % 50 + CASE kind WHEN 'planted' THEN 10 + k % 12 ELSE 22 + k % 28 END)
FROM (SELECT 50 + (k::bigint * 7919 * 50) % (rows - 50) AS i) s
$$;

/*
 * nd_bench(query, kind, n, rows): runs query (with $1 = the k-th query code
 * of the kind) for k = 1..n, each once to warm and then timed, and returns
 * the median and 90th percentile in ms and the total of the counts the
 * query returned (the same on both setups, or a result differs).
 */
CREATE FUNCTION nd_bench(query text, kind text, n int, rows bigint,
                         OUT median_ms float8, OUT p90_ms float8, OUT total bigint)
LANGUAGE plpgsql
AS $$
DECLARE
    t float8[] := '{}';
    t0 timestamptz;
    c bigint;
    q simhash64;
BEGIN
    total := 0;
    FOR k IN 1..n LOOP
        q := nd_bench_code(k, kind, rows);
        EXECUTE query INTO c USING q;
        t0 := clock_timestamp();
        EXECUTE query INTO c USING q;
        t := t || extract(epoch FROM clock_timestamp() - t0) * 1000;
        total := total + c;
    END LOOP;
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x),
           percentile_cont(0.9) WITHIN GROUP (ORDER BY x)
    INTO median_ms, p90_ms FROM unnest(t) x;
END
$$;
