/*-------------------------------------------------------------------------
 *
 * hamming_ball.c
 *		The hamming_ball and hamming_block_ball types and their containment
 *		operators:
 *		sh <@ hamming_ball(q, r)  and  hamming_ball(q, r) @> sh.
 *
 * Text form: (center,radius), e.g. (00ff00ff00ff00ff,3).
 *
 * And the block ball, hamming_block_ball: sh <@ hamming_block_ball(q, r,
 * b, m), the search of one copy of a block-sharded layout.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"

#include "type/hamming_ball.h"

/*
 * A ball's radius as text or binary input: from -1 (the empty ball, as
 * hamming_ball_out writes it) to 64.  0.3 clamped any other value.
 */
static void
check_stored_radius(long radius)
{
	if (radius < HAMMING_BALL_EMPTY || radius > HAMMING_BALL_ALL)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("hamming_ball radius %ld is out of range", radius),
				 errdetail("A hamming_ball's radius is between %d (the empty ball) and %d (every fingerprint).",
						   HAMMING_BALL_EMPTY, HAMMING_BALL_ALL)));
}

static HammingBall *
make_ball(uint64 center, int64 radius)
{
	HammingBall *ball = palloc(sizeof(HammingBall));

	ball->center = center;
	ball->radius = hamming_ball_clamp_radius(radius);
	ball->pad = 0;
	return ball;
}

/*
 * hamming_ball(center simhash64, radius int4) as 0.1 to 0.3 declared it: a
 * radius below 0 made the empty ball, one above 64 the full one.  Kept for
 * their scripts; 0.3.1's declaration names hamming_ball_make_checked.
 */
PG_FUNCTION_INFO_V1(hamming_ball_make);
Datum
hamming_ball_make(PG_FUNCTION_ARGS)
{
	PG_RETURN_HAMMING_BALL_P(make_ball(PG_GETARG_SIMHASH64(0), PG_GETARG_INT32(1)));
}

/*
 * hamming_ball(center simhash64, radius int4): 22023 for a radius outside
 * 0..64, which no distance between 64-bit fingerprints needs.  The planner
 * clamps the radii it builds balls from (radius_support.c), as within() and
 * `<~> <= r` take any.
 */
PG_FUNCTION_INFO_V1(hamming_ball_make_checked);
Datum
hamming_ball_make_checked(PG_FUNCTION_ARGS)
{
	int32		radius = PG_GETARG_INT32(1);

	hamming_check_radius("radius", radius);
	PG_RETURN_HAMMING_BALL_P(make_ball(PG_GETARG_SIMHASH64(0), radius));
}

/*
 * The text form of a ball: "(", 16 hexadecimal digits, then `nints`
 * integers each after a comma, ")", blanks allowed around each part.
 * False on a syntax error.
 */
static bool
parse_ball(const char *str, uint64 *center, long *ints, int nints)
{
	const char *p = str;
	char		hex[17];
	int			n = 0;

	while (isspace((unsigned char) *p))
		p++;
	if (*p++ != '(')
		return false;
	while (isspace((unsigned char) *p))
		p++;
	while (n < 16 && isxdigit((unsigned char) *p))
		hex[n++] = *p++;
	hex[n] = '\0';
	if (n != 16)
		return false;
	*center = DatumGetSimhash64(DirectFunctionCall1(simhash64_in, CStringGetDatum(hex)));
	for (int i = 0; i < nints; i++)
	{
		char	   *end;

		while (isspace((unsigned char) *p))
			p++;
		if (*p++ != ',')
			return false;
		errno = 0;
		ints[i] = strtol(p, &end, 10);
		if (end == p || errno != 0 || ints[i] < INT_MIN || ints[i] > INT_MAX)
			return false;
		p = end;
	}
	while (isspace((unsigned char) *p))
		p++;
	if (*p++ != ')')
		return false;
	while (isspace((unsigned char) *p))
		p++;
	return *p == '\0';
}

PG_FUNCTION_INFO_V1(hamming_ball_in);
Datum
hamming_ball_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	uint64		center;
	long		radius;

	if (!parse_ball(str, &center, &radius, 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"", "hamming_ball", str),
				 errdetail("A hamming_ball is written as (center,radius): 16 hexadecimal digits and an integer.")));
	check_stored_radius(radius);
	PG_RETURN_HAMMING_BALL_P(make_ball(center, radius));
}

PG_FUNCTION_INFO_V1(hamming_ball_out);
Datum
hamming_ball_out(PG_FUNCTION_ARGS)
{
	HammingBall *ball = PG_GETARG_HAMMING_BALL_P(0);

	PG_RETURN_CSTRING(psprintf("(%016llx,%d)", (unsigned long long) ball->center,
							   ball->radius));
}

PG_FUNCTION_INFO_V1(hamming_ball_recv);
Datum
hamming_ball_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	uint64		center = (uint64) pq_getmsgint64(buf);
	int32		radius = pq_getmsgint(buf, 4);

	check_stored_radius(radius);
	PG_RETURN_HAMMING_BALL_P(make_ball(center, radius));
}

PG_FUNCTION_INFO_V1(hamming_ball_send);
Datum
hamming_ball_send(PG_FUNCTION_ARGS)
{
	HammingBall *ball = PG_GETARG_HAMMING_BALL_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) ball->center);
	pq_sendint32(&buf, ball->radius);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

PG_FUNCTION_INFO_V1(hamming_ball_center);
Datum
hamming_ball_center(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH64(PG_GETARG_HAMMING_BALL_P(0)->center);
}

PG_FUNCTION_INFO_V1(hamming_ball_radius);
Datum
hamming_ball_radius(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(PG_GETARG_HAMMING_BALL_P(0)->radius);
}

/* sh <@ ball */
PG_FUNCTION_INFO_V1(simhash64_within_ball);
Datum
simhash64_within_ball(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(hamming_ball_contains(PG_GETARG_HAMMING_BALL_P(1), PG_GETARG_SIMHASH64(0)));
}

/* ball @> sh */
PG_FUNCTION_INFO_V1(hamming_ball_contains_simhash64);
Datum
hamming_ball_contains_simhash64(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(hamming_ball_contains(PG_GETARG_HAMMING_BALL_P(0), PG_GETARG_SIMHASH64(1)));
}

/*
 * a && b: each center lies within the other's ball, that is, the centers
 * are at most the smaller radius apart.  Commutative; with one radius k on
 * both sides, "within k bits" -- the predicate of the near-duplicate
 * exclusion constraint (doc/constraint.md).
 */
PG_FUNCTION_INFO_V1(hamming_ball_collides);
Datum
hamming_ball_collides(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(hamming_balls_collide(PG_GETARG_HAMMING_BALL_P(0), PG_GETARG_HAMMING_BALL_P(1)));
}

/* within(a, b, radius): hamming_distance(a, b) <= radius */
PG_FUNCTION_INFO_V1(simhash64_within);
Datum
simhash64_within(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(pg_popcount64(PG_GETARG_SIMHASH64(0) ^ PG_GETARG_SIMHASH64(1)) <=
				   PG_GETARG_INT32(2));
}

/*
 * hamming_block_ball: a ball that also agrees with its center on one block
 * (hamming_ball.h).  Text form (center,radius,block,blocks), e.g.
 * (00ff00ff00ff00ff,3,2,4).  Its radius is 0 to 64: an empty block ball
 * would only be a way to write false.
 */
static HammingBlockBall *
make_block_ball(uint64 center, int32 radius, int32 block, int32 blocks)
{
	HammingBlockBall *ball = palloc(sizeof(HammingBlockBall));

	hamming_check_radius("radius", radius);
	nd_check_block_args(block, blocks);
	ball->center = center;
	ball->radius = radius;
	ball->block = (int16) block;
	ball->blocks = (int16) blocks;
	return ball;
}

/* hamming_block_ball(center simhash64, radius int4, block int4, blocks int4) */
PG_FUNCTION_INFO_V1(hamming_block_ball_make);
Datum
hamming_block_ball_make(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(make_block_ball(PG_GETARG_SIMHASH64(0), PG_GETARG_INT32(1),
									  PG_GETARG_INT32(2), PG_GETARG_INT32(3)));
}

PG_FUNCTION_INFO_V1(hamming_block_ball_in);
Datum
hamming_block_ball_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	uint64		center;
	long		ints[3];

	if (!parse_ball(str, &center, ints, 3))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"", "hamming_block_ball", str),
				 errdetail("A hamming_block_ball is written as (center,radius,block,blocks): 16 hexadecimal digits and three integers.")));
	/* parse_ball keeps each within int32 */
	PG_RETURN_POINTER(make_block_ball(center, (int32) ints[0], (int32) ints[1], (int32) ints[2]));
}

PG_FUNCTION_INFO_V1(hamming_block_ball_out);
Datum
hamming_block_ball_out(PG_FUNCTION_ARGS)
{
	HammingBlockBall *ball = PG_GETARG_HAMMING_BLOCK_BALL_P(0);

	PG_RETURN_CSTRING(psprintf("(%016llx,%d,%d,%d)", (unsigned long long) ball->center,
							   ball->radius, ball->block, ball->blocks));
}

PG_FUNCTION_INFO_V1(hamming_block_ball_recv);
Datum
hamming_block_ball_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	uint64		center = (uint64) pq_getmsgint64(buf);
	int32		radius = pq_getmsgint(buf, 4);
	int16		block = pq_getmsgint(buf, 2);
	int16		blocks = pq_getmsgint(buf, 2);

	PG_RETURN_POINTER(make_block_ball(center, radius, block, blocks));
}

PG_FUNCTION_INFO_V1(hamming_block_ball_send);
Datum
hamming_block_ball_send(PG_FUNCTION_ARGS)
{
	HammingBlockBall *ball = PG_GETARG_HAMMING_BLOCK_BALL_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) ball->center);
	pq_sendint32(&buf, ball->radius);
	pq_sendint16(&buf, ball->block);
	pq_sendint16(&buf, ball->blocks);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* sh <@ block ball */
PG_FUNCTION_INFO_V1(simhash64_within_block_ball);
Datum
simhash64_within_block_ball(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(hamming_block_ball_contains(PG_GETARG_HAMMING_BLOCK_BALL_P(1),
											   PG_GETARG_SIMHASH64(0)));
}

/* block ball @> sh */
PG_FUNCTION_INFO_V1(hamming_block_ball_contains_simhash64);
Datum
hamming_block_ball_contains_simhash64(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(hamming_block_ball_contains(PG_GETARG_HAMMING_BLOCK_BALL_P(0),
											   PG_GETARG_SIMHASH64(1)));
}
