/*-------------------------------------------------------------------------
 *
 * progress.c
 *		Progress of the long dedup jobs (simhash_pairs, simhash_clusters,
 *		minhash_clusters, and what runs them), for other sessions to watch:
 *		SELECT * FROM neardup_progress().
 *
 * An extension cannot add a command type to pg_stat_progress_*, so the
 * report is a small table in shared memory, one slot per backend running a
 * job: its pid, database and role, the job, the phase, a count and the
 * phase's total, and when the job and the phase started.  The table is
 * allocated on first use from the slack PostgreSQL keeps for that, as the
 * hamming merge workers' table is (src/hamming/ham_worker.c), so that no
 * shared_preload_libraries is needed.  One spinlock guards it: a job
 * updates its slot a few times per 10,000 rows read or per table, a reader
 * copies the table at once.
 *
 * A slot is freed by the job's end, and also at commit, at the abort of
 * the (sub)transaction the job began in, and at backend exit: an error, a
 * cancelled query or a streamed result that is never read to its end leaves
 * nothing behind.  With all slots taken (more than ND_PROGRESS_SLOTS jobs
 * at once) a job runs unreported.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "progress.h"

#define ND_PROGRESS_SLOTS	64
#define ND_PROGRESS_PHASE	48

typedef struct NdProgressSlot
{
	int			pid;			/* 0: a free slot */
	Oid			dbid;
	Oid			userid;
	char		job[NAMEDATALEN];
	char		phase[ND_PROGRESS_PHASE];
	int64		done;
	int64		total;			/* -1: not known */
	TimestampTz started;
	TimestampTz phase_started;
} NdProgressSlot;

typedef struct NdProgressShared
{
	slock_t		mutex;
	NdProgressSlot slots[ND_PROGRESS_SLOTS];
} NdProgressShared;

static NdProgressShared *progress = NULL;

/* This backend's job: its slot (-1: none), nesting, and where it began */
static int	my_slot = -1;
static int	my_depth = 0;
static int	my_nest_level = 0;

static void progress_release(void);

static void
progress_xact_callback(XactEvent event, void *arg)
{
	if (my_depth > 0 || my_slot >= 0)
		progress_release();
}

/* the abort of the subtransaction the job began in, or of one around it */
static void
progress_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && my_depth > 0 &&
		GetCurrentTransactionNestLevel() <= my_nest_level)
		progress_release();
}

static void
progress_exit(int code, Datum arg)
{
	progress_release();
}

static void
progress_attach(void)
{
	bool		found;

	if (progress)
		return;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	progress = ShmemInitStruct("neardup progress", sizeof(NdProgressShared), &found);
	if (!found)
	{
		SpinLockInit(&progress->mutex);
		memset(progress->slots, 0, sizeof(progress->slots));
	}
	LWLockRelease(AddinShmemInitLock);

	RegisterXactCallback(progress_xact_callback, NULL);
	RegisterSubXactCallback(progress_subxact_callback, NULL);
	on_shmem_exit(progress_exit, (Datum) 0);
}

static void
progress_release(void)
{
	if (my_slot >= 0 && progress)
	{
		SpinLockAcquire(&progress->mutex);
		if (progress->slots[my_slot].pid == MyProcPid)
			memset(&progress->slots[my_slot], 0, sizeof(NdProgressSlot));
		SpinLockRelease(&progress->mutex);
	}
	my_slot = -1;
	my_depth = 0;
}

void
nd_progress_begin(const char *function)
{
	TimestampTz now;

	if (my_depth > 0)
	{
		my_depth++;
		return;
	}
	/* first, so that a failure leaves the depth at 0 */
	progress_attach();
	my_depth = 1;
	my_nest_level = GetCurrentTransactionNestLevel();
	now = GetCurrentTimestamp();

	SpinLockAcquire(&progress->mutex);
	for (int i = 0; i < ND_PROGRESS_SLOTS; i++)
	{
		NdProgressSlot *slot = &progress->slots[i];

		if (slot->pid != 0)
			continue;
		slot->pid = MyProcPid;
		slot->dbid = MyDatabaseId;
		slot->userid = GetUserId();
		strlcpy(slot->job, function, sizeof(slot->job));
		slot->phase[0] = '\0';
		slot->done = 0;
		slot->total = -1;
		slot->started = now;
		slot->phase_started = now;
		my_slot = i;
		break;
	}
	SpinLockRelease(&progress->mutex);
	if (my_slot < 0)
		elog(DEBUG1, "%s: no free progress slot, running unreported", function);
}

void
nd_progress_phase(const char *phase, int64 total)
{
	TimestampTz now;

	if (my_slot < 0)
		return;
	now = GetCurrentTimestamp();
	SpinLockAcquire(&progress->mutex);
	strlcpy(progress->slots[my_slot].phase, phase, ND_PROGRESS_PHASE);
	progress->slots[my_slot].done = 0;
	progress->slots[my_slot].total = total;
	progress->slots[my_slot].phase_started = now;
	SpinLockRelease(&progress->mutex);
}

void
nd_progress_done(int64 done)
{
	if (my_slot < 0)
		return;
	SpinLockAcquire(&progress->mutex);
	progress->slots[my_slot].done = done;
	SpinLockRelease(&progress->mutex);
}

void
nd_progress_end(void)
{
	if (my_depth == 0 || --my_depth > 0)
		return;
	progress_release();
}

/*
 * neardup_progress(OUT pid, OUT datid, OUT job, OUT phase, OUT done, OUT
 * total, OUT started, OUT phase_started): the jobs running now.  As in
 * pg_stat_progress_*, a job of a role whose privileges the caller does not
 * have (nor pg_read_all_stats) shows only its pid and database.
 */
PG_FUNCTION_INFO_V1(nd_progress_sql);
Datum
nd_progress_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	NdProgressSlot *copy = palloc(sizeof(progress->slots));
	bool		all_stats = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);

	InitMaterializedSRF(fcinfo, 0);
	progress_attach();
	SpinLockAcquire(&progress->mutex);
	memcpy(copy, progress->slots, sizeof(progress->slots));
	SpinLockRelease(&progress->mutex);

	for (int i = 0; i < ND_PROGRESS_SLOTS; i++)
	{
		NdProgressSlot *slot = &copy[i];
		Datum		values[8];
		bool		nulls[8] = {false};

		if (slot->pid == 0)
			continue;
		values[0] = Int32GetDatum(slot->pid);
		values[1] = ObjectIdGetDatum(slot->dbid);
		if (all_stats || has_privs_of_role(GetUserId(), slot->userid))
		{
			values[2] = CStringGetTextDatum(slot->job);
			values[3] = CStringGetTextDatum(slot->phase);
			nulls[3] = slot->phase[0] == '\0';
			values[4] = Int64GetDatum(slot->done);
			values[5] = Int64GetDatum(slot->total);
			nulls[5] = slot->total < 0;
			values[6] = TimestampTzGetDatum(slot->started);
			values[7] = TimestampTzGetDatum(slot->phase_started);
		}
		else
			for (int c = 2; c < 8; c++)
				nulls[c] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
