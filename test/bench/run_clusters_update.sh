#!/usr/bin/env bash
# Incremental clusters benchmark (issue "nightly dedup at crawl scale"): a
# night of simhash_clusters_update with NEW new rows (default 1% of ROWS)
# and GONE deleted rows against the full run of the same night
# (test/bench/clusters_update.sql), for each index access method in AMS.
#
#   bash test/bench/run_clusters_update.sh                 # 1M rows, 1% new
#   NEW=1000 bash test/bench/run_clusters_update.sh        # 0.1% new
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
nd_build
nd_stage
export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB work_mem=256MB"}
ROWS=${ROWS:-1000000}
NEW=${NEW:-$((ROWS / 100))}
GONE=${GONE:-$((NEW / 10))}
GROUP=${GROUP:-20000}
NEAR_GROUP=${NEAR_GROUP:-0}
for am in ${AMS:-gin}; do
	nd_in_cluster psql -X -q -v rows="$ROWS" -v new="$NEW" -v gone="$GONE" -v group="$GROUP" -v near_group="$NEAR_GROUP" -v am="$am" \
		-f "$ROOT/test/bench/clusters_update.sql" 2>&1 | grep -v '^Dropping cluster'
done
