#!/usr/bin/env bash
# `make demo`: the main job on an embedded default.
#
# Builds neardup, starts a throwaway PostgreSQL 15 cluster (as the
# unprivileged 'postgres' user), loads a real corpus that every Debian machine
# has -- the licence texts in /usr/share/common-licenses and every
# /usr/share/doc/*/copyright file -- fingerprints it with simhash(), and prints
# the groups of near-duplicate documents it finds.  Nothing is left running.
#
# Environment: ND_DEMO_K (Hamming radius, default 3, at most 15: beyond
# that simhash_pairs refuses, with a hint, and the demo stops there).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_corpus_psql "$ROOT/test/demo/demo.sql" -v k="${ND_DEMO_K:-3}"
