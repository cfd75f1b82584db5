/*-------------------------------------------------------------------------
 *
 * clusters.c
 *		dedup_clusters(pairs_query text): the connected components of the
 *		graph whose edges are the pairs a query returns, as (id, cluster_id)
 *		rows, cluster_id being the smallest id of the component.
 *
 * The query runs through SPI as the calling user (as tablefunc's crosstab
 * does), so pairs can come from anywhere: a GIN self-join, simhash_pairs(),
 * a table of pairs kept from earlier runs, MinHash band joins.  It is read
 * through a cursor in batches; only the disjoint sets are kept in memory
 * (nd_unionfind.c, 24 bytes per distinct id, plus a hash table from id to
 * index, doc/dedup-keep-one.md gives the total), never the pairs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "nd_mix.h"
#include "nd_unionfind.h"
#include "progress.h"
#include "query_rows.h"
#include "context_realloc.h"

/* Pairs fetched from the cursor at a time. */

/* id -> index in the disjoint sets */
typedef struct IdEntry
{
	int64		id;
	uint32		index;
	char		status;
} IdEntry;

#define SH_PREFIX		idmap
#define SH_ELEMENT_TYPE	IdEntry
#define SH_KEY_TYPE		int64
#define SH_KEY			id
#define SH_HASH_KEY(tb, key)	((uint32) nd_fmix64((uint64) (key)))
#define SH_EQUAL(tb, a, b)		((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* The index of id, added as a singleton when first seen. */
static uint32
id_index(idmap_hash *map, nd_unionfind *uf, int64 id)
{
	bool		found;
	IdEntry    *e = idmap_insert(map, id, &found);

	if (!found)
	{
		uint32		i = nd_uf_add(uf, id);

		if (i == ND_UF_INVALID)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many distinct ids in the pairs"),
					 errdetail("dedup_clusters() handles at most %u distinct ids.",
							   (unsigned) ND_UF_MAX_IDS)));
		e->index = i;
	}
	return e->index;
}

/* What the pair reader fills in. */
typedef struct ClusterInput
{
	nd_unionfind *uf;
	idmap_hash *map;
	Oid			type[2];
	int64		npairs;
} ClusterInput;

static void
pairs_shape(TupleDesc desc, double est_rows, void *arg)
{
	ClusterInput *in = (ClusterInput *) arg;

	if (desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("pairs query must return two integer columns"),
				 errdetail("It returns %d columns.", desc->natts)));
	for (int c = 0; c < 2; c++)
	{
		/* a domain over an integer type is read as its base type */
		in->type[c] = getBaseType(TupleDescAttr(desc, c)->atttypid);
		if (!nd_is_int_type(in->type[c]))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("pairs query must return two integer columns"),
					 errdetail("Column %d is of type %s.", c + 1,
							   format_type_be(TupleDescAttr(desc, c)->atttypid))));
	}
}

static void
pairs_row(Datum *values, bool *nulls, void *arg)
{
	ClusterInput *in = (ClusterInput *) arg;
	int64		a,
				b;
	uint32		ia,
				ib;

	/* a pair with an unknown end, or of a row with itself: no edge */
	if (nulls[0] || nulls[1])
		return;
	a = nd_int_datum(values[0], in->type[0]);
	b = nd_int_datum(values[1], in->type[1]);
	if (a == b)
		return;
	/* in this order: ids are numbered as first seen */
	ia = id_index(in->map, in->uf, a);
	ib = id_index(in->map, in->uf, b);
	nd_uf_union(in->uf, ia, ib);
	in->npairs++;
}

PG_FUNCTION_INFO_V1(nd_dedup_clusters);
Datum
nd_dedup_clusters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *query;
	MemoryContext ctx;
	nd_unionfind uf;
	idmap_hash *map;
	ClusterInput in;

	/* 0.3 declares it CALLED ON NULL INPUT; 0.1 and 0.2 declared it STRICT */
	nd_require_arg(fcinfo, 0, "pairs_query");
	query = text_to_cstring(PG_GETARG_TEXT_PP(0));

	/* checks that the caller accepts a set; the output spills past work_mem */
	InitMaterializedSRF(fcinfo, 0);

	/* the sets, in a context of their own: freed at once at the end */
	ctx = AllocSetContextCreate(CurrentMemoryContext, "dedup_clusters",
								ALLOCSET_DEFAULT_SIZES);
	nd_uf_init(&uf, nd_context_realloc, ctx);
	map = idmap_create(ctx, 1024, NULL);

	in.uf = &uf;
	in.map = map;
	in.npairs = 0;
	/* a job of its own, so that dedup_keep_one's phase shows again after it */
	nd_progress_begin("dedup_clusters");
	nd_query_for_each_row(query, "pairs query",
						  "Give a SELECT (or VALUES) returning two integer columns.",
						  pairs_shape, pairs_row, &in);

	ereport(DEBUG1,
			(errmsg_internal("dedup_clusters: %lld pairs, %u distinct ids, %zu bytes",
							 (long long) in.npairs, uf.n,
							 MemoryContextMemAllocated(ctx, true))));

	nd_progress_phase("writing clusters", uf.n);
	for (uint32 i = 0; i < uf.n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		if ((i & 0xFFFF) == 0)
		{
			CHECK_FOR_INTERRUPTS();
			nd_progress_done(i);
		}
		values[0] = Int64GetDatum(uf.id[i]);
		values[1] = Int64GetDatum(nd_uf_label(&uf, i));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	MemoryContextDelete(ctx);
	nd_progress_end();
	return (Datum) 0;
}
