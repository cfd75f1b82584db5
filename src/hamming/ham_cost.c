/*-------------------------------------------------------------------------
 *
 * ham_cost.c
 *		Cost estimate of a hamming index scan, from what ham_scan.c does.
 *
 * A radius-r search costs the cheaper of the multi-index hashing steps 0..r
 * (each block value probed is a random page visit plus the entries of its
 * bucket, N / 2^width of them) and a flat pass (every page of table 0 read
 * in order, one distance per entry).  A nearest-neighbour scan's start-up
 * is the same search to the distance at which a random code expects its
 * first neighbour (closer neighbours make it cheaper still); returning every
 * row takes a few flat passes more.  The constants are the planner's own
 * page and operator costs, so the path competes fairly with GIN, GiST and
 * the sequential scan.  Each run is searched apart, so the search is summed
 * over the runs the metapage lists, each with its share of the entries, and
 * the pending list is read whole.  doc/index-hamming.md compares the
 * estimates with measured times.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "core/nd_simhash_radius.h"
#include "hamming/hamming.h"
#include "pg_compat.h"
#include "planner/radius_planner.h"
#include "type/hamming_ball.h"

/*
 * Whether `fn` is the extension's hamming_block_ball(simhash64, int4, int4,
 * int4), whose arguments the cost reads as such.
 */
static bool
ham_is_block_ball_fn(FuncExpr *fn)
{
	const NdCatalog *cat = nd_catalog();
	char	   *name;
	bool		is;

	if (list_length(fn->args) != 4 ||
		get_func_namespace(fn->funcid) != cat->namespace ||
		exprType(linitial(fn->args)) != cat->simhash64_type)
		return false;
	name = get_func_name(fn->funcid);
	is = name != NULL && strcmp(name, "hamming_block_ball") == 0;
	if (name)
		pfree(name);
	return is;
}

/*
 * The radius a block ball condition (`<@ hamming_block_ball(q, r, b, m)`)
 * searches to in an index of `nblocks` blocks (of one table when
 * only_block > 0): none when the index's runs have the table that leads
 * with block b of m and the scan is unordered (it probes one block value of
 * it, as `=` does: ham_rescan makes such a ball the driving one), else r
 * (the ball is searched and the block filtered, as an ordered scan always
 * does).  A block or a cut not known at plan time (a generic plan's
 * parameter) is taken as the index's own.
 */
static int
ham_block_ball_radius(PlannerInfo *root, Node *ball, bool ordered, int nblocks,
					  int only_block)
{
	Node	   *est = estimate_expression_value(root, ball);
	int			radius,
				block,
				blocks;

	if (IsA(est, Const))
	{
		HammingBlockBall *bb;

		if (((Const *) est)->constisnull)
			return 0;			/* matches nothing */
		bb = DatumGetHammingBlockBallP(((Const *) est)->constvalue);
		radius = bb->radius;
		block = bb->block;
		blocks = bb->blocks;
	}
	else if (IsA(est, FuncExpr) && ham_is_block_ball_fn((FuncExpr *) est))
	{
		List	   *args = ((FuncExpr *) est)->args;
		Node	   *r = lsecond(args);
		Node	   *b = lthird(args);
		Node	   *m = lfourth(args);

		radius = IsA(r, Const) ? Min(Max(DatumGetInt32(((Const *) r)->constvalue), 0), 64) :
			ND_DEFAULT_RADIUS;
		block = IsA(b, Const) ? DatumGetInt32(((Const *) b)->constvalue) : Max(only_block, 1);
		blocks = IsA(m, Const) ? DatumGetInt32(((Const *) m)->constvalue) : nblocks;
	}
	else
		return ordered ? ND_DEFAULT_RADIUS : 0;
	if (!ordered && ham_run_has_block_table(nblocks, only_block, block, blocks))
		return 0;
	return radius;
}

/* The largest radius of an array of balls (0 for none): each is searched */
static int
ham_balls_radius(ArrayType *balls)
{
	ArrayIterator it = array_create_iterator(balls, 0, NULL);
	Datum		value;
	bool		isnull;
	int			radius = 0;

	while (array_iterate(it, &value, &isnull))
		if (!isnull)
			radius = Max(radius, Min(DatumGetHammingBallP(value)->radius, 64));
	array_free_iterator(it);
	return radius;
}

/*
 * The radius of an index condition: `<@ ball`, `&& ball` or `=` (0), or a
 * block ball's (above).
 */
static int
ham_clause_radius(PlannerInfo *root, RestrictInfo *rinfo, bool ordered, int nblocks,
				  int only_block)
{
	const NdCatalog *cat = nd_catalog();
	OpExpr	   *op = (OpExpr *) rinfo->clause;

	if (IsA(op, ScalarArrayOpExpr))
	{
		/*
		 * each element's search (the caller counts them): an equality's
		 * (an array of codes or bigints), or a ball's of unknown radius
		 */
		Node	   *array = lsecond(((ScalarArrayOpExpr *) op)->args);
		Oid			elem = get_element_type(exprType(array));

		if (elem == cat->simhash64_type || elem == INT8OID)
			return 0;
		if (elem == cat->hamming_ball_type && IsA(array, Const) && !((Const *) array)->constisnull)
			return ham_balls_radius(DatumGetArrayTypeP(((Const *) array)->constvalue));
		return ND_DEFAULT_RADIUS;
	}
	if (!IsA(op, OpExpr) || list_length(op->args) != 2)
		return 0;
	if (op->opno == cat->in_ball_op || op->opno == cat->collides_op)
		return nd_ball_radius(root, (Node *) lsecond(op->args));
	if (OidIsValid(cat->hamming_block_ball_type) &&
		exprType((Node *) lsecond(op->args)) == cat->hamming_block_ball_type)
		return ham_block_ball_radius(root, (Node *) lsecond(op->args), ordered,
									 nblocks, only_block);
	return 0;					/* equality */
}

/* Cost of the MIH steps 0..radius, in planner units. */
static double
ham_mih_cost(const nd_layout *l, double ntuples, int radius,
			 double random_page_cost)
{
	double		cost = 0;

	for (int t = 0; t < nd_mih_steps_for_radius(radius); t++)
	{
		double		values = (double) nd_mih_step_size(l, t);
		double		bucket = ntuples / ldexp(1.0, l->width[nd_mih_step_table(l, t)]);

		cost += values * (1.0 + bucket / HAM_PAGE_CAPACITY) * random_page_cost +
			values * bucket * cpu_operator_cost;
	}
	return cost;
}

/*
 * The share of the index's entries each run holds, from the metapage (as
 * gincostestimate reads GIN's); an index whose metapage cannot be read yet
 * counts as one run.
 */
static int
ham_run_shares(Oid indexoid, double *share, double *pending, nd_layout *layout,
			   int *nblocks, int *only_block)
{
	Relation	index = index_open(indexoid, NoLock);
	HamSnapshot snap;
	double		total = 0;
	int			n;

	*pending = 0;
	if (RelationGetNumberOfBlocks(index) == 0)
	{
		index_close(index, NoLock);
		share[0] = 1.0;
		return 1;
	}
	ham_read_snapshot(index, &snap);
	index_close(index, NoLock);
	*nblocks = snap.nblocks;
	*only_block = snap.only_block;
	/*
	 * The runs' layout: its blocks' widths size each probe, and an index of
	 * one table steps through the block values at each distance.
	 */
	ham_run_layout(layout, snap.nblocks, snap.only_block);
	for (int r = 0; r < snap.nruns; r++)
		total += (double) snap.runs[r].nentries;
	total += (double) ham_unflushed_entries(&snap);
	n = Max(snap.nruns, 1);
	share[0] = 1.0;
	for (int r = 0; r < snap.nruns && total > 0; r++)
		share[r] = (double) snap.runs[r].nentries / total;
	if (total > 0)
		*pending = (double) ham_unflushed_entries(&snap) / total;
	return n;
}

void
ham_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				 Cost *indexStartupCost, Cost *indexTotalCost,
				 Selectivity *indexSelectivity, double *indexCorrelation,
				 double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	double		ntuples = Max(index->tuples, 1.0);
	double		table_pages = ceil(ntuples / HAM_PAGE_CAPACITY);
	List	   *quals = get_quals_from_indexclauses(path->indexclauses);
	bool		ordered = path->indexorderbys != NIL;
	int			radius = 64;
	nd_layout	layout;
	double		share[HAM_MAX_RUNS];
	double		pending;
	int			nruns;
	int			nblocks = 4,
				only_block = 0;
	double		spc_random_page_cost,
				spc_seq_page_cost;
	double		flat,
				search,
				rows,
				searches = 1,
				rescans;
	Selectivity sel;
	Cost		descent,
				qual_arg_cost;
	ListCell   *lc;

	get_tablespace_page_costs(index->reltablespace, &spc_random_page_cost, &spc_seq_page_cost);
	/* until the metapage is read: the default layout */
	nd_layout_init(&layout, 4);
	if (index->hypothetical)
	{
		/* an index adviser's index has no metapage to read: one run */
		nruns = 1;
		share[0] = 1.0;
		pending = 0;
	}
	else
		nruns = ham_run_shares(index->indexoid, share, &pending, &layout,
							   &nblocks, &only_block);

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);

			/*
			 * sh = ANY (array), in a bitmap scan: the executor rescans the
			 * index once per element (the access method takes no arrays)
			 */
			if (IsA(rinfo->clause, ScalarArrayOpExpr))
			{
				double		elements = estimate_array_length_compat(root,
																	lsecond(((ScalarArrayOpExpr *) rinfo->clause)->args));

				searches *= Max(elements, 1.0);
			}
			radius = Min(radius, ham_clause_radius(root, rinfo, ordered, nblocks, only_block));
		}
	}

	sel = quals ? clauselist_selectivity(root, quals, index->rel->relid, JOIN_INNER, NULL) : 1.0;
	rows = Max(sel * index->rel->tuples, 1.0);

	flat = table_pages * spc_seq_page_cost + ntuples * cpu_operator_cost;
	/*
	 * The metapage, each run's header and directories read at the start,
	 * and the pending list searched whole.
	 */
	descent = (1 + 2 * nruns + ceil(table_pages * layout.nblocks / HAM_DIR_CAPACITY)) * spc_random_page_cost * 0.25 +
		pending * ntuples * cpu_operator_cost;
	qual_arg_cost = index_other_operands_eval_cost(root, quals) +
		index_other_operands_eval_cost(root, path->indexorderbys);

	if (!ordered)
	{
		search = 0;
		for (int r = 0; r < nruns; r++)
			search += Min(ham_mih_cost(&layout, ntuples * share[r], radius, spc_random_page_cost),
						  flat * share[r]);
		/*
		 * Each further element's search reads the metapage again (the
		 * runs' directories stay in the backend's cache), and the pending
		 * list whole until the backend caches it too.
		 */
		rescans = (searches - 1) * spc_random_page_cost * 0.25 +
			Min(searches - 1, HAM_LIST_CACHE_AFTER) * pending * ntuples * cpu_operator_cost;
		*indexStartupCost = descent + qual_arg_cost;
		*indexTotalCost = *indexStartupCost + rescans + searches * search +
			rows * cpu_index_tuple_cost;
	}
	else
	{
		int			first = 0;
		double		rest = 0;
		double		bounded = 0;

		/* the distance of a random code's nearest neighbour */
		while (first < radius && ntuples * nd_binomial_within(first) < 1.0)
			first++;
		search = 0;
		for (int r = 0; r < nruns; r++)
		{
			double		to_radius = ham_mih_cost(&layout, ntuples * share[r], radius,
													 spc_random_page_cost);

			search += Min(ham_mih_cost(&layout, ntuples * share[r], first, spc_random_page_cost),
						  2 * flat * share[r]);
			rest += Min(to_radius, 3 * flat * share[r]);
			bounded += Min(to_radius, flat * share[r]);
		}

		/*
		 * A radius condition that leaves few rows bounds the scan: the steps
		 * to the radius, or one flat pass (which keeps the first
		 * HAM_FLAT_FIRST_WANT rows), find them all, so the scan costs no more
		 * than the radius search alone.  More rows take further passes.
		 */
		if (radius < 64 && rows <= HAM_FLAT_FIRST_WANT && search + rest > bounded)
		{
			search = Min(search, bounded);
			rest = bounded - search;
		}
		*indexStartupCost = descent + qual_arg_cost + search;
		*indexTotalCost = *indexStartupCost + rest + rows * cpu_index_tuple_cost;
	}
	*indexSelectivity = sel;
	*indexCorrelation = 0.0;
	*indexPages = Min(table_pages * layout.nblocks, *indexTotalCost / spc_seq_page_cost);
}
