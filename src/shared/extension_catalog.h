/*-------------------------------------------------------------------------
 *
 * extension_catalog.h
 *		The extension's own objects (types, functions, operators), found by
 *		name in its schema and cached per backend (extension_catalog.c).
 *
 * The planner code (planner/) recognises and builds calls to them; the
 * hamming access method (hamming/) checks its operator classes and costs
 * its scans with them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_EXTENSION_CATALOG_H
#define ND_EXTENSION_CATALOG_H

#include "postgres.h"

/*
 * OIDs of the extension objects that the planner code and the hamming
 * access method need.  All are InvalidOid, and `installed` false, when the
 * extension is not installed in the current database (the library can
 * outlive DROP EXTENSION).
 */
typedef struct NdCatalog
{
	bool		installed;
	Oid			namespace;		/* the extension's schema */
	Oid			simhash64_type;
	Oid			hamming_ball_type;
	Oid			hamming_block_ball_type;	/* 0.4 on; InvalidOid before */
	Oid			hamming_fn;		/* simhash64_hamming(), behind <~> */
	Oid			distance_fn;	/* hamming_distance() */
	Oid			within_fn;		/* within(simhash64, simhash64, int4) */
	Oid			ball_fn;		/* hamming_ball(simhash64, int4) */
	Oid			in_ball_op;		/* simhash64 <@ hamming_ball */
	Oid			ball_has_op;	/* hamming_ball @> simhash64 */
	Oid			collides_op;	/* hamming_ball && hamming_ball (0.2 on;
								 * InvalidOid before the update) */
	Oid			bands_fn;		/* minhash_bands(int4[], int4, int4) */
	Oid			bands_overlap_fn;	/* minhash_bands_overlap(int8[], int8[]) (0.3
									 * on; InvalidOid before the update) */
	Oid			distance_op;	/* simhash64 <~> simhash64 */
	Oid			similarity_fn;	/* simhash_similarity() */
} NdCatalog;

extern const NdCatalog *nd_catalog(void);

#endif							/* ND_EXTENSION_CATALOG_H */
