/*-------------------------------------------------------------------------
 *
 * ham_stats.c
 *		hamming_stats(index): what the metapage says of an index -- the runs,
 *		the lists, the flushes and compactions -- for monitoring them
 *		(pgstatginindex's counterpart); hamming_runs(index): each run.
 *
 * Given a partitioned hamming index, hamming_stats adds up its partitions'
 * indexes (as pg_total_relation_size would have it: one figure for the
 * index the user created) and hamming_runs lists the runs of each,
 * naming it; pg_partition_tree() gives one row per partition
 * (doc/index-hamming.md).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

/* 0.4 added flushes, compactions and unused_pages; 0.2's SQL has 8 columns */
#define HAM_STATS_COLS	11

PG_FUNCTION_INFO_V1(hamming_stats);
Datum
hamming_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	TupleDesc	tupdesc;
	Datum		values[HAM_STATS_COLS];
	bool		nulls[HAM_STATS_COLS] = {false};
	int64		sums[HAM_STATS_COLS] = {0};
	int			blocks = -1;	/* none seen yet */
	ListCell   *lc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	foreach(lc, ham_leaf_indexes(indexoid))
	{
		Relation	index = ham_open_index(lfirst_oid(lc), AccessShareLock);
		HamSnapshot snap;

		ham_read_snapshot(index, &snap);
		/* partitions built with different `blocks` have no one count */
		blocks = blocks == -1 || blocks == snap.nblocks ? snap.nblocks : 0;
		sums[1] += (int64) snap.run_entries;
		sums[2] += (int64) ham_list_entries(index, &snap.pending);
		sums[3] += (int64) ham_list_entries(index, &snap.sealed);
		sums[4] += (int64) ham_list_entries(index, &snap.nulls);
		sums[5] += (int64) snap.flushes;	/* merges: the flushes' alias */
		sums[6] += (int64) snap.insert_flushes;
		sums[7] += (int64) RelationGetNumberOfBlocks(index);
		sums[8] += (int64) snap.flushes;
		sums[9] += (int64) snap.compactions;
		if (tupdesc->natts >= HAM_STATS_COLS)
			sums[10] += ham_unused_pages(index, &snap);
		index_close(index, AccessShareLock);
		CHECK_FOR_INTERRUPTS();
	}
	values[0] = Int32GetDatum(blocks);
	nulls[0] = blocks <= 0;
	for (int i = 1; i < HAM_STATS_COLS; i++)
		values[i] = Int64GetDatum(sums[i]);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * hamming_runs(index): one row per run, oldest first -- its live entries,
 * its tables and its pages, and the index it belongs to (a partition's,
 * given a partitioned index).
 */
PG_FUNCTION_INFO_V1(hamming_runs);
Datum
hamming_runs(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, ham_leaf_indexes(indexoid))
	{
		Relation	index = ham_open_index(lfirst_oid(lc), AccessShareLock);
		HamSnapshot snap;

		ham_read_snapshot(index, &snap);
		for (int r = 0; r < snap.nruns; r++)
		{
			HamRunDir	dir;
			Datum		values[5];
			bool		nulls[5] = {false};
			int64		pages;

			ham_run_dir_open(index, snap.runs[r].header, snap.runs[r].epoch, &dir);
			pages = ham_run_pages(&dir);
			values[0] = Int32GetDatum(r);
			values[1] = Int64GetDatum((int64) snap.runs[r].nentries);
			values[2] = Int32GetDatum((int32) dir.header->nblocks);
			values[3] = Int64GetDatum(pages);
			values[4] = ObjectIdGetDatum(RelationGetRelid(index));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			pfree(dir.header);
			CHECK_FOR_INTERRUPTS();
		}
		index_close(index, AccessShareLock);
	}
	return (Datum) 0;
}
