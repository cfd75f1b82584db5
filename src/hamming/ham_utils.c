/*-------------------------------------------------------------------------
 *
 * ham_utils.c
 *		The hamming access method's handler, options, pages, metapage and
 *		lists.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/reloptions.h"
#include "access/rmgr.h"
#include "access/xloginsert.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "hamming.h"
#include "radius_planner.h"

/*
 * Four blocks: an index of about 56 bytes a row, and, from 100K to 100M
 * codes, fewer pages read than three blocks at every radius up to 12
 * (doc/index-hamming.md).
 */
#define HAM_DEFAULT_BLOCKS	4

static relopt_kind ham_relopt_kind;
static relopt_parse_elt ham_relopt_tab[3];
static object_access_hook_type prev_object_access_hook = NULL;

static void ham_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId,
							  void *arg);

void
ham_init_reloptions(void)
{
	ham_relopt_kind = add_reloption_kind();

	/*
	 * Any integer passes here, so that ham_options gives every bad value
	 * the one message (the valid values are not a range).
	 */
	add_int_reloption(ham_relopt_kind, "blocks",
					  "Blocks the 64 bits are cut into: one sorted table each (0: the default, 4)",
					  0, PG_INT32_MIN, PG_INT32_MAX, AccessExclusiveLock);
	ham_relopt_tab[0].optname = "blocks";
	ham_relopt_tab[0].opttype = RELOPT_TYPE_INT;
	ham_relopt_tab[0].offset = offsetof(HamOptions, blocks);
	add_int_reloption(ham_relopt_kind, "pending_limit",
					  "Size in kB of the pending list that makes an insert merge it into the run (-1: 1024)",
					  -1, -1, MAX_KILOBYTES, ShareUpdateExclusiveLock);
	ham_relopt_tab[1].optname = "pending_limit";
	ham_relopt_tab[1].opttype = RELOPT_TYPE_INT;
	ham_relopt_tab[1].offset = offsetof(HamOptions, pending_limit);
	add_bool_reloption(ham_relopt_kind, "background_merge",
					   "Whether an insert that finds the pending list due for a merge leaves it to a background worker",
					   true, ShareUpdateExclusiveLock);
	ham_relopt_tab[2].optname = "background_merge";
	ham_relopt_tab[2].opttype = RELOPT_TYPE_BOOL;
	ham_relopt_tab[2].offset = offsetof(HamOptions, background_merge);

	prev_object_access_hook = object_access_hook;
	object_access_hook = ham_object_access;
}

/* Blocks the option asks for: 0 asks for the default */
static int
ham_blocks_of(HamOptions *opts)
{
	return opts && opts->blocks != 0 ? opts->blocks : HAM_DEFAULT_BLOCKS;
}

/*
 * ALTER INDEX ... SET (blocks = n) or RESET (blocks) on a hamming index
 * whose runs have another number of tables is refused: every run has the
 * metapage's number of tables, so the option could only apply when the
 * index is built anew, and an option that \d+ shows but the index does not
 * follow misleads.  A change to the count the index already has
 * is allowed.  Called after the catalog row is updated, before the command
 * ends (the row is seen with SnapshotSelf, as sepgsql does); the relcache
 * entry still has the old options.
 */
static void
ham_check_blocks_unchanged(Oid relid)
{
	Oid			hamming_am = get_index_am_oid("hamming", true);
	HeapTuple	classtup;
	Relation	index,
				pg_class;
	SysScanDesc scan;
	ScanKeyData key;
	Datum		reloptions;
	bool		isnull;
	int			old_blocks,
				new_blocks;
	HamOptions *opts;
	HamSnapshot snap;

	if (!OidIsValid(hamming_am) || get_rel_relkind(relid) != RELKIND_INDEX)
		return;
	classtup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(classtup))
		return;
	isnull = ((Form_pg_class) GETSTRUCT(classtup))->relam != hamming_am;
	ReleaseSysCache(classtup);
	if (isnull)
		return;

	pg_class = table_open(RelationRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(pg_class, ClassOidIndexId, true, SnapshotSelf, 1, &key);
	classtup = systable_getnext(scan);
	if (!HeapTupleIsValid(classtup))
	{
		systable_endscan(scan);
		table_close(pg_class, AccessShareLock);
		return;
	}
	reloptions = heap_getattr(classtup, Anum_pg_class_reloptions, RelationGetDescr(pg_class),
							  &isnull);
	opts = isnull ? NULL : (HamOptions *) ham_options(reloptions, false);
	new_blocks = ham_blocks_of(opts);
	systable_endscan(scan);
	table_close(pg_class, AccessShareLock);

	/* immediate: the command that altered the index holds a stronger lock */
	index = relation_open(relid, AccessShareLock);
	old_blocks = ham_blocks_of((HamOptions *) index->rd_options);
	if (new_blocks == old_blocks || RelationGetNumberOfBlocks(index) == 0)
	{
		relation_close(index, AccessShareLock);
		return;
	}
	ham_read_snapshot(index, &snap);
	if (new_blocks != snap.nblocks)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change option \"blocks\" of hamming index \"%s\"",
						RelationGetRelationName(index)),
				 errdetail("Its runs have %d tables; \"blocks\" applies only when an index is built.",
						   snap.nblocks),
				 errhint("Build a new index with WITH (blocks = %d), CONCURRENTLY to keep serving queries, then drop this one.",
						 new_blocks)));
	relation_close(index, AccessShareLock);
}

static void
ham_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_POST_ALTER && classId == RelationRelationId && subId == 0)
		ham_check_blocks_unchanged(objectId);
}

bytea *
ham_options(Datum reloptions, bool validate)
{
	HamOptions *opts;

	opts = (HamOptions *) build_reloptions(reloptions, validate, ham_relopt_kind,
										   sizeof(HamOptions), ham_relopt_tab,
										   lengthof(ham_relopt_tab));
	if (opts && opts->blocks != 0 &&
		(opts->blocks < HAM_MIN_TABLES || opts->blocks > HAM_MAX_TABLES))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value %d out of bounds for option \"blocks\"", opts->blocks),
				 errdetail("Valid values are 0 (the default, %d blocks) and %d to %d.",
						   HAM_DEFAULT_BLOCKS, HAM_MIN_TABLES, HAM_MAX_TABLES)));
	return (bytea *) opts;
}

int
ham_option_blocks(Relation index)
{
	return ham_blocks_of((HamOptions *) index->rd_options);
}

/* Pending entries beyond which an insert merges the list into the run */
int
ham_pending_limit_entries(Relation index)
{
	HamOptions *opts = (HamOptions *) index->rd_options;
	int			kb = opts && opts->pending_limit >= 0 ? opts->pending_limit
		: HAM_DEFAULT_PENDING_LIMIT_KB;

	return (int) Min((double) kb * 1024.0 / HAM_ENTRY_SIZE, (double) INT_MAX);
}

bool
ham_option_background_merge(Relation index)
{
	HamOptions *opts = (HamOptions *) index->rd_options;

	return opts == NULL || opts->background_merge;
}

/*
 * Does the index hold hamming_ball values (their centers) rather than
 * simhash64?  Those are the two types the access method indexes.
 */
bool
ham_indexes_balls(Relation index)
{
	const NdCatalog *cat = nd_catalog();
	Oid			typid = TupleDescAttr(RelationGetDescr(index), 0)->atttypid;

	if (cat->installed && typid == cat->simhash64_type)
		return false;
	if (cat->installed && typid == cat->hamming_ball_type)
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("access method \"hamming\" indexes only columns of type simhash64 or hamming_ball"),
			 errdetail("Column \"%s\" of index \"%s\" has type %s.",
					   NameStr(TupleDescAttr(RelationGetDescr(index), 0)->attname),
					   RelationGetRelationName(index), format_type_be(typid))));
	return false;
}

/* A page's special space as a page of that kind, epoch and table starts. */
static void
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

#ifndef HAM_WAL_PUBLIC_API

#define HAM_MAX_FRAGMENTS	3

/*
 * WAL-log bytes of a page changed in place, in a critical section, as a
 * generic WAL record of just those bytes: `n` fragments (field, length).
 *
 * The record is in the format of generic_xlog.c and is replayed by
 * generic_redo as any other.  GenericXLogFinish would find the same
 * fragments by comparing the whole page with a copy of it byte by byte
 * (make HAM_WAL=api builds that, below): the same WAL to the byte, but a
 * COPY of 1M rows into a table with a hamming index then takes 5.7x as
 * long, 82% of its time spent on the API, most of it in that comparison
 * (test/bench/run_wal_format.sh; doc/index-hamming.md, "WAL records").
 * The pages have no hole (pd_lower == pd_upper), so the page replay
 * produces is the page written here, byte for byte;
 * wal_consistency_checking = 'generic' checks that (test/tap/t/
 * 010_index_crash.pl, 011_index_standby.pl).
 *
 * !!! THIS WRITES A PRIVATE FORMAT OF POSTGRESQL'S BY HAND.  generic_xlog.c
 * keeps it in static functions (writeFragment, applyPageRedo) and promises
 * nothing across majors.  Checked against the source of 15.18, 17.11 and
 * 18.6: the same in all three (18 renames the struct PageData).  A record
 * of resource manager RM_GENERIC_ID, info 0, one registered buffer per
 * page (block ids from 0, REGBUF_STANDARD; with REGBUF_FORCE_IMAGE and no
 * data for a full image), whose block data is a sequence of fragments,
 * each an OffsetNumber offset into the page, an OffsetNumber length and
 * that many bytes, with no header, flags or padding; replay copies each
 * fragment in turn, then zeroes the hole between pd_lower and pd_upper.  Compare generic_xlog.c of every new major
 * with this before adding it to HAM_WAL_CHECKED in the Makefile (a major
 * not in it is built with HAM_WAL=api); this is the only place that writes
 * the format.
 */
static void
ham_log_fragments(Relation index, Buffer buf, int n, void *const *fields, const uint16 *lengths)
{
	Page		page = BufferGetPage(buf);
	char		delta[HAM_MAX_FRAGMENTS * (2 * sizeof(OffsetNumber) + sizeof(HamPageOpaqueData))];
	char	   *end = delta;
	XLogRecPtr	lsn;

	Assert(CritSectionCount > 0);
	Assert(n <= HAM_MAX_FRAGMENTS);
	Assert(((PageHeader) page)->pd_lower == ((PageHeader) page)->pd_upper);

	MarkBufferDirty(buf);
	if (!RelationNeedsWAL(index))
		return;
	for (int i = 0; i < n; i++)
	{
		OffsetNumber offset = (OffsetNumber) ((char *) fields[i] - (char *) page);
		OffsetNumber length = lengths[i];

		Assert(length <= sizeof(HamPageOpaqueData));
		memcpy(end, &offset, sizeof(offset));
		memcpy(end + sizeof(offset), &length, sizeof(length));
		memcpy(end + sizeof(offset) + sizeof(length), fields[i], length);
		end += sizeof(offset) + sizeof(length) + length;
	}
	XLogBeginInsert();
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, delta, end - delta);
	lsn = XLogInsert(RM_GENERIC_ID, 0);
	PageSetLSN(page, lsn);		/* a macro that evaluates lsn twice */
}

/*
 * Append an entry to a list page that has room for it, exclusively locked,
 * WAL-logged.
 */
void
ham_page_append(Relation index, Buffer buf, uint64 code, ItemPointer tid)
{
	Page		page = BufferGetPage(buf);
	HamPageOpaque opaque = HamPageGetOpaque(page);
	int			n = opaque->nentries;
	void	   *fields[3] = {&HamPageCodes(page)[n], &HamPageTids(page)[n], &opaque->nentries};
	uint16		lengths[3] = {sizeof(uint64), sizeof(ItemPointerData), sizeof(uint16)};

	Assert(n < HAM_PAGE_CAPACITY);
	START_CRIT_SECTION();
	HamPageCodes(page)[n] = code;
	HamPageTids(page)[n] = *tid;
	opaque->nentries = n + 1;
	ham_log_fragments(index, buf, 3, fields, lengths);
	END_CRIT_SECTION();
}

/*
 * Mark a page of no run or list free, exclusively locked, WAL-logged.  Only
 * its special space changes (what it held stays, unread): a merge at 10M
 * rows retires some 70,000 pages, which a full page image each made 570MB
 * of WAL.
 */
void
ham_page_set_free(Relation index, Buffer buf)
{
	HamPageOpaque opaque = HamPageGetOpaque(BufferGetPage(buf));
	void	   *fields[1] = {opaque};
	uint16		lengths[1] = {sizeof(HamPageOpaqueData)};

	START_CRIT_SECTION();
	ham_init_opaque(opaque, HAM_KIND_FREE, 0, 0);
	ham_log_fragments(index, buf, 1, fields, lengths);
	END_CRIT_SECTION();
}

#else							/* HAM_WAL_PUBLIC_API */

/*
 * make HAM_WAL=api: the same two page changes through generic WAL's public
 * API, as contrib/bloom makes its own: on the copy of the page that
 * GenericXLogRegisterBuffer returns, outside a critical section
 * (GenericXLogFinish enters one, compares the copy with the page, logs the
 * bytes that differ and copies the page back).  The build for a major
 * whose generic_xlog.c nobody has compared with ham_log_fragments; slower
 * (see the comment above ham_log_fragments).
 */
void
ham_page_append(Relation index, Buffer buf, uint64 code, ItemPointer tid)
{
	GenericXLogState *state = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(state, buf, 0);
	HamPageOpaque opaque = HamPageGetOpaque(page);
	int			n = opaque->nentries;

	Assert(n < HAM_PAGE_CAPACITY);
	HamPageCodes(page)[n] = code;
	HamPageTids(page)[n] = *tid;
	opaque->nentries = n + 1;
	GenericXLogFinish(state);
}

void
ham_page_set_free(Relation index, Buffer buf)
{
	GenericXLogState *state = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(state, buf, 0);

	ham_init_opaque(HamPageGetOpaque(page), HAM_KIND_FREE, 0, 0);
	GenericXLogFinish(state);
}

#endif							/* HAM_WAL_PUBLIC_API */

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
ham_init_meta_page(Page page, int nblocks)
{
	HamMetaPageData *meta;

	ham_init_page(page, HAM_KIND_META, 0, 0);
	meta = HamPageGetMeta(page);
	memset(meta, 0, sizeof(HamMetaPageData));
	meta->magic = HAM_MAGIC;
	meta->version = HAM_VERSION;
	meta->nblocks = nblocks;
	meta->run_header = InvalidBlockNumber;
	meta->run_epoch = 0;
	ham_empty_list(&meta->pending, 1);
	ham_empty_list(&meta->sealed, 0);
	ham_empty_list(&meta->nulls, 2);
	meta->next_epoch = 3;
	meta->retired_xid = InvalidFullTransactionId;
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

static void
ham_check_meta(Relation index, HamMetaPageData *meta)
{
	if (meta->magic != HAM_MAGIC || meta->version != HAM_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a hamming index of version %d",
						RelationGetRelationName(index), HAM_VERSION),
				 errhint("REINDEX it.")));
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

static void
ham_snapshot_of(Relation index, const HamMetaPageData *meta, HamSnapshot *snap)
{
	snap->nblocks = meta->nblocks;
	snap->nruns = ham_meta_get_runs(index, meta, snap->runs);
	snap->run_entries = 0;
	for (int i = 0; i < snap->nruns; i++)
		snap->run_entries += snap->runs[i].nentries;
	snap->pending = meta->pending;
	snap->sealed = meta->sealed;
	snap->nulls = meta->nulls;
	snap->list_cleanups = meta->list_cleanups;
	snap->flags = meta->flags;
	snap->merges = meta->merges;
	snap->insert_merges = meta->insert_merges;
	snap->compactions = meta->compactions;
}

void
ham_read_snapshot(Relation index, HamSnapshot *snap)
{
	Buffer		buf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	HamMetaPageData *meta;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = HamPageGetMeta(BufferGetPage(buf));
	ham_check_meta(index, meta);
	ham_snapshot_of(index, meta, snap);
	UnlockReleaseBuffer(buf);
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
 * retired runs and lists, of a merge that failed, free pages) is garbage.
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

/*
 * Append an entry to the pending list (or the nulls list).  The metapage is
 * share-locked while the tail page is written, so that a merge, which seals
 * the pending list under an exclusive lock, never misses an entry added to
 * a page it has read.  *snap, when given, gets the metapage as it was
 * (for the insert's merge decision, without reading it again).
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
		ham_check_meta(index, meta);
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
					ham_snapshot_of(index, meta, snap);
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
			ham_snapshot_of(index, HamPageGetMeta(BufferGetPage(metabuf)), snap);
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

/* The metapage of an unlogged index's init fork, as contrib/bloom writes it. */
void
ham_buildempty(Relation index)
{
	Page		metapage = (Page) palloc(BLCKSZ);

	ham_init_meta_page(metapage, ham_option_blocks(index));
	PageSetChecksumInplace(metapage, HAM_METAPAGE_BLKNO);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, HAM_METAPAGE_BLKNO,
			  (char *) metapage, true);
	log_newpage(&nd_smgr_locator(RelationGetSmgr(index)), INIT_FORKNUM,
				HAM_METAPAGE_BLKNO, metapage, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
}

static char *
ham_buildphasename(int64 phase)
{
	switch (phase)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case PROGRESS_HAMMING_PHASE_SORT:
			return "sorting the tables";
		case PROGRESS_HAMMING_PHASE_WRITE:
			return "writing the tables";
		default:
			return NULL;
	}
}

PG_FUNCTION_INFO_V1(hamming_handler);
Datum
hamming_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	am->amstrategies = HAM_NSTRATEGIES;
	am->amsupport = 0;
	am->amoptsprocnum = 0;
	am->amcanorder = false;
	am->amcanorderbyop = true;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = false;
	am->amoptionalkey = true;
	am->amsearcharray = false;
	am->amsearchnulls = false;
	am->amstorage = false;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = false;
	/* VACUUM and merges exclude each other with a lock workers cannot share */
	am->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	am->amkeytype = InvalidOid;

	/*
	 * Members of later majors: only the majors that have them can name them.
	 * An entry is a row, not a summary of a block range (amsummarizing: HOT
	 * updates must still insert); the build is serial; inserts keep no state
	 * to clean up.  The operators are a ball's overlap and a distance, with
	 * no equality or ordering that the planner could reason about
	 * (amconsistentequality, amconsistentordering, amcanhash), and no
	 * strategy maps to a CompareType (amtranslatestrategy and
	 * amtranslatecmptype NULL: WITHOUT OVERLAPS and merge joins do not
	 * apply).  No tree height to give the cost model (amgettreeheight).
	 */
#if PG_VERSION_NUM >= 160000
	am->amsummarizing = false;
#endif
#if PG_VERSION_NUM >= 170000
	am->amcanbuildparallel = false;
	am->aminsertcleanup = NULL;
#endif
#if PG_VERSION_NUM >= 180000
	am->amcanhash = false;
	am->amconsistentequality = false;
	am->amconsistentordering = false;
	am->amgettreeheight = NULL;
	am->amtranslatestrategy = NULL;
	am->amtranslatecmptype = NULL;
#endif

	am->ambuild = ham_build;
	am->ambuildempty = ham_buildempty;
	am->aminsert = ham_insert;
	am->ambulkdelete = ham_bulkdelete;
	am->amvacuumcleanup = ham_vacuumcleanup;
	am->amcanreturn = ham_canreturn;
	am->amcostestimate = ham_costestimate;
	am->amoptions = ham_options;
	am->amproperty = NULL;
	am->ambuildphasename = ham_buildphasename;
	am->amvalidate = ham_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = ham_beginscan;
	am->amrescan = ham_rescan;
	am->amgettuple = ham_gettuple;
	am->amgetbitmap = ham_getbitmap;
	am->amendscan = ham_endscan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	PG_RETURN_POINTER(am);
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

/* Is the relation an index of this access method? */
bool
ham_is_hamming_index(Relation rel)
{
	return rel->rd_rel->relkind == RELKIND_INDEX && rel->rd_indam != NULL &&
		rel->rd_indam->ambuild == ham_build;
}

/*
 * The user must own the relation, checked before any lock is taken: a
 * non-owner is refused at once instead of queueing behind the owner's
 * locks (as RangeVarGetRelidExtended's callbacks do for DDL).  Errors for
 * a relation that does not exist.
 */
void
ham_check_owner(Oid indexoid)
{
	HeapTuple	tuple;
	Oid			owner;
	char	   *name;

	/*
	 * The owner from pg_class directly: object_ownercheck (16 on) reports
	 * a missing relation as an internal error, "cache lookup failed".
	 */
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u does not exist", indexoid)));
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	name = pstrdup(NameStr(((Form_pg_class) GETSTRUCT(tuple))->relname));
	ReleaseSysCache(tuple);
	/* superusers and members of the owning role, as the ownership checks */
	if (!has_privs_of_role(GetUserId(), owner))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, name);
	pfree(name);
}

/*
 * The indexes one of the SQL functions given `indexoid` works on: that
 * index, or, for a partitioned hamming index, the index of every leaf
 * partition (of sub-partitions too), as find_all_inheritors orders them.
 * A plain index is neither locked nor checked here (ham_open_index does
 * both); a partitioned one is share-locked after its owner is checked, and
 * the owner of every leaf is checked too, before any is locked (and again
 * by ham_open_index when the caller opens it).
 */
List *
ham_leaf_indexes(Oid indexoid)
{
	Relation	parent;
	List	   *leaves = NIL;
	ListCell   *lc;

	if (get_rel_relkind(indexoid) != RELKIND_PARTITIONED_INDEX)
		return list_make1_oid(indexoid);
	ham_check_owner(indexoid);
	parent = try_relation_open(indexoid, AccessShareLock);
	if (parent == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (parent->rd_rel->relkind != RELKIND_PARTITIONED_INDEX || parent->rd_indam == NULL ||
		parent->rd_indam->ambuild != ham_build)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hamming index", RelationGetRelationName(parent))));
	if (!object_ownercheck(RelationRelationId, indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, RelationGetRelationName(parent));
	foreach(lc, find_all_inheritors(indexoid, NoLock, NULL))
	{
		Oid			child = lfirst_oid(lc);

		if (get_rel_relkind(child) == RELKIND_INDEX)
		{
			/* every owner before any work: not after checking half of them */
			ham_check_owner(child);
			leaves = lappend_oid(leaves, child);
		}
	}
	relation_close(parent, NoLock);
	return leaves;
}

/*
 * Open an index given to one of the SQL functions: it must be a hamming
 * index the user owns (as VACUUM and gin_clean_pending_list require).
 * Ownership is checked before the lock is taken and again after (it may
 * have changed while we waited).
 */
Relation
ham_open_index(Oid indexoid, LOCKMODE lockmode)
{
	Relation	index;

	ham_check_owner(indexoid);
	index = try_relation_open(indexoid, lockmode);

	if (index == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (!ham_is_hamming_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hamming index", RelationGetRelationName(index))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
	if (!object_ownercheck(RelationRelationId, indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, RelationGetRelationName(index));
	return index;
}
