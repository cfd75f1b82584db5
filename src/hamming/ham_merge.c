/*-------------------------------------------------------------------------
 *
 * ham_merge.c
 *		Flushing the pending list into a new run, compacting runs, and
 *		recycling the pages both retire.
 *
 * The index is log-structured: inserts append to the pending list; a
 * *flush* turns the list into a new small run; a *compaction* merges the
 * newest runs into one, by the tiered policy of nd_lsm.h, so that an entry
 * is rewritten about once per tier (log_fanout of the index over the flush
 * size) and the index holds a few runs per tier.  No merge is triggered in
 * proportion to the whole index; the list a scan reads whole stays at
 * about a flush's worth (the pending_limit), and at most a third more than
 * that under the brake (ham_brake_wanted).
 *
 * A flush holds the merge lock (ham_merge_lock).  It
 *
 *	1. seals the pending list: under the metapage's exclusive lock the list
 *	   becomes `sealed` and a new, empty pending list starts.  Inserters
 *	   append under the metapage's share lock, so none is still writing to
 *	   a sealed page once the seal is done;
 *	2. sorts the sealed list's entries into a new run (ham_run.c), while
 *	   scans and inserts go on;
 *	3. appends the run to the metapage's runs, empties `sealed`, and stamps
 *	   the next transaction id as `retired_xid`.
 *
 * A compaction holds the compaction lock alone, so that flushes go on
 * while it rewrites runs -- a compaction that reaches the oldest run
 * rewrites the whole index.  It reads the runs it merges (a suffix of the
 * list: the newest), each table in its own order, writes the merged run,
 * and in the metapage replaces them by it; runs flushed meanwhile stay
 * after it.  VACUUM, the build and the integrity check take both locks
 * (ham_maintenance_lock), the merge lock first: a compaction waits for no
 * lock while holding its own, so the order is never reversed.
 *
 * Scans read the metapage once and then the pages it names, so after step
 * 3 a scan may still be reading retired pages.  They are recycled (put in
 * the free space map) only when retired_xid is older than every snapshot --
 * the nbtree rule for deleted pages -- and only by a session that holds
 * both locks, when no flush or compaction is writing pages that belong to
 * nothing yet.  Should a merge fail before its swap, the lists and runs
 * stay as they were (the sealed list is taken by the next flush) and the
 * pages written so far are recycled later.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "hamming.h"
#include "nd_lsm.h"

/*
 * The pending entries at which an insert flushes the list: the
 * pending_limit, whatever the size of the index -- the list is what every
 * scan reads whole.  It is also the unit of the compaction tiers.
 */
uint64
ham_merge_threshold(Relation index)
{
	return Max((uint64) ham_pending_limit_entries(index), 1);
}

/*
 * The brake: do the lists (sealed and unsealed: what a scan reads whole)
 * hold so many entries that an inserting session must flush them itself
 * rather than leave it to a busy worker?  A third above the flush
 * threshold: room for the inserts that arrive while a worker flushes (an
 * insert would otherwise wait at each flush), and at the default
 * pending_limit (about 75,000 entries) under 100,000 entries, which a scan
 * reads in well under a millisecond.
 */
bool
ham_brake_wanted(Relation index, const HamSnapshot *snap)
{
	uint64		threshold = ham_merge_threshold(index);

	return ham_unmerged_entries(snap) >= threshold + Max(threshold / 3, 1);
}

/*
 * Should the pending list be flushed?  When it holds the threshold above;
 * VACUUM also flushes a shorter list that holds a sixteenth of the runs
 * (a small index has its list folded in at every VACUUM).
 */
bool
ham_merge_wanted(Relation index, const HamSnapshot *snap, bool vacuuming)
{
	uint64		pending = ham_unmerged_entries(snap);

	if (pending == 0)
		return false;
	if (pending >= ham_merge_threshold(index))
		return true;
	return vacuuming && pending * 16 >= snap->run_entries;
}

/*
 * Runs a compaction takes with the pending list's entries `incoming` (0:
 * the newest run stands for them), from the tiered policy; at most
 * HAM_COMPACT_MAX_RUNS runs are left, so that flushes have room to append
 * while a compaction runs.
 */
#define HAM_LSM_FANOUT			4
#define HAM_COMPACT_MAX_RUNS	(HAM_MAX_RUNS / 2)

static int
ham_compact_pick(Relation index, const HamSnapshot *snap)
{
	uint64		sizes[HAM_MAX_RUNS];
	int			n = snap->nruns;

	if (n < 2)
		return 0;
	for (int i = 0; i < n; i++)
		sizes[i] = snap->runs[i].nentries;
	/* the newest run as the incoming one: it and the k before it merge */
	return nd_lsm_pick(sizes, n - 1, sizes[n - 1], ham_merge_threshold(index),
					   HAM_LSM_FANOUT, HAM_COMPACT_MAX_RUNS);
}

bool
ham_compact_wanted(Relation index, const HamSnapshot *snap)
{
	return ham_compact_pick(index, snap) > 0;
}

/*
 * VACUUM removes entries in place, so a run whose rows were deleted keeps
 * its pages; the tiers, which read live counts, may not reach it for a long
 * time (a run of the oldest tier only when the whole index is compacted).
 * A run whose live entries would fill less than HAM_SPARSE_FILL of its data
 * pages is rewritten alone, once that frees HAM_SPARSE_MIN_PAGES or more:
 * under steady churn the runs hold at most a third more pages than their
 * entries need.
 *
 * A compaction writes its run while the runs it replaces are still read,
 * so the index grows to hold both; their pages are recycled later, and new
 * runs reuse them, but the file keeps its size unless its end is free
 * (VACUUM truncates a free end, ham_vacuum.c).  So when a quarter or more
 * of the index holds no run or list, and the free space map has room below
 * it for the run at the index's end, that run is rewritten alone into it:
 * a later VACUUM recycles its old pages and cuts the end off.  Once per
 * compaction call at most.
 */
#define HAM_SPARSE_FILL			0.75
#define HAM_SPARSE_MIN_PAGES	128
#define HAM_RELOCATE_UNUSED		0.25

/* Are there `want` recycled pages below `below`? */
static bool
ham_free_below(Relation index, BlockNumber below, int64 want)
{
	int64		found = 0;

	for (BlockNumber blkno = HAM_METAPAGE_BLKNO + 1; blkno < below && found < want; blkno++)
	{
		if (GetRecordedFreeSpace(index, blkno) > 0)
			found++;
		if (blkno % 8192 == 0)
			CHECK_FOR_INTERRUPTS();
	}
	return found >= want;
}

/* The run to rewrite alone, or -1; *relocate says if it is to move it */
static int
ham_rewrite_pick(Relation index, const HamSnapshot *snap, bool may_relocate, bool *relocate)
{
	int			sparse = -1,
				last = -1;
	double		most = HAM_SPARSE_MIN_PAGES - 1;
	int64		used = 1 + snap->pending.npages + snap->sealed.npages + snap->nulls.npages,
				last_pages = 0;
	BlockNumber nblocks;

	for (int r = 0; r < snap->nruns; r++)
	{
		HamRunDir	dir;
		double		data = 0,
					needed;
		int64		pages;

		ham_run_dir_open(index, snap->runs[r].header, snap->runs[r].epoch, &dir);
		for (int t = 0; t < dir.layout.nblocks; t++)
			data += dir.ndata[t];
		pages = ham_run_pages(&dir);
		pfree(dir.header);
		used += pages;
		needed = ceil((double) snap->runs[r].nentries / HAM_PAGE_CAPACITY) * snap->nblocks;
		if (needed < data * HAM_SPARSE_FILL && data - needed > most)
		{
			most = data - needed;
			sparse = r;
		}
		/* its header is written last, after every other page of it */
		if (last < 0 || snap->runs[r].header > snap->runs[last].header)
		{
			last = r;
			last_pages = pages;
		}
	}
	*relocate = false;
	if (sparse >= 0 || last < 0 || !may_relocate)
		return sparse;
	nblocks = RelationGetNumberOfBlocks(index);
	if ((double) (nblocks - used) >= nblocks * HAM_RELOCATE_UNUSED &&
		snap->runs[last].header + 1 == nblocks &&
		ham_free_below(index, nblocks - (BlockNumber) last_pages, last_pages))
	{
		*relocate = true;
		return last;
	}
	return -1;
}

/*
 * Can a flush not proceed now?  With every run slot taken, a flush merges
 * the list into the newest run, which needs the compaction lock: while a
 * compaction holds it, no flush can be done (ham_flush), however long the
 * list.  The brake waits for that to end (ham_worker.c).
 */
bool
ham_flush_blocked(Relation index, const HamSnapshot *snap)
{
	if (snap->nruns < HAM_MAX_RUNS)
		return false;
	if (!ham_compact_trylock(index))
		return true;
	ham_compact_unlock(index);
	return false;
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

/* Add every entry of a run's table 0 to the writer, as new entries. */
static void
ham_merge_add_table0(Relation index, HamRunWriter *writer, HamRunDir *run)
{
	ham_run_dir_load_table(index, run, 0);
	for (uint32 p = 0; p < run->ndata[0]; p++)
	{
		Buffer		buf = ham_read_run_page(index, run, 0, p);
		Page		page = BufferGetPage(buf);
		int			n = HamPageGetOpaque(page)->nentries;

		for (int i = 0; i < n; i++)
			ham_run_writer_add(writer, nd_unpermute(&run->layout, 0, HamPageCodes(page)[i]),
							   &HamPageTids(page)[i]);
		UnlockReleaseBuffer(buf);
		ham_merge_check_yield(index);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Write a new run from the sealed list (NULL: none) and the runs
 * runs[0..nold).  Normally each table of the old runs is read in its own
 * order and merged with the sorted list; when their tables are uneven (a
 * VACUUM pass over them was cancelled: HAM_META_RUN_UNEVEN, or tables
 * found to differ, as in an index that 0.2 vacuumed so), the new run is
 * written from their tables 0 alone, each of which holds every live entry
 * of its run.  Returns the header (InvalidBlockNumber: no entries).
 */
static BlockNumber
ham_merge_write(Relation index, int nblocks, uint32 epoch, const HamList *sealed,
				const HamRunRef *runs, int nold, bool uneven, uint64 *nentries,
				int64 *merged)
{
	HamMergeFeed feed;
	HamRunDir **old = palloc(sizeof(HamRunDir *) * Max(nold, 1));
	BlockNumber header;
	bool		found_uneven = false;

	for (int r = 0; r < nold; r++)
	{
		old[r] = palloc0(sizeof(HamRunDir));
		ham_run_dir_open(index, runs[r].header, runs[r].epoch, old[r]);
	}
	feed.index = index;
	feed.writer = ham_run_writer_begin(index, nblocks, epoch, maintenance_work_mem);
	feed.added = 0;
	if (sealed)
		ham_list_walk(index, sealed, ham_merge_list_page, &feed);
	*merged = feed.added;
	if (!uneven)
	{
		header = ham_run_writer_finish(feed.writer, old, nold, nentries,
									   nold > 0 ? &found_uneven : NULL);
		if (!found_uneven)
			return header;
		/* the pages written so far are garbage, recycled later */
		ereport(LOG,
				(errmsg("hamming index \"%s\": the tables of its runs hold different entries; writing the new run from tables 0",
						RelationGetRelationName(index))));
		feed.writer = ham_run_writer_begin(index, nblocks, epoch, maintenance_work_mem);
		if (sealed)
			ham_list_walk(index, sealed, ham_merge_list_page, &feed);
	}
	for (int r = 0; r < nold; r++)
		ham_merge_add_table0(index, feed.writer, old[r]);
	return ham_run_writer_finish(feed.writer, NULL, 0, nentries, NULL);
}

static bool ham_merge_locked_ext(Relation index, bool by_insert, bool wait_compaction,
								 int64 *merged);

/*
 * Flush the pending list into a run, then compact the runs as the policy
 * wants.  With `wait` false, returns false at once if another flush,
 * VACUUM or check holds the merge lock, and compacts only if no compaction
 * is under way; with `wait` true, waits for both (a flush that finds every
 * run slot taken waits for the compaction under way).  by_insert: an
 * inserting session flushes (counted apart).  *merged: the entries the
 * flush took from the sealed list.  Returns whether it flushed.
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
	done = ham_merge_locked_ext(index, by_insert, wait, merged);
	ham_merge_unlock(index);
	ham_compact(index, wait);
	return done;
}

static bool ham_flush(Relation index, bool by_insert, bool wait_compaction,
					  int64 *merged);

/*
 * Flush, for a caller that holds the merge lock.  An index that is not
 * ready (CREATE INDEX CONCURRENTLY has not finished building it) is left
 * alone: its pages are the build's.  With every run slot taken and a
 * compaction under way, returns false at once (ham_flush_blocked).
 */
bool
ham_merge_locked(Relation index, bool by_insert, int64 *merged)
{
	return ham_merge_locked_ext(index, by_insert, false, merged);
}

/*
 * ham_merge_locked; wait_compaction: with every run slot taken, wait for
 * a compaction under way to end rather than return without flushing (the
 * merge lock is held, then the compaction lock: the order VACUUM takes
 * them in).
 */
static bool
ham_merge_locked_ext(Relation index, bool by_insert, bool wait_compaction, int64 *merged)
{
	bool		done;

	*merged = 0;
	if (!index->rd_index->indisready)
		return false;
	lock_index_object(index, HAM_MERGING_LOCK_SUBID);
	done = ham_flush(index, by_insert, wait_compaction, merged);
	unlock_index_object(index, HAM_MERGING_LOCK_SUBID);
	return done;
}

/* Recycle, if no compaction is writing pages (the caller holds the merge lock) */
static void
ham_recycle_if_free(Relation index)
{
	if (!ham_compact_trylock(index))
		return;
	ham_recycle(index);
	ham_compact_unlock(index);
}

static bool
ham_flush(Relation index, bool by_insert, bool wait_compaction, int64 *merged)
{
	MemoryContext merge_ctx,
				old_ctx;
	Buffer		metabuf;
	GenericXLogState *state;
	HamMetaPageData *meta;
	HamRunRef	runs[HAM_MAX_RUNS];
	int			nruns;
	int			ntake = 0;
	bool		compact_locked = false;
	uint32		new_epoch;
	int			nblocks;
	bool		uneven;
	HamList		sealed;
	BlockNumber header;
	uint64		nentries;

	/* what the flush reads and sorts is freed when it ends */
	merge_ctx = AllocSetContextCreate(CurrentMemoryContext, "hamming merge",
									  ALLOCSET_DEFAULT_SIZES);
	old_ctx = MemoryContextSwitchTo(merge_ctx);

	ham_recycle_if_free(index);

	/*
	 * With every run slot taken (compactions fell far behind), the flush
	 * merges the list into the newest run -- if no compaction is using it.
	 */
	{
		HamSnapshot snap;

		ham_read_snapshot(index, &snap);
		if (snap.nruns >= HAM_MAX_RUNS)
		{
			if (wait_compaction)
				lock_index_object(index, HAM_COMPACT_LOCK_SUBID);
			else if (!ham_compact_trylock(index))
			{
				MemoryContextSwitchTo(old_ctx);
				MemoryContextDelete(merge_ctx);
				return false;
			}
			compact_locked = true;
			ntake = 1;
		}
	}

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
	nruns = ham_meta_get_runs(index, meta, runs);
	/* a compaction waited for may have freed slots: then a run of its own */
	if (nruns < HAM_MAX_RUNS)
		ntake = 0;
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
		if (compact_locked)
			ham_compact_unlock(index);
		MemoryContextSwitchTo(old_ctx);
		MemoryContextDelete(merge_ctx);
		return false;
	}

	/* 2. the new run */
	header = ham_merge_write(index, nblocks, new_epoch, &sealed, runs + nruns - ntake, ntake,
							 uneven, &nentries, merged);

	/* 3. swap: the runs are as read above (only compactions remove any) */
	metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	nruns = ham_meta_get_runs(index, meta, runs) - ntake;
	if (header != InvalidBlockNumber)
	{
		runs[nruns].header = header;
		runs[nruns].epoch = new_epoch;
		runs[nruns].nentries = nentries;
		nruns++;
	}
	ham_meta_set_runs(meta, runs, nruns);
	ham_empty_list(&meta->sealed, 0);
	meta->retired_xid = ReadNextFullTransactionId();
	meta->merges++;
	if (by_insert)
		meta->insert_merges++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	if (compact_locked)
		ham_compact_unlock(index);
	MemoryContextSwitchTo(old_ctx);
	MemoryContextDelete(merge_ctx);
	return true;
}

/*
 * One compaction step, for a caller that holds the compaction lock: merge
 * the runs the policy picks into one, or else rewrite a sparse run alone.
 * Returns whether it wrote a run.
 */
static bool
ham_compact_step(Relation index, bool *relocated)
{
	HamSnapshot snap;
	Buffer		metabuf;
	GenericXLogState *state;
	HamMetaPageData *meta;
	HamRunRef	runs[HAM_MAX_RUNS];
	int			nruns,
				take,
				first;
	uint32		new_epoch;
	bool		uneven;
	BlockNumber header;
	uint64		nentries;
	int64		merged;
	bool		relocate;

	ham_read_snapshot(index, &snap);
	take = ham_compact_pick(index, &snap) + 1;
	if (take >= 2)
		first = snap.nruns - take;
	else if ((first = ham_rewrite_pick(index, &snap, !*relocated, &relocate)) >= 0)
	{
		take = 1;
		*relocated |= relocate;
	}
	else
		return false;

	metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	uneven = (meta->flags & HAM_META_RUN_UNEVEN) != 0;
	new_epoch = meta->next_epoch++;
	meta->flags |= HAM_META_GARBAGE;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	header = ham_merge_write(index, snap.nblocks, new_epoch, NULL, snap.runs + first, take,
							 uneven, &nentries, &merged);

	/*
	 * Swap: the runs taken are where they were (flushes only append, and
	 * nothing else removes runs); runs flushed meanwhile stay after the new
	 * one, which holds older entries than theirs.
	 */
	metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	nruns = ham_meta_get_runs(index, meta, runs);
	for (int i = 0; i < take; i++)
		if (first + i >= nruns || runs[first + i].epoch != snap.runs[first + i].epoch)
		{
			GenericXLogAbort(state);
			UnlockReleaseBuffer(metabuf);
			elog(ERROR, "runs of hamming index \"%s\" changed under a compaction",
				 RelationGetRelationName(index));
		}
	if (header != InvalidBlockNumber)
	{
		runs[first].header = header;
		runs[first].epoch = new_epoch;
		runs[first].nentries = nentries;
		memmove(&runs[first + 1], &runs[first + take], sizeof(HamRunRef) * (nruns - first - take));
		nruns -= take - 1;
	}
	else
	{
		memmove(&runs[first], &runs[first + take], sizeof(HamRunRef) * (nruns - first - take));
		nruns -= take;
	}
	ham_meta_set_runs(meta, runs, nruns);
	/*
	 * Every run VACUUM may have left uneven was rewritten (runs flushed
	 * since came from lists): the tables are even again.
	 */
	if (first == 0 && take == snap.nruns)
		meta->flags &= ~HAM_META_RUN_UNEVEN;
	meta->retired_xid = ReadNextFullTransactionId();
	meta->compactions++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	return true;
}

/*
 * Compact the runs until the policy is content.  With `wait` false, does
 * nothing if a compaction or maintenance holds the compaction lock.
 * Returns the number of compaction steps done.
 */
int
ham_compact(Relation index, bool wait)
{
	MemoryContext ctx,
				old_ctx;
	int			steps = 0;
	bool		relocated = false;

	if (!index->rd_index->indisready)
		return 0;
	if (!wait && !ham_compact_trylock(index))
		return 0;
	if (wait)
		lock_index_object(index, HAM_COMPACT_LOCK_SUBID);
	ctx = AllocSetContextCreate(CurrentMemoryContext, "hamming compaction",
								ALLOCSET_DEFAULT_SIZES);
	old_ctx = MemoryContextSwitchTo(ctx);
	for (;;)
	{
		bool		merged;

		MemoryContextReset(ctx);
		merged = ham_compact_step(index, &relocated);
		if (!merged)
			break;
		steps++;
		CHECK_FOR_INTERRUPTS();
	}
	/* recycle what the steps retired, unless a flush is writing pages */
	if (steps > 0 && ham_merge_trylock(index))
	{
		ham_recycle(index);
		ham_merge_unlock(index);
	}
	MemoryContextSwitchTo(old_ctx);
	MemoryContextDelete(ctx);
	ham_compact_unlock(index);
	return steps;
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
 * under way.  Given a partitioned index, merges the index of every
 * partition, one after the other, and returns the sum.
 */
PG_FUNCTION_INFO_V1(hamming_merge);
Datum
hamming_merge(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	int64		total = 0;
	ListCell   *lc;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("A hamming index cannot be merged during recovery.")));
	foreach(lc, ham_leaf_indexes(indexoid))
	{
		Relation	index = ham_open_index(lfirst_oid(lc), RowExclusiveLock);
		int64		merged = 0;

		if (!index->rd_index->indisready)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("index \"%s\" is not ready", RelationGetRelationName(index)),
					 errdetail("CREATE INDEX CONCURRENTLY or REINDEX CONCURRENTLY is still building it.")));
		ham_merge(index, true, false, &merged);
		index_close(index, RowExclusiveLock);
		total += merged;
		CHECK_FOR_INTERRUPTS();
	}

	/*
	 * A merge is not undone by a rollback, and the caller expects it to
	 * survive a crash once we return; a transaction that wrote only WAL
	 * (no transaction id) would not flush it at commit.
	 */
	if (XactLastRecEnd != InvalidXLogRecPtr)
		XLogFlush(XactLastRecEnd);
	PG_RETURN_INT64(total);
}
