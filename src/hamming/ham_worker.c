/*-------------------------------------------------------------------------
 *
 * ham_worker.c
 *		What an insert does when it finds the pending list due for a
 *		flush: start a background worker that flushes and compacts (the
 *		"neardup merge" worker), or flush itself; and the brake, which makes
 *		it flush itself when inserts outrun the flushes.
 *
 * README, "The worker and the brake", describes both.
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

#include "hamming/hamming.h"

/* At most one launch a second per index, from all backends */
#define HAM_LAUNCH_INTERVAL_MS	1000

/* A launch whose worker never reported in is forgotten after this */
#define HAM_LAUNCH_STALE_MS		10000

/* The brake polls the flush lock this often */
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
 * Start a worker that flushes the index's pending list and compacts its
 * runs.  False when none could be registered.
 */
static bool
ham_worker_launch(Relation index, int slotno)
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
 * The brake (ham_brake_wanted) is on.  Flush in this session as soon as
 * the flush lock is free and a flush can be done; while a flush holds the
 * lock, or a compaction holds the newest run with every run slot taken
 * (ham_flush_blocked), poll (ham_flush_running tells a flush from VACUUM
 * or a check).  Gives up (the list stays long a while longer) when the lock
 * is held by something other than a flush (VACUUM, a check), when a flush
 * brought the list down meanwhile, or when the statement's timeout is near.
 */
static void
ham_brake(Relation index)
{
	for (;;)
	{
		HamSnapshot snap;
		int64		flushed;

		if (ham_flush_trylock(index))
		{
			bool		blocked = false;

			ham_read_snapshot(index, &snap);
			if (ham_flush_wanted(index, &snap, false) &&
				!ham_flush_locked(index, true, &flushed))
			{
				/* no flush: was it for want of a run slot? */
				ham_read_snapshot(index, &snap);
				blocked = ham_flush_blocked(index, &snap);
			}
			ham_flush_unlock(index);
			if (!blocked)
				return;
		}
		else if (!ham_flush_running(index))
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
 * An insert found the lists due for a flush (ham_flush_wanted): flush them
 * (and compact), or leave it to a background worker.
 */
void
ham_flush_after_insert(Relation index, const HamSnapshot *snap)
{
	int64		flushed;
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
			ham_brake(index);
			ham_compact(index, false);
		}
		else
			ham_flush_and_compact(index, false, true, &flushed);
		return;
	}

	/* Inserts outrun the flushes: wait for the one under way, then flush */
	if (ham_brake_wanted(index, snap))
	{
		ham_brake(index);
		return;
	}

	/* This backend tried for this index just now */
	now = GetCurrentTimestamp();
	if (last_attempt_index == RelationGetRelid(index) &&
		!TimestampDifferenceExceeds(last_attempt_time, now, HAM_LAUNCH_INTERVAL_MS))
		return;
	last_attempt_index = RelationGetRelid(index);
	last_attempt_time = now;

	/* A flush, VACUUM or check holds the lock: a worker would only exit */
	if (!ham_flush_trylock(index))
		return;
	ham_flush_unlock(index);

	ham_workers_attach();
	reserve = ham_worker_reserve(index, now, &slotno);
	if (reserve == HAM_BUSY)
		return;
	if (reserve == HAM_RESERVED)
	{
		if (ham_worker_launch(index, slotno))
			return;
		ham_worker_unreserve(slotno);
	}
	/* no worker to be had: flush here, unless someone else is flushing */
	ham_flush_and_compact(index, false, true, &flushed);
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
 * The worker: flush while the lists hold a flush's worth, then compact
 * while the policy wants, one transaction per flush or compaction (so that
 * the next one can recycle the pages this one retired).  It stops when the
 * index is gone, or when its lock or the flush lock is not free at once
 * (whoever holds it flushes, or will start a worker).
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
	ham_yields = true;

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
			int64		flushed;

			GetUserIdAndSecContext(&save_userid, &save_sec_context);
			SetUserIdAndSecContext(index->rd_rel->relowner,
								   save_sec_context | SECURITY_RESTRICTED_OPERATION);
			save_nestlevel = NewGUCNestLevel();

			ham_read_snapshot(index, &snap);
			if (ham_flush_wanted(index, &snap, false))
				more = ham_flush_and_compact(index, false, false, &flushed);
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
