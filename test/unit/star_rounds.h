/*
 * The star contraction driven as the server drives it, with qsort in place
 * of the external sort (for test_star_contraction.c and
 * fuzz_star_contraction.c): contract() gives each id of the edges its
 * component's smallest id, in id order, and the number of rounds; check()
 * counts its mismatches against the disjoint sets (nd_unionfind.c).
 */
#ifndef ND_STAR_ROUNDS_H
#define ND_STAR_ROUNDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "nd_star_contraction.h"
#include "nd_unionfind.h"
#include "test_realloc.h"

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

#endif							/* ND_STAR_ROUNDS_H */
