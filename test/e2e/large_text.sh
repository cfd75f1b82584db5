#!/usr/bin/env bash
# End-to-end: fingerprinting a large text is cancellable and uses bounded
# memory.  Compared against baselines measured in the same run, never against
# wall-clock limits:
#   - memory: the backend's peak RSS growth while fingerprinting a 200 MB
#     text is no more than while md5() reads the same text (both must detoast
#     it once; the fingerprint must add only its fixed-size state);
#   - cancel: with statement_timeout at a tenth of the full run's time, the
#     statement ends in well under half of the full run's time.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }

nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

psql_q -c "CREATE EXTENSION neardup" \
       -c "CREATE TABLE big (t text)" \
       -c "ALTER TABLE big ALTER COLUMN t SET STORAGE EXTERNAL" \
       -c "INSERT INTO big SELECT string_agg(substr(md5(i::text), 1, 2 + i % 7), ' ') FROM generate_series(1, 30000000) i"
bytes=$(psql_q -c "SELECT octet_length(t) FROM big")
echo "# text of $bytes bytes"

# Peak RSS growth (kB) of a fresh backend running $1.
peak_growth() {
	psql_q <<SQL | tail -1
SELECT pg_backend_pid() AS pid \gset
\setenv ND_PID :pid
\! grep VmHWM /proc/\$ND_PID/status | awk '{print \$2}' > /tmp/nd_hwm_before
SELECT $1 IS NOT NULL FROM big;
\! echo \$(( \$(grep VmHWM /proc/\$ND_PID/status | awk '{print \$2}') - \$(cat /tmp/nd_hwm_before) ))
SQL
}
md5_kb=$(peak_growth "md5(t)")
sim_kb=$(peak_growth "simhash(t)")
echo "# peak RSS growth: md5 ${md5_kb} kB, simhash ${sim_kb} kB"
ok $(( sim_kb <= md5_kb + md5_kb / 10 + 8192 ? 0 : 1 )) "simhash(200 MB text) needs no more memory than md5() of it"
tok_kb=$(peak_growth "text_tokens(t)")
echo "# text_tokens(), which returns every token as an array, grows by ${tok_kb} kB"
# The array of 30M short tokens takes about 4.2 times the text itself;
# md5()'s growth counts the shared buffers a backend maps, except where
# they are huge pages (not in the RSS), so it is the text alone there.
ok $(( tok_kb <= 5 * md5_kb ? 0 : 1 )) "text_tokens(200 MB text) stays within a small multiple of what md5() needs"

# Cancellation.
full_ms=$(psql_q -c "\timing on" -c "SELECT simhash(t) FROM big" | grep -o 'Time: [0-9.]*' | grep -o '[0-9.]*' | tail -1)
limit_ms=$(awk -v f="$full_ms" 'BEGIN { v = int(f / 10); if (v < 1) v = 1; print v }')
start=$(date +%s%N)
out=$(psql -X -q -At -c "SET statement_timeout = $limit_ms" -c "SELECT simhash(t) FROM big" 2>&1 || true)
cancel_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "# full run ${full_ms} ms; timeout ${limit_ms} ms; cancelled after ${cancel_ms} ms (incl. psql start)"
case "$out" in *"canceling statement due to statement timeout"*) r=0 ;; *) r=1 ;; esac
ok $r "statement_timeout interrupts simhash()"
ok $(awk -v c="$cancel_ms" -v f="$full_ms" 'BEGIN { print (c < f / 2) ? 0 : 1 }') "the cancel comes well before the computation would have finished"
psql_q -c "SELECT simhash(t) IS NOT NULL FROM big" >/dev/null && ok 0 "the backend works after the cancel"
echo "1..$n"
SCRIPT
