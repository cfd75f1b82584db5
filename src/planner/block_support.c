/*-------------------------------------------------------------------------
 *
 * block_support.c
 *		simhash_block() of a packed row read as its pack's block value.
 *
 * A packed copy's view (doc/scale-out.md, "Packed copies") gives the codes
 * of its packed rows as simhash_in_block(sh, p.v, b, m): sh, whose block b
 * of m is the pack's v.  A query on the view that names
 * simhash_block(sh, b, m) -- the coordinator sends `= v` with a radius
 * search and `= ANY (...)` with a delete -- then reads, in the view's packs
 * branch, simhash_block(simhash_in_block(sh, p.v, b, m), b, m), which this
 * support function simplifies to p.v: a condition on the packs table,
 * which its index on v answers, one value or many.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "utils/lsyscache.h"

#include "fmgr.h"

/* whether two arguments are the same constant int4 */
static bool
same_int4_const(Node *a, Node *b)
{
	return IsA(a, Const) && IsA(b, Const) &&
		!((Const *) a)->constisnull && !((Const *) b)->constisnull &&
		DatumGetInt32(((Const *) a)->constvalue) == DatumGetInt32(((Const *) b)->constvalue);
}

/* whether a function is neardup_internal.simhash_in_block */
static bool
is_in_block(Oid funcid)
{
	char	   *name = get_func_name(funcid);

	return name != NULL && strcmp(name, "simhash_in_block") == 0 &&
		get_func_namespace(funcid) == get_namespace_oid("neardup_internal", true);
}

PG_FUNCTION_INFO_V1(simhash_block_support);
Datum
simhash_block_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	FuncExpr   *call;
	FuncExpr   *inner;

	if (!IsA(rawreq, SupportRequestSimplify))
		PG_RETURN_POINTER(NULL);
	call = ((SupportRequestSimplify *) rawreq)->fcall;
	if (list_length(call->args) != 3 || !IsA(linitial(call->args), FuncExpr))
		PG_RETURN_POINTER(NULL);
	inner = (FuncExpr *) linitial(call->args);
	if (list_length(inner->args) != 4 || !is_in_block(inner->funcid) ||
		!same_int4_const(lthird(inner->args), lsecond(call->args)) ||
		!same_int4_const(lfourth(inner->args), lthird(call->args)) ||
		exprType(lsecond(inner->args)) != exprType((Node *) call))
		PG_RETURN_POINTER(NULL);
	/*
	 * v, though simhash_in_block of a NULL code is NULL: the view's packed
	 * codes are never NULL (a pack holds none).
	 */
	PG_RETURN_POINTER(lsecond(inner->args));
}
