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
#      2 writers insert into the indexed table at full rate (10,000-row
#      INSERTs back to back): p50 and p99, and the ratio to the quiet
#      figures.  Then, the index settled and the quiet figures taken again,
#      the same while the 2 writers are throttled to THROTTLED_ROWS_PER_S
#      rows/s in all (default: half the rate the full-rate writers reached;
#      whether the background merges kept up shows in the samples at the
#      brake -- at 10M rows half the rate still met it in a few per cent of
#      them, 8,000 rows/s never), each in one session INSERTing
#      THROTTLED_BATCH (default 1000) rows, committing and sleeping to its
#      next batch.
#      For each phase: the rows the writers added and their rate, the
#      largest pending list and the share of samples in which it was at the
#      brake (the writers waiting for a flush), the flushes the writers did
#      themselves, the machine's busy share during the queries, and the
#      share of the phase's samples in which a merge worker ran, and the
#      queries' p50 and p99 split by whether a merge worker ran.  The
#      tables are vacuumed before, so autovacuum stays out (checked).
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
export THROTTLED_ROWS_PER_S=${THROTTLED_ROWS_PER_S:-} THROTTLED_BATCH=${THROTTLED_BATCH:-1000}

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

# --- KNN quiet, under 2 writers at full rate, and throttled ---------------------
q -c "CREATE TABLE qs AS SELECT ('x' || md5('query ' || i))::bit(64)::bigint::simhash64 AS q FROM generate_series(1, $NQ) i" \
  -c "CREATE TABLE writers_stop ()"
knn() {
	q -c "SET max_parallel_workers_per_gather = 0" -c "
		CREATE TEMP TABLE t (at float8, ms float8);
		DO \$\$
		DECLARE t0 timestamptz; r record;
		BEGIN
		  FOR r IN SELECT q FROM qs LOOP
		    t0 := clock_timestamp();
		    PERFORM id FROM m ORDER BY sh <~> r.q LIMIT 10;
		    INSERT INTO t VALUES (extract(epoch FROM t0), extract(epoch FROM clock_timestamp() - t0) * 1000);
		  END LOOP;
		END \$\$;
		COPY t TO '$work/knn';
		SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) || ' ' ||
		       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3) FROM t"
}
# jiffies of the whole machine (all cores): busy (user, nice, system, irq,
# softirq), stolen, all
jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# sampler: every 0.1 s until $work/stop, the pending list (the unsealed and
# the sealed one, as in the COPY), the merge workers and the autovacuum
# workers running, into $work/pending
sampler() {
	rm -f "$work/stop" "$work/pending"
	( while [ ! -e "$work/stop" ]; do
		q -c "SELECT pending_entries + sealed_entries,
		             (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'neardup merge'),
		             (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'),
		             extract(epoch FROM now())
		      FROM hamming_stats('m_sh')" >>"$work/pending" 2>/dev/null || true
		sleep 0.1
	  done ) &
}
# sampled: sets maxpending, braked (% of the samples in which the lists
# were at the brake, a third past a flush at the default pending_limit:
# inserts then wait for the worker's flush), merging and autovac (% of the
# samples in which a merge worker, an autovacuum worker ran)
sampled() {
	maxpending=$(cut -d'|' -f1 "$work/pending" | sort -n | tail -1)
	braked=$(awk -F'|' -v b=$((1024 * 1024 / 14 + 1024 * 1024 / 14 / 3)) '{ n++; if ($1 >= b) m++ } END { printf "%.0f", 100 * m / n }' "$work/pending")
	merging=$(awk -F'|' '{ n++; if ($2 > 0) m++ } END { printf "%.0f", 100 * m / n }' "$work/pending")
	autovac=$(awk -F'|' '{ n++; if ($3 > 0) m++ } END { printf "%.0f", 100 * m / n }' "$work/pending")
}
# timed_knn: knn, and the machine's busy and stolen share meanwhile: sets
# p50 p99 busy steal
timed_knn() {
	local b0 s0 a0 b1 s1 a1
	read -r b0 s0 a0 <<<"$(jiffies)"
	read -r p50 p99 <<<"$(knn)"
	read -r b1 s1 a1 <<<"$(jiffies)"
	busy=$(awk "BEGIN { printf \"%.0f\", 100 * ($b1 - $b0) / ($a1 - $a0) }")
	steal=$(awk "BEGIN { printf \"%.0f\", 100 * ($s1 - $s0) / ($a1 - $a0) }")
}
# quiet: timed_knn with no writer, sampled
quiet() {
	sampler
	timed_knn
	touch "$work/stop"
	wait
	sampled
}
# phase RATE BASE: timed_knn while 2 writers insert into m, writer w rows
# with ids from BASE + w * 10^11 (BASE a multiple of 10^12); RATE 0: each
# writer INSERTs 10,000-row batches back to back, one psql each; RATE > 0:
# RATE rows/s over both, each writer in one session INSERTing
# THROTTLED_BATCH rows, committing, and sleeping to the next batch's time.
# Sets, besides timed_knn's and sampled's: added (rows), secs (writers
# started to stopped), brake (flushes an inserting session did itself).
phase() {
	local rate=$1 base=$2 w t0 m0 m1
	q -c "DELETE FROM writers_stop"
	m0=$(q -c "SELECT insert_merges FROM hamming_stats('m_sh')")
	sampler
	t0=$(now)
	for w in 1 2; do
		if [ "$rate" = 0 ]; then
			( i=0
			  while [ ! -e "$work/stop" ]; do
				q -c "INSERT INTO m SELECT $((base + w * 100000000000)) + $i * 10000 + g, ('x' || md5('w$w ' || ($i * 10000 + g)))::bit(64)::bigint::simhash64
				      FROM generate_series(1, 10000) g" 2>/dev/null || true
				i=$((i + 1))
			  done ) &
		else
			q -c "DO \$\$
				DECLARE
				  b int := $THROTTLED_BATCH;
				  every float8 := $THROTTLED_BATCH / ($rate / 2.0);
				  i int := 0;
				  t0 timestamptz := clock_timestamp();
				BEGIN
				  WHILE NOT EXISTS (SELECT FROM writers_stop) LOOP
				    INSERT INTO m SELECT $((base + w * 100000000000)) + i * b + g, ('x' || md5('t$w ' || (i * b + g)))::bit(64)::bigint::simhash64
				      FROM generate_series(1, b) g;
				    COMMIT;
				    i := i + 1;
				    PERFORM pg_sleep(greatest(0, extract(epoch FROM t0 - clock_timestamp()) + i * every));
				  END LOOP;
				END \$\$" &
		fi
	done
	sleep 5
	timed_knn
	touch "$work/stop"
	q -c "INSERT INTO writers_stop DEFAULT VALUES"
	wait
	secs=$(awk "BEGIN { print $(now) - $t0 }")
	added=$(q -c "SELECT count(*) FROM m WHERE id > $base AND id < $base + 1000000000000")
	sampled
	m1=$(q -c "SELECT insert_merges FROM hamming_stats('m_sh')")
	brake=$((m1 - m0))
	# the queries by whether a merge worker ran at the last sample before
	# each began
	bymerge=$(q -F' ' -c "CREATE TEMP TABLE k (at float8, ms float8)" \
		-c "CREATE TEMP TABLE s (pending bigint, merging int, autovac int, at float8)" \
		-c "COPY k FROM '$work/knn'" -c "COPY s FROM '$work/pending' (DELIMITER '|')" -c "
		SELECT string_agg(format('%s %s queries, p50 %s p99 %s ms', CASE WHEN merging THEN 'while a merge worker ran:' ELSE 'while none ran:' END,
		                         n, p50, p99), '; ' ORDER BY merging DESC)
		FROM (SELECT merging, count(*) AS n,
		             round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1) AS p50,
		             round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1) AS p99
		      FROM (SELECT k.ms, coalesce((SELECT s.merging > 0 FROM s WHERE s.at <= k.at ORDER BY s.at DESC LIMIT 1), false) AS merging
		            FROM k) x
		      GROUP BY merging) y")
}
# row LABEL QUIET50 QUIET99 [RATE]: a line of the KNN table from the last
# phase (no RATE: the quiet line, from quiet)
row() {
	if [ $# = 3 ]; then
		printf "| %s | %s | %s | 1 | 1 | | | %s | %s%% | | %s%% (%s%% stolen) | %s%% |\n" "$1" "$p50" "$p99" \
			"$maxpending" "$braked" "$busy" "$steal" "$merging"
	else
		printf "| %s | %s | %s | %.2f | %.2f | %s | %.0f | %s | %s%% | %s | %s%% (%s%% stolen) | %s%% |\n" "$1" "$p50" "$p99" \
			"$(awk "BEGIN { print $p50 / $2 }")" "$(awk "BEGIN { print $p99 / $3 }")" \
			"$added" "$(awk "BEGIN { print $added / $secs }")" "$maxpending" "$braked" "$brake" "$busy" "$steal" "$merging"
	fi
}
# autovacuum kept out of the queries (the inserts above are past its
# thresholds): the tables vacuumed, the index settled
q -c "VACUUM ANALYZE p" -c "VACUUM ANALYZE m"
settle
knn >/dev/null
autovacs=
quiet
k50=$p50 k99=$p99
knn_rows=("$(row quiet "$k50" "$k99")")
autovacs+=" $autovac%"
phase 0 1000000000000
fullrate=$(awk "BEGIN { printf \"%.0f\", $added / $secs }")
knn_rows+=("$(row "2 writers inserting at full rate" "$k50" "$k99" 0)")
bymerge_full=$bymerge
autovacs+=" $autovac%"
runs_full=$(q -c "SELECT string_agg(entries::text, ' ' ORDER BY run) FROM hamming_runs('m_sh')")
# the throttled phase starts from a settled index, against its own quiet figures
settle
THROTTLED_ROWS_PER_S=${THROTTLED_ROWS_PER_S:-$((fullrate / 2))}
quiet
t50=$p50 t99=$p99
knn_rows+=("$(row "quiet again, after the writers' merges" "$t50" "$t99")")
autovacs+=" $autovac%"
phase "$THROTTLED_ROWS_PER_S" 2000000000000
knn_rows+=("$(row "2 writers throttled to $THROTTLED_ROWS_PER_S rows/s in all" "$t50" "$t99" "$THROTTLED_ROWS_PER_S")")
autovacs+=" $autovac%"
echo
echo "| KNN 10, $NQ random queries | p50 ms | p99 ms | x quiet p50 | x quiet p99 | rows the writers added | rows/s | largest pending list | samples at the brake | flushes by the writers | CPU busy (2 cores) | merge worker running |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
printf "%s\n" "${knn_rows[@]}"
echo
echo "# throttled: $THROTTLED_ROWS_PER_S rows/s over both writers, batches of $THROTTLED_BATCH (full rate: $fullrate rows/s)"
echo "# full rate, the queries $bymerge_full"
echo "# throttled, the queries $bymerge"
echo "# an autovacuum worker ran in (% of samples, row by row):$autovacs"
echo "# runs after full rate: $runs_full"
echo "# runs: $(q -c "SELECT string_agg(entries::text, ' ' ORDER BY run) FROM hamming_runs('m_sh')")"
SCRIPT
