/*-------------------------------------------------------------------------
 *
 * layout_within.c
 *		simhash_layout_within_sql(layout, fingerprint, max_distance): the
 *		query for the rows of a block-sharded layout within max_distance
 *		bits of a fingerprint, each once (doc/scale-out.md, "The block
 *		layout").
 *
 * Below the layout's blocks, one partition in each of the first
 * max_distance + 1 copies (the sharpened pigeonhole of nd_permute.h): copy b
 * answers for the rows whose first block equal to the fingerprint's is b, so
 * no row comes twice, and searches them as a block ball (hamming_ball.h),
 * one table of its hamming index.  From `blocks` bits up, every partition
 * of copy 1.
 *
 * Each arm names the partition that holds the fingerprint's block value,
 * found from the copy's partition bounds in the relcache (the partition a
 * tuple with that key would be routed to), rather than leaving it to
 * partition pruning: PostgreSQL 15 runs a copy pruned to one partition as a
 * plain Foreign Scan, one shard after another, where the partitions named in
 * one UNION ALL are read together (Async Foreign Scans).  Found by its
 * bounds, a partition may have any name.  A partition the caller may not
 * SELECT, or a copy or partition with row security active for the caller,
 * is left to pruning instead (may_name_partition): the query then reads
 * what the caller reads through the copies.  It is C, not PL/pgSQL, because
 * the catalog queries of a PL/pgSQL version took 1.5 ms of a 4-5 ms search.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "core/nd_permute.h"
#include "dedup/query_rows.h"
#include "shard/layout_catalog.h"
#include "type/hamming_ball.h"
#include "type/simhash64.h"

/*
 * Copy b of a layout (from 1): its partitioned table <name>_b<b>, locked
 * for reading as the query will be; NULL if there is none.
 */
static Relation
open_copy(const Layout *l, int b)
{
	char		copyname[NAMEDATALEN * 2];
	Oid			relid;
	Relation	rel;

	snprintf(copyname, sizeof(copyname), "%s_b%d", l->name, b);
	relid = get_relname_relid(copyname, l->nsp);
	if (!OidIsValid(relid))
		return NULL;
	/* the caller reads it (its partitions) in the query: no lock without that */
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, copyname);
	rel = table_open(relid, AccessShareLock);
	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
	{
		table_close(rel, AccessShareLock);
		return NULL;
	}
	return rel;
}

/*
 * The layout a view names (layout_catalog.c) and its first copy, checked
 * for SELECT and locked; 42809 if the view names none.
 */
static Relation
layout_lookup(Oid view, Oid ext_nsp, Layout *l)
{
	Relation	copy1;

	layout_find(view, ext_nsp, l);
	copy1 = open_copy(l, 1);
	/* dropped, or dropped and made again, since the lookup */
	if (copy1 == NULL || RelationGetRelid(copy1) != l->copy1)
		layout_not_found(view);
	return copy1;
}

/*
 * The partition of copy `copy` (range-partitioned by one bigint) that holds
 * block value v, or InvalidOid when none does but a default partition
 * might (the caller then names the copy and lets pruning choose).
 */
static Oid
partition_of(Relation copy, int64 v)
{
	PartitionKey key = RelationGetPartitionKey(copy);
	PartitionDesc pd = RelationGetPartitionDesc(copy, true);
	PartitionBoundInfo bi = pd->boundinfo;
	Datum		value = Int64GetDatum(v);
	bool		equal;
	int			offset,
				index;

	if (bi == NULL || key->strategy != PARTITION_STRATEGY_RANGE ||
		key->partnatts != 1 || key->parttypid[0] != INT8OID)
		return InvalidOid;
	offset = partition_range_datum_bsearch(key->partsupfunc, key->partcollation,
										   bi, 1, &value, &equal);
	index = bi->indexes[offset + 1];
	return index < 0 ? InvalidOid : pd->oids[index];
}

/*
 * Whether the query may name partition `part` of `copy` rather than the
 * copy: PostgreSQL checks the privileges and applies the row security of
 * the table a query names, so a partition named directly would need SELECT
 * of its own and would skip the copy's policies (and apply its own).  Named
 * only when the caller may read it and neither has row security active for
 * the caller; then the answer is the same as through the copy.
 */
static bool
may_name_partition(Relation copy, Oid part)
{
	return pg_class_aclcheck(part, GetUserId(), ACL_SELECT) == ACLCHECK_OK &&
		check_enable_rls(RelationGetRelid(copy), InvalidOid, true) != RLS_ENABLED &&
		check_enable_rls(part, InvalidOid, true) != RLS_ENABLED;
}

static const char *
qualified(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/* simhash_layout_within_sql(layout regclass, fingerprint simhash64, max_distance int4) */
PG_FUNCTION_INFO_V1(simhash_layout_within_sql);
Datum
simhash_layout_within_sql(PG_FUNCTION_ARGS)
{
	Oid			view;
	uint64		code;
	int32		r;
	Layout		l;
	Relation	copy1;
	nd_layout	blocks;
	const char *ext;
	char	   *q;
	StringInfoData sql;

	nd_require_arg(fcinfo, 0, "layout");
	nd_require_arg(fcinfo, 1, "fingerprint");
	nd_require_arg(fcinfo, 2, "max_distance");
	view = PG_GETARG_OID(0);
	code = PG_GETARG_SIMHASH64(1);
	r = PG_GETARG_INT32(2);
	/* the arguments first, before any catalog lookup */
	hamming_check_radius("max_distance", r);
	copy1 = layout_lookup(view, get_func_namespace(fcinfo->flinfo->fn_oid), &l);

	/* the extension's schema: this function's */
	ext = quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid)));
	q = psprintf("%s::%s.simhash64",
				 quote_literal_cstr(DatumGetCString(DirectFunctionCall1(simhash64_out,
																		PG_GETARG_DATUM(1)))),
				 ext);
	initStringInfo(&sql);

	if (r >= l.blocks)
	{
		appendStringInfo(&sql,
						 "SELECT id, sh, sh OPERATOR(%1$s.<~>) %2$s AS distance FROM %3$s "
						 "WHERE sh OPERATOR(%1$s.<~>) %2$s OPERATOR(pg_catalog.<=) %4$d",
						 ext, q, qualified(l.copy1), r);
		table_close(copy1, NoLock);
		PG_RETURN_TEXT_P(cstring_to_text(sql.data));
	}

	nd_layout_init(&blocks, l.blocks);
	for (int b = 1; b <= r + 1; b++)
	{
		int64		v = (int64) nd_block(&blocks, b - 1, code);
		Relation	copy = b == 1 ? copy1 : open_copy(&l, b);
		Oid			part;

		if (copy == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("copy %d of block-sharded layout \"%s\" does not exist", b, l.name),
					 errdetail("simhash_layout_create() makes a partitioned table %s_b%d.", l.name, b)));
		part = partition_of(copy, v);

		/*
		 * No partition holds v, or the caller may not read it as the copy:
		 * name the copy, and let the planner prune to the partition (a plain
		 * Foreign Scan, not read together with the other arms).
		 */
		if (!OidIsValid(part) || !may_name_partition(copy, part))
			part = RelationGetRelid(copy);
		if (b > 1)
			appendStringInfoString(&sql, " UNION ALL ");
		/*
		 * The block ball is the index condition, which a hamming index of
		 * the layout's blocks answers from the copy's own table; the block's
		 * equality is the partition key's, for pruning.
		 */
		appendStringInfo(&sql,
						 "SELECT id, sh, sh OPERATOR(%1$s.<~>) %2$s AS distance FROM %3$s "
						 "WHERE %1$s.simhash_block(sh, %4$d, %5$d) OPERATOR(pg_catalog.=) %6$s "
						 "AND sh OPERATOR(%1$s.<@) %1$s.hamming_block_ball(%2$s, %7$d, %4$d, %5$d)",
						 ext, q, qualified(part), b, l.blocks, psprintf(INT64_FORMAT, v), r);
		/* the rows an earlier copy answers for */
		for (int e = 1; e < b; e++)
			appendStringInfo(&sql,
							 " AND %s.simhash_block(sh, %d, %d) OPERATOR(pg_catalog.<>) %s",
							 ext, e, l.blocks,
							 psprintf(INT64_FORMAT, (int64) nd_block(&blocks, e - 1, code)));
		table_close(copy, NoLock);
	}
	PG_RETURN_TEXT_P(cstring_to_text(sql.data));
}
