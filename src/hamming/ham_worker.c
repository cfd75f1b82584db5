/*-------------------------------------------------------------------------
 *
 * ham_worker.c
 *		Merges in a background worker, so that the insert that finds the
 *		pending list due for a merge does not pay for it.
 *
 * A merge can rewrite a large run: at 10M rows, seconds of work that one
 * unlucky insert (or COPY) would otherwise do in its own session.  With the
 * index's `background_merge` option on (the default), that insert instead
 * starts a dynamic background worker ("neardup merge" in pg_stat_activity),
 * which needs no configuration beyond a free slot of max_worker_processes,
 * and goes on.  The worker merges while the lists hold a merge's worth and
 * exits; a merge already seals the list first, so inserts never wait for
 * it (ham_merge.c).
 *
 * The insert merges in its own session, as before, when no worker can be
 * started (no free slot, single-user mode, neardup.max_merge_workers
 * reached), when the index is temporary or new in the inserting transaction
 * (another session cannot see it), and -- so that the list a scan reads
 * stays bounded when inserts outrun the merges -- when the lists hold a
 * third more than a merge's worth (the brake, ham_brake_wanted): then it
 * waits for the merge under way and merges what came in meanwhile.
 *
 * The brake never waits on a lock: it polls the merge lock, so that
 * lock_timeout, the deadlock checker (which would cancel an autovacuum
 * holding the lock) and the lock queue are not involved; it waits only
 * while a merge is under way (ham_merge_running), or while a compaction
 * holds the newest run with every run slot taken (ham_flush_blocked: no
 * flush can be done then, and the list would grow until the compaction
 * ends), never for a VACUUM pass or a check, and gives up before the
 * statement's statement_timeout.  The brake applies whether or not the
 * index merges in the background.
 *
 * Workers are few and never stuck.  A small table in shared memory
 * (allocated on first use, from the slack PostgreSQL keeps for that, as
 * pg_prewarm's autoprewarm does) records each index's worker and its last
 * launch: at most one worker per index, at most one launch a second per
 * index from all backends, at most neardup.max_merge_workers at once in the
 * cluster, so that parallel query, logical replication and other
 * extensions keep their max_worker_processes slots.  A worker takes its
 * locks only if they are free at once, and exits otherwise; its merge
 * gives way to a session that waits for a lock on the index.  It connects
 * as the bootstrap superuser (PostgreSQL 15 starts no worker as a NOLOGIN
 * role) but merges as the index's owner in a security-restricted
 * operation; it calls no user code.
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
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "hamming.h"

/* At most one launch a second per index, from all backends */
#define HAM_LAUNCH_INTERVAL_MS	1000

/* A launch whose worker never reported in is forgotten after this */
#define HAM_LAUNCH_STALE_MS		10000

/* The brake polls the merge lock this often */
#define HAM_BRAKE_POLL_MS		10

#define HAM_WORKER_SLOTS		64

int			ham_max_merge_workers = 2;

typedef struct HamWorkerSlot
{
	Oid			dbid;			/* InvalidOid: a free slot */
	Oid			indexoid;
	TimestampTz launched;		/* the last launch for this index */
	int			pid;			/* the worker, 0 if none; -1: launching */
} HamWorkerSlot;

typedef struct HamWorkerShared
{
	slock_t		mutex;
	HamWorkerSlot slots[HAM_WORKER_SLOTS];
} HamWorkerShared;

static HamWorkerShared *ham_workers = NULL;

/* This backend's last launch attempt: spares the spinlock on every insert */
static Oid	last_attempt_index = InvalidOid;
static TimestampTz last_attempt_time = 0;

void
ham_init_worker_gucs(void)
{
	DefineCustomIntVariable("neardup.max_merge_workers",
							"Background workers that merge hamming indexes at once, in the whole cluster.",
							"Past it, an insert merges in its own session. 0: inserts always merge themselves.",
							&ham_max_merge_workers,
							2, 0, 64,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);
}

static void
ham_workers_attach(void)
{
	bool		found;

	if (ham_workers)
		return;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ham_workers = ShmemInitStruct("neardup merge workers", sizeof(HamWorkerShared), &found);
	if (!found)
	{
		SpinLockInit(&ham_workers->mutex);
		memset(ham_workers->slots, 0, sizeof(ham_workers->slots));
	}
	LWLockRelease(AddinShmemInitLock);
}

static inline bool
slot_active(const HamWorkerSlot *slot, TimestampTz now)
{
	if (slot->pid > 0)
		return true;
	return slot->pid < 0 &&
		!TimestampDifferenceExceeds(slot->launched, now, HAM_LAUNCH_STALE_MS);
}

typedef enum HamReserve
{
	HAM_RESERVED,				/* a slot is ours: launch */
	HAM_BUSY,					/* a worker runs, or was launched just now */
	HAM_FULL					/* neardup.max_merge_workers run */
} HamReserve;

/* Reserve the index's slot for a launch; *slotno gets it. */
static HamReserve
ham_worker_reserve(Relation index, TimestampTz now, int *slotno)
{
	Oid			indexoid = RelationGetRelid(index);
	int			mine = -1,
				oldest = -1,
				active = 0;
	HamReserve	result;

	SpinLockAcquire(&ham_workers->mutex);
	for (int i = 0; i < HAM_WORKER_SLOTS; i++)
	{
		HamWorkerSlot *slot = &ham_workers->slots[i];

		if (slot_active(slot, now))
			active++;
		else if (slot->pid < 0)
			slot->pid = 0;		/* a launch that never reported in */
		if (slot->dbid == MyDatabaseId && slot->indexoid == indexoid)
			mine = i;
		else if (!slot_active(slot, now) &&
				 (oldest < 0 || slot->dbid == InvalidOid ||
				  (ham_workers->slots[oldest].dbid != InvalidOid &&
				   slot->launched < ham_workers->slots[oldest].launched)))
			oldest = i;
	}
	if (mine >= 0 && (slot_active(&ham_workers->slots[mine], now) ||
					  !TimestampDifferenceExceeds(ham_workers->slots[mine].launched, now,
												  HAM_LAUNCH_INTERVAL_MS)))
		result = HAM_BUSY;
	else if (active >= ham_max_merge_workers || (mine < 0 && oldest < 0))
		result = HAM_FULL;
	else
	{
		HamWorkerSlot *slot = &ham_workers->slots[mine >= 0 ? mine : oldest];

		slot->dbid = MyDatabaseId;
		slot->indexoid = indexoid;
		slot->launched = now;
		slot->pid = -1;
		*slotno = mine >= 0 ? mine : oldest;
		result = HAM_RESERVED;
	}
	SpinLockRelease(&ham_workers->mutex);
	return result;
}

/* The launch failed: the slot is free again (its launch time stays). */
static void
ham_worker_unreserve(int slotno)
{
	SpinLockAcquire(&ham_workers->mutex);
	ham_workers->slots[slotno].pid = 0;
	SpinLockRelease(&ham_workers->mutex);
}

/*
 * Start a worker that merges the index's pending list.  False when none
 * could be registered.
 */
static bool
ham_merge_launch(Relation index, int slotno)
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
	memcpy(worker.bgw_extra, &MyDatabaseId, sizeof(Oid));
	memcpy(worker.bgw_extra + sizeof(Oid), &slotno, sizeof(int));
	worker.bgw_notify_pid = 0;
	return RegisterDynamicBackgroundWorker(&worker, &handle);
}

/*
 * The brake (ham_brake_wanted) is on.  Merge in this
 * session as soon as the merge lock is free and a flush can be done; while
 * a merge holds the lock, or a compaction holds the newest run with every
 * run slot taken (ham_flush_blocked), poll (ham_merge_running tells a
 * merge from VACUUM or a check).  Gives up (the list stays long a while
 * longer) when the lock is held by something other than a merge (VACUUM, a
 * check), when a merge brought the list down meanwhile, or when the
 * statement's timeout is near.
 */
static void
ham_merge_brake(Relation index)
{
	for (;;)
	{
		HamSnapshot snap;
		int64		merged;

		if (ham_merge_trylock(index))
		{
			bool		blocked = false;

			ham_read_snapshot(index, &snap);
			if (ham_merge_wanted(index, &snap, false) &&
				!ham_merge_locked(index, true, &merged))
			{
				/* no flush: was it for want of a run slot? */
				ham_read_snapshot(index, &snap);
				blocked = ham_flush_blocked(index, &snap);
			}
			ham_merge_unlock(index);
			if (!blocked)
				return;
		}
		else if (!ham_merge_running(index))
			return;
		ham_read_snapshot(index, &snap);
		if (!ham_brake_wanted(index, &snap))
			return;
		if (get_timeout_active(STATEMENT_TIMEOUT) &&
			!TimestampDifferenceExceeds(GetCurrentTimestamp(),
										get_timeout_finish_time(STATEMENT_TIMEOUT),
										4 * HAM_BRAKE_POLL_MS))
			return;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 HAM_BRAKE_POLL_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
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
	int			slotno = -1;
	HamReserve	reserve;

	if (!ham_option_background_merge(index) || ham_max_merge_workers == 0 ||
		!IsUnderPostmaster ||
		RelationUsesLocalBuffers(index) ||
		index->rd_createSubid != InvalidSubTransactionId ||
		nd_rel_first_locator_subid(index) != InvalidSubTransactionId)
	{
		/* the brake here too: another session may be flushing or compacting */
		if (ham_brake_wanted(index, snap))
		{
			ham_merge_brake(index);
			ham_compact(index, false);
		}
		else
			ham_merge(index, false, true, &merged);
		return;
	}

	/* Inserts outrun the merges: wait for the one under way, then merge */
	if (ham_brake_wanted(index, snap))
	{
		ham_merge_brake(index);
		return;
	}

	/* This backend tried for this index just now */
	now = GetCurrentTimestamp();
	if (last_attempt_index == RelationGetRelid(index) &&
		!TimestampDifferenceExceeds(last_attempt_time, now, HAM_LAUNCH_INTERVAL_MS))
		return;
	last_attempt_index = RelationGetRelid(index);
	last_attempt_time = now;

	/* A merge, VACUUM or check holds the lock: a worker would only exit */
	if (!ham_merge_trylock(index))
		return;
	ham_merge_unlock(index);

	ham_workers_attach();
	reserve = ham_worker_reserve(index, now, &slotno);
	if (reserve == HAM_BUSY)
		return;
	if (reserve == HAM_RESERVED)
	{
		if (ham_merge_launch(index, slotno))
			return;
		ham_worker_unreserve(slotno);
	}
	/* no worker to be had: merge here, unless someone else is merging */
	ham_merge(index, false, true, &merged);
}

/* The worker's slot is free again when it exits, however it exits. */
static void
ham_worker_exit(int code, Datum arg)
{
	int			slotno = DatumGetInt32(arg);

	SpinLockAcquire(&ham_workers->mutex);
	if (ham_workers->slots[slotno].pid == MyProcPid)
		ham_workers->slots[slotno].pid = 0;
	SpinLockRelease(&ham_workers->mutex);
}

/*
 * The worker: merge while the lists hold a merge's worth, one transaction
 * per merge (so that the next one can recycle the pages this one retired).
 * It stops when the index is gone, or when its lock or the merge lock is
 * not free at once (whoever holds it merges, or will start a worker).
 */
void
ham_merge_worker_main(Datum arg)
{
	Oid			indexoid = DatumGetObjectId(arg);
	Oid			dboid;
	int			slotno;
	bool		more = true;

	memcpy(&dboid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	memcpy(&slotno, MyBgworkerEntry->bgw_extra + sizeof(Oid), sizeof(int));
	if (slotno < 0 || slotno >= HAM_WORKER_SLOTS)
		return;

	ham_workers_attach();
	SpinLockAcquire(&ham_workers->mutex);
	if (ham_workers->slots[slotno].dbid != dboid ||
		ham_workers->slots[slotno].indexoid != indexoid ||
		ham_workers->slots[slotno].pid != -1)
		more = false;			/* the launch was given up on: not ours */
	else
		ham_workers->slots[slotno].pid = MyProcPid;
	SpinLockRelease(&ham_workers->mutex);
	if (!more)
		return;

	/*
	 * Registered before the connection, so that it runs after the backend's
	 * entry has left pg_stat_activity (exit callbacks run in reverse): a
	 * worker's slot is never free while it still shows there.
	 */
	on_shmem_exit(ham_worker_exit, Int32GetDatum(slotno));

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, BOOTSTRAP_SUPERUSERID, 0);
	ham_merge_yields = true;

	while (more)
	{
		Relation	index = NULL;
		Oid			save_userid;
		int			save_sec_context;
		int			save_nestlevel;

		CHECK_FOR_INTERRUPTS();
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		pgstat_report_activity(STATE_RUNNING, "merging a hamming index's pending list");

		more = false;
		if (ConditionalLockRelationOid(indexoid, HAM_WORKER_LOCKMODE))
		{
			index = try_relation_open(indexoid, NoLock);
			if (index == NULL)
				UnlockRelationOid(indexoid, HAM_WORKER_LOCKMODE);
		}
		if (index != NULL && ham_is_hamming_index(index))
		{
			HamSnapshot snap;
			int64		merged;

			GetUserIdAndSecContext(&save_userid, &save_sec_context);
			SetUserIdAndSecContext(index->rd_rel->relowner,
								   save_sec_context | SECURITY_RESTRICTED_OPERATION);
			save_nestlevel = NewGUCNestLevel();

			ham_read_snapshot(index, &snap);
			if (ham_merge_wanted(index, &snap, false))
				more = ham_merge(index, false, false, &merged);
			else if (ham_compact_wanted(index, &snap))
				more = ham_compact(index, false) > 0;

			AtEOXact_GUC(false, save_nestlevel);
			SetUserIdAndSecContext(save_userid, save_sec_context);
		}
		if (index != NULL)
			relation_close(index, HAM_WORKER_LOCKMODE);
		CommitTransactionCommand();
	}
	pgstat_report_activity(STATE_IDLE, NULL);
}
