/*-------------------------------------------------------------------------
 *
 * allpairs_scan.h
 *		The all-pairs scan over the rows of a caller's query, shared by
 *		simhash_pairs (every pair) and simhash_clusters (spanning edges into
 *		a union-find): reading (id, fingerprint) rows, in memory or spilled
 *		and batched past work_mem, running the core (nd_allpairs.c), and the
 *		three argument forms the functions share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_ALLPAIRS_SCAN_H
#define ND_ALLPAIRS_SCAN_H

#include "postgres.h"

#include "fmgr.h"

/* What a function asks of the scan. */
typedef struct NdAllPairsSpec
{
	const char *fname;			/* the SQL function, for messages */
	int			k;
	bool		auto_blocks;
	int			blocks;
	bool		spanning;		/* spanning edges instead of every pair */
	/* a pair (or edge), id_a < id_b, in the ids map_id returned */
	void		(*emit) (void *arg, int64 id_a, int64 id_b, int dist);
	/* optional: the id the scan works with for a row's id (read order) */
	int64		(*map_id) (void *arg, int64 id);
	void	   *arg;
} NdAllPairsSpec;

/*
 * Runs the scan over the rows of query (id, simhash64).  Rows with a NULL
 * fingerprint are skipped; a NULL id is an error.  Working memory lives in
 * a context of its own, deleted on return.
 */
extern void nd_allpairs_scan(FunctionCallInfo fcinfo, const char *query,
							 const NdAllPairsSpec *spec);

/*
 * The SQL argument forms, checked the same way for each function; they
 * call body with the query to read.  Forms: (query text, max_distance,
 * blocks); (source regclass, id_column name, fingerprint_column name,
 * max_distance, blocks); the same with text arguments.  A NULL max_distance
 * is an error (22004); a NULL query, source or column gives an empty result,
 * for which body is called with query = NULL.
 */
typedef void (*nd_allpairs_body) (FunctionCallInfo fcinfo, const char *query,
								  int k, bool auto_blocks, int blocks);

extern void nd_allpairs_query_form(FunctionCallInfo fcinfo, nd_allpairs_body body);
extern void nd_allpairs_rel_form(FunctionCallInfo fcinfo, nd_allpairs_body body);
extern void nd_allpairs_relname_form(FunctionCallInfo fcinfo, nd_allpairs_body body);

#endif							/* ND_ALLPAIRS_SCAN_H */
