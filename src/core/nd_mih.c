/*-------------------------------------------------------------------------
 *
 * nd_mih.c
 *		Multi-index hashing steps and the flat distance kernel (see
 *		nd_mih.h).
 *
 *-------------------------------------------------------------------------
 */
#include "nd_mih.h"

#include <stdbool.h>
#include <stdlib.h>

static inline int
popcount64_portable(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (int) ((x * 0x0101010101010101ULL) >> 56);
}

void
nd_mih_query_init(nd_mih_query *mq, const nd_layout *l, uint64_t code)
{
	mq->layout = *l;
	mq->code = code;
	for (int i = 0; i < ND_PERMUTE_MAX_BLOCKS; i++)
	{
		int			w = i < l->nblocks ? l->width[i] : 0;
		uint64_t	ones = w >= 64 ? ~(uint64_t) 0 : (((uint64_t) 1 << w) - 1);

		mq->block_mask[i] = w == 0 ? 0 : ones << (64 - l->start[i] - w);
	}
}

int
nd_mih_first_step(const nd_mih_query *mq, uint64_t code)
{
	uint64_t	diff = mq->code ^ code;
	int			m = mq->layout.nblocks;
	int			best = ND_MIH_LAST_STEP * m + m;

	for (int i = 0; i < m; i++)
	{
		int			step = popcount64_portable(diff & mq->block_mask[i]) * m + i;

		if (step < best)
			best = step;
	}
	return best;
}

uint64_t
nd_mih_step_size(const nd_layout *l, int step)
{
	int			w = l->width[nd_mih_step_table(l, step)];
	int			s = nd_mih_step_distance(l, step);
	uint64_t	binom = 1;

	if (step < 0 || s > w)
		return 0;
	for (int k = 0; k < s; k++)
		binom = binom * (uint64_t) (w - k) / (uint64_t) (k + 1);
	return binom;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	return x < y ? -1 : x > y;
}

size_t
nd_mih_step_values(const nd_mih_query *mq, int step, uint32_t *values)
{
	const nd_layout *l = &mq->layout;
	int			table = nd_mih_step_table(l, step);
	int			w = l->width[table];
	int			s = nd_mih_step_distance(l, step);
	uint32_t	center = nd_block(l, table, mq->code);
	uint64_t	limit = (uint64_t) 1 << w;
	uint64_t	flips;
	size_t		n = 0;

	if (step < 0 || s > w)
		return 0;
	if (s == 0)
	{
		values[0] = center;
		return 1;
	}
	/* the w-bit masks with s bits set, in increasing order (Gosper) */
	for (flips = ((uint64_t) 1 << s) - 1; flips < limit;)
	{
		uint64_t	low = flips & (~flips + 1);
		uint64_t	ripple = flips + low;

		values[n++] = center ^ (uint32_t) flips;
		flips = (((ripple ^ flips) >> 2) / low) | ripple;
	}
	if (center != 0)
		qsort(values, n, sizeof(uint32_t), cmp_u32);
	return n;
}

void
nd_sorted_range(const uint64_t *keys, size_t n, uint64_t lo, uint64_t hi,
				size_t *begin, size_t *end)
{
	size_t		a = 0,
				b = n;

	/* first key >= lo */
	while (a < b)
	{
		size_t		mid = a + (b - a) / 2;

		if (keys[mid] < lo)
			a = mid + 1;
		else
			b = mid;
	}
	*begin = a;
	/* first key > hi */
	b = n;
	while (a < b)
	{
		size_t		mid = a + (b - a) / 2;

		if (keys[mid] <= hi)
			a = mid + 1;
		else
			b = mid;
	}
	*end = a;
}

/*
 * The first position in [0, n) whose key is not "below" (key < x when
 * strict, key <= x otherwise), galloping out from g: keys[a-1] is below and
 * keys[b] is not (or b == n) before the binary search of [a, b).
 */
static size_t
gallop_bound(const uint64_t *keys, size_t n, uint64_t x, bool strict, size_t g)
{
	size_t		a,
				b,
				step = 1;

#define ND_BELOW(k) (strict ? (k) < x : (k) <= x)
	if (g > n)
		g = n;
	if (g < n && ND_BELOW(keys[g]))
	{
		size_t		p = g + 1;

		a = g + 1;
		while (p < n && ND_BELOW(keys[p]))
		{
			a = p + 1;
			step *= 2;
			p = g + step;
		}
		b = p < n ? p : n;
	}
	else
	{
		a = 0;
		b = g;
		while (step <= g)
		{
			size_t		p = g - step;

			if (ND_BELOW(keys[p]))
			{
				a = p + 1;
				break;
			}
			b = p;
			step *= 2;
		}
	}
	while (a < b)
	{
		size_t		mid = a + (b - a) / 2;

		if (ND_BELOW(keys[mid]))
			a = mid + 1;
		else
			b = mid;
	}
#undef ND_BELOW
	return a;
}

void
nd_sorted_range_from(const uint64_t *keys, size_t n, uint64_t lo, uint64_t hi,
					 size_t guess, size_t *begin, size_t *end)
{
	*begin = gallop_bound(keys, n, lo, true, guess);
	*end = *begin < n && keys[*begin] <= hi ?
		gallop_bound(keys, n, hi, false, *begin) : *begin;
}

size_t
nd_interpolate(uint64_t first, uint64_t next, size_t n, uint64_t x)
{
	double		at;

	if (n == 0 || x <= first)
		return 0;
	if (next <= first || x >= next)
		return n;
	at = (double) (x - first) / (double) (next - first) * (double) n;
	return at >= (double) n ? n : (size_t) at;
}

/*
 * nd_sorted_range() within page p of nd_paged_range()'s keys, starting
 * where the keys, spread evenly between the page's first key and the next
 * page's, put `at`; returns the position of b (the page's start + *b).
 */
static size_t
page_range(const uint64_t *pagefirst, size_t npages, size_t cap, size_t n,
		   nd_page_keys_fn page_keys, void *arg, size_t p,
		   uint64_t lo, uint64_t hi, uint64_t at, size_t *b, size_t *e)
{
	size_t		from = p * cap,
				len = n - from < cap ? n - from : cap;
	const uint64_t *keys = page_keys(p, arg);
	uint64_t	next = p + 1 < npages ? pagefirst[p + 1] : (len > 0 ? keys[len - 1] + 1 : 0);

	nd_sorted_range_from(keys, len, lo, hi, nd_interpolate(pagefirst[p], next, len, at), b, e);
	return from + *b;
}

void
nd_paged_range(const uint64_t *pagefirst, size_t npages, size_t cap, size_t n,
			   nd_page_keys_fn page_keys, void *arg,
			   uint64_t lo, uint64_t hi, size_t *begin, size_t *end)
{
	size_t		pbelow,
				pupto,
				b,
				e;

	/* pages starting below lo, and at or below hi */
	nd_sorted_range(pagefirst, npages, lo, hi, &pbelow, &pupto);
	*begin = 0;
	*end = 0;
	/* every page before pbelow - 1 lies below lo, every one after above */
	if (pbelow > 0)
	{
		*begin = page_range(pagefirst, npages, cap, n, page_keys, arg, pbelow - 1, lo, hi, lo, &b, &e);
		if (pupto == pbelow)
		{
			*end = *begin - b + e;
			return;
		}
	}
	if (pupto > 0)
		*end = page_range(pagefirst, npages, cap, n, page_keys, arg, pupto - 1, lo, hi, hi, &b, &e) - b + e;
	if (*end < *begin)
		*end = *begin;
}

/*
 * The kernel.  On x86-64 the build targets the baseline ISA, which has no
 * popcount instruction, so copies are compiled for CPUs with popcnt and
 * with AVX2, and one is chosen once at run time.  The scalar loop is one
 * body inlined into each copy: `hw` (a constant there) picks the popcount
 * instruction or the portable one.  Positions are numbered from `base`.
 */
static inline __attribute__((always_inline)) size_t
within_scalar(const uint64_t *codes, size_t n, uint64_t q, int maxd,
			  uint32_t *idx, uint8_t *dist, size_t base, bool hw)
{
	size_t		k = 0;

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	x = codes[i] ^ q;
		int			d = hw ? __builtin_popcountll(x) : popcount64_portable(x);

		/* branch-free: write always, advance when within */
		idx[k] = (uint32_t) (base + i);
		dist[k] = (uint8_t) d;
		k += d <= maxd;
	}
	return k;
}

static size_t
within_portable(const uint64_t *codes, size_t n, uint64_t q, int maxd,
				uint32_t *idx, uint8_t *dist)
{
	return within_scalar(codes, n, q, maxd, idx, dist, 0, false);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("popcnt")))
static size_t
within_popcnt(const uint64_t *codes, size_t n, uint64_t q, int maxd,
			  uint32_t *idx, uint8_t *dist)
{
	return within_scalar(codes, n, q, maxd, idx, dist, 0, true);
}

/*
 * Popcount of four codes at once by nibble lookup (vpshufb) and byte sums
 * (vpsadbw), Mula's method; a comparison picks the few within maxd.
 */
__attribute__((target("avx2,popcnt")))
static size_t
within_avx2(const uint64_t *codes, size_t n, uint64_t q, int maxd,
			uint32_t *idx, uint8_t *dist)
{
	const __m256i lookup = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
											0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
	const __m256i low = _mm256_set1_epi8(0x0f);
	const __m256i qv = _mm256_set1_epi64x((long long) q);
	const __m256i limit = _mm256_set1_epi64x(maxd);
	size_t		k = 0,
				i = 0;

	for (; i + 4 <= n; i += 4)
	{
		__m256i		v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (codes + i)), qv);
		__m256i		cnt = _mm256_add_epi8(_mm256_shuffle_epi8(lookup, _mm256_and_si256(v, low)),
										  _mm256_shuffle_epi8(lookup, _mm256_and_si256(_mm256_srli_epi16(v, 4), low)));
		__m256i		sums = _mm256_sad_epu8(cnt, _mm256_setzero_si256());
		int			far = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(sums, limit)));

		if (far != 0xf)
			k += within_scalar(codes + i, 4, q, maxd, idx + k, dist + k, i, true);
	}
	return k + within_scalar(codes + i, n - i, q, maxd, idx + k, dist + k, i, true);
}

/*
 * Eight codes at once with AVX-512's own popcount (VPOPCNTQ), half the time
 * of the AVX2 kernel on a CPU that has it.  The comparison is signed, so
 * that maxd -1 selects nothing.
 */
__attribute__((target("avx512f,avx512vpopcntdq,popcnt")))
static size_t
within_avx512(const uint64_t *codes, size_t n, uint64_t q, int maxd,
			  uint32_t *idx, uint8_t *dist)
{
	const __m512i qv = _mm512_set1_epi64((long long) q);
	const __m512i limit = _mm512_set1_epi64(maxd);
	size_t		k = 0,
				i = 0;

	for (; i + 8 <= n; i += 8)
	{
		__m512i		d = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(codes + i), qv));

		if (_mm512_cmple_epi64_mask(d, limit) != 0)
			k += within_scalar(codes + i, 8, q, maxd, idx + k, dist + k, i, true);
	}
	return k + within_scalar(codes + i, n - i, q, maxd, idx + k, dist + k, i, true);
}

/* 0 baseline, 1 popcnt, 2 avx2, 3 avx512 with VPOPCNTQ */
static int	cpu_level = -1;

static int
nd_cpu_level(void)
{
	if (cpu_level < 0)
	{
		__builtin_cpu_init();
		cpu_level = !__builtin_cpu_supports("popcnt") ? 0
			: !__builtin_cpu_supports("avx2") ? 1
			: __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq") ? 3
			: 2;
	}
	return cpu_level;
}

size_t
nd_hamming_within(const uint64_t *codes, size_t n, uint64_t q, int maxd,
				  uint32_t *idx, uint8_t *dist)
{
	switch (nd_cpu_level())
	{
		case 3:
			return within_avx512(codes, n, q, maxd, idx, dist);
		case 2:
			return within_avx2(codes, n, q, maxd, idx, dist);
		case 1:
			return within_popcnt(codes, n, q, maxd, idx, dist);
		default:
			return within_portable(codes, n, q, maxd, idx, dist);
	}
}
#else
size_t
nd_hamming_within(const uint64_t *codes, size_t n, uint64_t q, int maxd,
				  uint32_t *idx, uint8_t *dist)
{
	return within_portable(codes, n, q, maxd, idx, dist);
}
#endif

/* Every variant the CPU can run, for the unit tests. */
size_t
nd_hamming_within_variant(int variant, const uint64_t *codes, size_t n, uint64_t q,
						  int maxd, uint32_t *idx, uint8_t *dist)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (variant == 3 && nd_cpu_level() >= 3)
		return within_avx512(codes, n, q, maxd, idx, dist);
	if (variant == 2 && nd_cpu_level() >= 2)
		return within_avx2(codes, n, q, maxd, idx, dist);
	if (variant == 1 && nd_cpu_level() >= 1)
		return within_popcnt(codes, n, q, maxd, idx, dist);
#endif
	return within_portable(codes, n, q, maxd, idx, dist);
}
