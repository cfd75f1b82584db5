/*-------------------------------------------------------------------------
 *
 * ham_scan.c
 *		Radius search and exact nearest neighbours.
 *
 * Every scan has a center and a largest distance (max_radius): the ORDER BY
 * argument and 64, or the radius condition with the smallest ball.  Other
 * conditions are checked on each entry.  The scan searches each run of the
 * index apart: per run it fills *levels*, one list of TIDs per distance,
 * and keeps `complete`: every entry of the run within that distance of the
 * center is in its levels.  It emits distance d, run by run and then the
 * lists', once every run has completed d, and, when the executor asks for
 * more, raises the `complete` of the run that lags by one of two means:
 *
 *	a multi-index hashing step (nd_mih.h) on the run: step t completes
 *		distance t and may find entries farther out, kept for later;
 *	a flat pass over table 0 of the run, which computes every distance and
 *		completes the distances up to the first that holds enough rows (at
 *		least one distance; more rows on each further pass).
 *
 * The steps grow with the distance; the scan switches to flat passes once
 * the steps it has run plus the next one would cost more than one pass, so
 * it never does much more than twice the cheaper of the two, and earlier
 * when the steps up to the distance it expects its rows at would.  The pending
 * and sealed lists are searched whole at the start: the pending list through
 * the backend's cache of it (ham_cache.c), which reads only what was added
 * since its last scan and probes the rest in memory.  Bitmap
 * scans choose once per run, for the whole radius.
 *
 * Distances are exact: no recheck of the condition or of the ORDER BY
 * value.  An ORDER BY scan with no condition returns the rows whose code is
 * NULL last, as the sort of a sequential scan would.
 *
 * Entries are held in memory between the calls that find them and the
 * calls that return them, while VACUUM may remove entries and free their
 * heap slots: an index-only scan pins the metapage only while one call
 * gathers entries, reads the visibility map for each entry as it finds it,
 * and checks a marked entry's row against its snapshot when it returns it
 * (README, "VACUUM").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relscan.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "access/xlog.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "core/nd_simhash_radius.h"
#include "hamming/hamming.h"
#include "type/hamming_ball.h"
#include "type/simhash64.h"

#define HAM_NLEVELS			65

/*
 * Relative costs, in probes: a probe of a block value visits a page and
 * searches it (0.8 us measured at 1M rows); a flat pass visits each page
 * and computes its 582 distances four at a time, 0.6 of a probe.  An entry
 * a probe meets costs its distance check, and almost every one is dropped
 * there (past the scan's bound, or first met at another step): fitted at
 * 10M rows, where a block value holds 150 entries, against the flat
 * pass's page, some 3 ns, a three-hundredth of a probe.  (Kept entries
 * cost more, but they are rows a flat pass would keep too.)
 */
#define HAM_COST_ENTRY		0.003
#define HAM_COST_FLAT_PAGE	0.6

/* Rows a nearest-neighbour scan is assumed to want (LIMIT 10) */
#define HAM_KNN_GUESS		10

/* Distances past the expected one that the steps still keep */
#define HAM_KNN_SLACK		2

typedef struct HamLevel
{
	ItemPointerData *tids;
	uint64	   *codes;			/* index-only scans: the codes too */
	int64		n;
	int64		cap;
} HamLevel;

/* The search of one run */
typedef struct HamScanRun
{
	HamDirRef  *dirref;			/* its directory (ham_cache.c) */
	HamRunDir  *dir;
	nd_mih_query mq;
	uint64		qperm[HAM_MAX_TABLES];
	int			complete;		/* every entry of the run within this
								 * distance is in `levels` */
	int			next_step;
	bool		flat;
	/* step next_step under way (ham_run_step), paused to hand out rows */
	bool		step_active;
	uint32	   *step_values;
	uint64		step_nvalues;
	uint64		step_k;			/* the block value being probed */
	bool		step_in_value;	/* its pages are [step_p, step_pend) */
	uint32		step_p;
	uint32		step_pend;
	/* the pages of step t's one block value, found as they were prefetched */
	bool		prefetched[HAM_MAX_TABLES];
	uint32		prefetch_p[HAM_MAX_TABLES];
	uint32		prefetch_pend[HAM_MAX_TABLES];
	int			block_table;	/* answers the block ball, or -1
								 * (ham_run_block_table) */
	double		mih_spent;
	int			mih_bound;		/* steps keep entries up to this distance */
	double		flat_cost;
	int64		flat_want;		/* entries the next flat pass keeps */
	HamLevel	levels[HAM_NLEVELS];
} HamScanRun;

typedef struct HamScanOpaqueData
{
	MemoryContext scan_ctx;		/* reset by each rescan */
	MemoryContext outer_ctx;	/* the scan's own: the heap fetch's state */
	Buffer		interlock;		/* the metapage, pinned while the scan holds
								 * or gathers entries VACUUM must not free
								 * (ham_vacuum.c) */

	/* index-only scans with an MVCC snapshot: entries checked (above) */
	bool		check_rows;
	bool		trust_vm;		/* this call's entries: all-visible stands */
	Buffer		vmbuf;
	uint64		calls;			/* amgettuple calls so far */
	uint64		vm_call;		/* the call that read vm_all_visible */
	BlockNumber vm_block;		/* ... for this heap page */
	bool		vm_all_visible;
	IndexFetchTableData *fetch; /* NULL until a row is fetched */
	TupleTableSlot *slot;

	/* the query */
	bool		none;			/* no row can match */
	bool		ordered;
	bool		with_nulls;		/* no condition: NULL codes are returned last */
	bool		want_codes;		/* an index-only scan */
	bool		recheck;		/* a `&&` condition: the row's radius is
								 * not in the index */
	uint64		center;
	int			max_radius;
	uint64		amask;			/* block balls: bits that must equal center's */
	int			ablock;			/* the driving block ball's block (from 0),
								 * or -1 */
	int			ablocks;		/* ... of so many blocks */
	int			nfilters;
	uint64	   *fcenter;
	int		   *fradius;
	uint64	   *fmask;

	/* the search */
	bool		started;
	HamSnapshot snap;
	int			nruns;
	HamScanRun *runs;			/* in scan_ctx; the directories are held */
	int			complete;		/* the least of the runs' */
	HamLevel	list[HAM_NLEVELS];	/* the pending and sealed lists' */
	TIDBitmap  *tbm;			/* bitmap scans: found entries go here */
	int64		ntids;
	int64		returned;		/* rows emitted so far */

	/* emitting: level emit_level of source emit_src (a run, or the lists) */
	int			emit_level;
	int			emit_src;
	int64		emit_pos;
	bool		nulls_loaded;
	HamLevel	nulls;
} HamScanOpaqueData;

typedef HamScanOpaqueData *HamScanOpaque;

/*
 * A scan's memory context, kept from one scan to the next in a backend
 * (reset, under TopMemoryContext, its first block of HAM_SCAN_KEEP bytes
 * kept): a context made and deleted by each scan gave its blocks back to
 * malloc, and a KNN scan's 100-140kB sat at glibc's trim threshold (128kB),
 * so that, depending on what else the heap held, every scan's end could
 * shrink the heap and the next grow it again -- brk calls, page faults and
 * a TLB shootdown a query, more than a tenth of a KNN 10 at 1M rows on a
 * virtual machine.  One context is kept; a second scan open at the same
 * time (a join) makes and deletes its own.  A scan that ends in an error
 * never returns its context: the query's memory takes it.
 */
#define HAM_SCAN_KEEP		(256 * 1024)

static MemoryContext ham_kept_scan_ctx = NULL;

static MemoryContext
ham_scan_ctx_take(void)
{
	MemoryContext ctx = ham_kept_scan_ctx;

	if (ctx == NULL)
		return AllocSetContextCreate(CurrentMemoryContext, "hamming scan", HAM_SCAN_KEEP,
									 ALLOCSET_DEFAULT_INITSIZE, ALLOCSET_DEFAULT_MAXSIZE);
	ham_kept_scan_ctx = NULL;
	MemoryContextSetParent(ctx, CurrentMemoryContext);
	return ctx;
}

static void
ham_scan_ctx_give_back(MemoryContext ctx)
{
	if (ham_kept_scan_ctx != NULL)
	{
		MemoryContextDelete(ctx);
		return;
	}
	MemoryContextReset(ctx);
	MemoryContextSetParent(ctx, TopMemoryContext);
	ham_kept_scan_ctx = ctx;
}

IndexScanDesc
ham_beginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(r, nkeys, norderbys);
	HamScanOpaque so = palloc0(sizeof(HamScanOpaqueData));

	so->scan_ctx = ham_scan_ctx_take();
	so->outer_ctx = CurrentMemoryContext;
	so->interlock = InvalidBuffer;
	so->vmbuf = InvalidBuffer;
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
		memset(scan->xs_orderbynulls, true, sizeof(bool) * norderbys);
	}
	scan->opaque = so;
	return scan;
}

/* Drop the scan's pin of the metapage, if it holds one, and its heap page. */
static void
ham_release_interlock(HamScanOpaque so)
{
	if (BufferIsValid(so->interlock))
		ReleaseBuffer(so->interlock);
	so->interlock = InvalidBuffer;
	/* a pinned heap page would hold up VACUUM's cleanup lock on it */
	if (so->fetch)
		table_index_fetch_reset(so->fetch);
}

/*
 * An index-only scan is about to gather entries: pin the metapage (VACUUM's
 * pass cannot end while it is pinned) and tell whether the visibility map
 * can vouch for what it reads now.  It can if no VACUUM pass has ended
 * since the scan read the metapage first (the count of list cleanups is as
 * it was then), or if every run and list the scan reads is still in the
 * index: a complete pass removed the dead entries of all of those.  Not so
 * a run a compaction retired: a pass skips it, and its entries may name freed
 * slots.
 */
static void
ham_gather_begin(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	HamMetaPageData *meta;
	HamRunRef	runs[HAM_MAX_RUNS];
	int			nruns;
	bool		trust;

	if (!so->check_rows || BufferIsValid(so->interlock))
		return;
	so->interlock = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(so->interlock, BUFFER_LOCK_SHARE);
	meta = HamPageGetMeta(BufferGetPage(so->interlock));
	trust = meta->list_cleanups == so->snap.list_cleanups;
	if (!trust)
	{
		trust = meta->nulls.epoch == so->snap.nulls.epoch;
		nruns = ham_meta_get_runs(index, meta, runs);
		for (int r = 0; trust && r < so->nruns; r++)
		{
			bool		live = false;

			for (int i = 0; i < nruns && !live; i++)
				live = runs[i].epoch == so->snap.runs[r].epoch;
			trust = live;
		}
	}
	LockBuffer(so->interlock, BUFFER_LOCK_UNLOCK);
	so->trust_vm = trust;
}

/*
 * In an index-only scan's gathered entries, a TID whose row is to be
 * checked when it is returned (its heap page was not all-visible when it
 * was gathered).  Offsets stay below MaxOffsetNumber, far below this bit.
 */
#define HAM_TID_CHECK	0x8000

/*
 * Can an entry just found be returned as it is (check_rows)?  Only while
 * the scan holds the pin, when the visibility map vouches for its row.
 */
static bool
ham_row_all_visible(IndexScanDesc scan, const ItemPointerData *tid)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	BlockNumber block = ItemPointerGetBlockNumber(tid);

	Assert(BufferIsValid(so->interlock));
	if (!so->trust_vm)
		return false;
	/* the list holds runs of one heap page's rows: ask once per run */
	if (block != so->vm_block || so->vm_call != so->calls)
	{
		so->vm_block = block;
		so->vm_call = so->calls;
		so->vm_all_visible = VM_ALL_VISIBLE(scan->heapRelation, block, &so->vmbuf);
	}
	return so->vm_all_visible;
}

/* An entry as gathered: marked for a check of its row unless all-visible */
static inline ItemPointerData
ham_gathered_tid(IndexScanDesc scan, const ItemPointerData *tid)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	ItemPointerData t = *tid;

	if (so->check_rows && !ham_row_all_visible(scan, tid))
		t.ip_posid |= HAM_TID_CHECK;
	return t;
}

/* Does the scan's snapshot see the row of an entry it is about to return? */
static bool
ham_row_visible(IndexScanDesc scan, const ItemPointerData *entry_tid)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	/*
	 * A copy: the heap writes the TID of the chain member it finds (a HOT
	 * update's heap-only tuple) back into the TID it is given, and the
	 * entry's is the chain's root, in a shared index page or the
	 * pending-list cache.
	 */
	ItemPointerData tid = *entry_tid;
	bool		call_again = false;
	bool		all_dead = false;
	bool		found;

	if (so->fetch == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(so->outer_ctx);

		so->fetch = table_index_fetch_begin(scan->heapRelation);
		so->slot = table_slot_create(scan->heapRelation, NULL);
		MemoryContextSwitchTo(old);
	}
	found = table_index_fetch_tuple(so->fetch, &tid, scan->xs_snapshot, so->slot,
									&call_again, &all_dead);
	ExecClearTuple(so->slot);
	return found;
}

/* Let go of the runs' directories. */
static void
ham_release_runs(HamScanOpaque so)
{
	for (int r = 0; r < so->nruns; r++)
		if (so->runs[r].dirref)
			ham_dir_release(so->runs[r].dirref);
	so->nruns = 0;
	so->runs = NULL;
}

void
ham_endscan(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	ham_release_interlock(so);
	ham_release_runs(so);
	if (so->fetch)
	{
		table_index_fetch_end(so->fetch);
		ExecDropSingleTupleTableSlot(so->slot);
	}
	if (BufferIsValid(so->vmbuf))
		ReleaseBuffer(so->vmbuf);
	ham_scan_ctx_give_back(so->scan_ctx);
	pfree(so);
}

/*
 * A search key as a ball: its center, its radius, and for a block ball the
 * bits that must equal the center's (0 for any other key) and its block
 * (from 0) and blocks.  False when no code can match.
 */
static bool
ham_key_ball(ScanKey key, uint64 *center, int *radius, uint64 *mask, int *block,
			 int *blocks)
{
	*mask = 0;
	*block = -1;
	*blocks = 0;
	if (key->sk_flags & SK_ISNULL)
		return false;
	if (key->sk_strategy == HAM_STRATEGY_EQUAL)
	{
		/* a simhash64 or a bigint (sk_subtype): the same 64 bits */
		*center = DatumGetSimhash64(key->sk_argument);
		*radius = 0;
	}
	else if (key->sk_strategy == HAM_STRATEGY_WITHIN ||
			 key->sk_strategy == HAM_STRATEGY_COLLIDES)
	{
		HammingBall *ball = DatumGetHammingBallP(key->sk_argument);

		*center = ball->center;
		*radius = ball->radius;
	}
	else if (key->sk_strategy == HAM_STRATEGY_WITHIN_BLOCK)
	{
		HammingBlockBall *ball = DatumGetHammingBlockBallP(key->sk_argument);

		*center = ball->center;
		*radius = ball->radius;
		*mask = hamming_block_mask(ball->block, ball->blocks);
		*block = ball->block - 1;
		*blocks = ball->blocks;
	}
	else
		elog(ERROR, "unrecognized strategy number %d for a hamming index", key->sk_strategy);
	return *radius >= 0;
}

void
ham_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		   ScanKey orderbys, int norderbys)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	MemoryContext old;
	int			driver = -1;

	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));

	ham_release_interlock(so);
	ham_release_runs(so);
	MemoryContextReset(so->scan_ctx);
	memset(so->list, 0, sizeof(so->list));
	memset(&so->nulls, 0, sizeof(so->nulls));
	so->started = false;
	so->none = false;
	so->want_codes = scan->xs_want_itup;
	so->recheck = false;
	for (int i = 0; i < scan->numberOfKeys; i++)
		so->recheck |= scan->keyData[i].sk_strategy == HAM_STRATEGY_COLLIDES;
	scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
	so->tbm = NULL;
	so->ntids = 0;

	/* ORDER BY sh <~> NULL sorts nothing: every row, in any order */
	so->ordered = scan->numberOfOrderBys > 0 &&
		!(scan->orderByData[0].sk_flags & SK_ISNULL);
	so->with_nulls = scan->numberOfKeys == 0;
	so->center = so->ordered ? DatumGetSimhash64(scan->orderByData[0].sk_argument) : 0;
	so->max_radius = HAMMING_BALL_ALL;

	old = MemoryContextSwitchTo(so->scan_ctx);
	so->fcenter = palloc(sizeof(uint64) * Max(scan->numberOfKeys, 1));
	so->fradius = palloc(sizeof(int) * Max(scan->numberOfKeys, 1));
	so->fmask = palloc(sizeof(uint64) * Max(scan->numberOfKeys, 1));
	MemoryContextSwitchTo(old);
	so->nfilters = 0;
	so->amask = 0;
	so->ablock = -1;
	so->ablocks = 0;

	/*
	 * Unordered: a block ball of the index's own cut and table drives the
	 * search (it probes one block value), else the smallest ball, a block
	 * ball before another of its radius (it probes one table).  The cost
	 * model (ham_cost.c) prices the driving ball.
	 */
	if (!so->ordered)
	{
		int			own_blocks = ham_option_blocks(scan->indexRelation);
		int			own_only = ham_option_only_block(scan->indexRelation);
		int			rank = 0;

		for (int i = 0; i < scan->numberOfKeys; i++)
		{
			uint64		c,
						m;
			int			r,
						b,
						bs,
						k;

			if (!ham_key_ball(&scan->keyData[i], &c, &r, &m, &b, &bs))
			{
				so->none = true;
				return;
			}
			/* ranked by radius, a probe of one block value below them all */
			k = b >= 0 && ham_run_has_block_table(own_blocks, own_only, b + 1, bs) ? -1 : r;
			if (driver < 0 || k < rank ||
				(k == rank && b >= 0 && so->ablock < 0))
			{
				rank = k;
				driver = i;
				so->center = c;
				so->max_radius = r;
				so->amask = m;
				so->ablock = b;
				so->ablocks = bs;
			}
		}
	}
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		uint64		c,
					m;
		int			r,
					b,
					bs;

		if (i == driver)
			continue;
		if (!ham_key_ball(&scan->keyData[i], &c, &r, &m, &b, &bs))
		{
			so->none = true;
			return;
		}
		if (c == so->center)
		{
			so->max_radius = Min(so->max_radius, r);
			so->amask |= m;
		}
		else
		{
			so->fcenter[so->nfilters] = c;
			so->fradius[so->nfilters] = r;
			so->fmask[so->nfilters] = m;
			so->nfilters++;
		}
	}
}

/* The conditions besides the driving ball's radius: blocks, other balls */
static inline bool
ham_filters_pass(HamScanOpaque so, uint64 code)
{
	if ((code ^ so->center) & so->amask)
		return false;
	for (int i = 0; i < so->nfilters; i++)
		if (pg_popcount64(code ^ so->fcenter[i]) > so->fradius[i] ||
			((code ^ so->fcenter[i]) & so->fmask[i]))
			return false;
	return true;
}

/*
 * Keep an entry at a level.  A level's arrays start small: a nearest-
 * neighbour scan keeps a few entries at each of some thirty distances of
 * each run (the steps keep every entry within their bound), and at 64
 * entries a start a scan of a 1M-row index with four runs took 140kB, past
 * glibc's trim threshold, so that every scan's end gave the memory back to
 * the kernel and the next took it again (brk, page faults, a TLB shootdown
 * each).
 */
static void
ham_level_add(HamScanOpaque so, HamLevel *level, ItemPointer tid, uint64 code)
{
	if (level->n == level->cap)
	{
		int64		cap = Max(8, level->cap * 2);

		if (level->tids == NULL)
		{
			level->tids = MemoryContextAllocHuge(so->scan_ctx, sizeof(ItemPointerData) * cap);
			if (so->want_codes)
				level->codes = MemoryContextAllocHuge(so->scan_ctx, sizeof(uint64) * cap);
		}
		else
		{
			level->tids = repalloc_huge(level->tids, sizeof(ItemPointerData) * cap);
			if (so->want_codes)
				level->codes = repalloc_huge(level->codes, sizeof(uint64) * cap);
		}
		level->cap = cap;
	}
	if (so->want_codes)
		level->codes[level->n] = code;
	level->tids[level->n++] = *tid;
}

static void
ham_level_free(HamLevel *level)
{
	if (level->tids)
		pfree(level->tids);
	if (level->codes)
		pfree(level->codes);
}

/* An entry at distance d that passed every condition; always kept. */
static inline bool
ham_found(IndexScanDesc scan, HamLevel *levels, int d, ItemPointer tid, uint64 code)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	ItemPointerData t;

	if (so->tbm)
	{
		tbm_add_tuples(so->tbm, tid, 1, so->recheck);
		so->ntids++;
		return true;
	}
	t = ham_gathered_tid(scan, tid);
	ham_level_add(so, &levels[d], &t, code);
	return true;
}

/*
 * Return an entry to the executor (with its code for an index-only scan);
 * false, returning nothing, for a marked entry whose row the snapshot does
 * not see.
 */
static bool
ham_return(IndexScanDesc scan, ItemPointer tid, uint64 code, bool isnull, int d)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	ItemPointerData t = *tid;

	if (t.ip_posid & HAM_TID_CHECK)
	{
		t.ip_posid &= ~HAM_TID_CHECK;
		if (!ham_row_visible(scan, &t))
			return false;
	}
	scan->xs_heaptid = t;
	if (so->want_codes)
	{
		Datum		value = Simhash64GetDatum(code);

		if (scan->xs_itup)
			pfree(scan->xs_itup);
		scan->xs_itup = index_form_tuple(scan->xs_itupdesc, &value, &isnull);
	}
	if (scan->numberOfOrderBys > 0)
	{
		scan->xs_orderbyvals[0] = Int32GetDatum(d);
		scan->xs_orderbynulls[0] = isnull || !so->ordered;
	}
	return true;
}

/*
 * Index-only scans: the code is the whole index tuple (not so a ball's).
 * Not on a standby: replay of VACUUM's generic WAL records takes no cleanup
 * lock, so the metapage pin that keeps VACUUM from freeing what such a scan
 * holds (ham_vacuum.c) protects nothing there.
 */
bool
ham_canreturn(Relation index, int attno)
{
	return attno == 1 && !ham_indexes_balls(index) && !RecoveryInProgress();
}

/* An entry of the pending or sealed list within max_radius (a page of it, or its cache in ham_cache.c). */
static void
ham_scan_list_hit(uint64 code, ItemPointer tid, int distance, void *arg)
{
	IndexScanDesc scan = (IndexScanDesc) arg;
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	if (ham_filters_pass(so, code))
		ham_found(scan, so->list, distance, tid, code);
}

/* The entries of a page of a list (pending or sealed) within max_radius. */
static void
ham_scan_list_page(Page page, void *arg)
{
	IndexScanDesc scan = (IndexScanDesc) arg;
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	uint64	   *codes = HamPageCodes(page);
	uint8		dist[HAM_PAGE_CAPACITY];
	uint32		idx[HAM_PAGE_CAPACITY];
	size_t		k;

	k = nd_hamming_within(codes, HamPageGetOpaque(page)->nentries, so->center, so->max_radius,
						  idx, dist);
	for (size_t j = 0; j < k; j++)
		ham_scan_list_hit(codes[idx[j]], &HamPageTids(page)[idx[j]], dist[j], scan);
}

/*
 * The pending list through this backend's cache of it (when it fits in
 * work_mem), and the sealed one, there only while a flush runs, directly.
 */
static void
ham_scan_lists(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;

	if (!ham_list_cache_search(index, &so->snap, &so->snap.pending, so->center,
							   so->max_radius, ham_scan_list_hit, scan))
		ham_list_walk(index, &so->snap.pending, ham_scan_list_page, scan);
	if (so->snap.sealed.head != InvalidBlockNumber &&
		!ham_list_cache_search(index, &so->snap, &so->snap.sealed, so->center,
							   so->max_radius, ham_scan_list_hit, scan))
		ham_list_walk(index, &so->snap.sealed, ham_scan_list_page, scan);
}

/* Cost of MIH step t on a run, in probes (HAM_COST_*). */
static double
ham_step_cost(HamScanRun *run, int step)
{
	const nd_layout *l = &run->dir->layout;
	double		values = (double) nd_mih_step_size(l, step);
	double		bucket = (double) run->dir->nentries / ldexp(1.0, l->width[nd_mih_step_table(l, step)]);

	return values * (1.0 + bucket / HAM_PAGE_CAPACITY + bucket * HAM_COST_ENTRY);
}

/* The distance every run's search has completed. */
static void
ham_update_complete(HamScanOpaque so)
{
	so->complete = so->max_radius;
	for (int r = 0; r < so->nruns; r++)
		so->complete = Min(so->complete, so->runs[r].complete);
}

/*
 * The keys of a table whose leading block (w bits wide) is `value`: the
 * range a step probes for that value.
 */
static inline void
ham_block_value_keys(int w, uint32 value, uint64 *lo, uint64 *hi)
{
	*lo = (uint64) value << (64 - w);
	*hi = *lo | (((uint64) 1 << (64 - w)) - 1);
}

/*
 * The keys lo..hi of data page p of a table (n keys): their range
 * [*b, *e), searched from where uniform keys would put lo.
 */
static inline void
ham_page_range(const HamRunDir *dir, int table, uint32 p, const uint64 *keys, size_t n,
			   uint64 lo, uint64 hi, size_t *b, size_t *e)
{
	nd_sorted_range_from(keys, n, lo, hi,
						 nd_interpolate(ham_run_page_first(dir, table, p),
										ham_run_page_next(dir, table, p, keys, n), n, lo),
						 b, e);
}

/*
 * The table of a run that answers the scan's driving block ball, or -1:
 * the table that leads with the ball's block, when the run cuts codes into
 * the ball's blocks and has that table.  A run with none searches the
 * ball's radius and drops what differs on the block (ham_filters_pass).
 */
static int
ham_run_block_table(HamScanOpaque so, const HamRunDir *dir)
{
	if (so->ablock < 0 ||
		!ham_run_has_block_table(dir->cut, dir->only_block, so->ablock + 1, so->ablocks))
		return -1;
	return dir->only_block == 0 ? so->ablock : 0;
}

/*
 * A radius search's first steps probe each table of each run for one block
 * value (a radius below the number of blocks needs no other): prefetch the
 * first page of each probe before the steps read them one by one.  The
 * steps a flat pass would replace (ham_advance_run) are left alone.
 */
static void
ham_scan_prefetch(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	for (int r = 0; r < so->nruns; r++)
	{
		HamScanRun *run = &so->runs[r];
		const nd_layout *l = &run->dir->layout;
		double		spent = 0;

		if (run->block_table >= 0)
			continue;

		for (int step = 0; step <= so->max_radius && step < HAM_MAX_TABLES &&
			 nd_mih_step_size(l, step) == 1; step++)
		{
			int			table = nd_mih_step_table(l, step);
			int			w = l->width[table];
			uint32		value;
			uint64		lo,
						hi;
			uint32		p,
						pend;

			spent += ham_step_cost(run, step);
			if (spent > run->flat_cost)
				break;
			nd_mih_step_values(&run->mq, step, &value);
			ham_block_value_keys(w, value, &lo, &hi);
			ham_run_table_pages(scan->indexRelation, run->dir, table,
								(uint32) (lo >> 32), (uint32) (hi >> 32), &p, &pend);
			run->prefetched[step] = true;
			run->prefetch_p[step] = p;
			run->prefetch_pend[step] = pend;
			if (p < pend)
				ham_prefetch_run_page(run->dir, table, p, lo);
		}
	}
}

/*
 * The distance within which the scan expects `want` rows: those it has
 * returned, those it holds, and for the rest of the runs as many as random
 * codes would put there, P(Binomial(64, 1/2) <= r) of the runs.
 */
static int
ham_expected_radius(HamScanOpaque so, int64 want)
{
	double		held = (double) so->returned;

	for (int r = Max(so->complete + 1, 0); r < so->max_radius; r++)
	{
		double		unseen = 0;

		held += (double) so->list[r].n;
		for (int k = 0; k < so->nruns; k++)
		{
			held += (double) so->runs[k].levels[r].n;
			unseen += (double) so->runs[k].dir->nentries;
		}
		if (held + unseen * nd_binomial_within(r) >= (double) want)
			return r;
	}
	return so->max_radius;
}

/*
 * A nearest-neighbour scan's first bound on the distances its steps keep,
 * set before any step runs: a little past the distance within which random
 * codes would put HAM_KNN_GUESS rows.  Unbounded, the first steps (block
 * distances 0 and 1) would keep every entry of their m * (1 + w) block
 * values, mostly 20 to 40 bits away -- some 200,000 entries at 200M rows,
 * each unpermuted, stored and, in an index-only scan, looked up in the
 * visibility map (a buffer each).  Entries past the bound the scan sets at
 * block distance 2 never go out: a run's steps stop at its bound, and the
 * flat pass that goes past it drops what the run holds beyond `complete`.
 * The bound only falls (ham_advance_run), so an entry a step dropped is
 * never wanted below it: the guess costs time when it is wrong, never rows.
 */
static void
ham_knn_first_bound(HamScanOpaque so)
{
	int			bound = Min(so->max_radius,
							ham_expected_radius(so, HAM_KNN_GUESS) + HAM_KNN_SLACK);

	for (int r = 0; r < so->nruns; r++)
		so->runs[r].mih_bound = bound;
}

/* Read the metapage, the lists, the runs' headers: the start of a search. */
static void
ham_scan_start(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;

	so->started = true;
	so->returned = 0;
	/* pg_stat_user_indexes.idx_scan: how a user sees that the index is used */
	pgstat_count_index_scan(index);
	/* and EXPLAIN ANALYZE's "Index Searches" (18 on) */
	nd_count_index_search(scan);
	so->emit_level = 0;
	so->emit_src = 0;
	so->emit_pos = 0;
	so->nulls_loaded = false;

	/*
	 * Entries are held in memory from here to the end of the scan.  For an
	 * MVCC scan a heap slot VACUUM frees and another row reuses meanwhile
	 * holds a row the snapshot cannot see; but an index-only scan trusts
	 * the visibility map instead of the row, and a non-MVCC scan (the
	 * exclusion constraint's) would see the new row.  A non-MVCC scan keeps
	 * the metapage pinned to its end, which VACUUM waits for (ham_vacuum.c);
	 * an index-only scan pins it only while it gathers entries, and checks
	 * each (the header above).  It reads the metapage under that pin: what
	 * the index holds then is what the visibility map can vouch for.
	 */
	so->check_rows = scan->xs_want_itup && scan->heapRelation != NULL &&
		scan->xs_snapshot != InvalidSnapshot && IsMVCCSnapshot(scan->xs_snapshot);
	if (so->check_rows)
	{
		if (!BufferIsValid(so->interlock))
			so->interlock = ReadBuffer(index, HAM_METAPAGE_BLKNO);
		so->trust_vm = true;
	}
	else if (!BufferIsValid(so->interlock) &&
			 (scan->xs_want_itup || scan->xs_snapshot == InvalidSnapshot ||
			  !IsMVCCSnapshot(scan->xs_snapshot)))
		so->interlock = ReadBuffer(index, HAM_METAPAGE_BLKNO);

	ham_read_snapshot(index, &so->snap);
	ham_release_runs(so);
	so->runs = MemoryContextAllocZero(so->scan_ctx, sizeof(HamScanRun) * Max(so->snap.nruns, 1));
	for (int r = 0; r < so->snap.nruns; r++)
	{
		HamScanRun *run = &so->runs[r];

		run->dirref = ham_dir_acquire(index, &so->snap, r);
		so->nruns = r + 1;
		run->dir = ham_dir_of(run->dirref);
		nd_mih_query_init(&run->mq, &run->dir->layout, so->center);
		for (int t = 0; t < run->dir->layout.nblocks; t++)
			run->qperm[t] = nd_permute(&run->dir->layout, t, so->center);
		run->flat_cost = (double) run->dir->ndata[0] * HAM_COST_FLAT_PAGE;
		run->complete = -1;
		run->mih_bound = so->max_radius;
		run->flat_want = HAM_FLAT_FIRST_WANT;
		run->block_table = ham_run_block_table(so, run->dir);
	}
	ham_update_complete(so);
	if (!so->ordered)
		ham_scan_prefetch(scan);

	ham_scan_lists(scan);
	if (so->ordered)
		ham_knn_first_bound(so);
}

/*
 * MIH step t on a run: entries first met at this step.  Returns true
 * when the step is done.  A nearest-neighbour scan pauses it (returns
 * false) after a page that added entries at distance t itself: every
 * nearer entry is known by then (the caller steps the run that lags), so
 * those are the next rows whatever the rest of the step finds, and a group
 * of 200,000 identical codes is not read whole before its first row goes
 * out.  The next call resumes it.
 */
static bool
ham_run_step(IndexScanDesc scan, HamScanRun *run, int step)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	const nd_layout *l = &run->dir->layout;
	int			table = nd_mih_step_table(l, step);
	int			w = l->width[table];
	uint64		qp = run->qperm[table];
	bool		may_pause = so->ordered && so->tbm == NULL;
	Buffer		buf = InvalidBuffer;
	uint32		cur = 0;

	if (!run->step_active)
	{
		uint64		nvalues = nd_mih_step_size(l, step);

		if (nvalues == 0)
			return true;
		run->step_values = MemoryContextAllocHuge(so->scan_ctx, sizeof(uint32) * nvalues);
		run->step_nvalues = nd_mih_step_values(&run->mq, step, run->step_values);
		run->step_k = 0;
		run->step_in_value = false;
		run->step_active = true;
	}

	for (; run->step_k < run->step_nvalues; run->step_k++)
	{
		uint64		lo,
					hi;

		ham_block_value_keys(w, run->step_values[run->step_k], &lo, &hi);

		if (!run->step_in_value)
		{
			if (step < HAM_MAX_TABLES && run->prefetched[step])
			{
				run->step_p = run->prefetch_p[step];
				run->step_pend = run->prefetch_pend[step];
			}
			else
				ham_run_table_pages(index, run->dir, table, (uint32) (lo >> 32), (uint32) (hi >> 32),
									&run->step_p, &run->step_pend);
			run->step_in_value = true;
		}
		while (run->step_p < run->step_pend)
		{
			uint32		p = run->step_p++;
			int64		had = run->levels[step].n;
			Page		page;
			uint64	   *keys;
			size_t		n,
						b,
						e;

			if (buf == InvalidBuffer || p != cur)
			{
				if (buf != InvalidBuffer)
					UnlockReleaseBuffer(buf);
				buf = ham_read_run_page(index, run->dir, table, p);
				cur = p;
			}
			page = BufferGetPage(buf);
			keys = HamPageCodes(page);
			n = HamPageGetOpaque(page)->nentries;
			ham_page_range(run->dir, table, p, keys, n, lo, hi, &b, &e);
			for (size_t i = b; i < e; i++)
			{
				int			d = pg_popcount64(keys[i] ^ qp);
				uint64		code;

				if (d > run->mih_bound)
					continue;
				code = nd_unpermute(l, table, keys[i]);
				if (nd_mih_first_step(&run->mq, code) != step || !ham_filters_pass(so, code))
					continue;
				ham_found(scan, run->levels, d, &HamPageTids(page)[i], code);
			}
			if (may_pause && run->levels[step].n > had)
			{
				UnlockReleaseBuffer(buf);
				return false;
			}
		}
		run->step_in_value = false;
	}
	if (buf != InvalidBuffer)
		UnlockReleaseBuffer(buf);
	pfree(run->step_values);
	run->step_active = false;
	return true;
}

/*
 * A block ball's search of a run: the entries of one block value in one
 * table, every one within the radius kept.  Returns the run's complete
 * distance, the radius.
 */
static int
ham_run_block(IndexScanDesc scan, HamScanRun *run)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	const nd_layout *l = &run->dir->layout;
	int			table = run->block_table;
	uint64		qp = run->qperm[table];
	uint64		lo,
				hi;
	uint32		p,
				pend;

	ham_block_value_keys(l->width[table], nd_block(l, table, so->center), &lo, &hi);
	ham_run_table_pages(index, run->dir, table, (uint32) (lo >> 32), (uint32) (hi >> 32),
						&p, &pend);
	for (; p < pend; p++)
	{
		Buffer		buf = ham_read_run_page(index, run->dir, table, p);
		Page		page = BufferGetPage(buf);
		uint64	   *keys = HamPageCodes(page);
		size_t		n = HamPageGetOpaque(page)->nentries,
					b,
					e;

		ham_page_range(run->dir, table, p, keys, n, lo, hi, &b, &e);
		for (size_t i = b; i < e; i++)
		{
			int			d = pg_popcount64(keys[i] ^ qp);
			uint64		code;

			if (d > so->max_radius)
				continue;
			code = nd_unpermute(l, table, keys[i]);
			if (ham_filters_pass(so, code))
				ham_found(scan, run->levels, d, &HamPageTids(page)[i], code);
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	return so->max_radius;
}

/*
 * A flat pass over table 0 of a run: the entries at distances lo and up.
 * Distances are the same between codes rotated alike, so the pass reads
 * the table as stored (rotated in a run of one table) against the query
 * rotated so.
 * It keeps whole distances only, from lo up to the first at which it holds
 * `want` entries (always lo in full), dropping the farthest distance
 * whenever the nearer ones hold enough -- a top-k selection on a 65-value
 * key, so it stores little more than `want` entries.  Returns the last
 * distance it holds in full.
 */
static int
ham_run_flat(IndexScanDesc scan, HamScanRun *run, int lo, int hi, int64 want)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	int64		stored = 0;
	uint8		dist[HAM_PAGE_CAPACITY];
	uint32		idx[HAM_PAGE_CAPACITY];

	ham_run_dir_load_table(index, run->dir, 0);
	for (uint32 p = 0; p < run->dir->ndata[0]; p++)
	{
		Buffer		buf = ham_read_run_page(index, run->dir, 0, p);
		Page		page;
		uint64	   *codes;
		int			n;
		size_t		k;

		page = BufferGetPage(buf);
		n = HamPageGetOpaque(page)->nentries;
		codes = HamPageCodes(page);
		/* table 0 as stored: rotated in a run of one table (hamming.h) */
		k = nd_hamming_within(codes, n, run->qperm[0], hi, idx, dist);
		for (size_t j = 0; j < k; j++)
		{
			int			d = dist[j];
			int			i = idx[j];
			uint64		code = nd_unpermute(&run->dir->layout, 0, codes[i]);

			if (d < lo || d > hi || !ham_filters_pass(so, code))
				continue;
			if (!ham_found(scan, run->levels, d, &HamPageTids(page)[i], code) || so->tbm)
				continue;
			stored++;
			while (hi > lo && stored - run->levels[hi].n >= want)
			{
				stored -= run->levels[hi].n;
				run->levels[hi].n = 0;
				hi--;
			}
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	return hi;
}

/*
 * The farthest distance a nearest-neighbour scan's flat pass over a run
 * needs to keep: the first, from the pass's first distance on, within which
 * the scan already holds `want` entries -- rows it returned, the lists', the
 * runs' (entries the steps met beyond a run's `complete` are rows there all
 * the same; this run holds none beyond its own).  Farther entries of this
 * run would not go out before those, and the pass would hand over and then
 * drop them: a run's pass that started from max_radius stored, and had
 * nd_hamming_within() hand over, entries at every distance until it held
 * `want` of its own, on every run -- with several runs most of a random
 * code's KNN time at 1M rows, and enough memory that the scan's end gave it
 * back to the kernel (a trim, a TLB shootdown) on every query.  The result
 * stays exact: the run's `complete` is what the pass held in full, and a
 * scan that needs more runs another pass from there.
 */
static int
ham_flat_bound(HamScanOpaque so, const HamScanRun *run, int64 want)
{
	double		held = (double) so->returned;

	if (!so->ordered)
		return so->max_radius;
	for (int d = 0; d < so->max_radius; d++)
	{
		held += (double) so->list[d].n;
		for (int k = 0; k < so->nruns; k++)
			held += (double) so->runs[k].levels[d].n;
		if (d > run->complete && held >= (double) want)
			return d;
	}
	return so->max_radius;
}

/* Step next_step of a run has ended: its distance is complete. */
static void
ham_step_done(HamScanRun *run)
{
	run->mih_spent += ham_step_cost(run, run->next_step);
	run->complete = run->next_step;
	run->next_step++;
}

/*
 * Raise a run's `complete` by at least one distance, or run some of a step
 * that hands out rows at the next distance as it finds them (ham_run_step).
 */
static void
ham_advance_run(IndexScanDesc scan, HamScanRun *run)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	if (run->block_table >= 0)
	{
		run->complete = ham_run_block(scan, run);
		return;
	}
	if (run->step_active)
	{
		if (ham_run_step(scan, run, run->next_step))
			ham_step_done(run);
		return;
	}
	if (!run->flat)
	{
		int			step = run->next_step;
		double		cost = ham_step_cost(run, step);

		/*
		 * Nearest neighbours: when the steps up to the distance at which the
		 * scan expects its first rows would cost more than a flat pass, which
		 * is the case for a code with no near copy, stop stepping now.  The
		 * steps at block distances 0 and 1 run unless the first bound ends
		 * them (ham_knn_first_bound): they are cheap, and they find the near
		 * copies that make the expectation right.
		 */
		if (so->ordered && step >= 2 * run->dir->layout.nblocks && step <= run->mih_bound)
		{
			int			target = ham_expected_radius(so, HAM_KNN_GUESS);
			double		ahead = 0;

			for (int t = step; t <= target && run->mih_spent + ahead <= run->flat_cost; t++)
				ahead += ham_step_cost(run, t);
			if (run->mih_spent + ahead > run->flat_cost)
				cost = run->flat_cost + 1;
			else if (step == 2 * run->dir->layout.nblocks)
			{
				/*
				 * From here on the steps keep only the entries a little past
				 * the expected distance, now that the first steps' near
				 * copies are known.  Never raised: an entry an earlier step
				 * dropped would be missing below the new bound.
				 */
				run->mih_bound = Min(run->mih_bound, target + HAM_KNN_SLACK);
			}
		}
		if (step > run->mih_bound)
			cost = run->flat_cost + 1;
		if (run->mih_spent + cost <= run->flat_cost)
		{
			if (ham_run_step(scan, run, step))
				ham_step_done(run);
			return;
		}
		/* the steps found entries beyond `complete`: a flat pass finds them again */
		run->flat = true;
		for (int d = run->complete + 1; d < HAM_NLEVELS; d++)
			run->levels[d].n = 0;
	}
	run->complete = ham_run_flat(scan, run, run->complete + 1,
								 ham_flat_bound(so, run, run->flat_want), run->flat_want);
	/* a scan that needs another pass needs many more rows than thought */
	run->flat_want = Min(run->flat_want * 16, (int64) work_mem * 1024 / (int64) sizeof(ItemPointerData));
}

/* Advance the run that lags most (the first of those, on a tie). */
static void
ham_advance(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	HamScanRun *lag = NULL;

	for (int r = 0; r < so->nruns; r++)
		if (so->runs[r].complete < so->max_radius &&
			(lag == NULL || so->runs[r].complete < lag->complete))
			lag = &so->runs[r];
	if (lag)
		ham_advance_run(scan, lag);
	ham_update_complete(so);
}

static void
ham_load_nulls_page(Page page, void *arg)
{
	IndexScanDesc scan = (IndexScanDesc) arg;
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	for (int i = 0; i < HamPageGetOpaque(page)->nentries; i++)
	{
		ItemPointerData t = ham_gathered_tid(scan, &HamPageTids(page)[i]);

		ham_level_add(so, &so->nulls, &t, 0);
	}
}

static void
ham_load_nulls(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	so->nulls_loaded = true;
	ham_list_walk(scan->indexRelation, &so->snap.nulls, ham_load_nulls_page, scan);
}

static bool
ham_gettuple_internal(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	if (so->none)
		return false;
	if (!so->started)
		ham_scan_start(scan);

	scan->xs_recheck = so->recheck;
	scan->xs_recheckorderby = false;

	/*
	 * Level by level, source by source (the runs, then the lists): a
	 * source's entries at distance d go out once every source has completed
	 * d - 1, and the source has completed d -- or is running its step at d,
	 * which hands them out as it finds them (ham_run_step).
	 */
	while (so->emit_level <= so->max_radius)
	{
		int			d = so->emit_level;
		bool		is_list = so->emit_src >= so->nruns;
		HamScanRun *run = is_list ? NULL : &so->runs[so->emit_src];
		HamLevel   *level = is_list ? &so->list[d] : &run->levels[d];
		bool		src_done = d <= so->complete + 1 && (is_list || run->complete >= d);

		if (d <= so->complete + 1 && so->emit_pos < level->n &&
			(src_done || (run->step_active && run->next_step == d)))
		{
			int			pos = so->emit_pos++;

			if (!ham_return(scan, &level->tids[pos],
							so->want_codes ? level->codes[pos] : 0, false, d))
				continue;
			so->returned++;
			return true;
		}
		if (!src_done)
		{
			ham_gather_begin(scan);
			ham_advance(scan);
			continue;
		}
		so->emit_pos = 0;
		if (++so->emit_src > so->nruns)
		{
			for (int r = 0; r < so->nruns; r++)
			{
				ham_level_free(&so->runs[r].levels[d]);
				memset(&so->runs[r].levels[d], 0, sizeof(HamLevel));
			}
			ham_level_free(&so->list[d]);
			memset(&so->list[d], 0, sizeof(HamLevel));
			so->emit_src = 0;
			so->emit_level++;
		}
	}

	if (!so->with_nulls)
		return false;
	if (!so->nulls_loaded)
	{
		ham_gather_begin(scan);
		ham_load_nulls(scan);
		so->emit_pos = 0;
	}
	while (so->emit_pos < so->nulls.n)
		if (ham_return(scan, &so->nulls.tids[so->emit_pos++], 0, true, 0))
			return true;
	return false;
}

bool
ham_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	bool		found;

	/* a page's all-visible bit is read anew in each call, under its pin */
	so->calls++;
	found = ham_gettuple_internal(scan);

	/* what this call gathered is checked: VACUUM need not wait for us */
	if (so->check_rows)
		ham_release_interlock(so);
	return found;
}

int64
ham_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	if (so->none)
		return 0;
	so->tbm = tbm;
	so->ntids = 0;
	ham_scan_start(scan);
	for (int r = 0; r < so->nruns; r++)
	{
		HamScanRun *run = &so->runs[r];
		double		mih = 0;
		int			nsteps = nd_mih_steps_for_radius(so->max_radius);

		if (run->block_table >= 0)
		{
			ham_run_block(scan, run);
			continue;
		}
		for (int t = 0; t < nsteps && mih <= run->flat_cost; t++)
			mih += ham_step_cost(run, t);
		if (mih <= run->flat_cost)
		{
			for (int t = 0; t < nsteps; t++)
			{
				ham_run_step(scan, run, t);
				CHECK_FOR_INTERRUPTS();
			}
		}
		else
			ham_run_flat(scan, run, 0, so->max_radius, 0);
	}
	if (so->with_nulls)
	{
		ham_load_nulls(scan);
		for (int64 i = 0; i < so->nulls.n; i++)
			tbm_add_tuples(tbm, &so->nulls.tids[i], 1, false);
		so->ntids += so->nulls.n;
	}
	so->tbm = NULL;
	return so->ntids;
}
