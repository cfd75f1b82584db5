/*-------------------------------------------------------------------------
 *
 * nd_lsh_clusters.c
 *		Clusters of MinHash signatures with LSH band buckets (see
 *		nd_lsh_clusters.h).
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "nd_allpairs.h"
#include "nd_lsh_clusters.h"
#include "nd_minhash.h"

/* estimates (or rows sorted) between ticks */
#define TICK_EVERY 4096

size_t
nd_lsh_clusters_scratch_size(size_t n)
{
	/* (key, row) items, the sort's buffer, the representatives' rows */
	return 2 * (n + 1) * sizeof(nd_pair_item) + (n + 1) * sizeof(uint32_t) + 8;
}

typedef struct ticker
{
	void		(*tick) (void *arg);
	void	   *arg;
	uint64_t	work;
} ticker;

static inline void
work(ticker *t, uint64_t units)
{
	t->work += units;
	if (t->work >= TICK_EVERY)
	{
		t->work = 0;
		if (t->tick)
			t->tick(t->arg);
	}
}

uint64_t
nd_lsh_clusters_run(const uint32_t *sigs, size_t n, int k, int bands, int rows,
					double threshold, nd_unionfind *uf, void *scratch,
					void (*tick) (void *arg), void *arg)
{
	nd_pair_item *items = (nd_pair_item *) scratch;
	nd_pair_item *tmp = items + n + 1;
	uint32_t   *reps = (uint32_t *) (tmp + n + 1);
	size_t		nrep = 0;
	uint64_t	estimates = 0;
	ticker		t = {tick, arg, 0};

	if (n < 2)
		return 0;

	/* identical signatures: joined to the first of their group */
	for (size_t i = 0; i < n; i++)
	{
		items[i].code = nd_minhash_band_key(sigs + i * (size_t) k, k, -1);
		items[i].id = (int64_t) i;
		work(&t, (uint64_t) k / 64 + 1);
	}
	nd_pair_items_sort(items, n, tmp);
	for (size_t i = 0; i < n;)
	{
		size_t		end = i + 1;

		while (end < n && items[end].code == items[i].code)
			end++;
		/*
		 * Within a run of equal hashes, a row equal to an earlier
		 * representative of the run joins it (and is marked a copy); a row
		 * equal to none (a hash collision) is a representative itself.
		 */
		for (size_t a = i; a < end; a++)
		{
			const uint32_t *sa = sigs + (size_t) items[a].id * k;
			size_t		b;

			for (b = i; b < a; b++)
			{
				if (items[b].id < 0)
					continue;	/* not a representative */
				if (memcmp(sa, sigs + (size_t) items[b].id * k, (size_t) k * sizeof(uint32_t)) == 0)
					break;
			}
			if (b < a)
			{
				nd_uf_union(uf, (uint32_t) items[a].id, (uint32_t) items[b].id);
				items[a].id = -1 - items[a].id;	/* marks a copy */
			}
		}
		i = end;
	}
	/* the representatives: one row per distinct signature */
	for (size_t i = 0; i < n; i++)
		if (items[i].id >= 0)
			reps[nrep++] = (uint32_t) items[i].id;

	/* band by band: buckets of representatives sharing the band's key */
	for (int band = 0; band < bands; band++)
	{
		for (size_t r = 0; r < nrep; r++)
		{
			items[r].code = nd_minhash_band_key(sigs + (size_t) reps[r] * k + (size_t) band * rows,
												rows, band);
			items[r].id = reps[r];
		}
		work(&t, nrep);
		nd_pair_items_sort(items, nrep, tmp);
		for (size_t i = 0; i < nrep;)
		{
			size_t		end = i + 1;

			while (end < nrep && items[end].code == items[i].code)
				end++;
			for (size_t a = i; a + 1 < end; a++)
				for (size_t b = a + 1; b < end; b++)
				{
					uint32_t	ra = (uint32_t) items[a].id,
								rb = (uint32_t) items[b].id;

					if (nd_uf_find(uf, ra) == nd_uf_find(uf, rb))
						continue;
					estimates++;
					work(&t, 1);
					if (nd_minhash_estimate(sigs + (size_t) ra * k, sigs + (size_t) rb * k, k) >= threshold)
						nd_uf_union(uf, ra, rb);
				}
			i = end;
		}
	}
	return estimates;
}
