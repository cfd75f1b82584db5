#!/usr/bin/env bash
# End-to-end: the update path between released versions.
#
#   - 0.1's install script is the released one, byte for byte (its SHA-256
#     is recorded here when a version is released; an edit fails this test).
#   - The library defines every C symbol that any install or update script
#     names (older scripts keep working against a newer library).
#   - CREATE EXTENSION neardup VERSION '0.1', tables with fingerprints, GIN
#     and GiST indexes and a GIN expression index on minhash_bands(...),
#     then ALTER EXTENSION neardup UPDATE: every old index still answers
#     what a sequential scan answers, and the extension's catalog (every
#     member with its definition, flags, support functions, operator class
#     members, privileges and comment) equals that of a fresh CREATE
#     EXTENSION neardup in another database; so does an install of each
#     later released version (0.2, 0.3, 0.3.1) updated to the default.
#   - Updating to a version that does not exist fails with PostgreSQL's
#     error and changes nothing.
# Prints TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib
export ND_ROOT=$ROOT

nd_in_cluster bash -s <<'SCRIPT'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
work=$(mktemp -d /tmp/nd-upgrade.XXXXXX)
trap 'rm -rf "$work"' EXIT

# --- released scripts are never edited -------------------------------------
declare -A released=(
	[sql/neardup--0.1.sql]=0d87f2972fd43078f5db0fdd2c7b16b11e6533700938140ae972364ed6a9d18f
	[sql/neardup--0.1--0.2.sql]=58a0a1b883cb1c312e77704ff129c1a4b812c864058a01c5e5288e4b73913348
	[sql/neardup--0.2--0.3.sql]=a678074077db9e3fbede41a1f582cd296e50a7ac290665d878ac48e5fc73778f
	[sql/neardup--0.3--0.3.1.sql]=f55f3c2a2ebea3cc7fccb4b61f4e332792312bf70e43af99e4b10d912be329f6
)
for f in "${!released[@]}"; do
	sum=$(sha256sum "$ND_ROOT/$f" | cut -d' ' -f1)
	[ "$sum" = "${released[$f]}" ]
	ok $? "$f is the released script (sha256 $sum)"
done

# --- the library serves every symbol any script names ----------------------
so=$(find "$ND_STAGE" -name neardup.so | head -1)
nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' | sort -u >"$work/defined"
cat "$ND_ROOT"/sql/neardup--*.sql | grep -oE "'MODULE_PATHNAME', *'[A-Za-z0-9_]+'" |
	grep -oE "'[A-Za-z0-9_]+'$" | tr -d "'" | sort -u >"$work/named"
missing=$(comm -23 "$work/named" "$work/defined" | tr '\n' ' ')
nsyms=$(wc -l <"$work/named")
[ -z "$missing" ] && [ "$nsyms" -gt 50 ]
ok $? "neardup.so defines all $nsyms C symbols the scripts name${missing:+ (missing: $missing)}"

# --- an install of 0.1 with data and indexes, then the update --------------
psql_q -c "CREATE DATABASE upd" -c "CREATE DATABASE fresh"
psql_q -d upd -c "CREATE EXTENSION neardup VERSION '0.1'" -f "$ND_E2E_LIB/index_check.sql"
[ "$(psql_q -d upd -c "SELECT extversion FROM pg_extension WHERE extname = 'neardup'")" = 0.1 ]
ok $? "CREATE EXTENSION neardup VERSION '0.1' installs 0.1"

psql_q -d upd \
	-c "CREATE TABLE docs (id bigint PRIMARY KEY, sh simhash64, body text, sig int4[])" \
	-c "INSERT INTO docs SELECT i, nd_row_code(i) FROM generate_series(1, 30000) i" \
	-c "UPDATE docs SET body = 'document ' || (id % 700) || ' about topic ' || (id % 37) || ' with words ' || (id % 11) || ' and more words here' WHERE id <= 3000" \
	-c "UPDATE docs SET sig = minhash(body) WHERE body IS NOT NULL" \
	-c "CREATE INDEX docs_gin ON docs USING gin (sh)" \
	-c "CREATE INDEX docs_gist ON docs USING gist (sh)" \
	-c "CREATE INDEX docs_bands ON docs USING gin (minhash_bands(sig, 16, 8))" \
	-c "ANALYZE docs"

# what the band index answers before the update (seq scan, as the oracle)
band_query="SELECT string_agg(a.id || ':' || b.id, ',' ORDER BY a.id, b.id) FROM docs a JOIN docs b
	ON minhash_similar(b.sig, a.sig, 0.6, 16, 8) AND a.id < b.id WHERE a.id % 97 = 0 AND a.sig IS NOT NULL"
psql_q -d upd -c "SET enable_indexscan = off" -c "SET enable_bitmapscan = off" -c "$band_query" >"$work/bands_seq"

# gist_scan: how a new session scans docs_gist for SELECT sh ... ORDER BY <~>.
gist_scan() {
	psql_q -d upd -c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" \
		-c "EXPLAIN (COSTS OFF) SELECT sh FROM docs ORDER BY sh <~> nd_center(3) LIMIT 5" |
		grep -oE '(Index Only Scan|Index Scan) using docs_gist' | head -1
}
gist_before=$(gist_scan)
psql_q -d upd -c "ALTER EXTENSION neardup UPDATE"
default=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$ND_ROOT/neardup.control")
[ "$(psql_q -d upd -c "SELECT extversion FROM pg_extension WHERE extname = 'neardup'")" = "$default" ]
ok $? "ALTER EXTENSION neardup UPDATE reaches the default version $default"

# every old index answers as a sequential scan does, after the update
PGDATABASE=upd nd_check_ok "GIN index built under 0.1 answers as a seq scan after the update" docs docs_gin docs_gist
PGDATABASE=upd nd_check_ok "GiST index built under 0.1 answers as a seq scan after the update" docs docs_gist docs_gin
# 0.3 took the fetch function out of the GiST operator family (GiST's
# index-only scans are not interlocked with VACUUM): a new session plans a
# plain index scan of the old index where 0.1 planned an index-only one.
[ "$gist_before" = "Index Only Scan using docs_gist" ] && [ "$(gist_scan)" = "Index Scan using docs_gist" ]
ok $? "GiST index built under 0.1: an index-only scan before the update, a plain index scan after it (before: $gist_before)"
psql_q -d upd -c "SET enable_seqscan = off" -c "EXPLAIN (COSTS OFF) $band_query" >"$work/bands_plan"
psql_q -d upd -c "SET enable_seqscan = off" -c "$band_query" >"$work/bands_idx"
grep -q "docs_bands" "$work/bands_plan" && [ -s "$work/bands_seq" ] && cmp -s "$work/bands_seq" "$work/bands_idx"
ok $? "minhash_bands expression index built under 0.1 answers as a seq scan after the update ($(tr ',' '\n' <"$work/bands_seq" | wc -l) pairs)"

# --- the updated catalog equals a fresh install ----------------------------
psql_q -d fresh -c "CREATE EXTENSION neardup"
for db in upd fresh; do
	psql_q -d "$db" -f "$ND_E2E_LIB/extension_catalog.sql" \
		-c "SELECT nd_extension_catalog('neardup')" >"$work/catalog_$db"
done
members=$(grep -c ' | comment=' "$work/catalog_fresh" || true)
if diff "$work/catalog_fresh" "$work/catalog_upd" >"$work/catalog.diff"; then
	ok 0 "0.1 + ALTER EXTENSION UPDATE has the catalog of a fresh install ($members members)"
else
	head -40 "$work/catalog.diff" | sed 's/^/# /'
	ok 1 "0.1 + ALTER EXTENSION UPDATE has the catalog of a fresh install"
fi
# the same from each released version's own install (0.2, 0.3, 0.3.1: 0.1's
# script and the updates up to it), updated to the default
for from in 0.2 0.3 0.3.1; do
	psql_q -c "CREATE DATABASE from_${from//./_}"
	psql_q -d "from_${from//./_}" -c "CREATE EXTENSION neardup VERSION '$from'" -c "ALTER EXTENSION neardup UPDATE" \
		-f "$ND_E2E_LIB/extension_catalog.sql" -c "SELECT nd_extension_catalog('neardup')" >"$work/catalog_$from"
	if diff "$work/catalog_fresh" "$work/catalog_$from" >"$work/catalog.diff"; then
		ok 0 "$from + ALTER EXTENSION UPDATE has the catalog of a fresh install"
	else
		head -40 "$work/catalog.diff" | sed 's/^/# /'
		ok 1 "$from + ALTER EXTENSION UPDATE has the catalog of a fresh install"
	fi
done
# the comparison sees a difference when there is one (the control)
psql_q -d fresh -c "COMMENT ON FUNCTION hamming_distance(simhash64, simhash64) IS 'changed'" \
	-c "SELECT nd_extension_catalog('neardup')" >"$work/catalog_changed"
! cmp -s "$work/catalog_fresh" "$work/catalog_changed"
ok $? "the catalog comparison catches a changed comment (control)"

# --- an update to a version that does not exist -----------------------------
out=$(psql_q -d upd -c "ALTER EXTENSION neardup UPDATE TO '9.9'" 2>&1 || true)
echo "# $out"
[[ $out == *'extension "neardup" has no update path from version "'"$default"'" to version "9.9"'* ]] &&
	[ "$(psql_q -d upd -c "SELECT extversion FROM pg_extension WHERE extname = 'neardup'")" = "$default" ] &&
	[ "$(psql_q -d upd -c "SELECT count(*) FROM docs WHERE sh <~> nd_center(1) <= 5")" -gt 0 ]
ok $? "ALTER EXTENSION UPDATE TO a version that does not exist fails and changes nothing"
SCRIPT
