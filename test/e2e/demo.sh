#!/usr/bin/env bash
# End-to-end: the main job (make demo) runs from the README's command and
# reports groups of near-duplicates found in the machine's licence texts.
# The corpus differs between machines, so this checks the shape of the
# report and facts true of every Debian system, not exact groups.  Prints TAP.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
out=$(make -s -C "$ROOT" demo 2>&1)
rc=$?
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
ok $rc "make demo exits 0"
echo "$out" | grep -qE '^[0-9]+ documents \([0-9.]+ [kMG]?B\), [0-9]+ distinct texts, [0-9]+ distinct fingerprints$'
ok $? "it reports the corpus it fingerprinted"
docs=$(echo "$out" | sed -nE 's/^([0-9]+) documents .*/\1/p')
ok $([ "${docs:-0}" -ge 100 ] && echo 0 || echo 1) "hundreds of documents loaded (${docs:-0})"
echo "$out" | grep -qE '^[0-9]+ pairs of different texts within distance [0-9]+; [0-9]+ groups of near-duplicates cover [0-9]+ texts$'
ok $? "it reports pairs and groups"
# Every Debian system ships the GPL texts under common-licenses, and the
# copyright files of packages from one source are byte-identical copies.
echo "$out" | grep -qE '^ +[0-9]+ \| [a-z0-9]'
ok $? "it lists byte-identical copies"
echo "$out" | grep -qE '^MinHash: [0-9]+ groups of texts at estimated Jaccard >= 0.8 cover [0-9]+ texts'
ok $? "it reports the MinHash groups"
echo "$out" | grep -qE 'Bitmap Index Scan on doc_sh_idx|Index Scan using doc_sh_idx'
ok $? "it shows the plan of one lookup through the hamming index"
# The lookup's rows are verified: none below 0.8 exact Jaccard.
echo "$out" | sed -n '/^One lookup/,$p' |
	awk -F'|' 'NF == 3 && $3 ~ /^ *[0-9.]+ *$/ { n++; if ($3 + 0 < 0.8) bad = 1 } END { exit (bad || n == 0) }'
ok $? "the lookup returns texts, none below exact Jaccard 0.8"
if [ $rc -ne 0 ] || [ "$n" -eq 0 ]; then echo "$out" | tail -30 | sed 's/^/# /'; fi
# A radius the all-pairs job refuses: the demo stops with the server's
# error and its hint, and no dump of the server log (which pg_virtualenv
# prints for any failing command).
out=$(ND_DEMO_K=16 make -s -C "$ROOT" demo 2>&1)
rc=$?
ok $([ $rc -ne 0 ] && echo 0 || echo 1) "ND_DEMO_K=16 fails (status $rc)"
echo "$out" | grep -q '^HINT:  .*minhash_clusters'
ok $? "with the error's hint towards minhash_clusters"
echo "$out" | grep -q 'last 100 lines'
ok $([ $? -ne 0 ] && echo 0 || echo 1) "and without the server log"
echo "1..$n"
