/*-------------------------------------------------------------------------
 *
 * clusters_spill.h
 *		dedup_clusters' components past its memory: the disjoint sets
 *		written out, the later edges, and their components found in rounds
 *		of external sorts (core/nd_star_contraction.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_CLUSTERS_SPILL_H
#define ND_CLUSTERS_SPILL_H

#include "postgres.h"

#include "utils/tuplestore.h"

typedef struct nd_edge_spill nd_edge_spill;

/* Nothing written yet; each of its sorts and stores uses up to work_mem. */
extern nd_edge_spill *nd_edge_spill_begin(void);

/*
 * One id of the disjoint sets written out, with its set's label (the
 * smallest id of the set; a set's smallest id is given with itself).
 * Every id at most once, all of them before the first later edge.
 */
extern void nd_edge_spill_add_set(nd_edge_spill *s, int64 id, int64 label);

/* One edge that came after the sets were written out (a != b). */
extern void nd_edge_spill_add(nd_edge_spill *s, int64 a, int64 b);

/*
 * The components of the sets and the later edges together, as (id,
 * cluster_id) rows, cluster_id the smallest id of the component; frees
 * the spill.
 */
extern void nd_edge_spill_finish(nd_edge_spill *s, Tuplestorestate *tupstore,
								 TupleDesc tupdesc);

#endif							/* ND_CLUSTERS_SPILL_H */
