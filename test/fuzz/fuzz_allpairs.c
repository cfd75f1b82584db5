/*
 * libFuzzer harness for the all-pairs core: arbitrary codes (low-entropy,
 * duplicated, near each other, repeated ids) at arbitrary k and block
 * counts, reported three ways -- every pair, pairs of groups expanded by
 * nd_pair_expander (the streaming simhash_pairs), spanning edges -- and
 * checked against a brute-force double loop: the same multiset of pairs,
 * id_a < id_b, each edge a true pair.
 *
 * Input: byte 0 picks k (0 .. ND_ALLPAIRS_MAX_DISTANCE), byte 1 the block
 * count among the valid ones; then 4 bytes per row: a base code (one of 16
 * drawn from the input's first bytes, so that rows share codes and near
 * codes), up to two bit flips among few positions (so that many rows are
 * equal) and an id (byte 3, so ids repeat).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_allpairs.h"
#include "../unit/pair_check.h"

#define MAX_ROWS 512

static pair brute_pairs[MAX_ROWS * MAX_ROWS / 2],
			got_pairs[MAX_ROWS * MAX_ROWS / 2],
			group_pairs[MAX_ROWS * MAX_ROWS / 2];
static size_t nbrute,
			ngot,
			ngroups;
static nd_pair_item rows[MAX_ROWS],
			items[MAX_ROWS];
static uint64_t scratch_mem[(16 * MAX_ROWS + 4 * (MAX_ROWS + 1) + 4 * (4 * MAX_ROWS + 2) + 64) / 8 + 64];

static void
got_emit(void *arg, int64_t a, int64_t b, int d)
{
	(void) arg;
	if (!(a < b))
		abort();
	got_pairs[ngot].a = a;
	got_pairs[ngot].b = b;
	got_pairs[ngot].d = d;
	ngot++;
}

static void
group_emit(void *arg, int64_t a, int64_t b, int d)
{
	(void) arg;
	group_pairs[ngroups].a = a;
	group_pairs[ngroups].b = b;
	group_pairs[ngroups].d = d;
	ngroups++;
}

static void
same_as_brute(void)
{
	qsort(got_pairs, ngot, sizeof(pair), pair_cmp);
	if (ngot != nbrute || (ngot > 0 && memcmp(got_pairs, brute_pairs, ngot * sizeof(pair)) != 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nd_pairs_plan plan;
	nd_pairs_sink sink = {got_emit, NULL, NULL, NULL};
	nd_pairs_sink gsink = {group_emit, NULL, NULL, NULL};
	nd_pair_expander ex;
	uint64_t	base[16];
	size_t		n = 0;
	int			k,
				m,
				lo,
				d;
	int64_t		a,
				b;

	if (size < 2 + 16)
		return 0;
	k = data[0] % (ND_ALLPAIRS_MAX_DISTANCE + 1);
	lo = k + 1 < 2 ? 2 : k + 1;
	m = lo + data[1] % (ND_PERMUTE_MAX_BLOCKS - lo + 1);
	if (!nd_pairs_check(k, m))
		abort();
	/* 16 base codes from 16 bytes: each byte spread over the 64 bits */
	for (int i = 0; i < 16; i++)
		base[i] = (uint64_t) data[2 + i] * 0x0101010101010101ULL ^ ((uint64_t) i << (i * 3 % 61));
	for (size_t p = 18; p + 4 <= size && n < MAX_ROWS; p += 4, n++)
	{
		uint64_t	c = base[data[p] & 15];

		/* a flip in 3 of 4 rows, at one of 8 bits: many equal codes */
		if (data[p + 1] & 3)
			c ^= (uint64_t) 1 << (8 * ((data[p + 1] >> 2) & 7) + (data[p + 2] >> 5));
		if (data[p + 2] & 3)
			c ^= (uint64_t) 1 << (8 * ((data[p + 2] >> 2) & 7));
		rows[n].code = c;
		rows[n].id = data[p + 3];
	}

	nbrute = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (pair_of(&rows[i], &rows[j], k, &brute_pairs[nbrute]))
				nbrute++;
	qsort(brute_pairs, nbrute, sizeof(pair), pair_cmp);

	nd_pairs_plan_init(&plan, k, m);
	if (nd_allpairs_scratch_size(n) > sizeof(scratch_mem))
		abort();

	/* every pair */
	memcpy(items, rows, n * sizeof(nd_pair_item));
	ngot = 0;
	if (nd_allpairs_run(&plan, items, n, 0, plan.ntables, scratch_mem, &sink) != ngot)
		abort();
	same_as_brute();

	/* pairs of groups, expanded */
	memcpy(items, rows, n * sizeof(nd_pair_item));
	ngot = ngroups = 0;
	nd_allpairs_groups_run(&plan, items, n, 0, plan.ntables, scratch_mem, &gsink);
	nd_pair_expander_init(&ex, items, n, 1);
	for (size_t g = 0;; g++)
	{
		while (nd_pair_expander_next(&ex, &a, &b, &d))
			got_emit(NULL, a, b, d);
		if (g == ngroups)
			break;
		if (group_pairs[g].a < 0 || group_pairs[g].a >= (int64_t) n ||
			group_pairs[g].b < 0 || group_pairs[g].b >= (int64_t) n)
			abort();
		nd_pair_expander_set_groups(&ex, (uint32_t) group_pairs[g].a,
									(uint32_t) group_pairs[g].b, group_pairs[g].d);
	}
	same_as_brute();

	/* spanning edges: each one a true pair */
	memcpy(items, rows, n * sizeof(nd_pair_item));
	ngot = 0;
	nd_allpairs_edges_run(&plan, items, n, 0, plan.ntables, scratch_mem, &sink);
	for (size_t i = 0; i < ngot; i++)
		if (!bsearch(&got_pairs[i], brute_pairs, nbrute, sizeof(pair), pair_cmp))
			abort();
	return 0;
}
