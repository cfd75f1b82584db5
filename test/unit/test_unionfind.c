/*
 * Unit tests of the disjoint sets (nd_unionfind.c): on random graphs and on
 * planted chains and cliques the sets are the connected components (checked
 * against label propagation, a different algorithm), each set is named by
 * its smallest id, sizes add up, trees stay shallow, and a failing
 * allocator is reported rather than crashed on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_unionfind.h"
#include "splitmix.h"
#include "tap.h"
#include "test_realloc.h"

/* splitmix64: deterministic test data */
static uint64_t rng_state = 0x0c1a57e2a11d5eedULL;

static uint64_t
rnd(void)
{
	return splitmix64_next(&rng_state);
}

/* fails once *arg allocations have been made */
static void *
limited_realloc(void *ptr, size_t size, void *arg)
{
	int		   *left = arg;

	if (size == 0)
	{
		free(ptr);
		return NULL;
	}
	if (*left <= 0)
		return NULL;
	(*left)--;
	return realloc(ptr, size);
}

/*
 * Components by label propagation: every vertex starts with its own id and
 * takes the smaller label of an edge's ends until nothing changes.  Slow
 * (O(diameter * edges)) and obviously right.
 */
static void
components_naive(int n, const int64_t *ids, int m, const int *ea, const int *eb,
				 int64_t *label)
{
	bool		changed = true;

	for (int i = 0; i < n; i++)
		label[i] = ids[i];
	while (changed)
	{
		changed = false;
		for (int e = 0; e < m; e++)
		{
			int64_t		l = label[ea[e]] < label[eb[e]] ? label[ea[e]] : label[eb[e]];

			if (label[ea[e]] != l || label[eb[e]] != l)
			{
				label[ea[e]] = label[eb[e]] = l;
				changed = true;
			}
		}
	}
}

/* depth of i in its tree, without compressing */
static int
depth(const nd_unionfind *uf, uint32_t i)
{
	int			d = 0;

	while (uf->parent[i] != i)
	{
		i = uf->parent[i];
		d++;
	}
	return d;
}

/*
 * One graph: n vertices with distinct random ids (some negative), m edges
 * (random, plus the planted ones already in ea/eb[0..planted-1]).  Returns
 * the number of mismatches against the naive components.
 */
static int
check_graph(int n, int m, int planted, int *ea, int *eb, int64_t *ids,
			int *max_depth, int *sizes_ok)
{
	nd_unionfind uf;
	int64_t    *label = malloc(n * sizeof(int64_t));
	int			bad = 0;
	uint32_t   *count = calloc(n, sizeof(uint32_t));

	for (int e = planted; e < m; e++)
	{
		ea[e] = (int) (rnd() % n);
		eb[e] = (int) (rnd() % n);
	}
	components_naive(n, ids, m, ea, eb, label);

	nd_uf_init(&uf, test_realloc, NULL);
	for (int i = 0; i < n; i++)
		if (nd_uf_add(&uf, ids[i]) != (uint32_t) i)
			bad++;
	for (int e = 0; e < m; e++)
		nd_uf_union(&uf, ea[e], eb[e]);
	*max_depth = 0;
	for (int i = 0; i < n; i++)
	{
		int			d = depth(&uf, i);

		if (d > *max_depth)
			*max_depth = d;
	}
	for (int i = 0; i < n; i++)
	{
		if (nd_uf_label(&uf, i) != label[i])
			bad++;
		count[nd_uf_find(&uf, i)]++;
	}
	*sizes_ok = 1;
	for (int i = 0; i < n; i++)
		if (uf.parent[i] == (uint32_t) i && uf.size[i] != count[i])
			*sizes_ok = 0;
	nd_uf_free(&uf);
	free(label);
	free(count);
	return bad;
}

static void
random_ids(int n, int64_t *ids)
{
	/* distinct: a random odd multiplier is a bijection mod 2^64 */
	uint64_t	mul = rnd() | 1,
				add = rnd();

	for (int i = 0; i < n; i++)
		ids[i] = (int64_t) ((uint64_t) i * mul + add);
}

int
main(void)
{
	enum
	{
		N = 3000, M = 4000
	};
	int		   *ea = malloc(M * sizeof(int));
	int		   *eb = malloc(M * sizeof(int));
	int64_t    *ids = malloc(N * sizeof(int64_t));
	int			max_depth,
				sizes_ok,
				bad;

	/* sparse random graphs, around the giant-component threshold */
	for (int round = 0; round < 5; round++)
	{
		int			m = 500 + round * 700;

		random_ids(N, ids);
		bad = check_graph(N, m, 0, ea, eb, ids, &max_depth, &sizes_ok);
		ok(bad == 0, "random graph %d (%d vertices, %d edges): components and smallest ids match label propagation",
		   round, N, m);
		ok(sizes_ok, "random graph %d: set sizes are the component sizes", round);
		ok(max_depth <= 12, "random graph %d: trees stay shallow (depth %d <= log2 n)", round, max_depth);
	}

	/* planted: a chain 0-1-...-99 in reverse order, a clique on 100..119 */
	{
		int			p = 0;

		for (int i = 98; i >= 0; i--, p++)
		{
			ea[p] = i + 1;
			eb[p] = i;
		}
		for (int i = 100; i < 120; i++)
			for (int j = i + 1; j < 120; j++, p++)
			{
				ea[p] = j;
				eb[p] = i;
			}
		/* ids descending, so that the smallest id is the last vertex added */
		for (int i = 0; i < 200; i++)
			ids[i] = 1000 - i;
		bad = check_graph(200, p, p, ea, eb, ids, &max_depth, &sizes_ok);
		ok(bad == 0, "planted chain and clique only: components match");
		bad = check_graph(200, p + 50, p, ea, eb, ids, &max_depth, &sizes_ok);
		ok(bad == 0, "planted chain and clique plus random edges: components match");
		ok(sizes_ok, "planted: set sizes are the component sizes");
	}

	/* the smallest id, including negative and extreme ids */
	{
		nd_unionfind uf;
		uint32_t	a,
					b,
					c,
					d;

		nd_uf_init(&uf, test_realloc, NULL);
		a = nd_uf_add(&uf, 5);
		b = nd_uf_add(&uf, INT64_MAX);
		c = nd_uf_add(&uf, INT64_MIN);
		d = nd_uf_add(&uf, -7);
		ok(nd_uf_union(&uf, a, b), "union of two singletons merges");
		ok(!nd_uf_union(&uf, b, a), "union within one set does not");
		ok(!nd_uf_union(&uf, a, a), "union of an element with itself does not");
		ok(nd_uf_label(&uf, b) == 5, "{5, max} is named 5");
		ok(nd_uf_label(&uf, c) == INT64_MIN && nd_uf_label(&uf, d) == -7,
		   "singletons are named by their own id");
		nd_uf_union(&uf, d, b);
		ok(nd_uf_label(&uf, a) == -7 && nd_uf_label(&uf, b) == -7,
		   "{5, max, -7} is named -7");
		nd_uf_union(&uf, c, a);
		ok(nd_uf_label(&uf, d) == INT64_MIN && uf.size[nd_uf_find(&uf, d)] == 4,
		   "all four: named INT64_MIN, size 4");
		nd_uf_free(&uf);
		ok(uf.n == 0 && uf.parent == NULL, "free resets the set");
	}

	/* growth past the first allocation, and a failing allocator */
	{
		nd_unionfind uf;
		int			left = 4;	/* the first allocation of the 4 arrays */
		uint32_t	i,
					last = 0;

		nd_uf_init(&uf, limited_realloc, &left);
		for (i = 0; i < 5000; i++)
		{
			last = nd_uf_add(&uf, i);
			if (last == ND_UF_INVALID)
				break;
		}
		ok(last == ND_UF_INVALID && i == 1024 && uf.n == 1024,
		   "a failing allocation is reported (after %u elements)", i);
		ok(nd_uf_union(&uf, 0, 1023) && nd_uf_label(&uf, 1023) == 0,
		   "the set still works after the failure");
		nd_uf_free(&uf);

		nd_uf_init(&uf, test_realloc, NULL);
		for (i = 0; i < 100000; i++)
			nd_uf_add(&uf, (int64_t) i * 3);
		for (i = 1; i < 100000; i++)
			nd_uf_union(&uf, i - 1, i);
		ok(uf.n == 100000 && nd_uf_label(&uf, 99999) == 0 && uf.size[nd_uf_find(&uf, 5)] == 100000,
		   "100000 elements in one chain: one set of 100000 named 0");
		nd_uf_free(&uf);
	}

	free(ea);
	free(eb);
	free(ids);
	return tap_done();
}
