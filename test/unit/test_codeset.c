/*
 * Unit tests of the in-memory code set (nd_codeset.c): radius searches
 * agree with brute force at every radius 0..64 for 3, 4 and 8 blocks, on
 * random codes, near copies of a few centres and runs of identical codes,
 * both through the bucket probes and the flat scan; every entry is visited
 * once; the set stays right across its rehashes; a failed allocation is
 * reported, not crashed on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_codeset.h"
#include "splitmix.h"
#include "tap.h"
#include "test_realloc.h"

static uint64_t rng_state = 0x5eed5eed12345678ULL;

static uint64_t
rnd(void)
{
	return splitmix64_next(&rng_state);
}

typedef struct visits
{
	uint32_t   *count;			/* per entry */
	int		   *dist;
	size_t		n;
} visits;

static void
record(uint32_t entry, int distance, void *arg)
{
	visits	   *v = arg;

	v->count[entry]++;
	v->dist[entry] = distance;
	v->n++;
}

/* Compare one search with brute force; returns the number of errors. */
static int
check_variant(const nd_codeset *cs, const uint64_t *codes, uint32_t n, uint64_t q, int radius,
			  int variant, visits *v)
{
	int			bad = 0;
	size_t		expected = 0;
	size_t		got;

	memset(v->count, 0, sizeof(uint32_t) * n);
	v->n = 0;
	got = nd_codeset_search_variant(cs, q, radius, variant, record, v);
	for (uint32_t i = 0; i < n; i++)
	{
		int			d = __builtin_popcountll(codes[i] ^ q);
		int			want = radius >= 0 && d <= radius;

		expected += want;
		if (v->count[i] != (uint32_t) want || (want && v->dist[i] != d))
			bad++;
	}
	if (got != expected || v->n != expected)
		bad++;
	return bad;
}

/* Every method of search against brute force. */
static int
check_search(const nd_codeset *cs, const uint64_t *codes, uint32_t n, uint64_t q, int radius,
			 visits *v)
{
	int			bad = 0;

	for (int variant = 0; variant <= 2; variant++)
		bad += check_variant(cs, codes, n, q, radius, variant, v);
	return bad;
}

/* Codes of three shapes: random, near copies of 8 centres, identical runs. */
static uint64_t
make_code(int shape, const uint64_t *centres)
{
	uint64_t	c;

	switch (shape)
	{
		case 0:
			return rnd();
		case 1:
			return splitmix64_flip(&rng_state, centres[rnd() % 8], (int) (rnd() % 6));
		default:
			c = centres[rnd() % 2];
			return c;
	}
}

static void
test_against_brute_force(void)
{
	const uint32_t sizes[] = {1, 300, 5000};
	const int	blocks[] = {3, 4, 8};
	uint64_t	centres[8];

	for (int i = 0; i < 8; i++)
		centres[i] = rnd();
	for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++)
	{
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		{
			uint32_t	n = sizes[s];
			uint64_t   *codes = malloc(sizeof(uint64_t) * n);
			nd_codeset	cs;
			visits		v;
			int			bad = 0,
						added = 1;

			v.count = malloc(sizeof(uint32_t) * n);
			v.dist = malloc(sizeof(int) * n);
			nd_codeset_init(&cs, blocks[b], test_realloc, NULL);
			for (uint32_t i = 0; i < n; i++)
			{
				codes[i] = make_code((int) (i % 3), centres);
				added &= nd_codeset_add(&cs, codes[i]);
			}
			for (int radius = -1; radius <= 65; radius++)
			{
				/* a query at a centre, near one, and random */
				bad += check_search(&cs, codes, n, centres[radius & 7], radius, &v);
				bad += check_search(&cs, codes, n,
									splitmix64_flip(&rng_state, centres[1], radius & 3), radius, &v);
				bad += check_search(&cs, codes, n, rnd(), radius, &v);
			}
			ok(added && cs.n == n && bad == 0,
			   "%d blocks, %u codes: radius -1..65 equal brute force by probes, flat scan and the cheaper, each entry once (%d errors)",
			   blocks[b], n, bad);
			nd_codeset_free(&cs);
			free(codes);
			free(v.count);
			free(v.dist);
		}
	}
}

/* Searches between additions see exactly the codes added so far. */
static void
test_growth(void)
{
	uint32_t	n = 20000;
	uint64_t   *codes = malloc(sizeof(uint64_t) * n);
	nd_codeset	cs;
	visits		v;
	int			bad = 0;

	v.count = malloc(sizeof(uint32_t) * n);
	v.dist = malloc(sizeof(int) * n);
	nd_codeset_init(&cs, 4, test_realloc, NULL);
	for (uint32_t i = 0; i < n; i++)
	{
		codes[i] = i % 5 == 0 && i > 0 ? splitmix64_flip(&rng_state, codes[i / 2], 2) : rnd();
		if (!nd_codeset_add(&cs, codes[i]))
			bad++;
		if ((i & (i + 1)) == 0 || i % 997 == 0)
		{
			bad += check_search(&cs, codes, i + 1, codes[i / 3], 3, &v);
			bad += check_search(&cs, codes, i + 1, codes[i], 0, &v);
		}
	}
	ok(bad == 0 && nd_codeset_bytes(&cs) >= (size_t) n * 24,
	   "20000 additions through every rehash: searches in between see exactly the codes added");
	nd_codeset_free(&cs);
	ok(cs.n == 0 && cs.codes == NULL && nd_codeset_search(&cs, 0, 64, record, &v) == 0,
	   "a freed set is empty");
	free(codes);
	free(v.count);
	free(v.dist);
}

static int	allowed_allocations;

static void *
failing_realloc(void *ptr, size_t size, void *arg)
{
	(void) arg;
	if (size != 0 && allowed_allocations-- <= 0)
		return NULL;
	return test_realloc(ptr, size, NULL);
}

/* An allocation that fails makes nd_codeset_add() return false, and the set stays usable. */
static void
test_allocation_failure(void)
{
	int			bad = 0;

	for (int budget = 0; budget < 40; budget++)
	{
		nd_codeset	cs;
		uint32_t	added = 0;
		int			errors = 0;
		visits		v;
		uint64_t	codes[600];

		v.count = malloc(sizeof(uint32_t) * 600);
		v.dist = malloc(sizeof(int) * 600);
		allowed_allocations = budget;
		nd_codeset_init(&cs, 4, failing_realloc, NULL);
		for (int i = 0; i < 600; i++)
		{
			uint64_t	c = rnd();

			if (nd_codeset_add(&cs, c))
				codes[added++] = c;
			else
				errors++;
		}
		if (cs.n != added)
			bad++;
		/* what was added is still found */
		if (added > 0)
			bad += check_search(&cs, codes, added, codes[0], 0, &v);
		nd_codeset_free(&cs);
		free(v.count);
		free(v.dist);
		if (budget < 4 && errors == 0)
			bad++;
	}
	ok(bad == 0, "failed allocations are reported and leave the set consistent");
}

int
main(void)
{
	test_against_brute_force();
	test_growth();
	test_allocation_failure();
	return tap_done();
}
