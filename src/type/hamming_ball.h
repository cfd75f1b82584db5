/*-------------------------------------------------------------------------
 *
 * hamming_ball.h
 *		The query value of the Hamming radius search: every simhash64
 *		within `radius` bits of `center`.
 *
 * `sh <@ hamming_ball(q, r)` is the indexable form of `sh <~> q <= r`: the
 * index opclasses (GIN, GiST) take it as their search strategy, and the
 * planner turns the natural spellings into it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef HAMMING_BALL_H
#define HAMMING_BALL_H

#include "postgres.h"

#include "fmgr.h"
#include "port/pg_bitutils.h"

#include "core/nd_permute.h"
#include "type/simhash64.h"

/* Radii are kept in [-1, 64]: -1 holds nothing, 64 holds everything. */
#define HAMMING_BALL_EMPTY	(-1)
#define HAMMING_BALL_ALL	64

typedef struct HammingBall
{
	uint64		center;
	int32		radius;
	int32		pad;			/* always 0, so equal balls are equal bytes */
} HammingBall;

#define DatumGetHammingBallP(X)		((HammingBall *) DatumGetPointer(X))
#define HammingBallPGetDatum(X)		PointerGetDatum(X)
#define PG_GETARG_HAMMING_BALL_P(n) DatumGetHammingBallP(PG_GETARG_DATUM(n))
#define PG_RETURN_HAMMING_BALL_P(x) return HammingBallPGetDatum(x)

static inline int32
hamming_ball_clamp_radius(int64 radius)
{
	if (radius < 0)
		return HAMMING_BALL_EMPTY;
	if (radius > HAMMING_BALL_ALL)
		return HAMMING_BALL_ALL;
	return (int32) radius;
}

/*
 * 22023 unless radius is a Hamming radius of 64-bit fingerprints: the
 * check of every function that takes a radius up to 64 (hamming_ball(),
 * simhash_recall(), simhash_layout_within_sql()).  `name` is the
 * argument's.
 */
static inline void
hamming_check_radius(const char *name, int64 radius)
{
	if (radius < 0 || radius > HAMMING_BALL_ALL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 0 and %d", name, HAMMING_BALL_ALL),
				 errdetail("Two 64-bit fingerprints differ in 0 to 64 bits: radius 64 already holds every fingerprint.")));
}

static inline bool
hamming_ball_contains(const HammingBall *ball, uint64 code)
{
	return pg_popcount64(ball->center ^ code) <= ball->radius;
}

/* a && b: the centers are within the smaller of the two radii */
static inline bool
hamming_balls_collide(const HammingBall *a, const HammingBall *b)
{
	return pg_popcount64(a->center ^ b->center) <= Min(a->radius, b->radius);
}

/*
 * The block ball: the codes of a ball that also agree with its center on
 * one block -- block `block` (from 1) of the code cut into `blocks` blocks
 * as the permuted tables cut it (nd_permute.h), simhash_block()'s blocks.
 * `sh <@ hamming_block_ball(q, r, b, m)` is the search of copy b of a
 * block-sharded layout: a hamming index of m tables answers it from table
 * b alone.  Its first fields are a HammingBall's.
 */
typedef struct HammingBlockBall
{
	uint64		center;
	int32		radius;
	int16		block;			/* from 1 */
	int16		blocks;
} HammingBlockBall;

#define DatumGetHammingBlockBallP(X)	((HammingBlockBall *) DatumGetPointer(X))
#define PG_GETARG_HAMMING_BLOCK_BALL_P(n) DatumGetHammingBlockBallP(PG_GETARG_DATUM(n))

/* 22023 unless block counts from 1 to blocks, and blocks is a layout's */
static inline void
nd_check_block_args(int block, int blocks)
{
	if (blocks < ND_PERMUTE_MIN_BLOCKS || blocks > ND_PERMUTE_MAX_BLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("blocks must be between %d and %d",
						ND_PERMUTE_MIN_BLOCKS, ND_PERMUTE_MAX_BLOCKS)));
	if (block < 1 || block > blocks)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("block must be between 1 and blocks (%d)", blocks)));
}

/*
 * The value of block `block` (from 1) of a code cut into `blocks`, its
 * arguments checked first: simhash_block(), and what a packed copy's rows
 * are checked and found by.
 */
static inline int64
nd_checked_block(uint64 code, int block, int blocks)
{
	nd_layout	layout;

	nd_check_block_args(block, blocks);
	nd_layout_init(&layout, blocks);
	return (int64) nd_block(&layout, block - 1, code);
}

/*
 * The bits of block `block` (from 1) of `blocks`, in place: nd_layout_init's
 * cut, the first 64 % blocks blocks one bit wider.
 */
static inline uint64
hamming_block_mask(int block, int blocks)
{
	int			b = block - 1;
	int			base = 64 / blocks;
	int			wide = 64 % blocks;
	int			start = b * base + Min(b, wide);
	int			width = base + (b < wide ? 1 : 0);
	uint64		from_start = ~UINT64CONST(0) >> start;

	return start + width >= 64 ? from_start : from_start & ~(~UINT64CONST(0) >> (start + width));
}

static inline bool
hamming_block_ball_contains(const HammingBlockBall *ball, uint64 code)
{
	return ((ball->center ^ code) & hamming_block_mask(ball->block, ball->blocks)) == 0 &&
		pg_popcount64(ball->center ^ code) <= ball->radius;
}

#endif							/* HAMMING_BALL_H */
