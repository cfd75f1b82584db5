/*-------------------------------------------------------------------------
 *
 * nd_permute.h
 *		Permuted tables for Hamming radius search (Manku, Jain, Das Sarma,
 *		WWW 2007) with multi-index probing (Norouzi, Punjani, Fleet, CVPR
 *		2012), as used by the GIN operator class.
 *
 * The 64 bits are cut into m blocks of consecutive bits.  Table i holds
 * every code rotated left so that block i comes first; codes that agree on
 * block i are then neighbours in table i's sort order.
 *
 * Pigeonhole, sharpened: write r = m*t + s with 0 <= s < m.  If the distance
 * of two codes is at most r, then one of the first s+1 blocks differs in at
 * most t bits, or one of the other blocks differs in at most t-1 bits
 * (otherwise the distance would be at least (s+1)(t+1) + (m-s-1)t = r+1).
 * So a radius-r search needs, in table i, only the block values within
 * nd_probe_radius(i) of the query's block i; for r < m that is one exact
 * block value in each of r+1 tables and nothing in the others.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_PERMUTE_H
#define ND_PERMUTE_H

#include <stdbool.h>
#include <stdint.h>

#define ND_PERMUTE_MIN_BLOCKS 2
#define ND_PERMUTE_MAX_BLOCKS 16

typedef struct nd_layout
{
	int			nblocks;
	/* bits in block i; the first 64 % nblocks blocks are one bit wider */
	uint8_t		width[ND_PERMUTE_MAX_BLOCKS];
	/* position of block i's first bit, counted from the most significant */
	uint8_t		start[ND_PERMUTE_MAX_BLOCKS];
} nd_layout;

/* nblocks must be in [ND_PERMUTE_MIN_BLOCKS, ND_PERMUTE_MAX_BLOCKS] */
extern void nd_layout_init(nd_layout *l, int nblocks);

/*
 * One table of nd_layout_init(nblocks)'s: the one that leads with block
 * `block` (from 0), as a layout of one table.  Multi-index hashing over it
 * is exact (a code within r bits is within r bits on the block), its steps
 * the block values at each distance from the query's.
 */
extern void nd_layout_init_one(nd_layout *l, int nblocks, int block);

static inline uint64_t
nd_rotl64(uint64_t x, unsigned n)
{
	n &= 63;
	return n == 0 ? x : (x << n) | (x >> (64 - n));
}

/* The code as stored in table i: block i in the most significant bits. */
static inline uint64_t
nd_permute(const nd_layout *l, int table, uint64_t code)
{
	return nd_rotl64(code, l->start[table]);
}

static inline uint64_t
nd_unpermute(const nd_layout *l, int table, uint64_t permuted)
{
	return nd_rotl64(permuted, 64 - l->start[table]);
}

/* Block i of a code, as an integer of width[i] bits. */
static inline uint32_t
nd_block(const nd_layout *l, int table, uint64_t code)
{
	return (uint32_t) (nd_permute(l, table, code) >> (64 - l->width[table]));
}

/*
 * The smallest permuted code of table i whose leading block is `value`:
 * where a probe for that block value starts.
 */
static inline uint64_t
nd_block_prefix(const nd_layout *l, int table, uint32_t value)
{
	return (uint64_t) value << (64 - l->width[table]);
}

/*
 * How far block i may be from the query's block i in a radius-r search
 * (see the header comment); -1: table i need not be probed.  r < 0 probes
 * nothing.
 */
extern int	nd_probe_radius(const nd_layout *l, int radius, int table);

/* Number of block values within distance d of a w-bit block (0 if d < 0). */
extern uint64_t nd_ball_volume(int width, int d);

/* Probes (table, block value) of a radius-r search, over all tables. */
extern uint64_t nd_probe_count(const nd_layout *l, int radius);

/*
 * Enumerates the w-bit values within distance d of a center, by distance
 * (center first), each once.
 */
typedef struct nd_ball_iter
{
	uint32_t	center;
	int			width;
	int			maxdist;
	int			dist;			/* number of flipped bits now */
	uint64_t	flips;			/* current set of flipped bits */
	bool		done;
} nd_ball_iter;

extern void nd_ball_iter_init(nd_ball_iter *it, uint32_t center, int width, int maxdist);
extern bool nd_ball_iter_next(nd_ball_iter *it, uint32_t *value);

#endif							/* ND_PERMUTE_H */
