#!/usr/bin/env bash
# What a block layout's copies take per row, and what a delete costs, for
# the tables simhash_shard_create makes (copy 1 with a primary key and a
# hamming index of a table per block; copies 2 to 4 with the one table of
# their block and no key) against the same layout with a primary key on
# every copy (as made before 0.4, their indexes shrunk to one table), in a
# throwaway cluster: a coordinator database and two shard databases
# reached through postgres_fdw over TCP on this machine (async, batches of
# 1,000, as in the multi-node tests), ROWS (default 1M) random codes in
# both layouts, 4 blocks and PARTS (default 16) partitions per copy.  Reported: bytes per row of each
# part (heap, primary key, hamming index) per copy, on the shards; the time
# of ND (default 200) deletes of one id, ND / 20 of 100 ids, 2 of 10,000
# ids and 20 of an id in no copy through the coordinator, the two layouts interleaved (the second with
# 0.3's delete: the ids asked of every partition of every copy); and whether the two
# layouts hold the same rows after them (simhash_layout_check).
# ID_ORDER=random loads the rows in an order unrelated to their ids, so
# that the BRIN indexes on id of copies 2 to 4 cannot narrow a delete of
# an id copy 1 does not hold (the default, in order, is ids that grow as
# rows arrive).
#
#   ROWS=1000000 PARTS=16 ND=200 [ID_ORDER=random] bash test/bench/run_layout_bytes.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/pgenv.sh
. "$ROOT/test/lib/pgenv.sh"

nd_build
nd_stage

export ROOT ROWS=${ROWS:-1000000} PARTS=${PARTS:-16} ND=${ND:-200} ID_ORDER=${ID_ORDER:-in order}

nd_in_cluster bash -s <<'SCRIPT' 2>&1 | grep -v '^Dropping cluster'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
for db in shard_new shard_old; do
	q -c "CREATE DATABASE $db"
	q -d $db -c "CREATE EXTENSION neardup" -c "SET client_min_messages = warning" \
	  -c "SELECT simhash_shard_create('$([ $db = shard_new ] && echo fp || echo fq)', 4, $PARTS)" >/dev/null
done
# the layout as made before 0.4: a primary key on every copy
q -d shard_old -c "DO \$\$
DECLARE t text;
BEGIN
    FOR t IN SELECT relname FROM pg_class WHERE relname ~ '^fq_b[2-4]_p[0-9]+\$' AND relkind = 'r' LOOP
        EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (id)', t);
    END LOOP;
END \$\$"
q -c "CREATE EXTENSION neardup" -c "CREATE EXTENSION postgres_fdw"
for db in shard_new shard_old; do
	q -c "CREATE SERVER $db FOREIGN DATA WRAPPER postgres_fdw
	      OPTIONS (dbname '$db', host '$PGHOST', port '$PGPORT', extensions 'neardup',
	               async_capable 'true', batch_size '1000')" \
	  -c "CREATE USER MAPPING FOR CURRENT_USER SERVER $db OPTIONS (user '$PGUSER', password '${PGPASSWORD:-}')"
done
q -c "SELECT count(*) FROM simhash_layout_create('fp', ARRAY['shard_new'], 4, $PARTS)" >/dev/null
q -c "SELECT count(*) FROM simhash_layout_create('fq', ARRAY['shard_old'], 4, $PARTS)" >/dev/null
q -c "CREATE TABLE src AS SELECT i AS id, ('x' || md5('r ' || i))::bit(64)::bigint::simhash64 AS sh FROM generate_series(1, $ROWS) i
      $([ "$ID_ORDER" = random ] && echo 'ORDER BY hashint8(i)')"
for l in fp fq; do
	s=$(date +%s.%N)
	q -c "SELECT simhash_layout_insert('$l', 'SELECT id, sh FROM src')" >/dev/null
	echo "# $l: $ROWS rows inserted into 4 copies in $(echo "$(date +%s.%N) - $s" | bc) s"
done
# bytes per row of each copy's heap, primary key and hamming index, on
# the shards; $1 says when
report_bytes() {
	echo "| layout ($1) | copy | heap | primary key | hamming index | all |"
	echo "|---|---|---|---|---|---|"
	for db in shard_new shard_old; do
		q -d $db -F ' | ' -c "
		WITH t AS (
		    SELECT substring(c.relname from '_b([0-9]+)_') AS copy, pg_table_size(c.oid) AS heap,
		           (SELECT coalesce(sum(pg_relation_size(i.indexrelid)), 0) FROM pg_index i
		            WHERE i.indrelid = c.oid AND i.indisprimary) AS pk,
		           (SELECT coalesce(sum(pg_relation_size(i.indexrelid)), 0) FROM pg_index i
		            WHERE i.indrelid = c.oid AND NOT i.indisprimary) AS ham
		    FROM pg_class c WHERE c.relname ~ '^f[pq]_b[0-9]+_p[0-9]+\$' AND c.relkind = 'r')
		SELECT '| ' || CASE '$db' WHEN 'shard_new' THEN 'as made (key on copy 1 only)' ELSE 'key on every copy' END,
		       coalesce(copy, 'all'),
		       round(sum(heap)::numeric / $ROWS, 1), round(sum(pk)::numeric / $ROWS, 1),
		       round(sum(ham)::numeric / $ROWS, 1), round(sum(heap + pk + ham)::numeric / $ROWS, 1) || ' |'
		FROM t GROUP BY ROLLUP (copy) ORDER BY copy NULLS LAST"
	done
	echo
}
echo "# $ROWS random codes, 4 blocks, $PARTS partitions per copy, ids loaded $ID_ORDER; $(nproc) cores; bytes per row on the shards"
for db in shard_new shard_old; do
	q -d $db -c "SELECT hamming_merge(indexrelid) FROM pg_index WHERE indexrelid::regclass::text LIKE 'f%_sh_idx'" \
	  -c "VACUUM ANALYZE" >/dev/null
done
report_bytes "as loaded through the coordinator, merged, vacuumed"
# more rounds, each VACUUM after a write transaction (a retired page is
# reused once a later transaction id exists): VACUUM recycles the pages the
# merge retired, moves the run at the index's end into them and cuts the
# end off (doc/index-hamming.md, "Space under churn")
for db in shard_new shard_old; do
	for round in 1 2 3; do
		q -d $db -c "SELECT txid_current()" -c "VACUUM (PARALLEL 0)" >/dev/null
	done
done
report_bytes "then vacuumed three more times"
# rebuilt, as a build after the load makes them: an index loaded row by
# row keeps the pages its merges freed for its next merges (hamming_stats'
# unused pages)
for db in shard_new shard_old; do
	q -d $db -c "REINDEX DATABASE $db" -c "VACUUM ANALYZE"
done
report_bytes "indexes rebuilt"
# deletes, interleaved: the same ids from both layouts, one session (its
# connections to the shards open, as an application's pool keeps them)
# (layout_delete_ids.sql says which)
q -v nd="$ND" -f "$ROOT/test/bench/layout_delete_ids.sql"
q <<'SQL'
DO $$
DECLARE
    s timestamptz;
    d bigint;
    r record;
BEGIN
    -- open the connections first
    PERFORM count(*) FROM fp_b1 WHERE id = 0;
    PERFORM count(*) FROM fq_b1 WHERE id = 0;
    FOR r IN SELECT * FROM del_ids ORDER BY k LOOP
        s := clock_timestamp();
        d := simhash_layout_delete('fp', r.ids);
        INSERT INTO del_res VALUES ('fp', r.n, extract(epoch FROM clock_timestamp() - s) * 1000, d);
        s := clock_timestamp();
        -- 0.3's delete: the ids from every partition of every copy
        WITH c1 AS (DELETE FROM fq_b1 WHERE id = ANY (r.ids) RETURNING 1),
             c2 AS (DELETE FROM fq_b2 WHERE id = ANY (r.ids) RETURNING 1),
             c3 AS (DELETE FROM fq_b3 WHERE id = ANY (r.ids) RETURNING 1),
             c4 AS (DELETE FROM fq_b4 WHERE id = ANY (r.ids) RETURNING 1)
        SELECT greatest((SELECT count(*) FROM c1), (SELECT count(*) FROM c2),
                        (SELECT count(*) FROM c3), (SELECT count(*) FROM c4)) INTO d;
        INSERT INTO del_res VALUES ('fq', r.n, extract(epoch FROM clock_timestamp() - s) * 1000, d);
    END LOOP;
END $$;
SQL
echo
echo "| delete of | layout | p50 ms | p90 ms | deletes | rows deleted |"
echo "|---|---|---|---|---|---|"
q -F ' | ' -c "
SELECT '| ' || CASE WHEN n = 0 THEN '1 id in no copy' ELSE n || ' id' || CASE WHEN n > 1 THEN 's' ELSE '' END END,
       CASE layout WHEN 'fp' THEN 'as made, simhash_layout_delete' ELSE 'key on every copy, 0.3''s delete' END,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
       round(percentile_cont(0.9) WITHIN GROUP (ORDER BY ms)::numeric, 2),
       count(*), sum(deleted) || ' |'
FROM del_res GROUP BY n, layout ORDER BY n = 0, n, layout"
echo
# the plan a shard makes for a copy's part of a delete: of one id, and of
# 600 ids (a partition's share of a delete of 10,000), in the form
# simhash_layout_delete sends, on a partition of copy 2 this shard holds
part=$(q -d shard_new -c "SELECT relname FROM pg_class WHERE relname ~ '^fp_b2_p[0-9]+$' AND relkind = 'r' ORDER BY relname LIMIT 1")
plan_part() {
  printf '%s\n\\gexec\n' "SELECT format('EXPLAIN (COSTS OFF) DELETE FROM $part WHERE simhash_block(sh, 2, 4) = ANY (%L::bigint[]) '
                                         'AND sh OPERATOR(neardup_internal.=) ANY (%L::bigint[]) AND (id + 0) = ANY (%L::bigint[])',
                                         array_agg(DISTINCT simhash_block(sh, 2, 4)), array_agg(DISTINCT sh::bigint), array_agg(id))
                          FROM (SELECT id, sh FROM $part ORDER BY id LIMIT $1) s" |
    q -d shard_new | cut -c1-120 | sed 's/^/#   /'
}
echo "# a shard's plan for copy 2's delete of one id ($part: $(q -d shard_new -c "SELECT count(*) FROM $part") rows):"
plan_part 1
echo "# ... of 600 ids:"
plan_part 600
echo "# a shard's plan for copy 2's delete by id (an id copy 1 does not hold):"
q -d shard_new -c "EXPLAIN (COSTS OFF) DELETE FROM $part WHERE id = ANY ('{-1}'::bigint[])" | sed 's/^/#   /'
echo "# after the deletes, copies consistent (fp, fq): $(q -c "SELECT bool_and(consistent) FROM simhash_layout_check('fp')"), $(q -c "SELECT bool_and(consistent) FROM simhash_layout_check('fq')"); rows $(q -c "SELECT count(*) FROM fp_b4"), $(q -c "SELECT count(*) FROM fq_b4"); ids in one and not the other: $(q -c "SELECT count(*) FROM ((SELECT id FROM fp_b3 EXCEPT SELECT id FROM fq_b3) UNION ALL (SELECT id FROM fq_b3 EXCEPT SELECT id FROM fp_b3)) d")"
SCRIPT
