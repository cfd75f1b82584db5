--
-- The dedup family's arguments (issue 29, part 7): one rule for NULLs,
-- and a bad keep_order reported in the user's terms.
--
-- The rule (doc/dedup.md): a NULL required argument -- a table, a column,
-- a query, a radius, a threshold -- is an error, 22004 naming it, never an
-- empty answer that reads as "no duplicates"; an argument whose NULL has a
-- meaning keeps it (blocks, bands and rows: choose; recall: the default;
-- keep_order: the smallest id; flag_column: delete; since: every row;
-- deleted: find them).
-- The row-level helpers simhash_band_keys and simhash_band_first are STRICT
-- scalars: NULL in, NULL out, as PostgreSQL's own functions.
--
CREATE TABLE na (id bigint, sh simhash64, sig int4[], created_at int, is_dup bool);
INSERT INTO na
SELECT g, (g % 3)::bigint::simhash64, minhash(ARRAY['w' || (g % 3), 'x'], 16), g % 5, false
FROM generate_series(1, 9) g;
CREATE TABLE na_state (id bigint, cluster_id bigint);

SELECT q AS call, nd_test.try(q, with_value => true) AS outcome FROM (VALUES
    -- simhash_pairs: table, text and query forms
    ($$SELECT count(*) FROM simhash_pairs('na'::regclass, 'id', 'sh', 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs(NULL::regclass, 'id', 'sh', 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs('na'::regclass, NULL, 'sh', 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs('na'::regclass, 'id', NULL, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs('na'::regclass, 'id', 'sh', NULL, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs(NULL::text, 'id'::text, 'sh'::text, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs('na'::text, NULL::text, 'sh'::text, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs('na'::text, 'id'::text, NULL::text, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs('na'::text, 'id'::text, 'sh'::text, NULL, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs('SELECT id, sh FROM na', 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs(NULL::text, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_pairs('SELECT id, sh FROM na', NULL::int, NULL)$$),
    -- simhash_clusters
    ($$SELECT count(*) FROM simhash_clusters('na'::regclass, 'id', 'sh', 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters(NULL::regclass, 'id', 'sh', 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters('na'::regclass, NULL, 'sh', 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters('na'::regclass, 'id', NULL, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters('na'::regclass, 'id', 'sh', NULL, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters(NULL::text, 'id'::text, 'sh'::text, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters('na'::text, NULL::text, 'sh'::text, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters('na'::text, 'id'::text, NULL::text, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters('na'::text, 'id'::text, 'sh'::text, NULL, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters('SELECT id, sh FROM na', 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters(NULL::text, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters('SELECT id, sh FROM na', NULL::int, NULL)$$),
    -- minhash_clusters: bands and rows NULL together choose
    ($$SELECT count(*) FROM minhash_clusters('na'::regclass, 'id', 'sig', 0.8, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters(NULL::regclass, 'id', 'sig', 0.8, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('na'::regclass, NULL, 'sig', 0.8, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('na'::regclass, 'id', NULL, 0.8, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('na'::regclass, 'id', 'sig', NULL, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('na'::regclass, 'id', 'sig', 0.8, NULL, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('na'::regclass, 'id', 'sig', 0.8, NULL, 4)$$),
    ($$SELECT count(*) FROM minhash_clusters('na'::regclass, 'id', 'sig', 0.8, 4, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters(NULL::text, 'id'::text, 'sig'::text, 0.8, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('na'::text, NULL::text, 'sig'::text, 0.8, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('na'::text, 'id'::text, NULL::text, 0.8, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('na'::text, 'id'::text, 'sig'::text, NULL, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('SELECT id, sig FROM na', 0.8, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters(NULL::text, 0.8, NULL, NULL)$$),
    ($$SELECT count(*) FROM minhash_clusters('SELECT id, sig FROM na', NULL::float8, NULL, NULL)$$),
    -- dedup_clusters
    ($$SELECT count(*) FROM dedup_clusters('SELECT 1, 2')$$),
    ($$SELECT count(*) FROM dedup_clusters(NULL)$$),
    -- dedup_representatives: a NULL keep_order is the smallest id
    ($$SELECT count(*) FROM dedup_representatives('na', 'id', 'SELECT 1, 2', NULL)$$),
    ($$SELECT count(*) FROM dedup_representatives(NULL, 'id', 'SELECT 1, 2', NULL)$$),
    ($$SELECT count(*) FROM dedup_representatives('na', NULL, 'SELECT 1, 2', NULL)$$),
    ($$SELECT count(*) FROM dedup_representatives('na', 'id', NULL, NULL)$$),
    -- dedup_keep_one (pairs that match no row: nothing is deleted); a NULL
    -- flag_column deletes
    ($$SELECT dedup_keep_one('na', 'id', 'SELECT 100, 200', NULL, NULL)$$),
    ($$SELECT dedup_keep_one(NULL, 'id', 'SELECT 100, 200', NULL, NULL)$$),
    ($$SELECT dedup_keep_one('na', NULL, 'SELECT 100, 200', NULL, NULL)$$),
    ($$SELECT dedup_keep_one('na', 'id', NULL, NULL, NULL)$$),
    ($$SELECT dedup_keep_one(NULL, 'id', 'SELECT 100, 200', NULL, 'is_dup')$$),
    ($$SELECT dedup_keep_one('na', 'id', 'SELECT 100, 200', NULL, 'is_dup')$$),
    -- simhash_pairs_since: a NULL since is every pair
    ($$SELECT count(*) FROM simhash_pairs_since('na', 'id', 'sh', NULL, 3)$$),
    ($$SELECT count(*) FROM simhash_pairs_since(NULL, 'id', 'sh', 5, 3)$$),
    ($$SELECT count(*) FROM simhash_pairs_since('na', NULL, 'sh', 5, 3)$$),
    ($$SELECT count(*) FROM simhash_pairs_since('na', 'id', NULL, 5, 3)$$),
    ($$SELECT count(*) FROM simhash_pairs_since('na', 'id', 'sh', 5, NULL)$$),
    -- simhash_clusters_update: a NULL since is a full run, a NULL deleted
    -- has them found
    ($$SELECT count(*) FROM simhash_clusters_update('na_state', 'na', 'id', 'sh', NULL, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters_update(NULL, 'na', 'id', 'sh', 5, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters_update('na_state', NULL, 'id', 'sh', 5, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters_update('na_state', 'na', NULL, 'sh', 5, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters_update('na_state', 'na', 'id', NULL, 5, 3, NULL)$$),
    ($$SELECT count(*) FROM simhash_clusters_update('na_state', 'na', 'id', 'sh', 5, NULL, NULL)$$),
    -- the STRICT row-level helpers
    ($$SELECT simhash_band_keys(NULL, 3)$$),
    ($$SELECT simhash_band_keys('0000000000000000', NULL)$$),
    ($$SELECT simhash_band_keys('0000000000000000', 3, NULL)$$),
    ($$SELECT simhash_band_first(NULL, '0000000000000000', 1, 3)$$),
    ($$SELECT simhash_band_first('0000000000000000', '0000000000000000', NULL, 3)$$)
) v(q);
-- nothing was deleted or flagged
SELECT count(*), count(*) FILTER (WHERE is_dup) AS flagged FROM na;

--
-- A bad keep_order is the user's mistake, in the user's terms: the
-- message names keep_order and the text given, the SQLSTATE is the
-- error's own, the hint is PostgreSQL's (or ours), and the one CONTEXT
-- line is the function called -- not the generated query.
--
INSERT INTO na SELECT 100 + id, sh, sig, created_at, is_dup FROM na;
SELECT dedup_keep_one('na', 'id', 'SELECT id, 100 + id FROM na WHERE id < 100', 'created DESC');
SELECT dedup_keep_one('na', 'id', 'SELECT id, 100 + id FROM na WHERE id < 100', 'created_at DESC NULS LAST');
SELECT dedup_keep_one('na', 'id', 'SELECT id, 100 + id FROM na WHERE id < 100', 'lenght(created_at)');
SELECT dedup_keep_one('na', 'id', 'SELECT id, 100 + id FROM na WHERE id < 100', 'count(*)');
SELECT dedup_keep_one('na', 'id', 'SELECT id, 100 + id FROM na WHERE id < 100', '"neardup: id"');
SELECT * FROM dedup_representatives('na', 'id', 'SELECT id, 100 + id FROM na WHERE id < 100', 'created DESC');
-- the SQLSTATE is kept, for handlers
DO $$
BEGIN
    PERFORM dedup_keep_one('na', 'id', 'SELECT id, 100 + id FROM na WHERE id < 100', 'nope');
EXCEPTION WHEN undefined_column THEN
    RAISE NOTICE 'caught %: %', SQLSTATE, SQLERRM;
END $$;
-- nothing was deleted
SELECT count(*) FROM na;
-- a good keep_order, qualified or not, works as before
SELECT dedup_keep_one('na', 'id', 'SELECT id, 100 + id FROM na WHERE id < 100', 's.created_at DESC, id DESC');
SELECT count(*), min(id), max(id) FROM na;
-- a blank keep_order is none, as NULL is
SELECT * FROM dedup_representatives('na', 'id', 'SELECT 101, 102', '   ');
DROP TABLE na, na_state;
