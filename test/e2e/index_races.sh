#!/usr/bin/env bash
# End-to-end: races of the hamming index with concurrent sessions, found by
# an audit of 0.2.  Each part reproduces one and checks the behaviour it
# should have:
#
#   1. CREATE INDEX CONCURRENTLY and REINDEX INDEX CONCURRENTLY of a
#      300,000-row table while another session calls hamming_merge() on the
#      new index in a loop (errors ignored: before the index exists, while
#      it is not ready).  The build must not share its pages with the
#      merge's recycling: the command succeeds, hamming_check() passes and
#      index scans equal a sequential scan.  (0.2: the recycling freed the
#      pages the build was writing, which the build then wrote again.)
#   2. A VACUUM cancelled in its index pass (the pass slowed down by the
#      cost-based delay) of a 200,000-row table with a scattered third of
#      its rows deleted: afterwards hamming_check() passes, hamming_merge()
#      and inserts that merge (background_merge off) succeed, index scans
#      equal a sequential scan, and a complete VACUUM succeeds.  (0.2
#      compacted the run's tables in place, page by page, so a cancel left
#      them holding different entries and every later merge failed.)
#   3. A session C whose backend caches the pending list: rows of the list
#      are deleted, a VACUUM is cancelled after compacting the list's pages,
#      a complete VACUUM follows and new rows reuse the freed heap slots.
#      C's radius-0 lookups of the deleted codes must find nothing and its
#      KNN scans must return rows at their true distances.  (0.2 bumped the
#      metapage's counter of list cleanups only at the end of an index pass,
#      so C kept the removed (code, TID) pairs and returned the new rows.)
#   4. An index-only scan through a cursor (REPEATABLE READ) over 50 rows
#      of one code, 25 of them deleted before, fetched once and left idle:
#      a concurrent VACUUM removes the deleted rows' entries, frees their
#      heap slots and marks the page all-visible without waiting for the
#      cursor, and the cursor returns the 25 rows its snapshot sees.  (0.2:
#      no pin, no cleanup lock; the VACUUM finished at once and the cursor
#      returned all 50 rows.  0.3: the scan kept the metapage pinned to its
#      end and VACUUM waited (BufferPin) until the cursor's transaction
#      ended.)  The same scenario with a B-tree index first, as the
#      control: its VACUUM waits for the leaf page's pin.  Then over GiST,
#      whose VACUUM takes no cleanup lock and does not wait: 0.3's operator
#      class has no fetch function, so the cursor is a plain index scan and
#      returns the 25 rows.  (0.2: an index-only scan, which returned rows
#      the VACUUM removed -- PostgreSQL's bug; an operator class with 0.2's
#      fetch function shows it, reported and not checked.)
#   5. The same idle cursor over runs that a flush and compaction
#      (hamming_merge) then retire: a VACUUM removes the deleted rows'
#      entries from the merged run only, frees their slots and marks their
#      page all-visible; the cursor, reading the retired run next, returns
#      the rows a sequential scan in its transaction sees (an index-only
#      scan trusting the visibility map there returns the 25 deleted rows
#      too).  (0.3: the VACUUM waited for the cursor.)
#
# Checks marked "setup:" verify that a reproduction did what it needs to,
# those marked "control:" that a check tells right from wrong; both pass on
# 0.2 too.  The checks of each part's fixed behaviour fail on 0.2, but for
# a few that 0.2 gets right as well: the scans after the cancelled VACUUM
# and the complete VACUUM of part 2, session C's lookups of live codes and
# the hamming_check of part 3, the index's answer after part 4.  Against
# 0.3, the hamming checks of parts 4 and 5 that the VACUUM does not wait
# (and their setup checks, which need that VACUUM) fail.  No check
# depends on how long anything takes; every wait is bounded.  About 45 s
# on two busy cores.
# ND_RACES_PARTS (e.g. "2 3") runs only some of the parts.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib
# No autovacuum or autoanalyze anywhere: part 3 needs the index's pg_class
# row to stay as it is (an update invalidates the backends' caches).
export ND_PG_OPTS="${ND_PG_OPTS:-} autovacuum=off"

nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
work=$(mktemp -d /tmp/nd-races.XXXXXX)
chmod 755 "$work"
bg=()          # background subshells started here
C_PID=         # session C's psql

# bg_kill PID: a background subshell of ours and its children (psql...).
bg_kill() {
	local kids
	kids=$(pgrep -P "$1" 2>/dev/null || true)
	# shellcheck disable=SC2086
	kill "$1" $kids 2>/dev/null || true
}
cleanup() {
	local p
	for p in "${bg[@]}"; do bg_kill "$p"; done
	[ -z "$C_PID" ] || kill "$C_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# --- session C: a psql coprocess that stays connected ------------------------
c_open() {
	coproc CSESS { PGAPPNAME=nd_session_c psql -X -q -At -v VERBOSITY=terse 2>&1; }
	C_PID=$CSESS_PID
}
# c_run SQL: run SQL (complete statements, each ending with ';') in session
# C; prints its output (errors included).  Not in a pipeline: a subshell
# other than a command substitution has no access to the coprocess.
c_run() {
	local line out=
	printf '%s\n\\echo __nd_end__\n' "$1" >&"${CSESS[1]}"
	while IFS= read -r -t 600 line <&"${CSESS[0]}"; do
		[ "$line" = __nd_end__ ] && break
		out+="$line"$'\n'
	done
	printf '%s' "$out"
}
c_close() {
	printf '\\q\n' >&"${CSESS[1]}"
	wait "$C_PID" 2>/dev/null || true
	C_PID=
}

nd_setup_db
psql_q -c "CREATE EXTENSION pageinspect" -c "CREATE EXTENSION pg_buffercache"
psql_q <<'EOF'
-- The special space of a hamming index page (HamPageOpaqueData, hamming.h):
-- epoch u32, next u32, kind u16, nentries u16, table u16, page_id u16, at
-- the end of the 8kB page; little-endian.  Used only to time a cancel.
CREATE FUNCTION nd_ham_page(idx regclass, blk int8, OUT kind int, OUT nentries int, OUT epoch int8)
LANGUAGE sql AS $$
SELECT get_byte(p, 8184) + 256 * get_byte(p, 8185), get_byte(p, 8186) + 256 * get_byte(p, 8187),
       get_byte(p, 8176) + 256 * get_byte(p, 8177) + 65536 * get_byte(p, 8178) + 16777216::int8 * get_byte(p, 8179)
FROM get_raw_page(idx::text, blk) p
$$;
-- Entries on the pages of the index's pending list (its epoch in the
-- metapage: HamMetaPageData.pending.epoch, 64 bytes into the page).
CREATE FUNCTION nd_pending_page_entries(idx regclass) RETURNS int8
LANGUAGE sql AS $$
SELECT sum(o.nentries)
FROM (SELECT get_byte(p, 64) + 256 * get_byte(p, 65) + 65536 * get_byte(p, 66) + 16777216::int8 * get_byte(p, 67) AS e
      FROM get_raw_page(idx::text, 0) p) m,
     generate_series(1, pg_relation_size(idx) / 8192 - 1) b,
     nd_ham_page(idx, b) o
WHERE o.kind = 5 AND o.epoch = m.e
$$;

/*
 * Radius-0 lookups through the index (nd_force('index'): plain or
 * index-only scans), one per code, against a sequential scan's rows of
 * exactly that code (bigint equality, no operator of the extension).
 * Returns lookups, how many differ, and the first difference.
 */
CREATE FUNCTION nd_eq_lookups(tbl regclass, codes simhash64[],
                              OUT lookups int, OUT wrong int, OUT example text)
LANGUAGE plpgsql AS $$
DECLARE
    q simhash64;
    want jsonb;
    got text;
    exp text;
BEGIN
    lookups := 0;
    wrong := 0;
    PERFORM nd_force('seq');
    EXECUTE format($q$
        SELECT coalesce(jsonb_object_agg(k, v), '{}') FROM (
            SELECT c::bigint::text AS k, string_agg(t.id || ':' || t.sh::text, ',' ORDER BY t.id) AS v
            FROM unnest($1) c JOIN %s t ON t.sh::bigint = c::bigint GROUP BY 1) s$q$, tbl)
        INTO want USING codes;
    PERFORM nd_force('index');
    FOREACH q IN ARRAY codes LOOP
        EXECUTE format('SELECT coalesce(string_agg(id || '':'' || sh::text, '','' ORDER BY id), '''') FROM %s WHERE sh <~> %L::simhash64 <= 0',
                       tbl, q::text) INTO got;
        exp := coalesce(want ->> q::bigint::text, '');
        lookups := lookups + 1;
        IF got IS DISTINCT FROM exp THEN
            wrong := wrong + 1;
            IF example IS NULL THEN
                example := format('code %s: index scan returned [%s] (id:code), sequential scan [%s]', q, got, exp);
            END IF;
        END IF;
    END LOOP;
    PERFORM nd_force('seq');
END
$$;

/*
 * KNN through the index (ORDER BY sh <~> q LIMIT k, a plain index scan:
 * id is selected too), with the distances computed by bit_count() on the
 * rows it returns, against the k smallest distances of a sequential scan.
 */
CREATE FUNCTION nd_knn_lookups(tbl regclass, codes simhash64[], k int,
                               OUT lookups int, OUT wrong int, OUT example text)
LANGUAGE plpgsql AS $$
DECLARE
    q simhash64;
    want int[];
    got int[];
BEGIN
    lookups := 0;
    wrong := 0;
    FOREACH q IN ARRAY codes LOOP
        PERFORM nd_force('seq');
        EXECUTE format($q$
            SELECT coalesce(array_agg(d ORDER BY d), '{}') FROM (
                SELECT bit_count((sh::bigint # %s)::bit(64))::int AS d
                FROM %s WHERE sh IS NOT NULL ORDER BY 1 LIMIT %s) s$q$, q::bigint, tbl, k)
            INTO want;
        PERFORM nd_force('index');
        EXECUTE format($q$
            SELECT coalesce(array_agg(bit_count((sh::bigint # %s)::bit(64))::int), '{}') FROM (
                SELECT id, sh FROM %s ORDER BY sh <~> %L::simhash64 LIMIT %s) s$q$, q::bigint, tbl, q::text, k)
            INTO got;
        lookups := lookups + 1;
        IF got IS DISTINCT FROM want THEN
            wrong := wrong + 1;
            IF example IS NULL THEN
                example := format('code %s: the rows the index returned are at distances %s, the nearest rows at %s', q, got, want);
            END IF;
        END IF;
    END LOOP;
    PERFORM nd_force('seq');
END
$$;
EOF

# A VACUUM in the background, slowed down (SETs given as psql -c options),
# as application nd_slow_vacuum: its output in $work/vac.out, its exit code
# in $work/vac.rc.
start_slow_vacuum() {
	local tbl=$1
	shift
	rm -f "$work/vac.out" "$work/vac.rc"
	(
		rc=0
		PGAPPNAME=nd_slow_vacuum psql -X -q -v ON_ERROR_STOP=1 "$@" \
			-c "VACUUM (INDEX_CLEANUP ON) $tbl" >"$work/vac.out" 2>&1 || rc=$?
		echo "$rc" >"$work/vac.rc"
	) &
	VAC=$!
	bg+=("$VAC")
}
# Cancel it (again, until it has ended; bounded) and wait for it.
cancel_slow_vacuum() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ -e "$work/vac.rc" ] && break
		psql -X -q -At -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
		                   WHERE application_name = 'nd_slow_vacuum' AND query LIKE 'VACUUM%'" >/dev/null 2>&1 || true
		sleep 0.1
	done
	wait "$VAC" || true
}
# The VACUUM was cancelled in its index pass of INDEX.
vacuum_cancelled_in() {
	grep -q 'canceling statement due to user request' "$work/vac.out" &&
		grep -q "while vacuuming index \"$1\"" "$work/vac.out"
}
# check_scans: nd_check_ok's TAP line, with every other line of its output
# (an error's DETAIL, CONTEXT...) as a comment.
check_scans() {
	local res line
	res=$(nd_check_ok "$@")
	while IFS= read -r line; do
		case $line in
		"ok "*) ok 0 "$1" ;;
		"not ok "*) ok 1 "$1" ;;
		"" | "#"*) [ -z "$line" ] || echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done <<<"$res"
}
stats() {
	psql_q -c "SELECT format('run %s, pending %s, sealed %s, nulls %s, merges %s (%s by inserts), %s pages',
	                         run_entries, pending_entries, sealed_entries, null_entries, merges, insert_merges, pages)
	           FROM hamming_stats('$1')"
}

# =============================================================================
# 1. CREATE INDEX CONCURRENTLY / REINDEX CONCURRENTLY against hamming_merge()
# =============================================================================
# The merge loop: one session calls hamming_merge(NAME) as fast as it can,
# errors ignored, each call its own transaction (no snapshot held that the
# concurrent build would wait for), until stop_merger ends it.  Each call's
# outcome (its SQLSTATE, or "ok") goes to $work/merges.  Returns once the
# first call has returned.
start_merger() {
	local i
	: >"$work/merges"
	(
		yes "SELECT hamming_merge(:'idx');" |
			PGAPPNAME=nd_merge_loop psql -X -q -At -v VERBOSITY=sqlstate -v idx="$1" 2>&1 |
			sed -u -E 's/^-?[0-9]+$/ok/; s/^ERROR: +//' >>"$work/merges"
	) &
	MERGER=$!
	bg+=("$MERGER")
	for ((i = 0; i < 600; i++)); do
		[ -s "$work/merges" ] && return 0
		sleep 0.1
	done
	return 1
}
stop_merger() {
	psql_q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'nd_merge_loop'" >/dev/null
	wait "$MERGER" || true
}
# The outcomes of the calls (not the loop's end).
merges() { grep -E '^(ok|[0-9A-Z]{5})$' "$work/merges" || true; }

codes1="ARRAY(SELECT sh FROM r1 WHERE id IN (1, 4242, 150000, 299999) ORDER BY id) ||
        ARRAY[nd_flip(hashint8extended(77, 7)::simhash64, 2, 5), nd_center(0)]"
# race LABEL SQL MERGE_TARGET: SQL while the merge loop calls
# hamming_merge(MERGE_TARGET); then the checks of r1_ham.
race() {
	local label=$1 sql=$2 target=$3 out rc=0 summary reached v running=no before after
	start_merger "$target" && running=yes
	before=$(merges | wc -l)
	out=$(psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "$sql" 2>&1) || rc=$?
	after=$(merges | wc -l)
	stop_merger
	summary=$(merges | sort | uniq -c | sort -rn | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')
	# 42P01: the index does not exist (yet); anything else reached it.
	reached=$(merges | grep -cv '^42P01$' || true)
	echo "# $label: hamming_merge('$target') calls: $summary; $before before the command, $((after - before)) during it"
	[ "$rc" = 0 ] || echo "# $label failed: $(tr '\n' ' ' <<<"$out" | cut -c1-400)"
	ok $([ "$running" = yes ] && [ "$after" -gt "$before" ] && [ "$reached" -gt 0 ] && echo 0 || echo 1) \
		"setup: $label: the merge loop ran before and during the command, and called hamming_merge() on the new index ($reached calls reached it)"
	ok $([ "$rc" = 0 ] && echo 0 || echo 1) "$label succeeds while hamming_merge() is called in a loop"
	v=$(psql_q -c "SELECT string_agg(c.relname || CASE WHEN i.indisvalid AND i.indisready THEN '' ELSE ' (INVALID)' END, ', ' ORDER BY c.relname)
	               FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'r1'::regclass")
	out=$(nd_ham_check r1_ham)
	ok $([ "$v" = r1_ham ] && [ "$out" = passed ] && echo 0 || echo 1) \
		"$label: r1_ham is valid (indexes: $v) and hamming_check passes ($(cut -c1-300 <<<"$out"))"
	if [[ $v =~ (^|, )r1_ham(,|$) ]]; then
		check_scans "$label: index scans of r1_ham = sequential scan (radius, =, KNN)" r1 r1_ham "" "$codes1" "{0,2,5}"
	else
		ok 1 "$label: index scans of r1_ham = sequential scan (radius, =, KNN) (not run: r1_ham is not valid)"
	fi
}
# A fresh, plainly built r1_ham (no other index on r1).
fresh_r1_ham() {
	local i
	for i in $(psql_q -c "SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'r1'::regclass"); do
		psql_q -c "DROP INDEX $i"
	done
	[ "${1:-}" = none ] || psql_q -c "CREATE INDEX r1_ham ON r1 USING hamming (sh)"
}

part1() {
	echo "# 1. CREATE INDEX CONCURRENTLY / REINDEX INDEX CONCURRENTLY while another session calls hamming_merge()"
	psql_q -c "CREATE TABLE r1 (id bigint, sh simhash64) WITH (autovacuum_enabled = off)" \
		-c "INSERT INTO r1 SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(1, 300000) i" \
		-c "VACUUM ANALYZE r1"
	for round in 1 2 3; do
		fresh_r1_ham none
		race "CREATE INDEX CONCURRENTLY (round $round)" "CREATE INDEX CONCURRENTLY r1_ham ON r1 USING hamming (sh)" r1_ham
	done
	for round in 1 2; do
		fresh_r1_ham
		race "REINDEX INDEX CONCURRENTLY (round $round)" "REINDEX INDEX CONCURRENTLY r1_ham" r1_ham_ccnew
	done
	psql_q -c "DROP TABLE r1"
}

# =============================================================================
# 2. A VACUUM cancelled in its index pass
# =============================================================================
part2() {
	echo "# 2. a VACUUM cancelled in its index pass"
	psql_q -c "CREATE TABLE r2 (id bigint, sh simhash64) WITH (autovacuum_enabled = off)" \
		-c "INSERT INTO r2 SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(1, 200000) i" \
		-c "CREATE INDEX r2_ham ON r2 USING hamming (sh)" \
		-c "VACUUM ANALYZE r2" \
		-c "DELETE FROM r2 WHERE id % 3 = 0"
	# Prune the heap pages now (a sequential scan does), so that the VACUUM's
	# heap pass dirties none; then clean every buffer: from here on only the
	# index pass makes the VACUUM sleep, at each page it changes.
	psql_q -c "SET enable_indexscan = off" -c "SET enable_indexonlyscan = off" -c "SET enable_bitmapscan = off" \
		-c "SET max_parallel_workers_per_gather = 0" -c "SELECT count(*) FROM r2" -c "CHECKPOINT" >/dev/null
	echo "# r2: $(psql_q -c "SELECT pg_relation_size('r2') / 8192 || ' heap pages, ' || pg_relation_size('r2_ham') / 8192 || ' index pages'"); r2_ham: $(stats r2_ham)"
	start_slow_vacuum r2 -c "SET vacuum_cost_delay = '20ms'" -c "SET vacuum_cost_limit = 1" \
		-c "SET vacuum_cost_page_hit = 0" -c "SET vacuum_cost_page_miss = 0"
	nd_wait_for "EXISTS (SELECT 1 FROM pg_stat_progress_vacuum WHERE relid = 'r2'::regclass AND phase = 'vacuuming indexes')" 1200 ||
		echo "# the VACUUM did not reach its index pass"
	# Some of the index's pages changed, not all (about 80 ms a page).
	dirty="(SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode('r2_ham') AND isdirty)"
	nd_wait_for "$dirty >= 3" 300 || echo "# the index pass changed no page yet"
	echo "# cancelling the VACUUM: $(psql_q -c "SELECT $dirty") pages of r2_ham changed so far"
	cancel_slow_vacuum
	echo "# VACUUM: $(tr '\n' ' ' <<<"$(cat "$work/vac.out")" | cut -c1-300) (exit $(cat "$work/vac.rc"))"
	ok $(vacuum_cancelled_in r2_ham && echo 0 || echo 1) "setup: the VACUUM of r2 was cancelled in its index pass"
	echo "# r2_ham after the cancel: $(stats r2_ham)"

	out=$(nd_ham_check r2_ham)
	ok $([ "$out" = passed ] && echo 0 || echo 1) "cancelled VACUUM: hamming_check passes afterwards ($(cut -c1-300 <<<"$out"))"

	rc=0
	out=$(psql_q -v VERBOSITY=verbose -c "INSERT INTO r2 SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(200001, 200100) i" \
		-c "SELECT hamming_merge('r2_ham')" 2>&1) || rc=$?
	after=$(stats r2_ham)
	echo "# hamming_merge: $(tr '\n' ' ' <<<"$out" | cut -c1-300); r2_ham: $after"
	ok $([ "$rc" = 0 ] && [[ $after == *"pending 0, sealed 0,"* ]] && echo 0 || echo 1) \
		"cancelled VACUUM: hamming_merge() then succeeds and empties the pending list"

	psql_q -c "ALTER INDEX r2_ham SET (background_merge = off, pending_limit = 64)"
	m0=$(psql_q -c "SELECT insert_merges FROM hamming_stats('r2_ham')")
	rc=0
	out=$(psql_q -v VERBOSITY=verbose -c "INSERT INTO r2 SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(200101, 220000) i" 2>&1) || rc=$?
	m1=$(psql_q -c "SELECT insert_merges FROM hamming_stats('r2_ham')")
	echo "# 19,900 inserts with background_merge = off, pending_limit = 64: $(tr '\n' ' ' <<<"$out" | cut -c1-300); merges by inserts $m0 -> $m1"
	ok $([ "$rc" = 0 ] && [ "$m1" -gt "$m0" ] && echo 0 || echo 1) \
		"cancelled VACUUM: inserts past the merge point (background_merge = off) succeed, merging in their session"

	codes2="ARRAY(SELECT hashint8extended(i, 7)::simhash64 FROM unnest('{1,2,3,4,5,6,99999,150000,200050,210000}'::int8[]) i)"
	check_scans "cancelled VACUUM: index scans of r2_ham = sequential scan (deleted and live codes)" r2 r2_ham "" "$codes2" "{0,2,5}"

	rc=0
	out=$(psql_q -v VERBOSITY=verbose -c "VACUUM r2" 2>&1) || rc=$?
	chk=$(nd_ham_check r2_ham)
	echo "# complete VACUUM: ${out:-ok}; r2_ham: $(stats r2_ham)"
	ok $([ "$rc" = 0 ] && [ "$chk" = passed ] && echo 0 || echo 1) \
		"cancelled VACUUM: a complete VACUUM afterwards succeeds and hamming_check passes ($(cut -c1-300 <<<"$chk"))"
	psql_q -c "DROP TABLE r2"
}

# =============================================================================
# 3. A stale pending-list cache after a cancelled VACUUM
# =============================================================================
part3() {
	echo "# 3. session C's cache of the pending list, a VACUUM cancelled after compacting it, heap slots reused"
	# Heap and index in block order: 30,000 rows in the run (the run must hold
	# more than 16 times the pending list, or VACUUM merges the list), 1,500 in
	# the pending list (3 pages), then 100,000 NULLs in the NULL list: the slow
	# VACUUM (20 ms a page) reaches the pending list's pages after the run's
	# and crawls through the NULL list's after them, where it is cancelled.
	psql_q -c "CREATE TABLE s (id bigint, sh simhash64) WITH (autovacuum_enabled = off)" \
		-c "INSERT INTO s SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(1, 30000) i" \
		-c "CREATE INDEX s_ham ON s USING hamming (sh) WITH (blocks = 3, pending_limit = 1000000)" \
		-c "INSERT INTO s SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(100001, 101500) i" \
		-c "INSERT INTO s SELECT i, NULL FROM generate_series(200001, 300000) i" \
		-c "VACUUM s"
	# The first 600 rows of the list (its first two pages: not the last page,
	# where a backend's cache stopped reading and would notice a compaction).
	psql_q -c "CREATE TABLE gone AS SELECT id, sh, ctid AS tid FROM s WHERE id BETWEEN 100001 AND 100600" \
		-c "DELETE FROM s WHERE id BETWEEN 100001 AND 100600"
	psql_q -c "SET enable_indexscan = off" -c "SET enable_indexonlyscan = off" -c "SET enable_bitmapscan = off" \
		-c "SET max_parallel_workers_per_gather = 0" -c "SELECT count(*) FROM s" >/dev/null
	# ANALYZE now, with the deletion committed, sets the index's reltuples to
	# what the complete VACUUM will count, so that VACUUM does not update (and
	# so invalidate) the index's pg_class row, which would reset C's cache.
	psql_q -c "ANALYZE s" -c "CHECKPOINT"
	gone_codes="ARRAY(SELECT sh FROM gone ORDER BY id LIMIT 400)"
	knn_codes="ARRAY(SELECT sh FROM gone ORDER BY id LIMIT 40)"
	live_codes="ARRAY(SELECT sh FROM s WHERE id BETWEEN 100601 AND 100800 OR id BETWEEN 500001 AND 500200)"
	echo "# s_ham: $(stats s_ham)"

	c_open
	echo "# session C: pid $(c_run "SELECT pg_backend_pid();")"
	plan=$(c_run "BEGIN; SELECT nd_force('index'); EXPLAIN (COSTS OFF) SELECT id, sh FROM s WHERE sh <~> '0123456789abcdef' <= 0; EXPLAIN (COSTS OFF) SELECT id, sh FROM s ORDER BY sh <~> '0123456789abcdef' LIMIT 5; ROLLBACK;")
	echo "$plan" | grep -E 'Scan' | sed -E 's/^ *(->  )?/# /'
	ok $([ "$(grep -cE '^ *(->  )?Index Scan using s_ham on s' <<<"$plan")" = 2 ] && echo 0 || echo 1) \
		"setup: session C's radius-0 and KNN queries are index scans of s_ham"
	# C reads the pending list into its cache (the deleted rows' entries too).
	before=$(c_run "SELECT lookups || ' lookups, ' || wrong || ' wrong ' || coalesce(example, '') FROM nd_eq_lookups('s', $gone_codes);")
	echo "# session C before the VACUUM, deleted codes: $before"

	echo "# pending list page entries: $(psql_q -c "SELECT nd_pending_page_entries('s_ham')")"
	start_slow_vacuum s -c "SET vacuum_cost_delay = '20ms'" -c "SET vacuum_cost_limit = 1"
	nd_wait_for "EXISTS (SELECT 1 FROM pg_stat_progress_vacuum WHERE relid = 's'::regclass AND phase = 'vacuuming indexes')" 1200 ||
		echo "# the VACUUM did not reach its index pass"
	# Until the pending list's pages hold only the 900 live rows' entries (read
	# in 0.2's page format), or (whatever the format) the VACUUM changed 3
	# pages of the index (0.2 changes only the list's first 2), or it ended.
	dirty="(SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode('s_ham') AND isdirty)"
	nd_wait_for "nd_pending_page_entries('s_ham') <= 900 OR $dirty >= 3 OR
	             NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = 'nd_slow_vacuum' AND query LIKE 'VACUUM%')" 300 ||
		echo "# the list's pages were not seen compacted"
	echo "# cancelling the VACUUM: pending list page entries $(psql_q -c "SELECT nd_pending_page_entries('s_ham')"), $(psql_q -c "SELECT $dirty") pages of s_ham changed"
	cancel_slow_vacuum
	echo "# VACUUM: $(tr '\n' ' ' <<<"$(cat "$work/vac.out")" | cut -c1-300) (exit $(cat "$work/vac.rc"))"
	ok $(vacuum_cancelled_in s_ham && echo 0 || echo 1) "setup: the VACUUM of s was cancelled in its index pass"

	psql_q -c "VACUUM (INDEX_CLEANUP ON) s"
	echo "# after a complete VACUUM: s_ham: $(stats s_ham)"
	psql_q -c "INSERT INTO s SELECT i, hashint8extended(i, 11)::simhash64 FROM generate_series(500001, 501200) i"
	reused=$(psql_q -c "SELECT count(*) FROM s JOIN gone g ON s.ctid = g.tid WHERE s.id > 500000")
	ok $([ "$reused" -ge 100 ] && echo 0 || echo 1) "setup: new rows (other codes) took the heap slots of deleted rows ($reused of 600)"

	res=$(c_run "SELECT lookups || '|' || wrong || '|' || coalesce(example, '') FROM nd_eq_lookups('s', $gone_codes);")
	IFS='|' read -r looks wrong example <<<"$res"
	echo "# session C, radius 0 around the deleted rows' codes: ${looks:-?} lookups, ${wrong:-?} wrong${example:+; $example}"
	[[ $res == *'|'* ]] || echo "# $res"
	ok $([ "${looks:-0}" = 400 ] && [ "$wrong" = 0 ] && echo 0 || echo 1) \
		"session C: radius-0 lookups of 400 deleted codes = sequential scan (no row)"
	res=$(c_run "SELECT lookups || '|' || wrong || '|' || coalesce(example, '') FROM nd_knn_lookups('s', $knn_codes, 5);")
	IFS='|' read -r looks wrong example <<<"$res"
	echo "# session C, KNN (LIMIT 5) around the deleted rows' codes: ${looks:-?} lookups, ${wrong:-?} wrong${example:+; $example}"
	[[ $res == *'|'* ]] || echo "# $res"
	ok $([ "${looks:-0}" = 40 ] && [ "$wrong" = 0 ] && echo 0 || echo 1) \
		"session C: KNN around 40 deleted codes returns rows at the nearest distances (bit_count of the rows = sequential scan)"
	res=$(c_run "SELECT lookups || '|' || wrong || '|' || coalesce(example, '') FROM nd_eq_lookups('s', $live_codes);")
	IFS='|' read -r looks wrong example <<<"$res"
	echo "# session C, radius 0 around live rows' codes (old and new): ${looks:-?} lookups, ${wrong:-?} wrong${example:+; $example}"
	ok $([ "${looks:-0}" = 400 ] && [ "$wrong" = 0 ] && echo 0 || echo 1) \
		"session C: radius-0 lookups of 400 live codes = sequential scan"
	c_close
	res=$(psql_q -c "SELECT lookups || '|' || wrong || '|' || coalesce(example, '') FROM nd_eq_lookups('s', $gone_codes)")
	IFS='|' read -r looks wrong example <<<"$res"
	ok $([ "${looks:-0}" = 400 ] && [ "$wrong" = 0 ] && echo 0 || echo 1) \
		"control: a new session's radius-0 lookups of the deleted codes = sequential scan ($wrong of $looks wrong)"
	out=$(nd_ham_check s_ham)
	ok $([ "$out" = passed ] && echo 0 || echo 1) "s_ham: hamming_check passes ($(cut -c1-300 <<<"$out"))"
	psql_q -c "DROP TABLE s, gone"
}

# =============================================================================
# 4. An index-only scan and a concurrent VACUUM
# =============================================================================
# ios_vacuum LABEL TABLE INDEX USING CONDITION: the scenario of part 4 on
# a new table with one index (INDEX, USING: its access method and column),
# the cursor's query being SELECT sh FROM TABLE WHERE CONDITION.
# ios_table LABEL TABLE INDEX USING: part 4's table: 1,000 rows, ids
# 101..150 (on heap page 0) of code q, the others random; the odd ones of
# the 50 deleted, and page 0 pruned (its deleted rows become dead line
# pointers), as VACUUM's heap pass would: VACUUM then removes them even
# while a scan pins the page.
ios_table() {
	local label=$1 tbl=$2 idx=$3 using=$4
	psql_q -c "CREATE TABLE $tbl (id int, sh simhash64) WITH (autovacuum_enabled = off)" \
		-c "INSERT INTO $tbl SELECT i, CASE WHEN i BETWEEN 101 AND 150 THEN '$q'::simhash64 ELSE hashint8extended(i, 7)::simhash64 END
		    FROM generate_series(1, 1000) i" \
		-c "CREATE INDEX $idx ON $tbl USING $using" \
		-c "VACUUM ANALYZE $tbl" \
		-c "DELETE FROM $tbl WHERE id BETWEEN 101 AND 150 AND id % 2 = 1"
	psql_q -c "SET enable_indexscan = off" -c "SET enable_indexonlyscan = off" -c "SET enable_bitmapscan = off" \
		-c "SET max_parallel_workers_per_gather = 0" -c "SELECT count(*) FROM $tbl" >/dev/null
	echo "# $label: $tbl page 0: $(page0 "$tbl")"
}
# page0 TABLE: the line pointers of heap page 0 by state.
page0() {
	psql_q -c "SELECT count(*) FILTER (WHERE lp_flags = 3) || ' dead line pointers, ' || count(*) FILTER (WHERE lp_flags = 0) || ' unused, '
	                  || count(*) FILTER (WHERE lp_flags = 1) || ' rows' FROM heap_page_items(get_raw_page('$1', 0))"
}

# A sixth argument "nowait": the VACUUM must not wait for the cursor but
# finish while it stays open, freeing page 0's 25 deleted rows and marking
# it all-visible; without it, the VACUUM must wait (BufferPin).
ios_vacuum() {
	local label=$1 tbl=$2 idx=$3 using=$4 cond=$5 plan first rest nfirst nrest waited= finished_before out nidx i D after
	ios_table "$label" "$tbl" "$idx" "$using"

	c_open
	decl="DECLARE c CURSOR FOR SELECT sh FROM $tbl WHERE $cond"
	plan=$(c_run "BEGIN ISOLATION LEVEL REPEATABLE READ; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; EXPLAIN (COSTS OFF) $decl;")
	echo "$plan" | sed 's/^/# /'
	ok $(grep -q "Index Only Scan using $idx on $tbl" <<<"$plan" && echo 0 || echo 1) \
		"setup: $label: the cursor's query is an index-only scan of $idx"
	first=$(c_run "$decl; FETCH 1 FROM c;")
	echo "# $label: FETCH 1: $first"

	start_d() {
		rm -f "$work/d.rc"
		(
			rc=0
			PGAPPNAME=nd_session_d psql -X -q -v ON_ERROR_STOP=1 -c "VACUUM (INDEX_CLEANUP ON) $tbl" >"$work/d.out" 2>&1 || rc=$?
			echo "$rc" >"$work/d.rc"
		) &
		D=$!
		bg+=("$D")
		# Until D's VACUUM waits (for the scan's pin, or a lock) or has ended.
		waited=
		for ((i = 0; i < 600; i++)); do
			[ -e "$work/d.rc" ] && break
			waited=$(psql -X -At -c "SELECT wait_event_type || ':' || wait_event FROM pg_stat_activity
			                         WHERE application_name = 'nd_session_d' AND query LIKE 'VACUUM%'
			                           AND wait_event_type IN ('BufferPin', 'Lock')" 2>/dev/null || true)
			[ -n "$waited" ] && break
			sleep 0.1
		done
	}
	start_d
	echo "# $label: session D's VACUUM: $([ -e "$work/d.rc" ] && echo "finished (exit $(cat "$work/d.rc"))" || echo "waiting on ${waited:-?}")"
	if [ "${6:-}" = nowait ]; then
		ok $([ -e "$work/d.rc" ] && [ "$(cat "$work/d.rc")" = 0 ] && [ -z "$waited" ] && echo 0 || echo 1) \
			"$label: VACUUM does not wait for the idle cursor's index-only scan: it finishes (exit $(cat "$work/d.rc" 2>/dev/null || echo none)) while the cursor stays open (wait event: ${waited:-none})"
		after="$(page0 "$tbl"); all-visible: $(psql_q -c "SELECT (flags & 4) <> 0 FROM page_header(get_raw_page('$tbl', 0))")"
		echo "# $label: page 0 after the VACUUM: $after"
		ok $(grep -q '^0 dead line pointers, 25 unused.*all-visible: t$' <<<"$after" && echo 0 || echo 1) \
			"setup: $label: the VACUUM freed the 25 deleted rows' slots and marked page 0 all-visible while the cursor was open ($after)"
	else
		ok $([ ! -e "$work/d.rc" ] && [ -n "$waited" ] && echo 0 || echo 1) \
			"$label: VACUUM waits for the open index-only scan (wait event: ${waited:-none}) instead of finishing"
	fi
	# (A scan may release its pin once it has returned its last row: the
	# VACUUM may end before the COMMIT below, not before the FETCH ALL.)
	finished_before=$([ -e "$work/d.rc" ] && echo yes || echo no)
	rest=$(c_run "FETCH ALL FROM c;")
	nrest=$(grep -c . <<<"$rest" || true)
	nfirst=$(grep -c . <<<"$first" || true)
	echo "# $label: FETCH ALL: $nrest rows"
	ok $([ "$((nfirst + nrest))" = 25 ] && echo 0 || echo 1) \
		"$label: the cursor returns the 25 rows its snapshot sees (got $nfirst + $nrest), not the ones VACUUM removed"
	c_run "COMMIT;" >/dev/null
	c_close
	for ((i = 0; i < 600; i++)); do
		[ -e "$work/d.rc" ] && break
		sleep 0.1
	done
	wait "$D" || true
	echo "# $label: session D: $(tr '\n' ' ' <"$work/d.out")exit $(cat "$work/d.rc" 2>/dev/null || echo '(still running)')"
	[ "${6:-}" = nowait ] ||
		ok $([ "$finished_before" = no ] && [ "$(cat "$work/d.rc" 2>/dev/null)" = 0 ] && echo 0 || echo 1) \
			"$label: the VACUUM completes (exit 0) once the cursor has been read and its transaction ended, not while it was open (finished before: $finished_before)"
	nidx=$(psql_q -c "BEGIN" -c "SELECT nd_force('index')" -c "SELECT count(*) FROM $tbl WHERE $cond" -c "ROLLBACK" | grep -E '^[0-9]+$' || true)
	out=
	[ "$using" = "btree (sh)" ] || out=$(nd_ham_check "$idx")
	ok $([ "${out:-passed}" = passed ] && [ "$nidx" = 25 ] && echo 0 || echo 1) \
		"$label: afterwards the index finds the 25 rows ($nidx)${out:+, hamming_check: $(cut -c1-200 <<<"$out")}"
	psql_q -c "DROP TABLE $tbl"
}

# gist_vacuum LABEL TABLE INDEX OPCLASS: the same cursor over a GiST index
# with operator class OPCLASS.  PostgreSQL's GiST scans copy a leaf page's
# matches and drop the pin, and GiST's VACUUM takes no cleanup lock: it does
# not wait.  Prints the plan's scan, the rows the cursor returned and page
# 0's line pointers after the VACUUM, '|'-separated.
gist_vacuum() {
	local label=$1 tbl=$2 idx=$3 opclass=$4 plan first rest after
	ios_table "$label" "$tbl" "$idx" "gist (sh $opclass)" >&2
	c_open
	decl="DECLARE c CURSOR FOR SELECT sh FROM $tbl WHERE sh <~> '$q' <= 3"
	plan=$(c_run "BEGIN ISOLATION LEVEL REPEATABLE READ; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; EXPLAIN (COSTS OFF) $decl;")
	first=$(c_run "$decl; FETCH 1 FROM c;")
	psql_q -c "VACUUM (INDEX_CLEANUP ON) $tbl"
	after=$(page0 "$tbl")
	rest=$(c_run "FETCH ALL FROM c;")
	c_run "COMMIT;" >/dev/null
	c_close
	psql_q -c "DROP TABLE $tbl"
	printf '%s|%s|%s\n' "$(grep -oE '(Index Only Scan|Index Scan|Seq Scan)' <<<"$plan" | head -1)" \
		"$(($(grep -c . <<<"$first" || true) + $(grep -c . <<<"$rest" || true)))" "$after"
}

part4() {
	echo "# 4. an index-only scan (cursor) while VACUUM removes rows it has found"
	q=$(psql_q -c "SELECT nd_center(7)")
	# The control: a B-tree keeps the pin of an index-only scan's leaf page,
	# and its VACUUM takes cleanup locks.
	ios_vacuum "control (btree)" t4b t4b_bt "btree (sh)" "sh = '$q'"
	# hamming: the scan pins the metapage only while it gathers entries,
	# and drops those of rows its snapshot does not see.
	ios_vacuum "hamming" t4 t4_ham "hamming (sh)" "sh <~> '$q' <= 3" nowait
	# GiST: 0.3's operator class has no fetch function, so the scan is a
	# plain index scan, which checks each row against the snapshot.  The
	# control: the same operator class with 0.2's fetch function, an
	# index-only scan, which (PostgreSQL's bug) may return the rows VACUUM
	# removed under it; reported, not checked, since a PostgreSQL release
	# may fix it.
	local g scan rows after
	g=$(gist_vacuum "GiST (simhash64_gist_ops)" t4g t4g_gist "")
	IFS='|' read -r scan rows after <<<"$g"
	echo "# GiST: $scan; the cursor returned $rows rows; page 0 after the VACUUM: $after"
	ok $([ "$scan" = "Index Scan" ] && echo 0 || echo 1) \
		"GiST: the cursor's query (SELECT sh) is a plain index scan, not an index-only scan ($scan)"
	ok $(grep -q '^0 dead line pointers, 25 unused' <<<"$after" && echo 0 || echo 1) \
		"setup: GiST: the VACUUM ran while the cursor was open and freed the 25 deleted rows' slots ($after)"
	ok $([ "$rows" = 25 ] && echo 0 || echo 1) \
		"GiST: the cursor returns the 25 rows its snapshot sees (got $rows), not the ones VACUUM removed"
	psql_q <<'EOF' >/dev/null
CREATE FUNCTION nd_gist_fetch_02(internal) RETURNS internal
    AS '$libdir/neardup', 'gist_simhash64_fetch' LANGUAGE C IMMUTABLE STRICT;
CREATE OPERATOR CLASS nd_gist_fetch_ops FOR TYPE simhash64 USING gist AS
    OPERATOR 8 <@ (simhash64, hamming_ball),
    OPERATOR 15 <~> (simhash64, simhash64) FOR ORDER BY integer_ops,
    OPERATOR 18 = (simhash64, simhash64),
    FUNCTION 1 neardup_internal.gist_simhash64_consistent(internal, simhash64, int2, oid, internal),
    FUNCTION 2 neardup_internal.gist_simhash64_union(internal, internal),
    FUNCTION 3 neardup_internal.gist_simhash64_compress(internal),
    FUNCTION 5 neardup_internal.gist_simhash64_penalty(internal, internal, internal),
    FUNCTION 6 neardup_internal.gist_simhash64_picksplit(internal, internal),
    FUNCTION 7 neardup_internal.gist_simhash64_same(neardup_internal.simhash64_gist_key, neardup_internal.simhash64_gist_key, internal),
    FUNCTION 8 neardup_internal.gist_simhash64_distance(internal, simhash64, int2, oid, internal),
    FUNCTION 9 nd_gist_fetch_02(internal),
    FUNCTION 11 neardup_internal.gist_simhash64_sortsupport(internal),
    STORAGE neardup_internal.simhash64_gist_key;
EOF
	g=$(gist_vacuum "control (GiST with a fetch function)" t4f t4f_gist "nd_gist_fetch_ops")
	IFS='|' read -r scan rows after <<<"$g"
	echo "# control (GiST with 0.2's fetch function): $scan; the cursor returned $rows rows (25 are visible); page 0 after the VACUUM: $after"
}

# =============================================================================
# 5. An index-only scan that reads a run a merge retired, after a VACUUM
# =============================================================================
part5() {
	echo "# 5. an idle index-only scan, a merge that retires the runs it reads, a VACUUM"
	local q plan first rest nfirst nrest expected runs rc after blk i out
	q=$(psql_q -c "SELECT nd_center(9)")
	# Runs A (the build: 1,000 rows, row 1 of code q), B (50 rows of code
	# q), C (50 others) and the pending list (50 others); no compaction due.
	psql_q -c "CREATE TABLE t5 (id int, sh simhash64) WITH (autovacuum_enabled = off)" \
		-c "INSERT INTO t5 SELECT i, CASE WHEN i = 1 THEN '$q'::simhash64 ELSE hashint8extended(i, 9)::simhash64 END FROM generate_series(1, 1000) i" \
		-c "CREATE INDEX t5_ham ON t5 USING hamming (sh)" \
		-c "INSERT INTO t5 SELECT i, '$q' FROM generate_series(2001, 2050) i" \
		-c "SELECT hamming_merge('t5_ham')" \
		-c "INSERT INTO t5 SELECT i, hashint8extended(i, 9)::simhash64 FROM generate_series(3001, 3050) i" \
		-c "SELECT hamming_merge('t5_ham')" \
		-c "INSERT INTO t5 SELECT i, hashint8extended(i, 9)::simhash64 FROM generate_series(4001, 4050) i" \
		-c "VACUUM ANALYZE t5" \
		-c "DELETE FROM t5 WHERE id BETWEEN 2001 AND 2050 AND id % 2 = 1" >/dev/null
	blk=$(psql_q -c "SELECT DISTINCT (ctid::text::point)[0]::int FROM t5 WHERE id BETWEEN 2001 AND 2050")
	echo "# t5: $(psql_q -c "SELECT count(*) || ' runs: ' || string_agg(entries::text, ' ' ORDER BY run) FROM hamming_runs('t5_ham')"); B's rows on heap page(s) $blk"
	c_open
	decl="DECLARE c CURSOR FOR SELECT sh FROM t5 WHERE sh <~> '$q' <= 3"
	plan=$(c_run "BEGIN ISOLATION LEVEL REPEATABLE READ; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; EXPLAIN (COSTS OFF) $decl;")
	ok $(grep -q "Index Only Scan using t5_ham on t5" <<<"$plan" && echo 0 || echo 1) \
		"setup: the cursor's query is an index-only scan of t5_ham"
	# FETCH 1: the lists and run A are read, row 1 returned; run B not yet.
	first=$(c_run "$decl; FETCH 1 FROM c;")
	# A flush and a compaction: runs A to D become one; then a VACUUM
	# removes the deleted rows' entries from it (not from the retired B,
	# which the cursor still reads), frees their slots and marks the page
	# all-visible, while the cursor stays open.
	psql_q -c "SELECT hamming_merge('t5_ham')" >/dev/null
	runs=$(psql_q -c "SELECT count(*) FROM hamming_runs('t5_ham')")
	# (in the background: should it wait for the cursor, as 0.3's did, it
	# is cancelled and the setup check below fails)
	rm -f "$work/v5.rc"
	(
		rc=0
		PGAPPNAME=nd_vacuum5 psql -X -q -v ON_ERROR_STOP=1 -c "VACUUM (INDEX_CLEANUP ON) t5" >/dev/null 2>&1 || rc=$?
		echo "$rc" >"$work/v5.rc"
	) &
	bg+=("$!")
	for ((i = 0; i < 600; i++)); do
		[ -e "$work/v5.rc" ] && break
		if [ -n "$(psql -X -At -c "SELECT 1 FROM pg_stat_activity WHERE application_name = 'nd_vacuum5' AND wait_event_type = 'BufferPin'")" ]; then
			echo "# the VACUUM waits for the cursor (BufferPin): cancelled"
			psql_q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'nd_vacuum5'" >/dev/null
		fi
		sleep 0.1
	done
	wait "$!" 2>/dev/null || true
	rc=$(cat "$work/v5.rc" 2>/dev/null || echo none)
	after=$(psql_q -c "SELECT count(*) FILTER (WHERE lp_flags = 0) || ' unused, all-visible: ' || ((SELECT flags & 4 FROM page_header(get_raw_page('t5', $blk))) <> 0)
	                   FROM heap_page_items(get_raw_page('t5', $blk))")
	echo "# after hamming_merge: $runs run(s); VACUUM exit $rc; heap page $blk: $after"
	ok $([ "$runs" = 1 ] && [ "$rc" = 0 ] && [ "$after" = "25 unused, all-visible: true" ] && echo 0 || echo 1) \
		"setup: the runs the cursor reads were merged into one, and a VACUUM freed the 25 deleted rows' slots and marked their page all-visible while the cursor was open ($runs run(s), VACUUM exit $rc, $after)"
	rest=$(c_run "FETCH ALL FROM c;")
	expected=$(c_run "SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_seqscan = on; SELECT count(*) FROM t5 WHERE sh <~> '$q' <= 3;")
	c_run "COMMIT;" >/dev/null
	c_close
	nrest=$(grep -c . <<<"$rest" || true)
	nfirst=$(grep -c . <<<"$first" || true)
	echo "# the cursor: $nfirst + $nrest rows; a sequential scan in its transaction: $expected"
	ok $([ "$((nfirst + nrest))" = "$expected" ] && echo 0 || echo 1) \
		"the cursor returns the rows its snapshot sees ($nfirst + $nrest, the sequential scan $expected), not the ones VACUUM removed from the merged run"
	out=$(nd_ham_check t5_ham)
	ok $([ "$out" = passed ] && echo 0 || echo 1) "t5_ham: hamming_check passes ($(cut -c1-300 <<<"$out"))"
	psql_q -c "DROP TABLE t5"
}

# ND_RACES_PARTS: which parts to run (all by default).
for part in ${ND_RACES_PARTS:-1 2 3 4 5}; do
	SECONDS=0
	"part$part"
	echo "# part $part: $SECONDS s"
done
echo "1..$n"
SCRIPT
