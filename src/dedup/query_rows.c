/*-------------------------------------------------------------------------
 *
 * query_rows.c
 *		The caller's query, read through SPI: one statement that returns
 *		rows, run read-only in the caller's snapshot (the functions are
 *		STABLE) with the caller's privileges, as tablefunc's crosstab runs
 *		its query.  Each row goes from the executor's slot straight to the
 *		caller's callback (a DestReceiver of our own), so memory does not
 *		grow with the result and no row is copied into an SPI tuple table
 *		(which cost the block-sharded nightly run a tenth of its reading).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"
#include "utils/portal.h"

#include "shared/progress.h"
#include "dedup/query_rows.h"

/* rows between progress reports */
#define PROGRESS_ROWS	10000

typedef struct RowReceiver
{
	DestReceiver pub;
	nd_query_shape_fn shape;
	nd_query_row_fn row;
	void	   *arg;
	double		est_rows;
	int			ncols;			/* columns passed on: the first one or two */
	int64		read;
} RowReceiver;

static void
receiver_startup(DestReceiver *self, int operation, TupleDesc desc)
{
	RowReceiver *rr = (RowReceiver *) self;

	rr->shape(desc, rr->est_rows, rr->arg);
	rr->ncols = Min(desc->natts, 2);
	nd_progress_phase("reading rows", -1);
}

static bool
receiver_row(TupleTableSlot *slot, DestReceiver *self)
{
	RowReceiver *rr = (RowReceiver *) self;
	Datum		values[2] = {0, 0};
	bool		nulls[2] = {true, true};

	/* the shape callback has checked the columns */
	slot_getsomeattrs(slot, rr->ncols);
	for (int c = 0; c < rr->ncols; c++)
	{
		values[c] = slot->tts_values[c];
		nulls[c] = slot->tts_isnull[c];
	}
	rr->row(values, nulls, rr->arg);
	if (++rr->read % PROGRESS_ROWS == 0)
	{
		CHECK_FOR_INTERRUPTS();
		nd_progress_done(rr->read);
	}
	return true;
}

static void
receiver_shutdown(DestReceiver *self)
{
	RowReceiver *rr = (RowReceiver *) self;

	nd_progress_done(rr->read);
}

static void
receiver_destroy(DestReceiver *self)
{
}

void
nd_require_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
}

void
nd_query_for_each_row(const char *query, const char *what, const char *hint,
					  nd_query_shape_fn shape, nd_query_row_fn row, void *arg)
{
	SPIPlanPtr	plan;
	SPIExecuteOptions options = {0};
	RowReceiver rr = {{0}};
	int			rc;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the query's own errors (syntax, permissions) are raised as the caller's */
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a single query that returns rows", what),
				 errhint("%s", hint)));

	/*
	 * The planner's row estimate, from the generic plan the execution below
	 * reuses (a query without parameters is never planned again).
	 */
	rr.est_rows = -1;
	{
		CachedPlan *cplan = SPI_plan_get_cached_plan(plan);

		if (cplan != NULL)
		{
			if (list_length(cplan->stmt_list) == 1)
			{
				PlannedStmt *stmt = linitial_node(PlannedStmt, cplan->stmt_list);

				if (stmt->planTree != NULL)
					rr.est_rows = stmt->planTree->plan_rows;
			}
			ReleaseCachedPlan(cplan, NULL);
		}
	}

	rr.pub.receiveSlot = receiver_row;
	rr.pub.rStartup = receiver_startup;
	rr.pub.rShutdown = receiver_shutdown;
	rr.pub.rDestroy = receiver_destroy;
	rr.pub.mydest = DestNone;
	rr.shape = shape;
	rr.row = row;
	rr.arg = arg;
	options.read_only = true;
	options.dest = (DestReceiver *) &rr;
	rc = SPI_execute_plan_extended(plan, &options);
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan_extended failed: %s", SPI_result_code_string(rc));
	SPI_finish();
}

bool
nd_is_int_type(Oid basetype)
{
	return basetype == INT2OID || basetype == INT4OID || basetype == INT8OID;
}

int64
nd_int_datum(Datum d, Oid basetype)
{
	switch (basetype)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

char *
nd_rel_query(Oid relid, const char *col1, const char *col2)
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
	if (get_attnum(relid, col1) == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", col1, relname)));
	if (get_attnum(relid, col2) == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", col2, relname)));

	initStringInfo(&q);
	appendStringInfo(&q, "SELECT %s, %s FROM %s",
					 quote_identifier(col1), quote_identifier(col2),
					 quote_qualified_identifier(nspname, relname));
	return q.data;
}

char *
nd_relname_query(text *relname, text *col1, text *col2)
{
	Oid			relid = DatumGetObjectId(DirectFunctionCall1(regclassin,
															 CStringGetDatum(text_to_cstring(relname))));

	return nd_rel_query(relid, text_to_cstring(col1), text_to_cstring(col2));
}
