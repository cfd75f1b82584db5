#!/usr/bin/env bash
# End-to-end: GiST, GIN and hamming indexes of simhash64 on a streaming
# replica.
#
# A hot standby is made from the throwaway cluster with pg_basebackup and run
# by pg_ctl as the postgres user on a port of its own.  The primary then
# changes indexes that the base backup holds (inserts: GiST page splits,
# GIN pending list, hamming merges; deletes, updates) and builds new ones (CREATE INDEX
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

nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
BIN=/usr/lib/postgresql/15/bin
nd_second_cluster nd-standby
sdir=$ND2_DIR port2=$ND2_PORT

nd_setup_db
psql_q -c "CREATE EXTENSION pgstattuple"
for t in rg rn rh sg sn sh; do
	psql_q -c "CREATE TABLE $t (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off)" \
		-c "INSERT INTO $t SELECT i, nd_row_code(i) FROM generate_series(1, 50000) i"
done
psql_q -c "CREATE INDEX rg_gist ON rg USING gist (sh)" \
	-c "CREATE INDEX rn_gin ON rn USING gin (sh) WITH (fastupdate = on, gin_pending_list_limit = 65536)" \
	-c "CREATE INDEX rh_ham ON rh USING hamming (sh) WITH (pending_limit = 64)"

# --- the standby ----------------------------------------------------------------------
runuser -u postgres -- env PGPASSWORD="$PGPASSWORD" "$BIN/pg_basebackup" -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" \
	-D "$sdir/data" -X stream -R -c fast
# Debian keeps the configuration outside the data directory: write one.
runuser -u postgres -- tee "$sdir/data/postgresql.conf" >/dev/null <<EOF
port = $port2
listen_addresses = 'localhost'
unix_socket_directories = '$sdir'
hot_standby = on
extension_destdir = '$ND_STAGE'
lc_messages = 'C'
max_standby_streaming_delay = -1
EOF
runuser -u postgres -- tee "$sdir/data/pg_hba.conf" >/dev/null <<EOF
local all all trust
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
EOF
runuser -u postgres -- touch "$sdir/data/pg_ident.conf"
runuser -u postgres -- "$BIN/pg_ctl" -D "$sdir/data" -l "$sdir/log" -w start >/dev/null
ok $([ "$(PGPORT=$port2 psql -X -At -c 'SELECT pg_is_in_recovery()')" = t ] && echo 0 || echo 1) \
	"the standby runs (hot standby, streaming from the primary)"

# replay: until the standby has replayed everything the primary wrote.
replay() {
	local lsn i
	lsn=$(psql_q -c "SELECT pg_current_wal_lsn()")
	for ((i = 0; i < 3000; i++)); do
		[ "$(PGPORT=$port2 psql -X -At -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'" 2>/dev/null)" = t ] && return 0
		sleep 0.1
	done
	return 1
}
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
replay || echo "# the standby did not catch up"
pending=$(PGPORT=$port2 psql_q -c "SELECT pending_tuples FROM pgstatginindex('rn_gin')")
echo "# GIN pending list on the standby: $pending tuples"
ok $([ "$pending" -gt 0 ] && echo 0 || echo 1) "rn_gin's pending list, replayed, is not empty (scans read it)"
on_standby rg rg_gist "after inserts, deletes, updates"
on_standby rn rn_gin "after inserts, deletes, updates"
on_standby sg sg_gist "after CREATE INDEX"
on_standby sn sn_gin "after CREATE INDEX"
on_standby rh rh_ham "after inserts (merged by the inserts themselves), deletes, updates"
on_standby sh sh_ham "after CREATE INDEX"

# --- VACUUM, REINDEX CONCURRENTLY -------------------------------------------------------
for t in rg rn rh sg sn sh; do
	psql_q -c "DELETE FROM $t WHERE id % 5 = 0" -c "VACUUM $t"
done
psql_q -c "REINDEX INDEX CONCURRENTLY sg_gist" -c "REINDEX INDEX CONCURRENTLY sn_gin" \
	-c "REINDEX INDEX CONCURRENTLY sh_ham"
replay || echo "# the standby did not catch up"
pending=$(PGPORT=$port2 psql_q -c "SELECT pending_tuples FROM pgstatginindex('rn_gin')")
ok $([ "$pending" = 0 ] && echo 0 || echo 1) "VACUUM on the primary emptied rn_gin's pending list on the standby"
on_standby rg rg_gist "after VACUUM"
on_standby rn rn_gin "after VACUUM"
on_standby sg sg_gist "after REINDEX CONCURRENTLY"
on_standby sn sn_gin "after REINDEX CONCURRENTLY"
on_standby rh rh_ham "after VACUUM"
on_standby sh sh_ham "after REINDEX CONCURRENTLY"
echo "1..$n"
SCRIPT
