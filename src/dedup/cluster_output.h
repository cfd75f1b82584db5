/*-------------------------------------------------------------------------
 *
 * cluster_output.h
 *		The union-find of the clustering functions whose elements are their
 *		input rows: adding a row, and the result, as (id, cluster_id) or
 *		as (cluster_id, ids).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_CLUSTER_OUTPUT_H
#define ND_CLUSTER_OUTPUT_H

#include "postgres.h"

#include "utils/tuplestore.h"

#include "core/nd_unionfind.h"

/*
 * Adds the next input row (its id) as a singleton; its element is the row's
 * ordinal.  54000 past ND_UF_MAX_IDS rows, naming fname.
 */
extern uint32 nd_clusters_add_row(nd_unionfind *uf, int64 id, const char *fname);

/*
 * Every id in a component with at least two distinct ids, with the
 * component's smallest id, in id order.  Joins rows that share an id.
 */
extern void nd_clusters_output(nd_unionfind *uf, Tuplestorestate *tupstore,
							   TupleDesc tupdesc);

/*
 * One (cluster_id, ids bigint[]) per component with at least two distinct
 * ids: its ids in order, components in the order of their smallest ids; a
 * component of more than max_row_ids ids (0: no limit, else at least 2)
 * in several rows, each starting with cluster_id.
 */
extern void nd_clusters_output_groups(nd_unionfind *uf, Tuplestorestate *tupstore,
									  TupleDesc tupdesc, uint32 max_row_ids);

#endif							/* ND_CLUSTER_OUTPUT_H */
