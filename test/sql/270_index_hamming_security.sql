--
-- The hamming index's maintenance functions and untrusted index owners.
--
-- hamming_check(index, heapallindexed => true) reads the table through
-- the index's expressions: they must run as the table's owner in a
-- security-restricted operation, never as the (superuser) caller -- else
-- an owner's function in the index escalates to superuser (amcheck's
-- CVE-2022-1552).  A non-owner is refused before any lock is taken.
--
CREATE ROLE regress_nd_owner;
CREATE ROLE regress_nd_other;
GRANT CREATE ON SCHEMA public TO regress_nd_owner;

SET ROLE regress_nd_owner;
-- The index is made over a harmless IMMUTABLE function, which its owner
-- then replaces with one that makes the owner a superuser if ever run by
-- one, and records who ran it.
CREATE TABLE nd_ran_as (who name);
-- (PL/pgSQL: never inlined into the index's expression)
CREATE FUNCTION nd_evil(s simhash64) RETURNS simhash64
LANGUAGE plpgsql IMMUTABLE AS 'BEGIN RETURN s; END';
CREATE TABLE nd_evil_t (id int, sh simhash64);
INSERT INTO nd_evil_t SELECT i, hashint8extended(i, 7)::simhash64 FROM generate_series(1, 200) i;
CREATE INDEX nd_evil_i ON nd_evil_t USING hamming (nd_evil(sh));
-- a partial index's predicate is evaluated too
CREATE INDEX nd_evil_p ON nd_evil_t USING hamming (sh) WHERE nd_evil(sh) IS NOT NULL;
CREATE OR REPLACE FUNCTION nd_evil(s simhash64) RETURNS simhash64
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	INSERT INTO nd_ran_as VALUES (current_user);
	IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
		EXECUTE 'ALTER ROLE regress_nd_owner SUPERUSER';
	END IF;
	RETURN s;
END $$;
TRUNCATE nd_ran_as;
RESET ROLE;

-- The superuser checks both indexes: the function runs, as the owner.
SELECT hamming_check('nd_evil_i', true);
SELECT hamming_check('nd_evil_p', true);
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_nd_owner';
SELECT who, count(*) > 0 AS ran FROM nd_ran_as GROUP BY who ORDER BY who;

-- Whatever the function changed in the session's settings stays inside
-- the check (a GUC nest level of its own).
SET ROLE regress_nd_owner;
CREATE FUNCTION nd_setter(s simhash64) RETURNS simhash64
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	PERFORM set_config('work_mem', '77kB', false);
	RETURN s;
END $$;
CREATE INDEX nd_setter_i ON nd_evil_t USING hamming (nd_setter(sh));
RESET ROLE;
SET work_mem = '3MB';
SHOW work_mem;
SELECT hamming_check('nd_setter_i', true);
SHOW work_mem;
RESET work_mem;

-- A non-owner is refused (42501), by every function that takes an index.
SET ROLE regress_nd_other;
\set VERBOSITY sqlstate
SELECT hamming_check('nd_evil_i', false);
SELECT hamming_check('nd_evil_i', true);
SELECT * FROM hamming_stats('nd_evil_i');
SELECT hamming_merge('nd_evil_i');
\set VERBOSITY default
SELECT hamming_merge('nd_evil_i');
RESET ROLE;

-- The owner may check its own index.
SET ROLE regress_nd_owner;
SELECT hamming_check('nd_evil_i', true);
RESET ROLE;

DROP OWNED BY regress_nd_owner;
DROP OWNED BY regress_nd_other;
DROP ROLE regress_nd_owner;
DROP ROLE regress_nd_other;
