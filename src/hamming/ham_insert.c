/*-------------------------------------------------------------------------
 *
 * ham_insert.c
 *		Inserts: an entry appended to the pending list, and now and then a
 *		merge of that list into the run.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "hamming.h"
#include "simhash64.h"

bool
ham_insert(Relation index, Datum *values, bool *isnull,
		   ItemPointer ht_ctid, Relation heapRel,
		   IndexUniqueCheck checkUnique, bool indexUnchanged,
		   IndexInfo *indexInfo)
{
	HamSnapshot snap;

	if (isnull[0])
	{
		ham_list_append(index, HAM_LIST_NULLS, 0, ht_ctid, NULL);
		return false;
	}
	ham_list_append(index, HAM_LIST_PENDING, ham_value_code(ham_indexes_balls(index), values[0]),
					ht_ctid, &snap);

	/*
	 * Merge when the list is long enough; an insert never waits for a merge
	 * another session (or VACUUM) is running.
	 */
	if (ham_merge_wanted(index, &snap, false))
	{
		int64		merged;

		ham_merge(index, false, &merged);
	}
	return false;
}
