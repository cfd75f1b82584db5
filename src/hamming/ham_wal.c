/*-------------------------------------------------------------------------
 *
 * ham_wal.c
 *		The two page changes the index WAL-logs itself: an entry appended
 *		to a list page, a page marked free.  Everything else the index
 *		writes goes through generic WAL's public API.
 *
 * !!! THIS FILE WRITES A PRIVATE FORMAT OF POSTGRESQL'S BY HAND: the block
 * data of a generic WAL record, as src/backend/access/transam/
 * generic_xlog.c writes it (writeFragment) and replays it (applyPageRedo),
 * in static functions that promise nothing across majors.  The record is
 * replayed by PostgreSQL's own generic_redo, on the primary after a crash
 * and on every standby: a format that drifted from it would corrupt the
 * index there.
 *
 * The Makefile builds this code (HAM_WAL=fragments) only for the majors in
 * HAM_WAL_CHECKED, whose generic_xlog.c has been compared with
 * ham_log_fragments below; any other major, and `make HAM_WAL=api`, get
 * the same two changes through the public API (GenericXLogFinish, the
 * #else branch below), which writes the same records some 6 times slower
 * (README, "WAL"; doc/index-hamming.md, "WAL records").  Before adding a
 * major to HAM_WAL_CHECKED, compare its generic_xlog.c with the format
 * described at ham_log_fragments.  Nothing else in neardup writes the
 * format.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/rmgr.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "hamming/hamming.h"

#ifndef HAM_WAL_PUBLIC_API

#define HAM_MAX_FRAGMENTS	3

/*
 * WAL-log bytes of a page changed in place, in a critical section, as a
 * generic WAL record of just those bytes: `n` fragments (field, length).
 *
 * The record is in the format of generic_xlog.c and is replayed by
 * generic_redo as any other.  GenericXLogFinish would find the same
 * fragments by comparing the whole page with a copy of it byte by byte
 * (make HAM_WAL=api builds that, below): the same WAL to the byte, but a
 * COPY of 1M rows into a table with a hamming index then takes 5.7x as
 * long, 82% of its time spent on the API, most of it in that comparison
 * (test/bench/run_wal_format.sh; doc/index-hamming.md, "WAL records").
 * The pages have no hole (pd_lower == pd_upper), so the page replay
 * produces is the page written here, byte for byte;
 * wal_consistency_checking = 'generic' checks that (test/tap/t/
 * 010_index_crash.pl, 011_index_standby.pl).
 *
 * !!! THIS WRITES A PRIVATE FORMAT OF POSTGRESQL'S BY HAND.  generic_xlog.c
 * keeps it in static functions (writeFragment, applyPageRedo) and promises
 * nothing across majors.  Checked against the source of 15.18, 17.11 and
 * 18.6: the same in all three (18 renames the struct PageData).  A record
 * of resource manager RM_GENERIC_ID, info 0, one registered buffer per
 * page (block ids from 0, REGBUF_STANDARD; with REGBUF_FORCE_IMAGE and no
 * data for a full image), whose block data is a sequence of fragments,
 * each an OffsetNumber offset into the page, an OffsetNumber length and
 * that many bytes, with no header, flags or padding; replay copies each
 * fragment in turn, then zeroes the hole between pd_lower and pd_upper.
 * Compare generic_xlog.c of every new major with this before adding it to
 * HAM_WAL_CHECKED in the Makefile (a major not in it is built with
 * HAM_WAL=api); this is the only place that writes the format.
 */
static void
ham_log_fragments(Relation index, Buffer buf, int n, void *const *fields, const uint16 *lengths)
{
	Page		page = BufferGetPage(buf);
	char		delta[HAM_MAX_FRAGMENTS * (2 * sizeof(OffsetNumber) + sizeof(HamPageOpaqueData))];
	char	   *end = delta;
	XLogRecPtr	lsn;

	Assert(CritSectionCount > 0);
	Assert(n <= HAM_MAX_FRAGMENTS);
	Assert(((PageHeader) page)->pd_lower == ((PageHeader) page)->pd_upper);

	MarkBufferDirty(buf);
	if (!RelationNeedsWAL(index))
		return;
	for (int i = 0; i < n; i++)
	{
		OffsetNumber offset = (OffsetNumber) ((char *) fields[i] - (char *) page);
		OffsetNumber length = lengths[i];

		Assert(length <= sizeof(HamPageOpaqueData));
		memcpy(end, &offset, sizeof(offset));
		memcpy(end + sizeof(offset), &length, sizeof(length));
		memcpy(end + sizeof(offset) + sizeof(length), fields[i], length);
		end += sizeof(offset) + sizeof(length) + length;
	}
	XLogBeginInsert();
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, delta, end - delta);
	lsn = XLogInsert(RM_GENERIC_ID, 0);
	PageSetLSN(page, lsn);		/* a macro that evaluates lsn twice */
}

/*
 * Append an entry to a list page that has room for it, exclusively locked,
 * WAL-logged.
 */
void
ham_page_append(Relation index, Buffer buf, uint64 code, ItemPointer tid)
{
	Page		page = BufferGetPage(buf);
	HamPageOpaque opaque = HamPageGetOpaque(page);
	int			n = opaque->nentries;
	void	   *fields[3] = {&HamPageCodes(page)[n], &HamPageTids(page)[n], &opaque->nentries};
	uint16		lengths[3] = {sizeof(uint64), sizeof(ItemPointerData), sizeof(uint16)};

	Assert(n < HAM_PAGE_CAPACITY);
	START_CRIT_SECTION();
	HamPageCodes(page)[n] = code;
	HamPageTids(page)[n] = *tid;
	opaque->nentries = n + 1;
	ham_log_fragments(index, buf, 3, fields, lengths);
	END_CRIT_SECTION();
}

/*
 * Mark a page of no run or list free, exclusively locked, WAL-logged.  Only
 * its special space changes (what it held stays, unread): a compaction at 10M
 * rows retires some 70,000 pages, which a full page image each made 570MB
 * of WAL.
 */
void
ham_page_set_free(Relation index, Buffer buf)
{
	HamPageOpaque opaque = HamPageGetOpaque(BufferGetPage(buf));
	void	   *fields[1] = {opaque};
	uint16		lengths[1] = {sizeof(HamPageOpaqueData)};

	START_CRIT_SECTION();
	ham_init_opaque(opaque, HAM_KIND_FREE, 0, 0);
	ham_log_fragments(index, buf, 1, fields, lengths);
	END_CRIT_SECTION();
}

#else							/* HAM_WAL_PUBLIC_API */

/*
 * make HAM_WAL=api: the same two page changes through generic WAL's public
 * API, as contrib/bloom makes its own: on the copy of the page that
 * GenericXLogRegisterBuffer returns, outside a critical section
 * (GenericXLogFinish enters one, compares the copy with the page, logs the
 * bytes that differ and copies the page back).  The build for a major
 * whose generic_xlog.c nobody has compared with ham_log_fragments; slower
 * (see the comment above ham_log_fragments).
 */
void
ham_page_append(Relation index, Buffer buf, uint64 code, ItemPointer tid)
{
	GenericXLogState *state = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(state, buf, 0);
	HamPageOpaque opaque = HamPageGetOpaque(page);
	int			n = opaque->nentries;

	Assert(n < HAM_PAGE_CAPACITY);
	HamPageCodes(page)[n] = code;
	HamPageTids(page)[n] = *tid;
	opaque->nentries = n + 1;
	GenericXLogFinish(state);
}

void
ham_page_set_free(Relation index, Buffer buf)
{
	GenericXLogState *state = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(state, buf, 0);

	ham_init_opaque(HamPageGetOpaque(page), HAM_KIND_FREE, 0, 0);
	GenericXLogFinish(state);
}

#endif							/* HAM_WAL_PUBLIC_API */
