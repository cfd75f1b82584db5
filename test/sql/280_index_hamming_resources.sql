--
-- What the hamming index's maintenance costs, and what it leaves behind:
-- hamming_merge() is durable when it returns; a merge with nothing to
-- recycle reads no page for it; merges by an inserting session leave
-- nothing in its statement's memory; the lists a backend caches stay
-- within work_mem over many indexes; an index that CREATE INDEX CONCURRENTLY has not finished is not
-- merged.
--
CREATE TABLE ham_res (id int, sh simhash64) WITH (autovacuum_enabled = off);
INSERT INTO ham_res SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(1, 50000) i;
CREATE INDEX ham_res_i ON ham_res USING hamming (sh) WITH (background_merge = off);

-- Buffers a statement touches (EXPLAIN ANALYZE counts those of functions).
CREATE FUNCTION ham_res_buffers(query text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ' || query INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint +
		(plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END $$;

-- Nothing retired since the build: no pass over the index's pages.
SELECT pg_relation_size('ham_res_i') / 8192 > 300 AS many_pages,
       ham_res_buffers($$SELECT hamming_merge('ham_res_i')$$) < 20 AS few_buffers;

-- hamming_merge() flushes the WAL it wrote before it returns.
INSERT INTO ham_res SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(50001, 53000) i;
SELECT hamming_merge('ham_res_i') AS merged,
       pg_current_wal_flush_lsn() >= pg_current_wal_insert_lsn() AS flushed;

-- Merges by an inserting session (background_merge off, a small list).
ALTER INDEX ham_res_i SET (pending_limit = 64);
INSERT INTO ham_res SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(100001, 160000) i;
SELECT insert_merges >= 8 AS merged_often FROM hamming_stats('ham_res_i');

-- What those merges leave in the statement's memory: a COPY into a table
-- whose index merges several times against the same COPY into one whose
-- index never merges, measured by a statement trigger, which runs before
-- the COPY's memory is freed.
CREATE TABLE ham_copy_mem (tbl text, used bigint);
CREATE FUNCTION ham_copy_mem_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO ham_copy_mem
	SELECT TG_TABLE_NAME, sum(used_bytes) FROM pg_backend_memory_contexts;
	RETURN NULL;
END $$;
CREATE TABLE ham_copy_merging (id int, sh simhash64 GENERATED ALWAYS AS (hashint8extended(id, 7)::simhash64) STORED);
CREATE TABLE ham_copy_quiet (LIKE ham_copy_merging INCLUDING GENERATED);
INSERT INTO ham_copy_merging SELECT i FROM generate_series(1, 100000) i;
INSERT INTO ham_copy_quiet SELECT i FROM generate_series(1, 100000) i;
CREATE INDEX ON ham_copy_merging USING hamming (sh) WITH (background_merge = off, pending_limit = 64);
CREATE INDEX ON ham_copy_quiet USING hamming (sh) WITH (background_merge = off, pending_limit = 100000);
CREATE TRIGGER note AFTER INSERT ON ham_copy_merging FOR EACH STATEMENT EXECUTE FUNCTION ham_copy_mem_note();
CREATE TRIGGER note AFTER INSERT ON ham_copy_quiet FOR EACH STATEMENT EXECUTE FUNCTION ham_copy_mem_note();
COPY ham_copy_quiet (id) FROM PROGRAM 'seq 100001 160000';
COPY ham_copy_merging (id) FROM PROGRAM 'seq 100001 160000';
SELECT (SELECT merges FROM hamming_stats('ham_copy_merging_sh_idx')) >= 5 AS merged_often,
       (SELECT merges FROM hamming_stats('ham_copy_quiet_sh_idx')) = 0 AS quiet,
       (SELECT used FROM ham_copy_mem WHERE tbl = 'ham_copy_merging') -
       (SELECT used FROM ham_copy_mem WHERE tbl = 'ham_copy_quiet') < 65536 AS no_leak;
DROP TABLE ham_copy_merging, ham_copy_quiet, ham_copy_mem;
DROP FUNCTION ham_copy_mem_note();
SELECT count(*) FROM ham_res WHERE sh <~> hashint8extended(123456, 7)::simhash64 <= 3;

-- An index that is not ready (as while CREATE INDEX CONCURRENTLY builds
-- it) is not merged.
INSERT INTO ham_res SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(200001, 201000) i;
UPDATE pg_index SET indisready = false WHERE indexrelid = 'ham_res_i'::regclass;
\set VERBOSITY sqlstate
SELECT hamming_merge('ham_res_i');
\set VERBOSITY default
SELECT hamming_merge('ham_res_i');
UPDATE pg_index SET indisready = true WHERE indexrelid = 'ham_res_i'::regclass;
SELECT hamming_merge('ham_res_i') > 0 AS merged;
SELECT hamming_check('ham_res_i', true);

-- The lists of 40 partitions' indexes, each list in work_mem alone, all
-- of them not: the backend's caches stay within work_mem together (or what
-- an index's lists take at its flush threshold, up to maintenance_work_mem:
-- that is 1MB here too).
CREATE TABLE ham_parts (id int, sh simhash64) PARTITION BY HASH (id);
DO $$
BEGIN
	FOR r IN 0..39 LOOP
		EXECUTE format('CREATE TABLE ham_parts_%s PARTITION OF ham_parts FOR VALUES WITH (MODULUS 40, REMAINDER %s)', r, r);
	END LOOP;
END $$;
CREATE INDEX ham_parts_i ON ham_parts USING hamming (sh);
INSERT INTO ham_parts SELECT i, hashint8extended(i, 11)::simhash64 FROM generate_series(1, 80000) i;
SET work_mem = '1MB';
SET maintenance_work_mem = '1MB';
SET enable_seqscan = off;
SELECT count(*) FROM ham_parts WHERE sh <~> hashint8extended(777, 11)::simhash64 <= 3;
SELECT count(*) FROM ham_parts WHERE sh <~> hashint8extended(778, 11)::simhash64 <= 3;
-- A backend caches a list only once its searches have read it about 128
-- times over (HAM_LIST_CACHE_AFTER): two searches cached none.
SELECT count(*) AS lists_cached FROM pg_backend_memory_contexts WHERE name = 'hamming list cache';
DO $$
BEGIN
	FOR i IN 1..130 LOOP
		PERFORM count(*) FROM ham_parts WHERE sh <~> hashint8extended(i, 11)::simhash64 <= 3;
	END LOOP;
END $$;
SELECT count(*) BETWEEN 1 AND 39 AS some_cached,
       sum(total_bytes) <= 1024 * 1024 AS within_work_mem
FROM pg_backend_memory_contexts WHERE name = 'hamming list cache';
RESET enable_seqscan;
RESET work_mem;
RESET maintenance_work_mem;

DROP TABLE ham_parts;
DROP TABLE ham_res;
DROP FUNCTION ham_res_buffers(text);
