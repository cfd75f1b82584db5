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

/* Adds byte lanes into the wide counters, each lane count times `unit`. */
static void
spill_lanes(uint64_t *lanes, uint64_t unit, uint64_t *ones)
{
	for (int k = 0; k < 8; k++)
	{
		uint64_t	l = lanes[k];

		for (int j = 0; j < 8; j++)
			ones[8 * k + j] += unit * ((l >> (8 * j)) & 0xFF);
		lanes[k] = 0;
	}
}

static inline void
add_to_lanes(uint64_t *lanes, uint64_t h)
{
	lanes[0] += spread[h & 0xFF];
	lanes[1] += spread[(h >> 8) & 0xFF];
	lanes[2] += spread[(h >> 16) & 0xFF];
	lanes[3] += spread[(h >> 24) & 0xFF];
	lanes[4] += spread[(h >> 32) & 0xFF];
	lanes[5] += spread[(h >> 40) & 0xFF];
	lanes[6] += spread[(h >> 48) & 0xFF];
	lanes[7] += spread[h >> 56];
}

/* carry-save adder: *hi, *lo = bitwise a + b + c */
#define CSA(hi, lo, a, b, c) \
	do { \
		uint64_t	u_ = (a) ^ (b); \
		(hi) = ((a) & (b)) | (u_ & (c)); \
		(lo) = u_ ^ (c); \
	} while (0)

void
nd_simhash_init(nd_simhash_acc *acc)
{
	memset(acc, 0, sizeof(*acc));
}

void
nd_simhash_add(nd_simhash_acc *acc, const uint64_t *f, size_t n)
{
	uint64_t	ones = acc->ones_,
				twos = acc->twos,
				fours = acc->fours,
				eights = acc->eights;
	size_t		i = 0;

	acc->n += n;
	for (; i + 16 <= n; i += 16)
	{
		uint64_t	twosA,
					twosB,
					foursA,
					foursB,
					eightsA,
					eightsB,
					sixteens;

		CSA(twosA, ones, ones, f[i + 0], f[i + 1]);
		CSA(twosB, ones, ones, f[i + 2], f[i + 3]);
		CSA(foursA, twos, twos, twosA, twosB);
		CSA(twosA, ones, ones, f[i + 4], f[i + 5]);
		CSA(twosB, ones, ones, f[i + 6], f[i + 7]);
		CSA(foursB, twos, twos, twosA, twosB);
		CSA(eightsA, fours, fours, foursA, foursB);
		CSA(twosA, ones, ones, f[i + 8], f[i + 9]);
		CSA(twosB, ones, ones, f[i + 10], f[i + 11]);
		CSA(foursA, twos, twos, twosA, twosB);
		CSA(twosA, ones, ones, f[i + 12], f[i + 13]);
		CSA(twosB, ones, ones, f[i + 14], f[i + 15]);
		CSA(foursB, twos, twos, twosA, twosB);
		CSA(eightsB, fours, fours, foursA, foursB);
		CSA(sixteens, eights, eights, eightsA, eightsB);

		add_to_lanes(acc->lanes16, sixteens);
		/* a byte lane holds at most 255 */
		if (++acc->in_lanes16 == 255)
		{
			spill_lanes(acc->lanes16, 16, acc->ones);
			acc->in_lanes16 = 0;
		}
	}
	for (; i < n; i++)
	{
		add_to_lanes(acc->lanes1, f[i]);
		if (++acc->in_lanes1 == 255)
		{
			spill_lanes(acc->lanes1, 1, acc->ones);
			acc->in_lanes1 = 0;
		}
	}
	acc->ones_ = ones;
	acc->twos = twos;
	acc->fours = fours;
	acc->eights = eights;
}

void
nd_simhash_sink(void *acc, const uint64_t *features, size_t n)
{
	nd_simhash_add((nd_simhash_acc *) acc, features, n);
}

bool
nd_simhash_result(nd_simhash_acc *acc, uint64_t *fingerprint)
{
	uint64_t	fp = 0;

	spill_lanes(acc->lanes16, 16, acc->ones);
	spill_lanes(acc->lanes1, 1, acc->ones);
	acc->in_lanes16 = acc->in_lanes1 = 0;
	for (int i = 0; i < 64; i++)
	{
		acc->ones[i] += ((acc->ones_ >> i) & 1) + 2 * ((acc->twos >> i) & 1) +
			4 * ((acc->fours >> i) & 1) + 8 * ((acc->eights >> i) & 1);
	}
	acc->ones_ = acc->twos = acc->fours = acc->eights = 0;

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
