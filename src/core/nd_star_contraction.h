/*-------------------------------------------------------------------------
 *
 * nd_star_contraction.h
 *		Connected components of an edge list too large for memory: the
 *		alternating large-star and small-star rounds of Kiveris, Lattanzi,
 *		Mirrokni, Rastogi and Vassilvitskii ("Connected Components in
 *		MapReduce and Beyond", SoCC 2014).
 *
 * Each round reads the edges sorted by (u, v), every undirected edge in both
 * directions, and writes the edges of the next round, which the caller sorts
 * (an external sort: memory stays bounded whatever the graph's size).  A
 * round looks at one node at a time, in a single pass over its neighbours in
 * increasing order, so a node of a million neighbours costs no memory:
 *
 *	large-star at u: m = min(u, neighbours); every larger neighbour v is
 *		linked to m instead of u;
 *	small-star at u: m = min(u, smaller neighbours); every smaller
 *		neighbour, and u itself, is linked to m.
 *
 * Both keep the components, and alternating them turns every component
 * into a star around its smallest id in O(log^2 n) rounds (a few in
 * practice).  A round's input was already such stars, and its output the
 * same edges, when no node had two smaller neighbours, or a smaller and a
 * larger one: then each node's label is its one smaller neighbour, or
 * itself.
 *
 * Plain C, no server headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_STAR_CONTRACTION_H
#define ND_STAR_CONTRACTION_H

#include <stdbool.h>
#include <stdint.h>

typedef enum nd_star_kind
{
	ND_LARGE_STAR,
	ND_SMALL_STAR
} nd_star_kind;

/* Receives one undirected edge of the next round (a != b); the caller stores both directions. */
typedef void (*nd_star_emit_fn) (int64_t a, int64_t b, void *arg);

typedef struct nd_star_round
{
	nd_star_kind kind;
	nd_star_emit_fn emit;
	void	   *arg;
	/* the node being read */
	bool		have_node;
	int64_t		u;
	int64_t		last_v;			/* its last neighbour, to skip repeats */
	int64_t		m;				/* the centre it links to */
	uint64_t	smaller;		/* its neighbours below u, and above */
	uint64_t	larger;
	/* the round so far */
	bool		stars;			/* every node read so far is a star's centre or leaf */
	uint64_t	nodes;
	uint64_t	edges_in;		/* directed, without repeats */
	uint64_t	edges_out;		/* undirected, as emitted (the sort may drop repeats) */
} nd_star_round;

extern void nd_star_begin(nd_star_round *r, nd_star_kind kind,
						  nd_star_emit_fn emit, void *arg);

/*
 * The next directed edge of the round's input, in (u, v) order.  Repeated
 * edges are skipped, edges of a node with itself ignored.
 */
extern void nd_star_edge(nd_star_round *r, int64_t u, int64_t v);

/*
 * Ends the round; true when its input was already stars (its output is the
 * same edges: the components are found).
 */
extern bool nd_star_end(nd_star_round *r);

/*
 * Labels from converged edges read in (u, v) order: calls label(u, c) once
 * per node, c being its component's smallest id.
 */
typedef void (*nd_star_label_fn) (int64_t id, int64_t cluster, void *arg);

typedef struct nd_star_labels
{
	nd_star_label_fn label;
	void	   *arg;
	bool		have_node;
	int64_t		u;
	uint64_t	nodes;
} nd_star_labels;

extern void nd_star_labels_begin(nd_star_labels *l, nd_star_label_fn label, void *arg);
extern void nd_star_labels_edge(nd_star_labels *l, int64_t u, int64_t v);
extern void nd_star_labels_end(nd_star_labels *l);

#endif							/* ND_STAR_CONTRACTION_H */
