/*-------------------------------------------------------------------------
 *
 * extension_catalog.c
 *		Find the extension's own objects, by name, in its schema.
 *
 * The planner code must recognise our functions in query trees and build
 * new calls to others, and the hamming access method checks and costs its
 * operator classes' operators, so they need their OIDs.  They are looked up in the
 * schema the extension was installed into (never via search_path), cached
 * per backend, and forgotten whenever pg_proc, pg_type, pg_operator or
 * pg_namespace change, which covers CREATE / DROP / ALTER EXTENSION ...
 * SET SCHEMA.  The lookups are cheap, so a cache dropped by unrelated DDL
 * costs nothing worth avoiding.
 *
 * Functions users do not call by name live in the schema neardup_internal
 * from 0.4 on (doc/reference.md); the one the planner needs, the function
 * behind <~>, is found through the operator, whichever schema holds it, so
 * that the library serves a database still on an older version's SQL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "shared/extension_catalog.h"

static NdCatalog nd_cat;
static bool nd_cat_valid = false;
static bool nd_cat_callbacks = false;

static void
nd_catalog_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	nd_cat_valid = false;
}

/* The schema of the installed extension, or InvalidOid. */
static Oid
nd_extension_namespace(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("neardup"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

static Oid
nd_lookup_type(const char *name, Oid nsp)
{
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
						   CStringGetDatum(name), ObjectIdGetDatum(nsp));
}

static Oid
nd_lookup_func(const char *name, Oid nsp, int nargs, Oid arg0, Oid arg1, Oid arg2)
{
	Oid			argtypes[3] = {arg0, arg1, arg2};
	oidvector  *args;

	if (!OidIsValid(arg0) || !OidIsValid(arg1) || (nargs > 2 && !OidIsValid(arg2)))
		return InvalidOid;
	args = buildoidvector(argtypes, nargs);
	return GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
						   CStringGetDatum(name), PointerGetDatum(args),
						   ObjectIdGetDatum(nsp));
}

static Oid
nd_lookup_oper(const char *name, Oid nsp, Oid left, Oid right)
{
	if (!OidIsValid(left) || !OidIsValid(right))
		return InvalidOid;
	return GetSysCacheOid4(OPERNAMENSP, Anum_pg_operator_oid,
						   CStringGetDatum(name), ObjectIdGetDatum(left),
						   ObjectIdGetDatum(right), ObjectIdGetDatum(nsp));
}

/*
 * The cached OIDs.  Must be called inside a transaction.  `installed` is
 * false unless every object was found: during CREATE EXTENSION the script
 * is half-run, and the cache is rebuilt after each of its commands.
 */
const NdCatalog *
nd_catalog(void)
{
	NdCatalog	c;
	Oid			nsp;

	if (nd_cat_valid)
		return &nd_cat;

	if (!nd_cat_callbacks)
	{
		CacheRegisterSyscacheCallback(PROCOID, nd_catalog_invalidate, (Datum) 0);
		CacheRegisterSyscacheCallback(TYPEOID, nd_catalog_invalidate, (Datum) 0);
		CacheRegisterSyscacheCallback(OPEROID, nd_catalog_invalidate, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACEOID, nd_catalog_invalidate, (Datum) 0);
		nd_cat_callbacks = true;
	}

	/*
	 * Mark valid before looking up: the lookups read catalogs and can accept
	 * invalidation messages, which must then win and force a new lookup.
	 */
	nd_cat_valid = true;

	memset(&c, 0, sizeof(c));
	nsp = nd_extension_namespace();
	if (OidIsValid(nsp))
	{
		c.namespace = nsp;
		c.simhash64_type = nd_lookup_type("simhash64", nsp);
		c.hamming_ball_type = nd_lookup_type("hamming_ball", nsp);
		c.hamming_block_ball_type = nd_lookup_type("hamming_block_ball", nsp);
		c.distance_fn = nd_lookup_func("hamming_distance", nsp, 2,
									   c.simhash64_type, c.simhash64_type,
									   InvalidOid);
		c.within_fn = nd_lookup_func("within", nsp, 3,
									 c.simhash64_type, c.simhash64_type,
									 INT4OID);
		c.ball_fn = nd_lookup_func("hamming_ball", nsp, 2,
								   c.simhash64_type, INT4OID, InvalidOid);
		c.in_ball_op = nd_lookup_oper("<@", nsp,
									  c.simhash64_type, c.hamming_ball_type);
		c.ball_has_op = nd_lookup_oper("@>", nsp,
									   c.hamming_ball_type, c.simhash64_type);
		c.collides_op = nd_lookup_oper("&&", nsp,
									   c.hamming_ball_type, c.hamming_ball_type);
		c.bands_fn = nd_lookup_func("minhash_bands", nsp, 3,
									INT4ARRAYOID, INT4OID, INT4OID);
		c.bands_overlap_fn = nd_lookup_func("minhash_bands_overlap", nsp, 2,
											INT8ARRAYOID, INT8ARRAYOID, InvalidOid);
		c.distance_op = nd_lookup_oper("<~>", nsp,
									   c.simhash64_type, c.simhash64_type);
		/* simhash64_hamming(), in neardup_internal from 0.4 on */
		c.hamming_fn = OidIsValid(c.distance_op) ? get_opcode(c.distance_op) : InvalidOid;
		c.similarity_fn = nd_lookup_func("simhash_similarity", nsp, 2,
										 c.simhash64_type, c.simhash64_type,
										 InvalidOid);
		c.installed = OidIsValid(c.hamming_fn) && OidIsValid(c.distance_fn) &&
			OidIsValid(c.within_fn) && OidIsValid(c.ball_fn) &&
			OidIsValid(c.in_ball_op) && OidIsValid(c.ball_has_op);
	}

	nd_cat = c;
	return &nd_cat;
}
