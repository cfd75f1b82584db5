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
 * and constant m (m is the layout's blocks), and each of <name>_b2 ..
 * <name>_b<m> is partitioned by the call with its b and the same m: the
 * extension's own simhash_block (by OID), on the column sh.
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
#include "miscadmin.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/fmgrprotos.h"
#include "fmgr.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "core/nd_permute.h"
#include "shard/layout_catalog.h"

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
 * The function of every copy's partition key: this extension's
 * simhash_block(simhash64, int4, int4), in the schema ext_nsp of the
 * function that asks (simhash_layout_blocks or simhash_layout_within_sql,
 * both in the extension's schema with simhash64 and simhash_block; only
 * its support functions are in neardup_internal).
 * Matched by OID, so a function of that name elsewhere is not it.
 */
static Oid
block_function(Oid ext_nsp)
{
	Oid			argtypes[3];

	argtypes[0] = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
								  CStringGetDatum("simhash64"), ObjectIdGetDatum(ext_nsp));
	argtypes[1] = INT4OID;
	argtypes[2] = INT4OID;
	if (!OidIsValid(argtypes[0]))
		return InvalidOid;
	return LookupFuncName(list_make2(makeString(get_namespace_name(ext_nsp)),
									 makeString("simhash_block")),
						  3, argtypes, true);
}

/*
 * Whether `copy` is partitioned by exactly fn(sh, b, m): one key, an
 * expression calling fn on the copy's column sh with the constants b and
 * m.  With b = 1 and *m = 0, m is read from the key (any constant) into
 * *m; otherwise it must equal *m.
 */
static bool
copy_key_matches(Oid copy, Oid fn, int b, int *m)
{
	HeapTuple	tp;
	Form_pg_partitioned_table form;
	Datum		exprs;
	bool		isnull;
	List	   *keys = NIL;
	FuncExpr   *f;
	Var		   *col;
	Const	   *cb;
	Const	   *cm;

	tp = SearchSysCache1(PARTRELID, ObjectIdGetDatum(copy));
	if (!HeapTupleIsValid(tp))
		return false;
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
		return false;
	f = (FuncExpr *) linitial(keys);
	if (!OidIsValid(fn) || f->funcid != fn || list_length(f->args) != 3 ||
		!IsA(linitial(f->args), Var) ||
		!IsA(lsecond(f->args), Const) || !IsA(lthird(f->args), Const))
		return false;
	/* the column the searches name: sh */
	col = (Var *) linitial(f->args);
	if (col->varattno != get_attnum(copy, "sh"))
		return false;
	cb = (Const *) lsecond(f->args);
	cm = (Const *) lthird(f->args);
	if (cb->consttype != INT4OID || cb->constisnull || DatumGetInt32(cb->constvalue) != b ||
		cm->consttype != INT4OID || cm->constisnull)
		return false;
	if (*m == 0)
		*m = DatumGetInt32(cm->constvalue);
	return DatumGetInt32(cm->constvalue) == *m;
}

static void
layout_mismatch(Oid view, Oid copy, const char *copyname, Oid ext_nsp, int b, int m)
{
	const char *key = copy == InvalidOid ? NULL
	: TextDatumGetCString(DirectFunctionCall1(pg_get_partkeydef, ObjectIdGetDatum(copy)));

	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("\"%s\" is not a block-sharded layout",
					DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(view)))),
			 key == NULL
			 ? errdetail("Its copy %d, the partitioned table %s, does not exist.", b, copyname)
			 : errdetail("Its copy %d, %s, is partitioned by %s, not by %s.simhash_block(sh, %d, %d).",
						 b, copyname, key, quote_identifier(get_namespace_name(ext_nsp)), b, m),
			 errhint("Each copy b of a layout of m blocks is partitioned by simhash_block(sh, b, m), as simhash_layout_create() makes it; a copy partitioned otherwise would make searches miss rows.")));
}

/*
 * The layout a view names; 42809 if it names none.  Every copy's key is
 * checked, not only the first: a copy partitioned by another block (or
 * another m, or column) would hold every row but in the wrong partitions,
 * and a search that reads one partition of it would silently miss rows.
 */
void
layout_find(Oid view, Oid ext_nsp, Layout *l)
{
	char		copyname[NAMEDATALEN * 2];
	Oid			fn = block_function(ext_nsp);
	int			m = 0;

	l->name = get_rel_name(view);
	if (l->name == NULL)
		layout_not_found(view);
	l->nsp = get_rel_namespace(view);
	snprintf(copyname, sizeof(copyname), "%s_b1", l->name);
	l->copy1 = get_relname_relid(copyname, l->nsp);
	/* no copy 1 of the layout's shape: not a layout at all */
	if (!OidIsValid(l->copy1) || get_rel_relkind(l->copy1) != RELKIND_PARTITIONED_TABLE ||
		!copy_key_matches(l->copy1, fn, 1, &m) ||
		m < ND_PERMUTE_MIN_BLOCKS || m > ND_PERMUTE_MAX_BLOCKS)
		layout_not_found(view);
	l->blocks = m;
	for (int b = 2; b <= m; b++)
	{
		Oid			copy;

		CHECK_FOR_INTERRUPTS();
		snprintf(copyname, sizeof(copyname), "%s_b%d", l->name, b);
		copy = get_relname_relid(copyname, l->nsp);
		if (!OidIsValid(copy) || get_rel_relkind(copy) != RELKIND_PARTITIONED_TABLE)
			layout_mismatch(view, InvalidOid, copyname, ext_nsp, b, m);
		if (!copy_key_matches(copy, fn, b, &m))
			layout_mismatch(view, copy, copyname, ext_nsp, b, m);
	}
}

/* simhash_layout_blocks(layout regclass) returns int4 */
PG_FUNCTION_INFO_V1(simhash_layout_blocks);
Datum
simhash_layout_blocks(PG_FUNCTION_ARGS)
{
	Layout		l;

	layout_find(PG_GETARG_OID(0), get_func_namespace(fcinfo->flinfo->fn_oid), &l);
	PG_RETURN_INT32(l.blocks);
}
