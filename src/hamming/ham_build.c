/*-------------------------------------------------------------------------
 *
 * ham_build.c
 *		CREATE INDEX ... USING hamming: the metapage, then one run of every
 *		code in the table (ham_run_writer.c), and the NULLs in their list;
 *		and the metapage of an unlogged index's init fork.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#include "hamming/hamming.h"
#include "type/simhash64.h"

typedef struct HamBuildState
{
	bool		balls;			/* ham_indexes_balls() */
	HamRunWriter *writer;
	double		indtuples;
} HamBuildState;

static void
ham_build_callback(Relation index, ItemPointer tid, Datum *values,
				   bool *isnull, bool tupleIsAlive, void *state)
{
	HamBuildState *bs = (HamBuildState *) state;

	if (isnull[0])
		ham_list_append(index, HAM_LIST_NULLS, 0, tid, NULL);
	else
		ham_run_writer_add(bs->writer, ham_value_code(bs->balls, values[0]), tid);
	bs->indtuples += 1;
}

/* Write the metapage: the first page of the index. */
static void
ham_write_meta(Relation index, int nblocks, int only_block)
{
	Buffer		buf = ham_new_buffer(index);
	GenericXLogState *state;
	Page		page;

	if (BufferGetBlockNumber(buf) != HAM_METAPAGE_BLKNO)
		elog(ERROR, "index \"%s\" is not empty", RelationGetRelationName(index));
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
	ham_init_meta_page(page, nblocks, only_block);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
}

/* Point the metapage at a run written by ham_run_writer_finish(). */
static void
ham_set_run(Relation index, BlockNumber header, uint32 epoch, uint64 nentries)
{
	Buffer		buf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	GenericXLogState *state;
	HamMetaPageData *meta;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, buf, 0));
	meta->run_header = header;
	meta->run_epoch = epoch;
	meta->run_entries = nentries;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
}

/* The next epoch, taken from the metapage (the caller excludes flushes). */
static uint32
ham_take_epoch(Relation index)
{
	Buffer		buf = ReadBuffer(index, HAM_METAPAGE_BLKNO);
	GenericXLogState *state;
	HamMetaPageData *meta;
	uint32		epoch;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = HamPageGetMeta(GenericXLogRegisterBuffer(state, buf, 0));
	epoch = meta->next_epoch++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
	return epoch;
}

IndexBuildResult *
ham_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	HamBuildState bs;
	double		reltuples;
	int			nblocks = ham_option_blocks(index);
	int			only_block = ham_option_only_block(index);
	uint32		epoch;
	uint64		nentries;
	BlockNumber header;

	memset(&bs, 0, sizeof(bs));
	bs.balls = ham_indexes_balls(index);
	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));

	/*
	 * Hold the maintenance lock throughout: under CREATE INDEX CONCURRENTLY
	 * other sessions see the index, and a flush's recycling would free the
	 * pages being written here, which belong to no run yet.
	 */
	ham_maintenance_lock(index);
	ham_write_meta(index, nblocks, only_block);
	epoch = ham_take_epoch(index);

	bs.writer = ham_run_writer_begin(index, nblocks, only_block, epoch, maintenance_work_mem);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   ham_build_callback, (void *) &bs, NULL);
	header = ham_run_writer_finish(bs.writer, NULL, 0, &nentries, NULL);
	if (header != InvalidBlockNumber)
		ham_set_run(index, header, epoch, nentries);
	ham_maintenance_unlock(index);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/* The metapage of an unlogged index's init fork, as contrib/bloom writes it. */
void
ham_buildempty(Relation index)
{
	Page		metapage = (Page) palloc(BLCKSZ);

	ham_init_meta_page(metapage, ham_option_blocks(index), ham_option_only_block(index));
	PageSetChecksumInplace(metapage, HAM_METAPAGE_BLKNO);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, HAM_METAPAGE_BLKNO,
			  (char *) metapage, true);
	log_newpage(&nd_smgr_locator(RelationGetSmgr(index)), INIT_FORKNUM,
				HAM_METAPAGE_BLKNO, metapage, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
}
