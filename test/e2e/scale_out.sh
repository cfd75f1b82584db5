#!/usr/bin/env bash
# End-to-end: neardup on a sharded table (postgres_fdw), doc/scale-out.md.
#
# One coordinator and three shard clusters on this machine (loopback,
# ports of their own, started and stopped here; test/e2e/lib/multinode.sh).
# `docs` on the coordinator is hash-partitioned by id over one foreign
# partition per shard, servers with `extensions 'neardup'` and
# `async_capable`; each shard has the extension, the table, a hamming
# index (ND_INDEXES: "gin gist" runs the same checks on those), and
# auto_explain logging every plan.  `docs_one` on the
# coordinator is a local table with the same rows (the single-node
# reference).  Checked:
#   - radius search (`sh <~> q <= r`, `sh <@ hamming_ball(q, r)`,
#     `within(sh, q, r)`): the predicate is in every shard's Remote SQL, the
#     shards are scanned by Async Foreign Scans, each shard runs it as an
#     index scan (EXPLAIN of the Remote SQL on the shard, and the plans
#     auto_explain logged on the shards), and the ids equal the single-node
#     answer for every query code and radius 0..4, custom and generic plans;
#   - KNN: the global 10 nearest equal the single-node ones (ids with an id
#     tiebreak, distances without), through the partitioned table (Merge
#     Append over ordered foreign scans) and one query per shard (LIMIT
#     shipped);
#   - failures: a stopped shard makes queries fail with an error naming its
#     server; a delete across shards that fails halfway (an error after the
#     deletes, a shard killed mid-transaction) changes no shard; an error at
#     commit on one shard leaves each shard all-or-nothing and every group
#     of duplicates with its representative (postgres_fdw has no two-phase
#     commit: which shards committed depends on the order it commits them);
#   - dedup: every pair within 3 bits, pairs whose rows are on different
#     shards included, equals simhash_pairs() on the single node, both from
#     simhash_pairs() over the partitioned table and from a join of band keys
#     that the shards compute (a view on each, foreign partitions over them);
#     the clusters equal the single node's; dedup_keep_one on the
#     partitioned table leaves the rows it leaves on the single node, and
#     changes no shard when it fails (an error after it in its transaction,
#     a shard refusing a delete in the middle of it), and its DELETE and
#     flag UPDATEs ship to the shards as one statement each (id = ANY).
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
LIB=$ROOT/test/e2e/lib
# shellcheck source=lib/common.sh
. "$LIB/common.sh"
# shellcheck source=lib/multinode.sh
. "$LIB/multinode.sh"

ROWS=${ROWS:-30000}
export ND_INDEXES=${ND_INDEXES:-hamming}
SHARDS=(s1 s2 s3)

nd_mn_init
nd_node_create coord
for s in "${SHARDS[@]}"; do
	nd_node_create "$s" session_preload_libraries=auto_explain auto_explain.log_min_duration=0
done
nd_shard_cluster coord docs "${SHARDS[@]}"
c() { nd_psql coord "$@"; }
c -f "$LIB/index_check.sql"
c -c "CREATE TABLE docs_one (id bigint PRIMARY KEY, sh simhash64)" \
	-c "CREATE INDEX ON docs_one USING gist (sh)" \
	-c "INSERT INTO docs_one SELECT i, nd_row_code(i) FROM generate_series(1, $ROWS) i" \
	-c "INSERT INTO docs SELECT id, sh FROM docs_one" \
	-c "ANALYZE docs_one"
for s in "${SHARDS[@]}"; do nd_psql "$s" -c "VACUUM ANALYZE docs_$s"; done
c -c "ANALYZE docs"
c -f "$LIB/scale_out.sql"

# --- the setup ---------------------------------------------------------------------------
per_shard() {
	local s out=""
	for s in "${SHARDS[@]}"; do out+="$s=$(nd_psql "$s" -c "SELECT count(*) FROM docs_$s") "; done
	echo "${out% }"
}
counts0=$(per_shard)
echo "# rows per shard: $counts0"
total=0
for kv in $counts0; do total=$((total + ${kv#*=})); done
ok $([ "$total" = "$ROWS" ] && [[ ! " $counts0" =~ =0( |$) ]] && echo 0 || echo 1) \
	"the $ROWS rows are spread over the three shards"
versions=$(for node in coord "${SHARDS[@]}"; do nd_psql "$node" -c "SELECT extversion FROM pg_extension WHERE extname = 'neardup'"; done | sort -u | wc -l)
opts=$(c -c "SELECT count(*) FROM pg_foreign_server WHERE 'extensions=neardup' = ANY (srvoptions) AND 'async_capable=true' = ANY (srvoptions)")
ok $([ "$versions" = 1 ] && [ "$opts" = 3 ] && echo 0 || echo 1) \
	"neardup in one version on every node; every server has extensions 'neardup' and async_capable"

# --- radius search: plans ----------------------------------------------------------------
Q=$(c -c "SELECT nd_center(1)")
# plan_ok LABEL SQL... : EXPLAIN VERBOSE of the last statement (after the
# others: PREPARE, SET) has three Async Foreign Scans, each with the radius
# predicate in its Remote SQL, and nothing filtered on the coordinator.
plan_ok() {
	local label=$1 plan
	shift
	plan=$(c "$@" 2>&1) || true
	if [ "$(grep -c 'Async Foreign Scan' <<<"$plan")" = 3 ] &&
		[ "$(grep -cE 'Remote SQL: SELECT .* WHERE .*(public\.within\(sh, |sh OPERATOR\(public\.<@\) )' <<<"$plan")" = 3 ] &&
		! grep -q 'Filter:' <<<"$plan"; then
		ok 0 "$label: predicate shipped to every shard, Async Foreign Scans"
	else
		echo "$plan" | sed 's/^/# /'
		ok 1 "$label: predicate shipped to every shard, Async Foreign Scans"
	fi
}
for form in "sh <~> \$1 <= \$2" "sh <@ hamming_ball(\$1, \$2)" "within(sh, \$1, \$2)"; do
	lit=${form//\$1/\'$Q\'::simhash64}
	lit=${lit//\$2/3}
	plan_ok "constant: $lit" -c "EXPLAIN VERBOSE SELECT id FROM docs WHERE $lit"
	plan_ok "generic plan: $form" -c "PREPARE p(simhash64, int) AS SELECT id FROM docs WHERE $form" \
		-c "SET plan_cache_mode = force_generic_plan" -c "EXPLAIN VERBOSE EXECUTE p('$Q', 3)"
done
plan=$(c -c "EXPLAIN VERBOSE SELECT id FROM docs WHERE sh <~> '$Q' <= 3")
echo "$plan" | sed 's/^/# /'

# Each shard plans the Remote SQL onto its index: EXPLAIN it there.
for s in "${SHARDS[@]}"; do
	remote=$(grep -oE "Remote SQL: .* FROM public\.docs_$s .*" <<<"$plan" | sed 's/^Remote SQL: //')
	splan=$(nd_psql "$s" -c "EXPLAIN $remote")
	echo "$splan" | sed "s/^/# $s: /"
	ok $(grep -qE '(Index Scan|Index Only Scan|Bitmap Index Scan) (using|on) docs_s[0-9]_(gin|gist|hamming)' <<<"$splan" &&
		! grep -q 'Seq Scan' <<<"$splan" && echo 0 || echo 1) "$s plans the Remote SQL onto its own index"
done

# --- radius search: results --------------------------------------------------------------
for s in "${SHARDS[@]}"; do : >"$(nd_log "$s")"; done
for mode in force_custom_plan force_generic_plan; do
	out=$(c -c "SET plan_cache_mode = $mode" -c "SELECT nd_shard_radius_check()" 2>&1) || true
	echo "# $mode: $out"
	ok $([[ $out =~ ^checks=[1-9][0-9]*\ mismatches=0\ rows=[1-9] ]] && echo 0 || echo 1) \
		"radius 0..4, three spellings, every query code ($mode): sharded = single node"
done
# What the shards ran: auto_explain logged every remote query's plan.
for s in "${SHARDS[@]}"; do
	read -r nq nidx < <(awk '
		/LOG:  duration: .* plan:/ { if (q) { n++; if (idx) i++ } q = 0; idx = 0; next }
		/Query Text: DECLARE .* CURSOR FOR/ { getline; q = ($0 ~ /WHERE \(*(public\.within\(sh, |sh OPERATOR\(public\.<@\) )/) }
		/(Index Scan|Index Only Scan|Bitmap Index Scan) (using|on) docs_s[0-9]_(gin|gist|hamming)/ { idx = 1 }
		/Seq Scan on docs_s/ { idx = -1000 }
		END { if (q) { n++; if (idx > 0) i++ } print n + 0, i + 0 }' "$(nd_log "$s")")
	echo "# $s: $nq radius queries logged by auto_explain, $nidx on an index; the first:"
	awk '/Query Text: DECLARE .* CURSOR FOR/ { p = 1 } p && /LOG:  duration/ { exit } p' "$(nd_log "$s")" | sed 's/^/#   /'
	ok $([ "$nq" -gt 100 ] && [ "$nq" = "$nidx" ] && echo 0 || echo 1) \
		"$s ran every radius query it received on its index (auto_explain)"
done

# --- KNN ---------------------------------------------------------------------------------
out=$(c -c "SELECT nd_shard_knn_check()" 2>&1) || true
echo "# $out"
ok $([[ $out =~ ^checks=[1-9][0-9]*\ mismatches=0$ ]] && echo 0 || echo 1) \
	"KNN top 10: sharded = single node (ids with tiebreak, distances without, per-shard form)"
plan=$(c -c "EXPLAIN VERBOSE SELECT id FROM docs ORDER BY sh <~> '$Q', id LIMIT 10")
echo "$plan" | sed 's/^/# /'
ok $(grep -q 'Merge Append' <<<"$plan" &&
	[ "$(grep -cE "Remote SQL: SELECT .* ORDER BY \(sh OPERATOR\(public\.<~>\) '$Q'\) ASC NULLS LAST, id ASC NULLS LAST$" <<<"$plan")" = 3 ] &&
	echo 0 || echo 1) "KNN on the partitioned table: Merge Append of the shards' ordered scans (ORDER BY shipped, no LIMIT)"
plan=$(c -c "EXPLAIN VERBOSE SELECT id FROM docs WHERE sh <~> '$Q' <= 5 ORDER BY sh <~> '$Q', id LIMIT 10")
ok $([ "$(grep -cE 'Remote SQL: SELECT .* WHERE \(public\.within\(sh, .*, 5\)\)' <<<"$plan")" = 3 ] && echo 0 || echo 1) \
	"KNN capped by a radius: the radius condition shipped to every shard"
plan=$(c -c "EXPLAIN VERBOSE SELECT * FROM nd_knn_per_shard('$Q', 10)" \
	-c "LOAD 'auto_explain'" -c "SET auto_explain.log_min_duration = 0" -c "SET auto_explain.log_nested_statements = on" -c "SET auto_explain.log_verbose = on" \
	-c "SET client_min_messages = log" -c "SELECT * FROM nd_knn_per_shard('$Q', 10)" 2>&1)
echo "$plan" | grep 'Remote SQL' | sed 's/^ */# /'
# (Whether the second query's ORDER BY and LIMIT are shipped too is the
# planner's choice: few rows are expected within the radius.)
ok $([ "$(grep -cE 'Remote SQL: SELECT sh FROM .* ORDER BY .* LIMIT 10::bigint$' <<<"$plan")" = 3 ] &&
	[ "$(grep -cE 'Remote SQL: SELECT id, sh FROM .* WHERE \(public\.within\(sh, ' <<<"$plan")" = 3 ] &&
	echo 0 || echo 1) "KNN by queries per shard: LIMIT shipped to every shard, then a radius-capped query"

# --- failures ----------------------------------------------------------------------------
nd_node_stop s2
out=$(c -c "SELECT count(*) FROM docs WHERE sh <~> '$Q' <= 3" 2>&1) && rc=0 || rc=$?
echo "$out" | sed 's/^/# /'
ok $([ $rc != 0 ] && grep -q 'could not connect to server "s2"' <<<"$out" && echo 0 || echo 1) \
	"s2 down: radius query fails, naming server s2 (no partial answer)"
out=$(c -c "SELECT id FROM docs ORDER BY sh <~> '$Q', id LIMIT 10" 2>&1) && rc=0 || rc=$?
ok $([ $rc != 0 ] && grep -q 'could not connect to server "s2"' <<<"$out" && echo 0 || echo 1) \
	"s2 down: KNN query fails, naming server s2"
nd_node_start s2

# The delete of a dedup pass: every row with an exact duplicate of smaller
# id (the smallest id of each group of equal codes is its representative).
DUPS="SELECT id FROM docs_one d WHERE EXISTS (SELECT 1 FROM docs_one e WHERE e.sh = d.sh AND e.id < d.id)"
ndups=$(c -c "SELECT count(*) FROM ($DUPS) s")
echo "# $ndups rows to delete"

# Inside the transaction, before the error, the deletes are visible (so
# that the check below is not vacuous).
out=$(c -c "BEGIN" -c "DELETE FROM docs WHERE id IN ($DUPS)" -c "SELECT count(*) FROM docs" \
	-c "SELECT 1 / 0" -c "COMMIT" 2>&1) && rc=0 || rc=$?
echo "$out" | sed 's/^/# /'
ok $([ $rc != 0 ] && [ "$(head -1 <<<"$out")" = $((ROWS - ndups)) ] && [ "$(per_shard)" = "$counts0" ] && echo 0 || echo 1) \
	"a delete across shards, then an error in the same transaction: every shard unchanged"

out=$(c -c "BEGIN" -c "DELETE FROM docs WHERE id IN ($DUPS) AND id % 2 = 0" -c "SELECT count(*) FROM docs_s3" \
	-c "\\! runuser -u postgres -- $ND_PGBIN/pg_ctl -D $ND_MN_DIR/s3/data -m immediate -w stop >/dev/null" \
	-c "DELETE FROM docs WHERE id IN ($DUPS) AND id % 2 = 1" -c "COMMIT" 2>&1) && rc=0 || rc=$?
echo "$out" | sed 's/^/# /'
nd_node_start s3
after=$(per_shard)
echo "# after: $after"
ok $([ $rc != 0 ] && [ "$(head -1 <<<"$out")" -lt "$(grep -o 's3=[0-9]*' <<<"$counts0" | cut -d= -f2)" ] &&
	grep -q 'docs_s3' <<<"$out" && [ "$after" = "$counts0" ] && echo 0 || echo 1) \
	"a shard killed in the middle of a delete across shards: error naming it, every shard unchanged"

# An error at commit on s3 only (a deferred constraint trigger there).
nd_psql s3 -c "CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql AS \$\$BEGIN RAISE EXCEPTION 'refused by s3'; END\$\$" \
	-c "CREATE CONSTRAINT TRIGGER fail AFTER DELETE ON docs_s3 DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail()"
out=$(c -c "BEGIN" -c "DELETE FROM docs WHERE id IN ($DUPS)" -c "COMMIT" 2>&1) && rc=0 || rc=$?
echo "$out" | sed 's/^/# /'
after=$(per_shard)
echo "# before: $counts0"
echo "# after:  $after"
# Each shard either kept all its rows or lost exactly its duplicates.
allornothing=0
for s in "${SHARDS[@]}"; do
	b=$(grep -o "$s=[0-9]*" <<<"$counts0")
	a=$(grep -o "$s=[0-9]*" <<<"$after")
	d=$(nd_psql "$s" -c "SELECT count(*) FROM docs_$s WHERE id IN ($(c -c "SELECT coalesce(string_agg(id::text, ','), '0') FROM ($DUPS) s"))")
	[ "$a" = "$b" ] || [ "$d" = 0 ] || allornothing=1
done
lost=$(c -c "SELECT count(*) FROM (SELECT DISTINCT sh FROM docs_one WHERE sh IS NOT NULL EXCEPT SELECT sh FROM docs) s")
ok $([ $rc != 0 ] && grep -q 'refused by s3' <<<"$out" && [ "$(grep -o 's3=[0-9]*' <<<"$after")" = "$(grep -o 's3=[0-9]*' <<<"$counts0")" ] &&
	[ $allornothing = 0 ] && [ "$lost" = 0 ] && echo 0 || echo 1) \
	"an error at commit on s3: s3 unchanged, every shard all-or-nothing, no code lost"
nd_psql s3 -c "DROP TRIGGER fail ON docs_s3"
# Back to the rows of docs_one, whatever that commit left.
c -c "BEGIN" -c "DELETE FROM docs" -c "INSERT INTO docs SELECT id, sh FROM docs_one" -c "COMMIT"
ok $([ "$(per_shard)" = "$counts0" ] && echo 0 || echo 1) "the sharded table reloaded"

# --- dedup across shards -----------------------------------------------------------------
# Which shard holds each id, for counting the pairs that cross shards.
c -c "CREATE TABLE id_shard AS SELECT id, tableoid::regclass::text AS part FROM docs"
# same_pairs LABEL QUERY: QUERY's (id_a, id_b, distance) on the coordinator
# equal simhash_pairs() on the single-node table, and some cross shards.
c -c "CREATE TABLE pairs_one AS SELECT * FROM simhash_pairs('SELECT id, sh FROM docs_one', 3)"
same_pairs() {
	local out
	out=$(c -c "CREATE TEMP TABLE got AS $2" \
		-c "SELECT (SELECT count(*) FROM got) || ' pairs, '
		    || (SELECT count(*) FROM got g JOIN id_shard a ON a.id = g.id_a JOIN id_shard b ON b.id = g.id_b WHERE a.part <> b.part) || ' across shards, '
		    || (SELECT count(*) FROM (SELECT id_a, id_b, distance FROM got EXCEPT ALL SELECT id_a, id_b, distance FROM pairs_one) x) || ' extra, '
		    || (SELECT count(*) FROM (SELECT id_a, id_b, distance FROM pairs_one EXCEPT ALL SELECT id_a, id_b, distance FROM got) x) || ' missing'" 2>&1) || true
	echo "# $1: $out (single node: $(c -c "SELECT count(*) FROM pairs_one") pairs)"
	ok $([[ $out =~ ^[1-9][0-9]*\ pairs,\ [1-9][0-9]*\ across\ shards,\ 0\ extra,\ 0\ missing$ ]] && echo 0 || echo 1) "$1: every pair within 3, across shards too = single node"
}
same_pairs "simhash_pairs over the partitioned table" "SELECT * FROM simhash_pairs('SELECT id, sh FROM docs', 3)"

# Band keys computed on the shards: a view on each shard, a foreign
# partition of docs_keys over it; the join on the keys runs on the
# coordinator.
for s in "${SHARDS[@]}"; do
	nd_psql "$s" -c "CREATE VIEW docs_keys_$s AS
		SELECT d.id, d.sh, u.key, u.ord::int AS ord
		FROM docs_$s d, unnest(simhash_band_keys(d.sh, 3)) WITH ORDINALITY u(key, ord)"
done
c -c "CREATE TABLE docs_keys (id bigint, sh simhash64, key bigint, ord int) PARTITION BY HASH (id)"
i=0
for s in "${SHARDS[@]}"; do
	c -c "CREATE FOREIGN TABLE docs_keys_$s PARTITION OF docs_keys FOR VALUES WITH (MODULUS 3, REMAINDER $i)
	      SERVER $s OPTIONS (table_name 'docs_keys_$s')"
	i=$((i + 1))
done
BANDJOIN="SELECT a.id AS id_a, b.id AS id_b, a.sh <~> b.sh AS distance
	FROM docs_keys a JOIN docs_keys b ON a.key = b.key AND a.ord = b.ord AND a.id < b.id
	WHERE a.sh <~> b.sh <= 3 AND simhash_band_first(a.sh, b.sh, a.ord, 3)"
plan=$(c -c "EXPLAIN VERBOSE SELECT count(*) FROM docs_keys")
ok $([ "$(grep -cE 'Remote SQL: SELECT .*FROM public\.docs_keys_s[0-9]' <<<"$plan")" = 3 ] && echo 0 || echo 1) \
	"band keys: each shard computes its rows' keys (a view there)"
same_pairs "band-key join of the shards' keys" "$BANDJOIN"

out=$(c -c "SELECT (SELECT count(*) FROM dedup_clusters('SELECT id_a, id_b FROM simhash_pairs(''SELECT id, sh FROM docs'', 3)') s
		     NATURAL FULL JOIN dedup_clusters('SELECT id_a, id_b FROM pairs_one') o
		     WHERE s.id IS NULL OR o.id IS NULL) || ' ' ||
		    (SELECT count(*) FROM (SELECT * FROM dedup_clusters('SELECT id_a, id_b FROM simhash_pairs(''SELECT id, sh FROM docs'', 3)')
		                           EXCEPT SELECT * FROM dedup_clusters('SELECT id_a, id_b FROM pairs_one')) x) || ' ' ||
		    (SELECT count(DISTINCT cluster_id) FROM dedup_clusters('SELECT id_a, id_b FROM pairs_one'))" 2>&1) || true
echo "# clusters: $out (unmatched ids, differing, clusters)"
ok $([[ $out =~ ^0\ 0\ [1-9][0-9]*$ ]] && echo 0 || echo 1) "dedup_clusters from the sharded pairs = from the single node's"

# Keep one per cluster across shards, in one coordinator transaction.
KEEP="SELECT dedup_keep_one('docs', 'id', 'SELECT id_a, id_b FROM simhash_pairs(''SELECT id, sh FROM docs'', 3)')"
nkeep=$(c -c "SELECT count(*) FROM dedup_representatives('docs_one', 'id', 'SELECT id_a, id_b FROM pairs_one') WHERE id <> representative")
echo "# keep-one deletes $nkeep rows"
out=$(c -c "BEGIN" -c "$KEEP" -c "SELECT count(*) FROM docs" -c "SELECT 1 / 0" -c "COMMIT" 2>&1) && rc=0 || rc=$?
echo "$out" | sed 's/^/# /'
ok $([ $rc != 0 ] && [ "$(sed -n 2p <<<"$out")" = $((ROWS - nkeep)) ] && [ "$(per_shard)" = "$counts0" ] && echo 0 || echo 1) \
	"dedup_keep_one across shards, then an error in its transaction: every shard unchanged"
# A shard refusing a delete in the middle of keep-one's DELETE (a row
# trigger on s3): the statement fails after other shards deleted.
nd_psql s3 -c "CREATE TRIGGER fail BEFORE DELETE ON docs_s3 FOR EACH ROW EXECUTE FUNCTION fail()"
out=$(c -c "$KEEP" 2>&1) && rc=0 || rc=$?
echo "$out" | sed 's/^/# /'
ok $([ $rc != 0 ] && grep -q 'refused by s3' <<<"$out" && [ "$(per_shard)" = "$counts0" ] && echo 0 || echo 1) \
	"dedup_keep_one failing on s3 in the middle: every shard unchanged"
nd_psql s3 -c "DROP TRIGGER fail ON docs_s3"
# keep-one's statements ship to the shards as one DELETE / UPDATE each with
# "id = ANY", not a join that makes postgres_fdw read every shard FOR
# UPDATE and change one row per round trip: the plans of the nested
# statements, through auto_explain, rolled back.  Flag mode too, on a
# column added to the shards and the coordinator.
for s in "${SHARDS[@]}"; do nd_psql "$s" -c "ALTER TABLE docs_$s ADD COLUMN dup bool"; done
c -c "ALTER TABLE docs ADD COLUMN dup bool"
EXPL=(-c "LOAD 'auto_explain'" -c "SET auto_explain.log_min_duration = 0"
	-c "SET auto_explain.log_nested_statements = on" -c "SET auto_explain.log_verbose = on"
	-c "SET client_min_messages = log")
out=$(c "${EXPL[@]}" -c "BEGIN" -c "$KEEP" -c "ROLLBACK" 2>&1) || true
# (grep -c exits 1 on no match: || true for set -e)
ndel=$(grep -cE 'Remote SQL: DELETE FROM public\.docs_s[123] WHERE \(\(id = ANY \(' <<<"$out" || true)
# the direct-modify node under each partition's ModifyTable entry
nfd=$(grep -c -- '->  Foreign Delete on ' <<<"$out" || true)
echo "# keep-one delete: $ndel shipped DELETEs, $nfd Foreign Delete, $(grep -c 'FOR UPDATE' <<<"$out" || true) FOR UPDATE"
if [ "$ndel" = 3 ] && [ "$nfd" = 3 ] && ! grep -q 'FOR UPDATE' <<<"$out"; then
	ok 0 "dedup_keep_one's DELETE ships to every shard as one DELETE with id = ANY"
else
	grep -E 'Foreign|Remote SQL|ERROR' <<<"$out" | cut -c1-160 | sed 's/^/# /'
	ok 1 "dedup_keep_one's DELETE ships to every shard as one DELETE with id = ANY"
fi
out=$(c "${EXPL[@]}" -c "BEGIN" \
	-c "SELECT dedup_keep_one('docs', 'id', 'SELECT id_a, id_b FROM simhash_pairs(''SELECT id, sh FROM docs'', 3)', flag_column => 'dup')" \
	-c "SET client_min_messages = warning" \
	-c "SELECT count(*) FILTER (WHERE dup) || ' ' || count(*) FILTER (WHERE NOT dup) || ' ' || count(*) FROM docs" \
	-c "ROLLBACK" 2>&1) || true
nupd=$(grep -cE 'Remote SQL: UPDATE public\.docs_s[123] SET dup = .* WHERE .*\(id = ANY \(' <<<"$out" || true)
flags=$(grep -E '^[0-9]+ [0-9]+ [0-9]+$' <<<"$out" | tail -1 || true)
echo "# keep-one flag: $nupd shipped UPDATEs; flagged, kept, rows: $flags"
if [ "$nupd" = 6 ] && ! grep -q 'FOR UPDATE' <<<"$out" &&
	[ "${flags%% *}" = "$nkeep" ] && [ "${flags##* }" = "$ROWS" ]; then
	ok 0 "dedup_keep_one's flag UPDATEs ship to every shard, and flag exactly the rows keep-one deletes"
else
	grep -E 'Foreign|Remote SQL|ERROR' <<<"$out" | cut -c1-160 | sed 's/^/# /'
	ok 1 "dedup_keep_one's flag UPDATEs ship to every shard, and flag exactly the rows keep-one deletes"
fi
out=$(c -c "$KEEP" 2>&1) || true
c -c "SELECT dedup_keep_one('docs_one', 'id', 'SELECT id_a, id_b FROM pairs_one')" >/dev/null
diff=$(c -c "SELECT count(*) FROM (SELECT id FROM docs EXCEPT SELECT id FROM docs_one UNION ALL SELECT id FROM docs_one EXCEPT SELECT id FROM docs) x")
echo "# keep-one: $out rows deleted; left: $(per_shard)"
ok $([ "$out" = "$nkeep" ] && [ "$diff" = 0 ] && echo 0 || echo 1) \
	"dedup_keep_one across shards: the rows left = those left on the single node"
echo "1..$n"
