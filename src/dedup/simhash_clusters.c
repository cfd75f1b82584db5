/*-------------------------------------------------------------------------
 *
 * simhash_clusters.c
 *		simhash_clusters(): the connected components of "within max_distance
 *		bits", computed inside the all-pairs scan, as (id, cluster_id) for
 *		every row that has a near-duplicate; cluster_id is the smallest id
 *		of its component.  Always equal to
 *		dedup_clusters('SELECT id_a, id_b FROM simhash_pairs(...)').
 *
 * Nothing quadratic is materialised.  The scan (allpairs_scan.c) runs the
 * core in spanning-edge mode: a group of identical codes costs one edge per
 * row, a pair of distinct codes within distance one edge (nd_allpairs.h),
 * and every edge goes straight into a union-find.  The union-find's
 * elements are the rows in read order (the scan carries that ordinal
 * instead of the id), so no hash table from id to element is needed: 24
 * bytes per row (nd_unionfind.h) on top of the scan's own memory.  The
 * output (cluster_output.c) reports each id once, in id order.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "shared/context_realloc.h"
#include "shared/progress.h"
#include "core/nd_allpairs.h"
#include "core/nd_unionfind.h"
#include "dedup/allpairs_scan.h"
#include "dedup/cluster_output.h"
#include "dedup/pairs_args.h"
#include "dedup/query_rows.h"
#include "dedup/simhash_clusters.h"

typedef struct ClustersRun
{
	nd_unionfind uf;			/* element i: the i-th row read */
	uint64		edges;
} ClustersRun;

static int64
clusters_add_row(void *arg, int64 id)
{
	ClustersRun *cr = (ClustersRun *) arg;

	return (int64) nd_clusters_add_row(&cr->uf, id, "simhash_clusters");
}

static void
clusters_edge(void *arg, int64 a, int64 b, int dist)
{
	ClustersRun *cr = (ClustersRun *) arg;

	nd_uf_union(&cr->uf, (uint32) a, (uint32) b);
	cr->edges++;
}

/*
 * The row type the SQL declaration gives (from the installed script) must
 * be the one this library writes: a library newer than the script, or
 * older, must fail rather than write an array where a bigint is declared.
 */
static void
check_result_shape(TupleDesc desc, const char *fname, bool groups)
{
	Oid			second = groups ? INT8ARRAYOID : INT8OID;

	if (desc->natts != 2 ||
		TupleDescAttr(desc, 0)->atttypid != INT8OID ||
		TupleDescAttr(desc, 1)->atttypid != second)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s is declared with a row type that this neardup library does not return", fname),
				 errdetail("The library returns (%s).",
						   groups ? "cluster_id bigint, ids bigint[]" : "id bigint, cluster_id bigint"),
				 errhint("Run ALTER EXTENSION neardup UPDATE.")));
}

/*
 * The clusters of the pairs within k bits whose first table of the plan
 * (k, blocks) is in [table_begin, table_end); table_end 0 for every table.
 * As (id, cluster_id) rows, or with groups one (cluster_id, ids) row per
 * cluster.
 */
void
nd_simhash_clusters_run(FunctionCallInfo fcinfo, const char *fname, const char *query,
						int k, bool auto_blocks, int blocks, int table_begin,
						int table_end, bool groups)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext cxt,
				oldcxt;
	ClustersRun cr;
	NdAllPairsSpec spec = {0};

	InitMaterializedSRF(fcinfo, 0);
	check_result_shape(rsinfo->setDesc, fname, groups);

	/* the sets, in a context of their own: freed at once at the end */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash_clusters",
								ALLOCSET_DEFAULT_SIZES);
	/* fname is the SQL function's, for messages and neardup_progress() */
	oldcxt = MemoryContextSwitchTo(cxt);
	nd_uf_init(&cr.uf, nd_context_realloc, cxt);
	cr.edges = 0;

	nd_progress_begin(fname);
	spec.fname = fname;
	spec.k = k;
	spec.auto_blocks = auto_blocks;
	spec.blocks = blocks;
	spec.table_begin = table_begin;
	spec.table_end = table_end;
	spec.output = ND_ALLPAIRS_EDGES;
	spec.emit = clusters_edge;
	spec.map_id = clusters_add_row;
	spec.arg = &cr;
	nd_allpairs_scan(fcinfo, query, &spec);

	elog(DEBUG1, "%s: %u rows, " UINT64_FORMAT " edges",
		 fname, cr.uf.n, cr.edges);
	/*
	 * The memory at DEBUG2, as the scan's working memory: the figure depends
	 * on the server's build (an assert-enabled one adds to every chunk), and
	 * the regress suite 490_dedup_clusters_update shows the DEBUG1 lines.
	 */
	elog(DEBUG2, "%s: %zu bytes of sets",
		 fname, MemoryContextMemAllocated(cxt, true));
	nd_progress_phase("writing clusters", cr.uf.n);
	if (groups)
		nd_clusters_output_groups(&cr.uf, rsinfo->setResult, rsinfo->setDesc,
								  ND_GROUP_ROW_IDS);
	else
		nd_clusters_output(&cr.uf, rsinfo->setResult, rsinfo->setDesc);
	nd_progress_end();

	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
}

static void
clusters_body(FunctionCallInfo fcinfo, const char *query, int k, bool auto_blocks,
			  int blocks)
{
	nd_simhash_clusters_run(fcinfo, "simhash_clusters", query, k, auto_blocks, blocks, 0, 0,
							false);
}

/* simhash_clusters(query text, max_distance int4 DEFAULT 3, blocks int4 DEFAULT NULL) */
PG_FUNCTION_INFO_V1(simhash_clusters_query);
Datum
simhash_clusters_query(PG_FUNCTION_ARGS)
{
	nd_allpairs_query_form(fcinfo, clusters_body);
	return (Datum) 0;
}

/*
 * simhash_clusters(source regclass, id_column name, fingerprint_column name,
 * max_distance int4 DEFAULT 3, blocks int4 DEFAULT NULL)
 */
PG_FUNCTION_INFO_V1(simhash_clusters_rel);
Datum
simhash_clusters_rel(PG_FUNCTION_ARGS)
{
	nd_allpairs_rel_form(fcinfo, clusters_body);
	return (Datum) 0;
}

/* simhash_clusters(source text, id_column text, fingerprint_column text, ...) */
PG_FUNCTION_INFO_V1(simhash_clusters_relname);
Datum
simhash_clusters_relname(PG_FUNCTION_ARGS)
{
	nd_allpairs_relname_form(fcinfo, clusters_body);
	return (Datum) 0;
}
