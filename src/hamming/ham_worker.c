/*-------------------------------------------------------------------------
 *
 * ham_worker.c
 *		Merges in a background worker, so that the insert that finds the
 *		pending list due for a merge does not pay for it.
 *
 * A merge rewrites the whole run: at 10M rows, seconds of work that one
 * unlucky insert (or COPY) used to do in its own session.  With the index's
 * `background_merge` option on (the default), that insert instead starts a
 * dynamic background worker ("neardup merge" in pg_stat_activity), which
 * needs no configuration beyond a free slot of max_worker_processes, and
 * goes on.  The worker merges while the lists hold a merge's worth and
 * exits; a merge already seals the list first, so inserts never wait for
 * it (ham_merge.c).
 *
 * The insert merges in its own session, as before, when no worker can be
 * started (no free slot, single-user mode), when the index is temporary or
 * new in the inserting transaction (another session cannot see it), and --
 * so that the list a scan reads stays bounded when inserts outrun the
 * merges -- when the unsealed list alone holds twice a merge's worth: then
 * it waits for the merge under way and merges what came in meanwhile.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "hamming.h"

/* An insert starts at most one worker a second per index (the last one) */
#define HAM_LAUNCH_INTERVAL_MS	1000

static Oid	last_launch_index = InvalidOid;
static TimestampTz last_launch_time = 0;

/*
 * Start a worker that merges the index's pending list.  False when none
 * could be registered.
 */
static bool
ham_merge_launch(Relation index)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "$libdir/neardup");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "ham_merge_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "neardup merge of index %u",
			 RelationGetRelid(index));
	snprintf(worker.bgw_type, BGW_MAXLEN, "neardup merge");
	worker.bgw_main_arg = ObjectIdGetDatum(RelationGetRelid(index));
	/* the database; the worker runs as the bootstrap superuser, as autovacuum */
	memcpy(worker.bgw_extra, &MyDatabaseId, sizeof(Oid));
	worker.bgw_notify_pid = 0;
	return RegisterDynamicBackgroundWorker(&worker, &handle);
}

/*
 * An insert found the lists due for a merge (ham_merge_wanted): merge them,
 * or leave it to a background worker.
 */
void
ham_merge_after_insert(Relation index, const HamSnapshot *snap)
{
	int64		merged;
	TimestampTz now;

	if (!ham_option_background_merge(index) ||
		RelationUsesLocalBuffers(index) ||
		index->rd_createSubid != InvalidSubTransactionId ||
		index->rd_firstRelfilenodeSubid != InvalidSubTransactionId)
	{
		ham_merge(index, false, true, &merged);
		return;
	}

	/* Inserts outrun the merges: wait for the one under way, then merge */
	if (snap->pending.nentries >= 2 * ham_merge_threshold(index, snap))
	{
		ham_merge(index, true, true, &merged);
		return;
	}

	/* A sealed list: a merge is under way (or failed, and the next takes it) */
	if (snap->sealed.nentries > 0)
		return;

	/* A worker started recently is merging, or about to */
	now = GetCurrentTimestamp();
	if (last_launch_index == RelationGetRelid(index) &&
		!TimestampDifferenceExceeds(last_launch_time, now, HAM_LAUNCH_INTERVAL_MS))
		return;

	if (ham_merge_launch(index))
	{
		last_launch_index = RelationGetRelid(index);
		last_launch_time = now;
	}
	else
		ham_merge(index, false, true, &merged);
}

/*
 * The worker: merge while the lists hold a merge's worth, one transaction
 * per merge (so that the next one can recycle the pages this one retired).
 * It stops when the index is gone or another session holds the merge lock
 * (that session merges).
 */
void
ham_merge_worker_main(Datum arg)
{
	Oid			indexoid = DatumGetObjectId(arg);
	Oid			dboid;
	bool		more = true;

	memcpy(&dboid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, BOOTSTRAP_SUPERUSERID, 0);

	while (more)
	{
		Relation	index;

		CHECK_FOR_INTERRUPTS();
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		pgstat_report_activity(STATE_RUNNING, "merging a hamming index's pending list");

		index = try_relation_open(indexoid, RowExclusiveLock);
		more = false;
		if (index != NULL && ham_is_hamming_index(index))
		{
			HamSnapshot snap;
			int64		merged;

			ham_read_snapshot(index, &snap);
			if (ham_merge_wanted(index, &snap, false))
				more = ham_merge(index, false, false, &merged);
		}
		if (index != NULL)
			relation_close(index, RowExclusiveLock);
		CommitTransactionCommand();
	}
	pgstat_report_activity(STATE_IDLE, NULL);
}
