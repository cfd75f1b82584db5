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
 * Real weights, summed exactly, so that the fingerprint does not depend on
 * the order of the features (a float sum does: with weights 1e20, 1, -1e20
 * the 1 is lost or kept depending on where it comes; simhash_agg sees rows
 * in any order).  Weights are float4: w = M * 2^E with M an integer below
 * 2^24 and E in -149 .. 104.  Each bit's vote is kept as one int64 sum of
 * +-M per exponent ("row"), rows allocated as exponents occur (512 bytes
 * each; ordinary weights use a handful), and the sign of the exact total is
 * found by a carry walk over the exponents.  Where a float sum happens to be
 * exact (weights within some 2^29 of each other and not too many), the
 * result is the same as summing in double precision.
 *
 * Features of zero weight do not count; a fingerprint needs at least one
 * feature of non-zero weight.  Weights must be finite (the caller checks).
 */
#define ND_WSIMHASH_SLOTS 320	/* exponents -149 .. 170: 104 and carries above */

/* realloc(ptr, size), as for nd_unionfind; NULL ptr: a first allocation */
typedef void *(*nd_wsimhash_realloc_fn) (void *ptr, size_t size, void *arg);

typedef struct nd_wsimhash_acc
{
	int64_t		(*rows)[64];	/* rows[r][bit]: sum of +-M */
	uint64_t   *row_adds;		/* additions to row r since it was normalized */
	uint16_t	row_of[ND_WSIMHASH_SLOTS];	/* 0: none; else row index + 1 */
	int			nrows;
	int			cap;
	uint64_t	n;				/* features of non-zero weight */
	nd_wsimhash_realloc_fn realloc_fn;
	void	   *arg;
} nd_wsimhash_acc;

extern void nd_wsimhash_init(nd_wsimhash_acc *acc, nd_wsimhash_realloc_fn realloc_fn,
							 void *arg);
/* false if an allocation failed (realloc_fn returned NULL) */
extern bool nd_wsimhash_add(nd_wsimhash_acc *acc, uint64_t feature, float weight);
extern bool nd_wsimhash_merge(nd_wsimhash_acc *into, const nd_wsimhash_acc *from);
extern bool nd_wsimhash_result(const nd_wsimhash_acc *acc, uint64_t *fingerprint);
extern void nd_wsimhash_free(nd_wsimhash_acc *acc);

/*
 * The rows as a flat sequence, for serialization: row i has exponent slot
 * nd_wsimhash_row_slot(acc, i), its 64 sums and its addition count;
 * nd_wsimhash_load_row() adds such a row back.
 */
extern int	nd_wsimhash_row_slot(const nd_wsimhash_acc *acc, int row);
extern bool nd_wsimhash_load_row(nd_wsimhash_acc *acc, int slot, const int64_t sums[64],
								 uint64_t adds);

#endif							/* ND_SIMHASH_H */
