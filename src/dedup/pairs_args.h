/*-------------------------------------------------------------------------
 *
 * pairs_args.h
 *		The checks of max_distance and blocks shared by simhash_pairs and
 *		the band-key functions, which take the same two parameters.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_PAIRS_ARGS_H
#define ND_PAIRS_ARGS_H

#include "postgres.h"

#include "nd_allpairs.h"

/* 22023 unless k is a radius the tables can search with `blocks` blocks */
static inline void
nd_check_pairs_args(int k, bool auto_blocks, int blocks)
{
	if (k < 0 || k > ND_ALLPAIRS_MAX_DISTANCE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_distance must be between 0 and %d", ND_ALLPAIRS_MAX_DISTANCE)));
	if (!auto_blocks && !nd_pairs_check(k, blocks))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("blocks must be between %d and %d for max_distance %d",
						Max(ND_PERMUTE_MIN_BLOCKS, k + 1), ND_PERMUTE_MAX_BLOCKS, k)));
}

#endif							/* ND_PAIRS_ARGS_H */
