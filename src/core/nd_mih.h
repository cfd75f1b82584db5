/*-------------------------------------------------------------------------
 *
 * nd_mih.h
 *		Exact nearest-neighbour and radius search in Hamming space by
 *		multi-index hashing (Norouzi, Punjani, Fleet, TPAMI 2014) over the
 *		permuted tables of nd_permute.h, and the flat distance kernel.
 *
 * The search runs in steps.  Step t probes table t % m at block distance
 * exactly t / m: every block value that differs from the query's block in
 * that many bits.  After steps 0..T, table j has been probed at block
 * distances 0..s_j with sum_j (s_j + 1) = T + 1, so every code within T
 * bits of the query has been met (its m block distances sum to at most T,
 * so one of them is at most s_j).  A search for the k nearest codes thus
 * emits, after step T, every code met so far at distance T: the distances
 * come out exact and in order, step by step, with no final sort.
 *
 * A code is met once per table whose probes reach it.  It counts only at
 * its first meeting, the step nd_mih_first_step() computes from the code
 * itself, so no set of codes already seen is needed.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_MIH_H
#define ND_MIH_H

#include <stddef.h>
#include <stdint.h>

#include "nd_permute.h"

/* Steps 0..ND_MIH_LAST_STEP(m) meet every code: distance 64 is the most. */
#define ND_MIH_LAST_STEP	64

typedef struct nd_mih_query
{
	nd_layout	layout;
	uint64_t	code;
	/* block i of a code, in place: code & block_mask[i] */
	uint64_t	block_mask[ND_PERMUTE_MAX_BLOCKS];
} nd_mih_query;

extern void nd_mih_query_init(nd_mih_query *mq, const nd_layout *l, uint64_t code);

static inline int
nd_mih_step_table(const nd_layout *l, int step)
{
	return step % l->nblocks;
}

static inline int
nd_mih_step_distance(const nd_layout *l, int step)
{
	return step / l->nblocks;
}

/* Number of steps a radius-r search runs: steps 0..r. */
static inline int
nd_mih_steps_for_radius(int radius)
{
	return radius < 0 ? 0 : (radius > ND_MIH_LAST_STEP ? ND_MIH_LAST_STEP : radius) + 1;
}

/* The step at which `code` is first met (min over i of d_i * m + i). */
extern int	nd_mih_first_step(const nd_mih_query *mq, uint64_t code);

/* Number of block values step t probes: C(width, distance), or 0. */
extern uint64_t nd_mih_step_size(const nd_layout *l, int step);

/*
 * The block values of step t in ascending order (so that their runs of
 * entries are visited in storage order); `values` must hold
 * nd_mih_step_size() of them.  Returns how many were written.
 */
extern size_t nd_mih_step_values(const nd_mih_query *mq, int step, uint32_t *values);

/*
 * In keys[0..n), ascending, the range [*begin, *end) of keys between lo and
 * hi inclusive.
 */
extern void nd_sorted_range(const uint64_t *keys, size_t n, uint64_t lo, uint64_t hi,
							size_t *begin, size_t *end);

/*
 * nd_sorted_range() that starts from a guess of where lo falls: it gallops
 * out from `guess` to bracket the range's start and then on to its end, so
 * that a guess within a few keys reads a few keys' cache lines rather than a
 * binary search's ten.  The result does not depend on the guess.
 */
extern void nd_sorted_range_from(const uint64_t *keys, size_t n, uint64_t lo, uint64_t hi,
								 size_t guess, size_t *begin, size_t *end);

/*
 * Where key x falls among n keys spread evenly from `first` (at 0) up to
 * `next` (just past n-1): the guess for nd_sorted_range_from() when keys
 * are uniform, as permuted random codes are.
 */
extern size_t nd_interpolate(uint64_t first, uint64_t next, size_t n, uint64_t x);

/*
 * nd_sorted_range() over n keys kept in pages of `cap` keys each (every page
 * but the last full), reading only the pages it needs: the first key of
 * every page is at hand (pagefirst[], npages of them) and page_keys(page,
 * arg) returns a page's keys.  It reads at most two pages, the one where
 * keys below lo end and the one where keys up to hi end.
 */
typedef const uint64_t *(*nd_page_keys_fn) (size_t page, void *arg);
extern void nd_paged_range(const uint64_t *pagefirst, size_t npages, size_t cap, size_t n,
						   nd_page_keys_fn page_keys, void *arg,
						   uint64_t lo, uint64_t hi, size_t *begin, size_t *end);

/*
 * The codes within maxd bits of q: their positions in idx[] and distances in
 * dist[], in order; returns how many.  Both arrays need room for n (slots
 * past the count returned may be written).  Most codes of a scan are
 * farther than maxd, so this is the flat scan's inner loop: eight codes at a
 * time with AVX-512's popcount, or four with AVX2, where the CPU has it.
 */
extern size_t nd_hamming_within(const uint64_t *codes, size_t n, uint64_t q, int maxd,
								uint32_t *idx, uint8_t *dist);

/* One implementation of nd_hamming_within (0 portable, 1 popcnt, 2 AVX2,
 * 3 AVX-512; a variant the CPU lacks falls back to the portable one): for
 * tests. */
extern size_t nd_hamming_within_variant(int variant, const uint64_t *codes, size_t n,
										uint64_t q, int maxd, uint32_t *idx, uint8_t *dist);

#endif							/* ND_MIH_H */
