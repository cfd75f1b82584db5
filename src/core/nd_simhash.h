/*-------------------------------------------------------------------------
 *
 * nd_simhash.h
 *		SimHash accumulators (Charikar): every feature votes on each of the
 *		64 bits, +weight where its hash has a 1, -weight where it has a 0;
 *		a fingerprint bit is 1 when its vote is positive.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_SIMHASH_H
#define ND_SIMHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Unit weights (features weighted by how often they occur).  Counts the set
 * bits per position without looking at bits one by one: blocks of 16
 * features go through a carry-save adder tree (Harley-Seal), which leaves
 * bit-sliced partial counts; each block's count of 16s is added to byte-wide
 * lanes, eight positions to a word, through a table.  A feature costs about
 * six word operations instead of 64 branches.
 */
typedef struct nd_simhash_acc
{
	uint64_t	lanes16[8];		/* byte j of lanes16[k]: 16s at bit 8k + j */
	uint64_t	lanes1[8];		/* byte j of lanes1[k]: 1s at bit 8k + j */
	uint64_t	ones_,
				twos,
				fours,
				eights;			/* bit-sliced partial counts (0..15) */
	uint32_t	in_lanes16;		/* blocks in lanes16 since the last spill */
	uint32_t	in_lanes1;		/* features in lanes1 since the last spill */
	uint64_t	ones[64];		/* features with bit i set, spilled */
	uint64_t	n;				/* features counted */
} nd_simhash_acc;

extern void nd_simhash_init(nd_simhash_acc *acc);
extern void nd_simhash_add(nd_simhash_acc *acc, const uint64_t *features, size_t n);

/* An nd_feature_sink (nd_features.h) that votes into the acc it is given. */
extern void nd_simhash_sink(void *acc, const uint64_t *features, size_t n);

/* Stores the fingerprint; false (and 0) when there were no features. */
extern bool nd_simhash_result(nd_simhash_acc *acc, uint64_t *fingerprint);

/*
 * Real weights.  Features of zero weight do not count; a fingerprint needs at
 * least one feature of non-zero weight.
 */
typedef struct nd_wsimhash_acc
{
	double		votes[64];
	uint64_t	n;				/* features of non-zero weight */
} nd_wsimhash_acc;

extern void nd_wsimhash_init(nd_wsimhash_acc *acc);
extern void nd_wsimhash_add(nd_wsimhash_acc *acc, uint64_t feature, double weight);
extern void nd_wsimhash_merge(nd_wsimhash_acc *into, const nd_wsimhash_acc *from);
extern bool nd_wsimhash_result(const nd_wsimhash_acc *acc, uint64_t *fingerprint);

#endif							/* ND_SIMHASH_H */
