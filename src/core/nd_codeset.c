/*-------------------------------------------------------------------------
 *
 * nd_codeset.c
 *		An appendable in-memory set of codes with multi-index hash search
 *		(see nd_codeset.h).
 *
 *-------------------------------------------------------------------------
 */
#include "nd_codeset.h"

#include <string.h>

#include "nd_bitrange.h"
#include "nd_mih.h"

#define ND_CODESET_NONE		UINT32_MAX

/*
 * Relative costs, in bucket probes: a flat scan computes a distance for a
 * twentieth of a probe (four at a time, in cache); following a chain costs
 * a third of a probe per entry.
 */
#define ND_CODESET_FLAT_ENTRY	0.05
#define ND_CODESET_CHAIN_ENTRY	0.3

/* Steps probing more block values than this are left to a flat scan. */
#define ND_CODESET_MAX_VALUES	4096

/* Entries a flat scan hands to the kernel at once */
#define ND_CODESET_FLAT_CHUNK	512

void
nd_codeset_init(nd_codeset *cs, int nblocks, nd_codeset_realloc_fn realloc_fn, void *arg)
{
	memset(cs, 0, sizeof(*cs));
	nd_layout_init(&cs->layout, nblocks);
	cs->realloc_fn = realloc_fn;
	cs->arg = arg;
}

static inline uint32_t
bucket_of(uint32_t value, uint32_t bits)
{
	return (uint32_t) (value * 2654435761u) >> (32 - bits);
}

/* Rebuild every table's buckets at 2^bits; on failure the set is unchanged. */
static bool
rehash(nd_codeset *cs, uint32_t bits)
{
	size_t		nbuckets = (size_t) 1 << bits;
	uint32_t   *heads[ND_PERMUTE_MAX_BLOCKS] = {0};

	for (int t = 0; t < cs->layout.nblocks; t++)
	{
		heads[t] = cs->realloc_fn(NULL, nbuckets * sizeof(uint32_t), cs->arg);
		if (heads[t] == NULL)
		{
			while (--t >= 0)
				cs->realloc_fn(heads[t], 0, cs->arg);
			return false;
		}
	}
	for (int t = 0; t < cs->layout.nblocks; t++)
	{
		memset(heads[t], 0xFF, nbuckets * sizeof(uint32_t));
		for (uint32_t i = 0; i < cs->n; i++)
		{
			uint32_t	b = bucket_of(nd_block(&cs->layout, t, cs->codes[i]), bits);

			cs->next[t][i] = heads[t][b];
			heads[t][b] = i;
		}
		if (cs->heads[t])
			cs->realloc_fn(cs->heads[t], 0, cs->arg);
		cs->heads[t] = heads[t];
	}
	cs->bucket_bits = bits;
	return true;
}

static bool
grow(nd_codeset *cs)
{
	uint32_t	cap = cs->cap == 0 ? 256 : cs->cap * 2;
	uint64_t   *codes;

	if (cap > ND_CODESET_MAX)
		return false;
	codes = cs->realloc_fn(cs->codes, (size_t) cap * sizeof(uint64_t), cs->arg);
	if (codes == NULL)
		return false;
	cs->codes = codes;
	for (int t = 0; t < cs->layout.nblocks; t++)
	{
		uint32_t   *next = cs->realloc_fn(cs->next[t], (size_t) cap * sizeof(uint32_t), cs->arg);

		if (next == NULL)
			return false;
		cs->next[t] = next;
	}
	cs->cap = cap;
	return true;
}

bool
nd_codeset_add(nd_codeset *cs, uint64_t code)
{
	uint32_t	i = cs->n;

	if (i == cs->cap && !grow(cs))
		return false;
	/* at most one entry per bucket on average */
	if (cs->bucket_bits == 0 || i >= ((uint32_t) 1 << cs->bucket_bits))
	{
		cs->codes[i] = code;
		cs->n++;
		if (!rehash(cs, cs->bucket_bits == 0 ? 8 : cs->bucket_bits + 1))
		{
			cs->n--;
			return false;
		}
		return true;
	}
	cs->codes[i] = code;
	for (int t = 0; t < cs->layout.nblocks; t++)
	{
		uint32_t	b = bucket_of(nd_block(&cs->layout, t, code), cs->bucket_bits);

		cs->next[t][i] = cs->heads[t][b];
		cs->heads[t][b] = i;
	}
	cs->n++;
	return true;
}

size_t
nd_codeset_bytes(const nd_codeset *cs)
{
	size_t		m = (size_t) cs->layout.nblocks;

	return (size_t) cs->cap * (sizeof(uint64_t) + m * sizeof(uint32_t)) +
		(cs->bucket_bits ? ((size_t) 1 << cs->bucket_bits) * m * sizeof(uint32_t) : 0);
}

static size_t
search_flat(const nd_codeset *cs, uint64_t q, int radius, nd_codeset_visit_fn visit, void *arg)
{
	uint32_t	idx[ND_CODESET_FLAT_CHUNK];
	uint8_t		dist[ND_CODESET_FLAT_CHUNK];
	size_t		found = 0;

	for (uint32_t base = 0; base < cs->n; base += ND_CODESET_FLAT_CHUNK)
	{
		size_t		len = cs->n - base < ND_CODESET_FLAT_CHUNK ? cs->n - base : ND_CODESET_FLAT_CHUNK;
		size_t		k = nd_hamming_within(cs->codes + base, len, q, radius, idx, dist);

		for (size_t j = 0; j < k; j++)
			visit(base + idx[j], dist[j], arg);
		found += k;
	}
	return found;
}

size_t
nd_codeset_search(const nd_codeset *cs, uint64_t q, int radius, nd_codeset_visit_fn visit,
				  void *arg)
{
	return nd_codeset_search_variant(cs, q, radius, 0, visit, arg);
}

size_t
nd_codeset_search_variant(const nd_codeset *cs, uint64_t q, int radius, int variant,
						  nd_codeset_visit_fn visit, void *arg)
{
	const nd_layout *l = &cs->layout;
	nd_mih_query mq;
	uint32_t	values[ND_CODESET_MAX_VALUES];
	int			steps;
	double		mih = 0;
	size_t		found = 0;

	if (radius < 0 || cs->n == 0)
		return 0;
	if (radius > 64)
		radius = 64;
	steps = nd_mih_steps_for_radius(radius);
	for (int t = 0; t < steps; t++)
	{
		uint64_t	size = nd_mih_step_size(l, t);
		int			w = l->width[nd_mih_step_table(l, t)];
		double		chain = (double) cs->n / (double) ((uint64_t) 1 << cs->bucket_bits) +
			(double) cs->n / (double) ((uint64_t) 1 << w);

		if (size > ND_CODESET_MAX_VALUES)
			return search_flat(cs, q, radius, visit, arg);
		mih += (double) size * (1.0 + chain * ND_CODESET_CHAIN_ENTRY);
	}
	if (variant == 1 || (variant == 0 && mih > (double) cs->n * ND_CODESET_FLAT_ENTRY))
		return search_flat(cs, q, radius, visit, arg);

	nd_mih_query_init(&mq, l, q);
	for (int t = 0; t < steps; t++)
	{
		int			table = nd_mih_step_table(l, t);
		const uint32_t *heads = cs->heads[table];
		const uint32_t *next = cs->next[table];
		size_t		nvalues = nd_mih_step_values(&mq, t, values);

		for (size_t v = 0; v < nvalues; v++)
		{
			for (uint32_t i = heads[bucket_of(values[v], cs->bucket_bits)]; i != ND_CODESET_NONE;
				 i = next[i])
			{
				uint64_t	code = cs->codes[i];
				int			d;

				if (nd_block(l, table, code) != values[v])
					continue;
				d = nd_popcount64(code ^ q);
				if (d > radius || nd_mih_first_step(&mq, code) != t)
					continue;
				visit(i, d, arg);
				found++;
			}
		}
	}
	return found;
}

void
nd_codeset_free(nd_codeset *cs)
{
	if (cs->codes)
		cs->realloc_fn(cs->codes, 0, cs->arg);
	for (int t = 0; t < ND_PERMUTE_MAX_BLOCKS; t++)
	{
		if (cs->heads[t])
			cs->realloc_fn(cs->heads[t], 0, cs->arg);
		if (cs->next[t])
			cs->realloc_fn(cs->next[t], 0, cs->arg);
	}
	nd_codeset_init(cs, cs->layout.nblocks, cs->realloc_fn, cs->arg);
}
