/*-------------------------------------------------------------------------
 *
 * ham_check.c
 *		hamming_check(index, heapallindexed): verify a hamming index, as
 *		contrib/amcheck verifies B-trees.  Raises an error
 *		(ERRCODE_INDEX_CORRUPTED) at the first problem found.
 *
 * Structure:
 *	- every page of the relation is a hamming page (or a new, empty one)
 *	  whose entry count fits the page;
 *	- the metapage's tables-per-run is in range and each run's header agrees;
 *	- every table of every run: its directory and data pages are of the run's
 *	  epoch and of that table; keys ascend within and across pages; each
 *	  directory entry is at most its page's first key (VACUUM only raises
 *	  first keys); every TID is valid; and every table holds the same
 *	  entries as table 0 (same count and same order-independent digest of
 *	  the unrotated code and TID of each entry) -- unless a VACUUM pass
 *	  over the runs was cancelled (HAM_META_RUN_UNEVEN), which leaves the
 *	  tables holding different dead entries until the next compaction or
 *	  complete VACUUM;
 *	- the pending, sealed and NULL lists: pages of the list's epoch, linked
 *	  without a cycle, valid TIDs.
 *
 * With heapallindexed, also: every row of the table that an MVCC snapshot
 * taken before the index is read can see has its entry (its code and TID,
 * or its TID in the NULL list).  Index entries go to a Bloom filter sized by
 * maintenance_work_mem, and each heap row is looked up in it, as amcheck
 * does: a missing entry can go unnoticed with a small probability, a
 * reported one is certain.
 *
 * The check holds the maintenance lock, so flushes, compactions and VACUUM
 * wait for it; inserts and scans go on.  On a standby, where replay takes no
 * lock, a problem found while replay changed the index is checked again.
 *
 * Only the index's owner may run it, and the index's expressions and
 * predicate are evaluated as the table's owner in a security-restricted
 * operation (as amcheck does since CVE-2022-1552).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "common/hashfn.h"
#include "common/pg_prng.h"
#include "lib/bloomfilter.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/resowner.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "hamming/hamming.h"

typedef struct HamCheckState
{
	Relation	index;
	Relation	heap;
	BlockNumber nblocks;
	bool		balls;			/* ham_indexes_balls() */
	bool		heapallindexed;
	bloom_filter *filter;		/* NULL unless heapallindexed */
	int64		heap_rows;
} HamCheckState;

/* What a Bloom filter element is made of: code, TID, NULL flag. */
#define HAM_CHECK_KEY_SIZE	16

static void
check_key(uint64 code, ItemPointer tid, bool isnull, unsigned char *key)
{
	memset(key, 0, HAM_CHECK_KEY_SIZE);
	if (!isnull)
		memcpy(key, &code, sizeof(uint64));
	memcpy(key + sizeof(uint64), tid, sizeof(ItemPointerData));
	key[sizeof(uint64) + sizeof(ItemPointerData)] = isnull ? 1 : 0;
}

static void
filter_add(HamCheckState *st, uint64 code, ItemPointer tid, bool isnull)
{
	unsigned char key[HAM_CHECK_KEY_SIZE];

	if (st->filter == NULL)
		return;
	check_key(code, tid, isnull, key);
	bloom_add_element(st->filter, key, HAM_CHECK_KEY_SIZE);
}

/* Order-independent digest of one entry, summed over a table. */
static inline uint64
entry_digest(uint64 code, ItemPointer tid)
{
	uint64		t = ((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) |
		ItemPointerGetOffsetNumberNoCheck(tid);

	return hash_bytes_uint32_extended((uint32) code, t) ^
		hash_bytes_uint32_extended((uint32) (code >> 32), ~t) * UINT64CONST(0x9E3779B97F4A7C15);
}

static void
corrupt(HamCheckState *st, BlockNumber blkno, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" is corrupted at page %u: %s",
					RelationGetRelationName(st->index), blkno, what),
			 errhint("REINDEX the index.")));
}

static void
check_tid(HamCheckState *st, BlockNumber blkno, ItemPointer tid)
{
	if (!ItemPointerIsValid(tid) || ItemPointerGetOffsetNumberNoCheck(tid) > MaxOffsetNumber)
		corrupt(st, blkno, psprintf("entry with invalid heap TID (%u,%u)",
									ItemPointerGetBlockNumberNoCheck(tid),
									ItemPointerGetOffsetNumberNoCheck(tid)));
}

/* ham_read_page, after checking that the page exists */
static Buffer
check_read(HamCheckState *st, BlockNumber blkno, uint16 kind, uint32 epoch, int table)
{
	/* inserts may have extended the index since it was measured */
	if (blkno >= st->nblocks)
		st->nblocks = RelationGetNumberOfBlocks(st->index);
	if (blkno == HAM_METAPAGE_BLKNO || blkno >= st->nblocks)
		corrupt(st, blkno, psprintf("a reference to page %u, outside the index's %u pages",
									blkno, st->nblocks));
	return ham_read_page(st->index, blkno, kind, epoch, table);
}

/* Every page: new, or a hamming page of a known kind whose count fits. */
static void
check_pages(HamCheckState *st)
{
	for (BlockNumber blkno = HAM_METAPAGE_BLKNO; blkno < st->nblocks; blkno++)
	{
		Buffer		buf = ReadBuffer(st->index, blkno);
		Page		page;
		HamPageOpaque opaque;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		opaque = HamPageGetOpaque(page);
		if (PageIsNew(page))
		{
			if (blkno == HAM_METAPAGE_BLKNO)
				corrupt(st, blkno, "the metapage is empty");
		}
		else if (PageGetSpecialSize(page) != MAXALIGN(sizeof(HamPageOpaqueData)) ||
				 opaque->page_id != HAM_PAGE_ID)
			corrupt(st, blkno, "not a hamming index page");
		else if (opaque->kind < HAM_KIND_META || opaque->kind > HAM_KIND_MAX ||
				 (opaque->kind == HAM_KIND_META) != (blkno == HAM_METAPAGE_BLKNO))
			corrupt(st, blkno, psprintf("unknown or misplaced page kind %d", opaque->kind));
		else
		{
			int			capacity = opaque->kind == HAM_KIND_RUN_DIR ||
				opaque->kind == HAM_KIND_RUN_DIR_INDEX ? HAM_DIR_CAPACITY : HAM_PAGE_CAPACITY;

			if (opaque->nentries > capacity)
				corrupt(st, blkno, psprintf("%d entries on a page that holds at most %d",
											opaque->nentries, capacity));
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

static void
check_run(HamCheckState *st, const HamSnapshot *snap, const HamRunRef *run)
{
	HamRunDir	dir;
	uint64		count0 = 0,
				digest0 = 0;

	if (run->header == HAM_METAPAGE_BLKNO || run->header >= st->nblocks)
		corrupt(st, HAM_METAPAGE_BLKNO, "a run header is outside the index");
	ham_run_dir_open(st->index, run->header, run->epoch, &dir);
	if (dir.cut != snap->nblocks || dir.only_block != snap->only_block)
		corrupt(st, run->header,
				psprintf("the run has %u tables of %d blocks, the metapage says %d blocks%s",
						 dir.header->nblocks, dir.cut, snap->nblocks,
						 snap->only_block > 0 ? psprintf(", only block %d", snap->only_block) : ""));
	/* VACUUM lowers the metapage's count to the live entries (ham_vacuum.c) */
	if (run->nentries > dir.nentries)
		corrupt(st, run->header,
				psprintf("the run was written with " UINT64_FORMAT " entries, the metapage says " UINT64_FORMAT,
						 dir.nentries, run->nentries));

	for (int t = 0; t < dir.layout.nblocks; t++)
	{
		uint64		count = 0,
					digest = 0,
					prev = 0;
		bool		first_key = true;

		ham_run_dir_load_table(st->index, &dir, t);
		for (uint32 p = 0; p < dir.ndata[t]; p++)
		{
			BlockNumber blkno = dir.blkno[t][p];
			Buffer		buf = check_read(st, blkno, HAM_KIND_RUN_DATA, dir.epoch, t);
			Page		page = BufferGetPage(buf);
			int			n = HamPageGetOpaque(page)->nentries;
			uint64	   *codes = HamPageCodes(page);
			ItemPointerData *tids = HamPageTids(page);

			if (p > 0 && dir.first[t][p] < dir.first[t][p - 1])
				corrupt(st, blkno, psprintf("directory entries of table %d descend", t));
			if (n > 0 && dir.first[t][p] > (codes[0] >> 32))
				corrupt(st, blkno, psprintf("its directory entry of table %d is above its first key", t));
			for (int i = 0; i < n; i++)
			{
				uint64		code = nd_unpermute(&dir.layout, t, codes[i]);

				if (!first_key && codes[i] < prev)
					corrupt(st, blkno, psprintf("keys of table %d descend at entry %d", t, i));
				first_key = false;
				prev = codes[i];
				check_tid(st, blkno, &tids[i]);
				count++;
				digest += entry_digest(code, &tids[i]);
				if (t == 0)
					filter_add(st, code, &tids[i], false);
			}
			UnlockReleaseBuffer(buf);
			CHECK_FOR_INTERRUPTS();
		}
		if (count > dir.nentries)
			corrupt(st, run->header,
					psprintf("table %d has " UINT64_FORMAT " entries, the run was written with " UINT64_FORMAT,
							 t, count, dir.nentries));
		if (t == 0)
		{
			count0 = count;
			digest0 = digest;

			/*
			 * More than the metapage counts: entries VACUUM did not see.  Fewer
			 * is allowed, as a pass that was cancelled, or one of an older
			 * version, removed entries without lowering the count.
			 */
			if (count > run->nentries)
				corrupt(st, run->header,
						psprintf("table 0 has " UINT64_FORMAT " entries, the metapage says " UINT64_FORMAT,
								 count, run->nentries));
		}
		else if ((count != count0 || digest != digest0) && !(snap->flags & HAM_META_RUN_UNEVEN))
			corrupt(st, run->header,
					psprintf("table %d does not hold the entries of table 0 (" UINT64_FORMAT " and " UINT64_FORMAT " entries)",
							 t, count, count0));
	}
}

static void
check_list(HamCheckState *st, const HamList *list, bool nulls)
{
	BlockNumber blkno = list->head;
	BlockNumber pages = 0;

	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = check_read(st, blkno, HAM_KIND_LIST, list->epoch, -1);
		Page		page = BufferGetPage(buf);
		HamPageOpaque opaque = HamPageGetOpaque(page);

		if (++pages > st->nblocks)
			corrupt(st, blkno, "a list of pages loops");
		for (int i = 0; i < opaque->nentries; i++)
		{
			check_tid(st, blkno, &HamPageTids(page)[i]);
			filter_add(st, HamPageCodes(page)[i], &HamPageTids(page)[i], nulls);
		}
		blkno = opaque->next;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/* table_index_build_scan callback: the row's entry must be in the filter */
static void
check_heap_row(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	HamCheckState *st = (HamCheckState *) state;
	unsigned char key[HAM_CHECK_KEY_SIZE];
	uint64		code = isnull[0] ? 0 : ham_value_code(st->balls, values[0]);

	st->heap_rows++;
	check_key(code, tid, isnull[0], key);
	if (bloom_lacks_element(st->filter, key, HAM_CHECK_KEY_SIZE))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) from table \"%s\" lacks its entry in index \"%s\"",
						ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(st->heap), RelationGetRelationName(index)),
				 errhint("REINDEX the index.")));
}

static void
check_heap(HamCheckState *st, Snapshot snapshot)
{
	IndexInfo  *indexinfo = BuildIndexInfo(st->index);
	TableScanDesc scan;

	scan = table_beginscan_strat(st->heap, snapshot, 0, NULL, true, true);
	/* behave as the first scan of CREATE INDEX CONCURRENTLY: visible rows */
	indexinfo->ii_Concurrent = true;
	indexinfo->ii_Unique = false;
	indexinfo->ii_ExclusionOps = NULL;
	indexinfo->ii_ExclusionProcs = NULL;
	indexinfo->ii_ExclusionStrats = NULL;
	table_index_build_scan(st->heap, st->index, indexinfo, true, false,
						   check_heap_row, st, scan);
}

/*
 * The structure: pages, the runs, the lists.  The caller holds the
 * maintenance lock, or is on a standby, where replay may change the index
 * meanwhile.
 */
static void
check_structure(HamCheckState *st, HamSnapshot *snap)
{
	st->nblocks = RelationGetNumberOfBlocks(st->index);
	check_pages(st);
	ham_read_snapshot(st->index, snap);
	if (st->filter)
	{
		bloom_free(st->filter);
		st->filter = NULL;
	}
	if (st->heapallindexed)
		st->filter = bloom_create(Max((int64) st->heap->rd_rel->reltuples,
									  (int64) (snap->run_entries + snap->pending.nentries +
											   snap->sealed.nentries + snap->nulls.nentries)),
								  maintenance_work_mem, pg_prng_uint64(&pg_global_prng_state));
	if (snap->nblocks < HAM_MIN_TABLES || snap->nblocks > HAM_MAX_TABLES)
		corrupt(st, HAM_METAPAGE_BLKNO,
				psprintf("the metapage says %d tables per run", snap->nblocks));
	for (int r = 0; r < snap->nruns; r++)
	{
		for (int q = 0; q < r; q++)
			if (snap->runs[q].epoch == snap->runs[r].epoch ||
				snap->runs[q].header == snap->runs[r].header)
				corrupt(st, HAM_METAPAGE_BLKNO,
						psprintf("runs %d and %d share an epoch or a header", q, r));
		check_run(st, snap, &snap->runs[r]);
	}
	check_list(st, &snap->sealed, false);
	check_list(st, &snap->pending, false);
	check_list(st, &snap->nulls, true);
}

/* Has replay changed what the metapage describes since `before`? */
static bool
index_moved(Relation index, const HamSnapshot *before)
{
	HamSnapshot now;

	ham_read_snapshot(index, &now);
	if (now.nruns != before->nruns)
		return true;
	for (int r = 0; r < now.nruns; r++)
		if (now.runs[r].header != before->runs[r].header ||
			now.runs[r].epoch != before->runs[r].epoch)
			return true;
	return now.flushes != before->flushes || now.compactions != before->compactions || now.list_cleanups != before->list_cleanups ||
		now.pending.epoch != before->pending.epoch || now.sealed.epoch != before->sealed.epoch ||
		now.sealed.head != before->sealed.head || now.nulls.epoch != before->nulls.epoch;
}

/*
 * On a standby the maintenance lock means nothing (replay takes no such
 * lock): a flush, compaction or VACUUM replayed during the check changes
 * pages under it, which
 * would look like corruption.  Check in a subtransaction, and when it finds
 * a problem while the metapage moved, check again; a problem found on an
 * index that stood still is reported.
 */
#define HAM_CHECK_STANDBY_TRIES	10

static void
check_structure_on_standby(HamCheckState *st, HamSnapshot *snap)
{
	MemoryContext ctx = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	for (int attempt = 1;; attempt++)
	{
		HamSnapshot before;
		ErrorData  *edata = NULL;
		bool		checked = false;

		ham_read_snapshot(st->index, &before);
		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(ctx);
		/* no return inside PG_TRY: it would leave a dangling error handler */
		PG_TRY();
		{
			check_structure(st, snap);
			ReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(ctx);
			CurrentResourceOwner = owner;
			checked = true;
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(ctx);
			edata = CopyErrorData();
			FlushErrorState();
			RollbackAndReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(ctx);
			CurrentResourceOwner = owner;
		}
		PG_END_TRY();
		if (checked)
			return;

		if (edata->sqlerrcode != ERRCODE_INDEX_CORRUPTED || !index_moved(st->index, &before))
			ReThrowError(edata);
		if (attempt == HAM_CHECK_STANDBY_TRIES)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not check index \"%s\": replay changed it during each of %d attempts",
							RelationGetRelationName(st->index), attempt),
					 errhint("Run the check on the primary, or when the standby is quieter.")));
		FreeErrorData(edata);
		CHECK_FOR_INTERRUPTS();
	}
}

static void check_index(Oid indexoid, bool heapallindexed);

/*
 * hamming_check(index, heapallindexed): check the index, or, given a
 * partitioned one, the index of every partition, one after the other.
 */
PG_FUNCTION_INFO_V1(hamming_check);
Datum
hamming_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	ListCell   *lc;

	foreach(lc, ham_leaf_indexes(indexoid))
	{
		check_index(lfirst_oid(lc), heapallindexed);
		CHECK_FOR_INTERRUPTS();
	}
	PG_RETURN_VOID();
}

static void
check_index(Oid indexoid, bool heapallindexed)
{
	Oid			heapoid;
	HamCheckState st;
	HamSnapshot snap;
	Snapshot	snapshot = InvalidSnapshot;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	bool		standby = RecoveryInProgress();

	/* a non-owner is refused before any lock is taken */
	ham_check_owner(indexoid);
	heapoid = IndexGetRelation(indexoid, true);

	memset(&st, 0, sizeof(st));
	st.heapallindexed = heapallindexed;
	/* lock the table before its index, as every other path does */
	st.heap = OidIsValid(heapoid) ? table_open(heapoid, AccessShareLock) : NULL;
	st.index = ham_open_index(indexoid, AccessShareLock);
	st.balls = ham_indexes_balls(st.index);
	if (st.heap == NULL || st.index->rd_index->indrelid != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("could not open the table of index \"%s\"",
						RelationGetRelationName(st.index))));
	if (!st.index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check index \"%s\"", RelationGetRelationName(st.index)),
				 errdetail("Index is not valid.")));

	/*
	 * The heap scan below evaluates the index's expressions and predicate:
	 * run them as the table's owner, in a security-restricted operation
	 * with GUC changes kept local, as amcheck and VACUUM do -- never as the
	 * (possibly superuser) caller.
	 */
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(st.heap->rd_rel->relowner,
						   save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();

	if (heapallindexed)
	{
		/*
		 * The snapshot comes first: every row it can see was inserted, with
		 * its index entry, before the index is read below.
		 */
		snapshot = RegisterSnapshot(GetTransactionSnapshot());
		if (IsolationUsesXactSnapshot() && st.index->rd_index->indcheckxmin &&
			!TransactionIdPrecedes(HeapTupleHeaderGetXmin(st.index->rd_indextuple->t_data),
								   snapshot->xmin))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("index \"%s\" cannot be verified using transaction snapshot",
							RelationGetRelationName(st.index))));
	}

	if (standby)
		check_structure_on_standby(&st, &snap);
	else
	{
		ham_maintenance_lock(st.index);
		check_structure(&st, &snap);
		ham_maintenance_unlock(st.index);
	}

	if (heapallindexed)
	{
		check_heap(&st, snapshot);
		bloom_free(st.filter);
		UnregisterSnapshot(snapshot);
	}

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	index_close(st.index, AccessShareLock);
	table_close(st.heap, AccessShareLock);
}
