/*
 * Unit tests of the MinHash clustering core (nd_lsh_clusters.c): the
 * components it builds equal those of a brute-force double loop over every
 * pair (shares a band key and the estimate reaches the threshold), on
 * random signatures, planted copies with a chosen number of changed values,
 * groups of identical signatures, for several thresholds and band shapes;
 * and a large identical group costs no estimate.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_lsh_clusters.h"
#include "nd_minhash.h"
#include "nd_unionfind.h"
#include "splitmix.h"
#include "tap.h"
#include "test_realloc.h"

static uint64_t rng = 0x15C1057E5ULL;

static uint32_t
rnd32(void)
{
	return (uint32_t) splitmix64_next(&rng);
}

static int
share_band(const uint32_t *a, const uint32_t *b, int bands, int rows)
{
	for (int band = 0; band < bands; band++)
		if (nd_minhash_band_key(a + band * rows, rows, band) ==
			nd_minhash_band_key(b + band * rows, rows, band))
			return 1;
	return 0;
}

/* 1 when the two union-finds partition rows 0..n-1 the same way */
static int
same_partition(nd_unionfind *x, nd_unionfind *y, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (nd_uf_label(x, (uint32_t) i) != nd_uf_label(y, (uint32_t) i))
			return 0;
	return 1;
}

static void
check(const char *what, const uint32_t *sigs, size_t n, int k, int bands, int rows,
	  double threshold)
{
	nd_unionfind got,
				want;
	void	   *scratch = malloc(nd_lsh_clusters_scratch_size(n));
	size_t		joined = 0;
	uint64_t	estimates;

	nd_uf_init(&got, test_realloc, NULL);
	nd_uf_init(&want, test_realloc, NULL);
	for (size_t i = 0; i < n; i++)
	{
		nd_uf_add(&got, (int64_t) i);
		nd_uf_add(&want, (int64_t) i);
	}
	estimates = nd_lsh_clusters_run(sigs, n, k, bands, rows, threshold, &got, scratch, NULL, NULL);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (share_band(sigs + i * k, sigs + j * k, bands, rows) &&
				nd_minhash_estimate(sigs + i * k, sigs + j * k, k) >= threshold)
				joined += nd_uf_union(&want, (uint32_t) i, (uint32_t) j);
	ok(same_partition(&got, &want, n),
	   "%s: n=%zu k=%d %dx%d t=%.2f: the brute-force components (%zu joins, %llu estimates)",
	   what, n, k, bands, rows, threshold, joined, (unsigned long long) estimates);
	nd_uf_free(&got);
	nd_uf_free(&want);
	free(scratch);
}

int
main(void)
{
	const int	k = 64;
	size_t		n = 1200;
	uint32_t   *sigs = malloc(n * k * sizeof(uint32_t));
	size_t		i = 0;

	/* random signatures, copies with 0..40 of 64 values changed, identical groups */
	while (i < n)
	{
		size_t		base = i;
		int			kind = (int) (rnd32() % 3);

		for (int v = 0; v < k; v++)
			sigs[i * k + v] = rnd32();
		i++;
		for (int c = 0; c < 5 && i < n && kind > 0; c++, i++)
		{
			int			changes = kind == 1 ? 0 : (int) (rnd32() % 41);

			memcpy(sigs + i * k, sigs + base * k, k * sizeof(uint32_t));
			for (int x = 0; x < changes; x++)
				sigs[i * k + rnd32() % k] = rnd32();
		}
	}
	check("random+copies", sigs, n, k, 8, 8, 0.8);
	check("random+copies", sigs, n, k, 16, 4, 0.5);
	check("random+copies", sigs, n, k, 32, 2, 0.3);
	check("random+copies", sigs, n, k, 4, 16, 0.9);
	check("random+copies", sigs, n, k, 8, 8, 1.0);
	check("random+copies", sigs, n, k, 2, 2, 0.0);
	check("one row", sigs, 1, k, 8, 8, 0.8);
	check("empty", sigs, 0, k, 8, 8, 0.8);

	/* a large identical group: joined without any estimate */
	{
		size_t		m = 20000;
		uint32_t   *same = malloc(m * k * sizeof(uint32_t));
		void	   *scratch = malloc(nd_lsh_clusters_scratch_size(m));
		nd_unionfind uf;
		uint64_t	est;
		int			one = 1;

		for (size_t r = 0; r < m; r++)
			memcpy(same + r * k, sigs, k * sizeof(uint32_t));
		nd_uf_init(&uf, test_realloc, NULL);
		for (size_t r = 0; r < m; r++)
			nd_uf_add(&uf, (int64_t) r);
		est = nd_lsh_clusters_run(same, m, k, 8, 8, 0.8, &uf, scratch, NULL, NULL);
		for (size_t r = 0; r < m; r++)
			if (nd_uf_label(&uf, (uint32_t) r) != 0)
				one = 0;
		ok(one && est == 0, "20000 identical signatures: one cluster, %llu estimates",
		   (unsigned long long) est);
		nd_uf_free(&uf);
		free(scratch);
		free(same);
	}
	free(sigs);
	return tap_done();
}
