/*-------------------------------------------------------------------------
 *
 * simhash_agg.c
 *		simhash_agg(feature text [, weight real]): the fingerprint of the
 *		features of a group of rows, parallel-safe (partial states merge).
 *
 * Equal to simhash(array_agg(feature), array_agg(weight)) over the same rows;
 * rows whose feature or weight is NULL are skipped.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"

#include "shared/context_realloc.h"
#include "core/nd_features.h"
#include "core/nd_simhash.h"
#include "fingerprint/text_features.h"
#include "pg_compat.h"
#include "type/simhash64.h"

static nd_wsimhash_acc *
agg_state(FunctionCallInfo fcinfo)
{
	MemoryContext aggcxt;
	nd_wsimhash_acc *acc;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "simhash_agg transition function called in non-aggregate context");
	if (!PG_ARGISNULL(0))
		return (nd_wsimhash_acc *) PG_GETARG_POINTER(0);
	acc = MemoryContextAlloc(aggcxt, sizeof(nd_wsimhash_acc));
	nd_wsimhash_init(acc, nd_context_realloc, aggcxt);
	return acc;
}

static void
add_feature(nd_wsimhash_acc *acc, text *feature, float4 w)
{
	if (isnan(w) || isinf(w))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("feature weights must be finite")));
	nd_wsimhash_add(acc, nd_hash_text(feature, 0), w);
}

/* transition (internal, text, real) */
PG_FUNCTION_INFO_V1(nd_simhash_agg_trans_weighted);
Datum
nd_simhash_agg_trans_weighted(PG_FUNCTION_ARGS)
{
	nd_wsimhash_acc *acc = agg_state(fcinfo);

	if (!PG_ARGISNULL(1) && !PG_ARGISNULL(2))
		add_feature(acc, PG_GETARG_TEXT_PP(1), PG_GETARG_FLOAT4(2));
	PG_RETURN_POINTER(acc);
}

/* transition (internal, text): weight 1 */
PG_FUNCTION_INFO_V1(nd_simhash_agg_trans);
Datum
nd_simhash_agg_trans(PG_FUNCTION_ARGS)
{
	nd_wsimhash_acc *acc = agg_state(fcinfo);

	if (!PG_ARGISNULL(1))
		add_feature(acc, PG_GETARG_TEXT_PP(1), 1.0f);
	PG_RETURN_POINTER(acc);
}

PG_FUNCTION_INFO_V1(nd_simhash_agg_final);
Datum
nd_simhash_agg_final(PG_FUNCTION_ARGS)
{
	uint64		fp;

	if (PG_ARGISNULL(0) ||
		!nd_wsimhash_result((nd_wsimhash_acc *) PG_GETARG_POINTER(0), &fp))
		PG_RETURN_NULL();
	PG_RETURN_SIMHASH64(fp);
}

PG_FUNCTION_INFO_V1(nd_simhash_agg_combine);
Datum
nd_simhash_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	nd_wsimhash_acc *into;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "simhash_agg combine function called in non-aggregate context");
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (PG_ARGISNULL(0))
	{
		into = MemoryContextAlloc(aggcxt, sizeof(nd_wsimhash_acc));
		nd_wsimhash_init(into, nd_context_realloc, aggcxt);
	}
	else
		into = (nd_wsimhash_acc *) PG_GETARG_POINTER(0);
	nd_wsimhash_merge(into, (nd_wsimhash_acc *) PG_GETARG_POINTER(1));
	PG_RETURN_POINTER(into);
}

/*
 * The state travels between parallel workers as its count and its rows:
 * per exponent slot, the 64 exact vote sums and the additions count.
 */
PG_FUNCTION_INFO_V1(nd_simhash_agg_serialize);
Datum
nd_simhash_agg_serialize(PG_FUNCTION_ARGS)
{
	nd_wsimhash_acc *acc = (nd_wsimhash_acc *) PG_GETARG_POINTER(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) acc->n);
	pq_sendint32(&buf, acc->nrows);
	for (int r = 0; r < acc->nrows; r++)
	{
		pq_sendint32(&buf, nd_wsimhash_row_slot(acc, r));
		pq_sendint64(&buf, (int64) acc->row_adds[r]);
		for (int i = 0; i < 64; i++)
			pq_sendint64(&buf, acc->rows[r][i]);
	}
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

PG_FUNCTION_INFO_V1(nd_simhash_agg_deserialize);
Datum
nd_simhash_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);
	nd_wsimhash_acc *acc = palloc(sizeof(nd_wsimhash_acc));
	StringInfoData buf;
	int			nrows;

	buf.data = VARDATA_ANY(b);
	buf.len = VARSIZE_ANY_EXHDR(b);
	buf.maxlen = buf.len;
	buf.cursor = 0;
	nd_wsimhash_init(acc, nd_context_realloc, CurrentMemoryContext);
	acc->n = (uint64) pq_getmsgint64(&buf);
	nrows = pq_getmsgint(&buf, 4);
	for (int r = 0; r < nrows; r++)
	{
		int			slot = pq_getmsgint(&buf, 4);
		uint64		adds = (uint64) pq_getmsgint64(&buf);
		int64		sums[64];

		for (int i = 0; i < 64; i++)
			sums[i] = pq_getmsgint64(&buf);
		if (!nd_wsimhash_load_row(acc, slot, sums, adds))
			elog(ERROR, "invalid simhash_agg state");
	}
	pq_getmsgend(&buf);
	PG_RETURN_POINTER(acc);
}
