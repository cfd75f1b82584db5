#!/usr/bin/env bash
# One hamming index at crawl scale (issue 32), test/bench/scale.sql in a
# throwaway cluster: ROWS random codes + 20,000 planted near-copies, CREATE
# INDEX at default options (seconds, size, bytes per row, the run's
# directory layout), its time against SMALL_BUILDS builds at SMALL rows
# (1.0x = linear), and radius 3 / KNN 10 / KNN 100 (random codes) latency (p50, p99, planning
# included) on NQ planted and NQ random queries against a parallel
# sequential scan of NSEQ of the same queries, whose answers they must
# equal.  Every figure is a ratio to a baseline measured in the same run.
#
#   ROWS=200000000 SMALL=20000000 SMALL_BUILDS=10 NQ=200 NSEQ=5 CHECK=0 \
#       bash test/bench/run_scale.sh
#
# CHECK=1 adds hamming_check(index, false) on the big index.  SMALL_BUILDS=0
# skips the small builds (no linear baseline).  PROFILE=1 adds, after the
# timings and the summary (the big table kept), in the same cluster:
# perf record -g of one backend running PROF_NR radius 3 queries (default
# 2000) and then of one running PROF_NK KNN 10 queries (default 100) on
# random codes (hashint8extended(i, 99), i from 100001: not the timed
# ones), perf report --no-children --sort symbol (top 25) of each;
# EXPLAIN (ANALYZE, BUFFERS) of radius 3 and KNN 10 queries, warm; then a
# restart of the server and a drop of the OS page cache (sync; echo 3 >
# /proc/sys/vm/drop_caches: the whole machine's, so it needs root), and in
# a new connection the first radius 3 query, the first KNN 10 query, and
# the next 20 of each (p50, max).  perf is /usr/bin/perf (PERF overrides).  At the
# defaults the run peaked at 36 GB of disk (heap 8.4 GB, index 10.5 GB, the
# build's sort files some 14 GB, max_wal_size of WAL) and took 37 minutes
# on 2 cores.  The cluster lives in ${TMPDIR:-/tmp} (pg_virtualenv -t) and is
# dropped at the end, also on failure or interruption (INT/TERM).
#
# Settings (ND_PG_OPTS overrides): shared_buffers 8GB, maintenance_work_mem
# 1GB (the builds), max_wal_size 8GB and checkpoint_timeout 30min (no
# checkpoint storm during the load), autovacuum off (the script vacuums;
# nothing else runs during the timings), jit off;
# max_parallel_workers_per_gather 2 comes from nd_in_cluster, fsync=off from
# pg_virtualenv (as in every benchmark here).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SELF=$ROOT/test/bench/run_scale.sh

# The PROFILE phase, run inside the cluster (run_scale.sh --profile-phase,
# from the in-cluster step below) while the big table still exists.
profile_phase() {
	local perf=${PERF:-/usr/bin/perf} nr=${PROF_NR:-2000} nk=${PROF_NK:-100} d kind n sql pid ppid i
	d=$(mktemp -d /tmp/neardup-scale-prof.XXXXXX)
	# its own bash (--profile-phase): removed however it ends
	trap "rm -rf '$d'" EXIT
	chmod 755 "$d"
	local radius_sql="SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM doc WHERE sh <~> %L <= 3"
	local knn_sql="SELECT string_agg(d::text, ',' ORDER BY d) FROM (SELECT sh <~> %L AS d FROM doc ORDER BY sh <~> %L LIMIT 10) s"
	echo
	echo "==================== profile ($(date '+%F %T')) ===================="
	echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	for kind in radius knn; do
		if [ $kind = radius ]; then n=$nr; sql=$radius_sql; else n=$nk; sql=$knn_sql; fi
		rm -f "$d/pid"
		# One backend: its pid to a file, a pause for perf to attach,
		# then the loop (planning included, as in the timings).
		cat >"$d/$kind.sql" <<-SQL
			\o $d/pid
			SELECT pg_backend_pid();
			\o
			SELECT pg_sleep(2);
			SELECT clock_timestamp() AS t0 \gset
			DO \$\$DECLARE res text; BEGIN
			  FOR i IN 100001..$((100000 + n)) LOOP
			    EXECUTE format(\$q\$$sql\$q\$, hashint8extended(i, 99)::simhash64, hashint8extended(i, 99)::simhash64) INTO res;
			  END LOOP;
			END \$\$;
			SELECT format('%s loop: %s queries in %s ms, %s ms a query (perf attached)', '$kind', $n,
			              round((extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000)::numeric, 1),
			              round(((extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000) / $n)::numeric, 3));
		SQL
		psql -X -q -At -v ON_ERROR_STOP=1 -f "$d/$kind.sql" &
		ppid=$!
		for i in $(seq 50); do [ -s "$d/pid" ] && break; sleep 0.1; done
		pid=$(tr -d ' \n' <"$d/pid")
		"$perf" record -q -g -p "$pid" -o "$d/$kind.data" >/dev/null 2>"$d/$kind.perf.err" &
		local perfpid=$!
		wait "$ppid" || { echo "profile: the $kind loop failed"; kill -INT "$perfpid"; wait "$perfpid"; rm -rf "$d"; return 1; }
		kill -INT "$perfpid" 2>/dev/null || true
		wait "$perfpid" || true
		echo "--- perf report --no-children --sort symbol, $kind loop (radius 3 / KNN 10) of $n random-code queries (backend $pid), top 25:"
		"$perf" report -i "$d/$kind.data" --no-children --sort symbol -g none --stdio 2>/dev/null |
			grep -v '^#' | grep -v '^$' | sed 's/[ -]*$//' | awk 'NR <= 25'
		echo "--- the same by shared object (--sort dso), top 8:"
		"$perf" report -i "$d/$kind.data" --no-children --sort dso -g none --stdio 2>/dev/null |
			grep -v '^#' | grep -v '^$' | sed 's/[ -]*$//' | awk 'NR <= 8'
	done
	echo
	echo "--- EXPLAIN (ANALYZE, BUFFERS), warm (each query run once before), random code i = 100001 and the planted query k = 1 (the code of the row that has planted copy 1):"
	psql -X -q -v ON_ERROR_STOP=1 <<-SQL
		\pset pager off
		SELECT hashint8extended(100001, 99)::simhash64 AS rq, hashint8extended(1 + ((hashint8extended(1, 11) & x'7fffffffffff'::bigint) % $ROWS), 7)::simhash64 AS pq \gset
		SELECT count(*) FROM doc WHERE sh <~> :'rq' <= 3;
		EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM doc WHERE sh <~> :'rq' <= 3;
		SELECT id FROM doc WHERE sh <~> :'pq' <= 3;
		EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM doc WHERE sh <~> :'pq' <= 3;
		SELECT string_agg(d::text, ',' ORDER BY d) FROM (SELECT sh <~> :'rq' AS d FROM doc ORDER BY sh <~> :'rq' LIMIT 10) s;
		EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT string_agg(d::text, ',' ORDER BY d) FROM (SELECT sh <~> :'rq' AS d FROM doc ORDER BY sh <~> :'rq' LIMIT 10) s;
		EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT string_agg(d::text, ',' ORDER BY d) FROM (SELECT sh <~> :'pq' AS d FROM doc ORDER BY sh <~> :'pq' LIMIT 10) s;
	SQL
	echo
	echo "--- cold: restart of the server ($PGVERSION/regress), OS page cache dropped, a new connection ($(date '+%T'))"
	pg_ctlcluster "$PGVERSION" regress restart
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg); buff/cache now $(free -m | awk '/^Mem/ { print $6 }') MB"
	# Client-side time (psql's \timing) of the first two statements, then
	# the next 20 of each in a DO loop (server-side, planning included).
	psql -X -q -v ON_ERROR_STOP=1 <<-SQL
		\pset pager off
		\timing on
		\echo first radius 3 query (random code i = 200001), client-side:
		SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') AS radius3 FROM doc WHERE sh <~> hashint8extended(200001, 99)::simhash64 <= 3;
		\echo first KNN 10 query (random code i = 200001), client-side:
		SELECT string_agg(d::text, ',' ORDER BY d) AS knn10 FROM (SELECT sh <~> hashint8extended(200001, 99)::simhash64 AS d FROM doc ORDER BY sh <~> hashint8extended(200001, 99)::simhash64 LIMIT 10) s;
		\timing off
		CREATE TEMP TABLE cold (what text, i int, ms float8);
		DO \$\$DECLARE res text; t0 timestamptz; BEGIN
		  FOR i IN 200002..200021 LOOP
		    t0 := clock_timestamp();
		    EXECUTE format(\$q\$$radius_sql\$q\$, hashint8extended(i, 99)::simhash64) INTO res;
		    INSERT INTO cold VALUES ('radius3', i, extract(epoch FROM clock_timestamp() - t0) * 1000);
		  END LOOP;
		  FOR i IN 200002..200021 LOOP
		    t0 := clock_timestamp();
		    EXECUTE format(\$q\$$knn_sql\$q\$, hashint8extended(i, 99)::simhash64, hashint8extended(i, 99)::simhash64) INTO res;
		    INSERT INTO cold VALUES ('knn10', i, extract(epoch FROM clock_timestamp() - t0) * 1000);
		  END LOOP;
		END \$\$;
		\echo the next 20 of each after the first ones (random codes, ms, server-side, planning included):
		SELECT what, count(*) AS n, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) AS p50_ms,
		       round(max(ms)::numeric, 3) AS max_ms, round(min(ms)::numeric, 3) AS min_ms,
		       string_agg(round(ms::numeric, 2)::text, ' ' ORDER BY i) AS in_order
		FROM cold GROUP BY what ORDER BY what DESC;
	SQL
	echo "==================== profile done ($(date '+%F %T')) ===================="
	rm -rf "$d"
}

if [ "${1:-}" = --profile-phase ]; then
	profile_phase
	exit
fi
if [ "${1:-}" = --in-cluster ]; then
	# psql's status is the run's; the profile phase only adds to the log.
	rc=0
	psql -X -q -v ON_ERROR_STOP=1 \
		-v rows="$ROWS" -v small="$SMALL" -v small_builds="$SMALL_BUILDS" \
		-v nq="$NQ" -v nseq="$NSEQ" -v check="$CHECK" -v profile="$ND_SCALE_PROFILE" \
		-f "$ROOT/test/bench/scale.sql" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ] && [ "$ND_SCALE_PROFILE" = 1 ]; then
		# A new bash: the phase is read from the file when it starts.
		bash "$SELF" --profile-phase 2>&1 || echo "# profile phase failed: exit $?"
	fi
	exit "$rc"
fi

# Everything below is one function, read whole before it runs.
main() {
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

ROWS=${ROWS:-200000000}
SMALL=${SMALL:-20000000}
SMALL_BUILDS=${SMALL_BUILDS:-10}
NQ=${NQ:-200}
NSEQ=${NSEQ:-5}
CHECK=${CHECK:-0}
# PROFILE is also PGXS's make variable (flags for the compiler): out of
# the environment before nd_build.
ND_SCALE_PROFILE=${PROFILE:-0}
unset PROFILE
export ROWS SMALL SMALL_BUILDS NQ NSEQ CHECK ND_SCALE_PROFILE

# Disk: about 44 B/row of heap, 57 B/row of index, 70 B/row of sort files
# during the build (4 tables x 16 B and more), 8 GB of WAL, and a margin.
tmp=${TMPDIR:-/tmp}
echo "# $(date '+%F %T') bench-scale: ROWS=$ROWS SMALL=$SMALL SMALL_BUILDS=$SMALL_BUILDS NQ=$NQ NSEQ=$NSEQ CHECK=$CHECK PROFILE=$ND_SCALE_PROFILE"
nd_check_disk $(( ROWS * 180 / 1024 + 9 * 1024 * 1024 )) "ROWS=$ROWS" || exit 1
avail_kb=$ND_DISK_AVAIL_KB

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=8GB maintenance_work_mem=1GB max_wal_size=8GB checkpoint_timeout=30min autovacuum=off jit=off"}

# The least free space seen in $tmp while the run goes (every 20 s).
minfile=$(mktemp /tmp/neardup-scale-df.XXXXXX)
echo "$avail_kb" >"$minfile"
(
	while sleep 20; do
		a=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
		[ "$a" -lt "$(cat "$minfile")" ] && echo "$a" >"$minfile"
	done
) &
sampler=$!
finish() {
	kill "$sampler" 2>/dev/null || true
	min_kb=$(cat "$minfile" 2>/dev/null || echo "$avail_kb")
	echo "# $(date '+%F %T') peak disk used in $tmp during the run: about $(( (avail_kb - min_kb) / 1024 / 1024 )) GB (free space sampled every 20 s; other jobs count too)"
	rm -f "$minfile"
	nd_cleanup
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

start=$(date +%s)
# No pipe after it: a signal to the process group would kill the reader,
# and pg_virtualenv's cleanup would die writing "Dropping cluster" to it.
set +e
nd_in_cluster bash "$SELF" --in-cluster
rc=$?
set -e
echo "# $(date '+%F %T') bench-scale finished: exit $rc after $(( $(date +%s) - start )) s; cluster dropped"
exit "$rc"
}
main "$@"
exit
