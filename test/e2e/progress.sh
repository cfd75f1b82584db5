#!/usr/bin/env bash
# End-to-end: another session watches a long dedup job through
# neardup_progress().  Session A runs simhash_clusters over a query that
# stops at row 25,000 on an advisory lock session B holds; B waits until A
# is blocked on that lock (pg_stat_activity: a state, not a time), then
# sees A's job, phase and count; once B lets go, A finishes and its row is
# gone.  The same for a job that fails, and for minhash_clusters.  A role
# without A's privileges sees the row without its details.  dedup_keep_one
# shows under its own name while its pairs query runs.  A bulk UPDATE
# that fingerprints texts shows as "fingerprinting" while its statement
# runs, and not after it.  Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
work=$(mktemp -d /tmp/nd-progress.XXXXXX)
chmod 777 "$work"
# idle sessions of the slot tests (below) end with the script, however it ends
trap '[ -f "$work/idle.pids" ] && xargs kill <"$work/idle.pids" 2>/dev/null; rm -rf "$work"' EXIT

psql_q -c "CREATE EXTENSION neardup" -c "
CREATE TABLE pt AS SELECT i::bigint AS id, (hashint8extended(i, 0) # (i % 1000))::simhash64 AS sh,
                          minhash('w' || i || ' w' || (i % 7) || ' w' || (i % 11)) AS sig
FROM generate_series(1, 30000) i;
CREATE TABLE pk AS SELECT id, sh, NULL::bool AS dup FROM pt;
CREATE ROLE watcher;"

# The job's query blocks at row 25,000 while lock 42 is held elsewhere.
blocking_query() {
	echo "SELECT id, $1 FROM pt WHERE CASE WHEN id = 25000 THEN pg_advisory_lock_shared(42)::text = '' ELSE true END"
}

# hold KEY: another session holds advisory lock KEY ($holder) until
# release KEY.
hold() {
	psql_q -c "SELECT pg_advisory_lock($1), pg_sleep(1e6)" -o /dev/null 2>/dev/null &
	holder=$!
	nd_wait_for "EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted)"
}
release() {
	psql_q -o /dev/null -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_advisory_lock($1)%'"
	wait "$holder" || true
}

# a_status: waits for session A ($a), shows its output, returns its status.
a_status() {
	local rc=0
	wait "$a" || rc=$?
	sed 's/^/# A: /' "$work/a.out"
	return $rc
}

# watch JOB COLUMN EXPECTED_PHASE: B holds the lock, A runs JOB, B looks.
watch() {
	local job=$1 col=$2 pid row after rc
	hold 42
	psql_q -c "SELECT count(*) FROM $job('$(blocking_query "$col" | sed "s/'/''/g")')" \
		-c "SELECT pg_advisory_unlock_shared(42)" >"$work/a.out" 2>&1 &
	local a=$!
	nd_wait_for "EXISTS (SELECT FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE '%$job%')"
	ok $? "$job: session A waits on the lock at row 25,000"
	pid=$(psql_q -c "SELECT pid FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE '%$job%'")
	row=$(psql_q -c "SELECT job || ' | ' || phase || ' | ' || done || ' | ' || coalesce(total::text, 'null') || ' | ' || (started <= phase_started)
	                 FROM neardup_progress() WHERE pid = $pid")
	echo "# $row"
	[ "$row" = "$job | reading rows | 20000 | null | true" ]
	ok $? "$job: session B sees A's job, phase and rows read so far"
	row=$(psql_q -c "SET ROLE watcher" -c "SELECT coalesce(job, 'hidden') FROM neardup_progress() WHERE pid = $pid")
	[ "$row" = hidden ]
	ok $? "$job: a role without A's privileges sees only that a job runs ($row)"
	release 42
	rc=0
	a_status || rc=$?
	[ $rc -eq 0 ]
	ok $? "$job: A finishes once the lock is free"
	after=$(psql_q -c "SELECT count(*) FROM neardup_progress() WHERE pid = $pid")
	[ "$after" = 0 ]
	ok $? "$job: and its row is gone ($after)"
}

watch simhash_clusters sh
watch minhash_clusters sig

# dedup_keep_one: its pairs query's simhash_pairs shows under its name.
hold 42
psql_q -c "SELECT dedup_keep_one('pk', 'id',
             \$p\$SELECT id_a, id_b FROM simhash_pairs(\$b\$$(blocking_query sh | sed 's/FROM pt/FROM pk/')\$b\$, 3)\$p\$,
             flag_column => 'dup')" \
	-c "SELECT pg_advisory_unlock_shared(42)" >"$work/a.out" 2>&1 &
a=$!
nd_wait_for "EXISTS (SELECT FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE '%dedup_keep_one%')"
ok $? "dedup_keep_one: session A waits on the lock at row 25,000 of its pairs query"
pid=$(psql_q -c "SELECT pid FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE '%dedup_keep_one%'")
row=$(psql_q -c "SELECT job || ' | ' || phase || ' | ' || done FROM neardup_progress() WHERE pid = $pid")
echo "# $row"
[ "$row" = "dedup_keep_one | reading rows | 20000" ]
ok $? "dedup_keep_one: session B sees it by name, in the phase of the simhash_pairs it runs"
release 42
rc=0
a_status || rc=$?
[ $rc -eq 0 ] && [ "$(psql_q -c "SELECT count(*) FROM neardup_progress() WHERE pid = $pid")" = 0 ]
ok $? "dedup_keep_one: A finishes once the lock is free, and its row is gone"

# A bulk UPDATE that fingerprints texts: B sees "fingerprinting" and the
# count A published (every 10,000 texts) while A waits at row 25,000.
hold 42
psql_q -c "UPDATE pt SET sh = simhash('w' || id || ' w' || (id % 7))
           WHERE CASE WHEN id = 25000 THEN pg_advisory_lock_shared(42)::text = '' ELSE true END" \
	-c "SELECT pg_advisory_unlock_shared(42)" >"$work/a.out" 2>&1 &
a=$!
nd_wait_for "EXISTS (SELECT FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE 'UPDATE pt%')"
ok $? "bulk UPDATE: session A waits on the lock at row 25,000"
pid=$(psql_q -c "SELECT pid FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE 'UPDATE pt%'")
row=$(psql_q -c "SELECT job || ' | ' || phase || ' | ' || done || ' | ' || coalesce(total::text, 'null') || ' | ' || (started = query_start)
                 FROM neardup_progress() JOIN pg_stat_activity USING (pid) WHERE pid = $pid")
echo "# $row"
[ "$row" = "fingerprinting | simhash | 20000 | null | true" ]
ok $? "bulk UPDATE: session B sees the texts A fingerprinted so far, since A's statement started"
release 42
rc=0
a_status || rc=$?
[ $rc -eq 0 ] && [ "$(psql_q -c "SELECT count(*) FROM neardup_progress() WHERE pid = $pid")" = 0 ]
ok $? "bulk UPDATE: A finishes once the lock is free, and its row is gone"

# Once the statement is over the row goes, although A's transaction goes
# on: A fingerprints 30,000 texts, then waits in its next statement.
hold 43
psql_q -c "BEGIN" -c "SELECT count(minhash('w' || id, 16)) FROM pt" -c "SELECT pg_advisory_lock_shared(43)" \
	-c "COMMIT" >"$work/a.out" 2>&1 &
a=$!
nd_wait_for "EXISTS (SELECT FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE '%pg_advisory_lock_shared(43)%')"
ok $? "a transaction that fingerprinted 30,000 texts waits in its next statement"
pid=$(psql_q -c "SELECT pid FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE '%pg_advisory_lock_shared(43)%'")
after=$(psql_q -c "SELECT count(*) FROM neardup_progress() WHERE pid = $pid")
[ "$after" = 0 ]
ok $? "its fingerprinting row went with the statement ($after)"
release 43
wait "$a" || true

# One role cannot blind the table of 64 slots for everyone.  64 sessions,
# 16 of each of four roles with no privileges, fingerprint 10,000 texts
# each and then sit idle in their transactions: their rows are not shown
# (the statements are over), and a superuser's job still gets a slot,
# reclaimed from them.  Then 17 sessions of one role each hold a job of
# their own, idle: 16 are shown (a role holds at most 16 slots), none is
# hidden, and the superuser's job is shown beside them (0.3 showed none of
# the superuser's jobs in the first case and all 17 in the second).
psql_q -c "CREATE ROLE blind1" -c "CREATE ROLE blind2" -c "CREATE ROLE blind3" -c "CREATE ROLE blind4"
idle_sessions=()
# idle ROLE SQL: a session of ROLE that runs SQL in a transaction, then idles
# (psql reads the SQL, then waits on its input, a sleep whose pid is kept)
idle() {
	(echo "$BASHPID" >>"$work/idle.pids"; printf 'SET ROLE %s;\nBEGIN;\n%s\n' "$1" "$2"; exec sleep 600) |
		psql -X -q -o /dev/null &
	idle_sessions+=($!)
}
end_idle() {
	xargs kill <"$work/idle.pids" 2>/dev/null || true
	rm -f "$work/idle.pids"
	wait "${idle_sessions[@]}" 2>/dev/null || true
	idle_sessions=()
}
# superuser_job: the row neardup_progress() shows for a job a superuser begins
superuser_job() {
	psql_q -c "BEGIN" -c "DO \$\$ BEGIN PERFORM neardup_progress_begin('superuser job'); END \$\$" \
		-c "SELECT job FROM neardup_progress() WHERE pid = pg_backend_pid()" -c "COMMIT"
}
for r in 1 2 3 4; do
	for i in $(seq 16); do
		idle "blind$r" "SELECT count(simhash('w' || i)) FROM generate_series(1, 10000) i;"
	done
done
nd_wait_for "(SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%simhash(''w''%') = 64"
ok $? "64 sessions of four roles fingerprinted 10,000 texts each and idle in their transactions"
after=$(psql_q -c "SELECT count(*) FROM neardup_progress() p JOIN pg_stat_activity a USING (pid) WHERE a.state = 'idle in transaction'")
[ "$after" = 0 ]
ok $? "none of their fingerprinting rows is shown once their statements are over ($after)"
row=$(superuser_job)
[ "$row" = "superuser job" ]
ok $? "a superuser's job gets a slot and shows ($row)"
end_idle
for i in $(seq 17); do
	idle blind1 "SELECT neardup_progress_begin('held ' || $i);"
done
nd_wait_for "(SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%neardup_progress_begin%') = 17"
ok $? "17 sessions of one role hold a job each, idle in their transactions"
held=$(psql_q -c "SELECT count(*) FROM neardup_progress() WHERE job LIKE 'held %'")
[ "$held" = 16 ]
ok $? "16 of them are shown: a role holds at most 16 of the 64 slots ($held)"
row=$(superuser_job)
[ "$row" = "superuser job" ]
ok $? "a superuser's job still gets a slot beside them ($row)"
end_idle

# A job that fails (a division by zero at row 25,000) leaves no row, and
# the next job of the same session is reported again.
out=$(psql_q -c "SELECT count(*) FROM simhash_clusters('SELECT id, sh FROM pt WHERE 1 / (id - 25000) > -2')" 2>&1 || true)
echo "# $out"
out=$(psql_q -c "DO \$\$ BEGIN PERFORM simhash_clusters('SELECT id, sh FROM pt WHERE 1 / (id - 25000) > -2'); EXCEPTION WHEN division_by_zero THEN END \$\$" \
	-c "SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid()")
[ "$out" = 0 ]
ok $? "a job that failed inside an exception block leaves no row behind ($out)"
echo "1..$n"
SCRIPT
