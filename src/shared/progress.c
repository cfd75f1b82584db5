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
 * at once) a job runs unreported.  So that one role cannot blind the table
 * for everyone, a role other than a superuser holds at most
 * ND_PROGRESS_ROLE_SLOTS slots at once; its further jobs run unreported.
 *
 * The text fingerprint functions (simhash(text), simhash(tsvector),
 * minhash(text)) are not jobs: a bulk UPDATE calls them once per row and
 * has no end they could see.  They count their calls in a local counter,
 * reset when a new top-level statement starts, and publish it every
 * ND_FINGERPRINT_EVERY calls or ND_FINGERPRINT_BYTES of text as a job
 * "fingerprinting" that belongs to the statement: the slot remembers the
 * statement's start, and neardup_progress() shows it only while the
 * backend still runs that statement (pg_stat_activity's query_start and
 * state).  Once that statement has ended the slot is free for the taking:
 * a job that finds no free slot reclaims one whose statement is over,
 * so sessions left idle in a transaction after a bulk UPDATE hold no
 * slot.  Otherwise it is freed at transaction end.  Inside a job the job
 * reports, not the fingerprints.
 *
 * Any role may call neardup_progress_begin/phase/end (dedup_keep_one, a
 * SECURITY INVOKER function, calls them with its caller's rights): they
 * write only the caller's own slot, under the cap above.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "shared/progress.h"
#include "pg_compat.h"

#define ND_PROGRESS_SLOTS	64
#define ND_PROGRESS_ROLE_SLOTS	(ND_PROGRESS_SLOTS / 4)
#define ND_PROGRESS_PHASE	48
#define ND_PROGRESS_NEST	8

/* a fingerprinting statement publishes its count this often */
#define ND_FINGERPRINT_EVERY	10000
#define ND_FINGERPRINT_BYTES	(8 * 1024 * 1024)

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
	TimestampTz statement;		/* fingerprinting: the statement's start;
								 * 0 for a job */
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

/*
 * The phase of each job a nested job interrupts, shown again when the
 * nested job ends (dedup_keep_one's "finding clusters" after the
 * simhash_pairs its pairs query ran)
 */
typedef struct NdProgressSaved
{
	char		phase[ND_PROGRESS_PHASE];
	int64		done;
	int64		total;
	TimestampTz phase_started;
} NdProgressSaved;
static NdProgressSaved my_saved[ND_PROGRESS_NEST];

/* This backend's fingerprints in the current statement */
static TimestampTz fp_statement = 0;
static int64 fp_count = 0;
static int64 fp_next_report = 0;	/* the count that publishes next */
static int64 fp_bytes = 0;		/* since the last report */
static int	fp_kinds = 0;		/* ND_FINGERPRINT_* bits */

static void progress_release(void);
static bool fingerprinting_statement_runs(const NdProgressSlot *slot);

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

/* A slot of this backend for job, its counts and times still to be set */
static void
progress_slot_init(NdProgressSlot *slot, const char *job)
{
	TimestampTz now = GetCurrentTimestamp();

	memset(slot, 0, sizeof(NdProgressSlot));
	slot->pid = MyProcPid;
	slot->dbid = MyDatabaseId;
	slot->userid = GetUserId();
	strlcpy(slot->job, job, sizeof(slot->job));
	slot->started = now;
	slot->phase_started = now;
}

/*
 * Takes a slot for this backend, filled with *init; -1 when none may be
 * had.  First a free one; failing that (the table full, or the role at its
 * cap), a fingerprinting slot whose statement is over.  Whether a
 * statement is over is read from pg_stat_activity, which allocates, so it
 * is worked out on a copy of the table outside the lock, and a slot is
 * reclaimed only if it still holds what the copy showed.
 */
static int
progress_claim(const NdProgressSlot *init)
{
	bool		capped = !superuser();
	NdProgressSlot seen[ND_PROGRESS_SLOTS];
	bool		over[ND_PROGRESS_SLOTS];

	for (int pass = 0; pass < 2; pass++)
	{
		int			held = 0;
		int			found = -1;

		if (pass == 1)
		{
			SpinLockAcquire(&progress->mutex);
			memcpy(seen, progress->slots, sizeof(seen));
			SpinLockRelease(&progress->mutex);
			/* a fresh view of the other backends, not this transaction's */
			pgstat_clear_backend_activity_snapshot();
			for (int i = 0; i < ND_PROGRESS_SLOTS; i++)
				over[i] = seen[i].pid != 0 && seen[i].pid != MyProcPid &&
					seen[i].statement != 0 && !fingerprinting_statement_runs(&seen[i]);
		}

		SpinLockAcquire(&progress->mutex);
		for (int i = 0; i < ND_PROGRESS_SLOTS; i++)
		{
			NdProgressSlot *slot = &progress->slots[i];
			bool		reclaimable = pass == 1 && over[i] &&
				slot->pid == seen[i].pid && slot->statement == seen[i].statement;

			if (slot->pid != 0 && !reclaimable && slot->userid == init->userid)
				held++;
			if (found < 0 && (slot->pid == 0 || reclaimable))
				found = i;
		}
		if (found >= 0 && !(capped && held >= ND_PROGRESS_ROLE_SLOTS))
		{
			progress->slots[found] = *init;
			SpinLockRelease(&progress->mutex);
			return found;
		}
		SpinLockRelease(&progress->mutex);
	}
	return -1;
}

void
nd_progress_begin(const char *function)
{
	NdProgressSlot init;

	if (my_depth > 0)
	{
		if (my_slot >= 0 && my_depth <= ND_PROGRESS_NEST)
		{
			NdProgressSaved *saved = &my_saved[my_depth - 1];

			SpinLockAcquire(&progress->mutex);
			memcpy(saved->phase, progress->slots[my_slot].phase, ND_PROGRESS_PHASE);
			saved->done = progress->slots[my_slot].done;
			saved->total = progress->slots[my_slot].total;
			saved->phase_started = progress->slots[my_slot].phase_started;
			SpinLockRelease(&progress->mutex);
		}
		my_depth++;
		return;
	}
	/* first, so that a failure leaves the depth at 0 */
	progress_attach();
	my_depth = 1;
	my_nest_level = GetCurrentTransactionNestLevel();

	progress_slot_init(&init, function);
	init.total = -1;

	/* the statement's fingerprinting slot, if still ours, becomes the job's */
	if (my_slot >= 0)
	{
		SpinLockAcquire(&progress->mutex);
		if (progress->slots[my_slot].pid == MyProcPid)
			progress->slots[my_slot] = init;
		else
			my_slot = -1;		/* reclaimed after its statement ended */
		SpinLockRelease(&progress->mutex);
	}
	if (my_slot < 0)
		my_slot = progress_claim(&init);
	if (my_slot < 0)
		elog(DEBUG1, "%s: no free progress slot, running unreported", function);
}

/*
 * Outside a job these do nothing: this backend may then hold only a
 * fingerprinting slot, which another backend may have reclaimed.
 */
void
nd_progress_phase(const char *phase, int64 total)
{
	TimestampTz now;

	if (my_slot < 0 || my_depth == 0)
		return;
	now = GetCurrentTimestamp();
	SpinLockAcquire(&progress->mutex);
	if (progress->slots[my_slot].pid == MyProcPid)
	{
		strlcpy(progress->slots[my_slot].phase, phase, ND_PROGRESS_PHASE);
		progress->slots[my_slot].done = 0;
		progress->slots[my_slot].total = total;
		progress->slots[my_slot].phase_started = now;
	}
	SpinLockRelease(&progress->mutex);
}

void
nd_progress_done(int64 done)
{
	if (my_slot < 0 || my_depth == 0)
		return;
	SpinLockAcquire(&progress->mutex);
	if (progress->slots[my_slot].pid == MyProcPid)
		progress->slots[my_slot].done = done;
	SpinLockRelease(&progress->mutex);
}

void
nd_progress_end(void)
{
	if (my_depth == 0)
		return;
	if (--my_depth == 0)
	{
		progress_release();
		return;
	}
	if (my_slot >= 0 && my_depth <= ND_PROGRESS_NEST)
	{
		NdProgressSaved *saved = &my_saved[my_depth - 1];

		SpinLockAcquire(&progress->mutex);
		memcpy(progress->slots[my_slot].phase, saved->phase, ND_PROGRESS_PHASE);
		progress->slots[my_slot].done = saved->done;
		progress->slots[my_slot].total = saved->total;
		progress->slots[my_slot].phase_started = saved->phase_started;
		SpinLockRelease(&progress->mutex);
	}
}

/*
 * neardup_progress_begin(job text), neardup_progress_phase(phase text,
 * total int8), neardup_progress_end(): the same report for a job written
 * in SQL or PL/pgSQL (dedup_keep_one).  A NULL total is not known.
 */
PG_FUNCTION_INFO_V1(nd_progress_begin_sql);
Datum
nd_progress_begin_sql(PG_FUNCTION_ARGS)
{
	char	   *job;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("job must not be null")));
	job = text_to_cstring(PG_GETARG_TEXT_PP(0));
	/* the slot's field cuts it: not inside a character */
	job[pg_mbcliplen(job, strlen(job), NAMEDATALEN - 1)] = '\0';
	nd_progress_begin(job);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(nd_progress_phase_sql);
Datum
nd_progress_phase_sql(PG_FUNCTION_ARGS)
{
	/* a copy of its own: the terminator below is written into it */
	char	   *phase = PG_ARGISNULL(0) ? pstrdup("") : text_to_cstring(PG_GETARG_TEXT_PP(0));
	int64		total = PG_ARGISNULL(1) ? -1 : PG_GETARG_INT64(1);

	if (total < -1 || (total == -1 && !PG_ARGISNULL(1)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("total must not be negative"),
				 errhint("Give NULL when the total is not known.")));

	phase[pg_mbcliplen(phase, strlen(phase), ND_PROGRESS_PHASE - 1)] = '\0';
	nd_progress_phase(phase, total);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(nd_progress_end_sql);
Datum
nd_progress_end_sql(PG_FUNCTION_ARGS)
{
	nd_progress_end();
	PG_RETURN_VOID();
}

/*
 * One more text fingerprinted by the current statement, of len bytes, by
 * one of the ND_FINGERPRINT_* functions: a call, two compares and a few
 * additions, and every ND_FINGERPRINT_EVERY calls or ND_FINGERPRINT_BYTES
 * a report.
 */
void
nd_progress_fingerprint(int kind, Size len)
{
	TimestampTz statement = GetCurrentStatementStartTimestamp();
	char		phase[ND_PROGRESS_PHASE];

	if (statement != fp_statement)
	{
		fp_statement = statement;
		fp_count = 0;
		fp_next_report = ND_FINGERPRINT_EVERY;
		fp_bytes = 0;
		fp_kinds = 0;
	}
	fp_count++;
	fp_bytes += len;
	fp_kinds |= kind;
	if (fp_count < fp_next_report && fp_bytes < ND_FINGERPRINT_BYTES)
		return;
	fp_next_report = fp_count + ND_FINGERPRINT_EVERY;
	fp_bytes = 0;
	if (my_depth > 0)
		return;

	snprintf(phase, sizeof(phase), "%s%s%s",
			 (fp_kinds & ND_FINGERPRINT_SIMHASH) ? "simhash" : "",
			 (fp_kinds & ND_FINGERPRINT_SIMHASH) && (fp_kinds & ND_FINGERPRINT_MINHASH) ? ", " : "",
			 (fp_kinds & ND_FINGERPRINT_MINHASH) ? "minhash" : "");
	progress_attach();
	if (my_slot >= 0)
	{
		SpinLockAcquire(&progress->mutex);
		if (progress->slots[my_slot].pid == MyProcPid)
		{
			NdProgressSlot *slot = &progress->slots[my_slot];

			strlcpy(slot->phase, phase, sizeof(slot->phase));
			slot->done = fp_count;
			slot->started = statement;
			slot->phase_started = statement;
			slot->statement = statement;
		}
		else
			my_slot = -1;		/* reclaimed after its statement ended */
		SpinLockRelease(&progress->mutex);
	}
	if (my_slot < 0)
	{
		NdProgressSlot init;

		progress_slot_init(&init, "fingerprinting");
		strlcpy(init.phase, phase, sizeof(init.phase));
		init.done = fp_count;
		init.total = -1;
		init.started = statement;
		init.phase_started = statement;
		init.statement = statement;
		my_slot = progress_claim(&init);
	}
}

/*
 * Is the statement that a fingerprinting slot counted still running?  For
 * this backend, if it is the current statement; for another, if
 * pg_stat_activity (the transaction's snapshot of it) shows that backend
 * active in a statement that started then.  Unknown (track_activities
 * off, or a process it does not list) counts as running.
 */
static bool
fingerprinting_statement_runs(const NdProgressSlot *slot)
{
	int			n;

	if (slot->pid == MyProcPid)
		return slot->statement == GetCurrentStatementStartTimestamp();
	n = pgstat_fetch_stat_numbackends();
	for (int i = 1; i <= n; i++)
	{
		LocalPgBackendStatus *local = pgstat_get_local_beentry_by_index(i);
		PgBackendStatus *be;

		if (local == NULL || local->backendStatus.st_procpid != slot->pid)
			continue;
		be = &local->backendStatus;
		if (be->st_state == STATE_DISABLED || be->st_state == STATE_UNDEFINED)
			return true;
		return be->st_state != STATE_IDLE &&
			be->st_state != STATE_IDLEINTRANSACTION &&
			be->st_state != STATE_IDLEINTRANSACTION_ABORTED &&
			be->st_activity_start_timestamp == slot->statement;
	}
	return true;
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
		if (slot->statement != 0 && !fingerprinting_statement_runs(slot))
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
