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

	/* Merge (or have a background worker merge) when the list is long enough */
	if (ham_merge_wanted(index, &snap, false))
		ham_merge_after_insert(index, &snap);
	return false;
}
