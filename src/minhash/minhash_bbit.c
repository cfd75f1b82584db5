/*-------------------------------------------------------------------------
 *
 * minhash_bbit.c
 *		b-bit MinHash (Li & König, WWW 2010): minhash_bbit() keeps the low
 *		`bits` bits of each signature value, packed into a bytea;
 *		minhash_bbit_jaccard() estimates Jaccard from two of them, corrected
 *		for the agreements that `bits` bits make by chance.
 *
 * bytea rather than int8[]: a short bytea has a 1-byte header and no
 * alignment padding, where an array has 24 bytes of header and 8-byte
 * elements; 128 one-bit values are 20 bytes on disk instead of 40.  The
 * layout (nd_minhash.h) carries bits and num_perm, so that signatures that
 * cannot be compared are an error rather than a wrong number.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "core/nd_minhash.h"
#include "minhash/minhash.h"

/* minhash_bbit(sig int4[], bits int4) → bytea */
PG_FUNCTION_INFO_V1(nd_minhash_bbit);
Datum
nd_minhash_bbit(PG_FUNCTION_ARGS)
{
	int			k;
	const uint32 *sig = nd_minhash_sig_arg(fcinfo, 0, &k);
	int32		bits = PG_GETARG_INT32(1);
	const char *problem = nd_bbit_check(bits);
	Size		size;
	bytea	   *out;

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid bits %d", bits),
				 errdetail("%s.", problem)));
	size = nd_bbit_size(k, bits);
	out = palloc(VARHDRSZ + size);
	SET_VARSIZE(out, VARHDRSZ + size);
	nd_bbit_pack(sig, k, bits, (uint8 *) VARDATA(out));
	PG_RETURN_BYTEA_P(out);
}

static const uint8 *
bbit_arg(FunctionCallInfo fcinfo, int argno, int *k, int *bits)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(argno);
	const uint8 *p = (const uint8 *) VARDATA_ANY(b);

	if (!nd_bbit_header(p, VARSIZE_ANY_EXHDR(b), k, bits))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid b-bit minhash signature"),
				 errdetail("Signatures come from minhash_bbit().")));
	return p;
}

/* minhash_bbit_jaccard(a bytea, b bytea) → float8 */
PG_FUNCTION_INFO_V1(nd_minhash_bbit_jaccard);
Datum
nd_minhash_bbit_jaccard(PG_FUNCTION_ARGS)
{
	int			ka,
				kb,
				ba,
				bb;
	const uint8 *a = bbit_arg(fcinfo, 0, &ka, &ba);
	const uint8 *b = bbit_arg(fcinfo, 1, &kb, &bb);

	if (ba != bb)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("b-bit minhash signatures must keep the same number of bits"),
				 errdetail("The signatures keep %d and %d bits.", ba, bb)));
	if (ka != kb)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("minhash signatures must have the same length"),
				 errdetail("The signatures have %d and %d values.", ka, kb)));
	PG_RETURN_FLOAT8(nd_bbit_estimate(nd_bbit_matches(a, b, ka, ba), ka, ba));
}
