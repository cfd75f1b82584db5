/*-------------------------------------------------------------------------
 *
 * ham_meta.c
 *		The metapage: a new index's, its runs, and the snapshot of it that
 *		scans and maintenance read.
 *
 * README, "The metapage", gives the rules for appends, seals and swaps.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

void
ham_empty_list(HamList *list, uint32 epoch)
{
	list->head = InvalidBlockNumber;
	list->tail = InvalidBlockNumber;
	list->epoch = epoch;
	list->npages = 0;
	list->nentries = 0;
}

void
ham_init_meta_page(Page page, int nblocks, int only_block)
{
	HamMetaPageData *meta;

	ham_init_page(page, HAM_KIND_META, 0, 0);
	meta = HamPageGetMeta(page);
	memset(meta, 0, sizeof(HamMetaPageData));
	meta->magic = HAM_MAGIC;
	meta->version = HAM_VERSION;
	meta->nblocks = nblocks;
	meta->only_block = only_block;
	meta->run_header = InvalidBlockNumber;
	meta->run_epoch = 0;
	ham_empty_list(&meta->pending, 1);
	ham_empty_list(&meta->sealed, 0);
	ham_empty_list(&meta->nulls, 2);
	meta->next_epoch = 3;
	meta->retired_xid = InvalidFullTransactionId;
}

void
ham_meta_check(Relation index, HamMetaPageData *meta)
{
	if (meta->magic != HAM_MAGIC || meta->version != HAM_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a hamming index of version %d",
						RelationGetRelationName(index), HAM_VERSION),
				 errhint("REINDEX it.")));
	if (meta->only_block > meta->nblocks)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a damaged metapage: only block %u of %u",
						RelationGetRelationName(index), meta->only_block, meta->nblocks)));
}

/*
 * The runs the metapage lists, oldest first, into runs[HAM_MAX_RUNS];
 * returns their number.
 */
int
ham_meta_get_runs(Relation index, const HamMetaPageData *meta, HamRunRef *runs)
{
	int			n = 0;

	if (meta->run_header == InvalidBlockNumber)
		return 0;
	if (meta->nmore_runs > HAM_MAX_RUNS - 1)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a damaged metapage: %u runs",
						RelationGetRelationName(index), meta->nmore_runs + 1)));
	runs[n].header = meta->run_header;
	runs[n].epoch = meta->run_epoch;
	runs[n].nentries = meta->run_entries;
	n++;
	for (uint32 i = 0; i < meta->nmore_runs; i++)
		runs[n++] = meta->more_runs[i];
	return n;
}

/* Make the metapage list these runs (the caller logs the change). */
void
ham_meta_set_runs(HamMetaPageData *meta, const HamRunRef *runs, int n)
{
	Assert(n >= 0 && n <= HAM_MAX_RUNS);
	memset(meta->more_runs, 0, sizeof(meta->more_runs));
	if (n == 0)
	{
		meta->run_header = InvalidBlockNumber;
		meta->run_epoch = 0;
		meta->run_entries = 0;
		meta->nmore_runs = 0;
		return;
	}
	meta->run_header = runs[0].header;
	meta->run_epoch = runs[0].epoch;
	meta->run_entries = runs[0].nentries;
	meta->nmore_runs = n - 1;
	for (int i = 1; i < n; i++)
		meta->more_runs[i - 1] = runs[i];
}

void
ham_meta_snapshot(Relation index, const HamMetaPageData *meta, HamSnapshot *snap)
{
	snap->nblocks = meta->nblocks;
	snap->only_block = meta->only_block;
	snap->nruns = ham_meta_get_runs(index, meta, snap->runs);
	snap->run_entries = 0;
	for (int i = 0; i < snap->nruns; i++)
		snap->run_entries += snap->runs[i].nentries;
	snap->pending = meta->pending;
	snap->sealed = meta->sealed;
	snap->nulls = meta->nulls;
	snap->list_cleanups = meta->list_cleanups;
	snap->flags = meta->flags;
	snap->flushes = meta->flushes;
	snap->insert_flushes = meta->insert_flushes;
	snap->compactions = meta->compactions;
}

void
ham_read_snapshot(Relation index, HamSnapshot *snap)
{
	Buffer		buf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	HamMetaPageData *meta;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = HamPageGetMeta(BufferGetPage(buf));
	ham_meta_check(index, meta);
	ham_meta_snapshot(index, meta, snap);
	UnlockReleaseBuffer(buf);
}

/*
 * Set and clear metapage flags, WAL-logged; bump_cleanups also invalidates
 * every backend's cached lists (ham_cache.c).  The caller holds the flush
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
