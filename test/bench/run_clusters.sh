#!/usr/bin/env bash
# Clusters benchmark (issue "nightly dedup at crawl scale"): simhash_clusters
# on a table with one huge group of identical codes and many small groups of
# near-copies, against simhash_pairs on its random rows alone (the
# baseline), each in a fresh backend, interleaved over ROUNDS rounds, at a
# large work_mem (in memory) and at PostgreSQL's default 4MB (batched).
# Reports the median time, temporary MB written and the backend's peak MB.
#
#   bash test/bench/run_clusters.sh                     # 1M + 20K copies + 1,000 x 20
#   ROWS=10000000 DUP_RANDOM=8000000 GROUP=1000000 NGROUPS=100000 GSIZE=10 \
#       bash test/bench/run_clusters.sh                 # 10M rows in both tables
# DUP_RANDOM: random rows in the table with groups (default ROWS: the groups
# come on top of them).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
# shellcheck source=lib/measure.sh
. "$ROOT/test/bench/lib/measure.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB"}
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
BIG_WORK_MEM=${BIG_WORK_MEM:-2GB}

script=$(mktemp /tmp/nd-bench-clusters.XXXXXX.sql)
trap 'rm -f "$script"; nd_cleanup' EXIT
{
	echo "\\ir $ROOT/test/bench/clusters.sql"
	measure_lines "$ROUNDS" "$BIG_WORK_MEM 4MB" \
		"simhash_pairs, random rows alone|SELECT count(*) FROM simhash_pairs('bc_random', 'id', 'sh', 3)" \
		"simhash_clusters, random rows alone|SELECT count(*) FROM simhash_clusters('bc_random', 'id', 'sh', 3)" \
		"simhash_clusters, with the groups|SELECT count(*) FROM simhash_clusters('bc_dup', 'id', 'sh', 3)"
	measure_medians
	cat <<'SQL'
\echo == ratios to simhash_pairs on the random rows alone, same work_mem
WITH m AS (
    SELECT what, percentile_disc(0.5) WITHIN GROUP (ORDER BY seconds) AS s, max(peak_mb) AS p
    FROM bench_result GROUP BY what)
SELECT c.what, round(c.s / nullif(b.s, 0), 2) AS time_ratio, round(c.p / nullif(b.p, 0), 2) AS peak_ratio
FROM m c JOIN m b ON b.what = replace(replace(c.what, 'simhash_clusters, with the groups', 'simhash_pairs, random rows alone'),
                                      'simhash_clusters, random rows alone', 'simhash_pairs, random rows alone')
WHERE c.what LIKE 'simhash_clusters%' ORDER BY c.what;
SQL
} >"$script"
chmod 644 "$script"

nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 -v rows="$ROWS" -v dup_random="${DUP_RANDOM:-$ROWS}" -v group="${GROUP:-20000}" \
	-v ngroups="${NGROUPS:-1000}" -v gsize="${GSIZE:-20}" -f "$script" 2>&1 | grep -v '^Dropping cluster'
