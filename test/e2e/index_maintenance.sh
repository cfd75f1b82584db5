#!/usr/bin/env bash
# End-to-end: maintenance of GiST, GIN and hamming indexes of simhash64.
#
# A table with the three indexes (100,000 rows of nd_row_code(): planted
# near-duplicates, exact duplicates, all-zero/all-one codes, NULLs, random
# codes).  After each of
#   - DELETE of a third of the rows and of every row in a slice of the code
#     space (so that whole GiST leaf pages empty), VACUUM, then new rows
#     (through GIN's pending list into its vacuumed entry tree),
#   - REINDEX INDEX,
#   - REINDEX INDEX CONCURRENTLY while another session inserts, deletes and
#     updates,
#   - DROP INDEX + CREATE INDEX CONCURRENTLY, with that writer again,
# every query code and radius returns through each index exactly what a
# sequential scan returns, and KNN the brute-force distances (nd_check in
# lib/index_check.sql), and hamming_check() finds the hamming index sound
# and holding every row; also for a GiST buffering build, GIN with 2 and 16
# blocks, hamming with 3 and 8, skewed data, radii -1 and 64, and lossy
# bitmaps (64 kB work_mem).  A control first shows that nd_check and
# hamming_check do catch an index that misses rows.  Last,
# pg_stat_progress_create_index, polled from another session, shows CREATE
# INDEX and CREATE INDEX CONCURRENTLY (GiST, GIN, hamming) building on a
# 300,000-row table.
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
work=$(mktemp -d /tmp/nd-maint.XXXXXX)
ND_WRITER=
trap '[ -n "$ND_WRITER" ] && touch "$work/stop" && wait "$ND_WRITER"; rm -rf "$work"' EXIT
N=100000

nd_setup_db
psql_q -c "CREATE EXTENSION pgstattuple"

# --- 0. the control: an index that misses rows is caught -------------------
# indisready = false: inserts skip the index, which scans still use.
psql_q -c "CREATE TABLE ctl (id bigint PRIMARY KEY, sh simhash64)" \
	-c "INSERT INTO ctl SELECT i, nd_row_code(i) FROM generate_series(1, 20000) i" \
	-c "CREATE INDEX ctl_gist ON ctl USING gist (sh)" \
	-c "CREATE INDEX ctl_gin ON ctl USING gin (sh) WITH (fastupdate = off)" \
	-c "CREATE INDEX ctl_ham ON ctl USING hamming (sh)" \
	-c "UPDATE pg_index SET indisready = false WHERE indexrelid IN ('ctl_gist'::regclass, 'ctl_gin'::regclass, 'ctl_ham'::regclass)"
psql_q -c "INSERT INTO ctl SELECT i, nd_row_code(i) FROM generate_series(20001, 30000) i"
psql_q -c "UPDATE pg_index SET indisready = true WHERE indexrelid IN ('ctl_gist'::regclass, 'ctl_gin'::regclass, 'ctl_ham'::regclass)"
nd_check_fails "control: nd_check reports the rows a GiST index misses" ctl ctl_gist "ctl_gin, ctl_ham"
nd_check_fails "control: nd_check reports the rows a GIN index misses" ctl ctl_gin "ctl_gist, ctl_ham"
nd_check_fails "control: nd_check reports the rows a hamming index misses" ctl ctl_ham "ctl_gist, ctl_gin"
out=$(nd_ham_check ctl_ham)
echo "# $out" | cut -c1-200
ok $([[ $out == *"lacks its entry in index \"ctl_ham\""* ]] && echo 0 || echo 1) \
	"control: hamming_check (heapallindexed) reports a row the hamming index misses"
psql_q -c "DROP TABLE ctl"

# --- the table --------------------------------------------------------------------
psql_q -c "CREATE TABLE m (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off)" \
	-c "INSERT INTO m SELECT i, nd_row_code(i) FROM generate_series(1, $N) i" \
	-c "CREATE INDEX m_gist ON m USING gist (sh)" \
	-c "CREATE INDEX m_gin ON m USING gin (sh) WITH (gin_pending_list_limit = 256)" \
	-c "CREATE INDEX m_ham ON m USING hamming (sh) WITH (pending_limit = 256)" \
	-c "VACUUM ANALYZE m"

both() {
	local out
	nd_check_ok "$1: GiST index scans = sequential scan (radius, =, KNN)" m m_gist "m_gin, m_ham"
	nd_check_ok "$1: GIN index scans = sequential scan (radius, =)" m m_gin "m_gist, m_ham"
	nd_check_ok "$1: hamming index scans = sequential scan (radius, =, KNN)" m m_ham "m_gist, m_gin"
	out=$(nd_ham_check m_ham)
	ok $([ "$out" = passed ] && echo 0 || echo 1) "$1: hamming_check passes ($out)"
}
sizes() {
	psql_q -c "SELECT 'm_gist ' || pg_relation_size('m_gist') / 8192 || ' pages, m_gin ' ||
	                  pg_relation_size('m_gin') / 8192 || ' pages, m_ham ' ||
	                  pg_relation_size('m_ham') / 8192 || ' pages, ' || count(*) || ' rows' FROM m"
}

# --- 1. DELETE + VACUUM ------------------------------------------------------------
psql_q -c "DELETE FROM m WHERE id % 3 = 0" \
	-c "DELETE FROM m WHERE sh::bigint BETWEEN 0 AND (1::bigint << 59)" \
	-c "VACUUM m"
echo "# after DELETE + VACUUM: $(sizes)"
both "DELETE + VACUUM"
psql_q -c "INSERT INTO m SELECT i, nd_row_code(i) FROM generate_series($N + 1, $N + 20000) i"
echo "# after 20000 more rows: $(sizes)"
# m_gin's pending list limit (256 kB, not the default 4 MB) makes these
# rows flush from the pending list into the vacuumed entry tree, some
# times over, and leaves a pending list that the scans below read too
# (each scan reads the whole list: with all 20,000 rows in it, GIN's
# check took minutes).
pending=$(psql_q -c "SELECT pending_pages || ' pages, ' || pending_tuples || ' tuples' FROM pgstatginindex('m_gin')")
ok $([[ $pending != "0 pages, 0 tuples" ]] && echo 0 || echo 1) \
	"DELETE + VACUUM + INSERT: m_gin has a pending list for the scans to read ($pending)"
both "DELETE + VACUUM + INSERT"

# --- 2. REINDEX --------------------------------------------------------------------
psql_q -c "REINDEX INDEX m_gist" -c "REINDEX INDEX m_gin" -c "REINDEX INDEX m_ham"
echo "# after REINDEX: $(sizes)"
both "REINDEX"

# wait_batches K: until the background writer has committed K batches.
wait_batches() {
	local i
	for ((i = 0; i < 3000; i++)); do
		[ "$(cat "$work/batches" 2>/dev/null || echo 0)" -ge "$1" ] && return 0
		nd_alive "$ND_WRITER" || return 1
		sleep 0.05
	done
	return 1
}
# valid_indexes: both indexes valid and ready, and nothing left over.
valid_indexes() {
	psql_q -c "SELECT string_agg(c.relname || CASE WHEN i.indisvalid AND i.indisready THEN '' ELSE ' (INVALID)' END, ', ' ORDER BY c.relname)
	           FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'm'::regclass"
}

# --- 3. REINDEX CONCURRENTLY, with a writer ---------------------------------------
first=$(psql_q -c "SELECT max(id) + 1 FROM m")
nd_start_writer m "$first"
wait_batches 2 || echo "# the writer does not progress"
psql_q -c "REINDEX INDEX CONCURRENTLY m_gist" -c "REINDEX INDEX CONCURRENTLY m_gin" \
	-c "REINDEX INDEX CONCURRENTLY m_ham"
nd_stop_writer
ND_WRITER=
echo "# the writer committed $(cat "$work/batches") batches; $(sizes)"
v=$(valid_indexes)
echo "# indexes: $v"
ok $([ "$v" = "m_gin, m_gist, m_ham, m_pkey" ] && echo 0 || echo 1) "REINDEX CONCURRENTLY: indexes valid, no _ccnew/_ccold left"
both "REINDEX CONCURRENTLY with concurrent writes"

# --- 4. CREATE INDEX CONCURRENTLY, with a writer ----------------------------------
psql_q -c "DROP INDEX m_gist" -c "DROP INDEX m_gin" -c "DROP INDEX m_ham"
first=$(psql_q -c "SELECT max(id) + 1 FROM m")
nd_start_writer m "$first"
wait_batches 2 || echo "# the writer does not progress"
psql_q -c "CREATE INDEX CONCURRENTLY m_gist ON m USING gist (sh)" \
	-c "CREATE INDEX CONCURRENTLY m_gin ON m USING gin (sh) WITH (gin_pending_list_limit = 256)" \
	-c "CREATE INDEX CONCURRENTLY m_ham ON m USING hamming (sh) WITH (pending_limit = 256)"
nd_stop_writer
ND_WRITER=
echo "# the writer committed $(cat "$work/batches") batches; $(sizes)"
v=$(valid_indexes)
echo "# indexes: $v"
ok $([ "$v" = "m_gin, m_gist, m_ham, m_pkey" ] && echo 0 || echo 1) "CREATE INDEX CONCURRENTLY: indexes valid"
both "CREATE INDEX CONCURRENTLY with concurrent writes"
psql_q -c "DROP TABLE m"

# --- 5. build variants and skewed data ------------------------------------------
# GiST built by insertion with buffering (not the sorted build), GIN with
# 2 and 16 blocks (the opclass option's extremes), on a table where 60 % of
# the rows share one code, 20 % are all-zero and the rest lie within 6 bits
# of the shared code or are NULL (long posting lists, GiST pages full of
# identical keys to split).
psql_q -c "CREATE TABLE v (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off)" \
	-c "INSERT INTO v SELECT i, CASE WHEN i % 10 < 6 THEN nd_center(0) WHEN i % 10 < 8 THEN 0::bigint::simhash64
	                                 WHEN i % 10 = 8 THEN nd_flip(nd_center(0), (i % 7)::int, (i % 64)::int) END
	    FROM generate_series(1, 40000) i" \
	-c "CREATE INDEX v_gist ON v USING gist (sh) WITH (buffering = on)" \
	-c "CREATE INDEX v_gin2 ON v USING gin (sh simhash64_gin_ops (blocks = 2))" \
	-c "CREATE INDEX v_gin16 ON v USING gin (sh simhash64_gin_ops (blocks = 16))" \
	-c "CREATE INDEX v_ham3 ON v USING hamming (sh) WITH (blocks = 3)" \
	-c "CREATE INDEX v_ham8 ON v USING hamming (sh) WITH (blocks = 8)" \
	-c "INSERT INTO v SELECT i, nd_row_code(i) FROM generate_series(40001, 60000) i" \
	-c "VACUUM ANALYZE v"
vcodes="nd_query_codes() || ARRAY[nd_flip(nd_center(0), 2, 3), nd_flip(nd_center(0), 6, 11)]"
vradii="{-1,0,1,2,3,5,6,8,13,64}"
nd_check_ok "skewed data: GiST (buffering build) index scans = sequential scan" v v_gist "v_gin2, v_gin16, v_ham3, v_ham8" "$vcodes" "$vradii"
nd_check_ok "skewed data: GIN (blocks = 2) index scans = sequential scan" v v_gin2 "v_gist, v_gin16, v_ham3, v_ham8" "$vcodes" "$vradii"
nd_check_ok "skewed data: GIN (blocks = 16) index scans = sequential scan" v v_gin16 "v_gist, v_gin2, v_ham3, v_ham8" "$vcodes" "$vradii"
nd_check_ok "skewed data: hamming (blocks = 3) index scans = sequential scan" v v_ham3 "v_gist, v_gin2, v_gin16, v_ham8" "$vcodes" "$vradii"
nd_check_ok "skewed data: hamming (blocks = 8) index scans = sequential scan" v v_ham8 "v_gist, v_gin2, v_gin16, v_ham3" "$vcodes" "$vradii"
psql_q -c "DROP TABLE v"

# Lossy bitmaps: with 64 kB of work_mem, bitmaps over a table spread thin
# (fillfactor 10) lose page detail, so a wide radius makes the heap scan
# recheck whole pages, and GIN's own TID bitmaps of partial matches go
# lossy too.
psql_q -c "CREATE TABLE w (id bigint PRIMARY KEY, sh simhash64) WITH (fillfactor = 10, autovacuum_enabled = off)" \
	-c "INSERT INTO w SELECT i, nd_row_code(i) FROM generate_series(1, 60000) i" \
	-c "CREATE INDEX w_gist ON w USING gist (sh)" \
	-c "CREATE INDEX w_gin ON w USING gin (sh) WITH (fastupdate = off)" \
	-c "CREATE INDEX w_ham ON w USING hamming (sh)" \
	-c "VACUUM ANALYZE w"
lossy=$(PGOPTIONS="-c work_mem=64kB" psql_q -c "BEGIN" -c "DROP INDEX w_gist" -c "DROP INDEX w_ham" -c "SET LOCAL enable_seqscan = off" \
	-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT count(*) FROM w WHERE sh <~> '0000000000000000' <= 30" \
	-c "ROLLBACK" | grep -o 'Heap Blocks:.*' || true)
echo "# GIN, radius 30 around the all-zero code, work_mem 64kB: $lossy"
ok $([[ $lossy == *lossy=[1-9]* ]] && echo 0 || echo 1) "small work_mem: the bitmap heap scan is lossy (the check below covers rechecks)"
PGOPTIONS="-c work_mem=64kB" nd_check_ok "lossy bitmaps: GiST index scans = sequential scan" w w_gist "w_gin, w_ham" \
	"nd_query_codes()" "{0,2,5,13,30,64}"
PGOPTIONS="-c work_mem=64kB" nd_check_ok "lossy bitmaps: GIN index scans = sequential scan" w w_gin "w_gist, w_ham" \
	"nd_query_codes()" "{0,2,5,13,30,64}"
PGOPTIONS="-c work_mem=64kB" nd_check_ok "lossy bitmaps: hamming index scans = sequential scan" w w_ham "w_gist, w_gin" \
	"nd_query_codes()" "{0,2,5,13,30,64}"
psql_q -c "DROP TABLE w"

# --- 6. progress reporting --------------------------------------------------------
# nd_poll_progress(table): polls pg_stat_progress_create_index (a fresh
# snapshot of it each time) until a build on the table has been seen and
# is gone, or the table nd_build_done says the build is over without it
# having been seen; returns what it saw.  A procedure that commits after
# each poll: a long-running poller would hold back the xmin horizon, and
# CREATE INDEX CONCURRENTLY waits for that ("waiting for old snapshots").
psql_q <<'EOF'
CREATE TABLE nd_build_done (done bool);
CREATE PROCEDURE nd_poll_progress(tbl regclass,
                                  INOUT polls int DEFAULT 0, INOUT seen int DEFAULT 0,
                                  INOUT commands text DEFAULT '', INOUT phases text DEFAULT '',
                                  INOUT index_relids text DEFAULT '', INOUT max_blocks_done bigint DEFAULT 0,
                                  INOUT blocks_total bigint DEFAULT 0)
LANGUAGE plpgsql AS $$
DECLARE
    p record;
    last_phase text := '';
BEGIN
    -- 120000 polls: only against a hang; a build is over long before.
    WHILE polls < 120000 LOOP
        polls := polls + 1;
        PERFORM pg_stat_clear_snapshot();
        SELECT * INTO p FROM pg_stat_progress_create_index WHERE relid = tbl;
        IF FOUND THEN
            seen := seen + 1;
            IF position(p.command IN commands) = 0 THEN
                commands := commands || CASE WHEN commands = '' THEN '' ELSE ', ' END || p.command;
            END IF;
            IF p.phase <> last_phase THEN
                phases := phases || CASE WHEN phases = '' THEN '' ELSE ' > ' END || p.phase;
                last_phase := p.phase;
            END IF;
            IF position(p.index_relid::text IN index_relids) = 0 THEN
                index_relids := index_relids || CASE WHEN index_relids = '' THEN '' ELSE ',' END || p.index_relid;
            END IF;
            max_blocks_done := greatest(max_blocks_done, p.blocks_done);
            blocks_total := greatest(blocks_total, p.blocks_total);
        ELSIF seen > 0 OR EXISTS (SELECT 1 FROM nd_build_done) THEN
            EXIT;
        END IF;
        COMMIT;
        PERFORM pg_sleep(0.002);
        COMMIT;
    END LOOP;
END $$;
CREATE TABLE p (id bigint, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO p SELECT i, nd_row_code(i) FROM generate_series(1, 300000) i;
VACUUM ANALYZE p;
EOF
relpages=$(psql_q -c "SELECT relpages FROM pg_class WHERE relname = 'p'")

# progress LABEL COMMAND_EXPECTED SQL: run SQL while polling; one TAP line.
progress() {
	local label=$1 want=$2 sql=$3 out poller i idx
	psql_q -c "TRUNCATE nd_build_done"
	psql_q -c "CALL nd_poll_progress('p')" >"$work/poll.out" &
	poller=$!
	nd_wait_for "EXISTS (SELECT 1 FROM pg_stat_activity WHERE query LIKE 'CALL nd_poll_progress%' AND wait_event = 'PgSleep')" ||
		echo "# the poller did not start"
	psql_q -c "SET maintenance_work_mem = '1MB'" -c "$sql"
	psql_q -c "INSERT INTO nd_build_done VALUES (true)"
	wait "$poller" || true
	out=$(cat "$work/poll.out")
	IFS='|' read -r polls seen commands phases relids bdone btotal <<<"$out"
	idx=$(psql_q -c "SELECT oid FROM pg_class WHERE relname = '$4'")
	echo "# $label: $polls polls, $seen saw the build: command '$commands', phases: $phases; index_relid $relids (the index: $idx); blocks $bdone of $btotal (table: $relpages pages)"
	# A plain CREATE INDEX reports index_relid 0 (the documented behaviour);
	# CONCURRENTLY reports the new index (0 while still initializing).
	if [ "$want" = "CREATE INDEX CONCURRENTLY" ]; then want_relid="(0,)?$idx"; else want_relid=0; fi
	ok $([ "${seen:-0}" -gt 0 ] && [ "$commands" = "$want" ] && [[ $phases == *"building index"* ]] &&
		[[ $relids =~ ^$want_relid$ ]] && [ "$btotal" = "$relpages" ] && [ "$bdone" -gt 0 ] && echo 0 || echo 1) \
		"$label: pg_stat_progress_create_index showed the build ($want, building index, table blocks)"
}
progress "GiST CREATE INDEX" "CREATE INDEX" "CREATE INDEX p_gist ON p USING gist (sh)" p_gist
progress "GIN CREATE INDEX" "CREATE INDEX" "CREATE INDEX p_gin ON p USING gin (sh)" p_gin
progress "hamming CREATE INDEX" "CREATE INDEX" "CREATE INDEX p_ham ON p USING hamming (sh)" p_ham
psql_q -c "DROP INDEX p_gist" -c "DROP INDEX p_gin" -c "DROP INDEX p_ham"
progress "GiST CREATE INDEX CONCURRENTLY" "CREATE INDEX CONCURRENTLY" "CREATE INDEX CONCURRENTLY p_gist ON p USING gist (sh)" p_gist
progress "GIN CREATE INDEX CONCURRENTLY" "CREATE INDEX CONCURRENTLY" "CREATE INDEX CONCURRENTLY p_gin ON p USING gin (sh)" p_gin
progress "hamming CREATE INDEX CONCURRENTLY" "CREATE INDEX CONCURRENTLY" "CREATE INDEX CONCURRENTLY p_ham ON p USING hamming (sh)" p_ham
echo "1..$n"
SCRIPT
