--
-- neardup_progress(): the dedup jobs running now, and the statements that
-- fingerprint texts (issue 29, part 5).
-- Seen from inside the job's own query (a NOTICE when a row is read, and
-- through a cursor left open); test/e2e/progress.sh watches from another
-- session.  The row goes at the job's end, at commit, and when the job
-- fails, also inside an exception block.
--
CREATE TABLE pt AS
SELECT i::bigint AS id, (hashint8extended(i / 2, 0))::simhash64 AS sh,
       minhash('w' || i || ' w' || (i % 7) || ' w' || (i % 11)) AS sig
FROM generate_series(1, 30000) i;

-- at rows 1 and 25,000 (or others): what neardup_progress() says of this session
CREATE FUNCTION pg_temp.watch(id bigint, at bigint[] DEFAULT '{1,25000}') RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    IF id = ANY (at) THEN
        FOR r IN SELECT * FROM neardup_progress() WHERE pid = pg_backend_pid() LOOP
            RAISE NOTICE 'row %: % | % | done % | total % | started in this transaction: %', id,
                r.job, r.phase, r.done, coalesce(r.total::text, 'null'),
                r.started >= now() AND r.phase_started >= r.started;
        END LOOP;
    END IF;
    RETURN true;
END
$$;

SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid();
SELECT count(*) FROM simhash_clusters('SELECT id, sh FROM pt WHERE pg_temp.watch(id)', 3);
SELECT count(*) FROM simhash_pairs('SELECT id, sh FROM pt WHERE pg_temp.watch(id)', 3);
SELECT count(*) FROM minhash_clusters('SELECT id, sig FROM pt WHERE pg_temp.watch(id)', 0.8);
-- nested: a job run by the query of another keeps the outer job's name
SELECT count(*) FROM simhash_clusters(
    'SELECT p.id, p.sh FROM pt p WHERE pg_temp.watch(p.id)
       AND EXISTS (SELECT FROM minhash_clusters(''SELECT 1::bigint, NULL::int4[] WHERE pg_temp.watch(25000)'') WHERE p.id = 1)
        OR p.id > 1', 3);
-- and none left afterwards
SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid();

-- A streamed simhash_pairs under a cursor: searching its tables until the
-- cursor is read to the end or the transaction ends.
BEGIN;
DECLARE c CURSOR FOR SELECT (simhash_pairs('SELECT id, sh FROM pt', 3)).*;
FETCH 1 FROM c;
SELECT job, phase, done <= total AS done_within_total, total FROM neardup_progress() WHERE pid = pg_backend_pid();
-- another role sees that a job runs, not which
CREATE ROLE regress_progress_other;
SET ROLE regress_progress_other;
SELECT job IS NULL AND phase IS NULL AND done IS NULL AS hidden, datid IS NOT NULL AS datid_shown
FROM neardup_progress() WHERE pid = pg_backend_pid();
RESET ROLE;
DROP ROLE regress_progress_other;
COMMIT;
SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid();

-- a job that fails leaves nothing, at top level and in an exception block,
-- and the next job is reported again
SELECT count(*) FROM simhash_clusters('SELECT id, sh FROM pt WHERE 1 / (id - 25000) > -2');
SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid();
DO $$
BEGIN
    PERFORM simhash_clusters('SELECT id, sh FROM pt WHERE 1 / (id - 25000) > -2');
EXCEPTION WHEN division_by_zero THEN
    RAISE NOTICE 'caught; rows of this session: %',
        (SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid());
END
$$;
SELECT count(*) FROM minhash_clusters('SELECT id, sig FROM pt WHERE id > 24990 AND pg_temp.watch(id)', 0.8);

-- dedup_keep_one: its pairs query's jobs under its name, then finding
-- clusters (seen from its keep_order), then the DELETE or the two UPDATEs
-- with the number of rows each changes (seen from a statement trigger)
CREATE TABLE pk AS SELECT id, sh, NULL::bool AS dup FROM pt;
CREATE FUNCTION pg_temp.show_progress() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM neardup_progress() WHERE pid = pg_backend_pid() LOOP
        RAISE NOTICE '%: % | % | done % | total %', TG_OP, r.job, r.phase, r.done, coalesce(r.total::text, 'null');
    END LOOP;
    RETURN NULL;
END
$$;
CREATE TRIGGER pk_progress BEFORE DELETE OR UPDATE ON pk
    FOR EACH STATEMENT EXECUTE FUNCTION pg_temp.show_progress();
SELECT dedup_keep_one('pk', 'id', $$SELECT id_a, id_b FROM simhash_pairs('SELECT id, sh FROM pk WHERE pg_temp.watch(id)', 3)$$,
                      keep_order => 'pg_temp.watch(id, ''{2}'')', flag_column => 'dup');
SELECT dedup_keep_one('pk', 'id', 'SELECT id_a, id_b FROM simhash_pairs(''pk'', ''id'', ''sh'', 3)');
SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid();
-- a job of one's own, in SQL: until its end, or the end of its transaction
BEGIN;
SELECT neardup_progress_begin('my job'), neardup_progress_phase('step 1', 10);
SELECT job, phase, done, total FROM neardup_progress() WHERE pid = pg_backend_pid();
SELECT neardup_progress_end();
SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid();
SELECT neardup_progress_begin('my job');
COMMIT;
SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid();
SELECT neardup_progress_begin(NULL);
SELECT neardup_progress_phase('step 2', -1);
-- a NULL phase, from a role with no privileges (0.3 crashed the backend
-- here: it wrote into a string literal), inside and outside a job
CREATE ROLE regress_progress_nobody;
SET ROLE regress_progress_nobody;
SELECT neardup_progress_phase(NULL, NULL);
BEGIN;
SELECT neardup_progress_begin('nobody''s job'), neardup_progress_phase(NULL, NULL);
SELECT job, phase IS NULL AS no_phase, done, total FROM neardup_progress() WHERE pid = pg_backend_pid();
SELECT neardup_progress_phase(repeat('é', 100), 7);
SELECT job, octet_length(phase) <= 47 AS cut_within_slot, phase = repeat('é', length(phase)) AS cut_between_characters, total
FROM neardup_progress() WHERE pid = pg_backend_pid();
COMMIT;
-- outside a job, phase changes nothing
SELECT neardup_progress_phase('no job', 1);
SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid();
RESET ROLE;
DROP ROLE regress_progress_nobody;

-- A statement that fingerprints texts: "fingerprinting", the functions it
-- calls, and how many texts so far (published every 10,000 texts or 8 MB
-- of text), while the statement runs.
SELECT count(*) FROM (SELECT id, simhash('w' || id) AS s FROM pt OFFSET 0) x
WHERE s IS NOT NULL AND pg_temp.watch(id);
SELECT count(*) FROM (SELECT id, simhash('w' || id) AS s, minhash('w' || id, 16) AS m FROM pt OFFSET 0) x
WHERE s IS NOT NULL AND m IS NOT NULL AND pg_temp.watch(id);
UPDATE pt SET sh = simhash(to_tsvector('simple', 'w' || id)) WHERE pg_temp.watch(id);
-- 1 MB texts: published after 9 of them
SELECT count(*) FROM (SELECT i::bigint AS id, simhash(repeat('a' || i % 10 || ' ', 333333)) AS s FROM generate_series(1, 10) i OFFSET 0) x
WHERE s IS NOT NULL AND pg_temp.watch(id, '{10}');
-- the count is the statement's: the next one starts from 0, and a
-- finished statement's row is not shown while its transaction goes on
BEGIN;
SELECT count(simhash('w' || id)) FROM pt;
SELECT count(*) FROM neardup_progress() WHERE pid = pg_backend_pid();
SELECT count(*) FROM (SELECT id, simhash('w' || id) AS s FROM pt WHERE id <= 15000 OFFSET 0) x
WHERE s IS NOT NULL AND pg_temp.watch(id, '{15000}');
COMMIT;
-- inside a job the job reports, not the fingerprints
SELECT count(*) FROM simhash_clusters('SELECT id, simhash(''w'' || id) FROM pt WHERE pg_temp.watch(id)', 3);
