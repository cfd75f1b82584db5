#!/usr/bin/env bash
# Blocks per run (issue 43 item 1), test/bench/blocks.sql in a throwaway
# cluster: one hamming index per value of BLOCKS on the same rows (ROWS
# random codes + ROWS/100 planted near copies), built BUILDS times each
# (interleaved); build time and bytes per row, then radius 3 and KNN 10 on
# planted and on random codes, NQ queries of each, every query on every
# index in turn (order rotated), p50/p99 and shared buffers per query
# (EXPLAIN (ANALYZE, BUFFERS) on NBUF of them), answers checked against a
# sequential scan on NSEQ of them.  Ratios are against 4 blocks.
#
#   ROWS=1000000 BLOCKS="3 4 5" NQ=300 NSEQ=40 NBUF=50 BUILDS=2 \
#       bash test/bench/run_blocks.sh
#
# Settings (ND_PG_OPTS overrides): shared_buffers 4GB (table and indexes
# stay in PostgreSQL's cache at 10M rows: warm-cache latencies),
# maintenance_work_mem 1GB, max_wal_size 8GB, autovacuum off, jit off;
# max_parallel_workers_per_gather 2 from nd_in_cluster, fsync=off from
# pg_virtualenv.  The cluster lives in ${TMPDIR:-/tmp} and is dropped at the
# end, also on failure or interruption.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

ROWS=${ROWS:-1000000}
BLOCKS=${BLOCKS:-"3 4 5"}
NQ=${NQ:-300}
NSEQ=${NSEQ:-40}
NBUF=${NBUF:-50}
BUILDS=${BUILDS:-2}

# Disk: some 70 B/row of heap (a code column per index), per index 15 B/row
# per block and as much again of sort files while it builds, WAL, a margin.
tmp=${TMPDIR:-/tmp}
sum_blocks=0
for b in $BLOCKS; do sum_blocks=$((sum_blocks + b)); done
need_kb=$(( ROWS * (80 + 15 * sum_blocks + 30 * 8) / 1024 + 9 * 1024 * 1024 ))
avail_kb=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
echo "# $(date '+%F %T') bench-blocks: ROWS=$ROWS BLOCKS=\"$BLOCKS\" NQ=$NQ NSEQ=$NSEQ NBUF=$NBUF BUILDS=$BUILDS"
echo "# cluster in $tmp: $((avail_kb / 1024 / 1024)) GB free, about $((need_kb / 1024 / 1024)) GB needed"
if [ "$avail_kb" -lt "$need_kb" ]; then
	echo "not enough disk in $tmp for ROWS=$ROWS (set TMPDIR to a larger filesystem)" >&2
	exit 1
fi

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=4GB maintenance_work_mem=1GB max_wal_size=8GB autovacuum=off jit=off"}

start=$(date +%s)
set +e
nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 \
	-v rows="$ROWS" -v blocks="$BLOCKS" -v nq="$NQ" -v nseq="$NSEQ" -v nbuf="$NBUF" -v builds="$BUILDS" \
	-f "$ROOT/test/bench/blocks.sql" 2>&1
rc=$?
set -e
echo "# $(date '+%F %T') bench-blocks finished: exit $rc after $(( $(date +%s) - start )) s; cluster dropped"
exit "$rc"
