#!/usr/bin/env bash
# End-to-end: hamming_check() passes on sound indexes, also while rows are
# inserted, and catches deliberately damaged pages.
#
# Six tables with the same 30,000 rows (lib/index_check.sql's nd_row_code:
# NULLs, duplicates, extremes, planted and random codes), each with a
# hamming index and 600 more rows in its pending list.  hamming_check(index,
# true) passes on all of them, and keeps passing while another session
# inserts.  Then the server is stopped and one page of four of the indexes
# is changed on disk, as a bad disk or a bug would change it:
#   d1: two keys of a data page of table 1 swapped (keys out of order);
#   d2: one key of a data page of table 2 changed, order kept (table 2 no
#       longer holds the entries of table 0);
#   d3: the entry count of the fullest page of the pending list lowered by
#       one (a row has
#       lost its entry: only the heapallindexed check can see it, and an
#       index scan for that row's code finds nothing);
#   d4: a directory page's kind overwritten;
#   d5: the next link of the pending list's first page pointed at itself
#       (a list that loops: scans, through the session's list cache and
#       page by page, must fail instead of going round for ever).
# After a restart, hamming_check reports each with SQLSTATE XX002
# (index_corrupted) and a message that names the problem, as do the scans
# of d5; the undamaged index still passes.  Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
work=$(mktemp -d /tmp/nd-integrity.XXXXXX)
chmod 755 "$work"
inserter=
trap '[ -n "$inserter" ] && kill "$inserter" 2>/dev/null; rm -rf "$work"' EXIT

nd_setup_db
psql_q -c "CREATE EXTENSION pageinspect"
for t in t0 d1 d2 d3 d4 d5; do
	psql_q -c "CREATE TABLE $t (id bigint PRIMARY KEY, sh simhash64) WITH (autovacuum_enabled = off)" \
		-c "INSERT INTO $t SELECT i, nd_row_code(i) FROM generate_series(1, 30000) i" \
		-c "CREATE INDEX ${t}_ham ON $t USING hamming (sh) WITH (blocks = 4, pending_limit = 1024)" \
		-c "INSERT INTO $t SELECT i, nd_row_code(i) FROM generate_series(30001, 30600) i"
done

for t in t0 d1 d2 d3 d4 d5; do
	out=$(nd_ham_check ${t}_ham)
	[ "$out" = passed ] || echo "# $out"
	ok $([ "$out" = passed ] && echo 0 || echo 1) "$t: a sound index passes hamming_check (heapallindexed)"
done

# --- while another session inserts -------------------------------------------
psql_q -c "CREATE SEQUENCE ids START 100001"
{
	for ((b = 0; b < 2000; b++)); do
		echo "INSERT INTO t0 SELECT i, nd_row_code(i) FROM (SELECT nextval('ids') i FROM generate_series(1, 20)) s;"
	done
} >"$work/load.sql"
psql -X -q -f "$work/load.sql" >/dev/null 2>&1 &
inserter=$!
fails=0
for ((i = 0; i < 20; i++)); do
	out=$(nd_ham_check t0_ham)
	[ "$out" = passed ] || { fails=$((fails + 1)); echo "# $out"; }
done
kill "$inserter" 2>/dev/null || true
wait "$inserter" 2>/dev/null || true
inserter=
echo "# 20 checks while inserting; rows now: $(psql_q -c "SELECT count(*) FROM t0")"
ok $fails "hamming_check passes while another session inserts (and the pending list merges)"
out=$(nd_ham_check t0_ham)
ok $([ "$out" = passed ] && echo 0 || echo 1) "t0: passes after the inserts"

# --- damage -------------------------------------------------------------------
# page INDEX WHERE [OFFSET]: a block of INDEX whose special space (the last
# 16 bytes: epoch u32, next u32, kind u16, nentries u16, table u16, page_id
# u16, little-endian) satisfies WHERE over (kind, nentries, tbl, epoch,
# pending: the pending list's epoch, from the metapage); the
# fullest, the OFFSET-th of those in block order (a table's first and last
# pages hold the all-zero and all-one codes, all equal).
page() {
	psql_q -c "
		SELECT blkno FROM (
			SELECT b AS blkno,
			       get_byte(p, 8184) + 256 * get_byte(p, 8185) AS kind,
			       get_byte(p, 8186) + 256 * get_byte(p, 8187) AS nentries,
			       get_byte(p, 8188) + 256 * get_byte(p, 8189) AS tbl,
			       (SELECT sum(get_byte(p, 8176 + k)::bigint << (8 * k)) FROM generate_series(0, 3) k) AS epoch,
			       (SELECT sum(get_byte(m, 64 + k)::bigint << (8 * k))
			        FROM get_raw_page('$1', 0) m, generate_series(0, 3) k) AS pending
			FROM generate_series(1, pg_relation_size('$1') / 8192 - 1) b,
			     LATERAL get_raw_page('$1', b::int) p) s
		WHERE $2 ORDER BY nentries DESC, blkno LIMIT 1 OFFSET ${3:-0}"
}
datadir=$(psql_q -c "SHOW data_directory")
declare -A file blk
for i in 1 2 3 4 5; do file[$i]=$datadir/$(psql_q -c "SELECT pg_relation_filepath('d${i}_ham')"); done
blk[1]=$(page d1_ham "kind = 4 AND tbl = 1" 20)
blk[2]=$(page d2_ham "kind = 4 AND tbl = 2" 20)
blk[3]=$(page d3_ham "kind = 5 AND epoch = pending")
blk[4]=$(page d4_ham "kind = 3")
blk[5]=$(page d5_ham "kind = 5 AND epoch = pending")
echo "# pages to damage: d1 ${blk[1]}, d2 ${blk[2]}, d3 ${blk[3]}, d4 ${blk[4]}, d5 ${blk[5]}"
# the row d3 loses: the last entry of its list page
lost_code=$(psql_q -c "
	WITH p AS (SELECT get_raw_page('d3_ham', ${blk[3]}) AS p),
	     n AS (SELECT get_byte(p, 8186) + 256 * get_byte(p, 8187) AS n FROM p)
	SELECT (SELECT bit_or(get_byte(p, 24 + 8 * (n - 1) + k)::bigint << (8 * k)) FROM generate_series(0, 7) k)::simhash64
	FROM p, n")
echo "# d3 loses the entry of code $lost_code"

# edit.pl WHAT FILE BLOCK: a byte-exact read-modify-write of one 8kB page.
cat >"$work/edit.pl" <<'PERL'
use strict; use warnings;
my ($what, $file, $blk) = @ARGV;
open(my $fh, "+<:raw", $file) or die "$file: $!";
seek($fh, $blk * 8192, 0) or die; read($fh, my $page, 8192) == 8192 or die "short read";
my $n = unpack("v", substr($page, 8186, 2));
my $code = sub { unpack("Q<", substr($page, 24 + 8 * $_[0], 8)) };
my $set = sub { substr($page, 24 + 8 * $_[0], 8) = pack("Q<", $_[1]) };
my $done = 0;
if ($what eq "swap") {			# the first two neighbours that differ
	for my $i (0 .. $n - 2) {
		my ($a, $b) = ($code->($i), $code->($i + 1));
		next if $a == $b;
		$set->($i, $b); $set->($i + 1, $a); $done = 1; last;
	}
} elsif ($what eq "change") {	# a key raised by one, still below its successor
	for my $i (1 .. $n - 2) {
		my $c = $code->($i);
		next unless $c + 1 < $code->($i + 1);
		$set->($i, $c + 1); $done = 1; last;
	}
} elsif ($what eq "drop") {		# the last entry
	substr($page, 8186, 2) = pack("v", $n - 1); $done = 1;
} elsif ($what eq "kind") {		# claims to be a data page
	substr($page, 8184, 2) = pack("v", 4); $done = 1;
} elsif ($what eq "loop") {		# the next page is this one
	substr($page, 8180, 4) = pack("V", $blk); $done = 1;
}
die "nothing to $what on block $blk\n" unless $done;
seek($fh, $blk * 8192, 0) or die; print $fh $page; close($fh) or die;
PERL

pg_ctlcluster 15 regress stop
edits=0
perl "$work/edit.pl" swap "${file[1]}" "${blk[1]}" || edits=1
perl "$work/edit.pl" change "${file[2]}" "${blk[2]}" || edits=1
perl "$work/edit.pl" drop "${file[3]}" "${blk[3]}" || edits=1
perl "$work/edit.pl" kind "${file[4]}" "${blk[4]}" || edits=1
perl "$work/edit.pl" loop "${file[5]}" "${blk[5]}" || edits=1
pg_ctlcluster 15 regress start
nd_wait_ready
ok $edits "five pages damaged on disk, server restarted"

# expect DESCRIPTION INDEX HEAPALLINDEXED PATTERN: hamming_check fails with
# XX002 and a message matching PATTERN.
expect() {
	local out
	out=$(nd_ham_check "$2" "$3")
	echo "# $2: $out" | cut -c1-300
	ok $([[ $out == *"ERROR:  XX002: "* && $out =~ $4 ]] && echo 0 || echo 1) "$1"
}
expect "d1: keys out of order are reported" d1_ham false "keys of table 1 descend"
expect "d2: a table that differs from table 0 is reported" d2_ham false "table 2 does not hold the entries of table 0"
out=$(nd_ham_check d3_ham false)
ok $([ "$out" = passed ] && echo 0 || echo 1) "d3: a lost entry leaves the structure sound (without heapallindexed: $out)"
expect "d3: the row without an entry is reported by heapallindexed" d3_ham true "heap tuple \([0-9]+,[0-9]+\) from table \"d3\" lacks its entry in index \"d3_ham\""
n_idx=$(psql_q -c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" \
	-c "SELECT count(*) FROM d3 WHERE sh = '$lost_code'")
n_seq=$(psql_q -c "SET enable_indexscan = off" -c "SET enable_bitmapscan = off" \
	-c "SELECT count(*) FROM d3 WHERE sh = '$lost_code'")
echo "# rows of code $lost_code: index scan $n_idx, sequential scan $n_seq"
ok $([ "$n_idx" -lt "$n_seq" ] && echo 0 || echo 1) "d3: the damage is real: an index scan misses the row"
expect "d4: a page of the wrong kind is reported" d4_ham false "page ${blk[4]} is not what the scan expected"
expect "d5: a list that loops is reported" d5_ham false "a list of pages loops"
# An index scan of d5 (with work_mem as set: the list cached, or read page
# by page) ends in the error; timeout turns a scan that loops into a failure.
for wm in 4MB 64kB; do
	out=$(timeout 120 psql -X -At -v VERBOSITY=verbose -c "SET work_mem = '$wm'" \
		-c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" \
		-c "SELECT count(*) FROM d5 WHERE sh <~> '0123456789abcdef' <= 3" 2>&1 | tr '\n' ' ' || true)
	echo "# d5 scan, work_mem $wm: $out" | cut -c1-300
	ok $([[ $out == *"ERROR:  XX002: "* && $out == *"has a list of pages that loops at page ${blk[5]}"* ]] && echo 0 || echo 1) \
		"d5: an index scan (work_mem $wm) fails on the loop instead of hanging"
done
out=$(nd_ham_check t0_ham)
ok $([ "$out" = passed ] && echo 0 || echo 1) "t0: the undamaged index still passes"
echo "1..$n"
SCRIPT
