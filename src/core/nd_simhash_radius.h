/*-------------------------------------------------------------------------
 *
 * nd_simhash_radius.h
 *		Which Hamming radius finds the pairs of a Jaccard similarity: the
 *		model behind simhash_radius() and simhash_recall().
 *
 * Charikar (STOC 2002): for random hyperplanes, a fingerprint bit differs
 * between two feature vectors with probability theta / pi, theta the angle
 * between them.  For two shingle sets A and B,
 *
 *		cos theta = |A n B| / sqrt(|A| |B|)  >=  2 |A n B| / (|A| + |B|)
 *				  = 2 J / (1 + J)			(the Dice coefficient),
 *
 * with equality when the sets have the same size.  The model takes the
 * equality: theta = acos(2J / (1 + J)), the largest angle a pair of
 * Jaccard J can have, so sets of different sizes differ in fewer bits than
 * it predicts.  The 64 bits are taken as independent, so the distance is
 * Binomial(64, theta / pi).  SimHash's hyperplanes are the features' hash
 * bits (+1/-1), not Gaussian; with few features, and with features
 * weighted by their counts, the real distances spread around the model's
 * (doc/fingerprints.md measures where).
 *
 * nd_binomial_within() is the same sum at probability 1/2, the distance of
 * unrelated codes, cached: the planner's selectivities and the hamming
 * index's scans call it for every estimate.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_SIMHASH_RADIUS_H
#define ND_SIMHASH_RADIUS_H

/* P(a bit differs) for a pair of Jaccard similarity j in [0, 1] */
extern double nd_simhash_flip_prob(double j);

/*
 * P(distance <= radius) for a pair of Jaccard similarity j in [0, 1];
 * radius outside 0..64 gives 0 (below) or 1 (above).
 */
extern double nd_simhash_within_prob(double j, int radius);

/*
 * The smallest radius in 0..64 with P(distance <= radius) >= recall for a
 * pair of Jaccard j in (0, 1], recall in (0, 1].  Pairs more similar than
 * j are found at least as often (the probability falls with j).
 */
extern int	nd_simhash_radius(double j, double recall);

/*
 * P(distance <= radius) for a uniformly random code against a given one:
 * sum_{i <= radius} C(64, i) / 2^64, the model of unrelated fingerprints
 * behind the planner's estimates and the hamming index's scans; radius
 * below 0 gives 0, above 63 gives 1.
 */
extern double nd_binomial_within(int radius);

#endif							/* ND_SIMHASH_RADIUS_H */
