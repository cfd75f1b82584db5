/*-------------------------------------------------------------------------
 *
 * layout_blocks.c
 *		The blocks of a block-sharded layout (doc/scale-out.md, "The block
 *		layout"): simhash_block(), one block's value, the partition key of
 *		the layout's copies; and simhash_shard_clusters(), one block's
 *		shard's share of a clustering, run by the dedup code's
 *		simhash_clusters scan (dedup/simhash_clusters.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "core/nd_permute.h"
#include "dedup/pairs_args.h"
#include "dedup/query_rows.h"
#include "dedup/simhash_clusters.h"
#include "type/hamming_ball.h"
#include "type/simhash64.h"

/*
 * simhash_block(fingerprint, block, blocks): block `block` (from 1, the
 * most significant bits first) of the fingerprint cut into `blocks` blocks
 * as the permuted tables cut it (nd_permute.h: the first 64 % blocks blocks
 * one bit wider), as an integer in [0, 2^width).  Two fingerprints within
 * blocks - 1 bits have an equal value for at least one block.
 */
PG_FUNCTION_INFO_V1(simhash_block);
Datum
simhash_block(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(nd_checked_block(PG_GETARG_SIMHASH64(0), PG_GETARG_INT32(1), PG_GETARG_INT32(2)));
}

/*
 * simhash_shard_clusters(query text, block int4, blocks int4): the share of
 * one block's shard in a block-sharded clustering (doc/scale-out.md), as one
 * (cluster_id, ids) row per cluster: what crosses the network, and what
 * dedup_clusters joins as groups on the coordinator.  The
 * rows are those of one range of block values of a copy partitioned by that
 * block; the pairs are those within blocks - 1 bits whose first block of
 * agreement (counting from 1) is `block`, found by the one table of that
 * block (the plan of max_distance blocks - 1 has one table per block, table
 * t leading with block t).  Every pair within blocks - 1 bits agrees on some
 * block, and its two rows are in the same range of its first agreeing
 * block's copy, so the union of every shard's edges has the components of
 * simhash_clusters(max_distance => blocks - 1) over all the rows.
 */
PG_FUNCTION_INFO_V1(simhash_shard_clusters);
Datum
simhash_shard_clusters(PG_FUNCTION_ARGS)
{
	int			block,
				blocks;
	char	   *query;

	nd_require_arg(fcinfo, 0, "query");
	nd_require_arg(fcinfo, 1, "block");
	nd_require_arg(fcinfo, 2, "blocks");
	query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	block = PG_GETARG_INT32(1);
	blocks = PG_GETARG_INT32(2);
	nd_check_block_args(block, blocks);
	nd_simhash_clusters_run(fcinfo, "simhash_shard_clusters", query, blocks - 1, false,
							blocks, block - 1, block, true);
	return (Datum) 0;
}
