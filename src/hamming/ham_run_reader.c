/*-------------------------------------------------------------------------
 *
 * ham_run_reader.c
 *		Reading a run (scans, flushes and compactions, the integrity
 *		check): its header, its directory, loaded a page at a time as
 *		searches need it, and its data pages.
 *
 * README, "Reading a run: the directory".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

/* The directory pages of a table of ndata data pages: all full but the last */
static inline uint32
dir_pages_of(uint32 ndata)
{
	return (ndata + HAM_DIR_CAPACITY - 1) / HAM_DIR_CAPACITY;
}

/* Every page of a run: its header, data, directory and index pages */
int64
ham_run_pages(const HamRunDir *dir)
{
	int64		pages = 1;

	for (uint32 t = 0; t < dir->header->nblocks; t++)
		pages += (int64) dir->header->tables[t].ndata + dir_pages_of(dir->header->tables[t].ndata);
	if (dir->header->dir_levels == HAM_RUN_DIRS_INDEXED)
		pages += dir->header->ndirs;
	return pages;
}

/* Read a run's header; the tables' directories are loaded when needed. */
void
ham_run_dir_open(Relation index, BlockNumber header, uint32 epoch, HamRunDir *dir)
{
	Buffer		buf = ham_read_page(index, header, HAM_KIND_RUN_HEADER, epoch, -1);
	HamRunHeader *h;

	h = HamPageGetRunHeader(BufferGetPage(buf));
	if (((h->nblocks < HAM_MIN_TABLES || h->nblocks > HAM_MAX_TABLES) &&
		 (h->nblocks != 1 ||
		  h->tables[HAM_RUN_CUT_SLOT].ndata < HAM_MIN_TABLES ||
		  h->tables[HAM_RUN_CUT_SLOT].ndata > HAM_MAX_TABLES ||
		  h->tables[HAM_RUN_CUT_SLOT].ndir >= h->tables[HAM_RUN_CUT_SLOT].ndata)) ||
		h->ndirs > (uint32) HAM_RUN_MAX_DIRS ||
		(h->dir_levels != HAM_RUN_DIRS_FLAT && h->dir_levels != HAM_RUN_DIRS_INDEXED))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a damaged run header at page %u",
						RelationGetRelationName(index), header)));
	dir->header = palloc(HAM_PAGE_CONTENT_SIZE);
	memcpy(dir->header, h, HAM_PAGE_CONTENT_SIZE);
	UnlockReleaseBuffer(buf);

	dir->epoch = epoch;
	if (dir->header->nblocks == 1)
	{
		/* one table, of the `only_block` option (hamming.h) */
		dir->cut = (int) dir->header->tables[HAM_RUN_CUT_SLOT].ndata;
		dir->only_block = (int) dir->header->tables[HAM_RUN_CUT_SLOT].ndir + 1;
	}
	else
	{
		dir->cut = (int) dir->header->nblocks;
		dir->only_block = 0;
	}
	ham_run_layout(&dir->layout, dir->cut, dir->only_block);
	dir->nentries = dir->header->nentries;
	for (int t = 0; t < HAM_MAX_TABLES; t++)
	{
		dir->ndata[t] = t < (int) dir->header->nblocks ? dir->header->tables[t].ndata : 0;
		dir->first[t] = NULL;
		dir->blkno[t] = NULL;
		dir->recent[t] = NULL;
		dir->complete[t] = false;
		dir->ndirp[t] = 0;
		dir->dfirst[t] = NULL;
		dir->dblkno[t] = NULL;
		dir->dloaded[t] = NULL;
	}
	dir->ctx = CurrentMemoryContext;
}

/*
 * List a table's directory pages, and make room for its directory: the
 * header lists the directory pages, or (two levels) index pages that list
 * them.  Every directory page but the last holds HAM_DIR_CAPACITY entries,
 * and every index page but the last as many directory pages, as the run
 * writer fills them; so directory page j holds data pages from
 * j * HAM_DIR_CAPACITY on.
 */
static void
list_dir_pages(Relation index, HamRunDir *dir, int table)
{
	HamRunTable *rt = &dir->header->tables[table];
	uint32		ndirp = dir_pages_of(rt->ndata);
	uint32		n = 0;
	uint64	   *dfirst;
	BlockNumber *dblkno;
	MemoryContext old;

	if (dir->dfirst[table] != NULL)
		return;
	if (rt->dir_offset + rt->ndir > dir->header->ndirs)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a damaged run header",
						RelationGetRelationName(index))));
	old = MemoryContextSwitchTo(dir->ctx);
	dfirst = palloc(sizeof(uint64) * (ndirp + 1));
	dblkno = palloc(sizeof(BlockNumber) * (ndirp + 1));
	for (uint32 d = 0; d < rt->ndir; d++)
	{
		HamDirEntry *listed = &dir->header->dirs[rt->dir_offset + d];

		if (dir->header->dir_levels == HAM_RUN_DIRS_INDEXED)
		{
			Buffer		ibuf = ham_read_page(index, listed->blkno, HAM_KIND_RUN_DIR_INDEX,
											 dir->epoch, table);
			Page		ipage = BufferGetPage(ibuf);
			int			ndirs = HamPageGetOpaque(ipage)->nentries;

			for (int i = 0; i < ndirs && n < ndirp; i++, n++)
			{
				dfirst[n] = HamPageDir(ipage)[i].first;
				dblkno[n] = HamPageDir(ipage)[i].blkno;
			}
			if (ndirs != (int) Min((uint32) HAM_DIR_CAPACITY, ndirp - d * HAM_DIR_CAPACITY))
				n = ndirp + 1;	/* damaged, reported below */
			UnlockReleaseBuffer(ibuf);
		}
		else if (n < ndirp)
		{
			dfirst[n] = listed->first;
			dblkno[n] = listed->blkno;
			n++;
		}
		else
			n = ndirp + 1;
	}
	if (n != ndirp)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" lists a wrong number of directory pages for the %u data pages of table %d",
						RelationGetRelationName(index), rt->ndata, table)));
	dir->first[table] = palloc(sizeof(uint64) * (rt->ndata + 1));
	dir->blkno[table] = palloc(sizeof(BlockNumber) * (rt->ndata + 1));
	dir->recent[table] = palloc(sizeof(Buffer) * (rt->ndata + 1));
	dir->dloaded[table] = palloc0(sizeof(bool) * (ndirp + 1));
	dir->dblkno[table] = dblkno;
	dir->ndirp[table] = ndirp;
	/* published last: a cached directory outlives errors */
	dir->dfirst[table] = dfirst;
	MemoryContextSwitchTo(old);
}

/* Copy directory page j of a table into its directory, once. */
static void
load_dir_page(Relation index, HamRunDir *dir, int table, uint32 j)
{
	uint32		from = j * HAM_DIR_CAPACITY;
	uint32		count = Min((uint32) HAM_DIR_CAPACITY, dir->ndata[table] - from);
	Buffer		buf;
	Page		page;
	HamDirEntry *entries;

	list_dir_pages(index, dir, table);
	if (dir->dloaded[table][j])
		return;
	buf = ham_read_page(index, dir->dblkno[table][j], HAM_KIND_RUN_DIR, dir->epoch, table);
	page = BufferGetPage(buf);
	entries = HamPageDir(page);
	if (HamPageGetOpaque(page)->nentries != count || entries[0].first != dir->dfirst[table][j])
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a damaged directory page %u",
						RelationGetRelationName(index), BufferGetBlockNumber(buf))));
	for (uint32 i = 0; i < count; i++)
	{
		dir->first[table][from + i] = entries[i].first;
		dir->blkno[table][from + i] = entries[i].blkno;
		dir->recent[table][from + i] = InvalidBuffer;
	}
	UnlockReleaseBuffer(buf);
	dir->dloaded[table][j] = true;
}

/* Load a table's whole directory (a flat pass, the run writer, the check). */
void
ham_run_dir_load_table(Relation index, HamRunDir *dir, int table)
{
	if (dir->complete[table])
		return;
	list_dir_pages(index, dir, table);
	for (uint32 j = 0; j < dir->ndirp[table]; j++)
	{
		load_dir_page(index, dir, table, j);
		CHECK_FOR_INTERRUPTS();
	}
	dir->complete[table] = true;
}

/*
 * Data page `page` of a table of the run, share-locked and checked
 * (ham_read_page).  The directory remembers the buffer each page was read
 * from, and the next read pins that buffer directly while it still holds the
 * page (ReadRecentBuffer), without the buffer mapping table's lookup and
 * lock: an eighth of a flat pass's time at 1M rows.  The statistics count the
 * read as ReadBuffer would.
 */
Buffer
ham_read_run_page(Relation index, HamRunDir *dir, int table, uint32 page)
{
	BlockNumber blkno;
	Buffer		buf;

	/* a range may span directory pages its ends did not read */
	if (!dir->complete[table])
		load_dir_page(index, dir, table, page / HAM_DIR_CAPACITY);
	blkno = dir->blkno[table][page];
	buf = dir->recent[table][page];
	if (BufferIsValid(buf) &&
		ReadRecentBuffer(nd_rel_locator(index), MAIN_FORKNUM, blkno, buf))
	{
		pgstat_count_buffer_read(index);
		pgstat_count_buffer_hit(index);
	}
	else
	{
		buf = ReadBuffer(index, blkno);
		dir->recent[table][page] = buf;
	}
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	ham_check_page(index, buf, HAM_KIND_RUN_DATA, dir->epoch, table);
	return buf;
}

/*
 * The key span of a data page the caller has read (ham_read_run_page), as
 * the directory gives it: from its first entry's leading 32 bits up to the
 * next page's, or past its own last key when the next page's directory
 * page is not loaded.  A guess for nd_interpolate(), never a bound: the
 * directory understates first keys after VACUUM.
 */
uint64
ham_run_page_first(const HamRunDir *dir, int table, uint32 page)
{
	return dir->first[table][page] << 32;
}

static bool
page_next_first(const HamRunDir *dir, int table, uint32 page, uint64 *first)
{
	uint32		next = page + 1;

	if (next >= dir->ndata[table] ||
		!(dir->complete[table] || dir->dloaded[table][next / HAM_DIR_CAPACITY]))
		return false;
	*first = dir->first[table][next] << 32;
	return true;
}

uint64
ham_run_page_next(const HamRunDir *dir, int table, uint32 page,
				  const uint64 *keys, uint32 nentries)
{
	uint64		next;

	if (page_next_first(dir, table, page, &next))
		return next;
	return nentries > 0 ? keys[nentries - 1] + 1 : 0;
}

/*
 * Ask the CPU for the cache lines of a data page a search reads next: its
 * header, its opaque and the keys near `key`, when this backend has read
 * the page from a buffer before.  The buffer is not pinned: if it holds
 * another page by now, the prefetch warms lines nobody reads, and nothing
 * else.  A radius search reads one page per table per run, one after the
 * other; prefetching them all first overlaps their cache and TLB misses
 * (an exclusion constraint's check of each row of a COPY).
 */
void
ham_prefetch_run_page(const HamRunDir *dir, int table, uint32 page, uint64 key)
{
#if defined(__GNUC__) || defined(__clang__)
	Buffer		buf;
	char	   *p;
	uint64		next;
	size_t		at;

	if (page >= dir->ndata[table] || dir->recent[table] == NULL)
		return;
	buf = dir->recent[table][page];
	if (!BufferIsValid(buf) || BufferIsLocal(buf))
		return;
	p = (char *) BufferGetPage(buf);
	if (!page_next_first(dir, table, page, &next))
		next = PG_UINT64_MAX;
	at = nd_interpolate(ham_run_page_first(dir, table, page), next, HAM_PAGE_CAPACITY, key);
	__builtin_prefetch(p);
	__builtin_prefetch(p + BLCKSZ - sizeof(HamPageOpaqueData));
	/* the line of the guess and its neighbours, where the gallop goes */
	at = Min(at, HAM_PAGE_CAPACITY - 1);
	__builtin_prefetch(HamPageCodes(p) + at);
	__builtin_prefetch(HamPageCodes(p) + Min(at + 8, HAM_PAGE_CAPACITY - 1));
	__builtin_prefetch(HamPageCodes(p) + (at >= 8 ? at - 8 : 0));
#endif
}

/* A directory page's entries, for nd_paged_range() */
typedef struct HamDirPages
{
	Relation	index;
	HamRunDir  *dir;
	int			table;
} HamDirPages;

static const uint64 *
dir_page_keys(size_t j, void *arg)
{
	HamDirPages *d = (HamDirPages *) arg;

	load_dir_page(d->index, d->dir, d->table, (uint32) j);
	return d->dir->first[d->table] + j * HAM_DIR_CAPACITY;
}

/*
 * The data pages [*pbegin, *pend) of a table that can hold keys whose
 * leading 32 bits are in [lo, hi]: from the last page starting below lo
 * (its tail may reach lo) to the last page starting at or below hi.
 * Directory entries only ever understate a page's first key (VACUUM removes
 * entries and leaves the directory alone), which widens the range, never
 * narrows it.  Only the directory pages that hold the range are read: a
 * new session's first short search reads a page or two of each table's
 * directory, not all of it.
 */
void
ham_run_table_pages(Relation index, HamRunDir *dir, int table, uint32 lo, uint32 hi,
					uint32 *pbegin, uint32 *pend)
{
	HamDirPages pages = {index, dir, table};
	size_t		below,
				upto;

	list_dir_pages(index, dir, table);
	nd_paged_range(dir->dfirst[table], dir->ndirp[table], HAM_DIR_CAPACITY, dir->ndata[table],
				   dir_page_keys, &pages, lo, hi, &below, &upto);
	*pbegin = below > 0 ? (uint32) below - 1 : 0;
	*pend = (uint32) upto;
}
