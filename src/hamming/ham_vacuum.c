/*-------------------------------------------------------------------------
 *
 * ham_vacuum.c
 *		VACUUM: remove the entries of dead rows from every page of the runs
 *		and of the lists, in place; then recycle the pages flushes and
 *		compactions retired, flush the pending list if it is long, compact
 *		the runs, recycle again and give a free end of the file back.
 *
 * README, "VACUUM", gives the protocol: the flags and counters a pass sets,
 * and the cleanup lock it waits for; "Space under churn" the truncation.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

/* What a pass counted, for ham_vacuum_set_counts */
typedef struct HamVacuumCounts
{
	uint64		run_live[HAM_MAX_RUNS]; /* entries kept in table 0 */
	uint64		pending_removed;	/* from pages other than the tail */
	uint64		sealed_removed;
	uint64		nulls_removed;
} HamVacuumCounts;

/* The run of the snapshot a page of that epoch belongs to, or -1 */
static int
ham_vacuum_run_of(const HamSnapshot *snap, uint32 epoch)
{
	for (int r = 0; r < snap->nruns; r++)
		if (snap->runs[r].epoch == epoch)
			return r;
	return -1;
}

/* The count of removed entries of the snapshot's list of that epoch */
static uint64 *
ham_vacuum_removed_of(const HamSnapshot *snap, HamVacuumCounts *counts, uint32 epoch)
{
	if (epoch == snap->pending.epoch)
		return &counts->pending_removed;
	if (epoch == snap->nulls.epoch)
		return &counts->nulls_removed;
	return &counts->sealed_removed;
}

static void
ham_vacuum_list_count(HamList *list, uint32 epoch, uint64 removed)
{
	if (list->epoch != epoch)
		return;
	list->nentries = list->nentries > removed ? list->nentries - removed : 0;
}

/*
 * The end of a complete pass: the tables are even again, cached lists are
 * dropped (backends may have read pages during the pass), and the counts
 * are what the pass found -- one WAL-logged change of the metapage.  The
 * maintenance lock, held since the pass began, kept the runs and the
 * lists' epochs as the snapshot gives them.
 */
static void
ham_vacuum_set_counts(Relation index, const HamSnapshot *snap, const HamVacuumCounts *counts)
{
	Buffer		metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	GenericXLogState *state;
	HamMetaPageData *meta;
	HamRunRef	runs[HAM_MAX_RUNS];
	int			nruns;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	meta->flags &= ~HAM_META_RUN_UNEVEN;
	meta->list_cleanups++;
	nruns = ham_meta_get_runs(index, meta, runs);
	for (int i = 0; i < nruns; i++)
	{
		int			r = ham_vacuum_run_of(snap, runs[i].epoch);

		if (r >= 0)
			runs[i].nentries = counts->run_live[r];
	}
	ham_meta_set_runs(meta, runs, nruns);
	ham_vacuum_list_count(&meta->pending, snap->pending.epoch, counts->pending_removed);
	if (snap->sealed.head != InvalidBlockNumber)
		ham_vacuum_list_count(&meta->sealed, snap->sealed.epoch, counts->sealed_removed);
	ham_vacuum_list_count(&meta->nulls, snap->nulls.epoch, counts->nulls_removed);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
}

IndexBulkDeleteResult *
ham_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			   IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	HamSnapshot snap;
	BlockNumber nblocks;
	double		kept = 0;
	bool		freed = false;
	HamVacuumCounts counts;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	ham_maintenance_lock(index);
	/* before anything is removed: caches dropped, the runs marked uneven */
	ham_meta_set_flags(index, HAM_META_RUN_UNEVEN, 0, true);
	ham_read_snapshot(index, &snap);
	memset(&counts, 0, sizeof(counts));
	nblocks = RelationGetNumberOfBlocks(index);
	for (BlockNumber blkno = HAM_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;
		HamPageOpaque opaque;
		bool		counted;
		int			n,
					keep = 0;
		ItemPointerData *tids;
		bool		dead[HAM_PAGE_CAPACITY];

		vacuum_delay_point_compat(false);
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, info->strategy);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		opaque = HamPageGetOpaque(page);
		if (!PageIsNew(page) && opaque->page_id == HAM_PAGE_ID && opaque->kind == HAM_KIND_FREE)
		{
			/* the free space map is not WAL-logged: a crash or failover loses it */
			UnlockReleaseBuffer(buf);
			RecordFreeIndexPage(index, blkno);
			freed = true;
			continue;
		}
		if (!ham_page_live(&snap, page) ||
			(opaque->kind != HAM_KIND_RUN_DATA && opaque->kind != HAM_KIND_LIST))
		{
			UnlockReleaseBuffer(buf);
			continue;
		}
		/* each row is in every table: count it in table 0 */
		counted = opaque->kind == HAM_KIND_LIST || opaque->table == 0;
		n = opaque->nentries;
		tids = HamPageTids(page);
		for (int i = 0; i < n; i++)
		{
			dead[i] = callback(&tids[i], callback_state);
			keep += dead[i] ? 0 : 1;
		}
		if (keep < n)
		{
			GenericXLogState *state = GenericXLogStart(index);
			Page		wpage = GenericXLogRegisterBuffer(state, buf, 0);
			uint64	   *wcodes = HamPageCodes(wpage);
			ItemPointerData *wtids = HamPageTids(wpage);
			int			j = 0;

			for (int i = 0; i < n; i++)
			{
				if (dead[i])
					continue;
				wcodes[j] = wcodes[i];
				wtids[j] = wtids[i];
				j++;
			}
			HamPageGetOpaque(wpage)->nentries = j;
			if (opaque->kind == HAM_KIND_LIST)
				HamListPageCleanups(HamPageGetOpaque(wpage))++;
			GenericXLogFinish(state);
			if (counted)
				stats->tuples_removed += n - keep;

			/*
			 * The metapage counts a list's tail as one entry, and a page
			 * that stops being the tail at its current count: only what
			 * leaves the other pages is taken off.  The tail's next link
			 * changes under the lock held here.
			 */
			if (opaque->kind == HAM_KIND_LIST && opaque->next != InvalidBlockNumber)
				*ham_vacuum_removed_of(&snap, &counts, opaque->epoch) += n - keep;
		}
		if (counted)
		{
			kept += keep;
			if (opaque->kind == HAM_KIND_RUN_DATA)
			{
				int			r = ham_vacuum_run_of(&snap, opaque->epoch);

				if (r >= 0)
					counts.run_live[r] += keep;
			}
		}
		UnlockReleaseBuffer(buf);
	}

	ham_vacuum_set_counts(index, &snap, &counts);
	ham_maintenance_unlock(index);
	if (freed)
		IndexFreeSpaceMapVacuum(index);

	/*
	 * Wait out the scans that may still hold removed entries -- whether this
	 * pass removed them or an earlier one that was cancelled (perhaps right
	 * here), or a flush or compaction that wrote uneven runs anew from
	 * tables 0: the heap pass that follows frees the slots of all of them.
	 * nbtree likewise takes a cleanup lock on every leaf page in every pass.
	 */
	{
		Buffer		metabuf = ReadBufferExtended(index, MAIN_FORKNUM, HAM_METAPAGE_BLKNO,
												 RBM_NORMAL, info->strategy);

		LockBufferForCleanup(metabuf);
		UnlockReleaseBuffer(metabuf);
	}

	stats->num_index_tuples = kept;
	stats->num_pages = nblocks;
	return stats;
}

/*
 * Give the free pages at the end of the index back to the file system, as
 * VACUUM does for a table's empty tail (lazy_truncate_heap), and under the
 * same rule: only while no other session uses the index -- an
 * AccessExclusiveLock taken if it can be at once, never waited for; a
 * standby replays the lock, so its queries of the index give way as they
 * do to a table's truncation.  A free page is one ham_recycle() marked, no
 * scan can still be reading it, and no session allocates pages without a
 * lock on the index.  The caller holds the maintenance lock.
 */
static void
ham_truncate_free_tail(Relation index)
{
	BlockNumber nblocks,
				keep;
	HamSnapshot snap;

	/* the lock is logged for standbys with a transaction id, as a table's */
	if (IsInParallelMode() || !ConditionalLockRelation(index, AccessExclusiveLock))
		return;
	ham_read_snapshot(index, &snap);
	nblocks = RelationGetNumberOfBlocks(index);
	for (keep = nblocks; keep > HAM_METAPAGE_BLKNO + 1; keep--)
	{
		Buffer		buf = ReadBuffer(index, keep - 1);
		Page		page;
		bool		free;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		free = PageIsNew(page) ||
			(HamPageGetOpaque(page)->kind == HAM_KIND_FREE && !ham_page_live(&snap, page));
		UnlockReleaseBuffer(buf);
		if (!free)
			break;
	}
	if (keep < nblocks)
		RelationTruncate(index, keep);
	UnlockRelation(index, AccessExclusiveLock);
}

/*
 * Does the pending list hold the last page of an index that is a quarter
 * or more unused?  Then VACUUM flushes it, short as it may be, so that the
 * end can be truncated once its pages are recycled (a bulk load leaves its
 * last list there, past the pages its compactions retired).
 */
static bool
ham_list_holds_end(Relation index, const HamSnapshot *snap)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	Buffer		buf;
	bool		list_end;

	if (snap->pending.head == InvalidBlockNumber || nblocks <= HAM_METAPAGE_BLKNO + 1)
		return false;
	buf = ReadBuffer(index, nblocks - 1);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	list_end = !PageIsNew(BufferGetPage(buf)) &&
		HamPageGetOpaque(BufferGetPage(buf))->kind == HAM_KIND_LIST &&
		HamPageGetOpaque(BufferGetPage(buf))->epoch == snap->pending.epoch;
	UnlockReleaseBuffer(buf);
	return list_end && ham_unused_pages(index, snap) * 4 >= (int64) nblocks;
}

IndexBulkDeleteResult *
ham_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	HamSnapshot snap;

	if (info->analyze_only)
		return stats;

	/*
	 * Recycle first what earlier flushes and compactions retired (a bulk
	 * load's compactions, whose pages its own snapshot kept until it
	 * ended), so that what this VACUUM writes reuses them rather than
	 * extending the index.
	 */
	ham_maintenance_lock(index);
	ham_recycle(index);
	ham_maintenance_unlock(index);

	ham_read_snapshot(index, &snap);
	if (ham_flush_wanted(index, &snap, true) || ham_list_holds_end(index, &snap))
	{
		int64		flushed;

		ham_flush_and_compact(index, true, false, &flushed);
	}
	else
		ham_compact(index, true);
	ham_maintenance_lock(index);
	ham_recycle(index);
	ham_truncate_free_tail(index);
	ham_maintenance_unlock(index);

	if (stats == NULL)
	{
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		ham_read_snapshot(index, &snap);
		stats->num_index_tuples = (double) snap.run_entries + snap.pending.nentries +
			snap.sealed.nentries + snap.nulls.nentries;
		stats->estimated_count = true;
	}
	stats->num_pages = RelationGetNumberOfBlocks(index);
	return stats;
}
