/*-------------------------------------------------------------------------
 *
 * radius_rewrite.c
 *		Turn `d <= r` on a Hamming distance d into within(a, b, r) while the
 *		planner still holds the quals in the query tree.
 *
 * Index matching (indxpath.c) only looks at the top operator or function of
 * a clause, and the top of `sh <~> q <= 3` is the built-in int4le, which
 * knows nothing of indexes on sh.  within(sh, q, 3) has a support function
 * that produces the index condition `sh <@ hamming_ball(q, 3)` (see
 * radius_support.c), so rewriting the clause into it makes every natural
 * spelling indexable, as a restriction and as a join clause alike.
 *
 * The rewrite runs in get_relation_info_hook.  For the base relations of a
 * query that hook is called from add_base_rels_to_query(), after expression
 * preprocessing (constants folded, Params of custom plans substituted,
 * NOT pushed down) and before deconstruct_jointree() turns the WHERE and
 * JOIN/ON quals of parse->jointree into RestrictInfos.  Editing those quals
 * there is thus seen by everything that follows: index paths, parameterized
 * join paths, bitmap paths, selectivity.  Member relations of inheritance
 * trees, partitioned tables and UNION ALL are built later, from their
 * parent's RestrictInfos: a table parent has triggered the rewrite already,
 * a UNION ALL parent gets its restriction clauses rewritten when its first
 * member table is built (rewrite_parent_restrictions).
 *
 * The rewrite is exact (within() is strict like the comparison it replaces,
 * and the distance is at least 0), and idempotent: its output contains no
 * comparison it would rewrite again.
 *
 * The same pass turns a MinHash band lookup, `minhash_bands(..) &&
 * minhash_bands(..)`, into minhash_bands_overlap(), the same test with an
 * estimate from the bands (band_support.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"

#include "pg_compat.h"
#include "planner/radius_planner.h"

static get_relation_info_hook_type prev_get_relation_info_hook = NULL;

/* A distance bound: `distance <= bound` or `distance < bound`. */
typedef struct DistanceBound
{
	Node	   *distance;
	Node	   *bound;
	bool		strict;			/* < rather than <= */
	bool		int8_bound;		/* bound is int8 (int48le and friends) */
} DistanceBound;

static Oid
opexpr_funcid(OpExpr *op)
{
	return OidIsValid(op->opfuncid) ? op->opfuncid : get_opcode(op->opno);
}

/*
 * Is this an upper bound on an int4 value?  Matching the comparison by its
 * function, not its operator, accepts exactly the built-in semantics
 * whatever operator name leads there.
 */
static bool
match_upper_bound(Node *node, DistanceBound *db)
{
	OpExpr	   *op;
	int			dist_arg;

	if (!IsA(node, OpExpr))
		return false;
	op = (OpExpr *) node;
	if (list_length(op->args) != 2)
		return false;

	switch (opexpr_funcid(op))
	{
		case F_INT4LE:			/* d <= c */
			dist_arg = 0, db->strict = false, db->int8_bound = false;
			break;
		case F_INT4LT:			/* d < c */
			dist_arg = 0, db->strict = true, db->int8_bound = false;
			break;
		case F_INT4GE:			/* c >= d */
			dist_arg = 1, db->strict = false, db->int8_bound = false;
			break;
		case F_INT4GT:			/* c > d */
			dist_arg = 1, db->strict = true, db->int8_bound = false;
			break;
		case F_INT48LE:
			dist_arg = 0, db->strict = false, db->int8_bound = true;
			break;
		case F_INT48LT:
			dist_arg = 0, db->strict = true, db->int8_bound = true;
			break;
		case F_INT84GE:
			dist_arg = 1, db->strict = false, db->int8_bound = true;
			break;
		case F_INT84GT:
			dist_arg = 1, db->strict = true, db->int8_bound = true;
			break;
		default:
			return false;
	}
	db->distance = (Node *) list_nth(op->args, dist_arg);
	db->bound = (Node *) list_nth(op->args, 1 - dist_arg);
	return true;
}

/* The two arguments of a call of one of our distance functions, or NIL. */
static List *
distance_args(Node *node, const NdCatalog *cat)
{
	Oid			funcid;
	List	   *args;

	if (IsA(node, FuncExpr))
	{
		funcid = ((FuncExpr *) node)->funcid;
		args = ((FuncExpr *) node)->args;
	}
	else if (IsA(node, OpExpr))
	{
		funcid = opexpr_funcid((OpExpr *) node);
		args = ((OpExpr *) node)->args;
	}
	else
		return NIL;

	if ((funcid != cat->hamming_fn && funcid != cat->distance_fn) ||
		list_length(args) != 2)
		return NIL;
	return args;
}

static Const *
int4_const(int32 value)
{
	return makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
					 Int32GetDatum(value), false, true);
}

static Const *
int8_const(int64 value)
{
	return makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
					 Int64GetDatum(value), false, FLOAT8PASSBYVAL);
}

static Expr *
call2(Oid funcid, Oid rettype, Node *a, Node *b)
{
	return (Expr *) makeFuncExpr(funcid, rettype, list_make2(a, b),
								 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
}

/* a - 1 with the built-in minus operator of a's type (int4 or int8) */
static Node *
minus_one(Expr *a, Oid type)
{
	Oid			minus = OpernameGetOprid(list_make2(makeString("pg_catalog"),
													makeString("-")),
										 type, type);
	OpExpr	   *r;

	if (!OidIsValid(minus))
		elog(ERROR, "operator pg_catalog.- for type %u not found", type);
	r = (OpExpr *) make_opclause(minus, type, false, a,
								 (Expr *) (type == INT8OID ? int8_const(1) : int4_const(1)),
								 InvalidOid, InvalidOid);
	r->opfuncid = get_opcode(minus);
	return (Node *) r;
}

/*
 * The int4 radius r with `d <= r` equivalent to the bound.  Constants are
 * computed here: c - 1 for `d < c`, and int8 values clamped into int4.
 * Otherwise the expression computes it at run time without overflow, and
 * stays NULL when c is NULL (as the comparison is):
 *
 *	int4  d <= c:	c
 *	int4  d < c:	int4larger(c, INT_MIN + 1) - 1
 *	int8  d <= c:	int8larger(int8smaller(c, 64), -1)::int4
 *	int8  d < c:	(int8larger(int8smaller(c, 65), 0) - 1)::int4
 *
 * (0 <= d <= 64, so clamping the bound into [-1, 64] changes no answer.)
 */
static Node *
radius_of_bound(const DistanceBound *db)
{
	if (IsA(db->bound, Const))
	{
		Const	   *c = (Const *) db->bound;
		int64		v;

		if (c->constisnull)
			return (Node *) makeNullConst(INT4OID, -1, InvalidOid);
		v = db->int8_bound ? DatumGetInt64(c->constvalue) :
			DatumGetInt32(c->constvalue);
		if (db->strict && v > PG_INT64_MIN)
			v--;
		if (db->int8_bound || db->strict)
			return (Node *) int4_const((int32) Max(Min(v, PG_INT32_MAX), PG_INT32_MIN));
		return db->bound;
	}

	if (!db->int8_bound)
	{
		if (!db->strict)
			return db->bound;
		return minus_one(call2(F_INT4LARGER, INT4OID, db->bound,
							   (Node *) int4_const(PG_INT32_MIN + 1)),
						 INT4OID);
	}
	else
	{
		Node	   *clamped;

		clamped = (Node *)
			call2(F_INT8LARGER, INT8OID,
				  (Node *) call2(F_INT8SMALLER, INT8OID, db->bound,
								 (Node *) int8_const(db->strict ? 65 : 64)),
				  (Node *) int8_const(db->strict ? 0 : -1));
		if (db->strict)
			clamped = minus_one((Expr *) clamped, INT8OID);
		return (Node *) makeFuncExpr(F_INT4_INT8, INT4OID, list_make1(clamped),
									 InvalidOid, InvalidOid,
									 COERCE_EXPLICIT_CAST);
	}
}

typedef struct RewriteContext
{
	PlannerInfo *root;
	const NdCatalog *cat;		/* looked up at the first candidate */
	Node	   *single_clause;	/* quals that are one clause, not a list */
} RewriteContext;

/*
 * Is the distance itself the expression of an index on its table, as in
 * CREATE INDEX ON t ((sh <~> 'anchor'))?  Then `sh <~> 'anchor' <= r` is
 * a range condition on that index, and must keep its spelling.  Only
 * expression indexes are opened, and only for candidate clauses.
 */
static bool
distance_is_indexed(PlannerInfo *root, Node *distance)
{
	Relids		varnos = pull_varnos(root, distance);
	int			rti;
	RangeTblEntry *rte;
	Relation	rel;
	Node	   *key;
	ListCell   *lc;
	bool		found = false;

	if (!bms_get_singleton_member(varnos, &rti) ||
		rti > list_length(root->parse->rtable))
		return false;
	rte = rt_fetch(rti, root->parse->rtable);
	if (rte->rtekind != RTE_RELATION)
		return false;

	/* Index expressions use varno 1. */
	key = copyObject(distance);
	if (rti != 1)
		ChangeVarNodes(key, rti, 1, 0);

	/* The planner holds a lock on every relation of the query already. */
	rel = table_open(rte->relid, NoLock);
	foreach(lc, RelationGetIndexList(rel))
	{
		Oid			indexoid = lfirst_oid(lc);
		HeapTuple	tup;
		bool		has_exprs;
		Relation	index;
		ListCell   *le;

		tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
		if (!HeapTupleIsValid(tup))
			continue;
		has_exprs = !heap_attisnull(tup, Anum_pg_index_indexprs, NULL);
		ReleaseSysCache(tup);
		if (!has_exprs)
			continue;

		/* As get_relation_info() will lock it, and keep the lock. */
		index = index_open(indexoid, rte->rellockmode);
		foreach(le, RelationGetIndexExpressions(index))
		{
			Node	   *expr = (Node *) lfirst(le);

			while (IsA(expr, RelabelType))
				expr = (Node *) ((RelabelType *) expr)->arg;
			if (equal(expr, key))
				found = true;
		}
		index_close(index, NoLock);
		if (found)
			break;
	}
	table_close(rel, NoLock);
	return found;
}

/*
 * Should this node become within()?  A bound on a call of one of our
 * distance functions, unless that call is itself indexed.  The catalog is
 * read only once a candidate shows up.
 */
static bool
rewritable(Node *node, RewriteContext *cxt, DistanceBound *db, List **args)
{
	if (!match_upper_bound(node, db) ||
		!(IsA(db->distance, FuncExpr) || IsA(db->distance, OpExpr)))
		return false;
	if (cxt->cat == NULL)
		cxt->cat = nd_catalog();
	if (!cxt->cat->installed)
		return false;
	*args = distance_args(db->distance, cxt->cat);
	return *args != NIL && !distance_is_indexed(cxt->root, db->distance);
}

/* Is this a call of minhash_bands(), under any relabeling? */
static bool
is_bands_call(Node *node, const NdCatalog *cat)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node && IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == cat->bands_fn;
}

/*
 * Should this node become minhash_bands_overlap()?  The built-in array
 * overlap with a minhash_bands() call on either side (band_support.c says
 * why).
 */
static bool
band_lookup(Node *node, RewriteContext *cxt)
{
	OpExpr	   *op;

	if (!IsA(node, OpExpr))
		return false;
	op = (OpExpr *) node;
	if (list_length(op->args) != 2 || opexpr_funcid(op) != F_ARRAYOVERLAP)
		return false;
	if (cxt->cat == NULL)
		cxt->cat = nd_catalog();
	if (!cxt->cat->installed || !OidIsValid(cxt->cat->bands_overlap_fn) ||
		!OidIsValid(cxt->cat->bands_fn))
		return false;
	return is_bands_call(linitial(op->args), cxt->cat) ||
		is_bands_call(lsecond(op->args), cxt->cat);
}

/*
 * More natural spellings, each exactly a within():
 *
 *	simhash_similarity(a, b) >= t, > t, t <= .., t < ..
 *		within(a, b, r), r the largest distance whose similarity passes
 *	d = c, c = d (d a distance as above)
 *		within(a, b, c) when c <= 0 or NULL (the distance is never negative),
 *		else within(a, b, c) AND NOT within(a, b, c - 1)
 *
 * The second within() of an equality is under NOT, which no later pass
 * rewrites, so the rewrite stays idempotent.
 */
typedef struct Spelling
{
	List	   *args;			/* the two fingerprints */
	Node	   *radius;			/* within(a, b, radius) */
	Node	   *below;			/* AND NOT within(a, b, below), or NULL */
} Spelling;

/*
 * The largest distance d in 0..64 for which `simhash_similarity = 1 - d/64`
 * passes the comparison with the constant t, -1 if none does.  The
 * similarity and the comparison are the SQL functions themselves, called
 * for each distance, so the radius is exact for every threshold: NaN,
 * infinities, values outside 0..1, float4 values.  Returns false if the
 * distances that pass are not 0..r (they always are: the similarity falls
 * as d grows).
 */
static bool
similarity_radius(const NdCatalog *cat, Oid cmpfn, int sim_arg, Const *t,
				  int32 *radius)
{
	FmgrInfo	simf,
				cmpf;
	int32		last = -1;
	int			d;

	fmgr_info(cat->similarity_fn, &simf);
	fmgr_info(cmpfn, &cmpf);
	for (d = 0; d <= 64; d++)
	{
		uint64		code = d == 64 ? ~UINT64CONST(0) : (UINT64CONST(1) << d) - 1;
		Datum		sim = FunctionCall2(&simf, (Datum) 0, (Datum) code);
		bool		pass;

		pass = DatumGetBool(sim_arg == 0 ?
							FunctionCall2(&cmpf, sim, t->constvalue) :
							FunctionCall2(&cmpf, t->constvalue, sim));
		if (pass)
		{
			if (last != d - 1)
				return false;
			last = d;
		}
	}
	*radius = last;
	return true;
}

/*
 * A lower bound on simhash_similarity() by a constant (a Param of a custom
 * plan is one by now).  float8 and float4 thresholds; numeric and integer
 * constants reach here folded into float8.
 */
static bool
similarity_spelling(Node *node, RewriteContext *cxt, Spelling *sp, bool build)
{
	OpExpr	   *op;
	Oid			cmpfn;
	int			sim_arg;
	Node	   *sim;
	Node	   *t;
	int32		r;

	if (!IsA(node, OpExpr))
		return false;
	op = (OpExpr *) node;
	if (list_length(op->args) != 2)
		return false;
	cmpfn = opexpr_funcid(op);
	switch (cmpfn)
	{
		case F_FLOAT8GE:		/* s >= t */
		case F_FLOAT8GT:		/* s > t */
		case F_FLOAT84GE:
		case F_FLOAT84GT:
			sim_arg = 0;
			break;
		case F_FLOAT8LE:		/* t <= s */
		case F_FLOAT8LT:		/* t < s */
		case F_FLOAT48LE:
		case F_FLOAT48LT:
			sim_arg = 1;
			break;
		default:
			return false;
	}
	sim = (Node *) list_nth(op->args, sim_arg);
	t = (Node *) list_nth(op->args, 1 - sim_arg);
	if (!IsA(sim, FuncExpr) || list_length(((FuncExpr *) sim)->args) != 2 ||
		!IsA(t, Const))
		return false;
	if (cxt->cat == NULL)
		cxt->cat = nd_catalog();
	if (!cxt->cat->installed || !OidIsValid(cxt->cat->similarity_fn) ||
		((FuncExpr *) sim)->funcid != cxt->cat->similarity_fn ||
		distance_is_indexed(cxt->root, sim))
		return false;
	if (!build)
		return true;

	sp->args = ((FuncExpr *) sim)->args;
	sp->below = NULL;
	if (((Const *) t)->constisnull)
		sp->radius = (Node *) makeNullConst(INT4OID, -1, InvalidOid);
	else if (similarity_radius(cxt->cat, cmpfn, sim_arg, (Const *) t, &r))
		sp->radius = (Node *) int4_const(r);
	else
		return false;
	return true;
}

/* d = c or c = d, with d one of our distances. */
static bool
equality_spelling(Node *node, RewriteContext *cxt, Spelling *sp, bool build)
{
	OpExpr	   *op;
	DistanceBound db;
	int			dist_arg;

	if (!IsA(node, OpExpr))
		return false;
	op = (OpExpr *) node;
	if (list_length(op->args) != 2)
		return false;
	switch (opexpr_funcid(op))
	{
		case F_INT4EQ:
			dist_arg = -1, db.int8_bound = false;
			break;
		case F_INT48EQ:
			dist_arg = 0, db.int8_bound = true;
			break;
		case F_INT84EQ:
			dist_arg = 1, db.int8_bound = true;
			break;
		default:
			return false;
	}
	if (cxt->cat == NULL)
		cxt->cat = nd_catalog();
	if (!cxt->cat->installed)
		return false;
	/* int4 = int4: the distance on the left, else on the right */
	if (dist_arg < 0)
		dist_arg = distance_args(linitial(op->args), cxt->cat) != NIL ? 0 : 1;
	db.distance = (Node *) list_nth(op->args, dist_arg);
	db.bound = (Node *) list_nth(op->args, 1 - dist_arg);
	if ((sp->args = distance_args(db.distance, cxt->cat)) == NIL ||
		distance_is_indexed(cxt->root, db.distance))
		return false;

	/* d <= c, and unless c <= 0, NOT d <= c - 1 */
	db.strict = false;
	sp->radius = radius_of_bound(&db);
	sp->below = NULL;
	if (IsA(db.bound, Const))
	{
		Const	   *c = (Const *) db.bound;

		if (!c->constisnull &&
			(db.int8_bound ? DatumGetInt64(c->constvalue) > 0 :
			 DatumGetInt32(c->constvalue) > 0))
		{
			db.strict = true;
			sp->below = radius_of_bound(&db);
		}
	}
	else
	{
		/* The fingerprints and c are evaluated twice. */
		if (contain_volatile_functions(node) || contain_subplans(node))
			return false;
		db.strict = true;
		sp->below = radius_of_bound(&db);
	}

	/*
	 * An AND is fine in a list of quals (rewrite_quals flattens it) or
	 * under OR, but a lone clause must stay one clause (RestrictInfos of
	 * appendrel parents).
	 */
	if (sp->below != NULL && node == cxt->single_clause)
		return false;
	return true;
}

static bool
spelling(Node *node, RewriteContext *cxt, Spelling *sp, bool build)
{
	return similarity_spelling(node, cxt, sp, build) ||
		equality_spelling(node, cxt, sp, build);
}

static Expr *
within_call(RewriteContext *cxt, Node *a, Node *b, Node *radius, int location)
{
	FuncExpr   *within;

	within = makeFuncExpr(cxt->cat->within_fn, BOOLOID, list_make3(a, b, radius),
						  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	within->location = location;
	return (Expr *) within;
}

static Node *rewrite_mutator(Node *node, void *context);

static Node *
rewrite_spelling(Node *node, RewriteContext *cxt, const Spelling *sp)
{
	int			location = ((OpExpr *) node)->location;
	Expr	   *within;
	Expr	   *closer;

	within = within_call(cxt,
						 rewrite_mutator(linitial(sp->args), cxt),
						 rewrite_mutator(lsecond(sp->args), cxt),
						 rewrite_mutator(sp->radius, cxt), location);
	if (sp->below == NULL)
		return (Node *) within;

	/* the rows at a smaller distance, checked after the index */
	closer = within_call(cxt,
						 rewrite_mutator(linitial(sp->args), cxt),
						 rewrite_mutator(lsecond(sp->args), cxt),
						 rewrite_mutator(sp->below, cxt), location);
	return (Node *) make_andclause(list_make2(within, make_notclause(closer)));
}

/* A list of quals is an implicit AND: keep it flat. */
static List *
flatten_and_quals(List *quals)
{
	List	   *flat = NIL;
	ListCell   *lc;

	foreach(lc, quals)
	{
		Node	   *q = (Node *) lfirst(lc);

		if (is_andclause(q))
			flat = list_concat(flat, ((BoolExpr *) q)->args);
		else
			flat = lappend(flat, q);
	}
	return flat;
}

/* Walk first, so that trees with nothing to rewrite are not copied. */
static bool
rewrite_needed_walker(Node *node, void *context)
{
	DistanceBound db;
	List	   *args;

	if (node == NULL || IsA(node, Query))
		return false;
	if (rewritable(node, (RewriteContext *) context, &db, &args) ||
		band_lookup(node, (RewriteContext *) context))
		return true;
	{
		Spelling	sp;

		if (spelling(node, (RewriteContext *) context, &sp, false))
			return true;
	}
	return expression_tree_walker(node, rewrite_needed_walker, context);
}

static Node *
rewrite_mutator(Node *node, void *context)
{
	RewriteContext *cxt = (RewriteContext *) context;
	DistanceBound db;
	List	   *args;

	if (node == NULL)
		return NULL;
	/* Subqueries are planned, and rewritten, on their own. */
	if (IsA(node, Query))
		return node;

	if (rewritable(node, cxt, &db, &args))
	{
		FuncExpr   *within;
		Node	   *radius = radius_of_bound(&db);

		within = makeFuncExpr(cxt->cat->within_fn, BOOLOID,
							  list_make3(rewrite_mutator(linitial(args), context),
										 rewrite_mutator(lsecond(args), context),
										 rewrite_mutator(radius, context)),
							  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
		within->location = ((OpExpr *) node)->location;
		return (Node *) within;
	}
	if (band_lookup(node, cxt))
	{
		OpExpr	   *op = (OpExpr *) node;
		FuncExpr   *overlap;

		overlap = makeFuncExpr(cxt->cat->bands_overlap_fn, BOOLOID,
							   list_make2(rewrite_mutator(linitial(op->args), context),
										  rewrite_mutator(lsecond(op->args), context)),
							   InvalidOid, op->inputcollid, COERCE_EXPLICIT_CALL);
		overlap->location = op->location;
		return (Node *) overlap;
	}
	{
		Spelling	sp;

		if (spelling(node, cxt, &sp, true))
			return rewrite_spelling(node, cxt, &sp);
	}

	return expression_tree_mutator(node, rewrite_mutator, context);
}

static Node *
rewrite_quals(Node *quals, RewriteContext *cxt)
{
	if (quals == NULL)
		return quals;
	cxt->single_clause = IsA(quals, List) ? NULL : quals;
	if (!rewrite_needed_walker(quals, cxt))
		return quals;
	quals = rewrite_mutator(quals, cxt);
	if (IsA(quals, List))
		quals = (Node *) flatten_and_quals((List *) quals);
	return quals;
}

/* WHERE and JOIN/ON quals, at every level of the join tree. */
static void
rewrite_jointree(Node *jtnode, RewriteContext *cxt)
{
	ListCell   *lc;

	if (jtnode == NULL)
		return;
	if (IsA(jtnode, FromExpr))
	{
		FromExpr   *f = (FromExpr *) jtnode;

		f->quals = rewrite_quals(f->quals, cxt);
		foreach(lc, f->fromlist)
			rewrite_jointree((Node *) lfirst(lc), cxt);
	}
	else if (IsA(jtnode, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) jtnode;

		j->quals = rewrite_quals(j->quals, cxt);
		rewrite_jointree(j->larg, cxt);
		rewrite_jointree(j->rarg, cxt);
	}
	/* RangeTblRef: nothing to do */
}

/*
 * Restriction clauses of an appendrel parent that is not itself a table
 * (a flattened UNION ALL): no get_relation_info call preceded their
 * distribution, so they still hold the original spelling when the first
 * member table is built.  Its quals are copied from the parent's right
 * after this hook, so replacing the parent's RestrictInfos here is in time.
 * (Restriction clauses of a base relation are referenced from its
 * baserestrictinfo only.)
 */
static void
rewrite_parent_restrictions(PlannerInfo *root, RelOptInfo *rel)
{
	AppendRelInfo *appinfo;
	RelOptInfo *parent;
	RewriteContext cxt = {root, NULL};
	ListCell   *lc;

	if (root->append_rel_array == NULL ||
		(appinfo = root->append_rel_array[rel->relid]) == NULL ||
		appinfo->parent_relid >= root->simple_rel_array_size ||
		(parent = root->simple_rel_array[appinfo->parent_relid]) == NULL)
		return;

	foreach(lc, parent->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Expr	   *clause;

		clause = (Expr *) rewrite_quals((Node *) rinfo->clause, &cxt);
		if (clause == rinfo->clause)
			continue;
		lfirst(lc) = nd_restrictinfo_respell(root, rinfo, clause);
	}
}

static void
nd_get_relation_info(PlannerInfo *root, Oid relationObjectId, bool inhparent,
					 RelOptInfo *rel)
{
	RewriteContext cxt = {root, NULL};

	/*
	 * Base relations are built before the quals are distributed.  The
	 * planner's internal uses of get_relation_info (plan_create_index_workers
	 * and plan_cluster_use_sort) build a query without a join tree.
	 */
	if (rel->reloptkind == RELOPT_BASEREL &&
		root->parse != NULL && root->parse->jointree != NULL)
		rewrite_jointree((Node *) root->parse->jointree, &cxt);
	else if (rel->reloptkind == RELOPT_OTHER_MEMBER_REL)
		rewrite_parent_restrictions(root, rel);

	/* the constraint's index answers on the fingerprint: radius_index.c */
	nd_add_ball_index_faces(root, rel);

	/* cost models of our GIN and GiST indexes: radius_cost.c */
	nd_radius_cost_setup(root, rel);

	if (prev_get_relation_info_hook)
		prev_get_relation_info_hook(root, relationObjectId, inhparent, rel);
}

void
nd_radius_rewrite_init(void)
{
	prev_get_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = nd_get_relation_info;
}
