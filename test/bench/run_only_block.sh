#!/usr/bin/env bash
# What an index of one table (WITH (only_block = 2)) costs the searches it
# is not built for, against a 4-table index of the same rows, in a
# throwaway cluster: ROWS (default 10M) random codes in two tables, one
# index each; NQ (default 200) random query codes, each as radius 3, KNN 10
# and a block ball of block 2 (radius 3) on both tables, after one pass
# over all of them in the same session (warm).  Reported: p50 and p99 of
# the execution time (EXPLAIN ANALYZE), the plan's scan, each index's size,
# and whether the two indexes' answers agree.
#
#   ROWS=10000000 NQ=200 bash test/bench/run_only_block.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=2GB"}
export ROWS=${ROWS:-10000000} NQ=${NQ:-200}

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
q -c "CREATE EXTENSION neardup"
for t in full one; do
	opt=""
	[ "$t" = one ] && opt="WITH (only_block = 2)"
	q -c "CREATE TABLE t_$t (id bigint PRIMARY KEY, sh simhash64 NOT NULL)" \
	  -c "INSERT INTO t_$t SELECT i, ('x' || md5('p ' || i))::bit(64)::bigint::simhash64 FROM generate_series(1, $ROWS) i" \
	  -c "CREATE INDEX t_${t}_sh ON t_$t USING hamming (sh) $opt" -c "VACUUM ANALYZE t_$t"
done
echo "# $ROWS random codes; index of 4 tables $(q -c "SELECT pg_size_pretty(pg_relation_size('t_full_sh'))"), of one $(q -c "SELECT pg_size_pretty(pg_relation_size('t_one_sh'))"); $ND_PG_OPTS; $(nproc) cores"
q -c "CREATE TABLE qs AS SELECT k, ('x' || md5('q ' || k))::bit(64)::bigint::simhash64 AS q FROM generate_series(1, $NQ) k" \
  -c "CREATE TABLE res (t text, kind text, k int, ms float8, plan text, answer bigint)"
q <<'SQL'
DO $$
DECLARE
    r record;
    tb text;
    p json;
    sql text;
    kind text;
    n bigint;
BEGIN
    FOR pass IN 1 .. 2 LOOP
        FOR r IN SELECT * FROM qs ORDER BY k LOOP
            FOREACH tb IN ARRAY ARRAY['t_full', 't_one'] LOOP
                FOREACH kind IN ARRAY ARRAY['radius 3', 'knn 10', 'block ball of block 2'] LOOP
                    sql := CASE kind
                        WHEN 'radius 3' THEN format('SELECT sum(id) FROM %I WHERE sh <~> %L <= 3', tb, r.q)
                        WHEN 'knn 10' THEN format('SELECT sum(d) FROM (SELECT sh <~> %2$L AS d FROM %1$I ORDER BY sh <~> %2$L LIMIT 10) s', tb, r.q)
                        ELSE format('SELECT sum(id) FROM %I WHERE sh <@ hamming_block_ball(%L, 3, 2, 4)', tb, r.q) END;
                    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || sql INTO p;
                    EXECUTE sql INTO n;
                    IF pass = 2 THEN
                        INSERT INTO res VALUES (tb, kind, r.k, (p -> 0 ->> 'Execution Time')::float8,
                                                p -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Node Type', n);
                    END IF;
                END LOOP;
            END LOOP;
        END LOOP;
    END LOOP;
END $$;
SQL
echo "| $NQ random codes | index | p50 ms | p99 ms | scan |"
echo "|---|---|---|---|---|"
q -F ' | ' -c "
SELECT '| ' || kind, CASE t WHEN 't_full' THEN '4 tables' ELSE 'one table' END,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3),
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3),
       string_agg(DISTINCT plan, ', ') || ' |'
FROM res GROUP BY kind, t ORDER BY kind, t"
echo "# queries whose answers differ between the two indexes: $(q -c "SELECT count(*) FROM res a JOIN res b USING (kind, k) WHERE a.t = 't_full' AND b.t = 't_one' AND a.answer IS DISTINCT FROM b.answer")"
SCRIPT
