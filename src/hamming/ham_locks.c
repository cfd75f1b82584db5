/*-------------------------------------------------------------------------
 *
 * ham_locks.c
 *		The maintenance locks of an index -- the flush lock, the flushing
 *		lock, the compaction lock, and the maintenance lock that is the
 *		first and the last together -- and the background worker's yield to
 *		a session that waits for a lock on the index.
 *
 * README, "Locks", gives who takes which, in what order, and who may only
 * try them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

/*
 * Heavyweight locks on the index as an object (classid pg_class, objid the
 * index; core never locks a relation that way), told apart by objsubid --
 * not page locks: PostgreSQL allows no other heavyweight lock to be taken
 * while a page lock is held, and the run writer's sorts look up catalogs.
 */
#define HAM_FLUSH_LOCK_SUBID	0x4e44	/* "ND" */
#define HAM_FLUSHING_LOCK_SUBID	0x4e45	/* "NE" */
#define HAM_COMPACT_LOCK_SUBID	0x4e46	/* "NF" */

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
ham_flush_lock(Relation index)
{
	lock_index_object(index, HAM_FLUSH_LOCK_SUBID);
}

bool
ham_flush_trylock(Relation index)
{
	return trylock_index_object(index, HAM_FLUSH_LOCK_SUBID);
}

void
ham_flush_unlock(Relation index)
{
	unlock_index_object(index, HAM_FLUSH_LOCK_SUBID);
}

/*
 * The flush lock: flushes hold it, and so do VACUUM, the build and the
 * check (within the maintenance lock), so that none of them overlaps
 * another.
 */
/*
 * The flushing lock: held by a flush alone, within the flush lock, so that
 * an insert at the brake can tell a flush -- worth waiting for -- from
 * maintenance that is not.
 */
void
ham_flushing_lock(Relation index)
{
	lock_index_object(index, HAM_FLUSHING_LOCK_SUBID);
}

void
ham_flushing_unlock(Relation index)
{
	unlock_index_object(index, HAM_FLUSHING_LOCK_SUBID);
}

bool
ham_flush_running(Relation index)
{
	if (!trylock_index_object(index, HAM_FLUSHING_LOCK_SUBID))
		return true;
	unlock_index_object(index, HAM_FLUSHING_LOCK_SUBID);
	return false;
}

/*
 * The compaction lock: held by a compaction, and by VACUUM, the build and
 * the check (within the maintenance lock, after the flush lock).  A
 * session that holds it only ever tries the flush lock, never waits for it.
 */
void
ham_compact_lock(Relation index)
{
	lock_index_object(index, HAM_COMPACT_LOCK_SUBID);
}

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

/*
 * The maintenance lock: the flush lock, then the compaction lock -- no
 * flush, no compaction, no other maintenance meanwhile.  VACUUM, the build,
 * the check and recycling hold it.
 */
void
ham_maintenance_lock(Relation index)
{
	lock_index_object(index, HAM_FLUSH_LOCK_SUBID);
	lock_index_object(index, HAM_COMPACT_LOCK_SUBID);
}

void
ham_maintenance_unlock(Relation index)
{
	unlock_index_object(index, HAM_COMPACT_LOCK_SUBID);
	unlock_index_object(index, HAM_FLUSH_LOCK_SUBID);
}

/*
 * Set by the background worker: its flushes and compactions give way to a
 * session that waits for a lock on the index (DROP INDEX, REINDEX, ALTER
 * ...), as autovacuum gives way, instead of making it -- and every query
 * queued behind its lock on the table -- wait out a compaction of the whole
 * index.  The run writer and the flush's reading of the list call
 * ham_maybe_yield now and then.
 */
bool		ham_yields = false;

void
ham_maybe_yield(Relation index)
{
	if (ham_yields && LockHasWaitersRelation(index, HAM_WORKER_LOCKMODE))
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling merge of hamming index \"%s\"", RelationGetRelationName(index)),
				 errdetail("Another session waits for a lock on the index."),
				 errhint("The pending list stays as it is; a later insert or VACUUM merges it.")));
}
