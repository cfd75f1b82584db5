/*-------------------------------------------------------------------------
 *
 * nd_mix.h
 *		64-bit mixing primitives shared by the fingerprint cores.  Part of
 *		the on-disk contract: the features and signatures they produce are
 *		pinned by the tests.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_MIX_H
#define ND_MIX_H

#include <stdint.h>

/* murmur3's 64-bit finalizer: a bijection with full avalanche. */
static inline uint64_t
nd_fmix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xFF51AFD7ED558CCDull;
	x ^= x >> 33;
	x *= 0xC4CEB9FE1A85EC53ull;
	x ^= x >> 33;
	return x;
}

/* The two halves of the 128-bit product a * b, xor-ed (as in wyhash). */
static inline uint64_t
nd_mul_fold(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t) a * b;

	return (uint64_t) r ^ (uint64_t) (r >> 64);
}

#endif							/* ND_MIX_H */
