/*-------------------------------------------------------------------------
 *
 * nd_simhash.c
 *		SimHash accumulators.
 *
 *-------------------------------------------------------------------------
 */
#include "nd_simhash.h"

#include <string.h>

/* byte j of spread[b] is bit j of b */
#define S1(b) ((uint64_t) ((b) & 1) | (uint64_t) (((b) >> 1) & 1) << 8 | \
			   (uint64_t) (((b) >> 2) & 1) << 16 | (uint64_t) (((b) >> 3) & 1) << 24 | \
			   (uint64_t) (((b) >> 4) & 1) << 32 | (uint64_t) (((b) >> 5) & 1) << 40 | \
			   (uint64_t) (((b) >> 6) & 1) << 48 | (uint64_t) (((b) >> 7) & 1) << 56)
#define S4(b) S1(b), S1((b) + 1), S1((b) + 2), S1((b) + 3)
#define S16(b) S4(b), S4((b) + 4), S4((b) + 8), S4((b) + 12)
#define S64(b) S16(b), S16((b) + 16), S16((b) + 32), S16((b) + 48)
static const uint64_t spread[256] = {S64(0), S64(64), S64(128), S64(192)};

static void
spill(nd_simhash_acc *acc)
{
	for (int k = 0; k < 8; k++)
	{
		uint64_t	l = acc->lanes[k];

		for (int j = 0; j < 8; j++)
			acc->ones[8 * k + j] += (l >> (8 * j)) & 0xFF;
		acc->lanes[k] = 0;
	}
	acc->in_lanes = 0;
}

void
nd_simhash_init(nd_simhash_acc *acc)
{
	memset(acc, 0, sizeof(*acc));
}

void
nd_simhash_add(nd_simhash_acc *acc, const uint64_t *features, size_t n)
{
	while (n > 0)
	{
		/* a byte lane holds at most 255 before it must be spilled */
		size_t		room = 255 - acc->in_lanes;
		size_t		m = n < room ? n : room;
		uint64_t	l0 = acc->lanes[0],
					l1 = acc->lanes[1],
					l2 = acc->lanes[2],
					l3 = acc->lanes[3],
					l4 = acc->lanes[4],
					l5 = acc->lanes[5],
					l6 = acc->lanes[6],
					l7 = acc->lanes[7];

		for (size_t i = 0; i < m; i++)
		{
			uint64_t	h = features[i];

			l0 += spread[h & 0xFF];
			l1 += spread[(h >> 8) & 0xFF];
			l2 += spread[(h >> 16) & 0xFF];
			l3 += spread[(h >> 24) & 0xFF];
			l4 += spread[(h >> 32) & 0xFF];
			l5 += spread[(h >> 40) & 0xFF];
			l6 += spread[(h >> 48) & 0xFF];
			l7 += spread[h >> 56];
		}
		acc->lanes[0] = l0;
		acc->lanes[1] = l1;
		acc->lanes[2] = l2;
		acc->lanes[3] = l3;
		acc->lanes[4] = l4;
		acc->lanes[5] = l5;
		acc->lanes[6] = l6;
		acc->lanes[7] = l7;
		acc->in_lanes += (uint32_t) m;
		acc->n += m;
		features += m;
		n -= m;
		if (acc->in_lanes == 255)
			spill(acc);
	}
}

bool
nd_simhash_result(nd_simhash_acc *acc, uint64_t *fingerprint)
{
	uint64_t	fp = 0;

	spill(acc);
	/* bit i is 1 when more features have it set than clear: ties give 0 */
	for (int i = 0; i < 64; i++)
		if (2 * acc->ones[i] > acc->n)
			fp |= (uint64_t) 1 << i;
	*fingerprint = fp;
	return acc->n > 0;
}

void
nd_wsimhash_init(nd_wsimhash_acc *acc)
{
	memset(acc, 0, sizeof(*acc));
}

void
nd_wsimhash_add(nd_wsimhash_acc *acc, uint64_t feature, double weight)
{
	if (weight == 0.0)
		return;
	for (int i = 0; i < 64; i++)
		acc->votes[i] += ((feature >> i) & 1) ? weight : -weight;
	acc->n++;
}

void
nd_wsimhash_merge(nd_wsimhash_acc *into, const nd_wsimhash_acc *from)
{
	for (int i = 0; i < 64; i++)
		into->votes[i] += from->votes[i];
	into->n += from->n;
}

bool
nd_wsimhash_result(const nd_wsimhash_acc *acc, uint64_t *fingerprint)
{
	uint64_t	fp = 0;

	for (int i = 0; i < 64; i++)
		if (acc->votes[i] > 0)
			fp |= (uint64_t) 1 << i;
	*fingerprint = fp;
	return acc->n > 0;
}
