/*-------------------------------------------------------------------------
 *
 * simhash_arrays.c
 *		simhash() of features the caller extracted: text[] (hashed here),
 *		bigint[] (already hashed: each value votes with its own bits, as
 *		simhash-py's compute() does), optionally with real[] weights.
 *
 * NULL elements contribute nothing, as NULLs do in aggregates; so does a
 * feature whose weight is NULL or zero.  No contributing feature: NULL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/float.h"
#include "utils/lsyscache.h"

#include "shared/context_realloc.h"
#include "core/nd_features.h"
#include "core/nd_simhash.h"
#include "fingerprint/text_features.h"
#include "type/simhash64.h"

/* Features handed to the accumulator between two interrupt checks. */
#define CHECK_EVERY 65536

static void
deconstruct_features(ArrayType *arr, const char *what, Oid elemtype,
					 Datum **values, bool **nulls, int *n)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s array must be one-dimensional", what)));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign, values, nulls, n);
}

static float4
weight_at(Datum *weights, bool *wnulls, int i)
{
	float4		w;

	if (wnulls[i])
		return 0.0f;
	w = DatumGetFloat4(weights[i]);
	if (isnan(w) || isinf(w))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("feature weights must be finite"),
				 errdetail("Weight %d is %s.", i + 1, isnan(w) ? "NaN" : "infinite")));
	return w;
}

static void
check_same_length(int nfeatures, int nweights)
{
	if (nfeatures != nweights)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature and weight arrays must have the same length"),
				 errdetail("There are %d features and %d weights.", nfeatures, nweights)));
}

static inline uint64
feature_hash(Oid elemtype, Datum d, uint64 seed)
{
	if (elemtype == INT8OID)
		return (uint64) DatumGetInt64(d);
	else
	{
		return nd_hash_text(DatumGetTextPP(d), seed);
	}
}

/* Unit weights: duplicates count as often as they occur. */
static Datum
simhash_of_array(FunctionCallInfo fcinfo, Oid elemtype, uint64 seed)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	Datum	   *values;
	bool	   *nulls;
	int			n;
	nd_simhash_acc acc;
	uint64		batch[256];
	int			nb = 0;
	uint64		fp;

	deconstruct_features(arr, "feature", elemtype, &values, &nulls, &n);
	nd_simhash_init(&acc);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			continue;
		batch[nb++] = feature_hash(elemtype, values[i], seed);
		if (nb == lengthof(batch))
		{
			nd_simhash_add(&acc, batch, nb);
			nb = 0;
		}
		if ((i & (CHECK_EVERY - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	nd_simhash_add(&acc, batch, nb);
	if (!nd_simhash_result(&acc, &fp))
		PG_RETURN_NULL();
	PG_RETURN_SIMHASH64(fp);
}

static Datum
simhash_of_weighted_array(FunctionCallInfo fcinfo, Oid elemtype, uint64 seed)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *warr = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *values,
			   *weights;
	bool	   *nulls,
			   *wnulls;
	int			n,
				nw;
	nd_wsimhash_acc acc;
	uint64		fp;
	bool		found;

	deconstruct_features(arr, "feature", elemtype, &values, &nulls, &n);
	deconstruct_features(warr, "weight", FLOAT4OID, &weights, &wnulls, &nw);
	check_same_length(n, nw);

	nd_wsimhash_init(&acc, nd_context_realloc, CurrentMemoryContext);
	for (int i = 0; i < n; i++)
	{
		float4		w = weight_at(weights, wnulls, i);

		if (!nulls[i])
			nd_wsimhash_add(&acc, feature_hash(elemtype, values[i], seed), w);
		if ((i & (CHECK_EVERY - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	found = nd_wsimhash_result(&acc, &fp);
	nd_wsimhash_free(&acc);
	if (!found)
		PG_RETURN_NULL();
	PG_RETURN_SIMHASH64(fp);
}

/* simhash(features text[], seed int8) */
PG_FUNCTION_INFO_V1(nd_simhash_text_array);
Datum
nd_simhash_text_array(PG_FUNCTION_ARGS)
{
	return simhash_of_array(fcinfo, TEXTOID, (uint64) PG_GETARG_INT64(1));
}

/* simhash(features text[], weights real[], seed int8) */
PG_FUNCTION_INFO_V1(nd_simhash_text_array_weighted);
Datum
nd_simhash_text_array_weighted(PG_FUNCTION_ARGS)
{
	return simhash_of_weighted_array(fcinfo, TEXTOID, (uint64) PG_GETARG_INT64(2));
}

/* simhash(features bigint[]) */
PG_FUNCTION_INFO_V1(nd_simhash_int8_array);
Datum
nd_simhash_int8_array(PG_FUNCTION_ARGS)
{
	return simhash_of_array(fcinfo, INT8OID, 0);
}

/* simhash(features bigint[], weights real[]) */
PG_FUNCTION_INFO_V1(nd_simhash_int8_array_weighted);
Datum
nd_simhash_int8_array_weighted(PG_FUNCTION_ARGS)
{
	return simhash_of_weighted_array(fcinfo, INT8OID, 0);
}
