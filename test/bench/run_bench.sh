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

nd_corpus_psql "$ROOT/test/bench/fingerprint.sql"
