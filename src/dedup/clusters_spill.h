/*-------------------------------------------------------------------------
 *
 * clusters_spill.h
 *		dedup_clusters' components past its memory: the edges in external
 *		sorts, joined by star contraction (core/nd_star_contraction.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_CLUSTERS_SPILL_H
#define ND_CLUSTERS_SPILL_H

#include "postgres.h"

#include "utils/tuplestore.h"

typedef struct nd_edge_spill nd_edge_spill;

/* An empty edge list; each of its sorts uses up to work_mem. */
extern nd_edge_spill *nd_edge_spill_begin(void);

/* One undirected edge (a != b). */
extern void nd_edge_spill_add(nd_edge_spill *s, int64 a, int64 b);

/*
 * The components of the edges added, as (id, cluster_id) rows in id order,
 * cluster_id the smallest id of the component; frees the spill.
 */
extern void nd_edge_spill_finish(nd_edge_spill *s, Tuplestorestate *tupstore,
								 TupleDesc tupdesc);

#endif							/* ND_CLUSTERS_SPILL_H */
