/*-------------------------------------------------------------------------
 *
 * ham_open.c
 *		The index an SQL function (hamming_merge, hamming_stats, hamming_runs,
 *		hamming_check) is given: its owner checked before any lock is taken,
 *		a partitioned index taken as the indexes of its leaf partitions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "hamming/hamming.h"

/*
 * The user must own the relation, checked before any lock is taken: a
 * non-owner is refused at once instead of queueing behind the owner's
 * locks (as RangeVarGetRelidExtended's callbacks do for DDL).  Errors for
 * a relation that does not exist.
 */
void
ham_check_owner(Oid indexoid)
{
	HeapTuple	tuple;
	Oid			owner;
	char	   *name;

	/*
	 * The owner from pg_class directly: object_ownercheck (16 on) reports
	 * a missing relation as an internal error, "cache lookup failed".
	 */
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u does not exist", indexoid)));
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	name = pstrdup(NameStr(((Form_pg_class) GETSTRUCT(tuple))->relname));
	ReleaseSysCache(tuple);
	/* superusers and members of the owning role, as the ownership checks */
	if (!has_privs_of_role(GetUserId(), owner))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, name);
	pfree(name);
}

/*
 * The indexes one of the SQL functions given `indexoid` works on: that
 * index, or, for a partitioned hamming index, the index of every leaf
 * partition (of sub-partitions too), as find_all_inheritors orders them.
 * A plain index is neither locked nor checked here (ham_open_index does
 * both); a partitioned one is share-locked after its owner is checked, and
 * the owner of every leaf is checked too, before any is locked (and again
 * by ham_open_index when the caller opens it).
 */
List *
ham_leaf_indexes(Oid indexoid)
{
	Relation	parent;
	List	   *leaves = NIL;
	ListCell   *lc;

	if (get_rel_relkind(indexoid) != RELKIND_PARTITIONED_INDEX)
		return list_make1_oid(indexoid);
	ham_check_owner(indexoid);
	parent = try_relation_open(indexoid, AccessShareLock);
	if (parent == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (parent->rd_rel->relkind != RELKIND_PARTITIONED_INDEX || parent->rd_indam == NULL ||
		parent->rd_indam->ambuild != ham_build)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hamming index", RelationGetRelationName(parent))));
	if (!object_ownercheck(RelationRelationId, indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, RelationGetRelationName(parent));
	foreach(lc, find_all_inheritors(indexoid, NoLock, NULL))
	{
		Oid			child = lfirst_oid(lc);

		if (get_rel_relkind(child) == RELKIND_INDEX)
		{
			/* every owner before any work: not after checking half of them */
			ham_check_owner(child);
			leaves = lappend_oid(leaves, child);
		}
	}
	relation_close(parent, NoLock);
	return leaves;
}

/*
 * Open an index given to one of the SQL functions: it must be a hamming
 * index the user owns (as VACUUM and gin_clean_pending_list require).
 * Ownership is checked before the lock is taken and again after (it may
 * have changed while we waited).
 */
Relation
ham_open_index(Oid indexoid, LOCKMODE lockmode)
{
	Relation	index;

	ham_check_owner(indexoid);
	index = try_relation_open(indexoid, lockmode);

	if (index == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (!ham_is_hamming_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hamming index", RelationGetRelationName(index))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
	if (!object_ownercheck(RelationRelationId, indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, RelationGetRelationName(index));
	return index;
}
