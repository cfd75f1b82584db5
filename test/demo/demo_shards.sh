#!/usr/bin/env bash
# `make demo-shards`: the block layout of doc/scale-out.md on one machine.
#
# Builds neardup and starts a throwaway PostgreSQL 15 cluster (as the
# unprivileged 'postgres' user) holding a coordinator database 'app' and
# ND_SHARDS shard databases; the coordinator reaches them through
# postgres_fdw over TCP with password logins, as it would reach shards on
# other machines.  It then follows the guide's steps, as the roles the guide
# names: a superuser creates postgres_fdw; the owner 'app_owner' creates the
# servers, the user mappings and the layout, and loads rows; the reader
# 'app_reader' runs radius and nearest-neighbour queries through the layout,
# each checked against a brute-force scan of the rows loaded.  The cluster
# is dropped however the script ends (pg_virtualenv's trap), so nothing is
# left running.
#
# Environment: ND_SHARDS_ROWS (random rows, default 100000; as many again
# are added as near copies, 11 per 50 rows), ND_SHARDS (shard databases,
# 2 to 8, default 3).  It exits non-zero if any answer differs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
# Only what the demo needs: no fuzzer, pg_cron or packaging tools.
export ND_DEPS=build
export ND_SHARDS_ROWS=${ND_SHARDS_ROWS:-100000} ND_SHARDS=${ND_SHARDS:-3}
case $ND_SHARDS_ROWS in '' | *[!0-9]*) echo "ND_SHARDS_ROWS must be a number of rows" >&2; exit 2 ;; esac
case $ND_SHARDS in [2-8]) ;; *) echo "ND_SHARDS must be 2 to 8" >&2; exit 2 ;; esac
[ "$ND_SHARDS_ROWS" -ge 1000 ] || { echo "ND_SHARDS_ROWS must be at least 1000" >&2; exit 2; }

nd_build
nd_stage
# The shell below runs inside the cluster, as root with the superuser's
# PGUSER/PGPASSWORD (pg_virtualenv's), over TCP to localhost.
nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
# Passwords of the two application roles: this cluster's only.
owner_pw=$(head -c 16 /dev/urandom | md5sum | cut -c1-24)
reader_pw=$(head -c 16 /dev/urandom | md5sum | cut -c1-24)
shards=$(seq 1 "$ND_SHARDS")
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
as_owner() { PGUSER=app_owner PGPASSWORD=$owner_pw sql "$@"; }
as_reader() { PGUSER=app_reader PGPASSWORD=$reader_pw sql "$@"; }
step() { printf '\n== %s\n' "$*"; }

step "1. As a superuser: the roles, the coordinator database 'app' and $ND_SHARDS shard databases"
sql -v owner_pw="$owner_pw" -v reader_pw="$reader_pw" <<'SQL'
CREATE ROLE app_owner LOGIN PASSWORD :'owner_pw';
CREATE ROLE app_reader LOGIN PASSWORD :'reader_pw';
SQL
sql -c 'CREATE DATABASE app OWNER app_owner'
for i in $shards; do sql -c "CREATE DATABASE shard$i OWNER app_owner"; done
echo "the cluster: localhost:$PGPORT"
echo "roles app_owner and app_reader (password logins: pg_hba.conf asks scram-sha-256 on 127.0.0.1)"
echo "databases: app (the coordinator), $(printf 'shard%s ' $shards)(the shards; on other machines in production)"

step "2. On every shard, as app_owner: neardup and the shard tables"
for i in $shards; do
	as_owner -d "shard$i" <<'SQL'
CREATE EXTENSION neardup;                 -- trusted: the database owner may create it
SELECT simhash_shard_create('fp', blocks => 4, partitions => 16) AS tables \gset
-- the reader's queries reach the shard as app_reader (its user mapping)
GRANT SELECT ON ALL TABLES IN SCHEMA public TO app_reader;
SQL
done
echo "each shard: $(as_owner -d shard1 -tAc "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'fp\_b%'") tables fp_b<copy>_p<partition>, each with a hamming index"

step "3. On the coordinator: postgres_fdw needs a superuser"
if err=$(as_owner -d app -c 'CREATE EXTENSION postgres_fdw' 2>&1); then
	echo "app_owner created postgres_fdw: the guide says it cannot" >&2
	exit 1
fi
echo "as app_owner: $(echo "$err" | grep -m1 ERROR)"
echo "    $(echo "$err" | grep -m1 HINT)"
sql -d app <<'SQL'
CREATE EXTENSION postgres_fdw;
GRANT USAGE ON FOREIGN DATA WRAPPER postgres_fdw TO app_owner;
SQL
echo "as the superuser: CREATE EXTENSION postgres_fdw; GRANT USAGE ON FOREIGN DATA WRAPPER postgres_fdw TO app_owner"

step "4. On the coordinator, as app_owner: a server and a user mapping per shard, then the layout"
as_owner -d app -c 'CREATE EXTENSION neardup'
for i in $shards; do
	as_owner -d app -v i="$i" -v port="$PGPORT" -v pw="$owner_pw" <<'SQL'
\set server s:i
\set db shard:i
CREATE SERVER :server FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host 'localhost', port :'port', dbname :'db',
             extensions 'neardup', async_capable 'true', batch_size '1000');
CREATE USER MAPPING FOR app_owner SERVER :server OPTIONS (user 'app_owner', password :'pw');
SQL
done
as_owner -d app -v servers="{$(printf 's%s,' $shards | sed 's/,$//')}" <<'SQL'
\pset footer off
SELECT server, count(*) AS partitions
FROM simhash_layout_create('fp', :'servers', blocks => 4, partitions => 16)
GROUP BY server ORDER BY server;
SQL

step "5. Load: $ND_SHARDS_ROWS random fingerprints and groups of near copies, into every copy"
as_owner -d app -v rows="$ND_SHARDS_ROWS" <<'SQL'
-- The rows as they come from the documents: (id, fingerprint).  Random
-- codes, and for every 50th row 11 near copies (1 to 3 bits flipped).
CREATE TABLE docs (id bigint PRIMARY KEY, sh simhash64 NOT NULL);
INSERT INTO docs
SELECT i, ('x' || substr(md5(i::text), 1, 16))::bit(64)::bigint::simhash64
FROM generate_series(1, :rows) i;
INSERT INTO docs
SELECT j * :rows + d.id,
       (d.sh::bigint # (1::bigint << ((d.id * 7 + j * 13) % 64)::int)
        # CASE WHEN j % 3 <> 0 THEN 1::bigint << ((d.id * 3 + j * 29 + 5) % 64)::int ELSE 0 END
        # CASE WHEN j % 4 = 0 THEN 1::bigint << ((d.id + j * 17 + 11) % 64)::int ELSE 0 END)::simhash64
FROM docs d, generate_series(1, 11) j
WHERE d.id % 50 = 0;
\timing on
SELECT simhash_layout_insert('fp', 'SELECT id, sh FROM docs') AS inserted \gset
\timing off
SELECT count(*) AS n FROM docs \gset
\echo :inserted rows inserted into each of the 4 copies (docs holds :n)
\pset footer off
SELECT block AS copy, row_count, consistent FROM simhash_layout_check('fp') ORDER BY block;
SQL

step "6. The reader: SELECT on the layout, and a user mapping with a password on every server"
as_owner -d app <<'SQL'
GRANT SELECT ON ALL TABLES IN SCHEMA public TO app_reader;   -- the copies, their partitions, docs
SQL
for i in $shards; do as_owner -d app -c "CREATE USER MAPPING FOR app_reader SERVER s$i OPTIONS (user 'app_reader')"; done
if err=$(as_reader -d app -c "SELECT * FROM simhash_layout_within('fp', '0123456789abcdef', 3)" 2>&1); then
	echo "a user mapping without a password worked for app_reader: the guide says it cannot" >&2
	exit 1
fi
echo "with a mapping without a password: $(echo "$err" | grep -m1 ERROR)"
echo "    $(echo "$err" | grep -m1 DETAIL)"
for i in $shards; do
	as_owner -d app -v server="s$i" -v pw="$reader_pw" <<'SQL'
ALTER USER MAPPING FOR app_reader SERVER :server OPTIONS (ADD password :'pw');
SQL
done
echo "with the password in each mapping, app_reader reads the layout;" \
	"USAGE on the servers: $(as_reader -d app -tAc "SELECT string_agg(srvname || ' ' || has_server_privilege(srvname, 'USAGE'), ', ' ORDER BY srvname) FROM pg_foreign_server") (not needed to read)"

step "7. As app_reader: radius 3 and the 10 nearest, through the layout, against a brute-force scan"
as_reader -d app <<'SQL'
\pset footer off
-- Query codes: the codes of 20 rows with near copies (planted), and 20
-- random codes (nothing within ~15 bits).
CREATE TEMP TABLE qcode AS
(SELECT 'planted' AS kind, sh AS q FROM docs WHERE id % 50 = 0 ORDER BY id LIMIT 20)
UNION ALL
(SELECT 'random', ('x' || substr(md5('q' || i), 1, 16))::bit(64)::bigint::simhash64
 FROM generate_series(1, 20) i);

\echo one radius query, its rows:
SELECT id, distance FROM simhash_layout_within('fp', (SELECT q FROM qcode LIMIT 1), 3) ORDER BY distance, id;
\echo its plan: one partition of each copy, read together (Async Foreign Scan)
SELECT 'EXPLAIN (COSTS OFF) ' || simhash_layout_within_sql('fp', (SELECT q FROM qcode LIMIT 1), 3) \gexec
SELECT string_agg(c.relname || ' on ' || s.srvname, ', ' ORDER BY c.relname) AS parts
FROM regexp_matches(simhash_layout_within_sql('fp', (SELECT q FROM qcode LIMIT 1), 3), '(fp_b[0-9]+_p[0-9]+)', 'g') m
JOIN pg_class c ON c.relname = m[1]
JOIN pg_foreign_table f ON f.ftrelid = c.oid
JOIN pg_foreign_server s ON s.oid = f.ftserver \gset
\echo the partitions and their servers: :parts
-- Brute force: bit_count of the XOR over every row of docs.
CREATE TEMP TABLE result AS
SELECT kind, q,
       (SELECT array_agg(id || ':' || distance ORDER BY id)
        FROM simhash_layout_within('fp', q, 3)) AS layout_within,
       (SELECT array_agg(id || ':' || bit_count((sh::bigint # q::bigint)::bit(64)) ORDER BY id)
        FROM docs WHERE bit_count((sh::bigint # q::bigint)::bit(64)) <= 3) AS brute_within,
       (SELECT array_agg(id || ':' || distance ORDER BY distance, id)
        FROM simhash_layout_nearest('fp', q, 10)) AS layout_nearest,
       (SELECT array_agg(id || ':' || d ORDER BY d, id)
        FROM (SELECT id, bit_count((sh::bigint # q::bigint)::bit(64)) AS d
              FROM docs ORDER BY d, id LIMIT 10) b) AS brute_nearest
FROM qcode;
\echo
\echo every query code, through the layout and by brute force:
SELECT kind, count(*) AS codes,
       coalesce(sum(cardinality(layout_within)), 0) AS radius_3_rows,
       count(*) FILTER (WHERE layout_within IS DISTINCT FROM brute_within) AS radius_3_differ,
       min(split_part(layout_nearest[10], ':', 2)::int) || '..' || max(split_part(layout_nearest[10], ':', 2)::int)
           AS knn_10th_distance,
       count(*) FILTER (WHERE layout_nearest IS DISTINCT FROM brute_nearest) AS knn_10_differ
FROM result GROUP BY kind ORDER BY kind;
SELECT count(*) FILTER (WHERE layout_within IS DISTINCT FROM brute_within
                           OR layout_nearest IS DISTINCT FROM brute_nearest) AS differ,
       count(*) AS codes, sum(cardinality(layout_within)) AS found
FROM result \gset
\echo :codes query codes, :found rows within radius 3, :differ answers differ from the brute-force scan
SELECT :differ = 0 AND :found > 0 AS all_equal \gset
\if :all_equal
\else
SELECT kind, q, layout_within, brute_within, layout_nearest, brute_nearest FROM result
WHERE layout_within IS DISTINCT FROM brute_within OR layout_nearest IS DISTINCT FROM brute_nearest;
DO $$ BEGIN RAISE EXCEPTION 'an answer through the layout differs from the brute-force scan'; END $$;
\endif
SQL

step "8. Done: the throwaway cluster is dropped now"
SCRIPT
