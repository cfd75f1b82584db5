/*
 * libFuzzer harness for the star contraction (nd_star_contraction.c), run
 * as the server runs it (rounds of sorted edges until the components are
 * stars): arbitrary graphs over up to 256 ids, in any order, with repeats
 * and self-loops.  Aborts when an id's label is not its component's
 * smallest id (the disjoint sets, nd_unionfind.c, decide), when an id is
 * labelled twice or missed, or when the rounds do not end.
 *
 * Input: byte 0 picks how the 256 node numbers become ids (themselves,
 * reversed, scattered over all of int64 with its extremes, or few distinct
 * ids), then 2 bytes per edge (its two node numbers), at most 4,096 edges.
 */
#include <stdint.h>
#include <stdlib.h>

#include "nd_star_contraction.h"
#include "../unit/star_rounds.h"

#define MAX_EDGES 4096

static int64_t a[MAX_EDGES],
			b[MAX_EDGES];

static int64_t
node_id(uint8_t mode, uint8_t k)
{
	switch (mode & 3)
	{
		case 0:
			return k;
		case 1:
			return 255 - k;
		case 2:
			if (k == 0)
				return INT64_MIN;
			if (k == 255)
				return INT64_MAX;
			return (int64_t) ((uint64_t) k * 0x9E3779B97F4A7C15ULL);
		default:
			return k % 7;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t		m = 0;
	int			rounds;

	if (size < 1)
		return 0;
	for (size_t i = 1; i + 1 < size && m < MAX_EDGES; i += 2, m++)
	{
		a[m] = node_id(data[0], data[i]);
		b[m] = node_id(data[0], data[i + 1]);
	}
	if (check(a, b, m, &rounds) != 0 || rounds > 1000)
		abort();
	return 0;
}
