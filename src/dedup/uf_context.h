/*-------------------------------------------------------------------------
 *
 * uf_context.h
 *		The allocator the dedup functions give the server-free union-find
 *		(nd_unionfind.h): huge allocations in a memory context, freed with
 *		it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_UF_CONTEXT_H
#define ND_UF_CONTEXT_H

#include "postgres.h"

#include "utils/memutils.h"

/* nd_uf_realloc_fn; arg is the MemoryContext */
static inline void *
nd_uf_context_realloc(void *ptr, size_t size, void *arg)
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

#endif							/* ND_UF_CONTEXT_H */
