#!/usr/bin/env bash
# The near-duplicate exclusion constraint's cost on writes, in a throwaway
# cluster: ROWS (default 1M) random codes loaded into tables with a bigint
# primary key --
#   pk       the primary key only (the baseline),
#   index    + a plain hamming index on sh (no constraint; built after the
#            load): issue 11's insert target,
#   btree_sh + a btree index on sh instead: any second index over these
#            random codes, the floor for the one above,
#   gin      + the GIN opclass on sh instead (fastupdate, its default),
#   btree    + EXCLUDE USING btree (id WITH =): PostgreSQL's own exclusion
#            check (an index scan per row) on the cheapest index there is,
#            the floor for any exclusion constraint,
#   hamming  + EXCLUDE USING hamming (hamming_ball(sh, K) WITH &&),
#   gist     + EXCLUDE USING gist (hamming_ball(sh, K) WITH &&)
# -- then, for each, single-row INSERTs of new random codes by pgbench (one
# client, then CLIENTS clients, SECS seconds each) and a COPY of COPYROWS
# new rows; rates are reported against the baseline measured in the same
# run.  The GiST table holds GIST_ROWS (default 100,000) rows: each insert
# into it costs a GiST radius search, about a millisecond at 1M rows, so
# loading it with 1M rows one constraint check at a time would take most
# of an hour.  TABLES picks the tables (default: pk index btree hamming
# gist; also btree_sh, gin; pk, the baseline, is always run).
#
#   ROWS=1000000 GIST_ROWS=100000 K=3 SECS=15 CLIENTS=4 COPYROWS=100000 bash test/bench/run_constraint.sh
#   ROWS=10000000 TABLES="index" bash test/bench/run_constraint.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=2GB"}
export ROWS=${ROWS:-1000000} GIST_ROWS=${GIST_ROWS:-100000} K=${K:-3} SECS=${SECS:-15} CLIENTS=${CLIENTS:-4} COPYROWS=${COPYROWS:-100000}
export TABLES="pk ${TABLES:-index btree hamming gist}"

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
PGBENCH=/usr/lib/postgresql/15/bin/pgbench
work=$(mktemp -d /tmp/nd-bench-constraint.XXXXXX)
chmod 777 "$work"
trap 'rm -rf "$work"' EXIT
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
calc() { awk "BEGIN { print $1 }"; }

q -c "CREATE EXTENSION neardup"
q -c "CREATE TABLE src AS SELECT i::bigint AS id, ('x' || md5('row ' || i))::bit(64)::bigint::simhash64 AS sh
      FROM generate_series(1, $ROWS) i"
q -c "COPY (SELECT $ROWS + 10000000 + i, ('x' || md5('copy ' || i))::bit(64)::bigint::simhash64
            FROM generate_series(1, $COPYROWS) i) TO '$work/copy.tsv'"
q -c "CREATE SEQUENCE ids START $((ROWS + 1))"
echo "# $ROWS rows (GiST: $GIST_ROWS), k = $K, pgbench ${SECS}s per run, COPY of $COPYROWS rows; $ND_PG_OPTS"

declare -A ddl=(
	[pk]=""
	[index]=""
	[btree_sh]=""
	[gin]=""
	[btree]=", CONSTRAINT %s_eq EXCLUDE USING btree (id WITH =)"
	[hamming]=", CONSTRAINT %s_near EXCLUDE USING hamming (hamming_ball(sh, $K) WITH &&)"
	[gist]=", CONSTRAINT %s_near EXCLUDE USING gist (hamming_ball(sh, $K) WITH &&)"
)
declare -A after=([index]="CREATE INDEX t_index_sh ON t_index USING hamming (sh)"
	[btree_sh]="CREATE INDEX t_btree_sh_sh ON t_btree_sh (sh)"
	[gin]="CREATE INDEX t_gin_sh ON t_gin USING gin (sh)")
declare -A one many copy load
declare -A rows=([pk]=$ROWS [index]=$ROWS [btree_sh]=$ROWS [gin]=$ROWS [btree]=$ROWS [hamming]=$ROWS [gist]=$GIST_ROWS)
for v in $TABLES; do
	# shellcheck disable=SC2059
	extra=$(printf "${ddl[$v]}" "$v")
	start=$(date +%s.%N)
	q -c "CREATE TABLE t_$v (id bigint PRIMARY KEY, sh simhash64 $extra)" \
		-c "INSERT INTO t_$v SELECT * FROM src WHERE id <= ${rows[$v]}"
	[ -z "${after[$v]:-}" ] || q -c "${after[$v]}"
	load[$v]=$(calc "$(date +%s.%N) - $start")
	q -c "VACUUM ANALYZE t_$v" -c "CHECKPOINT"
	cat >"$work/ins_$v.sql" <<EOF
INSERT INTO t_$v VALUES (nextval('ids'), ('x' || md5(random()::text))::bit(64)::bigint::simhash64);
EOF
	one[$v]=$($PGBENCH -n -c 1 -T "$SECS" -f "$work/ins_$v.sql" 2>&1 | grep -oP 'tps = \K[0-9.]+')
	many[$v]=$($PGBENCH -n -c "$CLIENTS" -j 2 -T "$SECS" -f "$work/ins_$v.sql" 2>&1 | grep -oP 'tps = \K[0-9.]+')
	ms=$(q -c "\\timing on" -c "COPY t_$v FROM '$work/copy.tsv'" | grep -oP 'Time: \K[0-9.]+')
	copy[$v]=$(calc "$COPYROWS * 1000 / $ms")
	printf "# %-8s load %6.1f s; INSERT 1 client %8.0f rows/s, %d clients %8.0f rows/s; COPY %8.0f rows/s\n" \
		"$v" "${load[$v]}" "${one[$v]}" "$CLIENTS" "${many[$v]}" "${copy[$v]}"
done
echo "| table | rows | INSERT, 1 client | INSERT, $CLIENTS clients | $CLIENTS clients / 1 | COPY $COPYROWS rows | initial load |"
echo "|---|---|---|---|---|---|---|"
for v in $TABLES; do
	printf "| %s | %s | %.0f/s (%.2fx) | %.0f/s (%.2fx) | %.2f | %.0f/s (%.2fx) | %.1f s |\n" "$v" "${rows[$v]}" \
		"${one[$v]}" "$(calc "${one[$v]} / ${one[pk]}")" \
		"${many[$v]}" "$(calc "${many[$v]} / ${many[pk]}")" \
		"$(calc "${many[$v]} / ${one[$v]}")" \
		"${copy[$v]}" "$(calc "${copy[$v]} / ${copy[pk]}")" "${load[$v]}"
done
SCRIPT
