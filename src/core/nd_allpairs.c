/*-------------------------------------------------------------------------
 *
 * nd_allpairs.c
 *		All pairs within Hamming distance k with permuted sorted tables, and
 *		band keys (see nd_allpairs.h).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "nd_allpairs.h"
#include "nd_mix.h"

/* Radix sort digits. */
#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
#define RADIX_MASK (RADIX_SIZE - 1)

/* Work units (comparisons, emitted pairs, sorted codes) between ticks. */
#define TICK_EVERY (1 << 20)

int
nd_pairs_check(int k, int m)
{
	return k >= 0 && k <= ND_ALLPAIRS_MAX_DISTANCE &&
		m >= ND_PERMUTE_MIN_BLOCKS && m > k && m <= ND_PERMUTE_MAX_BLOCKS;
}

static uint64_t
binomial(int n, int k)
{
	uint64_t	r = 1;

	if (k < 0 || k > n)
		return 0;
	for (int i = 0; i < k; i++)
		r = r * (uint64_t) (n - i) / (uint64_t) (i + 1);
	return r;
}

void
nd_pairs_plan_init(nd_pairs_plan *plan, int k, int m)
{
	int			w[ND_PERMUTE_MAX_BLOCKS];

	plan->k = k;
	plan->nblocks = m;
	plan->nlead = m - k;
	plan->ntables = (int) binomial(m, k);
	nd_layout_init(&plan->layout, m);

	/* the narrowest key takes the s narrowest blocks: the last ones */
	for (int i = 0; i < m; i++)
		w[i] = plan->layout.width[i];
	plan->min_keybits = 0;
	for (int i = m - plan->nlead; i < m; i++)
		plan->min_keybits += w[i];
}

uint32_t
nd_pairs_first_lead(const nd_pairs_plan *plan)
{
	return ((uint32_t) 1 << plan->nlead) - 1;
}

/* Gosper's hack: the next larger mask with as many bits set. */
uint32_t
nd_pairs_next_lead(uint32_t lead)
{
	uint32_t	low = lead & (~lead + 1);
	uint32_t	ripple = lead + low;

	return (((ripple ^ lead) >> 2) / low) | ripple;
}

void
nd_pairs_table_init(const nd_pairs_plan *plan, int index, uint32_t lead,
					nd_pairs_table *tab)
{
	const nd_layout *l = &plan->layout;
	int			pos = 0;		/* bits placed so far, from the top */
	int			i = 0;

	tab->index = index;
	tab->lead = lead;
	tab->nblocks = plan->nblocks;
	tab->keybits = 0;
	/* leading blocks first, then the others, each in block order */
	for (int pass = 0; pass < 2; pass++)
	{
		for (int b = 0; b < plan->nblocks; b++)
		{
			int			is_lead = (lead >> b) & 1;
			int			wd = l->width[b];

			if (is_lead != (pass == 0))
				continue;
			tab->block_of[i] = (uint8_t) b;
			tab->src_shift[i] = (uint8_t) (64 - l->start[b] - wd);
			tab->dst_shift[i] = (uint8_t) (64 - pos - wd);
			tab->bmask[i] = wd >= 64 ? ~(uint64_t) 0 : ((uint64_t) 1 << wd) - 1;
			if (pass == 0)
				tab->keybits += wd;
			pos += wd;
			i++;
		}
	}
}

uint32_t
nd_pairs_agree(const nd_pairs_plan *plan, uint64_t a, uint64_t b)
{
	const nd_layout *l = &plan->layout;
	uint64_t	x = a ^ b;
	uint32_t	agree = 0;

	for (int i = 0; i < plan->nblocks; i++)
	{
		uint64_t	m = (((uint64_t) 1 << l->width[i]) - 1) << (64 - l->start[i] - l->width[i]);

		if ((x & m) == 0)
			agree |= (uint32_t) 1 << i;
	}
	return agree;
}

/* The s lowest set bits of a mask (all of it if it has fewer). */
static inline uint32_t
lowest_bits(uint32_t mask, int s)
{
	uint32_t	out = 0;

	for (int i = 0; i < s && mask != 0; i++)
	{
		uint32_t	low = mask & (~mask + 1);

		out |= low;
		mask ^= low;
	}
	return out;
}

int
nd_pairs_first_table(const nd_pairs_plan *plan, uint32_t agree)
{
	uint32_t	lead;
	int			rank = 0;
	int			j = 1;

	if (__builtin_popcount(agree) < plan->nlead)
		return -1;
	lead = lowest_bits(agree, plan->nlead);

	/*
	 * Rank of the mask in increasing order among masks with s bits set (the
	 * combinatorial number system): sum of C(c_j, j) over its set bits c_1 <
	 * ... < c_s.
	 */
	for (int b = 0; b < plan->nblocks; b++)
		if ((lead >> b) & 1)
			rank += (int) binomial(b, j++);
	return rank;
}

int64_t
nd_band_key(const nd_pairs_table *tab, uint64_t code)
{
	uint64_t	key = nd_pairs_key(tab, nd_pairs_permute(tab, code));

	return (int64_t) nd_fmix64(key ^ ((uint64_t) (tab->index + 1) * 0x9E3779B97F4A7C15ull));
}

/*
 * Costs in units of one in-run comparison: a table costs about this much
 * per code for permuting and radix sorting (measured; doc/dedup.md).
 */
#define SORT_COST_PER_CODE 6.0
/* auto-chosen plans stay below this many tables */
#define AUTO_MAX_TABLES 5000

int
nd_pairs_auto_blocks(int k, double n)
{
	int			best = -1;
	double		best_cost = 0;

	for (int m = k + 1; m <= ND_PERMUTE_MAX_BLOCKS; m++)
	{
		nd_pairs_plan p;
		double		cost;

		if (!nd_pairs_check(k, m))
			continue;
		nd_pairs_plan_init(&p, k, m);
		if (p.ntables > AUTO_MAX_TABLES && best >= 0)
			break;
		/* expected other codes in a code's run, compared once per pair */
		cost = (double) p.ntables *
			(SORT_COST_PER_CODE + 0.5 * n / ldexp(1.0, p.min_keybits));
		if (best < 0 || cost < best_cost)
		{
			best = m;
			best_cost = cost;
		}
	}
	return best;
}

int
nd_band_auto_blocks(int k)
{
	for (int m = k + 1; m <= ND_PERMUTE_MAX_BLOCKS; m++)
	{
		nd_pairs_plan p;

		if (!nd_pairs_check(k, m))
			continue;
		nd_pairs_plan_init(&p, k, m);
		if (p.min_keybits >= ND_BAND_MIN_KEYBITS)
			return m;
	}
	return ND_PERMUTE_MAX_BLOCKS;
}

size_t
nd_allpairs_scratch_size(size_t n)
{
	/* max(sort buffer 16n, permuted codes 2 * 8n + group starts 4(n+1)) */
	return 16 * n + 4 * (n + 1) + 8;
}

/* Counts work and calls the tick callback every TICK_EVERY units. */
typedef struct run_state
{
	const nd_pairs_sink *sink;
	uint64_t	work;
	uint64_t	emitted;
} run_state;

static inline void
add_work(run_state *st, uint64_t units)
{
	st->work += units;
	if (st->work >= TICK_EVERY)
	{
		st->work = 0;
		if (st->sink->tick)
			st->sink->tick(st->sink->arg);
	}
}

static inline void
emit_pair(run_state *st, int64_t a, int64_t b, int dist)
{
	if (a == b)
		return;
	if (a < b)
		st->sink->emit(st->sink->arg, a, b, dist);
	else
		st->sink->emit(st->sink->arg, b, a, dist);
	st->emitted++;
	add_work(st, 1);
}

/* LSD radix sort of items by code; tmp holds n items. */
static void
sort_items(nd_pair_item *items, nd_pair_item *tmp, size_t n, run_state *st)
{
	uint32_t	count[6][RADIX_SIZE];
	nd_pair_item *src = items,
			   *dst = tmp;

	if (n < 2)
		return;
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	c = items[i].code;

		for (int d = 0; d < 6; d++)
			count[d][(c >> (d * RADIX_BITS)) & RADIX_MASK]++;
	}
	add_work(st, n);
	for (int d = 0; d < 6; d++)
	{
		uint32_t	sum = 0;
		int			shift = d * RADIX_BITS;

		/* a digit that is the same everywhere does not reorder anything */
		if (count[d][(items[0].code >> shift) & RADIX_MASK] == n)
			continue;
		for (int v = 0; v < RADIX_SIZE; v++)
		{
			uint32_t	c = count[d][v];

			count[d][v] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[d][(src[i].code >> shift) & RADIX_MASK]++] = src[i];
		{
			nd_pair_item *t = src;

			src = dst;
			dst = t;
		}
		add_work(st, n);
	}
	if (src != items)
		memcpy(items, src, n * sizeof(nd_pair_item));
}

/* LSD radix sort of permuted codes by their top keybits bits. */
static uint64_t *
sort_keys(uint64_t *a, uint64_t *tmp, size_t n, int keybits, run_state *st)
{
	uint32_t	count[RADIX_SIZE];
	int			lo = 64 - keybits;

	while (lo < 64)
	{
		int			width = 64 - lo < RADIX_BITS ? 64 - lo : RADIX_BITS;
		uint64_t	mask = ((uint64_t) 1 << width) - 1;
		uint32_t	sum = 0;

		memset(count, 0, sizeof(uint32_t) * ((size_t) 1 << width));
		for (size_t i = 0; i < n; i++)
			count[(a[i] >> lo) & mask]++;
		if (count[(a[0] >> lo) & mask] != n)
		{
			for (size_t v = 0; v < ((size_t) 1 << width); v++)
			{
				uint32_t	c = count[v];

				count[v] = sum;
				sum += c;
			}
			for (size_t i = 0; i < n; i++)
				tmp[count[(a[i] >> lo) & mask]++] = a[i];
			{
				uint64_t   *t = a;

				a = tmp;
				tmp = t;
			}
		}
		add_work(st, 2 * n);
		lo += width;
	}
	return a;
}

/* Group of a code: binary search over the groups' first items. */
static size_t
find_group(const nd_pair_item *items, const uint32_t *starts, size_t ngroups,
		   uint64_t code)
{
	size_t		lo = 0,
				hi = ngroups;

	while (hi - lo > 1)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (items[starts[mid]].code <= code)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void
emit_groups(run_state *st, const nd_pair_item *items, const uint32_t *starts,
			size_t ga, size_t gb, int dist)
{
	for (uint32_t i = starts[ga]; i < starts[ga + 1]; i++)
		for (uint32_t j = starts[gb]; j < starts[gb + 1]; j++)
			emit_pair(st, items[i].id, items[j].id, dist);
}

uint64_t
nd_allpairs_run(const nd_pairs_plan *plan, nd_pair_item *items, size_t n,
				int t_begin, int t_end, void *scratch, const nd_pairs_sink *sink)
{
	run_state	st = {sink, 0, 0};
	uint64_t   *perm = (uint64_t *) scratch;
	uint64_t   *ptmp = perm + n;
	uint32_t   *starts = (uint32_t *) (ptmp + n);
	size_t		ngroups = 0;
	uint32_t	lead;

	if (n == 0)
		return 0;

	/* group identical codes; the sort buffer overlaps perm and ptmp */
	sort_items(items, (nd_pair_item *) scratch, n, &st);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || items[i].code != items[i - 1].code)
			starts[ngroups++] = (uint32_t) i;
	starts[ngroups] = (uint32_t) n;

	/* distance-0 pairs inside each group, reported as table 0's */
	if (t_begin == 0)
	{
		for (size_t g = 0; g < ngroups; g++)
			for (uint32_t i = starts[g]; i < starts[g + 1]; i++)
				for (uint32_t j = i + 1; j < starts[g + 1]; j++)
					emit_pair(&st, items[i].id, items[j].id, 0);
	}

	/* distinct codes are at least 1 apart */
	if (plan->k == 0 || ngroups < 2)
		return st.emitted;

	lead = nd_pairs_first_lead(plan);
	for (int t = 0; t < t_end; t++, lead = nd_pairs_next_lead(lead))
	{
		nd_pairs_table tab;
		uint64_t   *sorted;
		size_t		i;

		if (t < t_begin)
			continue;
		if (sink->table_start)
			sink->table_start(sink->arg, t);
		nd_pairs_table_init(plan, t, lead, &tab);
		for (size_t g = 0; g < ngroups; g++)
			perm[g] = nd_pairs_permute(&tab, items[starts[g]].code);
		add_work(&st, ngroups);
		sorted = sort_keys(perm, ptmp, ngroups, tab.keybits, &st);

		for (i = 0; i < ngroups;)
		{
			uint64_t	key = nd_pairs_key(&tab, sorted[i]);
			size_t		end = i + 1;

			while (end < ngroups && nd_pairs_key(&tab, sorted[end]) == key)
				end++;
			for (size_t a = i; a + 1 < end; a++)
			{
				uint64_t	pa = sorted[a];

				for (size_t b = a + 1; b < end; b++)
				{
					uint64_t	x = pa ^ sorted[b];
					int			d = __builtin_popcountll(x);
					uint64_t	ca,
								cb;

					if (d > plan->k)
						continue;
					ca = nd_pairs_unpermute(&tab, pa);
					cb = nd_pairs_unpermute(&tab, sorted[b]);
					if (nd_pairs_first_table(plan, nd_pairs_agree(plan, ca, cb)) != t)
						continue;
					emit_groups(&st, items, starts,
								find_group(items, starts, ngroups, ca),
								find_group(items, starts, ngroups, cb), d);
				}
				add_work(&st, end - a - 1);
			}
			i = end;
		}
	}
	return st.emitted;
}
