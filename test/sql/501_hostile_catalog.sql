--
-- Every SQL function the extension installs, listed from the catalog (so
-- that a new function cannot be missed), called by a role with no
-- privileges with hostile arguments: each argument in turn takes NULL,
-- empty, huge and extreme values of its type while the others keep
-- ordinary ones, and one call has every argument NULL.  What must hold:
-- the backend survives every call (a crash ends this suite), and no call
-- fails with an internal error (SQLSTATE class XX, an elog without a
-- proper code) -- each bad input gets a proper SQLSTATE.  Each call runs in
-- a subtransaction that is rolled back, so calls that write (dedup_keep_one,
-- simhash_shard_create, ...) leave nothing behind for the next.
--
-- Functions that take an argument of type internal are support functions
-- of types, operator classes and the planner: SQL cannot make a value of
-- that type, so they cannot be called from SQL at all; they are counted.
--
\set VERBOSITY terse

CREATE ROLE regress_hostile NOLOGIN;
CREATE SCHEMA hostile AUTHORIZATION regress_hostile;
SET ROLE regress_hostile;
SET search_path = hostile, public;

-- the role's own data, so that calls get past their privilege checks
CREATE TABLE hostile.h (id bigint PRIMARY KEY, sh simhash64, body text, sig int4[], dup bool);
INSERT INTO hostile.h
SELECT i, (hashint8extended(i / 3, 0))::simhash64, 'document ' || (i / 3) || ' about the topic ' || (i % 7),
       minhash('document ' || (i / 3) || ' about the topic ' || (i % 7), 16), NULL
FROM generate_series(1, 60) i;
CREATE INDEX h_ham ON hostile.h USING hamming (sh);
-- a state table of simhash_clusters_update
CREATE TABLE hostile.h_state (id bigint PRIMARY KEY, cluster_id bigint);
-- a block-sharded layout of local partitions (2 blocks), named by its view
CREATE TABLE hostile.hl_b1 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 1, 2));
CREATE TABLE hostile.hl_b1_p0 PARTITION OF hostile.hl_b1 FOR VALUES FROM (0) TO (4294967296);
CREATE TABLE hostile.hl_b2 (id bigint NOT NULL, sh simhash64 NOT NULL) PARTITION BY RANGE (simhash_block(sh, 2, 2));
CREATE TABLE hostile.hl_b2_p0 PARTITION OF hostile.hl_b2 FOR VALUES FROM (0) TO (4294967296);
CREATE TABLE hostile.hl_clusters (part int4 NOT NULL, ids int8[]);
INSERT INTO hostile.hl_b1 SELECT id, sh FROM hostile.h;
INSERT INTO hostile.hl_b2 SELECT id, sh FROM hostile.h;
CREATE VIEW hostile.hl AS SELECT id, sh FROM hostile.hl_b1;

-- hostile values of each type, as SQL expressions
CREATE TEMP TABLE hostile_values (typ regtype, expr text);
INSERT INTO hostile_values VALUES
    ('int2', '0'), ('int2', '-1'), ('int2', '32767'), ('int2', '(-32768)'),
    ('int4', '0'), ('int4', '-1'), ('int4', '1'), ('int4', '65'), ('int4', '2147483647'), ('int4', '(-2147483648)'),
    ('int8', '0'), ('int8', '-1'), ('int8', '9223372036854775807'), ('int8', '(-9223372036854775808)'),
    ('float4', '0'), ('float4', '-1'), ('float4', '''NaN'''), ('float4', '''Infinity'''), ('float4', '''-Infinity'''), ('float4', '1e-30'),
    ('float8', '0'), ('float8', '-1'), ('float8', '1'), ('float8', '''NaN'''), ('float8', '''Infinity'''), ('float8', '''-Infinity'''),
    ('float8', '1e-300'), ('float8', '1e300'),
    ('bool', 'true'), ('bool', 'false'),
    ('text', ''''''), ('text', ''' '''), ('text', '''x'''), ('text', '''0'''), ('text', 'repeat(''lorem ipsum '', 100000)'),
    ('text', '''; SELECT 1; --'''), ('text', 'repeat(''€'', 40000)'), ('text', '''SELECT 1'''),
    ('name', ''''''), ('name', '''x'''), ('name', 'repeat(''n'', 200)'), ('name', '''ctid'''),
    ('cstring', ''''''), ('cstring', '''zz'''), ('cstring', 'repeat(''f'', 10000)'),
    ('regclass', '0'), ('regclass', '''pg_class'''), ('regclass', '''hostile.h_ham'''),
    ('regtype[]', '''{}'''), ('regtype[]', '''{NULL}'''), ('regtype[]', '''{text}'''),
    ('simhash64', '''0000000000000000'''), ('simhash64', '''ffffffffffffffff'''),
    ('hamming_ball', '''(0000000000000000,0)'''), ('hamming_ball', '''(ffffffffffffffff,64)'''),
    ('hamming_block_ball', '''(0000000000000000,0,1,2)'''), ('hamming_block_ball', '''(ffffffffffffffff,64,16,16)'''),
    ('int4[]', '''{}'''), ('int4[]', '''{NULL}'''), ('int4[]', '''{{1,2},{3,4}}'''), ('int4[]', '''[5:7]={1,2,3}'''),
    ('int4[]', 'array_fill(7, ARRAY[100000])'), ('int4[]', '''{2147483647,-2147483648}'''),
    ('int8[]', '''{}'''), ('int8[]', '''{NULL}'''), ('int8[]', '''{{1,2},{3,4}}'''), ('int8[]', '''[5:7]={1,2,3}'''),
    ('int8[]', 'array_fill(7::int8, ARRAY[100000])'), ('int8[]', '(SELECT array_agg(g) FROM generate_series(1, 100000) g)'),
    ('real[]', '''{}'''), ('real[]', '''{NULL}'''), ('real[]', '''{NaN,Infinity}'''), ('real[]', '''{-1,-2,-3}'''),
    ('real[]', '''{{1,2},{3,4}}'''), ('real[]', 'array_fill(1::real, ARRAY[100000])'),
    ('text[]', '''{}'''), ('text[]', '''{NULL}'''), ('text[]', '''{""}'''), ('text[]', '''{{a,b},{c,d}}'''),
    ('text[]', 'array_fill(''w''::text, ARRAY[100000])'), ('text[]', 'ARRAY[repeat(''x'', 1000000)]'),
    ('bytea', ''''''''), ('bytea', '''\x00'''), ('bytea', '''\x0102'''), ('bytea', 'decode(repeat(''ff'', 100000), ''hex'')'),
    ('tsvector', ''''''''), ('tsvector', 'to_tsvector(''simple'', repeat(''w'' || chr(97 + 1), 10))'),
    ('tsvector', '(SELECT string_agg(''w'' || g, '' '')::tsvector FROM generate_series(1, 20000) g)'),
    ('varbit', 'B'''''), ('varbit', 'B''1'''), ('varbit', 'repeat(''1'', 65)::varbit'), ('varbit', 'repeat(''0'', 64)::varbit');

-- ordinary values, by argument name and then by type
CREATE FUNCTION pg_temp.ordinary(fn name, arg name, typ regtype) RETURNS text LANGUAGE sql AS $$
SELECT CASE
    WHEN arg IN ('query', 'pairs_query') AND fn LIKE 'minhash%' THEN '''SELECT id, sig FROM hostile.h'''
    WHEN arg = 'pairs_query' OR (arg = 'query' AND fn LIKE 'dedup%') THEN '''SELECT id, id + 3 FROM hostile.h'''
    WHEN arg = 'query' AND typ = 'text'::regtype THEN '''SELECT id, sh FROM hostile.h'''
    WHEN arg = 'source' THEN '''hostile.h'''
    WHEN arg = 'state' THEN '''hostile.h_state'''
    WHEN arg = 'index' THEN '''hostile.h_ham'''
    WHEN arg = 'layout' AND typ = 'regclass'::regtype THEN '''hostile.hl'''
    WHEN arg = 'layout' THEN '''hl'''
    WHEN arg = 'id_column' THEN '''id'''
    WHEN arg IN ('fingerprint_column', 'column_name') THEN '''sh'''
    WHEN arg = 'signature_column' THEN '''sig'''
    WHEN arg = 'flag_column' THEN '''dup'''
    WHEN arg = 'keep_order' THEN '''id'''
    WHEN arg = 'unit' THEN '''word'''
    WHEN arg = 'server' THEN '''nosuch'''
    WHEN arg = 'suffix' THEN '''_x'''
    WHEN arg = 'packed' THEN 'false'
    WHEN arg = 'far_searches' THEN 'true'
    WHEN arg IN ('blocks') THEN '4'
    WHEN arg IN ('block', 'key_index') THEN '1'
    WHEN arg IN ('partition', 'since', 'seed', 'exclude_within') THEN '0'
    WHEN arg IN ('num_perm') THEN '16'
    WHEN arg IN ('bands', 'rows') THEN '4'
    WHEN arg IN ('partitions', 'bits', 'shingle') THEN '2'
    WHEN arg = 'recall' AND fn = 'minhash_clusters' THEN 'NULL'	-- or bands and rows
    WHEN arg IN ('threshold', 'similarity', 'recall') THEN '0.8'
    WHEN typ IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) THEN '3'
    WHEN typ IN ('float4'::regtype, 'float8'::regtype) THEN '0.5'
    WHEN typ = 'bool'::regtype THEN 'true'
    WHEN typ IN ('text'::regtype, 'name'::regtype) THEN '''the quick brown fox jumps over the lazy dog'''
    WHEN typ = 'cstring'::regtype THEN '''0123456789abcdef'''
    WHEN typ = 'regclass'::regtype THEN '''hostile.h'''
    WHEN typ = 'regtype[]'::regtype THEN '''{int8}'''
    WHEN typ = 'simhash64'::regtype THEN '''0123456789abcdef'''
    WHEN typ = 'hamming_ball'::regtype THEN '''(0123456789abcdef,3)'''
    WHEN typ = 'hamming_block_ball'::regtype THEN '''(0123456789abcdef,3,2,4)'''
    WHEN typ = 'int4[]'::regtype THEN 'minhash(''the quick brown fox''::text, 16)'
    WHEN typ = 'int8[]'::regtype THEN '''{1,2,3,4}'''
    WHEN typ = 'real[]'::regtype THEN '''{1,2,3}'''
    WHEN typ = 'text[]'::regtype THEN '''{the,quick,brown,fox}'''
    WHEN typ = 'bytea'::regtype THEN 'minhash_bbit(minhash(''the quick brown fox''::text, 16), 2)'
    WHEN typ = 'tsvector'::regtype THEN 'to_tsvector(''simple'', ''the quick brown fox'')'
    WHEN typ = 'varbit'::regtype THEN 'B''1010'''
    ELSE 'NULL'
END
$$;

-- the extension's functions that SQL can call, with their input arguments
CREATE TEMP TABLE hostile_functions AS
SELECT p.oid::regprocedure AS fn, p.proname AS name, p.prokind = 'p' AS procedure, p.provariadic <> 0 AS variadic,
       array_agg(coalesce(p.proargnames[a.i], '') ORDER BY a.i) FILTER (WHERE a.i IS NOT NULL) AS argnames,
       array_agg(a.t::regtype ORDER BY a.i) FILTER (WHERE a.i IS NOT NULL) AS argtypes
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup'
LEFT JOIN LATERAL unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, i) ON true
WHERE NOT ('internal'::regtype = ANY (p.proargtypes::oid[]))
GROUP BY p.oid, p.proname, p.prokind, p.provariadic;

-- every call: one argument hostile, or all NULL (a procedure by CALL)
CREATE TEMP TABLE hostile_calls AS
WITH args AS (
    SELECT f.fn, f.name, f.variadic, f.argtypes, i, f.argtypes[i] AS typ,
           pg_temp.ordinary(f.name, f.argnames[i], f.argtypes[i]) AS ordinary
    FROM hostile_functions f, generate_subscripts(coalesce(f.argtypes, '{}'), 1) i
), variants AS (
    -- the ordinary call, all-NULL, and each argument over its type's values
    SELECT f.fn, 0 AS pos, NULL::text AS expr FROM hostile_functions f
    UNION ALL
    SELECT f.fn, -1, 'NULL' FROM hostile_functions f WHERE f.argtypes IS NOT NULL
    UNION ALL
    SELECT a.fn, a.i, v.expr FROM args a JOIN hostile_values v ON v.typ = a.typ
)
SELECT v.fn,
       format(CASE WHEN (SELECT f.procedure FROM hostile_functions f WHERE f.fn = v.fn) THEN 'CALL %s(%s)'
                   -- count(x.r), not count(*): with its result unused the
                   -- planner drops an immutable or stable call unrun
                   ELSE 'SELECT count(x.r) FROM (SELECT %s(%s) AS r) x' END,
              (SELECT f.fn::oid::regproc FROM hostile_functions f WHERE f.fn = v.fn),
              coalesce((SELECT string_agg(
                            CASE WHEN a.variadic AND a.i = cardinality(a.argtypes) THEN 'VARIADIC ' ELSE '' END ||
                            '(' || CASE WHEN v.pos = -1 THEN 'NULL'
                                        WHEN v.pos = a.i THEN v.expr
                                        ELSE a.ordinary END || ')::' || a.typ::text, ', ' ORDER BY a.i)
                        FROM args a WHERE a.fn = v.fn), '')) AS call
FROM variants v;

-- a call's SQLSTATE ('ok' when it returned), its subtransaction rolled back
CREATE FUNCTION pg_temp.outcome(call text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE call;
        RAISE EXCEPTION USING ERRCODE = 'ZZ000';
    EXCEPTION WHEN OTHERS THEN
        IF SQLSTATE = 'ZZ000' THEN
            RETURN 'ok';
        END IF;
        RETURN SQLSTATE || ' ' || SQLERRM;
    END;
END
$$;

SET statement_timeout = '10min';	-- a hang fails the suite, not the run
SET client_min_messages = warning;	-- the functions' notices
CREATE TEMP TABLE hostile_outcomes AS
SELECT fn, call, pg_temp.outcome(call) AS outcome FROM hostile_calls;
RESET client_min_messages;
RESET statement_timeout;

-- every function SQL can call was called, and how many could not be
SELECT count(*) FILTER (WHERE NOT ('internal'::regtype = ANY (p.proargtypes::oid[]))) AS callable,
       count(*) FILTER (WHERE 'internal'::regtype = ANY (p.proargtypes::oid[])) AS takes_internal,
       count(*) FILTER (WHERE NOT ('internal'::regtype = ANY (p.proargtypes::oid[]))
                        AND NOT EXISTS (SELECT FROM hostile_outcomes o WHERE o.fn = p.oid)) AS not_called
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'neardup';
SELECT count(*) >= 1500 AS many_calls, count(DISTINCT fn) AS functions FROM hostile_outcomes;
-- no internal errors: every bad input has a proper SQLSTATE
SELECT fn, left(call, 160) AS call, left(outcome, 160) AS outcome
FROM hostile_outcomes WHERE outcome LIKE 'XX%' OR outcome LIKE '58%'
ORDER BY 1, 2;
-- most calls get past the argument checks: each function returns for
-- some arguments, but for those that need what this suite cannot give
-- (foreign servers, a transaction of their own, a trigger's call) and
-- the layout's error helper, which raises what it is given
SELECT fn FROM hostile_outcomes GROUP BY fn HAVING bool_and(outcome <> 'ok') ORDER BY 1;
-- the session is still this role's, and its data intact
SELECT current_user, (SELECT count(*) FROM hostile.h) AS h, (SELECT count(*) FROM hostile.hl) AS hl;

RESET ROLE;
RESET search_path;
DROP OWNED BY regress_hostile;
DROP ROLE regress_hostile;
