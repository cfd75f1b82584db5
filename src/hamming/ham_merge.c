/*-------------------------------------------------------------------------
 *
 * ham_merge.c
 *		Merging the pending list into the run, and recycling the pages
 *		merges retire.
 *
 * A merge holds the index's merge lock (a heavyweight lock on the
 * metapage's number, as GIN's pending-list cleanup does), which VACUUM also
 * takes, so merges, VACUUM and recycling never overlap.  It
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
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
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

/* Add the entries of a list page to the writer (ham_list_walk). */
static void
ham_merge_list_page(Page page, void *arg)
{
	HamRunWriter *w = (HamRunWriter *) arg;

	for (int i = 0; i < HamPageGetOpaque(page)->nentries; i++)
		ham_run_writer_add(w, HamPageCodes(page)[i], &HamPageTids(page)[i]);
}

/*
 * Merge the pending list into the run.  With `wait` false, returns false at
 * once if another merge or VACUUM holds the merge lock.  by_insert: an
 * inserting session merges (counted apart).  *merged: the entries the merge
 * took from the lists.
 */
bool
ham_merge(Relation index, bool wait, bool by_insert, int64 *merged)
{
	Buffer		metabuf;
	GenericXLogState *state;
	HamMetaPageData *meta;
	BlockNumber old_header;
	uint32		old_epoch,
				new_epoch;
	int			nblocks;
	HamList		sealed;
	HamRunWriter *w;
	HamRunDir	old;
	BlockNumber header;
	uint64		nentries;

	*merged = 0;
	if (wait)
		LockPage(index, HAM_METAPAGE_BLKNO, ExclusiveLock);
	else if (!ConditionalLockPage(index, HAM_METAPAGE_BLKNO, ExclusiveLock))
		return false;

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
	new_epoch = meta->next_epoch++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	if (sealed.head == InvalidBlockNumber)
	{
		UnlockPage(index, HAM_METAPAGE_BLKNO, ExclusiveLock);
		return false;
	}

	/* 2. the new run */
	w = ham_run_writer_begin(index, nblocks, new_epoch, maintenance_work_mem);
	ham_list_walk(index, &sealed, ham_merge_list_page, w);
	if (old_header != InvalidBlockNumber)
		ham_run_dir_open(index, old_header, old_epoch, &old);
	header = ham_run_writer_finish(w, old_header != InvalidBlockNumber ? &old : NULL, &nentries);

	/* 3. swap */
	metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	*merged = (int64) nentries - (int64) meta->run_entries;
	meta->run_header = header;
	meta->run_epoch = new_epoch;
	meta->run_entries = nentries;
	ham_empty_list(&meta->sealed, 0);
	meta->retired_xid = ReadNextFullTransactionId();
	meta->merges++;
	if (by_insert)
		meta->insert_merges++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	UnlockPage(index, HAM_METAPAGE_BLKNO, ExclusiveLock);
	return true;
}

/*
 * Put in the free space map every page that belongs to no live run or list,
 * once no scan can be reading them.  The caller holds the merge lock.
 */
void
ham_recycle(Relation index)
{
	HamSnapshot snap;
	Buffer		metabuf;
	HamMetaPageData *meta;
	FullTransactionId retired_xid;
	BlockNumber nblocks;
	bool		freed = false;

	metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = HamPageGetMeta(BufferGetPage(metabuf));
	retired_xid = meta->retired_xid;
	UnlockReleaseBuffer(metabuf);

	if (FullTransactionIdIsValid(retired_xid) &&
		!GlobalVisCheckRemovableFullXid(NULL, retired_xid))
		return;

	ham_read_snapshot(index, &snap);
	nblocks = RelationGetNumberOfBlocks(index);
	for (BlockNumber blkno = HAM_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf = ReadBuffer(index, blkno);
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
	if (freed)
		IndexFreeSpaceMapVacuum(index);
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
	ham_merge(index, true, false, &merged);
	index_close(index, RowExclusiveLock);
	PG_RETURN_INT64(merged);
}
