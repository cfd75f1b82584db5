#!/usr/bin/env bash
# End-to-end: GiST, GIN and hamming indexes of simhash64 on a streaming
# replica.
#
# A hot standby is made from the throwaway cluster with pg_basebackup and run
# by pg_ctl as the postgres user on a port of its own.  The primary then
# changes indexes that the base backup holds (inserts: GiST page splits,
# GIN pending list, flushed into the entry tree again and again at its
# 256 kB limit, hamming merges; deletes, updates) and builds new ones (CREATE INDEX
# WAL); after replay, on the standby, every query code and radius returns
# through each index what a sequential scan on the standby returns, and KNN
# the brute-force distances (nd_check in lib/index_check.sql).  Again after
# VACUUM (GIN pending list flushed into the entry tree, GiST vacuum) and
# REINDEX CONCURRENTLY on the primary.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

# wal_consistency_checking: every generic WAL record (hamming, whose list
# appends write their records themselves) carries a page image that the
# standby compares with its replay of the record; a difference stops it.
ND_PG_OPTS="${ND_PG_OPTS:-} wal_consistency_checking=generic" nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
nd_second_cluster nd-standby
port2=$ND2_PORT

nd_setup_db
psql_q -c "CREATE EXTENSION pgstattuple"
for t in rg rn rh sg sn sh; do
	psql_q -c "CREATE TABLE $t (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off)" \
		-c "INSERT INTO $t SELECT i, nd_row_code(i) FROM generate_series(1, 50000) i"
done
psql_q -c "CREATE INDEX rg_gist ON rg USING gist (sh)" \
	-c "CREATE INDEX rn_gin ON rn USING gin (sh) WITH (fastupdate = on, gin_pending_list_limit = 256)" \
	-c "CREATE INDEX rh_ham ON rh USING hamming (sh) WITH (pending_limit = 64)"

# --- the standby ----------------------------------------------------------------------
nd_start_standby
ok $([ "$(PGPORT=$port2 psql -X -At -c 'SELECT pg_is_in_recovery()')" = t ] && echo 0 || echo 1) \
	"the standby runs (hot standby, streaming from the primary)"

digest() { psql -X -At -c "SELECT count(*) || ' rows, ' || md5(string_agg(id || ':' || coalesce(sh::text, '-'), ',' ORDER BY id)) FROM $1"; }
# on_standby TABLE INDEX LABEL: the standby has the primary's rows, and its
# index paths return what its sequential scans return.
on_standby() {
	local p s
	p=$(digest "$1")
	s=$(PGPORT=$port2 digest "$1")
	ok $([ "$p" = "$s" ] && echo 0 || echo 1) "$3: $1 on the standby = $1 on the primary ($s)"
	PGPORT=$port2 nd_check_ok "$3: $2 on the standby: index scans = sequential scan" "$1" "$2"
}

# --- changes on the primary, replayed ---------------------------------------------------
for ((b = 0; b < 40; b++)); do
	lo=$((50001 + b * 500))
	for t in rg rn rh sg sn sh; do
		echo "INSERT INTO $t SELECT i, nd_row_code(i) FROM generate_series($lo, $((lo + 499))) i;"
	done
done | psql_q
for t in rg rn rh sg sn sh; do
	psql_q -c "DELETE FROM $t WHERE id % 3 = 0 AND id < 40000" \
		-c "UPDATE $t SET sh = nd_flip(sh, 2, (id % 64)::int) WHERE id % 7 = 0 AND id < 20000"
done
psql_q -c "CREATE INDEX sg_gist ON sg USING gist (sh)" \
	-c "CREATE INDEX sn_gin ON sn USING gin (sh) WITH (fastupdate = off)" \
	-c "CREATE INDEX sh_ham ON sh USING hamming (sh)"
# rh_ham's merges run in background workers: let them end before replay
nd_wait_for "NOT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'neardup merge')" ||
	echo "# a hamming merge is still running"
nd_wait_replay || echo "# the standby did not catch up"
merges=$(PGPORT=$port2 psql_q -c "SELECT merges || ' merges, ' || insert_merges || ' by the inserting session' FROM hamming_stats('rh_ham')")
echo "# rh_ham on the standby: $merges"
pending=$(PGPORT=$port2 psql_q -c "SELECT pending_tuples FROM pgstatginindex('rn_gin')")
echo "# GIN pending list on the standby: $pending tuples"
ok $([ "$pending" -gt 0 ] && echo 0 || echo 1) "rn_gin's pending list, replayed, is not empty (scans read it)"
on_standby rg rg_gist "after inserts, deletes, updates"
on_standby rn rn_gin "after inserts, deletes, updates"
on_standby sg sg_gist "after CREATE INDEX"
on_standby sn sn_gin "after CREATE INDEX"
on_standby rh rh_ham "after inserts (merged along the way), deletes, updates"
on_standby sh sh_ham "after CREATE INDEX"

# --- VACUUM, REINDEX CONCURRENTLY -------------------------------------------------------
for t in rg rn rh sg sn sh; do
	psql_q -c "DELETE FROM $t WHERE id % 5 = 0" -c "VACUUM $t"
done
psql_q -c "REINDEX INDEX CONCURRENTLY sg_gist" -c "REINDEX INDEX CONCURRENTLY sn_gin" \
	-c "REINDEX INDEX CONCURRENTLY sh_ham"
# rh_ham's merges run in background workers: let them end before replay
nd_wait_for "NOT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'neardup merge')" ||
	echo "# a hamming merge is still running"
nd_wait_replay || echo "# the standby did not catch up"
merges=$(PGPORT=$port2 psql_q -c "SELECT merges || ' merges, ' || insert_merges || ' by the inserting session' FROM hamming_stats('rh_ham')")
echo "# rh_ham on the standby: $merges"
pending=$(PGPORT=$port2 psql_q -c "SELECT pending_tuples FROM pgstatginindex('rn_gin')")
ok $([ "$pending" = 0 ] && echo 0 || echo 1) "VACUUM on the primary emptied rn_gin's pending list on the standby"
on_standby rg rg_gist "after VACUUM"
on_standby rn rn_gin "after VACUUM"
on_standby sg sg_gist "after REINDEX CONCURRENTLY"
on_standby sn sn_gin "after REINDEX CONCURRENTLY"
on_standby rh rh_ham "after VACUUM"
on_standby sh sh_ham "after REINDEX CONCURRENTLY"

# --- hamming_check on the standby while merges and VACUUM are replayed ------------------
# Replay takes no merge lock, so a merge, a recycling or a VACUUM pass
# replayed during a check changes pages under it (VACUUM compacts the
# run's tables one after the other); the check must tell that from damage
# (0.2 reported it as corruption, XX002).
(
	for ((r = 0; r < 40; r++)); do
		lo=$((200001 + r * 3000))
		psql_q -c "INSERT INTO rh SELECT i, nd_row_code(i) FROM generate_series($lo, $((lo + 2999))) i" \
			-c "DELETE FROM rh WHERE id % 40 = $r" -c "VACUUM rh" >/dev/null
		[ $((r % 4)) = 3 ] && psql_q -c "SELECT hamming_merge('rh_ham')" >/dev/null
	done
) &
writer=$!
passed=0 corrupt=0 other=0
while nd_alive "$writer"; do
	out=$(PGPORT=$port2 nd_ham_check rh_ham false)
	case "$out" in
		passed) passed=$((passed + 1)) ;;
		*XX002*) corrupt=$((corrupt + 1)); echo "# $out" | cut -c1-300 ;;
		*) other=$((other + 1)); echo "# $out" | cut -c1-300 ;;
	esac
done
wait "$writer"
echo "# hamming_check on the standby during 40 VACUUMs and 10 merges: $passed passed, $corrupt corrupt, $other other"
ok $([ "$corrupt" = 0 ] && [ "$passed" -gt 0 ] && echo 0 || echo 1) \
	"hamming_check on the standby reports no corruption while merges and VACUUM are replayed"
nd_wait_replay || echo "# the standby did not catch up"
# An error after the check, in the same query: the check's error handling
# must leave nothing behind (a return from inside its PG_TRY once made the
# next error jump into a dead stack frame and restart the standby).
started=$(PGPORT=$port2 psql_q -c "SELECT pg_postmaster_start_time()")
out=$(PGPORT=$port2 psql -X -At -c "SELECT hamming_check('rh_ham', false), 1 / (random() * 0)::int" 2>&1 || true)
after=$(PGPORT=$port2 psql_q -c "SELECT pg_postmaster_start_time()" 2>&1 || true)
echo "# $out"
ok $([[ $out == *"division by zero"* ]] && [ "$started" = "$after" ] && echo 0 || echo 1) \
	"an error after hamming_check on the standby is an ordinary error (no restart of the standby)"
out=$(PGPORT=$port2 nd_ham_check rh_ham true)
ok $([ "$out" = passed ] && echo 0 || echo 1) "hamming_check (heapallindexed) on the standby after replay: $out"
echo "1..$n"
SCRIPT
