#!/usr/bin/env bash
# End-to-end: dedup_clusters' memory is bounded by work_mem.  2.2M ids in
# 400,000 groups (chained three by three) and one group of 200,000 ids are
# clustered three times, each in a fresh backend whose peak RSS growth is
# measured (VmHWM): with work_mem 1GB (in memory), with work_mem 4MB (the
# disjoint sets pass work_mem times hash_mem_multiplier and spill to sorted
# edges), and, as the baseline, a scan that reads the same arrays.  Compared
# against that baseline measured in the same run, never against times:
#   - the answers are the same (an order-free checksum);
#   - the spilled run grows by no more than the scan plus eight work_mem
#     (the sets' budget of two, two sorts of one each, the allocators'
#     slack; about six measured);
#   - the in-memory run grows by several times as much (the data is big
#     enough for the bound to matter);
#   - statement_timeout at a tenth of the spilled run's time cancels it
#     well before it would have finished.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
work=$(mktemp -d /tmp/nd-clusters-mem.XXXXXX)
chmod 777 "$work"
trap 'rm -rf "$work"' EXIT

psql_q -c "CREATE EXTENSION neardup" -c "
CREATE TABLE g AS
SELECT ARRAY(SELECT 5 * n + k FROM generate_series(0, 4) k)
       || CASE WHEN n % 3 <> 0 THEN ARRAY[5 * (n + 1)::int8] ELSE '{}'::int8[] END AS ids
FROM generate_series(0, 399999) n" \
	-c "INSERT INTO g SELECT array_agg(3000000 + i ORDER BY i DESC) FROM generate_series(1, 200000) i" \
	-c "VACUUM ANALYZE g"

# Peak RSS growth (kB) of a fresh backend running query $2 at work_mem $1;
# its result (one value) goes to $work/out.
peak_growth() {
	psql_q <<SQL | tail -1
SET hash_mem_multiplier = 2;
SET work_mem = '$1';
SELECT pg_backend_pid() AS pid \gset
\setenv ND_PID :pid
\! grep VmHWM /proc/\$ND_PID/status | awk '{print \$2}' > $work/hwm
\o $work/out
$2;
\o
\! echo \$(( \$(grep VmHWM /proc/\$ND_PID/status | awk '{print \$2}') - \$(cat $work/hwm) ))
SQL
}
checksum="SELECT count(*) || ' ' || sum(hashint8(id) # hashint8(cluster_id)) FROM dedup_clusters('SELECT ids FROM g')"
mem_kb=$(peak_growth 1GB "$checksum")
mem_sum=$(cat "$work/out")
spill_kb=$(peak_growth 4MB "$checksum")
spill_sum=$(cat "$work/out")
scan_kb=$(peak_growth 4MB "SELECT sum(cardinality(ids)) FROM g")
echo "# peak RSS growth: in memory ${mem_kb} kB; spilled at work_mem 4MB ${spill_kb} kB; a scan of the arrays ${scan_kb} kB"
echo "# answers: in memory '$mem_sum', spilled '$spill_sum'"
ok $([ -n "$mem_sum" ] && [ "$mem_sum" = "$spill_sum" ] && echo 0 || echo 1) "the spilled run finds the same clusters as the in-memory run"
ok $(( spill_kb <= scan_kb + 8 * 4096 ? 0 : 1 )) "spilled at work_mem 4MB: no more than a scan of the arrays plus eight work_mem"
ok $(( mem_kb - scan_kb >= 4 * (spill_kb > scan_kb + 1024 ? spill_kb - scan_kb : 1024) ? 0 : 1 )) "in memory it needs several times that (the bound matters here)"

# Cancellation during the rounds of sorts.
full_ms=$(psql_q -c "SET work_mem = '4MB'" -c "\timing on" -c "$checksum" | grep -o 'Time: [0-9.]*' | grep -o '[0-9.]*' | tail -1)
limit_ms=$(awk -v f="$full_ms" 'BEGIN { v = int(f / 10); if (v < 1) v = 1; print v }')
start=$(date +%s%N)
out=$(psql -X -q -At -c "SET work_mem = '4MB'" -c "SET statement_timeout = $limit_ms" -c "$checksum" 2>&1 || true)
cancel_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "# spilled run ${full_ms} ms; timeout ${limit_ms} ms; cancelled after ${cancel_ms} ms (incl. psql start)"
case "$out" in *"canceling statement due to statement timeout"*) r=0 ;; *) r=1 ;; esac
ok $r "statement_timeout interrupts a spilled dedup_clusters"
ok $(awk -v c="$cancel_ms" -v f="$full_ms" 'BEGIN { print (c < f / 2) ? 0 : 1 }') "the cancel comes well before the run would have finished"
psql_q -c "SELECT count(*) FROM pg_ls_tmpdir()" >"$work/tmpfiles"
ok $([ "$(cat "$work/tmpfiles")" = 0 ] && echo 0 || echo 1) "no temporary file is left after the cancel"
SCRIPT
