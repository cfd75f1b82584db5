--
-- dedup_keep_one() and dedup_representatives(): one row per cluster stays,
-- chosen by keep_order (default: the smallest id); the others are deleted,
-- or flagged.  Checked against full before/after snapshots: rows in no
-- cluster are untouched, and exactly the chosen row of each cluster is left.
--

-- A table whose names need quoting, and pairs kept in a table.
CREATE TABLE "Dup Docs" ("Id" int PRIMARY KEY, body text, created_at timestamp, "is dup" bool);
INSERT INTO "Dup Docs"
SELECT i, repeat(chr(97 + i % 26), 1 + (i * 37) % 11),
       timestamp '2026-01-01' + (i * 7919 % 1000) * interval '1 hour', NULL
FROM generate_series(1, 300) i;
-- Clusters: {10..14} (a chain), {20, 25, 29} (a triangle), {40, 41},
-- {100..119} (a star around 110), and pairs with ids not in the table.
CREATE TABLE pair (a int, b int);
INSERT INTO pair VALUES (10, 11), (12, 11), (12, 13), (14, 13), (20, 25), (25, 29), (29, 20), (41, 40);
INSERT INTO pair SELECT 110, i FROM generate_series(100, 119) i WHERE i <> 110;
INSERT INTO pair VALUES (500, 501), (41, 502);
CREATE TABLE before AS SELECT * FROM "Dup Docs";

-- Who is kept, by default (the smallest id of the cluster that exists).
SELECT * FROM dedup_representatives('"Dup Docs"', 'Id', 'SELECT a, b FROM pair')
ORDER BY cluster_id, id;

-- Compares the table with the snapshot: rows in no cluster must be
-- unchanged, and of each cluster's rows only the representative (as
-- given by the query rep, computed on the snapshot) may stay, unchanged.
CREATE FUNCTION check_keep_one(rep text) RETURNS TABLE (untouched_outside bool, one_per_cluster bool, kept_the_right_one bool, rows_left bigint)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'CREATE TEMP TABLE r AS ' || rep;
    RETURN QUERY
    SELECT (SELECT count(*) FROM (SELECT * FROM before b WHERE b."Id" NOT IN (SELECT id FROM r)
                                  EXCEPT SELECT * FROM "Dup Docs") x) = 0
           AND (SELECT count(*) FROM "Dup Docs" d WHERE d."Id" NOT IN (SELECT id FROM r))
             = (SELECT count(*) FROM before b WHERE b."Id" NOT IN (SELECT id FROM r)),
           (SELECT bool_and(n = 1) FROM (SELECT count(d."Id") AS n FROM r LEFT JOIN "Dup Docs" d ON d."Id" = r.id
                                         GROUP BY r.cluster_id) x),
           (SELECT count(*) FROM (SELECT d.* FROM "Dup Docs" d JOIN r ON r.id = d."Id"
                                  EXCEPT SELECT b.* FROM before b JOIN r ON r.id = b."Id" AND r.id = r.representative) x) = 0,
           (SELECT count(*) FROM "Dup Docs");
    DROP TABLE r;
END
$$;

-- Delete mode, default order: 26 rows of clusters go (4 + 2 + 1 + 19;
-- 502 is not in the table).
BEGIN;
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair');
SELECT * FROM check_keep_one($$SELECT id, cluster_id, first_value(id) OVER (PARTITION BY cluster_id ORDER BY id) AS representative
                              FROM dedup_clusters('SELECT a, b FROM pair') JOIN before ON "Id" = id$$);
-- The representatives are there, their clusters' others are not.
SELECT "Id" FROM "Dup Docs" WHERE "Id" IN (10, 11, 12, 13, 14, 20, 25, 29, 40, 41, 100, 110, 119) ORDER BY 1;
-- Again: nothing left to do.
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair');
ROLLBACK;

-- keep_order: the longest body (ties: smallest id), then the newest.
SELECT cluster_id, representative, length(body) AS len,
       (SELECT max(length(d2.body)) FROM "Dup Docs" d2 JOIN dedup_clusters('SELECT a, b FROM pair') c2
          ON c2.id = d2."Id" WHERE c2.cluster_id = r.cluster_id) AS longest
FROM (SELECT DISTINCT cluster_id, representative
      FROM dedup_representatives('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', 'length(body) DESC')) r
JOIN "Dup Docs" d ON d."Id" = r.representative ORDER BY cluster_id;
BEGIN;
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', 'length(body) DESC');
SELECT * FROM check_keep_one($$SELECT id, cluster_id, first_value(id) OVER (PARTITION BY cluster_id ORDER BY length(body) DESC, id) AS representative
                              FROM dedup_clusters('SELECT a, b FROM pair') JOIN before ON "Id" = id$$);
ROLLBACK;
BEGIN;
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', keep_order => 'created_at DESC');
SELECT * FROM check_keep_one($$SELECT id, cluster_id, first_value(id) OVER (PARTITION BY cluster_id ORDER BY created_at DESC, id) AS representative
                              FROM dedup_clusters('SELECT a, b FROM pair') JOIN before ON "Id" = id$$);
SELECT "Id", created_at FROM "Dup Docs" WHERE "Id" IN (SELECT a FROM pair UNION SELECT b FROM pair) ORDER BY 1;
ROLLBACK;
-- The id column itself, descending: keep_order sees only the table's columns.
SELECT DISTINCT cluster_id, representative
FROM dedup_representatives('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', '"Id" DESC') ORDER BY 1;

-- Even when the table has columns named like the result's.
CREATE TABLE clash (id int, cluster_id int, representative int);
INSERT INTO clash SELECT i, -i, i % 3 FROM generate_series(1, 6) i;
SELECT * FROM dedup_representatives('clash', 'id', 'VALUES (1, 2), (2, 3), (4, 5), (5, 6)', 'id DESC')
ORDER BY 1;
SELECT * FROM dedup_representatives('clash', 'id', 'VALUES (1, 2), (2, 3), (4, 5), (5, 6)', 'representative DESC, cluster_id')
ORDER BY 1;
DROP TABLE clash;

-- Flag mode: non-representatives true, representatives false, nothing
-- else touched; the count is of rows whose flag changed.
BEGIN;
UPDATE "Dup Docs" SET "is dup" = true WHERE "Id" IN (10, 200);
UPDATE before SET "is dup" = true WHERE "Id" IN (10, 200);
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', flag_column => 'is dup');
SELECT "is dup", count(*), min("Id"), max("Id") FROM "Dup Docs" GROUP BY 1 ORDER BY 1;
SELECT (SELECT count(*) FROM (SELECT * FROM before WHERE "Id" NOT IN (SELECT a FROM pair UNION SELECT b FROM pair)
                              EXCEPT SELECT * FROM "Dup Docs") x) AS outside_changed,
       (SELECT count(*) FROM (SELECT "Id", body, created_at FROM before EXCEPT SELECT "Id", body, created_at FROM "Dup Docs") x) AS other_columns_changed;
-- Again: no change.
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', flag_column => 'is dup');
-- Another order moves the flags within the clusters.
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', '"Id" DESC', 'is dup');
SELECT "Id" FROM "Dup Docs" WHERE "is dup" IS false ORDER BY 1;
ROLLBACK;

-- One transaction: a row that cannot go stops the whole deletion.
CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."Id" = 119 THEN RAISE EXCEPTION 'row 119 is protected'; END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER protect BEFORE DELETE ON "Dup Docs" FOR EACH ROW EXECUTE FUNCTION refuse_delete();
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair');
SELECT count(*) FROM "Dup Docs";
DROP TRIGGER protect ON "Dup Docs";

-- As the caller: without DELETE privilege, nothing happens.
CREATE ROLE nd_keep_one_reader;
GRANT SELECT ON "Dup Docs", pair TO nd_keep_one_reader;
SET ROLE nd_keep_one_reader;
SELECT count(*) FROM dedup_representatives('"Dup Docs"', 'Id', 'SELECT a, b FROM pair');
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair');
RESET ROLE;
DROP OWNED BY nd_keep_one_reader;
DROP ROLE nd_keep_one_reader;
SELECT count(*) FROM "Dup Docs";

-- Errors.
\set VERBOSITY sqlstate
SELECT dedup_keep_one('no_such_table', 'Id', 'SELECT a, b FROM pair');
SELECT dedup_keep_one('"Dup Docs"', 'id', 'SELECT a, b FROM pair');
SELECT dedup_keep_one('"Dup Docs"', 'body', 'SELECT a, b FROM pair');
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', flag_column => 'nope');
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', flag_column => 'body');
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', 'no_such_column DESC');
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b, 3 FROM pair');
SELECT dedup_keep_one('"Dup Docs"', 'Id', NULL);
SELECT dedup_keep_one('"Dup Docs"', NULL, 'SELECT a, b FROM pair');
\set VERBOSITY default
SELECT dedup_keep_one('"Dup Docs"', 'body', 'SELECT a, b FROM pair');
SELECT dedup_keep_one('"Dup Docs"', 'Id', 'SELECT a, b FROM pair', flag_column => 'body');
-- Nothing was deleted by the failed calls.
SELECT count(*) FROM "Dup Docs";

DROP TABLE "Dup Docs", pair, before;
DROP FUNCTION check_keep_one(text), refuse_delete();
