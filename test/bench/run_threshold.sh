#!/usr/bin/env bash
# "At least t similar" with SimHash, in throwaway clusters:
#  1. on the demo corpus (test/bench/simhash_threshold_quality.sql): recall
#     and precision by radius against exact Jaccard, and simhash_radius()'s
#     model against the measured distances;
#  2. at ROWS rows (test/bench/simhash_threshold.sql): verified lookups on
#     the hamming index, GIN and a sequential scan, MinHash on its band
#     index; ratios against the sequential scan measured in the same run.
#
#   ROWS=1000000 NQ=200 NSLOW=10 THRESHOLD=0.8 RECALL=0.95 MINHASH=on \
#       bash test/bench/run_threshold.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_corpus_psql "$ROOT/test/bench/simhash_threshold_quality.sql"

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=2GB maintenance_work_mem=256MB"}

nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 \
	-v rows="${ROWS:-1000000}" -v nq="${NQ:-200}" -v nslow="${NSLOW:-10}" \
	-v threshold="${THRESHOLD:-0.8}" -v recall="${RECALL:-0.95}" -v minhash="${MINHASH:-on}" \
	-f "$ROOT/test/bench/simhash_threshold.sql" 2>&1 | grep -v '^Dropping cluster'
