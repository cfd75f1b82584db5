#!/usr/bin/env bash
# GiST index benchmark (test/bench/gist.sql) in a throwaway cluster, at
# 100K and 1M rows.  Ratios against sequential scans of the same run.
#
#   bash test/bench/run_gist.sh [ROWS...]        default: 100000 1000000
#   GIST_BUILDS=sorted,buffering,insert ...      which GiST builds to compare
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100000 1000000)

for n in "${sizes[@]}"; do
	nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 -v rows="$n" -v nq="${GIST_NQ:-20}" \
		-v builds="${GIST_BUILDS:-sorted,buffering}" \
		-f "$ROOT/test/bench/gist.sql" 2>&1 | grep -v '^Dropping cluster'
done
