/*-------------------------------------------------------------------------
 *
 * radius_planner.h
 *		Planner support for Hamming radius search.
 *
 * Users write `sh <~> q <= r`; indexes answer `sh <@ hamming_ball(q, r)`.
 * The bridge has three parts, one file each:
 *
 *	radius_rewrite.c	 a get_relation_info hook that turns the natural
 *						 spellings into within(sh, q, r) before the planner
 *						 distributes the quals;
 *	radius_support.c	 the support function of within(): index conditions
 *						 and selectivity; and the support function of the
 *						 distance functions, whose only job is to get this
 *						 library loaded in time;
 *	radius_selectivity.c the estimates, shared by within() and the
 *						 <@ / @> operators.
 *
 * MinHash band lookups (`minhash_bands(..) && minhash_bands(..)`) take the
 * same road for their estimate: the hook turns them into
 * minhash_bands_overlap(), whose support function (band_support.c) gives
 * the index condition back and a selectivity from the bands.
 * radius_index.c gives the near-duplicate constraint's index a second face,
 * as an index on the fingerprint column, and lists the indexes on which a
 * radius search of a column can run.
 *
 * The extension's objects are found by name in shared/extension_catalog.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef RADIUS_PLANNER_H
#define RADIUS_PLANNER_H

#include "postgres.h"

#include "nodes/pathnodes.h"
#include "utils/selfuncs.h"

#include "shared/extension_catalog.h"

/* radius_rewrite.c */
extern void nd_radius_rewrite_init(void);

/* radius_selectivity.c */

/* Radius assumed when it is not known at plan time (generic plans). */
#define ND_DEFAULT_RADIUS	3

/* Selectivity when two columns of the same row are compared. */
#define ND_DEFAULT_PAIR_SEL 0.005

extern Selectivity nd_radius_restriction_sel(PlannerInfo *root,
											 Node *a, Node *b, Node *radius,
											 int varRelid);
extern Selectivity nd_radius_join_sel(PlannerInfo *root,
									  Node *a, Node *b, Node *radius,
									  SpecialJoinInfo *sjinfo);
extern int	nd_ball_radius(PlannerInfo *root, Node *ball);

/* radius_index.c */
extern void nd_add_ball_index_faces(PlannerInfo *root, RelOptInfo *rel);

/* radius_cost.c */
extern void nd_radius_cost_setup(PlannerInfo *root, RelOptInfo *rel);

#endif							/* RADIUS_PLANNER_H */
