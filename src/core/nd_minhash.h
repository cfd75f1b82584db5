/*-------------------------------------------------------------------------
 *
 * nd_minhash.h
 *		MinHash signatures by one-permutation hashing with optimal
 *		densification (Shrivastava, ICML 2017), and exact Jaccard of
 *		feature sets for checking them.
 *
 * Each feature's 64-bit hash is mixed with the seed's key; the mix picks
 * the feature's bin (multiply-shift on its high half) and, through a second
 * mix, its value; a bin keeps its smallest value.  One pass, O(n + k), for
 * k values.  A bin no feature fell into borrows the value of the first
 * non-empty bin of a sequence that depends only on the seed and the bin's
 * index (never on the data), so two sets agree at a position with
 * probability equal to their Jaccard similarity, as with k independent
 * permutations.  The sequence interleaves four walks from random starts,
 * so that the borrowed bin is found in O(1) from successor and predecessor
 * tables: O(k) in all, however few bins are full.
 *
 * Values are the 32 high bits of each bin's 64-bit minimum: half the
 * storage of 64-bit values, and a chance collision of two different minima
 * (2^-32) is far below the estimate's own noise.
 *
 * Only uint64 arithmetic: the same signatures on every platform.
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_MINHASH_H
#define ND_MINHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ND_MINHASH_MAX_PERM 8192

typedef struct nd_minhash
{
	int			k;				/* number of values (bins) */
	uint64_t	key_bin;		/* seed keys of the two mixes and probes */
	uint64_t	key_value;
	uint64_t	key_probe;
	uint64_t   *mins;			/* k slots, caller's memory */
	const uint16_t *starts;		/* walk starts, or NULL: see below */
	uint64_t	n;				/* features added */
} nd_minhash;

/* NULL when k is acceptable, else a static message for an error report. */
extern const char *nd_minhash_check(int k);

/* Walks per empty bin in densification. */
#define ND_MINHASH_WALKS 4

/*
 * mins: room for k values, owned by the caller.  starts: NULL, or the
 * table nd_minhash_starts() made for the same k and seed; it saves
 * recomputing it for every signature (the values are the same either way).
 */
extern void nd_minhash_init(nd_minhash *mh, int k, uint64_t seed, uint64_t *mins,
							const uint16_t *starts);

/*
 * The densification walks' starts of every bin for (k, seed): k *
 * ND_MINHASH_WALKS values.  They do not depend on the data.
 */
extern void nd_minhash_starts(int k, uint64_t seed, uint16_t *starts);
extern void nd_minhash_add(nd_minhash *mh, const uint64_t *features, size_t n);

/*
 * Densifies and stores the k values in sig; false when no feature was
 * added (sig untouched).  mh's bins are left as they were, so more
 * features may still be added afterwards.
 */
extern bool nd_minhash_result(const nd_minhash *mh, uint32_t *sig);

/* Fraction of the k positions where a and b agree. */
extern double nd_minhash_estimate(const uint32_t *a, const uint32_t *b, int k);

/* Sorts v and drops duplicates; returns the new length. */
extern size_t nd_sort_unique(uint64_t *v, size_t n);

/* Elements common to two sorted, duplicate-free arrays. */
extern size_t nd_count_common(const uint64_t *a, size_t na,
							  const uint64_t *b, size_t nb);

/*
 * The key of band `band` (0-based) of a signature: its `rows` values,
 * little-endian, hashed with the band's index mixed into the seed, so that
 * equal values in different bands give different keys.  rows must be at
 * most ND_MINHASH_MAX_PERM (the key is built in a buffer of that size).
 */
extern uint64_t nd_minhash_band_key(const uint32_t *values, int rows, int band);

/*
 * b-bit MinHash (Li & König, WWW 2010): the low `bits` bits of each value,
 * packed.  Layout: byte 0 bits, bytes 1-2 k (little-endian), then value i
 * in bits [i * bits, (i + 1) * bits) of the payload, bit j of the payload
 * being bit j % 8 of its byte j / 8.  The low bits: the high ones of a
 * minimum lean towards 0.
 */
#define ND_BBIT_HEADER 3

/* NULL when bits is acceptable (1 .. 32), else a static message. */
extern const char *nd_bbit_check(int bits);
extern size_t nd_bbit_size(int k, int bits);
extern void nd_bbit_pack(const uint32_t *sig, int k, int bits, uint8_t *out);

/*
 * Reads a packed signature's header; false when `len` bytes cannot be one
 * (bad bits, k outside 1 .. ND_MINHASH_MAX_PERM, or a length other than
 * nd_bbit_size(k, bits)).
 */
extern bool nd_bbit_header(const uint8_t *p, size_t len, int *k, int *bits);

/* Positions where two packed signatures of the same k and bits agree. */
extern int	nd_bbit_matches(const uint8_t *a, const uint8_t *b, int k, int bits);

/*
 * The Jaccard estimate from `matches` agreeing positions of k: two
 * different minima still agree on `bits` bits with probability 2^-bits, so
 * P[agree] = 2^-bits + (1 - 2^-bits) J; J = (P - 2^-bits) / (1 - 2^-bits),
 * raised to 0 when negative.
 */
extern double nd_bbit_estimate(int matches, int k, int bits);

/*
 * (bands, rows), bands * rows <= k, minimizing
 * fp_weight * (area under P(s) = 1 - (1 - s^rows)^bands for s in [0, t]) +
 * fn_weight * (area under 1 - P(s) for s in [t, 1]), as datasketch's
 * _optimal_param does (there with scipy's quad; here composite Simpson).
 */
extern void nd_lsh_params(double threshold, int k, double fp_weight,
						  double fn_weight, int *bands, int *rows);

/*
 * The same, calling tick(arg) every so often (every 256 (bands, rows)
 * candidates): at k = 8192 the search takes about a tenth of a second,
 * which a server must be able to cancel.  tick may not return (longjmp).
 */
extern void nd_lsh_params_tick(double threshold, int k, double fp_weight,
							   double fn_weight, int *bands, int *rows,
							   void (*tick) (void *arg), void *arg);

/*
 * P(s) = 1 - (1 - s^rows)^bands: the probability that a pair of Jaccard
 * similarity s agrees on at least one of the bands, i.e. becomes a
 * candidate.  s in [0, 1].
 */
extern double nd_lsh_candidate_prob(double s, int bands, int rows);

/*
 * (bands, rows), bands * rows <= k, such that a pair of similarity
 * `threshold` becomes a candidate with probability at least `recall`, and
 * among those the one with the least area under P(s) for s in [0, t]
 * (datasketch's false-positive term: the candidates below the threshold,
 * which cost a check each and are thrown away); ties go to fewer bands.
 * For each rows the smallest bands reaching the recall is the cheapest, so
 * the search is O(k) candidates, not O(k log k).  Returns false (and sets
 * nothing) when no (bands, rows) reaches `recall`: the best is k bands of
 * one row, P(t) = 1 - (1 - t)^k, and recall 1 is reached only at t = 1.
 * tick as for nd_lsh_params_tick (may be NULL).
 */
extern bool nd_lsh_params_recall(double threshold, int k, double recall,
								 int *bands, int *rows,
								 void (*tick) (void *arg), void *arg);

#endif							/* ND_MINHASH_H */
