/*-------------------------------------------------------------------------
 *
 * radius_support.c
 *		Planner support functions: within() and the distance functions.
 *
 * within(a, b, r) answers two requests:
 *
 *	- SupportRequestIndexCondition: when a or b is an indexed column whose
 *	  operator family has `simhash64 <@ hamming_ball`, the exact index
 *	  condition `col <@ hamming_ball(other, r)`.  indxpath.c calls this for
 *	  restriction and join clauses alike, so join clauses give
 *	  parameterized index scans on the inner side of a nested loop.
 *	- SupportRequestSelectivity: see radius_selectivity.c.
 *
 * simhash64_hamming (<~>) and hamming_distance carry a support function that
 * answers nothing.  Its job is to be called: expression preprocessing asks
 * it to simplify each call, which loads this library, whose _PG_init
 * installs the rewrite hook (radius_rewrite.c) in time for the first query
 * of a session, without shared_preload_libraries.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"

#include "radius_planner.h"

static List *
within_index_condition(SupportRequestIndexCondition *req)
{
	const NdCatalog *cat;
	FuncExpr   *call;
	Node	   *indexed,
			   *other,
			   *radius;
	OpExpr	   *cond;

	if (!IsA(req->node, FuncExpr))
		return NIL;
	call = (FuncExpr *) req->node;
	if (list_length(call->args) != 3 || (req->indexarg != 0 && req->indexarg != 1))
		return NIL;

	cat = nd_catalog();
	if (!cat->installed || !op_in_opfamily(cat->in_ball_op, req->opfamily))
		return NIL;

	indexed = (Node *) list_nth(call->args, req->indexarg);
	other = (Node *) list_nth(call->args, 1 - req->indexarg);
	radius = (Node *) lthird(call->args);

	/*
	 * The ball is computed once per scan, so it may only use values fixed
	 * during the scan: no column of the indexed table, nothing volatile.
	 */
	if (!is_pseudo_constant_for_index(req->root, other, req->index) ||
		!is_pseudo_constant_for_index(req->root, radius, req->index))
		return NIL;

	cond = (OpExpr *)
		make_opclause(cat->in_ball_op, BOOLOID, false,
					  (Expr *) copyObject(indexed),
					  (Expr *) makeFuncExpr(cat->ball_fn, cat->hamming_ball_type,
											list_make2(copyObject(other),
													   copyObject(radius)),
											InvalidOid, InvalidOid,
											COERCE_EXPLICIT_CALL),
					  InvalidOid, InvalidOid);
	cond->opfuncid = get_opcode(cat->in_ball_op);
	cond->location = call->location;

	/* hamming_ball() clamps the radius, which changes no answer. */
	req->lossy = false;
	return list_make1(cond);
}

PG_FUNCTION_INFO_V1(within_support);
Datum
within_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestIndexCondition))
	{
		List	   *conds = within_index_condition((SupportRequestIndexCondition *) rawreq);

		if (conds != NIL)
			PG_RETURN_POINTER(conds);
	}
	else if (IsA(rawreq, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) rawreq;

		if (list_length(req->args) == 3 && nd_catalog()->installed)
		{
			Node	   *a = (Node *) linitial(req->args);
			Node	   *b = (Node *) lsecond(req->args);
			Node	   *r = (Node *) lthird(req->args);

			if (req->is_join)
				req->selectivity = nd_radius_join_sel(req->root, a, b, r, req->sjinfo);
			else
				req->selectivity = nd_radius_restriction_sel(req->root, a, b, r,
															 req->varRelid);
			PG_RETURN_POINTER(req);
		}
	}

	PG_RETURN_POINTER(NULL);
}

/*
 * Support function of <~> and hamming_distance(): being called is the
 * point (see the file header).
 */
PG_FUNCTION_INFO_V1(hamming_support);
Datum
hamming_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(NULL);
}
