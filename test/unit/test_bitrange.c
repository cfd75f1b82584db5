/*
 * Unit tests of the GiST key arithmetic (nd_bitrange.c): the lower bound must
 * never exceed a true distance (or the index would lose rows), must be exact
 * for single codes (the KNN scan trusts it without recheck), and splits must
 * be valid partitions that give both sides fixed bits.
 */
#include <stdint.h>
#include <string.h>

#include "nd_bitrange.h"
#include "splitmix.h"
#include "tap.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

/* splitmix64: deterministic */
static uint64_t
rnd(void)
{
	return splitmix64_next(&rng_state);
}

/* a code within `k` flipped bits of c (exactly k distinct bits) */
static uint64_t
flip(uint64_t c, int k)
{
	uint64_t	m = 0;

	while (nd_popcount64(m) < k)
		m |= UINT64_C(1) << (rnd() % 64);
	return c ^ m;
}

static nd_bitrange
union_of(const uint64_t *codes, int n)
{
	nd_bitrange r = nd_bitrange_of(codes[0]);

	for (int i = 1; i < n; i++)
	{
		nd_bitrange x = nd_bitrange_of(codes[i]);

		nd_bitrange_merge(&r, &x);
	}
	return r;
}

static int
contains(const nd_bitrange *r, const nd_bitrange *x)
{
	return (r->all & ~x->all) == 0 && (x->any & ~r->any) == 0;
}

static void
test_lower_bound(void)
{
	int			bad_exact = 0;
	int			bad_bound = 0;
	int			bad_tight = 0;
	int			bad_members = 0;
	uint64_t	codes[64];

	/* exact for single codes */
	for (int t = 0; t < 100000; t++)
	{
		uint64_t	c = rnd(),
					q = (t & 1) ? rnd() : flip(c, t % 65);
		nd_bitrange r = nd_bitrange_of(c);

		if (nd_bitrange_lower_bound(&r, q) != nd_popcount64(c ^ q))
			bad_exact++;
	}
	ok(bad_exact == 0, "lower bound of a single code is its distance (%d wrong)", bad_exact);

	/* never above the distance to any member, for sets of related codes */
	for (int t = 0; t < 20000; t++)
	{
		uint64_t	base = rnd();
		int			n = 1 + (int) (rnd() % 64);
		int			spread = (int) (rnd() % 12);
		uint64_t	q = (t % 3) ? flip(base, (int) (rnd() % 20)) : rnd();
		nd_bitrange r;
		int			mind = 65;

		for (int i = 0; i < n; i++)
			codes[i] = flip(base, (int) (rnd() % (spread + 1)));
		r = union_of(codes, n);
		for (int i = 0; i < n; i++)
		{
			int			d = nd_popcount64(codes[i] ^ q);

			if (d < mind)
				mind = d;
			if (!contains(&r, &(nd_bitrange) {codes[i], codes[i]}))
				bad_members++;
		}
		if (nd_bitrange_lower_bound(&r, q) > mind)
			bad_bound++;
	}
	ok(bad_members == 0, "the union contains every member (%d missing)", bad_members);
	ok(bad_bound == 0, "lower bound never exceeds the nearest member (%d violations)", bad_bound);

	/*
	 * Tight for subcubes: enumerate every code of a subcube with up to 10
	 * unfixed bits; the nearest one is exactly at the lower bound.
	 */
	for (int t = 0; t < 300; t++)
	{
		uint64_t	fixedval = rnd();
		uint64_t	free_mask = 0;
		int			k = t % 11;
		uint64_t	q = rnd();
		int			bitpos[10];
		int			mind = 65;
		nd_bitrange r;

		while (nd_popcount64(free_mask) < k)
			free_mask |= UINT64_C(1) << (rnd() % 64);
		r.all = fixedval & ~free_mask;
		r.any = fixedval | free_mask;
		for (int i = 0, j = 0; i < 64; i++)
			if (free_mask >> i & 1)
				bitpos[j++] = i;
		for (uint32_t v = 0; v < (1u << k); v++)
		{
			uint64_t	c = r.all;

			for (int j = 0; j < k; j++)
				if (v >> j & 1)
					c |= UINT64_C(1) << bitpos[j];
			if (nd_popcount64(c ^ q) < mind)
				mind = nd_popcount64(c ^ q);
		}
		if (nd_bitrange_lower_bound(&r, q) != mind)
			bad_tight++;
	}
	ok(bad_tight == 0, "lower bound equals the nearest point of a subcube (%d wrong)", bad_tight);
}

static void
test_penalty(void)
{
	nd_bitrange exact = nd_bitrange_of(0x00FF);
	nd_bitrange loose = {0x00F0, 0x00FF};	/* 4 unfixed bits */
	nd_bitrange looser = {0x0000, 0xFFFF};	/* 16 unfixed */
	nd_bitrange inside = nd_bitrange_of(0x00F3);
	nd_bitrange outside = nd_bitrange_of(0x01F3);

	ok(nd_bitrange_penalty(&exact, &exact) == 0.0, "penalty 0 for an equal code");
	ok(nd_bitrange_penalty(&loose, &inside) < 1.0 && nd_bitrange_penalty(&loose, &inside) > 0.0,
	   "a code inside a range costs less than one bit");
	ok(nd_bitrange_penalty(&loose, &inside) < nd_bitrange_penalty(&looser, &inside),
	   "the tighter of two ranges that hold the code is preferred");
	ok((int) nd_bitrange_penalty(&loose, &outside) == 1,
	   "one newly unfixed bit costs 1 (got %g)", nd_bitrange_penalty(&loose, &outside));
	{
		nd_bitrange wide = {0, UINT64_MAX >> 1};	/* 63 unfixed bits */
		nd_bitrange zero = nd_bitrange_of(0);
		nd_bitrange one = nd_bitrange_of(1);

		ok(nd_bitrange_penalty(&wide, &one) < nd_bitrange_penalty(&zero, &one),
		   "no growth in a wide range beats one bit of growth in a single code");
	}
}

/* checks a split of r[0..n-1]; returns a description of the first problem or NULL */
static const char *
check_split(const nd_bitrange *r, int n, const uint8_t *side, const nd_bitrange *u, int n0)
{
	nd_bitrange w[2] = {{UINT64_MAX, 0}, {UINT64_MAX, 0}};
	int			cnt[2] = {0, 0};

	for (int i = 0; i < n; i++)
	{
		if (side[i] > 1)
			return "side out of range";
		nd_bitrange_merge(&w[side[i]], &r[i]);
		cnt[side[i]]++;
	}
	if (cnt[0] == 0 || cnt[1] == 0)
		return "empty side";
	if (cnt[0] != n0)
		return "wrong count returned";
	if (!nd_bitrange_equal(&w[0], &u[0]) || !nd_bitrange_equal(&w[1], &u[1]))
		return "unions do not match the sides";
	return NULL;
}

static void
test_split(void)
{
	enum
	{
		N = 300
	};
	nd_bitrange r[N];
	uint8_t		side[N];
	nd_bitrange u[2];
	const char *problem = NULL;
	int			n0;
	int			unbalanced = 0;
	int			nofixed = 0;

	/* random codes, every size */
	for (int n = 2; n <= N && !problem; n++)
	{
		for (int i = 0; i < n; i++)
			r[i] = nd_bitrange_of(rnd());
		memset(side, 0xFF, sizeof(side));
		n0 = nd_bitrange_split(r, n, side, u);
		problem = check_split(r, n, side, u, n0);
		if (n >= 8 && (n0 < n / 4 || n - n0 < n / 4))
			unbalanced++;
		if (nd_bitrange_unfixed(&u[0]) == 64 || nd_bitrange_unfixed(&u[1]) == 64)
			nofixed++;
	}
	ok(problem == NULL, "random codes: valid partitions (%s)", problem ? problem : "ok");
	ok(unbalanced == 0, "random codes: both sides at least a quarter (%d not)", unbalanced);
	ok(nofixed == 0, "random codes: both sides keep a fixed bit (%d not)", nofixed);

	/* identical codes: halves */
	for (int i = 0; i < N; i++)
		r[i] = nd_bitrange_of(0x1234);
	n0 = nd_bitrange_split(r, N, side, u);
	problem = check_split(r, N, side, u, n0);
	ok(problem == NULL && n0 == N / 2, "identical codes are halved (%s, %d)",
	   problem ? problem : "ok", n0);

	/* one odd code among duplicates: still two non-empty sides */
	r[137] = nd_bitrange_of(0x1235);
	n0 = nd_bitrange_split(r, N, side, u);
	problem = check_split(r, N, side, u, n0);
	ok(problem == NULL, "one distinct code among duplicates (%s)", problem ? problem : "ok");

	/* inner keys with no fixed bit at all */
	for (int i = 0; i < 50; i++)
		r[i] = (nd_bitrange) {0, UINT64_MAX};
	n0 = nd_bitrange_split(r, 50, side, u);
	problem = check_split(r, 50, side, u, n0);
	ok(problem == NULL && n0 == 25, "ranges without fixed bits are halved (%s, %d)",
	   problem ? problem : "ok", n0);

	/* no bit fixed both ways, but the ranges differ */
	for (int i = 0; i < 40; i++)
	{
		uint64_t	m = UINT64_C(1) << (i % 8);

		r[i] = (nd_bitrange) {0xFF00 & ~m, 0xFF00 | m | (i % 2 ? 0xF0000 : 0)};
		r[i].all &= r[i].any;
	}
	n0 = nd_bitrange_split(r, 40, side, u);
	problem = check_split(r, 40, side, u, n0);
	ok(problem == NULL, "ranges with no bit fixed both ways (%s)", problem ? problem : "ok");

	/* two tight clusters far apart end up on different sides, whole */
	{
		uint64_t	c0 = rnd();
		uint64_t	c1 = flip(c0, 30);
		int			mixed = 0;

		for (int i = 0; i < 200; i++)
			r[i] = nd_bitrange_of(flip(i % 2 ? c1 : c0, (int) (rnd() % 3)));
		n0 = nd_bitrange_split(r, 200, side, u);
		problem = check_split(r, 200, side, u, n0);
		for (int i = 2; i < 200; i++)
			if (side[i] != side[i % 2])
				mixed++;
		ok(problem == NULL && mixed == 0 && side[0] != side[1],
		   "two clusters are separated, neither cut (%s, %d misplaced)",
		   problem ? problem : "ok", mixed);
	}

	/* inner-level split: unions of groups of codes sharing 8-bit prefixes */
	{
		int			ok_fixed = 1;

		for (int i = 0; i < 100; i++)
		{
			uint64_t	prefix = (uint64_t) (rnd() & 0xFF) << 56;
			uint64_t	codes[20];

			for (int j = 0; j < 20; j++)
				codes[j] = prefix | (rnd() >> 8);
			r[i] = union_of(codes, 20);
		}
		n0 = nd_bitrange_split(r, 100, side, u);
		problem = check_split(r, 100, side, u, n0);
		if (nd_bitrange_unfixed(&u[0]) > 63 || nd_bitrange_unfixed(&u[1]) > 63)
			ok_fixed = 0;
		ok(problem == NULL && ok_fixed && n0 >= 25 && n0 <= 75,
		   "prefix groups split on a prefix bit (%s, %d/%d unfixed, %d left)",
		   problem ? problem : "ok", nd_bitrange_unfixed(&u[0]), nd_bitrange_unfixed(&u[1]), n0);
	}
}

/*
 * nd_bitrange_differ: every code of a range differs from q on each of its
 * bits (so a GiST block ball may skip a subtree that differs on a bit of
 * its block), and for one code it is that code's XOR with q (exact leaves).
 */
static void
test_differ(void)
{
	int			unsound = 0,
				inexact = 0;

	for (int t = 0; t < 2000; t++)
	{
		uint64_t	codes[16];
		uint64_t	base = rnd();
		int			n = 1 + (int) (rnd() % 16);
		uint64_t	q = (t % 2) ? flip(base, (int) (rnd() % 10)) : rnd();
		nd_bitrange r;
		uint64_t	d;

		for (int i = 0; i < n; i++)
			codes[i] = flip(base, (int) (rnd() % 8));
		r = union_of(codes, n);
		d = nd_bitrange_differ(&r, q);
		for (int i = 0; i < n; i++)
			if (((codes[i] ^ q) & d) != d)
				unsound++;
		r = nd_bitrange_of(codes[0]);
		if (nd_bitrange_differ(&r, q) != (codes[0] ^ q))
			inexact++;
	}
	ok(unsound == 0, "every member differs from the query on every bit of differ (%d violations)", unsound);
	ok(inexact == 0, "differ of one code is its XOR with the query (%d wrong)", inexact);
}

int
main(void)
{
	test_lower_bound();
	test_differ();
	test_penalty();
	test_split();
	return tap_done();
}
