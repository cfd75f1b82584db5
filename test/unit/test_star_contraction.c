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
#include "tap.h"
#include "test_realloc.h"

static uint64_t rng_state = 0x57a2c0de5eedf00dULL;

static uint64_t
rnd(void)
{
	return splitmix64_next(&rng_state);
}

typedef struct EdgeList
{
	int64_t    *e;				/* pairs */
	size_t		n;
	size_t		cap;
} EdgeList;

static void
push(EdgeList *l, int64_t a, int64_t b)
{
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->e = realloc(l->e, l->cap * 2 * sizeof(int64_t));
	}
	l->e[2 * l->n] = a;
	l->e[2 * l->n + 1] = b;
	l->n++;
}

/* what the server's emit does: both directions into the next sort */
static void
emit_both(int64_t a, int64_t b, void *arg)
{
	push(arg, a, b);
	push(arg, b, a);
}

static int
cmp_pair(const void *x, const void *y)
{
	const int64_t *a = x,
			   *b = y;

	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	if (a[1] != b[1])
		return a[1] < b[1] ? -1 : 1;
	return 0;
}

typedef struct Labels
{
	int64_t    *id;
	int64_t    *cluster;
	size_t		n;
	int			out_of_order;
} Labels;

static void
take_label(int64_t id, int64_t cluster, void *arg)
{
	Labels	   *l = arg;

	if (l->n > 0 && l->id[l->n - 1] >= id)
		l->out_of_order++;
	l->id[l->n] = id;
	l->cluster[l->n] = cluster;
	l->n++;
}

/*
 * Components of the undirected edges (a[i], b[i]) by star contraction;
 * labels in id order.  Returns the number of rounds.
 */
static int
contract(const int64_t *a, const int64_t *b, size_t m, Labels *out)
{
	EdgeList	in = {0},
				next = {0};
	int			rounds = 0;
	nd_star_kind kind = ND_LARGE_STAR;
	nd_star_labels lab;

	for (size_t i = 0; i < m; i++)
		emit_both(a[i], b[i], &in);
	for (;;)
	{
		nd_star_round r;
		bool		stars;

		if (in.n > 0)
			qsort(in.e, in.n, 2 * sizeof(int64_t), cmp_pair);
		next.n = 0;
		nd_star_begin(&r, kind, emit_both, &next);
		for (size_t i = 0; i < in.n; i++)
			nd_star_edge(&r, in.e[2 * i], in.e[2 * i + 1]);
		stars = nd_star_end(&r);
		rounds++;
		{
			EdgeList	t = in;

			in = next;
			next = t;
		}
		if (stars)
			break;
		kind = kind == ND_LARGE_STAR ? ND_SMALL_STAR : ND_LARGE_STAR;
		if (rounds > 10000)
			break;
	}
	if (in.n > 0)
		qsort(in.e, in.n, 2 * sizeof(int64_t), cmp_pair);
	nd_star_labels_begin(&lab, take_label, out);
	for (size_t i = 0; i < in.n; i++)
		nd_star_labels_edge(&lab, in.e[2 * i], in.e[2 * i + 1]);
	nd_star_labels_end(&lab);
	free(in.e);
	free(next.e);
	return rounds;
}

static int
cmp_id(const void *x, const void *y)
{
	int64_t		a = *(const int64_t *) x,
				b = *(const int64_t *) y;

	return a < b ? -1 : a > b;
}

/*
 * Mismatches between the contraction's labels and the disjoint sets' over
 * the ids of the edges (self-loops add no node); *rounds set.
 */
static int
check(const int64_t *a, const int64_t *b, size_t m, int *rounds)
{
	int64_t    *ids = malloc(2 * m * sizeof(int64_t) + 1);
	size_t		n = 0;
	nd_unionfind uf;
	Labels		l;
	int			bad = 0;

	for (size_t i = 0; i < m; i++)
		if (a[i] != b[i])
		{
			ids[n++] = a[i];
			ids[n++] = b[i];
		}
	if (n > 0)
		qsort(ids, n, sizeof(int64_t), cmp_id);
	{
		size_t		k = 0;

		for (size_t i = 0; i < n; i++)
			if (k == 0 || ids[k - 1] != ids[i])
				ids[k++] = ids[i];
		n = k;
	}
	nd_uf_init(&uf, test_realloc, NULL);
	for (size_t i = 0; i < n; i++)
		nd_uf_add(&uf, ids[i]);
	for (size_t i = 0; i < m; i++)
		if (a[i] != b[i])
		{
			int64_t    *pa = bsearch(&a[i], ids, n, sizeof(int64_t), cmp_id);
			int64_t    *pb = bsearch(&b[i], ids, n, sizeof(int64_t), cmp_id);

			nd_uf_union(&uf, (uint32_t) (pa - ids), (uint32_t) (pb - ids));
		}

	l.id = malloc((n + 1) * sizeof(int64_t));
	l.cluster = malloc((n + 1) * sizeof(int64_t));
	l.n = 0;
	l.out_of_order = 0;
	*rounds = contract(a, b, m, &l);
	if (l.n != n || l.out_of_order)
		bad++;
	for (size_t i = 0; i < l.n && i < n; i++)
		if (l.id[i] != ids[i] || l.cluster[i] != nd_uf_label(&uf, (uint32_t) i))
			bad++;
	nd_uf_free(&uf);
	free(ids);
	free(l.id);
	free(l.cluster);
	return bad;
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
