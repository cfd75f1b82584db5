/*-------------------------------------------------------------------------
 *
 * pack.c
 *		A packed copy's rows (doc/scale-out.md, "Packed copies"): copy b > 1
 *		of a block-sharded layout may keep its (id, sh) rows as packs, one
 *		heap row per run of up to SIMHASH_PACK_ROWS rows that share block b,
 *		in place of a heap row each.  A heap row costs 28 bytes of header
 *		and line pointer around its 16 bytes of data; a pack shares them
 *		among its rows.
 *
 *		A pack is a bytea of 16-byte (id, code) pairs, in the server's byte
 *		order (it never leaves the shard: copies move as rows).  These
 *		functions build, read and shrink one; simhash_shard_create's SQL
 *		(the view, its triggers, simhash_shard_merge) does the rest.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "pg_compat.h"
#include "type/hamming_ball.h"
#include "type/simhash64.h"

#define PACK_PAIR	(2 * sizeof(int64))

/* the pairs of a pack, after checking that it holds whole pairs */
static const char *
pack_pairs(bytea *pack, int *n)
{
	Size		len = VARSIZE_ANY_EXHDR(pack);

	if (len % PACK_PAIR != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("a simhash pack must hold whole 16-byte (id, code) pairs, not %zu bytes", len)));
	*n = (int) (len / PACK_PAIR);
	return VARDATA_ANY(pack);
}

/* pair i of a pack (the bytes are not aligned) */
static inline void
pack_pair(const char *pairs, int i, int64 *id, uint64 *code)
{
	memcpy(id, pairs + i * PACK_PAIR, sizeof(*id));
	memcpy(code, pairs + i * PACK_PAIR + sizeof(*id), sizeof(*code));
}

/* the first pair equal to (id, code), or -1 */
static int
pack_find(const char *pairs, int n, int64 id, uint64 code)
{
	for (int i = 0; i < n; i++)
	{
		int64		pid;
		uint64		pcode;

		pack_pair(pairs, i, &pid, &pcode);
		if (pid == id && pcode == code)
			return i;
	}
	return -1;
}

/* simhash_pack_row(id int8, sh simhash64) returns bytea: a pack of one row */
PG_FUNCTION_INFO_V1(simhash_pack_row);
Datum
simhash_pack_row(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	uint64		code = PG_GETARG_SIMHASH64(1);
	bytea	   *pack = palloc(VARHDRSZ + PACK_PAIR);

	SET_VARSIZE(pack, VARHDRSZ + PACK_PAIR);
	memcpy(VARDATA(pack), &id, sizeof(id));
	memcpy(VARDATA(pack) + sizeof(id), &code, sizeof(code));
	PG_RETURN_BYTEA_P(pack);
}

/* simhash_pack_rows(pack bytea) returns table(id int8, sh simhash64) */
PG_FUNCTION_INFO_V1(simhash_pack_rows);
Datum
simhash_pack_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bytea	   *pack = PG_GETARG_BYTEA_PP(0);
	const char *pairs;
	int			n;

	pairs = pack_pairs(pack, &n);
	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < n; i++)
	{
		int64		id;
		uint64		code;
		Datum		values[2];
		bool		nulls[2] = {false, false};

		pack_pair(pairs, i, &id, &code);
		values[0] = Int64GetDatum(id);
		values[1] = Simhash64GetDatum(code);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * The pairs of the pack of argument 0 and the first that equals (argument
 * 1, argument 2), or -1.
 */
static int
pack_find_args(FunctionCallInfo fcinfo, const char **pairs, int *n)
{
	*pairs = pack_pairs(PG_GETARG_BYTEA_PP(0), n);
	return pack_find(*pairs, *n, PG_GETARG_INT64(1), PG_GETARG_SIMHASH64(2));
}

/* simhash_pack_holds(pack bytea, id int8, sh simhash64) returns bool */
PG_FUNCTION_INFO_V1(simhash_pack_holds);
Datum
simhash_pack_holds(PG_FUNCTION_ARGS)
{
	const char *pairs;
	int			n;

	PG_RETURN_BOOL(pack_find_args(fcinfo, &pairs, &n) >= 0);
}

/*
 * simhash_pack_remove(pack bytea, id int8, sh simhash64) returns bytea: the
 * pack without the first pair equal to (id, sh) (a copy without a key may
 * hold a row twice, and a delete removes one row), the pack itself if it
 * holds none.
 */
PG_FUNCTION_INFO_V1(simhash_pack_remove);
Datum
simhash_pack_remove(PG_FUNCTION_ARGS)
{
	const char *pairs;
	int			n;
	int			at = pack_find_args(fcinfo, &pairs, &n);
	bytea	   *out;

	if (at < 0)
		PG_RETURN_BYTEA_P(PG_GETARG_BYTEA_PP(0));
	out = palloc(VARHDRSZ + (n - 1) * PACK_PAIR);
	SET_VARSIZE(out, VARHDRSZ + (n - 1) * PACK_PAIR);
	memcpy(VARDATA(out), pairs, at * PACK_PAIR);
	memcpy(VARDATA(out) + at * PACK_PAIR, pairs + (at + 1) * PACK_PAIR,
		   (n - at - 1) * PACK_PAIR);
	PG_RETURN_BYTEA_P(out);
}

/*
 * simhash_in_block(sh simhash64, v int8, block int4, blocks int4) returns
 * simhash64: sh, whose block `block` of `blocks` is v.  A packed copy's
 * view gives its packed rows' codes through it, so that the planner may
 * read simhash_block(sh, block, blocks) of those rows as their pack's v
 * (simhash_block_support, planner/block_support.c): a query's block values,
 * one or many, then select packs through the index on v.  A code that is
 * not of v (a pack written wrong) is an error when its pack is read, rather
 * than a row returned under a block value it does not have; a search of
 * its true value, which reads other packs, does not see it.
 */
PG_FUNCTION_INFO_V1(simhash_in_block);
Datum
simhash_in_block(PG_FUNCTION_ARGS)
{
	uint64		code = PG_GETARG_SIMHASH64(0);
	int64		v = PG_GETARG_INT64(1);
	int32		block = PG_GETARG_INT32(2);
	int32		blocks = PG_GETARG_INT32(3);

	if (nd_checked_block(code, block, blocks) != v)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fingerprint %016llx is not of block value " INT64_FORMAT " of block %d of %d",
						(unsigned long long) code, v, block, blocks),
				 errdetail("Read from a packed copy's view, a pack holds a row of another block value.")));
	PG_RETURN_SIMHASH64(code);
}
