/*-------------------------------------------------------------------------
 *
 * band_support.c
 *		MinHash band lookups that the planner estimates from the bands.
 *
 * A band lookup is `minhash_bands(sig, b, r) && minhash_bands(q, b, r)`
 * with a GIN index on the first call.  The built-in estimator of `&&`
 * (arraycontsel) charges every key it finds no statistics for 0.5% of the
 * rows; band keys are nearly unique, so none has statistics, and on 1M
 * documents 9 bands were estimated at about 15,000 rows where 2 match --
 * enough to start parallel workers for a one-row answer.
 *
 * radius_rewrite.c turns such an overlap into minhash_bands_overlap(a, b),
 * which computes the same thing (arrayoverlap) and carries this support
 * function:
 *
 *	- SupportRequestIndexCondition: `a && b` again, with the indexed call on
 *	  the left, for a GIN index on it (exact: no recheck needed);
 *	- SupportRequestSelectivity: each key of the query's bands matches the
 *	  rows ANALYZE saw it in, if it is among the most common elements of the
 *	  indexed expression, and otherwise about one row (a band key is shared
 *	  only by near-duplicates); the lookup matches about the most common
 *	  key's rows and one more row per key.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "planner/radius_planner.h"

/* Band keys assumed when the query's are not known at plan time */
#define ND_DEFAULT_BAND_KEYS	16

/*
 * The built-in && itself, called with this call's fcinfo: arrayoverlap
 * caches the element type's comparison in fn_extra, which a direct call
 * would lack.
 */
PG_FUNCTION_INFO_V1(nd_minhash_bands_overlap);
Datum
nd_minhash_bands_overlap(PG_FUNCTION_ARGS)
{
	return arrayoverlap(fcinfo);
}

static List *
bands_index_condition(SupportRequestIndexCondition *req)
{
	FuncExpr   *call;
	Node	   *indexed,
			   *other;
	OpExpr	   *cond;

	if (!IsA(req->node, FuncExpr))
		return NIL;
	call = (FuncExpr *) req->node;
	if (list_length(call->args) != 2 || (req->indexarg != 0 && req->indexarg != 1) ||
		!op_in_opfamily(OID_ARRAY_OVERLAP_OP, req->opfamily))
		return NIL;
	indexed = (Node *) list_nth(call->args, req->indexarg);
	other = (Node *) list_nth(call->args, 1 - req->indexarg);
	if (!is_pseudo_constant_for_index(req->root, other, req->index))
		return NIL;

	cond = (OpExpr *) make_opclause(OID_ARRAY_OVERLAP_OP, BOOLOID, false,
									(Expr *) copyObject(indexed),
									(Expr *) copyObject(other),
									InvalidOid, call->inputcollid);
	cond->opfuncid = F_ARRAYOVERLAP;
	cond->location = call->location;
	req->lossy = false;
	return list_make1(cond);
}

/*
 * The query's keys the estimate looks at: the first ND_BAND_KEYS_EXAMINED
 * elements of a literal.  A lookup has one key per band (a few dozen); a
 * literal of a million keys must not cost the planner more than reading
 * it, and every key past these counts as one more distinct key.
 */
#define ND_BAND_KEYS_EXAMINED	10000

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/*
 * The distinct non-null keys among the first ND_BAND_KEYS_EXAMINED
 * elements of a constant int8[], sorted (NULL: not a constant); *unseen is
 * the number of elements past those.  Sorting makes this O(n log n) where
 * comparing each key with the kept ones was O(n^2).
 */
static int64 *
const_band_keys(Node *node, int *nkeys, double *unseen)
{
	Const	   *c;
	ArrayType  *arr;
	array_iter	it;
	int64	   *keys;
	int			n,
				m,
				k = 0;

	if (!IsA(node, Const) || ((Const *) node)->constisnull ||
		((Const *) node)->consttype != INT8ARRAYOID)
		return NULL;
	c = (Const *) node;
	arr = DatumGetArrayTypeP(c->constvalue);
	n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	m = Min(n, ND_BAND_KEYS_EXAMINED);
	keys = palloc(sizeof(int64) * Max(m, 1));
	array_iter_setup(&it, (AnyArrayType *) arr);
	for (int i = 0; i < m; i++)
	{
		bool		isnull;
		Datum		d = array_iter_next(&it, &isnull, i, sizeof(int64),
										FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);

		if (!isnull)
			keys[k++] = DatumGetInt64(d);
	}
	if (k > 1)
	{
		int			kept = 1;

		qsort(keys, k, sizeof(int64), cmp_int64);
		for (int i = 1; i < k; i++)
			if (keys[i] != keys[kept - 1])
				keys[kept++] = keys[i];
		k = kept;
	}
	*nkeys = k;
	*unseen = n - m;
	return keys;
}

static int
cmp_int64_datum(const void *key, const void *elem)
{
	int64		x = *(const int64 *) key;
	int64		y = DatumGetInt64(*(const Datum *) elem);

	return (x > y) - (x < y);
}

/*
 * The share of rows one key matches: its frequency among the most common
 * elements, or else about one row (but no more than the rarest common
 * element, which ANALYZE would otherwise have listed).  ANALYZE sorts the
 * most common elements by value (array_typanalyze.c), so a binary search
 * finds the key.
 */
static double
band_key_freq(int64 key, AttStatsSlot *mcelem, double rare)
{
	if (mcelem != NULL)
	{
		Datum	   *hit = bsearch(&key, mcelem->values, mcelem->nvalues,
								  sizeof(Datum), cmp_int64_datum);

		if (hit != NULL)
			return mcelem->numbers[hit - mcelem->values];
	}
	return rare;
}

static Selectivity
bands_restriction_sel(PlannerInfo *root, List *args, int varRelid)
{
	VariableStatData vardata;
	Node	   *other;
	bool		varonleft;
	double		ntuples,
				rare,
				nullfrac = 0,
				common = 0;
	AttStatsSlot mcelem;
	bool		have_mcelem = false;
	int64	   *keys;
	int			nkeys = ND_DEFAULT_BAND_KEYS;
	double		unseen = 0;

	if (!get_restriction_variable(root, args, varRelid, &vardata, &other, &varonleft))
		return -1;
	ntuples = vardata.rel ? Max(vardata.rel->tuples, 1.0) : 1000.0;
	rare = 1.0 / ntuples;
	if (HeapTupleIsValid(vardata.statsTuple))
	{
		nullfrac = ((Form_pg_statistic) GETSTRUCT(vardata.statsTuple))->stanullfrac;
		if (vardata.atttype == INT8ARRAYOID &&
			get_attstatsslot(&mcelem, vardata.statsTuple, STATISTIC_KIND_MCELEM, InvalidOid,
							 ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
		{
			have_mcelem = mcelem.nvalues > 0 && mcelem.nnumbers >= mcelem.nvalues + 2;
			if (have_mcelem)
				rare = Min(rare, mcelem.numbers[mcelem.nvalues] / 2);
			else
				free_attstatsslot(&mcelem);
		}
	}

	/*
	 * The keys of one document are not independent: a group of identical
	 * documents shares all its bands, so a query in it matches the most
	 * common of its keys' rows, not the union of nine such shares.  Hence
	 * the largest key's rows, plus about one row for each of the others.
	 */
	keys = const_band_keys(other, &nkeys, &unseen);
	for (int i = 0; keys && i < nkeys; i++)
	{
		CHECK_FOR_INTERRUPTS();
		common = Max(common, band_key_freq(keys[i],
										   have_mcelem ? &mcelem : NULL, rare));
	}
	if (have_mcelem)
		free_attstatsslot(&mcelem);
	ReleaseVariableStats(vardata);
	return Min(common + (nkeys + unseen) * rare, 1.0) * (1.0 - nullfrac);
}

/*
 * A join on band overlap: each row shares a band with its near-duplicates
 * only, so a pair of rows matches about as often as a row of the larger
 * side is one of a key's few rows, once per key.
 */
static Selectivity
bands_join_sel(PlannerInfo *root, List *args, SpecialJoinInfo *sjinfo)
{
	VariableStatData a,
				b;
	bool		reversed;
	double		ntuples = 1.0;

	get_join_variables(root, args, sjinfo, &a, &b, &reversed);
	if (a.rel)
		ntuples = Max(ntuples, a.rel->tuples);
	if (b.rel)
		ntuples = Max(ntuples, b.rel->tuples);
	ReleaseVariableStats(a);
	ReleaseVariableStats(b);
	return Min(1.0, ND_DEFAULT_BAND_KEYS / ntuples);
}

PG_FUNCTION_INFO_V1(nd_minhash_bands_support);
Datum
nd_minhash_bands_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestIndexCondition))
	{
		List	   *conds = bands_index_condition((SupportRequestIndexCondition *) rawreq);

		if (conds != NIL)
			PG_RETURN_POINTER(conds);
	}
	else if (IsA(rawreq, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) rawreq;
		Selectivity sel = -1;

		if (list_length(req->args) != 2)
			PG_RETURN_POINTER(NULL);
		if (!req->is_join)
			sel = bands_restriction_sel(req->root, req->args, req->varRelid);
		else
			sel = bands_join_sel(req->root, req->args, req->sjinfo);
		if (sel < 0)
			sel = DEFAULT_MATCHING_SEL;
		req->selectivity = Max(Min(sel, 1.0), 0.0);
		PG_RETURN_POINTER(req);
	}

	PG_RETURN_POINTER(NULL);
}
