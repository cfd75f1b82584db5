/*-------------------------------------------------------------------------
 *
 * minhash_jaccard.c
 *		minhash_jaccard(): the Jaccard estimate of two signatures; jaccard():
 *		the exact Jaccard similarity of two documents' shingle sets, or of
 *		two feature arrays taken as sets, to check estimates against.
 *
 * The Jaccard similarity of two empty sets is 0/0: NULL, as minhash() of
 * an empty document is NULL.  One empty set and one not: 0.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "catalog/pg_operator_d.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"

#include "core/nd_features.h"
#include "core/nd_minhash.h"
#include "fingerprint/text_features.h"
#include "minhash/minhash.h"
#include "pg_compat.h"

/*
 * minhash_jaccard(a int4[], b int4[]) → float8: the fraction of positions
 * where the two signatures agree.  Signatures of different lengths cannot
 * come from the same num_perm: an error.  (Signatures made with different
 * seeds are not detectable; they estimate about 0.)
 */
PG_FUNCTION_INFO_V1(nd_minhash_jaccard);
Datum
nd_minhash_jaccard(PG_FUNCTION_ARGS)
{
	int			na,
				nb;
	const uint32 *a = nd_minhash_sig_arg(fcinfo, 0, &na);
	const uint32 *b = nd_minhash_sig_arg(fcinfo, 1, &nb);

	if (na != nb)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("minhash signatures must have the same length"),
				 errdetail("The signatures have %d and %d values.", na, nb)));
	PG_RETURN_FLOAT8(nd_minhash_estimate(a, b, na));
}

/*
 * The core's nd_sort_unique() with PostgreSQL's qsort made interruptible: a
 * long document has tens of millions of features, seconds of sorting that
 * a statement_timeout or a cancel must be able to stop.
 */
#define ST_SORT sort_features
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : *(a) > *(b) ? 1 : 0)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DECLARE
#define ST_DEFINE
#include "lib/sort_template.h"

static size_t
sort_unique(uint64 *v, size_t n)
{
	size_t		m = 0;

	if (n == 0)
		return 0;
	sort_features(v, n);
	for (size_t i = 1; i < n; i++)
		if (v[i] != v[m])
			v[++m] = v[i];
	return m + 1;
}

/*
 * A set of 64-bit features in bounded memory, read back in increasing
 * (unsigned) order, each once.  Features go to a buffer of a share of
 * work_mem; a full buffer is sorted and deduplicated in place, so a long
 * text with few distinct shingles stays in it.  Only when the distinct
 * features fill more than half the buffer does the set move to a
 * tuplesort, which spills to temporary files past work_mem: memory stays
 * bounded whatever the length of the texts (every shingle of both would be
 * 508 MB for two 25 MB texts).  The tuplesort orders int8 datums, signed:
 * features enter with their top bit flipped, which makes the signed order
 * the features' unsigned order.
 */
#define SIGN_FLIP	(UINT64CONST(1) << 63)

typedef struct FeatureSet
{
	uint64	   *v;				/* buffer */
	size_t		n;
	size_t		size;			/* allocated, doubled up to cap */
	size_t		cap;
	Tuplesortstate *spill;		/* NULL while the set fits the buffer */
	/* reading */
	size_t		pos;
	bool		have_last;
	uint64		last;
} FeatureSet;

static void
feature_set_init(FeatureSet *fs, size_t cap)
{
	fs->cap = Max(cap, (size_t) 1024);
	fs->size = Min(fs->cap, (size_t) 1024);
	fs->v = palloc(fs->size * sizeof(uint64));
	fs->n = 0;
	fs->spill = NULL;
	fs->pos = 0;
	fs->have_last = false;
}

static void
feature_set_spill(FeatureSet *fs)
{
	if (fs->spill == NULL)
		fs->spill = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid,
										  false, work_mem, NULL, TUPLESORT_NONE);
	for (size_t i = 0; i < fs->n; i++)
	{
		tuplesort_putdatum(fs->spill, Int64GetDatum((int64) (fs->v[i] ^ SIGN_FLIP)), false);
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	fs->n = 0;
}

/* nd_feature_sink: features as the tokenizer makes them */
static void
feature_set_add(void *arg, const uint64_t *features, size_t n)
{
	FeatureSet *fs = (FeatureSet *) arg;

	while (n > 0)
	{
		size_t		take;

		if (fs->n == fs->size && fs->size < fs->cap)
		{
			fs->size = Min(fs->size * 2, fs->cap);
			fs->v = repalloc_huge(fs->v, fs->size * sizeof(uint64));
		}
		take = Min(n, fs->size - fs->n);
		memcpy(fs->v + fs->n, features, take * sizeof(uint64));
		fs->n += take;
		features += take;
		n -= take;
		if (fs->n == fs->cap)
		{
			fs->n = sort_unique(fs->v, fs->n);
			if (fs->n > fs->cap / 2)
				feature_set_spill(fs);
			CHECK_FOR_INTERRUPTS();
		}
	}
}

/* Done adding: sorted, ready to be read. */
static void
feature_set_finish(FeatureSet *fs)
{
	if (fs->spill)
	{
		feature_set_spill(fs);
		tuplesort_performsort(fs->spill);
	}
	else
		fs->n = sort_unique(fs->v, fs->n);
}

/* The next distinct feature, in increasing order; false at the end. */
static inline bool
feature_set_next(FeatureSet *fs, uint64 *out)
{
	if (fs->spill == NULL)
	{
		if (fs->pos >= fs->n)
			return false;
		*out = fs->v[fs->pos++];
		return true;
	}
	for (;;)
	{
		Datum		d;
		bool		isnull;
		uint64		x;

		if (!tuplesort_getdatum_compat(fs->spill, true, false, &d, &isnull, NULL))
			return false;
		x = (uint64) DatumGetInt64(d) ^ SIGN_FLIP;
		/* runs spilled at different times may hold the same feature */
		if (fs->have_last && x == fs->last)
			continue;
		fs->have_last = true;
		fs->last = x;
		*out = x;
		return true;
	}
}

static void
feature_set_end(FeatureSet *fs)
{
	if (fs->spill)
		tuplesort_end(fs->spill);
	pfree(fs->v);
}

/* Each set's buffer: half of work_mem. */
static size_t
feature_set_budget(void)
{
	return (size_t) work_mem * 1024 / 2 / sizeof(uint64);
}

/*
 * |a ∩ b| / |a ∪ b| of two feature sets, merged as sorted streams, or
 * false when both are empty.
 */
static bool
exact_jaccard(FeatureSet *a, FeatureSet *b, float8 *j)
{
	uint64		na = 0,
				nb = 0,
				common = 0,
				steps = 0;
	uint64		x = 0,
				y = 0;
	bool		hx,
				hy;

	feature_set_finish(a);
	feature_set_finish(b);
	hx = feature_set_next(a, &x);
	hy = feature_set_next(b, &y);
	while (hx || hy)
	{
		if ((++steps & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (hx && (!hy || x < y))
		{
			na++;
			hx = feature_set_next(a, &x);
		}
		else if (hy && (!hx || y < x))
		{
			nb++;
			hy = feature_set_next(b, &y);
		}
		else
		{
			na++;
			nb++;
			common++;
			hx = feature_set_next(a, &x);
			hy = feature_set_next(b, &y);
		}
	}
	feature_set_end(a);
	feature_set_end(b);
	if (na == 0 && nb == 0)
		return false;
	*j = (float8) common / (float8) (na + nb - common);
	return true;
}

/* jaccard(a text, b text, shingle int4, unit text, seed int8) → float8 */
PG_FUNCTION_INFO_V1(nd_jaccard_text);
Datum
nd_jaccard_text(PG_FUNCTION_ARGS)
{
	text	   *a = PG_GETARG_TEXT_PP(0);
	text	   *b = PG_GETARG_TEXT_PP(1);
	NdTextParams p = nd_text_params(fcinfo, 2, 3, 4);
	FeatureSet	fa,
				fb;
	float8		j;

	feature_set_init(&fa, feature_set_budget());
	feature_set_init(&fb, feature_set_budget());
	nd_text_features(a, &p, feature_set_add, &fa, NULL, NULL);
	nd_text_features(b, &p, feature_set_add, &fb, NULL, NULL);
	if (!exact_jaccard(&fa, &fb, &j))
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(j);
}

/*
 * The elements of a one-dimensional bigint[] or text[] as a feature set;
 * NULLs skipped.  Strings are hashed as minhash(text[]) hashes them with
 * seed 0 (XXH3-64): sets of 64-bit hashes, a false match having
 * probability about n^2 / 2^64.  Read element by element (no copy of the
 * array as Datums), with interrupts checked.
 */
static void
array_feature_set(ArrayType *arr, FeatureSet *fs)
{
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int			n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	array_iter	it;
	uint64		chunk[1024];
	int			m = 0;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature array must be one-dimensional")));
	feature_set_init(fs, feature_set_budget());
	array_iter_setup(&it, (AnyArrayType *) arr);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		d;

		if (elemtype == INT8OID)
			d = array_iter_next(&it, &isnull, i, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
		else
			d = array_iter_next(&it, &isnull, i, -1, false, TYPALIGN_INT);
		if (isnull)
			continue;
		chunk[m++] = elemtype == INT8OID ? (uint64) DatumGetInt64(d) :
			nd_hash_text(DatumGetTextPP(d), 0);
		if (m == lengthof(chunk))
		{
			feature_set_add(fs, chunk, m);
			m = 0;
			CHECK_FOR_INTERRUPTS();
		}
	}
	feature_set_add(fs, chunk, m);
}

/*
 * jaccard(a bigint[], b bigint[]) and jaccard(a text[], b text[]) → float8:
 * the arrays as sets (NULLs skipped, as minhash() skips them).
 */
PG_FUNCTION_INFO_V1(nd_jaccard_int8_array);
Datum
nd_jaccard_int8_array(PG_FUNCTION_ARGS)
{
	FeatureSet	fa,
				fb;
	float8		j;

	array_feature_set(PG_GETARG_ARRAYTYPE_P(0), &fa);
	array_feature_set(PG_GETARG_ARRAYTYPE_P(1), &fb);
	if (!exact_jaccard(&fa, &fb, &j))
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(j);
}

/* The same C function serves text[]: feature_set() reads the element type. */
PG_FUNCTION_INFO_V1(nd_jaccard_text_array);
Datum
nd_jaccard_text_array(PG_FUNCTION_ARGS)
{
	return nd_jaccard_int8_array(fcinfo);
}
