/*-------------------------------------------------------------------------
 *
 * ham_recycle.c
 *		Recycling: the pages no run or list holds put in the free space map,
 *		once no scan can still be reading them.
 *
 * README, "Recycling": retired_xid and HAM_META_GARBAGE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/procarray.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

/*
 * Put in the free space map every page that belongs to no live run or list,
 * once no scan can be reading them.  The caller holds the maintenance lock.
 * Nothing to do unless a flush or compaction has left garbage since the last
 * pass
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
		 * A page of no run or list is reachable by nobody (flushes and
		 * compactions are excluded, and it is not in the free space map
		 * yet): mark it free.
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

/* The pages of the index that are no run's: the metapage and the lists' */
int64
ham_meta_list_pages(const HamSnapshot *snap)
{
	return 1 + (int64) snap->pending.npages + snap->sealed.npages + snap->nulls.npages;
}

/*
 * Pages of the index that hold no run or list: recycled ones, and those
 * flushes and compactions retired that wait to be.
 */
int64
ham_unused_pages(Relation index, const HamSnapshot *snap)
{
	int64		used = ham_meta_list_pages(snap);

	for (int r = 0; r < snap->nruns; r++)
	{
		HamRunDir	dir;

		ham_run_dir_open(index, snap->runs[r].header, snap->runs[r].epoch, &dir);
		used += ham_run_pages(&dir);
		pfree(dir.header);
	}
	return Max((int64) RelationGetNumberOfBlocks(index) - used, 0);
}
