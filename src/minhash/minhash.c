/*-------------------------------------------------------------------------
 *
 * minhash.c
 *		minhash(): MinHash signatures of a document's shingles (the features
 *		simhash(text) sees), of text[] features (hashed here) and of bigint[]
 *		features (already hashed), as int4[]; and reading signatures back.
 *
 * A signature is num_perm int4 values, each the 32 high bits of a 64-bit
 * minimum (nd_minhash.h): half the size of int8 values, and two different
 * minima agree by chance with probability 2^-32, far below the estimate's
 * own noise (1/num_perm at best).  datasketch also stores 32-bit values.
 *
 * Features form a set: order and repetitions do not matter.  NULL elements
 * of feature arrays are skipped, as simhash() skips them.  No feature at
 * all: NULL, as simhash() does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "shared/progress.h"
#include "core/nd_features.h"
#include "core/nd_minhash.h"
#include "fingerprint/text_features.h"
#include "minhash/minhash.h"

/* Features handed to the accumulator between two interrupt checks. */
#define CHECK_EVERY 65536

static int
num_perm_arg(FunctionCallInfo fcinfo, int argno)
{
	int32		k = PG_GETARG_INT32(argno);
	const char *problem = nd_minhash_check(k);

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid num_perm %d", k),
				 errdetail("%s.", problem)));
	return k;
}

/*
 * Per call site (fn_extra): the bins' working memory and the densification
 * walks' starts, which depend only on num_perm and the seed; a column of
 * documents is usually hashed with one pair, so they are computed once.
 */
typedef struct MinhashCache
{
	int			k;
	uint64		seed;
	uint64	   *mins;			/* k values */
	uint16		starts[FLEXIBLE_ARRAY_MEMBER];	/* k * ND_MINHASH_WALKS */
} MinhashCache;

static void
minhash_start(FunctionCallInfo fcinfo, nd_minhash *mh, int k, uint64 seed)
{
	MinhashCache *c = (MinhashCache *) fcinfo->flinfo->fn_extra;

	if (c == NULL || c->k != k || c->seed != seed)
	{
		Size		starts = (Size) k * ND_MINHASH_WALKS * sizeof(uint16);

		if (c)
			pfree(c);
		c = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt,
							   MAXALIGN(offsetof(MinhashCache, starts) + starts) +
							   (Size) k * sizeof(uint64));
		c->k = k;
		c->seed = seed;
		c->mins = (uint64 *) ((char *) c + MAXALIGN(offsetof(MinhashCache, starts) + starts));
		nd_minhash_starts(k, seed, c->starts);
		fcinfo->flinfo->fn_extra = c;
	}
	nd_minhash_init(mh, k, seed, c->mins, c->starts);
}

/* The signature as int4[], or NULL when no feature was added. */
static ArrayType *
signature_array(const nd_minhash *mh)
{
	Size		size = ARR_OVERHEAD_NONULLS(1) + (Size) mh->k * sizeof(int32);
	ArrayType  *arr;

	if (mh->n == 0)
		return NULL;
	arr = palloc(size);
	SET_VARSIZE(arr, size);
	arr->ndim = 1;
	arr->dataoffset = 0;
	arr->elemtype = INT4OID;
	ARR_DIMS(arr)[0] = mh->k;
	ARR_LBOUND(arr)[0] = 1;
	nd_minhash_result(mh, (uint32_t *) ARR_DATA_PTR(arr));
	return arr;
}

static void
add_features(void *arg, const uint64_t *features, size_t n)
{
	nd_minhash_add((nd_minhash *) arg, features, n);
}

/*
 * minhash(doc text, num_perm int4, shingle int4, unit text, seed int8)
 * → int4[], or NULL when the text has no tokens.  The seed keys both the
 * features (as for simhash) and the permutation.
 */
PG_FUNCTION_INFO_V1(nd_minhash_text);
Datum
nd_minhash_text(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	int			k = num_perm_arg(fcinfo, 1);
	NdTextParams p = nd_text_params(fcinfo, 2, 3, 4);
	nd_minhash	mh;
	ArrayType  *sig;

	nd_progress_fingerprint(ND_FINGERPRINT_MINHASH, VARSIZE_ANY_EXHDR(doc));
	minhash_start(fcinfo, &mh, k, p.seed);
	nd_text_features(doc, &p, add_features, &mh, NULL, NULL);
	sig = signature_array(&mh);
	if (sig == NULL)
		PG_RETURN_NULL();
	PG_RETURN_ARRAYTYPE_P(sig);
}

static Datum
minhash_of_array(FunctionCallInfo fcinfo, Oid elemtype)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int			k = num_perm_arg(fcinfo, 1);
	uint64		seed = (uint64) PG_GETARG_INT64(2);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *values;
	bool	   *nulls;
	int			n;
	uint64		batch[256];
	int			nb = 0;
	nd_minhash	mh;
	ArrayType  *sig;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature array must be one-dimensional")));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign, &values, &nulls, &n);

	minhash_start(fcinfo, &mh, k, seed);
	for (int i = 0; i < n; i++)
	{
		if ((i & (CHECK_EVERY - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
		if (nulls[i])
			continue;
		if (elemtype == INT8OID)
			batch[nb++] = (uint64) DatumGetInt64(values[i]);
		else
			batch[nb++] = nd_hash_text(DatumGetTextPP(values[i]), seed);
		if (nb == lengthof(batch))
		{
			nd_minhash_add(&mh, batch, nb);
			nb = 0;
		}
	}
	nd_minhash_add(&mh, batch, nb);

	sig = signature_array(&mh);
	if (sig == NULL)
		PG_RETURN_NULL();
	PG_RETURN_ARRAYTYPE_P(sig);
}

/* minhash(features text[], num_perm int4, seed int8) */
PG_FUNCTION_INFO_V1(nd_minhash_text_array);
Datum
nd_minhash_text_array(PG_FUNCTION_ARGS)
{
	return minhash_of_array(fcinfo, TEXTOID);
}

/* minhash(features bigint[], num_perm int4, seed int8) */
PG_FUNCTION_INFO_V1(nd_minhash_int8_array);
Datum
nd_minhash_int8_array(PG_FUNCTION_ARGS)
{
	return minhash_of_array(fcinfo, INT8OID);
}

const uint32 *
nd_minhash_sig_arg(FunctionCallInfo fcinfo, int argno, int *len)
{
	return nd_minhash_sig_array(PG_GETARG_ARRAYTYPE_P(argno), len);
}

const uint32 *
nd_minhash_sig_array(ArrayType *arr, int *len)
{
	int			n;

	if (ARR_ELEMTYPE(arr) != INT4OID)	/* not reachable through SQL */
		elog(ERROR, "minhash signature must be int4[]");
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("minhash signature must be one-dimensional")));
	if (array_contains_nulls(arr))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("minhash signature must not contain nulls")));
	n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signature must not be empty")));
	if (n > ND_MINHASH_MAX_PERM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signature has %d values", n),
				 errdetail("A signature has at most %d values.", ND_MINHASH_MAX_PERM)));
	*len = n;
	return (const uint32 *) ARR_DATA_PTR(arr);
}
