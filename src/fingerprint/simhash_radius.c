/*-------------------------------------------------------------------------
 *
 * simhash_radius.c
 *		simhash_radius(threshold, recall) and simhash_recall(threshold,
 *		radius): the Hamming radius that finds the pairs of a Jaccard
 *		similarity, by the model of nd_simhash_radius.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "core/nd_simhash_radius.h"
#include "type/hamming_ball.h"

static void
check_unit_interval(const char *what, float8 value)
{
	if (!(value > 0.0 && value <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be greater than 0 and at most 1", what)));
}

/*
 * simhash_radius(threshold float8, recall float8) → int4: the smallest
 * radius within which a pair of Jaccard similarity `threshold` (or more)
 * falls with probability at least `recall`.
 */
PG_FUNCTION_INFO_V1(nd_simhash_radius_sql);
Datum
nd_simhash_radius_sql(PG_FUNCTION_ARGS)
{
	float8		threshold = PG_GETARG_FLOAT8(0);
	float8		recall = PG_GETARG_FLOAT8(1);

	check_unit_interval("threshold", threshold);
	check_unit_interval("recall", recall);
	PG_RETURN_INT32(nd_simhash_radius(threshold, recall));
}

/*
 * simhash_recall(threshold float8, radius int4) → float8: the probability
 * that a pair of Jaccard similarity `threshold` is within `radius`, for a
 * radius of 0..64 (22023 otherwise, as hamming_ball() says it).
 */
PG_FUNCTION_INFO_V1(nd_simhash_recall_sql);
Datum
nd_simhash_recall_sql(PG_FUNCTION_ARGS)
{
	float8		threshold = PG_GETARG_FLOAT8(0);
	int32		radius = PG_GETARG_INT32(1);

	check_unit_interval("threshold", threshold);
	hamming_check_radius("radius", radius);
	PG_RETURN_FLOAT8(nd_simhash_within_prob(threshold, radius));
}
