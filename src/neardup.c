/*-------------------------------------------------------------------------
 *
 * neardup.c
 *		Module entry point of the neardup extension.
 *
 * The SQL-facing code lives one concern per file, in folders that follow
 * the data path: type/, fingerprint/, minhash/, index/, the hamming access
 * method in hamming/ (its README describes it), planner/, dedup/ and the
 * block-sharded layout in shard/.  shared/ holds what several of them
 * share (the extension's objects by name, the progress of long jobs, the
 * allocator the cores get), pg_compat.h what differs between PostgreSQL
 * majors, and src/core/ the server-free algorithmic cores.  Headers are
 * included by their folder ("hamming/hamming.h").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "hamming/hamming.h"
#include "pg_compat.h"
#include "planner/radius_planner.h"

ND_MODULE_MAGIC;

void		_PG_init(void);

/*
 * Runs when the library is loaded: through shared_preload_libraries, or
 * (no configuration needed) as soon as any of its functions is looked up,
 * which the planner does for the support function of <~> before it builds
 * the scans of a query that uses it.  Hooks chain to those installed
 * before.
 */
void
_PG_init(void)
{
	nd_radius_rewrite_init();
	ham_init_reloptions();
	ham_init_worker_gucs();
	ham_init_run_gucs();
	MarkGUCPrefixReserved("neardup");
}
