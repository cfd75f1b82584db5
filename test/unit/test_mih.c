/*
 * Unit tests of multi-index hashing (nd_mih.c): the block values of a step
 * are exactly those at the step's distance, in ascending order; every code
 * is counted at exactly one step, its first meeting; after step T every
 * code within T bits has been counted (what makes the k-NN search exact);
 * the range search and the within kernel (every variant, maxd up to 64:
 * every distance) agree with brute force.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_mih.h"
#include "splitmix.h"
#include "tap.h"

static uint64_t rng_state = 0x0123456789abcdefULL;

static uint64_t
rnd(void)
{
	return splitmix64_next(&rng_state);
}

static int
popcount64(uint64_t x)
{
	return __builtin_popcountll(x);
}

static uint64_t
flip_random(uint64_t q, int d)
{
	return splitmix64_flip(&rng_state, q, d);
}

static void
test_step_values(void)
{
	int			bad = 0;
	uint32_t   *values = malloc(sizeof(uint32_t) * ((size_t) 1 << 22));

	for (int m = 3; m <= 8; m++)
	{
		nd_layout	l;
		nd_mih_query mq;
		uint64_t	total[ND_PERMUTE_MAX_BLOCKS] = {0};

		nd_layout_init(&l, m);
		nd_mih_query_init(&mq, &l, rnd());
		for (int t = 0; t < (ND_MIH_LAST_STEP + 1) * m; t++)
		{
			int			table = nd_mih_step_table(&l, t);
			uint32_t	center = nd_block(&l, table, mq.code);
			size_t		n = nd_mih_step_values(&mq, t, values);

			if (n != nd_mih_step_size(&l, t))
				bad++;
			total[table] += n;
			for (size_t i = 0; i < n; i++)
			{
				if (popcount64(values[i] ^ center) != nd_mih_step_distance(&l, t))
					bad++;
				if (values[i] >> l.width[table] != 0)
					bad++;
				if (i > 0 && values[i] <= values[i - 1])
					bad++;
			}
		}
		for (int i = 0; i < m; i++)
			if (total[i] != (uint64_t) 1 << l.width[i])
				bad++;
	}
	free(values);
	ok(bad == 0, "step values: exact distance, ascending, every block value once per table (m = 3..8)");
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	return x < y ? -1 : x > y;
}

/*
 * Simulate the search over a small set of codes: a step meets the codes
 * whose block equals one of its values.  Check the counting rule, on
 * layout l (`what` names it in the test's lines).
 */
static void
test_search(const nd_layout *layout, const char *what, int ncodes)
{
	nd_layout	l = *layout;
	int			m = l.nblocks;
	nd_mih_query mq;
	uint64_t   *codes = malloc(sizeof(uint64_t) * ncodes);
	int		   *counted = calloc(ncodes, sizeof(int));
	int		   *counted_at = calloc(ncodes, sizeof(int));
	uint32_t   *values = malloc(sizeof(uint32_t) * ((size_t) 1 << 22));
	uint64_t	q = rnd();
	int			bad_once = 0,
				bad_complete = 0,
				bad_order = 0;

	nd_mih_query_init(&mq, &l, q);
	for (int i = 0; i < ncodes; i++)
	{
		switch (i % 4)
		{
			case 0:
				codes[i] = rnd();
				break;
			case 1:
				codes[i] = flip_random(q, (int) (rnd() % 20));
				break;
			case 2:
				codes[i] = q;
				break;
			default:
				codes[i] = flip_random(q, 20 + (int) (rnd() % 45));
		}
	}

	for (int t = 0; t < (ND_MIH_LAST_STEP + 1) * m; t++)
	{
		int			table = nd_mih_step_table(&l, t);
		size_t		n = nd_mih_step_values(&mq, t, values);

		for (int i = 0; i < ncodes; i++)
		{
			uint32_t	b = nd_block(&l, table, codes[i]);

			if (n > 0 && bsearch(&b, values, n, sizeof(uint32_t), cmp_u32) != NULL &&
				nd_mih_first_step(&mq, codes[i]) == t)
			{
				counted[i]++;
				counted_at[i] = t;
			}
		}
		/* after step t: every code within distance t counted */
		if (t <= 64)
			for (int i = 0; i < ncodes; i++)
				if (popcount64(codes[i] ^ q) <= t && counted[i] == 0)
					bad_complete++;
	}
	for (int i = 0; i < ncodes; i++)
	{
		if (counted[i] != 1)
			bad_once++;
		/* a code is never met before its distance allows */
		if (counted_at[i] > popcount64(codes[i] ^ q) * m + m)
			bad_order++;
	}
	ok(bad_once == 0, "%s: each of %d codes counted exactly once", what, ncodes);
	ok(bad_complete == 0, "%s: after step T every code within T bits is counted", what);
	ok(bad_order == 0, "%s: no code counted later than needed", what);
	free(codes);
	free(counted);
	free(counted_at);
	free(values);
}

static void
test_sorted_range(void)
{
	uint64_t	keys[200];
	int			bad = 0;

	for (int i = 0; i < 200; i++)
		keys[i] = (uint64_t) (i / 3) << 56 | (uint64_t) i;
	for (int trial = 0; trial < 2000; trial++)
	{
		uint64_t	lo = rnd() >> (rnd() % 8),
					hi = lo + (rnd() >> (rnd() % 64));
		size_t		n = (size_t) (rnd() % 201),
					b,
					e,
					want_b = 0,
					want_e = 0;

		if (hi < lo)
			hi = UINT64_MAX;
		if (trial % 7 == 0 && n > 0)
			lo = hi = keys[rnd() % n];
		nd_sorted_range(keys, n, lo, hi, &b, &e);
		while (want_b < n && keys[want_b] < lo)
			want_b++;
		want_e = want_b;
		while (want_e < n && keys[want_e] <= hi)
			want_e++;
		if (b != want_b || e != want_e)
			bad++;
	}
	ok(bad == 0, "sorted range equals a linear search");
}

/*
 * The galloping search equals the binary one from any guess, over runs of
 * equal keys and uniform keys alike, and an interpolated guess into uniform
 * keys reads few of them.
 */
static void
test_sorted_range_from(void)
{
	enum
	{
	N = 600};
	uint64_t	keys[N];
	int			bad = 0;
	double		reads_sum = 0;
	int			searches = 0;

	for (int trial = 0; trial < 20000; trial++)
	{
		size_t		n = (size_t) (rnd() % (N + 1)),
					guess = (size_t) (rnd() % (N + 3)),
					b,
					e,
					gb,
					ge;
		uint64_t	lo,
					hi;
		bool		uniform = trial % 2 == 0;

		if (uniform)
		{
			/* sorted uniform keys: a page of permuted random codes */
			for (size_t i = 0; i < n; i++)
				keys[i] = rnd();
			for (size_t i = 1; i < n; i++)
				for (size_t j = i; j > 0 && keys[j - 1] > keys[j]; j--)
				{
					uint64_t	t = keys[j];

					keys[j] = keys[j - 1];
					keys[j - 1] = t;
				}
		}
		else
			for (size_t i = 0; i < n; i++)
				keys[i] = (i > 0 && rnd() % 3 == 0) ? keys[i - 1] : (i > 0 ? keys[i - 1] : 0) + rnd() % 50;
		lo = n > 0 && trial % 3 ? keys[rnd() % n] : (uniform ? rnd() : rnd() % 20000);
		hi = trial % 5 == 0 ? lo : trial % 11 == 0 ? lo - 1 : trial % 13 == 0 ? UINT64_MAX :
			lo + (uniform ? rnd() >> 16 : rnd() % 400);
		if (trial % 17 == 0)
			lo = 0;
		nd_sorted_range(keys, n, lo, hi, &b, &e);
		nd_sorted_range_from(keys, n, lo, hi, guess, &gb, &ge);
		if (gb != b || ge != e)
			bad++;
		if (uniform && n >= 100)
		{
			size_t		g = nd_interpolate(keys[0], keys[n - 1] + 1, n, lo);

			nd_sorted_range_from(keys, n, lo, hi, g, &gb, &ge);
			if (gb != b || ge != e)
				bad++;
			/* how far the interpolated guess fell from the start */
			reads_sum += g > b ? (double) (g - b) : (double) (b - g);
			searches++;
		}
	}
	ok(bad == 0, "galloping sorted range equals the binary one from any guess");
	ok(searches > 0 && reads_sum / searches < 32,
	   "an interpolated guess into uniform keys falls within a few keys of the range (%.1f on average)",
	   searches > 0 ? reads_sum / searches : 0.0);
	ok(nd_interpolate(10, 10, 5, 10) == 0 && nd_interpolate(10, 20, 5, 25) == 5 &&
	   nd_interpolate(0, 100, 10, 50) == 5 && nd_interpolate(5, 100, 0, 50) == 0,
	   "nd_interpolate clamps to [0, n]");
}

typedef struct PagedKeys
{
	const uint64_t *keys;
	size_t		cap;
	int			reads;
} PagedKeys;

static const uint64_t *
paged_keys(size_t page, void *arg)
{
	PagedKeys  *p = (PagedKeys *) arg;

	p->reads++;
	return p->keys + page * p->cap;
}

/* The paged search equals the whole array's, reading at most two pages. */
static void
test_paged_range(void)
{
	uint64_t	keys[300];
	uint64_t	first[300];
	int			bad = 0,
				many_reads = 0;

	for (int trial = 0; trial < 20000; trial++)
	{
		size_t		n = (size_t) (rnd() % 301),
					cap = 1 + (size_t) (rnd() % 9),
					npages = (n + cap - 1) / cap,
					b,
					e,
					pb,
					pe;
		uint64_t	lo,
					hi;
		PagedKeys	p = {keys, cap, 0};

		/* runs of equal keys, some longer than a page */
		for (size_t i = 0; i < n; i++)
			keys[i] = (i > 0 && rnd() % 3 == 0) ? keys[i - 1] : (i > 0 ? keys[i - 1] : 0) + rnd() % 50;
		for (size_t j = 0; j < npages; j++)
			first[j] = keys[j * cap];
		lo = n > 0 && trial % 2 ? keys[rnd() % n] : rnd() % 8000;
		hi = trial % 5 == 0 ? lo : trial % 11 == 0 ? lo - 1 : lo + rnd() % 400;
		nd_sorted_range(keys, n, lo, hi, &b, &e);
		nd_paged_range(first, npages, cap, n, paged_keys, &p, lo, hi, &pb, &pe);
		if (pb != b || pe != e)
			bad++;
		if (p.reads > 2)
			many_reads++;
	}
	ok(bad == 0, "paged range equals the whole array's sorted range");
	ok(many_reads == 0, "paged range reads at most two pages");
}

static void
test_within(void)
{
	enum
	{
	N = 1003};
	uint64_t	codes[N];
	uint32_t	idx[N];
	uint8_t		dist[N];
	int			bad = 0;

	for (int variant = 0; variant <= 3; variant++)
		for (int trial = 0; trial < 200; trial++)
		{
			uint64_t	q = trial == 0 ? 0 : trial == 1 ? UINT64_MAX : rnd();
			int			maxd = trial % 66 - 1;
			size_t		n = N - (size_t) (trial % 9),
						k,
						want = 0;

			for (size_t i = 0; i < n; i++)
				codes[i] = i % 3 == 0 ? flip_random(q, (int) (rnd() % 65)) : i % 7 == 0 ? q : rnd();
			k = nd_hamming_within_variant(variant, codes, n, q, maxd, idx, dist);
			for (size_t i = 0; i < n; i++)
			{
				int			d = popcount64(codes[i] ^ q);

				if (d > maxd)
					continue;
				if (want >= k || idx[want] != i || dist[want] != d)
					bad++;
				want++;
			}
			if (want != k)
				bad++;
		}
	ok(bad == 0, "within kernel (portable, popcnt, AVX2, AVX-512) equals brute force, every maxd -1..64");
}

int
main(void)
{
	test_step_values();
	/* m = 2 has steps of C(32, 16) values: the index never runs those */
	for (int m = 3; m <= 8; m++)
	{
		nd_layout	l;
		char		what[64];

		nd_layout_init(&l, m);
		snprintf(what, sizeof(what), "m = %d", m);
		test_search(&l, what, 600);
	}
	/* one table of a cut (an index WITH only_block): the first, a middle and the last */
	for (int m = 3; m <= 8; m++)
		for (int b = 0; b < m; b += (m - 1) / 2 > 0 ? (m - 1) / 2 : 1)
		{
			nd_layout	l;
			nd_layout	cut;
			char		what[64];
			int			bad = 0;

			nd_layout_init_one(&l, m, b);
			nd_layout_init(&cut, m);
			for (int i = 0; i < 1000; i++)
			{
				uint64_t	c = rnd();

				if (nd_block(&l, 0, c) != nd_block(&cut, b, c) ||
					nd_unpermute(&l, 0, nd_permute(&l, 0, c)) != c ||
					nd_permute(&l, 0, c) != nd_permute(&cut, b, c))
					bad++;
			}
			ok(bad == 0 && l.nblocks == 1,
			   "one table of m = %d, block %d: the cut's table, block values and rotation", m, b);
			snprintf(what, sizeof(what), "one table of m = %d, block %d", m, b);
			test_search(&l, what, 300);
		}
	test_sorted_range();
	test_paged_range();
	test_sorted_range_from();
	test_within();
	return tap_done();
}
