-- A table of 64-bit codes with planted near copies and a hamming index
-- built over it, then rows inserted after the build (the index's pending
-- list).  Run by the hamming-restart autopkgtest and by test/e2e/package.sh
-- before a server restart; hamming-verify.sql checks the index afterwards.
-- Works under the SQL of 0.2 and of later versions.  The extension must
-- exist in the database.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS ham_restart;
-- code: the same bits as sh, as a plain bigint, for the sequential oracle
-- that uses no function of the extension.
CREATE TABLE ham_restart (id int PRIMARY KEY, code bigint NOT NULL, sh simhash64);
INSERT INTO ham_restart (id, code)
	SELECT i, ('x' || substr(md5(i::text), 1, 16))::bit(64)::bigint
	FROM generate_series(1, 20000) i;
-- near copies of the first 500 rows, one to three bits flipped
INSERT INTO ham_restart (id, code)
	SELECT 100000 + id, code # (1::bigint << (id % 64)) # ((id % 3)::bigint << (id % 61))
	FROM ham_restart WHERE id <= 500;
UPDATE ham_restart SET sh = code::simhash64;
CREATE INDEX ham_restart_idx ON ham_restart USING hamming (sh);
-- rows after the build: inserted through the index, not built into it
INSERT INTO ham_restart (id, code, sh)
	SELECT 200000 + i, c, c::simhash64
	FROM generate_series(1, 3000) i,
	     LATERAL (SELECT ('x' || substr(md5('late' || i), 1, 16))::bit(64)::bigint AS c) x;
ANALYZE ham_restart;
