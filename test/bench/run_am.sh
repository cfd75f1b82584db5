#!/usr/bin/env bash
# The hamming access method against GIN, GiST and the sequential scan
# (test/bench/am.sql) in a throwaway cluster: exact KNN and radius latency
# as ratios to a sequential scan of the same run, builds at
# maintenance_work_mem 64MB and 4GB, size per row.
#
#   ROWS=1000000 NQ=200 NSLOW=20 PATHS=hamming,gin,gist bash test/bench/run_am.sh
#
# shared_buffers is raised so that table and indexes stay in PostgreSQL's
# own cache (warm-cache latencies; ND_PG_OPTS overrides).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=4GB"}

nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 \
	-v rows="${ROWS:-1000000}" -v nq="${NQ:-200}" -v nslow="${NSLOW:-20}" -v paths="${PATHS:-hamming,gin,gist}" \
	-f "$ROOT/test/bench/am.sql" 2>&1 | grep -v '^Dropping cluster'
