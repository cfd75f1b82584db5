/*-------------------------------------------------------------------------
 *
 * ham_run.c
 *		Writing a run (the index build and merges) and reading its
 *		directory (scans, merges, the integrity check).
 *
 * The writer feeds every entry to m sorts, one per table, keyed by the code
 * rotated so that the table's block leads (tuplesort: within the memory it
 * is given, spilling to temporary files beyond).  Then, table by table, it
 * writes the sorted entries to full data pages, the directory of those
 * pages, and last the header that lists the directory pages.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/backend_progress.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "hamming.h"

/* Sort keys are signed int8: flipping the top bit orders them unsigned. */
#define HAM_SIGN_FLIP	((uint64) 1 << 63)

struct HamRunWriter
{
	Relation	index;
	nd_layout	layout;
	uint32		epoch;
	TupleDesc	tupdesc;
	TupleTableSlot *slot;		/* to add */
	TupleTableSlot *outslot;	/* to read back */
	Tuplesortstate *sort[HAM_MAX_TABLES];
	uint64		nentries;
};

HamRunWriter *
ham_run_writer_begin(Relation index, int nblocks, uint32 epoch, int work_mem_kb)
{
	HamRunWriter *w = palloc0(sizeof(HamRunWriter));
	AttrNumber	attno = 1;
	Oid			sortop = Int8LessOperator;
	Oid			collation = InvalidOid;
	bool		nulls_first = false;

	w->index = index;
	nd_layout_init(&w->layout, nblocks);
	w->epoch = epoch;
	w->tupdesc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(w->tupdesc, 1, "key", INT8OID, -1, 0);
	TupleDescInitEntry(w->tupdesc, 2, "tid", TIDOID, -1, 0);
	w->slot = MakeSingleTupleTableSlot(w->tupdesc, &TTSOpsVirtual);
	w->outslot = MakeSingleTupleTableSlot(w->tupdesc, &TTSOpsMinimalTuple);
	for (int t = 0; t < nblocks; t++)
		w->sort[t] = tuplesort_begin_heap(w->tupdesc, 1, &attno, &sortop, &collation,
										  &nulls_first, Max(64, work_mem_kb / nblocks),
										  NULL, TUPLESORT_NONE);
	return w;
}

void
ham_run_writer_add(HamRunWriter *w, uint64 code, ItemPointer tid)
{
	for (int t = 0; t < w->layout.nblocks; t++)
	{
		ExecClearTuple(w->slot);
		w->slot->tts_values[0] = Int64GetDatum((int64) (nd_permute(&w->layout, t, code) ^ HAM_SIGN_FLIP));
		w->slot->tts_values[1] = PointerGetDatum(tid);
		w->slot->tts_isnull[0] = false;
		w->slot->tts_isnull[1] = false;
		ExecStoreVirtualTuple(w->slot);
		tuplesort_puttupleslot(w->sort[t], w->slot);
	}
	w->nentries++;
}

/* Write a full page image as a new page of the index; returns its number. */
static BlockNumber
write_page(Relation index, Page image)
{
	Buffer		buf = ham_new_buffer(index);
	GenericXLogState *state = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
	BlockNumber blkno = BufferGetBlockNumber(buf);

	memcpy(page, image, BLCKSZ);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
	return blkno;
}

/*
 * Write the run; returns its header page, InvalidBlockNumber for a run of
 * no entries (then nothing is written).
 */
BlockNumber
ham_run_writer_finish(HamRunWriter *w, uint64 *nentries)
{
	int			nblocks = w->layout.nblocks;
	Page		image = palloc(BLCKSZ);
	Page		header_image = palloc(BLCKSZ);
	HamRunHeader *header;
	HamDirEntry *pagedir;
	uint64		written = 0;

	*nentries = w->nentries;
	if (w->nentries == 0)
	{
		for (int t = 0; t < nblocks; t++)
			tuplesort_end(w->sort[t]);
		return InvalidBlockNumber;
	}

	ham_init_page(header_image, HAM_KIND_RUN_HEADER, w->epoch, 0);
	header = HamPageGetRunHeader(header_image);
	header->nblocks = nblocks;
	header->nentries = w->nentries;
	header->ndirs = 0;

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, PROGRESS_HAMMING_PHASE_SORT);
	for (int t = 0; t < nblocks; t++)
		tuplesort_performsort(w->sort[t]);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, PROGRESS_HAMMING_PHASE_WRITE);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, w->nentries * nblocks);
	pagedir = palloc(sizeof(HamDirEntry) * (w->nentries / HAM_PAGE_CAPACITY + 1));
	for (int t = 0; t < nblocks; t++)
	{
		HamRunTable *rt = &header->tables[t];
		uint32		npages = 0;
		int			n = 0;
		uint64	   *codes = HamPageCodes(image);
		ItemPointerData *tids = HamPageTids(image);
		bool		more = true;

		ham_init_page(image, HAM_KIND_RUN_DATA, w->epoch, t);
		while (more)
		{
			more = tuplesort_gettupleslot(w->sort[t], true, false, w->outslot, NULL);
			if (more)
			{
				bool		isnull;

				codes[n] = (uint64) DatumGetInt64(slot_getattr(w->outslot, 1, &isnull)) ^ HAM_SIGN_FLIP;
				tids[n] = *(ItemPointer) DatumGetPointer(slot_getattr(w->outslot, 2, &isnull));
				n++;
			}
			if (n == HAM_PAGE_CAPACITY || (!more && n > 0))
			{
				HamPageGetOpaque(image)->nentries = n;
				pagedir[npages].first = (uint32) (codes[0] >> 32);
				pagedir[npages].blkno = write_page(w->index, image);
				npages++;
				written += n;
				pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, written);
				ham_init_page(image, HAM_KIND_RUN_DATA, w->epoch, t);
				n = 0;
				CHECK_FOR_INTERRUPTS();
			}
		}
		tuplesort_end(w->sort[t]);

		/* the directory of the table */
		rt->ndata = npages;
		rt->ndir = 0;
		rt->dir_offset = header->ndirs;
		for (uint32 p = 0; p < npages; p += HAM_DIR_CAPACITY)
		{
			int			k = (int) Min((uint32) HAM_DIR_CAPACITY, npages - p);

			if (header->ndirs >= (uint32) HAM_RUN_MAX_DIRS)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("index \"%s\" would have more than %d directory pages",
								RelationGetRelationName(w->index), HAM_RUN_MAX_DIRS),
						 errhint("Use fewer blocks (WITH (blocks = 3)) or partition the table.")));
			ham_init_page(image, HAM_KIND_RUN_DIR, w->epoch, t);
			memcpy(HamPageDir(image), &pagedir[p], sizeof(HamDirEntry) * k);
			HamPageGetOpaque(image)->nentries = k;
			header->dirs[header->ndirs].first = pagedir[p].first;
			header->dirs[header->ndirs].blkno = write_page(w->index, image);
			header->ndirs++;
			rt->ndir++;
		}
	}
	return write_page(w->index, header_image);
}

/* Read a run's header; the tables' directories are loaded when needed. */
void
ham_run_dir_open(Relation index, BlockNumber header, uint32 epoch, HamRunDir *dir)
{
	Buffer		buf = ham_read_page(index, header, HAM_KIND_RUN_HEADER, epoch, -1);
	HamRunHeader *h;

	h = HamPageGetRunHeader(BufferGetPage(buf));
	if (h->nblocks < HAM_MIN_TABLES || h->nblocks > HAM_MAX_TABLES ||
		h->ndirs > (uint32) HAM_RUN_MAX_DIRS)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a damaged run header at page %u",
						RelationGetRelationName(index), header)));
	dir->header = palloc(HAM_PAGE_CONTENT_SIZE);
	memcpy(dir->header, h, HAM_PAGE_CONTENT_SIZE);
	UnlockReleaseBuffer(buf);

	dir->epoch = epoch;
	nd_layout_init(&dir->layout, dir->header->nblocks);
	dir->nentries = dir->header->nentries;
	for (int t = 0; t < HAM_MAX_TABLES; t++)
	{
		dir->ndata[t] = t < (int) dir->header->nblocks ? dir->header->tables[t].ndata : 0;
		dir->first[t] = NULL;
		dir->blkno[t] = NULL;
	}
}

void
ham_run_dir_load_table(Relation index, HamRunDir *dir, int table)
{
	HamRunTable *rt = &dir->header->tables[table];
	uint32		n = 0;

	if (dir->first[table] != NULL)
		return;
	if (rt->dir_offset + rt->ndir > dir->header->ndirs)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a damaged run header",
						RelationGetRelationName(index))));
	dir->first[table] = palloc(sizeof(uint64) * (rt->ndata + 1));
	dir->blkno[table] = palloc(sizeof(BlockNumber) * (rt->ndata + 1));
	for (uint32 d = 0; d < rt->ndir; d++)
	{
		Buffer		buf = ham_read_page(index, dir->header->dirs[rt->dir_offset + d].blkno,
										HAM_KIND_RUN_DIR, dir->epoch, table);
		Page		page = BufferGetPage(buf);
		HamPageOpaque opaque = HamPageGetOpaque(page);
		HamDirEntry *entries = HamPageDir(page);

		if (n + opaque->nentries > rt->ndata)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has a damaged directory page %u",
							RelationGetRelationName(index), BufferGetBlockNumber(buf))));
		for (int i = 0; i < opaque->nentries; i++)
		{
			dir->first[table][n] = entries[i].first;
			dir->blkno[table][n] = entries[i].blkno;
			n++;
		}
		UnlockReleaseBuffer(buf);
	}
	if (n != rt->ndata)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has %u directory entries for %u data pages of table %d",
						RelationGetRelationName(index), n, rt->ndata, table)));
}

/*
 * The data pages [*pbegin, *pend) of a table that can hold keys whose
 * leading 32 bits are in [lo, hi]: from the last page starting below lo
 * (its tail may reach lo) to the last page starting at or below hi.
 * Directory entries only ever understate a page's first key (VACUUM removes
 * entries and leaves the directory alone), which widens the range, never
 * narrows it.
 */
void
ham_run_table_pages(HamRunDir *dir, int table, uint32 lo, uint32 hi,
					uint32 *pbegin, uint32 *pend)
{
	size_t		below,
				upto;

	/* pages starting below lo, and at or below hi */
	nd_sorted_range(dir->first[table], dir->ndata[table], lo, hi, &below, &upto);
	*pbegin = below > 0 ? (uint32) below - 1 : 0;
	*pend = (uint32) upto;
}
