/*-------------------------------------------------------------------------
 *
 * gin_permuted.c
 *		GIN operator class simhash64_gin_ops: exact Hamming radius search
 *		(sh <@ hamming_ball(q, r)) with permuted tables.
 *
 * Every fingerprint is stored once per block ("table"), rotated so that the
 * block leads; a key is (table, rotated code).  A radius search probes, in
 * each table, the key ranges whose leading block is close enough to the
 * query's block that the pigeonhole principle allows a match (the plan is
 * nd_probe_radius() in src/core/nd_permute.c), and comparePartial checks the
 * full 64-bit distance of every key in those ranges, so the index returns
 * exactly the rows in the ball and no heap recheck is needed.
 *
 * See doc/index-gin.md.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/gin.h"
#include "access/reloptions.h"
#include "access/stratnum.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"

#include "hamming_ball.h"
#include "nd_permute.h"
#include "simhash64.h"

/* Strategies */
#define SIMHASH_GIN_WITHIN_STRATEGY		1	/* simhash64 <@ hamming_ball */
#define SIMHASH_GIN_EQUAL_STRATEGY		2	/* simhash64 = simhash64 */

#define SIMHASH_GIN_DEFAULT_BLOCKS		4

/*
 * Above this many probes, one scan of a whole table (every key checked by
 * comparePartial) is cheaper than probing; see doc/index-gin.md for the
 * measurement.
 */
#define SIMHASH_GIN_MAX_PROBES			1000

/* Opclass options (WITH (blocks = n)) */
typedef struct SimhashGinOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			blocks;
} SimhashGinOptions;

/*
 * An index key, type simhash64_gin_key: the fingerprint as stored in one
 * table.  Ordered by table, then by the rotated code as unsigned, so that
 * the codes of one table sharing a leading block are one contiguous range.
 */
typedef struct SimhashGinKey
{
	int32		table;
	int32		pad;			/* always 0 */
	uint64		code;			/* rotated: block `table` leads */
} SimhashGinKey;

#define DatumGetSimhashGinKeyP(X)	((SimhashGinKey *) DatumGetPointer(X))
#define PG_GETARG_SIMHASH_GIN_KEY_P(n) DatumGetSimhashGinKeyP(PG_GETARG_DATUM(n))

/*
 * What comparePartial needs besides the probe's own key (which gives the
 * table and the block value): the query rotated like that table, and the
 * radius.  width 0 means the probe takes the whole table.
 */
typedef struct SimhashGinProbe
{
	uint64		query;			/* rotated like the probed table */
	int32		radius;
	int32		width;			/* bits of the block value to stay within */
} SimhashGinProbe;

static int
gin_blocks(FunctionCallInfo fcinfo)
{
	if (PG_HAS_OPCLASS_OPTIONS())
		return ((SimhashGinOptions *) PG_GET_OPCLASS_OPTIONS())->blocks;
	return SIMHASH_GIN_DEFAULT_BLOCKS;
}

static SimhashGinKey *
make_key(SimhashGinKey *key, int table, uint64 code)
{
	key->table = table;
	key->pad = 0;
	key->code = code;
	return key;
}

/* ---------------------------------------------------------------------
 * The key type: I/O and comparison
 * ---------------------------------------------------------------------
 */

/* Text form: (table,rotated code in 16 hex digits), e.g. (2,0123456789abcdef) */
PG_FUNCTION_INFO_V1(simhash64_gin_key_in);
Datum
simhash64_gin_key_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	SimhashGinKey *key = palloc(sizeof(SimhashGinKey));
	int			table;
	char		hex[17];
	int			len = 0;

	if (sscanf(str, " (%d , %16[0-9a-fA-F] ) %n", &table, hex, &len) < 2 ||
		str[len] != '\0' || len == 0 || strlen(hex) != 16 ||
		table < 0 || table >= ND_PERMUTE_MAX_BLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"", "simhash64_gin_key", str),
				 errdetail("A key is written as (table,code): a table number from 0 to %d and 16 hexadecimal digits.",
						   ND_PERMUTE_MAX_BLOCKS - 1)));
	make_key(key, table, DatumGetSimhash64(DirectFunctionCall1(simhash64_in, CStringGetDatum(hex))));
	PG_RETURN_POINTER(key);
}

PG_FUNCTION_INFO_V1(simhash64_gin_key_out);
Datum
simhash64_gin_key_out(PG_FUNCTION_ARGS)
{
	SimhashGinKey *key = PG_GETARG_SIMHASH_GIN_KEY_P(0);

	PG_RETURN_CSTRING(psprintf("(%d,%016llx)", key->table, (unsigned long long) key->code));
}

static inline int
key_cmp(const SimhashGinKey *a, const SimhashGinKey *b)
{
	if (a->table != b->table)
		return a->table < b->table ? -1 : 1;
	if (a->code != b->code)
		return a->code < b->code ? -1 : 1;
	return 0;
}

/* GIN support 1 */
PG_FUNCTION_INFO_V1(simhash64_gin_key_cmp);
Datum
simhash64_gin_key_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(key_cmp(PG_GETARG_SIMHASH_GIN_KEY_P(0), PG_GETARG_SIMHASH_GIN_KEY_P(1)));
}

/* ---------------------------------------------------------------------
 * GIN support functions
 * ---------------------------------------------------------------------
 */

/* GIN support 2: one key per table */
PG_FUNCTION_INFO_V1(simhash64_gin_extract_value);
Datum
simhash64_gin_extract_value(PG_FUNCTION_ARGS)
{
	simhash64	code = PG_GETARG_SIMHASH64(0);
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	nd_layout	layout;
	SimhashGinKey *keys;
	Datum	   *entries;

	nd_layout_init(&layout, gin_blocks(fcinfo));
	keys = palloc(sizeof(SimhashGinKey) * layout.nblocks);
	entries = palloc(sizeof(Datum) * layout.nblocks);
	for (int i = 0; i < layout.nblocks; i++)
		entries[i] = PointerGetDatum(make_key(&keys[i], i, nd_permute(&layout, i, code)));
	*nkeys = layout.nblocks;
	PG_RETURN_POINTER(entries);
}

/* GIN support 3 */
PG_FUNCTION_INFO_V1(simhash64_gin_extract_query);
Datum
simhash64_gin_extract_query(PG_FUNCTION_ARGS)
{
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	bool	  **pmatch = (bool **) PG_GETARG_POINTER(3);
	Pointer   **extra_data = (Pointer **) PG_GETARG_POINTER(4);
	nd_layout	layout;
	HammingBall *ball;
	uint64		nprobes;
	SimhashGinKey *keys;
	Datum	   *entries;
	int			n = 0;

	nd_layout_init(&layout, gin_blocks(fcinfo));

	if (strategy == SIMHASH_GIN_EQUAL_STRATEGY)
	{
		/* The code itself, as table 0 stores it (unrotated). */
		keys = palloc(sizeof(SimhashGinKey));
		entries = palloc(sizeof(Datum));
		entries[0] = PointerGetDatum(make_key(keys, 0, PG_GETARG_SIMHASH64(0)));
		*nkeys = 1;
		PG_RETURN_POINTER(entries);
	}
	if (strategy != SIMHASH_GIN_WITHIN_STRATEGY)
		elog(ERROR, "unrecognized strategy number: %d", strategy);

	ball = PG_GETARG_HAMMING_BALL_P(0);
	if (ball->radius < 0)
	{
		/* Nothing is within a negative radius: no keys, no match. */
		*nkeys = 0;
		PG_RETURN_POINTER(NULL);
	}

	nprobes = ball->radius >= HAMMING_BALL_ALL ? PG_UINT64_MAX :
		nd_probe_count(&layout, ball->radius);

	if (nprobes > SIMHASH_GIN_MAX_PROBES)
	{
		/*
		 * Too many probes: scan table 0 from its first key to its last and
		 * let comparePartial check every code.  Still exact, and it reads
		 * one table where GIN_SEARCH_MODE_ALL would read all of them.
		 */
		SimhashGinProbe *probe = palloc(sizeof(SimhashGinProbe));

		probe->query = nd_permute(&layout, 0, ball->center);
		probe->radius = ball->radius;
		probe->width = 0;
		keys = palloc(sizeof(SimhashGinKey));
		entries = palloc(sizeof(Datum));
		*pmatch = palloc(sizeof(bool));
		*extra_data = palloc(sizeof(Pointer));
		entries[0] = PointerGetDatum(make_key(keys, 0, 0));
		(*pmatch)[0] = true;
		(*extra_data)[0] = (Pointer) probe;
		*nkeys = 1;
		PG_RETURN_POINTER(entries);
	}

	keys = palloc(sizeof(SimhashGinKey) * nprobes);
	entries = palloc(sizeof(Datum) * nprobes);
	*pmatch = palloc(sizeof(bool) * nprobes);
	*extra_data = palloc(sizeof(Pointer) * nprobes);

	for (int i = 0; i < layout.nblocks; i++)
	{
		int			d = nd_probe_radius(&layout, ball->radius, i);
		SimhashGinProbe *probe;
		nd_ball_iter it;
		uint32		value;

		if (d < 0)
			continue;

		/* shared by all probes of table i */
		probe = palloc(sizeof(SimhashGinProbe));
		probe->query = nd_permute(&layout, i, ball->center);
		probe->radius = ball->radius;
		probe->width = layout.width[i];

		nd_ball_iter_init(&it, nd_block(&layout, i, ball->center), layout.width[i], d);
		while (nd_ball_iter_next(&it, &value))
		{
			CHECK_FOR_INTERRUPTS();
			Assert(n < nprobes);
			entries[n] = PointerGetDatum(make_key(&keys[n], i, nd_block_prefix(&layout, i, value)));
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
 * GIN support 5.  Keys are visited in order from the probe's key on:
 * >0 once they leave the probe's (table, block value) range, 0 for a code
 * within the radius, <0 for one outside it.  Rotation preserves distance,
 * so the rotated key is compared with the query rotated the same way.
 */
PG_FUNCTION_INFO_V1(simhash64_gin_compare_partial);
Datum
simhash64_gin_compare_partial(PG_FUNCTION_ARGS)
{
	SimhashGinKey *start = PG_GETARG_SIMHASH_GIN_KEY_P(0);
	SimhashGinKey *key = PG_GETARG_SIMHASH_GIN_KEY_P(1);
	SimhashGinProbe *probe = (SimhashGinProbe *) PG_GETARG_POINTER(3);

	if (key->table != start->table)
		PG_RETURN_INT32(1);
	if (probe->width > 0 &&
		(key->code ^ start->code) >> (64 - probe->width) != 0)
		PG_RETURN_INT32(1);
	PG_RETURN_INT32(pg_popcount64(key->code ^ probe->query) <= probe->radius ? 0 : -1);
}

/*
 * GIN support 4.  Every matching entry is an exact hit (comparePartial
 * checked the whole code, or for = the key is the whole code), so any one
 * of them is enough and no recheck is needed.
 */
PG_FUNCTION_INFO_V1(simhash64_gin_consistent);
Datum
simhash64_gin_consistent(PG_FUNCTION_ARGS)
{
	bool	   *check = (bool *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(5);

	*recheck = false;
	for (int i = 0; i < nkeys; i++)
		if (check[i])
			PG_RETURN_BOOL(true);
	PG_RETURN_BOOL(false);
}

/* GIN support 6 */
PG_FUNCTION_INFO_V1(simhash64_gin_triconsistent);
Datum
simhash64_gin_triconsistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	GinTernaryValue result = GIN_FALSE;

	for (int i = 0; i < nkeys; i++)
	{
		if (check[i] == GIN_TRUE)
			PG_RETURN_GIN_TERNARY_VALUE(GIN_TRUE);
		if (check[i] == GIN_MAYBE)
			result = GIN_MAYBE;
	}
	PG_RETURN_GIN_TERNARY_VALUE(result);
}

/* GIN support 7: WITH (blocks = n) */
PG_FUNCTION_INFO_V1(simhash64_gin_options);
Datum
simhash64_gin_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	init_local_reloptions(relopts, sizeof(SimhashGinOptions));
	add_local_int_reloption(relopts, "blocks",
							"number of blocks (index entries per row)",
							SIMHASH_GIN_DEFAULT_BLOCKS,
							ND_PERMUTE_MIN_BLOCKS, ND_PERMUTE_MAX_BLOCKS,
							offsetof(SimhashGinOptions, blocks));
	PG_RETURN_VOID();
}
