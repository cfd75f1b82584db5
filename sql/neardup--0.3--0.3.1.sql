/* neardup 0.3 -> 0.3.1 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION neardup UPDATE TO '0.3.1'" to load this file. \quit

--
-- 0.3.1 fixes what the audit of 0.3 found (doc/upgrading.md lists them).
-- The scripts of 0.1, 0.2 and 0.3 are released and never edited; a fresh
-- CREATE EXTENSION runs 0.1's and then every update.
--
-- Indexes built by 0.3 need no REINDEX.
--
-- The same conventions as the install script: every object schema-qualified
-- with @extschema@, every built-in type and operator with pg_catalog.
--

-- ===== section: progress of long jobs (src/dedup/progress.c) =====

-- ===== end section: progress of long jobs =====



-- ===== section: arguments refused (radius limits) =====

-- ===== end section: arguments refused =====



-- ===== section: MinHash band lookups (src/planner/band_support.c) =====

-- ===== end section: MinHash band lookups =====



-- ===== section: the hamming index (src/hamming) =====

-- ===== end section: the hamming index =====



-- ===== section: block-sharded layout (src/shard, doc/scale-out.md) =====

-- ===== end section: block-sharded layout =====
