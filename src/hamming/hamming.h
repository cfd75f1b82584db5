/*-------------------------------------------------------------------------
 *
 * hamming.h
 *		The hamming index access method: exact radius and nearest-neighbour
 *		search over simhash64 codes by multi-index hashing, in a
 *		log-structured index -- a metapage, sorted runs, and lists of
 *		unsorted entries.
 *
 * src/hamming/README describes the design: the pages, the metapage, flushes
 * and compaction, the locks, recycling and VACUUM; it names the file of each
 * part.  doc/index-hamming.md gives the user's view and the measurements.
 *
 *-------------------------------------------------------------------------
 */
#ifndef HAMMING_AM_H
#define HAMMING_AM_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "nodes/execnodes.h"
#include "access/transam.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"

#include "core/nd_mih.h"
#include "core/nd_permute.h"
#include "pg_compat.h"
#include "type/hamming_ball.h"
#include "type/simhash64.h"

/* Strategy numbers of the operator class (ham_validate.c checks them) */
#define HAM_STRATEGY_WITHIN		1	/* simhash64 <@ hamming_ball */
#define HAM_STRATEGY_EQUAL		2	/* simhash64 = simhash64 (or bigint) */
#define HAM_STRATEGY_DISTANCE	3	/* ORDER BY simhash64 <~> simhash64 */
#define HAM_STRATEGY_COLLIDES	4	/* hamming_ball && hamming_ball */
#define HAM_STRATEGY_WITHIN_BLOCK 5 /* simhash64 <@ hamming_block_ball (0.4) */
#define HAM_NSTRATEGIES			5

#define HAM_METAPAGE_BLKNO		0
#define HAM_MAGIC				0x48414d31	/* "HAM1" */
#define HAM_VERSION				1

/* Page kinds, in HamPageOpaque.kind */
#define HAM_KIND_META			1
#define HAM_KIND_RUN_HEADER		2
#define HAM_KIND_RUN_DIR		3
#define HAM_KIND_RUN_DATA		4
#define HAM_KIND_LIST			5	/* pending, sealed or nulls list */
#define HAM_KIND_FREE			6	/* recycled, in the free space map */
#define HAM_KIND_RUN_DIR_INDEX	7	/* lists a table's directory pages */
#define HAM_KIND_MAX			7

#define HAM_PAGE_ID				0xFF8A	/* for pg_filedump and the like */

typedef struct HamPageOpaqueData
{
	uint32		epoch;			/* run or list this page belongs to */
	BlockNumber next;			/* list pages: next page of the list */
	uint16		kind;
	uint16		nentries;		/* data and list pages: entries used */
	uint16		table;			/* run data and directory pages; list pages:
								 * HamListPageCleanups */
	uint16		page_id;
} HamPageOpaqueData;

typedef HamPageOpaqueData *HamPageOpaque;

#define HamPageGetOpaque(page) ((HamPageOpaque) PageGetSpecialPointer(page))

/*
 * A list page counts the times VACUUM removed entries from it (wrapping),
 * so that a backend that cached the entries it read (ham_cache.c) can tell
 * the page it stopped at was compacted since.
 */
#define HamListPageCleanups(opaque) ((opaque)->table)

/*
 * Data and list pages hold a fixed-capacity array of codes followed by one
 * of TIDs, so that appending never moves anything.
 */
#define HAM_PAGE_CONTENT_OFFSET MAXALIGN(SizeOfPageHeaderData)
#define HAM_PAGE_CONTENT_SIZE	(BLCKSZ - HAM_PAGE_CONTENT_OFFSET - \
								 MAXALIGN(sizeof(HamPageOpaqueData)))
#define HAM_ENTRY_SIZE			(sizeof(uint64) + sizeof(ItemPointerData))
#define HAM_PAGE_CAPACITY		((int) (HAM_PAGE_CONTENT_SIZE / HAM_ENTRY_SIZE))

#define HamPageCodes(page)		((uint64 *) ((char *) (page) + HAM_PAGE_CONTENT_OFFSET))
#define HamPageTids(page)		((ItemPointerData *) ((char *) (page) + HAM_PAGE_CONTENT_OFFSET + \
													  HAM_PAGE_CAPACITY * sizeof(uint64)))

/* A directory entry: the leading 32 bits of a data page's first key */
typedef struct HamDirEntry
{
	uint32		first;
	BlockNumber blkno;
} HamDirEntry;

#define HAM_DIR_CAPACITY		((int) (HAM_PAGE_CONTENT_SIZE / sizeof(HamDirEntry)))
#define HamPageDir(page)		((HamDirEntry *) ((char *) (page) + HAM_PAGE_CONTENT_OFFSET))

/*
 * A backend caches a pending list once it has walked it this many times
 * over (why: ham_cache.c); the cost estimate prices array searches by it.
 */
#define HAM_LIST_CACHE_AFTER	128

/* A list of pages (pending, sealed, nulls) as the metapage records it */
typedef struct HamList
{
	BlockNumber head;			/* InvalidBlockNumber when empty */
	BlockNumber tail;
	uint32		epoch;
	uint32		npages;
	uint64		nentries;		/* of every page but the tail, which counts
								 * as one (ham_list_entries) */
} HamList;

/*
 * A run as the metapage lists it.  The index holds up to HAM_MAX_RUNS runs,
 * oldest (and, as compaction keeps them, largest) first: the first in the
 * metapage's run_header/run_epoch/run_entries, where 0.2 kept its only
 * run, the others in more_runs.
 */
typedef struct HamRunRef
{
	BlockNumber header;
	uint32		epoch;
	uint64		nentries;		/* live: as written, less what VACUUM removed */
} HamRunRef;

#define HAM_MAX_RUNS			48

typedef struct HamMetaPageData
{
	uint32		magic;
	uint32		version;
	uint32		nblocks;		/* m: tables per run */
	uint32		next_epoch;		/* epochs of runs and lists come from here */
	BlockNumber run_header;		/* InvalidBlockNumber: no run yet */
	uint32		run_epoch;
	uint64		run_entries;
	HamList		pending;
	HamList		sealed;			/* being flushed; empty otherwise */
	HamList		nulls;
	/* retired pages are recyclable once this is old enough (README) */
	FullTransactionId retired_xid;
	uint32		flushes;		/* flushes done, for the statistics */
	uint32		insert_flushes;	/* those an inserting session did itself */
	/*
	 * Bumped when a VACUUM index pass starts and when it ends, so that
	 * backends drop cached list entries before any is removed (ham_cache.c).
	 */
	uint32		list_cleanups;
	/* added in 0.3; an index built by 0.2 has zeros here */
	uint32		flags;			/* HAM_META_* */
	uint32		nmore_runs;		/* runs after the first, in more_runs */
	uint32		compactions;	/* for the statistics */
	/*
	 * 0: runs have a table per block; else (0.4 on) only the table that
	 * leads with this block (from 1), the `only_block` option.  0.2 and 0.3
	 * wrote 0 here.
	 */
	uint32		only_block;
	HamRunRef	more_runs[HAM_MAX_RUNS - 1];	/* oldest first */
} HamMetaPageData;

/*
 * A VACUUM pass over the runs began and has not ended: their tables may
 * hold different dead entries (README, "VACUUM").
 */
#define HAM_META_RUN_UNEVEN		0x0001
/*
 * Pages may belong to no run or list (a flush or a compaction retired
 * them, or failed while writing them): recycling has work to do.
 */
#define HAM_META_GARBAGE		0x0002

#define HamPageGetMeta(page)	((HamMetaPageData *) PageGetContents(page))

/*
 * The run header: per table, its data page count and its directory pages
 * (each with the `first` of its first entry).  A run too large for one
 * header page to list every directory page (about 1,000 of them: some 600M
 * entries over all tables) has two levels: the header lists, per table,
 * directory *index* pages (HAM_KIND_RUN_DIR_INDEX), each listing up to
 * HAM_DIR_CAPACITY directory pages in the same format as a directory page
 * lists data pages -- room for about 6 * 10^11 entries.
 */
typedef struct HamRunTable
{
	uint32		ndata;			/* data pages */
	uint32		ndir;			/* pages the header lists for the table:
								 * directory pages, or index pages */
	uint32		dir_offset;		/* into HamRunHeader.dirs */
} HamRunTable;

#define HAM_RUN_DIRS_FLAT		0	/* 0.2's only layout */
#define HAM_RUN_DIRS_INDEXED	2

#define HAM_MAX_TABLES			8
#define HAM_MIN_TABLES			3

/*
 * A run of an index with the `only_block` option has one table: its header
 * says nblocks 1, and keeps the cut in the last slot of `tables`, unused by
 * a run of one table: the blocks (3 to 8) in its ndata, the block its
 * table leads with (from 0) in its ndir.
 */
#define HAM_RUN_CUT_SLOT		(HAM_MAX_TABLES - 1)

typedef struct HamRunHeader
{
	uint32		nblocks;		/* tables: the blocks, or 1 (above) */
	uint32		dir_levels;		/* HAM_RUN_DIRS_FLAT or _INDEXED */
	uint64		nentries;
	HamRunTable tables[HAM_MAX_TABLES];
	uint32		ndirs;
	HamDirEntry dirs[FLEXIBLE_ARRAY_MEMBER];
} HamRunHeader;

#define HAM_RUN_MAX_DIRS		((int) ((HAM_PAGE_CONTENT_SIZE - offsetof(HamRunHeader, dirs)) / \
										sizeof(HamDirEntry)))

#define HamPageGetRunHeader(page) ((HamRunHeader *) ((char *) (page) + HAM_PAGE_CONTENT_OFFSET))

/*
 * Whether a run cut into `nblocks` blocks (only_block: 0, or its one table's
 * block) has the table that leads with block `block` (from 1) of a block
 * ball of `blocks`: then the ball is one probe of it.
 */
static inline bool
ham_run_has_block_table(int nblocks, int only_block, int block, int blocks)
{
	return blocks == nblocks && (only_block == 0 || only_block == block);
}

/*
 * The layout of a run's tables: a table per block of `nblocks`, or with
 * only_block (from 1) that block's table alone.
 */
static inline void
ham_run_layout(nd_layout *l, int nblocks, int only_block)
{
	if (only_block > 0)
		nd_layout_init_one(l, nblocks, only_block - 1);
	else
		nd_layout_init(l, nblocks);
}

/* Reloptions */
typedef struct HamOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			blocks;			/* 0: the default, 4 */
	int			pending_limit;	/* kB; -1: the default */
	bool		background_merge;	/* inserts leave flushes to a worker */
	int			only_block;		/* 0: a table per block; else only the
								 * table of this block (from 1) */
} HamOptions;

#define HAM_DEFAULT_PENDING_LIMIT_KB	1024

/* Build phases in pg_stat_progress_create_index (1 is "initializing") */
#define PROGRESS_HAMMING_PHASE_SORT		2
#define PROGRESS_HAMMING_PHASE_WRITE	3

/* A run as a scan or the run writer reads it: its directories, in memory */
typedef struct HamRunDir
{
	uint32		epoch;
	nd_layout	layout;			/* of its tables (ham_run_layout) */
	int			cut;			/* the blocks its tables' blocks are of */
	int			only_block;		/* 0, or the block of its one table (from
								 * 1), as in the metapage */
	uint64		nentries;
	uint32		ndata[HAM_MAX_TABLES];

	/*
	 * A table's directory, one entry per data page, filled a directory page
	 * at a time as searches need it (dloaded); complete once every page is.
	 * NULL until the table's directory pages are listed.
	 */
	uint64	   *first[HAM_MAX_TABLES];	/* widened to search with
										 * nd_sorted_range() */
	BlockNumber *blkno[HAM_MAX_TABLES];
	Buffer	   *recent[HAM_MAX_TABLES]; /* the buffer each page was last read
										 * from (ham_read_run_page) */
	bool		complete[HAM_MAX_TABLES];
	/* the table's directory pages: the first key and block of each */
	uint32		ndirp[HAM_MAX_TABLES];
	uint64	   *dfirst[HAM_MAX_TABLES];
	BlockNumber *dblkno[HAM_MAX_TABLES];
	bool	   *dloaded[HAM_MAX_TABLES];
	MemoryContext ctx;			/* where the directories are loaded */
	/* from the header, to list a table's directory pages */
	HamRunHeader *header;
} HamRunDir;

/* The metapage as read at the start of a scan */
/*
 * Entries the first flat pass of a nearest-neighbour scan keeps: enough for
 * the usual LIMIT; each further pass keeps 16 times more (up to work_mem).
 * The cost estimate relies on it too.
 */
#define HAM_FLAT_FIRST_WANT	100

typedef struct HamSnapshot
{
	int			nblocks;
	int			only_block;		/* HamMetaPageData.only_block */
	int			nruns;
	HamRunRef	runs[HAM_MAX_RUNS]; /* oldest first */
	uint64		run_entries;	/* of every run */
	HamList		pending;
	HamList		sealed;
	HamList		nulls;
	uint32		list_cleanups;
	uint32		flags;
	uint32		flushes;
	uint32		insert_flushes;
	uint32		compactions;
} HamSnapshot;

/* The entries of the pending and sealed lists: what every scan reads whole */
static inline uint64
ham_unflushed_entries(const HamSnapshot *snap)
{
	return snap->pending.nentries + snap->sealed.nentries;
}

/* ham_handler.c: the handler, options and indexed types */
extern void ham_init_reloptions(void);
extern bytea *ham_options(Datum reloptions, bool validate);
extern int	ham_option_blocks(Relation index);
extern int	ham_option_only_block(Relation index);
extern bool ham_option_background_merge(Relation index);
extern uint64 ham_flush_threshold(Relation index);
extern bool ham_indexes_balls(Relation index);
extern bool ham_is_hamming_index(Relation rel);

/* ham_open.c: the index an SQL function is given */
extern void ham_check_owner(Oid indexoid);
extern Relation ham_open_index(Oid indexoid, LOCKMODE lockmode);
extern List *ham_leaf_indexes(Oid indexoid);

/* ham_page.c: pages */
extern void ham_init_opaque(HamPageOpaque opaque, uint16 kind, uint32 epoch, uint16 table);
extern void ham_init_page(Page page, uint16 kind, uint32 epoch, uint16 table);
extern Buffer ham_new_buffer(Relation index);
extern Buffer ham_read_page(Relation index, BlockNumber blkno, uint16 kind, uint32 epoch,
							 int table);
extern void ham_check_page(Relation index, Buffer buf, uint16 kind, uint32 epoch, int table);
extern bool ham_page_live(const HamSnapshot *snap, Page page);

/* ham_wal.c: the page changes WAL-logged by hand */
extern void ham_page_append(Relation index, Buffer buf, uint64 code, ItemPointer tid);
extern void ham_page_set_free(Relation index, Buffer buf);

/* ham_meta.c: the metapage */
extern void ham_empty_list(HamList *list, uint32 epoch);
extern void ham_init_meta_page(Page page, int nblocks, int only_block);
extern void ham_meta_check(Relation index, HamMetaPageData *meta);
extern int	ham_meta_get_runs(Relation index, const HamMetaPageData *meta, HamRunRef *runs);
extern void ham_meta_set_runs(HamMetaPageData *meta, const HamRunRef *runs, int n);
extern void ham_meta_snapshot(Relation index, const HamMetaPageData *meta, HamSnapshot *snap);
extern void ham_read_snapshot(Relation index, HamSnapshot *snap);
extern void ham_meta_set_flags(Relation index, uint32 set, uint32 clear, bool bump_cleanups);

/* ham_list.c: the pending, sealed and nulls lists */
#define HAM_LIST_PENDING	0
#define HAM_LIST_NULLS		1

extern void ham_list_append(Relation index, int which, uint64 code, ItemPointer tid,
							HamSnapshot *snap);

/* Called with each page of a list, share-locked */
typedef void (*HamListVisit) (Page page, void *arg);
extern void ham_list_walk(Relation index, const HamList *list, HamListVisit visit, void *arg);
extern uint64 ham_list_entries(Relation index, const HamList *list);
extern void ham_list_count_page(Relation index, BlockNumber blkno, BlockNumber *visited,
								BlockNumber *limit);

/*
 * The code an index value is stored under: the value itself (simhash64),
 * or a ball's center (hamming_ball, the exclusion constraint's operator
 * class; the radius is rechecked on the row).
 */
static inline uint64
ham_value_code(bool balls, Datum value)
{
	return balls ? DatumGetHammingBallP(value)->center : DatumGetSimhash64(value);
}

/* ham_run_writer.c: writing a run */
typedef struct HamRunWriter HamRunWriter;

extern HamRunWriter *ham_run_writer_begin(Relation index, int nblocks, int only_block,
										  uint32 epoch, int work_mem_kb);
extern void ham_run_writer_add(HamRunWriter *w, uint64 code, ItemPointer tid);
extern BlockNumber ham_run_writer_finish(HamRunWriter *w, HamRunDir **old, int nold,
										 uint64 *nentries, bool *uneven);
extern void ham_run_writer_abandon(HamRunWriter *w);
extern BlockNumber ham_run_write(Relation index, int nblocks, int only_block, uint32 epoch,
								 const HamList *sealed,
								 const HamRunRef *runs, int nold, bool uneven, uint64 *nentries,
								 int64 *added);
extern int	ham_debug_run_header_dirs;
extern int	ham_debug_run_page_delay;
extern void ham_init_run_gucs(void);

/* ham_run_reader.c: reading a run */
extern void ham_run_dir_open(Relation index, BlockNumber header, uint32 epoch,
							 HamRunDir *dir);
extern void ham_run_dir_load_table(Relation index, HamRunDir *dir, int table);
extern int64 ham_run_pages(const HamRunDir *dir);
extern void ham_run_table_pages(Relation index, HamRunDir *dir, int table,
								uint32 lo, uint32 hi, uint32 *pbegin, uint32 *pend);
extern Buffer ham_read_run_page(Relation index, HamRunDir *dir, int table, uint32 page);
extern uint64 ham_run_page_first(const HamRunDir *dir, int table, uint32 page);
extern void ham_prefetch_run_page(const HamRunDir *dir, int table, uint32 page, uint64 key);
extern uint64 ham_run_page_next(const HamRunDir *dir, int table, uint32 page,
								 const uint64 *keys, uint32 nentries);

/* ham_cache.c: run directories kept across scans */
typedef struct HamDirRef HamDirRef;

extern HamDirRef *ham_dir_acquire(Relation index, const HamSnapshot *snap, int run);
extern HamRunDir *ham_dir_of(HamDirRef *ref);
extern void ham_dir_release(HamDirRef *ref);

/* Called with each entry of a list within the radius searched */
typedef void (*HamListHit) (uint64 code, ItemPointer tid, int distance, void *arg);
extern bool ham_list_cache_search(Relation index, const HamSnapshot *snap, const HamList *list,
								  uint64 center, int radius, HamListHit hit, void *arg);

/* ham_build.c */
extern IndexBuildResult *ham_build(Relation heap, Relation index, IndexInfo *indexInfo);
extern void ham_buildempty(Relation index);

/* ham_insert.c */
extern bool ham_insert(Relation index, Datum *values, bool *isnull,
					   ItemPointer ht_ctid, Relation heapRel,
					   IndexUniqueCheck checkUnique, bool indexUnchanged,
					   IndexInfo *indexInfo);

/* ham_locks.c: the maintenance locks, and the worker's yield */
extern void ham_flush_lock(Relation index);
extern bool ham_flush_trylock(Relation index);
extern void ham_flush_unlock(Relation index);
extern void ham_flushing_lock(Relation index);
extern void ham_flushing_unlock(Relation index);
extern bool ham_flush_running(Relation index);
extern void ham_compact_lock(Relation index);
extern bool ham_compact_trylock(Relation index);
extern void ham_compact_unlock(Relation index);
extern void ham_maintenance_lock(Relation index);
extern void ham_maintenance_unlock(Relation index);
/*
 * The background worker's lock on the index: not a fast-path mode, so that
 * LockHasWaitersRelation can see who waits for it.
 */
#define HAM_WORKER_LOCKMODE		ShareUpdateExclusiveLock
extern bool ham_yields;
extern void ham_maybe_yield(Relation index);

/* ham_recycle.c: recycling retired pages */
extern void ham_recycle(Relation index);
extern int64 ham_meta_list_pages(const HamSnapshot *snap);
extern int64 ham_unused_pages(Relation index, const HamSnapshot *snap);

/* ham_compact.c: compaction */
extern int	ham_compact(Relation index, bool wait);
extern bool ham_compact_wanted(Relation index, const HamSnapshot *snap);

/* ham_flush.c: flushes */
extern bool ham_flush_and_compact(Relation index, bool wait, bool by_insert, int64 *flushed);
extern bool ham_flush_locked(Relation index, bool by_insert, int64 *flushed);
extern bool ham_flush_wanted(Relation index, const HamSnapshot *snap, bool vacuuming);
extern bool ham_brake_wanted(Relation index, const HamSnapshot *snap);
extern bool ham_flush_blocked(Relation index, const HamSnapshot *snap);

/* ham_worker.c: flushes and compactions in a background worker; the brake */
extern int	ham_max_merge_workers;
extern void ham_init_worker_gucs(void);
extern void ham_flush_after_insert(Relation index, const HamSnapshot *snap);
extern PGDLLEXPORT void ham_merge_worker_main(Datum arg);

/* ham_scan.c */
extern IndexScanDesc ham_beginscan(Relation r, int nkeys, int norderbys);
extern void ham_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					   ScanKey orderbys, int norderbys);
extern bool ham_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 ham_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void ham_endscan(IndexScanDesc scan);
extern bool ham_canreturn(Relation index, int attno);

/* ham_vacuum.c */
extern IndexBulkDeleteResult *ham_bulkdelete(IndexVacuumInfo *info,
											 IndexBulkDeleteResult *stats,
											 IndexBulkDeleteCallback callback,
											 void *callback_state);
extern IndexBulkDeleteResult *ham_vacuumcleanup(IndexVacuumInfo *info,
												IndexBulkDeleteResult *stats);

/* ham_cost.c */
extern void ham_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
							 Cost *indexStartupCost, Cost *indexTotalCost,
							 Selectivity *indexSelectivity, double *indexCorrelation,
							 double *indexPages);

/* ham_validate.c */
extern bool ham_validate(Oid opclassoid);

#endif							/* HAMMING_AM_H */
