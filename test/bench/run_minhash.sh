#!/usr/bin/env bash
# MinHash signature speed (test/bench/minhash.sql) in a throwaway cluster:
# minhash(text) at 128 values against simhash(text), md5(text) and the
# classic k-permutation loop (test/bench/classic_minhash.c, built here into
# a throwaway library: it is not part of the extension), on the same rows
# in the same run.  ROUNDS=7 by default; the best round counts.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage
# The library goes next to the staged extension (readable by postgres,
# removed with it).
LIB=$ND_STAGE/classic_minhash.so
gcc -O3 -fPIC -shared -Wall -I"$("$ND_PG_CONFIG" --includedir-server)" -I"$ROOT/src/core" \
	"$ROOT/test/bench/classic_minhash.c" -o "$LIB"
chmod 755 "$LIB"

nd_corpus_psql "$ROOT/test/bench/minhash.sql" -v classic_lib="$LIB" -v rounds="${ROUNDS:-7}"

# Quality, not speed: MinHash LSH against SimHash radii on the demo corpus,
# against exact Jaccard (test/bench/minhash_quality.sql).
nd_corpus_psql "$ROOT/test/bench/minhash_quality.sql"
