#!/usr/bin/env bash
# End-to-end: the hamming index's regression tests (230, 250, 260: every
# query form against a sequential scan, the backend caches, parallel
# workers) pass in a server with the smallest useful shared_buffers (256kB,
# 32 buffers), where nearly every page a scan reads evicts another.  A scan
# pins a run's pages through the buffers its backend read them from last
# (ham_read_run_page: ReadRecentBuffer); here those buffers almost always
# hold another page by the next scan, so this runs the path that notices
# and reads the page again, as well as eviction under merges, VACUUM and
# list caches.  One TAP line per regression test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib ND_ROOT
ND_REGRESS=$("$ND_PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress
export ND_REGRESS

ND_PG_OPTS="shared_buffers=256kB" nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
work=$(mktemp -d /tmp/nd-small-buffers.XXXXXX)
chmod 777 "$work"
trap 'rm -rf "$work"' EXIT

sb=$(psql_q -d postgres -c "SHOW shared_buffers")
[ "$sb" = 256kB ]
ok $? "the server runs with shared_buffers $sb"

# 000_setup first: it creates the helpers the suites share.
tests=(230_index_hamming 250_index_hamming_cache 260_index_hamming_parallel)
"$ND_REGRESS" --inputdir="$ND_ROOT/test" --outputdir="$work" --load-extension=neardup \
	--dbname=nd_small_buffers 000_setup "${tests[@]}" >"$work/out" 2>&1 || true
sed 's/^/# /' "$work/out"
for t in "${tests[@]}"; do
	grep -Eq "$t +\.\.\. ok" "$work/out"
	ok $? "regression test $t passes with 32 shared buffers"
done
[ -f "$work/regression.diffs" ] && head -100 "$work/regression.diffs" | sed 's/^/# /'
exit 0
SCRIPT
