/*-------------------------------------------------------------------------
 *
 * pack_copy.c
 *		A packed copy of a block-sharded layout on its shard
 *		(doc/scale-out-reference.md, "Packed copies"): the view <t> that
 *		the coordinator's foreign table reads, over <t>_recent (rows as
 *		they arrive, a plain table with its hamming index) and <t>_packs
 *		(one row per pack of up to SIMHASH_PACK_ROWS rows sharing the
 *		copy's block value v).  Inserts go to <t>_recent (a rule of the
 *		view); simhash_pack_delete(), the view's INSTEAD OF DELETE trigger,
 *		removes a row from whichever holds it; simhash_pack_merge() moves
 *		<t>_recent's rows into packs.
 *
 *		The trigger's arguments name the two tables and the block:
 *		('<schema>.<t>_recent', '<schema>.<t>_packs', block, blocks), as
 *		simhash_shard_create writes them.  They must be the view's own
 *		tables (its schema, its name and those suffixes, its owner), and
 *		the merge reads them from the view's trigger, so the two cannot
 *		disagree and neither can be pointed at another table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "pg_compat.h"
#include "shared/extension_catalog.h"
#include "type/hamming_ball.h"
#include "type/simhash64.h"

/*
 * Rows a merge puts in one pack: its heap row is then 2,020 bytes (a
 * 24-byte header, v, the bytea's 4-byte header and 1,984 bytes of pairs),
 * under the 2,032 past which TOAST would try to compress it or move it out
 * of line, and four fill a page with 56 bytes to spare.
 */
#define SIMHASH_PACK_ROWS	124

/* what a packed copy's trigger says of it */
typedef struct PackCopy
{
	char	   *recent;			/* qualified and quoted, from its OID */
	char	   *packs;
	int			block;
	int			blocks;
} PackCopy;

/*
 * A table the trigger of `view` names, which must be the view's own: in its
 * schema, named after it with `suffix`, owned by its owner.  Returned
 * qualified and quoted from its OID: the SQL below is written with it, so
 * that no argument is text spliced in as given.
 */
static char *
pack_table(Relation view, const char *name, const char *suffix)
{
	Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(textToQualifiedNameList(cstring_to_text(name))),
										 NoLock, false);
	char	   *want = psprintf("%s%s", RelationGetRelationName(view), suffix);
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Form_pg_class form;
	bool		own;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	form = (Form_pg_class) GETSTRUCT(tup);
	own = form->relnamespace == RelationGetNamespace(view) &&
		strcmp(NameStr(form->relname), want) == 0 &&
		form->relowner == view->rd_rel->relowner && form->relkind == RELKIND_RELATION;
	ReleaseSysCache(tup);
	if (!own)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the packed copy trigger of \"%s\" names \"%s\", not the view's table \"%s\"",
						RelationGetRelationName(view), name, want),
				 errdetail("A packed copy's tables are in the view's schema, named after it, and owned by its owner."),
				 errhint("simhash_shard_create() makes them.")));
	return quote_qualified_identifier(get_namespace_name(RelationGetNamespace(view)), want);
}

static void
pack_copy_from_args(PackCopy *pc, Relation view, const Trigger *tg)
{
	if (tg->tgnargs != 4)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the packed copy trigger of \"%s\" must have 4 arguments, not %d",
						RelationGetRelationName(view), tg->tgnargs),
				 errhint("simhash_shard_create() makes it.")));
	pc->recent = pack_table(view, tg->tgargs[0], "_recent");
	pc->packs = pack_table(view, tg->tgargs[1], "_packs");
	pc->block = pg_strtoint32(tg->tgargs[2]);
	pc->blocks = pg_strtoint32(tg->tgargs[3]);
	nd_check_block_args(pc->block, pc->blocks);
}

/*
 * The plans of a trigger, kept for the backend's life (a coordinator's
 * connection deletes through the same trigger for as long as it lives),
 * with the arguments they were made from: CREATE OR REPLACE TRIGGER keeps
 * the trigger's OID, and changed arguments make them again.  Each plan is
 * made when first run: preparing a statement locks its table until the
 * transaction ends, and a delete that finds its row among the recent rows
 * should not hold the packs against a merge.
 */
typedef enum PackStep
{
	FIND_RECENT,
	DELETE_RECENT,
	FIND_PACK,
	SHRINK_PACK,
	DELETE_PACK,
	PACK_STEPS
} PackStep;

typedef struct PackPlans
{
	Oid			tgoid;			/* key */
	char	   *args;			/* its arguments, joined; in TopMemoryContext */
	char	   *sql[PACK_STEPS];	/* likewise */
	int			block;
	int			blocks;
	SPIPlanPtr	plan[PACK_STEPS];
} PackPlans;

static HTAB *pack_plans = NULL;

static void
free_plans(PackPlans *pp)
{
	for (int i = 0; i < PACK_STEPS; i++)
	{
		if (pp->plan[i] != NULL)
			SPI_freeplan(pp->plan[i]);
		pp->plan[i] = NULL;
		if (pp->sql[i] != NULL)
			pfree(pp->sql[i]);
		pp->sql[i] = NULL;
	}
	if (pp->args != NULL)
		pfree(pp->args);
	pp->args = NULL;
}

/* a trigger's arguments as one string, to tell a replaced trigger's */
static char *
joined_args(const Trigger *tg)
{
	StringInfoData s;

	initStringInfo(&s);
	for (int i = 0; i < tg->tgnargs; i++)
	{
		appendStringInfoString(&s, tg->tgargs[i]);
		appendStringInfoChar(&s, '\0' + 1);
	}
	return s.data;
}

static PackPlans *
plans_for(Trigger *tg, Relation view)
{
	PackPlans  *pp;
	bool		found;
	char	   *args = joined_args(tg);
	PackCopy	pc;
	const char *ext;
	char	   *sql[PACK_STEPS];

	if (pack_plans == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(PackPlans);
		pack_plans = hash_create("neardup pack plans", 16, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	pp = hash_search(pack_plans, &tg->tgoid, HASH_FIND, &found);
	if (found && strcmp(pp->args, args) == 0)
		return pp;
	if (found)
	{
		free_plans(pp);
		hash_search(pack_plans, &tg->tgoid, HASH_REMOVE, NULL);
	}

	/* its arguments checked, its tables found, before it is cached */
	pack_copy_from_args(&pc, view, tg);
	ext = quote_identifier(get_namespace_name(nd_catalog()->namespace));

	/*
	 * Each step finds a row's ctid in one statement and changes it by that
	 * ctid in the next, which fails (no row) if another transaction changed
	 * the row since: the caller then looks again, with a newer snapshot
	 * under READ COMMITTED.  (In one statement, UPDATE ... WHERE ctid =
	 * (SELECT ... FOR UPDATE) would get the newest version's ctid from the
	 * lock, which its older snapshot cannot see, and change nothing.)  One
	 * row at a time, though a copy without a key may hold it twice: a
	 * delete through the view removes each row it reads once.
	 */
	sql[FIND_RECENT] = psprintf(
		"SELECT ctid FROM %1$s WHERE sh OPERATOR(%2$s.=) $2 AND id OPERATOR(pg_catalog.=) $1 LIMIT 1",
		pc.recent, ext);
	sql[DELETE_RECENT] = psprintf("DELETE FROM %s WHERE ctid OPERATOR(pg_catalog.=) $1", pc.recent);
	sql[FIND_PACK] = psprintf(
		"SELECT ctid FROM %s WHERE v OPERATOR(pg_catalog.=) $3 "
		"AND neardup_internal.simhash_pack_holds(pack, $1, $2) LIMIT 1", pc.packs);
	sql[SHRINK_PACK] = psprintf(
		"UPDATE %s SET pack = neardup_internal.simhash_pack_remove(pack, $2, $3) "
		"WHERE ctid OPERATOR(pg_catalog.=) $1 AND neardup_internal.simhash_pack_holds(pack, $2, $3) "
		"RETURNING ctid, pg_catalog.octet_length(pack)", pc.packs);
	sql[DELETE_PACK] = psprintf("DELETE FROM %s WHERE ctid OPERATOR(pg_catalog.=) $1", pc.packs);

	pp = hash_search(pack_plans, &tg->tgoid, HASH_ENTER, &found);
	pp->args = MemoryContextStrdup(TopMemoryContext, args);
	for (int i = 0; i < PACK_STEPS; i++)
	{
		pp->sql[i] = MemoryContextStrdup(TopMemoryContext, sql[i]);
		pp->plan[i] = NULL;
	}
	pp->block = pc.block;
	pp->blocks = pc.blocks;
	return pp;
}

/* a step's plan, made on its first run */
static SPIPlanPtr
step_plan(PackPlans *pp, PackStep step)
{
	static const int nargs[PACK_STEPS] = {2, 1, 3, 3, 1};

	if (pp->plan[step] == NULL)
	{
		Oid			simhash64 = nd_catalog()->simhash64_type;
		Oid			find[3] = {INT8OID, simhash64, INT8OID};
		Oid			by_ctid[3] = {TIDOID, INT8OID, simhash64};
		SPIPlanPtr	plan;

		plan = SPI_prepare(pp->sql[step], nargs[step],
						   step == FIND_RECENT || step == FIND_PACK ? find : by_ctid);
		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s", pp->sql[step],
				 SPI_result_code_string(SPI_result));
		SPI_keepplan(plan);
		pp->plan[step] = plan;
	}
	return pp->plan[step];
}

/* the first ctid a plan finds, or false */
static bool
find_ctid(PackPlans *pp, PackStep step, Datum *args, Datum *ctid)
{
	bool		isnull;

	if (SPI_execute_plan(step_plan(pp, step), args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look for a row of a packed copy");
	if (SPI_processed == 0)
		return false;
	*ctid = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return true;
}

/*
 * Removes one row (args: id, code, block value) from the recent rows or
 * the first pack that holds it; false if neither does.
 */
static bool
remove_row(PackPlans *pp, Datum *args)
{
	for (;;)
	{
		Datum		ctid;
		Datum		targs[3];
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		if (find_ctid(pp, FIND_RECENT, args, &ctid))
		{
			if (SPI_execute_plan(step_plan(pp, DELETE_RECENT), &ctid, NULL, false, 0) != SPI_OK_DELETE)
				elog(ERROR, "could not delete a recent row of a packed copy");
			if (SPI_processed > 0)
				return true;
			continue;			/* gone since: a merge moved it, or a delete took it */
		}
		if (!find_ctid(pp, FIND_PACK, args, &ctid))
			return false;
		targs[0] = ctid;
		targs[1] = args[0];
		targs[2] = args[1];
		if (SPI_execute_plan(step_plan(pp, SHRINK_PACK), targs, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
			elog(ERROR, "could not update a pack of a packed copy");
		if (SPI_processed == 0)
			continue;			/* the pack changed since */
		if (DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)) == 0)
		{
			ctid = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
			if (SPI_execute_plan(step_plan(pp, DELETE_PACK), &ctid, NULL, false, 0) != SPI_OK_DELETE)
				elog(ERROR, "could not delete an empty pack of a packed copy");
		}
		return true;
	}
}

/*
 * simhash_pack_delete(): the INSTEAD OF DELETE trigger of a packed copy's
 * view.  Removes the row it is given from <t>_recent, or else from the
 * first pack of its block value that holds it (a pack left empty goes), and
 * returns it; returns nothing when neither holds it any more (a concurrent
 * delete took it), so that the statement counts only the rows it removed.
 * It runs as the role that deletes.
 */
PG_FUNCTION_INFO_V1(simhash_pack_delete);
Datum
simhash_pack_delete(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	PackPlans  *pp;
	HeapTuple	old;
	bool		isnull;
	Datum		args[3];
	bool		removed;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_INSTEAD(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) || !TRIGGER_FIRED_BY_DELETE(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("simhash_pack_delete() must be an INSTEAD OF DELETE trigger for each row")));
	old = td->tg_trigtuple;
	args[0] = heap_getattr(old, 1, RelationGetDescr(td->tg_relation), &isnull);
	if (isnull)
		PG_RETURN_POINTER(NULL);
	args[1] = heap_getattr(old, 2, RelationGetDescr(td->tg_relation), &isnull);
	if (isnull)
		PG_RETURN_POINTER(NULL);

	SPI_connect();
	pp = plans_for(td->tg_trigger, td->tg_relation);
	args[2] = Int64GetDatum(nd_checked_block(DatumGetSimhash64(args[1]), pp->block, pp->blocks));
	removed = remove_row(pp, args);
	SPI_finish();
	PG_RETURN_POINTER(removed ? old : NULL);
}

/* the packed copy trigger of a view, or NULL */
static Trigger *
pack_trigger(Relation view)
{
	Oid			fn;

	if (view->trigdesc == NULL)
		return NULL;
	fn = LookupFuncName(list_make2(makeString("neardup_internal"), makeString("simhash_pack_delete")),
						0, NULL, true);
	for (int i = 0; i < view->trigdesc->numtriggers; i++)
		if (view->trigdesc->triggers[i].tgfoid == fn)
			return &view->trigdesc->triggers[i];
	return NULL;
}

/*
 * simhash_pack_merge(copy regclass) returns int8: moves the rows of a packed
 * copy's <t>_recent into packs; returns how many.  The rows of each block
 * value they touch go with those of its packs that have room into packs of
 * SIMHASH_PACK_ROWS (the last one of a value partly full): one statement,
 * whose sort spills past work_mem.  Merges of one copy take turns (a lock
 * on <t>_packs that readers and inserts do not wait for; deletes do); a
 * recent row that a delete holds is left for the next merge, rather than
 * waited for (that delete may next wait for this merge's lock).
 *
 * For the view's owner (or a role that may act as it), and run as that
 * owner in a restricted context, as VACUUM runs as a table's: a trigger on
 * the copy's tables never runs with the rights of whoever merges.
 */
PG_FUNCTION_INFO_V1(simhash_pack_merge);
Datum
simhash_pack_merge(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	view;
	Trigger    *tg;
	PackCopy	pc;
	const char *ext;
	char	   *sql;
	int64		moved;
	Oid			owner,
				save_userid;
	int			save_sec_context,
				save_nestlevel;
	bool		isnull;

	view = try_relation_open(relid, AccessShareLock);
	if (view == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	tg = pack_trigger(view);
	if (view->rd_rel->relkind != RELKIND_VIEW || tg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a packed copy of a block-sharded layout",
						RelationGetRelationName(view)),
				 errhint("simhash_shard_create(..., packed => true) makes them.")));
	if (!object_ownercheck(RelationRelationId, relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_VIEW, RelationGetRelationName(view));
	pack_copy_from_args(&pc, view, tg);
	owner = view->rd_rel->relowner;
	relation_close(view, AccessShareLock);
	ext = quote_identifier(get_namespace_name(nd_catalog()->namespace));

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();

	SPI_connect();
	if (SPI_execute(psprintf("LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE", pc.packs), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not lock %s", pc.packs);
	sql = psprintf(
		"WITH moved AS (DELETE FROM %1$s d USING (SELECT ctid FROM %1$s FOR UPDATE SKIP LOCKED) l "
		"WHERE d.ctid OPERATOR(pg_catalog.=) l.ctid RETURNING d.id, d.sh), "
		"arrived AS (SELECT %3$s.simhash_block(sh, %4$d, %5$d) AS v, id, sh FROM moved), "
		"opened AS (DELETE FROM %2$s p WHERE p.v OPERATOR(pg_catalog.=) ANY (SELECT DISTINCT v FROM arrived) "
		"AND pg_catalog.octet_length(p.pack) OPERATOR(pg_catalog.<) %6$d RETURNING p.v, p.pack), "
		"all_rows AS (SELECT v, id, sh FROM arrived UNION ALL "
		"SELECT o.v, r.id, r.sh FROM opened o, neardup_internal.simhash_pack_rows(o.pack) r), "
		"numbered AS (SELECT v, id, sh, (pg_catalog.row_number() OVER (PARTITION BY v) "
		"OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog./) %7$d AS n FROM all_rows), "
		"packed AS (INSERT INTO %2$s (v, pack) SELECT v, "
		"pg_catalog.string_agg(neardup_internal.simhash_pack_row(id, sh), ''::pg_catalog.bytea) "
		"FROM numbered GROUP BY v, n) "
		"SELECT pg_catalog.count(*) FROM moved",
		pc.recent, pc.packs, ext, pc.block, pc.blocks,
		SIMHASH_PACK_ROWS * 16, SIMHASH_PACK_ROWS);
	if (SPI_execute(sql, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not merge %s", pc.recent);
	moved = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	PG_RETURN_INT64(moved);
}
