#!/usr/bin/env bash
# End-to-end: the log-structured hamming index -- flushes of the pending
# list into new runs and compactions of runs -- through crashes and on a
# standby.
#
# A table of 30,000 rows with a hamming index (pending_limit 64kB,
# background_merge off: the inserting session flushes and compacts), rows
# inserted in batches of 600 by a background session, one transaction each.
# A developer's setting, neardup.debug_run_page_delay, slows the writing of
# run pages so that a kill lands inside a merge; pg_locks says which merge
# is under way (objsubid 20037: a flush, 20038 alone: a compaction).
#   1. kill -9 of the server in the middle of a flush, then in the middle
#      of a compaction: after recovery every committed batch is there and
#      no partial one, the index returns what a sequential scan returns
#      (radius, =, KNN: nd_check), hamming_check passes, and the index
#      flushes and compacts again (the pages the killed merge wrote are
#      recycled, not leaked: the index does not grow past what the rows
#      need after VACUUM).
#   2. A hot standby replays flushes and compactions: its runs are the
#      primary's, its index scans equal its sequential scans, and
#      hamming_check passes there.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

ND_PG_OPTS="${ND_PG_OPTS:-} wal_consistency_checking=generic" nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
work=$(mktemp -d /tmp/nd-lsm.XXXXXX)
trap 'rm -rf "$work"; nd_second_cluster_gone 2>/dev/null || true' EXIT

BATCH=600
INITIAL=30000
nd_setup_db
psql_q -c "CREATE EXTENSION pg_freespacemap" -c "CREATE TABLE t (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off)" \
	-c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series(1, $INITIAL) i" \
	-c "CREATE INDEX t_ham ON t USING hamming (sh) WITH (pending_limit = 64, background_merge = off)"
datadir=$(psql_q -c "SHOW data_directory")

# The merge locks held on t_ham, as objsubids (20036 flush/maintenance,
# 20037 a flush, 20038 compaction/maintenance).
locks_sql="(SELECT coalesce(string_agg(objsubid::text, ',' ORDER BY objsubid), '') FROM pg_locks
            WHERE locktype = 'object' AND classid = 'pg_class'::regclass
              AND objid = 't_ham'::regclass AND granted)"
runs() { psql_q -c "SELECT count(*) || ' runs: ' || coalesce(string_agg(entries::text, ' ' ORDER BY run), '') FROM hamming_runs('t_ham')"; }

# start_inserter FIRST_ID DELAY_MS: a background psql inserting batches
# from FIRST_ID on, one transaction each, with run pages written slowly.
start_inserter() {
	local first=$1 b
	{
		echo "SET neardup.debug_run_page_delay = $2;"
		for ((b = 0; b < 300; b++)); do
			echo "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series($((first + b * BATCH)), $((first + (b + 1) * BATCH - 1))) i;"
		done
	} >"$work/load.sql"
	rm -f "$work/rc"
	(
		rc=0
		psql -X -q -At -v ON_ERROR_STOP=1 -f "$work/load.sql" >/dev/null 2>"$work/load.err" || rc=$?
		echo $rc >"$work/rc"
	) &
	inserter=$!
}

check_rows() {
	local before=$1 res cnt maxid wrong
	res=$(psql_q -c "SELECT count(*), coalesce(max(id), 0), count(*) FILTER (WHERE sh IS DISTINCT FROM nd_row_code(id)) FROM t")
	IFS='|' read -r cnt maxid wrong <<<"$res"
	echo "# rows: $cnt (committed before the crash: $before), max id $maxid, wrong codes: $wrong"
	ok $(( cnt >= before && cnt == maxid && (cnt - INITIAL) % BATCH == 0 && wrong == 0 ? 0 : 1 )) \
		"$2: every batch committed before the crash is there, no partial batch"
}

check_index() {
	nd_check_ok "$1: index scans = sequential scan (radius, =, KNN)" t t_ham "" \
		"nd_query_codes() || ARRAY(SELECT sh FROM t ORDER BY id DESC LIMIT 5)"
	local c
	c=$(nd_ham_check t_ham)
	ok $([ "$c" = passed ] && echo 0 || echo 1) "$1: hamming_check passes ($c)"
}

# crash_during WHAT CONDITION: kill -9 of the server while CONDITION holds
# (a merge of that kind under way), then recovery and the checks.
crash_during() {
	local what=$1 cond=$2 before start
	start=$(psql_q -c "SELECT max(id) FROM t")
	start_inserter $((start + 1)) 40
	if nd_wait_for "$cond" 6000; then
		echo "# $what under way: locks $(psql_q -c "SELECT $locks_sql"), $(runs)"
		before=$(psql_q -c "SELECT count(*) FROM t")
		nd_kill_cluster "$datadir"
		ok 0 "crash during a $what: killed $nd_killed"
	else
		before=$(psql_q -c "SELECT count(*) FROM t")
		nd_kill_cluster "$datadir"
		ok 1 "crash during a $what: no $what was seen under way"
	fi
	wait "$inserter" || true
	pg_ctlcluster 15 regress start
	nd_wait_ready
	echo "# recovered: $(runs)"
	check_rows "$before" "crash during a $what"
	check_index "crash during a $what"
}

crash_during flush "$locks_sql LIKE '%20037%'"
crash_during compaction "$locks_sql = '20038'"

# The index merges again, and nothing written by the killed merges stays
# allocated: after VACUUM (which flushes, compacts and recycles) the index
# is within a few pages of what its entries need.
psql_q -c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series((SELECT max(id) + 1 FROM t), (SELECT max(id) + 20000 FROM t)) i"
psql_q -c "SELECT hamming_merge('t_ham')" >/dev/null
echo "# after more inserts: $(runs)"
check_index "after recovery, more flushes and compactions"
# (a transaction id between each two: pages a merge retired are recycled
# once the transaction id it stamped is older than every snapshot; the
# second VACUUM may move the run at the file's end into the freed pages,
# and the third recycles what that retired and cuts the end off)
psql_q -c "VACUUM t" -c "SELECT txid_current()" -c "VACUUM t" -c "SELECT txid_current()" -c "VACUUM t" >/dev/null
res=$(psql_q -c "SELECT pages, (SELECT sum(pages) FROM hamming_runs('t_ham')),
                        (SELECT count(*) FROM pg_freespace('t_ham') WHERE avail > 0)
                 FROM hamming_stats('t_ham')")
IFS='|' read -r total inruns free <<<"$res"
echo "# index pages: $total, in runs: $inruns, free: $free"
# the metapage and the lists' few pages besides
ok $(( total - inruns <= free + 8 ? 0 : 1 )) \
	"the pages of the killed merges are free again (index $total pages, runs $inruns, free $free)"
check_index "after VACUUM"

# --- 2. a standby replays flushes and compactions -----------------------------
nd_second_cluster nd-lsm-standby
port2=$ND2_PORT
nd_start_standby
before_runs=$(runs)
psql_q -c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series((SELECT max(id) + 1 FROM t), (SELECT max(id) + 30000 FROM t)) i"
psql_q -c "DELETE FROM t WHERE id % 11 = 0" -c "VACUUM t"
psql_q -c "INSERT INTO t SELECT i, nd_row_code(i) FROM generate_series((SELECT max(id) + 1 FROM t), (SELECT max(id) + 20000 FROM t)) i"
nd_wait_replay || echo "# the standby did not catch up"
p=$(runs)
s=$(PGPORT=$port2 runs)
echo "# runs before: $before_runs; primary: $p; standby: $s"
ok $([ "$p" = "$s" ] && [ "$p" != "$before_runs" ] && echo 0 || echo 1) \
	"the standby has the primary's runs after flushes and compactions"
PGPORT=$port2 nd_check_ok "on the standby: index scans = sequential scan" t t_ham
c=$(PGPORT=$port2 nd_ham_check t_ham false)
ok $([ "$c" = passed ] && echo 0 || echo 1) "on the standby: hamming_check passes ($c)"
echo "1..$n"
SCRIPT
