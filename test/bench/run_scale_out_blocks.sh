#!/usr/bin/env bash
# The block-sharded layout (doc/bench-scale-out.md)
# against the id-hash layout and a single node, all clusters on this machine
# (test/e2e/lib/multinode.sh), every ratio against a baseline measured in
# the same run.
#
#   ROWS=1000000 SHARD_COUNTS="2 4 8" QUERIES=200 KNNQ=30 PARTITIONS=16 \
#   NIGHTLY_ROWS=10000000 NIGHTLY_SHARDS=4 PARTS="queries nightly" \
#       bash test/bench/run_scale_out_blocks.sh
#
# queries: for each shard count N in SHARD_COUNTS, ROWS rows of nd_row_code
# (test/e2e/lib/index_check.sql, NULLs left out) in
#   - block layout fpN: simhash_layout_create over servers s1..sN, 4 blocks,
#     PARTITIONS partitions per copy, loaded through the coordinator with
#     simhash_layout_insert (the shards' hamming indexes dropped for the load
#     and rebuilt after);
#   - id layout docsN: hash-partitioned by id over s1..sN
#     (nd_shard_cluster), a hamming index on each shard;
#   - the single node `one`: the same rows, a hamming index.
# Radius 0, 1, 3 (count(*) of simhash_layout_within, of sh <~> $1 <= r on
# docsN and on the single node) and KNN 10 (simhash_layout_nearest; ORDER BY
# sh <~> $1, id LIMIT 10 on docsN and the single node; nd_knn_per_shard on
# docsN), p50 and p90 in ms over QUERIES (KNNQ) codes of planted rows (near
# copies exist) and of random rows (none within ~15 bits), each query run
# once to warm and once timed (nd_bench, test/bench/scale_out.sql; KNNQ=0:
# no KNN); "same?"
# compares the results' totals across the three setups.  Then radius 3 at
# every shard count in rotation, code by code (nd_bench_rotation), for
# ratios between shard counts that share the machine's load drift.  Shards a block
# radius query touches: the servers of the partitions its SQL names
# (simhash_layout_within_sql) over all codes, the Foreign Scans of its
# EXPLAIN, and the shards' pg_stat_user_tables around single queries.
#
# nightly: NIGHTLY_ROWS rows of nd_night_code (test/bench/scale_out_blocks.sql:
# 20% of rows have a near copy) in block layout nf over NIGHTLY_SHARDS shards
# and in table nt on the single node.  The shards' tables are loaded on the
# shards themselves (each computes the codes and keeps the rows of the
# partitions the layout places there; hamming indexes built after), not
# through the coordinator.  Timed: SELECT count(*) FROM
# simhash_layout_clusters('nf') on the coordinator against simhash_clusters
# ('nt', 'id', 'sh', 3) on the single node (fresh backends, NIGHTLY_ROUNDS
# rounds interleaved, medians); their results compared by count and an
# order-free checksum; bytes to the coordinator: the text of the rows the
# shards ship (nf_clusters: one row per partition cluster, its ids as an
# array, what simhash_layout_clusters reads) against the text of every
# (id, sh), and what the same clusters would cost as (id, cluster_id) edges.
# Every node: shared_buffers 256MB, work_mem NIGHTLY_WORK_MEM, no parallel
# query.
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
SHARD_COUNTS=${SHARD_COUNTS:-2 4 8}
QUERIES=${QUERIES:-200}
KNNQ=${KNNQ:-30}
P=${PARTITIONS:-16}
NIGHTLY_ROWS=${NIGHTLY_ROWS:-10000000}
NIGHTLY_SHARDS=${NIGHTLY_SHARDS:-4}
NIGHTLY_ROUNDS=${NIGHTLY_ROUNDS:-2}
NIGHTLY_FETCH=${NIGHTLY_FETCH:-10000}
PARTS=${PARTS:-queries nightly}
BLOCKS=4
CONF=(shared_buffers=256MB maintenance_work_mem=256MB "work_mem=${NIGHTLY_WORK_MEM:-1GB}")
part() { [[ " $PARTS " == *" $1 "* ]]; }

MAXN=0
if part queries; then for n in $SHARD_COUNTS; do ((n > MAXN)) && MAXN=$n; done; fi
part nightly && ((NIGHTLY_SHARDS > MAXN)) && MAXN=$NIGHTLY_SHARDS
ALL=()
for ((i = 1; i <= MAXN; i++)); do ALL+=("s$i"); done

now() { date +%s.%N; }
secs() { printf '%.2f' "$(echo "$2 - $1" | bc)"; }
# each S CMD...: CMD S on every shard S given, two at a time (2 cores).
each() {
	local s pids=() n=0
	local fn=$1
	shift
	for s in "$@"; do
		"$fn" "$s" &
		pids+=($!)
		n=$((n + 1))
		if ((n % 2 == 0)); then wait "${pids[@]}"; pids=(); fi
	done
	((${#pids[@]} == 0)) || wait "${pids[@]}"
}

nd_mn_init
for n in coord one "${ALL[@]}"; do nd_node_create "$n" "${CONF[@]}"; done
for n in coord one "${ALL[@]}"; do
	nd_psql "$n" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS neardup" \
		-f "$LIB/index_check.sql" -f "$ROOT/test/bench/scale_out_blocks.sql"
done
for n in coord one; do nd_psql "$n" -f "$ROOT/test/bench/scale_out.sql"; done
nd_psql coord -c "SET client_min_messages = warning" -c "CREATE EXTENSION postgres_fdw"
for s in "${ALL[@]}"; do nd_fdw_server coord "$s"; done
# nd_knn_per_shard (its default table, docs, exists only as a name here)
nd_psql coord -c "CREATE TABLE docs (id bigint, sh simhash64)" -c "SET check_function_bodies = off" -f "$LIB/scale_out.sql"
echo "== $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# hamming_indexes LAYOUT S: drop (or, with REBUILD=1, create) the hamming
# index of every table of LAYOUT on shard S.
hamming_indexes() {
	local s=$1
	nd_psql "$s" -c "DO \$\$
		DECLARE t text;
		BEGIN
		    FOR t IN SELECT relname FROM pg_class WHERE relkind = 'r' AND relname ~ '^${LAYOUT}_b[0-9]+_p[0-9]+\$' LOOP
		        IF '${REBUILD:-0}' = '1' THEN
		            EXECUTE format('CREATE INDEX %I ON %I USING hamming (sh)', t || '_sh_idx', t);
		        ELSE
		            EXECUTE format('DROP INDEX IF EXISTS %I', t || '_sh_idx');
		        END IF;
		    END LOOP;
		END \$\$"
	[ "${REBUILD:-0}" != 1 ] || nd_psql "$s" -c "VACUUM ANALYZE"
}

if part queries; then
	nd_psql coord -c "CREATE TABLE src AS SELECT i::bigint AS id, nd_row_code(i) AS sh FROM generate_series(1, $ROWS) i WHERE nd_row_code(i) IS NOT NULL"
	t0=$(now)
	nd_psql one -c "CREATE TABLE docs (id bigint PRIMARY KEY, sh simhash64 NOT NULL)" \
		-c "INSERT INTO docs SELECT i, nd_row_code(i) FROM generate_series(1, $ROWS) i WHERE nd_row_code(i) IS NOT NULL" \
		-c "CREATE INDEX docs_hamming ON docs USING hamming (sh)" -c "VACUUM ANALYZE docs"
	echo "single node: $(nd_psql one -c "SELECT count(*) FROM docs") rows, loaded and indexed in $(secs "$t0" "$(now)") s"
	declare -A P50
	TOUCHED=""
	for N in $SHARD_COUNTS; do
		SH=("${ALL[@]:0:N}")
		LAYOUT=fp$N
		srv=$(printf "'%s'," "${SH[@]}")
		srv=${srv%,}
		echo
		echo "======== $N shards (${SH[*]}), $BLOCKS blocks x $P partitions per copy"
		ND_DEFER_INDEXES=1 nd_shard_cluster coord "docs$N" "${SH[@]}" >/dev/null
		mk() { nd_psql "$1" -c "SELECT simhash_shard_create('$LAYOUT', $BLOCKS, $P)" >/dev/null; hamming_indexes "$1"; }
		each mk "${SH[@]}"
		placement=$(nd_psql coord -c "SELECT server || ':' || count(*) FROM simhash_layout_create('$LAYOUT', ARRAY[$srv], $BLOCKS, $P) GROUP BY server ORDER BY server" | tr '\n' ' ')
		t0=$(now)
		nd_psql coord -c "INSERT INTO docs$N SELECT id, sh FROM src"
		t1=$(now)
		nd_psql coord -c "SELECT simhash_layout_insert('$LAYOUT', 'SELECT id, sh FROM src')" >/dev/null
		t2=$(now)
		idx() {
			nd_psql "$1" -c "CREATE INDEX docs${N}_$1_hamming ON docs${N}_$1 USING hamming (sh)" -c "VACUUM ANALYZE docs${N}_$1"
			REBUILD=1 hamming_indexes "$1"
		}
		each idx "${SH[@]}"
		t3=$(now)
		nd_psql coord -c "ANALYZE docs$N"
		echo "partitions per server: $placement"
		echo "load through the coordinator: id layout $(secs "$t0" "$t1") s ($ROWS rows), block layout $(secs "$t1" "$t2") s ($BLOCKS copies, simhash_layout_insert); hamming indexes on the shards $(secs "$t2" "$t3") s"
		for s in "${SH[@]}"; do
			echo "  $s: $(nd_psql "$s" -c "SELECT (SELECT count(*) FROM docs${N}_$s) || ' id-layout rows; block layout: ' ||
			    sum(c.reltuples)::bigint || ' rows in ' || count(*) FILTER (WHERE c.reltuples > 0) || ' tables, ' ||
			    pg_size_pretty(sum(pg_table_size(c.oid) + pg_indexes_size(c.oid))) || ' with indexes'
			    FROM pg_class c WHERE c.relkind = 'r' AND c.relname ~ '^${LAYOUT}_b[0-9]+_p[0-9]+\$'")"
		done

		printf '\n%-30s %-8s %5s %17s %17s %17s %9s %s\n' query codes n "one p50/p90 ms" "id-hash p50/p90" "block p50/p90" "block/one" "same?"
		# row LABEL KIND N ONE_SQL ID_SQL BLOCK_SQL
		row() {
			local label=$1 kind=$2 nq=$3 a b c
			a=$(nd_psql one -c "SELECT median_ms || ' ' || p90_ms || ' ' || total FROM nd_bench(\$q\$$4\$q\$, '$kind', $nq, $ROWS)")
			b=$(nd_psql coord -c "SELECT median_ms || ' ' || p90_ms || ' ' || total FROM nd_bench(\$q\$$5\$q\$, '$kind', $nq, $ROWS)")
			c=$(nd_psql coord -c "SELECT median_ms || ' ' || p90_ms || ' ' || total FROM nd_bench(\$q\$$6\$q\$, '$kind', $nq, $ROWS)")
			read -r am ap af <<<"$a"
			read -r bm bp bf <<<"$b"
			read -r cm cp cf <<<"$c"
			printf '%-30s %-8s %5s %8.2f/%-8.2f %8.2f/%-8.2f %8.2f/%-8.2f %8.1fx %s\n' "$label" "$kind" "$nq" "$am" "$ap" "$bm" "$bp" "$cm" "$cp" \
				"$(echo "$cm / $am" | bc -l)" \
				"$([ "$af" = "$bf" ] && [ "$af" = "$cf" ] && echo "yes ($((af / nq)) rows/query)" || echo "NO ($af / $bf / $cf)")"
			LAST_BLOCK_P50=$cm
		}
		for kind in planted random; do
			for r in 0 1 3; do
				row "radius $r" "$kind" "$QUERIES" "SELECT count(*) FROM docs WHERE sh <~> \$1 <= $r" \
					"SELECT count(*) FROM docs$N WHERE sh <~> \$1 <= $r" \
					"SELECT count(*) FROM simhash_layout_within('$LAYOUT', \$1, $r)"
				P50[$N.$kind.$r]=$LAST_BLOCK_P50
			done
		done
		# KNN by distance alone: the hamming index orders the scan on the
		# single node and on each id-layout shard (postgres_fdw's Merge
		# Append).  Ties by id (ORDER BY d, id): no index path serves that
		# order on PostgreSQL 15, so the single node sorts the whole table
		# and the id layout uses nd_knn_per_shard (per-shard KNN, then a
		# radius query) instead.
		for kind in planted random; do
			((KNNQ > 0)) || break
			row "KNN 10 by d (sum of d)" "$kind" "$KNNQ" "SELECT sum(d) FROM (SELECT sh <~> \$1 AS d FROM docs ORDER BY sh <~> \$1 LIMIT 10) s" \
				"SELECT sum(d) FROM (SELECT sh <~> \$1 AS d FROM docs$N ORDER BY sh <~> \$1 LIMIT 10) s" \
				"SELECT sum(distance) FROM simhash_layout_nearest('$LAYOUT', \$1, 10)"
			P50[$N.$kind.knn]=$LAST_BLOCK_P50
			row "KNN 10 ties by id (sum of id)" "$kind" "$KNNQ" "SELECT sum(id) FROM (SELECT id FROM docs ORDER BY sh <~> \$1, id LIMIT 10) s" \
				"SELECT sum(id) FROM nd_knn_per_shard(\$1, 10, 'docs$N')" \
				"SELECT sum(id) FROM simhash_layout_nearest('$LAYOUT', \$1, 10)"
		done

		# What the coordinator spends before any shard is asked: building
		# the query text (the layout's catalogue lookups in PL/pgSQL).
		sqlonly=$(nd_psql coord -c "SELECT round(median_ms::numeric, 2) || ' ' || round(p90_ms::numeric, 2) FROM nd_bench(\$q\$SELECT length(simhash_layout_within_sql('$LAYOUT', \$1, 3))::bigint\$q\$, 'random', $QUERIES, $ROWS)")
		echo
		echo "simhash_layout_within_sql alone (radius 3, no shard asked), p50/p90 ms: ${sqlonly/ //}"
		for kind in planted random; do
			echo "block radius 3, $kind codes, p50 of the two steps of simhash_layout_within: $(nd_psql coord -c "SELECT nd_within_split('$LAYOUT', '$kind', $QUERIES, $ROWS, 3)")"
		done
		# Shards touched by the block layout's radius queries.
		for r in 1 3; do
			echo "block radius $r, servers read per query (max/mean over the codes, from the partitions simhash_layout_within_sql names):" \
				"planted $(nd_psql coord -c "SELECT nd_layout_servers('$LAYOUT', 'planted', $QUERIES, $ROWS, $r)")," \
				"random $(nd_psql coord -c "SELECT nd_layout_servers('$LAYOUT', 'random', $QUERIES, $ROWS, $r)")"
		done
		Q=$(nd_psql coord -c "SELECT nd_bench_code(1, 'planted', $ROWS)")
		plan=$(nd_psql coord -c "EXPLAIN (VERBOSE, COSTS OFF) $(nd_psql coord -c "SELECT simhash_layout_within_sql('$LAYOUT', '$Q', 3)")")
		echo "EXPLAIN of a radius-3 query (planted code $Q): $(grep -c 'Foreign Scan on' <<<"$plan") Foreign Scans ($(grep -c 'Async Foreign Scan' <<<"$plan") async):" \
			"$(grep -oE 'Foreign Scan on public\.[a-z0-9_]+' <<<"$plan" | sed 's/.*public\.//' | tr '\n' ' ')"
		remote=$(grep -m1 -oE 'Remote SQL: .*' <<<"$plan" | sed 's/^Remote SQL: //')
		echo "  first arm's remote SQL: $remote"
		part1=$(grep -m1 -oE 'FROM public\.[a-z0-9_]+' <<<"$remote" | sed 's/FROM public\.//')
		owner=$(nd_psql coord -c "SELECT s.srvname FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver WHERE f.ftrelid = '$part1'::regclass")
		echo "  its plan on $owner (a cursor, as postgres_fdw runs it): $(nd_psql "$owner" -c "BEGIN" -c "EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR $remote" -c "ROLLBACK" | grep -m1 -E 'Scan' | sed 's/^ *//')"
		# the shards' statistics: reset, one query, disconnect (the shards'
		# backends report at exit), count the shards that scanned.
		for kind in planted random; do
			for k in 1 2 3; do
				code=$(nd_psql coord -c "SELECT nd_bench_code($k, '$kind', $ROWS)")
				for s in "${SH[@]}"; do nd_psql "$s" -c "SELECT pg_stat_reset()" >/dev/null; done
				nd_psql coord -c "SELECT count(*) FROM simhash_layout_within('$LAYOUT', '$code', 3)" -c "SELECT postgres_fdw_disconnect_all()" >/dev/null
				sleep 0.5
				t=0
				for s in "${SH[@]}"; do
					scans=$(nd_psql "$s" -c "SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0) FROM pg_stat_user_tables WHERE relname ~ '^${LAYOUT}_b'")
					((scans > 0)) && t=$((t + 1))
				done
				TOUCHED+="$kind/$k:$t "
			done
		done
		echo "shards with scans in pg_stat_user_tables after one radius-3 query (code:shards): $TOUCHED"
		TOUCHED=""
	done

	# The same radius-3 queries at every shard count in rotation, code by
	# code: the ratios between shard counts no longer depend on how the
	# machine's load drifted between the phases above.
	echo
	echo "== radius 3 at every shard count in rotation, code by code ($QUERIES codes of each kind), p50/p90 ms (ratio of p50s to the first)"
	for kind in planted random; do
		for lay in block id; do
			qs=""
			for N in $SHARD_COUNTS; do
				if [ "$lay" = block ]; then
					qs+="\$q\$SELECT count(*) FROM simhash_layout_within('fp$N', \$1, 3)\$q\$,"
				else
					qs+="\$q\$SELECT count(*) FROM docs$N WHERE sh <~> \$1 <= 3\$q\$,"
				fi
			done
			res=$(nd_psql coord -c "SELECT string_agg(round(median_ms::numeric, 2) || '/' || round(p90_ms::numeric, 2) || ' ' || total, ' ' ORDER BY query_no)
			                        FROM nd_bench_rotation(ARRAY[${qs%,}], '$kind', $QUERIES, $ROWS)")
			read -ra cells <<<"$res"
			line=$(printf '%-8s %-6s' "$kind" "$lay")
			i=0
			first=""
			totals=""
			for N in $SHARD_COUNTS; do
				p50=${cells[$((2 * i))]%%/*}
				[ -n "$first" ] || first=$p50
				line+=$(printf '  %2s shards %13s (%.2fx)' "$N" "${cells[$((2 * i))]}" "$(echo "$p50 / $first" | bc -l)")
				totals+="${cells[$((2 * i + 1))]} "
				i=$((i + 1))
			done
			echo "$line  totals: $totals"
		done
	done

	echo
	echo "== block layout p50 against its p50 at the smallest shard count (target at 8 vs 2 shards, radius 3: <= 1.3x)"
	first=${SHARD_COUNTS%% *}
	for key in planted.0 planted.1 planted.3 random.0 random.1 random.3 planted.knn random.knn; do
		[ -n "${P50[$first.$key]:-}" ] || continue
		line=$(printf '%-12s' "$key")
		for N in $SHARD_COUNTS; do
			line+=$(printf '  %2s shards %7.2f ms (%.2fx)' "$N" "${P50[$N.$key]}" "$(echo "${P50[$N.$key]} / ${P50[$first.$key]}" | bc -l)")
		done
		echo "$line"
	done
	echo "load average after the queries: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if part nightly; then
	SH=("${ALL[@]:0:NIGHTLY_SHARDS}")
	LAYOUT=nf
	srv=$(printf "'%s'," "${SH[@]}")
	srv=${srv%,}
	echo
	echo "======== nightly clusters: $NIGHTLY_ROWS rows (nd_night_code: 20% with a near copy), block layout over $NIGHTLY_SHARDS shards, $BLOCKS blocks x $P partitions"
	t0=$(now)
	nd_psql one -c "CREATE TABLE nt (id bigint PRIMARY KEY, sh simhash64 NOT NULL)" \
		-c "INSERT INTO nt SELECT i, nd_night_code(i, $NIGHTLY_ROWS) FROM generate_series(1, $NIGHTLY_ROWS) i" \
		-c "VACUUM ANALYZE nt"
	echo "single node: loaded in $(secs "$t0" "$(now)") s"
	mk() { nd_psql "$1" -c "SELECT simhash_shard_create('$LAYOUT', $BLOCKS, $P)" >/dev/null; hamming_indexes "$1"; }
	each mk "${SH[@]}"
	nd_psql coord -c "CREATE TABLE nf_place AS SELECT block, partition, server, block_from, block_to
	                  FROM simhash_layout_create('$LAYOUT', ARRAY[$srv], $BLOCKS, $P)"
	# Load each shard on the shard: every code computed once, each copy's
	# rows routed through a partitioned table to which the shard's own
	# partitions of that copy are attached with the coordinator's bounds.
	load() {
		local s=$1 b bounds
		local sql="CREATE UNLOGGED TABLE nf_src AS SELECT i::bigint AS id, nd_night_code(i, $NIGHTLY_ROWS) AS sh FROM generate_series(1, $NIGHTLY_ROWS) i;"
		for ((b = 1; b <= BLOCKS; b++)); do
			bounds=$(nd_psql coord -c "SELECT string_agg(format('ALTER TABLE nf_load_b$b ATTACH PARTITION nf_b%s_p%s FOR VALUES FROM (%s) TO (%s);', block, partition, block_from, block_to), ' ')
			                          FROM nf_place WHERE block = $b AND server = '$s'")
			sql+="CREATE TABLE nf_load_b$b (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, $b, $BLOCKS)); $bounds
			      INSERT INTO nf_load_b$b SELECT id, sh FROM nf_src
			      WHERE (${b} - 1 + nd_block_partition(simhash_block(sh, $b, $BLOCKS), 64 / $BLOCKS + ($b <= 64 % $BLOCKS)::int, $P)) % $NIGHTLY_SHARDS = $(( ${s#s} - 1 ));"
		done
		nd_psql "$s" -c "BEGIN; $sql COMMIT;"
		for ((b = 1; b <= BLOCKS; b++)); do
			nd_psql "$s" -c "DO \$\$ DECLARE t text; BEGIN
			    FOR t IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'nf_load_b$b'::regclass LOOP
			        EXECUTE format('ALTER TABLE nf_load_b$b DETACH PARTITION %I', t);
			    END LOOP; END \$\$" -c "DROP TABLE nf_load_b$b"
		done
		nd_psql "$s" -c "DROP TABLE nf_src"
	}
	t0=$(now)
	each load "${SH[@]}"
	t1=$(now)
	REBUILD=1 each hamming_indexes "${SH[@]}"
	t2=$(now)
	echo "shards loaded on the shards in $(secs "$t0" "$t1") s, hamming indexes built in $(secs "$t1" "$t2") s"
	for s in "${SH[@]}"; do
		echo "  $s: $(nd_psql "$s" -c "SELECT sum(c.reltuples)::bigint || ' rows in ' || count(*) FILTER (WHERE c.reltuples > 0) || ' tables (largest ' ||
		    max(c.reltuples)::bigint || '), ' || pg_size_pretty(sum(pg_table_size(c.oid) + pg_indexes_size(c.oid))) || ' with indexes'
		    FROM pg_class c WHERE c.relkind = 'r' AND c.relname ~ '^nf_b[0-9]+_p[0-9]+\$'")"
	done
	copies=$(nd_psql coord -c "SELECT (SELECT count(*) FROM nf_b1) || ' ' || (SELECT count(*) FROM nf_b2) || ' ' || (SELECT count(*) FROM nf_b3) || ' ' || (SELECT count(*) FROM nf_b4)")
	echo "rows per copy through the coordinator: $copies (want $NIGHTLY_ROWS each)"
	if [ -n "$NIGHTLY_FETCH" ]; then
		# edges per round trip: the cluster views' foreign partitions only
		nd_psql coord -c "DO \$\$ DECLARE t regclass; BEGIN
		    FOR t IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'nf_clusters'::regclass LOOP
		        EXECUTE format('ALTER FOREIGN TABLE %s OPTIONS (ADD fetch_size %L)', t, '$NIGHTLY_FETCH');
		    END LOOP; END \$\$"
		echo "the cluster views' foreign tables: fetch_size $NIGHTLY_FETCH (the servers: ${ND_FETCH_SIZE:-100})"
	fi

	ONE="SELECT count(*) FROM simhash_clusters('nt', 'id', 'sh', 3)"
	LAY="SELECT count(*) FROM simhash_layout_clusters('nf')"
	t_one=()
	t_lay=()
	for ((round = 1; round <= NIGHTLY_ROUNDS; round++)); do
		t0=$(now)
		n_one=$(nd_psql one -c "$ONE")
		t1=$(now)
		n_lay=$(nd_psql coord -c "$LAY")
		t2=$(now)
		t_one+=("$(secs "$t0" "$t1")")
		t_lay+=("$(secs "$t1" "$t2")")
		echo "round $round: single node simhash_clusters ${t_one[-1]} s ($n_one rows), simhash_layout_clusters ${t_lay[-1]} s ($n_lay rows)"
	done
	med() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
	m_one=$(med "${t_one[@]}")
	m_lay=$(med "${t_lay[@]}")
	echo "median: single node $m_one s, block layout $m_lay s: $(printf '%.2f' "$(echo "$m_lay / $m_one" | bc -l)")x (target <= 1.5x)"

	SUM="SELECT count(*) || ' rows, checksum ' || coalesce(sum(hashtextextended(id || ':' || cluster_id, 0)::numeric), 0)"
	c_one=$(nd_psql one -c "$SUM FROM simhash_clusters('nt', 'id', 'sh', 3)")
	c_lay=$(nd_psql coord -c "$SUM FROM simhash_layout_clusters('nf')")
	echo "single node: $c_one; block layout: $c_lay: $([ "$c_one" = "$c_lay" ] && echo EQUAL || echo DIFFERENT)"

	t0=$(now)
	# as edges: each member m but the first f costs len(f) + len(m) + 2
	shipped=$(nd_psql coord -c "SELECT count(*) || ' ' || coalesce(sum(c - 1), 0) || ' ' || coalesce(sum(t + 1), 0) || ' ' ||
		    coalesce(sum((c - 1) * (f + 2) + (l - (c - 1) - f)), 0)
		    FROM (SELECT cardinality(ids) AS c, octet_length(ids::text) AS t, octet_length(ids[1]::text) AS f,
		                 octet_length(array_to_string(ids, ',')) AS l FROM nf_clusters) s")
	t1=$(now)
	rows=$(nd_psql one -c "SELECT count(*) || ' ' || sum(octet_length(id::text) + octet_length(sh::text) + 2) FROM nt")
	read -r nc ne be bedge <<<"$shipped"
	read -r nr br <<<"$rows"
	echo "shipped: $nc partition clusters holding $ne edges, $be bytes of text (as (id, cluster_id) edges: $bedge;" \
		"the shards' views alone, through the coordinator: $(secs "$t0" "$t1") s);" \
		"pulling every row: $nr ($br bytes): $(printf '%.1f' "$(echo "100 * $be / $br" | bc -l)")% (target <= 10%; as edges $(printf '%.1f' "$(echo "100 * $bedge / $br" | bc -l)")%)"
	echo "per shard, edges from its views (one more run of each shard's clusters, on the shard):"
	for s in "${SH[@]}"; do
		t0=$(now)
		views=$(nd_psql coord -c "SELECT string_agg(format('nf_b%s_p%s_clusters', block, partition), ' ') FROM nf_place WHERE server = '$s'")
		u=$(for v in $views; do echo "SELECT sum(cardinality(ids) - 1) AS n FROM $v"; done | paste -sd'|' | sed 's/|/ UNION ALL /g')
		n=$(nd_psql "$s" -c "SELECT sum(n) FROM ($u) x")
		echo "  $s: $n edges from its $(wc -w <<<"$views") partitions, $(secs "$t0" "$(now)") s"
	done
	echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

# HOLD=FILE: keep every node running until FILE is removed (to profile or
# try a change on the loaded clusters; the nodes' directory is printed).
if [ -n "${HOLD:-}" ]; then
	touch "$HOLD"
	echo "holding the nodes in $ND_MN_DIR until $HOLD is removed"
	for n in coord one "${ALL[@]}"; do echo "  $n: port $(nd_port "$n")"; done
	while [ -e "$HOLD" ]; do sleep 5; done
fi
