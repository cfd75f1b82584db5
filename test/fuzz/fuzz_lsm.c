/*
 * libFuzzer harness for the compaction policy (nd_lsm.c): arbitrary run
 * sizes (empty, tiny, powers of two, near UINT64_MAX, in any order) at
 * arbitrary units, fanouts and caps.  Checks that k is in [0, n], that the
 * index then holds at most max_runs runs, and that k equals a reference
 * that restates the rule with 128-bit sums and multiplied-up tiers (the
 * core saturates its sums and divides).
 *
 * Input: byte 0 picks the fanout (2..16 mostly, sometimes up to INT_MAX),
 * byte 1 max_runs (1..40, or INT_MAX), bytes 2-3 the unit, bytes 4-5 the
 * incoming entries, then 2 bytes per run: a mantissa byte and a byte whose
 * low 6 bits shift it, bit 6 fills the bits below with ones and bit 7
 * makes it UINT64_MAX - mantissa.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "nd_lsm.h"

#define MAX_RUNS 512

static uint64_t sizes[MAX_RUNS];

static uint64_t
decode_size(const uint8_t *p)
{
	int			e = p[1] & 63;
	uint64_t	v = (uint64_t) p[0] << e;

	if (p[1] & 128)
		return UINT64_MAX - p[0];
	if (p[1] & 64)
		v |= ((uint64_t) 1 << e) - 1;
	return v;
}

static int
tier_ref(unsigned __int128 size, uint64_t unit, int fanout)
{
	unsigned __int128 p = unit;
	int			t = 0;

	if (size > UINT64_MAX)
		size = UINT64_MAX;		/* the core's sums saturate */
	while (p * (unsigned) fanout <= size)
	{
		p *= (unsigned) fanout;
		t++;
	}
	return t;
}

/* the rule as nd_lsm.h states it */
static int
pick_ref(int n, uint64_t incoming, uint64_t unit, int fanout, int max_runs)
{
	unsigned __int128 s = incoming;
	int			k = 0;

	for (;;)
	{
		int			t = tier_ref(s, unit, fanout);
		int			c = 0;
		unsigned __int128 sum = 0;

		while (k + c < n && tier_ref(sizes[n - 1 - k - c], unit, fanout) <= t)
		{
			sum += sizes[n - 1 - k - c];
			c++;
		}
		if (c + 1 < fanout)
			break;
		s += sum;
		k += c;
	}
	while ((int64_t) n - k + 1 > max_runs && k < n)
		k++;
	if (incoming == 0 && k == 1)
		k = 0;
	return k;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int			fanout,
				max_runs,
				n = 0,
				k;
	uint64_t	unit,
				incoming;

	if (size < 6)
		return 0;
	if (data[0] < 240)
		fanout = 2 + data[0] % 15;
	else
		fanout = data[0] == 255 ? INT_MAX : 2 + ((data[0] - 240) << 27);
	max_runs = data[1] == 255 ? INT_MAX : 1 + data[1] % 40;
	unit = decode_size(data + 2);
	if (unit == 0)
		unit = 1;
	incoming = decode_size(data + 4);
	for (size_t p = 6; p + 2 <= size && n < MAX_RUNS; p += 2)
		sizes[n++] = decode_size(data + p);

	k = nd_lsm_pick(sizes, n, incoming, unit, fanout, max_runs);
	if (k < 0 || k > n)
		abort();
	/* runs left, and the new one unless nothing is merged or flushed */
	if (n - k + (k > 0 || incoming > 0) > max_runs)
		abort();
	if (k != pick_ref(n, incoming, unit, fanout, max_runs))
		abort();
	return 0;
}
