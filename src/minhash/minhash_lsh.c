/*-------------------------------------------------------------------------
 *
 * minhash_lsh.c
 *		LSH banding of MinHash signatures in SQL: minhash_bands() turns a
 *		signature into one bigint key per band, for a GIN index with the
 *		built-in array opclass (`&&` finds rows sharing a band);
 *		minhash_lsh_params() picks bands and rows for a threshold (and a
 *		recall), minhash_lsh_recall() gives a choice's recall.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"

#include "core/nd_minhash.h"
#include "minhash/minhash.h"

/*
 * minhash_bands(sig int4[], bands int4, rows int4) → bigint[]: key i hashes
 * values i*rows .. i*rows+rows-1 with i mixed in.  Values past bands * rows
 * are not used.  Two signatures share a key exactly when they agree on a
 * whole band (up to 64-bit hash collisions), with probability
 * 1 - (1 - s^rows)^bands for Jaccard similarity s.
 */
PG_FUNCTION_INFO_V1(nd_minhash_bands);
Datum
nd_minhash_bands(PG_FUNCTION_ARGS)
{
	int			n;
	const uint32 *sig = nd_minhash_sig_arg(fcinfo, 0, &n);
	int32		bands = PG_GETARG_INT32(1);
	int32		rows = PG_GETARG_INT32(2);
	Datum	   *keys;

	if (bands < 1 || rows < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands and rows must be positive"),
				 errdetail("bands is %d and rows is %d.", bands, rows)));
	if ((int64) bands * rows > n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d bands of %d rows need %lld signature values",
						bands, rows, (long long) bands * rows),
				 errdetail("The signature has %d values.", n)));

	keys = palloc(bands * sizeof(Datum));
	for (int i = 0; i < bands; i++)
		keys[i] = Int64GetDatum((int64) nd_minhash_band_key(sig + (Size) i * rows, rows, i));
	PG_RETURN_ARRAYTYPE_P(construct_array(keys, bands, INT8OID, sizeof(int64),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static void
lsh_tick(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * minhash_lsh_params(threshold float8, num_perm int4, fp_weight float8,
 * fn_weight float8, recall float8 DEFAULT NULL, OUT bands int4, OUT rows
 * int4): datasketch's choice of (bands, rows) for MinHashLSH(threshold,
 * num_perm, weights), or, with recall, the cheapest (bands, rows) that make
 * a pair of similarity threshold a candidate with that probability (the
 * weights are then not used).  0.2's form has no recall and is STRICT; 0.3's
 * is not (recall defaults to NULL), so a NULL in the first four arguments
 * gives NULL here, as STRICT did.
 */
PG_FUNCTION_INFO_V1(nd_minhash_lsh_params);
Datum
nd_minhash_lsh_params(PG_FUNCTION_ARGS)
{
	float8		threshold;
	int32		k;
	float8		fpw;
	float8		fnw;
	bool		by_recall = PG_NARGS() > 4 && !PG_ARGISNULL(4);
	float8		recall = by_recall ? PG_GETARG_FLOAT8(4) : 0.0;
	const char *problem;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	int			bands,
				rows;

	for (int i = 0; i < 4; i++)
		if (PG_ARGISNULL(i))
			PG_RETURN_NULL();
	threshold = PG_GETARG_FLOAT8(0);
	k = PG_GETARG_INT32(1);
	fpw = PG_GETARG_FLOAT8(2);
	fnw = PG_GETARG_FLOAT8(3);
	problem = nd_minhash_check(k);

	if (!(threshold >= 0.0 && threshold <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("threshold must be between 0 and 1")));
	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid num_perm %d", k),
				 errdetail("%s.", problem)));
	if (!(fpw >= 0.0 && fnw >= 0.0 && isfinite(fpw) && isfinite(fnw) && fpw + fnw > 0.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fp_weight and fn_weight must be finite, non-negative and not both zero")));
	if (by_recall)
		nd_check_lsh_recall(recall);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	if (by_recall)
		nd_lsh_params_for_recall(threshold, k, recall, &bands, &rows);
	else
		/* about 0.1 s at num_perm 8192: cancellable */
		nd_lsh_params_tick(threshold, k, fpw, fnw, &bands, &rows, lsh_tick, NULL);

	values[0] = Int32GetDatum(bands);
	values[1] = Int32GetDatum(rows);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* recall must be in (0, 1] */
void
nd_check_lsh_recall(float8 recall)
{
	if (!(recall > 0.0 && recall <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("recall must be greater than 0 and at most 1")));
}

/*
 * The cheapest (bands, rows) of k values reaching recall at threshold
 * (nd_lsh_params_recall), or 22023 saying what k reaches.
 */
void
nd_lsh_params_for_recall(float8 threshold, int k, float8 recall, int *bands, int *rows)
{
	if (!nd_lsh_params_recall(threshold, k, recall, bands, rows, lsh_tick, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no bands and rows of %d signature values reach recall %g at threshold %g",
						k, recall, threshold),
				 errdetail("The most is %g, with %d bands of one row.",
						   nd_lsh_candidate_prob(threshold, k, 1), k),
				 errhint("Ask for a lower recall, or use longer signatures (num_perm).")));
}

/*
 * minhash_lsh_recall(similarity float8, bands int4, rows int4): the
 * probability 1 - (1 - s^rows)^bands that a pair of that Jaccard similarity
 * shares a band of minhash_bands(sig, bands, rows).
 */
PG_FUNCTION_INFO_V1(nd_minhash_lsh_recall);
Datum
nd_minhash_lsh_recall(PG_FUNCTION_ARGS)
{
	float8		s = PG_GETARG_FLOAT8(0);
	int32		bands = PG_GETARG_INT32(1);
	int32		rows = PG_GETARG_INT32(2);

	if (!(s >= 0.0 && s <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("similarity must be between 0 and 1")));
	if (bands < 1 || rows < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands and rows must be positive"),
				 errdetail("bands is %d and rows is %d.", bands, rows)));
	PG_RETURN_FLOAT8(nd_lsh_candidate_prob(s, bands, rows));
}
