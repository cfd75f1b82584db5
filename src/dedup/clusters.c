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
 * index, doc/dedup.md gives the total), never the pairs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/portal.h"
#include "utils/tuplestore.h"

#include "nd_mix.h"
#include "nd_unionfind.h"

/* Pairs fetched from the cursor at a time. */
#define PAIRS_BATCH		10000

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

/* The disjoint sets' allocator: huge allocations in the given context. */
static void *
uf_realloc(void *ptr, size_t size, void *arg)
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

/* A pair column's value as int8; its type was checked to be an integer. */
static inline int64
int_datum(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

PG_FUNCTION_INFO_V1(nd_dedup_clusters);
Datum
nd_dedup_clusters(PG_FUNCTION_ARGS)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext ctx;
	nd_unionfind uf;
	idmap_hash *map;
	SPIPlanPtr	plan;
	Portal		portal;
	TupleDesc	desc;
	Oid			type[2];
	int64		npairs = 0;

	/* checks that the caller accepts a set; the output spills past work_mem */
	InitMaterializedSRF(fcinfo, 0);

	/* the sets, in a context of their own: freed at once at the end */
	ctx = AllocSetContextCreate(CurrentMemoryContext, "dedup_clusters",
								ALLOCSET_DEFAULT_SIZES);
	nd_uf_init(&uf, uf_realloc, ctx);
	map = idmap_create(ctx, 1024, NULL);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the query's own errors (syntax, permissions) are raised as the caller's */
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pairs query must be a single query that returns rows"),
				 errhint("Give a SELECT (or VALUES) returning two integer columns.")));
	/* read-only: the function is STABLE and sees the caller's snapshot */
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	desc = portal->tupDesc;
	if (desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("pairs query must return two integer columns"),
				 errdetail("It returns %d columns.", desc->natts)));
	for (int c = 0; c < 2; c++)
	{
		/* a domain over an integer type is read as its base type */
		type[c] = getBaseType(TupleDescAttr(desc, c)->atttypid);
		if (type[c] != INT2OID && type[c] != INT4OID && type[c] != INT8OID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("pairs query must return two integer columns"),
					 errdetail("Column %d is of type %s.", c + 1,
							   format_type_be(TupleDescAttr(desc, c)->atttypid))));
	}

	for (;;)
	{
		SPITupleTable *tt;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, PAIRS_BATCH);
		if (SPI_processed == 0)
			break;
		tt = SPI_tuptable;
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			bool		null_a,
						null_b;
			Datum		da = SPI_getbinval(tt->vals[r], tt->tupdesc, 1, &null_a);
			Datum		db = SPI_getbinval(tt->vals[r], tt->tupdesc, 2, &null_b);
			int64		a,
						b;
			uint32		ia,
						ib;

			/* a pair with an unknown end, or of a row with itself: no edge */
			if (null_a || null_b)
				continue;
			a = int_datum(da, type[0]);
			b = int_datum(db, type[1]);
			if (a == b)
				continue;
			/* in this order: ids are numbered as first seen */
			ia = id_index(map, &uf, a);
			ib = id_index(map, &uf, b);
			nd_uf_union(&uf, ia, ib);
			npairs++;
		}
		SPI_freetuptable(tt);
	}
	SPI_cursor_close(portal);
	SPI_finish();

	ereport(DEBUG1,
			(errmsg_internal("dedup_clusters: %lld pairs, %u distinct ids, %zu bytes",
							 (long long) npairs, uf.n,
							 MemoryContextMemAllocated(ctx, true))));

	for (uint32 i = 0; i < uf.n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		values[0] = Int64GetDatum(uf.id[i]);
		values[1] = Int64GetDatum(nd_uf_label(&uf, i));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	MemoryContextDelete(ctx);
	return (Datum) 0;
}
