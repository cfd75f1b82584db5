#!/usr/bin/env bash
# End-to-end: the nightly dedup job of doc/nightly-job.md run by pg_cron
# (Debian's postgresql-15-cron, preloaded), in a throwaway cluster.  The
# demo corpus is loaded twice, into database postgres (pg_cron's) and into
# database direct; the job is scheduled with cron.schedule in the first and
# run with psql -f in the second.  Checks:
#   - cron.job_run_details reports the run as succeeded;
#   - the scheduled run leaves the table exactly as the direct run does:
#     the same flags, the same cluster per row, the same job state;
#   - a failing job (its table gone) is reported as failed with the error,
#     and the data of the other job is untouched.
# pg_cron 1.4 schedules by the minute: the test waits for the next minute
# (up to two).  TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
nd_corpus_list
export ROOT ND_E2E_LIB="$ROOT/test/e2e/lib"

# pg_cron runs a job over a libpq connection, as one command string (so
# the job's BEGIN ... COMMIT is its transaction; background-worker mode
# rejects an explicit BEGIN).  Through the Unix socket, where the server's
# own OS user passes peer authentication: no password to store.
export ND_PG_OPTS="shared_preload_libraries=pg_cron cron.database_name=postgres cron.host=/var/run/postgresql"

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
# shellcheck source=lib/common.sh
. "$ND_E2E_LIB/common.sh"

load() {
	psql_q -d "$1" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS neardup" \
		-v corpus="$ND_CORPUS" -f "$ROOT/test/demo/load_corpus.sql" -f "$ROOT/test/demo/nightly_setup.sql"
}
psql_q -c "CREATE DATABASE direct"
load postgres
load direct
psql_q -c "CREATE EXTENSION pg_cron"
echo "# pg_cron $(psql_q -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_cron'"), corpus of $(psql_q -c "SELECT count(*) FROM doc") rows"

# The job's text as pg_cron gets it: one command string.
job=$(cat "$ROOT/test/demo/nightly_dedup.sql")
# (-c does not interpolate variables: the statement goes through stdin)
echo "SELECT cron.schedule('neardup-nightly', '* * * * *', :'job')" | psql_q -v job="$job" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d direct -f "$ROOT/test/demo/nightly_dedup.sql" >/dev/null

# Wait for the first run to end (the bound only stops a hung test).
for _ in $(seq 1 1500); do
	[ "$(psql_q -c "SELECT count(*) FROM cron.job_run_details WHERE status IN ('succeeded', 'failed')")" -gt 0 ] && break
	sleep 0.1
done
psql_q -c "SELECT cron.unschedule('neardup-nightly')" >/dev/null
# A run that started before the unschedule may still be going.
for _ in $(seq 1 1500); do
	[ "$(psql_q -c "SELECT count(*) FROM cron.job_run_details WHERE status NOT IN ('succeeded', 'failed')")" = 0 ] && break
	sleep 0.1
done
run=$(psql_q -c "SELECT status || ' (' || coalesce(return_message, '') || ')' FROM cron.job_run_details ORDER BY runid LIMIT 1")
echo "# first scheduled run: $run"
[[ $run == succeeded* ]] && r=0 || r=1
ok $r "cron.job_run_details reports the scheduled nightly job as succeeded"

state() {
	psql_q -d "$1" -c "SELECT md5(string_agg(id || ':' || is_dup, ',' ORDER BY id)) FROM doc" \
		-c "SELECT md5(string_agg(id || ':' || cluster_id, ',' ORDER BY id)) FROM dedup_cluster" \
		-c "SELECT last_id FROM dedup_state" -c "SELECT count(*) FILTER (WHERE is_dup) FROM doc" | tr '\n' ' '
}
scheduled=$(state postgres)
direct=$(state direct)
echo "# scheduled: $scheduled"
echo "# direct:    $direct"
flagged=$(psql_q -d direct -c "SELECT count(*) FROM doc WHERE is_dup")
[ "$scheduled" = "$direct" ] && [ "$flagged" -gt 0 ] && r=0 || r=1
ok $r "the scheduled run flags and clusters exactly as a direct run ($flagged rows flagged)"

# A job whose table is gone fails, reported with its error; the data of
# the first job is untouched.
psql_q -c "CREATE TABLE gone_doc (id int)" -c "DROP TABLE gone_doc"
jobid=$(psql_q -c "SELECT cron.schedule('broken', '* * * * *', 'SELECT count(*) FROM simhash_clusters(''gone_doc'', ''id'', ''sh'', 3)')")
for _ in $(seq 1 1500); do
	[ "$(psql_q -c "SELECT count(*) FROM cron.job_run_details WHERE jobid = $jobid AND status IN ('succeeded', 'failed')")" -gt 0 ] && break
	sleep 0.1
done
psql_q -c "SELECT cron.unschedule($jobid)" >/dev/null
msg=$(psql_q -c "SELECT status || ': ' || coalesce(return_message, '') FROM cron.job_run_details WHERE jobid = $jobid ORDER BY runid LIMIT 1")
echo "# broken job: $msg"
[[ $msg == failed*gone_doc* ]] && [ "$(state postgres)" = "$scheduled" ] && r=0 || r=1
ok $r "a failing job is reported as failed with the error; the data is untouched"
echo "1..$n"
SCRIPT
