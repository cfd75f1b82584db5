#!/usr/bin/env bash
# `make bench`: benchmarks in a throwaway cluster; ratios against baselines
# measured in the same run (these machines are noisy: compare ratios, not
# seconds).
#
#   fingerprint  MB/s of simhash(text) vs md5(text) on the demo corpus and on
#                large synthetic texts (test/bench/fingerprint.sql)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

list=$(mktemp /tmp/neardup-corpus.XXXXXX)
trap 'rm -f "$list"; nd_cleanup' EXIT
bash "$ROOT/test/demo/corpus_list.sh" >"$list"
chmod 644 "$list"

nd_in_cluster psql -X -q -v ON_ERROR_STOP=1 -v corpus="$list" \
	-f "$ROOT/test/bench/fingerprint.sql" 2>&1 | grep -v '^Dropping cluster'
