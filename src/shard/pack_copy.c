/*-------------------------------------------------------------------------
 *
 * pack_copy.c
 *		A packed copy of a block-sharded layout on its shard
 *		(doc/scale-out.md, "Packed copies"): the view <t> that the
 *		coordinator's foreign table reads, over <t>_recent (rows as they
 *		arrive, a plain table with its hamming index) and <t>_packs (one
 *		row per pack of up to SIMHASH_PACK_ROWS rows sharing the copy's
 *		block value v).  Inserts go to <t>_recent (a rule of the view);
 *		simhash_pack_delete(), the view's INSTEAD OF DELETE trigger,
 *		removes a row from whichever holds it; simhash_pack_merge() moves
 *		<t>_recent's rows into packs.
 *
 *		The trigger's arguments name the two tables and the block:
 *		('<schema>.<t>_recent', '<schema>.<t>_packs', block, blocks), as
 *		simhash_shard_create writes them.  The merge reads them from the
 *		view's trigger, so the two cannot disagree.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/varlena.h"

#include "core/nd_permute.h"
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
 * A table the trigger names, looked up and quoted again: the SQL below is
 * written with it, so that a name is never text spliced in as given.
 */
static char *
pack_table(const char *name)
{
	Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(textToQualifiedNameList(cstring_to_text(name))),
										 NoLock, false);

	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid));
}

static void
pack_copy_from_args(PackCopy *pc, int nargs, char **args, const char *view)
{
	if (nargs != 4)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the packed copy trigger of \"%s\" must have 4 arguments, not %d", view, nargs),
				 errhint("simhash_shard_create() makes it.")));
	pc->recent = pack_table(args[0]);
	pc->packs = pack_table(args[1]);
	pc->block = pg_strtoint32(args[2]);
	pc->blocks = pg_strtoint32(args[3]);
	nd_check_block_args(pc->block, pc->blocks);
}

/* the plans of a trigger, kept for the backend's life */
typedef struct PackPlans
{
	Oid			tgoid;			/* key */
	int			block;			/* of its arguments */
	int			blocks;
	SPIPlanPtr	delete_recent;
	SPIPlanPtr	shrink_pack;
	SPIPlanPtr	delete_pack;
} PackPlans;

static HTAB *pack_plans = NULL;

static SPIPlanPtr
keep_plan(const char *sql, int nargs, Oid *types)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, types);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	SPI_keepplan(plan);
	return plan;
}

static PackPlans *
plans_for(Trigger *tg, Relation view)
{
	PackPlans  *pp;
	bool		found;

	if (pack_plans == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(PackPlans);
		pack_plans = hash_create("neardup pack plans", 16, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	pp = hash_search(pack_plans, &tg->tgoid, HASH_FIND, &found);
	if (!found)
	{
		PackCopy	copy;
		PackCopy   *pc = &copy;
		const NdCatalog *cat = nd_catalog();
		const char *ext = quote_identifier(get_namespace_name(cat->namespace));
		Oid			types[3] = {INT8OID, cat->simhash64_type, INT8OID};
		Oid			tid[1] = {TIDOID};

		/* its arguments checked, its tables found, before it is cached */
		pack_copy_from_args(pc, tg->tgnargs, tg->tgargs, RelationGetRelationName(view));
		pp = hash_search(pack_plans, &tg->tgoid, HASH_ENTER, &found);
		pp->block = pc->block;
		pp->blocks = pc->blocks;
		pp->delete_recent = pp->shrink_pack = pp->delete_pack = NULL;
		PG_TRY();
		{
			/*
			 * One row, though a copy without a key may hold it twice: a
			 * delete through the view removes each row it reads once.
			 */
			pp->delete_recent = keep_plan(psprintf(
				"DELETE FROM %1$s WHERE ctid OPERATOR(pg_catalog.=) ("
				"SELECT ctid FROM %1$s WHERE sh OPERATOR(%2$s.=) $2 "
				"AND id OPERATOR(pg_catalog.=) $1 LIMIT 1 FOR UPDATE)",
				pc->recent, ext), 2, types);
			pp->shrink_pack = keep_plan(psprintf(
				"UPDATE %1$s SET pack = neardup_internal.simhash_pack_remove(pack, $1, $2) "
				"WHERE ctid OPERATOR(pg_catalog.=) ("
				"SELECT ctid FROM %1$s WHERE v OPERATOR(pg_catalog.=) $3 "
				"AND neardup_internal.simhash_pack_holds(pack, $1, $2) LIMIT 1 FOR UPDATE) "
				"RETURNING ctid, pg_catalog.octet_length(pack)",
				pc->packs), 3, types);
			pp->delete_pack = keep_plan(psprintf(
				"DELETE FROM %s WHERE ctid OPERATOR(pg_catalog.=) $1", pc->packs), 1, tid);
		}
		PG_CATCH();
		{
			hash_search(pack_plans, &tg->tgoid, HASH_REMOVE, NULL);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	return pp;
}

/*
 * simhash_pack_delete(): the INSTEAD OF DELETE trigger of a packed copy's
 * view.  Removes the row it is given from <t>_recent, or else from the
 * first pack of its block value that holds it (a pack left empty goes), and
 * returns it; returns nothing when neither holds it any more (a concurrent
 * delete took it), so that the statement counts only the rows it removed.
 */
PG_FUNCTION_INFO_V1(simhash_pack_delete);
Datum
simhash_pack_delete(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	PackPlans  *pp;
	nd_layout	layout;
	HeapTuple	old;
	bool		isnull;
	Datum		args[3];
	uint64		code;
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
	code = DatumGetSimhash64(args[1]);

	SPI_connect();
	pp = plans_for(td->tg_trigger, td->tg_relation);
	nd_layout_init(&layout, pp->blocks);
	args[2] = Int64GetDatum((int64) nd_block(&layout, pp->block - 1, code));
	if (SPI_execute_plan(pp->delete_recent, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete a recent row of \"%s\"", RelationGetRelationName(td->tg_relation));
	removed = SPI_processed > 0;
	if (!removed)
	{
		if (SPI_execute_plan(pp->shrink_pack, args, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
			elog(ERROR, "could not update a pack of \"%s\"", RelationGetRelationName(td->tg_relation));
		removed = SPI_processed > 0;
		if (removed &&
			DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)) == 0)
		{
			Datum		tid = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

			if (SPI_execute_plan(pp->delete_pack, &tid, NULL, false, 0) != SPI_OK_DELETE)
				elog(ERROR, "could not delete a pack of \"%s\"", RelationGetRelationName(td->tg_relation));
		}
	}
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
 * on <t>_packs that readers and inserts do not wait for; deletes do).
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
	pack_copy_from_args(&pc, tg->tgnargs, tg->tgargs, RelationGetRelationName(view));
	relation_close(view, AccessShareLock);
	ext = quote_identifier(get_namespace_name(nd_catalog()->namespace));

	SPI_connect();
	if (SPI_execute(psprintf("LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE", pc.packs), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not lock %s", pc.packs);
	sql = psprintf(
		"WITH moved AS (DELETE FROM %1$s RETURNING id, sh), "
		"rows AS (SELECT %3$s.simhash_block(sh, %4$d, %5$d) AS v, id, sh FROM moved), "
		"opened AS (DELETE FROM %2$s p WHERE p.v OPERATOR(pg_catalog.=) ANY (SELECT DISTINCT v FROM rows) "
		"AND pg_catalog.octet_length(p.pack) OPERATOR(pg_catalog.<) %6$d RETURNING p.v, p.pack), "
		"every AS (SELECT v, id, sh FROM rows UNION ALL "
		"SELECT o.v, r.id, r.sh FROM opened o, neardup_internal.simhash_pack_rows(o.pack) r), "
		"numbered AS (SELECT v, id, sh, (pg_catalog.row_number() OVER (PARTITION BY v) "
		"OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog./) %7$d AS n FROM every), "
		"packed AS (INSERT INTO %2$s (v, pack) SELECT v, "
		"pg_catalog.string_agg(neardup_internal.simhash_pack_row(id, sh), ''::pg_catalog.bytea) "
		"FROM numbered GROUP BY v, n) "
		"SELECT pg_catalog.count(*) FROM moved",
		pc.recent, pc.packs, ext, pc.block, pc.blocks,
		SIMHASH_PACK_ROWS * 16, SIMHASH_PACK_ROWS);
	if (SPI_execute(sql, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not merge %s", pc.recent);
	{
		bool		isnull;

		moved = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}
	SPI_finish();
	PG_RETURN_INT64(moved);
}
