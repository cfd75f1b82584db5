/*-------------------------------------------------------------------------
 *
 * radius_index.c
 *		Which indexes serve radius and nearest-neighbour search on a
 *		simhash64 column, and the second face of the near-duplicate
 *		constraint's index.
 *
 * The constraint EXCLUDE USING hamming (hamming_ball(sh, k) WITH &&)
 * builds a hamming index on the expression hamming_ball(sh, k).  The
 * access method stores a ball as its center, that is sh itself, so the
 * index holds exactly what an index on sh holds: it can answer
 * `sh <@ hamming_ball(q, r)` for any r, `sh = q` and ORDER BY sh <~> q,
 * exactly, once its operator family has those operators (0.3 adds them to
 * hamming_ball_hamming_ops; 0.4 `sh = ANY (bigint[])` through
 * neardup_internal.=(simhash64, bigint)).  But the planner matches a
 * clause to an index column by the column's expression, and `sh` is not
 * `hamming_ball(sh, k)`.
 *
 * So the get_relation_info hook gives such an index a second
 * IndexOptInfo, the same index seen as one on sh (its face): index
 * conditions and ORDER BY are matched against sh, the within() support
 * function and the core's ordering-operator matching do the rest, and at
 * run time the scan keys are built from the operator family of the real
 * index, which holds the simhash64 operators.  The first IndexOptInfo stays
 * as it is, for queries on the ball expression itself.  The radius k of
 * the expression must be a non-null constant: with NULL the ball is NULL
 * and the row would be indexed under NULL whatever its code.
 *
 * simhash_radius_indexes() lists, for the dedup functions and for users,
 * the indexes of a table on which a radius search of a column can run:
 * those whose first column is the column with an operator class that has
 * `<@ hamming_ball` (GIN, GiST, hamming), and those with a face on it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "planner/radius_planner.h"

/*
 * The column whose codes an index column indexes as balls' centers: the
 * Var of an expression hamming_ball(col, k), k a non-null constant, in an
 * operator family that also answers `simhash64 <@ hamming_ball`; else NULL.
 */
static Var *
ball_center_column(const NdCatalog *cat, Oid opfamily, Node *expr)
{
	FuncExpr   *call;
	Node	   *center;
	Node	   *radius;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return NULL;
	call = (FuncExpr *) expr;
	if (call->funcid != cat->ball_fn || list_length(call->args) != 2)
		return NULL;
	center = (Node *) linitial(call->args);
	radius = (Node *) lsecond(call->args);
	while (IsA(center, RelabelType))
		center = (Node *) ((RelabelType *) center)->arg;
	if (!IsA(center, Var) || ((Var *) center)->varattno <= 0 ||
		((Var *) center)->varlevelsup != 0 ||
		!IsA(radius, Const) || ((Const *) radius)->constisnull)
		return NULL;
	if (!op_in_opfamily(cat->in_ball_op, opfamily))
		return NULL;
	return (Var *) center;
}

/*
 * Add the face on the center column of each constraint-style index of a
 * relation the planner is building (see the file header).
 */
void
nd_add_ball_index_faces(PlannerInfo *root, RelOptInfo *rel)
{
	const NdCatalog *cat = nd_catalog();
	List	   *faces = NIL;
	ListCell   *lc;

	if (!cat->installed)
		return;

	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);
		IndexOptInfo *face;
		Var		   *center;

		if (index->nkeycolumns != 1 || index->ncolumns != 1 ||
			index->indexkeys[0] != 0 || index->opcintype[0] != cat->hamming_ball_type ||
			index->indexprs == NIL)
			continue;
		center = ball_center_column(cat, index->opfamily[0], linitial(index->indexprs));
		if (center == NULL || center->varno != rel->relid)
			continue;

		face = makeNode(IndexOptInfo);
		memcpy(face, index, sizeof(IndexOptInfo));
		face->indexkeys = palloc(sizeof(int));
		face->indexkeys[0] = center->varattno;
		face->opcintype = palloc(sizeof(Oid));
		face->opcintype[0] = cat->simhash64_type;
		face->indexprs = NIL;
		face->indextlist = list_make1(makeTargetEntry((Expr *) copyObject(center),
													  1, NULL, false));
		faces = lappend(faces, face);
	}
	rel->indexlist = list_concat(rel->indexlist, faces);
}

/*
 * Does this index serve radius search on column attnum of its table?  Only
 * valid indexes without a predicate: a probe must be able to run on it for
 * any row.
 */
static bool
index_serves_radius(const NdCatalog *cat, Relation index, AttrNumber attnum)
{
	Form_pg_index form = index->rd_index;
	Node	   *expr;
	Var		   *center;

	if (!form->indisvalid || !heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
		return false;
	if (form->indkey.values[0] == attnum)
		return op_in_opfamily(cat->in_ball_op, index->rd_opfamily[0]);
	if (form->indkey.values[0] != 0 || form->indnkeyatts != 1 || form->indnatts != 1 ||
		index->rd_opcintype[0] != cat->hamming_ball_type)
		return false;
	expr = (Node *) linitial(RelationGetIndexExpressions(index));
	center = ball_center_column(cat, index->rd_opfamily[0], expr);
	return center != NULL && center->varattno == attnum;
}

/*
 * simhash_radius_indexes(source regclass, fingerprint_column name): the
 * indexes of source on which `fingerprint_column <~> q <= r` can run.
 */
PG_FUNCTION_INFO_V1(simhash_radius_indexes);
Datum
simhash_radius_indexes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = PG_GETARG_OID(0);
	Name		column = PG_GETARG_NAME(1);
	const NdCatalog *cat = nd_catalog();
	Relation	rel;
	AttrNumber	attnum;
	List	   *indexes;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (!cat->installed)
		PG_RETURN_VOID();

	/* an OID that names no relation is the caller's error, not ours */
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (rel->rd_rel->relkind == RELKIND_INDEX ||
		rel->rd_rel->relkind == RELKIND_PARTITIONED_INDEX ||
		rel->rd_rel->relkind == RELKIND_COMPOSITE_TYPE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(rel))));
	attnum = get_attnum(relid, NameStr(*column));
	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						NameStr(*column), RelationGetRelationName(rel))));
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		Relation	index = index_open(indexoid, AccessShareLock);
		bool		serves = index_serves_radius(cat, index, attnum);

		index_close(index, AccessShareLock);
		if (serves)
		{
			Datum		value = ObjectIdGetDatum(indexoid);
			bool		isnull = false;

			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
		}
	}
	list_free(indexes);
	relation_close(rel, AccessShareLock);
	PG_RETURN_VOID();
}
