/*-------------------------------------------------------------------------
 *
 * cluster_output.h
 *		(id, cluster_id) rows of a union-find whose elements are input rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_CLUSTER_OUTPUT_H
#define ND_CLUSTER_OUTPUT_H

#include "postgres.h"

#include "utils/tuplestore.h"

#include "nd_unionfind.h"

/*
 * Every id in a component with at least two distinct ids, with the
 * component's smallest id, in id order.  Joins rows that share an id.
 */
extern void nd_clusters_output(nd_unionfind *uf, Tuplestorestate *tupstore,
							   TupleDesc tupdesc);

#endif							/* ND_CLUSTER_OUTPUT_H */
