/*-------------------------------------------------------------------------
 *
 * hamming.c
 *		Hamming distance and similarity between simhash64 values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "port/pg_bitutils.h"

#include "type/simhash64.h"

static inline int32
simhash64_distance(simhash64 a, simhash64 b)
{
	return pg_popcount64(a ^ b);
}

PG_FUNCTION_INFO_V1(hamming_distance);
Datum
hamming_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(simhash64_distance(PG_GETARG_SIMHASH64(0),
									   PG_GETARG_SIMHASH64(1)));
}

/*
 * Implements the <~> operator.  Kept apart from hamming_distance() so that
 * the operator's function can carry a planner support function.
 */
PG_FUNCTION_INFO_V1(simhash64_hamming);
Datum
simhash64_hamming(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(simhash64_distance(PG_GETARG_SIMHASH64(0),
									   PG_GETARG_SIMHASH64(1)));
}

/* 1 for equal values, 0 for complementary ones. */
PG_FUNCTION_INFO_V1(simhash_similarity);
Datum
simhash_similarity(PG_FUNCTION_ARGS)
{
	int32		d = simhash64_distance(PG_GETARG_SIMHASH64(0),
									   PG_GETARG_SIMHASH64(1));

	PG_RETURN_FLOAT8(1.0 - d / 64.0);
}
