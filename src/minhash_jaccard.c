/*-------------------------------------------------------------------------
 *
 * minhash_jaccard.c
 *		minhash_jaccard(): the Jaccard estimate of two signatures; jaccard():
 *		the exact Jaccard similarity of two documents' shingle sets, or of
 *		two feature arrays taken as sets, to check estimates against.
 *
 * The Jaccard similarity of two empty sets is 0/0: NULL, as minhash() of
 * an empty document is NULL.  One empty set and one not: 0.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "minhash.h"
#include "nd_features.h"
#include "nd_minhash.h"
#include "text_features.h"

/*
 * minhash_jaccard(a int4[], b int4[]) → float8: the fraction of positions
 * where the two signatures agree.  Signatures of different lengths cannot
 * come from the same num_perm: an error.  (Signatures made with different
 * seeds are not detectable; they estimate about 0.)
 */
PG_FUNCTION_INFO_V1(nd_minhash_jaccard);
Datum
nd_minhash_jaccard(PG_FUNCTION_ARGS)
{
	int			na,
				nb;
	const uint32 *a = nd_minhash_sig_arg(fcinfo, 0, &na);
	const uint32 *b = nd_minhash_sig_arg(fcinfo, 1, &nb);

	if (na != nb)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("minhash signatures must have the same length"),
				 errdetail("The signatures have %d and %d values.", na, nb)));
	PG_RETURN_FLOAT8(nd_minhash_estimate(a, b, na));
}

/*
 * The core's nd_sort_unique() with PostgreSQL's qsort made interruptible: a
 * long document has tens of millions of features, seconds of sorting that
 * a statement_timeout or a cancel must be able to stop.
 */
#define ST_SORT sort_features
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : *(a) > *(b) ? 1 : 0)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DECLARE
#define ST_DEFINE
#include "lib/sort_template.h"

static size_t
sort_unique(uint64 *v, size_t n)
{
	size_t		m = 0;

	if (n == 0)
		return 0;
	sort_features(v, n);
	for (size_t i = 1; i < n; i++)
		if (v[i] != v[m])
			v[++m] = v[i];
	return m + 1;
}

/* |a ∩ b| / |a ∪ b| of two feature multisets, or false when both are empty */
static bool
exact_jaccard(NdFeatureList *a, NdFeatureList *b, float8 *j)
{
	size_t		common;

	a->n = sort_unique(a->v, a->n);
	b->n = sort_unique(b->v, b->n);
	CHECK_FOR_INTERRUPTS();
	if (a->n == 0 && b->n == 0)
		return false;
	common = nd_count_common(a->v, a->n, b->v, b->n);
	*j = (float8) common / (float8) (a->n + b->n - common);
	return true;
}

/* jaccard(a text, b text, shingle int4, unit text, seed int8) → float8 */
PG_FUNCTION_INFO_V1(nd_jaccard_text);
Datum
nd_jaccard_text(PG_FUNCTION_ARGS)
{
	text	   *a = PG_GETARG_TEXT_PP(0);
	text	   *b = PG_GETARG_TEXT_PP(1);
	NdTextParams p = nd_text_params(fcinfo, 2, 3, 4);
	NdFeatureList	fa,
				fb;
	float8		j;

	nd_feature_list_init(&fa, MaxAllocHugeSize / sizeof(uint64));
	nd_feature_list_init(&fb, MaxAllocHugeSize / sizeof(uint64));
	nd_text_features(a, &p, nd_feature_list_add, &fa, NULL, NULL);
	nd_text_features(b, &p, nd_feature_list_add, &fb, NULL, NULL);
	if (!exact_jaccard(&fa, &fb, &j))
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(j);
}

/*
 * The elements of a one-dimensional bigint[] or text[] as a feature list;
 * NULLs skipped.  Strings are hashed as minhash(text[]) hashes them with
 * seed 0 (XXH3-64): sets of 64-bit hashes, a false match having
 * probability about n^2 / 2^64.
 */
static void
feature_set(ArrayType *arr, NdFeatureList *fs)
{
	Datum	   *values;
	bool	   *nulls;
	int			n;
	Oid			elemtype = ARR_ELEMTYPE(arr);

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature array must be one-dimensional")));
	if (elemtype == INT8OID)
		deconstruct_array(arr, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &values, &nulls, &n);
	else
		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &values, &nulls, &n);
	fs->cap = fs->limit = Max(n, 1);
	fs->n = 0;
	fs->v = palloc(fs->cap * sizeof(uint64));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			continue;
		if (elemtype == INT8OID)
			fs->v[fs->n++] = (uint64) DatumGetInt64(values[i]);
		else
			fs->v[fs->n++] = nd_hash_text(DatumGetTextPP(values[i]), 0);
	}
}

/*
 * jaccard(a bigint[], b bigint[]) and jaccard(a text[], b text[]) → float8:
 * the arrays as sets (NULLs skipped, as minhash() skips them).
 */
PG_FUNCTION_INFO_V1(nd_jaccard_int8_array);
Datum
nd_jaccard_int8_array(PG_FUNCTION_ARGS)
{
	NdFeatureList	fa,
				fb;
	float8		j;

	feature_set(PG_GETARG_ARRAYTYPE_P(0), &fa);
	feature_set(PG_GETARG_ARRAYTYPE_P(1), &fb);
	if (!exact_jaccard(&fa, &fb, &j))
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(j);
}

/* The same C function serves text[]: feature_set() reads the element type. */
PG_FUNCTION_INFO_V1(nd_jaccard_text_array);
Datum
nd_jaccard_text_array(PG_FUNCTION_ARGS)
{
	return nd_jaccard_int8_array(fcinfo);
}
