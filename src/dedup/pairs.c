/*-------------------------------------------------------------------------
 *
 * pairs.c
 *		simhash_pairs(): every pair of rows whose fingerprints are within a
 *		Hamming distance, exactly, with permuted sorted tables
 *		(src/core/nd_allpairs.c, read and batched by allpairs_scan.c;
 *		doc/dedup.md).
 *
 * A value-per-call function, so that a caller who stops early stops the
 * work: the scan runs the core one piece at a time (all rows in memory, or
 * one batch of one table past work_mem) reporting only the pairs of groups
 * of identical codes (linear in the distinct codes near each other, kept in
 * a tuplestore that spills past work_mem), and the pairs themselves --
 * quadratic in a group's size -- are expanded from those one row per call
 * (nd_pair_expander) and never stored.  That is for a call in the select
 * list (`SELECT simhash_pairs(...)`), where LIMIT or a cursor's FETCH stops
 * the expansion.  In FROM, PostgreSQL stores the whole result before the
 * first row whatever the function does (nodeFunctionscan.c), and says so
 * with SFRM_Materialize_Preferred: there every pair goes straight from the
 * core into the result's tuplestore, which is cheaper than a call per row.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "dedup/allpairs_scan.h"

/* ---- in FROM: the whole result at once ---- */

typedef struct PairsOut
{
	Tuplestorestate *tupstore;
	TupleDesc	tupdesc;
} PairsOut;

static void
pairs_emit(void *arg, int64 id_a, int64 id_b, int dist)
{
	PairsOut   *out = (PairsOut *) arg;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = Int64GetDatum(id_a);
	values[1] = Int64GetDatum(id_b);
	values[2] = Int32GetDatum(dist);
	tuplestore_putvalues(out->tupstore, out->tupdesc, values, nulls);
}

static void
pairs_materialize(FunctionCallInfo fcinfo, const char *query, int k, bool auto_blocks,
				  int blocks)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PairsOut	out;
	NdAllPairsSpec spec = {0};

	InitMaterializedSRF(fcinfo, 0);
	out.tupstore = rsinfo->setResult;
	out.tupdesc = rsinfo->setDesc;
	spec.fname = "simhash_pairs";
	spec.k = k;
	spec.auto_blocks = auto_blocks;
	spec.blocks = blocks;
	spec.output = ND_ALLPAIRS_PAIRS;
	spec.emit = pairs_emit;
	spec.arg = &out;
	nd_allpairs_scan(fcinfo, query, &spec);
}

/* ---- in the select list: a row per call ---- */

/*
 * The pairs of groups of the current piece are kept, until it is expanded,
 * in rows of the result's own shape (bigint, bigint, int): positions in
 * the piece's items stand where the ids will.
 */
typedef struct PairsStream
{
	NdAllPairsSpec spec;
	NdAllPairsScan *scan;		/* NULL once every piece is out */
	NdAllPairsPiece piece;
	nd_pair_expander ex;
	PairsOut	groups;			/* tupstore NULL between pieces */
	TupleTableSlot *groups_slot;
	ExprContext *econtext;		/* where end_stream is registered */
} PairsStream;

/* Closes the scan's files: at the end, or when the caller stops early. */
static void
end_stream(Datum arg)
{
	PairsStream *st = (PairsStream *) DatumGetPointer(arg);

	if (st->scan != NULL)
		nd_allpairs_scan_end(st->scan);
	st->scan = NULL;
	if (st->groups.tupstore != NULL)
		tuplestore_end(st->groups.tupstore);
	st->groups.tupstore = NULL;
}

static void
pairs_begin(FunctionCallInfo fcinfo, const char *query, int k, bool auto_blocks,
			int blocks)
{
	FuncCallContext *funcctx = (FuncCallContext *) fcinfo->flinfo->fn_extra;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PairsStream *st;

	st = palloc0(sizeof(PairsStream));
	st->spec.fname = "simhash_pairs";
	st->spec.k = k;
	st->spec.auto_blocks = auto_blocks;
	st->spec.blocks = blocks;
	st->spec.output = ND_ALLPAIRS_GROUPS;
	st->spec.emit = pairs_emit;
	st->spec.arg = &st->groups;
	st->groups.tupdesc = funcctx->tuple_desc;
	st->groups_slot = MakeSingleTupleTableSlot(st->groups.tupdesc, &TTSOpsMinimalTuple);
	st->econtext = rsinfo->econtext;
	RegisterExprContextCallback(st->econtext, end_stream, PointerGetDatum(st));
	st->scan = nd_allpairs_scan_begin(fcinfo, query, &st->spec);
	funcctx->user_fctx = st;
}

/*
 * The next pair: from the expansion of the current piece, which takes its
 * pairs of groups one by one, or from the next piece.
 */
static bool
pairs_next(PairsStream *st, int64 *id_a, int64 *id_b, int *dist)
{
	for (;;)
	{
		if (st->groups.tupstore != NULL)
		{
			if (nd_pair_expander_next(&st->ex, id_a, id_b, dist))
				return true;
			if (tuplestore_gettupleslot(st->groups.tupstore, true, false, st->groups_slot))
			{
				bool		isnull;
				int64		pos_a = DatumGetInt64(slot_getattr(st->groups_slot, 1, &isnull));
				int64		pos_b = DatumGetInt64(slot_getattr(st->groups_slot, 2, &isnull));
				int			d = DatumGetInt32(slot_getattr(st->groups_slot, 3, &isnull));

				nd_pair_expander_set_groups(&st->ex, (uint32) pos_a, (uint32) pos_b, d);
				continue;
			}
			tuplestore_end(st->groups.tupstore);
			st->groups.tupstore = NULL;
		}
		if (st->scan == NULL)
			return false;
		/* the next piece: its pairs of groups, then its groups */
		st->groups.tupstore = tuplestore_begin_heap(false, false, work_mem);
		if (!nd_allpairs_scan_next(st->scan, &st->piece))
		{
			end_stream(PointerGetDatum(st));
			return false;
		}
		nd_pair_expander_init(&st->ex, st->piece.items, st->piece.n, st->piece.t_begin == 0);
	}
}

static Datum
pairs_srf(FunctionCallInfo fcinfo, void (*form) (FunctionCallInfo, nd_allpairs_body))
{
	FuncCallContext *funcctx;
	PairsStream *st;
	int64		id_a,
				id_b;
	int			dist;

	if (SRF_IS_FIRSTCALL())
	{
		ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
		MemoryContext oldcxt;
		TupleDesc	tupdesc;

		if (rsinfo != NULL && IsA(rsinfo, ReturnSetInfo) &&
			(rsinfo->allowedModes & SFRM_Materialize_Preferred) &&
			(rsinfo->allowedModes & SFRM_Materialize))
		{
			form(fcinfo, pairs_materialize);
			return (Datum) 0;
		}
		funcctx = SRF_FIRSTCALL_INIT();
		oldcxt = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "simhash_pairs must return a row type");
		funcctx->tuple_desc = BlessTupleDesc(tupdesc);
		form(fcinfo, pairs_begin);
		MemoryContextSwitchTo(oldcxt);
	}
	funcctx = SRF_PERCALL_SETUP();
	st = (PairsStream *) funcctx->user_fctx;
	CHECK_FOR_INTERRUPTS();
	if (st != NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		bool		found = pairs_next(st, &id_a, &id_b, &dist);

		MemoryContextSwitchTo(oldcxt);
		if (found)
		{
			Datum		values[3];
			bool		nulls[3] = {false, false, false};

			values[0] = Int64GetDatum(id_a);
			values[1] = Int64GetDatum(id_b);
			values[2] = Int32GetDatum(dist);
			SRF_RETURN_NEXT(funcctx,
							HeapTupleGetDatum(heap_form_tuple(funcctx->tuple_desc, values, nulls)));
		}
		UnregisterExprContextCallback(st->econtext, end_stream, PointerGetDatum(st));
	}
	SRF_RETURN_DONE(funcctx);
}

/*
 * simhash_pairs(query text, max_distance int4 DEFAULT 3, blocks int4 DEFAULT
 * NULL): the query returns (id, fingerprint).
 */
PG_FUNCTION_INFO_V1(simhash_pairs_query);
Datum
simhash_pairs_query(PG_FUNCTION_ARGS)
{
	return pairs_srf(fcinfo, nd_allpairs_query_form);
}

/*
 * simhash_pairs(source regclass, id_column name, fingerprint_column name,
 * max_distance int4 DEFAULT 3, blocks int4 DEFAULT NULL)
 */
PG_FUNCTION_INFO_V1(simhash_pairs_rel);
Datum
simhash_pairs_rel(PG_FUNCTION_ARGS)
{
	return pairs_srf(fcinfo, nd_allpairs_rel_form);
}

/* simhash_pairs(source text, id_column text, fingerprint_column text, ...) */
PG_FUNCTION_INFO_V1(simhash_pairs_relname);
Datum
simhash_pairs_relname(PG_FUNCTION_ARGS)
{
	return pairs_srf(fcinfo, nd_allpairs_relname_form);
}
