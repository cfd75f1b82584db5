/*-------------------------------------------------------------------------
 *
 * classic_minhash.c
 *		The classic k-permutation MinHash, for the MinHash benchmark only
 *		(test/bench/run_minhash.sh builds it into a throwaway library; it is
 *		not part of the extension).
 *
 * classic_minhash(features bigint[], num_perm int4) → int4[]: for each of
 * the k values, every feature is hashed with that value's own key (the
 * same murmur3 finalizer neardup's core uses) and the minimum is kept:
 * k hashes per feature, O(n · k).  Output: the high 32 bits of each
 * minimum, like minhash().  Its estimates are as good as minhash()'s; it
 * is here to show what one-permutation hashing saves.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"

#include "nd_mix.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(classic_minhash);
Datum
classic_minhash(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int32		k = PG_GETARG_INT32(1);
	Datum	   *values;
	bool	   *nulls;
	int			n;
	uint64	   *keys;
	uint64	   *mins;
	int32	   *out;
	ArrayType  *sig;
	Size		size;

	if (k < 1 || k > 8192)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_perm must be between 1 and 8192")));
	deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &values, &nulls, &n);

	keys = palloc(k * sizeof(uint64));
	mins = palloc(k * sizeof(uint64));
	for (int j = 0; j < k; j++)
	{
		keys[j] = nd_fmix64(0x9E3779B97F4A7C15ull * (uint64) (j + 1));
		mins[j] = PG_UINT64_MAX;
	}
	/* feature-major: each feature's k hashes, the keys and minima in cache */
	for (int i = 0; i < n; i++)
	{
		uint64		x;

		if (nulls[i])
			continue;
		x = (uint64) DatumGetInt64(values[i]);
		for (int j = 0; j < k; j++)
		{
			uint64		v = nd_fmix64(x ^ keys[j]);

			mins[j] = v < mins[j] ? v : mins[j];
		}
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	size = ARR_OVERHEAD_NONULLS(1) + (Size) k * sizeof(int32);
	sig = palloc0(size);
	SET_VARSIZE(sig, size);
	sig->ndim = 1;
	sig->elemtype = INT4OID;
	ARR_DIMS(sig)[0] = k;
	ARR_LBOUND(sig)[0] = 1;
	out = (int32 *) ARR_DATA_PTR(sig);
	for (int j = 0; j < k; j++)
		out[j] = (int32) (uint32) (mins[j] >> 32);
	PG_RETURN_ARRAYTYPE_P(sig);
}
