/*-------------------------------------------------------------------------
 *
 * minhash_clusters.c
 *		minhash_clusters(): the connected components of "shares an LSH band
 *		and the signatures' Jaccard estimate is at least threshold", as
 *		(id, cluster_id), computed with band buckets and a union-find
 *		(src/core/nd_lsh_clusters.c) without forming the candidate pairs:
 *		equal to dedup_clusters over the verified band-join pairs
 *		(minhash_similar()), in space linear in the rows.
 *
 * The rows come from a query run as the caller (the table forms build it).
 * Signatures are kept in memory (4 bytes per value: 512 bytes a row at
 * num_perm 128), with 24 bytes a row for the union-find and 36 of scratch;
 * the estimate needs the whole signatures, and they are read once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "shared/context_realloc.h"
#include "shared/progress.h"
#include "core/nd_lsh_clusters.h"
#include "core/nd_minhash.h"
#include "core/nd_unionfind.h"
#include "dedup/cluster_output.h"
#include "dedup/query_rows.h"
#include "minhash/minhash.h"

typedef struct MinhashRows
{
	nd_unionfind uf;			/* element i: the i-th row read */
	uint32	   *sigs;			/* row i at sigs + i * k */
	size_t		cap;			/* rows sigs can hold */
	int			k;				/* signature length, from the first row */
	Oid			idtype;
	MemoryContext cxt;
} MinhashRows;

static void
read_shape(TupleDesc desc, double est_rows, void *arg)
{
	MinhashRows *mr = (MinhashRows *) arg;

	if (desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("minhash_clusters query must return two columns: an integer id and an int4[] signature")));
	mr->idtype = getBaseType(TupleDescAttr(desc, 0)->atttypid);
	if (!nd_is_int_type(mr->idtype))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("minhash_clusters id column must be of type smallint, integer or bigint, not %s",
						format_type_be(TupleDescAttr(desc, 0)->atttypid)),
				 errhint("Map other keys to integers first, for example with row_number() or a bigserial column in a mapping table.")));
	if (getBaseType(TupleDescAttr(desc, 1)->atttypid) != INT4ARRAYOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("minhash_clusters signature column must be of type integer[], not %s",
						format_type_be(TupleDescAttr(desc, 1)->atttypid))));
}

static void
read_row(Datum *values, bool *nulls, void *arg)
{
	MinhashRows *mr = (MinhashRows *) arg;
	ArrayType  *arr;
	const uint32 *sig;
	int			k;
	uint32		i;

	if (nulls[1])
		return;
	if (nulls[0])
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("minhash_clusters id must not be null")));
	arr = DatumGetArrayTypeP(values[1]);
	sig = nd_minhash_sig_array(arr, &k);
	if (mr->k == 0)
		mr->k = k;
	else if (k != mr->k)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("minhash signatures must have the same length"),
				 errdetail("The signatures have %d and %d values.", mr->k, k)));
	i = nd_clusters_add_row(&mr->uf, nd_int_datum(values[0], mr->idtype), "minhash_clusters");
	if (i >= mr->cap)
	{
		mr->cap = mr->cap == 0 ? 1024 : mr->cap * 2;
		mr->sigs = mr->sigs == NULL ?
			MemoryContextAllocHuge(mr->cxt, mr->cap * k * sizeof(uint32)) :
			repalloc_huge(mr->sigs, mr->cap * k * sizeof(uint32));
	}
	memcpy(mr->sigs + (size_t) i * k, sig, (size_t) k * sizeof(uint32));
	if ((Pointer) arr != DatumGetPointer(values[1]))
		pfree(arr);
}

static void
clusters_tick(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * The body of every form: query NULL gives no rows; threshold must be in
 * [0, 1]; bands and rows both given (positive, bands * rows <= num_perm)
 * or both NULL (chosen as minhash_lsh_params(threshold, num_perm) does, or,
 * with recall > 0 (checked), as minhash_lsh_params(threshold, num_perm,
 * recall => recall) does).
 */
static void
minhash_clusters_body(FunctionCallInfo fcinfo, const char *query, float8 threshold,
					  bool auto_bands, int32 bands, int32 rows, float8 recall)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext cxt,
				oldcxt;
	MinhashRows mr;
	void	   *scratch;
	uint64		estimates;

	InitMaterializedSRF(fcinfo, 0);
	if (!(threshold >= 0.0 && threshold <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("threshold must be between 0 and 1")));
	if (!auto_bands && (bands < 1 || rows < 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands and rows must be positive"),
				 errdetail("bands is %d and rows is %d.", bands, rows)));

	cxt = AllocSetContextCreate(CurrentMemoryContext, "minhash_clusters",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);
	memset(&mr, 0, sizeof(mr));
	mr.cxt = cxt;
	nd_uf_init(&mr.uf, nd_context_realloc, cxt);

	nd_progress_begin("minhash_clusters");
	nd_query_for_each_row(query, "minhash_clusters query",
						  "Give a SELECT (or VALUES) returning an integer id and a minhash signature.",
						  read_shape, read_row, &mr);

	if (mr.uf.n > 0)
	{
		if (auto_bands && recall > 0.0)
			nd_lsh_params_for_recall(threshold, mr.k, recall, &bands, &rows);
		else if (auto_bands)
			nd_lsh_params_tick(threshold, mr.k, 0.5, 0.5, &bands, &rows, clusters_tick, NULL);
		else if ((int64) bands * rows > mr.k)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%d bands of %d rows need %lld signature values",
							bands, rows, (long long) bands * rows),
					 errdetail("The signatures have %d values.", mr.k)));
		nd_progress_phase("joining band buckets", -1);
		scratch = palloc_extended(nd_lsh_clusters_scratch_size(mr.uf.n), MCXT_ALLOC_HUGE);
		estimates = nd_lsh_clusters_run(mr.sigs, mr.uf.n, mr.k, bands, rows, threshold,
										&mr.uf, scratch, clusters_tick, NULL);
		elog(DEBUG1, "minhash_clusters: %u rows, %d bands of %d rows, " UINT64_FORMAT " estimates, %zu bytes",
			 mr.uf.n, bands, rows, estimates, MemoryContextMemAllocated(cxt, true));
		pfree(scratch);
		nd_progress_phase("writing clusters", mr.uf.n);
		nd_clusters_output(&mr.uf, rsinfo->setResult, rsinfo->setDesc);
	}
	nd_progress_end();

	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
}

static float8
threshold_arg(FunctionCallInfo fcinfo, int argno)
{
	nd_require_arg(fcinfo, argno, "threshold");
	return PG_GETARG_FLOAT8(argno);
}

/* the table forms' source and columns: NULL is an error (nd_require_arg) */
static void
rel_args_check(FunctionCallInfo fcinfo)
{
	nd_require_arg(fcinfo, 0, "source");
	nd_require_arg(fcinfo, 1, "id_column");
	nd_require_arg(fcinfo, 2, "signature_column");
	nd_require_arg(fcinfo, 3, "threshold");
}

/* bands and rows at argno, argno + 1: both NULL (auto) or both given */
static bool
auto_bands_args(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno) != PG_ARGISNULL(argno + 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands and rows must be given together, or both left out")));
	return PG_ARGISNULL(argno);
}

/*
 * recall at argno: 0.3's forms have it (NULL: not asked for, -1 here), 0.2's
 * do not.  It picks bands and rows, so it excludes giving them.
 */
static float8
recall_arg(FunctionCallInfo fcinfo, int argno, bool auto_bands)
{
	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return -1.0;
	if (!auto_bands)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("recall cannot be given with bands and rows"),
				 errhint("recall chooses bands and rows: give either recall or bands and rows.")));
	/* NaN and negative values get the range error, not "not asked for" */
	nd_check_lsh_recall(PG_GETARG_FLOAT8(argno));
	return PG_GETARG_FLOAT8(argno);
}

static void
call_body(FunctionCallInfo fcinfo, const char *query, int targ)
{
	bool		auto_bands = auto_bands_args(fcinfo, targ + 1);
	float8		threshold = threshold_arg(fcinfo, targ);
	float8		recall = recall_arg(fcinfo, targ + 3, auto_bands);

	minhash_clusters_body(fcinfo, query, threshold, auto_bands,
						  auto_bands ? 0 : PG_GETARG_INT32(targ + 1),
						  auto_bands ? 0 : PG_GETARG_INT32(targ + 2),
						  recall);
}

/*
 * minhash_clusters(query text, threshold float8 DEFAULT 0.8, bands int4
 * DEFAULT NULL, rows int4 DEFAULT NULL[, recall float8 DEFAULT NULL])
 */
PG_FUNCTION_INFO_V1(minhash_clusters_query);
Datum
minhash_clusters_query(PG_FUNCTION_ARGS)
{
	nd_require_arg(fcinfo, 0, "query");
	nd_require_arg(fcinfo, 1, "threshold");
	call_body(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(0)), 1);
	return (Datum) 0;
}

/*
 * minhash_clusters(source regclass, id_column name, signature_column name,
 * threshold, bands, rows[, recall])
 */
PG_FUNCTION_INFO_V1(minhash_clusters_rel);
Datum
minhash_clusters_rel(PG_FUNCTION_ARGS)
{
	rel_args_check(fcinfo);
	call_body(fcinfo, nd_rel_query(PG_GETARG_OID(0), NameStr(*PG_GETARG_NAME(1)),
								   NameStr(*PG_GETARG_NAME(2))), 3);
	return (Datum) 0;
}

/* minhash_clusters(source text, id_column text, signature_column text, ...) */
PG_FUNCTION_INFO_V1(minhash_clusters_relname);
Datum
minhash_clusters_relname(PG_FUNCTION_ARGS)
{
	rel_args_check(fcinfo);
	call_body(fcinfo, nd_relname_query(PG_GETARG_TEXT_PP(0), PG_GETARG_TEXT_PP(1),
									   PG_GETARG_TEXT_PP(2)), 3);
	return (Datum) 0;
}
