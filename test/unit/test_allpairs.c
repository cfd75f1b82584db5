/*
 * Unit tests of the all-pairs core (nd_allpairs.c): every run is compared
 * with a brute-force double loop, on random codes, planted near-duplicates,
 * exact duplicates, all-equal input, low-entropy codes (small integers,
 * few scattered varying bits, one varying block, a small Hamming ball: long
 * runs split into sub-tables), empty and one-row input, for k = 0..5 and
 * several block counts; the batched mode (one table
 * and one key partition at a time, as the SQL layer does when work_mem is
 * small) must give the same pairs; band keys must be shared by every pair
 * within k, and the first-table rule must agree with a plain enumeration.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_allpairs.h"
#include "nd_unionfind.h"
#include "pair_check.h"
#include "splitmix.h"
#include "tap.h"
#include "test_realloc.h"

static uint64_t rng_state = 0x0a11fa1f5eed0001ULL;

static uint64_t
rnd(void)
{
	return splitmix64_next(&rng_state);
}

static uint64_t
flip_random(uint64_t q, int d)
{
	return splitmix64_flip(&rng_state, q, d);
}

typedef struct pairlist
{
	pair	   *p;
	size_t		n,
				cap;
} pairlist;

static void
pl_add(pairlist *pl, int64_t a, int64_t b, int d)
{
	if (pl->n == pl->cap)
	{
		pl->cap = pl->cap ? 2 * pl->cap : 1024;
		pl->p = realloc(pl->p, pl->cap * sizeof(pair));
	}
	pl->p[pl->n].a = a;
	pl->p[pl->n].b = b;
	pl->p[pl->n].d = d;
	pl->n++;
}

static int	bad_order;

static void
sink_emit(void *arg, int64_t a, int64_t b, int d)
{
	if (!(a < b))
		bad_order++;
	pl_add((pairlist *) arg, a, b, d);
}

static int	ticks;

static void
sink_tick(void *arg)
{
	(void) arg;
	ticks++;
}

static void
brute(const nd_pair_item *it, size_t n, int k, pairlist *out)
{
	pair		p;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (pair_of(&it[i], &it[j], k, &p))
				pl_add(out, p.a, p.b, p.d);
}

static int
same_pairs(pairlist *x, pairlist *y)
{
	if (x->n != y->n)
		return 0;
	if (x->n == 0)
		return 1;
	qsort(x->p, x->n, sizeof(pair), pair_cmp);
	qsort(y->p, y->n, sizeof(pair), pair_cmp);
	for (size_t i = 0; i < x->n; i++)
		if (pair_cmp(&x->p[i], &y->p[i]) != 0)
			return 0;
	return 1;
}

/* how a run reports: every pair, spanning edges, or pairs of groups expanded */
#define MODE_PAIRS		0
#define MODE_SPANNING	1
#define MODE_EXPANDED	2

static void
group_emit(void *arg, int64_t a, int64_t b, int d)
{
	pl_add((pairlist *) arg, a, b, d);
}

/*
 * One run of the core in the given mode over items[0..n) for tables
 * [t_begin, t_end); MODE_EXPANDED collects the pairs of groups and expands
 * them (and, with table 0, the groups themselves) with nd_pair_expander,
 * as simhash_pairs does one row at a time.
 */
static uint64_t
run_mode(const nd_pairs_plan *plan, nd_pair_item *items, size_t n, int t_begin,
		 int t_end, void *scratch, nd_pairs_sink *sink, int mode)
{
	pairlist	groups = {0};
	nd_pairs_sink gsink = {group_emit, sink->tick, NULL, &groups};
	nd_pair_expander ex;
	uint64_t	emitted = 0;
	int64_t		a,
				b;
	int			d;

	if (mode == MODE_PAIRS)
		return nd_allpairs_run(plan, items, n, t_begin, t_end, scratch, sink);
	if (mode == MODE_SPANNING)
		return nd_allpairs_edges_run(plan, items, n, t_begin, t_end, scratch, sink);
	nd_allpairs_groups_run(plan, items, n, t_begin, t_end, scratch, &gsink);
	nd_pair_expander_init(&ex, items, n, t_begin == 0);
	for (size_t g = 0;; g++)
	{
		while (nd_pair_expander_next(&ex, &a, &b, &d))
		{
			sink->emit(sink->arg, a, b, d);
			emitted++;
		}
		if (g == groups.n)
			break;
		nd_pair_expander_set_groups(&ex, (uint32_t) groups.p[g].a, (uint32_t) groups.p[g].b,
									groups.p[g].d);
	}
	free(groups.p);
	return emitted;
}

/* all tables at once, as with enough work_mem */
static void
run_all(const nd_pair_item *in, size_t n, int k, int m, pairlist *out, int mode)
{
	nd_pairs_plan plan;
	nd_pair_item *items = malloc((n + 1) * sizeof(nd_pair_item));
	void	   *scratch = malloc(nd_allpairs_scratch_size(n));
	nd_pairs_sink sink = {sink_emit, sink_tick, NULL, out};
	uint64_t	emitted;

	if (n > 0)
		memcpy(items, in, n * sizeof(nd_pair_item));
	nd_pairs_plan_init(&plan, k, m);
	emitted = run_mode(&plan, items, n, 0, plan.ntables, scratch, &sink, mode);
	if (emitted != out->n)
		bad_order++;
	free(items);
	free(scratch);
}

/*
 * One table at a time, the input split into 2^pbits batches by the top
 * bits of the table's key: the SQL layer's spill path.  Each batch keeps
 * the input's order.  The batches of a table come from one pass over the
 * input (a counting sort by batch), not one pass per batch: at m = 16 there
 * are up to 1820 tables.
 */
static void
run_batched(const nd_pair_item *in, size_t n, int k, int m, int pbits,
			pairlist *out, int mode)
{
	nd_pairs_plan plan;
	nd_pair_item *items = malloc((n + 1) * sizeof(nd_pair_item));
	nd_pair_item *by_part = malloc((n + 1) * sizeof(nd_pair_item));
	uint8_t    *part_of = malloc(n + 1);
	void	   *scratch = malloc(nd_allpairs_scratch_size(n));
	nd_pairs_sink sink = {sink_emit, NULL, NULL, out};
	uint32_t	lead;

	assert(pbits <= 8);
	nd_pairs_plan_init(&plan, k, m);
	lead = nd_pairs_first_lead(&plan);
	for (int t = 0; t < plan.ntables; t++, lead = nd_pairs_next_lead(lead))
	{
		nd_pairs_table tab;
		int			pb = pbits < plan.min_keybits ? pbits : plan.min_keybits;
		size_t		start[256 + 1] = {0};

		nd_pairs_table_init(&plan, t, lead, &tab);
		for (size_t i = 0; i < n; i++)
		{
			part_of[i] = (uint8_t) (pb == 0 ? 0 : nd_pairs_permute(&tab, in[i].code) >> (64 - pb));
			start[part_of[i] + 1]++;
		}
		for (int part = 0; part < (1 << pb); part++)
			start[part + 1] += start[part];
		{
			size_t		next[256];

			memcpy(next, start, sizeof(next));
			for (size_t i = 0; i < n; i++)
				by_part[next[part_of[i]]++] = in[i];
		}
		for (int part = 0; part < (1 << pb); part++)
		{
			size_t		cnt = start[part + 1] - start[part];

			if (cnt > 0)
				memcpy(items, by_part + start[part], cnt * sizeof(nd_pair_item));
			run_mode(&plan, items, cnt, t, t + 1, scratch, &sink, mode);
		}
		/* k = 0 has no tables: the duplicates come with t_begin = 0 */
		if (k == 0)
			break;
	}
	free(items);
	free(by_part);
	free(part_of);
	free(scratch);
}

static int
cmp_i64(const void *x, const void *y)
{
	int64_t		a = *(const int64_t *) x,
				b = *(const int64_t *) y;

	return a < b ? -1 : a > b;
}

/*
 * The connected components of a list of edges: the sorted ids that appear
 * in an edge, and for ids[i] its component's smallest id labels[i].
 * Returns the number of ids.
 */
static size_t
components(const pairlist *e, int64_t **ids_out, int64_t **labels_out)
{
	int64_t    *ids = malloc((2 * e->n + 1) * sizeof(int64_t));
	int64_t    *labels;
	size_t		nid = 0;
	nd_unionfind uf;

	for (size_t i = 0; i < e->n; i++)
	{
		ids[nid++] = e->p[i].a;
		ids[nid++] = e->p[i].b;
	}
	qsort(ids, nid, sizeof(int64_t), cmp_i64);
	{
		size_t		u = 0;

		for (size_t i = 0; i < nid; i++)
			if (u == 0 || ids[i] != ids[u - 1])
				ids[u++] = ids[i];
		nid = u;
	}
	nd_uf_init(&uf, test_realloc, NULL);
	for (size_t i = 0; i < nid; i++)
		nd_uf_add(&uf, ids[i]);
	for (size_t i = 0; i < e->n; i++)
	{
		int64_t    *a = bsearch(&e->p[i].a, ids, nid, sizeof(int64_t), cmp_i64);
		int64_t    *b = bsearch(&e->p[i].b, ids, nid, sizeof(int64_t), cmp_i64);

		nd_uf_union(&uf, (uint32_t) (a - ids), (uint32_t) (b - ids));
	}
	labels = malloc((nid + 1) * sizeof(int64_t));
	for (size_t i = 0; i < nid; i++)
		labels[i] = nd_uf_label(&uf, (uint32_t) i);
	nd_uf_free(&uf);
	*ids_out = ids;
	*labels_out = labels;
	return nid;
}

/* Edges e have the connected components of the pairs p. */
static int
same_components(const pairlist *p, const pairlist *e)
{
	int64_t    *pi,
			   *pl,
			   *ei,
			   *el;
	size_t		np = components(p, &pi, &pl);
	size_t		ne = components(e, &ei, &el);
	int			same = np == ne &&
		(np == 0 || (memcmp(pi, ei, np * sizeof(int64_t)) == 0 &&
					 memcmp(pl, el, np * sizeof(int64_t)) == 0));

	free(pi);
	free(pl);
	free(ei);
	free(el);
	return same;
}

/* Distinct codes of the input (rows minus the copies beyond a group's first). */
static size_t
distinct_codes(const nd_pair_item *in, size_t n)
{
	uint64_t   *c = malloc((n + 1) * sizeof(uint64_t));
	size_t		d = 0;

	for (size_t i = 0; i < n; i++)
		c[i] = in[i].code;
	qsort(c, n, sizeof(uint64_t), cmp_i64);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || c[i] != c[i - 1])
			d++;
	free(c);
	return d;
}

static void
check(const char *what, const nd_pair_item *in, size_t n, int k, int m)
{
	pairlist	b = {0},
				r = {0},
				s = {0},
				x = {0},
				xb = {0},
				e = {0},
				eb = {0};

	bad_order = 0;
	brute(in, n, k, &b);
	run_all(in, n, k, m, &r, MODE_PAIRS);
	ok(bad_order == 0 && same_pairs(&b, &r),
	   "%s: n=%zu k=%d m=%d: %zu pairs as brute force (got %zu)", what, n, k, m, b.n, r.n);
	run_batched(in, n, k, m, 3, &s, MODE_PAIRS);
	ok(bad_order == 0 && same_pairs(&b, &s),
	   "%s: n=%zu k=%d m=%d batched: %zu pairs (got %zu)", what, n, k, m, b.n, s.n);
	run_all(in, n, k, m, &x, MODE_EXPANDED);
	ok(bad_order == 0 && same_pairs(&b, &x),
	   "%s: n=%zu k=%d m=%d pairs of groups, expanded: %zu pairs (got %zu)", what, n, k, m, b.n, x.n);
	run_batched(in, n, k, m, 3, &xb, MODE_EXPANDED);
	ok(bad_order == 0 && same_pairs(&b, &xb),
	   "%s: n=%zu k=%d m=%d pairs of groups, expanded, batched: %zu pairs (got %zu)",
	   what, n, k, m, b.n, xb.n);

	/*
	 * Spanning edges: the components of the pairs, from at most one edge
	 * per row beyond its group's first plus one per pair of distinct codes
	 * (bounded here by the brute-force pairs between distinct codes).
	 */
	{
		size_t		distinct_pairs = 0;

		for (size_t i = 0; i < b.n; i++)
			if (b.p[i].d > 0)
				distinct_pairs++;
		run_all(in, n, k, m, &e, MODE_SPANNING);
		ok(bad_order == 0 && same_components(&b, &e) &&
		   e.n <= (n - distinct_codes(in, n)) + distinct_pairs,
		   "%s: n=%zu k=%d m=%d spanning edges: components of the %zu pairs from %zu edges",
		   what, n, k, m, b.n, e.n);
		run_batched(in, n, k, m, 3, &eb, MODE_SPANNING);
		ok(bad_order == 0 && same_components(&b, &eb),
		   "%s: n=%zu k=%d m=%d spanning edges batched: same components (%zu edges)",
		   what, n, k, m, eb.n);
	}
	free(b.p);
	free(r.p);
	free(s.p);
	free(x.p);
	free(xb.p);
	free(e.p);
	free(eb.p);
}

/* random codes, clusters of near-duplicates and exact duplicates */
static nd_pair_item *
make_data(size_t n, int k, size_t *nout)
{
	nd_pair_item *it = malloc(n * sizeof(nd_pair_item));
	size_t		i = 0;

	while (i < n)
	{
		uint64_t	base = rnd();
		int			kind = (int) (rnd() % 4);

		it[i].code = base;
		it[i].id = (int64_t) i * 7 - 5000;	/* negative ids too */
		i++;
		if (kind == 0)			/* lone code */
			continue;
		for (int c = 0; c < 4 && i < n; c++, i++)
		{
			int			d = kind == 1 ? 0 : (int) (rnd() % (k + 3));

			it[i].code = flip_random(base, d);
			it[i].id = (int64_t) i * 7 - 5000;
		}
	}
	*nout = n;
	return it;
}

int
main(void)
{
	size_t		n;
	nd_pair_item *data;

	/* parameters */
	ok(!nd_pairs_check(3, 3) && !nd_pairs_check(-1, 4) && !nd_pairs_check(0, 1) &&
	   !nd_pairs_check(3, 17) && nd_pairs_check(0, 2) && nd_pairs_check(15, 16) &&
	   !nd_pairs_check(16, 16), "parameter checks");
	{
		nd_pairs_plan p;

		nd_pairs_plan_init(&p, 3, 6);
		ok(p.ntables == 20 && p.nlead == 3 && p.min_keybits == 31,
		   "k=3 m=6: 20 tables, narrowest key 31 bits (%d, %d)", p.ntables, p.min_keybits);
		nd_pairs_plan_init(&p, 0, 2);
		ok(p.ntables == 1 && p.min_keybits == 64, "k=0 m=2: one table, the whole code");
	}

	/* first table = rank of the s lowest agreeing blocks in Gosper order */
	for (int m = 2; m <= 8; m++)
		for (int k = 0; k < m; k++)
		{
			nd_pairs_plan p;
			int			bad = 0;

			nd_pairs_plan_init(&p, k, m);
			for (uint32_t agree = 0; agree < (1u << m); agree++)
			{
				uint32_t	lead = nd_pairs_first_lead(&p);
				int			want = -1;

				for (int t = 0; t < p.ntables; t++, lead = nd_pairs_next_lead(lead))
					if ((lead & agree) == lead)
					{
						want = t;
						break;
					}
				if (nd_pairs_first_table(&p, agree) != want)
					bad++;
			}
			if (bad || m == 8)
				ok(bad == 0, "first table by rank = by enumeration, m=%d k<=%d", m, k);
		}

	/* permutation round trip and key */
	{
		nd_pairs_plan p;
		nd_pairs_table tab;
		uint32_t	lead;
		int			bad = 0;

		nd_pairs_plan_init(&p, 3, 7);
		lead = nd_pairs_first_lead(&p);
		for (int t = 0; t < p.ntables; t++, lead = nd_pairs_next_lead(lead))
		{
			nd_pairs_table_init(&p, t, lead, &tab);
			for (int i = 0; i < 100; i++)
			{
				uint64_t	c = rnd();
				uint64_t	c2 = c ^ ((uint64_t) 1 << (rnd() & 63));
				uint32_t	agree = nd_pairs_agree(&p, c, c2);

				if (nd_pairs_unpermute(&tab, nd_pairs_permute(&tab, c)) != c)
					bad++;
				if (__builtin_popcountll(nd_pairs_permute(&tab, c)) != __builtin_popcountll(c))
					bad++;
				/* equal keys iff the codes agree on the leading blocks */
				if ((nd_pairs_key(&tab, nd_pairs_permute(&tab, c)) ==
					 nd_pairs_key(&tab, nd_pairs_permute(&tab, c2))) !=
					((agree & lead) == lead))
					bad++;
			}
		}
		ok(bad == 0, "permutation is a bijection, keeps popcount, key = leading blocks");
	}

	/* brute force comparisons */
	for (int k = 0; k <= 4; k++)
	{
		int			ms[] = {k + 1, k + 2, k + 4, 16};

		data = make_data(3000, k, &n);
		for (int i = 0; i < 4; i++)
		{
			if (!nd_pairs_check(k, ms[i]))
				continue;
			check("random+planted", data, n, k, ms[i]);
		}
		free(data);
	}

	/* duplicates: all equal; repeated ids; low entropy */
	{
		nd_pair_item *it = malloc(2000 * sizeof(nd_pair_item));

		for (int i = 0; i < 300; i++)
		{
			it[i].code = 0xDEADBEEF12345678ULL;
			it[i].id = i;
		}
		check("all equal", it, 300, 3, 5);
		check("all equal", it, 300, 0, 2);

		for (int i = 0; i < 2000; i++)
		{
			it[i].code = (uint64_t) (i % 700);	/* small integers, repeated */
			it[i].id = i % 1500;	/* some rows share an id */
		}
		check("low entropy, repeated ids", it, 2000, 2, 4);
		check("low entropy, repeated ids", it, 2000, 4, 7);

		/* a chain: each code one bit from the previous, the ends far apart */
		it[0].code = 0x5555AAAA5555AAAAULL;
		it[0].id = 0;
		for (int i = 1; i < 1500; i++)
		{
			it[i].code = it[i - 1].code ^ ((uint64_t) 1 << (rnd() & 63));
			it[i].id = i;
		}
		check("random walk chain", it, 1500, 1, 4);
		check("random walk chain", it, 1500, 3, 6);

		check("empty", it, 0, 3, 4);
		check("one row", it, 1, 3, 4);
		it[1] = it[0];
		it[1].id = 99;
		check("two equal rows", it, 2, 3, 4);
		free(it);
	}

	/*
	 * Adversarial: many distinct codes sharing long keys, so that runs are
	 * split into sub-tables, several levels deep (runs of more than 256
	 * codes are split).  Brute force catches a missed pair, a duplicate
	 * (same_pairs compares the sorted lists with multiplicity) and a wrong
	 * distance.
	 */
	{
		size_t		na = 2500;
		nd_pair_item *it = malloc(na * sizeof(nd_pair_item));
		uint64_t	vary;

		/* small integers cast to simhash64: a dense 12-bit cube */
		for (size_t i = 0; i < na; i++)
		{
			it[i].code = (uint64_t) i;
			it[i].id = (int64_t) i;
		}
		check("codes 0..3999", it, na, 3, 4);
		check("codes 0..3999", it, na, 1, 2);
		check("codes 0..3999", it, na, 5, 8);

		/* random codes varying in 16 scattered bits, some duplicated */
		vary = 0;
		while (__builtin_popcountll(vary) < 16)
			vary |= (uint64_t) 1 << (rnd() & 63);
		for (size_t i = 0; i < na; i++)
		{
			it[i].code = (rnd() & vary) | (0xC3A5C3A5C3A5C3A5ULL & ~vary);
			it[i].id = (int64_t) (i * 3);
		}
		check("16 varying bits", it, na, 3, 5);
		check("16 varying bits", it, na, 4, 6);

		/* varying in one block only (the last of 4: the low 16 bits) */
		for (size_t i = 0; i < na; i++)
		{
			it[i].code = 0x0123456789AB0000ULL | (rnd() & 0xFFFF);
			it[i].id = (int64_t) i;
		}
		check("one block varies", it, na, 3, 4);
		check("one block varies", it, na, 2, 4);

		/* all codes within a Hamming ball of radius 6 around one center */
		for (size_t i = 0; i < na; i++)
		{
			it[i].code = flip_random(0x9E3779B97F4A7C15ULL, (int) (rnd() % 7));
			it[i].id = (int64_t) i;
		}
		check("ball of radius 6", it, na, 3, 4);
		check("ball of radius 6", it, na, 4, 5);

		/* few varying bits (|V| <= k at some level): all pairs within k */
		for (size_t i = 0; i < 600; i++)
		{
			it[i].code = 0xFFFF000000000000ULL | (uint64_t) (i % 8) << 20 | (uint64_t) (i % 5);
			it[i].id = (int64_t) i;
		}
		check("5 varying bits", it, 600, 3, 4);
		free(it);
	}

	/*
	 * The split is what runs on such input, not a scan: 40 000 distinct
	 * codes 0..39999 form one run in table 0, whose scan alone would be
	 * 8e8 comparisons (763 ticks of 2^20 work units); split, the whole run
	 * with sorts and sub-table scans stays far below.  Work units are
	 * counted, not timed: deterministic.
	 */
	{
		size_t		na = 40000;
		nd_pair_item *it = malloc(na * sizeof(nd_pair_item));
		pairlist	r = {0};
		size_t		want = 0;

		for (size_t i = 0; i < na; i++)
		{
			it[i].code = (uint64_t) i;
			it[i].id = (int64_t) i;
		}
		/* pairs at distance 1: i and i ^ 2^b, both below na */
		for (size_t i = 0; i < na; i++)
			for (int b = 0; b < 16; b++)
				if ((i ^ ((size_t) 1 << b)) > i && (i ^ ((size_t) 1 << b)) < na)
					want++;
		ticks = 0;
		run_all(it, na, 1, 2, &r, 0);
		ok(r.n == want && bad_order == 0 && ticks < 100,
		   "codes 0..39999, k=1: %zu pairs (want %zu), %d ticks (a scan: 763)",
		   r.n, want, ticks);
		free(r.p);
		free(it);
	}

	/*
	 * A table split whole (whole_split_pays): the top 22 bits of each code
	 * take one of 48 values, as in one partition of a block-sharded copy
	 * (simhash_shard_clusters), so table 0's runs (key: the first block, 16
	 * bits at m = 4, 22 at m = 3) hold about 170 distinct codes each: too
	 * short to be split one by one, long enough that scanning them costs
	 * more than sorting the table k + 1 more times.  Near copies planted,
	 * some in other partitions.  The last 1,000 codes share their top 28
	 * bits: at m = 4 one sub-run of the first sub-table (bits 36-47), long
	 * enough to be split again.
	 */
	{
		size_t		na = 9000;
		nd_pair_item *it = malloc(na * sizeof(nd_pair_item));
		uint64_t	top[48];

		for (int v = 0; v < 48; v++)
			top[v] = rnd() >> 42;
		for (size_t i = 0; i < na; i++)
		{
			if (i >= 8000)
				it[i].code = (rnd() >> 28) | (uint64_t) 0x2A << 36 | top[47] << 42;
			else if (i > 0 && rnd() % 5 == 0)
				it[i].code = flip_random(it[rnd() % i].code, (int) (rnd() % 5));
			else
				it[i].code = (rnd() >> 22) | top[rnd() % 48] << 42;
			it[i].id = (int64_t) i;
		}
		check("top 22 bits in 48 values", it, na, 3, 4);
		check("top 22 bits in 48 values", it, na, 2, 3);
		free(it);
	}

	/*
	 * The same for a middle block (a partition of copy 2 or 3): bits 26-47
	 * take one of 48 values, so table 1 (block 2, bits 32-47 at m = 4) is
	 * split whole, and one of its sub-blocks is cut across the leading
	 * block: bits 48-51 and 24-31, two segments (sorted by one counting
	 * pass all the same).  The last 1,000 codes share bits 16-63 but for
	 * a few: a long sub-run, split again.
	 */
	{
		size_t		na = 9000;
		nd_pair_item *it = malloc(na * sizeof(nd_pair_item));
		uint64_t	mid[48];
		uint64_t	hole = (((uint64_t) 1 << 22) - 1) << 26;

		for (int v = 0; v < 48; v++)
			mid[v] = (rnd() >> 42) << 26;
		for (size_t i = 0; i < na; i++)
		{
			if (i >= 8000)
				it[i].code = (rnd() & 0xFFFF) | (rnd() & 0x0F000000) | (0x5A5ULL << 52) | mid[47];
			else if (i > 0 && rnd() % 5 == 0)
				it[i].code = flip_random(it[rnd() % i].code, (int) (rnd() % 5));
			else
				it[i].code = (rnd() & ~hole) | mid[rnd() % 48];
			it[i].id = (int64_t) i;
		}
		check("bits 26-47 in 48 values", it, na, 3, 4);
		check("bits 26-47 in 48 values", it, na, 2, 3);
		free(it);
	}

	/*
	 * ... and that it is the split that runs: table 0 alone over 200,000
	 * such codes (1,024 values of the first block), the work counted in
	 * ticks against what scanning its runs would cost.
	 */
	{
		size_t		na = 200000;
		nd_pair_item *it = malloc(na * sizeof(nd_pair_item));
		uint32_t   *per_value = calloc(1024, sizeof(uint32_t));
		void	   *scratch = malloc(nd_allpairs_scratch_size(na));
		pairlist	r = {0};
		nd_pairs_sink sink = {sink_emit, sink_tick, NULL, &r};
		nd_pairs_plan plan;
		double		scan = 0;

		for (size_t i = 0; i < na; i++)
		{
			it[i].code = (rnd() >> 16) | (rnd() % 1024) << 48;
			it[i].id = (int64_t) i;
			per_value[it[i].code >> 48]++;
		}
		for (int v = 0; v < 1024; v++)
			scan += 0.5 * per_value[v] * (per_value[v] - 1.0);
		nd_pairs_plan_init(&plan, 3, 4);
		ticks = 0;
		bad_order = 0;
		nd_allpairs_edges_run(&plan, it, na, 0, 1, scratch, &sink);
		ok(bad_order == 0 && ticks < scan / (1 << 20) / 2,
		   "table 0 of 200,000 codes over 1,024 first-block values: %d ticks (scanning the runs: %.0f)",
		   ticks, scan / (1 << 20));
		free(r.p);
		free(scratch);
		free(per_value);
		free(it);
	}

	/* ticks come during long runs */
	{
		nd_pair_item *it = malloc(3000 * sizeof(nd_pair_item));
		pairlist	r = {0};

		for (int i = 0; i < 3000; i++)
		{
			it[i].code = 7;
			it[i].id = i;
		}
		ticks = 0;
		run_all(it, 3000, 3, 4, &r, 0);
		ok(r.n == 3000 * 2999 / 2 && ticks >= 4, "4.5M duplicate pairs, %d ticks", ticks);
		free(r.p);
		free(it);
	}

	/* band keys: every pair within k shares the key of its first table */
	for (int k = 0; k <= 5; k++)
	{
		int			m = nd_band_auto_blocks(k);
		nd_pairs_plan p;
		int			bad = 0;

		nd_pairs_plan_init(&p, k, m);
		for (int i = 0; i < 2000; i++)
		{
			uint64_t	a = rnd();
			uint64_t	b = flip_random(a, (int) (rnd() % (k + 1)));
			int			first = nd_pairs_first_table(&p, nd_pairs_agree(&p, a, b));
			uint32_t	lead = nd_pairs_first_lead(&p);
			int			shared = -1;

			for (int t = 0; t < p.ntables; t++, lead = nd_pairs_next_lead(lead))
			{
				nd_pairs_table tab;

				nd_pairs_table_init(&p, t, lead, &tab);
				if (nd_band_key(&tab, a) == nd_band_key(&tab, b))
				{
					shared = t;
					break;
				}
			}
			if (shared < 0 || shared != first)
				bad++;
		}
		ok(bad == 0 && p.min_keybits >= ND_BAND_MIN_KEYBITS,
		   "band keys k=%d m=%d (%d keys of >= %d bits): first shared key = first table",
		   k, m, p.ntables, p.min_keybits);
	}

	/* auto choice */
	ok(nd_pairs_auto_blocks(3, 1e6) >= 4 && nd_pairs_auto_blocks(3, 1e6) <= 6 &&
	   nd_pairs_auto_blocks(3, 1e8) >= nd_pairs_auto_blocks(3, 1e4) &&
	   nd_pairs_auto_blocks(0, 1e6) == 2 && nd_pairs_auto_blocks(15, 10) == 16,
	   "auto blocks: k=3: 1e4 -> %d, 1e6 -> %d, 1e8 -> %d",
	   nd_pairs_auto_blocks(3, 1e4), nd_pairs_auto_blocks(3, 1e6), nd_pairs_auto_blocks(3, 1e8));

	return tap_done();
}
