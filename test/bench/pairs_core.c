/*
 * The all-pairs core alone, without PostgreSQL: n random 64-bit codes (and
 * optionally a share of planted near-duplicates), k and blocks as given;
 * prints seconds and pairs.  A fifth argument picks adversarial codes
 * instead: "int" (code = i, small integers cast to simhash64), "bitsV"
 * (random codes varying in only V scattered bit positions), "blockV" (V
 * random low bits: codes concentrated in the last block(s)) or "shardP"
 * (one partition of P of a block-sharded layout's first copy,
 * doc/scale-out.md: the top log2(P) bits zero, and only the first block's
 * table run, in spanning-edge mode, as simhash_shard_clusters does;
 * "shardPbB": the same for copy B, with m blocks of 64 / m bits).  simhash-py publishes its find_all for 1M
 * random hashes, 5 blocks, k = 3 (1.6 s on one core): the same setting
 * here is `pairs_core 1000000 3 5`.
 *
 *   cc -O2 -Isrc/core test/bench/pairs_core.c src/core/nd_allpairs.c \
 *      src/core/nd_permute.c -lm -o pairs_core
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nd_allpairs.h"
#include "../unit/splitmix.h"

static uint64_t rng_state = 42;

static uint64_t
rnd(void)
{
	return splitmix64_next(&rng_state);
}

static uint64_t npairs;

static void
count_pair(void *arg, int64_t a, int64_t b, int d)
{
	(void) arg;
	(void) a;
	(void) b;
	(void) d;
	npairs++;
}

int
main(int argc, char **argv)
{
	size_t		n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	int			k = argc > 2 ? atoi(argv[2]) : 3;
	int			m = argc > 3 ? atoi(argv[3]) : 0;
	double		planted = argc > 4 ? atof(argv[4]) : 0.0;
	const char *mode = argc > 5 ? argv[5] : "random";
	uint64_t	vary = 0;
	int			shard_bits = 0;
	int			shard_block = 1;
	nd_pair_item *items = malloc(n * sizeof(nd_pair_item));
	void	   *scratch = malloc(nd_allpairs_scratch_size(n));
	nd_pairs_plan plan;
	nd_pairs_sink sink = {count_pair, NULL, NULL, NULL};
	struct timespec t0,
				t1;

	if (strncmp(mode, "bits", 4) == 0)
	{
		/* V distinct bit positions, fixed by the seed */
		while (__builtin_popcountll(vary) < atoi(mode + 4))
			vary |= (uint64_t) 1 << (rnd() & 63);
	}
	else if (strncmp(mode, "block", 5) == 0)
		vary = ((uint64_t) 1 << atoi(mode + 5)) - 1;
	else if (strncmp(mode, "shard", 5) == 0)
	{
		while ((1 << shard_bits) < atoi(mode + 5))
			shard_bits++;
		if (strchr(mode, 'b') != NULL)
			shard_block = atoi(strchr(mode, 'b') + 1);
	}
	for (size_t i = 0; i < n; i++)
	{
		items[i].id = (int64_t) i;
		if (strcmp(mode, "int") == 0)
			items[i].code = (uint64_t) i;
		else if (vary != 0)
			items[i].code = (rnd() & vary) | (0x5A5A5A5A5A5A5A5AULL & ~vary);
		else if (i > 0 && (double) (rnd() % 1000000) < planted * 1e6)
		{
			uint64_t	c = items[rnd() % i].code;

			for (int f = (int) (rnd() % (k + 2)); f > 0; f--)
				c ^= (uint64_t) 1 << (rnd() & 63);
			items[i].code = c;
		}
		else
			items[i].code = rnd();
	}
	if (m <= 0)
		m = nd_pairs_auto_blocks(k, (double) n);
	/* the top bits of block shard_block zero */
	if (shard_bits > 0)
		for (size_t i = 0; i < n; i++)
			items[i].code &= ~((~(uint64_t) 0 >> (64 - shard_bits)) <<
							   (64 - (shard_block - 1) * (64 / m) - shard_bits));
	nd_pairs_plan_init(&plan, k, m);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (strncmp(mode, "shard", 5) == 0)
		nd_allpairs_edges_run(&plan, items, n, shard_block - 1, shard_block, scratch, &sink);
	else
		nd_allpairs_run(&plan, items, n, 0, plan.ntables, scratch, &sink);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("n=%zu k=%d blocks=%d tables=%d planted=%.2f codes=%s: %.3f s, %llu pairs\n",
		   n, k, m, plan.ntables, planted, mode,
		   (double) (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
		   (unsigned long long) npairs);
	return 0;
}
