#!/usr/bin/env bash
# A block-sharded layout's copy search on a shard: the radius search with
# the block's filter (`simhash_block(sh, b, 4) = v AND sh <~> q <= r`, the
# query of 0.3) against the block ball (`sh <@ hamming_block_ball(q, r, b,
# 4)` and the same filter, 0.4's), on one partition of a copy, with a
# sequential scan of it as the baseline, in a throwaway cluster.
#
# The partition: ROWS (default 10M) random codes whose block 2 of 4 lies in
# the first sixteenth of its values, as partition 0 of copy 2 of a layout
# with 16 partitions per copy holds them (a layout of 16 x ROWS rows), with
# a hamming index at default options (4 blocks).  NQ (default 400) queries,
# half near copies of rows (2 bits flipped outside block 2) and half random
# codes with block 2 in the partition's range, at radius R (default 3);
# the two forms alternate query by query, after one pass of both over
# every query in the same session (warm).  Reported per form: p50 and p99
# of the execution time (EXPLAIN ANALYZE) and the mean buffers it touched,
# each form's rows checked equal.
#
#   ROWS=10000000 NQ=400 R=3 bash test/bench/run_block_ball.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=2GB"}
export ROWS=${ROWS:-10000000} NQ=${NQ:-400} R=${R:-3}

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
q -c "CREATE EXTENSION neardup"
# codes with block 2 of 4 (bits 16..31 from the top) below 4096: the top
# 4 bits of the block cleared
q -c "CREATE TABLE part (id bigint PRIMARY KEY, sh simhash64 NOT NULL)" \
  -c "INSERT INTO part SELECT i, ((('x' || md5('p ' || i))::bit(64)::bigint) & ~(15::bigint << 44))::simhash64
      FROM generate_series(1, $ROWS) i"
start=$(date +%s.%N)
q -c "CREATE INDEX part_sh ON part USING hamming (sh)" -c "VACUUM ANALYZE part"
echo "# $ROWS rows in one partition (block 2 of 4 in 0..4095; a layout of $((ROWS * 16)) rows), index built in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s; $ND_PG_OPTS; $(nproc) cores"
q -c "SELECT count(*) FILTER (WHERE simhash_block(sh, 2, 4) >= 4096) AS outside FROM part" | grep -qx 0

q <<EOF
CREATE TABLE qs AS
SELECT k, CASE WHEN k % 2 = 0
               THEN ((SELECT sh FROM part WHERE id = 1 + (k * 7919) % $ROWS)::bigint
                     # (1::bigint << (k % 16)) # (1::bigint << (48 + k % 16)))::simhash64
               ELSE ((('x' || md5('q ' || k))::bit(64)::bigint) & ~(15::bigint << 44))::simhash64 END AS q
FROM generate_series(1, $NQ) k;
CREATE TABLE res (k int, form text, ms float8, buffers int, answer text);
CREATE FUNCTION measure(form text, sql text, k int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
    plan json;
    answer text;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || sql INTO plan;
    EXECUTE sql INTO answer;
    INSERT INTO res VALUES (k, form, (plan -> 0 ->> 'Execution Time')::float8,
        (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::int + (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::int,
        answer);
END \$\$;
DO \$\$
DECLARE
    r record;
    n bigint;
BEGIN
    -- every page both forms read, touched once by this backend first: a
    -- backend's first touch of a shared buffer is a page fault (tens of
    -- microseconds on a virtual machine), which would otherwise fall on
    -- whichever form reads the page first
    FOR r IN SELECT * FROM qs ORDER BY k LOOP
        SELECT count(*) INTO n FROM part WHERE sh <~> r.q <= $R;
        SELECT count(*) INTO n FROM part WHERE sh <@ hamming_block_ball(r.q, $R, 2, 4);
    END LOOP;
    FOR r IN SELECT * FROM qs ORDER BY k LOOP
        PERFORM measure(CASE WHEN r.k % 4 < 2 THEN 'ball' ELSE 'block ball' END,
            format(CASE WHEN r.k % 4 < 2
                   THEN 'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM part WHERE simhash_block(sh, 2, 4) = simhash_block(%1\$L, 2, 4) AND sh <~> %1\$L <= %2\$s'
                   ELSE 'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM part WHERE simhash_block(sh, 2, 4) = simhash_block(%1\$L, 2, 4) AND sh <@ hamming_block_ball(%1\$L, %2\$s, 2, 4)' END,
                   r.q, $R), r.k);
        PERFORM measure(CASE WHEN r.k % 4 < 2 THEN 'block ball' ELSE 'ball' END,
            format(CASE WHEN r.k % 4 < 2
                   THEN 'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM part WHERE simhash_block(sh, 2, 4) = simhash_block(%1\$L, 2, 4) AND sh <@ hamming_block_ball(%1\$L, %2\$s, 2, 4)'
                   ELSE 'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM part WHERE simhash_block(sh, 2, 4) = simhash_block(%1\$L, 2, 4) AND sh <~> %1\$L <= %2\$s' END,
                   r.q, $R), r.k);
    END LOOP;
    -- the baseline: a sequential scan, on 20 of the queries
    SET LOCAL enable_indexscan = off;
    SET LOCAL enable_bitmapscan = off;
    SET LOCAL max_parallel_workers_per_gather = 0;
    FOR r IN SELECT * FROM qs WHERE k <= 20 ORDER BY k LOOP
        PERFORM measure('sequential scan', format(
            'SELECT format(''%%s:%%s'', count(*), sum(id)) FROM part WHERE simhash_block(sh, 2, 4) = simhash_block(%1\$L, 2, 4) AND sh <~> %1\$L <= %2\$s',
            r.q, $R), r.k);
    END LOOP;
END \$\$;
EOF
for form in "sh <~> q.q <= $R" "sh <@ hamming_block_ball(q.q, $R, 2, 4)"; do
	echo "# plan of $form:"
	q -c "EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM part, (SELECT q FROM qs WHERE k = 1) q
	      WHERE simhash_block(sh, 2, 4) = simhash_block(q.q, 2, 4) AND $form" | sed 's/^/#   /'
done
echo "| radius $R, $NQ queries (half near copies) | p50 ms | p99 ms | buffers (mean) | x sequential scan p50 | rows (all queries) |"
echo "|---|---|---|---|---|---|"
q -F ' | ' -c "
WITH seq AS (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50 FROM res WHERE form = 'sequential scan')
SELECT '| ' || form, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3),
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3), round(avg(buffers), 1),
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) / (SELECT p50 FROM seq))::numeric, 5),
       sum(split_part(answer, ':', 1)::int) || ' |'
FROM res GROUP BY form ORDER BY form"
echo "# queries whose two forms disagree: $(q -c "SELECT count(*) FROM res a JOIN res b USING (k) WHERE a.form = 'ball' AND b.form = 'block ball' AND a.answer <> b.answer")"
echo "# sequential scan against the ball, the same 20 queries: $(q -c "SELECT count(*) FILTER (WHERE a.answer <> b.answer) || ' of ' || count(*) || ' disagree' FROM res a JOIN res b USING (k) WHERE a.form = 'ball' AND b.form = 'sequential scan'")"
SCRIPT
