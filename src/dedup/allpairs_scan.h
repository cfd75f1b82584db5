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

#include "core/nd_allpairs.h"

/* What the core reports (nd_allpairs.h) */
typedef enum NdAllPairsOutput
{
	ND_ALLPAIRS_PAIRS,			/* every pair */
	ND_ALLPAIRS_EDGES,			/* spanning edges */
	ND_ALLPAIRS_GROUPS			/* pairs of groups of identical codes */
} NdAllPairsOutput;

/* What a function asks of the scan. */
typedef struct NdAllPairsSpec
{
	const char *fname;			/* the SQL function, for messages */
	int			k;
	bool		auto_blocks;
	int			blocks;
	/*
	 * only the plan's tables [table_begin, table_end); table_end 0: every
	 * table (simhash_shard_clusters runs the one table of a block)
	 */
	int			table_begin;
	int			table_end;
	NdAllPairsOutput output;
	/*
	 * a pair (or edge), id_a < id_b, in the ids map_id returned; for
	 * ND_ALLPAIRS_GROUPS the positions of two groups in the piece's items
	 */
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
 * The same scan a piece at a time, for a caller that returns rows between
 * pieces: begin reads the rows (in the current memory context's child);
 * each next runs the core on one piece -- every row for every table in
 * memory, or one batch of one table past work_mem -- emitting through the
 * spec, and tells which rows and tables it covered (the items stay valid,
 * sorted by code, until the next call); end frees everything.
 */
typedef struct NdAllPairsScan NdAllPairsScan;

typedef struct NdAllPairsPiece
{
	nd_pair_item *items;
	size_t		n;
	int			t_begin;		/* tables [t_begin, t_end) */
	int			t_end;
} NdAllPairsPiece;

extern NdAllPairsScan *nd_allpairs_scan_begin(FunctionCallInfo fcinfo, const char *query,
											  const NdAllPairsSpec *spec);
extern bool nd_allpairs_scan_next(NdAllPairsScan *scan, NdAllPairsPiece *piece);
extern void nd_allpairs_scan_end(NdAllPairsScan *scan);

/*
 * The SQL argument forms, checked the same way for each function; they
 * call body with the query to read.  Forms: (query text, max_distance,
 * blocks); (source regclass, id_column name, fingerprint_column name,
 * max_distance, blocks); the same with text arguments.  A NULL query,
 * source, column or max_distance is an error (22004, nd_require_arg); a
 * NULL blocks means "choose".
 */
typedef void (*nd_allpairs_body) (FunctionCallInfo fcinfo, const char *query,
								  int k, bool auto_blocks, int blocks);

extern void nd_allpairs_query_form(FunctionCallInfo fcinfo, nd_allpairs_body body);
extern void nd_allpairs_rel_form(FunctionCallInfo fcinfo, nd_allpairs_body body);
extern void nd_allpairs_relname_form(FunctionCallInfo fcinfo, nd_allpairs_body body);

#endif							/* ND_ALLPAIRS_SCAN_H */
