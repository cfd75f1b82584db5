/*-------------------------------------------------------------------------
 *
 * band_keys.c
 *		simhash_band_keys() and simhash_band_first(): the permuted tables of
 *		simhash_pairs() as join keys, so that a plain SQL self-join (hash
 *		join on the key) finds the same pairs (doc/dedup.md).
 *
 * Key i of a fingerprint is the value of table i's leading blocks, with i
 * mixed in.  Two fingerprints within max_distance agree on the leading
 * blocks of at least one table, hence share that key.  A pair sharing
 * several keys is kept only at the first one: simhash_band_first(a, b, i)
 * says whether key i is that one, so the join needs no DISTINCT.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "core/nd_allpairs.h"
#include "dedup/pairs_args.h"
#include "type/simhash64.h"

/* The tables of one (max_distance, blocks), cached in fn_extra. */
typedef struct BandCache
{
	int			k;
	int			m;
	nd_pairs_plan plan;
	nd_pairs_table tabs[FLEXIBLE_ARRAY_MEMBER];
} BandCache;

static const BandCache *
band_cache(FunctionCallInfo fcinfo, int k, bool auto_blocks, int m)
{
	BandCache  *c = (BandCache *) fcinfo->flinfo->fn_extra;
	nd_pairs_plan plan;
	uint32		lead;

	nd_check_pairs_args(k, auto_blocks, m);
	if (auto_blocks)
		m = nd_band_auto_blocks(k);
	if (c != NULL && c->k == k && c->m == m)
		return c;

	nd_pairs_plan_init(&plan, k, m);
	if (c != NULL)
		pfree(c);
	c = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt,
						   offsetof(BandCache, tabs) + sizeof(nd_pairs_table) * plan.ntables);
	c->k = k;
	c->m = m;
	c->plan = plan;
	lead = nd_pairs_first_lead(&plan);
	for (int t = 0; t < plan.ntables; t++, lead = nd_pairs_next_lead(lead))
		nd_pairs_table_init(&plan, t, lead, &c->tabs[t]);
	fcinfo->flinfo->fn_extra = c;
	return c;
}

static Datum
band_keys(FunctionCallInfo fcinfo, bool auto_blocks)
{
	uint64		code = PG_GETARG_SIMHASH64(0);
	const BandCache *c = band_cache(fcinfo, PG_GETARG_INT32(1), auto_blocks,
									auto_blocks ? 0 : PG_GETARG_INT32(2));
	Datum	   *keys = palloc(sizeof(Datum) * c->plan.ntables);

	for (int t = 0; t < c->plan.ntables; t++)
		keys[t] = Int64GetDatum(nd_band_key(&c->tabs[t], code));
	PG_RETURN_ARRAYTYPE_P(construct_array(keys, c->plan.ntables, INT8OID,
										  sizeof(int64), FLOAT8PASSBYVAL,
										  TYPALIGN_DOUBLE));
}

/* simhash_band_keys(fingerprint, max_distance DEFAULT 3): blocks chosen */
PG_FUNCTION_INFO_V1(simhash_band_keys);
Datum
simhash_band_keys(PG_FUNCTION_ARGS)
{
	return band_keys(fcinfo, true);
}

/* simhash_band_keys(fingerprint, max_distance, blocks) */
PG_FUNCTION_INFO_V1(simhash_band_keys_blocks);
Datum
simhash_band_keys_blocks(PG_FUNCTION_ARGS)
{
	return band_keys(fcinfo, false);
}

static Datum
band_first(FunctionCallInfo fcinfo, bool auto_blocks)
{
	uint64		a = PG_GETARG_SIMHASH64(0);
	uint64		b = PG_GETARG_SIMHASH64(1);
	int32		key_index = PG_GETARG_INT32(2);
	const BandCache *c = band_cache(fcinfo, PG_GETARG_INT32(3), auto_blocks,
									auto_blocks ? 0 : PG_GETARG_INT32(4));
	int			first;

	/*
	 * key_index counts from 1, as unnest ... WITH ORDINALITY does; the
	 * first table is -1 when a and b share no key, which no key_index names
	 * (0 included).
	 */
	first = nd_pairs_first_table(&c->plan, nd_pairs_agree(&c->plan, a, b));
	PG_RETURN_BOOL(first >= 0 && first + 1 == key_index);
}

/*
 * simhash_band_first(a, b, key_index, max_distance DEFAULT 3): is key
 * key_index the first key a and b share?
 */
PG_FUNCTION_INFO_V1(simhash_band_first);
Datum
simhash_band_first(PG_FUNCTION_ARGS)
{
	return band_first(fcinfo, true);
}

/* simhash_band_first(a, b, key_index, max_distance, blocks) */
PG_FUNCTION_INFO_V1(simhash_band_first_blocks);
Datum
simhash_band_first_blocks(PG_FUNCTION_ARGS)
{
	return band_first(fcinfo, false);
}
