/*-------------------------------------------------------------------------
 *
 * nd_allpairs.h
 *		Every pair of 64-bit codes within Hamming distance k, with permuted
 *		sorted tables (Manku, Jain, Das Sarma, WWW 2007; the find_all of
 *		simhash-py), and the band keys that let a SQL join find the same
 *		pairs.
 *
 * The 64 bits are cut into m > k blocks (the layout of nd_permute.h).  Two
 * codes within distance k differ in at most k blocks, so they agree on at
 * least s = m - k.  There is one table per s-subset of the blocks (its
 * "leading" blocks; C(m, k) tables), in the order in which Gosper's hack
 * enumerates the subsets as bit masks, i.e. by increasing mask value.  In
 * table t every code is permuted so that t's leading blocks come first (the
 * key), the table is sorted by key, and codes are compared only within runs
 * of equal keys.
 *
 * A pair is reported only by the first table whose leading blocks it agrees
 * on.  The numerically smallest s-subset of a mask is its s lowest set bits,
 * so that table is the one whose leading mask is the s lowest blocks of the
 * pair's agreement mask: a test in O(s), with no set of reported pairs.
 *
 * Runs of more than a few hundred distinct codes (low-entropy input) are
 * split into sub-tables on the bits that vary inside the run, recursively,
 * with the same first-one rule; see nd_allpairs.c.  A table whose runs are
 * shorter but still long on average (a plan narrower than the data calls
 * for, such as one block-sharded copy's table) is split whole, the same
 * way, its key kept in every sub-table.
 *
 * Identical codes are grouped first and the tables hold each distinct code
 * once: a group of n copies costs one entry per table and its n(n-1)/2
 * distance-0 pairs are emitted directly, before any table.
 *
 * Plain C, no server headers, no allocation: the caller passes the memory.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_ALLPAIRS_H
#define ND_ALLPAIRS_H

#include <stddef.h>
#include <stdint.h>

#include "nd_permute.h"

#define ND_ALLPAIRS_MAX_DISTANCE (ND_PERMUTE_MAX_BLOCKS - 1)

/* One input row. */
typedef struct nd_pair_item
{
	uint64_t	code;
	int64_t		id;
} nd_pair_item;

typedef struct nd_pairs_plan
{
	int			k;				/* max distance */
	int			nblocks;		/* m */
	int			nlead;			/* s = m - k, blocks in a key */
	int			ntables;		/* C(m, k) */
	int			min_keybits;	/* narrowest key over the tables */
	nd_layout	layout;
} nd_pairs_plan;

/* One table: where its blocks go in the permuted code. */
typedef struct nd_pairs_table
{
	int			index;			/* table number, 0-based */
	uint32_t	lead;			/* bit b set: block b is a leading block */
	int			keybits;		/* width of the key: the leading blocks */
	int			nblocks;
	/* position i of the permuted code holds block block_of[i] */
	uint8_t		block_of[ND_PERMUTE_MAX_BLOCKS];
	uint8_t		src_shift[ND_PERMUTE_MAX_BLOCKS];	/* block's shift in the code */
	uint8_t		dst_shift[ND_PERMUTE_MAX_BLOCKS];	/* ... in the permuted code */
	uint64_t	bmask[ND_PERMUTE_MAX_BLOCKS];	/* block's width, as a mask */
} nd_pairs_table;

/*
 * Valid parameters: 0 <= k <= ND_ALLPAIRS_MAX_DISTANCE and
 * max(2, k + 1) <= m <= ND_PERMUTE_MAX_BLOCKS.
 */
extern int	nd_pairs_check(int k, int m);
extern void nd_pairs_plan_init(nd_pairs_plan *plan, int k, int m);

/* Leading-block mask of table 0, and of the table after `lead`. */
extern uint32_t nd_pairs_first_lead(const nd_pairs_plan *plan);
extern uint32_t nd_pairs_next_lead(uint32_t lead);
extern void nd_pairs_table_init(const nd_pairs_plan *plan, int index,
								uint32_t lead, nd_pairs_table *tab);

static inline uint64_t
nd_pairs_permute(const nd_pairs_table *tab, uint64_t code)
{
	uint64_t	p = 0;

	for (int i = 0; i < tab->nblocks; i++)
		p |= ((code >> tab->src_shift[i]) & tab->bmask[i]) << tab->dst_shift[i];
	return p;
}

static inline uint64_t
nd_pairs_unpermute(const nd_pairs_table *tab, uint64_t p)
{
	uint64_t	code = 0;

	for (int i = 0; i < tab->nblocks; i++)
		code |= ((p >> tab->dst_shift[i]) & tab->bmask[i]) << tab->src_shift[i];
	return code;
}

/* The key of a permuted code: its leading keybits bits. */
static inline uint64_t
nd_pairs_key(const nd_pairs_table *tab, uint64_t p)
{
	return tab->keybits >= 64 ? p : p >> (64 - tab->keybits);
}

/* Bit b set: the two codes are equal on block b. */
extern uint32_t nd_pairs_agree(const nd_pairs_plan *plan, uint64_t a, uint64_t b);

/*
 * The table that reports a pair with this agreement mask (see the header
 * comment), or -1 if the mask has fewer than s blocks.
 */
extern int	nd_pairs_first_table(const nd_pairs_plan *plan, uint32_t agree);

/*
 * Band key of a code in table tab: its key with the table number mixed in
 * (a bijection of the key for each table).  Part of the on-disk contract:
 * users may store these keys.
 */
extern int64_t nd_band_key(const nd_pairs_table *tab, uint64_t code);

/*
 * Blocks for an all-pairs run over n codes: the m minimising an estimate
 * of the work, ntables * (sort cost + expected comparisons per code),
 * where a table's expected run length is n / 2^min_keybits.
 */
extern int	nd_pairs_auto_blocks(int k, double n);

/*
 * Blocks for band keys, where the number of rows is unknown: the smallest
 * m whose narrowest key has at least ND_BAND_MIN_KEYBITS bits.
 */
#define ND_BAND_MIN_KEYBITS 24
extern int	nd_band_auto_blocks(int k);

/* Output and housekeeping of a run. */
typedef struct nd_pairs_sink
{
	/* a pair, id_a < id_b */
	void		(*emit) (void *arg, int64_t id_a, int64_t id_b, int dist);
	/* called every so often; may longjmp out (the core owns no memory) */
	void		(*tick) (void *arg);
	/* optional: table t is about to be scanned */
	void		(*table_start) (void *arg, int t);
	void	   *arg;
} nd_pairs_sink;

/* Bytes of scratch memory nd_allpairs_run needs for n items. */
extern size_t nd_allpairs_scratch_size(size_t n);

/*
 * Reports every pair of items[0..n) within distance plan->k whose first
 * table (see above) is in [t_begin, t_end), and, if t_begin == 0, every
 * pair of items with equal codes.  Pairs with equal ids are not reported.
 * items is reordered (sorted by code).  scratch: nd_allpairs_scratch_size(n)
 * bytes, 8-byte aligned.  n < 2^32.  Returns the number of pairs emitted.
 *
 * A caller that splits the input into batches must keep together every two
 * items whose table-t keys are equal, for each t it asks for.
 */
extern uint64_t nd_allpairs_run(const nd_pairs_plan *plan, nd_pair_item *items,
								size_t n, int t_begin, int t_end, void *scratch,
								const nd_pairs_sink *sink);

/*
 * Spanning edges, for connected components (simhash_clusters): the same
 * run, but instead of every pair it emits a set of edges whose connected
 * components are those of the full "within distance k" graph, of size
 * linear in the rows plus the pairs of *distinct* codes within k: each row
 * of a group of identical codes is tied to the group's first row (its
 * n - 1 edges only when t_begin == 0, as the distance-0 pairs are), and a
 * pair of distinct codes within k is one edge between the two groups'
 * first rows.  A group of 200,000 copies costs 199,999 edges instead of
 * 2*10^10 pairs.  Same batching contract as nd_allpairs_run.
 */
extern uint64_t nd_allpairs_edges_run(const nd_pairs_plan *plan, nd_pair_item *items,
									  size_t n, int t_begin, int t_end, void *scratch,
									  const nd_pairs_sink *sink);

/*
 * Pairs of groups, for a caller that hands out pairs one at a time
 * (simhash_pairs as a value-per-call function): the same run, but the
 * core reports neither the distance-0 pairs nor the rows of two groups; it
 * emits, once per pair of *distinct* codes within k whose first table is in
 * [t_begin, t_end), the positions in the sorted items of the two codes'
 * groups (their first rows) as id_a and id_b, in no particular order.  The
 * output is as small as the spanning edges; nd_pair_expander turns it back
 * into every pair, lazily.  items stay sorted by code afterwards.
 */
extern uint64_t nd_allpairs_groups_run(const nd_pairs_plan *plan, nd_pair_item *items,
									   size_t n, int t_begin, int t_end, void *scratch,
									   const nd_pairs_sink *sink);

/*
 * Every pair of a run from nd_allpairs_groups_run's output: first (if
 * with_groups, i.e. the run covered table 0) the distance-0 pairs inside
 * each group of identical codes, then the rows of each pair of groups the
 * caller sets.  Pairs come as nd_allpairs_run reports them: id_a < id_b,
 * equal ids skipped.  O(1) state; each call costs O(1) amortised, plus the
 * size of the groups when they are set.
 */
typedef struct nd_pair_expander
{
	const nd_pair_item *items;	/* sorted by code */
	size_t		n;
	int			phase;			/* 0: inside groups; 1: a pair of groups */
	int			dist;
	size_t		a,
				a_end,
				b,
				b_start,
				b_end;
} nd_pair_expander;

extern void nd_pair_expander_init(nd_pair_expander *ex, const nd_pair_item *items,
								  size_t n, int with_groups);
/* The rows of the groups at positions pos_a and pos_b, distance dist. */
extern void nd_pair_expander_set_groups(nd_pair_expander *ex, uint32_t pos_a,
										uint32_t pos_b, int dist);
/* The next pair: 1, or 0 when the groups set last (or the run) are done. */
extern int	nd_pair_expander_next(nd_pair_expander *ex, int64_t *id_a, int64_t *id_b,
								  int *dist);

/*
 * Sorts items by code (unsigned; a radix sort), tmp holding n items: for a
 * caller that needs rows grouped by some 64-bit key.  Stable: items with
 * equal codes keep their order.
 */
extern void nd_pair_items_sort(nd_pair_item *items, size_t n, nd_pair_item *tmp);

#endif							/* ND_ALLPAIRS_H */
