#!/usr/bin/env bash
# End-to-end: pg_dump and restore of a database that uses every part of
# the extension, in a throwaway cluster.  The source database has:
#   - a table of texts with simhash64 and MinHash columns and every index
#     kind the extension offers on them: hamming, GIN and GiST on sh, btree
#     and hash on sh, a GIN expression index on minhash_bands(sig, 16, 8),
#     and the near-duplicate exclusion constraint (hamming);
#   - a partitioned table with a partitioned hamming index;
#   - a materialized view with a hamming index, one of simhash_agg()
#     fingerprints (the aggregate's state), a view that joins on <~>;
#   - a cluster state kept by simhash_clusters_update.
# It is dumped with pg_dump -Fc and restored with pg_restore -j 2, and
# dumped as plain SQL and restored through psql (both run pg_dump's
# restricted search_path).  Checks:
#   - both restores end without an error;
#   - a fixed set of 14 queries (radius search through each index,
#     KNN, MinHash bands, the views, the partitions, the cluster state)
#     returns the same rows in the restored databases as in the source;
#   - in each restored database every index answers as its seq scan, and
#     the constraint still refuses a near-copy;
#   - a restore into a database where the extension is installed in
#     another schema fails with PostgreSQL's error (type public.simhash64
#     does not exist), and the source is untouched.
# TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
work=$(mktemp -d /tmp/nd-dump.XXXXXX)
chmod 777 "$work"
trap 'rm -rf "$work"' EXIT

psql_q -c "CREATE DATABASE src"
psql_q -d src -c "CREATE EXTENSION neardup" -f "$ND_E2E_LIB/index_check.sql"
psql_q -d src <<'SQL'
CREATE FUNCTION doc_text(seed bigint, words int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg('w' || ('x' || substr(md5(seed || '/' || j), 1, 6))::bit(24)::int % 3000, ' ' ORDER BY j)
    FROM generate_series(1, words) j $$;
CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL, sh simhash64, sig int4[]);
INSERT INTO docs (id, body) SELECT i, doc_text(i, 40) FROM generate_series(1, 10000) i;
INSERT INTO docs (id, body) SELECT 100000 + id, regexp_replace(body, '^\S+', 'edited') FROM docs WHERE id <= 1000;
UPDATE docs SET sh = simhash(body), sig = minhash(body);
CREATE INDEX docs_ham ON docs USING hamming (sh);
CREATE INDEX docs_gin ON docs USING gin (sh);
CREATE INDEX docs_gist ON docs USING gist (sh);
CREATE INDEX docs_btree ON docs (sh);
CREATE INDEX docs_hash ON docs USING hash (sh);
CREATE INDEX docs_bands ON docs USING gin (minhash_bands(sig, 16, 8));

-- one row per group of near-copies: the exclusion constraint
CREATE TABLE tickets (id bigint PRIMARY KEY, sh simhash64,
                      EXCLUDE USING hamming (hamming_ball(sh, 3) WITH &&));
INSERT INTO tickets SELECT id, sh FROM docs WHERE id <= 5000 ON CONFLICT DO NOTHING;

CREATE TABLE parted (id bigint, sh simhash64) PARTITION BY RANGE (id);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (50000);
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (50000) TO (MAXVALUE);
INSERT INTO parted SELECT id, sh FROM docs;
CREATE INDEX parted_ham ON parted USING hamming (sh);

CREATE MATERIALIZED VIEW even_docs AS SELECT id, sh FROM docs WHERE id % 2 = 0;
CREATE INDEX even_docs_ham ON even_docs USING hamming (sh);
CREATE MATERIALIZED VIEW word_fp AS
SELECT id % 100 AS grp, simhash_agg(w, (length(w) % 3 + 1)::real) AS fp
FROM docs, regexp_split_to_table(body, ' ') AS w WHERE id <= 2000 GROUP BY 1;
CREATE VIEW near_pairs AS
SELECT a.id AS a, b.id AS b, a.sh <~> b.sh AS d FROM docs a JOIN docs b ON a.sh <~> b.sh <= 3 AND a.id < b.id;

CREATE TABLE dedup_cluster (id bigint PRIMARY KEY, cluster_id bigint NOT NULL);
SELECT count(*) FROM simhash_clusters_update('dedup_cluster', 'docs', 'id', 'sh', NULL, max_distance => 3);
ANALYZE;
SQL

# The queries compared across databases (each forced onto its index).
cat >"$work/queries.sql" <<'SQL'
SET enable_seqscan = off;
SELECT 'ham radius', md5(string_agg(id::text, ',' ORDER BY id)) FROM docs WHERE sh <~> (SELECT sh FROM docs WHERE id = 7) <= 8;
SELECT 'knn', md5(string_agg(id || ':' || d, ',' ORDER BY d, id)) FROM (SELECT id, sh <~> (SELECT sh FROM docs WHERE id = 7) AS d FROM docs ORDER BY sh <~> (SELECT sh FROM docs WHERE id = 7) LIMIT 20) x;
SELECT 'equal', md5(string_agg(id::text, ',' ORDER BY id)) FROM docs WHERE sh = (SELECT sh FROM docs WHERE id = 7);
SELECT 'ordered', md5(string_agg(id::text, ',' ORDER BY sh, id)) FROM (SELECT id, sh FROM docs ORDER BY sh LIMIT 500) x;
SELECT 'bands', md5(string_agg(id::text, ',' ORDER BY id)) FROM docs d WHERE minhash_similar(d.sig, (SELECT sig FROM docs WHERE id = 7), 0.5, 16, 8);
SELECT 'verified', md5(string_agg(d.id::text, ',' ORDER BY d.id)) FROM docs q, docs d WHERE q.id = 7 AND simhash_similar_exact(d.sh, q.sh, d.body, q.body, 0.8);
SELECT 'tickets', count(*), md5(string_agg(id::text, ',' ORDER BY id)) FROM tickets;
SELECT 'parted', md5(string_agg(id::text, ',' ORDER BY id)) FROM parted WHERE sh <~> (SELECT sh FROM docs WHERE id = 100007) <= 5;
SELECT 'matview', md5(string_agg(id::text, ',' ORDER BY id)) FROM even_docs WHERE sh <~> (SELECT sh FROM docs WHERE id = 8) <= 10;
SELECT 'agg', md5(string_agg(grp || ':' || fp, ',' ORDER BY grp)) FROM word_fp;
SELECT 'view', count(*), md5(string_agg(a || '-' || b || ':' || d, ',' ORDER BY a, b)) FROM near_pairs;
SELECT 'clusters', count(*), md5(string_agg(id || ':' || cluster_id, ',' ORDER BY id)) FROM dedup_cluster;
SELECT 'all rows', count(*), md5(string_agg(id || body || sh || sig::text, ',' ORDER BY id)) FROM docs;
REFRESH MATERIALIZED VIEW even_docs;
SELECT 'refreshed', md5(string_agg(id::text, ',' ORDER BY id)) FROM even_docs WHERE sh <~> (SELECT sh FROM docs WHERE id = 8) <= 10;
SQL
answers() { psql -X -At -v ON_ERROR_STOP=1 -d "$1" -f "$work/queries.sql" 2>&1; }
answers src >"$work/src.out"
echo "# source: $(wc -l <"$work/src.out") answers, e.g. $(grep '^view' "$work/src.out")"

# --- -Fc + pg_restore -j 2, and plain SQL through psql ----------------------------
pg_dump -Fc -f "$work/dump.fc" src
pg_dump -f "$work/dump.sql" src
psql_q -c "CREATE DATABASE custom" -c "CREATE DATABASE plain"
pg_restore -j 2 -d custom "$work/dump.fc" >"$work/custom.err" 2>&1 && r=0 || r=1
[ -s "$work/custom.err" ] && { sed 's/^/# pg_restore: /' "$work/custom.err" | head -5; r=1; }
ok $r "pg_dump -Fc | pg_restore -j 2 restores without an error"
psql -X -q -v ON_ERROR_STOP=1 -d plain -f "$work/dump.sql" >"$work/plain.err" 2>&1 && r=0 || r=1
grep -q ERROR "$work/plain.err" && { grep ERROR "$work/plain.err" | sed 's/^/# psql: /' | head -5; r=1; }
ok $r "a plain-format dump restores through psql without an error"

for db in custom plain; do
	answers "$db" >"$work/$db.out"
	diff "$work/src.out" "$work/$db.out" >"$work/$db.diff" && r=0 || r=1
	[ $r = 0 ] || sed 's/^/# /' "$work/$db.diff" | head -10
	ok $r "$db: the $(wc -l <"$work/src.out") queries (radius, KNN, equality, order, bands, verified lookup, constraint, partitions, matviews, aggregate, view, clusters, rows, refresh) answer as in the source"
	for idx in docs_ham docs_gin docs_gist; do
		PGDATABASE=$db nd_check_ok "$db: $idx answers as its seq scan" docs "$idx" \
			"$(echo docs_ham docs_gin docs_gist docs_btree docs_hash | tr ' ' '\n' | grep -vx "$idx" | paste -sd,)" \
			"ARRAY(SELECT sh FROM docs WHERE id % 499 = 0 OR id = 100007)" '{0,3,8}'
	done
	near=$(psql -X -At -d "$db" -v VERBOSITY=verbose \
		-c "INSERT INTO tickets SELECT -1, nd_flip(sh, 1, 5) FROM tickets ORDER BY id LIMIT 1" 2>&1 || true)
	check=$(nd_ham_check docs_ham true "$db")
	[[ $near == *23P01* ]] && [ "$check" = passed ] && r=0 || r=1
	ok $r "$db: the constraint refuses a near-copy (${near%%$'\n'*}); hamming_check(docs_ham, true) $check"
done

# --- into a database where the extension lives in another schema ------------------
before=$(answers src | md5sum)
psql_q -c "CREATE DATABASE elsewhere"
psql_q -d elsewhere -c "CREATE SCHEMA nd" -c "CREATE EXTENSION neardup SCHEMA nd"
pg_restore -d elsewhere "$work/dump.fc" >"$work/elsewhere.err" 2>&1 && r=1 || r=0
echo "# $(grep -m1 'ERROR' "$work/elsewhere.err")"
grep -q 'type "public.simhash64" does not exist' "$work/elsewhere.err" || r=1
[ "$(answers src | md5sum)" = "$before" ] || r=1
ok $r "a restore where the extension is in another schema fails (type public.simhash64 does not exist); the source is untouched"
echo "1..$n"
SCRIPT
