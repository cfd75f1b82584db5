/*-------------------------------------------------------------------------
 *
 * ham_merge.c
 *		Merging the pending list into the run, and recycling the pages
 *		merges retire.
 *
 * A merge holds the index's merge lock (ham_merge_lock), which VACUUM,
 * the build and the check also take, so merges, VACUUM and recycling never
 * overlap.  It
 *
 *	1. seals the pending list: under the metapage's exclusive lock the list
 *	   becomes `sealed` and a new, empty pending list starts.  Inserters
 *	   append under the metapage's share lock, so none is still writing to
 *	   a sealed page once the seal is done;
 *	2. writes a new run of the old run's entries and the sealed list's
 *	   (ham_run.c), while scans and inserts go on: only the list's entries
 *	   are sorted, each table of the old run is read in order and merged
 *	   with them;
 *	3. points the metapage at the new run, empties `sealed`, and stamps the
 *	   next transaction id as `retired_xid`.
 *
 * Scans read the metapage once and then the pages it names, so after step
 * 3 a scan may still be reading the old run.  Its pages are recycled (put
 * in the free space map) only when retired_xid is older than every
 * snapshot -- the nbtree rule for deleted pages.  Should the merge fail
 * between 1 and 3, the sealed list stays in the metapage (scans read it,
 * the next merge takes it) and the pages written so far belong to no run
 * or list: the next recycling frees them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "hamming.h"

/*
 * The pending entries at which an insert merges the list: the
 * pending_limit, and -- so that a merge, which rewrites the whole run, costs
 * each entry a bounded number of rewrites -- at least a sixteenth of the run.
 */
uint64
ham_merge_threshold(Relation index, const HamSnapshot *snap)
{
	return Max((uint64) ham_pending_limit_entries(index), (snap->run_entries + 15) / 16);
}

/*
 * Should the pending list be merged?  When the lists hold the threshold
 * above; VACUUM merges any list that holds a sixteenth of the run.
 */
bool
ham_merge_wanted(Relation index, const HamSnapshot *snap, bool vacuuming)
{
	uint64		pending = snap->pending.nentries + snap->sealed.nentries;

	if (pending == 0)
		return false;
	if (pending * 16 < snap->run_entries)
		return false;
	return vacuuming || pending >= ham_merge_threshold(index, snap);
}

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

bool
ham_merge_running(Relation index)
{
	if (!trylock_index_object(index, HAM_MERGING_LOCK_SUBID))
		return true;
	unlock_index_object(index, HAM_MERGING_LOCK_SUBID);
	return false;
}

/*
 * Set and clear metapage flags, WAL-logged; bump_cleanups also invalidates
 * every backend's cached lists (ham_cache.c).  The caller holds the merge
 * lock.
 */
void
ham_meta_set_flags(Relation index, uint32 set, uint32 clear, bool bump_cleanups)
{
	Buffer		metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	GenericXLogState *state;
	HamMetaPageData *meta;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = HamPageGetMeta(BufferGetPage(metabuf));
	if (!bump_cleanups && (meta->flags & set) == set && (meta->flags & clear) == 0)
	{
		UnlockReleaseBuffer(metabuf);
		return;
	}
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	meta->flags = (meta->flags | set) & ~clear;
	if (bump_cleanups)
		meta->list_cleanups++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
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

typedef struct HamMergeFeed
{
	Relation	index;
	HamRunWriter *writer;
	int64		added;			/* entries taken from the list */
} HamMergeFeed;

/* Add the entries of a list page to the writer (ham_list_walk). */
static void
ham_merge_list_page(Page page, void *arg)
{
	HamMergeFeed *feed = (HamMergeFeed *) arg;

	for (int i = 0; i < HamPageGetOpaque(page)->nentries; i++)
		ham_run_writer_add(feed->writer, HamPageCodes(page)[i], &HamPageTids(page)[i]);
	feed->added += HamPageGetOpaque(page)->nentries;
	ham_merge_check_yield(feed->index);
}

/*
 * Write the new run from the sealed list and the old run.  Normally each
 * table of the old run is read in its own order and merged with the sorted
 * list; when the old run's tables are uneven (a VACUUM pass over them was
 * cancelled: HAM_META_RUN_UNEVEN, or tables found to differ, as in an
 * index that 0.2 vacuumed so), the new run is written from table 0 alone,
 * which holds every live entry.  Returns the header (InvalidBlockNumber:
 * no entries).
 */
static BlockNumber
ham_merge_write(Relation index, int nblocks, uint32 epoch, const HamList *sealed,
				BlockNumber old_header, uint32 old_epoch, bool uneven, uint64 *nentries,
				int64 *merged)
{
	HamMergeFeed feed;
	HamRunDir	old;
	BlockNumber header;
	bool		found_uneven = false;

	feed.index = index;
	for (int attempt = 0; attempt < 2; attempt++)
	{
		feed.writer = ham_run_writer_begin(index, nblocks, epoch, maintenance_work_mem);
		feed.added = 0;
		ham_list_walk(index, sealed, ham_merge_list_page, &feed);
		*merged = feed.added;
		if (old_header == InvalidBlockNumber)
			return ham_run_writer_finish(feed.writer, NULL, nentries, NULL);

		ham_run_dir_open(index, old_header, old_epoch, &old);
		if (!uneven)
		{
			header = ham_run_writer_finish(feed.writer, &old, nentries, &found_uneven);
			if (!found_uneven)
				return header;
			/* the pages written so far are garbage, recycled later */
			ereport(LOG,
					(errmsg("hamming index \"%s\": the tables of its run hold different entries; writing the new run from table 0",
							RelationGetRelationName(index))));
			uneven = true;
			continue;
		}

		/* table 0, unrotated, as new entries */
		ham_run_dir_load_table(index, &old, 0);
		for (uint32 p = 0; p < old.ndata[0]; p++)
		{
			Buffer		buf = ham_read_run_page(index, &old, 0, p);
			Page		page = BufferGetPage(buf);
			int			n = HamPageGetOpaque(page)->nentries;

			for (int i = 0; i < n; i++)
				ham_run_writer_add(feed.writer, nd_unpermute(&old.layout, 0, HamPageCodes(page)[i]),
								   &HamPageTids(page)[i]);
			UnlockReleaseBuffer(buf);
			ham_merge_check_yield(index);
			CHECK_FOR_INTERRUPTS();
		}
		return ham_run_writer_finish(feed.writer, NULL, nentries, NULL);
	}
	pg_unreachable();
	return InvalidBlockNumber;
}

/*
 * Merge the pending list into the run.  With `wait` false, returns false at
 * once if another merge, VACUUM or check holds the merge lock.  by_insert:
 * an inserting session merges (counted apart).  *merged: the entries the
 * merge took from the sealed list (not the change in the run's size, which
 * VACUUM's removals since the last merge would make smaller).
 */
bool
ham_merge(Relation index, bool wait, bool by_insert, int64 *merged)
{
	bool		done;

	*merged = 0;
	if (wait)
		ham_merge_lock(index);
	else if (!ham_merge_trylock(index))
		return false;
	done = ham_merge_locked(index, by_insert, merged);
	ham_merge_unlock(index);
	return done;
}

static bool ham_merge_locked_work(Relation index, bool by_insert, int64 *merged);

/*
 * ham_merge, for a caller that holds the merge lock.  An index that is not
 * ready (CREATE INDEX CONCURRENTLY has not finished building it) is left
 * alone: its pages are the build's.
 */
bool
ham_merge_locked(Relation index, bool by_insert, int64 *merged)
{
	bool		done;

	*merged = 0;
	if (!index->rd_index->indisready)
		return false;
	lock_index_object(index, HAM_MERGING_LOCK_SUBID);
	done = ham_merge_locked_work(index, by_insert, merged);
	unlock_index_object(index, HAM_MERGING_LOCK_SUBID);
	return done;
}

static bool
ham_merge_locked_work(Relation index, bool by_insert, int64 *merged)
{
	MemoryContext merge_ctx,
				old_ctx;
	Buffer		metabuf;
	GenericXLogState *state;
	HamMetaPageData *meta;
	BlockNumber old_header;
	uint32		old_epoch,
				new_epoch;
	int			nblocks;
	bool		uneven;
	HamList		sealed;
	BlockNumber header;
	uint64		nentries;

	/* what the merge reads and sorts is freed when it ends */
	merge_ctx = AllocSetContextCreate(CurrentMemoryContext, "hamming merge",
									  ALLOCSET_DEFAULT_SIZES);
	old_ctx = MemoryContextSwitchTo(merge_ctx);

	ham_recycle(index);

	/* 1. seal */
	metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (meta->sealed.head == InvalidBlockNumber && meta->pending.head != InvalidBlockNumber)
	{
		meta->sealed = meta->pending;
		ham_empty_list(&meta->pending, meta->next_epoch++);
	}
	sealed = meta->sealed;
	old_header = meta->run_header;
	old_epoch = meta->run_epoch;
	nblocks = meta->nblocks;
	uneven = (meta->flags & HAM_META_RUN_UNEVEN) != 0;
	new_epoch = meta->next_epoch++;
	/* from here on, pages may be left that belong to nothing */
	if (sealed.head != InvalidBlockNumber)
		meta->flags |= HAM_META_GARBAGE;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	if (sealed.head == InvalidBlockNumber)
	{
		MemoryContextSwitchTo(old_ctx);
		MemoryContextDelete(merge_ctx);
		return false;
	}

	/* 2. the new run */
	header = ham_merge_write(index, nblocks, new_epoch, &sealed, old_header, old_epoch,
							 uneven, &nentries, merged);

	/* 3. swap */
	metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	meta->run_header = header;
	meta->run_epoch = new_epoch;
	meta->run_entries = nentries;
	ham_empty_list(&meta->sealed, 0);
	meta->retired_xid = ReadNextFullTransactionId();
	meta->flags &= ~HAM_META_RUN_UNEVEN;
	meta->merges++;
	if (by_insert)
		meta->insert_merges++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	MemoryContextSwitchTo(old_ctx);
	MemoryContextDelete(merge_ctx);
	return true;
}

/*
 * Put in the free space map every page that belongs to no live run or list,
 * once no scan can be reading them.  The caller holds the merge lock.
 * Nothing to do unless a merge has left garbage since the last pass
 * (HAM_META_GARBAGE); the pass reads the index through a ring of buffers,
 * as a sequential scan does, not through all of shared_buffers.
 */
void
ham_recycle(Relation index)
{
	HamSnapshot snap;
	Buffer		metabuf;
	HamMetaPageData *meta;
	FullTransactionId retired_xid;
	uint32		flags;
	BlockNumber nblocks;
	BufferAccessStrategy strategy;
	bool		freed = false;

	metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = HamPageGetMeta(BufferGetPage(metabuf));
	retired_xid = meta->retired_xid;
	flags = meta->flags;
	UnlockReleaseBuffer(metabuf);

	if (!(flags & HAM_META_GARBAGE))
		return;
	if (FullTransactionIdIsValid(retired_xid) &&
		!GlobalVisCheckRemovableFullXid(NULL, retired_xid))
		return;

	strategy = GetAccessStrategy(BAS_BULKREAD);
	ham_read_snapshot(index, &snap);
	nblocks = RelationGetNumberOfBlocks(index);
	for (BlockNumber blkno = HAM_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
		Page		page;
		HamPageOpaque opaque;
		bool		garbage;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		opaque = HamPageGetOpaque(page);
		garbage = !ham_page_live(&snap, page);

		/*
		 * A page of no run or list is reachable by nobody (merges are
		 * excluded, and it is not in the free space map yet): mark it free.
		 */
		if (garbage && !PageIsNew(page) && opaque->kind != HAM_KIND_FREE)
		{
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			if (opaque->page_id == HAM_PAGE_ID &&
				((PageHeader) page)->pd_lower == ((PageHeader) page)->pd_upper)
				ham_page_set_free(index, buf);
			else
			{
				/* not a page of ours as we write them: write it whole */
				GenericXLogState *state = GenericXLogStart(index);

				page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
				ham_init_page(page, HAM_KIND_FREE, 0, 0);
				GenericXLogFinish(state);
			}
		}
		UnlockReleaseBuffer(buf);
		if (garbage)
		{
			RecordFreeIndexPage(index, blkno);
			freed = true;
		}
		CHECK_FOR_INTERRUPTS();
	}
	FreeAccessStrategy(strategy);
	if (freed)
		IndexFreeSpaceMapVacuum(index);
	ham_meta_set_flags(index, 0, HAM_META_GARBAGE, false);
}

/*
 * hamming_merge(index): merge the pending list into the run now, as VACUUM
 * would; returns the number of entries merged.  Waits for a merge or VACUUM
 * under way.
 */
PG_FUNCTION_INFO_V1(hamming_merge);
Datum
hamming_merge(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	int64		merged = 0;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("A hamming index cannot be merged during recovery.")));
	index = ham_open_index(indexoid, RowExclusiveLock);
	if (!index->rd_index->indisready)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is not ready", RelationGetRelationName(index)),
				 errdetail("CREATE INDEX CONCURRENTLY or REINDEX CONCURRENTLY is still building it.")));
	ham_merge(index, true, false, &merged);
	index_close(index, RowExclusiveLock);

	/*
	 * A merge is not undone by a rollback, and the caller expects it to
	 * survive a crash once we return; a transaction that wrote only WAL
	 * (no transaction id) would not flush it at commit.
	 */
	if (XactLastRecEnd != InvalidXLogRecPtr)
		XLogFlush(XactLastRecEnd);
	PG_RETURN_INT64(merged);
}
