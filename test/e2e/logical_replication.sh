#!/usr/bin/env bash
# End-to-end: logical replication of simhash64 and MinHash columns between
# two throwaway clusters on this machine.  The publisher is the usual
# throwaway cluster (wal_level = logical); the subscriber is a cluster of
# its own (initdb, pg_ctl as the postgres user), with the staged extension.
# Checks:
#   - a subscriber database without the extension cannot take the table:
#     CREATE TABLE fails with 42704 (type "simhash64" does not exist), and
#     the publisher's rows are untouched;
#   - the initial copy and then ongoing inserts, updates and deletes arrive
#     (text and binary subscriptions: simhash64's output/input and
#     send/receive functions), row for row;
#   - the subscriber's own hamming, GIN and GiST indexes on sh, and its GIN
#     index on minhash_bands(sig, ...), answer as its sequential scans do
#     (so as the publisher's rows do) after the copy and after the changes.
# TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib
export ND_PG_OPTS="wal_level=logical"

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
BIN=/usr/lib/postgresql/15/bin
nd_second_cluster nd-subscriber
sdir=$ND2_DIR port2=$ND2_PORT

# --- the publisher ----------------------------------------------------------------
psql_q -c "CREATE EXTENSION neardup"
psql_q <<'SQL'
CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL, sh simhash64, sig int4[]);
-- 20,000 texts of 40 words from 3,000, and 2,000 edited copies of some of them
CREATE FUNCTION doc_text(seed bigint, words int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg('w' || ('x' || substr(md5(seed || '/' || j), 1, 6))::bit(24)::int % 3000, ' ' ORDER BY j)
    FROM generate_series(1, words) j $$;
INSERT INTO docs (id, body) SELECT i, doc_text(i, 40) FROM generate_series(1, 20000) i;
INSERT INTO docs (id, body)
SELECT 100000 + id, regexp_replace(body, '^\S+', 'edited') FROM docs WHERE id <= 2000;
UPDATE docs SET sh = simhash(body), sig = minhash(body);
CREATE PUBLICATION pub FOR TABLE docs;
SQL
# digest [DATABASE]: the rows of docs, as one line.
digest() {
	psql -X -At ${1:+-d "$1"} -c "SELECT count(*) || ' rows, ' || md5(string_agg(id || ':' || body || ':' || coalesce(sh::text, '-') || ':' || coalesce(sig::text, '-'), ',' ORDER BY id)) FROM docs"
}
echo "# publisher: $(digest)"

# --- the subscriber ---------------------------------------------------------------
runuser -u postgres -- "$BIN/initdb" -D "$sdir/data" -A trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
runuser -u postgres -- tee -a "$sdir/data/postgresql.conf" >/dev/null <<EOF
port = $port2
listen_addresses = ''
unix_socket_directories = '$sdir'
extension_destdir = '$ND_STAGE'
lc_messages = 'C'
EOF
runuser -u postgres -- "$BIN/pg_ctl" -D "$sdir/data" -l "$sdir/log" -w start >/dev/null
sub() { PGHOST=$sdir PGPORT=$port2 PGPASSWORD='' "$@"; }
conninfo="host=$PGHOST port=$PGPORT user=$PGUSER password=$PGPASSWORD dbname=postgres"

# A database without the extension: the table cannot be created.
sub psql_q -c "CREATE DATABASE plain"
out=$(sub psql -X -At -v VERBOSITY=verbose -d plain \
	-c "CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL, sh simhash64, sig int4[])" 2>&1 || true)
echo "# ${out%%$'\n'*}"
before=$(digest)
[[ $out == *42704*simhash64* ]] && [ "$before" = "$(digest)" ] && r=0 || r=1
ok $r "a subscriber without the extension: CREATE TABLE fails with 42704 (type simhash64 does not exist); the publisher is untouched"

# Two subscriber databases: text and binary transfer.
for db in subtext subbin; do
	sub psql_q -c "CREATE DATABASE $db"
	sub psql_q -d "$db" -c "CREATE EXTENSION neardup" -f "$ND_E2E_LIB/index_check.sql" \
		-c "CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL, sh simhash64, sig int4[])" \
		-c "CREATE INDEX docs_ham ON docs USING hamming (sh) WITH (pending_limit = 64)" \
		-c "CREATE INDEX docs_gin ON docs USING gin (sh)" \
		-c "CREATE INDEX docs_gist ON docs USING gist (sh)" \
		-c "CREATE INDEX docs_bands ON docs USING gin (minhash_bands(sig, 16, 8))"
done
psql_q -c "SELECT pg_create_logical_replication_slot('subtext', 'pgoutput')" \
	-c "SELECT pg_create_logical_replication_slot('subbin', 'pgoutput')" >/dev/null
sub psql_q -d subtext -c "CREATE SUBSCRIPTION subtext CONNECTION '$conninfo' PUBLICATION pub WITH (create_slot = false, slot_name = 'subtext')"
sub psql_q -d subbin -c "CREATE SUBSCRIPTION subbin CONNECTION '$conninfo' PUBLICATION pub WITH (create_slot = false, slot_name = 'subbin', binary = true)"

# caught_up DB: the subscriber has the publisher's rows (bounded wait).
caught_up() {
	local want i
	want=$(digest)
	for ((i = 0; i < 600; i++)); do
		[ "$(sub digest "$1" 2>/dev/null)" = "$want" ] && return 0
		sleep 0.2
	done
	return 1
}
# bands_check DB: minhash_similar through the band index = a seq scan, for
# 50 query signatures.
bands_check() {
	sub psql_q -d "$1" <<'SQL'
CREATE TEMP TABLE q AS SELECT id, sig FROM docs WHERE id % 400 = 0;
CREATE TEMP TABLE by_seq AS
SELECT q.id AS q, d.id FROM q, LATERAL (SELECT d.id FROM docs d WHERE minhash_similar(d.sig, q.sig, 0.5, 16, 8)) d;
SET enable_seqscan = off;
CREATE TEMP TABLE by_index AS
SELECT q.id AS q, d.id FROM q, LATERAL (SELECT d.id FROM docs d WHERE minhash_similar(d.sig, q.sig, 0.5, 16, 8)) d;
SELECT (SELECT count(*) FROM by_index) || ' found, '
       || (SELECT count(*) FROM ((TABLE by_seq EXCEPT ALL TABLE by_index) UNION ALL (TABLE by_index EXCEPT ALL TABLE by_seq)) x)
       || ' differ';
SELECT sig AS q400 FROM docs WHERE id = 400 \gset
EXPLAIN (COSTS OFF) SELECT d.id FROM docs d WHERE minhash_similar(d.sig, :'q400', 0.5, 16, 8);
SQL
}
check_all() {
	local db=$1 label=$2 codes="ARRAY(SELECT sh FROM docs WHERE id % 997 = 0 OR id IN (100001, 100002))"
	caught_up "$db" && r=0 || r=1
	ok $r "$label: $db has the publisher's rows ($(sub psql -X -At -d "$db" -c "SELECT count(*) FROM docs") rows)"
	# each index alone (the others dropped in a transaction rolled back)
	for idx in docs_ham docs_gin docs_gist; do
		PGHOST=$sdir PGPORT=$port2 PGPASSWORD='' PGDATABASE=$db \
			nd_check_ok "$label: $db's $idx answers as its seq scan" docs "$idx" \
			"$(echo docs_ham docs_gin docs_gist | tr ' ' '\n' | grep -vx "$idx" | paste -sd,)" "$codes" '{0,3,8}'
	done
	out=$(bands_check "$db")
	[[ $out == *" 0 differ"* ]] && [[ $out != "0 found"* ]] && [[ $out == *"Bitmap Index Scan on docs_bands"* ]] && r=0 || r=1
	out=${out%%$'\n'*}
	ok $r "$label: $db's band index answers minhash_similar as its seq scan ($out)"
}
check_all subtext "initial copy (text)"
check_all subbin "initial copy (binary)"

# --- ongoing changes ----------------------------------------------------------------
psql_q <<'SQL'
INSERT INTO docs (id, body) SELECT i, doc_text(i, 40) FROM generate_series(20001, 25000) i;
UPDATE docs SET sh = simhash(body), sig = minhash(body) WHERE sh IS NULL;
UPDATE docs SET body = body || ' appended', sh = simhash(body || ' appended'), sig = minhash(body || ' appended')
WHERE id % 13 = 0;
DELETE FROM docs WHERE id % 17 = 0;
UPDATE docs SET sh = NULL, sig = NULL WHERE id % 101 = 0;
SQL
echo "# publisher after changes: $(digest)"
check_all subtext "after inserts, updates, deletes (text)"
check_all subbin "after inserts, updates, deletes (binary)"
echo "1..$n"
SCRIPT
