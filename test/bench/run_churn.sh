#!/usr/bin/env bash
# A hamming index's size under churn, against its fresh size in the same
# run, in a throwaway cluster:
#
# 1. steady churn: ROWS (default 1M) random codes, then ROUNDS (default 10)
#    rounds that each delete and insert PCT% (default 10) of the rows in
#    transactions of TX (default 10,000) rows, background merges on, and
#    end with a VACUUM (autovacuum off, so that the rounds are alike);
# 2. the bulk case: 84% of the rows deleted in one statement, VACUUM, as
#    many inserted again in one statement, then three VACUUMs, each after a
#    small write transaction (what any running system has).
#
# VACUUM runs as autovacuum does, without parallel workers: a parallel
# VACUUM (a table with two or more large btree indexes) does not truncate
# the index's free end.
#
# Each line: the index's pages, against the fresh index's; the pages of its
# runs; hamming_stats' unused pages (no run or list).  A btree index on the
# same column, same rows, is the baseline of what churn does to an index.
#
#   ROWS=1000000 ROUNDS=10 PCT=10 TX=10000 bash test/bench/run_churn.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB autovacuum=off"}
export ROWS=${ROWS:-1000000} ROUNDS=${ROUNDS:-10} PCT=${PCT:-10} TX=${TX:-10000}

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
code="('x' || md5('row ' || i))::bit(64)::bigint::simhash64"
q -c "CREATE EXTENSION neardup" -c "CREATE TABLE tick (n int)"

fresh_table() {
	q -c "DROP TABLE IF EXISTS c" -c "CREATE TABLE c (id bigint PRIMARY KEY, sh simhash64)" \
		-c "INSERT INTO c SELECT i, $code FROM generate_series(1, $ROWS) i" \
		-c "CREATE INDEX c_sh ON c USING hamming (sh)" -c "CREATE INDEX c_bt ON c (sh)" -c "VACUUM ANALYZE c"
	read -r fresh fresh_bt <<<"$(q -F' ' -c "SELECT pg_relation_size('c_sh') / 8192, pg_relation_size('c_bt') / 8192")"
}
report() {
	q -c "SELECT format('| %s | %s | %sx | %s | %s | %sx |', '$1',
	         pg_relation_size('c_sh') / 8192, round(pg_relation_size('c_sh') / 8192.0 / $fresh, 2),
	         (SELECT sum(pages) FROM hamming_runs('c_sh')), unused_pages,
	         round(pg_relation_size('c_bt') / 8192.0 / $fresh_bt, 2))
	      FROM hamming_stats('c_sh')"
}
header() {
	echo "| after | hamming pages | x fresh | run pages | unused pages | btree x fresh |"
	echo "|---|---|---|---|---|---|"
}

echo "# $ROWS rows; $ND_PG_OPTS; $(nproc) cores"
echo
fresh_table
echo "## steady churn: $ROUNDS rounds of $PCT% deleted and inserted, $TX rows a transaction, VACUUM after each"
echo "fresh: hamming $fresh pages, btree $fresh_bt pages"
echo
header
next=$((ROWS + 1))
per=$((ROWS * PCT / 100))
for ((r = 1; r <= ROUNDS; r++)); do
	for ((b = 0; b < per; b += TX)); do
		q -c "DELETE FROM c WHERE id IN (SELECT id FROM c TABLESAMPLE SYSTEM (5) REPEATABLE ($r$b) LIMIT $TX)"
		q -c "INSERT INTO c SELECT i, $code FROM generate_series($next, $((next + TX - 1))) i"
		next=$((next + TX))
	done
	q -c "VACUUM (PARALLEL 0) c"
	report "round $r"
done
echo

fresh_table
gone=$((ROWS * 84 / 100))
echo "## bulk: $gone rows deleted in one statement, VACUUM, $gone inserted in one statement, VACUUMs"
echo "fresh: hamming $fresh pages, btree $fresh_bt pages"
echo
header
q -c "DELETE FROM c WHERE id <= $gone" -c "VACUUM (PARALLEL 0) c"
report "the delete and a VACUUM"
q -c "INSERT INTO c SELECT i, $code FROM generate_series($((ROWS + 1)), $((ROWS + gone))) i"
report "the insert"
for v in 1 2 3; do
	q -c "INSERT INTO tick VALUES ($v)" -c "VACUUM (PARALLEL 0) c"
	report "a write and VACUUM $v"
done
SCRIPT
