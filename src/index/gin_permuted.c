/*-------------------------------------------------------------------------
 *
 * gin_permuted.c
 *		GIN operator class simhash64_gin_ops: Hamming radius search
 *		(sh <@ hamming_ball(q, r)) with permuted tables.
 *
 * The 64 bits are cut into m blocks (option `blocks`), and every fingerprint
 * is stored once per block ("table"), rotated so that the block leads.  A
 * radius search probes, in each table, the key ranges whose leading block is
 * close enough to the query's block that the pigeonhole principle allows a
 * match (nd_probe_radius() in src/core/nd_permute.c), and comparePartial
 * checks the distance of every key in those ranges.
 *
 * A key is 8 bytes, stored as a simhash64: the table number in the top
 * ceil(log2(m)) bits, then the rotated code without its last ceil(log2(m))
 * bits.  Sixteen-byte keys (table, whole code) would make the index exact,
 * but GIN stores every key in a tuple of its own, and those keys made the
 * index over 50% larger (doc/index-gin.md has the numbers).  The dropped
 * bits make comparePartial's distance a lower bound, so the index returns
 * a superset (in practice almost never larger) and the heap recheck, which
 * costs one popcount per row, makes the result exact.
 *
 * See doc/index-gin.md.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/gin.h"
#include "access/reloptions.h"
#include "access/stratnum.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"

#include "core/nd_permute.h"
#include "index/simhash_gin.h"
#include "type/hamming_ball.h"
#include "type/simhash64.h"

/* Strategies */
#define SIMHASH_GIN_WITHIN_STRATEGY		1	/* simhash64 <@ hamming_ball */
#define SIMHASH_GIN_EQUAL_STRATEGY		2	/* simhash64 = simhash64 */
#define SIMHASH_GIN_WITHIN_BLOCK_STRATEGY	3	/* simhash64 <@ hamming_block_ball
												 * (0.4 on) */

/* extractQuery reads a block ball as its ball: the fields it reads agree */
StaticAssertDecl(offsetof(HammingBlockBall, center) == offsetof(HammingBall, center) &&
				 offsetof(HammingBlockBall, radius) == offsetof(HammingBall, radius),
				 "a block ball begins as a ball");

/* The block layout and key format of one index */
typedef struct SimhashGinLayout
{
	nd_layout	blocks;
	int			tagbits;		/* bits of the table number in a key */
} SimhashGinLayout;

/*
 * What comparePartial needs besides the probe's own key: the query as
 * stored in the probed table, and how many leading key bits (table number
 * and block value) every key of the probe's range shares with the probe.
 */
typedef struct SimhashGinProbe
{
	uint64		query;			/* key of the query code, table bits zero */
	uint64		code_mask;		/* the code bits of a key */
	int32		radius;
	int32		span;			/* leading bits that must equal the probe's */
} SimhashGinProbe;

static void
gin_layout(FunctionCallInfo fcinfo, SimhashGinLayout *l)
{
	int			blocks = SIMHASH_GIN_DEFAULT_BLOCKS;

	if (PG_HAS_OPCLASS_OPTIONS())
		blocks = ((SimhashGinOptions *) PG_GET_OPCLASS_OPTIONS())->blocks;
	nd_layout_init(&l->blocks, blocks);
	/* table numbers 0 .. blocks-1; blocks >= 2, so at least one bit */
	l->tagbits = pg_leftmost_one_pos32((uint32) (blocks - 1)) + 1;
}

/* The key of a code as table `table` stores it (code already rotated). */
static inline uint64
gin_key(const SimhashGinLayout *l, int table, uint64 rotated)
{
	return ((uint64) table << (64 - l->tagbits)) | (rotated >> l->tagbits);
}

static SimhashGinProbe *
make_probe(const SimhashGinLayout *l, int table, const HammingBall *ball, int width)
{
	SimhashGinProbe *probe = palloc(sizeof(SimhashGinProbe));

	probe->query = gin_key(l, 0, nd_permute(&l->blocks, table, ball->center));
	probe->code_mask = PG_UINT64_MAX >> l->tagbits;
	probe->radius = ball->radius;
	probe->span = l->tagbits + width;
	return probe;
}

/* GIN support 2: one key per table */
PG_FUNCTION_INFO_V1(simhash64_gin_extract_value);
Datum
simhash64_gin_extract_value(PG_FUNCTION_ARGS)
{
	simhash64	code = PG_GETARG_SIMHASH64(0);
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	SimhashGinLayout l;
	Datum	   *entries;

	gin_layout(fcinfo, &l);
	entries = palloc(sizeof(Datum) * l.blocks.nblocks);
	for (int i = 0; i < l.blocks.nblocks; i++)
		entries[i] = Simhash64GetDatum(gin_key(&l, i, nd_permute(&l.blocks, i, code)));
	*nkeys = l.blocks.nblocks;
	PG_RETURN_POINTER(entries);
}

/*
 * GIN support 3.  For <@: a partial-match probe for every (table, block
 * value) of the probe plan, each starting at the smallest key with that
 * block value; or, when that would be too many probes, one probe over all
 * of table 0.  For =: the key of the code in table 0.
 */
PG_FUNCTION_INFO_V1(simhash64_gin_extract_query);
Datum
simhash64_gin_extract_query(PG_FUNCTION_ARGS)
{
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	bool	  **pmatch = (bool **) PG_GETARG_POINTER(3);
	Pointer   **extra_data = (Pointer **) PG_GETARG_POINTER(4);
	SimhashGinLayout l;
	HammingBall *ball;
	uint64		nprobes;
	Datum	   *entries;
	int			n = 0;

	gin_layout(fcinfo, &l);

	if (strategy == SIMHASH_GIN_EQUAL_STRATEGY)
	{
		entries = palloc(sizeof(Datum));
		entries[0] = Simhash64GetDatum(gin_key(&l, 0, nd_permute(&l.blocks, 0, PG_GETARG_SIMHASH64(0))));
		*nkeys = 1;
		PG_RETURN_POINTER(entries);
	}
	if (strategy != SIMHASH_GIN_WITHIN_STRATEGY &&
		strategy != SIMHASH_GIN_WITHIN_BLOCK_STRATEGY)
		elog(ERROR, "unrecognized strategy number: %d", strategy);

	/* a block ball's probes are its ball's; the block is rechecked */
	ball = PG_GETARG_HAMMING_BALL_P(0);
	if (ball->radius < 0)
	{
		/* nothing is within a negative radius: no keys, no match */
		*nkeys = 0;
		PG_RETURN_POINTER(NULL);
	}

	nprobes = ball->radius >= HAMMING_BALL_ALL ? PG_UINT64_MAX :
		nd_probe_count(&l.blocks, ball->radius);

	if (nprobes > SIMHASH_GIN_MAX_PROBES)
	{
		/*
		 * Read table 0 from its first key to its last, comparePartial
		 * checking every code: one table, where GIN_SEARCH_MODE_ALL would
		 * read all of them.
		 */
		entries = palloc(sizeof(Datum));
		*pmatch = palloc(sizeof(bool));
		*extra_data = palloc(sizeof(Pointer));
		entries[0] = Simhash64GetDatum(gin_key(&l, 0, 0));
		(*pmatch)[0] = true;
		(*extra_data)[0] = (Pointer) make_probe(&l, 0, ball, 0);
		*nkeys = 1;
		PG_RETURN_POINTER(entries);
	}

	entries = palloc(sizeof(Datum) * nprobes);
	*pmatch = palloc(sizeof(bool) * nprobes);
	*extra_data = palloc(sizeof(Pointer) * nprobes);

	for (int i = 0; i < l.blocks.nblocks; i++)
	{
		int			d = nd_probe_radius(&l.blocks, ball->radius, i);
		SimhashGinProbe *probe;
		nd_ball_iter it;
		uint32		value;

		if (d < 0)
			continue;

		/* shared by all probes of table i */
		probe = make_probe(&l, i, ball, l.blocks.width[i]);
		nd_ball_iter_init(&it, nd_block(&l.blocks, i, ball->center), l.blocks.width[i], d);
		while (nd_ball_iter_next(&it, &value))
		{
			CHECK_FOR_INTERRUPTS();
			Assert(n < nprobes);
			entries[n] = Simhash64GetDatum(gin_key(&l, i, nd_block_prefix(&l.blocks, i, value)));
			(*pmatch)[n] = true;
			(*extra_data)[n] = (Pointer) probe;
			n++;
		}
	}
	Assert(n == nprobes);
	*nkeys = n;
	PG_RETURN_POINTER(entries);
}

/*
 * GIN support 5.  GIN visits the keys in order from the probe's key on:
 * >0 ends the probe (the key left its table or block value), 0 is a match,
 * <0 skips the key.  Rotation preserves Hamming distance, so the stored
 * code is compared with the query rotated the same way.
 */
PG_FUNCTION_INFO_V1(simhash64_gin_compare_partial);
Datum
simhash64_gin_compare_partial(PG_FUNCTION_ARGS)
{
	uint64		start = PG_GETARG_SIMHASH64(0);
	uint64		key = PG_GETARG_SIMHASH64(1);
	SimhashGinProbe *probe = (SimhashGinProbe *) PG_GETARG_POINTER(3);

	if ((key ^ start) >> (64 - probe->span) != 0)
		PG_RETURN_INT32(1);
	PG_RETURN_INT32(pg_popcount64((key ^ probe->query) & probe->code_mask) <= probe->radius ? 0 : -1);
}

/*
 * GIN support 4.  Any one matching probe makes a candidate; the bits a key
 * leaves out are checked on the heap.
 */
PG_FUNCTION_INFO_V1(simhash64_gin_consistent);
Datum
simhash64_gin_consistent(PG_FUNCTION_ARGS)
{
	bool	   *check = (bool *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(5);

	*recheck = true;
	for (int i = 0; i < nkeys; i++)
		if (check[i])
			PG_RETURN_BOOL(true);
	PG_RETURN_BOOL(false);
}

/* GIN support 6: never GIN_TRUE, since a match still needs the recheck */
PG_FUNCTION_INFO_V1(simhash64_gin_triconsistent);
Datum
simhash64_gin_triconsistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);

	for (int i = 0; i < nkeys; i++)
		if (check[i] != GIN_FALSE)
			PG_RETURN_GIN_TERNARY_VALUE(GIN_MAYBE);
	PG_RETURN_GIN_TERNARY_VALUE(GIN_FALSE);
}

/* GIN support 7 */
PG_FUNCTION_INFO_V1(simhash64_gin_options);
Datum
simhash64_gin_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	init_local_reloptions(relopts, sizeof(SimhashGinOptions));
	add_local_int_reloption(relopts, "blocks",
							"number of blocks the fingerprint is cut into (index entries per row)",
							SIMHASH_GIN_DEFAULT_BLOCKS,
							ND_PERMUTE_MIN_BLOCKS, ND_PERMUTE_MAX_BLOCKS,
							offsetof(SimhashGinOptions, blocks));
	PG_RETURN_VOID();
}
