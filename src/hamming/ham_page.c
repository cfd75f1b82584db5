/*-------------------------------------------------------------------------
 *
 * ham_page.c
 *		Pages: their special space, new and recycled pages, and reading a
 *		page checked for its kind, epoch and table.
 *
 * README, "Pages, kinds and epochs".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

/* A page's special space as a page of that kind, epoch and table starts. */
void
ham_init_opaque(HamPageOpaque opaque, uint16 kind, uint32 epoch, uint16 table)
{
	opaque->epoch = epoch;
	opaque->next = InvalidBlockNumber;
	opaque->kind = kind;
	opaque->nentries = 0;
	opaque->table = table;
	opaque->page_id = HAM_PAGE_ID;
}

void
ham_init_page(Page page, uint16 kind, uint32 epoch, uint16 table)
{
	PageInit(page, BLCKSZ, sizeof(HamPageOpaqueData));
	ham_init_opaque(HamPageGetOpaque(page), kind, epoch, table);
	/* the content is a fixed layout inside [pd_lower, ...): all of it used */
	((PageHeader) page)->pd_lower = ((PageHeader) page)->pd_upper;
}

/* An exclusively locked page to write: a recycled one, or a new one. */
Buffer
ham_new_buffer(Relation index)
{
	Buffer		buffer;
	bool		needLock;

	for (;;)
	{
		BlockNumber blkno = GetFreeIndexPage(index);

		if (blkno == InvalidBlockNumber)
			break;
		buffer = ReadBuffer(index, blkno);
		/* the free space map is not WAL-logged: check that it is free */
		if (ConditionalLockBuffer(buffer))
		{
			Page		page = BufferGetPage(buffer);

			if (PageIsNew(page) || HamPageGetOpaque(page)->kind == HAM_KIND_FREE)
				return buffer;
			LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buffer);
	}

	needLock = !RELATION_IS_LOCAL(index);
	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buffer = ReadBuffer(index, P_NEW);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buffer;
}

/*
 * Read a page of a run or a list, share-locked, checking that it is of the
 * kind, the run or list (epoch) and, for run pages, the table the reader
 * expects (table < 0: any).  Otherwise it was recycled under the reader (on
 * a standby without hot_standby_feedback), or the index is damaged: an
 * error, never a wrong answer.
 */
Buffer
ham_read_page(Relation index, BlockNumber blkno, uint16 kind, uint32 epoch, int table)
{
	Buffer		buf = ReadBuffer(index, blkno);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	ham_check_page(index, buf, kind, epoch, table);
	return buf;
}

/* ham_read_page's check of a page the caller has read and locked */
void
ham_check_page(Relation index, Buffer buf, uint16 kind, uint32 epoch, int table)
{
	BlockNumber blkno = BufferGetBlockNumber(buf);
	Page		page;
	HamPageOpaque opaque;

	page = BufferGetPage(buf);
	opaque = HamPageGetOpaque(page);
	if (PageIsNew(page) || PageGetSpecialSize(page) != MAXALIGN(sizeof(HamPageOpaqueData)) ||
		opaque->page_id != HAM_PAGE_ID || opaque->kind != kind || opaque->epoch != epoch ||
		(table >= 0 && opaque->table != table) ||
		opaque->nentries > (kind == HAM_KIND_RUN_DIR || kind == HAM_KIND_RUN_DIR_INDEX ?
							HAM_DIR_CAPACITY : HAM_PAGE_CAPACITY))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" page %u is not what the scan expected",
						RelationGetRelationName(index), blkno),
				 errdetail("Expected kind %d of epoch %u (table %d), found kind %d of epoch %u (table %d).",
						   kind, epoch, table, PageIsNew(page) ? 0 : opaque->kind,
						   PageIsNew(page) ? 0 : opaque->epoch,
						   PageIsNew(page) ? 0 : opaque->table),
				 errhint("On a standby, set hot_standby_feedback so that the primary keeps the pages a query reads; otherwise REINDEX the index.")));
}

/*
 * Is a page part of the index the snapshot describes?  Run pages belong to
 * the run's epoch, list pages to one of the lists'; anything else (pages of
 * retired runs and lists, of a flush or compaction that failed, free
 * pages) is garbage.
 */
bool
ham_page_live(const HamSnapshot *snap, Page page)
{
	HamPageOpaque opaque = HamPageGetOpaque(page);

	if (PageIsNew(page) || opaque->page_id != HAM_PAGE_ID)
		return false;
	switch (opaque->kind)
	{
		case HAM_KIND_RUN_HEADER:
		case HAM_KIND_RUN_DIR:
		case HAM_KIND_RUN_DIR_INDEX:
		case HAM_KIND_RUN_DATA:
			for (int i = 0; i < snap->nruns; i++)
				if (opaque->epoch == snap->runs[i].epoch)
					return true;
			return false;
		case HAM_KIND_LIST:
			return opaque->epoch == snap->pending.epoch || opaque->epoch == snap->nulls.epoch ||
				(snap->sealed.head != InvalidBlockNumber && opaque->epoch == snap->sealed.epoch);
		default:
			return false;
	}
}
