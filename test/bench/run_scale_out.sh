#!/usr/bin/env bash
# Sharding benchmark (doc/bench-scale-out.md): the same rows on one node and on
# SHARDS postgres_fdw shards behind a coordinator, all clusters on this
# machine (test/e2e/lib/multinode.sh).  Ratios sharded / single node,
# measured in the same run.
#
#   ROWS=1000000 SHARDS=3 QUERIES=200 KNNQ=30 PARTS="radius knn dedup" \
#       bash test/bench/run_scale_out.sh
#
# Rows: nd_row_code (test/e2e/lib/index_check.sql): random codes, planted
# clusters of near-duplicates, NULLs.  Every node: GIN and GiST indexes,
# shared_buffers 512MB (table and indexes stay cached), no parallel query.
# Query codes: codes of planted rows (near neighbours exist) and of random
# rows (the nearest other code is ~15 bits away).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
nd_build
nd_stage
LIB=$ROOT/test/e2e/lib
# shellcheck source=../e2e/lib/multinode.sh
. "$LIB/multinode.sh"

ROWS=${ROWS:-1000000}
NSHARDS=${SHARDS:-3}
QUERIES=${QUERIES:-200}
KNNQ=${KNNQ:-30}
PARTS=${PARTS:-radius knn dedup}
SHARDS=()
for ((i = 1; i <= NSHARDS; i++)); do SHARDS+=("s$i"); done
CONF=(shared_buffers=512MB maintenance_work_mem=256MB)

nd_mn_init
for n in coord one "${SHARDS[@]}"; do nd_node_create "$n" "${CONF[@]}"; done
ND_DEFER_INDEXES=1 nd_shard_cluster coord docs "${SHARDS[@]}"
for n in coord one; do
	nd_psql "$n" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS neardup" -f "$LIB/index_check.sql"
done
nd_psql one -c "CREATE TABLE docs (id bigint PRIMARY KEY, sh simhash64)"

now() { date +%s.%N; }
secs() { printf '%.2f' "$(echo "$2 - $1" | bc)"; }

echo "== $ROWS rows; single node vs coordinator + $NSHARDS shards (postgres_fdw), $(nproc) cores"
t0=$(now)
nd_psql one -c "INSERT INTO docs SELECT i, nd_row_code(i) FROM generate_series(1, $ROWS) i"
t1=$(now)
nd_psql coord -c "INSERT INTO docs SELECT i, nd_row_code(i) FROM generate_series(1, $ROWS) i"
t2=$(now)
echo "load:        single node $(secs "$t0" "$t1") s, through the coordinator (batch_size 1000) $(secs "$t1" "$t2") s"

# build AM: the index of access method AM on every node, timed.
build() {
	local am=$1 t0 t1 t2 pids=() s p
	t0=$(now)
	nd_psql one -c "CREATE INDEX docs_$am ON docs USING $am (sh)" -c "VACUUM ANALYZE docs"
	t1=$(now)
	for s in "${SHARDS[@]}"; do
		(ND_INDEXES=$am nd_shard_indexes docs "$s" && nd_psql "$s" -c "VACUUM ANALYZE docs_$s") &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	t2=$(now)
	nd_psql coord -c "ANALYZE docs"
	echo "$am build:   single node $(secs "$t0" "$t1") s, the $NSHARDS shards concurrently $(secs "$t1" "$t2") s (+ VACUUM ANALYZE)"
}
sizes() {
	echo "sizes:       single node $(nd_psql one -c "SELECT pg_size_pretty(pg_table_size('docs')) || ' table, ' || string_agg(pg_size_pretty(pg_relation_size(indexrelid)) || ' ' || amname, ', ') FROM pg_index JOIN pg_class c ON c.oid = indexrelid JOIN pg_am a ON a.oid = c.relam WHERE indrelid = 'docs'::regclass AND amname <> 'btree'")"
	for s in "${SHARDS[@]}"; do
		echo "             $s: $(nd_psql "$s" -c "SELECT (SELECT count(*) FROM docs_$s) || ' rows, ' || pg_size_pretty(pg_table_size('docs_$s')) || ' table, ' || string_agg(pg_size_pretty(pg_relation_size(indexrelid)) || ' ' || amname, ', ') FROM pg_index JOIN pg_class c ON c.oid = indexrelid JOIN pg_am a ON a.oid = c.relam WHERE indrelid = 'docs_$s'::regclass AND amname <> 'btree'")"
	done
}

for n in coord one; do nd_psql "$n" -f "$ROOT/test/bench/scale_out.sql"; done
# Only nd_knn_per_shard is used here (the rest refers to the test's docs_one).
nd_psql coord -c "SET check_function_bodies = off" -f "$LIB/scale_out.sql"

# plans SQL...: the plans behind the numbers, on the single node and, for
# the remote query the coordinator sends, on shard s1 (%Q%: a planted code).
plans() {
	local Q sql remote
	Q=$(nd_psql one -c "SELECT nd_bench_code(1, 'planted', $ROWS)")
	for sql in "$@"; do
		sql=${sql//%Q%/$Q}
		echo
		echo "-- $sql"
		echo "single node:"
		nd_psql one -c "EXPLAIN (COSTS OFF) $sql" | sed 's/^/    /'
		echo "coordinator:"
		nd_psql coord -c "EXPLAIN (VERBOSE, COSTS OFF) $sql" | grep -vE '^ +Output:' | sed 's/^/    /'
		remote=$(nd_psql coord -c "EXPLAIN (VERBOSE, COSTS OFF) $sql" | grep -oE "Remote SQL: .* FROM public\.docs_s1( .*|$)" | sed 's/^Remote SQL: //')
		echo "shard s1 (postgres_fdw runs the remote query as a cursor, planned for a fast start):"
		nd_psql s1 -c "BEGIN" -c "EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR $remote" -c "ROLLBACK" | sed 's/^/    /'
	done
	echo
}
header() {
	printf '\n%-34s %-8s %5s %12s %12s %12s %12s %8s %s\n' query codes n "one p50 ms" "one p90" "shard p50" "shard p90" ratio "same?"
}
# row LABEL KIND N SQL [SQL_ON_COORD]: one line of the table.
row() {
	local label=$1 kind=$2 nq=$3 sql=$4 csql=${5:-$4} a b
	a=$(nd_psql one -c "SELECT median_ms || ' ' || p90_ms || ' ' || total FROM nd_bench(\$q\$$sql\$q\$, '$kind', $nq, $ROWS)")
	b=$(nd_psql coord -c "SELECT median_ms || ' ' || p90_ms || ' ' || total FROM nd_bench(\$q\$$csql\$q\$, '$kind', $nq, $ROWS)")
	read -r am ap af <<<"$a"
	read -r bm bp bf <<<"$b"
	printf '%-34s %-8s %5s %12.3f %12.3f %12.3f %12.3f %7.1fx %s%s\n' "$label" "$kind" "$nq" "$am" "$ap" "$bm" "$bp" \
		"$(echo "$bm / $am" | bc -l)" "$([ "$af" = "$bf" ] && echo yes || echo "NO ($af vs $bf)")" \
		"$([[ $label == radius* ]] && echo " ($((af / nq)) rows/query)")"
}
part() { [[ " $PARTS " == *" $1 "* ]]; }

if part radius; then
	# Radius search with GIN only (with a GiST index too, the planner often
	# prefers GiST, which is slower for this: doc/index-gist.md).
	build gin
	header
	for r in 0 3 4; do
		row "radius $r: count(*) sh <~> \$1 <= $r" planted "$QUERIES" "SELECT count(*) FROM docs WHERE sh <~> \$1 <= $r"
	done
	row "radius 3: count(*) sh <~> \$1 <= 3" random "$QUERIES" "SELECT count(*) FROM docs WHERE sh <~> \$1 <= 3"
	row "pull every (id, sh) (dedup input)" planted 3 "SELECT max(sh::bigint # id) % 1000 FROM docs"
	plans "SELECT count(*) FROM docs WHERE sh <~> '%Q%' <= 3"
fi

if part knn; then
	# KNN: GiST added.
	build gist
	sizes
	header
	KNN="SELECT sum(id) FROM (SELECT id FROM docs ORDER BY sh <~> \$1, id LIMIT 10) s"
	KNND="SELECT sum(d) FROM (SELECT sh <~> \$1 AS d FROM docs ORDER BY sh <~> \$1 LIMIT 10) s"
	KNNS="SELECT sum(id) FROM nd_knn_per_shard(\$1, 10)"
	for kind in planted random; do
		row "KNN 10, ORDER BY d, id" "$kind" "$KNNQ" "$KNN"
		row "KNN 10, ORDER BY d (sum of d)" "$kind" "$KNNQ" "$KNND"
		row "KNN 10, d, id; per shard (coord)" "$kind" "$KNNQ" "$KNN" "$KNNS"
	done
	plans "SELECT id FROM docs ORDER BY sh <~> '%Q%', id LIMIT 10" "SELECT sh <~> '%Q%' FROM docs ORDER BY sh <~> '%Q%' LIMIT 10"
fi

if part dedup; then
	# --- a dedup pass --------------------------------------------------------------------------
	# Its own rows, so that the pairs are few (the rows above have clusters of
	# a thousand codes within a few bits: hundreds of millions of pairs):
	# random codes, and every 100th row a copy of the row before it with 0..3
	# bits flipped.  No indexes: neither form uses one.
	DD="SELECT i, CASE WHEN i % 100 = 0 THEN nd_flip(('x' || md5((i - 1)::text))::bit(64)::bigint::simhash64, (i / 100 % 4)::int, (i % 64)::int)
	                   ELSE ('x' || md5(i::text))::bit(64)::bigint::simhash64 END
		FROM generate_series(1, $ROWS) i"
	ND_INDEXES=" " nd_shard_cluster coord dd "${SHARDS[@]}"
	nd_psql one -c "CREATE TABLE dd (id bigint PRIMARY KEY, sh simhash64)" -c "INSERT INTO dd $DD" -c "VACUUM ANALYZE dd"
	nd_psql coord -c "INSERT INTO dd $DD"
	i=0
	nd_psql coord -c "CREATE TABLE dd_keys (id bigint, sh simhash64, key bigint, ord int) PARTITION BY HASH (id)"
	for s in "${SHARDS[@]}"; do
		nd_psql "$s" -c "VACUUM ANALYZE dd_$s" -c "CREATE VIEW dd_keys_$s AS
			SELECT d.id, d.sh, u.key, u.ord::int AS ord
			FROM dd_$s d, unnest(simhash_band_keys(d.sh, 3)) WITH ORDINALITY u(key, ord)"
		# Read in full: 10,000 rows per round trip rather than 100.
		nd_psql coord -c "CREATE FOREIGN TABLE dd_keys_$s PARTITION OF dd_keys FOR VALUES WITH (MODULUS $NSHARDS, REMAINDER $i)
		      SERVER $s OPTIONS (table_name 'dd_keys_$s', fetch_size '10000')" \
			-c "ALTER FOREIGN TABLE dd_$s OPTIONS (ADD fetch_size '10000')"
		i=$((i + 1))
	done
	nd_psql one -c "CREATE VIEW dd_keys AS SELECT d.id, d.sh, u.key, u.ord::int AS ord
		FROM dd d, unnest(simhash_band_keys(d.sh, 3)) WITH ORDINALITY u(key, ord)"
	nd_psql coord -c "ANALYZE dd" -c "ANALYZE dd_keys"
	PAIRS="SELECT count(*) || ' pairs' FROM simhash_pairs('SELECT id, sh FROM dd', 3)"
	# The keys once (a CTE used twice is materialised: one read of the shards),
	# then a hash join on them.
	BAND="WITH k AS (SELECT * FROM dd_keys)
		SELECT count(*) || ' pairs' FROM k a JOIN k b ON a.key = b.key AND a.ord = b.ord AND a.id < b.id
		WHERE a.sh <~> b.sh <= 3 AND simhash_band_first(a.sh, b.sh, a.ord, 3)"
	KEEP="SELECT dedup_keep_one('dd', 'id', 'SELECT id_a, id_b FROM simhash_pairs(''SELECT id, sh FROM dd'', 3)') || ' deleted'"
	# timed NODE SQL...: seconds and the last output line.
	timed() {
		local n=$1 t0 out
		shift
		t0=$(now)
		out=$(nd_psql "$n" "$@" | tail -1)
		echo "$(secs "$t0" "$(now)") s${out:+ ($out)}"
	}
	echo
	echo "dedup pass, $ROWS rows (1% near-duplicate pairs), seconds:"
	printf '%-52s %-26s %s\n' step "single node" "coordinator + $NSHARDS shards"
	printf '%-52s %-26s %s\n' "(a) simhash_pairs over the table" "$(timed one -c "$PAIRS")" "$(timed coord -c "$PAIRS")"
	printf '%-52s %-26s %s\n' "(b) band-key join (keys computed on the shards)" "$(timed one -c "$BAND")" "$(timed coord -c "$BAND")"
	# The delete: keep-one's own (DELETE ... USING unnest: on foreign
	# partitions, a row-by-row DELETE ... WHERE ctid = $1 on each shard) and the
	# same ids deleted by = ANY (shipped whole to each shard), both rolled back.
	nd_psql coord -c "CREATE TABLE dd_del AS SELECT id_b AS id FROM simhash_pairs('SELECT id, sh FROM dd', 3)"
	nd_psql one -c "CREATE TABLE dd_del AS SELECT id_b AS id FROM simhash_pairs('SELECT id, sh FROM dd', 3)"
	USING="DELETE FROM dd s USING unnest((SELECT array_agg(id) FROM dd_del)) d(id) WHERE s.id = d.id"
	ANY="DELETE FROM dd WHERE id = ANY ((SELECT array_agg(id) FROM dd_del)::bigint[])"
	printf '%-52s %-26s %s\n' "delete the duplicates: USING unnest (as keep-one)" "$(timed one -c BEGIN -c "$USING" -c ROLLBACK)" "$(timed coord -c BEGIN -c "$USING" -c ROLLBACK)"
	printf '%-52s %-26s %s\n' "delete the duplicates: id = ANY (array)" "$(timed one -c BEGIN -c "$ANY" -c ROLLBACK)" "$(timed coord -c BEGIN -c "$ANY" -c ROLLBACK)"
	printf '%-52s %-26s %s\n' "dedup_keep_one (pairs + clusters + delete)" "$(timed one -c "$KEEP")" "$(timed coord -c "$KEEP")"
	echo
	echo "-- $USING"
	nd_psql coord -c "EXPLAIN (VERBOSE, COSTS OFF) $USING" | grep -E 'Remote SQL' | sed 's/^/    /'
	echo "-- $ANY"
	nd_psql coord -c "EXPLAIN (VERBOSE, COSTS OFF) $ANY" | grep -E 'Remote SQL' | sed 's/^/    /'
fi
