#!/usr/bin/env bash
# End-to-end: GiST, GIN and hamming indexes of simhash64 under concurrent
# writers and readers.
#
# Four tables with the same rows, cg (GiST), cn (GIN, fastupdate with the
# smallest pending list, so that inserting backends flush it into the entry
# tree all the time), ch (hamming, a 64kB pending list, so that inserting
# backends and VACUUM merge it into a new run again and again while scans
# read the old one) and co (the same with a hamming index of one table,
# WITH (only_block = 2), whose radius and KNN searches step through one
# table's block values or pass over it, and whose block balls of block 2
# read one block value), 50,000 rows to start with.  pgbench, 4 clients on
# 2 threads, a fixed number of transactions (-t, not -T), once with literals
# (-M simple) and once with generic plans of prepared statements (-M prepared,
# plan_cache_mode = force_generic_plan), runs a mix of
#   - inserts of 1..40 rows (planted near-duplicates, exact duplicates,
#     all-zero/all-one codes, NULLs and random codes: nd_row_code()),
#   - updates that move a few rows by one bit, deletes of id ranges,
#   - checks: in one REPEATABLE READ transaction, a radius query through the
#     index (and for GiST and hamming a KNN query, for co a block ball) and the same question answered by a
#     sequential scan with bit_count() (the query code computed once, in an
#     InitPlan, also in generic plans); both answers are logged to a table
#     and compared afterwards (same snapshot, so they must be equal),
# while another session VACUUMs the tables in a loop.  Then: pgbench
# reports no failed transaction, every logged pair agrees, nd_check()
# (lib/index_check.sql) finds each index equal to a sequential scan, and
# hamming_check() finds the hamming index sound.
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
work=$(mktemp -d /tmp/nd-conc.XXXXXX)
chmod 755 "$work"
vacuumer=
trap '[ -n "$vacuumer" ] && kill "$vacuumer" 2>/dev/null; rm -rf "$work"' EXIT
PGBENCH=/usr/lib/postgresql/15/bin/pgbench
TX=${ND_CONC_TX:-600}   # transactions per client and run

nd_setup_db
psql_q -c "CREATE EXTENSION pageinspect"
psql_q -c "CREATE TABLE cg (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off)" \
	-c "CREATE TABLE cn (LIKE cg INCLUDING ALL) WITH (autovacuum_enabled = off)" \
	-c "CREATE TABLE ch (LIKE cg INCLUDING ALL) WITH (autovacuum_enabled = off)" \
	-c "INSERT INTO cg SELECT i, nd_row_code(i) FROM generate_series(1, 50000) i" \
	-c "INSERT INTO cn SELECT * FROM cg" \
	-c "CREATE TABLE co (LIKE cg INCLUDING ALL) WITH (autovacuum_enabled = off)" \
	-c "INSERT INTO ch SELECT * FROM cg" \
	-c "INSERT INTO co SELECT * FROM cg" \
	-c "CREATE INDEX ch_ham ON ch USING hamming (sh) WITH (pending_limit = 64)" \
	-c "CREATE INDEX co_one ON co USING hamming (sh) WITH (pending_limit = 64, blocks = 4, only_block = 2)" \
	-c "CREATE INDEX cg_gist ON cg USING gist (sh)" \
	-c "CREATE INDEX cn_gin ON cn USING gin (sh) WITH (fastupdate = on, gin_pending_list_limit = 64)" \
	-c "CREATE SEQUENCE ids START 50001" \
	-c "CREATE TABLE obs (tx bigint, kind text, path text, v text)" \
	-c "ANALYZE cg, cn, ch, co"

# --- the pgbench scripts ------------------------------------------------------
cat >"$work/insert.sql" <<'EOF'
\set k random(1, 40)
WITH n AS MATERIALIZED (SELECT nextval('ids') AS id FROM generate_series(1, :k)),
     g AS (INSERT INTO cg SELECT id, nd_row_code(id) FROM n),
     h AS (INSERT INTO ch SELECT id, nd_row_code(id) FROM n),
     o AS (INSERT INTO co SELECT id, nd_row_code(id) FROM n)
INSERT INTO cn SELECT id, nd_row_code(id) FROM n;
EOF
cat >"$work/update.sql" <<'EOF'
\set d random(1, 50000)
\set b random(0, 63)
BEGIN;
UPDATE cg SET sh = nd_flip(sh, 1, :b) WHERE id BETWEEN :d AND :d + 3;
UPDATE cn SET sh = nd_flip(sh, 1, :b) WHERE id BETWEEN :d AND :d + 3;
UPDATE ch SET sh = nd_flip(sh, 1, :b) WHERE id BETWEEN :d AND :d + 3;
UPDATE co SET sh = nd_flip(sh, 1, :b) WHERE id BETWEEN :d AND :d + 3;
COMMIT;
EOF
cat >"$work/delete.sql" <<'EOF'
\set d random(1, 60000)
BEGIN;
DELETE FROM cg WHERE id BETWEEN :d AND :d + 30;
DELETE FROM cn WHERE id BETWEEN :d AND :d + 30;
DELETE FROM ch WHERE id BETWEEN :d AND :d + 30;
DELETE FROM co WHERE id BETWEEN :d AND :d + 30;
COMMIT;
EOF
# Query codes: a cluster center moved by 0..6 bits (what the planted rows
# are near), or the code of some row.
# knn_check_script TABLE KIND [BLOCK]: the check of an index that answers
# radius and KNN queries (GiST, hamming) on TABLE, logged as 'KIND radius'
# and 'KIND knn'; with BLOCK, also block balls of that block of 4, logged as
# 'KIND block'.
knn_check_script() {
	local t=$1 kind=$2 blk=${3:-}
	local bi= bs=
	if [ -n "$blk" ]; then
		bi="INSERT INTO obs SELECT txid_current(), '$kind block', 'index', coalesce(array_agg(id ORDER BY id), '{}')::text
    FROM $t WHERE sh <@ hamming_block_ball(nd_flip(nd_center(:c), :k, :s), :r, $blk, 4);"
		bs="INSERT INTO obs SELECT txid_current(), '$kind block', 'seq', coalesce(array_agg(id ORDER BY id), '{}')::text
    FROM $t WHERE bit_count((sh::bigint # (SELECT nd_flip(nd_center(:c), :k, :s))::bigint)::bit(64)) <= :r
      AND simhash_block(sh, $blk, 4) = (SELECT simhash_block(nd_flip(nd_center(:c), :k, :s), $blk, 4));"
	fi
	cat <<EOF
\set c random(0, 199)
\set k random(0, 6)
\set s random(0, 63)
\set r random(0, 8)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
INSERT INTO obs SELECT txid_current(), '$kind radius', 'index', coalesce(array_agg(id ORDER BY id), '{}')::text
    FROM $t WHERE sh <~> nd_flip(nd_center(:c), :k, :s) <= :r;
INSERT INTO obs SELECT txid_current(), '$kind knn', 'index', array_agg(d)::text
    FROM (SELECT sh <~> nd_flip(nd_center(:c), :k, :s) AS d FROM $t ORDER BY sh <~> nd_flip(nd_center(:c), :k, :s) LIMIT 12) s;
$bi
SET LOCAL enable_seqscan = on;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_indexonlyscan = off;
INSERT INTO obs SELECT txid_current(), '$kind radius', 'seq', coalesce(array_agg(id ORDER BY id), '{}')::text
    FROM $t WHERE bit_count((sh::bigint # (SELECT nd_flip(nd_center(:c), :k, :s))::bigint)::bit(64)) <= :r;
INSERT INTO obs SELECT txid_current(), '$kind knn', 'seq', array_agg(d ORDER BY d)::text
    FROM (SELECT bit_count((sh::bigint # (SELECT nd_flip(nd_center(:c), :k, :s))::bigint)::bit(64))::int AS d
          FROM $t WHERE sh IS NOT NULL ORDER BY 1 LIMIT 12) s;
$bs
COMMIT;
EOF
}
knn_check_script cg gist >"$work/check_gist.sql"
knn_check_script ch ham >"$work/check_ham.sql"
knn_check_script co one 2 >"$work/check_one.sql"
cat >"$work/check_gin.sql" <<'EOF'
\set c random(0, 199)
\set k random(0, 6)
\set s random(0, 63)
\set r random(0, 8)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
INSERT INTO obs SELECT txid_current(), 'gin radius', 'index', coalesce(array_agg(id ORDER BY id), '{}')::text
    FROM cn WHERE sh <~> nd_flip(nd_center(:c), :k, :s) <= :r;
SET LOCAL enable_seqscan = on;
SET LOCAL enable_bitmapscan = off;
INSERT INTO obs SELECT txid_current(), 'gin radius', 'seq', coalesce(array_agg(id ORDER BY id), '{}')::text
    FROM cn WHERE bit_count((sh::bigint # (SELECT nd_flip(nd_center(:c), :k, :s))::bigint)::bit(64)) <= :r;
COMMIT;
EOF

# The check scripts' index queries use the index paths (same settings, same
# shape), with literals (pgbench -M simple) and as generic plans of
# prepared statements (-M prepared, plan_cache_mode = force_generic_plan).
# generic_plans TABLE: the radius and KNN queries of TABLE's check script
# as prepared statements, and the EXPLAIN of their generic plans.
generic_plans() {
	cat <<EOF
PREPARE ${1}_r(int, int, int, int) AS INSERT INTO obs SELECT 1, 'x', 'x', array_agg(id)::text
    FROM $1 WHERE sh <~> nd_flip(nd_center(\$1), \$2, \$3) <= \$4;
EXPLAIN (COSTS OFF) EXECUTE ${1}_r(7, 3, 5, 4);
PREPARE ${1}_k(int, int, int) AS INSERT INTO obs SELECT 1, 'x', 'x', array_agg(d)::text
    FROM (SELECT sh <~> nd_flip(nd_center(\$1), \$2, \$3) AS d FROM $1 ORDER BY sh <~> nd_flip(nd_center(\$1), \$2, \$3) LIMIT 12) s;
EXPLAIN (COSTS OFF) EXECUTE ${1}_k(7, 3, 5);
EOF
}
plans=$(psql_q <<EOF
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
EXPLAIN (COSTS OFF) INSERT INTO obs SELECT 1, 'x', 'x', array_agg(id)::text
    FROM cg WHERE sh <~> nd_flip(nd_center(7), 3, 5) <= 4;
EXPLAIN (COSTS OFF) INSERT INTO obs SELECT 1, 'x', 'x', array_agg(d)::text
    FROM (SELECT sh <~> nd_flip(nd_center(7), 3, 5) AS d FROM cg ORDER BY sh <~> nd_flip(nd_center(7), 3, 5) LIMIT 12) s;
EXPLAIN (COSTS OFF) INSERT INTO obs SELECT 1, 'x', 'x', array_agg(id)::text
    FROM ch WHERE sh <~> nd_flip(nd_center(7), 3, 5) <= 4;
EXPLAIN (COSTS OFF) INSERT INTO obs SELECT 1, 'x', 'x', array_agg(d)::text
    FROM (SELECT sh <~> nd_flip(nd_center(7), 3, 5) AS d FROM ch ORDER BY sh <~> nd_flip(nd_center(7), 3, 5) LIMIT 12) s;
EXPLAIN (COSTS OFF) INSERT INTO obs SELECT 1, 'x', 'x', array_agg(id)::text
    FROM co WHERE sh <~> nd_flip(nd_center(7), 3, 5) <= 4;
EXPLAIN (COSTS OFF) INSERT INTO obs SELECT 1, 'x', 'x', array_agg(d)::text
    FROM (SELECT sh <~> nd_flip(nd_center(7), 3, 5) AS d FROM co ORDER BY sh <~> nd_flip(nd_center(7), 3, 5) LIMIT 12) s;
EXPLAIN (COSTS OFF) INSERT INTO obs SELECT 1, 'x', 'x', array_agg(id)::text
    FROM co WHERE sh <@ hamming_block_ball(nd_flip(nd_center(7), 3, 5), 4, 2, 4);
SET LOCAL enable_bitmapscan = on;
EXPLAIN (COSTS OFF) INSERT INTO obs SELECT 1, 'x', 'x', array_agg(id)::text
    FROM cn WHERE sh <~> nd_flip(nd_center(7), 3, 5) <= 4;
ROLLBACK;
BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
$(generic_plans cg)
$(generic_plans ch)
$(generic_plans co)
PREPARE o3(int, int, int, int) AS INSERT INTO obs SELECT 1, 'x', 'x', array_agg(id)::text
    FROM co WHERE sh <@ hamming_block_ball(nd_flip(nd_center(\$1), \$2, \$3), \$4, 2, 4);
EXPLAIN (COSTS OFF) EXECUTE o3(7, 3, 5, 4);
SET LOCAL enable_bitmapscan = on;
PREPARE g3(int, int, int, int) AS INSERT INTO obs SELECT 1, 'x', 'x', array_agg(id)::text
    FROM cn WHERE sh <~> nd_flip(nd_center(\$1), \$2, \$3) <= \$4;
EXPLAIN (COSTS OFF) EXECUTE g3(7, 3, 5, 4);
ROLLBACK;
EOF
)
echo "$plans" | grep -E 'Scan' | sed 's/^ *->  /# /'
ok $([ "$(grep -cE '(Index Scan|Index Only Scan) using (cg_gist|ch_ham|co_one)|Bitmap Index Scan on cn_gin' <<<"$plans")" = 16 ] && echo 0 || echo 1) \
	"the check scripts' index queries use cg_gist, ch_ham, co_one (radius, KNN, co_one's block ball) and cn_gin, also as generic plans"

# --- the runs -----------------------------------------------------------------------
(
	while :; do
		psql -X -q -c "VACUUM cg" -c "VACUUM cn" -c "VACUUM ch" -c "VACUUM co" 2>/dev/null && echo >>"$work/vacuums"
		sleep 0.2
	done
) &
vacuumer=$!
# run MODE [PGOPTIONS]: pgbench, 4 clients, TX transactions each.
run() {
	local mode=$1 rc=0 processed failed
	PGOPTIONS=${2:-} $PGBENCH -n -M "$mode" -c 4 -j 2 -t "$TX" --random-seed=20240601 \
		-f "$work/insert.sql@5" -f "$work/update.sql@1" -f "$work/delete.sql@1" \
		-f "$work/check_gist.sql@2" -f "$work/check_gin.sql@2" -f "$work/check_ham.sql@2" \
		-f "$work/check_one.sql@2" \
		>"$work/pgbench.out" 2>&1 || rc=$?
	grep -E '^number of transactions actually processed|^number of failed transactions|^latency average|aborted|error|ERROR' "$work/pgbench.out" |
		sed 's/^/# /' | head -20
	processed=$(grep -o 'actually processed: [0-9]*/[0-9]*' "$work/pgbench.out" || true)
	failed=$(grep -o '^number of failed transactions: [0-9]*' "$work/pgbench.out" | grep -o '[0-9]*$' || true)
	ok $([ "$rc" = 0 ] && [ "$processed" = "actually processed: $((4 * TX))/$((4 * TX))" ] && [ "$failed" = 0 ] && echo 0 || echo 1) \
		"pgbench -M $mode${2:+ ($2)}: exit 0, all $((4 * TX)) transactions processed, none failed"
}
run simple
run prepared "-c plan_cache_mode=force_generic_plan"
kill "$vacuumer" 2>/dev/null || true
wait "$vacuumer" 2>/dev/null || true
vacuumer=
echo "# concurrent VACUUM rounds: $(wc -l <"$work/vacuums" 2>/dev/null || echo 0)"

# --- what the checks saw --------------------------------------------------------
# One index answer and one seq scan answer per transaction and kind.
res=$(psql_q -c "
	SELECT kind, count(*), count(*) FILTER (WHERE NOT agree), sum(n)
	FROM (SELECT tx, kind,
	             count(*) FILTER (WHERE path = 'index') = 1 AND count(*) FILTER (WHERE path = 'seq') = 1
	             AND min(v) FILTER (WHERE path = 'index') = min(v) FILTER (WHERE path = 'seq') AS agree,
	             max(cardinality(v::int[])) AS n
	      FROM obs GROUP BY tx, kind) s
	GROUP BY kind ORDER BY kind")
echo "$res" | sed 's/^/# kind|checks|disagreeing|values seen: /'
for kind in "gin radius" "gist knn" "gist radius" "ham knn" "ham radius" "one block" "one knn" "one radius"; do
	line=$(grep "^$kind|" <<<"$res" || true)
	IFS='|' read -r _ cnt bad _ <<<"$line"
	ok $([ -n "$line" ] && [ "$cnt" -gt 0 ] && [ "$bad" = 0 ] && echo 0 || echo 1) \
		"$kind under concurrent writes: index = sequential scan in the same snapshot (${cnt:-0} checks)"
done
psql_q -c "SELECT a.kind, a.v, b.v FROM obs a JOIN obs b USING (tx, kind)
           WHERE a.path = 'index' AND b.path = 'seq' AND a.v IS DISTINCT FROM b.v LIMIT 3" | sed 's/^/# disagreement: /'

echo "# rows now: cg $(psql_q -c 'SELECT count(*) FROM cg'), cn $(psql_q -c 'SELECT count(*) FROM cn'), ch $(psql_q -c 'SELECT count(*) FROM ch'), co $(psql_q -c 'SELECT count(*) FROM co')"
echo "# hamming merges since the build: $(psql_q -c "SELECT merges || ' (' || insert_merges || ' by inserting sessions, the rest by background workers, VACUUM and hamming_merge)' FROM hamming_stats('ch_ham')")"
nd_check_ok "GiST after the run: index scans = sequential scan" cg cg_gist
nd_check_ok "GIN after the run: index scans = sequential scan" cn cn_gin
nd_check_ok "hamming after the run: index scans = sequential scan" ch ch_ham
nd_check_ok "hamming of one table after the run: index scans = sequential scan" co co_one
for idx in ch_ham co_one; do
	out=$(nd_ham_check $idx)
	ok $([ "$out" = passed ] && echo 0 || echo 1) "$idx after the run: hamming_check passes ($out)"
done
psql_q -c "VACUUM cg" -c "VACUUM cn" -c "VACUUM ch" -c "VACUUM co"
nd_check_ok "GiST after VACUUM: index scans = sequential scan" cg cg_gist
nd_check_ok "GIN after VACUUM: index scans = sequential scan" cn cn_gin
nd_check_ok "hamming after VACUUM: index scans = sequential scan" ch ch_ham
nd_check_ok "hamming of one table after VACUUM: index scans = sequential scan" co co_one
echo "1..$n"
SCRIPT
