#!/usr/bin/env bash
# GIN radius-search benchmark (test/bench/gin_radius.sql) in a throwaway
# cluster.  Ratios against a sequential scan measured in the same run.
#
#   ROWS=1000000 QUERIES=500 SEQQ=15 RADII=0,1,2,3,4 BLOCKS=4,5,6 INSERTS=50000 \
#       bash test/bench/run_gin.sh
#
# shared_buffers is raised so that table and index stay in PostgreSQL's own
# cache (latencies of a warm cache; ND_PG_OPTS overrides).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB maintenance_work_mem=64MB"}

nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 \
	-v rows="${ROWS:-1000000}" -v queries="${QUERIES:-500}" -v seqq="${SEQQ:-15}" \
	-v radii="${RADII:-0,1,2,3,4}" -v blocks="${BLOCKS:-4,5,6}" -v opclasses="${OPCLASSES:-simhash64_gin_ops}" -v inserts="${INSERTS:-50000}" \
	-f "$ROOT/test/bench/gin_radius.sql" 2>&1 | grep -v '^Dropping cluster'
