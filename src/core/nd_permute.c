/*-------------------------------------------------------------------------
 *
 * nd_permute.c
 *		Block layout, rotations and probe enumeration of the permuted
 *		tables (see nd_permute.h).
 *
 *-------------------------------------------------------------------------
 */
#include "nd_permute.h"

void
nd_layout_init(nd_layout *l, int nblocks)
{
	int			start = 0;

	l->nblocks = nblocks;
	for (int i = 0; i < ND_PERMUTE_MAX_BLOCKS; i++)
	{
		int			w = 0;

		if (i < nblocks)
			w = 64 / nblocks + (i < 64 % nblocks ? 1 : 0);
		l->width[i] = (uint8_t) w;
		l->start[i] = (uint8_t) (i < nblocks ? start : 0);
		start += w;
	}
}

void
nd_layout_init_one(nd_layout *l, int nblocks, int block)
{
	nd_layout	cut;

	nd_layout_init(&cut, nblocks);
	nd_layout_init(l, 1);
	l->width[0] = cut.width[block];
	l->start[0] = cut.start[block];
}

int
nd_probe_radius(const nd_layout *l, int radius, int table)
{
	int			t,
				s;

	if (radius < 0)
		return -1;
	t = radius / l->nblocks;
	s = radius % l->nblocks;
	return table <= s ? t : t - 1;
}

uint64_t
nd_ball_volume(int width, int d)
{
	uint64_t	binom = 1;		/* C(width, k) */
	uint64_t	sum = 0;

	if (d > width)
		d = width;
	for (int k = 0; k <= d; k++)
	{
		sum += binom;
		/* C(w, k+1) = C(w, k) * (w - k) / (k + 1), exact in this order */
		binom = binom * (uint64_t) (width - k) / (uint64_t) (k + 1);
	}
	return sum;
}

uint64_t
nd_probe_count(const nd_layout *l, int radius)
{
	uint64_t	n = 0;

	for (int i = 0; i < l->nblocks; i++)
		n += nd_ball_volume(l->width[i], nd_probe_radius(l, radius, i));
	return n;
}

void
nd_ball_iter_init(nd_ball_iter *it, uint32_t center, int width, int maxdist)
{
	it->center = center;
	it->width = width;
	it->maxdist = maxdist < width ? maxdist : width;
	it->dist = 0;
	it->flips = 0;
	it->done = maxdist < 0;
}

/*
 * Within one distance d the flip sets are the w-bit masks of d set bits, in
 * increasing order (Gosper's hack); then d grows.
 */
bool
nd_ball_iter_next(nd_ball_iter *it, uint32_t *value)
{
	if (it->done)
		return false;
	*value = it->center ^ (uint32_t) it->flips;

	if (it->dist > 0)
	{
		uint64_t	low = it->flips & (~it->flips + 1);
		uint64_t	ripple = it->flips + low;

		it->flips = (((ripple ^ it->flips) >> 2) / low) | ripple;
		if (it->flips < ((uint64_t) 1 << it->width))
			return true;
	}
	/* next distance */
	it->dist++;
	if (it->dist > it->maxdist)
		it->done = true;
	else
		it->flips = ((uint64_t) 1 << it->dist) - 1;
	return true;
}
