/* neardup 0.1 -> 0.2 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION neardup UPDATE TO '0.2'" to load this file. \quit

--
-- Everything 0.2 adds or changes, in the order it landed.  0.1's script is
-- released and never edited; a fresh CREATE EXTENSION runs it and then this
-- file, so a new install and an updated one are the same by construction
-- (test/e2e/upgrade.sh checks the catalogs anyway).
--
-- The same conventions as the install script: every object schema-qualified
-- with @extschema@, every built-in type and operator with pg_catalog, so
-- that the script means the same whatever the search_path.
--
