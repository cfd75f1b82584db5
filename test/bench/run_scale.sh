#!/usr/bin/env bash
# One hamming index at crawl scale (issue 32), test/bench/scale.sql in a
# throwaway cluster: ROWS random codes + 20,000 planted near-copies, CREATE
# INDEX at default options (seconds, size, bytes per row, the run's
# directory layout), its time against SMALL_BUILDS builds at SMALL rows
# (1.0x = linear), and radius 3 / KNN 10 latency (p50, p99, planning
# included) on NQ planted and NQ random queries against a parallel
# sequential scan of NSEQ of the same queries, whose answers they must
# equal.  Every figure is a ratio to a baseline measured in the same run.
#
#   ROWS=200000000 SMALL=20000000 SMALL_BUILDS=10 NQ=200 NSEQ=5 CHECK=0 \
#       bash test/bench/run_scale.sh
#
# CHECK=1 adds hamming_check(index, false) on the big index.  At the
# defaults the run peaked at 36 GB of disk (heap 8.4 GB, index 10.5 GB, the
# build's sort files some 14 GB, max_wal_size of WAL) and took 37 minutes
# on 2 cores.  The cluster lives in ${TMPDIR:-/tmp} (pg_virtualenv -t) and is
# dropped at the end, also on failure or interruption (INT/TERM).
#
# Settings (ND_PG_OPTS overrides): shared_buffers 8GB, maintenance_work_mem
# 1GB (the builds), max_wal_size 8GB and checkpoint_timeout 30min (no
# checkpoint storm during the load), autovacuum off (the script vacuums;
# nothing else runs during the timings), jit off;
# max_parallel_workers_per_gather 2 comes from nd_in_cluster, fsync=off from
# pg_virtualenv (as in every benchmark here).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

ROWS=${ROWS:-200000000}
SMALL=${SMALL:-20000000}
SMALL_BUILDS=${SMALL_BUILDS:-10}
NQ=${NQ:-200}
NSEQ=${NSEQ:-5}
CHECK=${CHECK:-0}

# Disk: about 44 B/row of heap, 57 B/row of index, 70 B/row of sort files
# during the build (4 tables x 16 B and more), 8 GB of WAL, and a margin.
tmp=${TMPDIR:-/tmp}
echo "# $(date '+%F %T') bench-scale: ROWS=$ROWS SMALL=$SMALL SMALL_BUILDS=$SMALL_BUILDS NQ=$NQ NSEQ=$NSEQ CHECK=$CHECK"
nd_check_disk $(( ROWS * 180 / 1024 + 9 * 1024 * 1024 )) "ROWS=$ROWS" || exit 1
avail_kb=$ND_DISK_AVAIL_KB

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=8GB maintenance_work_mem=1GB max_wal_size=8GB checkpoint_timeout=30min autovacuum=off jit=off"}

# The least free space seen in $tmp while the run goes (every 20 s).
minfile=$(mktemp /tmp/neardup-scale-df.XXXXXX)
echo "$avail_kb" >"$minfile"
(
	while sleep 20; do
		a=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
		[ "$a" -lt "$(cat "$minfile")" ] && echo "$a" >"$minfile"
	done
) &
sampler=$!
finish() {
	kill "$sampler" 2>/dev/null || true
	min_kb=$(cat "$minfile" 2>/dev/null || echo "$avail_kb")
	echo "# $(date '+%F %T') peak disk used in $tmp during the run: about $(( (avail_kb - min_kb) / 1024 / 1024 )) GB (free space sampled every 20 s; other jobs count too)"
	rm -f "$minfile"
	nd_cleanup
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

start=$(date +%s)
# No pipe after it: a signal to the process group would kill the reader,
# and pg_virtualenv's cleanup would die writing "Dropping cluster" to it.
set +e
nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 \
	-v rows="$ROWS" -v small="$SMALL" -v small_builds="$SMALL_BUILDS" \
	-v nq="$NQ" -v nseq="$NSEQ" -v check="$CHECK" \
	-f "$ROOT/test/bench/scale.sql" 2>&1
rc=$?
set -e
echo "# $(date '+%F %T') bench-scale finished: exit $rc after $(( $(date +%s) - start )) s; cluster dropped"
exit "$rc"
