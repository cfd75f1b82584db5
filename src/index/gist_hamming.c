/*-------------------------------------------------------------------------
 *
 * gist_hamming.c
 *		GiST operator class for simhash64: Hamming radius search
 *		(sh <@ hamming_ball), nearest neighbours (ORDER BY sh <~> q) and
 *		equality.
 *
 * Every key is an nd_bitrange (src/core/nd_bitrange.h), stored as the
 * 16-byte type simhash64_gist_key: the AND and the OR of the codes below it.
 * A leaf holds one code (AND = OR = the code); a leaf tuple costs the same
 * 24 bytes either way, since an 8-byte key would be padded to the same size.
 * The distance from a query to the subcube the key describes is a lower
 * bound for every code below, and the exact distance at a leaf, so both
 * searches are exact with no recheck.
 *
 * The index build sorts the codes (support function 11): consecutive codes
 * in unsigned order share their leading bits, which makes a page a subcube
 * of fixed prefix bits -- for uniformly spread codes about as many fixed
 * bits as a page of that size can have.  Insertions after the build use the
 * penalty and the bit-wise page split of nd_bitrange.c; so does a build
 * WITH (buffering = on).  doc/index-gist.md has the measurements.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/gist.h"
#include "access/stratnum.h"
#include "fmgr.h"
#include "utils/sortsupport.h"

#include "type/hamming_ball.h"
#define ND_POPCOUNT64(x) pg_popcount64(x)
#include "core/nd_bitrange.h"
#include "type/simhash64.h"

/* Strategy numbers, as in the other GiST opclasses of the core */
#define SH_STRATEGY_WITHIN		RTContainedByStrategyNumber /* <@ ball */
#define SH_STRATEGY_DISTANCE	RTKNNSearchStrategyNumber	/* <~> */
#define SH_STRATEGY_EQUAL		RTEqualStrategyNumber	/* = */
#define SH_STRATEGY_COLLIDES	RTOverlapStrategyNumber /* ball && ball */
/* <@ block ball (0.4 on): past the core's numbers, which have no such search */
#define SH_STRATEGY_WITHIN_BLOCK	31

#define DatumGetBitrangeP(X)	((nd_bitrange *) DatumGetPointer(X))

StaticAssertDecl(sizeof(nd_bitrange) == 16, "simhash64_gist_key is 16 bytes");

/*
 * The key type is internal to the index: it prints (to inspect index pages)
 * but cannot be typed in.
 */
PG_FUNCTION_INFO_V1(simhash64_gist_key_in);
Datum
simhash64_gist_key_in(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot accept a value of type %s", "simhash64_gist_key")));
	PG_RETURN_NULL();
}

/* (AND,OR) of the codes, in hex */
PG_FUNCTION_INFO_V1(simhash64_gist_key_out);
Datum
simhash64_gist_key_out(PG_FUNCTION_ARGS)
{
	nd_bitrange *key = DatumGetBitrangeP(PG_GETARG_DATUM(0));

	PG_RETURN_CSTRING(psprintf("(%016llx,%016llx)", (unsigned long long) key->all,
							   (unsigned long long) key->any));
}

/* The leaf entry of one code: its key is the code's bit range. */
static GISTENTRY *
leaf_entry(GISTENTRY *entry, uint64 code)
{
	GISTENTRY  *retval = palloc(sizeof(GISTENTRY));
	nd_bitrange *key = palloc(sizeof(nd_bitrange));

	*key = nd_bitrange_of(code);
	gistentryinit(*retval, PointerGetDatum(key), entry->rel, entry->page,
				  entry->offset, false);
	return retval;
}

PG_FUNCTION_INFO_V1(gist_simhash64_compress);
Datum
gist_simhash64_compress(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);

	/* Inner keys come from union and are stored as they are */
	if (!entry->leafkey)
		PG_RETURN_POINTER(entry);
	PG_RETURN_POINTER(leaf_entry(entry, DatumGetSimhash64(entry->key)));
}

/*
 * The operator class of hamming_ball (hamming_ball_gist_ops, for the
 * near-duplicate exclusion constraint): a ball is indexed by its center;
 * its radius is not kept, so `&&` is rechecked on the row.
 */
PG_FUNCTION_INFO_V1(gist_hamming_ball_compress);
Datum
gist_hamming_ball_compress(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);

	if (!entry->leafkey)
		PG_RETURN_POINTER(entry);
	PG_RETURN_POINTER(leaf_entry(entry, DatumGetHammingBallP(entry->key)->center));
}

/*
 * Index-only scans: a leaf key gives back its code.  Only 0.1 and 0.2 name
 * it; 0.3 drops it from the operator family, as GiST's index-only scans
 * may return rows VACUUM removed under them (sql/neardup--0.2--0.3.sql).
 */
PG_FUNCTION_INFO_V1(gist_simhash64_fetch);
Datum
gist_simhash64_fetch(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	GISTENTRY  *retval = palloc(sizeof(GISTENTRY));

	gistentryinit(*retval, Simhash64GetDatum(DatumGetBitrangeP(entry->key)->all),
				  entry->rel, entry->page, entry->offset, false);
	PG_RETURN_POINTER(retval);
}

/*
 * `<@` and `=` are exact: the lower bound is the distance itself at a leaf,
 * and inner keys only decide where to descend.  `&&` (hamming_ball_gist_ops)
 * finds the centers within the query's radius; the row's own radius, not
 * in the index, is rechecked.  `<@` a block ball is exact too: a subtree
 * whose codes all differ from the center on a bit of the block, or on more
 * bits than the radius, is skipped.
 */
PG_FUNCTION_INFO_V1(gist_simhash64_consistent);
Datum
gist_simhash64_consistent(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	StrategyNumber strategy = (StrategyNumber) PG_GETARG_UINT16(2);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(4);
	nd_bitrange *key = DatumGetBitrangeP(entry->key);

	*recheck = false;
	switch (strategy)
	{
		case SH_STRATEGY_COLLIDES:
			/* the centers within the query's radius, as <@ finds them */
			*recheck = GIST_LEAF(entry);
			/* FALLTHROUGH */
		case SH_STRATEGY_WITHIN:
			{
				HammingBall *ball = PG_GETARG_HAMMING_BALL_P(1);

				PG_RETURN_BOOL(nd_bitrange_lower_bound(key, ball->center) <= ball->radius);
			}
		case SH_STRATEGY_WITHIN_BLOCK:
			{
				HammingBlockBall *ball = PG_GETARG_HAMMING_BLOCK_BALL_P(1);
				uint64		differ = nd_bitrange_differ(key, ball->center);

				PG_RETURN_BOOL((differ & hamming_block_mask(ball->block, ball->blocks)) == 0 &&
							   pg_popcount64(differ) <= ball->radius);
			}
		case SH_STRATEGY_EQUAL:
			PG_RETURN_BOOL(nd_bitrange_lower_bound(key, PG_GETARG_SIMHASH64(1)) == 0);
		default:
			elog(ERROR, "unrecognized strategy number: %d", strategy);
	}
	PG_RETURN_BOOL(false);		/* keep compiler quiet */
}

/*
 * ORDER BY sh <~> q: the int4 distance as float8, exact at leaves (so no
 * recheck, which an int4 ordering operator could not use anyway) and a lower
 * bound on inner keys.
 */
PG_FUNCTION_INFO_V1(gist_simhash64_distance);
Datum
gist_simhash64_distance(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	simhash64	query = PG_GETARG_SIMHASH64(1);
	StrategyNumber strategy = (StrategyNumber) PG_GETARG_UINT16(2);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(4);

	if (strategy != SH_STRATEGY_DISTANCE)
		elog(ERROR, "unrecognized strategy number: %d", strategy);
	*recheck = false;
	PG_RETURN_FLOAT8((float8) nd_bitrange_lower_bound(DatumGetBitrangeP(entry->key), query));
}

PG_FUNCTION_INFO_V1(gist_simhash64_union);
Datum
gist_simhash64_union(PG_FUNCTION_ARGS)
{
	GistEntryVector *entryvec = (GistEntryVector *) PG_GETARG_POINTER(0);
	int		   *size = (int *) PG_GETARG_POINTER(1);
	nd_bitrange *out = palloc(sizeof(nd_bitrange));

	*out = *DatumGetBitrangeP(entryvec->vector[0].key);
	for (int i = 1; i < entryvec->n; i++)
		nd_bitrange_merge(out, DatumGetBitrangeP(entryvec->vector[i].key));
	*size = sizeof(nd_bitrange);
	PG_RETURN_POINTER(out);
}

PG_FUNCTION_INFO_V1(gist_simhash64_same);
Datum
gist_simhash64_same(PG_FUNCTION_ARGS)
{
	nd_bitrange *a = DatumGetBitrangeP(PG_GETARG_DATUM(0));
	nd_bitrange *b = DatumGetBitrangeP(PG_GETARG_DATUM(1));
	bool	   *result = (bool *) PG_GETARG_POINTER(2);

	*result = nd_bitrange_equal(a, b);
	PG_RETURN_POINTER(result);
}

/* Bits the subtree would lose, ties to the tighter subtree. */
PG_FUNCTION_INFO_V1(gist_simhash64_penalty);
Datum
gist_simhash64_penalty(PG_FUNCTION_ARGS)
{
	GISTENTRY  *orig = (GISTENTRY *) PG_GETARG_POINTER(0);
	GISTENTRY  *add = (GISTENTRY *) PG_GETARG_POINTER(1);
	float	   *penalty = (float *) PG_GETARG_POINTER(2);

	*penalty = (float) nd_bitrange_penalty(DatumGetBitrangeP(orig->key),
										   DatumGetBitrangeP(add->key));
	PG_RETURN_POINTER(penalty);
}

PG_FUNCTION_INFO_V1(gist_simhash64_picksplit);
Datum
gist_simhash64_picksplit(PG_FUNCTION_ARGS)
{
	GistEntryVector *entryvec = (GistEntryVector *) PG_GETARG_POINTER(0);
	GIST_SPLITVEC *v = (GIST_SPLITVEC *) PG_GETARG_POINTER(1);
	OffsetNumber maxoff = entryvec->n - 1;
	int			n = maxoff - FirstOffsetNumber + 1;
	nd_bitrange *ranges = palloc(sizeof(nd_bitrange) * n);
	uint8	   *side = palloc(n);
	nd_bitrange u[2];
	nd_bitrange *lkey = palloc(sizeof(nd_bitrange));
	nd_bitrange *rkey = palloc(sizeof(nd_bitrange));

	for (int i = 0; i < n; i++)
		ranges[i] = *DatumGetBitrangeP(entryvec->vector[FirstOffsetNumber + i].key);

	nd_bitrange_split(ranges, n, side, u);

	v->spl_left = palloc(sizeof(OffsetNumber) * n);
	v->spl_right = palloc(sizeof(OffsetNumber) * n);
	v->spl_nleft = v->spl_nright = 0;
	for (int i = 0; i < n; i++)
	{
		if (side[i] == 0)
			v->spl_left[v->spl_nleft++] = FirstOffsetNumber + i;
		else
			v->spl_right[v->spl_nright++] = FirstOffsetNumber + i;
	}
	*lkey = u[0];
	*rkey = u[1];
	v->spl_ldatum = PointerGetDatum(lkey);
	v->spl_rdatum = PointerGetDatum(rkey);

	pfree(ranges);
	pfree(side);
	PG_RETURN_POINTER(v);
}

/*
 * Sorted build: unsigned order of the codes (AND first, then OR, for the
 * inner keys that never reach it in practice).  The abbreviated key is the
 * AND itself, compared unsigned, which decides every comparison of distinct
 * leaf keys without dereferencing them.
 */
static int
simhash64_gist_key_cmp(Datum x, Datum y, SortSupport ssup)
{
	nd_bitrange *a = DatumGetBitrangeP(x);
	nd_bitrange *b = DatumGetBitrangeP(y);

	if (a->all != b->all)
		return a->all < b->all ? -1 : 1;
	if (a->any != b->any)
		return a->any < b->any ? -1 : 1;
	return 0;
}

static Datum
simhash64_gist_key_abbrev_convert(Datum original, SortSupport ssup)
{
	return UInt64GetDatum(DatumGetBitrangeP(original)->all);
}

static bool
simhash64_gist_key_abbrev_abort(int memtupcount, SortSupport ssup)
{
	return false;
}

PG_FUNCTION_INFO_V1(gist_simhash64_sortsupport);
Datum
gist_simhash64_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	if (ssup->abbreviate)
	{
		ssup->comparator = ssup_datum_unsigned_cmp;
		ssup->abbrev_converter = simhash64_gist_key_abbrev_convert;
		ssup->abbrev_abort = simhash64_gist_key_abbrev_abort;
		ssup->abbrev_full_comparator = simhash64_gist_key_cmp;
	}
	else
		ssup->comparator = simhash64_gist_key_cmp;
	PG_RETURN_VOID();
}
