#!/usr/bin/env bash
# MinHash LSH recall at the threshold against its cost, for datasketch's
# bands and rows and minhash_lsh_params(..., recall => ...), on N
# background sets (default 100000) and 7,000 planted pairs of known Jaccard
# (test/bench/lsh_recall.sql; doc/minhash.md, "Recall at the threshold").
# A few minutes on two cores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
nd_build
nd_stage
nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 -v n="${N:-100000}" -f "$ROOT/test/bench/lsh_recall.sql" 2>&1 |
	grep -v '^Dropping cluster'
