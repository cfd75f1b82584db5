/*-------------------------------------------------------------------------
 *
 * ham_flush.c
 *		Flushes: the pending list sealed and sorted into a new run; when
 *		one is due; and hamming_merge(), which flushes and compacts now.
 *
 * README, "Flushes", describes the protocol; "The brake" when an insert
 * flushes itself.
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
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

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
	uint64		threshold = ham_flush_threshold(index);

	return ham_unflushed_entries(snap) >= threshold + Max(threshold / 3, 1);
}

/*
 * Should the pending list be flushed?  When it holds the threshold above;
 * VACUUM also flushes a shorter list that holds a sixteenth of the runs
 * (a small index has its list folded in at every VACUUM).
 */
bool
ham_flush_wanted(Relation index, const HamSnapshot *snap, bool vacuuming)
{
	uint64		pending = ham_unflushed_entries(snap);

	if (pending == 0)
		return false;
	if (pending >= ham_flush_threshold(index))
		return true;
	return vacuuming && pending * 16 >= snap->run_entries;
}

/*
 * Can a flush not proceed now?  With every run slot taken, a flush merges
 * the list into the newest run, which needs the compaction lock: while a
 * compaction holds it, no flush can be done (ham_flush_list), however long
 * the list.  The brake waits for that to end (ham_worker.c).
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

static bool ham_flush_locked_ext(Relation index, bool by_insert, bool wait_compaction,
								 int64 *flushed);

/*
 * Flush the pending list into a run, then compact the runs as the policy
 * wants.  With `wait` false, returns false at once if another flush,
 * VACUUM or check holds the flush lock, and compacts only if no compaction
 * is under way; with `wait` true, waits for both (a flush that finds every
 * run slot taken waits for the compaction under way).  by_insert: an
 * inserting session flushes (counted apart).  *flushed: the entries the
 * flush took from the sealed list.  Returns whether it flushed.
 */
bool
ham_flush_and_compact(Relation index, bool wait, bool by_insert, int64 *flushed)
{
	bool		done;

	*flushed = 0;
	if (wait)
		ham_flush_lock(index);
	else if (!ham_flush_trylock(index))
		return false;
	done = ham_flush_locked_ext(index, by_insert, wait, flushed);
	ham_flush_unlock(index);
	ham_compact(index, wait);
	return done;
}

static bool ham_flush_list(Relation index, bool by_insert, bool wait_compaction,
						   int64 *flushed);

/*
 * Flush, for a caller that holds the flush lock.  An index that is not
 * ready (CREATE INDEX CONCURRENTLY has not finished building it) is left
 * alone: its pages are the build's.  With every run slot taken and a
 * compaction under way, returns false at once (ham_flush_blocked).
 */
bool
ham_flush_locked(Relation index, bool by_insert, int64 *flushed)
{
	return ham_flush_locked_ext(index, by_insert, false, flushed);
}

/*
 * ham_flush_locked; wait_compaction: with every run slot taken, wait for
 * a compaction under way to end rather than return without flushing (the
 * flush lock is held, then the compaction lock: the order of the
 * maintenance lock).  The flushing lock tells the brake a flush is under
 * way (ham_flush_running).
 */
static bool
ham_flush_locked_ext(Relation index, bool by_insert, bool wait_compaction, int64 *flushed)
{
	bool		done;

	*flushed = 0;
	if (!index->rd_index->indisready)
		return false;
	ham_flushing_lock(index);
	done = ham_flush_list(index, by_insert, wait_compaction, flushed);
	ham_flushing_unlock(index);
	return done;
}

/* Recycle, if no compaction is writing pages (the caller holds the flush lock) */
static void
ham_recycle_if_free(Relation index)
{
	if (!ham_compact_trylock(index))
		return;
	ham_recycle(index);
	ham_compact_unlock(index);
}

/*
 * The flush: seal the pending list, write its entries as a new run, and
 * swap the run in for the sealed list (README, "Flushes").
 */
static bool
ham_flush_list(Relation index, bool by_insert, bool wait_compaction, int64 *flushed)
{
	MemoryContext flush_ctx,
				old_ctx;
	Buffer		metabuf;
	GenericXLogState *state;
	HamMetaPageData *meta;
	HamRunRef	runs[HAM_MAX_RUNS];
	int			nruns;
	int			ntake = 0;
	bool		compact_locked = false;
	uint32		new_epoch;
	int			nblocks,
				only_block;
	bool		uneven;
	HamList		sealed;
	BlockNumber header;
	uint64		nentries;

	/* what the flush reads and sorts is freed when it ends */
	flush_ctx = AllocSetContextCreate(CurrentMemoryContext, "hamming flush",
									  ALLOCSET_DEFAULT_SIZES);
	old_ctx = MemoryContextSwitchTo(flush_ctx);

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
				ham_compact_lock(index);
			else if (!ham_compact_trylock(index))
			{
				MemoryContextSwitchTo(old_ctx);
				MemoryContextDelete(flush_ctx);
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
	only_block = meta->only_block;
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
		MemoryContextDelete(flush_ctx);
		return false;
	}

	/* 2. the new run */
	header = ham_run_write(index, nblocks, only_block, new_epoch, &sealed,
						   runs + nruns - ntake, ntake, uneven, &nentries, flushed);

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
	meta->flushes++;
	if (by_insert)
		meta->insert_flushes++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	if (compact_locked)
		ham_compact_unlock(index);
	MemoryContextSwitchTo(old_ctx);
	MemoryContextDelete(flush_ctx);
	return true;
}

/*
 * hamming_merge(index): flush the pending list into a new run now, and
 * compact the runs as the policy wants, as VACUUM would; returns the number
 * of entries flushed.  Waits for a flush, compaction or VACUUM under way.
 * Given a partitioned index, does so for the index of every partition, one
 * after the other, and returns the sum.
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
		int64		flushed = 0;

		if (!index->rd_index->indisready)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("index \"%s\" is not ready", RelationGetRelationName(index)),
					 errdetail("CREATE INDEX CONCURRENTLY or REINDEX CONCURRENTLY is still building it.")));
		ham_flush_and_compact(index, true, false, &flushed);
		index_close(index, RowExclusiveLock);
		total += flushed;
		CHECK_FOR_INTERRUPTS();
	}

	/*
	 * A flush is not undone by a rollback, and the caller expects it to
	 * survive a crash once we return; a transaction that wrote only WAL
	 * (no transaction id) would not flush it at commit.
	 */
	if (XactLastRecEnd != InvalidXLogRecPtr)
		XLogFlush(XactLastRecEnd);
	PG_RETURN_INT64(total);
}
