/*
 * Unit tests of the radius model (nd_simhash_radius.c): the binomial sums
 * against an independent log-space computation, the sum for unrelated codes
 * against exact binomial coefficients, the radius as the smallest
 * one reaching the recall, monotonicity, the edges, and the model against
 * real SimHash fingerprints (nd_simhash.c) of random sets of a known
 * Jaccard similarity.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "nd_simhash.h"
#include "nd_simhash_radius.h"
#include "splitmix.h"
#include "tap.h"

/* P(Binomial(64, p) <= k), each term through lgamma */
static double
cdf_by_lgamma(double p, int k)
{
	double		s = 0.0;

	for (int i = 0; i <= k; i++)
		s += exp(lgamma(65.0) - lgamma(i + 1.0) - lgamma(65.0 - i)
				 + i * log(p) + (64 - i) * log1p(-p));
	return s;
}

static uint64_t rng_state = 42;

/*
 * SimHash distance of two random sets of `n` features each, `shared` of
 * them in common: Jaccard shared / (2n - shared).
 */
static int
random_pair_distance(int n, int n_b, int shared)
{
	nd_simhash_acc a,
				b;
	uint64_t	fa,
				fb,
				h;

	nd_simhash_init(&a);
	nd_simhash_init(&b);
	for (int i = 0; i < shared; i++)
	{
		h = splitmix64_next(&rng_state);
		nd_simhash_add(&a, &h, 1);
		nd_simhash_add(&b, &h, 1);
	}
	for (int i = shared; i < n; i++)
	{
		h = splitmix64_next(&rng_state);
		nd_simhash_add(&a, &h, 1);
	}
	for (int i = shared; i < n_b; i++)
	{
		h = splitmix64_next(&rng_state);
		nd_simhash_add(&b, &h, 1);
	}
	nd_simhash_result(&a, &fa);
	nd_simhash_result(&b, &fb);
	return __builtin_popcountll(fa ^ fb);
}

int
main(void)
{
	double		js[] = {0.01, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99};
	double		recalls[] = {0.01, 0.5, 0.9, 0.95, 0.99, 0.999999};
	int			bad;

	/* flip probability: Dice -> angle */
	ok(nd_simhash_flip_prob(1.0) == 0.0, "J = 1: no bit differs");
	ok(fabs(nd_simhash_flip_prob(0.0) - 0.5) < 1e-15, "J = 0: orthogonal, half the bits");
	ok(fabs(nd_simhash_flip_prob(0.8) - acos(1.6 / 1.8) / M_PI) < 1e-15, "J = 0.8: acos(Dice) / pi");

	/* the binomial sums */
	bad = 0;
	for (size_t a = 0; a < sizeof(js) / sizeof(js[0]); a++)
		for (int k = 0; k <= 64; k++)
		{
			double		p = nd_simhash_flip_prob(js[a]);
			double		want = k == 64 ? 1.0 : cdf_by_lgamma(p, k);

			if (fabs(nd_simhash_within_prob(js[a], k) - want) > 1e-12)
				bad++;
		}
	ok(bad == 0, "within_prob equals the lgamma sums for 8 similarities x 65 radii (%d off)", bad);
	ok(nd_simhash_within_prob(0.8, -1) == 0.0 && nd_simhash_within_prob(0.8, 65) == 1.0,
	   "radii outside 0..64");

	/*
	 * Unrelated codes: the cached sum against a direct one of the exact
	 * binomial coefficients (C(64, i) < 2^63, Pascal's triangle in
	 * integers), and against the Jaccard model at J = 0 (p = 1/2).
	 */
	{
		uint64_t	row[65] = {1};
		double		direct = 0.0;

		for (int n = 1; n <= 64; n++)
			for (int i = n; i > 0; i--)
				row[i] += row[i - 1];
		bad = 0;
		for (int k = 0; k < 64; k++)
		{
			direct += ldexp((double) row[k], -64);
			if (fabs(nd_binomial_within(k) - direct) > 1e-15 * direct
				|| fabs(nd_binomial_within(k) - nd_simhash_within_prob(0.0, k)) > 1e-12)
				bad++;
		}
		ok(bad == 0, "binomial_within equals the direct sum of C(64, i) / 2^64 for radii 0..63 (%d off)", bad);
		ok(nd_binomial_within(-1) == 0.0 && nd_binomial_within(64) == 1.0
		   && nd_binomial_within(100) == 1.0 && nd_binomial_within(0) == ldexp(1.0, -64),
		   "binomial_within: radius below 0 is 0, 64 and above is 1, 0 is 2^-64");
	}

	/* the radius is the smallest reaching the recall */
	bad = 0;
	for (size_t a = 0; a < sizeof(js) / sizeof(js[0]); a++)
		for (size_t b = 0; b < sizeof(recalls) / sizeof(recalls[0]); b++)
		{
			int			r = nd_simhash_radius(js[a], recalls[b]);

			if (r < 0 || r > 64
				|| nd_simhash_within_prob(js[a], r) < recalls[b]
				|| (r > 0 && nd_simhash_within_prob(js[a], r - 1) >= recalls[b]))
				bad++;
		}
	ok(bad == 0, "radius is the smallest with P(distance <= radius) >= recall (%d off)", bad);
	ok(nd_simhash_radius(0.8, 0.95) == 15 && nd_simhash_radius(0.8, 0.99) == 17
	   && nd_simhash_radius(0.9, 0.99) == 13 && nd_simhash_radius(0.5, 0.9) == 22,
	   "known radii: (0.8, 0.95) 15, (0.8, 0.99) 17, (0.9, 0.99) 13, (0.5, 0.9) 22");
	ok(nd_simhash_radius(1.0, 0.999999) == 0 && nd_simhash_radius(1.0, 1.0) == 0,
	   "J = 1: radius 0 at any recall");
	ok(nd_simhash_radius(0.99, 1.0) == 64 && nd_simhash_radius(1e-300, 1.0) == 64,
	   "recall 1 below J = 1: every bit");

	/* monotone: more recall, more radius; more similarity, less radius */
	bad = 0;
	for (int jm = 1; jm <= 1000; jm++)
	{
		double		j = jm / 1000.0;

		for (int rm = 1; rm < 1000; rm++)
		{
			double		rc = rm / 1000.0;

			if (nd_simhash_radius(j, rc) > nd_simhash_radius(j, rc + 0.001)
				|| (jm < 1000 && nd_simhash_radius(j + 0.001, rc) > nd_simhash_radius(j, rc)))
				bad++;
		}
	}
	ok(bad == 0, "radius monotone in recall and similarity on a 1000 x 1000 grid (%d off)", bad);

	/*
	 * The model against real fingerprints: 4000 pairs of random 600-feature
	 * sets sharing 533 features (J = 533 / 667 = 0.799).  Mean distance
	 * within 0.25 bits of 64 p (the standard error is about 0.05), and at
	 * least 94% of the pairs within simhash_radius(0.799, 0.95).
	 */
	{
		int			n = 600,
					shared = 533,
					trials = 4000,
					r95;
		double		j = (double) shared / (2 * n - shared);
		double		sum = 0.0;
		int			within = 0;

		r95 = nd_simhash_radius(j, 0.95);
		for (int t = 0; t < trials; t++)
		{
			int			d = random_pair_distance(n, n, shared);

			sum += d;
			within += d <= r95;
		}
		ok(fabs(sum / trials - 64.0 * nd_simhash_flip_prob(j)) < 0.25,
		   "equal sets, J 0.799: mean distance %.2f, model %.2f", sum / trials,
		   64.0 * nd_simhash_flip_prob(j));
		ok(within >= 0.94 * trials, "equal sets, J 0.799: %.3f within radius %d (model 0.95)",
		   (double) within / trials, r95);
	}

	/*
	 * Sets of different sizes (400 in 800: J = 0.5, cos 0.707, 16 bits) are
	 * closer in angle than equal sets of the same Jaccard: the model's radius
	 * is conservative for them.
	 */
	{
		int			trials = 2000;
		double		sum = 0.0;

		for (int t = 0; t < trials; t++)
			sum += random_pair_distance(800, 400, 400);
		ok(fabs(sum / trials - 16.0) < 0.3 && sum / trials < 64.0 * nd_simhash_flip_prob(0.5) - 0.8,
		   "nested sets, J 0.5: mean distance %.2f, the angle's 16, below the model's %.2f",
		   sum / trials, 64.0 * nd_simhash_flip_prob(0.5));
	}

	return tap_done();
}
