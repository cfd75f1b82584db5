/*-------------------------------------------------------------------------
 *
 * nd_star_contraction.c
 *		One large-star or small-star round, read one directed edge at a time
 *		in (u, v) order, and the labels of the converged stars.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#include "nd_star_contraction.h"

void
nd_star_begin(nd_star_round *r, nd_star_kind kind, nd_star_emit_fn emit, void *arg)
{
	r->kind = kind;
	r->emit = emit;
	r->arg = arg;
	r->have_node = false;
	r->u = 0;
	r->last_v = 0;
	r->m = 0;
	r->smaller = 0;
	r->larger = 0;
	r->stars = true;
	r->nodes = 0;
	r->edges_in = 0;
	r->edges_out = 0;
}

static inline void
star_emit(nd_star_round *r, int64_t a, int64_t b)
{
	r->edges_out++;
	r->emit(a, b, r->arg);
}

/* The node read so far is complete. */
static void
node_end(nd_star_round *r)
{
	/* small-star links u to the centre too (its first smaller neighbour's link) */
	if (r->kind == ND_SMALL_STAR && r->smaller > 0)
		star_emit(r, r->u, r->m);
	/* a star's leaf has one neighbour, smaller; its centre only larger ones */
	if (r->smaller >= 2 || (r->smaller >= 1 && r->larger >= 1))
		r->stars = false;
	r->nodes++;
}

void
nd_star_edge(nd_star_round *r, int64_t u, int64_t v)
{
	if (u == v)
		return;
	if (!r->have_node || u != r->u)
	{
		if (r->have_node)
			node_end(r);
		r->have_node = true;
		r->u = u;
		r->m = u;
		r->smaller = 0;
		r->larger = 0;
	}
	else if (v == r->last_v)
		return;
	r->last_v = v;
	r->edges_in++;

	if (r->kind == ND_LARGE_STAR)
	{
		/* neighbours come in increasing order: the first is the smallest */
		if (r->smaller == 0 && r->larger == 0 && v < u)
			r->m = v;
		if (v > u)
		{
			r->larger++;
			star_emit(r, v, r->m);
		}
		else
			r->smaller++;
	}
	else
	{
		if (v < u)
		{
			if (r->smaller++ == 0)
				r->m = v;
			else
				star_emit(r, v, r->m);
		}
		else
			r->larger++;
	}
}

bool
nd_star_end(nd_star_round *r)
{
	if (r->have_node)
		node_end(r);
	r->have_node = false;
	return r->stars;
}

void
nd_star_labels_begin(nd_star_labels *l, nd_star_label_fn label, void *arg)
{
	l->label = label;
	l->arg = arg;
	l->have_node = false;
	l->u = 0;
	l->nodes = 0;
}

void
nd_star_labels_edge(nd_star_labels *l, int64_t u, int64_t v)
{
	if (u == v || (l->have_node && u == l->u))
		return;
	l->have_node = true;
	l->u = u;
	l->nodes++;
	/* a leaf's one neighbour is its centre; a centre's are all larger */
	l->label(u, v < u ? v : u, l->arg);
}

void
nd_star_labels_end(nd_star_labels *l)
{
	l->have_node = false;
}
