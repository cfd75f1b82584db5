/*-------------------------------------------------------------------------
 *
 * clusters_spill.c
 *		The components of an edge list bounded by work_mem: every edge in
 *		both directions in a tuplesort (which spills to temporary files),
 *		then large-star and small-star rounds (core/nd_star_contraction.c),
 *		each reading one sort in (u, v) order and writing the next, until
 *		the components are stars around their smallest ids.
 *
 * Two sorts are alive during a round, the one read and the one written,
 * each with work_mem; a node's neighbours are streamed, never held, so a
 * component of a billion ids needs no more memory than one of two.  A round
 * costs a sort of the edges: dedup_clusters comes here only when its
 * disjoint sets would pass their budget (clusters.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/tuplesort.h"

#include "core/nd_star_contraction.h"
#include "dedup/clusters_spill.h"
#include "shared/progress.h"

struct nd_edge_spill
{
	TupleDesc	desc;			/* (u int8, v int8) */
	TupleTableSlot *put;		/* virtual, to form the sorts' tuples */
	TupleTableSlot *get;		/* minimal, as the sorts return them */
	Tuplesortstate *sort;		/* the edges being written */
	int64		edges;			/* directed edges written to it */
};

static Tuplesortstate *
edge_sort_begin(nd_edge_spill *s)
{
	AttrNumber	cols[2] = {1, 2};
	Oid			ops[2] = {Int8LessOperator, Int8LessOperator};
	Oid			colls[2] = {InvalidOid, InvalidOid};
	bool		nulls_first[2] = {false, false};

	s->edges = 0;
	return tuplesort_begin_heap(s->desc, 2, cols, ops, colls, nulls_first,
								work_mem, NULL, TUPLESORT_NONE);
}

nd_edge_spill *
nd_edge_spill_begin(void)
{
	nd_edge_spill *s = palloc0(sizeof(nd_edge_spill));

	s->desc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(s->desc, 1, "u", INT8OID, -1, 0);
	TupleDescInitEntry(s->desc, 2, "v", INT8OID, -1, 0);
	s->put = MakeSingleTupleTableSlot(s->desc, &TTSOpsVirtual);
	s->get = MakeSingleTupleTableSlot(s->desc, &TTSOpsMinimalTuple);
	s->sort = edge_sort_begin(s);
	return s;
}

static inline void
put_directed(nd_edge_spill *s, int64 u, int64 v)
{
	TupleTableSlot *slot = s->put;

	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(u);
	slot->tts_values[1] = Int64GetDatum(v);
	slot->tts_isnull[0] = false;
	slot->tts_isnull[1] = false;
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(s->sort, slot);
	if ((++s->edges & 0xFFFF) == 0)
		CHECK_FOR_INTERRUPTS();
}

void
nd_edge_spill_add(nd_edge_spill *s, int64 a, int64 b)
{
	put_directed(s, a, b);
	put_directed(s, b, a);
}

static void
emit_edge(int64_t a, int64_t b, void *arg)
{
	nd_edge_spill_add((nd_edge_spill *) arg, a, b);
}

/* The next edge of a sorted sort; false at its end. */
static inline bool
next_edge(nd_edge_spill *s, Tuplesortstate *sort, int64 *u, int64 *v, int64 *read)
{
	if (!tuplesort_gettupleslot(sort, true, false, s->get, NULL))
		return false;
	slot_getallattrs(s->get);
	*u = DatumGetInt64(s->get->tts_values[0]);
	*v = DatumGetInt64(s->get->tts_values[1]);
	if ((++*read & 0xFFFF) == 0)
	{
		CHECK_FOR_INTERRUPTS();
		nd_progress_done(*read);
	}
	return true;
}

typedef struct LabelOut
{
	Tuplestorestate *tupstore;
	TupleDesc	tupdesc;
} LabelOut;

static void
put_label(int64_t id, int64_t cluster, void *arg)
{
	LabelOut   *out = (LabelOut *) arg;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(cluster);
	tuplestore_putvalues(out->tupstore, out->tupdesc, values, nulls);
}

void
nd_edge_spill_finish(nd_edge_spill *s, Tuplestorestate *tupstore, TupleDesc tupdesc)
{
	nd_star_kind kind = ND_LARGE_STAR;
	int			rounds = 0;
	nd_star_labels labels;
	LabelOut	out = {tupstore, tupdesc};
	int64		u,
				v,
				read = 0;
	char		phase[64];

	for (;;)
	{
		Tuplesortstate *in = s->sort;
		int64		total = s->edges;
		nd_star_round r;
		bool		stars;

		rounds++;
		snprintf(phase, sizeof(phase), "joining sorted edges: round %d", rounds);
		nd_progress_phase(phase, total);
		tuplesort_performsort(in);
		s->sort = edge_sort_begin(s);
		nd_star_begin(&r, kind, emit_edge, s);
		read = 0;
		while (next_edge(s, in, &u, &v, &read))
			nd_star_edge(&r, u, v);
		stars = nd_star_end(&r);
		tuplesort_end(in);
		ereport(DEBUG2,
				(errmsg_internal("dedup_clusters: round %d (%s-star): %lld edges in, %lld out, %llu nodes%s",
								 rounds, kind == ND_LARGE_STAR ? "large" : "small",
								 (long long) r.edges_in, (long long) s->edges,
								 (unsigned long long) r.nodes,
								 stars ? ", stars" : "")));
		if (stars)
			break;
		kind = kind == ND_LARGE_STAR ? ND_SMALL_STAR : ND_LARGE_STAR;
	}

	/* the stars' edges once more, in order: a leaf's one neighbour is its centre */
	nd_progress_phase("writing clusters", s->edges);
	tuplesort_performsort(s->sort);
	nd_star_labels_begin(&labels, put_label, &out);
	read = 0;
	while (next_edge(s, s->sort, &u, &v, &read))
		nd_star_labels_edge(&labels, u, v);
	nd_star_labels_end(&labels);
	tuplesort_end(s->sort);
	ereport(DEBUG2,
			(errmsg_internal("dedup_clusters: %d rounds of sorted edges, %llu ids",
							 rounds, (unsigned long long) labels.nodes)));

	ExecDropSingleTupleTableSlot(s->put);
	ExecDropSingleTupleTableSlot(s->get);
	FreeTupleDesc(s->desc);
	pfree(s);
}
