/*
 * Unit tests of the permuted-table layout and the probe plan (nd_permute.c):
 * the layout covers the 64 bits, rotations are inverse to each other, the
 * block-value enumeration is complete and duplicate-free, and - the point of
 * it all - every code within the radius shares a probed block value with
 * the query, for every number of blocks.
 */
#include <stdint.h>
#include <string.h>

#include "nd_permute.h"
#include "splitmix.h"
#include "tap.h"

/* splitmix64: deterministic test data */
static uint64_t rng_state = 0x5eed5eed12345678ULL;

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

/* Does some table's probe set contain c's block value? */
static int
covered(const nd_layout *l, int radius, uint64_t q, uint64_t c)
{
	for (int i = 0; i < l->nblocks; i++)
	{
		int			d = popcount64((uint64_t) (nd_block(l, i, q) ^ nd_block(l, i, c)));

		if (d <= nd_probe_radius(l, radius, i))
			return 1;
	}
	return 0;
}

static void
test_layout(void)
{
	int			bad_cover = 0,
				bad_width = 0,
				bad_bits = 0;

	for (int m = ND_PERMUTE_MIN_BLOCKS; m <= ND_PERMUTE_MAX_BLOCKS; m++)
	{
		nd_layout	l;
		int			sum = 0;

		nd_layout_init(&l, m);
		for (int i = 0; i < m; i++)
		{
			if (l.start[i] != sum)
				bad_cover++;
			sum += l.width[i];
			if (l.width[i] != 64 / m && l.width[i] != 64 / m + 1)
				bad_width++;
			if (i > 0 && l.width[i] > l.width[i - 1])
				bad_width++;
		}
		if (sum != 64 || l.nblocks != m)
			bad_cover++;

		/* block i is bits start..start+width-1 counted from the top */
		for (int k = 0; k < 200; k++)
		{
			uint64_t	c = rnd();

			for (int i = 0; i < m; i++)
			{
				uint64_t	expect = 0;

				for (int b = 0; b < l.width[i]; b++)
					expect = (expect << 1) | ((c >> (63 - l.start[i] - b)) & 1);
				if (nd_block(&l, i, c) != expect)
					bad_bits++;
				if (nd_unpermute(&l, i, nd_permute(&l, i, c)) != c)
					bad_bits++;
				if (popcount64(nd_permute(&l, i, c)) != popcount64(c))
					bad_bits++;
				/* the prefix of the block value is the smallest code of it */
				if ((nd_permute(&l, i, c) & ~((~(uint64_t) 0) >> l.width[i])) !=
					nd_block_prefix(&l, i, nd_block(&l, i, c)))
					bad_bits++;
			}
		}
	}
	ok(bad_cover == 0, "blocks are consecutive and cover 64 bits, for 2..16 blocks");
	ok(bad_width == 0, "widths are 64/m or 64/m+1, wider blocks first");
	ok(bad_bits == 0, "nd_block, nd_permute, nd_unpermute and nd_block_prefix agree with bit-by-bit extraction");

	{
		nd_layout	l;

		nd_layout_init(&l, 5);
		ok(l.width[0] == 13 && l.width[3] == 13 && l.width[4] == 12 && l.start[4] == 52,
		   "5 blocks: 13,13,13,13,12");
		nd_layout_init(&l, 4);
		ok(nd_block(&l, 0, 0x123456789abcdef0ULL) == 0x1234 &&
		   nd_block(&l, 3, 0x123456789abcdef0ULL) == 0xdef0 &&
		   nd_permute(&l, 1, 0x123456789abcdef0ULL) == 0x56789abcdef01234ULL,
		   "4 blocks of 16 bits: blocks and rotation of a known code");
	}
}

static void
test_volume(void)
{
	ok(nd_ball_volume(16, 0) == 1 && nd_ball_volume(16, 1) == 17 &&
	   nd_ball_volume(16, 2) == 137 && nd_ball_volume(16, 3) == 697,
	   "ball volumes in 16 bits");
	ok(nd_ball_volume(32, 32) == ((uint64_t) 1 << 32) && nd_ball_volume(32, 100) == ((uint64_t) 1 << 32),
	   "a ball of radius >= width is the whole block");
	ok(nd_ball_volume(4, -1) == 0, "a negative radius holds nothing");
}

static void
test_iter(void)
{
	int			bad = 0;
	static unsigned char seen[1 << 12];

	for (int w = 1; w <= 12; w++)
		for (int d = -1; d <= w + 1; d++)
			for (int k = 0; k < 3; k++)
			{
				uint32_t	center = (uint32_t) rnd() & ((1u << w) - 1);
				nd_ball_iter it;
				uint32_t	v;
				uint64_t	n = 0;
				int			lastdist = 0;
				uint64_t	expect = 0;

				memset(seen, 0, sizeof(seen));
				nd_ball_iter_init(&it, center, w, d);
				while (nd_ball_iter_next(&it, &v))
				{
					int			dist = popcount64(v ^ center);

					if (v >= (1u << w) || seen[v] || dist > d || dist < lastdist)
						bad++;
					if (v < (1u << w))
						seen[v] = 1;
					lastdist = dist;
					n++;
				}
				/* brute force: everything within d must have been produced */
				for (uint32_t x = 0; x < (1u << w); x++)
					if (popcount64(x ^ center) <= d)
					{
						expect++;
						if (!seen[x])
							bad++;
					}
				if (n != expect || n != nd_ball_volume(w, d))
					bad++;
				if (nd_ball_iter_next(&it, &v))
					bad++;		/* stays done */
			}
	ok(bad == 0, "ball enumeration: complete, no duplicates, by distance, widths 1..12");

	{
		nd_ball_iter it;
		uint32_t	v;
		uint64_t	n = 0;
		int			badw = 0;

		nd_ball_iter_init(&it, 0xdeadbeefu, 32, 2);
		while (nd_ball_iter_next(&it, &v))
		{
			n++;
			if (popcount64(v ^ 0xdeadbeefu) > 2)
				badw++;
		}
		ok(n == nd_ball_volume(32, 2) && n == 529 && badw == 0, "32-bit block, radius 2: 529 values");
	}
}

/*
 * The pigeonhole argument, exhaustively over how a distance can be spread
 * over the blocks: for every vector of per-block distances (d_i <= width_i)
 * with sum <= r, some d_i <= nd_probe_radius(i).  And it is not slack: a
 * vector with d_i = probe radius + 1 everywhere sums to exactly r + 1.
 */
static int	bad_exh;

static void
spread(const nd_layout *l, int r, int i, int left, int *d)
{
	if (i == l->nblocks)
	{
		int			hit = 0;

		for (int j = 0; j < l->nblocks; j++)
			if (d[j] <= nd_probe_radius(l, r, j))
				hit = 1;
		if (!hit)
			bad_exh++;
		return;
	}
	for (int x = 0; x <= left && x <= l->width[i]; x++)
	{
		d[i] = x;
		spread(l, r, i + 1, left - x, d);
	}
}

static void
test_pigeonhole(void)
{
	int			bad_tight = 0;

	bad_exh = 0;
	for (int m = 2; m <= 6; m++)
	{
		nd_layout	l;
		int			d[ND_PERMUTE_MAX_BLOCKS];
		int			maxr = m <= 4 ? 24 : 14;

		nd_layout_init(&l, m);
		for (int r = 0; r <= maxr; r++)
			spread(&l, r, 0, r, d);
	}
	ok(bad_exh == 0, "every spread of distance <= r over 2..6 blocks hits a probed block");

	for (int m = ND_PERMUTE_MIN_BLOCKS; m <= ND_PERMUTE_MAX_BLOCKS; m++)
	{
		nd_layout	l;

		nd_layout_init(&l, m);
		for (int r = 0; r < 64; r++)
		{
			int			sum = 0;

			for (int i = 0; i < m; i++)
				sum += nd_probe_radius(&l, r, i) + 1;
			if (sum != r + 1)
				bad_tight++;
		}
	}
	ok(bad_tight == 0, "probe radii are tight: one more bit in every block is r+1");
}

/* Random codes at exactly distance r, and random codes within 3 bits in every block. */
static void
test_random_codes(void)
{
	int			bad = 0;
	long		checked = 0;

	for (int m = ND_PERMUTE_MIN_BLOCKS; m <= ND_PERMUTE_MAX_BLOCKS; m++)
	{
		nd_layout	l;

		nd_layout_init(&l, m);
		for (int r = 0; r <= 64; r++)
			for (int k = 0; k < 300; k++)
			{
				uint64_t	q = rnd();
				uint64_t	c = flip_random(q, r);

				checked++;
				if (!covered(&l, r, q, c))
					bad++;
				/* also: distance below r is covered at radius r */
				if (r > 0 && !covered(&l, r, q, flip_random(q, (int) (rnd() % r))))
					bad++;
			}
		/* adversarial: spread the flips evenly, d_i = r/m or r/m + 1 */
		for (int r = 0; r <= 40; r++)
		{
			uint64_t	q = rnd();
			uint64_t	mask = 0;
			int			left = r;

			for (int i = m - 1; i >= 0 && left > 0; i--)
			{
				int			di = left / (i + 1);

				for (int b = 0; b < di && b < l.width[i]; b++)
					mask |= (uint64_t) 1 << (63 - l.start[i] - b);
				left -= di;
			}
			checked++;
			if (popcount64(mask) == r && !covered(&l, r, q, q ^ mask))
				bad++;
		}
	}
	ok(bad == 0, "%ld random and evenly spread codes within r are covered, 2..16 blocks", checked);
}

static void
test_counts(void)
{
	nd_layout	l;

	nd_layout_init(&l, 4);
	ok(nd_probe_count(&l, -1) == 0, "radius -1: no probes");
	ok(nd_probe_count(&l, 0) == 1 && nd_probe_count(&l, 2) == 3 && nd_probe_count(&l, 3) == 4,
	   "4 blocks, r < 4: r + 1 exact probes");
	/* r = 4: block 0 within 1 bit (17), blocks 1..3 exact */
	ok(nd_probe_count(&l, 4) == 17 + 3, "4 blocks, r = 4: 20 probes");
	ok(nd_probe_radius(&l, 4, 0) == 1 && nd_probe_radius(&l, 4, 1) == 0, "4 blocks, r = 4: probe radii 1,0,0,0");
	nd_layout_init(&l, 5);
	ok(nd_probe_count(&l, 4) == 5, "5 blocks, r = 4: 5 probes");
	nd_layout_init(&l, 2);
	ok(nd_probe_count(&l, 64) == ((uint64_t) 1 << 32) + (nd_ball_volume(32, 31)),
	   "2 blocks, r = 64: counts do not overflow");
}

int
main(void)
{
	test_layout();
	test_volume();
	test_iter();
	test_pigeonhole();
	test_random_codes();
	test_counts();
	return tap_done();
}
