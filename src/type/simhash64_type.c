/*-------------------------------------------------------------------------
 *
 * simhash64_type.c
 *		The simhash64 type: text and binary I/O, casts, comparison, and
 *		btree and hash support.
 *
 * A simhash64 is an unsigned 64-bit integer passed by value.  Its text form
 * is exactly 16 hex digits, and it is ordered as an unsigned integer so that
 * ORDER BY agrees with the text form.  Conversions to bit strings and bytea
 * are most significant bit/byte first, so they read like the hex.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "common/hashfn.h"
#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/sortsupport.h"
#include "utils/varbit.h"

#include "pg_compat.h"
#include "type/simhash64.h"

#define SIMHASH64_HEX_DIGITS	16
#define SIMHASH64_BYTES			8
#define SIMHASH64_BITS			64

static inline int
hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Big-endian, so that the bytes (and bits) read like the hex. */
static inline void
simhash64_to_be_bytes(simhash64 v, uint8 *out)
{
	int			i;

	for (i = 0; i < SIMHASH64_BYTES; i++)
		out[i] = (uint8) (v >> (8 * (SIMHASH64_BYTES - 1 - i)));
}

static inline simhash64
simhash64_from_be_bytes(const uint8 *in)
{
	simhash64	v = 0;
	int			i;

	for (i = 0; i < SIMHASH64_BYTES; i++)
		v = (v << 8) | in[i];
	return v;
}

/*
 * Text I/O
 */

/* Exactly 16 hex digits, optionally surrounded by whitespace. */
PG_FUNCTION_INFO_V1(simhash64_in);
Datum
simhash64_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	const char *p = str;
	simhash64	result = 0;
	int			i;

	while (isspace((unsigned char) *p))
		p++;

	for (i = 0; i < SIMHASH64_HEX_DIGITS; i++)
	{
		int			d = hex_digit_value(p[i]);

		/* also stops at the terminating NUL of a short input */
		if (d < 0)
			goto invalid;
		result = (result << 4) | (simhash64) d;
	}
	p += SIMHASH64_HEX_DIGITS;

	while (isspace((unsigned char) *p))
		p++;
	if (*p != '\0')
		goto invalid;

	PG_RETURN_SIMHASH64(result);

invalid:
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type %s: \"%s\"",
					"simhash64", str),
			 errdetail("A simhash64 value is written as exactly 16 hexadecimal digits.")));
	PG_RETURN_NULL();			/* keep compiler quiet */
}

PG_FUNCTION_INFO_V1(simhash64_out);
Datum
simhash64_out(PG_FUNCTION_ARGS)
{
	static const char hexdig[] = "0123456789abcdef";
	simhash64	v = PG_GETARG_SIMHASH64(0);
	char	   *result = palloc(SIMHASH64_HEX_DIGITS + 1);
	int			i;

	for (i = SIMHASH64_HEX_DIGITS - 1; i >= 0; i--)
	{
		result[i] = hexdig[v & 0xF];
		v >>= 4;
	}
	result[SIMHASH64_HEX_DIGITS] = '\0';

	PG_RETURN_CSTRING(result);
}

/*
 * Binary I/O: 8 bytes in network byte order, as for int8.
 */

PG_FUNCTION_INFO_V1(simhash64_recv);
Datum
simhash64_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);

	/* errors out on a short message; callers reject trailing bytes */
	PG_RETURN_SIMHASH64((simhash64) pq_getmsgint64(buf));
}

PG_FUNCTION_INFO_V1(simhash64_send);
Datum
simhash64_send(PG_FUNCTION_ARGS)
{
	simhash64	v = PG_GETARG_SIMHASH64(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, v);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * Casts to and from bit strings.  (The casts to and from bigint are binary
 * coercions and need no code.)
 *
 * The casts to bit and bit varying take the target typmod, so that a cast
 * to a length that cannot hold 64 bits (notably plain "bit", which means
 * bit(1)) fails instead of silently truncating the fingerprint.
 */

static VarBit *
simhash64_make_varbit(simhash64 v)
{
	VarBit	   *result = (VarBit *) palloc(VARBITTOTALLEN(SIMHASH64_BITS));

	SET_VARSIZE(result, VARBITTOTALLEN(SIMHASH64_BITS));
	VARBITLEN(result) = SIMHASH64_BITS;
	simhash64_to_be_bytes(v, VARBITS(result));
	return result;
}

PG_FUNCTION_INFO_V1(simhash64_to_bit);
Datum
simhash64_to_bit(PG_FUNCTION_ARGS)
{
	simhash64	v = PG_GETARG_SIMHASH64(0);
	int32		typmod = PG_GETARG_INT32(1);

	if (typmod >= 0 && typmod != SIMHASH64_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("bit string length %d does not match type bit(%d)",
						SIMHASH64_BITS, typmod),
				 errhint("Cast simhash64 to bit(64) or to bit varying.")));

	PG_RETURN_VARBIT_P(simhash64_make_varbit(v));
}

PG_FUNCTION_INFO_V1(simhash64_to_varbit);
Datum
simhash64_to_varbit(PG_FUNCTION_ARGS)
{
	simhash64	v = PG_GETARG_SIMHASH64(0);
	int32		typmod = PG_GETARG_INT32(1);

	if (typmod >= 0 && typmod < SIMHASH64_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_RIGHT_TRUNCATION),
				 errmsg("bit string too long for type bit varying(%d)",
						typmod),
				 errhint("Cast simhash64 to bit(64) or to bit varying.")));

	PG_RETURN_VARBIT_P(simhash64_make_varbit(v));
}

/* Serves the casts from both bit and bit varying. */
PG_FUNCTION_INFO_V1(simhash64_from_bit);
Datum
simhash64_from_bit(PG_FUNCTION_ARGS)
{
	VarBit	   *arg = PG_GETARG_VARBIT_P(0);

	if (VARBITLEN(arg) != SIMHASH64_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot convert bit string of length %d to simhash64",
						VARBITLEN(arg)),
				 errdetail("A simhash64 value is exactly 64 bits.")));

	PG_RETURN_SIMHASH64(simhash64_from_be_bytes(VARBITS(arg)));
}

/*
 * Casts to and from bytea: 8 bytes, big-endian.
 */

PG_FUNCTION_INFO_V1(simhash64_to_bytea);
Datum
simhash64_to_bytea(PG_FUNCTION_ARGS)
{
	simhash64	v = PG_GETARG_SIMHASH64(0);
	bytea	   *result = (bytea *) palloc(VARHDRSZ + SIMHASH64_BYTES);

	SET_VARSIZE(result, VARHDRSZ + SIMHASH64_BYTES);
	simhash64_to_be_bytes(v, (uint8 *) VARDATA(result));
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(simhash64_from_bytea);
Datum
simhash64_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *arg = PG_GETARG_BYTEA_PP(0);
	int			len = VARSIZE_ANY_EXHDR(arg);

	if (len != SIMHASH64_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot convert bytea of length %d to simhash64", len),
				 errdetail("A simhash64 value is exactly 8 bytes.")));

	PG_RETURN_SIMHASH64(simhash64_from_be_bytes((uint8 *) VARDATA_ANY(arg)));
}

/*
 * Comparison: unsigned, so that the order agrees with the hex text.
 */

PG_FUNCTION_INFO_V1(simhash64_eq);
Datum
simhash64_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) == PG_GETARG_SIMHASH64(1));
}

PG_FUNCTION_INFO_V1(simhash64_ne);
Datum
simhash64_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) != PG_GETARG_SIMHASH64(1));
}

PG_FUNCTION_INFO_V1(simhash64_lt);
Datum
simhash64_lt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) < PG_GETARG_SIMHASH64(1));
}

PG_FUNCTION_INFO_V1(simhash64_le);
Datum
simhash64_le(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) <= PG_GETARG_SIMHASH64(1));
}

PG_FUNCTION_INFO_V1(simhash64_gt);
Datum
simhash64_gt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) > PG_GETARG_SIMHASH64(1));
}

PG_FUNCTION_INFO_V1(simhash64_ge);
Datum
simhash64_ge(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) >= PG_GETARG_SIMHASH64(1));
}

/*
 * btree support
 */

PG_FUNCTION_INFO_V1(simhash64_cmp);
Datum
simhash64_cmp(PG_FUNCTION_ARGS)
{
	simhash64	a = PG_GETARG_SIMHASH64(0);
	simhash64	b = PG_GETARG_SIMHASH64(1);

	PG_RETURN_INT32((a > b) - (a < b));
}

/*
 * The Datum is the value itself, so the core's unsigned Datum comparator is
 * exact, and tuplesort has a specialized quicksort for it.
 */
PG_FUNCTION_INFO_V1(simhash64_sortsupport);
Datum
simhash64_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	ssup->comparator = ssup_datum_unsigned_cmp;
	PG_RETURN_VOID();
}

/*
 * hash support
 *
 * The high half is hashed before being folded into the low half: a plain
 * xor fold would make fingerprints that differ in the same bit of both
 * halves collide, a pattern near-duplicates are prone to.  With seed 0 the
 * extended hash's low 32 bits equal the standard hash, as required.
 */

PG_FUNCTION_INFO_V1(simhash64_hash);
Datum
simhash64_hash(PG_FUNCTION_ARGS)
{
	simhash64	v = PG_GETARG_SIMHASH64(0);
	uint32		key;

	key = (uint32) v ^ hash_bytes_uint32((uint32) (v >> 32));
	PG_RETURN_UINT32(hash_bytes_uint32(key));
}

PG_FUNCTION_INFO_V1(simhash64_hash_extended);
Datum
simhash64_hash_extended(PG_FUNCTION_ARGS)
{
	simhash64	v = PG_GETARG_SIMHASH64(0);
	uint64		seed = PG_GETARG_INT64(1);
	uint32		key;

	key = (uint32) v ^
		(uint32) hash_bytes_uint32_extended((uint32) (v >> 32), seed);
	PG_RETURN_UINT64(hash_bytes_uint32_extended(key, seed));
}
