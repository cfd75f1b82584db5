/*-------------------------------------------------------------------------
 *
 * ham_cache.c
 *		Backend-local caches of each hamming index's run directories and
 *		pending list, so that a backend running many short scans (the
 *		exclusion constraint's check of every inserted row, a pool
 *		connection's lookups) reads a run's directory pages once per run
 *		rather than once per scan (and only those its searches need), and
 *		of the pending list only the entries added since its last scan,
 *		searching the rest in memory by multi-index hashing (nd_codeset.h).
 *
 * README, "The backend caches", gives when each cache is valid.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "core/nd_codeset.h"
#include "hamming/hamming.h"

struct HamDirRef
{
	RelFileLocator node;
	BlockNumber run_header;
	MemoryContext ctx;			/* holds this struct and the directory */
	HamRunDir	dir;
	int			refcount;
	uint64		generation;		/* transaction generation of the refcount */
	bool		retired;		/* out of the hash table */
	dlist_node	retired_node;
};

typedef struct HamListCache
{
	RelFileLocator node;
	uint32		epoch;
	uint32		list_cleanups;
	bool		valid;			/* false while being extended */
	BlockNumber last_blkno;		/* the page read last, or invalid */
	uint16		last_count;		/* its entries read */
	uint16		last_cleanups;	/* its count of compactions then */
	MemoryContext ctx;
	nd_codeset	codes;
	ItemPointerData *tids;
	uint32		tids_cap;
	Size		charge;			/* its memory, counted in ham_list_cache_bytes */
	uint64		last_used;		/* ham_list_cache_clock when last searched */
} HamListCache;

/*
 * Lists cached per index: the pending list, and the sealed list it becomes
 * when a flush seals it (same epoch, same pages), which every search reads
 * whole while the flush writes its run.
 */
#define HAM_LIST_CACHES		2

typedef struct HamDirSlot
{
	Oid			indexoid;
	HamDirRef  *refs[HAM_MAX_RUNS]; /* NULL: no directory cached */
	HamListCache *lists[HAM_LIST_CACHES];	/* NULL: none cached there */
	double		list_walked;	/* entries searched without a cache since */
} HamDirSlot;

static HTAB *ham_dir_cache = NULL;
static MemoryContext ham_cache_ctx = NULL;
static dlist_head ham_retired = DLIST_STATIC_INIT(ham_retired);

/* Bumped at every top-level transaction end: older references are void. */
static uint64 ham_generation = 1;

/* The memory of every cached list, and the clock of their last use */
static Size ham_list_cache_bytes = 0;
static uint64 ham_list_cache_clock = 0;

static void
ham_ref_free(HamDirRef *ref)
{
	if (ref->retired)
		dlist_delete(&ref->retired_node);
	MemoryContextDelete(ref->ctx);
}

/* Take a directory out of its slot; free it unless a scan holds it. */
static void
ham_ref_retire(HamDirSlot *slot, int i)
{
	HamDirRef  *ref = slot->refs[i];

	slot->refs[i] = NULL;
	if (ref->refcount > 0 && ref->generation == ham_generation)
	{
		ref->retired = true;
		dlist_push_tail(&ham_retired, &ref->retired_node);
	}
	else
		MemoryContextDelete(ref->ctx);
}

static void
ham_list_cache_free_one(HamDirSlot *slot, int i)
{
	if (slot->lists[i])
	{
		ham_list_cache_bytes -= slot->lists[i]->charge;
		MemoryContextDelete(slot->lists[i]->ctx);
		pfree(slot->lists[i]);
	}
	slot->lists[i] = NULL;
}

static void
ham_list_cache_free(HamDirSlot *slot)
{
	for (int i = 0; i < HAM_LIST_CACHES; i++)
		ham_list_cache_free_one(slot, i);
}

/* Forget an index: its directory (once unused) and its list. */
static void
ham_slot_drop(HamDirSlot *slot)
{
	Oid			indexoid = slot->indexoid;

	for (int i = 0; i < HAM_MAX_RUNS; i++)
		if (slot->refs[i])
			ham_ref_retire(slot, i);
	ham_list_cache_free(slot);
	hash_search(ham_dir_cache, &indexoid, HASH_REMOVE, NULL);
}

static void
ham_cache_relcache_callback(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS seq;
	HamDirSlot *slot;

	if (ham_dir_cache == NULL)
		return;
	if (OidIsValid(relid))
	{
		slot = hash_search(ham_dir_cache, &relid, HASH_FIND, NULL);
		if (slot)
			ham_slot_drop(slot);
		return;
	}
	hash_seq_init(&seq, ham_dir_cache);
	while ((slot = hash_seq_search(&seq)) != NULL)
		ham_slot_drop(slot);
}

static void
ham_cache_xact_callback(XactEvent event, void *arg)
{
	dlist_mutable_iter iter;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT &&
		event != XACT_EVENT_PREPARE)
		return;
	/* no scan outlives its transaction: forget every reference */
	ham_generation++;
	dlist_foreach_modify(iter, &ham_retired)
	{
		HamDirRef  *ref = dlist_container(HamDirRef, retired_node, iter.cur);

		ham_ref_free(ref);
	}
}

static void
ham_cache_init(void)
{
	HASHCTL		ctl;

	ham_cache_ctx = AllocSetContextCreate(TopMemoryContext, "hamming index cache",
										  ALLOCSET_SMALL_SIZES);
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(HamDirSlot);
	ctl.hcxt = ham_cache_ctx;
	ham_dir_cache = hash_create("hamming run directories", 16, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	CacheRegisterRelcacheCallback(ham_cache_relcache_callback, (Datum) 0);
	RegisterXactCallback(ham_cache_xact_callback, NULL);
}

/* The cache's slot for an index, made empty if it has none. */
static HamDirSlot *
ham_slot_of(Relation index)
{
	Oid			indexoid = RelationGetRelid(index);
	HamDirSlot *slot;
	bool		found;

	if (ham_dir_cache == NULL)
		ham_cache_init();
	slot = hash_search(ham_dir_cache, &indexoid, HASH_ENTER, &found);
	if (!found)
	{
		memset(slot->refs, 0, sizeof(slot->refs));
		memset(slot->lists, 0, sizeof(slot->lists));
		slot->list_walked = 0;
	}
	return slot;
}

/*
 * The directory of the snapshot's run `run`, from the cache or read now;
 * the caller releases it with ham_dir_release().  Directories of runs the
 * snapshot no longer lists (compacted away) leave the cache.
 */
HamDirRef *
ham_dir_acquire(Relation index, const HamSnapshot *snap, int run)
{
	HamDirSlot *slot = ham_slot_of(index);
	const HamRunRef *want = &snap->runs[run];
	HamDirRef  *ref;
	MemoryContext ctx,
				old;
	int			free_slot = -1;

	for (int i = 0; i < HAM_MAX_RUNS; i++)
	{
		bool		listed = false;

		ref = slot->refs[i];
		if (ref == NULL)
			continue;
		if (RelFileLocatorEquals(ref->node, nd_rel_locator(index)) &&
			ref->run_header == want->header && ref->dir.epoch == want->epoch)
		{
			if (ref->generation != ham_generation)
			{
				ref->generation = ham_generation;
				ref->refcount = 0;
			}
			ref->refcount++;
			return ref;
		}
		if (RelFileLocatorEquals(ref->node, nd_rel_locator(index)))
			for (int r = 0; r < snap->nruns && !listed; r++)
				listed = ref->run_header == snap->runs[r].header &&
					ref->dir.epoch == snap->runs[r].epoch;
		if (!listed)
			ham_ref_retire(slot, i);
	}
	for (int i = 0; i < HAM_MAX_RUNS && free_slot < 0; i++)
		if (slot->refs[i] == NULL)
			free_slot = i;
	/* the snapshot lists at most HAM_MAX_RUNS runs, all others retired */
	if (free_slot < 0)
		elog(ERROR, "no free directory slot for hamming index \"%s\"",
			 RelationGetRelationName(index));

	ctx = AllocSetContextCreate(ham_cache_ctx, "hamming run directory",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(ctx);
	PG_TRY();
	{
		ref = palloc0(sizeof(HamDirRef));
		ham_run_dir_open(index, want->header, want->epoch, &ref->dir);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(ctx);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	ref->node = nd_rel_locator(index);
	ref->run_header = want->header;
	ref->ctx = ctx;
	ref->refcount = 1;
	ref->generation = ham_generation;
	slot->refs[free_slot] = ref;
	return ref;
}

HamRunDir *
ham_dir_of(HamDirRef *ref)
{
	return &ref->dir;
}

void
ham_dir_release(HamDirRef *ref)
{
	if (ref->generation != ham_generation)
		return;					/* forgotten at the end of a transaction */
	Assert(ref->refcount > 0);
	ref->refcount--;
	if (ref->refcount == 0 && ref->retired)
		ham_ref_free(ref);
}

/* nd_codeset's allocator: the list cache's memory context */
static void *
ham_list_cache_realloc(void *ptr, size_t size, void *arg)
{
	if (size == 0)
	{
		pfree(ptr);
		return NULL;
	}
	if (ptr == NULL)
		return MemoryContextAllocHuge((MemoryContext) arg, size);
	return repalloc_huge(ptr, size);
}

/* Empty the cache for the list the snapshot names. */
static void
ham_list_cache_reset(HamListCache *c, Relation index, const HamSnapshot *snap,
					 const HamList *list)
{
	MemoryContextReset(c->ctx);
	c->node = nd_rel_locator(index);
	c->epoch = list->epoch;
	c->list_cleanups = snap->list_cleanups;
	c->last_blkno = InvalidBlockNumber;
	c->last_count = 0;
	c->last_cleanups = 0;
	nd_codeset_init(&c->codes, snap->nblocks, ham_list_cache_realloc, c->ctx);
	c->tids = NULL;
	c->tids_cap = 0;
	c->valid = true;
}

/* Read the entries added to the list since the cache last read it. */
static void
ham_list_cache_extend(HamListCache *c, Relation index, const HamList *list)
{
	BlockNumber blkno = c->last_blkno;
	int			from = c->last_count;
	BlockNumber visited = 0;
	BlockNumber limit = list->npages;

	if (blkno == InvalidBlockNumber)
	{
		blkno = list->head;
		from = 0;
	}
	c->valid = false;			/* until the end: an error leaves it unusable */
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;
		HamPageOpaque opaque;
		int			n;

		ham_list_count_page(index, blkno, &visited, &limit);
		buf = ham_read_page(index, blkno, HAM_KIND_LIST, list->epoch, -1);
		page = BufferGetPage(buf);
		opaque = HamPageGetOpaque(page);
		n = opaque->nentries;

		if (blkno == c->last_blkno && HamListPageCleanups(opaque) != c->last_cleanups)
		{
			/* compacted since: the entries cached from it are not where they were */
			UnlockReleaseBuffer(buf);
			return;
		}
		if (c->codes.n + (uint32) Max(n - from, 0) > c->tids_cap)
		{
			uint32		cap = Max(Max(c->tids_cap * 2, 1024), c->codes.n + (uint32) n);

			c->tids = ham_list_cache_realloc(c->tids, sizeof(ItemPointerData) * cap, c->ctx);
			c->tids_cap = cap;
		}
		for (int i = from; i < n; i++)
		{
			c->tids[c->codes.n] = HamPageTids(page)[i];
			if (!nd_codeset_add(&c->codes, HamPageCodes(page)[i]))
				elog(ERROR, "hamming list cache is full");
		}
		c->last_blkno = blkno;
		c->last_count = (uint16) n;
		c->last_cleanups = HamListPageCleanups(opaque);
		blkno = opaque->next;
		from = 0;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	c->valid = true;
}

typedef struct HamListCacheHits
{
	HamListCache *c;
	HamListHit	hit;
	void	   *arg;
} HamListCacheHits;

static void
ham_list_cache_visit(uint32 entry, int distance, void *arg)
{
	HamListCacheHits *h = (HamListCacheHits *) arg;

	h->hit(h->c->codes.codes[entry], &h->c->tids[entry], distance, h->arg);
}

/*
 * Free the other cached lists, least recently used first, until list
 * `keep` of this slot can take `need` bytes within the budget.
 */
static void
ham_list_cache_make_room(HamDirSlot *mine, int keep, double need, double budget)
{
	Size		own = mine->lists[keep] ? mine->lists[keep]->charge : 0;

	while ((double) (ham_list_cache_bytes - own) + need > budget)
	{
		HASH_SEQ_STATUS seq;
		HamDirSlot *slot,
				   *victim = NULL;
		int			victim_i = 0;

		hash_seq_init(&seq, ham_dir_cache);
		while ((slot = hash_seq_search(&seq)) != NULL)
			for (int i = 0; i < HAM_LIST_CACHES; i++)
				if (slot->lists[i] && (slot != mine || i != keep) &&
					(victim == NULL || slot->lists[i]->last_used < victim->lists[victim_i]->last_used))
				{
					victim = slot;
					victim_i = i;
				}
		if (victim == NULL)
			break;
		ham_list_cache_free_one(victim, victim_i);
	}
}

/*
 * The slot's cache for a list: the one of its epoch, else an empty one,
 * else the least recently used (the list before the last seal).
 */
static int
ham_list_cache_pick(HamDirSlot *slot, Relation index, const HamList *list)
{
	int			pick = -1;

	for (int i = 0; i < HAM_LIST_CACHES; i++)
	{
		HamListCache *c = slot->lists[i];

		if (c && c->epoch == list->epoch && RelFileLocatorEquals(c->node, nd_rel_locator(index)))
			return i;
	}
	for (int i = 0; i < HAM_LIST_CACHES; i++)
		if (slot->lists[i] == NULL)
			return i;
	for (int i = 0; i < HAM_LIST_CACHES; i++)
		if (pick < 0 || slot->lists[i]->last_used < slot->lists[pick]->last_used)
			pick = i;
	return pick;
}

/*
 * Searches of a list read it page by page until they have read this many
 * times its entries; then the backend builds its cache.  Building costs
 * about as much as this many reads (a list of 60,000 entries: 20 ms against
 * 0.12 ms a read, measured on 2 cores), so a backend that searches an index
 * a few times (a new connection's query) never pays for it, and one that
 * searches it on and on (the constraint's check of each row of a COPY) pays
 * for it early: the rule that keeps either choice within about twice the
 * cost of the best one in hindsight.  The count, HAM_LIST_CACHE_AFTER, is
 * in hamming.h.
 */

/*
 * The memory the lists a backend caches take together: work_mem, or what
 * the index's own lists take at their largest if that is more -- a pending
 * list a third past its flush threshold (the brake's bound) beside a sealed
 * one at the threshold, both set by the index's pending_limit -- up to
 * maintenance_work_mem.  Under work_mem alone, the default 4MB, a list
 * past some 70,000 entries (the default threshold is 75,000) and every
 * sealed list would be read page by page by each scan: the exclusion
 * constraint's check of every row of a COPY.
 */
static double
ham_list_cache_budget(Relation index, double bytes_per_entry)
{
	double		lists = (double) ham_flush_threshold(index) * (2.0 + 1.0 / 3.0) * bytes_per_entry;

	return Max((double) work_mem * 1024.0, Min(lists, (double) maintenance_work_mem * 1024.0));
}

/*
 * Search a list through the backend's cache of it, reading only what was
 * added since; false (nothing searched) when the list is not to be cached:
 * it would not fit in work_mem, or the backend has not searched it enough
 * yet (HAM_LIST_CACHE_AFTER).
 */
bool
ham_list_cache_search(Relation index, const HamSnapshot *snap, const HamList *list,
					  uint64 center, int radius, HamListHit hit, void *arg)
{
	HamDirSlot *slot = ham_slot_of(index);
	HamListCache *c;
	HamListCacheHits h;
	int			i;
	double		bytes_per_entry = sizeof(ItemPointerData) + sizeof(uint64) +
		3 * sizeof(uint32) * snap->nblocks;
	double		need = (double) list->npages * HAM_PAGE_CAPACITY * bytes_per_entry;
	double		budget = ham_list_cache_budget(index, bytes_per_entry);

	if (need > budget)
	{
		ham_list_cache_free(slot);
		return false;
	}
	i = ham_list_cache_pick(slot, index, list);
	c = slot->lists[i];
	if (c == NULL && slot->list_walked < HAM_LIST_CACHE_AFTER * (double) list->nentries)
	{
		slot->list_walked += (double) list->nentries;
		return false;
	}
	slot->list_walked = 0;
	ham_list_cache_make_room(slot, i, need, budget);
	if (c == NULL)
	{
		MemoryContext ctx = AllocSetContextCreate(ham_cache_ctx, "hamming list cache",
												  ALLOCSET_DEFAULT_SIZES);

		c = MemoryContextAllocZero(ham_cache_ctx, sizeof(HamListCache));
		c->ctx = ctx;
		slot->lists[i] = c;
		c->valid = false;
	}
	if (!c->valid || !RelFileLocatorEquals(c->node, nd_rel_locator(index)) || c->epoch != list->epoch ||
		c->list_cleanups != snap->list_cleanups || c->codes.layout.nblocks != snap->nblocks)
		ham_list_cache_reset(c, index, snap, list);
	ham_list_cache_extend(c, index, list);
	if (!c->valid)
	{
		/* the page it stopped at was compacted: read the list again */
		ham_list_cache_reset(c, index, snap, list);
		ham_list_cache_extend(c, index, list);
		if (!c->valid)
			return false;
	}
	ham_list_cache_bytes -= c->charge;
	c->charge = MemoryContextMemAllocated(c->ctx, true);
	ham_list_cache_bytes += c->charge;
	c->last_used = ++ham_list_cache_clock;

	h.c = c;
	h.hit = hit;
	h.arg = arg;
	nd_codeset_search(&c->codes, center, radius, ham_list_cache_visit, &h);
	return true;
}
