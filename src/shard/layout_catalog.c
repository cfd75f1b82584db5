/*-------------------------------------------------------------------------
 *
 * layout_catalog.c
 *		simhash_layout_blocks(layout): what makes a view a block-sharded
 *		layout (doc/scale-out.md, "The block layout"), and how many blocks
 *		it has.
 *
 * simhash_layout_create makes a view <name> over the first of its copies,
 * the partitioned tables <name>_b1 .. <name>_b<m>, copy b partitioned by
 * simhash_block(sh, b, m).  A view is a layout when <name>_b1, in the same
 * schema, is a partitioned table whose one key is such a call with b = 1
 * and constant m; m is the layout's blocks.
 *
 * Read from the catalogs (the syscache) without a lock and without a
 * privilege on the copies: simhash_layout_insert and simhash_layout_delete
 * look a layout up for roles that may only write to it, and the PL/pgSQL
 * functions take their locks through their own statements.
 * simhash_layout_within_sql, which names partitions to read, checks SELECT
 * and locks them itself (layout_within.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_partitioned_table.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "nd_permute.h"
#include "layout_catalog.h"

void
layout_not_found(Oid view)
{
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("\"%s\" is not a block-sharded layout",
					DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(view)))),
			 errhint("Name the view that simhash_layout_create() made.")));
}

/*
 * The m of a partition key simhash_block(<column>, 1, m), m a constant
 * int4; -1 for any other key.
 */
static int
first_block_key_blocks(Oid copy1)
{
	HeapTuple	tp;
	Form_pg_partitioned_table form;
	Datum		exprs;
	bool		isnull;
	List	   *keys = NIL;
	FuncExpr   *f;
	char	   *fname;
	Const	   *b;
	Const	   *m;

	tp = SearchSysCache1(PARTRELID, ObjectIdGetDatum(copy1));
	if (!HeapTupleIsValid(tp))
		return -1;
	form = (Form_pg_partitioned_table) GETSTRUCT(tp);
	/* one key, an expression (attribute number 0) */
	if (form->partnatts == 1 && form->partattrs.values[0] == 0)
	{
		exprs = SysCacheGetAttr(PARTRELID, tp, Anum_pg_partitioned_table_partexprs, &isnull);
		if (!isnull)
			keys = (List *) stringToNode(TextDatumGetCString(exprs));
	}
	ReleaseSysCache(tp);

	if (list_length(keys) != 1 || !IsA(linitial(keys), FuncExpr))
		return -1;
	f = (FuncExpr *) linitial(keys);
	fname = get_func_name(f->funcid);
	if (fname == NULL || strcmp(fname, "simhash_block") != 0 || list_length(f->args) != 3 ||
		!IsA(lsecond(f->args), Const) || !IsA(lthird(f->args), Const))
		return -1;
	b = (Const *) lsecond(f->args);
	m = (Const *) lthird(f->args);
	if (b->consttype != INT4OID || b->constisnull || DatumGetInt32(b->constvalue) != 1 ||
		m->consttype != INT4OID || m->constisnull)
		return -1;
	return DatumGetInt32(m->constvalue);
}

/* The layout a view names; 42809 if it names none. */
void
layout_find(Oid view, Layout *l)
{
	char		copyname[NAMEDATALEN * 2];

	l->name = get_rel_name(view);
	if (l->name == NULL)
		layout_not_found(view);
	l->nsp = get_rel_namespace(view);
	snprintf(copyname, sizeof(copyname), "%s_b1", l->name);
	l->copy1 = get_relname_relid(copyname, l->nsp);
	if (!OidIsValid(l->copy1) || get_rel_relkind(l->copy1) != RELKIND_PARTITIONED_TABLE)
		layout_not_found(view);
	l->blocks = first_block_key_blocks(l->copy1);
	if (l->blocks < ND_PERMUTE_MIN_BLOCKS || l->blocks > ND_PERMUTE_MAX_BLOCKS)
		layout_not_found(view);
}

/* simhash_layout_blocks(layout regclass) returns int4 */
PG_FUNCTION_INFO_V1(simhash_layout_blocks);
Datum
simhash_layout_blocks(PG_FUNCTION_ARGS)
{
	Layout		l;

	layout_find(PG_GETARG_OID(0), &l);
	PG_RETURN_INT32(l.blocks);
}
