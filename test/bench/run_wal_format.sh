#!/usr/bin/env bash
# How the hamming index WAL-logs its list appends, by measurement
# (doc/index-hamming.md, "WAL records"): `make HAM_WAL=fragments` (the
# default on the majors checked) writes generic WAL records of just the
# changed bytes itself (ham_log_fragments in src/hamming/ham_wal.c);
# `make HAM_WAL=api` makes the same changes through generic WAL's public
# API, whose GenericXLogFinish finds those bytes by comparing the whole
# page with a copy.  One run builds and stages
# both, then, ROUNDS times (default 3), alternating which goes first, a
# throwaway cluster for each with:
#
#   - two tables (id bigint, sh simhash64), one without an index (the
#     baseline), one with a hamming index at default options but a
#     pending_limit no list of this run reaches (so no merge: every insert
#     is a list append);
#   - ROWS (ND_BENCH_ROWS, default 1M) random codes COPYed into each, then
#     SINGLE (ND_BENCH_SINGLE, default 50,000) single-row INSERTs into each,
#     a transaction each, in a loop on the server (a DO block that commits
#     after every row: psql's round trip per statement is a millisecond on
#     a busy machine, which hides a difference of microseconds); a
#     CHECKPOINT before each: seconds and WAL bytes (pg_current_wal_lsn)
#     per row;
#   - then a merge of the whole list and a VACUUM, which marks the list's
#     pages free (the other in-place change): the VACUUM's seconds and WAL
#     (its heap already all-visible; full_page_writes off for it) and the
#     pages it put in the free space map.
#
# Reported: the median over the rounds of each figure per build, the index's
# share (indexed table minus baseline, per row) and the ratio api /
# fragments.  The clusters run with synchronous_commit = off (a single-row
# INSERT measures CPU, not the disk's flush) and autovacuum = off.  Each
# round checks that both builds left the same index (entries, pages, pages
# freed).
#
#   ND_BENCH_ROWS=200000 ND_BENCH_SINGLE=10000 ND_BENCH_ROUNDS=5 bash test/bench/run_wal_format.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
# two builds of our own, whatever a test runner prepared
unset ND_PREPARED ND_STAGE

export ROWS=${ND_BENCH_ROWS:-1000000} SINGLE=${ND_BENCH_SINGLE:-50000}
ROUNDS=${ND_BENCH_ROUNDS:-3}
export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=1GB max_wal_size=20GB checkpoint_timeout=1h autovacuum=off synchronous_commit=off"}

WORK=$(mktemp -d /tmp/nd-bench-walfmt.XXXXXX)
chmod 777 "$WORK"
export WORK
declare -A stage
cleanup() {
	rm -rf "$WORK"
	local d
	for d in "${stage[@]}"; do rm -rf "$d"; done
}
trap cleanup EXIT

# api first: the tree is left built as a plain make builds it.
for v in api fragments; do
	stage[$v]=$(mktemp -d /tmp/neardup-stage.XXXXXX)
	chmod 755 "${stage[$v]}"
	export HAM_WAL=$v
	ND_STAGE=${stage[$v]} nd_build
	ND_STAGE=${stage[$v]} nd_stage
	if [ -n "$ND_PG_PREFIX" ]; then lib=${stage[$v]}/pg/lib; else
		lib=${stage[$v]}$("$ND_PG_CONFIG" --pkglibdir); fi
	# The staged library is the build asked for: XLogInsert is called only
	# by ham_log_fragments, which the api build leaves out.
	imports=$(nm -D "$lib/neardup.so" | grep -c ' U XLogInsert$' || true)
	if [ "$imports" != "$([ "$v" = api ] && echo 0 || echo 1)" ]; then
		echo "run_wal_format.sh: the $v build imports XLogInsert $imports times" >&2
		exit 1
	fi
done
unset HAM_WAL

echo "# $ROWS rows COPYed, $SINGLE single-row INSERTs, $ROUNDS rounds; PostgreSQL $ND_PG_MAJOR; $ND_PG_OPTS; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# One cluster: prints "result VARIANT ROUND" and the figures.
run_cluster() {
	ND_STAGE=${stage[$1]} VARIANT=$1 ROUND=$2 nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
now() { date +%s.%N; }
wal() { q -c "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"; }

q -c "CREATE EXTENSION neardup" -c "CREATE EXTENSION pg_freespacemap" \
  -c "CREATE TABLE b (id bigint, sh simhash64)" \
  -c "CREATE TABLE h (id bigint, sh simhash64)" \
  -c "CREATE INDEX h_sh ON h USING hamming (sh) WITH (pending_limit = 2097151)"
if [ ! -e "$WORK/rows.copy" ]; then
	q -c "COPY (SELECT i::bigint, ('x' || md5('row ' || i))::bit(64)::bigint::simhash64
	           FROM generate_series(1, $ROWS) i) TO '$WORK/rows.copy'"
fi

# measure TABLE copy|single: "seconds WAL-bytes", from a checkpoint
measure() {
	local w0 t0
	q -c "CHECKPOINT"
	w0=$(wal)
	t0=$(now)
	if [ "$2" = copy ]; then
		q -c "COPY $1 FROM '$WORK/rows.copy'"
	else
		q -c "DO \$\$ BEGIN
		      FOR i IN 1..$SINGLE LOOP
		        INSERT INTO $1 VALUES ($ROWS + i, ('x' || md5('single ' || i))::bit(64)::bigint::simhash64);
		        COMMIT;
		      END LOOP;
		      END \$\$"
	fi
	echo "$(awk "BEGIN { print $(now) - $t0 }") $(($(wal) - w0))"
}
cb=$(measure b copy)
ch=$(measure h copy)
sb=$(measure b single)
sh=$(measure h single)
read -r entries pages <<<"$(q -F' ' -c "SELECT pending_entries, pages FROM hamming_stats('h_sh')")"
# The merge retires the list's pages; a transaction id after it lets
# VACUUM see that no scan can read them any more.  A first VACUUM sets the
# heap all-visible, so that the measured one does little but free them.
# full_page_writes off for it: a page's first change after a checkpoint
# would log the whole page in either build, and hide the records.
q -c "VACUUM h" -c "SELECT hamming_merge('h_sh')" -c "SELECT txid_current()" >/dev/null
q -c "ALTER SYSTEM SET full_page_writes = off" -c "SELECT pg_reload_conf()" -c "SELECT pg_sleep(1)" >/dev/null
q -c "CHECKPOINT"
w0=$(wal)
t0=$(now)
q -c "VACUUM h"
vac="$(awk "BEGIN { print $(now) - $t0 }") $(($(wal) - w0))"
freed=$(q -c "SELECT count(*) FROM pg_freespace('h_sh') WHERE avail > 0")
echo "result $VARIANT $ROUND $cb $ch $sb $sh $vac $entries $pages $freed"
SCRIPT
}

for ((r = 1; r <= ROUNDS; r++)); do
	order="fragments api"
	((r % 2 == 0)) && order="api fragments"
	for v in $order; do
		run_cluster "$v" "$r" | tee -a "$WORK/out" | sed 's/^/# /'
	done
done

grep '^result ' "$WORK/out" >"$WORK/results" || true
n=$(wc -l <"$WORK/results")
[ "$n" -eq $((2 * ROUNDS)) ] || { echo "run_wal_format.sh: $n of $((2 * ROUNDS)) clusters reported" >&2; exit 1; }
# Both builds must leave the same index: entries, pages and pages freed.
if [ "$(awk '{ print $14, $15, $16 }' "$WORK/results" | sort -u | wc -l)" -ne 1 ]; then
	echo "run_wal_format.sh: the builds left different indexes (entries, pages):" >&2
	awk '{ print $2, $3, $14, $15, $16 }' "$WORK/results" >&2
	exit 1
fi

# Medians per build; fields of a result line: 4/5 COPY baseline s/WAL,
# 6/7 COPY indexed, 8/9 single baseline, 10/11 single indexed, 12/13 VACUUM.
awk -v rows="$ROWS" -v single="$SINGLE" '
function median(v, k,   a, i, j, t, m) {
	m = 0
	for (i = 1; i <= k; i++) a[i] = v[i]
	for (i = 2; i <= k; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
{
	b = $2; k[b]++
	for (f = 4; f <= 13; f++) val[b, f, k[b]] = $f
	# the index share per row, round by round (time in microseconds)
	val[b, "ct", k[b]] = ($6 - $4) / rows * 1e6
	val[b, "cw", k[b]] = ($7 - $5) / rows
	val[b, "st", k[b]] = ($10 - $8) / single * 1e6
	val[b, "sw", k[b]] = ($11 - $9) / single
	pages = $15; freed = $16
}
function med(b, f,   v, i) {
	for (i = 1; i <= k[b]; i++) v[i] = val[b, f, i]
	return median(v, k[b])
}
function row(label, f, scale, fmt) {
	fr = med("fragments", f) * scale; ap = med("api", f) * scale
	printf "| %s | " fmt " | " fmt " | %.2f |\n", label, fr, ap, fr ? ap / fr : 0
}
END {
	printf "\n| median of %d rounds | fragments | api | api / fragments |\n", k["api"]
	print "|---|---|---|---|"
	row("COPY " rows " rows, no index: s", 4, 1, "%.2f")
	row("COPY, hamming index: s", 6, 1, "%.2f")
	row("COPY, the index share: us per row", "ct", 1, "%.2f")
	row("COPY, no index: WAL B per row", 5, 1 / rows, "%.1f")
	row("COPY, hamming index: WAL B per row", 7, 1 / rows, "%.1f")
	row("COPY, the index share: WAL B per row", "cw", 1, "%.1f")
	row(single " single-row INSERTs, no index: s", 8, 1, "%.2f")
	row("single-row INSERTs, hamming index: s", 10, 1, "%.2f")
	row("single-row INSERT, the index share: us per row", "st", 1, "%.2f")
	row("single-row INSERT, no index: WAL B per row", 9, 1 / single, "%.1f")
	row("single-row INSERT, hamming index: WAL B per row", 11, 1 / single, "%.1f")
	row("single-row INSERT, the index share: WAL B per row", "sw", 1, "%.1f")
	row("VACUUM after a merge (frees the list pages): s", 12, 1, "%.2f")
	row("VACUUM after a merge, full_page_writes off: WAL B per page freed", 13, 1 / (freed ? freed : 1), "%.1f")
	printf "\n# index of %d pages after the inserts, the same in both builds every round; the VACUUM freed %d\n", pages, freed
}' "$WORK/results"
echo "# per round (variant round, then seconds and WAL bytes: COPY baseline, COPY indexed, single baseline, single indexed, VACUUM; entries, pages, pages freed):"
sed 's/^result /# /' "$WORK/results"
