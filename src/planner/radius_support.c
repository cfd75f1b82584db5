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
 * simhash64_hamming (<~>), hamming_distance, simhash_similarity and
 * minhash_bands carry hamming_support.  Its main job is to be called:
 * expression preprocessing asks it to simplify each call, which loads this
 * library, whose _PG_init installs the rewrite hook (radius_rewrite.c) in
 * time for the first query of a session, without shared_preload_libraries.
 * It also turns hamming_distance(a, b) into a <~> b, so that ORDER BY
 * hamming_distance(..) is a nearest-neighbour index scan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "planner/radius_planner.h"
#include "type/hamming_ball.h"

static Const *
radius_const(int32 r)
{
	return makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(r),
					 false, true);
}

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

	/*
	 * within() takes any radius, but hamming_ball() only 0..64 (22023
	 * otherwise).  Above 64 every code is within, so a radius is clamped to
	 * 64 exactly; below 0 none is, which the ball of radius 0 cannot say, so
	 * within() is rechecked then.  A radius known only at run time is
	 * clamped into 0..64 there, and rechecked.
	 */
	req->lossy = false;
	if (IsA(radius, Const))
	{
		Const	   *c = (Const *) radius;

		if (!c->constisnull && DatumGetInt32(c->constvalue) > HAMMING_BALL_ALL)
			radius = (Node *) radius_const(HAMMING_BALL_ALL);
		else if (!c->constisnull && DatumGetInt32(c->constvalue) < 0)
		{
			radius = (Node *) radius_const(0);
			req->lossy = true;
		}
		else
			radius = copyObject(radius);
	}
	else
	{
		Node	   *upper = (Node *) makeFuncExpr(F_INT4SMALLER, INT4OID,
												  list_make2(copyObject(radius),
															 radius_const(HAMMING_BALL_ALL)),
												  InvalidOid, InvalidOid,
												  COERCE_EXPLICIT_CALL);

		radius = (Node *) makeFuncExpr(F_INT4LARGER, INT4OID,
									   list_make2(upper, radius_const(0)),
									   InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
		req->lossy = true;
	}

	cond = (OpExpr *)
		make_opclause(cat->in_ball_op, BOOLOID, false,
					  (Expr *) copyObject(indexed),
					  (Expr *) makeFuncExpr(cat->ball_fn, cat->hamming_ball_type,
											list_make2(copyObject(other), radius),
											InvalidOid, InvalidOid,
											COERCE_EXPLICIT_CALL),
					  InvalidOid, InvalidOid);
	cond->opfuncid = get_opcode(cat->in_ball_op);
	cond->location = call->location;
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
 * hamming_distance(a, b) as the operator a <~> b.  Only the operator is an
 * ordering operator of the hamming and GiST operator classes, so only
 * `ORDER BY a <~> b` can be a nearest-neighbour index scan; once simplified,
 * every spelling with hamming_distance() plans as its <~> twin.  Both call
 * the same C code, so the answers are the same.
 */
static Node *
distance_as_operator(SupportRequestSimplify *req)
{
	FuncExpr   *call = req->fcall;
	const NdCatalog *cat;
	OpExpr	   *op;

	if (list_length(call->args) != 2)
		return NULL;
	cat = nd_catalog();
	if (!cat->installed || call->funcid != cat->distance_fn ||
		!OidIsValid(cat->distance_op))
		return NULL;

	op = (OpExpr *) make_opclause(cat->distance_op, INT4OID, false,
								  (Expr *) linitial(call->args),
								  (Expr *) lsecond(call->args),
								  InvalidOid, InvalidOid);
	op->opfuncid = cat->hamming_fn;
	op->location = call->location;
	return (Node *) op;
}

/*
 * Support function of <~>, hamming_distance(), simhash_similarity() and
 * minhash_bands(): being called is the point (see the file header).  A
 * call of hamming_distance() is also simplified into <~>.
 */
PG_FUNCTION_INFO_V1(hamming_support);
Datum
hamming_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestSimplify))
		PG_RETURN_POINTER(distance_as_operator((SupportRequestSimplify *) rawreq));

	PG_RETURN_POINTER(NULL);
}
