/*-------------------------------------------------------------------------
 *
 * allpairs_scan.c
 *		The all-pairs scan over the rows of a caller's query, shared by
 *		simhash_pairs and simhash_clusters (allpairs_scan.h).
 *
 * The rows come from a query run as the caller through an SPI cursor, like
 * tablefunc's crosstab(); the regclass forms only build that query.  The
 * (id, code) pairs are kept in memory while they fit in work_mem (with the
 * core's scratch space); beyond that they go to a temporary file and every
 * table is processed in batches: the rows are partitioned by the leading
 * bits of the table's key, so that rows with equal keys, the only ones the
 * table compares, land in the same batch.
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

#include "shared/progress.h"
#include "core/nd_allpairs.h"
#include "dedup/allpairs_scan.h"
#include "dedup/pairs_args.h"
#include "dedup/query_rows.h"
#include "type/simhash64.h"

/* at most 2^MAX_BATCH_BITS batch files per table (one buffer each) */
#define MAX_BATCH_BITS 10

struct NdAllPairsScan
{
	const NdAllPairsSpec *spec;
	Oid			simhash_oid;
	Oid			idtype;

	/* input */
	nd_pair_item *items;		/* in-memory rows, or the spill buffer */
	size_t		n;				/* rows in items */
	size_t		cap;			/* allocated items */
	size_t		budget;			/* rows that fit in work_mem */
	BufFile    *spill;			/* all rows, once past the budget */
	MemoryContext cxt;			/* where they live */
	uint64		total;			/* rows read (NULL fingerprints excluded) */

	nd_pairs_plan plan;
	nd_pairs_sink sink;
	void	   *scratch;		/* the core's, for scratch_rows rows */
	size_t		scratch_rows;

	/* where the pieces are: the next table (and its leading blocks), batch */
	int			next_table;
	uint32		next_lead;
	int			t_begin;		/* the tables asked for: [t_begin, t_end) */
	int			t_end;
	int			next_batch;
	int			nbatches;
	int			pbits;			/* batched: a batch is a table's key's top bits */
	BufFile   **batch;
	uint64	   *counts;
	nd_pair_item *readbuf;
	size_t		chunk;
};

typedef struct NdAllPairsScan ScanRun;

static void
scan_emit(void *arg, int64_t id_a, int64_t id_b, int dist)
{
	ScanRun    *run = (ScanRun *) arg;

	run->spec->emit(run->spec->arg, id_a, id_b, dist);
}

static void
scan_tick(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

static void
scan_table_start(void *arg, int t)
{
	ScanRun    *run = (ScanRun *) arg;

	nd_progress_done(t - run->t_begin);
	elog(DEBUG1, "%s: table %d of %d", run->spec->fname, t + 1, run->plan.ntables);
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
read_shape(TupleDesc desc, double est_rows, void *arg)
{
	ScanRun    *run = (ScanRun *) arg;
	const char *fname = run->spec->fname;
	Oid			fptype;

	if (desc == NULL || desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s query must return two columns: an integer id and a simhash64 fingerprint",
						fname)));
	run->idtype = getBaseType(TupleDescAttr(desc, 0)->atttypid);
	fptype = getBaseType(TupleDescAttr(desc, 1)->atttypid);
	if (!nd_is_int_type(run->idtype))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s id column must be of type smallint, integer or bigint, not %s",
						fname, format_type_be(TupleDescAttr(desc, 0)->atttypid)),
				 errhint("Map other keys to integers first, for example with row_number() or a bigserial column in a mapping table.")));
	if (fptype != run->simhash_oid)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s fingerprint column must be of type simhash64, not %s",
						fname, format_type_be(TupleDescAttr(desc, 1)->atttypid))));

	/*
	 * Room for the rows the planner expects, and a margin, so that the
	 * array is not copied (and its new pages faulted in) at every doubling;
	 * past the budget the rows spill anyway.
	 */
	if (est_rows > (double) run->cap)
	{
		size_t		want = (size_t) Min((double) run->budget, est_rows * 1.1 + 1024);

		if (want > run->cap)
		{
			run->items = repalloc_huge(run->items, want * sizeof(nd_pair_item));
			run->cap = want;
		}
	}
}

static void
spill_write(BufFile *file, nd_pair_item *items, size_t n)
{
	if (n > 0)
		BufFileWrite(file, items, n * sizeof(nd_pair_item));
}

static void
read_exact(ScanRun *run, BufFile *file, void *ptr, size_t size)
{
	size_t		got = BufFileRead(file, ptr, size);

	if (got != size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from %s temporary file: read only %zu of %zu bytes",
						run->spec->fname, got, size)));
}

static void
rewind_file(ScanRun *run, BufFile *file)
{
	if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind %s temporary file", run->spec->fname)));
}

/* Appends one row, spilling everything to a temporary file past budget. */
static inline void
add_row(ScanRun *run, int64 id, uint64 code)
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
			elog(DEBUG1, "%s: more than %zu rows, spilling to a temporary file",
				 run->spec->fname, run->budget);
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

static void
read_row(Datum *values, bool *nulls, void *arg)
{
	ScanRun    *run = (ScanRun *) arg;
	int64		id;

	if (nulls[1])
		return;
	if (nulls[0])
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s id must not be null", run->spec->fname)));
	id = nd_int_datum(values[0], run->idtype);
	if (run->spec->map_id)
		id = run->spec->map_id(run->spec->arg, id);
	add_row(run, id, (uint64) DatumGetSimhash64(values[1]));
}

/* The core, in the mode the function asks for. */
static void
run_core(ScanRun *run, nd_pair_item *items, size_t n, int t_begin, int t_end)
{
	if (run->scratch == NULL || n > run->scratch_rows)
	{
		if (run->scratch)
			pfree(run->scratch);
		/* batches: room for the largest, reused */
		run->scratch_rows = run->spill ? Max(n, run->budget) : n;
		run->scratch = MemoryContextAllocHuge(run->cxt, nd_allpairs_scratch_size(run->scratch_rows));
	}
	switch (run->spec->output)
	{
		case ND_ALLPAIRS_PAIRS:
			nd_allpairs_run(&run->plan, items, n, t_begin, t_end, run->scratch, &run->sink);
			break;
		case ND_ALLPAIRS_EDGES:
			nd_allpairs_edges_run(&run->plan, items, n, t_begin, t_end, run->scratch, &run->sink);
			break;
		case ND_ALLPAIRS_GROUPS:
			nd_allpairs_groups_run(&run->plan, items, n, t_begin, t_end, run->scratch, &run->sink);
			break;
	}
}

/*
 * Past work_mem, at the start of each table: partition the spilled rows by
 * the leading bits of the table's key into batch files, so that the core
 * can run on one batch at a time for that table only.
 */
static void
partition_table(ScanRun *run, int t, uint32 lead)
{
	nd_pairs_table tab;
	uint64		left = run->total;

	scan_table_start(run, t);
	nd_pairs_table_init(&run->plan, t, lead, &tab);
	for (int b = 0; b < run->nbatches; b++)
	{
		run->batch[b] = BufFileCreateTemp(false);
		run->counts[b] = 0;
	}
	rewind_file(run, run->spill);
	while (left > 0)
	{
		size_t		m = Min(left, (uint64) run->chunk);

		read_exact(run, run->spill, run->readbuf, m * sizeof(nd_pair_item));
		for (size_t i = 0; i < m; i++)
		{
			int			b = run->pbits == 0 ? 0 :
				(int) (nd_pairs_permute(&tab, run->readbuf[i].code) >> (64 - run->pbits));

			BufFileWrite(run->batch[b], &run->readbuf[i], sizeof(nd_pair_item));
			run->counts[b]++;
		}
		left -= m;
		CHECK_FOR_INTERRUPTS();
	}
}

/* Past work_mem: the set-up of the batches, once all rows are spilled. */
static void
batched_init(ScanRun *run)
{
	uint64		want = (run->total + run->budget - 1) / run->budget * 2;

	/* twice as many batches as needed on average, for unevenness */
	run->pbits = 0;
	while (((uint64) 1 << run->pbits) < want && run->pbits < MAX_BATCH_BITS &&
		   run->pbits < run->plan.min_keybits)
		run->pbits++;
	run->nbatches = 1 << run->pbits;
	run->batch = palloc0(sizeof(BufFile *) * run->nbatches);
	run->counts = palloc(sizeof(uint64) * run->nbatches);
	run->chunk = Min(run->cap, (size_t) 8192);
	run->readbuf = palloc(run->chunk * sizeof(nd_pair_item));
	run->next_lead = nd_pairs_first_lead(&run->plan);
	for (int t = 0; t < run->t_begin; t++)
		run->next_lead = nd_pairs_next_lead(run->next_lead);

	spill_write(run->spill, run->items, run->n);
	run->n = 0;
	/* one message per table, not per batch */
	run->sink.table_start = NULL;
	elog(DEBUG1, "%s: " UINT64_FORMAT " rows, %d blocks, %d tables, %d batches per table",
		 run->spec->fname, run->total, run->plan.nblocks, run->plan.ntables, run->nbatches);
}

NdAllPairsScan *
nd_allpairs_scan_begin(FunctionCallInfo fcinfo, const char *query, const NdAllPairsSpec *spec)
{
	MemoryContext cxt,
				oldcxt;
	ScanRun    *run;
	int			blocks = spec->blocks;

	nd_check_pairs_args(spec->k, spec->auto_blocks, spec->blocks);
	nd_progress_begin(spec->fname);

	cxt = AllocSetContextCreate(CurrentMemoryContext, "all-pairs scan",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	run = palloc0(sizeof(ScanRun));
	run->spec = spec;
	run->simhash_oid = simhash64_type_oid(fcinfo);
	run->cxt = cxt;
	/* each row in memory costs its item and its share of the scratch */
	run->budget = Max((size_t) 1024,
					  (size_t) work_mem * 1024 /
					  (sizeof(nd_pair_item) +
					   nd_allpairs_scratch_size(2) - nd_allpairs_scratch_size(1)));
	run->cap = Min(run->budget, (size_t) 4096);
	run->items = palloc_extended(run->cap * sizeof(nd_pair_item), MCXT_ALLOC_HUGE);

	{
		char	   *what = psprintf("%s query", spec->fname);

		nd_query_for_each_row(query, what,
							  "Give a SELECT (or VALUES) returning an integer id and a simhash64 fingerprint.",
							  read_shape, read_row, run);
	}
	if (run->total >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s supports fewer than 2^32 rows", spec->fname)));

	if (spec->auto_blocks)
		blocks = nd_pairs_auto_blocks(spec->k, (double) run->total);
	nd_pairs_plan_init(&run->plan, spec->k, blocks);
	run->t_begin = spec->table_begin;
	run->t_end = spec->table_end > 0 ? Min(spec->table_end, run->plan.ntables) : run->plan.ntables;
	Assert(run->t_begin >= 0 && run->t_begin < run->t_end);
	run->next_table = run->t_begin;

	run->sink.emit = scan_emit;
	run->sink.tick = scan_tick;
	run->sink.table_start = scan_table_start;
	run->sink.arg = run;

	if (run->spill == NULL)
	{
		/* give back what the doubling overshot before the scratch comes */
		if (run->n > 0 && run->cap > run->n + run->n / 8)
		{
			run->items = repalloc_huge(run->items, run->n * sizeof(nd_pair_item));
			run->cap = run->n;
		}
		elog(DEBUG1, "%s: " UINT64_FORMAT " rows, %d blocks, %d tables, in memory",
			 spec->fname, run->total, run->plan.nblocks, run->plan.ntables);
		nd_progress_phase("searching tables", run->t_end - run->t_begin);
	}
	else
	{
		batched_init(run);
		nd_progress_phase("searching tables in batches", run->t_end - run->t_begin);
	}
	MemoryContextSwitchTo(oldcxt);
	return run;
}

bool
nd_allpairs_scan_next(NdAllPairsScan *run, NdAllPairsPiece *piece)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(run->cxt);
	bool		found = false;

	if (run->spill == NULL)
	{
		/* in memory: one piece, every table */
		if (run->next_table == run->t_begin)
		{
			run_core(run, run->items, run->n, run->t_begin, run->t_end);
			piece->items = run->items;
			piece->n = run->n;
			piece->t_begin = run->t_begin;
			piece->t_end = run->t_end;
			run->next_table = run->t_end;
			found = true;
		}
	}
	else
	{
		/* batched: one piece per batch of each table */
		while (!found && run->next_table < run->t_end)
		{
			int			t = run->next_table;
			int			b = run->next_batch;
			size_t		cnt;

			if (b == 0)
				partition_table(run, t, run->next_lead);
			cnt = run->counts[b];

			/*
			 * A batch may exceed the budget when keys are skewed: at worst it
			 * is every row, costing what the in-memory path would
			 * (doc/dedup-pairs.md); its long runs are split in the core.
			 */
			if (cnt > run->cap)
			{
				run->cap = cnt;
				run->items = repalloc_huge(run->items, cnt * sizeof(nd_pair_item));
			}
			rewind_file(run, run->batch[b]);
			if (cnt > 0)
				read_exact(run, run->batch[b], run->items, cnt * sizeof(nd_pair_item));
			BufFileClose(run->batch[b]);
			run->batch[b] = NULL;
			run_core(run, run->items, cnt, t, t + 1);
			piece->items = run->items;
			piece->n = cnt;
			piece->t_begin = t;
			piece->t_end = t + 1;
			found = true;
			if (++run->next_batch == run->nbatches)
			{
				run->next_batch = 0;
				run->next_table++;
				run->next_lead = nd_pairs_next_lead(run->next_lead);
			}
		}
	}
	MemoryContextSwitchTo(oldcxt);
	return found;
}

void
nd_allpairs_scan_end(NdAllPairsScan *run)
{
	/* the peak: everything is still allocated */
	elog(DEBUG2, "%s: " UINT64_FORMAT " rows, %zu bytes of working memory",
		 run->spec->fname, run->total, MemoryContextMemAllocated(run->cxt, true));
	for (int b = 0; run->batch != NULL && b < run->nbatches; b++)
		if (run->batch[b] != NULL)
			BufFileClose(run->batch[b]);
	if (run->spill != NULL)
		BufFileClose(run->spill);
	MemoryContextDelete(run->cxt);
	nd_progress_end();
}

void
nd_allpairs_scan(FunctionCallInfo fcinfo, const char *query, const NdAllPairsSpec *spec)
{
	NdAllPairsScan *run = nd_allpairs_scan_begin(fcinfo, query, spec);
	NdAllPairsPiece piece;

	while (nd_allpairs_scan_next(run, &piece))
		;
	nd_allpairs_scan_end(run);
}

/* ---- the argument forms ---- */

/*
 * (query text, max_distance int4 DEFAULT 3, blocks int4 DEFAULT NULL): a
 * NULL query or max_distance is an error (nd_require_arg), a NULL blocks
 * means "choose".
 */
void
nd_allpairs_query_form(FunctionCallInfo fcinfo, nd_allpairs_body body)
{
	nd_require_arg(fcinfo, 0, "query");
	nd_require_arg(fcinfo, 1, "max_distance");
	body(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(0)), PG_GETARG_INT32(1),
		 PG_ARGISNULL(2), PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2));
}

/*
 * The table forms: the query "SELECT id_column, fingerprint_column FROM
 * source", run as the caller so that the caller's SELECT privilege and row
 * security apply.
 */
static void
rel_form(FunctionCallInfo fcinfo, nd_allpairs_body body, const char *query)
{
	body(fcinfo, query, PG_GETARG_INT32(3),
		 PG_ARGISNULL(4), PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4));
}

/* A NULL source, column or max_distance is an error (nd_require_arg). */
static void
rel_args_check(FunctionCallInfo fcinfo)
{
	nd_require_arg(fcinfo, 0, "source");
	nd_require_arg(fcinfo, 1, "id_column");
	nd_require_arg(fcinfo, 2, "fingerprint_column");
	nd_require_arg(fcinfo, 3, "max_distance");
}

/* (source regclass, id_column name, fingerprint_column name, max_distance, blocks) */
void
nd_allpairs_rel_form(FunctionCallInfo fcinfo, nd_allpairs_body body)
{
	rel_args_check(fcinfo);
	rel_form(fcinfo, body, nd_rel_query(PG_GETARG_OID(0), NameStr(*PG_GETARG_NAME(1)),
										NameStr(*PG_GETARG_NAME(2))));
}

/*
 * (source text, id_column text, fingerprint_column text, ...): the same, so
 * that three string literals resolve to a table form; the name is looked up
 * as a regclass input would be.
 */
void
nd_allpairs_relname_form(FunctionCallInfo fcinfo, nd_allpairs_body body)
{
	rel_args_check(fcinfo);
	rel_form(fcinfo, body, nd_relname_query(PG_GETARG_TEXT_PP(0), PG_GETARG_TEXT_PP(1),
											PG_GETARG_TEXT_PP(2)));
}
