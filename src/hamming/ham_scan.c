/*-------------------------------------------------------------------------
 *
 * ham_scan.c
 *		Radius search and exact nearest neighbours.
 *
 * Every scan has a center and a largest distance (max_radius): the ORDER BY
 * argument and 64, or the radius condition with the smallest ball.  Other
 * conditions are checked on each entry.  The scan fills *levels*, one list
 * of TIDs per distance, and keeps `complete`: every entry within that
 * distance of the center is in the levels.  It emits the levels in order
 * up to `complete` and, when the executor asks for more, raises `complete`
 * by one of two means:
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
 * scans choose once, for the whole radius.
 *
 * Distances are exact: no recheck of the condition or of the ORDER BY
 * value.  An ORDER BY scan with no condition returns the rows whose code is
 * NULL last, as the sort of a sequential scan would.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relscan.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "hamming.h"
#include "hamming_ball.h"
#include "radius_planner.h"
#include "simhash64.h"

#define HAM_NLEVELS			65

/*
 * Relative costs, in probes: a probe of a block value visits a page and
 * binary-searches it (0.8 us measured at 1M rows); examining an entry met
 * by a probe costs a fiftieth of that; a flat pass visits each page and
 * computes its 582 distances four at a time, 0.6 of a probe.
 */
#define HAM_COST_ENTRY		0.02
#define HAM_COST_FLAT_PAGE	0.6

/* Rows a nearest-neighbour scan is assumed to want (LIMIT 10) */
#define HAM_KNN_GUESS		10

/* Distances past the expected one that the steps still keep */
#define HAM_KNN_SLACK		2

/*
 * Entries the first flat pass of a nearest-neighbour scan keeps: enough for
 * the usual LIMIT; each further pass keeps 16 times more (up to work_mem).
 */
#define HAM_FLAT_FIRST_WANT	100

typedef struct HamLevel
{
	ItemPointerData *tids;
	uint64	   *codes;			/* index-only scans: the codes too */
	int64		n;
	int64		cap;
} HamLevel;

typedef struct HamScanOpaqueData
{
	MemoryContext scan_ctx;		/* reset by each rescan */
	Buffer		interlock;		/* the metapage, pinned while the scan holds
								 * entries VACUUM must not free (ham_vacuum.c) */
	HamDirRef  *dirref;			/* the run's directory (ham_cache.c) */
	HamRunDir  *dir;

	/* the query */
	bool		none;			/* no row can match */
	bool		ordered;
	bool		with_nulls;		/* no condition: NULL codes are returned last */
	bool		want_codes;		/* an index-only scan */
	bool		recheck;		/* a `&&` condition: the row's radius is
								 * not in the index */
	uint64		center;
	int			max_radius;
	int			nfilters;
	uint64	   *fcenter;
	int		   *fradius;

	/* the search */
	bool		started;
	HamSnapshot snap;
	bool		has_run;
	nd_mih_query mq;
	uint64		qperm[HAM_MAX_TABLES];
	int			complete;
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
	double		mih_spent;
	int			mih_bound;		/* steps keep entries up to this distance */
	double		flat_cost;
	int64		flat_want;		/* entries the next flat pass keeps */
	HamLevel	run[HAM_NLEVELS];
	HamLevel	list[HAM_NLEVELS];
	TIDBitmap  *tbm;			/* bitmap scans: found entries go here */
	int64		ntids;
	int64		returned;		/* rows emitted so far */

	/* emitting */
	int			emit_level;
	int64		emit_pos;
	bool		emit_list;
	bool		nulls_loaded;
	HamLevel	nulls;
} HamScanOpaqueData;

typedef HamScanOpaqueData *HamScanOpaque;

IndexScanDesc
ham_beginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(r, nkeys, norderbys);
	HamScanOpaque so = palloc0(sizeof(HamScanOpaqueData));

	so->scan_ctx = AllocSetContextCreate(CurrentMemoryContext, "hamming scan",
										 ALLOCSET_DEFAULT_SIZES);
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
		memset(scan->xs_orderbynulls, true, sizeof(bool) * norderbys);
	}
	scan->opaque = so;
	return scan;
}

/* Drop the scan's pin of the metapage, if it holds one. */
static void
ham_release_interlock(HamScanOpaque so)
{
	if (BufferIsValid(so->interlock))
		ReleaseBuffer(so->interlock);
	so->interlock = InvalidBuffer;
}

void
ham_endscan(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	ham_release_interlock(so);
	if (so->dirref)
		ham_dir_release(so->dirref);
	MemoryContextDelete(so->scan_ctx);
	pfree(so);
}

/* The center and radius of a condition; false if it holds no row. */
static bool
ham_key_ball(ScanKey key, uint64 *center, int *radius)
{
	if (key->sk_flags & SK_ISNULL)
		return false;
	if (key->sk_strategy == HAM_STRATEGY_EQUAL)
	{
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
	MemoryContextReset(so->scan_ctx);
	memset(so->run, 0, sizeof(so->run));
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
	MemoryContextSwitchTo(old);
	so->nfilters = 0;

	/* unordered: the smallest ball drives the search */
	if (!so->ordered)
	{
		for (int i = 0; i < scan->numberOfKeys; i++)
		{
			uint64		c;
			int			r;

			if (!ham_key_ball(&scan->keyData[i], &c, &r))
			{
				so->none = true;
				return;
			}
			if (driver < 0 || r < so->max_radius)
			{
				driver = i;
				so->center = c;
				so->max_radius = r;
			}
		}
	}
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		uint64		c;
		int			r;

		if (i == driver)
			continue;
		if (!ham_key_ball(&scan->keyData[i], &c, &r))
		{
			so->none = true;
			return;
		}
		if (c == so->center)
			so->max_radius = Min(so->max_radius, r);
		else
		{
			so->fcenter[so->nfilters] = c;
			so->fradius[so->nfilters] = r;
			so->nfilters++;
		}
	}
}

static inline bool
ham_filters_pass(HamScanOpaque so, uint64 code)
{
	for (int i = 0; i < so->nfilters; i++)
		if (pg_popcount64(code ^ so->fcenter[i]) > so->fradius[i])
			return false;
	return true;
}

static void
ham_level_add(HamScanOpaque so, HamLevel *level, ItemPointer tid, uint64 code)
{
	if (level->n == level->cap)
	{
		int64		cap = Max(64, level->cap * 2);

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

/* An entry at distance d that passed every condition. */
static inline void
ham_found(HamScanOpaque so, HamLevel *levels, int d, ItemPointer tid, uint64 code)
{
	if (so->tbm)
	{
		tbm_add_tuples(so->tbm, tid, 1, so->recheck);
		so->ntids++;
	}
	else
		ham_level_add(so, &levels[d], tid, code);
}

/* Return an entry to the executor (with its code for an index-only scan). */
static void
ham_return(IndexScanDesc scan, ItemPointer tid, uint64 code, bool isnull, int d)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	scan->xs_heaptid = *tid;
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
	HamScanOpaque so = (HamScanOpaque) arg;

	if (ham_filters_pass(so, code))
		ham_found(so, so->list, distance, tid, code);
}

/* The entries of a page of a list (pending or sealed) within max_radius. */
static void
ham_scan_list_page(Page page, void *arg)
{
	HamScanOpaque so = (HamScanOpaque) arg;
	uint64	   *codes = HamPageCodes(page);
	uint8		dist[HAM_PAGE_CAPACITY];
	uint32		idx[HAM_PAGE_CAPACITY];
	size_t		k;

	k = nd_hamming_within(codes, HamPageGetOpaque(page)->nentries, so->center, so->max_radius,
						  idx, dist);
	for (size_t j = 0; j < k; j++)
		ham_scan_list_hit(codes[idx[j]], &HamPageTids(page)[idx[j]], dist[j], so);
}

/*
 * The pending list through this backend's cache of it (when it fits in
 * work_mem), and the sealed one, there only while a merge runs, directly.
 */
static void
ham_scan_lists(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;

	if (!ham_list_cache_search(index, &so->snap, &so->snap.pending, so->center,
							   so->max_radius, ham_scan_list_hit, so))
		ham_list_walk(index, &so->snap.pending, ham_scan_list_page, so);
	if (so->snap.sealed.head != InvalidBlockNumber)
		ham_list_walk(index, &so->snap.sealed, ham_scan_list_page, so);
}

/* Cost of MIH step t, in probes (HAM_COST_*). */
static double
ham_step_cost(HamScanOpaque so, int step)
{
	const nd_layout *l = &so->dir->layout;
	double		values = (double) nd_mih_step_size(l, step);
	double		bucket = (double) so->dir->nentries / ldexp(1.0, l->width[nd_mih_step_table(l, step)]);

	return values * (1.0 + bucket / HAM_PAGE_CAPACITY + bucket * HAM_COST_ENTRY);
}

/* Read the metapage, the lists, the run's header: the start of a search. */
static void
ham_scan_start(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;

	so->started = true;
	so->complete = -1;
	so->next_step = 0;
	so->flat = false;
	so->step_active = false;
	so->mih_spent = 0;
	so->mih_bound = so->max_radius;
	so->returned = 0;
	so->flat_want = HAM_FLAT_FIRST_WANT;
	so->emit_level = 0;
	so->emit_pos = 0;
	so->emit_list = false;
	so->nulls_loaded = false;

	/*
	 * Entries are held in memory from here to the end of the scan.  For an
	 * MVCC scan a heap slot VACUUM frees and another row reuses meanwhile
	 * holds a row the snapshot cannot see; but an index-only scan trusts
	 * the visibility map instead of the row, and a non-MVCC scan (the
	 * exclusion constraint's) would see the new row: those keep the
	 * metapage pinned, which VACUUM waits for (ham_vacuum.c).
	 */
	if (!BufferIsValid(so->interlock) &&
		(scan->xs_want_itup || scan->xs_snapshot == InvalidSnapshot ||
		 !IsMVCCSnapshot(scan->xs_snapshot)))
		so->interlock = ReadBuffer(index, HAM_METAPAGE_BLKNO);

	ham_read_snapshot(index, &so->snap);
	so->has_run = so->snap.run_header != InvalidBlockNumber;
	if (so->dirref)
	{
		ham_dir_release(so->dirref);
		so->dirref = NULL;
		so->dir = NULL;
	}
	if (so->has_run)
	{
		so->dirref = ham_dir_acquire(index, &so->snap);
		so->dir = ham_dir_of(so->dirref);
		nd_mih_query_init(&so->mq, &so->dir->layout, so->center);
		for (int t = 0; t < so->dir->layout.nblocks; t++)
			so->qperm[t] = nd_permute(&so->dir->layout, t, so->center);
		so->flat_cost = (double) so->dir->ndata[0] * HAM_COST_FLAT_PAGE;
	}

	ham_scan_lists(scan);
}

static void
ham_load_table(IndexScanDesc scan, int table)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	ham_dir_load_table(scan->indexRelation, so->dirref, table);
}

/*
 * MIH step t on the run: entries first met at this step.  Returns true
 * when the step is done.  A nearest-neighbour scan pauses it (returns
 * false) after a page that added entries at distance t itself: every
 * nearer entry is known by then, so those are the next rows whatever the
 * rest of the step finds, and a group of 200,000 identical codes is not
 * read whole before its first row goes out.  The next call resumes it.
 */
static bool
ham_run_step(IndexScanDesc scan, int step)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	const nd_layout *l = &so->dir->layout;
	int			table = nd_mih_step_table(l, step);
	int			w = l->width[table];
	uint64		qp = so->qperm[table];
	uint64		span = ((uint64) 1 << (64 - w)) - 1;
	bool		may_pause = so->ordered && so->tbm == NULL;
	Buffer		buf = InvalidBuffer;
	uint32		cur = 0;

	if (!so->step_active)
	{
		uint64		nvalues = nd_mih_step_size(l, step);

		if (nvalues == 0)
			return true;
		ham_load_table(scan, table);
		so->step_values = MemoryContextAllocHuge(so->scan_ctx, sizeof(uint32) * nvalues);
		so->step_nvalues = nd_mih_step_values(&so->mq, step, so->step_values);
		so->step_k = 0;
		so->step_in_value = false;
		so->step_active = true;
	}

	for (; so->step_k < so->step_nvalues; so->step_k++)
	{
		uint64		lo = (uint64) so->step_values[so->step_k] << (64 - w);
		uint64		hi = lo | span;

		if (!so->step_in_value)
		{
			ham_run_table_pages(so->dir, table, (uint32) (lo >> 32), (uint32) (hi >> 32),
								&so->step_p, &so->step_pend);
			so->step_in_value = true;
		}
		while (so->step_p < so->step_pend)
		{
			uint32		p = so->step_p++;
			int64		had = so->run[step].n;
			Page		page;
			uint64	   *keys;
			size_t		b,
						e;

			if (buf == InvalidBuffer || p != cur)
			{
				if (buf != InvalidBuffer)
					UnlockReleaseBuffer(buf);
				buf = ham_read_run_page(index, so->dir, table, p);
				cur = p;
			}
			page = BufferGetPage(buf);
			keys = HamPageCodes(page);
			nd_sorted_range(keys, HamPageGetOpaque(page)->nentries, lo, hi, &b, &e);
			for (size_t i = b; i < e; i++)
			{
				int			d = pg_popcount64(keys[i] ^ qp);
				uint64		code;

				if (d > so->mih_bound)
					continue;
				code = nd_unpermute(l, table, keys[i]);
				if (nd_mih_first_step(&so->mq, code) != step || !ham_filters_pass(so, code))
					continue;
				ham_found(so, so->run, d, &HamPageTids(page)[i], code);
			}
			if (may_pause && so->run[step].n > had)
			{
				UnlockReleaseBuffer(buf);
				return false;
			}
		}
		so->step_in_value = false;
	}
	if (buf != InvalidBuffer)
		UnlockReleaseBuffer(buf);
	pfree(so->step_values);
	so->step_active = false;
	return true;
}

/*
 * A flat pass over table 0: the entries at distances lo and up.  It keeps
 * whole distances only, from lo up to the first at which it holds `want`
 * entries (always lo in full), dropping the farthest distance whenever the
 * nearer ones hold enough -- a top-k selection on a 65-value key, so it
 * stores little more than `want` entries.  Returns the last distance it
 * holds in full.
 */
static int
ham_run_flat(IndexScanDesc scan, int lo, int hi, int64 want)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	int64		stored = 0;
	uint8		dist[HAM_PAGE_CAPACITY];
	uint32		idx[HAM_PAGE_CAPACITY];

	ham_load_table(scan, 0);
	for (uint32 p = 0; p < so->dir->ndata[0]; p++)
	{
		Buffer		buf = ham_read_run_page(index, so->dir, 0, p);
		Page		page;
		uint64	   *codes;
		int			n;
		size_t		k;

		page = BufferGetPage(buf);
		n = HamPageGetOpaque(page)->nentries;
		codes = HamPageCodes(page);
		k = nd_hamming_within(codes, n, so->center, hi, idx, dist);
		for (size_t j = 0; j < k; j++)
		{
			int			d = dist[j];
			int			i = idx[j];

			if (d < lo || d > hi || !ham_filters_pass(so, codes[i]))
				continue;
			ham_found(so, so->run, d, &HamPageTids(page)[i], codes[i]);
			if (so->tbm)
				continue;
			stored++;
			while (hi > lo && stored - so->run[hi].n >= want)
			{
				stored -= so->run[hi].n;
				so->run[hi].n = 0;
				hi--;
			}
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	return hi;
}

/*
 * The distance within which the scan expects `want` rows: those it has
 * returned, those it holds, and for the rest of the run as many as random
 * codes would put there, P(Binomial(64, 1/2) <= r) of the run.
 */
static int
ham_expected_radius(HamScanOpaque so, int64 want)
{
	double		held = (double) so->returned;

	for (int r = Max(so->complete + 1, 0); r < so->max_radius; r++)
	{
		held += (double) so->run[r].n + (double) so->list[r].n;
		if (held + (double) so->dir->nentries * nd_binomial_within(r) >= (double) want)
			return r;
	}
	return so->max_radius;
}

/* Step next_step has ended: its distance is complete. */
static void
ham_step_done(HamScanOpaque so)
{
	so->mih_spent += ham_step_cost(so, so->next_step);
	so->complete = so->next_step;
	so->next_step++;
}

/*
 * Raise so->complete by at least one distance, or run some of a step that
 * hands out rows at the next distance as it finds them (ham_run_step).
 */
static void
ham_advance(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	if (!so->has_run)
	{
		so->complete = so->max_radius;
		return;
	}
	if (so->step_active)
	{
		if (ham_run_step(scan, so->next_step))
			ham_step_done(so);
		return;
	}
	if (!so->flat)
	{
		int			step = so->next_step;
		double		cost = ham_step_cost(so, step);

		/*
		 * Nearest neighbours: when the steps up to the distance at which the
		 * scan expects its first rows would cost more than a flat pass, which
		 * is the case for a code with no near copy, stop stepping now.  The
		 * steps at block distances 0 and 1 always run: they are cheap, and
		 * they find the near copies that make the expectation right.
		 */
		if (so->ordered && step >= 2 * so->dir->layout.nblocks && step <= so->mih_bound)
		{
			int			target = ham_expected_radius(so, HAM_KNN_GUESS);
			double		ahead = 0;

			for (int t = step; t <= target && so->mih_spent + ahead <= so->flat_cost; t++)
				ahead += ham_step_cost(so, t);
			if (so->mih_spent + ahead > so->flat_cost)
				cost = so->flat_cost + 1;
			else if (step == 2 * so->dir->layout.nblocks)
			{
				/*
				 * From here on the steps keep only the entries a little past
				 * the expected distance: most of what they meet is farther.
				 * Past that bound, flat passes take over.
				 */
				so->mih_bound = Min(so->max_radius, target + HAM_KNN_SLACK);
			}
		}
		if (step > so->mih_bound)
			cost = so->flat_cost + 1;
		if (so->mih_spent + cost <= so->flat_cost)
		{
			if (ham_run_step(scan, step))
				ham_step_done(so);
			return;
		}
		/* the steps found entries beyond `complete`: a flat pass finds them again */
		so->flat = true;
		for (int d = so->complete + 1; d < HAM_NLEVELS; d++)
			so->run[d].n = 0;
	}
	so->complete = ham_run_flat(scan, so->complete + 1, so->max_radius, so->flat_want);
	/* a scan that needs another pass needs many more rows than thought */
	so->flat_want = Min(so->flat_want * 16, (int64) work_mem * 1024 / (int64) sizeof(ItemPointerData));
}

static void
ham_load_nulls_page(Page page, void *arg)
{
	HamScanOpaque so = (HamScanOpaque) arg;

	for (int i = 0; i < HamPageGetOpaque(page)->nentries; i++)
		ham_level_add(so, &so->nulls, &HamPageTids(page)[i], 0);
}

static void
ham_load_nulls(IndexScanDesc scan)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	so->nulls_loaded = true;
	ham_list_walk(scan->indexRelation, &so->snap.nulls, ham_load_nulls_page, so);
}

bool
ham_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	HamScanOpaque so = (HamScanOpaque) scan->opaque;

	if (so->none)
		return false;
	if (!so->started)
		ham_scan_start(scan);

	scan->xs_recheck = so->recheck;
	scan->xs_recheckorderby = false;
	for (;;)
	{
		/*
		 * The levels up to `complete`, and the rows a paused step found at
		 * its own distance (the next level) so far.
		 */
		if (so->emit_level <= so->complete ||
			(so->step_active && so->emit_level == so->next_step && !so->emit_list &&
			 so->emit_pos < so->run[so->next_step].n))
		{
			HamLevel   *level = so->emit_list ? &so->list[so->emit_level] : &so->run[so->emit_level];

			if (so->emit_pos < level->n)
			{
				ham_return(scan, &level->tids[so->emit_pos],
						   so->want_codes ? level->codes[so->emit_pos] : 0, false,
						   so->emit_level);
				so->emit_pos++;
				so->returned++;
				return true;
			}
			if (!so->emit_list)
				so->emit_list = true;
			else
			{
				ham_level_free(&so->run[so->emit_level]);
				ham_level_free(&so->list[so->emit_level]);
				memset(&so->run[so->emit_level], 0, sizeof(HamLevel));
				memset(&so->list[so->emit_level], 0, sizeof(HamLevel));
				so->emit_level++;
				so->emit_list = false;
			}
			so->emit_pos = 0;
			continue;
		}
		if (so->complete >= so->max_radius)
		{
			if (!so->with_nulls)
				return false;
			if (!so->nulls_loaded)
			{
				ham_load_nulls(scan);
				so->emit_pos = 0;
			}
			if (so->emit_pos >= so->nulls.n)
				return false;
			ham_return(scan, &so->nulls.tids[so->emit_pos++], 0, true, 0);
			return true;
		}
		ham_advance(scan);
	}
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
	if (so->has_run)
	{
		double		mih = 0;

		for (int t = 0; t < nd_mih_steps_for_radius(so->max_radius) && mih <= so->flat_cost; t++)
			mih += ham_step_cost(so, t);
		if (mih <= so->flat_cost)
		{
			for (int t = 0; t < nd_mih_steps_for_radius(so->max_radius); t++)
			{
				ham_run_step(scan, t);
				CHECK_FOR_INTERRUPTS();
			}
		}
		else
			ham_run_flat(scan, 0, so->max_radius, 0);
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
