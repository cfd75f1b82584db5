/*-------------------------------------------------------------------------
 *
 * nd_unionfind.h
 *		Disjoint sets (union-find) over 64-bit ids, for the connected
 *		components of a near-duplicate graph: union by size, full path
 *		compression, and per set the smallest id, which names the cluster.
 *
 * Elements are dense indices 0 .. n-1 handed out by nd_uf_add(); mapping an
 * id to its index (a hash table) is the caller's job, so the server can use
 * its own.  The arrays grow through a caller-given realloc, so they can live
 * in a memory context.  24 bytes per element.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_UNIONFIND_H
#define ND_UNIONFIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of the arrays per element (parent, size, id, smallest id). */
#define ND_UF_BYTES_PER_ID	(2 * sizeof(uint32_t) + 2 * sizeof(int64_t))

/* Largest number of elements; nd_uf_add() fails beyond it. */
#define ND_UF_MAX_IDS		((uint32_t) 0x7FFFFFFF)

/* Returned by nd_uf_add() when the set is full or the allocation failed. */
#define ND_UF_INVALID		UINT32_MAX

/*
 * realloc(ptr, size): ptr is NULL for a first allocation.  May return NULL
 * (nd_uf_add() then fails) or not return at all (the server's repalloc).
 */
typedef void *(*nd_uf_realloc_fn) (void *ptr, size_t size, void *arg);

typedef struct nd_unionfind
{
	uint32_t   *parent;
	uint32_t   *size;			/* of the set, valid at roots */
	int64_t    *id;				/* the element's id */
	int64_t    *min_id;			/* smallest id of the set, valid at roots */
	uint32_t	n;
	uint32_t	cap;
	nd_uf_realloc_fn realloc_fn;
	void	   *arg;
} nd_unionfind;

extern void nd_uf_init(nd_unionfind *uf, nd_uf_realloc_fn realloc_fn, void *arg);

/* A new singleton set holding id; its index, or ND_UF_INVALID. */
extern uint32_t nd_uf_add(nd_unionfind *uf, int64_t id);

/* Root of i's set (compressing the path). */
extern uint32_t nd_uf_find(nd_unionfind *uf, uint32_t i);

/* Merges the sets of a and b; false if they were already one set. */
extern bool nd_uf_union(nd_unionfind *uf, uint32_t a, uint32_t b);

/* The cluster id of element i: the smallest id in its set. */
static inline int64_t
nd_uf_label(nd_unionfind *uf, uint32_t i)
{
	return uf->min_id[nd_uf_find(uf, i)];
}

/* Frees the arrays through realloc_fn(ptr, 0). */
extern void nd_uf_free(nd_unionfind *uf);

#endif							/* ND_UNIONFIND_H */
