#!/usr/bin/env bash
# What the first query of a new connection costs, against the same query
# once the connection is warm: what an application that opens a connection
# per request pays, or one behind a pooler that recycles its backends.
#
# In a throwaway cluster, for each size of ROWS (default 1M and 10M random
# codes, a primary key and a hamming index), with the pending list empty
# and then holding LIST entries (default 40,000; background_merge off so
# that it stays), NC (default 200) new connections per query kind each run
# six queries of that kind on different codes, timed by psql: the first is
# the connection's first statement, the sixth is warm.  The kinds: radius 3
# and KNN 10 on near copies of rows (2 bits away) and on random codes.  The
# baseline, same run: a primary-key lookup, whose first statement pays what
# PostgreSQL itself loads per session (the table's catalog entries).
#
#   ROWS="1000000 10000000" LIST=40000 NC=200 bash test/bench/run_first_query.sh
#
# A new backend also pays the kernel for mapping each page of shared
# buffers it touches (4 kB pages, unless huge pages are on): ND_PG_OPTS=
# "huge_pages=on shared_buffers=..." runs the same with huge pages (the
# kernel must have vm.nr_hugepages reserved).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ND_PG_OPTS=${ND_PG_OPTS:-"shared_buffers=2GB"}
export ROWS=${ROWS:-"1000000 10000000"} LIST=${LIST:-40000} NC=${NC:-200}

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
q -c "CREATE EXTENSION neardup"
echo "# $(q -c "SELECT version()" | cut -d' ' -f1-2); $ND_PG_OPTS; huge_pages $(q -c "SHOW huge_pages"), kernel HugePages_Total $(awk '/HugePages_Total/ {print $2}' /proc/meminfo); $(nproc) cores"
echo "# each figure: $NC new connections; first = the connection's first statement, warm = its sixth (ms)"
echo

# timings FILE: the connection's SQL in FILE, run in a new connection; prints
# the six statement times
timings() {
	q -f "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tr '\n' ' '
}

for rows in $ROWS; do
	q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS m"
	q -c "CREATE TABLE m (id bigint PRIMARY KEY, sh simhash64)"
	q -c "INSERT INTO m SELECT i, ('x' || md5('row ' || i))::bit(64)::bigint::simhash64
	      FROM generate_series(1, $rows) i"
	q -c "CREATE INDEX m_sh ON m USING hamming (sh) WITH (background_merge = off)"
	q -c "VACUUM ANALYZE m"
	for list in 0 $LIST; do
		if [ "$list" != 0 ]; then
			q -c "INSERT INTO m SELECT 100000000 + i, ('x' || md5('late ' || i))::bit(64)::bigint::simhash64
			      FROM generate_series(1, $list) i"
			q -c "ANALYZE m"
		fi
		read -r pending runs <<<"$(q -F' ' -c "SELECT pending_entries, (SELECT count(*) FROM hamming_runs('m_sh')) FROM hamming_stats('m_sh')")"
		# warm the shared buffers: every query reads them warm, first or not
		q -c "SET enable_seqscan = off" -c "SELECT count(*) FROM m WHERE sh <~> '0123456789abcdef' <= 3" \
			-c "SELECT id FROM m ORDER BY sh <~> '0123456789abcdef' LIMIT 10" -c "SELECT count(*) FROM m" >/dev/null
		echo "## $rows rows, $pending entries in the pending list, $runs run(s)"
		echo
		echo "| query | first p50 | first p99 | warm p50 | warm p99 | first / warm (p50) | first, less PostgreSQL's own first-statement cost, / warm (p50) |"
		echo "|---|---|---|---|---|---|---|"
		mapfile -t near < <(q -c "SELECT (sh::bigint # 5)::simhash64 FROM m
			WHERE id IN (SELECT (k::bigint * 104729) % $rows + 1 FROM generate_series(1, $NC * 6) k)")
		mapfile -t random < <(q -c "SELECT ('x' || md5('query ' || k))::bit(64)::bigint::simhash64
			FROM generate_series(1, $NC * 6) k")
		: >"$work/all"
		for kind in pk radius_near radius_random knn_near knn_random; do
			: >"$work/$kind"
			for ((c = 0; c < NC; c++)); do
				{
					echo '\timing on'
					for ((s = 0; s < 6; s++)); do
						k=$((c * 6 + s))
						case $kind in
							*_near) code=${near[k % ${#near[@]}]} ;;
							*) code=${random[k]} ;;
						esac
						case $kind in
							pk) echo "SELECT sh FROM m WHERE id = $(((k + 1) * 7919 % rows + 1));" ;;
							radius_*) echo "SELECT count(*) FROM m WHERE sh <~> '$code' <= 3;" ;;
							knn_*) echo "SELECT id FROM m ORDER BY sh <~> '$code' LIMIT 10;" ;;
						esac
					done
				} >"$work/sql"
				read -r -a t <<<"$(timings "$work/sql")"
				echo "$kind ${t[0]} ${t[5]}" >>"$work/all"
			done
		done
		q -c "CREATE TEMP TABLE t (kind text, first float8, warm float8)" \
			-c "\\copy t FROM '$work/all' WITH (DELIMITER ' ')" -c "
			WITH s AS (
			  SELECT kind,
			         percentile_cont(0.5) WITHIN GROUP (ORDER BY first) AS f50,
			         percentile_cont(0.99) WITHIN GROUP (ORDER BY first) AS f99,
			         percentile_cont(0.5) WITHIN GROUP (ORDER BY warm) AS w50,
			         percentile_cont(0.99) WITHIN GROUP (ORDER BY warm) AS w99
			  FROM t GROUP BY kind),
			pk AS (SELECT f50 - w50 AS own FROM s WHERE kind = 'pk')
			SELECT format('| %s | %s | %s | %s | %s | %sx | %s |', kind, round(f50::numeric, 2), round(f99::numeric, 2),
			              round(w50::numeric, 3), round(w99::numeric, 3), round((f50 / w50)::numeric, 1),
			              CASE WHEN kind = 'pk' THEN '(baseline)' ELSE round((greatest(f50 - own, 0) / w50)::numeric, 1) || 'x' END)
			FROM s, pk
			ORDER BY array_position(ARRAY['pk', 'radius_near', 'radius_random', 'knn_near', 'knn_random'], kind)"
		echo
	done
done
SCRIPT
