/*-------------------------------------------------------------------------
 *
 * ham_compact.c
 *		Compaction: the newest runs merged into one by the tiered policy of
 *		nd_lsm.h, and runs rewritten alone -- a sparse one, or the one at
 *		the end of the file.
 *
 * README, "Compaction" and "Space under churn", describes both.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "core/nd_lsm.h"
#include "hamming/hamming.h"

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
	return nd_lsm_pick(sizes, n - 1, sizes[n - 1], ham_flush_threshold(index),
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
 * pages is rewritten alone, once that frees HAM_SPARSE_MIN_PAGES or more
 * (or it has no live entry left: a table emptied by a move or a packed
 * copy's merge): under steady churn the runs hold at most a third more
 * pages than their entries need.
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
	double		most = 0;
	int64		used = ham_meta_list_pages(snap),
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
		needed = ceil((double) snap->runs[r].nentries / HAM_PAGE_CAPACITY) * dir.layout.nblocks;
		/* a run with no live entry left goes however small it is */
		if (needed < data * HAM_SPARSE_FILL && data - needed > most &&
			(data - needed >= HAM_SPARSE_MIN_PAGES || snap->runs[r].nentries == 0))
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
	int64		added;
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

	header = ham_run_write(index, snap.nblocks, snap.only_block, new_epoch, NULL,
						   snap.runs + first, take, uneven, &nentries, &added);

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
		ham_compact_lock(index);
	ctx = AllocSetContextCreate(CurrentMemoryContext, "hamming compaction",
								ALLOCSET_DEFAULT_SIZES);
	old_ctx = MemoryContextSwitchTo(ctx);
	for (;;)
	{
		bool		written;

		MemoryContextReset(ctx);
		written = ham_compact_step(index, &relocated);
		if (!written)
			break;
		steps++;
		CHECK_FOR_INTERRUPTS();
	}
	/* recycle what the steps retired, unless a flush is writing pages */
	if (steps > 0 && ham_flush_trylock(index))
	{
		ham_recycle(index);
		ham_flush_unlock(index);
	}
	MemoryContextSwitchTo(old_ctx);
	MemoryContextDelete(ctx);
	ham_compact_unlock(index);
	return steps;
}
