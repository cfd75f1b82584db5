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

/* Buckets of the group index: the largest power of two <= n (at least 1). */
static size_t
index_buckets(size_t n)
{
	size_t		b = 1;

	while (b * 2 <= n && b < ((size_t) 1 << 30))
		b *= 2;
	return b;
}

size_t
nd_allpairs_scratch_size(size_t n)
{
	/*
	 * max(sort buffer 16n, permuted codes 2 * 8n + group starts 4(n+1)),
	 * then the group index's buckets
	 */
	return 16 * n + 4 * (n + 1) + 4 * (index_buckets(n) + 1) + 8;
}

/* Counts work and calls the tick callback every TICK_EVERY units. */
typedef struct run_state
{
	const nd_pairs_sink *sink;
	uint64_t	work;
	uint64_t	emitted;
	int			mode;			/* RUN_PAIRS, RUN_SPANNING or RUN_GROUPS */
} run_state;

#define RUN_PAIRS		0		/* every pair */
#define RUN_SPANNING	1		/* spanning edges */
#define RUN_GROUPS		2		/* pairs of distinct codes, as item positions */

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

/*
 * Sorting items by code (grouping identical codes, and nd_pair_items_sort):
 * a stable MSD radix sort, an 11-bit digit first and 8-bit digits below.
 * After the first pass a bucket of hash-like codes holds a few hundred
 * items, which the next pass sorts inside the cache; buckets of at most
 * ITEMS_SMALL items are finished by insertion.  An LSD sort would move
 * every item through memory once per digit, six times.
 */
#define ITEMS_SMALL 32

static void
insertion_sort_items(nd_pair_item *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
	{
		nd_pair_item x = a[i];
		size_t		j = i;

		while (j > 0 && a[j - 1].code > x.code)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

/*
 * Sorts the n items at cur, equal on the bits of their codes from `shift`
 * up, by code into out; out is cur or the same range of the other buffer,
 * other is the range of the buffer cur is not in.  The buffers alternate
 * with the levels; each leaf lands in out.
 */
static void
msd_sort_items(nd_pair_item *cur, nd_pair_item *other, nd_pair_item *out,
			   size_t n, int shift, run_state *st)
{
	uint32_t	count[RADIX_SIZE];
	int			width,
				lo;
	uint64_t	mask;
	size_t		off;

	for (;;)
	{
		if (n <= ITEMS_SMALL || shift == 0)
		{
			insertion_sort_items(cur, n);
			if (cur != out)
				memcpy(out, cur, n * sizeof(nd_pair_item));
			return;
		}
		width = shift == 64 ? RADIX_BITS : (shift < 8 ? shift : 8);
		lo = shift - width;
		mask = ((uint64_t) 1 << width) - 1;
		memset(count, 0, sizeof(uint32_t) << width);
		for (size_t i = 0; i < n; i++)
			count[(cur[i].code >> lo) & mask]++;
		add_work(st, n);
		/* a digit that is the same everywhere does not reorder anything */
		if (count[(cur[0].code >> lo) & mask] != n)
			break;
		shift = lo;
	}

	off = 0;
	for (size_t v = 0; v <= mask; v++)
	{
		uint32_t	c = count[v];

		count[v] = (uint32_t) off;
		off += c;
	}
	for (size_t i = 0; i < n; i++)
		other[count[(cur[i].code >> lo) & mask]++] = cur[i];
	add_work(st, n);

	/* count[v] is now the end of bucket v */
	off = 0;
	for (size_t v = 0; v <= mask; v++)
	{
		size_t		end = count[v];

		if (end > off)
			msd_sort_items(other + off, cur + off, out + off, end - off, lo, st);
		off = end;
	}
}

static void
sort_items(nd_pair_item *items, nd_pair_item *tmp, size_t n, run_state *st)
{
	if (n < 2)
		return;
	msd_sort_items(items, tmp, items, n, 64, st);
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

/*
 * popcount(x) <= k, by clearing the lowest set bit k times: a few
 * instructions without a popcount instruction (the default x86-64 target
 * has none, and __builtin_popcountll becomes a library call), and most
 * comparisons in a run fail it.
 */
static inline int
within_k(uint64_t x, int k)
{
	/* no early exit: a fixed trip count predicts well, 0 stays 0 */
	for (int i = 0; i < k; i++)
		x &= x - 1;
	return x == 0;
}

/*
 * Which group a code is: its top bits pick a bucket of the groups (sorted
 * by code) with those bits, and a binary search runs inside the bucket.
 * With 2^bits close to the number of groups, a bucket of hash-like codes
 * holds about one group, so a lookup costs a cache miss or two instead of
 * a binary search over every group; low-entropy codes share a few buckets
 * and cost what a plain binary search costs.
 */
typedef struct group_index
{
	const nd_pair_item *items;
	const uint32_t *starts;		/* group g: items[starts[g] .. starts[g+1]) */
	size_t		ngroups;
	const uint32_t *bucket;		/* groups of bucket v: [bucket[v], bucket[v+1]) */
	int			shift;			/* bucket of a code: code >> shift (64: all in 0) */
} group_index;

static void
group_index_build(group_index *gi, uint32_t *bucket, size_t max_buckets)
{
	size_t		nb = 1;
	int			bits = 0;
	size_t		g = 0;

	while (nb * 2 <= gi->ngroups && nb * 2 <= max_buckets)
	{
		nb *= 2;
		bits++;
	}
	gi->shift = 64 - bits;
	for (size_t v = 0; v < nb; v++)
	{
		while (g < gi->ngroups &&
			   (bits == 0 ? 0 : gi->items[gi->starts[g]].code >> gi->shift) < v)
			g++;
		bucket[v] = (uint32_t) g;
	}
	bucket[nb] = (uint32_t) gi->ngroups;
	gi->bucket = bucket;
}

static size_t
find_group(const group_index *gi, uint64_t code)
{
	size_t		v = gi->shift == 64 ? 0 : (size_t) (code >> gi->shift);
	size_t		lo = gi->bucket[v],
				hi = gi->bucket[v + 1];
	const nd_pair_item *items = gi->items;
	const uint32_t *starts = gi->starts;

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

/*
 * Groups ga and gb are within distance: every pair of their rows, or in
 * spanning mode one edge between their first rows (each group's other rows
 * hang off its first row already).
 */
static void
emit_groups(run_state *st, const group_index *gi, size_t ga, size_t gb, int dist)
{
	const nd_pair_item *items = gi->items;
	const uint32_t *starts = gi->starts;

	if (st->mode == RUN_SPANNING)
	{
		emit_pair(st, items[starts[ga]].id, items[starts[gb]].id, dist);
		return;
	}
	if (st->mode == RUN_GROUPS)
	{
		/* positions, not ids: the caller expands the two groups */
		st->sink->emit(st->sink->arg, starts[ga], starts[gb], dist);
		st->emitted++;
		add_work(st, 1);
		return;
	}
	for (uint32_t i = starts[ga]; i < starts[ga + 1]; i++)
		for (uint32_t j = starts[gb]; j < starts[gb + 1]; j++)
			emit_pair(st, items[i].id, items[j].id, dist);
}

/*
 * Long runs: sub-tables (Manku et al.'s nested permutations).
 *
 * A run of table t holds distinct codes that agree on t's leading blocks;
 * scanning it costs L^2/2 comparisons, which is what low-entropy codes
 * (small integers, codes varying in a few bits or in one block) produce.
 * A run longer than SPLIT_MIN_RUN is split instead.  Let V be the bits on
 * which its codes are not all equal.  A pair of the run within distance k
 * differs only inside V, in at most k bits; cut V into k + 1 disjoint
 * non-empty sub-blocks (needs |V| > k), and by pigeonhole the pair agrees on
 * at least one of them.  Sub-table j sorts the run by sub-block j and
 * handles each sub-run of equal sub-block j the same way, recursively (its
 * own V excludes sub-block j, so the depth is below 64).
 *
 * Exactly once: a level reports a pair only from the sub-table of the
 * *first* sub-block the pair agrees on (checked when the pair is emitted,
 * for every level above it, like the first-table rule for tables).  By
 * induction on the depth, processing a run reports every pair of the run
 * within k that passes the checks of the levels above exactly once: a scan
 * looks at each pair once; a split sends the pair to one sub-run of its
 * first agreeing sub-block j* (it agrees on it, so it is in one sub-run
 * there), where it passes the new check, and in any other sub-table j it is
 * either in no common sub-run (j < j*: it differs on sub-block j) or fails
 * the check (j > j*).  The table-level rule (first table = t) is checked at
 * emission as before, so across tables nothing changes.
 *
 * Pruning, which is what makes the split pay on low-entropy codes: a run in
 * which no pair can pass is skipped whole.  At the table level: let A be
 * the blocks on which the whole run agrees (A contains t's leading blocks
 * `lead`); if the s lowest blocks of A are not `lead`, some block x not in
 * `lead` lies below lead's highest block, every pair's agreement mask
 * contains x and lead, so its s lowest blocks are not `lead` and its first
 * table is not t.  At a sub-level: if the whole sub-run agrees on a
 * sub-block that comes before the chosen one (at any level), every pair
 * fails that level's check.
 *
 * Memory: none beyond the core's scratch.  The run is turned back into
 * (unpermuted) codes in place in the sorted array, and the table's other
 * sort buffer, free while runs are scanned, is the sub-sorts' buffer; each
 * sub-sort sorts its range in place, which reorders nothing outside it.
 */
#define SPLIT_MIN_RUN 256
#define MAX_LEVELS 64

typedef struct sub_level
{
	int			chosen;			/* sub-table being processed */
	uint64_t	sub[ND_ALLPAIRS_MAX_DISTANCE + 1];	/* sub-block bit masks */
} sub_level;

typedef struct table_scan
{
	run_state  *st;
	const nd_pairs_plan *plan;
	const nd_pairs_table *tab;
	const group_index *gi;
	uint64_t   *tmp;			/* sub-sort buffer, >= any run */
	uint64_t	block_mask[ND_PERMUTE_MAX_BLOCKS];	/* block b's bits */
	int			depth;
	sub_level	level[MAX_LEVELS];
} table_scan;

/* Passes the checks of every sub-level: x = a ^ b. */
static inline int
levels_pass(const table_scan *ts, uint64_t x)
{
	for (int l = 0; l < ts->depth; l++)
		for (int j = 0; j < ts->level[l].chosen; j++)
			if ((x & ts->level[l].sub[j]) == 0)
				return 0;
	return 1;
}

/*
 * A candidate pair of distinct codes: report it if it is this table's.
 * *ga caches ca's group (SIZE_MAX: not looked up yet): the binary search
 * over the groups costs cache misses, once per reported pair otherwise.
 */
static inline void
consider(table_scan *ts, uint64_t ca, uint64_t cb, size_t *ga)
{
	uint64_t	x = ca ^ cb;

	if (!within_k(x, ts->plan->k) || !levels_pass(ts, x))
		return;
	if (nd_pairs_first_table(ts->plan, nd_pairs_agree(ts->plan, ca, cb)) != ts->tab->index)
		return;
	if (*ga == SIZE_MAX)
		*ga = find_group(ts->gi, ca);
	emit_groups(ts->st, ts->gi, *ga, find_group(ts->gi, cb),
				__builtin_popcountll(x));
}

/* LSD radix sort of codes[0..n) by (code & mask), in place. */
static void
sort_masked(uint64_t *codes, uint64_t *tmp, size_t n, uint64_t mask, run_state *st)
{
	uint32_t	count[RADIX_SIZE];
	uint64_t   *src = codes,
			   *dst = tmp;

	for (int shift = 0; shift < 64; shift += RADIX_BITS)
	{
		uint64_t	dmask = (mask >> shift) & RADIX_MASK;
		uint32_t	sum = 0;

		if (dmask == 0)
			continue;
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & dmask]++;
		for (int v = 0; v < RADIX_SIZE; v++)
		{
			uint32_t	c = count[v];

			count[v] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & dmask]++] = src[i];
		{
			uint64_t   *t = src;

			src = dst;
			dst = t;
		}
		add_work(st, 2 * n);
	}
	if (src != codes)
		memcpy(codes, src, n * sizeof(uint64_t));
}

static void process_run(table_scan *ts, uint64_t *codes, size_t n);

/* Processes every run of codes[0..n) equal under mask m. */
static void
process_runs(table_scan *ts, uint64_t *codes, size_t n, uint64_t m)
{
	size_t		i = 0;

	while (i < n)
	{
		size_t		end = i + 1;

		while (end < n && ((codes[end] ^ codes[i]) & m) == 0)
			end++;
		if (end - i >= 2)
			process_run(ts, codes + i, end - i);
		i = end;
	}
}

/*
 * A whole table's sub-table j in one pass: the table's codes come sorted by
 * its key, so a stable counting sort by sub-block j alone, from `from` into
 * `to`, leaves every run of codes equal on key and sub-block contiguous
 * (ordered by sub-block, then key), and `from` still sorted for the next
 * sub-table -- instead of a radix sort by key and sub-block, three or four
 * passes.  Only for a sub-block of at most two segments of consecutive
 * bits (a sub-block cut across the table's leading block has two), at most
 * SUB_BLOCK_MAX_BITS wide: SUB_NOT_SORTED if that does not apply;
 * SUB_SORTED_LONG_RUN if some run of `to` is long enough to be split
 * (process_run will need a buffer: the caller gives it `from`).
 */
#define SUB_BLOCK_MAX_BITS 14
#define SUB_NOT_SORTED		0
#define SUB_SORTED			1
#define SUB_SORTED_LONG_RUN	2

/* A sub-block as at most two segments of consecutive bits. */
typedef struct sub_digit
{
	int			shift_hi,
				shift_lo,
				width_lo;
	uint64_t	mask_hi,
				mask_lo;
} sub_digit;

/* The value of the sub-block's bits, packed: distinct for distinct values. */
static inline uint32_t
sub_value(const sub_digit *d, uint64_t x)
{
	return (uint32_t) ((((x >> d->shift_hi) & d->mask_hi) << d->width_lo) |
					   ((x >> d->shift_lo) & d->mask_lo));
}

static int
sort_by_sub_block(const uint64_t *from, uint64_t *to, size_t n, uint64_t sub,
				  uint64_t m, run_state *st)
{
	uint32_t	count[1 << SUB_BLOCK_MAX_BITS];
	sub_digit	d = {0, 0, 0, 0, 0};
	int			width;
	uint64_t	lo,
				hi;
	uint32_t	sum = 0;
	size_t		i = 0;
	int			long_run = 0;

	if (sub == 0)
		return SUB_NOT_SORTED;
	width = __builtin_popcountll(sub);
	if (width > SUB_BLOCK_MAX_BITS)
		return SUB_NOT_SORTED;
	/* the lowest segment, then what is left must be one more */
	d.shift_lo = __builtin_ctzll(sub);
	lo = sub >> d.shift_lo;
	d.width_lo = __builtin_ctzll(~lo);
	d.mask_lo = ((uint64_t) 1 << d.width_lo) - 1;
	hi = sub & ~(d.mask_lo << d.shift_lo);
	if (hi != 0)
	{
		d.shift_hi = __builtin_ctzll(hi);
		if ((hi >> d.shift_hi) != ((uint64_t) 1 << (width - d.width_lo)) - 1)
			return SUB_NOT_SORTED;
		d.mask_hi = ((uint64_t) 1 << (width - d.width_lo)) - 1;
	}
	memset(count, 0, sizeof(uint32_t) << width);
	for (i = 0; i < n; i++)
		count[sub_value(&d, from[i])]++;
	for (size_t v = 0; v < ((size_t) 1 << width); v++)
	{
		uint32_t	c = count[v];

		count[v] = sum;
		sum += c;
	}
	for (i = 0; i < n; i++)
		to[count[sub_value(&d, from[i])]++] = from[i];
	add_work(st, 2 * n);

	for (i = 0; i < n && !long_run;)
	{
		size_t		end = i + 1;

		while (end < n && ((to[end] ^ to[i]) & m) == 0)
			end++;
		long_run = end - i > SPLIT_MIN_RUN;
		i = end;
	}
	return long_run ? SUB_SORTED_LONG_RUN : SUB_SORTED;
}

/*
 * Splits codes[0..n) into k + 1 sub-tables (see above): vary's bits are cut
 * into k + 1 sub-blocks of consecutive bits, and sub-table j handles each
 * sub-run of codes equal on `fixed` and on sub-block j.  The codes of a run
 * are equal outside vary already (fixed 0); a whole table's codes are
 * equal on nothing, so there `fixed` is the table's leading blocks.
 */
static void
split_codes(table_scan *ts, uint64_t *codes, size_t n, uint64_t vary, uint64_t fixed)
{
	int			k = ts->plan->k;
	int			nv = __builtin_popcountll(vary);
	sub_level  *lv = &ts->level[ts->depth];
	int			b = 63;
	uint64_t   *tmp = ts->tmp;
	uint64_t   *cur = codes,
			   *other = tmp;

	/* a whole table comes sorted by its key (see sort_by_sub_block) */
	int			lead_sorted = fixed != 0;
	int			sorted;

	for (int j = 0; j <= k; j++)
	{
		int			want = nv / (k + 1) + (j < nv % (k + 1) ? 1 : 0);

		lv->sub[j] = 0;
		while (want > 0)
		{
			if ((vary >> b) & 1)
			{
				lv->sub[j] |= (uint64_t) 1 << b;
				want--;
			}
			b--;
		}
	}

	ts->depth++;
	for (int j = 0; j <= k; j++)
	{
		uint64_t	m = lv->sub[j] | fixed;

		lv->chosen = j;
		sorted = lead_sorted ? sort_by_sub_block(cur, other, n, lv->sub[j], m, ts->st)
			: SUB_NOT_SORTED;
		if (sorted == SUB_SORTED)
		{
			/*
			 * runs in `other`, none long enough to split: cur stays sorted.
			 * ts->tmp is `other` here, which is safe only because
			 * process_run splits exactly the runs sort_by_sub_block calls
			 * long (n > SPLIT_MIN_RUN): change both together.
			 */
			process_runs(ts, other, n, m);
			continue;
		}
		if (sorted == SUB_SORTED_LONG_RUN)
		{
			/* `other` is grouped already; cur becomes the sub-sorts' buffer */
			uint64_t   *t = cur;

			cur = other;
			other = t;
			lead_sorted = 0;
		}
		else
		{
			sort_masked(cur, other, n, m, ts->st);
			lead_sorted = 0;
		}
		ts->tmp = other;
		process_runs(ts, cur, n, m);
	}
	ts->tmp = tmp;
	ts->depth--;
}

static void
process_run(table_scan *ts, uint64_t *codes, size_t n)
{
	const nd_pairs_plan *plan = ts->plan;
	int			k = plan->k;
	uint64_t	vary = 0;
	int			nv,
				b;

	for (size_t i = 1; i < n; i++)
		vary |= codes[i] ^ codes[0];
	add_work(ts->st, n);

	/*
	 * prune: no pair of this run can be reported here (see above); the
	 * table-level test holds at every depth, as every sub-run agrees on the
	 * table's leading blocks
	 */
	{
		uint32_t	agree = 0;

		for (b = 0; b < plan->nblocks; b++)
			if ((vary & ts->block_mask[b]) == 0)
				agree |= (uint32_t) 1 << b;
		if (lowest_bits(agree, plan->nlead) != ts->tab->lead)
			return;
	}
	for (int l = 0; l < ts->depth; l++)
		for (int j = 0; j < ts->level[l].chosen; j++)
			if ((vary & ts->level[l].sub[j]) == 0)
				return;

	nv = __builtin_popcountll(vary);
	/* the same test as sort_by_sub_block's long runs: see split_codes */
	if (n <= SPLIT_MIN_RUN || nv <= k || ts->depth == MAX_LEVELS)
	{
		/*
		 * Scan.  With nv <= k every pair is within k: the output is as large
		 * as the scan.
		 */
		for (size_t a = 0; a + 1 < n; a++)
		{
			size_t		ga = SIZE_MAX;

			for (size_t c = a + 1; c < n; c++)
				consider(ts, codes[a], codes[c], &ga);
			add_work(ts->st, n - a - 1);
		}
		return;
	}

	split_codes(ts, codes, n, vary, 0);
}

/*
 * Whether table t is better split whole (split_codes with the leading
 * blocks fixed) than scanned run by run: when its runs are long on
 * average.  That is the case of a plan narrower than the data calls for,
 * such as the one table of a block-sharded copy (simhash_shard_clusters:
 * 16-bit keys over a range of a sixteenth of their values), where runs of
 * a hundred or more distinct codes would each be scanned pairwise.  A
 * split sorts the table k + 1 more times, each by its key and a sub-block
 * of the other bits: a few radix passes per code and sub-table instead of
 * the run's comparisons.  *vary (permuted): the bits outside the key on
 * which the table's codes are not all equal; more than k are needed.
 */
#define WHOLE_SPLIT_MIN_COMPARISONS 32.0

static int
whole_split_pays(table_scan *ts, const uint64_t *sorted, size_t n, uint64_t *vary)
{
	const nd_pairs_table *tab = ts->tab;
	uint64_t	rest = tab->keybits >= 64 ? 0 : ~(uint64_t) 0 >> tab->keybits;
	double		comparisons = 0;
	uint64_t	v = 0;
	size_t		i = 0;

	if (rest == 0 || n < 2)
		return 0;
	while (i < n)
	{
		uint64_t	key = nd_pairs_key(tab, sorted[i]);
		size_t		end = i + 1;

		while (end < n && nd_pairs_key(tab, sorted[end]) == key)
			end++;
		/* longer runs are split anyway */
		if (end - i <= SPLIT_MIN_RUN)
			comparisons += 0.5 * (double) (end - i) * (double) (end - i - 1);
		i = end;
	}
	for (i = 1; i < n; i++)
		v |= (sorted[i] ^ sorted[0]) & rest;
	add_work(ts->st, 2 * n);
	*vary = v;
	return comparisons > WHOLE_SPLIT_MIN_COMPARISONS * (double) n &&
		__builtin_popcountll(v) > ts->plan->k;
}

static uint64_t
allpairs_run(const nd_pairs_plan *plan, nd_pair_item *items, size_t n,
			 int t_begin, int t_end, void *scratch, const nd_pairs_sink *sink,
			 int mode)
{
	run_state	st = {sink, 0, 0, mode};
	uint64_t   *perm = (uint64_t *) scratch;
	uint64_t   *ptmp = perm + n;
	uint32_t   *starts = (uint32_t *) (ptmp + n);
	uint32_t   *bucket = starts + n + 1;
	size_t		ngroups = 0;
	group_index gi;
	uint32_t	lead;
	table_scan	ts;
	uint64_t	vary;

	if (n == 0)
		return 0;

	/* group identical codes; the sort buffer overlaps perm and ptmp */
	sort_items(items, (nd_pair_item *) scratch, n, &st);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || items[i].code != items[i - 1].code)
			starts[ngroups++] = (uint32_t) i;
	starts[ngroups] = (uint32_t) n;

	/*
	 * Distance-0 pairs inside each group, reported as table 0's; in spanning
	 * mode a star around the group's first row: linear in the group.
	 */
	if (t_begin == 0 && mode != RUN_GROUPS)
	{
		for (size_t g = 0; g < ngroups; g++)
			for (uint32_t i = starts[g]; i < starts[g + 1]; i++)
				for (uint32_t j = i + 1; j < starts[g + 1]; j++)
				{
					if (mode == RUN_SPANNING && i != starts[g])
						break;
					emit_pair(&st, items[i].id, items[j].id, 0);
				}
	}

	/* distinct codes are at least 1 apart */
	if (plan->k == 0 || ngroups < 2)
		return st.emitted;

	gi.items = items;
	gi.starts = starts;
	gi.ngroups = ngroups;
	group_index_build(&gi, bucket, index_buckets(n));
	add_work(&st, ngroups);

	ts.st = &st;
	ts.plan = plan;
	ts.gi = &gi;
	ts.depth = 0;
	for (int b = 0; b < plan->nblocks; b++)
	{
		int			wd = plan->layout.width[b];

		ts.block_mask[b] = (wd >= 64 ? ~(uint64_t) 0 : ((uint64_t) 1 << wd) - 1) <<
			(64 - plan->layout.start[b] - wd);
	}

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
		ts.tab = &tab;
		/* the other buffer is free while the runs are scanned */
		ts.tmp = sorted == perm ? ptmp : perm;

		if (whole_split_pays(&ts, sorted, ngroups, &vary))
		{
			uint64_t	lead_bits = 0;

			/* back to codes, in place, and the table split as one run */
			for (size_t g = 0; g < ngroups; g++)
				sorted[g] = nd_pairs_unpermute(&tab, sorted[g]);
			add_work(&st, ngroups);
			for (int b = 0; b < plan->nblocks; b++)
				if ((lead >> b) & 1)
					lead_bits |= ts.block_mask[b];
			split_codes(&ts, sorted, ngroups, nd_pairs_unpermute(&tab, vary), lead_bits);
			continue;
		}

		for (i = 0; i < ngroups;)
		{
			uint64_t	key = nd_pairs_key(&tab, sorted[i]);
			size_t		end = i + 1;

			while (end < ngroups && nd_pairs_key(&tab, sorted[end]) == key)
				end++;
			if (end - i > SPLIT_MIN_RUN)
			{
				/* back to codes, in place: this range is not read again */
				for (size_t a = i; a < end; a++)
					sorted[a] = nd_pairs_unpermute(&tab, sorted[a]);
				process_run(&ts, sorted + i, end - i);
				i = end;
				continue;
			}
			for (size_t a = i; a + 1 < end; a++)
			{
				uint64_t	pa = sorted[a];

				for (size_t b = a + 1; b < end; b++)
				{
					uint64_t	x = pa ^ sorted[b];
					uint64_t	ca,
								cb;

					if (!within_k(x, plan->k))
						continue;
					ca = nd_pairs_unpermute(&tab, pa);
					cb = nd_pairs_unpermute(&tab, sorted[b]);
					if (nd_pairs_first_table(plan, nd_pairs_agree(plan, ca, cb)) != t)
						continue;
					emit_groups(&st, &gi, find_group(&gi, ca), find_group(&gi, cb),
								__builtin_popcountll(x));
				}
				add_work(&st, end - a - 1);
			}
			i = end;
		}
	}
	return st.emitted;
}

uint64_t
nd_allpairs_run(const nd_pairs_plan *plan, nd_pair_item *items, size_t n,
				int t_begin, int t_end, void *scratch, const nd_pairs_sink *sink)
{
	return allpairs_run(plan, items, n, t_begin, t_end, scratch, sink, RUN_PAIRS);
}

uint64_t
nd_allpairs_edges_run(const nd_pairs_plan *plan, nd_pair_item *items, size_t n,
					  int t_begin, int t_end, void *scratch, const nd_pairs_sink *sink)
{
	return allpairs_run(plan, items, n, t_begin, t_end, scratch, sink, RUN_SPANNING);
}

uint64_t
nd_allpairs_groups_run(const nd_pairs_plan *plan, nd_pair_item *items, size_t n,
					   int t_begin, int t_end, void *scratch, const nd_pairs_sink *sink)
{
	return allpairs_run(plan, items, n, t_begin, t_end, scratch, sink, RUN_GROUPS);
}

/* End of the group of identical codes that starts at position p. */
static size_t
group_end(const nd_pair_item *items, size_t n, size_t p)
{
	size_t		e = p + 1;

	while (e < n && items[e].code == items[p].code)
		e++;
	return e;
}

/*
 * The pairs of one run, expanded from its groups of identical codes and
 * the pairs of groups the core found (nd_allpairs_groups_run), one pair
 * per call.
 */
void
nd_pair_expander_init(nd_pair_expander *ex, const nd_pair_item *items, size_t n,
					  int with_groups)
{
	memset(ex, 0, sizeof(*ex));
	ex->items = items;
	ex->n = n;
	ex->phase = with_groups ? 0 : 1;
	/* phase 0 starts before the pair (0, 1); phase 1 waits for groups */
	if (with_groups)
		ex->a_end = group_end(items, n, 0);
}

void
nd_pair_expander_set_groups(nd_pair_expander *ex, uint32_t pos_a, uint32_t pos_b, int dist)
{
	ex->phase = 1;
	ex->a = pos_a;
	ex->a_end = group_end(ex->items, ex->n, pos_a);
	ex->b_start = ex->b = pos_b;
	ex->b_end = group_end(ex->items, ex->n, pos_b);
	ex->dist = dist;
}

int
nd_pair_expander_next(nd_pair_expander *ex, int64_t *id_a, int64_t *id_b, int *dist)
{
	const nd_pair_item *items = ex->items;

	for (;;)
	{
		int64_t		x,
					y;

		if (ex->phase == 0)
		{
			/* within the groups of identical codes: (a, b), a < b < a_end */
			if (++ex->b >= ex->a_end)
			{
				if (++ex->a >= ex->n)
				{
					ex->phase = 1;
					ex->a = ex->a_end = 0;
					continue;
				}
				if (ex->a >= ex->a_end)
					ex->a_end = group_end(items, ex->n, ex->a);
				ex->b = ex->a + 1;
				if (ex->b >= ex->a_end)
					continue;
			}
			x = items[ex->a].id;
			y = items[ex->b].id;
			*dist = 0;
		}
		else
		{
			/* the product of two groups, row by row */
			if (ex->a >= ex->a_end)
				return 0;		/* the caller sets the next pair of groups */
			x = items[ex->a].id;
			y = items[ex->b].id;
			*dist = ex->dist;
			if (++ex->b >= ex->b_end)
			{
				ex->b = ex->b_start;
				ex->a++;
			}
		}
		if (x == y)
			continue;
		*id_a = x < y ? x : y;
		*id_b = x < y ? y : x;
		return 1;
	}
}

void
nd_pair_items_sort(nd_pair_item *items, size_t n, nd_pair_item *tmp)
{
	nd_pairs_sink quiet = {0};
	run_state	st = {&quiet, 0, 0, 0};

	sort_items(items, tmp, n, &st);
}
