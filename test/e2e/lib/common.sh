# Shell helpers of the index end-to-end tests, sourced inside nd_in_cluster
# (PGHOST, PGPORT, PGUSER, PGPASSWORD point at the throwaway cluster).
# ND_E2E_LIB is this directory.

# shellcheck source=../../lib/ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/ports.sh"

n=0
# ok STATUS DESCRIPTION: one TAP line; STATUS 0 passes.
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# nd_ham_check INDEX [HEAPALLINDEXED [DATABASE]]: hamming_check()'s outcome
# on one line: "passed", or the error (verbose: with its SQLSTATE).
nd_ham_check() {
	psql -X -At -v VERBOSITY=verbose ${3:+-d "$3"} \
		-c "SELECT 'passed' FROM hamming_check('$1', ${2:-true})" 2>&1 |
		tr '\n' ' ' | sed 's/ *$//' || true
}

# Creates the extension and the helpers of index_check.sql in database
# ${1:-$PGDATABASE}.
nd_setup_db() {
	psql_q ${1:+-d "$1"} -c "CREATE EXTENSION IF NOT EXISTS neardup" -f "$ND_E2E_LIB/index_check.sql"
}

# nd_check_ok DESCRIPTION TABLE INDEX [OTHER_INDEXES [CODES_SQL [RADII]]]
# One TAP line: nd_check(TABLE, INDEX) found no mismatch and no plan that
# does not use INDEX.  OTHER_INDEXES (comma-separated), when given, are dropped for the check
# inside a transaction that is rolled back, so that the planner cannot
# choose it instead.  CODES_SQL: a simhash64[] expression for the query
# codes (default: nd_query_codes()); RADII: an int[] literal (default: that
# of nd_check).
nd_check_ok() {
	local desc=$1 tbl=$2 idx=$3 other=${4:-} codes=${5:-nd_query_codes()} radii=${6:-} out
	out=$(psql_q -c "BEGIN" \
		${other:+-c "DROP INDEX $other"} \
		-c "SELECT nd_check('$tbl', '$idx', $codes${radii:+, '$radii'})" \
		-c "ROLLBACK" 2>&1) || true
	echo "# $idx: ${out%% |*}"
	if [[ $out =~ ^checks=[1-9][0-9]*\ mismatches=0\ wrong_plans=0$ ]]; then
		ok 0 "$desc"
	else
		echo "# $out" | head -c 4000
		echo
		ok 1 "$desc"
	fi
}

# nd_alive PID: the process exists and is not a zombie (a killed server
# process may stay a zombie here: its new parent need not reap it).
nd_alive() {
	[ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# nd_wait_for SQL_CONDITION [TRIES]: polls (every 0.1 s) until the query
# returns t; returns 1 if it never did.  The bound only stops a hung test:
# no check depends on how long anything takes.
nd_wait_for() {
	local i
	for ((i = 0; i < ${2:-3000}; i++)); do
		[ "$(psql -X -At -c "SELECT $1" 2>/dev/null || true)" = t ] && return 0
		sleep 0.1
	done
	return 1
}

# nd_kill_cluster DATADIR: kill -9 of the postmaster and all its children,
# until none is left; then its lock files are removed, as a reboot would
# (a killed postmaster may linger as a zombie, which nothing here reaps,
# and its pid still answer kill(pid, 0)); the data directory's
# postmaster.pid is left for pg_ctlcluster to judge.  Sets nd_killed to
# what was killed, for the log.
nd_kill_cluster() {
	local pm kids p
	pm=$(head -1 "$1/postmaster.pid")
	kids=$(pgrep -P "$pm" || true)
	# shellcheck disable=SC2086
	kill -9 "$pm" $kids
	for p in $pm $kids; do
		while nd_alive "$p"; do sleep 0.1; done
	done
	rm -f "/var/run/postgresql/.s.PGSQL.$PGPORT.lock" "/tmp/.s.PGSQL.$PGPORT.lock"
	# shellcheck disable=SC2086
	nd_killed="the postmaster ($pm) and $(echo $kids | wc -w) processes"
}

# nd_wait_ready [TRIES]: until the server accepts connections.
nd_wait_ready() {
	local i
	for ((i = 0; i < ${1:-3000}; i++)); do
		psql -X -At -c "SELECT 1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# nd_check_fails DESCRIPTION TABLE INDEX [OTHER_INDEX]: the control: one TAP
# line that passes when nd_check() does report mismatches (for an index
# known to miss rows).
nd_check_fails() {
	local desc=$1 tbl=$2 idx=$3 other=${4:-} out
	out=$(psql_q -c "BEGIN" \
		${other:+-c "DROP INDEX $other"} \
		-c "SELECT nd_check('$tbl', '$idx')" \
		-c "ROLLBACK" 2>&1) || true
	echo "# $idx: ${out%% |*}"
	if [[ $out =~ ^checks=[1-9][0-9]*\ mismatches=[1-9][0-9]*\ wrong_plans=0 ]]; then
		ok 0 "$desc"
	else
		echo "# $out" | head -c 4000
		echo
		ok 1 "$desc"
	fi
}

# nd_start_writer TABLE FIRST_ID: a background writer (pid in ND_WRITER)
# that, until the file $work/stop exists, inserts batches of 200 rows
# (ids FIRST_ID on, nd_row_code codes), deletes 50 older rows and moves 20
# rows by one bit, each batch one transaction.  nd_stop_writer stops it and
# waits for it; $work/batches then holds the number of batches committed.
nd_start_writer() {
	local tbl=$1 first=$2
	rm -f "$work/stop" "$work/batches"
	(
		b=0
		while [ ! -e "$work/stop" ]; do
			lo=$((first + b * 200))
			psql -X -q -v ON_ERROR_STOP=1 -c "BEGIN" \
				-c "INSERT INTO $tbl SELECT i, nd_row_code(i) FROM generate_series($lo, $((lo + 199))) i" \
				-c "DELETE FROM $tbl WHERE id BETWEEN $((lo / 2)) AND $((lo / 2 + 49))" \
				-c "UPDATE $tbl SET sh = nd_flip(sh, 1, $((b % 64))) WHERE id BETWEEN $((lo / 3)) AND $((lo / 3 + 19))" \
				-c "COMMIT" >/dev/null || break
			b=$((b + 1))
			echo "$b" >"$work/batches"
		done
	) &
	ND_WRITER=$!
}
nd_stop_writer() {
	touch "$work/stop"
	wait "$ND_WRITER" || true
}

# nd_second_cluster NAME: room for a second server beside the throwaway
# one (a standby, a subscriber).  Sets ND2_DIR, a directory postgres owns
# (the data directory goes in $ND2_DIR/data), and ND2_PORT, a free port;
# on exit the server in $ND2_DIR/data is stopped and the directory removed.
nd_second_cluster() {
	ND2_DIR=$(mktemp -d "/tmp/$1.XXXXXX")
	chown postgres: "$ND2_DIR"
	ND2_PORT=$(nd_free_port)
	trap nd_second_cluster_gone EXIT
}
# nd_start_standby: a hot standby of the throwaway cluster in $ND2_DIR/data
# (nd_second_cluster first), made with pg_basebackup and streaming from it.
#
# On a source-built server (ND_PG_BIN, see pgenv.sh) the primary listens on a
# socket in its own directory only (PGHOST): the standby's socket goes there
# too, so that PGPORT alone picks the server; the staged installation is
# its own, with no extension_destdir.
nd_start_standby() {
	local bin=${ND_PG_BIN:-/usr/lib/postgresql/15/bin} sockets=$ND2_DIR destdir=
	[[ $PGHOST == /* ]] && sockets="$ND2_DIR,$PGHOST"
	[ -n "${ND_PG_BIN:-}" ] || destdir="extension_destdir = '$ND_STAGE'"
	runuser -u postgres -- env PGPASSWORD="${PGPASSWORD:-}" "$bin/pg_basebackup" -h "$PGHOST" -p "$PGPORT" \
		-U "$PGUSER" -D "$ND2_DIR/data" -X stream -R -c fast
	# Debian keeps the configuration outside the data directory: write one.
	runuser -u postgres -- tee "$ND2_DIR/data/postgresql.conf" >/dev/null <<EOF
port = $ND2_PORT
listen_addresses = 'localhost'
unix_socket_directories = '$sockets'
hot_standby = on
$destdir
lc_messages = 'C'
max_standby_streaming_delay = -1
EOF
	runuser -u postgres -- tee "$ND2_DIR/data/pg_hba.conf" >/dev/null <<EOF
local all all trust
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
EOF
	runuser -u postgres -- touch "$ND2_DIR/data/pg_ident.conf"
	runuser -u postgres -- "$bin/pg_ctl" -D "$ND2_DIR/data" -l "$ND2_DIR/log" -w start >/dev/null
}

# nd_wait_replay: until the standby has replayed everything the primary
# wrote (false after 5 minutes).
nd_wait_replay() {
	local lsn i
	lsn=$(psql_q -c "SELECT pg_current_wal_lsn()")
	for ((i = 0; i < 3000; i++)); do
		[ "$(PGPORT=$ND2_PORT psql -X -At -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'" 2>/dev/null)" = t ] && return 0
		sleep 0.1
	done
	return 1
}

nd_second_cluster_gone() {
	if [ -f "$ND2_DIR/data/postmaster.pid" ]; then
		runuser -u postgres -- "${ND_PG_BIN:-/usr/lib/postgresql/15/bin}/pg_ctl" -D "$ND2_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$ND2_DIR"
}
