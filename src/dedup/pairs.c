/*-------------------------------------------------------------------------
 *
 * pairs.c
 *		simhash_pairs(): every pair of rows whose fingerprints are within a
 *		Hamming distance, exactly, with permuted sorted tables
 *		(src/core/nd_allpairs.c, read and batched by allpairs_scan.c;
 *		doc/dedup.md).  Results go to a tuplestore, which spills to disk past
 *		work_mem on its own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/tuplestore.h"

#include "allpairs_scan.h"

typedef struct PairsOut
{
	Tuplestorestate *tupstore;
	TupleDesc	tupdesc;
} PairsOut;

static void
pairs_emit(void *arg, int64 id_a, int64 id_b, int dist)
{
	PairsOut   *out = (PairsOut *) arg;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = Int64GetDatum(id_a);
	values[1] = Int64GetDatum(id_b);
	values[2] = Int32GetDatum(dist);
	tuplestore_putvalues(out->tupstore, out->tupdesc, values, nulls);
}

static void
pairs_body(FunctionCallInfo fcinfo, const char *query, int k, bool auto_blocks,
		   int blocks)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PairsOut	out;
	NdAllPairsSpec spec = {0};

	InitMaterializedSRF(fcinfo, 0);
	if (query == NULL)
		return;
	out.tupstore = rsinfo->setResult;
	out.tupdesc = rsinfo->setDesc;
	spec.fname = "simhash_pairs";
	spec.k = k;
	spec.auto_blocks = auto_blocks;
	spec.blocks = blocks;
	spec.emit = pairs_emit;
	spec.arg = &out;
	nd_allpairs_scan(fcinfo, query, &spec);
}

/*
 * simhash_pairs(query text, max_distance int4 DEFAULT 3, blocks int4 DEFAULT
 * NULL): the query returns (id, fingerprint).
 */
PG_FUNCTION_INFO_V1(simhash_pairs_query);
Datum
simhash_pairs_query(PG_FUNCTION_ARGS)
{
	nd_allpairs_query_form(fcinfo, pairs_body);
	return (Datum) 0;
}

/*
 * simhash_pairs(source regclass, id_column name, fingerprint_column name,
 * max_distance int4 DEFAULT 3, blocks int4 DEFAULT NULL)
 */
PG_FUNCTION_INFO_V1(simhash_pairs_rel);
Datum
simhash_pairs_rel(PG_FUNCTION_ARGS)
{
	nd_allpairs_rel_form(fcinfo, pairs_body);
	return (Datum) 0;
}

/* simhash_pairs(source text, id_column text, fingerprint_column text, ...) */
PG_FUNCTION_INFO_V1(simhash_pairs_relname);
Datum
simhash_pairs_relname(PG_FUNCTION_ARGS)
{
	nd_allpairs_relname_form(fcinfo, pairs_body);
	return (Datum) 0;
}
