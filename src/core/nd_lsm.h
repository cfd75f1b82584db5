/*-------------------------------------------------------------------------
 *
 * nd_lsm.h
 *		The compaction policy of a log-structured index: when a full pending
 *		list is flushed into a new run, which of the existing runs the flush
 *		merges with (tiered compaction).
 *
 * Runs are kept oldest first.  A run of s entries sits in tier
 * floor(log_fanout(s / unit)), unit being the entries of one flush: tier 0
 * holds runs of fewer than fanout flushes, tier 1 fewer than fanout^2, and
 * so on.  A flush becomes a new run unless the newest runs of its tier and
 * below already number fanout-1; then they are merged with it, and the
 * merged run may in turn complete the tier above, like a carry in a
 * base-fanout counter.  With flushes of exactly unit entries the run sizes
 * are the digits of the flush count in base fanout: after 21 flushes at
 * fanout 4, runs of 16, 4 and 1.
 *
 * Why this shape: no tier ever holds fanout runs, so
 *	- an entry is rewritten about once per tier it climbs, some
 *	  log_fanout(N / unit) times for N entries in the index (leveled
 *	  compaction rewrites each level up to fanout times instead), and
 *	- the index holds at most fanout-1 runs per tier, (fanout-1) *
 *	  (log_fanout(N / unit) + 1) runs in all: the runs a scan visits.
 * A larger fanout writes less and keeps more runs.  max_runs caps the run
 * count on top of that: when the rule leaves too many runs, older ones are
 * merged too, at the price of more rewriting.
 *
 * Both bounds need flushes of at most unit entries and runs that only
 * merges change.  Flushes of varying size (at most unit) leave the sizes
 * within a tier in no order (fanout 4, unit 10: flushes of 7 then 9 give
 * runs of 7 and 9), but the tiers stay non-increasing oldest first.  A
 * flush larger than unit, or runs that deletions have shrunk, may break
 * both bounds; the max_runs cap holds whatever the sizes.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_LSM_H
#define ND_LSM_H

#include <stdint.h>

/*
 * Tier of a run of `size` entries: floor(log_fanout(max(size, unit) / unit)),
 * so runs smaller than one flush (an empty run included) are tier 0.
 * unit >= 1, fanout >= 2; smaller values are taken as 1 and 2.
 */
extern int	nd_lsm_tier(uint64_t size, uint64_t unit, int fanout);

/*
 * Which runs a merge takes.
 *
 * sizes[0..n): entries of the index's runs, oldest first (empty runs
 * allowed).  incoming: entries of the list being flushed into a new run (may
 * be 0).  unit: entries of a full pending list, >= 1.  fanout >= 2.
 * max_runs >= 1: the most runs the index may hold after the merge.  Values
 * below those bounds are taken as the bound.
 *
 * Returns k in [0, n]: the newest k runs are merged with the incoming
 * entries into one new run, which takes their place (newest position).
 *
 *	S = incoming, k = 0
 *	loop: c = number of consecutive runs from sizes[n-1-k] towards older
 *		ones whose tier is at most tier(S); stop if c + 1 < fanout;
 *		S += their sizes (saturating at UINT64_MAX), k += c
 *	then, while n - k + 1 > max_runs and k < n: k += 1
 *
 * The index then holds n - k + 1 runs, never more than max_runs.  With
 * incoming == 0, k == 0 means nothing to do (n runs stay), and a k of 1 is
 * returned as 0 too: it would only rewrite one run as it is.  Compacting
 * runs that deletions have shrunk is the caller's business.
 */
extern int	nd_lsm_pick(const uint64_t *sizes, int n, uint64_t incoming,
						uint64_t unit, int fanout, int max_runs);

#endif							/* ND_LSM_H */
