#!/usr/bin/env bash
# All-pairs benchmark (test/bench/pairs.sql) in a throwaway cluster:
# simhash_pairs with the table read included, its peak memory, the band-key
# SQL join, a GIN nested-loop self-join and a brute-force self-join (both on
# samples, extrapolated); then the core alone in C at simhash-py's published
# setting (1M random codes, 5 blocks, k = 3).
#
#   ROWS=1000000 BAND=1 GIN_SAMPLE=20000 BRUTE_SAMPLE=20000 bash test/bench/run_pairs.sh
#   PAIRS_10M=1 bash test/bench/run_pairs.sh      # also 10M rows (minutes)
#   PAIRS_ADV_1M=1 ...        # also 1M low-entropy codes (minutes)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB maintenance_work_mem=256MB"}

run() {
	local rows=$1 band=$2
	nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 \
		-v rows="$rows" -v band="$band" -v big_work_mem="${BIG_WORK_MEM:-1GB}" \
		-v gin_sample="${GIN_SAMPLE:-20000}" -v brute_sample="${BRUTE_SAMPLE:-20000}" \
		-f "$ROOT/test/bench/pairs.sql" 2>&1 | grep -v '^Dropping cluster'
}

run "${ROWS:-1000000}" "${BAND:-1}"
if [ -n "${PAIRS_10M:-}" ]; then
	# the band join at 10M (100M key rows) is left out unless BAND_10M=1
	run 10000000 "${BAND_10M:-0}"
fi

echo "== the core alone (C, -O2, no PostgreSQL)"
bin=$(mktemp /tmp/pairs_core.XXXXXX)
cc -O2 -I"$ROOT/src/core" "$ROOT/test/bench/pairs_core.c" "$ROOT/src/core/nd_allpairs.c" \
	"$ROOT/src/core/nd_permute.c" -lm -o "$bin"
"$bin" 1000000 3 5          # simhash-py's README setting: 1.6 s for find_all
"$bin" 1000000 3 0 0.1      # auto blocks, 10% planted
[ -n "${PAIRS_10M:-}" ] && "$bin" 10000000 3 0 0.1
# low-entropy codes: long runs of distinct codes, split into sub-tables
# (doc/dedup-pairs.md "Long runs"); before the split: 11 s and 45 s
"$bin" 50000 3 0 0 int          # codes 0..49999
"$bin" 1000000 3 0 0 bits30     # random codes varying in 30 bits
if [ -n "${PAIRS_ADV_1M:-}" ]; then
	# ~7e8 pairs each: output-bound, minutes
	"$bin" 1000000 3 0 0 int
	"$bin" 1000000 3 0 0 bits20
fi
rm -f "$bin"
