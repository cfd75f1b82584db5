/*-------------------------------------------------------------------------
 *
 * simhash_gin.h
 *		What the GIN operator class simhash64_gin_ops shares with the
 *		planner's cost model (src/planner/radius_cost.c): its options and
 *		its probe limit.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_GIN_H
#define SIMHASH_GIN_H

#define SIMHASH_GIN_DEFAULT_BLOCKS		4

/*
 * Above this many probes, one pass over a whole table (every key checked by
 * comparePartial) replaces probing.  A probe costs about 2-4 us whatever the
 * table size, a pass about 20 ns per row, so the break-even is near one
 * probe per 100 rows: 4096 suits tables from about half a million rows on
 * (doc/index-gin.md has the measurements).  GIN's scan setup is also
 * quadratic in the number of entries.  With 4 blocks the limit is reached
 * at radius 16.
 */
#define SIMHASH_GIN_MAX_PROBES			4096

/* Opclass options: WITH (blocks = n) */
typedef struct SimhashGinOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			blocks;
} SimhashGinOptions;

#endif							/* SIMHASH_GIN_H */
