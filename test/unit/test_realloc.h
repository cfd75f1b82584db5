/* A realloc for the cores that take one (nd_unionfind, nd_wsimhash): malloc's. */
#ifndef ND_TEST_REALLOC_H
#define ND_TEST_REALLOC_H

#include <stdlib.h>

static void *
test_realloc(void *ptr, size_t size, void *arg)
{
	(void) arg;
	if (size == 0)
	{
		free(ptr);
		return NULL;
	}
	return realloc(ptr, size);
}

#endif
