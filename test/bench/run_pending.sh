#!/usr/bin/env bash
# What a hamming index's pending list costs its scans, in a throwaway
# cluster: ROWS (default 10M) random codes indexed, then the pending list
# grown to each of PENDING (default 150000 300000 600000) entries by
# inserts (background_merge off and below the merge threshold, so nothing
# merges), and NQ (default 200) random query codes run each time as
# radius 3 and KNN 10 in a new session at the default work_mem -- what a
# pooled connection sees between two merges.  Baseline: the same queries
# with an empty list, same run.
#
#   ROWS=10000000 PENDING="150000 300000 600000" NQ=200 bash test/bench/run_pending.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=4GB"}
export ROWS=${ROWS:-10000000} PENDING=${PENDING:-"150000 300000 600000"} NQ=${NQ:-200}

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
q -c "CREATE EXTENSION neardup"
q -c "CREATE TABLE m AS SELECT i::bigint AS id, ('x' || md5('row ' || i))::bit(64)::bigint::simhash64 AS sh
      FROM generate_series(1, $ROWS) i"
q -c "VACUUM ANALYZE m"
q -c "CREATE INDEX m_sh ON m USING hamming (sh) WITH (background_merge = off)"
q -c "CREATE TABLE qs AS SELECT ('x' || md5('query ' || i))::bit(64)::bigint::simhash64 AS q
      FROM generate_series(1, $NQ) i"
echo "# $ROWS rows, $NQ random queries per point, a new session each; $ND_PG_OPTS"
echo "| pending entries | radius 3 p50 / p99 (ms) | x empty list | KNN 10 p50 / p99 (ms) | x empty list |"
echo "|---|---|---|---|---|"
base_r=""
base_k=""
for n in 0 $PENDING; do
	if [ "$n" != 0 ]; then
		q -c "INSERT INTO m SELECT 100000000 + i, ('x' || md5('late ' || i))::bit(64)::bigint::simhash64
		      FROM generate_series((SELECT pending_entries FROM hamming_stats('m_sh')) + 1, $n) i"
	fi
	read -r pending merges <<<"$(q -F' ' -c "SELECT pending_entries, merges FROM hamming_stats('m_sh')")"
	[ "$merges" = 0 ] || echo "# the list was merged: the point does not measure a pending list"
	out=$(q -c "SET max_parallel_workers_per_gather = 0" -c "
		CREATE TEMP TABLE t (what text, ms float8);
		DO \$\$
		DECLARE t0 timestamptz; r record; n int;
		BEGIN
		  FOR r IN SELECT q FROM qs LOOP
		    t0 := clock_timestamp();
		    SELECT count(*) INTO n FROM m WHERE sh <~> r.q <= 3;
		    INSERT INTO t VALUES ('r', extract(epoch FROM clock_timestamp() - t0) * 1000);
		    t0 := clock_timestamp();
		    PERFORM id FROM m ORDER BY sh <~> r.q LIMIT 10;
		    INSERT INTO t VALUES ('k', extract(epoch FROM clock_timestamp() - t0) * 1000);
		  END LOOP;
		END \$\$;
		SELECT string_agg(round(p50::numeric, 3) || ' ' || round(p99::numeric, 3), ' ' ORDER BY what DESC)
		FROM (SELECT what, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
		             percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99 FROM t GROUP BY what) s")
	read -r r50 r99 k50 k99 <<<"$out"
	[ -n "$base_r" ] || { base_r=$r50; base_k=$k50; }
	printf "| %s | %s / %s | %.1f | %s / %s | %.1f |\n" "$pending" "$r50" "$r99" \
		"$(awk "BEGIN { print $r50 / $base_r }")" "$k50" "$k99" "$(awk "BEGIN { print $k50 / $base_k }")"
done
SCRIPT
