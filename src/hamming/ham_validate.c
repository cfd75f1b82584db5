/*-------------------------------------------------------------------------
 *
 * ham_validate.c
 *		amvalidate: what an operator class of the hamming access method may
 *		contain.
 *
 * The access method knows its strategies itself (ham_scan.c reads
 * the arguments as a simhash64 and a hamming_ball), so an operator family
 * may hold exactly: <@ (simhash64, hamming_ball) as strategy 1, =
 * (simhash64, simhash64) or (simhash64, bigint) as 2 (the bigint is the
 * code's 64 bits, one Datum as the code's), <~> (simhash64, simhash64) FOR
 * ORDER BY as 3, && (hamming_ball, hamming_ball) as 4 and <@ (simhash64,
 * hamming_block_ball) as 5; no support functions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "shared/extension_catalog.h"
#include "hamming/hamming.h"

bool
ham_validate(Oid opclassoid)
{
	const NdCatalog *cat = nd_catalog();
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	char	   *opfamilyname;
	CatCList   *proclist,
			   *oprlist;
	HeapTuple	familytup;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;

	familytup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamilyoid));
	if (!HeapTupleIsValid(familytup))
		elog(ERROR, "cache lookup failed for operator family %u", opfamilyoid);
	opfamilyname = pstrdup(NameStr(((Form_pg_opfamily) GETSTRUCT(familytup))->opfname));
	ReleaseSysCache(familytup);

	if (classform->opcintype != cat->simhash64_type &&
		classform->opcintype != cat->hamming_ball_type)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("hamming operator class %s is not for type simhash64 or hamming_ball",
						NameStr(classform->opcname))));
		result = false;
	}

	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
	for (int i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("hamming operator family %s contains support function %s, but the access method has none",
						opfamilyname, format_procedure(procform->amproc))));
		result = false;
	}

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	for (int i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		bool		ok;

		switch (oprform->amopstrategy)
		{
			case HAM_STRATEGY_WITHIN:
				ok = oprform->amoppurpose == AMOP_SEARCH &&
					check_amop_signature(oprform->amopopr, BOOLOID,
										 cat->simhash64_type, cat->hamming_ball_type);
				break;
			case HAM_STRATEGY_EQUAL:
				ok = oprform->amoppurpose == AMOP_SEARCH &&
					(check_amop_signature(oprform->amopopr, BOOLOID,
										  cat->simhash64_type, cat->simhash64_type) ||
					 /* read as the code's bits: the scan takes it for one */
					 check_amop_signature(oprform->amopopr, BOOLOID,
										  cat->simhash64_type, INT8OID));
				break;
			case HAM_STRATEGY_DISTANCE:
				ok = oprform->amoppurpose == AMOP_ORDER &&
					OidIsValid(oprform->amopsortfamily) &&
					check_amop_signature(oprform->amopopr, INT4OID,
										 cat->simhash64_type, cat->simhash64_type);
				break;
			case HAM_STRATEGY_COLLIDES:
				ok = oprform->amoppurpose == AMOP_SEARCH &&
					check_amop_signature(oprform->amopopr, BOOLOID,
										 cat->hamming_ball_type, cat->hamming_ball_type);
				break;
			case HAM_STRATEGY_WITHIN_BLOCK:
				ok = oprform->amoppurpose == AMOP_SEARCH &&
					OidIsValid(cat->hamming_block_ball_type) &&
					check_amop_signature(oprform->amopopr, BOOLOID,
										 cat->simhash64_type, cat->hamming_block_ball_type);
				break;
			default:
				ok = false;
		}
		if (!ok)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("hamming operator family %s contains operator %s with strategy %d, which is not the access method's",
							opfamilyname, format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
		}
	}

	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}
