/*-------------------------------------------------------------------------
 *
 * radius_selectivity.c
 *		Selectivity of Hamming radius conditions: within(a, b, r) (through
 *		its support function) and the <@ / @> operators.
 *
 * Two sources, and the larger wins, so that neither a clustered table nor
 * a large radius is underestimated:
 *
 *	- the binomial model: a uniformly random 64-bit code lies within r bits
 *	  of a given one with probability sum_{i<=r} C(64,i) / 2^64.  Negligible
 *	  for small radii (2e-15 at r = 3), 0.2% at 20, 5% at 25, 55% at 32;
 *	  this is what makes a sequential scan win at large radii.
 *	- the data: SimHash tables hold clusters of near-duplicates, and queries
 *	  are usually codes from the same table, so expect at least one distinct
 *	  value's worth of rows; when the query code is known, the column's
 *	  most common values count with their frequencies, and the histogram
 *	  bounds serve as a sample of the other values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_statistic.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "port/pg_bitutils.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "core/nd_simhash_radius.h"
#include "planner/radius_planner.h"
#include "type/hamming_ball.h"

/*
 * The radius an expression stands for: false if unknown at plan time, else
 * *radius clamped to [-1, 64], -1 also for NULL (nothing matches).
 */
static bool
radius_value(PlannerInfo *root, Node *expr, int *radius)
{
	if (expr == NULL)
		return false;
	expr = estimate_expression_value(root, expr);
	if (!IsA(expr, Const))
		return false;
	if (((Const *) expr)->constisnull)
		*radius = HAMMING_BALL_EMPTY;
	else
		*radius = hamming_ball_clamp_radius(DatumGetInt32(((Const *) expr)->constvalue));
	return true;
}

static int
radius_or_default(PlannerInfo *root, Node *expr)
{
	int			r;

	return radius_value(root, expr, &r) ? r : ND_DEFAULT_RADIUS;
}

static double
null_frac(VariableStatData *vardata)
{
	if (!HeapTupleIsValid(vardata->statsTuple))
		return 0.0;
	return ((Form_pg_statistic) GETSTRUCT(vardata->statsTuple))->stanullfrac;
}

/*
 * Statistics slots hold codes as 8-byte by-value Datums: the column's own
 * type, or int8 seen through the binary-coercible cast.
 */
static bool
code_slot(AttStatsSlot *sslot, VariableStatData *vardata, int kind, int flags)
{
	int16		typlen;
	bool		typbyval;

	if (!get_attstatsslot(sslot, vardata->statsTuple, kind, InvalidOid, flags))
		return false;
	get_typlenbyval(sslot->valuetype, &typlen, &typbyval);
	if (typlen != 8 || !typbyval)
	{
		free_attstatsslot(sslot);
		return false;
	}
	return true;
}

static inline bool
code_within(Datum code, uint64 q, int radius)
{
	return pg_popcount64((uint64) DatumGetInt64(code) ^ q) <= radius;
}

/*
 * Fraction of the rows of a column within `radius` of a code: `q` if
 * known, else a code drawn from similar data.  NULLs never match.
 */
static Selectivity
column_sel(VariableStatData *vardata, bool known, uint64 q, int radius)
{
	const NdCatalog *cat = nd_catalog();
	double		nonnull = 1.0 - null_frac(vardata);
	double		binom = nd_binomial_within(radius);
	double		ndistinct;
	bool		isdefault;
	AttStatsSlot sslot;
	double		mcv_hit = 0.0,
				mcv_total = 0.0;
	int			mcv_count = 0;
	double		hist_frac = 0.0;
	double		rest_distinct;
	Selectivity sel;

	if (radius < 0)
		return 0.0;
	if (radius >= HAMMING_BALL_ALL)
		return nonnull;

	ndistinct = get_variable_numdistinct(vardata, &isdefault);

	/*
	 * An unknown code: one distinct value's worth, or the random model.
	 * (Without statistics, ndistinct is the planner's default of 200.)
	 */
	if (!known || !HeapTupleIsValid(vardata->statsTuple) ||
		!statistic_proc_security_check(vardata, cat->within_fn))
		return nonnull * Max(binom, 1.0 / Max(ndistinct, 1.0));

	/* Most common values: exact frequencies. */
	if (code_slot(&sslot, vardata, STATISTIC_KIND_MCV,
				  ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
	{
		for (int i = 0; i < sslot.nvalues && i < sslot.nnumbers; i++)
		{
			mcv_total += sslot.numbers[i];
			if (code_within(sslot.values[i], q, radius))
				mcv_hit += sslot.numbers[i];
		}
		mcv_count = sslot.nvalues;
		free_attstatsslot(&sslot);
	}

	/* Histogram bounds: an even sample of the remaining values. */
	if (code_slot(&sslot, vardata, STATISTIC_KIND_HISTOGRAM, ATTSTATSSLOT_VALUES))
	{
		int			hits = 0;

		for (int i = 0; i < sslot.nvalues; i++)
			if (code_within(sslot.values[i], q, radius))
				hits++;
		if (sslot.nvalues > 0)
			hist_frac = (double) hits / sslot.nvalues;
		free_attstatsslot(&sslot);
	}

	rest_distinct = Max(ndistinct - mcv_count, 1.0);
	sel = mcv_hit + Max(nonnull - mcv_total, 0.0) *
		Max(Max(binom, hist_frac), 1.0 / rest_distinct);
	CLAMP_PROBABILITY(sel);
	return sel;
}

/*
 * within(a, b, radius) as a restriction on relation varRelid (0: the only
 * relation the clause mentions).  The other side is constant for the scan:
 * a Const, a Param, or in a parameterized path a column of another table.
 */
Selectivity
nd_radius_restriction_sel(PlannerInfo *root, Node *a, Node *b, Node *radius,
						  int varRelid)
{
	VariableStatData vardata;
	Node	   *other;
	bool		varonleft;
	int			r = radius_or_default(root, radius);
	Selectivity sel;

	if (r < 0)
		return 0.0;

	if (!get_restriction_variable(root, list_make2(a, b), varRelid,
								  &vardata, &other, &varonleft))
	{
		/* Both sides vary with the row: two columns of the same table. */
		sel = Max(nd_binomial_within(r), ND_DEFAULT_PAIR_SEL);
		CLAMP_PROBABILITY(sel);
		return sel;
	}

	if (IsA(other, Const) && ((Const *) other)->constisnull)
		sel = 0.0;
	else if (IsA(other, Const))
		sel = column_sel(&vardata, true,
						 (uint64) DatumGetInt64(((Const *) other)->constvalue), r);
	else
		sel = column_sel(&vardata, false, 0, r);

	ReleaseVariableStats(vardata);
	CLAMP_PROBABILITY(sel);
	return sel;
}

/*
 * within(a, b, radius) joining two relations: the probability that a pair
 * of rows qualifies.  Random codes by the binomial model; duplicates as in
 * an equality join, 1 / max(ndistinct); and the pairs of most common values
 * within the radius with their frequencies.  For semi- and anti-joins, the
 * fraction of outer rows with at least one partner.
 */
Selectivity
nd_radius_join_sel(PlannerInfo *root, Node *a, Node *b, Node *radius,
				   SpecialJoinInfo *sjinfo)
{
	const NdCatalog *cat = nd_catalog();
	VariableStatData vd1,
				vd2;
	bool		reversed;
	int			r = radius_or_default(root, radius);
	double		nd1,
				nd2;
	bool		isdefault;
	double		nonnull;
	Selectivity sel;

	if (r < 0)
		return 0.0;

	get_join_variables(root, list_make2(a, b), sjinfo, &vd1, &vd2, &reversed);
	nonnull = (1.0 - null_frac(&vd1)) * (1.0 - null_frac(&vd2));

	if (r >= HAMMING_BALL_ALL)
		sel = nonnull;
	else
	{
		AttStatsSlot s1,
					s2;

		nd1 = get_variable_numdistinct(&vd1, &isdefault);
		nd2 = get_variable_numdistinct(&vd2, &isdefault);
		sel = nonnull * Max(nd_binomial_within(r), 1.0 / Max(Max(nd1, nd2), 1.0));

		if (HeapTupleIsValid(vd1.statsTuple) && HeapTupleIsValid(vd2.statsTuple) &&
			statistic_proc_security_check(&vd1, cat->within_fn) &&
			statistic_proc_security_check(&vd2, cat->within_fn))
		{
			if (code_slot(&s1, &vd1, STATISTIC_KIND_MCV,
						  ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
			{
				if (code_slot(&s2, &vd2, STATISTIC_KIND_MCV,
							  ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
				{
					double		pairs = 0.0;

					/* up to 10,000 x 10,000 at the largest statistics target */
					for (int i = 0; i < s1.nvalues && i < s1.nnumbers; i++)
					{
						CHECK_FOR_INTERRUPTS();
						for (int j = 0; j < s2.nvalues && j < s2.nnumbers; j++)
							if (code_within(s1.values[i],
											(uint64) DatumGetInt64(s2.values[j]), r))
								pairs += s1.numbers[i] * s2.numbers[j];
					}
					sel = Max(sel, pairs);
					free_attstatsslot(&s2);
				}
				free_attstatsslot(&s1);
			}
		}
	}
	CLAMP_PROBABILITY(sel);

	if (sjinfo != NULL &&
		(sjinfo->jointype == JOIN_SEMI || sjinfo->jointype == JOIN_ANTI))
	{
		/* vd2 is the inner side (the semi-join's right-hand input). */
		double		inner_rows = (vd2.rel != NULL) ? Max(vd2.rel->rows, 1.0) : 1.0;

		sel = 1.0 - pow(1.0 - sel, inner_rows);
		CLAMP_PROBABILITY(sel);
	}

	ReleaseVariableStats(vd1);
	ReleaseVariableStats(vd2);
	return sel;
}

/*
 * Take a ball expression apart: center and radius, or false when unknown
 * (a ball column, a parameter).  A constant block ball is taken as its
 * ball (their first fields are the same): the estimate of a superset.
 */
static bool
ball_parts(PlannerInfo *root, Node *ball, Node **center, Node **radius)
{
	const NdCatalog *cat = nd_catalog();
	Node	   *est = estimate_expression_value(root, ball);

	if (IsA(est, Const) && !((Const *) est)->constisnull)
	{
		HammingBall *hb = DatumGetHammingBallP(((Const *) est)->constvalue);

		*center = (Node *) makeConst(cat->simhash64_type, -1, InvalidOid, 8,
									 Int64GetDatum((int64) hb->center), false, true);
		*radius = (Node *) makeConst(INT4OID, -1, InvalidOid, 4,
									 Int32GetDatum(hb->radius), false, true);
		return true;
	}
	if (IsA(est, Const))
	{
		/* NULL ball: matches nothing */
		*center = est;
		*radius = (Node *) makeNullConst(INT4OID, -1, InvalidOid);
		return true;
	}
	if (IsA(ball, FuncExpr) && ((FuncExpr *) ball)->funcid == cat->ball_fn &&
		list_length(((FuncExpr *) ball)->args) == 2)
	{
		*center = linitial(((FuncExpr *) ball)->args);
		*radius = lsecond(((FuncExpr *) ball)->args);
		return true;
	}
	return false;
}

/*
 * The radius of a ball expression for the cost model: as estimated at plan
 * time, ND_DEFAULT_RADIUS when unknown, -1 for a NULL ball.
 */
int
nd_ball_radius(PlannerInfo *root, Node *ball)
{
	Node	   *center,
			   *radius;

	if (!ball_parts(root, ball, &center, &radius))
		return ND_DEFAULT_RADIUS;
	return radius_or_default(root, radius);
}

/*
 * Split `code <@ ball` or `ball @> code` into code, center and radius (the
 * radius NULL when unknown: the default radius is then assumed).
 */
static void
ball_clause_parts(PlannerInfo *root, List *args, Node **code, Node **center,
				  Node **radius)
{
	const NdCatalog *cat = nd_catalog();
	Node	   *left = (Node *) linitial(args);
	Node	   *right = (Node *) lsecond(args);
	Node	   *ball;

	if (exprType(left) == cat->hamming_ball_type ||
		(OidIsValid(cat->hamming_block_ball_type) &&
		 exprType(left) == cat->hamming_block_ball_type))
		ball = left, *code = right;
	else
		ball = right, *code = left;

	if (!ball_parts(root, ball, center, radius))
	{
		/* Treat the unknown ball as an unknown center. */
		*center = ball;
		*radius = NULL;
	}
}

/* RESTRICT estimator of <@ and @> */
PG_FUNCTION_INFO_V1(hamming_ball_restrict_sel);
Datum
hamming_ball_restrict_sel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	int			varRelid = PG_GETARG_INT32(3);
	Node	   *code,
			   *center,
			   *radius;

	if (list_length(args) != 2 || !nd_catalog()->installed)
		PG_RETURN_FLOAT8(ND_DEFAULT_PAIR_SEL);

	ball_clause_parts(root, args, &code, &center, &radius);
	PG_RETURN_FLOAT8(nd_radius_restriction_sel(root, code, center, radius, varRelid));
}

/* JOIN estimator of <@ and @> */
PG_FUNCTION_INFO_V1(hamming_ball_join_sel);
Datum
hamming_ball_join_sel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	SpecialJoinInfo *sjinfo = (SpecialJoinInfo *) PG_GETARG_POINTER(4);
	Node	   *code,
			   *center,
			   *radius;

	if (list_length(args) != 2 || !nd_catalog()->installed)
		PG_RETURN_FLOAT8(ND_DEFAULT_PAIR_SEL);

	ball_clause_parts(root, args, &code, &center, &radius);
	PG_RETURN_FLOAT8(nd_radius_join_sel(root, code, center, radius, sjinfo));
}
