/*
 * Unit tests of the star contraction (nd_star_contraction.c), driven as the
 * server drives it, with qsort in place of the external sort: on random
 * graphs, chains in increasing, decreasing and random id order, a giant
 * star whose centre has the largest id, cliques, repeated edges and
 * self-loops, the labels are the components' smallest ids (checked against
 * the disjoint sets, nd_unionfind.c), every node is labelled once, and the
 * rounds stay few (logarithmic on chains, where label propagation would
 * need as many rounds as the chain is long).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_star_contraction.h"
#include "nd_unionfind.h"
#include "splitmix.h"
#include "star_rounds.h"
#include "tap.h"

static uint64_t rng_state = 0x57a2c0de5eedf00dULL;

static uint64_t
rnd(void)
{
	return splitmix64_next(&rng_state);
}

int
main(void)
{
	enum
	{
		N = 20000
	};
	int64_t    *a = malloc(4 * N * sizeof(int64_t));
	int64_t    *b = malloc(4 * N * sizeof(int64_t));
	int64_t    *perm = malloc(N * sizeof(int64_t));
	int			rounds,
				bad;
	double		lg = log2((double) N);

	/* sparse random graphs over random 64-bit ids, below and past the giant component */
	for (int g = 0; g < 6; g++)
	{
		int			n = 3000;
		int			m = 400 + g * 600;
		int64_t		pool[3000];

		for (int i = 0; i < n; i++)
			pool[i] = (int64_t) rnd();
		pool[0] = INT64_MIN;
		pool[1] = INT64_MAX;
		pool[2] = 0;
		for (int e = 0; e < m; e++)
		{
			a[e] = pool[rnd() % n];
			b[e] = pool[rnd() % n];
		}
		bad = check(a, b, m, &rounds);
		ok(bad == 0, "random graph %d (%d ids, %d edges, extreme ids): labels are the smallest ids of the components (%d rounds)",
		   g, n, m, rounds);
	}

	/* chains: label propagation would take N rounds; contraction O(log^2 N), measured */
	for (int i = 0; i < N - 1; i++)
	{
		a[i] = i;
		b[i] = i + 1;
	}
	bad = check(a, b, N - 1, &rounds);
	ok(bad == 0, "chain 0-1-...-%d in increasing order: one component named 0", N - 1);
	ok(rounds <= 3 * lg, "increasing chain of %d: %d rounds <= 3 log2 n", N, rounds);

	for (int i = 0; i < N - 1; i++)
	{
		a[i] = N - i;
		b[i] = N - i - 1;
	}
	bad = check(a, b, N - 1, &rounds);
	ok(bad == 0, "chain in decreasing order: one component");
	ok(rounds <= 3 * lg, "decreasing chain of %d: %d rounds <= 3 log2 n", N, rounds);

	for (int i = 0; i < N; i++)
		perm[i] = i;
	for (int i = N - 1; i > 0; i--)
	{
		int			j = (int) (rnd() % (uint64_t) (i + 1));
		int64_t		t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int i = 0; i < N - 1; i++)
	{
		a[i] = perm[i];
		b[i] = perm[i + 1];
	}
	bad = check(a, b, N - 1, &rounds);
	ok(bad == 0, "chain through random ids: one component");
	ok(rounds <= 3 * lg, "random chain of %d: %d rounds <= 3 log2 n", N, rounds);

	/* a giant star around the largest id, and a group given as a star around its first id */
	for (int i = 0; i < N; i++)
	{
		a[i] = 1000000;
		b[i] = 1000 + i;
	}
	bad = check(a, b, N, &rounds);
	ok(bad == 0, "star of %d leaves around the largest id: all named by the smallest leaf (%d rounds)",
	   N, rounds);

	/* two cliques joined by one edge, with every edge repeated and self-loops */
	{
		size_t		m = 0;

		for (int c = 0; c < 2; c++)
			for (int i = 0; i < 40; i++)
				for (int j = 0; j < 40; j++)
				{
					a[m] = c * 100 + i;
					b[m] = c * 100 + j;
					m++;
				}
		a[m] = 139;
		b[m] = 7;
		m++;
		a[m] = 500;
		b[m] = 501;
		m++;
		bad = check(a, b, m, &rounds);
		ok(bad == 0, "two cliques joined by one edge, repeated edges and self-loops, a separate pair: two components and the pair");
	}

	/* overlapping groups as dedup_clusters reads them: stars around each group's first id */
	{
		size_t		m = 0;

		for (int g = 0; g < 2000; g++)
		{
			int			size = 2 + (int) (rnd() % 8);
			int64_t		first = (int64_t) (rnd() % 30000);

			for (int k = 1; k < size; k++)
			{
				a[m] = first;
				b[m] = (int64_t) (rnd() % 30000);
				m++;
			}
		}
		bad = check(a, b, m, &rounds);
		ok(bad == 0, "2,000 overlapping groups as stars: components match (%d rounds)", rounds);
	}

	/* nothing in, nothing out */
	bad = check(a, b, 0, &rounds);
	ok(bad == 0 && rounds == 1, "no edges: no labels, one round");

	free(a);
	free(b);
	free(perm);
	return tap_done();
}
