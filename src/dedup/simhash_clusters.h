/*-------------------------------------------------------------------------
 *
 * simhash_clusters.h
 *		The clusters of one simhash_clusters scan (simhash_clusters.c), for
 *		the share of one block's shard too (shard/layout_blocks.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_SIMHASH_CLUSTERS_H
#define ND_SIMHASH_CLUSTERS_H

#include "postgres.h"

#include "fmgr.h"

/*
 * With groups, a cluster of more ids than this comes in several rows, each
 * starting with its cluster_id: a shard's rows cross postgres_fdw in text,
 * a fetch of 100 rows at a time, and a value is capped at 1 GB.
 */
#define ND_GROUP_ROW_IDS	100000

extern void nd_simhash_clusters_run(FunctionCallInfo fcinfo, const char *fname,
									const char *query, int k, bool auto_blocks,
									int blocks, int table_begin, int table_end,
									bool groups);

#endif							/* ND_SIMHASH_CLUSTERS_H */
