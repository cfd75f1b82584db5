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

/*
 * A row may take 2^37 additions of |M| < 2^24 before its sums could leave
 * +-2^61; then it is normalized: each sum v = 2q + r keeps r (0 or 1) and
 * carries q to the row one exponent up, which is exact.
 */
#define ROW_MAX_ADDS ((uint64_t) 1 << 37)

void
nd_wsimhash_init(nd_wsimhash_acc *acc, nd_wsimhash_realloc_fn realloc_fn, void *arg)
{
	memset(acc, 0, sizeof(*acc));
	acc->realloc_fn = realloc_fn;
	acc->arg = arg;
}

void
nd_wsimhash_free(nd_wsimhash_acc *acc)
{
	if (acc->rows)
		acc->realloc_fn(acc->rows, 0, acc->arg);
	if (acc->row_adds)
		acc->realloc_fn(acc->row_adds, 0, acc->arg);
	nd_wsimhash_init(acc, acc->realloc_fn, acc->arg);
}

/* The row of an exponent slot, created (zeroed) if new; -1 if out of memory. */
static int
row_for(nd_wsimhash_acc *acc, int slot)
{
	int			r;

	if (acc->row_of[slot])
		return acc->row_of[slot] - 1;
	if (acc->nrows == acc->cap)
	{
		int			cap = acc->cap ? acc->cap * 2 : 4;
		void	   *p;

		if (cap > ND_WSIMHASH_SLOTS)
			cap = ND_WSIMHASH_SLOTS;
		if ((p = acc->realloc_fn(acc->rows, (size_t) cap * sizeof(*acc->rows), acc->arg)) == NULL)
			return -1;
		acc->rows = p;
		if ((p = acc->realloc_fn(acc->row_adds, (size_t) cap * sizeof(uint64_t), acc->arg)) == NULL)
			return -1;
		acc->row_adds = p;
		acc->cap = cap;
	}
	r = acc->nrows++;
	memset(acc->rows[r], 0, sizeof(acc->rows[r]));
	acc->row_adds[r] = 0;
	acc->row_of[slot] = (uint16_t) (r + 1);
	return r;
}

/* Carries row `slot` into the next one (see ROW_MAX_ADDS). */
static bool
normalize_row(nd_wsimhash_acc *acc, int slot)
{
	int			r = acc->row_of[slot] - 1;
	int			up;

	if (slot + 1 >= ND_WSIMHASH_SLOTS)
		return false;			/* unreachable: 2^64 features */
	if ((up = row_for(acc, slot + 1)) < 0)
		return false;
	for (int b = 0; b < 64; b++)
	{
		int64_t		v = acc->rows[r][b];
		int64_t		q = v >> 1;	/* floor */

		acc->rows[r][b] = v - 2 * q;
		acc->rows[up][b] += q;
	}
	acc->row_adds[up] += acc->row_adds[r] / 2 + 1;
	acc->row_adds[r] = 1;
	return true;
}

bool
nd_wsimhash_add(nd_wsimhash_acc *acc, uint64_t feature, float weight)
{
	uint32_t	bits;
	uint32_t	e;
	int64_t		m;
	int			slot,
				r;

	if (weight == 0.0f)
		return true;
	memcpy(&bits, &weight, sizeof(bits));
	e = (bits >> 23) & 0xFF;
	m = bits & 0x7FFFFF;
	if (e != 0)
		m |= 0x800000;			/* normal: the implicit bit */
	else
		e = 1;					/* subnormal: the smallest exponent */
	if (bits >> 31)
		m = -m;
	slot = (int) e - 1;			/* slot 0 is 2^-149 */
	if ((r = row_for(acc, slot)) < 0)
		return false;
	if (acc->row_adds[r] >= ROW_MAX_ADDS)
	{
		if (!normalize_row(acc, slot))
			return false;
		r = acc->row_of[slot] - 1;
	}
	for (int i = 0; i < 64; i++)
		acc->rows[r][i] += ((feature >> i) & 1) ? m : -m;
	acc->row_adds[r]++;
	acc->n++;
	return true;
}

bool
nd_wsimhash_load_row(nd_wsimhash_acc *acc, int slot, const int64_t sums[64], uint64_t adds)
{
	int			r;

	if (slot < 0 || slot >= ND_WSIMHASH_SLOTS || (r = row_for(acc, slot)) < 0)
		return false;
	if (acc->row_adds[r] + adds >= ROW_MAX_ADDS)
	{
		if (!normalize_row(acc, slot))
			return false;
		r = acc->row_of[slot] - 1;
		if (adds >= ROW_MAX_ADDS)
			return false;		/* not a row this code wrote */
	}
	for (int i = 0; i < 64; i++)
		acc->rows[r][i] += sums[i];
	acc->row_adds[r] += adds;
	return true;
}

int
nd_wsimhash_row_slot(const nd_wsimhash_acc *acc, int row)
{
	for (int s = 0; s < ND_WSIMHASH_SLOTS; s++)
		if (acc->row_of[s] == row + 1)
			return s;
	return -1;
}

bool
nd_wsimhash_merge(nd_wsimhash_acc *into, const nd_wsimhash_acc *from)
{
	for (int s = 0; s < ND_WSIMHASH_SLOTS; s++)
	{
		int			r = from->row_of[s] - 1;

		if (r >= 0 && !nd_wsimhash_load_row(into, s, from->rows[r], from->row_adds[r]))
			return false;
	}
	into->n += from->n;
	return true;
}

/*
 * Bit b is 1 when its exact vote V = sum over slots s of rows[s][b] * 2^s
 * (in units of 2^-149) is positive.  Walking the slots upwards with a
 * carry, t = row + carry, r = t mod 2, carry = floor(t / 2), leaves V =
 * carry * 2^S + R with 0 <= R < 2^S, R the sum of the r's: V > 0 iff carry
 * > 0, or carry = 0 and some r is 1.
 */
bool
nd_wsimhash_result(const nd_wsimhash_acc *acc, uint64_t *fingerprint)
{
	uint64_t	fp = 0;
	int			lo = ND_WSIMHASH_SLOTS,
				hi = -1;

	for (int s = 0; s < ND_WSIMHASH_SLOTS; s++)
		if (acc->row_of[s])
		{
			lo = s < lo ? s : lo;
			hi = s;
		}
	for (int b = 0; b < 64 && hi >= 0; b++)
	{
		int64_t		carry = 0;
		bool		low_bits = false;

		for (int s = lo; s <= hi; s++)
		{
			int64_t		t = carry + (acc->row_of[s] ? acc->rows[acc->row_of[s] - 1][b] : 0);

			low_bits |= (t & 1) != 0;
			carry = t >> 1;
		}
		if (carry > 0 || (carry == 0 && low_bits))
			fp |= (uint64_t) 1 << b;
	}
	*fingerprint = fp;
	return acc->n > 0;
}
