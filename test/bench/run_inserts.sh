#!/usr/bin/env bash
# What inserts cost a log-structured hamming index at scale, and what they
# do to its queries, in a throwaway cluster (issue 32's insert targets):
#
#   1. ROWS (default 10M) random codes in two tables, each with a bigint
#      primary key; one also has a hamming index at default options (its
#      merges in background workers).
#   2. INSERT_ROWS (default 2M) new rows COPYed into each in batches of
#      BATCH (default 100,000), then -- merges counted -- until no worker
#      runs and the pending list is below a flush.  Reported: the time
#      against the primary-key-only table's (the ratio), the WAL written per
#      inserted row against that table's (so the index's own share), the
#      largest pending list a scan could have read (sampled every 0.1 s),
#      the flushes and compactions done (hamming_stats, hamming_runs).
#   3. SINGLE (default 20000) single-row INSERTs, one statement each, into
#      both tables: the same ratio and WAL per row.
#   4. NQ (default 200) random query codes as KNN 10, quiet, and then while
#      2 writers COPY into the indexed table at full rate: p50 and p99, and
#      the ratio to the quiet figures.
#
#   ROWS=100000000 INSERT_ROWS=5000000 bash test/bench/run_inserts.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=4GB max_wal_size=20GB checkpoint_timeout=30min"}
export ROWS=${ROWS:-10000000} INSERT_ROWS=${INSERT_ROWS:-2000000} BATCH=${BATCH:-100000}
export SINGLE=${SINGLE:-20000} NQ=${NQ:-200}

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
now() { date +%s.%N; }
work=$(mktemp -d /tmp/nd-bench-inserts.XXXXXX)
chmod 777 "$work"
trap 'rm -rf "$work"' EXIT

q -c "CREATE EXTENSION neardup"
for t in p m; do
	q -c "CREATE TABLE $t AS SELECT i::bigint AS id, ('x' || md5('row ' || i))::bit(64)::bigint::simhash64 AS sh
	      FROM generate_series(1, $ROWS) i" \
	  -c "ALTER TABLE $t ADD PRIMARY KEY (id)"
done
t0=$(now)
q -c "CREATE INDEX m_sh ON m USING hamming (sh)"
build=$(awk "BEGIN { print $(now) - $t0 }")
q -c "VACUUM ANALYZE p" -c "VACUUM ANALYZE m" -c "CHECKPOINT"
q -c "COPY (SELECT $ROWS + i, ('x' || md5('new ' || i))::bit(64)::bigint::simhash64
          FROM generate_series(1, $INSERT_ROWS) i) TO '$work/new.copy'"
echo "# $ROWS rows (hamming index built in ${build}s), $INSERT_ROWS inserted in COPY batches of $BATCH; $ND_PG_OPTS; $(nproc) cores"

split -l "$BATCH" -d -a 5 "$work/new.copy" "$work/batch."
chmod a+r "$work"/batch.*
# copy_into TABLE: the batches, one COPY each
copy_into() {
	local f
	for f in "$work"/batch.*; do
		q -c "COPY $1 FROM '$f'"
	done
}
wal() { q -c "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"; }
# settle: merges counted -- until no worker runs, then a flush of what
# is left past the threshold (the next insert would start one; with
# no insert to come, nothing does), and the compactions it wants.
settle() {
	while [ "$(q -c "SELECT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'neardup merge')")" = t ]; do
		sleep 0.1
	done
	q -c "SELECT hamming_merge('m_sh') FROM hamming_stats('m_sh') WHERE sealed_entries > 0 OR pending_entries >= 1024 * 1024 / 14" >/dev/null
}

# --- COPY -------------------------------------------------------------------
w0=$(wal); t0=$(now)
copy_into p
tp=$(awk "BEGIN { print $(now) - $t0 }"); wp=$(( $(wal) - w0 ))

# the sampler: the largest pending list (the unsealed and the sealed one)
( while [ ! -e "$work/stop" ]; do
	q -c "SELECT pending_entries + sealed_entries FROM hamming_stats('m_sh')" >>"$work/pending" 2>/dev/null || true
	sleep 0.1
  done ) &
sampler=$!
read -r merges0 <<<"$(q -c "SELECT merges FROM hamming_stats('m_sh')")"
w0=$(wal); t0=$(now)
copy_into m
tc=$(awk "BEGIN { print $(now) - $t0 }")
settle
tm=$(awk "BEGIN { print $(now) - $t0 }"); wm=$(( $(wal) - w0 ))
touch "$work/stop"; wait "$sampler" || true
maxpending=$(sort -n "$work/pending" | tail -1)
read -r merges inserts_merged <<<"$(q -F' ' -c "SELECT merges, insert_merges FROM hamming_stats('m_sh')")"
echo
echo "| COPY of $INSERT_ROWS rows | seconds | x PK-only table | WAL bytes per row | index's WAL per row |"
echo "|---|---|---|---|---|"
printf "| primary key only | %.1f | 1 | %.0f | |\n" "$tp" "$(awk "BEGIN { print $wp / $INSERT_ROWS }")"
printf "| primary key + hamming, merges counted (%.1f s to the last COPY) | %.1f | %.2f | %.0f | %.0f |\n" \
	"$tc" "$tm" "$(awk "BEGIN { print $tp / $tm }")" "$(awk "BEGIN { print $wm / $INSERT_ROWS }")" \
	"$(awk "BEGIN { print ($wm - $wp) / $INSERT_ROWS }")"
echo
echo "# flushes: $((merges - merges0)) ($inserts_merged by inserting sessions); largest pending list sampled: $maxpending entries"
echo "# runs: $(q -c "SELECT string_agg(entries::text, ' ' ORDER BY run) FROM hamming_runs('m_sh')")"

# --- single-row INSERTs -------------------------------------------------------
for t in p m; do
	start=$(q -c "SELECT max(id) FROM $t")
	seq 1 "$SINGLE" | awk -v s="$start" -v t="$t" '{ printf "INSERT INTO %s VALUES (%d, (\x27x\x27 || md5(\x27single %d\x27))::bit(64)::bigint::simhash64);\n", t, s + $1, $1 }' >"$work/single-$t.sql"
done
w0=$(wal); t0=$(now)
q -f "$work/single-p.sql"
sp=$(awk "BEGIN { print $(now) - $t0 }"); swp=$(( $(wal) - w0 ))
w0=$(wal); t0=$(now)
q -f "$work/single-m.sql"
settle
sm=$(awk "BEGIN { print $(now) - $t0 }"); swm=$(( $(wal) - w0 ))
echo
echo "| $SINGLE single-row INSERTs, 1 client | seconds | x PK-only table | WAL bytes per row |"
echo "|---|---|---|---|"
printf "| primary key only | %.1f | 1 | %.0f |\n" "$sp" "$(awk "BEGIN { print $swp / $SINGLE }")"
printf "| primary key + hamming, merges counted | %.1f | %.2f | %.0f |\n" "$sm" \
	"$(awk "BEGIN { print $sp / $sm }")" "$(awk "BEGIN { print $swm / $SINGLE }")"

# --- KNN quiet and under 2 writers ----------------------------------------------
q -c "CREATE TABLE qs AS SELECT ('x' || md5('query ' || i))::bit(64)::bigint::simhash64 AS q FROM generate_series(1, $NQ) i"
knn() {
	q -c "SET max_parallel_workers_per_gather = 0" -c "
		CREATE TEMP TABLE t (ms float8);
		DO \$\$
		DECLARE t0 timestamptz; r record;
		BEGIN
		  FOR r IN SELECT q FROM qs LOOP
		    t0 := clock_timestamp();
		    PERFORM id FROM m ORDER BY sh <~> r.q LIMIT 10;
		    INSERT INTO t VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000);
		  END LOOP;
		END \$\$;
		SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) || ' ' ||
		       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3) FROM t"
}
knn >/dev/null
read -r k50 k99 <<<"$(knn)"
rm -f "$work/stop" "$work/pending"
for w in 1 2; do
	( i=0
	  while [ ! -e "$work/stop" ]; do
		q -c "INSERT INTO m SELECT $((ROWS * 10 * w)) + $i * 10000 + g, ('x' || md5('w$w ' || ($i * 10000 + g)))::bit(64)::bigint::simhash64
		      FROM generate_series(1, 10000) g" 2>/dev/null || true
		i=$((i + 1))
	  done ) &
done
( while [ ! -e "$work/stop" ]; do
	q -c "SELECT pending_entries + sealed_entries FROM hamming_stats('m_sh')" >>"$work/pending" 2>/dev/null || true
	sleep 0.1
  done ) &
sleep 5
read -r w50 w99 <<<"$(knn)"
inserted=$(q -c "SELECT count(*) FROM m WHERE id > $ROWS * 10")
touch "$work/stop"; wait
echo
echo "| KNN 10, $NQ random queries | p50 ms | p99 ms | x quiet p50 | x quiet p99 |"
echo "|---|---|---|---|---|"
printf "| quiet | %s | %s | 1 | 1 |\n" "$k50" "$k99"
printf "| 2 writers inserting at full rate | %s | %s | %.2f | %.2f |\n" "$w50" "$w99" \
	"$(awk "BEGIN { print $w50 / $k50 }")" "$(awk "BEGIN { print $w99 / $k99 }")"
echo
echo "# the writers inserted $inserted rows meanwhile; largest pending list sampled: $(sort -n "$work/pending" | tail -1) entries"
echo "# runs: $(q -c "SELECT string_agg(entries::text, ' ' ORDER BY run) FROM hamming_runs('m_sh')")"
SCRIPT
