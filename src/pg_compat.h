/*-------------------------------------------------------------------------
 *
 * pg_compat.h
 *		What differs between the PostgreSQL majors neardup builds against,
 *		in one place (as Citus keeps pg_version_compat.h).
 *
 * The code is written against the newest API.  Where a newer major
 * renamed something, the older spelling is mapped to the newer name here;
 * where a signature changed, a *_compat macro takes the newest arguments
 * and drops what an older major does not have; where a struct member was
 * renamed, an nd_* accessor names it.  Majors compiled against: 15 and 18
 * (16 and 17 are covered from their release notes and headers' history
 * only, not compiled here).
 *
 * Include it after postgres.h, in place of the headers it wraps.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_PG_COMPAT_H
#define ND_PG_COMPAT_H

#include "postgres.h"

#include "access/genam.h"
#include "catalog/pg_class.h"
#include "optimizer/restrictinfo.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

/* 16: the varlena macros left postgres.h for varatt.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * 18: pg_noreturn is a function specifier and goes before the declaration;
 * pg_attribute_noreturn(), after it, is gone.  On older majors the GCC
 * attribute is accepted in front as well.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * 16: RelFileNode became RelFileLocator (spcOid, dbOid, relNumber), and
 * the members holding one were renamed.  neardup only copies and compares
 * them, so the older type serves under the newer name.
 */
#if PG_VERSION_NUM < 160000
typedef RelFileNode RelFileLocator;
#define RelFileLocatorEquals(a, b) RelFileNodeEquals(a, b)
#define nd_rel_locator(rel) ((rel)->rd_node)
#define nd_smgr_locator(smgr) ((smgr)->smgr_rnode.node)
#define nd_rel_first_locator_subid(rel) ((rel)->rd_firstRelfilenodeSubid)
#else
#define nd_rel_locator(rel) ((rel)->rd_locator)
#define nd_smgr_locator(smgr) ((smgr)->smgr_rlocator.locator)
#define nd_rel_first_locator_subid(rel) ((rel)->rd_firstRelfilelocatorSubid)
#endif

/*
 * 16: the per-class ownership checks (pg_class_ownercheck, ...) became one
 * object_ownercheck(classid, ...).  neardup checks relations only.
 */
#if PG_VERSION_NUM < 160000
static inline bool
object_ownercheck(Oid classid, Oid objectid, Oid roleid)
{
	if (classid != RelationRelationId)
		elog(ERROR, "object_ownercheck of catalog %u is not mapped before PostgreSQL 16",
			 classid);
	return pg_class_ownercheck(objectid, roleid);
}
#endif

/*
 * 16: pgstat_fetch_stat_local_beentry(index) became
 * pgstat_get_local_beentry_by_index (the old name then took a backend id).
 */
#if PG_VERSION_NUM < 160000
#define pgstat_get_local_beentry_by_index(idx) pgstat_fetch_stat_local_beentry(idx)
#endif

/*
 * 16: tuplesort_getdatum gained "copy"; before, a by-reference datum was
 * always a fresh copy, so the argument only matters from 16 on.
 */
#if PG_VERSION_NUM >= 160000
#define tuplesort_getdatum_compat(state, forward, copy, val, isNull, abbrev) \
	tuplesort_getdatum(state, forward, copy, val, isNull, abbrev)
#else
#define tuplesort_getdatum_compat(state, forward, copy, val, isNull, abbrev) \
	tuplesort_getdatum(state, forward, val, isNull, abbrev)
#endif

/* 17: estimate_array_length(root, arrayexpr), which reads the statistics */
#if PG_VERSION_NUM >= 170000
#define estimate_array_length_compat(root, arrayexpr) estimate_array_length(root, arrayexpr)
#else
#define estimate_array_length_compat(root, arrayexpr) ((double) estimate_array_length(arrayexpr))
#endif

/* 18: vacuum_delay_point(is_analyze) */
#if PG_VERSION_NUM >= 180000
#define vacuum_delay_point_compat(is_analyze) vacuum_delay_point(is_analyze)
#else
#define vacuum_delay_point_compat(is_analyze) vacuum_delay_point()
#endif

/*
 * 18: EXPLAIN ANALYZE shows "Index Searches", which each access method
 * counts itself, once per descent into the index (nbtree, GiST and bloom
 * count one per rescan that searches).
 */
#if PG_VERSION_NUM >= 180000
#define nd_count_index_search(scan) \
	do { \
		if ((scan)->instrument) \
			(scan)->instrument->nsearches++; \
	} while (0)
#else
#define nd_count_index_search(scan) ((void) 0)
#endif

/*
 * A RestrictInfo as "rinfo" but for another spelling of its clause (the
 * same condition): every flag and relid set of the original is kept.
 *
 * 16 replaced outerjoin_delayed and nullable_relids (outer joins are now
 * tracked by the Vars' varnullingrels) with has_clone, is_clone and
 * incompatible_relids, and numbers each RestrictInfo (rinfo_serial): a
 * new spelling of the same condition keeps the original's number, as the
 * planner's own commuted and constant-folded copies do, so that the
 * clause is still recognised as the one its clones and child copies
 * derive from.
 */
static inline RestrictInfo *
nd_restrictinfo_respell(PlannerInfo *root, RestrictInfo *rinfo, Expr *clause)
{
	RestrictInfo *result;

#if PG_VERSION_NUM >= 160000
	result = make_restrictinfo(root, clause,
							   rinfo->is_pushed_down,
							   rinfo->has_clone,
							   rinfo->is_clone,
							   rinfo->pseudoconstant,
							   rinfo->security_level,
							   rinfo->required_relids,
							   rinfo->incompatible_relids,
							   rinfo->outer_relids);
	result->rinfo_serial = rinfo->rinfo_serial;
#else
	result = make_restrictinfo(root, clause,
							   rinfo->is_pushed_down,
							   rinfo->outerjoin_delayed,
							   rinfo->pseudoconstant,
							   rinfo->security_level,
							   rinfo->required_relids,
							   rinfo->outer_relids,
							   rinfo->nullable_relids);
#endif
	return result;
}

/*
 * 18: the module's name and version in its magic block (shown by
 * pg_get_loaded_modules()); ND_VERSION comes from the Makefile.
 */
#ifdef PG_MODULE_MAGIC_EXT
#define ND_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "neardup", .version = ND_VERSION)
#else
#define ND_MODULE_MAGIC PG_MODULE_MAGIC
#endif

#endif							/* ND_PG_COMPAT_H */
