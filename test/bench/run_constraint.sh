#!/usr/bin/env bash
# The near-duplicate exclusion constraint's cost on writes, in a throwaway
# cluster: ROWS (default 1M) random codes loaded into tables with a bigint
# primary key --
#   pk       the primary key only (the baseline),
#   index    + a plain hamming index on sh (no constraint; built after the
#            load): issue 11's insert target; its merges run in background
#            workers (the default),
#   index_fg + the same index with background_merge = off: the inserting
#            session merges,
#   btree_sh + a btree index on sh instead: any second index over these
#            random codes, the floor for the one above,
#   gin      + the GIN opclass on sh instead (fastupdate, its default),
#   btree    + EXCLUDE USING btree (id WITH =): PostgreSQL's own exclusion
#            check (an index scan per row) on the cheapest index there is,
#            the floor for any exclusion constraint,
#   hamming  + EXCLUDE USING hamming (hamming_ball(sh, K) WITH &&),
#   gist     + EXCLUDE USING gist (hamming_ball(sh, K) WITH &&)
# -- then, for each, single-row INSERTs of new random codes by pgbench (one
# client, then CLIENTS clients, SECS seconds each), and COPIES rounds of a
# COPY of COPYROWS new rows into each table in turn; rates are reported
# against the baseline measured in the same run.  After each COPY the run
# waits for the table's background merges to end (no merge of one table
# overlaps another's COPY), and reports that wait apart: a COPY's own rate
# is what its session sees, the rate with the wait is what the merges cost.
# BACK_TO_BACK=1 runs a table's COPIES one after the other instead, waiting
# only after its last (a bulk load in batches: the merges overlap the next
# COPYs, and the pending list's brake is what bounds them).  The GiST table holds GIST_ROWS (default 100,000) rows: each insert
# into it costs a GiST radius search, about a millisecond at 1M rows, so
# loading it with 1M rows one constraint check at a time would take most
# of an hour.  TABLES picks the tables (default: pk index btree hamming
# gist; also btree_sh, gin; pk, the baseline, is always run).
#
#   ROWS=1000000 GIST_ROWS=100000 K=3 SECS=15 CLIENTS=4 COPYROWS=100000 bash test/bench/run_constraint.sh
#   ROWS=10000000 TABLES="index index_fg btree_sh" COPYROWS=700000 COPIES=6 bash test/bench/run_constraint.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=2GB"}
export ROWS=${ROWS:-1000000} GIST_ROWS=${GIST_ROWS:-100000} K=${K:-3} SECS=${SECS:-15} CLIENTS=${CLIENTS:-4} COPYROWS=${COPYROWS:-100000} COPIES=${COPIES:-1} BACK_TO_BACK=${BACK_TO_BACK:-0}
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
for r in $(seq 1 "$COPIES"); do
	q -c "COPY (SELECT $ROWS + 10000000 + $r * $COPYROWS + i, ('x' || md5('copy $r ' || i))::bit(64)::bigint::simhash64
	            FROM generate_series(1, $COPYROWS) i) TO '$work/copy_$r.tsv'"
done
q -c "CREATE SEQUENCE ids START $((ROWS + 1))"
echo "# $ROWS rows (GiST: $GIST_ROWS), k = $K, pgbench ${SECS}s per run, $COPIES COPY of $COPYROWS rows per table; $ND_PG_OPTS"

declare -A ddl=(
	[pk]=""
	[index]=""
	[index_fg]=""
	[btree_sh]=""
	[gin]=""
	[btree]=", CONSTRAINT %s_eq EXCLUDE USING btree (id WITH =)"
	[hamming]=", CONSTRAINT %s_near EXCLUDE USING hamming (hamming_ball(sh, $K) WITH &&)"
	[gist]=", CONSTRAINT %s_near EXCLUDE USING gist (hamming_ball(sh, $K) WITH &&)"
)
declare -A after=([index]="CREATE INDEX t_index_sh ON t_index USING hamming (sh)"
	[index_fg]="CREATE INDEX t_index_fg_sh ON t_index_fg USING hamming (sh) WITH (background_merge = off)"
	[btree_sh]="CREATE INDEX t_btree_sh_sh ON t_btree_sh (sh)"
	[gin]="CREATE INDEX t_gin_sh ON t_gin USING gin (sh)")
# Wait for the background merges ("neardup merge" workers) to end.
wait_merges() {
	while [ "$(q -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'neardup merge'")" != 0 ]; do
		sleep 0.05
	done
}
declare -A one many copy load copy_s wait_s
declare -A rows=([pk]=$ROWS [index]=$ROWS [index_fg]=$ROWS [btree_sh]=$ROWS [gin]=$ROWS [btree]=$ROWS [hamming]=$ROWS [gist]=$GIST_ROWS)
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
	sleep 0.2
	wait_merges
	printf "# %-8s load %6.1f s; INSERT 1 client %8.0f rows/s, %d clients %8.0f rows/s\n" \
		"$v" "${load[$v]}" "${one[$v]}" "$CLIENTS" "${many[$v]}"
	copy_s[$v]=0
	wait_s[$v]=0
done

# One COPY of round $1 into table $2; waits for its merges unless $3 = 0
copy_one() {
	local r=$1 v=$2 start mid waited=0
	start=$(date +%s.%N)
	q -c "COPY t_$v FROM '$work/copy_$r.tsv'"
	mid=$(date +%s.%N)
	if [ "$3" != 0 ]; then
		# a worker registered by the COPY's last inserts may not show yet
		sleep 0.2
		wait_merges
		waited=$(calc "$(date +%s.%N) - $mid - 0.2")
	fi
	copy_s[$v]=$(calc "${copy_s[$v]} + $mid - $start")
	wait_s[$v]=$(calc "${wait_s[$v]} + $waited")
	line+=$(printf " %s %.2f s + %.2f s;" "$v" "$(calc "$mid - $start")" "$waited")
}
if [ "$BACK_TO_BACK" = 1 ]; then
	for v in $TABLES; do
		line="# COPYs back to back:"
		for r in $(seq 1 "$COPIES"); do
			copy_one "$r" "$v" "$([ "$r" = "$COPIES" ] && echo 1 || echo 0)"
		done
		echo "$line"
	done
else
	for r in $(seq 1 "$COPIES"); do
		line="# COPY round $r:"
		for v in $TABLES; do
			copy_one "$r" "$v" 1
		done
		echo "$line"
	done
fi
for v in $TABLES; do
	copy[$v]=$(calc "$COPIES * $COPYROWS / ${copy_s[$v]}")
	stats=""
	if [ "$v" = index ] || [ "$v" = index_fg ]; then
		stats=$(q -c "SELECT ' merges ' || merges || ' (' || insert_merges || ' in the inserting session), pending ' || pending_entries
		              FROM hamming_stats('t_${v}_sh')")
	fi
	printf "# %-8s COPY %.2f s, merge waits %.2f s;%s\n" "$v" "${copy_s[$v]}" "${wait_s[$v]}" "$stats"
done

echo "| table | rows | INSERT, 1 client | INSERT, $CLIENTS clients | $CLIENTS clients / 1 | COPY $COPIES x $COPYROWS rows | with the merge waits | initial load |"
echo "|---|---|---|---|---|---|---|---|"
for v in $TABLES; do
	with=$(calc "$COPIES * $COPYROWS / (${copy_s[$v]} + ${wait_s[$v]})")
	with_pk=$(calc "$COPIES * $COPYROWS / (${copy_s[pk]} + ${wait_s[pk]})")
	printf "| %s | %s | %.0f/s (%.2fx) | %.0f/s (%.2fx) | %.2f | %.0f/s (%.2fx) | %.0f/s (%.2fx) | %.1f s |\n" "$v" "${rows[$v]}" \
		"${one[$v]}" "$(calc "${one[$v]} / ${one[pk]}")" \
		"${many[$v]}" "$(calc "${many[$v]} / ${many[pk]}")" \
		"$(calc "${many[$v]} / ${one[$v]}")" \
		"${copy[$v]}" "$(calc "${copy[$v]} / ${copy[pk]}")" \
		"$with" "$(calc "$with / $with_pk")" "${load[$v]}"
done
SCRIPT
