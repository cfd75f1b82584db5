/*-------------------------------------------------------------------------
 *
 * ham_locks.c
 *		The maintenance locks of an index, and the background worker's yield
 *		to a session that waits for a lock on the index.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "hamming.h"

/*
 * The merge lock: merges, VACUUM, the integrity check and the build hold it
 * so that none of them overlaps another.  It is a heavyweight lock on the
 * index as an object (classid pg_class, objsubid HAM_MERGE_LOCK_SUBID;
 * core never locks a relation that way), not a page lock: PostgreSQL
 * allows no other heavyweight lock to be taken while a page lock is held,
 * and a merge's sorts look up catalogs.  Only the primary takes it: merges
 * and VACUUM do not run during recovery.
 */
#define HAM_MERGE_LOCK_SUBID	0x4e44	/* "ND" */

/* The index's object locks, told apart by objsubid */
static void
lock_index_object(Relation index, int32 subid)
{
	LockDatabaseObject(RelationRelationId, RelationGetRelid(index), subid, ExclusiveLock);
}

static bool
trylock_index_object(Relation index, int32 subid)
{
	return ConditionalLockDatabaseObject(RelationRelationId, RelationGetRelid(index), subid,
										 ExclusiveLock);
}

static void
unlock_index_object(Relation index, int32 subid)
{
	UnlockDatabaseObject(RelationRelationId, RelationGetRelid(index), subid, ExclusiveLock);
}

void
ham_merge_lock(Relation index)
{
	lock_index_object(index, HAM_MERGE_LOCK_SUBID);
}

bool
ham_merge_trylock(Relation index)
{
	return trylock_index_object(index, HAM_MERGE_LOCK_SUBID);
}

void
ham_merge_unlock(Relation index)
{
	unlock_index_object(index, HAM_MERGE_LOCK_SUBID);
}

/*
 * A second lock, held by a merge alone (not by VACUUM, the check or the
 * build, which also hold the merge lock), so that an insert at the brake can
 * tell a merge -- worth waiting for -- from maintenance that is not.
 */
#define HAM_MERGING_LOCK_SUBID	0x4e45	/* "NE" */

void
ham_flushing_lock(Relation index)
{
	lock_index_object(index, HAM_MERGING_LOCK_SUBID);
}

void
ham_flushing_unlock(Relation index)
{
	unlock_index_object(index, HAM_MERGING_LOCK_SUBID);
}

bool
ham_merge_running(Relation index)
{
	if (!trylock_index_object(index, HAM_MERGING_LOCK_SUBID))
		return true;
	unlock_index_object(index, HAM_MERGING_LOCK_SUBID);
	return false;
}

/*
 * The compaction lock: held by a compaction, and with the merge lock by
 * VACUUM, the build and the check (ham_maintenance_lock), which take the
 * merge lock first.  A session that holds it only ever tries the merge
 * lock without waiting.
 */
#define HAM_COMPACT_LOCK_SUBID	0x4e46	/* "NF" */

bool
ham_compact_trylock(Relation index)
{
	return trylock_index_object(index, HAM_COMPACT_LOCK_SUBID);
}

void
ham_compact_unlock(Relation index)
{
	unlock_index_object(index, HAM_COMPACT_LOCK_SUBID);
}

void
ham_compact_lock(Relation index)
{
	lock_index_object(index, HAM_COMPACT_LOCK_SUBID);
}

/* Both locks: no flush, no compaction, no other maintenance meanwhile. */
void
ham_maintenance_lock(Relation index)
{
	lock_index_object(index, HAM_MERGE_LOCK_SUBID);
	lock_index_object(index, HAM_COMPACT_LOCK_SUBID);
}

void
ham_maintenance_unlock(Relation index)
{
	unlock_index_object(index, HAM_COMPACT_LOCK_SUBID);
	unlock_index_object(index, HAM_MERGE_LOCK_SUBID);
}

/*
 * Set by the background worker: its merges give way to a session that
 * waits for a lock on the index (DROP INDEX, REINDEX, ALTER ...), as
 * autovacuum gives way, instead of making it -- and every query queued
 * behind its lock on the table -- wait out a merge of the whole run.
 */
bool		ham_merge_yields = false;

void
ham_merge_check_yield(Relation index)
{
	if (ham_merge_yields && LockHasWaitersRelation(index, HAM_WORKER_LOCKMODE))
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling merge of hamming index \"%s\"", RelationGetRelationName(index)),
				 errdetail("Another session waits for a lock on the index."),
				 errhint("The pending list stays as it is; a later insert or VACUUM merges it.")));
}
