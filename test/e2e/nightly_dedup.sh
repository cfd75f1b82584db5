#!/usr/bin/env bash
# End-to-end: the nightly dedup job of doc/nightly-job.md (test/demo/
# nightly_setup.sql, nightly_dedup.sql), on the demo corpus, in a throwaway
# cluster, over four nights.  Night 1 sees the first half of the corpus;
# then the other half arrives and two rows are deleted (night 2: many new
# rows, the full search); then five edited copies of long texts arrive
# (night 3: few new rows, index probes); night 4 has nothing to do.  Checks,
# against the truth computed from scratch (all pairs by a self-join,
# components by a recursive CTE):
#   - the job's state (a cluster id per row) is exactly the clusters of
#     the rows present;
#   - every cluster has exactly one unflagged row, the longest text (ties:
#     the smallest id); rows in no pair are not flagged;
#   - no two unflagged rows are near-duplicates;
#   - night 3 probes the hamming index for each new row, and no night
#     falls back to a full run silently (a NOTICE says why); each edited copy is
#     in its original's cluster and, being longer, is now the row kept;
#   - night 4 changes nothing, also when the job's text is sent as one
#     command string (as pg_cron does);
#   - the same job run once from scratch gives the same flags.
# The job's output is printed as comments (doc/nightly-job.md shows it).  TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
nd_corpus_list
export ROOT

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
night() {
	echo "# night $1:"
	psql -X -q -v ON_ERROR_STOP=1 -f "$ROOT/test/demo/nightly_dedup.sql" 2>&1 | tee "/tmp/nd-night-$$-$1" | sed 's/^/#   /'
}

psql_q -c "SET client_min_messages = warning" -c "CREATE EXTENSION neardup" \
	-v corpus="$ND_CORPUS" -f "$ROOT/test/demo/load_corpus.sql"
half=$(psql_q -c "SELECT max(id) / 2 FROM doc")
psql_q -c "CREATE TABLE incoming AS SELECT id, name, body FROM doc WHERE id > $half" \
	-c "DELETE FROM doc WHERE id > $half"
echo "# corpus: $(psql_q -c "SELECT count(*) FROM doc") rows on night 1, $(psql_q -c "SELECT count(*) FROM incoming") arrive for night 2"

psql_q -f "$ROOT/test/demo/nightly_setup.sql"
night 1
# Between nights: the second half arrives; a representative (the kept row
# of the largest cluster) and a flagged row are deleted.
gone=$(psql_q -c "SELECT string_agg(id::text, ',') FROM (
	(SELECT d.id FROM doc d JOIN dedup_cluster c USING (id) WHERE NOT d.is_dup
	 ORDER BY (SELECT count(*) FROM dedup_cluster m WHERE m.cluster_id = c.cluster_id) DESC, d.id LIMIT 1)
	UNION ALL (SELECT id FROM doc WHERE is_dup ORDER BY id DESC LIMIT 1)) x")
echo "# deleted between nights: $gone"
psql_q -c "DELETE FROM doc WHERE id IN ($gone)" \
	-c "INSERT INTO doc (id, name, body) SELECT id, name, body FROM incoming"
night 2
# Before night 3: five edited copies of long texts arrive (few new rows:
# the job probes the index for them).
psql_q -c "INSERT INTO doc (id, name, body)
	SELECT 10000 + row_number() OVER (ORDER BY id), name || ' (edited)', body || E'\\nEdited by a later release.'
	FROM (SELECT * FROM doc WHERE NOT is_dup ORDER BY octet_length(body) DESC, id LIMIT 5) x"
# Index scans so far (statistics reach the view with a delay: wait for
# the counter to move).
nd_scans() { psql_q -c "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'doc_sh'"; }
scans_before=$(nd_scans)
echo "# five edited copies of long texts arrive"
night 3
for _ in $(seq 1 50); do [ "$(nd_scans)" -gt "$scans_before" ] && break; sleep 0.2; done
scans_after=$(nd_scans)
night 4

# The truth, from scratch.
psql_q <<'SQL'
CREATE TABLE truth_pair AS
SELECT a.id AS id_a, b.id AS id_b, a.sh <~> b.sh AS distance
FROM doc a JOIN doc b ON a.sh <~> b.sh <= 3 AND a.id < b.id;
CREATE TABLE truth_cluster AS
WITH RECURSIVE e AS (
    SELECT id_a AS a, id_b AS b FROM truth_pair UNION SELECT id_b, id_a FROM truth_pair
), reach (id, r) AS (
    SELECT a, a FROM e UNION SELECT e.b, reach.r FROM reach JOIN e ON e.a = reach.id
)
SELECT id, min(r) AS cluster_id FROM reach GROUP BY id;
SQL
echo "# truth: $(psql_q -c "SELECT count(*) FROM truth_pair") pairs, $(psql_q -c "SELECT count(DISTINCT cluster_id) || ' clusters of ' || count(*) || ' rows' FROM truth_cluster")"

r=$(psql_q -c "SELECT (SELECT count(*) FROM (SELECT id, cluster_id FROM dedup_cluster EXCEPT TABLE truth_cluster) x)
                    + (SELECT count(*) FROM (TABLE truth_cluster EXCEPT SELECT id, cluster_id FROM dedup_cluster) x)")
ok $([ "$r" = 0 ] && echo 0 || echo 1) "the job's state is the clusters of the rows present ($r differences)"
r=$(psql_q -c "SELECT count(*) FROM (
	SELECT c.cluster_id, count(*) FILTER (WHERE NOT d.is_dup) AS kept,
	       (array_agg(d.id ORDER BY octet_length(d.body) DESC, d.id))[1] AS longest,
	       min(d.id) FILTER (WHERE NOT d.is_dup) AS kept_id
	FROM truth_cluster c JOIN doc d USING (id) GROUP BY c.cluster_id) x
	WHERE kept <> 1 OR kept_id <> longest")
ok $([ "$r" = 0 ] && echo 0 || echo 1) "every cluster keeps exactly one row, its longest text ($r clusters wrong)"
r=$(psql_q -c "SELECT count(*) FROM doc WHERE is_dup AND id NOT IN (SELECT id FROM truth_cluster)")
ok $([ "$r" = 0 ] && echo 0 || echo 1) "no row outside a cluster is flagged ($r)"
r=$(psql_q -c "SELECT count(*) FROM doc a JOIN doc b ON a.sh <~> b.sh <= 3 AND a.id < b.id WHERE NOT a.is_dup AND NOT b.is_dup")
ok $([ "$r" = 0 ] && echo 0 || echo 1) "no two unflagged rows are near-duplicates ($r pairs)"
flagged=$(psql_q -c "SELECT count(*) FROM doc WHERE is_dup")
ok $([ "$flagged" -gt 0 ] && echo 0 || echo 1) "the corpus has duplicates to flag ($flagged rows flagged)"
r=$(psql_q -c "SELECT count(*) FROM dedup_change")
grep -qE '^ +0 *$' <(sed -n '/flags_changed/,/row/p' "/tmp/nd-night-$$-4") && [ "$r" = 0 ]
ok $? "night 4 (nothing new) changes no cluster ($r) and no flag"
ok $([ "$scans_after" -eq $((scans_before + 5)) ] && echo 0 || echo 1) "night 3 probed the hamming index once for each of its five new rows ($scans_before -> $scans_after scans)"
grep -q 'NOTICE:  simhash_clusters_update: a full run: more than [0-9]* new rows of about' "/tmp/nd-night-$$-2" && ! grep -q 'a full run' "/tmp/nd-night-$$-3"
ok $? "night 2's full run says why at NOTICE (many new rows); night 3's probes say nothing"
r=$(psql_q -c "SELECT count(*) FROM doc c JOIN doc o ON o.name || ' (edited)' = c.name
	JOIN dedup_cluster co ON co.id = o.id JOIN dedup_cluster cc ON cc.id = c.id AND cc.cluster_id = co.cluster_id
	WHERE c.id > 10000 AND NOT c.is_dup AND o.is_dup")
ok $([ "$r" = 5 ] && echo 0 || echo 1) "each edited copy is in its original's cluster and is now the row kept ($r of 5)"
r=$(psql_q -c "SELECT count(*) FROM doc WHERE sh IS NULL AND simhash(body) IS NOT NULL")
ok $([ "$r" = 0 ] && echo 0 || echo 1) "every new row was fingerprinted"
# pg_cron sends a job as one command string: the file must work that way.
before=$(psql_q -c "SELECT md5(string_agg(id || ':' || is_dup, ',' ORDER BY id)) FROM doc")
psql -X -q -v ON_ERROR_STOP=1 -c "$(cat "$ROOT/test/demo/nightly_dedup.sql")" >/dev/null
r=$?
after=$(psql_q -c "SELECT md5(string_agg(id || ':' || is_dup, ',' ORDER BY id)) FROM doc")
ok $([ "$r" = 0 ] && [ "$before" = "$after" ] && echo 0 || echo 1) "the job's text runs as one command string, as pg_cron sends it (and changes nothing)"

# The same job once, from scratch, on the final table.
psql_q -c "CREATE TABLE incremental AS SELECT id, is_dup FROM doc" \
	-c "TRUNCATE dedup_cluster" -c "UPDATE dedup_state SET last_id = NULL" -c "UPDATE doc SET is_dup = false, sh = NULL"
night full
r=$(psql_q -c "SELECT count(*) FROM (SELECT id, is_dup FROM doc EXCEPT TABLE incremental) x")
ok $([ "$r" = 0 ] && echo 0 || echo 1) "four incremental nights flag the same rows as one full run ($r differences)"
rm -f /tmp/nd-night-$$-*
echo "1..$n"
SCRIPT
