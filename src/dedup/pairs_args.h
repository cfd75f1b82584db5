/*-------------------------------------------------------------------------
 *
 * pairs_args.h
 *		The checks of max_distance and blocks shared by simhash_pairs and
 *		the band-key functions, which take the same two parameters, and of
 *		a block of a block-sharded layout.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_PAIRS_ARGS_H
#define ND_PAIRS_ARGS_H

#include "postgres.h"

#include "core/nd_allpairs.h"

/* 22023 unless k is a radius the tables can search with `blocks` blocks */
static inline void
nd_check_pairs_args(int k, bool auto_blocks, int blocks)
{
	if (k < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_distance must be between 0 and %d", ND_ALLPAIRS_MAX_DISTANCE)));

	/*
	 * The limit is the core's (m > k blocks of at most 16), but a wider one
	 * would not help: at 13 bits and more the tables cost more than
	 * comparing every pair, and above 15 chance pairs of unrelated
	 * fingerprints swamp the answer (doc/dedup-pairs.md, "Radii above 15").
	 */
	if (k > ND_ALLPAIRS_MAX_DISTANCE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_distance must be between 0 and %d", ND_ALLPAIRS_MAX_DISTANCE),
				 errdetail("Above %d bits, unrelated 64-bit fingerprints fall within the radius by chance (1 pair in 8,800 at 17 bits), and an exact search costs as much as comparing every pair.",
						   ND_ALLPAIRS_MAX_DISTANCE),
				 errhint("For a Jaccard threshold such as 0.8, cluster MinHash signatures with minhash_clusters(query, 0.8, recall => 0.95), or check candidates with simhash_similar_exact().")));
	if (!auto_blocks && !nd_pairs_check(k, blocks))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("blocks must be between %d and %d for max_distance %d",
						Max(ND_PERMUTE_MIN_BLOCKS, k + 1), ND_PERMUTE_MAX_BLOCKS, k)));
}

#endif							/* ND_PAIRS_ARGS_H */
