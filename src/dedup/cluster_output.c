/*-------------------------------------------------------------------------
 *
 * cluster_output.c
 *		The result of the clustering functions that keep one union-find
 *		element per input row (simhash_clusters, minhash_clusters): one
 *		(id, cluster_id) per id in a component of at least two distinct ids,
 *		in id order; rows sharing an id (a query may return one twice) are
 *		one node, as in dedup_clusters.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "cluster_output.h"
#include "nd_allpairs.h"

uint32
nd_clusters_add_row(nd_unionfind *uf, int64 id, const char *fname)
{
	uint32		i = nd_uf_add(uf, id);

	if (i == ND_UF_INVALID)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s handles at most %u rows", fname, (unsigned) ND_UF_MAX_IDS)));
	return i;
}

/*
 * A row no edge reached: its own root, in a set of one.  Read in index
 * order, unlike a find, which jumps to the root: most rows are alone.
 */
static inline bool
alone(const nd_unionfind *uf, uint32 i)
{
	return uf->parent[i] == i && uf->size[i] == 1;
}

/*
 * Merges rows that share an id and writes one (id, cluster_id) per id whose
 * component has at least two distinct ids, in id order.  Rows alone in
 * their component (most rows, usually) are left out first: a row with no
 * near-duplicate cannot add an id to a component, so whether it shares its
 * id with another row changes no output line.
 */
void
nd_clusters_output(nd_unionfind *uf, Tuplestorestate *tupstore, TupleDesc tupdesc)
{
	uint32		n = 0;
	nd_pair_item *byid;
	nd_pair_item *tmp;

	for (uint32 i = 0; i < uf->n; i++)
		if (!alone(uf, i))
			n++;
	if (n == 0)
		return;
	byid = palloc_extended((size_t) n * sizeof(nd_pair_item), MCXT_ALLOC_HUGE);
	tmp = palloc_extended((size_t) n * sizeof(nd_pair_item), MCXT_ALLOC_HUGE);
	/* the sign bit flipped: unsigned order of the keys is the ids' order */
	n = 0;
	for (uint32 i = 0; i < uf->n; i++)
		if (!alone(uf, i))
		{
			byid[n].code = (uint64) uf->id[i] ^ ((uint64) 1 << 63);
			byid[n].id = i;
			n++;
		}
	nd_pair_items_sort(byid, n, tmp);
	pfree(tmp);
	CHECK_FOR_INTERRUPTS();

	/* rows with one id are one node */
	for (uint32 i = 1; i < n; i++)
		if (byid[i].code == byid[i - 1].code)
			nd_uf_union(uf, (uint32) byid[i].id, (uint32) byid[i - 1].id);

	/* distinct ids per component, counted in the roots' size slots */
	for (uint32 i = 0; i < n; i++)
		uf->size[nd_uf_find(uf, (uint32) byid[i].id)] = 0;
	for (uint32 i = 0; i < n; i++)
		if (i == 0 || byid[i].code != byid[i - 1].code)
			uf->size[nd_uf_find(uf, (uint32) byid[i].id)]++;

	for (uint32 i = 0; i < n; i++)
	{
		uint32		root;
		Datum		values[2];
		bool		nulls[2] = {false, false};

		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (i > 0 && byid[i].code == byid[i - 1].code)
			continue;
		root = nd_uf_find(uf, (uint32) byid[i].id);
		if (uf->size[root] < 2)
			continue;
		values[0] = Int64GetDatum(uf->id[byid[i].id]);
		values[1] = Int64GetDatum(uf->min_id[root]);
		tuplestore_putvalues(tupstore, tupdesc, values, nulls);
	}
	pfree(byid);
}
