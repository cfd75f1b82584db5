/*
 * Unit tests of the compaction policy (nd_lsm.c): tiers against a reference
 * that multiplies instead of dividing; flushes of one entry at fanout 4 give
 * the digits of a base-4 counter (a hand-written table), and so do other
 * fanouts and units; hand-computed picks at the edges (no runs, empty runs,
 * sizes near UINT64_MAX, a unit larger than every run, fanout 2, the cap,
 * nothing incoming, arguments out of range); 100,000 random flushes at
 * fanout 2, 4 and 8 keep at most fanout-1 runs per tier, tiers
 * non-increasing oldest first and the entries written under
 * log_fanout(N / unit) + 2 per entry inserted; with runs shrunk by
 * deletions, and under a small max_runs, the cap still holds.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nd_lsm.h"
#include "splitmix.h"
#include "tap.h"

/* splitmix64: deterministic test data */
static uint64_t rng_state = 0x15a7c0a1e5ce0f42ULL;

static uint64_t
rnd(void)
{
	return splitmix64_next(&rng_state);
}

/* uniform in [lo, hi] */
static uint64_t
rnd_between(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

#define MAX_RUNS 128

/* An index's runs, oldest first. */
typedef struct
{
	uint64_t	size[MAX_RUNS];
	int			n;
} runs;

/*
 * Flushes `incoming` entries: asks nd_lsm_pick and merges as it says.
 * Returns k, or -1 (runs untouched) if k is out of [0, n].  *written grows
 * by the entries of the new run.
 */
static int
flush(runs *r, uint64_t incoming, uint64_t unit, int fanout, int max_runs,
	  uint64_t *written)
{
	int			k = nd_lsm_pick(r->size, r->n, incoming, unit, fanout, max_runs);
	uint64_t	s = incoming;

	if (k < 0 || k > r->n)
		return -1;
	for (int i = 0; i < k; i++)
		s += r->size[r->n - 1 - i];
	r->n -= k;
	if (k > 0 || incoming > 0)
	{
		if (r->n == MAX_RUNS)
			return -1;
		r->size[r->n++] = s;
		*written += s;
	}
	return k;
}

static void
format_runs(const runs *r, char *buf, size_t len)
{
	size_t		used = 0;

	used += snprintf(buf + used, len - used, "[");
	for (int i = 0; i < r->n && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%llu", i ? "," : "",
						 (unsigned long long) r->size[i]);
	if (used < len)
		snprintf(buf + used, len - used, "]");
}

/* floor(log_fanout(max(size, unit) / unit)) by multiplying up from unit */
static int
tier_ref(uint64_t size, uint64_t unit, int fanout)
{
	unsigned __int128 p = unit;
	uint64_t	v = size > unit ? size : unit;
	int			t = 0;

	while (p * (unsigned) fanout <= v)
	{
		p *= (unsigned) fanout;
		t++;
	}
	return t;
}

/* a size of random magnitude: all 64 exponents, and the extremes */
static uint64_t
rnd_magnitude(void)
{
	uint64_t	x = rnd();

	switch (x & 7)
	{
		case 0:
			return UINT64_MAX - (x >> 59);
		case 1:
			return x >> 56;
		default:
			return (x >> 8) >> (rnd() & 63);
	}
}

static void
test_tier(void)
{
	static const int fanouts[] = {2, 3, 4, 7, 8, 16, 1000, INT_MAX};
	int			bad = 0;

	ok(nd_lsm_tier(0, 1, 4) == 0 && nd_lsm_tier(3, 1, 4) == 0 &&
	   nd_lsm_tier(4, 1, 4) == 1 && nd_lsm_tier(15, 1, 4) == 1 &&
	   nd_lsm_tier(16, 1, 4) == 2 && nd_lsm_tier(64, 1, 4) == 3,
	   "tier at fanout 4, unit 1: 0, 3 -> 0; 4, 15 -> 1; 16 -> 2; 64 -> 3");
	ok(nd_lsm_tier(5, 10, 2) == 0 && nd_lsm_tier(19, 10, 2) == 0 &&
	   nd_lsm_tier(20, 10, 2) == 1 && nd_lsm_tier(39, 10, 2) == 1 &&
	   nd_lsm_tier(40, 10, 2) == 2,
	   "tier at fanout 2, unit 10: below one unit is tier 0; 20 -> 1; 39 -> 1; 40 -> 2");
	ok(nd_lsm_tier(UINT64_MAX, 1, 2) == 63 && nd_lsm_tier(UINT64_MAX, 1, 4) == 31 &&
	   nd_lsm_tier(UINT64_MAX, UINT64_MAX, 2) == 0 &&
	   nd_lsm_tier(UINT64_MAX, 1, INT_MAX) == 2,
	   "tier of UINT64_MAX: 63 at fanout 2, 31 at fanout 4, 0 in units of itself, 2 at fanout INT_MAX");
	ok(nd_lsm_tier(5, 0, 1) == nd_lsm_tier(5, 1, 2) &&
	   nd_lsm_tier(5, 1, -3) == 2 && nd_lsm_tier(0, 0, 0) == 0,
	   "unit 0 is taken as 1, fanout below 2 as 2");

	for (int i = 0; i < 200000; i++)
	{
		int			f = fanouts[i % 8];
		uint64_t	u = (rnd() & 1) ? 1 + (rnd() & 1023) : 1 + rnd_magnitude() / 2;
		uint64_t	s = rnd_magnitude();

		if (nd_lsm_tier(s, u, f) != tier_ref(s, u, f))
			bad++;
	}
	ok(bad == 0, "tier equals the multiplying reference on 200000 random sizes, units, fanouts (%d differ)", bad);
}

static void
test_counter(void)
{
	/* fanout 4, unit 1: the base-4 digits of the flush count, by hand */
	static const char *const expect[] = {
		"[1]", "[1,1]", "[1,1,1]", "[4]", "[4,1]", "[4,1,1]", "[4,1,1,1]",
		"[4,4]", "[4,4,1]", "[4,4,1,1]", "[4,4,1,1,1]", "[4,4,4]",
		"[4,4,4,1]", "[4,4,4,1,1]", "[4,4,4,1,1,1]", "[16]", "[16,1]",
		"[16,1,1]", "[16,1,1,1]", "[16,4]", "[16,4,1]"
	};
	static const int fanouts[] = {2, 3, 4, 10};
	runs		r = {{0}, 0};
	uint64_t	written = 0;
	char		buf[256];
	int			bad = 0;

	for (int i = 0; i < 21; i++)
	{
		flush(&r, 1, 1, 4, 64, &written);
		format_runs(&r, buf, sizeof(buf));
		if (strcmp(buf, expect[i]) != 0)
		{
			printf("# after %d flushes: %s, expected %s\n", i + 1, buf, expect[i]);
			bad++;
		}
	}
	ok(bad == 0, "fanout 4, unit 1: after 1..21 flushes the runs are the base-4 digits ([4] after 4, [4,1] after 5, [16] after 16, [16,4,1] after 21)");
	ok(written == 1 + 1 + 1 + 4 + 1 + 1 + 1 + 4 + 1 + 1 + 1 + 4 + 1 + 1 + 1 + 16 + 1 + 1 + 1 + 4 + 1,
	   "fanout 4, unit 1: 21 flushes write %llu entries (each flush, plus 4 at each carry into tier 1, 16 into tier 2)",
	   (unsigned long long) written);

	/* any fanout, a unit of 7 entries: digit d of place j is d runs of 7 f^j */
	for (int fi = 0; fi < 4; fi++)
	{
		int			f = fanouts[fi];

		bad = 0;
		r.n = 0;
		for (uint64_t count = 1; count <= 3000; count++)
		{
			runs		want = {{0}, 0};
			uint64_t	digits[16],
						place = 1;
			int			nd = 0;

			flush(&r, 7, 7, f, MAX_RUNS, &written);
			for (uint64_t c = count; c > 0; c /= f)
				digits[nd++] = c % f;
			for (int j = 0; j < nd; j++)
				place *= f;
			for (int j = nd - 1; j >= 0; j--)
			{
				place /= f;
				for (uint64_t d = 0; d < digits[j]; d++)
					want.size[want.n++] = 7 * place;
			}
			if (r.n != want.n || memcmp(r.size, want.size, r.n * sizeof(uint64_t)) != 0)
				bad++;
		}
		ok(bad == 0, "fanout %d, unit 7: after each of 1..3000 flushes of 7 the runs are the base-%d digits (%d differ)",
		   f, f, bad);
	}
}

static void
test_edges(void)
{
	static const uint64_t zeros[] = {0, 0, 0};
	static const uint64_t small[] = {5, 7, 9};
	static const uint64_t huge[] = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
	static const uint64_t wrap[] = {(uint64_t) 13 << 60, (uint64_t) 1 << 63};
	static const uint64_t chain[] = {8, 4, 2, 1};
	static const uint64_t gap[] = {1, 16, 1, 1};
	static const uint64_t four[] = {1, 1, 1, 1};
	static const uint64_t deep[] = {64, 16, 16, 16, 4, 4, 4, 1, 1, 1};
	static const uint64_t capped[] = {64, 16, 4};
	static const uint64_t tier0[] = {4, 1, 1, 1};
	static const uint64_t two[] = {8, 1};
	uint64_t	many[1000] = {0};

	ok(nd_lsm_pick(NULL, 0, 5, 10, 4, 8) == 0 && nd_lsm_pick(NULL, 0, 0, 10, 4, 8) == 0 &&
	   nd_lsm_pick(NULL, 0, UINT64_MAX, 1, 2, 1) == 0,
	   "no runs: nothing to merge with");
	ok(nd_lsm_pick(zeros, 3, 1, 1, 4, 8) == 3 && nd_lsm_pick(zeros, 2, 1, 1, 4, 8) == 0,
	   "empty runs are tier 0: three of them merge with a flush at fanout 4, two do not");
	ok(nd_lsm_pick(small, 3, 3, 1000, 4, 8) == 3 && nd_lsm_pick(small, 2, 3, 1000, 4, 8) == 0,
	   "a unit larger than every run: all are tier 0, fanout 4 merges three with the flush");
	ok(nd_lsm_pick(huge, 3, UINT64_MAX, 1, 4, 8) == 3,
	   "three runs of UINT64_MAX and a flush of UINT64_MAX at fanout 4 merge (tier 31)");
	/* unit 3 * 2^60, fanout 2: 2^63 is tier 1, 13 * 2^60 and UINT64_MAX tier 2 */
	ok(nd_lsm_pick(wrap, 2, (uint64_t) 1 << 63, (uint64_t) 3 << 60, 2, 8) == 2,
	   "2^63 + 2^63 saturates: the merged run, tier 2, takes the old run of tier 2 (a wrapped sum, 0, would not)");
	ok(nd_lsm_pick(chain, 4, 1, 1, 2, 8) == 4 && nd_lsm_pick(chain, 3, 1, 1, 2, 8) == 0,
	   "fanout 2: [8,4,2,1] + 1 carries through every run; [8,4,2] + 1 takes none (the 2 is tier 1)");
	ok(nd_lsm_pick(gap, 4, 1, 1, 4, 8) == 0,
	   "only consecutive runs count: [1,16,1,1] + 1 at fanout 4 merges nothing (the old 1 is behind the 16)");
	ok(nd_lsm_pick(four, 4, 1, 1, 4, 8) == 4,
	   "[1,1,1,1] + 1 at fanout 4 (a fanout raised since): all four tier-0 runs merge, not just three");
	ok(nd_lsm_pick(deep, 10, 1, 1, 4, 16) == 9,
	   "[64,16,16,16,4,4,4,1,1,1] + 1 at fanout 4 carries twice (9 runs) and stops at the 64");
	ok(nd_lsm_pick(capped, 3, 1, 1, 4, 4) == 0 && nd_lsm_pick(capped, 3, 1, 1, 4, 3) == 1 &&
	   nd_lsm_pick(capped, 3, 1, 1, 4, 2) == 2 && nd_lsm_pick(capped, 3, 1, 1, 4, 1) == 3,
	   "[64,16,4] + 1 at fanout 4: max_runs 4, 3, 2, 1 take 0, 1, 2, 3 runs");
	ok(nd_lsm_pick(tier0, 4, 0, 1, 4, 8) == 3,
	   "nothing incoming, three tier-0 runs at fanout 4: they merge");
	ok(nd_lsm_pick(two, 2, 0, 1, 2, 8) == 0 && nd_lsm_pick(capped, 1, 0, 1, 4, 1) == 0,
	   "nothing incoming and a single run to take (by the rule or the cap): nothing to do");
	ok(nd_lsm_pick(capped, 3, 0, 1, 4, 2) == 2 && nd_lsm_pick(capped, 3, 0, 1, 4, 1) == 3,
	   "nothing incoming, 3 runs and max_runs 2 or 1: the newest 2 or all 3 merge");
	ok(nd_lsm_pick(zeros, 3, 1, 0, 0, 0) == nd_lsm_pick(zeros, 3, 1, 1, 2, 1) &&
	   nd_lsm_pick(capped, 3, 1, 0, 1, -5) == 3 && nd_lsm_pick(capped, -3, 1, 1, 4, 8) == 0,
	   "unit 0, fanout below 2, max_runs below 1 and n below 0 are taken as 1, 2, 1 and 0");
	ok(nd_lsm_pick(many, 1000, 1, 1, 2, 2000) == 1000 && nd_lsm_pick(many, 1000, 1, 1, 1001, 2000) == 1000 &&
	   nd_lsm_pick(many, 1000, 1, 1, 1002, 2000) == 0,
	   "1000 empty runs and a flush: fanout 2 and 1001 take all of them, fanout 1002 none");
}

/*
 * Random flushes of unit/2 .. unit entries, max_runs 64 (never reached):
 * at every point at most fanout-1 runs per tier, tiers non-increasing
 * oldest first (sizes too at fanout 2, whose tiers hold one run each),
 * every entry kept, and entries written per entry inserted at most
 * log_fanout(inserted / unit) + 2.
 */
static void
test_random_flushes(int fanout, uint64_t unit, int flushes)
{
	runs		r = {{0}, 0};
	uint64_t	written = 0,
				inserted = 0;
	int			bad_k = 0,
				over_cap = 0,
				over_tier = 0,
				over_total = 0,
				tier_order = 0,
				size_order = 0,
				lost = 0,
				over_amp = 0,
				most_runs = 0;
	double		worst = -1e9;

	for (int i = 0; i < flushes; i++)
	{
		uint64_t	incoming = rnd_between(unit / 2, unit);
		int			per_tier[64] = {0};
		int			max_tier = 0;
		uint64_t	sum = 0;
		double		lg,
					excess;

		if (flush(&r, incoming, unit, fanout, 64, &written) < 0)
		{
			bad_k++;
			break;
		}
		inserted += incoming;
		for (int j = 0; j < r.n; j++)
		{
			int			t = nd_lsm_tier(r.size[j], unit, fanout);

			per_tier[t]++;
			if (t > max_tier)
				max_tier = t;
			if (j > 0 && t > nd_lsm_tier(r.size[j - 1], unit, fanout))
				tier_order++;
			if (j > 0 && r.size[j] > r.size[j - 1])
				size_order++;
			sum += r.size[j];
		}
		for (int t = 0; t <= max_tier; t++)
			if (per_tier[t] > fanout - 1)
				over_tier++;
		if (r.n > 64)
			over_cap++;
		if (r.n > (fanout - 1) * (max_tier + 1))
			over_total++;
		if (sum != inserted)
			lost++;
		if (r.n > most_runs)
			most_runs = r.n;
		lg = log((double) inserted / (double) unit) / log((double) fanout);
		excess = (double) written / (double) inserted - (lg > 0 ? lg : 0);
		if (excess > worst)
			worst = excess;
		if (excess > 2)
			over_amp++;
	}
	ok(bad_k == 0 && over_cap == 0 && lost == 0,
	   "fanout %d, unit %llu, %d random flushes: k in [0, n], at most max_runs runs, no entry lost",
	   fanout, (unsigned long long) unit, flushes);
	ok(over_tier == 0 && over_total == 0,
	   "fanout %d: at every point at most fanout-1 = %d runs per tier, (fanout-1) * (max tier + 1) in all (%d runs at most)",
	   fanout, fanout - 1, most_runs);
	ok(tier_order == 0, "fanout %d: tiers non-increasing oldest first at every point", fanout);
	if (fanout == 2)
		ok(size_order == 0, "fanout 2: sizes non-increasing oldest first at every point");
	ok(over_amp == 0,
	   "fanout %d: entries written / inserted <= log_fanout(N / unit) + 2 at every point (at most + %.2f; %.2f at the end)",
	   fanout, worst, (double) written / (double) inserted);
}

/*
 * Random flushes and deletions that shrink random runs, some to nothing:
 * tiers and sizes may then be in any order, but k stays in [0, n], the
 * cap holds and no entry is lost.
 */
static void
test_deletions(int fanout, int max_runs)
{
	const uint64_t unit = 1000;
	runs		r = {{0}, 0};
	uint64_t	written = 0,
				live = 0;
	int			bad_k = 0,
				over_cap = 0,
				lost = 0,
				emptied = 0;

	for (int i = 0; i < 100000; i++)
	{
		uint64_t	incoming = rnd_between(unit / 2, unit);
		uint64_t	sum = 0;

		if (r.n > 0 && (rnd() & 3) == 0)
		{
			int			j = (int) (rnd() % r.n);
			uint64_t	keep = (rnd() & 7) == 0 ? 0 : rnd() % (r.size[j] + 1);

			live -= r.size[j] - keep;
			r.size[j] = keep;
			emptied += keep == 0;
		}
		if (flush(&r, incoming, unit, fanout, max_runs, &written) < 0)
		{
			bad_k++;
			break;
		}
		live += incoming;
		if (r.n > max_runs)
			over_cap++;
		for (int j = 0; j < r.n; j++)
			sum += r.size[j];
		if (sum != live)
			lost++;
	}
	ok(bad_k == 0 && over_cap == 0 && lost == 0,
	   "fanout %d, max_runs %d, 100000 flushes with deletions (%d runs emptied): k in [0, n], at most max_runs runs, no entry lost",
	   fanout, max_runs, emptied);
}

/*
 * A small max_runs: at every point at most max_runs runs, and the cap takes
 * no more than it must: k = max(k without the cap, n + 1 - max_runs).
 */
static void
test_cap(int fanout, int max_runs)
{
	const uint64_t unit = 100;
	runs		r = {{0}, 0};
	uint64_t	written = 0;
	int			over_cap = 0,
				not_least = 0,
				capped = 0;

	for (int i = 0; i < 20000; i++)
	{
		uint64_t	incoming = rnd_between(unit / 2, unit);
		int			free_k = nd_lsm_pick(r.size, r.n, incoming, unit, fanout, INT_MAX);
		int			want = r.n + 1 - max_runs > free_k ? r.n + 1 - max_runs : free_k;
		int			k = flush(&r, incoming, unit, fanout, max_runs, &written);

		if (k != want)
			not_least++;
		capped += k > free_k;
		if (r.n > max_runs)
			over_cap++;
	}
	ok(over_cap == 0 && not_least == 0,
	   "fanout %d, max_runs %d, 20000 flushes: at most max_runs runs, the cap merges no more than it must (%d flushes capped)",
	   fanout, max_runs, capped);
}

int
main(void)
{
	static const int fanouts[] = {2, 4, 8};

	test_tier();
	test_counter();
	test_edges();
	for (int i = 0; i < 3; i++)
		test_random_flushes(fanouts[i], 1000, 100000);
	test_random_flushes(4, 2, 100000);
	for (int i = 0; i < 3; i++)
	{
		test_deletions(fanouts[i], 4);
		test_deletions(fanouts[i], 20);
	}
	test_cap(4, 1);
	test_cap(4, 2);
	test_cap(4, 5);
	test_cap(8, 3);
	test_cap(2, 4);
	return tap_done();
}
