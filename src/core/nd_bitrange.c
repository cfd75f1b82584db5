/*-------------------------------------------------------------------------
 *
 * nd_bitrange.c
 *		Penalty and page split for ranges of 64-bit codes (nd_bitrange.h).
 *
 * The split is chosen for the lower bound the GiST search uses: a group
 * prunes well when its codes agree on many bits.  Random 64-bit codes agree
 * on no bit once there are more than a few dozen of them, so the only way
 * to give a group fixed bits is to put in it codes that agree on some bit.
 * The split therefore divides on one bit -- codes with a 0 there to one
 * side, with a 1 to the other -- which fixes that bit on both sides, and
 * picks the bit that leaves the most fixed bits in total among the splits
 * that keep both sides at least a quarter full.  Repeated splits build a
 * partition by bits, like a prefix tree whose bits are chosen per node.
 *
 *-------------------------------------------------------------------------
 */
#include "nd_bitrange.h"

#include <assert.h>
#include <stddef.h>

/* Identity of nd_bitrange_merge(). */
static const nd_bitrange empty_range = {UINT64_MAX, 0};

double
nd_bitrange_penalty(const nd_bitrange *orig, const nd_bitrange *add)
{
	nd_bitrange m = *orig;
	int			before = nd_bitrange_unfixed(orig);

	nd_bitrange_merge(&m, add);
	return (double) (nd_bitrange_unfixed(&m) - before) + before / 65.0;
}

typedef struct split_state
{
	nd_bitrange u[2];
	int			cnt[2];
} split_state;

static void
split_add(split_state *st, int s, const nd_bitrange *x)
{
	nd_bitrange_merge(&st->u[s], x);
	st->cnt[s]++;
}

/* The side (both non-empty) whose union grows least; ties: the smaller. */
static int
least_growth_side(const split_state *st, const nd_bitrange *x)
{
	int			g[2];

	assert(st->cnt[0] > 0 && st->cnt[1] > 0);
	for (int s = 0; s < 2; s++)
	{
		nd_bitrange m = st->u[s];

		nd_bitrange_merge(&m, x);
		g[s] = nd_bitrange_unfixed(&m) - nd_bitrange_unfixed(&st->u[s]);
	}
	if (g[0] != g[1])
		return g[0] < g[1] ? 0 : 1;
	return st->cnt[1] < st->cnt[0] ? 1 : 0;
}

/*
 * Ranges with bit b fixed go to the side of its value; then the others, to
 * the side they enlarge least.  The caller makes sure that both values of
 * the bit occur.  side may be NULL to only evaluate the split.
 */
static void
split_on_bit(const nd_bitrange *r, int n, int b, uint8_t *side, split_state *st)
{
	uint64_t	m = UINT64_C(1) << b;

	st->u[0] = st->u[1] = empty_range;
	st->cnt[0] = st->cnt[1] = 0;
	for (int i = 0; i < n; i++)
	{
		int			s;

		if ((r[i].all ^ r[i].any) & m)
			continue;
		s = (r[i].all & m) ? 1 : 0;
		split_add(st, s, &r[i]);
		if (side)
			side[i] = (uint8_t) s;
	}
	for (int i = 0; i < n; i++)
	{
		int			s;

		if (!((r[i].all ^ r[i].any) & m))
			continue;
		s = least_growth_side(st, &r[i]);
		split_add(st, s, &r[i]);
		if (side)
			side[i] = (uint8_t) s;
	}
}

/* Bits that become unfixed when x and y are merged. */
static int
dissimilarity(const nd_bitrange *x, const nd_bitrange *y)
{
	nd_bitrange m = *x;

	nd_bitrange_merge(&m, y);
	return nd_bitrange_unfixed(&m);
}

static int
farthest_from(const nd_bitrange *r, int n, int from)
{
	int			best = from == 0 ? 1 : 0;
	int			best_d = -1;

	for (int i = 0; i < n; i++)
	{
		int			d;

		if (i == from)
			continue;
		d = dissimilarity(&r[from], &r[i]);
		if (d > best_d)
		{
			best = i;
			best_d = d;
		}
	}
	return best;
}

/*
 * When no bit is fixed both ways (identical codes, or ranges unfixed
 * wherever they differ): two far-apart seeds, then each range to the side it
 * enlarges least.  Ties go to the smaller side, which halves sets of equal
 * ranges.
 */
static void
split_by_seeds(const nd_bitrange *r, int n, uint8_t *side, split_state *st)
{
	int			a = farthest_from(r, n, 0);
	int			b = farthest_from(r, n, a);

	st->u[0] = r[a];
	st->u[1] = r[b];
	st->cnt[0] = st->cnt[1] = 1;
	side[a] = 0;
	side[b] = 1;
	for (int i = 0; i < n; i++)
	{
		int			s;

		if (i == a || i == b)
			continue;
		s = least_growth_side(st, &r[i]);
		split_add(st, s, &r[i]);
		side[i] = (uint8_t) s;
	}
}

int
nd_bitrange_split(const nd_bitrange *r, int n, uint8_t *side, nd_bitrange u[2])
{
	int			ones[64] = {0};
	int			zeros[64] = {0};
	int			min_side = n / 4 > 1 ? n / 4 : 1;
	int			best = -1;
	bool		best_ok = false;
	int			best_fixed = -1;
	int			best_bal = -1;
	split_state st;

	assert(n >= 2);

	/* How many ranges have each bit fixed to 1, and to 0 */
	for (int i = 0; i < n; i++)
	{
		uint64_t	f1 = r[i].all;
		uint64_t	f0 = ~r[i].any;

		for (int b = 0; b < 64; b++)
		{
			ones[b] += (int) ((f1 >> b) & 1);
			zeros[b] += (int) ((f0 >> b) & 1);
		}
	}

	for (int b = 0; b < 64; b++)
	{
		int			fixed;
		int			bal;
		bool		ok;
		bool		better;

		if (ones[b] == 0 || zeros[b] == 0)
			continue;
		split_on_bit(r, n, b, NULL, &st);
		fixed = 128 - nd_bitrange_unfixed(&st.u[0]) - nd_bitrange_unfixed(&st.u[1]);
		bal = st.cnt[0] < st.cnt[1] ? st.cnt[0] : st.cnt[1];
		ok = bal >= min_side;

		/*
		 * Balanced enough beats unbalanced; among balanced splits the most
		 * fixed bits win, among unbalanced ones the best balance.
		 */
		if (ok != best_ok)
			better = ok;
		else if (ok)
			better = fixed > best_fixed || (fixed == best_fixed && bal > best_bal);
		else
			better = bal > best_bal || (bal == best_bal && fixed > best_fixed);
		if (best < 0 || better)
		{
			best = b;
			best_ok = ok;
			best_fixed = fixed;
			best_bal = bal;
		}
	}

	if (best >= 0)
		split_on_bit(r, n, best, side, &st);
	else
		split_by_seeds(r, n, side, &st);

	u[0] = st.u[0];
	u[1] = st.u[1];
	return st.cnt[0];
}
