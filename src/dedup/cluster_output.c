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

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "core/nd_allpairs.h"
#include "dedup/cluster_output.h"

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
 * The rows in a component of at least two distinct ids, sorted by id
 * (byid[i].code: the id with its sign bit flipped, so that unsigned order
 * is the ids' order; byid[i].id: the element), rows sharing an id joined
 * into one set, and each root's size slot holding its distinct ids.  Rows
 * alone in their component (most rows, usually) are left out first: a row
 * with no near-duplicate cannot add an id to a component, so whether it
 * shares its id with another row changes no output line.  *n_out: the
 * rows kept; NULL when there are none.
 */
static nd_pair_item *
clustered_rows(nd_unionfind *uf, uint32 *n_out)
{
	uint32		n = 0;
	nd_pair_item *byid;
	nd_pair_item *tmp;

	for (uint32 i = 0; i < uf->n; i++)
		if (!alone(uf, i))
			n++;
	*n_out = n;
	if (n == 0)
		return NULL;
	byid = palloc_extended((size_t) n * sizeof(nd_pair_item), MCXT_ALLOC_HUGE);
	tmp = palloc_extended((size_t) n * sizeof(nd_pair_item), MCXT_ALLOC_HUGE);
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
	return byid;
}

/*
 * The root of byid[i]'s component when byid[i] is the first row of an id
 * to report (its component has two distinct ids or more), else
 * ND_UF_INVALID.
 */
static inline uint32
clustered_root(nd_unionfind *uf, const nd_pair_item *byid, uint32 i)
{
	uint32		root;

	if ((i & 0xFFFF) == 0)
		CHECK_FOR_INTERRUPTS();
	if (i > 0 && byid[i].code == byid[i - 1].code)
		return ND_UF_INVALID;
	root = nd_uf_find(uf, (uint32) byid[i].id);
	return uf->size[root] < 2 ? ND_UF_INVALID : root;
}

/*
 * Writes one (id, cluster_id) per id whose component has at least two
 * distinct ids, in id order.
 */
void
nd_clusters_output(nd_unionfind *uf, Tuplestorestate *tupstore, TupleDesc tupdesc)
{
	uint32		n;
	nd_pair_item *byid = clustered_rows(uf, &n);

	for (uint32 i = 0; i < n; i++)
	{
		uint32		root = clustered_root(uf, byid, i);
		Datum		values[2];
		bool		nulls[2] = {false, false};

		if (root == ND_UF_INVALID)
			continue;
		values[0] = Int64GetDatum(uf->id[byid[i].id]);
		values[1] = Int64GetDatum(uf->min_id[root]);
		tuplestore_putvalues(tupstore, tupdesc, values, nulls);
	}
	if (byid != NULL)
		pfree(byid);
}

/* One (cluster_id, ids) row: the n ids from ids[0], cluster_id the first. */
static void
put_group_row(Tuplestorestate *tupstore, TupleDesc tupdesc, Datum *ids, uint32 n)
{
	Datum		values[2];
	bool		nulls[2] = {false, false};
	ArrayType  *arr;

	CHECK_FOR_INTERRUPTS();
	arr = construct_array(ids, (int) n, INT8OID, sizeof(int64),
						  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	values[0] = ids[0];
	values[1] = PointerGetDatum(arr);
	tuplestore_putvalues(tupstore, tupdesc, values, nulls);
	pfree(arr);
}

/*
 * Writes one (cluster_id, ids) per component of at least two distinct ids:
 * its ids in order (cluster_id is the first), the components in the order
 * of their smallest ids.  Walking the ids in order, a component's first id
 * is its smallest: that is when its place in the output is fixed, and
 * each id then goes to the next free slot of its component's place.
 *
 * A component of more than max_row_ids ids (0: no limit) is cut into rows
 * of at most that many, each starting with cluster_id: each row is still
 * one group joined around its first id, and no array nears the 1 GB limit
 * of a value (its text form reaches it at about 50M ids).
 */
void
nd_clusters_output_groups(nd_unionfind *uf, Tuplestorestate *tupstore,
						  TupleDesc tupdesc, uint32 max_row_ids)
{
	uint32		n;
	nd_pair_item *byid = clustered_rows(uf, &n);
	uint32	   *next;			/* at a root: the next free slot of its place */
	uint32	   *order;			/* the roots, by smallest id */
	Datum	   *ids;
	uint32		nroots = 0,
				used = 0;

	if (byid == NULL)
		return;
	next = palloc_extended((size_t) uf->n * sizeof(uint32), MCXT_ALLOC_HUGE);
	order = palloc_extended((size_t) n * sizeof(uint32), MCXT_ALLOC_HUGE);
	ids = palloc_extended((size_t) n * sizeof(Datum), MCXT_ALLOC_HUGE);
	for (uint32 i = 0; i < n; i++)
	{
		uint32		root = clustered_root(uf, byid, i);

		if (root == ND_UF_INVALID)
			continue;
		if (uf->id[byid[i].id] == uf->min_id[root])
		{
			order[nroots++] = root;
			next[root] = used;
			used += uf->size[root];
		}
		ids[next[root]++] = Int64GetDatum(uf->id[byid[i].id]);
	}
	pfree(byid);

	if (max_row_ids == 0)
		max_row_ids = PG_UINT32_MAX;
	Assert(max_row_ids >= 2);
	used = 0;
	for (uint32 r = 0; r < nroots; r++)
	{
		uint32		end = used + uf->size[order[r]];
		Datum		first = ids[used];
		uint32		pos = used + Min(end - used, max_row_ids);

		put_group_row(tupstore, tupdesc, ids + used, pos - used);
		while (pos < end)
		{
			uint32		take = Min(end - pos, max_row_ids - 1);

			/* the slot before is written already: the row's cluster_id goes there */
			ids[pos - 1] = first;
			put_group_row(tupstore, tupdesc, ids + pos - 1, take + 1);
			pos += take;
		}
		used = end;
	}
	pfree(next);
	pfree(order);
	pfree(ids);
}
