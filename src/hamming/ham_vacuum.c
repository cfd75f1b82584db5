/*-------------------------------------------------------------------------
 *
 * ham_vacuum.c
 *		VACUUM: remove the entries of dead rows from every page of the runs
 *		and of the lists, then flush the pending list if it is long, compact
 *		the runs, and recycle the pages earlier merges retired.
 *
 * Entries are removed in place, keeping the order of a run's pages; the
 * directory then understates some pages' first keys, which only widens the
 * ranges scans read (ham_run_table_pages).  VACUUM holds the merge lock
 * throughout: a merge copying an entry VACUUM is removing would bring it
 * back, pointing at a heap slot about to be reused.
 *
 * A pass is not atomic: cancelled half-way, it leaves the run's tables
 * holding different dead entries (harmless to scans: those rows are dead,
 * and their heap slots are not reused before a pass completes).  The
 * metapage says so (HAM_META_RUN_UNEVEN) from the start of the pass to its
 * end; ham_merge.c and ham_check.c act on it.  The start also invalidates
 * every backend's cached lists, before any entry is removed, and so does
 * the end (ham_cache.c).
 *
 * Scans that return codes from the index (index-only scans) or serve a
 * non-MVCC snapshot (the exclusion constraint's check) keep the metapage
 * pinned while they hold entries in memory, and every pass waits for a
 * cleanup lock on it before returning -- that is, until every such scan
 * that may hold a removed entry has ended -- so the heap slots of removed
 * entries are not reused and marked all-visible under them (nbtree keeps
 * the leaf page pinned for the same reason, and takes a cleanup lock on
 * every leaf page in every pass).  The pass also puts free pages back in
 * the free space map, which is not WAL-logged.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "hamming.h"

IndexBulkDeleteResult *
ham_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			   IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	HamSnapshot snap;
	BlockNumber nblocks;
	double		kept = 0;
	bool		freed = false;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	ham_maintenance_lock(index);
	/* before anything is removed: caches dropped, the run marked uneven */
	ham_meta_set_flags(index, HAM_META_RUN_UNEVEN, 0, true);
	ham_read_snapshot(index, &snap);
	nblocks = RelationGetNumberOfBlocks(index);
	for (BlockNumber blkno = HAM_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;
		HamPageOpaque opaque;
		bool		counts;
		int			n,
					keep = 0;
		ItemPointerData *tids;
		bool		dead[HAM_PAGE_CAPACITY];

		vacuum_delay_point();
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
		counts = opaque->kind == HAM_KIND_LIST || opaque->table == 0;
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
			if (counts)
				stats->tuples_removed += n - keep;
		}
		if (counts)
			kept += keep;
		UnlockReleaseBuffer(buf);
	}

	/*
	 * Backends that cached list entries drop them (again: they may have
	 * read pages during the pass), and the tables are even again.
	 */
	ham_meta_set_flags(index, 0, HAM_META_RUN_UNEVEN, true);
	ham_maintenance_unlock(index);
	if (freed)
		IndexFreeSpaceMapVacuum(index);

	/*
	 * Wait out the scans that may still hold removed entries -- whether this
	 * pass removed them or an earlier one that was cancelled (perhaps right
	 * here), or a merge that wrote an uneven run anew from table 0: the heap
	 * pass that follows frees the slots of all of them.  nbtree likewise
	 * takes a cleanup lock on every leaf page in every pass.
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

IndexBulkDeleteResult *
ham_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	HamSnapshot snap;

	if (info->analyze_only)
		return stats;

	ham_read_snapshot(index, &snap);
	if (ham_merge_wanted(index, &snap, true))
	{
		int64		merged;

		ham_merge(index, true, false, &merged);
	}
	else
		ham_compact(index, true);
	ham_maintenance_lock(index);
	ham_recycle(index);
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
