/*-------------------------------------------------------------------------
 *
 * nd_codeset.h
 *		An in-memory set of 64-bit codes that grows by appending and answers
 *		radius searches by multi-index hashing: one hash table per block of
 *		the permuted-table layout (nd_permute.h), probed step by step as
 *		nd_mih.h describes, or a flat scan when that is cheaper (large
 *		radii, few codes).
 *
 * The hamming index keeps its pending list in one of these per backend
 * (ham_cache.c), so that a scan costs a few bucket probes instead of a
 * read of the whole list.  Entries are numbered 0 .. n-1 in the order they
 * were added; the caller keeps whatever goes with them (heap TIDs) in its
 * own array under the same numbers.
 *
 * Memory: 8 + 4m bytes per entry plus 4m per bucket (one bucket per entry
 * or fewer), through a caller-given realloc so that it can live in a memory
 * context.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_CODESET_H
#define ND_CODESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nd_permute.h"

/* Largest number of entries; nd_codeset_add() fails beyond it. */
#define ND_CODESET_MAX		((uint32_t) 0x40000000)

/*
 * realloc(ptr, size): ptr is NULL for a first allocation, size 0 frees.
 * May return NULL (the operation then fails) or not return at all (the
 * server's repalloc).
 */
typedef void *(*nd_codeset_realloc_fn) (void *ptr, size_t size, void *arg);

typedef struct nd_codeset
{
	nd_layout	layout;
	uint64_t   *codes;
	uint32_t	n;
	uint32_t	cap;
	uint32_t	bucket_bits;	/* 2^bucket_bits buckets per table */
	uint32_t   *heads[ND_PERMUTE_MAX_BLOCKS];	/* per table: first entry of
												 * each bucket */
	uint32_t   *next[ND_PERMUTE_MAX_BLOCKS];	/* per table: next entry in
												 * the bucket */
	nd_codeset_realloc_fn realloc_fn;
	void	   *arg;
} nd_codeset;

/* nblocks in [ND_PERMUTE_MIN_BLOCKS, ND_PERMUTE_MAX_BLOCKS] */
extern void nd_codeset_init(nd_codeset *cs, int nblocks, nd_codeset_realloc_fn realloc_fn,
							void *arg);

/* Adds a code; false when the set is full or an allocation failed. */
extern bool nd_codeset_add(nd_codeset *cs, uint64_t code);

/* Bytes held (for memory budgets). */
extern size_t nd_codeset_bytes(const nd_codeset *cs);

/* Called once per entry found: its number and its distance. */
typedef void (*nd_codeset_visit_fn) (uint32_t entry, int distance, void *arg);

/*
 * Every entry within `radius` bits of q (radius < 0: none, >= 64: all),
 * each visited exactly once, in no particular order.  Returns how many.
 */
extern size_t nd_codeset_search(const nd_codeset *cs, uint64_t q, int radius,
								nd_codeset_visit_fn visit, void *arg);

/*
 * The same by one method, for tests: 0 the cheaper, 1 the flat scan, 2 the
 * bucket probes (unless a step would probe too many block values: then
 * flat).
 */
extern size_t nd_codeset_search_variant(const nd_codeset *cs, uint64_t q, int radius,
										int variant, nd_codeset_visit_fn visit, void *arg);

/* Frees the arrays through realloc_fn(ptr, 0) and empties the set. */
extern void nd_codeset_free(nd_codeset *cs);

#endif							/* ND_CODESET_H */
