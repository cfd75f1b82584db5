/*-------------------------------------------------------------------------
 *
 * ham_stats.c
 *		hamming_stats(index): what the metapage says of an index -- the run,
 *		the lists, the merges -- for monitoring merges (pgstatginindex's
 *		counterpart).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/rel.h"

#include "hamming.h"

PG_FUNCTION_INFO_V1(hamming_stats);
Datum
hamming_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	Buffer		metabuf;
	HamMetaPageData *meta;
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	index = ham_open_index(indexoid, AccessShareLock);
	metabuf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = HamPageGetMeta(BufferGetPage(metabuf));
	values[0] = Int32GetDatum((int32) meta->nblocks);
	values[1] = Int64GetDatum((int64) meta->run_entries);
	values[2] = Int64GetDatum((int64) meta->pending.nentries);
	values[3] = Int64GetDatum((int64) meta->sealed.nentries);
	values[4] = Int64GetDatum((int64) meta->nulls.nentries);
	values[5] = Int64GetDatum((int64) meta->merges);
	values[6] = Int64GetDatum((int64) meta->insert_merges);
	values[7] = Int64GetDatum((int64) RelationGetNumberOfBlocks(index));
	UnlockReleaseBuffer(metabuf);
	index_close(index, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
