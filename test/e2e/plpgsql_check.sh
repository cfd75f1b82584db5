#!/usr/bin/env bash
# Static check of every PL/pgSQL function of the extension with
# plpgsql_check (Debian's postgresql-15-plpgsql-check), all warnings on,
# in a throwaway cluster.  No finding of level error; every other finding
# must be one of those justified below (function, level, message) -- a new
# warning fails the test until it is fixed or justified here.  TAP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"
[ -n "${ND_STAGE:-}" ] || { nd_build; nd_stage; }
export ND_E2E_LIB=$ROOT/test/e2e/lib

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
. "$ND_E2E_LIB/common.sh"
psql_q -c "CREATE EXTENSION neardup" -c "CREATE EXTENSION plpgsql_check"
psql_q <<'SQL'
CREATE TABLE justified (fn text, level text, message text, why text);
INSERT INTO justified VALUES
  -- The dedup helpers run SQL the caller passes on purpose (a pairs or
  -- clusters query, an ORDER BY for the row to keep), with the caller's
  -- privileges; identifiers are quoted with format('%I'), and the texts are
  -- documented as SQL (doc/dedup.md, doc/security.md).
  ('dedup_representatives', 'security', 'text type variable is not sanitized', 'runs the caller''s clusters query by design'),
  ('dedup_keep_one', 'security', 'text type variable is not sanitized', 'runs the caller''s query and keep_order by design'),
  ('dedup_keep_order_problem', 'security', 'text type variable is not sanitized', 'plans the caller''s keep_order by design, over no rows'),
  ('simhash_pairs_since', 'security', 'text type variable is not sanitized', 'identifiers: regclass arguments (quoted on output) and format(%I) of name arguments'),
  ('simhash_clusters_update', 'security', 'text type variable is not sanitized', 'identifiers: regclass arguments (quoted on output) and format(%I) of name arguments'),
  -- RETURN QUERY fills the OUT columns, which plpgsql_check's extra
  -- warnings do not follow.
  ('dedup_representatives', 'warning extra', 'OUT variable "id" is maybe unmodified', 'RETURN QUERY'),
  ('dedup_representatives', 'warning extra', 'OUT variable "cluster_id" is maybe unmodified', 'RETURN QUERY'),
  ('dedup_representatives', 'warning extra', 'OUT variable "representative" is maybe unmodified', 'RETURN QUERY'),
  ('simhash_clusters_update', 'warning extra', 'OUT variable "id" is maybe unmodified', 'RETURN QUERY'),
  ('simhash_clusters_update', 'warning extra', 'OUT variable "old_cluster_id" is maybe unmodified', 'RETURN QUERY'),
  ('simhash_clusters_update', 'warning extra', 'OUT variable "cluster_id" is maybe unmodified', 'RETURN QUERY'),
  -- The block layout's functions build SQL with format(): identifiers by
  -- %I, literals by %L, numbers and regclass outputs (quoted) by %s;
  -- simhash_layout_insert runs the caller's query by design.  Those that
  -- create, write or move tables do it through EXECUTE, which
  -- plpgsql_check does not see when it suggests STABLE.
  ('simhash_shard_create', 'security', 'text type variable is not sanitized', 'format(%I, %L) and numbers'),
  ('simhash_layout_create', 'security', 'text type variable is not sanitized', 'format(%I, %L) and numbers'),
  ('simhash_layout_nearest', 'security', 'text type variable is not sanitized', 'format(%L), regclass output and numbers'),
  ('simhash_layout_insert', 'security', 'text type variable is not sanitized', 'runs the caller''s query by design'),
  ('simhash_layout_move', 'security', 'text type variable is not sanitized', 'format(%I, %L), partition bounds from pg_get_expr'),
  ('simhash_layout_check', 'security', 'text type variable is not sanitized', 'format(%I) and regclass outputs'),
  ('simhash_layout_delete', 'security', 'text type variable is not sanitized', 'format(%I, %L) and numbers; the codes a list built by format(%L)'),
  ('simhash_layout_move_partition', 'security', 'text type variable is not sanitized', 'format(%I, %L), regclass outputs, partition bounds from pg_get_expr'),
  ('simhash_shard_create', 'performance', 'routine is marked as VOLATILE, should be STABLE', 'creates tables through EXECUTE'),
  ('simhash_layout_create', 'performance', 'routine is marked as VOLATILE, should be STABLE', 'creates tables through EXECUTE'),
  ('simhash_layout_insert', 'performance', 'routine is marked as VOLATILE, should be STABLE', 'inserts through EXECUTE'),
  ('simhash_layout_delete', 'performance', 'routine is marked as VOLATILE, should be STABLE', 'deletes through EXECUTE'),
  ('simhash_layout_move', 'performance', 'routine is marked as VOLATILE, should be STABLE', 'moves rows and tables through EXECUTE'),
  ('simhash_layout_within', 'warning extra', 'OUT variable "id" is maybe unmodified', 'RETURN QUERY'),
  ('simhash_layout_within', 'warning extra', 'OUT variable "sh" is maybe unmodified', 'RETURN QUERY'),
  ('simhash_layout_within', 'warning extra', 'OUT variable "distance" is maybe unmodified', 'RETURN QUERY'),
  ('simhash_layout_within_rows', 'warning extra', 'OUT variable "id" is maybe unmodified', 'RETURN QUERY'),
  ('simhash_layout_within_rows', 'warning extra', 'OUT variable "sh" is maybe unmodified', 'RETURN QUERY'),
  ('simhash_layout_within_rows', 'warning extra', 'OUT variable "distance" is maybe unmodified', 'RETURN QUERY'),
  -- 0.1's bodies (released, not replaced by 0.2): a name assigned to
  -- text / an int4 to an int8, once per call.
  ('dedup_check_column', 'performance', 'target type is different type than source type', 'one implicit cast per call'),
  ('simhash_pairs_since', 'performance', 'target type is different type than source type', 'one implicit cast per call');
CREATE TABLE findings AS
SELECT p.proname::text AS fn, p.oid::regprocedure::text AS signature, c.level, c.message, c.lineno
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
JOIN pg_language l ON l.oid = p.prolang AND l.lanname = 'plpgsql'
CROSS JOIN LATERAL plpgsql_check_function_tb(p.oid, all_warnings => true) c;
SQL
nfn=$(psql_q -c "SELECT count(*) FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
	JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
	JOIN pg_language l ON l.oid = p.prolang AND l.lanname = 'plpgsql'")
echo "# $nfn PL/pgSQL functions checked, $(psql_q -c "SELECT count(*) FROM findings") findings"
psql_q -c "SELECT '# ' || signature || ' line ' || coalesce(lineno::text, '-') || ': ' || level || ': ' || message FROM findings ORDER BY 1"
[ "$nfn" -ge 6 ] && r=0 || r=1
ok $r "the extension's PL/pgSQL functions are found ($nfn)"
errors=$(psql_q -c "SELECT count(*) FROM findings WHERE level = 'error'")
ok $([ "$errors" = 0 ] && echo 0 || echo 1) "plpgsql_check reports no error ($errors)"
unjustified=$(psql_q -c "SELECT coalesce(string_agg(fn || ': ' || level || ': ' || message, '; '), '') FROM findings f
	WHERE level <> 'error' AND NOT EXISTS (SELECT 1 FROM justified j WHERE (j.fn, j.level, j.message) = (f.fn, f.level, f.message))")
ok $([ -z "$unjustified" ] && echo 0 || echo 1) "every warning is justified in this test${unjustified:+ (not: $unjustified)}"
# control: an unjustified warning is caught
psql_q -c "INSERT INTO findings VALUES ('x', 'x()', 'warning', 'control', 1)"
caught=$(psql_q -c "SELECT count(*) FROM findings f WHERE level <> 'error'
	AND NOT EXISTS (SELECT 1 FROM justified j WHERE (j.fn, j.level, j.message) = (f.fn, f.level, f.message))")
ok $([ "$caught" = 1 ] && echo 0 || echo 1) "a warning that is not justified fails the check (control)"
echo "1..$n"
SCRIPT
