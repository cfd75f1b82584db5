/*-------------------------------------------------------------------------
 *
 * ham_insert.c
 *		Inserts: an entry appended to the pending list (or the nulls list),
 *		and now and then a flush of that list into a new run.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "hamming/hamming.h"
#include "type/simhash64.h"

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

	/* Flush (or have a background worker flush) when the list is long enough */
	if (ham_flush_wanted(index, &snap, false))
		ham_flush_after_insert(index, &snap);
	return false;
}
