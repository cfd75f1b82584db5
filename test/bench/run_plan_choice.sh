#!/usr/bin/env bash
# Plan choice for radius search (test/bench/plan_choice.sql) in a throwaway
# cluster: the planner's pick against each path forced, per radius.
#
#   ROWS=100000 QUERIES=20 RADII=0,1,2,3,4,5,6,8,10,12,16,20 \
#       bash test/bench/run_plan_choice.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB maintenance_work_mem=64MB"}

echo "rows=${ROWS:-100000} queries=${QUERIES:-20}"
nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 \
	-v rows="${ROWS:-100000}" -v queries="${QUERIES:-20}" \
	-v radii="${RADII:-0,1,2,3,4,5,6,8,10,12,16,20,24}" \
	-f "$ROOT/test/bench/plan_choice.sql" 2>&1 | grep -v '^Dropping cluster'
