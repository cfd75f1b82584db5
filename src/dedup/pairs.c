/*-------------------------------------------------------------------------
 *
 * pairs.c
 *		simhash_pairs(): every pair of rows whose fingerprints are within a
 *		Hamming distance, exactly, with permuted sorted tables in memory
 *		(src/core/nd_allpairs.c; doc/dedup.md).
 *
 * The rows come from a query run as the caller through an SPI cursor, like
 * tablefunc's crosstab(); the regclass form only builds that query.  The
 * (id, code) pairs are kept in memory while they fit in work_mem (with the
 * core's scratch space); beyond that they go to a temporary file and every
 * table is processed in batches: the rows are partitioned by the leading
 * bits of the table's key, so that rows with equal keys, the only ones the
 * table compares, land in the same batch.  Results go to a tuplestore,
 * which spills to disk past work_mem on its own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "nd_allpairs.h"
#include "pairs_args.h"
#include "query_rows.h"
#include "simhash64.h"

/* rows fetched from the cursor at a time */
/* at most 2^MAX_BATCH_BITS batch files per table (one buffer each) */
#define MAX_BATCH_BITS 10

typedef struct PairsRun
{
	/* input */
	nd_pair_item *items;		/* in-memory rows, or the spill buffer */
	size_t		n;				/* rows in items */
	size_t		cap;			/* allocated items */
	size_t		budget;			/* rows that fit in work_mem */
	BufFile    *spill;			/* all rows, once past the budget */
	MemoryContext cxt;			/* where they live */
	uint64		total;			/* rows read (NULL fingerprints excluded) */

	/* output */
	Tuplestorestate *tupstore;
	TupleDesc	tupdesc;
	int			ntables;
	int			nbatches;
} PairsRun;

static void
pairs_emit(void *arg, int64_t id_a, int64_t id_b, int dist)
{
	PairsRun   *run = (PairsRun *) arg;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = Int64GetDatum(id_a);
	values[1] = Int64GetDatum(id_b);
	values[2] = Int32GetDatum(dist);
	tuplestore_putvalues(run->tupstore, run->tupdesc, values, nulls);
}

static void
pairs_tick(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

static void
pairs_table_start(void *arg, int t)
{
	PairsRun   *run = (PairsRun *) arg;

	elog(DEBUG1, "simhash_pairs: table %d of %d", t + 1, run->ntables);
}

/* The simhash64 type: in the schema of this function, whatever search_path. */
static Oid
simhash64_type_oid(FunctionCallInfo fcinfo)
{
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			typid;

	typid = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
							CStringGetDatum("simhash64"), ObjectIdGetDatum(nsp));
	if (!OidIsValid(typid))
		elog(ERROR, "type simhash64 not found in the extension's schema");
	return typid;
}

static void
check_shape(TupleDesc desc, Oid simhash_oid)
{
	Oid			idtype,
				fptype;

	if (desc == NULL || desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("simhash_pairs query must return two columns: an integer id and a simhash64 fingerprint")));
	idtype = getBaseType(TupleDescAttr(desc, 0)->atttypid);
	fptype = getBaseType(TupleDescAttr(desc, 1)->atttypid);
	if (!nd_is_int_type(idtype))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("simhash_pairs id column must be of type smallint, integer or bigint, not %s",
						format_type_be(TupleDescAttr(desc, 0)->atttypid)),
				 errhint("Map other keys to integers first, for example with row_number() or a bigserial column in a mapping table.")));
	if (fptype != simhash_oid)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("simhash_pairs fingerprint column must be of type simhash64, not %s",
						format_type_be(TupleDescAttr(desc, 1)->atttypid))));
}

static void
spill_write(BufFile *file, nd_pair_item *items, size_t n)
{
	if (n > 0)
		BufFileWrite(file, items, n * sizeof(nd_pair_item));
}

static void
read_exact(BufFile *file, void *ptr, size_t size)
{
	size_t		got = BufFileRead(file, ptr, size);

	if (got != size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from simhash_pairs temporary file: read only %zu of %zu bytes",
						got, size)));
}

/* Appends one row, spilling everything to a temporary file past budget. */
static inline void
add_row(PairsRun *run, int64 id, uint64 code)
{
	if (run->n == run->cap)
	{
		if (run->spill == NULL && run->n >= run->budget)
		{
			/* not in SPI's memory context, which SPI_finish() deletes */
			MemoryContext old = MemoryContextSwitchTo(run->cxt);

			/* from now on items is the write buffer of the spill file */
			run->spill = BufFileCreateTemp(false);
			MemoryContextSwitchTo(old);
			elog(DEBUG1, "simhash_pairs: more than %zu rows, spilling to a temporary file",
				 run->budget);
		}
		if (run->spill != NULL)
		{
			spill_write(run->spill, run->items, run->n);
			run->n = 0;
		}
		else
		{
			run->cap = Min(run->cap * 2, run->budget);
			run->items = repalloc_huge(run->items, run->cap * sizeof(nd_pair_item));
		}
	}
	run->items[run->n].id = id;
	run->items[run->n].code = code;
	run->n++;
	run->total++;
}

typedef struct ReadRows
{
	PairsRun   *run;
	Oid			simhash_oid;
	Oid			idtype;
} ReadRows;

static void
read_shape(TupleDesc desc, void *arg)
{
	ReadRows   *rr = (ReadRows *) arg;

	check_shape(desc, rr->simhash_oid);
	rr->idtype = getBaseType(TupleDescAttr(desc, 0)->atttypid);
}

static void
read_row(Datum *values, bool *nulls, void *arg)
{
	ReadRows   *rr = (ReadRows *) arg;

	if (nulls[1])
		return;
	if (nulls[0])
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("simhash_pairs id must not be null")));
	add_row(rr->run, nd_int_datum(values[0], rr->idtype),
			(uint64) DatumGetSimhash64(values[1]));
}

static void
read_rows(PairsRun *run, const char *query, Oid simhash_oid)
{
	ReadRows	rr = {run, simhash_oid, InvalidOid};

	nd_query_for_each_row(query, "simhash_pairs query",
						  "Give a SELECT (or VALUES) returning an integer id and a simhash64 fingerprint.",
						  read_shape, read_row, &rr);
}

/*
 * Past work_mem: for each table, partition the spilled rows by the leading
 * bits of the table's key into batch files, then run the core on one batch
 * at a time for that table only.
 */
static void
run_batched(PairsRun *run, const nd_pairs_plan *plan, const nd_pairs_sink *sink_in)
{
	nd_pairs_sink sink_copy = *sink_in;
	const nd_pairs_sink *sink = &sink_copy;
	uint64		want = (run->total + run->budget - 1) / run->budget * 2;
	int			pbits = 0;
	uint32		lead = nd_pairs_first_lead(plan);
	size_t		chunk = Min(run->cap, (size_t) 8192);
	nd_pair_item *readbuf = palloc(chunk * sizeof(nd_pair_item));
	BufFile   **batch;
	uint64	   *counts;
	void	   *scratch = NULL;
	size_t		scratch_rows = 0;

	/* twice as many batches as needed on average, for unevenness */
	while (((uint64) 1 << pbits) < want && pbits < MAX_BATCH_BITS &&
		   pbits < plan->min_keybits)
		pbits++;
	run->nbatches = 1 << pbits;
	batch = palloc0(sizeof(BufFile *) * run->nbatches);
	counts = palloc(sizeof(uint64) * run->nbatches);

	spill_write(run->spill, run->items, run->n);
	run->n = 0;
	/* one message per table, not per batch */
	sink_copy.table_start = NULL;
	elog(DEBUG1, "simhash_pairs: " UINT64_FORMAT " rows, %d blocks, %d tables, %d batches per table",
		 run->total, plan->nblocks, plan->ntables, run->nbatches);

	for (int t = 0; t < plan->ntables; t++, lead = nd_pairs_next_lead(lead))
	{
		nd_pairs_table tab;
		uint64		left = run->total;

		pairs_table_start(run, t);
		nd_pairs_table_init(plan, t, lead, &tab);
		for (int b = 0; b < run->nbatches; b++)
		{
			batch[b] = BufFileCreateTemp(false);
			counts[b] = 0;
		}
		if (BufFileSeek(run->spill, 0, 0, SEEK_SET) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not rewind simhash_pairs temporary file")));
		while (left > 0)
		{
			size_t		m = Min(left, (uint64) chunk);

			read_exact(run->spill, readbuf, m * sizeof(nd_pair_item));
			for (size_t i = 0; i < m; i++)
			{
				int			b = pbits == 0 ? 0 :
					(int) (nd_pairs_permute(&tab, readbuf[i].code) >> (64 - pbits));

				BufFileWrite(batch[b], &readbuf[i], sizeof(nd_pair_item));
				counts[b]++;
			}
			left -= m;
			CHECK_FOR_INTERRUPTS();
		}

		for (int b = 0; b < run->nbatches; b++)
		{
			size_t		cnt = counts[b];

			/*
			 * A batch may exceed the budget when keys are skewed: at worst
			 * it is every row, costing what the in-memory path would
			 * (doc/dedup.md); its long runs are split in the core.
			 */
			if (cnt > run->cap)
			{
				run->cap = cnt;
				run->items = repalloc_huge(run->items, cnt * sizeof(nd_pair_item));
			}
			if (cnt > scratch_rows || scratch == NULL)
			{
				if (scratch)
					pfree(scratch);
				scratch_rows = Max(cnt, run->budget);
				scratch = palloc_extended(nd_allpairs_scratch_size(scratch_rows),
										  MCXT_ALLOC_HUGE);
			}
			if (BufFileSeek(batch[b], 0, 0, SEEK_SET) != 0)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not rewind simhash_pairs temporary file")));
			if (cnt > 0)
				read_exact(batch[b], run->items, cnt * sizeof(nd_pair_item));
			BufFileClose(batch[b]);
			batch[b] = NULL;
			nd_allpairs_run(plan, run->items, cnt, t, t + 1, scratch, sink);
		}
	}
	BufFileClose(run->spill);
	run->spill = NULL;
}

static void
pairs_common(FunctionCallInfo fcinfo, const char *query, int k, bool auto_blocks,
			 int blocks)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			simhash_oid = simhash64_type_oid(fcinfo);
	MemoryContext cxt,
				oldcxt;
	PairsRun	run;
	nd_pairs_plan plan;
	nd_pairs_sink sink;

	nd_check_pairs_args(k, auto_blocks, blocks);

	InitMaterializedSRF(fcinfo, 0);

	cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash_pairs",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	memset(&run, 0, sizeof(run));
	run.cxt = cxt;
	run.tupstore = rsinfo->setResult;
	run.tupdesc = rsinfo->setDesc;
	/* each row in memory costs its item and its share of the scratch */
	run.budget = Max((size_t) 1024,
					 (size_t) work_mem * 1024 /
					 (sizeof(nd_pair_item) +
					  nd_allpairs_scratch_size(2) - nd_allpairs_scratch_size(1)));
	run.cap = Min(run.budget, (size_t) 4096);
	run.items = palloc_extended(run.cap * sizeof(nd_pair_item), MCXT_ALLOC_HUGE);

	read_rows(&run, query, simhash_oid);
	if (run.total >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("simhash_pairs supports fewer than 2^32 rows")));

	if (auto_blocks)
		blocks = nd_pairs_auto_blocks(k, (double) run.total);
	nd_pairs_plan_init(&plan, k, blocks);
	run.ntables = plan.ntables;

	sink.emit = pairs_emit;
	sink.tick = pairs_tick;
	sink.table_start = pairs_table_start;
	sink.arg = &run;

	if (run.spill == NULL)
	{
		void	   *scratch;

		/* give back what the doubling overshot before the scratch comes */
		if (run.n > 0 && run.cap > run.n + run.n / 8)
		{
			run.items = repalloc_huge(run.items, run.n * sizeof(nd_pair_item));
			run.cap = run.n;
		}
		scratch = palloc_extended(nd_allpairs_scratch_size(run.n), MCXT_ALLOC_HUGE);

		elog(DEBUG1, "simhash_pairs: " UINT64_FORMAT " rows, %d blocks, %d tables, in memory",
			 run.total, plan.nblocks, plan.ntables);
		nd_allpairs_run(&plan, run.items, run.n, 0, plan.ntables, scratch, &sink);
	}
	else
		run_batched(&run, &plan, &sink);

	/* the peak: everything above is still allocated */
	elog(DEBUG2, "simhash_pairs: " UINT64_FORMAT " rows, %zu bytes of working memory",
		 run.total, MemoryContextMemAllocated(cxt, true));
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
}

/*
 * simhash_pairs(query text, max_distance int4 DEFAULT 3, blocks int4 DEFAULT
 * NULL): the query returns (id, fingerprint).
 */
PG_FUNCTION_INFO_V1(simhash_pairs_query);
Datum
simhash_pairs_query(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("max_distance must not be null")));
	if (PG_ARGISNULL(0))
	{
		InitMaterializedSRF(fcinfo, 0);
		return (Datum) 0;
	}
	pairs_common(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(0)), PG_GETARG_INT32(1),
				 PG_ARGISNULL(2), PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2));
	return (Datum) 0;
}

/*
 * simhash_pairs(source regclass, id_column name, fingerprint_column name,
 * max_distance int4 DEFAULT 3, blocks int4 DEFAULT NULL): the query form
 * over "SELECT id_column, fingerprint_column FROM source", run as the caller
 * so that the caller's SELECT privilege and row security apply.
 */
static void pairs_rel(FunctionCallInfo fcinfo, Oid relid, const char *idcol,
					  const char *fpcol);

/* A NULL max_distance is an error; a NULL source or column, no pairs. */
static bool
rel_args_missing(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("max_distance must not be null")));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		InitMaterializedSRF(fcinfo, 0);
		return true;
	}
	return false;
}

PG_FUNCTION_INFO_V1(simhash_pairs_rel);
Datum
simhash_pairs_rel(PG_FUNCTION_ARGS)
{
	if (rel_args_missing(fcinfo))
		return (Datum) 0;
	pairs_rel(fcinfo, PG_GETARG_OID(0), NameStr(*PG_GETARG_NAME(1)),
			  NameStr(*PG_GETARG_NAME(2)));
	return (Datum) 0;
}

/*
 * simhash_pairs(source text, id_column text, fingerprint_column text, ...):
 * the same, so that three string literals resolve to this form.
 */
PG_FUNCTION_INFO_V1(simhash_pairs_relname);
Datum
simhash_pairs_relname(PG_FUNCTION_ARGS)
{
	Oid			relid;

	if (rel_args_missing(fcinfo))
		return (Datum) 0;
	relid = DatumGetObjectId(DirectFunctionCall1(regclassin,
												 CStringGetDatum(text_to_cstring(PG_GETARG_TEXT_PP(0)))));
	pairs_rel(fcinfo, relid, text_to_cstring(PG_GETARG_TEXT_PP(1)),
			  text_to_cstring(PG_GETARG_TEXT_PP(2)));
	return (Datum) 0;
}

static void
pairs_rel(FunctionCallInfo fcinfo, Oid relid, const char *idcol, const char *fpcol)
{
	char	   *relname,
			   *nspname;
	StringInfoData q;

	relname = get_rel_name(relid);
	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	nspname = get_namespace_name(get_rel_namespace(relid));
	if (get_attnum(relid, idcol) == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", idcol, relname)));
	if (get_attnum(relid, fpcol) == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", fpcol, relname)));

	initStringInfo(&q);
	appendStringInfo(&q, "SELECT %s, %s FROM %s",
					 quote_identifier(idcol), quote_identifier(fpcol),
					 quote_qualified_identifier(nspname, relname));
	pairs_common(fcinfo, q.data, PG_GETARG_INT32(3),
				 PG_ARGISNULL(4), PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4));
}
