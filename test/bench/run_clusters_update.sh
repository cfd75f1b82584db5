#!/usr/bin/env bash
# Incremental clusters benchmark: nights of simhash_clusters_update on a
# table of ROWS rows (primary key on id, index AM of AMS) against the full
# run of the same night (test/bench/clusters_update.sql), for each night
# size of NEWS: a count of new rows, or a percentage of ROWS; each night
# deletes a tenth as many rows (at least 1).  Best of ROUNDS (3).
#
#   bash test/bench/run_clusters_update.sh                      # 1M rows
#   ROWS=10000000 NEWS="5 1%" bash test/bench/run_clusters_update.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
nd_build
nd_stage
export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB work_mem=256MB"}
ROWS=${ROWS:-1000000}
NEWS=${NEWS:-5 1% 10%}
ROUNDS=${ROUNDS:-3}
GROUP=${GROUP:-20000}
NEAR_GROUP=${NEAR_GROUP:-0}
B=$ROOT/test/bench
for am in ${AMS:-hamming}; do
	args=(-f "$B/clusters_update.sql")
	for n in $NEWS; do
		case "$n" in *%) n=$((ROWS * ${n%\%} / 100)) ;; esac
		gone=$((n / 10 > 0 ? n / 10 : 1))
		args+=(-c "\\set new $n" -c "\\set gone $gone" -f "$B/lib/clusters_update_night.sql")
		for ((r = 0; r < ROUNDS; r++)); do args+=(-f "$B/lib/clusters_update_round.sql"); done
		args+=(-f "$B/lib/clusters_update_report.sql")
	done
	nd_in_cluster psql -X -q -v rows="$ROWS" -v group="$GROUP" -v near_group="$NEAR_GROUP" -v am="$am" \
		"${args[@]}" 2>&1 | grep -v '^Dropping cluster\|^Creating new\|night_change\|^-----*$\|^ *$\|^(1 row)'
done
