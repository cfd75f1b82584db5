-- The deletes of a layout bench (run_layout_bytes.sh, run_layout_packed.sh),
-- from the table src (id, sh): del_ids (k, ids, n) holds, in order of k,
-- :nd deletes of 1 random id, :nd / 20 of 100 ids and 2 of 10,000 ids
-- (the ids in a random order, each once), then 20 of an id in no copy, as
-- an idempotent retry asks for (n = 0: copy 1 holds none, so each is
-- looked for by id in every partition of copies 2 to 4); del_res is where
-- the bench writes each delete's time.
CREATE TABLE del_ids AS
SELECT k, array_agg(id ORDER BY id) AS ids, count(*) AS n
FROM (SELECT id, CASE WHEN rn <= :nd THEN rn
                      WHEN rn <= :nd + :nd / 20 * 100 THEN :nd + 1 + (rn - :nd - 1) / 100
                      ELSE :nd * 2 + (rn - :nd - :nd / 20 * 100 - 1) / 10000 END AS k
      FROM (SELECT id, row_number() OVER (ORDER BY hashint8(id)) AS rn FROM src) s
      WHERE rn <= :nd + :nd / 20 * 100 + 20000) x
GROUP BY k;
INSERT INTO del_ids SELECT (SELECT max(k) FROM del_ids) + j, ARRAY[-j]::bigint[], 0
FROM generate_series(1, 20) j;
CREATE TABLE del_res (layout text, n int, ms float8, deleted bigint);
