/*-------------------------------------------------------------------------
 *
 * clusters_spill.c
 *		The components of dedup_clusters' input past its memory, within
 *		work_mem: the disjoint sets it had built, written out as (id, label)
 *		pairs, and the edges read after them, joined in rounds of external
 *		sorts (tuplesort, which spills to temporary files).
 *
 * The rounds are large-star and small-star contraction
 * (core/nd_star_contraction.c): each reads the edges, in both directions,
 * in (u, v) order and writes the next round's to a new sort, until the
 * components are stars around their smallest ids.  A node's neighbours are
 * streamed, never held, so a component of a billion ids needs no more
 * memory than one of two.  Each round costs a sort of every edge it reads,
 * so what goes into them depends on where the sets spilled:
 *
 *	- early (fewer ids in the sets than later edges): every set's ids as a
 *	  star around its label, and every later edge;
 *	- late: only the later edges, each end replaced by its set's label
 *	  (two merge joins against the sets sorted by id).  The rounds then join
 *	  the sets' labels and the later ids; a last merge join gives every id
 *	  of a set its label's component.  A set's label is its smallest id, so
 *	  the smallest node of a component of labels is the component's
 *	  smallest id.
 *
 * At most three sorts or stores are alive at a time, each with work_mem:
 * in the rounds, the one read and the one written, and the sets when the
 * later edges are relabelled.
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
	TupleDesc	desc;			/* two int8 columns */
	TupleTableSlot *put;		/* virtual, to form the sorts' tuples */
	TupleTableSlot *get;		/* minimal, as sorts and stores return them */
	Tuplesortstate *sets;		/* (id, label) of the sets, by id; rescannable */
	int64		nsets;
	Tuplestorestate *later;		/* the edges read after the sets, as read */
	int64		nlater;
	Tuplesortstate *rounds;		/* the edges of the next round, both directions */
	int64		nrounds;		/* directed edges written to it */
	int64		read;			/* pairs read, for interrupts and progress */
};

/* A sort of (int8, int8) pairs in order of both columns. */
static Tuplesortstate *
pair_sort(nd_edge_spill *s, bool rescan)
{
	AttrNumber	cols[2] = {1, 2};
	Oid			ops[2] = {Int8LessOperator, Int8LessOperator};
	Oid			colls[2] = {InvalidOid, InvalidOid};
	bool		nulls_first[2] = {false, false};

	return tuplesort_begin_heap(s->desc, 2, cols, ops, colls, nulls_first,
								work_mem, NULL,
								rescan ? TUPLESORT_RANDOMACCESS : TUPLESORT_NONE);
}

static inline TupleTableSlot *
pair_slot(nd_edge_spill *s, int64 a, int64 b)
{
	TupleTableSlot *slot = s->put;

	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(a);
	slot->tts_values[1] = Int64GetDatum(b);
	slot->tts_isnull[0] = false;
	slot->tts_isnull[1] = false;
	return ExecStoreVirtualTuple(slot);
}

static inline void
put_sorted(Tuplesortstate *sort, nd_edge_spill *s, int64 a, int64 b)
{
	tuplesort_puttupleslot(sort, pair_slot(s, a, b));
}

/* The pair the get slot holds, counting reads; true for convenience. */
static inline bool
got_pair(nd_edge_spill *s, int64 *a, int64 *b)
{
	slot_getallattrs(s->get);
	*a = DatumGetInt64(s->get->tts_values[0]);
	*b = DatumGetInt64(s->get->tts_values[1]);
	if ((++s->read & 0xFFFF) == 0)
	{
		CHECK_FOR_INTERRUPTS();
		nd_progress_done(s->read);
	}
	return true;
}

static inline bool
next_sorted(nd_edge_spill *s, Tuplesortstate *sort, int64 *a, int64 *b)
{
	return tuplesort_gettupleslot(sort, true, false, s->get, NULL) &&
		got_pair(s, a, b);
}

static inline bool
next_stored(nd_edge_spill *s, Tuplestorestate *store, int64 *a, int64 *b)
{
	return tuplestore_gettupleslot(store, true, false, s->get) &&
		got_pair(s, a, b);
}

/* A new phase of the progress report, its reads counted from zero. */
static void
phase(nd_edge_spill *s, const char *name, int64 total)
{
	nd_progress_phase(name, total);
	s->read = 0;
}

nd_edge_spill *
nd_edge_spill_begin(void)
{
	nd_edge_spill *s = palloc0(sizeof(nd_edge_spill));

	s->desc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(s->desc, 1, "a", INT8OID, -1, 0);
	TupleDescInitEntry(s->desc, 2, "b", INT8OID, -1, 0);
	s->put = MakeSingleTupleTableSlot(s->desc, &TTSOpsVirtual);
	s->get = MakeSingleTupleTableSlot(s->desc, &TTSOpsMinimalTuple);
	s->sets = pair_sort(s, true);
	s->later = tuplestore_begin_heap(false, false, work_mem);
	return s;
}

void
nd_edge_spill_add_set(nd_edge_spill *s, int64 id, int64 label)
{
	put_sorted(s->sets, s, id, label);
	if ((++s->nsets & 0xFFFF) == 0)
		CHECK_FOR_INTERRUPTS();
}

void
nd_edge_spill_add(nd_edge_spill *s, int64 a, int64 b)
{
	tuplestore_puttupleslot(s->later, pair_slot(s, a, b));
	if ((++s->nlater & 0xFFFF) == 0)
		CHECK_FOR_INTERRUPTS();
}

/* An undirected edge for the next round. */
static void
round_edge(int64_t a, int64_t b, void *arg)
{
	nd_edge_spill *s = (nd_edge_spill *) arg;

	put_sorted(s->rounds, s, a, b);
	put_sorted(s->rounds, s, b, a);
	s->nrounds += 2;
}

/*
 * A cursor over the sets by id, for merge joins: the label of id, or id
 * itself if no set holds it.  Ids are asked in increasing order.
 */
typedef struct SetsCursor
{
	nd_edge_spill *s;
	bool		valid;
	int64		id;
	int64		label;
} SetsCursor;

static void
sets_cursor_begin(SetsCursor *c, nd_edge_spill *s)
{
	c->s = s;
	c->id = 0;
	c->label = 0;
	c->valid = next_sorted(s, s->sets, &c->id, &c->label);
}

static int64
sets_label(SetsCursor *c, int64 id)
{
	while (c->valid && c->id < id)
		c->valid = next_sorted(c->s, c->s->sets, &c->id, &c->label);
	return c->valid && c->id == id ? c->label : id;
}

/*
 * The later edges with both ends replaced by their sets' labels, into the
 * rounds: sorted by their first end and joined to the sets, then by their
 * second end and joined again.
 */
static void
relabel_later(nd_edge_spill *s)
{
	Tuplesortstate *by_a = pair_sort(s, false);
	Tuplesortstate *by_b;
	SetsCursor	c;
	int64		a,
				b;

	phase(s, "relabelling later edges", s->nlater);
	while (next_stored(s, s->later, &a, &b))
		put_sorted(by_a, s, a, b);
	tuplestore_end(s->later);
	s->later = NULL;
	tuplesort_performsort(by_a);

	by_b = pair_sort(s, false);
	sets_cursor_begin(&c, s);
	while (next_sorted(s, by_a, &a, &b))
		put_sorted(by_b, s, b, sets_label(&c, a));
	tuplesort_end(by_a);
	tuplesort_performsort(by_b);

	tuplesort_rescan(s->sets);
	sets_cursor_begin(&c, s);
	while (next_sorted(s, by_b, &b, &a))
	{
		int64		lb = sets_label(&c, b);

		if (lb != a)
			round_edge(a, lb, s);
	}
	tuplesort_end(by_b);
}

/* Every set as a star around its label, and every later edge, into the rounds. */
static void
add_all(nd_edge_spill *s)
{
	int64		a,
				b;

	phase(s, "sorting edges", s->nsets + s->nlater);
	while (next_sorted(s, s->sets, &a, &b))
		if (a != b)
			round_edge(a, b, s);
	tuplesort_end(s->sets);
	s->sets = NULL;
	while (next_stored(s, s->later, &a, &b))
		round_edge(a, b, s);
	tuplestore_end(s->later);
	s->later = NULL;
}

/*
 * Large-star and small-star rounds over s->rounds until its edges are
 * stars; returns the sort of the final stars, sorted.
 */
static Tuplesortstate *
contract(nd_edge_spill *s)
{
	nd_star_kind kind = ND_LARGE_STAR;
	int			round = 0;
	char		name[64];

	for (;;)
	{
		Tuplesortstate *in = s->rounds;
		nd_star_round r;
		bool		stars;
		int64		u,
					v;

		round++;
		snprintf(name, sizeof(name), "joining sorted edges: round %d", round);
		phase(s, name, s->nrounds);
		tuplesort_performsort(in);
		s->rounds = pair_sort(s, false);
		s->nrounds = 0;
		nd_star_begin(&r, kind, round_edge, s);
		while (next_sorted(s, in, &u, &v))
			nd_star_edge(&r, u, v);
		stars = nd_star_end(&r);
		tuplesort_end(in);
		ereport(DEBUG2,
				(errmsg_internal("dedup_clusters: round %d (%s-star): %llu edges in, %lld out, %llu nodes%s",
								 round, kind == ND_LARGE_STAR ? "large" : "small",
								 (unsigned long long) r.edges_in, (long long) s->nrounds,
								 (unsigned long long) r.nodes, stars ? ", stars" : "")));
		if (stars)
			break;
		kind = kind == ND_LARGE_STAR ? ND_SMALL_STAR : ND_LARGE_STAR;
	}
	tuplesort_performsort(s->rounds);
	return s->rounds;
}

typedef struct LabelOut
{
	Tuplestorestate *store;
	TupleDesc	desc;
	nd_edge_spill *s;			/* when the labels go to a pair store */
} LabelOut;

static void
put_label(int64_t id, int64_t cluster, void *arg)
{
	LabelOut   *out = (LabelOut *) arg;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (out->s != NULL)
	{
		tuplestore_puttupleslot(out->store, pair_slot(out->s, id, cluster));
		return;
	}
	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(cluster);
	tuplestore_putvalues(out->store, out->desc, values, nulls);
}

/* Each node of the final stars with its centre, through out. */
static void
star_labels(nd_edge_spill *s, Tuplesortstate *stars, LabelOut *out)
{
	nd_star_labels labels;
	int64		u,
				v;

	nd_star_labels_begin(&labels, put_label, out);
	while (next_sorted(s, stars, &u, &v))
		nd_star_labels_edge(&labels, u, v);
	nd_star_labels_end(&labels);
}

/*
 * After relabelling: every id of the sets gets its label's component (the
 * sets by label, merged with the stars' labels by node), and every later
 * id outside the sets its own.
 */
static void
write_relabelled(nd_edge_spill *s, Tuplesortstate *stars,
				 Tuplestorestate *tupstore, TupleDesc tupdesc)
{
	Tuplestorestate *nodes = tuplestore_begin_heap(false, false, work_mem);
	LabelOut	to_nodes = {nodes, NULL, s};
	LabelOut	out = {tupstore, tupdesc, NULL};
	Tuplesortstate *by_label = pair_sort(s, false);
	int64		id,
				label,
				node = 0,
				cluster = 0,
				set_label = 0,
				set_cluster = 0;
	bool		have_node,
				have_set = false;

	star_labels(s, stars, &to_nodes);
	tuplesort_end(stars);
	s->rounds = NULL;

	tuplesort_rescan(s->sets);
	while (next_sorted(s, s->sets, &id, &label))
		put_sorted(by_label, s, label, id);
	tuplesort_performsort(by_label);

	phase(s, "writing clusters", -1);
	have_node = next_stored(s, nodes, &node, &cluster);
	while (next_sorted(s, by_label, &label, &id))
	{
		if (!have_set || label != set_label)
		{
			/* the later ids below this label are outside the sets */
			while (have_node && node < label)
			{
				put_label(node, cluster, &out);
				have_node = next_stored(s, nodes, &node, &cluster);
			}
			set_label = label;
			set_cluster = label;
			have_set = true;
			/* a label the later edges reached: its node is the set's root */
			if (have_node && node == label)
			{
				set_cluster = cluster;
				have_node = next_stored(s, nodes, &node, &cluster);
			}
		}
		put_label(id, set_cluster, &out);
	}
	for (; have_node; have_node = next_stored(s, nodes, &node, &cluster))
		put_label(node, cluster, &out);
	tuplesort_end(by_label);
	tuplestore_end(nodes);
}

void
nd_edge_spill_finish(nd_edge_spill *s, Tuplestorestate *tupstore, TupleDesc tupdesc)
{
	bool		relabel = s->nsets >= s->nlater;
	Tuplesortstate *stars;

	/* both ways come here, and the regress suite tells them apart */
	ereport(DEBUG1,
			(errmsg_internal("dedup_clusters: %s",
							 relabel ? "joining the later edges to the sets written out"
							 : "joining the sets written out and the later edges")));
	ereport(DEBUG2,
			(errmsg_internal("dedup_clusters: %lld ids of sets written out, %lld later edges",
							 (long long) s->nsets, (long long) s->nlater)));
	tuplesort_performsort(s->sets);
	s->rounds = pair_sort(s, false);
	s->nrounds = 0;
	if (relabel)
		relabel_later(s);
	else
		add_all(s);

	stars = contract(s);
	if (relabel)
		write_relabelled(s, stars, tupstore, tupdesc);
	else
	{
		LabelOut	out = {tupstore, tupdesc, NULL};

		phase(s, "writing clusters", -1);
		star_labels(s, stars, &out);
		tuplesort_end(stars);
	}

	if (s->sets != NULL)
		tuplesort_end(s->sets);
	ExecDropSingleTupleTableSlot(s->put);
	ExecDropSingleTupleTableSlot(s->get);
	FreeTupleDesc(s->desc);
	pfree(s);
}
