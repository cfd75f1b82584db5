#!/usr/bin/env bash
# End-to-end: GiST, GIN and hamming indexes of simhash64 survive crashes.
#
# One table with the three indexes (GIN with fastupdate, so that the pending
# list is in play; hamming with a 64kB pending limit, so that inserts merge
# it into the run again and again, and the crashes hit merges), rows inserted in batches of 500 by a background session, one
# transaction per batch.  The server is crashed in the middle of the load,
# twice:
#   1. kill -9 of the postmaster and all its processes (no checkpoint since
#      the indexes were built, so recovery replays the builds too; a pending
#      list limit large enough that GIN keeps every new row in its pending
#      list);
#   2. after a checkpoint, kill -9 of the inserting backend: the postmaster
#      resets every process and recovers (small pending list limit: the list
#      is flushed into the entry tree again and again during the load).
# After each recovery: committed batches are there and in-flight ones are
# not; every query code and radius 0..5, 8, 13 returns through each index
# exactly the rows a sequential scan returns, KNN returns the brute-force
# distances (nd_check in lib/index_check.sql); the same after VACUUM.
# amcheck has no GIN or GiST checks in PostgreSQL 15, hence no amcheck here.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

# wal_consistency_checking: recovery compares its replay of every generic
# WAL record (hamming) with the page image the record carries.
ND_PG_OPTS="${ND_PG_OPTS:-} wal_consistency_checking=generic" nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
work=$(mktemp -d /tmp/nd-crash.XXXXXX)
trap 'rm -rf "$work"' EXIT

BATCH=500
INITIAL=60000
nd_setup_db
psql_q -c "CREATE EXTENSION pgstattuple" \
	-c "CREATE TABLE t (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off)" \
	-c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series(1, $INITIAL) i" \
	-c "CREATE INDEX t_gist ON t USING gist (sh)" \
	-c "CREATE INDEX t_gin ON t USING gin (sh) WITH (fastupdate = on, gin_pending_list_limit = 65536)" \
	-c "CREATE INDEX t_ham ON t USING hamming (sh) WITH (pending_limit = 64)"
datadir=$(psql_q -c "SHOW data_directory")
logfile=$(pg_lsclusters -h 15 regress | awk '{print $7}')

# start_inserter FIRST_ID: a background psql inserting batches from
# FIRST_ID on, one transaction each (far more than get done before the
# crash); its backend's pid goes to $work/pid, psql's exit code to $work/rc.
start_inserter() {
	local first=$1 b
	{
		echo "\\o $work/pid"
		echo "SELECT pg_backend_pid();"
		echo "\\o"
		for ((b = 0; b < 400; b++)); do
			echo "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series($((first + b * BATCH)), $((first + (b + 1) * BATCH - 1))) i;"
		done
	} >"$work/load.sql"
	rm -f "$work/pid" "$work/rc"
	(
		rc=0
		psql -X -q -At -v ON_ERROR_STOP=1 -f "$work/load.sql" >/dev/null 2>"$work/load.err" || rc=$?
		echo $rc >"$work/rc"
	) &
	inserter=$!
}

# The rows a recovered table must hold: whole batches, ids 1..count, each
# with its own code; at least what was committed before the crash ($1).
check_rows() {
	local before=$1 res
	res=$(psql_q -c "SELECT count(*), coalesce(max(id), 0), count(*) FILTER (WHERE sh IS DISTINCT FROM nd_row_code(id)) FROM t")
	IFS='|' read -r cnt maxid wrong <<<"$res"
	echo "# rows: $cnt (committed before the crash: $before), max id $maxid, rows with a wrong code: $wrong"
	ok $(( cnt >= before && cnt == maxid && (cnt - INITIAL) % BATCH == 0 && wrong == 0 ? 0 : 1 )) \
		"$2: every batch committed before the crash is there, no partial batch"
}

pending() { psql_q -c "SELECT pending_pages || ' pages, ' || pending_tuples || ' tuples' FROM pgstatginindex('t_gin')"; }

# check_indexes LABEL: both indexes against a sequential scan, also for
# codes of the last rows inserted before the crash.
check_indexes() {
	local codes="nd_query_codes() || ARRAY(SELECT sh FROM t ORDER BY id DESC LIMIT 5)"
	nd_check_ok "$1: GiST index scans = sequential scan (radius, =, KNN)" t t_gist "t_gin, t_ham" "$codes"
	nd_check_ok "$1: GIN index scans = sequential scan (radius, =)" t t_gin "t_gist, t_ham" "$codes"
	nd_check_ok "$1: hamming index scans = sequential scan (radius, =, KNN)" t t_ham "t_gist, t_gin" "$codes"
}

# --- 1. kill -9 of the postmaster and all its children ---------------------
start_inserter $((INITIAL + 1))
nd_wait_for "count(*) >= $((INITIAL + 20 * BATCH)) FROM t" || echo "# the load did not progress"
before=$(psql_q -c "SELECT count(*) FROM t")
nd_kill_cluster "$datadir"
wait "$inserter" || true
echo "# killed $nd_killed with $before rows committed; the inserting psql exited with $(cat "$work/rc")"
ok $(( $(cat "$work/rc") != 0 ? 0 : 1 )) "crash 1: the load was interrupted"
loglines=$(wc -l <"$logfile")
pg_ctlcluster 15 regress start
nd_wait_ready
tail -n +"$((loglines + 1))" "$logfile" | grep -oE '(redo (starts|done) at|checkpoint complete).*' | sed 's/^/# /' | cut -c1-120
ok $(tail -n +"$((loglines + 1))" "$logfile" | grep -q 'redo starts at' && echo 0 || echo 1) \
	"crash 1: the server restarted and replayed WAL"
check_rows "$before" "crash 1"
p=$(pending)
echo "# GIN pending list after recovery: $p"
ok $([[ $p != "0 pages, 0 tuples" ]] && echo 0 || echo 1) "crash 1: GIN rows inserted before the crash are in the recovered pending list"
check_indexes "crash 1"
psql_q -c "VACUUM t"
p=$(pending)
echo "# GIN pending list after VACUUM: $p"
ok $([[ $p == "0 pages, 0 tuples" ]] && echo 0 || echo 1) "crash 1: VACUUM emptied the pending list"
check_indexes "crash 1, after VACUUM"

# --- 2. kill -9 of the inserting backend --------------------------------------
psql_q -c "ALTER INDEX t_gin SET (gin_pending_list_limit = 128)" -c "CHECKPOINT"
start=$(psql_q -c "SELECT count(*) FROM t")
start_inserter $((start + 1))
nd_wait_for "count(*) >= $((start + 20 * BATCH)) FROM t" || echo "# the load did not progress"
while [ ! -s "$work/pid" ]; do sleep 0.1; done
backend=$(cat "$work/pid")
before=$(psql_q -c "SELECT count(*) FROM t")
loglines=$(wc -l <"$logfile")
kill -9 "$backend"
wait "$inserter" || true
echo "# killed backend $backend with $before rows committed; the inserting psql exited with $(cat "$work/rc")"
ok $(( $(cat "$work/rc") != 0 ? 0 : 1 )) "crash 2: the load was interrupted"
# Until the postmaster has reset everything and is ready again.
for ((i = 0; i < 3000; i++)); do
	tail -n +"$((loglines + 1))" "$logfile" | grep -A1000 'reinitializing' | grep -q 'ready to accept connections' && break
	sleep 0.1
done
nd_wait_ready
log=$(tail -n +"$((loglines + 1))" "$logfile")
grep -oE '(terminated by signal|redo (starts|done) at).*' <<<"$log" | sed 's/^/# /' | cut -c1-120
ok $(grep -q 'terminated by signal 9' <<<"$log" && grep -q 'redo starts at' <<<"$log" && echo 0 || echo 1) \
	"crash 2: the postmaster reset all processes and replayed WAL"
check_rows "$before" "crash 2"
echo "# GIN pending list after recovery: $(pending)"
check_indexes "crash 2"
psql_q -c "VACUUM t"
check_indexes "crash 2, after VACUUM"

# The recovered indexes take new rows.
psql_q -c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series((SELECT max(id) + 1 FROM t), (SELECT max(id) + $BATCH FROM t)) i"
check_indexes "after more inserts"
echo "1..$n"
SCRIPT
