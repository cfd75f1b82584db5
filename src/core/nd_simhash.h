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
 * bits per position with eight byte-wide lanes in each of eight words, so a
 * feature costs eight table look-ups and adds instead of 64 branches.
 */
typedef struct nd_simhash_acc
{
	uint64_t	lanes[8];		/* byte j of lanes[k]: ones at bit 8k + j */
	uint32_t	in_lanes;		/* features in lanes since the last spill */
	uint64_t	ones[64];		/* features with bit i set */
	uint64_t	n;				/* features counted */
} nd_simhash_acc;

extern void nd_simhash_init(nd_simhash_acc *acc);
extern void nd_simhash_add(nd_simhash_acc *acc, const uint64_t *features, size_t n);

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
