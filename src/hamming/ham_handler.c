/*-------------------------------------------------------------------------
 *
 * ham_handler.c
 *		The access method's handler (its IndexAmRoutine), its options
 *		(reloptions) and the types of column it indexes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "shared/extension_catalog.h"
#include "hamming/hamming.h"

/*
 * Four blocks: an index of about 56 bytes a row, and, from 100K to 100M
 * codes, fewer pages read than three blocks at every radius up to 12
 * (doc/index-hamming.md).
 */
#define HAM_DEFAULT_BLOCKS	4

static relopt_kind ham_relopt_kind;
static relopt_parse_elt ham_relopt_tab[4];
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
					  "Size in kB of the pending list that makes an insert flush it into a new run (-1: 1024)",
					  -1, -1, MAX_KILOBYTES, ShareUpdateExclusiveLock);
	ham_relopt_tab[1].optname = "pending_limit";
	ham_relopt_tab[1].opttype = RELOPT_TYPE_INT;
	ham_relopt_tab[1].offset = offsetof(HamOptions, pending_limit);
	add_bool_reloption(ham_relopt_kind, "background_merge",
					   "Whether an insert that finds the pending list due for a flush leaves it to a background worker",
					   true, ShareUpdateExclusiveLock);
	ham_relopt_tab[2].optname = "background_merge";
	ham_relopt_tab[2].opttype = RELOPT_TYPE_BOOL;
	ham_relopt_tab[2].offset = offsetof(HamOptions, background_merge);
	add_int_reloption(ham_relopt_kind, "only_block",
					  "Keep only the table that leads with this block (from 1; 0: a table per block): an index for block balls of that block",
					  0, 0, HAM_MAX_TABLES, AccessExclusiveLock);
	ham_relopt_tab[3].optname = "only_block";
	ham_relopt_tab[3].opttype = RELOPT_TYPE_INT;
	ham_relopt_tab[3].offset = offsetof(HamOptions, only_block);

	prev_object_access_hook = object_access_hook;
	object_access_hook = ham_object_access;
}

/* Blocks the option asks for: 0 asks for the default */
static int
ham_blocks_of(HamOptions *opts)
{
	return opts && opts->blocks != 0 ? opts->blocks : HAM_DEFAULT_BLOCKS;
}

/* The only_block option: 0, or the block (from 1) of the one table kept */
static int
ham_only_block_of(HamOptions *opts)
{
	return opts ? opts->only_block : 0;
}

/*
 * ALTER INDEX ... SET (blocks = n) or RESET (blocks) on a hamming index
 * whose runs have another number of tables is refused: every run has the
 * metapage's number of tables, so the option could only apply when the
 * index is built anew, and an option that \d+ shows but the index does not
 * follow misleads.  A change to the count the index already has is
 * allowed.  The same for only_block.  Called after the catalog row is
 * updated, before the command ends (the row is seen with SnapshotSelf, as
 * sepgsql does); the relcache entry still has the old options.
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
				new_blocks,
				old_only,
				new_only;
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
	new_only = ham_only_block_of(opts);
	systable_endscan(scan);
	table_close(pg_class, AccessShareLock);

	/* immediate: the command that altered the index holds a stronger lock */
	index = relation_open(relid, AccessShareLock);
	old_blocks = ham_blocks_of((HamOptions *) index->rd_options);
	old_only = ham_only_block_of((HamOptions *) index->rd_options);
	if ((new_blocks == old_blocks && new_only == old_only) ||
		RelationGetNumberOfBlocks(index) == 0)
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
	if (new_only != snap.only_block)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change option \"only_block\" of hamming index \"%s\"",
						RelationGetRelationName(index)),
				 errdetail("Its runs keep %s; \"only_block\" applies only when an index is built.",
						   snap.only_block > 0 ? psprintf("only the table of block %d", snap.only_block)
						   : "a table per block"),
				 errhint("Build a new index with WITH (only_block = %d), CONCURRENTLY to keep serving queries, then drop this one.",
						 new_only)));
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
	if (opts && opts->only_block > ham_blocks_of(opts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value %d out of bounds for option \"only_block\"", opts->only_block),
				 errdetail("Valid values are 0 (a table per block) and 1 to \"blocks\" (%d).",
						   ham_blocks_of(opts))));
	return (bytea *) opts;
}

int
ham_option_blocks(Relation index)
{
	return ham_blocks_of((HamOptions *) index->rd_options);
}

int
ham_option_only_block(Relation index)
{
	return ham_only_block_of((HamOptions *) index->rd_options);
}

/* The pending_limit option in entries */
static int
ham_pending_limit_entries(Relation index)
{
	HamOptions *opts = (HamOptions *) index->rd_options;
	int			kb = opts && opts->pending_limit >= 0 ? opts->pending_limit
		: HAM_DEFAULT_PENDING_LIMIT_KB;

	return (int) Min((double) kb * 1024.0 / HAM_ENTRY_SIZE, (double) INT_MAX);
}

/*
 * The pending entries at which an insert flushes the list into a new run:
 * the pending_limit, whatever the size of the index -- the list is what
 * every scan reads whole.  It is also the unit of the compaction tiers.
 */
uint64
ham_flush_threshold(Relation index)
{
	return Max((uint64) ham_pending_limit_entries(index), 1);
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
	/* VACUUM and flushes exclude each other with locks workers cannot share */
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

/* Is the relation an index of this access method? */
bool
ham_is_hamming_index(Relation rel)
{
	return rel->rd_rel->relkind == RELKIND_INDEX && rel->rd_indam != NULL &&
		rel->rd_indam->ambuild == ham_build;
}
