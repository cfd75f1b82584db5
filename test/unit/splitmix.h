/*
 * splitmix64 (Steele, Lea, Flood 2014): the deterministic generator of the
 * unit tests and benchmarks.  Each caller keeps its own state (its seed), so
 * every test draws the same numbers on every platform.
 */
#ifndef ND_SPLITMIX_H
#define ND_SPLITMIX_H

#include <stdint.h>

static inline uint64_t
splitmix64_next(uint64_t *state)
{
	uint64_t	z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* q with exactly d (0..64) of its bits flipped, at random positions */
static inline uint64_t
splitmix64_flip(uint64_t *state, uint64_t q, int d)
{
	uint64_t	mask = 0;

	while (__builtin_popcountll(mask) < d)
		mask |= (uint64_t) 1 << (splitmix64_next(state) & 63);
	return q ^ mask;
}

#endif							/* ND_SPLITMIX_H */
