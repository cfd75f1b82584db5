/*
 * Pairs as the all-pairs tests check them (test_allpairs.c, and the fuzzer
 * fuzz_allpairs.c): the brute-force answer for two rows, and the order in
 * which two lists of pairs are sorted to be compared.
 */
#ifndef ND_PAIR_CHECK_H
#define ND_PAIR_CHECK_H

#include <stdint.h>

#include "nd_allpairs.h"

typedef struct pair
{
	int64_t		a,
				b;
	int			d;
} pair;

static int
pair_cmp(const void *x, const void *y)
{
	const pair *p = x,
			   *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return p->d - q->d;
}

/*
 * Are two rows a pair within k, as the core reports it (distinct ids,
 * id_a < id_b)?  If so, *out is that pair.
 */
static inline int
pair_of(const nd_pair_item *x, const nd_pair_item *y, int k, pair *out)
{
	int			d = __builtin_popcountll(x->code ^ y->code);

	if (d > k || x->id == y->id)
		return 0;
	out->a = x->id < y->id ? x->id : y->id;
	out->b = x->id < y->id ? y->id : x->id;
	out->d = d;
	return 1;
}

#endif
