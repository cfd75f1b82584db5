-- Loads the demo corpus into doc(id, name, body, sh) from :corpus, a
-- "name<TAB>path" list (test/demo/corpus_list.sh).  Shared by the demo and
-- the benchmarks.
CREATE TEMP TABLE corpus (name text, path text);
-- Server-side (the demo runs as a superuser; the server reads the files).
COPY corpus FROM :'corpus';

-- Copyright files are mostly UTF-8; a few older ones are Latin-1; a file
-- with NUL bytes is not text and is skipped.
CREATE FUNCTION pg_temp.decode(b bytea) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        RETURN convert_from(b, 'UTF8');
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
        RETURN convert_from(b, 'LATIN1');
    END;
EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
    RETURN NULL;
END $$;

CREATE TABLE doc (
    id   serial PRIMARY KEY,
    name text NOT NULL,
    body text NOT NULL,
    sh   simhash64
);
INSERT INTO doc (name, body)
SELECT name, body
FROM (SELECT name, pg_temp.decode(pg_read_binary_file(path)) AS body FROM corpus) c
WHERE body IS NOT NULL
ORDER BY name;

