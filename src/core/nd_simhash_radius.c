/*-------------------------------------------------------------------------
 *
 * nd_simhash_radius.c
 *		Binomial model of SimHash distances for a Jaccard similarity, and
 *		of unrelated codes (see nd_simhash_radius.h).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdbool.h>

#include "nd_simhash_radius.h"

#define ND_BITS 64

double
nd_simhash_flip_prob(double j)
{
	double		dice;

	if (!(j > 0.0))
		return 0.5;
	if (j >= 1.0)
		return 0.0;
	dice = 2.0 * j / (1.0 + j);
	return acos(dice) / M_PI;
}

/* Binomial(64, p) CDF at radius, summed term by term (p <= 1/2 here). */
static double
binomial_cdf(double p, int radius)
{
	double		term = pow(1.0 - p, ND_BITS);
	double		sum = term;
	double		odds;

	if (radius < 0)
		return 0.0;
	if (radius >= ND_BITS || p <= 0.0)
		return 1.0;
	odds = p / (1.0 - p);
	for (int i = 0; i < radius; i++)
	{
		term *= odds * (double) (ND_BITS - i) / (double) (i + 1);
		sum += term;
	}
	return sum < 1.0 ? sum : 1.0;
}

double
nd_simhash_within_prob(double j, int radius)
{
	return binomial_cdf(nd_simhash_flip_prob(j), radius);
}

int
nd_simhash_radius(double j, double recall)
{
	double		p = nd_simhash_flip_prob(j);

	if (p <= 0.0)
		return 0;
	/* the sum rounds to 1.0 before 64: certainty needs every bit */
	if (recall >= 1.0)
		return ND_BITS;
	for (int radius = 0; radius < ND_BITS; radius++)
		if (binomial_cdf(p, radius) >= recall)
			return radius;
	return ND_BITS;
}

double
nd_binomial_within(int radius)
{
	static double cumulative[ND_BITS + 1];
	static bool computed = false;

	if (radius < 0)
		return 0.0;
	if (radius >= ND_BITS)
		return 1.0;

	if (!computed)
	{
		double		binom = 1.0;	/* C(64, i) */
		double		sum = 0.0;

		for (int i = 0; i <= ND_BITS; i++)
		{
			sum += binom;
			cumulative[i] = ldexp(sum, -ND_BITS);
			binom = binom * (ND_BITS - i) / (i + 1);
		}
		computed = true;
	}
	return cumulative[radius];
}
