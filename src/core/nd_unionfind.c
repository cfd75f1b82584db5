/*-------------------------------------------------------------------------
 *
 * nd_unionfind.c
 *		Disjoint sets with union by size and path compression: any sequence
 *		of m operations on n elements costs O(m α(n)) (Tarjan 1975).
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#include "nd_unionfind.h"

void
nd_uf_init(nd_unionfind *uf, nd_uf_realloc_fn realloc_fn, void *arg)
{
	uf->parent = NULL;
	uf->size = NULL;
	uf->id = NULL;
	uf->min_id = NULL;
	uf->n = 0;
	uf->cap = 0;
	uf->realloc_fn = realloc_fn;
	uf->arg = arg;
}

/* Grows the four arrays to hold cap elements; false if an allocation failed. */
static bool
nd_uf_grow(nd_unionfind *uf, uint32_t cap)
{
	void	   *p;

	/* each array is replaced as soon as it has grown: no leak on failure */
	if ((p = uf->realloc_fn(uf->parent, (size_t) cap * sizeof(uint32_t), uf->arg)) == NULL)
		return false;
	uf->parent = p;
	if ((p = uf->realloc_fn(uf->size, (size_t) cap * sizeof(uint32_t), uf->arg)) == NULL)
		return false;
	uf->size = p;
	if ((p = uf->realloc_fn(uf->id, (size_t) cap * sizeof(int64_t), uf->arg)) == NULL)
		return false;
	uf->id = p;
	if ((p = uf->realloc_fn(uf->min_id, (size_t) cap * sizeof(int64_t), uf->arg)) == NULL)
		return false;
	uf->min_id = p;
	uf->cap = cap;
	return true;
}

uint32_t
nd_uf_add(nd_unionfind *uf, int64_t id)
{
	uint32_t	i = uf->n;

	if (i >= ND_UF_MAX_IDS)
		return ND_UF_INVALID;
	if (i == uf->cap)
	{
		/* doubling: amortized O(1) per element */
		uint64_t	cap = uf->cap < 1024 ? 1024 : (uint64_t) uf->cap * 2;

		if (cap > ND_UF_MAX_IDS)
			cap = ND_UF_MAX_IDS;
		if (!nd_uf_grow(uf, (uint32_t) cap))
			return ND_UF_INVALID;
	}
	uf->parent[i] = i;
	uf->size[i] = 1;
	uf->id[i] = id;
	uf->min_id[i] = id;
	uf->n = i + 1;
	return i;
}

uint32_t
nd_uf_find(nd_unionfind *uf, uint32_t i)
{
	uint32_t	root = i;

	while (uf->parent[root] != root)
		root = uf->parent[root];
	/* second pass: every node on the path now points at the root */
	while (uf->parent[i] != root)
	{
		uint32_t	next = uf->parent[i];

		uf->parent[i] = root;
		i = next;
	}
	return root;
}

bool
nd_uf_union(nd_unionfind *uf, uint32_t a, uint32_t b)
{
	uint32_t	ra = nd_uf_find(uf, a);
	uint32_t	rb = nd_uf_find(uf, b);

	if (ra == rb)
		return false;
	/* the smaller set goes under the larger: trees stay O(log n) deep */
	if (uf->size[ra] < uf->size[rb])
	{
		uint32_t	t = ra;

		ra = rb;
		rb = t;
	}
	uf->parent[rb] = ra;
	uf->size[ra] += uf->size[rb];
	if (uf->min_id[rb] < uf->min_id[ra])
		uf->min_id[ra] = uf->min_id[rb];
	return true;
}

void
nd_uf_free(nd_unionfind *uf)
{
	if (uf->parent)
		uf->realloc_fn(uf->parent, 0, uf->arg);
	if (uf->size)
		uf->realloc_fn(uf->size, 0, uf->arg);
	if (uf->id)
		uf->realloc_fn(uf->id, 0, uf->arg);
	if (uf->min_id)
		uf->realloc_fn(uf->min_id, 0, uf->arg);
	nd_uf_init(uf, uf->realloc_fn, uf->arg);
}
