/*-------------------------------------------------------------------------
 *
 * ham_run_writer.c
 *		The run writer: a new run from the entries it is given (the index
 *		build, a flush's sealed list) merged with the tables of older runs
 *		(a compaction; a flush into the newest run).
 *
 * README, "Writing a run", describes the writer and the order of the pages
 * it writes.
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
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "hamming/hamming.h"

/*
 * Memory of each table's sort, at most: past this, sorting in runs of this
 * size and merging them is faster than one in-memory sort of everything
 * (fresh memory for every tuple, a quicksort far larger than the CPU
 * caches).  Builds of 1M and 10M rows are fastest at 64MB of
 * maintenance_work_mem (16MB a table); 4GB made them 10-35% slower.
 */
#define HAM_SORT_MAX_KB	(16 * 1024)

/*
 * Directory pages a run header lists before the run takes two levels; 0:
 * as many as the page holds.  A developer's setting, so that tests reach
 * the two-level layout without 600M entries.
 */
int			ham_debug_run_header_dirs = 0;

/*
 * Milliseconds to sleep after writing each page of a run: a developer's
 * setting, so that tests can crash a server in the middle of a flush or a
 * compaction.
 */
int			ham_debug_run_page_delay = 0;

void
ham_init_run_gucs(void)
{
	DefineCustomIntVariable("neardup.debug_run_header_dirs",
							"Directory pages a hamming run's header lists before the run takes two levels (0: as many as fit).",
							"For tests of very large runs on small tables.",
							&ham_debug_run_header_dirs,
							0, 0, HAM_RUN_MAX_DIRS,
							PGC_SUSET, GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("neardup.debug_run_page_delay",
							"Milliseconds a hamming index sleeps after writing each page of a run.",
							"For tests that crash a server in the middle of a flush or a compaction.",
							&ham_debug_run_page_delay,
							0, 0, 1000,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/* Sort keys are signed int8: flipping the top bit orders them unsigned. */
#define HAM_SIGN_FLIP	((uint64) 1 << 63)

/* An entry kept in memory: a code (or a table's key) and its heap TID */
typedef struct HamMemEntry
{
	uint64		key;
	ItemPointerData tid;
} HamMemEntry;

#define ST_SORT ham_sort_entries
#define ST_ELEMENT_TYPE HamMemEntry
#define ST_COMPARE(a, b) ((a)->key < (b)->key ? -1 : (a)->key > (b)->key ? 1 : 0)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

struct HamRunWriter
{
	Relation	index;
	nd_layout	layout;			/* of the tables it writes */
	int			cut;			/* their blocks are of this many */
	int			only_block;		/* 0, or the one table's block (from 1) */
	uint32		epoch;
	MemoryContext cxt;			/* of the writer and its arrays */
	int			sort_kb;		/* memory of each tuplesort */
	/* in memory: the entries, and one table's keys sorted (finish) */
	HamMemEntry *mem;
	uint64		nmem;
	uint64		mem_capacity;
	uint64		max_mem;		/* entries that fit; past them, tuplesorts */
	HamMemEntry *keyed;
	uint64		keyed_pos;
	/* or the tuplesorts, once the entries outgrew the memory */
	bool		spilled;
	TupleDesc	tupdesc;
	TupleTableSlot *slot;		/* to add */
	TupleTableSlot *outslot;	/* to read back */
	Tuplesortstate *sort[HAM_MAX_TABLES];
	uint64		nentries;
};

HamRunWriter *
ham_run_writer_begin(Relation index, int nblocks, int only_block, uint32 epoch,
					 int work_mem_kb)
{
	HamRunWriter *w = palloc0(sizeof(HamRunWriter));
	int			ntables;

	w->index = index;
	w->cut = nblocks;
	w->only_block = only_block;
	ham_run_layout(&w->layout, nblocks, only_block);
	ntables = w->layout.nblocks;
	w->epoch = epoch;
	w->cxt = CurrentMemoryContext;
	w->sort_kb = Max(64, Min(work_mem_kb / ntables, HAM_SORT_MAX_KB));
	/* the array and a keyed copy, in the memory the tuplesorts would take */
	w->max_mem = (uint64) w->sort_kb * ntables * 1024 / (2 * sizeof(HamMemEntry));
	return w;
}

/* An entry to every table's tuplesort, keyed for that table */
static void
put_sorts(HamRunWriter *w, uint64 code, ItemPointer tid)
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
}

/* The in-memory arrays are done with (spilled, or the run written) */
static void
free_memory(HamRunWriter *w)
{
	if (w->mem)
		pfree(w->mem);
	if (w->keyed)
		pfree(w->keyed);
	w->mem = w->keyed = NULL;
	w->nmem = 0;
}

/* Past the memory: hand the entries kept so far to one tuplesort a table. */
static void
ham_run_writer_spill(HamRunWriter *w)
{
	AttrNumber	attno = 1;
	Oid			sortop = Int8LessOperator;
	Oid			collation = InvalidOid;
	bool		nulls_first = false;

	w->tupdesc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(w->tupdesc, 1, "key", INT8OID, -1, 0);
	TupleDescInitEntry(w->tupdesc, 2, "tid", TIDOID, -1, 0);
	w->slot = MakeSingleTupleTableSlot(w->tupdesc, &TTSOpsVirtual);
	w->outslot = MakeSingleTupleTableSlot(w->tupdesc, &TTSOpsMinimalTuple);
	for (int t = 0; t < w->layout.nblocks; t++)
		w->sort[t] = tuplesort_begin_heap(w->tupdesc, 1, &attno, &sortop, &collation,
										  &nulls_first, w->sort_kb, NULL, TUPLESORT_NONE);
	w->spilled = true;
	for (uint64 i = 0; i < w->nmem; i++)
		put_sorts(w, w->mem[i].key, &w->mem[i].tid);
	free_memory(w);
}

void
ham_run_writer_add(HamRunWriter *w, uint64 code, ItemPointer tid)
{
	if (!w->spilled && w->nmem == w->max_mem)
		ham_run_writer_spill(w);
	if (!w->spilled)
	{
		if (w->nmem == w->mem_capacity)
		{
			w->mem_capacity = Min(Max(w->mem_capacity * 2, 1024), w->max_mem);
			w->mem = w->mem ? repalloc_huge(w->mem, w->mem_capacity * sizeof(HamMemEntry))
				: MemoryContextAllocHuge(w->cxt, w->mem_capacity * sizeof(HamMemEntry));
		}
		w->mem[w->nmem].key = code;
		w->mem[w->nmem].tid = *tid;
		w->nmem++;
	}
	else
		put_sorts(w, code, tid);
	w->nentries++;
}

/* Sort the entries of a table: its tuplesort, or a keyed copy in memory */
static void
sort_table(HamRunWriter *w, int table)
{
	if (w->spilled)
	{
		tuplesort_performsort(w->sort[table]);
		return;
	}
	if (w->keyed == NULL && w->nmem > 0)
		w->keyed = MemoryContextAllocHuge(w->cxt, w->nmem * sizeof(HamMemEntry));
	for (uint64 i = 0; i < w->nmem; i++)
	{
		w->keyed[i].key = nd_permute(&w->layout, table, w->mem[i].key);
		w->keyed[i].tid = w->mem[i].tid;
	}
	if (w->nmem > 1)
		ham_sort_entries(w->keyed, w->nmem);
	w->keyed_pos = 0;
}

static void
end_table(HamRunWriter *w, int table)
{
	if (w->spilled && w->sort[table])
	{
		tuplesort_end(w->sort[table]);
		w->sort[table] = NULL;
	}
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
	if (ham_debug_run_page_delay > 0)
	{
		/* a page is now a long while: give way as often (ham_locks.c) */
		pg_usleep(ham_debug_run_page_delay * 1000L);
		ham_maybe_yield(index);
		CHECK_FOR_INTERRUPTS();
	}
	return blkno;
}

/*
 * A table of an existing run read in key order, page by page: the other
 * input of the writer's merge, already sorted, so that a compaction sorts
 * only the new entries.
 */
typedef struct HamRunCursor
{
	Relation	index;
	HamRunDir  *dir;
	int			table;
	uint32		page;			/* next page to read */
	int			n;				/* entries of the page in hand */
	int			pos;
	uint64		codes[HAM_PAGE_CAPACITY];
	ItemPointerData tids[HAM_PAGE_CAPACITY];
} HamRunCursor;

static bool
cursor_next(HamRunCursor *c, uint64 *key, ItemPointerData *tid)
{
	while (c->pos >= c->n)
	{
		Buffer		buf;
		Page		page;

		if (c->dir == NULL || c->page >= c->dir->ndata[c->table])
			return false;
		buf = ham_read_run_page(c->index, c->dir, c->table, c->page);
		page = BufferGetPage(buf);
		c->n = HamPageGetOpaque(page)->nentries;
		memcpy(c->codes, HamPageCodes(page), sizeof(uint64) * c->n);
		memcpy(c->tids, HamPageTids(page), sizeof(ItemPointerData) * c->n);
		UnlockReleaseBuffer(buf);
		c->page++;
		c->pos = 0;
	}
	*key = c->codes[c->pos];
	*tid = c->tids[c->pos];
	c->pos++;
	return true;
}

static bool
sorted_next(HamRunWriter *w, int table, uint64 *key, ItemPointerData *tid)
{
	bool		isnull;

	if (!w->spilled)
	{
		if (w->keyed_pos >= w->nmem)
			return false;
		*key = w->keyed[w->keyed_pos].key;
		*tid = w->keyed[w->keyed_pos].tid;
		w->keyed_pos++;
		return true;
	}
	if (!tuplesort_gettupleslot(w->sort[table], true, false, w->outslot, NULL))
		return false;
	*key = (uint64) DatumGetInt64(slot_getattr(w->outslot, 1, &isnull)) ^ HAM_SIGN_FLIP;
	*tid = *(ItemPointer) DatumGetPointer(slot_getattr(w->outslot, 2, &isnull));
	return true;
}

/*
 * List every table's directory pages in the run header: the pages
 * themselves when they fit (as 0.2 wrote every run), else index pages that
 * list them, per table (HAM_RUN_DIRS_INDEXED).
 */
static void
write_header_dirs(HamRunWriter *w, HamRunHeader *header, Page image,
				  const HamDirEntry *dirpages, uint32 ndirpages, const uint32 *table_dirs)
{
	int			nblocks = w->layout.nblocks;
	uint32		flat_max = ham_debug_run_header_dirs > 0 ?
		(uint32) ham_debug_run_header_dirs : (uint32) HAM_RUN_MAX_DIRS;
	bool		indexed = ndirpages > flat_max;

	header->dir_levels = indexed ? HAM_RUN_DIRS_INDEXED : HAM_RUN_DIRS_FLAT;
	for (int t = 0; t < nblocks; t++)
	{
		HamRunTable *rt = &header->tables[t];
		uint32		from = table_dirs[t];
		uint32		to = t + 1 < nblocks ? table_dirs[t + 1] : ndirpages;

		rt->ndir = 0;
		rt->dir_offset = header->ndirs;
		for (uint32 d = from; d < to; d += indexed ? HAM_DIR_CAPACITY : 1)
		{
			HamDirEntry entry = dirpages[d];

			if (header->ndirs >= (uint32) HAM_RUN_MAX_DIRS)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("index \"%s\" would have more than %d directory index pages",
								RelationGetRelationName(w->index), HAM_RUN_MAX_DIRS)));
			if (indexed)
			{
				int			k = (int) Min((uint32) HAM_DIR_CAPACITY, to - d);

				ham_init_page(image, HAM_KIND_RUN_DIR_INDEX, w->epoch, t);
				memcpy(HamPageDir(image), &dirpages[d], sizeof(HamDirEntry) * k);
				HamPageGetOpaque(image)->nentries = k;
				entry.blkno = write_page(w->index, image);
			}
			header->dirs[header->ndirs++] = entry;
			rt->ndir++;
		}
	}
}

/*
 * Let go of a writer that will not be finished: its sorts and arrays.
 */
void
ham_run_writer_abandon(HamRunWriter *w)
{
	if (w->spilled)
		for (int t = 0; t < w->layout.nblocks; t++)
			if (w->sort[t])
				tuplesort_end(w->sort[t]);
	memset(w->sort, 0, sizeof(w->sort));
	free_memory(w);
}

/*
 * The inputs of a table being written: the entries added, sorted for the
 * table, and the same table of each old run, read in order.
 */
typedef struct HamTableInputs
{
	int			nold;
	HamRunCursor *cur;			/* per old run */
	bool	   *have_old;		/* its cursor has an entry in hand */
	uint64	   *oldkey;			/* that entry */
	ItemPointerData *oldtid;
} HamTableInputs;

/* Where the tables go: their pages, and what the header will list. */
typedef struct HamRunOutput
{
	Page		image;			/* the page being filled */
	Page		header_image;
	HamRunHeader *header;
	uint64		upper;			/* entries of each table, at most */
	uint64		written;		/* entries written, for the progress report */
	HamDirEntry *pagedir;		/* the data pages of the table being written */
	HamDirEntry *dirpages;		/* every table's directory pages */
	uint32		dirpages_cap;
	uint32		ndirpages;
	uint32		table_dirs[HAM_MAX_TABLES]; /* the first of each table's */
} HamRunOutput;

/*
 * Finish, step 1: check that the old runs have the writer's number of
 * tables; returns the entries the new run can hold at most.
 */
static uint64
finish_count_inputs(HamRunWriter *w, HamRunDir **old, int nold)
{
	uint64		upper = w->nentries;

	for (int r = 0; r < nold; r++)
	{
		if (old[r]->cut != w->cut || old[r]->only_block != w->only_block)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has a run of %u tables, its metapage says %d",
							RelationGetRelationName(w->index), old[r]->header->nblocks,
							w->layout.nblocks)));
		upper += old[r]->nentries;
	}
	return upper;
}

/* Finish, step 2: the header page to fill, and room for the directories. */
static void
finish_begin_output(HamRunWriter *w, HamRunOutput *out, uint64 upper)
{
	int			nblocks = w->layout.nblocks;

	ham_init_page(out->header_image, HAM_KIND_RUN_HEADER, w->epoch, 0);
	out->header = HamPageGetRunHeader(out->header_image);
	out->header->nblocks = nblocks;
	if (w->only_block > 0)
	{
		out->header->tables[HAM_RUN_CUT_SLOT].ndata = (uint32) w->cut;
		out->header->tables[HAM_RUN_CUT_SLOT].ndir = (uint32) (w->only_block - 1);
	}
	out->header->dir_levels = HAM_RUN_DIRS_FLAT;
	out->header->ndirs = 0;
	out->upper = upper;
	out->written = 0;
	out->ndirpages = 0;
	out->dirpages_cap = (uint32) nblocks * ((uint32) (upper / HAM_PAGE_CAPACITY / HAM_DIR_CAPACITY) + 2);
	out->dirpages = palloc(sizeof(HamDirEntry) * out->dirpages_cap);
}

/*
 * Finish, step 3 (per table): merge the table's sorted new entries with
 * the same table of every old run into full data pages, written in key
 * order; their directory entries go to out->pagedir.  Returns the entries
 * written; *npages gets the pages.
 */
static uint64
write_table_data(HamRunWriter *w, HamTableInputs *in, HamRunDir **old, HamRunOutput *out,
				 int t, uint32 *npages)
{
	Page		image = out->image;
	int			n = 0;
	uint64		count = 0;
	uint64	   *codes = HamPageCodes(image);
	ItemPointerData *tids = HamPageTids(image);
	uint64		newkey = 0;
	ItemPointerData newtid;
	bool		have_new;
	int			nlive = 0;		/* old runs not yet read to their end */

	*npages = 0;
	if (!w->spilled)
		sort_table(w, t);
	for (int r = 0; r < in->nold; r++)
	{
		ham_run_dir_load_table(w->index, old[r], t);
		memset(&in->cur[r], 0, offsetof(HamRunCursor, codes));
		in->cur[r].index = w->index;
		in->cur[r].dir = old[r];
		in->cur[r].table = t;
		in->have_old[r] = cursor_next(&in->cur[r], &in->oldkey[r], &in->oldtid[r]);
		nlive += in->have_old[r] ? 1 : 0;
	}
	have_new = sorted_next(w, t, &newkey, &newtid);

	ham_init_page(image, HAM_KIND_RUN_DATA, w->epoch, t);
	while (have_new || nlive > 0)
	{
		int			from = -1;	/* the old run with the least key */

		/* few runs take part: a linear minimum beats a heap */
		for (int r = 0; r < in->nold; r++)
			if (in->have_old[r] && (from < 0 || in->oldkey[r] < in->oldkey[from]))
				from = r;
		if (from >= 0 && (!have_new || in->oldkey[from] <= newkey))
		{
			codes[n] = in->oldkey[from];
			tids[n] = in->oldtid[from];
			in->have_old[from] = cursor_next(&in->cur[from], &in->oldkey[from],
											 &in->oldtid[from]);
			nlive -= in->have_old[from] ? 0 : 1;
		}
		else
		{
			codes[n] = newkey;
			tids[n] = newtid;
			have_new = sorted_next(w, t, &newkey, &newtid);
		}
		n++;
		if (n == HAM_PAGE_CAPACITY || (!have_new && nlive == 0))
		{
			if (*npages > out->upper / HAM_PAGE_CAPACITY)
				elog(ERROR, "run of index \"%s\" has more entries than it was given",
					 RelationGetRelationName(w->index));
			HamPageGetOpaque(image)->nentries = n;
			out->pagedir[*npages].first = (uint32) (codes[0] >> 32);
			out->pagedir[*npages].blkno = write_page(w->index, image);
			(*npages)++;
			count += n;
			out->written += n;
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, out->written);
			ham_init_page(image, HAM_KIND_RUN_DATA, w->epoch, t);
			n = 0;
			if (*npages % 64 == 0)
				ham_maybe_yield(w->index);
			CHECK_FOR_INTERRUPTS();
		}
	}
	end_table(w, t);
	return count;
}

/*
 * Finish, step 4 (per table): the table's directory pages, listing its
 * data pages; each goes to out->dirpages, for the header.
 */
static void
write_table_dir(HamRunWriter *w, HamRunOutput *out, int t, uint32 npages)
{
	Page		image = out->image;

	out->header->tables[t].ndata = npages;
	out->table_dirs[t] = out->ndirpages;
	for (uint32 p = 0; p < npages; p += HAM_DIR_CAPACITY)
	{
		int			k = (int) Min((uint32) HAM_DIR_CAPACITY, npages - p);

		if (out->ndirpages >= out->dirpages_cap)
			elog(ERROR, "run of index \"%s\" has more directory pages than it was given",
				 RelationGetRelationName(w->index));
		ham_init_page(image, HAM_KIND_RUN_DIR, w->epoch, t);
		memcpy(HamPageDir(image), &out->pagedir[p], sizeof(HamDirEntry) * k);
		HamPageGetOpaque(image)->nentries = k;
		out->dirpages[out->ndirpages].first = out->pagedir[p].first;
		out->dirpages[out->ndirpages].blkno = write_page(w->index, image);
		out->ndirpages++;
	}
}

/*
 * Write the run: the entries added (the index build, a flush of the
 * pending list), merged table by table with the entries of the runs
 * old[0..nold) (a compaction), which are only read -- so a compaction
 * sorts only what it adds.  Returns the header page, InvalidBlockNumber for
 * a run of no entries (then nothing is written).
 *
 * A table of an old run that holds other entries than its table 0 (a
 * VACUUM pass over it was cancelled) would give tables of different
 * contents: with `uneven` given, the writer then stops, sets *uneven and
 * returns InvalidBlockNumber (the pages it wrote belong to nothing, and are
 * recycled); without, that is an error.
 *
 * The steps: count the inputs; sort (every table's tuplesort first; in
 * memory, one table at a time); per table, its data pages, then its
 * directory pages; the directory index pages if the header cannot list
 * every directory page; and the header last.
 */
BlockNumber
ham_run_writer_finish(HamRunWriter *w, HamRunDir **old, int nold, uint64 *nentries,
					  bool *uneven)
{
	int			nblocks = w->layout.nblocks;
	uint64		upper;
	HamRunOutput out;
	HamTableInputs in;

	upper = finish_count_inputs(w, old, nold);
	*nentries = 0;
	if (uneven)
		*uneven = false;
	if (upper == 0)
	{
		for (int t = 0; t < nblocks; t++)
			end_table(w, t);
		free_memory(w);
		return InvalidBlockNumber;
	}

	in.nold = nold;
	in.cur = palloc0(sizeof(HamRunCursor) * Max(nold, 1));
	in.have_old = palloc0(sizeof(bool) * Max(nold, 1));
	in.oldkey = palloc0(sizeof(uint64) * Max(nold, 1));
	in.oldtid = palloc0(sizeof(ItemPointerData) * Max(nold, 1));
	out.image = palloc(BLCKSZ);
	out.header_image = palloc(BLCKSZ);
	finish_begin_output(w, &out, upper);

	/* tuplesorts sort every table first; in memory, one table at a time */
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, PROGRESS_HAMMING_PHASE_SORT);
	if (w->spilled)
		for (int t = 0; t < nblocks; t++)
			sort_table(w, t);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, PROGRESS_HAMMING_PHASE_WRITE);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, upper * nblocks);
	out.pagedir = palloc(sizeof(HamDirEntry) * (upper / HAM_PAGE_CAPACITY + 1));
	for (int t = 0; t < nblocks; t++)
	{
		uint32		npages;
		uint64		count = write_table_data(w, &in, old, &out, t, &npages);

		if (t == 0)
			*nentries = count;
		else if (count != *nentries && uneven)
		{
			w->sort[t] = NULL;
			ham_run_writer_abandon(w);
			*uneven = true;
			return InvalidBlockNumber;
		}
		else if (count != *nentries)
			elog(ERROR, "table %d of the new run of index \"%s\" has " UINT64_FORMAT " entries, table 0 " UINT64_FORMAT,
				 t, RelationGetRelationName(w->index), count, *nentries);
		write_table_dir(w, &out, t, npages);
	}
	write_header_dirs(w, out.header, out.image, out.dirpages, out.ndirpages, out.table_dirs);
	free_memory(w);
	out.header->nentries = *nentries;
	return write_page(w->index, out.header_image);
}

typedef struct HamRunFeed
{
	Relation	index;
	HamRunWriter *writer;
	int64		added;			/* entries taken from the list */
} HamRunFeed;

/* Add the entries of a list page to the writer (ham_list_walk). */
static void
ham_run_add_list_page(Page page, void *arg)
{
	HamRunFeed *feed = (HamRunFeed *) arg;

	for (int i = 0; i < HamPageGetOpaque(page)->nentries; i++)
		ham_run_writer_add(feed->writer, HamPageCodes(page)[i], &HamPageTids(page)[i]);
	feed->added += HamPageGetOpaque(page)->nentries;
	ham_maybe_yield(feed->index);
}

/* Add every entry of a run's table 0 to the writer, as new entries. */
static void
ham_run_add_table0(Relation index, HamRunWriter *writer, HamRunDir *run)
{
	ham_run_dir_load_table(index, run, 0);
	for (uint32 p = 0; p < run->ndata[0]; p++)
	{
		Buffer		buf = ham_read_run_page(index, run, 0, p);
		Page		page = BufferGetPage(buf);
		int			n = HamPageGetOpaque(page)->nentries;

		for (int i = 0; i < n; i++)
			ham_run_writer_add(writer, nd_unpermute(&run->layout, 0, HamPageCodes(page)[i]),
							   &HamPageTids(page)[i]);
		UnlockReleaseBuffer(buf);
		ham_maybe_yield(index);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Write a new run from the sealed list (NULL: none) and the runs
 * runs[0..nold).  Normally each table of the old runs is read in its own
 * order and merged with the sorted list; when their tables are uneven (a
 * VACUUM pass over them was cancelled: HAM_META_RUN_UNEVEN, or tables
 * found to differ, as in an index that 0.2 vacuumed so), the new run is
 * written from their tables 0 alone, each of which holds every live entry
 * of its run.  Returns the header (InvalidBlockNumber: no entries);
 * *added gets the entries taken from the list.
 */
BlockNumber
ham_run_write(Relation index, int nblocks, int only_block, uint32 epoch,
			  const HamList *sealed, const HamRunRef *runs, int nold, bool uneven,
			  uint64 *nentries, int64 *added)
{
	HamRunFeed feed;
	HamRunDir **old = palloc(sizeof(HamRunDir *) * Max(nold, 1));
	BlockNumber header;
	bool		found_uneven = false;

	for (int r = 0; r < nold; r++)
	{
		old[r] = palloc0(sizeof(HamRunDir));
		ham_run_dir_open(index, runs[r].header, runs[r].epoch, old[r]);
	}
	feed.index = index;
	feed.writer = ham_run_writer_begin(index, nblocks, only_block, epoch, maintenance_work_mem);
	feed.added = 0;
	if (sealed)
		ham_list_walk(index, sealed, ham_run_add_list_page, &feed);
	*added = feed.added;
	if (!uneven)
	{
		header = ham_run_writer_finish(feed.writer, old, nold, nentries,
									   nold > 0 ? &found_uneven : NULL);
		if (!found_uneven)
			return header;
		/* the pages written so far are garbage, recycled later */
		ereport(LOG,
				(errmsg("hamming index \"%s\": the tables of its runs hold different entries; writing the new run from tables 0",
						RelationGetRelationName(index))));
		feed.writer = ham_run_writer_begin(index, nblocks, only_block, epoch, maintenance_work_mem);
		if (sealed)
			ham_list_walk(index, sealed, ham_run_add_list_page, &feed);
	}
	for (int r = 0; r < nold; r++)
		ham_run_add_table0(index, feed.writer, old[r]);
	return ham_run_writer_finish(feed.writer, NULL, 0, nentries, NULL);
}
