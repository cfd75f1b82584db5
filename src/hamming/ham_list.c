/*-------------------------------------------------------------------------
 *
 * ham_list.c
 *		The lists of unsorted entries -- pending, sealed, nulls: appending,
 *		walking and counting them.
 *
 * README, "The metapage", gives how appends and seals exclude each other.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

/*
 * Append an entry to the pending list (or the nulls list).  The metapage is
 * share-locked while the tail page is written, so that a flush, which seals
 * the pending list under an exclusive lock, never misses an entry added to
 * a page it has read (README, "The metapage").  *snap, when given, gets the
 * metapage as it was (for the insert's flush decision, without reading it
 * again).
 */
void
ham_list_append(Relation index, int which, uint64 code, ItemPointer tid, HamSnapshot *snap)
{
	Buffer		metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);

	for (;;)
	{
		HamMetaPageData *meta;
		HamList    *list;
		BlockNumber tail;
		GenericXLogState *state;
		Buffer		buf,
					tailbuf = InvalidBuffer;
		uint16		tail_entries = 0;
		Page		page,
					metapage;
		HamPageOpaque opaque;

		LockBuffer(metabuf, BUFFER_LOCK_SHARE);
		meta = HamPageGetMeta(BufferGetPage(metabuf));
		ham_meta_check(index, meta);
		list = which == HAM_LIST_NULLS ? &meta->nulls : &meta->pending;
		tail = list->tail;
		if (tail != InvalidBlockNumber)
		{
			buf = ReadBuffer(index, tail);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			page = BufferGetPage(buf);
			opaque = HamPageGetOpaque(page);
			if (opaque->kind == HAM_KIND_LIST && opaque->epoch == list->epoch &&
				opaque->nentries < HAM_PAGE_CAPACITY)
			{
				ham_page_append(index, buf, code, tid);
				UnlockReleaseBuffer(buf);
				if (snap)
					ham_meta_snapshot(index, meta, snap);
				UnlockReleaseBuffer(metabuf);
				return;
			}
			UnlockReleaseBuffer(buf);
		}
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

		/* a new tail page: under the exclusive lock, unless someone added one */
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		meta = HamPageGetMeta(BufferGetPage(metabuf));
		list = which == HAM_LIST_NULLS ? &meta->nulls : &meta->pending;
		if (list->tail != tail)
		{
			LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
			continue;
		}
		buf = ham_new_buffer(index);
		if (tail != InvalidBlockNumber)
		{
			tailbuf = ReadBuffer(index, tail);
			LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
			tail_entries = HamPageGetOpaque(BufferGetPage(tailbuf))->nentries;
		}
		state = GenericXLogStart(index);
		metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
		meta = HamPageGetMeta(metapage);
		list = which == HAM_LIST_NULLS ? &meta->nulls : &meta->pending;
		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
		ham_init_page(page, HAM_KIND_LIST, list->epoch, 0);
		opaque = HamPageGetOpaque(page);
		HamPageCodes(page)[0] = code;
		HamPageTids(page)[0] = *tid;
		opaque->nentries = 1;
		if (tailbuf != InvalidBuffer)
		{
			Page		tailpage = GenericXLogRegisterBuffer(state, tailbuf, 0);

			HamPageGetOpaque(tailpage)->next = BufferGetBlockNumber(buf);
		}
		else
			list->head = BufferGetBlockNumber(buf);
		list->tail = BufferGetBlockNumber(buf);
		list->npages++;
		/*
		 * Entries are counted a page at a time, as appends to the tail do
		 * not write the metapage: the tail counts as one, and the old tail
		 * now counts for what it holds (less VACUUM may have removed).
		 */
		list->nentries = tailbuf == InvalidBuffer ? 1 :
			(list->nentries > 0 ? list->nentries - 1 : 0) + tail_entries + 1;
		GenericXLogFinish(state);
		if (tailbuf != InvalidBuffer)
			UnlockReleaseBuffer(tailbuf);
		UnlockReleaseBuffer(buf);
		if (snap)
			ham_meta_snapshot(index, HamPageGetMeta(BufferGetPage(metabuf)), snap);
		UnlockReleaseBuffer(metabuf);
		return;
	}
}

/*
 * The entries of a list now: the metapage's count, which counts the tail
 * page as one entry (ham_list_append), with the tail's own count instead.
 * A tail that moved since the snapshot was read gives the metapage's count.
 */
uint64
ham_list_entries(Relation index, const HamList *list)
{
	Buffer		buf;
	Page		page;
	HamPageOpaque opaque;
	uint64		n = list->nentries;

	if (list->tail == InvalidBlockNumber)
		return n;
	buf = ReadBuffer(index, list->tail);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	opaque = HamPageGetOpaque(page);
	if (!PageIsNew(page) && opaque->page_id == HAM_PAGE_ID && opaque->kind == HAM_KIND_LIST &&
		opaque->epoch == list->epoch && opaque->next == InvalidBlockNumber)
		n = (list->nentries > 0 ? list->nentries - 1 : 0) + opaque->nentries;
	UnlockReleaseBuffer(buf);
	return n;
}

/*
 * Count one more page of a walk along a list: a walk longer than the index
 * follows a next link that loops (a damaged page), and must end in an
 * error, not go round for ever.  *limit starts at the list's page count in
 * the snapshot; the pages appended since are allowed up to the index's
 * size, read only when the count passes the limit.
 */
void
ham_list_count_page(Relation index, BlockNumber blkno, BlockNumber *visited, BlockNumber *limit)
{
	if (++*visited <= *limit)
		return;
	*limit = RelationGetNumberOfBlocks(index);
	if (*visited > *limit)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a list of pages that loops at page %u",
						RelationGetRelationName(index), blkno),
				 errhint("REINDEX the index.")));
}

/*
 * Visit every page of a list (pending, sealed or nulls), head to tail,
 * pages appended meanwhile included.
 */
void
ham_list_walk(Relation index, const HamList *list, HamListVisit visit, void *arg)
{
	BlockNumber blkno = list->head;
	BlockNumber visited = 0;
	BlockNumber limit = list->npages;

	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;

		ham_list_count_page(index, blkno, &visited, &limit);
		buf = ham_read_page(index, blkno, HAM_KIND_LIST, list->epoch, -1);
		page = BufferGetPage(buf);
		visit(page, arg);
		blkno = HamPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}
