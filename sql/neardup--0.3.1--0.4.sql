/* neardup 0.3.1 -> 0.4 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION neardup UPDATE TO '0.4'" to load this file. \quit

--
-- 0.4 runs on PostgreSQL 15 to 18 from one source, and makes the nightly
-- jobs cost what changed (doc/upgrading.md lists what is new).  The
-- scripts of 0.1 to 0.3.1 are released and never edited; a fresh CREATE
-- EXTENSION runs 0.1's and then every update.
--
-- Indexes built by 0.3 or 0.3.1 need no REINDEX.
--
-- The same conventions as the install script: every object schema-qualified
-- with @extschema@, every built-in type and operator with pg_catalog.
--
