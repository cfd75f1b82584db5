/*-------------------------------------------------------------------------
 *
 * nd_lsh_clusters.h
 *		Clusters of MinHash signatures (minhash_clusters): the connected
 *		components of "shares an LSH band and the signatures' Jaccard
 *		estimate is at least the threshold", computed with band buckets
 *		and a union-find, never with the candidate pairs.
 *
 * Identical signatures are joined first (a hash of the whole signature,
 * confirmed value by value): each group enters the band buckets once, by
 * its first row.  Then, band by band, the rows are sorted by band key, and
 * inside a bucket each two rows not yet in one component are verified by
 * the estimate and joined if it reaches the threshold; a pair already
 * connected is not verified again.  The components are those of the
 * verified band-join pairs (the pairs minhash_similar() finds) as long as
 * threshold <= 1: identical signatures share every band and estimate 1.
 *
 * Plain C, no server headers, no allocation: the caller passes the memory.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_LSH_CLUSTERS_H
#define ND_LSH_CLUSTERS_H

#include <stddef.h>
#include <stdint.h>

#include "nd_unionfind.h"

/* Bytes of scratch memory for n signatures (8-byte aligned). */
extern size_t nd_lsh_clusters_scratch_size(size_t n);

/*
 * sigs: n signatures of k values each (row i at sigs + i * k); uf: the
 * union-find whose elements 0 .. n-1 are the rows, joined here.  bands *
 * rows <= k, 0 <= threshold <= 1.  tick(arg) is called every so often (it
 * may not return).  Returns the number of estimates computed.
 */
extern uint64_t nd_lsh_clusters_run(const uint32_t *sigs, size_t n, int k,
									int bands, int rows, double threshold,
									nd_unionfind *uf, void *scratch,
									void (*tick) (void *arg), void *arg);

#endif							/* ND_LSH_CLUSTERS_H */
