--
-- The PL/pgSQL dedup helpers under a hostile search_path: a schema before
-- pg_catalog holds operators and functions that shadow the built-in ones
-- the helpers use (=, <> on text, "char", bool, bigint; ||; btrim; ...).
-- Each shadow records that it ran (a custom setting) and then behaves as
-- the built-in.  A control first shows that unqualified SQL under that path
-- does call them; then every helper runs under it, returns what it returns
-- under a plain path, and calls none of them.
--
CREATE SCHEMA shadow;
CREATE FUNCTION shadow.mark(what text) RETURNS void LANGUAGE sql AS $$
    SELECT pg_catalog.set_config('neardup_test.shadow_called',
        pg_catalog.concat_ws(',', CASE WHEN pg_catalog.current_setting('neardup_test.shadow_called', true) OPERATOR(pg_catalog.<>) ''
                                       THEN pg_catalog.current_setting('neardup_test.shadow_called', true) END, what), false)
$$;
-- eq/ne shadows for the types the helpers compare
CREATE FUNCTION shadow.text_eq(a text, b text) RETURNS bool LANGUAGE plpgsql AS
$$ BEGIN PERFORM shadow.mark('text ='); RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE FUNCTION shadow.text_ne(a text, b text) RETURNS bool LANGUAGE plpgsql AS
$$ BEGIN PERFORM shadow.mark('text <>'); RETURN a OPERATOR(pg_catalog.<>) b; END $$;
CREATE FUNCTION shadow.char_eq(a "char", b "char") RETURNS bool LANGUAGE plpgsql AS
$$ BEGIN PERFORM shadow.mark('"char" ='); RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE FUNCTION shadow.bool_eq(a bool, b bool) RETURNS bool LANGUAGE plpgsql AS
$$ BEGIN PERFORM shadow.mark('bool ='); RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE FUNCTION shadow.bool_ne(a bool, b bool) RETURNS bool LANGUAGE plpgsql AS
$$ BEGIN PERFORM shadow.mark('bool <>'); RETURN a OPERATOR(pg_catalog.<>) b; END $$;
CREATE FUNCTION shadow.int8_eq(a int8, b int8) RETURNS bool LANGUAGE plpgsql AS
$$ BEGIN PERFORM shadow.mark('int8 ='); RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE FUNCTION shadow.int8_ne(a int8, b int8) RETURNS bool LANGUAGE plpgsql AS
$$ BEGIN PERFORM shadow.mark('int8 <>'); RETURN a OPERATOR(pg_catalog.<>) b; END $$;
CREATE FUNCTION shadow.text_cat(a text, b text) RETURNS text LANGUAGE plpgsql AS
$$ BEGIN PERFORM shadow.mark('||'); RETURN a OPERATOR(pg_catalog.||) b; END $$;
CREATE FUNCTION shadow.btrim(a text) RETURNS text LANGUAGE plpgsql AS
$$ BEGIN PERFORM shadow.mark('btrim'); RETURN pg_catalog.btrim(a); END $$;
CREATE OPERATOR shadow.= (LEFTARG = text, RIGHTARG = text, FUNCTION = shadow.text_eq);
CREATE OPERATOR shadow.<> (LEFTARG = text, RIGHTARG = text, FUNCTION = shadow.text_ne);
CREATE OPERATOR shadow.= (LEFTARG = "char", RIGHTARG = "char", FUNCTION = shadow.char_eq);
CREATE OPERATOR shadow.= (LEFTARG = bool, RIGHTARG = bool, FUNCTION = shadow.bool_eq);
CREATE OPERATOR shadow.<> (LEFTARG = bool, RIGHTARG = bool, FUNCTION = shadow.bool_ne);
CREATE OPERATOR shadow.= (LEFTARG = int8, RIGHTARG = int8, FUNCTION = shadow.int8_eq);
CREATE OPERATOR shadow.<> (LEFTARG = int8, RIGHTARG = int8, FUNCTION = shadow.int8_ne);
CREATE OPERATOR shadow.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = shadow.text_cat);

-- dup starts false, not NULL: IS DISTINCT FROM a NULL calls no operator.
CREATE TABLE sp_docs (id bigint PRIMARY KEY, sh simhash64, body text, dup bool);
INSERT INTO sp_docs
SELECT i, (('x' || md5((i / 3)::text))::bit(64)::bigint # (i % 3))::simhash64, md5(i::text), false
FROM generate_series(1, 300) i;
CREATE INDEX ON sp_docs USING gin (sh);
ANALYZE sp_docs;
CREATE TABLE sp_copy AS SELECT * FROM sp_docs;

-- What each helper returns under the ordinary path.
CREATE TABLE sp_expected AS
SELECT 'representatives' AS what, count(*) AS n,
       sum(hashint8(id) # hashint8(representative)) AS h
FROM dedup_representatives('sp_docs', 'id', $$SELECT id_a, id_b FROM simhash_pairs('sp_docs', 'id', 'sh', 2)$$, 'body DESC')
UNION ALL
SELECT 'pairs since', count(*), sum(hashint8(id_a) # hashint8(id_b))
FROM simhash_pairs_since('sp_docs', 'id', 'sh', 290, 2)
UNION ALL
SELECT 'clusters update', count(*), sum(hashint8(id) # hashint8(cluster_id))
FROM simhash_clusters('sp_docs', 'id', 'sh', 2);
CREATE TABLE sp_state (id bigint PRIMARY KEY, cluster_id bigint NOT NULL);

-- The control: under the hostile path, unqualified SQL calls the shadows.
SET search_path = shadow, pg_catalog, public;
SELECT NULLIF(btrim(' a '), ''), CASE 'd'::"char" WHEN 'd' THEN 1 END,
       true IS DISTINCT FROM false, 1::int8 = 2::int8, 'a'::text || 'b';
SELECT current_setting('neardup_test.shadow_called') AS control_calls;
SELECT set_config('neardup_test.shadow_called', '', false);

-- Every helper under that path, its results kept for later (the test's
-- own SQL here compares nothing: a comparison would call a shadow).
CREATE TEMP TABLE sp_got AS
SELECT 'representatives'::text AS what, count(*) AS n,
       sum(hashint8(id) # hashint8(representative)) AS h
FROM public.dedup_representatives('sp_docs', 'id',
         $$SELECT id_a, id_b FROM public.simhash_pairs('sp_docs', 'id', 'sh', 2)$$, 'body DESC');
INSERT INTO sp_got
SELECT 'pairs since', count(*), sum(hashint8(id_a) # hashint8(id_b))
FROM public.simhash_pairs_since('sp_docs', 'id', 'sh', 290, 2);
INSERT INTO sp_got
SELECT 'clusters update', count(*), sum(hashint8(id) # hashint8(cluster_id))
FROM public.simhash_clusters_update('sp_state', 'sp_docs', 'id', 'sh', NULL, 2);
SELECT public.dedup_keep_one('sp_docs', 'id',
           $$SELECT id_a, id_b FROM public.simhash_pairs('sp_docs', 'id', 'sh', 2)$$,
           keep_order => 'body DESC', flag_column => 'dup') AS flagged;
SELECT public.dedup_keep_one('sp_docs', 'id',
           $$SELECT id_a, id_b FROM public.simhash_pairs('sp_docs', 'id', 'sh', 2)$$,
           keep_order => 'body DESC') AS deleted;
SELECT public.dedup_keep_one('sp_copy', 'id',
           $$SELECT id, cluster_id FROM public.simhash_clusters('sp_copy', 'id', 'sh', 2)$$,
           keep_order => '') AS deleted_copy;
SELECT neardup_internal.dedup_check_column('sp_docs', 'id', 'id', ARRAY['pg_catalog.int8']::pg_catalog.regtype[]);
SELECT pg_catalog.current_setting('neardup_test.shadow_called') AS shadows_called_by_helpers;

RESET search_path;
-- The reading helpers returned what they return under a plain path; the
-- writing ones did what they do: 101 rows left of 300 (99 clusters of
-- three, one of two, one row alone), none of them still flagged.
SELECT g.what, g.n = e.n AND g.h = e.h AS same, g.n
FROM sp_got g JOIN sp_expected e USING (what) ORDER BY what;
SELECT (SELECT count(*) FROM sp_docs) AS left_docs,
       (SELECT count(*) FROM sp_docs WHERE dup) AS still_flagged,
       (SELECT count(*) FROM sp_copy) AS left_copy;

DROP TABLE sp_docs, sp_copy, sp_expected, sp_state;
DROP SCHEMA shadow CASCADE;
