/*-------------------------------------------------------------------------
 *
 * radius_cost.c
 *		Index cost estimates for radius search on our GIN and GiST
 *		operator classes.
 *
 * The core estimators know nothing of Hamming balls.  gistcostestimate
 * (genericcostestimate) assumes that the fraction of the index read is the
 * fraction of rows returned, so a GiST radius search cost the same at any
 * radius (8.3 on 20,000 rows), while it reads every leaf page whose subcube
 * of codes lies within r bits of the query: at 1M rows and r = 3 some 7% of
 * the index, for a handful of rows, 50 times slower than GIN.
 * gincostestimate charges each probe (a partial-match entry) several random
 * page reads (64 at r = 3 and 772 at r = 6 on 100,000 rows; 21 and 225
 * below), so GIN lost to GiST, and to the sequential scan at mid radii and
 * for cursors (fast start).
 *
 * So the get_relation_info hook (radius_rewrite.c) points the
 * amcostestimate of each GIN or GiST index with the `<@ hamming_ball`
 * operator at the functions below.  Everything that costs an index path
 * goes through it -- plain, parameterized (nested loops), bitmap and
 * index-only paths, at every table size -- so the paths compete under
 * add_path's usual rules.  A path whose index conditions are not all radius
 * conditions keeps the core's estimate.
 *
 * The models count pages and index tuples the way the core does for a
 * btree (a random page per descent, 50 cpu_operator_cost per level walked,
 * cpu_operator_cost per key compared), from what the opclasses do:
 *
 *	GIN: nd_probe_count() probes, each a descent of the entry tree and a
 *		walk over the keys of one block value (N / 2^width per table), or
 *		one pass over a whole table beyond SIMHASH_GIN_MAX_PROBES.
 *	GiST: a sorted build leaves leaf pages whose codes share their leading
 *		log2(leaf pages) bits; a page is read when the query is within r
 *		bits of that prefix, i.e. a fraction P(Binomial(log2 L, 1/2) <= r)
 *		of the leaf pages (within 10-25% of the pages counted by EXPLAIN
 *		BUFFERS from 10,000 to 1M rows).  They are read in key order, which
 *		a sorted build made the physical order, so they are priced between
 *		a random and a sequential read as the core prices the heap pages of
 *		a bitmap scan.
 *
 * doc/planner.md has the measurements behind them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/amapi.h"
#include "catalog/pg_am.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/index_selfuncs.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "core/nd_permute.h"
#include "index/simhash_gin.h"
#include "planner/radius_planner.h"
#include "type/hamming_ball.h"

/* As in selfuncs.c: CPU cost of walking one index page during a descent. */
#define ND_PAGE_CPU_MULTIPLIER	50.0

/* At most this many radius conditions are costed one by one. */
#define ND_MAX_BALLS			8

/* The radius conditions of an index path. */
typedef struct RadiusQuals
{
	int			n;
	int			radius[ND_MAX_BALLS];
	int			column[ND_MAX_BALLS];
} RadiusQuals;

/*
 * The radii of the index conditions of a path, if all of them are
 * `col <@ ball` (or `ball @> col`); false if there are none, or another
 * condition, or too many.
 */
static bool
radius_quals(PlannerInfo *root, IndexPath *path, RadiusQuals *rq)
{
	const NdCatalog *cat = nd_catalog();
	ListCell   *lc;

	rq->n = 0;
	if (!cat->installed)
		return false;

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
			OpExpr	   *op = (OpExpr *) rinfo->clause;
			Node	   *ball;

			if (!IsA(op, OpExpr) || list_length(op->args) != 2 ||
				rq->n >= ND_MAX_BALLS)
				return false;
			if (op->opno == cat->in_ball_op)
				ball = (Node *) lsecond(op->args);
			else if (op->opno == cat->ball_has_op)
				ball = (Node *) linitial(op->args);
			else
				return false;
			rq->radius[rq->n] = nd_ball_radius(root, ball);
			rq->column[rq->n] = iclause->indexcol;
			rq->n++;
		}
	}
	return rq->n > 0;
}

/* Height of the index tree: fanout 100, as the core assumes for GiST. */
static int
tree_height(IndexOptInfo *index)
{
	if (index->tree_height >= 0)
		return index->tree_height;
	return index->pages > 1 ? (int) (log((double) index->pages) / log(100.0)) : 0;
}

/* P(Binomial(n, 1/2) <= r) */
static double
binomial_cdf(int n, int r)
{
	double		binom = 1.0,
				sum = 0.0;

	if (r < 0)
		return 0.0;
	if (r >= n)
		return 1.0;
	for (int i = 0; i <= r; i++)
	{
		sum += binom;
		binom = binom * (n - i) / (i + 1);
	}
	return ldexp(sum, -n);
}

/*
 * Fraction of the leaf pages of a GiST index that a radius-r search reads:
 * those whose fixed prefix of log2(pages) bits is within r bits of the
 * query's, interpolated between whole numbers of bits.
 */
static double
gist_leaf_fraction(double pages, int r)
{
	double		bits = Min(log2(Max(pages, 1.0)), 63.0);
	int			lo = (int) floor(bits);
	double		w = bits - lo;

	return (1.0 - w) * binomial_cdf(lo, r) + w * binomial_cdf(lo + 1, r);
}

/*
 * GiST: genericcostestimate and gistcostestimate's descent, with the index
 * tuples visited taken from the fraction of leaf pages the narrowest ball
 * reaches, and those pages priced between a random and a sequential read
 * as the core prices heap pages in a bitmap scan: a sorted build lays the
 * leaves out in key order, which is the order a scan visits them in.
 */
static void
nd_gist_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					 Cost *indexStartupCost, Cost *indexTotalCost,
					 Selectivity *indexSelectivity, double *indexCorrelation,
					 double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	RadiusQuals rq;
	int			r;
	List	   *quals;
	Selectivity sel;
	double		ntuples = Max(index->tuples, 1.0);
	double		npages = Max((double) index->pages, 1.0);
	double		tuples,
				pages,
				page_cost;
	double		spc_random_page_cost,
				spc_seq_page_cost;
	Cost		qual_arg_cost,
				startup,
				total;

	if (!radius_quals(root, path, &rq))
	{
		gistcostestimate(root, path, loop_count, indexStartupCost, indexTotalCost,
						 indexSelectivity, indexCorrelation, indexPages);
		if (path->indexorderbys != NIL)
		{
			/*
			 * Nearest neighbours with no radius: the subcubes of random codes
			 * bound the distance so loosely that the scan reads nearly every
			 * page before its first row (all 4,794 of 1M rows, measured), and
			 * every leaf tuple goes through the queue.  Charged one page, as
			 * the core would, this 5x-slower-than-a-seq-scan path would win.
			 */
			get_tablespace_page_costs(index->reltablespace,
									  &spc_random_page_cost, &spc_seq_page_cost);
			startup = npages * spc_random_page_cost +
				ntuples * (cpu_index_tuple_cost + cpu_operator_cost * log2(Max(ntuples, 2.0)));
			*indexStartupCost = Max(*indexStartupCost, startup);
			*indexTotalCost = Max(*indexTotalCost, startup);
			*indexPages = npages;
		}
		return;
	}

	r = rq.radius[0];
	for (int i = 1; i < rq.n; i++)
		r = Min(r, rq.radius[i]);

	quals = get_quals_from_indexclauses(path->indexclauses);
	sel = clauselist_selectivity(root, quals, index->rel->relid, JOIN_INNER, NULL);

	/* at least the leaf tuples of the rows found */
	tuples = Max(gist_leaf_fraction(npages, r) * ntuples, sel * index->rel->tuples);
	tuples = Min(Max(tuples, 1.0), ntuples);
	pages = ceil(tuples * npages / ntuples);

	get_tablespace_page_costs(index->reltablespace,
							  &spc_random_page_cost, &spc_seq_page_cost);
	page_cost = spc_random_page_cost -
		(spc_random_page_cost - spc_seq_page_cost) * sqrt(pages / npages);

	if (loop_count > 1)
		total = index_pages_fetched(pages * loop_count, (BlockNumber) npages,
									npages, root) * page_cost / loop_count;
	else
		total = pages * page_cost;

	/* consistent() on every tuple of the pages read */
	total += tuples * (cpu_index_tuple_cost +
					   cpu_operator_cost * (list_length(quals) +
											list_length(path->indexorderbys)));
	qual_arg_cost = index_other_operands_eval_cost(root, quals) +
		index_other_operands_eval_cost(root, path->indexorderbys);
	startup = qual_arg_cost;
	total += qual_arg_cost;

	/* descent, as gistcostestimate */
	startup += ceil(log(Max(ntuples, 2.0))) * cpu_operator_cost +
		(tree_height(index) + 1) * ND_PAGE_CPU_MULTIPLIER * cpu_operator_cost;
	total += ceil(log(Max(ntuples, 2.0))) * cpu_operator_cost +
		(tree_height(index) + 1) * ND_PAGE_CPU_MULTIPLIER * cpu_operator_cost;

	*indexStartupCost = startup;
	*indexTotalCost = total;
	*indexSelectivity = sel;
	*indexCorrelation = 0.0;
	*indexPages = pages;
}

/* The block layout of a GIN index column, from its `blocks` option. */
static void
gin_column_layout(IndexOptInfo *index, int column, nd_layout *layout)
{
	int			blocks = SIMHASH_GIN_DEFAULT_BLOCKS;

	if (index->opclassoptions != NULL && index->opclassoptions[column] != NULL)
		blocks = ((SimhashGinOptions *) index->opclassoptions[column])->blocks;
	if (blocks < ND_PERMUTE_MIN_BLOCKS || blocks > ND_PERMUTE_MAX_BLOCKS)
		blocks = SIMHASH_GIN_DEFAULT_BLOCKS;
	nd_layout_init(layout, blocks);
}

/*
 * GIN: the probes of every ball, each a descent of the entry tree to a
 * leaf page (a random page) and a walk over the keys of its block value
 * (further leaf pages, read in order), comparePartial on every key, and a
 * TID into the bitmap for every posting of a match.  A bitmap is complete
 * before the first row comes out: startup cost = total cost.
 */
static void
nd_gin_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					Cost *indexStartupCost, Cost *indexTotalCost,
					Selectivity *indexSelectivity, double *indexCorrelation,
					double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	RadiusQuals rq;
	List	   *quals;
	double		ntuples = Max(index->tuples, 1.0);
	double		probes = 0.0,
				keys = 0.0,
				postings = 0.0,
				entries = 0.0,
				leaf_pages,
				pages_fetched;
	double		spc_random_page_cost,
				spc_seq_page_cost;
	Selectivity sel;
	Cost		cost;

	if (!radius_quals(root, path, &rq))
	{
		gincostestimate(root, path, loop_count, indexStartupCost, indexTotalCost,
						indexSelectivity, indexCorrelation, indexPages);
		return;
	}

	quals = get_quals_from_indexclauses(path->indexclauses);
	sel = clauselist_selectivity(root, quals, index->rel->relid, JOIN_INNER, NULL);

	for (int i = 0; i < rq.n; i++)
	{
		nd_layout	layout;
		int			r = rq.radius[i];
		int			tables = 0;

		gin_column_layout(index, rq.column[i], &layout);
		entries += ntuples * layout.nblocks;
		if (r < 0)
			continue;
		if (r >= HAMMING_BALL_ALL ||
			nd_probe_count(&layout, r) > SIMHASH_GIN_MAX_PROBES)
		{
			/* one pass over table 0 */
			probes += 1.0;
			keys += ntuples;
			tables = 1;
		}
		else
		{
			for (int t = 0; t < layout.nblocks; t++)
			{
				int			d = nd_probe_radius(&layout, r, t);
				double		v;

				if (d < 0)
					continue;
				v = (double) nd_ball_volume(layout.width[t], d);
				probes += v;
				keys += v * ntuples / ldexp(1.0, layout.width[t]);
				tables++;
			}
		}
		/* a match is found in every table probed, at most */
		postings += sel * index->rel->tuples * tables;
	}

	/*
	 * Entry tree leaf pages hold about entries / pages keys each (posting
	 * lists are short: codes are nearly unique).
	 */
	leaf_pages = keys / Max(entries / Max((double) index->pages, 1.0), 1.0);

	get_tablespace_page_costs(index->reltablespace,
							  &spc_random_page_cost, &spc_seq_page_cost);

	/*
	 * Pages: as genericcostestimate, the pages of all loop_count scans
	 * fetched through a cache (index_pages_fetched), then split per scan.
	 */
	pages_fetched = probes + leaf_pages;
	if (pages_fetched > 0)
	{
		double		fetched = index_pages_fetched(pages_fetched * loop_count,
												  (BlockNumber) index->pages,
												  index->pages, root);
		double		share = fetched / (pages_fetched * loop_count);

		cost = share * (probes * spc_random_page_cost + leaf_pages * spc_seq_page_cost);
	}
	else
		cost = 0.0;

	/* CPU: descents, comparePartial per key, postings into the bitmap */
	cost += probes * (tree_height(index) + 1) * ND_PAGE_CPU_MULTIPLIER * cpu_operator_cost;
	cost += probes * ceil(log(Max(entries, 2.0))) * cpu_operator_cost;
	cost += keys * cpu_operator_cost;
	cost += postings * cpu_index_tuple_cost;
	/* the ball expressions, once per scan */
	cost += index_other_operands_eval_cost(root, quals);

	*indexStartupCost = cost;
	*indexTotalCost = cost;
	*indexSelectivity = sel;
	*indexCorrelation = 0.0;
	*indexPages = Max(pages_fetched, 1.0);
}

/*
 * Point the cost estimator of each GIN and GiST index of the relation that
 * has the `<@ hamming_ball` operator on some column at ours.  Called from
 * the get_relation_info hook, after the core filled rel->indexlist.
 */
void
nd_radius_cost_setup(PlannerInfo *root, RelOptInfo *rel)
{
	const NdCatalog *cat = nd_catalog();
	ListCell   *lc;

	if (!cat->installed)
		return;

	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);
		bool		ours = false;

		if (index->relam != GIN_AM_OID && index->relam != GIST_AM_OID)
			continue;
		for (int col = 0; col < index->nkeycolumns && !ours; col++)
			ours = op_in_opfamily(cat->in_ball_op, index->opfamily[col]);
		if (!ours)
			continue;
		if (index->relam == GIN_AM_OID)
			index->amcostestimate = (void (*) ()) nd_gin_costestimate;
		else
			index->amcostestimate = (void (*) ()) nd_gist_costestimate;
	}
}
