/*-------------------------------------------------------------------------
 *
 * ham_stats.c
 *		hamming_stats(index): what the metapage says of an index -- the runs,
 *		the lists, the merges -- for monitoring merges (pgstatginindex's
 *		counterpart); hamming_runs(index): each run.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/rel.h"

#include "hamming.h"

PG_FUNCTION_INFO_V1(hamming_stats);
Datum
hamming_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	HamSnapshot snap;
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	index = ham_open_index(indexoid, AccessShareLock);
	ham_read_snapshot(index, &snap);
	values[0] = Int32GetDatum((int32) snap.nblocks);
	values[1] = Int64GetDatum((int64) snap.run_entries);
	values[2] = Int64GetDatum((int64) snap.pending.nentries);
	values[3] = Int64GetDatum((int64) snap.sealed.nentries);
	values[4] = Int64GetDatum((int64) snap.nulls.nentries);
	values[5] = Int64GetDatum((int64) snap.merges);
	values[6] = Int64GetDatum((int64) snap.insert_merges);
	values[7] = Int64GetDatum((int64) RelationGetNumberOfBlocks(index));
	index_close(index, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * hamming_runs(index): one row per run, oldest first -- its entries as
 * written, its tables and its pages.
 */
PG_FUNCTION_INFO_V1(hamming_runs);
Datum
hamming_runs(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	HamSnapshot snap;

	InitMaterializedSRF(fcinfo, 0);
	index = ham_open_index(indexoid, AccessShareLock);
	ham_read_snapshot(index, &snap);
	for (int r = 0; r < snap.nruns; r++)
	{
		HamRunDir	dir;
		Datum		values[4];
		bool		nulls[4] = {false};
		int64		pages = 1;

		ham_run_dir_open(index, snap.runs[r].header, snap.runs[r].epoch, &dir);
		for (uint32 t = 0; t < dir.header->nblocks; t++)
			pages += (int64) dir.header->tables[t].ndata +
				(dir.header->tables[t].ndata + HAM_DIR_CAPACITY - 1) / HAM_DIR_CAPACITY;
		if (dir.header->dir_levels == HAM_RUN_DIRS_INDEXED)
			pages += dir.header->ndirs;
		values[0] = Int32GetDatum(r);
		values[1] = Int64GetDatum((int64) snap.runs[r].nentries);
		values[2] = Int32GetDatum((int32) dir.header->nblocks);
		values[3] = Int64GetDatum(pages);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(dir.header);
		CHECK_FOR_INTERRUPTS();
	}
	index_close(index, AccessShareLock);
	return (Datum) 0;
}
