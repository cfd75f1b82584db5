#!/usr/bin/env bash
# minhash_clusters at two sizes (SIZES, default "200000 400000"), each in a
# throwaway cluster: linear in the rows whatever the identical group's size
# (test/bench/minhash_clusters.sql).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
nd_build
nd_stage
export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB"}
for n in ${SIZES:-200000 400000}; do
	nd_in_cluster psql -X -q -v n="$n" -f "$ROOT/test/bench/minhash_clusters.sql" 2>&1 | grep -v '^Dropping cluster'
done
