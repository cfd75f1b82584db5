#!/usr/bin/env bash
# dedup_clusters past its memory (make bench-clusters-spill): the time and
# the backend's peak memory of dedup_clusters over random pairs and over
# groups as a block-sharded layout sends them, in memory (a large
# work_mem) and spilled to sorted edges (work_mem 64MB, 4MB), each against
# the distinct ids of the same input at the same work_mem (a hash or sort
# of the ids alone: the least any clustering must do), in fresh backends,
# interleaved over ROUNDS rounds.  Reports medians and their ratios.
#
#   bash test/bench/run_clusters_spill.sh                   # 1M pairs; 2M + 200K group ids
#   PAIRS=10000000 NGROUPS=4000000 GIANT=2000000 bash test/bench/run_clusters_spill.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
# shellcheck source=lib/measure.sh
. "$ROOT/test/bench/lib/measure.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB"}
ROUNDS=${ROUNDS:-3}
BIG_WORK_MEM=${BIG_WORK_MEM:-4GB}
WORK_MEMS=${WORK_MEMS:-"$BIG_WORK_MEM 64MB 4MB"}

script=$(mktemp /tmp/nd-bench-clusters-spill.XXXXXX.sql)
trap 'rm -f "$script"; nd_cleanup' EXIT
{
	echo "\\ir $ROOT/test/bench/clusters_spill.sql"
	measure_lines "$ROUNDS" "$WORK_MEMS" \
		"pairs: distinct ids|SELECT count(*) FROM (SELECT a FROM cs_pairs UNION SELECT b FROM cs_pairs) x" \
		"pairs: dedup_clusters|SELECT count(*) FROM dedup_clusters('SELECT a, b FROM cs_pairs')" \
		"groups: distinct ids|SELECT count(*) FROM (SELECT DISTINCT u FROM cs_groups, unnest(ids) u) x" \
		"groups: dedup_clusters|SELECT count(*) FROM dedup_clusters('SELECT ids FROM cs_groups')"
	measure_medians
	cat <<'SQL'
\echo == dedup_clusters against the distinct ids of its input, same work_mem
WITH m AS (
    SELECT what, percentile_disc(0.5) WITHIN GROUP (ORDER BY seconds) AS s, max(peak_mb) AS p
    FROM bench_result GROUP BY what)
SELECT c.what, round(c.s / nullif(b.s, 0), 2) AS time_ratio, c.p AS peak_mb, b.p AS baseline_peak_mb
FROM m c JOIN m b ON b.what = replace(c.what, 'dedup_clusters', 'distinct ids')
WHERE c.what LIKE '%dedup_clusters%' ORDER BY c.what;
SQL
} >"$script"
chmod 644 "$script"

nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 -v pairs="${PAIRS:-1000000}" -v groups="${NGROUPS:-400000}" \
	-v giant="${GIANT:-200000}" -f "$script" 2>&1 | grep -v '^Dropping cluster'
