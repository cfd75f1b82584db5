/*-------------------------------------------------------------------------
 *
 * neardup.c
 *		Module entry point of the neardup extension.
 *
 * The SQL-facing code lives one concern per file (simhash64_type.c,
 * hamming.c, text_features.c, simhash_*.c); the server-free algorithmic
 * cores live in src/core/.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;
