/*-------------------------------------------------------------------------
 *
 * progress.h
 *		Progress of the long dedup jobs, visible from other sessions through
 *		neardup_progress() (see progress.c).
 *
 * A job calls nd_progress_begin with its SQL name and nd_progress_end when
 * it is done; between them nd_progress_phase names what it is doing (with
 * the total of that phase, or -1 if unknown) and nd_progress_done counts.
 * Jobs may nest (a job's query may run another): the outermost names the
 * row, the innermost's phases show.  Outside a job the calls do nothing.
 * Transaction and subtransaction abort, and commit, end the report: an
 * error or a cursor left open cannot leave a stale row.
 *
 * The text fingerprint functions call nd_progress_fingerprint once per
 * text: a cheap count per statement, published now and then as the job
 * "fingerprinting".
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_PROGRESS_H
#define ND_PROGRESS_H

extern void nd_progress_begin(const char *function);
extern void nd_progress_phase(const char *phase, int64 total);
extern void nd_progress_done(int64 done);
extern void nd_progress_end(void);

#define ND_FINGERPRINT_SIMHASH	1
#define ND_FINGERPRINT_MINHASH	2
extern void nd_progress_fingerprint(int kind, Size len);

#endif							/* ND_PROGRESS_H */
