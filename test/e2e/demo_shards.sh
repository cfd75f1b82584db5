#!/usr/bin/env bash
# End-to-end: make demo-shards, the try-it setup of the block layout
# (doc/scale-out.md), runs from the README's command with a small row count.
# The demo itself compares every radius and nearest-neighbour answer through
# the layout with a brute-force scan and fails when one differs; this
# checks that it ran the guide's steps as the guide's roles (postgres_fdw
# refused to the owner, a user mapping without a password refused to the
# reader), that the comparison covered rows and both kinds of query code,
# and that the throwaway cluster is gone afterwards.  Prints TAP.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
out=$(ND_SHARDS_ROWS=5000 ND_SHARDS=3 make -s -C "$ROOT" demo-shards 2>&1)
rc=$?
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
yes() { [ "$1" ] && echo 0 || echo 1; }
ok $rc "make demo-shards exits 0"
echo "$out" | grep -q 'as app_owner: ERROR:  permission denied to create extension "postgres_fdw"'
ok $? "a database owner may not create postgres_fdw"
echo "$out" | grep -q 'with a mapping without a password: ERROR:  password is required'
ok $? "a reader's user mapping without a password is refused"
echo "$out" | grep -qE 'USAGE on the servers: (s[0-9] false(, )?){3} \(not needed to read\)'
ok $? "the reader reads the layout without USAGE on the servers"
servers=$(echo "$out" | grep -cE '^ s[0-9] +\| +[0-9]+$')
ok "$(yes "$([ "$servers" = 3 ] && echo y)")" "the layout's partitions are spread over the 3 shards ($servers)"
docs=$(echo "$out" | sed -nE 's/^([0-9]+) rows inserted into each of the 4 copies \(docs holds ([0-9]+)\)$/\1 \2/p')
set -- $docs
ok "$(yes "$([ -n "${1:-}" ] && [ "$1" = "${2:-}" ] && [ "$1" -gt 5000 ] && echo y)")" \
	"every row loaded into the copies (${1:-?} of ${2:-?})"
consistent=$(echo "$out" | grep -cE '^ +[1-4] \| +'"${1:-x}"' \| t$')
ok "$(yes "$([ "$consistent" = 4 ] && echo y)")" "simhash_layout_check: the 4 copies hold the same rows ($consistent)"
scans=$(echo "$out" | grep -c 'Async Foreign Scan on fp_b')
ok "$(yes "$([ "$scans" = 4 ] && echo y)")" "a radius-3 query reads one partition of each copy, together ($scans async scans)"
for kind in planted random; do
	line=$(echo "$out" | grep -E "^ $kind +\|")
	# kind | codes | radius_3_rows | radius_3_differ | knn_10th_distance | knn_10_differ
	IFS='|' read -r _ codes rows rdiff _ kdiff <<<"$line"
	ok "$(yes "$([ "${codes// /}" = 20 ] && [ "${rdiff// /}" = 0 ] && [ "${kdiff// /}" = 0 ] && echo y)")" \
		"$kind codes: radius 3 and KNN 10 equal the brute-force scan (${line:-no line})"
done
found=$(echo "$out" | sed -nE 's/^40 query codes, ([0-9]+) rows within radius 3, 0 answers differ from the brute-force scan$/\1/p')
ok "$(yes "$([ "${found:-0}" -gt 0 ] && echo y)")" "the radius queries found rows (${found:-none})"
port=$(echo "$out" | sed -nE 's/^the cluster: localhost:([0-9]+)$/\1/p')
ok "$(yes "$([ -n "$port" ] && [ -z "$(ss -tlnH "sport = :$port")" ] && echo y)")" \
	"nothing listens on the demo's port ${port:-?} afterwards"
if [ $rc -ne 0 ] || [ "$(echo "$out" | grep -c '')" -lt 20 ]; then echo "$out" | tail -40 | sed 's/^/# /'; fi
echo "1..$n"
