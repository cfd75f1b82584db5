--
-- Helpers of the block-layout benchmark (test/bench/run_scale_out_blocks.sh),
-- created on the coordinator, the single node and the shards.
--

/*
 * The nightly data set, row i of n (1..n): the mix of doc/dedup.md's 10M
 * clusters benchmark with ids 1..n: 80% random codes, 10% one group of
 * identical codes (an error page, an empty body), 10% groups of 10 near
 * copies (0..3 bits off their group's code).  So 20% of the rows have a
 * near copy; the rest have none (random codes are ~15 bits apart).
 */
CREATE FUNCTION nd_night_code(i bigint, n bigint) RETURNS simhash64
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
-- one expression without FROM, so that it is inlined (a body with FROM runs
-- through the SQL-function executor for every row: minutes at 10M rows);
-- past 90%: j = i - n * 9 / 10 in groups of 10, j % (n / 100) the group
SELECT CASE
    WHEN i <= n * 8 / 10 THEN hashint8extended(i, 11)::simhash64
    WHEN i <= n * 9 / 10 THEN 'deadbeefdeadbeef'::simhash64
    ELSE (hashint8extended((i - n * 9 / 10) % greatest(n / 100, 1), 12)
          # CASE WHEN (i - n * 9 / 10) / greatest(n / 100, 1) % 4 >= 1
                 THEN 1::bigint << (hashint8extended(i - n * 9 / 10, 13) & 63)::int ELSE 0 END
          # CASE WHEN (i - n * 9 / 10) / greatest(n / 100, 1) % 4 >= 2
                 THEN 1::bigint << (hashint8extended(i - n * 9 / 10, 14) & 63)::int ELSE 0 END
          # CASE WHEN (i - n * 9 / 10) / greatest(n / 100, 1) % 4 >= 3
                 THEN 1::bigint << (hashint8extended(i - n * 9 / 10, 15) & 63)::int ELSE 0 END)::simhash64
END
$$;

/*
 * The partition of a layout's copy that holds block value v (the inverse of
 * simhash_layout_create's ranges, as simhash_layout_within_sql computes it),
 * for loading a shard's tables on the shard itself.
 */
CREATE FUNCTION nd_block_partition(v bigint, width int, partitions int) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT (((v + 1) * partitions + (1::bigint << width) - 1) / (1::bigint << width) - 1)::int $$;

/*
 * On the coordinator: for the first n query codes of a kind (nd_bench_code),
 * the distinct servers that simhash_layout_within(layout, code, r) reads
 * (the partitions its SQL names, mapped to their foreign servers):
 * 'max/mean' over the codes.
 */
CREATE FUNCTION nd_layout_servers(layout text, kind text, n int, rows bigint, r int) RETURNS text
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    res text;
BEGIN
    SELECT max(c) || '/' || round(avg(c), 2) INTO res
    FROM (SELECT k, count(DISTINCT s.srvname) AS c
          FROM generate_series(1, n) k,
               regexp_matches(simhash_layout_within_sql(layout::regclass, nd_bench_code(k, kind, rows), r),
                              'FROM public\.([a-z0-9_]+)', 'g') m
          JOIN pg_class cl ON cl.relname = m[1] AND cl.relnamespace = 'public'::regnamespace
          JOIN pg_foreign_table f ON f.ftrelid = cl.oid
          JOIN pg_foreign_server s ON s.oid = f.ftserver
          GROUP BY k) x;
    RETURN res;
END
$$;

/*
 * On the coordinator: where simhash_layout_within's time goes, over the
 * first n codes of a kind at radius r (each run once to warm, then timed):
 * the p50 in ms of building its SQL (simhash_layout_within_sql) and of
 * running that SQL (planning on the coordinator, the shards' answers).
 */
CREATE FUNCTION nd_within_split(layout text, kind text, n int, rows bigint, r int) RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    tb float8[] := '{}';
    te float8[] := '{}';
    t0 timestamptz;
    sql text;
    c bigint;
    q simhash64;
BEGIN
    FOR k IN 1..n LOOP
        q := nd_bench_code(k, kind, rows);
        sql := simhash_layout_within_sql(layout::regclass, q, r);
        EXECUTE 'SELECT count(*) FROM (' || sql || ') x' INTO c;
        t0 := clock_timestamp();
        sql := simhash_layout_within_sql(layout::regclass, q, r);
        tb := tb || extract(epoch FROM clock_timestamp() - t0) * 1000;
        t0 := clock_timestamp();
        EXECUTE 'SELECT count(*) FROM (' || sql || ') x' INTO c;
        te := te || extract(epoch FROM clock_timestamp() - t0) * 1000;
    END LOOP;
    RETURN format('build the SQL %s ms, run it %s ms',
                  (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(tb) x),
                  (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(te) x));
END
$$;

/*
 * On the coordinator: queries[i] (with $1 = the k-th code of a kind) for
 * k = 1..n, each query in turn for the same code (each once to warm, then
 * timed), so that every query sees the same drift of the machine's load;
 * per query, the median and 90th percentile in ms and the total of the
 * counts it returned.
 */
CREATE FUNCTION nd_bench_rotation(queries text[], kind text, n int, rows bigint)
RETURNS TABLE(query_no int, median_ms float8, p90_ms float8, total bigint)
LANGUAGE plpgsql
AS $$
DECLARE
    nq int := cardinality(queries);
    t float8[] := array_fill(NULL::float8, ARRAY[nq, n]);
    tot bigint[] := array_fill(0::bigint, ARRAY[nq]);
    t0 timestamptz;
    c bigint;
    q simhash64;
BEGIN
    FOR k IN 1..n LOOP
        q := nd_bench_code(k, kind, rows);
        FOR i IN 1..nq LOOP
            EXECUTE queries[i] INTO c USING q;
            t0 := clock_timestamp();
            EXECUTE queries[i] INTO c USING q;
            t[i][k] := extract(epoch FROM clock_timestamp() - t0) * 1000;
            tot[i] := tot[i] + c;
        END LOOP;
    END LOOP;
    FOR i IN 1..nq LOOP
        query_no := i;
        total := tot[i];
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x),
               percentile_cont(0.9) WITHIN GROUP (ORDER BY x)
        INTO median_ms, p90_ms FROM unnest(t[i:i][1:n]) x;
        RETURN NEXT;
    END LOOP;
END
$$;
