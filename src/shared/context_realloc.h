/*-------------------------------------------------------------------------
 *
 * context_realloc.h
 *		The allocator the server gives the server-free cores that grow
 *		arrays of their own (the union-find of nd_unionfind.h, the weighted
 *		SimHash votes of nd_simhash.h): huge allocations in a memory
 *		context, freed with it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_CONTEXT_REALLOC_H
#define ND_CONTEXT_REALLOC_H

#include "postgres.h"

#include "utils/memutils.h"

/* realloc(ptr, size, arg): arg is the MemoryContext; size 0 frees */
static inline void *
nd_context_realloc(void *ptr, size_t size, void *arg)
{
	if (size == 0)
	{
		if (ptr)
			pfree(ptr);
		return NULL;
	}
	if (ptr == NULL)
		return MemoryContextAllocHuge((MemoryContext) arg, size);
	return repalloc_huge(ptr, size);
}

#endif							/* ND_CONTEXT_REALLOC_H */
