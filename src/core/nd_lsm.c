/*-------------------------------------------------------------------------
 *
 * nd_lsm.c
 *		Tiered compaction policy of a log-structured index (see nd_lsm.h).
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#include "nd_lsm.h"

int
nd_lsm_tier(uint64_t size, uint64_t unit, int fanout)
{
	uint64_t	q;
	int			t = 0;

	if (unit < 1)
		unit = 1;
	if (fanout < 2)
		fanout = 2;
	/* floor(floor(q / f) / f) == floor(q / f^2): no power is formed */
	q = (size > unit ? size : unit) / unit;
	while (q >= (uint64_t) fanout)
	{
		q /= (uint64_t) fanout;
		t++;
	}
	return t;
}

static inline uint64_t
add_saturating(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int
nd_lsm_pick(const uint64_t *sizes, int n, uint64_t incoming, uint64_t unit,
			int fanout, int max_runs)
{
	uint64_t	merged = incoming;	/* entries of the new run so far */
	int			k = 0;

	if (n < 0)
		n = 0;
	if (unit < 1)
		unit = 1;
	if (fanout < 2)
		fanout = 2;
	if (max_runs < 1)
		max_runs = 1;

	/*
	 * Carries: the new run takes the newest runs of its tier and below once
	 * they would be fanout runs with it.  Each pass that merges takes at
	 * least one run and each run is looked at once per pass that merges it
	 * or stops, so this is O(n) tier computations.
	 */
	for (;;)
	{
		int			t = nd_lsm_tier(merged, unit, fanout);
		int			c = 0;
		uint64_t	sum = 0;

		while (k + c < n && nd_lsm_tier(sizes[n - 1 - k - c], unit, fanout) <= t)
		{
			sum = add_saturating(sum, sizes[n - 1 - k - c]);
			c++;
		}
		if (c < fanout - 1)
			break;
		merged = add_saturating(merged, sum);
		k += c;
	}

	/* the cap: n - k runs are left, and the new one (n - k >= 0: no overflow) */
	while (n - k >= max_runs && k < n)
		k++;

	/* nothing to merge with: a lone run would be rewritten as it is */
	if (incoming == 0 && k == 1)
		return 0;
	return k;
}
