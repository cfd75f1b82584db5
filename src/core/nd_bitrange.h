/*-------------------------------------------------------------------------
 *
 * nd_bitrange.h
 *		Sets of 64-bit codes summarized by the bits they all agree on: the
 *		keys of the GiST index over simhash64 (src/index/gist_hamming.c).
 *
 * A range holds the AND and the OR of its codes.  A bit set in `all` is 1 in
 * every code, a bit clear in `any` is 0 in every code; the other bits are
 * "unfixed".  The range stands for the subcube of every code that agrees
 * with the fixed bits, so the Hamming distance from a query to the nearest
 * point of that subcube -- the number of fixed bits the query contradicts --
 * is a lower bound of its distance to every code of the set, and the exact
 * distance for a single code.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_BITRANGE_H
#define ND_BITRANGE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct nd_bitrange
{
	uint64_t	all;			/* AND of the codes */
	uint64_t	any;			/* OR of the codes */
} nd_bitrange;

/*
 * The server build defines ND_POPCOUNT64 as pg_popcount64, which uses the
 * POPCNT instruction where the CPU has it (checked at run time); the
 * compiler's builtin may be a library call without -mpopcnt.
 */
#ifndef ND_POPCOUNT64
#define ND_POPCOUNT64(x) __builtin_popcountll(x)
#endif

static inline int
nd_popcount64(uint64_t x)
{
	return ND_POPCOUNT64(x);
}

static inline nd_bitrange
nd_bitrange_of(uint64_t code)
{
	nd_bitrange r = {code, code};

	return r;
}

/* Adds the codes of `add` to `r`. */
static inline void
nd_bitrange_merge(nd_bitrange *r, const nd_bitrange *add)
{
	r->all &= add->all;
	r->any |= add->any;
}

static inline int
nd_bitrange_unfixed(const nd_bitrange *r)
{
	return nd_popcount64(r->all ^ r->any);
}

/* The bits on which every code of the range differs from q */
static inline uint64_t
nd_bitrange_differ(const nd_bitrange *r, uint64_t q)
{
	return (r->all & ~q) | (~r->any & q);
}

/* Distance from q to the nearest point of the subcube. */
static inline int
nd_bitrange_lower_bound(const nd_bitrange *r, uint64_t q)
{
	return nd_popcount64(nd_bitrange_differ(r, q));
}

static inline bool
nd_bitrange_equal(const nd_bitrange *a, const nd_bitrange *b)
{
	return a->all == b->all && a->any == b->any;
}

/*
 * Cost of adding `add` to `orig`: the bits that would become unfixed, plus a
 * fraction (< 1) growing with the bits already unfixed, so that among
 * ranges that absorb `add` equally well the tightest wins.  0 only when
 * `orig` is a single code equal to everything in `add`.
 */
extern double nd_bitrange_penalty(const nd_bitrange *orig, const nd_bitrange *add);

/*
 * Divides n >= 2 ranges into two non-empty groups: side[i] gets 0 or 1, and
 * u[0], u[1] the union of each group.  Returns the size of group 0.
 */
extern int	nd_bitrange_split(const nd_bitrange *r, int n, uint8_t *side,
							  nd_bitrange u[2]);

#endif							/* ND_BITRANGE_H */
